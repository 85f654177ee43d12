// curve (DESIGN §12): what CURVE on the controller endpoint costs a point-lookup peek. Two
// two-runtime replicas with the same index, one plain and one requiring CURVE, measured in the
// same run in alternating rounds (so the machine's drift and neighbours weigh on both alike).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <zmq.hpp>

#include "tools/bench/measure.h"
#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {
namespace {

// The protocol alone: a DEALER and a ROUTER echo over loopback TCP, each on its own thread and
// context (like the processes of a replica), with or without CURVE (the echo's context has no ZAP
// handler, so any client key is taken: the handshake is the same, the cost per message too).
class Echo {
 public:
  explicit Echo(bool curve)
      : server_(server_ctx_, zmq::socket_type::router),
        client_(client_ctx_, zmq::socket_type::dealer) {
    if (curve) {
      auto s = ipc::GenerateCurveKeyPair(), c = ipc::GenerateCurveKeyPair();
      if (!s.ok() || !c.ok()) throw std::runtime_error("no CURVE in libzmq");
      server_.set(zmq::sockopt::curve_server, 1);
      server_.set(zmq::sockopt::curve_secretkey, s->secret_z85);
      client_.set(zmq::sockopt::curve_serverkey, s->public_z85);
      client_.set(zmq::sockopt::curve_publickey, c->public_z85);
      client_.set(zmq::sockopt::curve_secretkey, c->secret_z85);
    }
    const std::string at = "tcp://127.0.0.1:" + std::to_string(FreePort());
    server_.bind(at);
    client_.connect(at);
    thread_ = std::thread([this] {
      zmq::pollitem_t item{server_.handle(), 0, ZMQ_POLLIN, 0};
      while (!stop_.load()) {
        zmq::poll(&item, 1, 100ms);
        if (!(item.revents & ZMQ_POLLIN)) continue;
        for (bool more = true; more;) {
          zmq::message_t m;
          (void)server_.recv(m);
          more = m.more();
          server_.send(m, more ? zmq::send_flags::sndmore : zmq::send_flags::none);
        }
      }
    });
  }
  ~Echo() {
    stop_ = true;
    thread_.join();
  }
  void RoundTrip() {
    client_.send(zmq::buffer(payload_), zmq::send_flags::none);
    zmq::message_t reply;
    (void)client_.recv(reply);
  }

 private:
  zmq::context_t server_ctx_{1}, client_ctx_{1};
  zmq::socket_t server_, client_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  const std::string payload_ = std::string(64, 'p');  // about a point-lookup Peek's size
};

// The bare ZeroMQ round trip (1 hop, 64 bytes), plain vs CURVE in `rounds` alternating rounds:
// what CURVE itself costs, under the replica's hops. Adds its note to `notes`.
std::vector<Cell> FloorCells(const Options& round, int rounds, std::vector<std::string>* notes) {
  std::vector<double> floor_us[2];
  {
    Echo echoes[2] = {Echo(false), Echo(true)};
    for (int i = 0; i < rounds; ++i) {
      for (int k = 0; k < 2; ++k) {
        const int which = (i % 2 == 0) ? k : 1 - k;
        auto us_round = ClosedLoop(round, [&] { echoes[which].RoundTrip(); });
        floor_us[which].insert(floor_us[which].end(), us_round.begin(), us_round.end());
      }
    }
  }
  Cell floors[2] = {{.name = "zmq-1-hop-plain"}, {.name = "zmq-1-hop-curve"}};
  for (int k = 0; k < 2; ++k) AddLatencies(floors[k], floor_us[k]);
  Cell floor_ratio{.name = "zmq-1-hop-curve/plain"};
  floor_ratio.Set("p50_ratio", floors[1].Get("p50_us") / std::max(1e-9, floors[0].Get("p50_us")));
  floor_ratio.Set("p99_ratio", floors[1].Get("p99_us") / std::max(1e-9, floors[0].Get("p99_us")));
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "bare ZeroMQ round trip (1 hop, 64 bytes): CURVE adds %.1f us at p50 (%.1f vs %.1f "
                "us, %.2fx)",
                floors[1].Get("p50_us") - floors[0].Get("p50_us"), floors[1].Get("p50_us"),
                floors[0].Get("p50_us"), floor_ratio.Get("p50_ratio"));
  notes->push_back(buf);
  return {floors[0], floors[1], floor_ratio};
}

}  // namespace

Scenario CurveScenario(const Options& o) {
  Scenario s{.name = "curve"};
  Options plain = o, curve = o;
  plain.curve = false;
  curve.curve = true;
  if (!o.shm_size_set) plain.shm_size = curve.shm_size = "128MiB";
  Progress(o, "curve: starting a plain and a CURVE replica%s\n", "");
  LookupReplica replicas[2] = {{plain, true, o.keys}, {curve, true, o.keys}};
  constexpr int kRounds = 8;
  s.cells = AlternatingPeekCells(o, replicas, {"plain", "curve"}, kRounds, "curve", &s.notes);
  // The same comparison for the bare ZeroMQ hop, also in alternating rounds.
  std::vector<Cell> floors = FloorCells(RoundOptions(o, kRounds), kRounds, &s.notes);
  s.cells.insert(s.cells.end(), floors.begin(), floors.end());
  return s;
}

}  // namespace tandem::bench
