// Values as text, shared by the CSV and JSON-lines formats (workers/README.md "CSV and JSON-lines
// sources"): pure functions of bytes, no I/O. Their numbers are read as the datum syntax reads
// them (base/datum_text.h).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool ValidUtf8(std::string_view s);

// The first line of a file without its UTF-8 byte-order mark (EF BB BF), if it starts with one:
// editors and spreadsheet exports write it, and PostgreSQL's COPY and CSV readers skip it.
std::string_view WithoutByteOrderMark(std::string_view first_line);

// `true` / `false`, case-insensitive (CSV; the datum syntax has only the lower-case words).
bool ParseBoolText(std::string_view s, bool* out);

// A field's text read as PostgreSQL's text form for its column (ParsePostgresText: `12.50`,
// `2026-12-06 12:00:00+00`, `1 day 02:00:00`, `\x0a0b`, typmods applied): "" with *out set, or
// the reason, naming the column.
std::string ReadPostgresText(std::string_view text, const pb::Column& column, Datum* out);
// A datum of the column's kind brought to its type (FitToColumn: int2/int4 ranges, float4
// rounding, varchar/char lengths, numeric(p,s)): "" or the reason, naming the column.
std::string FitDatumToColumn(const pb::Column& column, Datum* datum);

// Where each schema column is in an upsert key: key_pos[c] = its position in `upsert_key`, or -1.
std::vector<int> KeyPositions(const pb::Schema& schema,
                              const std::vector<std::uint32_t>& upsert_key);

}  // namespace tandem::ipc
