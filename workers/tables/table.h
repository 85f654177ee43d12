// Tables (DESIGN §9): sources whose updates arrive as WriteTable commands, made durable in the
// table's log in --data-dir before they are acknowledged.
//
// A Table is one table of a maintenance (or solo) runtime: its log, its clock, and the writes the
// group commit made durable that its source has not taken yet. The TableWriter is the runtime's
// one group-commit thread for all its tables:
//
//   LiveTables::Route ──Submit──▶ queue ──▶ writer thread: take every queued write, give each
//   table's writes one time T = max(now_ms, upper), append them to its log, fdatasync, then
//   publish them to the Table (upper = T + 1) and answer WriteResponse{uuid, T}
//   TableSource::Advance (tick completion) ──Take──▶ the published writes and the upper
//
// Invariants:
//   * W1 (DESIGN §9): a write is answered with a time only after it is durable in the log; a
//     write whose client uuid is already in the log (a retry, even across a restart) is answered
//     with its first time and not appended again.
//   * The upper never passes a time a durable write could still get: while a group commit at T
//     is in flight, the upper stays <= T; a commit's time is never below the upper.
//   * A write is checked against the table's definition before it is appended
//     (ipc::CheckTableUpdates): one the supervisor validated against an earlier definition of its
//     id (a writer's, while a controller replays) is answered with an error, never logged.
//   * An append that finds the disk full (the log cuts the partial record off and stays usable)
//     answers that write with an error; it is not applied, and a retry may succeed.
//   * Any other failed append, or a failed fdatasync, aborts the runtime (shared fate): after a
//     failed fsync the kernel may have dropped the dirty pages, so nothing written since the last
//     good sync can be promised; the restarted replica replays what the log holds, and the writers
//     retry what was not answered.
//
// Thread safety: Open and Drop are called in the start barrier's completion (one thread: the
// maintained side's, workers/maintained_side.h); Submit by the same (workers/live_tables.h); Take
// by the tick completion; the writer thread does the rest. A Table's published state is guarded by
// its mutex; the queue by the writer's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/thread_annotations.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "workers/tables/data_dir.h"
#include "workers/tables/table_log.h"

namespace tandem::workers {

class Table {
 public:
  Table(const ipc::pb::SourceImport& import, std::unique_ptr<TableLog> log,
        std::vector<ipc::pb::TableLogWrite> replayed, std::string broken);

  const std::string& id() const { return id_; }
  const std::vector<std::uint32_t>& upsert_key() const { return upsert_key_; }
  std::chrono::milliseconds tick() const { return tick_; }
  // Why the table cannot be read or written (its log could not be opened); empty while it can.
  const std::string& broken() const { return broken_; }

  struct Taken {
    std::vector<ipc::pb::TableLogWrite> writes;  // durable, in commit order
    Time upper = 0;  // every write below it is durable and has been taken
  };
  // The writes made durable since the last Take, and the upper: with no commit in flight, once a
  // tick has passed since it last did, the upper first follows the clock to `now_ms`.
  Taken Take(Time now_ms) TANDEM_EXCLUDES(mu_);

  // The backlog: bytes of writes admitted and not taken yet (queued, committing, or durable and
  // waiting for Take). Admits a write of `bytes` unless something is held and it would pass
  // `bound` (so one write larger than the bound is never refused for good).
  bool Admit(std::uint64_t bytes, std::uint64_t bound) TANDEM_EXCLUDES(mu_);
  std::uint64_t backlog() const TANDEM_EXCLUDES(mu_);

 private:
  friend class TableWriter;
  // The backlog of a write that will never be published.
  void LetGo(std::uint64_t bytes) TANDEM_EXCLUDES(mu_) {
    MutexLock l(mu_);
    backlog_ -= bytes;
  }

  const std::string id_;
  const ipc::pb::Schema schema_;
  const std::vector<std::uint32_t> upsert_key_;
  const std::chrono::milliseconds tick_;
  const std::string broken_;

  mutable Mutex mu_;
  std::vector<ipc::pb::TableLogWrite> published_ TANDEM_GUARDED_BY(mu_);
  Time upper_ TANDEM_GUARDED_BY(mu_) = 0;
  bool in_flight_ TANDEM_GUARDED_BY(mu_) = false;
  Time last_tick_ TANDEM_GUARDED_BY(mu_) = 0;         // when the upper last followed the clock
  std::uint64_t backlog_ TANDEM_GUARDED_BY(mu_) = 0;  // Admit's
  std::uint64_t published_bytes_ TANDEM_GUARDED_BY(mu_) = 0;  // of it: in published_

  // The writer thread's (and Drop's, under the writer's round lock).
  std::unique_ptr<TableLog> log_;
  std::unordered_map<std::string, Time> applied_;  // client uuid → its time
  bool dropped_ = false;
};

class TableWriter {
 public:
  // Sends the answers of one group commit (WriteResponses) and wakes the lockstep workers (the
  // published writes are ready for the next tick). Called on the writer thread.
  using Answer = std::function<void(std::vector<ipc::pb::Response>)>;

  TableWriter(std::unique_ptr<DataDir> data_dir, Answer answer);
  ~TableWriter();  // stops the thread; queued writes stay unanswered (the process is ending)
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  // Opens the table of `import` (a table source): its log in the data dir, created when missing,
  // every durable write replayed (published for the first Take). A log that cannot be opened
  // (written for another definition, corrupt, an I/O error) makes a broken table: its collection
  // gets that error and closes, and writes to it are answered with it.
  std::shared_ptr<Table> Open(const ipc::pb::SourceImport& import);
  // Queues a write (its uuid as the supervisor sent it: the answer carries it back), unless the
  // table's backlog would pass `backlog_bound` (Table::Admit): then false, and nothing is queued.
  // A queued write's bytes are the backlog's until Take takes it, or until it is answered without
  // being published.
  bool Submit(const std::shared_ptr<Table>& table, ipc::pb::WriteTable write,
              std::uint64_t backlog_bound = UINT64_MAX);
  // The table was dropped: waits for a group commit in progress, answers its queued writes with
  // an error, and moves its log to the data dir's dropped/ (never deleted). Later writes to it are
  // answered with an error.
  void Drop(const std::shared_ptr<Table>& table);

 private:
  struct Job {
    std::shared_ptr<Table> table;
    ipc::pb::WriteTable write;
    std::uint64_t bytes = 0;  // of the table's backlog
  };
  void Loop();
  // One group commit over `jobs`. REQUIRES: round_mu_ held.
  void Commit(std::vector<Job> jobs);

  std::unique_ptr<DataDir> data_dir_;
  Answer answer_;

  Mutex round_mu_;  // held by the writer thread for a whole group commit, and by Drop
  Mutex mu_;
  CondVar cv_;
  std::vector<Job> queue_ TANDEM_GUARDED_BY(mu_);
  std::vector<ipc::pb::Response> deferred_ TANDEM_GUARDED_BY(mu_);  // Drop's answers, to send
  bool stop_ TANDEM_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tandem::workers
