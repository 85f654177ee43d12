// tandem-supervisor: owns one replica (DESIGN §1, §5).
//
// It creates the segment and a 0700 runtime directory, binds the controller endpoint and the
// internal HTTP endpoint, spawns the runtimes (maintenance + interactive, or one solo) and then
// runs one loop that: validates every command of the controller and of the observers
// (sessions.h) and multiplexes it to the runtimes; forwards their responses — peek and write
// answers to the session that asked, frontiers to every session (observers also get the latest
// frontiers of every collection when they connect: frontiers_cache.h), everything else to the
// controller; answers HTTP; and watches its children.
//
// The catalog: what the replica maintains. While a controller replays its history after its
// Hello, the runtimes hold the replay and keep running what they had until its
// InitializationComplete (they reconcile then), so the catalog is the last complete epoch —
// not the half-replayed one — until then; after it, the controller's epoch, kept current by
// every command accepted. Observers' peeks and writer sessions' writes are validated against it,
// and HelloAccepted's live_indexes lists its indexes.
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
#include <string_view>
#include <unordered_set>
#include <zmq.hpp>

#include "ipc/validate.h"
#include "shm/reader_table.h"
#include "shm/segment.h"
#include "supervisor/config.h"
#include "supervisor/controller_auth.h"
#include "supervisor/frontiers_cache.h"
#include "supervisor/http_server.h"
#include "supervisor/metrics.h"
#include "supervisor/multiplexer.h"
#include "supervisor/peek_path.h"
#include "supervisor/process_group.h"
#include "supervisor/reads.h"
#include "supervisor/sessions.h"
#include "supervisor/systemd_notify.h"

namespace tandem::supervisor {

// "12.3": seconds, for messages (fate.cc).
std::string SecondsText(double s);

class Supervisor {
 public:
  // REQUIRES: `signal_fd` from BlockAndOpenSignalFd(), called before any thread was started.
  // `notify`: systemd's notification socket, if it started us (SystemdNotify::FromEnvironment).
  Supervisor(SupervisorConfig config, int signal_fd, SystemdNotify notify = {});
  ~Supervisor();

  // Runs the replica until shutdown or shared fate; returns the process exit code.
  int Run();

 private:
  using Clock = std::chrono::steady_clock;
  struct Runtime {
    Role id;
    std::unique_ptr<zmq::socket_t> channel;
    std::string endpoint;
    pid_t pid = 0;
    bool ready = false;
    // The number of the next command sent to it (ipc/channel.h: 1, 2, 3, … over every path).
    std::uint64_t next_seq = 1;
    // The peek fast path (DESIGN §14), when this runtime serves peeks and the segment has rings;
    // used once the runtime said it reads them (`peek_ring`, in its RuntimeReady).
    std::unique_ptr<PeekPath> peek_path;
    bool peek_ring = false;
    // Commands for it before it connected (a send finds no peer then): sent, in order, once it
    // says it is ready.
    struct Unsent {
      std::uint64_t seq;
      std::string encoded;
      bool peek;
    };
    std::vector<Unsent> unsent;
    // The stall watch (guards.h): the last progress counter seen, and when it last moved.
    std::uint64_t progress = 0;
    Clock::time_point progress_at;
    bool stalled = false;  // for --runtime-stall-timeout or longer
  };

  // Sends what waited in r.unsent (the runtime is ready now).
  void SendUnsent(Runtime& r);
  int Start();
  int Loop();
  void DeclareMetrics();
  void OnControllerReadable();
  void OnControllerMessage(const std::string& peer, const std::string& payload);
  void OnControllerHello(const std::string& peer, const ipc::pb::Command& hello,
                         const std::string& payload);
  void OnObserverHello(const std::string& peer, const ipc::pb::Command& hello);
  void OnObserverCommand(const std::string& peer, const ipc::pb::Command& command,
                         const std::string& payload);
  // Goodbye, or the connection of `peer` ended (`goodbye` false): it is forgotten.
  void EndSession(const std::string& peer, bool goodbye);
  // Frees what an ended session held. Returns what it was.
  Sessions::Ended ForgetSession(const std::string& peer);
  // `encoded`: the response as the runtime sent it (forwarded as it is).
  void OnFrontiers(const ipc::pb::Response& response, std::string_view encoded);
  // The controller's command `cmd` was forwarded: counts the one-shot dataflows it builds/drops.
  void NoteForwarded(const ipc::pb::Command& cmd);
  // The hold gap series, from the segment (on each scrape of /metrics).
  void SetHoldGaps(const std::vector<shm::SlotInfo>& slots);
  ipc::pb::Response HelloAccepted(const ipc::pb::Hello& hello) const;
  // What the replica maintains (see above).
  const ipc::Catalog& Catalog() const {
    return last_complete_ ? *last_complete_ : validator_.catalog();
  }
  void OnMonitorReadable();
  // Remembers which peer a controller connection's descriptor belongs to (for the monitor's
  // DISCONNECTED events); a descriptor reused by a new peer ends the old peer's session.
  void NotePeerFd(int fd, const std::string& peer);
  void OnRuntimeReadable(Runtime& runtime);
  // Takes what waits in the runtime's peek answer ring (at most 1024 a turn).
  void DrainPeekAnswers(Runtime& runtime);
  // One response of the runtime (`bytes`: as it encoded it), from its channel or answer ring.
  void OnRuntimeMessage(Runtime& runtime, std::string_view bytes);
  // The stall watch: reads every ready runtime's progress counter; marks one that has not moved
  // for --runtime-stall-timeout stalled (not ready), and returns the exit code when one has not
  // moved for --runtime-stall-kill (the replica is down then: shared fate).
  std::optional<int> WatchRuntimes(Clock::time_point now);
  // A Peek or CancelPeek of `session` about to be forwarded: false when it was refused (the
  // in-flight bounds) or needs no forwarding (a CancelPeek of a peek not waiting).
  bool AdmitPeekCommand(const std::string& peer, const ipc::pb::Command& command,
                        SessionId session);
  // A validated WriteTable about to be forwarded: false when it was refused (--max-writes-in-
  // flight).
  bool AdmitWrite(const std::string& peer, const ipc::pb::Command& command);
  // Returns an exit code when the replica must end now.
  std::optional<int> OnSignals();
  // Answers `peer` CommandError{what, why} (what: `command` when empty) and counts the refusal.
  void Refuse(const std::string& peer, const std::string& command, const std::string& reason,
              const std::string& why, const std::string& what = "");
  // Refuse() of a decoded command: a WriteTable's what is DescribeWrite (its whole uuid), so a
  // client with several writes in flight can tell which one was refused.
  void RefuseCommand(const std::string& peer, const ipc::pb::Command& command,
                     const std::string& reason, const std::string& why);
  // Spawn arguments beyond the common ones: --data-dir for the runtime that writes tables.
  std::vector<std::string> RuntimeArgs(Role id) const;
  void HandleUpdateConfiguration(const std::string& peer, const ipc::pb::Command& command);
  // Sends without blocking; false when ZeroMQ refused it (the peer's pipe is full, or the peer is
  // gone), counted in tandem_responses_dropped_total when `count_drop`.
  bool SendToPeer(const std::string& peer, const ipc::pb::Response& response,
                  bool count_drop = true);
  bool SendEncodedToPeer(const std::string& peer, std::string_view bytes, const char* name,
                         bool count_drop = true);
  // Subscribes (DESIGN §10). A validated Subscribe or CancelSubscribe of `session`: refused beyond
  // max_subscribes_per_session or for a uuid already live in the session; as_of "latest" filled
  // in (LatestAsOf) and up_to checked against it; forwarded. `catalog`: what it was validated
  // against.
  void ForwardSubscribeCommand(const std::string& peer, const ipc::pb::Command& command,
                               const std::string& payload, SessionId session,
                               const ipc::Catalog& catalog);
  // max(W - 1, allowed): W the index's write frontier (FrontiersCache; 0 when none reported, or
  // closed), allowed the compaction frontier `catalog` recorded for it (0 when none).
  std::uint64_t LatestAsOf(const std::string& id, const ipc::Catalog& catalog) const;
  // A SubscribeBatch or SubscribeEnd the multiplexer mapped back to `verdict.to`'s uuid: sent to
  // that session; a batch its pipe refuses ends the subscribe TOO_SLOW, an End it refuses waits.
  void DeliverSubscribeAnswer(const Multiplexer::Verdict& verdict,
                              const ipc::pb::Response& response);
  // Sends the SubscribeEnds that wait (a full pipe, or the controller's next Hello).
  void FlushSubscribeEnds();
  // The peer of a live session (the controller's, or an observer's); nullptr when none.
  const std::string* PeerOfSession(SessionId session) const;
  // The subscribe series of /metrics, from the multiplexer (on each scrape).
  void SetSubscribeMetrics();
  // Numbers the command and sends it to the runtime: a peek through the peek fast path when it
  // can, everything else (and a peek that does not fit) on the channel.
  void SendToRuntime(Role id, const std::string& encoded, bool peek);
  // Sends command number `seq` now, or keeps it in r.unsent (in order) while the runtime is not
  // connected yet.
  void Deliver(Runtime& r, std::uint64_t seq, const std::string& encoded, bool peek);
  // The peek rings' counters for /metrics (on each scrape).
  void SetPeekRingMetrics();
  // tandem_runtime_step_seconds and the workers' busy and waiting seconds, copied from the
  // segment's step statistics (shm/layout.h StepStatsData).
  void SetStepMetrics();
  Runtime* FindRuntime(Role id);
  // The runtime with a peek path (it serves peeks and the segment has rings); nullptr if none.
  Runtime* PeekServingRuntime();
  HttpResponse ServeHttp(const std::string& path);
  bool Ready() const;
  // Ends the replica: SIGKILL the group, reap, clean up. Returns `exit_code`.
  int SharedFate(const ChildExit& first, int exit_code);
  // Ends the replica because `stalled` made no progress for --runtime-stall-kill.
  int StallFate(const Runtime& stalled, double seconds);
  int Shutdown(const std::string& why);
  void Cleanup(bool keep_segment);
  // Clears the reader-table entries of local readers that died (their memory is then freed by the
  // publishers) and reports the live ones.
  void SweepReaders(Clock::time_point now);
  void CleanStaleRuntimeDirs();
  bool EnsureRuntimeDir();
  // Start's steps: each returns kExitOk or the exit code (and has cleaned up).
  int CreateSegment();
  int BindEndpoints();
  Status WriteEndpointsFile(const std::string& controller, const std::string& http);
  int BindRuntimeChannels();
  int SpawnRuntimes();

  SupervisorConfig config_;
  int signal_fd_;
  std::string runtime_dir_;
  std::unique_ptr<shm::Segment> segment_;
  // Local readers' table (DESIGN §11), made with the segment and removed with it; swept of dead
  // readers' entries every kReaderSweepInterval.
  std::unique_ptr<shm::ReaderTable> reader_table_;
  Clock::time_point last_reader_sweep_{};
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> router_, monitor_;
  // The loop's ZeroMQ sockets (by handle) whose last operation was a read that found nothing, or
  // ZMQ_EVENTS without POLLIN: their pending commands are processed, so their ZMQ_FD signals
  // whatever comes next, and the loop sleeps on it without asking ZMQ_EVENTS again. A send takes
  // a socket out (it may process a command that makes a message readable without a signal).
  std::unordered_set<void*> quiet_;
  Clock::time_point quiet_since_{};       // when quiet_ was last emptied (at least every 100 ms)
  std::unique_ptr<ControllerAuth> auth_;  // CURVE and its ZAP handler, when configured
  std::unique_ptr<HttpServer> http_;
  std::map<Role, Runtime> runtimes_;
  ProcessGroup children_;
  Metrics metrics_;
  Sessions sessions_;
  FrontiersCache frontiers_;
  OneShots one_shots_;
  ipc::Validator validator_;  // the controller's epoch
  // Set while a controller replays after its Hello and the runtimes still run the previous
  // epoch: that epoch as it was complete (unset when there was nothing to reconcile).
  std::optional<ipc::Catalog> last_complete_;
  std::unique_ptr<Multiplexer> mux_;
  std::map<int, std::string> peer_by_fd_;  // controller connection fd → routing id
  // Per fd: DISCONNECTED events still to come for connections NotePeerFd saw replaced.
  std::map<int, int> stale_disconnects_;
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
  // The addresses BindEndpoints bound (a port 0 in the flags resolved to the kernel's choice).
  std::string bound_controller_, bound_http_;
  bool logged_ready_ = false;
  // READY=1 once ready, STATUS when readiness changes, WATCHDOG=1 from Loop, STOPPING=1.
  SystemdNotify notify_;
  // The readiness line for systemd ("ready: …" or "not ready: …"): computed only when notifying.
  std::string ReadinessStatus() const;
};

}  // namespace tandem::supervisor
