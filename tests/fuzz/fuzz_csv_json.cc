// Fuzz target: the CSV and JSON-lines formats (ipc/formats/csv.h, json_lines.h) — the lines
// of a file through a CsvReader and through ParseJsonLine.
//
// Input: byte 0 picks a schema, byte 1 an upsert key (none, or one of the schema's), the rest is
// the file, cut on '\n' (a '\r' before it removed, as LineFramer does). Properties (a violation
// abort()s):
//   * every record has the row its kind says: an update or upsert one datum per column, a delete
//     one per key column, each of its column's type or NULL where the column is nullable; kinds
//     follow the upsert key (kUpdate without one, kUpsert/kDelete with one);
//   * every error (and the CSV reader's broken()) is non-empty valid UTF-8 (it goes into a
//     protobuf string), a CSV error names the line where its record starts, which is at most the
//     line just read;
//   * a JSON record prints back (as JSON) to a line that parses to the same record.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/datum_text.h"
#include "base/json.h"
#include "fuzz/fuzz_check.h"
#include "ipc/formats/csv.h"
#include "ipc/formats/format_values.h"
#include "ipc/formats/json_lines.h"
#include "unit/protocol_samples.h"

namespace tandem::ipc {
namespace {

using samples::MakeColumn;
using samples::MakeSchema;

const pb::Schema& SchemaFor(std::uint8_t b) {
  static const pb::Schema schemas[] = {
      MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("v", pb::INT64, true)}),
      MakeSchema({MakeColumn("s", pb::STRING, true), MakeColumn("f", pb::FLOAT64),
                  MakeColumn("b", pb::BOOL, true)}),
      MakeSchema({MakeColumn("n", pb::INT64, true), MakeColumn("s", pb::STRING)}),
      samples::TypedSchema(),  // every type of DESIGN §16, with typmods
  };
  return schemas[b % 4];
}

std::vector<std::uint32_t> KeyFor(std::uint8_t b, const pb::Schema& s) {
  if (b % 4 == 0) return {};
  return {static_cast<std::uint32_t>(b % static_cast<std::uint8_t>(s.columns_size()))};
}

bool OfColumn(const Datum& d, const pb::Column& col) {
  if (std::holds_alternative<Null>(d)) return col.nullable();
  switch (col.type()) {
    case pb::BOOL:
      return std::holds_alternative<bool>(d);
    case pb::INT64:
      return std::holds_alternative<std::int64_t>(d);
    case pb::FLOAT64:
      return std::holds_alternative<double>(d);
    case pb::STRING:
      return std::holds_alternative<std::string>(d) && ValidUtf8(std::get<std::string>(d));
    case pb::INT16:
      return std::holds_alternative<std::int64_t>(d) && std::get<std::int64_t>(d) >= -32768 &&
             std::get<std::int64_t>(d) <= 32767;
    case pb::INT32:
      return std::holds_alternative<std::int64_t>(d) &&
             std::get<std::int64_t>(d) >= -2147483648LL && std::get<std::int64_t>(d) <= 2147483647;
    case pb::FLOAT32:
      return std::holds_alternative<double>(d);
    case pb::NUMERIC:
      return std::holds_alternative<Numeric>(d);
    case pb::BYTEA:
      return std::holds_alternative<Bytes>(d);
    case pb::DATE:
      return std::holds_alternative<Date>(d);
    case pb::TIME:
      return std::holds_alternative<TimeOfDay>(d);
    case pb::TIMESTAMP:
      return std::holds_alternative<Timestamp>(d);
    case pb::TIMESTAMPTZ:
      return std::holds_alternative<TimestampTz>(d);
    case pb::INTERVAL:
      return std::holds_alternative<Interval>(d);
    case pb::UUID:
      return std::holds_alternative<Uuid>(d);
    default:
      return false;
  }
}

void CheckRecord(const SourceRecord& r, const pb::Schema& s, const std::vector<std::uint32_t>& key,
                 const std::string& what) {
  if (key.empty()) {
    FUZZ_CHECK(r.kind == SourceRecord::Kind::kUpdate && r.diff == 1, what);
  } else {
    FUZZ_CHECK(r.kind != SourceRecord::Kind::kUpdate, what);
  }
  if (r.kind == SourceRecord::Kind::kDelete) {
    FUZZ_CHECK(r.row.size() == key.size(), what);
    for (std::size_t i = 0; i < key.size(); ++i)
      FUZZ_CHECK(OfColumn(r.row[i], s.columns(static_cast<int>(key[i]))), what);
    return;
  }
  FUZZ_CHECK(r.row.size() == static_cast<std::size_t>(s.columns_size()), what);
  for (int c = 0; c < s.columns_size(); ++c)
    FUZZ_CHECK(OfColumn(r.row[static_cast<std::size_t>(c)], s.columns(c)), what);
}

// A datum as a JSON value, the way the tools write one (tools/common/format.h): the non-finite
// floats as the strings the JSON-lines format reads.
std::string Json(const Datum& d) {
  if (std::holds_alternative<Null>(d)) return "null";
  if (const bool* b = std::get_if<bool>(&d)) return *b ? "true" : "false";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&d)) return std::to_string(*i);
  if (const double* f = std::get_if<double>(&d)) {
    return std::isfinite(*f) ? FloatText(*f) : JsonQuote(FloatText(*f));
  }
  if (const auto* s = std::get_if<std::string>(&d)) return JsonQuote(*s);
  return JsonQuote(PostgresOutput(d));  // the new kinds: PostgreSQL's text in a string
}

bool SameDatum(const Datum& a, const Datum& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return (std::isnan(*x) && std::isnan(y)) || std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

void CheckJson(std::string_view line, const pb::Schema& s, const std::vector<std::uint32_t>& key) {
  const std::string what(line);
  const auto r = ParseJsonLine(line, s, key);
  if (!r) {
    FUZZ_CHECK(line.find_first_not_of(" \t\r") == std::string_view::npos, what);
    return;
  }
  if (const auto* e = std::get_if<std::string>(&*r)) {
    FUZZ_CHECK(!e->empty() && ValidUtf8(*e), what);
    return;
  }
  const SourceRecord& rec = std::get<SourceRecord>(*r);
  CheckRecord(rec, s, key, what);
  // Print it back: a delete with only its key fields, anything else with every column.
  std::string printed = "{";
  auto field = [&](int c, const Datum& d) {
    if (printed.size() > 1) printed += ",";
    printed += Json(s.columns(c).name()) + ":" + Json(d);
  };
  if (rec.kind == SourceRecord::Kind::kDelete) {
    for (std::size_t i = 0; i < key.size(); ++i) field(static_cast<int>(key[i]), rec.row[i]);
  } else {
    for (int c = 0; c < s.columns_size(); ++c) field(c, rec.row[static_cast<std::size_t>(c)]);
  }
  printed += "}";
  const auto again = ParseJsonLine(printed, s, key);
  FUZZ_CHECK(again && std::holds_alternative<SourceRecord>(*again),
             what + " printed as " + printed);
  const SourceRecord& b = std::get<SourceRecord>(*again);
  FUZZ_CHECK(b.kind == rec.kind && b.row.size() == rec.row.size(), what + " printed as " + printed);
  for (std::size_t i = 0; i < b.row.size(); ++i)
    FUZZ_CHECK(SameDatum(b.row[i], rec.row[i]), what + " printed as " + printed);
}

}  // namespace
}  // namespace tandem::ipc

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tandem::ipc;  // NOLINT(google-build-using-namespace)
  if (size < 2) return 0;
  const tandem::ipc::pb::Schema& schema = SchemaFor(data[0]);
  const std::vector<std::uint32_t> key = KeyFor(data[1], schema);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);

  CsvReader csv(schema, key);
  std::uint64_t n = 0;
  std::size_t start = 0;
  auto check_csv = [&](const std::optional<CsvReader::Result>& r) {
    if (!r) return;
    FUZZ_CHECK(r->line >= 1 && r->line <= n, "csv line number");
    if (r->record) {
      CheckRecord(*r->record, schema, key, "csv line " + std::to_string(r->line));
    } else {
      FUZZ_CHECK(ValidUtf8(r->error) &&
                     r->error.rfind("csv line " + std::to_string(r->line) + ": ", 0) == 0,
                 r->error);
    }
  };
  while (start <= stream.size()) {
    std::size_t nl = stream.find('\n', start);
    const bool last = nl == std::string_view::npos;
    if (last) nl = stream.size();
    std::string_view line = stream.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++n;
    check_csv(csv.Line(line, n));
    CheckJson(line, schema, key);
    start = nl + 1;
    if (last) break;
  }
  check_csv(csv.End());
  FUZZ_CHECK(csv.broken().empty() || ValidUtf8(csv.broken()), csv.broken());
  return 0;
}
