// LocalReplica: the frontend's own replica when no --replica is given — tandem-supervisor as a
// child process, restarted when it dies (as an orchestrator would: DESIGN §13), stopped when the
// frontend exits. The replica driver reconnects to it and replays the history by itself; this
// class only keeps the process running at one endpoint.
//
// The child: `tandem-supervisor --data-dir DATA/replica --replica-id ID --controller-listen-addr
// tcp://127.0.0.1:0 --internal-http-listen-addr 127.0.0.1:0 --endpoints-file
// DATA/replica.endpoints` and the pass-through flags (config.h, LocalReplicaConfig). The first
// start binds ports the kernel chooses and says which in its endpoints file; every restart asks
// for the same ports again, so the driver's endpoint stays valid (a port taken meanwhile makes
// the restart fail and be retried, logged).
//
// Processes and threads. One monitor thread forks the child and waits for it; it lives as long as
// the child may, because the child's parent-death signal (PR_SET_PDEATHSIG, SIGTERM: the
// supervisor then stops its runtimes and removes its segment) fires when the *thread* that forked
// it ends — and when the frontend dies, SIGKILL included. The child runs in its own process group
// (a terminal's ^C reaches the frontend, which stops it in order) with every signal unblocked and
// its output on the frontend's stdout and stderr.
//
// Restarts back off: 250 ms after the first death, doubling to at most 10 s, back to 250 ms once a
// child ran for a minute. Every start and death is logged with its exit status.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "frontend/server/config.h"

namespace tandem::frontend {

// The local replica's segment (its --shm-name): what the frontend's in-place reads attach to.
inline std::string SegmentName(const std::string& replica_id) { return "tandem." + replica_id; }

class LocalReplica {
 public:
  // `data_dir` is the frontend's: the replica's data and endpoints file go below it.
  LocalReplica(LocalReplicaConfig config, std::string data_dir);
  ~LocalReplica();  // Stop
  LocalReplica(const LocalReplica&) = delete;
  LocalReplica& operator=(const LocalReplica&) = delete;

  // Starts the child and waits (bounded: startup_timeout_s) until it said which endpoint it
  // bound. Its controller endpoint; FailedPrecondition (exit 78) when the supervisor binary is
  // missing; Unavailable (exit 69) when it exited or never bound (the child is stopped then).
  Result<std::string> Start();
  // SIGTERM, SIGKILL after the grace period; no restart after it. Idempotent.
  void Stop();

  // The child's pid now (-1 while none runs) and how many times it was started.
  pid_t pid() const;
  std::uint64_t starts() const;

  // The supervisor's command line (ports 0 unless pinned).
  std::vector<std::string> Argv() const;

 private:
  enum class Phase { kStarting, kRunning, kFailed, kStopped };
  void Monitor();
  // Forks and execs argv; -1 (logged) when fork fails.
  pid_t Spawn(const std::vector<std::string>& argv);
  // Waits for the endpoints file of child `pid`: its controller endpoint, or empty when the
  // child exited (its status in *exit_status) or the timeout passed.
  std::string AwaitEndpoints(pid_t pid, int* exit_status);
  // Blocks until child `pid` exits, leaving it unreaped (waitid WNOWAIT); then clears pid_ and
  // reaps it. Its exit status (128+N for signal N).
  int AwaitExit(pid_t pid);
  bool stopping() const;

  const LocalReplicaConfig config_;
  const std::string data_dir_;        // DATA/replica
  const std::string endpoints_file_;  // DATA/replica.endpoints
  std::thread monitor_;

  mutable Mutex mu_;
  CondVar cv_;
  pid_t pid_ TANDEM_GUARDED_BY(mu_) = -1;
  std::uint64_t starts_ TANDEM_GUARDED_BY(mu_) = 0;
  bool stopping_ TANDEM_GUARDED_BY(mu_) = false;
  Phase phase_ TANDEM_GUARDED_BY(mu_) = Phase::kStarting;
  Status start_error_ TANDEM_GUARDED_BY(mu_);
  std::string endpoint_ TANDEM_GUARDED_BY(mu_);  // tcp://127.0.0.1:PORT once bound
  std::string http_ TANDEM_GUARDED_BY(mu_);      // 127.0.0.1:PORT once bound
};

}  // namespace tandem::frontend
