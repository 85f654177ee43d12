#include "tools/ctl/schema.h"

#include <charconv>
#include <string>

#include "base/datum_text.h"
#include "base/json.h"
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
  switch (type) {
    case pb::BOOL:
      return "bool";
    case pb::INT64:
      return "int64";
    case pb::FLOAT64:
      return "float64";
    case pb::STRING:
      return "string";
    default:
      return "?";
  }
}

Result<pb::Schema> ParseSchema(const std::string& text) {
  pb::Schema schema;
  if (Trim(text).empty()) return Status::InvalidArgument("the schema is empty");
  for (const std::string& part : Split(text, ',')) {
    const std::string item = Trim(part);
    const auto colon = item.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::InvalidArgument("schema column \"" + item +
                                     "\": expected name:type (types bool, int64, float64, "
                                     "string; a trailing ? makes it nullable)");
    }
    std::string type = item.substr(colon + 1);
    const bool nullable = !type.empty() && type.back() == '?';
    if (nullable) type.pop_back();
    pb::ScalarType t;
    if (type == "bool") {
      t = pb::BOOL;
    } else if (type == "int64") {
      t = pb::INT64;
    } else if (type == "float64") {
      t = pb::FLOAT64;
    } else if (type == "string") {
      t = pb::STRING;
    } else {
      return Status::InvalidArgument("schema column \"" + item + "\": unknown type \"" + type +
                                     "\" (bool, int64, float64, string)");
    }
    *schema.add_columns() = MakeColumn(item.substr(0, colon), t, nullable);
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
