// Which registry row a key lives in, and how error updates are keyed: part of the shared-memory
// contract (shm/README.md "The layout"), not a private choice of the runtime. Maintenance
// worker i publishes a key into row WorkerOf(key, N) and interactive worker i looks for it there
// (DESIGN §1, §4), and tools read the same rows; two builds that disagree here would give wrong
// answers without any error. So every process attached to a segment uses exactly these
// definitions, and the layout hash (shm/layout.h) covers them: a build whose routing differs is
// refused at attach like one whose struct layout differs.
#pragma once

#include <cstdint>
#include <string_view>

namespace tandem::shm {

// FNV-1a, 64 bits: stable across processes, builds and runs (unlike std::hash).
constexpr std::uint64_t StableHash(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The worker ordinal (= registry row) that owns an encoded key: hash(encoded key) % N, the same
// function in every role.
constexpr std::uint32_t WorkerOf(std::string_view key_bytes, std::uint32_t workers) {
  return static_cast<std::uint32_t>(StableHash(key_bytes) % workers);
}

// Keys of error updates in an arrangement start with this byte; no encoded row does (datum tags
// start at 0x01), so errors sort before every row and never collide with one.
inline constexpr char kErrorKeyPrefix = '\0';

// The published FNV-1a test vectors: a change to the hash fails the build, not a replica.
static_assert(StableHash("") == 0xcbf29ce484222325ULL);
static_assert(StableHash("a") == 0xaf63dc4c8601ec8cULL);
static_assert(StableHash("foobar") == 0x85944171f73967e8ULL);

}  // namespace tandem::shm
