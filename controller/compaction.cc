#include "controller/compaction.h"

namespace tandem::controller {

std::string CompactionTarget(const History& h, const std::string& id) {
  if (h.KindOf(id).kind != History::IdKind::kSource) return id;
  return h.SourceIndex(id).value_or(id);
}

std::optional<std::string> NotAnIndex(const History& h, const std::string& id,
                                      std::optional<Time> compaction) {
  const auto kind = h.KindOf(id);
  std::string instead;
  if (!kind.indexes.empty()) {
    const std::string one = kind.indexes.front();
    const std::string of = kind.indexes.size() == 1
                               ? " (the index of its dataflow)"
                               : " (its dataflow's indexes are " + JoinIds(kind.indexes) + ")";
    instead = compaction ? "; compaction applies to an index: allow-compaction " + one + " " +
                               std::to_string(*compaction) + of
                         : "; drop " + one + " instead" + of +
                               ": a dataflow, with its sources and views, goes with its last "
                               "index";
  }
  switch (kind.kind) {
    case History::IdKind::kIndex:
      return std::nullopt;
    case History::IdKind::kSource:
      return id + " is a source, not an index" + instead;
    case History::IdKind::kView:
      return id + " is a view, not an index" + instead;
    case History::IdKind::kPendingSource:
      return id + " is a pending source (nothing on the replica yet), not an index";
    case History::IdKind::kUnknown:
      break;
  }
  return id + " is not an index this controller created (state file " + h.path() + ")";
}

pb::Command AllowCompaction(const std::string& index, Time t) {
  pb::Command c;
  c.mutable_allow_compaction()->set_id(index);
  c.mutable_allow_compaction()->mutable_frontier()->add_elements(t);
  return Canonical(c);
}

pb::Command Drop(const std::string& index) {
  pb::Command c;
  c.mutable_allow_compaction()->set_id(index);
  c.mutable_allow_compaction()->mutable_frontier();
  return Canonical(c);
}

}  // namespace tandem::controller
