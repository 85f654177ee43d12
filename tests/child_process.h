// Starting a product binary from a test so that it cannot outlive the test process: fork + exec
// with PR_SET_PDEATHSIG = SIGKILL (what the supervisor does for its runtimes), so a test binary
// killed mid-test (a ctest timeout, a crash) takes its supervisors — and, through their own
// parent-death signal, their runtimes — with it.
//
// The parent-death signal follows the *thread* that forked: spawn from a thread that outlives the
// child (every caller here waits for or kills its child before returning).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

extern char** environ;

namespace tandem::testing {

// The test's own environment minus TANDEM_* (so a developer's TANDEM_ENDPOINT, say, cannot point
// a test at the wrong replica), plus `extra` ("NAME=value").
inline std::vector<std::string> ChildEnvironment(bool strip_tandem,
                                                 const std::vector<std::string>& extra = {}) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (!strip_tandem || std::string(*e).rfind("TANDEM_", 0) != 0) env.emplace_back(*e);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// Runs argv[0] (a path) with `env`, stdout on `out_fd` and stderr on `err_fd`. Returns the pid, or
// -1 with errno set when the binary could not be executed.
inline pid_t SpawnTiedToTest(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env, int out_fd, int err_fd) {
  // Everything the child touches is prepared before fork: between fork and exec only
  // async-signal-safe calls.
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int report[2];  // the child writes its exec errno here; close-on-exec, so EOF = exec worked
  if (pipe2(report, O_CLOEXEC) != 0) return -1;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    auto fail = [&](int e) {  // tells the parent why, then dies: the call returns -1 with errno e
      (void)!write(report[1], &e, sizeof e);
      _exit(127);
    };
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(errno);
    if (getppid() != parent) fail(ECHILD);  // the test is already gone
    if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0) fail(errno);
    execve(args[0], args.data(), envp.data());
    fail(errno);
  }
  close(report[1]);
  if (pid < 0) {
    close(report[0]);
    return -1;
  }
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n > 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    errno = child_errno;
    return -1;
  }
  return pid;
}

}  // namespace tandem::testing
