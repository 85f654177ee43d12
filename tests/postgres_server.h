// A private PostgreSQL 15 server for one test — the oracle of the SQL suites and the upstream of
// the replication ones: Debian's binaries (/usr/lib/postgresql/15/bin), a data directory in a
// temporary directory of its own, listening on 127.0.0.1 at a free port and on a Unix socket in
// that directory, trust authentication, superuser `postgres`, database `postgres`.
//
//   TANDEM_SKIP_UNLESS_POSTGRES();  // GTEST_SKIP with the reason where it cannot run
//   PostgresServer pg;
//   ASSERT_TRUE(pg.ok()) << pg.error();
//   PgAnswer r = pg.Execute("SELECT 1");
//
// Who runs what. PostgreSQL refuses to run as root: when the test is root (CI), the server and
// its tools run as the system user `postgres` (initdb and cp through `runuser -u postgres --`, the
// server by a fork that takes that identity before exec) in a directory given to that user; when
// the test is not root, they run as the test's user.
//
// Lifetime. The server (postmaster) is the test's own child, started the way `pg_ctl start`
// would minus the daemonising, so that it cannot outlive the test: its parent-death signal is
// SIGQUIT (PostgreSQL's immediate shutdown, what `pg_ctl stop -m immediate` sends), so a test
// killed outright (a ctest timeout's SIGKILL) takes its server down, whose own children follow
// it. The destructor (or Stop) sends SIGQUIT and reaps it — bounded, then SIGKILL — and removes
// the directory; servers still running at exit() (one a fixture never destroyed) are stopped by an
// atexit hook of the process that started them. The directory of a test that was killed stays
// until the next PostgresServer constructed on the machine removes it (its name carries the dead
// test's pid).
// The parent-death signal follows the *thread* that constructs the server: construct it on a
// thread that outlives it (the test's main thread).
//
// Where. The directory is <base>/tandem-postgres-<test pid>-XXXXXX, the base /dev/shm when it is a
// tmpfs with 2 GiB free (on a loaded machine, disk writeback made a server's start slow), else
// /tmp.
//
// Speed. initdb is most of a start, so the first server of a PostgreSQL version and user makes a
// template data directory (<base>/tandem-postgres-template-<version>-f<format>-u<uid>, kept until
// the machine restarts: it is the cache; a stale one is never used, the version and initdb's
// arguments being in its name, and the next test process removes it) and every server copies it,
// which is much quicker (WAL in 1 MiB segments keeps it small). The server runs with fsync,
// synchronous_commit and full_page_writes off, small shared buffers, no autovacuum and no JIT,
// which make its own start quick. Settings that make its text output reproducible: TimeZone UTC,
// DateStyle ISO, lc_messages C, extra_float_digits at its default (1: floats in shortest exact
// form).
//
// Thread safety: Execute and Stop from one thread at a time; the accessors are constant.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pg_connection.h"
#include "sql_rows.h"

namespace tandem::testing {

struct PostgresServerOptions {
  // wal_level = logical (max_wal_senders and max_replication_slots at their defaults, 10 each),
  // for a logical-replication upstream; else wal_level = replica, PostgreSQL's default.
  bool logical_replication = false;
  int max_connections = 40;
  std::string shared_buffers = "16MB";
  // More settings, "name=value" each, passed as `-c name=value` after the defaults above.
  std::vector<std::string> settings;
  // How long the server may take to accept connections, per attempt (a port taken between
  // choosing it and the server binding it is retried on another port, up to 5 attempts).
  std::chrono::milliseconds start_limit = std::chrono::seconds(60);
  // The TCP port of the first attempt; 0: one the kernel says is free. Later attempts take free
  // ones. For tests of a port lost to another server.
  int first_port = 0;
};

class PostgresServer {
 public:
  // Why no server can be started on this machine (PostgreSQL 15's binaries missing; as root, no
  // user `postgres` or no runuser), for GTEST_SKIP; nullopt when one can.
  static std::optional<std::string> Unavailable();
  // The path of one of PostgreSQL 15's programs: "psql", "pg_isready", "pg_recvlogical", …
  static std::string Binary(const std::string& name);

  // Starts a server (the header's comment) and waits until it accepts connections on its Unix
  // socket (which only it can have made), then checks that its TCP port answers as it: a port
  // lost to another server between choosing and binding it is retried on another. Check ok().
  explicit PostgresServer(const PostgresServerOptions& options = {});
  ~PostgresServer();  // Stop()
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Accepting connections (and not stopped since).
  bool ok() const { return pid_ > 0; }
  // Why it did not start, with the server's log; "" when it did.
  const std::string& error() const { return error_; }

  int port() const { return port_; }
  // A libpq connection string for `database` over TCP on 127.0.0.1, user postgres:
  // "host=127.0.0.1 port=… dbname=… user=postgres connect_timeout=10".
  std::string conninfo(const std::string& database = "postgres") const;
  // The directory holding everything (data/, socket/, server.log); removed by Stop.
  const std::string& dir() const { return dir_; }
  std::string data_dir() const { return dir_ + "/data"; }
  // Where the server's Unix socket is (.s.PGSQL.<port>): psql -h <socket_dir()> works too.
  std::string socket_dir() const { return dir_ + "/socket"; }
  // The postmaster's pid; -1 when not running.
  pid_t pid() const { return pid_; }
  // The server's log (its stderr) so far, for failure messages.
  std::string Log() const;

  // Runs `sql` over a connection of this object's own (opened at the first call, opened again if
  // it broke): PgConnection::Execute.
  PgAnswer Execute(const std::string& sql);

  // Immediate shutdown (SIGQUIT), waits for the server to exit (bounded; SIGKILL after 15 s),
  // removes the directory. Idempotent; a no-op in a forked child (a death test's), which does not
  // own the server.
  void Stop();

 private:
  bool StartOnFreePort(const PostgresServerOptions& options);
  // Whether conninfo() — TCP, at port_ — reaches the server of `data_directory` (SHOW
  // data_directory); else false with why. Leaves connection_ open to it.
  bool AnswersAs(const std::string& data_directory, std::string* why);

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  pid_t owner_ = -1;  // the process that started it: only it stops it and removes dir_
  std::string error_;
  std::unique_ptr<PgConnection> connection_;
};

}  // namespace tandem::testing

// In a test body: skips the test (GTEST_SKIP, with the reason) where no PostgreSQL server can be
// started — PostgresServer::Unavailable().
#define TANDEM_SKIP_UNLESS_POSTGRES()                                                        \
  do {                                                                                       \
    if (auto tandem_postgres_unavailable = ::tandem::testing::PostgresServer::Unavailable()) \
      GTEST_SKIP() << *tandem_postgres_unavailable;                                          \
  } while (false)
