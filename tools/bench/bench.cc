#include "tools/bench/bench.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace tandem::bench {

namespace {
std::atomic<bool> g_stop{false};

// What a second ^C (or a fatal signal after the first) must still clean up, in plain arrays so
// the signal handler only touches async-signal-safe state.
constexpr int kMaxChildren = 16;
struct EmergencyEntry {
  std::atomic<pid_t> pid{0};
  char unlink_path[256] = {};
};
EmergencyEntry g_children[kMaxChildren];

}  // namespace

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

void Progress(const Options& o, const char* fmt, const std::string& what) {
  if (!o.quiet) {
    std::fprintf(stderr, fmt, what.c_str());
    std::fflush(stderr);
  }
}

void Replica::WaitReady(std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    CheckAlive();
    if (process_.Ready()) return;
    Sleep(20ms);
  }
  throw std::runtime_error("replica " + process_.replica() + " not ready after " +
                           std::to_string(limit.count()) + " s:\n" + process_.Log());
}

void Replica::CheckAlive() {
  if (process_.pid() <= 0) throw std::runtime_error("replica already stopped");
  if (auto code = process_.Exited()) {
    throw std::runtime_error("tandem-supervisor exited with " + std::to_string(*code) + ":\n" +
                             process_.Log());
  }
}

double Replica::SegmentBytesUsed() const {
  return tools::MetricValue(process_.Metrics(), "tandem_segment_bytes{kind=\"used\"}");
}

std::vector<Replica::WorkerSeconds> Replica::StepTimes() const {
  const std::string text = process_.Metrics();
  std::vector<WorkerSeconds> out;
  for (int w = 0; w < workers_; ++w) {
    const std::string labels = std::string("{role=\"") + (two_runtime_ ? "maintenance" : "solo") +
                               "\",worker=\"" + std::to_string(w) + "\"}";
    out.push_back(
        {.busy = tools::MetricValue(text, "tandem_runtime_worker_busy_seconds_total" + labels),
         .waiting =
             tools::MetricValue(text, "tandem_runtime_worker_waiting_seconds_total" + labels),
         .steps = tools::MetricValue(text, "tandem_runtime_step_seconds_count" + labels)});
  }
  return out;
}

std::pair<double, double> Replica::SupervisorPeekLatency() const {
  const std::string text = process_.Metrics();
  return {tools::MetricValue(text, "tandem_peek_latency_seconds_sum"),
          tools::MetricValue(text, "tandem_peek_latency_seconds_count")};
}

double Replica::RuntimeStalls() const {
  const std::string text = process_.Metrics();
  double stalls = 0;
  for (const char* role : {"maintenance", "interactive", "solo"}) {
    // Absent (-1) until the first stall of that runtime.
    stalls +=
        std::max(0.0, tools::MetricValue(
                          text, std::string("tandem_runtime_stalls_total{role=\"") + role + "\"}"));
  }
  return stalls;
}

std::pair<double, double> Replica::SupervisorOneShotLatency() const {
  const std::string text = process_.Metrics();
  return {tools::MetricValue(text, "tandem_one_shot_build_to_answer_seconds_sum"),
          tools::MetricValue(text, "tandem_one_shot_build_to_answer_seconds_count")};
}

pid_t Replica::RuntimePid(const std::string& role) const {
  const pid_t parent = process_.pid();
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // "pid (comm) state ppid ...": comm may hold anything, so fields count from the last ')'.
    const std::string stat = ReadFile(e.path().string() + "/stat");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    int ppid = -1;
    char state = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) != 2 || ppid != parent) {
      continue;
    }
    // argv, NUL-separated: ... --role <role> ...
    const std::string cmdline = ReadFile(e.path().string() + "/cmdline");
    if (cmdline.find(std::string("--role") + '\0' + role + '\0') != std::string::npos) {
      return static_cast<pid_t>(std::stoi(name));
    }
  }
  throw std::runtime_error("replica " + process_.replica() + " has no " + role + " runtime");
}

CurveMaterial::CurveMaterial() : dir("tandem-bench-curve") {
  auto server = ipc::GenerateCurveKeyPair();
  auto client_pair = ipc::GenerateCurveKeyPair();
  if (!server.ok() || !client_pair.ok()) throw std::runtime_error("--curve: libzmq has no CURVE");
  const std::string authorized = dir.path + "/authorized";
  if (mkdir(authorized.c_str(), 0700) != 0) throw std::runtime_error("mkdir " + authorized);
  for (Status s : {ipc::WriteCurveKeyPair(dir.path + "/server.key", *server),
                   ipc::WriteCurveKeyPair(authorized + "/bench.key", *client_pair)}) {
    if (!s.ok()) throw std::runtime_error("--curve: " + s.message());
  }
  // The authorized directory holds the public key only.
  std::remove((authorized + "/bench.key").c_str());
  supervisor_args = {"--curve-secret-key", dir.path + "/server.key", "--curve-authorized-keys",
                     authorized};
  client = {server->public_z85, client_pair->public_z85, client_pair->secret_z85};
}

std::optional<ipc::CurveClientKeys> ClientKeys(const Options& o) {
  if (!o.curve || !o.curve_keys) return std::nullopt;
  return o.curve_keys->client;
}

tools::ReplicaOptions ReplicaFor(const Options& o, bool two_runtime) {
  tools::ReplicaOptions r{.supervisor = o.supervisor,
                          .name = o.name,
                          .two_runtime = two_runtime,
                          .workers = o.workers,
                          .shm_size = o.shm_size};
  if (o.curve && o.curve_keys) r.extra_args = o.curve_keys->supervisor_args;
  r.extra_args.insert(r.extra_args.end(), o.supervisor_args.begin(), o.supervisor_args.end());
  return r;
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

std::string ShmSizeFor(const Options& o, std::uint64_t keys) {
  if (o.shm_size_set || keys <= 2000000) return o.shm_size;
  return std::to_string(keys * 400 >> 20) + "MiB";
}

std::chrono::seconds BuildLimit(std::uint64_t keys) {
  return std::chrono::seconds(60 + keys / 20000);
}

double RssBytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream fields(line.substr(field.size() + 1));
      double kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

double CpuSeconds(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields 3.. after the command: utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double MachineBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};  // user nice system idle iowait irq softirq steal
  if (!(in >> cpu) || cpu != "cpu") return 0;
  for (auto& x : v) in >> x;
  const unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return static_cast<double>(busy) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace tandem::bench
