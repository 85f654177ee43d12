// Fuzz target: the log source's format (ipc/formats/log_parse.h) — the bytes of a log file,
// cut into lines by LineFramer and parsed by ParseLogLine.
//
// Input: byte 0 picks a schema, byte 1 the framer's line bound (1..64, so over-long lines are
// common), byte 2 seeds the chunk sizes; the rest is the file. Properties (a violation abort()s):
//   * framing is independent of how the bytes arrive: fed in random chunks (the way LogTailer
//     reads) it gives the events of a naive split on '\n' — each line of at most the bound as
//     itself (a trailing '\r' removed), each longer one as one kOverlong, also an unterminated
//     one at the end —, and the framer's caller never holds more than the bound;
//   * a line parses to nothing exactly when it is blank, all spaces or a comment;
//   * an error has a reason and no row; an update has one datum per column, each of the
//     column's type or NULL where the column is nullable, and a valid time;
//   * read as a line of an upsert log source too (keyed on the last column): an upsert has a
//     whole row, a delete the key's datums; U lines are errors there, S/D lines in a plain one;
//   * every record prints back (in the datum syntax) to a line that parses to the same record.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/datum_text.h"
#include "fuzz/fuzz_check.h"
#include "ipc/formats/log_parse.h"
#include "unit/protocol_samples.h"

namespace tandem::ipc {
namespace {

using samples::MakeColumn;
using samples::MakeSchema;

const pb::Schema& SchemaFor(std::uint8_t b) {
  static const pb::Schema schemas[] = {
      MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("v", pb::INT64)}),
      MakeSchema({MakeColumn("s", pb::STRING, true), MakeColumn("f", pb::FLOAT64),
                  MakeColumn("b", pb::BOOL, true)}),
      MakeSchema({MakeColumn("n", pb::INT64, true), MakeColumn("s", pb::STRING)}),
      samples::TypedSchema(),  // every type of DESIGN §16, with typmods
  };
  return schemas[b % 4];
}

struct Event {
  int kind;
  std::string line;
  bool operator==(const Event&) const = default;
};

// The bytes fed to a LineFramer in chunks of 1..17 bytes, as LogTailer does: a buffer of what
// is not consumed yet.
std::vector<Event> Framed(std::string_view stream, std::size_t max_line, std::uint32_t seed) {
  LineFramer framer(max_line);
  std::vector<Event> out;
  std::string pending;
  std::size_t pos = 0;
  while (pos < stream.size()) {
    seed = seed * 1103515245u + 12345u;
    const std::size_t take = std::min<std::size_t>(1 + (seed >> 16) % 17, stream.size() - pos);
    pending.append(stream.substr(pos, take));
    pos += take;
    for (;;) {
      const LineFramer::Event e = framer.Next(pending);
      FUZZ_CHECK(e.consumed <= pending.size(), "consumed more than it was given");
      if (e.kind != LineFramer::Event::kNone) out.push_back({e.kind, std::string(e.line)});
      pending.erase(0, e.consumed);
      if (e.kind == LineFramer::Event::kNone) break;
    }
    FUZZ_CHECK(pending.size() <= max_line, "the framer's caller holds more than a line");
  }
  return out;
}

// The same, by a naive split on '\n'.
std::vector<Event> Split(std::string_view stream, std::size_t max_line) {
  std::vector<Event> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = stream.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    std::string_view line = stream.substr(start, nl - start);
    if (line.size() > max_line) {
      out.push_back({LineFramer::Event::kOverlong, ""});
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back({LineFramer::Event::kLine, std::string(line)});
  }
  if (stream.size() - start > max_line) out.push_back({LineFramer::Event::kOverlong, ""});
  return out;
}

bool SameDatum(const Datum& a, const Datum& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return (std::isnan(*x) && std::isnan(y)) || std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

bool SameRecord(const LogRecord& a, const LogRecord& b) {
  if (a.kind != b.kind || a.time != b.time || a.diff != b.diff || a.row.size() != b.row.size())
    return false;
  for (std::size_t i = 0; i < a.row.size(); ++i) {
    if (!SameDatum(a.row[i], b.row[i])) return false;
  }
  return true;
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
      return std::holds_alternative<std::string>(d);
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

void CheckLine(std::string_view line, const pb::Schema& schema,
               const std::vector<std::uint32_t>& key) {
  const auto r = ParseLogLine(line, schema, key);
  const bool blank =
      line.empty() || line[0] == '#' || line.find_first_not_of(' ') == std::string_view::npos;
  FUZZ_CHECK(r.has_value() != blank, std::string(line));
  if (!r) return;
  std::string printed;
  switch (r->kind) {
    case LogRecord::Kind::kError:
      FUZZ_CHECK(!r->error.empty() && r->row.empty(), std::string(line));
      return;
    case LogRecord::Kind::kClose:
      printed = "C";
      break;
    case LogRecord::Kind::kProgress:
      FUZZ_CHECK(r->time <= kMaxTime, std::string(line));
      printed = "P " + std::to_string(r->time);
      break;
    case LogRecord::Kind::kUpdate:
      FUZZ_CHECK(key.empty() && r->time <= kMaxTime, std::string(line));
      FUZZ_CHECK(r->row.size() == static_cast<std::size_t>(schema.columns_size()),
                 std::string(line));
      printed = "U " + std::to_string(r->time) + " " + std::to_string(r->diff);
      for (int c = 0; c < schema.columns_size(); ++c) {
        FUZZ_CHECK(OfColumn(r->row[static_cast<std::size_t>(c)], schema.columns(c)),
                   std::string(line));
        printed += " " + DatumText(r->row[static_cast<std::size_t>(c)]);
      }
      break;
    case LogRecord::Kind::kUpsert:
    case LogRecord::Kind::kDelete: {
      const bool del = r->kind == LogRecord::Kind::kDelete;
      FUZZ_CHECK(!key.empty() && r->time <= kMaxTime, std::string(line));
      FUZZ_CHECK(
          r->row.size() == (del ? key.size() : static_cast<std::size_t>(schema.columns_size())),
          std::string(line));
      printed = (del ? "D " : "S ") + std::to_string(r->time);
      for (std::size_t i = 0; i < r->row.size(); ++i) {
        const int c = del ? static_cast<int>(key[i]) : static_cast<int>(i);
        FUZZ_CHECK(OfColumn(r->row[i], schema.columns(c)), std::string(line));
        printed += " " + DatumText(r->row[i]);
      }
      break;
    }
  }
  const auto again = ParseLogLine(printed, schema, key);
  FUZZ_CHECK(again && SameRecord(*r, *again), std::string(line) + " printed as " + printed);
}

}  // namespace
}  // namespace tandem::ipc

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tandem::ipc;  // NOLINT(google-build-using-namespace)
  if (size < 3) return 0;
  const tandem::ipc::pb::Schema& schema = SchemaFor(data[0]);
  const std::size_t max_line = 1 + data[1] % 64;
  const std::uint32_t seed = data[2];
  // Every line is also read as a line of an upsert log source (S/D lines), keyed on the last
  // column (so a D line's datums are not the row's first ones).
  const std::vector<std::uint32_t> key = {static_cast<std::uint32_t>(schema.columns_size() - 1)};
  const std::string_view stream(reinterpret_cast<const char*>(data) + 3, size - 3);

  const std::vector<Event> naive = Split(stream, max_line);
  FUZZ_CHECK(Framed(stream, max_line, seed) == naive, "framing depends on the chunks");
  FUZZ_CHECK(Framed(stream, max_line, seed + 1) == naive, "framing depends on the chunks");

  // Every line, of any length, parses by the rules above.
  std::size_t start = 0;
  for (std::size_t nl; (nl = stream.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    std::string_view line = stream.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    CheckLine(line, schema, {});
    CheckLine(line, schema, key);
  }
  CheckLine(stream.substr(start), schema, {});
  CheckLine(stream.substr(start), schema, key);
  return 0;
}
