// Property tests: the row encoding orders exactly as the datums do, and round-trips.
#include <gtest/gtest.h>

#include <cmath>

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
