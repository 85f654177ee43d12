#include "supervisor/process_group.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace tandem::supervisor {

namespace {

sigset_t SupervisorSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

std::string ChildExit::Describe() const {
  if (signaled) {
    return "killed by signal " + std::to_string(code) + " (" + strsignal(code) + ")";
  }
  return "exited with code " + std::to_string(code);
}

Result<int> BlockAndOpenSignalFd() {
  const sigset_t set = SupervisorSignals();
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) {
    return Status::Internal("pthread_sigmask failed");
  }
  const int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) return Status::Internal(std::string("signalfd: ") + std::strerror(errno));
  return fd;
}

Result<pid_t> ProcessGroup::Spawn(const std::string& role, const std::vector<std::string>& argv,
                                  const std::vector<int>& inherit) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("pipe2: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t group = pgid_;
  const pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return Status::Unavailable(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, group);  // group 0: found a new group with this child as its leader
    // Die with the supervisor, even if it is SIGKILLed; and if it already died, do not start.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    bool inherited = true;
    for (const int fd : inherit) {
      inherited = inherited && fcntl(fd, F_SETFD, 0) == 0;  // kept across exec by this child only
    }
    if (inherited) execv(args[0], args.data());
    const int err = errno;
    (void)!write(pipefd[1], &err, sizeof err);
    _exit(127);
  }
  close(pipefd[1]);
  // Also from the parent, so the group exists before we ever signal it.
  setpgid(pid, group == 0 ? pid : group);
  if (pgid_ == 0) pgid_ = pid;
  int err = 0;
  ssize_t n;
  do {
    n = read(pipefd[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  close(pipefd[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    waitpid(pid, nullptr, 0);
    return Status::Unavailable("could not start the " + role + " runtime '" + argv[0] +
                               "': " + std::strerror(err));
  }
  live_[pid] = role;
  return pid;
}

void ProcessGroup::SignalAll(int sig) {
  if (pgid_ > 0) kill(-pgid_, sig);
}

std::optional<ChildExit> ProcessGroup::ReapOne() {
  int status = 0;
  const pid_t pid = waitpid(-1, &status, WNOHANG);
  if (pid <= 0) return std::nullopt;
  ChildExit e;
  e.pid = pid;
  if (auto it = live_.find(pid); it != live_.end()) {
    e.role = it->second;
    live_.erase(it);
  } else {
    e.role = "unknown child";
  }
  e.signaled = WIFSIGNALED(status);
  e.code = e.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
  return e;
}

bool ProcessGroup::ReapAll(double timeout_s, std::vector<ChildExit>* reaped) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!live_.empty()) {
    while (auto e = ReapOne()) {
      if (reaped) reaped->push_back(*e);
    }
    if (live_.empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // bounded by the deadline
  }
  return live_.empty();
}

}  // namespace tandem::supervisor
