// peek-path (issue 17, DESIGN §14): what the peek fast path buys a point-lookup peek. Two
// two-runtime replicas with the same index, one with the peek rings (the default) and one with
// --peek-ring-bytes 0 (peeks and their answers on the runtime channel, as before the fast path),
// measured in the same run in alternating rounds.
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
  return s;
}

}  // namespace tandem::bench
