// The controller endpoint's sockets and sessions: binding the ROUTER and its monitor, reading
// commands, Hello (epochs, supersession, observers), Goodbye and vanished peers (the socket
// monitor), and sending answers and refusals. A command's way in after it is read is
// controller_commands.cc; an answer's way out, controller_answers.cc.
#include "supervisor/controller_endpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>
#include <zmq_addon.hpp>

#include "base/global_id.h"
#include "ipc/table_write.h"
#include "supervisor/metric_names.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

namespace {

// The ZeroMQ monitor event carrying a disconnect; the value is the connection's fd.
struct MonitorEvent {
  std::uint16_t event;
  std::uint32_t value;
};

// The controller socket's own limit: messages above it are dropped by ZeroMQ, which disconnects
// the peer. Messages between ipc::kMaxMessageBytes and this are read and answered with a
// CommandError (DecodeCommand's "oversized"), the session kept: an over-size command costs its
// sender one answer, not its session.
constexpr std::int64_t kTransportMessageBytes =
    2 * static_cast<std::int64_t>(ipc::kMaxMessageBytes);

}  // namespace

ControllerEndpoint::ControllerEndpoint(SupervisorConfig& config, zmq::context_t& ctx,
                                       Metrics& metrics, Multiplexer& mux, QuietSockets& quiet)
    : config_(config), ctx_(ctx), metrics_(metrics), mux_(mux), quiet_(quiet) {
  validator_.set_index_capacity(config_.slots_per_row);
  validator_.set_segment_bytes(config_.shm_size);
  validator_.set_data_dir(!config_.data_dir.empty());
}

ControllerEndpoint::~ControllerEndpoint() = default;

// The ROUTER (heartbeats, a disconnect monitor; CURVE when configured).
int ControllerEndpoint::Bind() {
  try {
    router_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
    router_->set(zmq::sockopt::maxmsgsize, kTransportMessageBytes);
    router_->set(zmq::sockopt::router_mandatory, 1);
    const int ivl = static_cast<int>(config_.params.GetInt(kControllerHeartbeatIntervalMs));
    const int timeout = static_cast<int>(config_.params.GetInt(kControllerHeartbeatTimeoutMs));
    router_->set(zmq::sockopt::heartbeat_ivl, ivl);
    router_->set(zmq::sockopt::heartbeat_timeout, timeout);
    router_->set(zmq::sockopt::heartbeat_ttl, timeout);
    // Per peer: a controller or observer that stops reading holds at most this many messages
    // here; beyond it, sends to it fail (router_mandatory) and its subscribes end TOO_SLOW.
    router_->set(zmq::sockopt::sndhwm, static_cast<int>(config_.params.GetInt(kControllerSendHwm)));
    if (config_.curve()) {
      auto auth = ControllerAuth::Create(config_, ctx_, metrics_);
      if (!auth.ok()) {
        spdlog::critical("impossible configuration: {}", auth.status().message());
        return auth.status().code() == StatusCode::kUnavailable ? kExitUnavailable : kExitConfig;
      }
      auth_ = std::move(auth).value();
      auth_->ConfigureRouter(*router_);
    }
    zmq_socket_monitor(router_->handle(), "inproc://controller-monitor",
                       ZMQ_EVENT_DISCONNECTED | (auth_ ? ControllerAuth::kMonitorEvents : 0));
    monitor_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::pair);
    monitor_->connect("inproc://controller-monitor");
    router_->bind(config_.controller_listen_addr);
  } catch (const zmq::error_t& e) {
    spdlog::error("could not bind the controller endpoint {}: {}", config_.controller_listen_addr,
                  e.what());
    return kExitUnavailable;
  }
  bound_address_ = router_->get(zmq::sockopt::last_endpoint);
  return kExitOk;
}

void ControllerEndpoint::AppendPollItems(std::vector<zmq::pollitem_t>* items) {
  items->push_back({router_->handle(), 0, ZMQ_POLLIN, 0});
  items->push_back({monitor_->handle(), 0, ZMQ_POLLIN, 0});
  if (auth_) items->push_back(auth_->PollItem());
}

void ControllerEndpoint::OnPoll(const zmq::pollitem_t* items) {
  if (auth_ && (items[2].revents & ZMQ_POLLIN)) auth_->OnReadable();
  if (items[0].revents & ZMQ_POLLIN) OnReadable();
  if (items[1].revents & ZMQ_POLLIN) OnMonitorReadable();
}

void ControllerEndpoint::ReloadKeys() {
  if (auth_) {
    auth_->Reload();
  } else {
    spdlog::info("SIGHUP: nothing to reload (no --curve-authorized-keys)");
  }
}

bool ControllerEndpoint::SendToPeer(const std::string& peer, const ipc::pb::Response& response,
                                    bool count_drop) {
  return SendEncodedToPeer(peer, ipc::Encode(response), ipc::ResponseName(response), count_drop);
}

bool ControllerEndpoint::SendEncodedToPeer(const std::string& peer, std::string_view bytes,
                                           const char* name, bool count_drop) {
  try {
    // With router_mandatory a peer whose pipe is at controller_send_hwm refuses the first frame
    // (EAGAIN): nothing of the message is queued.
    quiet_.Stir(router_->handle());
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

void ControllerEndpoint::Refuse(const std::string& peer, const std::string& command,
                                const std::string& reason, const std::string& why,
                                const std::string& what) {
  metrics_.Inc(kCommands, {{"command", command}, {"result", "refused"}});
  metrics_.Inc(kRefused, {{"reason", reason}});
  if (command == "WriteTable") metrics_.Inc(kWrites, {{"result", "refused"}});
  spdlog::debug("refused {}: {}", command, why);
  SendToPeer(peer, ipc::MakeCommandError(what.empty() ? command : what, why));
}

void ControllerEndpoint::RefuseCommand(const std::string& peer, const ipc::pb::Command& cmd,
                                       const std::string& reason, const std::string& why) {
  Refuse(peer, ipc::CommandName(cmd), reason, why,
         cmd.has_write_table() ? ipc::DescribeWrite(cmd.write_table()) : "");
}

void ControllerEndpoint::OnReadable() {
  for (;;) {
    std::vector<zmq::message_t> frames;
    try {
      if (!zmq::recv_multipart(*router_, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
        quiet_.Quiet(router_->handle());  // read until nothing: its ZMQ_FD signals what comes
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
    OnMessage(peer, frames[1].to_string());
  }
}

void ControllerEndpoint::NotePeerFd(int fd, const std::string& peer) {
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

void ControllerEndpoint::OnMonitorReadable() {
  for (;;) {
    zmq::message_t event, address;
    if (!monitor_->recv(event, zmq::recv_flags::dontwait)) {
      quiet_.Quiet(monitor_->handle());  // read until nothing: its ZMQ_FD signals what comes
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

void ControllerEndpoint::OnControllerHello(const std::string& peer, const ipc::pb::Command& hello,
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
  mux_.Forward(hello, payload, Clock::now());
  NoteForwarded(hello);
  metrics_.Inc(kCommands, {{"command", "Hello"}, {"result", "forwarded"}});
  SendToPeer(peer, HelloAccepted(hello.hello()));
  // The previous epoch's subscribes ended (SESSION_ENDED): told right after the HelloAccepted.
  FlushSubscribeEnds();
}

void ControllerEndpoint::OnObserverHello(const std::string& peer, const ipc::pb::Command& hello) {
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

ipc::pb::Response ControllerEndpoint::HelloAccepted(const ipc::pb::Hello& hello) const {
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

Sessions::Ended ControllerEndpoint::ForgetSession(const std::string& peer) {
  Sessions::Ended ended = sessions_.End(peer);
  switch (ended.kind) {
    case Sessions::Ended::Kind::kController:
      mux_.EndSession(kControllerSession);
      break;
    case Sessions::Ended::Kind::kObserver:
      mux_.EndSession(ended.session);
      metrics_.Set(kObservers, {}, static_cast<double>(sessions_.observers().size()));
      break;
    case Sessions::Ended::Kind::kSuperseded:
    case Sessions::Ended::Kind::kNone:
      break;
  }
  return ended;
}

void ControllerEndpoint::EndSession(const std::string& peer, bool goodbye) {
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

}  // namespace tandem::supervisor
