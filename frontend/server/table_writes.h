// INSERT, UPDATE and DELETE made WriteTables (DESIGN §9, §15): the statement planned
// (plan/dml.h), the rows it writes evaluated here when they are constants (INSERT … VALUES) or
// read through the replicas (INSERT … SELECT, an UPDATE's or DELETE's matching rows), the keys it
// writes checked against the table's rows (23505), then one WriteTable, acknowledged durable by
// the replicas before the client is answered.
//
// Serialised per table: a statement holds its table's writer lock from its read to its write's
// acknowledgement, and reads at or after the table's last acknowledged write, so what it read is
// what it changes — no write of another session in between (the frontend is the only writer of
// its replicas' tables).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "base/thread_annotations.h"
#include "base/time.h"
#include "frontend/pgwire/query_handler.h"
#include "frontend/server/live_catalog.h"
#include "frontend/server/replica_driver.h"
#include "frontend/server/statement_executor.h"
#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"

namespace tandem::frontend {

class TableWriters {
 public:
  TableWriters(LiveCatalog& catalog, ReplicaDriver& driver) : catalog_(catalog), driver_(driver) {}

  // Runs `statement` (an InsertStmt, UpdateStmt or DeleteStmt of `sql`): its CommandComplete tag
  // ("INSERT 0 3"), or the error. Raises session.last_write to the write's time.
  sql::SqlResult<std::string> Run(const pg_query::Node& statement, std::string_view sql,
                                  SessionState& session);
  // The latest time a write this frontend acknowledged was at (0: none since it started).
  Time last_write() const { return last_write_.load(); }

 private:
  struct Table {
    Mutex mu;
    Time last_write TANDEM_GUARDED_BY(mu) = 0;
  };
  std::shared_ptr<Table> TableOf(const std::string& id);

  LiveCatalog& catalog_;
  ReplicaDriver& driver_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<Table>> tables_ TANDEM_GUARDED_BY(mu_);
  std::atomic<Time> last_write_{0};
};

}  // namespace tandem::frontend
