// The sql scenario's PostgreSQL: a private PostgreSQL 15 server of the run's own — the tests'
// PostgresServer (tests/postgres_server.h says how: Debian's binaries, as user postgres when run
// as root, a data directory in a temporary directory, its own loopback port, trust; fsync off,
// which a read does not notice), stopped and removed when this goes, and taken down by its
// parent-death signal if tandem-bench dies. Construct it on the main thread (that signal follows
// the thread that started the server).
//
// Built only beside the tests: tests/CMakeLists.txt compiles postgres_peer.cc into
// tandem_bench_postgres, links it into tandem-bench and defines TANDEM_BENCH_POSTGRES; without the
// tests (BUILD_TESTING off) the scenario skips PostgreSQL with a note. A library of its own, so
// the test code's settings (gtest, its optimisation) stay out of the bench's code.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

namespace tandem::testing {
class PostgresServer;
}

namespace tandem::bench {

class PostgresPeer {
 public:
  // Why no server can be started on this machine (PostgreSQL 15 not installed, …); nullopt when
  // one can.
  static std::optional<std::string> Unavailable();
  // Starts the server; throws std::runtime_error with why (and its log) when it did not start.
  PostgresPeer();
  ~PostgresPeer();
  PostgresPeer(const PostgresPeer&) = delete;
  PostgresPeer& operator=(const PostgresPeer&) = delete;

  // libpq's connection string: TCP on 127.0.0.1, database postgres, user postgres.
  std::string conninfo() const;
  pid_t pid() const;  // the postmaster's

 private:
  std::unique_ptr<testing::PostgresServer> server_;
};

}  // namespace tandem::bench
