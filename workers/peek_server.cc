#include "workers/peek_server.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <set>

#include "base/check.h"
#include "shm/routing.h"
#include "workers/peek.h"
#include "workers/row_room.h"

namespace tandem::workers {

namespace pb = ipc::pb;

void PeekServer::Answer(const std::string& uuid,
                        const std::function<void(pb::PeekResponse*)>& fill) {
  pb::Response r;
  r.mutable_peek_response()->set_uuid(uuid);
  fill(r.mutable_peek_response());
  send_(r);
}

void PeekServer::Follow(const pb::DataflowDescription& desc) {
  for (const auto& e : desc.index_exports()) {
    const shm::SlotKey key{*GlobalId::Parse(e.id()), desc.as_of().elements(0)};
    auto ref = WaitForRoomInRow([&] { return reader_->Follow(key); }, [] {});
    TANDEM_CHECK(ref.ok(),
                 ("could not follow index " + e.id() + ": " + ref.status().ToString()).c_str());
    indexes_[e.id()] = *ref;
  }
}

void PeekServer::AllowCompaction(const std::string& id, Frontier frontier) {
  auto it = indexes_.find(id);
  if (it == indexes_.end()) return;
  if (frontier.empty()) {
    std::erase_if(peeks_, [&](const Waiting& p) {
      if (p.id != id) return false;
      Answer(p.uuid,
             [&](pb::PeekResponse* r) { r->set_error(id + " was dropped while the peek waited"); });
      return true;
    });
  }
  const Status s = reader_->AdvanceHold(it->second, frontier);
  TANDEM_CHECK(s.ok(), "advancing a peer hold failed");
  if (frontier.empty()) indexes_.erase(it);
}

void PeekServer::Add(const pb::Peek& p) {
  if (!indexes_.count(p.id())) {
    Answer(p.uuid(), [&](pb::PeekResponse* r) {
      r->set_error("not found: " + p.id() + " is not an index this replica has");
    });
    return;
  }
  Waiting w;
  w.uuid = p.uuid();
  w.id = p.id();
  w.t = p.timestamp();
  w.scan = p.keys().empty();
  // "Rows whose key equals one of keys": a key given twice still selects its rows once.
  std::set<std::string> keys;
  for (const auto& k : p.keys()) {
    std::string enc = EncodeRow(FromProto(k));
    if (shm::WorkerOf(enc, workers_) == me_) keys.insert(std::move(enc));
  }
  w.keys.assign(keys.begin(), keys.end());
  w.mfp = Mfp(p.mfp(), 0);
  w.finishing = p.finishing();
  peeks_.push_back(std::move(w));
}

void PeekServer::Cancel(const std::string& uuid) {
  for (auto p = peeks_.begin(); p != peeks_.end(); ++p) {
    if (p->uuid == uuid) {
      Answer(p->uuid, [](pb::PeekResponse* r) { r->mutable_canceled(); });
      peeks_.erase(p);
      return;
    }
  }
}

void PeekServer::Serve() {
  for (auto p = peeks_.begin(); p != peeks_.end();) {
    auto answer = [&](const std::function<void(pb::PeekResponse*)>& fill) {
      Answer(p->uuid, fill);
      p = peeks_.erase(p);
    };
    auto ref = indexes_.find(p->id);
    if (ref == indexes_.end()) {
      answer([&](pb::PeekResponse* r) { r->set_error(p->id + " was dropped"); });
      continue;
    }
    auto snap = reader_->Take(ref->second);
    TANDEM_CHECK(snap.ok(), "a snapshot of a followed slot failed");
    if (snap->unpublished()) {
      answer([&](pb::PeekResponse* r) { r->set_error(p->id + " was dropped"); });
      continue;
    }
    if (snap->filled() && !snap->since().LessEqual(p->t)) {
      const std::string why = p->id + ": time " + std::to_string(p->t) + " is before since " +
                              snap->since().ToString() + " (compacted; no longer exact)";
      answer([&](pb::PeekResponse* r) { r->set_error(why); });
      continue;
    }
    if (!snap->filled() || !snap->upper().Greater(p->t)) {
      ++p;  // wait for upper to pass t
      continue;
    }
    PeekRows rows;
    const PartBound bound{.finishing = &p->finishing, .max_bytes = max_result_size_, .worker = me_};
    auto err = ReadPeekPart(*snap, p->t, p->scan, p->keys, p->mfp, bound, &rows);
    if (!err) {
      for (const auto& [row, count] : rows.rows) {
        if (count < 0) err = "the result has a row with negative multiplicity";
      }
    }
    // Only what the finishing can use leaves this worker (the merge completes it), and never
    // more than max_result_size — nor than the channel to the command thread can carry.
    if (!err) KeepFirstForFinishing(p->finishing, &rows.rows);
    const std::string uuid = p->uuid;
    answer([&](pb::PeekResponse* r) {
      if (err) {
        r->set_error(*err);
        return;
      }
      const std::size_t room =
          ipc::kMaxMessageBytes - std::min(ipc::kMaxMessageBytes, uuid.size() + 64);
      const bool channel_binds = room < max_result_size_;
      const std::size_t limit = channel_binds ? room : max_result_size_;
      auto* out = r->mutable_rows();
      std::size_t size = 0;  // of `out`, as protobuf encodes it
      pb::RowCount scratch;
      for (const auto& [row, count] : rows.rows) {
        pb::RowCount* rc = size <= limit ? out->add_rows() : &scratch;
        rc->Clear();
        for (const Datum& d : row) *rc->mutable_row()->add_datums() = ToProto(d);
        rc->set_count(PartCount(count));
        const std::size_t bytes = rc->ByteSizeLong();
        size += 1 + google::protobuf::io::CodedOutputStream::VarintSize64(bytes) + bytes;
      }
      if (size > limit) {
        r->set_error(ResultTooLarge("worker " + std::to_string(me_) + "'s part alone", size, limit,
                                    channel_binds ? "the internal message limit" : kMaxResultSize));
      }
    });
  }
}

}  // namespace tandem::workers
