#include "workers/reconciler.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "ipc/model.h"

namespace tandem::workers {

namespace pb = ipc::pb;

bool Reconciler::IsLiveExport(const std::string& id) const {
  return std::any_of(live_.begin(), live_.end(), [&](const auto& entry) {
    const LiveDataflow& l = entry.second;
    return std::find(l.exports.begin(), l.exports.end(), id) != l.exports.end() &&
           !l.dropped.count(id);
  });
}

void Reconciler::Track(const pb::Command& c, std::uint64_t seq) {
  if (c.has_create_dataflow()) {
    LiveDataflow l;
    l.fingerprint = ipc::Encode(c.create_dataflow().desc());
    for (const auto& e : c.create_dataflow().desc().index_exports()) l.exports.push_back(e.id());
    live_[seq] = std::move(l);
  } else if (ipc::IsDrop(c)) {
    for (auto it = live_.begin(); it != live_.end(); ++it) {
      auto& l = it->second;
      if (std::find(l.exports.begin(), l.exports.end(), c.allow_compaction().id()) ==
          l.exports.end()) {
        continue;
      }
      l.dropped.insert(c.allow_compaction().id());
      if (l.dropped.size() == l.exports.size()) live_.erase(it);
      break;
    }
  }
}

Reconciler::Admitted Reconciler::Admit(pb::Command c) {
  Admitted out;
  if (c.has_hello()) {
    holding_ = !live_.empty();
    buffered_.clear();
    return out;
  }
  // A peek of an index that runs already changes nothing, so it does not wait for the replay to
  // finish: an observer's peek (DESIGN §3, "Observers") is served while a controller reconciles.
  // (A peek of an index the replay creates waits for it; so does a cancel, after its peek.)
  if (holding_ && !(c.has_peek() && IsLiveExport(c.peek().id()))) {
    if (c.has_initialization_complete()) return Reconcile();
    buffered_.push_back(std::move(c));
    return out;
  }
  out.apply.push_back(std::move(c));
  return out;
}

Reconciler::Admitted Reconciler::Reconcile() {
  holding_ = false;
  std::vector<pb::Command> replay = std::move(buffered_);
  buffered_.clear();
  std::vector<bool> skip(replay.size(), false);
  Admitted out;
  auto& counts = out.reconciled.emplace();
  for (const auto& [seq, live] : live_) {
    bool found = false;
    for (std::size_t i = 0; i < replay.size() && !found; ++i) {
      if (!skip[i] && replay[i].has_create_dataflow() &&
          ipc::Encode(replay[i].create_dataflow().desc()) == live.fingerprint) {
        skip[i] = found = true;  // unchanged: keep it running, do not rebuild
      }
    }
    if (found) {
      counts.set_kept(counts.kept() + 1);
      continue;
    }
    counts.set_dropped(counts.dropped() + 1);
    for (const auto& e : live.exports) {
      if (live.dropped.count(e)) continue;
      pb::Command drop;
      drop.mutable_allow_compaction()->set_id(e);
      drop.mutable_allow_compaction()->mutable_frontier();
      out.apply.push_back(std::move(drop));
    }
  }
  for (std::size_t i = 0; i < replay.size(); ++i) {
    if (skip[i]) continue;
    if (replay[i].has_create_dataflow()) counts.set_built(counts.built() + 1);
    out.apply.push_back(std::move(replay[i]));
  }
  spdlog::info("reconciled: kept {}, dropped {}, built {} dataflows", counts.kept(),
               counts.dropped(), counts.built());
  return out;
}

}  // namespace tandem::workers
