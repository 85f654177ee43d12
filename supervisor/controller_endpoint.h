// The controller endpoint (DESIGN §3): the one ROUTER socket controllers and observers talk to,
// its socket monitor (vanished peers), CURVE's ZAP handler when configured (controller_auth.h),
// and the sessions on it (sessions.h).
//
// A command's way in, in order: OnReadable reads [peer, payload] → OnMessage decodes it (a
// malformed message is answered CommandError, counted in tandem_malformed_messages_total) → the
// peer's session (Goodbye and Hello handled here; no session: refused) → validation (the
// controller's commands against its epoch, ipc::Validator::Validate; an observer's against the
// catalog, ValidateObserver) → admission (the peek bounds --max-peeks-per-session and
// --max-peeks-in-flight, the write bound --max-writes-in-flight, the subscribe limit) → the
// multiplexer's Forward. A refused command changes nothing and is answered CommandError.
//
// An answer's way out: the supervisor's loop hands Answer what a runtime link received and the
// multiplexer's Verdict on it; Answer sends it to the session it is for (Frontiers to every
// session), or counts it dropped. The endpoint never calls the loop, a link or the multiplexer
// back for an answer; it calls the multiplexer only forward (Forward, EndSession, and the
// subscribe bookkeeping of the answers it delivers).
//
// The catalog: what the replica maintains. While a controller replays its history after its
// Hello, the runtimes hold the replay and keep running what they had until its
// InitializationComplete (they reconcile then), so the catalog is the last complete epoch —
// not the half-replayed one — until then; after it, the controller's epoch, kept current by
// every command accepted. Observers' peeks and writer sessions' writes are validated against it,
// and HelloAccepted's live_indexes lists its indexes.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "ipc/catalog.h"
#include "ipc/validate.h"
#include "supervisor/config.h"
#include "supervisor/controller_auth.h"
#include "supervisor/frontiers_cache.h"
#include "supervisor/metrics.h"
#include "supervisor/multiplexer.h"
#include "supervisor/poll.h"
#include "supervisor/reads.h"
#include "supervisor/sessions.h"

namespace tandem::supervisor {

class ControllerEndpoint {
 public:
  using Clock = std::chrono::steady_clock;

  // `config`: the replica's; UpdateConfiguration changes its parameters (config.params), which
  // the supervisor reads too. `metrics`, `mux` and `quiet` (poll.h) are the supervisor's; all
  // outlive the endpoint.
  ControllerEndpoint(SupervisorConfig& config, zmq::context_t& ctx, Metrics& metrics,
                     Multiplexer& mux, QuietSockets& quiet);
  ~ControllerEndpoint();
  ControllerEndpoint(const ControllerEndpoint&) = delete;
  ControllerEndpoint& operator=(const ControllerEndpoint&) = delete;

  // Binds the ROUTER (heartbeats, the transport limit, the send high-water mark, CURVE when
  // configured) and its monitor. kExitOk, or the exit code (the reason logged).
  int Bind();
  // The address bound (a port 0 resolved to the kernel's choice).
  const std::string& bound_address() const { return bound_address_; }

  // ---- The loop
  // The sockets to poll for input: the ROUTER, its monitor, and the ZAP handler when CURVE is on.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items);
  // After the poll: `items` points at the first of those AppendPollItems appended. Serves ZAP,
  // then reads the commands, then the monitor's events.
  void OnPoll(const zmq::pollitem_t* items);
  // SIGHUP: rereads the authorized keys (CURVE).
  void ReloadKeys();

  // ---- Answers (controller_answers.cc)
  // A runtime's response (`bytes`: as the runtime encoded it) and the multiplexer's verdict on
  // it: sent to the session it is for (Frontiers to every session), or counted as dropped.
  void Answer(const Multiplexer::Verdict& verdict, const ipc::pb::Response& response,
              std::string_view bytes);
  // Sends the SubscribeEnds that wait (a full pipe, or the controller's next Hello).
  void FlushSubscribeEnds();
  // The latest frontiers of every collection (for the subscribe lag of /metrics).
  const FrontiersCache& frontiers() const { return frontiers_; }

 private:
  // ---- Sockets and sessions (controller_endpoint.cc)
  void OnReadable();
  void OnMonitorReadable();
  // Remembers which peer a controller connection's descriptor belongs to (for the monitor's
  // DISCONNECTED events); a descriptor reused by a new peer ends the old peer's session.
  void NotePeerFd(int fd, const std::string& peer);
  void OnControllerHello(const std::string& peer, const ipc::pb::Command& hello,
                         const std::string& payload);
  void OnObserverHello(const std::string& peer, const ipc::pb::Command& hello);
  ipc::pb::Response HelloAccepted(const ipc::pb::Hello& hello) const;
  // Goodbye, or the connection of `peer` ended (`goodbye` false): it is forgotten.
  void EndSession(const std::string& peer, bool goodbye);
  // Frees what an ended session held. Returns what it was.
  Sessions::Ended ForgetSession(const std::string& peer);
  // Sends without blocking; false when ZeroMQ refused it (the peer's pipe is full, or the peer is
  // gone), counted in tandem_responses_dropped_total when `count_drop`.
  bool SendToPeer(const std::string& peer, const ipc::pb::Response& response,
                  bool count_drop = true);
  bool SendEncodedToPeer(const std::string& peer, std::string_view bytes, const char* name,
                         bool count_drop = true);
  // Answers `peer` CommandError{what, why} (what: `command` when empty) and counts the refusal.
  void Refuse(const std::string& peer, const std::string& command, const std::string& reason,
              const std::string& why, const std::string& what = "");
  // Refuse() of a decoded command: a WriteTable's what is DescribeWrite (its whole uuid), so a
  // client with several writes in flight can tell which one was refused.
  void RefuseCommand(const std::string& peer, const ipc::pb::Command& command,
                     const std::string& reason, const std::string& why);

  // ---- A command's way in (controller_commands.cc)
  // Decode → session → validate → admit → forward.
  void OnMessage(const std::string& peer, const std::string& payload);
  void OnObserverCommand(const std::string& peer, const ipc::pb::Command& command,
                         const std::string& payload);
  // A Peek or CancelPeek of `session` about to be forwarded: false when it was refused (the
  // in-flight bounds) or needs no forwarding (a CancelPeek of a peek not waiting).
  bool AdmitPeek(const std::string& peer, const ipc::pb::Command& command, SessionId session);
  // A validated WriteTable about to be forwarded: false when it was refused (--max-writes-in-
  // flight).
  bool AdmitWrite(const std::string& peer, const ipc::pb::Command& command);
  // Subscribes (DESIGN §10). A validated Subscribe or CancelSubscribe of `session`: refused beyond
  // max_subscribes_per_session or for a uuid already live in the session; as_of "latest" filled
  // in (LatestAsOf) and up_to checked against it; forwarded. `catalog`: what it was validated
  // against.
  void ForwardSubscribeCommand(const std::string& peer, const ipc::pb::Command& command,
                               const std::string& payload, SessionId session,
                               const ipc::Catalog& catalog);
  // max(W - 1, allowed): W the index's write frontier (FrontiersCache; 0 when none reported, or
  // closed), allowed the compaction frontier `catalog` recorded for it (0 when none).
  std::uint64_t LatestAsOf(const std::string& id, const ipc::Catalog& catalog) const;
  void HandleUpdateConfiguration(const std::string& peer, const ipc::pb::Command& command);
  // The controller's command `cmd` was forwarded: counts the one-shot dataflows it builds/drops.
  void NoteForwarded(const ipc::pb::Command& cmd);
  // What the replica maintains (see above).
  const ipc::Catalog& Catalog() const {
    return last_complete_ ? *last_complete_ : validator_.catalog();
  }

  // ---- An answer's way out (controller_answers.cc)
  // `encoded`: the response as the runtime sent it (forwarded as it is).
  void OnFrontiers(const ipc::pb::Response& response, std::string_view encoded);
  // A SubscribeBatch or SubscribeEnd the multiplexer mapped back to `verdict.to`'s uuid: sent to
  // that session; a batch its pipe refuses ends the subscribe TOO_SLOW, an End it refuses waits.
  void DeliverSubscribeAnswer(const Multiplexer::Verdict& verdict,
                              const ipc::pb::Response& response);
  // The peer of a live session (the controller's, or an observer's); nullptr when none.
  const std::string* PeerOfSession(SessionId session) const;

  SupervisorConfig& config_;
  zmq::context_t& ctx_;
  Metrics& metrics_;
  Multiplexer& mux_;
  QuietSockets& quiet_;
  std::unique_ptr<zmq::socket_t> router_, monitor_;
  std::unique_ptr<ControllerAuth> auth_;  // CURVE and its ZAP handler, when configured
  std::string bound_address_;
  Sessions sessions_;
  FrontiersCache frontiers_;
  OneShots one_shots_;
  ipc::Validator validator_;  // the controller's epoch
  // Set while a controller replays after its Hello and the runtimes still run the previous
  // epoch: that epoch as it was complete (unset when there was nothing to reconcile).
  std::optional<ipc::Catalog> last_complete_;
  std::map<int, std::string> peer_by_fd_;  // controller connection fd → routing id
  // Per fd: DISCONNECTED events still to come for connections NotePeerFd saw replaced.
  std::map<int, int> stale_disconnects_;
};

}  // namespace tandem::supervisor
