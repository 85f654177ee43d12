// The datum syntax: datums and rows as text. The one printer and the one parser of it, for every
// writer and reader — the log source's lines (ipc/formats/log_parse.h), the CSV and JSON-lines
// values (the same numbers), what tandem-ctl and tandem-shm print and read (`--key`, `--row`,
// tables), the tests' messages and the reference evaluator's log files.
//
//   null      null
//   bool      true, false
//   int64     a decimal: -12 (no '+', no spaces)
//   float64   printed as the shortest decimal that reads back to the same double, with ".0" added
//             where it would read as an integer: 1.5, 0.1, -0.0, 2.0, 2e+20, 1e-300, 5e-324; and
//             nan, inf, -inf. Read: a decimal with digits, an optional '-', '.' and exponent
//             (1.5, 2, 2e10); nan, inf, -inf. Refused: a leading '+', spaces, hex, "infinity", a
//             finite text beyond the float64 range (an underflow is its value).
//   string    in double quotes with \" \\ \n \t escaped; every other byte as it is. So a string
//             datum never breaks a line or a table cell, and the string "null" prints as "null"
//             while NULL prints as null.
//
// Invariant (tests/unit/datum_text_test.cc): ParseDatumText(DatumText(d), t) is d — floats bit
// for bit, every NaN as the one quiet NaN — for t the column type of d, and for the type kAny.
// The syntax is unambiguous without a type: whatever a tool prints can be typed back as a
// `--key` or pasted into a log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "base/status.h"

namespace tandem {

// A float in the datum syntax (std::to_chars without a precision: the shortest round trip).
std::string FloatText(double value);
// A string datum's text: quoted, with \" \\ \n \t escaped.
std::string QuoteString(std::string_view text);
// One datum in the datum syntax.
std::string DatumText(const Datum& datum);
// "(d1, d2, ...)": a row in the datum syntax, for tables and messages.
std::string RowText(const Row& row);

// The numbers, exactly as above (no surrounding spaces); the CSV and JSON-lines formats read
// their numbers with these too. A decimal int64 (`-12`; no `+`), in range:
bool ParseInt64Text(std::string_view text, std::int64_t* out);
// A decimal (`1.5`, `-0.0`, `2e10`, `12`) or `nan`, `inf`, `-inf`; no hex, no leading `+`, a
// finite text beyond the float64 range refused:
bool ParseFloat64Text(std::string_view text, double* out);

// The quoted string `text` begins with (REQUIRES: text[0] == '"'): how many bytes it spans, both
// quotes included, and — when `value` is given — the string it stands for. Refused: an unknown
// escape, no closing quote. Bytes after the closing quote are not looked at.
Result<std::size_t> ReadQuotedString(std::string_view text, std::string* value = nullptr);

// What is known of the column a datum is read for. kAny: decided by the text alone.
struct ColumnType {
  enum class Kind { kAny, kBool, kInt64, kFloat64, kString };
  Kind kind = Kind::kAny;
  bool nullable = true;
  std::string_view name;  // for messages (empty: none); must outlive the call it is passed to
};

// Reads exactly one datum (no surrounding spaces). A float column also takes an integer (2 is
// 2.0). Refused, with the reason: a datum of another type than the column's, null for a column
// that is not nullable, an unquoted string, a bad escape, text after a string's closing quote.
Result<Datum> ParseDatumText(std::string_view text, const ColumnType& column = {});

// Splits "d1, d2, ..." at the commas outside double quotes (a comma inside a quoted string belongs
// to the string), each part without the blanks around it. Refuses an unterminated string.
Result<std::vector<std::string>> SplitDatumList(std::string_view text);

}  // namespace tandem
