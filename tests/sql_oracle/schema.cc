#include "sql_oracle/schema.h"

namespace tandem::testing::sql_oracle {

const char* SqlTypeName(SqlType type) {
  switch (type) {
    case SqlType::kBigint:
      return "bigint";
    case SqlType::kDouble:
      return "double precision";
    case SqlType::kText:
      return "text";
    case SqlType::kBool:
      return "boolean";
    case SqlType::kInt4:
      return "integer";
    case SqlType::kNumeric:
      return "numeric(10,2)";
    case SqlType::kDate:
      return "date";
    case SqlType::kTimestamp:
      return "timestamp";
    case SqlType::kInterval:
      return "interval";
    case SqlType::kInt2:
      return "smallint";
    case SqlType::kFloat4:
      return "real";
    case SqlType::kNumeric12_4:
      return "numeric(12,4)";
    case SqlType::kNumericAny:
      return "numeric";
    case SqlType::kVarchar:
      return "varchar(4)";
    case SqlType::kChar:
      return "char(3)";
    case SqlType::kBytea:
      return "bytea";
    case SqlType::kTime:
      return "time";
    case SqlType::kTimestampTz:
      return "timestamptz";
    case SqlType::kUuid:
      return "uuid";
  }
  return "?";
}

SqlType ExpressionType(SqlType type) {
  switch (type) {
    case SqlType::kNumeric12_4:
    case SqlType::kNumericAny:
      return SqlType::kNumeric;
    case SqlType::kVarchar:
      return SqlType::kText;
    default:
      return type;
  }
}

bool IsNewType(SqlType type) {
  return type != SqlType::kBigint && type != SqlType::kDouble && type != SqlType::kText &&
         type != SqlType::kBool;
}

unsigned SqlTypeOid(SqlType type) {
  switch (type) {
    case SqlType::kBigint:
      return pg_type::kInt8;
    case SqlType::kDouble:
      return pg_type::kFloat8;
    case SqlType::kText:
      return pg_type::kText;
    case SqlType::kBool:
      return pg_type::kBool;
    case SqlType::kInt4:
      return pg_type::kInt4;
    case SqlType::kNumeric:
      return pg_type::kNumeric;
    case SqlType::kDate:
      return pg_type::kDate;
    case SqlType::kTimestamp:
      return pg_type::kTimestamp;
    case SqlType::kInterval:
      return pg_type::kInterval;
    case SqlType::kInt2:
      return pg_type::kInt2;
    case SqlType::kFloat4:
      return pg_type::kFloat4;
    case SqlType::kNumeric12_4:
    case SqlType::kNumericAny:
      return pg_type::kNumeric;
    case SqlType::kVarchar:
      return pg_type::kVarchar;
    case SqlType::kChar:
      return pg_type::kBpchar;
    case SqlType::kBytea:
      return pg_type::kBytea;
    case SqlType::kTime:
      return pg_type::kTime;
    case SqlType::kTimestampTz:
      return pg_type::kTimestampTz;
    case SqlType::kUuid:
      return pg_type::kUuid;
  }
  return 0;
}

std::string QuoteText(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string SqlLiteral(const SqlValue& value, SqlType type) {
  if (!value) return "NULL";
  switch (type) {
    case SqlType::kBigint:
    case SqlType::kDouble:
    case SqlType::kInt4:
    case SqlType::kNumeric:
    case SqlType::kNumeric12_4:
    case SqlType::kNumericAny:
      return *value;
    case SqlType::kText:
    case SqlType::kVarchar:
      return QuoteText(*value);
    case SqlType::kChar:
      return QuoteText(*value) + "::char(3)";
    case SqlType::kInt2:
      return QuoteText(*value) + "::smallint";
    case SqlType::kFloat4:
      return QuoteText(*value) + "::real";
    case SqlType::kBytea:
      return QuoteText(*value) + "::bytea";
    case SqlType::kTime:
      return QuoteText(*value) + "::time";
    case SqlType::kTimestampTz:
      return QuoteText(*value) + "::timestamptz";
    case SqlType::kUuid:
      return QuoteText(*value) + "::uuid";
    case SqlType::kBool:
      return *value == "t" ? "true" : "false";
    case SqlType::kDate:
      return "DATE " + QuoteText(*value);
    case SqlType::kTimestamp:
      return "TIMESTAMP " + QuoteText(*value);
    case SqlType::kInterval:
      return "INTERVAL " + QuoteText(*value);
  }
  return "NULL";
}

std::string TableSchema::CreateSql() const {
  std::string sql = "CREATE TABLE " + name + " (";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql += ", ";
    sql += columns[i].name + " " + SqlTypeName(columns[i].type);
    if (columns[i].not_null) sql += " NOT NULL";
  }
  if (!primary_key.empty()) {
    sql += ", PRIMARY KEY (";
    for (std::size_t i = 0; i < primary_key.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += columns[primary_key[i]].name;
    }
    sql += ")";
  }
  return sql + ")";
}

std::string Database::SchemaSql() const {
  std::string sql;
  for (const TableSchema& table : tables) sql += table.CreateSql() + ";\n";
  return sql;
}

std::string Database::ContentsSql() const {
  std::string sql;
  for (std::size_t t = 0; t < tables.size() && t < rows.size(); ++t) {
    if (rows[t].empty()) continue;
    sql += "INSERT INTO " + tables[t].name + " VALUES";
    for (std::size_t r = 0; r < rows[t].size(); ++r) {
      sql += r == 0 ? " (" : ", (";
      for (std::size_t c = 0; c < tables[t].columns.size(); ++c) {
        if (c > 0) sql += ", ";
        const SqlValue value = c < rows[t][r].size() ? rows[t][r][c] : SqlValue();
        sql += SqlLiteral(value, tables[t].columns[c].type);
      }
      sql += ")";
    }
    sql += ";\n";
  }
  return sql;
}

std::string Database::ScriptSql() const { return SchemaSql() + ContentsSql(); }

}  // namespace tandem::testing::sql_oracle
