// What tandem-ctl and tandem-shm print, defined once so both tools say the same thing the same way
// (docs/formats.md "Output of the tools"):
//
// * Datums in text — `--key` input and every table — are in the datum syntax (base/datum_text.h):
//   the string "null" prints as `"null"` and NULL as `null`, a string never breaks a table line,
//   and whatever a tool prints can be typed back as a `--key` or pasted into a log.
// * JSON (`--json`): datums as JSON null, booleans, numbers (integers exactly; floats in the
//   shortest text that reads back to the same double, FloatText) and strings; the non-finite
//   floats as the strings "nan", "inf", "-inf"; the types of DESIGN §16 as JSON strings of
//   PostgreSQL's text (PostgresOutput): a numeric "12.50" (a JSON number would lose digits in a
//   reader's double), "\\x0a0b", "2026-12-06", "2026-12-06 12:00:00+00", "1 day 02:00:00", a
//   uuid. Times are JSON integers; a frontier is its one
//   time or null (the empty frontier: closed, or released). A failure is
//   {"error": "...", "exit_code": N}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/datum_text.h"  // the datums in the tools' text
#include "base/row.h"
#include "base/time.h"

namespace tandem::tools {

// A minimal streaming JSON writer producing one compact document. Strings are escaped per
// RFC 8259 (quote, backslash, control characters); other bytes pass through unchanged.
class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(std::int64_t value);
  JsonWriter& UInt(std::uint64_t value);
  JsonWriter& Double(double value);  // FloatText; non-finite values as the strings nan, inf, -inf
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // A frontier: its time, or null when empty.
  JsonWriter& FrontierValue(Frontier frontier);
  JsonWriter& DatumValue(const Datum& datum);
  JsonWriter& RowValue(const Row& row);  // an array of datums
  // An already encoded JSON value, as is.
  JsonWriter& Raw(std::string_view json);
  const std::string& str() const { return out_; }

 private:
  void Separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// {"error": message, "exit_code": code}
std::string JsonError(std::string_view message, int exit_code);

}  // namespace tandem::tools
