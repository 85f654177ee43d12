// create-source: a maintained dataflow of its own for a source, with the source's index s<n> on
// it (History::SourceIndexId), so that the source lives until it is itself dropped.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

struct Options {
  std::string id;
  std::optional<std::string> generator, log, schema;
  std::optional<std::string> keys, updates_per_tick, tick_interval_us, seed, max;
  std::optional<std::string> key;  // the source index's key; default its first column
};

// A log source's file must exist now and be a regular file we can read: a path the replica
// would wait on forever is refused here, with the reason.
Result<std::string> CheckLogFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return Status::InvalidArgument("--log " + path + ": " + ec.message());
  const auto status = fs::status(absolute, ec);
  if (!fs::exists(status)) {
    return Status::NotFound("--log " + path +
                            ": no such file (the log source tails an existing file as it grows: "
                            "create it first, even empty)");
  }
  if (!fs::is_regular_file(status)) {
    return Status::InvalidArgument("--log " + path + ": not a regular file (" +
                                   (fs::is_directory(status) ? "a directory" : "a special file") +
                                   "); the log source reads an append-only text file");
  }
  if (access(absolute.c_str(), R_OK) != 0) {
    return Status::InvalidArgument("--log " + path + ": cannot be read: " + std::strerror(errno));
  }
  return absolute.string();
}

pb::Column Int64Column(const char* name) {
  pb::Column c;
  c.set_name(name);
  c.set_type(pb::INT64);
  return c;
}

// The generator source of `o` into `s`; a usage error's message otherwise.
std::optional<std::string> GeneratorSource(const Options& o, pb::SourceImport& s) {
  std::optional<std::string> bad;
  auto u64 = [&](const std::optional<std::string>& v, const char* name, std::uint64_t def) {
    if (!v) return def;
    auto n = ParseU64(*v, std::string("--") + name);
    if (!n.ok() && !bad) bad = n.status().message();
    return n.ok() ? *n : def;
  };
  if (o.log || o.schema) return "--schema goes with --log";
  if (*o.generator == "counter") {
    if (o.keys || o.updates_per_tick || o.seed) {
      return "a counter source takes --tick-interval-us and --max";
    }
    auto* c = s.mutable_source()->mutable_counter();
    c->set_tick_interval_us(u64(o.tick_interval_us, "tick-interval-us", 100000));
    c->set_max(u64(o.max, "max", 0));
    *s.mutable_schema()->add_columns() = Int64Column("n");
  } else if (*o.generator == "key_value") {
    if (o.max) return "--max goes with a counter source";
    auto* kv = s.mutable_source()->mutable_key_value();
    kv->set_keys(u64(o.keys, "keys", 100));
    kv->set_updates_per_tick(u64(o.updates_per_tick, "updates-per-tick", 1));
    kv->set_tick_interval_us(u64(o.tick_interval_us, "tick-interval-us", 100000));
    kv->set_seed(u64(o.seed, "seed", 1));
    *s.mutable_schema()->add_columns() = Int64Column("key");
    *s.mutable_schema()->add_columns() = Int64Column("value");
  } else {
    return "unknown generator \"" + *o.generator + "\" (counter, key_value)";
  }
  return bad;
}

int Run(const Options& o, const Globals& g, History h) {
  const std::string& id = o.id;
  pb::SourceImport s;
  s.set_id(id);
  if (o.generator.has_value() == o.log.has_value()) {
    return Usage("create-source needs exactly one of --generator and --log");
  }
  const std::string what = "create-source " + id;
  if (o.generator) {
    if (auto bad = GeneratorSource(o, s)) return Usage(*bad);
  } else {
    for (const auto& [given, name] :
         {std::pair{&o.keys, "keys"}, std::pair{&o.updates_per_tick, "updates-per-tick"},
          std::pair{&o.tick_interval_us, "tick-interval-us"}, std::pair{&o.seed, "seed"},
          std::pair{&o.max, "max"}}) {
      if (*given) return Usage(std::string("--") + name + " goes with --generator");
    }
    if (!o.schema) return Usage("--schema is required");
    auto schema = ParseSchema(*o.schema);
    if (!schema.ok()) return Usage(schema.status().message());
    *s.mutable_schema() = *schema;
    auto path = CheckLogFile(*o.log);
    if (!path.ok()) return Refused(what, path.status().message());
    s.mutable_source()->mutable_log()->set_path(*path);
  }
  if (h.LiveIds().count(id)) return Refused(what, id + " already exists in " + h.path());
  const auto index_id = History::SourceIndexId(id);
  if (!index_id) {
    return Refused(what,
                   "a source's id is u<n> (e.g. u1): its index is s<n>, so it takes none "
                   "of your ids");
  }
  if (h.LiveIds().count(*index_id)) {
    return Refused(what, "the index of source " + id + " would be " + *index_id +
                             ", which already exists in " + h.path());
  }
  std::vector<std::uint32_t> key{0};
  if (o.key) {
    auto parsed = ParseColumns(*o.key, s.schema());
    if (!parsed.ok()) return Refused(what, "--key: " + parsed.status().message());
    key = *parsed;
  }
  pb::Command c = NewDataflow("source " + id);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  *d->add_source_imports() = s;
  auto* x = d->add_index_exports();
  x->set_id(*index_id);
  x->set_on(id);
  for (auto k : key) x->add_key(k);
  Session session(g, std::move(h));
  return SubmitCreate(session, Canonical(c), what,
                      "created source " + id + " with index " + *index_id + " (key " +
                          ColumnsText(key, s.schema()) + ")");
}

}  // namespace

Subcommand AddCreateSource(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "create-source",
      "a source (--generator counter|key_value, or --log PATH --schema COLS) and its index");
  sub->footer(
      "Types bool, int64, float64, string; a trailing ? makes a column nullable. Defaults:\n"
      "tick interval 100000 us, keys 100, updates per tick 1, seed 1.\n"
      "--log PATH must be an existing regular file (the replica tails it as it grows; it reads\n"
      "it on its own host, which is this one); it is recorded as an absolute path.\n"
      "The source gets a dataflow of its own with an index on it: s<n> for source u<n>, keyed\n"
      "by --key (default: the first column). `peek ID` reads that index; create-index and\n"
      "create-view --on ID import it, and dropping them leaves the source; `drop ID` drops the\n"
      "source (refused by the replica while a dataflow imports it: drop that first).");
  sub->add_option("ID", o->id, "the source's id, e.g. u1")->required();
  AddOptional(*sub, "--generator", &o->generator, "counter or key_value");
  AddOptional(*sub, "--log", &o->log, "an existing regular file the replica tails");
  AddOptional(*sub, "--schema", &o->schema, "with --log: \"name:int64,name2:string?,...\"");
  AddOptional(*sub, "--keys", &o->keys, "key_value: number of keys (100)");
  AddOptional(*sub, "--updates-per-tick", &o->updates_per_tick, "key_value: updates a tick (1)");
  AddOptional(*sub, "--tick-interval-us", &o->tick_interval_us,
              "generators: microseconds between ticks (100000)");
  AddOptional(*sub, "--seed", &o->seed, "key_value: random seed (1)");
  AddOptional(*sub, "--max", &o->max, "counter: stop after this count (0: never)");
  AddOptional(*sub, "--key", &o->key, "COLS the source's index is keyed by (its first column)");
  return {sub, [o](const Globals& g, History h) { return Run(*o, g, std::move(h)); }};
}

}  // namespace tandem::ctl
