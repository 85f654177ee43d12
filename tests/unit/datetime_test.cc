// base/datetime.h against PostgreSQL 15: every expectation below is what a PostgreSQL 15.20
// server answered (TimeZone UTC, DateStyle ISO, IntervalStyle postgres) to the query quoted
// beside it, except where a comment says Tandem deliberately differs.
#include "base/datetime.h"

#include <gtest/gtest.h>

#include <cmath>
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
  // select '2026-12-06 12:00+99999999999999999'::timestamptz
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00+99999999999999999"),
            "ERROR: time zone displacement out of range: \"2026-12-06 12:00+99999999999999999\"");
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
  // select '2026-12-06 12:00 BC+03'::timestamptz, '2026-12-06+05'::timestamptz -- the era then
  // an offset; an offset run into the date after '+'
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06 12:00 BC+03"), "2026-12-06 09:00:00+00 BC");
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06+05"), "2026-12-05 19:00:00+00");
  // PostgreSQL reads "BC-03" as a POSIX zone (and drops the era): refused here.
  EXPECT_FALSE(ParseTimestampTz("2026-12-06 12:00 BC-03").ok());
  // select '2026-12-06-08'::timestamptz
  EXPECT_EQ(TimestampTzRoundTrip("2026-12-06-08"),
            "ERROR: invalid input syntax for type timestamp with time zone: \"2026-12-06-08\"");
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
  // select '12:59:60.5'::time, '2026-12-06 12:59:60.5'::timestamp; select '23:59:60.5'::time;
  //   select '2026-12-06 23:59:60.5'::timestamp
  EXPECT_EQ(TimeRoundTrip("12:59:60.5"), "13:00:00.5");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 12:59:60.5"), "2026-12-06 13:00:00.5");
  EXPECT_EQ(TimeRoundTrip("23:59:60.5"),
            "ERROR: date/time field value out of range: \"23:59:60.5\"");
  EXPECT_EQ(TimestampRoundTrip("2026-12-06 23:59:60.5"),
            "ERROR: date/time field value out of range: \"2026-12-06 23:59:60.5\"");
  EXPECT_EQ(TimeRoundTrip("24:00:01"), "ERROR: date/time field value out of range: \"24:00:01\"");
  EXPECT_EQ(TimeRoundTrip("25:00"), "ERROR: date/time field value out of range: \"25:00\"");
  EXPECT_EQ(TimeRoundTrip("12"), "ERROR: invalid input syntax for type time: \"12\"");
  EXPECT_EQ(TimeRoundTrip("epoch"), "ERROR: invalid input syntax for type time: \"epoch\"");
  // select '2026-12-06T11:41:17'::time; select '0004-02-29 BC'::time -- PostgreSQL's time_in
  // takes no 'T' and wants a time before it looks at the date
  EXPECT_EQ(TimeRoundTrip("2026-12-06T11:41:17"),
            "ERROR: invalid input syntax for type time: \"2026-12-06T11:41:17\"");
  EXPECT_EQ(TimeRoundTrip("0004-02-29 BC"),
            "ERROR: invalid input syntax for type time: \"0004-02-29 BC\"");
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
  // select '1:'::interval, '1::'::interval, '1:2:'::interval, '1:.5'::interval: an empty field
  // of a clock is zero
  EXPECT_EQ(IntervalRoundTrip("1:"), "01:00:00");
  EXPECT_EQ(IntervalRoundTrip("1::"), "01:00:00");
  EXPECT_EQ(IntervalRoundTrip("1:2:"), "01:02:00");
  EXPECT_EQ(IntervalRoundTrip("1:.5"), "00:01:00.5");
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

TEST(DatetimeText, IntervalsReadIso8601Forms) {
  // select 'P1Y2M3DT4H5M6S'::interval, 'P0001-02-03T04:05:06'::interval,
  //   'P00010203T040506'::interval, 'PT36H'::interval, 'P1.5W'::interval, 'P-1Y-2M'::interval,
  //   'PT-1.5H'::interval, 'P1.125Y'::interval, 'P0.5M'::interval, 'P1DT'::interval,
  //   'P1-2'::interval, 'P1Y1Y'::interval
  EXPECT_EQ(IntervalRoundTrip("P1Y2M3DT4H5M6S"), "1 year 2 mons 3 days 04:05:06");
  EXPECT_EQ(IntervalRoundTrip("P0001-02-03T04:05:06"), "1 year 2 mons 3 days 04:05:06");
  EXPECT_EQ(IntervalRoundTrip("P00010203T040506"), "1 year 2 mons 3 days 04:05:06");
  EXPECT_EQ(IntervalRoundTrip("PT36H"), "36:00:00");
  EXPECT_EQ(IntervalRoundTrip("P1.5W"), "10 days 12:00:00");
  EXPECT_EQ(IntervalRoundTrip("P-1Y-2M"), "-1 years -2 mons");
  EXPECT_EQ(IntervalRoundTrip("PT-1.5H"), "-01:30:00");
  EXPECT_EQ(IntervalRoundTrip("P1.125Y"), "1 year 2 mons");
  EXPECT_EQ(IntervalRoundTrip("P0.5M"), "15 days");
  EXPECT_EQ(IntervalRoundTrip("P1DT"), "1 day");
  EXPECT_EQ(IntervalRoundTrip("P1-2"), "1 year 2 mons");
  EXPECT_EQ(IntervalRoundTrip("P1Y1Y"), "2 years");
  // PostgreSQL 15 splits an ISO number through a double ('P-258315.3D' gives
  // -258315 days -07:11:59.999999); the digits are exact here.
  EXPECT_EQ(IntervalRoundTrip("P-258315.3D"), "-258315 days -07:12:00");
}

TEST(DatetimeText, BadIntervalsAreDataErrorsInPostgresWords) {
  for (const char* bad : {"1 quarter", "1 day 1 day", "day", "", "1 foo", "1 2 3", "1day2hours",
                          "1 ago", "P", "PT1H2", "p1y", " P1Y", "P1Y2"}) {
    EXPECT_EQ(IntervalRoundTrip(bad),
              std::string("ERROR: invalid input syntax for type interval: \"") + bad + "\"")
        << bad;
  }
  for (const char* overflow :
       {"2147483648 days", "1:60", "-2147483648 days ago", "9223372036854775808 us",
        "2562047789 hours", "P2147483648D", "P1000000000000001D"}) {
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

// ---- tables of PostgreSQL's answers -----------------------------------------------------------

struct Case {
  const char* a;
  const char* b;
  const char* want;  // PostgreSQL's text, or "ERROR: " and its message
};

// select t, u, date_trunc(u, t::timestamp) for each t and u (errors caught by a plpgsql wrapper)
constexpr Case kTruncTimestamp[] = {
    {"2026-12-06 12:34:56.789123", "microseconds", "2026-12-06 12:34:56.789123"},
    {"2026-12-06 12:34:56.789123", "milliseconds", "2026-12-06 12:34:56.789"},
    {"2026-12-06 12:34:56.789123", "second", "2026-12-06 12:34:56"},
    {"2026-12-06 12:34:56.789123", "minute", "2026-12-06 12:34:00"},
    {"2026-12-06 12:34:56.789123", "hour", "2026-12-06 12:00:00"},
    {"2026-12-06 12:34:56.789123", "day", "2026-12-06 00:00:00"},
    {"2026-12-06 12:34:56.789123", "week", "2026-11-30 00:00:00"},
    {"2026-12-06 12:34:56.789123", "month", "2026-12-01 00:00:00"},
    {"2026-12-06 12:34:56.789123", "quarter", "2026-10-01 00:00:00"},
    {"2026-12-06 12:34:56.789123", "year", "2026-01-01 00:00:00"},
    {"2026-12-06 12:34:56.789123", "decade", "2020-01-01 00:00:00"},
    {"2026-12-06 12:34:56.789123", "century", "2001-01-01 00:00:00"},
    {"2026-12-06 12:34:56.789123", "millennium", "2001-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "microseconds", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "milliseconds", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "second", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "minute", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "hour", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "day", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "week", "2026-12-28 00:00:00"},
    {"2027-01-01 00:00:00", "month", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "quarter", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "year", "2027-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "decade", "2020-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "century", "2001-01-01 00:00:00"},
    {"2027-01-01 00:00:00", "millennium", "2001-01-01 00:00:00"},
    {"2021-01-03 23:59:59", "microseconds", "2021-01-03 23:59:59"},
    {"2021-01-03 23:59:59", "milliseconds", "2021-01-03 23:59:59"},
    {"2021-01-03 23:59:59", "second", "2021-01-03 23:59:59"},
    {"2021-01-03 23:59:59", "minute", "2021-01-03 23:59:00"},
    {"2021-01-03 23:59:59", "hour", "2021-01-03 23:00:00"},
    {"2021-01-03 23:59:59", "day", "2021-01-03 00:00:00"},
    {"2021-01-03 23:59:59", "week", "2020-12-28 00:00:00"},
    {"2021-01-03 23:59:59", "month", "2021-01-01 00:00:00"},
    {"2021-01-03 23:59:59", "quarter", "2021-01-01 00:00:00"},
    {"2021-01-03 23:59:59", "year", "2021-01-01 00:00:00"},
    {"2021-01-03 23:59:59", "decade", "2020-01-01 00:00:00"},
    {"2021-01-03 23:59:59", "century", "2001-01-01 00:00:00"},
    {"2021-01-03 23:59:59", "millennium", "2001-01-01 00:00:00"},
    {"0044-03-15 12:00:00 BC", "microseconds", "0044-03-15 12:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "milliseconds", "0044-03-15 12:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "second", "0044-03-15 12:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "minute", "0044-03-15 12:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "hour", "0044-03-15 12:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "day", "0044-03-15 00:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "week", "0044-03-11 00:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "month", "0044-03-01 00:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "quarter", "0044-01-01 00:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "year", "0044-01-01 00:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "decade", "0051-01-01 00:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "century", "0100-01-01 00:00:00 BC"},
    {"0044-03-15 12:00:00 BC", "millennium", "1000-01-01 00:00:00 BC"},
    {"0001-01-01 00:00:00", "microseconds", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "milliseconds", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "second", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "minute", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "hour", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "day", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "week", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "month", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "quarter", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "year", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "decade", "0001-01-01 00:00:00 BC"},
    {"0001-01-01 00:00:00", "century", "0001-01-01 00:00:00"},
    {"0001-01-01 00:00:00", "millennium", "0001-01-01 00:00:00"},
    {"0005-06-01 00:00:00 BC", "microseconds", "0005-06-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "milliseconds", "0005-06-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "second", "0005-06-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "minute", "0005-06-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "hour", "0005-06-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "day", "0005-06-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "week", "0005-05-27 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "month", "0005-06-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "quarter", "0005-04-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "year", "0005-01-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "decade", "0011-01-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "century", "0100-01-01 00:00:00 BC"},
    {"0005-06-01 00:00:00 BC", "millennium", "1000-01-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "microseconds", "0001-06-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "milliseconds", "0001-06-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "second", "0001-06-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "minute", "0001-06-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "hour", "0001-06-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "day", "0001-06-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "week", "0001-05-29 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "month", "0001-06-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "quarter", "0001-04-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "year", "0001-01-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "decade", "0001-01-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "century", "0100-01-01 00:00:00 BC"},
    {"0001-06-01 00:00:00 BC", "millennium", "1000-01-01 00:00:00 BC"},
    {"2000-12-31 00:00:00", "microseconds", "2000-12-31 00:00:00"},
    {"2000-12-31 00:00:00", "milliseconds", "2000-12-31 00:00:00"},
    {"2000-12-31 00:00:00", "second", "2000-12-31 00:00:00"},
    {"2000-12-31 00:00:00", "minute", "2000-12-31 00:00:00"},
    {"2000-12-31 00:00:00", "hour", "2000-12-31 00:00:00"},
    {"2000-12-31 00:00:00", "day", "2000-12-31 00:00:00"},
    {"2000-12-31 00:00:00", "week", "2000-12-25 00:00:00"},
    {"2000-12-31 00:00:00", "month", "2000-12-01 00:00:00"},
    {"2000-12-31 00:00:00", "quarter", "2000-10-01 00:00:00"},
    {"2000-12-31 00:00:00", "year", "2000-01-01 00:00:00"},
    {"2000-12-31 00:00:00", "decade", "2000-01-01 00:00:00"},
    {"2000-12-31 00:00:00", "century", "1901-01-01 00:00:00"},
    {"2000-12-31 00:00:00", "millennium", "1001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "microseconds", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "milliseconds", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "second", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "minute", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "hour", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "day", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "week", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "month", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "quarter", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "year", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "decade", "2000-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "century", "2001-01-01 00:00:00"},
    {"2001-01-01 00:00:00", "millennium", "2001-01-01 00:00:00"},
    {"1999-12-31 23:59:59.999999", "microseconds", "1999-12-31 23:59:59.999999"},
    {"1999-12-31 23:59:59.999999", "milliseconds", "1999-12-31 23:59:59.999"},
    {"1999-12-31 23:59:59.999999", "second", "1999-12-31 23:59:59"},
    {"1999-12-31 23:59:59.999999", "minute", "1999-12-31 23:59:00"},
    {"1999-12-31 23:59:59.999999", "hour", "1999-12-31 23:00:00"},
    {"1999-12-31 23:59:59.999999", "day", "1999-12-31 00:00:00"},
    {"1999-12-31 23:59:59.999999", "week", "1999-12-27 00:00:00"},
    {"1999-12-31 23:59:59.999999", "month", "1999-12-01 00:00:00"},
    {"1999-12-31 23:59:59.999999", "quarter", "1999-10-01 00:00:00"},
    {"1999-12-31 23:59:59.999999", "year", "1999-01-01 00:00:00"},
    {"1999-12-31 23:59:59.999999", "decade", "1990-01-01 00:00:00"},
    {"1999-12-31 23:59:59.999999", "century", "1901-01-01 00:00:00"},
    {"1999-12-31 23:59:59.999999", "millennium", "1001-01-01 00:00:00"},
    {"1000-05-05 05:05:05", "microseconds", "1000-05-05 05:05:05"},
    {"1000-05-05 05:05:05", "milliseconds", "1000-05-05 05:05:05"},
    {"1000-05-05 05:05:05", "second", "1000-05-05 05:05:05"},
    {"1000-05-05 05:05:05", "minute", "1000-05-05 05:05:00"},
    {"1000-05-05 05:05:05", "hour", "1000-05-05 05:00:00"},
    {"1000-05-05 05:05:05", "day", "1000-05-05 00:00:00"},
    {"1000-05-05 05:05:05", "week", "1000-05-05 00:00:00"},
    {"1000-05-05 05:05:05", "month", "1000-05-01 00:00:00"},
    {"1000-05-05 05:05:05", "quarter", "1000-04-01 00:00:00"},
    {"1000-05-05 05:05:05", "year", "1000-01-01 00:00:00"},
    {"1000-05-05 05:05:05", "decade", "1000-01-01 00:00:00"},
    {"1000-05-05 05:05:05", "century", "0901-01-01 00:00:00"},
    {"1000-05-05 05:05:05", "millennium", "0001-01-01 00:00:00"},
    {"4714-11-24 00:00:00 BC", "microseconds", "4714-11-24 00:00:00 BC"},
    {"4714-11-24 00:00:00 BC", "milliseconds", "4714-11-24 00:00:00 BC"},
    {"4714-11-24 00:00:00 BC", "second", "4714-11-24 00:00:00 BC"},
    {"4714-11-24 00:00:00 BC", "minute", "4714-11-24 00:00:00 BC"},
    {"4714-11-24 00:00:00 BC", "hour", "4714-11-24 00:00:00 BC"},
    {"4714-11-24 00:00:00 BC", "day", "4714-11-24 00:00:00 BC"},
    {"4714-11-24 00:00:00 BC", "week", "4714-11-24 00:00:00 BC"},
    {"4714-11-24 00:00:00 BC", "month", "ERROR: timestamp out of range"},
    {"4714-11-24 00:00:00 BC", "quarter", "ERROR: timestamp out of range"},
    {"4714-11-24 00:00:00 BC", "year", "ERROR: timestamp out of range"},
    {"4714-11-24 00:00:00 BC", "decade", "ERROR: timestamp out of range"},
    {"4714-11-24 00:00:00 BC", "century", "ERROR: timestamp out of range"},
    {"4714-11-24 00:00:00 BC", "millennium", "ERROR: timestamp out of range"},
    {"0010-01-01 BC", "microseconds", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "milliseconds", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "second", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "minute", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "hour", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "day", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "week", "0011-12-31 00:00:00 BC"},
    {"0010-01-01 BC", "month", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "quarter", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "year", "0010-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "decade", "0011-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "century", "0100-01-01 00:00:00 BC"},
    {"0010-01-01 BC", "millennium", "1000-01-01 00:00:00 BC"},
    {"0011-07-01 BC", "microseconds", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "milliseconds", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "second", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "minute", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "hour", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "day", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "week", "0011-06-25 00:00:00 BC"},
    {"0011-07-01 BC", "month", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "quarter", "0011-07-01 00:00:00 BC"},
    {"0011-07-01 BC", "year", "0011-01-01 00:00:00 BC"},
    {"0011-07-01 BC", "decade", "0011-01-01 00:00:00 BC"},
    {"0011-07-01 BC", "century", "0100-01-01 00:00:00 BC"},
    {"0011-07-01 BC", "millennium", "1000-01-01 00:00:00 BC"},
    {"1969-12-31 23:59:59.5", "microseconds", "1969-12-31 23:59:59.5"},
    {"1969-12-31 23:59:59.5", "milliseconds", "1969-12-31 23:59:59.5"},
    {"1969-12-31 23:59:59.5", "second", "1969-12-31 23:59:59"},
    {"1969-12-31 23:59:59.5", "minute", "1969-12-31 23:59:00"},
    {"1969-12-31 23:59:59.5", "hour", "1969-12-31 23:00:00"},
    {"1969-12-31 23:59:59.5", "day", "1969-12-31 00:00:00"},
    {"1969-12-31 23:59:59.5", "week", "1969-12-29 00:00:00"},
    {"1969-12-31 23:59:59.5", "month", "1969-12-01 00:00:00"},
    {"1969-12-31 23:59:59.5", "quarter", "1969-10-01 00:00:00"},
    {"1969-12-31 23:59:59.5", "year", "1969-01-01 00:00:00"},
    {"1969-12-31 23:59:59.5", "decade", "1960-01-01 00:00:00"},
    {"1969-12-31 23:59:59.5", "century", "1901-01-01 00:00:00"},
    {"1969-12-31 23:59:59.5", "millennium", "1001-01-01 00:00:00"},
};

// select t, u, extract(u, t::timestamp)::text for each t and u
constexpr Case kExtractTimestamp[] = {
    {"2026-12-06 12:34:56.789123", "microseconds", "56789123"},
    {"2026-12-06 12:34:56.789123", "milliseconds", "56789.123"},
    {"2026-12-06 12:34:56.789123", "second", "56.789123"},
    {"2026-12-06 12:34:56.789123", "minute", "34"},
    {"2026-12-06 12:34:56.789123", "hour", "12"},
    {"2026-12-06 12:34:56.789123", "day", "6"},
    {"2026-12-06 12:34:56.789123", "month", "12"},
    {"2026-12-06 12:34:56.789123", "quarter", "4"},
    {"2026-12-06 12:34:56.789123", "year", "2026"},
    {"2026-12-06 12:34:56.789123", "decade", "202"},
    {"2026-12-06 12:34:56.789123", "century", "21"},
    {"2026-12-06 12:34:56.789123", "millennium", "3"},
    {"2026-12-06 12:34:56.789123", "dow", "0"},
    {"2026-12-06 12:34:56.789123", "isodow", "7"},
    {"2026-12-06 12:34:56.789123", "doy", "340"},
    {"2026-12-06 12:34:56.789123", "week", "49"},
    {"2026-12-06 12:34:56.789123", "isoyear", "2026"},
    {"2026-12-06 12:34:56.789123", "epoch", "1796560496.789123"},
    {"2026-12-06 12:34:56.789123", "julian", "2461381.52426839262731481481"},
    {"2027-01-01 00:00:00", "microseconds", "0"},
    {"2027-01-01 00:00:00", "milliseconds", "0.000"},
    {"2027-01-01 00:00:00", "second", "0.000000"},
    {"2027-01-01 00:00:00", "minute", "0"},
    {"2027-01-01 00:00:00", "hour", "0"},
    {"2027-01-01 00:00:00", "day", "1"},
    {"2027-01-01 00:00:00", "month", "1"},
    {"2027-01-01 00:00:00", "quarter", "1"},
    {"2027-01-01 00:00:00", "year", "2027"},
    {"2027-01-01 00:00:00", "decade", "202"},
    {"2027-01-01 00:00:00", "century", "21"},
    {"2027-01-01 00:00:00", "millennium", "3"},
    {"2027-01-01 00:00:00", "dow", "5"},
    {"2027-01-01 00:00:00", "isodow", "5"},
    {"2027-01-01 00:00:00", "doy", "1"},
    {"2027-01-01 00:00:00", "week", "53"},
    {"2027-01-01 00:00:00", "isoyear", "2026"},
    {"2027-01-01 00:00:00", "epoch", "1798761600.000000"},
    {"2027-01-01 00:00:00", "julian", "2461407.0000000000000000000000000000"},
    {"2021-01-03 23:59:59", "microseconds", "59000000"},
    {"2021-01-03 23:59:59", "milliseconds", "59000.000"},
    {"2021-01-03 23:59:59", "second", "59.000000"},
    {"2021-01-03 23:59:59", "minute", "59"},
    {"2021-01-03 23:59:59", "hour", "23"},
    {"2021-01-03 23:59:59", "day", "3"},
    {"2021-01-03 23:59:59", "month", "1"},
    {"2021-01-03 23:59:59", "quarter", "1"},
    {"2021-01-03 23:59:59", "year", "2021"},
    {"2021-01-03 23:59:59", "decade", "202"},
    {"2021-01-03 23:59:59", "century", "21"},
    {"2021-01-03 23:59:59", "millennium", "3"},
    {"2021-01-03 23:59:59", "dow", "0"},
    {"2021-01-03 23:59:59", "isodow", "7"},
    {"2021-01-03 23:59:59", "doy", "3"},
    {"2021-01-03 23:59:59", "week", "53"},
    {"2021-01-03 23:59:59", "isoyear", "2020"},
    {"2021-01-03 23:59:59", "epoch", "1609718399.000000"},
    {"2021-01-03 23:59:59", "julian", "2459218.99998842592592592593"},
    {"0044-03-15 12:00:00 BC", "microseconds", "0"},
    {"0044-03-15 12:00:00 BC", "milliseconds", "0.000"},
    {"0044-03-15 12:00:00 BC", "second", "0.000000"},
    {"0044-03-15 12:00:00 BC", "minute", "0"},
    {"0044-03-15 12:00:00 BC", "hour", "12"},
    {"0044-03-15 12:00:00 BC", "day", "15"},
    {"0044-03-15 12:00:00 BC", "month", "3"},
    {"0044-03-15 12:00:00 BC", "quarter", "1"},
    {"0044-03-15 12:00:00 BC", "year", "-44"},
    {"0044-03-15 12:00:00 BC", "decade", "-5"},
    {"0044-03-15 12:00:00 BC", "century", "-1"},
    {"0044-03-15 12:00:00 BC", "millennium", "-1"},
    {"0044-03-15 12:00:00 BC", "dow", "5"},
    {"0044-03-15 12:00:00 BC", "isodow", "5"},
    {"0044-03-15 12:00:00 BC", "doy", "74"},
    {"0044-03-15 12:00:00 BC", "week", "11"},
    {"0044-03-15 12:00:00 BC", "isoyear", "-44"},
    {"0044-03-15 12:00:00 BC", "epoch", "-63517780800.000000"},
    {"0044-03-15 12:00:00 BC", "julian", "1705428.50000000000000000000"},
    {"0001-01-01 00:00:00", "microseconds", "0"},
    {"0001-01-01 00:00:00", "milliseconds", "0.000"},
    {"0001-01-01 00:00:00", "second", "0.000000"},
    {"0001-01-01 00:00:00", "minute", "0"},
    {"0001-01-01 00:00:00", "hour", "0"},
    {"0001-01-01 00:00:00", "day", "1"},
    {"0001-01-01 00:00:00", "month", "1"},
    {"0001-01-01 00:00:00", "quarter", "1"},
    {"0001-01-01 00:00:00", "year", "1"},
    {"0001-01-01 00:00:00", "decade", "0"},
    {"0001-01-01 00:00:00", "century", "1"},
    {"0001-01-01 00:00:00", "millennium", "1"},
    {"0001-01-01 00:00:00", "dow", "1"},
    {"0001-01-01 00:00:00", "isodow", "1"},
    {"0001-01-01 00:00:00", "doy", "1"},
    {"0001-01-01 00:00:00", "week", "1"},
    {"0001-01-01 00:00:00", "isoyear", "1"},
    {"0001-01-01 00:00:00", "epoch", "-62135596800.000000"},
    {"0001-01-01 00:00:00", "julian", "1721426.0000000000000000000000000000"},
    {"0005-06-01 00:00:00 BC", "microseconds", "0"},
    {"0005-06-01 00:00:00 BC", "milliseconds", "0.000"},
    {"0005-06-01 00:00:00 BC", "second", "0.000000"},
    {"0005-06-01 00:00:00 BC", "minute", "0"},
    {"0005-06-01 00:00:00 BC", "hour", "0"},
    {"0005-06-01 00:00:00 BC", "day", "1"},
    {"0005-06-01 00:00:00 BC", "month", "6"},
    {"0005-06-01 00:00:00 BC", "quarter", "2"},
    {"0005-06-01 00:00:00 BC", "year", "-5"},
    {"0005-06-01 00:00:00 BC", "decade", "-1"},
    {"0005-06-01 00:00:00 BC", "century", "-1"},
    {"0005-06-01 00:00:00 BC", "millennium", "-1"},
    {"0005-06-01 00:00:00 BC", "dow", "6"},
    {"0005-06-01 00:00:00 BC", "isodow", "6"},
    {"0005-06-01 00:00:00 BC", "doy", "153"},
    {"0005-06-01 00:00:00 BC", "week", "22"},
    {"0005-06-01 00:00:00 BC", "isoyear", "-5"},
    {"0005-06-01 00:00:00 BC", "epoch", "-62280316800.000000"},
    {"0005-06-01 00:00:00 BC", "julian", "1719751.0000000000000000000000000000"},
    {"2000-12-31 00:00:00", "microseconds", "0"},
    {"2000-12-31 00:00:00", "milliseconds", "0.000"},
    {"2000-12-31 00:00:00", "second", "0.000000"},
    {"2000-12-31 00:00:00", "minute", "0"},
    {"2000-12-31 00:00:00", "hour", "0"},
    {"2000-12-31 00:00:00", "day", "31"},
    {"2000-12-31 00:00:00", "month", "12"},
    {"2000-12-31 00:00:00", "quarter", "4"},
    {"2000-12-31 00:00:00", "year", "2000"},
    {"2000-12-31 00:00:00", "decade", "200"},
    {"2000-12-31 00:00:00", "century", "20"},
    {"2000-12-31 00:00:00", "millennium", "2"},
    {"2000-12-31 00:00:00", "dow", "0"},
    {"2000-12-31 00:00:00", "isodow", "7"},
    {"2000-12-31 00:00:00", "doy", "366"},
    {"2000-12-31 00:00:00", "week", "52"},
    {"2000-12-31 00:00:00", "isoyear", "2000"},
    {"2000-12-31 00:00:00", "epoch", "978220800.000000"},
    {"2000-12-31 00:00:00", "julian", "2451910.0000000000000000000000000000"},
    {"2001-01-01 00:00:00", "microseconds", "0"},
    {"2001-01-01 00:00:00", "milliseconds", "0.000"},
    {"2001-01-01 00:00:00", "second", "0.000000"},
    {"2001-01-01 00:00:00", "minute", "0"},
    {"2001-01-01 00:00:00", "hour", "0"},
    {"2001-01-01 00:00:00", "day", "1"},
    {"2001-01-01 00:00:00", "month", "1"},
    {"2001-01-01 00:00:00", "quarter", "1"},
    {"2001-01-01 00:00:00", "year", "2001"},
    {"2001-01-01 00:00:00", "decade", "200"},
    {"2001-01-01 00:00:00", "century", "21"},
    {"2001-01-01 00:00:00", "millennium", "3"},
    {"2001-01-01 00:00:00", "dow", "1"},
    {"2001-01-01 00:00:00", "isodow", "1"},
    {"2001-01-01 00:00:00", "doy", "1"},
    {"2001-01-01 00:00:00", "week", "1"},
    {"2001-01-01 00:00:00", "isoyear", "2001"},
    {"2001-01-01 00:00:00", "epoch", "978307200.000000"},
    {"2001-01-01 00:00:00", "julian", "2451911.0000000000000000000000000000"},
    {"1969-12-31 23:59:59.5", "microseconds", "59500000"},
    {"1969-12-31 23:59:59.5", "milliseconds", "59500.000"},
    {"1969-12-31 23:59:59.5", "second", "59.500000"},
    {"1969-12-31 23:59:59.5", "minute", "59"},
    {"1969-12-31 23:59:59.5", "hour", "23"},
    {"1969-12-31 23:59:59.5", "day", "31"},
    {"1969-12-31 23:59:59.5", "month", "12"},
    {"1969-12-31 23:59:59.5", "quarter", "4"},
    {"1969-12-31 23:59:59.5", "year", "1969"},
    {"1969-12-31 23:59:59.5", "decade", "196"},
    {"1969-12-31 23:59:59.5", "century", "20"},
    {"1969-12-31 23:59:59.5", "millennium", "2"},
    {"1969-12-31 23:59:59.5", "dow", "3"},
    {"1969-12-31 23:59:59.5", "isodow", "3"},
    {"1969-12-31 23:59:59.5", "doy", "365"},
    {"1969-12-31 23:59:59.5", "week", "1"},
    {"1969-12-31 23:59:59.5", "isoyear", "1970"},
    {"1969-12-31 23:59:59.5", "epoch", "-0.500000"},
    {"1969-12-31 23:59:59.5", "julian", "2440587.99999421296296296296"},
    {"4714-11-24 00:00:00 BC", "microseconds", "0"},
    {"4714-11-24 00:00:00 BC", "milliseconds", "0.000"},
    {"4714-11-24 00:00:00 BC", "second", "0.000000"},
    {"4714-11-24 00:00:00 BC", "minute", "0"},
    {"4714-11-24 00:00:00 BC", "hour", "0"},
    {"4714-11-24 00:00:00 BC", "day", "24"},
    {"4714-11-24 00:00:00 BC", "month", "11"},
    {"4714-11-24 00:00:00 BC", "quarter", "4"},
    {"4714-11-24 00:00:00 BC", "year", "-4714"},
    {"4714-11-24 00:00:00 BC", "decade", "-472"},
    {"4714-11-24 00:00:00 BC", "century", "-48"},
    {"4714-11-24 00:00:00 BC", "millennium", "-5"},
    {"4714-11-24 00:00:00 BC", "dow", "1"},
    {"4714-11-24 00:00:00 BC", "isodow", "1"},
    {"4714-11-24 00:00:00 BC", "doy", "328"},
    {"4714-11-24 00:00:00 BC", "week", "48"},
    {"4714-11-24 00:00:00 BC", "isoyear", "-4714"},
    {"4714-11-24 00:00:00 BC", "epoch", "-210866803200.000000"},
    {"4714-11-24 00:00:00 BC", "julian", "0.0000000000000000000000000000"},
    {"2024-12-30 06:00:00", "microseconds", "0"},
    {"2024-12-30 06:00:00", "milliseconds", "0.000"},
    {"2024-12-30 06:00:00", "second", "0.000000"},
    {"2024-12-30 06:00:00", "minute", "0"},
    {"2024-12-30 06:00:00", "hour", "6"},
    {"2024-12-30 06:00:00", "day", "30"},
    {"2024-12-30 06:00:00", "month", "12"},
    {"2024-12-30 06:00:00", "quarter", "4"},
    {"2024-12-30 06:00:00", "year", "2024"},
    {"2024-12-30 06:00:00", "decade", "202"},
    {"2024-12-30 06:00:00", "century", "21"},
    {"2024-12-30 06:00:00", "millennium", "3"},
    {"2024-12-30 06:00:00", "dow", "1"},
    {"2024-12-30 06:00:00", "isodow", "1"},
    {"2024-12-30 06:00:00", "doy", "365"},
    {"2024-12-30 06:00:00", "week", "1"},
    {"2024-12-30 06:00:00", "isoyear", "2025"},
    {"2024-12-30 06:00:00", "epoch", "1735538400.000000"},
    {"2024-12-30 06:00:00", "julian", "2460675.25000000000000000000"},
    {"0010-01-01 BC", "microseconds", "0"},
    {"0010-01-01 BC", "milliseconds", "0.000"},
    {"0010-01-01 BC", "second", "0.000000"},
    {"0010-01-01 BC", "minute", "0"},
    {"0010-01-01 BC", "hour", "0"},
    {"0010-01-01 BC", "day", "1"},
    {"0010-01-01 BC", "month", "1"},
    {"0010-01-01 BC", "quarter", "1"},
    {"0010-01-01 BC", "year", "-10"},
    {"0010-01-01 BC", "decade", "-1"},
    {"0010-01-01 BC", "century", "-1"},
    {"0010-01-01 BC", "millennium", "-1"},
    {"0010-01-01 BC", "dow", "2"},
    {"0010-01-01 BC", "isodow", "2"},
    {"0010-01-01 BC", "doy", "1"},
    {"0010-01-01 BC", "week", "1"},
    {"0010-01-01 BC", "isoyear", "-10"},
    {"0010-01-01 BC", "epoch", "-62451216000.000000"},
    {"0010-01-01 BC", "julian", "1717773.0000000000000000000000000000"},
};

// select t, u, date_trunc(u, t::interval)
constexpr Case kTruncInterval[] = {
    {"1234 years 11 mons 3 days 04:05:06.789123", "microseconds",
     "1234 years 11 mons 3 days 04:05:06.789123"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "milliseconds",
     "1234 years 11 mons 3 days 04:05:06.789"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "second", "1234 years 11 mons 3 days 04:05:06"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "minute", "1234 years 11 mons 3 days 04:05:00"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "hour", "1234 years 11 mons 3 days 04:00:00"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "day", "1234 years 11 mons 3 days"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "week",
     "ERROR: unit \"week\" not supported for type interval"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "month", "1234 years 11 mons"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "quarter", "1234 years 9 mons"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "year", "1234 years"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "decade", "1230 years"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "century", "1200 years"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "millennium", "1000 years"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "microseconds",
     "-1234 years -11 mons -3 days -04:05:06.789123"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "milliseconds",
     "-1234 years -11 mons -3 days -04:05:06.789"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "second",
     "-1234 years -11 mons -3 days -04:05:06"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "minute",
     "-1234 years -11 mons -3 days -04:05:00"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "hour",
     "-1234 years -11 mons -3 days -04:00:00"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "day", "-1234 years -11 mons -3 days"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "week",
     "ERROR: unit \"week\" not supported for type interval"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "month", "-1234 years -11 mons"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "quarter", "-1234 years -9 mons"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "year", "-1234 years"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "decade", "-1230 years"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "century", "-1200 years"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "millennium", "-1000 years"},
    {"5 mons -3 days +49:00:00.5", "microseconds", "5 mons -3 days +49:00:00.5"},
    {"5 mons -3 days +49:00:00.5", "milliseconds", "5 mons -3 days +49:00:00.5"},
    {"5 mons -3 days +49:00:00.5", "second", "5 mons -3 days +49:00:00"},
    {"5 mons -3 days +49:00:00.5", "minute", "5 mons -3 days +49:00:00"},
    {"5 mons -3 days +49:00:00.5", "hour", "5 mons -3 days +49:00:00"},
    {"5 mons -3 days +49:00:00.5", "day", "5 mons -3 days"},
    {"5 mons -3 days +49:00:00.5", "week", "ERROR: unit \"week\" not supported for type interval"},
    {"5 mons -3 days +49:00:00.5", "month", "5 mons"},
    {"5 mons -3 days +49:00:00.5", "quarter", "3 mons"},
    {"5 mons -3 days +49:00:00.5", "year", "00:00:00"},
    {"5 mons -3 days +49:00:00.5", "decade", "00:00:00"},
    {"5 mons -3 days +49:00:00.5", "century", "00:00:00"},
    {"5 mons -3 days +49:00:00.5", "millennium", "00:00:00"},
};

// select t, u, extract(u, t::interval)::text
constexpr Case kExtractInterval[] = {
    {"1234 years 11 mons 3 days 04:05:06.789123", "microseconds", "6789123"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "milliseconds", "6789.123"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "second", "6.789123"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "minute", "5"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "hour", "4"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "day", "3"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "month", "11"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "quarter", "4"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "year", "1234"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "decade", "123"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "century", "12"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "millennium", "1"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "epoch", "38970864306.789123"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "week",
     "ERROR: unit \"week\" not supported for type interval"},
    {"1234 years 11 mons 3 days 04:05:06.789123", "dow",
     "ERROR: unit \"dow\" not supported for type interval"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "microseconds", "-6789123"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "milliseconds", "-6789.123"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "second", "-6.789123"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "minute", "-5"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "hour", "-4"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "day", "-3"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "month", "-11"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "quarter", "-2"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "year", "-1234"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "decade", "-123"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "century", "-12"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "millennium", "-1"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "epoch", "-38970864306.789123"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "week",
     "ERROR: unit \"week\" not supported for type interval"},
    {"-1234 years -11 mons -3 days -04:05:06.789123", "dow",
     "ERROR: unit \"dow\" not supported for type interval"},
    {"5 mons -3 days +49:00:00.5", "microseconds", "500000"},
    {"5 mons -3 days +49:00:00.5", "milliseconds", "500.000"},
    {"5 mons -3 days +49:00:00.5", "second", "0.500000"},
    {"5 mons -3 days +49:00:00.5", "minute", "0"},
    {"5 mons -3 days +49:00:00.5", "hour", "49"},
    {"5 mons -3 days +49:00:00.5", "day", "-3"},
    {"5 mons -3 days +49:00:00.5", "month", "5"},
    {"5 mons -3 days +49:00:00.5", "quarter", "2"},
    {"5 mons -3 days +49:00:00.5", "year", "0"},
    {"5 mons -3 days +49:00:00.5", "decade", "0"},
    {"5 mons -3 days +49:00:00.5", "century", "0"},
    {"5 mons -3 days +49:00:00.5", "millennium", "0"},
    {"5 mons -3 days +49:00:00.5", "epoch", "12877200.500000"},
    {"5 mons -3 days +49:00:00.5", "week", "ERROR: unit \"week\" not supported for type interval"},
    {"5 mons -3 days +49:00:00.5", "dow", "ERROR: unit \"dow\" not supported for type interval"},
    {"-1 mons", "microseconds", "0"},
    {"-1 mons", "milliseconds", "0.000"},
    {"-1 mons", "second", "0.000000"},
    {"-1 mons", "minute", "0"},
    {"-1 mons", "hour", "0"},
    {"-1 mons", "day", "0"},
    {"-1 mons", "month", "-1"},
    {"-1 mons", "quarter", "1"},
    {"-1 mons", "year", "0"},
    {"-1 mons", "decade", "0"},
    {"-1 mons", "century", "0"},
    {"-1 mons", "millennium", "0"},
    {"-1 mons", "epoch", "-2592000.000000"},
    {"-1 mons", "week", "ERROR: unit \"week\" not supported for type interval"},
    {"-1 mons", "dow", "ERROR: unit \"dow\" not supported for type interval"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "microseconds", "54775807"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "milliseconds", "54775.807"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "second", "54.775807"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "minute", "0"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "hour", "2562047788"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "day", "2147483647"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "month", "7"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "quarter", "3"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "year", "178956970"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "decade", "17895697"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "century", "1789569"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "millennium", "178956"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "epoch",
     "5842218453753654.775807"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "week",
     "ERROR: unit \"week\" not supported for type interval"},
    {"178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", "dow",
     "ERROR: unit \"dow\" not supported for type interval"},
};

// select t, u, extract(u, t::date)::text
constexpr Case kExtractDate[] = {
    {"2026-12-06", "microseconds", "ERROR: unit \"microseconds\" not supported for type date"},
    {"2026-12-06", "second", "ERROR: unit \"second\" not supported for type date"},
    {"2026-12-06", "hour", "ERROR: unit \"hour\" not supported for type date"},
    {"2026-12-06", "day", "6"},
    {"2026-12-06", "month", "12"},
    {"2026-12-06", "quarter", "4"},
    {"2026-12-06", "year", "2026"},
    {"2026-12-06", "decade", "202"},
    {"2026-12-06", "century", "21"},
    {"2026-12-06", "millennium", "3"},
    {"2026-12-06", "dow", "0"},
    {"2026-12-06", "isodow", "7"},
    {"2026-12-06", "doy", "340"},
    {"2026-12-06", "week", "49"},
    {"2026-12-06", "isoyear", "2026"},
    {"2026-12-06", "epoch", "1796515200"},
    {"2026-12-06", "julian", "2461381"},
    {"2026-12-06", "timezone", "ERROR: unit \"timezone\" not supported for type date"},
    {"2026-12-06", "foo", "ERROR: unit \"foo\" not recognized for type date"},
    {"0044-03-15 BC", "microseconds", "ERROR: unit \"microseconds\" not supported for type date"},
    {"0044-03-15 BC", "second", "ERROR: unit \"second\" not supported for type date"},
    {"0044-03-15 BC", "hour", "ERROR: unit \"hour\" not supported for type date"},
    {"0044-03-15 BC", "day", "15"},
    {"0044-03-15 BC", "month", "3"},
    {"0044-03-15 BC", "quarter", "1"},
    {"0044-03-15 BC", "year", "-44"},
    {"0044-03-15 BC", "decade", "-5"},
    {"0044-03-15 BC", "century", "-1"},
    {"0044-03-15 BC", "millennium", "-1"},
    {"0044-03-15 BC", "dow", "5"},
    {"0044-03-15 BC", "isodow", "5"},
    {"0044-03-15 BC", "doy", "74"},
    {"0044-03-15 BC", "week", "11"},
    {"0044-03-15 BC", "isoyear", "-44"},
    {"0044-03-15 BC", "epoch", "-63517824000"},
    {"0044-03-15 BC", "julian", "1705428"},
    {"0044-03-15 BC", "timezone", "ERROR: unit \"timezone\" not supported for type date"},
    {"0044-03-15 BC", "foo", "ERROR: unit \"foo\" not recognized for type date"},
    {"5874897-12-31", "microseconds", "ERROR: unit \"microseconds\" not supported for type date"},
    {"5874897-12-31", "second", "ERROR: unit \"second\" not supported for type date"},
    {"5874897-12-31", "hour", "ERROR: unit \"hour\" not supported for type date"},
    {"5874897-12-31", "day", "31"},
    {"5874897-12-31", "month", "12"},
    {"5874897-12-31", "quarter", "4"},
    {"5874897-12-31", "year", "5874897"},
    {"5874897-12-31", "decade", "587489"},
    {"5874897-12-31", "century", "58749"},
    {"5874897-12-31", "millennium", "5875"},
    {"5874897-12-31", "dow", "2"},
    {"5874897-12-31", "isodow", "2"},
    {"5874897-12-31", "doy", "365"},
    {"5874897-12-31", "week", "1"},
    {"5874897-12-31", "isoyear", "5874898"},
    {"5874897-12-31", "epoch", "185331706992000"},
    {"5874897-12-31", "julian", "2147483493"},
    {"5874897-12-31", "timezone", "ERROR: unit \"timezone\" not supported for type date"},
    {"5874897-12-31", "foo", "ERROR: unit \"foo\" not recognized for type date"},
    {"4714-11-24 BC", "microseconds", "ERROR: unit \"microseconds\" not supported for type date"},
    {"4714-11-24 BC", "second", "ERROR: unit \"second\" not supported for type date"},
    {"4714-11-24 BC", "hour", "ERROR: unit \"hour\" not supported for type date"},
    {"4714-11-24 BC", "day", "24"},
    {"4714-11-24 BC", "month", "11"},
    {"4714-11-24 BC", "quarter", "4"},
    {"4714-11-24 BC", "year", "-4714"},
    {"4714-11-24 BC", "decade", "-472"},
    {"4714-11-24 BC", "century", "-48"},
    {"4714-11-24 BC", "millennium", "-5"},
    {"4714-11-24 BC", "dow", "1"},
    {"4714-11-24 BC", "isodow", "1"},
    {"4714-11-24 BC", "doy", "328"},
    {"4714-11-24 BC", "week", "48"},
    {"4714-11-24 BC", "isoyear", "-4714"},
    {"4714-11-24 BC", "epoch", "-210866803200"},
    {"4714-11-24 BC", "julian", "0"},
    {"4714-11-24 BC", "timezone", "ERROR: unit \"timezone\" not supported for type date"},
    {"4714-11-24 BC", "foo", "ERROR: unit \"foo\" not recognized for type date"},
};

// select t, u, extract(u, t::time)::text
constexpr Case kExtractTime[] = {
    {"12:34:56.789123", "microseconds", "56789123"},
    {"12:34:56.789123", "milliseconds", "56789.123"},
    {"12:34:56.789123", "second", "56.789123"},
    {"12:34:56.789123", "minute", "34"},
    {"12:34:56.789123", "hour", "12"},
    {"12:34:56.789123", "day", "ERROR: unit \"day\" not supported for type time without time zone"},
    {"12:34:56.789123", "epoch", "45296.789123"},
    {"12:34:56.789123", "julian",
     "ERROR: unit \"julian\" not supported for type time without time zone"},
    {"12:34:56.789123", "dow", "ERROR: unit \"dow\" not supported for type time without time zone"},
    {"12:34:56.789123", "foo",
     "ERROR: unit \"foo\" not recognized for type time without time zone"},
    {"24:00:00", "microseconds", "0"},
    {"24:00:00", "milliseconds", "0.000"},
    {"24:00:00", "second", "0.000000"},
    {"24:00:00", "minute", "0"},
    {"24:00:00", "hour", "24"},
    {"24:00:00", "day", "ERROR: unit \"day\" not supported for type time without time zone"},
    {"24:00:00", "epoch", "86400.000000"},
    {"24:00:00", "julian", "ERROR: unit \"julian\" not supported for type time without time zone"},
    {"24:00:00", "dow", "ERROR: unit \"dow\" not supported for type time without time zone"},
    {"24:00:00", "foo", "ERROR: unit \"foo\" not recognized for type time without time zone"},
    {"00:00:00", "microseconds", "0"},
    {"00:00:00", "milliseconds", "0.000"},
    {"00:00:00", "second", "0.000000"},
    {"00:00:00", "minute", "0"},
    {"00:00:00", "hour", "0"},
    {"00:00:00", "day", "ERROR: unit \"day\" not supported for type time without time zone"},
    {"00:00:00", "epoch", "0.000000"},
    {"00:00:00", "julian", "ERROR: unit \"julian\" not supported for type time without time zone"},
    {"00:00:00", "dow", "ERROR: unit \"dow\" not supported for type time without time zone"},
    {"00:00:00", "foo", "ERROR: unit \"foo\" not recognized for type time without time zone"},
};

// select t, i, t::timestamp + i::interval (the row at 294247-01-10 04:00:54.775808 is past Tandem's
// int64 end: an error here, a value in PostgreSQL)
constexpr Case kTimestampPlusInterval[] = {
    {"2024-01-31", "1 mon", "2024-02-29 00:00:00"},
    {"2024-02-29", "1 year", "2025-02-28 00:00:00"},
    {"2024-02-29", "-1 year", "2023-02-28 00:00:00"},
    {"2024-02-29", "4 years", "2028-02-29 00:00:00"},
    {"2024-03-31", "-1 mon", "2024-02-29 00:00:00"},
    {"2023-01-31", "1 mon", "2023-02-28 00:00:00"},
    {"2024-01-31 12:00", "1 mon 1 day 13:00", "2024-03-02 01:00:00"},
    {"2024-12-31", "2 mons", "2025-02-28 00:00:00"},
    {"2025-01-31", "-2 mons", "2024-11-30 00:00:00"},
    {"2024-05-31", "-15 mons", "2023-02-28 00:00:00"},
    {"0001-01-01", "-1 day", "0001-12-31 00:00:00 BC"},
    {"0001-03-01 BC", "-1 day", "0001-02-29 00:00:00 BC"},
    {"0001-02-29 BC", "1 year", "0001-02-28 00:00:00"},
    {"0044-03-15 BC", "2069 years", "2026-03-15 00:00:00"},
    {"2026-12-06 12:00", "-1 days +02:03:00", "2026-12-05 14:03:00"},
    {"2026-12-06 12:00", "-36:00:00", "2026-12-05 00:00:00"},
    {"2026-12-06", "1.5 mons", "2027-01-21 00:00:00"},
    {"294247-01-10 00:00", "04:00:54.775807", "294247-01-10 04:00:54.775807"},
    {"294247-01-10 00:00", "04:00:54.775808", "ERROR: timestamp out of range"},
    {"294246-12-10", "1 mon", "294247-01-10 00:00:00"},
    {"4714-11-24 BC", "-00:00:00.000001", "ERROR: timestamp out of range"},
    {"4714-12-24 BC", "-1 mon", "4714-11-24 00:00:00 BC"},
    {"4714-12-24 BC", "-30 days", "4714-11-24 00:00:00 BC"},
    {"2000-01-01", "2147483647 mons", "ERROR: timestamp out of range"},
    {"2000-01-01", "-2147483648 days", "ERROR: timestamp out of range"},
};

// select a, b, a::timestamp - b::timestamp
constexpr Case kTimestampMinusTimestamp[] = {
    {"2026-12-06 12:00", "2026-11-01 18:30", "34 days 17:30:00"},
    {"2026-11-01 18:30", "2026-12-06 12:00", "-34 days -17:30:00"},
    {"2026-12-06 12:00", "2026-12-06 11:59:59.999999", "00:00:00.000001"},
    {"2026-12-06", "0044-03-15 BC", "755953 days"},
    {"2000-03-01", "2000-02-28", "2 days"},
    {"2026-12-06 00:00", "2026-12-05 23:00", "01:00:00"},
    {"2026-12-05 23:00", "2026-12-06 01:00", "-02:00:00"},
};

// select i, f, i::interval * f::float8
constexpr Case kIntervalTimesFloat[] = {
    {"1 mon", "1.5", "1 mon 15 days"},
    {"1 day", "1.5", "1 day 12:00:00"},
    {"1 mon 1 day 1 hour", "0.3", "9 days 07:30:00"},
    {"-1 mon", "0.5", "-15 days"},
    {"3 mons", "-0.37", "-1 mons -3 days -07:12:00"},
    {"1 year 2 mons 3 days 04:05:06.789", "3.14159", "3 years 7 mons 38 days 34:15:20.749255"},
    {"1 day", "1e10", "ERROR: interval out of range"},
    {"100 years", "1e10", "ERROR: interval out of range"},
    {"1 mon", "0", "00:00:00"},
    {"-2147483648 days", "-1", "ERROR: interval out of range"},
    {"1 us", "0.5", "00:00:00"},
    {"3 us", "0.5", "00:00:00.000002"},
    {"1 mon 29 days 23:59:59", "2", "2 mons 58 days 47:59:58"},
    {"7 mons", "1.1", "7 mons 21 days"},
};

// select i, f, i::interval / f::float8
constexpr Case kIntervalDividedByFloat[] = {
    {"1 mon", "7", "4 days 06:51:25.6896"},
    {"1 day", "3", "08:00:00"},
    {"1 year", "1000", "08:38:24"},
    {"1 day", "0", "ERROR: division by zero"},
    {"-1 mon -1 day", "3", "-10 days -08:00:00"},
    {"1 year 2 mons 3 days 04:05:06.789", "-2.5", "-5 mons -19 days -06:26:02.7156"},
    {"1 us", "2", "00:00:00"},
    {"3 us", "2", "00:00:00.000002"},
};

// select a, b, sign of a::interval compared with b::interval
constexpr Case kIntervalComparison[] = {
    {"1 mon", "30 days", "0"},
    {"1 day", "24 hours", "0"},
    {"1 mon 1 day", "30 days 23:00", "1"},
    {"1 year", "360 days", "0"},
    {"1 year", "365 days", "-1"},
    {"-1 mon", "-29 days", "-1"},
    {"178956970 years 7 mons", "2147483647 days", "1"},
};

// A numeric as its text says: the digits as the coefficient, the digits after the point as the
// scale (so 1.500000 is 1500000 at scale 6, and the display scale is checked too).
std::string NumericShown(const Result<Numeric>& r) {
  if (!r.ok()) return "ERROR: " + r.status().message();
  Int128 c = r->coefficient();
  const bool negative = c < 0;
  std::string digits;
  UInt128 mag = negative ? 0 - static_cast<UInt128>(c) : static_cast<UInt128>(c);
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(mag % 10)));
    mag /= 10;
  } while (mag != 0);
  while (digits.size() <= r->scale) digits.insert(digits.begin(), '0');
  if (r->scale > 0) digits.insert(digits.end() - r->scale, '.');
  return (negative ? "-" : "") + digits;
}

// An error matches when PostgreSQL's message starts ours (ours may add a detail).
void ExpectAnswer(const std::string& got, const Case& c) {
  const std::string want = c.want;
  if (want.rfind("ERROR: ", 0) == 0) {
    EXPECT_EQ(got.substr(0, want.size()), want) << c.a << " | " << c.b;
  } else {
    EXPECT_EQ(got, want) << c.a << " | " << c.b;
  }
}

TEST(DatetimeTrunc, TimestampUnitsMatchPostgresIncludingBcCenturies) {
  for (const Case& c : kTruncTimestamp) {
    ExpectAnswer(Shown(DateTruncTimestamp(c.b, Ts(c.a)), TimestampText), c);
  }
}

// select date_trunc('day', timestamptz '2026-12-06 01:30:00+05:00')
TEST(DatetimeTrunc, TimestampTzTruncatesTheUtcReading) {
  auto t = ParseTimestampTz("2026-12-06 01:30:00+05:00");  // 2026-12-05 20:30 UTC
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Shown(DateTruncTimestampTz("day", *t), TimestampTzText), "2026-12-05 00:00:00+00");
  EXPECT_EQ(Shown(DateTruncTimestampTz("foo", *t), TimestampTzText),
            "ERROR: unit \"foo\" not recognized for type timestamp with time zone");
}

TEST(DatetimeTrunc, UnknownAndExtractOnlyUnitsAreRefusedAsPostgresWordsThem) {
  // select date_trunc('foo' | 'dow' | 'epoch' | 'timezone', timestamp '2026-12-06 12:34:56.789')
  const Timestamp t = Ts("2026-12-06 12:34:56.789");
  EXPECT_EQ(Shown(DateTruncTimestamp("foo", t), TimestampText),
            "ERROR: unit \"foo\" not recognized for type timestamp without time zone");
  EXPECT_EQ(Shown(DateTruncTimestamp("dow", t), TimestampText),
            "ERROR: unit \"dow\" not recognized for type timestamp without time zone");
  EXPECT_EQ(Shown(DateTruncTimestamp("epoch", t), TimestampText),
            "ERROR: unit \"epoch\" not recognized for type timestamp without time zone");
  EXPECT_EQ(Shown(DateTruncTimestamp("timezone", t), TimestampText),
            "ERROR: unit \"timezone\" not supported for type timestamp without time zone");
  // Case and plurals, and PostgreSQL's ten-character names: 'Day', 'WEEKS', 'microsecondsxyz'.
  EXPECT_EQ(Shown(DateTruncTimestamp("Day", t), TimestampText), "2026-12-06 00:00:00");
  EXPECT_EQ(Shown(DateTruncTimestamp("WEEKS", t), TimestampText), "2026-11-30 00:00:00");
  EXPECT_EQ(Shown(DateTruncTimestamp("microsecondsxyz", t), TimestampText),
            "2026-12-06 12:34:56.789");
}

TEST(DatetimeTrunc, IntervalUnitsMatchPostgres) {
  for (const Case& c : kTruncInterval) {
    ExpectAnswer(Shown(DateTruncInterval(c.b, Iv(c.a)), IntervalText), c);
  }
}

TEST(DatetimeExtract, TimestampFieldsMatchPostgresNumerics) {
  for (const Case& c : kExtractTimestamp)
    ExpectAnswer(NumericShown(ExtractTimestamp(c.b, Ts(c.a))), c);
}

// select extract(day | hour | timezone | epoch from timestamptz '2026-12-06 01:30:00+05:00')
TEST(DatetimeExtract, TimestampTzFieldsAreTheUtcReadingAndItsZoneIsZero) {
  auto t = ParseTimestampTz("2026-12-06 01:30:00+05:00");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(NumericShown(ExtractTimestampTz("day", *t)), "5");
  EXPECT_EQ(NumericShown(ExtractTimestampTz("hour", *t)), "20");
  EXPECT_EQ(NumericShown(ExtractTimestampTz("timezone", *t)), "0");
  EXPECT_EQ(NumericShown(ExtractTimestampTz("epoch", *t)), "1796502600.000000");
}

// select extract(epoch from timestamp '294247-01-10 04:00:54.775807'): PostgreSQL's numeric path
// for its last instant keeps four decimals.
TEST(DatetimeExtract, EpochOfTheLastInstantIsPostgresRounded) {
  EXPECT_EQ(NumericShown(ExtractTimestamp("epoch", Timestamp{INT64_MAX})), "9223372036854.775800");
  EXPECT_EQ(NumericShown(ExtractTimestamp("epoch", Timestamp{INT64_MAX - 1})),
            "9223372036854.775806");
}

TEST(DatetimeExtract, DateFieldsMatchPostgresNumerics) {
  for (const Case& c : kExtractDate) ExpectAnswer(NumericShown(ExtractDate(c.b, Dt(c.a))), c);
}

TEST(DatetimeExtract, TimeFieldsMatchPostgresNumerics) {
  for (const Case& c : kExtractTime) {
    auto t = ParseTime(c.a);
    ASSERT_TRUE(t.ok()) << c.a;
    ExpectAnswer(NumericShown(ExtractTime(c.b, *t)), c);
  }
}

TEST(DatetimeExtract, IntervalFieldsMatchPostgresNumerics) {
  for (const Case& c : kExtractInterval)
    ExpectAnswer(NumericShown(ExtractInterval(c.b, Iv(c.a))), c);
}

// ---- arithmetic -------------------------------------------------------------------------------

TEST(DatetimeArithmetic, TimestampPlusIntervalClampsMonthEndsAsPostgres) {
  for (const Case& c : kTimestampPlusInterval) {
    ExpectAnswer(Shown(TimestampPlusInterval(Ts(c.a), Iv(c.b)), TimestampText), c);
  }
}

// select timestamptz '2024-01-31 23:30:00-01' + interval '1 mon'
TEST(DatetimeArithmetic, TimestampTzPlusIntervalWorksInUtc) {
  auto t = ParseTimestampTz("2024-01-31 23:30:00-01");  // 2024-02-01 00:30 UTC
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Shown(TimestampTzPlusInterval(*t, Iv("1 mon")), TimestampTzText),
            "2024-03-01 00:30:00+00");
}

TEST(DatetimeArithmetic, TimestampDifferenceIsDaysAndTimeNeverMonths) {
  for (const Case& c : kTimestampMinusTimestamp) {
    ExpectAnswer(Shown(TimestampDiff(Ts(c.a).micros, Ts(c.b).micros), IntervalText), c);
  }
  // PostgreSQL 15 wraps this difference ('-104300455 days -08:01:49.551616'); we refuse it.
  EXPECT_EQ(Shown(TimestampDiff(INT64_MAX, Ts("4714-11-24 BC").micros), IntervalText),
            "ERROR: interval out of range");
}

TEST(DatetimeArithmetic, IntervalMulAndDivCascadeFractionsAsPostgres) {
  for (const Case& c : kIntervalTimesFloat) {
    ExpectAnswer(Shown(IntervalMul(Iv(c.a), std::stod(c.b)), IntervalText), c);
  }
  for (const Case& c : kIntervalDividedByFloat) {
    ExpectAnswer(Shown(IntervalDiv(Iv(c.a), std::stod(c.b)), IntervalText), c);
  }
  EXPECT_FALSE(IntervalMul(Iv("1 day"), std::nan("")).ok());
  EXPECT_FALSE(IntervalDiv(Iv("1 day"), 1e-300).ok());
}

TEST(DatetimeArithmetic, IntervalsCompareBySpanWithThirtyDayMonths) {
  for (const Case& c : kIntervalComparison) {
    ExpectAnswer(std::to_string(CompareIntervalValue(Iv(c.a), Iv(c.b))), c);
  }
  // The datum order stays total: equal spans order by months, then days.
  EXPECT_EQ(CompareInterval(Iv("1 mon"), Iv("30 days")), 1);
  EXPECT_EQ(CompareInterval(Iv("1 day"), Iv("24 hours")), 1);
  EXPECT_EQ(CompareInterval(Iv("1 day"), Iv("1 day")), 0);
  EXPECT_EQ(IntervalSpan(Iv("1 mon 1 day 00:00:01")),
            static_cast<Int128>(31) * kMicrosPerDay + kMicrosPerSecond);
}

TEST(DatetimeArithmetic, IntervalSumsNegationAndTheirOverflow) {
  // select '1 mon 2 days 03:00'::interval + '-2 mons 1 day -04:00'::interval,
  //   '1 mon'::interval - '1 day'::interval, -'1 day -01:00'::interval
  EXPECT_EQ(Shown(IntervalAdd(Iv("1 mon 2 days 03:00"), Iv("-2 mons 1 day -04:00")), IntervalText),
            "-1 mons +3 days -01:00:00");
  EXPECT_EQ(Shown(IntervalSub(Iv("1 mon"), Iv("1 day")), IntervalText), "1 mon -1 days");
  EXPECT_EQ(Shown(IntervalNegate(Iv("1 day -01:00")), IntervalText), "-1 days +01:00:00");
  // select '2147483647 days'::interval + '1 day'::interval; select -'-2147483648 days'::interval
  EXPECT_EQ(Shown(IntervalAdd(Iv("2147483647 days"), Iv("1 day")), IntervalText),
            "ERROR: interval out of range");
  EXPECT_EQ(Shown(IntervalNegate(Interval{0, INT32_MIN, 0}), IntervalText),
            "ERROR: interval out of range");
}

TEST(DatetimeArithmetic, DatesPlusDaysAndIntervalsAndTheirRangeEnds) {
  // select '2026-12-06'::date + 5, '2026-12-06'::date + '1 mon 1 day 1 hour'::interval,
  //   '2026-12-06'::date - '1 mon'::interval; select '5874897-12-31'::date + 1;
  //   select '5000000-01-01'::date::timestamp
  EXPECT_EQ(Shown(DatePlusDays(Dt("2026-12-06"), 5), DateText), "2026-12-11");
  EXPECT_EQ(Shown(DatePlusInterval(Dt("2026-12-06"), Iv("1 mon 1 day 1 hour")), TimestampText),
            "2027-01-07 01:00:00");
  EXPECT_EQ(Shown(DatePlusInterval(Dt("2026-12-06"), Iv("-1 mon")), TimestampText),
            "2026-11-06 00:00:00");
  EXPECT_EQ(Shown(DatePlusDays(Dt("5874897-12-31"), 1), DateText), "ERROR: date out of range");
  EXPECT_EQ(Shown(DatePlusDays(Dt("4714-11-24 BC"), -1), DateText), "ERROR: date out of range");
  EXPECT_EQ(Shown(DatePlusDays(Dt("2026-12-06"), INT64_MIN), DateText), "ERROR: date out of range");
  EXPECT_EQ(Shown(TimestampOfDate(Dt("5000000-01-01")), TimestampText),
            "ERROR: date out of range for timestamp");
  EXPECT_EQ(Shown(TimestampOfDate(Dt("294247-01-10")), TimestampText), "294247-01-10 00:00:00");
  EXPECT_EQ(Shown(TimestampOfDate(Dt("294247-01-11")), TimestampText),
            "ERROR: date out of range for timestamp");
}

TEST(DatetimeCasts, TimestampsSplitIntoDateAndTimeOfDayOnBothSidesOfTheEpoch) {
  const Timestamp before = Ts("1969-12-31 23:59:59.5");
  EXPECT_EQ(Shown(DateOfTimestamp(before), DateText), "1969-12-31");
  EXPECT_EQ(TimeText(TimeOfTimestamp(before)), "23:59:59.5");
  const Timestamp bc = Ts("0044-03-15 12:00:00 BC");
  EXPECT_EQ(Shown(DateOfTimestamp(bc), DateText), "0044-03-15 BC");
  EXPECT_EQ(TimeText(TimeOfTimestamp(bc)), "12:00:00");
  EXPECT_EQ(TimestampTzText(TimestampTzOfTimestamp(bc)), "0044-03-15 12:00:00+00 BC");
  EXPECT_EQ(TimestampText(TimestampOfTimestampTz(TimestampTzOfTimestamp(bc))),
            "0044-03-15 12:00:00 BC");
}

// Every day from 4714-11-24 BC on a coarse stride and around the epoch prints and reads back.
TEST(DatetimeText, DatesRoundTripAcrossTheWholeRange) {
  for (std::int64_t d = -2440588; d < 2145042906; d += 9973) {
    const Date date{static_cast<std::int32_t>(d)};
    auto back = ParseDate(DateText(date));
    ASSERT_TRUE(back.ok()) << DateText(date);
    EXPECT_EQ(back->days, d) << DateText(date);
  }
  for (std::int64_t micros = -3 * kMicrosPerDay; micros < 3 * kMicrosPerDay; micros += 7777777777) {
    auto back = ParseTimestamp(TimestampText(Timestamp{micros}));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->micros, micros);
  }
}

}  // namespace
}  // namespace tandem::datetime_test
