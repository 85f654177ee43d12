// numeric: PostgreSQL's exact decimal in 38 digits (numeric.h). Values are sign and magnitude
// here: a magnitude is an unsigned 128-bit coefficient, and every intermediate that can outgrow
// it (an operand aligned to the other's scale, a product, a dividend shifted for the quotient's
// scale) is a NumericWide, an unsigned 512-bit integer whose operations check that they never
// wrap. A result is made only through MakeNumeric, which refuses a magnitude of 10^38 or more.
// sqrt works on NumericWide too (an integer root); power on NumericFloat, a signed 60-digit decimal
// float over it, which also carries the ln and exp of non-integer exponents.
#include "base/numeric.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

#include "base/check.h"

namespace tandem {
namespace {

constexpr char kNumericOverflow[] = "value overflows numeric format";
constexpr char kNumericDivisionByZero[] = "division by zero";
// PostgreSQL's NUMERIC_MIN_SIG_DIGITS: a quotient gets at least this many significant digits.
constexpr int kNumericMinSigDigits = 16;
// PostgreSQL's NBASE digit: its numerics are base-10000 digits, and select_div_scale reads the
// weight and the value of the first one.
constexpr int kNumericDecDigits = 4;
// PostgreSQL's numeric_in refuses an exponent of INT_MAX / 2 or more (either sign) as overflow.
constexpr long kNumericExponentLimit = std::numeric_limits<int>::max() / 2;
// PostgreSQL's NUMERIC_DSCALE_MAX: a text with more digits after the point than this is its
// overflow error, even where our rounding to 38 would make it a number.
constexpr long kNumericDisplayScaleMax = 16383;

constexpr std::array<UInt128, 39> MakeNumericPow10() {
  std::array<UInt128, 39> p{};
  p[0] = 1;
  for (std::size_t k = 1; k < p.size(); ++k) p[k] = p[k - 1] * 10;
  return p;
}
constexpr std::array<UInt128, 39> kNumericPow10 = MakeNumericPow10();  // 10^0 .. 10^38
constexpr UInt128 kNumericLimit = kNumericPow10[38];                   // magnitudes are below it

UInt128 NumericMagnitude(const Numeric& n) {
  const Int128 c = n.coefficient();
  return c < 0 ? UInt128{0} - static_cast<UInt128>(c) : static_cast<UInt128>(c);
}

// The number of decimal digits of m (0 has none).
int NumericDigitCount(UInt128 m) {
  int d = 0;
  while (d < 39 && m >= kNumericPow10[d]) ++d;
  return d;
}

// An unsigned 512-bit integer, little-endian 64-bit limbs: room for a 38-digit coefficient times
// 10^116. Every operation TANDEM_CHECKs that it does not wrap: the callers bound their operands.
struct NumericWide {
  std::array<std::uint64_t, 8> limb{};

  static NumericWide From(UInt128 v) {
    NumericWide w;
    w.limb[0] = static_cast<std::uint64_t>(v);
    w.limb[1] = static_cast<std::uint64_t>(v >> 64);
    return w;
  }
  bool FitsU128() const {
    for (std::size_t i = 2; i < limb.size(); ++i) {
      if (limb[i] != 0) return false;
    }
    return true;
  }
  UInt128 Low128() const { return (static_cast<UInt128>(limb[1]) << 64) | limb[0]; }
  bool IsZero() const {
    for (std::uint64_t l : limb) {
      if (l != 0) return false;
    }
    return true;
  }
  int BitLength() const {
    for (int i = static_cast<int>(limb.size()) - 1; i >= 0; --i) {
      if (limb[i] != 0) return i * 64 + (64 - __builtin_clzll(limb[i]));
    }
    return 0;
  }
  bool Bit(int i) const { return (limb[i / 64] >> (i % 64)) & 1; }
};

int NumericWideCompare(const NumericWide& a, const NumericWide& b) {
  for (int i = static_cast<int>(a.limb.size()) - 1; i >= 0; --i) {
    if (a.limb[i] != b.limb[i]) return a.limb[i] < b.limb[i] ? -1 : 1;
  }
  return 0;
}

NumericWide NumericWideAdd(const NumericWide& a, const NumericWide& b) {
  NumericWide r;
  UInt128 carry = 0;
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    const UInt128 s = static_cast<UInt128>(a.limb[i]) + b.limb[i] + carry;
    r.limb[i] = static_cast<std::uint64_t>(s);
    carry = s >> 64;
  }
  TANDEM_CHECK(carry == 0, "numeric: a 512-bit sum wrapped");
  return r;
}

// REQUIRES: a >= b.
NumericWide NumericWideSub(const NumericWide& a, const NumericWide& b) {
  NumericWide r;
  std::uint64_t borrow = 0;
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    const std::uint64_t bi = b.limb[i];
    const std::uint64_t d = a.limb[i] - bi - borrow;
    borrow = (a.limb[i] < bi || (a.limb[i] == bi && borrow)) ? 1 : 0;
    r.limb[i] = d;
  }
  TANDEM_CHECK(borrow == 0, "numeric: a 512-bit difference went below zero");
  return r;
}

NumericWide NumericWideMulSmall(const NumericWide& a, std::uint64_t m) {
  NumericWide r;
  UInt128 carry = 0;
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    const UInt128 p = static_cast<UInt128>(a.limb[i]) * m + carry;
    r.limb[i] = static_cast<std::uint64_t>(p);
    carry = p >> 64;
  }
  TANDEM_CHECK(carry == 0, "numeric: a 512-bit product wrapped");
  return r;
}

NumericWide NumericWideMul(const NumericWide& a, const NumericWide& b) {
  NumericWide r;
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    if (a.limb[i] == 0) continue;
    UInt128 carry = 0;
    for (std::size_t j = 0; j < b.limb.size(); ++j) {
      const UInt128 p = static_cast<UInt128>(a.limb[i]) * b.limb[j] + carry;
      if (i + j >= r.limb.size()) {
        TANDEM_CHECK(p == 0, "numeric: a 512-bit product wrapped");
        continue;
      }
      const UInt128 s = static_cast<UInt128>(r.limb[i + j]) + static_cast<std::uint64_t>(p);
      r.limb[i + j] = static_cast<std::uint64_t>(s);
      carry = (p >> 64) + (s >> 64);
    }
    TANDEM_CHECK(carry == 0, "numeric: a 512-bit product wrapped");
  }
  return r;
}

// a × 10^k.
NumericWide NumericWideMulPow10(NumericWide a, int k) {
  TANDEM_CHECK(k >= 0, "numeric: a negative power of ten");
  while (k > 0) {
    const int step = k < 19 ? k : 19;
    a = NumericWideMulSmall(a, static_cast<std::uint64_t>(kNumericPow10[step]));
    k -= step;
  }
  return a;
}

// a / d and a % d. REQUIRES: 0 < d < 2^127 (every divisor here is a magnitude or a power of ten
// up to 10^38), so the remainder doubled and a bit added never wraps.
NumericWide NumericWideDivMod(const NumericWide& a, UInt128 d, UInt128* remainder) {
  TANDEM_CHECK(d != 0 && (d >> 127) == 0, "numeric: a divisor out of range");
  NumericWide q;
  UInt128 r = 0;
  if ((d >> 64) == 0) {
    const std::uint64_t d64 = static_cast<std::uint64_t>(d);
    for (int i = static_cast<int>(a.limb.size()) - 1; i >= 0; --i) {
      const UInt128 cur = (r << 64) | a.limb[i];  // r < d < 2^64: no wrap
      q.limb[i] = static_cast<std::uint64_t>(cur / d64);
      r = cur % d64;
    }
  } else {
    for (int i = a.BitLength() - 1; i >= 0; --i) {
      r = (r << 1) | (a.Bit(i) ? 1 : 0);
      if (r >= d) {
        r -= d;
        q.limb[i / 64] |= std::uint64_t{1} << (i % 64);
      }
    }
  }
  *remainder = r;
  return q;
}

// a / d rounded half away from zero (a is a magnitude). REQUIRES as NumericWideDivMod.
NumericWide NumericWideDivRound(const NumericWide& a, UInt128 d) {
  UInt128 r;
  NumericWide q = NumericWideDivMod(a, d, &r);
  if (r >= d - r) q = NumericWideAdd(q, NumericWide::From(1));  // 2r >= d, without wrapping
  return q;
}

// The one way a computed value becomes a Numeric: a magnitude of 10^38 or more is PostgreSQL's
// overflow error, never a wrong value.
Result<Numeric> MakeNumeric(bool negative, const NumericWide& magnitude, int scale) {
  if (!magnitude.FitsU128() || magnitude.Low128() >= kNumericLimit) {
    return Status::DataError(kNumericOverflow);
  }
  const Int128 m = static_cast<Int128>(magnitude.Low128());
  return Numeric::FromParts(negative ? -m : m, scale);
}

// |n| as a coefficient at `scale` >= n.scale (exact).
NumericWide NumericAligned(const Numeric& n, int scale) {
  return NumericWideMulPow10(NumericWide::From(NumericMagnitude(n)), scale - n.scale);
}

// (negative_a ? -a : a) + (negative_b ? -b : b), both at `scale`.
Result<Numeric> NumericSignedSum(bool negative_a, const NumericWide& a, bool negative_b,
                                 const NumericWide& b, int scale) {
  if (negative_a == negative_b) return MakeNumeric(negative_a, NumericWideAdd(a, b), scale);
  const int c = NumericWideCompare(a, b);
  if (c >= 0) return MakeNumeric(negative_a, NumericWideSub(a, b), scale);
  return MakeNumeric(negative_b, NumericWideSub(b, a), scale);
}

// PostgreSQL's NBASE view of n: the weight of its first base-10000 digit (n = d × 10000^weight +
// ...) and that digit. Zero has weight 0 and digit 0, as PostgreSQL's empty digit array does.
void NumericFirstBaseDigit(const Numeric& n, int* weight, int* digit) {
  const UInt128 m = NumericMagnitude(n);
  if (m == 0) {
    *weight = 0;
    *digit = 0;
    return;
  }
  const int exponent10 = NumericDigitCount(m) - 1 - n.scale;  // 10^e <= |n| < 10^(e+1)
  const int w = exponent10 >= 0 ? exponent10 / kNumericDecDigits
                                : -((-exponent10 + kNumericDecDigits - 1) / kNumericDecDigits);
  const int shift = n.scale + w * kNumericDecDigits;  // |n| / 10000^w = m / 10^shift
  const UInt128 d = shift >= 0 ? m / kNumericPow10[shift] : m * kNumericPow10[-shift];
  *weight = w;
  *digit = static_cast<int>(d);
}

// PostgreSQL's select_div_scale: at least kNumericMinSigDigits significant digits in the quotient
// and at least either operand's scale; here at most 38.
int NumericDivScale(const Numeric& a, const Numeric& b) {
  int weight_a, digit_a, weight_b, digit_b;
  NumericFirstBaseDigit(a, &weight_a, &digit_a);
  NumericFirstBaseDigit(b, &weight_b, &digit_b);
  int quotient_weight = weight_a - weight_b;
  if (digit_a <= digit_b) --quotient_weight;
  int scale = kNumericMinSigDigits - quotient_weight * kNumericDecDigits;
  scale = std::max({scale, static_cast<int>(a.scale), static_cast<int>(b.scale), 0});
  return std::min(scale, kNumericMaxDigits);
}

// |n| rounded (or truncated) to `scale` digits, which may be negative, as a coefficient at
// result_scale = min(max(scale, 0), 38); a carry past 38 digits is the overflow error.
Result<Numeric> NumericRescale(const Numeric& n, int scale, bool round) {
  scale = std::clamp(scale, -2000, 2000);  // PostgreSQL's NUMERIC_MAX_RESULT_SCALE
  const int result_scale = std::min(std::max(scale, 0), kNumericMaxDigits);
  const bool negative = n.coefficient() < 0;
  const UInt128 m = NumericMagnitude(n);
  if (scale >= n.scale) return MakeNumeric(negative, NumericAligned(n, result_scale), result_scale);
  const int drop = n.scale - scale;  // digits to drop, > 0
  if (drop > kNumericMaxDigits) {    // |n| < 10^38 <= half of 10^drop: rounds to zero
    return Numeric::FromParts(0, result_scale);
  }
  const NumericWide whole = NumericWide::From(m);
  UInt128 r;
  NumericWide q = round ? NumericWideDivRound(whole, kNumericPow10[drop])
                        : NumericWideDivMod(whole, kNumericPow10[drop], &r);
  return MakeNumeric(negative, NumericWideMulPow10(q, result_scale - scale), result_scale);
}

// sqrt and power: NumericWide as a number of up to 154 digits.

NumericWide NumericWideShiftLeft1(const NumericWide& a) {
  NumericWide r;
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    r.limb[i] = (a.limb[i] << 1) | carry;
    carry = a.limb[i] >> 63;
  }
  TANDEM_CHECK(carry == 0, "numeric: a 512-bit shift wrapped");
  return r;
}

// a >> k, 0 < k < 64.
NumericWide NumericWideShiftRight(const NumericWide& a, int k) {
  NumericWide r;
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    r.limb[i] = a.limb[i] >> k;
    if (i + 1 < a.limb.size()) r.limb[i] |= a.limb[i + 1] << (64 - k);
  }
  return r;
}

// 10^k as a NumericWide, 0 <= k <= 154.
const NumericWide& NumericWidePow10(int k) {
  static const std::array<NumericWide, 155> table = [] {
    std::array<NumericWide, 155> t{};
    t[0] = NumericWide::From(1);
    for (std::size_t i = 1; i < t.size(); ++i) t[i] = NumericWideMulSmall(t[i - 1], 10);
    return t;
  }();
  TANDEM_CHECK(k >= 0 && k < 155, "numeric: a power of ten beyond 10^154");
  return table[static_cast<std::size_t>(k)];
}

// The number of decimal digits of a (0 has none).
int NumericWideDigitCount(const NumericWide& a) {
  int lo = 0, hi = 155;  // the count is the least k with a < 10^k: in [lo, hi]
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (NumericWideCompare(a, NumericWidePow10(mid)) < 0) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  TANDEM_CHECK(lo < 155, "numeric: a number beyond 154 digits");
  return lo;
}

// a / 10^k, truncated or rounded half away from zero (only the first dropped digit decides).
NumericWide NumericWideDivPow10(NumericWide a, int k, bool round) {
  if (k <= 0) return a;
  UInt128 r;
  for (int left = k - 1; left > 0;) {
    const int step = std::min(left, kNumericMaxDigits);
    a = NumericWideDivMod(a, kNumericPow10[step], &r);
    left -= step;
  }
  a = NumericWideDivMod(a, 10, &r);
  if (round && r >= 5) a = NumericWideAdd(a, NumericWide::From(1));
  return a;
}

// a / d, truncated, for any d > 0 (shift and subtract).
NumericWide NumericWideDivWide(const NumericWide& a, const NumericWide& d) {
  TANDEM_CHECK(!d.IsZero(), "numeric: a division by zero inside");
  NumericWide q, r;
  for (int i = a.BitLength() - 1; i >= 0; --i) {
    r = NumericWideShiftLeft1(r);
    if (a.Bit(i)) r.limb[0] |= 1;
    if (NumericWideCompare(r, d) >= 0) {
      r = NumericWideSub(r, d);
      q.limb[static_cast<std::size_t>(i / 64)] |= std::uint64_t{1} << (i % 64);
    }
  }
  return q;
}

// floor(sqrt(a)), digit by digit in base 4.
NumericWide NumericWideSqrt(NumericWide a) {
  NumericWide root, bit;
  const int top = a.BitLength();
  if (top == 0) return root;
  const int start = (top - 1) / 2 * 2;  // the highest power of 4 <= a
  bit.limb[static_cast<std::size_t>(start / 64)] = std::uint64_t{1} << (start % 64);
  while (!bit.IsZero()) {
    const NumericWide trial = NumericWideAdd(root, bit);
    if (NumericWideCompare(a, trial) >= 0) {
      a = NumericWideSub(a, trial);
      root = NumericWideAdd(NumericWideShiftRight(root, 1), bit);
    } else {
      root = NumericWideShiftRight(root, 1);
    }
    bit = NumericWideShiftRight(bit, 2);
  }
  return root;
}

// A signed decimal float for sqrt-free power: (-1)^negative × m × 10^e, m kept to
// kNumericFloatDigits significant digits, rounded half away from zero after each step. Exact while
// every intermediate fits those digits (2^100, 0.5^10, 1.5^3); otherwise each step is off by at
// most about a unit in its 60th digit, and the at most 64 squarings of an int4 power or the
// reductions of ln and exp below leave more than 45 correct digits of a result that shows at most
// 38 — PostgreSQL's power_var_int and exp_var also work with guard digits and round once at the
// end.
constexpr int kNumericFloatDigits = 60;
struct NumericFloat {
  NumericWide m;
  std::int64_t e = 0;
  bool negative = false;
};

NumericFloat NumericFloatNormalize(NumericFloat f) {
  const int digits = NumericWideDigitCount(f.m);
  if (digits > kNumericFloatDigits) {
    f.m = NumericWideDivPow10(f.m, digits - kNumericFloatDigits, /*round=*/true);
    f.e += digits - kNumericFloatDigits;
  }
  if (f.m.IsZero()) f.negative = false;
  return f;
}

NumericFloat NumericFloatOf(const Numeric& n) {
  return {NumericWide::From(NumericMagnitude(n)), -static_cast<std::int64_t>(n.scale),
          NumericSign(n) < 0};
}
NumericFloat NumericFloatOfInt(std::uint64_t v) { return {NumericWide::From(v), 0, false}; }

// |f| < 10^top: the place just above the leading digit.
std::int64_t NumericFloatTop(const NumericFloat& f) { return f.e + NumericWideDigitCount(f.m); }

NumericFloat NumericFloatMul(const NumericFloat& a, const NumericFloat& b) {
  return NumericFloatNormalize({NumericWideMul(a.m, b.m), a.e + b.e, a.negative != b.negative});
}

// a / b. REQUIRES: b != 0. The dividend is widened to 121 digits so the quotient keeps 60.
NumericFloat NumericFloatDiv(const NumericFloat& a, const NumericFloat& b) {
  if (a.m.IsZero()) return a;
  const int shift = 2 * kNumericFloatDigits + 1 - NumericWideDigitCount(a.m);
  return NumericFloatNormalize({NumericWideDivWide(NumericWideMulPow10(a.m, shift), b.m),
                                a.e - shift - b.e, a.negative != b.negative});
}

NumericFloat NumericFloatAdd(const NumericFloat& a, const NumericFloat& b) {
  if (a.m.IsZero()) return b;
  if (b.m.IsZero()) return a;
  // Both at a common exponent 122 digits below the larger top: what falls below it is far below
  // the 60 digits kept.
  const std::int64_t bottom =
      std::max(NumericFloatTop(a), NumericFloatTop(b)) - (2 * kNumericFloatDigits + 2);
  const auto at_bottom = [bottom](const NumericFloat& f) {
    if (f.e >= bottom) return NumericWideMulPow10(f.m, static_cast<int>(f.e - bottom));
    const std::int64_t drop = bottom - f.e;
    if (drop > NumericWideDigitCount(f.m)) return NumericWide{};
    return NumericWideDivPow10(f.m, static_cast<int>(drop), /*round=*/false);
  };
  const NumericWide ma = at_bottom(a), mb = at_bottom(b);
  if (a.negative == b.negative) {
    return NumericFloatNormalize({NumericWideAdd(ma, mb), bottom, a.negative});
  }
  if (NumericWideCompare(ma, mb) >= 0) {
    return NumericFloatNormalize({NumericWideSub(ma, mb), bottom, a.negative});
  }
  return NumericFloatNormalize({NumericWideSub(mb, ma), bottom, b.negative});
}

NumericFloat NumericFloatSub(const NumericFloat& a, NumericFloat b) {
  b.negative = !b.negative;
  return NumericFloatAdd(a, b);
}

// sqrt(a), a >= 0: the integer root of a widened to 122 or 123 digits, an even exponent.
NumericFloat NumericFloatSqrt(const NumericFloat& a) {
  int shift = 2 * kNumericFloatDigits + 2 - NumericWideDigitCount(a.m);
  if ((a.e - shift) % 2 != 0) ++shift;
  return NumericFloatNormalize(
      {NumericWideSqrt(NumericWideMulPow10(a.m, shift)), (a.e - shift) / 2, false});
}

// f rounded half away from zero to `scale` decimal places (still a float).
NumericFloat NumericFloatRound(NumericFloat f, std::int64_t scale) {
  const std::int64_t drop = -(f.e + scale);
  if (drop <= 0) return f;
  if (drop > NumericWideDigitCount(f.m)) return NumericFloat{};
  f.m = NumericWideDivPow10(f.m, static_cast<int>(drop), /*round=*/true);
  f.e += drop;
  return NumericFloatNormalize(f);
}

// The nearest double, as strtod reads the float's decimal text.
double NumericFloatToDouble(const NumericFloat& f) {
  std::string digits;
  NumericWide m = f.m;
  do {
    UInt128 r;
    m = NumericWideDivMod(m, 10, &r);
    digits.push_back(static_cast<char>('0' + static_cast<int>(r)));
  } while (!m.IsZero());
  std::string text = f.negative ? "-" : "";
  text.append(digits.rbegin(), digits.rend());
  text += "e" + std::to_string(f.e);
  double out = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range) {
    return f.e > 0 ? (f.negative ? -HUGE_VAL : HUGE_VAL) : 0.0;
  }
  TANDEM_CHECK(ec == std::errc() && ptr == text.data() + text.size(),
               "numeric: a float's text did not read as a double");
  return out;
}

// ln(x), x > 0: square roots until x is within 0.01 of 1, then
// ln x = 2^(k+1) × atanh((x - 1) / (x + 1)) by its series.
NumericFloat NumericFloatLn(NumericFloat x) {
  const NumericFloat one = NumericFloatOfInt(1);
  int k = 0;
  for (;;) {
    const NumericFloat d = NumericFloatSub(x, one);
    if (d.m.IsZero() || NumericFloatTop(d) <= -2) break;
    x = NumericFloatSqrt(x);
    ++k;
    TANDEM_CHECK(k < 60, "numeric: ln's reduction did not converge");
  }
  const NumericFloat z = NumericFloatDiv(NumericFloatSub(x, one), NumericFloatAdd(x, one));
  const NumericFloat z2 = NumericFloatMul(z, z);
  NumericFloat sum = z, power = z;
  for (std::uint64_t i = 3; !z.m.IsZero(); i += 2) {
    power = NumericFloatMul(power, z2);
    const NumericFloat term = NumericFloatDiv(power, NumericFloatOfInt(i));
    if (term.m.IsZero() || NumericFloatTop(term) < NumericFloatTop(sum) - 64) break;
    sum = NumericFloatAdd(sum, term);
  }
  return NumericFloatMul(sum, NumericFloatOfInt(std::uint64_t{2} << k));
}

// exp(y), |y| <= 100: y halved until below 0.01, the Taylor series, squared back.
NumericFloat NumericFloatExp(NumericFloat y) {
  int k = 0;
  while (!y.m.IsZero() && NumericFloatTop(y) > -2) {
    y = NumericFloatDiv(y, NumericFloatOfInt(2));
    ++k;
    TANDEM_CHECK(k < 60, "numeric: exp's reduction did not converge");
  }
  NumericFloat sum = NumericFloatOfInt(1), term = sum;
  for (std::uint64_t i = 1; !y.m.IsZero(); ++i) {
    term = NumericFloatDiv(NumericFloatMul(term, y), NumericFloatOfInt(i));
    if (term.m.IsZero() || NumericFloatTop(term) < NumericFloatTop(sum) - 64) break;
    sum = NumericFloatAdd(sum, term);
  }
  for (int i = 0; i < k; ++i) sum = NumericFloatMul(sum, sum);
  return sum;
}

// ±f rounded half away from zero to `scale`.
Result<Numeric> NumericFloatToNumeric(bool negative, const NumericFloat& f, int scale) {
  const std::int64_t drop = -(f.e + scale);  // digits of f.m below the scale's last place
  if (drop <= 0) {
    if (NumericWideDigitCount(f.m) - drop > kNumericMaxDigits) {
      if (f.m.IsZero()) return Numeric::FromParts(0, scale);
      return Status::DataError(kNumericOverflow);
    }
    return MakeNumeric(negative, NumericWideMulPow10(f.m, static_cast<int>(-drop)), scale);
  }
  if (drop > NumericWideDigitCount(f.m)) return Numeric::FromParts(0, scale);
  return MakeNumeric(negative, NumericWideDivPow10(f.m, static_cast<int>(drop), /*round=*/true),
                     scale);
}

// PostgreSQL's NBASE view of n beyond the first digit: the weight, the first two base-10000
// digits, and whether any nonzero digit follows the first (its ndigits > 1).
struct NumericBaseDigits {
  int weight = 0;
  int first = 0;
  int second = 0;
  bool more = false;
};
NumericBaseDigits NumericLeadingBaseDigits(const Numeric& n) {
  NumericBaseDigits d;
  NumericFirstBaseDigit(n, &d.weight, &d.first);
  const int shift = n.scale + d.weight * kNumericDecDigits;  // digits of |c| below the first
  if (d.first == 0 || shift <= 0) return d;
  const UInt128 rest = NumericMagnitude(n) % kNumericPow10[shift];
  d.more = rest != 0;
  d.second = static_cast<int>(shift >= kNumericDecDigits
                                  ? rest / kNumericPow10[shift - kNumericDecDigits]
                                  : rest * kNumericPow10[kNumericDecDigits - shift]);
  return d;
}

// PostgreSQL's estimate_ln_dweight: the decimal weight of ln(v), v > 0, from its leading digits
// (from v - 1 within [0.9, 1.1]), in doubles as PostgreSQL computes it.
int NumericEstimateLnWeight(const Numeric& v) {
  const Numeric lo = Numeric::FromParts(9, 1), hi = Numeric::FromParts(11, 1);
  if (CompareNumericValue(v, lo) >= 0 && CompareNumericValue(v, hi) <= 0) {
    const Result<Numeric> x = NumericSub(v, NumericFromInt64(1));
    TANDEM_CHECK(x.ok(), "numeric: v - 1 overflowed for v near 1");
    if (NumericSign(*x) == 0) return 0;
    const NumericBaseDigits d = NumericLeadingBaseDigits(*x);
    return d.weight * kNumericDecDigits + static_cast<int>(std::log10(d.first));
  }
  const NumericBaseDigits d = NumericLeadingBaseDigits(v);
  int digits = d.first;
  int decimal_weight = d.weight * kNumericDecDigits;
  if (d.more) {
    digits = digits * 10000 + d.second;
    decimal_weight -= kNumericDecDigits;
  }
  const double ln = std::log(static_cast<double>(digits)) + decimal_weight * 2.302585092994046;
  return static_cast<int>(std::log10(std::fabs(ln)));
}

// PostgreSQL's power_var for an exponent that is not an int4 integer: exp(exponent × ln |base|),
// the scale from a low-precision first estimate of the result's weight, as PostgreSQL picks it.
// REQUIRES: base > 0, or base < 0 with an integral exponent (the sign is then the parity's).
Result<Numeric> NumericPowerByLn(const Numeric& base, const Numeric& exponent, bool negative) {
  const Numeric magnitude = NumericAbs(base);
  const int ln_weight = NumericEstimateLnWeight(magnitude);
  const NumericFloat ln = NumericFloatLn(NumericFloatOf(magnitude));
  const NumericFloat y = NumericFloatMul(ln, NumericFloatOf(exponent));
  // The estimate: ln |base| and its product rounded to 8 - ln_weight places, as a double.
  const int estimate_scale = std::clamp(8 - ln_weight, 0, 1000);
  const double estimate = NumericFloatToDouble(NumericFloatRound(
      NumericFloatMul(NumericFloatRound(ln, estimate_scale), NumericFloatOf(exponent)),
      estimate_scale));
  if (std::fabs(estimate) > 2000 * 3.01) {  // NUMERIC_MAX_RESULT_SCALE * 3.01
    if (estimate > 0) return Status::DataError(kNumericOverflow);
    return Numeric::FromParts(0, kNumericMaxDigits);  // PostgreSQL: zero at scale 1000
  }
  const double weight = estimate * 0.434294481903252;  // log10(e)
  int scale = kNumericMinSigDigits - static_cast<int>(weight);
  scale = std::max({scale, static_cast<int>(base.scale), static_cast<int>(exponent.scale), 0});
  scale = std::min(scale, kNumericMaxDigits);
  // e^90 > 10^38 overflows; e^-95 < 10^-41 rounds to zero at any scale up to 38.
  const double approximate_y = NumericFloatToDouble(y);
  if (approximate_y > 90) return Status::DataError(kNumericOverflow);
  if (approximate_y < -95) return Numeric::FromParts(0, scale);
  return NumericFloatToNumeric(negative, NumericFloatExp(y), scale);
}

bool NumericIsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool NumericIsDigit(char c) { return c >= '0' && c <= '9'; }

bool NumericEqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

Numeric Numeric::FromParts(Int128 coefficient, int scale) {
  TANDEM_CHECK(scale >= 0 && scale <= kNumericMaxDigits, "numeric: a scale outside 0..38");
  const UInt128 u = static_cast<UInt128>(coefficient);
  const UInt128 m = coefficient < 0 ? UInt128{0} - u : u;
  TANDEM_CHECK(m < kNumericLimit, "numeric: a coefficient of more than 38 digits");
  Numeric n;
  n.lo = static_cast<std::uint64_t>(u);
  n.hi = static_cast<std::int64_t>(static_cast<std::uint64_t>(u >> 64));
  n.scale = static_cast<std::uint8_t>(scale);
  return n;
}

int NumericSign(const Numeric& a) {
  const Int128 c = a.coefficient();
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

int CompareNumericValue(const Numeric& a, const Numeric& b) {
  const int sa = NumericSign(a), sb = NumericSign(b);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  int c;
  if (a.scale == b.scale) {
    const UInt128 ma = NumericMagnitude(a), mb = NumericMagnitude(b);
    c = ma < mb ? -1 : ma > mb ? 1 : 0;
  } else {
    const int scale = std::max(a.scale, b.scale);
    c = NumericWideCompare(NumericAligned(a, scale), NumericAligned(b, scale));
  }
  return sa < 0 ? -c : c;
}

int CompareNumeric(const Numeric& a, const Numeric& b) {
  const int c = CompareNumericValue(a, b);
  if (c != 0) return c;
  return a.scale < b.scale ? -1 : a.scale > b.scale ? 1 : 0;
}

std::string NumericText(const Numeric& n) {
  UInt128 m = NumericMagnitude(n);
  char digits[40];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  } while (m != 0);
  while (count <= n.scale) digits[count++] = '0';  // at least one digit before the point
  std::string out;
  out.reserve(count + 2);
  if (NumericSign(n) < 0) out.push_back('-');
  for (int i = count - 1; i >= 0; --i) {
    out.push_back(digits[i]);
    if (i == n.scale && i != 0) out.push_back('.');
  }
  return out;
}

Result<Numeric> ParseNumeric(std::string_view text) {
  const auto syntax = [&] {
    return Status::DataError("invalid input syntax for type numeric: \"" + std::string(text) +
                             "\"");
  };
  std::size_t begin = 0, end = text.size();
  while (begin < end && NumericIsSpace(text[begin])) ++begin;
  while (end > begin && NumericIsSpace(text[end - 1])) --end;
  const std::string_view body = text.substr(begin, end - begin);
  for (std::string_view special :
       {"nan", "infinity", "+infinity", "-infinity", "inf", "+inf", "-inf"}) {
    if (NumericEqualsIgnoringCase(body, special)) {
      return Status::DataError("numeric NaN/Infinity is not supported");
    }
  }
  std::size_t i = 0;
  bool negative = false;
  if (i < body.size() && (body[i] == '+' || body[i] == '-')) negative = body[i++] == '-';
  // The significant digits (leading zeros dropped), how many digits came after the point.
  std::string digits;
  long fraction_digits = 0;
  bool any_digit = false, point = false;
  for (; i < body.size(); ++i) {
    const char c = body[i];
    if (NumericIsDigit(c)) {
      any_digit = true;
      if (point) ++fraction_digits;
      if (c != '0' || !digits.empty()) digits.push_back(c);
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return syntax();
  // PostgreSQL reads the exponent with strtol: blanks, a sign, at least one digit.
  long exponent = 0;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    while (i < body.size() && NumericIsSpace(body[i])) ++i;
    bool exponent_negative = false;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) exponent_negative = body[i++] == '-';
    if (i >= body.size() || !NumericIsDigit(body[i])) return syntax();
    for (; i < body.size() && NumericIsDigit(body[i]); ++i) {
      if (exponent < kNumericExponentLimit) exponent = exponent * 10 + (body[i] - '0');
    }
    // PostgreSQL refuses an exponent this large before looking at the digits.
    if (exponent >= kNumericExponentLimit) return Status::DataError(kNumericOverflow);
    if (exponent_negative) exponent = -exponent;
  }
  if (i != body.size()) return syntax();
  // value = digits × 10^(exponent - fraction_digits); PostgreSQL's display scale is
  // fraction_digits - exponent, at least 0, and ours at most 38 (rounded half away from zero).
  const long display_scale = std::max<long>(0, fraction_digits - exponent);
  if (display_scale > kNumericDisplayScaleMax) return Status::DataError(kNumericOverflow);
  const int scale = static_cast<int>(std::min<long>(display_scale, kNumericMaxDigits));
  const long shift = exponent - fraction_digits + scale;  // coefficient = digits × 10^shift
  if (digits.empty()) return Numeric::FromParts(0, scale);
  bool round_up = false;
  if (shift < 0) {
    const std::size_t cut = static_cast<std::size_t>(-shift);
    if (cut > digits.size()) return Numeric::FromParts(0, scale);
    round_up = digits[digits.size() - cut] >= '5';
    digits.resize(digits.size() - cut);
  } else {
    if (static_cast<long>(digits.size()) + shift > kNumericMaxDigits) {
      return Status::DataError(kNumericOverflow);
    }
    digits.append(static_cast<std::size_t>(shift), '0');
  }
  if (static_cast<int>(digits.size()) > kNumericMaxDigits) {
    return Status::DataError(kNumericOverflow);
  }
  UInt128 m = 0;
  for (char c : digits) m = m * 10 + static_cast<unsigned>(c - '0');
  if (round_up) ++m;
  return MakeNumeric(negative, NumericWide::From(m), scale);
}

Numeric NumericNegate(const Numeric& a) { return Numeric::FromParts(-a.coefficient(), a.scale); }

Numeric NumericAbs(const Numeric& a) { return NumericSign(a) < 0 ? NumericNegate(a) : a; }

Result<Numeric> NumericAdd(const Numeric& a, const Numeric& b) {
  const int scale = std::max(a.scale, b.scale);
  if (a.scale == b.scale) {
    Int128 sum;
    if (!__builtin_add_overflow(a.coefficient(), b.coefficient(), &sum)) {
      const UInt128 u = static_cast<UInt128>(sum);
      return MakeNumeric(sum < 0, NumericWide::From(sum < 0 ? UInt128{0} - u : u), scale);
    }
  }
  return NumericSignedSum(NumericSign(a) < 0, NumericAligned(a, scale), NumericSign(b) < 0,
                          NumericAligned(b, scale), scale);
}

Result<Numeric> NumericSub(const Numeric& a, const Numeric& b) {
  return NumericAdd(a, NumericNegate(b));
}

Result<Numeric> NumericMul(const Numeric& a, const Numeric& b) {
  const bool negative = (NumericSign(a) < 0) != (NumericSign(b) < 0);
  NumericWide product = NumericWideMul(NumericWide::From(NumericMagnitude(a)),
                                       NumericWide::From(NumericMagnitude(b)));
  int scale = a.scale + b.scale;
  if (scale > kNumericMaxDigits) {  // PostgreSQL keeps every digit; we round to 38
    product = NumericWideDivRound(product, kNumericPow10[scale - kNumericMaxDigits]);
    scale = kNumericMaxDigits;
  }
  return MakeNumeric(negative, product, scale);
}

Result<Numeric> NumericDiv(const Numeric& a, const Numeric& b) {
  if (NumericSign(b) == 0) return Status::DataError(kNumericDivisionByZero);
  const int scale = NumericDivScale(a, b);
  // a / b = (ma × 10^-sa) / (mb × 10^-sb); at `scale`: ma × 10^(scale + sb - sa) / mb, where
  // scale >= sa, so the shift is never negative.
  const NumericWide dividend =
      NumericWideMulPow10(NumericWide::From(NumericMagnitude(a)), scale + b.scale - a.scale);
  const bool negative = (NumericSign(a) < 0) != (NumericSign(b) < 0);
  return MakeNumeric(negative, NumericWideDivRound(dividend, NumericMagnitude(b)), scale);
}

Result<Numeric> NumericMod(const Numeric& a, const Numeric& b) {
  if (NumericSign(b) == 0) return Status::DataError(kNumericDivisionByZero);
  const int scale = std::max(a.scale, b.scale);
  const NumericWide ma = NumericAligned(a, scale), mb = NumericAligned(b, scale);
  // One of the two is at its own scale, below 10^38; the remainder is below both. So a divisor
  // of 10^38 or more was aligned, a is not, and a is below it: a is the remainder.
  if (!mb.FitsU128() || mb.Low128() >= kNumericLimit) {
    return MakeNumeric(NumericSign(a) < 0, ma, scale);
  }
  UInt128 r;
  (void)NumericWideDivMod(ma, mb.Low128(), &r);
  return MakeNumeric(NumericSign(a) < 0, NumericWide::From(r), scale);
}

Result<Numeric> NumericRound(const Numeric& a, int scale) {
  return NumericRescale(a, scale, /*round=*/true);
}

Result<Numeric> NumericTrunc(const Numeric& a, int scale) {
  return NumericRescale(a, scale, /*round=*/false);
}

Result<Numeric> NumericFloor(const Numeric& a) {
  TANDEM_ASSIGN_OR_RETURN(Numeric t, NumericTrunc(a, 0));
  if (NumericSign(a) < 0 && CompareNumericValue(a, t) != 0) {
    return NumericSub(t, NumericFromInt64(1));
  }
  return t;
}

Result<Numeric> NumericCeil(const Numeric& a) {
  TANDEM_ASSIGN_OR_RETURN(Numeric t, NumericTrunc(a, 0));
  if (NumericSign(a) > 0 && CompareNumericValue(a, t) != 0) {
    return NumericAdd(t, NumericFromInt64(1));
  }
  return t;
}

Result<Numeric> NumericAvg(const Numeric& sum, Int128 count) {
  TANDEM_ASSIGN_OR_RETURN(Numeric n, NumericFromCount(count));
  return NumericDiv(sum, n);
}

Numeric NumericFromInt64(std::int64_t v) { return Numeric::FromParts(v, 0); }

Result<Numeric> NumericFromCount(Int128 count) {
  Int128 limit = 1;  // 10^38: a numeric's coefficient stays below it
  for (int i = 0; i < kNumericMaxDigits; ++i) limit *= 10;
  if (count >= limit || count <= -limit) return Status::DataError("value overflows numeric format");
  return Numeric::FromParts(count, 0);
}

Result<Numeric> NumericFromDouble(double v) {
  if (std::isnan(v)) return Status::DataError("cannot convert NaN to numeric");
  if (std::isinf(v)) return Status::DataError("cannot convert infinity to numeric");
  // PostgreSQL's float8_numeric prints "%.*g" with DBL_DIG (15) and reads that text back.
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general,
                                       std::numeric_limits<double>::digits10);
  TANDEM_CHECK(ec == std::errc(), "numeric: a double's text did not fit 64 bytes");
  return ParseNumeric(std::string_view(buf, static_cast<std::size_t>(end - buf)));
}

Result<std::int64_t> NumericToInt64(const Numeric& a, std::int64_t min, std::int64_t max,
                                    std::string_view type_name) {
  const auto range = [&] { return Status::DataError(std::string(type_name) + " out of range"); };
  TANDEM_ASSIGN_OR_RETURN(Numeric r, NumericRound(a, 0));
  const Int128 c = r.coefficient();
  if (c < min || c > max) return range();
  return static_cast<std::int64_t>(c);
}

double NumericToDouble(const Numeric& a) {
  const std::string text = NumericText(a);
  double out = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  TANDEM_CHECK(ec == std::errc() && ptr == text.data() + text.size(),
               "numeric: a numeric's text did not read as a double");
  return out;
}

Result<Numeric> NumericApplyTypmod(const Numeric& a, int precision, int scale) {
  TANDEM_CHECK(precision >= 1 && precision <= kNumericMaxDigits && scale >= -1000 &&
                   scale <= kNumericMaxDigits,
               "numeric: a typmod outside numeric(1..38, -1000..38)");
  // PostgreSQL's apply_typmod: a nonzero value must round to below 10^(precision - scale).
  const int max_digits = precision - scale;
  const auto field_overflow = [&] {
    return Status::DataError(
        "numeric field overflow\nDETAIL:  A field with precision " + std::to_string(precision) +
        ", scale " + std::to_string(scale) + " must round to an absolute value less than " +
        (max_digits != 0 ? "10^" + std::to_string(max_digits) : std::string("1")) + ".");
  };
  // Rounding fails only for a value of 10^(38 - scale) or more: above the field's bound too.
  Result<Numeric> rounded = NumericRound(a, scale);
  if (!rounded.ok()) return field_overflow();
  const Numeric r = *rounded;
  const UInt128 m = NumericMagnitude(r);
  if (m != 0 && NumericDigitCount(m) - r.scale > max_digits) {  // |r| >= 10^(count - scale - 1)
    return field_overflow();
  }
  return r;
}

Result<Numeric> NumericSqrt(const Numeric& a) {
  if (NumericSign(a) < 0) return Status::DataError("cannot take square root of a negative number");
  // numeric_sqrt's scale: 16 significant digits from the root's NBASE weight, at least a's scale.
  int weight, digit;
  NumericFirstBaseDigit(a, &weight, &digit);
  const int root_weight = (weight + 1) * kNumericDecDigits / 2 - 1;
  const int scale =
      std::min(std::max({kNumericMinSigDigits - root_weight, static_cast<int>(a.scale), 0}),
               kNumericMaxDigits);
  // sqrt(m × 10^-s) at scale + 1 digits is floor(sqrt(m × 10^(2 × scale + 2 - s))): its last
  // digit rounds (an exact root has zeros below it, so half away from zero is exact too).
  const NumericWide root = NumericWideSqrt(
      NumericWideMulPow10(NumericWide::From(NumericMagnitude(a)), 2 * scale + 2 - a.scale));
  return MakeNumeric(false, NumericWideDivPow10(root, 1, /*round=*/true), scale);
}

Result<Numeric> NumericPower(const Numeric& base, const Numeric& exponent) {
  const int base_sign = NumericSign(base), exponent_sign = NumericSign(exponent);
  if (base_sign == 0 && exponent_sign < 0) {
    return Status::DataError("zero raised to a negative power is undefined");
  }
  const UInt128 exponent_magnitude = NumericMagnitude(exponent);
  const bool integral = exponent_magnitude % kNumericPow10[exponent.scale] == 0;
  if (base_sign < 0 && !integral) {
    return Status::DataError(
        "a negative number raised to a non-integer power yields a complex result");
  }
  const UInt128 n = exponent_magnitude / kNumericPow10[exponent.scale];
  const UInt128 int4_limit =  // power_var takes the integer path for exponents within int4
      exponent_sign < 0 ? UInt128{1} << 31 : (UInt128{1} << 31) - 1;
  if (!integral || n > int4_limit) {
    // power_var's general path: 0 to such a power is zero at scale 16.
    if (base_sign == 0) return Numeric::FromParts(0, kNumericMinSigDigits);
    return NumericPowerByLn(base, exponent, base_sign < 0 && (n & 1) == 1);
  }
  // power_var's scale for an integer exponent: 16 digits, at least the base's scale.
  const int scale =
      std::min(std::max(kNumericMinSigDigits, static_cast<int>(base.scale)), kNumericMaxDigits);
  if (n == 0) return MakeNumeric(false, NumericWide::From(kNumericPow10[scale]), scale);
  if (base_sign == 0) return Numeric::FromParts(0, scale);
  NumericFloat square = NumericFloatOf(NumericAbs(base));
  NumericFloat product = NumericFloatOfInt(1);
  for (UInt128 bits = n;;) {
    if (bits & 1) product = NumericFloatMul(product, square);
    bits >>= 1;
    if (bits == 0) break;
    square = NumericFloatMul(square, square);
  }
  if (exponent_sign < 0) product = NumericFloatDiv(NumericFloatOfInt(1), product);
  return NumericFloatToNumeric(base_sign < 0 && (n & 1) == 1, product, scale);
}

}  // namespace tandem
