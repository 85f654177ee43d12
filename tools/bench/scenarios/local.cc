// tandem-bench local: what a point lookup costs when another process on the replica's
// host reads the index in place with tandem::LocalReader (client/local_reader.h, DESIGN §11),
// beside the reads one would compare it with, over the same keys in the same run.
//
//  * Tandem: a two-runtime replica with the point-lookup index (a key_value source of --local-keys
//    keys, 10 updates per 1 ms tick, indexed by key). In each phase — idle, then loaded with
//    isolation's heavy load on the same replica — the cells:
//      <phase>/local-reader            one lookup per sample, closed loop from one thread: the
//                                      zero-copy callback form at the latest readable time
//      <phase>/local-reader-at         the same at a given time: the latest readable one, taken
//                                      every 100 ms (the index compacted right behind it); the two
//                                      forms alternate lookup by lookup in one window, so both
//                                      read the same states of the index's spine
//      idle/local-reader-hot           as local-reader, the keys drawn from 16 spread over the
//                                      index: its search paths stay cached (no cold misses)
//      <phase>/local-reader-1-thread   lookups/s, untimed, from 1 and from 2 threads (one
//      <phase>/local-reader-2-threads  LocalReader each)
//      <phase>/network-peek            the same lookup as a Peek through the controller endpoint
//                                      (PeekLoop, as isolation and redis measure it)
//    While lookup threads run, the main thread is the controller: every 100 ms it takes the
//    replica's frontiers in and compacts every index right behind its write frontier.
//  * Peers, once the replica is stopped: lmdb-get (mdb_txn_renew + mdb_get + mdb_txn_reset: a read
//    snapshot per lookup, as LocalReader announces one per call), lmdb-get-in-txn (mdb_get alone in
//    one long read transaction), lmdb-get-hot (16 keys, as local-reader-hot), lmdb-1-thread /
//    lmdb-2-threads (lookups/s), redis-get (loopback), tcp-floor (a 32-byte round trip between two
//    threads over loopback TCP, TCP_NODELAY: the floor under any read over the network), timer (a
//    sample with nothing between its two clock reads).
//  * verdict: the local reader's targets (below) and its ratios to the peers.
// Keys are drawn uniformly (the same way for every reader) before the timing; each timed sample is
// the lookup between two steady_clock reads.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "client/local_reader.h"
#include "tools/bench/measure.h"
#include "tools/bench/scenarios/scenarios.h"

#ifdef TANDEM_BENCH_LMDB
#include <lmdb.h>
#endif

namespace tandem::bench {
namespace {

// The local reader's targets: what reading in place must beat to be worth a program's mapping.
constexpr double kIdleP50Us = 1;               // LocalReader p50, maintenance idle
constexpr double kLoadedP50Us = 2;             // ... loaded
constexpr double kRedisOverLocal = 50;         // Redis GET p50 / LocalReader p50, at least
constexpr double kLocalOverLmdb = 2;           // LocalReader p50 / mdb_get p50, at most
constexpr double kPeekOverRedis = 2;           // network peek p50 / Redis GET p50, at most
constexpr double kPeekOverRedisStretch = 1.5;  // ... the stretch goal

// The thread's i-th lookup, of `key`: the rows it found (1 expected), or -1 for an error.
using LookupFn = std::function<int(std::int64_t key, std::size_t i)>;
// Makes one thread's lookup (its own LocalReader or LMDB transaction), on that thread; a failed
// lookup's message goes to *error (the first one only).
using MakeLookup = std::function<LookupFn(std::string* error)>;

struct Tally {
  std::vector<double> us;  // timed: each lookup's latency
  std::uint64_t lookups = 0, misses = 0, errors = 0;
};

struct LookupStats {
  // Split: the even lookups' in part[0], the odd ones' in part[1] (two forms of lookup alternating
  // in one window, so they read the index in the same states); else all in part[0].
  Tally part[2];
  std::string first_error;
  Clock::time_point from{}, to{};  // the measured window
  std::exception_ptr failure;
};

// Lookup threads, stopped and joined when this goes, however the calling thread leaves.
struct ReaderThreads {
  std::atomic<bool> stop{false};
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  ~ReaderThreads() {
    stop = true;
    for (auto& t : threads) {
      if (t.joinable()) t.join();
    }
  }
  bool Done() const { return finished.load() == static_cast<int>(threads.size()); }
};

// "Hot" cells draw from this many keys only, spread evenly over the index: their search paths stay
// in the CPU's caches, so the cell shows a lookup's cost without the cache misses of a cold key.
constexpr std::uint64_t kHotKeys = 16;

// One thread's closed loop over uniformly drawn keys (of `hot` keys spread over all when `hot` is
// not 0). Timed: each lookup between two clock reads,
// until the window is done (MeasureWindow's rule). Untimed: the lookups from the first clock check
// at or after the window's start to the first at or after its end (a check every 256 lookups).
void LookupLoop(const MeasureWindow& w, bool timed, bool split, std::uint64_t keys,
                std::uint64_t hot, std::uint64_t seed, const MakeLookup& make,
                const std::atomic<bool>& stop, LookupStats& out) {
  try {
    const LookupFn lookup = make(&out.first_error);
    std::vector<std::int64_t> picks(std::size_t{1} << 20);
    std::mt19937_64 rng(seed);
    const std::uint64_t n = hot ? std::min(hot, keys) : keys;
    const std::uint64_t stride = keys / n;
    std::uniform_int_distribution<std::uint64_t> pick(0, n - 1);
    for (auto& k : picks) k = static_cast<std::int64_t>(pick(rng) * stride);
    const std::size_t mask = picks.size() - 1;
    auto tally = [&](Tally& t, int rows) {
      ++t.lookups;
      if (rows < 0) {
        ++t.errors;
      } else if (rows != 1) {
        ++t.misses;
      }
    };
    bool counting = false;
    std::size_t samples = 0;
    for (std::size_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      const std::int64_t key = picks[i & mask];
      Tally& part = out.part[split ? i & 1 : 0];
      if (timed) {
        const auto t0 = Clock::now();
        const int rows = lookup(key, i);
        const auto t1 = Clock::now();
        if (t0 >= w.from) {
          if (!counting) out.from = t0;
          counting = true;
          part.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
          ++samples;
          tally(part, rows);
        }
        if (w.Done(t1, samples)) {
          out.to = t1;
          break;
        }
      } else {
        const int rows = lookup(key, i);
        if (counting) tally(part, rows);
        if ((i & 255) == 255) {
          const auto now = Clock::now();
          if (!counting && now >= w.from) {
            counting = true;
            out.from = now;
          }
          if (now >= w.until) {
            out.to = now;
            break;
          }
        }
      }
    }
  } catch (...) {
    out.failure = std::current_exception();
  }
}

// How RunLookups measures.
struct Run {
  int threads = 1;
  bool timed = true;   // each lookup's latency; else lookups/s
  bool split = false;  // even and odd lookups apart (LookupStats::part)
  std::uint64_t hot = 0;
};

// Runs `run.threads` lookup loops (thread i seeded `seed` + i) in one measuring window; meanwhile
// the calling thread runs `tend` (the controller's housekeeping, or a sleep: it must return within
// ~100 ms) until every loop is done.
std::vector<LookupStats> RunLookups(const Options& o, const Run& run, std::uint64_t keys,
                                    std::uint64_t seed, const MakeLookup& make,
                                    const std::function<void()>& tend) {
  const int threads = run.threads;
  const MeasureWindow window(o);
  std::vector<LookupStats> stats(static_cast<std::size_t>(threads));
  {
    ReaderThreads t;
    for (int i = 0; i < threads; ++i) {
      t.threads.emplace_back([&, i] {
        LookupLoop(window, run.timed, run.split, keys, run.hot,
                   seed + static_cast<std::uint64_t>(i), make, t.stop,
                   stats[static_cast<std::size_t>(i)]);
        ++t.finished;
      });
    }
    while (!t.Done()) tend();
  }
  for (const auto& s : stats) {
    if (s.failure) std::rethrow_exception(s.failure);
  }
  return stats;
}

Cell LatencyCell(const std::string& name, Tally& s, std::uint64_t keys) {
  Cell c{.name = name};
  c.Set("keys", static_cast<double>(keys));
  AddLatencies(c, s.us);
  // Sub-microsecond cells: the median and tail in whole nanoseconds too.
  c.Set("p50_ns", std::round(1000 * Percentile(s.us, 0.50)));
  c.Set("p99_ns", std::round(1000 * Percentile(s.us, 0.99)));
  c.Set("misses", static_cast<double>(s.misses));
  c.Set("errors", static_cast<double>(s.errors));
  return c;
}

Cell LookupThroughputCell(const std::string& name, const std::vector<LookupStats>& stats,
                          std::uint64_t keys) {
  double per_s = 0;
  std::uint64_t lookups = 0, misses = 0, errors = 0;
  for (const auto& s : stats) {
    per_s += static_cast<double>(s.part[0].lookups) / std::max(1e-9, Seconds(s.to - s.from));
    lookups += s.part[0].lookups;
    misses += s.part[0].misses;
    errors += s.part[0].errors;
  }
  const double n = static_cast<double>(stats.size());
  Cell c{.name = name};
  c.Set("keys", static_cast<double>(keys));
  c.Set("threads", n);
  c.Set("lookups_per_s", per_s);
  c.Set("lookups_per_s_per_thread", per_s / n);
  c.Set("ns_per_lookup", per_s > 0 ? 1e9 * n / per_s : 0);  // a thread's mean, untimed
  c.Set("lookups", static_cast<double>(lookups));
  c.Set("misses", static_cast<double>(misses));
  c.Set("errors", static_cast<double>(errors));
  return c;
}

// A cell's errors, as a note (a lookup at the latest time may find it compacted meanwhile more
// often than LocalReader tries again; anything else is a bug).
void NoteErrors(Scenario& s, const std::string& cell, const std::vector<LookupStats>& stats) {
  for (const auto& st : stats) {
    const std::uint64_t errors = st.part[0].errors + st.part[1].errors;
    if (errors == 0) continue;
    s.notes.push_back(cell + ": " + std::to_string(errors) + " of " +
                      std::to_string(st.part[0].lookups + st.part[1].lookups) +
                      " lookups failed; the first: " + st.first_error);
    return;
  }
}

// What used the CPUs while a cell ran (its warm-up included), in cores: the replica (supervisor and
// runtimes), tandem-bench itself, the whole machine, and the rest — other work on the machine
// (in redis-get, redis-server's too): how noisy the cell's conditions were.
class CpuMeter {
 public:
  explicit CpuMeter(std::vector<pid_t> replica = {}) : replica_(std::move(replica)) {
    at_ = Clock::now();
    machine_ = MachineBusySeconds();
    self_ = CpuSeconds(getpid());
    replica_cpu_ = ReplicaSeconds();
  }
  void AddTo(Cell& c) const {
    const double s = std::max(1e-9, Seconds(Clock::now() - at_));
    const double machine = (MachineBusySeconds() - machine_) / s;
    const double self = (CpuSeconds(getpid()) - self_) / s;
    const double replica = (ReplicaSeconds() - replica_cpu_) / s;
    if (!replica_.empty()) c.Set("replica_cpu_cores", replica);
    c.Set("bench_cpu_cores", self);
    c.Set("machine_busy_cores", machine);
    c.Set("other_cpu_cores", std::max(0.0, machine - self - replica));
  }

 private:
  double ReplicaSeconds() const {
    double sum = 0;
    for (pid_t p : replica_) sum += CpuSeconds(p);
    return sum;
  }
  std::vector<pid_t> replica_;
  Clock::time_point at_;
  double machine_ = 0, self_ = 0, replica_cpu_ = 0;
};

// ---- Tandem ----

// A thread's LocalReader lookups of `index` in the replica of segment `segment`: the zero-copy
// callback form, at the latest readable time (`at` null), or the even lookups so and the odd ones
// at *at (which only grows). The key row is reused and the callback reads the row's last byte: what
// a caller that looks at the value does.
MakeLookup LocalReaderLookup(const std::string& segment, GlobalId index,
                             const std::atomic<Time>* at = nullptr) {
  return [segment, index, at](std::string* error) -> LookupFn {
    auto attached = LocalReader::Attach(segment);
    if (!attached.ok()) {
      throw std::runtime_error("LocalReader::Attach: " + attached.status().ToString());
    }
    struct State {
      std::unique_ptr<LocalReader> reader;
      Row key{Datum(std::int64_t{0})};
      int rows = 0;
      std::uint64_t sink = 0;
      LocalReader::RowFn fn;
    };
    auto st = std::make_shared<State>();
    st->reader = std::move(attached).value();
    st->fn = [s = st.get()](const RowView& r) {
      ++s->rows;
      if (!r.row_bytes().empty()) s->sink += static_cast<unsigned char>(r.row_bytes().back());
      return true;
    };
    return [st, index, at, error](std::int64_t k, std::size_t i) {
      st->key[0] = k;
      st->rows = 0;
      std::optional<Time> t;
      if (at && (i & 1)) t = at->load(std::memory_order_acquire);
      Result<Time> r = st->reader->Lookup(index, st->key, t, st->fn);
      // The controller compacts only to times it published in *at, so a time found compacted
      // while *at still holds it is a bug; one the controller has moved past (this thread was
      // preempted between the load and the read) is read again at the new time.
      while (t && !r.ok() && r.status().code() == StatusCode::kFailedPrecondition) {
        const Time now = at->load(std::memory_order_acquire);
        if (now == *t) break;
        t = now;
        st->rows = 0;
        r = st->reader->Lookup(index, st->key, t, st->fn);
      }
      if (!r.ok()) {
        if (error->empty()) *error = r.status().ToString();
        return -1;
      }
      return st->rows;
    };
  };
}

// The replica, and what the controller keeps while lookup threads run.
struct TandemSide {
  TandemSide(const Options& o, std::uint64_t keys) : lr(o, true, keys) {
    auto attached = LocalReader::Attach(lr.replica.segment());
    if (!attached.ok()) {
      throw std::runtime_error("LocalReader::Attach: " + attached.status().ToString());
    }
    probe = std::move(attached).value();
  }
  LookupReplica lr;
  const GlobalId index = *GlobalId::Parse(kLightIndex);
  std::unique_ptr<LocalReader> probe;  // the controller's: the time local-reader-at reads
  std::atomic<Time> at{0};
};

// One phase's cells (idle or loaded: the heavy load started first, and left running).
void TandemPhase(const Options& o, std::uint64_t keys, TandemSide& t, bool loaded,
                 const HeavyLoadSpec& load, Scenario& s) {
  const std::string phase = loaded ? "loaded" : "idle";
  Client& client = *t.lr.client;
  Replica& replica = t.lr.replica;
  if (loaded) {
    Progress(o, "local: starting the heavy load (%s)\n", load.what);
    client.Track(load.tracked);
    for (const pb::Command& c : load.dataflows) client.Send(c);
    for (const std::string& id : load.built) {
      client.WaitWrite(id, 2, BuildLimit(load.build_keys), replica);
    }
  }
  auto updates = [&](Clock::time_point from, Clock::time_point to) {
    return loaded ? client.TickRate(from, to) * load.updates_per_tick : 0.0;
  };
  // The controller while threads read at the latest time: frontiers in, compaction out.
  const std::function<void()> latest = [&] {
    client.Pump(100ms);
    client.CompactAllBut({});
    replica.CheckAlive();
  };
  // ... and while they read at t.at too: the latest readable time, the index compacted behind it.
  const std::function<void()> given = [&] {
    client.Pump(100ms);
    if (auto now = t.probe->LatestReadable(t.index); now.ok() && *now > t.at.load()) t.at = *now;
    client.CompactAllBut({kLightIndex});
    client.Compact(kLightIndex, t.at.load());
    replica.CheckAlive();
  };
  const std::string segment = replica.segment();
  const std::uint64_t seed = loaded ? 200 : 100;
  const std::vector<pid_t> pids = {replica.pid(), replica.RuntimePid("maintenance"),
                                   replica.RuntimePid("interactive")};
  auto add = [&](Cell c, const std::vector<LookupStats>& stats, const CpuMeter& cpu) {
    c.Set("updates_per_s", updates(stats[0].from, stats[0].to));
    cpu.AddTo(c);
    NoteErrors(s, c.name, stats);
    s.cells.push_back(std::move(c));
  };
  {
    // The two forms alternate, lookup by lookup, in one window: the index's spine changes shape
    // over tens of seconds (batches merge), so separate windows would compare different indexes.
    const std::string name = phase + "/local-reader";
    Progress(o, "local: measuring %s (and -at)\n", name);
    // The time read starts at or past every compaction asked for so far (up to the write frontier
    // known here, less one; the last request may not be applied yet): wait until the segment
    // publishes that far, or an at-time lookup may find its time compacted meanwhile.
    const Time asked = std::max<Time>(client.Write(kLightIndex), 1) - 1;
    for (const auto until = Clock::now() + 10s;;) {
      auto first = t.probe->LatestReadable(t.index);
      if (first.ok() && *first >= asked) {
        t.at = std::max(t.at.load(), *first);
        break;
      }
      if (Clock::now() > until) {
        throw std::runtime_error(
            std::string(kLightIndex) + " not readable at " + std::to_string(asked) +
            " within 10 s: " + (first.ok() ? std::to_string(*first) : first.status().ToString()));
      }
      client.Pump(10ms);
    }
    const CpuMeter cpu(pids);
    auto stats = RunLookups(o, {.split = true}, keys, seed,
                            LocalReaderLookup(segment, t.index, &t.at), given);
    add(LatencyCell(name, stats[0].part[0], keys), stats, cpu);  // notes both forms' errors
    Cell at_cell = LatencyCell(name + "-at", stats[0].part[1], keys);
    at_cell.Set("updates_per_s", updates(stats[0].from, stats[0].to));
    cpu.AddTo(at_cell);
    s.cells.push_back(std::move(at_cell));
  }
  if (!loaded) {
    const std::string name = phase + "/local-reader-hot";
    Progress(o, "local: measuring %s\n", name);
    const CpuMeter cpu(pids);
    auto stats = RunLookups(o, {.hot = kHotKeys}, keys, seed + 15,
                            LocalReaderLookup(segment, t.index), latest);
    Cell c = LatencyCell(name, stats[0].part[0], keys);
    c.Set("hot_keys", static_cast<double>(std::min(kHotKeys, keys)));
    add(std::move(c), stats, cpu);
  }
  for (int threads : {1, 2}) {
    const std::string name = phase + "/local-reader-" + std::to_string(threads) +
                             (threads == 1 ? "-thread" : "-threads");
    Progress(o, "local: measuring %s\n", name);
    const CpuMeter cpu(pids);
    auto stats = RunLookups(o, {.threads = threads, .timed = false}, keys, seed + 20,
                            LocalReaderLookup(segment, t.index), latest);
    add(LookupThroughputCell(name, stats, keys), stats, cpu);
  }
  {
    const std::string name = phase + "/network-peek";
    Progress(o, "local: measuring %s\n", name);
    const CpuMeter cpu(pids);
    PeekRun run = PeekLoop(client, replica, kLightIndex, keys, o, seed + 30);
    Cell c{.name = name};
    c.Set("keys", static_cast<double>(keys));
    run.AddTo(c);
    c.Set("updates_per_s", updates(run.from, run.to));
    cpu.AddTo(c);
    s.cells.push_back(std::move(c));
  }
}

// ---- Peers ----

#ifdef TANDEM_BENCH_LMDB
void MdbCheck(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string("LMDB ") + what + ": " + mdb_strerror(rc));
}

void BigEndian(std::uint64_t v, unsigned char out[8]) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<unsigned char>(v);
}

// An LMDB environment of the run's own in a scratch directory (on /tmp's file system; read through
// the page cache once loaded, as the segment is), with `keys` keys: k as 8 bytes big-endian (memcmp
// order = numeric order, as Tandem's key encoding) -> an 8-byte value. Removed when this goes.
class LmdbStore {
 public:
  explicit LmdbStore(std::uint64_t keys) : dir_("tandem-bench-lmdb") {
    MDB_env* env = nullptr;
    MdbCheck(mdb_env_create(&env), "mdb_env_create");
    env_.reset(env);
    MdbCheck(mdb_env_set_mapsize(env, keys * 64 + (std::size_t{64} << 20)), "mdb_env_set_mapsize");
    MdbCheck(mdb_env_set_maxreaders(env, 64), "mdb_env_set_maxreaders");
    // NOTLS: a read transaction's reader slot belongs to the transaction, not the thread.
    MdbCheck(mdb_env_open(env, dir_.path.c_str(), MDB_NOSYNC | MDB_NOTLS, 0600), "mdb_env_open");
    MDB_txn* txn = nullptr;
    MdbCheck(mdb_txn_begin(env, nullptr, 0, &txn), "mdb_txn_begin");
    try {
      MdbCheck(mdb_dbi_open(txn, nullptr, 0, &dbi_), "mdb_dbi_open");
      for (std::uint64_t k = 0; k < keys; ++k) {
        unsigned char kb[8], vb[8];
        BigEndian(k, kb);
        BigEndian(k * 2654435761u % 1000003, vb);
        MDB_val key{sizeof kb, kb}, val{sizeof vb, vb};
        MdbCheck(mdb_put(txn, dbi_, &key, &val, MDB_APPEND), "mdb_put");
      }
    } catch (...) {
      mdb_txn_abort(txn);
      throw;
    }
    MdbCheck(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  MDB_env* env() const { return env_.get(); }
  MDB_dbi dbi() const { return dbi_; }

 private:
  ScratchDir dir_;  // declared first: removed after the environment is closed
  std::unique_ptr<MDB_env, decltype(&mdb_env_close)> env_{nullptr, &mdb_env_close};
  MDB_dbi dbi_ = 0;
};

// A thread's mdb_get lookups: in a read transaction renewed and reset around each (a snapshot per
// lookup, LMDB's cheapest), or all in one transaction begun once.
MakeLookup LmdbLookup(const LmdbStore& db, bool txn_per_lookup) {
  return [&db, txn_per_lookup](std::string* error) -> LookupFn {
    struct State {
      MDB_txn* txn = nullptr;
      std::uint64_t sink = 0;
      ~State() {
        if (txn) mdb_txn_abort(txn);
      }
    };
    auto st = std::make_shared<State>();
    MdbCheck(mdb_txn_begin(db.env(), nullptr, MDB_RDONLY, &st->txn), "mdb_txn_begin");
    if (txn_per_lookup) mdb_txn_reset(st->txn);
    const MDB_dbi dbi = db.dbi();
    return [st, dbi, txn_per_lookup, error](std::int64_t k, std::size_t) {
      unsigned char kb[8];
      BigEndian(static_cast<std::uint64_t>(k), kb);
      MDB_val key{sizeof kb, kb}, val{0, nullptr};
      int rc = txn_per_lookup ? mdb_txn_renew(st->txn) : 0;
      if (rc == 0) rc = mdb_get(st->txn, dbi, &key, &val);
      if (txn_per_lookup) mdb_txn_reset(st->txn);
      if (rc == MDB_NOTFOUND) return 0;
      if (rc != 0) {
        if (error->empty()) *error = mdb_strerror(rc);
        return -1;
      }
      if (val.mv_size > 0)
        st->sink += static_cast<const unsigned char*>(val.mv_data)[val.mv_size - 1];
      return 1;
    };
  };
}

void LmdbCells(const Options& o, std::uint64_t keys, Scenario& s) {
  Progress(o, "local: %s\n", "loading LMDB");
  const LmdbStore db(keys);
  const std::function<void()> nap = [] { Sleep(20ms); };
  for (bool per_lookup : {true, false}) {
    const std::string name = per_lookup ? "lmdb-get" : "lmdb-get-in-txn";
    Progress(o, "local: measuring %s\n", name);
    const CpuMeter cpu;
    auto stats = RunLookups(o, {}, keys, 300, LmdbLookup(db, per_lookup), nap);
    NoteErrors(s, name, stats);
    Cell c = LatencyCell(name, stats[0].part[0], keys);
    cpu.AddTo(c);
    s.cells.push_back(std::move(c));
  }
  {
    Progress(o, "local: measuring %s\n", "lmdb-get-hot");
    const CpuMeter cpu;
    auto stats = RunLookups(o, {.hot = kHotKeys}, keys, 315, LmdbLookup(db, true), nap);
    NoteErrors(s, "lmdb-get-hot", stats);
    Cell c = LatencyCell("lmdb-get-hot", stats[0].part[0], keys);
    c.Set("hot_keys", static_cast<double>(std::min(kHotKeys, keys)));
    cpu.AddTo(c);
    s.cells.push_back(std::move(c));
  }
  for (int threads : {1, 2}) {
    const std::string name =
        "lmdb-" + std::to_string(threads) + (threads == 1 ? "-thread" : "-threads");
    Progress(o, "local: measuring %s\n", name);
    const CpuMeter cpu;
    auto stats =
        RunLookups(o, {.threads = threads, .timed = false}, keys, 320, LmdbLookup(db, true), nap);
    NoteErrors(s, name, stats);
    Cell c = LookupThroughputCell(name, stats, keys);
    cpu.AddTo(c);
    s.cells.push_back(std::move(c));
  }
}
#endif

// The raw TCP loopback round trip: a 32-byte message to an echo thread and back over one
// connection (TCP_NODELAY both ends, blocking reads), closed loop.
std::vector<double> TcpFloor(const Options& o) {
  struct Sockets {
    int listener = -1, client = -1;
    std::thread echo;
    ~Sockets() {
      if (client >= 0) shutdown(client, SHUT_RDWR);      // the echo reads 0 and ends
      if (listener >= 0) shutdown(listener, SHUT_RDWR);  // ... or its accept fails
      if (echo.joinable()) echo.join();
      if (client >= 0) close(client);
      if (listener >= 0) close(listener);
    }
  } s;
  s.listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (s.listener < 0 || bind(s.listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(s.listener, 1) != 0 ||
      getsockname(s.listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("tcp-floor: cannot listen on loopback");
  }
  const int one = 1;
  s.echo = std::thread([fd = s.listener, one] {
    const int c = accept(fd, nullptr, nullptr);
    if (c < 0) return;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char buf[256];
    for (;;) {
      const ssize_t n = read(c, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t done = 0; done < n;) {
        const ssize_t w = write(c, buf + done, static_cast<std::size_t>(n - done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          close(c);
          return;
        }
        done += w;
      }
    }
    close(c);
  });
  s.client = ConnectLoopback(ntohs(addr.sin_port));
  if (s.client < 0) throw std::runtime_error("tcp-floor: cannot connect");
  setsockopt(s.client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char msg[32] = {}, back[32];
  return ClosedLoop(o, [&] {
    for (std::size_t done = 0; done < sizeof msg;) {
      const ssize_t n = write(s.client, msg + done, sizeof msg - done);
      if (n < 0 && errno == EINTR) {
        CheckStop();
        continue;
      }
      if (n <= 0) throw std::runtime_error("tcp-floor: write failed");
      done += static_cast<std::size_t>(n);
    }
    for (std::size_t done = 0; done < sizeof back;) {
      const ssize_t n = read(s.client, back + done, sizeof back - done);
      if (n < 0 && errno == EINTR) {
        CheckStop();
        continue;
      }
      if (n <= 0) throw std::runtime_error("tcp-floor: the echo closed");
      done += static_cast<std::size_t>(n);
    }
  });
}

void PeerCells(const Options& o, std::uint64_t keys, Scenario& s) {
#ifdef TANDEM_BENCH_LMDB
  LmdbCells(o, keys, s);
#else
  s.notes.push_back(
      "skipped LMDB: tandem-bench was built without it (apt-get install -y liblmdb-dev, then "
      "configure and build again)");
#endif
  if (OnPath("redis-server")) {
    const CpuMeter cpu;
    s.cells.push_back(RedisGet(o, keys, "local: redis: "));
    cpu.AddTo(s.cells.back());
  } else {
    s.notes.push_back(
        "skipped Redis: redis-server is not installed (apt-get install -y "
        "redis-server)");
  }
  {
    Progress(o, "local: measuring %s\n", "tcp-floor");
    const CpuMeter cpu;
    std::vector<double> us = TcpFloor(o);
    Cell c{.name = "tcp-floor"};
    AddLatencies(c, us);
    cpu.AddTo(c);
    s.cells.push_back(std::move(c));
  }
  {
    Progress(o, "local: measuring %s\n", "timer");
    Options quick = o;
    quick.duration = std::min(o.duration, 2.0);
    quick.warmup = std::min(o.warmup, 0.2);
    std::vector<double> us = ClosedLoop(quick, [] {});
    Cell c{.name = "timer"};
    AddLatencies(c, us);
    s.cells.push_back(std::move(c));
  }
}

// The verdict cell and lines: each ratio whose cells were measured.
void Verdict(Scenario& s) {
  Cell v{.name = "verdict"};
  const double idle = Metric(s, "idle/local-reader", "p50_us");
  const double loaded = Metric(s, "loaded/local-reader", "p50_us");
  const double idle_at = Metric(s, "idle/local-reader-at", "p50_us");
  const double peek = Metric(s, "idle/network-peek", "p50_us");
  const double peek_loaded = Metric(s, "loaded/network-peek", "p50_us");
  const double redis = Metric(s, "redis-get", "p50_us");
  const double lmdb = Metric(s, "lmdb-get", "p50_us");
  const double lmdb_in_txn = Metric(s, "lmdb-get-in-txn", "p50_us");
  const double tcp = Metric(s, "tcp-floor", "p50_us");
  char buf[320];
  auto met = [](bool ok) { return ok ? "met" : "MISSED"; };
  if (idle > 0) {
    v.Set("local_reader_idle_p50_us", idle);
    v.Set("local_reader_idle_met", idle <= kIdleP50Us ? 1 : 0);
    std::snprintf(buf, sizeof buf, "LocalReader p50 idle = %.3f us (target <= %.0f us: %s)", idle,
                  kIdleP50Us, met(idle <= kIdleP50Us));
    s.notes.push_back(buf);
  }
  if (loaded > 0) {
    v.Set("local_reader_loaded_p50_us", loaded);
    v.Set("local_reader_loaded_met", loaded <= kLoadedP50Us ? 1 : 0);
    std::snprintf(buf, sizeof buf, "LocalReader p50 loaded = %.3f us (target <= %.0f us: %s)",
                  loaded, kLoadedP50Us, met(loaded <= kLoadedP50Us));
    s.notes.push_back(buf);
  }
  if (idle > 0 && idle_at > 0) v.Set("local_reader_at_over_latest_p50", idle_at / idle);
  const double hot = Metric(s, "idle/local-reader-hot", "p50_us");
  const double lmdb_hot = Metric(s, "lmdb-get-hot", "p50_us");
  if (hot > 0 && lmdb_hot > 0) {
    v.Set("local_reader_hot_over_lmdb_get_hot_p50", hot / lmdb_hot);
    std::snprintf(buf, sizeof buf,
                  "hot keys (%llu, cached): LocalReader p50 / mdb_get p50 = %.3f / %.3f us = %.2fx",
                  static_cast<unsigned long long>(kHotKeys), hot, lmdb_hot, hot / lmdb_hot);
    s.notes.push_back(buf);
  }
  if (idle > 0 && redis > 0) {
    const double r = redis / idle;
    v.Set("redis_get_over_local_reader_p50", r);
    std::snprintf(buf, sizeof buf,
                  "Redis GET p50 / LocalReader p50 (idle) = %.2f / %.3f us = %.0fx (target >= "
                  "%.0fx: %s)",
                  redis, idle, r, kRedisOverLocal, met(r >= kRedisOverLocal));
    s.notes.push_back(buf);
  }
  if (idle > 0 && lmdb > 0) {
    const double r = idle / lmdb;
    v.Set("local_reader_over_lmdb_get_p50", r);
    std::snprintf(buf, sizeof buf,
                  "LocalReader p50 (idle) / mdb_get p50 (a read transaction per lookup) = %.3f / "
                  "%.3f us = %.2fx (target <= %.0fx: %s)",
                  idle, lmdb, r, kLocalOverLmdb, met(r <= kLocalOverLmdb));
    s.notes.push_back(buf);
  }
  if (idle > 0 && lmdb_in_txn > 0) {
    v.Set("local_reader_over_lmdb_get_in_txn_p50", idle / lmdb_in_txn);
    std::snprintf(buf, sizeof buf,
                  "LocalReader p50 (idle) / mdb_get p50 (one long read transaction) = %.2fx",
                  idle / lmdb_in_txn);
    s.notes.push_back(buf);
  }
  if (peek > 0 && redis > 0) {
    const double r = peek / redis;
    v.Set("network_peek_over_redis_get_p50", r);
    std::snprintf(buf, sizeof buf,
                  "network peek p50 (idle) / Redis GET p50 = %.1f / %.2f us = %.2fx (target <= "
                  "%.0fx: %s; stretch <= %.1fx: %s)",
                  peek, redis, r, kPeekOverRedis, met(r <= kPeekOverRedis), kPeekOverRedisStretch,
                  met(r <= kPeekOverRedisStretch));
    s.notes.push_back(buf);
  }
  if (peek_loaded > 0 && redis > 0)
    v.Set("loaded_network_peek_over_redis_get_p50", peek_loaded / redis);
  if (tcp > 0) {
    if (peek > 0) v.Set("network_peek_over_tcp_floor_p50", peek / tcp);
    if (redis > 0) v.Set("redis_get_over_tcp_floor_p50", redis / tcp);
    if (idle > 0) v.Set("tcp_floor_over_local_reader_p50", tcp / idle);
  }
  if (!v.metrics.empty()) s.cells.push_back(std::move(v));
}

}  // namespace

Scenario LocalScenario(const Options& o) {
  Scenario s{.name = "local"};
  const std::uint64_t keys = o.local_keys;
  if (o.local_part != "peers") {
    Progress(o, "local: %s\n", "starting a two-runtime replica and building the index");
    Options sized =
        o;  // the index (~85 bytes a key, twice that while the spine merges) and the load
    if (!o.shm_size_set && keys > 1000000) {
      sized.shm_size = std::to_string((keys * 400 >> 20) + 256) + "MiB";
    }
    TandemSide t(sized, keys);
    const HeavyLoadSpec load = HeadlineLoad(o);
    for (bool loaded : {false, true}) TandemPhase(o, keys, t, loaded, load, s);
  }
  if (o.local_part != "tandem") PeerCells(o, keys, s);
  Verdict(s);
  return s;
}

}  // namespace tandem::bench
