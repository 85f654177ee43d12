// The database a differential run works on: its tables' schemas (bigint, double precision, text,
// boolean; with WorkloadOptions::new_types also every other type of DESIGN §16: smallint,
// integer, real, numeric(10,2), numeric(12,4), numeric, varchar(4), char(3), bytea, date, time,
// timestamp, timestamptz, interval, uuid), the write workload that made their contents, and
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

// The first four are the engine's original types; the rest are DESIGN §16's, in columns only
// with WorkloadOptions::new_types.
enum class SqlType {
  kBigint,
  kDouble,
  kText,
  kBool,
  kInt4,
  kNumeric,  // numeric(10,2) as a column; in expressions, numeric of any typmod
  kDate,
  kTimestamp,
  kInterval,
  kInt2,
  kFloat4,
  kNumeric12_4,  // numeric(12,4): a column type only (its expressions are kNumeric)
  kNumericAny,   // numeric without typmod: a column type only (likewise)
  kVarchar,      // varchar(4): a column type only (its expressions are kText)
  kChar,         // char(3), blank-padded: its own expression type, of char(3) values only
  kBytea,
  kTime,
  kTimestampTz,
  kUuid,
};

// The type of a column's values in expressions: PostgreSQL resolves the operators and functions
// of numeric(p,s) as numeric's and of varchar(n) as text's; other types are their own. char(3)
// stays apart from text: character equality ignores trailing blanks ('a' = 'a  '), so two
// character values that print apart could meet in one GROUP BY key, DISTINCT row or min; its
// expressions are all of char(3), padded alike (their literals '…'::char(3), their casts to
// char(3)), and text functions take it as text (without the blanks, as PostgreSQL casts it).
SqlType ExpressionType(SqlType type);
// A type beyond the engine's original four (bigint, double precision, text, boolean).
bool IsNewType(SqlType type);

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
// INTERVAL '1 day', '-2'::smallint, '1.25'::real, '\x0102'::bytea, '12:30:00'::time,
// '2026-12-01 00:00:00+00'::timestamptz, '…'::uuid, 'ab'::char(3) (the types of DESIGN §16
// typed, so a literal alone is of its type; numerics bare, numeric in PostgreSQL; varchar quoted,
// as text).
std::string SqlLiteral(const SqlValue& value, SqlType type);
// A string as a quoted SQL literal: 'it''s'.
std::string QuoteText(const std::string& text);

}  // namespace tandem::testing::sql_oracle
