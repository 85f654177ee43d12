// Which worker owns a key: hash(encoded key) % N, the same function in every role, so that
// interactive worker i finds every key it needs in registry row i (DESIGN §1).
#pragma once

#include <cstdint>
#include <string_view>

namespace tandem::workers {

// FNV-1a, 64 bits: stable across processes, builds and runs (unlike std::hash).
inline std::uint64_t StableHash(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

inline std::uint32_t WorkerOf(std::string_view key_bytes, std::uint32_t workers) {
  return static_cast<std::uint32_t>(StableHash(key_bytes) % workers);
}

// Keys of error updates in an arrangement start with this byte; no encoded row does (datum tags
// start at 0x01), so errors sort before every row and never collide with one.
inline constexpr char kErrorKeyPrefix = '\0';

}  // namespace tandem::workers
