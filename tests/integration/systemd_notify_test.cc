// The supervisor under systemd (Type=notify, issue 18): READY=1 when /readyz first answers 200,
// WATCHDOG=1 from its loop, STOPPING=1 on SIGTERM — against a fake $NOTIFY_SOCKET (the datagram
// protocol of sd_notify(3), which is all systemd reads).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <fstream>
#include <string>
#include <vector>

#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

// A datagram socket in systemd's place: bound to a path in a temporary directory, or to a name
// in the abstract namespace ("@…" in NOTIFY_SOCKET).
class FakeNotifySocket {
 public:
  explicit FakeNotifySocket(bool abstract) : dir_("notify") {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0) << std::strerror(errno);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    static int counter = 0;
    std::string path;
    if (abstract) {
      name_ = "@tandem-test-notify-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
      path = std::string(1, '\0') + name_.substr(1);
    } else {
      name_ = dir_.path() + "/notify";
      path = name_;
    }
    std::memcpy(addr.sun_path, path.data(), path.size());
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
  }
  ~FakeNotifySocket() {
    if (fd_ >= 0) close(fd_);
  }

  std::string Env() const { return "NOTIFY_SOCKET=" + name_; }

  // The next datagram, or nullopt after `limit`.
  std::optional<std::string> Receive(std::chrono::milliseconds limit) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(limit.count())) != 1) return std::nullopt;
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    std::string m(buf, static_cast<std::size_t>(n));
    received_.push_back(m);
    return m;
  }

  // Datagrams until one has the line `line` (e.g. "READY=1"); that one, or nullopt after `limit`.
  std::optional<std::string> WaitFor(const std::string& line, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto m = Receive(left);
      if (!m) return std::nullopt;
      if (HasLine(*m, line)) return m;
    }
  }

  static bool HasLine(const std::string& message, const std::string& line) {
    std::size_t at = 0;
    while (at <= message.size()) {
      const std::size_t end = std::min(message.find('\n', at), message.size());
      if (message.compare(at, end - at, line) == 0) return true;
      at = end + 1;
    }
    return false;
  }

  const std::vector<std::string>& received() const { return received_; }

 private:
  TempDir dir_;
  std::string name_;
  int fd_ = -1;
  std::vector<std::string> received_;
};

std::string Environ(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void ExpectReadyThenStopping(FakeNotifySocket& notify, SupervisorProcess& sup) {
  const auto ready = notify.WaitFor("READY=1", 20s);
  ASSERT_TRUE(ready) << "no READY=1\n" << sup.Log();
  // READY=1 comes with the first 200 of /readyz, never before it; both stay until a stall.
  EXPECT_EQ(HttpGet(sup.http_port(), "/readyz").status, 200);
  EXPECT_TRUE(FakeNotifySocket::HasLine(
      *ready, "STATUS=ready: controller endpoint " + sup.controller_endpoint()))
      << *ready;
  for (const auto& m : notify.received()) {
    if (&m == &notify.received().back()) break;
    EXPECT_FALSE(FakeNotifySocket::HasLine(m, "READY=1")) << "READY=1 sent twice";
  }
  ASSERT_TRUE(sup.WaitReady());
  // The runtimes never inherit the socket: they must not speak for the unit.
  ASSERT_FALSE(sup.runtime_pids().empty());
  for (pid_t p : sup.runtime_pids()) {
    const std::string env = Environ(p);
    EXPECT_FALSE(env.empty()) << "runtime " << p;
    EXPECT_EQ(env.find("NOTIFY_SOCKET="), std::string::npos) << "runtime " << p;
    EXPECT_EQ(env.find("WATCHDOG_USEC="), std::string::npos) << "runtime " << p;
  }
  kill(sup.pid(), SIGTERM);
  const auto stopping = notify.WaitFor("STOPPING=1", 10s);
  EXPECT_TRUE(stopping) << sup.Log();
  EXPECT_EQ(sup.WaitExit(10s), 0) << sup.Log();
}

TEST(SystemdNotify, ReadyIsSentWhenReadyzFirstAnswers200AndStoppingOnSigterm) {
  FakeNotifySocket notify(false);
  SupervisorProcess sup({.extra_env = {notify.Env()}});
  ExpectReadyThenStopping(notify, sup);
}

TEST(SystemdNotify, AnAbstractSocketNameWorksToo) {
  FakeNotifySocket notify(true);
  SupervisorProcess sup({.extra_env = {notify.Env()}});
  ExpectReadyThenStopping(notify, sup);
}

TEST(SystemdNotify, TheLoopPingsTheWatchdogWhenSystemdAsksForOne) {
  FakeNotifySocket notify(false);
  // 200 ms: a ping every 100 ms or so. Only their arrival is checked, never their timing.
  SupervisorProcess sup({.extra_env = {notify.Env(), "WATCHDOG_USEC=200000"}});
  ASSERT_TRUE(notify.WaitFor("READY=1", 20s)) << sup.Log();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(notify.WaitFor("WATCHDOG=1", 10s)) << "ping " << i << "\n" << sup.Log();
  }
  ASSERT_TRUE(sup.WaitReady());
  for (pid_t p : sup.runtime_pids()) {
    EXPECT_EQ(Environ(p).find("WATCHDOG_USEC="), std::string::npos) << "runtime " << p;
  }
}

TEST(SystemdNotify, AWatchdogMeantForAnotherPidIsNotPinged) {
  FakeNotifySocket notify(false);
  SupervisorProcess sup({.extra_env = {notify.Env(), "WATCHDOG_USEC=100000", "WATCHDOG_PID=1"}});
  ASSERT_TRUE(notify.WaitFor("READY=1", 20s)) << sup.Log();
  // Another turn of the loop sends nothing: HTTP requests turn it, and a second would have been
  // long enough for ten pings.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(HttpGet(sup.http_port(), "/livez").status, 200);
  EXPECT_FALSE(notify.WaitFor("WATCHDOG=1", 1s)) << "pinged a watchdog that is not ours";
}

TEST(SystemdNotify, ASocketNobodyListensOnIsLoggedOnceAndTheReplicaServes) {
  const TempDir dir("notify-missing");
  SupervisorProcess sup({.extra_env = {"NOTIFY_SOCKET=" + dir.path() + "/nobody"}});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  EXPECT_TRUE(Eventually(
      [&] { return sup.Log().find("could not notify systemd") != std::string::npos; }, 10s))
      << sup.Log();
  kill(sup.pid(), SIGTERM);
  EXPECT_EQ(sup.WaitExit(10s), 0) << sup.Log();
  const std::string log = sup.Log();
  const auto first = log.find("could not notify systemd");
  EXPECT_EQ(log.find("could not notify systemd", first + 1), std::string::npos)
      << "warned more than once:\n"
      << log;
}

}  // namespace
}  // namespace tandem::testing
