// tandem-bench (issue #6): measures what Tandem exists for — reads that stay fast while
// maintenance is busy, and compact shared indexes — by starting real supervisors and driving them
// over the controller endpoint like any client. Every process it starts is stopped and every
// segment and temporary directory removed, on every path (errors and ^C included).
//
//   tandem-bench isolation|lookup-scale|ingest|memory|redis|all [--duration S] [--json]
//                [--csv FILE] [--plot FILE.png] [--workers N] [--supervisor PATH] ...
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "ipc/client.h"
#include "ipc/codec.h"

namespace tandem::bench {
namespace {

namespace pb = ipc::pb;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// Interruption and emergency cleanup

std::atomic<bool> g_stop{false};

// What a second ^C (or a fatal signal after the first) must still clean up, in plain arrays so
// the signal handler only touches async-signal-safe state.
constexpr int kMaxChildren = 16;
struct EmergencyEntry {
  std::atomic<pid_t> pid{0};
  char unlink_path[256] = {};
};
EmergencyEntry g_children[kMaxChildren];

void OnSignal(int) {
  if (g_stop.exchange(true)) {
    for (auto& c : g_children) {
      const pid_t pid = c.pid.load();
      if (pid > 0) {
        kill(pid, SIGKILL);
        if (c.unlink_path[0] != '\0') unlink(c.unlink_path);
      }
    }
    _exit(130);
  }
}

int RegisterChild(pid_t pid, const std::string& unlink_path) {
  for (int i = 0; i < kMaxChildren; ++i) {
    pid_t expected = 0;
    auto& c = g_children[i];
    if (c.pid.load() == 0) {
      std::snprintf(c.unlink_path, sizeof c.unlink_path, "%s", unlink_path.c_str());
      if (c.pid.compare_exchange_strong(expected, pid)) return i;
    }
  }
  return -1;
}

void UnregisterChild(int slot) {
  if (slot >= 0) g_children[slot].pid.store(0);
}

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

void CheckStop() {
  if (g_stop.load()) throw Interrupted();
}

void Sleep(std::chrono::milliseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
    CheckStop();
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), 20ms));
  }
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---------------------------------------------------------------------------------------------
// Small system helpers

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    throw std::runtime_error("bind: " + std::string(strerror(errno)));
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

struct HttpResult {
  int status = 0;
  std::string body;
};

HttpResult HttpGet(int port, const std::string& path) {
  HttpResult r;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return r;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req =
      "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return r;
  }
  std::string resp;
  char buf[8192];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<size_t>(n));
  close(fd);
  if (resp.rfind("HTTP/1.1 ", 0) == 0 && resp.size() >= 12) r.status = std::atoi(resp.c_str() + 9);
  if (auto p = resp.find("\r\n\r\n"); p != std::string::npos) r.body = resp.substr(p + 4);
  return r;
}

// The value of one Prometheus sample line ("name{labels} value"), or -1.
double MetricValue(const std::string& text, const std::string& sample) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(sample + " ", 0) == 0) return std::atof(line.c_str() + sample.size() + 1);
  }
  return -1;
}

std::string SelfDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(in, dir, ':');) {
    if (access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// Starts argv in its own process group (so ^C reaches only us and we stop it in order), with a
// parent-death signal so it cannot outlive us, output into `log`.
pid_t SpawnChild(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// SIGTERM, then SIGKILL after `grace`; reaps. Returns the exit status (128+N for a signal).
int StopChild(pid_t pid, std::chrono::milliseconds grace) {
  int status = 0;
  kill(pid, SIGTERM);
  const auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(10ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return 128 + SIGKILL;
}

// A fresh directory /tmp/<prefix>-XXXXXX.
std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp: " + std::string(strerror(errno)));
  return tmpl;
}

// A MakeTempDir removed with everything in it when this goes.
struct ScratchDir {
  explicit ScratchDir(const std::string& prefix) : path(MakeTempDir(prefix)) {}
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string path;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---------------------------------------------------------------------------------------------
// A real tandem-supervisor on free ports with a unique replica id, segment and runtime dir.

struct ReplicaOptions {
  std::string supervisor;
  std::string name;  // replicas are <name>x<n>, segments tandem.bench.<name>x<n>
  bool two_runtime = true;
  int workers = 1;
  std::string shm_size = "512MiB";
};

class Replica {
 public:
  explicit Replica(const ReplicaOptions& o) : two_runtime_(o.two_runtime), workers_(o.workers) {
    static int counter = 0;
    replica_ = o.name + "x" + std::to_string(counter++);
    segment_ = "tandem.bench." + replica_;
    dir_ = MakeTempDir("tandem-bench");
    controller_port_ = FreePort();
    http_port_ = FreePort();
    const std::vector<std::string> args = {o.supervisor,
                                           "--replica-id",
                                           replica_,
                                           "--shm-name",
                                           segment_,
                                           "--shm-size",
                                           o.shm_size,
                                           "--workers",
                                           std::to_string(o.workers),
                                           "--interactive-runtime",
                                           o.two_runtime ? "on" : "off",
                                           "--controller-listen-addr",
                                           "tcp://127.0.0.1:" + std::to_string(controller_port_),
                                           "--internal-http-listen-addr",
                                           "127.0.0.1:" + std::to_string(http_port_),
                                           "--runtime-dir",
                                           dir_,
                                           "--log-level",
                                           "warning",
                                           "--grace-period",
                                           "2"};
    pid_ = SpawnChild(args, dir_ + "/supervisor.log");
    slot_ = RegisterChild(pid_, "/dev/shm/" + segment_);
  }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  ~Replica() { Stop(); }

  void Stop() {
    if (pid_ > 0) {
      StopChild(pid_, 5s);
      pid_ = -1;
    }
    UnregisterChild(slot_);
    slot_ = -1;
    std::error_code ec;
    std::filesystem::remove("/dev/shm/" + segment_, ec);
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }

  void WaitReady(std::chrono::seconds limit = 60s) {
    const auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      CheckAlive();
      if (HttpGet(http_port_, "/readyz").status == 200) return;
      Sleep(20ms);
    }
    throw std::runtime_error("replica " + replica_ + " not ready after " +
                             std::to_string(limit.count()) + " s:\n" + Log());
  }

  void CheckAlive() {
    if (pid_ <= 0) throw std::runtime_error("replica already stopped");
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      throw std::runtime_error("tandem-supervisor exited with " + std::to_string(code) + ":\n" +
                               Log());
    }
  }

  std::string Log() const { return dir_.empty() ? "" : ReadFile(dir_ + "/supervisor.log"); }
  double SegmentBytesUsed() const {
    return MetricValue(HttpGet(http_port_, "/metrics").body, "tandem_segment_bytes{kind=\"used\"}");
  }
  // tandem_peek_latency_seconds {sum, count}: the supervisor's view of a peek (from forwarding it
  // to the runtime until its answer came back), without the client <-> supervisor hop.
  std::pair<double, double> SupervisorPeekLatency() const {
    const std::string text = HttpGet(http_port_, "/metrics").body;
    return {MetricValue(text, "tandem_peek_latency_seconds_sum"),
            MetricValue(text, "tandem_peek_latency_seconds_count")};
  }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(controller_port_); }
  bool two_runtime() const { return two_runtime_; }
  int workers() const { return workers_; }

 private:
  bool two_runtime_;
  int workers_;
  std::string replica_, segment_, dir_;
  int controller_port_ = 0, http_port_ = 0;
  pid_t pid_ = -1;
  int slot_ = -1;
};

// ---------------------------------------------------------------------------------------------
// A controller: one DEALER socket, tracking the write frontiers it is told about.

struct FrontierSample {
  Clock::time_point at;
  std::uint64_t write;
};

class Client {
 public:
  explicit Client(const std::string& endpoint) : client_(endpoint, {.timeout = 10s}) {
    if (Status s = client_.Hello("tandem-bench"); !s.ok()) {
      CheckStop();
      throw std::runtime_error(
          s.code() == StatusCode::kUnavailable ? "no HelloAccepted from " + endpoint : s.message());
    }
  }

  void Send(const pb::Command& c) {
    if (c.has_create_dataflow()) {
      for (const auto& x : c.create_dataflow().desc().index_exports()) indexes_.insert(x.id());
    }
    client_.Send(c);
    CheckStop();
  }

  // One response (Frontiers noted, CommandError thrown), or nullopt after `limit`.
  std::optional<pb::Response> Receive(std::chrono::milliseconds limit) {
    CheckStop();
    const std::uint64_t undecodable = client_.undecodable();
    auto r = client_.Receive(limit);
    CheckStop();
    if (client_.undecodable() != undecodable) {
      throw std::runtime_error("undecodable response: " + client_.last_decode_error());
    }
    if (!r) return std::nullopt;
    if (r->has_command_error()) {
      throw std::runtime_error("command refused: " + r->command_error().what() + ": " +
                               r->command_error().why());
    }
    if (r->has_frontiers() && !r->frontiers().write().elements().empty()) {
      const std::uint64_t w = r->frontiers().write().elements(0);
      auto& cur = write_[r->frontiers().id()];
      if (w > cur) {
        cur = w;
        if (r->frontiers().id() == tracked_) track_.push_back({Clock::now(), w});
      }
    }
    return r;
  }

  void Pump(std::chrono::milliseconds d) {
    const auto until = Clock::now() + d;
    while (Clock::now() < until) {
      Receive(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()) + 1ms);
    }
  }

  std::uint64_t Write(const std::string& id) const {
    auto it = write_.find(id);
    return it == write_.end() ? 0 : it->second;
  }

  void WaitWrite(const std::string& id, std::uint64_t at_least, std::chrono::seconds limit,
                 Replica& replica) {
    const auto deadline = Clock::now() + limit;
    while (Write(id) < at_least) {
      if (Clock::now() > deadline) {
        throw std::runtime_error("index " + id + " did not reach write frontier " +
                                 std::to_string(at_least) + " within " +
                                 std::to_string(limit.count()) + " s");
      }
      replica.CheckAlive();
      Receive(50ms);
    }
  }

  // Allows compaction of `id` up to `t` (only ever forward).
  void Compact(const std::string& id, std::uint64_t t) {
    auto& cur = compacted_[id];
    if (t <= cur) return;
    cur = t;
    pb::Command c;
    c.mutable_allow_compaction()->set_id(id);
    c.mutable_allow_compaction()->mutable_frontier()->add_elements(t);
    Send(c);
  }
  // Compacts every index we created right behind its write frontier, except those in `except`
  // (which the caller compacts itself, behind the times it reads at). Only indexes: the replica
  // refuses compaction of a source or a view.
  void CompactAllBut(const std::vector<std::string>& except) {
    for (const auto& [id, w] : write_) {
      if (w > 1 && indexes_.count(id) &&
          std::find(except.begin(), except.end(), id) == except.end())
        Compact(id, w - 1);
    }
  }

  // Records (time, write) for `id` from now on.
  void Track(const std::string& id) {
    tracked_ = id;
    track_.clear();
  }
  // Ticks per second of the tracked index between `from` and `to` (frontier samples inside).
  double TickRate(Clock::time_point from, Clock::time_point to) const {
    const FrontierSample* first = nullptr;
    const FrontierSample* last = nullptr;
    for (const auto& s : track_) {
      if (s.at < from || s.at > to) continue;
      if (!first) first = &s;
      last = &s;
    }
    if (!first || last == first) return 0;
    return static_cast<double>(last->write - first->write) / Seconds(last->at - first->at);
  }

 private:
  ipc::ControllerClient client_;
  std::map<std::string, std::uint64_t> write_, compacted_;
  std::set<std::string> indexes_;  // the index exports of the dataflows sent
  std::string tracked_;
  std::vector<FrontierSample> track_;
};

// ---------------------------------------------------------------------------------------------
// Dataflows

struct KeyValue {
  std::uint64_t keys = 100000;
  std::uint64_t updates_per_tick = 10;
  std::uint64_t tick_interval_us = 1000;
  std::uint64_t seed = 7;
};

pb::DataflowDescription* NewDataflow(pb::Command& c, const std::string& name) {
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name(name);
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  return d;
}

void AddKeyValueSource(pb::DataflowDescription* d, const std::string& id, const KeyValue& kv) {
  auto* s = d->add_source_imports();
  s->set_id(id);
  auto* g = s->mutable_source()->mutable_key_value();
  g->set_keys(kv.keys);
  g->set_updates_per_tick(kv.updates_per_tick);
  g->set_tick_interval_us(kv.tick_interval_us);
  g->set_seed(kv.seed);
  for (const char* name : {"key", "value"}) {
    auto* col = s->mutable_schema()->add_columns();
    col->set_name(name);
    col->set_type(pb::INT64);
  }
}

void AddIndex(pb::DataflowDescription* d, const std::string& id, const std::string& on) {
  auto* x = d->add_index_exports();
  x->set_id(id);
  x->set_on(on);
  x->add_key(0);
}

// source `src` → index `index` by key.
pb::Command IndexedSource(const std::string& src, const std::string& index, const KeyValue& kv) {
  pb::Command c;
  auto* d = NewDataflow(c, "bench-index-" + index);
  AddKeyValueSource(d, src, kv);
  AddIndex(d, index, src);
  return c;
}

// source `src` → (optionally an index by key) and Reduce(count, sum(value)) grouped by
// key % groups, indexed as `reduce_index`.
pb::Command ReducedSource(const std::string& src, const std::string& src_index,
                          const std::string& reduce, const std::string& reduce_index,
                          const KeyValue& kv, std::int64_t groups) {
  pb::Command c;
  auto* d = NewDataflow(c, "bench-reduce-" + reduce);
  AddKeyValueSource(d, src, kv);
  if (!src_index.empty()) AddIndex(d, src_index, src);
  auto* b = d->add_objects_to_build();
  b->set_id(reduce);
  auto* r = b->mutable_plan()->mutable_reduce();
  auto* m = r->mutable_input()->mutable_mfp();
  m->mutable_input()->mutable_get()->set_id(src);
  auto* mod = m->mutable_mfp()->add_map()->mutable_binary();
  mod->set_func(pb::MOD);
  mod->mutable_left()->set_column(0);
  mod->mutable_right()->mutable_literal()->mutable_value()->set_int64(groups);
  mod->mutable_right()->mutable_literal()->set_type(pb::INT64);
  m->mutable_mfp()->add_projection(2);  // group
  m->mutable_mfp()->add_projection(1);  // value
  r->add_group_key(0);
  r->add_aggregates()->set_func(pb::COUNT);
  auto* sum = r->add_aggregates();
  sum->set_func(pb::SUM);
  sum->set_column(1);
  AddIndex(d, reduce_index, reduce);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Results

struct Cell {
  std::string name;
  std::vector<std::pair<std::string, double>> metrics;
  void Set(const std::string& k, double v) {
    for (auto& [name, value] : metrics) {
      if (name == k) {
        value = v;
        return;
      }
    }
    metrics.emplace_back(k, v);
  }
};

struct Scenario {
  std::string name;
  std::vector<Cell> cells;
  std::vector<std::string> notes;
};

struct LatencyStats {
  std::vector<double> us;  // sorted
};

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

void AddLatencies(Cell& cell, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  cell.Set("p50_us", Percentile(us, 0.50));
  cell.Set("p90_us", Percentile(us, 0.90));
  cell.Set("p99_us", Percentile(us, 0.99));
  cell.Set("p999_us", Percentile(us, 0.999));
  cell.Set("max_us", us.empty() ? 0 : us.back());
  double sum = 0;
  for (double v : us) sum += v;
  cell.Set("mean_us", us.empty() ? 0 : sum / static_cast<double>(us.size()));
  cell.Set("samples", static_cast<double>(us.size()));
}

std::string Num(double v) {
  char buf[64];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (std::isfinite(v)) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "null");
  }
  return buf;
}

void PrintTable(const std::vector<Scenario>& scenarios) {
  for (const auto& s : scenarios) {
    std::printf("\n== %s ==\n", s.name.c_str());
    for (const auto& n : s.notes) std::printf("  %s\n", n.c_str());
    if (s.cells.empty()) continue;
    std::vector<std::string> cols;
    for (const auto& c : s.cells) {
      for (const auto& [k, v] : c.metrics) {
        if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
      }
    }
    std::size_t w0 = 4;
    for (const auto& c : s.cells) w0 = std::max(w0, c.name.size());
    std::vector<std::size_t> widths;
    for (const auto& k : cols) {
      std::size_t w = k.size();
      for (const auto& c : s.cells) {
        for (const auto& [name, v] : c.metrics) {
          if (name == k) w = std::max(w, Num(v).size());
        }
      }
      widths.push_back(w);
    }
    std::printf("  %-*s", static_cast<int>(w0), "cell");
    for (std::size_t i = 0; i < cols.size(); ++i) {
      std::printf("  %*s", static_cast<int>(widths[i]), cols[i].c_str());
    }
    std::printf("\n");
    for (const auto& c : s.cells) {
      std::printf("  %-*s", static_cast<int>(w0), c.name.c_str());
      for (std::size_t i = 0; i < cols.size(); ++i) {
        std::string text = "-";
        for (const auto& [name, v] : c.metrics) {
          if (name == cols[i]) text = Num(v);
        }
        std::printf("  %*s", static_cast<int>(widths[i]), text.c_str());
      }
      std::printf("\n");
    }
  }
  std::fflush(stdout);
}

std::string Json(const std::vector<Scenario>& scenarios) {
  std::string out = "{";
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const auto& s = scenarios[i];
    out += (i ? ", \"" : "\"") + s.name + "\": {";
    for (std::size_t j = 0; j < s.cells.size(); ++j) {
      const auto& c = s.cells[j];
      out += (j ? ", \"" : "\"") + c.name + "\": {";
      for (std::size_t k = 0; k < c.metrics.size(); ++k) {
        out += (k ? ", \"" : "\"") + c.metrics[k].first + "\": " + Num(c.metrics[k].second);
      }
      out += "}";
    }
    out += "}";
  }
  return out + "}";
}

void WriteCsv(const std::string& path, const std::vector<Scenario>& scenarios) {
  std::ofstream out(path);
  out << "scenario,cell,metric,value\n";
  for (const auto& s : scenarios) {
    for (const auto& c : s.cells) {
      for (const auto& [k, v] : c.metrics)
        out << s.name << ',' << c.name << ',' << k << ',' << Num(v) << '\n';
    }
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
  std::string scenario;
  std::string supervisor;
  std::string name = "bench" + std::to_string(getpid());
  double duration = 10;  // seconds per cell
  double warmup = 1;     // seconds of peeks discarded before each cell
  std::size_t min_samples = 10000;
  double max_factor = 15;  // a cell short of min_samples goes on up to this many durations
  bool json = false;
  std::string csv, plot;
  int workers = 1;
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
  std::uint64_t memory_keys = 100000;
  std::uint64_t memory_updates = 200;
  bool quiet = false;
};

void Progress(const Options& o, const char* fmt, const std::string& what) {
  if (!o.quiet) {
    std::fprintf(stderr, fmt, what.c_str());
    std::fflush(stderr);
  }
}

// ---------------------------------------------------------------------------------------------
// Closed-loop point lookups

// When a cell measures: samples taken after --warmup count; it runs --duration seconds and goes on
// until --min-samples, at most --max-factor durations.
struct MeasureWindow {
  explicit MeasureWindow(const Options& o) : min_samples(o.min_samples) {
    auto seconds = [](double s) {
      return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    };
    from = Clock::now() + seconds(o.warmup);
    until = from + seconds(o.duration);
    hard = from + seconds(o.duration * o.max_factor);
  }
  bool Done(Clock::time_point now, std::size_t samples) const {
    return now >= hard || (now >= until && samples >= min_samples);
  }
  Clock::time_point from, until, hard;
  std::size_t min_samples;
};

struct PeekRun {
  std::vector<double> us;
  std::size_t misses = 0;  // answers without exactly one row
  Clock::time_point from, to;
  double supervisor_mean_us = 0;  // the supervisor's mean over the same measured peeks
  void AddTo(Cell& cell) {
    AddLatencies(cell, us);
    cell.Set("misses", static_cast<double>(misses));
    cell.Set("supervisor_peek_mean_us", supervisor_mean_us);
  }
};

// Peeks `index` (keys 0..keys-1, uniformly) at its latest complete time, one at a time, for
// `duration` (and on until `min_samples`, at most --max-factor × longer); discards the first
// `warmup`. Every 100 ms compacts every index behind its frontier (the peeked one behind the peek
// time).
PeekRun PeekLoop(Client& client, Replica& replica, const std::string& index, std::uint64_t keys,
                 const Options& o, std::uint64_t seed) {
  PeekRun run;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(keys) - 1);
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_id(index);
  auto* key = p->add_keys()->add_datums();
  std::uint64_t n = 0;
  const MeasureWindow window(o);
  auto next_housekeeping = Clock::now();
  run.from = window.from;
  std::optional<std::pair<double, double>> before;
  for (;;) {
    const auto now = Clock::now();
    if (window.Done(now, run.us.size())) break;
    if (!before && now >= window.from) before = replica.SupervisorPeekLatency();
    const std::uint64_t t = client.Write(index) - 1;
    if (now >= next_housekeeping) {
      next_housekeeping = now + 100ms;
      client.CompactAllBut({index});
      client.Compact(index, t);
      replica.CheckAlive();
    }
    const std::string uuid = std::to_string(++n);
    p->set_uuid(uuid);
    p->set_timestamp(t);
    key->set_int64(pick(rng));
    const auto t0 = Clock::now();
    client.Send(c);
    std::optional<pb::Response> r;
    for (;;) {
      r = client.Receive(10s);
      if (!r) throw std::runtime_error("no PeekResponse within 10 s");
      if (r->has_peek_response() && r->peek_response().uuid() == uuid) break;
    }
    const auto t1 = Clock::now();
    if (r->peek_response().has_error()) {
      throw std::runtime_error("peek failed: " + r->peek_response().error());
    }
    if (t0 >= window.from) {
      run.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (r->peek_response().rows().rows_size() != 1) ++run.misses;
    }
  }
  run.to = Clock::now();
  const auto after = replica.SupervisorPeekLatency();
  if (before && after.second > before->second) {
    run.supervisor_mean_us = 1e6 * (after.first - before->first) / (after.second - before->second);
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// Scenarios

constexpr char kLightSource[] = "u1";
constexpr char kLightIndex[] = "u2";
constexpr char kHeavySource[] = "u3";
constexpr char kHeavyIndex[] = "u4";
constexpr char kHeavyReduce[] = "u5";
constexpr char kHeavyReduceIndex[] = "u6";

ReplicaOptions ReplicaFor(const Options& o, bool two_runtime) {
  return {.supervisor = o.supervisor,
          .name = o.name,
          .two_runtime = two_runtime,
          .workers = o.workers,
          .shm_size = o.shm_size};
}

KeyValue LightLoad(const Options& o, std::uint64_t keys) {
  return {.keys = keys, .updates_per_tick = o.light_updates, .tick_interval_us = 1000, .seed = 7};
}

KeyValue HeavyLoad(const Options& o) {
  return {.keys = o.heavy_keys,
          .updates_per_tick = o.heavy_updates,
          .tick_interval_us = o.heavy_tick_us,
          .seed = 11};
}

std::chrono::seconds BuildLimit(std::uint64_t keys) {
  return std::chrono::seconds(60 + keys / 20000);
}

// Starts a replica with the point-lookup index and waits until it has a complete time.
struct LookupReplica {
  LookupReplica(const Options& o, bool two_runtime, std::uint64_t keys)
      : replica(ReplicaFor(o, two_runtime)) {
    replica.WaitReady();
    client.emplace(replica.endpoint());
    client->Send(IndexedSource(kLightSource, kLightIndex, LightLoad(o, keys)));
    client->WaitWrite(kLightIndex, 2, BuildLimit(keys), replica);
  }
  Replica replica;
  std::optional<Client> client;
};

Scenario Isolation(const Options& o, std::map<std::string, std::vector<double>>& distributions) {
  Scenario s{.name = "isolation"};
  const KeyValue heavy = HeavyLoad(o);
  for (bool two : {false, true}) {
    const std::string mode = two ? "two-runtime" : "solo";
    Progress(o, "isolation: starting a %s replica\n", mode);
    LookupReplica lr(o, two, o.keys);
    Client& client = *lr.client;
    for (bool loaded : {false, true}) {
      const std::string name = mode + "/" + (loaded ? "loaded" : "idle");
      if (loaded) {
        client.Track(kHeavyIndex);
        client.Send(ReducedSource(kHeavySource, kHeavyIndex, kHeavyReduce, kHeavyReduceIndex, heavy,
                                  o.groups));
        client.WaitWrite(kHeavyIndex, 2, BuildLimit(heavy.keys), lr.replica);
        client.WaitWrite(kHeavyReduceIndex, 2, BuildLimit(heavy.keys), lr.replica);
      }
      Progress(o, "isolation: measuring %s\n", name);
      PeekRun run = PeekLoop(client, lr.replica, kLightIndex, o.keys, o, loaded ? 2 : 1);
      Cell cell{.name = name};
      cell.Set("keys", static_cast<double>(o.keys));
      distributions[name] = run.us;
      run.AddTo(cell);
      const double ticks = loaded ? client.TickRate(run.from, run.to) : 0;
      cell.Set("updates_per_s", ticks * static_cast<double>(heavy.updates_per_tick));
      s.cells.push_back(std::move(cell));
    }
  }
  auto find = [&](const std::string& n) -> const Cell* {
    for (const auto& c : s.cells) {
      if (c.name == n) return &c;
    }
    return nullptr;
  };
  auto metric = [&](const std::string& cell, const std::string& m) {
    const Cell* c = find(cell);
    for (const auto& [k, v] : c->metrics) {
      if (k == m) return v;
    }
    return 0.0;
  };
  const double two_ratio =
      metric("two-runtime/loaded", "p99_us") / std::max(1e-9, metric("two-runtime/idle", "p99_us"));
  const double solo_vs_two =
      metric("solo/loaded", "p99_us") / std::max(1e-9, metric("two-runtime/loaded", "p99_us"));
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "two-runtime loaded p99 / idle p99 = %.2f (target <= 2); solo loaded p99 / "
                "two-runtime loaded p99 = %.2f (target >= 10)",
                two_ratio, solo_vs_two);
  s.notes.push_back(buf);
  return s;
}

Scenario LookupScale(const Options& o) {
  Scenario s{.name = "lookup-scale"};
  for (std::uint64_t keys = o.min_keys; keys <= o.max_keys; keys *= 10) {
    const std::string name = "keys=" + std::to_string(keys);
    Progress(o, "lookup-scale: %s (building the index)\n", name);
    Options big = o;  // ~85 bytes a key, twice that while the spine merges
    if (!o.shm_size_set && keys > 2000000) big.shm_size = std::to_string(keys * 400 >> 20) + "MiB";
    LookupReplica lr(big, true, keys);
    PeekRun run = PeekLoop(*lr.client, lr.replica, kLightIndex, keys, o, keys);
    Cell cell{.name = name};
    cell.Set("keys", static_cast<double>(keys));
    run.AddTo(cell);
    cell.Set("segment_bytes_used", lr.replica.SegmentBytesUsed());
    s.cells.push_back(std::move(cell));
    if (keys > o.max_keys / 10) break;
  }
  if (s.cells.size() >= 2) {
    double first = 0, last = 0;
    for (const auto& [k, v] : s.cells.front().metrics) {
      if (k == "p50_us") first = v;
    }
    for (const auto& [k, v] : s.cells.back().metrics) {
      if (k == "p50_us") last = v;
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "p50 grows %.2fx from %s to %s (target <= 1.5x to 10^7 keys)",
                  last / std::max(first, 1e-9), s.cells.front().name.c_str(),
                  s.cells.back().name.c_str());
    s.notes.push_back(buf);
  }
  return s;
}

// Keeps compaction flowing for `d`, returning ticks/s of the tracked index over the window.
double MeasureTicks(Client& client, Replica& replica, const std::string& tracked, double seconds,
                    double warmup) {
  const auto start = Clock::now();
  const auto from =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup));
  const auto to =
      from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  client.Track(tracked);
  while (Clock::now() < to) {
    client.Pump(100ms);
    client.CompactAllBut({});
    replica.CheckAlive();
  }
  return client.TickRate(from, to);
}

Scenario Ingest(const Options& o) {
  Scenario s{.name = "ingest"};
  const KeyValue kv{.keys = o.ingest_keys,
                    .updates_per_tick = o.ingest_updates,
                    .tick_interval_us = 0,
                    .seed = 3};
  for (bool reduce : {false, true}) {
    const std::string name = reduce ? "reduce" : "index";
    Progress(o, "ingest: %s (building)\n", name);
    Replica replica(ReplicaFor(o, true));
    replica.WaitReady();
    Client client(replica.endpoint());
    const std::string tracked = reduce ? kHeavyReduceIndex : kHeavyIndex;
    client.Send(reduce
                    ? ReducedSource(kHeavySource, "", kHeavyReduce, kHeavyReduceIndex, kv, o.groups)
                    : IndexedSource(kHeavySource, kHeavyIndex, kv));
    client.WaitWrite(tracked, 2, BuildLimit(kv.keys), replica);
    Progress(o, "ingest: measuring %s\n", name);
    const double ticks = MeasureTicks(client, replica, tracked, o.duration, o.warmup);
    const double ups = ticks * static_cast<double>(kv.updates_per_tick);
    Cell cell{.name = name};
    cell.Set("keys", static_cast<double>(kv.keys));
    cell.Set("updates_per_tick", static_cast<double>(kv.updates_per_tick));
    cell.Set("ticks_per_s", ticks);
    cell.Set("updates_per_s", ups);
    cell.Set("workers", o.workers);
    cell.Set("updates_per_s_per_worker", ups / o.workers);
    s.cells.push_back(std::move(cell));
  }
  return s;
}

Scenario Memory(const Options& o) {
  Scenario s{.name = "memory"};
  const KeyValue kv{.keys = o.memory_keys,
                    .updates_per_tick = o.memory_updates,
                    .tick_interval_us = 1000,
                    .seed = 5};
  Progress(o, "memory: %s\n", "starting");
  Replica replica(ReplicaFor(o, true));
  replica.WaitReady();
  Client client(replica.endpoint());
  const double baseline = replica.SegmentBytesUsed();
  client.Send(IndexedSource(kHeavySource, kHeavyIndex, kv));
  client.WaitWrite(kHeavyIndex, 2, BuildLimit(kv.keys), replica);
  client.Track(kHeavyIndex);
  std::vector<std::pair<double, double>> used;  // (seconds, bytes)
  const auto start = Clock::now();
  const double total = std::max(2.0, o.duration);
  auto next = start;
  while (Seconds(Clock::now() - start) < total) {
    client.Pump(50ms);
    client.CompactAllBut({});
    replica.CheckAlive();
    if (Clock::now() >= next) {
      next += 250ms;
      used.emplace_back(Seconds(Clock::now() - start), replica.SegmentBytesUsed() - baseline);
    }
  }
  const double ticks = client.TickRate(start, Clock::now());
  const std::size_t n = used.size();
  auto mean = [&](std::size_t from, std::size_t to) {
    double sum = 0;
    for (std::size_t i = from; i < to; ++i) sum += used[i].second;
    return to > from ? sum / static_cast<double>(to - from) : 0.0;
  };
  // Least-squares slope over the samples after warm-up (the first third).
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const std::size_t w = n / 3;
  for (std::size_t i = w; i < n; ++i) {
    sx += used[i].first;
    sy += used[i].second;
    sxx += used[i].first * used[i].first;
    sxy += used[i].first * used[i].second;
  }
  const double m = static_cast<double>(n - w);
  const double denom = m * sxx - sx * sx;
  const double slope = denom > 0 ? (m * sxy - sx * sy) / denom : 0;
  const double middle = mean(w, 2 * n / 3), last = mean(2 * n / 3, n);
  double peak = 0;
  for (std::size_t i = w; i < n; ++i) peak = std::max(peak, used[i].second);
  // A consolidated row here is (key int64, value int64, time u64, diff i64): 32 bytes raw.
  constexpr double kRawRowBytes = 32;
  Cell cell{.name = "churn"};
  cell.Set("keys", static_cast<double>(kv.keys));
  cell.Set("updates_per_s", ticks * static_cast<double>(kv.updates_per_tick));
  cell.Set("seconds", total);
  cell.Set("samples", static_cast<double>(n));
  cell.Set("baseline_bytes", baseline);
  cell.Set("bytes_middle_third", middle);
  cell.Set("bytes_last_third", last);
  cell.Set("bytes_peak_after_warmup", peak);
  cell.Set("bytes_per_live_update", last / static_cast<double>(kv.keys));
  cell.Set("ratio_to_raw_rows", last / (static_cast<double>(kv.keys) * kRawRowBytes));
  cell.Set("trend_bytes_per_s", slope);
  cell.Set("trend_pct_per_min", middle > 0 ? 100.0 * slope * 60 / middle : 0);
  s.cells.push_back(std::move(cell));
  s.notes.push_back(
      "bytes = segment used minus the empty replica's; live updates = keys (one value each); "
      "raw row = 32 bytes (key, value, time, diff)");
  return s;
}

// A minimal RESP client over a plain TCP socket.
class Redis {
 public:
  explicit Redis(int port) {
    for (int i = 0; i < 250 && fd_ < 0; ++i) {
      fd_ = ConnectLoopback(port);
      if (fd_ < 0) Sleep(20ms);
    }
    if (fd_ < 0) throw std::runtime_error("cannot connect to redis-server");
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Redis() {
    if (fd_ >= 0) close(fd_);
  }
  Redis(const Redis&) = delete;
  Redis& operator=(const Redis&) = delete;

  static void Append(std::string& out, const std::vector<std::string>& args) {
    out += "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  void Write(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) {
        CheckStop();
        continue;
      }
      if (n <= 0) throw std::runtime_error("redis write failed");
      done += static_cast<std::size_t>(n);
    }
  }
  // One reply: simple string, error, integer or bulk string (nullopt for a null bulk).
  std::optional<std::string> Reply() {
    const std::string line = Line();
    if (line.empty()) throw std::runtime_error("empty redis reply");
    if (line[0] == '-') throw std::runtime_error("redis: " + line);
    if (line[0] != '$') return line.substr(1);
    const long len = std::atol(line.c_str() + 1);
    if (len < 0) return std::nullopt;
    while (buf_.size() - pos_ < static_cast<std::size_t>(len) + 2) Fill();
    std::string v = buf_.substr(pos_, static_cast<std::size_t>(len));
    pos_ += static_cast<std::size_t>(len) + 2;
    return v;
  }

 private:
  void Fill() {
    if (pos_ > 0) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    char tmp[16384];
    for (;;) {
      const ssize_t n = read(fd_, tmp, sizeof tmp);
      if (n < 0 && errno == EINTR) {
        CheckStop();
        continue;
      }
      if (n <= 0) throw std::runtime_error("redis connection closed");
      buf_.append(tmp, static_cast<std::size_t>(n));
      return;
    }
  }
  std::string Line() {
    for (;;) {
      const auto end = buf_.find("\r\n", pos_);
      if (end != std::string::npos) {
        std::string line = buf_.substr(pos_, end - pos_);
        pos_ = end + 2;
        return line;
      }
      Fill();
    }
  }
  int fd_ = -1;
  std::string buf_;
  std::size_t pos_ = 0;
};

// Closed-loop round trips of `once` for --duration (on until --min-samples, at most --max-factor
// times longer), after --warmup. Returns each round trip's latency in µs.
std::vector<double> ClosedLoop(const Options& o, const std::function<void()>& once) {
  std::vector<double> us;
  const MeasureWindow window(o);
  while (!window.Done(Clock::now(), us.size())) {
    CheckStop();
    const auto t0 = Clock::now();
    once();
    const auto t1 = Clock::now();
    if (t0 >= window.from) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return us;
}

// The protocol's floor: what a ZeroMQ round trip with no work behind it costs on this machine.
// One hop is a client and an echo over TCP; two hops add a forwarder in between (TCP in front,
// ipc behind) — the supervisor's topology, so no design that keeps it can answer a peek faster.
// Each party runs on its own thread with its own context (and so its own I/O thread), like the
// separate processes of a replica.
std::vector<double> ZmqFloor(const Options& o, bool forwarder) {
  const std::string front = "tcp://127.0.0.1:" + std::to_string(FreePort());
  const ScratchDir dir("tandem-bench-floor");
  const std::string back = "ipc://" + dir.path + "/echo";
  // The serving threads; stopped and joined before the sockets they use go (declared after them).
  struct Servers {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    ~Servers() {
      stop = true;
      for (auto& t : threads) t.join();
    }
  };
  auto serve = [](const std::atomic<bool>& stop, zmq::socket_t& in, zmq::socket_t* out) {
    std::vector<zmq::pollitem_t> items = {{in.handle(), 0, ZMQ_POLLIN, 0}};
    if (out) items.push_back({out->handle(), 0, ZMQ_POLLIN, 0});
    while (!stop.load()) {
      zmq::poll(items, 100ms);
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (!(items[i].revents & ZMQ_POLLIN)) continue;
        zmq::socket_t& from = i == 0 ? in : *out;
        zmq::socket_t& to = out == nullptr ? in : (i == 0 ? *out : in);
        for (bool more = true; more;) {  // forward (or echo) every frame, envelope included
          zmq::message_t m;
          (void)from.recv(m);
          more = m.more();
          to.send(m, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
        }
      }
    }
  };
  zmq::context_t echo_ctx(1), fwd_ctx(1), client_ctx(1);
  zmq::socket_t echo(echo_ctx, zmq::socket_type::router);
  echo.bind(forwarder ? back : front);
  std::optional<zmq::socket_t> fwd_front, fwd_back;
  if (forwarder) {
    fwd_front.emplace(fwd_ctx, zmq::socket_type::router);
    fwd_front->bind(front);
    fwd_back.emplace(fwd_ctx, zmq::socket_type::dealer);
    fwd_back->connect(back);
  }
  zmq::socket_t client(client_ctx, zmq::socket_type::dealer);
  client.connect(front);
  Servers servers;
  servers.threads.emplace_back([&] { serve(servers.stop, echo, nullptr); });
  if (forwarder) {
    servers.threads.emplace_back([&] { serve(servers.stop, *fwd_front, &*fwd_back); });
  }
  const std::string payload(64, 'p');  // about a point-lookup Peek's encoded size
  return ClosedLoop(o, [&] {
    client.send(zmq::buffer(payload), zmq::send_flags::none);
    zmq::message_t reply;
    (void)client.recv(reply);
  });
}

double P50(const Cell& cell) {
  for (const auto& [k, v] : cell.metrics) {
    if (k == "p50_us") return v;
  }
  return 0;
}

Scenario RedisScenario(const Options& o) {
  Scenario s{.name = "redis"};
  // Tandem first: the same pattern as isolation's two-runtime/idle cell.
  {
    Progress(o, "redis: %s\n", "measuring Tandem two-runtime");
    LookupReplica lr(o, true, o.keys);
    PeekRun run = PeekLoop(*lr.client, lr.replica, kLightIndex, o.keys, o, 21);
    Cell cell{.name = "tandem-two-runtime"};
    cell.Set("keys", static_cast<double>(o.keys));
    run.AddTo(cell);
    s.cells.push_back(std::move(cell));
  }
  for (bool forwarder : {false, true}) {
    Progress(o, "redis: measuring the ZeroMQ floor, %s\n", forwarder ? "two hops" : "one hop");
    std::vector<double> us = ZmqFloor(o, forwarder);
    Cell cell{.name = forwarder ? "zmq-floor-2-hops" : "zmq-floor-1-hop"};
    AddLatencies(cell, us);
    s.cells.push_back(std::move(cell));
  }
  const double tandem = P50(s.cells[0]), two_hops = P50(s.cells[2]);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "Tandem peek p50 / ZeroMQ two-hop floor p50 = %.2f (the supervisor's topology "
                "with no work behind it)",
                tandem / std::max(two_hops, 1e-9));
  s.notes.push_back(buf);
  if (!OnPath("redis-server")) {
    s.notes.push_back("skipped: redis-server is not installed (apt-get install -y redis-server)");
    return s;
  }
  const ScratchDir scratch("tandem-bench-redis");
  const std::string& dir = scratch.path;
  const int port = FreePort();
  std::string server = "/usr/bin/redis-server";
  if (access(server.c_str(), X_OK) != 0) server = "/usr/local/bin/redis-server";
  const pid_t pid = SpawnChild({server, "--port", std::to_string(port), "--bind", "127.0.0.1",
                                "--save", "", "--appendonly", "no", "--dir", dir},
                               dir + "/redis.log");
  const int slot = RegisterChild(pid, "");
  struct Cleanup {  // before the scratch directory goes
    pid_t pid;
    int slot;
    ~Cleanup() {
      StopChild(pid, 2s);
      UnregisterChild(slot);
    }
  } cleanup{pid, slot};
  Redis redis(port);
  Progress(o, "redis: %s\n", "preloading keys");
  for (std::uint64_t k = 0; k < o.keys;) {
    std::string batch;
    std::vector<std::string> args = {"MSET"};
    for (int i = 0; i < 1000 && k < o.keys; ++i, ++k) {
      args.push_back("k" + std::to_string(k));
      args.push_back(std::to_string(k * 2654435761u % 1000003));
    }
    Redis::Append(batch, args);
    redis.Write(batch);
    redis.Reply();
  }
  Progress(o, "redis: %s\n", "measuring GET");
  std::mt19937_64 rng(21);
  std::uniform_int_distribution<std::uint64_t> pick(0, o.keys - 1);
  std::size_t misses = 0;
  std::vector<double> us = ClosedLoop(o, [&] {
    std::string cmd;
    Redis::Append(cmd, {"GET", "k" + std::to_string(pick(rng))});
    redis.Write(cmd);
    if (!redis.Reply()) ++misses;
  });
  Cell cell{.name = "redis-get"};
  cell.Set("keys", static_cast<double>(o.keys));
  AddLatencies(cell, us);
  cell.Set("misses", static_cast<double>(misses));
  s.cells.push_back(std::move(cell));
  std::snprintf(buf, sizeof buf, "Tandem peek p50 / Redis GET p50 = %.2f (target <= 2)",
                tandem / std::max(P50(s.cells.back()), 1e-9));
  s.notes.push_back(buf);
  std::snprintf(buf, sizeof buf, "ZeroMQ two-hop floor p50 / Redis GET p50 = %.2f",
                two_hops / std::max(P50(s.cells.back()), 1e-9));
  s.notes.push_back(buf);
  return s;
}

// The CDF of each cell's latencies: a data file, a gnuplot script beside it, and the PNG.
void Plot(const std::string& png, const std::map<std::string, std::vector<double>>& dists) {
  std::string base = png;
  if (base.size() > 4 && base.substr(base.size() - 4) == ".png") base.resize(base.size() - 4);
  const std::string dat = base + ".dat", gp = base + ".gp";
  const std::vector<std::string> order = {"solo/idle", "solo/loaded", "two-runtime/idle",
                                          "two-runtime/loaded"};
  {
    std::ofstream out(dat);
    out << "# latency_us cumulative_fraction; one block per cell (gnuplot index)\n";
    for (const auto& name : order) {
      out << "# " << name << "\n";
      auto it = dists.find(name);
      if (it != dists.end()) {
        std::vector<double> v = it->second;
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        const std::size_t step = std::max<std::size_t>(1, n / 4000);
        for (std::size_t i = 0; i < n; i += step) {
          out << v[i] << ' ' << static_cast<double>(i + 1) / static_cast<double>(n) << '\n';
        }
        // The tail point by point: the last 0.5%.
        for (std::size_t i = n - std::min<std::size_t>(n, n / 200 + 1); i < n; ++i) {
          out << v[i] << ' ' << static_cast<double>(i + 1) / static_cast<double>(n) << '\n';
        }
      }
      out << "\n\n";
    }
  }
  {
    std::ofstream out(gp);
    out << "set terminal pngcairo size 1000,600 noenhanced\n"
        << "set output '" << png << "'\n"
        << "set title 'tandem-bench isolation: point-lookup peek latency (client round trip)'\n"
        << "set xlabel 'latency (microseconds, log scale)'\nset ylabel 'fraction of peeks <= x'\n"
        << "set logscale x\nset grid\nset key center center box\nset yrange [0:1.0]\n"
        << "plot ";
    for (std::size_t i = 0; i < order.size(); ++i) {
      out << (i ? ", " : "") << "'" << dat << "' index " << i
          << " using 1:2 with lines lw 2 title '" << order[i] << "'";
    }
    out << "\n";
  }
  if (!OnPath("gnuplot")) {
    std::fprintf(stderr, "tandem-bench: gnuplot not installed; wrote %s and %s only\n", dat.c_str(),
                 gp.c_str());
    return;
  }
  const std::string cmd = "gnuplot '" + gp + "'";
  if (std::system(cmd.c_str()) != 0) {
    // pngcairo may be missing: fall back to the plain png terminal.
    std::string script = ReadFile(gp);
    script.replace(0, script.find('\n'), "set terminal png size 1000,600");
    std::ofstream(gp) << script;
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "tandem-bench: gnuplot failed\n");
  }
}

// ---------------------------------------------------------------------------------------------
// Command line

constexpr char kUsage[] = R"(usage: tandem-bench SCENARIO [options]

Scenarios (each starts real tandem-supervisors on free ports and drives them over the
controller endpoint like any client; everything is stopped and removed at the end):
  isolation      point-lookup peek latency, {solo, two-runtime} x {idle, loaded}, with the
                 heavy dataflow's maintenance throughput (the headline)
  lookup-scale   two-runtime point-lookup latency with the index at 10^4 .. --max-keys keys
  ingest         maintenance throughput into an index and through a reduce (as fast as possible)
  memory         segment bytes of a churning index with compaction commands flowing
  redis          Tandem peeks vs Redis GET over loopback (needs redis-server; skipped otherwise),
                 and the ZeroMQ round-trip floor under them (one hop; two hops as via the
                 supervisor)
  all            every scenario above, in that order

Options:
  --duration S         measured seconds per cell (default 10); cells keep going until
                       --min-samples (at most --max-factor times longer)
  --warmup S           seconds discarded before each cell (default 1)
  --min-samples N      (default 10000)
  --max-factor F       (default 15)
  --json               print one JSON object: scenario -> cell -> metric
  --csv FILE           also write scenario,cell,metric,value rows
  --plot FILE.png      isolation: CDF plot of the four cells (gnuplot; also FILE.dat, FILE.gp)
  --workers N          worker threads per runtime (default 1)
  --supervisor PATH    (default: tandem-supervisor beside tandem-bench)
  --name NAME          replicas are NAMEx0, NAMEx1, ... with segments tandem.bench.NAMEx<n>
                       (default bench<pid>)
  --shm-size SIZE      per replica (default 512MiB)
  --keys N             point-lookup index size (default 100000)
  --light-updates N    updates per 1 ms tick on the point-lookup index (default 10)
  --heavy-keys N --heavy-updates N --heavy-tick-us N --groups N
                       isolation's heavy load (default 100000 keys, 2000 updates per tick, tick
                       0 us = as fast as possible, reduce grouped by key % 16)
  --min-keys N --max-keys N   lookup-scale range (default 10^4 .. 10^6; for 10^7 pass
                       --max-keys 1e7: ~4 GiB of /dev/shm and minutes of build)
  --ingest-keys N --ingest-updates N   (default 10^6 keys, 10000 updates per tick)
  --memory-keys N --memory-updates N   (default 10^5 keys, 200 updates per 1 ms tick)
  --quiet              no progress on stderr
)";

std::uint64_t ParseUint(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);  // accepts 1e6
  if (errno != 0 || end == v.c_str() || *end != '\0' || d < 0) {
    throw std::invalid_argument(flag + ": not a non-negative number: " + v);
  }
  return static_cast<std::uint64_t>(d);
}

double ParseDouble(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(d >= 0)) {
    throw std::invalid_argument(flag + ": not a non-negative number: " + v);
  }
  return d;
}

Options Parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--duration") {
      o.duration = ParseDouble(a, value());
    } else if (a == "--warmup") {
      o.warmup = ParseDouble(a, value());
    } else if (a == "--min-samples") {
      o.min_samples = ParseUint(a, value());
    } else if (a == "--max-factor") {
      o.max_factor = std::max(1.0, ParseDouble(a, value()));
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--plot") {
      o.plot = value();
    } else if (a == "--workers") {
      o.workers = static_cast<int>(std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 64));
    } else if (a == "--supervisor") {
      o.supervisor = value();
    } else if (a == "--name") {
      o.name = value();
      if (o.name.empty() || o.name.find_first_of("/ ") != std::string::npos) {
        throw std::invalid_argument("--name: a non-empty name without '/' or spaces");
      }
    } else if (a == "--shm-size") {
      o.shm_size = value();
      o.shm_size_set = true;
    } else if (a == "--keys") {
      o.keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--light-updates") {
      o.light_updates = ParseUint(a, value());
    } else if (a == "--heavy-keys") {
      o.heavy_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--heavy-updates") {
      o.heavy_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--heavy-tick-us") {
      o.heavy_tick_us = ParseUint(a, value());
    } else if (a == "--groups") {
      o.groups = static_cast<std::int64_t>(std::max<std::uint64_t>(1, ParseUint(a, value())));
    } else if (a == "--min-keys") {
      o.min_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--max-keys") {
      o.max_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--ingest-keys") {
      o.ingest_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--ingest-updates") {
      o.ingest_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--memory-keys") {
      o.memory_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--memory-updates") {
      o.memory_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown option " + a);
    } else if (o.scenario.empty()) {
      o.scenario = a;
    } else {
      throw std::invalid_argument("unexpected argument " + a);
    }
  }
  static const std::vector<std::string> kScenarios = {"isolation", "lookup-scale", "ingest",
                                                      "memory",    "redis",        "all"};
  if (o.scenario.empty()) throw std::invalid_argument("no scenario given");
  if (std::find(kScenarios.begin(), kScenarios.end(), o.scenario) == kScenarios.end()) {
    throw std::invalid_argument("unknown scenario " + o.scenario);
  }
  if (o.supervisor.empty()) o.supervisor = SelfDir() + "/tandem-supervisor";
  if (access(o.supervisor.c_str(), X_OK) != 0) {
    throw std::invalid_argument("no tandem-supervisor at " + o.supervisor + " (use --supervisor)");
  }
  if (o.min_keys > o.max_keys) throw std::invalid_argument("--min-keys above --max-keys");
  return o;
}

int Main(int argc, char** argv) {
  Options o;
  try {
    o = Parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tandem-bench: %s\n\n%s", e.what(), kUsage);
    return 64;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR and we unwind
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::vector<Scenario> results;
  std::map<std::string, std::vector<double>> distributions;
  const bool all = o.scenario == "all";
  try {
    if (all || o.scenario == "isolation") results.push_back(Isolation(o, distributions));
    if (all || o.scenario == "lookup-scale") results.push_back(LookupScale(o));
    if (all || o.scenario == "ingest") results.push_back(Ingest(o));
    if (all || o.scenario == "memory") results.push_back(Memory(o));
    if (all || o.scenario == "redis") results.push_back(RedisScenario(o));
  } catch (const Interrupted&) {
    std::fprintf(stderr, "tandem-bench: interrupted; everything it started is stopped\n");
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-bench: %s\n", e.what());
    return 1;
  }
  if (o.json) {
    std::printf("%s\n", Json(results).c_str());
    for (const auto& s : results) {
      for (const auto& n : s.notes) std::fprintf(stderr, "%s: %s\n", s.name.c_str(), n.c_str());
    }
  } else {
    PrintTable(results);
  }
  if (!o.csv.empty()) WriteCsv(o.csv, results);
  if (!o.plot.empty() && !distributions.empty()) Plot(o.plot, distributions);
  return 0;
}

}  // namespace
}  // namespace tandem::bench

int main(int argc, char** argv) { return tandem::bench::Main(argc, argv); }
