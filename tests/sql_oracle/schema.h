// The database a differential run works on: its tables' schemas (bigint, double precision, text,
// boolean; with WorkloadOptions::new_types also integer, numeric(10,2), date, timestamp and
// interval of DESIGN §16), the write workload that made their contents, and
// those contents as PostgreSQL holds them after the workload — and their text as SQL, so that a
// failure can be replayed by hand in psql.
//
// Who writes what: the workload generator (workload.h) fills `tables` and `writes`;
// ApplyWorkload fills `rows` from PostgreSQL's answer. Engines only read a Database.
//
// Thread safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sql_rows.h"

namespace tandem::testing::sql_oracle {

enum class SqlType {
  kBigint,
  kDouble,
  kText,
  kBool,
  kInt4,
  kNumeric,
  kDate,
  kTimestamp,
  kInterval
};

// PostgreSQL's name of the type, as CREATE TABLE spells it: "bigint", "double precision", …
const char* SqlTypeName(SqlType type);
// The type's OID (pg_type in sql_rows.h).
unsigned SqlTypeOid(SqlType type);

struct ColumnSchema {
  std::string name;
  SqlType type = SqlType::kBigint;
  bool not_null = false;  // NOT NULL, or part of the primary key
};

struct TableSchema {
  std::string name;
  std::vector<ColumnSchema> columns;
  std::vector<std::size_t> primary_key;  // column positions; empty: none

  // "CREATE TABLE name (c bigint NOT NULL, …, PRIMARY KEY (c))"
  std::string CreateSql() const;
};

struct Database {
  std::uint64_t seed = 0;  // the workload generator's seed: it makes tables and writes again
  std::vector<TableSchema> tables;
  // INSERT/UPDATE/DELETE statements, in order, run after the CREATE TABLEs.
  std::vector<std::string> writes;
  // Per table (in `tables` order): its rows after the writes, as PostgreSQL answered
  // SELECT * (text format, sorted), duplicates included.
  std::vector<std::vector<SqlRow>> rows;

  // The CREATE TABLE statements, one per line, each ending in ';'.
  std::string SchemaSql() const;
  // INSERT statements that give each table `rows` (one per non-empty table), each ending in ';'.
  std::string ContentsSql() const;
  // SchemaSql, then ContentsSql: the script that makes this database in psql.
  std::string ScriptSql() const;
};

// A value of `type` as an SQL literal: NULL, 12, 1.5, 'it''s', true, DATE '2026-12-06',
// INTERVAL '1 day' (the types of DESIGN §16 typed, so a literal alone is of its type).
std::string SqlLiteral(const SqlValue& value, SqlType type);
// A string as a quoted SQL literal: 'it''s'.
std::string QuoteText(const std::string& text);

}  // namespace tandem::testing::sql_oracle
