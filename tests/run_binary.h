// Running one of the product's binaries (tandem-ctl, tandem-shm) from a test: arguments, stdout
// and stderr captured separately (both pipes drained together, so neither can fill and stall the
// child), the exit status (128+N when killed by signal N), and a time limit after which the child
// is killed. Safe to call from several threads at once: the pipes are close-on-exec, so a child
// spawned concurrently never holds another child's pipe open.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "child_process.h"

namespace tandem::testing {

struct BinaryRun {
  int exit = -1;  // -1: could not be started
  std::string out, err;
};

struct RunBinaryOptions {
  // Killed (SIGKILL, exit 137) when still running after this long.
  std::chrono::milliseconds limit = std::chrono::seconds(30);
  // Leave the test's TANDEM_* environment variables out of the child's environment, so a
  // developer's TANDEM_ENDPOINT (say) cannot point a test at the wrong replica.
  bool strip_tandem_env = true;
};

inline BinaryRun RunBinary(const std::string& binary, const std::vector<std::string>& args,
                           const RunBinaryOptions& options = {}) {
  BinaryRun run;
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return run;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return run;
  }
  const pid_t pid =
      SpawnTiedToTest(argv, ChildEnvironment(options.strip_tandem_env), out_pipe[1], err_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return run;
  }

  const auto deadline = std::chrono::steady_clock::now() + options.limit;
  bool killed = false;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      if (killed) break;  // a grandchild keeps the pipes open: stop reading
      kill(pid, SIGKILL);
      killed = true;
      continue;
    }
    const int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  // Both pipes closed: the child is exiting, or closed them and runs on past the limit.
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, killed ? 0 : WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (done == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(pid, SIGKILL);
        killed = true;
      } else {
        usleep(1000);
      }
    }
  }
  run.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// Runs `binary` with `args` as user and group `id` (nobody: 65534) with supplementary `groups`,
// stdout captured (stderr is the test's): another local user, for the tests of what the replica
// lets other users do. Needs root; exit 125 when the identity could not be taken.
inline BinaryRun RunAsUser(const std::string& binary, const std::vector<std::string>& args,
                           const std::vector<gid_t>& groups, uid_t id = 65534) {
  int out[2];
  BinaryRun run;
  if (pipe2(out, O_CLOEXEC) != 0) return run;
  std::vector<std::string> argv_strings = {binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], STDOUT_FILENO);
    if (setgroups(groups.size(), groups.data()) != 0 || setgid(id) != 0 || setuid(id) != 0) {
      _exit(125);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return run;
  }
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) run.out.append(buf, n);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// A run's exit status and output, for failure messages.
inline std::string DescribeRun(const BinaryRun& r) {
  return "exit " + std::to_string(r.exit) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

}  // namespace tandem::testing
