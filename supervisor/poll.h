// The supervisor loop's poll (DESIGN §14: a peek's latency is mostly wake-ups and system calls):
// zmq_poll's answer for the loop's ZeroMQ sockets and descriptors, with fewer system calls.
//
// zmq_poll makes many system calls each turn (~1 us each): a first pass (a poll with timeout 0,
// then ZMQ_EVENTS of every socket — a getpid and a poll inside libzmq each), then, when nothing
// was ready, the sleeping poll and the same ZMQ_EVENTS pass again. PollItems asks ZMQ_EVENTS once,
// before sleeping, and only of the sockets that are not quiet (QuietSockets).
//
// Thread safety: none; the supervisor's loop owns both.
#pragma once

#include <chrono>
#include <unordered_set>
#include <vector>
#include <zmq.hpp>

namespace tandem::supervisor {

// The loop's ZeroMQ sockets (by handle) whose last operation was a read that found nothing, or
// ZMQ_EVENTS without POLLIN: their pending commands are processed, so their ZMQ_FD signals
// whatever comes next, and the loop sleeps on it without asking ZMQ_EVENTS again.
// Who touches it: whoever reads or sends on one of the loop's sockets (the controller endpoint,
// the runtime links) and PollItems. A read that found nothing makes its socket quiet; a send takes
// it out (it may process a command that makes a message readable without a signal).
class QuietSockets {
 public:
  using Clock = std::chrono::steady_clock;

  void Quiet(void* socket) { quiet_.insert(socket); }
  void Stir(void* socket) { quiet_.erase(socket); }
  bool IsQuiet(void* socket) const { return quiet_.count(socket) > 0; }
  void Clear() { quiet_.clear(); }
  // Every socket is asked again at least every 100 ms, busy or not: were a signal ever missed
  // (every path that may consume one stirs its socket), a message would wait at most that long,
  // never for the loop to go idle.
  void ForgetPeriodically(Clock::time_point now) {
    if (now - cleared_at_ >= std::chrono::milliseconds(100)) {
      quiet_.clear();
      cleared_at_ = now;
    }
  }

 private:
  std::unordered_set<void*> quiet_;
  Clock::time_point cleared_at_{};  // when ForgetPeriodically last emptied it
};

// Fills every item's revents, sleeping up to `timeout_ms` when nothing is ready. ZMQ_EVENTS is
// asked only of the sockets not in `quiet` (it processes the socket's pending commands, so its
// ZMQ_FD then signals anything that arrives later: the socket joins `quiet`). When nothing is
// ready, one poll sleeps on the descriptors and the sockets' ZMQ_FDs. A socket whose ZMQ_FD fired
// is reported readable (its handler reads with dontwait, so a false alarm costs one empty read)
// and leaves `quiet`. (Nothing touches a socket while the loop sleeps, so one whose ZMQ_FD stayed
// quiet has nothing new.) A sleep that times out with nothing at all empties `quiet`: every socket
// is asked again on the next turn. EINTR: nothing is reported.
// REQUIRES: sockets are polled for input only (ZMQ_POLLIN).
void PollItems(std::vector<zmq::pollitem_t>& items, int timeout_ms, QuietSockets& quiet);

}  // namespace tandem::supervisor
