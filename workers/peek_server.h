// The reading side of one worker (interactive, and solo): the indexes it reads in registry row i
// — peers that maintenance publishes (interactive: it owns their peer holds, DESIGN §4.1) or its
// own exports (solo) — and the peeks that wait for them (DESIGN §4.1, failures 1 and 2).
//
// Thread safety: belongs to one worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/time.h"
#include "ipc/codec.h"
#include "shm/reader.h"
#include "workers/expr.h"
#include "workers/peek.h"

namespace tandem::workers {

class PeekServer {
 public:
  // Sends one PeekResponse part to the command thread (which merges every worker's).
  using SendPart = std::function<void(const ipc::pb::Response&)>;
  PeekServer(std::unique_ptr<shm::Reader> reader, std::uint32_t me, std::uint32_t workers,
             SendPart send)
      : reader_(std::move(reader)), me_(me), workers_(workers), send_(std::move(send)) {}

  shm::Reader& reader() { return *reader_; }
  bool waiting() const { return !peeks_.empty(); }

  // CreateDataflow: follows its index exports (as peers, or as this solo worker's own).
  void Follow(const ipc::pb::DataflowDescription& desc);
  // AllowCompaction of `id`: moves its hold (only rises) — for a peer, never a drop of our own
  // (failure 1). The empty frontier releases it: peeks waiting on it answer Error, and it is
  // forgotten. Nothing for an id this worker does not read.
  void AllowCompaction(const std::string& id, Frontier frontier);
  // A peek: waits in this worker until it can be answered. An id that is neither followed nor a
  // peer answers "not found" at once (failure 2).
  void Add(const ipc::pb::Peek& peek);
  // CancelPeek: a peek still waiting answers Canceled; one answered already is left alone.
  void Cancel(const std::string& uuid);
  // max_result_size (bytes): a part of a peek whose rows are larger answers Error instead (the
  // peek's answer then does too). Applies to the peeks served from now on.
  void SetMaxResultSize(std::size_t bytes) { max_result_size_ = bytes; }
  // Answers every waiting peek that can be answered now: readable (since <= t < upper), or never
  // (t < since, dropped). The others wait for upper to pass t.
  void Serve();

 private:
  struct Waiting {
    std::string uuid, id;
    Time t = 0;
    bool scan = true;
    std::vector<std::string> keys;  // encoded, only those this worker owns
    Mfp mfp;
    ipc::pb::Finishing finishing;  // its limit, offset and order-by are applied here already
  };
  void Answer(const std::string& uuid, const std::function<void(ipc::pb::PeekResponse*)>& fill);

  std::unique_ptr<shm::Reader> reader_;
  std::uint32_t me_, workers_;
  SendPart send_;
  std::map<std::string, shm::FollowedRef> indexes_;  // peers (interactive) or own exports (solo)
  std::vector<Waiting> peeks_;
  std::size_t max_result_size_ = kDefaultMaxResultSize;
};

}  // namespace tandem::workers
