#include "frontend/server/prepared_statements.h"

#include <map>

#include "base/utf8.h"
#include "frontend/pgwire/pg_type.h"
#include "frontend/server/binary_values.h"
#include "frontend/server/sql_answers.h"
#include "frontend/sql/parameters.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

namespace {

struct NamedType {
  std::uint32_t oid;
  std::string_view name;
};
constexpr NamedType kParameterTypes[] = {
    {pgwire::kBool.oid, "bool"},           {pgwire::kBytea.oid, "bytea"},
    {pgwire::kInt8.oid, "int8"},           {pgwire::kInt2.oid, "int2"},
    {pgwire::kInt4.oid, "int4"},           {pgwire::kText.oid, "text"},
    {pgwire::kFloat4.oid, "float4"},       {pgwire::kFloat8.oid, "float8"},
    {pgwire::kBpchar.oid, "bpchar"},       {pgwire::kVarchar.oid, "varchar"},
    {pgwire::kDate.oid, "date"},           {pgwire::kTime.oid, "time"},
    {pgwire::kTimestamp.oid, "timestamp"}, {pgwire::kTimestamptz.oid, "timestamptz"},
    {pgwire::kInterval.oid, "interval"},   {pgwire::kNumeric.oid, "numeric"},
    {pgwire::kUuid.oid, "uuid"},
};

}  // namespace

std::optional<std::string_view> ParameterTypeName(std::uint32_t oid) {
  for (const auto& t : kParameterTypes) {
    if (t.oid == oid) return t.name;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> ParameterTypeOid(std::string_view name) {
  for (const auto& t : kParameterTypes) {
    if (t.name == name) return t.oid;
  }
  return std::nullopt;
}

sql::SqlResult<Portal> BindPortal(std::shared_ptr<const PreparedStatement> prepared,
                                  const pgwire::BindRequest& request) {
  const std::vector<std::uint32_t>& types = prepared->parameter_types;
  if (request.parameters.size() != types.size()) {
    return sql::SqlError(sqlstate::kProtocolViolation,
                         "bind message supplies " + std::to_string(request.parameters.size()) +
                             " parameters, but prepared statement \"" + request.statement +
                             "\" requires " + std::to_string(types.size()),
                         0);
  }
  // Each parameter's value as the constant that replaces it.
  std::vector<pg_query::Node> values;
  std::vector<std::optional<std::string>> texts(types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    const auto& value = request.parameters[i];
    if (!value.has_value()) continue;
    if (request.parameter_formats[i] == pgwire::Format::kBinary) {
      auto text = BinaryParameterText(*value, types[i], static_cast<int>(i + 1));
      if (!text.ok()) return text.error();
      texts[i] = std::move(*text);
    } else if (const auto bad = FindInvalidUtf8(*value)) {
      return sql::SqlError(sqlstate::kCharacterNotInRepertoire, InvalidUtf8Message(*value, *bad),
                           0);
    } else {
      texts[i] = *value;
    }
  }
  Portal portal;
  portal.prepared = prepared;
  portal.statement = prepared->statement;
  portal.result_formats = request.result_formats;
  if (portal.statement && !types.empty()) {
    sql::ReplaceParameters(*portal.statement, [&](int number, int location) {
      const std::size_t i = static_cast<std::size_t>(number - 1);  // CountParameters: 1 ..= size
      const std::string_view name = ParameterTypeName(types[i]).value_or("text");
      return texts[i] ? sql::StringConstant(*texts[i], name, location)
                      : sql::NullConstant(name, location);
    });
  }
  return portal;
}

sql::SqlResult<std::vector<pgwire::FieldDescription>> WithResultFormats(
    std::vector<pgwire::FieldDescription> fields, const std::vector<pgwire::Format>& formats) {
  if (formats.size() > 1 && formats.size() != fields.size()) {
    return sql::SqlError(sqlstate::kProtocolViolation,
                         "bind message has " + std::to_string(formats.size()) +
                             " result formats but query has " + std::to_string(fields.size()) +
                             " columns",
                         0);
  }
  for (std::size_t i = 0; i < fields.size() && !formats.empty(); ++i) {
    fields[i].format = formats.size() == 1 ? formats[0] : formats[i];
  }
  return fields;
}

bool SendPortalRows(pgwire::QuerySink& sink, Portal& portal,
                    std::chrono::steady_clock::time_point deadline) {
  std::uint64_t sent = 0;
  std::vector<pgwire::Value> values;
  const auto& fields = portal.fields;
  while (portal.next_row < portal.rows.rows_size()) {
    if (portal.max_rows != 0 && sent == portal.max_rows) return sink.PortalSuspended();
    const auto& r = portal.rows.rows(portal.next_row);
    values.clear();
    for (int c = 0; c < r.row().datums_size(); ++c) {
      const auto column = static_cast<std::size_t>(c);
      const pgwire::FieldDescription* field = column < fields.size() ? &fields[column] : nullptr;
      if (field != nullptr && field->format == pgwire::Format::kBinary) {
        values.push_back(PostgresBinary(r.row().datums(c), field->type.oid));
      } else {
        values.push_back(PostgresText(r.row().datums(c),
                                      field != nullptr && field->type.oid == pgwire::kFloat4.oid));
      }
    }
    while (portal.next_copy < r.count()) {
      if (portal.max_rows != 0 && sent == portal.max_rows) return sink.PortalSuspended();
      if (!WaitToSendRow(sink, deadline) || !sink.DataRow(values)) return false;
      ++sent;
      ++portal.next_copy;
    }
    ++portal.next_row;
    portal.next_copy = 0;
  }
  // Every row sent: the portal keeps its columns only (a later Execute answers "SELECT 0").
  portal.rows.Clear();
  portal.next_row = 0;
  return sink.CommandComplete("SELECT " + std::to_string(sent));
}

}  // namespace tandem::frontend
