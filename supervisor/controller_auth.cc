#include "supervisor/controller_auth.h"

#include <arpa/inet.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <zmq_addon.hpp>

namespace tandem::supervisor {

namespace {

constexpr char kCurveRefused[] = "tandem_curve_refused_total";
constexpr char kCurveAccepted[] = "tandem_curve_accepted_total";
constexpr char kCurveKeys[] = "tandem_curve_authorized_keys";
constexpr char kCurveReloads[] = "tandem_curve_key_reloads_total";

constexpr auto kLogEvery = std::chrono::seconds(10);
constexpr std::size_t kMaxThrottled = 1024;  // refused keys remembered for the log throttle

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The host part of a tcp:// bind address ("127.0.0.1", "::1", "*", "lo", "eth0", ...).
std::string TcpHost(std::string rest) {
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    return close == std::string::npos ? rest : rest.substr(1, close - 1);
  }
  const auto colon = rest.rfind(':');
  return colon == std::string::npos ? rest : rest.substr(0, colon);
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "lo") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;  // a wildcard, another interface, a name: reachable from elsewhere, for all we know
}

// The owner may be this user or root; group and others may not write.
Status CheckNotWritableByOthers(const std::string& what, const std::string& path,
                                const struct stat& st) {
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    return Status::FailedPrecondition(what + " '" + path + "' is owned by uid " +
                                      std::to_string(st.st_uid) +
                                      ", neither this user nor root; refusing to trust it");
  }
  if ((st.st_mode & 022) != 0) {
    return Status::FailedPrecondition("permissions " + Octal(st.st_mode) + " for " + what + " '" +
                                      path +
                                      "' are too open: group or others could authorize any key "
                                      "(chmod go-w '" +
                                      path + "'); refusing to trust it");
  }
  return Status::Ok();
}

}  // namespace

bool IsLocalEndpoint(const std::string& endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  return IsLoopbackHost(TcpHost(endpoint.substr(6)));
}

Status CheckControllerSecurity(const SupervisorConfig& c) {
  if (!c.curve()) {
    if (IsLocalEndpoint(c.controller_listen_addr) || c.allow_insecure_endpoint) {
      return Status::Ok();
    }
    return Status::FailedPrecondition(
        "--controller-listen-addr " + c.controller_listen_addr +
        " is not a loopback address, and without CURVE anyone who can reach it can control the "
        "replica: give --curve-secret-key and --curve-authorized-keys (tandem-ctl keygen makes "
        "keys), listen on 127.0.0.1, or pass --allow-insecure-endpoint if the network is "
        "protected otherwise");
  }
  if (!ipc::CurveAvailable()) {
    return Status::FailedPrecondition(
        "--curve-secret-key: this libzmq was built without CURVE support");
  }
  if (auto server = ipc::ReadCurveSecretKeyFile(c.curve_secret_key); !server.ok()) {
    return Status::FailedPrecondition("--curve-secret-key: " + server.status().message());
  }
  auto keys = LoadAuthorizedKeys(c.curve_authorized_keys);
  if (!keys.ok())
    return Status::FailedPrecondition("--curve-authorized-keys: " + keys.status().message());
  if (!keys->errors.empty()) {
    return Status::FailedPrecondition("--curve-authorized-keys: " + keys->errors.front());
  }
  return Status::Ok();
}

Result<AuthorizedKeys> LoadAuthorizedKeys(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    return Status::NotFound("cannot read directory '" + dir + "': " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition("'" + dir + "' is not a directory");
  if (Status s = CheckNotWritableByOthers("directory", dir, st); !s.ok()) return s;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename();
    if (!name.empty() && name[0] != '.') names.push_back(name);
  }
  if (ec) return Status::Internal("cannot list directory '" + dir + "': " + ec.message());
  std::sort(names.begin(), names.end());
  AuthorizedKeys out;
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    struct stat fst {};
    if (stat(path.c_str(), &fst) != 0) {
      out.errors.push_back("cannot read key file '" + path + "': " + std::strerror(errno));
      continue;
    }
    if (!S_ISREG(fst.st_mode)) {
      out.errors.push_back("'" + path + "' is not a regular file (one public key per file)");
      continue;
    }
    if (Status s = CheckNotWritableByOthers("key file", path, fst); !s.ok()) {
      out.errors.push_back(s.message());
      continue;
    }
    auto key = ipc::ReadCurvePublicKeyFile(path);
    if (!key.ok()) {
      out.errors.push_back(key.status().message());
      continue;
    }
    out.keys.emplace(*key, name);  // a key in two files: the first name
  }
  return out;
}

ControllerAuth::ControllerAuth(const SupervisorConfig& config, zmq::context_t& ctx,
                               Metrics& metrics)
    : dir_(config.curve_authorized_keys), zap_(ctx, zmq::socket_type::rep), metrics_(metrics) {}

Result<std::unique_ptr<ControllerAuth>> ControllerAuth::Create(const SupervisorConfig& config,
                                                               zmq::context_t& ctx,
                                                               Metrics& metrics) {
  if (Status s = CheckControllerSecurity(config); !s.ok()) return s;
  auto server = ipc::ReadCurveSecretKeyFile(config.curve_secret_key);
  if (!server.ok())
    return Status::FailedPrecondition("--curve-secret-key: " + server.status().message());
  auto keys = LoadAuthorizedKeys(config.curve_authorized_keys);
  if (!keys.ok())
    return Status::FailedPrecondition("--curve-authorized-keys: " + keys.status().message());
  std::unique_ptr<ControllerAuth> auth(new ControllerAuth(config, ctx, metrics));
  auth->server_ = *server;
  auth->authorized_ = std::move(keys->keys);
  try {
    auth->zap_.set(zmq::sockopt::linger, 0);
    auth->zap_.bind(kZapEndpoint);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("cannot bind the ZAP handler ") + kZapEndpoint + ": " +
                               e.what());
  }
  using T = Metrics::Type;
  metrics.Declare(kCurveRefused, T::kCounter,
                  "controller connections refused during the CURVE handshake, by reason "
                  "(unknown_key, no_curve, bad_handshake, protocol, incomplete_handshake)");
  metrics.Declare(kCurveAccepted, T::kCounter,
                  "controller connections whose CURVE key is authorized");
  metrics.Declare(kCurveKeys, T::kGauge, "authorized client keys loaded now");
  metrics.Declare(kCurveReloads, T::kCounter,
                  "rereads of --curve-authorized-keys (SIGHUP), by result (ok, partial, failed)");
  for (const char* reason : {"unknown_key", "no_curve", "bad_handshake"}) {
    metrics.Inc(kCurveRefused, {{"reason", reason}}, 0);
  }
  metrics.Inc(kCurveAccepted, {}, 0);
  metrics.Set(kCurveKeys, {}, static_cast<double>(auth->authorized_.size()));
  spdlog::info(
      "controller endpoint: CURVE, server public key {}, {} authorized client key(s) in {}",
      auth->server_.public_z85, auth->authorized_.size(), auth->dir_);
  if (auth->authorized_.empty()) {
    spdlog::warn("no client key is authorized yet: add public keys to {} and send SIGHUP",
                 auth->dir_);
  }
  return auth;
}

void ControllerAuth::ConfigureRouter(zmq::socket_t& router) const {
  router.set(zmq::sockopt::curve_server, 1);
  router.set(zmq::sockopt::curve_secretkey, server_.secret_z85);
  router.set(zmq::sockopt::zap_domain, std::string(kZapDomain));
}

zmq::pollitem_t ControllerAuth::PollItem() { return {zap_.handle(), 0, ZMQ_POLLIN, 0}; }

void ControllerAuth::OnReadable() {
  for (;;) {
    std::vector<zmq::message_t> request;
    try {
      if (!zmq::recv_multipart(zap_, std::back_inserter(request), zmq::recv_flags::dontwait)) {
        return;
      }
    } catch (const zmq::error_t& e) {
      spdlog::warn("ZAP handler: {}", e.what());
      return;
    }
    Answer(request);
  }
}

// RFC 27: version, request id, domain, address, identity, mechanism, credentials; answered with
// version, request id, status code, status text, user id, metadata.
void ControllerAuth::Answer(const std::vector<zmq::message_t>& request) {
  auto frame = [&](std::size_t i) {
    return i < request.size() ? request[i].to_string() : std::string();
  };
  std::string code = "400", text = "unknown client key", user;
  const std::string address = frame(3), mechanism = frame(5);
  if (frame(0) != "1.0" || request.size() < 6) {
    code = "500";
    text = "malformed ZAP request";
    spdlog::error("ZAP handler: a malformed request ({} frames)", request.size());
  } else if (frame(2) != kZapDomain || mechanism != "CURVE" || request.size() != 7 ||
             request[6].size() != 32) {
    text = "CURVE required";
    Refused("protocol", "", address);
  } else {
    const std::string key = ipc::CurveKeyToZ85(request[6].to_string_view());
    if (auto it = authorized_.find(key); it != authorized_.end()) {
      code = "200";
      text = "OK";
      user = it->second;
      metrics_.Inc(kCurveAccepted);
      spdlog::debug("controller connection from {} authenticated: key {} ({})", address, key, user);
    } else {
      Refused("unknown_key", key, address);
    }
  }
  const std::vector<std::string> parts = {"1.0", frame(1), code, text, user, ""};
  std::vector<zmq::const_buffer> reply;
  for (const std::string& p : parts) reply.push_back(zmq::buffer(p));
  try {
    zmq::send_multipart(zap_, reply);
  } catch (const zmq::error_t& e) {
    spdlog::warn("ZAP handler: cannot answer: {}", e.what());
  }
}

void ControllerAuth::Refused(const std::string& reason, const std::string& key,
                             const std::string& address) {
  metrics_.Inc(kCurveRefused, {{"reason", reason}});
  const std::string what =
      reason == "unknown_key"
          ? "its CURVE key " + key + " is not in --curve-authorized-keys " + dir_
      : reason == "no_curve" ? "it does not use CURVE, which this endpoint requires"
      : reason == "bad_handshake"
          ? "its CURVE handshake failed (a wrong server key, or not a CURVE client)"
          : "its security handshake failed (" + reason + ")";
  const std::string throttle_key = reason + key;
  const auto now = std::chrono::steady_clock::now();
  if (throttle_.size() > kMaxThrottled) throttle_.clear();
  auto [it, fresh] = throttle_.try_emplace(throttle_key);
  if (!fresh && now - it->second.logged < kLogEvery) {
    ++it->second.repeats;
    return;
  }
  const std::string from = address.empty() ? "" : " from " + address;
  const std::string repeats = it->second.repeats == 0 ? ""
                                                      : " (" + std::to_string(it->second.repeats) +
                                                            " more since the last such message)";
  spdlog::warn("refused a controller connection{}: {}{}", from, what, repeats);
  it->second = {now, 0};
}

void ControllerAuth::OnHandshakeFailed(std::uint16_t event, std::uint32_t value) {
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
    metrics_.Inc(kCurveRefused, {{"reason", "incomplete_handshake"}});
    spdlog::debug("a controller connection ended during its handshake (errno {})", value);
    return;
  }
  if (event != ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) return;
  switch (value) {
    case ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
      Refused("no_curve", "", "");
      break;
    case ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
    case ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE:
    case ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO:
    case ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE:
      Refused("bad_handshake", "", "");
      break;
    default:
      // A ZAP status other than 200 is counted by Answer; anything else is a protocol error.
      if ((value & 0xF0000000u) != 0x20000000u) Refused("protocol", "", "");
      break;
  }
}

void ControllerAuth::Reload() {
  auto keys = LoadAuthorizedKeys(dir_);
  if (!keys.ok()) {
    // Fail closed: keys from a directory we cannot trust authorize nobody.
    authorized_.clear();
    metrics_.Inc(kCurveReloads, {{"result", "failed"}});
    metrics_.Set(kCurveKeys, {}, 0);
    spdlog::error("SIGHUP: --curve-authorized-keys: {}; no client key is authorized now",
                  keys.status().message());
    return;
  }
  std::size_t added = 0, removed = 0;
  for (const auto& [key, name] : keys->keys) added += authorized_.count(key) == 0 ? 1 : 0;
  for (const auto& [key, name] : authorized_) removed += keys->keys.count(key) == 0 ? 1 : 0;
  authorized_ = std::move(keys->keys);
  for (const std::string& e : keys->errors) {
    spdlog::error("SIGHUP: --curve-authorized-keys: left out: {}", e);
  }
  metrics_.Inc(kCurveReloads, {{"result", keys->errors.empty() ? "ok" : "partial"}});
  metrics_.Set(kCurveKeys, {}, static_cast<double>(authorized_.size()));
  spdlog::info(
      "SIGHUP: reread {}: {} authorized client key(s) ({} added, {} removed{}); connections "
      "already open are kept",
      dir_, authorized_.size(), added, removed,
      keys->errors.empty() ? "" : ", " + std::to_string(keys->errors.size()) + " file(s) left out");
}

}  // namespace tandem::supervisor
