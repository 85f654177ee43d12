// A subscribe's stream as a controller receives it (DESIGN §10, ipc/tandem.proto SubscribeBatch /
// SubscribeEnd), and the checks every subscribe test can share: the protocol's shape (contiguous
// batches, bounded parts, consolidated updates in time order within their interval, exactly one
// End and nothing after it) and the stream's consolidated contents against expected contents at
// every time it covers.
//
// Collect with SubscribeStreams::Handle (differential.h's Session does it for every response);
// check with CheckStreamShape and CheckStreamContents, which return what is wrong (empty: nothing).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/datum_text.h"
#include "ipc/codec.h"
#include "reference/reference.h"

namespace tandem::testing {

namespace pb = ::tandem::protocol;

inline constexpr std::uint64_t kClosedUpper = std::numeric_limits<std::uint64_t>::max();

// Everything received for one subscribe uuid, in arrival order.
struct SubscribeStream {
  std::vector<pb::SubscribeBatch> batches;
  std::vector<pb::SubscribeEnd> ends;
  int after_end = 0;  // batches received after the (first) End: a protocol violation

  bool ended() const { return !ends.empty(); }
  // The upper of the last batch that completed an interval (upper > lower); nullopt when none did.
  std::optional<std::uint64_t> completed_upper() const {
    for (auto it = batches.rbegin(); it != batches.rend(); ++it) {
      if (it->upper() > it->lower()) return it->upper();
    }
    return std::nullopt;
  }
  std::size_t parts() const {
    return static_cast<std::size_t>(std::count_if(
        batches.begin(), batches.end(), [](const auto& b) { return b.upper() == b.lower(); }));
  }
  std::size_t updates() const {
    std::size_t n = 0;
    for (const auto& b : batches) n += static_cast<std::size_t>(b.updates_size());
    return n;
  }
};

// The streams of a session by (client) uuid.
class SubscribeStreams {
 public:
  // True when `r` is a subscribe answer (then it is recorded).
  bool Handle(const pb::Response& r) {
    if (r.has_subscribe_batch()) {
      SubscribeStream& s = streams_[r.subscribe_batch().uuid()];
      if (s.ended()) {
        ++s.after_end;
      } else {
        s.batches.push_back(r.subscribe_batch());
      }
      return true;
    }
    if (r.has_subscribe_end()) {
      streams_[r.subscribe_end().uuid()].ends.push_back(r.subscribe_end());
      return true;
    }
    return false;
  }
  std::map<std::string, SubscribeStream>& streams() { return streams_; }
  const SubscribeStream* Find(const std::string& uuid) const {
    auto it = streams_.find(uuid);
    return it == streams_.end() ? nullptr : &it->second;
  }
  bool Ended(const std::string& uuid) const {
    const SubscribeStream* s = Find(uuid);
    return s != nullptr && s->ended();
  }

 private:
  std::map<std::string, SubscribeStream> streams_;
};

// The encoded size of a batch's updates as subscribe_batch_bytes bounds it: the bytes of the
// repeated field in the batch's encoding (each update's tag, length prefix and message).
inline std::size_t EncodedUpdatesBytes(const pb::SubscribeBatch& b) {
  std::size_t n = 0;
  for (const auto& u : b.updates()) {
    std::size_t size = u.ByteSizeLong(), prefix = 1;
    for (std::size_t v = size; v >= 0x80; v >>= 7) ++prefix;
    n += 1 + prefix + size;
  }
  return n;
}

inline std::string BatchText(const pb::SubscribeBatch& b, std::size_t max_updates = 8) {
  std::string text = "[" + std::to_string(b.lower()) + ", " +
                     (b.upper() == kClosedUpper ? std::string("MAX") : std::to_string(b.upper())) +
                     ") " + std::to_string(b.updates_size()) + " updates";
  for (int i = 0; i < b.updates_size() && static_cast<std::size_t>(i) < max_updates; ++i) {
    const auto& u = b.updates(i);
    text += std::string(i == 0 ? ": " : ", ") + RowText(reference::FromProto(u.row())) + "@" +
            std::to_string(u.time()) + (u.diff() >= 0 ? "+" : "") + std::to_string(u.diff());
  }
  if (static_cast<std::size_t>(b.updates_size()) > max_updates) text += ", …";
  return text;
}

// The whole stream, one batch a line (for failure messages), at most `max_batches` of them.
inline std::string StreamText(const SubscribeStream& s, std::size_t max_batches = 40) {
  std::string text;
  for (std::size_t i = 0; i < s.batches.size(); ++i) {
    if (i == max_batches) {
      text += "    … " + std::to_string(s.batches.size() - i) + " more batches\n";
      break;
    }
    text += "    " + BatchText(s.batches[i]) + "\n";
  }
  for (const auto& e : s.ends) {
    text += "    End " + pb::SubscribeEnd::Reason_Name(e.reason()) +
            (e.detail().empty() ? "" : " (" + e.detail() + ")") + "\n";
  }
  if (s.after_end > 0) text += "    + " + std::to_string(s.after_end) + " batches after the End\n";
  return text;
}

// The shape of a stream of Subscribe{as_of, snapshot, up_to}: batches contiguous from as_of (with
// a snapshot) or as_of + 1 (without); a part (upper == lower) followed by more of its interval and
// never last; every update non-zero, at most one per (row, time) in a batch, in time order, at a
// time within its interval and below up_to; no batch beyond up_to; each
// batch's encoded updates within `batch_bytes` unless it carries a single update; exactly one End
// once `ended` (nothing after it), and with reason UP_TO the last upper (the first lower when
// there is no batch) is up_to. Returns the
// problems found (empty: none).
inline std::vector<std::string> CheckStreamShape(const SubscribeStream& s, std::uint64_t as_of,
                                                 bool snapshot, std::optional<std::uint64_t> up_to,
                                                 std::size_t batch_bytes) {
  std::vector<std::string> problems;
  auto problem = [&](std::string what) {
    if (problems.size() < 10) problems.push_back(std::move(what));
  };
  std::uint64_t expected_lower = snapshot ? as_of : as_of + 1;
  // Updates of the parts of the current interval (checked against its upper once it completes).
  std::uint64_t open_part_max_time = 0;
  bool open_parts = false;
  for (std::size_t i = 0; i < s.batches.size(); ++i) {
    const pb::SubscribeBatch& b = s.batches[i];
    const std::string at = "batch #" + std::to_string(i) + " " + BatchText(b, 3) + ": ";
    if (b.lower() != expected_lower) {
      problem(at + "lower " + std::to_string(b.lower()) + ", expected " +
              std::to_string(expected_lower) +
              (i == 0 ? (snapshot ? " (as_of, with a snapshot)" : " (as_of + 1, no snapshot)")
                      : " (the previous upper)"));
    }
    if (b.upper() < b.lower()) problem(at + "upper below lower");
    if (up_to && b.upper() > *up_to) problem(at + "upper beyond up_to " + std::to_string(*up_to));
    if (b.updates_size() > 1 && EncodedUpdatesBytes(b) > batch_bytes) {
      problem(at + std::to_string(EncodedUpdatesBytes(b)) +
              " bytes of updates, beyond subscribe_batch_bytes " + std::to_string(batch_bytes));
    }
    std::map<std::pair<std::uint64_t, Row>, int,
             bool (*)(const std::pair<std::uint64_t, Row>&, const std::pair<std::uint64_t, Row>&)>
        seen([](const std::pair<std::uint64_t, Row>& x, const std::pair<std::uint64_t, Row>& y) {
          return x.first != y.first ? x.first < y.first
                                    : reference::OrderRows(x.second, y.second) < 0;
        });
    std::uint64_t previous_time = 0;
    for (int j = 0; j < b.updates_size(); ++j) {
      const auto& u = b.updates(j);
      const Row row = reference::FromProto(u.row());
      const std::string what = at + "update " + RowText(row) + "@" + std::to_string(u.time()) +
                               " diff " + std::to_string(u.diff()) + ": ";
      if (u.diff() == 0) problem(what + "zero diff");
      if (u.time() < b.lower()) problem(what + "time below lower");
      if (b.upper() > b.lower() && u.time() >= b.upper()) problem(what + "time not below upper");
      if (up_to && u.time() >= *up_to) problem(what + "time not below up_to");
      if (j > 0 && u.time() < previous_time) problem(what + "not in time order");
      previous_time = u.time();
      if (++seen[{u.time(), row}] == 2) problem(what + "a second update of that row and time");
    }
    if (b.upper() == b.lower()) {
      open_parts = true;
      for (const auto& u : b.updates()) open_part_max_time = std::max(open_part_max_time, u.time());
    } else {
      if (open_parts && open_part_max_time >= b.upper()) {
        problem(at + "a part before it had an update at " + std::to_string(open_part_max_time) +
                ", not below the interval's upper");
      }
      open_parts = false;
      open_part_max_time = 0;
    }
    expected_lower = b.upper();
  }
  if (s.ended()) {
    if (s.ends.size() != 1) problem(std::to_string(s.ends.size()) + " SubscribeEnds");
    if (s.after_end > 0) problem(std::to_string(s.after_end) + " batches after the SubscribeEnd");
    const auto& end = s.ends.front();
    if (end.reason() == pb::SubscribeEnd::UP_TO) {
      if (!up_to) {
        problem("ended UP_TO without an up_to");
      } else if (expected_lower != *up_to) {
        // (No batch at all only when there is nothing to deliver: no snapshot, up_to as_of + 1.)
        problem("ended UP_TO with last upper " + std::to_string(expected_lower) +
                (s.batches.empty() ? " (no batch)" : "") + ", expected up_to " +
                std::to_string(*up_to));
      }
    }
    if (end.reason() == pb::SubscribeEnd::CLOSED &&
        (s.batches.empty() || s.batches.back().upper() != kClosedUpper)) {
      problem("ended CLOSED without a last batch to UINT64_MAX");
    }
    if (open_parts && end.reason() != pb::SubscribeEnd::ERROR &&
        end.reason() != pb::SubscribeEnd::CANCELED && end.reason() != pb::SubscribeEnd::DROPPED &&
        end.reason() != pb::SubscribeEnd::TOO_SLOW &&
        end.reason() != pb::SubscribeEnd::SESSION_ENDED) {
      problem("the last batch before the End is a part (upper == lower) of an unfinished interval");
    }
  }
  return problems;
}

// Compares the stream's consolidated contents with `expected` at every t in [as_of, until): the
// sum of the updates with time <= t must be expected(t) with a snapshot, expected(t) -
// expected(as_of) without. `until` is at most the stream's completed upper (the caller caps it for
// a closed index). Returns an explanation of the first time that differs (empty: all agree).
inline std::string CheckStreamContents(
    const SubscribeStream& s, std::uint64_t as_of, bool snapshot, std::uint64_t until,
    const std::function<reference::Multiset(std::uint64_t)>& expected) {
  std::vector<const pb::SubscribeUpdate*> updates;
  for (const auto& b : s.batches) {
    for (const auto& u : b.updates()) updates.push_back(&u);
  }
  std::stable_sort(updates.begin(), updates.end(),
                   [](const auto* a, const auto* b) { return a->time() < b->time(); });
  const reference::Multiset base = snapshot ? reference::Multiset() : expected(as_of);
  reference::Multiset sum;
  std::size_t next = 0;
  for (std::uint64_t t = as_of; t < until; ++t) {
    while (next < updates.size() && updates[next]->time() <= t) {
      reference::AddTo(sum, reference::FromProto(updates[next]->row()), updates[next]->diff());
      ++next;
    }
    reference::Multiset want = expected(t);
    for (const auto& [row, count] : base) reference::AddTo(want, row, -count);
    // What differs: rows whose counts disagree. Rows are compared as datums (-0.0 and 0.0 are one
    // value: which of them an index keeps is not part of its contents).
    reference::Multiset diff = sum;
    for (const auto& [row, count] : want) reference::AddTo(diff, row, -count);
    if (diff.empty()) continue;
    std::string text = "at t=" + std::to_string(t) + (snapshot ? "" : " (changes since as_of)") +
                       ":\n      expected " + reference::ToString(want) + "\n      got      " +
                       reference::ToString(sum) + "\n      got - expected " +
                       reference::ToString(diff);
    return text;
  }
  return "";
}

}  // namespace tandem::testing
