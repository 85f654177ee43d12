// Validation at the boundary (DESIGN §3.2): the supervisor checks every command before any
// runtime sees it. A bad command is refused with a reason and changes nothing — not even the
// validator's own state. A good one is applied to the validator's state of the epoch.
//
// What is checked, per command:
//   * before the first Hello, every other command is refused (FailedPrecondition);
//   * Hello: protocol_version == kProtocolVersion; an accepted Hello starts a new epoch in which
//     every id known so far is forgotten (the controller replays its history) — unless it is an
//     observer's (observer: true), which changes nothing;
//   * CreateInstance, UpdateConfiguration: parameter names are non-empty;
//   * CreateDataflow: class MAINTAINED (ONE_SHOT_READ is not supported yet); as_of is one valid
//     time; until is empty or one valid time > as_of; every id it creates (source imports,
//     builds, index exports) is a GlobalId in canonical spelling ("u5", not "u05") that is new in
//     the epoch and in the dataflow; generator sources have their fixed schema; index imports
//     name a known index with the same `on`, key and column types — and are then refused anyway,
//     as not supported yet (the runtime renders dataflows from sources only); plans and index keys
//     type-check (column references in range, operand types, literal types, aggregate types);
//     it exports at least one index (else nothing could ever read or drop it); the live indexes
//     stay within the index capacity (set_index_capacity: the registry's slots per row);
//     every source parameter is within the bounds below (SourceBounds: what a source can make
//     without taking the runtime down — a generator's rows per tick, its catch-up to as_of, its
//     keys against the segment size from set_segment_bytes —, a log path that open() reads as
//     the file named);
//   * Schedule, AllowWrites: the id is known;
//   * AllowCompaction: the id is a known index — a source or a view (a build) is refused, naming
//     the indexes of the dataflow that defines it, since only an index has a compaction frontier;
//     the frontier is present with at most one element, a valid time; the empty frontier drops
//     the index (it is forgotten), and with a dataflow's last index its sources and views are
//     forgotten too (the runtimes drop the whole dataflow then; their ids may be created again);
//   * Peek: uuid non-empty; the id is a known index; timestamp a valid time; each key row has the
//     index key's arity and types; the map/filter/project type-checks against the indexed
//     collection; finishing columns are in range of the mfp's output;
//   * CancelPeek: uuid non-empty (an unknown uuid is fine: the answer may have been sent);
//   * Goodbye: nothing (it ends the sender's session in the supervisor and reaches no runtime).
// Peek uuids are not tracked: the validator cannot see when a peek completes.
//
// ValidateObserver() checks a command of an observer session (DESIGN §3) against the state as it
// is, changing nothing: Hello (protocol version only: it starts no epoch), Peek and CancelPeek as
// above, Goodbye; everything else is refused ("observer sessions are read-only: …").
//
// Every refusal is a Status whose message is "<Describe(command)>: <reason>": NotFound for an
// unknown id, FailedPrecondition before Hello, ResourceExhausted beyond the index capacity,
// InvalidArgument for everything else.
//
// Schemas are compared by column type and nullability; column names are labels and are not
// compared (the validator names the columns it derives, e.g. a Reduce's "count").
//
// A "valid time" is any uint64 but UINT64_MAX, which base/time.h reserves for the empty frontier.
//
// Thread safety: none; the supervisor's loop owns its Validator. Copyable (the fuzz target copies
// a primed one).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// The output schema of `plan` when the ids it may Get have the schemas in `scope`: the one
// derivation of a plan's columns (types, nullability and names — a Reduce's "count", "sum_v",
// a computed column's "c5"), used by the validator and by tandem-ctl. An error says why the plan
// does not type-check.
Result<pb::Schema> PlanSchema(const pb::Plan& plan, const std::map<std::string, pb::Schema>& scope);

// Bounds on source parameters (README "Sources"). A request beyond one is refused with a
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
  // log: an absolute path of at most this many bytes, without NUL bytes.
  static constexpr std::size_t kMaxPathBytes = 4095;
};

class Validator {
 public:
  // Every command but Hello is refused before the first Hello.
  // Hello starts a new epoch: every id known so far is forgotten (the controller replays).
  Status Validate(const pb::Command& command);
  // A command of an observer session, checked against this state without changing it (see
  // above). Before any Hello the state is empty: an observer's peek is then of an unknown index.
  Status ValidateObserver(const pb::Command& command) const;

  // What the epoch knows about an index.
  struct IndexInfo {
    std::string on;                  // the collection it indexes, of the same dataflow
    std::vector<std::uint32_t> key;  // column positions in that collection's schema
  };

  // Collections known in this epoch, with their schemas (for tools and tests). An index's
  // schema is the schema of the collection it is on.
  const std::map<std::string, pb::Schema>& collections() const { return collections_; }
  // The indexes among them.
  const std::map<std::string, IndexInfo>& indexes() const { return indexes_; }
  bool hello_seen() const { return hello_seen_; }
  // At most this many live indexes (the registry's slots per row; 0: no limit). A CreateDataflow
  // beyond it is refused (ResourceExhausted). Kept across epochs.
  void set_index_capacity(std::uint32_t capacity) { index_capacity_ = capacity; }
  // The shared-memory segment's size in bytes (0: unknown). A generator source whose rows could
  // never fit in it is refused (see SourceBounds). Kept across epochs.
  void set_segment_bytes(std::uint64_t bytes) { segment_bytes_ = bytes; }

 private:
  Status ValidateCreateDataflow(const pb::DataflowDescription& desc);
  // Records an accepted dataflow: its collections, indexes and origins.
  void Record(const pb::DataflowDescription& desc, std::map<std::string, pb::Schema> created,
              std::map<std::string, IndexInfo> new_indexes);
  Status ValidatePeek(const pb::Peek& peek) const;
  Status ValidateAllowCompaction(const pb::AllowCompaction& command);

  // Where a collection comes from: the dataflow that creates it, and as what.
  struct Origin {
    std::uint64_t dataflow;
    enum Kind { kSource, kView, kIndex } kind;
  };
  // A dataflow of the epoch with an index left: its indexes not yet dropped, and its sources and
  // views (which go when the last index goes).
  struct Dataflow {
    std::vector<std::string> live_exports;  // in the order the dataflow lists them
    std::vector<std::string> others;
  };

  // State of the epoch: collections created and not dropped, their schemas, which are indexes
  // (with their key), and the dataflows they belong to. Invariants: the keys of collections_ and
  // of origins_ are the same; every key of indexes_ is one of them, with kind kIndex; every
  // dataflow in dataflows_ has at least one live export, and each origin names one of them.
  bool hello_seen_ = false;
  std::uint32_t index_capacity_ = 0;
  std::uint64_t segment_bytes_ = 0;
  std::map<std::string, pb::Schema> collections_;
  std::map<std::string, IndexInfo> indexes_;
  std::map<std::string, Origin> origins_;
  std::map<std::uint64_t, Dataflow> dataflows_;
  std::uint64_t next_dataflow_ = 0;
};

}  // namespace tandem::ipc
