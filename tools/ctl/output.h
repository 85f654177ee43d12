// tandem-ctl: how responses, frontiers and rows are printed, as tables and as the JSON of
// docs/formats.md "Output of the tools".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ipc/codec.h"
#include "tools/common/format.h"

namespace tandem::ctl {

namespace pb = ipc::pb;

// The name of column `i`, or "cI" when the schema does not name it.
std::string ColumnName(const pb::Schema& schema, int i);
// A frontier's time, or "closed" for the empty frontier.
std::string FrontierText(const pb::Frontier& f);

// The frontier object, the same in `frontiers` and `watch`:
// {"id", "write", "input", "output" (times, null when empty), "closed"}.
void FrontiersJson(tools::JsonWriter& json, const pb::Frontiers& f);
// {"row": [datums], "count": n} per row.
void RowsJson(tools::JsonWriter& json, const pb::Rows& rows);
// One response as `watch` and `run` print it with --json.
std::string ResponseJson(const pb::Response& r);
// One response as `watch` and `run` print it: ResponseJson with --json, else one line of text.
void PrintResponse(const pb::Response& r);

// The rows of a peek answer, as `peek` and `query` print them: a table and "(N rows of OF at time
// T, MS ms)", or with --json {"id", extra fields…, "time", "closed", "latency_ms", "columns",
// "rows"}.
void PrintRows(const std::string& id, const pb::Schema& schema, std::uint64_t time, bool closed,
               double ms, const pb::PeekResponse& answer, const std::string& of,
               const std::function<void(tools::JsonWriter&)>& extra = {});

// Left-aligned columns two blanks apart, a rule under the headers.
void PrintTable(const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows);

}  // namespace tandem::ctl
