// The index export (DESIGN §4): a collection arranged by its key columns, as one worker's part of
// the index it publishes into its registry row. Rows are exchanged by key, so worker i holds
// exactly the keys of row i; errors by their message, so that an error and its retraction — which
// may arise on different workers — meet and cancel in one arrangement. Errors are arranged under
// the reserved key prefix (shm::kErrorKeyPrefix), before every row.
#pragma once

#include <cstdint>
#include <vector>

#include "shm/batch.h"
#include "workers/operators/node.h"

namespace tandem::workers {

// Exchanges `delta` (every worker calls it, in the same order: it is two barriers, one when
// `partitioning` says its rows are where `key` routes them already) and encodes this worker's part
// as (key, whole row, time, diff) updates.
shm::UpdateBuffer ArrangeByKey(const TickCtx& ctx, Delta delta,
                               const std::vector<std::uint32_t>& key,
                               const Partitioning& partitioning);

// The export's tick from `node`: its arranged pull when it has one (Node::PullArranged), else
// Pull and ArrangeByKey. Either way every worker makes the same exchanges.
shm::UpdateBuffer PullIntoIndex(Node* node, const TickCtx& ctx,
                                const std::vector<std::uint32_t>& key);

}  // namespace tandem::workers
