// Running the real tandem-supervisor in tests: unique replica ids, segment names, ports and
// runtime directories (so ctest -j is safe); bounded waits only; every process killed and every
// file removed when the test ends, whatever happened.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "child_process.h"
#include "ipc/client.h"
#include "ipc/codec.h"
#include "shm/layout.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "tools/common/replica.h"

namespace tandem::testing {

using namespace std::chrono_literals;

// Polls `done` until it holds or `limit` passes. The polling interval is not synchronisation.
inline bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
}

// Ports and the supervisor's HTTP endpoint: the tools' helpers (tools/common/replica.h).
using tools::FreePort;
using tools::HttpGet;
using tools::HttpResult;
using tools::MetricValue;

inline bool ProcessGone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  // A zombie nobody reaped yet is gone as far as running goes.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() &&
         line[close_paren + 2] == 'Z';
}

struct SupervisorOptions {
  std::vector<std::string> extra_args;
  std::string fake_worker_script;  // TANDEM_FAKE_WORKER
  bool two_runtime = true;
  int workers = 1;
  std::string worker_binary = TANDEM_FAKE_WORKER_BIN;  // or TANDEM_WORKER_BIN, the real runtime
  std::string shm_size = "16MiB";
  // A --runtime-dir below the test's own temporary directory (made by the supervisor, if it does
  // not exist), instead of that directory itself.
  std::string runtime_subdir;
  // The supervisor's ZMTP heartbeats towards controllers. Generous by default: on a loaded
  // machine a client's PONG can be late by hundreds of milliseconds, and a connection dropped for
  // that reconnects as a new peer that has not said Hello. Tests of the heartbeat itself shorten
  // them.
  int heartbeat_interval_ms = 300;
  int heartbeat_timeout_ms = 3000;
  // The segment's name (--shm-name); empty: a unique tandem.test.<replica>. Known before the
  // supervisor starts, so a test can put something under it first.
  std::string segment_name;
  // More of the supervisor's environment ("NAME=value"), e.g. systemd's NOTIFY_SOCKET.
  std::vector<std::string> extra_env;
};

class SupervisorProcess {
 public:
  explicit SupervisorProcess(const SupervisorOptions& o = {}) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    static int counter = 0;
    replica_ = "t" + std::to_string(getpid()) + "x" + std::to_string(counter++);
    (void)info;
    segment_ = o.segment_name.empty() ? "tandem.test." + replica_ : o.segment_name;
    char tmpl[] = "/tmp/tandem-test-XXXXXX";
    temp_dir_ = mkdtemp(tmpl);
    log_path_ = temp_dir_ + ".log";
    runtime_parent_ = o.runtime_subdir.empty() ? temp_dir_ : temp_dir_ + "/" + o.runtime_subdir;
    tools::ReplicaOptions flags{
        .supervisor = TANDEM_SUPERVISOR_BIN,
        .two_runtime = o.two_runtime,
        .workers = o.workers,
        .shm_size = o.shm_size,
        .log_level = "debug",
        .grace_period = "2",
        .extra_args = {
            "--worker-binary", o.worker_binary, "--param",
            "controller_heartbeat_interval_ms=" + std::to_string(o.heartbeat_interval_ms),
            "--param",
            "controller_heartbeat_timeout_ms=" + std::to_string(o.heartbeat_timeout_ms)}};
    flags.extra_args.insert(flags.extra_args.end(), o.extra_args.begin(), o.extra_args.end());
    endpoints_file_ = temp_dir_ + ".endpoints";
    argv_ =
        tools::ReplicaProcess::Argv(flags, replica_, segment_, runtime_parent_, endpoints_file_);
    script_ = o.fake_worker_script;
    env_ = o.extra_env;
    pid_ = Spawn(argv_, script_, log_path_, env_);
  }

  // SIGKILLs the supervisor — a crashed pod — and waits (bounded) until it and its runtimes (which
  // follow it: parent-death signal) are gone. False if something is still running after `limit`.
  bool Kill(std::chrono::milliseconds limit = 10s) {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      exit_status_ = 128 + SIGKILL;
      pid_ = -1;
    }
    // The runtimes of this start (after a Restart, WaitReady may not have read them yet).
    std::vector<pid_t> runtimes = runtime_pids_;
    if (auto probe = shm::Segment::Probe(segment_); probe.ok() && probe->header) {
      for (const auto& r : probe->header->runtimes) {
        if (r.pid > 0 && std::find(runtimes.begin(), runtimes.end(), r.pid) == runtimes.end()) {
          runtimes.push_back(r.pid);
        }
      }
    }
    runtime_pids_.clear();
    return Eventually([&] { return std::all_of(runtimes.begin(), runtimes.end(), ProcessGone); },
                      limit);
  }

  // Starts the supervisor again with the same replica id, segment name, ports, directories and
  // flags — the orchestrator restarting the pod. Its stale segment is replaced at start.
  void Restart() {
    exit_status_.reset();
    if (ports_) tools::PinPorts(&argv_, *ports_);
    std::error_code ec;
    std::filesystem::remove(endpoints_file_, ec);  // a SIGKILLed supervisor left it
    pid_ = Spawn(argv_, script_, log_path_ + "." + std::to_string(++restarts_), env_);
  }

  ~SupervisorProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    for (pid_t p : runtime_pids_) kill(p, SIGKILL);
    (void)shm::Segment::Remove(segment_);
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
    std::filesystem::remove(log_path_, ec);
    std::filesystem::remove(endpoints_file_, ec);
    for (int i = 1; i <= restarts_; ++i) {
      std::filesystem::remove(log_path_ + "." + std::to_string(i), ec);
    }
  }

  // Starts argv with stdout+stderr into `log`, TANDEM_FAKE_WORKER set if non-empty, and `env`.
  static pid_t Spawn(const std::vector<std::string>& argv, const std::string& script,
                     const std::string& log, const std::vector<std::string>& env = {}) {
    std::vector<std::string> extra = env;
    if (!script.empty()) extra.push_back("TANDEM_FAKE_WORKER=" + script);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0) << log;
    const pid_t pid = SpawnTiedToTest(argv, ChildEnvironment(true, extra), fd, fd);
    EXPECT_GT(pid, 0) << argv[0] << ": " << strerror(errno);
    if (fd >= 0) close(fd);
    return pid;
  }

  bool WaitReady(std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    if (Ports().http == 0) return false;
    const bool ready =
        Eventually([&] { return Exited() || HttpGet(Ports().http, "/readyz").status == 200; },
                   std::chrono::duration_cast<std::chrono::milliseconds>(
                       deadline - std::chrono::steady_clock::now()));
    if (ready && !Exited()) {
      auto probe = shm::Segment::Probe(segment_);
      if (probe.ok() && probe->header) {
        for (const auto& r : probe->header->runtimes) {
          if (r.pid > 0) runtime_pids_.push_back(r.pid);
        }
      }
    }
    return ready && !Exited();
  }

  // The exit status (128+signal when killed), or nullopt if it is still running after `limit`.
  std::optional<int> WaitExit(std::chrono::milliseconds limit) {
    if (exit_status_) return exit_status_;
    Eventually([&] { return Exited(); }, limit);
    return exit_status_;
  }

  bool Exited() {
    if (exit_status_) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      pid_ = -1;
      return true;
    }
    return false;
  }

  // The log of the current run (after Restart, the restarted supervisor's).
  std::string Log() const {
    std::ifstream in(restarts_ ? log_path_ + "." + std::to_string(restarts_) : log_path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The runtime pids recorded in the segment header (maintenance/solo first).
  const std::vector<pid_t>& runtime_pids() const { return runtime_pids_; }
  bool SegmentExists() const { return std::filesystem::exists("/dev/shm/" + segment_); }
  bool RuntimeDirEmpty() const { return std::filesystem::is_empty(runtime_parent_); }
  const std::string& runtime_parent() const { return runtime_parent_; }

  pid_t pid() const { return pid_; }
  const std::string& segment() const { return segment_; }
  const std::string& endpoints_file() const { return endpoints_file_; }
  // The ports the supervisor bound (it binds port 0 and writes them to its --endpoints-file):
  // these wait for that file, at most 30 s and only while it runs. A supervisor that never bound
  // gives port 1, where nothing listens (so a test's own bounded wait fails and prints the log).
  int http_port() const { return Ports().http > 0 ? Ports().http : 1; }
  std::string controller_endpoint() const { return tools::LoopbackEndpoint(Ports().controller); }

 private:
  std::string replica_, segment_, temp_dir_, runtime_parent_, log_path_;
  std::vector<std::string> argv_;
  std::string script_;
  std::vector<std::string> env_;  // SupervisorOptions::extra_env, again at Restart
  int restarts_ = 0;
  // The ports of the first start: a Restart binds the same ones (PinPorts), so that clients
  // connected before it reconnect to it.
  const tools::BoundPorts& Ports() const {
    auto* self = const_cast<SupervisorProcess*>(this);  // Exited() only reaps and records the exit
    return tools::AwaitBoundPorts(
        endpoints_file_, &ports_, [self] { return !self->Exited(); }, 30s);
  }

  std::string endpoints_file_;
  mutable std::optional<tools::BoundPorts> ports_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::vector<pid_t> runtime_pids_;
};

// A controller for tests: ipc::ControllerClient as a bare DEALER (no linger, no heartbeats, no
// connection monitor, no Goodbye), keeping what ReceiveUntil and Hello skipped in `skipped`.
class TestController {
 public:
  explicit TestController(const std::string& endpoint) : client_(endpoint, {}) {}
  // With CURVE keys (no heartbeats, no Goodbye either; a monitor only for refused handshakes).
  TestController(const std::string& endpoint, const std::optional<ipc::CurveClientKeys>& curve)
      : client_(endpoint, {.curve = curve}) {}
  void SendRaw(const std::string& bytes) { client_.SendRaw(bytes); }
  void Send(const ipc::pb::Command& c) { client_.Send(c); }
  std::optional<ipc::pb::Response> Receive(std::chrono::milliseconds limit = 5s) {
    return client_.Receive(limit);
  }
  // Receives until `match` accepts a response (others are kept in `skipped`).
  std::optional<ipc::pb::Response> ReceiveUntil(
      const std::function<bool(const ipc::pb::Response&)>& match,
      std::chrono::milliseconds limit = 5s) {
    return client_.ReceiveUntil(match, limit, &skipped);
  }
  // Sends Hello (an observer's, read-only, when `observer`) and waits for HelloAccepted.
  bool Hello(const std::string& nonce = "n1", bool observer = false) {
    Send(ipc::MakeHello(nonce, observer));
    return ReceiveUntil(
               [](const auto& r) { return r.has_status() && r.status().has_hello_accepted(); })
        .has_value();
  }
  zmq::socket_t& socket() { return client_.socket(); }
  ipc::ControllerClient& client() { return client_; }
  std::vector<ipc::pb::Response> skipped;

 private:
  ipc::ControllerClient client_;
};

// The registry slots still live in segment `name`, as " u4@0/row1 …" (empty when none).
inline std::string LiveSlots(const std::string& name) {
  auto segment = shm::Segment::Open(name);
  if (!segment.ok()) return "(cannot open the segment: " + segment.status().ToString() + ")";
  shm::Registry registry(segment->get());
  std::string live;
  for (std::uint32_t row = 0; row < registry.workers(); ++row) {
    for (std::uint32_t i = 0; i < registry.slots_per_row(); ++i) {
      const shm::SlotData& slot = registry.slot(row, i);
      if (slot.state.load() == static_cast<std::uint32_t>(shm::SlotState::kLive))
        live += " " + registry.KeyOf(slot).ToString() + "/row" + std::to_string(row);
    }
  }
  return live;
}

}  // namespace tandem::testing
