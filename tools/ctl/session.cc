#include "tools/ctl/session.h"

#include <charconv>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <utility>
#include <vector>

namespace tandem::ctl {

using tools::JsonWriter;

namespace {
bool g_json = false;
volatile std::sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }
}  // namespace

void SetJsonOutput(bool json) { g_json = json; }
bool JsonOutput() { return g_json; }

void InstallInterruptHandlers() {
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
}
bool Interrupted() { return g_interrupted != 0; }

int Fail(int code, const std::string& message) {
  std::cerr << "tandem-ctl: " << message << "\n";
  if (g_json) std::cout << tools::JsonError(message, code) << std::endl;
  return code;
}

int Usage(const std::string& message) {
  return Fail(kExitUsage, message + " (tandem-ctl --help for usage)");
}

int Refused(const std::string& what, const std::string& why) {
  return Fail(kExitFailed, "refused: " + what + ": " + why);
}

void Warn(const std::string& message) { std::cerr << "tandem-ctl: warning: " << message << "\n"; }

Result<std::uint64_t> ParseU64(const std::string& text, const std::string& what) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    return Status::InvalidArgument(what + ": \"" + text + "\" is not a non-negative integer");
  }
  return v;
}

Result<double> ParseSeconds(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0)) {
    return Status::InvalidArgument(what + ": \"" + text + "\" is not a number of seconds");
  }
  return v;
}

Result<std::optional<ipc::CurveClientKeys>> LoadCurveKeys(const Globals& g) {
  if (g.curve_server_key.empty() && g.curve_client_key.empty()) {
    return std::optional<ipc::CurveClientKeys>();
  }
  if (g.curve_server_key.empty() || g.curve_client_key.empty()) {
    return Status::InvalidArgument("--curve-server-key and --curve-client-key go together");
  }
  auto keys = ipc::LoadCurveClientKeys(g.curve_server_key, g.curve_client_key);
  if (!keys.ok()) return keys.status();
  return std::optional<ipc::CurveClientKeys>(std::move(keys).value());
}

namespace {

controller::Session::Options SessionOptions(const Globals& g) {
  controller::Session::Options o;
  o.endpoints = g.endpoints.empty() ? std::vector<std::string>{g.endpoint} : g.endpoints;
  o.replica = g.replica;
  o.timeout = std::chrono::duration<double>(g.timeout_s);
  o.replace = g.replace;
  o.warn = Warn;
  o.interrupted = Interrupted;
  return o;
}

}  // namespace

Session::Session(Globals g, History h)
    : g_(std::move(g)), core_(SessionOptions(g_), std::move(h)) {}

std::optional<int> Session::Open(Mode mode) {
  auto curve = LoadCurveKeys(g_);
  if (!curve.ok()) return Usage(curve.status().message());
  core_.options().curve = std::move(curve).value();
  const Status opened = core_.Open(mode);
  if (opened.ok()) return std::nullopt;
  if (opened.code() == StatusCode::kInvalidArgument) {  // no endpoint: nothing was connected
    if (multi()) return Usage("--endpoint: " + opened.message());
    return Fail(kExitUsage, "--endpoint \"" + g_.endpoint +
                                "\" is not a ZeroMQ endpoint (expected e.g. "
                                "tcp://127.0.0.1:2101): " +
                                opened.message());
  }
  return Ended(opened);
}

Result<bool> Session::Submit(const pb::Command& command, bool record, const std::string& what,
                             const std::function<void(History&)>& also) {
  auto refused = core_.Submit(command, record, also);
  if (!refused.ok()) return refused.status();
  for (const auto& r : *refused) {
    Refused(what, r.replica ? DescribeReplica(*r.replica) + ": " + ReplicaRefusal(r.error)
                            : ReplicaRefusal(r.error));
  }
  return refused->empty();
}

std::optional<int> Session::ReadOwnWrites(const std::string& id, const std::string& what) {
  if (Status st = core_.ReadOwnWrites(id); !st.ok()) return Refused(what, st.message());
  for (const auto& [i, reason] : core_.left_out()) {
    Warn(DescribeReplica(i) + " is left out of " + what + ": " + reason);
  }
  return std::nullopt;
}

int Session::Ended(const Status& s) {
  if (multi()) {
    if (s.ok()) return Fail(kExitUnavailable, EndReason());
    return Fail(s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed, s.message());
  }
  if (core_.superseded()) return Fail(kExitSuperseded, EndReason());
  if (core_.lost()) return Fail(kExitUnavailable, EndReason());
  return Fail(s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed, s.message());
}

namespace {

// A LatestTime's result for `what`: into `latest`, or the exit (printed) — the session's end, or
// the refusal of "WHAT --at latest".
std::optional<int> Took(Session& s, Result<Latest> found, const std::string& what, Latest& latest) {
  if (found.ok()) {
    latest = *found;
    return std::nullopt;
  }
  if (found.status().code() == StatusCode::kUnavailable) return s.Ended(found.status());
  return Refused(what + " --at latest", found.status().message());
}

}  // namespace

std::optional<int> LatestTime(Session& s, const std::string& id, const std::string& what,
                              Latest& latest,
                              std::optional<std::chrono::steady_clock::time_point> wait_until) {
  return Took(s, controller::LatestTime(s.core(), id, wait_until), what, latest);
}

std::optional<int> LatestTime(Session& s, const std::vector<std::string>& ids,
                              const std::string& what, Latest& latest,
                              std::optional<std::chrono::steady_clock::time_point> wait_until) {
  return Took(s, controller::LatestOfAll(s.core(), ids, wait_until), what, latest);
}

void PrintOk(const std::string& what, const std::function<void(tools::JsonWriter&)>& fields,
             const std::string& human) {
  if (JsonOutput()) {
    JsonWriter json;
    json.BeginObject().Key("ok").Bool(true).Key("command").String(what);
    if (fields) fields(json);
    json.EndObject();
    std::cout << json.str() << "\n";
  } else {
    std::cout << human << "\n";
  }
}

}  // namespace tandem::ctl
