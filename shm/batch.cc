#include "shm/batch.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "base/check.h"
#include "shm/key_index.h"

namespace tandem::shm {

namespace {

std::uint64_t Align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

bool InRange(std::uint64_t at, std::uint64_t bytes, std::uint64_t total) {
  return at <= total && bytes <= total - at;
}

}  // namespace

BatchView::Search BatchView::Seek(std::string_view key) const {
  const std::uint32_t n = key_count();
  if (n == 0) return {0, false};
  const std::uint64_t skip = h_->key_prefix_skip;
  if (skip > 0) {
    // Every key starts with these bytes: a probe that does not sorts before or after them all.
    const int c = key.substr(0, skip).compare(this->key(0).substr(0, skip));
    if (c < 0) return {0, false};
    if (c > 0) return {n, false};
  }
  const std::uint64_t window = KeyWindow(key, skip);
  const auto* windows = Col<std::uint64_t>(h_->key_index_at);
  std::uint32_t lo = static_cast<std::uint32_t>(KeyIndexLowerBound(windows, n, window));
  // Keys before lo sort before the probe and keys with a greater window after it; those whose
  // window equals the probe's are told apart by memcmp (usually one, when the probe is there).
  if (lo == n || windows[lo] != window) return {lo, false};
  if (!(this->key(lo) < key)) return {lo, true};
  // key(lo) < key: gallop over the run of equal windows, then search in between.
  std::uint32_t step = 1;
  while (lo + step < n && windows[lo + step] == window && this->key(lo + step) < key) {
    lo += step;
    step *= 2;
  }
  std::uint32_t hi =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(n, std::uint64_t{lo} + step));
  // key(lo) < key <= key(hi) (or hi == n)
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    (this->key(mid) < key ? lo : hi) = mid;
  }
  return {hi, hi < n && windows[hi] == window};
}

std::uint32_t BatchView::LowerBound(std::string_view key) const { return Seek(key).at; }

std::uint32_t BatchView::Find(std::string_view key) const {
  const Search s = Seek(key);
  return s.may_equal && this->key(s.at) == key ? s.at : key_count();
}

Status BatchView::Validate(std::uint64_t allocation_bytes) const {
  const BatchHeader& h = *h_;
  if (allocation_bytes < sizeof(BatchHeader) || h.magic != kBatchMagic) {
    return Status::Corruption("batch: bad magic");
  }
  const std::uint64_t total = h.total_bytes;
  if (total > allocation_bytes || h.key_count >= UINT32_MAX || h.val_count >= UINT32_MAX ||
      h.update_count >= UINT32_MAX) {
    return Status::Corruption("batch: sizes out of range");
  }
  if (!InRange(h.times_at, 8 * h.update_count, total) ||
      !InRange(h.diffs_at, 8 * h.update_count, total) ||
      !InRange(h.key_offsets_at, 4 * (h.key_count + 1), total) ||
      !InRange(h.key_vals_at, 4 * (h.key_count + 1), total) ||
      !InRange(h.val_offsets_at, 4 * (h.val_count + 1), total) ||
      !InRange(h.val_updates_at, 4 * (h.val_count + 1), total)) {
    return Status::Corruption("batch: column outside its allocation");
  }
  if (h.times_at % 8 || h.diffs_at % 8 || h.key_offsets_at % 4 || h.key_vals_at % 4 ||
      h.val_offsets_at % 4 || h.val_updates_at % 4) {
    return Status::Corruption("batch: misaligned column");
  }
  const auto* ko = Col<std::uint32_t>(h.key_offsets_at);
  const auto* kv = Col<std::uint32_t>(h.key_vals_at);
  const auto* vo = Col<std::uint32_t>(h.val_offsets_at);
  const auto* vu = Col<std::uint32_t>(h.val_updates_at);
  if (!InRange(h.key_bytes_at, ko[h.key_count], total) ||
      !InRange(h.val_bytes_at, vo[h.val_count], total) || kv[h.key_count] != h.val_count ||
      vu[h.val_count] != h.update_count) {
    return Status::Corruption("batch: column lengths disagree");
  }
  for (std::uint64_t k = 0; k < h.key_count; ++k) {
    if (ko[k] > ko[k + 1] || kv[k] >= kv[k + 1]) return Status::Corruption("batch: bad key index");
  }
  for (std::uint64_t v = 0; v < h.val_count; ++v) {
    if (vo[v] > vo[v + 1] || vu[v] >= vu[v + 1]) return Status::Corruption("batch: bad val index");
  }
  // The key index: inside, and saying what the keys say (a wrong window misleads every lookup).
  if (h.key_count > 0) {
    if (h.key_index_at % 8 || !InRange(h.key_index_at, 8 * KeyIndexWords(h.key_count), total) ||
        h.key_prefix_skip > key(0).size()) {
      return Status::Corruption("batch: key index outside its allocation");
    }
    const std::string_view common = key(0).substr(0, h.key_prefix_skip);
    const auto* windows = Col<std::uint64_t>(h.key_index_at);
    for (std::uint32_t k = 0; k < h.key_count; ++k) {
      if (key(k).substr(0, h.key_prefix_skip) != common ||
          windows[k] != KeyWindow(key(k), h.key_prefix_skip)) {
        return Status::Corruption("batch: key index disagrees with key " + std::to_string(k));
      }
    }
    if (!KeyIndexLevelsConsistent(windows, h.key_count)) {
      return Status::Corruption("batch: key index levels disagree with its windows");
    }
  }
  return Status::Ok();
}

void BatchWriter::Push(std::string_view key, std::string_view val, Time time, std::int64_t diff) {
  const std::size_t keys = key_offsets_.size() - 1;
  const bool new_key = keys == 0 || key != KeyAt(keys - 1);
  if (new_key) {
    key_bytes_.append(key);
    key_offsets_.push_back(static_cast<std::uint32_t>(key_bytes_.size()));
    key_vals_.push_back(key_vals_.back());
  }
  const std::size_t vals = val_offsets_.size() - 1;
  const bool new_val = new_key || val != std::string_view(val_bytes_)
                                             .substr(val_offsets_[vals - 1],
                                                     val_offsets_[vals] - val_offsets_[vals - 1]);
  if (new_val) {
    val_bytes_.append(val);
    val_offsets_.push_back(static_cast<std::uint32_t>(val_bytes_.size()));
    val_updates_.push_back(val_updates_.back());
    ++key_vals_.back();
  }
  times_.push_back(time);
  diffs_.push_back(diff);
  ++val_updates_.back();
}

void BatchWriter::Reserve(std::size_t updates, std::size_t key_bytes, std::size_t val_bytes) {
  key_bytes_.reserve(key_bytes);
  val_bytes_.reserve(val_bytes);
  key_offsets_.reserve(updates + 1);
  key_vals_.reserve(updates + 1);
  val_offsets_.reserve(updates + 1);
  val_updates_.reserve(updates + 1);
  times_.reserve(updates);
  diffs_.reserve(updates);
}

namespace {

// What a batch holds, in the sizes its layout places: counted by ShapeSink from consolidated
// updates, or read off a BatchWriter's staging columns.
struct BatchShape {
  std::uint64_t keys = 0, vals = 0, updates = 0, key_bytes = 0, val_bytes = 0;
  Time min_time = 0, max_time = 0;
  std::string_view first_key, last_key;
};

// The header of a batch of `s`: where each column goes. InvalidArgument beyond the format.
Result<BatchHeader> LayoutOf(const BatchShape& s, Frontier since) {
  constexpr std::uint64_t kLimit = std::numeric_limits<std::uint32_t>::max() - 1;
  if (s.key_bytes > kLimit || s.val_bytes > kLimit || s.updates > kLimit) {
    return Status::InvalidArgument("batch too large for the format: " + std::to_string(s.updates) +
                                   " updates, " + std::to_string(s.key_bytes + s.val_bytes) +
                                   " bytes of rows");
  }
  BatchHeader h{};
  h.magic = kBatchMagic;
  h.key_count = s.keys;
  h.val_count = s.vals;
  h.update_count = s.updates;
  h.since = since.raw();
  h.min_time = s.min_time;
  h.max_time = s.max_time;
  std::uint64_t at = Align8(sizeof(BatchHeader));
  auto place = [&at](std::uint64_t bytes) {
    const std::uint64_t here = at;
    at = Align8(at + bytes);
    return here;
  };
  h.times_at = place(8 * s.updates);
  h.diffs_at = place(8 * s.updates);
  h.key_offsets_at = place(4 * (s.keys + 1));
  h.key_vals_at = place(4 * (s.keys + 1));
  h.val_offsets_at = place(4 * (s.vals + 1));
  h.val_updates_at = place(4 * (s.vals + 1));
  h.key_bytes_at = place(s.key_bytes);
  h.val_bytes_at = place(s.val_bytes);
  if (s.keys > 0) {
    const std::string_view first = s.first_key, last = s.last_key;
    h.key_prefix_skip = static_cast<std::uint64_t>(
        std::mismatch(first.begin(), first.begin() + std::min(first.size(), last.size()),
                      last.begin())
            .first -
        first.begin());
  }
  // The key index goes last; SealBatch moves it up to 56 bytes on to a 64-byte boundary.
  h.key_index_at = at;
  at += 8 * KeyIndexWords(h.key_count) + (h.key_count > 0 ? 56 : 0);
  h.total_bytes = at;
  return h;
}

// Completes the batch at `base` whose columns are written: builds its key index from the keys
// there and writes the header (the index on a 64-byte boundary of `base`'s address, which is the
// same boundary in every process: the segment is mapped at a page boundary).
void SealBatch(char* base, BatchHeader h) {
  if (h.key_count > 0) {
    const auto address = reinterpret_cast<std::uintptr_t>(base) + h.key_index_at;
    h.key_index_at += (64 - address % 64) % 64;
    auto* words = reinterpret_cast<std::uint64_t*>(base + h.key_index_at);
    const auto* offsets = reinterpret_cast<const std::uint32_t*>(base + h.key_offsets_at);
    const char* bytes = base + h.key_bytes_at;
    for (std::uint64_t k = 0; k < h.key_count; ++k) {
      const std::string_view key(bytes + offsets[k], offsets[k + 1] - offsets[k]);
      words[k] = KeyWindow(key, h.key_prefix_skip);
    }
    FinishKeyIndex(h.key_count, words);
  }
  std::memcpy(base, &h, sizeof h);
}

}  // namespace

Result<BatchHeader> BatchWriter::Layout(Frontier since) const {
  BatchShape s;
  s.keys = key_offsets_.size() - 1;
  s.vals = val_offsets_.size() - 1;
  s.updates = times_.size();
  s.key_bytes = key_bytes_.size();
  s.val_bytes = val_bytes_.size();
  if (!times_.empty()) {
    s.min_time = *std::min_element(times_.begin(), times_.end());
    s.max_time = *std::max_element(times_.begin(), times_.end());
  }
  if (s.keys > 0) {
    s.first_key = KeyAt(0);
    s.last_key = KeyAt(s.keys - 1);
  }
  return LayoutOf(s, since);
}

std::string_view BatchWriter::KeyAt(std::uint64_t k) const {
  return std::string_view(key_bytes_)
      .substr(key_offsets_[k], key_offsets_[k + 1] - key_offsets_[k]);
}

void BatchWriter::WriteTo(char* base, BatchHeader h) const {
  auto copy = [base](std::uint64_t to, const void* from, std::size_t bytes) {
    if (bytes) std::memcpy(base + to, from, bytes);
  };
  copy(h.times_at, times_.data(), 8 * times_.size());
  copy(h.diffs_at, diffs_.data(), 8 * diffs_.size());
  copy(h.key_offsets_at, key_offsets_.data(), 4 * key_offsets_.size());
  copy(h.key_vals_at, key_vals_.data(), 4 * key_vals_.size());
  copy(h.val_offsets_at, val_offsets_.data(), 4 * val_offsets_.size());
  copy(h.val_updates_at, val_updates_.data(), 4 * val_updates_.size());
  copy(h.key_bytes_at, key_bytes_.data(), key_bytes_.size());
  copy(h.val_bytes_at, val_bytes_.data(), val_bytes_.size());
  SealBatch(base, h);
}

Result<std::uint64_t> BatchWriter::Finish(Segment& segment, Frontier since) const {
  TANDEM_ASSIGN_OR_RETURN(const BatchHeader h, Layout(since));
  TANDEM_ASSIGN_OR_RETURN(std::uint64_t offset, segment.Allocate(h.total_bytes, "a batch"));
  WriteTo(segment.At<char>(offset), h);
  return offset;
}

Result<LocalBatch> BatchWriter::FinishLocal(Frontier since) const {
  TANDEM_ASSIGN_OR_RETURN(const BatchHeader h, Layout(since));
  LocalBatch batch(h.total_bytes);
  WriteTo(batch.data(), h);
  return batch;
}

UpdateBuffer::UpdateBuffer(const std::vector<Update>& updates) {
  std::size_t bytes = 0;
  for (const Update& u : updates) bytes += u.key.size() + u.val.size();
  Reserve(updates.size(), bytes);
  for (const Update& u : updates) Push(u.key, u.val, u.time, u.diff);
}

UpdateBuffer::UpdateBuffer(std::initializer_list<Update> updates)
    : UpdateBuffer(std::vector<Update>(updates)) {}

void UpdateBuffer::Reserve(std::size_t updates, std::size_t bytes) {
  entries_.reserve(updates);
  bytes_.reserve(bytes);
}

void UpdateBuffer::Clear() {
  entries_.clear();
  bytes_.clear();
  key_bytes_ = 0;
}

void UpdateBuffer::Push(std::string_view key, std::string_view val, Time time, std::int64_t diff) {
  entries_.push_back({bytes_.size(), static_cast<std::uint32_t>(key.size()),
                      static_cast<std::uint32_t>(val.size()), time, diff});
  bytes_.append(key);
  bytes_.append(val);
  key_bytes_ += key.size();
}

void UpdateBuffer::AdvanceTimes(Time floor) {
  for (Entry& e : entries_) e.time = std::max(e.time, floor);
}

namespace {

constexpr std::uint32_t kPrefixBytes = 16;

struct SortItem {
  // The key's first 16 bytes, zero-padded, and its length. Zero is the smallest byte, so for
  // keys of at most 16 bytes (hi, lo, len) order is exactly memcmp order (a shorter key with the
  // same padded prefix is a proper prefix); longer keys with one prefix need a full comparison.
  std::uint64_t hi, lo;
  std::uint32_t len, index;
};

// Digit d of an item's (hi, lo, len), d = 0 the most significant byte of hi, 19 the least
// significant byte of len.
std::size_t Digit(const SortItem& it, int d) {
  if (d < 16)
    return static_cast<std::size_t>(((d < 8 ? it.hi : it.lo) >> (8 * (7 - d % 8))) & 0xFF);
  return static_cast<std::size_t>((it.len >> (8 * (19 - d))) & 0xFF);
}

// Stable counting sort of `items` by digit d.
void RadixPass(std::vector<SortItem>& items, std::vector<SortItem>& scratch, int d) {
  std::size_t at[256] = {};
  for (const SortItem& it : items) ++at[Digit(it, d)];
  std::size_t sum = 0;
  for (std::size_t& a : at) sum += std::exchange(a, sum);
  for (const SortItem& it : items) scratch[at[Digit(it, d)]++] = it;
  items.swap(scratch);
}

// Items whose keys the radix sort could not tell apart.
bool SamePrefix(const SortItem& a, const SortItem& b) {
  return a.hi == b.hi && a.lo == b.lo &&
         (a.len == b.len || (a.len > kPrefixBytes && b.len > kPrefixBytes));
}

// Prefetches what visiting order[i] will need some iterations ahead: the entry kPrefetch
// ahead, its bytes half as far (by then the entry has usually arrived). Visiting a large buffer
// in sorted order is otherwise one cache miss after another.
void PrefetchSorted(const UpdateBuffer& updates, const std::vector<std::uint32_t>& order,
                    std::size_t i) {
  constexpr std::size_t kPrefetch = 16;
  if (i + kPrefetch < order.size()) updates.PrefetchEntry(order[i + kPrefetch]);
  if (i + kPrefetch / 2 < order.size()) updates.PrefetchBytes(order[i + kPrefetch / 2]);
}

}  // namespace

namespace {

// Whether `updates` are already in (key, val, time) order as they stand — a source that emits in
// key order (a generator's snapshot, the first tick of a hydration): then the order is the
// buffer's own, found in one pass, without the radix sort's two arrays of 24 bytes an update
// (the peak of a large hydration).
bool InOrder(const UpdateBuffer& updates) {
  for (std::size_t i = 1; i < updates.size(); ++i) {
    int c = updates.key(i - 1).compare(updates.key(i));
    if (c == 0) c = updates.val(i - 1).compare(updates.val(i));
    if (c > 0 || (c == 0 && updates.time(i - 1) > updates.time(i))) return false;
  }
  return true;
}

}  // namespace

SortedUpdates SortUpdates(const UpdateBuffer& updates) {
  const std::size_t n = updates.size();
  if (InOrder(updates)) {
    SortedUpdates out;
    out.order.resize(n);
    out.new_key.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      out.order[i] = static_cast<std::uint32_t>(i);
      out.new_key[i] = i == 0 || updates.key(i) != updates.key(i - 1);
    }
    return out;
  }
  std::vector<SortItem> items(n);
  SortItem varying{0, 0, 0, 0};  // bits that differ from the first item's
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view k = updates.key(i);
    SortItem& it = items[i];
    it.hi = LoadPaddedBigEndian(k.data(), k.size());
    it.lo = k.size() > 8 ? LoadPaddedBigEndian(k.data() + 8, k.size() - 8) : 0;
    it.len = static_cast<std::uint32_t>(k.size());
    it.index = static_cast<std::uint32_t>(i);
    varying.hi |= it.hi ^ items[0].hi;
    varying.lo |= it.lo ^ items[0].lo;
    varying.len |= it.len ^ items[0].len;
  }
  // LSD radix sort over the digits that vary (one equal in every item cannot reorder anything).
  std::vector<SortItem> scratch;
  for (int d = 19; d >= 0; --d) {
    if (Digit(varying, d) == 0) continue;
    if (scratch.empty()) scratch.resize(n);
    RadixPass(items, scratch, d);
  }
  SortedUpdates out;
  out.order.resize(n);
  out.new_key.assign(n, true);
  for (std::size_t i = 0; i < n; ++i) out.order[i] = items[i].index;
  // Within a run of one prefix: keys of at most 16 bytes are equal, so (val, time) orders them;
  // longer keys need the full comparison, and their key boundaries a memcmp.
  auto by_val = [&updates](std::uint32_t a, std::uint32_t b) {
    if (int c = updates.val(a).compare(updates.val(b)); c != 0) return c < 0;
    return updates.time(a) < updates.time(b);
  };
  auto by_key_val = [&](std::uint32_t a, std::uint32_t b) {
    if (int c = updates.key(a).compare(updates.key(b)); c != 0) return c < 0;
    return by_val(a, b);
  };
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && SamePrefix(items[j], items[i])) ++j;
    for (std::size_t k = i; k < j; ++k) PrefetchSorted(updates, out.order, k);
    const auto begin = out.order.begin() + static_cast<std::ptrdiff_t>(i);
    const auto end = out.order.begin() + static_cast<std::ptrdiff_t>(j);
    if (items[i].len <= kPrefixBytes) {
      std::sort(begin, end, by_val);
      for (std::size_t k = i + 1; k < j; ++k) out.new_key[k] = false;
    } else {
      std::sort(begin, end, by_key_val);
      for (std::size_t k = i + 1; k < j; ++k) {
        out.new_key[k] = updates.key(out.order[k]) != updates.key(out.order[k - 1]);
      }
    }
    i = j;
  }
  return out;
}

Result<std::uint64_t> BuildBatch(Segment& segment, UpdateBuffer updates, Frontier since) {
  return BuildBatchInPlace(segment, updates, since);
}

namespace {

// Calls sink.Push(key, val, time, diff) for `updates` in `sorted` order, consolidated: the diffs
// of each run of equal key, val and time summed, zero sums dropped, a sum beyond int64 in parts.
template <typename Sink>
void Consolidate(const UpdateBuffer& updates, const SortedUpdates& sorted, Sink& sink) {
  const std::vector<std::uint32_t>& order = sorted.order;
  auto same = [&](std::size_t j, std::uint32_t first) {
    return !sorted.new_key[j] && updates.time(order[j]) == updates.time(first) &&
           updates.val(order[j]) == updates.val(first);
  };
  for (std::size_t i = 0; i < order.size();) {
    const std::uint32_t first = order[i];
    PrefetchSorted(updates, order, i);
    Int128 sum = updates.diff(first);
    std::size_t j = i + 1;
    for (; j < order.size() && same(j, first); ++j) {
      PrefetchSorted(updates, order, j);
      sum += updates.diff(order[j]);
    }
    PushCount(sum, [&](std::int64_t part) {
      sink.Push(updates.key(first), updates.val(first), updates.time(first), part);
    });
    i = j;
  }
}

// The first pass of a build: counts what the batch will hold (the views point into the buffer).
class ShapeSink {
 public:
  void Push(std::string_view key, std::string_view val, Time time, std::int64_t) {
    const bool new_key = shape_.keys == 0 || key != shape_.last_key;
    if (new_key) {
      if (shape_.keys == 0) shape_.first_key = key;
      shape_.last_key = key;
      ++shape_.keys;
      shape_.key_bytes += key.size();
    }
    if (new_key || val != last_val_) {
      last_val_ = val;
      ++shape_.vals;
      shape_.val_bytes += val.size();
    }
    shape_.min_time = shape_.updates == 0 ? time : std::min(shape_.min_time, time);
    shape_.max_time = shape_.updates == 0 ? time : std::max(shape_.max_time, time);
    ++shape_.updates;
  }
  const BatchShape& shape() const { return shape_; }

 private:
  BatchShape shape_;
  std::string_view last_val_;
};

// The second pass: writes the same pushes straight into the columns of a batch laid out for them
// (BatchWriter::Push's encoding, without its staging copy).
class ColumnSink {
 public:
  ColumnSink(char* base, const BatchHeader& h)
      : times_(reinterpret_cast<Time*>(base + h.times_at)),
        diffs_(reinterpret_cast<std::int64_t*>(base + h.diffs_at)),
        key_offsets_(reinterpret_cast<std::uint32_t*>(base + h.key_offsets_at)),
        key_vals_(reinterpret_cast<std::uint32_t*>(base + h.key_vals_at)),
        val_offsets_(reinterpret_cast<std::uint32_t*>(base + h.val_offsets_at)),
        val_updates_(reinterpret_cast<std::uint32_t*>(base + h.val_updates_at)),
        key_bytes_(base + h.key_bytes_at),
        val_bytes_(base + h.val_bytes_at) {
    key_offsets_[0] = key_vals_[0] = val_offsets_[0] = val_updates_[0] = 0;
  }
  void Push(std::string_view key, std::string_view val, Time time, std::int64_t diff) {
    const bool new_key = keys_ == 0 || key != last_key_;
    if (new_key) {
      std::memcpy(key_bytes_ + key_offsets_[keys_], key.data(), key.size());
      key_offsets_[keys_ + 1] = key_offsets_[keys_] + static_cast<std::uint32_t>(key.size());
      key_vals_[keys_ + 1] = key_vals_[keys_];
      ++keys_;
      last_key_ = key;
    }
    if (new_key || val != last_val_) {
      std::memcpy(val_bytes_ + val_offsets_[vals_], val.data(), val.size());
      val_offsets_[vals_ + 1] = val_offsets_[vals_] + static_cast<std::uint32_t>(val.size());
      val_updates_[vals_ + 1] = val_updates_[vals_];
      ++vals_;
      ++key_vals_[keys_];
      last_val_ = val;
    }
    times_[updates_] = time;
    diffs_[updates_] = diff;
    ++updates_;
    ++val_updates_[vals_];
  }

 private:
  Time* times_;
  std::int64_t* diffs_;
  std::uint32_t *key_offsets_, *key_vals_, *val_offsets_, *val_updates_;
  char *key_bytes_, *val_bytes_;
  std::uint64_t keys_ = 0, vals_ = 0, updates_ = 0;
  std::string_view last_key_, last_val_;
};

// Advances the times of `updates` below `since` to it, sorts them and lays out their consolidated
// batch: its header (nullopt when nothing survives) and, in *sorted, the order to write it in.
Result<std::optional<BatchHeader>> LayOutBuild(UpdateBuffer& updates, Frontier since,
                                               SortedUpdates* sorted) {
  if (updates.size() >= std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument(
        "batch too large for the format: " + std::to_string(updates.size()) + " updates");
  }
  updates.AdvanceTimes(since.empty() ? kMinTime : since.time());
  *sorted = SortUpdates(updates);
  ShapeSink shape;
  Consolidate(updates, *sorted, shape);
  if (shape.shape().updates == 0) return std::optional<BatchHeader>();
  TANDEM_ASSIGN_OR_RETURN(BatchHeader h, LayoutOf(shape.shape(), since));
  return std::optional<BatchHeader>(h);
}

// Writes the batch LayOutBuild laid out at `base` (h.total_bytes of it).
void WriteBuild(const UpdateBuffer& updates, const SortedUpdates& sorted, char* base,
                const BatchHeader& h) {
  ColumnSink columns(base, h);
  Consolidate(updates, sorted, columns);
  SealBatch(base, h);
}

}  // namespace

// Builds write straight into their allocation, in two passes over the sorted updates (one counts,
// one writes): a batch never exists twice, so building the first tick of a large index (its
// hydration) needs the update buffer and the batch, not also a staging copy of the batch.
Result<std::uint64_t> BuildBatchInPlace(Segment& segment, UpdateBuffer& updates, Frontier since) {
  SortedUpdates sorted;
  TANDEM_ASSIGN_OR_RETURN(const std::optional<BatchHeader> h, LayOutBuild(updates, since, &sorted));
  if (!h) return std::uint64_t{0};
  TANDEM_ASSIGN_OR_RETURN(const std::uint64_t offset, segment.Allocate(h->total_bytes, "a batch"));
  WriteBuild(updates, sorted, segment.At<char>(offset), *h);
  return offset;
}

Result<std::optional<LocalBatch>> BuildLocalBatch(UpdateBuffer updates, Frontier since) {
  SortedUpdates sorted;
  TANDEM_ASSIGN_OR_RETURN(const std::optional<BatchHeader> h, LayOutBuild(updates, since, &sorted));
  if (!h) return std::optional<LocalBatch>();
  LocalBatch batch(h->total_bytes);
  WriteBuild(updates, sorted, batch.data(), *h);
  return std::optional<LocalBatch>(std::move(batch));
}

Result<std::uint64_t> MergeBatches(Segment& segment, std::span<const BatchView> batches,
                                   Frontier since) {
  BatchMerger merger(std::vector<BatchView>(batches.begin(), batches.end()), since);
  merger.Work(std::numeric_limits<std::uint64_t>::max());
  return merger.Finish(segment);
}

BatchMerger::BatchMerger(std::vector<BatchView> inputs, Frontier since)
    : inputs_(std::move(inputs)), since_(since), floor_(since.empty() ? kMinTime : since.time()) {
  std::uint64_t key_bytes = 0, val_bytes = 0;
  for (const BatchView& b : inputs_) {
    input_updates_ += b.update_count();
    key_bytes += b.key_bytes();
    val_bytes += b.val_bytes();
  }
  writer_.Reserve(input_updates_, key_bytes, val_bytes);
  cursor_ = std::make_unique<MergeCursor>(inputs_);
}

BatchMerger::~BatchMerger() = default;

bool BatchMerger::Done() const { return !cursor_->Valid(); }

std::uint64_t BatchMerger::Work(std::uint64_t fuel) {
  std::uint64_t read = 0;
  for (MergeCursor& c = *cursor_; c.Valid() && read < fuel; c.Next()) {
    group_.clear();
    c.ForEachUpdate([&](Time t, std::int64_t d) { group_.emplace_back(std::max(t, floor_), d); });
    read += group_.size();
    std::sort(group_.begin(), group_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < group_.size();) {
      Int128 sum = 0;
      std::size_t j = i;
      for (; j < group_.size() && group_[j].first == group_[i].first; ++j) sum += group_[j].second;
      PushCount(sum,
                [&](std::int64_t part) { writer_.Push(c.key(), c.val(), group_[i].first, part); });
      i = j;
    }
  }
  return read;
}

Result<std::uint64_t> BatchMerger::Finish(Segment& segment) const {
  TANDEM_CHECK(Done(), "a merge is finished only once every input update is read");
  if (writer_.update_count() == 0) return std::uint64_t{0};
  return writer_.Finish(segment, since_);
}

MergeCursor::MergeCursor(std::span<const BatchView> batches)
    : batches_(batches), pos_(batches.size()) {
  for (std::size_t b = 0; b < batches_.size(); ++b) {
    pos_[b].k = 0;
    pos_[b].kend = batches_[b].key_count();
    pos_[b].v = pos_[b].kend > 0 ? batches_[b].vals_begin(0) : 0;
  }
  Settle();
}

void MergeCursor::SeekKey(std::string_view key) {
  for (std::size_t b = 0; b < batches_.size(); ++b) {
    const BatchView& bv = batches_[b];
    const std::uint32_t k = bv.Find(key);
    Pos& p = pos_[b];
    if (k < bv.key_count()) {
      p.k = k;
      p.kend = k + 1;
      p.v = bv.vals_begin(k);
    } else {
      p.k = p.kend = 0;
    }
  }
  Settle();
}

void MergeCursor::SeekAtLeast(std::string_view key) {
  for (std::size_t b = 0; b < batches_.size(); ++b) {
    const BatchView& bv = batches_[b];
    Pos& p = pos_[b];
    p.k = bv.LowerBound(key);
    p.kend = bv.key_count();
    p.v = p.k < p.kend ? bv.vals_begin(p.k) : 0;
  }
  Settle();
}

void MergeCursor::Settle() {
  at_group_.clear();
  valid_ = false;
  for (std::size_t b = 0; b < batches_.size(); ++b) {
    const Pos& p = pos_[b];
    if (p.k >= p.kend) continue;
    const std::string_view k = batches_[b].key(p.k);
    const std::string_view v = batches_[b].val(p.v);
    int c = valid_ ? k.compare(key_) : -1;
    if (c == 0) c = v.compare(val_);
    if (c < 0) {
      key_ = k;
      val_ = v;
      valid_ = true;
      at_group_.clear();
      at_group_.push_back(b);
    } else if (c == 0) {
      at_group_.push_back(b);
    }
  }
}

void MergeCursor::Advance(std::size_t b) {
  Pos& p = pos_[b];
  const BatchView& bv = batches_[b];
  if (++p.v < bv.vals_end(p.k)) return;
  if (++p.k < p.kend) p.v = bv.vals_begin(p.k);
}

void MergeCursor::Next() {
  for (std::size_t b : at_group_) Advance(b);
  Settle();
}

Int128 MergeCursor::CountAt(Time t) const {
  Int128 count = 0;
  for (std::size_t b : at_group_) {
    const BatchView& bv = batches_[b];
    const std::uint32_t v = pos_[b].v;
    // Times ascend within a value: stop at the first one beyond t.
    for (std::uint32_t u = bv.updates_begin(v), e = bv.updates_end(v); u < e && bv.time(u) <= t;
         ++u) {
      count += bv.diff(u);
    }
  }
  return count;
}

}  // namespace tandem::shm
