#include "supervisor/guards.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>

#include "supervisor/dyncfg.h"

namespace tandem::supervisor {

void AddGuardFlags(CLI::App& app, Guards& g) {
  app.add_flag("--enable-fault-injection", g.enable_fault_injection,
               "allow fault-injection parameters (debug_abort_worker); without it they are "
               "refused, at start (exit 64) and in UpdateConfiguration (CommandError)")
      ->envname("TANDEM_ENABLE_FAULT_INJECTION");
  // The stall timeout is above the runtimes' longest idle sleep (1 s) with room to spare: an idle
  // runtime reports progress at least once a second.
  app.add_option("--runtime-stall-timeout", g.runtime_stall_timeout_s,
                 "seconds a runtime may make no progress before the replica is not ready")
      ->envname("TANDEM_RUNTIME_STALL_TIMEOUT")
      ->check(CLI::Range(2.0, 3600.0))
      ->capture_default_str();
  app.add_option("--runtime-stall-kill", g.runtime_stall_kill_s,
                 "seconds a runtime may make no progress before the replica is taken down "
                 "(exit 75); more than --runtime-stall-timeout")
      ->envname("TANDEM_RUNTIME_STALL_KILL")
      ->check(CLI::Range(2.0, 86400.0))
      ->capture_default_str();
  app.add_option("--max-peeks-per-session", g.max_peeks_per_session,
                 "peeks one session may have in flight; more are refused (CommandError)")
      ->envname("TANDEM_MAX_PEEKS_PER_SESSION")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--max-peeks-in-flight", g.max_peeks_in_flight,
                 "peeks all sessions together may have in flight; more are refused")
      ->envname("TANDEM_MAX_PEEKS_IN_FLIGHT")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--max-writes-in-flight", g.max_writes_in_flight,
                 "table writes all sessions together may have in flight (forwarded, not yet "
                 "acknowledged); more are refused (CommandError)")
      ->envname("TANDEM_MAX_WRITES_IN_FLIGHT")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--max-table-backlog-bytes", g.max_table_backlog_bytes,
                 "bytes of writes one table may hold that its index has not taken yet (its "
                 "dataflow paused on a full segment, say); beyond it writes are refused")
      ->envname("TANDEM_MAX_TABLE_BACKLOG_BYTES")
      ->check(CLI::Range(std::uint64_t{1} << 20, std::uint64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--http-max-connections", g.http_max_connections,
                 "internal HTTP connections open at once; a newer one closes the oldest")
      ->envname("TANDEM_HTTP_MAX_CONNECTIONS")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option(
         "--http-request-timeout", g.http_request_timeout_s,
         "seconds an internal HTTP exchange (request and answer) may take; then it is closed")
      ->envname("TANDEM_HTTP_REQUEST_TIMEOUT")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
}

Status CheckGuards(const Guards& g) {
  if (g.runtime_stall_kill_s <= g.runtime_stall_timeout_s) {
    return Status::InvalidArgument("--runtime-stall-kill (" +
                                   std::to_string(g.runtime_stall_kill_s) +
                                   " s) must be longer than --runtime-stall-timeout (" +
                                   std::to_string(g.runtime_stall_timeout_s) + " s)");
  }
  if (g.max_peeks_in_flight < g.max_peeks_per_session) {
    return Status::InvalidArgument("--max-peeks-in-flight (" +
                                   std::to_string(g.max_peeks_in_flight) +
                                   ") must be at least --max-peeks-per-session (" +
                                   std::to_string(g.max_peeks_per_session) + ")");
  }
  return Status::Ok();
}

std::string DescribeGuards(const Guards& g) {
  std::ostringstream s;
  s << " enable_fault_injection=" << (g.enable_fault_injection ? "true" : "false")
    << " runtime_stall_timeout_s=" << g.runtime_stall_timeout_s
    << " runtime_stall_kill_s=" << g.runtime_stall_kill_s
    << " max_peeks_per_session=" << g.max_peeks_per_session
    << " max_peeks_in_flight=" << g.max_peeks_in_flight
    << " max_writes_in_flight=" << g.max_writes_in_flight
    << " max_table_backlog_bytes=" << g.max_table_backlog_bytes
    << " http_max_connections=" << g.http_max_connections
    << " http_request_timeout_s=" << g.http_request_timeout_s;
  return s.str();
}

bool IsFaultInjectionParam(std::string_view name) { return name == kDebugAbortWorker; }

std::string SecondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace tandem::supervisor
