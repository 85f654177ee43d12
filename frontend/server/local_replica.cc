#include "frontend/server/local_replica.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tandem::frontend {

using std::chrono::milliseconds;
using LocalClock = std::chrono::steady_clock;

namespace {

constexpr milliseconds kFirstBackoff{250};
constexpr milliseconds kMaxBackoff{10000};
constexpr std::chrono::seconds kStableRun{60};

std::string SelfDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string DescribeExit(int status) {
  if (status > 128) return "signal " + std::to_string(status - 128);
  return "exit code " + std::to_string(status);
}

int ExitStatusOf(const siginfo_t& info) {
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

}  // namespace

LocalReplica::LocalReplica(LocalReplicaConfig config, std::string data_dir)
    : config_(std::move(config)),
      data_dir_(data_dir + "/replica"),
      endpoints_file_(data_dir + "/replica.endpoints") {}

LocalReplica::~LocalReplica() { Stop(); }

std::vector<std::string> LocalReplica::Argv() const {
  std::string endpoint, http;
  {
    MutexLock lock(mu_);
    endpoint = endpoint_;
    http = http_;
  }
  const std::string binary = config_.supervisor_binary.empty()
                                 ? SelfDirectory() + "/tandem-supervisor"
                                 : config_.supervisor_binary;
  char grace[32];
  std::snprintf(grace, sizeof grace, "%g", config_.grace_period_s);
  return {binary,
          "--replica-id",
          config_.replica_id,
          "--data-dir",
          data_dir_,
          "--controller-listen-addr",
          endpoint.empty() ? "tcp://127.0.0.1:0" : endpoint,
          "--internal-http-listen-addr",
          http.empty() ? "127.0.0.1:0" : http,
          "--endpoints-file",
          endpoints_file_,
          "--workers",
          std::to_string(config_.workers),
          "--shm-name",
          SegmentName(config_.replica_id),
          "--shm-size",
          config_.shm_size,
          "--interactive-runtime",
          config_.interactive_runtime,
          "--grace-period",
          grace,
          "--log-level",
          config_.log_level};
}

Result<std::string> LocalReplica::Start() {
  const std::string binary = Argv().front();
  if (access(binary.c_str(), X_OK) != 0) {
    return Status::FailedPrecondition("the local replica's supervisor " + binary +
                                      " is not an executable (" + std::strerror(errno) +
                                      "): install it beside tandem-frontend, pass "
                                      "--supervisor-binary, or give --replica endpoints");
  }
  monitor_ = std::thread([this] { Monitor(); });
  MutexLock lock(mu_);
  while (phase_ == Phase::kStarting) {
    (void)cv_.WaitUntil(mu_, LocalClock::now() + std::chrono::seconds(1));
  }
  if (phase_ != Phase::kRunning) return start_error_;
  return endpoint_;
}

pid_t LocalReplica::pid() const {
  MutexLock lock(mu_);
  return pid_;
}

std::uint64_t LocalReplica::starts() const {
  MutexLock lock(mu_);
  return starts_;
}

bool LocalReplica::stopping() const {
  MutexLock lock(mu_);
  return stopping_;
}

pid_t LocalReplica::Spawn(const std::vector<std::string>& argv) {
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    spdlog::error("local replica: fork failed: {}", std::strerror(errno));
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the frontend died before the prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

std::string LocalReplica::AwaitEndpoints(pid_t pid, int* exit_status) {
  const auto deadline =
      LocalClock::now() + std::chrono::duration_cast<milliseconds>(
                              std::chrono::duration<double>(config_.startup_timeout_s));
  for (auto pause = milliseconds(2);; pause = std::min(pause * 2, milliseconds(50))) {
    std::ifstream in(endpoints_file_);
    std::string controller, http;
    for (std::string line; in && std::getline(in, line);) {
      if (line.rfind("controller_listen_addr=", 0) == 0) controller = line.substr(23);
      if (line.rfind("internal_http_listen_addr=", 0) == 0) http = line.substr(26);
    }
    if (!controller.empty() && !http.empty()) {
      MutexLock lock(mu_);
      endpoint_ = controller;
      http_ = http;
      return controller;
    }
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      *exit_status = AwaitExit(pid);
      return "";
    }
    if (LocalClock::now() >= deadline || stopping()) return "";
    // Bounded polling of a file another process renames into place (as the tests' harness does).
    std::this_thread::sleep_for(pause);
  }
}

int LocalReplica::AwaitExit(pid_t pid) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0) {
    if (errno != EINTR) break;
  }
  {
    // Not reaped yet: until pid_ is cleared, Stop's kill reaches this child and no other.
    MutexLock lock(mu_);
    pid_ = -1;
  }
  cv_.NotifyAll();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return info.si_pid == pid ? ExitStatusOf(info)
                            : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

void LocalReplica::Monitor() {
  milliseconds backoff = kFirstBackoff;
  const auto first_deadline =
      LocalClock::now() + std::chrono::duration_cast<milliseconds>(
                              std::chrono::duration<double>(config_.startup_timeout_s));
  for (;;) {
    std::error_code ec;
    std::filesystem::remove(endpoints_file_, ec);  // a killed supervisor's: stale
    const std::vector<std::string> argv = Argv();
    const pid_t pid = Spawn(argv);
    const auto started = LocalClock::now();
    int status = -1;
    bool up = false;
    if (pid > 0) {
      {
        MutexLock lock(mu_);
        pid_ = pid;
        ++starts_;
      }
      spdlog::info("local replica: started {} (pid {}, --data-dir {})", argv.front(), pid,
                   data_dir_);
      const std::string endpoint = AwaitEndpoints(pid, &status);
      up = !endpoint.empty();
      if (up) {
        spdlog::info("local replica: controller endpoint {} (pid {})", endpoint, pid);
        {
          MutexLock lock(mu_);
          if (phase_ == Phase::kStarting) phase_ = Phase::kRunning;
        }
        cv_.NotifyAll();
        status = AwaitExit(pid);
      } else if (status < 0) {
        // Never bound in time (or stopping meanwhile): it is stopped like any other.
        kill(pid, SIGKILL);
        status = AwaitExit(pid);
      }
    }
    bool first_failed = false;
    {
      MutexLock lock(mu_);
      // The first start exited 69 (unavailable: its segment still held by a replica on its way
      // out, e.g. the one of a frontend SIGKILLed a moment ago): tried again until the timeout.
      const bool retry_start = phase_ == Phase::kStarting && !stopping_ && pid > 0 && !up &&
                               status == kExitUnavailable && LocalClock::now() < first_deadline;
      if (phase_ == Phase::kStarting && !retry_start) {
        phase_ = Phase::kFailed;
        start_error_ = Status::Unavailable(
            "the local replica (" + argv.front() + ") " +
            (pid < 0              ? std::string("could not be started")
             : status >= 0 && !up ? "exited with " + DescribeExit(status) +
                                        " before it bound its endpoints (its log above)"
                                  : "did not bind its endpoints within " +
                                        std::to_string(config_.startup_timeout_s) + " s"));
        first_failed = true;
      }
      if (stopping_) phase_ = Phase::kStopped;
    }
    cv_.NotifyAll();
    if (first_failed || stopping()) return;
    spdlog::warn("local replica: pid {} ended with {}; restarting it in {} ms", pid,
                 DescribeExit(status), backoff.count());
    if (LocalClock::now() - started >= kStableRun) backoff = kFirstBackoff;
    {
      MutexLock lock(mu_);
      const auto until = LocalClock::now() + backoff;
      while (!stopping_ && LocalClock::now() < until) (void)cv_.WaitUntil(mu_, until);
      if (stopping_) return;
    }
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

void LocalReplica::Stop() {
  pid_t pid = -1;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    pid = pid_;
    if (pid > 0) kill(pid, SIGTERM);
  }
  cv_.NotifyAll();
  if (pid > 0) {
    spdlog::info("local replica: stopping pid {} (SIGTERM)", pid);
    const auto grace =
        LocalClock::now() + std::chrono::duration_cast<milliseconds>(
                                std::chrono::duration<double>(config_.grace_period_s));
    MutexLock lock(mu_);
    while (pid_ == pid && LocalClock::now() < grace) (void)cv_.WaitUntil(mu_, grace);
    if (pid_ == pid) {
      spdlog::warn("local replica: pid {} still runs after the grace period: SIGKILL", pid);
      kill(pid, SIGKILL);
    }
  }
  if (monitor_.joinable()) monitor_.join();
  std::error_code ec;
  std::filesystem::remove(endpoints_file_, ec);
}

}  // namespace tandem::frontend
