// Text in and out of dates, times and timestamps (base/datetime.h): PostgreSQL 15's date_in/out,
// time_in/out and timestamp(tz)_in/out with DateStyle ISO and the session zone UTC.
//
// Input is a small scanner of the ISO forms (no DateStyle guessing): a bad text is PostgreSQL's
// "invalid input syntax", a field outside its range PostgreSQL's "date/time field value out of
// range", a value outside the type's range "date out of range" / "timestamp out of range".
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "base/calendar.h"
#include "base/datetime.h"
#include "base/datetime_scan.h"

namespace tandem {
namespace {

using datetime_scan::AppendClock;
using datetime_scan::IsAlpha;
using datetime_scan::IsDigit;
using datetime_scan::IsSpace;
using datetime_scan::Lower;
using datetime_scan::Quoted;
using datetime_scan::ReadClock;
using datetime_scan::ReadFractionMicros;
using datetime_scan::ReadNumber;

Status BadSyntax(std::string_view type, std::string_view text) {
  return Status::DataError("invalid input syntax for type " + std::string(type) + ": " +
                           Quoted(text));
}
Status FieldOverflow(std::string_view text) {
  return Status::DataError("date/time field value out of range: " + Quoted(text));
}

// ---- output ---------------------------------------------------------------------------------

void AppendTimeOfDay(std::string& out, std::int64_t micros) {
  AppendClock(out, micros / kMicrosPerHour, micros / kMicrosPerMinute % 60,
              micros / kMicrosPerSecond % 60, micros % kMicrosPerSecond);
}

// "YYYY-MM-DD" with the AD/BC year; returns whether the year is BC.
bool AppendDate(std::string& out, std::int64_t days) {
  const calendar::CivilDate c = calendar::CivilFromDays(days);
  const bool bc = c.year <= 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02d",
                static_cast<long long>(bc ? 1 - c.year : c.year), c.month, c.day);
  out += buf;
  return bc;
}

std::string InstantText(std::int64_t micros, bool with_zone) {
  const std::int64_t days = calendar::FloorDiv(micros, kMicrosPerDay);
  std::string out;
  const bool bc = AppendDate(out, days);
  out += ' ';
  AppendTimeOfDay(out, micros - days * kMicrosPerDay);
  if (with_zone) out += "+00";
  if (bc) out += " BC";
  return out;
}

// ---- date and time input ----------------------------------------------------------------------

// What a date/time text said, before the type's checks.
struct DateTimeFields {
  bool has_date = false;
  std::int64_t year = 0;  // as written (AD/BC year, not astronomical)
  int year_digits = 0;
  std::int64_t month = 0;
  std::int64_t day = 0;
  bool has_time = false;
  std::int64_t hour = 0;
  std::int64_t minute = 0;
  std::int64_t second = 0;
  std::int64_t fraction = 0;  // microseconds, rounded; may be 1'000'000 after rounding
  bool has_zone = false;
  std::int64_t zone_seconds = 0;  // east of UTC
  bool zone_overflow = false;
  bool bc = false;
};

// PostgreSQL's DecodeTimezone: "+h", "+hh", "+hhmm", "+h:m", "+h:m:s"; `i` is at the sign.
bool ReadZone(std::string_view s, std::size_t& i, DateTimeFields& f) {
  const bool negative = s[i] == '-';
  const std::size_t start = i;
  ++i;
  std::int64_t hr = 0, min = 0, sec = 0;
  bool overflow = false;
  int digits = 0;
  if (!ReadNumber(s, i, hr, &digits, overflow)) return false;
  if (i < s.size() && s[i] == ':') {
    ++i;
    if (!ReadNumber(s, i, min, nullptr, overflow)) return false;
    if (i < s.size() && s[i] == ':') {
      ++i;
      if (!ReadNumber(s, i, sec, nullptr, overflow)) return false;
    }
  } else if (i - start > 3) {
    min = hr % 100;
    hr /= 100;
  }
  f.has_zone = true;
  if (overflow || hr > 15 || min >= 60 || sec >= 60) {
    f.zone_overflow = true;
    return true;
  }
  const std::int64_t total = (hr * 60 + min) * 60 + sec;
  f.zone_seconds = negative ? -total : total;
  return true;
}

enum class Want { kDate, kTime, kTimestamp };

// Whether a text opens with a month or weekday name ("Dec 6 2026", "Sunday ..."), a form
// PostgreSQL reads and Tandem refuses with a word of why.
bool StartsWithCalendarName(std::string_view lower) {
  static constexpr std::string_view kNames[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                                "aug", "sep", "oct", "nov", "dec", "mon", "tue",
                                                "wed", "thu", "fri", "sat", "sun"};
  for (std::string_view n : kNames) {
    if (lower.substr(0, 3) == n) return true;
  }
  return false;
}

// Scans `text` into fields. Errors carry PostgreSQL's words for `type`.
Result<DateTimeFields> ScanDateTime(std::string_view text, std::string_view type, Want want) {
  std::string_view s = text;
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  DateTimeFields f;
  std::string lower;
  for (char c : s) lower += Lower(c);
  if (lower == "epoch" && want != Want::kTime) {
    f.has_date = true;
    f.year = 1970;
    f.year_digits = 4;
    f.month = 1;
    f.day = 1;
    return f;
  }
  if (lower == "infinity" || lower == "+infinity" || lower == "-infinity" || lower == "now" ||
      lower == "today" || lower == "tomorrow" || lower == "yesterday" || lower == "allballs") {
    return Status::DataError("\"" + lower + "\" is not supported for type " + std::string(type) +
                             " (only explicit values are)");
  }
  std::size_t i = 0;
  bool overflow = false;
  // Leading digits: a date if a '-' follows them, else (time only) a clock.
  std::size_t j = 0;
  while (j < s.size() && IsDigit(s[j])) ++j;
  if (j == 0) {
    if (StartsWithCalendarName(lower)) {
      return Status::DataError("invalid input syntax for type " + std::string(type) + ": " +
                               Quoted(text) +
                               " (only the ISO form is accepted, e.g. 2026-12-06 12:00:00+00; "
                               "named months and weekdays are not)");
    }
    return BadSyntax(type, text);
  }
  if (j < s.size() && s[j] == '-') {
    f.has_date = true;
    ReadNumber(s, i, f.year, &f.year_digits, overflow);
    ++i;  // '-'
    int md = 0;
    if (!ReadNumber(s, i, f.month, &md, overflow) || i >= s.size() || s[i] != '-') {
      return BadSyntax(type, text);
    }
    ++i;
    if (!ReadNumber(s, i, f.day, &md, overflow)) return BadSyntax(type, text);
    if (i < s.size() && IsDigit(s[i])) return BadSyntax(type, text);
    // The time: after a 'T' or blanks.
    std::size_t k = i;
    if (k < s.size() && (s[k] == 'T' || s[k] == 't') && k + 1 < s.size() && IsDigit(s[k + 1])) {
      if (want == Want::kTime) return BadSyntax(type, text);  // PostgreSQL's time_in refuses it
      ++k;
    } else {
      while (k < s.size() && IsSpace(s[k])) ++k;
    }
    if (k < s.size() && IsDigit(s[k])) {
      i = k;
      f.has_time = true;
      if (!ReadClock(s, i, f.hour, f.minute, f.second, f.fraction, overflow)) {
        return BadSyntax(type, text);
      }
    }
  } else if (want == Want::kTime && j < s.size() && s[j] == ':') {
    f.has_time = true;
    if (!ReadClock(s, i, f.hour, f.minute, f.second, f.fraction, overflow)) {
      return BadSyntax(type, text);
    }
  } else {
    return BadSyntax(type, text);
  }
  // Then a zone and an era, in either order, each at most once.
  bool zone_seen = false;
  bool era_seen = false;
  while (true) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i >= s.size()) break;
    if ((s[i] == '+' || s[i] == '-') && !zone_seen &&
        (f.has_time || s[i] == '+' || IsSpace(s[i - 1]))) {
      // (PostgreSQL reads a sign run into the date, "2026-12-06-08", as part of the date.)
      zone_seen = true;
      if (!ReadZone(s, i, f)) return BadSyntax(type, text);
      continue;
    }
    if (!IsAlpha(s[i])) return BadSyntax(type, text);
    std::string word;
    while (i < s.size() && (IsAlpha(s[i]) || s[i] == '/' || s[i] == '_')) word += Lower(s[i++]);
    const bool keyword = word == "bc" || word == "ad";
    if (i < s.size() && (s[i] == '-' || (!keyword && (s[i] == '+' || IsDigit(s[i]))))) {
      // A word run into a '-' ("BC-03"), or another word into a '+' or digits ("EST5EDT"), is a
      // POSIX zone to PostgreSQL; "BC+03" is the era and an offset.
      return Status::DataError("time zone \"" + word + std::string(s.substr(i)) +
                               "\" not supported (only numeric offsets, Z and UTC are)");
    }
    if ((word == "bc" || word == "ad") && !era_seen) {
      era_seen = true;
      f.bc = word == "bc";
    } else if ((word == "z" || word == "zulu" || word == "utc" || word == "gmt") && !zone_seen) {
      zone_seen = true;
      f.has_zone = true;
      f.zone_seconds = 0;
    } else if (word.find('/') != std::string::npos && !zone_seen) {
      return Status::DataError("time zone \"" + word +
                               "\" not supported (only numeric offsets, Z and UTC are)");
    } else {
      return BadSyntax(type, text);
    }
  }
  if (overflow) return FieldOverflow(text);
  if (f.zone_overflow) {
    return Status::DataError("time zone displacement out of range: " + Quoted(text));
  }
  if ((f.bc && !f.has_date) || (want == Want::kTime && !f.has_time)) return BadSyntax(type, text);
  if (f.has_date) {
    // PostgreSQL's ValidateDate: no year 0 in AD/BC notation; a two-digit year would need
    // DateStyle's guessing, which we refuse as out of range as PostgreSQL does for 'yy-mm-dd'.
    if (f.year_digits <= 2 || f.year <= 0 || f.year > 2147483647) return FieldOverflow(text);
    if (f.month < 1 || f.month > 12) return FieldOverflow(text);
    const std::int64_t astronomical = f.bc ? 1 - f.year : f.year;
    if (f.day < 1 || f.day > calendar::DaysInMonth(astronomical, static_cast<int>(f.month))) {
      return FieldOverflow(text);
    }
    f.year = astronomical;
  }
  if (f.has_time) {
    if (f.hour > 24 || f.minute > 59 || f.second > 60 || f.fraction > kMicrosPerSecond ||
        (f.hour == 24 && (f.minute > 0 || f.second > 0 || f.fraction > 0))) {
      return FieldOverflow(text);
    }
    // Second 60 may carry into the next minute, but not past 24:00:00.
    if (((f.hour * 60 + f.minute) * 60 + f.second) * kMicrosPerSecond + f.fraction >
        kMicrosPerDay) {
      return FieldOverflow(text);
    }
  }
  return f;
}

std::int64_t ClockMicros(const DateTimeFields& f) {
  if (!f.has_time) return 0;
  return ((f.hour * 60 + f.minute) * 60 + f.second) * kMicrosPerSecond + f.fraction;
}

// The instant of the fields (zone applied if `apply_zone`), "timestamp out of range" outside.
Result<std::int64_t> InstantOf(const DateTimeFields& f, std::string_view text, bool apply_zone) {
  const Status out_of_range = Status::DataError("timestamp out of range: " + Quoted(text));
  if (!calendar::IsValidJulian(f.year, static_cast<int>(f.month))) return out_of_range;
  const std::int64_t days =
      calendar::DaysFromCivil(f.year, static_cast<int>(f.month), static_cast<int>(f.day));
  if (days < calendar::kMinDateDays) return out_of_range;
  Int128 micros = static_cast<Int128>(days) * kMicrosPerDay + ClockMicros(f);
  if (apply_zone && f.has_zone) micros -= static_cast<Int128>(f.zone_seconds) * kMicrosPerSecond;
  if (micros < calendar::kMinTimestampMicros || micros > INT64_MAX) return out_of_range;
  return static_cast<std::int64_t>(micros);
}

}  // namespace

std::string DateText(Date d) {
  std::string out;
  if (AppendDate(out, d.days)) out += " BC";
  return out;
}

std::string TimeText(TimeOfDay t) {
  std::string out;
  AppendTimeOfDay(out, t.micros);
  return out;
}

std::string TimestampText(Timestamp t) { return InstantText(t.micros, false); }
std::string TimestampTzText(TimestampTz t) { return InstantText(t.micros, true); }

// PostgreSQL's EncodeInterval, IntervalStyle postgres: "1 year 2 mons 3 days 04:05:06.5",
Result<Date> ParseDate(std::string_view text) {
  TANDEM_ASSIGN_OR_RETURN(DateTimeFields f, ScanDateTime(text, "date", Want::kDate));
  const Status out_of_range = Status::DataError("date out of range: " + Quoted(text));
  if (!calendar::IsValidJulian(f.year, static_cast<int>(f.month))) return out_of_range;
  const std::int64_t days =
      calendar::DaysFromCivil(f.year, static_cast<int>(f.month), static_cast<int>(f.day));
  if (days < calendar::kMinDateDays || days >= calendar::kEndDateDays) return out_of_range;
  return Date{static_cast<std::int32_t>(days)};
}

Result<TimeOfDay> ParseTime(std::string_view text) {
  TANDEM_ASSIGN_OR_RETURN(DateTimeFields f, ScanDateTime(text, "time", Want::kTime));
  if (!f.has_time) return BadSyntax("time", text);
  return TimeOfDay{ClockMicros(f)};  // at most 24:00:00 (23:59:60 and .9999995 round up to it)
}

Result<Timestamp> ParseTimestamp(std::string_view text) {
  TANDEM_ASSIGN_OR_RETURN(DateTimeFields f, ScanDateTime(text, "timestamp", Want::kTimestamp));
  // A zone in a timestamp text is read and ignored, as PostgreSQL does.
  TANDEM_ASSIGN_OR_RETURN(std::int64_t micros, InstantOf(f, text, false));
  return Timestamp{micros};
}

Result<TimestampTz> ParseTimestampTz(std::string_view text) {
  TANDEM_ASSIGN_OR_RETURN(DateTimeFields f,
                          ScanDateTime(text, "timestamp with time zone", Want::kTimestamp));
  TANDEM_ASSIGN_OR_RETURN(std::int64_t micros, InstantOf(f, text, true));
  return TimestampTz{micros};
}

}  // namespace tandem
