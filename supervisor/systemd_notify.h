// The systemd service notification protocol (sd_notify(3)), spoken by the supervisor when systemd
// starts it as a Type=notify service (deploy/systemd/tandem-supervisor@.service, DESIGN §13).
//
// The protocol is plain: newline-separated "NAME=value" assignments in one datagram on the
// AF_UNIX socket named by $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace). We speak
// it directly rather than link libsystemd for the four messages we send:
//   READY=1      once, when /readyz first answers 200 (the segment exists, the endpoint is bound,
//                every runtime reported ready) — systemd then considers the unit started;
//   STATUS=…     a line for `systemctl status` whenever readiness changes (a stalled runtime);
//   WATCHDOG=1   from the supervisor's own loop, every half of $WATCHDOG_USEC, when systemd asked
//                for a watchdog for this process ($WATCHDOG_PID, if set, must be our pid): a loop
//                that stops turning stops the pings and systemd kills the unit;
//   STOPPING=1   when a shutdown begins.
// The variables are removed from the environment at construction so the runtimes (our children)
// never inherit them and never speak for the unit.
//
// Sends never block (MSG_DONTWAIT) and never fail the replica: a notification that cannot be sent
// is logged once and the replica goes on (systemd then times the unit out — its call to make).
// Without $NOTIFY_SOCKET every method does nothing.
//
// Thread: the supervisor's loop thread only.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tandem::supervisor {

class SystemdNotify {
 public:
  using Clock = std::chrono::steady_clock;

  // Reads and unsets NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID. A malformed value is a warning
  // (and that part is off), never an exit: the unit file is systemd's, not the operator's input.
  static SystemdNotify FromEnvironment();
  SystemdNotify() = default;
  SystemdNotify(SystemdNotify&&) noexcept;
  SystemdNotify& operator=(SystemdNotify&&) noexcept;
  ~SystemdNotify();

  bool enabled() const { return fd_ >= 0; }
  // The watchdog's period as systemd set it (the pings go at half of it), if it asked for one.
  std::optional<std::chrono::microseconds> watchdog() const { return watchdog_; }

  // READY=1 with a STATUS line, until one was sent (a failed send is tried again at the next call).
  void Ready(std::string_view status);
  bool ready_sent() const { return ready_sent_; }
  // A STATUS line (sent only when it differs from the last one).
  void SetStatus(std::string_view status);
  // STOPPING=1 with a STATUS line.
  void Stopping(std::string_view status);
  // WATCHDOG=1 when half the watchdog period has passed since the last ping (or none was sent).
  void Tick(Clock::time_point now);

  // Sends `message` as one datagram; the outcome (for tests and the once-only warning).
  Status Send(std::string_view message);

 private:
  int fd_ = -1;
  std::string address_;  // sockaddr_un.sun_path bytes (a leading NUL for the abstract namespace)
  std::optional<std::chrono::microseconds> watchdog_;
  std::optional<Clock::time_point> last_ping_;
  std::string last_status_;
  bool ready_sent_ = false;
  bool warned_ = false;
};

}  // namespace tandem::supervisor
