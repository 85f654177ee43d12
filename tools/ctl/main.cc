// tandem-ctl: the reference controller (issue #5). See kHelp, and tools/ctl/ctl.h for the
// history it keeps; README "Using tandem-ctl" and "Output of the tools" for what it prints.
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "base/global_id.h"
#include "base/time.h"
#include "ipc/rows.h"
#include "ipc/validate.h"
#include "tools/common/format.h"
#include "tools/ctl/ctl.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

constexpr char kHelp[] = R"(tandem-ctl — the reference controller of a Tandem replica

usage: tandem-ctl [global options] COMMAND [arguments]

global options:
  --endpoint URL    the replica's controller endpoint (env TANDEM_ENDPOINT;
                    default tcp://127.0.0.1:2101)
  --state FILE      the command history (default ./tandem-ctl.state)
  --json            machine-readable output: JSON on stdout, one document a line (README
                    "Output of the tools"); a failure ends with {"error": ..., "exit_code": N}
  --timeout SECONDS how long to wait for the replica (default 5)
  --replace         let a command that replays the history replace dataflows of the replica
                    that the history does not define (they are dropped); without it, such a
                    command is refused and changes nothing
  -h, --help        this text

Like a real controller, tandem-ctl keeps the commands that define the replica's state
(CreateDataflow, AllowCompaction) in the state file, one protocol-JSON command a line. Every
command that changes the replica (create-*, allow-compaction, drop, run) connects (a ZeroMQ
DEALER), sends Hello, replays that history, sends InitializationComplete and then its new
commands; the replica's reconciliation keeps what was re-sent unchanged, so nothing already
running is rebuilt, and drops what was not re-sent. So first it checks the indexes the replica
maintains (HelloAccepted.live_indexes): one the history does not define would be dropped, and
the command is refused, listing them, unless --replace. New commands are added to the history
only once the replica has accepted them; a refused command is never recorded. Dropped dataflows
are pruned from it.

peek, frontiers and watch are read-only: they open an observer session (Hello{observer}), which
never replays, never sends InitializationComplete and never takes over from the controller. They
cannot change the replica, whatever the state file (any, or none: it only supplies column names
and key types, and the index of a view).

Every invocation ends its session with Goodbye.

commands:
  create-source ID --generator counter [--tick-interval-us I] [--max N]
  create-source ID --generator key_value [--keys K] [--updates-per-tick U]
                   [--tick-interval-us I] [--seed S]
  create-source ID --log PATH --schema "name:int64,name2:string?,..."
        Types bool, int64, float64, string; a trailing ? makes a column nullable. Defaults:
        tick interval 100000 us, keys 100, updates per tick 1, seed 1.
        --log PATH must be an existing regular file (the replica tails it as it grows; it reads
        it on its own host, which is this one); it is recorded as an absolute path.
        A source alone is not something the replica can address (it is read only through an
        index), so this command sends nothing: it checks the source and records it in the state
        file as a PENDING source, which becomes part of the dataflow of the next create-index or
        create-view --on it. A source feeds exactly one dataflow (the replica does not support
        index imports yet); `drop ID` forgets a pending source.
  create-index ID --on ID --key COLS
        A maintained dataflow from as_of 0: the pending source --on, indexed by COLS
        (comma-separated column names or positions).
  create-view ID --on ID [--group-by COLS] [--aggregate count|sum:COL|min:COL|max:COL ...]
                 [--key COLS] [--index-id ID]
        A maintained dataflow building view ID (a Reduce; without --group-by/--aggregate, a copy
        of --on) and an index on it, --index-id (default: the next free u-number), keyed by
        --key (default: the group-by columns, else the first column). `peek ID` reads that index.
  create-dataflow FILE.json
        The protocol's JSON form of a CreateDataflow command or of a DataflowDescription.
  peek ID [--at T|latest] [--key DATUMS ...] [--order-by COL[:desc]] [--limit N]
        Reads index ID (or the index on collection ID) at time T. latest (the default): the
        newest complete time, write frontier - 1; for a closed index (its sources ended: the
        empty frontier) its final contents, read at 18446744073709551614, the largest time.
        The frontier is taken from the replica's report (300 ms), else found by probing (peeks
        with limit 0, canceled when they would wait).
        --key looks up one key, in the datum syntax of log files: null, true, false, 12, 1.5,
        "text" (quoted; \" \\ \n \t escapes); a multi-column key is comma-separated datums (a
        comma inside quotes belongs to the string): --key '7,"a, b"'. Tables print datums the
        same way.
  frontiers [ID] [--for SECONDS]
                    collects frontiers for about a second (--for) and prints the latest per id;
                    an index of the history that reported nothing meanwhile is probed (peeks
                    with limit 0, canceled when they would wait) and shown as "probed". Warns
                    about a log source whose file is missing now (its index cannot advance).
  allow-compaction ID T
                    the replica may compact index ID up to time T
  drop ID           drops index ID (AllowCompaction with the empty frontier); its dataflow goes
                    with its last index and is pruned from the history. Only indexes: for a
                    source or a view, tandem-ctl names the index to drop instead.
  watch [--for SECONDS]
                    prints every response as it arrives, until interrupted (exit 0), --for
                    passes (exit 0), or the session ends: superseded (75), replica gone (69)
  run SCRIPT        sends one protocol-JSON command a line (blank lines and # comments skipped),
                    in order, and prints the responses

exit status: 0 success; 1 a command was refused, a peek failed or timed out; 64 bad usage
(including an --endpoint that is not a ZeroMQ endpoint); 69 the replica could not be reached, or
the connection to it was lost; 75 another controller took over (superseded this session).
Refusals are printed as "tandem-ctl: refused: COMMAND ID: WHY".
)";

struct Globals {
  std::string endpoint = "tcp://127.0.0.1:2101";
  std::string state = "tandem-ctl.state";
  bool json = false;
  double timeout_s = 5;
  bool replace = false;  // a replaying command may drop indexes the history does not define
};

// --json, for the failure paths that have no Globals at hand.
bool g_json = false;

struct UsageError {
  std::string message;
};

// Arguments of a subcommand: positionals and --name VALUE options (every option takes a value).
struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;

  std::optional<std::string> One(const std::string& name) const {
    auto range = options.equal_range(name);
    if (range.first == range.second) return std::nullopt;
    if (std::next(range.first) != range.second) throw UsageError{"--" + name + " given twice"};
    return range.first->second;
  }
  std::string Required(const std::string& name) const {
    auto v = One(name);
    if (!v) throw UsageError{"--" + name + " is required"};
    return *v;
  }
  std::vector<std::string> All(const std::string& name) const {
    std::vector<std::string> out;
    for (auto [it, end] = options.equal_range(name); it != end; ++it) out.push_back(it->second);
    return out;
  }
  void Allow(const std::set<std::string>& names, std::size_t min_pos, std::size_t max_pos) const {
    for (const auto& [name, value] : options) {
      if (!names.count(name)) throw UsageError{"unknown option --" + name};
    }
    if (positional.size() < min_pos) throw UsageError{"missing argument"};
    if (positional.size() > max_pos) throw UsageError{"unexpected argument " + positional.back()};
  }
};

std::uint64_t ParseU64(const std::string& text, const std::string& what) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    throw UsageError{what + ": \"" + text + "\" is not a non-negative integer"};
  }
  return v;
}

double ParseSeconds(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0)) {
    throw UsageError{what + ": \"" + text + "\" is not a number of seconds"};
  }
  return v;
}

volatile std::sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

// Every failure goes through here: the reason on stderr, and with --json also
// {"error": reason, "exit_code": code} as the last line on stdout.
int Fail(int code, const std::string& message) {
  std::cerr << "tandem-ctl: " << message << "\n";
  if (g_json) std::cout << tools::JsonError(message, code) << std::endl;
  return code;
}

int Refused(const std::string& what, const std::string& why) {
  return Fail(kExitFailed, "refused: " + what + ": " + why);
}

void Warn(const std::string& message) { std::cerr << "tandem-ctl: warning: " << message << "\n"; }

// What the replica's refusal says, for the command the user typed.
std::string ReplicaRefusal(const pb::CommandError& e) {
  return "the replica refused " + e.what() + ": " + e.why();
}

std::string ColumnName(const pb::Schema& schema, int i) {
  if (i < schema.columns_size() && !schema.columns(i).name().empty()) {
    return schema.columns(i).name();
  }
  return "c" + std::to_string(i);
}

std::string FrontierText(const pb::Frontier& f) {
  return f.elements().empty() ? "closed" : std::to_string(f.elements(0));
}

void FrontierValue(JsonWriter& json, const pb::Frontier& f) {
  if (f.elements().empty()) {
    json.Null();
  } else {
    json.UInt(f.elements(0));
  }
}

// The frontier object, the same in `frontiers` and `watch`:
// {"id", "write", "input", "output" (times, null when empty), "closed"}.
void FrontiersJson(JsonWriter& json, const pb::Frontiers& f) {
  json.BeginObject().Key("id").String(f.id());
  json.Key("write");
  FrontierValue(json, f.write());
  json.Key("input");
  FrontierValue(json, f.input());
  json.Key("output");
  FrontierValue(json, f.output());
  json.Key("closed").Bool(f.write().elements().empty());
  json.EndObject();
}

// {"row": [datums], "count": n} per row.
void RowsJson(JsonWriter& json, const pb::Rows& rows) {
  json.BeginArray();
  for (const auto& rc : rows.rows()) {
    json.BeginObject().Key("row").RowValue(ipc::FromProto(rc.row()));
    json.Key("count").UInt(rc.count()).EndObject();
  }
  json.EndArray();
}

// One response as `watch` and `run` print it with --json: {"frontiers": F},
// {"peek_response": {"uuid", "rows" | "error" | "canceled": true}}, {"command_error": {"what",
// "why"}} or {"status": the protocol JSON of the Status}.
std::string ResponseJson(const pb::Response& r) {
  JsonWriter json;
  json.BeginObject();
  if (r.has_frontiers()) {
    json.Key("frontiers");
    FrontiersJson(json, r.frontiers());
  } else if (r.has_peek_response()) {
    const auto& p = r.peek_response();
    json.Key("peek_response").BeginObject().Key("uuid").String(p.uuid());
    if (p.has_error()) {
      json.Key("error").String(p.error());
    } else if (p.has_canceled()) {
      json.Key("canceled").Bool(true);
    } else {
      json.Key("rows");
      RowsJson(json, p.rows());
    }
    json.EndObject();
  } else if (r.has_command_error()) {
    json.Key("command_error").BeginObject().Key("what").String(r.command_error().what());
    json.Key("why").String(r.command_error().why()).EndObject();
  } else {
    json.Key("status").Raw(ipc::ToJson(r.status()));
  }
  json.EndObject();
  return json.str();
}

std::string JoinIds(const std::vector<std::string>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == ids.size() ? " and " : ", ") + ids[i];
  }
  return out;
}

// One session with the replica.
//
// Read commands (peek, frontiers, watch) open an observer session: they never replay, never send
// InitializationComplete and never supersede the controller, so whatever their state file says
// (or none), they cannot change the replica. Commands that change it open a controller session
// and replay the history first — but only once they know that the replica maintains no index the
// history does not define (HelloAccepted.live_indexes): reconciliation would drop those. Unless
// --replace, such a command is refused, having changed nothing: it asks as an observer first
// (whose Hello reaches no runtime), and only then says Hello as the controller.
class Session {
 public:
  enum class Mode { kObserve, kControl };

  Session(Globals g, History h) : g_(std::move(g)), history_(std::move(h)) {}

  // Returns an exit code on failure.
  std::optional<int> Open(Mode mode) {
    ipc::ControllerClient::Options options;
    options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(g_.timeout_s * 1000));
    options.linger = std::chrono::milliseconds(200);
    options.end_on_disconnect = true;
    options.goodbye = true;
    auto client = ipc::ControllerClient::Create(g_.endpoint, options);
    if (!client.ok()) {
      return Fail(kExitUsage, "--endpoint \"" + g_.endpoint +
                                  "\" is not a ZeroMQ endpoint (expected e.g. "
                                  "tcp://127.0.0.1:2101): " +
                                  client.status().message());
    }
    client_ = std::move(client).value();
    if (Status s = client_->Hello(RandomHex(8), /*observer=*/true); !s.ok()) return Ended(s);
    if (!client_->observer()) {
      // A supervisor that knows no observers made us its controller (the Hello is the same
      // protocol version): reading must not go on as if nothing happened.
      return Fail(kExitFailed, "the replica at " + g_.endpoint +
                                   " does not support observer sessions (Hello{observer}); "
                                   "upgrade tandem-supervisor");
    }
    if (mode == Mode::kObserve) return std::nullopt;
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

  // Sends a new command and waits for its verdict. Accepted state-changing commands are added to
  // the history (and saved). Returns true when accepted; prints the refusals, as refusals of
  // `what` (the command as the user typed it).
  Result<bool> Submit(const pb::Command& command, bool record, const std::string& what,
                      const std::function<void(History&)>& also = {}) {
    auto errors = client_->SendChecked(command);
    if (!errors.ok()) return errors.status();
    if (!errors->empty()) {
      for (const auto& e : *errors) Refused(what, ReplicaRefusal(e));
      return false;
    }
    if (record) {
      history_.Append(command);
      if (also) also(history_);
      if (command.has_allow_compaction() &&
          command.allow_compaction().frontier().elements().empty()) {
        history_.Prune();
      }
      if (Status s = history_.Save(); !s.ok()) Warn(s.message());
    }
    return true;
  }

  // Sends a Peek. A controller's is checked at once (barrier); an observer may send no barrier,
  // so its refusal, if any, comes while AwaitPeek waits. Returns the refusal when known now.
  Result<std::optional<pb::CommandError>> SendPeek(const pb::Command& peek) {
    if (client_->observer()) {
      client_->Send(peek);
      return std::optional<pb::CommandError>();
    }
    auto errors = client_->SendChecked(peek);
    if (!errors.ok()) return errors.status();
    if (errors->empty()) return std::optional<pb::CommandError>();
    return std::optional(errors->front());
  }

  // Waits until `deadline` for the answer to peek `uuid` — or, in an observer session, the
  // CommandError refusing it (one peek is in flight at a time). Neither: timed out, interrupted
  // or the session ended (lost(), superseded()).
  struct PeekWait {
    std::optional<pb::PeekResponse> answer;
    std::optional<pb::CommandError> refused;
  };
  PeekWait AwaitPeek(const std::string& uuid, std::chrono::steady_clock::time_point deadline) {
    PeekWait w;
    while (!g_interrupted && !client_->lost() && !client_->superseded()) {
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

  // The exit for a session that could not go on: 69 unreachable or lost, 75 superseded, else 1.
  int Ended(const Status& s) {
    if (client_ && client_->superseded()) return Fail(kExitSuperseded, client_->EndReason());
    if (client_ && client_->lost()) return Fail(kExitUnavailable, client_->EndReason());
    return Fail(s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed, s.message());
  }
  bool over() const { return client_->lost() || client_->superseded(); }

  ipc::ControllerClient& client() { return *client_; }
  History& history() { return history_; }
  const Globals& globals() const { return g_; }

 private:
  // Refuses (an exit code) when the replica maintains indexes the history does not define and
  // --replace was not given.
  std::optional<int> CheckLiveIndexes() {
    const std::set<std::string> known = history_.LiveIndexes();
    std::vector<std::string> unknown;
    for (const auto& id : client_->accepted().live_indexes()) {
      if (!known.count(id)) unknown.push_back(id);
    }
    if (unknown.empty()) return std::nullopt;
    const std::string list = JoinIds(unknown);
    const std::string they = unknown.size() == 1 ? "it" : "them";
    if (g_.replace) {
      if (!warned_replace_) {
        Warn("--replace: the replica's " +
             std::string(unknown.size() == 1 ? "index " : "indexes ") + list + " (not in " +
             history_.path() + ") will be dropped with their dataflows");
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

  Globals g_;
  History history_;
  std::unique_ptr<ipc::ControllerClient> client_;
  bool warned_replace_ = false;
};

void PrintOk(const std::string& what, const std::function<void(JsonWriter&)>& fields,
             const std::string& human) {
  if (g_json) {
    JsonWriter json;
    json.BeginObject().Key("ok").Bool(true).Key("command").String(what);
    if (fields) fields(json);
    json.EndObject();
    std::cout << json.str() << "\n";
  } else {
    std::cout << human << "\n";
  }
}

// Runs `command` through a session and reports the created ids.
int SubmitCreate(Session& s, const pb::Command& command, const std::string& what,
                 const std::string& human, const std::function<void(History&)>& also = {}) {
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(command, true, what, also);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  PrintOk(
      what,
      [&](JsonWriter& json) {
        json.Key("created").BeginArray();
        const auto& d = command.create_dataflow().desc();
        for (const auto& x : d.source_imports()) json.String(x.id());
        for (const auto& x : d.objects_to_build()) json.String(x.id());
        for (const auto& x : d.index_exports()) json.String(x.id());
        json.EndArray();
      },
      human);
  return kExitOk;
}

pb::Command NewDataflow(const std::string& debug_name) {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name(debug_name);
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  return c;
}

std::string ColumnsText(const std::vector<std::uint32_t>& cols, const pb::Schema& schema) {
  std::string out;
  for (auto c : cols) out += (out.empty() ? "" : ",") + ColumnName(schema, static_cast<int>(c));
  return out;
}

// --- create-source ------------------------------------------------------------------------

// A log source's file must exist now and be a regular file we can read: a path the replica
// would wait on forever is refused here, with the reason.
Result<std::string> CheckLogFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return Status::InvalidArgument("--log " + path + ": " + ec.message());
  const auto status = fs::status(absolute, ec);
  if (!fs::exists(status)) {
    return Status::NotFound("--log " + path +
                            ": no such file (the log source tails an existing file as it grows: "
                            "create it first, even empty)");
  }
  if (!fs::is_regular_file(status)) {
    return Status::InvalidArgument("--log " + path + ": not a regular file (" +
                                   (fs::is_directory(status) ? "a directory" : "a special file") +
                                   "); the log source reads an append-only text file");
  }
  if (access(absolute.c_str(), R_OK) != 0) {
    return Status::InvalidArgument("--log " + path + ": cannot be read: " + std::strerror(errno));
  }
  return absolute.string();
}

int CreateSource(History h, const Args& a) {
  a.Allow(
      {"generator", "keys", "updates-per-tick", "tick-interval-us", "seed", "max", "log", "schema"},
      1, 1);
  const std::string id = a.positional[0];
  pb::SourceImport s;
  s.set_id(id);
  auto int64_col = [](const char* name) {
    pb::Column c;
    c.set_name(name);
    c.set_type(pb::INT64);
    return c;
  };
  const auto generator = a.One("generator");
  const auto log = a.One("log");
  if (generator.has_value() == log.has_value()) {
    throw UsageError{"create-source needs exactly one of --generator and --log"};
  }
  auto u64 = [&](const char* name, std::uint64_t def) {
    auto v = a.One(name);
    return v ? ParseU64(*v, std::string("--") + name) : def;
  };
  const std::string what = "create-source " + id;
  if (generator) {
    if (a.One("log") || a.One("schema")) throw UsageError{"--schema goes with --log"};
    if (*generator == "counter") {
      if (a.One("keys") || a.One("updates-per-tick") || a.One("seed")) {
        throw UsageError{"a counter source takes --tick-interval-us and --max"};
      }
      auto* c = s.mutable_source()->mutable_counter();
      c->set_tick_interval_us(u64("tick-interval-us", 100000));
      c->set_max(u64("max", 0));
      *s.mutable_schema()->add_columns() = int64_col("n");
    } else if (*generator == "key_value") {
      if (a.One("max")) throw UsageError{"--max goes with a counter source"};
      auto* kv = s.mutable_source()->mutable_key_value();
      kv->set_keys(u64("keys", 100));
      kv->set_updates_per_tick(u64("updates-per-tick", 1));
      kv->set_tick_interval_us(u64("tick-interval-us", 100000));
      kv->set_seed(u64("seed", 1));
      *s.mutable_schema()->add_columns() = int64_col("key");
      *s.mutable_schema()->add_columns() = int64_col("value");
    } else {
      throw UsageError{"unknown generator \"" + *generator + "\" (counter, key_value)"};
    }
  } else {
    for (const char* o : {"keys", "updates-per-tick", "tick-interval-us", "seed", "max"}) {
      if (a.One(o)) throw UsageError{std::string("--") + o + " goes with --generator"};
    }
    auto schema = ParseSchema(a.Required("schema"));
    if (!schema.ok()) throw UsageError{schema.status().message()};
    *s.mutable_schema() = *schema;
    auto path = CheckLogFile(*log);
    if (!path.ok()) return Refused(what, path.status().message());
    s.mutable_source()->mutable_log()->set_path(*path);
  }
  if (h.LiveIds().count(id)) return Refused(what, id + " already exists in " + h.path());
  // Check it as the supervisor will, against the history: same validator.
  pb::Command c = NewDataflow(kPendingSource);
  *c.mutable_create_dataflow()->mutable_desc()->add_source_imports() = s;
  c = Canonical(c);
  ipc::Validator v;
  pb::Command hello;
  hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
  hello.mutable_hello()->set_nonce("local");
  (void)v.Validate(hello);
  for (const auto& r : h.Replay()) (void)v.Validate(r);
  pb::Command probe = c;
  probe.mutable_create_dataflow()->mutable_desc()->set_debug_name("probe");
  // A source alone is no dataflow the supervisor accepts (it must export an index): probe it with
  // the index the next create-index --on it will add.
  auto* index = probe.mutable_create_dataflow()->mutable_desc()->add_index_exports();
  index->set_id(h.NextFreeId({id}));
  index->set_on(id);
  index->add_key(0);
  if (Status st = v.Validate(probe); !st.ok()) return Refused(what, st.message());
  h.Append(c);
  if (Status st = h.Save(); !st.ok()) return Fail(kExitFailed, st.message());
  PrintOk(
      what, [&](JsonWriter& json) { json.Key("pending").String(id); },
      "source " + id + " recorded (pending: it becomes part of the dataflow of the next " +
          "create-index/create-view --on " + id + ")");
  return kExitOk;
}

// Where --on comes from: a pending source (consumed) or a collection the history knows.
struct Input {
  std::optional<pb::SourceImport> pending;
  pb::Schema schema;
};

// nullopt (after refusing) when the history knows nothing called `on`.
std::optional<Input> ResolveInput(const History& h, const std::string& on,
                                  const std::string& what) {
  Input in;
  in.pending = h.PendingSource(on);
  if (in.pending) {
    in.schema = in.pending->schema();
  } else if (auto info = h.Lookup(on); info && h.LiveIds().count(on)) {
    in.schema = info->schema;
  } else {
    Refused(what, on + " is not a source or collection this controller created (state file " +
                      h.path() + "); create it first, e.g. create-source " + on + " --log FILE");
    return std::nullopt;
  }
  return in;
}

// Refused (nullopt) when `id` exists already.
bool IsNew(const History& h, const std::string& id, const std::string& what) {
  if (!h.LiveIds().count(id)) return true;
  Refused(what, id + " already exists in " + h.path());
  return false;
}

// --- create-index --------------------------------------------------------------------------

int CreateIndex(Session& s, const Args& a) {
  a.Allow({"on", "key"}, 1, 1);
  const std::string id = a.positional[0];
  const std::string on = a.Required("on");
  const std::string key_text = a.Required("key");
  const std::string what = "create-index " + id;
  if (!IsNew(s.history(), id, what)) return kExitFailed;
  const auto in = ResolveInput(s.history(), on, what);
  if (!in) return kExitFailed;
  auto key = ParseColumns(key_text, in->schema);
  if (!key.ok()) return Refused(what, "--key: " + key.status().message());
  pb::Command c = NewDataflow("index " + id);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (in->pending) *d->add_source_imports() = *in->pending;
  auto* x = d->add_index_exports();
  x->set_id(id);
  x->set_on(on);
  for (auto k : *key) x->add_key(k);
  return SubmitCreate(
      s, Canonical(c), what,
      "created index " + id + " on " + on + " (key " + ColumnsText(*key, in->schema) + ")",
      [&](History& h) {
        if (in->pending) h.RemovePendingSource(on);
      });
}

// --- create-view ---------------------------------------------------------------------------

int CreateView(Session& s, const Args& a) {
  a.Allow({"on", "group-by", "aggregate", "key", "index-id"}, 1, 1);
  const std::string id = a.positional[0];
  const std::string on = a.Required("on");
  const std::string what = "create-view " + id;
  if (!IsNew(s.history(), id, what)) return kExitFailed;
  if (auto x = a.One("index-id"); x && !IsNew(s.history(), *x, what)) return kExitFailed;
  const auto in = ResolveInput(s.history(), on, what);
  if (!in) return kExitFailed;
  pb::Command c = NewDataflow("view " + id);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (in->pending) *d->add_source_imports() = *in->pending;
  auto* b = d->add_objects_to_build();
  b->set_id(id);
  const auto group_text = a.One("group-by");
  const auto aggregates = a.All("aggregate");
  std::vector<std::uint32_t> group;
  if (group_text) {
    auto g = ParseColumns(*group_text, in->schema);
    if (!g.ok()) return Refused(what, "--group-by: " + g.status().message());
    group = *g;
  }
  if (!group_text && aggregates.empty()) {
    auto* mfp = b->mutable_plan()->mutable_mfp();
    mfp->mutable_input()->mutable_get()->set_id(on);
    mfp->mutable_mfp();
  } else {
    auto* r = b->mutable_plan()->mutable_reduce();
    r->mutable_input()->mutable_get()->set_id(on);
    for (auto g : group) r->add_group_key(g);
    for (const auto& text : aggregates) {
      auto* agg = r->add_aggregates();
      const auto colon = text.find(':');
      const std::string func = text.substr(0, colon);
      if (func == "count" && colon == std::string::npos) {
        agg->set_func(pb::COUNT);
        continue;
      }
      if (colon == std::string::npos || (func != "sum" && func != "min" && func != "max")) {
        throw UsageError{"--aggregate \"" + text +
                         "\": expected count, sum:COL, min:COL or max:COL"};
      }
      agg->set_func(func == "sum" ? pb::SUM : func == "min" ? pb::MIN : pb::MAX);
      auto col = ParseColumns(text.substr(colon + 1), in->schema);
      if (!col.ok()) return Refused(what, "--aggregate " + text + ": " + col.status().message());
      if (col->size() != 1) throw UsageError{"--aggregate " + text + ": one column"};
      agg->set_column((*col)[0]);
    }
  }
  const pb::Schema view_schema = PlanSchema(b->plan(), {{on, in->schema}});
  std::vector<std::uint32_t> key;
  if (auto k = a.One("key")) {
    auto parsed = ParseColumns(*k, view_schema);
    if (!parsed.ok()) return Refused(what, "--key: " + parsed.status().message());
    key = *parsed;
  } else {
    for (std::uint32_t i = 0; i < group.size(); ++i) key.push_back(i);
    if (key.empty()) key.push_back(0);
  }
  const std::string index_id = a.One("index-id").value_or(s.history().NextFreeId({id, on}));
  auto* x = d->add_index_exports();
  x->set_id(index_id);
  x->set_on(id);
  for (auto k : key) x->add_key(k);
  return SubmitCreate(s, Canonical(c), what,
                      "created view " + id + " on " + on + " with index " + index_id + " (key " +
                          ColumnsText(key, view_schema) + ")",
                      [&](History& h) {
                        if (in->pending) h.RemovePendingSource(on);
                      });
}

// --- create-dataflow -----------------------------------------------------------------------

int CreateDataflow(Session& s, const Args& a) {
  a.Allow({}, 1, 1);
  const std::string file = a.positional[0];
  std::ifstream f(file);
  if (!f) throw UsageError{"cannot read " + file};
  const std::string text{std::istreambuf_iterator<char>(f), {}};
  pb::Command c;
  if (auto parsed = ipc::CommandFromJson(text); parsed.ok() && parsed->has_create_dataflow()) {
    c = *parsed;
  } else {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto st = google::protobuf::util::JsonStringToMessage(
        text, c.mutable_create_dataflow()->mutable_desc(), options);
    if (!st.ok()) {
      throw UsageError{file + ": neither a CreateDataflow command nor a DataflowDescription (" +
                       (parsed.ok() ? std::string("a command, but not CreateDataflow")
                                    : parsed.status().message()) +
                       ")"};
    }
  }
  std::string ids;
  const auto& d = c.create_dataflow().desc();
  for (const auto& x : d.index_exports()) ids += (ids.empty() ? "" : ", ") + x.id();
  return SubmitCreate(s, Canonical(c), "create-dataflow " + file,
                      "created dataflow " + (d.debug_name().empty() ? file : d.debug_name()) +
                          (ids.empty() ? "" : " (indexes " + ids + ")"));
}

// --- peek ----------------------------------------------------------------------------------

void PrintTable(const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(headers.size());
  for (std::size_t i = 0; i < headers.size(); ++i) width[i] = headers[i].size();
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], r[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out += cells[i];
      if (i + 1 < cells.size()) out += std::string(width[i] - cells[i].size() + 2, ' ');
    }
    std::cout << out << "\n";
  };
  line(headers);
  std::vector<std::string> rule;
  for (auto w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
}

// How long `peek --at latest` waits for a frontier report before probing.
constexpr std::chrono::milliseconds kFrontierWait{300};
// How long a probe peek may take before it counts as "not readable yet" and is canceled.
constexpr std::chrono::milliseconds kProbeWait{50};
constexpr std::chrono::milliseconds kProbeRecheck{250};

// Whether index `id` is readable at `t` (its upper is beyond t): a peek with limit 0 that answers
// at once (rows, or an error — below since, or an error in the data) says yes; one still waiting
// after `wait` is canceled, and Canceled says no. A refused probe is an error (InvalidArgument).
Result<bool> Readable(Session& s, const std::string& id, std::uint64_t t,
                      std::chrono::milliseconds wait = kProbeWait) {
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(RandomHex(16));
  p->set_id(id);
  p->set_timestamp(t);
  p->mutable_finishing()->set_limit(0);
  auto sent = s.SendPeek(c);
  if (!sent.ok()) return sent.status();
  if (*sent) return Status::InvalidArgument(ReplicaRefusal(**sent));
  auto w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + wait);
  if (w.refused) return Status::InvalidArgument(ReplicaRefusal(*w.refused));
  if (w.answer) return !w.answer->has_canceled();
  if (s.over()) return Status::Unavailable(s.client().EndReason());
  pb::Command cancel;
  cancel.mutable_cancel_peek()->set_uuid(p->uuid());
  s.client().Send(cancel);
  // Exactly one answer per peek: Canceled, or the result if it was produced meanwhile.
  w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + s.client().timeout());
  if (w.answer) return !w.answer->has_canceled();
  if (s.over()) return Status::Unavailable(s.client().EndReason());
  return Status::Unavailable("the replica did not answer a canceled peek");
}

// The latest time an index can be read at, and whether it is closed.
struct Latest {
  Time time = 0;
  bool closed = false;
};

// Finds the latest time index `id` can be read at with Readable: kMaxTime when it is readable
// there (closed: the empty frontier is above every time), else upper - 1 by exponential then
// binary search.
Result<Latest> ProbeLatest(Session& s, const std::string& id) {
  auto ready = Readable(s, id, 0);
  if (!ready.ok()) return ready.status();
  if (!*ready) return Status::FailedPrecondition(id + " has no complete time yet");
  auto closed = Readable(s, id, kMaxTime);
  if (!closed.ok()) return closed.status();
  if (*closed) return Latest{kMaxTime, true};
  std::uint64_t lo = 0, hi = 1;  // lo readable; hi: to be tested, then unreadable
  for (;;) {
    auto r = Readable(s, id, hi);
    if (!r.ok()) return r.status();
    if (!*r) break;
    lo = hi;
    if (hi > kMaxTime / 2) {
      hi = kMaxTime;  // not readable there: checked above
      break;
    }
    hi *= 2;
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    auto r = Readable(s, id, mid);
    if (!r.ok()) return r.status();
    (*r ? lo : hi) = mid;
  }
  // A busy replica may have been slower than kProbeWait: check the next time more patiently.
  for (int i = 0; i < 3; ++i) {
    auto r = Readable(s, id, lo + 1, kProbeRecheck);
    if (!r.ok()) return r.status();
    if (!*r) break;
    ++lo;
  }
  return Latest{lo, false};
}

int Peek(Session& s, const Args& a) {
  a.Allow({"at", "key", "order-by", "limit"}, 1, 1);
  const std::string asked = a.positional[0];
  const std::string at = a.One("at").value_or("latest");
  std::optional<std::uint64_t> time;
  if (at != "latest") time = ParseU64(at, "--at");
  if (time && *time > kMaxTime) {
    throw UsageError{"--at " + at + ": the largest time is " + std::to_string(kMaxTime) +
                     " (UINT64_MAX is reserved for the empty frontier)"};
  }
  std::optional<std::uint64_t> limit;
  if (auto l = a.One("limit")) limit = ParseU64(*l, "--limit");
  const std::string id = s.history().IndexFor(asked);
  const std::string what = "peek " + asked;
  const auto info = s.history().Lookup(id);
  const pb::Schema schema = info ? info->schema : pb::Schema();
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(RandomHex(16));
  p->set_id(id);
  std::vector<const pb::Column*> key_columns;
  if (info && info->is_index) {
    for (auto k : info->key) {
      key_columns.push_back(static_cast<int>(k) < schema.columns_size()
                                ? &schema.columns(static_cast<int>(k))
                                : nullptr);
    }
  }
  for (const auto& text : a.All("key")) {
    auto row = ParseKey(text, key_columns);
    if (!row.ok()) return Refused(what, "--key " + text + ": " + row.status().message());
    *p->add_keys() = std::move(*row);
  }
  if (auto ob = a.One("order-by")) {
    std::string col = *ob;
    bool desc = false;
    if (col.size() > 5 && col.substr(col.size() - 5) == ":desc") {
      desc = true;
      col.resize(col.size() - 5);
    } else if (col.size() > 4 && col.substr(col.size() - 4) == ":asc") {
      col.resize(col.size() - 4);
    }
    auto cols = ParseColumns(col, schema);
    if (!cols.ok()) return Refused(what, "--order-by: " + cols.status().message());
    for (auto k : *cols) {
      auto* o = p->mutable_finishing()->add_order_by();
      o->set_column(k);
      o->set_desc(desc);
    }
  }
  if (limit) p->mutable_finishing()->set_limit(*limit);
  if (auto code = s.Open(Session::Mode::kObserve)) return *code;
  const auto timeout = s.client().timeout();
  bool closed = false;
  if (!time) {
    // Latest: the freshest write frontier reported for the index, minus one; the largest time
    // when it is closed. Frontiers are reported as they advance, so one that has not moved since
    // an earlier controller saw it is not reported again: then find it by probing (ProbeLatest).
    std::optional<pb::Frontiers> best;
    const auto deadline = std::chrono::steady_clock::now() + std::min(timeout, kFrontierWait);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      // Once one frontier is known, take what is already queued but do not wait for more.
      auto r = s.client().Receive(best ? std::chrono::milliseconds(0)
                                       : std::max(left, std::chrono::milliseconds(0)));
      if (!r) break;
      if (r->has_frontiers() && r->frontiers().id() == id) best = r->frontiers();
    }
    if (s.over()) return s.Ended(Status::Ok());
    if (best && best->write().elements().empty()) {
      time = kMaxTime;
      closed = true;
    } else if (best && best->write().elements(0) > 0) {
      time = best->write().elements(0) - 1;
    } else {
      auto probed = ProbeLatest(s, id);
      if (!probed.ok()) {
        if (probed.status().code() == StatusCode::kUnavailable) return s.Ended(probed.status());
        return Refused(what + " --at latest", probed.status().message());
      }
      time = probed->time;
      closed = probed->closed;
    }
  }
  p->set_timestamp(*time);
  const auto started = std::chrono::steady_clock::now();
  auto sent = s.SendPeek(c);
  if (!sent.ok()) return s.Ended(sent.status());
  if (*sent) return Refused(what, ReplicaRefusal(**sent));
  const auto w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + timeout);
  if (w.refused) return Refused(what, ReplicaRefusal(*w.refused));
  const std::optional<pb::PeekResponse>& answer = w.answer;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const std::string at_what = what + " @ " + std::to_string(*time);
  if (!answer) {
    if (s.over()) return s.Ended(Status::Ok());
    pb::Command cancel;
    cancel.mutable_cancel_peek()->set_uuid(p->uuid());
    s.client().Send(cancel);
    return Refused(at_what, "no answer within " +
                                std::to_string(static_cast<int>(timeout.count() / 1000)) +
                                " s (the index may not have reached that time; canceled)");
  }
  if (answer->has_error()) return Refused(at_what, answer->error());
  if (answer->has_canceled()) return Refused(at_what, "canceled");
  const auto& rows = answer->rows().rows();
  int arity = schema.columns_size();
  for (const auto& rc : rows) arity = std::max(arity, rc.row().datums_size());
  std::vector<std::string> headers;
  for (int i = 0; i < arity; ++i) headers.push_back(ColumnName(schema, i));
  const bool count_taken = std::find(headers.begin(), headers.end(), "count") != headers.end();
  const std::string count_header = count_taken ? "#count" : "count";
  std::uint64_t total = 0;
  for (const auto& rc : rows) total += rc.count();
  if (g_json) {
    JsonWriter json;
    json.BeginObject().Key("id").String(id).Key("time").UInt(*time).Key("closed").Bool(closed);
    json.Key("latency_ms").Double(ms).Key("columns").BeginArray();
    for (const auto& h : headers) json.String(h);
    json.EndArray().Key("rows");
    RowsJson(json, answer->rows());
    json.EndObject();
    std::cout << json.str() << "\n";
  } else {
    headers.push_back(count_header);
    std::vector<std::vector<std::string>> cells;
    for (const auto& rc : rows) {
      std::vector<std::string> line;
      for (int j = 0; j < arity; ++j) {
        line.push_back(j < rc.row().datums_size() ? DatumText(rc.row().datums(j)) : "");
      }
      line.push_back(std::to_string(rc.count()));
      cells.push_back(std::move(line));
    }
    PrintTable(headers, cells);
    char latency[32];
    std::snprintf(latency, sizeof latency, "%.2f", ms);
    std::cout << "(" << total << (total == 1 ? " row" : " rows") << " of " << id << " at time "
              << *time << (closed ? " (closed: its final contents)" : "") << ", " << latency
              << " ms)\n";
  }
  return kExitOk;
}

// --- frontiers, watch, compaction, drop, run ----------------------------------------------------

int Frontiers(Session& s, const Args& a) {
  a.Allow({"for"}, 0, 1);
  const std::optional<std::string> only =
      a.positional.empty() ? std::nullopt : std::optional(a.positional[0]);
  const double seconds = a.One("for") ? ParseSeconds(*a.One("for"), "--for") : 1.0;
  // A log source whose file is gone (or never was) cannot advance: say so, whatever the replica
  // reports.
  std::vector<std::string> warnings;
  for (const auto& [source, path] : s.history().LogSources()) {
    const auto indexes = s.history().KindOf(source).indexes;
    if (only && *only != source &&
        std::find(indexes.begin(), indexes.end(), *only) == indexes.end()) {
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) continue;
    const std::string state =
        std::filesystem::exists(path, ec) ? "is not a regular file" : "does not exist";
    // A pending source has no index yet: nothing is waiting on it, but create-index would.
    const std::string waits = indexes.empty()       ? "an index on it"
                              : indexes.size() == 1 ? "its index " + indexes.front()
                                                    : "its indexes " + JoinIds(indexes);
    warnings.push_back("the log file of source " + source + " (" + path + ") " + state +
                       " now: " + waits + " cannot advance until it is back");
  }
  for (const auto& w : warnings) Warn(w);
  if (auto code = s.Open(Session::Mode::kObserve)) return *code;
  std::map<std::string, pb::Frontiers> latest;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  while (!g_interrupted) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = s.client().Receive(left);
    if (!r) break;
    if (!r->has_frontiers()) continue;
    if (only && r->frontiers().id() != *only) continue;
    latest[r->frontiers().id()] = r->frontiers();
  }
  if (s.over()) return s.Ended(Status::Ok());
  // Frontiers are reported as they advance: an index of the history whose frontier has not moved
  // since an earlier controller saw it is not reported again. Find its frontier by probing.
  std::set<std::string> probed;
  for (const auto& id : s.history().LiveIndexes()) {
    if ((only && id != *only) || latest.count(id)) continue;
    auto t = ProbeLatest(s, id);
    pb::Frontiers f;
    f.set_id(id);
    if (t.ok()) {
      if (!t->closed) {
        for (auto* fr : {f.mutable_write(), f.mutable_input(), f.mutable_output()}) {
          fr->add_elements(t->time + 1);
        }
      }
    } else if (t.status().code() == StatusCode::kUnavailable) {
      return s.Ended(t.status());
    } else {
      continue;  // no complete time yet, or unknown to the replica
    }
    latest[id] = f;
    probed.insert(id);
  }
  if (g_json) {
    JsonWriter json;
    json.BeginObject().Key("frontiers").BeginArray();
    for (const auto& [id, f] : latest) FrontiersJson(json, f);
    json.EndArray().Key("probed").BeginArray();
    for (const auto& id : probed) json.String(id);
    json.EndArray().Key("warnings").BeginArray();
    for (const auto& w : warnings) json.String(w);
    json.EndArray().EndObject();
    std::cout << json.str() << "\n";
    return kExitOk;
  }
  if (latest.empty()) {
    std::cout << "(no frontiers reported" << (only ? " for " + *only : "")
              << "; frontiers are reported as they advance)\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [id, f] : latest) {
    rows.push_back({id, FrontierText(f.write()), FrontierText(f.input()), FrontierText(f.output()),
                    probed.count(id) ? "probed" : "reported"});
  }
  PrintTable({"id", "write", "input", "output", "how"}, rows);
  return kExitOk;
}

std::string RowsText(const pb::Rows& rows) {
  std::string out;
  for (const auto& rc : rows.rows()) {
    out += (out.empty() ? "" : ", ") + tools::RowText(ipc::FromProto(rc.row())) + " x" +
           std::to_string(rc.count());
  }
  return out;
}

void PrintResponse(const pb::Response& r) {
  if (g_json) {
    std::cout << ResponseJson(r) << std::endl;
    return;
  }
  std::string text;
  if (r.has_frontiers()) {
    text = "frontiers " + r.frontiers().id() + " write " + FrontierText(r.frontiers().write());
  } else if (r.has_peek_response()) {
    const auto& p = r.peek_response();
    text = "peek " + p.uuid() + ": " +
           (p.has_error()      ? "error: " + p.error()
            : p.has_canceled() ? std::string("canceled")
                               : std::to_string(p.rows().rows_size()) + " distinct rows" +
                                     (p.rows().rows().empty() ? "" : ": " + RowsText(p.rows())));
  } else if (r.has_command_error()) {
    text = "refused " + r.command_error().what() + ": " + r.command_error().why();
  } else {
    text = std::string(ipc::ResponseName(r)) + " " + ipc::ToJson(r.status());
  }
  std::cout << text << std::endl;
}

int Watch(Session& s, const Args& a) {
  a.Allow({"for"}, 0, 0);
  std::optional<double> seconds;
  if (auto f = a.One("for")) seconds = ParseSeconds(*f, "--for");
  if (auto code = s.Open(Session::Mode::kObserve)) return *code;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(seconds.value_or(0) * 1000));
  while (!g_interrupted) {
    if (seconds && std::chrono::steady_clock::now() >= deadline) break;
    auto r = s.client().Receive(std::chrono::milliseconds(100));
    if (r) PrintResponse(*r);
    // Superseded or disconnected: nothing more will come on this session; say so and stop.
    if (s.client().superseded() || s.client().lost()) return s.Ended(Status::Ok());
  }
  return kExitOk;
}

// Why `id` cannot be dropped (`compaction` unset) or compacted to `compaction`: it is no index
// of the history. The reason names what `id` is and the command to run instead.
std::optional<std::string> NotAnIndex(const History& h, const std::string& id,
                                      std::optional<std::uint64_t> compaction) {
  const auto kind = h.KindOf(id);
  std::string instead;
  if (!kind.indexes.empty()) {
    const std::string one = kind.indexes.front();
    const std::string of = kind.indexes.size() == 1
                               ? " (the index of its dataflow)"
                               : " (its dataflow's indexes are " + JoinIds(kind.indexes) + ")";
    instead = compaction ? "; compaction applies to an index: allow-compaction " + one + " " +
                               std::to_string(*compaction) + of
                         : "; drop " + one + " instead" + of +
                               ": a dataflow, with its sources and views, goes with its last "
                               "index";
  }
  switch (kind.kind) {
    case History::IdKind::kIndex:
      return std::nullopt;
    case History::IdKind::kSource:
      return id + " is a source, not an index" + instead;
    case History::IdKind::kView:
      return id + " is a view, not an index" + instead;
    case History::IdKind::kPendingSource:
      return id + " is a pending source (nothing on the replica yet), not an index";
    case History::IdKind::kUnknown:
      break;
  }
  return id + " is not an index this controller created (state file " + h.path() + ")";
}

int AllowCompaction(Session& s, const Args& a) {
  a.Allow({}, 2, 2);
  const std::string id = a.positional[0];
  const std::string what = "allow-compaction " + id;
  const std::uint64_t t = ParseU64(a.positional[1], "allow-compaction T");
  if (t > kMaxTime) {
    throw UsageError{"allow-compaction T: the largest time is " + std::to_string(kMaxTime) +
                     "; to drop, use drop"};
  }
  if (auto why = NotAnIndex(s.history(), id, t)) return Refused(what, *why);
  pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier()->add_elements(t);
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(Canonical(c), true, what);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  PrintOk(
      what, [&](JsonWriter& json) { json.Key("id").String(id).Key("frontier").UInt(t); },
      "allowed compaction of " + id + " up to " + std::to_string(t));
  return kExitOk;
}

int Drop(const Globals& g, History h, const Args& a) {
  a.Allow({}, 1, 1);
  const std::string id = a.positional[0];
  const std::string what = "drop " + id;
  auto done = [&] {
    PrintOk(
        what, [&](JsonWriter& json) { json.Key("id").String(id); }, "dropped " + id);
    return kExitOk;
  };
  if (h.PendingSource(id)) {  // never sent: forget it
    h.RemovePendingSource(id);
    if (Status st = h.Save(); !st.ok()) return Fail(kExitFailed, st.message());
    return done();
  }
  if (auto why = NotAnIndex(h, id, std::nullopt)) return Refused(what, *why);
  Session s(g, std::move(h));
  pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier();
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(Canonical(c), true, what);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  return done();
}

int Run(Session& s, const Args& a) {
  a.Allow({}, 1, 1);
  const std::string file = a.positional[0];
  std::ifstream f(file);
  if (!f) throw UsageError{"cannot read " + file};
  struct Line {
    int number;
    pb::Command command;
  };
  std::vector<Line> script;
  int number = 0;
  for (std::string line; std::getline(f, line);) {
    ++number;
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    auto c = ipc::CommandFromJson(line);
    if (!c.ok()) {
      throw UsageError{file + ":" + std::to_string(number) + ": " + c.status().message()};
    }
    if (c->has_hello() || c->has_goodbye()) {
      throw UsageError{file + ":" + std::to_string(number) + ": " + ipc::CommandName(*c) +
                       " is sent by tandem-ctl"};
    }
    script.push_back({number, Canonical(*c)});
  }
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  int refused = 0;
  std::set<std::string> peeks;
  auto show = [&](const pb::Response& r) {
    if (r.has_peek_response()) {
      peeks.erase(r.peek_response().uuid());
      if (r.peek_response().has_error()) ++refused;
    }
    PrintResponse(r);
  };
  // A refused line: its reason on stderr, and (--json) a command_error line like the replica's.
  auto refuse = [&](const std::string& what, const std::string& name, const std::string& why) {
    std::cerr << "tandem-ctl: refused: " << what << ": " << why << "\n";
    pb::Response r;
    r.mutable_command_error()->set_what(name);
    r.mutable_command_error()->set_why(why);
    if (g_json) PrintResponse(r);
    ++refused;
  };
  for (const auto& [line, c] : script) {
    const std::string what = file + ":" + std::to_string(line) + " " + ipc::Describe(c);
    const bool record = c.has_create_dataflow() || c.has_allow_compaction();
    if (c.has_allow_compaction()) {
      const auto& f = c.allow_compaction().frontier();
      if (auto why =
              NotAnIndex(s.history(), c.allow_compaction().id(),
                         f.elements().empty() ? std::nullopt : std::optional(f.elements(0)))) {
        refuse(what, ipc::CommandName(c), *why);
        continue;
      }
    }
    auto errors = s.client().SendChecked(c);
    if (!errors.ok()) return s.Ended(errors.status());
    if (!errors->empty()) {
      for (const auto& e : *errors) refuse(what, e.what(), ReplicaRefusal(e));
      continue;
    }
    if (record) {
      s.history().Append(c);
      if (c.has_allow_compaction() && c.allow_compaction().frontier().elements().empty()) {
        s.history().Prune();
      }
      if (Status st = s.history().Save(); !st.ok()) Warn(st.message());
    }
    if (c.has_peek()) peeks.insert(c.peek().uuid());
  }
  // Wait for the peeks' answers (bounded), then show what else arrived shortly after.
  const auto deadline = std::chrono::steady_clock::now() + s.client().timeout();
  while (!peeks.empty() && !g_interrupted && !s.over()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = s.client().Receive(left);
    if (!r) break;
    show(*r);
  }
  const auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (!s.over()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        settle - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = s.client().Receive(left);
    if (!r) break;
    show(*r);
  }
  if (s.over()) return s.Ended(Status::Ok());
  for (const auto& uuid : peeks) {
    std::cerr << "tandem-ctl: refused: peek " << uuid << ": no answer within the timeout\n";
    ++refused;
  }
  if (refused > 0) {
    return Fail(kExitFailed, std::to_string(refused) + " of the script's " +
                                 std::to_string(script.size()) + " commands failed");
  }
  return kExitOk;
}

int Main(int argc, char** argv) {
  Globals g;
  if (const char* e = std::getenv("TANDEM_ENDPOINT"); e && *e) g.endpoint = e;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--json") g_json = g.json = true;  // for usage errors too
  }
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      if (auto eq = arg.find('='); eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg.resize(eq);
      }
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw UsageError{arg + " needs a value"};
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kHelp;
      return kExitOk;
    } else if (arg == "--endpoint") {
      g.endpoint = value();
    } else if (arg == "--state") {
      g.state = value();
    } else if (arg == "--json") {
      g.json = true;
    } else if (arg == "--replace") {
      g.replace = true;
    } else if (arg == "--timeout") {
      const std::string v = value();
      char* end = nullptr;
      g.timeout_s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(g.timeout_s > 0)) {
        throw UsageError{"--timeout: \"" + v + "\" is not a positive number of seconds"};
      }
    } else if (inline_value) {
      rest.push_back(arg);
      rest.push_back(*inline_value);
    } else {
      rest.push_back(arg);
    }
  }
  if (rest.empty()) throw UsageError{"no command given"};
  const std::string command = rest[0];
  Args a;
  for (std::size_t i = 1; i < rest.size(); ++i) {
    if (rest[i].rfind("--", 0) == 0 && rest[i].size() > 2) {
      if (i + 1 >= rest.size()) throw UsageError{rest[i] + " needs a value"};
      a.options.emplace(rest[i].substr(2), rest[i + 1]);
      ++i;
    } else {
      a.positional.push_back(rest[i]);
    }
  }
  auto history = History::Load(g.state);
  if (!history.ok()) return Fail(kExitFailed, history.status().message());
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  if (command == "create-source") return CreateSource(std::move(*history), a);
  if (command == "drop") return Drop(g, std::move(*history), a);
  if (command == "peek" || command == "frontiers" || command == "watch") history->ReleaseLock();
  Session s(g, std::move(*history));
  if (command == "create-index") return CreateIndex(s, a);
  if (command == "create-view") return CreateView(s, a);
  if (command == "create-dataflow") return CreateDataflow(s, a);
  if (command == "peek") return Peek(s, a);
  if (command == "frontiers") return Frontiers(s, a);
  if (command == "allow-compaction") return AllowCompaction(s, a);
  if (command == "watch") return Watch(s, a);
  if (command == "run") return Run(s, a);
  throw UsageError{"unknown command \"" + command + "\""};
}

}  // namespace
}  // namespace tandem::ctl

int main(int argc, char** argv) {
  try {
    return tandem::ctl::Main(argc, argv);
  } catch (const tandem::ctl::UsageError& e) {
    return tandem::ctl::Fail(tandem::ctl::kExitUsage, e.message + " (tandem-ctl --help for usage)");
  } catch (const std::exception& e) {
    return tandem::ctl::Fail(tandem::ctl::kExitFailed, e.what());
  }
}
