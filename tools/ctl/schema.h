// tandem-ctl: schemas, columns and datums as the command line spells them. (A plan's schema is
// ipc::PlanSchema, the validator's.)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ctl {

namespace pb = ipc::pb;

// `s` without leading and trailing blanks.
std::string Trim(const std::string& s);

// "k:int64,name:string?,price:numeric(12,2),d:date" → columns; '?' marks a nullable column. The
// type words: bool, int2, int4, int8/int64, float4, float8/float64, numeric[(p[,s])],
// string/text, varchar(n), char(n), bytea, date, time, timestamp, timestamptz, interval, uuid (and
// PostgreSQL's names: smallint, integer, bigint, real, boolean, decimal).
Result<pb::Schema> ParseSchema(const std::string& text);
// "k,2" → column positions, resolving names against `schema`.
Result<std::vector<std::uint32_t>> ParseColumns(const std::string& text, const pb::Schema& schema);
// One datum in the datum syntax (base/datum_text.h; blanks around it ignored), typed by `column`
// (none: any type).
Result<pb::Datum> ParseDatum(const std::string& text, const pb::Column* column);
// One key: comma-separated datums (commas inside quoted strings are part of the string), typed
// by `columns` when known (then their number must match).
Result<pb::Row> ParseKey(const std::string& text, const std::vector<const pb::Column*>& columns);
std::string DatumText(const pb::Datum& datum);  // the datum syntax, for tables
std::string JsonString(const std::string& text);
// A type in the schema words ("int4", "timestamptz"; "?" for none); a column's with its typmods
// ("numeric(12,2)", "varchar(10)").
std::string TypeName(pb::ScalarType type);
std::string ColumnTypeText(const pb::Column& column);

}  // namespace tandem::ctl
