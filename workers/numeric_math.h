// power(numeric, numeric) for the exponents PostgreSQL does not take as an int4 (DESIGN §16):
// y not an integer, or an integer beyond int4. base/numeric.h's NumericPower does the int4 ones
// (power_var_int's path); this is power_var's other path, exp(y · ln x), computed in 400-bit
// fixed point so that the one rounding at the end is right to every digit a numeric keeps.
//
// Scale as PostgreSQL's power_var: 16 - trunc(log10(result)), at least the scales of x and y,
// here at most 38; rounded half away from zero. 0 to a positive power is 0 with scale 16; a
// negative base with an integral exponent is negative when the exponent is odd. Errors
// as PostgreSQL's: "zero raised to a negative power is undefined", "a negative number raised to a
// non-integer power yields a complex result", and a result of 38 digits or more is "value
// overflows numeric format" (numeric.h's limit).
#pragma once

#include "base/numeric.h"
#include "base/status.h"

namespace tandem::workers {

// Whether `y` is an integer within int4: power(x, y) is then NumericPower's (base/numeric.h).
bool IsInt4Exponent(const Numeric& y);

// power(x, y) for every other y.
Result<Numeric> NumericPowerByLogarithm(const Numeric& x, const Numeric& y);

}  // namespace tandem::workers
