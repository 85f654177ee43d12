#include "shm/publisher.h"

#include <algorithm>
#include <limits>

#include "base/check.h"
#include "shm/spine.h"

namespace tandem::shm {

namespace {

std::uint64_t ListBytes(std::size_t count) {
  return offsetof(BatchListData, batches) + sizeof(std::uint64_t) * std::max<std::size_t>(count, 1);
}

}  // namespace

Result<std::unique_ptr<Publisher>> Publisher::Attach(Segment* segment, std::uint32_t ordinal) {
  Registry registry(segment);
  TANDEM_RETURN_IF_ERROR(registry.ClaimSide(ordinal, Side::kPublisher));
  return std::unique_ptr<Publisher>(new Publisher(segment, ordinal));
}

Publisher::Publisher(Segment* segment, std::uint32_t ordinal)
    : segment_(segment),
      registry_(segment),
      ordinal_(ordinal),
      thread_token_(CurrentThreadToken()),
      wake_(&registry_.row(ordinal).wake) {}

Publisher::~Publisher() { registry_.ReleaseSide(ordinal_, Side::kPublisher); }

void Publisher::CheckThread() const {
  TANDEM_CHECK(CurrentThreadToken() == thread_token_,
               "a Publisher is used only by the thread that attached it");
}

Result<Publisher::LocalSlot*> Publisher::Local(const PublishedRef& ref) {
  auto it = slots_.find(ref.index);
  if (it == slots_.end() || !(it->second.key == ref.key)) {
    return Status::NotFound(ref.key.ToString() + " is not published by row " +
                            std::to_string(ordinal_));
  }
  if (it->second.unpublished) {
    return Status::FailedPrecondition(ref.key.ToString() + " was unpublished");
  }
  return &it->second;
}

Result<PublishedRef> Publisher::BindSlot(const SlotKey& key) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(std::uint32_t index,
                          registry_.FindOrCreate(ordinal_, key, Side::kPublisher));
  PublishedRef ref{index, key};
  if (slots_.count(index)) return ref;
  SlotData& s = Data(index);
  RaiseAtomic(s.own_frontier, key.as_of);
  // The reading side's hold (interactive's, or in solo mode the solo runtime's own reader, which
  // follows the slot like a peer: its waiting peeks and one-shot imports hold it the same way).
  RaiseAtomic(s.peer_hold, key.as_of);
  s.flags.fetch_or(kSlotFilled);
  slots_.emplace(index, LocalSlot{key, {}, false, {}, {}});
  AdvanceSince(index);
  Notify(index, key);
  return ref;
}

Status Publisher::Append(const PublishedRef& ref, UpdateBuffer updates, Frontier new_upper) {
  return AppendImpl(ref, &updates, new_upper, false);
}

Status Publisher::AppendOrKeep(const PublishedRef& ref, UpdateBuffer* updates, Frontier new_upper,
                               bool retry) {
  if (retry) {
    TANDEM_ASSIGN_OR_RETURN(LocalSlot * local, Local(ref));
    CompactSpine(ref.index, *local);
  }
  return AppendImpl(ref, updates, new_upper, retry);
}

Status Publisher::AppendImpl(const PublishedRef& ref, UpdateBuffer* updates, Frontier new_upper,
                             bool retry) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(LocalSlot * local, Local(ref));
  SlotData& s = Data(ref.index);
  const Frontier upper = Frontier::FromRaw(s.upper.load());
  if (new_upper < upper) {
    return Status::InvalidArgument(ref.key.ToString() + ": upper would regress from " +
                                   upper.ToString() + " to " + new_upper.ToString());
  }
  const Frontier since = Frontier::FromRaw(s.since.load());
  for (std::size_t i = 0; i < updates->size(); ++i) {
    const Time t = updates->time(i);
    // A retry may carry times its failed attempt already advanced to since.
    const bool advanced = retry && !since.empty() && t <= since.time();
    if (!upper.LessEqual(t) || !(new_upper.Greater(t) || advanced)) {
      return Status::InvalidArgument(ref.key.ToString() + ": update at time " + std::to_string(t) +
                                     " outside [" + upper.ToString() + ", " + new_upper.ToString() +
                                     ")");
    }
  }

  if (!updates->empty()) {
    const std::uint64_t appended = updates->size();
    // Reserve the new list first (room for the built batch; merges after it only shrink the
    // spine), so no later step can fail in a way that leaves half a change behind.
    auto list_offset = segment_->Allocate(ListBytes(local->spine.size() + 1), "a batch list");
    if (!list_offset.ok()) return Stalled(ref.index, list_offset.status());
    auto built = BuildBatchInPlace(*segment_, *updates, since);
    if (!built.ok()) {
      segment_->Deallocate(*list_offset);
      return Stalled(ref.index, built.status());
    }
    updates->Clear();
    PendingSpine pending{local->spine, {}};
    if (*built != 0) {
      pending.spine.push_back(SpineBatchAt(*built));
      pending.fresh.push_back(*built);
    }
    MergeSpine(ref.index, *local, pending, appended);
    if (SameBatches(pending.spine, local->spine)) {
      segment_->Deallocate(*list_offset);  // everything cancelled and no merge ended
    } else {
      TANDEM_RETURN_IF_ERROR(
          InstallSpine(ref.index, *local, std::move(pending.spine), *list_offset));
    }
  }
  s.flags.fetch_and(~kSlotStalled, std::memory_order_relaxed);
  // After the list: a reader that sees the new upper also sees every batch below it.
  s.upper.store(new_upper.raw(), std::memory_order_seq_cst);
  Notify(ref.index, ref.key);
  AdvanceSince(ref.index);
  CollectGarbage();
  return Status::Ok();
}

void Publisher::CompactSpine(std::uint32_t index, LocalSlot& local) {
  if (local.spine.empty()) return;
  SlotData& s = Data(index);
  const Frontier since = Frontier::FromRaw(s.since.load());
  std::vector<BatchView> inputs;
  std::uint64_t bytes = 0;
  for (const SpineBatch& b : local.spine) {
    inputs.emplace_back(segment_->At<BatchHeader>(b.offset));
    bytes += b.bytes;
  }
  auto list_offset = segment_->Allocate(ListBytes(1), "a batch list");
  if (!list_offset.ok()) return;
  auto merged = MergeBatches(*segment_, inputs, since);
  std::vector<SpineBatch> spine;
  if (merged.ok() && *merged != 0) spine.push_back(SpineBatchAt(*merged));
  if (!merged.ok() || (!spine.empty() && spine[0].bytes >= bytes)) {  // no room, or no gain
    if (!spine.empty()) segment_->Deallocate(*merged);
    segment_->Deallocate(*list_offset);
    return;
  }
  ++stats_.merges;
  s.merges.fetch_add(1, std::memory_order_relaxed);
  stats_.merges_running -= local.merges.size();
  local.merges.clear();  // their inputs are retired now
  TANDEM_CHECK(InstallSpine(index, local, std::move(spine), *list_offset).ok(),
               "installing a compacted spine failed");
  CollectGarbage();
}

namespace {

// Input updates a running merge reads per append beyond twice the updates appended, so that
// merges end while nothing is appended too, and small merges end in the append that starts them.
constexpr std::uint64_t kMinMergeFuel = 4096;

}  // namespace

bool Publisher::SameBatches(const std::vector<SpineBatch>& a, const std::vector<SpineBatch>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](const SpineBatch& x, const SpineBatch& y) { return x.offset == y.offset; });
}

void Publisher::MergeSpine(std::uint32_t index, LocalSlot& local, PendingSpine& pending,
                           std::uint64_t appended) {
  // The fuel: the policy folds a running merge of S input updates into a newer merge only once
  // the batches appended after it hold at least S/2 updates (then S <= 2 * folded), and a batch
  // holds at most the updates appended into it; so reading two input updates per update appended
  // ends every merge before the policy needs its batch. Each worker's merges thus cost in
  // proportion to what it appends, step by step, instead of one step paying for a whole level.
  const std::uint64_t fuel = 2 * appended + kMinMergeFuel;
  for (const auto& job : local.merges) stats_.merge_reads += job->merger->Work(fuel);
  for (std::size_t j = 0; j < local.merges.size();) {
    if (local.merges[j]->merger->Done() && EndMerge(index, local, pending, j)) continue;
    ++j;
  }
  const Frontier since = Frontier::FromRaw(Data(index).since.load());
  // Entries before `floor` wait for a running merge among them to be done.
  std::size_t floor = 0;
  for (;;) {
    const std::vector<SpineEntry> entries = Entries(local, pending.spine);
    std::vector<std::uint64_t> sizes;
    for (std::size_t e = floor; e < entries.size(); ++e) sizes.push_back(entries[e].updates);
    const std::optional<std::size_t> start = SpineMergeStart(sizes);
    if (!start) return;
    const std::size_t first = floor + *start;
    // The new merge reads the batches of the running merges in its suffix, so they end first.
    // One not done yet is waited for (the coming appends' fuel ends it; the policy is asked again
    // about the entries newer than it) — unless the batches newer than it already hold half its
    // input, which the fuel above rules out unless merges consolidated: then it ends now.
    std::optional<std::size_t> wait;
    std::uint64_t newer = 0;
    for (std::size_t e = entries.size(); e-- > first;) {
      MergeJob* job = entries[e].job;
      if (job != nullptr && !job->merger->Done()) {
        if (2 * newer < job->merger->input_updates()) {
          wait = e;
          break;
        }
        stats_.merge_reads += job->merger->Work(std::numeric_limits<std::uint64_t>::max());
      }
      newer += entries[e].updates;
    }
    if (wait) {
      floor = *wait + 1;
      continue;
    }
    bool ended = false;
    for (std::size_t e = first; e < entries.size(); ++e) {
      if (entries[e].job == nullptr) continue;
      const auto j = static_cast<std::size_t>(
          std::find_if(local.merges.begin(), local.merges.end(),
                       [&](const auto& m) { return m.get() == entries[e].job; }) -
          local.merges.begin());
      if (!EndMerge(index, local, pending, j)) return;  // no room: a later append retries
      ended = true;
    }
    if (ended) continue;  // ask again: consolidation may have left them smaller
    auto job = std::make_unique<MergeJob>();
    std::vector<BatchView> views;
    for (std::size_t i = entries[first].first; i < pending.spine.size(); ++i) {
      job->inputs.push_back(pending.spine[i].offset);
      views.emplace_back(segment_->At<BatchHeader>(pending.spine[i].offset));
    }
    job->merger = std::make_unique<BatchMerger>(std::move(views), since);
    stats_.merge_reads += job->merger->Work(fuel);
    local.merges.push_back(std::move(job));
    ++stats_.merges_running;
    if (local.merges.back()->merger->Done() &&
        !EndMerge(index, local, pending, local.merges.size() - 1))
      return;
  }
}

std::vector<Publisher::SpineEntry> Publisher::Entries(const LocalSlot& local,
                                                      const std::vector<SpineBatch>& spine) const {
  std::vector<SpineEntry> out;
  for (std::size_t i = 0; i < spine.size();) {
    MergeJob* job = nullptr;
    for (const auto& j : local.merges) {
      if (j->inputs.front() == spine[i].offset) job = j.get();
    }
    if (job == nullptr) {
      out.push_back({i, spine[i].updates, nullptr});
      ++i;
      continue;
    }
    const std::size_t n = job->inputs.size();
    for (std::size_t k = 0; k < n; ++k) {
      TANDEM_CHECK(i + k < spine.size() && spine[i + k].offset == job->inputs[k],
                   "a running merge's inputs are consecutive batches of the spine");
    }
    out.push_back({i, job->merger->input_updates(), job});
    i += n;
  }
  return out;
}

bool Publisher::EndMerge(std::uint32_t index, LocalSlot& local, PendingSpine& pending,
                         std::size_t j) {
  MergeJob& job = *local.merges[j];
  auto merged = job.merger->Finish(*segment_);
  if (!merged.ok()) return false;
  const auto first =
      std::find_if(pending.spine.begin(), pending.spine.end(),
                   [&](const SpineBatch& b) { return b.offset == job.inputs.front(); });
  const auto at = static_cast<std::size_t>(first - pending.spine.begin());
  for (std::size_t k = 0; k < job.inputs.size(); ++k) {
    TANDEM_CHECK(at + k < pending.spine.size() && pending.spine[at + k].offset == job.inputs[k],
                 "a running merge's inputs are consecutive batches of the spine");
  }
  // Inputs built in this call were never seen by a reader: freed now. The others are retired by
  // the install of the pending spine (freed once no reader can see them).
  for (const std::uint64_t input : job.inputs) {
    if (auto it = std::find(pending.fresh.begin(), pending.fresh.end(), input);
        it != pending.fresh.end()) {
      pending.fresh.erase(it);
      segment_->Deallocate(input);
    }
  }
  std::vector<SpineBatch> spine(pending.spine.begin(), first);
  if (*merged != 0) {
    spine.push_back(SpineBatchAt(*merged));
    pending.fresh.push_back(*merged);
  }
  spine.insert(spine.end(), first + static_cast<std::ptrdiff_t>(job.inputs.size()),
               pending.spine.end());
  pending.spine = std::move(spine);
  ++stats_.merges;
  Data(index).merges.fetch_add(1, std::memory_order_relaxed);
  --stats_.merges_running;
  local.merges.erase(local.merges.begin() + static_cast<std::ptrdiff_t>(j));
  return true;
}

Publisher::SpineBatch Publisher::SpineBatchAt(std::uint64_t offset) const {
  const BatchView view(segment_->At<BatchHeader>(offset));
  return {offset, view.update_count(), view.total_bytes()};
}

Status Publisher::Stalled(std::uint32_t index, Status why) {
  if (why.code() == StatusCode::kResourceExhausted) {
    Data(index).flags.fetch_or(kSlotStalled, std::memory_order_relaxed);
  }
  return why;
}

Status Publisher::InstallSpine(std::uint32_t index, LocalSlot& local, std::vector<SpineBatch> spine,
                               std::uint64_t list_offset) {
  SlotData& s = Data(index);
  const std::uint64_t old_list = s.list.load();
  const std::uint64_t version = s.list_version.load() + 1;
  auto* list = segment_->At<BatchListData>(list_offset);
  list->version = version;
  list->count = spine.size();
  std::uint64_t updates = 0, bytes = 0;
  for (std::size_t i = 0; i < spine.size(); ++i) {
    list->batches[i] = spine[i].offset;
    updates += spine[i].updates;
    bytes += spine[i].bytes;
  }
  // Publication order matters to readers (see reader.h): list, then version.
  s.list.store(list_offset, std::memory_order_seq_cst);
  s.list_version.store(version, std::memory_order_seq_cst);
  s.updates.store(updates, std::memory_order_relaxed);
  s.batches.store(spine.size(), std::memory_order_relaxed);
  s.bytes.store(bytes, std::memory_order_relaxed);
  if (old_list != 0) retired_.push_back({index, old_list, version});
  for (const SpineBatch& b : local.spine) {
    const bool kept = std::any_of(spine.begin(), spine.end(),
                                  [&](const SpineBatch& n) { return n.offset == b.offset; });
    if (!kept) retired_.push_back({index, b.offset, version});
  }
  local.spine = std::move(spine);
  return Status::Ok();
}

Status Publisher::AllowCompaction(const PublishedRef& ref, Frontier frontier) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(LocalSlot * local, Local(ref));
  SlotData& s = Data(ref.index);
  RaiseAtomic(s.own_frontier, frontier.raw());
  if (frontier.empty()) {
    Unpublish(ref.index, *local);
  } else {
    AdvanceSince(ref.index);
  }
  CollectGarbage();
  return Status::Ok();
}

Status Publisher::HoldForImport(const PublishedRef& ref, Time at) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(LocalSlot * local, Local(ref));
  if (!since(ref).LessEqual(at)) {
    return Status::InvalidArgument(ref.key.ToString() + ": cannot hold at " + std::to_string(at) +
                                   ", since is " + since(ref).ToString() + " already");
  }
  local->import_holds.insert(at);
  PublishImportHolds(ref.index, *local);
  return Status::Ok();
}

Status Publisher::MoveImportHold(const PublishedRef& ref, Time from, Time to) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(LocalSlot * local, Local(ref));
  auto it = local->import_holds.find(from);
  if (it == local->import_holds.end() || to < from) {
    return Status::InvalidArgument(ref.key.ToString() + ": no import hold at " +
                                   std::to_string(from) + " to move to " + std::to_string(to));
  }
  local->import_holds.erase(it);
  local->import_holds.insert(to);
  PublishImportHolds(ref.index, *local);
  return Status::Ok();
}

Status Publisher::ReleaseImportHold(const PublishedRef& ref, Time at) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(LocalSlot * local, Local(ref));
  auto it = local->import_holds.find(at);
  if (it == local->import_holds.end()) {
    return Status::InvalidArgument(ref.key.ToString() + ": no import hold at " +
                                   std::to_string(at));
  }
  local->import_holds.erase(it);
  PublishImportHolds(ref.index, *local);
  return Status::Ok();
}

Frontier Publisher::import_hold(const PublishedRef& ref) const {
  return Frontier::FromRaw(Data(ref.index).import_hold.load());
}

void Publisher::PublishImportHolds(std::uint32_t index, const LocalSlot& local) {
  SlotData& s = Data(index);
  s.import_hold.store(local.import_holds.empty() ? Frontier::kEmptyRaw
                                                 : *local.import_holds.begin());
  s.importers.store(local.import_holds.size());
  if (!local.unpublished) AdvanceSince(index);
}

std::vector<BatchView> Publisher::Batches(const PublishedRef& ref) const {
  CheckThread();
  std::vector<BatchView> out;
  auto it = slots_.find(ref.index);
  if (it == slots_.end() || !(it->second.key == ref.key)) return out;
  out.reserve(it->second.spine.size());
  for (const SpineBatch& b : it->second.spine) {
    out.emplace_back(segment_->At<BatchHeader>(b.offset));
  }
  return out;
}

void Publisher::AdvanceSince(std::uint32_t index) {
  SlotData& s = Data(index);
  const Frontier target =
      Min(Min(Frontier::FromRaw(s.own_frontier.load()), Frontier::FromRaw(s.peer_hold.load())),
          Frontier::FromRaw(s.import_hold.load()));
  // Both empty means dropped and released: nothing is left to read, keep since where it was.
  if (target.empty()) return;
  if (RaiseAtomic(s.since, target.raw()) < target.raw()) Notify(index, slots_.at(index).key);
}

void Publisher::Unpublish(std::uint32_t index, LocalSlot& local) {
  SlotData& s = Data(index);
  s.flags.fetch_or(kSlotUnpublished, std::memory_order_seq_cst);
  s.flags.fetch_and(~kSlotStalled, std::memory_order_relaxed);  // nothing waits for a dropped slot
  const std::uint64_t version = s.list_version.load() + 1;
  const std::uint64_t old_list = s.list.load();
  s.list.store(0, std::memory_order_seq_cst);
  s.list_version.store(version, std::memory_order_seq_cst);
  if (old_list != 0) retired_.push_back({index, old_list, version});
  for (const SpineBatch& b : local.spine) retired_.push_back({index, b.offset, version});
  local.spine.clear();
  stats_.merges_running -= local.merges.size();
  local.merges.clear();
  local.unpublished = true;
  s.updates.store(0);
  s.batches.store(0);
  s.bytes.store(0);
  Notify(index, local.key);
}

void Publisher::Maintain() {
  CheckThread();
  for (auto& [index, local] : slots_) {
    if (local.unpublished) continue;
    AdvanceSince(index);
    // A slot that stopped appending still ends its running merges (the minimum fuel per call).
    if (!local.merges.empty()) {
      auto list_offset = segment_->Allocate(ListBytes(local.spine.size()), "a batch list");
      if (!list_offset.ok()) {  // no room to end one: they still progress
        for (const auto& job : local.merges) stats_.merge_reads += job->merger->Work(kMinMergeFuel);
        continue;
      }
      PendingSpine pending{local.spine, {}};
      MergeSpine(index, local, pending, 0);
      if (SameBatches(pending.spine, local.spine)) {
        segment_->Deallocate(*list_offset);
      } else {
        TANDEM_CHECK(InstallSpine(index, local, std::move(pending.spine), *list_offset).ok(),
                     "installing a merged spine failed");
      }
    }
  }
  CollectGarbage();
}

std::uint64_t Publisher::OldestAnnounced(std::uint32_t index) {
  std::uint64_t oldest = Data(index).reader_version.load(std::memory_order_seq_cst);
  if (reader_table_) {
    oldest = std::min(oldest, reader_table_->OldestAnnounced(ReaderTarget(ordinal_, index)));
  }
  return oldest;
}

void Publisher::CollectGarbage() {
  // The announcements of each slot with retired memory, loaded once per pass and after every
  // retirement in retired_ (P3 needs the loads to follow the list installs that retired them).
  oldest_announced_.clear();
  auto oldest = [this](std::uint32_t index) {
    for (const auto& [slot, version] : oldest_announced_) {
      if (slot == index) return version;
    }
    oldest_announced_.emplace_back(index, OldestAnnounced(index));
    return oldest_announced_.back().second;
  };
  std::size_t kept = 0;
  for (const Retired& r : retired_) {
    if (oldest(r.slot) < r.retired_at) {
      retired_[kept++] = r;
    } else {
      segment_->Deallocate(r.offset);
      ++stats_.freed;
    }
  }
  retired_.resize(kept);
  stats_.retired_pending = kept;

  for (auto it = slots_.begin(); it != slots_.end();) {
    const std::uint32_t index = it->first;
    const bool releasable = it->second.unpublished &&
                            (Data(index).flags.load() & kSlotHoldReleased) &&
                            std::none_of(retired_.begin(), retired_.end(),
                                         [index](const Retired& r) { return r.slot == index; }) &&
                            OldestAnnounced(index) == kReaderIdle;
    if (releasable) {
      registry_.Free(ordinal_, index);
      ++stats_.slots_freed;
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
}

void Publisher::Notify(std::uint32_t index, const SlotKey& key) {
  wake_.Notify(ChangedSlot{key.id.Pack(), key.as_of, index, 0});
}

Frontier Publisher::upper(const PublishedRef& ref) const {
  return Frontier::FromRaw(Data(ref.index).upper.load());
}
Frontier Publisher::since(const PublishedRef& ref) const {
  return Frontier::FromRaw(Data(ref.index).since.load());
}
std::size_t Publisher::batch_count(const PublishedRef& ref) const {
  auto it = slots_.find(ref.index);
  return it == slots_.end() ? 0 : it->second.spine.size();
}

std::vector<std::uint64_t> Publisher::SpineShape(const PublishedRef& ref) const {
  std::vector<std::uint64_t> shape;
  auto it = slots_.find(ref.index);
  if (it == slots_.end() || !(it->second.key == ref.key)) return shape;
  for (const SpineEntry& e : Entries(it->second, it->second.spine)) shape.push_back(e.updates);
  return shape;
}

}  // namespace tandem::shm
