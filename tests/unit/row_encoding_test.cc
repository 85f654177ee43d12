// Property tests: the row encoding orders exactly as the datums do, and round-trips.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>

#include "base/datum_text.h"
#include "base/row.h"
#include "random_rows.h"
#include "shm/routing.h"

namespace tandem {
namespace {

int Sign(int c) { return (c > 0) - (c < 0); }

TEST(RowEncoding, MemcmpOrderEqualsDatumOrderOverRandomRows) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 200; ++i) {
      const Row a = gen.NextRow();
      const Row b = gen.NextRow();
      const std::string ea = EncodeRow(a), eb = EncodeRow(b);
      ASSERT_EQ(Sign(CompareRow(a, b)), Sign(CompareEncoded(ea, eb)))
          << "seed " << seed << ": " << RowText(a) << " vs " << RowText(b);
      ASSERT_EQ(CompareRow(a, b) == 0, ea == eb) << RowText(a) << " vs " << RowText(b);
    }
  }
}

TEST(RowEncoding, DecodeInvertsEncodeUpToCanonicalFloats) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 50; ++i) {
      const Row row = gen.NextRow(6);
      auto decoded = DecodeRow(EncodeRow(row));
      ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
      ASSERT_EQ(CompareRow(row, *decoded), 0) << RowText(row) << " → " << RowText(*decoded);
      ASSERT_EQ(EncodeRow(*decoded), EncodeRow(row));
    }
  }
}

TEST(RowEncoding, TypesOrderNullBoolIntFloatString) {
  const Row ordered = {Null{},
                       false,
                       true,
                       std::int64_t{-5},
                       std::int64_t{7},
                       -1.5,
                       0.0,
                       2.0,
                       std::nan(""),
                       std::string(""),
                       std::string("a"),
                       std::string("a\0", 2),
                       std::string("b")};
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    EXPECT_LT(CompareEncoded(EncodeRow({ordered[i]}), EncodeRow({ordered[i + 1]})), 0)
        << DatumText(ordered[i]) << " < " << DatumText(ordered[i + 1]);
  }
}

TEST(RowEncoding, NegativeZeroEqualsZeroAndNaNsAreEqualAndGreatest) {
  EXPECT_EQ(EncodeRow({-0.0}), EncodeRow({0.0}));
  EXPECT_EQ(EncodeRow({std::nan("1")}), EncodeRow({-std::nan("2")}));
  EXPECT_GT(CompareEncoded(EncodeRow({std::nan("")}), EncodeRow({HUGE_VAL})), 0);
}

TEST(RowEncoding, PrefixRowSortsFirst) {
  const Row shorter = {std::int64_t{1}};
  const Row longer = {std::int64_t{1}, Null{}};
  EXPECT_LT(CompareEncoded(EncodeRow(shorter), EncodeRow(longer)), 0);
  EXPECT_LT(CompareRow(shorter, longer), 0);
}

TEST(RowEncoding, MalformedBytesAreCorruptionNotACrash) {
  for (const std::string& bad : {std::string("\x04\x00", 2),
                                 std::string("\x06"
                                             "abc"),
                                 std::string("\x06"
                                             "a\0\x07",
                                             4),
                                 std::string("\x09")}) {
    auto r = DecodeRow(bad);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  }
}

Numeric Num(Int128 coefficient, int scale) { return Numeric::FromParts(coefficient, scale); }

// Two datums of the same kind, so that the order within every kind is exercised.
std::pair<Datum, Datum> SameKindPair(testing::RowGenerator& gen) {
  Datum a = gen.NextDatumOfAnyKind();
  for (;;) {
    Datum b = gen.NextDatumOfAnyKind();
    if (b.index() == a.index()) return {std::move(a), std::move(b)};
  }
}

TEST(RowEncoding, MemcmpOrderEqualsDatumOrderForEveryKind) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 200; ++i) {
      const auto [x, y] = SameKindPair(gen);
      for (const auto& [a, b] :
           {std::pair<Row, Row>{{x}, {y}},
            std::pair<Row, Row>{gen.NextRowOfAnyKind(), gen.NextRowOfAnyKind()}}) {
        const std::string ea = EncodeRow(a), eb = EncodeRow(b);
        ASSERT_EQ(Sign(CompareRow(a, b)), Sign(CompareEncoded(ea, eb)))
            << "seed " << seed << ": " << RowText(a) << " vs " << RowText(b);
        ASSERT_EQ(CompareRow(a, b) == 0, ea == eb) << RowText(a) << " vs " << RowText(b);
      }
    }
  }
}

TEST(RowEncoding, DecodeInvertsEncodeForEveryKind) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 50; ++i) {
      const Row row = gen.NextRowOfAnyKind(6);
      auto decoded = DecodeRow(EncodeRow(row));
      ASSERT_TRUE(decoded.ok()) << RowText(row) << ": " << decoded.status().ToString();
      ASSERT_EQ(EncodeRow(*decoded), EncodeRow(row));
      ASSERT_EQ(decoded->size(), row.size());
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (std::holds_alternative<double>(row[c])) continue;  // NaNs and -0.0: canonical
        ASSERT_TRUE((*decoded)[c] == row[c]) << RowText(row) << " → " << RowText(*decoded);
      }
    }
  }
}

TEST(RowEncoding, NumericsOrderByValueThenScale) {
  Int128 big = 1;
  for (int i = 0; i < 38; ++i) big *= 10;
  const Row ordered = {Num(-(big - 1), 0),   // -99…99 (38 nines)
                       Num(-(big / 10), 0),  // -10^37
                       Num(-15, 1),          // -1.5
                       Num(-150, 2),         // -1.50: the same value, a larger scale
                       Num(-1, 38),          // -10^-38
                       Num(0, 0),           Num(0, 5),      Num(1, 38),  // 10^-38
                       Num(1, 2),                                        // 0.01
                       Num(1, 1),                                        // 0.1
                       Num(99, 2),                                       // 0.99
                       Num(1, 0),           Num(10, 1),                  // 1.0
                       Num(15, 1),                                       // 1.5
                       Num(150, 2),                                      // 1.50
                       Num(16, 1),                                       // 1.6
                       Num(10, 0),          Num(100, 0),    Num(big / 10, 0),
                       Num(big - 2, 0),     Num(big - 1, 0)};
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    EXPECT_LT(CompareDatum(ordered[i], ordered[i + 1]), 0)
        << DatumText(ordered[i]) << " < " << DatumText(ordered[i + 1]);
    EXPECT_LT(CompareEncoded(EncodeRow({ordered[i]}), EncodeRow({ordered[i + 1]})), 0)
        << DatumText(ordered[i]) << " < " << DatumText(ordered[i + 1]);
  }
  // 1.5 and 1.50 share the value's bytes and differ only in the scale, the last byte.
  const std::string a = EncodeRow({Num(15, 1)}), b = EncodeRow({Num(150, 2)});
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.substr(0, a.size() - 1), b.substr(0, b.size() - 1));
}

TEST(RowEncoding, KindsOrderByVariantIndexAndTemporalValuesByCount) {
  const Row ordered = {std::string("zzz"),
                       Num(-5, 0),
                       Bytes{""},
                       Bytes{std::string("a\0", 2)},
                       Bytes{"b"},
                       Date{-2440588},  // 4713-11-24 BC
                       Date{0},
                       Time{0},
                       Time{kMicrosPerDay},
                       Timestamp{-1},
                       Timestamp{0},
                       TimestampTz{std::numeric_limits<std::int64_t>::min()},
                       TimestampTz{0},
                       Interval{0, 0, -1},
                       Interval{0, 0, 0},
                       Interval{0, 30, 0},  // '30 days' < '1 mon': equal spans, fewer months
                       Interval{1, 0, 0},
                       Interval{1, 0, 1},
                       Uuid{},
                       Uuid{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}};
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    EXPECT_LT(CompareDatum(ordered[i], ordered[i + 1]), 0)
        << DatumText(ordered[i]) << " < " << DatumText(ordered[i + 1]);
    EXPECT_LT(CompareEncoded(EncodeRow({ordered[i]}), EncodeRow({ordered[i + 1]})), 0)
        << DatumText(ordered[i]) << " < " << DatumText(ordered[i + 1]);
  }
}

TEST(RowEncoding, MalformedNewKindsAreCorruption) {
  const std::string good_numeric = EncodeRow({Num(15, 1)});  // 07 03 41 02 33 00 01
  for (const std::string& bad : {
           std::string("\x07"),                                 // no sign class
           std::string("\x07\x04\x01", 3),                      // unknown sign class
           std::string("\x07\x02\x27", 3),                      // zero with scale 39
           std::string("\x07\x03\x41\x02\x33\x01\x00\x01", 8),  // trailing zero pair (1.500)
           std::string("\x07\x03\x41\x01\x33\x00\x01", 7),      // leading zero pair
           std::string("\x07\x03\x41\x02\x33\x00\x00", 7),      // 1.5 at scale 0
           std::string("\x07\x03\x41\x66\x00\x00", 6),          // digit byte 0x66 > 100
           std::string("\x07\x03\x41\x02\x33", 5),              // unterminated digits
           std::string("\x07\x03\x54\x02\x00\x00", 6),          // 10^40
           std::string("\x08"
                       "ab"),               // unterminated bytea
           std::string("\x09\x80\x00", 3),  // truncated date
       }) {
    auto r = DecodeRow(bad);
    EXPECT_FALSE(r.ok()) << ::testing::PrintToString(bad);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    }
  }
  ASSERT_TRUE(DecodeRow(good_numeric).ok());
  // A time before midnight or after 24:00:00.
  std::string time = EncodeRow({Time{kMicrosPerDay}});
  time.back() = static_cast<char>(time.back() + 1);
  EXPECT_EQ(DecodeRow(time).status().code(), StatusCode::kCorruption);
  time = EncodeRow({Time{0}});
  time[1] = 0x7f;
  EXPECT_EQ(DecodeRow(time).status().code(), StatusCode::kCorruption);
  // An interval whose span leaves microseconds beyond int64.
  std::string interval = EncodeRow({Interval{0, 0, std::numeric_limits<std::int64_t>::max()}});
  interval[8] = 0x01;  // a span larger by 2^64, the same months and days
  EXPECT_EQ(DecodeRow(interval).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(DecodeRow(EncodeRow({Uuid{}}).substr(0, 16)).status().code(), StatusCode::kCorruption);
}

// shm/routing.h: error keys sort before every (non-empty) encoded row and never equal one.
TEST(Routing, ErrorKeysSortBeforeEveryRow) {
  const std::string error_key = std::string(1, shm::kErrorKeyPrefix) + "division by zero";
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 100; ++i) {
      const Row row = gen.NextRow();
      if (row.empty()) continue;  // the empty row encodes to no bytes at all
      const std::string enc = EncodeRow(row);
      ASSERT_NE(enc[0], shm::kErrorKeyPrefix) << RowText(row);
      ASSERT_LT(CompareEncoded(error_key, enc), 0) << RowText(row);
    }
  }
}

// Every key has one owner in [0, N), the same in every process, and keys spread over the rows.
TEST(Routing, WorkerOfIsInRangeAndSpreadsKeys) {
  for (std::uint32_t workers : {1u, 2u, 3u, 8u}) {
    std::vector<int> per_row(workers, 0);
    for (std::int64_t k = 0; k < 4000; ++k) {
      const std::string key = EncodeRow({k});
      const std::uint32_t w = shm::WorkerOf(key, workers);
      ASSERT_LT(w, workers);
      ASSERT_EQ(w, shm::StableHash(key) % workers);
      ++per_row[w];
    }
    for (std::uint32_t w = 0; w < workers; ++w) {
      EXPECT_GT(per_row[w], 4000 / static_cast<int>(workers) / 2) << w << " of " << workers;
    }
  }
}

}  // namespace
}  // namespace tandem
