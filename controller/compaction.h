// The compaction policy: what a controller may let a replica compact or drop, and the commands
// that do it (DESIGN §2 "frontier": an AllowCompaction to a time lets reads before it go; to the
// empty frontier, a drop).
//
// Only an index compacts. A source u<n> stands for its source index s<n> (controller/history.h),
// so compacting or dropping the source is compacting or dropping that index; anything else of the
// history — a view, a pending source, an id it never made — is refused before anything is sent,
// with the index to use instead. A drop removes the index on the replica; the history then prunes
// the dataflow whose last index it was (History::Prune) and the write ledger forgets the tables
// that went with it (ForgetTables): Session::Record does both.
//
// A one-shot read (DESIGN §8) is no state a history replays: its CreateDataflow and the drop of
// its transient result are sent, never recorded (controller/one_shot.h, IsOneShot).
#pragma once

#include <optional>
#include <string>

#include "base/time.h"
#include "controller/history.h"

namespace tandem::controller {

// The index a compaction or drop of `id` applies to: a source's own index when create-source made
// it (History::SourceIndex), else `id`.
std::string CompactionTarget(const History& h, const std::string& id);

// Why `id` cannot be dropped (`compaction` unset) or compacted to `compaction`: it is no index
// of the history. The reason names what `id` is and the command to run instead. nullopt: an
// index.
std::optional<std::string> NotAnIndex(const History& h, const std::string& id,
                                      std::optional<Time> compaction);

// AllowCompaction of `index` up to `t` (REQUIRES: t <= kMaxTime), canonical (history.h).
pb::Command AllowCompaction(const std::string& index, Time t);
// AllowCompaction of `index` to the empty frontier: its drop, canonical.
pb::Command Drop(const std::string& index);

}  // namespace tandem::controller
