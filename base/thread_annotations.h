// Lock annotations the compiler checks (clang's -Wthread-safety; the tsan and fuzz presets build
// with clang, so CI checks them). Under GCC they expand to nothing.
//
// State a mutex guards is declared TANDEM_GUARDED_BY(mu); a function that expects the lock held
// is TANDEM_REQUIRES(mu). std::mutex is not annotated in libstdc++, so guarded state uses
// tandem::Mutex with tandem::MutexLock (scoped) and tandem::CondVar (waits with the lock held).
//
// Most of Tandem's shared state is not behind a lock: segment memory follows the protocols of
// shm/ (atomics, checked by static_asserts and ThreadSanitizer), worker state is confined to its
// thread, and lockstep state is written only in barrier completions (workers/runtime.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define TANDEM_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TANDEM_THREAD_ANNOTATION(x)
#endif

#define TANDEM_CAPABILITY(name) TANDEM_THREAD_ANNOTATION(capability(name))
#define TANDEM_SCOPED_CAPABILITY TANDEM_THREAD_ANNOTATION(scoped_lockable)
#define TANDEM_GUARDED_BY(mu) TANDEM_THREAD_ANNOTATION(guarded_by(mu))
#define TANDEM_REQUIRES(...) TANDEM_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define TANDEM_ACQUIRE(...) TANDEM_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define TANDEM_RELEASE(...) TANDEM_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TANDEM_EXCLUDES(...) TANDEM_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define TANDEM_NO_THREAD_SAFETY_ANALYSIS TANDEM_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace tandem {

class TANDEM_CAPABILITY("mutex") Mutex {
 public:
  void lock() TANDEM_ACQUIRE() { mu_.lock(); }
  void unlock() TANDEM_RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` for its scope.
class TANDEM_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) TANDEM_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() TANDEM_RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// A condition variable waited on with a Mutex held (released while waiting, held again on
// return). Callers loop on their condition, so spurious wake-ups are harmless.
class CondVar {
 public:
  // Returns false at `deadline`.
  bool WaitUntil(Mutex& mu, std::chrono::steady_clock::time_point deadline)
      TANDEM_REQUIRES(mu) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
    return cv_.wait_until(mu, deadline) == std::cv_status::no_timeout;
  }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

}  // namespace tandem
