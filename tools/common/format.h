// What tandem-ctl and tandem-shm print and read, defined once so both tools say the same thing
// the same way (README "Output of the tools"):
//
// * Datums in text — `--key` input and every table — use the log source's datum syntax
//   (workers/README.md): `null`, `true`, `false`, integers (`-12`), floats (always with a `.` or
//   an exponent, or `nan`, `inf`, `-inf`), strings in double quotes with `\"`, `\\`, `\n`, `\t`
//   escapes. So the string "null" prints as `"null"` and NULL as `null`, a string never breaks a
//   table line, and whatever a tool prints can be typed back as a `--key` or pasted into a log.
// * JSON (`--json`): datums as JSON null, booleans, numbers (integers exactly; floats in the
//   shortest text that reads back to the same double) and strings; the non-finite floats as the
//   strings "nan", "inf", "-inf". Times are JSON integers; a frontier is its one time or null
//   (the empty frontier: closed, or released). A failure is {"error": "...", "exit_code": N}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "base/status.h"
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

// A float in the datum syntax: the shortest text that reads back to the same double, with ".0"
// added when it would otherwise read as an integer; nan, inf, -inf.
std::string FloatText(double value);
// One datum in the datum syntax.
std::string DatumText(const Datum& datum);
// A string datum's text: quoted, with \" \\ \n \t escaped.
std::string QuoteString(std::string_view text);
// "(d1, d2, ...)"
std::string RowText(const Row& row);

// What is known of the column a datum is read for. kAny: guess from the text (the datum syntax
// is unambiguous without a type).
struct ColumnType {
  enum class Kind { kAny, kBool, kInt64, kFloat64, kString };
  Kind kind = Kind::kAny;
  bool nullable = true;
  std::string name;  // for messages
};

// Reads one datum in the datum syntax (surrounding spaces ignored). A float column also takes an
// integer (2 is 2.0). Refused, with the reason: a datum of another type than the column's, null
// for a column that is not nullable, an unquoted string, a bad escape.
Result<Datum> ParseDatumText(std::string_view text, const ColumnType& column = {});

// Splits "d1,d2,..." at the commas outside double quotes (a comma inside a quoted string belongs
// to the string). Refuses an unterminated string.
Result<std::vector<std::string>> SplitDatumList(std::string_view text);

}  // namespace tandem::tools
