// tandem-bench: what every scenario shares — interruption and emergency cleanup, the
// options, a replica (tools/common/replica.h) registered for that cleanup, the loads.
#pragma once

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <memory>
#include <optional>
#include <vector>

#include "ipc/curve_keys.h"
#include "tools/bench/dataflows.h"
#include "tools/common/replica.h"

namespace tandem::bench {

using Clock = std::chrono::steady_clock;
using tools::ConnectLoopback;
using tools::FreePort;
using tools::OnPath;
using tools::ReadFile;
using tools::ScratchDir;
using tools::SelfDir;
using tools::SpawnChild;
using tools::StopChild;
using namespace std::chrono_literals;

// ^C: the first stops the run (CheckStop throws Interrupted at the next check); a second (or a
// fatal signal after the first) kills every registered child and removes its segment at once.
void OnSignal(int);
// Registers a child for that emergency cleanup; returns its slot (-1 when full).
int RegisterChild(pid_t pid, const std::string& unlink_path);
void UnregisterChild(int slot);

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};
void CheckStop();
void Sleep(std::chrono::milliseconds d);  // CheckStop every 20 ms
inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CURVE keys for the replicas tandem-bench starts (DESIGN §12): a server pair and one authorized
// client pair, made fresh in a scratch directory that lives as long as the run.
struct CurveMaterial {
  CurveMaterial();  // throws std::runtime_error
  ScratchDir dir;
  std::vector<std::string> supervisor_args;  // --curve-secret-key ... --curve-authorized-keys ...
  ipc::CurveClientKeys client;
};

struct Options {
  std::string scenario;
  // --curve: every replica requires CURVE and every client uses the key (curve_keys set then).
  bool curve = false;
  std::shared_ptr<const CurveMaterial> curve_keys;
  std::string supervisor;
  // Appended to every replica's tandem-supervisor command line (a scenario's own settings).
  std::vector<std::string> supervisor_args;
  std::string name = "bench" + std::to_string(getpid());
  double duration = 10;  // seconds per cell
  double warmup = 1;     // seconds of peeks discarded before each cell
  std::size_t min_samples = 10000;
  double max_factor = 15;  // a cell short of min_samples goes on up to this many durations
  bool json = false;
  std::string csv, plot;
  int workers = 1;  // the first of worker_counts: every scenario but ingest's and hydration's
  // --workers N[,N..]: ingest and hydration run their cells for each (speedups against the first).
  std::vector<int> worker_counts = {1};
  std::string shm_size = "512MiB";
  bool shm_size_set = false;
  std::uint64_t keys = 100000;       // the point-lookup index
  std::uint64_t light_updates = 10;  // per 1 ms tick on the point-lookup index's source
  std::uint64_t heavy_keys = 100000;
  std::uint64_t heavy_updates = 2000;  // per tick, tick_interval_us = heavy_tick_us
  std::uint64_t heavy_tick_us = 0;
  std::int64_t groups = 16;
  std::uint64_t max_keys = 1000000;
  std::uint64_t min_keys = 10000;
  std::uint64_t ingest_keys = 1000000;
  std::uint64_t ingest_updates = 10000;
  // hydration: the index sizes built, those above hydration_max_keys left out.
  std::vector<std::uint64_t> hydration_keys = {1000000, 10000000};
  std::uint64_t hydration_max_keys = 10000000;
  std::uint64_t memory_keys = 100000;
  std::uint64_t memory_updates = 200;
  // slow-path: the one-shot aggregate's index sizes, samples per cell, groups, plan.
  std::vector<std::uint64_t> slow_keys = {100000, 1000000};
  std::size_t slow_samples = 1000;
  std::int64_t slow_groups = 100;
  bool slow_arranged = true;  // --slow-plan arranged (default) | mapped
  // join: the fact stream and the dimension (key_value sources, as fast as possible), and which
  // parts run (all | throughput | isolation).
  std::uint64_t join_fact_keys = 1000000;
  std::uint64_t join_fact_updates = 10000;
  std::uint64_t join_dim_keys = 10000;
  std::uint64_t join_dim_updates = 100;
  std::string join_part = "all";
  std::uint64_t join_rounds = 3;  // throughput rounds per variant (ABBA order)
  // write: rounds (each metric the median over them), writes in flight per client, the keys the
  // rows are drawn from, the "many clients" count.
  std::uint64_t write_rounds = 3;
  std::uint64_t write_window = 16;
  std::uint64_t write_keys = 100000;
  std::uint64_t write_clients = 8;
  std::string write_part = "all";  // all | tandem | redis
  // subscribe: the "many" subscriber sessions, the client threads they share, how often the
  // publication watcher polls the index's slot uppers (µs).
  std::uint64_t subscribers = 100;
  std::uint64_t subscribe_threads = 4;
  std::uint64_t watch_us = 100;
  std::uint64_t subscribe_updates = 10;     // per tick of the subscribed index
  std::uint64_t subscribe_tick_us = 10000;  // 100 ticks/s
  std::string subscribe_mode = "all";       // all | solo | two-runtime
  std::uint64_t subscribe_rounds = 3;       // cost rounds (N subscribers, N observers, no session)
  // local (DESIGN §11): the keys of the index every reader reads (LocalReader, the network peek,
  // Redis and LMDB over the same keys), and which parts run.
  std::uint64_t local_keys = 1000000;
  std::string local_part = "all";  // all | tandem | peers
  // sql (DESIGN §15): the tandem-frontend binary (default: beside tandem-bench), the rows of the
  // table read by key, and the alternating rounds the cells are measured in.
  std::string frontend;
  std::uint64_t sql_keys = 100000;
  std::uint64_t sql_rounds = 6;
  bool quiet = false;
};

// The progress line `fmt` (one %s: `what`) on stderr, unless --quiet.
void Progress(const Options& o, const char* fmt, const std::string& what);

// A tools::ReplicaProcess registered for the emergency cleanup, whose failures throw.
class Replica {
 public:
  explicit Replica(const tools::ReplicaOptions& o)
      : process_(o), two_runtime_(o.two_runtime), workers_(o.workers) {
    slot_ = RegisterChild(process_.pid(), "/dev/shm/" + process_.segment());
  }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;
  ~Replica() { Stop(); }

  void Stop() {
    process_.Stop();
    UnregisterChild(slot_);
    slot_ = -1;
  }
  // Throws when it is not ready within `limit`, or exited.
  void WaitReady(std::chrono::seconds limit = 60s);
  // Throws when the supervisor exited (or was stopped).
  void CheckAlive();
  double SegmentBytesUsed() const;
  // Each lockstep worker's cumulative step statistics (the maintenance runtime's, or solo's),
  // from /metrics (tandem_runtime_worker_busy_seconds_total and _waiting_, and the steps of
  // tandem_runtime_step_seconds), worker 0 first.
  struct WorkerSeconds {
    double busy = 0, waiting = 0, steps = 0;
  };
  std::vector<WorkerSeconds> StepTimes() const;
  // tandem_peek_latency_seconds {sum, count}: the supervisor's view of a peek (from forwarding it
  // to the runtime until its answer came back), without the client <-> supervisor hop.
  std::pair<double, double> SupervisorPeekLatency() const;
  // The stalls the supervisor's stall watch has reported so far, over every runtime
  // (tandem_runtime_stalls_total).
  double RuntimeStalls() const;
  // tandem_one_shot_build_to_answer_seconds {sum, count}.
  std::pair<double, double> SupervisorOneShotLatency() const;
  // The pid of the replica's runtime of `role` ("maintenance", "interactive", "solo"): the child
  // of its supervisor started with --role `role`. Throws when there is none.
  pid_t RuntimePid(const std::string& role) const;
  std::string endpoint() const { return process_.endpoint(); }
  // Its shared-memory segment's name (Segment::Open's, without /dev/shm/).
  const std::string& segment() const { return process_.segment(); }
  std::string Log() const { return process_.Log(); }
  std::string Metrics() const { return process_.Metrics(); }  // GET /metrics
  pid_t pid() const { return process_.pid(); }                // the supervisor's
  bool two_runtime() const { return two_runtime_; }
  int workers() const { return workers_; }

 private:
  tools::ReplicaProcess process_;
  bool two_runtime_;
  int workers_;
  int slot_ = -1;
};

constexpr char kLightSource[] = "u1";
constexpr char kLightIndex[] = "u2";
constexpr char kHeavySource[] = "u3";
constexpr char kHeavyIndex[] = "u4";
constexpr char kHeavyReduce[] = "u5";
constexpr char kHeavyReduceIndex[] = "u6";

tools::ReplicaOptions ReplicaFor(const Options& o, bool two_runtime);
// The client keys when `o.curve`.
std::optional<ipc::CurveClientKeys> ClientKeys(const Options& o);
KeyValue LightLoad(const Options& o, std::uint64_t keys);
KeyValue HeavyLoad(const Options& o);
// The segment for an index of `keys` keys: --shm-size when given, else its default up to 2*10^6
// keys and ~400 bytes a key beyond (~85 bytes a key, twice that while the spine merges, and room).
std::string ShmSizeFor(const Options& o, std::uint64_t keys);
// How long an index of `keys` keys may take to build.
std::chrono::seconds BuildLimit(std::uint64_t keys);
// A memory field of /proc/`pid`/status, in bytes (0 when it cannot be read): VmRSS by default
// (which counts the pages of the segment the process touched), RssAnon for its private memory.
double RssBytes(pid_t pid, const std::string& field = "VmRSS");
// CPU seconds (user + system) of process `pid` so far, all its threads (0 when it cannot be read).
double CpuSeconds(pid_t pid);
// CPU seconds the whole machine spent busy so far, every CPU together (/proc/stat; 0 when it
// cannot be read): with CpuSeconds, what else ran during a measurement.
double MachineBusySeconds();

}  // namespace tandem::bench
