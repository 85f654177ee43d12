// The JSON-lines format of a json_lines source and of `tandem-ctl load` (workers/README.md "CSV
// and JSON-lines sources"): one JSON object per line, its fields matched to the schema's columns
// by name. A strict parser of its own (RFC 8259; no JSON library), pure, unit-tested and fuzzed
// (tests/fuzz/fuzz_csv_json.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ipc/codec.h"
#include "ipc/formats/source_record.h"

namespace tandem::ipc {

// Nesting deeper than this (in fields the schema does not have) is bad data.
inline constexpr int kMaxJsonDepth = 64;

// One line (without its newline). nullopt for a blank line (only spaces, tabs, \r); else the
// record (kUpdate with diff 1 without an upsert key; with one, kDelete when the object has no
// non-key column of the schema at all — and the schema has one —, else kUpsert), or why the line
// is bad data (without the "json line N: " the caller puts before it).
std::optional<std::variant<SourceRecord, std::string>> ParseJsonLine(
    std::string_view line, const pb::Schema& schema, const std::vector<std::uint32_t>& upsert_key);

}  // namespace tandem::ipc
