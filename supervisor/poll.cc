#include "supervisor/poll.h"

#include <poll.h>

#include <cerrno>
#include <cstdint>

#include "base/check.h"

namespace tandem::supervisor {

void PollItems(std::vector<zmq::pollitem_t>& items, int timeout_ms, QuietSockets& quiet) {
  thread_local std::vector<pollfd> fds;
  fds.assign(items.size(), pollfd{});
  bool ready = false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    zmq::pollitem_t& item = items[i];
    item.revents = 0;
    if (item.socket == nullptr) {
      fds[i] = {item.fd,
                static_cast<short>(((item.events & ZMQ_POLLIN) ? POLLIN : 0) |
                                   ((item.events & ZMQ_POLLOUT) ? POLLOUT : 0)),
                0};
      continue;
    }
    // A socket's ZMQ_FD says only "look"; a socket polled for POLLOUT could stay "ready" without
    // ever leaving `quiet` (every poll would return at once). The loop polls sockets for input.
    TANDEM_CHECK(item.events == ZMQ_POLLIN,
                 "the supervisor polls its ZeroMQ sockets for input only");
    int fd = -1;
    std::size_t size = sizeof fd;
    TANDEM_CHECK(zmq_getsockopt(item.socket, ZMQ_FD, &fd, &size) == 0, "ZMQ_FD of a socket");
    fds[i] = {fd, POLLIN, 0};
    if (quiet.IsQuiet(item.socket)) continue;
    std::uint32_t events = 0;
    size = sizeof events;
    TANDEM_CHECK(zmq_getsockopt(item.socket, ZMQ_EVENTS, &events, &size) == 0,
                 "ZMQ_EVENTS of a socket");
    item.revents = static_cast<short>(events & static_cast<std::uint32_t>(item.events));
    if (item.revents != 0) {
      ready = true;
    } else {
      quiet.Quiet(item.socket);
    }
  }
  const int rc = poll(fds.data(), fds.size(), ready ? 0 : timeout_ms);
  if (rc < 0) {
    TANDEM_CHECK(errno == EINTR, "poll in the supervisor's loop");
    for (auto& item : items) item.revents = 0;
    return;
  }
  if (rc == 0 && !ready) {
    quiet.Clear();
    return;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    zmq::pollitem_t& item = items[i];
    const short r = fds[i].revents;
    if (item.socket != nullptr) {
      // Found ready by ZMQ_EVENTS, or its ZMQ_FD fired: "look".
      if (r != 0) item.revents = static_cast<short>(item.events & ZMQ_POLLIN);
      if (item.revents != 0) quiet.Stir(item.socket);
      continue;
    }
    if (r & POLLIN) item.revents |= ZMQ_POLLIN;
    if (r & POLLOUT) item.revents |= ZMQ_POLLOUT;
    if (r & POLLPRI) item.revents |= ZMQ_POLLPRI;
    if (r & ~(POLLIN | POLLOUT | POLLPRI)) item.revents |= ZMQ_POLLERR;
  }
}

}  // namespace tandem::supervisor
