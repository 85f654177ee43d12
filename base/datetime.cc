// Datetime arithmetic, comparison, casts, date_trunc and extract (base/datetime.h), as
// PostgreSQL 15's timestamp.c and date.c compute them with the session zone UTC.
//
// Instants are int64 microseconds; every intermediate that could leave int64 is computed in
// Int128 and range-checked before it is narrowed, so an out-of-range result is a data error
// with PostgreSQL's words, never a wrapped value. Only interval * and / use doubles, because
// PostgreSQL's interval_mul/interval_div define their results by float8 arithmetic (the factor
// is a float8); they are replayed step by step, each double checked before it becomes an integer.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "base/calendar.h"
#include "base/datetime.h"

namespace tandem {
namespace {

using calendar::CivilDate;

Status TimestampOutOfRange() { return Status::DataError("timestamp out of range"); }
Status IntervalOutOfRange() { return Status::DataError("interval out of range"); }

bool InTimestampRange(Int128 micros) {
  return micros >= calendar::kMinTimestampMicros && micros <= INT64_MAX;
}

// PostgreSQL's timestamp_pl_interval on a wall clock (UTC for a timestamptz): months with the
// day clamped to the month's end, then days through the calendar, then microseconds.
Result<std::int64_t> AddIntervalToInstant(std::int64_t t, const Interval& span) {
  if (span.months != 0) {
    const std::int64_t days = calendar::FloorDiv(t, kMicrosPerDay);
    const std::int64_t tod = t - days * kMicrosPerDay;
    const CivilDate c = calendar::CivilFromDays(days);
    std::int64_t year = c.year;
    std::int64_t mon = static_cast<std::int64_t>(c.month) + span.months;
    if (mon > 12) {
      year += (mon - 1) / 12;
      mon = (mon - 1) % 12 + 1;
    } else if (mon < 1) {
      year += mon / 12 - 1;
      mon = mon % 12 + 12;
    }
    if (!calendar::IsValidJulian(year, static_cast<int>(mon))) return TimestampOutOfRange();
    const int mday = std::min(c.day, calendar::DaysInMonth(year, static_cast<int>(mon)));
    const Int128 moved =
        static_cast<Int128>(calendar::DaysFromCivil(year, static_cast<int>(mon), mday)) *
            kMicrosPerDay +
        tod;
    if (!InTimestampRange(moved)) return TimestampOutOfRange();
    t = static_cast<std::int64_t>(moved);
  }
  if (span.days != 0) {
    const std::int64_t days = calendar::FloorDiv(t, kMicrosPerDay);
    const std::int64_t tod = t - days * kMicrosPerDay;
    const Int128 moved = static_cast<Int128>(days + span.days) * kMicrosPerDay + tod;
    if (!InTimestampRange(moved)) return TimestampOutOfRange();
    t = static_cast<std::int64_t>(moved);
  }
  const Int128 result = static_cast<Int128>(t) + span.micros;
  if (!InTimestampRange(result)) return TimestampOutOfRange();
  return static_cast<std::int64_t>(result);
}

Result<Interval> MakeInterval(Int128 months, Int128 days, Int128 micros) {
  if (months < INT32_MIN || months > INT32_MAX || days < INT32_MIN || days > INT32_MAX ||
      micros < INT64_MIN || micros > INT64_MAX) {
    return IntervalOutOfRange();
  }
  return Interval{static_cast<std::int32_t>(months), static_cast<std::int32_t>(days),
                  static_cast<std::int64_t>(micros)};
}

// PostgreSQL's FLOAT8_FITS_IN_INT32 / _INT64.
bool DoubleFitsInt32(double d) { return !std::isnan(d) && d >= -2147483648.0 && d < 2147483648.0; }
bool DoubleFitsInt64(double d) {
  return !std::isnan(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}
// PostgreSQL's TSROUND: to microsecond precision of a value in days or seconds.
double TsRound(double d) { return std::rint(d * 1000000.0) / 1000000.0; }

// The shared tail of interval_mul and interval_div: `month_product` and `day_product` are the
// months and days times the factor, `time_product` the microseconds times it.
Result<Interval> CascadeProducts(double month_product, double day_product, double time_product) {
  if (!DoubleFitsInt32(month_product) || !DoubleFitsInt32(day_product)) return IntervalOutOfRange();
  const auto months = static_cast<std::int32_t>(month_product);
  std::int64_t days = static_cast<std::int32_t>(day_product);
  // The fractions cascade down: a month's fraction to days (30 to a month), a day's to seconds.
  const double month_remainder_days = TsRound((month_product - months) * 30.0);
  double sec_remainder = TsRound((day_product - static_cast<double>(days) + month_remainder_days -
                                  static_cast<int>(month_remainder_days)) *
                                 86400.0);
  if (std::fabs(sec_remainder) >= 86400.0) {
    const int whole = static_cast<int>(sec_remainder / 86400.0);
    days += whole;
    sec_remainder -= whole * 86400.0;
  }
  days += static_cast<int>(month_remainder_days);
  const double micros = std::rint(time_product + sec_remainder * 1000000.0);
  if (!DoubleFitsInt64(micros)) return IntervalOutOfRange();
  return MakeInterval(months, days, static_cast<std::int64_t>(micros));
}

// ---- field and unit names (date_trunc, extract) ----------------------------------------------

enum class DtField {
  kMicroseconds,
  kMilliseconds,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,
  kMonth,
  kQuarter,
  kYear,
  kDecade,
  kCentury,
  kMillennium,
  kTimezone,  // timezone, timezone_hour, timezone_minute
  // Not interval units (PostgreSQL's datetktbl): extract only.
  kDow,
  kIsodow,
  kDoy,
  kIsoyear,
  kJulian,
  kEpoch,
  kUnknown,
};

struct DtFieldName {
  std::string lower;  // the name lower-cased, for messages
  DtField field = DtField::kUnknown;
  bool is_unit = false;  // an interval unit (deltatktbl), as date_trunc requires
};

// PostgreSQL's DecodeUnits, then (for extract) DecodeSpecial: names compared on their first
// 10 characters, case-insensitively.
DtFieldName LookUpDtField(std::string_view name) {
  DtFieldName out;
  for (char c : name) out.lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  const std::string key = out.lower.substr(0, 10);
  struct Entry {
    const char* name;
    DtField field;
  };
  static constexpr Entry kUnits[] = {
      {"c", DtField::kCentury},
      {"cent", DtField::kCentury},
      {"centuries", DtField::kCentury},
      {"century", DtField::kCentury},
      {"d", DtField::kDay},
      {"day", DtField::kDay},
      {"days", DtField::kDay},
      {"dec", DtField::kDecade},
      {"decade", DtField::kDecade},
      {"decades", DtField::kDecade},
      {"decs", DtField::kDecade},
      {"h", DtField::kHour},
      {"hour", DtField::kHour},
      {"hours", DtField::kHour},
      {"hr", DtField::kHour},
      {"hrs", DtField::kHour},
      {"m", DtField::kMinute},
      {"microsecon", DtField::kMicroseconds},
      {"mil", DtField::kMillennium},
      {"millennia", DtField::kMillennium},
      {"millennium", DtField::kMillennium},
      {"millisecon", DtField::kMilliseconds},
      {"mils", DtField::kMillennium},
      {"min", DtField::kMinute},
      {"mins", DtField::kMinute},
      {"minute", DtField::kMinute},
      {"minutes", DtField::kMinute},
      {"mon", DtField::kMonth},
      {"mons", DtField::kMonth},
      {"month", DtField::kMonth},
      {"months", DtField::kMonth},
      {"ms", DtField::kMilliseconds},
      {"msec", DtField::kMilliseconds},
      {"msecs", DtField::kMilliseconds},
      {"mseconds", DtField::kMilliseconds},
      {"qtr", DtField::kQuarter},
      {"quarter", DtField::kQuarter},
      {"s", DtField::kSecond},
      {"sec", DtField::kSecond},
      {"second", DtField::kSecond},
      {"seconds", DtField::kSecond},
      {"secs", DtField::kSecond},
      {"timezone", DtField::kTimezone},
      {"timezone_h", DtField::kTimezone},
      {"timezone_m", DtField::kTimezone},
      {"us", DtField::kMicroseconds},
      {"usec", DtField::kMicroseconds},
      {"usecs", DtField::kMicroseconds},
      {"useconds", DtField::kMicroseconds},
      {"w", DtField::kWeek},
      {"week", DtField::kWeek},
      {"weeks", DtField::kWeek},
      {"y", DtField::kYear},
      {"year", DtField::kYear},
      {"years", DtField::kYear},
      {"yr", DtField::kYear},
      {"yrs", DtField::kYear},
  };
  static constexpr Entry kSpecials[] = {
      {"dow", DtField::kDow},       {"doy", DtField::kDoy},         {"epoch", DtField::kEpoch},
      {"isodow", DtField::kIsodow}, {"isoyear", DtField::kIsoyear}, {"j", DtField::kJulian},
      {"jd", DtField::kJulian},     {"julian", DtField::kJulian},
  };
  for (const Entry& e : kUnits) {
    if (key == e.name) {
      out.field = e.field;
      out.is_unit = true;
      return out;
    }
  }
  for (const Entry& e : kSpecials) {
    if (key == e.name) out.field = e.field;
  }
  return out;
}

Status UnitNotSupported(const DtFieldName& f, std::string_view type) {
  return Status::DataError("unit \"" + f.lower + "\" not supported for type " + std::string(type));
}
Status UnitNotRecognized(const DtFieldName& f, std::string_view type) {
  return Status::DataError("unit \"" + f.lower + "\" not recognized for type " + std::string(type));
}

constexpr std::string_view kTimestampType = "timestamp without time zone";
constexpr std::string_view kTimestampTzType = "timestamp with time zone";

// ---- date_trunc -------------------------------------------------------------------------------

Result<std::int64_t> TruncInstant(std::string_view unit, std::int64_t t, std::string_view type) {
  const DtFieldName f = LookUpDtField(unit);
  if (!f.is_unit) return UnitNotRecognized(f, type);
  const std::int64_t days = calendar::FloorDiv(t, kMicrosPerDay);
  const std::int64_t tod = t - days * kMicrosPerDay;
  CivilDate c = calendar::CivilFromDays(days);
  std::int64_t year = c.year;  // astronomical: <= 0 is BC
  switch (f.field) {
    case DtField::kMicroseconds:
      return t;
    case DtField::kMilliseconds:
      return t - (tod % 1000);
    case DtField::kSecond:
      return t - (tod % kMicrosPerSecond);
    case DtField::kMinute:
      return t - (tod % kMicrosPerMinute);
    case DtField::kHour:
      return t - (tod % kMicrosPerHour);
    case DtField::kDay:
      return t - tod;
    case DtField::kWeek: {
      const Int128 monday =
          static_cast<Int128>(days - (calendar::DayOfWeek(days) + 6) % 7) * kMicrosPerDay;
      if (!InTimestampRange(monday)) return TimestampOutOfRange();
      return static_cast<std::int64_t>(monday);
    }
    case DtField::kMillennium:
    case DtField::kCentury:
    case DtField::kDecade:
    case DtField::kYear:
    case DtField::kQuarter:
    case DtField::kMonth: {
      // PostgreSQL's timestamp_trunc: centuries and millennia start in years ending in 01
      // (1 BC is followed by 1 AD), decades in years ending in 0.
      int month = c.month;
      if (f.field == DtField::kMillennium) {
        year =
            year > 0 ? ((year + 999) / 1000) * 1000 - 999 : -((999 - (year - 1)) / 1000) * 1000 + 1;
      }
      if (f.field == DtField::kMillennium || f.field == DtField::kCentury) {
        year = year > 0 ? ((year + 99) / 100) * 100 - 99 : -((99 - (year - 1)) / 100) * 100 + 1;
      }
      if (f.field == DtField::kDecade) {
        year = year > 0 ? (year / 10) * 10 : -((8 - (year - 1)) / 10) * 10;
      }
      if (f.field != DtField::kQuarter && f.field != DtField::kMonth) month = 1;
      if (f.field == DtField::kQuarter) month = 3 * ((month - 1) / 3) + 1;
      if (!calendar::IsValidJulian(year, month)) return TimestampOutOfRange();
      const Int128 start =
          static_cast<Int128>(calendar::DaysFromCivil(year, month, 1)) * kMicrosPerDay;
      if (!InTimestampRange(start)) return TimestampOutOfRange();
      return static_cast<std::int64_t>(start);
    }
    default:
      return UnitNotSupported(f, type);
  }
}

// ---- extract ----------------------------------------------------------------------------------

Numeric Whole(std::int64_t v) { return Numeric::FromParts(v, 0); }

// PostgreSQL's year fields of an astronomical year.
std::int64_t AdYear(std::int64_t y) { return y > 0 ? y : y - 1; }
std::int64_t DecadeOf(std::int64_t y) { return y >= 0 ? y / 10 : -((8 - (y - 1)) / 10); }
std::int64_t CenturyOf(std::int64_t y) { return y > 0 ? (y + 99) / 100 : -((99 - (y - 1)) / 100); }
std::int64_t MillenniumOf(std::int64_t y) {
  return y > 0 ? (y + 999) / 1000 : -((999 - (y - 1)) / 1000);
}

// The fields a date answers (for a date, a timestamp and a timestamptz alike).
bool ExtractCalendarField(DtField field, std::int64_t days, Numeric& out) {
  const CivilDate c = calendar::CivilFromDays(days);
  switch (field) {
    case DtField::kDay:
      out = Whole(c.day);
      return true;
    case DtField::kMonth:
      out = Whole(c.month);
      return true;
    case DtField::kQuarter:
      out = Whole((c.month - 1) / 3 + 1);
      return true;
    case DtField::kWeek:
      out = Whole(calendar::IsoWeekOf(days).week);
      return true;
    case DtField::kYear:
      out = Whole(AdYear(c.year));
      return true;
    case DtField::kDecade:
      out = Whole(DecadeOf(c.year));
      return true;
    case DtField::kCentury:
      out = Whole(CenturyOf(c.year));
      return true;
    case DtField::kMillennium:
      out = Whole(MillenniumOf(c.year));
      return true;
    case DtField::kIsoyear:
      out = Whole(AdYear(calendar::IsoWeekOf(days).year));
      return true;
    case DtField::kDow:
      out = Whole(calendar::DayOfWeek(days));
      return true;
    case DtField::kIsodow: {
      const int dow = calendar::DayOfWeek(days);
      out = Whole(dow == 0 ? 7 : dow);
      return true;
    }
    case DtField::kDoy:
      out = Whole(days - calendar::DaysFromCivil(c.year, 1, 1) + 1);
      return true;
    default:
      return false;
  }
}

// x / 86400000000 rounded (half away from zero) at the scale numeric_div's select_div_scale
// picks for those operands: at least 16 significant digits counted in base-10000 groups.
Numeric DayFraction(std::int64_t tod_micros) {
  int scale = 28;  // tod = 0: weight 0, first group 0
  if (tod_micros != 0) {
    int weight = 0;  // base-10000 weight of tod
    std::int64_t first = tod_micros;
    while (first >= 10000) {
      first /= 10000;
      ++weight;
    }
    int qweight = weight - 2;  // 86400000000 has weight 2, first group 864
    if (first <= 864) --qweight;
    scale = 16 - qweight * 4;
  }
  Int128 pow = 1;
  for (int k = 0; k < scale; ++k) pow *= 10;
  const Int128 x = static_cast<Int128>(tod_micros) * pow;
  Int128 q = x / kMicrosPerDay;
  if (2 * (x % kMicrosPerDay) >= kMicrosPerDay) ++q;
  return Numeric::FromParts(q, scale);
}

// The clock fields of `micros` into a day (a time of day, a timestamp's, or an interval's time
// part, whose sign C's division keeps): microseconds, milliseconds and second with the second's
// fraction, minute, hour. False for any other field.
bool ExtractClockField(DtField field, std::int64_t micros, Numeric& out) {
  const std::int64_t second_micros = micros % kMicrosPerMinute;
  switch (field) {
    case DtField::kMicroseconds:
      out = Whole(second_micros);
      return true;
    case DtField::kMilliseconds:
      out = Numeric::FromParts(second_micros, 3);
      return true;
    case DtField::kSecond:
      out = Numeric::FromParts(second_micros, 6);
      return true;
    case DtField::kMinute:
      out = Whole(micros / kMicrosPerMinute % 60);
      return true;
    case DtField::kHour:
      out = Whole(micros / kMicrosPerHour);
      return true;
    default:
      return false;
  }
}

// extract from a timestamp (or a timestamptz read in UTC): `type` names it in errors.
Result<Numeric> ExtractInstant(std::string_view name, std::int64_t t, std::string_view type,
                               bool with_zone) {
  const DtFieldName f = LookUpDtField(name);
  const std::int64_t days = calendar::FloorDiv(t, kMicrosPerDay);
  const std::int64_t tod = t - days * kMicrosPerDay;
  Numeric out;
  if (ExtractClockField(f.field, tod, out)) return out;
  switch (f.field) {
    case DtField::kEpoch:
      // PostgreSQL computes the last instant's epoch through a numeric division that keeps only
      // four decimals (9223372036854.775800); every other instant is exact.
      if (t == INT64_MAX) return Numeric::FromParts(t / 100 * 100, 6);
      return Numeric::FromParts(t, 6);
    case DtField::kJulian: {
      const Numeric fraction = DayFraction(tod);
      Int128 whole = days + calendar::kUnixEpochJulian;
      for (int k = 0; k < fraction.scale; ++k) whole *= 10;
      return Numeric::FromParts(whole + fraction.coefficient(), fraction.scale);
    }
    case DtField::kTimezone:
      if (with_zone) return Whole(0);  // UTC
      return UnitNotSupported(f, type);
    case DtField::kUnknown:
      return UnitNotRecognized(f, type);
    default:
      if (ExtractCalendarField(f.field, days, out)) return out;
      return UnitNotSupported(f, type);
  }
}

}  // namespace

Int128 IntervalSpan(const Interval& i) {
  return static_cast<Int128>(i.months) * 30 * kMicrosPerDay +
         static_cast<Int128>(i.days) * kMicrosPerDay + i.micros;
}

int CompareIntervalValue(const Interval& a, const Interval& b) {
  const Int128 x = IntervalSpan(a), y = IntervalSpan(b);
  return x < y ? -1 : (x > y ? 1 : 0);
}

int CompareInterval(const Interval& a, const Interval& b) {
  if (int c = CompareIntervalValue(a, b); c != 0) return c;
  if (a.months != b.months) return a.months < b.months ? -1 : 1;
  if (a.days != b.days) return a.days < b.days ? -1 : 1;
  return 0;
}

Result<Timestamp> TimestampPlusInterval(Timestamp t, const Interval& i) {
  TANDEM_ASSIGN_OR_RETURN(std::int64_t micros, AddIntervalToInstant(t.micros, i));
  return Timestamp{micros};
}

Result<TimestampTz> TimestampTzPlusInterval(TimestampTz t, const Interval& i) {
  TANDEM_ASSIGN_OR_RETURN(std::int64_t micros, AddIntervalToInstant(t.micros, i));
  return TimestampTz{micros};
}

// PostgreSQL's timestamp_mi: the difference as microseconds, then interval_justify_hours (whole
// days out of the time, the time given the days' sign). PostgreSQL 15 wraps a difference beyond
// int64; here it is "interval out of range".
Result<Interval> TimestampDiff(std::int64_t a_micros, std::int64_t b_micros) {
  const Int128 diff = static_cast<Int128>(a_micros) - b_micros;
  if (diff < INT64_MIN || diff > INT64_MAX) return IntervalOutOfRange();
  std::int64_t time = static_cast<std::int64_t>(diff);
  std::int64_t days = time / kMicrosPerDay;  // |days| < 2^27: fits an int32
  time -= days * kMicrosPerDay;
  if (days > 0 && time < 0) {
    time += kMicrosPerDay;
    --days;
  } else if (days < 0 && time > 0) {
    time -= kMicrosPerDay;
    ++days;
  }
  return Interval{0, static_cast<std::int32_t>(days), time};
}

Result<Date> DatePlusDays(Date d, std::int64_t days) {
  const Int128 r = static_cast<Int128>(d.days) + days;
  if (r < calendar::kMinDateDays || r >= calendar::kEndDateDays) {
    return Status::DataError("date out of range");
  }
  return Date{static_cast<std::int32_t>(r)};
}

Result<Timestamp> DatePlusInterval(Date d, const Interval& i) {
  TANDEM_ASSIGN_OR_RETURN(Timestamp t, TimestampOfDate(d));
  return TimestampPlusInterval(t, i);
}

Result<Interval> IntervalAdd(const Interval& a, const Interval& b) {
  return MakeInterval(static_cast<Int128>(a.months) + b.months,
                      static_cast<Int128>(a.days) + b.days,
                      static_cast<Int128>(a.micros) + b.micros);
}

Result<Interval> IntervalSub(const Interval& a, const Interval& b) {
  return MakeInterval(static_cast<Int128>(a.months) - b.months,
                      static_cast<Int128>(a.days) - b.days,
                      static_cast<Int128>(a.micros) - b.micros);
}

Result<Interval> IntervalNegate(const Interval& a) {
  return MakeInterval(-static_cast<Int128>(a.months), -static_cast<Int128>(a.days),
                      -static_cast<Int128>(a.micros));
}

Result<Interval> IntervalMul(const Interval& a, double factor) {
  return CascadeProducts(a.months * factor, a.days * factor,
                         static_cast<double>(a.micros) * factor);
}

Result<Interval> IntervalDiv(const Interval& a, double divisor) {
  if (divisor == 0.0) return Status::DataError("division by zero");
  return CascadeProducts(a.months / divisor, a.days / divisor,
                         static_cast<double>(a.micros) / divisor);
}

Result<Timestamp> TimestampOfDate(Date d) {
  if (d.days > calendar::kEndTimestampDays) {
    return Status::DataError("date out of range for timestamp");
  }
  return Timestamp{static_cast<std::int64_t>(d.days) * kMicrosPerDay};
}

Result<Date> DateOfTimestamp(Timestamp t) {
  return Date{static_cast<std::int32_t>(calendar::FloorDiv(t.micros, kMicrosPerDay))};
}

TimeOfDay TimeOfTimestamp(Timestamp t) {
  return TimeOfDay{t.micros - calendar::FloorDiv(t.micros, kMicrosPerDay) * kMicrosPerDay};
}

TimestampTz TimestampTzOfTimestamp(Timestamp t) { return TimestampTz{t.micros}; }
Timestamp TimestampOfTimestampTz(TimestampTz t) { return Timestamp{t.micros}; }

Result<Timestamp> DateTruncTimestamp(std::string_view unit, Timestamp t) {
  TANDEM_ASSIGN_OR_RETURN(std::int64_t micros, TruncInstant(unit, t.micros, kTimestampType));
  return Timestamp{micros};
}

Result<TimestampTz> DateTruncTimestampTz(std::string_view unit, TimestampTz t) {
  TANDEM_ASSIGN_OR_RETURN(std::int64_t micros, TruncInstant(unit, t.micros, kTimestampTzType));
  return TimestampTz{micros};
}

// PostgreSQL's interval_trunc: on the fields (years, months, days, hours, minutes, seconds,
// microseconds, each with the interval's sign as C division leaves it), zero those below `unit`.
Result<Interval> DateTruncInterval(std::string_view unit, const Interval& i) {
  const DtFieldName f = LookUpDtField(unit);
  if (!f.is_unit) return UnitNotRecognized(f, "interval");
  std::int64_t year = i.months / 12;
  std::int64_t mon = i.months % 12;
  std::int64_t day = i.days;
  std::int64_t hour = i.micros / kMicrosPerHour;
  std::int64_t min = i.micros / kMicrosPerMinute % 60;
  std::int64_t sec = i.micros / kMicrosPerSecond % 60;
  std::int64_t usec = i.micros % kMicrosPerSecond;
  switch (f.field) {
    case DtField::kMillennium:
      year = year / 1000 * 1000;
      [[fallthrough]];
    case DtField::kCentury:
      year = year / 100 * 100;
      [[fallthrough]];
    case DtField::kDecade:
      year = year / 10 * 10;
      [[fallthrough]];
    case DtField::kYear:
      mon = 0;
      [[fallthrough]];
    case DtField::kQuarter:
      mon = 3 * (mon / 3);
      [[fallthrough]];
    case DtField::kMonth:
      day = 0;
      [[fallthrough]];
    case DtField::kDay:
      hour = 0;
      [[fallthrough]];
    case DtField::kHour:
      min = 0;
      [[fallthrough]];
    case DtField::kMinute:
      sec = 0;
      [[fallthrough]];
    case DtField::kSecond:
      usec = 0;
      break;
    case DtField::kMilliseconds:
      usec = usec / 1000 * 1000;
      break;
    case DtField::kMicroseconds:
      break;
    case DtField::kWeek:
      return Status::DataError("unit \"" + f.lower +
                               "\" not supported for type interval (months usually have "
                               "fractional weeks)");
    default:
      return UnitNotSupported(f, "interval");
  }
  return MakeInterval(static_cast<Int128>(year) * 12 + mon, day,
                      static_cast<Int128>(hour) * kMicrosPerHour + min * kMicrosPerMinute +
                          sec * kMicrosPerSecond + usec);
}

Result<Numeric> ExtractTimestamp(std::string_view field, Timestamp t) {
  return ExtractInstant(field, t.micros, kTimestampType, false);
}

Result<Numeric> ExtractTimestampTz(std::string_view field, TimestampTz t) {
  return ExtractInstant(field, t.micros, kTimestampTzType, true);
}

Result<Numeric> ExtractDate(std::string_view field, Date d) {
  const DtFieldName f = LookUpDtField(field);
  Numeric out;
  if (f.field == DtField::kUnknown) return UnitNotRecognized(f, "date");
  if (f.field == DtField::kEpoch) return Whole(static_cast<std::int64_t>(d.days) * 86400);
  if (f.field == DtField::kJulian) return Whole(d.days + calendar::kUnixEpochJulian);
  if (ExtractCalendarField(f.field, d.days, out)) return out;
  return UnitNotSupported(f, "date");
}

Result<Numeric> ExtractTime(std::string_view field, TimeOfDay t) {
  constexpr std::string_view kType = "time without time zone";
  const DtFieldName f = LookUpDtField(field);
  Numeric out;
  if (ExtractClockField(f.field, t.micros, out)) return out;
  switch (f.field) {
    case DtField::kEpoch:
      return Numeric::FromParts(t.micros, 6);
    case DtField::kUnknown:
      return UnitNotRecognized(f, kType);
    default:
      return UnitNotSupported(f, kType);
  }
}

// PostgreSQL's interval_part: fields of the interval's parts with C division's signs; epoch as
// seconds with a year of 365.25 days and a month of 30.
Result<Numeric> ExtractInterval(std::string_view field, const Interval& i) {
  const DtFieldName f = LookUpDtField(field);
  Numeric out;
  if (ExtractClockField(f.field, i.micros, out)) return out;
  switch (f.field) {
    case DtField::kDay:
      return Whole(i.days);
    case DtField::kMonth:
      return Whole(i.months % 12);
    case DtField::kQuarter:
      return Whole(i.months % 12 / 3 + 1);
    case DtField::kYear:
      return Whole(i.months / 12);
    case DtField::kDecade:
      return Whole(i.months / 12 / 10);
    case DtField::kCentury:
      return Whole(i.months / 12 / 100);
    case DtField::kMillennium:
      return Whole(i.months / 12 / 1000);
    case DtField::kEpoch: {
      // 4 × (365.25 days a year, 30 a month, the days) × 86400 / 4, exactly.
      const Int128 quarter_days = static_cast<Int128>(1461) * (i.months / 12) +
                                  static_cast<Int128>(120) * (i.months % 12) +
                                  static_cast<Int128>(4) * i.days;
      return Numeric::FromParts(quarter_days * 21600 * kMicrosPerSecond + i.micros, 6);
    }
    case DtField::kUnknown:
      return UnitNotRecognized(f, "interval");
    default:
      return UnitNotSupported(f, "interval");
  }
}

}  // namespace tandem
