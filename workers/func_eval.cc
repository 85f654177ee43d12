#include "workers/func_eval.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/check.h"
#include "base/count.h"
#include "base/datetime.h"
#include "base/numeric.h"
#include "base/utf8.h"
#include "workers/arith.h"
#include "workers/numeric_math.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

template <typename T>
const T& FuncArg(const Datum& d) {
  TANDEM_CHECK(std::holds_alternative<T>(d), "function argument is not of its validated type");
  return std::get<T>(d);
}

bool FuncArgIsNull(const Datum& d) { return std::holds_alternative<Null>(d); }

// A value API's Result: its value into *out, or its message into *error.
template <typename T>
bool FuncResult(Result<T> r, Datum* out, std::string* error) {
  if (!r.ok()) {
    *error = r.status().message();
    return false;
  }
  *out = std::move(r).value();
  return true;
}

// ---- comparison -------------------------------------------------------------------------------

// SQL's comparison of two values of one type: numerics and intervals as values (1.5 = 1.50,
// '1 mon' = '30 days'); every other type in its datum order, which is PostgreSQL's (floats with
// -0 = 0 and NaN above every number, text and bytea bytewise as the C collation).
int CompareValues(const Datum& a, const Datum& b) {
  if (std::holds_alternative<Numeric>(a)) {
    return CompareNumericValue(std::get<Numeric>(a), FuncArg<Numeric>(b));
  }
  if (std::holds_alternative<Interval>(a)) {
    return CompareIntervalValue(std::get<Interval>(a), FuncArg<Interval>(b));
  }
  return CompareDatum(a, b);
}

// ---- characters -------------------------------------------------------------------------------

// The offset of the character after the one at text[at] (a lead byte and its continuation bytes).
std::size_t NextCharAt(std::string_view text, std::size_t at) {
  ++at;
  while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  return at;
}

std::int64_t CharCount(std::string_view text) {
  return static_cast<std::int64_t>(Utf8CodePoints(text));
}

std::string AsciiFolded(std::string text, bool upper) {
  for (char& c : text) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

// PostgreSQL's substr(text, start[, count]): the characters at positions [start, start + count)
// that exist, positions counted from 1.
bool Substr(const std::string& text, std::int64_t start, const std::int64_t* count, Datum* out,
            std::string* error) {
  if (count != nullptr && *count < 0) {
    *error = "negative substring length not allowed";
    return false;
  }
  // Both are int4 values: start + count cannot overflow an int64.
  const std::int64_t first = start < 1 ? 1 : start;
  const bool to_end = count == nullptr;
  const std::int64_t end = to_end ? 0 : start + *count;  // exclusive
  if (!to_end && end <= first) {
    *out = std::string();
    return true;
  }
  std::size_t at = 0;
  std::int64_t position = 1;
  while (at < text.size() && position < first) {
    at = NextCharAt(text, at);
    ++position;
  }
  std::size_t stop = at;
  while (stop < text.size() && (to_end || position < end)) {
    stop = NextCharAt(text, stop);
    ++position;
  }
  *out = text.substr(at, stop - at);
  return true;
}

// strpos(a, b): the character position of the first b in a, 0 when there is none, 1 for an empty b.
std::int64_t Strpos(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return 0;
  return CharCount(std::string_view(text).substr(0, at)) + 1;
}

// btrim/ltrim/rtrim: remove the characters of `set` (each a whole UTF-8 character) from the
// ends asked for.
std::string Trim(const std::string& text, std::string_view set, bool leading, bool trailing) {
  auto in_set = [&](std::string_view ch) {
    for (std::size_t at = 0; at < set.size();) {
      const std::size_t next = NextCharAt(set, at);
      if (set.substr(at, next - at) == ch) return true;
      at = next;
    }
    return false;
  };
  const std::string_view view(text);
  std::size_t begin = 0, end = view.size();
  if (leading) {
    while (begin < end) {
      const std::size_t next = NextCharAt(view, begin);
      if (!in_set(view.substr(begin, next - begin))) break;
      begin = next;
    }
  }
  if (trailing) {
    while (end > begin) {
      std::size_t last = end - 1;
      while (last > begin && (static_cast<unsigned char>(view[last]) & 0xC0) == 0x80) --last;
      if (!in_set(view.substr(last, end - last))) break;
      end = last;
    }
  }
  return std::string(view.substr(begin, end - begin));
}

std::string Replace(const std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  std::string out;
  std::size_t at = 0;
  for (std::size_t hit; (hit = text.find(from, at)) != std::string::npos; at = hit + from.size()) {
    out.append(text, at, hit - at);
    out += to;
  }
  out.append(text, at, std::string::npos);
  return out;
}

// ---- LIKE -------------------------------------------------------------------------------------

enum class LikeOutcome { kTrue, kFalse, kAbort, kError };

// Deeper than this many nested % the pattern is refused (each % of the pattern may nest once).
constexpr int kMaxLikeDepth = 10'000;

// PostgreSQL's matching order (like_match.c's rules): literal bytes compare as bytes, _ and the
// text under a % advance by characters; kAbort says no later start in the text can match either,
// which keeps the search polynomial. An escape is an error only when the matching reaches it.
LikeOutcome LikeMatch(std::string_view t, std::string_view p, int depth, std::string* error) {
  if (depth > kMaxLikeDepth) {
    *error = "stack depth limit exceeded";
    return LikeOutcome::kError;
  }
  if (p.size() == 1 && p[0] == '%') return LikeOutcome::kTrue;
  const auto trailing_escape = [&]() {
    *error = "LIKE pattern must not end with escape character";
    return LikeOutcome::kError;
  };
  std::size_t ti = 0, pi = 0;
  while (ti < t.size() && pi < p.size()) {
    if (p[pi] == '\\') {
      if (++pi >= p.size()) return trailing_escape();
      if (p[pi] != t[ti]) return LikeOutcome::kFalse;
    } else if (p[pi] == '%') {
      ++pi;
      while (pi < p.size()) {
        if (p[pi] == '%') {
          ++pi;
        } else if (p[pi] == '_') {
          if (ti >= t.size()) return LikeOutcome::kAbort;
          ti = NextCharAt(t, ti);
          ++pi;
        } else {
          break;
        }
      }
      if (pi >= p.size()) return LikeOutcome::kTrue;
      char first = p[pi];
      if (first == '\\') {
        if (pi + 1 >= p.size()) return trailing_escape();
        first = p[pi + 1];
      }
      while (ti < t.size()) {
        if (t[ti] == first) {
          const LikeOutcome rest = LikeMatch(t.substr(ti), p.substr(pi), depth + 1, error);
          if (rest != LikeOutcome::kFalse) return rest;
        }
        ti = NextCharAt(t, ti);
      }
      return LikeOutcome::kAbort;
    } else if (p[pi] == '_') {
      ti = NextCharAt(t, ti);
      ++pi;
      continue;
    } else if (p[pi] != t[ti]) {
      return LikeOutcome::kFalse;
    }
    ++ti;
    ++pi;
  }
  if (ti < t.size()) return LikeOutcome::kFalse;
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi >= p.size() ? LikeOutcome::kTrue : LikeOutcome::kAbort;
}

// ---- numbers ----------------------------------------------------------------------------------

bool AbsOf(const Datum& v, pb::ScalarType type, Datum* out, std::string* error) {
  switch (type) {
    case pb::INT16:
    case pb::INT32:
    case pb::INT64: {
      const std::int64_t x = FuncArg<std::int64_t>(v);
      const IntegerRange range = IntegerRangeOf(type);
      if (x == range.min) return *error = range.out_of_range, false;
      *out = x < 0 ? -x : x;
      return true;
    }
    case pb::FLOAT32:
    case pb::FLOAT64:
      *out = std::fabs(FuncArg<double>(v));
      return true;
    default:
      *out = NumericAbs(FuncArg<Numeric>(v));
      return true;
  }
}

// PostgreSQL's float8 power (float8pow): its special cases around NaN, zero, negative bases and
// infinities, and overflow/underflow as errors.
bool FloatPower(double x, double y, Datum* out, std::string* error) {
  if (std::isnan(x)) {
    *out = (std::isnan(y) || y != 0.0) ? x : 1.0;
    return true;
  }
  if (std::isnan(y)) {
    *out = x != 1.0 ? y : 1.0;
    return true;
  }
  if (x == 0.0 && y < 0.0) {
    *error = "zero raised to a negative power is undefined";
    return false;
  }
  if (x < 0.0 && std::floor(y) != y) {
    *error = "a negative number raised to a non-integer power yields a complex result";
    return false;
  }
  // With the cases above excluded, C's pow follows POSIX for the infinities, as PostgreSQL
  // relies on; a finite result that becomes infinite or zero is out of range.
  const double result = std::pow(x, y);
  if (std::isinf(result) && !std::isinf(x) && !std::isinf(y)) {
    *error = "value out of range: overflow";
    return false;
  }
  if (result == 0.0 && x != 0.0 && !std::isinf(x) && !std::isinf(y)) {
    *error = "value out of range: underflow";
    return false;
  }
  *out = result;
  return true;
}

// ROUND, TRUNC, FLOOR, CEIL.
bool Rounding(pb::Func func, const std::vector<Datum>& args,
              const std::vector<pb::ScalarType>& types, Datum* out, std::string* error) {
  if (types[0] == pb::FLOAT64) {
    const double x = FuncArg<double>(args[0]);
    switch (func) {
      case pb::ROUND:
        *out = std::rint(x);  // half to even, as PostgreSQL's dround
        return true;
      case pb::TRUNC:
        *out = std::trunc(x);
        return true;
      case pb::FLOOR:
        *out = std::floor(x);
        return true;
      default:
        *out = std::ceil(x);
        return true;
    }
  }
  const Numeric& n = FuncArg<Numeric>(args[0]);
  if (func == pb::FLOOR) return FuncResult(NumericFloor(n), out, error);
  if (func == pb::CEIL) return FuncResult(NumericCeil(n), out, error);
  // A scale beyond 38 keeps every digit (a numeric has at most 38 after the point); one below
  // -38 rounds every numeric to 0, as -38 does.
  std::int64_t scale = args.size() > 1 ? FuncArg<std::int64_t>(args[1]) : 0;
  scale = scale > kNumericMaxDigits ? kNumericMaxDigits : scale;
  scale = scale < -kNumericMaxDigits - 1 ? -kNumericMaxDigits - 1 : scale;
  return FuncResult(func == pb::ROUND ? NumericRound(n, static_cast<int>(scale))
                                      : NumericTrunc(n, static_cast<int>(scale)),
                    out, error);
}

// ---- dates and times --------------------------------------------------------------------------

// EXTRACT (numeric) of `field` from a value of `type`; `as_date_part` reads a date as the
// timestamp at its midnight, as PostgreSQL's date_part(text, date) does.
Result<Numeric> ExtractOf(std::string_view field, const Datum& v, pb::ScalarType type,
                          bool as_date_part) {
  switch (type) {
    case pb::DATE: {
      const Date d = FuncArg<Date>(v);
      if (!as_date_part) return ExtractDate(field, d);
      Result<Timestamp> midnight = TimestampOfDate(d);
      if (!midnight.ok()) return midnight.status();
      return ExtractTimestamp(field, *midnight);
    }
    case pb::TIME:
      return ExtractTime(field, FuncArg<TimeOfDay>(v));
    case pb::TIMESTAMP:
      return ExtractTimestamp(field, FuncArg<Timestamp>(v));
    case pb::TIMESTAMPTZ:
      return ExtractTimestampTz(field, FuncArg<TimestampTz>(v));
    default:
      return ExtractInterval(field, FuncArg<Interval>(v));
  }
}

bool DateTrunc(std::string_view unit, const Datum& v, pb::ScalarType type, Datum* out,
               std::string* error) {
  switch (type) {
    case pb::TIMESTAMP:
      return FuncResult(DateTruncTimestamp(unit, FuncArg<Timestamp>(v)), out, error);
    case pb::TIMESTAMPTZ:
      return FuncResult(DateTruncTimestampTz(unit, FuncArg<TimestampTz>(v)), out, error);
    default:
      return FuncResult(DateTruncInterval(unit, FuncArg<Interval>(v)), out, error);
  }
}

// The fields whose date_part PostgreSQL computes in float8 with more than one rounding; every
// other field's value is an integer, which extract's numeric gives exactly.
enum class FloatPartField { kOther, kSecond, kMillisecond, kEpoch };

// PostgreSQL's spellings of those fields (its unit tables, matched on the first 10 characters of
// the lower-cased unit, as DecodeUnits does; "epoch" is a special word after them).
FloatPartField FloatPartFieldOf(std::string_view unit) {
  std::string lower(unit);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  auto matches = [&](std::string_view token) {
    return lower == token || (token.size() == 10 && lower.compare(0, 10, token) == 0);
  };
  for (const std::string_view token : {"s", "sec", "second", "seconds", "secs"}) {
    if (matches(token)) return FloatPartField::kSecond;
  }
  for (const std::string_view token :
       {"millisecon", "ms", "msec", "msecond", "mseconds", "msecs"}) {
    if (matches(token)) return FloatPartField::kMillisecond;
  }
  return matches("epoch") ? FloatPartField::kEpoch : FloatPartField::kOther;
}

// date_part's float8 as PostgreSQL 15 computes it from the parts (its timestamp_part_common,
// time_part_common and interval_part_common): seconds as tm_sec + fsec / 1e6, milliseconds as
// tm_sec * 1000.0 + fsec / 1000.0, a timestamp's epoch from its microseconds since 2000, an
// interval's from its months, days and time. `exact` is extract's numeric for the same field.
double DatePartDouble(FloatPartField field, const Numeric& exact, const Datum& v,
                      pb::ScalarType type) {
  if (field == FloatPartField::kEpoch && type == pb::INTERVAL) {
    const Interval& i = FuncArg<Interval>(v);
    return static_cast<double>(i.micros) / 1000000.0 +
           (365.25 * 86400.0) * static_cast<double>(i.months / 12) +
           (30.0 * 86400.0) * static_cast<double>(i.months % 12) +
           86400.0 * static_cast<double>(i.days);
  }
  // What is left is in whole microseconds: seconds (scale 6) and milliseconds (scale 3) of any
  // type, the epoch of a time, a timestamp, a timestamptz or a date's midnight (scale 6) — each
  // within int64 microseconds.
  Int128 coefficient = exact.coefficient();
  const int micros_scale = field == FloatPartField::kMillisecond ? 3 : 6;
  for (int scale = exact.scale; scale < micros_scale; ++scale) coefficient *= 10;
  for (int scale = exact.scale; scale > micros_scale; --scale) coefficient /= 10;
  const auto micros = static_cast<std::int64_t>(coefficient);
  const std::int64_t sec = micros / kMicrosPerSecond, fsec = micros % kMicrosPerSecond;
  switch (field) {
    case FloatPartField::kSecond:
      return static_cast<double>(sec) + static_cast<double>(fsec) / 1000000.0;
    case FloatPartField::kMillisecond:
      return static_cast<double>(sec) * 1000.0 + static_cast<double>(fsec) / 1000.0;
    default:
      // (timestamp - epoch) / 1000000.0: the microseconds since 1970 as a double (rounded once
      // past 2^53), then divided.
      return static_cast<double>(micros) / 1000000.0;
  }
}

// COALESCE, NULLIF, GREATEST, LEAST: the functions that read nulls.
bool EvalNullReading(pb::Func func, const std::vector<Datum>& args, Datum* out) {
  switch (func) {
    case pb::COALESCE:
      for (const Datum& arg : args) {
        if (!FuncArgIsNull(arg)) {
          *out = arg;
          return true;
        }
      }
      *out = Null{};
      return true;
    case pb::NULLIF:
      TANDEM_CHECK(args.size() == 2, "NULLIF takes two arguments");
      if (!FuncArgIsNull(args[0]) && !FuncArgIsNull(args[1]) &&
          CompareValues(args[0], args[1]) == 0) {
        *out = Null{};
      } else {
        *out = args[0];
      }
      return true;
    default: {
      // The first of the greatest (least): a later argument replaces it only when strictly
      // greater (less), as PostgreSQL's evaluation does.
      const Datum* best = nullptr;
      for (const Datum& arg : args) {
        if (FuncArgIsNull(arg)) continue;
        const int order = best == nullptr ? 0 : CompareValues(arg, *best);
        if (best == nullptr || (func == pb::GREATEST ? order > 0 : order < 0)) best = &arg;
      }
      if (best == nullptr) {
        *out = Null{};
      } else {
        *out = *best;
      }
      return true;
    }
  }
}

}  // namespace

bool EvalLike(const std::string& text, const std::string& pattern, bool fold_case, bool* matches,
              std::string* error) {
  LikeOutcome outcome = LikeOutcome::kFalse;
  if (fold_case) {
    // ILIKE in a UTF-8 database: both sides through lower() (ASCII under the C collation), then
    // LIKE.
    const std::string t = AsciiFolded(text, false), p = AsciiFolded(pattern, false);
    outcome = LikeMatch(t, p, 0, error);
  } else {
    outcome = LikeMatch(text, pattern, 0, error);
  }
  if (outcome == LikeOutcome::kError) return false;
  *matches = outcome == LikeOutcome::kTrue;
  return true;
}

bool EvalFunc(pb::Func func, const std::vector<Datum>& args,
              const std::vector<pb::ScalarType>& arg_types, Datum* out, std::string* error) {
  TANDEM_CHECK(args.size() == arg_types.size(), "a function argument without its type");
  if (func == pb::COALESCE || func == pb::NULLIF || func == pb::GREATEST || func == pb::LEAST) {
    return EvalNullReading(func, args, out);
  }
  for (const Datum& arg : args) {
    if (FuncArgIsNull(arg)) {
      *out = Null{};
      return true;
    }
  }
  auto text = [&](std::size_t i) -> const std::string& { return FuncArg<std::string>(args[i]); };
  auto int_arg = [&](std::size_t i) { return FuncArg<std::int64_t>(args[i]); };
  switch (func) {
    case pb::CONCAT:
      if (arg_types[0] == pb::BYTEA) {
        *out = Bytes{FuncArg<Bytes>(args[0]).bytes + FuncArg<Bytes>(args[1]).bytes};
      } else {
        *out = text(0) + text(1);
      }
      return true;
    case pb::CHAR_LENGTH:
      *out = CharCount(text(0));
      return true;
    case pb::OCTET_LENGTH:
      *out = static_cast<std::int64_t>(
          arg_types[0] == pb::BYTEA ? FuncArg<Bytes>(args[0]).bytes.size() : text(0).size());
      return true;
    case pb::LOWER:
    case pb::UPPER:
      *out = AsciiFolded(text(0), func == pb::UPPER);
      return true;
    case pb::SUBSTR: {
      const std::int64_t count = args.size() > 2 ? int_arg(2) : 0;
      return Substr(text(0), int_arg(1), args.size() > 2 ? &count : nullptr, out, error);
    }
    case pb::STRPOS:
      *out = Strpos(text(0), text(1));
      return true;
    case pb::BTRIM:
    case pb::LTRIM:
    case pb::RTRIM: {
      const std::string_view set = args.size() > 1 ? std::string_view(text(1)) : " ";
      *out = Trim(text(0), set, func != pb::RTRIM, func != pb::LTRIM);
      return true;
    }
    case pb::REPLACE:
      *out = Replace(text(0), text(1), text(2));
      return true;
    case pb::LIKE:
    case pb::ILIKE: {
      bool matches = false;
      if (!EvalLike(text(0), text(1), func == pb::ILIKE, &matches, error)) return false;
      *out = matches;
      return true;
    }
    case pb::ABS:
      return AbsOf(args[0], arg_types[0], out, error);
    case pb::ROUND:
    case pb::TRUNC:
    case pb::FLOOR:
    case pb::CEIL:
      return Rounding(func, args, arg_types, out, error);
    case pb::POWER:
      if (arg_types[0] == pb::FLOAT64) {
        return FloatPower(FuncArg<double>(args[0]), FuncArg<double>(args[1]), out, error);
      }
      {
        const Numeric& x = FuncArg<Numeric>(args[0]);
        const Numeric& y = FuncArg<Numeric>(args[1]);
        return FuncResult(IsInt4Exponent(y) ? NumericPower(x, y) : NumericPowerByLogarithm(x, y),
                          out, error);
      }
    case pb::SQRT:
      if (arg_types[0] == pb::FLOAT64) {
        const double x = FuncArg<double>(args[0]);
        if (x < 0) {
          *error = "cannot take square root of a negative number";
          return false;
        }
        *out = std::sqrt(x);
        return true;
      }
      return FuncResult(NumericSqrt(FuncArg<Numeric>(args[0])), out, error);
    case pb::DATE_TRUNC:
      return DateTrunc(text(0), args[1], arg_types[1], out, error);
    case pb::EXTRACT:
    case pb::DATE_PART: {
      Result<Numeric> value = ExtractOf(text(0), args[1], arg_types[1], func == pb::DATE_PART);
      if (!value.ok()) {
        *error = value.status().message();
        return false;
      }
      if (func == pb::EXTRACT) {
        *out = *value;
        return true;
      }
      const FloatPartField field = FloatPartFieldOf(text(0));
      *out = field == FloatPartField::kOther ? NumericToDouble(*value)
                                             : DatePartDouble(field, *value, args[1], arg_types[1]);
      return true;
    }
    default:
      TANDEM_CHECK(false, "a function validation does not know");
  }
  return false;
}

}  // namespace tandem::workers
