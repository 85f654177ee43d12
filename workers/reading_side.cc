#include "workers/reading_side.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "base/check.h"
#include "ipc/model.h"
#include "ipc/plan_typing.h"
#include "shm/routing.h"
#include "workers/peek.h"
#include "workers/row_room.h"

namespace tandem::workers {

namespace pb = ipc::pb;

void ReadingSide::Apply(std::uint64_t seq, const LoggedCommand& entry) {
  const pb::Command& c = *entry;
  switch (c.kind_case()) {
    case pb::Command::kCreateDataflow:
      if (c.create_dataflow().desc().class_() == pb::ONE_SHOT_READ) {
        CreateOneShot(seq, c.create_dataflow().desc());
      } else {
        // Interactive: maintenance's exports become peers, whose holds we own (DESIGN §4.1).
        Follow(c.create_dataflow().desc());
      }
      break;
    case pb::Command::kAllowCompaction:
      AllowCompaction(c.allow_compaction().id(), ipc::FrontierOf(c.allow_compaction().frontier()));
      break;
    case pb::Command::kPeek:
      Add(c.peek());
      break;
    case pb::Command::kCancelPeek:
      Cancel(c.cancel_peek().uuid());
      break;
    case pb::Command::kSubscribe:
      Subscribe(c.subscribe());
      break;
    case pb::Command::kCancelSubscribe:
      ForgetSubscribe(c.cancel_subscribe().uuid());
      break;
    case pb::Command::kUpdateConfiguration:
      if (const LiveParameters* p = entry.parameters()) {
        if (p->max_result_size) SetMaxResultSize(*p->max_result_size);
        if (p->subscribe_batch_bytes) SetSubscribeBatchBytes(*p->subscribe_batch_bytes);
      }
      break;
    default:
      break;
  }
}

void ReadingSide::Answer(const std::string& uuid,
                         const std::function<void(pb::PeekResponse*)>& fill) {
  pb::Response r;
  r.mutable_peek_response()->set_uuid(uuid);
  fill(r.mutable_peek_response());
  send_(r, 0);
}

void ReadingSide::ReleaseHold(const Waiting& p) {
  if (!p.held) return;
  auto it = indexes_.find(p.id);
  TANDEM_CHECK(it != indexes_.end(), "a held peek of an index that is no longer followed");
  reader_->ReleaseRead(it->second, p.t);
}

void ReadingSide::ReportOneShot(std::uint64_t seq, const std::string& id, Frontier write) {
  pb::Response r;
  r.mutable_frontiers()->set_id(id);
  if (!write.empty()) r.mutable_frontiers()->mutable_write()->add_elements(write.time());
  send_(r, seq);
}

void ReadingSide::CreateOneShot(std::uint64_t seq, const pb::DataflowDescription& desc) {
  OneShot& o = one_shots_[seq];
  o.desc = desc;
  o.as_of = desc.as_of().elements(0);
  for (const auto& e : desc.index_exports()) transient_[e.id()] = seq;
  for (auto& [id, schema] : ipc::ExportSchemas(desc))
    schemas_.insert_or_assign(id, std::move(schema));
  for (const auto& imp : desc.index_imports()) {
    auto it = indexes_.find(imp.id());
    if (it == indexes_.end()) {  // validation: a live index of the epoch
      o.error = imp.id() + " is not an index this replica has";
      break;
    }
    if (!reader_->HoldRead(it->second, o.as_of)) {
      o.error = imp.id() + ": as_of " + std::to_string(o.as_of) +
                " is compacted (before its compaction frontier " +
                reader_->allowed(it->second).ToString() + "): no longer exact";
      break;
    }
    o.held.push_back(it->second);
  }
  if (!o.error) return;  // Serve computes it once its imports are readable at as_of
  for (const shm::FollowedRef& ref : o.held) reader_->ReleaseRead(ref, o.as_of);
  o.held.clear();
  o.state = OneShot::State::kComputed;
  for (const auto& id : ipc::CreatedIds(desc)) ReportOneShot(seq, id, Frontier::At(o.as_of + 1));
}

void ReadingSide::ServeOneShots() {
  for (auto it = withdrawing_.begin(); it != withdrawing_.end();) {
    it = pool_->Withdraw(me_, it->first) ? withdrawing_.erase(it) : std::next(it);
  }
  for (auto& [seq, o] : one_shots_) {
    if (o.state == OneShot::State::kWaiting) {
      std::vector<shm::Snapshot> snaps;
      bool readable = true;
      for (std::size_t k = 0; k < o.held.size() && readable && !o.error; ++k) {
        auto snap = reader_->Take(o.held[k]);
        TANDEM_CHECK(snap.ok(), "a snapshot of a followed slot failed");
        if (snap->unpublished()) {
          o.error = o.desc.index_imports(static_cast<int>(k)).id() + " was dropped";
        } else if (!snap->filled() || !snap->upper().Greater(o.as_of)) {
          readable = false;  // wait for its upper to pass as_of
        } else {
          snaps.push_back(std::move(snap).value());
        }
      }
      if (o.error) {
        o.state = OneShot::State::kComputed;
      } else if (readable) {
        std::vector<std::vector<shm::BatchView>> batches;
        for (const shm::Snapshot& snap : snaps) batches.push_back(snap.batches());
        pool_->Submit(me_, seq, o.desc, std::move(batches));
        o.snapshots = std::move(snaps);
        o.state = OneShot::State::kSubmitted;
        continue;
      } else {
        continue;
      }
    } else if (o.state == OneShot::State::kSubmitted) {
      auto parts = pool_->TakeResult(me_, seq);
      if (!parts) continue;
      o.parts = std::move(*parts);
      o.snapshots.clear();
      o.state = OneShot::State::kComputed;
    } else {
      continue;
    }
    for (const auto& id : ipc::CreatedIds(o.desc)) {
      if (!o.dropped.count(id)) ReportOneShot(seq, id, Frontier::At(o.as_of + 1));
    }
  }
}

void ReadingSide::Follow(const pb::DataflowDescription& desc) {
  for (auto& [id, schema] : ipc::ExportSchemas(desc))
    schemas_.insert_or_assign(id, std::move(schema));
  for (const auto& e : desc.index_exports()) {
    const shm::SlotKey key{*GlobalId::Parse(e.id()), desc.as_of().elements(0)};
    auto ref = WaitForRoomInRow([&] { return reader_->Follow(key); }, [] {});
    TANDEM_CHECK(ref.ok(),
                 ("could not follow index " + e.id() + ": " + ref.status().ToString()).c_str());
    indexes_[e.id()] = *ref;
  }
}

void ReadingSide::AllowCompaction(const std::string& id, Frontier frontier) {
  auto dropped = [&](const Waiting& p) {
    if (p.id != id) return false;
    ReleaseHold(p);
    Answer(p.uuid,
           [&](pb::PeekResponse* r) { r->set_error(id + " was dropped while the peek waited"); });
    return true;
  };
  if (auto t = transient_.find(id); t != transient_.end()) {
    if (!frontier.empty()) return;  // a transient index is readable at its as_of only
    std::erase_if(peeks_, dropped);
    const std::uint64_t seq = t->second;
    transient_.erase(t);
    schemas_.erase(id);
    OneShot& o = one_shots_.at(seq);
    o.dropped.insert(id);
    ReportOneShot(seq, id, Frontier::Empty());
    if (o.dropped.size() < static_cast<std::size_t>(o.desc.index_exports_size())) return;
    // Its last export: the dataflow goes, and with it its holds (I1 holds from accept to drop).
    for (const auto& b : o.desc.objects_to_build()) ReportOneShot(seq, b.id(), Frontier::Empty());
    for (const shm::FollowedRef& ref : o.held) reader_->ReleaseRead(ref, o.as_of);
    auto node = one_shots_.extract(seq);
    if (!pool_->Withdraw(me_, seq)) withdrawing_.insert(std::move(node));
    return;
  }
  auto it = indexes_.find(id);
  if (it == indexes_.end()) return;
  if (frontier.empty()) {
    std::erase_if(peeks_, dropped);
    subscriptions_.OnDropped(id);
    // A dropped one-shot whose compute thread still reads its snapshots of this index: wait for
    // it (bounded by that computation: a ready job is computed without any reading worker), so
    // that no snapshot of the index is open when its hold goes.
    for (auto w = withdrawing_.begin(); w != withdrawing_.end();) {
      const auto& held = w->second.held;
      const bool reads_it = std::any_of(held.begin(), held.end(), [&](const shm::FollowedRef& r) {
        return r.index == it->second.index && r.key == it->second.key;
      });
      if (!reads_it) {
        ++w;
        continue;
      }
      while (!pool_->Withdraw(me_, w->first)) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      w = withdrawing_.erase(w);
    }
  }
  const Status s = reader_->AdvanceHold(it->second, frontier);
  TANDEM_CHECK(s.ok(), "advancing a peer hold failed");
  if (frontier.empty()) {
    schemas_.erase(it->first);
    indexes_.erase(it);
  }
}

void ReadingSide::Add(const pb::Peek& p) {
  const auto followed = indexes_.find(p.id());
  if (followed == indexes_.end() && !transient_.count(p.id())) {
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
    std::string enc = EncodeKey(FromProto(k));
    if (shm::WorkerOf(enc, workers_) == me_) keys.insert(std::move(enc));
  }
  w.keys.assign(keys.begin(), keys.end());
  w.mfp = Mfp(p.mfp(), schemas_.at(p.id()));
  w.finishing = p.finishing();
  // I1: the index stays exact at t while the peek waits (a hold past t already cannot be lowered:
  // then the peek reads whatever since allows, and answers "before since" if it passes t).
  if (followed != indexes_.end()) w.held = reader_->HoldRead(followed->second, w.t);
  peeks_.push_back(std::move(w));
}

void ReadingSide::Subscribe(const pb::Subscribe& subscribe) {
  const auto followed = indexes_.find(subscribe.id());
  subscriptions_.Add(subscribe, followed == indexes_.end() ? nullptr : &followed->second);
}

void ReadingSide::Cancel(const std::string& uuid) {
  for (auto p = peeks_.begin(); p != peeks_.end(); ++p) {
    if (p->uuid == uuid) {
      ReleaseHold(*p);
      Answer(p->uuid, [](pb::PeekResponse* r) { r->mutable_canceled(); });
      peeks_.erase(p);
      return;
    }
  }
}

bool ReadingSide::ServeTransient(const Waiting& p) {
  auto t = transient_.find(p.id);
  if (t == transient_.end()) {
    Answer(p.uuid, [&](pb::PeekResponse* r) { r->set_error(p.id + " was dropped"); });
    return true;
  }
  const OneShot& o = one_shots_.at(t->second);
  if (o.state != OneShot::State::kComputed) return false;
  const TransientPart* part = nullptr;
  if (!o.error) part = &o.parts.at(p.id);
  if (const auto& error = o.error ? o.error : part->error) {
    Answer(p.uuid, [&](pb::PeekResponse* r) { r->set_error(p.id + ": " + *error); });
    return true;
  }
  if (p.t != o.as_of) {  // validation refuses it; a runtime answers rather than waits forever
    Answer(p.uuid, [&](pb::PeekResponse* r) {
      r->set_error(p.id + " is a one-shot result, readable only at time " +
                   std::to_string(o.as_of));
    });
    return true;
  }
  const auto snap =
      shm::Snapshot::OfLocal({*GlobalId::Parse(p.id), o.as_of}, Frontier::At(o.as_of + 1),
                             Frontier::At(o.as_of), part->views());
  AnswerFrom(snap, p);
  return true;
}

bool ReadingSide::Serve() {
  ServeOneShots();
  for (auto p = peeks_.begin(); p != peeks_.end();) {
    if (transient_.count(p->id) || !indexes_.count(p->id)) {
      p = ServeTransient(*p) ? peeks_.erase(p) : std::next(p);
      continue;
    }
    auto answer = [&](const std::function<void(pb::PeekResponse*)>& fill) {
      ReleaseHold(*p);
      Answer(p->uuid, fill);
      p = peeks_.erase(p);
    };
    auto ref = indexes_.find(p->id);
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
    ReleaseHold(*p);
    AnswerFrom(*snap, *p);
    p = peeks_.erase(p);
  }
  return subscriptions_.Serve({.deadline = std::chrono::steady_clock::now() + kSubscribeSlice});
}

void ReadingSide::AnswerFrom(const shm::Snapshot& snap, const Waiting& p) {
  PeekRows rows;
  const PartBound bound{.finishing = &p.finishing, .max_bytes = max_result_size_, .worker = me_};
  // (An indexed row with a negative count that the mfp keeps is an error of the part already.)
  auto err = ReadPeekPart(snap, p.t, p.scan, p.keys, p.mfp, bound, &rows);
  // Only what the finishing can use leaves this worker (the merge completes it), and never
  // more than max_result_size — nor than the channel to the command thread can carry.
  if (!err) KeepFirstForFinishing(p.finishing, &rows.rows);
  const std::string& uuid = p.uuid;
  Answer(uuid, [&](pb::PeekResponse* r) {
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

}  // namespace tandem::workers
