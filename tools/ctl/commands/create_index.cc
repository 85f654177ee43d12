// create-index: a maintained dataflow indexing a source (or any collection with an index) by
// columns: it imports an index of --on and exports one keyed by --key.
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

struct CreateIndexOptions {
  std::string id, on, key;
};

int RunCreateIndex(const CreateIndexOptions& o, Session& s) {
  const std::string& id = o.id;
  const std::string& on = o.on;
  const std::string what = "create-index " + id;
  if (!IsNew(s.history(), id, what)) return kExitFailed;
  const auto in = ResolveInput(s.history(), on, what);
  if (!in) return kExitFailed;
  auto key = ParseColumns(o.key, in->schema);
  if (!key.ok()) return Refused(what, "--key: " + key.status().message());
  pb::Command c = NewDataflow("index " + id);
  // A source (or any collection with an index) is read by importing its index: this dataflow
  // goes when ID is dropped and leaves what it reads.
  const std::string imported = AddInput(s.history(), *in, *key, c);
  auto* x = c.mutable_create_dataflow()->mutable_desc()->add_index_exports();
  x->set_id(id);
  x->set_on(in->collection);
  for (auto k : *key) x->add_key(k);
  return SubmitCreate(s, Canonical(c), what,
                      "created index " + id + " on " + in->collection + " (key " +
                          ColumnsText(*key, in->schema) + ")" +
                          (imported.empty() ? "" : ", importing " + imported),
                      [&](History& h) {
                        if (in->pending) h.RemovePendingSource(on);
                      });
}

}  // namespace

Subcommand AddCreateIndex(CLI::App& app) {
  auto o = std::make_shared<CreateIndexOptions>();
  auto* sub = app.add_subcommand("create-index", "a maintained dataflow indexing --on by --key");
  sub->footer(
      "A maintained dataflow indexing --on (a source, view or index) by COLS (comma-separated\n"
      "column names or positions). It imports an index of --on (a source's own index s<n>, or\n"
      "the one keyed by COLS if there is one) and starts where that index is readable; dropping\n"
      "ID drops only this dataflow.");
  sub->add_option("ID", o->id, "the index's id")->required();
  sub->add_option("--on", o->on, "the source (or collection, or index) to index")->required();
  sub->add_option("--key", o->key, "COLS: comma-separated column names or positions")->required();
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunCreateIndex(*o, s);
          }};
}

}  // namespace tandem::ctl
