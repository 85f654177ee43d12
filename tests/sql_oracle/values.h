// The value domains of the SQL oracle's data and literals, shared by the workload and the query
// generator so that literals in queries meet the data (equalities match, ranges cut).
//
// Why these domains: integers small (products of three and sums over thousands of rows stay far
// from int64's range, so no overflow on either side); floats multiples of 1/4 of small
// magnitude (sums and products of them are exact in a double, so a float sum does not depend on
// the order of its additions); a handful of texts with a space, a quote, an upper-case letter and
// the empty string (ordered bytewise: the oracle's database uses the C collation, as Tandem does);
// integer as bigint; numeric(10,2) quarters (exact in both); dates in a fortnight across a month's
// end, timestamps on its hours, intervals of whole hours, days and a month (so date + integer,
// timestamp + interval and their differences stay in a few weeks of 2026).
// The other types of DESIGN §16 (WorkloadOptions::new_types) add the edges PostgreSQL users meet:
// smallint and real as the integers and quarters above; numeric(12,4) quarters; unconstrained
// numeric one value at several scales (1.5 and 1.50, 2 and 2.0: equal, printed apart); varchar(4)
// and char(3) texts that fit (char's padding shows in its output; its literals are char(3) too);
// bytea the empty string and a few bytes; times across the day's end (and half a second);
// timestamps and timestamptz (+00: the oracle's TimeZone is UTC, as Tandem's timestamptz) on a leap
// day and a month's last day; a few uuids. Intervals also of a month, one value spelled three ways
// ('1 mon' = '30 days' = '720:00:00': equal, printed apart, as 1.5 and 1.50 are), so that GROUP
// BY, DISTINCT, set operations, joins and min/max meet equal intervals spelled apart;
// RandomCalendarInterval adds years for operands and comparisons.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "sql_oracle/random.h"
#include "sql_oracle/schema.h"

namespace tandem::testing::sql_oracle {

// A value of `type` in its domain, as PostgreSQL's text output spells it (bool: "t"/"f"; char(3)
// without its padding).
std::string RandomValueText(Random& random, SqlType type);
// A non-null literal of `type` as SQL, negative numbers in parentheses: 3, (-2), 'a b', true.
// A double: '1.25'::float8 (typed double precision in PostgreSQL, as the column it meets), or
// with `numeric_constant` the bare 1.25, (-0.5) — numeric in PostgreSQL.
std::string RandomLiteral(Random& random, SqlType type, bool numeric_constant = false);
// An interval literal with months or days that equal other spellings ('1 mon', '30 days',
// '720:00:00', '1 year 2 mons', '-1 mon'): for the right side of date/timestamp ± interval and of
// comparisons with an interval (its years would take an epoch past what numeric(8,1) holds).
std::string RandomCalendarInterval(Random& random);
// A double in PostgreSQL's shortest text form ("1.25", "-3", "0").
std::string DoubleText(double value);

}  // namespace tandem::testing::sql_oracle
