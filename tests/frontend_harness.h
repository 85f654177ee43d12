// tandem-frontend as a child process of a test (frontend/README.md, docs/frontend.md): its own
// --data-dir in a temporary directory, its SQL listener on port 0 (the port read from its
// --endpoints-file), its local replica under a replica id no other test uses (so a segment
// /dev/shm/tandem.<id> of its own), and the clients' side: a libpq connection string, psql.
//
//   FrontendServer frontend({"--interactive-runtime", "off"});
//   ASSERT_GT(frontend.Port(), 0) << frontend.Log();
//   PgConnection c(frontend.conninfo());
//
// Lifetime: the frontend is spawned tied to the test (parent-death SIGKILL, child_process.h), and
// its local replica is tied to the frontend (its parent-death SIGTERM). The destructor stops it
// with SIGTERM (bounded; SIGKILL after 20 s, a failure), waits (bounded) for its supervisor child
// to be gone, and removes the replica's segment and its .readers file whatever happened — a
// failed test leaves no process and nothing in /dev/shm. The data dir and the log go with the
// temporary directory.
//
// Thread safety: one thread (the test's main thread: the parent-death signal follows the thread
// that forked).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

// tests/CMakeLists.txt defines both (tandem_process_test … TOOLS frontend). Where they are not
// defined (a syntax check), the spawn fails and Port() is 0: every test says so.
#ifndef TANDEM_FRONTEND_BIN
#define TANDEM_FRONTEND_BIN "tandem-frontend (TANDEM_FRONTEND_BIN undefined)"
#endif
#ifndef TANDEM_SUPERVISOR_BIN
#define TANDEM_SUPERVISOR_BIN "tandem-supervisor (TANDEM_SUPERVISOR_BIN undefined)"
#endif

namespace tandem::testing {

// PostgreSQL 15's psql (Debian's), else the one on the PATH's usual place.
inline std::string FrontendPsqlBinary() {
  const char* debian = "/usr/lib/postgresql/15/bin/psql";
  return std::filesystem::exists(debian) ? debian : "/usr/bin/psql";
}

// The clients' environment (psql, psycopg2, libpq in process): nothing of a developer's PG*
// settings, a bounded connect.
inline void FrontendClientEnvironment() {
  for (const char* v :
       {"PGHOST", "PGHOSTADDR", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE", "PGSSLMODE",
        "PGGSSENCMODE", "PGOPTIONS", "PGAPPNAME", "PGPASSWORD", "PGCLIENTENCODING", "PSQLRC"}) {
    unsetenv(v);
  }
  setenv("PGCONNECT_TIMEOUT", "10", 1);
}

// The tandem-supervisor whose parent is `parent` now (from /proc/<pid>/stat and exe), if one runs.
inline std::optional<pid_t> SupervisorChildOf(pid_t parent) {
  if (parent <= 0) return std::nullopt;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != parent || state == 'Z') continue;
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink(entry.path() / "exe", ec);
    if (!ec && exe.filename() == "tandem-supervisor") return std::stoi(name);
  }
  return std::nullopt;
}

class FrontendServer {
 public:
  // `extra`: more flags, after the harness's own (a later flag wins where the frontend's parser
  // lets it: --statement-timeout-ms, --interactive-runtime, --log-level …).
  explicit FrontendServer(const std::vector<std::string>& extra = {}) : dir_("frontend") {
    static int counter = 0;
    replica_id_ = "fes" + std::to_string(getpid()) + "x" + std::to_string(counter++);
    argv_ = {TANDEM_FRONTEND_BIN,
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
             "128MiB",
             "--replica-grace-period",
             "3",
             "--log-level",
             "info"};
    argv_.insert(argv_.end(), extra.begin(), extra.end());
    Spawn();
  }

  // SIGKILLs the frontend and reaps it; its local replica follows (its parent-death signal) —
  // waited for, bounded. False when the replica outlived it.
  bool Kill() {
    const std::optional<pid_t> supervisor = pid_ > 0 ? SupervisorChild() : std::nullopt;
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    return !supervisor || Eventually([&] { return ProcessGone(*supervisor); }, 15s);
  }
  // Starts the frontend again on the same data dir and flags (after Kill): a new SQL port.
  void Restart() {
    std::error_code ec;
    std::filesystem::remove(dir_.File("frontend.endpoints"), ec);
    port_ = 0;
    exit_status_ = -1;
    Spawn();
  }
  // SIGKILLs the local replica (the frontend restarts it). False when none runs.
  bool KillReplica() {
    const std::optional<pid_t> supervisor = SupervisorChild();
    if (!supervisor) return false;
    kill(*supervisor, SIGKILL);
    return true;
  }

  ~FrontendServer() {
    const std::optional<pid_t> supervisor = pid_ > 0 ? SupervisorChild() : std::nullopt;
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      if (!Eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, 20s)) {
        ADD_FAILURE() << "tandem-frontend did not stop on SIGTERM\n" << LogTail();
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ADD_FAILURE() << "tandem-frontend stopped with status " << status << "\n" << LogTail();
      }
    }
    if (supervisor && !Eventually([&] { return ProcessGone(*supervisor); }, 15s)) {
      ADD_FAILURE() << "the frontend's local replica outlived it";
      kill(*supervisor, SIGKILL);
    }
    (void)Eventually([&] { return !std::filesystem::exists(Segment()); }, 10s);
    std::error_code ec;
    std::filesystem::remove(Segment(), ec);
    std::filesystem::remove(Segment() + ".readers", ec);
  }

  FrontendServer(const FrontendServer&) = delete;
  FrontendServer& operator=(const FrontendServer&) = delete;

  // The SQL port from the endpoints file, waited for (60 s at most; the local replica starts
  // first); 0 when it never came or the frontend exited.
  int Port() {
    if (port_ == 0 && pid_ > 0) {
      const std::string file = dir_.File("frontend.endpoints");
      (void)Eventually(
          [&] {
            std::ifstream in(file);
            std::string line;
            if (std::getline(in, line) && line.rfind("sql_listen_addr=", 0) == 0) {
              port_ = std::atoi(line.c_str() + line.rfind(':') + 1);
            }
            return port_ > 0 || Exited();
          },
          60s);
    }
    return port_;
  }

  // libpq's connection string for the frontend's database (any user under trust).
  std::string conninfo() {
    return "host=127.0.0.1 port=" + std::to_string(Port()) +
           " dbname=tandem user=tester connect_timeout=10";
  }

  // psql -X against the frontend with `args` after the connection's (-h -p -d -U), bounded.
  BinaryRun Psql(const std::vector<std::string>& args,
                 std::chrono::milliseconds limit = std::chrono::seconds(120)) {
    FrontendClientEnvironment();
    std::vector<std::string> argv = {"-X", "-h",     "127.0.0.1", "-p",    std::to_string(Port()),
                                     "-d", "tandem", "-U",        "tester"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunBinary(FrontendPsqlBinary(), argv, {.limit = limit, .strip_tandem_env = true});
  }

  pid_t pid() const { return pid_; }
  // The frontend has exited (reaped here): it crashed or refused to start.
  bool Exited() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_status_ = status;
      pid_ = -1;
      return true;
    }
    return false;
  }
  // The wait status of an exit Exited() saw; -1 when it has not exited.
  int exit_status() const { return exit_status_; }

  std::string Segment() const { return "/dev/shm/tandem." + replica_id_; }
  const std::string& data_dir_parent() const { return dir_.path(); }
  std::string Log() const {
    std::ifstream in(dir_.File("log"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The log's last `bytes` bytes, for failure messages.
  std::string LogTail(std::size_t bytes = 6000) const {
    const std::string log = Log();
    return log.size() <= bytes ? log : "…" + log.substr(log.size() - bytes);
  }

  // The frontend's tandem-supervisor child (from /proc), if one runs.
  std::optional<pid_t> SupervisorChild() const { return SupervisorChildOf(pid_); }

 private:
  void Spawn() {
    const int log = open(dir_.File("log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pid_ = SpawnTiedToTest(argv_, ChildEnvironment(true), log, log);
    if (pid_ < 0) {
      const std::string why = "could not execute " + argv_[0] + ": " + std::strerror(errno) + "\n";
      (void)!write(log, why.data(), why.size());
    }
    close(log);
  }

  TempDir dir_;
  std::string replica_id_;
  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = -1;
};

}  // namespace tandem::testing
