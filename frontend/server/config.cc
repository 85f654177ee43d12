#include "frontend/server/config.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

namespace tandem::frontend {

namespace {

constexpr char kFooter[] =
    "\nWith no --replica, the frontend runs one local replica itself: tandem-supervisor (beside\n"
    "this executable, or --supervisor-binary) as its child, with --data-dir DATA_DIR/replica,\n"
    "its endpoints on ports the kernel chooses, and --workers, --shm-size, --interactive-runtime\n"
    "and --log-level passed on; restarted when it dies, stopped when the frontend exits.\n"
    "\nExit codes:\n"
    "  0        clean shutdown (SIGTERM/SIGINT), or --help\n"
    "  64       bad usage (unknown flag, malformed value, a --replica that is no endpoint)\n"
    "  69       could not bind the SQL address (in use), start the local replica, or write\n"
    "           the endpoints file\n"
    "  70       internal error\n"
    "  78       impossible configuration (a --data-dir that cannot be created or is not a\n"
    "           directory, no tandem-supervisor executable)\n";

std::string Absolute(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace

Status EnsureDirectory(const std::string& path, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status)) {
    if (std::filesystem::is_directory(status)) return Status::Ok();
    return Status::FailedPrecondition(what + " " + path + " exists and is not a directory");
  }
  const mode_t old = umask(0077);
  std::filesystem::create_directories(path, ec);
  umask(old);
  if (ec) {
    return Status::FailedPrecondition("could not create " + what + " " + path + ": " +
                                      ec.message());
  }
  return Status::Ok();
}

FrontendFlags ParseFrontendFlags(int argc, const char* const* argv) {
  FrontendConfig c;
  CLI::App app{
      "tandem-frontend: SQL over the PostgreSQL wire protocol (psql, any PostgreSQL driver) in\n"
      "front of Tandem replicas, and their controller: it replays its history to every replica\n"
      "that connects or reconnects, times reads and writes, and compacts (DESIGN §15).",
      "tandem-frontend"};
  app.footer(kFooter);
  app.get_formatter()->column_width(40);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  std::string log_level = "info", log_format = "text";
  std::int64_t history_window_ms = 1000, statement_timeout_ms = 30000;
  app.add_option("--data-dir", c.data_dir,
                 "DIR: the frontend's data (created 0700 with its parents if missing); the local "
                 "replica's data is DIR/replica")
      ->envname("TANDEM_FRONTEND_DATA_DIR")
      ->required();
  app.add_option("--sql-listen-addr", c.sql_listen_addr,
                 "HOST:PORT the PostgreSQL listener binds (port 0: the kernel's choice); "
                 "loopback only (authentication is trust)")
      ->envname("TANDEM_FRONTEND_SQL_LISTEN_ADDR")
      ->capture_default_str();
  app.add_option("--endpoints-file", c.endpoints_file,
                 "once listening, write the address bound here (sql_listen_addr=HOST:PORT), "
                 "atomically; removed at exit unless replaced since")
      ->envname("TANDEM_FRONTEND_ENDPOINTS_FILE");
  app.add_option("--replica", c.replicas,
                 "ENDPOINT: the controller endpoint of a replica (tcp://HOST:PORT); repeatable, "
                 "replicas of one definition. None: one local replica (below)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--curve-server-key", c.curve_server_key,
                 "FILE: the replicas' CURVE public key (tandem-ctl keygen), with "
                 "--curve-client-key, for replicas that require CURVE")
      ->envname("TANDEM_CURVE_SERVER_KEY");
  app.add_option("--curve-client-key", c.curve_client_key,
                 "FILE: this frontend's CURVE secret key (its .pub authorized on the replicas)")
      ->envname("TANDEM_CURVE_CLIENT_KEY");
  app.add_option("--history-window-ms", history_window_ms,
                 "how far behind the latest readable time each index stays readable "
                 "(compaction's retained history)")
      ->envname("TANDEM_FRONTEND_HISTORY_WINDOW_MS")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{86400000}))
      ->capture_default_str();
  app.add_option("--statement-timeout-ms", statement_timeout_ms,
                 "how long a statement waits for a replica or a readable time")
      ->envname("TANDEM_FRONTEND_STATEMENT_TIMEOUT_MS")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400000}))
      ->capture_default_str();
  app.add_option("--sql-threads", c.sql_threads,
                 "threads that run statements (each may wait for a replica)")
      ->envname("TANDEM_FRONTEND_SQL_THREADS")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--max-connections", c.max_connections, "PostgreSQL sessions at once")
      ->envname("TANDEM_FRONTEND_MAX_CONNECTIONS")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->envname("TANDEM_LOG_LEVEL")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text|json")
      ->envname("TANDEM_LOG_FORMAT")
      ->capture_default_str();
  // The local replica's.
  app.add_option("--supervisor-binary", c.local.supervisor_binary,
                 "the local replica's tandem-supervisor (default: beside this executable)")
      ->envname("TANDEM_FRONTEND_SUPERVISOR_BINARY");
  app.add_option("--replica-id", c.local.replica_id,
                 "the local replica's id, which names its segment (default: fe- and a hash of "
                 "the data dir)")
      ->envname("TANDEM_FRONTEND_REPLICA_ID");
  app.add_option("--workers", c.local.workers, "the local replica's worker threads per runtime")
      ->envname("TANDEM_WORKERS")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--shm-size", c.local.shm_size, "the local replica's shared-memory segment")
      ->envname("TANDEM_SHM_SIZE")
      ->capture_default_str();
  app.add_option("--interactive-runtime", c.local.interactive_runtime,
                 "on|off: the local replica's interactive runtime (off: one solo runtime)")
      ->envname("TANDEM_INTERACTIVE_RUNTIME")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--local-reads", c.local.local_reads,
                 "on|off: a SELECT one index answers by key is read in place from the local "
                 "replica's segment, in this process (off: through the replica, over ZeroMQ)")
      ->envname("TANDEM_FRONTEND_LOCAL_READS")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--replica-grace-period", c.local.grace_period_s,
                 "seconds the local replica gets to exit after SIGTERM before SIGKILL")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--replica-startup-timeout", c.local.startup_timeout_s,
                 "seconds the local replica gets to bind its endpoints")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();

  FrontendFlags out;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out.output = app.help();
    out.exit_code = kExitOk;
    return out;
  } catch (const CLI::ParseError& e) {
    out.output = std::string("tandem-frontend: ") + e.what() + "\nRun with --help for usage.";
    out.exit_code = kExitUsage;
    return out;
  }
  auto usage = [&](const std::string& why) {
    out.output = "tandem-frontend: " + why + "\nRun with --help for usage.";
    out.exit_code = kExitUsage;
    return out;
  };
  auto level = ParseLogLevel(log_level);
  if (!level.ok()) return usage("--log-level: " + level.status().message());
  c.log_level = *level;
  c.local.log_level = log_level;
  auto format = ParseLogFormat(log_format);
  if (!format.ok()) return usage("--log-format: " + format.status().message());
  c.log_format = *format;
  if (c.data_dir.empty()) return usage("--data-dir is empty");
  c.data_dir = Absolute(c.data_dir);
  if (!c.endpoints_file.empty()) c.endpoints_file = Absolute(c.endpoints_file);
  std::set<std::string> seen;
  for (const auto& r : c.replicas) {
    if (r.empty()) return usage("--replica is empty");
    if (!seen.insert(r).second) return usage("--replica " + r + " is given twice");
  }
  if (c.curve_server_key.empty() != c.curve_client_key.empty()) {
    return usage("--curve-server-key and --curve-client-key go together");
  }
  if (!c.curve_server_key.empty() && c.replicas.empty()) {
    return usage("--curve-server-key is for --replica endpoints (the local replica is loopback)");
  }
  c.history_window = std::chrono::milliseconds(history_window_ms);
  c.statement_timeout = std::chrono::milliseconds(statement_timeout_ms);
  if (c.local.replica_id.empty()) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(c.data_dir));
    c.local.replica_id = "fe-" + std::string(hash).substr(0, 12);
  }
  out.config = std::move(c);
  return out;
}

std::string DescribeConfiguration(const FrontendConfig& c) {
  std::ostringstream o;
  o << "data_dir=" << c.data_dir << " sql_listen_addr=" << c.sql_listen_addr
    << " endpoints_file=" << (c.endpoints_file.empty() ? "none" : c.endpoints_file)
    << " history_window_ms=" << c.history_window.count()
    << " statement_timeout_ms=" << c.statement_timeout.count() << " sql_threads=" << c.sql_threads
    << " max_connections=" << c.max_connections;
  if (c.replicas.empty()) {
    o << " replica=local(id=" << c.local.replica_id << " workers=" << c.local.workers
      << " shm_size=" << c.local.shm_size << " interactive_runtime=" << c.local.interactive_runtime
      << " local_reads=" << c.local.local_reads << ")";
  } else {
    for (const auto& r : c.replicas) o << " replica=" << r;
  }
  return o.str();
}

}  // namespace tandem::frontend
