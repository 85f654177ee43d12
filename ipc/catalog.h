// The catalog: what a replica maintains in one epoch of its controller, as the supervisor knows
// it — the collections created and not dropped with their schemas, which of them are indexes (on
// what, with which key, readable from which as_of), the dataflows they belong to, the tables among
// the sources, and the compaction frontier the controller allowed for each maintained index.
// (Ids only: names and definitions are the controller's, DESIGN §15.)
//
// Who touches it: the Validator owns its epoch's catalog and changes it only through Clear, Add
// and AllowCompaction, each only after it accepted the command that asks for it — so a refused
// command changes nothing here. The supervisor reads it (HelloAccepted's live_indexes, a
// subscribe's latest as_of) and keeps a copy of the last complete epoch while a controller
// replays; observers' and writer sessions' commands are validated against that copy.
//
// Invariants (what the Validator's checks keep true):
//   * the keys of collections() and of origins() are the same;
//   * every key of indexes() is one of them, with an origin of kind kIndex, and its `on` is a
//     collection of the same dataflow;
//   * every dataflow in dataflows() has at least one live export, and every origin names one of
//     them; a dataflow goes (with its sources and views) when its last index is dropped;
//   * every import of a dataflow in dataflows() is a key of indexes(): an imported index is not
//     dropped before its importers;
//   * every key of allowed_compaction() is a key of indexes() that is not a one-shot result, and
//     its frontier only rises;
//   * every key of tables() has an origin of kind kSource and source_kind "table".
//
// Thread safety: none; its owner's thread only. Copyable (the supervisor keeps a copy).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ipc/codec.h"

namespace tandem::ipc {

class Catalog {
 public:
  // An index: an index export of a live dataflow.
  struct IndexInfo {
    std::string on;                  // the collection it indexes, of the same dataflow
    std::vector<std::uint32_t> key;  // column positions in that collection's schema
    std::uint64_t as_of = 0;         // of the dataflow that exports it: where its since starts
  };
  // A table: a source import with a TableSource.
  struct TableInfo {
    pb::Schema schema;
    std::vector<std::uint32_t> upsert_key;  // empty: plain updates with diffs
  };
  // Where a collection comes from: the dataflow that creates it, and as what.
  struct Origin {
    std::uint64_t dataflow;
    enum Kind { kSource, kView, kIndex } kind;
    const char* source_kind = "";  // for kSource: "log", "table", … (pb::Source's field name)
  };
  // A dataflow with an index left: its indexes not yet dropped, its sources and views (which go
  // when the last index goes), and the indexes it imports (which cannot be dropped before it
  // goes).
  struct Dataflow {
    std::string debug_name;
    std::vector<std::string> live_exports;  // in the order the dataflow lists them
    std::vector<std::string> others;
    std::vector<std::string> imports;
    std::optional<std::uint64_t> one_shot_as_of;  // ONE_SHOT_READ: the one time it computes
  };

  // The collections, with their schemas. An index's schema is the schema of the collection it is
  // on.
  const std::map<std::string, pb::Schema>& collections() const { return collections_; }
  // The indexes among them.
  const std::map<std::string, IndexInfo>& indexes() const { return indexes_; }
  // The tables among them.
  const std::map<std::string, TableInfo>& tables() const { return tables_; }
  // The compaction frontier the controller last allowed for a maintained index (the highest
  // non-empty one sent; none before the first).
  const std::map<std::string, std::uint64_t>& allowed_compaction() const {
    return allowed_compaction_;
  }
  const std::map<std::string, Origin>& origins() const { return origins_; }
  // By number, in creation order.
  const std::map<std::uint64_t, Dataflow>& dataflows() const { return dataflows_; }
  // The index exports of every live dataflow importing `index`, in creation order of the
  // dataflows ("u5", "u7"): while there is one, `index` cannot be dropped.
  std::vector<std::string> ImportersOf(const std::string& index) const;
  // For a one-shot result (an index export of a live ONE_SHOT_READ dataflow), the one time it is
  // readable at: its dataflow's as_of. nullopt for anything else.
  std::optional<std::uint64_t> OneShotAsOf(const std::string& index) const;

  // A new epoch: everything is forgotten (the controller replays its history).
  void Clear();
  // REQUIRES: the Validator accepted a CreateDataflow of `desc` against this catalog. `created`:
  // the schemas of every collection it creates (source imports, builds, index exports).
  void Add(const pb::DataflowDescription& desc, std::map<std::string, pb::Schema> created);
  // REQUIRES: the Validator accepted an AllowCompaction of `index` to `frontier` against this
  // catalog. A time raises the index's allowed compaction frontier (a lower one, or any for a
  // one-shot result, changes nothing); the empty frontier drops the index, and with its
  // dataflow's last index the dataflow's sources, views and tables (their ids may be created
  // again).
  void AllowCompaction(const std::string& index, const pb::Frontier& frontier);

 private:
  std::map<std::string, pb::Schema> collections_;
  std::map<std::string, IndexInfo> indexes_;
  std::map<std::string, Origin> origins_;
  std::map<std::uint64_t, Dataflow> dataflows_;
  std::map<std::string, std::uint64_t> allowed_compaction_;
  std::map<std::string, TableInfo> tables_;
  std::uint64_t next_dataflow_ = 0;
};

}  // namespace tandem::ipc
