// write (DESIGN §9): durable writes into tables through the controller endpoint, beside the peer a
// user would pick for durable keyed writes (Redis with an append-only file), in the same run.
//
//  throughput: a two-runtime replica with --data-dir in a scratch directory (on /tmp's file system,
//    so fdatasync is a real flush). Per configuration a fresh table (k int64, v int64) indexed by
//    k, and 1 or --write-clients writer sessions (Hello{observer, writer}), each its own thread and
//    connection, each keeping --write-window WriteTables in flight (a new one as each is answered).
//    A write is batch rows: a plain table gets (k, 0) with diff +1, k uniform in --write-keys (so
//    compaction consolidates it to at most that many rows); the upsert table (k, n), replacing k's
//    row. rows_per_s = rows of the WriteResponses received in the measured window / its length:
//    every one of them was fdatasynced before it was answered. p50_us... are each write's
//    send -> answer latency.
//  visible: single-row writes to a fresh plain table, closed loop: write (k, n) with a new k, and
//    once answered with time T a peek of k at T; the sample is write sent -> the peek's answer,
//    and must contain the row (misses count those that do not). Meanwhile another (observer)
//    session peeks random keys at the latest complete time, closed loop.
//  redis-everysec, redis-always: a redis-server of the run's own (appendonly yes, appendfsync
//    everysec / always, --dir in a scratch directory on the same file system), SET k<n> 0 (batch
//    1) or MSET of 100 keys (batch 100), from as many clients with as many commands in flight.
//  zmq-floor-2-hops: the ZeroMQ round trip through a forwarder (redis.cc), the floor under a
//    single write's answer.
// Rounds (--write-rounds): a fresh replica and fresh redis-servers each, the order Tandem, Redis
// everysec, Redis always reversed every other round; each cell reports the medians of the rounds'
// metrics and the min and max rows/s.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <unordered_map>

#include "tools/bench/measure.h"
#include "tools/bench/redis.h"
#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {

namespace {

constexpr double kBatchedTarget = 200000;  // rows/s, acknowledged and durable
constexpr double kVisibleTarget = 2000;    // µs, single-row write-to-visible p50
constexpr std::int64_t kProbeKeyBase = std::int64_t{1} << 40;  // above every --write-keys key
// How far behind its write frontier the controller compacts an index, in the table's
// milliseconds: the visible probe peeks at the time it was just answered.
constexpr std::uint64_t kCompactionLag = 2000;

// A session beside the controller: Hello{observer: true, writer}. Like any observer it is told
// every collection's frontiers; it notes the write frontiers.
class Session {
 public:
  Session(const std::string& endpoint, const std::optional<ipc::CurveClientKeys>& curve,
          bool writer)
      : client_(endpoint, {.timeout = 10s, .linger = 500ms, .curve = curve}) {
    client_.socket().set(zmq::sockopt::rcvhwm, 0);
    pb::Command c;
    auto* hello = c.mutable_hello();
    hello->set_nonce(writer ? "tandem-bench-writer" : "tandem-bench-peeker");
    hello->set_protocol_version(ipc::kProtocolVersion);
    hello->set_observer(true);
    hello->set_writer(writer);
    client_.Send(c);
    auto r = client_.ReceiveUntil(
        [](const pb::Response& r) {
          return (r.has_status() && r.status().has_hello_accepted()) || r.has_command_error();
        },
        10s);
    CheckStop();
    if (!r) throw std::runtime_error("no HelloAccepted for a writer session from " + endpoint);
    if (r->has_command_error()) {
      throw std::runtime_error(std::string(writer ? "writer" : "observer") +
                               " session refused: " + r->command_error().why());
    }
  }
  ~Session() {
    pb::Command bye;
    bye.mutable_goodbye();
    try {
      client_.Send(bye);
    } catch (const std::exception&) {
    }
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Send(const pb::Command& c) {
    client_.Send(c);
    CheckStop();
  }
  // One response (write frontiers noted, CommandError thrown), or nullopt after `limit`.
  std::optional<pb::Response> Receive(std::chrono::milliseconds limit) {
    CheckStop();
    auto r = client_.Receive(limit);
    CheckStop();
    if (!r) return std::nullopt;
    if (r->has_command_error()) {
      throw std::runtime_error("command refused: " + r->command_error().what() + ": " +
                               r->command_error().why());
    }
    if (r->has_frontiers() && !r->frontiers().write().elements().empty()) {
      auto& cur = write_[r->frontiers().id()];
      cur = std::max<std::uint64_t>(cur, r->frontiers().write().elements(0));
    }
    return r;
  }
  std::uint64_t Write(const std::string& id) const {
    auto it = write_.find(id);
    return it == write_.end() ? 0 : it->second;
  }

 private:
  ipc::ControllerClient client_;
  std::map<std::string, std::uint64_t> write_;
};

struct Target {
  std::string table, index;
  bool upsert = false;
};

// A table (k int64, v int64), upsert key k when `upsert`, indexed by k.
pb::Command TableDataflow(const Target& t) {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name("bench-write-" + t.table);
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  auto* s = d->add_source_imports();
  s->set_id(t.table);
  s->mutable_source()->mutable_table();
  for (const char* name : {"k", "v"}) {
    auto* col = s->mutable_schema()->add_columns();
    col->set_name(name);
    col->set_type(pb::INT64);
  }
  if (t.upsert) s->add_upsert_key(0);
  auto* x = d->add_index_exports();
  x->set_id(t.index);
  x->set_on(t.table);
  x->add_key(0);
  return c;
}

void SetRow(pb::Row* row, std::int64_t k, std::int64_t v) {
  row->add_datums()->set_int64(k);
  row->add_datums()->set_int64(v);
}

// What one client thread measured.
struct ClientRun {
  std::uint64_t rows = 0, writes = 0;  // answered inside the measured window
  std::uint64_t errors = 0;            // WriteResponse.error (any time)
  std::uint64_t unanswered = 0;        // still in flight 30 s after the window
  std::vector<double> ack_us;          // sent and answered inside the window
  std::string failure;                 // an exception's message: the cell fails
};

struct WriteWindow {
  Clock::time_point from, until;
};

// The client threads of a cell, stopped (abort) and joined on every path.
struct WriteThreads {
  std::atomic<bool> abort{false};
  std::atomic<int> running{0};
  std::vector<std::thread> threads;
  void Start(std::function<void()> body) {
    ++running;
    threads.emplace_back([this, body = std::move(body)] {
      body();
      --running;
    });
  }
  void Join() {
    for (auto& t : threads) t.join();
    threads.clear();
  }
  ~WriteThreads() {
    abort = true;
    Join();
  }
};

// Keeps `window` writes of `batch` rows in flight on `s` until w.until, then waits (30 s at most)
// for the rest of the answers.
void WriteLoop(Session& s, const Target& t, int batch, std::uint64_t window, std::uint64_t keys,
               std::uint64_t seed, const std::string& prefix, const WriteWindow& w,
               const std::atomic<bool>& abort, ClientRun& out) {
  try {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(keys) - 1);
    std::unordered_map<std::string, Clock::time_point> in_flight;
    pb::Command c;
    auto* write = c.mutable_write_table();
    write->set_id(t.table);
    std::uint64_t n = 0;
    for (;;) {
      const auto now = Clock::now();
      const bool sending = now < w.until && !abort.load();
      if (!sending && in_flight.empty()) break;
      if (!sending && (now > w.until + 30s || abort.load())) {
        out.unanswered = in_flight.size();
        break;
      }
      while (sending && in_flight.size() < window) {
        write->clear_updates();
        for (int i = 0; i < batch; ++i) {
          auto* u = write->add_updates();
          if (t.upsert) {
            SetRow(u->mutable_upsert(), pick(rng), static_cast<std::int64_t>(n));
          } else {
            SetRow(u->mutable_update()->mutable_row(), pick(rng), 0);
            u->mutable_update()->set_diff(1);
          }
        }
        std::string uuid = prefix + std::to_string(n++);
        write->set_uuid(uuid);
        const auto sent = Clock::now();
        s.Send(c);
        in_flight.emplace(std::move(uuid), sent);
      }
      auto r = s.Receive(100ms);
      if (!r || !r->has_write_response()) continue;
      const auto at = Clock::now();
      auto it = in_flight.find(r->write_response().uuid());
      if (it == in_flight.end()) continue;
      if (r->write_response().has_error()) {
        if (out.errors++ == 0) out.failure = "write refused: " + r->write_response().error();
      } else if (at >= w.from && at < w.until) {
        out.rows += static_cast<std::uint64_t>(batch);
        ++out.writes;
        if (it->second >= w.from) {
          out.ack_us.push_back(std::chrono::duration<double, std::micro>(at - it->second).count());
        }
      }
      in_flight.erase(it);
    }
  } catch (const std::exception& e) {
    out.failure = e.what();
  }
}

// The same against Redis: SET k<n> 0 (batch 1) or MSET of `batch` keys, `window` in flight.
void RedisLoop(int port, int batch, std::uint64_t window, std::uint64_t keys, std::uint64_t seed,
               const WriteWindow& w, const std::atomic<bool>& abort, ClientRun& out) {
  try {
    Redis redis(port);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::uint64_t> pick(0, keys - 1);
    std::deque<Clock::time_point> in_flight;  // Redis answers a connection's commands in order
    std::vector<std::string> args;
    std::string cmd;
    for (;;) {
      const auto now = Clock::now();
      const bool sending = now < w.until && !abort.load();
      if (!sending && in_flight.empty()) break;
      while (sending && in_flight.size() < window) {
        args.assign(1, batch == 1 ? "SET" : "MSET");
        for (int i = 0; i < batch; ++i) {
          args.push_back("k" + std::to_string(pick(rng)));
          args.push_back("0");
        }
        cmd.clear();
        Redis::Append(cmd, args);
        in_flight.push_back(Clock::now());
        redis.Write(cmd);
      }
      redis.Reply();  // a blocking read: the server answers each command
      const auto at = Clock::now();
      if (at >= w.from && at < w.until) {
        out.rows += static_cast<std::uint64_t>(batch);
        ++out.writes;
        if (in_flight.front() >= w.from) {
          out.ack_us.push_back(
              std::chrono::duration<double, std::micro>(at - in_flight.front()).count());
        }
      }
      in_flight.pop_front();
    }
  } catch (const std::exception& e) {
    out.failure = e.what();
  }
}

WriteWindow MeasuredWindow(const Options& o) {
  auto seconds = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  WriteWindow w;
  w.from = Clock::now() + seconds(o.warmup);
  w.until = w.from + seconds(o.duration);
  return w;
}

// The cell of `runs` (one per client) over `w`.
Cell WriteThroughputCell(const std::string& name, std::vector<ClientRun>& runs,
                         const WriteWindow& w, int clients, int batch, const Options& o) {
  std::vector<double> ack;
  std::uint64_t rows = 0, writes = 0, errors = 0, unanswered = 0;
  for (ClientRun& r : runs) {
    if (!r.failure.empty()) {
      CheckStop();
      throw std::runtime_error(name + ": " + r.failure);
    }
    rows += r.rows;
    writes += r.writes;
    errors += r.errors;
    unanswered += r.unanswered;
    ack.insert(ack.end(), r.ack_us.begin(), r.ack_us.end());
  }
  const double s = Seconds(w.until - w.from);
  Cell cell{.name = name};
  cell.Set("clients", clients);
  cell.Set("batch_rows", batch);
  cell.Set("window", static_cast<double>(o.write_window));
  cell.Set("rows_per_s", static_cast<double>(rows) / s);
  cell.Set("writes_per_s", static_cast<double>(writes) / s);
  AddLatencies(cell, ack);  // each write's send -> answer
  cell.Set("errors", static_cast<double>(errors));
  cell.Set("unanswered", static_cast<double>(unanswered));
  return cell;
}

struct Config {
  std::string name;
  bool upsert;
  int clients, batch;
};

std::vector<Config> TandemConfigs(const Options& o) {
  const int many = static_cast<int>(o.write_clients);
  const std::string m = "c" + std::to_string(many);
  return {{"plain/c1/b1", false, 1, 1},
          {"plain/c1/b100", false, 1, 100},
          {"plain/" + m + "/b1", false, many, 1},
          {"plain/" + m + "/b100", false, many, 100},
          {"upsert/" + m + "/b100", true, many, 100}};
}

using Rounds = std::map<std::string, std::vector<Cell>>;

// While `threads` run: the controller takes its responses and compacts every index behind its
// write frontier; the replica must stay up.
void SuperviseWrites(Client& controller, Replica& replica, const std::vector<std::string>& indexes,
                     WriteThreads& threads) {
  while (threads.running.load() > 0) {
    controller.Pump(50ms);
    for (const std::string& id : indexes) {
      const std::uint64_t w = controller.Write(id);
      if (w > kCompactionLag) controller.Compact(id, w - kCompactionLag);
    }
    replica.CheckAlive();
  }
}

// The visible cell: single-row writes, each followed by a peek at its time, while a peeker runs.
Cell VisibleCell(const Options& o, Replica& replica, Client& controller, const Target& t,
                 std::vector<std::string>& indexes) {
  Session prober(replica.endpoint(), ClientKeys(o), true);
  Session peeker(replica.endpoint(), ClientKeys(o), false);
  std::vector<double> visible, ack, peek_after_ack, background;
  std::size_t misses = 0, peek_errors = 0;
  std::string failure;
  WriteThreads threads;
  threads.Start([&] {
    try {
      std::mt19937_64 rng(5);
      std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(o.write_keys));
      pb::Command c;
      auto* p = c.mutable_peek();
      p->set_id(t.index);
      auto* key = p->add_keys()->add_datums();
      const auto from = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.warmup));
      for (std::uint64_t n = 0; !threads.abort.load(); ++n) {
        const std::uint64_t w = peeker.Write(t.index);
        if (w < 2) {
          peeker.Receive(10ms);
          continue;
        }
        const std::string uuid = "bg" + std::to_string(n);
        p->set_uuid(uuid);
        p->set_timestamp(w - 1);
        key->set_int64(pick(rng));
        const auto t0 = Clock::now();
        peeker.Send(c);
        std::optional<pb::Response> r;
        while (!(r && r->has_peek_response() && r->peek_response().uuid() == uuid)) {
          if (threads.abort.load()) return;
          if (Clock::now() > t0 + 10s) throw std::runtime_error("no PeekResponse within 10 s");
          r = peeker.Receive(100ms);
        }
        if (r->peek_response().has_error()) ++peek_errors;
        if (t0 >= from) {
          background.push_back(
              std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
      }
    } catch (const std::exception& e) {
      if (failure.empty()) failure = std::string("peeker: ") + e.what();
    }
  });
  std::string probe_failure;
  threads.Start([&] {
    try {
      const MeasureWindow window(o);
      pb::Command wc;
      auto* write = wc.mutable_write_table();
      write->set_id(t.table);
      auto* u = write->add_updates()->mutable_update();
      u->set_diff(1);
      pb::Command pc;
      auto* p = pc.mutable_peek();
      p->set_id(t.index);
      auto* key = p->add_keys()->add_datums();
      for (std::int64_t n = 0;; ++n) {
        const auto now = Clock::now();
        if (window.Done(now, visible.size()) || threads.abort.load()) break;
        const std::int64_t k = kProbeKeyBase + n;
        u->clear_row();
        SetRow(u->mutable_row(), k, n);
        const std::string uuid = "probe" + std::to_string(n);
        write->set_uuid(uuid);
        const auto t0 = Clock::now();
        prober.Send(wc);
        std::optional<pb::Response> r;
        while (!(r && r->has_write_response() && r->write_response().uuid() == uuid)) {
          if (threads.abort.load()) return;
          if (Clock::now() > t0 + 10s) throw std::runtime_error("no WriteResponse within 10 s");
          r = prober.Receive(100ms);
        }
        if (r->write_response().has_error()) {
          throw std::runtime_error("write refused: " + r->write_response().error());
        }
        const auto t1 = Clock::now();
        p->set_uuid(uuid);
        p->set_timestamp(r->write_response().time());
        key->set_int64(k);
        prober.Send(pc);
        r.reset();
        while (!(r && r->has_peek_response() && r->peek_response().uuid() == uuid)) {
          if (threads.abort.load()) return;
          if (Clock::now() > t1 + 10s) throw std::runtime_error("no PeekResponse within 10 s");
          r = prober.Receive(100ms);
        }
        const auto t2 = Clock::now();
        const auto& a = r->peek_response();
        if (a.has_error()) throw std::runtime_error("peek at the write's time: " + a.error());
        bool found = false;
        for (const auto& row : a.rows().rows()) {
          found = found || (row.count() >= 1 && row.row().datums_size() == 2 &&
                            row.row().datums(0).int64() == k && row.row().datums(1).int64() == n);
        }
        if (t0 >= window.from) {
          auto us = [](Clock::duration d) {
            return std::chrono::duration<double, std::micro>(d).count();
          };
          visible.push_back(us(t2 - t0));
          ack.push_back(us(t1 - t0));
          peek_after_ack.push_back(us(t2 - t1));
          if (!found) ++misses;
        }
      }
    } catch (const std::exception& e) {
      probe_failure = e.what();
    }
    threads.abort = true;  // the peeker too
  });
  SuperviseWrites(controller, replica, indexes, threads);
  threads.Join();
  CheckStop();
  if (!probe_failure.empty()) throw std::runtime_error("visible: " + probe_failure);
  if (!failure.empty()) throw std::runtime_error("visible: " + failure);
  Cell cell{.name = "tandem/visible"};
  AddLatencies(cell, visible);  // write sent -> the peek at its time answered
  cell.Set("misses", static_cast<double>(misses));
  std::sort(ack.begin(), ack.end());
  std::sort(peek_after_ack.begin(), peek_after_ack.end());
  std::sort(background.begin(), background.end());
  cell.Set("ack_p50_us", Percentile(ack, 0.5));
  cell.Set("ack_p99_us", Percentile(ack, 0.99));
  cell.Set("peek_after_ack_p50_us", Percentile(peek_after_ack, 0.5));
  cell.Set("peek_after_ack_p99_us", Percentile(peek_after_ack, 0.99));
  cell.Set("background_peeks", static_cast<double>(background.size()));
  cell.Set("background_peek_p50_us", Percentile(background, 0.5));
  cell.Set("background_peek_p99_us", Percentile(background, 0.99));
  cell.Set("background_peek_errors", static_cast<double>(peek_errors));
  return cell;
}

// One round of the Tandem cells on a fresh two-runtime replica with a fresh --data-dir.
void TandemRound(const Options& o, std::uint64_t round, Rounds& rounds) {
  const ScratchDir data("tandem-bench-data");
  tools::ReplicaOptions ro = ReplicaFor(o, true);
  ro.extra_args.push_back("--data-dir");
  ro.extra_args.push_back(data.path + "/data");
  Progress(o, "write: %s\n", "round " + std::to_string(round + 1) + ": starting a replica");
  Replica replica(ro);
  replica.WaitReady();
  Progress(o, "write: %s\n",
           "maintenance runtime pid " + std::to_string(replica.RuntimePid("maintenance")) +
               ", data dir " + data.path + "/data");
  Client controller(replica.endpoint(), ClientKeys(o));
  std::vector<std::string> indexes;
  int next_id = 70;
  auto fresh = [&](bool upsert) {
    Target t{.table = "u" + std::to_string(next_id + 1),
             .index = "u" + std::to_string(next_id + 2),
             .upsert = upsert};
    next_id += 2;
    controller.Send(TableDataflow(t));
    controller.WaitWrite(t.index, 2, 60s, replica);
    indexes.push_back(t.index);
    return t;
  };
  for (const Config& config : TandemConfigs(o)) {
    const Target t = fresh(config.upsert);
    const std::string name = "tandem/" + config.name;
    Progress(o, "write: measuring %s\n", name);
    std::vector<std::unique_ptr<Session>> sessions;
    for (int i = 0; i < config.clients; ++i) {
      sessions.push_back(std::make_unique<Session>(replica.endpoint(), ClientKeys(o), true));
    }
    std::vector<ClientRun> runs(static_cast<std::size_t>(config.clients));
    const WriteWindow w = MeasuredWindow(o);
    {
      WriteThreads threads;
      for (int i = 0; i < config.clients; ++i) {
        threads.Start([&, i] {
          WriteLoop(*sessions[static_cast<std::size_t>(i)], t, config.batch, o.write_window,
                    o.write_keys, 1000 * round + static_cast<std::uint64_t>(i),
                    "w" + std::to_string(i) + "-", w, threads.abort,
                    runs[static_cast<std::size_t>(i)]);
        });
      }
      SuperviseWrites(controller, replica, indexes, threads);
    }
    rounds[name].push_back(WriteThroughputCell(name, runs, w, config.clients, config.batch, o));
  }
  Progress(o, "write: measuring %s\n", "tandem/visible");
  const Target t = fresh(false);
  rounds["tandem/visible"].push_back(VisibleCell(o, replica, controller, t, indexes));
}

// One round of one Redis durability setting.
void RedisRound(const Options& o, bool always, Rounds& rounds) {
  const std::string mode = always ? "always" : "everysec";
  Progress(o, "write: %s\n", "starting redis-server (appendfsync " + mode + ")");
  const RedisServer server({"--appendonly", "yes", "--appendfsync", mode});
  {
    Redis ping(server.port());  // up before the clients start
    std::string cmd;
    Redis::Append(cmd, {"PING"});
    ping.Write(cmd);
    ping.Reply();
  }
  const int many = static_cast<int>(o.write_clients);
  for (int clients : {1, many}) {
    for (int batch : {1, 100}) {
      const std::string name =
          "redis-" + mode + "/c" + std::to_string(clients) + "/b" + std::to_string(batch);
      Progress(o, "write: measuring %s\n", name);
      std::vector<ClientRun> runs(static_cast<std::size_t>(clients));
      const WriteWindow w = MeasuredWindow(o);
      {
        WriteThreads threads;
        for (int i = 0; i < clients; ++i) {
          threads.Start([&, i] {
            RedisLoop(server.port(), batch, o.write_window, o.write_keys,
                      static_cast<std::uint64_t>(i), w, threads.abort,
                      runs[static_cast<std::size_t>(i)]);
          });
        }
        while (threads.running.load() > 0) Sleep(20ms);
      }
      rounds[name].push_back(WriteThroughputCell(name, runs, w, clients, batch, o));
    }
  }
}

}  // namespace

Scenario WriteScenario(const Options& o) {
  Scenario s{.name = "write"};
  const bool redis = OnPath("redis-server");
  Rounds rounds;
  for (std::uint64_t r = 0; r < o.write_rounds; ++r) {
    std::vector<std::function<void()>> order;
    if (o.write_part != "redis") order.push_back([&] { TandemRound(o, r, rounds); });
    if (redis && o.write_part != "tandem") {
      order.push_back([&] { RedisRound(o, false, rounds); });
      order.push_back([&] { RedisRound(o, true, rounds); });
    }
    if (r % 2 == 1) std::reverse(order.begin(), order.end());
    for (auto& f : order) f();
  }
  std::vector<std::string> names;
  for (const Config& c : TandemConfigs(o)) names.push_back("tandem/" + c.name);
  names.push_back("tandem/visible");
  for (const char* mode : {"everysec", "always"}) {
    for (const std::string& c :
         std::vector<std::string>{"c1", "c" + std::to_string(o.write_clients)}) {
      for (const char* b : {"b1", "b100"}) {
        names.push_back(std::string("redis-") + mode + "/" + c + "/" + b);
      }
    }
  }
  for (const std::string& n : names) {
    if (rounds.count(n)) s.cells.push_back(MedianOfRounds(rounds.at(n), "rows_per_s"));
  }
  Progress(o, "write: %s\n", "measuring the ZeroMQ two-hop floor");
  {
    std::vector<double> us = ZmqFloor(o, true);
    Cell cell{.name = "zmq-floor-2-hops"};
    AddLatencies(cell, us);
    s.cells.push_back(std::move(cell));
  }

  if (o.write_part == "redis") return s;
  const std::string many = "c" + std::to_string(o.write_clients);
  const double batched = Metric(s, "tandem/plain/" + many + "/b100", "rows_per_s");
  const double visible = Metric(s, "tandem/visible", "p50_us");
  Cell v{.name = "verdict"};
  v.Set("batched_rows_per_s", batched);
  v.Set("batched_target_rows_per_s", kBatchedTarget);
  v.Set("batched_met", batched >= kBatchedTarget ? 1 : 0);
  v.Set("visible_p50_us", visible);
  v.Set("visible_target_p50_us", kVisibleTarget);
  v.Set("visible_met", visible > 0 && visible <= kVisibleTarget ? 1 : 0);
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "batched (%s x 100 rows, plain table) %.0f rows/s acknowledged and durable "
                "(target >= 200000: %s); single-row write-to-visible p50 %.0f us, p99 %.0f us "
                "(target p50 <= 2000 us: %s) (medians of %llu rounds)",
                many.c_str(), batched, batched >= kBatchedTarget ? "met" : "MISSED", visible,
                Metric(s, "tandem/visible", "p99_us"),
                visible > 0 && visible <= kVisibleTarget ? "met" : "MISSED",
                static_cast<unsigned long long>(o.write_rounds));
  s.notes.push_back(buf);
  if (o.write_part == "all" && !redis) {
    s.notes.push_back(
        "skipped Redis: redis-server is not installed (apt-get install -y "
        "redis-server)");
  } else if (o.write_part == "all") {
    std::string ratios = "rows/s Tandem / Redis (everysec, always):";
    for (const std::string& c : std::vector<std::string>{"c1", many}) {
      for (const char* b : {"b1", "b100"}) {
        const std::string cfg = c + "/" + b;
        const double tandem = Metric(s, "tandem/plain/" + cfg, "rows_per_s");
        const double every = Metric(s, "redis-everysec/" + cfg, "rows_per_s");
        const double always = Metric(s, "redis-always/" + cfg, "rows_per_s");
        const double re = tandem / std::max(every, 1e-9), ra = tandem / std::max(always, 1e-9);
        v.Set("plain/" + cfg + "_over_redis_everysec", re);
        v.Set("plain/" + cfg + "_over_redis_always", ra);
        std::snprintf(buf, sizeof buf, " %s %.2f, %.2f;", cfg.c_str(), re, ra);
        ratios += buf;
      }
    }
    ratios.pop_back();
    s.notes.push_back(ratios);
  }
  s.cells.push_back(std::move(v));
  return s;
}

}  // namespace tandem::bench
