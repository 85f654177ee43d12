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

// Sorts by (time, value) and sums equal ones; drops those that cancel. False when a sum does not
// fit int64 (a count beyond int64: base/count.h).
template <typename C>
bool Consolidate(std::vector<C>* changes) {
  std::sort(changes->begin(), changes->end(), [](const C& a, const C& b) {
    return a.time != b.time ? a.time < b.time : a.val < b.val;
  });
  std::size_t out = 0;
  for (std::size_t i = 0; i < changes->size();) {
    Int128 sum = 0;
    std::size_t j = i;
    for (; j < changes->size() && (*changes)[j].time == (*changes)[i].time &&
           (*changes)[j].val == (*changes)[i].val;
         ++j) {
      sum += (*changes)[j].diff;
    }
    if (sum < INT64_MIN || sum > INT64_MAX) return false;
    if (sum != 0) {
      (*changes)[out] = (*changes)[i];
      (*changes)[out].diff = static_cast<std::int64_t>(sum);
      ++out;
    }
    i = j;
  }
  changes->resize(out);
  return true;
}

}  // namespace

void Subscriptions::Add(const pb::Subscribe& subscribe, const shm::FollowedRef* ref) {
  Sub s;
  s.uuid = subscribe.uuid();
  s.id = subscribe.id();
  s.as_of = subscribe.as_of();
  s.snapshot = subscribe.snapshot();
  if (subscribe.has_up_to()) s.up_to = subscribe.up_to();
  auto end = [&](pb::SubscribeEnd::Reason reason, const std::string& detail) {
    send_(ipc::MakeSubscribeEnd(s.uuid, reason, detail));
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
  send_(ipc::MakeSubscribeEnd(s.uuid, reason, detail));
}

void Subscriptions::OnDropped(const std::string& id) {
  for (auto it = subs_.begin(); it != subs_.end();) {
    if (it->second.id != id) {
      ++it;
      continue;
    }
    End(it->second, pb::SubscribeEnd::DROPPED, id + " was dropped");
    it = subs_.erase(it);
  }
}

void Subscriptions::Serve() {
  if (subs_.empty()) return;
  Turn turn;
  for (auto it = subs_.begin(); it != subs_.end();) {
    // Looked at before each: one turn never sends much beyond the bound (the ones not served now
    // are served on a later turn, over a larger interval).
    if (congested_ && congested_()) return;
    if (ServeOne(it->second, turn)) {
      it = subs_.erase(it);
    } else {
      ++it;
    }
  }
}

namespace {

pb::SubscribeUpdate ToUpdate(std::string_view val, Time time, std::int64_t diff) {
  pb::SubscribeUpdate u;
  *u.mutable_row() = ipc::ToProto(DecodeIndexValue(val));
  u.set_time(time);
  u.set_diff(diff);
  return u;
}

}  // namespace

bool Subscriptions::SendParts(const Sub& s, Time lower, Frontier upper,
                              const std::vector<pb::SubscribeUpdate>& updates) {
  // A row that alone would not fit a message (the channel cannot carry it): the subscribe ends
  // before anything of the interval is sent.
  const std::size_t room =
      ipc::kMaxMessageBytes - std::min(ipc::kMaxMessageBytes, s.uuid.size() + 64);
  for (const pb::SubscribeUpdate& u : updates) {
    if (EncodedUpdateBytes(u) > room) return false;
  }
  SendInBatches(s.uuid, lower, upper.raw(), updates.begin(), updates.end(), batch_bytes_, send_);
  return true;
}

bool Subscriptions::ServeOne(Sub& s, Turn& turn) {
  auto found = turn.snapshots.find(s.ref.index);
  if (found == turn.snapshots.end()) {
    auto taken = reader_->Take(s.ref);
    TANDEM_CHECK(taken.ok(), "a snapshot of a followed slot failed");
    found = turn.snapshots.emplace(s.ref.index, std::move(taken).value()).first;
  }
  const shm::Snapshot& snap = found->second;
  if (snap.unpublished()) {
    End(s, pb::SubscribeEnd::DROPPED, s.id + " was dropped");
    return true;
  }
  if (!snap.filled() || !snap.upper().Greater(s.as_of)) return false;  // wait for as_of
  // The hold keeps since at or below it (peer hold = min(controller, read holds)).
  TANDEM_CHECK(snap.since().LessEqual(s.held), "a subscribed index compacted past its hold");
  if (!s.started) {
    std::optional<std::string> error;
    const std::string_view error_prefix(&shm::kErrorKeyPrefix, 1);
    std::vector<pb::SubscribeUpdate> contents;
    const Status scanned = snap.Scan(
        s.as_of,
        [&](std::string_view key, std::string_view val, std::int64_t count) {
          if (IsErrorKey(key)) {
            error = std::string(key.substr(1));
            return false;
          }
          contents.push_back(ToUpdate(val, s.as_of, count));
          return true;
        },
        s.snapshot ? std::string_view() : error_prefix);
    if (!scanned.ok()) error = scanned.message();
    if (error) {
      End(s, pb::SubscribeEnd::ERROR, s.id + ": " + *error);
      return true;
    }
    if (s.snapshot && !SendParts(s, s.as_of, Frontier::At(s.as_of + 1), contents)) {
      End(s, pb::SubscribeEnd::ERROR, s.id + ": " + kRowTooLarge);
      return true;
    }
    s.started = true;
    s.next = s.as_of + 1;
    if (s.up_to && s.next >= *s.up_to) {  // up_to == as_of + 1: nothing after as_of is asked for
      // Without a snapshot this worker has sent nothing yet: an empty part says it is done.
      if (!s.snapshot) SendParts(s, s.next, Frontier::At(s.next), {});
      reader_->ReleaseRead(s.ref, s.held);
      return true;
    }
  }
  Frontier upper = snap.upper();
  if (s.up_to) upper = Min(upper, Frontier::At(*s.up_to));
  if (!upper.Greater(s.next)) return false;
  auto [at, fresh] = turn.reads.try_emplace(ReadKey{s.ref.index, s.next, upper.raw()});
  Read& read = at->second;
  if (fresh) {
    std::vector<Change> changes, errors;
    ForEachUpdateIn(snap.batches(), s.next, upper,
                    [&](const shm::BatchView& b, std::string_view key, std::uint32_t v, Time t,
                        std::int64_t diff) {
                      if (IsErrorKey(key)) {
                        errors.push_back({key.substr(1), t, diff});
                      } else {
                        changes.push_back({b.val(v), t, diff});
                      }
                    });
    if (!Consolidate(&errors) || !errors.empty()) {
      read.error = errors.empty() ? std::string(kCountBeyondInt64) : std::string(errors[0].val);
    } else if (!Consolidate(&changes)) {
      read.error = kCountBeyondInt64;
    } else {
      read.updates.reserve(changes.size());
      for (const Change& c : changes) read.updates.push_back(ToUpdate(c.val, c.time, c.diff));
    }
  }
  if (read.error) {
    End(s, pb::SubscribeEnd::ERROR, s.id + ": " + *read.error);
    return true;
  }
  if (!SendParts(s, s.next, upper, read.updates)) {
    End(s, pb::SubscribeEnd::ERROR, s.id + ": " + kRowTooLarge);
    return true;
  }
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

}  // namespace tandem::workers
