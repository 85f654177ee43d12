// The PostgreSQL listener (frontend/pgwire) against the real clients: psql (PostgreSQL 15's) and
// psycopg2 (Debian's python3-psycopg2, in its default transaction mode) talk to
// tandem-test-pgwire-server — the listener with the fake SQL layer of pgwire_fake_sessions.h —
// and what they print is checked: rows with NULLs, several statements in one message, errors
// with their SQLSTATE and position (psycopg2's e.pgcode), transaction states, COPY out, a
// cancel, an unknown database. The server's bounds are checked in process, with raw sockets and
// psql: too many connections, answers many times the buffer to clients that read (back-pressure),
// a client that does not read holding only itself and cut after the send-stall timeout, a client
// that leaves mid-query, an endless fast stream beside other clients, a FATAL not lost to a
// reset, a startup that never comes, a non-loopback address; and, as a process under a low
// RLIMIT_NOFILE, a listener out of descriptors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "frontend/pgwire/server.h"
#include "frontend/sqlstate.h"
#include "pgwire_fake_sessions.h"
#include "run_binary.h"
#include "temp_dir.h"

#ifndef TANDEM_PGWIRE_TEST_SERVER_BIN
#error "TANDEM_PGWIRE_TEST_SERVER_BIN must name tandem-test-pgwire-server"
#endif

namespace tandem::pgwire::pgwire_clients_test {
namespace {

using namespace std::chrono_literals;
using testing::BinaryRun;
using testing::DescribeRun;
using testing::RunBinary;

const char kPython[] = "/usr/bin/python3";

std::string Psql() {
  const char* debian = "/usr/lib/postgresql/15/bin/psql";
  return std::filesystem::exists(debian) ? debian : "/usr/bin/psql";
}

// The clients' environment: nothing of a developer's PG* settings, a bounded connect.
void ClientEnvironment() {
  for (const char* v :
       {"PGHOST", "PGHOSTADDR", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE", "PGSSLMODE",
        "PGGSSENCMODE", "PGOPTIONS", "PGAPPNAME", "PGPASSWORD", "PGCLIENTENCODING", "PSQLRC"}) {
    unsetenv(v);
  }
  setenv("PGCONNECT_TIMEOUT", "10", 1);
}

// Polls `done` every 10 ms for at most `limit`.
template <typename F>
bool WaitFor(F done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// tandem-test-pgwire-server as a child of the test, on a port of the kernel's choice.
class TestServerProcess {
 public:
  explicit TestServerProcess(const std::vector<std::string>& extra = {}) : dir_("pgwire") {
    std::vector<std::string> argv = {TANDEM_PGWIRE_TEST_SERVER_BIN, "--listen", "127.0.0.1:0",
                                     "--port-file", dir_.File("port")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const int log = open(dir_.File("log").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    pid_ = testing::SpawnTiedToTest(argv, testing::ChildEnvironment(true), log, log);
    close(log);
    if (pid_ < 0) return;
    const bool up = WaitFor([&] { return std::filesystem::exists(dir_.File("port")); }, 20s);
    if (up) std::ifstream(dir_.File("port")) >> port_;
  }
  ~TestServerProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    if (!WaitFor([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, 10s)) {
      ADD_FAILURE() << "the test server did not stop on SIGTERM\n" << Log();
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    } else {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Log();
    }
  }
  int port() const { return port_; }
  std::uintmax_t LogBytes() const { return std::filesystem::file_size(dir_.File("log")); }
  std::string Log() const {
    std::ifstream in(dir_.File("log"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  testing::TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

testing::RunBinaryOptions ClientLimit() {
  testing::RunBinaryOptions o;
  o.limit = 60s;
  return o;
}

BinaryRun RunPsql(int port, const std::vector<std::string>& args,
                  const std::string& database = "tandem") {
  ClientEnvironment();
  std::vector<std::string> argv = {"-X", "-h",    "127.0.0.1", "-p",    std::to_string(port),
                                   "-U", "alice", "-d",        database};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunBinary(Psql(), argv, ClientLimit());
}

class PgwireClients : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GT(server_.port(), 0) << server_.Log(); }
  TestServerProcess server_;
};

TEST_F(PgwireClients, PsqlPrintsRowsAndNullsOfEachStatement) {
  const BinaryRun run =
      RunPsql(server_.port(), {"-A", "-F", "|", "-c", "SELECT 1", "-c", "SELECT * FROM pairs"});
  ASSERT_EQ(run.exit, 0) << DescribeRun(run) << server_.Log();
  EXPECT_EQ(run.out, "?column?\n1\n(1 row)\nk|v\n1|one\n2|\n(2 rows)\n");
}

TEST_F(PgwireClients, PsqlShowsEveryResultOfAMessageOfSeveralStatements) {
  const BinaryRun run = RunPsql(server_.port(), {"-c", "SELECT * FROM pairs; SELECT text"});
  ASSERT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_EQ(run.out,
            " k |  v  \n"
            "---+-----\n"
            " 1 | one\n"
            " 2 | \n"
            "(2 rows)\n"
            "\n"
            "      t      \n"
            "-------------\n"
            " h\xc3\xa9llo w\xc3\xb6rld\n"
            "(1 row)\n"
            "\n");
}

TEST_F(PgwireClients, PsqlReportsAnErrorWithItsSqlstateAndPosition) {
  const BinaryRun run = RunPsql(server_.port(), {"-v", "VERBOSITY=verbose", "-v", "ON_ERROR_STOP=1",
                                                 "-c", "SELECT * FROM missing"});
  EXPECT_EQ(run.exit, 1) << DescribeRun(run);
  EXPECT_EQ(run.err,
            "ERROR:  42P01: relation \"missing\" does not exist\n"
            "LINE 1: SELECT * FROM missing\n"
            "                      ^\n")
      << DescribeRun(run);
}

TEST_F(PgwireClients, PsqlRunsAScriptWithATransactionCopyOutAndANotice) {
  testing::TempDir dir("pgwire-script");
  dir.Write("script.sql",
            "BEGIN;\n"
            "SELECT 1;\n"
            "SELECT * FROM missing;\n"
            "SELECT 1;\n"
            "ROLLBACK;\n"
            "COPY pairs TO STDOUT;\n"
            "SELECT notice;\n");
  const BinaryRun run = RunPsql(server_.port(), {"-A", "-t", "-f", dir.File("script.sql")});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_EQ(run.out, "BEGIN\n1\nROLLBACK\n1\tone\n2\t\\N\nok\n") << DescribeRun(run);
  const std::string script = dir.File("script.sql");
  EXPECT_EQ(run.err,
            "psql:" + script + ":3: ERROR:  relation \"missing\" does not exist\n" +
                "LINE 1: SELECT * FROM missing;\n" + "                      ^\n" +
                "psql:" + script +
                ":4: ERROR:  current transaction is aborted, commands ignored until end of "
                "transaction block\n" +
                "psql:" + script + ":7: NOTICE:  this is a notice\n")
      << DescribeRun(run);
}

TEST_F(PgwireClients, PsqlIsRefusedAnotherDatabase) {
  const BinaryRun run = RunPsql(server_.port(), {"-c", "SELECT 1"}, "postgres");
  EXPECT_EQ(run.exit, 2) << DescribeRun(run);
  EXPECT_NE(run.err.find("FATAL:  database \"postgres\" does not exist"), std::string::npos)
      << DescribeRun(run);
}

// psycopg2 in its default transaction mode (BEGIN before the first statement), its
// error classes and pgcode, a cancel from another thread, and a refused connect.
const char kPsycopgScript[] = R"PY(
import sys, threading
import psycopg2
port = int(sys.argv[1])
conn = psycopg2.connect(host="127.0.0.1", port=port, user="alice", dbname="tandem",
                        application_name="pgwire_clients_test")
print("server_version", conn.server_version)
print("encoding", conn.encoding)
cur = conn.cursor()
cur.execute("SELECT 1"); print("select1", cur.fetchall())
print("status", conn.get_transaction_status())
cur.execute("SELECT * FROM pairs")
print("pairs", cur.fetchall(), [(d.name, d.type_code) for d in cur.description])
try:
    cur.execute("SELECT * FROM missing")
except psycopg2.Error as e:
    print("error", e.pgcode, type(e).__name__, e.diag.message_primary, e.diag.statement_position)
print("status", conn.get_transaction_status())
try:
    cur.execute("SELECT 1")
except psycopg2.Error as e:
    print("error", e.pgcode, type(e).__name__)
conn.rollback()
print("status", conn.get_transaction_status())
try:
    cur.execute("SELEKT 1")
except psycopg2.Error as e:
    print("error", e.pgcode, type(e).__name__, e.diag.statement_position)
conn.rollback()
conn.autocommit = True
cur.execute("SELECT text"); print("text", cur.fetchall())
cur.execute("SELECT many"); rows = cur.fetchall(); print("many", len(rows), rows[0], rows[-1])
done = threading.Event()
def cancel():
    while not done.wait(0.1):
        conn.cancel()
canceller = threading.Thread(target=cancel); canceller.start()
try:
    cur.execute("SELECT slow")
except psycopg2.Error as e:
    print("cancel", e.pgcode, type(e).__name__)
done.set(); canceller.join()
cur.execute("SELECT 1"); print("after", cur.fetchall())
conn.close()
try:
    psycopg2.connect(host="127.0.0.1", port=port, user="alice", dbname="other")
except psycopg2.OperationalError as e:
    print("connect", 'FATAL:  database "other" does not exist' in str(e))
)PY";

TEST_F(PgwireClients, Psycopg2SeesRowsSqlstatesTransactionStatesAndCancels) {
  ClientEnvironment();
  const BinaryRun run =
      RunBinary(kPython, {"-c", kPsycopgScript, std::to_string(server_.port())}, ClientLimit());
  ASSERT_EQ(run.exit, 0) << DescribeRun(run) << server_.Log();
  EXPECT_EQ(run.out,
            "server_version 150000\n"
            "encoding UTF8\n"
            "select1 [(1,)]\n"
            "status 2\n"  // TRANSACTION_STATUS_INTRANS: psycopg2 sent BEGIN
            "pairs [(1, 'one'), (2, None)] [('k', 20), ('v', 25)]\n"
            "error 42P01 UndefinedTable relation \"missing\" does not exist 15\n"
            "status 3\n"  // TRANSACTION_STATUS_INERROR
            "error 25P02 InFailedSqlTransaction\n"
            "status 0\n"
            "error 42601 SyntaxError 1\n"
            "text [('h\xc3\xa9llo w\xc3\xb6rld',)]\n"
            "many 1000 (1,) (1000,)\n"
            "cancel 57014 QueryCanceled\n"
            "after [(1,)]\n"
            "connect True\n")
      << DescribeRun(run);
}

// ---- the server's bounds, in process ----------------------------------------------------------

std::string Int32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// Whether `in` ends with a whole ReadyForQuery.
bool Answered(const std::string& in) {
  return in.size() >= 6 && in.compare(in.size() - 6, 5, std::string("Z\0\0\0\5", 5)) == 0;
}

// A client on a plain socket: whole messages in, bytes out, reads bounded by a deadline.
class RawClient {
 public:
  // `receive_buffer`: SO_RCVBUF, when not 0 (the kernel doubles it); past net.core.rmem_max
  // through SO_RCVBUFFORCE where the test may (root).
  explicit RawClient(int port, int receive_buffer = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (receive_buffer > 0 &&
        setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &receive_buffer, sizeof receive_buffer) != 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    timeval tv{0, 100 * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawClient() { close(fd_); }
  bool connected() const { return connected_; }
  // shutdown(SHUT_WR): the server reads the end of the stream; this side may still read.
  void ShutdownSending() { shutdown(fd_, SHUT_WR); }
  void Send(const std::string& bytes) {
    ASSERT_EQ(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void Startup() {
    std::string body =
        Int32(196608) + "user" + '\0' + "raw" + '\0' + "database" + '\0' + "tandem" + '\0' + '\0';
    Send(Int32(static_cast<std::uint32_t>(body.size() + 4)) + body);
  }
  void Query(const std::string& sql) {
    Send("Q" + Int32(static_cast<std::uint32_t>(sql.size() + 5)) + sql + '\0');
  }
  // Reads until `done(received)` or the end of the stream (eof() then) or `limit`.
  template <typename F>
  const std::string& ReadUntil(F done, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[65536];
    while (!done(in_) && !eof_ && std::chrono::steady_clock::now() < deadline) {
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n > 0) in_.append(buf, static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) eof_ = true;
    }
    return in_;
  }
  const std::string& ReadToEnd(std::chrono::milliseconds limit) {
    return ReadUntil([](const std::string&) { return false; }, limit);
  }
  // Reads and drops whatever comes, as fast as it comes, counting it, until `stop`.
  void Drain(const std::atomic<bool>& stop, std::atomic<std::size_t>& bytes) {
    std::vector<char> buf(1 << 20);
    while (!stop && !eof_) {
      const ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
      if (n > 0) bytes += static_cast<std::size_t>(n);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) eof_ = true;
    }
  }
  // A slow reader: at most `chunk` bytes, then a pause of `pause`, until ReadyForQuery or the end
  // of the stream or `limit`.
  const std::string& ReadPaced(std::size_t chunk, std::chrono::milliseconds pause,
                               std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::string buf(chunk, '\0');
    while (!eof_ && std::chrono::steady_clock::now() < deadline) {
      const ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
      if (n > 0) in_.append(buf.data(), static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) eof_ = true;
      if (n > 0 && Answered(in_)) break;
      std::this_thread::sleep_for(pause);  // the pace of a slow client, not a synchronisation
    }
    return in_;
  }
  bool eof() const { return eof_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string in_;
};

// The type bytes of the whole messages in `in`, and the fields of its last ErrorResponse.
struct Received {
  std::string types;
  std::string last_error_severity, last_error_code;
};
Received Parse(const std::string& in) {
  Received r;
  std::size_t at = 0;
  while (in.size() - at >= 5) {
    const std::uint32_t len = (std::uint32_t{static_cast<unsigned char>(in[at + 1])} << 24) |
                              (std::uint32_t{static_cast<unsigned char>(in[at + 2])} << 16) |
                              (std::uint32_t{static_cast<unsigned char>(in[at + 3])} << 8) |
                              std::uint32_t{static_cast<unsigned char>(in[at + 4])};
    if (in.size() - at - 1 < len) break;
    r.types += in[at];
    if (in[at] == 'E') {
      const std::string body = in.substr(at + 5, len - 4);
      for (std::size_t i = 0; i < body.size() && body[i] != '\0';) {
        const std::size_t end = body.find('\0', i + 1);
        if (body[i] == 'S') r.last_error_severity = body.substr(i + 1, end - i - 1);
        if (body[i] == 'C') r.last_error_code = body.substr(i + 1, end - i - 1);
        i = end + 1;
      }
    }
    at += 1 + len;
  }
  return r;
}
bool HasReadyForQuery(const std::string& in) {
  return Parse(in).types.find('Z') != std::string::npos;
}

// Out of file descriptors: the server neither spins on its listener (each failed accept logs a
// line: a spinning loop writes thousands a second) nor stops serving the connections it has, and
// a client it cannot take is told so (FATAL 53300) rather than left waiting; once descriptors are
// free again it accepts.
TEST(PgwireServerDescriptors, OutOfDescriptorsTheListenerWaitsAndRefusesInsteadOfSpinning) {
  // A sanitizer's runtime needs descriptors of its own: out of them, UBSan's vptr check cannot
  // tell whether memory is readable (it probes through a pipe) and reports the server's first
  // log call as a member call on an invalid object — a false report that ends the process.
  if (std::getenv("TANDEM_TEST_SANITIZER") != nullptr) {
    GTEST_SKIP() << "a sanitizer's runtime cannot run out of descriptors";
  }
  TestServerProcess server({"--max-open-files", "16"});
  ASSERT_GT(server.port(), 0) << server.Log();
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 24; ++i) {
    clients.push_back(std::make_unique<RawClient>(server.port()));
    ASSERT_TRUE(clients.back()->connected());  // the kernel's backlog completes the handshake
    clients.back()->Startup();
  }
  // Some are served; the others are refused FATAL 53300 or still wait in the backlog.
  const auto Answered = [](const std::string& in) {
    const std::string types = Parse(in).types;
    return types.find_first_of("ZE") != std::string::npos;
  };
  int served = 0, refused = 0;
  for (auto& c : clients) {
    const Received r = Parse(c->ReadUntil(Answered, 2s));
    if (r.types.find('Z') != std::string::npos) ++served;
    if (r.types.find('E') != std::string::npos) {
      ++refused;
      EXPECT_EQ(r.last_error_code, sqlstate::kTooManyConnections);
    }
  }
  EXPECT_GT(served, 0);
  EXPECT_GT(refused, 0) << "the descriptor limit was not reached: this proves nothing";
  // The loop is not spinning: a second adds a handful of accept warnings (~100 bytes each) to
  // the log, not the megabytes of a loop that retries at once.
  const std::uintmax_t before = server.LogBytes();
  std::this_thread::sleep_for(1s);  // a span to count over, not a synchronisation
  EXPECT_LT(server.LogBytes() - before, 20u * 100) << "bytes logged in a second";
  // A served session still answers.
  for (auto& c : clients) {
    if (!HasReadyForQuery(c->ReadUntil(HasReadyForQuery, 0ms))) continue;
    c->Query("SELECT 1");
    const std::string& in = c->ReadUntil(
        [](const std::string& got) { return Parse(got).types.find('D') != std::string::npos; },
        10s);
    EXPECT_NE(Parse(in).types.find('D'), std::string::npos);
    break;
  }
  // Descriptors free again: a new client is accepted.
  clients.clear();
  const BinaryRun run = RunPsql(server.port(), {"-A", "-t", "-c", "SELECT 1"});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_EQ(run.out, "1\n");
}

class PgwireServerBounds : public ::testing::Test {
 protected:
  void Start() {
    options_.listen_address = "127.0.0.1:0";
    server_ = std::make_unique<Server>(sessions_, options_);
    ASSERT_TRUE(server_->Start().ok());
  }
  testing::FakeSessions sessions_;  // outlives the server
  ServerOptions options_;
  std::unique_ptr<Server> server_;
};

TEST_F(PgwireServerBounds, BeyondMaxConnectionsPsqlIsRefused53300AndLaterLetIn) {
  options_.max_connections = 1;
  Start();
  {
    RawClient holder(server_->port());
    ASSERT_TRUE(holder.connected());
    holder.Startup();
    ASSERT_TRUE(HasReadyForQuery(holder.ReadUntil(HasReadyForQuery, 10s)));
    const BinaryRun refused = RunPsql(server_->port(), {"-c", "SELECT 1"});
    EXPECT_EQ(refused.exit, 2) << DescribeRun(refused);
    EXPECT_NE(refused.err.find("FATAL:  too many connections"), std::string::npos)
        << DescribeRun(refused);
    EXPECT_EQ(server_->counts().refused, 1u);
  }
  ASSERT_TRUE(WaitFor([&] { return server_->counts().open == 0; }, 10s));
  const BinaryRun let_in = RunPsql(server_->port(), {"-A", "-t", "-c", "SELECT 1"});
  EXPECT_EQ(let_in.exit, 0) << DescribeRun(let_in);
  EXPECT_EQ(let_in.out, "1\n");
}

// Back-pressure end to end: the answer is 20 times what the server buffers for a client, and
// psql, which reads, gets all of it — the fake SQL layer waits for room before each row.
TEST_F(PgwireServerBounds, PsqlReadsAnAnswerTwentyTimesItsBufferWhole) {
  options_.connection.max_buffered_bytes = 1 << 20;
  options_.send_stall_timeout = 10s;
  Start();
  const BinaryRun run = RunPsql(server_->port(), {"-A", "-t", "-c", "SELECT big 20000"});
  ASSERT_EQ(run.exit, 0) << DescribeRun(run).substr(0, 2000);
  const std::string row = std::string(1024, 'b') + "\n";
  EXPECT_EQ(run.out.size(), 20000 * row.size());
  EXPECT_EQ(run.out.substr(0, row.size()), row);
  EXPECT_EQ(server_->counts().timed_out, 0u);
}

// A client that reads slowly, but reads, is served however long its answer takes: the stall
// timeout counts from its last read, not from the answer's start.
TEST_F(PgwireServerBounds, ASlowButSteadyReaderIsServedPastTheStallTimeout) {
  options_.connection.max_buffered_bytes = 256 << 10;
  options_.connection.output_high_water = 64 << 10;
  options_.send_stall_timeout = 500ms;
  Start();
  RawClient slow(server_->port(), 32 << 10);  // a small receive buffer: the server feels each read
  slow.Startup();
  ASSERT_TRUE(HasReadyForQuery(slow.ReadUntil(HasReadyForQuery, 10s)));
  slow.Query("SELECT big 4096");  // 4 MiB
  const auto start = std::chrono::steady_clock::now();
  const std::string& got = slow.ReadPaced(16 << 10, 10ms, 60s);
  EXPECT_GT(std::chrono::steady_clock::now() - start, options_.send_stall_timeout)
      << "the answer took longer than the stall timeout, else this proves nothing";
  const Received r = Parse(got);
  ASSERT_FALSE(r.types.empty());
  EXPECT_EQ(r.types.back(), 'Z') << r.last_error_code;
  EXPECT_EQ(std::count(r.types.begin(), r.types.end(), 'D'), 4096);
  EXPECT_EQ(server_->counts().timed_out, 0u);
}

// A client that reads nothing holds only itself: its answer stops above high water, its producer
// waits for room on its session's own thread, and meanwhile other clients connect and are
// answered — a short answer and one many times the buffer. When it reads at last, it gets all of
// its answer.
TEST_F(PgwireServerBounds, AClientThatDoesNotReadHoldsOnlyItselfWhileOthersAreServed) {
  options_.connection.max_buffered_bytes = 1 << 20;
  options_.connection.output_high_water = 256 << 10;
  options_.send_stall_timeout = 120s;  // not cut here: only paused
  Start();
  RawClient slow(server_->port(), 64 << 10);
  slow.Startup();
  const std::size_t startup_bytes = slow.ReadUntil(HasReadyForQuery, 10s).size();
  ASSERT_TRUE(HasReadyForQuery(slow.ReadUntil(HasReadyForQuery, 0s)));
  slow.Query("SELECT big 8192");  // 8 MiB, far more than the kernel, the output and the queue hold
  // Stuck: the socket full, the output above high water, the queue without room, the producer
  // held back.
  ASSERT_TRUE(WaitFor([&] { return sessions_.held_back > 0; }, 20s));
  const BinaryRun quick = RunPsql(server_->port(), {"-A", "-t", "-c", "SELECT 1"});
  EXPECT_EQ(quick.exit, 0) << DescribeRun(quick);
  EXPECT_EQ(quick.out, "1\n");
  const BinaryRun big = RunPsql(server_->port(), {"-A", "-t", "-c", "SELECT big 4096"});
  EXPECT_EQ(big.exit, 0) << DescribeRun(big).substr(0, 2000);
  EXPECT_EQ(big.out.size(), 4096u * 1025);
  // Both others gone (psql exits on sending Terminate: the server sees it a moment later), the
  // slow client's session still open.
  EXPECT_TRUE(WaitFor([&] { return server_->counts().open == 1; }, 10s));
  EXPECT_EQ(sessions_.closed, 2);
  // The slow client reads at last: everything, in order, then ReadyForQuery.
  const Received r = Parse(slow.ReadUntil(
      [&](const std::string& in) { return in.size() > startup_bytes && Answered(in); }, 60s));
  EXPECT_EQ(std::count(r.types.begin(), r.types.end(), 'D'), 8192);
  ASSERT_FALSE(r.types.empty());
  EXPECT_EQ(r.types.back(), 'Z');
}

TEST_F(PgwireServerBounds, AClientThatStopsReadingIsCut08006AfterTheSendStallTimeout) {
  options_.connection.max_buffered_bytes = 1 << 20;
  options_.send_stall_timeout = 300ms;
  options_.close_timeout = 60s;  // the FATAL stays to be read below
  Start();
  RawClient slow(server_->port());
  slow.Startup();
  ASSERT_TRUE(HasReadyForQuery(slow.ReadUntil(HasReadyForQuery, 10s)));
  slow.Query("SELECT big");  // endless, at the client's pace; and the client reads nothing
  // No send progress for 300 ms: the session ends (its handler is destroyed).
  ASSERT_TRUE(WaitFor([&] { return sessions_.closed == 1; }, 20s));
  EXPECT_EQ(server_->counts().timed_out, 1u);
  // What the client gets when it reads at last: the rows that were buffered, bounded, then
  // FATAL 08006, then the end.
  const std::string& got = slow.ReadToEnd(20s);
  EXPECT_TRUE(slow.eof());
  EXPECT_LT(got.size(), std::size_t{64} << 20);
  const Received r = Parse(got);
  ASSERT_FALSE(r.types.empty());
  EXPECT_EQ(r.types.back(), 'E');
  EXPECT_EQ(r.last_error_severity, "FATAL");
  EXPECT_EQ(r.last_error_code, sqlstate::kConnectionFailure);
}

// A client that goes away while its Query runs — here one the fake SQL layer answers only when
// canceled, as a SUBSCRIBE with nothing to send — ends it: the handler is told to cancel.
TEST_F(PgwireServerBounds, AClientThatLeavesMidQueryHasItCanceled) {
  Start();
  RawClient gone(server_->port());
  gone.Startup();
  ASSERT_TRUE(HasReadyForQuery(gone.ReadUntil(HasReadyForQuery, 10s)));
  gone.Query("SELECT slow");
  gone.ShutdownSending();
  ASSERT_TRUE(WaitFor([&] { return sessions_.cancels == 1; }, 10s));
  ASSERT_TRUE(WaitFor([&] { return sessions_.closed == 1; }, 10s));
  EXPECT_EQ(Parse(gone.ReadToEnd(10s)).last_error_code, sqlstate::kQueryCanceled);
  EXPECT_TRUE(gone.eof());
}

// A client whose answer never ends and who reads it as fast as it comes — its producer refilling
// the sink on the I/O thread the moment there is room, so there is always more to send — gets a
// bounded share of each turn of the I/O thread: a new client is accepted and answered meanwhile.
TEST_F(PgwireServerBounds, AnEndlessFastStreamDoesNotStarveOtherClients) {
  options_.connection.max_buffered_bytes = 4 << 20;
  Start();
  // A receive buffer so large that the server's socket never fills: without a bound of its own
  // on a turn, the I/O thread would send to this client for ever.
  RawClient fast(server_->port(), 256 << 20);
  fast.Startup();
  ASSERT_TRUE(HasReadyForQuery(fast.ReadUntil(HasReadyForQuery, 10s)));
  fast.Query("SELECT stream");
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> streamed{0};
  std::thread reader([&] { fast.Drain(stop, streamed); });
  const bool streaming = WaitFor([&] { return streamed > (std::size_t{16} << 20); }, 20s);
  const BinaryRun other = RunPsql(server_->port(), {"-A", "-t", "-c", "SELECT 1"});
  const std::size_t during = streamed;
  stop = true;
  reader.join();
  ASSERT_TRUE(streaming) << streamed << " bytes streamed";
  EXPECT_EQ(other.exit, 0) << DescribeRun(other);
  EXPECT_EQ(other.out, "1\n");
  EXPECT_GT(during, std::size_t{16} << 20);
}

// A FATAL is not lost to a reset. The client reads nothing for a while, so the end of its answer
// and the FATAL wait in the server's socket, not yet transmitted; input the server will never read
// waits there too. close() would answer that input with RST, which throws away what was not yet
// transmitted — the FATAL. The server shuts its side down and drains the input first.
TEST_F(PgwireServerBounds, AFatalReachesAClientWhoseInputWasLeftUnread) {
  Start();
  RawClient c(server_->port(), 4096);  // a small receive window: the answer cannot all arrive
  c.Startup();
  ASSERT_TRUE(HasReadyForQuery(c.ReadUntil(HasReadyForQuery, 10s)));
  // 64 KiB of answer, then an unknown message type (FATAL 08P01) with 256 KiB behind it that the
  // server never reads.
  c.Send("Q" + Int32(4 + 14) + "SELECT big 64" + '\0' + '\x01' + std::string(256 << 10, 'x'));
  ASSERT_TRUE(WaitFor([&] { return sessions_.closed == 1; }, 10s));
  // Until the server has closed the socket, or a second: the client reads only then, so that a
  // reset, if one comes, has arrived first.
  WaitFor([&] { return server_->counts().open == 0; }, 1s);
  const Received r = Parse(c.ReadToEnd(20s));
  EXPECT_EQ(std::count(r.types.begin(), r.types.end(), 'D'), 64);
  EXPECT_EQ(r.last_error_severity, "FATAL");
  EXPECT_EQ(r.last_error_code, sqlstate::kProtocolViolation);
}

TEST_F(PgwireServerBounds, AStartupThatNeverComesTimesOut) {
  options_.startup_timeout = 300ms;
  Start();
  RawClient idle(server_->port());
  ASSERT_TRUE(idle.connected());
  const Received r = Parse(idle.ReadToEnd(10s));
  EXPECT_TRUE(idle.eof());
  EXPECT_EQ(r.types, "E");
  EXPECT_EQ(r.last_error_code, sqlstate::kQueryCanceled);
  EXPECT_EQ(server_->counts().timed_out, 1u);
}

TEST_F(PgwireServerBounds, AnIdleSessionIsKeptAndStopEndsItWithFatal57P01) {
  Start();
  RawClient idle(server_->port());
  idle.Startup();
  ASSERT_TRUE(HasReadyForQuery(idle.ReadUntil(HasReadyForQuery, 10s)));
  idle.ReadToEnd(1s);  // nothing comes, and the session stays
  EXPECT_FALSE(idle.eof());
  EXPECT_EQ(server_->counts().open, 1u);
  server_->Stop();
  const Received r = Parse(idle.ReadToEnd(10s));
  EXPECT_TRUE(idle.eof());
  EXPECT_EQ(r.last_error_code, sqlstate::kAdminShutdown);
  EXPECT_EQ(sessions_.closed, 1);
}

TEST_F(PgwireServerBounds, ANonLoopbackAddressIsRefusedUnderTrust) {
  options_.listen_address = "0.0.0.0:0";
  Server server(sessions_, options_);
  const Status s = server.Start();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not a loopback address"), std::string::npos) << s.ToString();
  options_.listen_address = "[::]:0";
  EXPECT_EQ(Server(sessions_, options_).Start().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tandem::pgwire::pgwire_clients_test
