// numeric: PostgreSQL's exact decimal (DESIGN §16), in 38 significant digits.
//
// A Numeric is coefficient × 10^-scale with |coefficient| < 10^38 and 0 <= scale <= 38. The scale
// is the display scale (PostgreSQL's dscale): 1.5 and 1.50 are the same value and compare equal as
// values (CompareNumericValue), but print as written. The datum order (CompareNumeric, what the row
// encoding preserves) orders by value and then by scale, so it is total and the encoding of equal
// datums is equal bytes.
//
// Arithmetic follows PostgreSQL: + and - give the larger scale, * the sum of the scales, / and
// avg the scale of select_div_scale (at least 16 significant digits, at least the operands'
// scales, at most 38), rounding half away from zero. A result that needs more than 38 digits
// before its rounding place, a division by zero, or a text that is not a number is a data error
// (Status::DataError), never a wrong value. Infinity and NaN are not numerics here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tandem {

inline constexpr int kNumericMaxDigits = 38;  // the largest precision numeric(p,s) may declare

struct Numeric {
  // The coefficient as two halves, so a Datum stays 8-byte aligned: (hi << 64) | lo is the
  // two's complement 128-bit coefficient.
  std::uint64_t lo = 0;
  std::int64_t hi = 0;
  std::uint8_t scale = 0;

  static Numeric FromParts(__int128 coefficient, int scale);
  __int128 coefficient() const {
    return static_cast<__int128>((static_cast<unsigned __int128>(static_cast<std::uint64_t>(hi))
                                  << 64) |
                                 lo);
  }
  friend bool operator==(const Numeric& a, const Numeric& b) {
    return a.lo == b.lo && a.hi == b.hi && a.scale == b.scale;
  }
};
static_assert(sizeof(Numeric) == 24 && alignof(Numeric) == 8);

// Value order (1.5 == 1.50): SQL's =, <, and the aggregates.
int CompareNumericValue(const Numeric& a, const Numeric& b);
// Datum order: value, then scale.
int CompareNumeric(const Numeric& a, const Numeric& b);

// PostgreSQL's text form: [-]digits[.digits] ("12.50", "-0.5", "3"). Output: no exponent, exactly
// `scale` digits after the point, "0" before it when the value is below 1.
std::string NumericText(const Numeric& n);
// Input as PostgreSQL's numeric_in takes it: blanks around, a sign, digits with an optional point,
// an exponent (1.5e3 is 1500, scale 0), "NaN"/"Infinity" refused (no such numerics here).
Result<Numeric> ParseNumeric(std::string_view text);

// Arithmetic with PostgreSQL's result scales and rounding; overflow and division by zero are data
// errors with PostgreSQL's words ("value overflows numeric format",
// "division by zero").
Result<Numeric> NumericAdd(const Numeric& a, const Numeric& b);
Result<Numeric> NumericSub(const Numeric& a, const Numeric& b);
Result<Numeric> NumericMul(const Numeric& a, const Numeric& b);
Result<Numeric> NumericDiv(const Numeric& a, const Numeric& b);  // select_div_scale
Result<Numeric> NumericMod(const Numeric& a, const Numeric& b);  // sign of a, as PostgreSQL
Numeric NumericNegate(const Numeric& a);
Numeric NumericAbs(const Numeric& a);
int NumericSign(const Numeric& a);  // -1, 0, 1
// round(n, s) / trunc(n, s) / floor / ceil as PostgreSQL: s may be negative (round(1234, -2) is
// 1200); the result's scale is max(s, 0).
Result<Numeric> NumericRound(const Numeric& a, int scale);
Result<Numeric> NumericTrunc(const Numeric& a, int scale);
Result<Numeric> NumericFloor(const Numeric& a);
Result<Numeric> NumericCeil(const Numeric& a);
// avg: sum / count with the division's scale (PostgreSQL's numeric_avg).
Result<Numeric> NumericAvg(const Numeric& sum, std::int64_t count);

// Casts as PostgreSQL does them.
Numeric NumericFromInt64(std::int64_t v);
// float8 → numeric: the double's shortest text that reads back to it, at most 15 significant
// digits (PostgreSQL prints with DBL_DIG); NaN and ±inf are data errors ("cannot convert NaN to
// numeric"), as is a magnitude of 10^38 or more.
Result<Numeric> NumericFromDouble(double v);
// → integer: rounded half away from zero; outside [min, max] a data error ("smallint out of
// range" / "integer out of range" / "bigint out of range" as `type_name` says).
Result<std::int64_t> NumericToInt64(const Numeric& a, std::int64_t min, std::int64_t max,
                                    std::string_view type_name);
double NumericToDouble(const Numeric& a);  // the nearest double, as strtod of its text
// numeric(precision, scale): rounded to `scale` digits, then more than precision - scale digits
// before the point is a data error ("numeric field overflow", with PostgreSQL's detail).
Result<Numeric> NumericApplyTypmod(const Numeric& a, int precision, int scale);

}  // namespace tandem
