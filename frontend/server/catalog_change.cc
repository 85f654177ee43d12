#include "frontend/server/catalog_change.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "controller/compaction.h"
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
  next->RecordCompactions(live.RecordedCompactions());
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
      std::vector<std::string> handed_out;
      for (std::uint64_t n = before->next_id(); n < next->next_id(); ++n) {
        handed_out.push_back("u" + std::to_string(n));
      }
      withdrawn->Retire(handed_out);
      // The file holds the change now: it must not outlive this run once the client is told it
      // failed. A disk that takes the change but not its withdrawal a moment later is not one
      // this frontend can go on with: it stops (its orchestrator restarts it) rather than answer.
      Status saved = live.Save(*withdrawn);
      for (int retry = 0; !saved.ok() && retry < 3; ++retry) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100 << retry));
        saved = live.Save(*withdrawn);
      }
      if (!saved.ok()) {
        spdlog::critical("could not save the catalog after withdrawing {}: {}",
                         outcome->command_tag, saved.message());
        std::abort();
      }
      live.Publish(std::move(withdrawn));
      // A replica that did take a create (one refused it, or it confirmed too late) drops it
      // now; one that is down is replayed the history without it (and reconciliation drops it
      // there: its ids are retired, so the replica is still this frontend's to reconcile).
      SubmitRequest drops;
      drops.record = false;
      for (const auto& c : outcome->commands) {
        if (!c.has_create_dataflow()) continue;
        for (const auto& x : c.create_dataflow().desc().index_exports()) {
          drops.commands.push_back(controller::Drop(x.id()));
        }
      }
      if (!drops.commands.empty()) {
        drops.deadline = std::min(deadline, DriverClock::now() + std::chrono::seconds(5));
        CancelToken none;
        const auto until = drops.deadline;
        (void)AwaitDriver<SubmitAnswer>(
            none, driver, until,
            [&](Done<SubmitAnswer> done) {
              return driver.Submit(std::move(drops), std::move(done));
            },
            /*cancelable=*/false);
      }
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
