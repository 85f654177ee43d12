// Reduce (workers/README.md "Operators"): one output row per group with a positive total
// multiplicity — the group key columns, then each aggregate (COUNT, SUM, MIN, MAX, COUNT(c),
// COUNT(DISTINCT c), AVG, ANY, ALL). Exchanges by the group key;
// keeps per group the exact multiplicities (base/count.h) and aggregate state, and emits the
// retraction of a group's old output row and its new one whenever they differ.
#pragma once

#include <memory>

#include "base/time.h"
#include "ipc/codec.h"
#include "workers/operators/node.h"

namespace tandem::workers {

// `input_schema`: the input's columns (an aggregate's result depends on its column's type).
std::unique_ptr<Node> MakeReduce(Node* input, const ipc::pb::Plan::Reduce& reduce,
                                 const ipc::pb::Schema& input_schema);

class ImportedIndex;
// The same Reduce over an imported index whose key is the group key, computed from the imported
// arrangement in place (no exchange, no state of its own): workers/operators/reduce.cc.
std::unique_ptr<Node> MakeArrangedReduce(ImportedIndex* index, const ipc::pb::Plan::Reduce& reduce,
                                         const ipc::pb::Schema& input, Time as_of, Frontier until);

}  // namespace tandem::workers
