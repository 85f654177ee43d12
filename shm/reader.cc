#include "shm/reader.h"

#include "base/check.h"
#include "base/count.h"
#include "base/error_order.h"
#include "shm/routing.h"

namespace tandem::shm {

namespace {

// Steps 1–4 of the snapshot protocol (reader.h), announcing in `announcement` (nullptr: a nested
// snapshot whose older announcement already protects anything newer, or a segment nobody
// publishes to any more).
void LoadSnapshot(const SlotData& s, std::atomic<std::uint64_t>* announcement,
                  std::uint64_t* version, std::uint64_t* list, Frontier* upper, Frontier* since,
                  std::uint32_t* flags) {
  *upper = Frontier::FromRaw(s.upper.load(std::memory_order_seq_cst));
  *version = s.list_version.load(std::memory_order_seq_cst);
  if (announcement) announcement->store(*version, std::memory_order_seq_cst);
  *list = s.list.load(std::memory_order_seq_cst);
  *since = Frontier::FromRaw(s.since.load(std::memory_order_seq_cst));
  *flags = s.flags.load(std::memory_order_seq_cst);
}

// The batches of list `list` of a slot described by `where`, checked to lie in the segment: the
// list, its count, each batch header — and, when `validate`, each batch's columns.
// `where` names the slot in an error: built only when there is one (this is every read's path).
Status LoadBatches(const Segment& segment, std::uint64_t list,
                   const std::function<std::string()>& where, bool validate,
                   std::vector<BatchView>* out) {
  if (list % alignof(BatchListData) != 0 || !segment.Contains(list, sizeof(BatchListData))) {
    return Status::Corruption(where() + "batch list offset " + std::to_string(list) +
                              " is outside the segment or misaligned");
  }
  const auto* l = segment.At<BatchListData>(list);
  const std::uint64_t count = l->count;
  if (count > kMaxBatchesPerList ||
      !segment.Contains(list, offsetof(BatchListData, batches) + 8 * count)) {
    return Status::Corruption(where() + "batch list of " + std::to_string(count) +
                              " batches does not fit the segment (at most " +
                              std::to_string(kMaxBatchesPerList) + ")");
  }
  out->reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t off = l->batches[i];
    if (off % alignof(BatchHeader) != 0 || !segment.Contains(off, sizeof(BatchHeader))) {
      return Status::Corruption(where() + "batch " + std::to_string(i) + " at offset " +
                                std::to_string(off) + " is outside the segment or misaligned");
    }
    BatchView view(segment.At<BatchHeader>(off));
    if (validate) {
      if (Status valid = view.Validate(segment.size_bytes() - off); !valid.ok()) {
        return Status::Corruption(where() + "batch " + std::to_string(i) + " at offset " +
                                  std::to_string(off) + ": " + valid.message());
      }
    } else if (!segment.Contains(off, segment.At<BatchHeader>(off)->total_bytes)) {
      return Status::Corruption(where() + "batch " + std::to_string(i) + " at offset " +
                                std::to_string(off) + " runs past the segment");
    }
    out->push_back(view);
  }
  return Status::Ok();
}

std::string SlotWhere(std::uint32_t ordinal, std::uint32_t index, const SlotKey& key) {
  return "slot " + std::to_string(ordinal) + "/" + std::to_string(index) + " (" + key.ToString() +
         "): ";
}

}  // namespace

// TakeAnnounced, validating every batch's columns when `validate` (tools, which may read a
// segment they do not trust).
Result<Snapshot> TakeAnnouncedImpl(const Segment& segment, std::uint32_t ordinal,
                                   std::uint32_t index, const SlotKey& expected,
                                   ReaderTableEntry* entry, bool validate) {
  Registry registry(const_cast<Segment*>(&segment));  // read only: a Registry writes nothing here
  if (ordinal >= registry.workers() || index >= registry.slots_per_row()) {
    return Status::InvalidArgument("no slot " + std::to_string(ordinal) + "/" +
                                   std::to_string(index));
  }
  const SlotData& s = registry.slot(ordinal, index);
  Snapshot snap = Snapshot::Announced(entry);
  // Steps 1-4 of the snapshot protocol (above), the announcement in the reader table.
  snap.upper_ = Frontier::FromRaw(s.upper.load(std::memory_order_seq_cst));
  snap.version_ = s.list_version.load(std::memory_order_seq_cst);
  entry->Announce(ReaderTarget(ordinal, index), snap.version_);
  const std::uint64_t list = s.list.load(std::memory_order_seq_cst);
  snap.since_ = Frontier::FromRaw(s.since.load(std::memory_order_seq_cst));
  snap.flags_ = s.flags.load(std::memory_order_seq_cst);
  // The slot is freed (and may be reused) only once no announcement targets it, so a slot still
  // live with our key now stays so until we go idle.
  snap.key_ = registry.KeyOf(s);
  if (s.state.load(std::memory_order_seq_cst) != static_cast<std::uint32_t>(SlotState::kLive) ||
      !(snap.key_ == expected)) {
    return Status::Unavailable(SlotWhere(ordinal, index, expected) + "changed while being read");
  }
  if (list != 0) {
    TANDEM_RETURN_IF_ERROR(LoadBatches(
        segment, list, [&] { return SlotWhere(ordinal, index, expected); }, validate,
        &snap.batches_));
  }
  return snap;
}

Result<Snapshot> TakeAnnounced(const Segment& segment, std::uint32_t ordinal, std::uint32_t index,
                               const SlotKey& expected, ReaderTableEntry* entry) {
  return TakeAnnouncedImpl(segment, ordinal, index, expected, entry, false);
}

Snapshot Snapshot::Announced(ReaderTableEntry* entry) {
  Snapshot snap;
  snap.release_ = [entry] { entry->Idle(); };
  return snap;
}

Snapshot::Snapshot(Snapshot&& other) noexcept
    : key_(other.key_),
      upper_(other.upper_),
      since_(other.since_),
      flags_(other.flags_),
      version_(other.version_),
      batches_(std::move(other.batches_)),
      release_(std::move(other.release_)) {
  other.release_ = nullptr;
}

Snapshot::~Snapshot() {
  if (release_) release_();
}

Status Snapshot::CheckReadable(Time t) const {
  if (unpublished()) return Status::NotFound(key_.ToString() + " was dropped");
  if (!filled()) {
    return Status::FailedPrecondition(key_.ToString() + " is not published yet (upper " +
                                      upper_.ToString() + ")");
  }
  if (!since_.LessEqual(t)) {
    return Status::FailedPrecondition(key_.ToString() + ": time " + std::to_string(t) +
                                      " is before since " + since_.ToString() +
                                      " (compacted; no longer exact)");
  }
  if (!upper_.Greater(t)) {
    return Status::FailedPrecondition(key_.ToString() + ": time " + std::to_string(t) +
                                      " is not complete yet (upper " + upper_.ToString() + ")");
  }
  return Status::Ok();
}

Status Snapshot::Lookup(std::string_view key, Time t, std::vector<ValueCount>* out) const {
  TANDEM_RETURN_IF_ERROR(CheckReadable(t));
  out->clear();
  MergeCursor c(batches_);
  c.SeekKey(key);
  for (; c.Valid(); c.Next()) {
    const Int128 n = c.CountAt(t);
    if (!FitsInt64(n)) return Status::OutOfRange(kMultiplicityOverflow);
    if (n != 0) out->push_back({std::string(c.val()), static_cast<std::int64_t>(n)});
  }
  return Status::Ok();
}

Status Snapshot::FirstError(Time t, std::optional<std::string>* error) const {
  error->reset();
  if (!MayHoldErrors()) return Status::Ok();
  return Scan(
      t,
      [&](std::string_view k, std::string_view, std::int64_t) {
        if (!*error || ErrorLess(k.substr(1), **error)) *error = std::string(k.substr(1));
        return true;
      },
      std::string_view(&kErrorKeyPrefix, 1));
}

bool Snapshot::MayHoldErrors() const {
  for (const BatchView& b : batches_) {
    if (b.key_count() > 0 && !b.key(0).empty() && b.key(0)[0] == kErrorKeyPrefix) return true;
  }
  return false;
}

Status Snapshot::Scan(
    Time t, const std::function<bool(std::string_view, std::string_view, std::int64_t)>& fn,
    std::string_view key_prefix) const {
  TANDEM_RETURN_IF_ERROR(CheckReadable(t));
  MergeCursor c(batches_);
  if (!key_prefix.empty()) c.SeekAtLeast(key_prefix);  // the first key with the prefix, if any
  for (; c.Valid(); c.Next()) {
    if (!c.key().starts_with(key_prefix)) break;  // past every key with the prefix
    const Int128 n = c.CountAt(t);
    if (!FitsInt64(n)) return Status::OutOfRange(kMultiplicityOverflow);
    if (n != 0 && !fn(c.key(), c.val(), static_cast<std::int64_t>(n))) break;
  }
  return Status::Ok();
}

Result<std::unique_ptr<Reader>> Reader::Attach(Segment* segment, std::uint32_t ordinal) {
  Registry registry(segment);
  TANDEM_RETURN_IF_ERROR(registry.ClaimSide(ordinal, Side::kReader));
  return std::unique_ptr<Reader>(new Reader(segment, ordinal));
}

Reader::Reader(Segment* segment, std::uint32_t ordinal)
    : segment_(segment),
      registry_(segment),
      ordinal_(ordinal),
      thread_token_(CurrentThreadToken()),
      wake_(&registry_.row(ordinal).wake) {}

Reader::~Reader() { registry_.ReleaseSide(ordinal_, Side::kReader); }

void Reader::CheckThread() const {
  TANDEM_CHECK(CurrentThreadToken() == thread_token_,
               "a Reader is used only by the thread that attached it");
}

Result<Reader::Followed*> Reader::Local(const FollowedRef& ref) {
  auto it = followed_.find(ref.index);
  if (it == followed_.end() || !(it->second.key == ref.key)) {
    return Status::NotFound(ref.key.ToString() + " is not followed by row " +
                            std::to_string(ordinal_));
  }
  return &it->second;
}

Result<FollowedRef> Reader::Follow(const SlotKey& key) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(std::uint32_t index,
                          registry_.FindOrCreate(ordinal_, key, Side::kReader));
  if (!followed_.count(index)) {
    RaiseAtomic(registry_.slot(ordinal_, index).peer_hold, key.as_of);
    followed_.emplace(index, Followed{key, 0, Frontier::At(key.as_of), {}});
  }
  return FollowedRef{index, key};
}

Status Reader::AdvanceHold(const FollowedRef& ref, Frontier frontier) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(Followed * local, Local(ref));
  SlotData& s = registry_.slot(ordinal_, ref.index);
  local->controller = Max(local->controller, frontier);
  if (frontier.empty()) {
    // Validation refuses a drop of what a one-shot imports, and peeks waiting on a dropped index
    // are answered first: nothing can still hold it.
    TANDEM_CHECK(local->read_holds.empty(), "releasing a peer hold that reads still hold");
    RaiseAtomic(s.peer_hold, frontier.raw());
    TANDEM_CHECK(local->open_snapshots == 0, "releasing a peer hold with a snapshot still open");
    s.flags.fetch_or(kSlotHoldReleased, std::memory_order_seq_cst);
    followed_.erase(ref.index);
    return Status::Ok();
  }
  PublishHold(ref.index, *local);
  return Status::Ok();
}

void Reader::PublishHold(std::uint32_t index, const Followed& local) {
  SlotData& s = registry_.slot(ordinal_, index);
  Frontier hold = local.controller;
  if (!local.read_holds.empty()) hold = Min(hold, Frontier::At(*local.read_holds.begin()));
  RaiseAtomic(s.peer_hold, hold.raw());
  s.reader_holds.store(local.read_holds.size());
}

bool Reader::HoldRead(const FollowedRef& ref, Time t) {
  CheckThread();
  auto local = Local(ref);
  TANDEM_CHECK(local.ok(), "holding a slot that is not followed");
  if (!(*local)->controller.LessEqual(t)) return false;
  (*local)->read_holds.insert(t);
  PublishHold(ref.index, **local);
  return true;
}

Frontier Reader::allowed(const FollowedRef& ref) {
  CheckThread();
  auto local = Local(ref);
  TANDEM_CHECK(local.ok(), "the frontier of a slot that is not followed");
  return (*local)->controller;
}

void Reader::ReleaseRead(const FollowedRef& ref, Time t) {
  CheckThread();
  auto local = Local(ref);
  TANDEM_CHECK(local.ok(), "releasing a read hold of a slot that is not followed");
  auto it = (*local)->read_holds.find(t);
  TANDEM_CHECK(it != (*local)->read_holds.end(), "releasing a read hold that was not placed");
  (*local)->read_holds.erase(it);
  PublishHold(ref.index, **local);
}

void Reader::MoveRead(const FollowedRef& ref, Time from, Time to) {
  CheckThread();
  TANDEM_CHECK(from <= to, "a read hold moved backwards");
  auto local = Local(ref);
  TANDEM_CHECK(local.ok(), "moving a read hold of a slot that is not followed");
  auto it = (*local)->read_holds.find(from);
  TANDEM_CHECK(it != (*local)->read_holds.end(), "moving a read hold that was not placed");
  (*local)->read_holds.erase(it);
  (*local)->read_holds.insert(to);
  PublishHold(ref.index, **local);
}

Frontier Reader::hold(const FollowedRef& ref) const {
  return Frontier::FromRaw(registry_.slot(ordinal_, ref.index).peer_hold.load());
}

Result<Snapshot> Reader::Take(const FollowedRef& ref) {
  CheckThread();
  TANDEM_ASSIGN_OR_RETURN(Followed * local, Local(ref));
  SlotData& s = registry_.slot(ordinal_, ref.index);
  Snapshot snap;
  snap.key_ = ref.key;
  std::uint64_t list = 0;
  LoadSnapshot(s, local->open_snapshots == 0 ? &s.reader_version : nullptr, &snap.version_, &list,
               &snap.upper_, &snap.since_, &snap.flags_);
  ++local->open_snapshots;
  snap.release_ = [local, &s] {
    if (--local->open_snapshots == 0)
      s.reader_version.store(kReaderIdle, std::memory_order_seq_cst);
  };
  if (list != 0) {
    const auto* l = segment_->At<BatchListData>(list);
    snap.batches_.reserve(l->count);
    for (std::uint64_t i = 0; i < l->count; ++i) {
      snap.batches_.emplace_back(segment_->At<BatchHeader>(l->batches[i]));
    }
  }
  return snap;
}

Snapshot Snapshot::OfLocal(SlotKey key, Frontier upper, Frontier since,
                           std::vector<BatchView> batches) {
  Snapshot snap;
  snap.key_ = key;
  snap.upper_ = upper;
  snap.since_ = since;
  snap.flags_ = kSlotFilled;
  snap.batches_ = std::move(batches);
  return snap;
}

std::vector<SlotInfo> Inspector::Slots() const {
  std::vector<SlotInfo> out;
  for (std::uint32_t o = 0; o < registry_.workers(); ++o) {
    for (std::uint32_t j = 0; j < registry_.slots_per_row(); ++j) {
      const SlotData& s = registry_.slot(o, j);
      if (s.state.load() != static_cast<std::uint32_t>(SlotState::kLive)) continue;
      SlotInfo info;
      info.ordinal = o;
      info.index = j;
      info.key = registry_.KeyOf(s);
      info.flags = s.flags.load();
      info.upper = Frontier::FromRaw(s.upper.load());
      info.since = Frontier::FromRaw(s.since.load());
      info.own_frontier = Frontier::FromRaw(s.own_frontier.load());
      info.peer_hold = Frontier::FromRaw(s.peer_hold.load());
      info.import_hold = Frontier::FromRaw(s.import_hold.load());
      info.importers = s.importers.load();
      info.reader_holds = s.reader_holds.load();
      info.list_version = s.list_version.load();
      info.updates = s.updates.load();
      info.batches = s.batches.load();
      info.bytes = s.bytes.load();
      info.merges = s.merges.load();
      out.push_back(info);
    }
  }
  return out;
}

Inspector::Inspector(Segment* segment, ReaderTable* table, bool post_mortem)
    : segment_(segment), registry_(segment), table_(table), post_mortem_(post_mortem) {}

Inspector::~Inspector() = default;

Result<Snapshot> Inspector::Take(std::uint32_t ordinal, std::uint32_t index) {
  if (ordinal >= registry_.workers() || index >= registry_.slots_per_row()) {
    return Status::InvalidArgument("no slot " + std::to_string(ordinal) + "/" +
                                   std::to_string(index));
  }
  const SlotData& s = registry_.slot(ordinal, index);
  const SlotKey before = registry_.KeyOf(s);
  if (!table_ && !post_mortem_) {
    return Status::FailedPrecondition(
        "reading a slot of a live replica needs its reader table (Inspector(segment, table)); a "
        "segment nobody publishes to any more is read with Inspector(segment, PostMortem{})");
  }
  if (!table_) {
    // Nobody publishes to this segment any more (its supervisor is gone): nothing is freed, so
    // nothing needs announcing; every batch is validated, so a kept segment cannot crash us.
    Snapshot snap;
    std::uint64_t list = 0;
    LoadSnapshot(s, nullptr, &snap.version_, &list, &snap.upper_, &snap.since_, &snap.flags_);
    snap.key_ = before;
    if (list != 0) {
      TANDEM_RETURN_IF_ERROR(LoadBatches(
          *segment_, list, [&] { return SlotWhere(ordinal, index, before); }, true,
          &snap.batches_));
    }
    return snap;
  }
  // A live replica: one reader-table entry per snapshot open at once, claimed when first needed
  // and kept for the next.
  if (free_entries_.empty()) {
    TANDEM_ASSIGN_OR_RETURN(auto entry, table_->Claim());
    free_entries_.push_back(entry.get());
    entries_.push_back(std::move(entry));
  }
  ReaderTableEntry* entry = free_entries_.back();
  free_entries_.pop_back();
  auto snap = TakeAnnouncedImpl(*segment_, ordinal, index, before, entry, true);
  if (!snap.ok()) {
    free_entries_.push_back(entry);  // the failed snapshot went idle already
    return snap.status();
  }
  snap->release_ = [this, entry] {
    entry->Idle();
    free_entries_.push_back(entry);
  };
  return snap;
}

}  // namespace tandem::shm
