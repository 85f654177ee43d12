#include "tools/ctl/session.h"

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string_view>
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

std::optional<int> Session::Open(Mode mode) {
  mode_ = mode;
  ipc::ControllerClient::Options options;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(g_.timeout_s * 1000));
  options.linger = std::chrono::milliseconds(200);
  options.end_on_disconnect = true;
  options.goodbye = true;
  auto curve = LoadCurveKeys(g_);
  if (!curve.ok()) return Usage(curve.status().message());
  options.curve = std::move(curve).value();
  if (multi()) {
    curve_ = options.curve;
    return OpenSet(mode);
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
      ++replay_refusals_;
    }
  }
  pb::Command done;
  done.mutable_initialization_complete();
  auto errors = client_->SendChecked(done);
  if (!errors.ok()) return Ended(errors.status());
  return std::nullopt;
}

Session::~Session() = default;

namespace {

std::string ReplicaName(const ipc::ReplicaSet& set, std::size_t i) {
  return "replica " + std::to_string(i) + " (" + set.status(i).endpoint + ")";
}

// Warns about every replica of `set` that is not up: it is left out of this command.
void WarnNotUp(const ipc::ReplicaSet& set, bool control) {
  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto st = set.status(i);
    if (st.state == ipc::ReplicaSet::State::kReady) continue;
    Warn(ReplicaName(set, i) + " is " + ipc::ReplicaSet::StateName(st.state) +
         (st.last_error.empty() ? "" : " (" + st.last_error + ")") + ": left out of this command" +
         (control ? "; the next command's replay brings it up to date" : ""));
  }
}

}  // namespace

ipc::ReplicaSet::Options Session::SetOptions(bool observer) const {
  ipc::ReplicaSet::Options o;
  o.client.timeout = timeout();
  o.client.linger = std::chrono::milliseconds(200);
  o.client.curve = curve_;
  o.observer = observer;
  return o;
}

std::optional<int> Session::OpenSet(Mode mode) {
  ipc::ReplicaSet::Options observe_options = SetOptions(/*observer=*/true);
  observe_options.writer = mode == Mode::kWrite;
  auto observe = ipc::ReplicaSet::Create(g_.endpoints, observe_options);
  if (!observe.ok()) return Usage("--endpoint: " + observe.status().message());
  set_ = std::move(observe).value();
  if (Status up = set_->Connect(std::chrono::steady_clock::now() + timeout()); !up.ok()) {
    return Fail(kExitUnavailable, up.message());
  }
  // A write says itself which replicas it was not sent to (and records them as missing it).
  if (mode == Mode::kWrite) return std::nullopt;
  if (mode != Mode::kControl) {
    WarnNotUp(*set_, false);
    return std::nullopt;
  }
  // As with one replica: a replay must not drop what the history does not define, on any replica.
  for (std::size_t i = 0; i < set_->size(); ++i) {
    if (set_->status(i).state != ipc::ReplicaSet::State::kReady) continue;
    if (auto code = CheckLiveIndexes(set_->accepted(i), ReplicaName(*set_, i))) return code;
  }
  set_.reset();  // the observers say Goodbye
  // A replica first seen now (its Hello was slower than the others') is checked before its replay
  // too: one with indexes the history does not define is left out, never reconciled away.
  ipc::ReplicaSet::Options control_options = SetOptions(/*observer=*/false);
  control_options.admit = [this](const pb::Status::HelloAccepted& accepted) {
    return AdmitReplica(accepted);
  };
  auto control = ipc::ReplicaSet::Create(g_.endpoints, control_options);
  if (!control.ok()) return Usage("--endpoint: " + control.status().message());
  set_ = std::move(control).value();
  set_->SetHistory(history_.Replay());
  if (Status up = set_->Connect(std::chrono::steady_clock::now() + timeout()); !up.ok()) {
    return Fail(kExitUnavailable, up.message());
  }
  for (std::size_t i = 0; i < set_->size(); ++i) {
    const std::string& e = set_->status(i).last_error;
    if (e.rfind("replay: ", 0) == 0) {
      Warn(ReplicaName(*set_, i) + ": replaying the history: refused: " + e.substr(8));
      ++replay_refusals_;
    }
  }
  WarnNotUp(*set_, true);
  return std::nullopt;
}

Result<bool> Session::Submit(const pb::Command& command, bool record, const std::string& what,
                             const std::function<void(History&)>& also) {
  if (set_) {
    auto out =
        set_->Submit(command, /*record=*/false, std::chrono::steady_clock::now() + timeout());
    if (!out.ok()) return out.status();
    if (!out->refused.empty()) {
      for (const auto& [i, e] : out->refused) {
        Refused(what, ReplicaName(*set_, i) + ": " + ReplicaRefusal(e));
      }
      return false;
    }
    if (out->accepted.empty()) {
      return Status::Unavailable("no replica confirmed " + ipc::Describe(command) + " within " +
                                 std::to_string(g_.timeout_s).substr(0, 4) + " s");
    }
    for (std::size_t i : out->unconfirmed) {
      Warn(ReplicaName(*set_, i) + " did not confirm " + ipc::Describe(command) +
           " in time; the next command's replay brings it up to date");
    }
  } else {
    auto errors = client_->SendChecked(command);
    if (!errors.ok()) return errors.status();
    if (!errors->empty()) {
      for (const auto& e : *errors) Refused(what, ReplicaRefusal(e));
      return false;
    }
  }
  if (record) {
    history_.Append(command);
    if (also) also(history_);
    if (ipc::IsDrop(command)) {
      history_.Prune();
      if (Status s = ForgetTables(history_.path(), history_.LiveIds()); !s.ok()) Warn(s.message());
    }
    if (Status s = history_.Save(); !s.ok()) Warn(s.message());
  }
  return true;
}

Result<std::optional<pb::CommandError>> Session::SendPeek(const pb::Command& peek, ReadAt at) {
  last_peek_time_ = peek.peek().timestamp();
  if (set_) {
    if (Status st = set_->StartPeek(peek, TargetsAt(readers_, peek.peek().timestamp(), at));
        !st.ok()) {
      return st;
    }
    return std::optional<pb::CommandError>();
  }
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
  if (set_) {
    // Polled in short rounds so that ^C ends the wait; at the deadline the race is decided with
    // what it has (an Error beats a timeout: ipc/peek_race.h).
    std::optional<ipc::ReplicaSet::PeekResult> r;
    while (!r && !Interrupted() && ipc::Left(deadline).count() > 0) {
      for (auto& done : set_->Poll(std::min(ipc::Left(deadline), std::chrono::milliseconds(100)))) {
        if (done.uuid == uuid) r = std::move(done);
      }
    }
    if (!r) r = set_->AwaitPeek(uuid, std::chrono::steady_clock::now());
    using Outcome = ipc::PeekRace::Outcome;
    last_peek_replica_ = r->replica;
    if (r->outcome == Outcome::kRows || r->outcome == Outcome::kError) {
      w.answer = r->answer;
      last_peek_time_ = r->timestamp;
    }
    if (r->outcome == Outcome::kRefused) w.refused = r->refused;
    return w;
  }
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

void Session::CancelPeek(const std::string& uuid) {
  if (set_) {
    set_->CancelPeek(uuid);
    return;
  }
  pb::Command cancel;
  cancel.mutable_cancel_peek()->set_uuid(uuid);
  client_->Send(cancel);
}

std::string Session::DescribeReplica(std::size_t i) const { return ReplicaName(*set_, i); }

std::optional<int> Session::ReadOwnWrites(const std::string& id, const std::string& what) {
  if (!set_) return std::nullopt;
  const std::set<std::string> tables = TablesRead(history_, id);
  if (tables.empty()) return std::nullopt;
  auto ledger = LoadWriteLedger(history_.path());
  if (!ledger.ok()) return Refused(what, ledger.status().message());
  readers_ = ReadersOf(*ledger, tables, g_.endpoints);
  if (!readers_.restricted) return std::nullopt;
  if (readers_.floors.empty()) {
    std::string why;
    for (const auto& [i, reason] : readers_.left_out) {
      why += (why.empty() ? "" : "; ") + ReplicaName(*set_, i) + ": " + reason;
    }
    std::vector<std::string> written;
    for (const auto& t : tables) {
      if (ledger->count(t)) written.push_back(t);
    }
    return Refused(what, "no replica of --endpoint has every write this state file (" +
                             history_.path() + ") made to " + JoinIds(written) + " (" + why +
                             "), so none would answer with them. Read through a replica that "
                             "acknowledged them, or write them to these (with the same --uuid: a "
                             "write is applied once per uuid)");
  }
  for (const auto& [i, reason] : readers_.left_out) {
    Warn(ReplicaName(*set_, i) + " is left out of " + what + ": " + reason);
  }
  return std::nullopt;
}

Result<ipc::ReplicaSet::WriteResult> Session::WriteToSet(
    const pb::WriteTable& write, std::chrono::steady_clock::time_point deadline) {
  if (Status st = set_->StartWrite(write); !st.ok()) return st;
  // Polled in short rounds so that ^C ends the wait.
  for (;;) {
    if (auto done = set_->TakeWrite(write.uuid())) return std::move(*done);
    if (Interrupted() || ipc::Left(deadline).count() <= 0) return set_->ExpireWrite(write.uuid());
    (void)set_->Poll(std::min(ipc::Left(deadline), std::chrono::milliseconds(100)));
  }
}

std::set<std::string> Session::endpoints() const {
  if (g_.endpoints.empty()) return {g_.endpoint};
  return {g_.endpoints.begin(), g_.endpoints.end()};
}

void Session::NoteWrites(const std::string& table, std::vector<AnsweredWrite> writes) {
  // With one endpoint the ledger is kept only once this state file has one (it was used with
  // several): a user of one replica never gets files beside the state file. (An endpoint list
  // with --replica N is several replicas, one of them picked.)
  if (writes.empty() ||
      (g_.endpoints.size() < 2 && !std::filesystem::exists(WriteLedgerPath(history_.path())))) {
    return;
  }
  const std::set<std::string> all = endpoints();
  for (AnsweredWrite& w : writes) w.sent_to = all;
  if (Status st = RecordWrites(history_.path(), table, writes); !st.ok()) {
    Warn("the replicas' times of " +
         (writes.size() == 1 ? "write " + writes.front().uuid
                             : std::to_string(writes.size()) + " writes") +
         " to " + table + " were not recorded (" + st.message() +
         "): a peek through several replicas may not see " + (writes.size() == 1 ? "it" : "them"));
  }
}

std::string Session::EndReason() const {
  if (!set_) return client_->EndReason();
  std::string why;
  for (std::size_t i = 0; i < set_->size(); ++i) {
    const auto st = set_->status(i);
    why += (why.empty() ? "" : "; ") + ReplicaName(*set_, i) + " is " +
           ipc::ReplicaSet::StateName(st.state) +
           (st.last_error.empty() ? "" : " (" + st.last_error + ")");
  }
  return "no replica is up: " + why;
}

int Session::Ended(const Status& s) {
  if (set_) {
    if (s.ok()) return Fail(kExitUnavailable, EndReason());
    return Fail(s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed, s.message());
  }
  if (client_ && client_->superseded()) return Fail(kExitSuperseded, client_->EndReason());
  if (client_ && client_->lost()) return Fail(kExitUnavailable, client_->EndReason());
  return Fail(s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed, s.message());
}

std::optional<int> Session::CheckLiveIndexes() {
  return CheckLiveIndexes(client_->accepted(), "the replica at " + g_.endpoint);
}

std::vector<std::string> Session::UnknownLiveIndexes(
    const pb::Status::HelloAccepted& accepted) const {
  const std::set<std::string> known = history_.LiveIndexes();
  std::vector<std::string> unknown;
  for (const auto& id : accepted.live_indexes()) {
    // A transient index is a one-shot result (a `query` that was cut short before it dropped
    // it): no history defines one, and dropping it loses nothing.
    if (id.starts_with('t')) continue;
    if (!known.count(id)) unknown.push_back(id);
  }
  return unknown;
}

Status Session::AdmitReplica(const pb::Status::HelloAccepted& accepted) {
  const std::vector<std::string> unknown = UnknownLiveIndexes(accepted);
  if (unknown.empty()) return Status::Ok();
  if (g_.replace) {
    if (!warned_replace_) {
      Warn("--replace: a replica's indexes " + JoinIds(unknown) + " (not in " + history_.path() +
           ") will be dropped with their dataflows");
    }
    warned_replace_ = true;
    return Status::Ok();
  }
  return Status::FailedPrecondition(
      "it maintains indexes the state file does not define (" + JoinIds(unknown) +
      "): not replayed to, so they stay; --replace would replace them");
}

std::optional<int> Session::CheckLiveIndexes(const pb::Status::HelloAccepted& accepted,
                                             const std::string& replica) {
  const std::vector<std::string> unknown = UnknownLiveIndexes(accepted);
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
              "refused: " + replica + " maintains " +
                  (unknown.size() == 1 ? "an index" : "indexes") + " that the state file " +
                  history_.path() + " does not define: " + list +
                  ". Replaying this history would drop " + they +
                  "; nothing was changed. Use the state file that created " + they +
                  " (--state), or pass --replace to replace the replica's dataflows with this "
                  "history's.");
}

std::string Session::Refusal(const pb::CommandError& e) const {
  return ReplicaRefusal(e) + ExplainUnknown(e.why());
}

std::string Session::ExplainUnknown(const std::string& why,
                                    std::optional<std::size_t> replica_number) const {
  // A controller session replayed the history before anything else: its "unknown" is no restart.
  if (mode_ == Mode::kControl) return "";
  static constexpr std::string_view kUnknown[] = {"unknown table ", "unknown index "};
  std::string id;
  for (const std::string_view prefix : kUnknown) {
    const std::size_t at = why.find(prefix);
    if (at == std::string::npos) continue;
    const std::size_t from = at + prefix.size();
    id = why.substr(from, why.find_first_of(" ,;:()", from) - from);
    break;
  }
  if (id.empty()) return "";
  const History::IdKind::Kind kind = history_.KindOf(id).kind;
  if (kind == History::IdKind::kUnknown || kind == History::IdKind::kPendingSource) return "";
  const pb::Status::HelloAccepted* accepted = nullptr;
  std::string replica, endpoint;
  if (set_) {
    const std::size_t i = replica_number.value_or(last_peek_replica_);
    accepted = &set_->accepted(i);
    replica = ReplicaName(*set_, i);
    endpoint = set_->status(i).endpoint;
  } else if (client_) {
    accepted = &client_->accepted();
    replica = "the replica at " + g_.endpoint;
    endpoint = g_.endpoint;
  } else {
    return "";
  }
  const std::set<std::string> defined = history_.LiveIndexes();
  for (const auto& live : accepted->live_indexes()) {
    // It runs (some of) this history: the id is unknown for another reason.
    if (defined.count(live)) return "";
  }
  const std::string& path = history_.path();
  const std::string command = "tandem-ctl --endpoint " + endpoint + " --state " + path;
  const std::vector<std::string> others = UnknownLiveIndexes(*accepted);
  if (others.empty()) {
    return " — " + replica + " maintains none of the indexes the state file " + path +
           " defines: this history was not replayed to it since it started, and read and write "
           "sessions never replay. Run `" +
           command + " replay` (it replays the history and changes nothing else), then try again.";
  }
  const std::string list = JoinIds(others);
  return " — " + replica + " maintains none of the indexes the state file " + path +
         " defines, but " + list +
         ": another history was replayed to it. Use the state file that created " +
         (others.size() == 1 ? "it" : "them") + " (--state), or run `" + command +
         " --replace replay` to replace its dataflows with this history's (dropping " + list + ").";
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
