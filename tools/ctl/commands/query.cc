// query: a one-shot read (DESIGN §8, controller/one_shot.h) in one call: a view over an index at
// one time, computed by the replica (the interactive runtime; in solo mode the solo runtime) and
// printed like `peek`. One controller session (the history is replayed first, as for every
// command that changes the replica; the query itself is never recorded): the one-shot
// CreateDataflow, a Peek of its result, and the result's drop on every path once the create was
// accepted.
#include <chrono>
#include <utility>

#include "controller/one_shot.h"
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

struct QueryOptions {
  std::string on;
  std::optional<std::string> at;
  ViewOptions view;
};

int RunQuery(const QueryOptions& o, Session& s) {
  const std::string what = "query --on " + o.on;
  std::optional<std::uint64_t> time;
  if (o.at && *o.at != "latest") {
    auto t = ParseU64(*o.at, "--at");
    if (!t.ok()) return Usage(t.status().message());
    if (*t >= kMaxTime) {
      return Usage("--at " + *o.at + ": the largest time a query reads at is " +
                   std::to_string(kMaxTime - 1) + " (its dataflow spans [T, T + 1))");
    }
    time = *t;
  }
  const auto in = ResolveInput(s.history(), o.on, what);
  if (!in) return kExitFailed;
  if (in->pending) {
    return Refused(what, o.on +
                             " is a pending source (nothing on the replica yet): index it "
                             "first (create-index ID --on " +
                             o.on + " --key COLS)");
  }
  View view;
  std::vector<Input> joined;
  if (auto code = BuildView(s.history(), o.view, *in, what, joined, view)) return *code;
  for (const auto& j : joined) {
    if (j.pending) {
      return Refused(what, j.collection +
                               " is a pending source (nothing on the replica yet): index it "
                               "first (create-index ID --on " +
                               j.collection + " --key COLS)");
    }
  }
  // An index of --on and of each --join (each once), the ones keyed as the view reads them.
  std::vector<pb::IndexImport> imports = {in->ImportFor(view.import_keys.at(0))};
  for (std::size_t i = 0; i < joined.size(); ++i) {
    const pb::IndexImport& import = joined[i].ImportFor(view.import_keys.at(i + 1));
    bool seen = false;
    for (const auto& other : imports) seen = seen || other.id() == import.id();
    if (!seen) imports.push_back(import);
  }
  const pb::IndexImport& import = imports.front();
  const auto [result, build] = controller::TransientIds();

  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  const auto timeout = s.client().timeout();
  Latest at{time.value_or(0), false};
  if (!time) {
    // The latest time every import is complete at.
    std::vector<std::string> ids;
    for (const auto& i : imports) ids.push_back(i.id());
    const auto wait_until = std::chrono::steady_clock::now() + timeout;
    if (auto code = LatestTime(s, ids, what, at, wait_until)) return *code;
    // A closed index's contents are final at every time from its since on; the one-shot spans
    // [at, at + 1), and at + 1 must be a time.
    if (at.closed) at.time = kMaxTime - 1;
  }
  const std::string at_what = what + " @ " + std::to_string(at.time);

  const auto started = std::chrono::steady_clock::now();
  auto created = s.Submit(controller::OneShotRead("query on " + o.on, at.time, imports, view.plan,
                                                  view.key, result, build),
                          /*record=*/false, at_what);
  if (!created.ok()) return s.Ended(created.status());
  if (!*created) return kExitFailed;
  const controller::DropOnExit drop(s.core(), result);

  pb::Command peek;
  auto* p = peek.mutable_peek();
  p->set_uuid(RandomHex(16));
  p->set_id(result);
  p->set_timestamp(at.time);
  auto sent = s.SendPeek(peek);
  if (!sent.ok()) return s.Ended(sent.status());
  if (*sent) return Refused(at_what, ReplicaRefusal(**sent));
  const auto w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + timeout);
  if (w.refused) return Refused(at_what, ReplicaRefusal(*w.refused));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!w.answer) {
    if (s.over()) return s.Ended(Status::Ok());
    pb::Command cancel;
    cancel.mutable_cancel_peek()->set_uuid(p->uuid());
    s.client().Send(cancel);
    if (Interrupted()) return Refused(at_what, "interrupted (canceled)");
    return Refused(at_what, "no answer within " +
                                std::to_string(static_cast<int>(timeout.count() / 1000)) + " s (" +
                                import.id() + " may not have reached that time; canceled)");
  }
  if (w.answer->has_error()) return Refused(at_what, w.answer->error());
  if (w.answer->has_canceled()) return Refused(at_what, "canceled");
  PrintRows(
      result, view.schema, at.time, at.closed, ms, *w.answer, "a query on " + o.on,
      [&](JsonWriter& json) { json.Key("on").String(o.on).Key("import").String(import.id()); });
  return kExitOk;
}

}  // namespace

Subcommand AddQuery(CLI::App& app) {
  auto o = std::make_shared<QueryOptions>();
  auto* sub = app.add_subcommand(
      "query", "a one-shot read: a view over --on at one time, computed and printed like peek");
  sub->footer(
      "Computes the view create-view would maintain (joins by --join/--join-on/--left, a Reduce\n"
      "by --group-by with the --aggregate(s), a TopK by --top/--by/--per/--offset; without them,\n"
      "a copy of --on: see create-view --help) once, at time --at, and prints its rows like\n"
      "peek. latest (the default): the newest time complete in every index it imports (its write\n"
      "frontier - 1, waited for up to --timeout while it has none). One controller session: the\n"
      "history is replayed, then a ONE_SHOT_READ dataflow (as_of T, until T + 1, importing an\n"
      "index of --on and of each --join, exporting a fresh transient index t<n>) is created,\n"
      "peeked at T and dropped (also when the peek fails). Nothing is recorded in the state file.\n"
      "A time an index was compacted past is refused by the replica (its answer is printed,\n"
      "exit 1).");
  sub->add_option("--on", o->on, "the source, collection or index to read")->required();
  AddOptional(*sub, "--at", &o->at, "T|latest (default latest)");
  AddViewOptions(*sub, o->view, "COLS of the result its transient index is keyed by");
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunQuery(*o, s);
          }};
}

}  // namespace tandem::ctl
