// tandem-frontend as a process (frontend/README.md): the real binary on a unique --data-dir and
// port 0, psql against it, its exit codes, the local replica it runs as a child (restarted when
// SIGKILLed; gone when the frontend is SIGKILLed, its segment with it), and — in process — the
// replica driver replaying the history to a replica that was SIGKILLed and restarted, so that a
// peek at an index of that history is answered again without anyone doing anything.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "frontend/server/driver_waits.h"
#include "frontend/server/local_replica.h"
#include "frontend/server/replay_history.h"
#include "frontend/server/replica_driver.h"
#include "frontend_harness.h"
#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "unit/protocol_samples.h"

#ifndef TANDEM_FRONTEND_BIN
#error "TANDEM_FRONTEND_BIN must name tandem-frontend"
#endif

namespace tandem::testing {
namespace {

using namespace std::chrono_literals;
namespace fe = tandem::frontend;
namespace samples = tandem::ipc::samples;

std::string Psql() { return FrontendPsqlBinary(); }
void ClientEnvironment() { FrontendClientEnvironment(); }
std::optional<pid_t> SupervisorChild(pid_t frontend) { return SupervisorChildOf(frontend); }

// A replica id no other test (or test process) uses: it names the segment.
std::string UniqueReplicaId() {
  static int counter = 0;
  return "fet" + std::to_string(getpid()) + "x" + std::to_string(counter++);
}

// tandem-frontend as a child of the test: its own data dir, port 0, its local replica (a unique
// replica id, so a unique segment) unless `extra` names --replica.
class FrontendProcess {
 public:
  explicit FrontendProcess(const std::vector<std::string>& extra = {})
      : dir_("frontend"), replica_id_(UniqueReplicaId()) {
    std::vector<std::string> argv = {TANDEM_FRONTEND_BIN,
                                     "--data-dir",
                                     dir_.File("data"),
                                     "--sql-listen-addr",
                                     "127.0.0.1:0",
                                     "--endpoints-file",
                                     dir_.File("frontend.endpoints"),
                                     "--supervisor-binary",
                                     TANDEM_SUPERVISOR_BIN,
                                     "--replica-id",
                                     replica_id_,
                                     "--shm-size",
                                     "32MiB",
                                     "--replica-grace-period",
                                     "3",
                                     "--log-level",
                                     "debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv_ = argv;
    Spawn();
  }

  // Starts the frontend again on the same data dir, replica id and flags (after Kill): a new SQL
  // port (port 0), its endpoints file written anew.
  void Restart() {
    std::error_code ec;
    std::filesystem::remove(dir_.File("frontend.endpoints"), ec);
    port_ = 0;
    Spawn();
  }

  ~FrontendProcess() {
    std::optional<pid_t> supervisor = pid_ > 0 ? SupervisorChild(pid_) : std::nullopt;
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      if (!Eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, 20s)) {
        ADD_FAILURE() << "tandem-frontend did not stop on SIGTERM\n" << Log();
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      } else {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n"
                                                                   << Log();
      }
    }
    // Whatever happened, nothing is left behind.
    if (supervisor && !Eventually([&] { return ProcessGone(*supervisor); }, 10s)) {
      ADD_FAILURE() << "the local replica outlived the frontend";
      kill(*supervisor, SIGKILL);
    }
    // A clean stop removes the segment (the supervisor's own cleanup); removed here whatever
    // happened, so that a failure leaves nothing behind either.
    EXPECT_TRUE(Eventually([&] { return !std::filesystem::exists(Segment()); }, 10s))
        << Segment() << " is left\n"
        << Log();
    std::error_code ec;
    std::filesystem::remove(Segment(), ec);
    std::filesystem::remove(Segment() + ".readers", ec);
  }

  // The SQL port, from the endpoints file (0 when it never came).
  int Port() {
    if (port_ == 0) {
      const std::string file = dir_.File("frontend.endpoints");
      (void)Eventually(
          [&] {
            std::ifstream in(file);
            std::string line;
            if (!std::getline(in, line) || line.rfind("sql_listen_addr=", 0) != 0) return false;
            port_ = std::atoi(line.c_str() + line.rfind(':') + 1);
            return port_ > 0;
          },
          60s);
    }
    return port_;
  }

  BinaryRun Psql(const std::string& sql) {
    return RunBinary(testing::Psql(),
                     {"-X", "-h", "127.0.0.1", "-p", std::to_string(Port()), "-d", "tandem", "-U",
                      "anyone", "-v", "ON_ERROR_STOP=1", "-c", sql},
                     {.limit = 30s, .strip_tandem_env = true});
  }

  pid_t pid() const { return pid_; }
  // Kills the frontend with SIGKILL and reaps it (the destructor then has nothing to stop).
  void Kill() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string Segment() const { return "/dev/shm/tandem." + replica_id_; }
  std::string Log() const {
    std::ifstream in(dir_.File("log"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  void Spawn() {
    const int log = open(dir_.File("log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pid_ = SpawnTiedToTest(argv_, ChildEnvironment(true), log, log);
    close(log);
  }

  TempDir dir_;
  std::string replica_id_;
  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST(FrontendProcess, BadFlagExitsWithUsage) {
  TempDir dir("frontend");
  BinaryRun run = RunBinary(TANDEM_FRONTEND_BIN, {"--data-dir", dir.path(), "--no-such-flag"});
  EXPECT_EQ(run.exit, 64) << DescribeRun(run);
  EXPECT_NE(run.err.find("--no-such-flag"), std::string::npos) << DescribeRun(run);
  run = RunBinary(TANDEM_FRONTEND_BIN, {"--sql-listen-addr", "127.0.0.1:0"});
  EXPECT_EQ(run.exit, 64) << DescribeRun(run);
  EXPECT_NE(run.err.find("--data-dir"), std::string::npos) << DescribeRun(run);
  run = RunBinary(TANDEM_FRONTEND_BIN, {"--data-dir", dir.path(), "--replica", "nonsense"});
  EXPECT_EQ(run.exit, 64) << DescribeRun(run);
}

TEST(FrontendProcess, ListenAddressInUseExitsUnavailable) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  TempDir dir("frontend");
  // A replica endpoint nobody serves: no local replica to start, the listener fails first.
  BinaryRun run = RunBinary(TANDEM_FRONTEND_BIN, {"--data-dir", dir.path(), "--sql-listen-addr",
                                                  taken, "--replica", "tcp://127.0.0.1:1"});
  close(fd);
  EXPECT_EQ(run.exit, 69) << DescribeRun(run);
  EXPECT_NE(run.err.find(taken), std::string::npos) << DescribeRun(run);
}

TEST(FrontendProcess, PsqlConnectsAndIsAnswered) {
  ClientEnvironment();
  FrontendProcess frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  BinaryRun run = frontend.Psql(";");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  run = frontend.Psql("BEGIN; COMMIT");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  run = frontend.Psql("SHOW server_version");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.out.find("Tandem"), std::string::npos) << DescribeRun(run);
  // A constant query is read through the replica (the one-row collection); bad SQL is
  // PostgreSQL's error.
  run = frontend.Psql("SELECT 1 + 1 AS two");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  EXPECT_NE(run.out.find("2"), std::string::npos) << DescribeRun(run);
  run = frontend.Psql("SELEC 1");
  EXPECT_NE(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.err.find("syntax error at or near \"SELEC\""), std::string::npos)
      << DescribeRun(run);
}

// The wall clock now, as a timestamptz literal's text ("2026-12-07 12:00:00.123456+00").
std::string NowTimestamptzText() {
  const auto now = std::chrono::system_clock::now();
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(micros % 1'000'000));
  return text;
}

// A temporal filter through SQL (DESIGN §16): a materialized view over the last 5 seconds of a
// table holds a row written now, then — with no write in between — lets it go when its window
// passes; a row an hour old is never in it. A SELECT that reads tandem_now() is refused (0A000):
// one read has one time, and a constant says it.
TEST(FrontendProcess, ASlidingWindowViewLetsARowGoWhenItsWindowPasses) {
  ClientEnvironment();
  FrontendProcess frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  BinaryRun run = frontend.Psql("CREATE TABLE ev (id int8, at timestamptz)");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  run = frontend.Psql(
      "CREATE MATERIALIZED VIEW recent AS SELECT id FROM ev "
      "WHERE tandem_now() < at + INTERVAL '5 seconds'");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  run = frontend.Psql("INSERT INTO ev VALUES (1, '" + NowTimestamptzText() +
                      "'), (2, timestamptz '" + NowTimestamptzText() + "' - INTERVAL '1 hour')");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  auto ids = [&] {
    const BinaryRun r = frontend.Psql("SELECT id FROM recent");
    EXPECT_EQ(r.exit, 0) << DescribeRun(r);
    return r.out;
  };
  // The read follows the write: row 1 is there at once, row 2 never.
  std::string out = ids();
  EXPECT_NE(out.find(" 1\n"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("(1 row)"), std::string::npos) << out;
  EXPECT_TRUE(Eventually([&] { return ids().find("(0 rows)") != std::string::npos; }, 30s))
      << ids() << frontend.Log();
  run = frontend.Psql("SELECT id FROM ev WHERE tandem_now() < at + INTERVAL '5 seconds'");
  EXPECT_NE(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.err.find("tandem_now() is read only by a materialized view's temporal filter"),
            std::string::npos)
      << DescribeRun(run);
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `psql -c "SUBSCRIBE …"` in the background, its stdout and stderr in files. psql writes COPY data
// with stdio, block-buffered into a file: stdbuf makes it line-buffered, so each line is there
// as soon as psql has it.
class BackgroundPsql {
 public:
  BackgroundPsql(int port, const std::string& sql, const TempDir& dir, const std::string& name)
      : out_(dir.File(name + ".out")), err_(dir.File(name + ".err")) {
    const int out = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int err = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pid_ = SpawnTiedToTest({"/usr/bin/stdbuf", "-oL", Psql(), "-X", "-h", "127.0.0.1", "-p",
                            std::to_string(port), "-d", "tandem", "-U", "anyone", "-c", sql},
                           ChildEnvironment(true), out, err);
    close(out);
    close(err);
  }
  ~BackgroundPsql() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::string Out() const { return FileText(out_); }
  std::string Err() const { return FileText(err_); }
  // Sends `signal` and waits (bounded) for psql to exit: its wait status, or -1.
  int Stop(int signal, std::chrono::milliseconds limit) {
    kill(pid_, signal);
    int status = -1;
    if (!Eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, limit)) return -1;
    pid_ = -1;
    return status;
  }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
};

// SUBSCRIBE through psql, as Materialize streams it over the simple protocol: a COPY of text lines
// `time TAB diff TAB columns…` (COPY's escapes, \N for NULL) that psql prints as they arrive —
// the snapshot, then every write of another session — until psql's ^C (a CancelRequest: ERROR
// 57014) or until psql is SIGKILLed. With two SQL threads, two subscribes both answered at the end
// prove that the ended ones gave their threads back. Views and queries are refused (0A000).
TEST(FrontendProcess, PsqlSubscribeStreamsEveryChangeUntilCanceled) {
  ClientEnvironment();
  FrontendProcess frontend({"--sql-threads", "2"});
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  TempDir dir("frontend-subscribe");
  BinaryRun run = frontend.Psql(
      "CREATE TABLE t (k bigint PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'one'); "
      "CREATE VIEW w AS SELECT k FROM t");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  auto has = [](const BackgroundPsql& p, const std::string& tail) {
    return p.Out().find(tail) != std::string::npos;
  };
  {
    BackgroundPsql subscriber(frontend.Port(), "SUBSCRIBE t", dir, "first");
    ASSERT_GT(subscriber.pid(), 0);
    ASSERT_TRUE(Eventually([&] { return has(subscriber, "\t1\t1\tone\n"); }, 30s))
        << subscriber.Out() << subscriber.Err() << frontend.Log();
    // mz_timestamp: epoch milliseconds.
    const std::string out = subscriber.Out();
    EXPECT_GT(std::stoull(out.substr(0, out.find('\t'))), 1'600'000'000'000ULL) << out;
    run = frontend.Psql("INSERT INTO t VALUES (2, E'two\\tx'), (3, NULL)");
    ASSERT_EQ(run.exit, 0) << DescribeRun(run);
    EXPECT_TRUE(Eventually([&] { return has(subscriber, "\t1\t2\ttwo\\tx\n"); }, 30s))
        << subscriber.Out();
    EXPECT_TRUE(has(subscriber, "\t1\t3\t\\N\n")) << subscriber.Out();
    run = frontend.Psql("UPDATE t SET v = 'uno' WHERE k = 1; DELETE FROM t WHERE k = 3");
    ASSERT_EQ(run.exit, 0) << DescribeRun(run);
    EXPECT_TRUE(Eventually([&] { return has(subscriber, "\t-1\t3\t\\N\n"); }, 30s))
        << subscriber.Out();
    EXPECT_TRUE(has(subscriber, "\t-1\t1\tone\n")) << subscriber.Out();
    EXPECT_TRUE(has(subscriber, "\t1\t1\tuno\n")) << subscriber.Out();
    const int status = subscriber.Stop(SIGINT, 20s);
    ASSERT_NE(status, -1) << "psql did not end on ^C\n" << subscriber.Err();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status;
    EXPECT_NE(subscriber.Err().find("canceling statement due to user request"), std::string::npos)
        << subscriber.Err();
  }
  {
    BackgroundPsql left(frontend.Port(), "SUBSCRIBE TO t", dir, "left");
    ASSERT_TRUE(Eventually([&] { return has(left, "\t1\t1\tuno\n"); }, 30s))
        << left.Out() << left.Err();
    ASSERT_NE(left.Stop(SIGKILL, 20s), -1);
  }
  {
    BackgroundPsql a(frontend.Port(), "SUBSCRIBE t", dir, "a");
    BackgroundPsql b(frontend.Port(), "SUBSCRIBE t", dir, "b");
    EXPECT_TRUE(Eventually([&] { return has(a, "\t1\t2\ttwo\\tx\n"); }, 30s))
        << a.Out() << a.Err() << frontend.Log();
    EXPECT_TRUE(Eventually([&] { return has(b, "\t1\t2\ttwo\\tx\n"); }, 30s))
        << b.Out() << b.Err() << frontend.Log();
    EXPECT_NE(a.Stop(SIGINT, 20s), -1);
    EXPECT_NE(b.Stop(SIGINT, 20s), -1);
  }
  run = frontend.Psql("SUBSCRIBE w");
  EXPECT_NE(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.err.find("SUBSCRIBE to view \"w\" is not supported"), std::string::npos)
      << DescribeRun(run);
  run = frontend.Psql("SUBSCRIBE (SELECT k FROM t)");
  EXPECT_NE(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.err.find("SUBSCRIBE to a query is not supported"), std::string::npos)
      << DescribeRun(run);
  run = frontend.Psql("SUBSCRIBE nosuch");
  EXPECT_NE(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.err.find("relation \"nosuch\" does not exist"), std::string::npos)
      << DescribeRun(run);
}

// A generator's times are its own ticks: read alone it answers (even right after a write to a
// table, whose epoch-ms time it would never reach), and a query mixing it with a table is
// refused at once (0A000) instead of waiting for a time that never comes.
TEST(FrontendProcess, GeneratorsAreReadAloneAndRefusedBesideTables) {
  ClientEnvironment();
  FrontendProcess frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  BinaryRun run = frontend.Psql(
      "CREATE TABLE c (n bigint NOT NULL) WITH (source = 'counter', tick_interval_us = 1000)");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  run = frontend.Psql("CREATE TABLE t (k bigint)");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run);
  run = frontend.Psql("INSERT INTO t VALUES (1)");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run);
  run = frontend.Psql("SELECT count(*) > 0 AS counted FROM c");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.out.find(" t\n"), std::string::npos) << DescribeRun(run);
  run = frontend.Psql("SELECT count(*) FROM t, c");
  EXPECT_NE(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.err.find("generator source(s) c together with other collections"),
            std::string::npos)
      << DescribeRun(run);
}

// psycopg2 in its default mode wraps every statement in BEGIN: the transaction states it tracks
// (in a block, failed in it, idle after ROLLBACK/COMMIT) are PostgreSQL's.
TEST(FrontendProcess, Psycopg2SeesPostgresTransactionStates) {
  ClientEnvironment();
  FrontendProcess frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  const std::string script =
      "import sys, psycopg2\n"
      "from psycopg2 import extensions as x\n"
      "c = psycopg2.connect(host='127.0.0.1', port=int(sys.argv[1]), dbname='tandem', "
      "user='anyone')\n"
      "cur = c.cursor()\n"
      "cur.execute('SHOW server_version')\n"
      "assert 'Tandem' in cur.fetchone()[0]\n"
      "assert c.get_transaction_status() == x.TRANSACTION_STATUS_INTRANS\n"
      "try:\n"
      "    cur.execute('CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql')\n"
      "    sys.exit('CREATE FUNCTION was answered')\n"
      "except psycopg2.Error as e:\n"
      "    assert e.pgcode == '0A000', e.pgcode\n"
      "assert c.get_transaction_status() == x.TRANSACTION_STATUS_INERROR\n"
      "c.rollback()\n"
      "assert c.get_transaction_status() == x.TRANSACTION_STATUS_IDLE\n"
      "cur.execute('SHOW server_version')\n"
      "c.commit()\n"
      "print('ok')\n";
  BinaryRun run = RunBinary("/usr/bin/python3", {"-c", script, std::to_string(frontend.Port())});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_EQ(run.out, "ok\n") << DescribeRun(run);
}

TEST(FrontendProcess, LocalReplicaIsRestartedWhenKilled) {
  FrontendProcess frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  std::optional<pid_t> first;
  ASSERT_TRUE(
      Eventually([&] { return (first = SupervisorChild(frontend.pid())).has_value(); }, 10s))
      << frontend.Log();
  // Killed once the driver replayed to it (its first session), so that coming back is a second.
  auto replayed = [&](int n) {
    return frontend.Log().find("(1 commands): replay " + std::to_string(n)) != std::string::npos;
  };
  ASSERT_TRUE(Eventually([&] { return replayed(1); }, 30s)) << frontend.Log();
  kill(*first, SIGKILL);
  std::optional<pid_t> second;
  ASSERT_TRUE(Eventually(
      [&] {
        second = SupervisorChild(frontend.pid());
        return second && *second != *first;
      },
      30s))
      << frontend.Log();
  // The restarted replica serves again: the driver reconnected and replayed to it.
  EXPECT_TRUE(Eventually([&] { return replayed(2); }, 30s)) << frontend.Log();
  BinaryRun run = frontend.Psql(";");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
}

TEST(FrontendProcess, KilledFrontendTakesItsReplicaDown) {
  FrontendProcess frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  std::optional<pid_t> supervisor;
  ASSERT_TRUE(
      Eventually([&] { return (supervisor = SupervisorChild(frontend.pid())).has_value(); }, 10s))
      << frontend.Log();
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(frontend.Segment()); }, 30s))
      << frontend.Log();
  frontend.Kill();
  // The parent-death signal (SIGTERM) stops the supervisor, which stops its runtimes and
  // removes its segment.
  EXPECT_TRUE(Eventually([&] { return ProcessGone(*supervisor); }, 20s)) << frontend.Log();
  EXPECT_TRUE(Eventually([&] { return !std::filesystem::exists(frontend.Segment()); }, 20s))
      << frontend.Log();
}

// A frontend SIGKILLed and started again at once on its data dir comes up: its old replica,
// still stopping (parent-death signal), holds the segment for a moment — the new one's first
// start is tried again until it is free.
TEST(FrontendProcess, ASigkilledFrontendStartsAgainOnItsDataDir) {
  ClientEnvironment();
  FrontendProcess frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  std::optional<pid_t> old;
  ASSERT_TRUE(Eventually([&] { return (old = SupervisorChild(frontend.pid())).has_value(); }, 10s))
      << frontend.Log();
  frontend.Kill();
  frontend.Restart();
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  BinaryRun run = frontend.Psql(";");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run) << frontend.Log();
  EXPECT_TRUE(ProcessGone(*old));
}

// --replica: replicas an orchestrator runs (the tests' SupervisorProcess). The frontend drives
// both; one SIGKILLed and restarted by its orchestrator is replayed again, the other untouched.
TEST(FrontendProcess, ReplicasGivenByEndpointAreReplayedWhenTheyComeBack) {
  SupervisorOptions o;
  o.worker_binary = TANDEM_WORKER_BIN;
  SupervisorProcess a(o), b(o);
  ASSERT_TRUE(a.WaitReady()) << a.Log();
  ASSERT_TRUE(b.WaitReady()) << b.Log();
  FrontendProcess frontend(
      {"--replica", a.controller_endpoint(), "--replica", b.controller_endpoint()});
  ASSERT_GT(frontend.Port(), 0) << frontend.Log();
  EXPECT_FALSE(SupervisorChild(frontend.pid()).has_value()) << "no local replica with --replica";
  auto replayed = [&](int replica, int n) {
    return frontend.Log().find("replica " + std::to_string(replica) + " (" +
                               (replica == 0 ? a : b).controller_endpoint() +
                               ") replayed the history (1 commands): replay " +
                               std::to_string(n)) != std::string::npos;
  };
  ASSERT_TRUE(Eventually([&] { return replayed(0, 1) && replayed(1, 1); }, 30s)) << frontend.Log();
  ASSERT_TRUE(b.Kill());
  b.Restart();
  ASSERT_TRUE(b.WaitReady()) << b.Log();
  EXPECT_TRUE(Eventually([&] { return replayed(1, 2); }, 30s)) << frontend.Log();
  EXPECT_FALSE(replayed(0, 2)) << "the replica that kept running kept its session";
  BinaryRun run = frontend.Psql(";");
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
}

// ---- in process: the local replica and the replica driver of tandem_frontend_core

// Waits (bounded) for the driver's answer to a request.
template <typename T>
Result<T> Await(std::future<Result<T>>& f) {
  if (f.wait_for(60s) != std::future_status::ready) return Status::Unavailable("no answer");
  return f.get();
}

Result<fe::PeekAnswer> PeekU21(fe::ReplicaDriver& driver) {
  auto promise = std::make_shared<std::promise<Result<fe::PeekAnswer>>>();
  auto future = promise->get_future();
  fe::PeekRequest r;
  r.index = "u21";
  r.deadline = std::chrono::steady_clock::now() + 20s;
  driver.Peek(r, [promise](Result<fe::PeekAnswer> a) { promise->set_value(std::move(a)); });
  return Await(future);
}

TEST(FrontendDriver, ReplaysARestartedReplicaAndAnswersItsPeeks) {
  TempDir dir("frontend-driver");
  fe::LocalReplicaConfig config;
  config.supervisor_binary = TANDEM_SUPERVISOR_BIN;
  config.replica_id = UniqueReplicaId();
  config.shm_size = "32MiB";
  config.grace_period_s = 3;
  config.log_level = "warn";
  const std::string segment = "/dev/shm/tandem." + config.replica_id;
  fe::LocalReplica local(config, dir.path());
  auto endpoint = local.Start();
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();

  // A history of one dataflow: key_value source u19, u20 = Reduce(u19), indexed by u21.
  fe::InMemoryReplayHistory history({samples::SecondaryDataflowFromSources()});
  fe::ReplicaDriver::Options options;
  options.endpoints = {*endpoint};
  options.history_window = 1000ms;
  auto driver = fe::ReplicaDriver::Create(options, history);
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  (*driver)->Start();

  auto before = PeekU21(**driver);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_TRUE(before->response.has_rows());

  const pid_t first = local.pid();
  ASSERT_GT(first, 0);
  kill(first, SIGKILL);
  // Restarted by LocalReplica, reconnected and replayed by the driver: nobody else acts.
  ASSERT_TRUE(Eventually([&] { return local.starts() >= 2 && local.pid() > 0; }, 30s));
  ASSERT_TRUE(Eventually(
      [&] {
        auto replicas = (*driver)->Replicas();
        return replicas.size() == 1 && replicas[0].replays >= 2 && replicas[0].state == "up";
      },
      30s));
  auto after = PeekU21(**driver);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(after->response.has_rows());
  EXPECT_GE(after->timestamp, 5u);  // the dataflow's as_of: never before it

  (*driver)->Stop();
  local.Stop();
  EXPECT_TRUE(Eventually([&] { return !std::filesystem::exists(segment); }, 20s));
}

// A frontend never takes a replica over: one whose live indexes its history does not define (made
// by another controller) is refused and left untouched — a replay would have dropped them — and
// the controller that made them finds them still there.
TEST(FrontendDriver, AReplicaWithIndexesItsHistoryDoesNotDefineIsRefusedAndLeftUntouched) {
  TempDir dir("frontend-takeover");
  fe::LocalReplicaConfig config;
  config.supervisor_binary = TANDEM_SUPERVISOR_BIN;
  config.replica_id = UniqueReplicaId();
  config.shm_size = "32MiB";
  config.grace_period_s = 3;
  config.log_level = "warn";
  const std::string segment = "/dev/shm/tandem." + config.replica_id;
  fe::LocalReplica local(config, dir.path());
  auto endpoint = local.Start();
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  fe::ReplicaDriver::Options options;
  options.endpoints = {*endpoint};
  options.history_window = 1000ms;

  // The first controller makes u19 → u20 → u21 and goes away.
  fe::InMemoryReplayHistory made({samples::SecondaryDataflowFromSources()});
  {
    auto first = fe::ReplicaDriver::Create(options, made);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    (*first)->Start();
    auto rows = PeekU21(**first);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    ASSERT_TRUE(rows->response.has_rows());
    (*first)->Stop();
  }

  // A frontend with an empty history: refused, its reason said, nothing replayed.
  fe::InMemoryReplayHistory empty;
  auto other = fe::ReplicaDriver::Create(options, empty);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  (*other)->Start();
  std::string reason;
  ASSERT_TRUE(Eventually(
      [&] {
        auto replicas = (*other)->Replicas();
        if (replicas.size() != 1) return false;
        reason = replicas[0].last_error;
        return reason.find("does not define") != std::string::npos;
      },
      30s));
  EXPECT_NE(reason.find("u21"), std::string::npos) << reason;
  EXPECT_NE((*other)->Replicas()[0].state, "up");
  (*other)->Stop();

  // The first controller's history again: admitted, and u21 answers as before.
  auto again = fe::ReplicaDriver::Create(options, made);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  (*again)->Start();
  auto rows = PeekU21(**again);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_TRUE(rows->response.has_rows());
  (*again)->Stop();
  local.Stop();
  EXPECT_TRUE(Eventually([&] { return !std::filesystem::exists(segment); }, 20s));
}

// Posts a request and waits (bounded) for its answer.
template <typename T, typename Post>
Result<T> Ask(Post post) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  post([promise](Result<T> a) { promise->set_value(std::move(a)); });
  return Await(future);
}

std::multiset<std::string> RowsOf(const ipc::pb::PeekResponse& r) {
  std::multiset<std::string> out;
  for (const auto& rc : r.rows().rows()) {
    std::string row = std::to_string(rc.count()) + "x";
    for (const auto& d : rc.row().datums()) {
      row += d.has_int64() ? std::to_string(d.int64()) : d.has_string() ? d.string() : "?";
      row += ",";
    }
    out.insert(row);
  }
  return out;
}

// DDL through Submit, a write answered with its time, reads at or after it (a peek, a one-shot),
// and the history window: a time older than it is compacted away by the driver on its own.
TEST(FrontendDriver, WritesAreReadBackAndOldTimesAreCompacted) {
  TempDir dir("frontend-driver");
  fe::LocalReplicaConfig config;
  config.supervisor_binary = TANDEM_SUPERVISOR_BIN;
  config.replica_id = UniqueReplicaId();
  config.shm_size = "32MiB";
  config.grace_period_s = 3;
  config.log_level = "warn";
  fe::LocalReplica local(config, dir.path());
  auto endpoint = local.Start();
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  fe::InMemoryReplayHistory history;
  fe::ReplicaDriver::Options options;
  options.endpoints = {*endpoint};
  options.history_window = 300ms;
  std::atomic<tandem::Time> compacted_u41{0};
  options.on_compaction = [&](const std::string& index, tandem::Time t) {
    if (index == "u41") compacted_u41 = t;
  };
  auto created = fe::ReplicaDriver::Create(options, history);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  fe::ReplicaDriver& driver = **created;
  driver.Start();
  auto deadline = [] { return std::chrono::steady_clock::now() + 20s; };

  // An upsert table u40 keyed by k, indexed by u41.
  ipc::pb::Command table = samples::EmptyDataflow("table", 0);
  *samples::Desc(table)->add_source_imports() = samples::TableImport("u40", {0});
  *samples::Desc(table)->add_index_exports() = samples::Export("u41", "u40", {0});
  fe::SubmitRequest ddl;
  ddl.commands = {table};
  ddl.deadline = deadline();
  auto submitted = Ask<fe::SubmitAnswer>(
      [&](fe::Done<fe::SubmitAnswer> done) { driver.Submit(ddl, std::move(done)); });
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  EXPECT_EQ(submitted->accepted, (std::set<std::size_t>{0}));
  ASSERT_TRUE(history.Record(table));

  fe::WriteRequest write;
  write.write.set_id("u40");
  *write.write.add_updates()->mutable_upsert() = samples::MakeRow(
      {samples::IntDatum(1), samples::StringDatum("one"), samples::FloatDatum(0.5)});
  write.deadline = deadline();
  auto written = Ask<fe::WriteAnswer>(
      [&](fe::Done<fe::WriteAnswer> done) { driver.Write(write, std::move(done)); });
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  const tandem::Time t = written->time;
  ASSERT_GT(t, 0u);

  // Read your writes: at or after the write's time, the row is there.
  fe::PeekRequest peek;
  peek.index = "u41";
  peek.time.floor = t;
  peek.tables = {"u40"};
  peek.deadline = deadline();
  auto read = Ask<fe::PeekAnswer>(
      [&](fe::Done<fe::PeekAnswer> done) { driver.Peek(peek, std::move(done)); });
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_GE(read->timestamp, t);
  EXPECT_EQ(RowsOf(read->response), (std::multiset<std::string>{"1x1,one,?,"}));

  fe::OneShotRequest one_shot;
  one_shot.imports = {samples::Import("u41", "u40", samples::TableSchema(), {0})};
  one_shot.plan = samples::GetPlan("u40");
  one_shot.key = {0};
  one_shot.time.floor = t;
  one_shot.tables = {"u40"};
  one_shot.deadline = deadline();
  auto computed = Ask<fe::PeekAnswer>(
      [&](fe::Done<fe::PeekAnswer> done) { driver.OneShot(one_shot, std::move(done)); });
  ASSERT_TRUE(computed.ok()) << computed.status().ToString();
  EXPECT_GE(computed->timestamp, t);
  EXPECT_EQ(RowsOf(computed->response), (std::multiset<std::string>{"1x1,one,?,"}));

  // The driver compacts u41 to its latest time minus 300 ms: the write's own time goes.
  std::string last;
  EXPECT_TRUE(Eventually(
      [&] {
        fe::PeekRequest old = peek;
        old.time = fe::ReadTime();
        old.time.kind = fe::ReadTime::Kind::kExactly;
        old.time.at = t;
        old.deadline = std::chrono::steady_clock::now() + 5s;
        auto r = Ask<fe::PeekAnswer>(
            [&](fe::Done<fe::PeekAnswer> done) { driver.Peek(old, std::move(done)); });
        last = r.ok() ? "rows" : r.status().ToString();
        return !r.ok() && r.status().message().find("compacted") != std::string::npos;
      },
      20s))
      << last;
  EXPECT_GT(compacted_u41.load(), t);  // told to the catalog: where an importer may start

  // A read at a time an hour ahead waits there; a cancel ends it at once, the driver's own and a
  // session's (CancelToken, through AwaitDriver).
  fe::PeekRequest ahead = peek;
  ahead.time = fe::ReadTime();
  ahead.time.kind = fe::ReadTime::Kind::kExactly;
  ahead.time.at = t + 3600 * 1000;
  ahead.deadline = std::chrono::steady_clock::now() + 60s;
  const auto start = std::chrono::steady_clock::now();
  auto canceled = Ask<fe::PeekAnswer>(
      [&](fe::Done<fe::PeekAnswer> done) { driver.Cancel(driver.Peek(ahead, std::move(done))); });
  ASSERT_FALSE(canceled.ok());
  EXPECT_EQ(canceled.status().message(), "canceled");
  fe::CancelToken token;
  token.Cancel();
  auto by_session = fe::AwaitDriver<fe::PeekAnswer>(
      token, driver, ahead.deadline,
      [&](fe::Done<fe::PeekAnswer> done) { return driver.Peek(ahead, std::move(done)); });
  ASSERT_FALSE(by_session.ok());
  EXPECT_EQ(by_session.status().message(), "canceled");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  driver.Stop();
  local.Stop();
}

// The updates a subscribe delivered, as "time diff k,v" strings, and whether its batches were
// contiguous (each one's lower the previous one's upper).
struct SubscribeLog {
  std::mutex mu;
  std::vector<std::string> updates;
  std::vector<ipc::pb::SubscribeBatch> batches;
  bool contiguous = true;

  void Add(ipc::pb::SubscribeBatch b) {
    std::lock_guard<std::mutex> lock(mu);
    if (!batches.empty() && b.lower() != batches.back().upper()) contiguous = false;
    for (const auto& u : b.updates()) {
      std::string row;
      for (const auto& d : u.row().datums()) {
        row += (row.empty() ? "" : ",") + (d.has_int64()    ? std::to_string(d.int64())
                                           : d.has_string() ? d.string()
                                                            : "?");
      }
      updates.push_back(std::to_string(u.time()) + " " + std::to_string(u.diff()) + " " + row);
    }
    batches.push_back(std::move(b));
  }
  // Whether an update of `row` with `diff` came (at `time`, when not 0).
  bool Has(const std::string& row, std::int64_t diff, tandem::Time time = 0) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& u : updates) {
      std::istringstream in(u);
      tandem::Time t = 0;
      std::int64_t d = 0;
      std::string r;
      in >> t >> d >> r;
      if (r == row && d == diff && (time == 0 || t == time)) return true;
    }
    return false;
  }
  std::string Text() {
    std::lock_guard<std::mutex> lock(mu);
    std::string out;
    for (const auto& u : updates) out += u + "\n";
    return out;
  }
};

// A subscribe through the driver: the snapshot at or after the session's write (read your
// writes), then each later write at the time it was acknowledged at, in contiguous batches; a
// cancel ends it with CANCELED; a replica's refusal is its answer; a replica SIGKILLed under a
// subscribe ends it with an error naming it (never resumed elsewhere); an index no replica
// reports is waited for until the deadline.
TEST(FrontendDriver, SubscribeStreamsTheSnapshotThenEveryWriteUntilCanceled) {
  TempDir dir("frontend-subscribe");
  fe::LocalReplicaConfig config;
  config.supervisor_binary = TANDEM_SUPERVISOR_BIN;
  config.replica_id = UniqueReplicaId();
  config.shm_size = "32MiB";
  config.grace_period_s = 3;
  config.log_level = "warn";
  fe::LocalReplica local(config, dir.path());
  auto endpoint = local.Start();
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  fe::InMemoryReplayHistory history;
  fe::ReplicaDriver::Options options;
  options.endpoints = {*endpoint};
  auto created = fe::ReplicaDriver::Create(options, history);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  fe::ReplicaDriver& driver = **created;
  driver.Start();
  auto deadline = [] { return std::chrono::steady_clock::now() + 20s; };

  // An upsert table u40 keyed by k, indexed by u41.
  ipc::pb::Command table = samples::EmptyDataflow("table", 0);
  *samples::Desc(table)->add_source_imports() = samples::TableImport("u40", {0});
  *samples::Desc(table)->add_index_exports() = samples::Export("u41", "u40", {0});
  fe::SubmitRequest ddl;
  ddl.commands = {table};
  ddl.deadline = deadline();
  auto submitted = Ask<fe::SubmitAnswer>(
      [&](fe::Done<fe::SubmitAnswer> done) { driver.Submit(ddl, std::move(done)); });
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  ASSERT_TRUE(history.Record(table));
  auto write = [&](std::int64_t k, const std::string& v) -> Result<fe::WriteAnswer> {
    fe::WriteRequest w;
    w.write.set_id("u40");
    *w.write.add_updates()->mutable_upsert() =
        samples::MakeRow({samples::IntDatum(k), samples::StringDatum(v), samples::FloatDatum(0.5)});
    w.deadline = deadline();
    return Ask<fe::WriteAnswer>(
        [&](fe::Done<fe::WriteAnswer> done) { driver.Write(w, std::move(done)); });
  };
  auto first = write(1, "one");
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  SubscribeLog log;
  auto ended = std::make_shared<std::promise<Result<ipc::pb::SubscribeEnd>>>();
  auto end_future = ended->get_future();
  fe::SubscribeRequest request;
  request.index = "u41";
  request.time.floor = first->time;
  request.tables = {"u40"};
  request.deadline = deadline();
  const auto id = driver.Subscribe(
      request, [&log](ipc::pb::SubscribeBatch b) { log.Add(std::move(b)); },
      [ended](Result<ipc::pb::SubscribeEnd> e) { ended->set_value(std::move(e)); });
  // The snapshot: row 1 at the read time, which is at or after the write (read your writes).
  ASSERT_TRUE(Eventually([&] { return log.Has("1,one,?", 1); }, 20s)) << log.Text();
  {
    std::lock_guard<std::mutex> lock(log.mu);
    ASSERT_FALSE(log.batches.empty());
    EXPECT_GE(log.batches.front().lower(), first->time);
  }
  // Later writes, each at the time it was acknowledged at; an upsert retracts the old row.
  auto second = write(2, "two");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(Eventually([&] { return log.Has("2,two,?", 1, second->time); }, 20s)) << log.Text();
  auto third = write(1, "uno");
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_TRUE(Eventually([&] { return log.Has("1,one,?", -1, third->time); }, 20s)) << log.Text();
  EXPECT_TRUE(log.Has("1,uno,?", 1, third->time)) << log.Text();
  {
    std::lock_guard<std::mutex> lock(log.mu);
    EXPECT_TRUE(log.contiguous);
  }
  driver.Cancel(id);
  ASSERT_EQ(end_future.wait_for(20s), std::future_status::ready);
  auto end = end_future.get();
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(end->reason(), ipc::pb::SubscribeEnd::CANCELED);

  // A subscribe the replica refuses (up_to not after as_of): its refusal, not a hang.
  fe::SubscribeRequest empty = request;
  empty.time = fe::ReadTime();
  empty.time.kind = fe::ReadTime::Kind::kExactly;
  empty.time.at = third->time;
  empty.up_to = third->time;
  empty.deadline = deadline();
  auto refused = Ask<ipc::pb::SubscribeEnd>([&](fe::Done<ipc::pb::SubscribeEnd> done) {
    driver.Subscribe(empty, nullptr, std::move(done));
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("not after as_of"), std::string::npos)
      << refused.status().ToString();

  // An index no replica reports: waited for until the deadline, then Unavailable.
  fe::SubscribeRequest unknown;
  unknown.index = "u99";
  unknown.deadline = std::chrono::steady_clock::now() + 1s;
  auto waited = Ask<ipc::pb::SubscribeEnd>([&](fe::Done<ipc::pb::SubscribeEnd> done) {
    driver.Subscribe(unknown, nullptr, std::move(done));
  });
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(waited.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(waited.status().message().find("u99"), std::string::npos) << waited.status().ToString();

  // The replica streaming a subscribe is SIGKILLed: the subscribe ends with an error naming it.
  SubscribeLog second_log;
  auto lost = std::make_shared<std::promise<Result<ipc::pb::SubscribeEnd>>>();
  auto lost_future = lost->get_future();
  request.deadline = deadline();
  driver.Subscribe(
      request, [&second_log](ipc::pb::SubscribeBatch b) { second_log.Add(std::move(b)); },
      [lost](Result<ipc::pb::SubscribeEnd> e) { lost->set_value(std::move(e)); });
  ASSERT_TRUE(Eventually([&] { return second_log.Has("1,uno,?", 1); }, 20s)) << second_log.Text();
  const pid_t replica = local.pid();
  ASSERT_GT(replica, 0);
  kill(replica, SIGKILL);
  ASSERT_EQ(lost_future.wait_for(30s), std::future_status::ready);
  auto gone = lost_future.get();
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(gone.status().message().find("went away"), std::string::npos)
      << gone.status().ToString();
  // Restarted and replayed before the end: the restarted supervisor removes the segment the
  // SIGKILLed one left.
  const std::string segment = "/dev/shm/tandem." + config.replica_id;
  EXPECT_TRUE(Eventually(
      [&] {
        auto replicas = driver.Replicas();
        return local.starts() >= 2 && replicas.size() == 1 && replicas[0].replays >= 2 &&
               replicas[0].state == "up";
      },
      30s));
  driver.Stop();
  local.Stop();
  EXPECT_TRUE(Eventually([&] { return !std::filesystem::exists(segment); }, 20s)) << segment;
}

TEST(FrontendDriver, ARequestWaitsForAReplicaAtMostItsDeadline) {
  fe::InMemoryReplayHistory history;
  fe::ReplicaDriver::Options options;
  options.endpoints = {"tcp://127.0.0.1:1"};  // nothing listens
  options.hello_timeout = 500ms;
  auto driver = fe::ReplicaDriver::Create(options, history);
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  (*driver)->Start();
  auto promise = std::make_shared<std::promise<Result<fe::PeekAnswer>>>();
  auto future = promise->get_future();
  fe::PeekRequest r;
  r.index = "u1";
  const auto start = std::chrono::steady_clock::now();
  r.deadline = start + 1s;
  (*driver)->Peek(r, [promise](Result<fe::PeekAnswer> a) { promise->set_value(std::move(a)); });
  auto answer = Await(future);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(answer.status().message().find("no replica is connected"), std::string::npos)
      << answer.status().ToString();
  EXPECT_GE(took, 1s);
  EXPECT_LT(took, 10s);
  // After Stop, a request is refused at once.
  (*driver)->Stop();
  auto refused = std::make_shared<std::promise<Result<tandem::Time>>>();
  auto refused_future = refused->get_future();
  fe::LatestRequest latest;
  latest.indexes = {"u1"};
  latest.deadline = std::chrono::steady_clock::now() + 10s;
  (*driver)->LatestReadable(
      latest, [refused](Result<tandem::Time> t) { refused->set_value(std::move(t)); });
  ASSERT_EQ(refused_future.wait_for(0s), std::future_status::ready);
  EXPECT_FALSE(refused_future.get().ok());
}

}  // namespace
}  // namespace tandem::testing
