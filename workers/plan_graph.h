// A dataflow's plan as one worker's node graph (workers/operators/): inputs → builds → the
// collections its index exports arrange. Shared by the Maintained renderer (workers/dataflow.h)
// and one-shot dataflows (workers/one_shot.h), so both compute with the same operators.
//
// Thread safety: the graph belongs to one worker thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ipc/codec.h"
#include "workers/operators/node.h"

namespace tandem::workers {

class ImportedIndex;
class JoinNode;

// One input of the dataflow: a source import's node, or an index import's (workers/sources/
// index_import.h), read by the plan under each of `names`.
struct PlanInput {
  std::vector<std::string> names;  // a source import: its id; an index import: its id and `on`
  std::unique_ptr<Node> node;
  // An index import: the index key, by which worker i already holds exactly its keys, and the
  // index (owned by `node`). A Reduce of it whose group key is this key reads the arrangement
  // itself (workers/operators/reduce.h MakeArrangedReduce): no exchange, no state of its own.
  std::vector<std::uint32_t> arranged_by;
  ImportedIndex* index = nullptr;
};

struct PlanGraph {
  std::vector<std::unique_ptr<Node>> nodes;  // owned; the graph points into it
  // Each index export with the node of the collection it arranges, in the description's order.
  std::vector<std::pair<Node*, const ipc::pb::IndexExport*>> exports;
  // The joins (owned by `nodes`), and for each what it arranged and what it reused in place:
  // "join 1: left side its own arrangement, right side imported index s1, in place".
  std::vector<const JoinNode*> joins;
  std::vector<std::string> arrangements;
};

// Builds the graph of `desc` (already validated: every name resolves). `desc` must outlive it.
PlanGraph BuildPlanGraph(const ipc::pb::DataflowDescription& desc, std::vector<PlanInput> inputs);

}  // namespace tandem::workers
