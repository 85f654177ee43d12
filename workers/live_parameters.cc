#include "workers/live_parameters.h"

#include "base/log.h"
#include "workers/peek.h"
#include "workers/subscriptions.h"

namespace tandem::workers {

LiveParameters LiveParameters::Parse(const ipc::pb::UpdateConfiguration& update) {
  LiveParameters p;
  for (const auto& [k, v] : update.params()) {
    if (k == "log_level") {
      if (auto level = ParseLogLevel(v); level.ok()) p.log_level = *level;
    }
    if (k == "debug_abort_worker") p.abort_worker = ParseRole(v);
    if (const auto bytes = ParseMaxResultSize(k, v)) p.max_result_size = bytes;
    if (const auto bytes = ParseSubscribeBatchBytes(k, v)) p.subscribe_batch_bytes = bytes;
  }
  return p;
}

}  // namespace tandem::workers
