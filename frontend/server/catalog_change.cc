#include "frontend/server/catalog_change.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "frontend/server/driver_waits.h"
#include "frontend/server/sql_answers.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

namespace {

bool IsDrop(const ipc::pb::Command& c) {
  return c.has_allow_compaction() && c.allow_compaction().frontier().elements().empty();
}

}  // namespace

sql::SqlResult<DdlOutcome> ApplyCatalogChange(LiveCatalog& live, ReplicaDriver& driver,
                                              const CatalogChange& change,
                                              DriverClock::time_point deadline) {
  MutexLock ddl(live.ddl_mutex());
  const std::shared_ptr<const Catalog> before = live.Snapshot();
  auto next = std::make_shared<Catalog>(*before);
  for (const auto& [index, t] : live.RecordedCompactions()) next->RecordCompaction(index, t);
  auto outcome = change(*next);
  if (!outcome.ok()) return outcome;
  if (Status s = live.Save(*next); !s.ok()) {
    return sql::SqlError(sqlstate::kIoError, "could not save the catalog: " + s.message());
  }
  if (!outcome->commands.empty()) {
    SubmitRequest request;
    request.commands = outcome->commands;
    request.deadline = deadline;
    CancelToken not_cancelable;
    auto submitted = AwaitDriver<SubmitAnswer>(
        not_cancelable, driver, deadline,
        [&](Done<SubmitAnswer> done) { return driver.Submit(std::move(request), std::move(done)); },
        /*cancelable=*/false);
    const bool drops_only = std::all_of(outcome->commands.begin(), outcome->commands.end(), IsDrop);
    if (!submitted.ok() && !drops_only) {
      // Withdrawn: the catalog before, with the ids the change handed out kept handed out.
      auto withdrawn = std::make_shared<Catalog>(*before);
      withdrawn->ReserveIdsBelow(next->next_id());
      if (Status s = live.Save(*withdrawn); !s.ok()) {
        // The file holds the change; the replicas will be replayed it after a restart. Not
        // publishing it now keeps this run consistent with what the client is told.
        spdlog::error("could not save the catalog after withdrawing a change: {}", s.message());
      }
      live.Publish(std::move(withdrawn));
      return DriverError(submitted.status(), outcome->command_tag);
    }
    if (!submitted.ok()) {
      spdlog::warn("{}: no replica confirmed the drop ({}); replicas are replayed without it",
                   outcome->command_tag, submitted.status().message());
    }
  }
  live.Publish(std::move(next));
  return outcome;
}

}  // namespace tandem::frontend
