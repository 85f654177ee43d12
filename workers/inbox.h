// The command thread's inbox (workers/runtime.h): what the worker threads, the table writer and
// the barrier completions send to the command thread — peek and subscribe parts, frontiers, write
// answers — as messages in memory, in the order they were pushed, with an eventfd that the command
// thread polls beside its channel to the supervisor.
//
// Cost, which a peek's answer pays on every turn: no encoding (a message is the Response itself)
// and no system call per message — a push into an empty inbox costs one eventfd write, a push into
// a non-empty one none, and the command thread reads the eventfd once per drain. (A ZeroMQ inproc
// socket would encode and decode every answer and ask the socket for its events on every turn of
// the command loop: a getpid and a poll system call each, in zmq_poll's two passes, at ~1 µs
// apiece — several dozen per peek.)
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
