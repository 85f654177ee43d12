// The Validator: validation at the boundary (DESIGN §3.2). The supervisor checks every command of
// its controller and of its sessions with it before any runtime sees the command.
//
// Invariants:
//   * a refused command changes nothing — neither the catalog nor the Validator: every check of a
//     command runs before anything is recorded, and the catalog changes (Catalog::Clear, Add,
//     AllowCompaction) only for a command accepted;
//   * the controller's commands are checked in order, each against the catalog every command
//     accepted before it made (its epoch: from its last accepted Hello on);
//   * a session's command (an observer's, a writer's) is checked against a catalog and changes
//     nothing; a session may send only what reads, and a writer session also WriteTable;
//   * what the Validator accepts, a runtime may take as given (a broken precondition there is a
//     bug); bad data inside an accepted command is not its to refuse (DESIGN §3.2);
//   * every refusal is a Status "<Describe(command)>: <reason>", the reason naming where in the
//     command it arose: NotFound for an unknown id, FailedPrecondition before Hello and for a
//     table without a data directory, ResourceExhausted beyond the index capacity,
//     InvalidArgument for everything else.
//
// What each check refuses (the rules are DESIGN's, §3.2, §8, §9, §10; those of plans are
// plan_typing.h's, of sources source_schema.h's, of written rows table_write.h's). A "valid
// time" is any uint64 but UINT64_MAX, which base/time.h reserves for the empty frontier.
//   * any command without a kind; from the controller, any command but Hello before its first
//     Hello; from a session, anything but Hello, Peek, CancelPeek, Subscribe, CancelSubscribe,
//     Goodbye and (a writer session's) WriteTable;
//   * Hello: another protocol version; writer without observer. Accepted from the controller
//     (not observer), it starts a new epoch: the catalog is cleared and the controller replays;
//   * CreateInstance, UpdateConfiguration: a parameter with an empty name;
//   * CreateDataflow: a class other than MAINTAINED and ONE_SHOT_READ; an as_of that is not one
//     valid time, an until that is neither empty nor one valid time after it; a created id that is
//     not a canonical GlobalId ("u5", not "u05") or not new in the epoch and the dataflow; a
//     source import CheckSourceImport refuses, a table without a data directory; an index import
//     that is not a live maintained index with the same `on`, key and schema, or is imported
//     twice; a Get outside the dataflow; a plan or an index key that does not type-check; no
//     index export; more live indexes than the index capacity. MAINTAINED: a transient export
//     (t<n>); an index import at an as_of below the index's as_of or its allowed compaction
//     frontier; the time itself (tandem_now()) read anywhere but in an Mfp's predicates, or in a
//     predicate that is not a temporal filter (temporal_filter.h). ONE_SHOT_READ: an until other
//     than as_of + 1; a source import; no index import; an export that is not transient; the time
//     itself read anywhere (it computes one time: its as_of, a literal);
//   * Schedule, AllowWrites: an unknown id;
//   * AllowCompaction: an unknown id; one that is not an index (naming the indexes of its
//     dataflow); a missing frontier, one of more than one element, or not a valid time; the empty
//     frontier (a drop) of an index a live dataflow imports (naming the importers);
//   * Peek: an empty uuid; an id that is not an index; a time that is not valid or, for a
//     one-shot result, not its as_of; a key row not of the index key's arity and types; an mfp
//     that does not type-check against the index or reads the time itself (a peek reads one time:
//     a literal); finishing columns out of range of its output;
//   * CancelPeek, CancelSubscribe: an empty uuid (an unknown one is fine: it may have ended);
//   * Subscribe: an empty uuid or one over WriteBounds::kMaxUuidBytes; an id that is not a
//     maintained index; an as_of or up_to that is not a valid time; an up_to not after the as_of
//     given (the supervisor checks it against the as_of it fills in for "latest");
//   * WriteTable: an empty uuid or one over WriteBounds::kMaxUuidBytes; an id that is not a live
//     table (naming what it is); no updates, or more than WriteBounds::kMaxUpdates; updates
//     CheckTableUpdates refuses;
//   * Goodbye: nothing (it ends the sender's session and reaches no runtime).
// Peek and write uuids are not tracked: a peek's end is not seen here, and a retried write is the
// runtime's to recognise.
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
#include "ipc/catalog.h"
#include "ipc/codec.h"

namespace tandem::ipc {

class Validator {
 public:
  // A command of the controller, against its epoch's catalog; accepted, it is recorded there.
  Status Validate(const pb::Command& command);
  // A command of an observer session — a writer session's when `writer` — against `catalog`
  // (the epoch's when not given), changing nothing. Before any Hello the epoch's catalog is
  // empty: an observer's peek is then of an unknown index.
  Status ValidateObserver(const pb::Command& command, bool writer = false) const;
  Status ValidateObserver(const pb::Command& command, bool writer, const Catalog& catalog) const;

  // The epoch's catalog: what the controller's accepted commands made.
  const Catalog& catalog() const { return catalog_; }
  // The epoch catalog's, for tools and tests.
  const std::map<std::string, pb::Schema>& collections() const { return catalog_.collections(); }
  const std::map<std::string, Catalog::IndexInfo>& indexes() const { return catalog_.indexes(); }
  const std::map<std::string, Catalog::TableInfo>& tables() const { return catalog_.tables(); }
  const std::map<std::string, std::uint64_t>& allowed_compaction() const {
    return catalog_.allowed_compaction();
  }
  std::vector<std::string> ImportersOf(const std::string& index) const {
    return catalog_.ImportersOf(index);
  }
  std::optional<std::uint64_t> OneShotAsOf(const std::string& index) const {
    return catalog_.OneShotAsOf(index);
  }
  bool hello_seen() const { return hello_seen_; }

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
  // Who sent a command: what it may send.
  enum class Sender { kController, kObserver, kWriter };
  // The one switch over command kinds: `command` of `sender` against `catalog`, changing
  // nothing. For an accepted CreateDataflow, `created` receives the schemas of what it creates
  // (null for a session's command: a session creates nothing).
  Status Check(const pb::Command& command, Sender sender, const Catalog& catalog,
               std::map<std::string, pb::Schema>* created) const;
  Status CheckCreateDataflow(const Catalog& catalog, const pb::DataflowDescription& desc,
                             std::map<std::string, pb::Schema>* created) const;

  bool hello_seen_ = false;
  bool data_dir_ = false;
  std::uint32_t index_capacity_ = 0;
  std::uint64_t segment_bytes_ = 0;
  Catalog catalog_;  // the epoch's
};

}  // namespace tandem::ipc
