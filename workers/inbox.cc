#include "workers/inbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "base/check.h"

namespace tandem::workers {

Inbox::Inbox() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  TANDEM_CHECK(fd_ >= 0, "could not make the command thread's inbox eventfd");
}

Inbox::~Inbox() { close(fd_); }

void Inbox::Push(Message message) {
  bool was_empty;
  {
    MutexLock lock(mu_);
    was_empty = messages_.empty();
    messages_.push_back(std::move(message));
  }
  // Only the first message after a Take signals: the command thread drains them all at once. (A
  // Take between the push and this write leaves a spurious wake-up: an empty Take, harmless.)
  if (!was_empty) return;
  const std::uint64_t one = 1;
  ssize_t n;
  do {
    n = write(fd_, &one, sizeof one);
  } while (n < 0 && errno == EINTR);
  // EAGAIN only when the counter is at its maximum: readable already.
  TANDEM_CHECK(n == sizeof one || errno == EAGAIN, "could not signal the command thread's inbox");
}

void Inbox::Take(std::vector<Message>* out) {
  out->clear();
  {
    MutexLock lock(mu_);
    if (messages_.empty()) return;  // nothing to take: no system call
  }
  // Consume the wake-up before taking: a push after this read signals again (a push between it and
  // the swap finds the inbox non-empty and does not signal; the swap takes it).
  std::uint64_t count;
  while (read(fd_, &count, sizeof count) < 0 && errno == EINTR) {
  }
  MutexLock lock(mu_);
  out->swap(messages_);
}

}  // namespace tandem::workers
