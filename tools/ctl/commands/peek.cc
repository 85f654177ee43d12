// peek: reads an index at a time, in an observer session.
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

struct PeekOptions {
  std::string id;
  std::optional<std::string> at, order_by, limit;
  std::vector<std::string> keys;
};

// The Peek for `o` (all but its timestamp) into `c`; an exit code when the command line is bad.
std::optional<int> BuildPeek(const PeekOptions& o, const std::string& id,
                             const std::optional<CollectionInfo>& info, pb::Command& c) {
  const std::string what = "peek " + o.id;
  const pb::Schema schema = info ? info->schema : pb::Schema();
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
  for (const auto& text : o.keys) {
    auto row = ParseKey(text, key_columns);
    if (!row.ok()) return Refused(what, "--key " + text + ": " + row.status().message());
    *p->add_keys() = std::move(*row);
  }
  if (o.order_by) {
    std::string col = *o.order_by;
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
      auto* ob = p->mutable_finishing()->add_order_by();
      ob->set_column(k);
      ob->set_desc(desc);
    }
  }
  return std::nullopt;
}

int RunPeek(const PeekOptions& o, Session& s) {
  std::optional<std::uint64_t> time;
  if (o.at && *o.at != "latest") {
    auto t = ParseU64(*o.at, "--at");
    if (!t.ok()) return Usage(t.status().message());
    time = *t;
  }
  if (time && *time > kMaxTime) {
    return Usage("--at " + *o.at + ": the largest time is " + std::to_string(kMaxTime) +
                 " (UINT64_MAX is reserved for the empty frontier)");
  }
  std::optional<std::uint64_t> limit;
  if (o.limit) {
    auto l = ParseU64(*o.limit, "--limit");
    if (!l.ok()) return Usage(l.status().message());
    limit = *l;
  }
  const std::string id = s.history().IndexFor(o.id);
  const std::string what = "peek " + o.id;
  const auto info = s.history().Lookup(id);
  pb::Command c;
  if (auto code = BuildPeek(o, id, info, c)) return *code;
  auto* p = c.mutable_peek();
  if (limit) p->mutable_finishing()->set_limit(*limit);
  if (auto code = s.Open(Session::Mode::kObserve)) return *code;
  if (auto code = s.ReadOwnWrites(id, what)) return *code;
  const auto timeout = s.timeout();
  Latest at{time.value_or(0), false};
  if (!time) {
    if (auto code = LatestTime(s, id, what, at)) return *code;
  }
  p->set_timestamp(at.time);
  const auto started = std::chrono::steady_clock::now();
  auto sent = s.SendPeek(c, time ? ReadAt::kExactly : ReadAt::kLatest);
  if (!sent.ok()) return s.Ended(sent.status());
  if (*sent) return Refused(what, s.Refusal(**sent));
  const auto w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + timeout);
  if (w.refused) return Refused(what, s.Refusal(*w.refused));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  // With several replicas and no --at, the answering replica's time: it was asked from the latest
  // time it acknowledged a write of this state file at, if that is later.
  if (w.answer) at.time = s.last_peek_time();
  const std::string at_what = what + " @ " + std::to_string(at.time);
  if (!w.answer) {
    if (s.over()) return s.Ended(Status::Ok());
    s.CancelPeek(p->uuid());
    return Refused(
        at_what, "no answer within " + std::to_string(static_cast<int>(timeout.count() / 1000)) +
                     " s (the index may not have reached that time" +
                     (s.reads_restricted() ? ", or the replicas that have this state file's writes "
                                             "to its tables are down"
                                           : "") +
                     "; canceled)");
  }
  if (w.answer->has_error()) return Refused(at_what, w.answer->error());
  if (w.answer->has_canceled()) return Refused(at_what, "canceled");
  if (s.multi()) {
    // The first answer of several replicas: say whose it was.
    const std::size_t r = s.last_peek_replica();
    const std::string endpoint = s.set().status(r).endpoint;
    PrintRows(id, info ? info->schema : pb::Schema(), at.time, at.closed, ms, *w.answer,
              id + " from replica " + std::to_string(r), [&](tools::JsonWriter& json) {
                json.Key("replica").UInt(r).Key("endpoint").String(endpoint);
              });
    return kExitOk;
  }
  PrintRows(id, info ? info->schema : pb::Schema(), at.time, at.closed, ms, *w.answer, id);
  return kExitOk;
}

}  // namespace

Subcommand AddPeek(CLI::App& app) {
  auto o = std::make_shared<PeekOptions>();
  auto* sub = app.add_subcommand("peek", "read index ID (or the index on collection ID) at a time");
  sub->footer(
      "Reads index ID (or the index on collection ID) at time T. latest (the default): the\n"
      "newest complete time, write frontier - 1; for a closed index (its sources ended: the\n"
      "empty frontier) its final contents, read at 18446744073709551614, the largest time.\n"
      "The frontier is taken from the replica's report (300 ms), else found by probing (peeks\n"
      "with limit 0, canceled when they would wait).\n"
      "Through several replicas (--endpoint A,B), an index over tables this state file wrote\n"
      "is read only from the replicas that acknowledged every such write, each at the latest\n"
      "time it acknowledged one at if that is later (or, with --at T, preferably from those\n"
      "whose is not after T): a read after your write sees it, whichever replica answers.\n"
      "--key looks up one key, in the datum syntax of log files: null, true, false, 12, 1.5,\n"
      "\"text\" (quoted; \\\" \\\\ \\n \\t escapes); a multi-column key is comma-separated datums "
      "(a\n"
      "comma inside quotes belongs to the string): --key '7,\"a, b\"'. Tables print datums the\n"
      "same way.");
  sub->add_option("ID", o->id, "an index, or a collection with an index")->required();
  AddOptional(*sub, "--at", &o->at, "T|latest (default latest)");
  sub->add_option("--key", o->keys, "DATUMS: one key to look up (repeatable)")
      ->allow_extra_args(false);
  AddOptional(*sub, "--order-by", &o->order_by, "COL[:desc]");
  AddOptional(*sub, "--limit", &o->limit, "at most N rows");
  return {sub,
          [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunPeek(*o, s);
          },
          History::Access::kRead};
}

}  // namespace tandem::ctl
