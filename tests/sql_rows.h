// Answers to SQL statements as a client receives them in text format (from PostgreSQL or from
// Tandem's frontend, both through libpq: pg_connection.h), and their comparison — the check of
// the differential suites, where PostgreSQL's answer is the expected one.
//
// Equality of two values (ValuesMatch):
//   * NULL equals NULL and nothing else; the empty string is a value, not NULL.
//   * A column whose type (the expected answer's OID) is float4 or float8 is compared as numbers,
//     not spellings: both texts parsed (strtof/strtod, which read PostgreSQL's "NaN", "Infinity",
//     "-Infinity"), equal when they are the same number — NaN equals NaN and -0 equals 0, as
//     PostgreSQL's float8eq says — or, with `float_ulps` > 0, at most that many units in the last
//     place apart. Why numbers: PostgreSQL 15 prints a float in its shortest exact form
//     (extra_float_digits = 1, the default since 12), so one number has one text, and comparing
//     parsed numbers exactly is comparing the texts except for how they are spelled; the spelling
//     is the output function's contract, checked by its own tests against PostgreSQL (or here with
//     `float_text`). `float_ulps` is for answers whose last bits legitimately depend on the order
//     of additions (sum and avg of floats: PostgreSQL adds in scan order, a dataflow in its own).
//   * Every other value is compared as text, exactly: int, bool, numeric (its scale is part of
//     its text: 1.50 is not 1.5), text.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem::testing {

// One value in text format; nullopt is SQL NULL.
using SqlValue = std::optional<std::string>;
using SqlRow = std::vector<SqlValue>;

// The type OIDs of pg_type that the suites name (fixed since PostgreSQL 7; a client sees them in
// RowDescription).
namespace pg_type {
inline constexpr unsigned kBool = 16;
inline constexpr unsigned kBytea = 17;
inline constexpr unsigned kInt8 = 20;
inline constexpr unsigned kInt2 = 21;
inline constexpr unsigned kInt4 = 23;
inline constexpr unsigned kText = 25;
inline constexpr unsigned kFloat4 = 700;
inline constexpr unsigned kFloat8 = 701;
inline constexpr unsigned kBpchar = 1042;
inline constexpr unsigned kVarchar = 1043;
inline constexpr unsigned kDate = 1082;
inline constexpr unsigned kTime = 1083;
inline constexpr unsigned kTimestamp = 1114;
inline constexpr unsigned kTimestampTz = 1184;
inline constexpr unsigned kInterval = 1186;
inline constexpr unsigned kNumeric = 1700;
inline constexpr unsigned kUuid = 2950;
}  // namespace pg_type

// An error answered by the server (ErrorResponse), or by the client library when there was no
// answer (connection refused or lost: then `sqlstate` is empty). What a client received over the
// wire — not sql::SqlError, which Tandem's SQL layer makes (frontend/sql/sql_error.h).
struct PgError {
  std::string sqlstate;  // five characters: "42P01"
  std::string message;   // the primary message
  std::string detail, hint;
  // "ERROR 42P01: relation \"t\" does not exist (DETAIL: …) (HINT: …)"
  std::string ToString() const;
};

// The answer to a statement, as a client received it: its columns and rows, or its error.
struct PgAnswer {
  std::vector<std::string> column_names;
  std::vector<unsigned> column_types;  // type OIDs (pg_type above), one per column
  std::vector<SqlRow> rows;
  std::string command_tag;       // "SELECT 3", "INSERT 0 2", "CREATE TABLE"
  std::optional<PgError> error;  // set: the statement failed; nothing else is then set

  bool ok() const { return !error.has_value(); }
  // The error's SQLSTATE; "" for an answer that is not an error.
  std::string sqlstate() const { return error ? error->sqlstate : std::string(); }
};

// NULL, or the text in single quotes with quotes doubled and control characters escaped (\n,
// \t, \x01): ('1', NULL, 'it''s').
std::string FormatValue(const SqlValue& value);
std::string FormatRow(const SqlRow& row);

enum class RowOrder {
  kMultiset,  // the same rows as many times each, in any order (no ORDER BY)
  kOrdered,   // the same rows in the same order, up to ties of `order_columns`
};

// How two answers are compared. A namespace-scope struct, so a default argument `= {}` is fine.
struct RowComparison {
  RowOrder order = RowOrder::kMultiset;
  // kOrdered: the columns an ORDER BY sorts on (0-based). Both lists must show the same sequence
  // of their values; rows tied on them form a run that compares as a multiset, since PostgreSQL
  // may return ties in any order. Empty: every column, so the lists must be equal row by row.
  // (A LIMIT that cuts through a run of ties makes the answer itself arbitrary: the query must
  // order by columns that decide which rows are kept.)
  std::vector<std::size_t> order_columns = {};
  // float4/float8 columns: at most this many units in the last place apart (0: the same number).
  std::uint64_t float_ulps = 0;
  // float4/float8 columns compared as texts, spelling included (float_ulps then does nothing).
  bool float_text = false;
  // Results: the column names must be equal too (PostgreSQL's "?column?", "count", …).
  bool column_names = true;
  // Results: the column type OIDs must be equal too.
  bool column_types = true;
  // A diff lists at most this many rows on each side.
  std::size_t max_listed = 10;
};

// Whether two values of a column of type `type` (an OID; 0 when unknown: text) are equal under
// `how` (the header's comment).
bool ValuesMatch(const SqlValue& expected, const SqlValue& actual, unsigned type,
                 const RowComparison& how);

// "" when `actual` has the rows `expected` has (column types `types`, from the expected answer;
// missing entries compare as text), else a readable account of how they differ: the row counts,
// for a multiset the rows that are missing and extra with how many times each, for an ordered
// list the first row or run where they part and the rows around it.
std::string DiffRows(const std::vector<SqlRow>& expected, const std::vector<SqlRow>& actual,
                     const std::vector<unsigned>& types, const RowComparison& how = {});

// The same for whole answers: both errors with one SQLSTATE (their messages may differ), or both
// rows with the same columns (names and types as `how` says) and DiffRows.
std::string DiffResults(const PgAnswer& expected, const PgAnswer& actual,
                        const RowComparison& how = {});

// DiffResults for gtest: EXPECT_TRUE(SameResult(postgres_answer, tandem_answer, how)).
::testing::AssertionResult SameResult(const PgAnswer& expected, const PgAnswer& actual,
                                      const RowComparison& how = {});

}  // namespace tandem::testing
