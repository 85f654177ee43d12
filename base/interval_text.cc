// Text in and out of intervals (base/datetime.h): PostgreSQL 15's interval_in and interval_out
// with IntervalStyle postgres.
//
// Input follows PostgreSQL's ParseDateTime + DecodeInterval (fields read right to left, a bare
// number takes the unit of the field to its right, fractions cascade down) with exact decimal
// fractions instead of doubles: PostgreSQL's roundings (for microseconds "> 0.5", so ties
// truncate; for the months of fractional years and for fractional seconds rint, ties to even)
// are applied to the exact value.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "base/calendar.h"
#include "base/datetime.h"
#include "base/datetime_scan.h"

namespace tandem {
namespace {

using datetime_scan::AppendClock;
using datetime_scan::IsAlpha;
using datetime_scan::IsDigit;
using datetime_scan::IsPunct;
using datetime_scan::IsSpace;
using datetime_scan::Lower;
using datetime_scan::Quoted;
using datetime_scan::ReadClock;
using datetime_scan::ReadFractionMicros;
using datetime_scan::ReadNumber;

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

// PostgreSQL's Adjust* helpers for a whole part `val` and its fraction `frac` (ISO 8601 forms).
bool AdjustMicros(std::int64_t val, const Fraction& frac, std::int64_t scale, IntervalFields& it) {
  return AddI64(it.usec, static_cast<Int128>(val) * scale) &&
         AddFractMicros(frac.num, frac.den, scale, it);
}
bool AdjustDays(std::int64_t val, std::int64_t scale, IntervalFields& it) {
  return val >= INT32_MIN && val <= INT32_MAX && AddI32(it.mday, val * scale);
}
bool AdjustMonths(std::int64_t val, IntervalFields& it) { return AddI32(it.mon, val); }
bool AdjustYears(std::int64_t val, IntervalFields& it) {
  return val >= INT32_MIN && val <= INT32_MAX && AddI32(it.year, val);
}

// PostgreSQL's ParseISO8601Number: [-]digits[.digits] or [-].digits, truncated toward zero
// into a whole part and a fraction with the number's sign. Leaves `i` after it.
Decode ReadIso8601Number(std::string_view s, std::size_t& i, std::int64_t& val, Fraction& frac) {
  val = 0;
  frac = Fraction{};
  bool negative = false;
  if (i < s.size() && s[i] == '-') {
    negative = true;
    ++i;
  }
  // PostgreSQL reads the number with strtod and refuses a magnitude above 1e15; it then splits
  // the double, which loses the fraction's last digits on large numbers. Here the digits are
  // read exactly, so such a fraction is the exact one.
  constexpr std::int64_t kLimit = 1'000'000'000'000'000;
  bool saw_digit = false;
  bool too_big = false;
  if (i < s.size() && IsDigit(s[i])) {
    while (i < s.size() && IsDigit(s[i])) {
      if (val > kLimit) too_big = true;
      if (!too_big) val = val * 10 + (s[i] - '0');
      ++i;
    }
    if (val > kLimit) too_big = true;
    saw_digit = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) {
      if (frac.den < 1'000'000'000'000'000'000) {
        frac.num = frac.num * 10 + (s[i] - '0');
        frac.den *= 10;
      }
      saw_digit = true;
      ++i;
    }
  }
  if (!saw_digit) return Decode::kBadFormat;
  if (too_big || (val == kLimit && frac.num != 0)) return Decode::kFieldOverflow;
  if (negative) {
    val = -val;
    frac.num = -frac.num;
  }
  return Decode::kOk;
}

// The digits of a field, after its sign (PostgreSQL's ISO8601IntegerWidth).
std::size_t Iso8601IntegerWidth(std::string_view s, std::size_t start) {
  if (start < s.size() && s[start] == '-') ++start;
  std::size_t n = 0;
  while (start + n < s.size() && IsDigit(s[start + n])) ++n;
  return n;
}

// PostgreSQL's DecodeISO8601Interval: "P1Y2M3DT4H5M6S" (designators, each number may carry a
// sign and a fraction), and the alternative forms "P0001-02-03T04:05:06" / "P00010203T040506".
Decode DecodeIso8601Interval(std::string_view s, IntervalFields& it) {
  if (s.size() < 2 || s[0] != 'P') return Decode::kBadFormat;
  std::size_t i = 1;
  bool datepart = true;
  bool havefield = false;
  std::int64_t val = 0;
  Fraction frac;
  auto number = [&]() { return ReadIso8601Number(s, i, val, frac); };
  while (i < s.size()) {
    if (s[i] == 'T') {
      datepart = false;
      havefield = false;
      ++i;
      continue;
    }
    const std::size_t fieldstart = i;
    if (Decode d = number(); d != Decode::kOk) return d;
    const char unit = i < s.size() ? s[i++] : '\0';
    if (datepart) {
      switch (unit) {
        case 'Y':
          if (!AdjustYears(val, it) || !AddFractYears(frac, 1, it)) return Decode::kFieldOverflow;
          break;
        case 'M':
          if (!AdjustMonths(val, it) || !AddFractDays(frac, 30, it)) return Decode::kFieldOverflow;
          break;
        case 'W':
          if (!AdjustDays(val, 7, it) || !AddFractDays(frac, 7, it)) return Decode::kFieldOverflow;
          break;
        case 'D':
          if (!AdjustDays(val, 1, it) || !AddFractMicros(frac.num, frac.den, kMicrosPerDay, it)) {
            return Decode::kFieldOverflow;
          }
          break;
        case 'T':
        case '\0':
          if (Iso8601IntegerWidth(s, fieldstart) == 8 && !havefield) {
            if (!AdjustYears(val / 10000, it) || !AdjustMonths((val / 100) % 100, it) ||
                !AdjustDays(val % 100, 1, it) ||
                !AddFractMicros(frac.num, frac.den, kMicrosPerDay, it)) {
              return Decode::kFieldOverflow;
            }
            if (unit == '\0') return Decode::kOk;
            datepart = false;
            havefield = false;
            continue;
          }
          [[fallthrough]];
        case '-':
          if (havefield) return Decode::kBadFormat;
          if (!AdjustYears(val, it) || !AddFractYears(frac, 1, it)) return Decode::kFieldOverflow;
          if (unit == '\0') return Decode::kOk;
          if (unit == 'T') {
            datepart = false;
            havefield = false;
            continue;
          }
          if (Decode d = number(); d != Decode::kOk) return d;
          if (!AdjustMonths(val, it) || !AddFractDays(frac, 30, it)) return Decode::kFieldOverflow;
          if (i == s.size()) return Decode::kOk;
          if (s[i] == 'T') {
            datepart = false;
            havefield = false;
            continue;
          }
          if (s[i] != '-') return Decode::kBadFormat;
          ++i;
          if (Decode d = number(); d != Decode::kOk) return d;
          if (!AdjustDays(val, 1, it) || !AddFractMicros(frac.num, frac.den, kMicrosPerDay, it)) {
            return Decode::kFieldOverflow;
          }
          if (i == s.size()) return Decode::kOk;
          if (s[i] == 'T') {
            datepart = false;
            havefield = false;
            continue;
          }
          return Decode::kBadFormat;
        default:
          return Decode::kBadFormat;
      }
    } else {
      switch (unit) {
        case 'H':
          if (!AdjustMicros(val, frac, kMicrosPerHour, it)) return Decode::kFieldOverflow;
          break;
        case 'M':
          if (!AdjustMicros(val, frac, kMicrosPerMinute, it)) return Decode::kFieldOverflow;
          break;
        case 'S':
          if (!AdjustMicros(val, frac, kMicrosPerSecond, it)) return Decode::kFieldOverflow;
          break;
        case '\0':
          if (Iso8601IntegerWidth(s, fieldstart) == 6 && !havefield) {
            if (!AdjustMicros(val / 10000, Fraction{}, kMicrosPerHour, it) ||
                !AdjustMicros((val / 100) % 100, Fraction{}, kMicrosPerMinute, it) ||
                !AdjustMicros(val % 100, Fraction{}, kMicrosPerSecond, it) ||
                !AddFractMicros(frac.num, frac.den, 1, it)) {
              return Decode::kFieldOverflow;
            }
            return Decode::kOk;
          }
          [[fallthrough]];
        case ':':
          if (havefield) return Decode::kBadFormat;
          if (!AdjustMicros(val, frac, kMicrosPerHour, it)) return Decode::kFieldOverflow;
          if (unit == '\0') return Decode::kOk;
          if (Decode d = number(); d != Decode::kOk) return d;
          if (!AdjustMicros(val, frac, kMicrosPerMinute, it)) return Decode::kFieldOverflow;
          if (i == s.size()) return Decode::kOk;
          if (s[i] != ':') return Decode::kBadFormat;
          ++i;
          if (Decode d = number(); d != Decode::kOk) return d;
          if (!AdjustMicros(val, frac, kMicrosPerSecond, it)) return Decode::kFieldOverflow;
          if (i == s.size()) return Decode::kOk;
          return Decode::kBadFormat;
        default:
          return Decode::kBadFormat;
      }
    }
    havefield = true;
  }
  return Decode::kOk;
}

}  // namespace

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

Result<Interval> ParseInterval(std::string_view text) {
  std::vector<Field> fields;
  IntervalFields it;
  Decode d = TokenizeInterval(text, fields) ? DecodeIntervalFields(fields, it) : Decode::kBadFormat;
  if (d == Decode::kBadFormat) {
    it = IntervalFields{};
    d = DecodeIso8601Interval(text, it);
  }
  if (d == Decode::kBadFormat) {
    return Status::DataError("invalid input syntax for type interval: " + Quoted(text));
  }
  if (d == Decode::kFieldOverflow) {
    return Status::DataError("interval field value out of range: " + Quoted(text));
  }
  const std::int64_t months = static_cast<std::int64_t>(it.year) * 12 + it.mon;
  if (months < INT32_MIN || months > INT32_MAX) return Status::DataError("interval out of range");
  return Interval{static_cast<std::int32_t>(months), it.mday, it.usec};
}

}  // namespace tandem
