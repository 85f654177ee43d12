// sqrt and power of numerics, with PostgreSQL 15's result scales (DESIGN §16). Kept apart from
// base/numeric.h's arithmetic because they need more than 128 bits in between: each works on a
// small unsigned big integer of its own and rounds once, at the end, half away from zero.
//
//   sqrt(x):     scale max(15 - 2·w, scale(x)), w the base-10000 weight of x (PostgreSQL's
//                numeric_sqrt: at least 16 significant digits); a negative x is a data error
//                ("cannot take square root of a negative number").
//   power(x, n), n an integer: scale max(16, scale(x)); 0 to a negative power is a data error
//                ("zero raised to a negative power is undefined").
//   power(x, y), y not an integer: scale 16 - trunc(log10(result)), at least the scales of x and
//                y; a negative x is a data error ("a negative number raised to a non-integer
//                power yields a complex result"); 0 to it is 0.
// Every scale is at most 38; a result of 38 digits or more is a data error ("value overflows
// numeric format"), as for the other numeric arithmetic.
#pragma once

#include "base/numeric.h"
#include "base/status.h"

namespace tandem::workers {

Result<Numeric> NumericSqrt(const Numeric& x);
Result<Numeric> NumericPower(const Numeric& x, const Numeric& y);

}  // namespace tandem::workers
