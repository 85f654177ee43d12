// create-index: a maintained dataflow indexing a pending source (or a collection) by columns.
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

struct Options {
  std::string id, on, key;
};

int Run(const Options& o, Session& s) {
  const std::string& id = o.id;
  const std::string& on = o.on;
  const std::string what = "create-index " + id;
  if (!IsNew(s.history(), id, what)) return kExitFailed;
  const auto in = ResolveInput(s.history(), on, what);
  if (!in) return kExitFailed;
  auto key = ParseColumns(o.key, in->schema);
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

}  // namespace

Subcommand AddCreateIndex(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand("create-index", "a maintained dataflow indexing --on by --key");
  sub->footer(
      "A maintained dataflow from as_of 0: the pending source --on, indexed by COLS\n"
      "(comma-separated column names or positions).");
  sub->add_option("ID", o->id, "the index's id")->required();
  sub->add_option("--on", o->on, "the pending source (or collection) to index")->required();
  sub->add_option("--key", o->key, "COLS: comma-separated column names or positions")->required();
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return Run(*o, s);
          }};
}

}  // namespace tandem::ctl
