#include "frontend/server/sql_reads.h"

#include <deque>

#include "frontend/server/driver_waits.h"
#include "frontend/server/local_reads.h"
#include "frontend/server/sql_answers.h"
#include "ipc/temporal_filter.h"

namespace tandem::frontend {

namespace {

// Every object `objects` read, themselves included, through depends_on.
std::vector<const CatalogObject*> ObjectsRead(const Catalog& catalog,
                                              const std::vector<std::string>& objects) {
  std::vector<const CatalogObject*> out;
  std::set<std::string> seen;
  std::deque<std::string> todo(objects.begin(), objects.end());
  while (!todo.empty()) {
    const std::string name = std::move(todo.front());
    todo.pop_front();
    if (!seen.insert(name).second) continue;
    const CatalogObject* o = catalog.FindObject(name);
    if (!o) continue;
    out.push_back(o);
    for (const auto& d : o->depends_on) todo.push_back(d);
  }
  return out;
}

}  // namespace

std::set<std::string> GeneratorsRead(const Catalog& catalog,
                                     const std::vector<std::string>& objects) {
  std::set<std::string> sources;
  for (const CatalogObject* o : ObjectsRead(catalog, objects)) {
    if (o->kind == ObjectKind::kSource) sources.insert(o->id);
  }
  std::set<std::string> out;
  if (sources.empty()) return out;
  for (const auto& c : catalog.history().commands()) {
    if (!c.has_create_dataflow()) continue;
    for (const auto& s : c.create_dataflow().desc().source_imports()) {
      if (!sources.count(s.id())) continue;
      if (s.source().has_counter() || s.source().has_key_value()) {
        const CatalogObject* o = catalog.ObjectWithId(s.id());
        if (o && o->name != plan::kOneRowObject) out.insert(o->name);  // closed: every time
      }
    }
  }
  return out;
}

std::set<std::string> TablesRead(const Catalog& catalog, const std::vector<std::string>& objects) {
  std::set<std::string> tables;
  for (const CatalogObject* o : ObjectsRead(catalog, objects)) {
    if (o->kind == ObjectKind::kTable) tables.insert(o->id);
  }
  return tables;
}

sql::SqlResult<ReadResult> ReadRelation(ReplicaDriver& driver, LocalReads* local,
                                        CancelToken& cancel, const Catalog& catalog,
                                        const plan::PlannedRelation& relation, const ReadTime& time,
                                        DriverClock::time_point deadline) {
  if (ipc::PlanContainsNow(relation.plan)) {
    return sql::SqlError(sqlstate::kFeatureNotSupported,
                         "tandem_now() is read only by a materialized view's temporal filter "
                         "(WHERE tandem_now() < t + INTERVAL '...'); a SELECT reads at one time: "
                         "compare with a timestamptz constant instead");
  }
  const std::set<std::string> tables = TablesRead(catalog, relation.import_objects);
  Result<PeekAnswer> answer = Status::Internal("not read");
  bool peek = false;
  if (auto p = plan::AsPeek(relation, catalog)) {
    if (local != nullptr && relation.imports.size() == 1) {
      if (auto in_place = local->TryRead(*p, relation.imports[0].schema(), time)) {
        return std::move(*in_place);
      }
    }
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
