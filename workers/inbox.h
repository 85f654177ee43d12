// The command thread's inbox (workers/runtime.h): what the worker threads, the table writer and
// the barrier completions send to the command thread — peek and subscribe parts, frontiers, write
// answers — as messages in memory, in the order they were pushed, with an eventfd that the command
// thread polls beside its channel to the supervisor.
//
// Why not a ZeroMQ inproc socket (what it replaced): each answer was encoded by its sender and
// decoded again by the command thread, and every turn of the command loop asked the inproc socket
// for its events (a getpid and a poll system call each, in zmq_poll's two passes). On the
// machine of issue 17 a system call costs ~1 µs, and a peek's turns paid several dozen of them.
// Here a push into an empty inbox costs one eventfd write, a push into a non-empty one none, and
// the command thread reads the eventfd once per drain.
//
// Thread safety: Push from any thread; Take and fd from the command thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "base/thread_annotations.h"
#include "ipc/codec.h"

namespace tandem::workers {

class Inbox {
 public:
  struct Message {
    std::uint32_t worker = 0;  // the sender (Runtime::kNotAWorker: the table writer, a completion)
    std::uint64_t seq = 0;     // Frontiers: the CreateDataflow the collection belongs to
    ipc::pb::Response response;
    std::size_t bytes = 0;  // a SubscribeBatch: its encoded size (subscribe back-pressure)
  };

  Inbox();
  ~Inbox();
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  // Appends a message; wakes the command thread when the inbox was empty.
  void Push(Message message) TANDEM_EXCLUDES(mu_);
  // Appends messages in order, under one lock: at most one wake-up for all of them.
  void PushAll(std::vector<Message> messages) TANDEM_EXCLUDES(mu_);
  // Moves every message into `out` (cleared first), oldest first, and consumes the wake-up.
  void Take(std::vector<Message>* out) TANDEM_EXCLUDES(mu_);
  // Readable exactly while a message waits (poll it for POLLIN).
  int fd() const { return fd_; }
  // Whether fd() is readable now (tests: it must not be once everything was taken).
  bool Signalled() const;

 private:
  int fd_ = -1;
  Mutex mu_;
  std::vector<Message> messages_ TANDEM_GUARDED_BY(mu_);
};

}  // namespace tandem::workers
