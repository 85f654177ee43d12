// tandem-bench sql: a SELECT by key through tandem-frontend (DESIGN §15) — pgwire, parsing,
// planning, the peek of the table's primary-key index read in place from the local replica's
// segment — in three ways (frontend: the simple protocol; frontend_prepared: prepared once, then
// Bind/Describe/Execute/Sync with the key as a parameter; frontend_remote: the simple protocol with
// the in-place read off, the peek through the replica driver over ZeroMQ) — beside, in the same
// run and over the same rows:
//   * peek      the same lookup as `tandem-ctl peek` makes it: a Peek of the index the frontend
//               planned (EXPLAIN names it) from an observer session on the frontend's local
//               replica's controller endpoint, at the index's latest complete time (its write
//               frontier − 1, from the Frontiers the session receives);
//   * postgres  PostgreSQL 15's own point SELECT (a primary-key index scan) on a private server
//               (postgres_peer.h), when one can be started here; postgres_prepared the same
//               prepared once, as frontend_prepared.
// The frontend and PostgreSQL get the same table, CREATE TABLE t (k bigint PRIMARY KEY, v text),
// and the same rows, loaded through SQL as INSERT … VALUES of kSqlInsertBatch rows each
// (--sql-keys rows, k = 0 .. N−1, v from k); a sample of the SQL cells is the client's round trip
// of one PQexec("SELECT v FROM t WHERE k = <key>") over loopback TCP (simple protocol, the key
// inlined, one client, closed loop, keys uniform), every answer checked (one row holding the
// loaded v; `misses` counts the others; a peek must answer one row). The cells run in
// --sql-rounds alternating rounds (the order rotated each round and reversed every other), so the
// machine's drift weighs on all alike; the ratio cells (frontend/peek, frontend/frontend_remote,
// frontend/postgres, frontend_prepared/postgres_prepared) hold the ratios of the whole runs'
// percentiles and the medians of the per-round ones.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>

#include "tools/bench/client.h"
#include "tools/bench/frontend.h"
#include "tools/bench/measure.h"
#include "tools/bench/pq.h"
#include "tools/bench/scenarios/scenarios.h"

#ifdef TANDEM_BENCH_POSTGRES
#include "tools/bench/postgres_peer.h"
#endif

namespace tandem::bench {
namespace {

constexpr std::uint64_t kSqlInsertBatch = 1000;
constexpr char kSqlCreateTable[] = "CREATE TABLE t (k bigint PRIMARY KEY, v text)";

// The value loaded for key k: text that differs from key to key.
std::string SqlValueOf(std::uint64_t k) { return "v" + std::to_string(k * 2654435761u % 1000003); }

std::string SqlSelectByKey(std::uint64_t k) {
  return "SELECT v FROM t WHERE k = " + std::to_string(k);
}
constexpr char kSqlSelectPrepared[] = "SELECT v FROM t WHERE k = $1";

// A lookup through statement "by_key" (kSqlSelectPrepared) prepared on `pq`.
std::function<bool(std::uint64_t)> SqlPreparedLookup(Pq& pq) {
  return [&pq](std::uint64_t k) {
    std::string v;
    return pq.LookupPrepared("by_key", std::to_string(k), &v) == 1 && v == SqlValueOf(k);
  };
}

// The INSERT … VALUES statements that load keys 0 .. keys−1, kSqlInsertBatch rows each.
std::vector<std::string> SqlInserts(std::uint64_t keys) {
  std::vector<std::string> out;
  for (std::uint64_t k = 0; k < keys;) {
    std::string sql = "INSERT INTO t VALUES ";
    for (std::uint64_t i = 0; i < kSqlInsertBatch && k < keys; ++i, ++k) {
      sql += (i == 0 ? "(" : ", (") + std::to_string(k) + ", '" + SqlValueOf(k) + "')";
    }
    out.push_back(std::move(sql));
  }
  return out;
}

// Runs `inserts` through `pq`; the rows loaded per second.
double SqlLoad(Pq& pq, const std::vector<std::string>& inserts, std::uint64_t keys) {
  const auto t0 = Clock::now();
  for (const std::string& sql : inserts) {
    CheckStop();
    pq.Query(sql);
  }
  return static_cast<double>(keys) / std::max(1e-9, Seconds(Clock::now() - t0));
}

// Throws unless `pq` counts `keys` rows in t: the load is complete before anything is measured.
void SqlExpectCount(Pq& pq, std::uint64_t keys, const std::string& who) {
  const auto rows = pq.Query("SELECT count(*) FROM t");
  if (rows.size() != 1 || rows[0].empty() || rows[0][0] != std::to_string(keys)) {
    throw std::runtime_error("sql: " + who + " counts " +
                             (rows.empty() || rows[0].empty() ? "nothing" : rows[0][0]) +
                             " rows in t after loading " + std::to_string(keys));
  }
}

// CREATE TABLE on the frontend, retried while its replica is still starting (a DDL statement
// waits for one, up to its statement timeout, then fails).
void SqlCreateOnFrontend(Pq& pq, Frontend& frontend) {
  const auto deadline = Clock::now() + 120s;
  for (;;) {
    frontend.CheckAlive();
    try {
      pq.Query(kSqlCreateTable);
      return;
    } catch (const std::runtime_error& e) {
      if (Clock::now() > deadline) {
        throw std::runtime_error(std::string("sql: the frontend did not create t: ") + e.what() +
                                 "\n" + frontend.Log());
      }
    }
    Sleep(200ms);
  }
}

// The index the frontend peeks for a SELECT by key of t, from EXPLAIN's first line
// "Peek of index <id> on t (1 key lookups)"; throws when the plan is not a peek.
std::string SqlPlannedIndex(Pq& pq) {
  const auto rows = pq.Query("EXPLAIN " + SqlSelectByKey(0));
  const std::string prefix = "Peek of index ";
  std::string plan;
  for (const auto& row : rows) plan += (row.empty() ? "" : row[0]) + "\n";
  if (rows.empty() || rows[0].empty() || rows[0][0].rfind(prefix, 0) != 0) {
    throw std::runtime_error("sql: the frontend does not answer a SELECT by key with a peek:\n" +
                             plan);
  }
  const std::string& line = rows[0][0];
  return line.substr(prefix.size(), line.find(' ', prefix.size()) - prefix.size());
}

// `tandem-ctl peek`'s lookup of one key, from an observer session (it sends only Peek: the
// frontend is the replica's controller and compacts its indexes itself).
class ObserverPeek {
 public:
  ObserverPeek(const std::string& endpoint, const std::string& index)
      : client_(endpoint, std::nullopt, /*observer=*/true), index_(index) {
    // Frontiers keep coming while the other cells run: taken off the connection, never a stall.
    client_.UnboundedReceiveQueue();
    pb::Peek* p = command_.mutable_peek();
    p->set_id(index);
    key_ = p->add_keys()->add_datums();
  }

  // Waits until the replica reported a complete time of the index.
  void WaitReadable(Frontend& frontend, std::chrono::seconds limit) {
    const auto deadline = Clock::now() + limit;
    while (client_.Write(index_) < 2) {
      frontend.CheckAlive();
      if (Clock::now() > deadline) {
        throw std::runtime_error("sql: the replica reported no complete time of index " + index_ +
                                 " within " + std::to_string(limit.count()) + " s");
      }
      client_.Receive(50ms);
    }
  }

  // Takes in what arrived while the session was not read (the other cells' turns), so the next
  // peek reads at the latest complete time — not at one the frontend compacted meanwhile.
  void CatchUp() {
    while (client_.Receive(0ms)) {
    }
  }

  // True when the peek answered exactly one row.
  bool Lookup(std::uint64_t key) {
    pb::Peek* p = command_.mutable_peek();
    const std::string uuid = std::to_string(++sent_);
    p->set_uuid(uuid);
    p->set_timestamp(client_.Write(index_) - 1);
    key_->set_int64(static_cast<std::int64_t>(key));
    client_.Send(command_);
    for (;;) {
      const std::optional<pb::Response> r = client_.Receive(10s);
      if (!r) throw std::runtime_error("sql: no PeekResponse within 10 s");
      if (!r->has_peek_response() || r->peek_response().uuid() != uuid) continue;
      if (r->peek_response().has_error()) {
        throw std::runtime_error("sql: peek failed: " + r->peek_response().error());
      }
      return r->peek_response().rows().rows_size() == 1;
    }
  }

 private:
  Client client_;
  std::string index_;
  pb::Command command_;
  pb::Datum* key_ = nullptr;
  std::uint64_t sent_ = 0;
};

// One measured system: its lookup, and what its rounds gathered.
struct SqlTarget {
  std::string name;
  std::function<bool(std::uint64_t)> lookup;  // true: the expected answer
  std::function<void()> before_round;         // may be empty
  bool replica_peeks = false;                 // its lookups are peeks of the frontend's replica
  double load_rows_per_s = 0;                 // the SQL systems': how fast t was loaded
  std::vector<double> us;
  std::vector<double> round_p50, round_p99;
  std::size_t misses = 0;
  double busy_seconds = 0, wall_seconds = 0;        // the machine, over its windows
  double supervisor_sum = 0, supervisor_count = 0;  // tandem_peek_latency_seconds
};

std::pair<double, double> SqlSupervisorPeeks(const Frontend& frontend) {
  const std::string text = frontend.ReplicaMetrics();
  return {tools::MetricValue(text, "tandem_peek_latency_seconds_sum"),
          tools::MetricValue(text, "tandem_peek_latency_seconds_count")};
}

// Runs every target in `rounds` alternating rounds of `o`'s window split over them.
void SqlRounds(const Options& o, int rounds, std::vector<SqlTarget>& targets, Frontend& frontend) {
  const Options round = RoundOptions(o, rounds);
  std::uniform_int_distribution<std::uint64_t> pick(0, o.sql_keys - 1);
  std::vector<std::size_t> order(targets.size());
  for (int i = 0; i < rounds; ++i) {
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = (k + i) % order.size();
    if (i % 2 == 1) std::reverse(order.begin(), order.end());
    for (std::size_t which : order) {
      SqlTarget& t = targets[which];
      Progress(o, "sql: measuring %s\n", t.name + ", round " + std::to_string(i + 1));
      frontend.CheckAlive();
      if (t.before_round) t.before_round();
      const auto metrics_before = SqlSupervisorPeeks(frontend);
      const double busy_before = MachineBusySeconds();
      const auto from = Clock::now();
      std::mt19937_64 rng(1000 * static_cast<std::uint64_t>(i) + which);
      std::vector<double> us = ClosedLoop(round, [&] {
        if (!t.lookup(pick(rng))) ++t.misses;
      });
      t.wall_seconds += Seconds(Clock::now() - from);
      t.busy_seconds += MachineBusySeconds() - busy_before;
      if (t.replica_peeks) {
        const auto metrics_after = SqlSupervisorPeeks(frontend);
        t.supervisor_sum += metrics_after.first - metrics_before.first;
        t.supervisor_count += metrics_after.second - metrics_before.second;
      }
      t.us.insert(t.us.end(), us.begin(), us.end());
      std::sort(us.begin(), us.end());
      t.round_p50.push_back(Percentile(us, 0.50));
      t.round_p99.push_back(Percentile(us, 0.99));
    }
  }
}

Cell SqlCell(const Options& o, SqlTarget& t) {
  Cell cell{.name = t.name};
  cell.Set("keys", static_cast<double>(o.sql_keys));
  AddLatencies(cell, t.us);
  cell.Set("misses", static_cast<double>(t.misses));
  if (t.load_rows_per_s > 0) cell.Set("load_rows_per_s", t.load_rows_per_s);
  if (t.replica_peeks && t.supervisor_count > 0) {
    cell.Set("supervisor_peek_mean_us", 1e6 * t.supervisor_sum / t.supervisor_count);
  }
  const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  cell.Set("machine_busy", t.wall_seconds > 0 ? t.busy_seconds / (t.wall_seconds * cpus) : 0);
  return cell;
}

// "a/b": the ratios of a's percentiles to b's over the whole runs, and the medians over the rounds
// of each round's ratio (which resist the machine's drift); and the note that says so.
Cell SqlRatio(const SqlTarget& a, const Cell& a_cell, const SqlTarget& b, const Cell& b_cell,
              int rounds, std::vector<std::string>* notes) {
  Cell ratio{.name = a.name + "/" + b.name};
  for (const std::string m : {"p50_us", "p90_us", "p99_us", "mean_us"}) {
    ratio.Set(m.substr(0, m.size() - 3) + "_ratio", a_cell.Get(m) / std::max(1e-9, b_cell.Get(m)));
  }
  auto median_ratio = [](const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> r;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      r.push_back(x[i] / std::max(1e-9, y[i]));
    }
    return Median(r);
  };
  ratio.Set("p50_ratio_median_of_rounds", median_ratio(a.round_p50, b.round_p50));
  ratio.Set("p99_ratio_median_of_rounds", median_ratio(a.round_p99, b.round_p99));
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s / %s point lookup: p50 %.2fx (%.0f vs %.0f us), p99 %.2fx (%.0f vs %.0f us); "
                "median over %d interleaved rounds of the per-round ratio: p50 %.2fx, p99 %.2fx",
                a.name.c_str(), b.name.c_str(), ratio.Get("p50_ratio"), a_cell.Get("p50_us"),
                b_cell.Get("p50_us"), ratio.Get("p99_ratio"), a_cell.Get("p99_us"),
                b_cell.Get("p99_us"), rounds, ratio.Get("p50_ratio_median_of_rounds"),
                ratio.Get("p99_ratio_median_of_rounds"));
  notes->push_back(buf);
  return ratio;
}

}  // namespace

Scenario SqlScenario(const Options& o) {
  Scenario s{.name = "sql"};
  const int rounds = static_cast<int>(o.sql_rounds);
  const std::vector<std::string> inserts = SqlInserts(o.sql_keys);

  Progress(o, "sql: %s\n", "starting tandem-frontend with its local replica");
  Frontend frontend(o);
  frontend.WaitListening();
  Pq frontend_sql(frontend.conninfo());
  SqlCreateOnFrontend(frontend_sql, frontend);
  Progress(o, "sql: %s\n", "loading t through the frontend");
  std::vector<SqlTarget> targets;
  targets.push_back({.name = "frontend"});  // read in place: not the replica's peeks
  targets.back().load_rows_per_s = SqlLoad(frontend_sql, inserts, o.sql_keys);
  SqlExpectCount(frontend_sql, o.sql_keys, "the frontend");  // reads its own writes
  const std::string index = SqlPlannedIndex(frontend_sql);
  targets.back().lookup = [&frontend_sql](std::uint64_t k) {
    std::string v;
    return frontend_sql.Lookup(SqlSelectByKey(k), &v) == 1 && v == SqlValueOf(k);
  };
  // The same through the extended protocol, prepared once; and the simple one with the in-place
  // read off (through the replica over ZeroMQ, as a remote replica is read).
  Pq frontend_prepared(frontend.conninfo());
  frontend_prepared.Prepare("by_key", kSqlSelectPrepared);
  targets.push_back({.name = "frontend_prepared", .lookup = SqlPreparedLookup(frontend_prepared)});
  Pq frontend_remote(frontend.conninfo());
  frontend_remote.Query("SET tandem_local_reads = off");
  targets.push_back({.name = "frontend_remote",
                     .lookup =
                         [&frontend_remote](std::uint64_t k) {
                           std::string v;
                           return frontend_remote.Lookup(SqlSelectByKey(k), &v) == 1 &&
                                  v == SqlValueOf(k);
                         },
                     .replica_peeks = true});

  ObserverPeek peek(frontend.replica_endpoint(), index);
  peek.WaitReadable(frontend, 60s);
  targets.push_back({.name = "peek",
                     .lookup = [&peek](std::uint64_t k) { return peek.Lookup(k); },
                     .before_round = [&peek] { peek.CatchUp(); },
                     .replica_peeks = true});

  // PostgreSQL, when it can run here.
  std::optional<std::string> no_postgres;
#ifdef TANDEM_BENCH_POSTGRES
  no_postgres = PostgresPeer::Unavailable();
  // Not in the emergency registry: its parent-death signal takes it down with tandem-bench.
  std::optional<PostgresPeer> postgres;
  std::optional<Pq> postgres_sql;  // closed before the server stops
  std::optional<Pq> postgres_prepared;
  if (!no_postgres) {
    Progress(o, "sql: %s\n", "starting PostgreSQL and loading t");
    postgres.emplace();
    postgres_sql.emplace(postgres->conninfo());
    postgres_sql->Query(kSqlCreateTable);
    targets.push_back({.name = "postgres"});
    targets.back().load_rows_per_s = SqlLoad(*postgres_sql, inserts, o.sql_keys);
    postgres_sql->Query("ANALYZE t");
    SqlExpectCount(*postgres_sql, o.sql_keys, "PostgreSQL");
    targets.back().lookup = [&postgres_sql](std::uint64_t k) {
      std::string v;
      return postgres_sql->Lookup(SqlSelectByKey(k), &v) == 1 && v == SqlValueOf(k);
    };
    postgres_prepared.emplace(postgres->conninfo());
    postgres_prepared->Prepare("by_key", kSqlSelectPrepared);
    targets.push_back(
        {.name = "postgres_prepared", .lookup = SqlPreparedLookup(*postgres_prepared)});
  }
#else
  no_postgres =
      "tandem-bench was built without the tests (BUILD_TESTING off), whose PostgresServer starts "
      "it";
#endif

  SqlRounds(o, rounds, targets, frontend);
  std::vector<Cell> cells;
  for (SqlTarget& t : targets) cells.push_back(SqlCell(o, t));
  s.cells = cells;
  auto ratio = [&](const std::string& a, const std::string& b) {
    std::optional<std::size_t> x, y;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (targets[i].name == a) x = i;
      if (targets[i].name == b) y = i;
    }
    if (x && y) {
      s.cells.push_back(SqlRatio(targets[*x], cells[*x], targets[*y], cells[*y], rounds, &s.notes));
    }
  };
  ratio("frontend", "peek");
  ratio("frontend", "frontend_remote");
  ratio("frontend", "postgres");
  ratio("frontend_prepared", "postgres_prepared");
  if (no_postgres) s.notes.push_back("skipped PostgreSQL: " + *no_postgres);
  s.notes.push_back("frontend: SELECT v FROM t WHERE k = <key> through tandem-frontend (index " +
                    index + ", a peek of its local replica); peek: a Peek of " + index +
                    " from an observer session on that replica, as tandem-ctl peek");
  return s;
}

}  // namespace tandem::bench
