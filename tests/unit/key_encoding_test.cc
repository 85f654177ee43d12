// The key encoding (base/row.h "Keys"): keys compare by value — numerics whatever their scale,
// intervals by their span — and every other datum as a row encodes it.
#include <gtest/gtest.h>

#include <limits>
#include <utility>

#include "base/datum_text.h"
#include "base/row.h"
#include "random_rows.h"
#include "shm/routing.h"

namespace tandem {
namespace key_encoding_test {

int Sign(int c) { return (c > 0) - (c < 0); }

Numeric Num(Int128 coefficient, int scale) { return Numeric::FromParts(coefficient, scale); }

// The order keys must have: datum order, but numerics by value alone and intervals by span alone.
int ValueOrder(const Datum& a, const Datum& b) {
  if (a.index() == b.index()) {
    if (const auto* n = std::get_if<Numeric>(&a)) {
      return CompareNumericValue(*n, std::get<Numeric>(b));
    }
    if (const auto* i = std::get_if<Interval>(&a)) {
      return CompareIntervalValue(*i, std::get<Interval>(b));
    }
  }
  return CompareDatum(a, b);
}
int ValueOrder(const Row& a, const Row& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (int c = ValueOrder(a[i], b[i]); c != 0) return c;
  }
  return Sign(static_cast<int>(a.size()) - static_cast<int>(b.size()));
}

// Another spelling of `d`'s value, when it has one: a numeric at a larger scale, an interval
// with 30 days as a month (or a month as 30 days).
Datum Respelled(const Datum& d) {
  if (const auto* n = std::get_if<Numeric>(&d)) {
    if (n->scale < 38 && n->coefficient() < Int128{1'000'000'000'000'000'000} &&
        n->coefficient() > -Int128{1'000'000'000'000'000'000}) {
      return Num(n->coefficient() * 10, n->scale + 1);
    }
  }
  if (const auto* i = std::get_if<Interval>(&d)) {
    Interval j = *i;
    if (j.days >= 30 && j.months < std::numeric_limits<std::int32_t>::max()) {
      j.days -= 30;
      ++j.months;
    } else if (j.months > std::numeric_limits<std::int32_t>::min() &&
               j.days < std::numeric_limits<std::int32_t>::max() - 30) {
      --j.months;
      j.days += 30;
    }
    return j;
  }
  return d;
}

TEST(KeyEncoding, EqualValuesSpelledApartEncodeAlike) {
  const std::vector<std::vector<Datum>> equal = {
      {Num(15, 1), Num(150, 2), Num(1500, 3)},  // 1.5, 1.50, 1.500
      {Num(-7500, 4), Num(-75, 2)},             // -0.7500, -0.75
      {Num(0, 0), Num(0, 2), Num(0, 38)},       // 0, 0.00, 0.000…
      {Num(100, 0), Num(1000, 1)},              // 100, 100.0
      {Interval{1, 0, 0}, Interval{0, 30, 0}, Interval{0, 0, 30 * kMicrosPerDay}},
      {Interval{0, 1, 0}, Interval{0, 0, kMicrosPerDay}},  // '1 day', '24:00:00'
      {Interval{1, -30, 5}, Interval{0, 0, 5}}};
  for (const auto& spellings : equal) {
    for (const Datum& d : spellings) {
      EXPECT_EQ(EncodeKey({d}), EncodeKey({spellings[0]}))
          << DatumText(d) << " and " << DatumText(spellings[0]);
      EXPECT_EQ(shm::WorkerOf(EncodeKey({d}), 4), shm::WorkerOf(EncodeKey({spellings[0]}), 4));
    }
    EXPECT_NE(EncodeRow({spellings[0]}), EncodeRow({spellings[1]})) << "rows keep the spelling";
  }
  EXPECT_NE(EncodeKey({Num(15, 1)}), EncodeKey({Num(151, 2)}));
  EXPECT_NE(EncodeKey({Interval{1, 0, 0}}), EncodeKey({Interval{0, 31, 0}}));
}

TEST(KeyEncoding, MemcmpOrderIsValueOrderAndEqualBytesAreEqualValues) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 200; ++i) {
      Datum x = gen.NextDatumOfAnyKind();
      Datum y = gen.NextDatumOfAnyKind();
      if (i % 3 == 0) y = Respelled(x);
      if (y.index() != x.index()) continue;  // a key column holds one kind
      for (const auto& [a, b] :
           {std::pair<Row, Row>{{x}, {y}}, std::pair<Row, Row>{{x, Datum(std::int64_t{1})}, {y}},
            std::pair<Row, Row>{{Datum(Null{}), x}, {Datum(Null{}), y}}}) {
        const std::string ea = EncodeKey(a), eb = EncodeKey(b);
        ASSERT_EQ(Sign(ValueOrder(a, b)), Sign(CompareEncoded(ea, eb)))
            << "seed " << seed << ": " << RowText(a) << " vs " << RowText(b);
        ASSERT_EQ(ValueOrder(a, b) == 0, ea == eb) << RowText(a) << " vs " << RowText(b);
      }
    }
  }
}

TEST(KeyEncoding, EveryOtherKindEncodesAsInARow) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 100; ++i) {
      const Row row = gen.NextRowOfAnyKind(5);
      bool spelled = false;
      for (const Datum& d : row) {
        spelled |= std::holds_alternative<Numeric>(d) || std::holds_alternative<Interval>(d);
      }
      if (!spelled) {
        ASSERT_EQ(EncodeKey(row), EncodeRow(row)) << RowText(row);
      }
    }
  }
}

TEST(KeyEncoding, DecodeKeyGivesTheSmallestScaleAndWholeMonthsThenDays) {
  auto decoded = [](const Datum& d) {
    auto row = DecodeKey(EncodeKey({d}));
    EXPECT_TRUE(row.ok()) << DatumText(d) << ": " << row.status().ToString();
    return row.ok() && row->size() == 1 ? DatumText((*row)[0]) : std::string("?");
  };
  EXPECT_EQ(decoded(Num(1500, 3)), "numeric '1.5'");
  EXPECT_EQ(decoded(Num(-7500, 4)), "numeric '-0.75'");
  EXPECT_EQ(decoded(Num(1000, 1)), "numeric '100'");
  EXPECT_EQ(decoded(Num(0, 4)), "numeric '0'");
  EXPECT_EQ(decoded(Num(1, 38)), DatumText(Num(1, 38)));
  EXPECT_EQ(decoded(Interval{0, 0, 30 * kMicrosPerDay}), DatumText(Interval{1, 0, 0}));
  EXPECT_EQ(decoded(Interval{0, 31, 7'200'000'000}), DatumText(Interval{1, 1, 7'200'000'000}));
  EXPECT_EQ(decoded(Interval{0, -31, 0}), DatumText(Interval{-1, -1, 0}));
  // The largest spans: more months than a field holds keep the rest in days, then microseconds.
  const Interval most{std::numeric_limits<std::int32_t>::max(),
                      std::numeric_limits<std::int32_t>::max(),
                      std::numeric_limits<std::int64_t>::max()};
  const Interval least{std::numeric_limits<std::int32_t>::min(),
                       std::numeric_limits<std::int32_t>::min(),
                       std::numeric_limits<std::int64_t>::min()};
  for (const Interval& i : {most, least}) {
    auto row = DecodeKey(EncodeKey({i}));
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    EXPECT_EQ(EncodeKey(*row), EncodeKey({i})) << "the same span";
  }
  // Every key decodes to a row whose key is itself.
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 50; ++i) {
      const Row row = gen.NextRowOfAnyKind(5);
      auto back = DecodeKey(EncodeKey(row));
      ASSERT_TRUE(back.ok()) << RowText(row) << ": " << back.status().ToString();
      ASSERT_EQ(EncodeKey(*back), EncodeKey(row)) << RowText(row);
    }
  }
}

TEST(KeyEncoding, RowsAndKeysRefuseEachOthersSpelledKinds) {
  for (const Datum& d : {Datum(Num(15, 1)), Datum(Interval{1, 2, 3})}) {
    EXPECT_EQ(DecodeRow(EncodeKey({d})).status().code(), StatusCode::kCorruption) << DatumText(d);
    EXPECT_EQ(DecodeKey(EncodeRow({d})).status().code(), StatusCode::kCorruption) << DatumText(d);
  }
  for (const std::string& bad : {
           std::string("\x0f"),                             // a numeric key without its value
           std::string("\x0f\x03\x41\x02\x33", 5),          // unterminated digits
           std::string("\x0f\x03\x41\x02\x33\x01\x00", 7),  // a trailing zero pair
           std::string("\x10\x80", 2),                      // a truncated span
           std::string("\x10\xff\xff\xff\xff\xff\xff\xff\xff\0\0\0\0\0\0\0\0", 17),  // 2^127
       }) {
    auto r = DecodeKey(bad);
    EXPECT_FALSE(r.ok()) << ::testing::PrintToString(bad);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    }
  }
}

}  // namespace key_encoding_test
}  // namespace tandem
