// SqlThreads: the frontend's fixed pool of long-lived SQL threads (frontend/sql/README.md
// "Threads": libpg_query keeps a pthread key per thread that ever parsed, so parsing happens on
// threads that live as long as the process; each has sql::kParseStackBytes of stack).
//
// The session layer posts one task per Query; a task may block (on the replica driver, on its
// client's pace), so `threads` bounds how many statements wait at once — the others queue. The
// queue holds at most one task per session (pgwire answers one Query at a time), so it is bounded
// by the listener's max_connections. Thread-safe.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"

namespace tandem::frontend {

class SqlThreads {
 public:
  SqlThreads() = default;
  ~SqlThreads();  // Stop
  SqlThreads(const SqlThreads&) = delete;
  SqlThreads& operator=(const SqlThreads&) = delete;

  // Starts `threads` threads of `stack_bytes` stack each. Internal when one cannot be made.
  Status Start(std::size_t threads, std::size_t stack_bytes);
  // Queues `task`; false (task dropped, not run) once stopping.
  bool Post(std::function<void()> task);
  // Runs the tasks queued, then joins every thread. Idempotent.
  void Stop();

 private:
  static void* Main(void* self);
  void Loop();

  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> tasks_ TANDEM_GUARDED_BY(mu_);
  bool stopping_ TANDEM_GUARDED_BY(mu_) = false;
  std::vector<pthread_t> threads_;
};

}  // namespace tandem::frontend
