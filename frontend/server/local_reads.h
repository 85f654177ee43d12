// In-place reads (DESIGN §15 "Co-located reads"): a SELECT that a keyed peek of one index answers
// (plan::AsPeek with keys: `WHERE k = 5`, `k IN (…)`), read by the frontend itself from its local
// replica's segment through LocalReader (client/local_reader.h) — no ZeroMQ hop, no runtime's
// command thread, nothing the replica waits for. The peek's map/filter/project and finishing are
// applied here by the replica's own code (workers/expr.h's Mfp, workers/finishing.h's Finish),
// keys grouped by worker as the interactive runtime groups them, so the answer is the peek's:
// the same rows, the same error.
//
// The network peek stays the fallback: whenever the in-place read cannot answer exactly now — no
// local replica's segment to attach, the index not published or not readable at the read time yet
// (a write acknowledged not applied yet: read your writes), a time compacted, the replica
// restarting, an answer larger than the replica's max_result_size would let through — TryRead
// says so and the caller peeks, which waits or answers the error itself.
//
// The write ledger (controller/write_ledger.h) needs no look here: the local replica is the
// frontend's only one, so every write acknowledged was acknowledged by it and is in its indexes
// at the times after it; a write it has not acknowledged (its outcome unknown) a read may or may
// not see.
//
// One difference, in what no valid read meets: when the index holds an error at the read time and
// another worker's row makes the map/filter/project fail too, this answers the index's error where
// the peek answers the first of both in ErrorLess order.
//
// Threads: TryRead runs on the SQL threads, each with a LocalReader of its own (LocalReader is
// one per thread), attached at its first read and again after the replica restarted.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "frontend/plan/planner.h"
#include "frontend/server/replica_driver.h"
#include "frontend/server/sql_reads.h"
#include "frontend/sql/sql_error.h"

namespace tandem::frontend {

class LocalReads {
 public:
  // `segment_name`: the local replica's segment (/dev/shm/<name>: "tandem." and its replica id).
  explicit LocalReads(std::string segment_name) : segment_(std::move(segment_name)) {}

  // `peek` (keyed) read in place at `time`: its answer (rows, or the read's data error), or
  // nullopt when it must be read over the network instead (above).
  // `schema`: the rows of the index's collection, as the replica knows them (the plan's import).
  std::optional<sql::SqlResult<ReadResult>> TryRead(const plan::PeekPlan& peek,
                                                    const ipc::pb::Schema& schema,
                                                    const ReadTime& time);

  // Reads answered in place, and keyed peeks that fell back to the network (for /metrics, EXPLAIN
  // and tests).
  std::uint64_t answered() const { return answered_.load(std::memory_order_relaxed); }
  std::uint64_t fell_back() const { return fell_back_.load(std::memory_order_relaxed); }

 private:
  std::optional<sql::SqlResult<ReadResult>> Read(const plan::PeekPlan& peek,
                                                 const ipc::pb::Schema& schema,
                                                 const ReadTime& time);

  const std::string segment_;
  std::atomic<std::uint64_t> answered_{0};
  std::atomic<std::uint64_t> fell_back_{0};
};

}  // namespace tandem::frontend
