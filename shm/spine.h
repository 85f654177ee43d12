// The spine's merge policy: which batches of a slot merge, and when (DESIGN §4 "Batches").
//
// A pure function of the batches' sizes, kept apart from the code that merges (Publisher) the way
// differential dataflow keeps its spine's policy apart from its batches, so that the policy can be
// tested alone on size lists and changed without touching the publishing protocol.
//
// The invariant: oldest first, each batch holds MORE than twice the updates of the next newer one
// (so at least twice). Then a spine of n updates has at most floor(log2 n) + 1
// batches, a reader merges O(log n) cursors, and each update is merged O(log n) times amortised.
//
// The policy: after a batch is appended, merge the shortest suffix of newest batches whose
// combined size the next older batch exceeds by more than twice, i.e. fold in older batches one by
// one while the older one holds at most twice what has been folded so far. Pairwise merging
// would fold exactly those batches one after another; merging them at once allocates, writes and
// re-reads no intermediate batch. Sizes are counts before consolidation, so a merged batch can
// come out smaller than estimated: the caller asks again after every merge (a smaller result only
// strengthens the invariant with its older neighbour, so one merge per append is the rule).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace tandem::shm {

// `updates`: the update counts of a spine's batches, oldest first, each >= 1 (a batch with nothing
// left is never kept). Returns the index of the oldest batch of the suffix to merge into one now
// (at least two batches), or nullopt when there is nothing to merge.
std::optional<std::size_t> SpineMergeStart(std::span<const std::uint64_t> updates);

// True when `updates` (oldest first) satisfies the invariant: each more than twice the next newer.
bool SpineIsGeometric(std::span<const std::uint64_t> updates);

}  // namespace tandem::shm
