// The key index (shm/key_index.h): a batch's LowerBound (and Find) through it equals a plain lower
// bound over its keys for every probe — keys sharing long prefixes, keys that differ only past
// their window, keys ending in zero bytes (which the window's zero padding cannot tell from shorter
// keys), every size around the block boundaries — and Validate refuses an index that disagrees with
// the keys.
#include "shm/key_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/row.h"
#include "shm/batch.h"
#include "shm/layout.h"

namespace tandem::shm {
namespace {

LocalBatch BatchOf(const std::set<std::string>& keys) {
  std::vector<Update> updates;
  for (const std::string& k : keys) updates.push_back({k, EncodeRow({std::int64_t{1}}), 1, 1});
  auto batch = BuildLocalBatch(UpdateBuffer(updates), Frontier::At(0));
  EXPECT_TRUE(batch.ok() && batch->has_value());
  return std::move(**batch);
}

// Probes: every key, every key with a byte appended, changed or cut, and the empty key.
std::vector<std::string> ProbesFor(const std::set<std::string>& keys, std::mt19937_64& rng) {
  std::vector<std::string> probes = {""};
  for (const std::string& k : keys) {
    probes.push_back(k);
    probes.push_back(k + '\0');
    probes.push_back(k + '\xff');
    if (!k.empty()) {
      probes.push_back(k.substr(0, k.size() - 1));
      std::string changed = k;
      // The delta, then where: the order C++17 gave the assignment (its right side first).
      const auto delta = static_cast<char>(1 + rng() % 3);
      changed[rng() % changed.size()] += delta;
      probes.push_back(changed);
    }
  }
  return probes;
}

void ExpectLowerBoundsAgree(const std::set<std::string>& keys, std::mt19937_64& rng) {
  LocalBatch batch = BatchOf(keys);
  const BatchView view = batch.view();
  ASSERT_TRUE(view.Validate(batch.bytes()).ok()) << view.Validate(batch.bytes()).ToString();
  ASSERT_EQ(view.key_count(), keys.size());
  // The index is on a cache line, wherever the batch is.
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(batch.data() + view.header().key_index_at) % 64, 0u);
  const std::vector<std::string> sorted(keys.begin(), keys.end());
  for (const std::string& probe : ProbesFor(keys, rng)) {
    const auto expected = static_cast<std::uint32_t>(
        std::lower_bound(sorted.begin(), sorted.end(), probe) - sorted.begin());
    ASSERT_EQ(view.LowerBound(probe), expected)
        << "probe of " << probe.size() << " bytes among " << keys.size() << " keys, skip "
        << view.header().key_prefix_skip;
    ASSERT_EQ(view.Find(probe), keys.count(probe) ? expected : view.key_count())
        << "finding a probe of " << probe.size() << " bytes among " << keys.size() << " keys";
  }
}

TEST(KeyIndex, LowerBoundMatchesAPlainSearchForEverySizeAroundTheBlocks) {
  std::mt19937_64 rng(11);
  for (std::size_t n : {1, 2, 7, 8, 9, 63, 64, 65, 511, 512, 513, 4097}) {
    std::set<std::string> keys;
    while (keys.size() < n) keys.insert(EncodeRow({static_cast<std::int64_t>(rng() % (4 * n))}));
    ExpectLowerBoundsAgree(keys, rng);
  }
}

TEST(KeyIndex, KeysThatShareTheirWindowAreToldApartByTheirBytes) {
  std::mt19937_64 rng(12);
  // Long shared prefixes that vary past any window, short keys and keys that end in zero bytes
  // (equal windows once zero-padded), of random lengths over a tiny alphabet.
  std::set<std::string> keys = {"",  std::string(1, '\0'),  std::string(2, '\0'),
                                "a", std::string("a\0", 2), std::string("a\0\0", 3)};
  for (int i = 0; i < 3000; ++i) {
    std::string k(rng() % 24, 'p');
    for (char& c : k) c = "\0\x01p\xff"[rng() % 4];
    keys.insert(k);
  }
  ExpectLowerBoundsAgree(keys, rng);
}

TEST(KeyIndex, ACommonPrefixIsSkippedAndProbesOutsideItSortBeforeOrAfter) {
  std::mt19937_64 rng(13);
  std::set<std::string> keys;
  for (int i = 0; i < 1000; ++i) {
    keys.insert("tenant/0042/user/" + std::to_string(100000 + rng() % 900000));
  }
  const LocalBatch batch = BatchOf(keys);
  EXPECT_EQ(batch.view().header().key_prefix_skip, std::string("tenant/0042/user/").size());
  EXPECT_EQ(batch.view().LowerBound("tenant/0041/zzz"), 0u);
  EXPECT_EQ(batch.view().LowerBound("tenant/0042"), 0u);
  EXPECT_EQ(batch.view().LowerBound("tenant/0043"), keys.size());
  ExpectLowerBoundsAgree(keys, rng);
}

TEST(KeyIndex, IndexSearchEqualsLowerBoundOverTheWindows) {
  std::mt19937_64 rng(14);
  for (std::uint64_t n : {1, 8, 9, 64, 65, 1000, 70000}) {
    std::vector<std::uint64_t> windows(n);
    for (auto& w : windows) w = rng() % (3 * n);  // repeats: runs of equal windows
    std::sort(windows.begin(), windows.end());
    std::vector<std::uint64_t> words(KeyIndexWords(n));
    std::copy(windows.begin(), windows.end(), words.begin());
    FinishKeyIndex(n, words.data());
    ASSERT_TRUE(KeyIndexLevelsConsistent(words.data(), n));
    for (std::uint64_t probe = 0; probe <= 3 * n + 1; probe += 1 + n / 500) {
      ASSERT_EQ(KeyIndexLowerBound(words.data(), n, probe),
                static_cast<std::uint64_t>(std::lower_bound(windows.begin(), windows.end(), probe) -
                                           windows.begin()))
          << n << " windows, probe " << probe;
    }
    EXPECT_EQ(KeyIndexLowerBound(words.data(), n, UINT64_MAX), n);
  }
}

TEST(KeyIndex, ValidateRefusesAnIndexThatDisagreesWithItsKeys) {
  std::set<std::string> keys;
  for (std::int64_t k = 0; k < 100; ++k) keys.insert(EncodeRow({k * 7}));
  {
    LocalBatch batch = BatchOf(keys);
    auto* words =
        reinterpret_cast<std::uint64_t*>(batch.data() + batch.view().header().key_index_at);
    words[50] += 1;  // one window of level 0
    const Status s = batch.view().Validate(batch.bytes());
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.ToString().find("key index disagrees with key 50"), std::string::npos)
        << s.ToString();
  }
  {
    LocalBatch batch = BatchOf(keys);
    auto* words =
        reinterpret_cast<std::uint64_t*>(batch.data() + batch.view().header().key_index_at);
    words[KeyIndexWords(100) - 1] = 0;  // a padding word of the top level
    const Status s = batch.view().Validate(batch.bytes());
    EXPECT_NE(s.ToString().find("levels disagree"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace tandem::shm
