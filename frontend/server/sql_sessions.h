// SqlSessions: the frontend's pgwire::QueryHandlerFactory — one SessionState per client session,
// each Query handed to the SQL threads (sql_threads.h) to run on the StatementExecutor, the answer
// finished with the session's transaction status. Nothing here blocks the pgwire I/O thread:
// Open, Query, Cancel and a handler's destruction only post, flag and return.
//
// Lifetimes: a session's state is shared by its handler and the task running its Query, so a
// client that leaves mid-statement leaves the task to finish on a sink that is no longer wanted
// (QuerySink: every call then returns false). The factory, the threads and the executor outlive
// the pgwire server (main.cc stops the server first).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "frontend/pgwire/query_handler.h"
#include "frontend/server/sql_threads.h"
#include "frontend/server/statement_executor.h"

namespace tandem::frontend {

class SqlSessions final : public pgwire::QueryHandlerFactory {
 public:
  SqlSessions(SqlThreads& threads, StatementExecutor& executor,
              std::chrono::milliseconds statement_timeout)
      : threads_(threads), executor_(executor), statement_timeout_(statement_timeout) {}

  std::unique_ptr<pgwire::QueryHandler> Open(const pgwire::StartupParameters& startup,
                                             pgwire::ErrorFields& refusal) override;

 private:
  SqlThreads& threads_;
  StatementExecutor& executor_;
  const std::chrono::milliseconds statement_timeout_;
  std::atomic<std::uint64_t> next_session_{1};
};

}  // namespace tandem::frontend
