// Restarts behind the frontend (DESIGN §15, §9 W1, §13): the frontend SIGKILLed and started again
// on its data dir, its local replica SIGKILLed (the frontend restarts it), and one of two replicas
// SIGKILLed and restarted by its orchestrator while the other serves — each at random moments
// during a write workload over pgwire. What must hold: every write a client was answered for is
// there afterwards; no object of the catalog is lost; queries answer again without anyone doing
// anything (bounded waits); every SELECT of a session sees that session's own writes, whichever
// replica answers it; and the restarted replica, once back, has every acknowledged write — the
// ones made while it was down too (the frontend sends them again) — so it alone answers them all.
//
// The writer runs on its own thread over its own libpq connection, reconnecting (to the port the
// main thread publishes) when the frontend goes away; the main thread kills and restarts (the
// frontend must be spawned by the thread that stays: its parent-death signal follows it). A write
// whose answer was lost is unknown — it may or may not be there — so keys are never reused.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "frontend_harness.h"
#include "pg_connection.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

using namespace std::chrono_literals;

// The answer of `sql` once the frontend answers it without error (bounded).
PgAnswer AnswerEventually(FrontendServer& frontend, const std::string& sql,
                          std::chrono::milliseconds limit = 60s) {
  PgAnswer last;
  (void)Eventually(
      [&] {
        PgConnection c(frontend.conninfo());
        if (!c.ok()) return false;
        last = c.Execute(sql);
        return last.ok();
      },
      limit);
  return last;
}

// Inserts (k, k * 10) for k = 1, 2, … into table w until stopped, each on the connection to the
// port published last; records the keys whose INSERT was answered INSERT 0 1.
class Writer {
 public:
  explicit Writer(std::atomic<int>& port) : port_(port) {}
  ~Writer() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::set<long> acknowledged() {
    std::lock_guard lock(mu_);
    return acknowledged_;
  }
  std::size_t attempts() const { return next_key_ - 1; }

 private:
  void Run() {
    std::optional<PgConnection> c;
    while (!stop_) {
      if (!c || !c->ok()) {
        c.emplace("host=127.0.0.1 port=" + std::to_string(port_.load()) +
                  " dbname=tandem user=writer connect_timeout=5");
        if (!c->ok()) {
          std::this_thread::sleep_for(50ms);  // the frontend is restarting: try again
          continue;
        }
      }
      const long k = next_key_++;
      PgAnswer a = c->Execute("INSERT INTO w VALUES (" + std::to_string(k) + ", " +
                              std::to_string(k * 10) + ")");
      if (a.ok() && a.command_tag == "INSERT 0 1") {
        std::lock_guard lock(mu_);
        acknowledged_.insert(k);
      } else {
        c.reset();  // lost (or refused while a replica restarts): a new connection
      }
    }
  }

  std::atomic<int>& port_;
  std::atomic<bool> stop_{false};
  std::atomic<long> next_key_{1};
  std::thread thread_;
  std::mutex mu_;
  std::set<long> acknowledged_;
};

// Every acknowledged key is in w with its value; the materialized view counts what w holds.
void ExpectEveryAcknowledgedWrite(FrontendServer& frontend, const std::set<long>& acknowledged) {
  PgAnswer rows = AnswerEventually(frontend, "SELECT k, v FROM w");
  ASSERT_TRUE(rows.ok()) << rows.error->message << "\n" << frontend.LogTail();
  std::map<long, long> there;
  for (const auto& r : rows.rows) there[std::stol(*r[0])] = std::stol(*r[1]);
  std::size_t missing = 0;
  for (long k : acknowledged) {
    auto it = there.find(k);
    if (it == there.end() || it->second != k * 10) {
      if (++missing <= 5) ADD_FAILURE() << "acknowledged write k=" << k << " is not there";
    }
  }
  EXPECT_EQ(missing, 0u) << "of " << acknowledged.size() << " acknowledged writes";
  // The view and the table at one time: the view is maintained again, over every row.
  PgAnswer counts =
      AnswerEventually(frontend, "SELECT c.n, t.n FROM wc c, (SELECT count(*) AS n FROM w) t");
  ASSERT_TRUE(counts.ok()) << counts.error->message;
  ASSERT_EQ(counts.rows.size(), 1u);
  EXPECT_EQ(counts.rows[0][0], counts.rows[0][1]) << "the materialized view lost rows";
  EXPECT_GE(std::stoul(*counts.rows[0][1]), acknowledged.size());
}

TEST(FrontendRestart, KilledFrontendAndKilledReplicaLoseNoAcknowledgedWrite) {
  FrontendServer frontend({"--statement-timeout-ms", "10000"});
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  {
    PgAnswer a = AnswerEventually(frontend, "CREATE TABLE w (k bigint PRIMARY KEY, v bigint)");
    ASSERT_TRUE(a.ok()) << a.error->message << frontend.LogTail();
    a = AnswerEventually(frontend, "CREATE MATERIALIZED VIEW wc AS SELECT count(*) AS n FROM w");
    ASSERT_TRUE(a.ok()) << a.error->message << frontend.LogTail();
  }
  std::atomic<int> port{frontend.Port()};
  Writer writer(port);
  writer.Start();
  std::mt19937 random(static_cast<unsigned>(std::random_device{}()));
  std::uniform_int_distribution<int> pause_ms(300, 1500);
  for (int round = 0; round < 4; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random)));
    if (round % 2 == 0) {
      ASSERT_TRUE(frontend.Kill()) << "the local replica outlived its frontend";
      frontend.Restart();
      ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
      port = frontend.Port();
    } else {
      ASSERT_TRUE(frontend.KillReplica()) << frontend.LogTail();
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random)));
  writer.Stop();
  const std::set<long> acknowledged = writer.acknowledged();
  ASSERT_GT(acknowledged.size(), 0u) << "no write was acknowledged\n" << frontend.LogTail();
  std::cout << acknowledged.size() << " of " << writer.attempts() << " writes acknowledged\n";
  ExpectEveryAcknowledgedWrite(frontend, acknowledged);
  // The catalog is whole: both objects, and nothing else but the one-row collection's.
  PgAnswer tables = AnswerEventually(frontend, "SHOW MATERIALIZED VIEWS");
  ASSERT_TRUE(tables.ok());
  ASSERT_EQ(tables.rows.size(), 1u);
  EXPECT_EQ(tables.rows[0][0], "wc");
}

TEST(FrontendRestart, TwoReplicasOneRestartedEverySelectSeesTheSessionsOwnWrites) {
  // Each replica keeps its tables in its own data dir (W1), kept across b's restart.
  TempDir data("frontend-restart");
  SupervisorOptions oa, ob;
  oa.worker_binary = ob.worker_binary = TANDEM_WORKER_BIN;
  oa.extra_args = {"--data-dir", data.File("a")};
  ob.extra_args = {"--data-dir", data.File("b")};
  SupervisorProcess a(oa), b(ob);
  ASSERT_TRUE(a.WaitReady()) << a.Log();
  ASSERT_TRUE(b.WaitReady()) << b.Log();
  FrontendServer frontend({"--replica", a.controller_endpoint(), "--replica",
                           b.controller_endpoint(), "--statement-timeout-ms", "20000"});
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  PgConnection c(frontend.conninfo());
  ASSERT_TRUE(c.ok()) << c.error();
  PgAnswer made = c.Execute("CREATE TABLE w (k bigint PRIMARY KEY, v bigint)");
  ASSERT_TRUE(made.ok()) << made.error->message << frontend.LogTail();
  made = c.Execute("CREATE MATERIALIZED VIEW wc AS SELECT count(*) AS n FROM w");
  ASSERT_TRUE(made.ok()) << made.error->message << frontend.LogTail();

  // b came back as a new replica and was replayed the history a second time.
  auto replayed_again = [&] {
    std::istringstream log(frontend.Log());
    for (std::string line; std::getline(log, line);) {
      if (line.find("replica 1 (" + b.controller_endpoint() + ") replayed") != std::string::npos &&
          line.find("replay 2") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  // The session writes and reads its own write back on its own thread, while the main thread
  // kills b and restarts it (b's orchestrator: the parent-death signal of a process follows the
  // thread that forked it, so it must be the thread that stays).
  std::atomic<bool> back{false}, stop{false};
  std::set<long> acknowledged;
  std::atomic<int> after_back{0};  // rounds since b is back and replayed
  std::thread session([&] {
    long k = 0;
    while (!stop && after_back < 30) {
      ++k;
      PgAnswer w = c.Execute("INSERT INTO w VALUES (" + std::to_string(k) + ", " +
                             std::to_string(k * 10) + ")");
      if (!w.ok()) {
        ADD_FAILURE() << "k=" << k << ": " << w.error->message;
        return;
      }
      acknowledged.insert(k);
      PgAnswer r = c.Execute("SELECT v FROM w WHERE k = " + std::to_string(k));
      if (!r.ok() || r.rows.size() != 1 || r.rows[0][0] != std::to_string(k * 10)) {
        ADD_FAILURE() << "the session's own write k=" << k << " was not read back"
                      << (r.ok() ? "" : ": " + r.error->message);
        return;
      }
      PgAnswer n = c.Execute("SELECT count(*) FROM w");
      if (!n.ok() || n.rows[0][0] != std::to_string(acknowledged.size())) {
        ADD_FAILURE() << "a read missed a write: " << (n.ok() ? *n.rows[0][0] : n.error->message)
                      << " rows, " << acknowledged.size() << " acknowledged";
        return;
      }
      if (back) ++after_back;
    }
  });
  std::this_thread::sleep_for(700ms);
  EXPECT_TRUE(b.Kill());
  std::this_thread::sleep_for(500ms);
  b.Restart();
  EXPECT_TRUE(b.WaitReady(30s)) << b.Log();
  EXPECT_TRUE(Eventually(replayed_again, 30s)) << "b was not replayed after its restart\n"
                                               << frontend.LogTail();
  back = true;
  (void)Eventually([&] { return after_back >= 30; }, 60s);
  stop = true;
  session.join();
  EXPECT_GE(after_back, 30) << "the workload did not go on after the restart";
  // b alone now: a is killed. b must have every acknowledged write — those made while it was
  // down too, which the frontend sent it again when it came back — or it would not be read.
  ASSERT_TRUE(a.Kill());
  std::string last;
  EXPECT_TRUE(Eventually(
      [&] {
        PgAnswer n = c.Execute("SELECT count(*) FROM w");
        last = n.ok() ? *n.rows[0][0] : n.error->message;
        return n.ok() && last == std::to_string(acknowledged.size());
      },
      30s))
      << "b alone answered " << last << ", " << acknowledged.size() << " writes acknowledged\n"
      << frontend.LogTail();
  ExpectEveryAcknowledgedWrite(frontend, acknowledged);
}

}  // namespace
}  // namespace tandem::testing
