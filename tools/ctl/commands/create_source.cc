// create-source: checks a source and records it as PENDING in the state file; sends nothing.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ipc/validate.h"
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

struct Options {
  std::string id;
  std::optional<std::string> generator, log, schema;
  std::optional<std::string> keys, updates_per_tick, tick_interval_us, seed, max;
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

// Checks the pending source `c` as the supervisor will, against the history: same validator. A
// source alone is no dataflow the supervisor accepts (it must export an index): probe it with the
// index the next create-index --on it will add.
Status Validate(const History& h, const pb::Command& c, const std::string& id) {
  ipc::Validator v;
  pb::Command hello;
  hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
  hello.mutable_hello()->set_nonce("local");
  (void)v.Validate(hello);
  for (const auto& r : h.Replay()) (void)v.Validate(r);
  pb::Command probe = c;
  probe.mutable_create_dataflow()->mutable_desc()->set_debug_name("probe");
  auto* index = probe.mutable_create_dataflow()->mutable_desc()->add_index_exports();
  index->set_id(h.NextFreeId({id}));
  index->set_on(id);
  index->add_key(0);
  return v.Validate(probe);
}

int Run(const Options& o, History h) {
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
  pb::Command c = NewDataflow(kPendingSource);
  *c.mutable_create_dataflow()->mutable_desc()->add_source_imports() = s;
  c = Canonical(c);
  if (Status st = Validate(h, c, id); !st.ok()) return Refused(what, st.message());
  h.Append(c);
  if (Status st = h.Save(); !st.ok()) return Fail(kExitFailed, st.message());
  PrintOk(
      what, [&](JsonWriter& json) { json.Key("pending").String(id); },
      "source " + id + " recorded (pending: it becomes part of the dataflow of the next " +
          "create-index/create-view --on " + id + ")");
  return kExitOk;
}

}  // namespace

Subcommand AddCreateSource(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "create-source",
      "record a source (--generator counter|key_value, or --log PATH --schema COLS) as PENDING");
  sub->footer(
      "Types bool, int64, float64, string; a trailing ? makes a column nullable. Defaults:\n"
      "tick interval 100000 us, keys 100, updates per tick 1, seed 1.\n"
      "--log PATH must be an existing regular file (the replica tails it as it grows; it reads\n"
      "it on its own host, which is this one); it is recorded as an absolute path.\n"
      "A source alone is not something the replica can address (it is read only through an\n"
      "index), so this command sends nothing: it checks the source and records it in the state\n"
      "file as a PENDING source, which becomes part of the dataflow of the next create-index or\n"
      "create-view --on it. A source feeds exactly one dataflow (the replica does not support\n"
      "index imports yet); `drop ID` forgets a pending source.");
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
  return {sub, [o](const Globals&, History h) { return Run(*o, std::move(h)); }};
}

}  // namespace tandem::ctl
