// The command log (DESIGN §1: "hands each command to every worker thread in the same order"):
// the commands a runtime's workers apply, numbered by sequence, appended by the command thread and
// read by every worker from where it stands. Entries every reader has passed are dropped. An
// UpdateConfiguration carries the live parameters the command thread parsed of it
// (workers/live_parameters.h): no worker parses it again.
//
// Thread safety: every member may be called from any thread (one mutex inside, its guarded
// state annotated). The command thread appends; workers read and wait.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "base/thread_annotations.h"
#include "ipc/codec.h"
#include "workers/live_parameters.h"

namespace tandem::workers {

// An entry of the log: a command as every worker applies it (`*` and `->` reach the command) and,
// for an UpdateConfiguration, its live parameters. Immutable once appended; shared by the readers.
class LoggedCommand {
 public:
  // Implicit: most commands carry nothing else.
  LoggedCommand(std::shared_ptr<const ipc::pb::Command> command,
                std::shared_ptr<const LiveParameters> parameters = nullptr)
      : command_(std::move(command)), parameters_(std::move(parameters)) {}

  const ipc::pb::Command& operator*() const { return *command_; }
  const ipc::pb::Command* operator->() const { return command_.get(); }
  // Set on an UpdateConfiguration, null on every other command.
  const LiveParameters* parameters() const { return parameters_.get(); }

 private:
  std::shared_ptr<const ipc::pb::Command> command_;
  std::shared_ptr<const LiveParameters> parameters_;
};

class CommandLog {
 public:
  using Entry = LoggedCommand;
  using Numbered = std::vector<std::pair<std::uint64_t, Entry>>;

  // Appends `command` as number end(), drops the entries below `trim_below` (every reader has
  // applied them: a stale, lower bound is safe), and wakes the waiters.
  void Append(Entry command, std::uint64_t trim_below) TANDEM_EXCLUDES(mu_);
  // The number the next command gets.
  std::uint64_t end() const TANDEM_EXCLUDES(mu_);
  // Entries [from, to), with their numbers. REQUIRES: nothing in [from, to) was dropped, to <=
  // end(). `to` defaults to end().
  Numbered Read(std::uint64_t from, std::uint64_t to = kToEnd) const TANDEM_EXCLUDES(mu_);
  // Returns once the log has an entry numbered `seq` or later, `stop` is set, Poke was called
  // since pokes() returned `pokes_seen`, or at `deadline`.
  void WaitFor(std::uint64_t seq, std::chrono::steady_clock::time_point deadline,
               const std::atomic<bool>& stop, std::uint64_t pokes_seen = UINT64_MAX) const
      TANDEM_EXCLUDES(mu_);
  // Wakes every waiter (to see `stop`).
  void WakeAll() TANDEM_EXCLUDES(mu_);
  // Wakes every waiter that saw fewer pokes: work arrived that is not a command (a one-shot
  // dataflow's result, workers/one_shot.h). Read pokes() before looking for work, so that none is
  // missed.
  void Poke() TANDEM_EXCLUDES(mu_);
  std::uint64_t pokes() const TANDEM_EXCLUDES(mu_);

  static constexpr std::uint64_t kToEnd = UINT64_MAX;

 private:
  mutable Mutex mu_;
  mutable CondVar cv_;
  std::deque<Entry> entries_ TANDEM_GUARDED_BY(mu_);
  std::uint64_t base_ TANDEM_GUARDED_BY(mu_) = 0;  // number of entries_.front()
  std::uint64_t pokes_ TANDEM_GUARDED_BY(mu_) = 0;
};

}  // namespace tandem::workers
