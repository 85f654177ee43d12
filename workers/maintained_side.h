// The maintained side of a runtime (maintenance, solo; DESIGN §1): what its N lockstep workers
// share — the Maintained dataflows' shared state and sources, the tables, the exchange, the two
// barriers of an iteration and the step budget — and each worker's Renderer (workers/renderer.h:
// its part of every dataflow, its registry row's publisher).
//
// Lockstep worker i's iteration (Runtime::LockstepLoop), every worker in the same one:
//   Start()           the start barrier. Its completion fixes the horizon — the commands every
//                     worker applies this iteration — and, before any worker applies them, hands
//                     each in command order to what it shapes (TakeInOrder): a Maintained
//                     CreateDataflow builds the dataflow's shared state and sources, a drop lets
//                     the dataflow's sources go with its last index, a WriteTable goes to its
//                     table.
//   Apply(i, …)       each of those commands: worker i renders its part of a dataflow, or compacts.
//   Step(i)           the tick barrier. Its completion sizes the step (kStepBudget) and prepares
//                     every dataflow's tick (its sources advance); then worker i steps each
//                     dataflow (whose exchanges are barriers too).
//   ReportFrontiers(i) what moved, to the command thread.
//
// Thread safety: the state the workers share (the dataflows' DataflowShared, the tables, the
// horizon, the step budget, next_wake) is written only in the barrier completions, while every
// lockstep worker waits, and read by workers between barriers; horizon() by the command thread too
// (it trims the command log: a stale value is a lower bound). Renderer i belongs to worker i.
#pragma once

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ipc/codec.h"
#include "shm/reader_table.h"
#include "shm/segment.h"
#include "workers/command_log.h"
#include "workers/dataflow.h"
#include "workers/exchange.h"
#include "workers/live_tables.h"
#include "workers/renderer.h"
#include "workers/runtime_options.h"

namespace tandem::workers {

class MaintainedSide {
 public:
  // Opens the replica's reader table (DESIGN §11): nullptr, after logging why, when it cannot — a
  // publisher honours local readers' announcements in it, and without them could free a batch
  // under a reader. `answer` sends a table's WriteResponse to the command thread; `log` and
  // `segment` outlive the side.
  static std::unique_ptr<MaintainedSide> Open(const RuntimeOptions& options, shm::Segment* segment,
                                              CommandLog* log, LiveTables::Answer answer);
  ~MaintainedSide();
  MaintainedSide(const MaintainedSide&) = delete;
  MaintainedSide& operator=(const MaintainedSide&) = delete;

  // --data-dir: opens it for the tables (LiveTables::Open). False, after logging why, when it
  // cannot. Before the workers start.
  bool OpenTables();
  // On worker thread i, before it runs: takes the publishing side of registry row i and makes
  // worker i's Renderer, which reports its frontiers through `send`.
  void Attach(std::uint32_t me, Renderer::SendFrontier send);

  // The start barrier; returns the horizon: this iteration applies the commands below it.
  std::uint64_t Start();
  // Worker `me`'s part of command `seq` (one of this iteration's, in order).
  void Apply(std::uint32_t me, std::uint64_t seq, const ipc::pb::Command& command);
  // The tick barrier, then one step of worker `me`'s part of every dataflow (timed: StepStats).
  void Step(std::uint32_t me);
  void ReportFrontiers(std::uint32_t me);
  // When a lockstep worker should look for work again at the latest (set by the tick completion).
  std::chrono::steady_clock::time_point next_wake() const { return next_wake_; }
  // Every command below it was handed to the completion's TakeInOrder (it only rises).
  std::uint64_t horizon() const { return horizon_.load(); }

 private:
  // Worker i's part of the side.
  struct Worker {
    std::unique_ptr<Renderer> renderer;
    std::chrono::steady_clock::duration step_work{};  // the last step's duration
  };
  struct Completion {
    MaintainedSide* side;
    void (MaintainedSide::*step)() noexcept;
    void operator()() noexcept { (side->*step)(); }
  };

  MaintainedSide(const RuntimeOptions& options, shm::Segment* segment, CommandLog* log,
                 std::unique_ptr<shm::ReaderTable> reader_table, LiveTables::Answer answer);

  // The start barrier's completion: forgets the dataflows dropped last iteration, moves the
  // horizon to the log's end and hands the commands it passed to TakeInOrder.
  void StartCompletion() noexcept;
  // The tick barrier's completion: sizes the step from the last one, prepares every dataflow's
  // tick and when to wake next.
  void TickCompletion() noexcept;

  // What command `seq` shapes before any worker applies it: called in the start completion, in
  // command order.
  void TakeInOrder(std::uint64_t seq, const ipc::pb::Command& command,
                   std::chrono::steady_clock::time_point now);
  // A Maintained CreateDataflow: its shared state and its sources (a table's becomes live).
  void Build(std::uint64_t seq, const ipc::pb::DataflowDescription& desc,
             std::chrono::steady_clock::time_point now);
  // A drop of index `id`: a dataflow whose last index it was has its sources dropped now, in
  // command order — a table's log moves away before a table created later (this same iteration,
  // maybe) opens its own.
  void Drop(const std::string& id);

  const RuntimeOptions options_;
  shm::Segment* const segment_;
  CommandLog& log_;
  // The replica's reader table: outlives the publishers, which read local readers'
  // announcements in it.
  std::unique_ptr<shm::ReaderTable> reader_table_;
  std::unique_ptr<Exchange> exchange_;
  std::unique_ptr<std::barrier<Completion>> start_barrier_, tick_barrier_;
  // Commands [.., horizon_) are applied this iteration. Written only in StartCompletion.
  std::atomic<std::uint64_t> horizon_{0};
  // Ticks a generator may advance per step, sized so that a step takes about kStepBudget of work
  // (scaled down after a longer step, doubled after one under half of it). Solo serves its peeks
  // between steps, so this bounds how long a peek waits behind maintenance.
  Time step_ticks_ = 1;
  std::chrono::steady_clock::time_point next_wake_;
  std::map<std::uint64_t, std::unique_ptr<DataflowShared>> dataflows_;  // by CreateDataflow seq
  LiveTables tables_;  // after dataflows_: its writer stops before their table sources go
  std::vector<std::unique_ptr<Worker>> workers_;  // last: the renderers go first
};

}  // namespace tandem::workers
