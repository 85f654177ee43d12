// Validation at the boundary (DESIGN §3.2): the supervisor checks every command before any
// runtime sees it. A bad command is refused with a reason and changes nothing — not even the
// validator's own state. A good one is applied to the validator's state of the epoch.
//
// What is checked, per command:
//   * before the first Hello, every other command is refused (FailedPrecondition);
//   * Hello: protocol_version == kProtocolVersion; an accepted Hello starts a new epoch in which
//     every id known so far is forgotten (the controller replays its history);
//   * CreateInstance, UpdateConfiguration: parameter names are non-empty;
//   * CreateDataflow: class MAINTAINED (ONE_SHOT_READ is not supported yet); as_of is one valid
//     time; until is empty or one valid time > as_of; every id it creates (source imports,
//     builds, index exports) is a GlobalId in canonical spelling ("u5", not "u05") that is new in
//     the epoch and in the dataflow; generator sources have their fixed schema; index imports
//     name a known index with the same `on`, key and column types — and are then refused anyway,
//     as not supported yet (the runtime renders dataflows from sources only); plans and index keys
//     type-check (column references in range, operand types, literal types, aggregate types);
//     it creates at least one id (else nothing could ever schedule or drop it);
//   * Schedule, AllowWrites: the id is known;
//   * AllowCompaction: the id is known; the frontier is present with at most one element, a valid
//     time; the empty frontier drops the id (it is forgotten; collections built from it are not
//     affected);
//   * Peek: uuid non-empty; the id is a known index; timestamp a valid time; each key row has the
//     index key's arity and types; the map/filter/project type-checks against the indexed
//     collection; finishing columns are in range of the mfp's output;
//   * CancelPeek: uuid non-empty (an unknown uuid is fine: the answer may have been sent).
// Peek uuids are not tracked: the validator cannot see when a peek completes.
//
// Every refusal is a Status whose message is "<Describe(command)>: <reason>": NotFound for an
// unknown id, FailedPrecondition before Hello, InvalidArgument for everything else.
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

class Validator {
 public:
  // Every command but Hello is refused before the first Hello.
  // Hello starts a new epoch: every id known so far is forgotten (the controller replays).
  Status Validate(const pb::Command& command);

  // What the epoch knows about an index.
  struct IndexInfo {
    std::string on;                  // the collection it indexes (may since have been dropped)
    std::vector<std::uint32_t> key;  // column positions in that collection's schema
  };

  // Collections known in this epoch, with their schemas (for tools and tests). An index's
  // schema is the schema of the collection it is on.
  const std::map<std::string, pb::Schema>& collections() const { return collections_; }
  // The indexes among them.
  const std::map<std::string, IndexInfo>& indexes() const { return indexes_; }
  bool hello_seen() const { return hello_seen_; }

 private:
  Status ValidateCreateDataflow(const pb::DataflowDescription& desc);
  Status ValidatePeek(const pb::Peek& peek) const;
  Status ValidateAllowCompaction(const pb::AllowCompaction& command);

  // State of the epoch: collections created and not dropped, their schemas, and which are
  // indexes (with their key). Invariant: every key of indexes_ is a key of collections_.
  bool hello_seen_ = false;
  std::map<std::string, pb::Schema> collections_;
  std::map<std::string, IndexInfo> indexes_;
};

}  // namespace tandem::ipc
