// A DDL statement made real (DESIGN §15 "The catalog"): its change applied to a copy of the
// catalog, made durable, sent to every replica that is up, and published — in the order
// live_catalog.h explains, with the catalog's DDL lock held throughout, so DDL statements run one
// at a time while reads go on against the catalog they started with.
//
// Outcomes:
//  * the change refuses (a SqlError: a name taken, an unknown column …): nothing changed;
//  * saving fails: nothing changed, 58030 (the data dir's disk), nothing sent;
//  * the replicas accept the commands (or there are none: a view, a SHOW): published, answered;
//  * a replica refuses a create, or none confirms it in time: the change is withdrawn — the old
//    catalog is published again with the ids the change handed out retired (Catalog::Retire),
//    the drops of its indexes are sent to the replicas that are up (not recorded: a replica that
//    is down is replayed the history without it, and reconciliation drops it), and the client
//    gets the replica's reason (XX000) or 57P03;
//  * drops that no replica confirmed in time are published all the same: a replica that comes
//    back is replayed the history without them, and reconciliation drops them there.
#pragma once

#include <functional>

#include "frontend/catalog/ddl.h"
#include "frontend/server/live_catalog.h"
#include "frontend/server/replica_driver.h"
#include "frontend/sql/sql_error.h"

namespace tandem::frontend {

// Changes `catalog` (a copy, with the compactions the driver sent recorded) or refuses.
using CatalogChange = std::function<sql::SqlResult<DdlOutcome>(Catalog& catalog)>;

sql::SqlResult<DdlOutcome> ApplyCatalogChange(LiveCatalog& live, ReplicaDriver& driver,
                                              const CatalogChange& change,
                                              DriverClock::time_point deadline);

}  // namespace tandem::frontend
