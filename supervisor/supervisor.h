// tandem-supervisor: owns one replica (DESIGN §1, §5).
//
// It creates the segment and a 0700 runtime directory, binds the controller endpoint and the
// internal HTTP endpoint, spawns the runtimes (maintenance + interactive, or one solo) and then
// runs one loop that: validates every controller command and multiplexes it to the runtimes;
// forwards their responses to the active controller; answers HTTP; and watches its children.
// Shared fate: a runtime exiting for any reason it was not asked to takes the whole replica
// down — the group is SIGKILLed, the segment (unless --keep-segment-on-crash) and the runtime
// directory are removed, and the supervisor exits with 128+signal or 70.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "ipc/validate.h"
#include "shm/segment.h"
#include "supervisor/config.h"
#include "supervisor/controllers.h"
#include "supervisor/http_server.h"
#include "supervisor/metrics.h"
#include "supervisor/multiplexer.h"
#include "supervisor/process_group.h"

namespace tandem::supervisor {

class Supervisor {
 public:
  // REQUIRES: `signal_fd` from BlockAndOpenSignalFd(), called before any thread was started.
  Supervisor(SupervisorConfig config, int signal_fd);
  ~Supervisor();

  // Runs the replica until shutdown or shared fate; returns the process exit code.
  int Run();

 private:
  using Clock = std::chrono::steady_clock;
  struct Runtime {
    RuntimeId id;
    std::unique_ptr<zmq::socket_t> channel;
    std::string endpoint;
    pid_t pid = 0;
    bool ready = false;
  };

  int Start();
  int Loop();
  void DeclareMetrics();
  void OnControllerReadable();
  void OnControllerMessage(const std::string& peer, const std::string& payload);
  void OnMonitorReadable();
  void OnRuntimeReadable(Runtime& runtime);
  // Returns an exit code when the replica must end now.
  std::optional<int> OnSignals();
  void Refuse(const std::string& peer, const std::string& command, const std::string& reason,
              const std::string& why);
  void HandleUpdateConfiguration(const std::string& peer, const ipc::pb::Command& command);
  void SendToPeer(const std::string& peer, const ipc::pb::Response& response);
  void SendToRuntime(RuntimeId id, const std::string& encoded);
  Runtime* FindRuntime(RuntimeId id);
  HttpResponse ServeHttp(const std::string& path);
  bool Ready() const;
  // Ends the replica: SIGKILL the group, reap, clean up. Returns `exit_code`.
  int SharedFate(const ChildExit& first, int exit_code);
  int Shutdown(const std::string& why);
  void Cleanup(bool keep_segment);
  void CleanStaleRuntimeDirs();

  SupervisorConfig config_;
  int signal_fd_;
  std::string runtime_dir_;
  std::unique_ptr<shm::Segment> segment_;
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> router_, monitor_;
  std::unique_ptr<HttpServer> http_;
  std::map<RuntimeId, Runtime> runtimes_;
  ProcessGroup children_;
  Metrics metrics_;
  ControllerSessions sessions_;
  ipc::Validator validator_;
  std::unique_ptr<Multiplexer> mux_;
  std::map<int, std::string> peer_by_fd_;  // controller connection fd → routing id
  Clock::time_point started_at_;
  bool bound_ = false;
  bool logged_ready_ = false;
};

}  // namespace tandem::supervisor
