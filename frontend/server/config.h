// tandem-frontend's configuration: flags with TANDEM_FRONTEND_* environment fallbacks (CLI11, as
// the supervisor's: supervisor/config.h) and its exit codes.
#pragma once

#include <spdlog/common.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/status.h"

namespace tandem::frontend {

// Exit codes (sysexits-style, as the supervisor's; in --help).
inline constexpr int kExitOk = 0;            // clean shutdown on SIGTERM/SIGINT, or --help
inline constexpr int kExitUsage = 64;        // bad flags
inline constexpr int kExitUnavailable = 69;  // could not bind the SQL address, start the local
                                             // replica or write the endpoints file
inline constexpr int kExitSoftware = 70;     // an internal error (a thread could not start)
inline constexpr int kExitConfig = 78;       // impossible configuration (the data dir, a binary)

// The local replica (no --replica): a tandem-supervisor child, these flags passed on.
struct LocalReplicaConfig {
  LocalReplicaConfig() {}
  std::string supervisor_binary;  // default: tandem-supervisor beside tandem-frontend
  std::string replica_id;         // default: "fe-" and a hash of the data dir (unique per dir)
  std::uint32_t workers = 1;
  std::string shm_size = "256MiB";
  std::string interactive_runtime = "on";
  // on: keyed SELECTs read the replica's segment in place, in the frontend (local_reads.h).
  std::string local_reads = "on";
  double grace_period_s = 5;       // SIGTERM, then SIGKILL after this, when the frontend exits
  double startup_timeout_s = 60;   // for its endpoints file
  std::string log_level = "info";  // the frontend's --log-level
};

struct FrontendConfig {
  FrontendConfig() {}
  std::string data_dir;  // absolute
  std::string sql_listen_addr = "127.0.0.1:6875";
  std::string endpoints_file;
  std::vector<std::string> replicas;  // controller endpoints; empty: one local replica
  // CURVE towards the replicas (DESIGN §12): the server's public key file and this client's
  // secret key file, both or neither (a replica listening beyond loopback requires CURVE).
  std::string curve_server_key, curve_client_key;
  LocalReplicaConfig local;
  std::chrono::milliseconds history_window{1000};
  std::chrono::milliseconds statement_timeout{30000};
  std::size_t sql_threads = 8;
  std::size_t max_connections = 100;
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;
};

struct FrontendFlags {
  std::optional<FrontendConfig> config;  // set when the frontend should run
  int exit_code = kExitOk;               // otherwise: exit with this...
  std::string output;                    // ...after printing this (help, or the reason)
};

// Parses argv (and TANDEM_FRONTEND_* environment fallbacks). Bad usage → 64 with the reason.
FrontendFlags ParseFrontendFlags(int argc, const char* const* argv);

// The data dir made (0700, with its parents) when missing; FailedPrecondition (exit 78) when it
// cannot be made or is not a directory.
Status EnsureDirectory(const std::string& path, const std::string& what);

// One line, for the start-up log.
std::string DescribeConfiguration(const FrontendConfig& config);

}  // namespace tandem::frontend
