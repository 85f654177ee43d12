// tandem-supervisor: owns one replica (DESIGN §1, §5).
//
// It creates the segment and a 0700 runtime directory, binds the controller endpoint and the
// internal HTTP endpoint, spawns the runtimes (maintenance + interactive, or one solo) and then
// runs one loop. The objects on a command's path, each calling only the next:
//   * ControllerEndpoint (controller_endpoint.h): the ROUTER and its sessions; decodes, validates
//     and admits every command of the controller and of the observers (sessions.h);
//   * Multiplexer (multiplexer.h): routes it to the runtimes' streams;
//   * RuntimeLink (runtime_link.h), one per runtime: numbers it and sends it on the channel or
//     the peek ring.
// Responses come back by return values: the loop takes each from its link (Receive,
// ReceiveAnswer), gets the multiplexer's verdict on it (OnResponse) and hands both to the
// endpoint (Answer) — peek and write answers to the session that asked, frontiers to every
// session (observers also get the latest frontiers of every collection when they connect:
// frontiers_cache.h), everything else to the controller. supervisor/README.md lists the
// functions a Peek and a WriteTable pass through.
//
// The Supervisor itself: start-up (startup.cc), the loop and signals (supervisor.cc), shared fate,
// the stall watch and readiness (fate.cc), and the internal HTTP endpoint with /metrics
// (supervisor_http.cc).
// Writes (DESIGN §9): a WriteTable of the controller or of a writer session goes to the
// maintenance (or solo) runtime, which owns --data-dir; at most --max-writes-in-flight wait for
// their answers at once.
// Shared fate: a runtime exiting for any reason it was not asked to takes the whole replica
// down — the group is SIGKILLed, the segment (unless --keep-segment-on-crash) and the runtime
// directory are removed, and the supervisor exits with 128+signal or 70.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "shm/reader_table.h"
#include "shm/segment.h"
#include "supervisor/config.h"
#include "supervisor/controller_endpoint.h"
#include "supervisor/http_server.h"
#include "supervisor/metrics.h"
#include "supervisor/multiplexer.h"
#include "supervisor/poll.h"
#include "supervisor/process_group.h"
#include "supervisor/runtime_link.h"
#include "supervisor/systemd_notify.h"

namespace tandem::supervisor {

class Supervisor {
 public:
  // REQUIRES: `signal_fd` from BlockAndOpenSignalFd(), called before any thread was started.
  // `notify`: systemd's notification socket, if it started us (SystemdNotify::FromEnvironment).
  Supervisor(SupervisorConfig config, int signal_fd, SystemdNotify notify = {});
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Runs the replica until shutdown or shared fate; returns the process exit code.
  int Run();

 private:
  using Clock = std::chrono::steady_clock;

  // ---- Start-up (startup.cc). Start's steps each return kExitOk or the exit code (and have
  // cleaned up).
  int Start();
  bool EnsureRuntimeDir();
  void CleanStaleRuntimeDirs();
  int CreateSegment();
  int BindEndpoints();
  Status WriteEndpointsFile(const std::string& controller, const std::string& http);
  int BindRuntimeChannels();
  int SpawnRuntimes();
  // Spawn arguments beyond the common ones: --data-dir for the runtime that writes tables.
  std::vector<std::string> RuntimeArgs(Role id) const;

  // ---- The loop (supervisor.cc)
  int Loop();
  // Takes what waits in the runtime's peek answer ring, or on its channel (at most 1024 a turn),
  // and passes each response on.
  void DrainPeekAnswers(RuntimeLink& link);
  void OnRuntimeReadable(RuntimeLink& link);
  // One response `link` received: the multiplexer's verdict on it, then the endpoint's delivery.
  void PassOn(const RuntimeLink& link, RuntimeMessage& message);
  // Returns an exit code when the replica must end now.
  std::optional<int> OnSignals();
  // Clears the reader-table entries of local readers that died (their memory is then freed by the
  // publishers) and reports the live ones.
  void SweepReaders(Clock::time_point now);
  // The runtime with a peek path (it serves peeks and the segment has rings); nullptr if none.
  RuntimeLink* PeekServingRuntime();

  // ---- Shared fate, the stall watch, readiness (fate.cc)
  // The stall watch: reads every ready runtime's progress counter (RuntimeLink::WatchProgress);
  // returns the exit code when one has not moved for --runtime-stall-kill (the replica is down
  // then: shared fate).
  std::optional<int> WatchRuntimes(Clock::time_point now);
  // Ends the replica: SIGKILL the group, reap, clean up. Returns `exit_code`.
  int SharedFate(const ChildExit& first, int exit_code);
  // Ends the replica because `stalled` made no progress for --runtime-stall-kill.
  int StallFate(const RuntimeLink& stalled, double seconds);
  int Shutdown(const std::string& why);
  void Cleanup(bool keep_segment);
  bool Ready() const;
  // The readiness line for systemd ("ready: …" or "not ready: …"): computed only when notifying.
  std::string ReadinessStatus() const;

  // ---- The internal HTTP endpoint and /metrics (supervisor_http.cc)
  void DeclareMetrics();
  HttpResponse ServeHttp(const std::string& path);
  // The hold gap series, from the segment (on each scrape of /metrics).
  void SetHoldGaps(const std::vector<shm::SlotInfo>& slots);
  // The peek rings' counters (on each scrape).
  void SetPeekRingMetrics();
  // tandem_runtime_step_seconds and the workers' busy and waiting seconds, copied from the
  // segment's step statistics (shm/layout.h StepStatsData).
  void SetStepMetrics();
  // The subscribe series, from the multiplexer and the endpoint's frontiers (on each scrape).
  void SetSubscribeMetrics();

  // Declared in dependency order: the links, the multiplexer and the endpoint hold references to
  // what is declared before them (the peek paths point into the segment), and go first.
  SupervisorConfig config_;
  int signal_fd_;
  std::string runtime_dir_;
  std::unique_ptr<shm::Segment> segment_;
  // Local readers' table (DESIGN §11), made with the segment and removed with it; swept of dead
  // readers' entries every kReaderSweepInterval.
  std::unique_ptr<shm::ReaderTable> reader_table_;
  Clock::time_point last_reader_sweep_{};
  zmq::context_t ctx_;
  Metrics metrics_;
  QuietSockets quiet_;                 // the loop's ZeroMQ sockets that need no ZMQ_EVENTS (poll.h)
  std::map<Role, RuntimeLink> links_;  // maintenance + interactive, or solo
  Multiplexer mux_;                    // holds links_
  ControllerEndpoint endpoint_;        // forwards into mux_
  std::unique_ptr<HttpServer> http_;
  ProcessGroup children_;
  Clock::time_point started_at_;
  bool bound_ = false;
  // The --endpoints-file this supervisor wrote (its device, inode and modification time: an inode
  // number alone may be reused once freed): Cleanup removes the file only while it is still that
  // one — another supervisor given the same path by mistake may have replaced it, and its file
  // names ports that are still held.
  struct WrittenFile {
    dev_t device;
    ino_t inode;
    timespec modified;
  };
  std::optional<WrittenFile> endpoints_written_;
  std::string bound_http_;  // the address BindEndpoints bound (port 0 resolved)
  bool logged_ready_ = false;
  // READY=1 once ready, STATUS when readiness changes, WATCHDOG=1 from Loop, STOPPING=1.
  SystemdNotify notify_;
};

}  // namespace tandem::supervisor
