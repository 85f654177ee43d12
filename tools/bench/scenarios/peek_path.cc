// peek-path (DESIGN §14): what the peek fast path buys a point-lookup peek. Two
// two-runtime replicas with the same index, one with the peek rings (the default) and one with
// --peek-ring-bytes 0 (peeks and their answers on the runtime channel, as before the fast path),
// measured in the same run in alternating rounds.
#include <algorithm>
#include <stdexcept>

#include "tools/bench/measure.h"
#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {

Scenario PeekPathScenario(const Options& o) {
  Scenario s{.name = "peek-path"};
  Options channel = o, rings = o;
  channel.supervisor_args.insert(channel.supervisor_args.end(), {"--peek-ring-bytes", "0"});
  if (!o.shm_size_set) channel.shm_size = rings.shm_size = "128MiB";
  Progress(o, "peek-path: starting a replica with and one without the peek rings%s\n", "");
  LookupReplica replicas[2] = {{channel, true, o.keys}, {rings, true, o.keys}};
  s.cells = AlternatingPeekCells(o, replicas, {"channel", "rings"}, 8, "peek-path", &s.notes);
  // What each replica's peeks took, from its /metrics: the comparison means something only when
  // the one took the rings and the other did not.
  const char* kPushed = "tandem_peek_ring_records_total{ring=\"requests\",result=\"pushed\"}";
  const char* kFull = "tandem_peek_ring_records_total{ring=\"requests\",result=\"full\"}";
  const std::string names[2] = {"channel", "rings"};
  for (int k = 0; k < 2; ++k) {
    const std::string metrics = replicas[k].replica.Metrics();
    for (Cell& c : s.cells) {
      if (c.name != names[k]) continue;
      c.Set("ring_requests_pushed", std::max(0.0, tools::MetricValue(metrics, kPushed)));
      c.Set("ring_requests_full", std::max(0.0, tools::MetricValue(metrics, kFull)));
    }
  }
  if (Metric(s, "rings", "ring_requests_pushed") <= 0 ||
      Metric(s, "channel", "ring_requests_pushed") > 0) {
    throw std::runtime_error(
        "peek-path: the rings replica's peeks did not take the rings (or the "
        "channel replica's did)");
  }
  return s;
}

}  // namespace tandem::bench
