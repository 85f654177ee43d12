// What a source import may ask for (workers/README.md "Sources"): its schema, its parameters within
// SourceBounds, its upsert key (DESIGN §9). The validator checks every source import of a
// CreateDataflow with CheckSourceImport before a runtime builds the source; the runtime's sources
// (workers/sources/) may rely on what it refuses never reaching them.
//
// What CheckSourceImport refuses, each with a reason naming the parameter (and the bound):
//   * a schema: of a counter other than [INT64], of a key_value other than [INT64, INT64] (not
//     nullable); of a log, table, csv or json_lines source without columns or with a column of no
//     known type, or with typmods its type has not (CheckColumnType); a source without a kind;
//   * a parameter beyond SourceBounds: what a source could not make without taking the runtime
//     down (a generator's rows per tick, its catch-up to as_of, its keys against the segment), a
//     file path that is empty, relative, too long or has a NUL byte, a generator or table tick
//     interval over an hour, a key_value source with no keys or no updates per tick, a counter
//     whose last value would reach the times reserved for closing;
//   * an upsert key on a generator source, with a column out of range or twice, or — for csv and
//     json_lines, where a record without a non-key field is a delete — with every column.
// Stateless; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// Bounds on source parameters (workers/README.md "Sources"). A request beyond one is refused with a
// CommandError naming the parameter and the bound.
struct SourceBounds {
  // counter and key_value: one tick per interval; a longer interval is not a stream.
  static constexpr std::uint64_t kMaxTickIntervalUs = 3'600'000'000;  // one hour
  // key_value: its keys' current values live in the worker (8 bytes each) and its first tick
  // holds a row per key; each of them is at least kMinRowBytes in an index in the segment. That
  // first tick is one step (~1.4 M rows/s per worker): 2^24 keys keep it well inside the stall
  // watch's --runtime-stall-kill (60 s), though a step over --runtime-stall-timeout (10 s) shows
  // the replica not ready while it lasts.
  static constexpr std::uint64_t kMaxKeys = std::uint64_t{1} << 24;
  // key_value: a tick holds 2 rows (a retraction and an insertion) per update.
  static constexpr std::uint64_t kMaxUpdatesPerTick = 1'000'000;
  // The least a (key, value) row of int64s takes in a batch: time, diff, key and value bytes.
  static constexpr std::uint64_t kMinRowBytes = 32;
  // A generator's first tick catches up to as_of: every time below it is emitted in one tick
  // (advanced to as_of), so as_of × rows per tick is bounded.
  static constexpr std::uint64_t kMaxCatchUpRows = std::uint64_t{1} << 24;
  // log, csv, json_lines: an absolute path of at most this many bytes, without NUL bytes.
  static constexpr std::size_t kMaxPathBytes = 4095;
  // table: the upper follows the clock at least this often (0 is the default, 1000).
  static constexpr std::uint64_t kMaxTableTickIntervalMs = 3'600'000;  // one hour
};

// A source import of a dataflow at `as_of`: its schema, then its parameters against
// SourceBounds (`segment_bytes`: the shared-memory segment's size, 0 when unknown), then its
// upsert key. The first refusal is returned.
Status CheckSourceImport(const pb::SourceImport& import, std::uint64_t as_of,
                         std::uint64_t segment_bytes);

// pb::Source's field name of the source's kind: "log", "table", … ("" when it has none).
const char* SourceKindName(const pb::Source& source);

}  // namespace tandem::ipc
