// Property tests for batches: build + merge + logical compaction against the naive reference.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "base/row.h"
#include "reference.h"
#include "shm/batch.h"
#include "test_segment.h"

namespace tandem::shm::batch_test {
namespace {

using testing::ReferenceCollection;
using testing::TestSegment;

std::string Key(std::int64_t k) { return EncodeRow({k}); }
std::string Val(std::int64_t v) { return EncodeRow({v, std::string(v % 3, 'x')}); }

std::vector<Update> RandomUpdates(std::mt19937_64& rng, int n, Time lo, Time hi) {
  std::vector<Update> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({Key(static_cast<std::int64_t>(rng() % 12)),
                   Val(static_cast<std::int64_t>(rng() % 5)), lo + rng() % (hi - lo),
                   static_cast<std::int64_t>(rng() % 5) - 2});
  }
  return out;
}

std::map<std::pair<std::string, std::string>, std::int64_t> ReadAt(
    std::span<const BatchView> batches, Time t) {
  std::map<std::pair<std::string, std::string>, std::int64_t> out;
  for (MergeCursor c(batches); c.Valid(); c.Next()) {
    if (auto n = c.CountAt(t); n != 0)
      out[{std::string(c.key()), std::string(c.val())}] = static_cast<std::int64_t>(n);
  }
  return out;
}

// The exact counts (which may be beyond int64).
std::map<std::pair<std::string, std::string>, Int128> ReadExactAt(
    std::span<const BatchView> batches, Time t) {
  std::map<std::pair<std::string, std::string>, Int128> out;
  for (MergeCursor c(batches); c.Valid(); c.Next()) {
    if (auto n = c.CountAt(t); n != 0) out[{std::string(c.key()), std::string(c.val())}] = n;
  }
  return out;
}

void ExpectConsolidatedAndSorted(const BatchView& b) {
  ASSERT_TRUE(b.Validate(b.total_bytes()).ok());
  for (std::uint32_t k = 0; k < b.key_count(); ++k) {
    if (k > 0) {
      ASSERT_LT(b.key(k - 1), b.key(k));
    }
    for (std::uint32_t v = b.vals_begin(k); v < b.vals_end(k); ++v) {
      if (v > b.vals_begin(k)) {
        ASSERT_LT(b.val(v - 1), b.val(v));
      }
      for (std::uint32_t u = b.updates_begin(v); u < b.updates_end(v); ++u) {
        ASSERT_NE(b.diff(u), 0);
        ASSERT_GE(Frontier::At(b.time(u)), Frontier::FromRaw(b.header().since));
        if (u > b.updates_begin(v)) {
          // Strictly ascending, but for the int64 parts of one count beyond int64.
          const bool part = b.time(u - 1) == b.time(u) &&
                            (b.diff(u - 1) == INT64_MAX || b.diff(u - 1) == -INT64_MAX);
          if (!part) {
            ASSERT_LT(b.time(u - 1), b.time(u));
          }
        }
      }
    }
  }
}

TEST(Batch, BuildMergeAndCompactionMatchReferenceAtEveryReadableTime) {
  TestSegment seg(TestSegment::Options());
  ASSERT_TRUE(seg.segment);
  Segment& s = *seg.segment;
  const std::uint64_t baseline = s.free_bytes();
  for (std::uint64_t seed = 1; seed <= 250; ++seed) {
    std::mt19937_64 rng(seed);
    ReferenceCollection ref;
    std::vector<std::uint64_t> batches;
    Time since = 0;
    const Time horizon = 40;
    for (Time lo = 0; lo < horizon; lo += 8) {
      auto ups = RandomUpdates(rng, 1 + static_cast<int>(rng() % 30), lo, lo + 8);
      ref.Add(ups);
      auto b = BuildBatch(s, ups, Frontier::At(since));
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      if (*b) batches.push_back(*b);
      since = std::min<Time>(since + rng() % 6, lo + 8);
      // Merge the two newest with compaction to `since`, sometimes.
      if (batches.size() >= 2 && rng() % 2) {
        const BatchView in[2] = {BatchView(s.At<BatchHeader>(batches[batches.size() - 2])),
                                 BatchView(s.At<BatchHeader>(batches.back()))};
        auto m = MergeBatches(s, in, Frontier::At(since));
        ASSERT_TRUE(m.ok()) << m.status().ToString();
        s.Deallocate(batches.back());
        batches.pop_back();
        s.Deallocate(batches.back());
        batches.pop_back();
        if (*m) batches.push_back(*m);
      }
    }
    std::vector<BatchView> views;
    for (auto off : batches) {
      views.emplace_back(s.At<BatchHeader>(off));
      ExpectConsolidatedAndSorted(views.back());
    }
    // Readable times are >= since: each must agree exactly with the reference.
    for (Time t = since; t <= horizon + 1; ++t) {
      ASSERT_EQ(ReadAt(views, t), ref.At(t)) << "seed " << seed << " t " << t << " since " << since;
    }
    for (auto off : batches) s.Deallocate(off);
  }
  EXPECT_EQ(s.free_bytes(), baseline) << "every batch allocation was returned";
}

// SortUpdates radix-sorts on a 16-byte key prefix and length and compares in full only within
// equal prefixes: keys longer than the prefix, sharing it, or differing only by trailing zero bytes
// must still come out in memcmp order.
TEST(Batch, SortUpdatesIsMemcmpOrderForLongAndPrefixKeys) {
  std::mt19937_64 rng(42);
  const std::string alphabet("\0\1a\xff", 4);
  std::vector<Update> ups;
  for (int i = 0; i < 3000; ++i) {
    std::string key = rng() % 2 ? std::string(14 + rng() % 6, 'p') : std::string();
    for (std::uint64_t n = rng() % 5; n > 0; --n) key.push_back(alphabet[rng() % alphabet.size()]);
    std::string val(rng() % 3, 'v');
    ups.push_back({key, val, rng() % 4, 1});
  }
  const UpdateBuffer buffer(ups);
  const SortedUpdates sorted = SortUpdates(buffer);
  const std::vector<std::uint32_t>& order = sorted.order;
  ASSERT_EQ(order.size(), ups.size());
  auto less = [&](const Update& a, const Update& b) {
    return std::tie(a.key, a.val, a.time) < std::tie(b.key, b.val, b.time);
  };
  std::vector<Update> expected = ups;
  std::stable_sort(expected.begin(), expected.end(), less);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Update& got = ups[order[i]];
    ASSERT_FALSE(less(got, expected[i]) || less(expected[i], got)) << "position " << i;
    ASSERT_EQ(sorted.new_key[i], i == 0 || expected[i - 1].key != got.key) << "position " << i;
  }
}

// Updates already in (key, val, time) order keep their order (found in one pass, no radix sort);
// one pair out of order anywhere sends them through the sort, and either way the order is memcmp's.
TEST(Batch, SortUpdatesOfAlreadyOrderedUpdatesKeepsThemAndOneInversionIsSorted) {
  std::mt19937_64 rng(7);
  std::vector<Update> ups;
  for (int i = 0; i < 2000; ++i) {
    ups.push_back({EncodeRow({static_cast<std::int64_t>(rng() % 500)}),
                   EncodeRow({static_cast<std::int64_t>(rng() % 3)}), rng() % 3, 1});
  }
  auto less = [](const Update& a, const Update& b) {
    return std::tie(a.key, a.val, a.time) < std::tie(b.key, b.val, b.time);
  };
  std::stable_sort(ups.begin(), ups.end(), less);
  for (const bool invert : {false, true}) {
    std::vector<Update> input = ups;
    if (invert) std::swap(input[700], input[1300]);  // different keys (500 keys over 2000 updates)
    ASSERT_TRUE(less(input[1300], input[700]) || !invert);
    const UpdateBuffer buffer(input);
    const SortedUpdates sorted = SortUpdates(buffer);
    ASSERT_EQ(sorted.order.size(), input.size());
    for (std::size_t i = 0; i < input.size(); ++i) {
      const Update& got = input[sorted.order[i]];
      if (!invert) {
        ASSERT_EQ(sorted.order[i], i) << "kept in place";
      }
      ASSERT_FALSE(less(got, ups[i]) || less(ups[i], got)) << "position " << i;
      ASSERT_EQ(sorted.new_key[i], i == 0 || ups[i - 1].key != got.key) << "position " << i;
    }
  }
}

TEST(Batch, CompactionToSinceCancelsRetractions) {
  TestSegment seg(TestSegment::Options());
  Segment& s = *seg.segment;
  std::vector<Update> ups = {
      {Key(1), Val(1), 1, +1}, {Key(1), Val(1), 5, -1}, {Key(1), Val(2), 5, +1}};
  auto b = BuildBatch(s, ups, Frontier::At(10));
  ASSERT_TRUE(b.ok());
  BatchView v(s.At<BatchHeader>(*b));
  EXPECT_EQ(v.update_count(), 1u) << "the +1/-1 pair consolidated away at since 10";
  EXPECT_EQ(v.time(0), 10u);
  s.Deallocate(*b);
}

TEST(Batch, EverythingCancellingBuildsNoBatch) {
  TestSegment seg(TestSegment::Options());
  const std::uint64_t before = seg.segment->free_bytes();
  auto b = BuildBatch(*seg.segment, {{Key(1), Val(1), 3, +2}, {Key(1), Val(1), 3, -2}}, Frontier());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 0u);
  EXPECT_EQ(seg.segment->free_bytes(), before);
}

TEST(Batch, FullSegmentIsResourceExhaustedWithSizes) {
  TestSegment seg(TestSegment::Options(1, 1 << 20));
  std::vector<Update> ups;
  for (int i = 0; i < 200000; ++i) ups.push_back({Key(i), Val(i), 1, 1});
  auto b = BuildBatch(*seg.segment, ups, Frontier());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(b.status().message().find("is full"), std::string::npos) << b.status().ToString();
  EXPECT_NE(b.status().message().find("bytes are free"), std::string::npos);
}

// Issue 10 item 2: consolidation and merges never wrap a count. A sum beyond int64 is kept
// exactly, as int64 parts, and reads back exact; a reader gives it to nobody as an int64.
TEST(Batch, CountsBeyondInt64AreKeptExactlyThroughBuildAndMerge) {
  TestSegment seg(TestSegment::Options());
  ASSERT_TRUE(seg.segment);
  Segment& s = *seg.segment;
  constexpr std::int64_t kMax = INT64_MAX;
  const std::vector<Update> first = {{Key(1), Val(1), 0, kMax},  {Key(1), Val(1), 0, kMax},
                                     {Key(1), Val(1), 0, kMax},  {Key(2), Val(2), 0, -kMax},
                                     {Key(2), Val(2), 0, -kMax}, {Key(3), Val(3), 0, kMax},
                                     {Key(3), Val(3), 0, 1}};
  auto a = BuildBatch(s, first, Frontier::At(0));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::vector<Update> second = {{Key(1), Val(1), 1, -kMax}, {Key(3), Val(3), 2, -2}};
  auto b = BuildBatch(s, second, Frontier::At(0));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const BatchView va(s.At<BatchHeader>(*a)), vb(s.At<BatchHeader>(*b));
  ExpectConsolidatedAndSorted(va);
  const Int128 max = kMax;
  const std::vector<BatchView> both = {va, vb};
  auto at0 = ReadExactAt(both, 0);
  EXPECT_TRUE((at0[{Key(1), Val(1)}] == 3 * max));
  EXPECT_TRUE((at0[{Key(2), Val(2)}] == -2 * max));
  EXPECT_TRUE((at0[{Key(3), Val(3)}] == max + 1));
  // Merged with compaction to 2: every time advanced to 2, counts still exact.
  auto m = MergeBatches(s, both, Frontier::At(2));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const BatchView vm(s.At<BatchHeader>(*m));
  ExpectConsolidatedAndSorted(vm);
  const std::vector<BatchView> merged = {vm};
  auto at2 = ReadExactAt(merged, 2);
  EXPECT_TRUE((at2[{Key(1), Val(1)}] == 2 * max));
  EXPECT_TRUE((at2[{Key(2), Val(2)}] == -2 * max));
  EXPECT_TRUE((at2[{Key(3), Val(3)}] == max - 1));
}

}  // namespace
}  // namespace tandem::shm::batch_test
