// The calendar under base/datetime.h: proleptic Gregorian days, PostgreSQL's ranges, ISO weeks.
//
// Years here are astronomical (year 0 is 1 BC, -1 is 2 BC), as PostgreSQL keeps them inside
// (its tm_year); only text says "BC". Days count from 1970-01-01 (Julian day 2440588). All
// arithmetic is int64 on inputs whose ranges the callers have checked (years within ±2^31), so
// nothing here can overflow. Only datetime.cc and datetime_text.cc include this.
#pragma once

#include <cstdint>

#include "base/datetime.h"

namespace tandem::calendar {

inline constexpr std::int64_t kUnixEpochJulian = 2440588;  // Julian day of 1970-01-01

// Dates: Julian day 0 (4714-11-24 BC) up to, not including, Julian day 2147483494
// (5874898-01-01), PostgreSQL's IS_VALID_DATE.
inline constexpr std::int64_t kMinDateDays = -kUnixEpochJulian;
inline constexpr std::int64_t kEndDateDays = 2147483494 - kUnixEpochJulian;
// Timestamps: from 4714-11-24 00:00:00 BC (PostgreSQL's MIN_TIMESTAMP). PostgreSQL's end
// (294277-01-01) is beyond int64 microseconds from 1970, so ours is INT64_MAX
// (294247-01-10 04:00:54.775807): every int64 at or above the minimum is a valid timestamp.
inline constexpr std::int64_t kMinTimestampMicros = kMinDateDays * kMicrosPerDay;
// Dates that convert to a timestamp: up to the day of INT64_MAX (its midnight fits).
inline constexpr std::int64_t kEndTimestampDays = INT64_MAX / kMicrosPerDay;

inline bool IsLeap(std::int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

inline int DaysInMonth(std::int64_t y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && IsLeap(y)) ? 29 : kDays[m - 1];
}

inline std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {  // b > 0
  std::int64_t q = a / b;
  return (a % b < 0) ? q - 1 : q;
}

// Days since 1970-01-01 of y-m-d (m in 1..12, d in 1..31, |y| < 2^31).
inline std::int64_t DaysFromCivil(std::int64_t y, int m, int d) {
  y -= (m <= 2) ? 1 : 0;
  const std::int64_t era = FloorDiv(y, 400);
  const std::int64_t yoe = y - era * 400;                                    // [0, 399]
  const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

struct CivilDate {
  std::int64_t year = 0;  // astronomical
  int month = 1;
  int day = 1;
};

inline CivilDate CivilFromDays(std::int64_t z) {
  z += 719468;
  const std::int64_t era = FloorDiv(z, 146097);
  const std::int64_t doe = z - era * 146097;                                       // [0, 146096]
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const std::int64_t mp = (5 * doy + 2) / 153;                                     // [0, 11]
  CivilDate c;
  c.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = yoe + era * 400 + (c.month <= 2 ? 1 : 0);
  return c;
}

// PostgreSQL's IS_VALID_JULIAN: y-m within [4714-11 BC, 5874898-06), checked before date2j.
inline bool IsValidJulian(std::int64_t y, int m) {
  return (y > -4713 || (y == -4713 && m >= 11)) && (y < 5874898 || (y == 5874898 && m < 6));
}

// 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
inline int DayOfWeek(std::int64_t days) {
  std::int64_t r = (days + 4) % 7;
  return static_cast<int>(r < 0 ? r + 7 : r);
}

// The Monday that starts ISO week 1 of `year`: the week holding January 4th.
inline std::int64_t IsoWeek1Monday(std::int64_t year) {
  const std::int64_t jan4 = DaysFromCivil(year, 1, 4);
  return jan4 - (DayOfWeek(jan4) + 6) % 7;
}

struct IsoWeekDate {
  std::int64_t year = 0;  // astronomical ISO year
  int week = 1;
};

inline IsoWeekDate IsoWeekOf(std::int64_t days) {
  std::int64_t y = CivilFromDays(days).year;
  std::int64_t start = IsoWeek1Monday(y + 1);
  if (days >= start) {
    ++y;
  } else {
    start = IsoWeek1Monday(y);
    if (days < start) {
      --y;
      start = IsoWeek1Monday(y);
    }
  }
  return IsoWeekDate{y, static_cast<int>((days - start) / 7 + 1)};
}

}  // namespace tandem::calendar
