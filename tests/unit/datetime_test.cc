// base/datetime.h against PostgreSQL 15: every expectation below is what a PostgreSQL 15.20
// server answered (TimeZone UTC, DateStyle ISO, IntervalStyle postgres) to the query quoted
// beside it, except where a comment says Tandem deliberately differs.
#include "base/datetime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tandem::datetime_test {
namespace {

std::string DateRoundTrip(std::string_view text) {
  auto d = ParseDate(text);
  return d.ok() ? DateText(*d) : "ERROR: " + d.status().message();
}
std::string TimeRoundTrip(std::string_view text) {
  auto t = ParseTime(text);
  return t.ok() ? TimeText(*t) : "ERROR: " + t.status().message();
}
std::string TimestampRoundTrip(std::string_view text) {
  auto t = ParseTimestamp(text);
  return t.ok() ? TimestampText(*t) : "ERROR: " + t.status().message();
}
std::string TimestampTzRoundTrip(std::string_view text) {
  auto t = ParseTimestampTz(text);
  return t.ok() ? TimestampTzText(*t) : "ERROR: " + t.status().message();
}
std::string IntervalRoundTrip(std::string_view text) {
  auto i = ParseInterval(text);
  return i.ok() ? IntervalText(*i) : "ERROR: " + i.status().message();
}

Timestamp Ts(std::string_view text) {
  auto t = ParseTimestamp(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  return t.ok() ? *t : Timestamp{};
}
Interval Iv(std::string_view text) {
  auto i = ParseInterval(text);
  EXPECT_TRUE(i.ok()) << text << ": " << i.status().message();
  return i.ok() ? *i : Interval{};
}
Date Dt(std::string_view text) {
  auto d = ParseDate(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().message();
  return d.ok() ? *d : Date{};
}

template <typename T, typename F>
std::string Shown(const Result<T>& r, F&& text) {
  return r.ok() ? text(*r) : "ERROR: " + r.status().message();
}

// ---- text -----------------------------------------------------------------------------------

TEST(DatetimeText, DatesReadAndPrintAsPostgres) {
  // select '2026-12-06'::date, '0044-03-15 BC'::date, '4714-11-24 BC'::date,
  //        '5874897-12-31'::date, 'epoch'::date, '2026-12-6 12:00+05'::date
  EXPECT_EQ(DateRoundTrip("2026-12-06"), "2026-12-06");
  EXPECT_EQ(DateRoundTrip("0044-03-15 BC"), "0044-03-15 BC");
  EXPECT_EQ(DateRoundTrip("4714-11-24 BC"), "4714-11-24 BC");
  EXPECT_EQ(DateRoundTrip("5874897-12-31"), "5874897-12-31");
  EXPECT_EQ(DateRoundTrip("epoch"), "1970-01-01");
  EXPECT_EQ(DateRoundTrip("2026-12-6 12:00+05"), "2026-12-06");
  EXPECT_EQ(DateRoundTrip(" 2024-02-29 "), "2024-02-29");
  EXPECT_EQ(ParseDate("1970-01-02")->days, 1);
  EXPECT_EQ(ParseDate("1969-12-31")->days, -1);
  EXPECT_EQ(ParseDate("0001-12-31 BC")->days, ParseDate("0001-01-01")->days - 1);    // no year 0
  EXPECT_EQ(ParseDate("0001-01-01 BC")->days, ParseDate("0001-01-01")->days - 366);  // 1 BC leap
}

TEST(DatetimeText, BadDatesAreDataErrorsInPostgresWords) {
  EXPECT_EQ(DateRoundTrip("4714-11-23 BC"), "ERROR: date out of range: \"4714-11-23 BC\"");
  EXPECT_EQ(DateRoundTrip("5874898-01-01"), "ERROR: date out of range: \"5874898-01-01\"");
  EXPECT_EQ(DateRoundTrip("2026-02-30"),
            "ERROR: date/time field value out of range: \"2026-02-30\"");
  EXPECT_EQ(DateRoundTrip("2026-13-01"),
            "ERROR: date/time field value out of range: \"2026-13-01\"");
  EXPECT_EQ(DateRoundTrip("0000-01-01"),
            "ERROR: date/time field value out of range: \"0000-01-01\"");
  EXPECT_EQ(DateRoundTrip("0000-12-06 BC"),
            "ERROR: date/time field value out of range: \"0000-12-06 BC\"");
  EXPECT_EQ(DateRoundTrip("26-12-06"), "ERROR: date/time field value out of range: \"26-12-06\"");
  EXPECT_EQ(DateRoundTrip("2023-02-29"),
            "ERROR: date/time field value out of range: \"2023-02-29\"");
  EXPECT_EQ(DateRoundTrip("foo"), "ERROR: invalid input syntax for type date: \"foo\"");
  EXPECT_EQ(DateRoundTrip("2026-12-06x"),
            "ERROR: invalid input syntax for type date: \"2026-12-06x\"");
  EXPECT_EQ(DateRoundTrip(""), "ERROR: invalid input syntax for type date: \"\"");
  // Tandem refuses what PostgreSQL guesses: named months and 'infinity'.
  EXPECT_FALSE(ParseDate("Dec 6 2026").ok());
  EXPECT_FALSE(ParseDate("infinity").ok());
  EXPECT_FALSE(ParseDate("12/06/2026").ok());
}

TEST(DatetimeText, TimestampsReadTheFormsUsersType) {
  // select '2026-12-06 12:00'::timestamp, '2026-12-06T12:00:00.123456'::timestamp,
  //   '2026-12-06 12:00:00.1234565'::timestamp, '2026-12-06 12:00:00.1234575'::timestamp,
  //   '2026-12-06 23:59:59.9999999'::timestamp, '2026-12-06 24:00:00'::timestamp,
  //   '2026-12-06 23:59:60'::timestamp, '2026-12-06 12:00:00+05'::timestamp
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00"), "2026-12-06 12:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06T12:00:00.123456"), "2026-12-06 12:00:00.123456");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00:00.1234565"), "2026-12-06 12:00:00.123456");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00:00.1234575"), "2026-12-06 12:00:00.123458");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 23:59:59.9999999"), "2026-12-07 00:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 24:00:00"), "2026-12-07 00:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 23:59:60"), "2026-12-07 00:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00:00+05"), "2026-12-06 12:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06"), "2026-12-06 00:00:00");
  // select '  2026-12-06  12:00  '::timestamp, '2026-12-06 12:00 +05:30'::timestamp,
  //   '2026-12-06 12:00:00 ad'::timestamp, '2026-12-06t12:00'::timestamp,
  //   '2026-12-06 12:00:00.'::timestamp
  EXPECT_EQ(TimestampRoundTrip("  2026-12-06  12:00  "), "2026-12-06 12:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00 +05:30"), "2026-12-06 12:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00:00 ad"), "2026-12-06 12:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06t12:00"), "2026-12-06 12:00:00");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00:00."), "2026-12-06 12:00:00");
  EXPECT_EQ(TimestampRoundTrip("epoch"), "1970-01-01 00:00:00");
  EXPECT_EQ(ParseTimestamp("1970-01-01 00:00:01.5")->micros, 1'500'000);
}

TEST(DatetimeText, TimestampRangeEndsAndBadFields) {
  // select '4714-11-24 00:00:00 BC'::timestamp, '0044-03-15 12:00:00.5 BC'::timestamptz
  EXPECT_EQ(TimestampRoundTrip("4714-11-24 00:00:00 BC"), "4714-11-24 00:00:00 BC");
  EXPECT_EQ(TimestampTzRoundTrip("0044-03-15 12:00:00.5 BC"), "0044-03-15 12:00:00.5+00 BC");
  EXPECT_EQ(TimestampRoundTrip("4714-11-23 23:59:59 BC"),
            "ERROR: timestamp out of range: \"4714-11-23 23:59:59 BC\"");
  EXPECT_EQ(TimestampRoundTrip("294277-01-01"), "ERROR: timestamp out of range: \"294277-01-01\"");
  // Tandem's end is int64's: PostgreSQL's '294276-12-31 23:59:59.999999' does not fit.
  EXPECT_EQ(TimestampRoundTrip("294247-01-10 04:00:54.775807"), "294247-01-10 04:00:54.775807");
  EXPECT_EQ(ParseTimestamp("294247-01-10 04:00:54.775807")->micros, INT64_MAX);
  EXPECT_EQ(TimestampRoundTrip("294247-01-10 04:00:54.775808"),
            "ERROR: timestamp out of range: \"294247-01-10 04:00:54.775808\"");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 24:00:01"),
            "ERROR: date/time field value out of range: \"2026-12-06 24:00:01\"");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:60"),
            "ERROR: date/time field value out of range: \"2026-12-06 12:60\"");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:00:00 BC AD"),
            "ERROR: invalid input syntax for type timestamp: \"2026-12-06 12:00:00 BC AD\"");
}

TEST(DatetimeText, TimestampTzConvertsEveryOffsetToUtc) {
  // select '2026-12-06 12:00:00+05:30'::timestamptz, '2026-12-06 12:00:00-08'::timestamptz,
  //   '2026-12-06 12:00:00Z'::timestamptz, '2026-12-06 12:00:00 +0530'::timestamptz,
  //   '2026-12-06T12:00:00.5+05:30:15'::timestamptz, '2026-12-06 12:00 UTC'::timestamptz
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00+05:30"), "2026-12-06 06:30:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00-08"), "2026-12-06 20:00:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00Z"), "2026-12-06 12:00:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00 +0530"), "2026-12-06 06:30:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06T12:00:00.5+05:30:15"), "2026-12-06 06:29:45.5+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00 UTC"), "2026-12-06 12:00:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00z"), "2026-12-06 12:00:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00"), "2026-12-06 12:00:00+00");
  // select '2026-12-06 12:00:00+5'::timestamptz, '2026-12-06 12:00:00+530'::timestamptz,
  //   '2026-12-06 12:00:00+05:3'::timestamptz
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00+5"), "2026-12-06 07:00:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00+530"), "2026-12-06 06:30:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00+05:3"), "2026-12-06 06:57:00+00");
  // Across midnight and the year.
  EXPECT_EQ(TimestampTzRoundTrip("2027-01-01 01:00:00+02"), "2026-12-31 23:00:00+00");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00+16"),
            "ERROR: time zone displacement out of range: \"2026-12-06 12:00:00+16\"");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00+05:60"),
            "ERROR: time zone displacement out of range: \"2026-12-06 12:00:00+05:60\"");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00:00 foo"),
            "ERROR: invalid input syntax for type timestamp with time zone: "
            "\"2026-12-06 12:00:00 foo\"");
  // select '294276-12-31 23:00:00-02'::timestamptz -- out of range after the shift
  EXPECT_EQ(TimestampTzRoundTrip("294247-01-10 04:00:54-02"),
            "ERROR: timestamp out of range: \"294247-01-10 04:00:54-02\"");
  // Zone names: PostgreSQL reads them with its zone database; Tandem refuses them.
  EXPECT_FALSE(ParseTimestampTz("2026-12-06 12:00:00 America/New_York").ok());
}

TEST(DatetimeText, TimesIncludingTwentyFour) {
  // select '12:00'::time, '12:00:00.5'::time, '24:00:00'::time, '23:59:59.9999999'::time,
  //   '2026-12-06 12:00:01'::time, '12:00:00+05'::time, '12:30.5'::time, '23:59:60'::time
  EXPECT_EQ(TimeRoundTrip("12:00"), "12:00:00");
  EXPECT_EQ(TimeRoundTrip("12:00:00.5"), "12:00:00.5");
  EXPECT_EQ(TimeRoundTrip("24:00:00"), "24:00:00");
  EXPECT_EQ(TimeRoundTrip("23:59:59.9999999"), "24:00:00");
  EXPECT_EQ(TimeRoundTrip("2026-12-06 12:00:01"), "12:00:01");
  EXPECT_EQ(TimeRoundTrip("12:00:00+05"), "12:00:00");
  EXPECT_EQ(TimeRoundTrip("12:30.5"), "00:12:30.5");
  EXPECT_EQ(TimeRoundTrip("23:59:60"), "24:00:00");
  EXPECT_EQ(ParseTime("24:00:00")->micros, kMicrosPerDay);
  EXPECT_EQ(TimeRoundTrip("24:00:01"), "ERROR: date/time field value out of range: \"24:00:01\"");
  EXPECT_EQ(TimeRoundTrip("25:00"), "ERROR: date/time field value out of range: \"25:00\"");
  EXPECT_EQ(TimeRoundTrip("12"), "ERROR: invalid input syntax for type time: \"12\"");
  EXPECT_EQ(TimeRoundTrip("epoch"), "ERROR: invalid input syntax for type time: \"epoch\"");
  EXPECT_EQ(TimeRoundTrip("2026-02-30 12:00"),
            "ERROR: date/time field value out of range: \"2026-02-30 12:00\"");
}

TEST(DatetimeText, IntervalsReadPostgresForms) {
  // select '1 day'::interval, '2 hours 30 minutes'::interval, '1 year 2 mons'::interval,
  //   '1 day 02:00:00'::interval, '-1 day +02:03:00'::interval, '01:30'::interval,
  //   '1.5 days'::interval, '1.5 months'::interval, '1.5 years'::interval,
  //   '1.125 years'::interval, '10'::interval, '1:30.5'::interval
  EXPECT_EQ(IntervalRoundTrip("1 day"), "1 day");
  EXPECT_EQ(IntervalRoundTrip("2 hours 30 minutes"), "02:30:00");
  EXPECT_EQ(IntervalRoundTrip("1 year 2 mons"), "1 year 2 mons");
  EXPECT_EQ(IntervalRoundTrip("1 day 02:00:00"), "1 day 02:00:00");
  EXPECT_EQ(IntervalRoundTrip("-1 day +02:03:00"), "-1 days +02:03:00");
  EXPECT_EQ(IntervalRoundTrip("01:30"), "01:30:00");
  EXPECT_EQ(IntervalRoundTrip("1.5 days"), "1 day 12:00:00");
  EXPECT_EQ(IntervalRoundTrip("1.5 months"), "1 mon 15 days");
  EXPECT_EQ(IntervalRoundTrip("1.5 years"), "1 year 6 mons");
  EXPECT_EQ(IntervalRoundTrip("1.125 years"), "1 year 2 mons");  // 13.5 months, ties to even
  EXPECT_EQ(IntervalRoundTrip("10"), "00:00:10");
  EXPECT_EQ(IntervalRoundTrip("1:30.5"), "00:01:30.5");
  // select '1 year 2 mons 3 days 04:05:06.5'::interval, '-00:00:01'::interval, '0'::interval,
  //   '@ 1 day ago'::interval, '1 day 2 hours ago'::interval, '1-2'::interval, '-1-2'::interval,
  //   '1 week'::interval, '1.5 weeks'::interval, '2 decades 1 century 1 millennium'::interval,
  //   '1 ms'::interval, '1.5 us'::interval, '0.0000005 sec'::interval, '0.0000015 sec'::interval
  EXPECT_EQ(IntervalRoundTrip("1 year 2 mons 3 days 04:05:06.5"),
            "1 year 2 mons 3 days 04:05:06.5");
  EXPECT_EQ(IntervalRoundTrip("-00:00:01"), "-00:00:01");
  EXPECT_EQ(IntervalRoundTrip("0"), "00:00:00");
  EXPECT_EQ(IntervalRoundTrip("@ 1 day ago"), "-1 days");
  EXPECT_EQ(IntervalRoundTrip("1 day 2 hours ago"), "-1 days -02:00:00");
  EXPECT_EQ(IntervalRoundTrip("1-2"), "1 year 2 mons");
  EXPECT_EQ(IntervalRoundTrip("-1-2"), "-1 years -2 mons");
  EXPECT_EQ(IntervalRoundTrip("1 week"), "7 days");
  EXPECT_EQ(IntervalRoundTrip("1.5 weeks"), "10 days 12:00:00");
  EXPECT_EQ(IntervalRoundTrip("2 decades 1 century 1 millennium"), "1120 years");
  EXPECT_EQ(IntervalRoundTrip("1 ms"), "00:00:00.001");
  EXPECT_EQ(IntervalRoundTrip("1.5 us"), "00:00:00.000001");
  EXPECT_EQ(IntervalRoundTrip("0.0000005 sec"), "00:00:00");
  EXPECT_EQ(IntervalRoundTrip("0.0000015 sec"), "00:00:00.000001");
  // select '-1.5 days'::interval, '1 day -02:00'::interval, '-2 days -02:00:00'::interval,
  //   '1day'::interval, '1 day, 2 hours'::interval, '100:00:00'::interval,
  //   '-1 mons -3 days'::interval, '12 mons'::interval, '-13 mons'::interval,
  //   '1 microseconds'::interval, '3 milliseconds'::interval, '1.1 days'::interval,
  //   '0.1 mon'::interval
  EXPECT_EQ(IntervalRoundTrip("-1.5 days"), "-1 days -12:00:00");
  EXPECT_EQ(IntervalRoundTrip("1 day -02:00"), "1 day -02:00:00");
  EXPECT_EQ(IntervalRoundTrip("-2 days -02:00:00"), "-2 days -02:00:00");
  EXPECT_EQ(IntervalRoundTrip("1day"), "1 day");
  EXPECT_EQ(IntervalRoundTrip("1 day, 2 hours"), "1 day 02:00:00");
  EXPECT_EQ(IntervalRoundTrip("100:00:00"), "100:00:00");
  EXPECT_EQ(IntervalRoundTrip("-1 mons -3 days"), "-1 mons -3 days");
  EXPECT_EQ(IntervalRoundTrip("12 mons"), "1 year");
  EXPECT_EQ(IntervalRoundTrip("-13 mons"), "-1 years -1 mons");
  EXPECT_EQ(IntervalRoundTrip("1 microseconds"), "00:00:00.000001");
  EXPECT_EQ(IntervalRoundTrip("3 milliseconds"), "00:00:00.003");
  EXPECT_EQ(IntervalRoundTrip("1.1 days"), "1 day 02:24:00");
  EXPECT_EQ(IntervalRoundTrip("0.1 mon"), "3 days");
  // select '1 day 2'::interval, '1 hour ago 1 day'::interval, '1 01:00'::interval,
  //   '.5 hours'::interval, '01:00 1.5 days'::interval, '-01:00 1.5 days'::interval
  EXPECT_EQ(IntervalRoundTrip("1 day 2"), "1 day 00:00:02");
  EXPECT_EQ(IntervalRoundTrip("1 hour ago 1 day"), "-1 days -01:00:00");
  EXPECT_EQ(IntervalRoundTrip("1 01:00"), "1 day 01:00:00");
  EXPECT_EQ(IntervalRoundTrip(".5 hours"), "00:30:00");
  // PostgreSQL's clock field replaces the microseconds a fraction of a day left of it added.
  EXPECT_EQ(IntervalRoundTrip("01:00 1.5 days"), "1 day 01:00:00");
  EXPECT_EQ(IntervalRoundTrip("-01:00 1.5 days"), "1 day -01:00:00");
  // The extremes: select '2147483647 days'::interval, '2562047788 hours'::interval,
  //   '9223372036854775807 us'::interval, '-9223372036854775808 us'::interval
  EXPECT_EQ(IntervalRoundTrip("2147483647 days"), "2147483647 days");
  EXPECT_EQ(IntervalRoundTrip("2562047788 hours"), "2562047788:00:00");
  EXPECT_EQ(IntervalRoundTrip("9223372036854775807 us"), "2562047788:00:54.775807");
  EXPECT_EQ(IntervalRoundTrip("-9223372036854775808 us"), "-2562047788:00:54.775808");
}

TEST(DatetimeText, BadIntervalsAreDataErrorsInPostgresWords) {
  for (const char* bad : {"1 quarter", "1 day 1 day", "day", "", "1 foo", "1 2 3", "1day2hours",
                          "1 ago", "P1Y2M3DT4H5M6S"}) {
    EXPECT_EQ(IntervalRoundTrip(bad),
              std::string("ERROR: invalid input syntax for type interval: \"") + bad + "\"")
        << bad;
  }
  for (const char* overflow : {"2147483648 days", "1:60", "-2147483648 days ago",
                               "9223372036854775808 us", "2562047789 hours"}) {
    EXPECT_EQ(IntervalRoundTrip(overflow),
              std::string("ERROR: interval field value out of range: \"") + overflow + "\"")
        << overflow;
  }
  EXPECT_EQ(IntervalRoundTrip("178956971 years"), "ERROR: interval out of range");
}

TEST(DatetimeText, IntervalOutputSignsEachPartAsPostgres) {
  EXPECT_EQ(IntervalText(Interval{14, 3, 4 * 3'600'000'000LL + 5 * 60'000'000LL + 6'500'000}),
            "1 year 2 mons 3 days 04:05:06.5");
  EXPECT_EQ(IntervalText(Interval{0, -1, 2 * 3'600'000'000LL + 3 * 60'000'000LL}),
            "-1 days +02:03:00");
  EXPECT_EQ(IntervalText(Interval{}), "00:00:00");
  // select '-1 mon'::interval + '1 day'::interval, '1 mon'::interval - '1 us'::interval,
  //   '-178956970 years -8 mons'::interval + '-2147483648 days'::interval
  //     + '-9223372036854775807 us'::interval - '1 us'::interval
  EXPECT_EQ(IntervalText(Interval{-1, 1, 0}), "-1 mons +1 day");
  EXPECT_EQ(IntervalText(Interval{1, 0, -1}), "1 mon -00:00:00.000001");
  EXPECT_EQ(IntervalText(Interval{INT32_MIN, INT32_MIN, INT64_MIN}),
            "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808");
}

}  // namespace
}  // namespace tandem::datetime_test
