// The spine's merge policy (shm/spine.h) alone, on lists of batch sizes; then the publisher
// following it on a real segment.
#include "shm/spine.h"

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "base/row.h"
#include "shm/batch.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "test_segment.h"

namespace tandem::shm {
namespace {

std::string Describe(const std::vector<std::uint64_t>& sizes) {
  std::string s = "[";
  for (std::uint64_t n : sizes) s += std::to_string(n) + " ";
  return s + "]";
}

// A spine as the publisher keeps it: append a batch, then merge what the policy names until it
// names nothing. `consolidate` says what a merge of `n` updates leaves (0: all cancelled).
struct Simulation {
  template <typename Consolidate>
  void Append(std::uint64_t n, Consolidate&& consolidate) {
    if (n != 0) sizes.push_back(n);
    while (auto start = SpineMergeStart(sizes)) {
      std::uint64_t total = 0;
      for (std::size_t i = *start; i < sizes.size(); ++i) total += sizes[i];
      merged_updates += total;
      ++merges;
      sizes.resize(*start);
      if (const std::uint64_t left = consolidate(total); left != 0) sizes.push_back(left);
    }
  }
  void Append(std::uint64_t n) {
    Append(n, [](std::uint64_t total) { return total; });
  }
  std::vector<std::uint64_t> sizes;  // oldest first
  std::uint64_t merged_updates = 0;  // updates read by all merges so far
  std::uint64_t merges = 0;
};

TEST(Spine, MergesChosenForGivenSizeLists) {
  struct Case {
    std::vector<std::uint64_t> sizes;
    std::optional<std::size_t> start;
  };
  const Case cases[] = {
      {{}, std::nullopt},
      {{5}, std::nullopt},
      {{3, 1}, std::nullopt},  // 3 > 2 * 1
      {{2, 1}, 0},             // 2 is not more than twice 1
      {{10, 4}, std::nullopt},
      {{8, 4}, 0},
      {{10, 4, 1}, std::nullopt},
      {{10, 4, 1, 1}, 0},                   // 1+1 = 2; 4 <= 4 → 6; 10 <= 12 → everything
      {{100, 30, 1, 1}, 2},                 // 1+1 = 2; 30 > 4: only the two newest
      {{100, 40, 20}, 0},                   // 40 <= 40 → 60; 100 <= 120
      {{1000, 40, 20}, 1},                  // 40 <= 40 → 60; 1000 > 120
      {{1000, 300, 100, 1}, std::nullopt},  // 100 > 2
      {{1000, 300, 100, 60}, 1},            // 160, 460; 1000 > 920
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SpineMergeStart(c.sizes), c.start) << Describe(c.sizes);
  }
}

TEST(Spine, IsGeometricMeansEachMoreThanTwiceTheNextNewer) {
  EXPECT_TRUE(SpineIsGeometric(std::vector<std::uint64_t>{}));
  EXPECT_TRUE(SpineIsGeometric(std::vector<std::uint64_t>{7}));
  EXPECT_TRUE(SpineIsGeometric(std::vector<std::uint64_t>{100, 40, 19, 9, 1}));
  EXPECT_FALSE(SpineIsGeometric(std::vector<std::uint64_t>{2, 1}));
  EXPECT_FALSE(SpineIsGeometric(std::vector<std::uint64_t>{100, 40, 20, 1}));
  EXPECT_FALSE(SpineIsGeometric(std::vector<std::uint64_t>{1, 100}));
}

// After every append whose merges succeed, the spine is geometric again — whatever the batch
// sizes and however much the merges consolidate away (down to everything cancelling).
TEST(Spine, EveryAppendRestoresTheInvariantWhateverMergesConsolidate) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    Simulation sim;
    for (int i = 0; i < 500; ++i) {
      const std::uint64_t n = rng() % 4 == 0 ? rng() % 1000 : rng() % 8;
      sim.Append(n, [&](std::uint64_t total) -> std::uint64_t {
        switch (rng() % 4) {
          case 0:
            return 0;  // everything cancelled
          case 1:
            return 1 + rng() % total;  // some cancelled
          default:
            return total;
        }
      });
      ASSERT_TRUE(SpineIsGeometric(sim.sizes))
          << "seed " << seed << " append " << i << ": " << Describe(sim.sizes);
      ASSERT_EQ(SpineMergeStart(sim.sizes), std::nullopt);
    }
  }
}

// O(log n) batches after many appends, and each update merged O(log n) times (amortised).
TEST(Spine, ManyAppendsLeaveLogarithmicallyManyBatchesAndMergeEachUpdateLogTimes) {
  for (const std::uint64_t batch : {1u, 3u, 100u}) {
    Simulation sim;
    constexpr int kAppends = 200000;
    std::uint64_t most = 0;
    for (int i = 1; i <= kAppends; ++i) {
      sim.Append(batch);
      const std::uint64_t total = batch * static_cast<std::uint64_t>(i);
      const std::uint64_t bound = std::bit_width(total);  // floor(log2 total) + 1
      ASSERT_LE(sim.sizes.size(), bound) << "after " << i << " appends of " << batch;
      most = std::max<std::uint64_t>(most, sim.sizes.size());
    }
    const std::uint64_t total = batch * kAppends;
    EXPECT_GE(most, 8u) << "the spine does keep several batches";
    EXPECT_LE(sim.merged_updates, total * std::bit_width(total))
        << "merges read each update O(log n) times";
    EXPECT_LT(sim.merges, static_cast<std::uint64_t>(kAppends)) << "not a merge per append";
  }
}

// A fold stops at the first batch more than twice the updates folded so far, never skips it.
TEST(Spine, MergesOnlyASuffixAndOnlyAsMuchAsNeeded) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    Simulation base;
    const int appends = 1 + static_cast<int>(rng() % 40);
    for (int a = 0; a < appends; ++a) base.Append(1 + rng() % 50);
    std::vector<std::uint64_t> sizes = base.sizes;
    sizes.push_back(1 + rng() % 200);
    const auto start = SpineMergeStart(sizes);
    if (!start) {
      EXPECT_TRUE(SpineIsGeometric(sizes)) << Describe(sizes);
      continue;
    }
    ASSERT_LE(*start + 2, sizes.size()) << Describe(sizes);
    std::uint64_t folded = 0;
    for (std::size_t j = *start; j < sizes.size(); ++j) folded += sizes[j];
    if (*start > 0) {
      EXPECT_GT(sizes[*start - 1], 2 * folded) << Describe(sizes);
    }
    // Stopping one batch newer would have left a violation with its older neighbour.
    const std::uint64_t without_oldest = folded - sizes[*start];
    EXPECT_LE(sizes[*start], 2 * without_oldest) << Describe(sizes);
  }
}

// A 128 MiB segment with row 0's publisher and reader, one slot published and followed.
struct PublishedSlot {
  testing::TestSegment seg{testing::TestSegment::Options(1, 128ull << 20)};
  std::unique_ptr<Publisher> pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  std::unique_ptr<Reader> reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  Result<PublishedRef> p = pub->BindSlot(SlotKey{GlobalId::User(1), 0});
  Result<FollowedRef> f = reader->Follow(SlotKey{GlobalId::User(1), 0});
  bool ok() const { return p.ok() && f.ok(); }
};

// Appends `n` new distinct keys (nothing ever consolidates) at time t.
Status AppendDistinct(Publisher& pub, const PublishedRef& p, Time t, std::uint64_t n,
                      std::int64_t& next_key) {
  std::vector<Update> ups;
  for (std::uint64_t i = 0; i < n; ++i) ups.push_back({EncodeRow({next_key++}), "", t, 1});
  return pub.Append(p, ups, Frontier::At(t + 1));
}

// The publisher follows the policy: distinct keys (nothing consolidates) appended one batch at a
// time leave a spine whose shape — running merges counted as the batch each will become — is the
// policy's after every append; what readers see holds every update all along; and once the merges
// have run out (Maintain fuels them), the batches read back are the policy's, geometric.
TEST(Spine, PublisherKeepsItsSpineGeometric) {
  PublishedSlot slot;
  ASSERT_TRUE(slot.ok());
  auto& pub = slot.pub;
  auto& reader = slot.reader;
  auto& p = slot.p;
  auto& f = slot.f;
  std::mt19937_64 rng(3);
  std::int64_t next_key = 0;
  Simulation sim;
  Time t = 0;
  std::uint64_t most_running = 0;
  auto published = [&] {
    std::vector<std::uint64_t> sizes;
    auto snap = reader->Take(*f);
    EXPECT_TRUE(snap.ok());
    if (snap.ok()) {
      for (const BatchView& b : snap->batches()) sizes.push_back(b.update_count());
    }
    return sizes;
  };
  for (; t < 2000; ++t) {
    // Now and then a large batch, so that some merges are too large for one append's fuel.
    const std::uint64_t n = t % 97 == 0 ? 20000 : 1 + rng() % 20;
    ASSERT_TRUE(AppendDistinct(*pub, *p, t, n, next_key).ok());
    sim.Append(n);
    ASSERT_EQ(pub->SpineShape(*p), sim.sizes) << "at " << t << ": the policy's merges";
    const std::vector<std::uint64_t> sizes = published();
    std::uint64_t total = 0;
    for (std::uint64_t b : sizes) total += b;
    ASSERT_EQ(total, static_cast<std::uint64_t>(next_key)) << "at " << t << ": every update";
    most_running = std::max(most_running, pub->stats().merges_running);
  }
  EXPECT_GT(most_running, 0u) << "some merges outlast the append that starts them";
  for (int i = 0; i < 2000 && pub->stats().merges_running > 0; ++i) {
    pub->Maintain();
    published();  // the reader moves on, so what the merges retire is freed (room for the next)
  }
  EXPECT_EQ(pub->stats().merges_running, 0u) << "Maintain ends the merges of an idle slot";
  EXPECT_EQ(published(), sim.sizes);
  EXPECT_TRUE(SpineIsGeometric(published())) << Describe(published());
  EXPECT_EQ(pub->stats().merges, sim.merges);
}

// What a snapshot holds: each (key, val)'s diffs summed over every batch and time (the test
// never compacts, so this is the collection at its latest time), zero sums left out.
std::map<std::pair<std::string, std::string>, std::int64_t> Contents(const Snapshot& snap) {
  std::map<std::pair<std::string, std::string>, std::int64_t> out;
  for (MergeCursor c(snap.batches()); c.Valid(); c.Next()) {
    std::int64_t sum = 0;
    c.ForEachUpdate([&](Time, std::int64_t d) { sum += d; });
    if (sum != 0) out[{std::string(c.key()), std::string(c.val())}] = sum;
  }
  return out;
}

// Merges that consolidate (keys updated again and again, insertions retracted): what a reader sees
// is the collection after every append while merges run, end early or wait; a retry's compaction
// drops the running merges and a drop unpublishes with merges running (ASan sees a read of a
// freed batch), and the spine's entries stay few.
TEST(Spine, ConsolidatingMergesKeepEveryReadExactWhileTheyRun) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    PublishedSlot slot;
    ASSERT_TRUE(slot.ok());
    auto& pub = slot.pub;
    auto& reader = slot.reader;
    auto& p = slot.p;
    auto& f = slot.f;
    std::mt19937_64 rng(seed);
    std::map<std::pair<std::string, std::string>, std::int64_t> expected;
    std::uint64_t most_running = 0;
    for (Time t = 0; t < 600; ++t) {
      // Mostly small appends over 3,000 keys, now and then a large one; each update moves a key
      // from its value to another (a retraction and an insertion) or inserts a new value.
      const std::uint64_t n = t % 50 == 0 ? 20000 : 1 + rng() % 300;
      std::vector<Update> ups;
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::string k = EncodeRow({static_cast<std::int64_t>(rng() % 3000)});
        const std::string v = EncodeRow({static_cast<std::int64_t>(rng() % 4)});
        const std::int64_t d = rng() % 3 == 0 ? -1 : 1;
        ups.push_back({k, v, t, d});
        if ((expected[{k, v}] += d) == 0) expected.erase({k, v});
      }
      if (t % 97 == 96) {
        // The retry path: compacts the whole spine first (dropping running merges).
        UpdateBuffer buffer(ups);
        ASSERT_TRUE(pub->AppendOrKeep(*p, &buffer, Frontier::At(t + 1), true).ok());
      } else {
        ASSERT_TRUE(pub->Append(*p, ups, Frontier::At(t + 1)).ok());
      }
      if (t % 5 == 0) pub->Maintain();
      most_running = std::max(most_running, pub->stats().merges_running);
      auto snap = reader->Take(*f);
      ASSERT_TRUE(snap.ok());
      ASSERT_EQ(Contents(*snap), expected) << "seed " << seed << " at " << t;
      ASSERT_LE(pub->SpineShape(*p).size(), 2u * std::bit_width(std::uint64_t{20000} * 600))
          << "seed " << seed << " at " << t;
    }
    EXPECT_GT(most_running, 0u) << "seed " << seed << ": some merges ran across appends";
    // Dropped with merges running: they go with the slot.
    ASSERT_TRUE(pub->AllowCompaction(*p, Frontier::Empty()).ok());
    EXPECT_EQ(pub->stats().merges_running, 0u);
    pub->Maintain();
  }
}

// Fueled merging: an append reads at most its fuel (twice its updates plus a minimum) for each
// merge running or started in it, never a whole level at once; the policy never has to end a
// merge early. Synchronous merging read most of the spine in some single appends.
TEST(Spine, NoAppendMergesMoreThanItsFuelPerRunningMerge) {
  testing::TestSegment seg(testing::TestSegment::Options(1, 128ull << 20));
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  auto p = pub->BindSlot(SlotKey{GlobalId::User(1), 0});
  ASSERT_TRUE(p.ok());
  std::mt19937_64 rng(11);
  std::int64_t next_key = 0;
  std::uint64_t most = 0, largest_merge_simulated = 0;
  Simulation sim;
  for (Time t = 0; t < 1500; ++t) {
    const std::uint64_t n = 100 + rng() % 200;
    const PublisherStats before = pub->stats();
    ASSERT_TRUE(AppendDistinct(*pub, *p, t, n, next_key).ok());
    const PublisherStats after = pub->stats();
    // Merges running before the append, and those it started (running after, or ended in it).
    const std::uint64_t started =
        after.merges_running + (after.merges - before.merges) - before.merges_running;
    const std::uint64_t read = after.merge_reads - before.merge_reads;
    ASSERT_LE(read, (before.merges_running + started) * (2 * n + 4096)) << "append " << t;
    most = std::max(most, read);
    const std::uint64_t simulated = sim.merged_updates;
    sim.Append(n);
    largest_merge_simulated = std::max(largest_merge_simulated, sim.merged_updates - simulated);
  }
  // The largest read of one append is a small share of the largest merge it spread out.
  EXPECT_LT(most * 4, largest_merge_simulated) << most << " vs " << largest_merge_simulated;
}

}  // namespace
}  // namespace tandem::shm
