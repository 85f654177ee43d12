// CURVE on the controller endpoint (DESIGN §12): the server's key, the directory of
// authorized client keys (reread on SIGHUP) and the ZAP handler (RFC 27) that refuses every
// unknown key during the handshake — before the connection can carry a single command.
//
// * --curve-secret-key FILE: the server's secret key (ipc/curve_keys.h: owner-only permissions,
//   ssh-style, else refused); its public key is derived from it.
// * --curve-authorized-keys DIR: one client public key per regular file (names starting with '.'
//   are skipped). The directory must be owned by this user (or root) and not writable by group
//   or others, nor may a key file be — whoever can write there can let anyone in. At start any
//   problem is an impossible configuration (exit 78, naming the file). On SIGHUP the directory is
//   reread: a bad file is logged and left out (its key is refused), the rest applies; a directory
//   that cannot be used at all leaves no key authorized (fail closed). Connections already
//   authenticated are not cut: a removed key stops working for new connections.
// * The ZAP handler is an inproc://zeromq.zap.01 REP socket in the supervisor's context,
//   serviced by the supervisor's loop (PollItem/OnReadable). The user id of an accepted
//   connection is the key's file name.
// * Refusals are counted (tandem_curve_refused_total{reason}) and logged with the peer address
//   and the public key only, at most once per key per 10 s (repeats counted).
// * Handshakes that fail before ZAP is asked (a client without CURVE, or with the wrong server
//   key) reach us as socket-monitor events (OnHandshakeFailed).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "base/status.h"
#include "ipc/curve_keys.h"
#include "supervisor/config.h"
#include "supervisor/metrics.h"

namespace tandem::supervisor {

// The controller endpoint `config` listens on is allowed as configured: a listening address that
// is not loopback (or ipc://) requires CURVE unless --allow-insecure-endpoint; CURVE's key files
// can be used. The reason for exit 78 otherwise.
Status CheckControllerSecurity(const SupervisorConfig& config);
// `endpoint` (a ZeroMQ bind address) is reachable from this host only: tcp:// on 127.0.0.0/8,
// ::1, localhost or the loopback interface `lo`, or ipc:// / inproc://.
bool IsLocalEndpoint(const std::string& endpoint);

// The authorized keys of a directory: Z85 public key → file name.
struct AuthorizedKeys {
  std::map<std::string, std::string> keys;
  std::vector<std::string> errors;  // files left out, and why
};
// Reads `dir`. Not OK when the directory itself cannot be used (missing, not a directory, wrong
// owner or permissions); a bad file is in `errors`.
Result<AuthorizedKeys> LoadAuthorizedKeys(const std::string& dir);

class ControllerAuth {
 public:
  static constexpr char kZapEndpoint[] = "inproc://zeromq.zap.01";
  static constexpr char kZapDomain[] = "tandem-controller";

  // Loads the keys and binds the ZAP handler in `ctx`. The reason (exit 78) when the keys cannot
  // be used; Unavailable when the handler cannot be bound.
  static Result<std::unique_ptr<ControllerAuth>> Create(const SupervisorConfig& config,
                                                        zmq::context_t& ctx, Metrics& metrics);

  // Makes `router` a CURVE server consulting this handler. Before it binds.
  void ConfigureRouter(zmq::socket_t& router) const;
  // The ZAP socket, for the loop's poll; OnReadable answers every pending request.
  zmq::pollitem_t PollItem();
  void OnReadable();
  // SIGHUP: rereads the authorized keys.
  void Reload();
  // A socket-monitor event of the router: ZMQ_EVENT_HANDSHAKE_FAILED_* with its value.
  void OnHandshakeFailed(std::uint16_t event, std::uint32_t value);
  // The ZeroMQ monitor events to ask the router's monitor for.
  static constexpr int kMonitorEvents =
      ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;

  const std::string& server_public_key() const { return server_.public_z85; }
  std::size_t authorized() const { return authorized_.size(); }

 private:
  ControllerAuth(const SupervisorConfig& config, zmq::context_t& ctx, Metrics& metrics);
  void Answer(const std::vector<zmq::message_t>& request);
  void Refused(const std::string& reason, const std::string& key, const std::string& address);

  std::string dir_;
  ipc::CurveKeyPair server_;
  std::map<std::string, std::string> authorized_;
  zmq::socket_t zap_;
  Metrics& metrics_;
  // Log throttle: the last time each refused key (or reason) was logged, and repeats since.
  struct Throttle {
    std::chrono::steady_clock::time_point logged;
    std::uint64_t repeats = 0;
  };
  std::map<std::string, Throttle> throttle_;
};

}  // namespace tandem::supervisor
