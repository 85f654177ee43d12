#include "supervisor/controllers.h"

#include <algorithm>

namespace tandem::supervisor {

ControllerSessions::Standing ControllerSessions::StandingOf(const std::string& peer) const {
  if (active_ && *active_ == peer) return Standing::kActive;
  if (std::find(superseded_.begin(), superseded_.end(), peer) != superseded_.end()) {
    return Standing::kSuperseded;
  }
  return Standing::kNoHello;
}

std::optional<std::string> ControllerSessions::Activate(const std::string& peer) {
  std::optional<std::string> previous;
  if (active_ && *active_ != peer) {
    previous = active_;
    superseded_.push_back(*active_);
    if (superseded_.size() > kRememberSuperseded) superseded_.pop_front();
  }
  std::erase(superseded_, peer);
  active_ = peer;
  return previous;
}

bool ControllerSessions::Disconnected(const std::string& peer) {
  std::erase(superseded_, peer);
  if (active_ && *active_ == peer) {
    active_.reset();
    return true;
  }
  return false;
}

}  // namespace tandem::supervisor
