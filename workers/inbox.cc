#include "workers/inbox.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>

#include "base/check.h"

namespace tandem::workers {

Inbox::Inbox() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  TANDEM_CHECK(fd_ >= 0, "could not make the command thread's inbox eventfd");
}

Inbox::~Inbox() { close(fd_); }

// Invariant, under mu_: the eventfd's counter is non-zero exactly when messages_ is not empty. The
// first push into an empty inbox signals, and Take consumes the signal as it takes the messages —
// both under the lock, so no signal can land after the Take that took its message (which would
// leave the eventfd readable over an empty inbox: the command thread's poll would never sleep).
void Inbox::Push(Message message) {
  std::vector<Message> one;
  one.push_back(std::move(message));
  PushAll(std::move(one));
}

void Inbox::PushAll(std::vector<Message> messages) {
  if (messages.empty()) return;
  MutexLock lock(mu_);
  const bool was_empty = messages_.empty();
  std::move(messages.begin(), messages.end(), std::back_inserter(messages_));
  if (!was_empty) return;  // signalled already, not taken yet
  const std::uint64_t one = 1;
  ssize_t n;
  do {
    n = write(fd_, &one, sizeof one);
  } while (n < 0 && errno == EINTR);
  TANDEM_CHECK(n == sizeof one, "could not signal the command thread's inbox");
}

void Inbox::Take(std::vector<Message>* out) {
  out->clear();
  MutexLock lock(mu_);
  if (messages_.empty()) return;  // nothing to take, and (the invariant) no signal: no system call
  std::uint64_t count;
  ssize_t n;
  do {
    n = read(fd_, &count, sizeof count);
  } while (n < 0 && errno == EINTR);
  TANDEM_CHECK(n == sizeof count, "the command thread's inbox held messages but no signal");
  out->swap(messages_);
}

bool Inbox::Signalled() const {
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

}  // namespace tandem::workers
