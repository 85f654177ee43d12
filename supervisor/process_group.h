// The runtimes as processes: spawned by fork+exec into one process group (never a bare fork),
// each with a parent-death signal, and reaped here. Shared fate (DESIGN §5) is built on this:
// signalling the group reaches every runtime and anything a runtime started.
//
// Thread safety: none; the supervisor's loop owns it. Signals: the supervisor blocks SIGCHLD,
// SIGTERM, SIGINT and SIGHUP in every thread and reads them from a signalfd; children get an
// empty signal mask and default dispositions before exec.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tandem::supervisor {

struct ChildExit {
  pid_t pid = 0;
  std::string role;
  bool signaled = false;
  int code = 0;  // exit code, or the signal number when signaled
  // 128 + signal, or the exit code.
  int ShellStatus() const { return signaled ? 128 + code : code; }
  std::string Describe() const;  // "killed by signal 9 (Killed)", "exited with code 3"
};

class ProcessGroup {
 public:
  ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Starts argv[0] with `argv` in the group (the first child founds it). Unavailable with the
  // reason when fork or exec fails; the exec error is reported back through a CLOEXEC pipe.
  // `inherit`: descriptors of ours (close-on-exec) that this child alone keeps across exec.
  Result<pid_t> Spawn(const std::string& role, const std::vector<std::string>& argv,
                      const std::vector<int>& inherit = {});

  // kill(-pgid, sig): every runtime and its descendants.
  void SignalAll(int sig);
  // Reaps one exited child without blocking.
  std::optional<ChildExit> ReapOne();
  // Blocks up to `timeout_s` reaping children; true when none is left.
  bool ReapAll(double timeout_s, std::vector<ChildExit>* reaped);

  bool empty() const { return live_.empty(); }
  pid_t pgid() const { return pgid_; }
  const std::map<pid_t, std::string>& live() const { return live_; }

 private:
  pid_t pgid_ = 0;
  std::map<pid_t, std::string> live_;  // pid → role
};

// Blocks the supervisor's signals in the calling thread (call first thing in main, before any
// thread exists, so every thread inherits the mask) and returns a signalfd for them.
Result<int> BlockAndOpenSignalFd();

}  // namespace tandem::supervisor
