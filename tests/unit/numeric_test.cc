// base/numeric.h: PostgreSQL 15's numeric in 38 digits. The expectations are PostgreSQL 15.20's
// answers to the query in the comment beside them (psql, default settings), except where a
// comment says our 38-digit bound decides instead.
#include "base/numeric.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>

namespace tandem::numeric_test {
namespace {

Numeric N(std::string_view text) {
  Result<Numeric> r = ParseNumeric(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : Numeric{};
}

// A result as psql shows it: the text, or "ERROR: <message>".
std::string Show(const Result<Numeric>& r) {
  if (!r.ok()) {
    EXPECT_EQ(r.status().code(), StatusCode::kDataError) << r.status().message();
    return "ERROR: " + r.status().message();
  }
  return NumericText(*r);
}

std::string Parsed(std::string_view text) { return Show(ParseNumeric(text)); }

const std::string kMaxCoefficient = "99999999999999999999999999999999999999";  // 38 nines

TEST(NumericTest, FromPartsHoldsCoefficientAndScale) {
  const Numeric n = Numeric::FromParts(-12345, 2);
  EXPECT_EQ(n.coefficient(), -12345);
  EXPECT_EQ(n.scale, 2);
  EXPECT_EQ(NumericText(n), "-123.45");
  Int128 big = 1;
  for (int i = 0; i < 38; ++i) big *= 10;
  EXPECT_EQ(Numeric::FromParts(-(big - 1), 38).coefficient(), -(big - 1));
  EXPECT_EQ(NumericText(Numeric::FromParts(big - 1, 0)), kMaxCoefficient);
  EXPECT_EQ(NumericText(Numeric::FromParts(-(big - 1), 38)), "-0." + kMaxCoefficient);
}

TEST(NumericDeathTest, FromPartsRefusesA39DigitCoefficientOrScale39) {
  Int128 big = 1;
  for (int i = 0; i < 38; ++i) big *= 10;
  EXPECT_DEATH(Numeric::FromParts(big, 0), "38 digits");
  EXPECT_DEATH(Numeric::FromParts(-big, 0), "38 digits");
  EXPECT_DEATH(Numeric::FromParts(1, 39), "scale");
  EXPECT_DEATH(Numeric::FromParts(1, -1), "scale");
}

// select '  -1.5e3  '::numeric, '1.23e-2'::numeric, '.5'::numeric, '5.'::numeric,
//   '+007.50'::numeric, '-0.00'::numeric, '1E+2'::numeric, '1.5e-0'::numeric, '1e 5'::numeric;
TEST(NumericTest, ParseReadsWhatNumericInReads) {
  EXPECT_EQ(Parsed("  -1.5e3  "), "-1500");
  EXPECT_EQ(N("1.5e3").scale, 0);
  EXPECT_EQ(Parsed("1.23e-2"), "0.0123");
  EXPECT_EQ(Parsed(".5"), "0.5");
  EXPECT_EQ(Parsed("5."), "5");
  EXPECT_EQ(Parsed("+007.50"), "7.50");
  EXPECT_EQ(Parsed("-0.00"), "0.00");
  EXPECT_EQ(Parsed("1E+2"), "100");
  EXPECT_EQ(Parsed("1.5e-0"), "1.5");
  EXPECT_EQ(Parsed("1e 5"), "100000");  // the exponent is strtol's: blanks before it are fine
  EXPECT_EQ(Parsed("\t\n 42 \r\f\v"), "42");
  EXPECT_EQ(Parsed("0"), "0");
  EXPECT_EQ(Parsed("-0"), "0");
  EXPECT_EQ(Parsed("000"), "0");
  EXPECT_EQ(Parsed("0e1073741822"), "0");  // select '0e1073741822'::numeric;
  // select '0.000000000000000000000000000000000000005'::numeric: 39 digits after the point.
  // PostgreSQL keeps them; we round to scale 38, half away from zero.
  EXPECT_EQ(Parsed("0.000000000000000000000000000000000000005"),
            "0.00000000000000000000000000000000000001");
  EXPECT_EQ(Parsed("-0.000000000000000000000000000000000000005"),
            "-0.00000000000000000000000000000000000001");
  EXPECT_EQ(Parsed("0.000000000000000000000000000000000000004"),
            "0.00000000000000000000000000000000000000");
  EXPECT_EQ(Parsed("1e-100"), "0.00000000000000000000000000000000000000");
  EXPECT_EQ(Parsed(kMaxCoefficient), kMaxCoefficient);
  EXPECT_EQ(Parsed("-" + kMaxCoefficient), "-" + kMaxCoefficient);
  EXPECT_EQ(Parsed("0." + kMaxCoefficient), "0." + kMaxCoefficient);
  EXPECT_EQ(Parsed("00000000000000000000000000000000000000000001.5"), "1.5");
}

TEST(NumericTest, ParseRefusesGarbageWithPostgresWords) {
  // select '1e'::numeric; ... each: ERROR: invalid input syntax for type numeric: "<text>"
  for (std::string_view bad : {"1e", ".", "- 1", "1 2", "", "   ", "0x10", "1_000", "abc", "1.2.3",
                               "1e+ 5", "++1", "1e5.5", "e5", "1,5", "１"}) {
    EXPECT_EQ(Parsed(bad),
              "ERROR: invalid input syntax for type numeric: \"" + std::string(bad) + "\"")
        << bad;
  }
}

// select 'NaN'::numeric, ' -infinity '::numeric, 'inf'::numeric: PostgreSQL has them, we do not.
TEST(NumericTest, ParseRefusesNanAndInfinity) {
  for (std::string_view special :
       {"NaN", "nan", " -infinity ", "Infinity", "+Infinity", "inf", "-INF", "+inf"}) {
    EXPECT_EQ(Parsed(special), "ERROR: numeric NaN/Infinity is not supported") << special;
  }
}

TEST(NumericTest, ParseRefusesWhatOverflows) {
  // 10^38 and more does not fit 38 digits (PostgreSQL keeps them).
  EXPECT_EQ(Parsed("1" + std::string(38, '0')), "ERROR: value overflows numeric format");
  EXPECT_EQ(Parsed("1e38"), "ERROR: value overflows numeric format");
  EXPECT_EQ(Parsed("9" + kMaxCoefficient), "ERROR: value overflows numeric format");
  // 38 nines with a fraction digit that rounds up at scale 38 carries into a 39th digit.
  EXPECT_EQ(Parsed("0." + kMaxCoefficient + "5"), "ERROR: value overflows numeric format");
  EXPECT_EQ(Parsed("1.5" + std::string(37, '0')), "ERROR: value overflows numeric format");
  // select '1e100000000'::numeric; select '0e1073741823'::numeric; select '0e-1073741823'::numeric;
  // select '1e-20000'::numeric; select '0e-16384'::numeric (NUMERIC_DSCALE_MAX is 16383):
  // ERROR: value overflows numeric format.
  for (std::string_view over :
       {"1e100000000", "0e1073741823", "0e-1073741823", "1e-20000", "0e-16384"}) {
    EXPECT_EQ(Parsed(over), "ERROR: value overflows numeric format") << over;
  }
  EXPECT_EQ(Parsed("0.00e-16381"), "0." + std::string(38, '0'));  // dscale 16383 is allowed
}

TEST(NumericTest, TextPrintsExactlyScaleDigitsAndNoNegativeZero) {
  EXPECT_EQ(NumericText(Numeric::FromParts(0, 0)), "0");
  EXPECT_EQ(NumericText(Numeric::FromParts(0, 3)), "0.000");
  EXPECT_EQ(NumericText(Numeric::FromParts(5, 3)), "0.005");
  EXPECT_EQ(NumericText(Numeric::FromParts(-5, 1)), "-0.5");
  EXPECT_EQ(NumericText(Numeric::FromParts(1250, 2)), "12.50");
  EXPECT_EQ(NumericText(Numeric::FromParts(-3, 0)), "-3");
}

TEST(NumericTest, TextRoundTrips) {
  std::mt19937_64 rng(33);
  for (int i = 0; i < 20000; ++i) {
    const int digits = static_cast<int>(rng() % 39);
    Int128 c = 0;
    for (int d = 0; d < digits; ++d) c = c * 10 + static_cast<int>(rng() % 10);
    if (rng() % 2) c = -c;
    const Numeric n = Numeric::FromParts(c, static_cast<int>(rng() % 39));
    const std::string text = NumericText(n);
    Result<Numeric> back = ParseNumeric(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(*back, n) << text;
    EXPECT_EQ(NumericText(*back), text);
  }
}

TEST(NumericTest, ValueOrderIgnoresScaleDatumOrderDoesNot) {
  EXPECT_EQ(CompareNumericValue(N("1.5"), N("1.50")), 0);
  EXPECT_EQ(CompareNumeric(N("1.5"), N("1.50")), -1);
  EXPECT_EQ(CompareNumeric(N("1.50"), N("1.5")), 1);
  EXPECT_EQ(CompareNumeric(N("1.50"), N("1.50")), 0);
  EXPECT_EQ(CompareNumericValue(N("0"), N("-0.000")), 0);
  EXPECT_EQ(CompareNumericValue(N("-1"), N("0.1")), -1);
  EXPECT_EQ(CompareNumericValue(N("-1.5"), N("-1.49999")), -1);
  EXPECT_EQ(CompareNumericValue(N("2"), N("1.9999999999999999999999999999999999999")), 1);
  // Aligning 38 integer digits to scale 38 needs 76 digits.
  EXPECT_EQ(CompareNumericValue(N(kMaxCoefficient), N("0." + kMaxCoefficient)), 1);
  EXPECT_EQ(CompareNumericValue(N("-" + kMaxCoefficient), N("-0." + kMaxCoefficient)), -1);
}

TEST(NumericTest, ValueOrderAgreesWithDoublesOnRandomPairs) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const Int128 a = static_cast<std::int64_t>(rng() % 2000001) - 1000000;
    const Int128 b = static_cast<std::int64_t>(rng() % 2000001) - 1000000;
    const int sa = static_cast<int>(rng() % 6), sb = static_cast<int>(rng() % 6);
    // a × 10^-sa vs b × 10^-sb, exactly in integers at scale 5.
    Int128 ea = a, eb = b;
    for (int k = sa; k < 5; ++k) ea *= 10;
    for (int k = sb; k < 5; ++k) eb *= 10;
    const int expected = ea < eb ? -1 : ea > eb ? 1 : 0;
    EXPECT_EQ(CompareNumericValue(Numeric::FromParts(a, sa), Numeric::FromParts(b, sb)), expected);
  }
}

TEST(NumericTest, FromInt64) {
  EXPECT_EQ(NumericText(NumericFromInt64(std::numeric_limits<std::int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(NumericText(NumericFromInt64(std::numeric_limits<std::int64_t>::max())),
            "9223372036854775807");
  EXPECT_EQ(NumericFromInt64(7).scale, 0);
}

// select 1.5 + 2.25, 1.5 - 2.25, 1.5 * 2.25, 0.1*0.1, -1.0 * 0, -1.5 + 1.5, (-0.5)::numeric * 0.5,
//   0.1::numeric * 0.001;
TEST(NumericTest, AddSubMulTakePostgresScales) {
  EXPECT_EQ(Show(NumericAdd(N("1.5"), N("2.25"))), "3.75");
  EXPECT_EQ(Show(NumericSub(N("1.5"), N("2.25"))), "-0.75");
  EXPECT_EQ(Show(NumericMul(N("1.5"), N("2.25"))), "3.375");
  EXPECT_EQ(Show(NumericMul(N("0.1"), N("0.1"))), "0.01");
  EXPECT_EQ(Show(NumericMul(N("-1.0"), N("0"))), "0.0");
  EXPECT_EQ(Show(NumericAdd(N("-1.5"), N("1.5"))), "0.0");
  EXPECT_EQ(Show(NumericMul(N("-0.5"), N("0.5"))), "-0.25");
  EXPECT_EQ(Show(NumericMul(N("0.1"), N("0.001"))), "0.0001");
}

TEST(NumericTest, AddSubMulOverflowAt10To38) {
  EXPECT_EQ(Show(NumericAdd(N(kMaxCoefficient), N("1"))), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericSub(N("-" + kMaxCoefficient), N("1"))),
            "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericAdd(N(kMaxCoefficient), N(kMaxCoefficient))),
            "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericAdd(N("-" + kMaxCoefficient), N("-" + kMaxCoefficient))),
            "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericAdd(N(kMaxCoefficient), N("-1"))), std::string(37, '9') + "8");
  EXPECT_EQ(Show(NumericMul(N("10000000000000000000"), N("10000000000000000000"))),
            "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericMul(N("1000000000000000000"), N("10000000000000000000"))),
            "1" + std::string(37, '0'));
  // 10^37 - 0.1 needs 38 digits at scale 1, though 10^37 at scale 1 would need 39.
  EXPECT_EQ(Show(NumericSub(N("1" + std::string(37, '0')), N("0.1"))), std::string(37, '9') + ".9");
  // An integer part of 38 digits has no room for a fraction digit.
  EXPECT_EQ(Show(NumericAdd(N(kMaxCoefficient), N("0.1"))),
            "ERROR: value overflows numeric format");
}

// PostgreSQL's product has scale s1 + s2 up to 1000 digits; ours stops at 38, rounded half away
// from zero (select 0.00000000000000000005 * 0.0000000000000000005 is
// 0.000000000000000000000000000000000000025 there).
TEST(NumericTest, MulRoundsScaleBeyond38HalfAwayFromZero) {
  const Numeric a = N("0.00000000000000000005");  // scale 20
  const Numeric b = N("0.0000000000000000005");   // scale 19
  EXPECT_EQ(Show(NumericMul(a, b)), "0.00000000000000000000000000000000000003");
  EXPECT_EQ(Show(NumericMul(NumericNegate(a), b)), "-0.00000000000000000000000000000000000003");
  EXPECT_EQ(Show(NumericMul(a, N("0.0000000000000000004"))),
            "0.00000000000000000000000000000000000002");
  EXPECT_EQ(NumericMul(a, b)->scale, 38);
  EXPECT_EQ(Show(NumericMul(N("0." + kMaxCoefficient), N("0." + kMaxCoefficient))),
            "0." + std::string(37, '9') + "8");
}

TEST(NumericTest, AddSubMulAgreeWithInt128OnSmallValues) {
  std::mt19937_64 rng(42);
  const auto at_scale = [](Int128 c, int from, int to) {
    for (int k = from; k < to; ++k) c *= 10;
    return c;
  };
  for (int i = 0; i < 50000; ++i) {
    const Int128 a = static_cast<std::int64_t>(rng() % 2000000001) - 1000000000;
    const Int128 b = static_cast<std::int64_t>(rng() % 2000000001) - 1000000000;
    const int sa = static_cast<int>(rng() % 10), sb = static_cast<int>(rng() % 10);
    const Numeric na = Numeric::FromParts(a, sa), nb = Numeric::FromParts(b, sb);
    const int s = std::max(sa, sb);
    Result<Numeric> sum = NumericAdd(na, nb), diff = NumericSub(na, nb), prod = NumericMul(na, nb);
    ASSERT_TRUE(sum.ok() && diff.ok() && prod.ok());
    EXPECT_EQ(*sum, Numeric::FromParts(at_scale(a, sa, s) + at_scale(b, sb, s), s));
    EXPECT_EQ(*diff, Numeric::FromParts(at_scale(a, sa, s) - at_scale(b, sb, s), s));
    EXPECT_EQ(*prod, Numeric::FromParts(a * b, sa + sb));
  }
}

// select 10::numeric/4, 1::numeric/7000000, 100000000::numeric/3, 1::numeric/3, 2::numeric/3,
//   -2::numeric/3, 9999::numeric/10000, 10000::numeric/9999, 0::numeric/5, 0.00::numeric/3,
//   10.0/4, 1/3.0, 1.000000000000000000000000000001/3;
TEST(NumericTest, DivTakesSelectDivScale) {
  EXPECT_EQ(Show(NumericDiv(N("10"), N("4"))), "2.5000000000000000");
  EXPECT_EQ(Show(NumericDiv(N("1"), N("7000000"))), "0.000000142857142857142857");
  EXPECT_EQ(Show(NumericDiv(N("100000000"), N("3"))), "33333333.333333333333");
  EXPECT_EQ(Show(NumericDiv(N("1"), N("3"))), "0.33333333333333333333");
  EXPECT_EQ(Show(NumericDiv(N("2"), N("3"))), "0.66666666666666666667");
  EXPECT_EQ(Show(NumericDiv(N("-2"), N("3"))), "-0.66666666666666666667");
  EXPECT_EQ(Show(NumericDiv(N("2"), N("-3"))), "-0.66666666666666666667");
  EXPECT_EQ(Show(NumericDiv(N("9999"), N("10000"))), "0.99990000000000000000");
  EXPECT_EQ(Show(NumericDiv(N("10000"), N("9999"))), "1.0001000100010001");
  EXPECT_EQ(Show(NumericDiv(N("0"), N("5"))), "0.00000000000000000000");
  EXPECT_EQ(Show(NumericDiv(N("0.00"), N("3"))), "0.00000000000000000000");
  EXPECT_EQ(Show(NumericDiv(N("10.0"), N("4"))), "2.5000000000000000");
  EXPECT_EQ(Show(NumericDiv(N("1"), N("3.0"))), "0.33333333333333333333");
  EXPECT_EQ(Show(NumericDiv(N("1.000000000000000000000000000001"), N("3"))),
            "0.333333333333333333333333333334");
}

// The quotient at whatever scale select_div_scale chose is a / b rounded half away from zero at
// that scale: |q × b - a'| <= |b| / 2 (a' is a at the quotient's scale), with the tie going away
// from zero — checked exactly in __int128 on small values.
TEST(NumericTest, DivRoundsTheExactQuotientHalfAwayFromZero) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50000; ++i) {
    const Int128 a = static_cast<std::int64_t>(rng() % 2000001) - 1000000;
    Int128 b = static_cast<std::int64_t>(rng() % 2001) - 1000;
    if (b == 0) b = 7;
    const int sa = static_cast<int>(rng() % 6), sb = static_cast<int>(rng() % 6);
    Result<Numeric> q = NumericDiv(Numeric::FromParts(a, sa), Numeric::FromParts(b, sb));
    ASSERT_TRUE(q.ok());
    ASSERT_GE(q->scale, std::max(sa, sb));
    ASSERT_LE(q->scale, 30);  // small operands: the quotient and the checks fit __int128
    // a / b = (a × 10^(scale + sb - sa)) / b at the quotient's scale.
    Int128 scaled = a;
    for (int k = 0; k < q->scale + sb - sa; ++k) scaled *= 10;
    const Int128 error = q->coefficient() * b - scaled;  // (q - exact) × b
    const Int128 abs_error = error < 0 ? -error : error, abs_b = b < 0 ? -b : b;
    ASSERT_LE(2 * abs_error, abs_b)
        << static_cast<std::int64_t>(a) << "/" << static_cast<std::int64_t>(b);
    if (2 * abs_error == abs_b) {  // a tie: q lies away from zero from the exact quotient
      const bool q_further = (error > 0) == (b > 0) ? q->coefficient() > 0 : q->coefficient() < 0;
      EXPECT_TRUE(q_further) << static_cast<std::int64_t>(a) << "/" << static_cast<std::int64_t>(b);
    }
  }
}

// select 12345678901234567890::numeric/0.0001; select 0.0000001/123456789012345678901234567890;
//   select 123456789012345678901234567890/0.0000001;
TEST(NumericTest, DivBigBySmallAndSmallByBig) {
  EXPECT_EQ(Show(NumericDiv(N("12345678901234567890"), N("0.0001"))),
            "123456789012345678900000.0000");
  // PostgreSQL: 0.00000000000000000000000000000000000081000000729000006634 (scale 56); ours
  // stops at 38.
  EXPECT_EQ(Show(NumericDiv(N("0.0000001"), N("123456789012345678901234567890"))),
            "0.00000000000000000000000000000000000081");
  // PostgreSQL: 1234567890123456789012345678900000000.0000000 — 44 digits; ours overflows.
  EXPECT_EQ(Show(NumericDiv(N("123456789012345678901234567890"), N("0.0000001"))),
            "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericDiv(N(kMaxCoefficient), N("0." + std::string(37, '0') + "1"))),
            "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericDiv(N(kMaxCoefficient), N(kMaxCoefficient))), "1.00000000000000000000");
  // PostgreSQL: 0.00000000000000000000000000000000000001000000000000000000 (scale 56).
  EXPECT_EQ(Show(NumericDiv(N("0." + kMaxCoefficient), N(kMaxCoefficient))),
            "0." + std::string(37, '0') + "1");
}

// select 1/0::numeric; select 1.5 % 0; (avg of no rows is NULL: the caller's case, not ours)
TEST(NumericTest, DivAndModByZeroAreDataErrors) {
  EXPECT_EQ(Show(NumericDiv(N("1"), N("0"))), "ERROR: division by zero");
  EXPECT_EQ(Show(NumericDiv(N("0"), N("0.00"))), "ERROR: division by zero");
  EXPECT_EQ(Show(NumericMod(N("1.5"), N("0"))), "ERROR: division by zero");
  EXPECT_EQ(Show(NumericAvg(N("1.5"), 0)), "ERROR: division by zero");
}

// select 7::numeric % 3, -7::numeric % 3, 7::numeric % -3, -7.5 % 2, 7.5 % 0.7, 1 % 0.3000;
TEST(NumericTest, ModTakesTheDividendsSignAndTheLargerScale) {
  EXPECT_EQ(Show(NumericMod(N("7"), N("3"))), "1");
  EXPECT_EQ(Show(NumericMod(N("-7"), N("3"))), "-1");
  EXPECT_EQ(Show(NumericMod(N("7"), N("-3"))), "1");
  EXPECT_EQ(Show(NumericMod(N("-7.5"), N("2"))), "-1.5");
  EXPECT_EQ(Show(NumericMod(N("7.5"), N("0.7"))), "0.5");
  EXPECT_EQ(Show(NumericMod(N("1"), N("0.3000"))), "0.1000");
  EXPECT_EQ(Show(NumericMod(N("0." + kMaxCoefficient), N(kMaxCoefficient))),
            "0." + kMaxCoefficient);
  // select -0000.0000000000000000 % -22788497673121205401729.8049574,
  //   -1.0000000000000001 % 22788497673121205401729.8049574: the divisor aligned to scale 16 is
  // above 2^127.
  EXPECT_EQ(Show(NumericMod(N("-0000.0000000000000000"), N("-22788497673121205401729.8049574"))),
            "0.0000000000000000");
  EXPECT_EQ(Show(NumericMod(N("-1.0000000000000001"), N("22788497673121205401729.8049574"))),
            "-1.0000000000000001");
  // The dividend aligned to scale 1 needs 39 digits; the remainder does not.
  EXPECT_EQ(Show(NumericMod(N(kMaxCoefficient), N("0.3"))), "0.0");
}

// select round(-0.4), round(-0.5), round(2.5), round(-2.5, 0), round(1234.5678, -2),
//   round(-1250, -2), round(1.5, 3), trunc(-1.99), trunc(1234.5678, -2), trunc(1.5, 3),
//   floor(-1.5), floor(1.50), ceil(-1.5), ceil(1.2), ceil(-0.2), round(5, -1), round(4, -1),
//   round(999, -5), round(-0.001, 2), trunc(-0.001, 2), round(-0.25, 1);
TEST(NumericTest, RoundTruncFloorCeilAsPostgres) {
  EXPECT_EQ(Show(NumericRound(N("-0.4"), 0)), "0");
  EXPECT_EQ(Show(NumericRound(N("-0.5"), 0)), "-1");
  EXPECT_EQ(Show(NumericRound(N("2.5"), 0)), "3");
  EXPECT_EQ(Show(NumericRound(N("-2.5"), 0)), "-3");
  EXPECT_EQ(Show(NumericRound(N("1234.5678"), -2)), "1200");
  EXPECT_EQ(Show(NumericRound(N("-1250"), -2)), "-1300");
  EXPECT_EQ(Show(NumericRound(N("1.5"), 3)), "1.500");
  EXPECT_EQ(Show(NumericTrunc(N("-1.99"), 0)), "-1");
  EXPECT_EQ(Show(NumericTrunc(N("1234.5678"), -2)), "1200");
  EXPECT_EQ(Show(NumericTrunc(N("1.5"), 3)), "1.500");
  EXPECT_EQ(Show(NumericFloor(N("-1.5"))), "-2");
  EXPECT_EQ(Show(NumericFloor(N("1.50"))), "1");
  EXPECT_EQ(Show(NumericCeil(N("-1.5"))), "-1");
  EXPECT_EQ(Show(NumericCeil(N("1.2"))), "2");
  EXPECT_EQ(Show(NumericCeil(N("-0.2"))), "0");
  EXPECT_EQ(Show(NumericRound(N("5"), -1)), "10");
  EXPECT_EQ(Show(NumericRound(N("4"), -1)), "0");
  EXPECT_EQ(Show(NumericRound(N("999"), -5)), "0");
  EXPECT_EQ(Show(NumericRound(N("-0.001"), 2)), "0.00");
  EXPECT_EQ(Show(NumericTrunc(N("-0.001"), 2)), "0.00");
  EXPECT_EQ(Show(NumericRound(N("-0.25"), 1)), "-0.3");
}

TEST(NumericTest, RoundAtTheEdgesOf38Digits) {
  EXPECT_EQ(Show(NumericRound(N(kMaxCoefficient), -1)), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericRound(N(kMaxCoefficient), -38)), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericRound(N(kMaxCoefficient), -39)), "0");
  EXPECT_EQ(Show(NumericRound(N(kMaxCoefficient), -2000000)), "0");
  EXPECT_EQ(Show(NumericTrunc(N(kMaxCoefficient), -37)), "90000000000000000000000000000000000000");
  EXPECT_EQ(Show(NumericFloor(N("-" + kMaxCoefficient))), "-" + kMaxCoefficient);
  EXPECT_EQ(Show(NumericCeil(N("0." + kMaxCoefficient))), "1");
  // PostgreSQL: round(1.5, 40) is 1.5 and 39 zeros; ours stops at scale 38, where 1.5 needs 39
  // digits.
  EXPECT_EQ(Show(NumericRound(N("1.5"), 40)), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericRound(N("0.5"), 40)), "0.5" + std::string(37, '0'));
  EXPECT_EQ(Show(NumericRound(N("0.5"), 2000000)), "0.5" + std::string(37, '0'));
}

// select avg(x) from (values (1.00),(2.00),(2.00)) v(x);  -- 1.6666666666666667
// select avg(x) from (values (1),(2),(2)) v(x);           -- 1.6666666666666667
TEST(NumericTest, AvgIsSumOverCountWithTheDivisionsScale) {
  EXPECT_EQ(Show(NumericAvg(N("5.00"), 3)), "1.6666666666666667");
  EXPECT_EQ(Show(NumericAvg(N("5"), 3)), "1.6666666666666667");
  EXPECT_EQ(Show(NumericAvg(N("-5"), 3)), "-1.6666666666666667");
  EXPECT_EQ(Show(NumericAvg(N(kMaxCoefficient), std::numeric_limits<std::int64_t>::max())),
            "10842021724855044341");
}

// select 0.1::float8::numeric, 1e20::float8::numeric, 1.0000000000000002::float8::numeric,
//   (1/3.0::float8)::numeric, 123456789012345678::float8::numeric, 1e-20::float8::numeric,
//   (-2.5)::float8::numeric;
TEST(NumericTest, FromDoubleReadsFifteenSignificantDigits) {
  EXPECT_EQ(Show(NumericFromDouble(0.1)), "0.1");
  EXPECT_EQ(Show(NumericFromDouble(1e20)), "100000000000000000000");
  EXPECT_EQ(Show(NumericFromDouble(1.0000000000000002)), "1");
  EXPECT_EQ(Show(NumericFromDouble(1 / 3.0)), "0.333333333333333");
  EXPECT_EQ(Show(NumericFromDouble(123456789012345678.0)), "123456789012346000");
  EXPECT_EQ(Show(NumericFromDouble(1e-20)), "0.00000000000000000001");
  EXPECT_EQ(Show(NumericFromDouble(-2.5)), "-2.5");
  EXPECT_EQ(Show(NumericFromDouble(-0.0)), "0");
  EXPECT_EQ(Show(NumericFromDouble(1e-300)), "0." + std::string(38, '0'));  // ours: scale 38
  EXPECT_EQ(Show(NumericFromDouble(1e38)), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericFromDouble(9.99999999999999e37)), "99999999999999900000000000000000000000");
  EXPECT_EQ(Show(NumericFromDouble(std::numeric_limits<double>::quiet_NaN())),
            "ERROR: cannot convert NaN to numeric");
  EXPECT_EQ(Show(NumericFromDouble(-std::numeric_limits<double>::infinity())),
            "ERROR: cannot convert infinity to numeric");
}

TEST(NumericTest, ToDoubleIsTheNearestDouble) {
  EXPECT_EQ(NumericToDouble(N("0.1")), 0.1);
  EXPECT_EQ(NumericToDouble(N("-2.50")), -2.5);
  EXPECT_EQ(NumericToDouble(N("0")), 0.0);
  EXPECT_EQ(NumericToDouble(N("1.0000000000000002")), 1.0000000000000002);
  EXPECT_EQ(NumericToDouble(N(kMaxCoefficient)), 1e38);
}

// select 2.5::int8, (-2.5)::int8, 0.5::int4, (-0.5)::int2, 32767.4::int2; select 32767.5::int2;
//   select 2147483647.5::int4; select 9223372036854775807.5::int8;
TEST(NumericTest, ToIntegerRoundsHalfAwayAndChecksTheRange) {
  const auto show = [](const Result<std::int64_t>& r) {
    return r.ok() ? std::to_string(*r) : "ERROR: " + r.status().message();
  };
  constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(show(NumericToInt64(N("2.5"), kI64Min, kI64Max, "bigint")), "3");
  EXPECT_EQ(show(NumericToInt64(N("-2.5"), kI64Min, kI64Max, "bigint")), "-3");
  EXPECT_EQ(show(NumericToInt64(N("0.5"), INT32_MIN, INT32_MAX, "integer")), "1");
  EXPECT_EQ(show(NumericToInt64(N("-0.5"), INT16_MIN, INT16_MAX, "smallint")), "-1");
  EXPECT_EQ(show(NumericToInt64(N("32767.4"), INT16_MIN, INT16_MAX, "smallint")), "32767");
  EXPECT_EQ(show(NumericToInt64(N("32767.5"), INT16_MIN, INT16_MAX, "smallint")),
            "ERROR: smallint out of range");
  EXPECT_EQ(show(NumericToInt64(N("-32768.5"), INT16_MIN, INT16_MAX, "smallint")),
            "ERROR: smallint out of range");
  EXPECT_EQ(show(NumericToInt64(N("2147483647.5"), INT32_MIN, INT32_MAX, "integer")),
            "ERROR: integer out of range");
  EXPECT_EQ(show(NumericToInt64(N("9223372036854775807.5"), kI64Min, kI64Max, "bigint")),
            "ERROR: bigint out of range");
  EXPECT_EQ(show(NumericToInt64(N("-9223372036854775808.4"), kI64Min, kI64Max, "bigint")),
            "-9223372036854775808");
  EXPECT_EQ(show(NumericToInt64(N(kMaxCoefficient), kI64Min, kI64Max, "bigint")),
            "ERROR: bigint out of range");
}

// select 0.99999999999999999999999999999999999999::numeric(38,37); select 9.99::numeric(2,1);
// select 123.456::numeric(5,2), (-0.005)::numeric(5,2), 0.004::numeric(5,2),
//   999.994::numeric(5,2); select 999.995::numeric(5,2); select 1::numeric(2,2);
//   select 12345::numeric(3,-2); select 0.5::numeric(2,3); select 0.05::numeric(2,3);
TEST(NumericTest, ApplyTypmodRoundsThenChecksThePrecision) {
  EXPECT_EQ(Show(NumericApplyTypmod(N("123.456"), 5, 2)), "123.46");
  EXPECT_EQ(Show(NumericApplyTypmod(N("-0.005"), 5, 2)), "-0.01");
  EXPECT_EQ(Show(NumericApplyTypmod(N("0.004"), 5, 2)), "0.00");
  EXPECT_EQ(Show(NumericApplyTypmod(N("999.994"), 5, 2)), "999.99");
  EXPECT_EQ(Show(NumericApplyTypmod(N("999.995"), 5, 2)),
            "ERROR: numeric field overflow\nDETAIL:  A field with precision 5, scale 2 must "
            "round to an absolute value less than 10^3.");
  EXPECT_EQ(Show(NumericApplyTypmod(N("1"), 2, 2)),
            "ERROR: numeric field overflow\nDETAIL:  A field with precision 2, scale 2 must "
            "round to an absolute value less than 1.");
  EXPECT_EQ(Show(NumericApplyTypmod(N("12345"), 3, -2)), "12300");
  EXPECT_EQ(Show(NumericApplyTypmod(N("0.5"), 2, 3)),
            "ERROR: numeric field overflow\nDETAIL:  A field with precision 2, scale 3 must "
            "round to an absolute value less than 10^-1.");
  EXPECT_EQ(Show(NumericApplyTypmod(N("0.05"), 2, 3)), "0.050");
  EXPECT_EQ(Show(NumericApplyTypmod(N("0"), 1, 0)), "0");
  EXPECT_EQ(Show(NumericApplyTypmod(N(kMaxCoefficient), 38, 0)), kMaxCoefficient);
  EXPECT_EQ(Show(NumericApplyTypmod(N("0." + kMaxCoefficient), 38, 38)), "0." + kMaxCoefficient);
  EXPECT_EQ(Show(NumericApplyTypmod(N("0." + kMaxCoefficient), 38, 37)),
            "1." + std::string(37, '0'));
  // select '-78806'::numeric(35,35); select '861.68'::numeric(36,38): rounded to scale 35 these
  // need more than 38 digits, and are the field's overflow, not the format's.
  EXPECT_EQ(Show(NumericApplyTypmod(N("-78806"), 35, 35)),
            "ERROR: numeric field overflow\nDETAIL:  A field with precision 35, scale 35 must "
            "round to an absolute value less than 1.");
  EXPECT_EQ(Show(NumericApplyTypmod(N("861.68"), 36, 38)),
            "ERROR: numeric field overflow\nDETAIL:  A field with precision 36, scale 38 must "
            "round to an absolute value less than 10^-2.");
  EXPECT_EQ(Show(NumericApplyTypmod(N("9.99"), 2, 1)),
            "ERROR: numeric field overflow\nDETAIL:  A field with precision 2, scale 1 must "
            "round to an absolute value less than 10^1.");
}

// select sqrt(2::numeric), sqrt(0::numeric), sqrt(4::numeric), sqrt(1.00), sqrt(0.0001),
//   sqrt(100000000000000000000::numeric), sqrt(2.0000000000000000000001),
//   sqrt(0.000000000000000000000000000002), sqrt(6.25),
//   sqrt(99999999999999999999999999999999999999::numeric),
//   sqrt(0.99999999999999999999999999999999999999), sqrt(0.0000000000000000000000000000000000001),
//   sqrt(12345678901234567890.12345678901234567); select sqrt(-1::numeric);
TEST(NumericTest, SqrtTakesNumericSqrtsScale) {
  EXPECT_EQ(Show(NumericSqrt(N("2"))), "1.414213562373095");
  EXPECT_EQ(Show(NumericSqrt(N("0"))), "0.000000000000000");
  EXPECT_EQ(Show(NumericSqrt(N("4"))), "2.000000000000000");
  EXPECT_EQ(Show(NumericSqrt(N("1.00"))), "1.000000000000000");
  EXPECT_EQ(Show(NumericSqrt(N("0.0001"))), "0.01000000000000000");
  EXPECT_EQ(Show(NumericSqrt(N("100000000000000000000"))), "10000000000.00000");
  EXPECT_EQ(Show(NumericSqrt(N("2.0000000000000000000001"))), "1.4142135623730950488017");
  EXPECT_EQ(Show(NumericSqrt(N("0.000000000000000000000000000002"))),
            "0.0000000000000014142135623730950");
  EXPECT_EQ(Show(NumericSqrt(N("6.25"))), "2.500000000000000");
  EXPECT_EQ(Show(NumericSqrt(N(kMaxCoefficient))), "10000000000000000000");
  EXPECT_EQ(Show(NumericSqrt(N("0." + kMaxCoefficient))), "0." + kMaxCoefficient);
  EXPECT_EQ(Show(NumericSqrt(N("0.0000000000000000000000000000000000001"))),
            "0.0000000000000000003162277660168379332");
  EXPECT_EQ(Show(NumericSqrt(N("12345678901234567890.12345678901234567"))),
            "3513641828.82014425311122238");
  EXPECT_EQ(Show(NumericSqrt(N("-1"))), "ERROR: cannot take square root of a negative number");
  EXPECT_EQ(Show(NumericSqrt(N("-0.000000001"))),
            "ERROR: cannot take square root of a negative number");
}

// select 2::numeric ^ 3, 2.5::numeric ^ 2, 2::numeric ^ -2, 0::numeric ^ 0, 1.5 ^ 3.0,
//   (-2)::numeric ^ 3, 3::numeric ^ -1, power(2.00::numeric, 10), 7::numeric ^ 0,
//   0.5::numeric ^ 10, 0.1::numeric ^ 20, 0.5::numeric ^ 3, 2::numeric ^ -3, 0.001::numeric ^ -3,
//   7::numeric ^ -5, 1.1::numeric ^ -100, 1.00000000000000000001 ^ 2,
//   1.0000000001 ^ 1000000000, 0.9999999999 ^ 1000000000, (-1.5)::numeric ^ 3,
//   (-2)::numeric ^ -1, (-2)::numeric ^ 2, (-0.5)::numeric ^ 3, 0.1::numeric ^ 16, 0.1 ^ 15,
//   0.5 ^ 53, 0::numeric ^ 5, 0.00::numeric ^ 3, 1.5 ^ 2.0,
//   1.000000000000000000000000000000000001 ^ 2, 1.23456789 ^ 7, 1.23456789 ^ -7,
//   9.87654321 ^ 13;
TEST(NumericTest, PowerWithIntegerExponentsAsPostgres) {
  const auto power = [](std::string_view b, std::string_view e) {
    return Show(NumericPower(N(b), N(e)));
  };
  EXPECT_EQ(power("2", "3"), "8.0000000000000000");
  EXPECT_EQ(power("2.5", "2"), "6.2500000000000000");
  EXPECT_EQ(power("2", "-2"), "0.2500000000000000");
  EXPECT_EQ(power("0", "0"), "1.0000000000000000");
  EXPECT_EQ(power("1.5", "3.0"), "3.3750000000000000");
  EXPECT_EQ(power("-2", "3"), "-8.0000000000000000");
  EXPECT_EQ(power("3", "-1"), "0.3333333333333333");
  EXPECT_EQ(power("2.00", "10"), "1024.0000000000000000");
  EXPECT_EQ(power("7", "0"), "1.0000000000000000");
  EXPECT_EQ(power("0.5", "10"), "0.0009765625000000");
  EXPECT_EQ(power("0.1", "20"), "0.0000000000000000");
  EXPECT_EQ(power("0.5", "3"), "0.1250000000000000");
  EXPECT_EQ(power("2", "-3"), "0.1250000000000000");
  EXPECT_EQ(power("0.001", "-3"), "1000000000.0000000000000000");
  EXPECT_EQ(power("7", "-5"), "0.0000594990182662");
  EXPECT_EQ(power("1.1", "-100"), "0.0000725657159015");
  EXPECT_EQ(power("1.00000000000000000001", "2"), "1.00000000000000000002");
  EXPECT_EQ(power("1.0000000001", "1000000000"), "1.1051709180701218");
  EXPECT_EQ(power("0.9999999999", "1000000000"), "0.9048374180314354");
  EXPECT_EQ(power("-1.5", "3"), "-3.3750000000000000");
  EXPECT_EQ(power("-2", "-1"), "-0.5000000000000000");
  EXPECT_EQ(power("-2", "2"), "4.0000000000000000");
  EXPECT_EQ(power("-0.5", "3"), "-0.1250000000000000");
  EXPECT_EQ(power("0.1", "16"), "0.0000000000000001");
  EXPECT_EQ(power("0.1", "15"), "0.0000000000000010");
  EXPECT_EQ(power("0.5", "53"), "0.0000000000000001");
  EXPECT_EQ(power("0", "5"), "0.0000000000000000");
  EXPECT_EQ(power("0.00", "3"), "0.0000000000000000");
  EXPECT_EQ(power("1.5", "2.0"), "2.2500000000000000");
  EXPECT_EQ(power("1.000000000000000000000000000000000001", "2"),
            "1.000000000000000000000000000000000002");
  EXPECT_EQ(power("1.23456789", "7"), "4.3712418962088561");
  EXPECT_EQ(power("1.23456789", "-7"), "0.2287679391221273");
  EXPECT_EQ(power("9.87654321", "13"), "8508726919155.8811360348303818");
  EXPECT_EQ(power("2", "-2147483648"), "0.0000000000000000");
  EXPECT_EQ(power("0.5", "2147483647"), "0.0000000000000000");
  EXPECT_EQ(power("-1", "2147483647"), "-1.0000000000000000");
}

// select 2::numeric ^ 0.5 a, 100::numeric ^ 0.5 b, 10::numeric ^ 1.5 c, 0.5 ^ 0.5 d, 1.5 ^ 2.5 e,
//   2 ^ 10.5 f, 3 ^ -0.5 g, 1.0001 ^ 0.123 h, 10 ^ 0.3010299956639812 i, 0.001 ^ 0.33 j,
//   1.000000001 ^ 1234.5678 k, 123.456 ^ 7.89 l, 2 ^ 0.00000000000000000001 m, 0.9 ^ -200.5 n,
//   0 ^ 0.5 p, 1 ^ 0.5 q, 1.00 ^ 12.345 r; select (-1)::numeric ^ 3000000001,
//   1::numeric ^ 3000000000, 0.5::numeric ^ 3000000000, 1.0000000001 ^ 3000000000;
TEST(NumericTest, PowerWithOtherExponentsIsExpOfLnAsPostgres) {
  const auto power = [](std::string_view b, std::string_view e) {
    return Show(NumericPower(N(b), N(e)));
  };
  EXPECT_EQ(power("2", "0.5"), "1.4142135623730950");
  EXPECT_EQ(power("100", "0.5"), "10.000000000000000");
  EXPECT_EQ(power("10", "1.5"), "31.622776601683793");
  EXPECT_EQ(power("0.5", "0.5"), "0.7071067811865475");
  EXPECT_EQ(power("1.5", "2.5"), "2.7556759606310754");
  EXPECT_EQ(power("2", "10.5"), "1448.1546878700493");
  EXPECT_EQ(power("3", "-0.5"), "0.5773502691896258");
  EXPECT_EQ(power("1.0001", "0.123"), "1.0000122994606787");
  EXPECT_EQ(power("10", "0.3010299956639812"), "2.0000000000000000");
  EXPECT_EQ(power("0.001", "0.33"), "0.1023292992280754");
  EXPECT_EQ(power("1.000000001", "1234.5678"), "1.0000012345685615");
  EXPECT_EQ(power("123.456", "7.89"), "31771028258180977.309");
  EXPECT_EQ(power("2", "0.00000000000000000001"), "1.00000000000000000001");
  EXPECT_EQ(power("0.9", "-200.5"), "1494090338.5424480");
  EXPECT_EQ(power("0", "0.5"), "0.0000000000000000");
  EXPECT_EQ(power("1", "0.5"), "1.0000000000000000");
  EXPECT_EQ(power("1.00", "12.345"), "1.0000000000000000");
  EXPECT_EQ(power("-1", "3000000001"), "-1.0000000000000000");
  EXPECT_EQ(power("1", "3000000000"), "1.0000000000000000");
  EXPECT_EQ(power("0.5", "3000000000"), "0." + std::string(38, '0'));  // PostgreSQL: scale 1000
  EXPECT_EQ(power("1.0000000001", "3000000000"), "1.3498588075557552");
}

// select 0::numeric ^ -1; select (-2)::numeric ^ 0.5; select 10::numeric ^ 37 (PostgreSQL:
// 10000000000000000000000000000000000000.0000000000000000, 54 digits — ours overflows).
TEST(NumericTest, PowerErrors) {
  EXPECT_EQ(Show(NumericPower(N("0"), N("-1"))),
            "ERROR: zero raised to a negative power is undefined");
  EXPECT_EQ(Show(NumericPower(N("-2"), N("0.5"))),
            "ERROR: a negative number raised to a non-integer power yields a complex result");
  EXPECT_EQ(Show(NumericPower(N("10"), N("37"))), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericPower(N("10"), N("22"))), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericPower(N("10"), N("21"))), "1000000000000000000000.0000000000000000");
  EXPECT_EQ(Show(NumericPower(N("2"), N("2147483647"))), "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericPower(N("1.0000000000000000000001"), N("1"))), "1.0000000000000000000001");
  // A scale-38 base keeps scale 38, where 1 itself needs 39 digits.
  EXPECT_EQ(Show(NumericPower(N("0." + kMaxCoefficient), N("0"))),
            "ERROR: value overflows numeric format");
  // select (-1.5)::numeric ^ 3000000001; select 2 ^ 200.5 (62 digits in PostgreSQL).
  EXPECT_EQ(Show(NumericPower(N("-1.5"), N("3000000001"))),
            "ERROR: value overflows numeric format");
  EXPECT_EQ(Show(NumericPower(N("2"), N("200.5"))), "ERROR: value overflows numeric format");
}

TEST(NumericTest, NegateAbsSign) {
  EXPECT_EQ(NumericText(NumericNegate(N("1.50"))), "-1.50");
  EXPECT_EQ(NumericText(NumericNegate(N("0.0"))), "0.0");
  EXPECT_EQ(NumericText(NumericAbs(N("-" + kMaxCoefficient))), kMaxCoefficient);
  EXPECT_EQ(NumericSign(N("-0.01")), -1);
  EXPECT_EQ(NumericSign(N("0.00")), 0);
  EXPECT_EQ(NumericSign(N("3")), 1);
}

}  // namespace
}  // namespace tandem::numeric_test
