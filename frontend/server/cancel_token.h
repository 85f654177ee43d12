// CancelToken: a session's cancel flag (pgwire CancelRequest → QueryHandler::Cancel, on the I/O
// thread) and the one action a waiting statement registers to be woken by it. Thread-safe.
//
// The SQL thread running a statement Resets it before each Query, registers OnCancel while it
// waits (for the replica driver, for room in its sink), and checks canceled() between steps.
// Cancel() never blocks: the registered action must not either (notify, post).
#pragma once

#include <functional>

#include "base/thread_annotations.h"

namespace tandem::frontend {

class CancelToken {
 public:
  void Cancel() {
    std::function<void()> f;
    {
      MutexLock lock(mu_);
      canceled_ = true;
      f = on_cancel_;
    }
    if (f) f();
  }
  bool canceled() const {
    MutexLock lock(mu_);
    return canceled_;
  }
  // A new Query: not canceled. A cancel that raced the end of the previous answer is dropped, as
  // PostgreSQL drops one that comes when no query runs.
  void Reset() {
    MutexLock lock(mu_);
    canceled_ = false;
    on_cancel_ = nullptr;
  }
  // `f` is called by the next Cancel (at once, here, when canceled already) until ClearOnCancel.
  void OnCancel(std::function<void()> f) {
    bool now = false;
    {
      MutexLock lock(mu_);
      on_cancel_ = f;
      now = canceled_;
    }
    if (now) f();
  }
  void ClearOnCancel() {
    MutexLock lock(mu_);
    on_cancel_ = nullptr;
  }

 private:
  mutable Mutex mu_;
  bool canceled_ TANDEM_GUARDED_BY(mu_) = false;
  std::function<void()> on_cancel_ TANDEM_GUARDED_BY(mu_);
};

}  // namespace tandem::frontend
