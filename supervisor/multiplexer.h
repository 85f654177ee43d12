// The multiplexer (DESIGN §3.1): the sessions' command streams in front of the runtimes.
//
// Two-runtime mode: every command except Peek/CancelPeek and WriteTable goes to BOTH runtimes,
// maintenance first, in arrival order — so the create of a reader and every later compaction of
// what it reads are on one ordered stream in the reading runtime (the holds invariant, DESIGN
// §4.1, needs that). Peek and CancelPeek go to interactive only; WriteTable to maintenance only
// (DESIGN §9: the runtime that runs the table sources; holds do not depend on writes). Solo mode:
// everything to the solo runtime.
// Responses are forwarded as they come; each runtime reports frontiers only for what it renders,
// so the two streams never overlap.
//
// Sessions: the controller's commands, the Peek/CancelPeek of observer sessions (DESIGN §3;
// supervisor/sessions.h) and the WriteTable of writer sessions share the runtime streams. A peek's
// answer goes to the session that sent it alone: each session's uuids are put into a namespace of
// its own on the way in (WireUuid) and mapped back on the way out, so two sessions' uuids never
// collide:
//   * the controller: its uuid as sent — unless it begins with '~', then "~c:" + uuid (rare, and
//     the common case costs no re-encoding);
//   * observer session n: "~o<n>:" + uuid.
//
// Writes: every WriteTable forwarded gets a wire uuid of its own, WriteWireUuid(n, uuid) with n
// counting the writes forwarded in the supervisor's life (ipc/model.h), so that two sessions'
// writes with one uuid (a retry from another session) each get their own answer; the runtime
// strips the prefix (the client's uuid is the idempotency key). Its WriteResponse is mapped back
// to the client's uuid and goes to the session that sent it alone.
//
// Subscribes (DESIGN §10): Subscribe and CancelSubscribe go to interactive only (solo: the solo
// runtime), like peeks. Every Subscribe forwarded gets a wire uuid of its own,
// SubscribeWireUuid(session, n, uuid) with n counting the subscribes forwarded in the supervisor's
// life (ipc/model.h): an answer can never be taken for one of an earlier subscribe with the same
// uuid (one the supervisor ended itself). A CancelSubscribe is sent as the live subscribe's wire
// uuid; one for no live subscribe of that session is forwarded nowhere. SubscribeBatch and
// SubscribeEnd are mapped back to the client's uuid and go to that session alone. Exactly one
// SubscribeEnd per forwarded Subscribe reaches its session: the runtime's, or one the supervisor
// makes when it ends the subscribe itself — TOO_SLOW (TooSlow: the session's pipe refused a
// batch), SESSION_ENDED for the controller's subscribes when its session ends (Hello again,
// superseded, Goodbye, disconnected), delivered after the controller's next HelloAccepted; an
// observer's subscribes just end with its session. A subscribe the supervisor ended is cancelled
// in the runtime, and its later answers dropped (and counted) — remembered kOrphanLifetime.
// Ends that could not be sent at once wait in order (FlushEnds) until their session's pipe
// takes them or the session ends.
//
// State: no per-dataflow state. Per session it tracks the peeks and writes it forwarded (by wire
// uuid), to time them and to enforce exactly one answer per peek or write towards its session: a
// second response, or one for a peek or write of an ended session or of the controller before its
// last Hello, is dropped (and counted). Writes cannot be cancelled: an ended session's writes are
// still made, only their answers dropped. The controller's Hello resets the controller's peeks and
// writes only; an observer's Hello is never forwarded (it starts no epoch).
//
// Where it sits (supervisor/README.md walks it): the controller endpoint calls Forward with a
// command it admitted; Forward sends it on the runtimes' streams (RuntimeStream: the supervisor's
// RuntimeLinks, which the multiplexer holds and which never call back). A response comes in
// through OnResponse, called by the supervisor's loop with what a link received; its Verdict says
// where it goes, and the loop hands both to the controller endpoint.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/role.h"
#include "ipc/codec.h"
#include "ipc/model.h"

namespace tandem::supervisor {

// Sessions and their peek uuids on the wire: ipc/model.h. Observer sessions are never renumbered.
using ipc::kControllerSession;
using ipc::SessionId;
using ipc::UuidAsSent;
using ipc::WireUuid;

// One runtime's ordered command stream, as the multiplexer sees it: the supervisor's RuntimeLink
// (runtime_link.h), or a fake in tests. The multiplexer calls it; it never calls back.
class RuntimeStream {
 public:
  virtual ~RuntimeStream() = default;
  // Sends an encoded command to the runtime, after every command sent before it. `peek`: a Peek
  // or CancelPeek, which may take the peek fast path (DESIGN §14).
  virtual void Send(const std::string& encoded, bool peek) = 0;
};

class Multiplexer {
 public:
  using Clock = std::chrono::steady_clock;

  // Solo mode: every command to `solo`. The streams outlive the multiplexer.
  explicit Multiplexer(RuntimeStream& solo) : solo_(&solo) {}
  // Two-runtime mode (DESIGN §3.1). The streams outlive the multiplexer.
  Multiplexer(RuntimeStream& maintenance, RuntimeStream& interactive)
      : maintenance_(&maintenance), interactive_(&interactive) {}

  // The runtimes `command` goes to, in the order it is sent.
  std::vector<Role> Route(const ipc::pb::Command& command) const;

  // Sends a validated command (and its encoding) of `session` to its runtimes; a Peek's or
  // CancelPeek's uuid is put into the session's namespace first, a WriteTable's gets its wire
  // uuid. The controller's Hello resets the controller's peeks and writes first.
  // A Subscribe gets its wire uuid (REQUIRES: as_of set — the supervisor filled in "latest" — and
  // no live subscribe of `session` with its uuid); a CancelSubscribe of no live subscribe is sent
  // nowhere.
  // REQUIRES: an observer session sends only Peek, CancelPeek, Subscribe, CancelSubscribe and
  // WriteTable.
  void Forward(const ipc::pb::Command& command, const std::string& encoded, Clock::time_point now,
               SessionId session = kControllerSession);

  // `session` ended (Goodbye, disconnected, replaced): its peeks that are still waiting are
  // cancelled in the runtimes, and their answers dropped. They count in outstanding_peeks() until
  // those answers come (a session that floods peeks and leaves must not escape
  // --max-peeks-in-flight), but no longer in the session's own count — and at most
  // kOrphanLifetime, in case an answer never comes (a runtime drops the peeks a controller's
  // replay buffered when that controller says Hello again). Its writes waiting for their answers
  // are not cancelled (they may be durable already); their answers are dropped, and they count in
  // outstanding_writes() the same way. Its live subscribes are cancelled in the runtimes and
  // their later answers dropped; the controller's are owed SubscribeEnd{SESSION_ENDED} (FlushEnds
  // sends them once the supervisor has a controller again), an observer's end unannounced (its
  // Ends still waiting are dropped too).
  void EndSession(SessionId session, Clock::time_point now = Clock::now());
  // Forgets the ended sessions' peeks older than kOrphanLifetime (Forward does it too).
  void ExpireOrphans(Clock::time_point now);
  static constexpr std::chrono::seconds kOrphanLifetime{30};

  struct Verdict {
    bool forward = true;
    // For a PeekResponse: the session it answers (its uuid is mapped back to the one that session
    // sent). Everything else is the controller's, except Frontiers, which are everyone's.
    SessionId to = kControllerSession;
    // For the first PeekResponse of a tracked peek: how long the peek took.
    std::optional<std::chrono::nanoseconds> peek_latency;
    // For a WriteResponse (its uuid mapped back to the client's) of a tracked write: how long
    // from forwarding the write to its answer.
    std::optional<std::chrono::nanoseconds> write_latency;
    const char* drop_reason = nullptr;  // set when !forward
    // The response was changed (a uuid mapped back): its encoding as the runtime sent it is stale.
    bool rewritten = false;
    // For a SubscribeBatch or SubscribeEnd forwarded (its uuid mapped back to the client's): the
    // subscribe's wire uuid. After a SubscribeBatch, the supervisor says Delivered() or
    // TooSlow(); a SubscribeEnd it could not send goes to DeferEnd().
    std::string subscribe;
  };
  Verdict OnResponse(Role from, ipc::pb::Response* response, Clock::time_point now);

  std::size_t outstanding_peeks() const { return peeks_.size(); }
  // Peeks of `session` forwarded and not answered yet.
  std::size_t outstanding_peeks(SessionId session) const {
    auto it = per_session_.find(session);
    return it == per_session_.end() ? 0 : it->second;
  }
  // Writes forwarded and not answered yet, of every session (ended ones' too, see EndSession).
  std::size_t outstanding_writes() const { return writes_.size(); }
  // ---- Subscribes
  // The live subscribe of `session` with client uuid `uuid`, if any.
  bool Subscribed(SessionId session, const std::string& uuid) const;
  // Subscribed, or ended with its End still waiting for the session's pipe: a new Subscribe may
  // not take the uuid yet.
  bool UuidInUse(SessionId session, const std::string& uuid) const;
  // Live subscribes of `session` (those the supervisor or the runtime ended no longer count).
  std::size_t live_subscribes(SessionId session) const {
    auto it = subscribes_by_session_.find(session);
    return it == subscribes_by_session_.end() ? 0 : it->second.size();
  }
  std::size_t live_subscribes() const { return subscribes_.size(); }
  // The SubscribeBatch of live subscribe `wire` (a Verdict's `subscribe`) was taken by its
  // session's pipe: its progress is `upper`.
  void Delivered(const std::string& wire, std::uint64_t upper, std::size_t updates);
  // Its session's pipe refused a SubscribeBatch of live subscribe `wire`: it ends TOO_SLOW
  // (cancelled in the runtime, its later answers dropped, its End waiting for FlushEnds).
  void TooSlow(const std::string& wire, Clock::time_point now);
  // A SubscribeEnd (mapped back) for `session` that its pipe did not take: sent by FlushEnds.
  void DeferEnd(SessionId session, ipc::pb::Response end);
  // Tries to send every End waiting, oldest first, with `send` (false: not now — that session's
  // later Ends wait too).
  void FlushEnds(const std::function<bool(SessionId, const ipc::pb::Response&)>& send);
  std::size_t pending_ends() const { return pending_ends_.size(); }
  // The Ends waiting for `session`'s pipe (they count against its subscribe limit).
  std::size_t pending_ends(SessionId session) const;
  // What /metrics shows of a live subscribe.
  struct SubscribeInfo {
    std::string wire_uuid;
    std::string id;           // the index
    std::uint64_t delivered;  // the upper delivered so far (the first batch's lower before any)
  };
  std::vector<SubscribeInfo> LiveSubscribes() const;
  // Subscribes ended, by reason ("up_to", "canceled", …, "too_slow", "session_ended"): each
  // forwarded Subscribe counts once, when the supervisor stops tracking it as live.
  const std::map<std::string, std::uint64_t>& subscribe_ends() const { return subscribe_ends_; }

  // True while the peek `uuid` (as `session` sent it) waits for its answer.
  bool Waiting(SessionId session, const std::string& uuid) const {
    auto it = peeks_.find(WireUuid(session, uuid));
    return it != peeks_.end() && !it->second.orphaned;
  }

 private:
  struct Tracked {
    Clock::time_point forwarded_at;
    SessionId session;
    bool orphaned = false;  // its session ended: cancelled, its answer to be dropped
  };
  // The peeks EndSession orphaned, oldest first (some may be answered or replaced since).
  std::deque<std::pair<Clock::time_point, std::string>> orphans_;
  // The runtimes' streams: solo_, or maintenance_ and interactive_.
  RuntimeStream* solo_ = nullptr;
  RuntimeStream* maintenance_ = nullptr;
  RuntimeStream* interactive_ = nullptr;
  // Sends `bytes` on the stream of `to`.
  void SendTo(Role to, const std::string& bytes, bool peek);
  void Untrack(SessionId session);
  struct Subscription {
    SessionId session;
    std::string client_uuid;
    std::string id;
    std::uint64_t delivered = 0;
    bool cancel_sent = false;  // the session's CancelSubscribe was forwarded
  };
  Verdict OnSubscribeResponse(ipc::pb::Response* response);
  // Stops tracking live subscribe `it` (counts its end by `reason`); when `cancel`, sends its
  // CancelSubscribe and drops its later answers (a tombstone, for `drop_reason`).
  void EndSubscribe(std::unordered_map<std::string, Subscription>::iterator it,
                    const std::string& reason, bool cancel, const char* drop_reason,
                    Clock::time_point now);
  void ForwardCancelSubscribe(const std::string& wire);
  Verdict OnWriteResponse(ipc::pb::Response* response, Clock::time_point now);
  std::unordered_map<std::string, Tracked> peeks_;          // wire uuid → the peek
  std::unordered_map<SessionId, std::size_t> per_session_;  // peeks_ by session
  std::unordered_map<std::string, Tracked> writes_;         // wire uuid → the write
  // The writes EndSession orphaned, oldest first (some may be answered since).
  std::deque<std::pair<Clock::time_point, std::string>> orphaned_writes_;
  std::uint64_t next_write_ = 0;                              // n of the next WriteWireUuid
  std::unordered_map<std::string, Subscription> subscribes_;  // wire uuid → live subscribe
  // Per session: client uuid → wire uuid of its live subscribes.
  std::unordered_map<SessionId, std::map<std::string, std::string>> subscribes_by_session_;
  // Subscribes the supervisor ended (wire uuid → why their answers are dropped), and when.
  std::unordered_map<std::string, const char*> ended_subscribes_;
  std::deque<std::pair<Clock::time_point, std::string>> ended_subscribes_order_;
  struct PendingEnd {
    SessionId session;
    ipc::pb::Response end;
  };
  std::deque<PendingEnd> pending_ends_;
  std::map<std::string, std::uint64_t> subscribe_ends_;
  std::uint64_t next_subscribe_ = 0;  // n of the next SubscribeWireUuid
};

}  // namespace tandem::supervisor
