// write: one WriteTable to a table (DESIGN §9), in a writer session (Hello{observer, writer}): no
// replay, no InitializationComplete. The table's schema and upsert key come from the state file.
// With several replicas it goes to every one that is up, and each answers with its own time.
// Either way the answers are recorded per replica beside the state file (Session::NoteWrites),
// so that reads through several replicas see the write (controller/write_ledger.h).
#include <algorithm>
#include <charconv>
#include <cstdint>

#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

// The largest uuid the replica takes (WriteTable.uuid).
constexpr std::size_t kMaxUuidBytes = 128;

struct Update {
  enum class Kind { kRow, kUpsert, kDelete } kind;
  std::string text;
  std::optional<std::string> diff;  // --diff after a --row
};

struct WriteOptions {
  std::string id;
  std::vector<Update> updates;  // in command-line order: of two for one key, the later wins
  std::optional<std::string> misplaced;  // the first --diff that follows no --row (or a second)
  std::optional<std::string> uuid;
};

const char* FlagOf(Update::Kind kind) {
  switch (kind) {
    case Update::Kind::kRow:
      return "--row";
    case Update::Kind::kUpsert:
      return "--upsert";
    case Update::Kind::kDelete:
      return "--delete";
  }
  return "";
}

// What a source that is not a table is, for the refusal.
std::string SourceKind(const pb::Source& source) {
  switch (source.kind_case()) {
    case pb::Source::kCounter:
    case pb::Source::kKeyValue:
      return "a generator source";
    case pb::Source::kLog:
      return "a log source";
    case pb::Source::kCsv:
      return "a CSV source";
    case pb::Source::kJsonLines:
      return "a JSON-lines source";
    case pb::Source::kTable:
      return "a table";
    case pb::Source::KIND_NOT_SET:
      break;
  }
  return "a source of a kind this tandem-ctl does not know";
}

// Why `id` is no table of the history (nullopt: it is one, in `table`).
std::optional<std::string> NotATable(const History& h, const std::string& id,
                                     pb::SourceImport& table) {
  if (auto s = h.LiveSource(id)) {
    if (s->source().has_table()) {
      table = *s;
      return std::nullopt;
    }
    return id + " is not a table (it is " + SourceKind(s->source()) +
           "): only a table (create-source --table) is written";
  }
  switch (h.KindOf(id).kind) {
    case History::IdKind::kIndex:
      return id + " is not a table (it is an index): write to the table itself";
    case History::IdKind::kView:
      return id + " is not a table (it is a view)";
    case History::IdKind::kPendingSource:
      return id + " is not a table (it is a pending source)";
    case History::IdKind::kSource:
    case History::IdKind::kUnknown:
      break;
  }
  return id + " is not a table this controller created (state file " + h.path() +
         "); create it first, e.g. create-source " + id + " --table --schema \"k:int64,v:string\"";
}

std::string Names(const std::vector<const pb::Column*>& columns) {
  std::string out;
  for (const auto* c : columns) out += (out.empty() ? "" : ", ") + c->name();
  return out;
}

// `text`, comma-separated datums, typed by `columns` (`of`: whose columns, for the message).
Result<pb::Row> ParseRow(const std::string& text, const std::vector<const pb::Column*>& columns,
                         const std::string& of) {
  auto parts = SplitDatumList(text);
  if (!parts.ok()) return parts.status();
  if (parts->size() != columns.size()) {
    return Status::InvalidArgument(
        std::to_string(parts->size()) + (parts->size() == 1 ? " datum" : " datums") + ", but " +
        of + " has " + std::to_string(columns.size()) +
        (columns.size() == 1 ? " column" : " columns") + " (" + Names(columns) +
        "): give one datum per column, comma-separated");
  }
  pb::Row row;
  for (std::size_t i = 0; i < parts->size(); ++i) {
    auto d = ParseDatum((*parts)[i], columns[i]);
    if (!d.ok()) return d.status();
    *row.add_datums() = std::move(*d);
  }
  return row;
}

Result<std::int64_t> ParseDiff(const std::string& text) {
  std::int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v == 0) {
    return Status::InvalidArgument("--diff " + text +
                                   ": a diff is a non-zero integer (how many copies of the row "
                                   "to add, or with a minus sign to remove)");
  }
  return v;
}

// The WriteTable of `o` to `table` into `w`; an exit code when the command line is refused.
std::optional<int> BuildWrite(const WriteOptions& o, const pb::SourceImport& table,
                              const std::string& what, pb::WriteTable& w) {
  const pb::Schema& schema = table.schema();
  std::vector<const pb::Column*> row_columns, key_columns;
  for (const auto& c : schema.columns()) row_columns.push_back(&c);
  for (auto k : table.upsert_key()) {
    if (static_cast<int>(k) >= schema.columns_size()) {
      return Refused(what, "the state file's upsert key of " + o.id + " is out of range");
    }
    key_columns.push_back(&schema.columns(static_cast<int>(k)));
  }
  const bool upsert = !key_columns.empty();
  for (const Update& u : o.updates) {
    const std::string flag = std::string(FlagOf(u.kind)) + " " + u.text;
    if (!upsert && u.kind != Update::Kind::kRow) {
      return Refused(what, flag + ": " + o.id +
                               " has no upsert key: write rows with diffs, --row DATUMS "
                               "[--diff N]");
    }
    if (upsert && u.kind == Update::Kind::kRow) {
      return Refused(what, flag + ": " + o.id + " is an upsert table (upsert key " +
                               Names(key_columns) +
                               "): write --upsert ROW (replaces the row with its key) or --delete "
                               "KEY");
    }
    const bool is_delete = u.kind == Update::Kind::kDelete;
    auto row = ParseRow(u.text, is_delete ? key_columns : row_columns,
                        is_delete ? o.id + "'s upsert key" : o.id);
    if (!row.ok()) return Refused(what, flag + ": " + row.status().message());
    auto* update = w.add_updates();
    switch (u.kind) {
      case Update::Kind::kRow: {
        auto diff = ParseDiff(u.diff.value_or("1"));
        if (!diff.ok()) return Usage(diff.status().message());
        *update->mutable_update()->mutable_row() = std::move(*row);
        update->mutable_update()->set_diff(*diff);
        break;
      }
      case Update::Kind::kUpsert:
        *update->mutable_upsert() = std::move(*row);
        break;
      case Update::Kind::kDelete:
        *update->mutable_delete_() = std::move(*row);
        break;
    }
  }
  return std::nullopt;
}

// The write through several replicas: every replica that is up is sent it, and answers it at its
// own time. It is printed as written at the latest of those times (a peek at it or later sees
// the write on each of them) and recorded per replica; a replica that was not sent it or did not
// answer is warned about with the retry, and reads of the table leave it out until it has the
// write. A refusal by any replica exits 1, naming where the write was applied.
int RunSetWrite(const WriteOptions& o, Session& s, const pb::WriteTable& w,
                const std::string& what) {
  const std::string& uuid = w.uuid();
  const auto timeout = s.timeout();
  AnsweredWrite intent;
  intent.uuid = uuid;
  s.NoteWrites(o.id, {intent});  // before it is sent: missing everywhere
  auto sent = s.WriteToSet(w, std::chrono::steady_clock::now() + timeout);
  if (!sent.ok()) return s.Ended(sent.status());
  const ReplicaSet::WriteResult& result = *sent;
  std::vector<std::pair<std::size_t, std::uint64_t>> times;  // replica → its time
  std::vector<std::string> failed, unsure;  // not applied there; maybe not applied there
  for (const auto& [i, response] : result.answers) {
    if (response.result_case() == pb::WriteResponse::kTime) {
      times.emplace_back(i, response.time());
    } else {
      failed.push_back(s.DescribeReplica(i) + ": not applied: " + response.error() +
                       s.ExplainUnknown(response.error(), i));
    }
  }
  for (const auto& [i, e] : result.refused) {
    failed.push_back(s.DescribeReplica(i) + ": " + ReplicaRefusal(e) +
                     s.ExplainUnknown(e.why(), i));
  }
  for (std::size_t i : result.unanswered) {
    unsure.push_back(s.DescribeReplica(i) + " did not answer within " +
                     std::to_string(static_cast<int>(timeout.count() / 1000)) +
                     " s (or went away): the write may or may not have been applied there");
  }
  for (std::size_t i : result.not_sent) {
    const auto st = s.set().status(i);
    unsure.push_back(s.DescribeReplica(i) + " is " + ReplicaSet::StateName(st.state) +
                     (st.last_error.empty() ? "" : " (" + st.last_error + ")") +
                     ": the write was not sent to it");
  }
  // Whenever a replica may have applied it, the others stay recorded as missing it; applied
  // nowhere, no replica misses it.
  s.NoteWrites(o.id, {controller::AnsweredBy(s.set(), result)});
  const std::string retry = "retry it with --uuid " + uuid +
                            " (a write is applied once per uuid; where it was, the "
                            "retry is answered with its first time)";
  std::string applied;
  for (const auto& [i, t] : times) {
    applied += (applied.empty() ? "" : ", ") + std::string("replica ") + std::to_string(i) +
               " at " + std::to_string(t);
  }
  if (!failed.empty()) {
    for (const auto& f : failed) Refused(what, f);
    if (times.empty()) return kExitFailed;
    return Fail(kExitFailed,
                what + ": applied on " + applied + " only; once the others can take it, " + retry);
  }
  if (times.empty()) {
    for (const auto& u : unsure) Warn(what + ": " + u);
    if (s.over()) {
      Warn(what + ": " + retry);
      return s.Ended(Status::Ok());
    }
    if (Interrupted()) return Fail(kExitFailed, what + ": interrupted before the answer; " + retry);
    return Fail(kExitFailed, what + ": no replica answered within " +
                                 std::to_string(static_cast<int>(timeout.count() / 1000)) + " s; " +
                                 retry);
  }
  for (const auto& u : unsure) {
    Warn(what + ": " + u + "; peeks through several replicas leave it out for " + o.id +
         " until it has the write: " + retry);
  }
  const std::uint64_t time =
      std::max_element(times.begin(), times.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->second;
  PrintOk(
      what,
      [&](JsonWriter& json) {
        json.Key("id").String(o.id).Key("uuid").String(uuid).Key("time").UInt(time);
        json.Key("updates").UInt(static_cast<std::uint64_t>(w.updates_size()));
        json.Key("replicas").BeginArray();
        for (const auto& [i, t] : times) {
          json.BeginObject().Key("replica").UInt(i);
          json.Key("endpoint").String(s.set().status(i).endpoint).Key("time").UInt(t).EndObject();
        }
        json.EndArray().Key("missing").BeginArray();
        for (std::size_t i : result.unanswered) json.UInt(i);
        for (std::size_t i : result.not_sent) json.UInt(i);
        json.EndArray();
      },
      "written at " + std::to_string(time) + " (" + applied + ")");
  return kExitOk;
}

int RunWrite(const WriteOptions& o, Session& s) {
  const std::string what = "write " + o.id;
  if (o.misplaced) return Usage(*o.misplaced + ": --diff follows the --row it belongs to, once");
  if (o.updates.empty()) {
    return Usage("write needs at least one --row, --upsert or --delete");
  }
  const std::string uuid = o.uuid.value_or(RandomHex(16));
  if (uuid.empty() || uuid.size() > kMaxUuidBytes) {
    return Usage("--uuid: 1 to " + std::to_string(kMaxUuidBytes) + " bytes");
  }
  pb::SourceImport table;
  if (auto why = NotATable(s.history(), o.id, table)) return Refused(what, *why);
  pb::Command c;
  auto* w = c.mutable_write_table();
  w->set_uuid(uuid);
  w->set_id(o.id);
  if (auto code = BuildWrite(o, table, what, *w)) return *code;
  if (auto code = s.Open(Session::Mode::kWrite)) return *code;
  if (s.multi()) return RunSetWrite(o, s, *w, what);
  const auto timeout = s.timeout();
  AnsweredWrite noted;
  noted.uuid = uuid;
  s.NoteWrites(o.id, {noted});  // before it is sent: missing everywhere until answered
  const auto a = s.Write(c, std::chrono::steady_clock::now() + timeout);
  if (a.refused || (a.response && a.response->result_case() != pb::WriteResponse::kTime)) {
    noted.applied_nowhere = true;
    s.NoteWrites(o.id, {noted});
  }
  if (a.refused) return Refused(what, s.Refusal(*a.refused));
  const std::string retry = "the write may or may not have been applied: retry it with --uuid " +
                            uuid + " (a write is applied once per uuid)";
  if (!a.response) {
    // Maybe applied: it stays recorded as missing everywhere.
    if (s.over()) {
      Warn(what + ": " + retry);
      return s.Ended(Status::Ok());
    }
    if (Interrupted()) return Fail(kExitFailed, what + ": interrupted before the answer; " + retry);
    return Fail(kExitFailed, what + ": no answer within " +
                                 std::to_string(static_cast<int>(timeout.count() / 1000)) + " s; " +
                                 retry);
  }
  if (a.response->result_case() != pb::WriteResponse::kTime) {
    return Refused(what,
                   "not applied: " + a.response->error() + s.ExplainUnknown(a.response->error()));
  }
  const std::uint64_t time = a.response->time();
  noted.acknowledged[s.globals().endpoint] = time;
  s.NoteWrites(o.id, {noted});
  PrintOk(
      what,
      [&](JsonWriter& json) {
        json.Key("id").String(o.id).Key("uuid").String(uuid).Key("time").UInt(time);
        json.Key("updates").UInt(static_cast<std::uint64_t>(w->updates_size()));
      },
      "written at " + std::to_string(time));
  return kExitOk;
}

}  // namespace

Subcommand AddWrite(CLI::App& app) {
  auto o = std::make_shared<WriteOptions>();
  auto* sub = app.add_subcommand("write", "write rows to table ID, durably, in one WriteTable");
  sub->footer(
      "One WriteTable of every --row, --upsert and --delete, in command-line order, sent in a\n"
      "writer session (Hello{observer, writer}: no replay); the table's schema and upsert key\n"
      "come from the state file. A table without an upsert key takes --row DATUMS [--diff N]\n"
      "(N copies of the row added, or removed with -N; default 1); an upsert table takes\n"
      "--upsert ROW (replaces the row with its key) and --delete KEY (its upsert key columns,\n"
      "in upsert-key order). Datums as --key's: comma-separated, null, true, 12, 1.5, \"text\".\n"
      "Prints `written at T` once the write is durable: a peek at T (or later) sees it.\n"
      "With --endpoint A,B it goes to every replica that is up, each answering with its own\n"
      "time: T is the latest of them. Every replica's time is recorded beside the state file\n"
      "(STATE.writes), and peeks through several replicas read the table only from replicas\n"
      "that acknowledged every write, each from its own time of them on.\n"
      "--uuid U names the write: a write retried with the uuid of one applied before is not\n"
      "applied again (default: a random uuid, printed when the answer does not come).");
  sub->add_option("ID", o->id, "the table, e.g. u1")->required();
  WriteOptions* opts = o.get();
  auto add = [&](const char* name, Update::Kind kind, const char* help) {
    sub->add_option_function<std::string>(
           name,
           [opts, kind](const std::string& text) {
             opts->updates.push_back({kind, text, {}});
           },
           help)
        ->trigger_on_parse();
  };
  add("--row", Update::Kind::kRow, "DATUMS: a row of a table without an upsert key (repeatable)");
  sub->add_option_function<std::string>(
         "--diff",
         [opts](const std::string& n) {
           if (opts->updates.empty() || opts->updates.back().kind != Update::Kind::kRow ||
               opts->updates.back().diff) {
             if (!opts->misplaced) opts->misplaced = "--diff " + n;
             return;
           }
           opts->updates.back().diff = n;
         },
         "N: the diff of the --row before it (default 1)")
      ->trigger_on_parse();
  add("--upsert", Update::Kind::kUpsert, "ROW: a whole row of an upsert table (repeatable)");
  add("--delete", Update::Kind::kDelete, "KEY: the upsert key of a row to delete (repeatable)");
  AddOptional(*sub, "--uuid", &o->uuid, "U: the write's idempotency key (default: random)");
  return {sub,
          [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunWrite(*o, s);
          },
          History::Access::kRead};
}

}  // namespace tandem::ctl
