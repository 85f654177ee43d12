// Validation at the boundary (DESIGN §3.2): the supervisor checks every command before any
// runtime sees it. A bad command is refused with a reason and changes nothing — not even the
// validator's own state. A good one is applied to the validator's state of the epoch.
//
// What is checked, per command:
//   * before the first Hello, every other command is refused (FailedPrecondition);
//   * Hello: protocol_version == kProtocolVersion; writer: true only with observer: true (a
//     writer session is an observer that may also write tables; a controller writes anyway); an
//     accepted Hello starts a new epoch in which every id known so far is forgotten, with the
//     compaction frontiers, importers and tables recorded for them (the controller replays its
//     history) — unless it is an observer's (observer: true), which changes nothing;
//   * CreateInstance, UpdateConfiguration: parameter names are non-empty;
//   * CreateDataflow: class MAINTAINED or ONE_SHOT_READ; as_of is one valid time; until is empty
//     or one valid time > as_of; every id it creates (source imports, builds, index exports) is a
//     GlobalId in canonical spelling ("u5", not "u05") that is new in the epoch and in the
//     dataflow; generator sources have their fixed schema; index imports name a live index of the
//     epoch (not a one-shot result) with the same `on`, key and column types, once each; plans and
//     index keys type-check (column references in range, operand types, literal types, aggregate
//     types); it exports at least one index (else nothing could ever read or drop it); the live
//     indexes stay within the index capacity (set_index_capacity: the registry's slots per row);
//     every source parameter is within the bounds below (SourceBounds: what a source can make
//     without taking the runtime down — a generator's rows per tick, its catch-up to as_of, its
//     keys against the segment size from set_segment_bytes —, a log, csv or json_lines path that
//     open() reads as the file named, a table's tick_interval_ms of at most an hour); log, table,
//     csv and json_lines sources have a schema of at least one column of known types; a table
//     needs a data directory (set_data_dir: the replica's --data-dir; else FailedPrecondition);
//     upsert_key (DESIGN §9) only on log, table, csv and json_lines sources, its columns
//     distinct and in range of the schema — and for csv and json_lines not every column (a
//     record without a non-key field is a delete there, so such a source could never hold a
//     row). Each table (a source import with a TableSource) is remembered with its schema and
//     upsert key until its dataflow goes;
//       - MAINTAINED (DESIGN §8): no index export is a transient id (t<n>); no index import has
//         an as_of below the compaction frontier the controller last allowed for that index (a
//         maintained dataflow would be wrong forever);
//       - ONE_SHOT_READ (DESIGN §8): until == as_of + 1, no source imports, at least one index
//         import, every index export a transient id (t<n>); builds as in MAINTAINED. An import at
//         an as_of below the allowed compaction frontier is accepted: the runtime answers the
//         one-shot's peeks Error ("compacted"). Its exports are readable only at its as_of;
//   * Schedule, AllowWrites: the id is known;
//   * AllowCompaction: the id is a known index — a source or a view (a build) is refused, naming
//     the indexes of the dataflow that defines it, since only an index has a compaction frontier;
//     the frontier is present with at most one element, a valid time. A non-empty frontier of a
//     maintained index raises the compaction frontier recorded for it (a lower one is accepted
//     and lowers nothing); of a one-shot result it changes nothing. The empty frontier drops the
//     index (it is forgotten) — refused while a live dataflow imports it, naming the importers —,
//     and with a dataflow's last index its sources (tables too) and views are forgotten, and its
//     imports no longer hold anything (the runtimes drop the whole dataflow then; their ids may
//     be created again);
//   * Peek: uuid non-empty; the id is a known index; timestamp a valid time — for a one-shot
//     result, its dataflow's as_of; each key row has the index key's arity and types; the
//     map/filter/project type-checks against the indexed collection; finishing columns are in
//     range of the mfp's output;
//   * CancelPeek: uuid non-empty (an unknown uuid is fine: the answer may have been sent);
//   * Subscribe (DESIGN §10): uuid non-empty, at most WriteBounds::kMaxUuidBytes; the id is a
//     known maintained index (not a one-shot result); as_of, when set, a valid time; up_to, when
//     set, a valid time after as_of (when as_of is set; the supervisor checks it against the
//     as_of it fills in for "latest");
//   * CancelSubscribe: uuid non-empty (an unknown uuid is fine: the subscribe may have ended);
//   * WriteTable (DESIGN §9): uuid non-empty, at most WriteBounds::kMaxUuidBytes; the id is a
//     live table (NotFound for an unknown id; any other collection is "not a table", naming what
//     it is); 1 to WriteBounds::kMaxUpdates updates, each of the table's kind — a table without
//     an upsert key takes `update` (a row and a non-zero diff), an upsert table `upsert` (a
//     whole row) and `delete` (the key columns, in upsert_key order) — and each row has the
//     table's arity, column types and nullability (a delete's: the key columns'). Nothing is
//     recorded: the runtime gives the write its time; uuids are not tracked (a retry is the
//     runtime's to recognize);
//   * Goodbye: nothing (it ends the sender's session in the supervisor and reaches no runtime).
// Peek uuids are not tracked: the validator cannot see when a peek completes.
//
// ValidateObserver() checks a command of an observer session (DESIGN §3) against the state as it
// is, changing nothing: Hello (as above, but it starts no epoch), Peek, CancelPeek, Subscribe and
// CancelSubscribe as above,
// Goodbye — and, for a writer session (Hello{observer, writer}: ValidateObserver(command, true)),
// WriteTable as above; everything else is refused ("observer sessions are read-only: …", or for
// a writer session "writer sessions may only read and write tables: …").
//
// Every refusal is a Status whose message is "<Describe(command)>: <reason>": NotFound for an
// unknown id, FailedPrecondition before Hello and for a table without a data directory,
// ResourceExhausted beyond the index capacity, InvalidArgument for everything else.
//
// Schemas are compared by column type and nullability; column names are labels and are not
// compared (the validator names the columns it derives, e.g. a Reduce's "count").
//
// A "valid time" is any uint64 but UINT64_MAX, which base/time.h reserves for the empty frontier.
//
// Plan typing is plan_typing.h's, the rules of source imports source_schema.h's (SourceBounds),
// those of table updates table_write.h's (WriteBounds, CheckTableUpdates).
//
// Thread safety: none; the supervisor's loop owns its Validator. Copyable (the fuzz target copies
// a primed one).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

class Validator {
 public:
  // Every command but Hello is refused before the first Hello.
  // Hello starts a new epoch: every id known so far is forgotten (the controller replays).
  Status Validate(const pb::Command& command);
  // A command of an observer session — a writer session's when `writer` — checked against this
  // state without changing it (see above). Before any Hello the state is empty: an observer's
  // peek is then of an unknown index.
  Status ValidateObserver(const pb::Command& command, bool writer = false) const;

  // What the epoch knows about a table (a source import with a TableSource).
  struct TableInfo {
    pb::Schema schema;
    std::vector<std::uint32_t> upsert_key;  // empty: plain updates with diffs
  };
  // The live tables of this epoch.
  const std::map<std::string, TableInfo>& tables() const { return tables_; }

  // What the epoch knows about an index.
  struct IndexInfo {
    std::string on;                  // the collection it indexes, of the same dataflow
    std::vector<std::uint32_t> key;  // column positions in that collection's schema
    std::uint64_t as_of = 0;         // of the dataflow that exports it: where its since starts
  };

  // Collections known in this epoch, with their schemas (for tools and tests). An index's
  // schema is the schema of the collection it is on.
  const std::map<std::string, pb::Schema>& collections() const { return collections_; }
  // The indexes among them.
  const std::map<std::string, IndexInfo>& indexes() const { return indexes_; }
  bool hello_seen() const { return hello_seen_; }
  // The compaction frontier the controller last allowed for a maintained index (the highest
  // non-empty one sent; none before the first). A MAINTAINED import below it is refused.
  const std::map<std::string, std::uint64_t>& allowed_compaction() const {
    return allowed_compaction_;
  }
  // The index exports of every live dataflow importing `index`, in creation order of the
  // dataflows ("u5", "u7"): while there is one, `index` cannot be dropped.
  std::vector<std::string> ImportersOf(const std::string& index) const;
  // For a one-shot result (an index export of a live ONE_SHOT_READ dataflow), the one time it is
  // readable at: its dataflow's as_of. nullopt for anything else.
  std::optional<std::uint64_t> OneShotAsOf(const std::string& index) const;
  // At most this many live indexes (the registry's slots per row; 0: no limit). A CreateDataflow
  // beyond it is refused (ResourceExhausted). Kept across epochs.
  void set_index_capacity(std::uint32_t capacity) { index_capacity_ = capacity; }
  // The shared-memory segment's size in bytes (0: unknown). A generator source whose rows could
  // never fit in it is refused (see SourceBounds). Kept across epochs.
  void set_segment_bytes(std::uint64_t bytes) { segment_bytes_ = bytes; }
  // Whether the replica has a data directory (--data-dir) for tables' logs: without one a table
  // source is refused. Kept across epochs.
  void set_data_dir(bool has_data_dir) { data_dir_ = has_data_dir; }

 private:
  Status ValidateCreateDataflow(const pb::DataflowDescription& desc);
  // Records an accepted dataflow: its collections, indexes and origins.
  void Record(const pb::DataflowDescription& desc, std::map<std::string, pb::Schema> created,
              std::map<std::string, IndexInfo> new_indexes);
  Status ValidatePeek(const pb::Peek& peek) const;
  Status ValidateSubscribe(const pb::Subscribe& subscribe) const;
  Status ValidateWriteTable(const pb::WriteTable& write) const;
  Status ValidateAllowCompaction(const pb::AllowCompaction& command);

  // Where a collection comes from: the dataflow that creates it, and as what.
  struct Origin {
    std::uint64_t dataflow;
    enum Kind { kSource, kView, kIndex } kind;
    const char* source_kind = "";  // for kSource: "log", "table", … (pb::Source's field name)
  };
  // A dataflow of the epoch with an index left: its indexes not yet dropped, and its sources and
  // views (which go when the last index goes), and the indexes it imports (which cannot be
  // dropped before it goes).
  struct Dataflow {
    std::string debug_name;
    std::vector<std::string> live_exports;  // in the order the dataflow lists them
    std::vector<std::string> others;
    std::vector<std::string> imports;
    std::optional<std::uint64_t> one_shot_as_of;  // ONE_SHOT_READ: the one time it computes
  };

  // State of the epoch: collections created and not dropped, their schemas, which are indexes
  // (with their key), the dataflows they belong to, and the compaction frontiers allowed for
  // maintained indexes. Invariants: the keys of collections_ and of origins_ are the same; every
  // key of indexes_ is one of them, with kind kIndex; every dataflow in dataflows_ has at least
  // one live export, and each origin names one of them; every import of a dataflow in
  // dataflows_ is a key of indexes_ (a drop of an imported index is refused); every key of
  // allowed_compaction_ is a key of indexes_ that is not a one-shot result; every key of tables_
  // is a key of origins_ with kind kSource and source_kind "table".
  bool hello_seen_ = false;
  bool data_dir_ = false;
  std::uint32_t index_capacity_ = 0;
  std::uint64_t segment_bytes_ = 0;
  std::map<std::string, pb::Schema> collections_;
  std::map<std::string, IndexInfo> indexes_;
  std::map<std::string, Origin> origins_;
  std::map<std::uint64_t, Dataflow> dataflows_;
  std::map<std::string, std::uint64_t> allowed_compaction_;
  std::map<std::string, TableInfo> tables_;

  std::uint64_t next_dataflow_ = 0;
};

}  // namespace tandem::ipc
