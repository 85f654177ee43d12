#include "reference/reference_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

namespace tandem::reference {
namespace {

constexpr const char* kIntOverflow = "integer overflow";  // int64 arithmetic (reference.h)
constexpr const char* kDivByZero = "division by zero";
constexpr const char* kNumericOverflow = "value overflows numeric format";
constexpr const char* kIntervalRange = "interval out of range";
constexpr const char* kTimestampRange = "timestamp out of range";
constexpr const char* kDateRange = "date out of range";
constexpr int kMaxScale = 38;

constexpr std::int64_t kMicrosPerDayRef = 86'400'000'000;
constexpr std::int64_t kMicrosPerHour = 3'600'000'000;
constexpr std::int64_t kMicrosPerMinute = 60'000'000;
// PostgreSQL's first day, 4714-11-24 BC, and last, 5874897-12-31, in days since 1970-01-01.
constexpr std::int64_t kMinDays = -2'440'588;
constexpr std::int64_t kMaxDays = 2'145'042'905;
// Timestamps start on kMinDays; they end where PostgreSQL's do (294277-01-01) or where int64
// microseconds since 1970 end, whichever is first: int64's end.
constexpr Int128 kMinTimestamp = static_cast<Int128>(kMinDays) * kMicrosPerDayRef;
constexpr Int128 kMaxTimestamp = std::numeric_limits<std::int64_t>::max();

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

mpz_class PowerOfTen(int n) {
  mpz_class out;
  mpz_ui_pow_ui(out.get_mpz_t(), 10, static_cast<unsigned long>(n));
  return out;
}

mpz_class ToMpz(Int128 v) {
  const bool negative = v < 0;
  UInt128 m = negative ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  mpz_class hi(static_cast<unsigned long>(static_cast<std::uint64_t>(m >> 64)));
  mpz_class lo(static_cast<unsigned long>(static_cast<std::uint64_t>(m)));
  mpz_class out = (hi << 64) + lo;
  return negative ? mpz_class(-out) : out;
}

// REQUIRES: |v| < 2^127.
Int128 ToInt128(const mpz_class& v) {
  mpz_class m = abs(v);
  const mpz_class lo_part = m & mpz_class("18446744073709551615", 10);
  const mpz_class hi_part = m >> 64;
  const UInt128 u = (static_cast<UInt128>(mpz_get_ui(hi_part.get_mpz_t())) << 64) |
                    static_cast<UInt128>(mpz_get_ui(lo_part.get_mpz_t()));
  return v < 0 ? -static_cast<Int128>(u) : static_cast<Int128>(u);
}

// Round half away from zero to an integer.
mpz_class RoundHalfAway(const mpq_class& v) {
  const mpz_class num = abs(v.get_num());
  const mpz_class& den = v.get_den();
  mpz_class q = (2 * num + den) / (2 * den);
  return v < 0 ? mpz_class(-q) : q;
}
mpz_class Truncate(const mpq_class& v) {
  mpz_class q = abs(v.get_num()) / v.get_den();
  return v < 0 ? mpz_class(-q) : q;
}

bool IsInt(pb::ScalarType t) { return t == pb::INT16 || t == pb::INT32 || t == pb::INT64; }
bool IsFloat(pb::ScalarType t) { return t == pb::FLOAT32 || t == pb::FLOAT64; }

struct IntRange {
  std::int64_t min, max;
  const char* words;  // of a value beyond the range
};
IntRange RangeOf(pb::ScalarType t) {
  switch (t) {
    case pb::INT16:
      return {-32768, 32767, "smallint out of range"};
    case pb::INT32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(),
              "integer out of range"};
    default:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
              "bigint out of range"};
  }
}

const char* SqlName(pb::ScalarType t) {
  switch (t) {
    case pb::BOOL:
      return "boolean";
    case pb::INT16:
      return "smallint";
    case pb::INT32:
      return "integer";
    case pb::INT64:
      return "bigint";
    case pb::FLOAT32:
      return "real";
    case pb::FLOAT64:
      return "double precision";
    case pb::STRING:
      return "text";
    case pb::NUMERIC:
      return "numeric";
    case pb::BYTEA:
      return "bytea";
    case pb::DATE:
      return "date";
    case pb::TIME:
      return "time without time zone";
    case pb::TIMESTAMP:
      return "timestamp without time zone";
    case pb::TIMESTAMPTZ:
      return "timestamp with time zone";
    case pb::INTERVAL:
      return "interval";
    case pb::UUID:
      return "uuid";
    default:
      return "unknown";
  }
}

Value Syntax(pb::ScalarType t, std::string_view text) {
  return Value::Error(std::string("invalid input syntax for type ") + SqlName(t) + ": \"" +
                      std::string(text) + "\"");
}

// ---- the calendar, through std::chrono

struct Civil {
  std::int64_t year = 1970;  // astronomical: 0 is 1 BC
  unsigned month = 1;
  unsigned day = 1;
};
constexpr std::int64_t kDaysPer400Years = 146'097;

Civil CivilOfDays(std::int64_t days) {
  const std::int64_t cycles = FloorDiv(days, kDaysPer400Years);
  const std::int64_t rest = days - cycles * kDaysPer400Years;  // 1970-01-01 .. 2369-12-31
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{rest}}};
  return Civil{static_cast<int>(ymd.year()) + 400 * cycles, static_cast<unsigned>(ymd.month()),
               static_cast<unsigned>(ymd.day())};
}

unsigned DaysInMonth(std::int64_t year, unsigned month) {
  const std::int64_t cycles = FloorDiv(year - 1970, 400);
  const int y = static_cast<int>(year - 400 * cycles);
  const std::chrono::year_month_day_last last{std::chrono::year{y} / std::chrono::month{month} /
                                              std::chrono::last};
  return static_cast<unsigned>(last.day());
}

// REQUIRES: a valid day of a month; |year| well inside int64.
std::int64_t DaysOfCivil(std::int64_t year, unsigned month, unsigned day) {
  const std::int64_t cycles = FloorDiv(year - 1970, 400);
  const int y = static_cast<int>(year - 400 * cycles);
  const std::chrono::sys_days d{std::chrono::year{y} / std::chrono::month{month} /
                                std::chrono::day{day}};
  return d.time_since_epoch().count() + cycles * kDaysPer400Years;
}

bool TimestampInRange(Int128 micros) { return micros >= kMinTimestamp && micros <= kMaxTimestamp; }

std::string TwoDigits(std::int64_t v) {
  std::string s = std::to_string(v);
  return s.size() < 2 ? "0" + s : s;
}

std::string DateBody(std::int64_t days, bool* bc) {
  const Civil c = CivilOfDays(days);
  *bc = c.year <= 0;
  std::string year = std::to_string(*bc ? 1 - c.year : c.year);
  while (year.size() < 4) year = "0" + year;
  return year + "-" + TwoDigits(c.month) + "-" + TwoDigits(c.day);
}

// HH:MM:SS[.ffffff without trailing zeros] of a non-negative count of microseconds.
std::string ClockText(std::int64_t micros) {
  std::string out = TwoDigits(micros / kMicrosPerHour) + ":" +
                    TwoDigits(micros / kMicrosPerMinute % 60) + ":" +
                    TwoDigits(micros / 1'000'000 % 60);
  std::int64_t fraction = micros % 1'000'000;
  if (fraction != 0) {
    std::string f = std::to_string(fraction);
    while (f.size() < 6) f = "0" + f;
    while (f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

std::string TimestampOutput(std::int64_t micros, bool tz) {
  bool bc = false;
  const std::int64_t days = FloorDiv(micros, kMicrosPerDayRef);
  std::string out =
      DateBody(days, &bc) + " " + ClockText(micros - days * kMicrosPerDayRef) + (tz ? "+00" : "");
  return bc ? out + " BC" : out;
}

std::string IntervalOutput(const Interval& i) {
  // IntervalStyle postgres: each nonzero field, a '+' before a positive one after a negative one.
  std::string out;
  bool is_zero = true, is_before = false;
  auto part = [&](std::int64_t value, const char* unit) {
    if (value == 0) return;
    out += std::string(is_zero ? "" : " ") + (is_before && value > 0 ? "+" : "") +
           std::to_string(value) + " " + unit + (value != 1 ? "s" : "");
    is_before = value < 0;
    is_zero = false;
  };
  part(i.months / 12, "year");
  part(i.months % 12, "mon");
  part(i.days, "day");
  if (is_zero || i.micros != 0) {
    const bool minus = i.micros < 0;
    const UInt128 m = minus ? -static_cast<UInt128>(static_cast<Int128>(i.micros))
                            : static_cast<UInt128>(i.micros);
    const std::uint64_t hours = static_cast<std::uint64_t>(m / kMicrosPerHour);
    const std::uint64_t rest = static_cast<std::uint64_t>(m % kMicrosPerHour);
    std::string clock = ClockText(static_cast<std::int64_t>(rest));
    clock = TwoDigits(static_cast<std::int64_t>(hours)) + clock.substr(2);
    out += std::string(is_zero ? "" : " ") + (minus ? "-" : (is_before ? "+" : "")) + clock;
  }
  return out;
}

// ---- text input helpers

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Reads digits at s[*pos]; at most 18 of them (no value here needs more).
std::optional<std::int64_t> Digits(std::string_view s, std::size_t* pos, std::size_t* count) {
  std::size_t start = *pos;
  std::int64_t v = 0;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos]))) {
    if (*pos - start >= 18) return std::nullopt;
    v = v * 10 + (s[*pos] - '0');
    ++*pos;
  }
  *count = *pos - start;
  if (*count == 0) return std::nullopt;
  return v;
}

enum class Parse { kOk, kSyntax, kField };

// "YYYY-MM-DD" (or DateStyle MDY's "MM/DD/YYYY") at s[*pos]: the year as written (before any
// " BC").
Parse ReadDate(std::string_view s, std::size_t* pos, std::int64_t* year, unsigned* month,
               unsigned* day) {
  std::size_t n = 0;
  auto y = Digits(s, pos, &n);
  if (y && *pos < s.size() && s[*pos] == '/') {  // DateStyle MDY: MM/DD/YYYY
    ++*pos;
    auto d = Digits(s, pos, &n);
    if (!d || *pos >= s.size() || s[*pos] != '/') return Parse::kSyntax;
    ++*pos;
    auto yy = Digits(s, pos, &n);
    if (!yy) return Parse::kSyntax;
    if (*yy == 0 || *y < 1 || *y > 12 || *d < 1 || *d > 31 || *yy > 10'000'000) {
      return Parse::kField;
    }
    *year = *yy;
    *month = static_cast<unsigned>(*y);
    *day = static_cast<unsigned>(*d);
    return Parse::kOk;
  }
  if (!y || *pos >= s.size() || s[*pos] != '-') return Parse::kSyntax;
  ++*pos;
  auto m = Digits(s, pos, &n);
  if (!m || *pos >= s.size() || s[*pos] != '-') return Parse::kSyntax;
  ++*pos;
  auto d = Digits(s, pos, &n);
  if (!d) return Parse::kSyntax;
  if (*y == 0 || *m < 1 || *m > 12 || *d < 1 || *y > 10'000'000) return Parse::kField;
  *year = *y;
  *month = static_cast<unsigned>(*m);
  *day = static_cast<unsigned>(*d);
  return Parse::kOk;
}

// "HH:MM[:SS[.ffffff]]" at s[*pos], microseconds (rounded to the microsecond, half up).
Parse ReadClock(std::string_view s, std::size_t* pos, std::int64_t* micros) {
  std::size_t n = 0;
  auto h = Digits(s, pos, &n);
  if (!h || *pos >= s.size() || s[*pos] != ':') return Parse::kSyntax;
  ++*pos;
  auto m = Digits(s, pos, &n);
  if (!m || n != 2) return Parse::kSyntax;
  std::int64_t sec = 0, frac = 0;
  if (*pos < s.size() && s[*pos] == ':') {
    ++*pos;
    auto sv = Digits(s, pos, &n);
    if (!sv || n != 2) return Parse::kSyntax;
    sec = *sv;
    if (*pos < s.size() && s[*pos] == '.') {
      ++*pos;
      std::size_t digits = 0;
      std::int64_t scale = 100'000;
      bool round_up = false;
      while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos]))) {
        if (digits < 6) {
          frac += (s[*pos] - '0') * scale;
          scale /= 10;
        } else if (digits == 6) {
          round_up = s[*pos] >= '5';
        }
        ++digits;
        ++*pos;
      }
      frac += round_up;
    }
  }
  if (*h > 24 || *m > 59 || sec > 60) return Parse::kField;
  *micros = *h * kMicrosPerHour + *m * kMicrosPerMinute + sec * 1'000'000 + frac;
  if (*micros > kMicrosPerDayRef) return Parse::kField;
  return Parse::kOk;
}

bool ReadBc(std::string_view s, std::size_t* pos) {
  std::string_view rest = Trim(s.substr(*pos));
  if (Lower(rest) == "bc") {
    *pos = s.size();
    return true;
  }
  return false;
}

Value FieldRange(std::string_view text) {
  return Value::Error("date/time field value out of range: \"" + std::string(text) + "\"");
}

// A date, optionally a time of day ('T' or a blank between), optionally a zone offset ("Z",
// "+05", "-08:30", "+0530"), optionally " BC": what date_in, timestamp_in and timestamptz_in read.
struct DateTimeText {
  std::int64_t year = 0;  // astronomical
  unsigned month = 1, day = 1;
  std::int64_t clock = 0;   // microseconds
  std::int64_t offset = 0;  // microseconds east of UTC
};

Parse ReadDateTime(std::string_view s, DateTimeText* out) {
  std::size_t pos = 0;
  Parse p = ReadDate(s, &pos, &out->year, &out->month, &out->day);
  if (p != Parse::kOk) return p;
  if (pos < s.size() && (s[pos] == ' ' || s[pos] == 'T' || s[pos] == 't')) {
    std::size_t at = pos + 1;
    while (at < s.size() && s[at] == ' ') ++at;
    if (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) {
      pos = at;
      p = ReadClock(s, &pos, &out->clock);
      if (p != Parse::kOk) return p;
    }
  }
  std::size_t at = pos;
  while (at < s.size() && s[at] == ' ') ++at;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    pos = at + 1;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    const bool minus = s[at] == '-';
    pos = at + 1;
    std::size_t n = 0;
    auto hh = Digits(s, &pos, &n);
    if (!hh) return Parse::kSyntax;
    std::int64_t hours = *hh, minutes = 0;
    if (n == 4) {
      hours = *hh / 100;
      minutes = *hh % 100;
    } else if (pos < s.size() && s[pos] == ':') {
      ++pos;
      auto mm = Digits(s, &pos, &n);
      if (!mm) return Parse::kSyntax;
      minutes = *mm;
    }
    if (hours > 15 || minutes > 59) return Parse::kField;
    out->offset = (minus ? -1 : 1) * (hours * kMicrosPerHour + minutes * kMicrosPerMinute);
  }
  const bool bc = ReadBc(s, &pos);
  if (pos != s.size()) return Parse::kSyntax;
  if (bc) out->year = 1 - out->year;
  if (out->day > DaysInMonth(out->year, out->month)) return Parse::kField;
  return Parse::kOk;
}

Value DateInput(std::string_view raw) {
  DateTimeText t;
  const Parse p = ReadDateTime(Trim(raw), &t);
  if (p == Parse::kSyntax) return Syntax(pb::DATE, raw);
  if (p == Parse::kField) return FieldRange(raw);
  const std::int64_t days = DaysOfCivil(t.year, t.month, t.day);  // the date as written
  if (days < kMinDays || days > kMaxDays) {
    return Value::Error("date out of range: \"" + std::string(raw) + "\"");
  }
  return Value::Of(Date{static_cast<std::int32_t>(days)});
}

Value TimeInput(std::string_view raw) {
  std::string_view s = Trim(raw);
  std::size_t pos = 0;
  std::int64_t micros = 0;
  Parse p = ReadClock(s, &pos, &micros);
  if (p == Parse::kSyntax || pos != s.size()) return Syntax(pb::TIME, raw);
  if (p == Parse::kField) return FieldRange(raw);
  return Value::Of(TimeOfDay{micros});
}

// A timestamp ignores a zone it is given; a timestamptz is shifted by it (none: UTC).
Value TimestampInput(std::string_view raw, bool tz) {
  const pb::ScalarType type = tz ? pb::TIMESTAMPTZ : pb::TIMESTAMP;
  DateTimeText t;
  const Parse p = ReadDateTime(Trim(raw), &t);
  if (p == Parse::kSyntax) return Syntax(type, raw);
  if (p == Parse::kField) return FieldRange(raw);
  const Int128 micros =
      static_cast<Int128>(DaysOfCivil(t.year, t.month, t.day)) * kMicrosPerDayRef + t.clock -
      (tz ? t.offset : 0);
  if (!TimestampInRange(micros)) {
    return Value::Error("timestamp out of range: \"" + std::string(raw) + "\"");
  }
  if (tz) return Value::Of(TimestampTz{static_cast<std::int64_t>(micros)});
  return Value::Of(Timestamp{static_cast<std::int64_t>(micros)});
}

// PostgreSQL's verbose interval input: [@] {N unit | [-]HH:MM[:SS[.f]]}... [ago], with integer N
// (a fraction only for seconds), units year month week day hour minute second millisecond
// microsecond and their abbreviations and plurals.
Value IntervalInput(std::string_view raw) {
  std::string s = Lower(Trim(raw));
  std::vector<std::string> words;
  for (std::size_t i = 0; i < s.size();) {
    while (i < s.size() && s[i] == ' ') ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) words.push_back(s.substr(i, j - i));
    i = j;
  }
  if (!words.empty() && words[0] == "@") words.erase(words.begin());
  bool ago = false;
  if (!words.empty() && words.back() == "ago") {
    ago = true;
    words.pop_back();
  }
  if (words.empty()) return Syntax(pb::INTERVAL, raw);
  Int128 months = 0, days = 0, micros = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.find(':') != std::string::npos) {
      bool minus = false;
      if (w[0] == '-' || w[0] == '+') {
        minus = w[0] == '-';
        w = w.substr(1);
      }
      std::size_t pos = 0;
      std::int64_t clock = 0;
      // Hours may exceed 24 in an interval: read them apart.
      std::size_t colon = w.find(':');
      std::size_t n = 0;
      std::size_t hpos = 0;
      auto hours = Digits(w.substr(0, colon), &hpos, &n);
      if (!hours || hpos != colon) return Syntax(pb::INTERVAL, raw);
      std::string rest = "00" + w.substr(colon);
      Parse p = ReadClock(rest, &pos, &clock);
      if (p != Parse::kOk || pos != rest.size()) return Syntax(pb::INTERVAL, raw);
      const Int128 total = static_cast<Int128>(*hours) * kMicrosPerHour + clock;
      micros += minus ? -total : total;
      continue;
    }
    // A number, then its unit (the unit may be glued on: "1day").
    std::size_t k = 0;
    const bool minus = w[0] == '-';
    if (w[0] == '-' || w[0] == '+') k = 1;
    std::size_t start = k;
    while (k < w.size() && (std::isdigit(static_cast<unsigned char>(w[k])) || w[k] == '.')) ++k;
    if (k == start) return Syntax(pb::INTERVAL, raw);
    mpq_class number;
    {
      std::string digits = w.substr(start, k - start);
      std::size_t dot = digits.find('.');
      std::string whole = dot == std::string::npos ? digits : digits.substr(0, dot);
      std::string frac = dot == std::string::npos ? "" : digits.substr(dot + 1);
      if ((whole + frac).empty() || frac.find('.') != std::string::npos || whole.size() > 18) {
        return Syntax(pb::INTERVAL, raw);
      }
      mpq_class fraction(frac.empty() ? mpz_class(0) : mpz_class(frac, 10),
                         PowerOfTen(static_cast<int>(frac.size())));
      fraction.canonicalize();
      number = mpq_class(mpz_class(whole.empty() ? "0" : whole, 10)) + fraction;
      if (minus) number = -number;
    }
    std::string unit = w.substr(k);
    if (unit.empty()) {
      if (i + 1 >= words.size()) {
        unit = "second";  // a bare number is seconds
      } else {
        unit = words[++i];
      }
    }
    auto is = [&](std::initializer_list<const char*> names) {
      for (const char* name : names) {
        if (unit == name) return true;
      }
      return false;
    };
    const bool whole_number = number.get_den() == 1;
    if (is({"year", "years", "y", "yr", "yrs"})) {
      if (!whole_number) return Syntax(pb::INTERVAL, raw);
      months += ToInt128(number.get_num()) * 12;
    } else if (is({"month", "months", "mon", "mons"})) {
      if (!whole_number) return Syntax(pb::INTERVAL, raw);
      months += ToInt128(number.get_num());
    } else if (is({"week", "weeks", "w"})) {
      if (!whole_number) return Syntax(pb::INTERVAL, raw);
      days += ToInt128(number.get_num()) * 7;
    } else if (is({"day", "days", "d"})) {
      if (!whole_number) return Syntax(pb::INTERVAL, raw);
      days += ToInt128(number.get_num());
    } else if (is({"hour", "hours", "h", "hr", "hrs"})) {
      if (!whole_number) return Syntax(pb::INTERVAL, raw);
      micros += ToInt128(number.get_num()) * kMicrosPerHour;
    } else if (is({"minute", "minutes", "min", "mins", "m"})) {
      if (!whole_number) return Syntax(pb::INTERVAL, raw);
      micros += ToInt128(number.get_num()) * kMicrosPerMinute;
    } else if (is({"second", "seconds", "sec", "secs", "s"})) {
      micros += ToInt128(RoundHalfAway(number * 1'000'000));
    } else if (is({"millisecond", "milliseconds", "ms", "msec", "msecs"})) {
      micros += ToInt128(RoundHalfAway(number * 1'000));
    } else if (is({"microsecond", "microseconds", "us", "usec", "usecs"})) {
      if (!whole_number) return Syntax(pb::INTERVAL, raw);
      micros += ToInt128(number.get_num());
    } else {
      return Syntax(pb::INTERVAL, raw);
    }
  }
  if (ago) {
    months = -months;
    days = -days;
    micros = -micros;
  }
  constexpr Int128 kI32Min = std::numeric_limits<std::int32_t>::min();
  constexpr Int128 kI32Max = std::numeric_limits<std::int32_t>::max();
  if (months < kI32Min || months > kI32Max || days < kI32Min || days > kI32Max ||
      !FitsInt64(micros)) {
    return Value::Error("interval field value out of range: \"" + std::string(raw) + "\"");
  }
  return Value::Of(Interval{static_cast<std::int32_t>(months), static_cast<std::int32_t>(days),
                            static_cast<std::int64_t>(micros)});
}

// ---- floats as PostgreSQL prints and reads them

// The fewest significant digits D (with decimal exponent E: 0.D... x 10^(E+1)) whose value lies
// strictly inside the interval of reals that read back as |v| — PostgreSQL's shortest output
// (its Ryu never takes a decimal on the interval's bounds, where a reader's tie-breaking would
// decide) — the one closest to |v| among them (an exact half: the even one). Exact, with rationals.
void ShortestDigits(double v, bool float4, std::string* digits, int* exponent) {
  const double a = std::fabs(v);
  double below = 0, above = 0;
  if (float4) {
    const float f = static_cast<float>(a);
    below = static_cast<double>(std::nextafter(f, 0.0f));
    above = static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()));
  } else {
    below = std::nextafter(a, 0.0);
    above = std::nextafter(a, std::numeric_limits<double>::infinity());
  }
  const mpq_class x(a);
  const mpq_class low = (mpq_class(below) + x) / 2;
  const mpq_class high = std::isinf(above) ? mpq_class(x + (x - mpq_class(below)) / 2)
                                           : mpq_class((x + mpq_class(above)) / 2);
  // E: 10^E <= x < 10^(E+1).
  int e = 0;
  mpq_class unit = 1;
  while (x >= unit * 10) {
    unit *= 10;
    ++e;
  }
  while (x < unit) {
    unit /= 10;
    --e;
  }
  for (int p = 1; p <= 17; ++p) {
    // Candidates with p digits: M x 10^(e-p+1), M the nearest to x and its neighbours.
    const int shift = e - p + 1;
    const mpq_class step =
        shift >= 0 ? mpq_class(PowerOfTen(shift)) : mpq_class(mpz_class(1), PowerOfTen(-shift));
    mpq_class ratio = x / step;
    ratio.canonicalize();
    const mpz_class nearest = RoundHalfAway(ratio);
    std::optional<mpz_class> best;
    mpq_class best_distance;
    for (const int d : {0, -1, 1}) {
      const mpz_class m = nearest + d;
      if (m < PowerOfTen(p - 1) || m >= PowerOfTen(p)) continue;
      const mpq_class value = mpq_class(m) * step;
      if (value <= low || value >= high) continue;
      const mpq_class distance = abs(value - x);
      // Of two equally close, the even one (Ryu rounds an exact half to even).
      const bool even = mpz_even_p(m.get_mpz_t()) != 0;
      if (!best || distance < best_distance || (distance == best_distance && even)) {
        best = m;
        best_distance = distance;
      }
    }
    if (best) {
      *digits = best->get_str();
      *exponent = e;
      return;
    }
  }
  *digits = "0";  // unreachable: 17 digits always fit
  *exponent = 0;
}

// The shortest digits that read back (ShortestDigits), in PostgreSQL's layout: an exponent form
// when the decimal exponent is below -4 or at least `precision` (15 for float8, 6 for float4).
std::string FloatOutput(double v, bool float4) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  const bool negative = v < 0;
  std::string digits;
  int exponent = 0;
  ShortestDigits(v, float4, &digits, &exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int precision = float4 ? 6 : 15;
  std::string out;
  if (exponent < -4 || exponent >= precision) {
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
          (exponent < 0 ? "-" : "+") + TwoDigits(std::abs(exponent));
  } else if (exponent < 0) {
    out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  } else {
    const std::size_t point = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= point) {
      out = digits + std::string(point - digits.size(), '0');
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
  }
  return negative ? "-" + out : out;
}

Value FloatInput(std::string_view raw, bool float4) {
  const pb::ScalarType type = float4 ? pb::FLOAT32 : pb::FLOAT64;
  std::string s(Trim(raw));
  const std::string l = Lower(s);
  if (l == "nan" || l == "+nan" || l == "-nan") {
    return Value::Of(std::numeric_limits<double>::quiet_NaN());
  }
  if (l == "infinity" || l == "+infinity" || l == "inf" || l == "+inf") {
    return Value::Of(std::numeric_limits<double>::infinity());
  }
  if (l == "-infinity" || l == "-inf") return Value::Of(-std::numeric_limits<double>::infinity());
  if (s.empty() || l.find_first_not_of("0123456789.e+-") != std::string::npos ||
      l.find("0x") != std::string::npos) {
    return Syntax(type, raw);
  }
  char* end = nullptr;
  errno = 0;
  const double v =
      float4 ? static_cast<double>(std::strtof(s.c_str(), &end)) : std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return Syntax(type, raw);
  if (errno == ERANGE && (std::isinf(v) || v == 0)) {
    return Value::Error("\"" + s + "\" is out of range for type " + SqlName(type));
  }
  return Value::Of(v);
}

// ---- integers

Value IntInput(std::string_view raw, pb::ScalarType type) {
  std::string_view s = Trim(raw);
  std::size_t i = 0;
  bool minus = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) minus = s[i++] == '-';
  if (i >= s.size()) return Syntax(type, raw);
  mpz_class v = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return Syntax(type, raw);
    v = v * 10 + (s[i] - '0');
  }
  if (minus) v = -v;
  const IntRange range = RangeOf(type);
  if (v < mpz_class(static_cast<long>(range.min)) || v > mpz_class(static_cast<long>(range.max))) {
    return Value::Error("value \"" + std::string(s) + "\" is out of range for type " +
                        SqlName(type));
  }
  return Value::Of(static_cast<std::int64_t>(v.get_si()));
}

Value IntOfRational(const mpz_class& v, pb::ScalarType type) {
  const IntRange range = RangeOf(type);
  if (v < mpz_class(static_cast<long>(range.min)) || v > mpz_class(static_cast<long>(range.max))) {
    return Value::Error(range.words);
  }
  return Value::Of(static_cast<std::int64_t>(v.get_si()));
}

// A float's value rounded half to even (rint), into an integer type.
Value IntOfFloat(double v, pb::ScalarType type) {
  const IntRange range = RangeOf(type);
  if (std::isnan(v) || std::isinf(v)) return Value::Error(range.words);
  return IntOfRational(mpz_class(std::nearbyint(v)), type);
}

// ---- numerics

Value NumericOfFloat(double v, bool float4) {
  if (std::isnan(v)) return Value::Error("cannot convert NaN to numeric");
  if (std::isinf(v)) return Value::Error("cannot convert infinity to numeric");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", float4 ? 6 : 15, v);
  return NumericInput(buf);
}

double DoubleOfNumeric(const Numeric& n, bool float4) {
  const std::string text = NumericOutput(n);
  return float4 ? static_cast<double>(std::strtof(text.c_str(), nullptr))
                : std::strtod(text.c_str(), nullptr);
}

Value ApplyNumericTypmod(const Numeric& n, const pb::Column& to) {
  if (to.precision() == 0) return Value::Of(n);
  const int scale = static_cast<int>(to.scale());
  const mpz_class rounded = RoundHalfAway(NumericToRational(n) * PowerOfTen(scale));
  if (abs(rounded) >= PowerOfTen(static_cast<int>(to.precision()))) {
    return Value::Error("numeric field overflow");
  }
  return NumericOfRational(mpq_class(rounded, PowerOfTen(scale)), scale);
}

std::size_t Utf8Length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The first `chars` characters of s.
std::string Utf8Prefix(std::string_view s, std::size_t chars) {
  std::size_t seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == chars) break;
      ++seen;
    }
  }
  return std::string(s.substr(0, i));
}

Value ApplyStringTypmod(const std::string& s, const pb::Column& to) {
  if (to.length() == 0) return Value::Of(s);
  const std::size_t n = to.length();
  std::string out = Utf8Prefix(s, n);
  if (to.blank_padded()) {
    // char(n): blanks at the end are not significant; pad to n characters.
    const std::size_t have = Utf8Length(out);
    if (have < n) out += std::string(n - have, ' ');
  }
  return Value::Of(out);
}

Value ApplyTypmod(const Datum& v, const pb::Column& to) {
  if (const auto* n = std::get_if<Numeric>(&v)) return ApplyNumericTypmod(*n, to);
  if (const auto* s = std::get_if<std::string>(&v)) return ApplyStringTypmod(*s, to);
  return Value::Of(v);
}

Value ByteaInput(std::string_view s) {
  std::string out;
  if (s.size() >= 2 && s[0] == '\\' && (s[1] == 'x' || s[1] == 'X')) {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    for (std::size_t i = 2; i < s.size();) {
      if (std::isspace(static_cast<unsigned char>(s[i]))) {
        ++i;
        continue;
      }
      const int hi = hex(s[i]);
      if (hi < 0) {
        return Value::Error("invalid hexadecimal digit: \"" + std::string(1, s[i]) + "\"");
      }
      if (i + 1 >= s.size()) return Value::Error("invalid hexadecimal data: odd number of digits");
      const int lo = hex(s[i + 1]);
      if (lo < 0) {
        return Value::Error("invalid hexadecimal digit: \"" + std::string(1, s[i + 1]) + "\"");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    return Value::Of(Bytes{out});
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
    } else if (i + 1 < s.size() && s[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (i + 3 < s.size() + 0 && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
               s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      return Syntax(pb::BYTEA, s);
    }
  }
  return Value::Of(Bytes{out});
}

std::string ByteaOutput(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Value UuidInput(std::string_view raw) {
  std::string_view s = Trim(raw);
  if (!s.empty() && s.front() == '{') {
    if (s.back() != '}') return Syntax(pb::UUID, raw);
    s = s.substr(1, s.size() - 2);
  }
  Uuid out;
  std::size_t nibbles = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (v < 0) {
      // A hyphen only after a group of four digits, never two in a row, never last.
      if (c != '-' || nibbles % 4 != 0 || nibbles == 0 || i + 1 == s.size() || s[i + 1] == '-') {
        return Syntax(pb::UUID, raw);
      }
      continue;
    }
    if (nibbles >= 32) return Syntax(pb::UUID, raw);
    out.bytes[nibbles / 2] = static_cast<std::uint8_t>(out.bytes[nibbles / 2] * 16 + v);
    ++nibbles;
  }
  if (nibbles != 32) return Syntax(pb::UUID, raw);
  return Value::Of(out);
}

std::string UuidOutput(const Uuid& u) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[u.bytes[i] >> 4];
    out += kHex[u.bytes[i] & 15];
  }
  return out;
}

Value BoolInput(std::string_view raw) {
  const std::string s = Lower(Trim(raw));
  auto prefix_of = [&](std::string_view word) {
    return !s.empty() && s.size() <= word.size() && word.substr(0, s.size()) == s;
  };
  if (prefix_of("true") || prefix_of("yes") || s == "on" || s == "1") return Value::Of(true);
  if (prefix_of("false") || prefix_of("no") || s == "off" || s == "of" || s == "0") {
    return Value::Of(false);
  }
  return Syntax(pb::BOOL, raw);
}

// ---- date and time arithmetic

Value TimestampOf(Int128 micros) {
  if (!TimestampInRange(micros)) return Value::Error(kTimestampRange);
  return Value::Of(Timestamp{static_cast<std::int64_t>(micros)});
}

Value DateToTimestampMicros(std::int64_t days, Int128* micros) {
  *micros = static_cast<Int128>(days) * kMicrosPerDayRef;
  if (!TimestampInRange(*micros)) return Value::Error("date out of range for timestamp");
  return Value::Of(Null{});
}

// PostgreSQL's timestamp + interval: the months (the day clamped to the month's last), then the
// days, then the microseconds, each step a valid timestamp.
std::optional<Int128> AddInterval(std::int64_t micros, const Interval& span) {
  Int128 t = micros;
  if (span.months != 0) {
    const std::int64_t days = FloorDiv(micros, kMicrosPerDayRef);
    const std::int64_t clock = micros - days * kMicrosPerDayRef;
    const Civil c = CivilOfDays(days);
    const std::int64_t month_index = c.year * 12 + (c.month - 1) + span.months;
    const std::int64_t year = FloorDiv(month_index, 12);
    const unsigned month = static_cast<unsigned>(month_index - year * 12 + 1);
    const unsigned day = std::min(c.day, DaysInMonth(year, month));
    t = static_cast<Int128>(DaysOfCivil(year, month, day)) * kMicrosPerDayRef + clock;
    if (!TimestampInRange(t)) return std::nullopt;
  }
  t += static_cast<Int128>(span.days) * kMicrosPerDayRef;
  if (!TimestampInRange(t)) return std::nullopt;
  t += span.micros;
  if (!TimestampInRange(t)) return std::nullopt;
  return t;
}

Value IntervalOf(Int128 months, Int128 days, Int128 micros) {
  constexpr Int128 kI32Min = std::numeric_limits<std::int32_t>::min();
  constexpr Int128 kI32Max = std::numeric_limits<std::int32_t>::max();
  if (months < kI32Min || months > kI32Max || days < kI32Min || days > kI32Max ||
      !FitsInt64(micros)) {
    return Value::Error(kIntervalRange);
  }
  return Value::Of(Interval{static_cast<std::int32_t>(months), static_cast<std::int32_t>(days),
                            static_cast<std::int64_t>(micros)});
}

Interval Negated(const Interval& i, bool negate) {
  if (!negate) return i;
  return Interval{-i.months, -i.days, -i.micros};  // REQUIRES: checked by the caller
}

bool NegatableInterval(const Interval& i) {
  return i.months != std::numeric_limits<std::int32_t>::min() &&
         i.days != std::numeric_limits<std::int32_t>::min() &&
         i.micros != std::numeric_limits<std::int64_t>::min();
}

// timestamp - timestamp: the microseconds, whole days moved into days (justify_hours).
Value TimestampDifference(std::int64_t a, std::int64_t b) {
  const Int128 diff = static_cast<Int128>(a) - b;
  if (!FitsInt64(diff)) return Value::Error(kIntervalRange);
  Int128 days = diff / kMicrosPerDayRef;
  Int128 micros = diff % kMicrosPerDayRef;
  if (days > 0 && micros < 0) {
    micros += kMicrosPerDayRef;
    --days;
  } else if (days < 0 && micros > 0) {
    micros -= kMicrosPerDayRef;
    ++days;
  }
  return IntervalOf(0, days, micros);
}

std::int64_t WrapClock(Int128 micros) {
  Int128 r = micros % kMicrosPerDayRef;
  if (r < 0) r += kMicrosPerDayRef;
  return static_cast<std::int64_t>(r);
}

double TsRound(double v) { return std::nearbyint(v * 1e6) / 1e6; }

// interval_mul / interval_div of PostgreSQL 15: months and days scaled and truncated; their
// fractions cascade down (months as 30 days, days as 86400 s, each rounded to 1e-6).
Value ScaleInterval(const Interval& span, double factor, bool divide) {
  auto scaled = [&](double v) { return divide ? v / factor : v * factor; };
  const double m = scaled(static_cast<double>(span.months));
  const double d = scaled(static_cast<double>(span.days));
  auto fits32 = [](double v) {
    return !std::isnan(v) && v <= static_cast<double>(std::numeric_limits<std::int32_t>::max()) &&
           v >= static_cast<double>(std::numeric_limits<std::int32_t>::min());
  };
  if (!fits32(m) || !fits32(d)) return Value::Error(kIntervalRange);
  const std::int32_t months = static_cast<std::int32_t>(m);
  Int128 days = static_cast<std::int32_t>(d);
  double month_remainder_days = TsRound((m - months) * 30.0);
  double sec_remainder =
      TsRound((d - static_cast<double>(days) + month_remainder_days -
               static_cast<double>(static_cast<std::int64_t>(month_remainder_days))) *
              86400.0);
  if (std::fabs(sec_remainder) >= 86400.0) {
    const std::int64_t whole = static_cast<std::int64_t>(sec_remainder / 86400.0);
    days += whole;
    sec_remainder -= static_cast<double>(whole) * 86400.0;
  }
  days += static_cast<std::int64_t>(month_remainder_days);
  const double micros =
      std::nearbyint(scaled(static_cast<double>(span.micros)) + sec_remainder * 1e6);
  if (std::isnan(micros) || micros >= 9223372036854775808.0 || micros < -9223372036854775808.0) {
    return Value::Error(kIntervalRange);
  }
  return IntervalOf(months, days, static_cast<Int128>(static_cast<std::int64_t>(micros)));
}

Value NumericArith(pb::BinaryFunc func, const Numeric& a, const Numeric& b) {
  const mpq_class x = NumericToRational(a), y = NumericToRational(b);
  const int sa = a.scale, sb = b.scale;
  switch (func) {
    case pb::ADD:
      return NumericOfRational(x + y, std::max(sa, sb));
    case pb::SUB:
      return NumericOfRational(x - y, std::max(sa, sb));
    case pb::MUL:
      return NumericOfRational(x * y, sa + sb);
    case pb::DIV:
      if (y == 0) return Value::Error(kDivByZero);
      return NumericOfRational(x / y, DivScale(x, sa, y, sb));
    case pb::MOD: {
      if (y == 0) return Value::Error(kDivByZero);
      const mpq_class q(Truncate(x / y));
      return NumericOfRational(x - q * y, std::max(sa, sb));
    }
    default:
      return Value::Error("reference: type error in numeric arithmetic");
  }
}

Value IntArith(pb::BinaryFunc func, std::int64_t a, std::int64_t b, pb::ScalarType type) {
  // Exact, then judged against the type: int2 and int4 give PostgreSQL's words, int64 the
  // runtime's ("integer overflow").
  const Int128 x = a, y = b;
  Int128 r = 0;
  switch (func) {
    case pb::ADD:
      r = x + y;
      break;
    case pb::SUB:
      r = x - y;
      break;
    case pb::MUL:
      r = x * y;
      break;
    case pb::DIV:
      if (y == 0) return Value::Error(kDivByZero);
      r = x / y;
      break;
    case pb::MOD:
      if (y == 0) return Value::Error(kDivByZero);
      r = x % y;
      break;
    default:
      return Value::Error("reference: type error in integer arithmetic");
  }
  const IntRange range = RangeOf(type);
  if (r < range.min || r > range.max) {
    return Value::Error(type == pb::INT64 ? kIntOverflow : range.words);
  }
  return Value::Of(static_cast<std::int64_t>(r));
}

Value FloatArith(pb::BinaryFunc func, double a, double b, bool float4) {
  if ((func == pb::DIV || func == pb::MOD) && b == 0.0) return Value::Error(kDivByZero);
  if (float4) {
    const float x = static_cast<float>(a), y = static_cast<float>(b);
    switch (func) {
      case pb::ADD:
        return Value::Of(static_cast<double>(x + y));
      case pb::SUB:
        return Value::Of(static_cast<double>(x - y));
      case pb::MUL:
        return Value::Of(static_cast<double>(x * y));
      case pb::DIV:
        return Value::Of(static_cast<double>(x / y));
      case pb::MOD:
        return Value::Of(static_cast<double>(std::fmod(x, y)));
      default:
        break;
    }
  } else {
    switch (func) {
      case pb::ADD:
        return Value::Of(a + b);
      case pb::SUB:
        return Value::Of(a - b);
      case pb::MUL:
        return Value::Of(a * b);
      case pb::DIV:
        return Value::Of(a / b);
      case pb::MOD:
        return Value::Of(std::fmod(a, b));
      default:
        break;
    }
  }
  return Value::Error("reference: type error in float arithmetic");
}

}  // namespace

// ---------------------------------------------------------------------------------------------

pb::Column ColumnOfType(pb::ScalarType type) {
  pb::Column c;
  c.set_type(type);
  c.set_nullable(true);
  return c;
}

pb::ScalarType TypeOfDatum(const Datum& d) {
  switch (d.index()) {
    case 1:
      return pb::BOOL;
    case 2:
      return pb::INT64;
    case 3:
      return pb::FLOAT64;
    case 4:
      return pb::STRING;
    case 5:
      return pb::NUMERIC;
    case 6:
      return pb::BYTEA;
    case 7:
      return pb::DATE;
    case 8:
      return pb::TIME;
    case 9:
      return pb::TIMESTAMP;
    case 10:
      return pb::TIMESTAMPTZ;
    case 11:
      return pb::INTERVAL;
    case 12:
      return pb::UUID;
    default:
      return pb::SCALAR_TYPE_UNSPECIFIED;
  }
}

pb::Column TypeOf(const pb::ScalarExpr& expr, const Row& row, const Types& types) {
  switch (expr.kind_case()) {
    case pb::ScalarExpr::kColumn: {
      const std::size_t c = expr.column();
      if (c < types.size()) return types[c];
      return ColumnOfType(c < row.size() ? TypeOfDatum(row[c]) : pb::SCALAR_TYPE_UNSPECIFIED);
    }
    case pb::ScalarExpr::kLiteral: {
      const pb::ScalarType t = expr.literal().type();
      if (t != pb::SCALAR_TYPE_UNSPECIFIED) return ColumnOfType(t);
      return ColumnOfType(TypeOfDatum(FromProto(expr.literal().value())));
    }
    case pb::ScalarExpr::kUnary:
      if (expr.unary().func() == pb::NEGATE) {
        return ColumnOfType(TypeOf(expr.unary().expr(), row, types).type());
      }
      return ColumnOfType(pb::BOOL);
    case pb::ScalarExpr::kBinary: {
      const auto& b = expr.binary();
      switch (b.func()) {
        case pb::ADD:
        case pb::SUB:
        case pb::MUL:
        case pb::DIV:
        case pb::MOD:
          break;
        default:
          return ColumnOfType(pb::BOOL);
      }
      const pb::ScalarType l = TypeOf(b.left(), row, types).type();
      const pb::ScalarType r = TypeOf(b.right(), row, types).type();
      auto either = [&](pb::ScalarType t) { return l == t || r == t; };
      if (l == pb::DATE && r == pb::DATE) return ColumnOfType(pb::INT32);
      if (either(pb::DATE) && (either(pb::INT32))) return ColumnOfType(pb::DATE);
      if (either(pb::DATE)) return ColumnOfType(pb::TIMESTAMP);  // ± interval, + time
      if (l == r && (l == pb::TIMESTAMP || l == pb::TIMESTAMPTZ || l == pb::TIME)) {
        return ColumnOfType(pb::INTERVAL);
      }
      if (either(pb::TIMESTAMP)) return ColumnOfType(pb::TIMESTAMP);
      if (either(pb::TIMESTAMPTZ)) return ColumnOfType(pb::TIMESTAMPTZ);
      if (either(pb::TIME)) return ColumnOfType(pb::TIME);
      if (either(pb::INTERVAL)) return ColumnOfType(pb::INTERVAL);
      return ColumnOfType(l != pb::SCALAR_TYPE_UNSPECIFIED ? l : r);
    }
    case pb::ScalarExpr::kIfThenElse: {
      pb::Column t = TypeOf(expr.if_then_else().then(), row, types);
      if (t.type() != pb::SCALAR_TYPE_UNSPECIFIED) return t;
      return TypeOf(expr.if_then_else().els(), row, types);
    }
    case pb::ScalarExpr::kCast: {
      pb::Column t = expr.cast().to();
      t.set_nullable(true);
      return t;
    }
    case pb::ScalarExpr::kNow:  // the time itself, as temporal.h puts it in
      return ColumnOfType(pb::TIMESTAMPTZ);
    case pb::ScalarExpr::kCall: {
      const auto& call = expr.call();
      switch (call.func()) {
        case pb::COALESCE:
        case pb::NULLIF:
        case pb::GREATEST:
        case pb::LEAST:
          for (const auto& arg : call.args()) {
            pb::Column t = TypeOf(arg, row, types);
            if (t.type() != pb::SCALAR_TYPE_UNSPECIFIED) return t;
          }
          return ColumnOfType(pb::SCALAR_TYPE_UNSPECIFIED);
        case pb::CONCAT:  // text || text, bytea || bytea
          return TypeOf(call.args(0), row, types);
        case pb::LOWER:
        case pb::UPPER:
        case pb::SUBSTR:
        case pb::BTRIM:
        case pb::LTRIM:
        case pb::RTRIM:
        case pb::REPLACE:
          return ColumnOfType(pb::STRING);
        case pb::CHAR_LENGTH:
        case pb::STRPOS:
        case pb::OCTET_LENGTH:
          return ColumnOfType(pb::INT32);
        case pb::LIKE:
        case pb::ILIKE:
          return ColumnOfType(pb::BOOL);
        case pb::ABS:
        case pb::ROUND:
        case pb::TRUNC:
        case pb::FLOOR:
        case pb::CEIL:
        case pb::POWER:
        case pb::SQRT:
          if (call.args_size() == 0) return ColumnOfType(pb::SCALAR_TYPE_UNSPECIFIED);
          return ColumnOfType(TypeOf(call.args(0), row, types).type());
        case pb::DATE_TRUNC:
          if (call.args_size() < 2) return ColumnOfType(pb::SCALAR_TYPE_UNSPECIFIED);
          return ColumnOfType(TypeOf(call.args(1), row, types).type());
        case pb::EXTRACT:
          return ColumnOfType(pb::NUMERIC);
        case pb::DATE_PART:
          return ColumnOfType(pb::FLOAT64);
        default:
          return ColumnOfType(pb::SCALAR_TYPE_UNSPECIFIED);
      }
    }
    case pb::ScalarExpr::KIND_NOT_SET:
      break;
  }
  return ColumnOfType(pb::SCALAR_TYPE_UNSPECIFIED);
}

pb::Column AggregateType(pb::AggregateFunc func, const pb::Column& input) {
  switch (func) {
    case pb::COUNT:
    case pb::COUNT_NON_NULL:
    case pb::COUNT_DISTINCT:
      return ColumnOfType(pb::INT64);
    case pb::ANY:
    case pb::ALL:
      return ColumnOfType(pb::BOOL);
    case pb::SUM:
      if (IsInt(input.type())) return ColumnOfType(pb::INT64);
      return ColumnOfType(input.type());
    case pb::AVG:
      if (input.type() == pb::NUMERIC || input.type() == pb::INTERVAL) {
        return ColumnOfType(input.type());
      }
      return ColumnOfType(pb::FLOAT64);
    case pb::MIN:
    case pb::MAX: {
      pb::Column out = input;
      out.set_nullable(true);
      return out;
    }
    default:
      return ColumnOfType(pb::SCALAR_TYPE_UNSPECIFIED);
  }
}

mpq_class NumericToRational(const Numeric& n) {
  const Int128 c =
      static_cast<Int128>((static_cast<UInt128>(static_cast<std::uint64_t>(n.hi)) << 64) | n.lo);
  mpq_class q(ToMpz(c), PowerOfTen(n.scale));
  q.canonicalize();
  return q;
}

Value NumericOfRational(const mpq_class& value, int scale) {
  mpq_class v = value;
  v.canonicalize();  // GMP's arithmetic wants canonical operands; callers may pass n/10^s
  scale = std::clamp(scale, 0, kMaxScale);
  const mpz_class c = RoundHalfAway(v * PowerOfTen(scale));
  if (abs(c) >= PowerOfTen(kMaxScale)) return Value::Error(kNumericOverflow);
  const Int128 coefficient = ToInt128(c);
  Numeric n;
  n.lo = static_cast<std::uint64_t>(static_cast<UInt128>(coefficient));
  n.hi = static_cast<std::int64_t>(coefficient >> 64);
  n.scale = static_cast<std::uint8_t>(scale);
  return Value::Of(n);
}

int DivScale(const mpq_class& a, int a_scale, const mpq_class& b, int b_scale) {
  // The weight of a value: w with 10000^w <= |v| < 10000^(w+1); its first base-10000 digit:
  // floor(|v| / 10000^w). Zero has weight 0 and first digit 0.
  auto weigh = [](const mpq_class& v, int* weight, mpz_class* first) {
    *weight = 0;
    *first = 0;
    if (v == 0) return;
    const mpq_class m = abs(v);
    mpq_class unit = 1;
    while (m >= unit * 10000) {
      unit *= 10000;
      ++*weight;
    }
    while (m < unit) {
      unit /= 10000;
      --*weight;
    }
    *first = Truncate(m / unit);
  };
  int wa = 0, wb = 0;
  mpz_class fa, fb;
  weigh(a, &wa, &fa);
  weigh(b, &wb, &fb);
  int qweight = wa - wb;
  if (fa <= fb) --qweight;  // equal first digits: assumed a < b, as PostgreSQL does
  int scale = 16 - qweight * 4;
  scale = std::max({scale, a_scale, b_scale, 0});
  return std::min(scale, kMaxScale);
}

std::string NumericOutput(const Numeric& n) {
  const Int128 c =
      static_cast<Int128>((static_cast<UInt128>(static_cast<std::uint64_t>(n.hi)) << 64) | n.lo);
  const mpz_class v = ToMpz(c);
  std::string digits = mpz_class(abs(v)).get_str();
  const std::size_t scale = n.scale;
  if (digits.size() <= scale) digits = std::string(scale - digits.size() + 1, '0') + digits;
  std::string out = scale == 0 ? digits
                               : digits.substr(0, digits.size() - scale) + "." +
                                     digits.substr(digits.size() - scale);
  return v < 0 ? "-" + out : out;
}

Value NumericInput(std::string_view raw) {
  std::string_view s = Trim(raw);
  std::size_t i = 0;
  bool minus = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) minus = s[i++] == '-';
  std::string whole, frac;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) whole += s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) frac += s[i++];
  }
  if (whole.empty() && frac.empty()) return Syntax(pb::NUMERIC, raw);
  long exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eminus = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) eminus = s[i++] == '-';
    std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (exponent > 100000) return Value::Error(kNumericOverflow);
      exponent = exponent * 10 + (s[i++] - '0');
    }
    if (i == start) return Syntax(pb::NUMERIC, raw);
    if (eminus) exponent = -exponent;
  }
  if (i != s.size()) return Syntax(pb::NUMERIC, raw);
  if (exponent > 1000 || exponent < -1000) return Value::Error(kNumericOverflow);
  const long scale = std::max(0L, static_cast<long>(frac.size()) - exponent);
  mpq_class v(mpz_class(whole + frac, 10), PowerOfTen(static_cast<int>(frac.size())));
  v.canonicalize();
  if (exponent >= 0) {
    v *= PowerOfTen(static_cast<int>(exponent));
  } else {
    v /= PowerOfTen(static_cast<int>(-exponent));
  }
  if (minus) v = -v;
  return NumericOfRational(v, static_cast<int>(std::min(scale, 1000L)));
}

Int128 IntervalSpanMicros(const Interval& i) {
  return (static_cast<Int128>(i.months) * 30 + i.days) * kMicrosPerDayRef + i.micros;
}

Value IntervalMulFloat(const Interval& i, double factor) { return ScaleInterval(i, factor, false); }

Value IntervalDivFloat(const Interval& i, double divisor) {
  if (divisor == 0.0) return Value::Error(kDivByZero);
  return ScaleInterval(i, divisor, true);
}

int CompareValues(const Datum& a, const Datum& b) {
  if (const auto* x = std::get_if<Numeric>(&a)) {
    const int c = cmp(NumericToRational(*x), NumericToRational(std::get<Numeric>(b)));
    return (c > 0) - (c < 0);
  }
  if (const auto* x = std::get_if<Interval>(&a)) {
    const Int128 p = IntervalSpanMicros(*x), q = IntervalSpanMicros(std::get<Interval>(b));
    return (p > q) - (p < q);
  }
  return OrderDatums(a, b);
}

Value NegateValue(const Datum& v, pb::ScalarType type) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    return IntArith(pb::SUB, 0, *i, IsInt(type) ? type : pb::INT64);
  }
  if (const auto* f = std::get_if<double>(&v)) return Value::Of(-*f);
  if (const auto* n = std::get_if<Numeric>(&v)) {
    return NumericOfRational(-NumericToRational(*n), n->scale);
  }
  if (const auto* i = std::get_if<Interval>(&v)) {
    if (!NegatableInterval(*i)) return Value::Error(kIntervalRange);
    return Value::Of(Negated(*i, true));
  }
  return Value::Error("reference: type error in NEGATE");
}

Value Arithmetic(pb::BinaryFunc func, const Datum& l, pb::ScalarType lt, const Datum& r,
                 pb::ScalarType rt) {
  const bool add = func == pb::ADD, sub = func == pb::SUB;
  if (lt == pb::SCALAR_TYPE_UNSPECIFIED) lt = TypeOfDatum(l);
  if (rt == pb::SCALAR_TYPE_UNSPECIFIED) rt = TypeOfDatum(r);
  if (IsInt(lt) && IsInt(rt) && std::holds_alternative<std::int64_t>(l) &&
      std::holds_alternative<std::int64_t>(r)) {
    return IntArith(func, std::get<std::int64_t>(l), std::get<std::int64_t>(r),
                    lt == rt ? lt : pb::INT64);
  }
  if (IsFloat(lt) && IsFloat(rt)) {
    return FloatArith(func, std::get<double>(l), std::get<double>(r),
                      lt == pb::FLOAT32 && rt == pb::FLOAT32);
  }
  if (lt == pb::NUMERIC && rt == pb::NUMERIC) {
    return NumericArith(func, std::get<Numeric>(l), std::get<Numeric>(r));
  }
  // DATE with INT32 (days), DATE - DATE.
  if (lt == pb::DATE && rt == pb::DATE && sub) {
    return Value::Of(static_cast<std::int64_t>(std::get<Date>(l).days) - std::get<Date>(r).days);
  }
  if ((lt == pb::DATE && IsInt(rt) && (add || sub)) || (IsInt(lt) && rt == pb::DATE && add)) {
    const std::int64_t days = lt == pb::DATE ? std::get<Date>(l).days : std::get<Date>(r).days;
    std::int64_t n = lt == pb::DATE ? std::get<std::int64_t>(r) : std::get<std::int64_t>(l);
    const std::int64_t out = sub ? days - n : days + n;
    if (out < kMinDays || out > kMaxDays) return Value::Error(kDateRange);
    return Value::Of(Date{static_cast<std::int32_t>(out)});
  }
  // DATE + TIME (either order).
  if ((lt == pb::DATE && rt == pb::TIME) || (lt == pb::TIME && rt == pb::DATE)) {
    if (!add) return Value::Error("reference: type error in date arithmetic");
    const Date d = lt == pb::DATE ? std::get<Date>(l) : std::get<Date>(r);
    const TimeOfDay t = lt == pb::TIME ? std::get<TimeOfDay>(l) : std::get<TimeOfDay>(r);
    Int128 micros = 0;
    if (Value v = DateToTimestampMicros(d.days, &micros); v.is_error()) return v;
    return TimestampOf(micros + t.micros);
  }
  // Timestamps, timestamptz and dates with an interval.
  const bool l_instant = lt == pb::DATE || lt == pb::TIMESTAMP || lt == pb::TIMESTAMPTZ;
  const bool r_instant = rt == pb::DATE || rt == pb::TIMESTAMP || rt == pb::TIMESTAMPTZ;
  if ((l_instant && rt == pb::INTERVAL && (add || sub)) ||
      (lt == pb::INTERVAL && r_instant && add)) {
    const Datum& instant = l_instant ? l : r;
    const pb::ScalarType it = l_instant ? lt : rt;
    Interval span = std::get<Interval>(l_instant ? r : l);
    if (sub) {
      if (!NegatableInterval(span)) return Value::Error(kIntervalRange);
      span = Negated(span, true);
    }
    std::int64_t micros = 0;
    if (it == pb::DATE) {
      Int128 m = 0;
      if (Value v = DateToTimestampMicros(std::get<Date>(instant).days, &m); v.is_error()) {
        return v;
      }
      micros = static_cast<std::int64_t>(m);
    } else {
      micros = it == pb::TIMESTAMP ? std::get<Timestamp>(instant).micros
                                   : std::get<TimestampTz>(instant).micros;
    }
    const std::optional<Int128> out = AddInterval(micros, span);
    if (!out) return Value::Error(kTimestampRange);
    if (it == pb::TIMESTAMPTZ) return Value::Of(TimestampTz{static_cast<std::int64_t>(*out)});
    return Value::Of(Timestamp{static_cast<std::int64_t>(*out)});
  }
  if (lt == rt && sub && lt == pb::TIMESTAMP) {
    return TimestampDifference(std::get<Timestamp>(l).micros, std::get<Timestamp>(r).micros);
  }
  if (lt == rt && sub && lt == pb::TIMESTAMPTZ) {
    return TimestampDifference(std::get<TimestampTz>(l).micros, std::get<TimestampTz>(r).micros);
  }
  if (lt == rt && sub && lt == pb::TIME) {
    return IntervalOf(
        0, 0, static_cast<Int128>(std::get<TimeOfDay>(l).micros) - std::get<TimeOfDay>(r).micros);
  }
  if ((lt == pb::TIME && rt == pb::INTERVAL && (add || sub)) ||
      (lt == pb::INTERVAL && rt == pb::TIME && add)) {
    const TimeOfDay t = lt == pb::TIME ? std::get<TimeOfDay>(l) : std::get<TimeOfDay>(r);
    const Interval& span = std::get<Interval>(lt == pb::INTERVAL ? l : r);
    const Int128 delta = sub ? -static_cast<Int128>(span.micros) : span.micros;
    return Value::Of(TimeOfDay{WrapClock(t.micros + delta)});
  }
  if (lt == pb::INTERVAL && rt == pb::INTERVAL && (add || sub)) {
    const Interval& a = std::get<Interval>(l);
    const Interval& b = std::get<Interval>(r);
    const int sign = add ? 1 : -1;
    return IntervalOf(static_cast<Int128>(a.months) + sign * static_cast<Int128>(b.months),
                      static_cast<Int128>(a.days) + sign * static_cast<Int128>(b.days),
                      static_cast<Int128>(a.micros) + sign * static_cast<Int128>(b.micros));
  }
  if (lt == pb::INTERVAL && IsFloat(rt) && func == pb::MUL) {
    return IntervalMulFloat(std::get<Interval>(l), std::get<double>(r));
  }
  if (IsFloat(lt) && rt == pb::INTERVAL && func == pb::MUL) {
    return IntervalMulFloat(std::get<Interval>(r), std::get<double>(l));
  }
  if (lt == pb::INTERVAL && IsFloat(rt) && func == pb::DIV) {
    return IntervalDivFloat(std::get<Interval>(l), std::get<double>(r));
  }
  return Value::Error("reference: type error in arithmetic");
}

std::string OutputText(const Datum& v, const pb::Column& type) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Null>) {
          return "";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return FloatOutput(x, type.type() == pb::FLOAT32);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, Numeric>) {
          return NumericOutput(x);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return ByteaOutput(x.bytes);
        } else if constexpr (std::is_same_v<T, Date>) {
          bool bc = false;
          std::string out = DateBody(x.days, &bc);
          return bc ? out + " BC" : out;
        } else if constexpr (std::is_same_v<T, TimeOfDay>) {
          return ClockText(x.micros);
        } else if constexpr (std::is_same_v<T, Timestamp>) {
          return TimestampOutput(x.micros, false);
        } else if constexpr (std::is_same_v<T, TimestampTz>) {
          return TimestampOutput(x.micros, true);
        } else if constexpr (std::is_same_v<T, Interval>) {
          return IntervalOutput(x);
        } else {
          return UuidOutput(x);
        }
      },
      v);
}

Value InputText(std::string_view text, const pb::Column& to) {
  Value v;
  switch (to.type()) {
    case pb::BOOL:
      v = BoolInput(text);
      break;
    case pb::INT16:
    case pb::INT32:
    case pb::INT64:
      v = IntInput(text, to.type());
      break;
    case pb::FLOAT32:
    case pb::FLOAT64:
      v = FloatInput(text, to.type() == pb::FLOAT32);
      break;
    case pb::STRING:
      v = Value::Of(std::string(text));
      break;
    case pb::NUMERIC:
      v = NumericInput(text);
      break;
    case pb::BYTEA:
      v = ByteaInput(text);
      break;
    case pb::DATE:
      v = DateInput(text);
      break;
    case pb::TIME:
      v = TimeInput(text);
      break;
    case pb::TIMESTAMP:
      v = TimestampInput(text, false);
      break;
    case pb::TIMESTAMPTZ:
      v = TimestampInput(text, true);
      break;
    case pb::INTERVAL:
      v = IntervalInput(text);
      break;
    case pb::UUID:
      v = UuidInput(text);
      break;
    default:
      return Value::Error("reference: cast to an unknown type");
  }
  if (v.is_error()) return v;
  return ApplyTypmod(v.datum, to);
}

Value CastValue(const Datum& v, const pb::Column& from_column, const pb::Column& to) {
  pb::ScalarType from = from_column.type();
  if (from == pb::SCALAR_TYPE_UNSPECIFIED) from = TypeOfDatum(v);
  const pb::ScalarType t = to.type();
  auto cannot = [&] {
    return Value::Error(std::string("cannot cast type ") + SqlName(from) + " to " + SqlName(t));
  };
  if (t == pb::STRING) return ApplyStringTypmod(OutputText(v, from_column), to);
  if (from == pb::STRING) return InputText(std::get<std::string>(v), to);
  if (from == t && !IsFloat(t)) return ApplyTypmod(v, to);
  if (IsInt(from)) {
    const std::int64_t i = std::get<std::int64_t>(v);
    if (IsInt(t)) return IntOfRational(mpz_class(static_cast<long>(i)), t);
    if (t == pb::FLOAT32) return Value::Of(static_cast<double>(static_cast<float>(i)));
    if (t == pb::FLOAT64) return Value::Of(static_cast<double>(i));
    if (t == pb::NUMERIC) {
      Value n = NumericOfRational(mpq_class(mpz_class(static_cast<long>(i))), 0);
      if (n.is_error()) return n;
      return ApplyNumericTypmod(std::get<Numeric>(n.datum), to);
    }
    if (t == pb::BOOL && from == pb::INT32) return Value::Of(i != 0);
    return cannot();
  }
  if (IsFloat(from)) {
    const double f = std::get<double>(v);
    if (IsInt(t)) {
      return from == pb::FLOAT32 ? IntOfFloat(static_cast<double>(static_cast<float>(f)), t)
                                 : IntOfFloat(f, t);
    }
    if (t == pb::FLOAT64) return Value::Of(f);
    if (t == pb::FLOAT32) {
      const float g = static_cast<float>(f);
      if (std::isinf(g) && !std::isinf(f)) return Value::Error("value out of range: overflow");
      if (g == 0.0f && f != 0.0) return Value::Error("value out of range: underflow");
      return Value::Of(static_cast<double>(g));
    }
    if (t == pb::NUMERIC) {
      Value n = NumericOfFloat(f, from == pb::FLOAT32);
      if (n.is_error()) return n;
      return ApplyNumericTypmod(std::get<Numeric>(n.datum), to);
    }
    return cannot();
  }
  if (from == pb::NUMERIC) {
    const Numeric& n = std::get<Numeric>(v);
    if (IsInt(t)) return IntOfRational(RoundHalfAway(NumericToRational(n)), t);
    if (IsFloat(t)) return Value::Of(DoubleOfNumeric(n, t == pb::FLOAT32));
    return cannot();
  }
  if (from == pb::BOOL && t == pb::INT32) return Value::Of(std::int64_t{std::get<bool>(v)});
  if (from == pb::DATE && (t == pb::TIMESTAMP || t == pb::TIMESTAMPTZ)) {
    Int128 micros = 0;
    if (Value e = DateToTimestampMicros(std::get<Date>(v).days, &micros); e.is_error()) return e;
    if (t == pb::TIMESTAMP) return Value::Of(Timestamp{static_cast<std::int64_t>(micros)});
    return Value::Of(TimestampTz{static_cast<std::int64_t>(micros)});
  }
  if (from == pb::TIMESTAMP || from == pb::TIMESTAMPTZ) {
    const std::int64_t micros =
        from == pb::TIMESTAMP ? std::get<Timestamp>(v).micros : std::get<TimestampTz>(v).micros;
    if (t == pb::TIMESTAMP) return Value::Of(Timestamp{micros});
    if (t == pb::TIMESTAMPTZ) return Value::Of(TimestampTz{micros});
    if (t == pb::DATE) {
      return Value::Of(Date{static_cast<std::int32_t>(FloorDiv(micros, kMicrosPerDayRef))});
    }
    if (t == pb::TIME) return Value::Of(TimeOfDay{WrapClock(micros)});
    return cannot();
  }
  if (from == pb::INTERVAL && t == pb::TIME) {
    return Value::Of(TimeOfDay{WrapClock(std::get<Interval>(v).micros)});
  }
  if (from == pb::TIME && t == pb::INTERVAL) {
    return Value::Of(Interval{0, 0, std::get<TimeOfDay>(v).micros});
  }
  return cannot();
}

// ---- aggregates

Value SumOfTyped(const Multiset& per_value, pb::ScalarType type) {
  if (per_value.empty()) return Value::Of(Null{});
  switch (type) {
    case pb::NUMERIC: {
      mpq_class sum = 0;
      int scale = 0;
      for (const auto& [value, count] : per_value) {
        const Numeric& n = std::get<Numeric>(value[0]);
        sum += NumericToRational(n) * mpq_class(ToMpz(count));
        scale = std::max(scale, static_cast<int>(n.scale));
      }
      return NumericOfRational(sum, scale);
    }
    case pb::INTERVAL: {
      mpz_class months = 0, days = 0, micros = 0;
      for (const auto& [value, count] : per_value) {
        const Interval& i = std::get<Interval>(value[0]);
        const mpz_class c = ToMpz(count);
        months += c * static_cast<long>(i.months);
        days += c * static_cast<long>(i.days);
        micros += c * static_cast<long>(i.micros);
      }
      // Judged on the final value, like int64 SUM.
      const mpz_class limit = mpz_class(1) << 100;
      if (abs(months) > limit || abs(days) > limit || abs(micros) > limit) {
        return Value::Error(kIntervalRange);
      }
      return IntervalOf(ToInt128(months), ToInt128(days), ToInt128(micros));
    }
    case pb::FLOAT32: {
      // Row by row in float64 as for FLOAT64 (ascending values), then rounded to float4.
      double sum = 0;
      for (const auto& [value, count] : per_value) {
        sum += std::get<double>(value[0]) * static_cast<double>(count);
      }
      return Value::Of(static_cast<double>(static_cast<float>(sum)));
    }
    default:
      return Value::Error("reference: type error in SUM");
  }
}

Value AvgOfTyped(const Multiset& per_value, pb::ScalarType type, Count total) {
  Value sum = SumOfTyped(per_value, type);
  if (sum.is_error() || std::holds_alternative<Null>(sum.datum)) return sum;
  if (type == pb::NUMERIC) {
    // numeric_avg: sum / count, the division's scale.
    const Numeric& s = std::get<Numeric>(sum.datum);
    const mpq_class x = NumericToRational(s);
    const mpq_class n(ToMpz(total));
    return NumericOfRational(x / n, DivScale(x, s.scale, n, 0));
  }
  return IntervalDivFloat(std::get<Interval>(sum.datum), static_cast<double>(total));
}

}  // namespace tandem::reference
