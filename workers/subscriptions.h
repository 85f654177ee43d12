// The subscribes one reading worker serves (DESIGN §10): worker i's part of each subscribe, read
// in place from registry row i — the same slots its ReadingSide follows — and sent to the command
// thread as parts (workers/subscribe_merger.h merges the N workers' parts into one stream).
//
// A part is a SubscribeBatch whose `upper` is this worker's progress: every update of its row's
// part of the index at a time < upper has been sent (upper == lower: a bounded piece, more of the
// same interval follows), or a SubscribeEnd (this worker's part cannot go on: not found, as_of
// compacted, dropped, a data error). A worker whose progress reaches up_to, or the empty frontier
// (the index closed), sends that last part and forgets the subscribe on its own; the merger ends
// it once every worker is there.
//
// Slices. Serve does one bounded slice of work (SubscribeSlice) and returns, so that the worker
// applies its commands and answers its peeks between slices: a peek waits behind at most one
// slice, however many subscribes there are. Subscribes are visited round-robin from a cursor kept
// across slices, so each is visited once per round and none waits for the others to be done. A
// round takes one snapshot per slot and one read per slot — every update from the lowest progress
// of the slot's subscribes to that snapshot's upper, consolidated and decoded once — and each
// subscribe sends its own interval of it. An interval whose parts do not fit in the slice is
// continued from where it stopped on the subscribe's next visit: its parts (upper == lower) go out
// in order and its last part (the interval's upper) after all of them, and nothing else of that
// subscribe comes between, so each subscribe's parts stay contiguous whatever the slicing.
//
// Holds (I1): from Add to its end, a subscribe holds its index in the peer hold at
// max(as_of, progress - 1) (shm::Reader::HoldRead, then MoveRead as it progresses): every time at
// or after its progress stays exact, and compaction only advances what it sent already to times
// below its progress (workers/sources/index_import.h explains the -1). Every end path releases it.
// A read from the lowest progress of a slot's subscribes is exact for each of them from its own
// progress on: each holds the slot there.
//
// Thread safety: belongs to one worker thread (the one that owns the Reader).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "ipc/codec.h"
#include "shm/reader.h"

namespace tandem::workers {

// subscribe_batch_bytes (DESIGN §10): no SubscribeBatch carries more encoded updates than this
// (an interval with more is sent in parts of at most this; a single larger update goes alone).
inline constexpr char kSubscribeBatchBytes[] = "subscribe_batch_bytes";
inline constexpr std::size_t kDefaultSubscribeBatchBytes = 1u << 20;
inline constexpr std::size_t kMinSubscribeBatchBytes = 4u << 10;
// Room for the batch's other fields and one more update within ipc::kMaxMessageBytes.
inline constexpr std::size_t kMaxSubscribeBatchBytes = ipc::kMaxMessageBytes - (1u << 20);
// The value of subscribe_batch_bytes when `name` is it and `value` a valid one.
std::optional<std::size_t> ParseSubscribeBatchBytes(std::string_view name, std::string_view value);

// The bytes `update` adds to a SubscribeBatch (as a repeated field, tag and length included).
std::size_t EncodedUpdateBytes(const ipc::pb::SubscribeUpdate& update);

// Sends the updates [first, last) of the interval [lower, upper) of subscribe `uuid` as
// SubscribeBatches of at most `batch_bytes` of updates: all but the last with upper == lower (more
// of the interval follows), the last — possibly without updates — with `upper`. Moves the updates
// out of a mutable range, copies them from a const one.
template <typename It, typename Send>
void SendInBatches(const std::string& uuid, Time lower, std::uint64_t upper, It first, It last,
                   std::size_t batch_bytes, const Send& send) {
  ipc::pb::Response r;
  ipc::pb::SubscribeBatch* batch = r.mutable_subscribe_batch();
  batch->set_uuid(uuid);
  batch->set_lower(lower);
  batch->set_upper(lower);
  std::size_t bytes = 0;
  for (; first != last; ++first) {
    const std::size_t size = EncodedUpdateBytes(*first);
    if (bytes > 0 && bytes + size > batch_bytes) {
      send(r);
      batch->clear_updates();
      bytes = 0;
    }
    *batch->add_updates() = std::move(*first);
    bytes += size;
  }
  batch->set_upper(upper);
  send(r);
}

// What one Serve may do before it returns: it stops at `deadline` or after `max_messages` parts
// and ends, whichever comes first — once it has visited one subscribe (and sent at least one part,
// when that one has something to send), so that subscribes progress however small the slice.
struct SubscribeSlice {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::size_t max_messages = SIZE_MAX;
};
// A reading worker's slice of subscribe work per turn of its loop (workers/runtime.cc): how long a
// peek or a command waits behind subscribes, plus at most one part of subscribe_batch_bytes or one
// read of a slot.
inline constexpr std::chrono::microseconds kSubscribeSlice{1000};
// A round's snapshots and reads are let go once it is this old: the subscribes it has not visited
// yet are served from new ones. A round spread over many slices of a busy worker holds neither an
// old batch list (its retired batches are freed only after) nor an old upper for longer.
inline constexpr std::chrono::milliseconds kMaxSubscribeRound{100};

class Subscriptions {
 public:
  // Sends one part (a SubscribeBatch or a SubscribeEnd) to the command thread.
  using Send = std::function<void(const ipc::pb::Response&)>;
  Subscriptions(shm::Reader* reader, Send send) : reader_(reader), send_(std::move(send)) {}

  bool empty() const { return subs_.empty(); }
  void SetBatchBytes(std::size_t bytes) { batch_bytes_ = bytes; }
  // While `congested()` says so, Serve sends nothing (the parts sent earlier are not merged yet):
  // the subscribes catch up later, in larger intervals. Holds and ends are not affected. Looked at
  // between parts too: a slice stops when it becomes true.
  void SetBackPressure(std::function<bool()> congested) { congested_ = std::move(congested); }

  // A Subscribe (as_of set: the supervisor fills "latest" in) of `ref`, the followed slot of its
  // index — nullptr when this worker reads no such index: its part ends ERROR "not found".
  void Add(const ipc::pb::Subscribe& subscribe, const shm::FollowedRef* ref);
  // The subscribe ended elsewhere (canceled, another worker's part ended): forget it, release its
  // hold, send nothing. Unknown uuids are fine.
  void Forget(const std::string& uuid);
  // The index `id` is dropped (its followed slot is about to be released): its subscribes' parts
  // end DROPPED, and no snapshot of any slot stays open here.
  void OnDropped(const std::string& id);
  // One slice: visits the subscribes round-robin from where the last slice stopped, each sending
  // what its index has beyond its progress (or the rest of an interval a slice cut), until `slice`
  // is spent or the round is complete. True when work is left that could be done now (the slice
  // ran out; an interval is only partly sent): call again soon, without waiting for the index to
  // change. False when nothing is left until it does, and while back-pressure holds.
  bool Serve(const SubscribeSlice& slice = {});

 private:
  // Every update of one slot at a time in [from, upper), consolidated per (row, time), in time
  // order, decoded once for every subscribe whose interval lies in it (a hundred subscribers of one
  // index mostly are): the scan of the index's batches and the rows' decoding are not repeated
  // per subscriber. Immutable once made; shared by the round and the intervals sent from it.
  struct Read {
    Time from = 0;
    Frontier upper;
    std::vector<ipc::pb::SubscribeUpdate> updates;
    std::vector<std::size_t> bytes;  // EncodedUpdateBytes of each update
    std::size_t largest = 0;         // the largest of `bytes`
    // What ends a subscribe whose interval holds `time`: an error row of the index (`what` its
    // message), in (time, message) order, then the counts beyond int64 (`count`), in time order.
    // Its first error row in the interval ends it, else its first count beyond int64.
    struct Failure {
      Time time;
      bool count;
      std::string what;
    };
    std::vector<Failure> failures;
  };
  // The rest of an interval a slice cut: updates [at, end) of `read`, then the interval's upper.
  struct Sending {
    std::shared_ptr<const Read> read;
    std::size_t at = 0, end = 0;
    Frontier upper;
  };
  struct Sub {
    std::string uuid, id;
    shm::FollowedRef ref;
    Time as_of = 0;
    bool snapshot = false;
    std::optional<Time> up_to;
    bool started = false;  // the snapshot (or, without one, the check at as_of) is read
    // Started: every update at a time < next is sent. While `sending`: the interval's lower.
    Time next = 0;
    Time held = 0;  // the read hold's time
    // An interval partly sent: its rest goes out before anything else of this subscribe.
    std::optional<Sending> sending;
  };
  // One consolidated change: an encoded row (index value) at a time.
  struct Change {
    std::string_view val;
    Time time;
    std::int64_t diff;
  };
  // A round: what its visits share. Snapshots and reads by slot; one each per round (a read is
  // widened only for a subscribe below its `from`, added since it was made).
  struct Turn {
    // User-provided: clang cannot use the member initializers of a class nested in one that is
    // still being defined, and would find Turn not default-constructible (optional::emplace).
    Turn() {}  // NOLINT(modernize-use-equals-default)
    std::chrono::steady_clock::time_point started;
    std::size_t left = 0;  // visits left in this round
    std::map<std::uint32_t, shm::Snapshot> snapshots;
    std::map<std::uint32_t, std::shared_ptr<const Read>> reads;
  };
  enum class Visit {
    kKept,  // goes on (nothing to send now, or its interval is sent)
    kDone,  // its part is over (ended, or reached up_to / the empty frontier): forget it
    kCut,   // the slice ran out in the middle of its interval
  };
  Visit ServeOne(Sub& s, Turn& turn, const SubscribeSlice& slice);
  // The round's read of `s`'s slot, from `s.next` at the latest (from the lowest progress of the
  // slot's subscribes when it is made).
  std::shared_ptr<const Read> ReadFor(Turn& turn, const Sub& s, const shm::Snapshot& snap);
  // Sends parts of `s.sending` until its last one is sent (true) or the slice is spent (false:
  // the rest waits for the next visit). At least one part.
  bool SendSome(Sub& s, const SubscribeSlice& slice);
  // After an interval's last part: moves `s` on to its upper and its hold with it; true when its
  // part is complete (up_to or the empty frontier reached: the hold is released).
  bool Finish(Sub& s);
  // Ends this worker's part: releases the hold and sends SubscribeEnd{reason, detail}.
  void End(Sub& s, ipc::pb::SubscribeEnd::Reason reason, const std::string& detail);
  void Emit(const ipc::pb::Response& r);
  bool Spent(const SubscribeSlice& slice) const;
  bool Congested() const { return congested_ && congested_(); }
  // Fills read->bytes and read->largest from its updates.
  static void Measure(Read* read);
  // True when one of updates [lo, hi) of `read` alone is more than a message of `s` can carry.
  static bool HasOversizeRow(const Sub& s, const Read& read, std::size_t lo, std::size_t hi);

  shm::Reader* reader_;
  Send send_;
  std::size_t batch_bytes_ = kDefaultSubscribeBatchBytes;
  std::function<bool()> congested_;
  std::map<std::string, Sub> subs_;  // by uuid
  std::string cursor_;  // the next visit: the first subscribe at or after this uuid (wrapping)
  std::optional<Turn> turn_;  // the round under way
  std::size_t sent_ = 0;      // messages sent in this slice
};

}  // namespace tandem::workers
