#include "workers/tables/table.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/check.h"
#include "ipc/model.h"
#include "ipc/table_write.h"

namespace tandem::workers {

namespace pb = ipc::pb;
using namespace std::chrono_literals;

namespace {
constexpr std::chrono::milliseconds kDefaultTick{1000};

pb::TableLogHeader HeaderOf(const pb::SourceImport& import) {
  pb::TableLogHeader h;
  h.set_format(kTableLogFormat);
  h.set_id(import.id());
  *h.mutable_schema() = import.schema();
  for (std::uint32_t c : import.upsert_key()) h.add_upsert_key(c);
  return h;
}

pb::Response Acknowledgement(const std::string& wire_uuid, Time time) {
  pb::Response r;
  r.mutable_write_response()->set_uuid(wire_uuid);
  r.mutable_write_response()->set_time(time);
  return r;
}

pb::Response Refusal(const std::string& wire_uuid, std::string why) {
  pb::Response r;
  r.mutable_write_response()->set_uuid(wire_uuid);
  r.mutable_write_response()->set_error(std::move(why));
  return r;
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Table

Table::Table(const pb::SourceImport& import, std::unique_ptr<TableLog> log,
             std::vector<pb::TableLogWrite> replayed, std::string broken)
    : id_(import.id()),
      schema_(import.schema()),
      upsert_key_(import.upsert_key().begin(), import.upsert_key().end()),
      tick_(import.source().table().tick_interval_ms() == 0
                ? kDefaultTick
                : std::chrono::milliseconds(import.source().table().tick_interval_ms())),
      broken_(std::move(broken)),
      log_(std::move(log)) {
  MutexLock l(mu_);
  for (const pb::TableLogWrite& w : replayed) {
    applied_.emplace(w.uuid(), w.time());
    upper_ = std::max(upper_, w.time() + 1);
    published_bytes_ += w.updates().empty() ? 0 : w.ByteSizeLong();
  }
  backlog_ = published_bytes_;
  published_ = std::move(replayed);
}

bool Table::Admit(std::uint64_t bytes, std::uint64_t bound) {
  MutexLock l(mu_);
  if (backlog_ > 0 && backlog_ + bytes > bound) return false;
  backlog_ += bytes;
  return true;
}

std::uint64_t Table::backlog() const {
  MutexLock l(mu_);
  return backlog_;
}

Table::Taken Table::Take(Time now_ms) {
  MutexLock l(mu_);
  const auto tick = static_cast<Time>(tick_.count());
  if (!in_flight_ && now_ms >= last_tick_ + tick) {
    upper_ = std::max(upper_, now_ms);
    last_tick_ = now_ms;
  }
  Taken t;
  t.writes = std::move(published_);
  published_.clear();
  backlog_ -= published_bytes_;
  published_bytes_ = 0;
  t.upper = upper_;
  return t;
}

// ---------------------------------------------------------------------------------------------
// TableWriter

TableWriter::TableWriter(std::unique_ptr<DataDir> data_dir, Answer answer)
    : data_dir_(std::move(data_dir)), answer_(std::move(answer)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "table-writer");
    Loop();
  });
}

TableWriter::~TableWriter() {
  {
    MutexLock l(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<Table> TableWriter::Open(const pb::SourceImport& import) {
  auto opened = TableLog::Open(data_dir_->TablesDir(), HeaderOf(import));
  if (!opened.ok()) {
    const std::string why = "table " + import.id() + ": " + opened.status().ToString();
    spdlog::error("{}; the table cannot be read or written (its log is left as it is)", why);
    return std::make_shared<Table>(import, nullptr, std::vector<pb::TableLogWrite>{}, why);
  }
  TableLog::Opened o = std::move(opened).value();
  if (!o.warning.empty()) spdlog::warn("table {}: {}", import.id(), o.warning);
  spdlog::info("table {}: {} durable writes replayed from {}", import.id(), o.writes.size(),
               o.log->path());
  return std::make_shared<Table>(import, std::move(o.log), std::move(o.writes), "");
}

bool TableWriter::Submit(const std::shared_ptr<Table>& table, pb::WriteTable write,
                         std::uint64_t backlog_bound) {
  const std::uint64_t bytes = write.ByteSizeLong();
  if (!table->Admit(bytes, backlog_bound)) return false;
  {
    MutexLock l(mu_);
    queue_.push_back({table, std::move(write), bytes});
  }
  cv_.NotifyAll();
  return true;
}

void TableWriter::Drop(const std::shared_ptr<Table>& table) {
  MutexLock round(round_mu_);  // no group commit is in progress now
  std::vector<pb::Response> answers;
  {
    MutexLock l(mu_);
    std::vector<Job> keep;
    for (Job& j : queue_) {
      if (j.table == table) {
        table->LetGo(j.bytes);
        answers.push_back(Refusal(j.write.uuid(), "table " + table->id() +
                                                      " was dropped before this write was made "
                                                      "durable; it was not applied"));
      } else {
        keep.push_back(std::move(j));
      }
    }
    queue_ = std::move(keep);
  }
  table->dropped_ = true;
  if (table->log_) {
    const std::string path = table->log_->path();
    const Status retired = table->log_->Retire(data_dir_->DroppedDir());
    // The log of a table the controller dropped: if it cannot be moved away, a table created
    // later with this id would read it as its own — the data dir is broken; shared fate.
    if (!retired.ok()) spdlog::critical("table {}: {}", table->id(), retired.ToString());
    TANDEM_CHECK(retired.ok(), "could not move a dropped table's log out of the tables directory");
    spdlog::info("table {} dropped: its log {} moved to {}", table->id(), path,
                 data_dir_->DroppedDir());
    table->log_.reset();
  }
  if (answers.empty()) return;
  {
    // Answered by the writer thread: it alone sends.
    MutexLock l(mu_);
    for (pb::Response& a : answers) deferred_.push_back(std::move(a));
  }
  cv_.NotifyAll();
}

void TableWriter::Loop() {
  for (;;) {
    std::vector<Job> jobs;
    std::vector<pb::Response> deferred;
    {
      MutexLock l(mu_);
      while (!stop_ && queue_.empty() && deferred_.empty()) {
        cv_.WaitUntil(mu_, std::chrono::steady_clock::now() + 1s);
      }
      if (stop_) return;
      jobs = std::move(queue_);
      queue_.clear();
      deferred = std::move(deferred_);
      deferred_.clear();
    }
    if (!deferred.empty()) answer_(std::move(deferred));
    if (jobs.empty()) continue;
    MutexLock round(round_mu_);
    Commit(std::move(jobs));
  }
}

void TableWriter::Commit(std::vector<Job> jobs) {
  std::vector<pb::Response> answers;
  // Each table's part of this group commit: its time, its new writes, the answers after sync.
  struct Part {
    std::shared_ptr<Table> table;
    bool timed = false;  // `time` was chosen (and the table's upper held at it)
    Time time = 0;
    std::vector<pb::TableLogWrite> writes;
    std::vector<std::string> answer_at_time;  // wire uuids answered with `time` once durable
    std::vector<std::pair<std::string, Time>> retried;  // wire uuid → an earlier time
    std::uint64_t published_bytes = 0;  // of the backlog: the writes published below
    std::uint64_t let_go = 0;           // of the backlog: the jobs that publish nothing
  };
  std::vector<Part> parts;
  auto part_of = [&](const std::shared_ptr<Table>& t) -> Part& {
    for (Part& p : parts) {
      if (p.table == t) return p;
    }
    parts.emplace_back();
    parts.back().table = t;
    return parts.back();
  };
  for (Job& job : jobs) {
    Table& t = *job.table;
    const std::string& wire = job.write.uuid();
    // Every job's backlog is let go of below, but an appended write's, which Take lets go of.
    part_of(job.table).let_go += job.bytes;
    if (t.dropped_) {
      answers.push_back(
          Refusal(wire, "table " + t.id() + " was dropped; the write was not applied"));
      continue;
    }
    if (!t.broken().empty()) {
      answers.push_back(Refusal(wire, t.broken()));
      continue;
    }
    Part& p = part_of(job.table);
    const std::string client(ipc::ClientUuidOfWrite(wire));
    if (auto it = t.applied_.find(client); it != t.applied_.end()) {
      // A retry: applied once, answered with its first time (which may be this commit's).
      if (p.timed && it->second == p.time) {
        p.answer_at_time.push_back(wire);
      } else {
        p.retried.emplace_back(wire, it->second);
      }
      continue;
    }
    if (const Status fits = ipc::CheckTableUpdates(job.write, t.schema_, t.upsert_key_);
        !fits.ok()) {
      answers.push_back(Refusal(wire, "table " + t.id() + " is not what the write was checked " +
                                          "against (redefined since?): " + fits.message() +
                                          "; the write was not applied"));
      continue;
    }
    if (!p.timed) {
      MutexLock l(t.mu_);
      p.timed = true;
      p.time = std::max(WallClockMs(), t.upper_);
      t.in_flight_ = true;  // the upper stays <= p.time until these writes are published
    }
    if (std::string why = LogWriteProblem(client, p.time); !why.empty()) {
      // The rules Open checks every record by: what breaks them is never appended (a uuid the
      // supervisor's wrapping left empty, a clock or a replayed log at the end of time).
      answers.push_back(
          Refusal(wire, "table " + t.id() + ": the write " + why + "; the write was not applied"));
      continue;
    }
    pb::TableLogWrite w;
    w.set_uuid(client);
    w.set_time(p.time);
    *w.mutable_updates() = std::move(*job.write.mutable_updates());
    const Status appended = t.log_->Append(w);
    if (!appended.ok() && t.log_->usable()) {
      // Out of room: the log cut the partial record off; this write is not applied.
      spdlog::error("table {}: {}", t.id(), appended.ToString());
      answers.push_back(Refusal(
          wire, "table " + t.id() + ": " + appended.message() + "; the write was not applied"));
      continue;
    }
    if (!appended.ok()) spdlog::critical("table {}: {}", t.id(), appended.ToString());
    TANDEM_CHECK(appended.ok(), "could not append to a table's log");
    t.applied_.emplace(client, p.time);
    p.let_go -= job.bytes;
    p.published_bytes += job.bytes;
    p.writes.push_back(std::move(w));
    p.answer_at_time.push_back(wire);
  }
  for (Part& p : parts) {
    if (p.writes.empty()) continue;
    const Status synced = p.table->log_->Sync();
    if (!synced.ok()) spdlog::critical("table {}: {}", p.table->id(), synced.ToString());
    TANDEM_CHECK(synced.ok(), "could not make a table's log durable (fdatasync failed)");
  }
  for (Part& p : parts) {
    Table& t = *p.table;
    {
      MutexLock l(t.mu_);
      t.backlog_ -= p.let_go;
      t.published_bytes_ += p.published_bytes;
      if (p.timed) {
        for (pb::TableLogWrite& w : p.writes) t.published_.push_back(std::move(w));
        if (!p.writes.empty()) t.upper_ = std::max(t.upper_, p.time + 1);
        t.in_flight_ = false;
      }
    }
    for (const std::string& wire : p.answer_at_time)
      answers.push_back(Acknowledgement(wire, p.time));
    for (const auto& [wire, time] : p.retried) answers.push_back(Acknowledgement(wire, time));
  }
  if (!answers.empty()) answer_(std::move(answers));
}

}  // namespace tandem::workers
