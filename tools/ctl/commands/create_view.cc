// create-view: a maintained dataflow building a view (a Reduce, or a copy) and an index on it.
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

struct CreateViewOptions {
  std::string id, on;
  std::optional<std::string> index_id;
  ViewOptions view;
};

int RunCreateView(const CreateViewOptions& o, Session& s) {
  const std::string& id = o.id;
  const std::string& on = o.on;
  const std::string what = "create-view " + id;
  if (!IsNew(s.history(), id, what)) return kExitFailed;
  if (o.index_id && !IsNew(s.history(), *o.index_id, what)) return kExitFailed;
  const auto in = ResolveInput(s.history(), on, what);
  if (!in) return kExitFailed;
  View view;
  std::vector<Input> joined;
  if (auto code = BuildView(s.history(), o.view, *in, what, joined, view)) return *code;
  pb::Command c = NewDataflow("view " + id);
  // Reads --on (and each --join) through an index of it, the one keyed by the group-by columns
  // (or the join key) if there is one: a Reduce by the index key, or a join by it, uses the
  // imported arrangement in place.
  std::string imported;
  for (const auto& i : AddInputs(s.history(), *in, joined, view.import_keys, c)) {
    if (!i.empty()) imported += (imported.empty() ? "" : ", ") + i;
  }
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
                        for (const auto& j : joined) {
                          if (j.pending) h.RemovePendingSource(j.collection);
                        }
                      });
}

}  // namespace

Subcommand AddCreateView(CLI::App& app) {
  auto o = std::make_shared<CreateViewOptions>();
  auto* sub = app.add_subcommand("create-view", "a maintained view on --on, with an index on it");
  sub->footer(
      "A maintained dataflow building view ID and an index on it, --index-id (default: the next\n"
      "free u-number), keyed by --key (default: the group-by columns, else the --per columns,\n"
      "else the first column). `peek ID` reads that index. The view, in this order:\n"
      "  --join ID --join-on LEFT=RIGHT [--join-on ...] [--left]: --on joined with ID where the\n"
      "    columns are equal (a null key never matches); --left keeps every row of the left side\n"
      "    without a match once, with nulls for ID's columns. Columns: --on's, then ID's. Each\n"
      "    further --join joins that result (LEFT names its columns).\n"
      "  --group-by COLS and --aggregate(s): a Reduce (count: rows; count:COL: non-null values;\n"
      "    count-distinct:COL; sum/min/max/avg:COL; any/all:COL of a bool column).\n"
      "  --top N --by COL[:desc][:nulls-last],... [--per COLS] [--offset N]: the first N rows\n"
      "    (per group of --per) in --by order, then by the whole row, counting multiplicities.\n"
      "Without any of them, a copy of --on. Column names are resolved before connecting.\n"
      "It imports an index of --on and of each --join (the one keyed by the group-by columns or\n"
      "the join key if there is one, else a source's own index s<n>); dropping the view's index\n"
      "drops only this dataflow.");
  sub->add_option("ID", o->id, "the view's id")->required();
  sub->add_option("--on", o->on, "the source (or collection, or index) it reads")->required();
  AddViewOptions(*sub, o->view, "COLS of the view the index is keyed by");
  AddOptional(*sub, "--index-id", &o->index_id, "the index's id");
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunCreateView(*o, s);
          }};
}

}  // namespace tandem::ctl
