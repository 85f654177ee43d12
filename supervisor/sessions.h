// Sessions on the controller endpoint (DESIGN §3): one controller at a time, and any number of
// observers beside it.
//
// A session is a ZeroMQ peer (routing id) whose Hello was accepted; one session per peer, and a
// newer Hello of the same peer replaces its session (End() it first).
//   * The controller: the newest controller Hello wins. The previous controller is superseded:
//     told so once, and its further commands refused (remembered, bounded).
//   * Observers (Hello{observer: true}): read-only sessions. An observer never supersedes the
//     controller and the controller's Hello never supersedes an observer. Each observer session
//     gets a SessionId of its own, never reused, so that an answer meant for an ended session can
//     never reach a later one.
//   * Writer sessions (Hello{observer: true, writer: true}, DESIGN §9): observers that may also
//     send WriteTable — a service feeding its tables, which never needs the controller's history.
//     In every other way an observer session (Standing::kObserver, an observer's SessionId).
// Commands before a peer's Hello are refused. A peer that says Goodbye, or whose connection drops
// (killed, or silent past the heartbeat timeout), is forgotten; the replica keeps running.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "supervisor/multiplexer.h"

namespace tandem::supervisor {

class Sessions {
 public:
  enum class Standing { kController, kObserver, kNoHello, kSuperseded };

  // What a peer was, when its session ends.
  struct Ended {
    enum class Kind { kNone, kController, kObserver, kSuperseded } kind = Kind::kNone;
    SessionId session = kControllerSession;  // the observer's session, for kObserver
    std::string nonce;                       // of its Hello (kController, kObserver)
  };

  Standing StandingOf(const std::string& peer) const;

  // `peer`'s controller Hello was accepted: it becomes the controller. Returns the controller it
  // supersedes, if another peer was the controller. Observers are not affected.
  // REQUIRES: `peer` has no session (End() it first).
  std::optional<std::string> BecomeController(const std::string& peer, std::string nonce);

  // `peer`'s observer Hello was accepted: a new observer session — a writer session when
  // `writer`. The controller is not affected.
  // REQUIRES: `peer` has no session (End() it first).
  SessionId BecomeObserver(const std::string& peer, std::string nonce, bool writer = false);

  // Forgets `peer` (Goodbye, a lost connection, or before a Hello replaces its session) and
  // returns what it was.
  Ended End(const std::string& peer);

  const std::optional<std::string>& controller() const { return controller_; }
  const std::string& controller_nonce() const { return controller_nonce_; }
  // The session of an observer peer. REQUIRES: StandingOf(peer) == kObserver.
  SessionId ObserverSession(const std::string& peer) const { return observers_.at(peer).session; }
  // Whether an observer peer's session is a writer's. REQUIRES: StandingOf(peer) == kObserver.
  bool IsWriter(const std::string& peer) const { return observers_.at(peer).writer; }
  // The peer of a live observer session; nullptr once it ended.
  const std::string* ObserverPeer(SessionId session) const;
  // Live observers: peer → session.
  struct Observer {
    SessionId session;
    std::string nonce;
    bool writer = false;  // a writer session: it may send WriteTable too
  };
  const std::map<std::string, Observer>& observers() const { return observers_; }

 private:
  static constexpr std::size_t kRememberSuperseded = 64;
  std::optional<std::string> controller_;
  std::string controller_nonce_;
  std::deque<std::string> superseded_;  // most recent last, bounded
  std::map<std::string, Observer> observers_;
  std::map<SessionId, std::string> observer_peers_;  // the inverse of observers_
  SessionId next_observer_ = kControllerSession + 1;
};

}  // namespace tandem::supervisor
