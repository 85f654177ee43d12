// The key index of a batch (DESIGN §4 "Batches"): what a point lookup or a seek searches instead
// of binary-searching the key column.
//
// Binary search over the key column costs two dependent cache misses per probe (the offset, then
// the key's bytes) and about log2(n) probes: ~20 misses for 10^6 keys, most of a lookup. The key
// index answers the same lower bound from one cache line per level:
//
//   skip      the bytes every key of the batch starts with (the common prefix of its first and
//             last key): a probe that differs there sorts before or after every key.
//   window    of a key: its 8 bytes after `skip`, zero-padded past its end, read big-endian as an
//             integer — so window order is memcmp order, except that keys with equal windows
//             are not told apart (a full comparison decides those).
//   level 0   the window of every key, in key order;
//   level j+1 the first entry of every block of 8 of level j, until a level is one block.
//             Every level is padded to whole blocks with UINT64_MAX (never below a window that
//             counts) and starts on a 64-byte boundary, so a block is one cache line.
//
// A search takes the top block, counts the entries below the probe's window (8 compares, no
// branch), and descends into the block under the last of them: log8(n) lines, the upper levels
// shared by every lookup and so cached (10^6 keys: 7 levels of which the lower 2–3 miss).
//
// The index lives inside the batch at BatchHeader::key_index_at; the functions here know only
// the words. Who may touch it: the batch's writer, once, before publishing; readers after.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tandem::shm {

// Entries per block: one cache line of windows.
inline constexpr std::uint64_t kKeyIndexFanout = 8;

// Up to 8 bytes at p, zero-padded on the right, as a big-endian integer: integer order of the
// results is memcmp order of the padded bytes.
inline std::uint64_t LoadPaddedBigEndian(const char* p, std::size_t n) {
  unsigned char b[8] = {};
  std::memcpy(b, p, n < 8 ? n : 8);
  std::uint64_t v;
  std::memcpy(&v, b, 8);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

// The window of `key` after its first `skip` bytes.
inline std::uint64_t KeyWindow(std::string_view key, std::uint64_t skip) {
  return key.size() > skip ? LoadPaddedBigEndian(key.data() + skip, key.size() - skip) : 0;
}

// Words (uint64) the index of `keys` keys takes, every level padded to whole blocks.
std::uint64_t KeyIndexWords(std::uint64_t keys);

// Completes the index in `words` (KeyIndexWords(keys) of them, 64-byte aligned) whose first
// `keys` words the caller has set to the windows of the batch's keys, in key order: pads level 0
// and writes the levels above it.
void FinishKeyIndex(std::uint64_t keys, std::uint64_t* words);

// Whether the levels above level 0 and every padding word are what FinishKeyIndex writes (a
// post-mortem check; level 0 is the caller's to check against the keys).
bool KeyIndexLevelsConsistent(const std::uint64_t* words, std::uint64_t keys);

// The first key whose window is >= `window` (keys when none), from the index of `keys` keys.
std::uint64_t KeyIndexLowerBound(const std::uint64_t* words, std::uint64_t keys,
                                 std::uint64_t window);

}  // namespace tandem::shm
