#include "supervisor/sessions.h"

#include <algorithm>

#include "base/check.h"

namespace tandem::supervisor {

Sessions::Standing Sessions::StandingOf(const std::string& peer) const {
  if (controller_ && *controller_ == peer) return Standing::kController;
  if (observers_.count(peer)) return Standing::kObserver;
  if (std::find(superseded_.begin(), superseded_.end(), peer) != superseded_.end()) {
    return Standing::kSuperseded;
  }
  return Standing::kNoHello;
}

std::optional<std::string> Sessions::BecomeController(const std::string& peer, std::string nonce) {
  TANDEM_CHECK(StandingOf(peer) == Standing::kNoHello, "a peer has one session at a time");
  std::optional<std::string> previous;
  if (controller_) {
    previous = controller_;
    superseded_.push_back(*controller_);
    if (superseded_.size() > kRememberSuperseded) superseded_.pop_front();
  }
  controller_ = peer;
  controller_nonce_ = std::move(nonce);
  return previous;
}

SessionId Sessions::BecomeObserver(const std::string& peer, std::string nonce, bool writer) {
  TANDEM_CHECK(StandingOf(peer) == Standing::kNoHello, "a peer has one session at a time");
  const SessionId session = next_observer_++;
  observers_[peer] = {session, std::move(nonce), writer};
  observer_peers_[session] = peer;
  return session;
}

Sessions::Ended Sessions::End(const std::string& peer) {
  Ended ended;
  if (controller_ && *controller_ == peer) {
    ended.kind = Ended::Kind::kController;
    ended.nonce = std::move(controller_nonce_);
    controller_.reset();
    controller_nonce_.clear();
  } else if (auto it = observers_.find(peer); it != observers_.end()) {
    ended.kind = Ended::Kind::kObserver;
    ended.session = it->second.session;
    ended.nonce = std::move(it->second.nonce);
    observer_peers_.erase(it->second.session);
    observers_.erase(it);
  } else if (auto s = std::find(superseded_.begin(), superseded_.end(), peer);
             s != superseded_.end()) {
    ended.kind = Ended::Kind::kSuperseded;
    superseded_.erase(s);
  }
  return ended;
}

const std::string* Sessions::ObserverPeer(SessionId session) const {
  auto it = observer_peers_.find(session);
  return it == observer_peers_.end() ? nullptr : &it->second;
}

}  // namespace tandem::supervisor
