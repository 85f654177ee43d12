// The SQL constructs the query generator can use, each a Feature, so that a suite runs exactly
// the subset an engine supports and grows it as the engine does. A generated query carries the
// set of features it used; the suite counts refusals per feature and fails a refusal of a query
// whose features the engine is said to support.
//
// Thread safety: constants and pure functions.
#pragma once

#include <bitset>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace tandem::testing::sql_oracle {

enum class Feature : std::size_t {
  kWhere,                  // WHERE with comparisons, IS [NOT] NULL, AND/OR/NOT
  kArithmetic,             // + - * on bigint and double precision
  kCase,                   // CASE WHEN … THEN … [ELSE …] END
  kCoalesce,               // COALESCE(a, b)
  kInnerJoin,              // JOIN … ON column equalities
  kLeftJoin,               // LEFT JOIN
  kRightJoin,              // RIGHT JOIN
  kFullJoin,               // FULL JOIN (equalities only, as PostgreSQL requires)
  kCrossJoin,              // CROSS JOIN
  kJoinResidual,           // ON equalities AND a condition on one side: either side of an inner
                           // join, the side an outer join pads with NULLs
  kJoinResidualPreserved,  // … a condition on the side a LEFT/RIGHT JOIN keeps every row of
  kGroupBy,                // GROUP BY with count/sum/min/max/avg
  kHaving,                 // HAVING
  kHavingWithoutGroupBy,   // aggregates without GROUP BY and a HAVING: one row or none
  kGroupByExpression,      // GROUP BY (a.i + 3), named by the same expression in the SELECT list
  kGlobalAggregate,        // aggregates without GROUP BY (one row, even over no rows)
  kCountDistinct,          // count(DISTINCT e)
  kAvg,                    // avg(e) of a double precision e
  kAvgBigint,              // avg(e) of a bigint e (numeric in PostgreSQL: compared as a number)
  kDistinct,               // SELECT DISTINCT
  kUnion,                  // UNION
  kUnionAll,               // UNION ALL
  kExcept,                 // EXCEPT
  kExceptAll,              // EXCEPT ALL
  kIntersect,              // INTERSECT
  kIntersectAll,           // INTERSECT ALL
  kOrderBy,                // ORDER BY output columns [DESC] [NULLS FIRST|LAST]
  kLimit,                  // LIMIT (with an ORDER BY of every output column)
  kOffset,                 // OFFSET (likewise)
  kOrderByHidden,          // ORDER BY a column the SELECT list does not show
  kFromSubquery,           // (SELECT …) AS alias in FROM
  kWith,                   // WITH name AS (…) (not recursive)
  kInSubquery,             // e IN (SELECT …) as a conjunct of WHERE
  kExists,                 // EXISTS (SELECT …) as a conjunct of WHERE
  kNotExists,              // NOT EXISTS (SELECT …) as a conjunct of WHERE
  kNotInSubquery,          // e NOT IN (SELECT …) as a conjunct of WHERE (a NULL: no row)
  kSubqueryInExpression,   // [NOT] IN / [NOT] EXISTS inside an expression (under OR, NOT, CASE,
                           // in the SELECT list): three-valued
  kScalarSubquery,         // (SELECT aggregate FROM … [WHERE correlation]) as a value
  kCorrelated,             // an IN/EXISTS subquery correlated by an equality with the outer query
  kSelectWithoutFrom,      // SELECT of constants without FROM: one row
  kNumericConstant,        // a double constant written bare (2.75 is numeric and 3 integer in
                           // PostgreSQL); without it, written '2.75'::float8
  // The features below use the types of DESIGN §16: the generator draws them only over tables
  // with such columns (WorkloadOptions::new_types), but their expressions may be of literals.
  //
  // date ± integer, date - date, timestamp[tz] ± interval (intervals of months too: '1 mon' from
  // a month's last day), date + interval, date + time, time ± interval, interval ± interval,
  // timestamp - timestamp, timestamptz - timestamptz, time - time.
  kDateTimeArithmetic,
  // CAST(x AS t) and (x)::t: among smallint, integer, bigint, real, double precision, numeric,
  // numeric(p,s) (integers to all; floats and numerics to each other and to integer and bigint,
  // which round); integer, boolean, text, char, bytea, date, time, timestamp[tz], interval, uuid to
  // text, varchar(n) and char(3) (truncating, padding); x::text::t back for every type; date,
  // time, timestamp and timestamptz among each other (UTC); time ↔ interval; boolean ↔ integer.
  // Never numeric or a float to text (1.5 and 1.50 are one value in a GROUP BY, not as text).
  kCast,
  // A comparison of two different types of smallint, integer, bigint, real, double precision,
  // numeric (PostgreSQL's promotion).
  kNumericFamilyComparison,
  // NULLIF(a, b), GREATEST(a, b[, c]), LEAST(a, b[, c]) over every type.
  kNullifGreatestLeast,
  // text || text, bytea || bytea, length, char_length, octet_length (of text, char, bytea),
  // lower, upper, substr(s, i[, n]) and substring(s FROM i [FOR n]) with n >= 0, strpos and
  // position(a IN s), btrim/ltrim/rtrim(s[, chars]), trim([BOTH|LEADING|TRAILING] [chars] FROM
  // s), replace.
  kStringFunctions,
  // s [NOT] LIKE / ILIKE a pattern of letters, % and _ (no escape), s text or char.
  kLike,
  // abs, round(x[, n]), trunc(x[, n]), floor, ceil, power(x, 0..3), sqrt(abs(x)) of the numeric
  // family (numeric stays numeric; other types go to double precision, as PostgreSQL resolves
  // them; round(x, n) and trunc(x, n) of numeric and integers only, as PostgreSQL has them).
  kMathFunctions,
  // date_trunc(unit, x) of a timestamp, a timestamptz, a date (a timestamptz), an interval or a
  // time (an interval).
  kDateTrunc,
  // extract(field FROM x) (numeric) and date_part('field', x) (double precision) of a date, time,
  // timestamp, timestamptz or interval, with the fields PostgreSQL has for its type (the epoch of
  // a time or an interval only: every field below 10^7, no cast of one overflows).
  kExtract,
  // sum of smallint and integer (bigint), of numeric and interval (not of real: PostgreSQL adds
  // in real, whose rounding depends on the order); avg of smallint, integer, real, numeric,
  // interval (approximate columns); min and max of smallint, integer, real, numeric, char, date,
  // time, timestamp[tz], interval; of uuid and bytea through text ((min(x::text))::uuid:
  // PostgreSQL 15 has no min(uuid) nor min(bytea)).
  kTypedAggregates,
  kCount,  // the number of features (not one)
};

inline constexpr std::size_t kFeatureCount = static_cast<std::size_t>(Feature::kCount);

class FeatureSet {
 public:
  FeatureSet() = default;
  FeatureSet(std::initializer_list<Feature> features) {
    for (Feature f : features) Add(f);
  }
  static FeatureSet All() {
    FeatureSet set;
    set.bits_.set();
    return set;
  }

  void Add(Feature f) { bits_.set(static_cast<std::size_t>(f)); }
  void Remove(Feature f) { bits_.reset(static_cast<std::size_t>(f)); }
  bool Has(Feature f) const { return bits_.test(static_cast<std::size_t>(f)); }
  bool Empty() const { return bits_.none(); }
  // Every feature of this set is in `other`.
  bool SubsetOf(const FeatureSet& other) const { return (bits_ & ~other.bits_).none(); }
  FeatureSet Minus(const FeatureSet& other) const {
    FeatureSet out;
    out.bits_ = bits_ & ~other.bits_;
    return out;
  }
  FeatureSet& operator|=(const FeatureSet& other) {
    bits_ |= other.bits_;
    return *this;
  }
  bool operator==(const FeatureSet&) const = default;

  // "where,inner_join,group_by"; "" for the empty set.
  std::string ToString() const;
  // The inverse of ToString (also "all"; names separated by ',' or spaces); nullopt for an
  // unknown name.
  static std::optional<FeatureSet> Parse(std::string_view text);

 private:
  std::bitset<kFeatureCount> bits_;
};

// "where", "inner_join", … (the enumerator's name in snake case without the k).
const char* FeatureName(Feature f);

}  // namespace tandem::testing::sql_oracle
