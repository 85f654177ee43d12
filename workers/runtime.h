// The runtime process (tandem-worker): one command thread and N worker threads, with the sides
// its role has — the maintained side (workers/maintained_side.h: maintenance, solo) and a reading
// side per worker (workers/reading_side.h: interactive, solo).
//
// The command thread owns the channel to the supervisor. It reconciles after a reconnect
// (InitializationComplete keeps unchanged dataflows, drops the omitted ones, builds the new ones),
// appends the resulting commands to one log that every worker applies in the same order, and
// merges what workers send back: frontiers by minimum over workers, one PeekResponse per uuid
// from all workers' parts, one stream per subscribe (workers/subscribe_merger.h).
//
// Worker threads, by role:
//  * maintenance, solo: lockstep iterations of the maintained side — a start barrier fixes which
//    commands every worker applies this iteration, a tick barrier advances sources, then each
//    rendered dataflow steps (its exchanges are barriers too). Solo's reading side serves its
//    peeks here, between steps.
//  * interactive: free-running; applies commands as they arrive and serves peeks from the
//    registry, sleeping on its row's wake channel when idle. Nothing it does waits for another
//    worker or for maintenance.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "ipc/codec.h"
#include "shm/peek_ring.h"
#include "shm/segment.h"
#include "workers/command_log.h"
#include "workers/command_sequencer.h"
#include "workers/inbox.h"
#include "workers/maintained_side.h"
#include "workers/one_shot.h"
#include "workers/reading_side.h"
#include "workers/reconciler.h"
#include "workers/response_merger.h"
#include "workers/runtime_options.h"
#include "workers/subscribe_merger.h"

namespace tandem::workers {

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options);
  ~Runtime();
  // Attaches, reports ready, serves until the supervisor goes away. Returns the exit code.
  int Run();

 private:
  struct Worker;

  // Attaches every worker thread to its registry row (they then run WorkerMain).
  void StartWorkers();
  [[noreturn]] void Serve();
  // Raises this runtime's progress counter in the segment header when every worker has moved on
  // since the last raise — turned its loop, or finished a unit of work within a turn (a message to
  // the command thread: a peek's part, a subscribe's part) — so that a worker busy with much work
  // counts as alive and only one that does nothing at all (stopped, wedged) does not (the
  // supervisor's stall watch reads it; shm/layout.h RuntimeEntry).
  void ReportProgress();

  // Command thread.
  // Command number `seq` from the supervisor, from the channel or the peek request ring (`bytes`:
  // its encoding): applied (OnCommand) once every lower number was.
  void OnSequenced(std::uint64_t seq, std::string_view bytes);
  // Takes what waits in the peek request ring (at most `limit`); false when nothing did.
  bool DrainPeekRing(int limit);
  // A command from the supervisor, in order: through the reconciler, then Enqueue.
  void OnCommand(ipc::pb::Command command);
  // Keeps what the workers need to apply (tracked by the reconciler) and appends it to the log.
  // An UpdateConfiguration is parsed here, once: the command thread applies its share and the
  // workers get the rest with the command (workers/live_parameters.h).
  void Enqueue(ipc::pb::Command command);
  void AppendToLog(LoggedCommand command);
  // Handles the workers' messages waiting in the inboxes — answers first, then at most
  // kSubscribeMessagesPerDrain subscribe messages; false when there were none.
  bool DrainInbox();
  void OnWorkerMessage(Inbox::Message& message);
  void SendResponse(const ipc::pb::Response& response);

  // Worker threads.
  void WorkerMain(std::uint32_t me);
  void LockstepLoop(Worker& w);
  void InteractiveLoop(Worker& w);
  // Command `seq` on each side worker `w` has: the maintained side's part first (solo's reading
  // side follows the indexes its renderer has just published).
  void Apply(Worker& w, std::uint64_t seq, const LoggedCommand& command);
  // Tells reading worker `worker` it has work, where it sleeps: on its row's wake channel
  // (interactive, free-running) or on the command log (solo, between lockstep iterations).
  void WakeReadingWorker(std::uint32_t worker);
  static constexpr std::uint32_t kNotAWorker = UINT32_MAX;  // the sender of a table answer
  // Into the command thread's inbox, from any thread (a worker, the table writer, the barrier
  // completions).
  void SendToCommandThread(const ipc::pb::Response& r, std::uint32_t worker, std::uint64_t seq = 0);

  RuntimeOptions options_;
  std::unique_ptr<shm::Segment> segment_;
  std::vector<std::uint64_t> reported_progress_;  // each worker's `progress` at the last raise
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> channel_;
  // The peek fast path (DESIGN §14), when the supervisor gave this runtime its rings' eventfds:
  // Peek and CancelPeek arrive on `peek_requests_` too, PeekResponses leave on `peek_answers_`
  // when they fit (the channel otherwise). The command thread's.
  std::unique_ptr<shm::RingReader> peek_requests_;
  std::unique_ptr<shm::RingWriter> peek_answers_;
  CommandSequencer sequencer_;  // the command thread's: both paths into one order
  // An inbox of messages to the command thread, and what DrainInbox took from it (the command
  // thread's), handled up to `at`.
  struct Lane {
    Inbox inbox;
    std::vector<Inbox::Message> taken;
    std::size_t at = 0;
  };
  // The workers' (and table writer's, completions') messages to the command thread in two lanes,
  // each in the order sent: subscribe parts and ends in `subscribes_`, everything else (peek parts,
  // frontiers, write answers) in `answers_`. No order holds between the lanes: a peek's answer
  // never waits behind a backlog of subscribe parts (at most kSubscribeMessagesPerDrain of them).
  Lane answers_, subscribes_;
  // Handles at most `limit` of `lane`'s messages; false when none waited.
  bool DrainLane(Lane& lane, std::size_t limit);

  CommandLog log_;  // shared with workers
  std::atomic<bool> stop_{false};

  // The maintained side (maintenance, solo; nullptr in interactive). Made before the workers start
  // and never replaced; it uses segment_ and log_, declared before it.
  std::unique_ptr<MaintainedSide> maintained_;
  std::unique_ptr<OneShotPool> one_shots_;  // solo, interactive; outlives the reading sides
  // Bytes of subscribe parts the workers sent that the command thread has not merged yet: above
  // kMaxSubscribeBytesInFlight the workers serve no subscribe until it drains (back-pressure: a
  // runtime whose subscribers want more than its command thread and the supervisor can carry
  // falls behind in larger intervals instead of growing its inbox without bound).
  std::atomic<std::int64_t> subscribe_bytes_in_flight_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;

  // Command-thread state.
  Reconciler reconciler_;
  std::uint64_t next_seq_ = 0;  // of the next command appended to the log
  ResponseMerger merger_;
  SubscribeMerger subscribe_merger_;
};

}  // namespace tandem::workers
