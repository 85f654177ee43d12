#include "workers/arith.h"

#include <cmath>
#include <cstdint>

#include "base/check.h"
#include "base/datetime.h"
#include "base/numeric.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

// INT64 keeps the runtime's own words (its suites and clients know them); INT16 and INT32 say
// PostgreSQL's.
bool IntArith(pb::BinaryFunc func, pb::ScalarType type, std::int64_t x, std::int64_t y, Datum* out,
              std::string* error) {
  const bool int8 = type == pb::INT64;
  const IntegerRange range = IntegerRangeOf(type);
  auto overflow = [&](const char* op) {
    *error = int8 ? std::string("integer overflow in ") + op : range.out_of_range;
    return false;
  };
  std::int64_t r = 0;
  switch (func) {
    case pb::ADD:
      if (__builtin_add_overflow(x, y, &r)) return overflow("+");
      break;
    case pb::SUB:
      if (__builtin_sub_overflow(x, y, &r)) return overflow("-");
      break;
    case pb::MUL:
      if (__builtin_mul_overflow(x, y, &r)) return overflow("*");
      break;
    case pb::DIV:
      if (y == 0) return *error = "division by zero", false;
      if (x == INT64_MIN && y == -1) return overflow("/");
      r = x / y;
      break;
    case pb::MOD:
      if (y == 0) return *error = "division by zero", false;
      r = (y == -1) ? 0 : x % y;
      break;
    default:
      TANDEM_CHECK(false, "not an arithmetic function");
  }
  if (r < range.min || r > range.max) return overflow("");
  *out = r;
  return true;
}

// A float4 result: PostgreSQL's float4 operators refuse an infinite result of finite operands
// and a zero result of nonzero ones (float_overflow_error / float_underflow_error).
bool Float32Result(double r, bool operands_finite, bool operands_nonzero, Datum* out,
                   std::string* error) {
  if (std::isnan(r)) {
    *out = r;
    return true;
  }
  const float f = static_cast<float>(r);  // rounded as float4's operators round
  if (std::isinf(f)) {
    if (operands_finite) return *error = "value out of range: overflow", false;
    *out = r;  // an infinite operand gives an infinite result
    return true;
  }
  if (f == 0.0f && r != 0.0 && operands_nonzero) {
    return *error = "value out of range: underflow", false;
  }
  *out = static_cast<double>(f);
  return true;
}

bool FloatArith(pb::BinaryFunc func, pb::ScalarType type, double x, double y, Datum* out,
                std::string* error) {
  double r = 0;
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
      if (y == 0) return *error = "division by zero", false;
      r = x / y;
      break;
    case pb::MOD:
      if (y == 0) return *error = "division by zero", false;
      r = std::fmod(x, y);
      break;
    default:
      TANDEM_CHECK(false, "not an arithmetic function");
  }
  if (type == pb::FLOAT64) {
    *out = r;
    return true;
  }
  const bool finite = std::isfinite(x) && std::isfinite(y);
  const bool nonzero = (func == pb::MUL || func == pb::DIV) && x != 0 && y != 0;
  return Float32Result(r, finite, nonzero, out, error);
}

template <typename T>
bool Put(Result<T> r, Datum* out, std::string* error) {
  if (!r.ok()) return *error = r.status().message(), false;
  *out = std::move(r).value();
  return true;
}

bool NumericArith(pb::BinaryFunc func, const Numeric& x, const Numeric& y, Datum* out,
                  std::string* error) {
  switch (func) {
    case pb::ADD:
      return Put(NumericAdd(x, y), out, error);
    case pb::SUB:
      return Put(NumericSub(x, y), out, error);
    case pb::MUL:
      return Put(NumericMul(x, y), out, error);
    case pb::DIV:
      return Put(NumericDiv(x, y), out, error);
    case pb::MOD:
      return Put(NumericMod(x, y), out, error);
    default:
      TANDEM_CHECK(false, "not an arithmetic function");
  }
  return false;
}

// TIME ± the time part of an interval, wrapping at midnight (PostgreSQL's time_pl_interval).
TimeOfDay TimePlusMicros(TimeOfDay t, std::int64_t micros) {
  std::int64_t r = (t.micros + micros % kMicrosPerDay) % kMicrosPerDay;
  if (r < 0) r += kMicrosPerDay;
  return TimeOfDay{r};
}

bool DateTimeArith(pb::BinaryFunc func, pb::ScalarType l, pb::ScalarType r, const Datum& a,
                   const Datum& b, Datum* out, std::string* error) {
  const bool add = func == pb::ADD;
  auto is = [&](pb::ScalarType x, pb::ScalarType y) { return l == x && r == y; };
  // An interval to add: itself, or negated for a subtraction.
  auto signed_interval = [&](const Interval& i) -> Result<Interval> {
    return add ? Result<Interval>(i) : IntervalNegate(i);
  };
  if (func == pb::ADD || func == pb::SUB) {
    if (is(pb::DATE, pb::INT32) || is(pb::INT32, pb::DATE)) {
      const Date d = std::get<Date>(l == pb::DATE ? a : b);
      const std::int64_t n = std::get<std::int64_t>(l == pb::DATE ? b : a);
      return Put(DatePlusDays(d, add ? n : -n), out, error);
    }
    if (is(pb::DATE, pb::DATE)) {
      *out = static_cast<std::int64_t>(std::get<Date>(a).days) - std::get<Date>(b).days;
      return true;
    }
    if (is(pb::INTERVAL, pb::INTERVAL)) {
      const Interval &x = std::get<Interval>(a), &y = std::get<Interval>(b);
      return Put(add ? IntervalAdd(x, y) : IntervalSub(x, y), out, error);
    }
    if (is(pb::DATE, pb::TIME)) {
      auto day = TimestampOfDate(std::get<Date>(a));
      if (!day.ok()) return *error = day.status().message(), false;
      return Put(TimestampPlusInterval(*day, Interval{0, 0, std::get<TimeOfDay>(b).micros}), out,
                 error);
    }
    if (l == r) {  // TIMESTAMP, TIMESTAMPTZ or TIME minus itself: an interval
      switch (l) {
        case pb::TIMESTAMP:
          return Put(TimestampDiff(std::get<Timestamp>(a).micros, std::get<Timestamp>(b).micros),
                     out, error);
        case pb::TIMESTAMPTZ:
          return Put(
              TimestampDiff(std::get<TimestampTz>(a).micros, std::get<TimestampTz>(b).micros), out,
              error);
        case pb::TIME:
          *out = Interval{0, 0, std::get<TimeOfDay>(a).micros - std::get<TimeOfDay>(b).micros};
          return true;
        default:
          break;
      }
    }
    // One side an interval, the other a date, timestamp, timestamptz or time.
    const bool interval_left = l == pb::INTERVAL;
    const Datum& base = interval_left ? b : a;
    auto interval = signed_interval(std::get<Interval>(interval_left ? a : b));
    if (!interval.ok()) return *error = interval.status().message(), false;
    switch (interval_left ? r : l) {
      case pb::DATE:
        return Put(DatePlusInterval(std::get<Date>(base), *interval), out, error);
      case pb::TIMESTAMP:
        return Put(TimestampPlusInterval(std::get<Timestamp>(base), *interval), out, error);
      case pb::TIMESTAMPTZ:
        return Put(TimestampTzPlusInterval(std::get<TimestampTz>(base), *interval), out, error);
      case pb::TIME:
        *out = TimePlusMicros(std::get<TimeOfDay>(base), interval->micros);
        return true;
      default:
        break;
    }
  } else if (func == pb::MUL) {
    const bool interval_left = l == pb::INTERVAL;
    return Put(IntervalMul(std::get<Interval>(interval_left ? a : b),
                           std::get<double>(interval_left ? b : a)),
               out, error);
  } else if (func == pb::DIV) {
    return Put(IntervalDiv(std::get<Interval>(a), std::get<double>(b)), out, error);
  }
  TANDEM_CHECK(false, "a date/time operator that validation does not type passed it");
  return false;
}

}  // namespace

IntegerRange IntegerRangeOf(pb::ScalarType type) {
  switch (type) {
    case pb::INT16:
      return {INT16_MIN, INT16_MAX, "smallint out of range"};
    case pb::INT32:
      return {INT32_MIN, INT32_MAX, "integer out of range"};
    default:
      return {INT64_MIN, INT64_MAX, "bigint out of range"};
  }
}

bool EvalArith(pb::BinaryFunc func, pb::ScalarType left, pb::ScalarType right, const Datum& a,
               const Datum& b, Datum* out, std::string* error) {
  if (left == right) {
    switch (left) {
      case pb::INT16:
      case pb::INT32:
      case pb::INT64:
        return IntArith(func, left, std::get<std::int64_t>(a), std::get<std::int64_t>(b), out,
                        error);
      case pb::FLOAT32:
      case pb::FLOAT64:
        return FloatArith(func, left, std::get<double>(a), std::get<double>(b), out, error);
      case pb::NUMERIC:
        return NumericArith(func, std::get<Numeric>(a), std::get<Numeric>(b), out, error);
      default:
        break;
    }
  }
  return DateTimeArith(func, left, right, a, b, out, error);
}

bool EvalNegate(pb::ScalarType type, const Datum& a, Datum* out, std::string* error) {
  switch (type) {
    case pb::INT16:
    case pb::INT32:
    case pb::INT64: {
      const auto v = std::get<std::int64_t>(a);
      const IntegerRange range = IntegerRangeOf(type);
      if (v == INT64_MIN) return *error = "integer overflow in unary -", false;
      if (-v < range.min || -v > range.max) return *error = range.out_of_range, false;
      *out = -v;
      return true;
    }
    case pb::FLOAT32:
    case pb::FLOAT64:
      *out = -std::get<double>(a);
      return true;
    case pb::NUMERIC:
      *out = NumericNegate(std::get<Numeric>(a));
      return true;
    case pb::INTERVAL:
      return Put(IntervalNegate(std::get<Interval>(a)), out, error);
    default:
      TANDEM_CHECK(false, "NEGATE of a type validation refuses");
  }
  return false;
}

int CompareAsValues(pb::ScalarType type, const Datum& a, const Datum& b) {
  switch (type) {
    case pb::NUMERIC:
      return CompareNumericValue(std::get<Numeric>(a), std::get<Numeric>(b));
    case pb::INTERVAL:
      return CompareIntervalValue(std::get<Interval>(a), std::get<Interval>(b));
    default:
      return CompareDatum(a, b);
  }
}

}  // namespace tandem::workers
