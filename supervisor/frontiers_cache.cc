#include "supervisor/frontiers_cache.h"

namespace tandem::supervisor {

void FrontiersCache::Record(const ipc::pb::Frontiers& frontiers, bool known) {
  const bool closed = frontiers.write().elements().empty();
  if (closed && !known) {
    latest_.erase(frontiers.id());
    return;
  }
  latest_[frontiers.id()] = frontiers;
}

}  // namespace tandem::supervisor
