#include "frontend/pgwire/server.h"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/check.h"
#include "frontend/sqlstate.h"

namespace tandem::pgwire {

namespace {

constexpr std::uint64_t kListenerId = 0;
constexpr std::uint64_t kWakeId = 1;
// Bytes read per recv, and at most per connection per turn; bytes sent at most per connection per
// turn. A turn is one pass over what epoll_wait reported: every ready connection, the listener
// and the sinks' wakes get theirs before any connection gets more.
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kReadPerTurn = 4 * kReadChunk;
constexpr std::size_t kSendPerTurn = 256 * 1024;
constexpr auto kSweepEvery = std::chrono::milliseconds(250);

bool IsLoopback(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(a);
    return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
  }
  if (a->sa_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(a);
    return IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
  }
  return false;
}

// Closes a socket whose last output was handed to the kernel without a linger: what the client
// sent and the server never read is read first (what has arrived — a startup packet), since
// close() answers unread input with RST, which would discard output not yet transmitted.
void CloseNow(int fd) {
  shutdown(fd, SHUT_WR);
  char buf[4096];
  for (int i = 0; i < 16 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0; ++i) {
  }
  close(fd);
}

ErrorFields TooManyConnections(std::size_t max) {
  ErrorFields e = ErrorFields::Fatal(sqlstate::kTooManyConnections, "too many connections");
  e.detail = "The server accepts at most " + std::to_string(max) + " connections.";
  return e;
}

}  // namespace

struct Server::Client {
  Client(std::uint64_t id, int fd, std::unique_ptr<Connection> conn, Clock::time_point now)
      : id(id), fd(fd), conn(std::move(conn)), accepted_at(now), sent_at(now) {}
  const std::uint64_t id;
  const int fd;
  std::unique_ptr<Connection> conn;
  const Clock::time_point accepted_at;
  std::optional<Clock::time_point> closed_at;  // when the connection closed with output left
  // Closed and all its output handed to the kernel: the socket is shut for sending (FIN after
  // the last byte) and the client's input is read and dropped until it closes too or
  // close_timeout passes — closing with its input unread would send RST instead, and a RST
  // discards what the client has not received yet (the FATAL).
  bool lingering = false;
  // When the client last took some of its output, or had none waiting (send_stall_timeout):
  // a send() that wrote, or the socket's send queue shrinking between sweeps (the client read
  // what the kernel held — which may be megabytes, drained long before the socket takes more).
  Clock::time_point sent_at;
  int queued_in_kernel = 0;    // SIOCOUTQ at the last sweep
  std::uint32_t interest = 0;  // the epoll events registered
};

Server::Server(QueryHandlerFactory& factory, ServerOptions options)
    : factory_(factory), options_(std::move(options)) {}

Server::~Server() {
  Stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (reserve_fd_ >= 0) close(reserve_fd_);
}

Status Server::Start() {
  TANDEM_CHECK(listen_fd_ < 0, "Server::Start called twice");
  const std::string& host_port = options_.listen_address;
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size()) {
    return Status::InvalidArgument("SQL listen address '" + host_port + "' is not HOST:PORT");
  }
  std::string host = host_port.substr(0, colon);
  const std::string port = host_port.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = host.find(':') == std::string::npos ? AF_INET : AF_INET6;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Status::InvalidArgument("SQL listen address '" + host_port + "': " + gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (!options_.trust_non_loopback && !IsLoopback(a->ai_addr)) {
      freeaddrinfo(found);
      if (listen_fd_ >= 0) close(listen_fd_);
      listen_fd_ = -1;
      return Status::InvalidArgument(
          "SQL listen address '" + host_port +
          "' is not a loopback address: authentication is trust, so anyone who can reach it "
          "would be let in (TLS and SCRAM are not supported yet)");
    }
    if (listen_fd_ >= 0) continue;
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      listen_fd_ = fd;
      continue;
    }
    error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status::Unavailable("could not listen for SQL on " + host_port + ": " + error);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    return Status::FromErrno("getsockname");
  }
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Status::FromErrno("epoll_create1");
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status::FromErrno("eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerId;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev) != 0) {
    return Status::FromErrno("epoll_ctl(listener)");
  }
  ev.data.u64 = kWakeId;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    return Status::FromErrno("epoll_ctl(eventfd)");
  }
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (reserve_fd_ < 0) return Status::FromErrno("open(/dev/null) for the reserve descriptor");
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

std::string Server::BoundAddress() const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return "";
  }
  char host[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, host,
              sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(port_);
  }
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(port_);
}

void Server::Stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  thread_.join();
}

Server::Counts Server::counts() const {
  Counts c;
  c.accepted = accepted_;
  c.refused = refused_;
  c.timed_out = timed_out_;
  c.open = open_;
  return c;
}

void Server::Wake(std::uint64_t id) {
  MutexLock lock(wake_mu_);
  const bool signal = woken_.empty();
  woken_.push_back(id);
  if (signal) {
    const std::uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
}

void Server::Run() {
  std::vector<epoll_event> events(256);
  Clock::time_point next_sweep = Clock::now() + kSweepEvery;
  while (!stopping_) {
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_sweep - Clock::now());
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                             static_cast<int>(std::max<std::int64_t>(wait.count(), 0)));
    if (n < 0 && errno != EINTR) {
      spdlog::error("pgwire: epoll_wait: {}", std::strerror(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = events[i].data.u64;
      if (id == kListenerId) {
        Accept();
      } else if (id == kWakeId) {
        OnWake();
      } else {
        OnEvent(id, events[i].events);
      }
    }
    if (const auto now = Clock::now(); now >= next_sweep) {
      Sweep(now);
      next_sweep = now + kSweepEvery;
    }
  }
  // Stopping: every session ends with a FATAL it is sent if its socket takes it at once.
  ErrorFields shutdown = ErrorFields::Fatal(sqlstate::kAdminShutdown,
                                            "terminating connection due to administrator command");
  for (auto& [id, c] : clients_) {
    c->conn->Terminate(shutdown);
    const std::string_view out = c->conn->output();
    if (!out.empty()) (void)!send(c->fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    CloseNow(c->fd);
  }
  clients_.clear();  // destroys every connection, and so every handler, on this thread
  open_ = 0;
}

void Server::Accept() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        AcceptStarved(errno);
      } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        spdlog::warn("pgwire: accept: {}", std::strerror(errno));
      }
      return;
    }
    ++accepted_;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (clients_.size() >= options_.max_connections + kMaxRefusedAtOnce) {
      // Too many even to decline politely: the FATAL now, if the socket takes it, and close.
      ++refused_;
      std::string out;
      AppendErrorResponse(out, TooManyConnections(options_.max_connections));
      (void)!send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      CloseNow(fd);
      continue;
    }
    const std::uint64_t id = next_id_++;
    auto conn = std::make_unique<Connection>(factory_, cancels_, options_.connection,
                                             [this, id] { Wake(id); });
    if (clients_.size() >= options_.max_connections) {
      ++refused_;
      conn->RefuseStartup(TooManyConnections(options_.max_connections));
    }
    auto client = std::make_unique<Client>(id, fd, std::move(conn), Clock::now());
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      spdlog::warn("pgwire: epoll_ctl(add): {}", std::strerror(errno));
      close(fd);
      continue;
    }
    client->interest = EPOLLIN;
    clients_.emplace(id, std::move(client));
    ++open_;
  }
}

void Server::AcceptStarved(int error) {
  spdlog::warn("pgwire: accept: {}: refusing a waiting client, accepting none for {} ms",
               std::strerror(error), kSweepEvery.count());
  if (reserve_fd_ >= 0) {
    close(reserve_fd_);
    reserve_fd_ = -1;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      ++accepted_;
      ++refused_;
      ErrorFields e = TooManyConnections(options_.max_connections);
      e.detail = "The server has no file descriptor free for another client.";
      std::string out;
      AppendErrorResponse(out, e);
      (void)!send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      CloseNow(fd);
    }
    reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);  // else Sweep retries
  }
  // Level-triggered, the listener would be reported readable again at once while the backlog
  // waits: disarmed, it costs nothing until Sweep re-arms it.
  epoll_event ev{};
  ev.events = 0;
  ev.data.u64 = kListenerId;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev) == 0) listener_disarmed_ = true;
}

void Server::OnWake() {
  std::uint64_t count;
  (void)!read(wake_fd_, &count, sizeof count);
  std::vector<std::uint64_t> woken;
  {
    MutexLock lock(wake_mu_);
    woken.swap(woken_);
  }
  for (const std::uint64_t id : woken) {
    const auto it = clients_.find(id);
    if (it == clients_.end()) continue;  // gone since: its sink was detached
    it->second->conn->Pump();
    Service(*it->second);
  }
}

void Server::OnEvent(std::uint64_t id, std::uint32_t events) {
  const auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = *it->second;
  if (events & (EPOLLERR | EPOLLHUP)) {
    // Reset, or shut down both ways: nothing can be sent any more.
    Drop(id);
    return;
  }
  if (c.lingering) {
    if (events & EPOLLIN) DrainLingering(c);
    return;
  }
  if (events & EPOLLIN) {
    Read(c);
    if (clients_.count(id) == 0) return;
  }
  Service(c);
}

void Server::Read(Client& c) {
  char buf[kReadChunk];
  std::size_t total = 0;
  while (c.conn->wants_input() && total < kReadPerTurn) {
    const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      total += static_cast<std::size_t>(n);
      c.conn->Receive(std::string_view(buf, static_cast<std::size_t>(n)));
      continue;
    }
    if (n == 0) {
      c.conn->ReceiveEnd();
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) Drop(c.id);  // reset: the client is gone
    return;
  }
}

bool Server::Service(Client& c) {
  std::size_t sent = 0;
  for (;;) {
    std::string_view out = c.conn->output();
    while (!out.empty() && sent < kSendPerTurn) {
      const ssize_t n =
          send(c.fd, out.data(), std::min(out.size(), kSendPerTurn - sent), MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        c.sent_at = Clock::now();
        c.conn->ConsumeOutput(static_cast<std::size_t>(n));
        out = c.conn->output();
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Drop(c.id);  // EPIPE, ECONNRESET: the client is gone
      return false;
    }
    // The socket is full (EPOLLOUT says when it drains), or this turn's share is sent (the socket
    // is writable, so EPOLLOUT reports it again next turn).
    if (!out.empty()) break;
    // All sent: the connection may take more of an answer, or act on input it held back. Past
    // this turn's share, what it takes waits for the next turn.
    c.conn->Pump();
    if (c.conn->output().empty() || sent >= kSendPerTurn) break;
  }
  if (c.conn->output().empty()) c.sent_at = Clock::now();  // nothing waits: nothing stalls
  if (c.conn->closed()) {
    if (!c.closed_at) c.closed_at = Clock::now();
    if (c.conn->output().empty()) {
      // Everything is with the kernel: FIN after it, and the client's input drained until it
      // closes too (close_timeout bounds the wait).
      c.lingering = true;
      shutdown(c.fd, SHUT_WR);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = c.id;
      if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev) != 0) {
        Drop(c.id);
        return false;
      }
      c.interest = EPOLLIN;
      return DrainLingering(c);
    }
  }
  std::uint32_t interest = 0;
  if (c.conn->wants_input()) interest |= EPOLLIN;
  if (!c.conn->output().empty()) interest |= EPOLLOUT;
  if (interest != c.interest) {
    epoll_event ev{};
    ev.events = interest;
    ev.data.u64 = c.id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev) != 0) {
      spdlog::warn("pgwire: epoll_ctl(mod): {}", std::strerror(errno));
      Drop(c.id);
      return false;
    }
    c.interest = interest;
  }
  return true;
}

bool Server::DrainLingering(Client& c) {
  char buf[kReadChunk];
  for (std::size_t total = 0; total < kReadPerTurn;) {
    const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      total += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;  // EPOLLIN: more
    Drop(c.id);  // 0: the client closed too; else it is gone
    return false;
  }
  return true;  // a turn's share: EPOLLIN (level-triggered) reports the rest next turn
}

void Server::Drop(std::uint64_t id) {
  const auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = *it->second;
  if (c.conn->closed()) {
    spdlog::debug("pgwire: connection {} closed: {}", id, c.conn->close_reason());
  } else {
    spdlog::debug("pgwire: connection {} dropped: the client is gone", id);
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  close(c.fd);
  clients_.erase(it);  // the connection, and its handler, end here
  --open_;
}

void Server::Sweep(Clock::time_point now) {
  if (reserve_fd_ < 0) reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (listener_disarmed_) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenerId;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev) == 0) listener_disarmed_ = false;
  }
  std::vector<std::uint64_t> late, unstarted, stalled;
  for (auto& [id, c] : clients_) {
    if (!c->conn->output().empty()) {
      int queued = 0;
      if (ioctl(c->fd, SIOCOUTQ, &queued) == 0) {
        if (queued < c->queued_in_kernel) c->sent_at = now;
        c->queued_in_kernel = queued;
      }
    }
    if (c->closed_at && now - *c->closed_at >= options_.close_timeout) {
      late.push_back(id);
    } else if (c->conn->state() == Connection::State::kStartup &&
               now - c->accepted_at >= options_.startup_timeout) {
      unstarted.push_back(id);
    } else if (!c->conn->closed() && !c->conn->output().empty() &&
               now - c->sent_at >= options_.send_stall_timeout) {
      stalled.push_back(id);
    }
  }
  for (const std::uint64_t id : late) {
    ++timed_out_;
    Drop(id);
  }
  for (const std::uint64_t id : unstarted) {
    ++timed_out_;
    Client& c = *clients_.at(id);
    c.conn->Terminate(
        ErrorFields::Fatal(sqlstate::kQueryCanceled, "canceling authentication due to timeout"));
    Service(c);  // the FATAL, if the socket takes it; then close_timeout bounds the rest
  }
  for (const std::uint64_t id : stalled) {
    ++timed_out_;
    Client& c = *clients_.at(id);
    ErrorFields e = ErrorFields::Fatal(
        sqlstate::kConnectionFailure,
        "terminating connection because the client read none of its output for " +
            std::to_string(options_.send_stall_timeout.count()) + " ms");
    e.detail = "The server buffers at most " +
               std::to_string(options_.connection.output_high_water +
                              options_.connection.max_buffered_bytes) +
               " bytes of results for a client, and sends more only as the client reads.";
    spdlog::info("pgwire: connection {}: {}", id, e.message);
    c.conn->Terminate(e);  // after the output still waiting: sent if the client reads again
    Service(c);
  }
}

}  // namespace tandem::pgwire
