// Controller sessions: one active controller at a time (the newest Hello wins).
//
// A controller is a ZeroMQ peer (routing id). Commands before its Hello are refused; after a
// newer Hello from another peer it is superseded: told so once, and its further commands refused.
// A peer whose connection drops (killed, or silent past the heartbeat timeout) is forgotten; the
// replica keeps running and waits for the next Hello and the replay of history.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <deque>
#include <optional>
#include <set>
#include <string>

namespace tandem::supervisor {

class ControllerSessions {
 public:
  enum class Standing { kActive, kNoHello, kSuperseded };

  Standing StandingOf(const std::string& peer) const;

  // `peer`'s Hello was accepted: it becomes the active controller. Returns the controller it
  // supersedes, if another one was active.
  std::optional<std::string> Activate(const std::string& peer);

  // The connection of `peer` ended. True if it was the active controller.
  bool Disconnected(const std::string& peer);

  const std::optional<std::string>& active() const { return active_; }

 private:
  static constexpr std::size_t kRememberSuperseded = 64;
  std::optional<std::string> active_;
  std::deque<std::string> superseded_;  // most recent last, bounded
};

}  // namespace tandem::supervisor
