#include "supervisor/systemd_notify.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace tandem::supervisor {
namespace {

// The value of `name`, removed from the environment (nullopt when unset).
std::optional<std::string> TakeEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  std::string value(v);
  unsetenv(name);
  return value;
}

std::optional<std::uint64_t> ParseUnsigned(const std::string& s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

SystemdNotify SystemdNotify::FromEnvironment() {
  SystemdNotify n;
  const auto socket_name = TakeEnv("NOTIFY_SOCKET");
  const auto usec = TakeEnv("WATCHDOG_USEC");
  const auto pid = TakeEnv("WATCHDOG_PID");
  if (!socket_name || socket_name->empty()) return n;
  std::string address = *socket_name;
  if (address[0] == '@') {
    address[0] = '\0';  // the abstract namespace
  } else if (address[0] != '/') {
    spdlog::warn("NOTIFY_SOCKET={}: neither a path nor @name; not notifying systemd", *socket_name);
    return n;
  }
  if (address.size() > sizeof(sockaddr_un::sun_path)) {
    spdlog::warn("NOTIFY_SOCKET={}: longer than a socket address may be; not notifying systemd",
                 *socket_name);
    return n;
  }
  n.fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (n.fd_ < 0) {
    spdlog::warn("NOTIFY_SOCKET: socket: {}; not notifying systemd", std::strerror(errno));
    return n;
  }
  n.address_ = std::move(address);
  if (usec) {
    const auto period = ParseUnsigned(*usec);
    const auto for_pid = pid ? ParseUnsigned(*pid) : std::optional<std::uint64_t>();
    if (!period || *period == 0 || (pid && !for_pid)) {
      spdlog::warn("WATCHDOG_USEC={} WATCHDOG_PID={}: not a watchdog request; no watchdog pings",
                   *usec, pid.value_or(""));
    } else if (!for_pid || *for_pid == static_cast<std::uint64_t>(getpid())) {
      n.watchdog_ = std::chrono::microseconds(*period);
    }  // else: the watchdog is another process's (our parent's): not ours to ping
  }
  spdlog::info("notifying systemd on {}{}", *socket_name,
               n.watchdog_ ? ", watchdog " + std::to_string(n.watchdog_->count()) + " us" : "");
  return n;
}

SystemdNotify::SystemdNotify(SystemdNotify&& o) noexcept { *this = std::move(o); }

SystemdNotify& SystemdNotify::operator=(SystemdNotify&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    address_ = std::move(o.address_);
    watchdog_ = o.watchdog_;
    last_ping_ = o.last_ping_;
    last_status_ = std::move(o.last_status_);
    ready_sent_ = o.ready_sent_;
    warned_ = o.warned_;
  }
  return *this;
}

SystemdNotify::~SystemdNotify() {
  if (fd_ >= 0) close(fd_);
}

Status SystemdNotify::Send(std::string_view message) {
  if (fd_ < 0) return Status::Ok();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, address_.data(), address_.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
  ssize_t n;
  do {
    n = sendto(fd_, message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
               reinterpret_cast<const sockaddr*>(&addr), len);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(message.size())) return Status::Ok();
  Status failed = Status::Unavailable("could not notify systemd (" +
                                      std::string(n < 0 ? std::strerror(errno) : "short send") +
                                      "): " + std::string(message.substr(0, message.find('\n'))));
  if (!warned_) {
    warned_ = true;
    spdlog::warn("{} (reported once)", failed.message());
  }
  return failed;
}

void SystemdNotify::Ready(std::string_view status) {
  if (fd_ < 0 || ready_sent_) return;
  last_status_ = std::string(status);
  // Not sent (systemd's queue full: the send does not wait): the caller asks again next turn.
  ready_sent_ = Send("READY=1\nSTATUS=" + last_status_).ok();
}

void SystemdNotify::SetStatus(std::string_view status) {
  if (fd_ < 0 || status == last_status_) return;
  last_status_ = std::string(status);
  (void)Send("STATUS=" + last_status_);
}

void SystemdNotify::Stopping(std::string_view status) {
  if (fd_ < 0) return;
  last_status_ = std::string(status);
  (void)Send("STOPPING=1\nSTATUS=" + last_status_);
}

void SystemdNotify::Tick(Clock::time_point now) {
  if (fd_ < 0 || !watchdog_) return;
  if (last_ping_ && now - *last_ping_ < *watchdog_ / 2) return;
  last_ping_ = now;
  (void)Send("WATCHDOG=1");
}

}  // namespace tandem::supervisor
