#include "controller/session.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <string_view>

#include "ipc/codec.h"
#include "ipc/model.h"

namespace tandem::controller {

std::string RandomHex(int bytes) {
  static std::random_device rd;
  static std::mt19937_64 gen(rd() ^ (static_cast<std::uint64_t>(rd()) << 32));
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < bytes; ++i) {
    const auto b = static_cast<unsigned>(gen() & 0xff);
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

std::string ReplicaRefusal(const pb::CommandError& e) {
  return "the replica refused " + e.what() + ": " + e.why();
}

std::vector<std::string> UnknownLiveIndexes(const History& h,
                                            const pb::Status::HelloAccepted& accepted) {
  const std::set<std::string> known = h.LiveIndexes();
  std::vector<std::string> unknown;
  for (const auto& id : accepted.live_indexes()) {
    if (id.starts_with('t')) continue;  // transient: a one-shot result cut short
    if (!known.count(id)) unknown.push_back(id);
  }
  return unknown;
}

Session::~Session() = default;

Status Session::Open(Mode mode) {
  mode_ = mode;
  if (multi()) return OpenSet(mode);
  ipc::ControllerClient::Options options;
  options.timeout = timeout();
  options.linger = std::chrono::milliseconds(200);
  options.end_on_disconnect = true;
  options.goodbye = true;
  options.curve = options_.curve;
  auto client = ipc::ControllerClient::Create(endpoint(), options);
  if (!client.ok()) return client.status();  // InvalidArgument: no endpoint
  client_ = std::move(client).value();
  const Status hello = client_->Hello(RandomHex(8), /*observer=*/true,
                                      /*writer=*/mode == Mode::kWrite);
  if (!hello.ok()) return hello;
  if (!client_->observer()) {
    // A supervisor that knows no observers made us its controller (the Hello is the same
    // protocol version): reading must not go on as if nothing happened.
    return Status::FailedPrecondition("the replica at " + endpoint() +
                                      " does not support observer sessions (Hello{observer}); "
                                      "upgrade tandem-supervisor");
  }
  if (mode != Mode::kControl) return Status::Ok();
  const std::string replica = "the replica at " + endpoint();
  if (Status s = CheckLiveIndexes(client_->accepted(), replica); !s.ok()) return s;
  if (Status s = client_->Hello(RandomHex(8), /*observer=*/false); !s.ok()) return s;
  // Another controller may have built indexes between the two Hellos: look again. Refusing now
  // still drops nothing (no InitializationComplete); the replica keeps its dataflows.
  if (Status s = CheckLiveIndexes(client_->accepted(), replica); !s.ok()) return s;
  for (const auto& c : history_.Replay()) {
    auto errors = client_->SendChecked(c);
    if (!errors.ok()) return errors.status();
    for (const auto& e : *errors) {
      Warn("replaying " + ipc::Describe(c) + " from the history: refused: " + e.why());
      ++replay_refusals_;
    }
  }
  pb::Command done;
  done.mutable_initialization_complete();
  auto errors = client_->SendChecked(done);
  if (!errors.ok()) return errors.status();
  return Status::Ok();
}

std::string Session::DescribeReplica(std::size_t i) const {
  return "replica " + std::to_string(i) + " (" + set_->status(i).endpoint + ")";
}

void Session::WarnNotUp(bool control) const {
  for (std::size_t i = 0; i < set_->size(); ++i) {
    const auto st = set_->status(i);
    if (st.state == ReplicaSet::State::kReady) continue;
    Warn(DescribeReplica(i) + " is " + ReplicaSet::StateName(st.state) +
         (st.last_error.empty() ? "" : " (" + st.last_error + ")") + ": left out of this command" +
         (control ? "; the next command's replay brings it up to date" : ""));
  }
}

ReplicaSet::Options Session::SetOptions(bool observer) const {
  ReplicaSet::Options o;
  o.client.timeout = timeout();
  o.client.linger = std::chrono::milliseconds(200);
  o.client.curve = options_.curve;
  o.observer = observer;
  return o;
}

Status Session::OpenSet(Mode mode) {
  ReplicaSet::Options observe_options = SetOptions(/*observer=*/true);
  observe_options.writer = mode == Mode::kWrite;
  auto observe = ReplicaSet::Create(options_.endpoints, observe_options);
  if (!observe.ok()) return observe.status();  // InvalidArgument: no endpoint list
  set_ = std::move(observe).value();
  if (Status up = set_->Connect(std::chrono::steady_clock::now() + timeout()); !up.ok()) {
    return up;
  }
  // A write says itself which replicas it was not sent to (and records them as missing it).
  if (mode == Mode::kWrite) return Status::Ok();
  if (mode != Mode::kControl) {
    WarnNotUp(false);
    return Status::Ok();
  }
  // As with one replica: a replay must not drop what the history does not define, on any replica.
  for (std::size_t i = 0; i < set_->size(); ++i) {
    if (set_->status(i).state != ReplicaSet::State::kReady) continue;
    if (Status s = CheckLiveIndexes(set_->accepted(i), DescribeReplica(i)); !s.ok()) return s;
  }
  set_.reset();  // the observers say Goodbye
  // A replica first seen now (its Hello was slower than the others') is checked before its replay
  // too: one with indexes the history does not define is left out, never reconciled away.
  ReplicaSet::Options control_options = SetOptions(/*observer=*/false);
  control_options.admit = [this](const pb::Status::HelloAccepted& accepted) {
    return AdmitReplica(accepted);
  };
  auto control = ReplicaSet::Create(options_.endpoints, control_options);
  if (!control.ok()) return control.status();
  set_ = std::move(control).value();
  set_->SetHistory(history_.Replay());
  if (Status up = set_->Connect(std::chrono::steady_clock::now() + timeout()); !up.ok()) {
    return up;
  }
  for (std::size_t i = 0; i < set_->size(); ++i) {
    const std::string& e = set_->status(i).last_error;
    if (e.rfind("replay: ", 0) == 0) {
      Warn(DescribeReplica(i) + ": replaying the history: refused: " + e.substr(8));
      ++replay_refusals_;
    }
  }
  WarnNotUp(true);
  return Status::Ok();
}

Result<std::vector<Session::Refused>> Session::Submit(const pb::Command& command, bool record,
                                                      const std::function<void(History&)>& also) {
  std::vector<Refused> refused;
  if (set_) {
    auto out =
        set_->Submit(command, /*record=*/false, std::chrono::steady_clock::now() + timeout());
    if (!out.ok()) return out.status();
    if (!out->refused.empty()) {
      for (const auto& [i, e] : out->refused) refused.push_back({i, e});
      return refused;
    }
    if (out->accepted.empty()) {
      return Status::Unavailable("no replica confirmed " + ipc::Describe(command) + " within " +
                                 std::to_string(options_.timeout.count()).substr(0, 4) + " s");
    }
    for (std::size_t i : out->unconfirmed) {
      Warn(DescribeReplica(i) + " did not confirm " + ipc::Describe(command) +
           " in time; the next command's replay brings it up to date");
    }
  } else {
    auto errors = client_->SendChecked(command);
    if (!errors.ok()) return errors.status();
    if (!errors->empty()) {
      for (const auto& e : *errors) refused.push_back({std::nullopt, e});
      return refused;
    }
  }
  if (record) Record(command, also);
  return refused;
}

void Session::Record(const pb::Command& command, const std::function<void(History&)>& also) {
  history_.Append(command);
  if (also) also(history_);
  if (ipc::IsDrop(command)) {
    history_.Prune();
    if (Status s = ForgetTables(history_.path(), history_.LiveIds()); !s.ok()) Warn(s.message());
  }
  if (Status s = history_.Save(); !s.ok()) Warn(s.message());
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
    // Polled in short rounds so that an interrupt ends the wait; at the deadline the race is
    // decided with what it has (an Error beats a timeout: controller/peek_race.h).
    std::optional<ReplicaSet::PeekResult> r;
    while (!r && !Interrupted() && ipc::Left(deadline).count() > 0) {
      for (auto& done : set_->Poll(std::min(ipc::Left(deadline), std::chrono::milliseconds(100)))) {
        if (done.uuid == uuid) r = std::move(done);
      }
    }
    if (!r) r = set_->AwaitPeek(uuid, std::chrono::steady_clock::now());
    using Outcome = PeekRace::Outcome;
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

Status Session::ReadOwnWrites(const std::string& id) {
  if (!set_) return Status::Ok();
  const std::set<std::string> tables = TablesRead(history_, id);
  if (tables.empty()) return Status::Ok();
  auto ledger = LoadWriteLedger(history_.path());
  if (!ledger.ok()) return ledger.status();
  readers_ = ReadersOf(*ledger, tables, options_.endpoints);
  if (!readers_.restricted || !readers_.floors.empty()) return Status::Ok();
  std::string why;
  for (const auto& [i, reason] : readers_.left_out) {
    why += (why.empty() ? "" : "; ") + DescribeReplica(i) + ": " + reason;
  }
  std::vector<std::string> written;
  for (const auto& t : tables) {
    if (ledger->count(t)) written.push_back(t);
  }
  return Status::FailedPrecondition(
      "no replica of --endpoint has every write this state file (" + history_.path() +
      ") made to " + JoinIds(written) + " (" + why +
      "), so none would answer with them. Read through a replica that acknowledged them, or "
      "write them to these (with the same --uuid: a write is applied once per uuid)");
}

Session::WriteWait Session::Write(const pb::Command& write,
                                  std::chrono::steady_clock::time_point deadline) {
  client_->Send(write);
  WriteWait a;
  while (!Interrupted() && !over()) {
    const auto left = ipc::Left(deadline);
    if (left.count() <= 0) break;
    auto r = client_->Receive(left);
    if (!r) continue;
    if (!ipc::AnswersWrite(*r, write.write_table())) continue;
    if (r->has_write_response()) {
      a.response = r->write_response();
    } else {
      a.refused = r->command_error();
    }
    break;
  }
  return a;
}

Result<ReplicaSet::WriteResult> Session::WriteToSet(
    const pb::WriteTable& write, std::chrono::steady_clock::time_point deadline) {
  if (Status st = set_->StartWrite(write); !st.ok()) return st;
  // Polled in short rounds so that an interrupt ends the wait.
  for (;;) {
    if (auto done = set_->TakeWrite(write.uuid())) return std::move(*done);
    if (Interrupted() || ipc::Left(deadline).count() <= 0) return set_->ExpireWrite(write.uuid());
    (void)set_->Poll(std::min(ipc::Left(deadline), std::chrono::milliseconds(100)));
  }
}

std::set<std::string> Session::endpoints() const {
  return {options_.endpoints.begin(), options_.endpoints.end()};
}

void Session::NoteWrites(const std::string& table, std::vector<AnsweredWrite> writes) {
  // With one endpoint the ledger is kept only once this state file has one (it was used with
  // several): a user of one replica never gets files beside the state file. (An endpoint list
  // with Options::replica is several replicas, one of them picked.)
  if (writes.empty() || (options_.endpoints.size() < 2 &&
                         !std::filesystem::exists(WriteLedgerPath(history_.path())))) {
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

bool Session::over() const {
  return set_ ? set_->ready() == 0 : client_->lost() || client_->superseded();
}

std::string Session::EndReason() const {
  if (!set_) return client_->EndReason();
  std::string why;
  for (std::size_t i = 0; i < set_->size(); ++i) {
    const auto st = set_->status(i);
    why += (why.empty() ? "" : "; ") + DescribeReplica(i) + " is " +
           ReplicaSet::StateName(st.state) +
           (st.last_error.empty() ? "" : " (" + st.last_error + ")");
  }
  return "no replica is up: " + why;
}

Status Session::AdmitReplica(const pb::Status::HelloAccepted& accepted) {
  const std::vector<std::string> unknown = UnknownLiveIndexes(history_, accepted);
  if (unknown.empty()) return Status::Ok();
  if (options_.replace) {
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

Status Session::CheckLiveIndexes(const pb::Status::HelloAccepted& accepted,
                                 const std::string& replica) {
  const std::vector<std::string> unknown = UnknownLiveIndexes(history_, accepted);
  if (unknown.empty()) return Status::Ok();
  const std::string list = JoinIds(unknown);
  const std::string they = unknown.size() == 1 ? "it" : "them";
  if (options_.replace) {
    if (!warned_replace_) {
      Warn("--replace: the replica's " + std::string(unknown.size() == 1 ? "index " : "indexes ") +
           list + " (not in " + history_.path() + ") will be dropped with their dataflows");
    }
    warned_replace_ = true;
    return Status::Ok();
  }
  return Status::FailedPrecondition(
      "refused: " + replica + " maintains " + (unknown.size() == 1 ? "an index" : "indexes") +
      " that the state file " + history_.path() + " does not define: " + list +
      ". Replaying this history would drop " + they +
      "; nothing was changed. Use the state file that created " + they +
      " (--state), or pass --replace to replace the replica's dataflows with this history's.");
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
  std::string replica, at_endpoint;
  if (set_) {
    const std::size_t i = replica_number.value_or(last_peek_replica_);
    accepted = &set_->accepted(i);
    replica = DescribeReplica(i);
    at_endpoint = set_->status(i).endpoint;
  } else if (client_) {
    accepted = &client_->accepted();
    replica = "the replica at " + endpoint();
    at_endpoint = endpoint();
  } else {
    return "";
  }
  const std::set<std::string> defined = history_.LiveIndexes();
  for (const auto& live : accepted->live_indexes()) {
    // It runs (some of) this history: the id is unknown for another reason.
    if (defined.count(live)) return "";
  }
  const std::string& path = history_.path();
  const std::string command = "tandem-ctl --endpoint " + at_endpoint + " --state " + path;
  const std::vector<std::string> others = UnknownLiveIndexes(history_, *accepted);
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

}  // namespace tandem::controller
