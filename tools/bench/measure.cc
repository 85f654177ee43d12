#include "tools/bench/measure.h"

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

}  // namespace tandem::bench
