// A stand-in SQL layer for the wire protocol's tests (frontend/pgwire knows no SQL): sessions
// that answer a few fixed statements, each session from a worker thread of its own — as answers
// from replicas arrive — never on the connection's thread, which the handler never blocks.
//
// A message is split at ';' (no quoting: the statements below have none) and each statement
// answered in turn, PostgreSQL-like:
//   SELECT 1                  ?column? int4: 1
//   SELECT * FROM pairs       k int8, v text: (1, 'one'), (2, NULL)
//   SELECT * FROM missing     ERROR 42P01 relation "missing" does not exist, with its position
//   SELECT text               t text: 'héllo wörld'
//   SELECT notice             a NOTICE, then ok text: 'ok'
//   SELECT many               i int8: 1 … 1000
//   SELECT big N              b text: N rows of 1 KiB, each after waiting for room (the client's
//                             pace), ERROR 57014 if canceled meanwhile
//   SELECT big                the same, endless: until canceled or the answer is unwanted
//   SELECT stream             s text: 64 KiB rows, endless until canceled (ERROR 57014) or
//                             unwanted, from a producer that never blocks: it refills the sink
//                             whenever there is room, from NotifyWhenRoom's callback — on the
//                             I/O thread, as fast as the client reads
//   SELECT slow               answered only when canceled: ERROR 57014
//   COPY pairs TO STDOUT      CopyOutResponse, the rows of pairs as text, CopyDone, COPY 2
//   BEGIN, COMMIT, ROLLBACK   the transaction status, as PostgreSQL tracks it
//   anything else             ERROR 42601 syntax error at or near its first word
// In a failed transaction everything but COMMIT and ROLLBACK is ERROR 25P02.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <chrono>
#include <cstdlib>

#include "frontend/pgwire/query_handler.h"
#include "frontend/sqlstate.h"

namespace tandem::testing {

class FakeSessions : public pgwire::QueryHandlerFactory {
 public:
  FakeSessions() = default;
  // Joins every session's worker: each stops once its jobs are done (a session's end makes its
  // sinks unwanted, so none waits long).
  ~FakeSessions() override {
    std::vector<std::shared_ptr<Worker>> workers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      workers.swap(retired_);
    }
    for (const auto& w : workers) w->thread.join();
  }

  std::unique_ptr<pgwire::QueryHandler> Open(const pgwire::StartupParameters& startup,
                                             pgwire::ErrorFields& refusal) override {
    if (startup.user == "refused") {
      refusal = pgwire::ErrorFields::Fatal(tandem::sqlstate::kInvalidAuthorizationSpecification,
                                           "role \"refused\" is not permitted to log in");
      return nullptr;
    }
    ++opened;
    return std::make_unique<Session>(*this);
  }

  std::atomic<int> opened{0};
  std::atomic<int> closed{0};
  std::atomic<int> cancels{0};
  // Waits for room that ended without room (50 ms each): a producer held by a client that does
  // not read, as it should be.
  std::atomic<int> held_back{0};

 private:
  using TransactionStatus = pgwire::TransactionStatus;

  struct State {
    std::mutex mu;
    TransactionStatus status = TransactionStatus::kIdle;
    std::shared_ptr<pgwire::QuerySink> slow;  // a SELECT slow waiting for its cancel
    std::atomic<bool> canceled{false};        // the Query being answered was canceled
  };

  // One session's thread and its jobs, in order.
  struct Worker {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    bool stopping = false;
    std::thread thread;

    void Post(std::function<void()> job) {
      {
        std::lock_guard<std::mutex> lock(mu);
        jobs.push_back(std::move(job));
      }
      cv.notify_all();
    }
    void Work() {
      std::unique_lock<std::mutex> lock(mu);
      for (;;) {
        cv.wait(lock, [&] { return stopping || !jobs.empty(); });
        if (jobs.empty()) return;  // stopping, and nothing left
        std::function<void()> job = std::move(jobs.front());
        jobs.pop_front();
        lock.unlock();
        job();
        lock.lock();
      }
    }
  };

  class Session : public pgwire::QueryHandler {
   public:
    explicit Session(FakeSessions& owner)
        : owner_(owner), state_(std::make_shared<State>()), worker_(std::make_shared<Worker>()) {
      worker_->thread = std::thread([w = worker_.get()] { w->Work(); });
    }
    // On the I/O thread, so it does not join: the worker stops after its jobs, and the factory
    // joins it.
    ~Session() override {
      {
        std::lock_guard<std::mutex> lock(worker_->mu);
        worker_->stopping = true;
      }
      worker_->cv.notify_all();
      owner_.Retire(worker_);
      ++owner_.closed;
    }
    void Query(std::string sql, std::shared_ptr<pgwire::QuerySink> sink) override {
      state_->canceled = false;
      worker_->Post([state = state_, sql = std::move(sql), sink = std::move(sink),
                     held_back = &owner_.held_back] { Answer(state, sql, sink, *held_back); });
    }
    void Cancel() override {
      ++owner_.cancels;
      state_->canceled = true;  // seen by an answer under way (SELECT big)
      worker_->Post([state = state_] {
        std::shared_ptr<pgwire::QuerySink> sink;
        TransactionStatus status;
        {
          std::lock_guard<std::mutex> lock(state->mu);
          sink.swap(state->slow);
          status = state->status;
        }
        if (!sink) return;
        sink->Error(pgwire::ErrorFields::Error(tandem::sqlstate::kQueryCanceled,
                                               "canceling statement due to user request"));
        sink->Finish(status);
      });
    }

   private:
    FakeSessions& owner_;
    std::shared_ptr<State> state_;
    std::shared_ptr<Worker> worker_;
  };

  void Retire(std::shared_ptr<Worker> worker) {
    std::lock_guard<std::mutex> lock(mu_);
    retired_.push_back(std::move(worker));
  }

  static std::string Trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
  }

  // SELECT stream's producer: fills the sink while there is room, then asks to be called back.
  struct Streamer : std::enable_shared_from_this<Streamer> {
    Streamer(std::shared_ptr<State> state, std::shared_ptr<pgwire::QuerySink> sink,
             TransactionStatus status)
        : state(std::move(state)), sink(std::move(sink)), status(status) {}
    void Fill() {
      const pgwire::Value v[] = {std::string(64 * 1024, 's')};
      for (;;) {
        while (sink->has_room()) {
          if (state->canceled) {
            sink->Error(pgwire::ErrorFields::Error(tandem::sqlstate::kQueryCanceled,
                                                   "canceling statement due to user request"));
            sink->Finish(status);
            return;
          }
          if (!sink->DataRow(v)) return;  // unwanted
        }
        if (!sink->NotifyWhenRoom([self = shared_from_this()] { self->Fill(); })) return;
      }
    }
    const std::shared_ptr<State> state;
    const std::shared_ptr<pgwire::QuerySink> sink;
    const TransactionStatus status;
  };

  // Answers one message on the session's worker thread.
  static void Answer(const std::shared_ptr<State>& state_ptr, const std::string& sql,
                     const std::shared_ptr<pgwire::QuerySink>& sink, std::atomic<int>& held_back) {
    State& state = *state_ptr;
    using pgwire::ErrorFields;
    using pgwire::FieldDescription;
    using pgwire::Value;
    namespace code = tandem::sqlstate;
    std::lock_guard<std::mutex> lock(state.mu);
    std::vector<std::pair<std::string, std::size_t>> statements;  // text, offset in `sql`
    std::size_t at = 0;
    while (at <= sql.size()) {
      const std::size_t end = std::min(sql.find(';', at), sql.size());
      const std::string raw = sql.substr(at, end - at);
      const std::string s = Trim(raw);
      if (!s.empty()) statements.emplace_back(s, at + raw.find(s));
      at = end + 1;
    }
    if (statements.empty()) {
      sink->EmptyQuery();
      sink->Finish(state.status);
      return;
    }
    auto fail = [&](ErrorFields e) {
      sink->Error(e);
      if (state.status == TransactionStatus::kInTransaction) {
        state.status = TransactionStatus::kFailed;
      }
      sink->Finish(state.status);
    };
    for (const auto& [s, offset] : statements) {
      if (state.status == TransactionStatus::kFailed && s != "COMMIT" && s != "ROLLBACK") {
        fail(ErrorFields::Error(code::kInFailedSqlTransaction,
                                "current transaction is aborted, commands ignored until end of "
                                "transaction block"));
        return;
      }
      if (s == "BEGIN") {
        sink->CommandComplete("BEGIN");
        state.status = TransactionStatus::kInTransaction;
      } else if (s == "COMMIT" || s == "ROLLBACK") {
        sink->CommandComplete(state.status == TransactionStatus::kFailed ? "ROLLBACK" : s);
        state.status = TransactionStatus::kIdle;
      } else if (s == "SELECT 1") {
        const FieldDescription f("?column?", pgwire::kInt4);
        sink->RowDescription({&f, 1});
        const Value v[] = {"1"};
        sink->DataRow(v);
        sink->CommandComplete("SELECT 1");
      } else if (s == "SELECT * FROM pairs") {
        const FieldDescription f[] = {{"k", pgwire::kInt8}, {"v", pgwire::kText}};
        sink->RowDescription(f);
        const Value r1[] = {"1", "one"};
        const Value r2[] = {"2", std::nullopt};
        sink->DataRow(r1);
        sink->DataRow(r2);
        sink->CommandComplete("SELECT 2");
      } else if (s == "SELECT * FROM missing") {
        ErrorFields e =
            ErrorFields::Error(code::kUndefinedTable, "relation \"missing\" does not exist");
        e.position = static_cast<std::uint32_t>(offset + s.find("missing") + 1);
        fail(e);
        return;
      } else if (s == "SELECT text") {
        const FieldDescription f("t", pgwire::kText);
        sink->RowDescription({&f, 1});
        const Value v[] = {"h\xc3\xa9llo w\xc3\xb6rld"};
        sink->DataRow(v);
        sink->CommandComplete("SELECT 1");
      } else if (s == "SELECT notice") {
        ErrorFields n(pgwire::Severity::kNotice, "00000", "this is a notice");
        sink->Notice(n);
        const FieldDescription f("ok", pgwire::kText);
        sink->RowDescription({&f, 1});
        const Value v[] = {"ok"};
        sink->DataRow(v);
        sink->CommandComplete("SELECT 1");
      } else if (s == "SELECT many") {
        const FieldDescription f("i", pgwire::kInt8);
        sink->RowDescription({&f, 1});
        for (int i = 1; i <= 1000; ++i) {
          const Value v[] = {std::to_string(i)};
          sink->DataRow(v);
        }
        sink->CommandComplete("SELECT 1000");
      } else if (s == "SELECT big" || s.rfind("SELECT big ", 0) == 0) {
        const std::size_t limit = s == "SELECT big" ? std::numeric_limits<std::size_t>::max()
                                                    : std::strtoull(s.c_str() + 11, nullptr, 10);
        const FieldDescription f("b", pgwire::kText);
        sink->RowDescription({&f, 1});
        const Value v[] = {std::string(1024, 'b')};
        std::size_t rows = 0;
        // At the client's pace: room before each row. A short wait at a time, so a cancel is
        // seen while the client reads nothing.
        while (rows < limit && !state.canceled) {
          if (!sink->WaitForRoom(std::chrono::steady_clock::now() +
                                 std::chrono::milliseconds(50))) {
            if (!sink->wanted()) return;  // the client left or was cut: nothing to finish
            ++held_back;
            continue;
          }
          if (!sink->DataRow(v)) return;
          ++rows;
        }
        if (state.canceled) {
          fail(ErrorFields::Error(code::kQueryCanceled, "canceling statement due to user request"));
          return;
        }
        sink->CommandComplete("SELECT " + std::to_string(rows));
      } else if (s == "SELECT stream") {
        const FieldDescription f("s", pgwire::kText);
        sink->RowDescription({&f, 1});
        std::make_shared<Streamer>(state_ptr, sink, state.status)->Fill();
        return;
      } else if (s == "SELECT slow") {
        state.slow = sink;  // Cancel answers it
        return;
      } else if (s == "COPY pairs TO STDOUT") {
        sink->CopyOutResponse(2);
        sink->CopyData("1\tone\n");
        sink->CopyData("2\t\\N\n");
        sink->CopyDone();
        sink->CommandComplete("COPY 2");
      } else {
        ErrorFields e = ErrorFields::Error(
            code::kSyntaxError, "syntax error at or near \"" + s.substr(0, s.find(' ')) + "\"");
        e.position = static_cast<std::uint32_t>(offset + 1);
        fail(e);
        return;
      }
    }
    sink->Finish(state.status);
  }

  std::mutex mu_;
  std::vector<std::shared_ptr<Worker>> retired_;  // the workers of ended sessions
};

}  // namespace tandem::testing
