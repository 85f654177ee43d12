#include "tools/bench/measure.h"

#include <algorithm>
#include <cstdio>
#include <random>

namespace tandem::bench {

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

Options RoundOptions(const Options& o, int rounds) {
  Options round = o;
  round.duration = o.duration / rounds;
  round.warmup = o.warmup / rounds;
  round.min_samples = (o.min_samples + rounds - 1) / rounds;
  return round;
}

std::vector<Cell> AlternatingPeekCells(const Options& o, LookupReplica (&replicas)[2],
                                       const std::string (&names)[2], int rounds,
                                       const std::string& progress,
                                       std::vector<std::string>* notes) {
  for (auto& r : replicas) r.client->UnboundedReceiveQueue();
  const Options round = RoundOptions(o, rounds);
  std::vector<double> us[2];
  // Per round, the p50 and p99 of each: the medians of their ratios resist drift between rounds.
  std::vector<double> round_p50[2], round_p99[2];
  for (int i = 0; i < rounds; ++i) {
    for (int k = 0; k < 2; ++k) {
      const int which = (i % 2 == 0) ? k : 1 - k;  // ABBA: neither always goes first
      Progress(o, (progress + ": measuring %s\n").c_str(),
               names[which] + ", round " + std::to_string(i + 1));
      PeekRun run = PeekLoop(*replicas[which].client, replicas[which].replica, kLightIndex, o.keys,
                             round, 100 + static_cast<std::uint64_t>(i));
      us[which].insert(us[which].end(), run.us.begin(), run.us.end());
      std::sort(run.us.begin(), run.us.end());
      round_p50[which].push_back(Percentile(run.us, 0.50));
      round_p99[which].push_back(Percentile(run.us, 0.99));
    }
  }
  auto median_ratio = [&](std::vector<double>* per_round) {
    std::vector<double> r;
    for (int i = 0; i < rounds; ++i) r.push_back(per_round[1][i] / std::max(1e-9, per_round[0][i]));
    std::sort(r.begin(), r.end());
    return Percentile(r, 0.5);
  };
  Cell cells[2] = {{.name = names[0]}, {.name = names[1]}};
  for (int k = 0; k < 2; ++k) {
    cells[k].Set("keys", static_cast<double>(o.keys));
    AddLatencies(cells[k], us[k]);
  }
  auto get = [](const Cell& c, const std::string& m) {
    for (const auto& [k, v] : c.metrics) {
      if (k == m) return v;
    }
    return 0.0;
  };
  Cell ratio{.name = names[1] + "/" + names[0]};
  for (const std::string m : {"p50_us", "p90_us", "p99_us", "mean_us"}) {
    ratio.Set(m.substr(0, m.size() - 3) + "_ratio",
              get(cells[1], m) / std::max(1e-9, get(cells[0], m)));
  }
  ratio.Set("p50_ratio_median_of_rounds", median_ratio(round_p50));
  ratio.Set("p99_ratio_median_of_rounds", median_ratio(round_p99));
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s / %s point-lookup peek: p50 %.2fx (%.0f vs %.0f us), p99 %.2fx (%.0f vs %.0f "
                "us); median over %d interleaved rounds of the per-round ratio: p50 %.2fx, p99 "
                "%.2fx",
                names[1].c_str(), names[0].c_str(), get(ratio, "p50_ratio"),
                get(cells[1], "p50_us"), get(cells[0], "p50_us"), get(ratio, "p99_ratio"),
                get(cells[1], "p99_us"), get(cells[0], "p99_us"), rounds,
                get(ratio, "p50_ratio_median_of_rounds"), get(ratio, "p99_ratio_median_of_rounds"));
  notes->push_back(buf);
  return {cells[0], cells[1], ratio};
}

}  // namespace tandem::bench
