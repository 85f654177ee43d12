#include "frontend/server/table_writes.h"

#include <algorithm>

#include "frontend/plan/dml.h"
#include "frontend/server/driver_waits.h"
#include "frontend/server/sql_answers.h"
#include "frontend/server/sql_reads.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

namespace pb = ipc::pb;

std::shared_ptr<TableWriters::Table> TableWriters::TableOf(const std::string& id) {
  MutexLock lock(mu_);
  auto& t = tables_[id];
  if (!t) t = std::make_shared<Table>();
  return t;
}

namespace {

// The rows of a read, each repeated per its count.
std::vector<pb::Row> Expand(const pb::Rows& rows) {
  std::vector<pb::Row> out;
  for (const auto& r : rows.rows()) {
    for (std::uint64_t i = 0; i < r.count(); ++i) out.push_back(r.row());
  }
  return out;
}

}  // namespace

sql::SqlResult<std::string> TableWriters::Run(const pg_query::Node& statement, std::string_view sql,
                                              SessionState& session) {
  const std::shared_ptr<const Catalog> catalog = catalog_.Snapshot();
  auto dml = plan::PlanDml(statement, *catalog, sql);
  if (!dml.ok()) return dml.error();
  if (const auto generators = GeneratorsRead(*catalog, dml->rows.import_objects);
      !generators.empty()) {
    return sql::SqlError(sqlstate::kFeatureNotSupported,
                         "a write to table " + dml->object + " cannot read the generator source " +
                             *generators.begin() +
                             ": a generator's times are its own ticks, not the table's epoch "
                             "milliseconds");
  }
  const auto deadline = DriverClock::now() + session.statement_timeout;

  const std::shared_ptr<Table> table = TableOf(dml->table_id);
  MutexLock writer(table->mu);
  // What this statement reads is at or after every write acknowledged to the table (and the
  // session's own): nothing written since can be missed.
  ReadTime time;
  // (Never before time 1: the one-row collection's row is at 1, sql_executor.cc.)
  time.floor = std::max({session.last_write, table->last_write, last_write_.load(), Time{1}});

  std::vector<pb::Row> rows;
  if (auto constant = plan::EvaluateConstant(dml->rows)) {
    if (!constant->ok()) return constant->error();
    rows = std::move(**constant);
  } else {
    auto read = ReadRelation(driver_, nullptr, session.cancel, *catalog, dml->rows, time, deadline);
    if (!read.ok()) return read.error();
    rows = Expand(read->rows);
    time.floor = std::max(time.floor, read->timestamp);
  }

  std::vector<pb::Row> existing;
  const std::vector<pb::Row> keys = plan::KeysToCheck(*dml, rows);
  if (!keys.empty()) {
    const CatalogObject* object = catalog->FindObject(dml->object);
    const auto indexes = catalog->IndexesOn(dml->object);
    if (!object || indexes.empty()) {
      return sql::SqlError(sqlstate::kInternalError,
                           "table " + dml->object + " has no index to check its keys in");
    }
    PeekRequest request;
    request.index = indexes.front()->id;  // the default index: keyed by the primary key
    request.keys = keys;
    request.time = time;
    request.tables = {dml->table_id};
    request.deadline = deadline;
    auto answer = AwaitDriver<PeekAnswer>(
        session.cancel, driver_, deadline,
        [&](Done<PeekAnswer> done) { return driver_.Peek(std::move(request), std::move(done)); });
    if (!answer.ok()) return DriverError(answer.status(), "checking the keys written");
    if (answer->response.has_error()) return ReadError(answer->response.error());
    existing = Expand(answer->response.rows());
  }

  auto write = plan::BuildWrite(*dml, rows, existing);
  if (!write.ok()) return write.error();
  if (write->updates.empty()) return plan::CommandTag(*dml, write->count);

  WriteRequest request;
  request.write.set_id(dml->table_id);
  for (auto& u : write->updates) *request.write.add_updates() = std::move(u);
  request.deadline = deadline;
  CancelToken not_cancelable;  // a write sent is not undone: its outcome is waited for
  auto written = AwaitDriver<WriteAnswer>(
      not_cancelable, driver_, deadline,
      [&](Done<WriteAnswer> done) { return driver_.Write(std::move(request), std::move(done)); },
      /*cancelable=*/false);
  if (!written.ok()) return DriverError(written.status(), "writing to " + dml->object);
  table->last_write = std::max(table->last_write, written->time);
  session.last_write = std::max(session.last_write, written->time);
  for (Time seen = last_write_.load();
       seen < written->time && !last_write_.compare_exchange_weak(seen, written->time);) {
  }
  return plan::CommandTag(*dml, write->count);
}

}  // namespace tandem::frontend
