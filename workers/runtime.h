// The runtime process (tandem-worker): one command thread and N worker threads.
//
// The command thread owns the channel to the supervisor. It reconciles after a reconnect
// (InitializationComplete keeps unchanged dataflows, drops the omitted ones, builds the new ones),
// appends the resulting commands to one log that every worker applies in the same order, and
// merges what workers send back: frontiers by minimum over workers, one PeekResponse per uuid
// from all workers' parts, one stream per subscribe (workers/subscribe_merger.h).
//
// Worker threads, by role:
//  * maintenance, solo: lockstep iterations — a start barrier fixes which commands every worker
//    applies this iteration, a tick barrier advances sources, then each rendered dataflow steps
//    (its exchanges are barriers too). Solo also serves its peeks here, between steps.
//  * interactive: free-running; applies commands as they arrive and serves peeks from the
//    registry, sleeping on its row's wake channel when idle. Nothing it does waits for another
//    worker or for maintenance.
#pragma once

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "base/role.h"
#include "ipc/codec.h"
#include "shm/peek_ring.h"
#include "shm/reader_table.h"
#include "shm/segment.h"
#include "workers/command_log.h"
#include "workers/command_sequencer.h"
#include "workers/dataflow.h"
#include "workers/inbox.h"
#include "workers/one_shot.h"
#include "workers/peek.h"
#include "workers/reading_side.h"
#include "workers/reconciler.h"
#include "workers/renderer.h"
#include "workers/response_merger.h"
#include "workers/sources/table_source.h"
#include "workers/subscribe_merger.h"
#include "workers/tables/table.h"

namespace tandem::workers {

struct RuntimeOptions {
  Role role = Role::kSolo;
  std::uint32_t workers = 1;
  std::string segment;
  std::string channel;
  std::string replica_id;
  // max_result_size at start (the supervisor's resolved value); UpdateConfiguration changes it.
  std::size_t max_result_size = kDefaultMaxResultSize;
  // max_one_shot_memory (workers/operators/memory_budget.h): each one-shot's budget.
  std::uint64_t max_one_shot_memory = kDefaultMaxOneShotMemory;
  // subscribe_batch_bytes at start (DESIGN §10); UpdateConfiguration changes it.
  std::size_t subscribe_batch_bytes = kDefaultSubscribeBatchBytes;
  // --data-dir (maintenance, solo): where tables keep their logs (DESIGN §9). Empty: no tables.
  std::string data_dir;
  // --max-table-backlog-bytes: what one table may hold that its index has not taken (Table::Admit).
  std::uint64_t max_table_backlog_bytes = std::uint64_t{64} << 20;
  // --peek-ring-fds R,A (the runtime that serves peeks, when the segment has peek rings): the
  // eventfds the supervisor made for the request ring's and the answer ring's wake-ups (DESIGN
  // §14, shm/peek_ring.h). -1: no fast path; everything takes the channel.
  int peek_request_fd = -1;
  int peek_answer_fd = -1;
  // --reader-table-fd (maintenance, solo): the reader table the supervisor handed down. -1: taken
  // from the segment's reader-table socket instead.
  int reader_table_fd = -1;
};

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
  void Enqueue(ipc::pb::Command command);
  void AppendToLog(std::shared_ptr<const ipc::pb::Command> command);
  // Handles the workers' messages waiting in the inboxes — answers first, then at most
  // kSubscribeMessagesPerDrain subscribe messages; false when there were none.
  bool DrainInbox();
  void OnWorkerMessage(Inbox::Message& message);
  void SendResponse(const ipc::pb::Response& response);

  // Worker threads.
  void WorkerMain(std::uint32_t me);
  void LockstepLoop(Worker& w);
  void InteractiveLoop(Worker& w);
  void Apply(Worker& w, std::uint64_t seq, const ipc::pb::Command& command);
  static constexpr std::uint32_t kNotAWorker = UINT32_MAX;  // the sender of a table answer
  // Into the command thread's inbox, from any thread (a worker, the table writer, the barrier
  // completions).
  void SendToCommandThread(const ipc::pb::Response& r, std::uint32_t worker, std::uint64_t seq = 0);
  // An answer from a barrier completion step (a write to a table that is not here).
  void SendFromCompletion(const ipc::pb::Response& r);
  void StartCompletion() noexcept;
  void TickCompletion() noexcept;

  RuntimeOptions options_;
  std::unique_ptr<shm::Segment> segment_;
  // The replica's reader table (maintenance and solo; nullptr without one): outlives the
  // publishers, which read local readers' announcements in it.
  std::unique_ptr<shm::ReaderTable> reader_table_;
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

  // Lockstep state, written only in barrier completions.
  // Commands [.., horizon_) are applied this iteration. Written only in StartCompletion (every
  // lockstep worker waits), read by workers after the barrier and by the command thread (trim).
  std::atomic<std::uint64_t> horizon_{0};
  // Ticks a generator may advance per step, sized so that a step takes about kStepBudget of work
  // (scaled down after a longer step, doubled after one under half of it). Solo serves its peeks
  // between steps, so this bounds how long a peek waits behind maintenance.
  Time step_ticks_ = 1;
  std::chrono::steady_clock::time_point next_wake_;
  std::map<std::uint64_t, std::unique_ptr<DataflowShared>> shared_;  // by CreateDataflow seq
  std::unique_ptr<Exchange> exchange_;
  struct Completion {
    Runtime* runtime;
    void (Runtime::*step)() noexcept;
    void operator()() noexcept { (runtime->*step)(); }
  };
  std::unique_ptr<std::barrier<Completion>> start_barrier_, tick_barrier_;

  // Tables (maintenance, solo with --data-dir): the group-commit writer, and the live table
  // sources by id (written only in StartCompletion).
  std::unique_ptr<TableWriter> tables_;
  // The live tables by id, and the dataflow each belongs to (is it paused?).
  struct LiveTable {
    TableSource* source;
    const DataflowShared* flow;
  };
  std::map<std::string, LiveTable> live_tables_;
  // Tables refusing writes now (their backlog is full): told once when it starts and ends.
  std::set<std::string> refusing_tables_;
  // Hands a WriteTable to the table writer, or answers it with an error when the table's backlog
  // is full (Table::Admit). In the start completion, in command order.
  void SubmitWrite(const ipc::pb::WriteTable& write, const LiveTable& live);

  std::unique_ptr<OneShotPool> one_shots_;  // solo, interactive; outlives the peek servers
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
