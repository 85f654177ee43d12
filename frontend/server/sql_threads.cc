#include "frontend/server/sql_threads.h"

#include <cstring>

namespace tandem::frontend {

SqlThreads::~SqlThreads() { Stop(); }

Status SqlThreads::Start(std::size_t threads, std::size_t stack_bytes) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, stack_bytes);
  for (std::size_t i = 0; rc == 0 && i < threads; ++i) {
    pthread_t t;
    rc = pthread_create(&t, &attr, &SqlThreads::Main, this);
    if (rc == 0) threads_.push_back(t);
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    return Status::Internal(std::string("could not start the SQL threads: ") + std::strerror(rc));
  }
  return Status::Ok();
}

void* SqlThreads::Main(void* self) {
  static_cast<SqlThreads*>(self)->Loop();
  return nullptr;
}

void SqlThreads::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(mu_);
      while (tasks_.empty() && !stopping_) {
        (void)cv_.WaitUntil(mu_, std::chrono::steady_clock::now() + std::chrono::hours(1));
      }
      if (tasks_.empty()) return;  // stopping, nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

bool SqlThreads::Post(std::function<void()> task) {
  {
    MutexLock lock(mu_);
    if (stopping_) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.NotifyAll();
  return true;
}

void SqlThreads::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  for (pthread_t t : threads_) pthread_join(t, nullptr);
  threads_.clear();
}

}  // namespace tandem::frontend
