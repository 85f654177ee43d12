#include "tools/ctl/schema.h"

#include <charconv>
#include <string>

#include "base/datum_text.h"
#include "base/json.h"
#include "base/numeric.h"
#include "ipc/plan_typing.h"
#include "ipc/rows.h"

namespace tandem::ctl {

namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

pb::Column MakeColumn(const std::string& name, pb::ScalarType type, bool nullable) {
  pb::Column c;
  c.set_name(name);
  c.set_type(type);
  c.set_nullable(nullable);
  return c;
}

}  // namespace

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// ---------------------------------------------------------------------------------------------
// Schemas, columns, datums

std::string TypeName(pb::ScalarType type) {
  pb::Column column;
  column.set_type(type);
  return ColumnTypeText(column);
}

std::string ColumnTypeText(const pb::Column& column) {
  const ColumnType type = ipc::ColumnTypeOf(column);
  return type.kind == ColumnType::Kind::kAny ? "?" : ColumnTypeName(type);
}

namespace {

constexpr char kTypeWords[] =
    "bool, int2, int4, int8 (int64), float4, float8 (float64), numeric, numeric(p), "
    "numeric(p,s), string (text), varchar(n), char(n), bytea, date, time, timestamp, "
    "timestamptz, interval, uuid";

// `word(a)` or `word(a,b)`: the word and the numbers in parentheses (none: no parentheses).
bool SplitTypmods(const std::string& type, std::string* word, std::vector<std::uint32_t>* mods) {
  const auto open = type.find('(');
  *word = Trim(type.substr(0, open));
  if (open == std::string::npos) return true;
  if (type.back() != ')') return false;
  for (const std::string& part : Split(type.substr(open + 1, type.size() - open - 2), ',')) {
    const std::string n = Trim(part);
    std::uint32_t v = 0;
    const auto r = std::from_chars(n.data(), n.data() + n.size(), v);
    if (n.empty() || r.ec != std::errc() || r.ptr != n.data() + n.size()) return false;
    mods->push_back(v);
  }
  return !mods->empty();
}

// One column's type words ("numeric(12,2)", "varchar(10)", "int4") into `column`; the reason
// when they are not a type.
std::string ParseColumnType(const std::string& type, pb::Column* column) {
  std::string word;
  std::vector<std::uint32_t> mods;
  if (!SplitTypmods(type, &word, &mods)) return "bad type modifiers in \"" + type + "\"";
  static const std::map<std::string, pb::ScalarType> kWords = {{"bool", pb::BOOL},
                                                               {"boolean", pb::BOOL},
                                                               {"int2", pb::INT16},
                                                               {"smallint", pb::INT16},
                                                               {"int4", pb::INT32},
                                                               {"int", pb::INT32},
                                                               {"integer", pb::INT32},
                                                               {"int8", pb::INT64},
                                                               {"int64", pb::INT64},
                                                               {"bigint", pb::INT64},
                                                               {"float4", pb::FLOAT32},
                                                               {"real", pb::FLOAT32},
                                                               {"float8", pb::FLOAT64},
                                                               {"float64", pb::FLOAT64},
                                                               {"string", pb::STRING},
                                                               {"text", pb::STRING},
                                                               {"varchar", pb::STRING},
                                                               {"char", pb::STRING},
                                                               {"numeric", pb::NUMERIC},
                                                               {"decimal", pb::NUMERIC},
                                                               {"bytea", pb::BYTEA},
                                                               {"date", pb::DATE},
                                                               {"time", pb::TIME},
                                                               {"timestamp", pb::TIMESTAMP},
                                                               {"timestamptz", pb::TIMESTAMPTZ},
                                                               {"interval", pb::INTERVAL},
                                                               {"uuid", pb::UUID}};
  const auto it = kWords.find(word);
  if (it == kWords.end()) return "unknown type \"" + type + "\" (" + kTypeWords + ")";
  column->set_type(it->second);
  if (word == "varchar" || word == "char") {
    // char without a length is char(1), as in PostgreSQL; varchar without one is unbounded.
    if (mods.size() > 1) return "\"" + type + "\": one length, " + word + "(n)";
    const std::uint32_t n = mods.empty() ? (word == "char" ? 1 : 0) : mods[0];
    if (!mods.empty() && (n == 0 || n > ipc::kMaxStringLength)) {
      return "\"" + type + "\": the length must be 1 to " + std::to_string(ipc::kMaxStringLength);
    }
    column->set_length(n);
    column->set_blank_padded(word == "char");
    return "";
  }
  if (it->second == pb::NUMERIC) {
    if (mods.size() > 2) return "\"" + type + "\": numeric(precision) or numeric(precision,scale)";
    if (!mods.empty()) {
      const std::uint32_t p = mods[0], sc = mods.size() == 2 ? mods[1] : 0;
      if (p < 1 || p > static_cast<std::uint32_t>(kNumericMaxDigits) || sc > p) {
        return "\"" + type + "\": the precision must be 1 to 38 and the scale 0 to the precision";
      }
      column->set_precision(p);
      column->set_scale(sc);
    }
    return "";
  }
  if (!mods.empty()) return "\"" + type + "\": " + word + " takes no type modifiers";
  return "";
}

// Splits at the commas outside parentheses ("p:numeric(12,2),k:int4").
std::vector<std::string> SplitColumns(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    cur.push_back(c);
  }
  out.push_back(cur);
  return out;
}

}  // namespace

Result<pb::Schema> ParseSchema(const std::string& text) {
  pb::Schema schema;
  if (Trim(text).empty()) return Status::InvalidArgument("the schema is empty");
  for (const std::string& part : SplitColumns(text)) {
    const std::string item = Trim(part);
    const auto colon = item.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::InvalidArgument("schema column \"" + item + "\": expected name:type (types " +
                                     kTypeWords + "; a trailing ? makes it nullable)");
    }
    std::string type = Trim(item.substr(colon + 1));
    const bool nullable = !type.empty() && type.back() == '?';
    if (nullable) type.pop_back();
    pb::Column column = MakeColumn(item.substr(0, colon), pb::SCALAR_TYPE_UNSPECIFIED, nullable);
    if (std::string why = ParseColumnType(Trim(type), &column); !why.empty()) {
      return Status::InvalidArgument("schema column \"" + item + "\": " + why);
    }
    *schema.add_columns() = std::move(column);
  }
  return schema;
}

Result<std::vector<std::uint32_t>> ParseColumns(const std::string& text, const pb::Schema& schema) {
  std::vector<std::uint32_t> out;
  for (const std::string& part : Split(text, ',')) {
    const std::string item = Trim(part);
    if (item.empty()) return Status::InvalidArgument("empty column in \"" + text + "\"");
    bool found = false;
    for (int i = 0; i < schema.columns_size(); ++i) {
      if (schema.columns(i).name() == item) {
        out.push_back(static_cast<std::uint32_t>(i));
        found = true;
        break;
      }
    }
    if (found) continue;
    std::uint32_t n = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), n);
    if (r.ec != std::errc() || r.ptr != item.data() + item.size()) {
      std::string names;
      for (const auto& c : schema.columns()) names += (names.empty() ? "" : ", ") + c.name();
      return Status::InvalidArgument("unknown column \"" + item + "\"" +
                                     (names.empty() ? "" : " (columns: " + names + ")"));
    }
    out.push_back(n);
  }
  return out;
}

namespace {
// What ParseDatumText is told of `column`: any datum when there is no column or the history does
// not know its type.
ColumnType DatumColumn(const pb::Column* column) {
  if (!column) return {};
  ColumnType t = ipc::ColumnTypeOf(*column);
  if (t.kind == ColumnType::Kind::kAny) t.nullable = true;
  return t;
}
}  // namespace

Result<pb::Datum> ParseDatum(const std::string& text, const pb::Column* column) {
  auto d = ParseDatumText(Trim(text), DatumColumn(column));
  if (!d.ok()) return d.status();
  return ipc::ToProto(*d);
}

Result<pb::Row> ParseKey(const std::string& text, const std::vector<const pb::Column*>& columns) {
  auto parts = SplitDatumList(text);
  if (!parts.ok()) return parts.status();
  if (!columns.empty() && parts->size() != columns.size()) {
    std::string names;
    for (const auto* c : columns) {
      names += (names.empty() ? "" : ", ") + (c && !c->name().empty() ? c->name() : "?");
    }
    return Status::InvalidArgument(std::to_string(parts->size()) +
                                   (parts->size() == 1 ? " datum" : " datums") +
                                   ", but the index's key has " + std::to_string(columns.size()) +
                                   " column" + (columns.size() == 1 ? "" : "s") + " (" + names +
                                   "): give one datum per key column, comma-separated");
  }
  pb::Row row;
  for (std::size_t i = 0; i < parts->size(); ++i) {
    auto d = ParseDatum((*parts)[i], columns.empty() ? nullptr : columns[i]);
    if (!d.ok()) return d.status();
    *row.add_datums() = std::move(*d);
  }
  return row;
}

std::string DatumText(const pb::Datum& d) { return tandem::DatumText(ipc::FromProto(d)); }

std::string JsonString(const std::string& text) { return JsonQuote(text); }

}  // namespace tandem::ctl
