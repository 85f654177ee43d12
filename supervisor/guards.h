// What protects the replica from its callers and from its own runtimes (DESIGN §12):
// fault injection only when the supervisor was started to allow it, bounds on what one
// controller session or HTTP client may hold, and the runtime stall watch. Flags of their own,
// kept apart from the rest of the configuration (config.h), which calls AddGuardFlags and
// CheckGuards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace CLI {
class App;
}

namespace tandem::supervisor {

struct Guards {
  // Parameters that make the replica fail on purpose (debug_abort_worker) exist only with this.
  bool enable_fault_injection = false;
  // A runtime whose progress counter (shm RuntimeEntry::progress) has not moved for this long
  // makes the replica not ready; for stall_kill_s, takes it down (shared fate, exit 75).
  double runtime_stall_timeout_s = 10;
  double runtime_stall_kill_s = 60;
  // Peeks forwarded and not yet answered: per session, and over all sessions (observer sessions
  // are not bounded in number; the total is what bounds them together).
  std::uint32_t max_peeks_per_session = 1000;
  std::uint32_t max_peeks_in_flight = 10000;
  // WriteTables forwarded and not yet answered, over all sessions (DESIGN §9): more are refused
  // ("too_many_writes"), so a writer faster than the disk cannot queue without bound.
  std::uint32_t max_writes_in_flight = 10000;
  // Per table: bytes (encoded) of writes admitted whose index has not taken them yet — queued,
  // committing, or acknowledged and waiting for the table's dataflow (paused on a full segment,
  // say). Beyond it the maintenance runtime answers new writes with an error: a table that cannot
  // make progress never holds acknowledged writes in memory without bound.
  std::uint64_t max_table_backlog_bytes = std::uint64_t{64} << 20;
  // The internal HTTP endpoint: connections open at once, and how long one may take to send its
  // request (a connection past it is closed).
  std::uint32_t http_max_connections = 64;
  double http_request_timeout_s = 5;
};

// Adds the guards' flags to the supervisor's command line.
void AddGuardFlags(CLI::App& app, Guards& guards);
// What CLI11's per-flag ranges cannot check (the kill timeout beyond the stall timeout).
// InvalidArgument (exit 64) with the reason.
Status CheckGuards(const Guards& guards);
// " name=value" for each, for the start-up log.
std::string DescribeGuards(const Guards& guards);

// Parameters that exist only with --enable-fault-injection.
bool IsFaultInjectionParam(std::string_view name);

// "12.3": seconds, for the stall watch's messages (and /readyz).
std::string SecondsText(double s);

}  // namespace tandem::supervisor
