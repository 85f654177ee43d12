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
// (a session's own write not applied: read your writes), a time compacted, the replica restarting
// — TryRead says so and the caller peeks, which waits or answers the error itself.
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

#include "frontend/catalog/catalog.h"
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
  std::optional<sql::SqlResult<ReadResult>> TryRead(const Catalog& catalog,
                                                    const plan::PeekPlan& peek,
                                                    const ReadTime& time);

  // Reads answered in place, and keyed peeks that fell back to the network (for /metrics, EXPLAIN
  // and tests).
  std::uint64_t answered() const { return answered_.load(std::memory_order_relaxed); }
  std::uint64_t fell_back() const { return fell_back_.load(std::memory_order_relaxed); }

 private:
  std::optional<sql::SqlResult<ReadResult>> Read(const Catalog& catalog, const plan::PeekPlan& peek,
                                                 const ReadTime& time);

  const std::string segment_;
  std::atomic<std::uint64_t> answered_{0};
  std::atomic<std::uint64_t> fell_back_{0};
};

}  // namespace tandem::frontend
