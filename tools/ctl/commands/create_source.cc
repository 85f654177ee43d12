// create-source: a maintained dataflow of its own for a source, with the source's index s<n> on
// it (History::SourceIndexId), so that the source lives until it is itself dropped.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

struct CreateSourceOptions {
  std::string id;
  std::optional<std::string> generator, log, csv, jsonl, schema;
  bool table = false;
  std::optional<std::string> upsert_key, tick_ms;
  std::optional<std::string> keys, updates_per_tick, tick_interval_us, seed, max;
  // The source index's key; default the upsert key, else the first column.
  std::optional<std::string> key;
};

// The largest --tick-ms (the validator's bound on TableSource.tick_interval_ms): an hour.
constexpr std::uint64_t kMaxTickMs = 3'600'000;

// A file source's file (--log, --csv, --jsonl: `flag`) must exist now and be a regular file we
// can read: a path the replica would wait on forever is refused here, with the reason.
Result<std::string> CheckSourceFile(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();  // no "dir/../"
  if (ec) return Status::InvalidArgument(flag + " " + path + ": " + ec.message());
  const auto status = fs::status(absolute, ec);
  if (!fs::exists(status)) {
    return Status::NotFound(flag + " " + path +
                            ": no such file (the source tails an existing file as it grows: "
                            "create it first, even empty)");
  }
  if (!fs::is_regular_file(status)) {
    return Status::InvalidArgument(flag + " " + path + ": not a regular file (" +
                                   (fs::is_directory(status) ? "a directory" : "a special file") +
                                   "); the source reads an append-only text file");
  }
  if (access(absolute.c_str(), R_OK) != 0) {
    return Status::InvalidArgument(flag + " " + path + ": cannot be read: " + std::strerror(errno));
  }
  return absolute.string();
}

// --upsert-key COLS against `schema`: names (or positions), each in range, none twice.
Result<std::vector<std::uint32_t>> ParseUpsertKey(const std::string& text,
                                                  const pb::Schema& schema) {
  auto cols = ParseColumns(text, schema);
  if (!cols.ok()) return Status::InvalidArgument("--upsert-key: " + cols.status().message());
  std::set<std::uint32_t> seen;
  for (auto c : *cols) {
    if (c >= static_cast<std::uint32_t>(schema.columns_size())) {
      return Status::InvalidArgument("--upsert-key: column " + std::to_string(c) +
                                     " is out of range (the schema has " +
                                     std::to_string(schema.columns_size()) + " columns)");
    }
    if (!seen.insert(c).second) {
      return Status::InvalidArgument("--upsert-key: column " +
                                     ColumnName(schema, static_cast<int>(c)) + " is given twice");
    }
  }
  return cols;
}

pb::Column Int64Column(const char* name) {
  pb::Column c;
  c.set_name(name);
  c.set_type(pb::INT64);
  return c;
}

// The generator source of `o` into `s`; a usage error's message otherwise.
std::optional<std::string> GeneratorSource(const CreateSourceOptions& o, pb::SourceImport& s) {
  std::optional<std::string> bad;
  auto u64 = [&](const std::optional<std::string>& v, const char* name, std::uint64_t def) {
    if (!v) return def;
    auto n = ParseU64(*v, std::string("--") + name);
    if (!n.ok() && !bad) bad = n.status().message();
    return n.ok() ? *n : def;
  };
  if (o.schema) return "--schema goes with --log, --table, --csv or --jsonl";
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

// The file and table sources (everything but a generator) of `o` into `s`. A usage error's
// message, or (`refused`) the refusal of a file that is not there or of an upsert key column.
std::optional<std::string> DataSource(const CreateSourceOptions& o, pb::SourceImport& s,
                                      bool& refused) {
  for (const auto& [given, name] :
       {std::pair{&o.keys, "keys"}, std::pair{&o.updates_per_tick, "updates-per-tick"},
        std::pair{&o.tick_interval_us, "tick-interval-us"}, std::pair{&o.seed, "seed"},
        std::pair{&o.max, "max"}}) {
    if (*given) return std::string("--") + name + " goes with --generator";
  }
  if (o.tick_ms && !o.table) return "--tick-ms goes with --table";
  if (!o.schema) return "--schema is required";
  auto schema = ParseSchema(*o.schema);
  if (!schema.ok()) return schema.status().message();
  *s.mutable_schema() = *schema;
  if (o.upsert_key) {
    auto key = ParseUpsertKey(*o.upsert_key, s.schema());
    if (!key.ok()) {
      refused = true;  // as an unknown --key column
      return key.status().message();
    }
    for (auto k : *key) s.add_upsert_key(k);
  }
  if (o.table) {
    auto* t = s.mutable_source()->mutable_table();
    if (o.tick_ms) {
      auto ms = ParseU64(*o.tick_ms, "--tick-ms");
      if (!ms.ok()) return ms.status().message();
      if (*ms == 0 || *ms > kMaxTickMs) {
        return "--tick-ms " + *o.tick_ms + ": between 1 and " + std::to_string(kMaxTickMs) +
               " milliseconds (an hour)";
      }
      t->set_tick_interval_ms(*ms);
    }
    return std::nullopt;
  }
  const auto& [flag, path] = o.log   ? std::pair{"--log", *o.log}
                             : o.csv ? std::pair{"--csv", *o.csv}
                                     : std::pair{"--jsonl", *o.jsonl};
  auto absolute = CheckSourceFile(flag, path);
  if (!absolute.ok()) {
    refused = true;
    return absolute.status().message();
  }
  if (o.log) {
    s.mutable_source()->mutable_log()->set_path(*absolute);
  } else if (o.csv) {
    s.mutable_source()->mutable_csv()->set_path(*absolute);
  } else {
    s.mutable_source()->mutable_json_lines()->set_path(*absolute);
  }
  return std::nullopt;
}

int RunCreateSource(const CreateSourceOptions& o, const Globals& g, History h) {
  const std::string& id = o.id;
  pb::SourceImport s;
  s.set_id(id);
  const int kinds = o.generator.has_value() + o.log.has_value() + o.table + o.csv.has_value() +
                    o.jsonl.has_value();
  if (kinds != 1) {
    return Usage(
        "create-source needs exactly one of --generator, --log, --table, --csv and "
        "--jsonl");
  }
  const std::string what = "create-source " + id;
  if (o.generator) {
    if (o.upsert_key) return Usage("--upsert-key goes with --log, --table, --csv or --jsonl");
    if (o.tick_ms)
      return Usage("--tick-ms goes with --table (a generator takes --tick-interval-us)");
    if (auto bad = GeneratorSource(o, s)) return Usage(*bad);
  } else {
    bool refused = false;
    if (auto bad = DataSource(o, s, refused)) return refused ? Refused(what, *bad) : Usage(*bad);
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
  // An upsert source holds one row per upsert key: its index is keyed by that by default.
  std::vector<std::uint32_t> key(s.upsert_key().begin(), s.upsert_key().end());
  if (key.empty()) key = {0};
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
  const std::vector<std::uint32_t> upsert_key(s.upsert_key().begin(), s.upsert_key().end());
  const std::string upsert =
      upsert_key.empty() ? "" : ", upsert key " + ColumnsText(upsert_key, s.schema());
  Session session(g, std::move(h));
  return SubmitCreate(session, Canonical(c), what,
                      "created source " + id + " with index " + *index_id + " (key " +
                          ColumnsText(key, s.schema()) + ")" + upsert);
}

}  // namespace

Subcommand AddCreateSource(CLI::App& app) {
  auto o = std::make_shared<CreateSourceOptions>();
  auto* sub = app.add_subcommand(
      "create-source",
      "a source (--generator counter|key_value, --log PATH, --table, --csv PATH or --jsonl PATH, "
      "the last four with --schema COLS) and its index");
  sub->footer(
      "Types bool, int64, float64, string; a trailing ? makes a column nullable. Defaults:\n"
      "tick interval 100000 us, keys 100, updates per tick 1, seed 1.\n"
      "--log, --csv and --jsonl PATH must be an existing regular file (the replica tails it as\n"
      "it grows; it reads it on its own host, which is this one); it is recorded as an absolute\n"
      "path. --table: a table, written with `tandem-ctl write` (and `load`), kept durably in the\n"
      "replica's --data-dir; its time is the wall clock in milliseconds, and with no writes its\n"
      "frontier follows the clock every --tick-ms (default 1000).\n"
      "--upsert-key COLS (with --log, --table, --csv, --jsonl): a record replaces the row with\n"
      "its key and a delete removes it; the replica emits the retractions.\n"
      "The source gets a dataflow of its own with an index on it: s<n> for source u<n>, keyed\n"
      "by --key (default: the upsert key, else the first column). `peek ID` reads that index;\n"
      "create-index and create-view --on ID import it, and dropping them leaves the source;\n"
      "`drop ID` drops the source (refused by the replica while a dataflow imports it: drop\n"
      "that first).");
  sub->add_option("ID", o->id, "the source's id, e.g. u1")->required();
  AddOptional(*sub, "--generator", &o->generator, "counter or key_value");
  AddOptional(*sub, "--log", &o->log, "an existing regular file the replica tails");
  sub->add_flag("--table", o->table, "a table: written through the endpoint (tandem-ctl write)");
  AddOptional(*sub, "--csv", &o->csv, "an existing CSV file (a header line) the replica tails");
  AddOptional(*sub, "--jsonl", &o->jsonl,
              "an existing JSON-lines file (an object a line) the replica tails");
  AddOptional(*sub, "--schema", &o->schema,
              "with --log, --table, --csv, --jsonl: \"name:int64,name2:string?,...\"");
  AddOptional(*sub, "--upsert-key", &o->upsert_key,
              "COLS: the upsert key (--log, --table, --csv, --jsonl)");
  AddOptional(*sub, "--tick-ms", &o->tick_ms,
              "--table: milliseconds between clock ticks of its frontier (1000)");
  AddOptional(*sub, "--keys", &o->keys, "key_value: number of keys (100)");
  AddOptional(*sub, "--updates-per-tick", &o->updates_per_tick, "key_value: updates a tick (1)");
  AddOptional(*sub, "--tick-interval-us", &o->tick_interval_us,
              "generators: microseconds between ticks (100000)");
  AddOptional(*sub, "--seed", &o->seed, "key_value: random seed (1)");
  AddOptional(*sub, "--max", &o->max, "counter: stop after this count (0: never)");
  AddOptional(*sub, "--key", &o->key,
              "COLS the source's index is keyed by (the upsert key, else its first column)");
  return {sub, [o](const Globals& g, History h) { return RunCreateSource(*o, g, std::move(h)); }};
}

}  // namespace tandem::ctl
