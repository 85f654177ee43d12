// allow-compaction and drop: AllowCompaction of an index, up to a time or (drop) the empty
// frontier, as the compaction policy allows (controller/compaction.h): only indexes, and
// sources, which stand for their own index (s<n> of u<n>); anything else is refused, naming the
// index to use instead.
#include "tools/ctl/commands/commands.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

struct CompactionOptions {
  std::string id, time;
};

// " (the index of source u1)" when `index` stands for source `id`.
std::string Standing(const std::string& id, const std::string& index) {
  return index == id ? "" : " (the index of source " + id + ")";
}

int AllowCompaction(const CompactionOptions& o, Session& s) {
  const std::string& id = o.id;
  const std::string what = "allow-compaction " + id;
  auto t = ParseU64(o.time, "allow-compaction T");
  if (!t.ok()) return Usage(t.status().message());
  if (*t > kMaxTime) {
    return Usage("allow-compaction T: the largest time is " + std::to_string(kMaxTime) +
                 "; to drop, use drop");
  }
  const std::string index = controller::CompactionTarget(s.history(), id);
  if (auto why = NotAnIndex(s.history(), index, *t)) return Refused(what, *why);
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(controller::AllowCompaction(index, *t), true, what);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  PrintOk(
      what, [&](JsonWriter& json) { json.Key("id").String(index).Key("frontier").UInt(*t); },
      "allowed compaction of " + index + Standing(id, index) + " up to " + std::to_string(*t));
  return kExitOk;
}

int Drop(const Globals& g, History h, const std::string& id) {
  const std::string what = "drop " + id;
  const std::string index = controller::CompactionTarget(h, id);
  auto done = [&] {
    PrintOk(
        what, [&](JsonWriter& json) { json.Key("id").String(index); },
        "dropped " + (index == id ? id : "source " + id + " (its index " + index + ")"));
    return kExitOk;
  };
  if (h.PendingSource(id)) {  // never sent: forget it
    h.RemovePendingSource(id);
    if (Status st = h.Save(); !st.ok()) return Fail(kExitFailed, st.message());
    return done();
  }
  if (auto why = NotAnIndex(h, index, std::nullopt)) return Refused(what, *why);
  Session s(g, std::move(h));
  // The supervisor refuses to drop an index that a live dataflow imports, naming the importer.
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(controller::Drop(index), true, what);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  return done();
}

}  // namespace

Subcommand AddAllowCompaction(CLI::App& app) {
  auto o = std::make_shared<CompactionOptions>();
  auto* sub =
      app.add_subcommand("allow-compaction", "the replica may compact index ID up to time T");
  sub->footer("Source u<n> stands for its index s<n>.");
  sub->add_option("ID", o->id, "an index, or a source")->required();
  sub->add_option("T", o->time, "a time")->required();
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return AllowCompaction(*o, s);
          }};
}

Subcommand AddDrop(CLI::App& app) {
  auto id = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("drop", "drop index ID, or source ID");
  sub->footer(
      "Drops index ID (AllowCompaction with the empty frontier); its dataflow goes with its last\n"
      "index and is pruned from the history. Source u<n> stands for its index s<n>: dropping it\n"
      "drops the source's dataflow, which the replica refuses while another dataflow imports it\n"
      "(drop that one first). For a view, tandem-ctl names the index to drop instead. A pending\n"
      "source of an old state file is forgotten.");
  sub->add_option("ID", *id, "an index or a source")->required();
  return {sub, [id](const Globals& g, History h) { return Drop(g, std::move(h), *id); }};
}

}  // namespace tandem::ctl
