#include "shm/descriptor_handout.h"

#include "shm/registry.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tandem::shm {

namespace {

// The one byte sent with the descriptor: a connection that yields no descriptor is not a handout.
constexpr char kHandoutByte = 'T';

Result<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return Status::InvalidArgument("'" + path + "' is too long for a Unix socket (at most " +
                                   std::to_string(sizeof addr.sun_path - 1) + " bytes)");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Never blocks: a Unix socket connects at once, or fails (EAGAIN when its backlog is full).
// One handout message: the byte, and room for one descriptor (SCM_RIGHTS) beside it.
struct HandoutMessage {
  char byte = kHandoutByte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  HandoutMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  HandoutMessage(const HandoutMessage&) = delete;
  HandoutMessage& operator=(const HandoutMessage&) = delete;
};

int Connect(const sockaddr_un& addr) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<DescriptorHandout>> DescriptorHandout::Start(const std::string& path, int fd,
                                                                    mode_t mode,
                                                                    std::optional<gid_t> gid) {
  auto handout = std::unique_ptr<DescriptorHandout>(new DescriptorHandout());
  handout->fd_ = fd;
  handout->path_ = path;
  handout->fork_generation_ = ForkGeneration();
  TANDEM_ASSIGN_OR_RETURN(const sockaddr_un addr, SocketAddress(path));
  handout->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (handout->listen_fd_ < 0) return Status::FromErrno("socket for " + path);
  if (bind(handout->listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno == EADDRINUSE) return Status::AlreadyExists(path + " exists");
    return Status::FromErrno("bind " + path);
  }
  // Nobody can connect before listen(): the mode and group are in place first.
  auto fail = [&](Status s) -> Result<std::unique_ptr<DescriptorHandout>> {
    (void)unlink(path.c_str());
    return s;
  };
  if ((gid && chown(path.c_str(), static_cast<uid_t>(-1), *gid) != 0) ||
      chmod(path.c_str(), mode) != 0) {
    return fail(Status::FailedPrecondition(ErrnoMessage(
        "giving " + path + (gid ? " to group " + std::to_string(*gid) : std::string()))));
  }
  if (listen(handout->listen_fd_, 128) != 0) return fail(Status::FromErrno("listen " + path));
  handout->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (handout->stop_fd_ < 0) return fail(Status::FromErrno("eventfd"));
  handout->thread_ = std::thread([h = handout.get()] { h->Serve(); });
  return handout;
}

DescriptorHandout::~DescriptorHandout() {
  if (thread_.joinable()) {
    if (ForkGeneration() == fork_generation_) {
      const std::uint64_t one = 1;
      (void)!write(stop_fd_, &one, sizeof one);
      thread_.join();
    } else {
      // A forked child has no such thread: the handle is its parent's, never joined here.
      new std::thread(std::move(thread_));  // NOLINT: deliberately never destroyed
    }
  }
  for (const int fd : {listen_fd_, stop_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void DescriptorHandout::Serve() {
  const std::string source = "/proc/self/fd/" + std::to_string(fd_);
  // At most this many connections per wake, then the stop flag is looked at again: a flood of
  // connections never keeps the thread from stopping.
  constexpr int kAcceptsPerWake = 64;
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("{}: the handout stops: {}", path_, std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    for (int i = 0; i < kAcceptsPerWake; ++i) {
      const int peer = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (peer < 0) {
        if (errno == EMFILE || errno == ENFILE) {
          // Out of descriptors: the pending connection stays queued; try again a little later
          // rather than spin on it.
          failed_.fetch_add(1, std::memory_order_relaxed);
          pollfd stop{stop_fd_, POLLIN, 0};
          (void)poll(&stop, 1, 100);
        }
        break;
      }
      // Answered at once and closed: a peer that never reads costs one socket buffer's byte and
      // a descriptor in flight, and is closed with it.
      const int fresh = open(source.c_str(), O_RDWR | O_CLOEXEC);
      bool sent = false;
      if (fresh >= 0) {
        HandoutMessage m;
        cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fresh, sizeof(int));
        sent = sendmsg(peer, &m.msg, MSG_NOSIGNAL | MSG_DONTWAIT) == 1;
        close(fresh);
      }
      (sent ? handed_ : failed_).fetch_add(1, std::memory_order_relaxed);
      close(peer);
    }
  }
}

Result<ReceivedDescriptor> ReceiveDescriptor(const std::string& path,
                                             std::chrono::milliseconds timeout) {
  TANDEM_ASSIGN_OR_RETURN(const sockaddr_un addr, SocketAddress(path));
  const int sock = Connect(addr);
  if (sock < 0) {
    if (errno == ENOENT) return Status::NotFound("nothing at " + path);
    if (errno == EACCES || errno == EPERM) {
      return Status::FailedPrecondition("permission denied connecting to " + path);
    }
    if (errno == ECONNREFUSED) return Status::Unavailable("nobody serves " + path);
    if (errno == EAGAIN) return Status::Unavailable(path + " is busy (its backlog is full)");
    if (errno == ENOTSOCK) {
      return Status::FailedPrecondition(path + " is not a socket (made by another build?)");
    }
    return Status::Unavailable(ErrnoMessage("connect " + path));
  }
  ReceivedDescriptor received;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    close(sock);
    return Status::FromErrno("SO_PEERCRED of " + path);
  }
  received.server_uid = cred.uid;
  // The answer comes at once from a live server; a signal does not cut the wait short.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int ready = 0;
  for (;;) {
    pollfd pfd{sock, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    ready = poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
    if (ready >= 0 || errno != EINTR) break;
  }
  HandoutMessage m;
  m.byte = 0;
  const ssize_t n = ready == 1 ? recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) : -1;
  close(sock);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg); n == 1 && c != nullptr; c = CMSG_NXTHDR(&m.msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int))) {
      std::memcpy(&received.fd, CMSG_DATA(c), sizeof(int));
    }
  }
  if (received.fd < 0 || m.byte != kHandoutByte) {
    if (received.fd >= 0) close(received.fd);
    return Status::Unavailable(path + " handed out no descriptor within " +
                               std::to_string(timeout.count()) + " ms");
  }
  return received;
}

bool HandoutServed(const std::string& path) {
  auto addr = SocketAddress(path);
  if (!addr.ok()) return false;
  const int sock = Connect(*addr);
  if (sock < 0) return false;
  close(sock);
  return true;
}

}  // namespace tandem::shm
