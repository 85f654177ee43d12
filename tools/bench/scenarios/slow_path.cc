// slow-path (DESIGN §8): a one-shot aggregate query — count and sum(value) per g = key % 100 over a
// 10^5- and a 10^6-row index — answered through `tandem-ctl query`'s protocol sequence, closed
// loop from one client:
//   CreateDataflow{ONE_SHOT_READ, as_of [A], until [A+1], import the index, export t<n>}
//   Peek{t<n>, A}                 (sent right after the create: answered once computed)
//   AllowCompaction{t<n>, empty}  (the drop, before the next query)
// A = the index's latest readable time (its write frontier - 1). The latency is create sent →
// PeekResponse received. Cells {solo, two-runtime} x {idle, loaded} x each index size, with
// isolation's heavy load; and per mode, the memory a one-shot over the largest index takes while
// it runs (segment bytes and the rendering runtime's RSS).
#include <algorithm>
#include <cstdio>

#include "tools/bench/measure.h"
#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {

namespace {

// The index of size n: source u<10i+1>, view u<10i+2>, index u<10i+3> (clear of isolation's
// u1..u6).
GroupedTarget GroupedTargetFor(const Options& o, std::size_t i) {
  const std::uint64_t base = 10 * (i + 1);
  auto id = [](std::uint64_t n) { return "u" + std::to_string(n); };
  return GroupedTarget{.arranged = o.slow_arranged,
                       .src = id(base + 1),
                       .view = id(base + 2),
                       .index = id(base + 3),
                       .groups = o.slow_groups};
}

// Fresh transient ids on one replica: t<n> (the result), t<n+1> (the aggregate it is on).
class TransientIds {
 public:
  std::pair<std::string, std::string> Next() {
    n_ += 2;
    return {"t" + std::to_string(n_), "t" + std::to_string(n_ + 1)};
  }

 private:
  std::uint64_t n_ = 0;
};

pb::Command PeekOf(const std::string& uuid, const std::string& id, std::uint64_t t) {
  pb::Command c;
  c.mutable_peek()->set_uuid(uuid);
  c.mutable_peek()->set_id(id);
  c.mutable_peek()->set_timestamp(t);
  return c;
}

pb::Command DropOf(const std::string& id) {
  pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier();
  return c;
}

// The PeekResponse to `uuid` (other responses noted by the client on the way). Throws after
// `limit`.
pb::PeekResponse AwaitPeek(Client& client, const std::string& uuid, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    if (Clock::now() > deadline) {
      throw std::runtime_error("no PeekResponse to " + uuid + " within " +
                               std::to_string(limit.count()) + " s");
    }
    auto r = client.Receive(1s);
    if (r && r->has_peek_response() && r->peek_response().uuid() == uuid) {
      return r->peek_response();
    }
  }
}

// True when `answer` is the aggregate of a key_value source of `keys` keys in `groups` groups:
// one row per group present, counts summing to the keys (each key has exactly one value).
bool RightAnswer(const pb::PeekResponse& answer, std::uint64_t keys, std::int64_t groups) {
  if (!answer.has_rows()) return false;
  const auto expected_rows = std::min<std::uint64_t>(keys, static_cast<std::uint64_t>(groups));
  if (static_cast<std::uint64_t>(answer.rows().rows_size()) != expected_rows) return false;
  std::int64_t total = 0;
  for (const auto& rc : answer.rows().rows()) {
    if (rc.count() != 1 || rc.row().datums_size() < 2) return false;
    total += rc.row().datums(1).int64();
  }
  return total == static_cast<std::int64_t>(keys);
}

struct OneShotRun {
  std::vector<double> us;
  std::size_t wrong = 0;  // answers that were not the aggregate
  Clock::time_point from, to;
  double supervisor_mean_us = 0;  // the supervisor's build-to-answer mean over the same queries
};

// Closed-loop one-shot queries of `target` (of `keys` keys) in the measuring window, with
// --slow-samples as the window's minimum. Every 100 ms compacts every other index behind its
// frontier and `target` behind the last query's as_of (so the next one's is never compacted).
OneShotRun OneShotLoop(Client& client, Replica& replica, const GroupedTarget& target,
                       std::uint64_t keys, const Options& o, TransientIds& ids) {
  OneShotRun run;
  MeasureWindow window(o);
  window.min_samples = o.slow_samples;
  run.from = window.from;
  auto next_housekeeping = Clock::now();
  std::uint64_t last_as_of = 0, n = 0;
  std::optional<std::pair<double, double>> before;
  for (;;) {
    const auto now = Clock::now();
    if (window.Done(now, run.us.size())) break;
    if (!before && now >= window.from) before = replica.SupervisorOneShotLatency();
    if (now >= next_housekeeping) {
      next_housekeeping = now + 100ms;
      client.CompactAllBut({target.index});
      if (last_as_of > 0) client.Compact(target.index, last_as_of);
      replica.CheckAlive();
    }
    const std::uint64_t as_of = client.Write(target.index) - 1;
    const auto [result, build] = ids.Next();
    const std::string uuid = "q" + std::to_string(++n);
    const auto t0 = Clock::now();
    client.Send(target.OneShot(as_of, result, build));
    client.Send(PeekOf(uuid, result, as_of));
    const pb::PeekResponse answer = AwaitPeek(client, uuid, 60s);
    const auto t1 = Clock::now();
    client.Send(DropOf(result));
    if (answer.has_error()) {
      throw std::runtime_error("one-shot query of " + target.index + " at " +
                               std::to_string(as_of) + " failed: " + answer.error());
    }
    if (t0 >= window.from) {
      run.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (!RightAnswer(answer, keys, target.groups)) ++run.wrong;
    }
    last_as_of = as_of;
  }
  run.to = Clock::now();
  const auto after = replica.SupervisorOneShotLatency();
  if (before && after.second > before->second) {
    run.supervisor_mean_us = 1e6 * (after.first - before->first) / (after.second - before->second);
  }
  return run;
}

// One one-shot over `target` kept alive once computed: the rendering runtime's RSS and the
// segment's used bytes before it, at their peak while it is built and computed, and after it is
// dropped. A one-shot that copied the imported arrangement would add about the index's segment
// bytes to the RSS.
Cell MemoryCell(Client& client, Replica& replica, const GroupedTarget& target, std::uint64_t keys,
                double index_bytes, const std::string& name, TransientIds& ids) {
  const pid_t pid = replica.RuntimePid(replica.two_runtime() ? "interactive" : "solo");
  client.Pump(200ms);
  const double rss0 = RssBytes(pid), seg0 = replica.SegmentBytesUsed();
  const std::uint64_t as_of = client.Write(target.index) - 1;
  const auto [result, build] = ids.Next();
  client.Send(target.OneShot(as_of, result, build));
  double rss_peak = rss0;
  const auto deadline = Clock::now() + 120s;
  // Computed: its export reports write [as_of + 1] (DESIGN §8).
  for (bool computed = false; !computed;) {
    if (Clock::now() > deadline) throw std::runtime_error(result + " not computed within 120 s");
    auto r = client.Receive(2ms);
    rss_peak = std::max(rss_peak, RssBytes(pid));
    computed = r && r->has_frontiers() && r->frontiers().id() == result &&
               !r->frontiers().write().elements().empty() &&
               r->frontiers().write().elements(0) > as_of;
  }
  client.Pump(100ms);
  const double rss1 = RssBytes(pid), seg1 = replica.SegmentBytesUsed();
  rss_peak = std::max(rss_peak, rss1);
  client.Send(PeekOf("memory", result, as_of));
  const pb::PeekResponse answer = AwaitPeek(client, "memory", 60s);
  client.Send(DropOf(result));
  client.Pump(500ms);
  const double rss2 = RssBytes(pid);
  Cell cell{.name = name};
  cell.Set("keys", static_cast<double>(keys));
  cell.Set("index_segment_bytes", index_bytes);
  cell.Set("segment_used_before_bytes", seg0);
  cell.Set("segment_delta_bytes", seg1 - seg0);
  cell.Set("rss_before_bytes", rss0);
  cell.Set("rss_delta_bytes", rss1 - rss0);
  cell.Set("rss_peak_delta_bytes", rss_peak - rss0);
  cell.Set("rss_after_drop_delta_bytes", rss2 - rss0);
  cell.Set("rss_delta_over_index_bytes", index_bytes > 0 ? (rss1 - rss0) / index_bytes : 0);
  cell.Set("wrong_answers", RightAnswer(answer, keys, target.groups) ? 0 : 1);
  return cell;
}

}  // namespace

Scenario SlowPath(const Options& o) {
  Scenario s{.name = "slow-path"};
  const KeyValue heavy = HeavyLoad(o);
  std::vector<std::string> sizes;
  for (std::uint64_t keys : o.slow_keys) sizes.push_back("n=" + std::to_string(keys));
  for (bool two : {false, true}) {
    const std::string mode = two ? "two-runtime" : "solo";
    Progress(o, "slow-path: starting a %s replica\n", mode);
    Replica replica(ReplicaFor(o, two));
    replica.WaitReady();
    Client client(replica.endpoint(), ClientKeys(o));
    TransientIds ids;
    std::vector<GroupedTarget> targets;
    std::vector<double> index_bytes;
    for (std::size_t i = 0; i < o.slow_keys.size(); ++i) {
      const std::uint64_t keys = o.slow_keys[i];
      targets.push_back(GroupedTargetFor(o, i));
      Progress(o, "slow-path: building the %s index\n", sizes[i]);
      const double before = replica.SegmentBytesUsed();
      client.Send(targets[i].Create(LightLoad(o, keys)));
      client.WaitWrite(targets[i].index, 2, BuildLimit(keys), replica);
      client.CompactAllBut({});
      client.Pump(200ms);
      index_bytes.push_back(replica.SegmentBytesUsed() - before);
    }
    for (bool loaded : {false, true}) {
      const std::string load = loaded ? "loaded" : "idle";
      if (loaded) {
        client.Track(kHeavyIndex);
        client.Send(ReducedSource(kHeavySource, kHeavyIndex, kHeavyReduce, kHeavyReduceIndex, heavy,
                                  o.groups));
        client.WaitWrite(kHeavyIndex, 2, BuildLimit(heavy.keys), replica);
        client.WaitWrite(kHeavyReduceIndex, 2, BuildLimit(heavy.keys), replica);
      }
      for (std::size_t i = 0; i < targets.size(); ++i) {
        const std::string name = mode + "/" + load + "/" + sizes[i];
        Progress(o, "slow-path: measuring %s\n", name);
        OneShotRun run = OneShotLoop(client, replica, targets[i], o.slow_keys[i], o, ids);
        Cell cell{.name = name};
        cell.Set("keys", static_cast<double>(o.slow_keys[i]));
        cell.Set("groups", static_cast<double>(std::min<std::uint64_t>(
                               o.slow_keys[i], static_cast<std::uint64_t>(o.slow_groups))));
        AddLatencies(cell, run.us);
        cell.Set("wrong_answers", static_cast<double>(run.wrong));
        cell.Set("supervisor_build_to_answer_mean_us", run.supervisor_mean_us);
        const double ticks = loaded ? client.TickRate(run.from, run.to) : 0;
        cell.Set("updates_per_s", ticks * static_cast<double>(heavy.updates_per_tick));
        s.cells.push_back(std::move(cell));
      }
      if (!loaded && !targets.empty()) {
        const std::size_t big = static_cast<std::size_t>(
            std::max_element(o.slow_keys.begin(), o.slow_keys.end()) - o.slow_keys.begin());
        const std::string name = mode + "/memory/" + sizes[big];
        Progress(o, "slow-path: measuring %s\n", name);
        s.cells.push_back(MemoryCell(client, replica, targets[big], o.slow_keys[big],
                                     index_bytes[big], name, ids));
      }
    }
  }
  // The targets, per index size: maintenance does not slow a one-shot on the interactive
  // runtime (two-runtime loaded p99 <= 2x idle), and the split pays against solo (solo loaded
  // p99 >= 10x two-runtime loaded).
  for (const std::string& size : sizes) {
    const double two_idle = Metric(s, "two-runtime/idle/" + size, "p99_us");
    const double two_loaded = Metric(s, "two-runtime/loaded/" + size, "p99_us");
    const double solo_loaded = Metric(s, "solo/loaded/" + size, "p99_us");
    const double two_ratio = two_loaded / std::max(1e-9, two_idle);
    const double solo_vs_two = solo_loaded / std::max(1e-9, two_loaded);
    Cell verdict{.name = "verdict/" + size};
    verdict.Set("two_loaded_over_idle_p99", two_ratio);
    verdict.Set("two_loaded_over_idle_target_max", 2);
    verdict.Set("two_loaded_over_idle_met", two_ratio <= 2 ? 1 : 0);
    verdict.Set("solo_loaded_over_two_loaded_p99", solo_vs_two);
    verdict.Set("solo_loaded_over_two_loaded_target_min", 10);
    verdict.Set("solo_loaded_over_two_loaded_met", solo_vs_two >= 10 ? 1 : 0);
    s.cells.push_back(std::move(verdict));
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s: two-runtime loaded p99 / idle p99 = %.2f (target <= 2: %s); solo loaded "
                  "p99 / two-runtime loaded p99 = %.2f (target >= 10: %s)",
                  size.c_str(), two_ratio, two_ratio <= 2 ? "met" : "MISSED", solo_vs_two,
                  solo_vs_two >= 10 ? "met" : "MISSED");
    s.notes.push_back(buf);
  }
  s.notes.push_back(std::string("plan: ") +
                    (o.slow_arranged ? "arranged (the index is on a view (g, key, value) keyed by "
                                       "g; the one-shot reduces the imported index by its key)"
                                     : "mapped (the index is keyed by key; the one-shot maps g = "
                                       "key % groups and reduces by it)") +
                    "; latency = CreateDataflow sent -> PeekResponse received (client round "
                    "trip); memory cells: the rendering runtime's VmRSS and the segment while one "
                    "computed one-shot over the largest index is kept");
  return s;
}

}  // namespace tandem::bench
