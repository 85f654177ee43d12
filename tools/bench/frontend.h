// tandem-bench's tandem-frontend: one of the run's own (found beside tandem-bench, or --frontend
// PATH) running its local replica (no --replica: the frontend starts tandem-supervisor --supervisor
// as its child). Its data dir is in a scratch directory under /tmp, its SQL listener on a loopback
// port the kernel chooses, its replica id bench.<--name>xfe (so the segment is
// /dev/shm/tandem.bench.<--name>xfe, beside the bench's other replicas'). Registered for the
// emergency cleanup (a SIGKILLed frontend takes its replica down by the replica's parent-death
// signal); stopped — SIGTERM, which stops the replica, SIGKILL after 30 s — and its segment and
// directory removed when this goes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "tools/bench/bench.h"

namespace tandem::bench {

class Frontend {
 public:
  explicit Frontend(const Options& o);  // throws std::runtime_error
  ~Frontend() { Stop(); }
  Frontend(const Frontend&) = delete;
  Frontend& operator=(const Frontend&) = delete;

  void Stop();
  // Waits until the SQL listener's port and the local replica's endpoints are known (both
  // endpoints files written); throws with the frontend's log when it exited or `limit` passed.
  void WaitListening(std::chrono::seconds limit = 60s);
  // Throws (with its log) when the frontend exited.
  void CheckAlive();

  // libpq's connection string for the SQL listener: database tandem, any user (trust).
  std::string conninfo() const;
  // The local replica's controller endpoint (tcp://127.0.0.1:<port>), for an observer session.
  std::string replica_endpoint() const;
  // GET /metrics of the local replica ("" when it does not answer).
  std::string ReplicaMetrics() const;
  std::string Log() const;
  pid_t pid() const { return pid_; }

 private:
  ScratchDir dir_;  // removed after the frontend stopped (declared first: destroyed last)
  std::string segment_;
  pid_t pid_ = -1;
  int slot_ = -1;
  int sql_port_ = 0;
  std::optional<tools::BoundPorts> replica_;
};

}  // namespace tandem::bench
