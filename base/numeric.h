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
//
// Where 38 digits part us from PostgreSQL (whose numeric keeps up to 131072 digits before the
// point and 16383 after): a result's scale is the one PostgreSQL's rule gives, capped at 38 —
// the digits past the 38th decimal place rounded half away from zero (a text with 40 fraction
// digits, the product of two scale-20 numbers, round(x, 40), a quotient PostgreSQL would carry
// to scale 56) — and a magnitude of 10^38 or more at that scale is "value overflows numeric format"
// where PostgreSQL would answer (1e38, 123456789012345678901234567890 / 0.0000001, round(1.5, 40)
// at scale 38). The scale of a result never depends on its value beyond PostgreSQL's own rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/count.h"
#include "base/status.h"

namespace tandem {

inline constexpr int kNumericMaxDigits = 38;  // the largest precision numeric(p,s) may declare

struct Numeric {
  // The coefficient as two halves, so a Datum stays 8-byte aligned: (hi << 64) | lo is the
  // two's complement 128-bit coefficient.
  std::uint64_t lo = 0;
  std::int64_t hi = 0;
  std::uint8_t scale = 0;

  // REQUIRES: |coefficient| < 10^38 and 0 <= scale <= 38 (TANDEM_CHECK).
  static Numeric FromParts(Int128 coefficient, int scale);
  Int128 coefficient() const {
    return static_cast<Int128>((static_cast<UInt128>(static_cast<std::uint64_t>(hi)) << 64) | lo);
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
// an exponent (1.5e3 is 1500, scale 0; 1.23e-2 is 0.0123; blanks and a sign may precede its
// digits, as strtol reads it). Errors: `invalid input syntax for type numeric: "<text>"`;
// "numeric NaN/Infinity is not supported" for PostgreSQL's NaN, [+-]Infinity and [+-]inf (any
// case); "value overflows numeric format" for 10^38 or more after rounding to scale 38, and, as
// PostgreSQL, for an exponent of 2^30 - 1 or more either way or a display scale above 16383.
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
// 1200); the result's scale is max(s, 0), here at most 38 (round(0.5, 40) is 0.5 at scale 38).
// floor and ceil have scale 0.
Result<Numeric> NumericRound(const Numeric& a, int scale);
Result<Numeric> NumericTrunc(const Numeric& a, int scale);
Result<Numeric> NumericFloor(const Numeric& a);
Result<Numeric> NumericCeil(const Numeric& a);
// sqrt as PostgreSQL's numeric_sqrt: scale 16 - (the root's NBASE weight), at least the
// argument's, here at most 38 (sqrt(2) is 1.414213562373095, sqrt(0.0001) is 0.01000000000000000);
// rounded half away from zero. A negative argument is "cannot take square root of a negative
// number".
Result<Numeric> NumericSqrt(const Numeric& a);
// base ^ exponent as PostgreSQL's numeric_power. An integer exponent within int4: scale
// max(16, base's scale) (2 ^ 3 is 8.0000000000000000, 2 ^ -2 is 0.2500000000000000, 0 ^ 0 is
// 1.0000000000000000). Any other: exp(exponent × ln |base|) at power_var's scale, 16 significant
// digits from a first estimate of the result's weight, at least either operand's scale
// (2 ^ 0.5 is 1.4142135623730950, 123.456 ^ 7.89 is 31771028258180977.309); the sign of a
// negative base to an integer beyond int4 is the exponent's parity. Here at most scale 38,
// rounded half away from zero, so a result of 10^22 or more at scale 16 overflows. Errors as
// PostgreSQL's: "zero raised to a negative power is undefined", "a negative number raised to a
// non-integer power yields a complex result", "value overflows numeric format".
Result<Numeric> NumericPower(const Numeric& base, const Numeric& exponent);
// avg: sum / count with the division's scale (PostgreSQL's numeric_avg). Count 0 is "division by
// zero": the caller answers NULL for an empty group before asking. A count past int64 (a sum of
// multiplicities) is exact up to 38 digits (NumericFromCount).
Result<Numeric> NumericAvg(const Numeric& sum, Int128 count);

// Casts as PostgreSQL does them.
Numeric NumericFromInt64(std::int64_t v);
// A count or multiplicity as a numeric: exact below 10^38, else "value overflows numeric format".
Result<Numeric> NumericFromCount(Int128 count);
// float8 → numeric: the double printed "%.15g" (PostgreSQL's float8_numeric, DBL_DIG digits)
// and read back by ParseNumeric: 0.1 is 0.1, 1.0000000000000002 is 1, 1e20 is
// 100000000000000000000, 1e-300 is 0 at scale 38. NaN and ±inf are data errors ("cannot convert
// NaN to numeric", "cannot convert infinity to numeric"), as is a magnitude of 10^38 or more.
Result<Numeric> NumericFromDouble(double v);
// → integer: rounded half away from zero; outside [min, max] a data error ("smallint out of
// range" / "integer out of range" / "bigint out of range" as `type_name` says).
Result<std::int64_t> NumericToInt64(const Numeric& a, std::int64_t min, std::int64_t max,
                                    std::string_view type_name);
double NumericToDouble(const Numeric& a);  // the nearest double, as strtod of its text
// numeric(precision, scale): rounded to `scale` digits, then more than precision - scale digits
// before the point is a data error whose message is PostgreSQL's message and DETAIL joined as psql
// shows them: "numeric field overflow\nDETAIL:  A field with precision 5, scale 2 must round to
// an absolute value less than 10^3." (split at "\nDETAIL:  " for an ErrorResponse). As in
// PostgreSQL 15, scale may be negative (numeric(3,-2) keeps hundreds) or above precision.
// REQUIRES (TANDEM_CHECK; the binder refuses other typmods): 1 <= precision <= 38,
// -1000 <= scale <= 38.
Result<Numeric> NumericApplyTypmod(const Numeric& a, int precision, int scale);

}  // namespace tandem
