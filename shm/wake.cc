#include "shm/wake.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace tandem::shm {

bool FutexWait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
               std::chrono::nanoseconds timeout) {
  const auto ns = timeout.count() < 0 ? 0 : timeout.count();
  struct timespec ts {};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  // FUTEX_WAIT (not _PRIVATE): the word is shared between processes.
  const long rc = syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected,
                          &ts, nullptr, 0);
  return !(rc == -1 && errno == ETIMEDOUT);
}

void FutexWakeAll(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT32_MAX, nullptr,
          nullptr, 0);
}

void WakeSender::Notify(const ChangedSlot& changed) {
  if (!ch_->queue.push(changed)) ch_->overflow.store(1, std::memory_order_seq_cst);
  ch_->seq.fetch_add(1, std::memory_order_seq_cst);
  if (ch_->sleeping.load(std::memory_order_seq_cst) != 0) {
    ch_->wakes_sent.fetch_add(1, std::memory_order_relaxed);
    FutexWakeAll(ch_->seq);
  }
}

bool WakeReceiver::Poll(WakeDrain* out) {
  if (ch_->overflow.exchange(0, std::memory_order_seq_cst) != 0) out->overflowed = true;
  ch_->queue.consume_all([out](const ChangedSlot& c) { out->changed.push_back(c); });
  return !out->empty();
}

std::uint32_t WakeReceiver::Observe() const { return ch_->seq.load(std::memory_order_seq_cst); }

bool WakeReceiver::Wait(WakeDrain* out, std::chrono::nanoseconds timeout) {
  return WaitSince(Observe(), out, timeout);
}

bool WakeReceiver::WaitSince(std::uint32_t seen, WakeDrain* out, std::chrono::nanoseconds timeout) {
  if (Poll(out)) return true;
  ch_->sleeping.store(1, std::memory_order_seq_cst);
  // A notify after `seen` was loaded changed seq, so the futex returns at once: no lost wake.
  if (ch_->seq.load(std::memory_order_seq_cst) == seen) FutexWait(ch_->seq, seen, timeout);
  ch_->sleeping.store(0, std::memory_order_seq_cst);
  return Poll(out);
}

void WakeReceiver::Interrupt() {
  ch_->seq.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(ch_->seq);
}

}  // namespace tandem::shm
