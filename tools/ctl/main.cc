// tandem-ctl: the reference controller (issue #5). See kHelp, and tools/ctl/ctl.h for the
// history it keeps.
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "base/global_id.h"
#include "ipc/validate.h"
#include "tools/ctl/ctl.h"

namespace tandem::ctl {
namespace {

constexpr char kHelp[] = R"(tandem-ctl — the reference controller of a Tandem replica

usage: tandem-ctl [global options] COMMAND [arguments]

global options:
  --endpoint URL    the replica's controller endpoint (env TANDEM_ENDPOINT;
                    default tcp://127.0.0.1:2101)
  --state FILE      the command history (default ./tandem-ctl.state)
  --json            machine-readable output (JSON, one object a line)
  --timeout SECONDS how long to wait for the replica (default 5)
  -h, --help        this text

Like a real controller, tandem-ctl keeps the commands that define the replica's state
(CreateDataflow, AllowCompaction) in the state file, one protocol-JSON command a line. Every
invocation connects (a ZeroMQ DEALER), sends Hello, replays that history, sends
InitializationComplete and then its new commands; the replica's reconciliation keeps what was
re-sent unchanged, so nothing already running is rebuilt. New commands are added to the history
only once the replica has accepted them. Dropped dataflows are pruned from it.

commands:
  create-source ID --generator counter [--tick-interval-us I] [--max N]
  create-source ID --generator key_value [--keys K] [--updates-per-tick U]
                   [--tick-interval-us I] [--seed S]
  create-source ID --log PATH --schema "name:int64,name2:string?,..."
        Types bool, int64, float64, string; a trailing ? makes a column nullable. Defaults:
        tick interval 100000 us, keys 100, updates per tick 1, seed 1.
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
  peek ID [--at T|latest] [--key V ...] [--order-by COL[:desc]] [--limit N]
        Reads index ID (or the index on collection ID) at time T; latest (the default) waits for
        the replica to report ID's frontier (300 ms) and reads at write-1; frontiers are only
        reported as they advance, so when none comes the latest readable time is found by
        probing (peeks with limit 0, canceled when they would wait).
        --key V looks up one key (comma-separated datums for a multi-column key; null for null).
  frontiers [ID] [--for SECONDS]
                    collects frontiers for about a second (--for) and prints the latest per id;
                    an index of the history that reported nothing meanwhile is probed (peeks
                    with limit 0, canceled when they would wait) and shown as "probed"
  allow-compaction ID T
                    the replica may compact ID up to time T
  drop ID           AllowCompaction with the empty frontier; pruned from the history
  watch [--for SECONDS]
                    prints every response as it arrives, until interrupted
  run SCRIPT        sends one protocol-JSON command a line (blank lines and # comments skipped),
                    in order, and prints the responses

exit status: 0 success; 1 a command was refused, a peek failed or timed out; 64 bad usage;
69 the replica could not be reached.
Refusals are printed as "tandem-ctl: refused: WHAT: WHY".
)";

struct Globals {
  std::string endpoint = "tcp://127.0.0.1:2101";
  std::string state = "tandem-ctl.state";
  bool json = false;
  double timeout_s = 5;
};

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

int Refused(const std::string& what, const std::string& why) {
  std::cerr << "tandem-ctl: refused: " << what << ": " << why << "\n";
  return kExitFailed;
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

// An open session: connected, history replayed, InitializationComplete sent.
class Session {
 public:
  Session(Globals g, History h) : g_(std::move(g)), history_(std::move(h)) {}

  // Returns an exit code on failure.
  std::optional<int> Open() {
    client_ = std::make_unique<Client>(
        g_.endpoint, std::chrono::milliseconds(static_cast<std::int64_t>(g_.timeout_s * 1000)));
    if (Status s = client_->Connect(); !s.ok()) {
      std::cerr << "tandem-ctl: " << s.message() << "\n";
      return s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed;
    }
    for (const auto& c : history_.Replay()) {
      auto errors = client_->SendChecked(c);
      if (!errors.ok()) return Lost(errors.status());
      for (const auto& e : *errors) {
        std::cerr << "tandem-ctl: warning: replaying " << ipc::Describe(c)
                  << " from the history: refused: " << e.why() << "\n";
      }
    }
    pb::Command done;
    done.mutable_initialization_complete();
    auto errors = client_->SendChecked(done);
    if (!errors.ok()) return Lost(errors.status());
    return std::nullopt;
  }

  // Sends a new command and waits for its verdict. Accepted state-changing commands are added to
  // the history (and saved). Returns true when accepted; prints the refusals.
  Result<bool> Submit(const pb::Command& command, bool record,
                      const std::function<void(History&)>& also = {}) {
    auto errors = client_->SendChecked(command);
    if (!errors.ok()) return errors.status();
    if (!errors->empty()) {
      for (const auto& e : *errors) Refused(e.what(), e.why());
      return false;
    }
    if (record) {
      history_.Append(command);
      if (also) also(history_);
      if (command.has_allow_compaction() &&
          command.allow_compaction().frontier().elements().empty()) {
        history_.Prune();
      }
      if (Status s = history_.Save(); !s.ok()) {
        std::cerr << "tandem-ctl: warning: " << s.message() << "\n";
      }
    }
    return true;
  }

  int Lost(const Status& s) {
    std::cerr << "tandem-ctl: " << s.message() << "\n";
    return s.code() == StatusCode::kUnavailable ? kExitUnavailable : kExitFailed;
  }

  Client& client() { return *client_; }
  History& history() { return history_; }
  const Globals& globals() const { return g_; }

 private:
  Globals g_;
  History history_;
  std::unique_ptr<Client> client_;
};

// Runs `command` through a session and reports the created ids.
int SubmitCreate(Session& s, const pb::Command& command, const std::string& what,
                 const std::string& human, const std::function<void(History&)>& also = {}) {
  if (auto code = s.Open()) return *code;
  auto ok = s.Submit(command, true, also);
  if (!ok.ok()) return s.Lost(ok.status());
  if (!*ok) return kExitFailed;
  if (s.globals().json) {
    std::string ids;
    for (const auto& id : [&] {
           std::vector<std::string> v;
           const auto& d = command.create_dataflow().desc();
           for (const auto& x : d.source_imports()) v.push_back(x.id());
           for (const auto& x : d.objects_to_build()) v.push_back(x.id());
           for (const auto& x : d.index_exports()) v.push_back(x.id());
           return v;
         }()) {
      ids += (ids.empty() ? "" : ",") + JsonString(id);
    }
    std::cout << "{\"ok\":true,\"command\":" << JsonString(what) << ",\"created\":[" << ids
              << "]}\n";
  } else {
    std::cout << human << "\n";
  }
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

int CreateSource(const Globals& g, History h, const Args& a) {
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
    s.mutable_source()->mutable_log()->set_path(*log);
    auto schema = ParseSchema(a.Required("schema"));
    if (!schema.ok()) throw UsageError{schema.status().message()};
    *s.mutable_schema() = *schema;
  }
  const std::string what = "create-source " + id;
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
  if (Status st = h.Save(); !st.ok()) {
    std::cerr << "tandem-ctl: " << st.message() << "\n";
    return kExitFailed;
  }
  if (g.json) {
    std::cout << "{\"ok\":true,\"command\":" << JsonString(what)
              << ",\"pending\":" << JsonString(id) << "}\n";
  } else {
    std::cout << "source " << id << " recorded (pending: it becomes part of the dataflow of the "
              << "next create-index/create-view --on " << id << ")\n";
  }
  return kExitOk;
}

// Where --on comes from: a pending source (consumed) or a collection the history knows.
struct Input {
  std::optional<pb::SourceImport> pending;
  pb::Schema schema;
};

Input ResolveInput(const History& h, const std::string& on) {
  Input in;
  in.pending = h.PendingSource(on);
  if (in.pending) {
    in.schema = in.pending->schema();
  } else if (auto info = h.Lookup(on)) {
    in.schema = info->schema;
  }
  return in;
}

// --- create-index --------------------------------------------------------------------------

int CreateIndex(Session& s, const Args& a) {
  a.Allow({"on", "key"}, 1, 1);
  const std::string id = a.positional[0];
  const std::string on = a.Required("on");
  const std::string what = "create-index " + id;
  const Input in = ResolveInput(s.history(), on);
  auto key = ParseColumns(a.Required("key"), in.schema);
  if (!key.ok()) return Refused(what, "--key: " + key.status().message());
  pb::Command c = NewDataflow("index " + id);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (in.pending) *d->add_source_imports() = *in.pending;
  auto* x = d->add_index_exports();
  x->set_id(id);
  x->set_on(on);
  for (auto k : *key) x->add_key(k);
  return SubmitCreate(
      s, Canonical(c), what,
      "created index " + id + " on " + on + " (key " + ColumnsText(*key, in.schema) + ")",
      [&](History& h) {
        if (in.pending) h.RemovePendingSource(on);
      });
}

// --- create-view ---------------------------------------------------------------------------

int CreateView(Session& s, const Args& a) {
  a.Allow({"on", "group-by", "aggregate", "key", "index-id"}, 1, 1);
  const std::string id = a.positional[0];
  const std::string on = a.Required("on");
  const std::string what = "create-view " + id;
  const Input in = ResolveInput(s.history(), on);
  pb::Command c = NewDataflow("view " + id);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (in.pending) *d->add_source_imports() = *in.pending;
  auto* b = d->add_objects_to_build();
  b->set_id(id);
  const auto group_text = a.One("group-by");
  const auto aggregates = a.All("aggregate");
  std::vector<std::uint32_t> group;
  if (group_text) {
    auto g = ParseColumns(*group_text, in.schema);
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
      auto col = ParseColumns(text.substr(colon + 1), in.schema);
      if (!col.ok()) return Refused(what, "--aggregate " + text + ": " + col.status().message());
      if (col->size() != 1) throw UsageError{"--aggregate " + text + ": one column"};
      agg->set_column((*col)[0]);
    }
  }
  const pb::Schema view_schema = PlanSchema(b->plan(), {{on, in.schema}});
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
                        if (in.pending) h.RemovePendingSource(on);
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
// after kProbeWait is canceled, and Canceled says no. The first probe is checked for refusal.
Result<bool> Readable(Session& s, const std::string& id, std::uint64_t t, bool check,
                      std::chrono::milliseconds wait = kProbeWait) {
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(RandomHex(16));
  p->set_id(id);
  p->set_timestamp(t);
  p->mutable_finishing()->set_limit(0);
  if (check) {
    auto errors = s.client().SendChecked(c);
    if (!errors.ok()) return errors.status();
    if (!errors->empty()) return Status::InvalidArgument(errors->front().why());
  } else {
    s.client().Send(c);
  }
  bool canceled = false;
  auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      if (canceled) return Status::Unavailable("the replica did not answer a canceled peek");
      pb::Command cancel;
      cancel.mutable_cancel_peek()->set_uuid(p->uuid());
      s.client().Send(cancel);
      canceled = true;
      deadline = std::chrono::steady_clock::now() + s.client().timeout();
      continue;
    }
    auto r = s.client().Receive(left);
    if (!r || !r->has_peek_response() || r->peek_response().uuid() != p->uuid()) continue;
    return !r->peek_response().has_canceled();
  }
}

// The latest time index `id` can be read at (upper - 1), found by exponential then binary search
// with Readable.
Result<std::uint64_t> ProbeLatest(Session& s, const std::string& id) {
  auto ready = Readable(s, id, 0, true);
  if (!ready.ok()) return ready.status();
  if (!*ready) return Status::FailedPrecondition(id + " has no complete time yet");
  std::uint64_t lo = 0, hi = 1;  // lo readable; hi: to be tested, then unreadable
  for (;;) {
    if (hi >= (std::uint64_t{1} << 62)) {
      return Status::FailedPrecondition(id +
                                        " is readable at every time (its sources ended); "
                                        "give --at T");
    }
    auto r = Readable(s, id, hi, false);
    if (!r.ok()) return r.status();
    if (!*r) break;
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    auto r = Readable(s, id, mid, false);
    if (!r.ok()) return r.status();
    (*r ? lo : hi) = mid;
  }
  // A busy replica may have been slower than kProbeWait: check the next time more patiently.
  for (int i = 0; i < 3; ++i) {
    auto r = Readable(s, id, lo + 1, false, kProbeRecheck);
    if (!r.ok()) return r.status();
    if (!*r) break;
    ++lo;
  }
  return lo;
}

int Peek(Session& s, const Args& a) {
  a.Allow({"at", "key", "order-by", "limit"}, 1, 1);
  const std::string asked = a.positional[0];
  const std::string at = a.One("at").value_or("latest");
  std::optional<std::uint64_t> time;
  if (at != "latest") time = ParseU64(at, "--at");
  std::optional<std::uint64_t> limit;
  if (auto l = a.One("limit")) limit = ParseU64(*l, "--limit");
  if (auto code = s.Open()) return *code;
  const std::string id = s.history().IndexFor(asked);
  const auto info = s.history().Lookup(id);
  const pb::Schema schema = info ? info->schema : pb::Schema();
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(RandomHex(16));
  p->set_id(id);
  for (const auto& text : a.All("key")) {
    auto* row = p->add_keys();
    std::vector<std::string> parts;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
    if (parts.empty()) parts.push_back("");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const pb::Column* col = nullptr;
      if (info && i < info->key.size() && static_cast<int>(info->key[i]) < schema.columns_size()) {
        col = &schema.columns(static_cast<int>(info->key[i]));
      }
      auto datum = ParseDatum(parts[i], col);
      if (!datum.ok())
        return Refused("peek " + asked, "--key " + text + ": " + datum.status().message());
      *row->add_datums() = *datum;
    }
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
    if (!cols.ok()) return Refused("peek " + asked, "--order-by: " + cols.status().message());
    for (auto k : *cols) {
      auto* o = p->mutable_finishing()->add_order_by();
      o->set_column(k);
      o->set_desc(desc);
    }
  }
  if (limit) p->mutable_finishing()->set_limit(*limit);
  const auto timeout = s.client().timeout();
  if (!time) {
    // Latest: the freshest write frontier reported for the index, minus one. Frontiers are
    // reported as they advance, so one that has not moved since an earlier controller saw it is
    // not reported again: then find it by probing (ProbeLatest).
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
    const std::string what = "peek " + asked + " --at latest";
    if (best && !best->write().elements().empty() && best->write().elements(0) > 0) {
      time = best->write().elements(0) - 1;
    } else {
      auto probed = ProbeLatest(s, id);
      if (!probed.ok()) {
        if (probed.status().code() == StatusCode::kUnavailable) return s.Lost(probed.status());
        return Refused(what, probed.status().message());
      }
      time = *probed;
    }
  }
  p->set_timestamp(*time);
  const auto started = std::chrono::steady_clock::now();
  auto accepted = s.Submit(c, false);
  if (!accepted.ok()) return s.Lost(accepted.status());
  if (!*accepted) return kExitFailed;
  std::optional<pb::PeekResponse> answer;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!answer && !g_interrupted) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = s.client().Receive(left);
    if (!r) break;
    if (r->has_peek_response() && r->peek_response().uuid() == p->uuid()) {
      answer = r->peek_response();
    }
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const std::string what = "peek " + id + " @ " + std::to_string(*time);
  if (!answer) {
    pb::Command cancel;
    cancel.mutable_cancel_peek()->set_uuid(p->uuid());
    s.client().Send(cancel);
    return Refused(what, "no answer within " +
                             std::to_string(static_cast<int>(timeout.count() / 1000)) +
                             " s (the index may not have reached that time; canceled)");
  }
  if (answer->has_error()) return Refused(what, answer->error());
  if (answer->has_canceled()) return Refused(what, "canceled");
  const auto& rows = answer->rows().rows();
  int arity = schema.columns_size();
  for (const auto& rc : rows) arity = std::max(arity, rc.row().datums_size());
  std::vector<std::string> headers;
  for (int i = 0; i < arity; ++i) headers.push_back(ColumnName(schema, i));
  const bool count_taken = std::find(headers.begin(), headers.end(), "count") != headers.end();
  const std::string count_header = count_taken ? "#count" : "count";
  std::uint64_t total = 0;
  for (const auto& rc : rows) total += rc.count();
  if (s.globals().json) {
    std::string out = "{\"id\":" + JsonString(id) + ",\"timestamp\":" + std::to_string(*time) +
                      ",\"latency_ms\":" + std::to_string(ms) + ",\"columns\":[";
    for (std::size_t i = 0; i < headers.size(); ++i) {
      out += (i ? "," : "") + JsonString(headers[i]);
    }
    out += "],\"rows\":[";
    for (int i = 0; i < rows.size(); ++i) {
      out += i ? ",{\"row\":[" : "{\"row\":[";
      for (int j = 0; j < rows[i].row().datums_size(); ++j) {
        out += (j ? "," : "") + DatumJson(rows[i].row().datums(j));
      }
      out += "],\"count\":" + std::to_string(rows[i].count()) + "}";
    }
    std::cout << out << "]}\n";
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
              << *time << ", " << latency << " ms)\n";
  }
  return kExitOk;
}

// --- frontiers, watch, compaction, drop, run ----------------------------------------------------

int Frontiers(Session& s, const Args& a) {
  a.Allow({"for"}, 0, 1);
  const std::optional<std::string> only =
      a.positional.empty() ? std::nullopt : std::optional(a.positional[0]);
  const double seconds = a.One("for") ? ParseSeconds(*a.One("for"), "--for") : 1.0;
  if (auto code = s.Open()) return *code;
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
  // Frontiers are reported as they advance: an index of the history whose frontier has not moved
  // since an earlier controller saw it is not reported again. Find its frontier by probing.
  std::set<std::string> probed;
  for (const auto& id : s.history().LiveIds()) {
    if ((only && id != *only) || latest.count(id)) continue;
    const auto info = s.history().Lookup(id);
    if (!info || !info->is_index) continue;
    auto t = ProbeLatest(s, id);
    pb::Frontiers f;
    f.set_id(id);
    if (t.ok()) {
      for (auto* fr : {f.mutable_write(), f.mutable_input(), f.mutable_output()}) {
        fr->add_elements(*t + 1);
      }
    } else if (t.status().code() == StatusCode::kUnavailable) {
      return s.Lost(t.status());
    } else if (t.status().message().find("every time") != std::string::npos) {
      // closed: the empty frontier
    } else {
      continue;  // no complete time yet, or unknown to the replica
    }
    latest[id] = f;
    probed.insert(id);
  }
  if (s.globals().json) {
    for (const auto& [id, f] : latest) std::cout << ipc::ToJson(f) << "\n";
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

void PrintResponse(const Globals& g, const pb::Response& r) {
  if (g.json) {
    std::cout << ipc::ToJson(r) << std::endl;
    return;
  }
  std::string text;
  if (r.has_frontiers()) {
    text = "frontiers " + r.frontiers().id() + " write " + FrontierText(r.frontiers().write());
  } else if (r.has_peek_response()) {
    const auto& p = r.peek_response();
    text = "peek " + p.uuid() + ": " +
           (p.has_error() ? "error: " + p.error()
            : p.has_canceled()
                ? std::string("canceled")
                : std::to_string(p.rows().rows_size()) + " distinct rows " + ipc::ToJson(p.rows()));
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
  if (auto code = s.Open()) return *code;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(seconds.value_or(0) * 1000));
  while (!g_interrupted) {
    if (seconds && std::chrono::steady_clock::now() >= deadline) break;
    auto r = s.client().Receive(std::chrono::milliseconds(100));
    if (r) PrintResponse(s.globals(), *r);
  }
  return kExitOk;
}

int AllowCompaction(Session& s, const Args& a) {
  a.Allow({}, 2, 2);
  const std::string id = a.positional[0];
  pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier()->add_elements(
      ParseU64(a.positional[1], "allow-compaction T"));
  if (auto code = s.Open()) return *code;
  auto ok = s.Submit(Canonical(c), true);
  if (!ok.ok()) return s.Lost(ok.status());
  if (!*ok) return kExitFailed;
  if (s.globals().json) {
    std::cout << "{\"ok\":true,\"command\":\"allow-compaction\",\"id\":" << JsonString(id)
              << ",\"frontier\":" << a.positional[1] << "}\n";
  } else {
    std::cout << "allowed compaction of " << id << " up to " << a.positional[1] << "\n";
  }
  return kExitOk;
}

int Drop(const Globals& g, History h, const Args& a) {
  a.Allow({}, 1, 1);
  const std::string id = a.positional[0];
  auto done = [&] {
    if (g.json) {
      std::cout << "{\"ok\":true,\"command\":\"drop\",\"id\":" << JsonString(id) << "}\n";
    } else {
      std::cout << "dropped " << id << "\n";
    }
    return kExitOk;
  };
  if (h.PendingSource(id)) {  // never sent: forget it
    h.RemovePendingSource(id);
    if (Status st = h.Save(); !st.ok()) {
      std::cerr << "tandem-ctl: " << st.message() << "\n";
      return kExitFailed;
    }
    return done();
  }
  Session s(g, std::move(h));
  pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier();
  if (auto code = s.Open()) return *code;
  auto ok = s.Submit(Canonical(c), true);
  if (!ok.ok()) return s.Lost(ok.status());
  if (!*ok) return kExitFailed;
  return done();
}

int Run(Session& s, const Args& a) {
  a.Allow({}, 1, 1);
  const std::string file = a.positional[0];
  std::ifstream f(file);
  if (!f) throw UsageError{"cannot read " + file};
  std::vector<pb::Command> script;
  int number = 0;
  for (std::string line; std::getline(f, line);) {
    ++number;
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    auto c = ipc::CommandFromJson(line);
    if (!c.ok()) {
      throw UsageError{file + ":" + std::to_string(number) + ": " + c.status().message()};
    }
    if (c->has_hello()) {
      throw UsageError{file + ":" + std::to_string(number) + ": Hello is sent by tandem-ctl"};
    }
    script.push_back(Canonical(*c));
  }
  if (auto code = s.Open()) return *code;
  int exit = kExitOk;
  std::set<std::string> peeks;
  auto show = [&](const pb::Response& r) {
    if (r.has_peek_response()) {
      peeks.erase(r.peek_response().uuid());
      if (r.peek_response().has_error()) exit = kExitFailed;
    }
    PrintResponse(s.globals(), r);
  };
  for (const auto& c : script) {
    const bool record = c.has_create_dataflow() || c.has_allow_compaction();
    auto ok = s.Submit(c, record);
    if (!ok.ok()) return s.Lost(ok.status());
    if (!*ok) {
      exit = kExitFailed;
      continue;
    }
    if (c.has_peek()) peeks.insert(c.peek().uuid());
  }
  // Wait for the peeks' answers (bounded), then show what else arrived shortly after.
  const auto deadline = std::chrono::steady_clock::now() + s.client().timeout();
  while (!peeks.empty() && !g_interrupted) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = s.client().Receive(left);
    if (!r) break;
    show(*r);
  }
  const auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        settle - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = s.client().Receive(left);
    if (!r) break;
    show(*r);
  }
  for (const auto& uuid : peeks) {
    exit = Refused("peek " + uuid, "no answer within the timeout");
  }
  return exit;
}

int Main(int argc, char** argv) {
  Globals g;
  if (const char* e = std::getenv("TANDEM_ENDPOINT"); e && *e) g.endpoint = e;
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
  if (!history.ok()) {
    std::cerr << "tandem-ctl: " << history.status().message() << "\n";
    return kExitFailed;
  }
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  if (command == "create-source") return CreateSource(g, std::move(*history), a);
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
    std::cerr << "tandem-ctl: " << e.message << " (tandem-ctl --help for usage)\n";
    return tandem::ctl::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "tandem-ctl: " << e.what() << "\n";
    return tandem::ctl::kExitFailed;
  }
}
