// The one replica launcher of the tools: a real tandem-supervisor started on free loopback ports,
// with a unique replica id, segment name and runtime directory, stopped (SIGTERM, then SIGKILL)
// and cleaned up (segment, directory) when it goes. tandem-bench runs its scenarios on it. Also
// the small process, port and HTTP helpers it needs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem::tools {

// A TCP port nobody listens on right now (the kernel picks it). Throws std::runtime_error. Only
// for endpoints nothing will bind, or that a test binds at once itself: another process may take
// the port before a replica started later binds it. Replicas bind port 0 and say which they got
// (--endpoints-file; ReadEndpointsFile).
int FreePort();
// The ports a supervisor bound, from its --endpoints-file (the port after the last ':' of each
// line); nullopt while the file is missing or incomplete (it is renamed into place whole).
struct BoundPorts {
  int controller = 0;
  int http = 0;
};
std::optional<BoundPorts> ReadEndpointsFile(const std::string& path);
// The ports in `*known`, else read from `endpoints_file` into it, waiting at most `limit` while
// `alive` says the supervisor runs; all zero when the file never came (tried again next call).
const BoundPorts& AwaitBoundPorts(const std::string& endpoints_file,
                                  std::optional<BoundPorts>* known,
                                  const std::function<bool()>& alive,
                                  std::chrono::milliseconds limit);
// "tcp://127.0.0.1:<port>"; port 1, where nothing listens, for a port never bound (0): a client
// then gets no answer and the caller's own bounded wait reports the supervisor's log.
std::string LoopbackEndpoint(int port);
// Replaces the values of --controller-listen-addr and --internal-http-listen-addr in `argv` by
// 127.0.0.1 (or the host given) with these ports: a restart keeps the endpoints its clients know.
void PinPorts(std::vector<std::string>* argv, const BoundPorts& ports);

// A connected TCP socket to 127.0.0.1:port, or -1.
int ConnectLoopback(int port);

struct HttpResult {
  int status = 0;
  std::string body;
};
// GET http://127.0.0.1:port/path (5 s receive timeout); status 0 when nothing answered.
HttpResult HttpGet(int port, const std::string& path);
// The value of one Prometheus sample line ("name{labels} value"), or -1.
double MetricValue(const std::string& text, const std::string& sample);

// The directory of the running executable.
std::string SelfDir();
bool OnPath(const std::string& name);

// Starts argv in its own process group (so ^C reaches only us and we stop it in order), with a
// parent-death signal so it cannot outlive us, output into `log`. Throws std::runtime_error.
pid_t SpawnChild(const std::vector<std::string>& argv, const std::string& log);
// SIGTERM, then SIGKILL after `grace`; reaps. Returns the exit status (128+N for a signal).
int StopChild(pid_t pid, std::chrono::milliseconds grace);

// A fresh directory /tmp/<prefix>-XXXXXX. Throws std::runtime_error.
std::string MakeTempDir(const std::string& prefix);
// A MakeTempDir removed with everything in it when this goes.
struct ScratchDir {
  explicit ScratchDir(const std::string& prefix) : path(MakeTempDir(prefix)) {}
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string path;
};
std::string ReadFile(const std::string& path);

struct ReplicaOptions {
  std::string supervisor;  // the tandem-supervisor binary
  std::string name;        // replicas are <name>x<n>, segments <segment_prefix><name>x<n>
  bool two_runtime = true;
  int workers = 1;
  std::string shm_size = "512MiB";
  std::string segment_prefix = "tandem.bench.";
  std::string temp_prefix = "tandem-bench";  // the runtime directory, /tmp/<temp_prefix>-XXXXXX
  std::string log_level = "warning";
  std::string grace_period = "2";
  std::vector<std::string> extra_args;
};

// The supervisor binds port 0 for both endpoints and writes the ports it got to
// <dir>/endpoints, which endpoint(), Ready() and Metrics() read (waiting for it, bounded): no
// port is chosen here and then lost to another process before the supervisor binds it.
class ReplicaProcess {
 public:
  explicit ReplicaProcess(const ReplicaOptions& o);  // throws std::runtime_error

  // The supervisor's command line for `o` (name and prefixes aside: the ids, directory and
  // endpoints file are given), binding port 0 for both endpoints, for launchers of their own
  // (the tests' SupervisorProcess).
  static std::vector<std::string> Argv(const ReplicaOptions& o, const std::string& replica,
                                       const std::string& segment, const std::string& runtime_dir,
                                       const std::string& endpoints_file);
  ReplicaProcess(const ReplicaProcess&) = delete;
  ReplicaProcess& operator=(const ReplicaProcess&) = delete;
  ~ReplicaProcess() { Stop(); }

  // Stops the supervisor (SIGTERM, SIGKILL after 5 s) and removes its segment and directory.
  void Stop();
  // /readyz answers 200.
  bool Ready() const;
  // Its exit status (128+N for signal N) once it exited; nullopt while it runs.
  std::optional<int> Exited();

  std::string Log() const;
  std::string Metrics() const;  // GET /metrics
  std::string endpoint() const;
  pid_t pid() const { return pid_; }
  const std::string& replica() const { return replica_; }
  const std::string& segment() const { return segment_; }

 private:
  // The bound ports (0 until the endpoints file was read, or if it never came).
  const BoundPorts& Ports() const;

  std::string replica_, segment_, dir_;
  mutable std::optional<BoundPorts> ports_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
};

}  // namespace tandem::tools
