// Publisher: maintenance worker i's side of registry row i (DESIGN §4, §4.1).
//
// Thread safety: exactly one thread — the one that called Attach — may use a Publisher; every
// call checks it (a second thread is a bug and aborts). Attach refuses a row that already has a
// live publisher.
//
// What the publisher owns: the slots it publishes (upper, since, own frontier, batch lists and
// batches) and their memory. It never blocks on a reader: readers announce what they use, and the
// publisher frees a retired batch only once no announcement can still see it.
//
// Invariants (checked or maintained here):
//  P1  upper and since of a slot only rise; since = max(since, min(own frontier, peer hold)).
//  P2  a batch list, once installed, and every batch in it, is never written again.
//  P3  a retired batch or list is freed only when the slot's reading thread, and every entry of
//      the reader table that targets the slot (local readers, tools: shm/reader_table.h), is
//      idle or announces a version >= the version that retired it. The supervisor clears the
//      entries of readers that died, so a dead reader pins nothing for long.
//  P5  the publisher never writes an announcement (only its reader does; layout.h).
//  P4  the publisher compacts (advances times in merges) only to the published since, which is
//      never past the peer hold nor any import hold, so a read the reader has accepted, and the
//      progress of an importer in this runtime, stay exact (I1, DESIGN §8).
//  P6  a running (fueled) merge reads only batches of the slot's installed or pending spine, a
//      consecutive run no other merge reads; whatever removes them from the spine (the merge's
//      own end, CompactSpine, Unpublish) ends or drops the merge in the same call, so a merge
//      never reads a retired batch (the merger is not a reader: no announcement protects it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "shm/batch.h"
#include "shm/reader_table.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "shm/wake.h"

namespace tandem::shm {

// A published slot as the publisher refers to it.
struct PublishedRef {
  std::uint32_t index = 0;
  SlotKey key;
};

struct PublisherStats {
  std::uint64_t merges = 0;           // merges ended (their batch in the spine, or merged again)
  std::uint64_t merge_reads = 0;      // input updates read by the spine's merges so far
  std::uint64_t merges_running = 0;   // merges started and not ended, over all slots
  std::uint64_t retired_pending = 0;  // retired allocations not yet freed
  std::uint64_t freed = 0;            // retired allocations freed so far
  std::uint64_t slots_freed = 0;
};

class Publisher {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Publisher>> Attach(Segment* segment,
                                                                 std::uint32_t ordinal);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Binds `key` (from CreateDataflow with as_of = key.as_of) to a slot of this row, published
  // from now on: binds or creates its slot, sets the own frontier to as_of and registers the
  // reading runtime's peer hold at as_of unless that runtime already placed it (holds only rise, so
  // placing is an atomic max). In solo mode there is no reading runtime: the peer hold is the empty
  // frontier from the start, and the solo runtime's own reader follows the slot (and releases it on
  // drop) like a peer would. Idempotent.
  Result<PublishedRef> BindSlot(const SlotKey& key);

  // Adds `updates` (times in [upper, new_upper)) as one batch and advances upper to new_upper.
  // Nothing changes on error: InvalidArgument for times outside the interval or a regressing
  // upper, ResourceExhausted (with sizes) when the segment is full — then the slot is flagged
  // kSlotStalled until an Append succeeds.
  Status Append(const PublishedRef& ref, UpdateBuffer updates, Frontier new_upper);
  // The same, but *updates is consumed only on success: on failure they are left for a retry,
  // with their times below since advanced to it. Pass `retry` when they come back from such a
  // failure: times in [new_upper, since] are then accepted as advanced. Before a retry, it first
  // merges the slot's spine at the current since when that frees room (compaction the controller
  // allowed while the index waited); running merges are dropped then (their inputs are merged).
  Status AppendOrKeep(const PublishedRef& ref, UpdateBuffer* updates, Frontier new_upper,
                      bool retry);

  // The controller's AllowCompaction on maintenance's stream: raises the own frontier. The empty
  // frontier unpublishes the slot (its memory is freed once the reader released its hold and no
  // reader can see it).
  Status AllowCompaction(const PublishedRef& ref, Frontier frontier);

  // Holds of this runtime's own importers (Maintained dataflows that import the index, DESIGN
  // §8): the slot compacts to min(own frontier, peer hold, every import hold). Holds are a
  // multiset: each Hold is undone by one Release (or moved by Move) of the same time.
  // InvalidArgument, changing nothing, when `at` is below since (what is compacted already cannot
  // be held: validation refuses such an import) or, for Move, when `to` is below `from`.
  Status HoldForImport(const PublishedRef& ref, Time at);
  Status MoveImportHold(const PublishedRef& ref, Time from, Time to);
  Status ReleaseImportHold(const PublishedRef& ref, Time at);
  Frontier import_hold(const PublishedRef& ref) const;

  // The slot's batches as published now, oldest first, for an importer on this thread: it reads
  // them in place. Valid until this thread's next call that changes the slot or frees memory
  // (Append*, AllowCompaction, Maintain). Empty once unpublished.
  std::vector<BatchView> Batches(const PublishedRef& ref) const;

  // Re-reads peer holds and advances since where they allow, fuels running merges (so a slot that
  // stopped appending ends them too), frees retired memory no reader can see, and frees slots
  // that are unpublished and released. Cheap; call it regularly.
  void Maintain();

  Frontier upper(const PublishedRef& ref) const;
  Frontier since(const PublishedRef& ref) const;
  std::size_t batch_count(const PublishedRef& ref) const;
  // The spine as its merge policy sees it (shm/spine.h), oldest first: each batch's updates, with
  // a running merge's batches counted as the one batch it will become (its input updates).
  std::vector<std::uint64_t> SpineShape(const PublishedRef& ref) const;
  PublisherStats stats() const { return stats_; }
  std::uint32_t ordinal() const { return ordinal_; }
  // The replica's reader table, whose local readers' announcements P3 honours too (nullptr: none,
  // e.g. a segment made by a test without a supervisor). Outlives the publisher.
  void SetReaderTable(const ReaderTable* table) { reader_table_ = table; }

 private:
  struct SpineBatch {
    std::uint64_t offset;
    std::uint64_t updates;
    std::uint64_t bytes;
  };
  SpineBatch SpineBatchAt(std::uint64_t offset) const;  // sizes read from the batch's header
  // A merge the policy started and appends fuel (fueled merging, as differential dataflow's
  // spine does): `inputs` are a run of consecutive batches of the spine (installed, or pending in
  // the call that started it), which stay there, readable, until the merge ends and its batch
  // replaces them.
  struct MergeJob {
    std::vector<std::uint64_t> inputs;  // offsets, oldest first
    std::unique_ptr<BatchMerger> merger;
  };
  struct LocalSlot {
    SlotKey key;
    std::vector<SpineBatch> spine;  // oldest first, shaped by shm/spine.h's merge policy
    bool unpublished = false;
    std::multiset<Time> import_holds;               // SlotData::import_hold is their minimum
    std::vector<std::unique_ptr<MergeJob>> merges;  // running, oldest run first; disjoint runs
  };
  // One element of the spine as the merge policy sees it: a batch, or a running merge's run of
  // batches counted as the one batch it will become.
  struct SpineEntry {
    std::size_t first = 0;  // position of its (first) batch in the spine
    std::uint64_t updates = 0;
    MergeJob* job = nullptr;
  };
  // The spine an append or Maintain is about to install, and which of its batches were made in
  // this call (never installed, so never seen by a reader: freed at once when merged away).
  struct PendingSpine {
    std::vector<SpineBatch> spine;
    std::vector<std::uint64_t> fresh;
  };
  struct Retired {
    std::uint32_t slot;
    std::uint64_t offset;
    std::uint64_t retired_at;  // first list version that no longer references it
  };

  Publisher(Segment* segment, std::uint32_t ordinal);
  void CheckThread() const;
  Result<LocalSlot*> Local(const PublishedRef& ref);
  SlotData& Data(std::uint32_t index) const { return registry_.slot(ordinal_, index); }
  void AdvanceSince(std::uint32_t index);
  // Stores the minimum and count of the slot's import holds, then advances since.
  void PublishImportHolds(std::uint32_t index, const LocalSlot& local);
  Status AppendImpl(const PublishedRef& ref, UpdateBuffer* updates, Frontier new_upper, bool retry);
  // Merges the whole spine into one batch at the current since, if there is room for it and it
  // is smaller; the old batches are retired (freed once no reader can see them). Running merges
  // are abandoned then (their inputs are retired).
  void CompactSpine(std::uint32_t index, LocalSlot& local);
  // After an append of `appended` updates into `pending` (or 0 from Maintain): fuels the running
  // merges, ends the ones done, and starts the merges the policy asks for, waiting for a running
  // merge the policy would fold into a new one. Without room to end a merge, leaves it for later.
  void MergeSpine(std::uint32_t index, LocalSlot& local, PendingSpine& pending,
                  std::uint64_t appended);
  static bool SameBatches(const std::vector<SpineBatch>& a, const std::vector<SpineBatch>& b);
  std::vector<SpineEntry> Entries(const LocalSlot& local,
                                  const std::vector<SpineBatch>& spine) const;
  // Replaces the run of local.merges[j] (done) in `pending` by its batch and forgets the merge;
  // false (nothing changed) without room for the batch.
  bool EndMerge(std::uint32_t index, LocalSlot& local, PendingSpine& pending, std::size_t j);
  // Flags the slot kSlotStalled when `why` is ResourceExhausted; returns `why`.
  Status Stalled(std::uint32_t index, Status why);
  Status InstallSpine(std::uint32_t index, LocalSlot& local, std::vector<SpineBatch> spine,
                      std::uint64_t list_offset);
  void Unpublish(std::uint32_t index, LocalSlot& local);
  void Notify(std::uint32_t index, const SlotKey& key);
  void CollectGarbage();
  // The oldest list version a reader of slot `index` announces (kReaderIdle: none). What version
  // r retired is visible while this is below r. Writes nothing: only a reader writes its
  // announcement.
  std::uint64_t OldestAnnounced(std::uint32_t index);

  Segment* segment_;
  Registry registry_;
  std::uint32_t ordinal_;
  std::uint64_t thread_token_;
  WakeSender wake_;
  std::map<std::uint32_t, LocalSlot> slots_;
  std::vector<Retired> retired_;
  PublisherStats stats_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> oldest_announced_;  // CollectGarbage's
  const ReaderTable* reader_table_ = nullptr;
};

}  // namespace tandem::shm
