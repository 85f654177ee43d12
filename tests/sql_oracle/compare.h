// The comparison of an engine's answer with PostgreSQL's: multisets of rows, or ordered lists
// where the query's ORDER BY fixes the order, values compared by type.
//
// Values (the column's class by its type OID, PostgreSQL's answer deciding):
//   * NULL equals NULL and nothing else.
//   * Numbers — float4, float8, numeric, and an integer column of one side against a numeric
//     one of the other — as numbers, equal within a relative tolerance (kRelativeTolerance):
//     PostgreSQL answers sum(bigint) and avg(bigint) as numeric (avg with 16 or more decimals)
//     where an engine of int64 and float64 answers int8 and float8; NaN equals NaN.
//   * Integers (int2, int4, int8 on both sides) as integers: PostgreSQL types an integer literal
//     int4, the engine every integer int8.
//   * Intervals — a column either side types interval — by their span, a month 30 days and a day
//     24 hours, exactly (in microseconds), as PostgreSQL compares them: '1 mon', '30 days' and
//     '720:00:00' are equal. A GROUP BY key, DISTINCT row or set operation's row prints one of
//     its group's spellings, and engines choose apart (PostgreSQL the first its plan meets,
//     Tandem the smallest). A text that is not PostgreSQL's interval output (IntervalStyle
//     postgres) compares as text.
//   * bool and text exactly, as their text.
// Column types must be of one class (integer and numeric count as one); names are not compared
// (an engine may name an expression's column otherwise).
//
// Rows: a multiset (each row as many times on both sides), or, for a query with ORDER BY, an
// ordered list whose runs of rows tied on the ORDER BY columns compare as multisets (PostgreSQL
// returns ties in any order). Rows sort by the values as compared (intervals by span), so the
// multiset diff pairs equal values however they are spelled.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sql_rows.h"

namespace tandem::testing::sql_oracle {

inline constexpr double kRelativeTolerance = 1e-9;

struct AnswerOrder {
  bool ordered = false;
  // When ordered: the output columns the ORDER BY sorts on (0-based); empty: every column.
  std::vector<std::size_t> order_columns;
};

// "" when `actual` matches `expected` (both errors with one SQLSTATE, or both rows as the
// header says), else a readable account of the difference: the row counts and the rows missing
// and extra (at most 10 of each), or where an ordered list parts.
std::string DiffAnswers(const PgAnswer& expected, const PgAnswer& actual, const AnswerOrder& order);

// An answer as text for a failure report: its columns with their types, then its rows (at most
// `max_rows`), or its error.
std::string FormatAnswer(const PgAnswer& answer, std::size_t max_rows = 30);

}  // namespace tandem::testing::sql_oracle
