#include "ipc/client.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ipc/table_write.h"
#include "ipc/zmtp_greeting.h"

namespace tandem::ipc {
namespace {

// How long a refused handshake may spend asking the replica for its greeting (a local replica
// answers in a millisecond).
constexpr std::chrono::milliseconds kGreetingProbeLimit{1000};

}  // namespace

pb::Command MakeHello(const std::string& nonce, bool observer, bool writer) {
  pb::Command hello;
  hello.mutable_hello()->set_nonce(nonce);
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  hello.mutable_hello()->set_observer(observer);
  hello.mutable_hello()->set_writer(writer);
  return hello;
}

bool AnswersWrite(const pb::Response& response, const pb::WriteTable& write) {
  if (response.has_write_response()) return response.write_response().uuid() == write.uuid();
  return response.has_command_error() && response.command_error().what() == DescribeWrite(write);
}

pb::Command MakeSubscribe(const std::string& uuid, const std::string& id,
                          std::optional<std::uint64_t> as_of, bool snapshot,
                          std::optional<std::uint64_t> up_to) {
  pb::Command c;
  pb::Subscribe* s = c.mutable_subscribe();
  s->set_uuid(uuid);
  s->set_id(id);
  if (as_of) s->set_as_of(*as_of);
  s->set_snapshot(snapshot);
  if (up_to) s->set_up_to(*up_to);
  return c;
}

pb::Command MakeCancelSubscribe(const std::string& uuid) {
  pb::Command c;
  c.mutable_cancel_subscribe()->set_uuid(uuid);
  return c;
}

bool IsSubscribeAnswer(const pb::Response& response, const std::string& uuid) {
  return (response.has_subscribe_batch() && response.subscribe_batch().uuid() == uuid) ||
         (response.has_subscribe_end() && response.subscribe_end().uuid() == uuid);
}

ControllerClient::ControllerClient(const std::string& endpoint, const Options& options)
    : endpoint_(endpoint), options_(options), socket_(context_, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, static_cast<int>(options.linger.count()));
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(kMaxMessageBytes));
  // Before connect: a high-water mark applies to the pipes made after it is set.
  if (options.send_hwm) socket_.set(zmq::sockopt::sndhwm, *options.send_hwm);
  if (options.curve) {
    socket_.set(zmq::sockopt::curve_serverkey, options.curve->server_public);
    socket_.set(zmq::sockopt::curve_publickey, options.curve->client_public);
    socket_.set(zmq::sockopt::curve_secretkey, options.curve->client_secret);
  }
  if (options.end_on_disconnect) {
    // A supervisor that stops answering (frozen, or its host gone) drops the connection too.
    socket_.set(zmq::sockopt::heartbeat_ivl, 1000);
    socket_.set(zmq::sockopt::heartbeat_timeout, 3000);
    socket_.set(zmq::sockopt::heartbeat_ttl, 3000);
    // No receive high-water mark: libzmq's engine never stops reading while the socket is open.
    // With one (ZeroMQ's default, 1000 messages), a caller that stops receiving fills the pipe,
    // the engine stops reading the connection, and if the connection is then cut libzmq 4.3.4
    // marks the engine failed without tearing it down — and its next heartbeat (or a PING still
    // buffered, answered when reading resumes) fails `!_io_error` (stream_engine_base.cpp:331,
    // zeromq/libzmq#4364) and aborts the process. So what the replica sends is queued here
    // without bound: the caller must receive promptly and bound what it keeps (Options).
    socket_.set(zmq::sockopt::rcvhwm, 0);
  }
  if (options.end_on_disconnect || options.curve) {
    // One monitor endpoint per client (inproc names are per context, but say so anyway). Failed
    // handshakes too: a replica that refuses us is told apart from one that is not there.
    const std::string monitor = "inproc://tandem-controller-monitor-" +
                                std::to_string(reinterpret_cast<std::uintptr_t>(this));
    if (zmq_socket_monitor(socket_.handle(), monitor.c_str(),
                           ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
      throw zmq::error_t();
    }
    monitor_.emplace(context_, zmq::socket_type::pair);
    monitor_->set(zmq::sockopt::linger, 0);
    monitor_->connect(monitor);
  }
  socket_.connect(endpoint);
}

Result<std::unique_ptr<ControllerClient>> ControllerClient::Create(const std::string& endpoint,
                                                                   const Options& options) {
  try {
    return std::make_unique<ControllerClient>(endpoint, options);
  } catch (const zmq::error_t& e) {
    return Status::InvalidArgument(e.what());
  }
}

ControllerClient::~ControllerClient() {
  if (options_.goodbye && connected_ && !lost_) {
    pb::Command bye;
    bye.mutable_goodbye();
    try {
      Send(bye);  // the socket's linger lets it go out before the context closes
    } catch (const zmq::error_t&) {
    }
  }
  // A replica that refused the handshake gets nothing, and a lost session has no one left to
  // deliver to (a replica back at the address is a new one): do not linger on what is queued.
  // Lingering would also keep the socket's connection, and its engine, alive past the socket,
  // whose pipe takes nothing more then: the engine stops reading, and a cut connection aborts
  // in libzmq as the constructor explains.
  if (!handshake_error_.empty() || lost_) {
    try {
      socket_.set(zmq::sockopt::linger, 0);
    } catch (const zmq::error_t&) {
    }
  }
  if (monitor_) zmq_socket_monitor(socket_.handle(), nullptr, 0);
}

std::string ControllerClient::EndReason() const {
  if (superseded_) {
    return "another controller took over the replica at " + endpoint_ + " (Hello " +
           superseded_by_ + "); this session is over";
  }
  return "the connection to the replica at " + endpoint_ +
         " was lost (the supervisor exited, restarted or stopped answering)";
}

Status ControllerClient::Hello(const std::string& nonce, bool observer, bool writer) {
  // Sent once the socket can take it, waiting no longer than for an answer: a DEALER with no
  // connection to send on (its handshake refused and the connection dropped, the replica not
  // there) blocks a send until one comes, perhaps never. Unsent, the wait below still hears the
  // monitor's reason, or times out.
  zmq_pollitem_t writable{socket_.handle(), 0, ZMQ_POLLOUT, 0};
  const auto send_deadline = std::chrono::steady_clock::now() + options_.timeout;
  for (;;) {
    const auto left = Left(send_deadline);
    const int polled =
        zmq_poll(&writable, 1, static_cast<long>(std::max<std::int64_t>(0, left.count())));
    if (polled < 0 && zmq_errno() == EINTR && left.count() > 0) continue;
    break;
  }
  if ((writable.revents & ZMQ_POLLOUT) != 0) Send(MakeHello(nonce, observer, writer));
  Status result = Status::Ok();
  handshake_error_.clear();
  in_hello_ = true;
  const bool answered = AwaitFromSocket([&](pb::Response& r) {
    if (r.has_status() && r.status().has_hello_accepted()) {
      accepted_ = r.status().hello_accepted();
      // Disconnects of attempts before this Hello are behind us: take them now, while they do
      // not count, so a late one is not taken for the loss of this session.
      if (monitor_) DrainMonitor(/*may_probe=*/false);
      connected_ = true;
      writer_ = writer;
      return true;
    }
    if (r.has_command_error()) {
      result = Status::FailedPrecondition("the replica at " + endpoint_ +
                                          " refused Hello: " + r.command_error().why());
      return true;
    }
    if (r.has_frontiers()) kept_.push_back(std::move(r));
    return false;
  });
  in_hello_ = false;
  if (answered) return result;
  if (!handshake_error_.empty()) {
    return Status::Unavailable("the replica at " + endpoint_ +
                               " refused the connection: " + handshake_error_);
  }
  return Status::Unavailable(
      "cannot reach the replica at " + endpoint_ + " (no answer to Hello within " +
      std::to_string(options_.timeout.count() / 1000.0).substr(0, 4) +
      " s; is tandem-supervisor running there?" +
      (options_.curve ? " With CURVE: is the server key its public key?" : "") + ")");
}

bool ControllerClient::AwaitFromSocket(const std::function<bool(pb::Response&)>& done) {
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  for (;;) {
    const auto left = Left(deadline);
    if (left.count() <= 0) return false;
    auto r = ReceiveFromSocket(left);
    // A refused handshake is not retried into success: ZeroMQ would only try again and again.
    if (!r && !handshake_error_.empty() && !connected_) return false;
    // A signal (the tool's Ctrl-C handler) interrupts only waits that ask for it: this one waits
    // for the answer to a command already sent, until its deadline. Giving up early would report
    // an unreachable replica that did apply the command.
    if (!r && interrupted_) continue;
    if (!r) return false;
    if (done(*r)) return true;
  }
}

void ControllerClient::Send(const pb::Command& command) { SendRaw(Encode(command)); }

void ControllerClient::SendRaw(const std::string& bytes) {
  for (;;) {
    try {
      socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
      return;
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
  }
}

bool ControllerClient::TrySend(const pb::Command& command) {
  const std::string bytes = Encode(command);
  for (;;) {
    try {
      return socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
  }
}

void ControllerClient::StartHello(const std::string& nonce, bool observer, bool writer) {
  handshake_error_.clear();
  hello_pending_ = std::make_pair(observer, writer);
  Send(MakeHello(nonce, observer, writer));
}

void ControllerClient::AppendPollItems(std::vector<zmq::pollitem_t>& items) {
  items.push_back({socket_.handle(), 0, ZMQ_POLLIN, 0});
  if (monitor_) items.push_back({monitor_->handle(), 0, ZMQ_POLLIN, 0});
}

Result<std::vector<pb::CommandError>> ControllerClient::SendChecked(const pb::Command& command) {
  Send(command);
  pb::Command barrier;
  barrier.mutable_update_configuration();
  Send(barrier);
  std::vector<pb::CommandError> errors;
  bool was_superseded = false;
  const bool answered = AwaitFromSocket([&](pb::Response& r) {
    if (r.has_status() && r.status().has_configuration_applied() &&
        r.status().configuration_applied().applied().empty() &&
        r.status().configuration_applied().needs_restart().empty()) {
      return true;
    }
    if (r.has_command_error()) {
      errors.push_back(r.command_error());
    } else if (superseded_) {
      was_superseded = true;
      return true;
    } else {
      kept_.push_back(std::move(r));
    }
    return false;
  });
  if (was_superseded) return Status::FailedPrecondition(EndReason());
  if (answered) return errors;
  if (lost_) return Status::Unavailable(EndReason());
  return Status::Unavailable("the replica at " + endpoint_ + " stopped answering");
}

Result<ControllerClient::WriteOutcome> ControllerClient::Write(const pb::WriteTable& write) {
  WriteOutcome outcome;
  auto take = [&](pb::Response& r) {
    if (!AnswersWrite(r, write)) return false;
    if (r.has_write_response()) {
      outcome.response = std::move(*r.mutable_write_response());
    } else {
      outcome.refused = std::move(*r.mutable_command_error());
    }
    return true;
  };
  // An answer to an earlier send of the same uuid may be kept already: it answers this one too.
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (take(*it)) {
      kept_.erase(it);
      return outcome;
    }
  }
  pb::Command command;
  *command.mutable_write_table() = write;
  Send(command);
  bool was_superseded = false;
  const bool answered = AwaitFromSocket([&](pb::Response& r) {
    if (take(r)) return true;
    if (superseded_) {
      was_superseded = true;
      return true;
    }
    kept_.push_back(std::move(r));
    return false;
  });
  if (was_superseded) return Status::FailedPrecondition(EndReason());
  if (answered) return outcome;
  if (lost_) return Status::Unavailable(EndReason());
  return Status::Unavailable("no answer to " + DescribeWrite(write) + " from the replica at " +
                             endpoint_ + " within " +
                             std::to_string(options_.timeout.count() / 1000.0).substr(0, 4) +
                             " s (send it again with the same uuid: a retry is applied once)");
}

std::optional<pb::Response> ControllerClient::Receive(std::chrono::milliseconds limit) {
  if (!kept_.empty()) {
    pb::Response r = std::move(kept_.front());
    kept_.pop_front();
    return r;
  }
  return ReceiveFromSocket(limit);
}

std::optional<pb::Response> ControllerClient::ReceiveUntil(
    const std::function<bool(const pb::Response&)>& match, std::chrono::milliseconds limit,
    std::vector<pb::Response>* skipped) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = Receive(Left(deadline));
    if (!r) return std::nullopt;
    if (match(*r)) return r;
    if (skipped) skipped->push_back(std::move(*r));
  }
  return std::nullopt;
}

void ControllerClient::DrainMonitor(bool may_probe) {
  for (;;) {
    zmq::message_t event;
    if (!monitor_->recv(event, zmq::recv_flags::dontwait)) return;
    zmq::message_t address;
    if (event.more()) (void)monitor_->recv(address, zmq::recv_flags::dontwait);
    std::uint16_t kind = 0;
    if (event.size() >= sizeof kind) std::memcpy(&kind, event.data(), sizeof kind);
    std::uint32_t value = 0;
    if (event.size() >= sizeof kind + sizeof value) {
      std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof kind, sizeof value);
    }
    // Before the Hello is accepted a drop is only a failed attempt (ZeroMQ retries); after it,
    // the session is gone with the connection.
    if (kind == ZMQ_EVENT_DISCONNECTED && connected_ && options_.end_on_disconnect) lost_ = true;
    if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
      handshake_error_ = "it does not accept this client's CURVE key (ZAP status " +
                         std::to_string(value) +
                         "): the key's public half is not in the replica's --curve-authorized-keys";
    } else if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
               value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
      handshake_error_ = MechanismMismatch();
    } else if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
      handshake_error_ = "the ZeroMQ handshake failed (ZMTP protocol error " +
                         std::to_string(value) +
                         (options_.curve ? "; is --curve-server-key the replica's public key?)"
                                         : "; is this a Tandem controller endpoint?)");
    } else if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL && may_probe && !connected_ &&
               handshake_error_.empty() && !greeting_probed_) {
      // The replica closed the connection during the handshake. A replica whose mechanism is not
      // ours does that, and often before its greeting (which would have said so) has left: ask
      // for its greeting alone, once. Anything else is retried, as ZeroMQ does.
      greeting_probed_ = true;
      const auto theirs = PeerSecurityMechanism(context_, endpoint_,
                                                std::min(options_.timeout, kGreetingProbeLimit));
      const std::string ours = options_.curve ? "CURVE" : "NULL";
      if (theirs == "NULL" || theirs == "CURVE") {
        if (*theirs != ours) handshake_error_ = MechanismMismatch();
      } else if (theirs) {
        handshake_error_ = "it speaks ZeroMQ's " + *theirs +
                           " mechanism, not a Tandem controller's (is this a Tandem controller "
                           "endpoint?)";
      }
    }
  }
}

std::string ControllerClient::MechanismMismatch() const {
  return options_.curve ? "it does not use CURVE, and this client does (drop --curve-server-key "
                          "and --curve-client-key)"
                        : "it requires CURVE authentication (give --curve-server-key and "
                          "--curve-client-key)";
}

std::optional<pb::Response> ControllerClient::ReceiveFromSocket(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    // Once the connection is lost, take only what already arrived.
    const auto left = lost_ ? std::chrono::milliseconds(0) : Left(deadline);
    zmq::pollitem_t items[2] = {{socket_.handle(), 0, ZMQ_POLLIN, 0},
                                {monitor_ ? monitor_->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
    int n = 0;
    interrupted_ = false;
    try {
      n = zmq::poll(items, monitor_ ? 2 : 1, std::max(left, std::chrono::milliseconds(0)));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      interrupted_ = true;
      return std::nullopt;
    }
    if (n <= 0) return std::nullopt;
    zmq::message_t msg;
    if (socket_.recv(msg, zmq::recv_flags::dontwait)) {
      auto d = DecodeResponse(msg.to_string_view());
      if (!d.ok()) {
        ++undecodable_;
        last_decode_error_ = d.error.reason;
        continue;
      }
      if (d.message.has_status() && d.message.status().has_superseded()) {
        superseded_ = true;
        superseded_by_ = d.message.status().superseded().by_nonce();
      }
      if (hello_pending_ && d.message.has_status() && d.message.status().has_hello_accepted()) {
        // As Hello() does: disconnects of attempts before this Hello do not count.
        accepted_ = d.message.status().hello_accepted();
        if (monitor_) DrainMonitor(/*may_probe=*/false);
        connected_ = true;
        writer_ = hello_pending_->second;
        hello_pending_.reset();
      } else if (hello_pending_ && d.message.has_command_error() &&
                 d.message.command_error().what() == "Hello") {
        hello_pending_.reset();
      }
      return d.message;
    }
    if (lost_) return std::nullopt;
    if (monitor_) DrainMonitor(/*may_probe=*/in_hello_);
    if (!handshake_error_.empty() && !connected_) return std::nullopt;  // Hello says why
  }
}

}  // namespace tandem::ipc
