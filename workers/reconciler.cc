#include "workers/reconciler.h"

#include <algorithm>
#include <set>

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
    for (const auto& i : c.create_dataflow().desc().index_imports()) l.imports.push_back(i.id());
    for (const auto& i : c.create_dataflow().desc().source_imports()) l.sources.push_back(i.id());
    live_[seq] = std::move(l);
  } else if (ipc::IsDrop(c)) {
    const std::string& id = c.allow_compaction().id();
    for (auto it = live_.begin(); it != live_.end(); ++it) {
      auto& l = it->second;
      // The dataflow whose export `id` is live: an older one may have exported (and dropped) a
      // collection of the same id before.
      if (l.dropped.count(id) ||
          std::find(l.exports.begin(), l.exports.end(), id) == l.exports.end())
        continue;
      l.dropped.insert(id);
      if (l.dropped.size() == l.exports.size()) live_.erase(it);
      break;
    }
  }
}

Reconciler::Admitted Reconciler::Admit(pb::Command c) {
  Admitted out;
  if (c.has_hello()) {
    // The replay the new controller abandons goes, but not the writes held with it: they are a
    // writer session's (or were validated and accepted), and every write is answered — at the
    // end of this replay, or now when nothing is held any more.
    std::vector<pb::Command> writes;
    for (pb::Command& b : buffered_) {
      if (b.has_write_table()) writes.push_back(std::move(b));
    }
    buffered_.clear();
    holding_ = !live_.empty();
    if (holding_) {
      buffered_ = std::move(writes);
    } else {
      out.apply = std::move(writes);
    }
    return out;
  }
  // An observer's Peek and CancelPeek (DESIGN §3, "Observers") are not part of the controller's
  // replay: they read what runs now — the catalog they were validated against — and never wait
  // for, or are dropped with, somebody else's reconciliation. The controller's own peeks wait:
  // its replay may redefine what they read.
  const auto runs_now = [&](const pb::WriteTable& w) {
    return std::any_of(live_.begin(), live_.end(), [&](const auto& entry) {
      const auto& sources = entry.second.sources;
      return std::find(sources.begin(), sources.end(), w.id()) != sources.end();
    });
  };
  if (holding_ && !ipc::IsObserverRead(c) && !(c.has_write_table() && runs_now(c.write_table()))) {
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
  std::set<std::uint64_t> kept;
  std::vector<std::size_t> kept_at;  // the replayed create each kept dataflow matched
  for (const auto& [seq, live] : live_) {
    for (std::size_t i = 0; i < replay.size(); ++i) {
      if (!skip[i] && replay[i].has_create_dataflow() &&
          ipc::Encode(replay[i].create_dataflow().desc()) == live.fingerprint) {
        skip[i] = true;  // unchanged: keep it running, do not rebuild
        kept.insert(seq);
        kept_at.push_back(i);
        break;
      }
    }
  }
  // A kept dataflow importing an export of one that is not kept goes too (and is rebuilt from its
  // replayed create): newer dataflows import older ones, so one pass in creation order settles it.
  std::set<std::string> going;  // live exports of dropped dataflows
  std::size_t k = 0;
  for (const auto& [seq, live] : live_) {
    if (kept.count(seq)) {
      const std::size_t at = kept_at[k++];
      const bool imports_going = std::any_of(live.imports.begin(), live.imports.end(),
                                             [&](const std::string& i) { return going.count(i); });
      if (!imports_going) continue;
      kept.erase(seq);
      skip[at] = false;
    }
    for (const auto& e : live.exports) {
      if (!live.dropped.count(e)) going.insert(e);
    }
  }
  // Drops newest first: an importer before what it imports.
  for (auto it = live_.rbegin(); it != live_.rend(); ++it) {
    const auto& [seq, live] = *it;
    if (kept.count(seq)) {
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
