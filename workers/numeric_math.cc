#include "workers/numeric_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/count.h"

namespace tandem::workers {

namespace {

// ---- an unsigned big integer: little-endian 32-bit limbs, no leading zero limbs --------------

struct BigNat {
  std::vector<std::uint32_t> limbs;

  static BigNat Of(UInt128 v) {
    BigNat n;
    for (; v != 0; v >>= 32) n.limbs.push_back(static_cast<std::uint32_t>(v));
    return n;
  }
  bool zero() const { return limbs.empty(); }
  void Trim() {
    while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
  }
  std::int64_t BitLength() const {
    if (limbs.empty()) return 0;
    return static_cast<std::int64_t>(limbs.size() - 1) * 32 + (32 - __builtin_clz(limbs.back()));
  }
};

int BigCompare(const BigNat& a, const BigNat& b) {
  if (a.limbs.size() != b.limbs.size()) return a.limbs.size() < b.limbs.size() ? -1 : 1;
  for (std::size_t i = a.limbs.size(); i-- > 0;) {
    if (a.limbs[i] != b.limbs[i]) return a.limbs[i] < b.limbs[i] ? -1 : 1;
  }
  return 0;
}

BigNat BigAdd(const BigNat& a, const BigNat& b) {
  BigNat out;
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < std::max(a.limbs.size(), b.limbs.size()) || carry; ++i) {
    const std::uint64_t sum =
        carry + (i < a.limbs.size() ? a.limbs[i] : 0) + (i < b.limbs.size() ? b.limbs[i] : 0);
    out.limbs.push_back(static_cast<std::uint32_t>(sum));
    carry = sum >> 32;
  }
  out.Trim();
  return out;
}

// REQUIRES: a >= b.
BigNat BigSub(const BigNat& a, const BigNat& b) {
  BigNat out = a;
  std::int64_t borrow = 0;
  for (std::size_t i = 0; i < out.limbs.size(); ++i) {
    std::int64_t d = static_cast<std::int64_t>(out.limbs[i]) - borrow -
                     (i < b.limbs.size() ? static_cast<std::int64_t>(b.limbs[i]) : 0);
    borrow = d < 0 ? 1 : 0;
    if (d < 0) d += std::int64_t{1} << 32;
    out.limbs[i] = static_cast<std::uint32_t>(d);
  }
  out.Trim();
  return out;
}

BigNat BigMul(const BigNat& a, const BigNat& b) {
  if (a.zero() || b.zero()) return {};
  BigNat out;
  out.limbs.assign(a.limbs.size() + b.limbs.size(), 0);
  for (std::size_t i = 0; i < a.limbs.size(); ++i) {
    std::uint64_t carry = 0;
    for (std::size_t j = 0; j < b.limbs.size() || carry; ++j) {
      const std::uint64_t cur = out.limbs[i + j] + carry +
                                (j < b.limbs.size() ? std::uint64_t{a.limbs[i]} * b.limbs[j] : 0);
      out.limbs[i + j] = static_cast<std::uint32_t>(cur);
      carry = cur >> 32;
    }
  }
  out.Trim();
  return out;
}

BigNat BigMulSmall(const BigNat& a, std::uint32_t m) {
  BigNat out;
  std::uint64_t carry = 0;
  for (const std::uint32_t limb : a.limbs) {
    const std::uint64_t cur = std::uint64_t{limb} * m + carry;
    out.limbs.push_back(static_cast<std::uint32_t>(cur));
    carry = cur >> 32;
  }
  if (carry) out.limbs.push_back(static_cast<std::uint32_t>(carry));
  out.Trim();
  return out;
}

// a / d, the remainder in *rem.
BigNat BigDivSmall(const BigNat& a, std::uint32_t d, std::uint32_t* rem) {
  BigNat out;
  out.limbs.assign(a.limbs.size(), 0);
  std::uint64_t r = 0;
  for (std::size_t i = a.limbs.size(); i-- > 0;) {
    const std::uint64_t cur = (r << 32) | a.limbs[i];
    out.limbs[i] = static_cast<std::uint32_t>(cur / d);
    r = cur % d;
  }
  out.Trim();
  if (rem != nullptr) *rem = static_cast<std::uint32_t>(r);
  return out;
}

BigNat BigShiftLeft(const BigNat& a, std::int64_t bits) {
  if (a.zero()) return {};
  BigNat out;
  out.limbs.assign(static_cast<std::size_t>(bits / 32), 0);
  const int s = static_cast<int>(bits % 32);
  std::uint32_t carry = 0;
  for (const std::uint32_t limb : a.limbs) {
    out.limbs.push_back(s == 0 ? limb : (limb << s) | carry);
    carry = s == 0 ? 0 : limb >> (32 - s);
  }
  if (carry) out.limbs.push_back(carry);
  out.Trim();
  return out;
}

BigNat BigShiftRight(const BigNat& a, std::int64_t bits) {
  const auto drop = static_cast<std::size_t>(bits / 32);
  if (drop >= a.limbs.size()) return {};
  const int s = static_cast<int>(bits % 32);
  BigNat out;
  for (std::size_t i = drop; i < a.limbs.size(); ++i) {
    std::uint32_t v = s == 0 ? a.limbs[i] : a.limbs[i] >> s;
    if (s != 0 && i + 1 < a.limbs.size()) v |= a.limbs[i + 1] << (32 - s);
    out.limbs.push_back(v);
  }
  out.Trim();
  return out;
}

// floor(a / b) by Knuth's algorithm D (TAOCP 4.3.1) in base 2^32. REQUIRES: b is not zero.
BigNat BigDiv(const BigNat& a, const BigNat& b) {
  if (BigCompare(a, b) < 0) return {};
  if (b.limbs.size() == 1) return BigDivSmall(a, b.limbs[0], nullptr);
  // Normalise so the divisor's top limb has its high bit set: the quotient estimates are then at
  // most 2 too large.
  const int shift = __builtin_clz(b.limbs.back());
  const BigNat v = BigShiftLeft(b, shift);
  BigNat u = BigShiftLeft(a, shift);
  u.limbs.resize(a.limbs.size() + 1, 0);
  const std::size_t n = v.limbs.size(), m = a.limbs.size() - n;
  constexpr std::uint64_t kBase = std::uint64_t{1} << 32;
  BigNat q;
  q.limbs.assign(m + 1, 0);
  for (std::size_t j = m + 1; j-- > 0;) {
    const std::uint64_t top = (std::uint64_t{u.limbs[j + n]} << 32) | u.limbs[j + n - 1];
    std::uint64_t qhat = top / v.limbs[n - 1], rhat = top % v.limbs[n - 1];
    while (qhat >= kBase || qhat * v.limbs[n - 2] > ((rhat << 32) | u.limbs[j + n - 2])) {
      --qhat;
      rhat += v.limbs[n - 1];
      if (rhat >= kBase) break;
    }
    // u[j .. j+n] -= qhat · v
    std::int64_t borrow = 0;
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t product = qhat * v.limbs[i] + carry;
      carry = product >> 32;
      const std::int64_t t = static_cast<std::int64_t>(u.limbs[i + j]) - borrow -
                             static_cast<std::int64_t>(product & 0xffffffffu);
      u.limbs[i + j] = static_cast<std::uint32_t>(t);
      borrow = t < 0 ? 1 : 0;
    }
    const std::int64_t t =
        static_cast<std::int64_t>(u.limbs[j + n]) - borrow - static_cast<std::int64_t>(carry);
    u.limbs[j + n] = static_cast<std::uint32_t>(t);
    if (t < 0) {  // qhat was one too large: add v back
      --qhat;
      std::uint64_t c = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t sum = std::uint64_t{u.limbs[i + j]} + v.limbs[i] + c;
        u.limbs[i + j] = static_cast<std::uint32_t>(sum);
        c = sum >> 32;
      }
      u.limbs[j + n] += static_cast<std::uint32_t>(c);
    }
    q.limbs[j] = static_cast<std::uint32_t>(qhat);
  }
  q.Trim();
  return q;
}

BigNat BigPow10(std::int64_t k) {
  BigNat out = BigNat::Of(1);
  for (; k >= 9; k -= 9) out = BigMulSmall(out, 1'000'000'000u);
  std::uint32_t rest = 1;
  for (; k > 0; --k) rest *= 10;
  return BigMulSmall(out, rest);
}

// 10^38: a coefficient must stay below it.
BigNat BigMaxCoefficient() { return BigPow10(kNumericMaxDigits); }

Status PowerOverflow() { return Status::DataError("value overflows numeric format"); }

// The numeric with coefficient ±c and `scale`, or the overflow error when c needs 38 digits.
Result<Numeric> NumericOfBig(const BigNat& c, bool negative, int scale) {
  if (BigCompare(c, BigMaxCoefficient()) >= 0) return PowerOverflow();
  UInt128 v = 0;
  for (std::size_t i = c.limbs.size(); i-- > 0;) v = (v << 32) | c.limbs[i];
  const Int128 signed_v = static_cast<Int128>(v);
  return Numeric::FromParts(negative ? -signed_v : signed_v, scale);
}

UInt128 MagnitudeOf(const Numeric& x) {
  const Int128 c = x.coefficient();
  return c < 0 ? static_cast<UInt128>(0) - static_cast<UInt128>(c) : static_cast<UInt128>(c);
}

// ---- fixed point for ln and exp: a signed value v / 2^kFracBits ---------------------------------

constexpr std::int64_t kFracBits = 400;

struct Fixed {
  bool negative = false;
  BigNat mag;
};

Fixed FixedAdd(const Fixed& a, const Fixed& b) {
  if (a.negative == b.negative) return {a.negative, BigAdd(a.mag, b.mag)};
  if (BigCompare(a.mag, b.mag) >= 0) return {a.negative && !a.mag.zero(), BigSub(a.mag, b.mag)};
  return {b.negative, BigSub(b.mag, a.mag)};
}
Fixed FixedNeg(Fixed a) {
  a.negative = !a.negative && !a.mag.zero();
  return a;
}
Fixed FixedMul(const Fixed& a, const Fixed& b) {
  BigNat m = BigShiftRight(BigMul(a.mag, b.mag), kFracBits);
  const bool neg = a.negative != b.negative && !m.zero();
  return {neg, std::move(m)};
}
Fixed FixedDiv(const Fixed& a, const Fixed& b) {
  BigNat m = BigDiv(BigShiftLeft(a.mag, kFracBits), b.mag);
  const bool neg = a.negative != b.negative && !m.zero();
  return {neg, std::move(m)};
}
Fixed FixedDivSmall(const Fixed& a, std::uint32_t d) {
  BigNat m = BigDivSmall(a.mag, d, nullptr);
  return {a.negative && !m.zero(), std::move(m)};
}
Fixed FixedAbs(Fixed a) {
  a.negative = false;
  return a;
}
Fixed FixedOne() { return {false, BigShiftLeft(BigNat::Of(1), kFracBits)}; }
Fixed FixedOfNumeric(const Numeric& x) {
  const BigNat scaled = BigShiftLeft(BigNat::Of(MagnitudeOf(x)), kFracBits);
  return {x.coefficient() < 0, BigDiv(scaled, BigPow10(x.scale))};
}

// 2·atanh(z) = z + z^3/3 + z^5/5 + ... (times 2), for |z| <= 1/3.
Fixed FixedTwiceAtanh(const Fixed& z) {
  const Fixed z2 = FixedMul(z, z);
  Fixed term = z, sum = z;
  for (std::uint32_t k = 3; !term.mag.zero(); k += 2) {
    term = FixedMul(term, z2);
    sum = FixedAdd(sum, FixedDivSmall(term, k));
  }
  return FixedAdd(sum, sum);
}

// ln 2 = 2·atanh(1/3), computed once (a function-local static: initialised once, thread-safe).
const Fixed& FixedLn2() {
  static const Fixed ln2 = FixedTwiceAtanh(FixedDivSmall(FixedOne(), 3));
  return ln2;
}

// ln(x) for x > 0: x = m·2^k with m in [1/2, 1), ln m = 2·atanh((m-1)/(m+1)).
Fixed FixedLn(const Fixed& x) {
  const std::int64_t k = x.mag.BitLength() - kFracBits;  // x in [2^(k-1), 2^k)
  Fixed m{false, k >= 0 ? BigShiftRight(x.mag, k) : BigShiftLeft(x.mag, -k)};
  const Fixed one = FixedOne();
  const Fixed z = FixedDiv(FixedAdd(m, FixedNeg(one)), FixedAdd(m, one));
  Fixed kln2 = FixedLn2();  // a copy: scaled by k below
  kln2.mag = BigMul(kln2.mag, BigNat::Of(static_cast<UInt128>(k < 0 ? -k : k)));
  kln2.negative = k < 0 && !kln2.mag.zero();
  return FixedAdd(FixedTwiceAtanh(z), kln2);
}

// exp(t): t = k·ln2 + r with |r| <= ln2/2, exp(r) by its Taylor series, then shifted by k.
// REQUIRES: |t| < 2^20.
Fixed FixedExp(const Fixed& t) {
  const Fixed& ln2 = FixedLn2();
  const BigNat half = BigShiftRight(ln2.mag, 1);
  // k = round(t / ln2), found as floor((|t| + ln2/2) / ln2).
  const BigNat k_mag = BigDiv(BigAdd(t.mag, half), ln2.mag);
  std::int64_t k = k_mag.zero() ? 0 : static_cast<std::int64_t>(k_mag.limbs[0]);
  if (t.negative) k = -k;
  Fixed kln2{k < 0, BigMul(ln2.mag, k_mag)};
  if (kln2.mag.zero()) kln2.negative = false;
  const Fixed r = FixedAdd(t, FixedNeg(kln2));
  Fixed term = FixedOne(), sum = FixedOne();
  for (std::uint32_t n = 1; !term.mag.zero(); ++n) {
    term = FixedDivSmall(FixedMul(term, r), n);
    sum = FixedAdd(sum, term);
  }
  sum.mag = k >= 0 ? BigShiftLeft(sum.mag, k) : BigShiftRight(sum.mag, -k);
  return sum;
}

bool IsIntegralNumeric(const Numeric& y) {
  const UInt128 m = MagnitudeOf(y);
  UInt128 p = 1;
  for (int i = 0; i < y.scale; ++i) p *= 10;
  return m % p == 0;
}

}  // namespace

bool IsInt4Exponent(const Numeric& y) {
  if (!IsIntegralNumeric(y)) return false;
  UInt128 p = 1;
  for (int i = 0; i < y.scale; ++i) p *= 10;
  const Int128 n = y.coefficient() / static_cast<Int128>(p);
  return n >= INT32_MIN && n <= INT32_MAX;
}

Result<Numeric> NumericPowerByLogarithm(const Numeric& x, const Numeric& y) {
  const Int128 xc = x.coefficient();
  if (xc == 0) {
    if (y.coefficient() < 0)
      return Status::DataError("zero raised to a negative power is undefined");
    return Numeric::FromParts(0, 16);  // PostgreSQL: 0 with 16 digits after the point
  }
  if (xc < 0 && !IsIntegralNumeric(y)) {
    return Status::DataError(
        "a negative number raised to a non-integer power yields a complex result");
  }
  // A negative base with an integral exponent (beyond int4 here): |x|^y, negative when y is odd.
  bool negative = false;
  if (xc < 0) {
    UInt128 p = 1;
    for (int i = 0; i < y.scale; ++i) p *= 10;
    negative = (MagnitudeOf(y) / p) % 2 == 1;
  }
  // exp(y · ln x) in fixed point, far more bits than 38 digits need.
  const Fixed ln_result = FixedMul(FixedOfNumeric(y), FixedLn(FixedAbs(FixedOfNumeric(x))));
  // ln of the result, as a double, for its scale and the early range checks.
  double ln_approx = 0;
  const BigNat top = BigShiftRight(ln_result.mag, kFracBits - 52);
  for (std::size_t i = top.limbs.size(); i-- > 0;)
    ln_approx = ln_approx * 4294967296.0 + top.limbs[i];
  ln_approx = std::ldexp(ln_approx, -52);
  if (ln_result.negative) ln_approx = -ln_approx;
  const double log10_result = ln_approx * 0.434294481903252;
  if (log10_result > kNumericMaxDigits + 2) return PowerOverflow();
  // Far below the last place a scale of 38 keeps: 0 (and no int conversion of a huge double).
  if (log10_result < -2 * kNumericMaxDigits) return Numeric::FromParts(0, kNumericMaxDigits);
  int rscale = 16 - static_cast<int>(log10_result);
  rscale = std::max<int>(rscale, x.scale);
  rscale = std::max<int>(rscale, y.scale);
  rscale = std::max(rscale, 0);
  rscale = std::min<int>(rscale, kNumericMaxDigits);
  if (log10_result < -rscale - 4) return Numeric::FromParts(0, rscale);
  const Fixed result = FixedExp(ln_result);
  // coefficient = round(result · 10^rscale), half away from zero.
  const BigNat scaled = BigMul(result.mag, BigPow10(rscale));
  const BigNat rounded =
      BigShiftRight(BigAdd(scaled, BigShiftLeft(BigNat::Of(1), kFracBits - 1)), kFracBits);
  return NumericOfBig(rounded, negative && !rounded.zero(), rscale);
}

}  // namespace tandem::workers
