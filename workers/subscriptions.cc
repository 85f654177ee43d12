#include "workers/subscriptions.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include "base/check.h"
#include "base/count.h"
#include "base/row.h"
#include "ipc/rows.h"
#include "shm/routing.h"
#include "workers/sources/index_import.h"

namespace tandem::workers {

namespace pb = ipc::pb;

std::optional<std::size_t> ParseSubscribeBatchBytes(std::string_view name, std::string_view value) {
  if (name != kSubscribeBatchBytes) return std::nullopt;
  std::size_t bytes = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (ec != std::errc() || ptr != value.data() + value.size() || bytes < kMinSubscribeBatchBytes ||
      bytes > kMaxSubscribeBatchBytes) {
    return std::nullopt;
  }
  return bytes;
}

std::size_t EncodedUpdateBytes(const pb::SubscribeUpdate& update) {
  const std::size_t bytes = update.ByteSizeLong();
  return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(bytes) + bytes;
}

namespace {

constexpr char kCountBeyondInt64[] = "a count does not fit int64";
constexpr char kRowTooLarge[] =
    "a row is larger than a message can carry (ipc::kMaxMessageBytes): it cannot be streamed";

// Sorts `changes` by (time, value) and calls group(first, sum) once per (time, value), in that
// order, with the exact sum of its diffs (base/count.h).
template <typename C, typename G>
void ForEachChangeGroup(std::vector<C>* changes, const G& group) {
  std::sort(changes->begin(), changes->end(), [](const C& a, const C& b) {
    return a.time != b.time ? a.time < b.time : a.val < b.val;
  });
  for (std::size_t i = 0; i < changes->size();) {
    Int128 sum = 0;
    std::size_t j = i;
    for (; j < changes->size() && (*changes)[j].time == (*changes)[i].time &&
           (*changes)[j].val == (*changes)[i].val;
         ++j) {
      sum += (*changes)[j].diff;
    }
    group((*changes)[i], sum);
    i = j;
  }
}

pb::SubscribeUpdate ToUpdate(std::string_view val, Time time, std::int64_t diff) {
  pb::SubscribeUpdate u;
  *u.mutable_row() = ipc::ToProto(DecodeIndexValue(val));
  u.set_time(time);
  u.set_diff(diff);
  return u;
}

// The first of `updates` (in time order) at a time >= t.
std::size_t FirstAtOrAfter(const std::vector<pb::SubscribeUpdate>& updates, Time t) {
  return static_cast<std::size_t>(
      std::partition_point(updates.begin(), updates.end(),
                           [&](const pb::SubscribeUpdate& u) { return u.time() < t; }) -
      updates.begin());
}

}  // namespace

void Subscriptions::Emit(const pb::Response& r) {
  send_(r);
  ++sent_;
}

bool Subscriptions::Spent(const SubscribeSlice& slice) const {
  return sent_ >= slice.max_messages || Congested() ||
         std::chrono::steady_clock::now() >= slice.deadline;
}

void Subscriptions::Add(const pb::Subscribe& subscribe, const shm::FollowedRef* ref) {
  Sub s;
  s.uuid = subscribe.uuid();
  s.id = subscribe.id();
  s.as_of = subscribe.as_of();
  s.snapshot = subscribe.snapshot();
  if (subscribe.has_up_to()) s.up_to = subscribe.up_to();
  auto end = [&](pb::SubscribeEnd::Reason reason, const std::string& detail) {
    Emit(ipc::MakeSubscribeEnd(s.uuid, reason, detail));
  };
  if (ref == nullptr) {
    end(pb::SubscribeEnd::ERROR, "not found: " + s.id + " is not an index this replica has");
    return;
  }
  s.ref = *ref;
  // I1: every time from as_of on stays exact while the subscribe lives. The rule reads only the
  // command stream, so every worker decides alike.
  if (!reader_->HoldRead(s.ref, s.as_of)) {
    end(pb::SubscribeEnd::ERROR, s.id + ": as_of " + std::to_string(s.as_of) +
                                     " is compacted (before its compaction frontier " +
                                     reader_->allowed(s.ref).ToString() + "): no longer exact");
    return;
  }
  s.held = s.as_of;
  const std::string uuid = s.uuid;
  subs_.insert_or_assign(uuid, std::move(s));
}

void Subscriptions::Forget(const std::string& uuid) {
  auto it = subs_.find(uuid);
  if (it == subs_.end()) return;
  reader_->ReleaseRead(it->second.ref, it->second.held);
  subs_.erase(it);
}

void Subscriptions::End(Sub& s, pb::SubscribeEnd::Reason reason, const std::string& detail) {
  reader_->ReleaseRead(s.ref, s.held);
  Emit(ipc::MakeSubscribeEnd(s.uuid, reason, detail));
}

void Subscriptions::OnDropped(const std::string& id) {
  // The slot's hold goes next, which no open snapshot may outlive (shm::Reader::AdvanceHold).
  turn_.reset();
  for (auto it = subs_.begin(); it != subs_.end();) {
    if (it->second.id != id) {
      ++it;
      continue;
    }
    End(it->second, pb::SubscribeEnd::DROPPED, id + " was dropped");
    it = subs_.erase(it);
  }
}

bool Subscriptions::Serve(const SubscribeSlice& slice) {
  sent_ = 0;
  // Nothing is sent while back-pressure holds, and nothing is kept open meanwhile.
  if (subs_.empty() || Congested()) {
    turn_.reset();
    return false;
  }
  const auto now = std::chrono::steady_clock::now();
  if (turn_ && now - turn_->started > kMaxSubscribeRound) turn_.reset();
  auto it = subs_.lower_bound(cursor_);
  for (bool first = true;; first = false) {
    if (!first && Spent(slice)) break;
    if (!turn_ || turn_->left == 0) {
      // A round is complete: every subscribe was visited once with its snapshots. The next one
      // starts from new snapshots — in this slice only when it has visited none yet (else it
      // would serve each subscribe as often as slices allow, not once per change).
      const bool complete = turn_.has_value();
      turn_.reset();
      if (complete && !first) break;
      turn_.emplace();
      turn_->started = now;
      turn_->left = subs_.size();
    }
    if (it == subs_.end()) it = subs_.begin();
    --turn_->left;
    switch (ServeOne(it->second, *turn_, slice)) {
      case Visit::kKept:
        ++it;
        break;
      case Visit::kDone:
        it = subs_.erase(it);
        break;
      case Visit::kCut:
        ++it;  // the next slice starts with the next subscribe: each gets its turn
        break;
    }
    if (subs_.empty()) {
      turn_.reset();
      cursor_.clear();
      return false;
    }
  }
  if (it == subs_.end()) it = subs_.begin();
  cursor_ = it->first;
  if (turn_ && turn_->left > 0 && !Congested()) return true;  // the round goes on next slice
  // Over, or held back: no snapshot stays open while the worker waits.
  turn_.reset();
  // The round is complete; an interval it cut is continued by the next one at once.
  return std::any_of(subs_.begin(), subs_.end(),
                     [](const auto& entry) { return entry.second.sending.has_value(); }) &&
         !Congested();
}

void Subscriptions::Measure(Read* read) {
  read->bytes.reserve(read->updates.size());
  for (const pb::SubscribeUpdate& u : read->updates) {
    read->bytes.push_back(EncodedUpdateBytes(u));
    read->largest = std::max(read->largest, read->bytes.back());
  }
}

bool Subscriptions::HasOversizeRow(const Sub& s, const Read& read, std::size_t lo, std::size_t hi) {
  // Room for the batch's other fields (its uuid among them) within a message.
  const std::size_t room =
      ipc::kMaxMessageBytes - std::min(ipc::kMaxMessageBytes, s.uuid.size() + 64);
  if (read.largest <= room) return false;
  return std::any_of(read.bytes.begin() + static_cast<std::ptrdiff_t>(lo),
                     read.bytes.begin() + static_cast<std::ptrdiff_t>(hi),
                     [&](std::size_t b) { return b > room; });
}

std::shared_ptr<const Subscriptions::Read> Subscriptions::ReadFor(Turn& turn, const Sub& s,
                                                                  const shm::Snapshot& snap) {
  std::shared_ptr<const Read>& cached = turn.reads[s.ref.index];
  if (cached && cached->from <= s.next) return cached;
  // From the lowest progress of the slot's subscribes that will read this round (those not
  // started yet read from as_of + 1 once they are): one scan of the batches for all of them.
  Time from = s.next;
  for (const auto& [uuid, o] : subs_) {
    if (o.ref.index != s.ref.index || o.sending) continue;
    from = std::min(from, o.started ? o.next : o.as_of + 1);
  }
  auto read = std::make_shared<Read>();
  read->from = from;
  read->upper = snap.upper();
  std::vector<Change> changes, errors;
  ForEachUpdateIn(snap.batches(), from, snap.upper(),
                  [&](const shm::BatchView& b, std::string_view key, std::uint32_t v, Time t,
                      std::int64_t diff) {
                    if (IsErrorKey(key)) {
                      errors.push_back({key.substr(1), t, diff});
                    } else {
                      changes.push_back({b.val(v), t, diff});
                    }
                  });
  // An error row counts where its count at its time is not zero (beyond int64 included).
  ForEachChangeGroup(&errors, [&](const Change& c, Int128 sum) {
    if (sum != 0) read->failures.push_back({c.time, false, std::string(c.val)});
  });
  ForEachChangeGroup(&changes, [&](const Change& c, Int128 sum) {
    if (!FitsInt64(sum)) {
      read->failures.push_back({c.time, true, kCountBeyondInt64});
    } else if (sum != 0) {
      read->updates.push_back(ToUpdate(c.val, c.time, static_cast<std::int64_t>(sum)));
    }
  });
  Measure(read.get());
  cached = std::move(read);
  return cached;
}

bool Subscriptions::SendSome(Sub& s, const SubscribeSlice& slice) {
  Sending& p = *s.sending;
  const Read& read = *p.read;
  for (;;) {
    // As SendInBatches cuts an interval: as many updates as fit in batch_bytes_, at least one.
    pb::Response r;
    pb::SubscribeBatch* batch = r.mutable_subscribe_batch();
    batch->set_uuid(s.uuid);
    batch->set_lower(s.next);
    std::size_t bytes = 0;
    for (; p.at < p.end && (bytes == 0 || bytes + read.bytes[p.at] <= batch_bytes_); ++p.at) {
      *batch->add_updates() = read.updates[p.at];
      bytes += read.bytes[p.at];
    }
    const bool last = p.at == p.end;
    batch->set_upper(last ? p.upper.raw() : s.next);
    Emit(r);
    if (last) return true;
    if (Spent(slice)) return false;
  }
}

bool Subscriptions::Finish(Sub& s) {
  const Frontier upper = s.sending->upper;
  s.sending.reset();
  if (upper.empty() || (s.up_to && upper.time() >= *s.up_to)) {
    reader_->ReleaseRead(s.ref, s.held);  // this worker's part is complete
    return true;
  }
  s.next = upper.time();
  const Time hold = std::max(s.as_of, s.next - 1);
  if (hold > s.held) {
    reader_->MoveRead(s.ref, s.held, hold);
    s.held = hold;
  }
  return false;
}

Subscriptions::Visit Subscriptions::ServeOne(Sub& s, Turn& turn, const SubscribeSlice& slice) {
  if (s.sending) {  // the rest of an interval a slice cut, before anything newer
    if (!SendSome(s, slice)) return Visit::kCut;
    return Finish(s) ? Visit::kDone : Visit::kKept;
  }
  auto found = turn.snapshots.find(s.ref.index);
  if (found == turn.snapshots.end()) {
    auto taken = reader_->Take(s.ref);
    TANDEM_CHECK(taken.ok(), "a snapshot of a followed slot failed");
    found = turn.snapshots.emplace(s.ref.index, std::move(taken).value()).first;
  }
  const shm::Snapshot& snap = found->second;
  if (snap.unpublished()) {
    End(s, pb::SubscribeEnd::DROPPED, s.id + " was dropped");
    return Visit::kDone;
  }
  if (!snap.filled() || !snap.upper().Greater(s.as_of)) return Visit::kKept;  // wait for as_of
  // The hold keeps since at or below it (peer hold = min(controller, read holds)).
  TANDEM_CHECK(snap.since().LessEqual(s.held), "a subscribed index compacted past its hold");
  if (!s.started) {
    std::optional<std::string> error;
    const std::string_view error_prefix(&shm::kErrorKeyPrefix, 1);
    auto contents = std::make_shared<Read>();
    const Status scanned = snap.Scan(
        s.as_of,
        [&](std::string_view key, std::string_view val, std::int64_t count) {
          if (IsErrorKey(key)) {
            error = std::string(key.substr(1));
            return false;
          }
          contents->updates.push_back(ToUpdate(val, s.as_of, count));
          return true;
        },
        s.snapshot ? std::string_view() : error_prefix);
    if (!scanned.ok()) error = scanned.message();
    if (error) {
      End(s, pb::SubscribeEnd::ERROR, s.id + ": " + *error);
      return Visit::kDone;
    }
    s.started = true;
    if (s.snapshot) {
      contents->from = s.as_of;
      contents->upper = Frontier::At(s.as_of + 1);
      Measure(contents.get());
      const std::size_t n = contents->updates.size();
      // A row that alone would not fit a message (the channel cannot carry it): the subscribe
      // ends before anything of the interval is sent.
      if (HasOversizeRow(s, *contents, 0, n)) {
        End(s, pb::SubscribeEnd::ERROR, s.id + ": " + kRowTooLarge);
        return Visit::kDone;
      }
      s.next = s.as_of;
      s.sending = Sending{
          .read = std::move(contents), .at = 0, .end = n, .upper = Frontier::At(s.as_of + 1)};
      if (!SendSome(s, slice)) return Visit::kCut;
      if (Finish(s)) return Visit::kDone;     // up_to == as_of + 1
      if (Spent(slice)) return Visit::kKept;  // its changes since, in a later slice
    } else {
      s.next = s.as_of + 1;
      if (s.up_to && s.next >= *s.up_to) {  // up_to == as_of + 1: nothing after as_of is asked for
        // This worker has sent nothing yet: an empty part says it is done.
        pb::Response r;
        pb::SubscribeBatch* batch = r.mutable_subscribe_batch();
        batch->set_uuid(s.uuid);
        batch->set_lower(s.next);
        batch->set_upper(s.next);
        Emit(r);
        reader_->ReleaseRead(s.ref, s.held);
        return Visit::kDone;
      }
    }
  }
  Frontier upper = snap.upper();
  if (s.up_to) upper = Min(upper, Frontier::At(*s.up_to));
  if (!upper.Greater(s.next)) return Visit::kKept;
  std::shared_ptr<const Read> read = ReadFor(turn, s, snap);
  // Its interval [next, upper) of the read: the first error row in it ends the subscribe, else
  // the first count beyond int64, before anything of the interval is sent.
  const Read::Failure* failure = nullptr;
  for (const Read::Failure& f : read->failures) {
    if (f.time < s.next || !upper.Greater(f.time)) continue;
    if (!f.count) {
      failure = &f;
      break;
    }
    if (failure == nullptr) failure = &f;
  }
  if (failure != nullptr) {
    End(s, pb::SubscribeEnd::ERROR, s.id + ": " + failure->what);
    return Visit::kDone;
  }
  const std::size_t lo = FirstAtOrAfter(read->updates, s.next);
  const std::size_t hi =
      upper.empty() ? read->updates.size() : FirstAtOrAfter(read->updates, upper.time());
  if (HasOversizeRow(s, *read, lo, hi)) {
    End(s, pb::SubscribeEnd::ERROR, s.id + ": " + kRowTooLarge);
    return Visit::kDone;
  }
  s.sending = Sending{.read = std::move(read), .at = lo, .end = hi, .upper = upper};
  if (!SendSome(s, slice)) return Visit::kCut;
  return Finish(s) ? Visit::kDone : Visit::kKept;
}

}  // namespace tandem::workers
