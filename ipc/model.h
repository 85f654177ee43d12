// Protocol facts (DESIGN §2–§3) that every side needs the same way: what a command means, not how
// it is encoded. One place, so that the runtime, the supervisor, the tools and the tests agree.
#pragma once

#include <string>
#include <vector>

#include "base/time.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// A protocol frontier as a Frontier: no element is the empty frontier ("closed"; for compaction
// "drop"), else its one time. REQUIRES: at most one element (validation checks it).
inline Frontier FrontierOf(const pb::Frontier& f) {
  return f.elements().empty() ? Frontier::Empty() : Frontier::At(f.elements(0));
}

// AllowCompaction with the empty frontier: drop the index.
inline bool IsDrop(const pb::Command& c) {
  return c.has_allow_compaction() && c.allow_compaction().frontier().elements().empty();
}

// Every collection a dataflow creates: its source imports, builds and index exports, in that
// order.
inline std::vector<std::string> CreatedIds(const pb::DataflowDescription& desc) {
  std::vector<std::string> ids;
  for (const auto& s : desc.source_imports()) ids.push_back(s.id());
  for (const auto& b : desc.objects_to_build()) ids.push_back(b.id());
  for (const auto& e : desc.index_exports()) ids.push_back(e.id());
  return ids;
}

}  // namespace tandem::ipc
