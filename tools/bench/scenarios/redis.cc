#include "tools/bench/scenarios/scenarios.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>
#include <random>
#include <thread>
#include <zmq.hpp>

#include "tools/bench/measure.h"
#include "tools/bench/redis.h"

namespace tandem::bench {

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

// A redis-server of its own, preloaded with `keys` keys: closed-loop GETs of random keys.
Cell RedisGet(const Options& o, std::uint64_t keys, const std::string& prefix) {
  const RedisServer server({"--appendonly", "no"});
  Redis redis(server.port());
  Progress(o, (prefix + "%s\n").c_str(), "preloading keys");
  for (std::uint64_t k = 0; k < keys;) {
    std::string batch;
    std::vector<std::string> args = {"MSET"};
    for (int i = 0; i < 1000 && k < keys; ++i, ++k) {
      args.push_back("k" + std::to_string(k));
      args.push_back(std::to_string(k * 2654435761u % 1000003));
    }
    Redis::Append(batch, args);
    redis.Write(batch);
    redis.Reply();
  }
  Progress(o, (prefix + "%s\n").c_str(), "measuring GET");
  std::mt19937_64 rng(21);
  std::uniform_int_distribution<std::uint64_t> pick(0, keys - 1);
  std::size_t misses = 0;
  std::vector<double> us = ClosedLoop(o, [&] {
    std::string cmd;
    Redis::Append(cmd, {"GET", "k" + std::to_string(pick(rng))});
    redis.Write(cmd);
    if (!redis.Reply()) ++misses;
  });
  Cell cell{.name = "redis-get"};
  cell.Set("keys", static_cast<double>(keys));
  AddLatencies(cell, us);
  cell.Set("misses", static_cast<double>(misses));
  return cell;
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
  s.cells.push_back(RedisGet(o, o.keys, "redis: "));
  std::snprintf(buf, sizeof buf, "Tandem peek p50 / Redis GET p50 = %.2f (target <= 2)",
                tandem / std::max(P50(s.cells.back()), 1e-9));
  s.notes.push_back(buf);
  std::snprintf(buf, sizeof buf, "ZeroMQ two-hop floor p50 / Redis GET p50 = %.2f",
                two_hops / std::max(P50(s.cells.back()), 1e-9));
  s.notes.push_back(buf);
  return s;
}

}  // namespace tandem::bench
