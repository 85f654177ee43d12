// Dates, times, timestamps and intervals as PostgreSQL has them (DESIGN §16).
//
// Every instant counts microseconds from the Unix epoch (1970-01-01 00:00:00), dates count days
// from it; a timestamptz is an instant (UTC), a timestamp a wall-clock reading with no zone. The
// ranges are PostgreSQL's: dates and timestamps from 4713 BC to 294276 AD (dates to 5874897 AD);
// a value outside is a data error. An interval keeps months, days and microseconds apart, as
// PostgreSQL does ('1 mon' is not '30 days' in arithmetic), and compares as PostgreSQL does:
// by its span with a month of 30 days and a day of 24 hours ('1 mon' = '30 days' as values).
// The datum order (what the row encoding preserves) orders intervals by span, then months, then
// days, so it is total.
//
// Text forms are PostgreSQL's with DateStyle ISO and IntervalStyle postgres, every timestamptz
// printed in UTC ("+00"):
//   date         2026-12-06                 (BC years: "0044-03-15 BC")
//   time         12:00:00, 12:00:00.5
//   timestamp    2026-12-06 12:00:00.123456
//   timestamptz  2026-12-06 12:00:00+00
//   interval     1 year 2 mons 3 days 04:05:06.5, -00:00:01, 00:00:00
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/numeric.h"
#include "base/status.h"

namespace tandem {

struct Date {
  std::int32_t days = 0;  // since 1970-01-01
  friend auto operator<=>(const Date&, const Date&) = default;
};
struct Time {
  std::int64_t micros = 0;  // since midnight, [0, 24h] (24:00:00 is a time, as in PostgreSQL)
  friend auto operator<=>(const Time&, const Time&) = default;
};
struct Timestamp {
  std::int64_t micros = 0;  // wall clock, since 1970-01-01 00:00:00, no zone
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};
struct TimestampTz {
  std::int64_t micros = 0;  // the instant, since the Unix epoch
  friend auto operator<=>(const TimestampTz&, const TimestampTz&) = default;
};
struct Interval {
  std::int32_t months = 0;
  std::int32_t days = 0;
  std::int64_t micros = 0;
  friend bool operator==(const Interval&, const Interval&) = default;
};

inline constexpr std::int64_t kMicrosPerSecond = 1'000'000;
inline constexpr std::int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

// PostgreSQL's interval comparison: the span with 30-day months and 24-hour days.
__int128 IntervalSpan(const Interval& i);
int CompareIntervalValue(const Interval& a, const Interval& b);
// Datum order: span, then months, then days.
int CompareInterval(const Interval& a, const Interval& b);

std::string DateText(Date d);
std::string TimeText(Time t);
std::string TimestampText(Timestamp t);
std::string TimestampTzText(TimestampTz t);
std::string IntervalText(const Interval& i);

// Input as PostgreSQL takes it (the ISO forms above, with the variants PostgreSQL accepts that a
// user types: 'T' between date and time, fractional seconds, "+05:30"/"-08"/"Z" offsets, BC,
// "infinity" refused): a bad or out-of-range text is a data error with PostgreSQL's words.
Result<Date> ParseDate(std::string_view text);
Result<Time> ParseTime(std::string_view text);
Result<Timestamp> ParseTimestamp(std::string_view text);
Result<TimestampTz> ParseTimestampTz(std::string_view text);  // no offset given: UTC
Result<Interval> ParseInterval(std::string_view text);

// Arithmetic as PostgreSQL: adding an interval adds its months (the day of month clamped to the
// month's last), then its days, then its microseconds; a timestamptz is shifted in UTC (the only
// zone here). Out of range is a data error ("timestamp out of range", "date out of range",
// "interval out of range").
Result<Timestamp> TimestampPlusInterval(Timestamp t, const Interval& i);
Result<TimestampTz> TimestampTzPlusInterval(TimestampTz t, const Interval& i);
Result<Interval> TimestampDiff(std::int64_t a_micros, std::int64_t b_micros);  // a - b, as days + time
Result<Date> DatePlusDays(Date d, std::int64_t days);
Result<Timestamp> DatePlusInterval(Date d, const Interval& i);
Result<Interval> IntervalAdd(const Interval& a, const Interval& b);
Result<Interval> IntervalSub(const Interval& a, const Interval& b);
Result<Interval> IntervalNegate(const Interval& a);
Result<Interval> IntervalMul(const Interval& a, double factor);  // PostgreSQL's interval_mul
Result<Interval> IntervalDiv(const Interval& a, double divisor);  // division by zero: data error

// Casts.
Timestamp TimestampOfDate(Date d);
Result<Date> DateOfTimestamp(Timestamp t);
Time TimeOfTimestamp(Timestamp t);
TimestampTz TimestampTzOfTimestamp(Timestamp t);  // the wall clock read in UTC
Timestamp TimestampOfTimestampTz(TimestampTz t);

// date_trunc('microseconds' | 'milliseconds' | 'second' | 'minute' | 'hour' | 'day' | 'week' |
// 'month' | 'quarter' | 'year' | 'decade' | 'century' | 'millennium', ...), unit names as
// PostgreSQL takes them (case-insensitive, plurals); an unknown unit is a data error
// ("unit \"x\" not recognized for type timestamp ...").
Result<Timestamp> DateTruncTimestamp(std::string_view unit, Timestamp t);
Result<Interval> DateTruncInterval(std::string_view unit, const Interval& i);

// extract(field FROM x) as PostgreSQL 15 (a numeric: seconds with their fraction, epoch with
// microseconds); date_part is its double. Fields: microseconds, milliseconds, second, minute,
// hour, day, month, quarter, year, decade, century, millennium, dow, isodow, doy, week, isoyear,
// epoch, julian; an unknown or (for the type) unsupported field is a data error.
Result<Numeric> ExtractTimestamp(std::string_view field, Timestamp t);
Result<Numeric> ExtractDate(std::string_view field, Date d);
Result<Numeric> ExtractTime(std::string_view field, Time t);
Result<Numeric> ExtractInterval(std::string_view field, const Interval& i);

}  // namespace tandem
