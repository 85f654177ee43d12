// TopK (workers/README.md "Operators"): per group of the group key columns, the rows at positions
// [offset, offset + limit) in a peek's finishing order (workers/peek.h FinishingLess: the order_by
// columns, then the whole row), counting multiplicities; rows with a count <= 0 take no position.
// Exchanges by the group key; keeps per group every row with its exact count and the window it
// emitted last, and emits the difference between the old and the new window of each group that a
// time touched. Errors pass through unchanged.
#pragma once

#include <memory>

#include "ipc/codec.h"
#include "workers/operators/node.h"

namespace tandem::workers {

std::unique_ptr<Node> MakeTopK(Node* input, const ipc::pb::Plan::TopK& top_k);

}  // namespace tandem::workers
