// tandem-bench: measures what Tandem exists for — reads that stay fast while
// maintenance is busy, and compact shared indexes — by starting real supervisors and driving them
// over the controller endpoint like any client. Every process it starts is stopped and every
// segment and temporary directory removed, on every path (errors and ^C included).
//
//   tandem-bench
//   isolation|lookup-scale|ingest|memory|redis|curve|peek-path|slow-path|join|write|subscribe|local|
//   replicas|sql|all|hydration
//                [--duration S]
//                [--json]
//                [--csv FILE] [--plot FILE.png] [--workers N] [--supervisor PATH] ...
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/bench/scenarios/scenarios.h"

namespace tandem::bench {
namespace {

constexpr char kUsage[] = R"(usage: tandem-bench SCENARIO [options]

Scenarios (each starts real tandem-supervisors on free ports and drives them over the
controller endpoint like any client; everything is stopped and removed at the end):
  isolation      point-lookup peek latency, {solo, two-runtime} x {idle, loaded}, with the
                 heavy dataflow's maintenance throughput (the headline)
  lookup-scale   two-runtime point-lookup latency with the index at 10^4 .. --max-keys keys
  ingest         maintenance throughput into an index, through a reduce and through a join (the
                 join scenario's sources variant, --join-* loads), as fast as possible, for each
                 --workers count (cells index/w<N>, reduce/w<N>, join/w<N>: updates/s, per worker,
                 the speedup over the first count, each worker's busy and waiting fractions of
                 the window from the runtime's step statistics in /metrics)
  memory         segment bytes of a churning index with compaction commands flowing
  redis          Tandem peeks vs Redis GET over loopback (needs redis-server; skipped otherwise),
                 and the ZeroMQ round-trip floor under them (one hop; two hops as via the
                 supervisor)
  curve          two-runtime point-lookup latency over a plain and a CURVE controller endpoint,
                 measured in the same run in alternating rounds, with their ratio
  peek-path      two-runtime point-lookup latency with the peek fast path (rings in the segment,
                 DESIGN §14) and without it (--peek-ring-bytes 0: the runtime channel), measured
                 in the same run in alternating rounds, with their ratio
  slow-path      one-shot aggregate queries (count, sum per g = key % 100) over a 10^5- and a
                 10^6-row index, each created, peeked and dropped like `tandem-ctl query`,
                 closed loop, {solo, two-runtime} x {idle, loaded} with isolation's heavy load;
                 and the memory one takes while it runs
  join           input updates/s per worker through an incremental join of a 10^6-key fact
                 stream with a changing 10^4-key dimension into an index, with both inputs
                 sources of the joining dataflow (the join arranges both) and with the dimension
                 an imported index by the join key (read in place), the segment bytes and the
                 maintenance runtime's RSS of each; then isolation's two-runtime cells with that
                 join as the heavy load
  write          acknowledged (durable) writes/s into a table through the endpoint from 1 and
                 --write-clients writer sessions, each with --write-window writes in flight,
                 batches of 1 and 100 rows (plain table; an upsert table for the batched many-
                 client case); write-to-visible latency (write sent -> a peek at the acknowledged
                 time sees the row) of single-row writes while another session peeks; and, in the
                 same run, Redis SET / MSET of 100 (appendonly, appendfsync everysec and always)
                 from as many clients with as many in flight, and the ZeroMQ round-trip floor
                 (needs redis-server for the Redis cells; skipped otherwise)
  subscribe      freshness of subscribes to the point-lookup index (a time's publication in the
                 segment -> the SubscribeBatch that completes it received), p50/p99 with 1 and
                 --subscribers observer sessions subscribed, {solo, two-runtime} x {idle,
                 loaded} with isolation's heavy load; and the heavy load's updates/s with
                 --subscribers subscribers vs no session (before and after) and vs as many
                 observer sessions that do not subscribe
  local          point lookups read in place from this process with tandem::LocalReader (the
                 replica's segment mapped read-only): latency (one lookup per sample, the
                 zero-copy callback form at the latest time and at a given time) and lookups/s
                 from 1 and 2 threads, idle and loaded with isolation's heavy load; beside, over
                 the same --local-keys keys: the network peek, Redis GET over loopback (needs
                 redis-server), LMDB mdb_get in-process (needs tandem-bench built with LMDB:
                 liblmdb-dev) and the raw TCP loopback round trip between two threads
  replicas       peeks/s and latency of point lookups through one controller in front of 1, 2
                 and 3 two-runtime replicas with the same index (controller::ReplicaSet, DESIGN
                 §13), closed loop with 8 peeks in flight: every peek to every replica, the first
                 answer taken ("all"), and each peek to one replica round-robin ("spread"), with
                 how busy the machine was
  sql            SELECT v FROM t WHERE k = <key> through tandem-frontend (found beside
                 tandem-bench, or --frontend; it runs its local replica, and peeks t's primary-key
                 index, read in place), closed loop from one libpq client over the simple protocol,
                 prepared (frontend_prepared: the extended protocol, the key a parameter) and with
                 the in-place read off (frontend_remote: the peek through the replica); beside it, in
                 the same run over the same --sql-keys rows (loaded through SQL, INSERT ... VALUES
                 of 1,000 rows): the same lookup as `tandem-ctl peek` (a Peek of that index from
                 an observer session on that replica) and PostgreSQL 15's own point SELECT on a
                 private server, simple and prepared (skipped with a note where PostgreSQL 15 is
                 not installed);
                 --sql-rounds alternating rounds, ratio cells frontend/peek,
                 frontend/frontend_remote, frontend/postgres and frontend_prepared/postgres_prepared
                 (--curve does not reach it: the frontend's replica runs without CURVE)
  all            every scenario above, in that order
  hydration      (not in all) time from CreateDataflow to the first readable time of an index
                 of a key_value source's snapshot, 10^6 and 10^7 keys (--hydration-max-keys), for
                 each --workers count, and the maintenance runtime's peak memory (RssAnon +
                 segment used, sampled every 5 ms) while it builds against the settled size

Options:
  --duration S         measured seconds per cell (default 10); cells keep going until
                       --min-samples (at most --max-factor times longer)
  --warmup S           seconds discarded before each cell (default 1)
  --min-samples N      (default 10000)
  --max-factor F       (default 15)
  --json               print one JSON object: scenario -> cell -> metric
  --csv FILE           also write scenario,cell,metric,value rows
  --plot FILE.png      isolation: CDF plot of the four cells (gnuplot; also FILE.dat, FILE.gp)
  --workers N[,N..]    worker threads per runtime (default 1); ingest and hydration run their
                       cells for each count, every other scenario uses the first
  --supervisor PATH    (default: tandem-supervisor beside tandem-bench)
  --name NAME          replicas are NAMEx0, NAMEx1, ... with segments tandem.bench.NAMEx<n>
                       (default bench<pid>)
  --shm-size SIZE      per replica (default 512MiB)
  --keys N             point-lookup index size (default 100000)
  --light-updates N    updates per 1 ms tick on the point-lookup index (default 10)
  --heavy-keys N --heavy-updates N --heavy-tick-us N --groups N
                       isolation's heavy load (default 100000 keys, 2000 updates per tick, tick
                       0 us = as fast as possible, reduce grouped by key % 16)
  --min-keys N --max-keys N   lookup-scale range (default 10^4 .. 10^6; for 10^7 pass
                       --max-keys 1e7: ~4 GiB of /dev/shm and minutes of build)
  --ingest-keys N --ingest-updates N   (default 10^6 keys, 10000 updates per tick)
  --memory-keys N --memory-updates N   (default 10^5 keys, 200 updates per 1 ms tick)
  --hydration-keys N[,N..]   hydration's index sizes (default 1000000,10000000; 10^7 sizes the
                       segment at ~4 GiB of /dev/shm)
  --hydration-max-keys N     leaves out the hydration sizes above N (1e6: a quick run)
  --slow-keys N[,N..]  slow-path index sizes (default 100000,1000000)
  --slow-samples N     slow-path queries per cell at least (default 1000; the cell still stops
                       after --max-factor durations)
  --slow-groups N      slow-path groups (default 100)
  --slow-plan P        arranged (default: the index is on a view (g, key, value) keyed by g, the
                       query reduces the imported index by its key) or mapped (the index is keyed
                       by key, the query maps g and reduces by it: the reduce arranges its input)
  --join-fact-keys N --join-fact-updates N   join's fact stream (default 10^6 keys, 10000
                       updates per tick, as fast as possible)
  --join-dim-keys N --join-dim-updates N     join's dimension (default 10^4 keys, 100 updates
                       per tick); the foreign key is fact key % dim keys
  --join-part P        all (default) | throughput | isolation
  --join-rounds N      throughput rounds per variant, in ABBA order, a fresh replica each
                       (default 3; each cell reports the medians over the rounds)
  --write-rounds N     write: rounds, a fresh replica and fresh redis-servers each (default 3;
                       each cell reports the medians over the rounds, and the min and max rows/s)
  --write-window N     write: writes (or Redis commands) in flight per client (default 16)
  --write-keys N       write: the keys rows are drawn from (default 100000)
  --write-clients N    write: the many-clients count (default 8)
  --write-part P       write: all (default) | tandem | redis (the Redis cells and the floor only)
  --subscribers N      subscribe: the many-subscribers count (default 100)
  --subscribe-threads N   subscribe: client threads the sessions share (default 4)
  --watch-us N         subscribe: the publication watcher's poll interval (default 100 µs)
  --subscribe-updates N --subscribe-tick-us N   subscribe: the subscribed index's source
                       (default 10 updates per 10,000 us tick on --keys keys)
  --subscribe-mode M   subscribe: all (default) | solo | two-runtime
  --subscribe-rounds N subscribe: loaded rounds of (N subscribers, N observers, no session), the
                       cost the median of the rounds' (default 3)
  --local-keys N       local: the index's keys, and Redis's and LMDB's (default 10^6)
  --local-part P       local: all (default) | tandem (the replica's cells) | peers (LMDB, Redis,
                       the TCP floor)
  --sql-keys N         sql: the table's rows (default 100000)
  --sql-rounds N       sql: alternating rounds the cells are measured in (default 6)
  --frontend PATH      sql: the tandem-frontend binary (default: beside tandem-bench)
  --curve              every replica requires CURVE (tandem-supervisor --curve-secret-key) and
                       every client authenticates: keys made fresh for the run, in a scratch
                       directory removed at the end (the curve scenario does this for its own
                       CURVE replica either way)
  --quiet              no progress on stderr
)";

std::uint64_t ParseUint(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);  // accepts 1e6
  if (errno != 0 || end == v.c_str() || *end != '\0' || d < 0) {
    throw std::invalid_argument(flag + ": not a non-negative number: " + v);
  }
  return static_cast<std::uint64_t>(d);
}

// A comma-separated list of numbers (ParseUint each), each clamped to [lo, hi]; at least one.
std::vector<std::uint64_t> ParseUintList(const std::string& flag, const std::string& v,
                                         std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> out;
  std::string item;
  for (std::stringstream in(v); std::getline(in, item, ',');) {
    out.push_back(std::clamp<std::uint64_t>(ParseUint(flag, item), lo, hi));
  }
  if (out.empty()) throw std::invalid_argument(flag + ": no values");
  return out;
}

double ParseDouble(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(d >= 0)) {
    throw std::invalid_argument(flag + ": not a non-negative number: " + v);
  }
  return d;
}

// One branch per flag, in kUsage's order: long, but a table to read down, not logic.
Options Parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--duration") {
      o.duration = ParseDouble(a, value());
    } else if (a == "--warmup") {
      o.warmup = ParseDouble(a, value());
    } else if (a == "--min-samples") {
      o.min_samples = ParseUint(a, value());
    } else if (a == "--max-factor") {
      o.max_factor = std::max(1.0, ParseDouble(a, value()));
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--curve") {
      o.curve = true;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--plot") {
      o.plot = value();
    } else if (a == "--workers") {
      o.worker_counts.clear();
      for (std::uint64_t n : ParseUintList(a, value(), 1, 64)) {
        o.worker_counts.push_back(static_cast<int>(n));
      }
      o.workers = o.worker_counts.front();
    } else if (a == "--supervisor") {
      o.supervisor = value();
    } else if (a == "--name") {
      o.name = value();
      if (o.name.empty() || o.name.find_first_of("/ ") != std::string::npos) {
        throw std::invalid_argument("--name: a non-empty name without '/' or spaces");
      }
    } else if (a == "--shm-size") {
      o.shm_size = value();
      o.shm_size_set = true;
    } else if (a == "--keys") {
      o.keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--light-updates") {
      o.light_updates = ParseUint(a, value());
    } else if (a == "--heavy-keys") {
      o.heavy_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--heavy-updates") {
      o.heavy_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--heavy-tick-us") {
      o.heavy_tick_us = ParseUint(a, value());
    } else if (a == "--groups") {
      o.groups = static_cast<std::int64_t>(std::max<std::uint64_t>(1, ParseUint(a, value())));
    } else if (a == "--min-keys") {
      o.min_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--max-keys") {
      o.max_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--ingest-keys") {
      o.ingest_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--ingest-updates") {
      o.ingest_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--hydration-keys") {
      o.hydration_keys = ParseUintList(a, value(), 1, UINT64_MAX);
    } else if (a == "--hydration-max-keys") {
      o.hydration_max_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--memory-keys") {
      o.memory_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--memory-updates") {
      o.memory_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--slow-keys") {
      o.slow_keys = ParseUintList(a, value(), 1, UINT64_MAX);
    } else if (a == "--slow-samples") {
      o.slow_samples = ParseUint(a, value());
    } else if (a == "--slow-groups") {
      o.slow_groups = static_cast<std::int64_t>(std::max<std::uint64_t>(1, ParseUint(a, value())));
    } else if (a == "--slow-plan") {
      const std::string plan = value();
      if (plan != "arranged" && plan != "mapped") {
        throw std::invalid_argument("--slow-plan: arranged or mapped, not " + plan);
      }
      o.slow_arranged = plan == "arranged";
    } else if (a == "--join-fact-keys") {
      o.join_fact_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--join-fact-updates") {
      o.join_fact_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--join-dim-keys") {
      o.join_dim_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--join-dim-updates") {
      o.join_dim_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--join-rounds") {
      o.join_rounds = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--join-part") {
      o.join_part = value();
      if (o.join_part != "all" && o.join_part != "throughput" && o.join_part != "isolation") {
        throw std::invalid_argument("--join-part: all, throughput or isolation, not " +
                                    o.join_part);
      }
    } else if (a == "--write-rounds") {
      o.write_rounds = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--write-window") {
      o.write_window = std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 1000);
    } else if (a == "--write-keys") {
      o.write_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--write-clients") {
      o.write_clients = std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 64);
    } else if (a == "--write-part") {
      o.write_part = value();
      if (o.write_part != "all" && o.write_part != "tandem" && o.write_part != "redis") {
        throw std::invalid_argument("--write-part: all, tandem or redis, not " + o.write_part);
      }
    } else if (a == "--subscribers") {
      o.subscribers = std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 1000);
    } else if (a == "--subscribe-threads") {
      o.subscribe_threads = std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 64);
    } else if (a == "--subscribe-updates") {
      o.subscribe_updates = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--subscribe-tick-us") {
      o.subscribe_tick_us = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--subscribe-mode") {
      o.subscribe_mode = value();
      if (o.subscribe_mode != "all" && o.subscribe_mode != "solo" &&
          o.subscribe_mode != "two-runtime") {
        throw std::invalid_argument("--subscribe-mode: all, solo or two-runtime, not " +
                                    o.subscribe_mode);
      }
    } else if (a == "--subscribe-rounds") {
      o.subscribe_rounds = std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 100);
    } else if (a == "--watch-us") {
      o.watch_us = std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 100000);
    } else if (a == "--local-keys") {
      o.local_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--local-part") {
      o.local_part = value();
      if (o.local_part != "all" && o.local_part != "tandem" && o.local_part != "peers") {
        throw std::invalid_argument("--local-part: all, tandem or peers, not " + o.local_part);
      }
    } else if (a == "--sql-keys") {
      o.sql_keys = std::max<std::uint64_t>(1, ParseUint(a, value()));
    } else if (a == "--sql-rounds") {
      o.sql_rounds = std::clamp<std::uint64_t>(ParseUint(a, value()), 1, 100);
    } else if (a == "--frontend") {
      o.frontend = value();
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown option " + a);
    } else if (o.scenario.empty()) {
      o.scenario = a;
    } else {
      throw std::invalid_argument("unexpected argument " + a);
    }
  }
  static const std::vector<std::string> kScenarios = {
      "isolation", "lookup-scale", "ingest", "memory",   "redis",     "curve",
      "peek-path", "slow-path",    "join",   "write",    "subscribe", "local",
      "replicas",  "sql",          "all",    "hydration"};
  if (o.scenario.empty()) throw std::invalid_argument("no scenario given");
  if (std::find(kScenarios.begin(), kScenarios.end(), o.scenario) == kScenarios.end()) {
    throw std::invalid_argument("unknown scenario " + o.scenario);
  }
  if (o.supervisor.empty()) o.supervisor = SelfDir() + "/tandem-supervisor";
  if (access(o.supervisor.c_str(), X_OK) != 0) {
    throw std::invalid_argument("no tandem-supervisor at " + o.supervisor + " (use --supervisor)");
  }
  if (o.frontend.empty()) o.frontend = SelfDir() + "/tandem-frontend";
  if ((o.scenario == "sql" || o.scenario == "all") && access(o.frontend.c_str(), X_OK) != 0) {
    throw std::invalid_argument("no tandem-frontend at " + o.frontend + " (use --frontend)");
  }
  if (o.min_keys > o.max_keys) throw std::invalid_argument("--min-keys above --max-keys");
  return o;
}

int Main(int argc, char** argv) {
  Options o;
  try {
    o = Parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tandem-bench: %s\n\n%s", e.what(), kUsage);
    return 64;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR and we unwind
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (o.curve || o.scenario == "curve" || o.scenario == "all") {
    try {
      o.curve_keys = std::make_shared<const CurveMaterial>();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tandem-bench: %s\n", e.what());
      return 1;
    }
  }
  std::vector<Scenario> results;
  std::map<std::string, std::vector<double>> distributions;
  const bool all = o.scenario == "all";
  try {
    if (all || o.scenario == "isolation") results.push_back(Isolation(o, distributions));
    if (all || o.scenario == "lookup-scale") results.push_back(LookupScale(o));
    if (all || o.scenario == "ingest") results.push_back(Ingest(o));
    if (all || o.scenario == "memory") results.push_back(Memory(o));
    if (all || o.scenario == "redis") results.push_back(RedisScenario(o));
    if (all || o.scenario == "curve") results.push_back(CurveScenario(o));
    if (all || o.scenario == "peek-path") results.push_back(PeekPathScenario(o));
    if (all || o.scenario == "slow-path") results.push_back(SlowPath(o));
    if (all || o.scenario == "join") {
      for (Scenario& s : Join(o)) results.push_back(std::move(s));
    }
    if (all || o.scenario == "write") results.push_back(WriteScenario(o));
    if (all || o.scenario == "subscribe") results.push_back(SubscribeScenario(o));
    if (all || o.scenario == "local") results.push_back(LocalScenario(o));
    if (all || o.scenario == "replicas") results.push_back(ReplicasScenario(o));
    if (all || o.scenario == "sql") results.push_back(SqlScenario(o));
    if (o.scenario == "hydration") results.push_back(Hydration(o));  // not in all: GiBs at 10^7
  } catch (const Interrupted&) {
    std::fprintf(stderr, "tandem-bench: interrupted; everything it started is stopped\n");
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-bench: %s\n", e.what());
    return 1;
  }
  if (o.json) {
    std::printf("%s\n", Json(results).c_str());
    for (const auto& s : results) {
      for (const auto& n : s.notes) std::fprintf(stderr, "%s: %s\n", s.name.c_str(), n.c_str());
    }
  } else {
    PrintTable(results);
  }
  if (!o.csv.empty()) WriteCsv(o.csv, results);
  if (!o.plot.empty() && !distributions.empty()) Plot(o.plot, distributions);
  return 0;
}

}  // namespace
}  // namespace tandem::bench

int main(int argc, char** argv) { return tandem::bench::Main(argc, argv); }
