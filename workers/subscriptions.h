// The subscribes one reading worker serves (DESIGN §10): worker i's part of each subscribe, read
// in place from registry row i — the same slots its PeekServer follows — and sent to the command
// thread as parts (workers/subscribe_merger.h merges the N workers' parts into one stream).
//
// A part is a SubscribeBatch whose `upper` is this worker's progress: every update of its row's
// part of the index at a time < upper has been sent (upper == lower: a bounded piece, more of the
// same interval follows), or a SubscribeEnd (this worker's part cannot go on: not found, as_of
// compacted, dropped, a data error). A worker whose progress reaches up_to, or the empty frontier
// (the index closed), sends that last part and forgets the subscribe on its own; the merger ends
// it once every worker is there.
//
// Holds (I1): from Add to its end, a subscribe holds its index in the peer hold at
// max(as_of, progress - 1) (shm::Reader::HoldRead, then MoveRead as it progresses): every time at
// or after its progress stays exact, and compaction only advances what it sent already to times
// below its progress (workers/sources/index_import.h explains the -1). Every end path releases it.
//
// Thread safety: belongs to one worker thread (the one that owns the Reader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
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

class Subscriptions {
 public:
  // Sends one part (a SubscribeBatch or a SubscribeEnd) to the command thread.
  using Send = std::function<void(const ipc::pb::Response&)>;
  Subscriptions(shm::Reader* reader, Send send) : reader_(reader), send_(std::move(send)) {}

  bool empty() const { return subs_.empty(); }
  void SetBatchBytes(std::size_t bytes) { batch_bytes_ = bytes; }
  // While `congested()` says so, Serve sends nothing (the parts sent earlier are not merged yet):
  // the subscribes catch up later, in larger intervals. Holds and ends are not affected.
  void SetBackPressure(std::function<bool()> congested) { congested_ = std::move(congested); }

  // A Subscribe (as_of set: the supervisor fills "latest" in) of `ref`, the followed slot of its
  // index — nullptr when this worker reads no such index: its part ends ERROR "not found".
  void Add(const ipc::pb::Subscribe& subscribe, const shm::FollowedRef* ref);
  // The subscribe ended elsewhere (canceled, another worker's part ended): forget it, release its
  // hold, send nothing. Unknown uuids are fine.
  void Forget(const std::string& uuid);
  // The index `id` is dropped (its followed slot is about to be released): its subscribes' parts
  // end DROPPED.
  void OnDropped(const std::string& id);
  // Sends what every subscribe's index has beyond its progress.
  void Serve();

 private:
  struct Sub {
    std::string uuid, id;
    shm::FollowedRef ref;
    Time as_of = 0;
    bool snapshot = false;
    std::optional<Time> up_to;
    bool started = false;  // the snapshot (or, without one, the check at as_of) is sent
    Time next = 0;         // started: every update at a time < next is sent
    Time held = 0;         // the read hold's time
  };
  // One consolidated change: an encoded row (index value) at a time.
  struct Change {
    std::string_view val;
    Time time;
    std::int64_t diff;
  };
  // What one slot holds in [from, upper), consolidated and converted once per Serve for every
  // subscribe at that progress (a hundred subscribers of one index mostly are): the scan of the
  // index's batches and the rows' decoding are not repeated per subscriber.
  struct Read {
    std::vector<ipc::pb::SubscribeUpdate> updates;
    std::optional<std::string> error;
  };
  using ReadKey = std::tuple<std::uint32_t, Time, std::uint64_t>;  // slot, from, upper (raw)
  struct Turn {
    std::map<std::uint32_t, shm::Snapshot> snapshots;  // one per slot per Serve
    std::map<ReadKey, Read> reads;
  };
  // Serves `s`; true when its part is over (ended, or reached up_to / the empty frontier).
  bool ServeOne(Sub& s, Turn& turn);
  // Ends this worker's part: releases the hold and sends SubscribeEnd{reason, detail}.
  void End(Sub& s, ipc::pb::SubscribeEnd::Reason reason, const std::string& detail);
  // Sends `updates` (time order) as parts of at most batch_bytes_: all but the last with
  // upper == lower, the last with `upper`. False (nothing sent) when one update alone is more
  // than a message can carry.
  bool SendParts(const Sub& s, Time lower, Frontier upper,
                 const std::vector<ipc::pb::SubscribeUpdate>& updates);

  shm::Reader* reader_;
  Send send_;
  std::size_t batch_bytes_ = kDefaultSubscribeBatchBytes;
  std::function<bool()> congested_;
  std::map<std::string, Sub> subs_;  // by uuid
};

}  // namespace tandem::workers
