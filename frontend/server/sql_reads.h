// A query's rows through the replica driver (DESIGN §15 "Statements → plans", "Timestamps"): a
// peek when one index answers it (plan::AsPeek: key equality → the peek's keys, the rest its mfp
// and finishing), else a one-shot dataflow on the interactive runtime; both at the read time the
// driver chooses — the latest time every input can be read at, raised to the session's last
// write (read your writes) — or exactly at an AS OF time.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "frontend/catalog/catalog.h"
#include "frontend/plan/planner.h"
#include "frontend/server/cancel_token.h"
#include "frontend/server/replica_driver.h"
#include "frontend/sql/sql_error.h"

namespace tandem::frontend {

struct ReadResult {
  ReadResult() {}
  ipc::pb::Rows rows;     // finishing applied (ORDER BY's order, LIMIT, the projection)
  Time timestamp = 0;     // the time read at
  bool peek = false;      // answered by a peek of one index (else a one-shot dataflow)
  bool in_place = false;  // the peek read in place from the local replica's segment
};

// The GlobalIds of the tables `objects` read — themselves, or through the views and materialized
// views they are defined over: the write ledger's keys (a read through several replicas is
// answered only by replicas that acknowledged every write to them).
std::set<std::string> TablesRead(const Catalog& catalog, const std::vector<std::string>& objects);

// The generator sources (counter, key_value) `objects` read, themselves or through views and
// materialized views: their times are their own ticks, not the epoch milliseconds tables,
// files and every other collection share (DESIGN §15 "One timeline").
std::set<std::string> GeneratorsRead(const Catalog& catalog,
                                     const std::vector<std::string>& objects);

class LocalReads;

// Reads `relation` (planned against `catalog`): in place when `local` (may be null) can answer
// its keyed peek now, else through the driver. Waits (bounded by `deadline`, ended early by
// `cancel`) for a replica and for the read time to be readable. Errors: DriverError/ReadError.
sql::SqlResult<ReadResult> ReadRelation(ReplicaDriver& driver, LocalReads* local,
                                        CancelToken& cancel, const Catalog& catalog,
                                        const plan::PlannedRelation& relation, const ReadTime& time,
                                        DriverClock::time_point deadline);

}  // namespace tandem::frontend
