// tandem-bench's controller: ipc::ControllerClient, tracking the write frontiers it is told about
// and compacting what it created behind them.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ipc/client.h"
#include "tools/bench/bench.h"

namespace tandem::bench {

struct FrontierSample {
  Clock::time_point at;
  std::uint64_t write;
};

class Client {
 public:
  // `observer`: a read-only session beside another controller (Hello{observer}, as `tandem-ctl
  // peek` opens): it may send only Peek and CancelPeek — no CreateDataflow, no Compact — and it
  // receives every collection's frontiers.
  explicit Client(const std::string& endpoint,
                  const std::optional<ipc::CurveClientKeys>& curve = std::nullopt,
                  bool observer = false)
      : client_(endpoint, {.timeout = 10s, .curve = curve}) {
    if (Status s = client_.Hello("tandem-bench", observer); !s.ok()) {
      CheckStop();
      throw std::runtime_error(
          s.code() == StatusCode::kUnavailable ? "no HelloAccepted from " + endpoint : s.message());
    }
  }

  // No receive high-water mark: a client left unread for a while (the curve scenario measures
  // two replicas in turns) keeps taking its replica's frontiers off the connection, so ZeroMQ
  // keeps answering the supervisor's heartbeats instead of stalling and being disconnected.
  void UnboundedReceiveQueue() { client_.socket().set(zmq::sockopt::rcvhwm, 0); }

  void Send(const pb::Command& c) {
    // A one-shot's results are dropped by whoever made them, never compacted behind a frontier.
    if (c.has_create_dataflow() && c.create_dataflow().desc().class_() != pb::ONE_SHOT_READ) {
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
    // Not a one-shot result's (transient, t<n>: a new id each time, and never compacted).
    if (r->has_frontiers() && !r->frontiers().write().elements().empty() &&
        r->frontiers().id().rfind('t', 0) != 0) {
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
  // The frontier samples of the tracked index at or after `from`.
  std::size_t TrackedSince(Clock::time_point from) const {
    return static_cast<std::size_t>(
        std::count_if(track_.begin(), track_.end(), [&](const auto& s) { return s.at >= from; }));
  }
  // Ticks per second of the tracked index between `from` and `to` (frontier samples inside; 0
  // with fewer than two).
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

}  // namespace tandem::bench
