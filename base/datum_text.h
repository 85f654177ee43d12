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
//   the kinds of DESIGN §16: PostgreSQL's typed literals, the type word then PostgreSQL's text
//   form (PostgresOutput below) in single quotes — which never holds a quote, a comma or a line
//   break:
//             numeric '12.50'    bytea '\x0a0b'    date '2026-12-06'    time '12:00:00'
//             timestamp '2026-12-06 12:00:00'    timestamptz '2026-12-06 12:00:00+00'
//             interval '1 day 02:00:00'    uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
//   For a column of one of those types (and of int2/int4/float4, numeric(p,s), varchar(n),
//   char(n)) the bare PostgreSQL text is read too: a date column takes 2026-12-06, a numeric
//   column 12.50, a bytea column \x0a0b. A value is brought to its column's type as PostgreSQL's
//   input does: numeric(p,s) rounds to s digits (more than p - s before the point is refused),
//   float4 rounds to the nearest float, int2/int4 refuse what is out of their range, varchar(n)
//   refuses more than n characters (blanks beyond n are cut, as PostgreSQL does) and char(n)
//   pads with blanks to n.
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

#include "base/datetime.h"
#include "base/numeric.h"
#include "base/row.h"
#include "base/status.h"

namespace tandem {

// A float in the datum syntax (std::to_chars without a precision: the shortest round trip).
std::string FloatText(double value);
// A string datum's text: quoted, with \" \\ \n \t escaped.
std::string QuoteString(std::string_view text);
// One datum in the datum syntax.
std::string DatumText(const Datum& datum);
// PostgreSQL's output text of a datum (DateStyle ISO, IntervalStyle postgres, timestamptz in UTC):
// what psql shows and what CSV and JSON carry — t/f, 12, 1.5 (floats in the datum syntax's
// shortest form, NaN/Infinity/-Infinity as PostgreSQL spells them), the string itself, 12.50,
// \x0a0b, 2026-12-06, 12:00:00, 2026-12-06 12:00:00, 2026-12-06 12:00:00+00, 1 day 02:00:00,
// a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11. REQUIRES: not null (null has no text).
std::string PostgresOutput(const Datum& datum);
// A float4 column's value as PostgreSQL prints a real: the shortest digits that read back as the
// same float (0.1, not 0.10000000149011612).
std::string PostgresFloat4Output(double value);
// bytea's hex form "\x0a0b" and its reading (PostgreSQL's escape form is not read).
std::string ByteaText(std::string_view bytes);
Result<std::string> ParseByteaText(std::string_view text);
// uuid's text form (lower-case hex, 8-4-4-4-12) and its reading (upper case, braces and missing
// hyphens between groups of four as PostgreSQL takes them).
std::string UuidText(const Uuid& uuid);
Result<Uuid> ParseUuidText(std::string_view text);
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

// What is known of the column a datum is read for. kAny: decided by the text alone. One kind per
// protocol ScalarType (ipc::ColumnTypeOf); int16/int32 columns hold int64 datums, float32 columns
// float64 datums.
struct ColumnType {
  enum class Kind {
    kAny,
    kBool,
    kInt64,
    kFloat64,
    kString,
    kInt16,
    kInt32,
    kFloat32,
    kNumeric,
    kBytea,
    kDate,
    kTime,
    kTimestamp,
    kTimestampTz,
    kInterval,
    kUuid,
  };
  Kind kind = Kind::kAny;
  bool nullable = true;
  std::string_view name;  // for messages (empty: none); must outlive the call it is passed to
  // numeric(precision, scale) when precision > 0; varchar(length) when length > 0, char(length)
  // when also blank_padded.
  int precision = 0;
  int scale = 0;
  int length = 0;
  bool blank_padded = false;
};

// The column type in tandem-ctl's schema words: bool, int64, float64, string, int2, int4, float4,
// numeric or numeric(12,2), varchar(10), char(3), bytea, date, time, timestamp, timestamptz,
// interval, uuid; "any" for kAny.
std::string ColumnTypeName(const ColumnType& column);

// Reads exactly one datum (no surrounding spaces). A float column also takes an integer (2 is
// 2.0); a typed column (see above) also its bare PostgreSQL text. Refused, with the reason: a
// datum of another type than the column's, null for a column that is not nullable, an unquoted
// string, a bad escape, text after a string's closing quote, a value the column's type refuses.
Result<Datum> ParseDatumText(std::string_view text, const ColumnType& column = {});

// PostgreSQL's text form of a value of the column's type (what CSV fields and JSON strings hold,
// and what PostgresOutput prints): t/true/false…, 12, 1.5/NaN/Infinity, the string as it is,
// 12.50, \x0a0b, 2026-12-06, … brought to the column's type as above. Not null, not kAny.
// Refused with PostgreSQL's words (invalid input syntax, out of range, too long).
Result<Datum> ParsePostgresText(std::string_view text, const ColumnType& column);
// A value of another kind brought to the column (REQUIRES: the datum's kind is the column's:
// int64 for int2/int4/int8, double for float4/float8, …): the range, rounding, length and padding
// rules above. What the JSON-lines reader uses for a number read for a numeric column, too.
Result<Datum> FitToColumn(Datum datum, const ColumnType& column);

// Splits "d1, d2, ..." at the commas outside double quotes and typed literals' single quotes (a
// comma inside a quoted string belongs to the string), each part without the blanks around it.
// Refuses an unterminated string.
Result<std::vector<std::string>> SplitDatumList(std::string_view text);

}  // namespace tandem
