// tandem-bench (issue #6), smoke: every scenario runs for about 1 s with tiny sizes against real
// replicas and prints the documented JSON (scenario -> cell -> metric). Only checks that the
// numbers are present and sane — never a timing threshold. Labelled bench.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "run_binary.h"

namespace tandem::testing {
namespace {

// scenario -> cell -> metric -> value: the whole of tandem-bench's --json output.
using Metrics = std::map<std::string, double>;
using Cells = std::map<std::string, Metrics>;
using Report = std::map<std::string, Cells>;

// A parser for exactly that shape (objects of objects of objects of numbers); false otherwise.
class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  bool Parse(Report& out) {
    const bool ok = Object([&](const std::string& scenario) {
      Cells& cells = out[scenario];
      return Object([&](const std::string& cell) {
        Metrics& metrics = cells[cell];
        return Object([&](const std::string& metric) { return Number(metrics[metric]); });
      });
    });
    Skip();
    return ok && i_ == s_.size();
  }

 private:
  template <typename F>
  bool Object(F member) {
    Skip();
    if (!Eat('{')) return false;
    Skip();
    if (Eat('}')) return true;
    for (;;) {
      std::string key;
      if (!String(key)) return false;
      Skip();
      if (!Eat(':')) return false;
      if (!member(key)) return false;
      Skip();
      if (Eat('}')) return true;
      if (!Eat(',')) return false;
      Skip();
    }
  }
  bool String(std::string& out) {
    if (!Eat('"')) return false;
    while (i_ < s_.size() && s_[i_] != '"') out += s_[i_++];
    return Eat('"');
  }
  bool Number(double& out) {
    Skip();
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    out = std::strtod(begin, &end);
    if (end == begin) return false;
    i_ += static_cast<std::size_t>(end - begin);
    return true;
  }
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

// This test's replicas only: another tandem-bench may be running on the machine.
const std::string kName = "smoke" + std::to_string(getpid());

BinaryRun Bench(const std::vector<std::string>& scenario_args) {
  std::vector<std::string> args = scenario_args;
  for (const char* a : {"--json", "--quiet", "--duration", "1", "--warmup", "0.2", "--min-samples",
                        "0", "--shm-size", "64MiB"}) {
    args.emplace_back(a);
  }
  args.push_back("--name");
  args.push_back(kName);
  return RunBinary(TANDEM_BENCH_BIN, args, {.limit = std::chrono::seconds(120)});
}

Report ParseOrFail(const BinaryRun& run) {
  Report report;
  EXPECT_EQ(run.exit, 0) << run.err;
  EXPECT_TRUE(Parser(run.out).Parse(report)) << "not the documented JSON: " << run.out;
  return report;
}

void ExpectLatencies(const Metrics& m, const std::string& what) {
  for (const char* k : {"p50_us", "p90_us", "p99_us", "p999_us", "max_us", "samples"}) {
    ASSERT_TRUE(m.count(k)) << what << " lacks " << k;
  }
  EXPECT_GT(m.at("samples"), 10) << what;
  EXPECT_GT(m.at("p50_us"), 0) << what;
  EXPECT_LE(m.at("p50_us"), m.at("p90_us")) << what;
  EXPECT_LE(m.at("p90_us"), m.at("p99_us")) << what;
  EXPECT_LE(m.at("p99_us"), m.at("p999_us")) << what;
  EXPECT_LE(m.at("p999_us"), m.at("max_us")) << what;
  EXPECT_LT(m.at("max_us"), 60e6) << what;
  if (m.count("misses")) {
    EXPECT_EQ(m.at("misses"), 0) << what << ": a lookup found no row";
  }
}

// A scenario of AlternatingPeekCells (tools/bench/measure.h): the baseline's and the other's
// latencies, and their ratio cell "other/baseline".
void ExpectAlternatingPeeks(const Report& r, const std::string& scenario,
                            const std::string& baseline, const std::string& other) {
  ASSERT_TRUE(r.count(scenario));
  for (const std::string& cell : {baseline, other}) {
    ASSERT_TRUE(r.at(scenario).count(cell)) << cell;
    ExpectLatencies(r.at(scenario).at(cell), cell);
  }
  ASSERT_TRUE(r.at(scenario).count(other + "/" + baseline));
  EXPECT_GT(r.at(scenario).at(other + "/" + baseline).at("p50_ratio"), 0);
}

bool SegmentsLeft() {
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("tandem.bench." + kName + "x", 0) == 0) return true;
  }
  return false;
}

TEST(TandemBench, SmokeEveryScenario) {
  const auto tmp =
      std::filesystem::temp_directory_path() / ("tandem-bench-smoke-" + std::to_string(getpid()));
  std::filesystem::create_directories(tmp);
  const std::string png = (tmp / "isolation.png").string();
  const std::string csv = (tmp / "isolation.csv").string();

  {
    SCOPED_TRACE("isolation");
    const auto run = Bench({"isolation", "--keys", "2000", "--heavy-keys", "2000",
                            "--heavy-updates", "200", "--plot", png, "--csv", csv});
    const Report r = ParseOrFail(run);
    ASSERT_TRUE(r.count("isolation"));
    for (const char* cell :
         {"solo/idle", "solo/loaded", "two-runtime/idle", "two-runtime/loaded"}) {
      ASSERT_TRUE(r.at("isolation").count(cell)) << cell;
      const Metrics& m = r.at("isolation").at(cell);
      ExpectLatencies(m, cell);
      ASSERT_TRUE(m.count("updates_per_s")) << cell;
      if (std::string(cell).find("loaded") != std::string::npos) {
        EXPECT_GT(m.at("updates_per_s"), 0) << cell << ": the heavy dataflow made no progress";
      }
    }
    EXPECT_TRUE(std::filesystem::exists(tmp / "isolation.dat"));
    EXPECT_TRUE(std::filesystem::exists(tmp / "isolation.gp"));
    EXPECT_GT(std::filesystem::file_size(csv), 100u);
  }
  {
    SCOPED_TRACE("lookup-scale");
    const Report r =
        ParseOrFail(Bench({"lookup-scale", "--min-keys", "1000", "--max-keys", "10000"}));
    ASSERT_TRUE(r.count("lookup-scale"));
    ASSERT_EQ(r.at("lookup-scale").size(), 2u);
    for (const auto& [cell, m] : r.at("lookup-scale")) ExpectLatencies(m, cell);
  }
  {
    SCOPED_TRACE("ingest");
    const Report r =
        ParseOrFail(Bench({"ingest", "--ingest-keys", "10000", "--ingest-updates", "500",
                           "--workers", "1,2", "--join-fact-keys", "10000", "--join-fact-updates",
                           "200", "--join-dim-keys", "100", "--join-dim-updates", "10"}));
    ASSERT_TRUE(r.count("ingest"));
    for (const char* cell :
         {"index/w1", "reduce/w1", "join/w1", "index/w2", "reduce/w2", "join/w2"}) {
      ASSERT_TRUE(r.at("ingest").count(cell)) << cell;
      const Metrics& m = r.at("ingest").at(cell);
      EXPECT_GT(m.at("updates_per_s"), 0) << cell;
      EXPECT_GT(m.at("updates_per_s_per_worker"), 0) << cell;
      EXPECT_GT(m.at("speedup"), 0) << cell;
      // Every worker's fractions of the window, from the runtime's step statistics.
      for (int w = 0; w < static_cast<int>(m.at("workers")); ++w) {
        const std::string i = std::to_string(w);
        EXPECT_GT(m.at("busy_frac_w" + i), 0) << cell << " worker " << i;
        EXPECT_LE(m.at("busy_frac_w" + i), 1.05) << cell << " worker " << i;
        EXPECT_GE(m.at("waiting_frac_w" + i), 0) << cell << " worker " << i;
        EXPECT_GT(m.at("steps_per_s_w" + i), 0) << cell << " worker " << i;
      }
    }
    EXPECT_EQ(r.at("ingest").at("index/w1").at("speedup"), 1);
  }
  {
    SCOPED_TRACE("hydration");
    const Report r = ParseOrFail(Bench({"hydration", "--hydration-keys", "20000"}));
    ASSERT_TRUE(r.count("hydration") && r.at("hydration").count("keys=20000/w1"));
    const Metrics& m = r.at("hydration").at("keys=20000/w1");
    EXPECT_GT(m.at("hydration_s"), 0);
    EXPECT_GT(m.at("samples"), 0);
    EXPECT_GT(m.at("settled_bytes"), 0);
    EXPECT_GE(m.at("peak_bytes"), m.at("settled_bytes"));
    EXPECT_GE(m.at("peak_over_settled"), 1);
  }
  {
    SCOPED_TRACE("memory");
    const Report r =
        ParseOrFail(Bench({"memory", "--memory-keys", "5000", "--memory-updates", "50"}));
    ASSERT_TRUE(r.count("memory") && r.at("memory").count("churn"));
    const Metrics& m = r.at("memory").at("churn");
    EXPECT_GE(m.at("samples"), 3);
    EXPECT_GT(m.at("bytes_last_third"), 0);
    EXPECT_GT(m.at("bytes_per_live_update"), 0);
    EXPECT_TRUE(m.count("trend_bytes_per_s"));
    EXPECT_GT(m.at("updates_per_s"), 0);
  }
  {
    SCOPED_TRACE("redis");
    const auto run = Bench({"redis", "--keys", "1000"});
    const Report r = ParseOrFail(run);
    ASSERT_TRUE(r.count("redis"));
    // Tandem and the ZeroMQ floor are always measured; Redis only when it is installed.
    std::vector<const char*> cells = {"tandem-two-runtime", "zmq-floor-1-hop", "zmq-floor-2-hops"};
    if (r.at("redis").count("redis-get")) {
      cells.push_back("redis-get");
    } else {
      EXPECT_NE(run.err.find("skipped"), std::string::npos) << run.err;
    }
    for (const char* cell : cells) {
      ASSERT_TRUE(r.at("redis").count(cell)) << cell;
      ExpectLatencies(r.at("redis").at(cell), cell);
    }
  }
  {
    SCOPED_TRACE("curve");
    ExpectAlternatingPeeks(ParseOrFail(Bench({"curve", "--keys", "1000"})), "curve", "plain",
                           "curve");
  }
  {
    SCOPED_TRACE("peek-path");
    ExpectAlternatingPeeks(ParseOrFail(Bench({"peek-path", "--keys", "1000"})), "peek-path",
                           "channel", "rings");
  }
  {
    SCOPED_TRACE("--curve");  // another scenario with every replica over CURVE
    const Report r =
        ParseOrFail(Bench({"lookup-scale", "--curve", "--min-keys", "1000", "--max-keys", "1000"}));
    ASSERT_TRUE(r.count("lookup-scale"));
    for (const auto& [cell, m] : r.at("lookup-scale")) ExpectLatencies(m, cell);
  }
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  EXPECT_FALSE(SegmentsLeft());
}

// slow-path (issue 13): one-shot aggregate queries through the query protocol, every cell, the
// memory cells and the verdicts, at tiny sizes.
TEST(TandemBench, SmokeSlowPath) {
  const auto run = Bench({"slow-path", "--slow-keys", "2000,5000", "--slow-samples", "5",
                          "--heavy-keys", "2000", "--heavy-updates", "200"});
  const Report r = ParseOrFail(run);
  ASSERT_TRUE(r.count("slow-path"));
  const Cells& cells = r.at("slow-path");
  for (const char* mode : {"solo", "two-runtime"}) {
    for (const char* load : {"idle", "loaded"}) {
      for (const char* size : {"n=2000", "n=5000"}) {
        const std::string cell = std::string(mode) + "/" + load + "/" + size;
        ASSERT_TRUE(cells.count(cell)) << cell;
        const Metrics& m = cells.at(cell);
        ExpectLatencies(m, cell);
        EXPECT_EQ(m.at("wrong_answers"), 0) << cell << ": not the aggregate";
        EXPECT_EQ(m.at("groups"), 100) << cell;
        // tandem_one_shot_build_to_answer_seconds, with the real runtime reporting the results.
        EXPECT_GT(m.at("supervisor_build_to_answer_mean_us"), 0) << cell;
        EXPECT_LE(m.at("supervisor_build_to_answer_mean_us"), m.at("max_us")) << cell;
        if (std::string(load) == "loaded") {
          EXPECT_GT(m.at("updates_per_s"), 0) << cell << ": the heavy dataflow made no progress";
        }
      }
    }
    const std::string memory = std::string(mode) + "/memory/n=5000";
    ASSERT_TRUE(cells.count(memory)) << memory;
    const Metrics& m = cells.at(memory);
    EXPECT_GT(m.at("rss_before_bytes"), 0) << memory;
    EXPECT_GT(m.at("index_segment_bytes"), 0) << memory;
    EXPECT_TRUE(m.count("rss_delta_bytes")) << memory;
    EXPECT_TRUE(m.count("segment_delta_bytes")) << memory;
    EXPECT_EQ(m.at("wrong_answers"), 0) << memory;
  }
  for (const char* size : {"n=2000", "n=5000"}) {
    const std::string verdict = std::string("verdict/") + size;
    ASSERT_TRUE(cells.count(verdict)) << verdict;
    EXPECT_GT(cells.at(verdict).at("two_loaded_over_idle_p99"), 0) << verdict;
    EXPECT_GT(cells.at(verdict).at("solo_loaded_over_two_loaded_p99"), 0) << verdict;
  }
  EXPECT_NE(run.err.find("target <= 2"), std::string::npos) << run.err;
  EXPECT_FALSE(SegmentsLeft());
}

// join (issue 14): both throughput cells (the dimension a source and an imported index), their
// memory, the verdicts, and isolation with the join as the heavy load (and the control with the
// headline's), at tiny sizes.
TEST(TandemBench, SmokeJoin) {
  const auto run =
      Bench({"join", "--join-fact-keys", "20000", "--join-fact-updates", "200", "--join-dim-keys",
             "200", "--join-dim-updates", "5", "--join-rounds", "1", "--keys", "2000"});
  const Report r = ParseOrFail(run);
  ASSERT_TRUE(r.count("join") && r.count("join-isolation"));
  const Cells& cells = r.at("join");
  for (const char* cell : {"sources", "imported"}) {
    ASSERT_TRUE(cells.count(cell)) << cell;
    const Metrics& m = cells.at(cell);
    EXPECT_GT(m.at("input_updates_per_s"), 0) << cell << ": the join made no progress";
    EXPECT_GT(m.at("input_updates_per_s_per_worker"), 0) << cell;
    EXPECT_GT(m.at("output_rows_per_s"), 0) << cell;
    EXPECT_GT(m.at("memory_samples"), 0) << cell;
    EXPECT_GT(m.at("segment_bytes_median"), 0) << cell << ": the join index takes no segment";
    EXPECT_GT(m.at("rss_before_bytes"), 0) << cell;
    EXPECT_TRUE(m.count("rss_bytes_median") && m.count("rss_anon_bytes_median")) << cell;
    EXPECT_EQ(m.at("rounds"), 1) << cell;
    EXPECT_EQ(m.at("wrong_answers"), 0) << cell << ": a peeked row of the join is not its match";
  }
  ASSERT_TRUE(cells.count("verdict"));
  EXPECT_TRUE(cells.at("verdict").count("rss_anon_sources_minus_imported_bytes"));
  EXPECT_EQ(cells.at("verdict").at("imported_read_in_place"), 1);
  // The render log says the imported dimension is read in place, and the sources' is arranged.
  EXPECT_NE(run.err.find("imported: join 1: left side its own arrangement, right side imported "
                         "index u43, in place"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("sources: join 1: left side its own arrangement, right side its own "
                         "arrangement"),
            std::string::npos)
      << run.err;
  const Cells& isolation = r.at("join-isolation");
  // The join's cells, and the control's with the headline's load.
  for (const char* cell : {"two-runtime/idle", "two-runtime/loaded", "control/two-runtime/idle",
                           "control/two-runtime/loaded"}) {
    ASSERT_TRUE(isolation.count(cell)) << cell;
    ExpectLatencies(isolation.at(cell), cell);
  }
  EXPECT_GT(isolation.at("two-runtime/loaded").at("updates_per_s"), 0)
      << "the join load made no progress";
  ASSERT_TRUE(isolation.count("verdict"));
  EXPECT_GT(isolation.at("verdict").at("two_loaded_over_idle_p99"), 0);
  EXPECT_GT(isolation.at("verdict").at("control_two_loaded_over_idle_p99"), 0);
  EXPECT_NE(run.err.find("target >= 1000000"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("target <= 2"), std::string::npos) << run.err;
  EXPECT_FALSE(SegmentsLeft());
}

// write (issue 15): every Tandem cell (writer sessions into a plain and an upsert table with
// --data-dir, batches of 1 and 100 rows), write-to-visible latency while an observer peeks, the
// Redis cells when redis-server is installed, the ZeroMQ floor and the verdict, at tiny sizes.
TEST(TandemBench, SmokeWrite) {
  const auto run = Bench({"write", "--write-rounds", "1", "--write-keys", "1000", "--write-clients",
                          "2", "--write-window", "4"});
  const Report r = ParseOrFail(run);
  ASSERT_TRUE(r.count("write"));
  const Cells& cells = r.at("write");
  std::vector<std::string> throughput = {"tandem/plain/c1/b1", "tandem/plain/c1/b100",
                                         "tandem/plain/c2/b1", "tandem/plain/c2/b100",
                                         "tandem/upsert/c2/b100"};
  if (cells.count("redis-everysec/c1/b1")) {
    for (const char* mode : {"everysec", "always"}) {
      for (const char* c : {"c1", "c2"}) {
        for (const char* b : {"b1", "b100"}) {
          throughput.push_back(std::string("redis-") + mode + "/" + c + "/" + b);
        }
      }
    }
  } else {
    EXPECT_NE(run.err.find("skipped Redis"), std::string::npos) << run.err;
  }
  for (const std::string& cell : throughput) {
    ASSERT_TRUE(cells.count(cell)) << cell;
    const Metrics& m = cells.at(cell);
    EXPECT_GT(m.at("rows_per_s"), 0) << cell << ": no write was acknowledged";
    EXPECT_LE(m.at("rows_per_s_min"), m.at("rows_per_s")) << cell;
    EXPECT_EQ(m.at("errors"), 0) << cell << ": a write was answered with an error";
    EXPECT_EQ(m.at("unanswered"), 0) << cell << ": a write was never answered";
    EXPECT_EQ(m.at("rounds"), 1) << cell;
    ExpectLatencies(m, cell);  // each write's send -> answer
  }
  ASSERT_TRUE(cells.count("tandem/visible"));
  const Metrics& visible = cells.at("tandem/visible");
  ExpectLatencies(visible, "tandem/visible");  // misses: a peek at the write's time lacked it
  EXPECT_GT(visible.at("background_peeks"), 0) << "the other session's peeks did not run";
  EXPECT_EQ(visible.at("background_peek_errors"), 0);
  EXPECT_LE(visible.at("ack_p50_us"), visible.at("p50_us"));
  ASSERT_TRUE(cells.count("zmq-floor-2-hops"));
  ExpectLatencies(cells.at("zmq-floor-2-hops"), "zmq-floor-2-hops");
  ASSERT_TRUE(cells.count("verdict"));
  EXPECT_GT(cells.at("verdict").at("batched_rows_per_s"), 0);
  EXPECT_TRUE(cells.at("verdict").count("visible_met"));
  EXPECT_NE(run.err.find("target >= 200000"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("target p50 <= 2000 us"), std::string::npos) << run.err;
  EXPECT_FALSE(SegmentsLeft());
}

// subscribe (issue 16): freshness cells for 1 and --subscribers subscribers, {solo, two-runtime} x
// {idle, loaded}, the maintenance throughput windows (none, subscribers, observers, none after) and
// the verdicts, at tiny sizes (one cost round). Every published time is delivered, every subscribe
// ends once, when it is canceled.
TEST(TandemBench, SmokeSubscribe) {
  const auto run =
      Bench({"subscribe", "--keys", "2000", "--heavy-keys", "2000", "--heavy-updates", "200",
             "--subscribers", "5", "--subscribe-threads", "2", "--subscribe-rounds", "1"});
  const Report r = ParseOrFail(run);
  ASSERT_TRUE(r.count("subscribe"));
  const Cells& cells = r.at("subscribe");
  for (const char* mode : {"solo", "two-runtime"}) {
    for (const char* load : {"idle", "loaded"}) {
      for (const char* n : {"1", "5"}) {
        const std::string cell = std::string(mode) + "/" + load + "/" + n;
        ASSERT_TRUE(cells.count(cell)) << cell;
        const Metrics& m = cells.at(cell);
        ExpectLatencies(m, cell);  // freshness: publication -> delivery
        EXPECT_EQ(m.at("subscribers"), std::stod(n)) << cell;
        EXPECT_EQ(m.at("ended_early"), 0) << cell << ": a subscribe ended before its cancel";
        EXPECT_EQ(m.at("undelivered"), 0) << cell << ": a published time was never delivered";
        EXPECT_EQ(m.at("no_end"), 0) << cell << ": a canceled subscribe never ended";
        EXPECT_GT(m.at("batches_per_s_per_subscriber"), 0) << cell;
        EXPECT_GT(m.at("index_ticks_per_s"), 0) << cell << ": the subscribed index did not move";
        EXPECT_GT(m.at("watch_poll_p50_us"), 0) << cell;
        // Peeks beside the subscribes: each answered (or the run fails), none with an error.
        EXPECT_GT(m.at("peeks"), 0) << cell;
        EXPECT_EQ(m.at("peek_errors"), 0) << cell;
        EXPECT_GE(m.at("peek_max_us"), m.at("peek_p99_us")) << cell;
        if (std::string(load) == "loaded") {
          EXPECT_GT(m.at("updates_per_s"), 0) << cell << ": the heavy dataflow made no progress";
        }
      }
    }
    for (const char* w : {"/loaded/none", "/loaded/5-observers"}) {
      const std::string cell = std::string(mode) + w;
      ASSERT_TRUE(cells.count(cell)) << cell;
      EXPECT_GT(cells.at(cell).at("updates_per_s"), 0) << cell;
      EXPECT_EQ(cells.at(cell).at("subscribers"), 0) << cell;
    }
    const std::string cost = std::string(mode) + "/loaded/cost";
    ASSERT_TRUE(cells.count(cost)) << cost;
    EXPECT_EQ(cells.at(cost).at("rounds"), 1) << cost;
    EXPECT_LE(cells.at(cost).at("cost_subscribers_min"), cells.at(cost).at("cost_subscribers_max"));
    EXPECT_LT(cells.at(cost).at("cost_subscribers_median"), 1) << cost;
  }
  ASSERT_TRUE(cells.count("verdict"));
  const Metrics& v = cells.at("verdict");
  for (const char* k : {"two_loaded_over_idle_p99/1", "two_loaded_over_idle_p99/5",
                        "solo_loaded_over_two_loaded_p99/1", "solo_loaded_over_two_loaded_p99/5"}) {
    ASSERT_TRUE(v.count(k)) << k;
    EXPECT_GT(v.at(k), 0) << k;
  }
  EXPECT_TRUE(v.count("two-runtime/cost_5_subscribers"));
  EXPECT_TRUE(v.count("solo/cost_5_observers"));
  EXPECT_NE(run.err.find("target <= 2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("target <= 5 %"), std::string::npos) << run.err;
  EXPECT_FALSE(SegmentsLeft());
}

// local (issue 17): LocalReader latency (at the latest time, at a given time, hot keys) and
// lookups/s from 1 and 2 threads, idle and loaded, the network peek, and — when installed and built
// — Redis GET and LMDB mdb_get over the same keys; the TCP floor, the timer and the verdict, at
// tiny sizes.
TEST(TandemBench, SmokeLocal) {
  const auto run =
      Bench({"local", "--local-keys", "2000", "--heavy-keys", "2000", "--heavy-updates", "200"});
  const Report r = ParseOrFail(run);
  ASSERT_TRUE(r.count("local"));
  const Cells& cells = r.at("local");
  for (const char* phase : {"idle", "loaded"}) {
    for (const char* what : {"local-reader", "local-reader-at", "network-peek"}) {
      const std::string cell = std::string(phase) + "/" + what;
      ASSERT_TRUE(cells.count(cell)) << cell;
      const Metrics& m = cells.at(cell);
      ExpectLatencies(m, cell);  // misses: a lookup without exactly one row
      EXPECT_EQ(m.at("keys"), 2000) << cell;
      if (m.count("errors")) {
        EXPECT_EQ(m.at("errors"), 0) << cell << ": a lookup failed";
      }
      if (std::string(phase) == "loaded") {
        EXPECT_GT(m.at("updates_per_s"), 0) << cell << ": the heavy dataflow made no progress";
      }
    }
    for (const char* threads : {"1-thread", "2-threads"}) {
      const std::string cell = std::string(phase) + "/local-reader-" + threads;
      ASSERT_TRUE(cells.count(cell)) << cell;
      const Metrics& m = cells.at(cell);
      EXPECT_GT(m.at("lookups_per_s"), 0) << cell;
      EXPECT_GT(m.at("ns_per_lookup"), 0) << cell;
      EXPECT_EQ(m.at("threads"), threads[0] - '0') << cell;
      EXPECT_EQ(m.at("misses"), 0) << cell;
      EXPECT_EQ(m.at("errors"), 0) << cell;
    }
  }
  ASSERT_TRUE(cells.count("idle/local-reader-hot"));
  ExpectLatencies(cells.at("idle/local-reader-hot"), "idle/local-reader-hot");
  // The peers: the TCP floor and the timer always (two clock reads: p50 may be 0 with a coarse
  // clock); Redis and LMDB when there.
  ASSERT_TRUE(cells.count("timer"));
  EXPECT_GT(cells.at("timer").at("samples"), 10);
  EXPECT_GE(cells.at("timer").at("p50_us"), 0);
  std::vector<std::string> peers = {"tcp-floor"};
  if (cells.count("redis-get")) {
    peers.push_back("redis-get");
  } else {
    EXPECT_NE(run.err.find("skipped Redis"), std::string::npos) << run.err;
  }
  if (cells.count("lmdb-get")) {
    peers.push_back("lmdb-get");
    peers.push_back("lmdb-get-in-txn");
    peers.push_back("lmdb-get-hot");
    for (const char* cell : {"lmdb-1-thread", "lmdb-2-threads"}) {
      ASSERT_TRUE(cells.count(cell)) << cell;
      EXPECT_GT(cells.at(cell).at("lookups_per_s"), 0) << cell;
      EXPECT_EQ(cells.at(cell).at("misses"), 0) << cell;
    }
  } else {
    EXPECT_NE(run.err.find("skipped LMDB"), std::string::npos) << run.err;
  }
  for (const std::string& cell : peers) {
    ASSERT_TRUE(cells.count(cell)) << cell;
    ExpectLatencies(cells.at(cell), cell);
  }
  ASSERT_TRUE(cells.count("verdict"));
  const Metrics& v = cells.at("verdict");
  EXPECT_GT(v.at("local_reader_idle_p50_us"), 0);
  EXPECT_GT(v.at("local_reader_loaded_p50_us"), 0);
  EXPECT_GT(v.at("network_peek_over_tcp_floor_p50"), 0);
  if (cells.count("redis-get")) {
    EXPECT_GT(v.at("redis_get_over_local_reader_p50"), 0);
    EXPECT_GT(v.at("network_peek_over_redis_get_p50"), 0);
    EXPECT_NE(run.err.find("target >= 50x"), std::string::npos) << run.err;
  }
  if (cells.count("lmdb-get")) {
    EXPECT_GT(v.at("local_reader_over_lmdb_get_p50"), 0);
  }
  EXPECT_NE(run.err.find("target <= 1 us"), std::string::npos) << run.err;
  EXPECT_FALSE(SegmentsLeft());
}

// replicas (issue 18): one ReplicaSet in front of 1, 2 and 3 replicas, every peek to all (first
// answer) and each to one (round-robin): peeks/s, latencies with no miss, the machine's load, and
// with "spread" every replica of the cell answering some peeks.
TEST(TandemBench, SmokeReplicas) {
  const Report r = ParseOrFail(Bench({"replicas", "--keys", "1000"}));
  ASSERT_TRUE(r.count("replicas"));
  const Cells& cells = r.at("replicas");
  for (const char* cell : {"replicas-1", "all-2", "all-3", "spread-2", "spread-3"}) {
    ASSERT_TRUE(cells.count(cell)) << cell;
    const Metrics& m = cells.at(cell);
    ExpectLatencies(m, cell);
    EXPECT_GT(m.at("peeks_per_s"), 0) << cell;
    EXPECT_EQ(m.at("clients"), 8) << cell;
    EXPECT_GT(m.at("machine_busy"), 0) << cell;
    EXPECT_LE(m.at("machine_busy"), 1.05) << cell;
    const int replicas = static_cast<int>(m.at("replicas"));
    double answered = 0;  // peeks answered by each replica: together, every sample
    for (int i = 0; i < replicas; ++i) {
      const std::string k = "answered_by_" + std::to_string(i);
      ASSERT_TRUE(m.count(k)) << cell << " lacks " << k;
      answered += m.at(k);
      if (std::string(cell).rfind("spread", 0) == 0) {
        // Round-robin: every replica answers its share.
        EXPECT_GT(m.at(k), 0.2 * m.at("samples")) << cell << " " << k;
      }
    }
    EXPECT_EQ(answered, m.at("samples")) << cell;
  }
  EXPECT_FALSE(SegmentsLeft());
}

// sql: a SELECT by key through tandem-frontend (read in place; prepared; through the replica)
// beside the same lookup as a Peek from an observer session on its replica, and PostgreSQL's point
// SELECT (simple and prepared) when PostgreSQL 15 is installed, at tiny sizes (2,000 rows, two
// rounds): every answer the loaded row, the ratios there, nothing left behind.
TEST(TandemBench, SmokeSql) {
  const auto run = Bench({"sql", "--sql-keys", "2000", "--sql-rounds", "2"});
  const Report r = ParseOrFail(run);
  ASSERT_TRUE(r.count("sql")) << run.err;
  const Cells& cells = r.at("sql");
  std::vector<std::string> measured = {"frontend", "frontend_prepared", "frontend_remote", "peek"};
  if (cells.count("postgres")) {
    measured.push_back("postgres");
    measured.push_back("postgres_prepared");
  } else {
    EXPECT_NE(run.err.find("skipped PostgreSQL"), std::string::npos) << run.err;
  }
  for (const std::string& cell : measured) {
    ASSERT_TRUE(cells.count(cell)) << cell;
    const Metrics& m = cells.at(cell);
    ExpectLatencies(m, cell);  // misses: an answer that was not the loaded row
    EXPECT_EQ(m.at("keys"), 2000) << cell;
    if (cell == "frontend" || cell == "postgres") {
      EXPECT_GT(m.at("load_rows_per_s"), 0) << cell;
    }
  }
  // The remote frontend cell and the observer's read through the replica's peeks; the in-place
  // cells do not ask the replica at all.
  EXPECT_GT(cells.at("frontend_remote").at("supervisor_peek_mean_us"), 0);
  EXPECT_GT(cells.at("peek").at("supervisor_peek_mean_us"), 0);
  for (const char* ratio : {"frontend/peek", "frontend/frontend_remote"}) {
    ASSERT_TRUE(cells.count(ratio)) << ratio;
    EXPECT_GT(cells.at(ratio).at("p50_ratio"), 0) << ratio;
  }
  EXPECT_EQ(cells.count("frontend/postgres"), cells.count("postgres"));
  EXPECT_EQ(cells.count("frontend_prepared/postgres_prepared"), cells.count("postgres"));
  EXPECT_FALSE(SegmentsLeft());
}

}  // namespace
}  // namespace tandem::testing
