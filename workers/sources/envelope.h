// A source's envelope (DESIGN §9): how the records a source reads become updates of its
// collection. Every source that reads records — log, table, csv, json_lines — queues them here in
// its Advance, and each worker's node (MakeNode) emits its share in each tick.
//
//   * Plain (no upsert key): a record is an update (row, time, diff), emitted as it is. Records
//     are spread over the workers round robin.
//   * Upsert (SourceImport.upsert_key, the key columns): a record replaces the row with its key
//     (kUpsert, the whole row) or deletes it (kDelete, the key columns in upsert-key order). A
//     record goes to the worker hash(key-encoded key: base/row.h "Keys") % N, which keeps the
//     current row of each of its keys and emits the retraction of the old row and the insertion of
//     the new one itself. In a tick [lo, hi), a worker applies its records below hi in time order
//     and, within one time, in the order they were added: of two records for one key at one time,
//     the later one wins. An upsert of the row a key already has, and a delete of a key that has no
//     row, change nothing.
//
// Times: a record (or error) must be added at a time no lower than the source's upper when it is
// added (what is below the upper has been emitted). Emitted updates are advanced to the
// dataflow's as_of; those at or beyond its until are dropped (SourceNode).
//
// Thread safety: Add and AddError are called by the source's Advance (the tick barrier's
// completion step, every worker waiting); each worker's node takes its queue between barriers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/row.h"
#include "base/time.h"
#include "ipc/formats/source_record.h"
#include "workers/operators/node.h"

namespace tandem::workers {

// What a source queues: a record as the source formats read it (ipc/formats/source_record.h).
using ipc::SourceRecord;

class Envelope {
 public:
  // `upsert_key` empty: plain updates. `workers`: the runtime's N.
  Envelope(std::vector<std::uint32_t> upsert_key, std::uint32_t workers);
  ~Envelope();
  Envelope(const Envelope&) = delete;
  Envelope& operator=(const Envelope&) = delete;

  bool upsert() const { return !key_.empty(); }
  const std::vector<std::uint32_t>& upsert_key() const { return key_; }

  // Queues a record for its worker. REQUIRES: kUpdate in a plain envelope; kUpsert or kDelete
  // (with a row of the key's arity) in an upsert one.
  void Add(SourceRecord record);
  // Queues an error of the collection (emitted by worker 0).
  void AddError(ErrorUpdate error);
  // Records queued and not yet emitted (all workers).
  std::size_t queued() const;

  // Worker `me`'s node. One per worker, made once.
  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until);

 private:
  class PlainNode;
  class UpsertNode;
  struct Queued {
    SourceRecord record;
    std::uint64_t seq;  // the order records were added in
    std::string key;    // upsert: the key encoding (routed by it in Add, looked up by the node)
  };
  std::vector<std::uint32_t> key_;
  std::uint32_t workers_;
  std::uint64_t next_seq_ = 0;
  std::vector<std::vector<Queued>> queues_;  // by worker
  std::vector<ErrorUpdate> errors_;
};

}  // namespace tandem::workers
