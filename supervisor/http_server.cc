#include "supervisor/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/http_request.h"

namespace tandem::supervisor {

namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

}  // namespace

HttpServer::HttpServer(Handler handler, Limits limits)
    : handler_(std::move(handler)), limits_(limits) {}

HttpServer::~HttpServer() {
  for (const auto& [fd, c] : connections_) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

Status HttpServer::Bind(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon + 1 == host_port.size()) {
    return Status::Unavailable("internal HTTP address '" + host_port + "' is not host:port");
  }
  std::string host = host_port.substr(0, colon);
  const std::string port = host_port.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  // IPv4 unless the address is an IPv6 literal, as ZeroMQ's tcp:// (IPv6 off) did before: a name
  // such as localhost binds its IPv4 address, where the probes connect.
  hints.ai_family = host.find(':') == std::string::npos ? AF_INET : AF_INET6;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host == "*" || host.empty() ? nullptr : host.c_str(), port.c_str(),
                                 &hints, &found);
      rc != 0) {
    return Status::Unavailable("could not bind internal HTTP on " + host_port + ": " +
                               gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      listen_fd_ = fd;
      break;
    }
    error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status::Unavailable("could not bind internal HTTP on " + host_port + ": " + error);
  }
  return Status::Ok();
}

std::string HttpServer::BoundAddress() const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return "";
  }
  char host[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(a6->sin6_port));
  }
  const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
  inet_ntop(AF_INET, &a4->sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(a4->sin_port));
}

void HttpServer::AppendPollItems(std::vector<zmq::pollitem_t>* items) const {
  items->push_back({nullptr, listen_fd_, ZMQ_POLLIN, 0});
  for (const auto& [fd, c] : connections_) {
    items->push_back(
        {nullptr, fd, static_cast<short>(c.out.empty() ? ZMQ_POLLIN : ZMQ_POLLOUT), 0});
  }
}

void HttpServer::OnPoll(const zmq::pollitem_t* items, std::size_t count) {
  // Connections first (the items name them by descriptor; one may have been closed meanwhile),
  // then new ones.
  for (std::size_t i = 1; i < count; ++i) {
    if (items[i].revents == 0) continue;
    auto it = connections_.find(items[i].fd);
    if (it == connections_.end()) continue;
    const bool open = (items[i].revents & ZMQ_POLLOUT) ? OnWritable(it->first, it->second)
                                                       : OnReadable(it->first, it->second);
    if (!open) Close(it->first);
  }
  if (count > 0 && (items[0].revents & ZMQ_POLLIN)) Accept();
}

void HttpServer::Accept() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        spdlog::debug("http: accept: {}", std::strerror(errno));
      }
      return;
    }
    if (connections_.size() >= limits_.max_connections) {
      // Full: the oldest connection goes (it is the nearest to its timeout anyway).
      auto oldest = connections_.begin();
      for (auto c = connections_.begin(); c != connections_.end(); ++c) {
        if (c->second.since < oldest->second.since) oldest = c;
      }
      ++counts_.evicted;
      Close(oldest->first);
    }
    ++counts_.accepted;
    connections_.emplace(fd, Connection{Clock::now(), {}, {}, false});
  }
}

bool HttpServer::OnReadable(int fd, Connection& c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) return false;  // the client closed
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (c.answered) continue;  // draining after the answer: discard
    // Never keep more than the limit: the parser refuses a head that does not fit.
    c.in.append(buf, std::min(static_cast<std::size_t>(n), kMaxHttpRequestBytes - c.in.size()));
    const HttpParse parsed = ParseHttpRequest(c.in);
    switch (parsed.outcome) {
      case HttpParse::Outcome::kIncomplete:
        continue;
      case HttpParse::Outcome::kError:
        ++counts_.bad;
        Answer(c, {parsed.status, "text/plain", parsed.reason + "\n"});
        return OnWritable(fd, c);
      case HttpParse::Outcome::kRequest:
        break;
    }
    if (parsed.request.method != "GET" && parsed.request.method != "HEAD") {
      ++counts_.bad;
      Answer(c, {405, "text/plain", "only GET\n"});
      return OnWritable(fd, c);
    }
    HttpResponse r = handler_(parsed.request.path);
    if (parsed.request.method == "HEAD") r.body.clear();
    ++counts_.answered;
    Answer(c, r);
    return OnWritable(fd, c);
  }
}

void HttpServer::Answer(Connection& c, const HttpResponse& r) {
  c.answered = true;
  c.in.clear();
  c.in.shrink_to_fit();
  c.out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) +
          "\r\nContent-Type: " + r.content_type +
          "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n\r\n" +
          r.body;
}

bool HttpServer::OnWritable(int fd, Connection& c) {
  while (!c.out.empty()) {
    const ssize_t n = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.out.erase(0, static_cast<std::size_t>(n));
  }
  c.out.shrink_to_fit();
  // Answered in full: no more to send. The client reads it and closes; closing here at once,
  // with its unread bytes pending, would reset the connection and could lose the answer. So: end
  // our side, and wait (reading and discarding) for the client's end, or the timeout.
  shutdown(fd, SHUT_WR);
  return true;
}

void HttpServer::Tick(Clock::time_point now) {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (now - it->second.since <= limits_.request_timeout) {
      ++it;
      continue;
    }
    if (!it->second.answered) ++counts_.timed_out;
    const int fd = it->first;
    ++it;
    Close(fd);
  }
}

void HttpServer::Close(int fd) {
  connections_.erase(fd);
  close(fd);
}

}  // namespace tandem::supervisor
