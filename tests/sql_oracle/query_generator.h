// The query generator of the SQL oracle: from a seed, one well-typed SELECT over a database's
// tables, using only the features it is given (features.h), whose answer is well defined — the
// same in every correct engine.
//
// What it generates: SELECT lists of expressions (+ - * on bigint and double precision,
// comparisons, AND/OR/NOT, IS [NOT] NULL, CASE, COALESCE), WHERE, FROM lists of up to 4
// relations joined inner/left/right/full/cross (ON column equalities of equal types, plus a
// condition on one side), GROUP BY/HAVING with count(*), count(e), count(DISTINCT e), sum, min,
// max, avg, aggregates without GROUP BY, DISTINCT, UNION/EXCEPT/INTERSECT [ALL], ORDER BY/LIMIT/
// OFFSET, subqueries in FROM, WITH, [NOT] IN and [NOT] EXISTS subqueries as conjuncts of WHERE,
// uncorrelated or correlated by an equality, and SELECT of constants without FROM. Over tables with
// columns of DESIGN §16's types (WorkloadOptions::new_types) also expressions of every type and
// their casts, operators, functions and aggregates (features.h: kDateTimeArithmetic through
// kTypedAggregates); over tables of the original four types none of these is drawn, so their
// seeds make the same queries as before those types. Every expression is typed as it is built
// (numeric(p,s) as numeric, varchar and char as text: ExpressionType), so PostgreSQL accepts
// every query (the suite fails on one it rejects).
//
// What keeps the answer well defined (the invariants):
//   * LIMIT and OFFSET come only with an ORDER BY of every output column (the rows kept are
//     then fixed up to identical rows), at the top and in subqueries in FROM;
//   * values stay small and * multiplies only base columns and literals, so nothing overflows
//     int64; floats are multiples of 1/4 (values.h), so sums, differences and products of them
//     are exact and a float sum does not depend on the order of its additions;
//   * no division (nothing divides by zero); no NULL literal whose type is undecided; a double
//     constant is written '2.75'::float8, double precision as in the engine (bare, numeric in
//     PostgreSQL, only with the feature kNumericConstant);
//   * avg's outputs (numeric in PostgreSQL, float in Tandem, equal only within a tolerance) are
//     "approximate" columns: shown and sorted on, never compared, joined or grouped on;
//   * values that are equal but print apart (1.5 and 1.50; '1 mon', '30 days' and '720:00:00')
//     are one GROUP BY key, DISTINCT row, set operation's row, min or max, which prints any of
//     their spellings: the comparison takes numbers and intervals by value (compare.h), and no
//     result depends on the spelling chosen. No numeric or float is cast to text; an interval's
//     text, fields (extract, date_part), date_trunc and its sum with a date or a timestamp are
//     only of an interval of one spelling — a literal or a base table's column, not a GROUP BY
//     key, a subquery's column, a scalar subquery, GREATEST or LEAST;
//   * the new types' functions raise no error on the domains' values: substr/substring counts
//     are >= 0, sqrt takes abs(x), power's exponent is 0..3, casts go only where PostgreSQL
//     has them and the values fit (integers small, no epoch of a date or timestamp), round(x, n)
//     and trunc(x, n) only of numeric and integers, extract only of the fields of its type.
//
// Thread safety: Generate is const; a generator may be shared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sql_oracle/compare.h"
#include "sql_oracle/features.h"
#include "sql_oracle/schema.h"

namespace tandem::testing::sql_oracle {

struct GeneratedQuery {
  std::string sql;
  FeatureSet features;  // the features the query uses
  AnswerOrder order;    // what its top-level ORDER BY fixes
};

class QueryGenerator {
 public:
  // REQUIRES: every table's first column is a bigint (workload.h makes them so).
  QueryGenerator(std::vector<TableSchema> tables, FeatureSet enabled);

  GeneratedQuery Generate(std::uint64_t seed) const;

 private:
  std::vector<TableSchema> tables_;
  FeatureSet enabled_;
  bool new_types_ = false;  // a column of `tables_` has a type beyond the original four
};

}  // namespace tandem::testing::sql_oracle
