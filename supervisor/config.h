// tandem-supervisor's configuration: flags with TANDEM_* environment fallbacks (CLI11), typed
// parameters (dyncfg.h), and the exit codes every entry point of the supervisor uses.
#pragma once

#include <spdlog/common.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/log.h"
#include "base/status.h"
#include "supervisor/dyncfg.h"
#include "supervisor/guards.h"

namespace tandem::supervisor {

// Exit codes (sysexits-style; documented in --help and docs/flags.md).
inline constexpr int kExitOk = 0;            // clean shutdown on SIGTERM/SIGINT, or --help
inline constexpr int kExitUsage = 64;        // bad flags
inline constexpr int kExitUnavailable = 69;  // could not bind, spawn or create the segment
inline constexpr int kExitChildExited = 70;  // a runtime exited (with any code) unasked
inline constexpr int kExitRuntimeStalled =
    75;                                 // a runtime made no progress for --runtime-stall-kill
inline constexpr int kExitConfig = 78;  // impossible configuration
// 128 + N: a runtime died of signal N.

struct SupervisorConfig {
  std::string replica_id = "r1";
  std::uint32_t workers = 1;
  std::uint32_t interactive_workers = 0;  // 0: same as workers
  std::string controller_listen_addr = "tcp://127.0.0.1:2101";
  std::string internal_http_listen_addr = "127.0.0.1:6878";
  // --endpoints-file: once both are bound, the addresses actually bound (port 0 in either: the
  // kernel's choice) are written here atomically, removed at exit unless another process has
  // replaced the file since. Empty: none.
  std::string endpoints_file;
  std::uint64_t shm_size = 256ull << 20;
  std::string shm_name;  // default "tandem.<replica-id>"
  std::uint32_t slots_per_row = 256;
  // The peek fast path (DESIGN §14; shm/peek_ring.h): each peek ring's bytes in the segment, a
  // power of two of at least 4096; 0: peeks and their answers take the runtime channel only.
  std::uint64_t peek_ring_bytes = 256 << 10;
  std::string
      runtime_dir;  // parent of the replica's 0700 directory; default $XDG_RUNTIME_DIR or /tmp
  double grace_period_s = 5;
  double startup_timeout_s = 30;
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;
  std::string worker_binary;  // default: tandem-worker beside this binary
  bool keep_segment_on_crash = false;
  // --reader-group: a group (name or number) whose members may read the replica in place with
  // LocalReader (DESIGN §11): the segment becomes 0640 and the reader table 0660, that group's.
  // Empty: only the replica's user may.
  std::string reader_group;
  // CURVE on the controller endpoint (controller_auth.h): both set, or neither.
  std::string curve_secret_key;          // the server's secret key file
  std::string curve_authorized_keys;     // a directory of client public keys
  bool allow_insecure_endpoint = false;  // a non-loopback endpoint without CURVE
  // Where tables keep their logs (DESIGN §9), absolute; passed to the maintenance (or solo)
  // runtime as --data-dir. Empty: none (a table source is refused).
  std::string data_dir;
  ConfigSet params;
  Guards guards;  // guards.h: fault injection, bounds, the stall watch

  bool curve() const { return !curve_secret_key.empty(); }

  bool two_runtime() const { return params.GetBool(kEnableInteractiveRuntime); }
  std::uint32_t effective_interactive_workers() const {
    return interactive_workers == 0 ? workers : interactive_workers;
  }
};

struct FlagsOutcome {
  std::optional<SupervisorConfig> config;  // set when the supervisor should run
  int exit_code = kExitOk;                 // otherwise: exit with this...
  std::string output;                      // ...after printing this (help, or the reason)
};

// Parses argv (and TANDEM_* environment fallbacks). Bad usage → exit 64 with the reason.
FlagsOutcome ParseSupervisorFlags(int argc, const char* const* argv);

// Checks what flags alone cannot: equal worker counts in two-runtime mode, a runtime-socket path
// that fits, a worker binary that exists. The reason for exit 78 (or 64) when not OK.
Status CheckConfiguration(const SupervisorConfig& config);

// The group --reader-group names (a name, or a number): NotFound when there is none.
Result<gid_t> LookupGroup(const std::string& group);

// The --data-dir as the supervisor starts: made (with its parents, 0700) when missing.
// FailedPrecondition (exit 78) when it cannot be made or is not a directory.
Status EnsureDataDir(const std::string& path);

// "256MiB", "1GiB", "64M", "4096" → bytes.
Result<std::uint64_t> ParseByteSize(std::string_view text);

// One line per setting, for the start-up log.
std::string DescribeConfiguration(const SupervisorConfig& config);

}  // namespace tandem::supervisor
