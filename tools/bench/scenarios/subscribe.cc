// subscribe (DESIGN §10): how fresh a subscribe's stream is, and what serving it costs
// maintenance.
//
//  Freshness: an index of its own (a key_value source of --keys keys, --subscribe-updates per
//    --subscribe-tick-us tick, indexed by key; beside isolation's point-lookup index) is
//    subscribed (no as_of: latest; no snapshot) by 1 and by --subscribers observer sessions, spread
//    over --subscribe-threads client threads sharing one ZeroMQ context. A time t of the index is
//    *published* when the index's upper passes it: a watcher thread of tandem-bench maps the
//    replica's segment and polls the index's slot uppers (every worker ordinal's; the index's upper
//    is their minimum) every --watch-us µs through shm::Registry — reading only, like tandem-shm —
//    and notes, for each new upper, the poll that first saw it and the one before: the index's
//    upper passed those times between the start of the poll before and the end of the one that saw
//    it. t is *delivered* when the subscriber's thread receives the SubscribeBatch whose upper
//    passes it. A sample is delivery − the middle of that publication interval (cut at the
//    delivery when the watcher saw it late: seen_after_delivery), per subscriber and time, for the
//    times published in the measured window; uncertainty_* is the interval's half width, how far
//    off a sample can be either way.
//  Cells: {solo, two-runtime} × {idle, loaded} (isolation's heavy load) × {1, N subscribers}.
//  Cost: in the loaded phase, --subscribe-rounds rounds of windows with the N subscribers, with N
//    observer sessions that do not subscribe (observers are told every collection's frontiers)
//    and with no session, after one more with no session: the heavy load's updates/s (isolation's
//    measure: updates per tick × the ticks/s of its index's write frontier) in each; a round's cost
//    is 1 − its window's updates/s / the mean of the no-session windows before and after it; the
//    cell reports the rounds' median (and min, max). Each window also reports the CPU (cores) of
//    the supervisor, the runtimes and tandem-bench itself.
//  The watcher runs in every window, those without subscribers included, so its CPU is in both
//  sides of the ratio.
//  Peeks: in every window's measured part the controller peeks the point-lookup index by a random
//    key at its latest complete time, one at a time, every kSubscribePeekEvery (also in the
//    windows without subscribers, so both sides of every ratio carry them): how long a peek waits
//    beside the subscribes' fan-out (peek_p50_us, peek_p99_us, peek_max_us, peek_errors).
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "base/global_id.h"
#include "ipc/client.h"
#include "shm/reader.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "tools/bench/measure.h"
#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {

namespace {

constexpr double kFreshnessLoadedOverIdle = 2;  // two-runtime loaded p99 <= 2x idle
constexpr double kSoloOverTwo = 10;             // solo loaded p99 >= 10x two-runtime loaded
constexpr double kCostTarget = 0.05;            // maintenance <= 5 % slower with N subscribers
// After the measured window: how long the subscribers get to receive the window's last times.
constexpr auto kGrace = 10s;
// The peeks beside the subscribes: one every so often, each answered within the wait or the
// scenario fails.
constexpr auto kSubscribePeekEvery = 10ms;
constexpr auto kSubscribePeekWait = 30s;
// The subscribed index: a key_value source of its own (--keys keys, --subscribe-updates per
// --subscribe-tick-us tick) indexed by key, beside isolation's point-lookup index.
constexpr char kSubscribedSource[] = "u7";
constexpr char kSubscribedIndex[] = "u8";

KeyValue SubscribedLoad(const Options& o) {
  return {.keys = o.keys,
          .updates_per_tick = o.subscribe_updates,
          .tick_interval_us = o.subscribe_tick_us,
          .seed = 13};
}

// Polls the index's slot uppers in the replica's segment, read-only (no announcement entry, no
// lock: a slot's upper is one atomic word), and notes when each new upper was first seen.
class PublicationWatcher {
 public:
  PublicationWatcher(const std::string& segment, const std::string& id,
                     std::chrono::microseconds interval)
      : interval_(interval) {
    auto s = shm::Segment::Open(segment);
    if (!s.ok()) throw std::runtime_error("open segment " + segment + ": " + s.status().message());
    segment_ = std::move(s).value();
    registry_.emplace(segment_.get());
    const auto gid = GlobalId::Parse(id);
    if (!gid) throw std::runtime_error("not a global id: " + id);
    id_ = *gid;
  }
  ~PublicationWatcher() { Stop(); }

  // Finds the index's live slots (waits up to 10 s for every ordinal's) and starts polling.
  void Start() {
    FindSlots();
    seen_.clear();
    gaps_us_.clear();
    stop_ = false;
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // When t was published: after `after` (the start of the last poll that did not see it
  // complete) and at or before `by` (the end of the first that did). nullopt when it was complete
  // at the first poll (published before the watcher started) or not seen yet. Only after Stop.
  struct Publication {
    Clock::time_point after, by;
  };
  std::optional<Publication> Published(std::uint64_t t) const {
    auto it = std::upper_bound(seen_.begin(), seen_.end(), t,
                               [](std::uint64_t v, const Seen& s) { return v < s.upper; });
    if (it == seen_.end() || it == seen_.begin()) return std::nullopt;
    return Publication{it->after, it->at};
  }
  // The largest upper seen at or before `at` (0 when none).
  std::uint64_t UpperAt(Clock::time_point at) const {
    std::uint64_t u = 0;
    for (const Seen& s : seen_) {
      if (s.at > at) break;
      u = s.upper;
    }
    return u;
  }
  // The latest upper seen so far (any time, any thread).
  std::uint64_t latest() const { return latest_.load(); }
  std::vector<double>& gaps_us() { return gaps_us_; }

 private:
  struct Seen {
    std::uint64_t upper;
    Clock::time_point after, at;  // the previous poll's start; the end of the poll that saw it
  };

  void FindSlots() {
    const auto deadline = Clock::now() + 10s;
    for (;;) {
      slots_.clear();
      std::map<std::uint32_t, shm::SlotInfo> best;
      for (const shm::SlotInfo& s : shm::Inspector(segment_.get()).Slots()) {
        if (s.key.id != id_ || !(s.flags & shm::kSlotFilled) || (s.flags & shm::kSlotUnpublished)) {
          continue;
        }
        auto [it, fresh] = best.emplace(s.ordinal, s);
        if (!fresh && s.key.as_of > it->second.key.as_of) it->second = s;
      }
      for (const auto& [ordinal, s] : best) slots_.push_back({ordinal, s.index, s.key});
      if (!slots_.empty() && slots_.size() == registry_->workers()) return;
      if (Clock::now() > deadline) {
        throw std::runtime_error("the index " + id_.ToString() + " has " +
                                 std::to_string(slots_.size()) + " published slots of " +
                                 std::to_string(registry_->workers()) + " ordinals");
      }
      Sleep(20ms);
    }
  }

  void Run() {
    // Sleep as short as asked: the default timer slack (50 µs) would round every poll up.
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    auto last = Clock::now();
    while (!stop_.load(std::memory_order_relaxed)) {
      const auto start = Clock::now();
      std::uint64_t upper = std::numeric_limits<std::uint64_t>::max();
      for (const Slot& s : slots_) {
        const shm::SlotData& d = registry_->slot(s.ordinal, s.index);
        upper = std::min(upper, d.upper.load(std::memory_order_acquire));
      }
      const auto now = Clock::now();
      if (seen_.empty() || upper > seen_.back().upper) {
        seen_.push_back({upper, last, now});
        latest_.store(upper);
      }
      gaps_us_.push_back(std::chrono::duration<double, std::micro>(now - last).count());
      last = start;
      std::this_thread::sleep_for(interval_);
    }
  }

  struct Slot {
    std::uint32_t ordinal, index;
    shm::SlotKey key;
  };
  std::chrono::microseconds interval_;
  std::unique_ptr<shm::Segment> segment_;
  std::optional<shm::Registry> registry_;
  GlobalId id_ = GlobalId::User(0);
  std::vector<Slot> slots_;
  std::vector<Seen> seen_;
  std::vector<double> gaps_us_;
  std::atomic<std::uint64_t> latest_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One SubscribeBatch as received.
struct Received {
  std::uint64_t lower, upper;
  Clock::time_point at;
};

// An observer session on its own DEALER (in a context shared with the other sessions), and its
// subscribe's stream.
struct Subscriber {
  Subscriber(zmq::context_t& context, const std::string& endpoint,
             const std::optional<ipc::CurveClientKeys>& curve, std::string uuid)
      : socket(context, zmq::socket_type::dealer), uuid(std::move(uuid)) {
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(ipc::kMaxMessageBytes));
    // It reads everything it is sent (its thread may lag, never stop): a lag shows as freshness,
    // not as the supervisor ending it too slow.
    socket.set(zmq::sockopt::rcvhwm, 0);
    if (curve) {
      socket.set(zmq::sockopt::curve_serverkey, curve->server_public);
      socket.set(zmq::sockopt::curve_publickey, curve->client_public);
      socket.set(zmq::sockopt::curve_secretkey, curve->client_secret);
    }
    socket.connect(endpoint);
  }
  void Send(const pb::Command& c) {
    socket.send(zmq::buffer(ipc::Encode(c)), zmq::send_flags::none);
  }

  zmq::socket_t socket;
  std::string uuid;
  bool accepted = false;
  bool ended = false;
  int end_reason = 0;
  std::string end_detail;
  std::vector<Received> batches;
  std::atomic<std::uint64_t> upper{0};  // the last delivered upper
  std::uint64_t messages = 0, frontiers = 0;
  std::uint64_t updates = 0, first_updates = 0;  // in every batch; in the first
};

// What a window's client threads share with the main thread.
struct Shared {
  std::atomic<int> ready{0};
  std::atomic<bool> cancel{false};
  std::atomic<std::uint64_t> delivered{0};  // (subscriber, time) pairs completed so far
  std::mutex mu;
  std::string failure;
  void Fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.empty()) failure = why;
  }
};

// A client thread's sessions: Hello (observer), Subscribe (when `subscribe`), receive until
// `cancel`, then CancelSubscribe and its SubscribeEnd (10 s at most), then Goodbye.
void ClientThread(std::vector<Subscriber*> subs, const std::string& index, bool subscribe,
                  Shared& shared) {
  try {
    std::vector<zmq::pollitem_t> items;
    for (Subscriber* s : subs) {
      s->Send(ipc::MakeHello("tandem-bench-" + s->uuid, true));
      items.push_back({s->socket.handle(), 0, ZMQ_POLLIN, 0});
    }
    std::size_t accepted = 0, ended = 0;
    auto drain = [&](Subscriber& s) {
      zmq::message_t msg;
      while (s.socket.recv(msg, zmq::recv_flags::dontwait)) {
        const auto at = Clock::now();
        ++s.messages;
        // A Frontiers (Response field 1, length-delimited: the envelope's first byte 0x0a — the
        // encoding is deterministic and the envelope has only its oneof) is of no use here: not
        // decoding the many an observer is sent keeps the client's CPU off the two cores the
        // replica measures on.
        if (msg.size() > 0 && static_cast<const unsigned char*>(msg.data())[0] == 0x0a) {
          ++s.frontiers;
          continue;
        }
        auto d = ipc::DecodeResponse(msg.to_string_view());
        if (!d.ok()) throw std::runtime_error("undecodable response: " + d.error.reason);
        const pb::Response& r = d.message;
        if (r.has_status() && r.status().has_hello_accepted() && !s.accepted) {
          s.accepted = true;
          ++accepted;
          if (subscribe) {
            pb::Command c;
            c.mutable_subscribe()->set_uuid(s.uuid);
            c.mutable_subscribe()->set_id(index);
            c.mutable_subscribe()->set_snapshot(false);
            s.Send(c);
          }
        } else if (r.has_command_error()) {
          throw std::runtime_error("session " + s.uuid + ": " + r.command_error().what() + ": " +
                                   r.command_error().why());
        } else if (r.has_subscribe_batch() && r.subscribe_batch().uuid() == s.uuid) {
          const auto& b = r.subscribe_batch();
          if (s.batches.empty()) s.first_updates = static_cast<std::uint64_t>(b.updates_size());
          s.updates += static_cast<std::uint64_t>(b.updates_size());
          s.batches.push_back({b.lower(), b.upper(), at});
          if (b.upper() > b.lower()) {
            const std::uint64_t before = s.upper.exchange(b.upper());
            shared.delivered.fetch_add(b.upper() - std::max(before, b.lower()),
                                       std::memory_order_relaxed);
          }
        } else if (r.has_subscribe_end() && r.subscribe_end().uuid() == s.uuid && !s.ended) {
          s.ended = true;
          s.end_reason = r.subscribe_end().reason();
          s.end_detail = r.subscribe_end().detail();
          ++ended;
        }
      }
    };
    auto poll = [&](std::chrono::milliseconds limit) {
      try {
        if (zmq::poll(items.data(), items.size(), limit) <= 0) return;
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
        return;
      }
      for (std::size_t i = 0; i < subs.size(); ++i) {
        if (items[i].revents & ZMQ_POLLIN) drain(*subs[i]);
      }
    };
    const auto hello_deadline = Clock::now() + 30s;
    while (accepted < subs.size()) {
      if (Clock::now() > hello_deadline) throw std::runtime_error("no HelloAccepted within 30 s");
      if (shared.cancel.load()) return;
      poll(50ms);
    }
    shared.ready.fetch_add(static_cast<int>(subs.size()));
    while (!shared.cancel.load()) poll(20ms);
    if (subscribe) {
      for (Subscriber* s : subs) {
        if (s->ended) continue;
        pb::Command c;
        c.mutable_cancel_subscribe()->set_uuid(s->uuid);
        s->Send(c);
      }
      const auto end_deadline = Clock::now() + 10s;
      while (ended < subs.size() && Clock::now() < end_deadline) poll(20ms);
    }
    pb::Command bye;
    bye.mutable_goodbye();
    for (Subscriber* s : subs) s->Send(bye);
  } catch (const std::exception& e) {
    shared.Fail(e.what());
  }
}

struct WindowSpec {
  std::string name;
  int sessions = 0;        // observer sessions
  bool subscribe = false;  // each subscribes to the index
};

struct Phase {
  const Options& o;
  Replica& replica;
  Client& controller;
  PublicationWatcher& watcher;
  bool loaded;
  double updates_per_tick;
  // The processes whose CPU each window reports: "supervisor", the runtimes, "bench" (this one:
  // the subscribers' threads, the watcher and the controller).
  std::vector<std::pair<std::string, pid_t>> processes;
};

// Peeks of the point-lookup index (kLightIndex) by a random key at its latest complete time, from
// the controller's session, one at a time, every kSubscribePeekEvery; the latencies of those sent
// at or after `from`.
struct SubscribePeeks {
  SubscribePeeks(std::uint64_t keys, Clock::time_point from)
      : pick(0, static_cast<std::int64_t>(keys) - 1), from(from) {}

  // Sends one peek and waits for its answer (the controller's other responses are handled as
  // they come). The controller compacts the index only behind its write frontier, and this peek
  // reads just below the same controller's latest view of it: readable, and exact.
  void Once(Client& controller) {
    pb::Command c;
    auto* peek = c.mutable_peek();
    const std::string uuid = "subscribe-peek-" + std::to_string(++sent);
    peek->set_uuid(uuid);
    peek->set_id(kLightIndex);
    peek->set_timestamp(controller.Write(kLightIndex) - 1);
    peek->add_keys()->add_datums()->set_int64(pick(rng));
    const auto t0 = Clock::now();
    next = t0 + kSubscribePeekEvery;
    controller.Send(c);
    for (;;) {
      const auto left = t0 + kSubscribePeekWait - Clock::now();
      if (left <= Clock::duration::zero()) {
        throw std::runtime_error("no PeekResponse within 30 s beside the subscribes");
      }
      auto r =
          controller.Receive(std::chrono::duration_cast<std::chrono::milliseconds>(left) + 1ms);
      if (!r || !r->has_peek_response() || r->peek_response().uuid() != uuid) continue;
      if (t0 >= from) {
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (r->peek_response().has_error()) ++errors;
      }
      return;
    }
  }

  std::mt19937_64 rng{29};
  std::uniform_int_distribution<std::int64_t> pick;
  Clock::time_point from, next{};
  std::uint64_t sent = 0, errors = 0;
  std::vector<double> us;
};

// Pumps the controller (compacting everything behind its write frontier every 100 ms, like a
// real controller; subscribes hold the index themselves) until `done` says so, peeking with
// `peeks` meanwhile when given.
void SuperviseSubscribes(Phase& p, const std::function<bool()>& done,
                         SubscribePeeks* peeks = nullptr) {
  auto next = Clock::now();
  while (!done()) {
    if (peeks && Clock::now() >= peeks->next) {
      peeks->Once(p.controller);
    } else if (peeks) {
      p.controller.Pump(std::clamp(
          std::chrono::duration_cast<std::chrono::milliseconds>(peeks->next - Clock::now()), 1ms,
          20ms));
    } else {
      p.controller.Pump(20ms);
    }
    if (Clock::now() >= next) {
      next = Clock::now() + 100ms;
      p.controller.CompactAllBut({});
      p.replica.CheckAlive();
    }
  }
}

// One window's cell (without its latencies), its freshness samples and its peeks' latencies (µs).
struct WindowResult {
  Cell cell;
  std::vector<double> us;
  std::vector<double> peek_us;
};

// The peeks' latencies (µs, sorted here) as peek_* metrics of `cell`.
void SetPeekMetrics(Cell& cell, std::vector<double>& us, double errors) {
  std::sort(us.begin(), us.end());
  cell.Set("peeks", static_cast<double>(us.size()));
  cell.Set("peek_errors", errors);
  cell.Set("peek_p50_us", Percentile(us, 0.5));
  cell.Set("peek_p99_us", Percentile(us, 0.99));
  cell.Set("peek_max_us", us.empty() ? 0 : us.back());
}

WindowResult RunWindow(Phase& p, const WindowSpec& w) {
  const Options& o = p.o;
  Progress(o, "subscribe: measuring %s\n", w.name);
  p.watcher.Start();
  zmq::context_t context(2);
  std::vector<std::unique_ptr<Subscriber>> subs;
  for (int i = 0; i < w.sessions; ++i) {
    subs.push_back(std::make_unique<Subscriber>(context, p.replica.endpoint(), ClientKeys(o),
                                                "sub" + std::to_string(i)));
  }
  const int nthreads = std::min<int>(w.sessions, static_cast<int>(o.subscribe_threads));
  Shared shared;
  std::vector<std::thread> threads;
  struct Joiner {
    Shared& shared;
    std::vector<std::thread>& threads;
    ~Joiner() {
      shared.cancel = true;
      for (auto& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{shared, threads};
  for (int t = 0; t < nthreads; ++t) {
    std::vector<Subscriber*> mine;
    for (int i = t; i < w.sessions; i += nthreads)
      mine.push_back(subs[static_cast<std::size_t>(i)].get());
    threads.emplace_back(ClientThread, std::move(mine), std::string(kSubscribedIndex), w.subscribe,
                         std::ref(shared));
  }
  auto check = [&] {
    std::lock_guard<std::mutex> lock(shared.mu);
    if (!shared.failure.empty()) throw std::runtime_error(w.name + ": " + shared.failure);
  };
  const auto ready_deadline = Clock::now() + 60s;
  SuperviseSubscribes(p, [&] {
    check();
    if (Clock::now() > ready_deadline) throw std::runtime_error(w.name + ": sessions not ready");
    return shared.ready.load() == w.sessions;
  });
  const MeasureWindow window(o);
  std::uint64_t delivered_at_from = 0;
  bool from_passed = false;
  std::vector<double> cpu_from;
  double stalls_from = 0;
  SubscribePeeks peeks(o.keys, window.from);
  SuperviseSubscribes(
      p,
      [&] {
        check();
        const auto now = Clock::now();
        if (!from_passed && now >= window.from) {
          from_passed = true;
          delivered_at_from = shared.delivered.load();
          for (const auto& [name, pid] : p.processes) cpu_from.push_back(CpuSeconds(pid));
          stalls_from = p.replica.RuntimeStalls();
        }
        const std::size_t samples =
            w.subscribe ? static_cast<std::size_t>(shared.delivered.load() - delivered_at_from)
                        : window.min_samples;
        return from_passed && window.Done(now, samples);
      },
      &peeks);
  const auto to = Clock::now();
  std::vector<double> cpu;
  for (std::size_t i = 0; i < p.processes.size(); ++i) {
    cpu.push_back((CpuSeconds(p.processes[i].second) - cpu_from[i]) / Seconds(to - window.from));
  }
  // Until every subscriber has the times published by `to` (kGrace at most).
  const std::uint64_t upper_at_to = p.watcher.latest();
  const auto grace = to + kGrace;
  SuperviseSubscribes(p, [&] {
    check();
    if (Clock::now() > grace) return true;
    for (const auto& s : subs) {
      if (w.subscribe && !s->ended && s->upper.load() < upper_at_to) return false;
    }
    return true;
  });
  p.watcher.Stop();
  shared.cancel = true;
  for (auto& t : threads) t.join();
  check();

  WindowResult result{.cell = {.name = w.name}};
  Cell& cell = result.cell;
  result.peek_us = std::move(peeks.us);
  SetPeekMetrics(cell, result.peek_us, static_cast<double>(peeks.errors));
  // Stalls the supervisor reported in the measured window (a runtime too busy to show progress).
  cell.Set("runtime_stalls", p.replica.RuntimeStalls() - stalls_from);
  cell.Set("subscribers", w.subscribe ? w.sessions : 0);
  cell.Set("observer_sessions", w.sessions);
  if (w.subscribe) {
    std::vector<double>& us = result.us;
    std::vector<double> half_width;  // µs: how far off each sample may be either way
    std::uint64_t early = 0, undelivered = 0, batches = 0, ended_early = 0, no_end = 0;
    for (const auto& s : subs) {
      // Any end but the cancel's (too slow, an error...); or none at all.
      if (s->ended && s->end_reason != pb::SubscribeEnd::CANCELED) ++ended_early;
      if (!s->ended) ++no_end;
      std::uint64_t done = 0;  // times below it are delivered
      bool first = true;
      for (const Received& b : s->batches) {
        if (b.at >= window.from && b.at <= to) ++batches;
        if (first) {
          done = b.lower;
          first = false;
        }
        if (b.upper <= b.lower || b.upper <= done) continue;
        // Only times the watcher saw published, inside the window.
        const std::uint64_t hi = std::min(b.upper, upper_at_to);
        for (std::uint64_t t = done; t < hi; ++t) {
          const auto pub = p.watcher.Published(t);
          if (!pub || pub->by < window.from || pub->by > to) continue;
          // Published in (after, by], and before it was delivered: the middle of what is left.
          auto by = pub->by;
          if (b.at < by) {
            ++early;
            by = std::max(b.at, pub->after);
          }
          const auto mid = pub->after + (by - pub->after) / 2;
          us.push_back(std::chrono::duration<double, std::micro>(b.at - mid).count());
          half_width.push_back(std::chrono::duration<double, std::micro>(by - mid).count());
        }
        done = b.upper;
      }
      // Published in the window, never delivered.
      for (std::uint64_t t = done; t < upper_at_to; ++t) {
        const auto pub = p.watcher.Published(t);
        if (pub && pub->by >= window.from && pub->by <= to) ++undelivered;
      }
    }
    cell.Set("seen_after_delivery", static_cast<double>(early));
    cell.Set("undelivered", static_cast<double>(undelivered));
    cell.Set("ended_early", static_cast<double>(ended_early));
    cell.Set("no_end", static_cast<double>(no_end));
    std::uint64_t updates = 0, all_batches = 0, first_max = 0;
    for (const auto& sub : subs) {
      updates += sub->updates;
      all_batches += sub->batches.size();
      first_max = std::max(first_max, sub->first_updates);
    }
    cell.Set("updates_per_batch", static_cast<double>(updates) /
                                      static_cast<double>(std::max<std::uint64_t>(1, all_batches)));
    cell.Set("first_batch_updates_max", static_cast<double>(first_max));
    std::sort(half_width.begin(), half_width.end());
    cell.Set("uncertainty_p50_us", Percentile(half_width, 0.5));
    cell.Set("uncertainty_p99_us", Percentile(half_width, 0.99));
    cell.Set("batches_per_s_per_subscriber",
             static_cast<double>(batches) / Seconds(to - window.from) / w.sessions);
    for (const auto& s : subs) {
      if (s->ended && s->end_reason != pb::SubscribeEnd::CANCELED) {
        Progress(o, "subscribe: %s\n",
                 w.name + ": " + s->uuid + " ended early: reason " + std::to_string(s->end_reason) +
                     " " + s->end_detail);
        break;
      }
    }
  }
  if (w.sessions > 0) {
    std::uint64_t messages = 0, frontiers = 0;
    for (const auto& sub : subs) {
      messages += sub->messages;
      frontiers += sub->frontiers;
    }
    // Over the whole window (setup and grace included): rates per session.
    const double span = Seconds(Clock::now() - window.from) * w.sessions;
    cell.Set("messages_per_s_per_session", static_cast<double>(messages) / span);
    cell.Set("frontiers_per_s_per_session", static_cast<double>(frontiers) / span);
  }
  for (std::size_t i = 0; i < p.processes.size(); ++i) {
    cell.Set("cpu_" + p.processes[i].first, cpu[i]);  // cores
  }
  const std::uint64_t first_upper = p.watcher.UpperAt(window.from);
  cell.Set("index_ticks_per_s",
           static_cast<double>(p.watcher.UpperAt(to) - first_upper) / Seconds(to - window.from));
  std::vector<double>& gaps = p.watcher.gaps_us();
  std::sort(gaps.begin(), gaps.end());
  cell.Set("watch_poll_p50_us", Percentile(gaps, 0.5));
  cell.Set("watch_poll_p99_us", Percentile(gaps, 0.99));
  if (p.loaded) {
    cell.Set("updates_per_s", p.controller.TickRate(window.from, to) * p.updates_per_tick);
  }
  {
    std::vector<double> sorted = result.us;
    std::sort(sorted.begin(), sorted.end());
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "%s: %zu samples, freshness p50 %.0f us p99 %.0f us; peeks p99 %.0f us max %.0f "
                  "us; updates/s %.0f; cpu supervisor %.2f, bench %.2f",
                  w.name.c_str(), sorted.size(), Percentile(sorted, 0.5), Percentile(sorted, 0.99),
                  cell.Get("peek_p99_us"), cell.Get("peek_max_us"), cell.Get("updates_per_s"),
                  cell.Get("cpu_supervisor"), cell.Get("cpu_bench"));
    Progress(o, "subscribe: %s\n", buf);
  }
  return result;
}

// The cell `name` of `windows` (rounds of one configuration): freshness over all their samples,
// counts summed, rates the median of the windows'.
Cell Merge(const std::string& name, std::vector<WindowResult>& windows) {
  Cell out{.name = name};
  std::vector<double> us;
  for (WindowResult& w : windows) us.insert(us.end(), w.us.begin(), w.us.end());
  const Cell& first = windows.front().cell;
  for (const auto& [k, unused] : first.metrics) {
    std::vector<double> v;
    for (const WindowResult& w : windows) {
      for (const auto& [name, value] : w.cell.metrics) {
        if (name == k) v.push_back(value);
      }
    }
    const bool sum = k == "seen_after_delivery" || k == "undelivered" || k == "ended_early" ||
                     k == "no_end" || k == "peek_errors" || k == "runtime_stalls";
    double total = 0;
    for (double x : v) total += x;
    out.Set(k, sum ? total : Median(v));
    // Freshness right after the session counts.
    if (k == "observer_sessions" && first.Get("subscribers") > 0) AddLatencies(out, us);
  }
  // Peeks over all their samples, as freshness.
  std::vector<double> peek_us;
  for (WindowResult& w : windows) peek_us.insert(peek_us.end(), w.peek_us.begin(), w.peek_us.end());
  SetPeekMetrics(out, peek_us, out.Get("peek_errors"));
  out.Set("windows", static_cast<double>(windows.size()));
  return out;
}

// Both phases of one replica mode. Idle: 1 and N subscribers. Loaded: no session, 1 subscriber,
// then --subscribe-rounds rounds of (N subscribers, N observers, no session): each round's cost is
// its windows' updates/s over the mean of the no-session windows before and after it.
std::vector<Cell> ModeCells(const Options& o, bool two_runtime) {
  const std::string mode = two_runtime ? "two-runtime" : "solo";
  Progress(o, "subscribe: starting a %s replica\n", mode);
  LookupReplica lr(o, two_runtime, o.keys);
  Client& controller = *lr.client;
  Progress(o, "subscribe: %s\n", "building the subscribed index");
  controller.Send(IndexedSource(kSubscribedSource, kSubscribedIndex, SubscribedLoad(o)));
  controller.WaitWrite(kSubscribedIndex, 2, BuildLimit(o.keys), lr.replica);
  PublicationWatcher watcher(lr.replica.segment(), kSubscribedIndex,
                             std::chrono::microseconds(o.watch_us));
  const HeavyLoadSpec load = HeadlineLoad(o);
  const int n = static_cast<int>(o.subscribers);
  const std::string many = std::to_string(n);
  std::vector<Cell> cells;
  for (bool loaded : {false, true}) {
    const std::string prefix = mode + "/" + (loaded ? "loaded" : "idle") + "/";
    if (loaded) {
      Progress(o, "subscribe: building the heavy load (%s)\n", load.what);
      controller.Track(load.tracked);
      for (const pb::Command& c : load.dataflows) controller.Send(c);
      for (const std::string& id : load.built) {
        controller.WaitWrite(id, 2, BuildLimit(load.build_keys), lr.replica);
      }
    }
    Phase phase{o, lr.replica, controller, watcher, loaded, load.updates_per_tick, {}};
    phase.processes.push_back({"supervisor", lr.replica.pid()});
    for (const char* role : two_runtime ? std::vector<const char*>{"maintenance", "interactive"}
                                        : std::vector<const char*>{"solo"}) {
      phase.processes.push_back({role, lr.replica.RuntimePid(role)});
    }
    phase.processes.push_back({"bench", getpid()});
    auto run = [&](const WindowSpec& w) {
      std::vector<WindowResult> one;
      one.push_back(RunWindow(phase, w));
      return one;
    };
    if (!loaded) {
      for (int k : {1, n}) {
        auto w = run({prefix + std::to_string(k), k, true});
        cells.push_back(Merge(w.front().cell.name, w));
      }
      continue;
    }
    std::vector<WindowResult> none, subs, observers;
    none.push_back(RunWindow(phase, {prefix + "none", 0, false}));
    {
      auto w = run({prefix + "1", 1, true});
      cells.push_back(Merge(prefix + "1", w));
    }
    std::vector<double> sub_cost, obs_cost;
    for (std::uint64_t r = 0; r < o.subscribe_rounds; ++r) {
      const std::string round = " (round " + std::to_string(r + 1) + ")";
      subs.push_back(RunWindow(phase, {prefix + many + round, n, true}));
      observers.push_back(RunWindow(phase, {prefix + many + "-observers" + round, n, false}));
      none.push_back(RunWindow(phase, {prefix + "none" + round, 0, false}));
      const double base =
          (none[r].cell.Get("updates_per_s") + none[r + 1].cell.Get("updates_per_s")) / 2;
      auto cost = [&](const WindowResult& w) {
        return 1 - w.cell.Get("updates_per_s") / std::max(1e-9, base);
      };
      sub_cost.push_back(cost(subs.back()));
      obs_cost.push_back(cost(observers.back()));
    }
    cells.push_back(Merge(prefix + many, subs));
    cells.push_back(Merge(prefix + many + "-observers", observers));
    cells.push_back(Merge(prefix + "none", none));
    Cell c{.name = prefix + "cost"};
    std::sort(sub_cost.begin(), sub_cost.end());
    std::sort(obs_cost.begin(), obs_cost.end());
    c.Set("subscribers", n);
    c.Set("rounds", static_cast<double>(o.subscribe_rounds));
    c.Set("cost_subscribers_median", Percentile(sub_cost, 0.5));
    c.Set("cost_subscribers_min", sub_cost.front());
    c.Set("cost_subscribers_max", sub_cost.back());
    c.Set("cost_observers_median", Percentile(obs_cost, 0.5));
    c.Set("cost_observers_min", obs_cost.front());
    c.Set("cost_observers_max", obs_cost.back());
    cells.push_back(std::move(c));
  }
  return cells;
}

}  // namespace

Scenario SubscribeScenario(const Options& o) {
  Scenario s{.name = "subscribe"};
  for (bool two : {false, true}) {
    if (o.subscribe_mode != "all" && o.subscribe_mode != (two ? "two-runtime" : "solo")) continue;
    for (Cell& c : ModeCells(o, two)) s.cells.push_back(std::move(c));
  }
  const std::string many = std::to_string(o.subscribers);
  Cell v{.name = "verdict"};
  char buf[512];
  for (const std::string& k : {std::string("1"), many}) {
    const double two_idle = Metric(s, "two-runtime/idle/" + k, "p99_us");
    const double two_loaded = Metric(s, "two-runtime/loaded/" + k, "p99_us");
    const double solo_loaded = Metric(s, "solo/loaded/" + k, "p99_us");
    const double ratio = two_loaded / std::max(1e-9, two_idle);
    const double solo_ratio = solo_loaded / std::max(1e-9, two_loaded);
    v.Set("two_loaded_over_idle_p99/" + k, ratio);
    v.Set("solo_loaded_over_two_loaded_p99/" + k, solo_ratio);
    std::snprintf(buf, sizeof buf,
                  "%s subscriber(s): two-runtime loaded p99 / idle p99 = %.0f / %.0f us = %.2f "
                  "(target <= 2: %s); solo loaded p99 / two-runtime loaded p99 = %.0f / %.0f us = "
                  "%.2f (target >= 10: %s)",
                  k.c_str(), two_loaded, two_idle, ratio,
                  ratio <= kFreshnessLoadedOverIdle ? "met" : "MISSED", solo_loaded, two_loaded,
                  solo_ratio, solo_ratio >= kSoloOverTwo ? "met" : "MISSED");
    s.notes.push_back(buf);
    // The peeks beside them (every peek was answered, or the scenario failed).
    for (const char* mode : {"two-runtime", "solo"}) {
      for (const char* phase : {"idle", "loaded"}) {
        const std::string cell = std::string(mode) + "/" + phase + "/" + k;
        if (Metric(s, cell, "peeks") <= 0) continue;
        v.Set("peek_p99_us/" + cell, Metric(s, cell, "peek_p99_us"));
        std::snprintf(buf, sizeof buf,
                      "%s: %.0f peeks beside the subscribes, p50 %.0f us, p99 %.0f us, max %.0f "
                      "us, %.0f errors; %.0f runtime stalls reported",
                      cell.c_str(), Metric(s, cell, "peeks"), Metric(s, cell, "peek_p50_us"),
                      Metric(s, cell, "peek_p99_us"), Metric(s, cell, "peek_max_us"),
                      Metric(s, cell, "peek_errors"), Metric(s, cell, "runtime_stalls"));
        s.notes.push_back(buf);
      }
    }
  }
  for (const char* mode : {"solo", "two-runtime"}) {
    const std::string p = std::string(mode) + "/loaded/";
    const double cost = Metric(s, p + "cost", "cost_subscribers_median");
    const double observers_cost = Metric(s, p + "cost", "cost_observers_median");
    v.Set(std::string(mode) + "/cost_" + many + "_subscribers", cost);
    v.Set(std::string(mode) + "/cost_" + many + "_observers", observers_cost);
    std::snprintf(
        buf, sizeof buf,
        "%s maintenance with %s subscribers: %.1f %% lower than with no session "
        "(median of %llu rounds, %.1f .. %.1f %%; target <= 5 %%: %s); with %s observer "
        "sessions that do not subscribe: %.1f %% lower; heavy load %.0f updates/s "
        "with no session (median)",
        mode, many.c_str(), 100 * cost, static_cast<unsigned long long>(o.subscribe_rounds),
        100 * Metric(s, p + "cost", "cost_subscribers_min"),
        100 * Metric(s, p + "cost", "cost_subscribers_max"), cost <= kCostTarget ? "met" : "MISSED",
        many.c_str(), 100 * observers_cost, Metric(s, p + "none", "updates_per_s"));
    s.notes.push_back(buf);
  }
  s.cells.push_back(std::move(v));
  return s;
}

}  // namespace tandem::bench
