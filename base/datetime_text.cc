// Text in and out of the datetime types (base/datetime.h), PostgreSQL 15's date_in/date_out,
// time_in/out, timestamp(tz)_in/out and interval_in/out with DateStyle ISO, IntervalStyle
// postgres and the session zone UTC.
//
// Date and time input is a small scanner of the ISO forms (no DateStyle guessing): a bad text is
// PostgreSQL's "invalid input syntax", a field outside its range PostgreSQL's "date/time field
// value out of range", a value outside the type's range "date out of range" / "timestamp out of
// range". Interval input follows PostgreSQL's ParseDateTime + DecodeInterval (fields read right
// to left, a bare number takes the unit of the field to its right, fractions cascade down) with
// exact decimal fractions instead of doubles: PostgreSQL's roundings (half away from zero loses
// to "> 0.5", i.e. ties truncate, for microseconds; rint, ties to even, for months of fractional
// years and for fractional seconds) are applied to the exact value.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/calendar.h"
#include "base/datetime.h"

namespace tandem {
namespace {

using calendar::kMicrosPerHour;
using calendar::kMicrosPerMinute;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsPunct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

Status BadSyntax(std::string_view type, std::string_view text) {
  return Status::DataError("invalid input syntax for type " + std::string(type) + ": " +
                           Quoted(text));
}
Status FieldOverflow(std::string_view text) {
  return Status::DataError("date/time field value out of range: " + Quoted(text));
}

// ---- output ---------------------------------------------------------------------------------

// "HH:MM:SS[.ffffff with trailing zeros dropped]" of a non-negative span (hours may exceed 24).
void AppendClock(std::string& out, std::int64_t hours, std::int64_t minutes, std::int64_t seconds,
                 std::int64_t fraction_micros) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(hours),
                static_cast<long long>(minutes), static_cast<long long>(seconds));
  out += buf;
  if (fraction_micros != 0) {
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(fraction_micros));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
}

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
  bool ad = false;
};

// Reads up to 18 digits; more is a field overflow. Returns false if no digit.
bool ReadNumber(std::string_view s, std::size_t& i, std::int64_t& value, int* digits,
                bool& overflow) {
  const std::size_t start = i;
  value = 0;
  while (i < s.size() && IsDigit(s[i])) {
    if (i - start >= 18) overflow = true;
    if (!overflow) value = value * 10 + (s[i] - '0');
    ++i;
  }
  if (digits != nullptr) *digits = static_cast<int>(i - start);
  return i > start;
}

// ".digits" rounded to microseconds, ties to even (PostgreSQL's rint(strtod(...) * 1e6)); `i`
// is at the '.'. An empty fraction is zero, as PostgreSQL takes "12:00:00.".
std::int64_t ReadFractionMicros(std::string_view s, std::size_t& i) {
  ++i;                     // '.'
  std::int64_t seven = 0;  // the first seven digits
  int n = 0;
  bool sticky = false;  // a nonzero digit after the seventh
  while (i < s.size() && IsDigit(s[i])) {
    if (n < 7) {
      seven = seven * 10 + (s[i] - '0');
      ++n;
    } else if (s[i] != '0') {
      sticky = true;
    }
    ++i;
  }
  for (; n < 7; ++n) seven *= 10;
  std::int64_t micros = seven / 10;
  const std::int64_t last = seven % 10;
  if (last > 5 || (last == 5 && (sticky || micros % 2 != 0))) ++micros;
  return micros;
}

// PostgreSQL's DecodeTimeCommon: "h:m", "h:m:s[.f]", and "m:s.f" (a fraction after two fields
// means minutes and seconds). Leaves the range checks to the caller. False: not a time.
bool ReadClock(std::string_view s, std::size_t& i, std::int64_t& hour, std::int64_t& minute,
               std::int64_t& second, std::int64_t& fraction, bool& overflow) {
  std::int64_t a = 0, b = 0, c = 0;
  if (!ReadNumber(s, i, a, nullptr, overflow)) return false;
  if (i >= s.size() || s[i] != ':') return false;
  ++i;
  if (!ReadNumber(s, i, b, nullptr, overflow)) return false;
  fraction = 0;
  if (i < s.size() && s[i] == '.') {
    fraction = ReadFractionMicros(s, i);
    hour = 0;
    minute = a;
    second = b;
    return true;
  }
  if (i < s.size() && s[i] == ':') {
    ++i;
    if (!ReadNumber(s, i, c, nullptr, overflow)) return false;
    if (i < s.size() && s[i] == '.') fraction = ReadFractionMicros(s, i);
  }
  hour = a;
  minute = b;
  second = c;
  return true;
}

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
  if (overflow || hr > 15 || min >= 60 || sec >= 60) f.zone_overflow = true;
  const std::int64_t total = (hr * 60 + min) * 60 + sec;
  f.zone_seconds = negative ? -total : total;
  f.has_zone = true;
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
    if ((s[i] == '+' || s[i] == '-') && !zone_seen) {
      zone_seen = true;
      if (!ReadZone(s, i, f)) return BadSyntax(type, text);
      continue;
    }
    if (!IsAlpha(s[i])) return BadSyntax(type, text);
    std::string word;
    while (i < s.size() && (IsAlpha(s[i]) || s[i] == '/' || s[i] == '_')) word += Lower(s[i++]);
    if ((word == "bc" || word == "ad") && !era_seen) {
      era_seen = true;
      (word == "bc" ? f.bc : f.ad) = true;
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
  if (f.bc && !f.has_date) return BadSyntax(type, text);
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

// ---- interval input ---------------------------------------------------------------------------

// PostgreSQL's field types of ParseDateTime, as DecodeInterval sees them.
enum class FieldKind { kNumber, kTime, kDate, kSigned, kString, kSpecial };
struct Field {
  FieldKind kind;
  std::string text;
};

// ParseDateTime's tokenizer; false: a character it refuses.
bool TokenizeInterval(std::string_view s, std::vector<Field>& fields) {
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    Field f{FieldKind::kNumber, ""};
    if (IsDigit(c)) {
      while (i < s.size() && IsDigit(s[i])) f.text += s[i++];
      if (i < s.size() && s[i] == ':') {
        f.kind = FieldKind::kTime;
        while (i < s.size() && (IsDigit(s[i]) || s[i] == ':' || s[i] == '.')) f.text += s[i++];
      } else if (i < s.size() && (s[i] == '-' || s[i] == '/' || s[i] == '.')) {
        const char delim = s[i];
        f.text += s[i++];
        if (i < s.size() && IsDigit(s[i])) {
          f.kind = delim == '.' ? FieldKind::kNumber : FieldKind::kDate;
          while (i < s.size() && IsDigit(s[i])) f.text += s[i++];
          if (i < s.size() && s[i] == delim) {
            f.kind = FieldKind::kDate;
            while (i < s.size() && (IsDigit(s[i]) || s[i] == delim)) f.text += s[i++];
          }
        } else {
          f.kind = FieldKind::kDate;
          while (i < s.size() && (IsDigit(s[i]) || IsAlpha(s[i]) || s[i] == delim)) {
            f.text += Lower(s[i++]);
          }
        }
      }
    } else if (c == '.') {
      f.text += s[i++];
      while (i < s.size() && IsDigit(s[i])) f.text += s[i++];
    } else if (IsAlpha(c)) {
      f.kind = FieldKind::kString;
      while (i < s.size() && IsAlpha(s[i])) f.text += Lower(s[i++]);
      // A word run into a digit, sign or date punctuation is a date or zone token to
      // PostgreSQL, never an interval unit.
      if (i < s.size() &&
          (s[i] == '-' || s[i] == '/' || s[i] == '.' || s[i] == '+' || IsDigit(s[i]))) {
        f.kind = FieldKind::kDate;
        while (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == '/' || s[i] == '_' ||
                                s[i] == '.' || s[i] == ':' || IsDigit(s[i]) || IsAlpha(s[i]))) {
          f.text += Lower(s[i++]);
        }
      }
    } else if (c == '+' || c == '-') {
      f.text += s[i++];
      while (i < s.size() && IsSpace(s[i])) ++i;
      if (i < s.size() && IsDigit(s[i])) {
        f.kind = FieldKind::kSigned;
        while (i < s.size() && (IsDigit(s[i]) || s[i] == ':' || s[i] == '.' || s[i] == '-')) {
          f.text += s[i++];
        }
      } else if (i < s.size() && IsAlpha(s[i])) {
        f.kind = FieldKind::kSpecial;
        while (i < s.size() && IsAlpha(s[i])) f.text += Lower(s[i++]);
      } else {
        return false;
      }
    } else if (IsPunct(c)) {
      ++i;
      continue;
    } else {
      return false;
    }
    fields.push_back(std::move(f));
  }
  return true;
}

enum class Unit {
  kNone,     // no unit yet: a bare number is seconds
  kInvalid,  // after "ago": a number there is refused
  kMicrosecond,
  kMillisecond,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,
  kMonth,
  kYear,
  kDecade,
  kCentury,
  kMillennium,
  kOther,  // a unit PostgreSQL knows but an interval refuses (quarter, timezone …)
  kAgo,
};

// PostgreSQL's deltatktbl, looked up on the first 10 characters as DecodeUnits does.
Unit IntervalUnit(std::string word) {
  if (word.size() > 10) word.resize(10);
  struct Entry {
    const char* name;
    Unit unit;
  };
  static constexpr Entry kUnits[] = {
      {"ago", Unit::kAgo},
      {"c", Unit::kCentury},
      {"cent", Unit::kCentury},
      {"centuries", Unit::kCentury},
      {"century", Unit::kCentury},
      {"d", Unit::kDay},
      {"day", Unit::kDay},
      {"days", Unit::kDay},
      {"dec", Unit::kDecade},
      {"decade", Unit::kDecade},
      {"decades", Unit::kDecade},
      {"decs", Unit::kDecade},
      {"h", Unit::kHour},
      {"hour", Unit::kHour},
      {"hours", Unit::kHour},
      {"hr", Unit::kHour},
      {"hrs", Unit::kHour},
      {"m", Unit::kMinute},
      {"microsecon", Unit::kMicrosecond},
      {"mil", Unit::kMillennium},
      {"millennia", Unit::kMillennium},
      {"millennium", Unit::kMillennium},
      {"millisecon", Unit::kMillisecond},
      {"mils", Unit::kMillennium},
      {"min", Unit::kMinute},
      {"mins", Unit::kMinute},
      {"minute", Unit::kMinute},
      {"minutes", Unit::kMinute},
      {"mon", Unit::kMonth},
      {"mons", Unit::kMonth},
      {"month", Unit::kMonth},
      {"months", Unit::kMonth},
      {"ms", Unit::kMillisecond},
      {"msec", Unit::kMillisecond},
      {"msecs", Unit::kMillisecond},
      {"mseconds", Unit::kMillisecond},
      {"qtr", Unit::kOther},
      {"quarter", Unit::kOther},
      {"s", Unit::kSecond},
      {"sec", Unit::kSecond},
      {"second", Unit::kSecond},
      {"seconds", Unit::kSecond},
      {"secs", Unit::kSecond},
      {"timezone", Unit::kOther},
      {"timezone_h", Unit::kOther},
      {"timezone_m", Unit::kOther},
      {"us", Unit::kMicrosecond},
      {"usec", Unit::kMicrosecond},
      {"usecs", Unit::kMicrosecond},
      {"useconds", Unit::kMicrosecond},
      {"w", Unit::kWeek},
      {"week", Unit::kWeek},
      {"weeks", Unit::kWeek},
      {"y", Unit::kYear},
      {"year", Unit::kYear},
      {"years", Unit::kYear},
      {"yr", Unit::kYear},
      {"yrs", Unit::kYear},
  };
  for (const Entry& e : kUnits) {
    if (word == e.name) return e.unit;
  }
  return Unit::kInvalid;
}

// A decimal fraction num / den (den = 10^k, |num| < den), signed like its field.
struct Fraction {
  std::int64_t num = 0;
  std::int64_t den = 1;
};

// PostgreSQL's pg_itm_in: the fields an interval text adds up, each checked for overflow.
struct IntervalFields {
  std::int32_t year = 0;
  std::int32_t mon = 0;
  std::int32_t mday = 0;
  std::int64_t usec = 0;
};

bool AddI32(std::int32_t& acc, std::int64_t v) {
  const std::int64_t r = static_cast<std::int64_t>(acc) + v;
  if (v < INT32_MIN || v > INT32_MAX || r < INT32_MIN || r > INT32_MAX) return false;
  acc = static_cast<std::int32_t>(r);
  return true;
}
bool AddI64(std::int64_t& acc, Int128 v) {
  const Int128 r = static_cast<Int128>(acc) + v;
  if (r < INT64_MIN || r > INT64_MAX) return false;
  acc = static_cast<std::int64_t>(r);
  return true;
}

// frac × scale microseconds, the fractional microsecond dropped unless beyond one half
// (PostgreSQL's AdjustFractMicroseconds: ties truncate).
bool AddFractMicros(Int128 num, std::int64_t den, std::int64_t scale, IntervalFields& it) {
  if (num == 0) return true;
  const Int128 x = num * scale;
  Int128 q = x / den;
  const Int128 r = x % den;
  if (2 * r > den) ++q;
  if (2 * r < -den) --q;
  return AddI64(it.usec, q);
}
// frac × scale days: whole days, the rest as microseconds (AdjustFractDays).
bool AddFractDays(const Fraction& f, std::int64_t scale, IntervalFields& it) {
  if (f.num == 0) return true;
  const Int128 x = static_cast<Int128>(f.num) * scale;
  if (!AddI32(it.mday, static_cast<std::int64_t>(x / f.den))) return false;
  return AddFractMicros(x % f.den, f.den, kMicrosPerDay, it);
}
// frac × scale years as months, rounded ties to even (AdjustFractYears' rint).
bool AddFractYears(const Fraction& f, std::int64_t scale, IntervalFields& it) {
  if (f.num == 0) return true;
  const Int128 x = static_cast<Int128>(f.num) * scale * 12;
  Int128 q = x / f.den;
  const Int128 r = x % f.den;
  const bool odd = q % 2 != 0;
  if (2 * r > f.den || (2 * r == f.den && odd)) ++q;
  if (2 * r < -f.den || (2 * r == -f.den && odd)) --q;
  return AddI32(it.mon, static_cast<std::int64_t>(q));
}

enum class Decode { kOk, kBadFormat, kFieldOverflow };

// strtoi64 of a field: optional sign, digits; `end` is left after them.
Decode ReadSigned(const std::string& s, std::size_t& end, std::int64_t& value) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const std::size_t start = i;
  Int128 v = 0;
  bool overflow = false;
  while (i < s.size() && IsDigit(s[i])) {
    v = v * 10 + (s[i] - '0');
    if (v > static_cast<Int128>(INT64_MAX) + 1) overflow = true, v = 0;
    ++i;
  }
  if (i == start) {
    // strtoi64 reads nothing: a field such as ".5" is all fraction.
    value = 0;
    end = 0;
    return Decode::kOk;
  }
  if (negative) v = -v;
  if (overflow || v > INT64_MAX || v < INT64_MIN) return Decode::kFieldOverflow;
  value = static_cast<std::int64_t>(v);
  end = i;
  return Decode::kOk;
}

// DecodeTimeForInterval: "h:m[:s[.f]]" or "m:s.f" as microseconds.
Decode IntervalClock(std::string_view s, std::int64_t& micros) {
  std::size_t i = 0;
  std::int64_t hour = 0, minute = 0, second = 0, fraction = 0;
  bool overflow = false;
  if (!ReadClock(s, i, hour, minute, second, fraction, overflow) || i != s.size()) {
    return overflow ? Decode::kFieldOverflow : Decode::kBadFormat;
  }
  if (overflow || minute > 59 || second > 60 || fraction > kMicrosPerSecond) {
    return Decode::kFieldOverflow;
  }
  const Int128 total = static_cast<Int128>(hour) * kMicrosPerHour + minute * kMicrosPerMinute +
                       second * kMicrosPerSecond + fraction;
  if (total > INT64_MAX) return Decode::kFieldOverflow;
  micros = static_cast<std::int64_t>(total);
  return Decode::kOk;
}

// PostgreSQL's DecodeInterval (IntervalStyle postgres, no typmod).
Decode DecodeIntervalFields(const std::vector<Field>& fields, IntervalFields& it) {
  enum : unsigned {
    kMYear = 1u << 0,
    kMMonth = 1u << 1,
    kMDay = 1u << 2,
    kMHour = 1u << 3,
    kMMinute = 1u << 4,
    kMSecond = 1u << 5,
    kMMilli = 1u << 6,
    kMMicro = 1u << 7,
    kMWeek = 1u << 8,
    kMDecade = 1u << 9,
    kMCentury = 1u << 10,
    kMMillennium = 1u << 11,
    kMAllSecs = kMSecond | kMMilli | kMMicro,
    kMTime = kMHour | kMMinute | kMAllSecs,
  };
  unsigned fmask = 0;
  Unit type = Unit::kNone;
  bool parsing_unit_val = false;
  bool is_before = false;
  for (std::size_t n = fields.size(); n-- > 0;) {
    const Field& field = fields[n];
    unsigned tmask = 0;
    bool handled_as_time = false;
    if (field.kind == FieldKind::kTime ||
        (field.kind == FieldKind::kSigned && field.text.find(':') != std::string::npos)) {
      const bool sign = field.kind == FieldKind::kSigned;
      std::int64_t micros = 0;
      const Decode d = IntervalClock(std::string_view(field.text).substr(sign ? 1 : 0), micros);
      if (d == Decode::kOk) {
        // PostgreSQL sets (not adds) the microseconds here; the time mask keeps any other
        // sub-day field out, so only fractions of days, weeks or months could be lost.
        it.usec = (sign && field.text[0] == '-') ? -micros : micros;
        tmask = kMTime;
        type = Unit::kDay;
        parsing_unit_val = false;
        handled_as_time = true;
      } else if (!sign) {
        return d;
      }
    }
    if (handled_as_time) {
      // done
    } else if (field.kind == FieldKind::kSigned || field.kind == FieldKind::kNumber ||
               field.kind == FieldKind::kDate) {
      if (type == Unit::kNone) type = Unit::kSecond;
      std::size_t end = 0;
      std::int64_t val = 0;
      const Decode d = ReadSigned(field.text, end, val);
      if (d != Decode::kOk) return d;
      Fraction frac;
      if (end < field.text.size() && field.text[end] == '-') {
        // SQL's "years-months"
        std::size_t k = end + 1;
        std::int64_t months = 0;
        int digits = 0;
        bool overflow = false;
        std::string_view rest(field.text);
        if (!ReadNumber(rest, k, months, &digits, overflow)) return Decode::kBadFormat;
        if (overflow || months >= 12) return Decode::kFieldOverflow;
        if (k != field.text.size()) return Decode::kBadFormat;
        if (field.text[0] == '-') months = -months;
        const Int128 total = static_cast<Int128>(val) * 12 + months;
        if (total > INT64_MAX || total < INT64_MIN) return Decode::kFieldOverflow;
        val = static_cast<std::int64_t>(total);
        type = Unit::kMonth;
      } else if (end < field.text.size() && field.text[end] == '.') {
        std::size_t k = end + 1;
        while (k < field.text.size() && IsDigit(field.text[k])) {
          if (frac.den < 1'000'000'000'000'000'000) {
            frac.num = frac.num * 10 + (field.text[k] - '0');
            frac.den *= 10;
          }
          ++k;
        }
        if (k != field.text.size()) return Decode::kBadFormat;
        if (field.text[0] == '-') frac.num = -frac.num;
      } else if (end != field.text.size()) {
        return Decode::kBadFormat;
      }
      bool ok = true;
      switch (type) {
        case Unit::kMicrosecond:
          ok = AddI64(it.usec, val) && AddFractMicros(frac.num, frac.den, 1, it);
          tmask = kMMicro;
          break;
        case Unit::kMillisecond:
          ok = AddI64(it.usec, static_cast<Int128>(val) * 1000) &&
               AddFractMicros(frac.num, frac.den, 1000, it);
          tmask = kMMilli;
          break;
        case Unit::kSecond:
          ok = AddI64(it.usec, static_cast<Int128>(val) * kMicrosPerSecond) &&
               AddFractMicros(frac.num, frac.den, kMicrosPerSecond, it);
          tmask = frac.num == 0 ? kMSecond : kMAllSecs;
          break;
        case Unit::kMinute:
          ok = AddI64(it.usec, static_cast<Int128>(val) * kMicrosPerMinute) &&
               AddFractMicros(frac.num, frac.den, kMicrosPerMinute, it);
          tmask = kMMinute;
          break;
        case Unit::kHour:
          ok = AddI64(it.usec, static_cast<Int128>(val) * kMicrosPerHour) &&
               AddFractMicros(frac.num, frac.den, kMicrosPerHour, it);
          tmask = kMHour;
          type = Unit::kDay;
          break;
        case Unit::kDay:
          ok = AddI32(it.mday, val) && AddFractMicros(frac.num, frac.den, kMicrosPerDay, it);
          tmask = kMDay;
          break;
        case Unit::kWeek:
          ok = val >= INT32_MIN && val <= INT32_MAX && AddI32(it.mday, val * 7) &&
               AddFractDays(frac, 7, it);
          tmask = kMWeek;
          break;
        case Unit::kMonth:
          ok = AddI32(it.mon, val) && AddFractDays(frac, 30, it);
          tmask = kMMonth;
          break;
        case Unit::kYear:
        case Unit::kDecade:
        case Unit::kCentury:
        case Unit::kMillennium: {
          const std::int64_t scale = type == Unit::kYear      ? 1
                                     : type == Unit::kDecade  ? 10
                                     : type == Unit::kCentury ? 100
                                                              : 1000;
          ok = val >= INT32_MIN && val <= INT32_MAX && AddI32(it.year, val * scale) &&
               AddFractYears(frac, scale, it);
          tmask = type == Unit::kYear      ? kMYear
                  : type == Unit::kDecade  ? kMDecade
                  : type == Unit::kCentury ? kMCentury
                                           : kMMillennium;
          break;
        }
        default:
          return Decode::kBadFormat;
      }
      if (!ok) return Decode::kFieldOverflow;
      parsing_unit_val = false;
    } else if (field.kind == FieldKind::kString || field.kind == FieldKind::kSpecial) {
      if (parsing_unit_val) return Decode::kBadFormat;
      const Unit u = IntervalUnit(field.text);
      if (u == Unit::kAgo) {
        is_before = true;
        type = Unit::kInvalid;
      } else if (u == Unit::kInvalid || field.kind == FieldKind::kSpecial) {
        return Decode::kBadFormat;
      } else {
        type = u;
        parsing_unit_val = true;
      }
    } else {
      return Decode::kBadFormat;
    }
    if ((tmask & fmask) != 0) return Decode::kBadFormat;
    fmask |= tmask;
  }
  if (fmask == 0 || parsing_unit_val) return Decode::kBadFormat;
  if (is_before) {
    if (it.usec == INT64_MIN || it.mday == INT32_MIN || it.mon == INT32_MIN ||
        it.year == INT32_MIN) {
      return Decode::kFieldOverflow;
    }
    it.usec = -it.usec;
    it.mday = -it.mday;
    it.mon = -it.mon;
    it.year = -it.year;
  }
  return Decode::kOk;
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
// a sign before the clock only when a day part is negative and the clock is not.
std::string IntervalText(const Interval& i) {
  std::string out;
  bool is_zero = true;
  bool is_before = false;
  auto add_part = [&](std::int64_t value, const char* unit) {
    if (value == 0) return;
    if (!is_zero) out += ' ';
    if (is_before && value > 0) out += '+';
    out += std::to_string(value);
    out += ' ';
    out += unit;
    if (value != 1) out += 's';
    is_before = value < 0;
    is_zero = false;
  };
  add_part(i.months / 12, "year");
  add_part(i.months % 12, "mon");
  add_part(i.days, "day");
  const std::int64_t t = i.micros;
  if (is_zero || t != 0) {
    // |t| as unsigned: INT64_MIN has no positive int64.
    const std::uint64_t mag =
        t < 0 ? 0 - static_cast<std::uint64_t>(t) : static_cast<std::uint64_t>(t);
    const std::uint64_t hours = mag / static_cast<std::uint64_t>(kMicrosPerHour);
    if (!is_zero) out += ' ';
    out += t < 0 ? "-" : (is_before ? "+" : "");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%02llu", static_cast<unsigned long long>(hours));
    out += buf;
    const std::uint64_t rest = mag % static_cast<std::uint64_t>(kMicrosPerHour);
    std::string clock;
    AppendClock(clock, 0, static_cast<std::int64_t>(rest / 60'000'000),
                static_cast<std::int64_t>(rest / 1'000'000 % 60),
                static_cast<std::int64_t>(rest % 1'000'000));
    out += clock.substr(2);  // drop the "00" hours
  }
  return out;
}

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

Result<Interval> ParseInterval(std::string_view text) {
  std::vector<Field> fields;
  IntervalFields it;
  Decode d = TokenizeInterval(text, fields) ? DecodeIntervalFields(fields, it) : Decode::kBadFormat;
  if (d == Decode::kBadFormat) return BadSyntax("interval", text);
  if (d == Decode::kFieldOverflow) {
    return Status::DataError("interval field value out of range: " + Quoted(text));
  }
  const std::int64_t months = static_cast<std::int64_t>(it.year) * 12 + it.mon;
  if (months < INT32_MIN || months > INT32_MAX) return Status::DataError("interval out of range");
  return Interval{static_cast<std::int32_t>(months), it.mday, it.usec};
}

}  // namespace tandem
