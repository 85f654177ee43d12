// replicas (DESIGN §13): does read capacity grow with replicas of one definition?
// Three two-runtime replicas with the same point-lookup index; one controller::ReplicaSet (observer
// sessions) in front of 1, 2 or 3 of them; a closed loop of 8 clients — 8 peeks in flight, a new
// one sent as each is answered — for --duration per cell. Two ways to use the replicas:
//  * "all": every peek to every replica, the first answer wins (the others are cancelled): what
//    the controller does for availability — it hides a slow or restarting replica, but every
//    replica does every peek, so it adds no capacity;
//  * "spread": each peek to one replica, round-robin (ReplicaSet::StartPeek's `only`): what adds
//    capacity when the replicas have machines of their own.
// Cells replicas-1, all-2, all-3, spread-2, spread-3: peeks/s, latency percentiles, and how busy
// the whole machine was (every CPU: on a 2-core machine nine replica processes and the client
// share two cores, which is what limits every cell here).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>

#include "controller/replica_set.h"
#include "tools/bench/measure.h"
#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {

namespace {

constexpr int kClients = 8;

struct Spec {
  std::string name;
  std::size_t replicas;
  bool spread;
};

// How far compaction trails the time the peeks read at. The peeks go on observer sessions and the
// compactions on each replica's controller session, and the supervisor does not order two
// sessions: a compaction to exactly the peek time could overtake a peek sent just before it with
// the previous time (which would then answer "compacted"). At 1 ms ticks this is 2 s: far more
// than a peek stays in flight.
constexpr std::uint64_t kReplicaCompactionLag = 2000;

// Drains what each replica's controller session was sent (frontiers) and compacts its index
// kReplicaCompactionLag behind the time the peeks read at (which only moves forward) — or, for a
// replica the cell does not use, behind its own frontier.
std::uint64_t Housekeeping(std::vector<std::unique_ptr<LookupReplica>>& all, std::size_t used) {
  for (auto& r : all) {
    while (r->client->Receive(0ms)) {
    }
    r->replica.CheckAlive();
  }
  std::uint64_t t = UINT64_MAX;
  for (std::size_t i = 0; i < used; ++i) t = std::min(t, all[i]->client->Write(kLightIndex));
  t = t == 0 ? 0 : t - 1;  // the latest time every replica of the cell can read at
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::uint64_t w = all[i]->client->Write(kLightIndex);
    const std::uint64_t behind = i < used ? t : (w > 0 ? w - 1 : 0);
    all[i]->client->Compact(kLightIndex,
                            behind > kReplicaCompactionLag ? behind - kReplicaCompactionLag : 0);
  }
  return t;
}

Cell Measure(const Options& o, const Spec& spec, std::vector<std::unique_ptr<LookupReplica>>& all) {
  Progress(o, "replicas: measuring %s\n", spec.name);
  std::vector<std::string> endpoints;
  for (std::size_t i = 0; i < spec.replicas; ++i) endpoints.push_back(all[i]->replica.endpoint());
  controller::ReplicaSet::Options options;
  options.client.timeout = 10s;
  options.client.curve = ClientKeys(o);
  options.observer = true;
  auto created = controller::ReplicaSet::Create(endpoints, options);
  if (!created.ok()) throw std::runtime_error(created.status().ToString());
  controller::ReplicaSet& set = **created;
  // Connect returns once one replica is ready: the others join within a bounded wait.
  Status connected = set.Connect(Clock::now() + 10s);
  for (const auto until = Clock::now() + 20s;
       connected.ok() && set.ready() < spec.replicas && Clock::now() < until;) {
    (void)set.Poll(50ms);
  }
  if (!connected.ok() || set.ready() != spec.replicas) {
    throw std::runtime_error("replicas: not every replica is up: " + connected.ToString());
  }
  std::mt19937_64 rng(18);
  std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(o.keys) - 1);
  std::uint64_t time = Housekeeping(all, spec.replicas);
  auto next_housekeeping = Clock::now() + 100ms;
  std::map<std::string, Clock::time_point> in_flight;
  std::uint64_t n = 0, misses = 0, answered_in_window = 0;
  std::vector<std::uint64_t> by_replica(spec.replicas, 0);
  auto start = [&] {
    pb::Command c;
    auto* p = c.mutable_peek();
    // Distinct from the first character on: a refusal names its peek by a prefix of the uuid.
    char uuid[32];
    std::snprintf(uuid, sizeof uuid, "%016llx", static_cast<unsigned long long>(rng()));
    p->set_uuid(uuid);
    p->set_id(kLightIndex);
    p->set_timestamp(time);
    p->add_keys()->add_datums()->set_int64(pick(rng));
    const std::optional<std::size_t> only =
        spec.spread ? std::optional<std::size_t>(n % spec.replicas) : std::nullopt;
    ++n;
    if (Status s = set.StartPeek(c, only); !s.ok()) throw std::runtime_error(s.ToString());
    in_flight[uuid] = Clock::now();
  };
  const MeasureWindow window(o);
  std::vector<double> us;
  const double busy0 = MachineBusySeconds(), self0 = CpuSeconds(getpid());
  std::optional<Clock::time_point> from;
  double busy_from = busy0, self_from = self0;
  for (int i = 0; i < kClients; ++i) start();
  for (;;) {
    CheckStop();
    const auto now = Clock::now();
    if (!from && now >= window.from) {
      from = now;
      busy_from = MachineBusySeconds();
      self_from = CpuSeconds(getpid());
    }
    if (window.Done(now, us.size())) break;
    if (now >= next_housekeeping) {
      next_housekeeping = now + 100ms;
      time = Housekeeping(all, spec.replicas);
    }
    for (auto& r : set.Poll(10ms)) {
      const auto t1 = Clock::now();
      auto it = in_flight.find(r.uuid);
      if (it == in_flight.end()) continue;
      const auto t0 = it->second;
      in_flight.erase(it);
      if (r.outcome != controller::PeekRace::Outcome::kRows) {
        throw std::runtime_error(
            "replicas: a peek failed (outcome " + std::to_string(static_cast<int>(r.outcome)) +
            ")" + (r.answer && r.answer->has_error() ? ": " + r.answer->error() : "") +
            (r.refused ? ": " + r.refused->why() : ""));
      }
      if (from && t0 >= *from) {
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        ++answered_in_window;
        ++by_replica[r.replica];
        if (r.answer->rows().rows_size() != 1) ++misses;
      }
      start();
    }
  }
  const auto to = Clock::now();
  const double seconds = from ? Seconds(to - *from) : 0;
  const double busy = MachineBusySeconds() - busy_from, self = CpuSeconds(getpid()) - self_from;
  (void)busy0;
  (void)self0;
  // Let the last peeks be answered (or cancelled) before the set goes away.
  for (const auto& [uuid, t0] : in_flight) set.CancelPeek(uuid);
  Cell cell{.name = spec.name};
  cell.Set("replicas", static_cast<double>(spec.replicas));
  cell.Set("clients", kClients);
  cell.Set("peeks_per_s", seconds > 0 ? static_cast<double>(answered_in_window) / seconds : 0);
  AddLatencies(cell, us);
  cell.Set("misses", static_cast<double>(misses));
  const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  cell.Set("machine_busy", seconds > 0 ? busy / (seconds * cpus) : 0);
  cell.Set("client_cpu", seconds > 0 ? self / seconds : 0);
  for (std::size_t i = 0; i < spec.replicas; ++i) {
    cell.Set("answered_by_" + std::to_string(i), static_cast<double>(by_replica[i]));
  }
  return cell;
}

}  // namespace

Scenario ReplicasScenario(const Options& o) {
  Scenario s{.name = "replicas"};
  Options each = o;
  if (!o.shm_size_set) each.shm_size = "128MiB";
  Progress(o, "replicas: starting three two-runtime replicas with the same index%s\n", "");
  std::vector<std::unique_ptr<LookupReplica>> all;
  for (int i = 0; i < 3; ++i) all.push_back(std::make_unique<LookupReplica>(each, true, o.keys));
  for (auto& r : all) r->client->UnboundedReceiveQueue();
  const std::vector<Spec> specs = {{"replicas-1", 1, false},
                                   {"all-2", 2, false},
                                   {"all-3", 3, false},
                                   {"spread-2", 2, true},
                                   {"spread-3", 3, true}};
  for (const auto& spec : specs) s.cells.push_back(Measure(o, spec, all));
  const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "peeks/s with 1 / 2 / 3 replicas: all (first answer) %.0f / %.0f / %.0f, spread "
                "(round-robin) %.0f / %.0f / %.0f; %.0f CPUs, machine busy %.0f%% in replicas-1",
                Metric(s, "replicas-1", "peeks_per_s"), Metric(s, "all-2", "peeks_per_s"),
                Metric(s, "all-3", "peeks_per_s"), Metric(s, "replicas-1", "peeks_per_s"),
                Metric(s, "spread-2", "peeks_per_s"), Metric(s, "spread-3", "peeks_per_s"), cpus,
                100 * Metric(s, "replicas-1", "machine_busy"));
  s.notes.push_back(buf);
  s.notes.push_back(
      "all: every replica answers every peek (availability, not capacity); spread: each peek to "
      "one replica. Every replica runs on this machine, so more replicas add processes, not "
      "CPUs: read capacity can only grow with replicas that have cores of their own.");
  return s;
}

}  // namespace tandem::bench
