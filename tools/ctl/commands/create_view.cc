// create-view: a maintained dataflow building a view (a Reduce, or a copy) and an index on it.
#include "ipc/validate.h"
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

struct Options {
  std::string id, on;
  std::optional<std::string> group_by, key, index_id;
  std::vector<std::string> aggregates;
};

// The view's plan into `b`: a Reduce by `group` with `o.aggregates`, or (neither) a copy of --on.
// Returns an exit code when an --aggregate is refused (1) or malformed (64).
std::optional<int> BuildPlan(const Options& o, const Input& in,
                             const std::vector<std::uint32_t>& group, pb::BuildDesc* b) {
  const std::string what = "create-view " + o.id;
  if (!o.group_by && o.aggregates.empty()) {
    auto* mfp = b->mutable_plan()->mutable_mfp();
    mfp->mutable_input()->mutable_get()->set_id(o.on);
    mfp->mutable_mfp();
    return std::nullopt;
  }
  auto* r = b->mutable_plan()->mutable_reduce();
  r->mutable_input()->mutable_get()->set_id(o.on);
  for (auto g : group) r->add_group_key(g);
  for (const auto& text : o.aggregates) {
    auto* agg = r->add_aggregates();
    const auto colon = text.find(':');
    const std::string func = text.substr(0, colon);
    if (func == "count" && colon == std::string::npos) {
      agg->set_func(pb::COUNT);
      continue;
    }
    if (colon == std::string::npos || (func != "sum" && func != "min" && func != "max")) {
      return Usage("--aggregate \"" + text + "\": expected count, sum:COL, min:COL or max:COL");
    }
    agg->set_func(func == "sum" ? pb::SUM : func == "min" ? pb::MIN : pb::MAX);
    auto col = ParseColumns(text.substr(colon + 1), in.schema);
    if (!col.ok()) return Refused(what, "--aggregate " + text + ": " + col.status().message());
    if (col->size() != 1) return Usage("--aggregate " + text + ": one column");
    agg->set_column((*col)[0]);
  }
  return std::nullopt;
}

int Run(const Options& o, Session& s) {
  const std::string& id = o.id;
  const std::string& on = o.on;
  const std::string what = "create-view " + id;
  if (!IsNew(s.history(), id, what)) return kExitFailed;
  if (o.index_id && !IsNew(s.history(), *o.index_id, what)) return kExitFailed;
  const auto in = ResolveInput(s.history(), on, what);
  if (!in) return kExitFailed;
  pb::Command c = NewDataflow("view " + id);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (in->pending) *d->add_source_imports() = *in->pending;
  auto* b = d->add_objects_to_build();
  b->set_id(id);
  std::vector<std::uint32_t> group;
  if (o.group_by) {
    auto g = ParseColumns(*o.group_by, in->schema);
    if (!g.ok()) return Refused(what, "--group-by: " + g.status().message());
    group = *g;
  }
  if (auto code = BuildPlan(o, *in, group, b)) return *code;
  const auto planned = ipc::PlanSchema(b->plan(), {{on, in->schema}});
  if (!planned.ok()) return Refused(what, planned.status().message());
  const pb::Schema& view_schema = *planned;
  std::vector<std::uint32_t> key;
  if (o.key) {
    auto parsed = ParseColumns(*o.key, view_schema);
    if (!parsed.ok()) return Refused(what, "--key: " + parsed.status().message());
    key = *parsed;
  } else {
    for (std::uint32_t i = 0; i < group.size(); ++i) key.push_back(i);
    if (key.empty()) key.push_back(0);
  }
  const std::string index_id = o.index_id.value_or(s.history().NextFreeId({id, on}));
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

}  // namespace

Subcommand AddCreateView(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand("create-view", "a maintained view on --on, with an index on it");
  sub->footer(
      "A maintained dataflow building view ID (a Reduce; without --group-by/--aggregate, a copy\n"
      "of --on) and an index on it, --index-id (default: the next free u-number), keyed by\n"
      "--key (default: the group-by columns, else the first column). `peek ID` reads that index.");
  sub->add_option("ID", o->id, "the view's id")->required();
  sub->add_option("--on", o->on, "the pending source (or collection) it reads")->required();
  AddOptional(*sub, "--group-by", &o->group_by, "COLS to group by");
  sub->add_option("--aggregate", o->aggregates, "count|sum:COL|min:COL|max:COL (repeatable)")
      ->allow_extra_args(false);
  AddOptional(*sub, "--key", &o->key, "COLS of the view the index is keyed by");
  AddOptional(*sub, "--index-id", &o->index_id, "the index's id");
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return Run(*o, s);
          }};
}

}  // namespace tandem::ctl
