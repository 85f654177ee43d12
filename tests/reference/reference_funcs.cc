// The scalar functions of CallFunc (ipc/tandem.proto's Func, the signatures of ipc/func_typing.h)
// for the reference evaluator, from PostgreSQL 15's documentation: strings by UTF-8 characters,
// numerics exact (reference_values.h), dates through std::chrono's calendar.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "reference/reference_values.h"

namespace tandem::reference {
namespace {

constexpr std::int64_t kDayMicros = 86'400'000'000;

bool IsNullDatum(const Datum& d) { return std::holds_alternative<Null>(d); }

// Characters of a UTF-8 string (each one's bytes).
std::vector<std::string> Chars(std::string_view s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 || out.empty()) out.emplace_back();
    out.back() += s[i];
  }
  return out;
}

std::string Join(const std::vector<std::string>& chars, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to && i < chars.size(); ++i) out += chars[i];
  return out;
}

std::string AsciiCase(std::string s, bool upper) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z' && upper) c = static_cast<char>(c - 'a' + 'A');
    if (c >= 'A' && c <= 'Z' && !upper) c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// LIKE over characters, as PostgreSQL's MatchText: % any run, _ one character, \ takes the next
// literally. A pattern that ends in a lone \ is an error only where the match reaches it.
enum class Like { kTrue, kFalse, kAbort, kError };

Like LikeMatch(const std::vector<std::string>& s, std::size_t si, const std::vector<std::string>& p,
               std::size_t pi) {
  while (si < s.size() && pi < p.size()) {
    if (p[pi] == "\\") {
      if (++pi >= p.size()) return Like::kError;
      if (s[si] != p[pi]) return Like::kFalse;
    } else if (p[pi] == "%") {
      ++pi;
      while (pi < p.size()) {
        if (p[pi] == "%") {
          ++pi;
        } else if (p[pi] == "_") {
          if (si >= s.size()) return Like::kAbort;
          ++si;
          ++pi;
        } else {
          break;
        }
      }
      if (pi >= p.size()) return Like::kTrue;
      std::string first = p[pi];
      if (first == "\\") {
        if (pi + 1 >= p.size()) return Like::kError;
        first = p[pi + 1];
      }
      for (; si < s.size(); ++si) {
        if (s[si] == first || p[pi] == "_") {
          const Like r = LikeMatch(s, si, p, pi);
          if (r != Like::kFalse) return r;
        }
      }
      return Like::kAbort;
    } else if (p[pi] != "_" && s[si] != p[pi]) {
      return Like::kFalse;
    }
    ++si;
    ++pi;
  }
  if (si < s.size()) return Like::kFalse;
  while (pi < p.size() && p[pi] == "%") ++pi;
  return pi >= p.size() ? Like::kTrue : Like::kAbort;
}

Value Numeric0(const mpq_class& v, int scale) { return NumericOfRational(v, scale); }

mpz_class FloorQ(const mpq_class& v) {
  mpz_class q;
  mpz_fdiv_q(q.get_mpz_t(), v.get_num_mpz_t(), v.get_den_mpz_t());
  return q;
}
mpz_class CeilQ(const mpq_class& v) {
  mpz_class q;
  mpz_cdiv_q(q.get_mpz_t(), v.get_num_mpz_t(), v.get_den_mpz_t());
  return q;
}
mpz_class TruncQ(const mpq_class& v) {
  mpz_class q;
  mpz_tdiv_q(q.get_mpz_t(), v.get_num_mpz_t(), v.get_den_mpz_t());
  return q;
}
mpz_class RoundQ(const mpq_class& v) {
  mpq_class half(1, 2);
  return v < 0 ? mpz_class(-FloorQ(-v + half)) : FloorQ(v + half);
}

mpz_class Pow10(int n) {
  mpz_class out;
  mpz_ui_pow_ui(out.get_mpz_t(), 10, static_cast<unsigned long>(n));
  return out;
}

// round/trunc(numeric, s): at 10^-s, s may be negative; the result's scale is max(s, 0).
Value RoundNumeric(const Numeric& n, std::int64_t s, bool truncate) {
  s = std::clamp<std::int64_t>(s, -1000, 1000);
  const mpq_class v = NumericToRational(n);
  mpq_class unit =
      s >= 0 ? mpq_class(1, Pow10(static_cast<int>(s))) : mpq_class(Pow10(static_cast<int>(-s)));
  unit.canonicalize();
  const mpq_class units = v / unit;
  const mpz_class whole = truncate ? TruncQ(units) : RoundQ(units);
  return Numeric0(mpq_class(whole) * unit, static_cast<int>(std::max<std::int64_t>(s, 0)));
}

// The unit names PostgreSQL takes, its plurals and abbreviations folded to one word.
std::string Unit(std::string_view raw) {
  std::string u;
  for (char c : raw) u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Alias {
    const char* name;
    const char* unit;
  };
  static constexpr Alias kAliases[] = {{"microsecond", "microseconds"},
                                       {"microseconds", "microseconds"},
                                       {"us", "microseconds"},
                                       {"usec", "microseconds"},
                                       {"usecs", "microseconds"},
                                       {"millisecond", "milliseconds"},
                                       {"milliseconds", "milliseconds"},
                                       {"ms", "milliseconds"},
                                       {"msec", "milliseconds"},
                                       {"msecs", "milliseconds"},
                                       {"second", "second"},
                                       {"seconds", "second"},
                                       {"sec", "second"},
                                       {"secs", "second"},
                                       {"s", "second"},
                                       {"minute", "minute"},
                                       {"minutes", "minute"},
                                       {"min", "minute"},
                                       {"mins", "minute"},
                                       {"m", "minute"},
                                       {"hour", "hour"},
                                       {"hours", "hour"},
                                       {"h", "hour"},
                                       {"hr", "hour"},
                                       {"hrs", "hour"},
                                       {"day", "day"},
                                       {"days", "day"},
                                       {"d", "day"},
                                       {"week", "week"},
                                       {"weeks", "week"},
                                       {"w", "week"},
                                       {"month", "month"},
                                       {"months", "month"},
                                       {"mon", "month"},
                                       {"mons", "month"},
                                       {"quarter", "quarter"},
                                       {"qtr", "quarter"},
                                       {"year", "year"},
                                       {"years", "year"},
                                       {"y", "year"},
                                       {"yr", "year"},
                                       {"yrs", "year"},
                                       {"decade", "decade"},
                                       {"decades", "decade"},
                                       {"dec", "decade"},
                                       {"century", "century"},
                                       {"centuries", "century"},
                                       {"c", "century"},
                                       {"cent", "century"},
                                       {"millennium", "millennium"},
                                       {"millennia", "millennium"},
                                       {"mil", "millennium"},
                                       {"mils", "millennium"},
                                       {"epoch", "epoch"},
                                       {"dow", "dow"},
                                       {"isodow", "isodow"},
                                       {"doy", "doy"},
                                       {"isoyear", "isoyear"},
                                       {"julian", "julian"},
                                       {"j", "julian"},
                                       {"timezone", "timezone"},
                                       {"timezone_hour", "timezone_hour"},
                                       {"timezone_minute", "timezone_minute"}};
  for (const auto& a : kAliases) {
    if (u == a.name) return a.unit;
  }
  return "";
}

std::int64_t FloorDivide(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

struct Fields {
  std::int64_t year = 0;  // astronomical
  unsigned month = 1, day = 1;
  std::int64_t days = 0;   // since 1970-01-01
  std::int64_t clock = 0;  // microseconds of the day
};

// A day (any date: up to 5874897 AD, beyond int64 microseconds) and a time of day.
Fields FieldsOfDay(std::int64_t days, std::int64_t clock) {
  Fields f;
  f.days = days;
  f.clock = clock;
  const std::int64_t cycles = FloorDivide(f.days, 146'097);
  const std::chrono::year_month_day ymd{
      std::chrono::sys_days{std::chrono::days{f.days - cycles * 146'097}}};
  f.year = static_cast<int>(ymd.year()) + 400 * cycles;
  f.month = static_cast<unsigned>(ymd.month());
  f.day = static_cast<unsigned>(ymd.day());
  return f;
}

Fields FieldsOf(std::int64_t micros) {
  const std::int64_t days = FloorDivide(micros, kDayMicros);
  return FieldsOfDay(days, micros - days * kDayMicros);
}

std::int64_t DaysOf(std::int64_t year, unsigned month, unsigned day) {
  const std::int64_t cycles = FloorDivide(year - 1970, 400);
  const std::chrono::sys_days d{std::chrono::year{static_cast<int>(year - 400 * cycles)} /
                                std::chrono::month{month} / std::chrono::day{day}};
  return d.time_since_epoch().count() + cycles * 146'097;
}

unsigned IsoDow(std::int64_t days) {
  const std::int64_t rest = days - FloorDivide(days, 146'097) * 146'097;
  return std::chrono::weekday{std::chrono::sys_days{std::chrono::days{rest}}}.iso_encoding();
}

// ISO 8601 week-numbering year and week of a day.
void IsoWeek(std::int64_t days, std::int64_t* iso_year, std::int64_t* week) {
  // The Thursday of the day's week decides the year.
  const std::int64_t thursday = days - IsoDow(days) + 4;
  const Fields t = FieldsOfDay(thursday, 0);
  *iso_year = t.year;
  *week = (thursday - DaysOf(t.year, 1, 1)) / 7 + 1;
}

// PostgreSQL's year number of an astronomical year: no year 0 (1 BC is -1).
std::int64_t SqlYear(std::int64_t year) { return year > 0 ? year : year - 1; }

Value UnitError(std::string_view raw, const char* type, bool known) {
  return Value::Error(std::string("unit \"") + std::string(raw) + "\" " +
                      (known ? "not supported" : "not recognized") + " for type " + type);
}

Value DateTruncTs(std::string_view raw, std::int64_t micros, const char* type) {
  const std::string unit = Unit(raw);
  Fields f = FieldsOf(micros);
  std::int64_t clock = f.clock;
  std::int64_t year = f.year;
  unsigned month = f.month, day = f.day;
  if (unit == "microseconds") {
    return Value::Of(Null{});  // the value itself (handled by the caller)
  } else if (unit == "milliseconds") {
    clock -= clock % 1000;
  } else if (unit == "second") {
    clock -= clock % 1'000'000;
  } else if (unit == "minute") {
    clock -= clock % 60'000'000;
  } else if (unit == "hour") {
    clock -= clock % 3'600'000'000;
  } else if (unit == "day") {
    clock = 0;
  } else if (unit == "week") {
    clock = 0;
    const std::int64_t monday = f.days - (IsoDow(f.days) - 1);
    const std::int64_t out = monday * kDayMicros;
    if (out / kDayMicros < -2'440'588) return Value::Error("timestamp out of range");
    return Value::Of(Timestamp{out});
  } else if (unit == "month" || unit == "quarter" || unit == "year" || unit == "decade" ||
             unit == "century" || unit == "millennium") {
    clock = 0;
    day = 1;
    if (unit == "quarter") month = (month - 1) / 3 * 3 + 1;
    if (unit != "month" && unit != "quarter") month = 1;
    if (unit == "decade") {
      year = year >= 0 ? year / 10 * 10 : -((8 - (year - 1)) / 10) * 10;
    } else if (unit == "century") {
      year = year > 0 ? (year + 99) / 100 * 100 - 99 : -((99 - (year - 1)) / 100) * 100 + 1;
    } else if (unit == "millennium") {
      year = year > 0 ? (year + 999) / 1000 * 1000 - 999 : -((999 - (year - 1)) / 1000) * 1000 + 1;
    }
  } else {
    return UnitError(raw, type, !unit.empty());
  }
  const std::int64_t days = DaysOf(year, month, day);
  if (days < -2'440'588) return Value::Error("timestamp out of range");
  return Value::Of(Timestamp{days * kDayMicros + clock});
}

Value TruncIntervalTo(std::string_view raw, const Interval& i) {
  const std::string unit = Unit(raw);
  std::int32_t months = i.months, days = i.days;
  std::int64_t micros = i.micros;
  // C's truncating division throughout, as PostgreSQL's interval2tm and tm2interval.
  auto trunc_micros = [&](std::int64_t unit_micros) { micros -= micros % unit_micros; };
  if (unit == "microseconds") {
  } else if (unit == "milliseconds") {
    trunc_micros(1000);
  } else if (unit == "second") {
    trunc_micros(1'000'000);
  } else if (unit == "minute") {
    trunc_micros(60'000'000);
  } else if (unit == "hour") {
    trunc_micros(3'600'000'000);
  } else if (unit == "day") {
    micros = 0;
  } else if (unit == "month" || unit == "quarter" || unit == "year" || unit == "decade" ||
             unit == "century" || unit == "millennium") {
    micros = 0;
    days = 0;
    std::int32_t years = months / 12, mon = months % 12;
    if (unit == "quarter") mon = 3 * (mon / 3);
    if (unit == "year") mon = 0;
    if (unit == "decade") {
      years = years / 10 * 10;
      mon = 0;
    }
    if (unit == "century") {
      years = years / 100 * 100;
      mon = 0;
    }
    if (unit == "millennium") {
      years = years / 1000 * 1000;
      mon = 0;
    }
    months = years * 12 + mon;
  } else {
    return UnitError(raw, "interval", !unit.empty());  // week too: months have no whole weeks
  }
  return Value::Of(Interval{months, days, micros});
}

// extract(field from timestamp | date) as PostgreSQL 15, exactly. A date is its day at 00:00.
Value ExtractTs(std::string_view raw, const Fields& f, const char* type, bool is_date) {
  const std::string unit = Unit(raw);
  const std::int64_t sec_micros = f.clock % 60'000'000;
  auto integer = [](std::int64_t v) {
    return Numeric0(mpq_class(mpz_class(static_cast<long>(v))), 0);
  };
  auto scaled = [](std::int64_t v, int scale) {
    return Numeric0(mpq_class(mpz_class(static_cast<long>(v)), Pow10(scale)), scale);
  };
  if (!is_date) {
    if (unit == "microseconds") return integer(sec_micros);
    if (unit == "milliseconds") return scaled(sec_micros, 3);
    if (unit == "second") return scaled(sec_micros, 6);
    if (unit == "minute") return integer(f.clock / 60'000'000 % 60);
    if (unit == "hour") return integer(f.clock / 3'600'000'000);
  }
  const std::int64_t y = f.year;
  if (unit == "day") return integer(f.day);
  if (unit == "month") return integer(f.month);
  if (unit == "quarter") return integer((f.month - 1) / 3 + 1);
  if (unit == "year") return integer(SqlYear(y));
  if (unit == "decade") return integer(y >= 0 ? y / 10 : -((8 - (y - 1)) / 10));
  if (unit == "century") return integer(y > 0 ? (y + 99) / 100 : -((99 - (y - 1)) / 100));
  if (unit == "millennium") return integer(y > 0 ? (y + 999) / 1000 : -((999 - (y - 1)) / 1000));
  if (unit == "dow") return integer(IsoDow(f.days) % 7);
  if (unit == "isodow") return integer(IsoDow(f.days));
  if (unit == "doy") return integer(f.days - DaysOf(y, 1, 1) + 1);
  if (unit == "week" || unit == "isoyear") {
    std::int64_t iso_year = 0, week = 0;
    IsoWeek(f.days, &iso_year, &week);
    return integer(unit == "week" ? week : SqlYear(iso_year));
  }
  if (unit == "julian") {
    const std::int64_t jd = f.days + 2'440'588;
    if (is_date) return integer(jd);
    // The day number plus the fraction of the day: numeric + numeric division.
    const mpq_class fraction(mpz_class(static_cast<long>(f.clock)), mpz_class(kDayMicros));
    const mpq_class clock_q(mpz_class(static_cast<long>(f.clock)));
    const int scale = DivScale(clock_q, 0, mpq_class(mpz_class(kDayMicros)), 0);
    Value frac = Numeric0(fraction, scale);
    if (frac.is_error()) return frac;
    return Numeric0(NumericToRational(std::get<Numeric>(frac.datum)) + jd, scale);
  }
  if (unit == "epoch") {
    if (is_date) return integer(f.days * 86'400);
    return scaled(f.days * kDayMicros + f.clock, 6);  // a timestamp: fits int64
  }
  return UnitError(raw, type, !unit.empty());
}

Value ExtractTimeOfDay(std::string_view raw, std::int64_t micros) {
  const std::string unit = Unit(raw);
  const std::int64_t sec_micros = micros % 60'000'000;
  auto integer = [](std::int64_t v) {
    return Numeric0(mpq_class(mpz_class(static_cast<long>(v))), 0);
  };
  auto scaled = [](std::int64_t v, int scale) {
    return Numeric0(mpq_class(mpz_class(static_cast<long>(v)), Pow10(scale)), scale);
  };
  if (unit == "microseconds") return integer(sec_micros);
  if (unit == "milliseconds") return scaled(sec_micros, 3);
  if (unit == "second") return scaled(sec_micros, 6);
  if (unit == "minute") return integer(micros / 60'000'000 % 60);
  if (unit == "hour") return integer(micros / 3'600'000'000);
  if (unit == "epoch") return scaled(micros, 6);
  return UnitError(raw, "time without time zone", !unit.empty());
}

Value ExtractIntervalField(std::string_view raw, const Interval& i) {
  const std::string unit = Unit(raw);
  const std::int64_t sec_micros = i.micros % 60'000'000;  // C's truncation: signed
  auto integer = [](std::int64_t v) {
    return Numeric0(mpq_class(mpz_class(static_cast<long>(v))), 0);
  };
  auto scaled = [](std::int64_t v, int scale) {
    return Numeric0(mpq_class(mpz_class(static_cast<long>(v)), Pow10(scale)), scale);
  };
  const std::int64_t years = i.months / 12;
  if (unit == "microseconds") return integer(sec_micros);
  if (unit == "milliseconds") return scaled(sec_micros, 3);
  if (unit == "second") return scaled(sec_micros, 6);
  if (unit == "minute") return integer(i.micros / 60'000'000 % 60);
  if (unit == "hour") return integer(i.micros / 3'600'000'000);
  if (unit == "day") return integer(i.days);
  if (unit == "month") return integer(i.months % 12);
  if (unit == "quarter") return integer(i.months % 12 / 3 + 1);
  if (unit == "year") return integer(years);
  if (unit == "decade") return integer(years / 10);
  if (unit == "century") return integer(years / 100);
  if (unit == "millennium") return integer(years / 1000);
  if (unit == "epoch") {
    // A year is 365.25 days, a month 30: exact.
    mpq_class fraction(mpz_class(static_cast<long>(i.micros)), mpz_class(1'000'000));
    fraction.canonicalize();
    const mpq_class secs = mpq_class(1461, 4) * 86400 * years +
                           mpq_class(30 * 86400) * (i.months % 12) + mpq_class(86400) * i.days +
                           fraction;
    return Numeric0(secs, 6);
  }
  return UnitError(raw, "interval", !unit.empty());
}

Value Extract(const Datum& source, pb::ScalarType type, std::string_view field) {
  switch (type) {
    case pb::DATE:
      return ExtractTs(field, FieldsOfDay(std::get<Date>(source).days, 0), "date", true);
    case pb::TIMESTAMP:
      return ExtractTs(field, FieldsOf(std::get<Timestamp>(source).micros),
                       "timestamp without time zone", false);
    case pb::TIMESTAMPTZ:
      return ExtractTs(field, FieldsOf(std::get<TimestampTz>(source).micros),
                       "timestamp with time zone", false);
    case pb::TIME:
      return ExtractTimeOfDay(field, std::get<TimeOfDay>(source).micros);
    case pb::INTERVAL:
      return ExtractIntervalField(field, std::get<Interval>(source));
    default:
      return Value::Error("reference: type error in EXTRACT");
  }
}

// date_part's float8 where PostgreSQL computes it in floating point rather than from extract's
// numeric (seconds with their fraction, epoch, julian): its formulas, roundings included. Empty
// for the fields whose value is an integer (the numeric's double is exact then).
std::optional<double> DatePartFloat(const std::string& unit, const Datum& source) {
  std::int64_t sec = 0, fsec = 0;  // seconds of the minute and microseconds of the second
  auto split = [&](std::int64_t micros) {
    sec = micros % 60'000'000 / 1'000'000;
    fsec = micros % 1'000'000;
  };
  if (const auto* i = std::get_if<Interval>(&source)) {
    split(i->micros);
    if (unit == "epoch") {
      double r = static_cast<double>(i->micros) / 1000000.0;
      r += (365.25 * 86400) * static_cast<double>(i->months / 12);
      r += (30.0 * 86400) * static_cast<double>(i->months % 12);
      r += 86400.0 * static_cast<double>(i->days);
      return r;
    }
  } else if (const auto* t = std::get_if<TimeOfDay>(&source)) {
    split(t->micros);
    if (unit == "epoch") return static_cast<double>(t->micros) / 1000000.0;
  } else {
    const std::int64_t micros = std::holds_alternative<Timestamp>(source)
                                    ? std::get<Timestamp>(source).micros
                                    : std::get<TimestampTz>(source).micros;
    const Fields f = FieldsOf(micros);
    split(f.clock);
    if (unit == "epoch") return static_cast<double>(micros) / 1000000.0;
    if (unit == "julian") {
      const std::int64_t whole_seconds = f.clock / 1'000'000;
      return static_cast<double>(f.days + 2'440'588) +
             (static_cast<double>(whole_seconds) + static_cast<double>(fsec) / 1000000.0) / 86400.0;
    }
  }
  if (unit == "second") return static_cast<double>(sec) + static_cast<double>(fsec) / 1000000.0;
  if (unit == "milliseconds") {
    return static_cast<double>(sec) * 1000.0 + static_cast<double>(fsec) / 1000.0;
  }
  return std::nullopt;
}

// The text of a float as PostgreSQL's float8 input would read the numeric: the nearest double.
double ToDouble(const Numeric& n) { return std::strtod(NumericOutput(n).c_str(), nullptr); }

Value SqrtNumeric(const Numeric& n) {
  const mpq_class v = NumericToRational(n);
  if (v < 0) return Value::Error("cannot take square root of a negative number");
  // PostgreSQL's scale: 16 significant digits from the base-10000 weight, at least the input's.
  int weight = 0;
  if (v != 0) {
    mpq_class unit = 1;
    while (v >= unit * 10000) {
      unit *= 10000;
      ++weight;
    }
    while (v < unit) {
      unit /= 10000;
      --weight;
    }
  }
  const int sweight = (weight + 1) * 4 / 2 - 1;
  const int scale = std::min(std::max({16 - sweight, static_cast<int>(n.scale), 0}), 38);
  // round(sqrt(v) * 10^scale) = floor((floor(sqrt(4 v 10^(2 scale))) + 1) / 2).
  const mpq_class x = v * mpq_class(Pow10(2 * scale)) * 4;
  mpz_class root;
  mpz_class whole = FloorQ(x);
  mpz_sqrt(root.get_mpz_t(), whole.get_mpz_t());
  const mpz_class rounded = (root + 1) / 2;
  return Numeric0(mpq_class(rounded, Pow10(scale)), scale);
}

Value PowerFloat(double x, double y) {
  if (x == 0 && y < 0) return Value::Error("zero raised to a negative power is undefined");
  if (x < 0 && std::floor(y) != y && !std::isinf(y) && !std::isnan(y)) {
    return Value::Error("a negative number raised to a non-integer power yields a complex result");
  }
  const double r = std::pow(x, y);
  if (std::isinf(r) && !std::isinf(x) && !std::isinf(y)) {
    return Value::Error("value out of range: overflow");
  }
  if (r == 0 && x != 0 && !std::isinf(y)) return Value::Error("value out of range: underflow");
  return Value::Of(r);
}

// power(numeric, numeric) for an integer exponent: exact, rounded to PostgreSQL's scale for it. A
// fractional exponent goes through float8 (an approximation the differential suites do not
// generate).
Value PowerNumeric(const Numeric& base, const Numeric& exponent) {
  const mpq_class b = NumericToRational(base), e = NumericToRational(exponent);
  if (b == 0 && e < 0) return Value::Error("zero raised to a negative power is undefined");
  if (e.get_den() != 1 || abs(e.get_num()) > 10000) {
    if (b < 0) {
      return Value::Error(
          "a negative number raised to a non-integer power yields a complex result");
    }
    return Value::Error("reference: power(numeric) with this exponent is not modelled");
  }
  const long k = e.get_num().get_si();
  mpq_class r = 1;
  mpz_class num, den;
  mpz_pow_ui(num.get_mpz_t(), b.get_num_mpz_t(), static_cast<unsigned long>(std::labs(k)));
  mpz_pow_ui(den.get_mpz_t(), b.get_den_mpz_t(), static_cast<unsigned long>(std::labs(k)));
  r = k >= 0 ? mpq_class(num, den) : mpq_class(den, num);
  r.canonicalize();
  // PostgreSQL 15's scale for an integer exponent: 16, or the base's if larger.
  return Numeric0(r, std::max(16, static_cast<int>(base.scale)));
}

}  // namespace

Value CallFunction(const pb::CallFunc& call, const std::function<Value(int)>& arg,
                   const std::function<pb::Column(int)>& arg_type) {
  const int n = call.args_size();
  switch (call.func()) {
    case pb::COALESCE:
      for (int i = 0; i < n; ++i) {
        Value v = arg(i);
        if (v.is_error() || !IsNullDatum(v.datum)) return v;
      }
      return Value::Of(Null{});
    case pb::NULLIF: {
      Value a = arg(0);
      if (a.is_error()) return a;
      Value b = arg(1);
      if (b.is_error()) return b;
      if (!IsNullDatum(a.datum) && !IsNullDatum(b.datum) && CompareValues(a.datum, b.datum) == 0) {
        return Value::Of(Null{});
      }
      return a;
    }
    case pb::GREATEST:
    case pb::LEAST: {
      std::optional<Datum> best;
      for (int i = 0; i < n; ++i) {
        Value v = arg(i);
        if (v.is_error()) return v;
        if (IsNullDatum(v.datum)) continue;
        const int c = best ? CompareValues(v.datum, *best) : 0;
        if (!best || (call.func() == pb::GREATEST ? c > 0 : c < 0)) best = v.datum;
      }
      return Value::Of(best ? *best : Datum(Null{}));
    }
    default:
      break;
  }
  // Null in, null out: every argument is evaluated, the first error wins, then null.
  std::vector<Datum> args;
  for (int i = 0; i < n; ++i) {
    Value v = arg(i);
    if (v.is_error()) return v;
    args.push_back(std::move(v.datum));
  }
  for (const auto& a : args) {
    if (IsNullDatum(a)) return Value::Of(Null{});
  }
  auto text = [&](int i) -> const std::string& { return std::get<std::string>(args.at(i)); };
  auto int_arg = [&](int i) { return std::get<std::int64_t>(args.at(i)); };
  auto int32 = [](std::int64_t v) -> Value {
    if (v > std::numeric_limits<std::int32_t>::max()) return Value::Error("integer out of range");
    return Value::Of(v);
  };
  const pb::ScalarType t0 = n > 0 ? arg_type(0).type() : pb::SCALAR_TYPE_UNSPECIFIED;
  switch (call.func()) {
    case pb::CONCAT:
      if (const auto* a = std::get_if<Bytes>(&args[0])) {  // bytea || bytea: byteacat
        return Value::Of(Bytes{a->bytes + std::get<Bytes>(args[1]).bytes});
      }
      return Value::Of(text(0) + text(1));
    case pb::CHAR_LENGTH:
      return int32(static_cast<std::int64_t>(Chars(text(0)).size()));
    case pb::OCTET_LENGTH:
      if (const auto* b = std::get_if<Bytes>(&args[0])) {
        return int32(static_cast<std::int64_t>(b->bytes.size()));
      }
      return int32(static_cast<std::int64_t>(text(0).size()));
    case pb::LOWER:
      return Value::Of(AsciiCase(text(0), false));
    case pb::UPPER:
      return Value::Of(AsciiCase(text(0), true));
    case pb::SUBSTR: {
      const auto chars = Chars(text(0));
      const std::int64_t start = int_arg(1);
      std::int64_t end = std::numeric_limits<std::int64_t>::max();
      if (n > 2) {
        const std::int64_t length = int_arg(2);
        if (length < 0) return Value::Error("negative substring length not allowed");
        end = start + length;  // both int4: no overflow in int64
      }
      const std::int64_t from = std::max<std::int64_t>(start, 1);
      if (end <= from) return Value::Of(std::string());
      const std::int64_t last =
          std::min<std::int64_t>(end, static_cast<std::int64_t>(chars.size()) + 1);
      return Value::Of(Join(chars, static_cast<std::size_t>(from - 1),
                            static_cast<std::size_t>(std::max(last - 1, from - 1))));
    }
    case pb::STRPOS: {
      const std::string& hay = text(0);
      const std::string& needle = text(1);
      const std::size_t at = hay.find(needle);
      if (at == std::string::npos) return Value::Of(std::int64_t{0});
      return Value::Of(static_cast<std::int64_t>(Chars(hay.substr(0, at)).size()) + 1);
    }
    case pb::BTRIM:
    case pb::LTRIM:
    case pb::RTRIM: {
      const auto chars = Chars(text(0));
      const auto set = Chars(n > 1 ? text(1) : std::string(" "));
      auto in_set = [&](const std::string& c) {
        return std::find(set.begin(), set.end(), c) != set.end();
      };
      std::size_t from = 0, to = chars.size();
      if (call.func() != pb::RTRIM) {
        while (from < to && in_set(chars[from])) ++from;
      }
      if (call.func() != pb::LTRIM) {
        while (to > from && in_set(chars[to - 1])) --to;
      }
      return Value::Of(Join(chars, from, to));
    }
    case pb::REPLACE: {
      const std::string& s = text(0);
      const std::string& from = text(1);
      const std::string& to = text(2);
      if (from.empty()) return Value::Of(s);
      std::string out;
      std::size_t pos = 0;
      for (std::size_t at; (at = s.find(from, pos)) != std::string::npos; pos = at + from.size()) {
        out += s.substr(pos, at - pos) + to;
      }
      return Value::Of(out + s.substr(pos));
    }
    case pb::LIKE:
    case pb::ILIKE: {
      const bool fold = call.func() == pb::ILIKE;
      const auto s = Chars(fold ? AsciiCase(text(0), false) : text(0));
      const auto p = Chars(fold ? AsciiCase(text(1), false) : text(1));
      const Like r = LikeMatch(s, 0, p, 0);
      if (r == Like::kError) {
        return Value::Error("LIKE pattern must not end with escape character");
      }
      return Value::Of(r == Like::kTrue);
    }
    case pb::ABS: {
      if (const auto* i = std::get_if<std::int64_t>(&args[0])) {
        // PostgreSQL's words for each width, bigint's too (a function, not the int64 operators
        // whose words the runtime keeps).
        const pb::ScalarType width = t0 == pb::INT16 || t0 == pb::INT32 ? t0 : pb::INT64;
        const std::int64_t limit = width == pb::INT16   ? -32768
                                   : width == pb::INT32 ? std::numeric_limits<std::int32_t>::min()
                                                        : std::numeric_limits<std::int64_t>::min();
        if (*i == limit) {
          return Value::Error(width == pb::INT16   ? "smallint out of range"
                              : width == pb::INT32 ? "integer out of range"
                                                   : "bigint out of range");
        }
        return Value::Of(*i < 0 ? -*i : *i);
      }
      if (const auto* f = std::get_if<double>(&args[0])) return Value::Of(std::fabs(*f));
      if (const auto* x = std::get_if<Numeric>(&args[0])) {
        return Numeric0(abs(NumericToRational(*x)), x->scale);
      }
      break;
    }
    case pb::ROUND:
    case pb::TRUNC:
      if (const auto* x = std::get_if<Numeric>(&args[0])) {
        return RoundNumeric(*x, n > 1 ? int_arg(1) : 0, call.func() == pb::TRUNC);
      }
      if (const auto* f = std::get_if<double>(&args[0])) {
        return Value::Of(call.func() == pb::ROUND ? std::nearbyint(*f) : std::trunc(*f));
      }
      break;
    case pb::FLOOR:
    case pb::CEIL:
      if (const auto* x = std::get_if<Numeric>(&args[0])) {
        const mpq_class v = NumericToRational(*x);
        return Numeric0(mpq_class(call.func() == pb::FLOOR ? FloorQ(v) : CeilQ(v)), 0);
      }
      if (const auto* f = std::get_if<double>(&args[0])) {
        return Value::Of(call.func() == pb::FLOOR ? std::floor(*f) : std::ceil(*f));
      }
      break;
    case pb::POWER:
      if (const auto* x = std::get_if<Numeric>(&args[0])) {
        return PowerNumeric(*x, std::get<Numeric>(args[1]));
      }
      if (const auto* f = std::get_if<double>(&args[0])) {
        return PowerFloat(*f, std::get<double>(args[1]));
      }
      break;
    case pb::SQRT:
      if (const auto* x = std::get_if<Numeric>(&args[0])) return SqrtNumeric(*x);
      if (const auto* f = std::get_if<double>(&args[0])) {
        if (*f < 0) return Value::Error("cannot take square root of a negative number");
        return Value::Of(std::sqrt(*f));
      }
      break;
    case pb::DATE_TRUNC: {
      const std::string& unit = text(0);
      const pb::ScalarType t1 = arg_type(1).type();
      if (const auto* i = std::get_if<Interval>(&args[1])) return TruncIntervalTo(unit, *i);
      const bool tz = std::holds_alternative<TimestampTz>(args[1]) || t1 == pb::TIMESTAMPTZ;
      const std::int64_t micros =
          tz ? std::get<TimestampTz>(args[1]).micros : std::get<Timestamp>(args[1]).micros;
      if (Unit(unit) == "microseconds") return Value::Of(args[1]);
      Value v = DateTruncTs(unit, micros,
                            tz ? "timestamp with time zone" : "timestamp without time zone");
      if (v.is_error() || !tz) return v;
      return Value::Of(TimestampTz{std::get<Timestamp>(v.datum).micros});
    }
    case pb::EXTRACT:
    case pb::DATE_PART: {
      pb::ScalarType t1 = arg_type(1).type();
      if (t1 == pb::SCALAR_TYPE_UNSPECIFIED) t1 = TypeOfDatum(args[1]);
      if (call.func() == pb::DATE_PART && t1 == pb::DATE) {
        // PostgreSQL has no date_part(text, date): the date is read as a timestamp (so time
        // fields are 0, and a date beyond the timestamps is an error).
        Value ts = CastValue(args[1], ColumnOfType(pb::DATE), ColumnOfType(pb::TIMESTAMP));
        if (ts.is_error()) return ts;
        args[1] = ts.datum;
        t1 = pb::TIMESTAMP;
      }
      Value v = Extract(args[1], t1, text(0));
      if (v.is_error() || call.func() == pb::EXTRACT) return v;
      if (const auto f = DatePartFloat(Unit(text(0)), args[1])) return Value::Of(*f);
      return Value::Of(ToDouble(std::get<Numeric>(v.datum)));
    }
    default:
      break;
  }
  return Value::Error("reference: type error in a function call");
}

}  // namespace tandem::reference
