// join: an incremental join of a fact stream (key_value, --join-fact-keys 10^6 keys,
// --join-fact-updates per tick) with a changing dimension (key_value, --join-dim-keys 10^4 keys,
// --join-dim-updates per tick) on fk = fact.key % dim_keys, into an index by the fact's key
// (dataflows.h JoinTarget). Both sources tick as fast as possible, on a two-runtime replica.
//
//  throughput: two variants, --join-rounds rounds each in ABBA order, a fresh replica each —
//    "sources" (both inputs are sources of the joining dataflow: the join arranges both sides)
//    and "imported" (the dimension is an index by its key exported by another dataflow: the join
//    reads it in place). Input updates/s through the join = the join index's ticks/s (its write
//    frontier, from Frontiers) × (fact + dimension updates per tick): a tick of the join's output
//    is done when both inputs' updates of that tick went through — ingest's method. Beside it, the
//    memory of the run: the segment's used bytes and the maintenance runtime's VmRSS and RssAnon,
//    each over the empty replica's, sampled every 250 ms (median and peak); a check of the answer
//    (peeked rows of the join index); and the runtime's render log line (what it arranged).
//  isolation: the headline's two-runtime cells (isolation.cc's machinery) with the sources
//    variant's join as the heavy load; then, as a control in the same conditions, the same cells
//    with the headline's heavy load (control/...).
#include <algorithm>
#include <cstdio>
#include <random>

#include "tools/bench/measure.h"
#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {

namespace {

constexpr double kPerWorkerTarget = 1e6;

KeyValue FactLoad(const Options& o) {
  return {.keys = o.join_fact_keys,
          .updates_per_tick = o.join_fact_updates,
          .tick_interval_us = 0,
          .seed = 41};
}

KeyValue DimLoad(const Options& o) {
  return {.keys = o.join_dim_keys,
          .updates_per_tick = o.join_dim_updates,
          .tick_interval_us = 0,
          .seed = 43};
}

// Ids clear of isolation's (u1..u6) and slow-path's (u11..): u<base+1..base+5>.
JoinTarget JoinTargetFor(const Options& o, bool imported, std::uint64_t base) {
  auto id = [&](std::uint64_t n) { return "u" + std::to_string(base + n); };
  return JoinTarget{.imported = imported,
                    .fact = id(1),
                    .dim = id(2),
                    .dim_index = id(3),
                    .join = id(4),
                    .join_index = id(5),
                    .dim_keys = o.join_dim_keys};
}

// The segment a join replica gets unless --shm-size: 1 KiB a fact key (the join index is ~120
// bytes a row, twice that while its spine merges, plus the churn not yet compacted and the
// imported dimension's index), at least the default.
Options Sized(const Options& o) {
  Options sized = o;
  if (!o.shm_size_set) {
    sized.shm_size =
        std::to_string(std::max<std::uint64_t>(512, o.join_fact_keys * 1024 >> 20)) + "MiB";
  }
  return sized;
}

// Peeks `n` random fact keys of the join index at its latest complete time: each must be one row
// (key, value, fk, dim key, dim value) with fk = dim key = key % dim_keys. Returns the wrong ones.
std::size_t CheckAnswers(Client& client, Replica& replica, const JoinTarget& t,
                         std::uint64_t fact_keys, int n) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(fact_keys) - 1);
  std::size_t wrong = 0;
  for (int i = 0; i < n; ++i) {
    replica.CheckAlive();
    const std::int64_t key = pick(rng);
    pb::Command c;
    auto* p = c.mutable_peek();
    const std::string uuid = "check" + std::to_string(i);
    p->set_uuid(uuid);
    p->set_id(t.join_index);
    p->set_timestamp(client.Write(t.join_index) - 1);
    p->add_keys()->add_datums()->set_int64(key);
    client.Send(c);
    std::optional<pb::Response> r;
    const auto deadline = Clock::now() + 30s;
    while (!(r && r->has_peek_response() && r->peek_response().uuid() == uuid)) {
      if (Clock::now() > deadline) throw std::runtime_error("no answer to a peek of the join");
      r = client.Receive(1s);
    }
    const auto& a = r->peek_response();
    if (a.has_error()) throw std::runtime_error("peek of the join failed: " + a.error());
    const std::int64_t fk = key % static_cast<std::int64_t>(t.dim_keys);
    const bool right = a.rows().rows_size() == 1 && a.rows().rows(0).count() == 1 &&
                       a.rows().rows(0).row().datums_size() == 5 &&
                       a.rows().rows(0).row().datums(0).int64() == key &&
                       a.rows().rows(0).row().datums(2).int64() == fk &&
                       a.rows().rows(0).row().datums(3).int64() == fk;
    if (!right) ++wrong;
  }
  return wrong;
}

// The runtime's render log lines saying what each join of `debug_name` arranged and what it read
// in place ("join 1: left side own arrangement, right side imported index u43, in place").
std::string RenderedJoins(const Replica& replica, const std::string& debug_name) {
  const std::string log = replica.Log();
  const std::string needle = "dataflow " + debug_name + ": join";
  std::string out;
  for (std::size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
    const std::size_t from = at + needle.size() - 4, end = log.find('\n', at);
    out +=
        (out.empty() ? "" : "; ") + log.substr(from, end == std::string::npos ? end : end - from);
  }
  return out.empty() ? "(no render log line)" : out;
}

Cell JoinThroughputCell(const Options& o, bool imported, std::vector<std::string>& notes,
                        bool* in_place) {
  const std::string name = imported ? "imported" : "sources";
  const KeyValue fact = FactLoad(o), dim = DimLoad(o);
  const JoinTarget t = JoinTargetFor(o, imported, 40);
  Progress(o, "join: %s (starting a replica)\n", name);
  tools::ReplicaOptions ro = ReplicaFor(Sized(o), true);
  ro.log_level = "info";  // the render log line of the join (RenderedJoins)
  Replica replica(ro);
  replica.WaitReady();
  Client client(replica.endpoint(), ClientKeys(o));
  const pid_t maintenance = replica.RuntimePid("maintenance");
  client.Pump(200ms);
  const double rss0 = RssBytes(maintenance), seg0 = replica.SegmentBytesUsed();
  const double anon0 = RssBytes(maintenance, "RssAnon");
  Progress(o, "join: %s (building)\n", name);
  const auto sent = Clock::now();
  // Back to back, so both dataflows start at time 0 together (a dimension far ahead would keep
  // that many ticks uncompacted under the join's hold).
  for (const pb::Command& c : t.Create(fact, dim)) client.Send(c);
  for (const std::string& id : t.Built()) client.WaitWrite(id, 2, BuildLimit(fact.keys), replica);
  const double build_s = Seconds(Clock::now() - sent);
  const std::string rendered = RenderedJoins(replica, "bench-join-" + t.join_index);
  notes.push_back(name + ": " + rendered);
  *in_place =
      rendered.find("right side imported index " + t.dim_index + ", in place") != std::string::npos;

  Progress(o, "join: measuring %s\n", name);
  client.Track(t.join_index);
  const MeasureWindow window(o);
  std::vector<double> rss, anon, seg;
  std::uint64_t dim_write_from = 0;
  Clock::time_point dim_from{};
  auto next_sample = window.from;
  // A rate needs two frontier reports inside the window: a join still catching up on a loaded
  // machine may report fewer in a short one, so the window goes on (at most --max-factor
  // durations) until it has them.
  while (Clock::now() < window.hard &&
         (Clock::now() < window.until || client.TrackedSince(window.from) < 2)) {
    client.Pump(50ms);
    client.CompactAllBut({});
    replica.CheckAlive();
    const auto now = Clock::now();
    if (now >= next_sample) {
      next_sample += 250ms;
      if (dim_write_from == 0) {
        dim_write_from = client.Write(t.dim_index);
        dim_from = now;
      }
      rss.push_back(RssBytes(maintenance) - rss0);
      anon.push_back(RssBytes(maintenance, "RssAnon") - anon0);
      seg.push_back(replica.SegmentBytesUsed() - seg0);
    }
  }
  const auto to = Clock::now();
  const double ticks = client.TickRate(window.from, to);
  const double dim_ticks =
      imported && dim_write_from > 0
          ? static_cast<double>(client.Write(t.dim_index) - dim_write_from) / Seconds(to - dim_from)
          : ticks;
  const double per_tick = static_cast<double>(fact.updates_per_tick + dim.updates_per_tick);
  const double fanout = static_cast<double>(fact.keys) / static_cast<double>(t.dim_keys);
  const std::size_t wrong = CheckAnswers(client, replica, t, fact.keys, 50);

  Cell cell{.name = name};
  cell.Set("fact_keys", static_cast<double>(fact.keys));
  cell.Set("fact_updates_per_tick", static_cast<double>(fact.updates_per_tick));
  cell.Set("dim_keys", static_cast<double>(dim.keys));
  cell.Set("dim_updates_per_tick", static_cast<double>(dim.updates_per_tick));
  cell.Set("build_s", build_s);
  cell.Set("ticks_per_s", ticks);
  cell.Set("dim_ticks_per_s", dim_ticks);
  cell.Set("input_updates_per_s", ticks * per_tick);
  cell.Set("workers", o.workers);
  cell.Set("input_updates_per_s_per_worker", ticks * per_tick / o.workers);
  // Each update is a retraction and an insertion: a fact's moves its one joined row, a
  // dimension key's moves the rows of its fanout facts.
  cell.Set("output_rows_per_s", ticks * 2 *
                                    (static_cast<double>(fact.updates_per_tick) +
                                     static_cast<double>(dim.updates_per_tick) * fanout));
  cell.Set("memory_samples", static_cast<double>(rss.size()));
  cell.Set("segment_bytes_median", Median(seg));
  cell.Set("segment_bytes_peak", seg.empty() ? 0 : *std::max_element(seg.begin(), seg.end()));
  cell.Set("rss_bytes_median", Median(rss));
  cell.Set("rss_bytes_peak", rss.empty() ? 0 : *std::max_element(rss.begin(), rss.end()));
  cell.Set("rss_before_bytes", rss0);
  // The runtime's private memory (VmRSS less the segment's and the binary's pages): where an
  // arrangement of the join's own lives.
  cell.Set("rss_anon_bytes_median", Median(anon));
  cell.Set("rss_anon_bytes_peak", anon.empty() ? 0 : *std::max_element(anon.begin(), anon.end()));
  cell.Set("wrong_answers", static_cast<double>(wrong));
  return cell;
}

void Throughput(const Options& o, Scenario& s) {
  std::vector<std::string> rendered;
  bool sources_in_place = false, imported_in_place = false;
  // Rounds in ABBA order (sources, imported, imported, sources, ...), a fresh replica each, so
  // drift and neighbours on a shared machine weigh on both variants alike.
  std::vector<Cell> rounds[2];
  std::vector<double> ratios;
  for (std::uint64_t r = 0; r < o.join_rounds; ++r) {
    std::vector<std::string> notes;
    Cell pair[2];
    for (int i = 0; i < 2; ++i) {
      const bool imported = (i == 1) != (r % 2 == 1);
      pair[imported ? 1 : 0] =
          JoinThroughputCell(o, imported, notes, imported ? &imported_in_place : &sources_in_place);
    }
    if (r == 0) rendered = notes;
    const Scenario both{.cells = {pair[0], pair[1]}};
    ratios.push_back(Metric(both, "imported", "input_updates_per_s_per_worker") /
                     std::max(1.0, Metric(both, "sources", "input_updates_per_s_per_worker")));
    rounds[0].push_back(std::move(pair[0]));
    rounds[1].push_back(std::move(pair[1]));
  }
  s.cells.push_back(MedianOfRounds(rounds[0], "input_updates_per_s_per_worker"));
  s.cells.push_back(MedianOfRounds(rounds[1], "input_updates_per_s_per_worker"));
  const double a = Metric(s, "sources", "input_updates_per_s_per_worker");
  const double b = Metric(s, "imported", "input_updates_per_s_per_worker");
  const double rss_diff =
      Metric(s, "sources", "rss_bytes_median") - Metric(s, "imported", "rss_bytes_median");
  const double anon_diff = Metric(s, "sources", "rss_anon_bytes_median") -
                           Metric(s, "imported", "rss_anon_bytes_median");
  const double seg_diff =
      Metric(s, "imported", "segment_bytes_median") - Metric(s, "sources", "segment_bytes_median");
  Cell v{.name = "verdict"};
  v.Set("sources_per_worker", a);
  v.Set("imported_per_worker", b);
  v.Set("target_min_per_worker", kPerWorkerTarget);
  v.Set("sources_met", a >= kPerWorkerTarget ? 1 : 0);
  v.Set("imported_met", b >= kPerWorkerTarget ? 1 : 0);
  v.Set("imported_over_sources_median_of_rounds", Median(ratios));
  // The dimension arranged inside the join (sources) vs read in place (imported): the first's
  // RSS holds it, the second's segment holds the dimension's index instead.
  v.Set("rss_sources_minus_imported_bytes", rss_diff);
  v.Set("rss_anon_sources_minus_imported_bytes", anon_diff);
  // The runtime's render log: the imported variant's dimension side is the index, read in place.
  v.Set("imported_read_in_place", imported_in_place && !sources_in_place ? 1 : 0);
  v.Set("segment_imported_minus_sources_bytes", seg_diff);
  s.cells.push_back(std::move(v));
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "input updates/s per worker through the join: sources %.0f (target >= "
                "1000000: %s), imported %.0f (%s) (medians of %zu rounds); imported/sources %.2f "
                "(median of the rounds' ratios)",
                a, a >= kPerWorkerTarget ? "met" : "MISSED", b,
                b >= kPerWorkerTarget ? "met" : "MISSED", ratios.size(), Median(ratios));
  s.notes.push_back(buf);
  std::snprintf(buf, sizeof buf,
                "memory (medians over the run, over the empty replica), sources - imported: "
                "maintenance runtime's private memory (RssAnon) %.0f bytes, VmRSS %.0f bytes; "
                "segment imported - sources %.0f bytes (the dimension's index)",
                anon_diff, rss_diff, seg_diff);
  s.notes.push_back(buf);
  for (const std::string& r : rendered) s.notes.push_back(r);
  std::snprintf(buf, sizeof buf,
                "no second copy of the dimension in the imported variant: the join reads the "
                "imported index in place (render log): %s; a copy would make the private memory "
                "difference above <= 0 (the sources variant's own arrangement of the dimension "
                "is ~200-235 bytes a row)",
                imported_in_place && !sources_in_place ? "met" : "MISSED");
  s.notes.push_back(buf);
}

void JoinIsolation(const Options& o, Scenario& s) {
  const KeyValue fact = FactLoad(o), dim = DimLoad(o);
  const JoinTarget t = JoinTargetFor(o, false, 50);
  const HeavyLoadSpec load{
      .what = "a join of " + std::to_string(fact.keys) + " x " + std::to_string(dim.keys),
      .dataflows = t.Create(fact, dim),
      .built = t.Built(),
      .tracked = t.join_index,
      .updates_per_tick = static_cast<double>(fact.updates_per_tick + dim.updates_per_tick),
      .build_keys = fact.keys,
      .shm_size = Sized(o).shm_size};
  for (Cell& c : IsolationCells(o, true, load, "join-isolation: ", nullptr)) {
    s.cells.push_back(std::move(c));
  }
  // The control, right after in the same conditions: the headline's heavy load (an index and a
  // reduce). On a shared 2-core machine a neighbour's CPU moves both alike.
  for (Cell& c : IsolationCells(o, true, HeadlineLoad(o), "join-isolation: control: ", nullptr)) {
    c.name = "control/" + c.name;
    s.cells.push_back(std::move(c));
  }
  auto ratio = [&](const std::string& prefix, const char* m) {
    return Metric(s, prefix + "two-runtime/loaded", m) /
           std::max(1e-9, Metric(s, prefix + "two-runtime/idle", m));
  };
  const double join_ratio = ratio("", "p99_us"), control_ratio = ratio("control/", "p99_us");
  Cell v{.name = "verdict"};
  v.Set("two_loaded_over_idle_p99", join_ratio);
  v.Set("two_loaded_over_idle_target_max", 2);
  v.Set("two_loaded_over_idle_met", join_ratio <= 2 ? 1 : 0);
  v.Set("two_loaded_over_idle_p50", ratio("", "p50_us"));
  v.Set("control_two_loaded_over_idle_p99", control_ratio);
  v.Set("join_over_control_p99_ratio", join_ratio / std::max(1e-9, control_ratio));
  s.cells.push_back(std::move(v));
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "two-runtime loaded (join) p99 / idle p99 = %.2f (target <= 2: %s); the same with "
                "the headline's load (control, same conditions) = %.2f",
                join_ratio, join_ratio <= 2 ? "met" : "MISSED", control_ratio);
  s.notes.push_back(buf);
}

}  // namespace

JoinLoad JoinSourcesLoad(const Options& o, std::uint64_t base) {
  return {.target = JoinTargetFor(o, false, base),
          .fact = FactLoad(o),
          .dim = DimLoad(o),
          .options = Sized(o)};
}

std::vector<Scenario> Join(const Options& o) {
  std::vector<Scenario> out;
  if (o.join_part != "isolation") {
    out.push_back({.name = "join"});
    Throughput(o, out.back());
  }
  if (o.join_part != "throughput") {
    out.push_back({.name = "join-isolation"});
    JoinIsolation(o, out.back());
  }
  return out;
}

}  // namespace tandem::bench
