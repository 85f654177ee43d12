// Values as text, shared by the CSV and JSON-lines formats (workers/README.md "CSV and JSON-lines
// sources"): pure functions of bytes, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::workers {

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool ValidUtf8(std::string_view s);

// The first line of a file without its UTF-8 byte-order mark (EF BB BF), if it starts with one:
// editors and spreadsheet exports write it, and PostgreSQL's COPY and CSV readers skip it.
std::string_view WithoutByteOrderMark(std::string_view first_line);

// A decimal int64 (`-12`; no `+`, no spaces), in range.
bool ParseInt64Text(std::string_view s, std::int64_t* out);
// A float64 as the log format writes it: a decimal (`1.5`, `-0.0`, `2e10`, `12`) or `nan`, `inf`,
// `-inf`. No spaces, no hex; a finite text out of the float64 range is refused.
bool ParseFloat64Text(std::string_view s, double* out);
// `true` / `false`, case-insensitive.
bool ParseBoolText(std::string_view s, bool* out);

// Where each schema column is in an upsert key: key_pos[c] = its position in `upsert_key`, or -1.
std::vector<int> KeyPositions(const ipc::pb::Schema& schema,
                              const std::vector<std::uint32_t>& upsert_key);

}  // namespace tandem::workers
