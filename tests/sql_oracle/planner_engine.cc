#include "sql_oracle/planner_engine.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>
#include <utility>
#include <variant>

#include "base/datum_text.h"
#include "frontend/plan/planner.h"
#include "frontend/sql/parse.h"
#include "frontend/sqlstate.h"
#include "reference/reference.h"

namespace tandem::testing::sql_oracle {
namespace {

constexpr char kQueryId[] = "t_oracle_query";

PgAnswer ErrorAnswer(std::string sqlstate, std::string message) {
  PgAnswer answer;
  PgError error;
  error.sqlstate = std::move(sqlstate);
  error.message = std::move(message);
  answer.error = std::move(error);
  return answer;
}

Datum DatumFromText(const SqlValue& value, SqlType type) {
  if (!value) return Null{};
  switch (type) {
    case SqlType::kBigint:
      return static_cast<std::int64_t>(std::strtoll(value->c_str(), nullptr, 10));
    case SqlType::kDouble:
    case SqlType::kFloat4:
      return std::strtod(value->c_str(), nullptr);
    case SqlType::kText:
    case SqlType::kVarchar:
    case SqlType::kChar:  // PostgreSQL's output is padded, as the datum
      return *value;
    case SqlType::kBool:
      return *value == "t";
    case SqlType::kInt4:
    case SqlType::kInt2:
      return static_cast<std::int64_t>(std::strtoll(value->c_str(), nullptr, 10));
    case SqlType::kNumeric12_4:
    case SqlType::kNumericAny:
    case SqlType::kBytea:
    case SqlType::kTime:
    case SqlType::kTimestampTz:
    case SqlType::kUuid:
    case SqlType::kNumeric:
    case SqlType::kDate:
    case SqlType::kTimestamp:
    case SqlType::kInterval:
      // Not given to this engine: the reference evaluator has no numeric and time datums yet
      // (its suite runs without WorkloadOptions::new_types); the text stands in.
      return *value;
  }
  return Null{};
}

// A datum in PostgreSQL's text format (floats in a shortest form that reads back exactly).
SqlValue DatumText(const Datum& datum) {
  if (std::holds_alternative<Null>(datum)) return std::nullopt;
  if (const bool* b = std::get_if<bool>(&datum)) return std::string(*b ? "t" : "f");
  if (const std::int64_t* i = std::get_if<std::int64_t>(&datum)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&datum)) {
    if (std::isnan(*d)) return std::string("NaN");
    if (std::isinf(*d)) return std::string(*d > 0 ? "Infinity" : "-Infinity");
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, *d);
    return std::string(buffer, result.ptr);
  }
  if (const auto* s = std::get_if<std::string>(&datum)) return *s;
  return PostgresOutput(datum);  // numeric, bytea, date, time, timestamps, interval, uuid
}

unsigned OidOf(ipc::pb::ScalarType type) {
  switch (type) {
    case ipc::pb::BOOL:
      return pg_type::kBool;
    case ipc::pb::INT16:
      return pg_type::kInt2;
    case ipc::pb::INT32:
      return pg_type::kInt4;
    case ipc::pb::INT64:
      return pg_type::kInt8;
    case ipc::pb::FLOAT32:
      return pg_type::kFloat4;
    case ipc::pb::FLOAT64:
      return pg_type::kFloat8;
    case ipc::pb::NUMERIC:
      return pg_type::kNumeric;
    case ipc::pb::STRING:
      return pg_type::kText;
    case ipc::pb::DATE:
      return pg_type::kDate;
    case ipc::pb::TIMESTAMP:
      return pg_type::kTimestamp;
    case ipc::pb::INTERVAL:
      return pg_type::kInterval;
    default:
      return 0;
  }
}

// The SQLSTATE PostgreSQL gives the reference evaluator's data errors.
std::string DataErrorState(const std::string& message) {
  if (message.find("division by zero") != std::string::npos) return "22012";
  if (message.find("overflow") != std::string::npos) return "22003";
  return sqlstate::kInternalError;
}

}  // namespace

std::string PlannerEngine::Load(const Database& database) {
  catalog_.Reset(database, frontend::plan::kOneRowObject);
  rows_.clear();
  rows_.emplace_back(OracleCatalog::kOneRowId, std::vector<Row>{Row{std::int64_t{1}}});
  for (std::size_t t = 0; t < database.tables.size(); ++t) {
    const TableSchema& table = database.tables[t];
    std::vector<Row> rows;
    for (const SqlRow& text : database.rows[t]) {
      Row row;
      for (std::size_t c = 0; c < table.columns.size(); ++c) {
        row.push_back(DatumFromText(c < text.size() ? text[c] : SqlValue(), table.columns[c].type));
      }
      rows.push_back(std::move(row));
    }
    rows_.emplace_back(catalog_.FindObject(table.name)->id, std::move(rows));
  }
  return "";
}

PgAnswer PlannerEngine::Query(const std::string& sql) {
  sql::SqlResult<std::vector<sql::ParsedStatement>> parsed = sql::Parse(sql);
  if (!parsed.ok()) return ErrorAnswer(parsed.error().sqlstate, parsed.error().message);
  if (parsed->size() != 1 || !std::holds_alternative<sql::PostgresStatement>((*parsed)[0].form)) {
    return ErrorAnswer(sqlstate::kFeatureNotSupported, "not one SELECT statement");
  }
  const pg_query::Node& statement = std::get<sql::PostgresStatement>((*parsed)[0].form).stmt;
  auto planned = frontend::plan::PlanQuery(statement, catalog_, sql);
  if (!planned.ok()) return ErrorAnswer(planned.error().sqlstate, planned.error().message);

  ipc::pb::DataflowDescription desc;
  desc.set_debug_name("sql-oracle");
  for (const ipc::pb::IndexImport& import : planned->imports) *desc.add_index_imports() = import;
  ipc::pb::BuildDesc* build = desc.add_objects_to_build();
  build->set_id(kQueryId);
  *build->mutable_plan() = planned->plan;
  desc.mutable_as_of()->add_elements(0);
  reference::Evaluator evaluator(desc);
  // Each table's rows once, under its collection id, which every import of it reads.
  std::set<std::string> loaded;
  for (const ipc::pb::IndexImport& import : planned->imports) {
    if (!loaded.insert(import.on()).second) continue;
    const std::vector<Row>* rows = nullptr;
    for (const auto& [id, table_rows] : rows_) {
      if (id == import.on()) rows = &table_rows;
    }
    if (rows == nullptr) {
      return ErrorAnswer(sqlstate::kInternalError, "the plan imports " + import.id() +
                                                       " on unknown collection " + import.on());
    }
    std::vector<reference::Update> updates;
    for (const Row& row : *rows) updates.push_back(reference::Update{row, 0, 1});
    evaluator.AddUpdates(import.on(), updates);
  }
  Result<reference::Contents> contents = evaluator.At(kQueryId, 0);
  if (!contents.ok()) {
    return ErrorAnswer(sqlstate::kInternalError,
                       "the reference evaluator: " + contents.status().ToString());
  }
  if (contents->HasError()) {
    return ErrorAnswer(DataErrorState(contents->FirstError()), contents->FirstError());
  }
  const reference::PeekAnswer finished =
      reference::AnswerPeek(*contents, {}, {}, ipc::pb::MapFilterProject(), planned->finishing);
  if (!finished.ok) return ErrorAnswer(DataErrorState(finished.error), finished.error);

  PgAnswer answer;
  for (const auto& column : planned->columns) {
    answer.column_names.push_back(column.name);
    answer.column_types.push_back(OidOf(column.type));
  }
  for (const auto& [row, count] : finished.rows) {
    SqlRow text;
    for (const Datum& datum : row) text.push_back(sql_oracle::DatumText(datum));
    for (std::uint64_t i = 0; i < count; ++i) answer.rows.push_back(text);
  }
  answer.command_tag = "SELECT " + std::to_string(answer.rows.size());
  return answer;
}

}  // namespace tandem::testing::sql_oracle
