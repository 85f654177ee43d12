// allow-compaction and drop: AllowCompaction of an index, up to a time or (drop) the empty
// frontier. Only indexes: anything else is refused, naming the index to use instead.
#include "tools/ctl/commands/commands.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

struct Options {
  std::string id, time;
};

int AllowCompaction(const Options& o, Session& s) {
  const std::string& id = o.id;
  const std::string what = "allow-compaction " + id;
  auto t = ParseU64(o.time, "allow-compaction T");
  if (!t.ok()) return Usage(t.status().message());
  if (*t > kMaxTime) {
    return Usage("allow-compaction T: the largest time is " + std::to_string(kMaxTime) +
                 "; to drop, use drop");
  }
  if (auto why = NotAnIndex(s.history(), id, *t)) return Refused(what, *why);
  pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier()->add_elements(*t);
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(Canonical(c), true, what);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  PrintOk(
      what, [&](JsonWriter& json) { json.Key("id").String(id).Key("frontier").UInt(*t); },
      "allowed compaction of " + id + " up to " + std::to_string(*t));
  return kExitOk;
}

int Drop(const Globals& g, History h, const std::string& id) {
  const std::string what = "drop " + id;
  auto done = [&] {
    PrintOk(
        what, [&](JsonWriter& json) { json.Key("id").String(id); }, "dropped " + id);
    return kExitOk;
  };
  if (h.PendingSource(id)) {  // never sent: forget it
    h.RemovePendingSource(id);
    if (Status st = h.Save(); !st.ok()) return Fail(kExitFailed, st.message());
    return done();
  }
  if (auto why = NotAnIndex(h, id, std::nullopt)) return Refused(what, *why);
  Session s(g, std::move(h));
  pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier();
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(Canonical(c), true, what);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  return done();
}

}  // namespace

Subcommand AddAllowCompaction(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub =
      app.add_subcommand("allow-compaction", "the replica may compact index ID up to time T");
  sub->add_option("ID", o->id, "an index")->required();
  sub->add_option("T", o->time, "a time")->required();
  return {sub, [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return AllowCompaction(*o, s);
          }};
}

Subcommand AddDrop(CLI::App& app) {
  auto id = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("drop", "drop index ID (or forget a pending source)");
  sub->footer(
      "Drops index ID (AllowCompaction with the empty frontier); its dataflow goes with its last\n"
      "index and is pruned from the history. Only indexes: for a source or a view, tandem-ctl\n"
      "names the index to drop instead.");
  sub->add_option("ID", *id, "an index, or a pending source")->required();
  return {sub, [id](const Globals& g, History h) { return Drop(g, std::move(h), *id); }};
}

}  // namespace tandem::ctl
