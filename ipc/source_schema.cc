#include "ipc/source_schema.h"

#include <set>
#include <string>

#include "ipc/plan_typing.h"
#include "ipc/reasons.h"

namespace tandem::ipc {
namespace {

// The schema a source has: a generator's own, else at least one column of known types (and a
// path, where the source reads a file).
Status CheckSourceSchema(const pb::SourceImport& import) {
  const pb::Schema& schema = import.schema();
  auto int64s = [](int n) {
    pb::Schema expected;
    for (int i = 0; i < n; ++i) expected.add_columns()->set_type(pb::INT64);
    return expected;
  };
  // A source whose schema is the controller's: at least one column, of known types.
  auto columns = [&](const std::string& kind) {
    if (schema.columns_size() == 0) return Invalid(kind + " source: schema has no columns");
    for (int i = 0; i < schema.columns_size(); ++i) {
      if (!IsKnownType(schema.columns(i).type())) {
        return Invalid(kind + " source: column " + std::to_string(i) + " has " +
                       TypeName(schema.columns(i).type()));
      }
      const Status column = CheckColumnType(schema.columns(i));  // its typmods
      if (!column.ok()) {
        return Invalid(kind + " source: column " + std::to_string(i) + ": " + column.message());
      }
    }
    return Status::Ok();
  };
  switch (import.source().kind_case()) {
    case pb::Source::kCounter:
      if (!SameShape(schema, int64s(1))) {
        return Invalid("a counter source has schema [INT64] (one column, not nullable), not " +
                       SchemaText(schema));
      }
      return Status::Ok();
    case pb::Source::kKeyValue:
      if (!SameShape(schema, int64s(2))) {
        return Invalid(
            "a key_value source has schema [INT64, INT64] (key, value; not nullable), not " +
            SchemaText(schema));
      }
      if (import.source().key_value().keys() == 0) return Invalid("key_value source: keys is 0");
      if (import.source().key_value().updates_per_tick() == 0) {
        return Invalid("key_value source: updates_per_tick is 0");
      }
      return Status::Ok();
    case pb::Source::kLog:
      if (import.source().log().path().empty()) return Invalid("log source: path is empty");
      return columns("log");
    case pb::Source::kCsv:
      if (import.source().csv().path().empty()) return Invalid("csv source: path is empty");
      return columns("csv");
    case pb::Source::kJsonLines:
      if (import.source().json_lines().path().empty()) {
        return Invalid("json_lines source: path is empty");
      }
      return columns("json_lines");
    case pb::Source::kTable:
      return columns("table");
    case pb::Source::KIND_NOT_SET:
      break;
  }
  return Invalid("source has no kind");
}

// The source's parameters against SourceBounds; `segment_bytes` 0 is unknown.
Status CheckSourceBounds(const pb::SourceImport& import, std::uint64_t as_of,
                         std::uint64_t segment_bytes) {
  using B = SourceBounds;
  auto over = [](const std::string& what, std::uint64_t value, std::uint64_t bound,
                 const std::string& why) {
    return Invalid(what + " " + std::to_string(value) + " is over the bound " +
                   std::to_string(bound) + " (" + why + ")");
  };
  auto interval = [&](const std::string& kind, std::uint64_t us) {
    if (us <= B::kMaxTickIntervalUs) return Status::Ok();
    return over(kind + " source: tick_interval_us", us, B::kMaxTickIntervalUs, "one hour");
  };
  // A file the runtime opens: absolute (it runs in another directory), bounded, no NUL.
  // REQUIRES: not empty (CheckSourceSchema).
  auto path = [&](const std::string& kind, const std::string& path) {
    if (path.size() > B::kMaxPathBytes) {
      return over(kind + " source: path of", path.size(), B::kMaxPathBytes, "bytes");
    }
    if (path.find('\0') != std::string::npos) {
      return Invalid(kind + " source: path " + Printable(path, 80) + " has a NUL byte");
    }
    if (path[0] != '/') {
      return Invalid(kind + " source: path " + Printable(path, 80) +
                     " is not absolute (the runtime runs in another directory)");
    }
    return Status::Ok();
  };
  // as_of × rows per tick, the first tick's catch-up.
  auto catch_up = [&](const std::string& kind, std::uint64_t rows_per_tick) {
    if (as_of == 0 || as_of <= B::kMaxCatchUpRows / rows_per_tick) return Status::Ok();
    return Invalid(kind + " source: as_of " + TimeText(as_of) + " makes its first tick emit " +
                   std::to_string(rows_per_tick) + " rows for each time below it, over the bound " +
                   std::to_string(B::kMaxCatchUpRows) + " rows (start it at a lower as_of)");
  };
  switch (import.source().kind_case()) {
    case pb::Source::kCounter: {
      const auto& c = import.source().counter();
      TANDEM_RETURN_IF_ERROR(interval("counter", c.tick_interval_us()));
      if (c.max() >= kNotATime - 1) {
        return over("counter source: max", c.max(), kNotATime - 2,
                    "its last value is a time, and the last time is for closing");
      }
      return catch_up("counter", 1);
    }
    case pb::Source::kKeyValue: {
      const auto& kv = import.source().key_value();
      TANDEM_RETURN_IF_ERROR(interval("key_value", kv.tick_interval_us()));
      if (kv.keys() > B::kMaxKeys) {
        return over("key_value source: keys", kv.keys(), B::kMaxKeys,
                    "each key's value lives in the maintenance runtime");
      }
      if (kv.updates_per_tick() > B::kMaxUpdatesPerTick) {
        return over("key_value source: updates_per_tick", kv.updates_per_tick(),
                    B::kMaxUpdatesPerTick, "a tick's updates are made at once");
      }
      if (segment_bytes != 0) {
        const std::uint64_t rows = segment_bytes / B::kMinRowBytes;
        const std::string segment = "the segment has " + std::to_string(segment_bytes) +
                                    " bytes, a row takes at least " +
                                    std::to_string(B::kMinRowBytes);
        if (kv.keys() > rows) {
          return over("key_value source: keys", kv.keys(), rows,
                      "its first tick is a row per key; " + segment);
        }
        if (kv.updates_per_tick() > rows / 2) {
          return over("key_value source: updates_per_tick", kv.updates_per_tick(), rows / 2,
                      "a tick is 2 rows per update; " + segment);
        }
      }
      return catch_up("key_value", 2 * kv.updates_per_tick());
    }
    case pb::Source::kLog:
      return path("log", import.source().log().path());
    case pb::Source::kCsv:
      return path("csv", import.source().csv().path());
    case pb::Source::kJsonLines:
      return path("json_lines", import.source().json_lines().path());
    case pb::Source::kTable: {
      const std::uint64_t ms = import.source().table().tick_interval_ms();
      if (ms <= B::kMaxTableTickIntervalMs) return Status::Ok();
      return over("table source: tick_interval_ms", ms, B::kMaxTableTickIntervalMs, "one hour");
    }
    case pb::Source::KIND_NOT_SET:
      break;
  }
  return Invalid("source has no kind");
}

// The upsert envelope (DESIGN §9): which sources may have one, and its columns. REQUIRES: the
// source and its schema passed CheckSourceSchema.
Status CheckUpsertKey(const pb::SourceImport& import) {
  const auto& key = import.upsert_key();
  if (key.empty()) return Status::Ok();
  const auto kind = import.source().kind_case();
  const std::string name = SourceKindName(import.source());
  if (kind != pb::Source::kLog && kind != pb::Source::kTable && kind != pb::Source::kCsv &&
      kind != pb::Source::kJsonLines) {
    return Invalid("upsert_key is for log, table, csv and json_lines sources, not a " + name +
                   " source (its updates are its own)");
  }
  const int columns = import.schema().columns_size();
  std::set<std::uint32_t> seen;
  for (int i = 0; i < key.size(); ++i) {
    const std::string where = "upsert_key " + std::to_string(i);
    const Status in_range = CheckColumnInRange(key[i], columns);
    if (!in_range.ok()) return Within(where, in_range);
    if (!seen.insert(key[i]).second) {
      return Invalid(where + ": column " + std::to_string(key[i]) + " is in the key twice");
    }
  }
  // A csv record or a json line without any non-key field is a delete: with every column in the
  // key, such a source could only ever delete.
  if ((kind == pb::Source::kCsv || kind == pb::Source::kJsonLines) &&
      static_cast<int>(seen.size()) == columns) {
    return Invalid("upsert_key " + ListText(key) + " is every column: a " + name +
                   " record without a non-key field is a delete, so the source could never hold "
                   "a row (leave a column out of the key)");
  }
  return Status::Ok();
}

}  // namespace

const char* SourceKindName(const pb::Source& source) {
  switch (source.kind_case()) {
    case pb::Source::kCounter:
      return "counter";
    case pb::Source::kKeyValue:
      return "key_value";
    case pb::Source::kLog:
      return "log";
    case pb::Source::kTable:
      return "table";
    case pb::Source::kCsv:
      return "csv";
    case pb::Source::kJsonLines:
      return "json_lines";
    case pb::Source::KIND_NOT_SET:
      break;
  }
  return "";
}

Status CheckSourceImport(const pb::SourceImport& import, std::uint64_t as_of,
                         std::uint64_t segment_bytes) {
  TANDEM_RETURN_IF_ERROR(CheckSourceSchema(import));
  TANDEM_RETURN_IF_ERROR(CheckSourceBounds(import, as_of, segment_bytes));
  return CheckUpsertKey(import);
}

}  // namespace tandem::ipc
