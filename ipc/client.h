// The one controller client: a ZeroMQ DEALER connected to a supervisor's controller endpoint,
// speaking the protocol of ipc/tandem.proto. tandem-ctl, tandem-bench and the tests all talk to a
// replica through it.
//
// Optionally it watches its connection (Options::end_on_disconnect: a ZeroMQ socket monitor, and
// ZMTP heartbeats so that a stopped supervisor process or a vanished host counts as gone too — a
// supervisor whose loop hangs still answers them from libzmq's I/O thread): once the connection
// drops after the Hello was accepted, the session is over — a supervisor that comes back at the
// same address is a new replica that never saw our Hello — and lost() says so. A Superseded status
// (a newer controller took over) sets superseded(). With Options::goodbye, destroying a client
// whose Hello was accepted sends Goodbye first, so a normal end is not a disconnection the
// supervisor warns about.
//
// With Options::curve it speaks CURVE (DESIGN §12): the server's public key and the client's pair.
// A replica that refuses the handshake (an unknown client key, no CURVE where the replica requires
// it, or CURVE where it has none) is reported by Hello at once, with the reason.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "base/status.h"
#include "ipc/codec.h"
#include "ipc/curve_keys.h"

namespace tandem::ipc {

// Hello{nonce, kProtocolVersion, observer, writer}. A writer session (DESIGN §9) is an observer
// that may also send WriteTable: observer and writer both true.
pb::Command MakeHello(const std::string& nonce, bool observer = false, bool writer = false);

// True when `response` answers `write`: its WriteResponse (same uuid), or the CommandError the
// supervisor refused it with (what == DescribeWrite(write), ipc/table_write.h). For a client with
// several writes in flight; uuids are the client's to keep distinct.
bool AnswersWrite(const pb::Response& response, const pb::WriteTable& write);

// Subscribe{uuid, id, as_of, snapshot, up_to} (DESIGN §10). as_of unset: the latest time the
// replica can read now (the supervisor fills it in); up_to unset: until cancelled.
pb::Command MakeSubscribe(const std::string& uuid, const std::string& id,
                          std::optional<std::uint64_t> as_of = std::nullopt, bool snapshot = true,
                          std::optional<std::uint64_t> up_to = std::nullopt);
pb::Command MakeCancelSubscribe(const std::string& uuid);
// True when `response` is a SubscribeBatch or the SubscribeEnd of the subscribe `uuid` (a filter
// for ControllerClient::ReceiveUntil).
bool IsSubscribeAnswer(const pb::Response& response, const std::string& uuid);

class ControllerClient {
 public:
  struct Options {
    // How long Hello and SendChecked wait for their answers.
    std::chrono::milliseconds timeout{5000};
    std::chrono::milliseconds linger{0};
    // ZMTP heartbeats and a socket monitor: after the Hello is accepted, a dropped connection
    // ends the session (lost()).
    //
    // It also means an unbounded receive queue (no ZeroMQ receive high-water mark: with one,
    // libzmq 4.3.4 aborts the process when a connection it stopped reading is cut; client.cc
    // says how). Whatever the replica sends is taken off the connection as it arrives, however
    // slowly the application calls Receive (no subscribe ends TOO_SLOW for that): the
    // application must receive promptly and bound what it holds itself (tandem-ctl subscribe
    // bounds its queue of batches waiting for stdout).
    bool end_on_disconnect = false;
    // Send Goodbye when destroyed after an accepted Hello (and no loss).
    bool goodbye = false;
    // CURVE keys (ipc/curve_keys.h); unset: no security mechanism (ZeroMQ's NULL).
    std::optional<CurveClientKeys> curve;
    // ZeroMQ's send high-water mark (messages queued towards the replica); unset: ZeroMQ's.
    std::optional<int> send_hwm;
  };

  // InvalidArgument (with ZeroMQ's reason) when `endpoint` is not a ZeroMQ endpoint.
  static Result<std::unique_ptr<ControllerClient>> Create(const std::string& endpoint,
                                                          const Options& options);
  ControllerClient(const std::string& endpoint, const Options& options);  // throws zmq::error_t
  ~ControllerClient();
  ControllerClient(const ControllerClient&) = delete;
  ControllerClient& operator=(const ControllerClient&) = delete;

  // Sends Hello{nonce, observer, writer} and waits (Options::timeout) for HelloAccepted.
  // Unavailable when nothing answers in time; FailedPrecondition when the Hello is refused (e.g.
  // writer without observer). May be called again on a connected client: an observer session
  // becomes a controller's (the supervisor keeps one session per peer). Frontiers received
  // meanwhile are kept for Receive; other responses are dropped.
  Status Hello(const std::string& nonce, bool observer = false, bool writer = false);
  const pb::Status::HelloAccepted& accepted() const { return accepted_; }
  // The Hello was accepted.
  bool connected() const { return connected_; }
  // This session is an observer's (read-only: it sends only Peek, CancelPeek and Goodbye).
  bool observer() const { return connected_ && accepted_.observer(); }
  // This session is a writer's: an observer that may also send WriteTable.
  bool writer() const { return observer() && writer_; }

  void Send(const pb::Command& command);
  void SendRaw(const std::string& bytes);  // retried on EINTR, like Send
  // Send without blocking: false when ZeroMQ would block (the send queue to the replica is at its
  // high-water mark: a replica that stopped reading), and nothing was sent. For a client that
  // must not wait behind one replica (controller/replica_set.h).
  bool TrySend(const pb::Command& command);

  // The non-blocking handshake (controller/replica_set.h): sends Hello{nonce, observer, writer} and
  // returns at once. The HelloAccepted (or the CommandError refusing it) comes through Receive
  // like any response; taking the HelloAccepted there makes the session connected(), as Hello()
  // does.
  void StartHello(const std::string& nonce, bool observer = false, bool writer = false);
  // The ZeroMQ items to poll for this client's input (the socket, and its monitor when it has
  // one), appended to `items`: a caller waiting on several clients polls them all, then calls
  // Receive(0) on those that are ready.
  void AppendPollItems(std::vector<zmq::pollitem_t>& items);
  // Sends `command`, then an empty UpdateConfiguration as a barrier: the supervisor handles one
  // controller's commands in order and answers refusals (and the barrier) at once, so every
  // CommandError before the barrier's ConfigurationApplied belongs to `command`. Other responses
  // received meanwhile are kept for Receive. Unavailable if the barrier is not answered in time
  // or the connection is lost; FailedPrecondition (with superseded()) when superseded.
  Result<std::vector<pb::CommandError>> SendChecked(const pb::Command& command);

  // The answer to one WriteTable: exactly one of the two is set.
  struct WriteOutcome {
    std::optional<pb::WriteResponse> response;  // durable at response->time(), or its error()
    std::optional<pb::CommandError> refused;    // the supervisor refused it: nothing was applied
  };
  // Sends `write` (from the controller's or a writer session) and waits (Options::timeout) for
  // its answer (AnswersWrite). Other responses received meanwhile are kept for Receive.
  // Unavailable when no answer comes in time or the connection is lost — the write may or may
  // not have been applied then: send it again with the same uuid (a retry is applied once).
  Result<WriteOutcome> Write(const pb::WriteTable& write);

  // The next response (kept ones first), or nullopt after `limit`, on EINTR, or once the
  // connection is lost. Undecodable responses are skipped (a newer replica may send kinds we do
  // not know) and counted.
  std::optional<pb::Response> Receive(std::chrono::milliseconds limit);
  // Receives until `match` accepts a response, or `limit` passes. The others go to `skipped`
  // when given, else they are dropped.
  std::optional<pb::Response> ReceiveUntil(const std::function<bool(const pb::Response&)>& match,
                                           std::chrono::milliseconds limit,
                                           std::vector<pb::Response>* skipped = nullptr);

  std::chrono::milliseconds timeout() const { return options_.timeout; }
  const std::string& endpoint() const { return endpoint_; }
  std::uint64_t undecodable() const { return undecodable_; }
  const std::string& last_decode_error() const { return last_decode_error_; }

  // Why the replica refused the handshake (authentication or security mechanism), or empty.
  const std::string& handshake_error() const { return handshake_error_; }

  bool lost() const { return lost_; }
  bool superseded() const { return superseded_; }
  // Why the session ended, when lost() or superseded().
  std::string EndReason() const;

  // The DEALER itself, for tests that send what no well-behaved client would (multipart).
  zmq::socket_t& socket() { return socket_; }

 private:
  std::optional<pb::Response> ReceiveFromSocket(std::chrono::milliseconds limit);
  // Takes responses from the socket (not the kept ones) until `done` returns true (then true),
  // Options::timeout passes or nothing more comes (then false).
  bool AwaitFromSocket(const std::function<bool(pb::Response&)>& done);
  // Takes the monitor's events. `may_probe`: a handshake closed without a reason may be answered
  // by asking for the replica's greeting (PeerSecurityMechanism, up to a second) — only from the
  // blocking Hello, never where a caller polls many clients (controller/replica_set.h) or after a
  // Hello was accepted.
  void DrainMonitor(bool may_probe);
  // Why the replica refuses us when our security mechanisms differ.
  std::string MechanismMismatch() const;

  std::string endpoint_;
  Options options_;
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::optional<zmq::socket_t> monitor_;  // PAIR, receiving the socket's disconnect events
  std::deque<pb::Response> kept_;
  pb::Status::HelloAccepted accepted_;
  bool connected_ = false;
  bool writer_ = false;  // the accepted Hello asked for a writer session
  // StartHello sent a Hello whose answer has not been taken yet: {observer, writer} it asked for.
  std::optional<std::pair<bool, bool>> hello_pending_;
  bool lost_ = false;
  bool interrupted_ = false;  // the last ReceiveFromSocket was cut short by a signal (EINTR)
  bool superseded_ = false;
  std::string superseded_by_;
  std::uint64_t undecodable_ = 0;
  std::string last_decode_error_;
  std::string handshake_error_;
  bool greeting_probed_ = false;  // PeerSecurityMechanism asked, at most once per client
  bool in_hello_ = false;         // inside the blocking Hello(): DrainMonitor may probe
};

// Milliseconds left until `deadline` (negative once it passed).
inline std::chrono::milliseconds Left(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                               std::chrono::steady_clock::now());
}

}  // namespace tandem::ipc
