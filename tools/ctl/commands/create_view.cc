// create-view: a maintained dataflow building a view (a Reduce, or a copy) and an index on it.
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

struct Options {
  std::string id, on;
  std::optional<std::string> index_id;
  ViewOptions view;
};

int Run(const Options& o, Session& s) {
  const std::string& id = o.id;
  const std::string& on = o.on;
  const std::string what = "create-view " + id;
  if (!IsNew(s.history(), id, what)) return kExitFailed;
  if (o.index_id && !IsNew(s.history(), *o.index_id, what)) return kExitFailed;
  const auto in = ResolveInput(s.history(), on, what);
  if (!in) return kExitFailed;
  View view;
  if (auto code = BuildView(o.view, *in, what, view)) return *code;
  pb::Command c = NewDataflow("view " + id);
  // Reads --on through an index of it, the one keyed by the group-by columns if there is one
  // (a Reduce by the index key uses the imported arrangement).
  const std::string imported = AddInput(s.history(), *in, view.group, c);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  auto* b = d->add_objects_to_build();
  b->set_id(id);
  *b->mutable_plan() = view.plan;
  const std::string index_id = o.index_id.value_or(s.history().NextFreeId({id, on}));
  auto* x = d->add_index_exports();
  x->set_id(index_id);
  x->set_on(id);
  for (auto k : view.key) x->add_key(k);
  return SubmitCreate(s, Canonical(c), what,
                      "created view " + id + " on " + on + " with index " + index_id + " (key " +
                          ColumnsText(view.key, view.schema) + ")" +
                          (imported.empty() ? "" : ", importing " + imported),
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
      "--key (default: the group-by columns, else the first column). `peek ID` reads that index.\n"
      "It imports an index of --on (the one keyed by the group-by columns if there is one, else\n"
      "a source's own index s<n>); dropping the view's index drops only this dataflow.");
  sub->add_option("ID", o->id, "the view's id")->required();
  sub->add_option("--on", o->on, "the source (or collection, or index) it reads")->required();
  AddOptional(*sub, "--group-by", &o->view.group_by, "COLS to group by");
  sub->add_option("--aggregate", o->view.aggregates, "count|sum:COL|min:COL|max:COL (repeatable)")
      ->allow_extra_args(false);
  AddOptional(*sub, "--key", &o->view.key, "COLS of the view the index is keyed by");
  AddOptional(*sub, "--index-id", &o->index_id, "the index's id");
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return Run(*o, s);
          }};
}

}  // namespace tandem::ctl
