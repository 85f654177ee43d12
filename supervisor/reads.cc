#include "supervisor/reads.h"

#include <algorithm>

namespace tandem::supervisor {

bool OneShots::OnForwarded(const ipc::pb::Command& command, Clock::time_point now) {
  if (command.has_hello()) {
    // A new epoch: what the replay creates again is kept; the rest goes at its end.
    for (auto& [first, shot] : by_first_export_) shot.replayed = false;
    return false;
  }
  if (command.has_initialization_complete()) {
    std::vector<std::string> gone;
    for (const auto& [first, shot] : by_first_export_) {
      if (!shot.replayed) gone.push_back(first);
    }
    for (const std::string& first : gone) Forget(first);
    return false;
  }
  if (command.has_allow_compaction()) {
    const auto& ac = command.allow_compaction();
    if (!ac.frontier().elements().empty()) return false;  // not a drop: changes nothing
    auto it = export_to_first_.find(ac.id());
    if (it == export_to_first_.end()) return false;
    const std::string first = it->second;
    OneShot& shot = by_first_export_.at(first);
    shot.live.erase(ac.id());
    shot.pending.erase(ac.id());
    export_to_first_.erase(it);
    if (shot.live.empty()) Forget(first);
    return false;
  }
  if (!command.has_create_dataflow()) return false;
  const auto& desc = command.create_dataflow().desc();
  if (desc.class_() != ipc::pb::ONE_SHOT_READ || desc.index_exports().empty()) return false;
  const std::string& first = desc.index_exports(0).id();
  const Time as_of = desc.as_of().elements().empty() ? 0 : desc.as_of().elements(0);
  if (auto it = by_first_export_.find(first); it != by_first_export_.end()) {
    if (!it->second.replayed && it->second.as_of == as_of) {
      it->second.replayed = true;  // the replay of one the runtimes already run
      return false;
    }
    Forget(first);  // validation refuses a live id created again; a replay may differ
  }
  if (by_first_export_.size() >= kMaxTracked) return true;
  OneShot shot;
  shot.as_of = as_of;
  shot.forwarded_at = now;
  for (const auto& e : desc.index_exports()) {
    shot.exports.insert(e.id());
    export_to_first_[e.id()] = first;
  }
  shot.pending = shot.exports;
  shot.live = shot.exports;
  by_first_export_.emplace(first, std::move(shot));
  return true;
}

std::optional<std::chrono::nanoseconds> OneShots::OnFrontiers(const ipc::pb::Frontiers& frontiers,
                                                              Clock::time_point now) {
  auto it = export_to_first_.find(frontiers.id());
  if (it == export_to_first_.end()) return std::nullopt;
  OneShot& shot = by_first_export_.at(it->second);
  if (shot.timed) return std::nullopt;
  const auto& write = frontiers.write().elements();
  // The empty frontier is a drop (or a result that closed): not an answer.
  if (write.empty() || write[0] <= shot.as_of) return std::nullopt;
  shot.pending.erase(frontiers.id());
  if (!shot.pending.empty()) return std::nullopt;
  shot.timed = true;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now - shot.forwarded_at);
}

void OneShots::Forget(const std::string& first_export) {
  auto it = by_first_export_.find(first_export);
  if (it == by_first_export_.end()) return;
  for (const std::string& e : it->second.exports) {
    auto owner = export_to_first_.find(e);
    if (owner != export_to_first_.end() && owner->second == first_export) {
      export_to_first_.erase(owner);
    }
  }
  by_first_export_.erase(it);
}

std::vector<HoldGap> HoldGaps(const std::vector<shm::SlotInfo>& slots, std::size_t limit,
                              Time* max_gap) {
  std::map<std::string, Time> by_id;
  for (const shm::SlotInfo& s : slots) {
    if ((s.flags & shm::kSlotFilled) == 0 || (s.flags & shm::kSlotUnpublished) != 0) continue;
    if (s.own_frontier.empty()) continue;
    const Time own = s.own_frontier.time();
    // since <= own frontier always (it is a minimum over it); a since past it would be a torn
    // read of a slot changing under us: no gap.
    const Time gap = !s.since.empty() && s.since.time() < own ? own - s.since.time() : 0;
    Time& g = by_id[s.key.id.ToString()];
    g = std::max(g, gap);
  }
  std::vector<HoldGap> out;
  out.reserve(by_id.size());
  for (const auto& [id, gap] : by_id) out.push_back({id, gap});
  std::stable_sort(out.begin(), out.end(),
                   [](const HoldGap& a, const HoldGap& b) { return a.gap > b.gap; });
  if (max_gap) *max_gap = out.empty() ? 0 : out.front().gap;
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace tandem::supervisor
