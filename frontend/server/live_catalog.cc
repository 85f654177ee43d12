#include "frontend/server/live_catalog.h"

#include <utility>

namespace tandem::frontend {

Result<std::unique_ptr<LiveCatalog>> LiveCatalog::Open(const std::string& data_dir) {
  auto store = CatalogStore::Open(data_dir);
  if (!store.ok()) return store.status();
  auto catalog = store->Load();
  if (!catalog.ok()) return catalog.status();
  return std::unique_ptr<LiveCatalog>(new LiveCatalog(std::move(*store), std::move(*catalog)));
}

LiveCatalog::LiveCatalog(CatalogStore store, Catalog catalog)
    : store_(std::move(store)), catalog_(std::make_shared<const Catalog>(std::move(catalog))) {}

std::shared_ptr<const Catalog> LiveCatalog::Snapshot() const {
  MutexLock lock(mu_);
  return catalog_;
}

std::map<std::string, std::uint64_t> LiveCatalog::RecordedCompactions() const {
  MutexLock lock(mu_);
  return compactions_;
}

Status LiveCatalog::Save(const Catalog& next) { return store_.Save(next); }

void LiveCatalog::Publish(std::shared_ptr<const Catalog> next) {
  MutexLock lock(mu_);
  // What the published catalog holds no longer needs keeping beside it; a compaction sent since
  // the copy was made (a later time) stays.
  std::erase_if(compactions_, [&](const auto& entry) {
    return next->ReadableFrom(entry.first) >= entry.second || !next->IndexWithId(entry.first);
  });
  catalog_ = std::move(next);
  ++version_;
}

void LiveCatalog::RecordCompaction(const std::string& index, std::uint64_t t) {
  MutexLock lock(mu_);
  auto [it, inserted] = compactions_.try_emplace(index, t);
  if (!inserted && it->second < t) it->second = t;
}

std::vector<pb::Command> LiveCatalog::Commands() const { return Snapshot()->Replay(); }

std::vector<std::string> LiveCatalog::LiveIndexIds() const {
  const std::set<std::string> live = Snapshot()->LiveIndexes();
  return {live.begin(), live.end()};
}

std::uint64_t LiveCatalog::Version() const {
  MutexLock lock(mu_);
  return version_;
}

bool LiveCatalog::Dropped(std::string_view index_id) const {
  return Snapshot()->IsDroppedId(index_id);
}

}  // namespace tandem::frontend
