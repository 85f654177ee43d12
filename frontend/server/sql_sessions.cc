#include "frontend/server/sql_sessions.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "frontend/sqlstate.h"

namespace tandem::frontend {

namespace {

class SqlSession final : public pgwire::QueryHandler {
 public:
  SqlSession(SqlThreads& threads, StatementExecutor& executor, std::shared_ptr<SessionState> state)
      : threads_(threads), executor_(executor), state_(std::move(state)) {}

  ~SqlSession() override {
    // A statement still running ends soon: its sink is unwanted now, and a wait is cut short.
    state_->cancel.Cancel();
  }

  void Query(std::string sql, std::shared_ptr<pgwire::QuerySink> sink) override {
    state_->cancel.Reset();
    auto state = state_;
    StatementExecutor& executor = executor_;
    const bool posted = threads_.Post([state, sink, sql = std::move(sql), &executor]() mutable {
      try {
        executor.Execute(std::move(sql), *sink, *state);
      } catch (const std::exception& e) {
        // A bug of the executor must not take the frontend down with every other session.
        spdlog::error("session {}: the statement failed with an exception: {}", state->id,
                      e.what());
        (void)sink->Error(pgwire::ErrorFields::Error(sqlstate::kInternalError,
                                                     std::string("internal error: ") + e.what()));
        if (state->transaction != pgwire::TransactionStatus::kIdle) {
          state->transaction = pgwire::TransactionStatus::kFailed;
        }
      }
      sink->Finish(state->transaction);
    });
    if (!posted) {
      (void)sink->Error(
          pgwire::ErrorFields::Error(sqlstate::kAdminShutdown, "the frontend is shutting down"));
      sink->Finish(state_->transaction);
    }
  }

  void Cancel() override { state_->cancel.Cancel(); }

 private:
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
