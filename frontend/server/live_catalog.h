// LiveCatalog: the frontend's one catalog while it runs (DESIGN §15) — durable in its data dir
// (catalog/catalog_store.h), read by every SQL thread as an immutable snapshot, changed by one DDL
// statement at a time, and the history the replica driver replays (it is the driver's
// ReplayHistory).
//
// A DDL statement, with ddl_mutex() held throughout (DDL is serialised; reads never wait for it):
//   1. copies Snapshot(), applies RecordedCompactions() and its change to the copy;
//   2. Save(copy): durable before anything is sent — so an id handed out is never handed out
//      again, even if the frontend dies right after sending it;
//   3. sends the copy's new commands to the replicas (ReplicaDriver::Submit);
//   4. Publish(copy) once they were accepted — or, when a replica refused them, Publish(and Save)
//      the old catalog with the copy's next id (Catalog::ReserveIdsBelow): nothing changed, and a
//      replica that got the refused command can tell it from another controller's (Dropped).
// Only Publish moves Version(), and only one DDL statement runs at a time, so the driver's record
// of a command it got accepted (ReplicaDriver's `submitted_`) lasts until the Publish that holds
// it — never cleared by an unrelated change.
//
// Compactions the driver sends (ReplicaDriver::Options::on_compaction, on its thread) are kept
// in a small map beside the catalog (RecordCompaction never blocks on a DDL statement's fsync);
// the next DDL statement writes them into the catalog (step 1), so that a materialized view made
// later starts where its inputs are still readable (Catalog::ReadableFrom).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "frontend/catalog/catalog.h"
#include "frontend/catalog/catalog_store.h"
#include "frontend/server/replay_history.h"

namespace tandem::frontend {

class LiveCatalog final : public ReplayHistory {
 public:
  // Opens (locks) the store in `data_dir` and loads its catalog: CatalogStore's errors.
  static Result<std::unique_ptr<LiveCatalog>> Open(const std::string& data_dir);

  // The catalog now. Immutable; valid for as long as it is held.
  std::shared_ptr<const Catalog> Snapshot() const;

  // Held by a DDL statement from its Snapshot to its Publish.
  Mutex& ddl_mutex() { return ddl_mu_; }
  // The compactions the driver sent since they were last written into a published catalog.
  std::map<std::string, std::uint64_t> RecordedCompactions() const;
  // Makes `next` durable. REQUIRES: ddl_mutex() held.
  Status Save(const Catalog& next);
  // `next` (saved) becomes the catalog: Snapshot() and the history replayed. REQUIRES: ddl_mutex().
  void Publish(std::shared_ptr<const Catalog> next);

  // ReplicaDriver::Options::on_compaction.
  void RecordCompaction(const std::string& index, std::uint64_t t);

  // ReplayHistory.
  std::vector<pb::Command> Commands() const override;
  std::vector<std::string> LiveIndexIds() const override;
  std::uint64_t Version() const override;
  bool Dropped(std::string_view index_id) const override;

 private:
  explicit LiveCatalog(CatalogStore store, Catalog catalog);

  const CatalogStore store_;
  Mutex ddl_mu_;
  mutable Mutex mu_;
  std::shared_ptr<const Catalog> catalog_ TANDEM_GUARDED_BY(mu_);
  std::uint64_t version_ TANDEM_GUARDED_BY(mu_) = 1;
  std::map<std::string, std::uint64_t> compactions_ TANDEM_GUARDED_BY(mu_);
};

}  // namespace tandem::frontend
