#include "frontend/server/sql_sessions.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <functional>
#include <optional>
#include <vector>

#include "frontend/server/sql_answers.h"
#include "frontend/sql/parameters.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

namespace {

// Fails the message being answered: `error` ends it, and fails a transaction block.
void Fail(pgwire::QuerySink& sink, SessionState& state, const sql::SqlError& error) {
  (void)FailStatement(sink, state, ErrorOf(error));
}

// Runs `work` for one message, then ends its answer with the session's transaction status. An
// exception is an internal error of this message: a bug of the executor must not take the
// frontend down with every other session.
void Answer(SessionState& state, pgwire::QuerySink& sink,
            const std::function<void(SessionState&, pgwire::QuerySink&)>& work) {
  try {
    work(state, sink);
  } catch (const std::exception& e) {
    spdlog::error("session {}: the message failed with an exception: {}", state.id, e.what());
    (void)FailStatement(sink, state,
                        pgwire::ErrorFields::Error(sqlstate::kInternalError,
                                                   std::string("internal error: ") + e.what()));
  }
  sink.Finish(state.transaction);
}

std::string Quoted(const std::string& name) { return "\"" + name + "\""; }

// `prepared`'s statement with each parameter a NULL of its type: what Describe of a statement
// plans.
std::optional<sql::ParsedStatement> WithNullParameters(const PreparedStatement& prepared) {
  std::optional<sql::ParsedStatement> statement = prepared.statement;
  if (statement && !prepared.parameter_types.empty()) {
    sql::ReplaceParameters(*statement, [&](int number, int location) {
      const std::uint32_t oid = prepared.parameter_types[static_cast<std::size_t>(number - 1)];
      return sql::NullConstant(ParameterTypeName(oid).value_or("text"), location);
    });
  }
  return statement;
}

class SqlSession final : public pgwire::QueryHandler {
 public:
  SqlSession(SqlThreads& threads, StatementExecutor& executor, std::shared_ptr<SessionState> state)
      : threads_(threads), executor_(executor), state_(std::move(state)) {}

  ~SqlSession() override {
    // A statement still running ends soon: its sink is unwanted now, and a wait is cut short.
    state_->cancel.Cancel();
  }

  void Query(std::string sql, std::shared_ptr<pgwire::QuerySink> sink) override {
    StatementExecutor& executor = executor_;
    Post(std::move(sink),
         [sql = std::move(sql), &executor](SessionState& state, pgwire::QuerySink& out) mutable {
           executor.Execute(std::move(sql), out, state);
           // A simple Query ends the unnamed statement, and its transaction (when it leaves the
           // session idle) every portal — as PostgreSQL's does.
           state.statements.erase("");
           if (state.transaction == pgwire::TransactionStatus::kIdle) state.portals.clear();
         });
  }

  void Cancel() override { state_->cancel.Cancel(); }

  // ---- the extended query protocol: each message answered on a SQL thread, in order (the
  // connection sends the next once this one's answer is finished).
  bool SupportsExtendedProtocol() const override { return true; }

  void Parse(pgwire::ParseRequest request, std::shared_ptr<pgwire::QuerySink> sink) override {
    StatementExecutor& executor = executor_;
    Post(std::move(sink), [request = std::move(request), &executor](SessionState& state,
                                                                    pgwire::QuerySink& out) {
      auto& statements = state.statements;
      if (request.statement.empty()) {
        statements.erase("");  // PostgreSQL drops the unnamed statement first, whatever follows
      } else if (statements.count(request.statement)) {
        return Fail(out, state,
                    sql::SqlError(
                        sqlstate::kDuplicatePreparedStatement,
                        "prepared statement " + Quoted(request.statement) + " already exists", 0));
      } else if (statements.size() >= kMaxPreparedPerSession) {
        return Fail(out, state, TooMany("prepared statements", kMaxPreparedPerSession));
      }
      std::size_t bytes = request.query.size();
      for (const auto& [name, s] : statements) bytes += s->query.size();
      if (bytes > kMaxPreparedBytesPerSession) {
        return Fail(out, state,
                    sql::SqlError(sqlstate::kProgramLimitExceeded,
                                  "a session's prepared statements hold at most " +
                                      std::to_string(kMaxPreparedBytesPerSession >> 20) +
                                      " MiB of SQL: close some",
                                  0));
      }
      auto prepared = executor.Prepare(request.query, request.parameter_types, state);
      if (!prepared.ok()) return Fail(out, state, prepared.error());
      statements[request.statement] =
          std::make_shared<const PreparedStatement>(std::move(*prepared));
      (void)out.ParseComplete();
    });
  }

  void Bind(pgwire::BindRequest request, std::shared_ptr<pgwire::QuerySink> sink) override {
    // Here, on the connection's thread: no wait and no parse — the statement's tree copied with
    // the values in place.
    AnswerHere(std::move(sink), [&request](SessionState& state, pgwire::QuerySink& out) {
      auto it = state.statements.find(request.statement);
      if (it == state.statements.end()) return Fail(out, state, NoStatement(request.statement));
      if (request.portal.empty()) {
        state.portals.erase("");
      } else if (state.portals.count(request.portal)) {
        return Fail(out, state,
                    sql::SqlError(sqlstate::kDuplicateCursor,
                                  "portal " + Quoted(request.portal) + " already exists", 0));
      } else if (state.portals.size() >= kMaxPortalsPerSession) {
        return Fail(out, state, TooMany("portals", kMaxPortalsPerSession));
      }
      auto portal = BindPortal(it->second, request);
      if (!portal.ok()) return Fail(out, state, portal.error());
      state.portals[request.portal] = std::move(*portal);
      (void)out.BindComplete();
    });
  }

  void Describe(pgwire::Target target, std::string name,
                std::shared_ptr<pgwire::QuerySink> sink) override {
    StatementExecutor& executor = executor_;
    Post(std::move(sink),
         [target, name = std::move(name), &executor](SessionState& state, pgwire::QuerySink& out) {
           sql::SqlResult<std::optional<std::vector<pgwire::FieldDescription>>> fields =
               std::optional<std::vector<pgwire::FieldDescription>>();
           if (target == pgwire::Target::kStatement) {
             auto it = state.statements.find(name);
             if (it == state.statements.end()) return Fail(out, state, NoStatement(name));
             if (!out.ParameterDescription(it->second->parameter_types)) return;
             fields = executor.DescribeResult(*it->second, WithNullParameters(*it->second), state);
           } else {
             auto it = state.portals.find(name);
             if (it == state.portals.end()) return Fail(out, state, NoPortal(name));
             Portal& portal = it->second;
             // A query's portal is read now, its rows kept for Execute to send: the columns come
             // with them, planned once (libpq describes every portal it executes).
             if (!portal.started && executor.ReadsRows(*portal.prepared) &&
                 !executor.KeepRows(portal, out, state)) {
               return;  // its error was the answer
             }
             if (portal.rows_kept) {
               fields = std::optional(portal.fields);
             } else {
               fields = executor.DescribeResult(*portal.prepared, portal.statement, state);
               if (fields.ok() && fields->has_value()) {
                 auto formatted = WithResultFormats(std::move(**fields), portal.result_formats);
                 if (!formatted.ok()) return Fail(out, state, formatted.error());
                 fields = std::optional(std::move(*formatted));
               }
             }
           }
           if (!fields.ok()) return Fail(out, state, fields.error());
           if (fields->has_value()) {
             (void)out.RowDescription(**fields);
           } else {
             (void)out.NoData();
           }
         });
  }

  void Execute(std::string portal, std::uint32_t max_rows,
               std::shared_ptr<pgwire::QuerySink> sink) override {
    StatementExecutor& executor = executor_;
    // A portal whose rows are kept (its Describe read them) and surely fit the sink's room is
    // answered here: sending them never waits for the client (the answer the connection's thread
    // would have to drain itself).
    if (auto it = state_->portals.find(portal);
        it != state_->portals.end() && SendsWithoutWaiting(it->second, sink->room_bytes())) {
      AnswerHere(std::move(sink), [&](SessionState& state, pgwire::QuerySink& out) {
        executor.ExecutePortal(it->second, max_rows, out, state);
      });
      return;
    }
    Post(std::move(sink), [portal = std::move(portal), max_rows, &executor](
                              SessionState& state, pgwire::QuerySink& out) {
      auto it = state.portals.find(portal);
      if (it == state.portals.end()) return Fail(out, state, NoPortal(portal));
      executor.ExecutePortal(it->second, max_rows, out, state);
    });
  }

  void Close(pgwire::Target target, std::string name,
             std::shared_ptr<pgwire::QuerySink> sink) override {
    AnswerHere(std::move(sink), [target, &name](SessionState& state, pgwire::QuerySink& out) {
      if (target == pgwire::Target::kStatement) {
        state.statements.erase(name);
      } else {
        state.portals.erase(name);
      }
      (void)out.CloseComplete();
    });
  }

  void Sync(std::shared_ptr<pgwire::QuerySink> sink) override {
    AnswerHere(std::move(sink), [](SessionState& state, pgwire::QuerySink&) {
      // The implicit transaction ends here (a block goes on): its portals with it.
      if (state.transaction == pgwire::TransactionStatus::kIdle) state.portals.clear();
    });
  }

 private:
  // Whether the kept rows of `portal` are sent whole within `room` bytes: a generous bound on
  // their DataRows (a value's text or binary form is at most twice its datum's protobuf size, a
  // row's framing 7 bytes and 4 a column), with room to spare.
  static bool SendsWithoutWaiting(const Portal& portal, std::size_t room) {
    if (!portal.started || !portal.rows_kept) return false;
    std::uint64_t rows = 0;
    for (const auto& r : portal.rows.rows()) rows += r.count();
    if (rows > 10000) return false;
    const std::uint64_t bytes =
        2 * portal.rows.ByteSizeLong() * std::max<std::uint64_t>(1, rows) /
            std::max<std::uint64_t>(1, static_cast<std::uint64_t>(portal.rows.rows_size())) +
        rows * (7 + 4 * portal.fields.size()) + 4096;
    return bytes * 4 <= room;
  }

  static sql::SqlError NoStatement(const std::string& name) {
    return sql::SqlError(sqlstate::kInvalidSqlStatementName,
                         "prepared statement " + Quoted(name) + " does not exist", 0);
  }
  static sql::SqlError NoPortal(const std::string& name) {
    return sql::SqlError(sqlstate::kInvalidCursorName, "portal " + Quoted(name) + " does not exist",
                         0);
  }
  static sql::SqlError TooMany(const std::string& what, std::size_t limit) {
    return sql::SqlError(
        sqlstate::kProgramLimitExceeded,
        "a session holds at most " + std::to_string(limit) + " " + what + ": close some", 0);
  }

  // Runs `work` for one message here, on the connection's thread, then ends its answer: for what
  // neither waits nor parses. The session's state is the message's alone (the connection sends
  // the next message once this one's answer is finished; a SQL thread that answered the one
  // before finished it first, under the sink's lock the connection then takes).
  void AnswerHere(std::shared_ptr<pgwire::QuerySink> sink,
                  const std::function<void(SessionState&, pgwire::QuerySink&)>& work) {
    Answer(*state_, *sink, work);
  }

  // Runs `work` for one message on a SQL thread, then ends its answer with the session's
  // transaction status. An exception is an internal error of this message, not of the frontend.
  void Post(std::shared_ptr<pgwire::QuerySink> sink,
            std::function<void(SessionState&, pgwire::QuerySink&)> work) {
    state_->cancel.Reset();
    auto state = state_;
    const bool posted = threads_.Post(
        [state, sink, work = std::move(work)]() mutable { Answer(*state, *sink, work); });
    if (!posted) {
      (void)sink->Error(
          pgwire::ErrorFields::Error(sqlstate::kAdminShutdown, "the frontend is shutting down"));
      sink->Finish(state_->transaction);
    }
  }

  SqlThreads& threads_;
  StatementExecutor& executor_;
  std::shared_ptr<SessionState> state_;
};

}  // namespace

std::unique_ptr<pgwire::QueryHandler> SqlSessions::Open(const pgwire::StartupParameters& startup,
                                                        pgwire::ErrorFields& refusal) {
  // The connection accepted the startup: the database is "tandem" (pgwire ConnectionOptions),
  // any user under trust.
  (void)refusal;
  auto state = std::make_shared<SessionState>();
  state->id = next_session_++;
  state->startup = startup;
  state->statement_timeout = state->default_statement_timeout = statement_timeout_;
  return std::make_unique<SqlSession>(threads_, executor_, std::move(state));
}

}  // namespace tandem::frontend
