#include "shm/key_index.h"

#include <algorithm>

#include "base/check.h"

namespace tandem::shm {

namespace {

// Levels are numbered from 0 (a window per key) up; 8^11 > 2^32 keys, the format's limit.
constexpr int kMaxLevels = 12;

std::uint64_t Blocks(std::uint64_t entries) {
  return (entries + kKeyIndexFanout - 1) / kKeyIndexFanout;
}

// Where each level starts (in words) and how many levels there are.
int LevelStarts(std::uint64_t keys, std::uint64_t (&starts)[kMaxLevels]) {
  int levels = 0;
  std::uint64_t at = 0;
  for (std::uint64_t entries = keys;; entries = Blocks(entries)) {
    TANDEM_CHECK(levels < kMaxLevels, "key index: too many keys for its levels");
    starts[levels++] = at;
    if (entries <= kKeyIndexFanout) return levels;
    at += Blocks(entries) * kKeyIndexFanout;
  }
}

}  // namespace

std::uint64_t KeyIndexWords(std::uint64_t keys) {
  if (keys == 0) return 0;
  std::uint64_t starts[kMaxLevels];
  return starts[LevelStarts(keys, starts) - 1] + kKeyIndexFanout;  // the top level is one block
}

void FinishKeyIndex(std::uint64_t keys, std::uint64_t* words) {
  if (keys == 0) return;
  std::fill(words + keys, words + KeyIndexWords(keys), UINT64_MAX);
  std::uint64_t starts[kMaxLevels];
  const int levels = LevelStarts(keys, starts);
  std::uint64_t entries = keys;
  for (int j = 1; j < levels; ++j) {
    const std::uint64_t* below = words + starts[j - 1];
    std::uint64_t* level = words + starts[j];
    entries = Blocks(entries);
    for (std::uint64_t b = 0; b < entries; ++b) level[b] = below[b * kKeyIndexFanout];
  }
}

bool KeyIndexLevelsConsistent(const std::uint64_t* words, std::uint64_t keys) {
  if (keys == 0) return true;
  std::uint64_t starts[kMaxLevels];
  const int levels = LevelStarts(keys, starts);
  std::uint64_t entries = keys;
  for (int j = 0; j < levels; ++j) {
    const std::uint64_t* level = words + starts[j];
    for (std::uint64_t e = 0; e < entries; ++e) {
      if (j > 0 && level[e] != words[starts[j - 1] + e * kKeyIndexFanout]) return false;
    }
    for (std::uint64_t e = entries; e < Blocks(entries) * kKeyIndexFanout; ++e) {
      if (level[e] != UINT64_MAX) return false;
    }
    entries = Blocks(entries);
  }
  return true;
}

std::uint64_t KeyIndexLowerBound(const std::uint64_t* words, std::uint64_t keys,
                                 std::uint64_t window) {
  if (keys == 0) return 0;
  std::uint64_t starts[kMaxLevels];
  const int levels = LevelStarts(keys, starts);
  // Invariant below the top: the first entry of `block` is < window (its parent entry was), and
  // the block after it starts at an entry >= window (or does not exist).
  std::uint64_t block = 0;
  for (int j = levels - 1;; --j) {
    const std::uint64_t* b = words + starts[j] + block * kKeyIndexFanout;
    std::uint64_t below = 0;
    for (std::uint64_t i = 0; i < kKeyIndexFanout; ++i) below += b[i] < window;
    if (j == 0) return std::min(block * kKeyIndexFanout + below, keys);
    if (below == 0) return 0;  // only at the top: every key's window is >= window
    block = block * kKeyIndexFanout + below - 1;
    __builtin_prefetch(words + starts[j - 1] + block * kKeyIndexFanout);
  }
}

}  // namespace tandem::shm
