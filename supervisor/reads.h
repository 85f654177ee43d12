// What /metrics says about reads beyond point lookups (DESIGN §8): one-shot dataflows
// (built, running, build-to-answer latency), from the commands and responses the supervisor
// forwards; and each index's hold gap, from the segment.
//
// Thread safety: none; the supervisor's loop owns them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/time.h"
#include "ipc/codec.h"
#include "shm/reader.h"

namespace tandem::supervisor {

// The controller's ONE_SHOT_READ dataflows, from the forwarded CreateDataflow to the forwarded
// AllowCompaction(empty) of its last export.
//
// Latency ("build to answer"): from forwarding the CreateDataflow to the first Frontiers
// response in which the last of its exports reports a write frontier past its as_of (the runtime
// reports `write [A+1]` once the result is computed: DESIGN §8). A peek sent right after the
// create is answered no sooner, so this is the part of a `query`'s latency that building costs.
// An export dropped before it reported counts as reported; a one-shot dropped before all its
// exports reported is not timed.
//
// Epochs: a controller's Hello starts a replay; a replayed one-shot (same exports and as_of) is
// the one already tracked — not built again, its timing kept — and InitializationComplete
// forgets those the replay left out (the runtimes drop them when they reconcile).
//
// Bounded: at most kMaxTracked one-shots are tracked; one built beyond that is counted but not
// tracked (not running, not timed) until some are dropped.
class OneShots {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxTracked = 4096;

  // A command forwarded to the runtimes. Returns true when it built a new one-shot dataflow.
  bool OnForwarded(const ipc::pb::Command& command, Clock::time_point now);
  // A Frontiers response from a runtime. Returns the one-shot's latency when this response is the
  // one that completes it (each one-shot is timed once).
  std::optional<std::chrono::nanoseconds> OnFrontiers(const ipc::pb::Frontiers& frontiers,
                                                      Clock::time_point now);

  std::size_t running() const { return by_first_export_.size(); }

 private:
  struct OneShot {
    Time as_of = 0;
    Clock::time_point forwarded_at;
    std::set<std::string> exports;  // every export id
    std::set<std::string> pending;  // exports that have not reported write > as_of yet
    std::set<std::string> live;     // exports not dropped yet
    bool timed = false;             // its latency was observed
    bool replayed = true;           // seen since the last Hello (a replay keeps it)
  };
  void Forget(const std::string& first_export);

  std::map<std::string, OneShot> by_first_export_;
  std::map<std::string, std::string> export_to_first_;  // every live export → its one-shot
};

// The hold gap of one index: how far its slowest hold is behind the controller's frontier, in
// the controller's timestamp units. For each worker ordinal's slot, `own frontier - since` (since =
// min(own frontier, peer hold, import hold), so the gap is what the slowest hold keeps
// uncompacted); the index's gap is the largest over its ordinals, 0 when every hold has caught
// up. Slots that are placeholders, unpublished or whose own frontier is empty (a drop) count
// nothing.
struct HoldGap {
  std::string id;
  Time gap = 0;
};
// One entry per index with a live published slot, the largest gaps first (ties by id), at most
// `limit` (the rest are left out: the metric's cardinality stays bounded). `*max_gap` (when given)
// is the largest gap of all, including those left out.
std::vector<HoldGap> HoldGaps(const std::vector<shm::SlotInfo>& slots, std::size_t limit,
                              Time* max_gap = nullptr);

}  // namespace tandem::supervisor
