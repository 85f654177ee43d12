// The reading side of one worker (interactive, and solo), all of it: the indexes it reads in
// registry row i — peers that maintenance publishes (interactive: it owns their peer holds, DESIGN
// §4.1) or its own exports (solo) — the one-shot dataflows it renders and their transient indexes
// (DESIGN §8, workers/one_shot.h), the peeks that wait for them (DESIGN §4.1, failures 1 and 2),
// and its part of every subscribe (DESIGN §10, workers/subscriptions.h). It applies a command's
// reading part (Apply) and serves what can be served (Serve); the runtime's loops call both.
//
// Holds (I1): a peek of a followed index holds it at its time while it waits (unless the hold is
// past that time already: then it reads what since allows), and a one-shot dataflow
// holds each import at its as_of from acceptance to drop — both through the Reader, which
// publishes peer hold = min(the controller's frontier, every such hold).
//
// Thread safety: belongs to one worker thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/time.h"
#include "ipc/codec.h"
#include "shm/reader.h"
#include "workers/command_log.h"
#include "workers/expr.h"
#include "workers/one_shot.h"
#include "workers/peek.h"
#include "workers/subscriptions.h"

namespace tandem::workers {

class ReadingSide {
 public:
  // Sends one PeekResponse part, or a Frontiers report of a collection of the one-shot dataflow
  // created by command `seq`, to the command thread (which merges every worker's).
  using Send = std::function<void(const ipc::pb::Response&, std::uint64_t seq)>;
  ReadingSide(std::unique_ptr<shm::Reader> reader, std::uint32_t me, std::uint32_t workers,
              OneShotPool* pool, Send send)  // `pool` outlives this
      : reader_(std::move(reader)),
        me_(me),
        workers_(workers),
        pool_(pool),
        send_(std::move(send)),
        subscriptions_(reader_.get(), [this](const ipc::pb::Response& r) { send_(r, 0); }) {}

  shm::Reader& reader() { return *reader_; }
  // Something waits that the wake channel may not announce (a peek, a one-shot's imports or
  // result): the worker should look again soon.
  bool waiting() const {
    return !peeks_.empty() || !withdrawing_.empty() || !subscriptions_.empty() ||
           std::any_of(one_shots_.begin(), one_shots_.end(),
                       [](const auto& o) { return o.second.state != OneShot::State::kComputed; });
  }

  // Command `seq`, in command order: its part on this worker's reading side, by the methods below
  // (CreateDataflow: CreateOneShot for a one-shot, else Follow; AllowCompaction; Peek: Add;
  // CancelPeek: Cancel; Subscribe; CancelSubscribe: ForgetSubscribe; UpdateConfiguration: the live
  // parameters the command thread parsed of it). Other commands are not the reading side's.
  void Apply(std::uint64_t seq, const LoggedCommand& command);

  // CreateDataflow: follows its index exports (as peers, or as this solo worker's own).
  void Follow(const ipc::pb::DataflowDescription& desc);
  // CreateDataflow of class ONE_SHOT_READ `seq`: holds each import at as_of (one below its hold
  // already is compacted: every peek of the result answers Error), then computes it once the
  // imports are readable at as_of here (Serve).
  void CreateOneShot(std::uint64_t seq, const ipc::pb::DataflowDescription& desc);
  // AllowCompaction of `id`: moves its hold (only rises) — for a peer, never a drop of our own
  // (failure 1). The empty frontier releases it: peeks waiting on it answer Error, and it is
  // forgotten. For a transient index, the empty frontier drops it (and the one-shot dataflow with
  // its last export); another frontier changes nothing. Nothing for an id this worker does not
  // read.
  void AllowCompaction(const std::string& id, Frontier frontier);
  // A peek: waits in this worker until it can be answered. An id that is neither followed nor a
  // peer answers "not found" at once (failure 2).
  void Add(const ipc::pb::Peek& peek);
  // CancelPeek: a peek still waiting answers Canceled; one answered already is left alone.
  void Cancel(const std::string& uuid);
  // Subscribe (DESIGN §10; workers/subscriptions.h): this worker's part of it, from now on.
  void Subscribe(const ipc::pb::Subscribe& subscribe);
  // CancelSubscribe (from the controller, or the command thread's when the subscribe ended): this
  // worker's part stops, without an answer (the merger sends the one end).
  void ForgetSubscribe(const std::string& uuid) { subscriptions_.Forget(uuid); }
  void SetSubscribeBatchBytes(std::size_t bytes) { subscriptions_.SetBatchBytes(bytes); }
  void SetSubscribeBackPressure(std::function<bool()> congested) {
    subscriptions_.SetBackPressure(std::move(congested));
  }
  // max_result_size (bytes): a part of a peek whose rows are larger answers Error instead (the
  // peek's answer then does too). Applies to the peeks served from now on.
  void SetMaxResultSize(std::size_t bytes) { max_result_size_ = bytes; }
  // Moves one-shot dataflows on (submits those whose imports are readable, installs results), then
  // answers every waiting peek that can be answered now: readable (since <= t < upper), or never
  // (t < since, dropped). The others wait for upper to pass t. Then serves one slice of the
  // subscribes (kSubscribeSlice, workers/subscriptions.h). True when subscribe work is left that
  // could be done now: the caller applies its commands and calls again without waiting, so a peek
  // waits behind at most one slice of subscribe work.
  bool Serve();

 private:
  struct Waiting {
    std::string uuid, id;
    Time t = 0;
    bool held = false;  // holds the followed index at t (Reader::HoldRead)
    bool scan = true;
    std::vector<std::string> keys;  // encoded, only those this worker owns
    Mfp mfp;
    ipc::pb::Finishing finishing;  // its limit, offset and order-by are applied here already
  };
  struct OneShot {
    ipc::pb::DataflowDescription desc;
    Time as_of = 0;
    std::vector<shm::FollowedRef> held;  // the imports, held at as_of
    // Why every peek of its exports answers Error (an import compacted past as_of, or dropped).
    std::optional<std::string> error;
    enum class State { kWaiting, kSubmitted, kComputed } state = State::kWaiting;
    std::vector<shm::Snapshot> snapshots;  // kSubmitted: what the compute threads read
    std::map<std::string, TransientPart> parts;
    std::set<std::string> dropped;  // exports dropped so far
  };
  void Answer(const std::string& uuid, const std::function<void(ipc::pb::PeekResponse*)>& fill);
  // Worker me's part of peek `p` from `snap` (readable at p.t).
  void AnswerFrom(const shm::Snapshot& snap, const Waiting& p);
  void ReleaseHold(const Waiting& p);
  void ServeOneShots();
  void ReportOneShot(std::uint64_t seq, const std::string& id, Frontier write);
  // Answers `p` when it reads a transient index; false when it must wait.
  bool ServeTransient(const Waiting& p);

  std::unique_ptr<shm::Reader> reader_;
  std::uint32_t me_, workers_;
  OneShotPool* pool_;
  Send send_;
  std::map<std::string, shm::FollowedRef> indexes_;  // peers (interactive) or own exports (solo)
  std::map<std::uint64_t, OneShot> one_shots_;       // by CreateDataflow seq
  std::map<std::string, std::uint64_t> transient_;   // a live transient index → its one-shot
  // The schema of the rows of every index above (a peek's map/filter/project reads them).
  std::map<std::string, ipc::pb::Schema> schemas_;
  // Dropped while their compute threads may still read the snapshots: kept until they let go.
  std::map<std::uint64_t, OneShot> withdrawing_;
  std::vector<Waiting> peeks_;
  std::size_t max_result_size_ = kDefaultMaxResultSize;
  Subscriptions subscriptions_;  // after reader_: it reads through it
};

}  // namespace tandem::workers
