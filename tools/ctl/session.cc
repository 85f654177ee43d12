#include "tools/ctl/session.h"

#include <charconv>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <set>
#include <vector>

#include "ipc/codec.h"
#include "ipc/model.h"

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

std::string ReplicaRefusal(const pb::CommandError& e) {
  return "the replica refused " + e.what() + ": " + e.why();
}

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

std::optional<int> Session::Open(Mode mode) {
  ipc::ControllerClient::Options options;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(g_.timeout_s * 1000));
  options.linger = std::chrono::milliseconds(200);
  options.end_on_disconnect = true;
  options.goodbye = true;
  if (!g_.curve_server_key.empty() || !g_.curve_client_key.empty()) {
    if (g_.curve_server_key.empty() || g_.curve_client_key.empty()) {
      return Usage("--curve-server-key and --curve-client-key go together");
    }
    auto keys = ipc::LoadCurveClientKeys(g_.curve_server_key, g_.curve_client_key);
    if (!keys.ok()) return Usage(keys.status().message());
    options.curve = std::move(keys).value();
  }
  auto client = ipc::ControllerClient::Create(g_.endpoint, options);
  if (!client.ok()) {
    return Fail(kExitUsage, "--endpoint \"" + g_.endpoint +
                                "\" is not a ZeroMQ endpoint (expected e.g. "
                                "tcp://127.0.0.1:2101): " +
                                client.status().message());
  }
  client_ = std::move(client).value();
  const std::string nonce = RandomHex(8);
  const Status hello = client_->Hello(nonce, /*observer=*/true, /*writer=*/mode == Mode::kWrite);
  if (!hello.ok()) return Ended(hello);
  if (!client_->observer()) {
    // A supervisor that knows no observers made us its controller (the Hello is the same
    // protocol version): reading must not go on as if nothing happened.
    return Fail(kExitFailed, "the replica at " + g_.endpoint +
                                 " does not support observer sessions (Hello{observer}); "
                                 "upgrade tandem-supervisor");
  }
  if (mode != Mode::kControl) return std::nullopt;
  if (auto code = CheckLiveIndexes()) return code;
  if (Status s = client_->Hello(RandomHex(8), /*observer=*/false); !s.ok()) return Ended(s);
  // Another controller may have built indexes between the two Hellos: look again. Refusing now
  // still drops nothing (no InitializationComplete); the replica keeps its dataflows.
  if (auto code = CheckLiveIndexes()) return code;
  for (const auto& c : history_.Replay()) {
    auto errors = client_->SendChecked(c);
    if (!errors.ok()) return Ended(errors.status());
    for (const auto& e : *errors) {
      Warn("replaying " + ipc::Describe(c) + " from the history: refused: " + e.why());
    }
  }
  pb::Command done;
  done.mutable_initialization_complete();
  auto errors = client_->SendChecked(done);
  if (!errors.ok()) return Ended(errors.status());
  return std::nullopt;
}

Result<bool> Session::Submit(const pb::Command& command, bool record, const std::string& what,
                             const std::function<void(History&)>& also) {
  auto errors = client_->SendChecked(command);
  if (!errors.ok()) return errors.status();
  if (!errors->empty()) {
    for (const auto& e : *errors) Refused(what, ReplicaRefusal(e));
    return false;
  }
  if (record) {
    history_.Append(command);
    if (also) also(history_);
    if (ipc::IsDrop(command)) {
      history_.Prune();
    }
    if (Status s = history_.Save(); !s.ok()) Warn(s.message());
  }
  return true;
}

Result<std::optional<pb::CommandError>> Session::SendPeek(const pb::Command& peek) {
  if (client_->observer()) {
    client_->Send(peek);
    return std::optional<pb::CommandError>();
  }
  auto errors = client_->SendChecked(peek);
  if (!errors.ok()) return errors.status();
  if (errors->empty()) return std::optional<pb::CommandError>();
  return std::optional(errors->front());
}

Session::PeekWait Session::AwaitPeek(const std::string& uuid,
                                     std::chrono::steady_clock::time_point deadline) {
  PeekWait w;
  while (!Interrupted() && !client_->lost() && !client_->superseded()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = client_->Receive(left);
    if (!r) break;
    if (r->has_peek_response() && r->peek_response().uuid() == uuid) {
      w.answer = r->peek_response();
      break;
    }
    if (client_->observer() && r->has_command_error() && r->command_error().what() == "Peek") {
      w.refused = r->command_error();
      break;
    }
  }
  return w;
}

int Session::Ended(const Status& s) {
  if (client_ && client_->superseded()) return Fail(kExitSuperseded, client_->EndReason());
  if (client_ && client_->lost()) return Fail(kExitUnavailable, client_->EndReason());
  return Fail(s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed, s.message());
}

std::optional<int> Session::CheckLiveIndexes() {
  const std::set<std::string> known = history_.LiveIndexes();
  std::vector<std::string> unknown;
  for (const auto& id : client_->accepted().live_indexes()) {
    // A transient index is a one-shot result (a `query` that was cut short before it dropped
    // it): no history defines one, and dropping it loses nothing.
    if (id.starts_with('t')) continue;
    if (!known.count(id)) unknown.push_back(id);
  }
  if (unknown.empty()) return std::nullopt;
  const std::string list = JoinIds(unknown);
  const std::string they = unknown.size() == 1 ? "it" : "them";
  if (g_.replace) {
    if (!warned_replace_) {
      Warn("--replace: the replica's " + std::string(unknown.size() == 1 ? "index " : "indexes ") +
           list + " (not in " + history_.path() + ") will be dropped with their dataflows");
    }
    warned_replace_ = true;
    return std::nullopt;
  }
  return Fail(kExitFailed,
              "refused: the replica at " + g_.endpoint + " maintains " +
                  (unknown.size() == 1 ? "an index" : "indexes") + " that the state file " +
                  history_.path() + " does not define: " + list +
                  ". Replaying this history would drop " + they +
                  "; nothing was changed. Use the state file that created " + they +
                  " (--state), or pass --replace to replace the replica's dataflows with this "
                  "history's.");
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
