#include "frontend/server/sql_reads.h"

#include <deque>

#include "frontend/server/driver_waits.h"
#include "frontend/server/sql_answers.h"

namespace tandem::frontend {

std::set<std::string> TablesRead(const Catalog& catalog, const std::vector<std::string>& objects) {
  std::set<std::string> tables, seen;
  std::deque<std::string> todo(objects.begin(), objects.end());
  while (!todo.empty()) {
    const std::string name = std::move(todo.front());
    todo.pop_front();
    if (!seen.insert(name).second) continue;
    const CatalogObject* o = catalog.FindObject(name);
    if (!o) continue;
    if (o->kind == ObjectKind::kTable) tables.insert(o->id);
    for (const auto& d : o->depends_on) todo.push_back(d);
  }
  return tables;
}

sql::SqlResult<ReadResult> ReadRelation(ReplicaDriver& driver, CancelToken& cancel,
                                        const Catalog& catalog,
                                        const plan::PlannedRelation& relation, const ReadTime& time,
                                        DriverClock::time_point deadline) {
  const std::set<std::string> tables = TablesRead(catalog, relation.import_objects);
  Result<PeekAnswer> answer = Status::Internal("not read");
  bool peek = false;
  if (auto p = plan::AsPeek(relation, catalog)) {
    PeekRequest request;
    request.index = p->index_id;
    request.keys = std::move(p->keys);
    request.mfp = std::move(p->mfp);
    request.finishing = std::move(p->finishing);
    request.time = time;
    request.tables = tables;
    request.deadline = deadline;
    peek = true;
    answer = AwaitDriver<PeekAnswer>(cancel, driver, deadline, [&](Done<PeekAnswer> done) {
      return driver.Peek(std::move(request), std::move(done));
    });
  } else {
    OneShotRequest request;
    request.debug_name = "sql one-shot";
    request.imports = relation.imports;
    request.plan = relation.plan;
    const auto arity = static_cast<std::uint32_t>(relation.columns.size());
    for (std::uint32_t i = 0; i < arity; ++i) request.key.push_back(i);
    request.finishing = relation.finishing;
    request.time = time;
    request.tables = tables;
    request.deadline = deadline;
    answer = AwaitDriver<PeekAnswer>(cancel, driver, deadline, [&](Done<PeekAnswer> done) {
      return driver.OneShot(std::move(request), std::move(done));
    });
  }
  if (!answer.ok()) return DriverError(answer.status(), "reading");
  if (answer->response.has_error()) return ReadError(answer->response.error());
  ReadResult out;
  out.rows = std::move(*answer->response.mutable_rows());
  out.timestamp = answer->timestamp;
  out.peek = peek;
  return out;
}

}  // namespace tandem::frontend
