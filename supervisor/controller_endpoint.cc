// The controller endpoint of the supervisor (DESIGN §3): sessions of controllers and observers
// on the one ROUTER socket — Hello (epochs, supersession, observers), validation and refusals,
// Goodbye and vanished peers (the socket monitor), UpdateConfiguration. The rest of Supervisor
// (spawning, shared fate, the runtimes' streams, HTTP) is in supervisor.cc.
#include <spdlog/spdlog.h>
#include <utility>

#include <algorithm>
#include <vector>
#include <zmq_addon.hpp>

#include "base/global_id.h"
#include "ipc/table_write.h"
#include "supervisor/metric_names.h"
#include "supervisor/supervisor.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

namespace {

// The ZeroMQ monitor event carrying a disconnect; the value is the connection's fd.
struct MonitorEvent {
  std::uint16_t event;
  std::uint32_t value;
};

}  // namespace

bool Supervisor::SendToPeer(const std::string& peer, const ipc::pb::Response& response,
                            bool count_drop) {
  return SendEncodedToPeer(peer, ipc::Encode(response), ipc::ResponseName(response), count_drop);
}

bool Supervisor::SendEncodedToPeer(const std::string& peer, std::string_view bytes,
                                   const char* name, bool count_drop) {
  try {
    // With router_mandatory a peer whose pipe is at controller_send_hwm refuses the first frame
    // (EAGAIN): nothing of the message is queued.
    quiet_.erase(router_->handle());
    zmq::send_result_t sent =
        router_->send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    if (sent) sent = router_->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    if (!sent) {
      if (count_drop) metrics_.Inc(kDropped, {{"reason", "controller_slow"}});
      return false;
    }
    metrics_.Inc(kResponses, {{"response", name}});
    return true;
  } catch (const zmq::error_t& e) {
    // EHOSTUNREACH (router_mandatory): the controller is gone.
    if (count_drop) metrics_.Inc(kDropped, {{"reason", "controller_gone"}});
    return false;
  }
}

void Supervisor::Refuse(const std::string& peer, const std::string& command,
                        const std::string& reason, const std::string& why,
                        const std::string& what) {
  metrics_.Inc(kCommands, {{"command", command}, {"result", "refused"}});
  metrics_.Inc(kRefused, {{"reason", reason}});
  if (command == "WriteTable") metrics_.Inc(kWrites, {{"result", "refused"}});
  spdlog::debug("refused {}: {}", command, why);
  SendToPeer(peer, ipc::MakeCommandError(what.empty() ? command : what, why));
}

void Supervisor::RefuseCommand(const std::string& peer, const ipc::pb::Command& cmd,
                               const std::string& reason, const std::string& why) {
  Refuse(peer, ipc::CommandName(cmd), reason, why,
         cmd.has_write_table() ? ipc::DescribeWrite(cmd.write_table()) : "");
}

void Supervisor::OnControllerReadable() {
  for (;;) {
    std::vector<zmq::message_t> frames;
    try {
      if (!zmq::recv_multipart(*router_, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
        quiet_.insert(router_->handle());  // read until nothing: its ZMQ_FD signals what comes
        return;
      }
    } catch (const zmq::error_t& e) {
      spdlog::warn("controller endpoint: {}", e.what());
      return;
    }
    const std::string peer = frames.front().to_string();
    if (frames.size() != 2) {
      metrics_.Inc(kMalformed, {{"reason", "frames"}});
      SendToPeer(peer,
                 ipc::MakeCommandError("message", "expected exactly one frame per command, got " +
                                                      std::to_string(frames.size() - 1)));
      continue;
    }
    const int fd = zmq_msg_get(frames[1].handle(), ZMQ_SRCFD);
    if (fd >= 0) {
      if (auto known = peer_by_fd_.find(fd); known == peer_by_fd_.end() || known->second != peer) {
        // A connection new on this descriptor. The DISCONNECTED events of the descriptor's
        // earlier connections were sent to the monitor before this one was accepted (libzmq
        // announces a disconnect before it closes the descriptor): read them now, or a late one
        // — of a connection that never sent a command, which NotePeerFd cannot know — would end
        // this peer's session, and its next command would be refused "send Hello first".
        OnMonitorReadable();
      }
      NotePeerFd(fd, peer);
    }
    OnControllerMessage(peer, frames[1].to_string());
  }
}

void Supervisor::NotePeerFd(int fd, const std::string& peer) {
  auto [it, fresh] = peer_by_fd_.try_emplace(fd, peer);
  if (fresh || it->second == peer) return;
  // The descriptor was reused, so its previous peer's connection is gone — and that connection's
  // DISCONNECTED event, which names only the descriptor, may not have been read yet (the monitor
  // is a socket of its own). End the old peer's session now, and let that event end nothing when
  // it comes; else it would end this peer's session and leave the old one open for ever.
  const std::string old = std::exchange(it->second, peer);
  ++stale_disconnects_[fd];
  EndSession(old, false);
}

void Supervisor::OnControllerMessage(const std::string& peer, const std::string& payload) {
  auto decoded = ipc::DecodeCommand(payload);
  if (!decoded.ok()) {
    metrics_.Inc(kMalformed, {{"reason", decoded.error.label}});
    SendToPeer(peer, ipc::MakeCommandError("message", decoded.error.reason));
    return;
  }
  const ipc::pb::Command& cmd = decoded.message;
  const std::string name = ipc::CommandName(cmd);

  if (cmd.has_goodbye()) {
    // From anyone, never answered, never forwarded: the sender is leaving.
    metrics_.Inc(kCommands, {{"command", name}, {"result", "accepted"}});
    EndSession(peer, true);
    return;
  }
  if (cmd.has_hello()) {
    if (cmd.hello().observer()) {
      OnObserverHello(peer, cmd);
    } else {
      OnControllerHello(peer, cmd, payload);
    }
    return;
  }
  switch (sessions_.StandingOf(peer)) {
    case Sessions::Standing::kNoHello:
      RefuseCommand(peer, cmd, "before_hello", ipc::Describe(cmd) + ": send Hello first");
      return;
    case Sessions::Standing::kSuperseded:
      RefuseCommand(peer, cmd, "superseded",
                    ipc::Describe(cmd) + ": this controller was superseded by a newer Hello");
      return;
    case Sessions::Standing::kObserver:
      OnObserverCommand(peer, cmd, payload);
      return;
    case Sessions::Standing::kController:
      break;
  }
  if (Status s = validator_.Validate(cmd); !s.ok()) {
    RefuseCommand(peer, cmd, "validation", s.message());
    return;
  }
  if (cmd.has_write_table() && !AdmitWrite(peer, cmd)) return;
  if (cmd.has_subscribe() || cmd.has_cancel_subscribe()) {
    ForwardSubscribeCommand(peer, cmd, payload, kControllerSession, validator_.catalog());
    return;
  }
  if (cmd.has_initialization_complete() && last_complete_) {
    // The runtimes reconcile now: what the replica maintains is the replayed epoch.
    last_complete_.reset();
  }
  if (cmd.has_update_configuration()) {
    HandleUpdateConfiguration(peer, cmd);
    return;
  }
  if (!AdmitPeekCommand(peer, cmd, kControllerSession)) return;
  mux_->Forward(cmd, payload, Clock::now());
  NoteForwarded(cmd);
  metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
}

void Supervisor::OnControllerHello(const std::string& peer, const ipc::pb::Command& hello,
                                   const std::string& payload) {
  // If the replica maintains dataflows, the runtimes hold this controller's replay and keep
  // running them until its InitializationComplete: keep that epoch as the catalog till then. (A
  // second Hello before it keeps the one already kept: the runtimes never applied the first
  // replay.) With nothing to reconcile, the runtimes apply the replay as it comes.
  std::optional<ipc::Catalog> complete;
  if (!last_complete_ && !validator_.indexes().empty()) complete = validator_.catalog();
  if (Status s = validator_.Validate(hello); !s.ok()) {  // changes nothing when refused
    Refuse(peer, "Hello", "validation", s.message());
    return;
  }
  if (complete) last_complete_ = std::move(complete);
  ForgetSession(peer);  // its own earlier session, of either kind
  if (auto previous = sessions_.BecomeController(peer, hello.hello().nonce())) {
    ipc::pb::Response superseded;
    superseded.mutable_status()->mutable_superseded()->set_by_nonce(hello.hello().nonce());
    SendToPeer(*previous, superseded);
    metrics_.Inc(kControllerEvents, {{"event", "superseded"}});
    spdlog::info("a new controller (nonce {}) superseded the previous one",
                 ipc::Printable(hello.hello().nonce()));
  }
  metrics_.Inc(kControllerEvents, {{"event", "hello"}});
  mux_->Forward(hello, payload, Clock::now());
  NoteForwarded(hello);
  metrics_.Inc(kCommands, {{"command", "Hello"}, {"result", "forwarded"}});
  SendToPeer(peer, HelloAccepted(hello.hello()));
  // The previous epoch's subscribes ended (SESSION_ENDED): told right after the HelloAccepted.
  FlushSubscribeEnds();
}

void Supervisor::OnObserverHello(const std::string& peer, const ipc::pb::Command& hello) {
  // Starts no epoch and reaches no runtime: the controller and its epoch are untouched.
  if (Status s = validator_.ValidateObserver(hello); !s.ok()) {
    Refuse(peer, "Hello", "validation", s.message());
    return;
  }
  ForgetSession(peer);
  const bool writer = hello.hello().writer();
  const SessionId session = sessions_.BecomeObserver(peer, hello.hello().nonce(), writer);
  metrics_.Inc(kControllerEvents, {{"event", "observer_hello"}});
  metrics_.Inc(kCommands, {{"command", "Hello"}, {"result", "accepted"}});
  metrics_.Set(kObservers, {}, static_cast<double>(sessions_.observers().size()));
  spdlog::info("{} (nonce {}, session {}) connected; {} observer(s)",
               writer ? "a writer session" : "an observer", ipc::Printable(hello.hello().nonce()),
               session, sessions_.observers().size());
  SendToPeer(peer, HelloAccepted(hello.hello()));
  for (const auto& [id, frontiers] : frontiers_.latest()) {
    ipc::pb::Response r;
    *r.mutable_frontiers() = frontiers;
    SendToPeer(peer, r);
  }
}

void Supervisor::OnObserverCommand(const std::string& peer, const ipc::pb::Command& cmd,
                                   const std::string& payload) {
  const std::string name = ipc::CommandName(cmd);
  const bool writer = sessions_.IsWriter(peer);
  // A writer session's writes are checked against what the replica runs (the catalog), like its
  // peeks.
  if (Status s = validator_.ValidateObserver(cmd, writer, Catalog()); !s.ok()) {
    const bool allowed = cmd.has_peek() || cmd.has_cancel_peek() || cmd.has_subscribe() ||
                         cmd.has_cancel_subscribe() || (writer && cmd.has_write_table());
    RefuseCommand(peer, cmd, allowed ? "validation" : "read_only", s.message());
    return;
  }
  if (cmd.has_subscribe() || cmd.has_cancel_subscribe()) {
    ForwardSubscribeCommand(peer, cmd, payload, sessions_.ObserverSession(peer), Catalog());
    return;
  }
  if (cmd.has_write_table() ? !AdmitWrite(peer, cmd)
                            : !AdmitPeekCommand(peer, cmd, sessions_.ObserverSession(peer))) {
    return;
  }
  mux_->Forward(cmd, payload, Clock::now(), sessions_.ObserverSession(peer));
  metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
}

void Supervisor::ForwardSubscribeCommand(const std::string& peer, const ipc::pb::Command& cmd,
                                         const std::string& payload, SessionId session,
                                         const ipc::Catalog& catalog) {
  const std::string name = ipc::CommandName(cmd);
  if (cmd.has_cancel_subscribe()) {
    // Nothing live under that uuid (ended, or never subscribed): forwarded nowhere, no answer.
    if (!mux_->Subscribed(session, cmd.cancel_subscribe().uuid())) {
      metrics_.Inc(kCommands, {{"command", name}, {"result", "not_live"}});
      return;
    }
    mux_->Forward(cmd, payload, Clock::now(), session);
    metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
    return;
  }
  const ipc::pb::Subscribe& sub = cmd.subscribe();
  if (mux_->UuidInUse(session, sub.uuid())) {
    RefuseCommand(peer, cmd, "subscribe_uuid_live",
                  ipc::Describe(cmd) +
                      ": this session has a live subscribe with this uuid, or one whose end it "
                      "has not read yet (CancelSubscribe it, or use another uuid)");
    return;
  }
  const auto limit = static_cast<std::size_t>(config_.params.GetInt(kMaxSubscribesPerSession));
  // Ends still waiting for this session's pipe count too: a session that does not read cannot
  // pile up ended subscribes by sending new ones.
  const std::size_t held = mux_->live_subscribes(session) + mux_->pending_ends(session);
  if (held >= limit) {
    RefuseCommand(peer, cmd, "too_many_subscribes",
                  ipc::Describe(cmd) + ": this session has " + std::to_string(held) +
                      " live subscribes (or ends not yet read), the limit "
                      "(max_subscribes_per_session " +
                      std::to_string(limit) + "); cancel some first");
    return;
  }
  ipc::pb::Command filled = cmd;
  if (!sub.has_as_of()) filled.mutable_subscribe()->set_as_of(LatestAsOf(sub.id(), catalog));
  const std::uint64_t as_of = filled.subscribe().as_of();
  if (sub.has_up_to() && sub.up_to() <= as_of) {
    RefuseCommand(peer, cmd, "validation",
                  ipc::Describe(cmd) + ": up_to " + std::to_string(sub.up_to()) +
                      " is not after as_of " + std::to_string(as_of) +
                      (sub.has_as_of() ? "" : " (the latest time readable now)"));
    return;
  }
  mux_->Forward(filled, sub.has_as_of() ? payload : ipc::Encode(filled), Clock::now(), session);
  metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
  metrics_.Set(kSubscribes, {}, static_cast<double>(mux_->live_subscribes()));
}

std::uint64_t Supervisor::LatestAsOf(const std::string& id, const ipc::Catalog& catalog) const {
  std::uint64_t latest = 0;
  if (auto it = frontiers_.latest().find(id);
      it != frontiers_.latest().end() && !it->second.write().elements().empty()) {
    const std::uint64_t write = it->second.write().elements(0);
    latest = write > 0 ? write - 1 : 0;
  }
  if (auto it = catalog.allowed_compaction().find(id); it != catalog.allowed_compaction().end()) {
    latest = std::max(latest, it->second);
  }
  return latest;
}

const std::string* Supervisor::PeerOfSession(SessionId session) const {
  if (session == kControllerSession) {
    return sessions_.controller() ? &*sessions_.controller() : nullptr;
  }
  return sessions_.ObserverPeer(session);
}

void Supervisor::DeliverSubscribeAnswer(const Multiplexer::Verdict& verdict,
                                        const ipc::pb::Response& response) {
  const std::string* peer = PeerOfSession(verdict.to);
  if (response.has_subscribe_end()) {
    if (!peer || !SendToPeer(*peer, response, false)) mux_->DeferEnd(verdict.to, response);
    metrics_.Set(kSubscribes, {}, static_cast<double>(mux_->live_subscribes()));
    return;
  }
  const ipc::pb::SubscribeBatch& batch = response.subscribe_batch();
  if (peer && SendToPeer(*peer, response, false)) {
    mux_->Delivered(verdict.subscribe, batch.upper(),
                    static_cast<std::size_t>(batch.updates_size()));
    metrics_.Inc(kSubscribeBatches);
    metrics_.Inc(kSubscribeRows, {}, batch.updates_size());
    return;
  }
  // Its pipe is full (controller_send_hwm messages wait): the subscriber does not read.
  metrics_.Inc(kDropped, {{"reason", "subscriber_too_slow"}});
  spdlog::info("a subscribe of session {} ended too slow: its pipe refused a batch", verdict.to);
  mux_->TooSlow(verdict.subscribe, Clock::now());
  metrics_.Set(kSubscribes, {}, static_cast<double>(mux_->live_subscribes()));
}

void Supervisor::FlushSubscribeEnds() {
  if (!mux_ || mux_->pending_ends() == 0) return;
  mux_->FlushEnds([this](SessionId session, const ipc::pb::Response& end) {
    const std::string* peer = PeerOfSession(session);
    // No peer: the controller's wait for its next Hello (an ended observer's were dropped).
    return peer != nullptr && SendToPeer(*peer, end, false);
  });
}

ipc::pb::Response Supervisor::HelloAccepted(const ipc::pb::Hello& hello) const {
  ipc::pb::Response accepted;
  auto* a = accepted.mutable_status()->mutable_hello_accepted();
  a->set_nonce(hello.nonce());
  a->set_protocol_version(ipc::kProtocolVersion);
  a->set_replica_id(config_.replica_id);
  a->set_interactive_runtime(config_.two_runtime());
  a->set_observer(hello.observer());
  // In GlobalId order (u2 before u10). Index ids are canonical GlobalIds: the validator made sure.
  std::vector<GlobalId> ids;
  for (const auto& [id, info] : Catalog().indexes()) ids.push_back(*GlobalId::Parse(id));
  std::sort(ids.begin(), ids.end());
  for (const GlobalId& id : ids) a->add_live_indexes(id.ToString());
  return accepted;
}

Sessions::Ended Supervisor::ForgetSession(const std::string& peer) {
  Sessions::Ended ended = sessions_.End(peer);
  switch (ended.kind) {
    case Sessions::Ended::Kind::kController:
      mux_->EndSession(kControllerSession);
      break;
    case Sessions::Ended::Kind::kObserver:
      mux_->EndSession(ended.session);
      metrics_.Set(kObservers, {}, static_cast<double>(sessions_.observers().size()));
      break;
    case Sessions::Ended::Kind::kSuperseded:
    case Sessions::Ended::Kind::kNone:
      break;
  }
  return ended;
}

void Supervisor::EndSession(const std::string& peer, bool goodbye) {
  const Sessions::Ended ended = ForgetSession(peer);
  if (goodbye) metrics_.Inc(kControllerEvents, {{"event", "goodbye"}});
  const std::string nonce = ipc::Printable(ended.nonce);
  switch (ended.kind) {
    case Sessions::Ended::Kind::kController:
      if (goodbye) {
        spdlog::info(
            "the controller (nonce {}) said goodbye; the replica keeps running and waits for a "
            "new Hello",
            nonce);
      } else {
        spdlog::warn(
            "the active controller disconnected (gone or silent past the heartbeat timeout); "
            "the replica keeps running and waits for a new Hello [nonce {}]",
            nonce);
      }
      break;
    case Sessions::Ended::Kind::kObserver:
      spdlog::info("an observer (nonce {}, session {}) {}; {} observer(s) left", nonce,
                   ended.session, goodbye ? "said goodbye" : "disconnected",
                   sessions_.observers().size());
      break;
    case Sessions::Ended::Kind::kSuperseded:
      spdlog::debug("a superseded controller {}", goodbye ? "said goodbye" : "disconnected");
      break;
    case Sessions::Ended::Kind::kNone:
      break;  // e.g. the connection of a controller that said goodbye before
  }
}

void Supervisor::HandleUpdateConfiguration(const std::string& peer, const ipc::pb::Command& cmd) {
  // Check everything first: a refused command changes nothing.
  for (const auto& [key, value] : cmd.update_configuration().params()) {
    if (IsFaultInjectionParam(key) && !config_.guards.enable_fault_injection) {
      Refuse(peer, "UpdateConfiguration", "fault_injection_disabled",
             "UpdateConfiguration: parameter " + key +
                 " injects faults, and this supervisor was started without "
                 "--enable-fault-injection; nothing was applied");
      return;
    }
    ConfigSet probe;
    if (Status s = probe.Set(ConfigSet::Scope::kReplica, key, value); !s.ok()) {
      Refuse(peer, "UpdateConfiguration", "validation", "UpdateConfiguration: " + s.message());
      return;
    }
  }
  ipc::pb::Command live;
  ipc::pb::Response reply;
  auto* applied = reply.mutable_status()->mutable_configuration_applied();
  for (const auto& [key, value] : cmd.update_configuration().params()) {
    const ParamDef* def = FindParam(key);
    if (!def->live) {
      applied->add_needs_restart(key);
      spdlog::info("UpdateConfiguration: {} is fixed when the replica starts; not applied", key);
      continue;
    }
    (void)config_.params.Set(ConfigSet::Scope::kReplica, key, value);
    (*applied->mutable_applied())[key] = config_.params.Get(key);
    (*live.mutable_update_configuration()->mutable_params())[key] = config_.params.Get(key);
    if (key == kLogLevel) {
      if (auto level = ParseLogLevel(value); level.ok()) spdlog::set_level(*level);
    }
  }
  if (!live.update_configuration().params().empty()) {
    mux_->Forward(live, ipc::Encode(live), Clock::now());
  }
  metrics_.Inc(kCommands, {{"command", "UpdateConfiguration"}, {"result", "forwarded"}});
  SendToPeer(peer, reply);
}

void Supervisor::OnMonitorReadable() {
  for (;;) {
    zmq::message_t event, address;
    if (!monitor_->recv(event, zmq::recv_flags::dontwait)) {
      quiet_.insert(monitor_->handle());  // read until nothing: its ZMQ_FD signals what comes
      return;
    }
    (void)monitor_->recv(address, zmq::recv_flags::none);
    if (event.size() < 6) continue;
    MonitorEvent e{};
    std::memcpy(&e.event, event.data(), 2);
    std::memcpy(&e.value, static_cast<const char*>(event.data()) + 2, 4);
    if (e.event != ZMQ_EVENT_DISCONNECTED) {
      if (auth_) auth_->OnHandshakeFailed(e.event, e.value);  // refused before any command
      continue;
    }
    // Counted even for a peer we never heard from (e.g. dropped for an oversized message).
    metrics_.Inc(kControllerEvents, {{"event", "disconnected"}});
    if (auto stale = stale_disconnects_.find(static_cast<int>(e.value));
        stale != stale_disconnects_.end()) {
      if (--stale->second == 0) stale_disconnects_.erase(stale);
      continue;  // the connection NotePeerFd already found gone
    }
    auto it = peer_by_fd_.find(static_cast<int>(e.value));
    if (it == peer_by_fd_.end()) continue;
    const std::string peer = it->second;
    peer_by_fd_.erase(it);
    EndSession(peer, false);
  }
}

}  // namespace tandem::supervisor
