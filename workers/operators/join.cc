#include "workers/operators/join.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "base/check.h"
#include "shm/batch.h"
#include "workers/exchange.h"
#include "workers/sources/index_import.h"

namespace tandem::workers {

const Row& KeyedUpdate::row() const {
  if (encoded.empty()) return update.row;
  if (!decoded_) decoded_ = DecodeIndexValue(encoded);
  return *decoded_;
}

namespace {

bool HasNull(const Row& row, const std::vector<std::uint32_t>& key) {
  for (std::uint32_t c : key) {
    if (row[c].index() == 0) return true;
  }
  return false;
}

KeyedUpdate Keyed(RowUpdate u, const std::vector<std::uint32_t>& key) {
  KeyedUpdate k;
  AppendKeyColumns(u.row, key, &k.key);
  k.null_key = HasNull(u.row, key);
  k.update = std::move(u);
  return k;
}

// The input arranged by its join key in this worker's memory: key → encoded row → count.
// Rows whose key has a null are never stored (they never match).
class OwnSide final : public JoinSide {
 public:
  OwnSide(Node* input, std::vector<std::uint32_t> key) : input_(input), key_(std::move(key)) {}

  void Pull(const TickCtx& ctx, std::vector<KeyedUpdate>* rows,
            std::vector<ErrorUpdate>* errors) override {
    std::vector<RowUpdate> mine = PullExchanged(input_, ctx, key_, false, errors);
    rows->reserve(rows->size() + mine.size());
    for (RowUpdate& u : mine) rows->push_back(Keyed(std::move(u), key_));
  }

  void ForEachAt(std::string_view key, Time, bool, const RowFn& fn) override {
    auto it = state_.find(key);
    if (it == state_.end()) return;
    for (const auto& [encoded, count] : it->second) fn(Decode(encoded), count);
  }

  bool EmptyAt(std::string_view key, Time, bool) override {
    return state_.find(key) == state_.end();
  }

  void Apply(const std::vector<const KeyedUpdate*>& at_t) override {
    std::string encoded;
    for (const KeyedUpdate* k : at_t) {
      if (k->null_key) continue;
      encoded.clear();
      AppendEncodedRow(k->update.row, &encoded);
      auto key = state_.find(k->key);
      if (key == state_.end()) key = state_.emplace(k->key, Rows{}).first;
      auto [row, fresh] = key->second.try_emplace(encoded, 0);
      records_ += fresh ? 1 : 0;
      row->second += k->update.diff;
      if (row->second == 0) {
        key->second.erase(row);
        --records_;
        if (key->second.empty()) state_.erase(key);
      }
    }
  }

  std::size_t records() const override { return records_; }
  std::string Describe() const override { return "its own arrangement"; }

 private:
  static Row Decode(const std::string& encoded) {
    Result<Row> row = DecodeRow(encoded);
    TANDEM_CHECK(row.ok(), "a join's own arrangement holds a row that does not decode");
    return std::move(*row);
  }
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Rows = std::map<std::string, Int128>;

  Node* input_;
  std::vector<std::uint32_t> key_;
  std::unordered_map<std::string, Rows, Hash, std::equal_to<>> state_;
  std::size_t records_ = 0;
};

// An index import arranged by exactly this side's join key: its batches, read in place. The first
// tick reads every update at or below as_of as at as_of, later ticks their own times (as the
// ImportNode does). Reads at t - 1 >= lo - 1 are exact: the importer holds the index at
// max(as_of, lo - 1) (workers/sources/index_import.h); below as_of the import is empty.
class ImportedSide final : public JoinSide {
 public:
  ImportedSide(ImportedIndex* index, std::string id, std::vector<std::uint32_t> key, Time as_of,
               Frontier until)
      : index_(index), id_(std::move(id)), key_(std::move(key)), as_of_(as_of), until_(until) {}

  void Pull(const TickCtx& ctx, std::vector<KeyedUpdate>* rows,
            std::vector<ErrorUpdate>* errors) override {
    const bool first = !started_;
    started_ = true;
    batches_.clear();
    if (const auto& error = index_->error()) {  // the import is this error at as_of, only
      if (first && until_.Greater(as_of_)) errors->push_back({*error, as_of_, 1});
      return;
    }
    batches_ = index_->Batches();
    pos_.assign(batches_.size(), 0);
    const Time lo = first ? 0 : ctx.lo;
    std::string_view last_key;
    bool last_null = false;
    ForEachUpdateIn(batches_, lo, Min(ctx.hi, until_),
                    [&](const shm::BatchView& b, std::string_view key, std::uint32_t v, Time t,
                        std::int64_t diff) {
                      t = std::max(t, as_of_);
                      if (IsErrorKey(key)) {
                        errors->push_back({std::string(key.substr(1)), t, diff});
                        return;
                      }
                      if (key.data() != last_key.data() || key.size() != last_key.size()) {
                        last_key = key;  // a key's updates come one after another
                        last_null = KeyHasNull(key);
                      }
                      KeyedUpdate k;
                      k.key = key;
                      k.update = {{}, t, diff};
                      k.encoded = b.val(v);
                      k.null_key = last_null;
                      rows->push_back(std::move(k));
                    });
  }

  void ForEachAt(std::string_view key, Time t, bool before, const RowFn& fn) override {
    if (!Readable(t, before)) return;
    for (const auto& [val, count] : Lookup(key, before ? t - 1 : t)) {
      fn(DecodeIndexValue(val), count);
    }
  }

  bool EmptyAt(std::string_view key, Time t, bool before) override {
    return !Readable(t, before) || Lookup(key, before ? t - 1 : t).empty();
  }

  std::string Describe() const override { return "imported index " + id_ + ", in place"; }

 private:
  // Below as_of the import is empty (and just before as_of is below it).
  bool Readable(Time t, bool before) const {
    return !batches_.empty() && (before ? t > as_of_ : t >= as_of_);
  }

  static bool KeyHasNull(std::string_view key) {
    Result<Row> datums = DecodeKey(key);  // a key is its columns' datums, key-encoded in order
    TANDEM_CHECK(datums.ok(), "an imported index holds a key that does not decode");
    for (const Datum& d : *datums) {
      if (d.index() == 0) return true;
    }
    return false;
  }

  // The values of `key` with a non-zero count as of t, consolidated over the batches. The join
  // probes keys in ascending order within a time, so each batch's position moves forward from
  // the last probe (a galloping search), and jumps back with a binary search otherwise.
  const std::vector<std::pair<std::string_view, Int128>>& Lookup(std::string_view key, Time t) {
    found_.clear();
    std::size_t contributing = 0;
    for (std::size_t b = 0; b < batches_.size(); ++b) {
      const shm::BatchView& bv = batches_[b];
      if (bv.key_count() == 0 || bv.header().min_time > t) continue;
      const std::uint32_t k = Seek(b, key);
      if (k == bv.key_count() || bv.key(k) != key) continue;
      const std::size_t before = found_.size();
      for (std::uint32_t v = bv.vals_begin(k); v < bv.vals_end(k); ++v) {
        Int128 count = 0;
        for (std::uint32_t u = bv.updates_begin(v); u < bv.updates_end(v); ++u) {
          if (bv.time(u) <= t) count += bv.diff(u);
        }
        if (count != 0) found_.emplace_back(bv.val(v), count);
      }
      contributing += found_.size() > before ? 1 : 0;
    }
    if (contributing > 1) {  // the same value in several batches: one count, 0 dropped
      std::sort(found_.begin(), found_.end());
      std::size_t w = 0;
      for (std::size_t i = 0; i < found_.size();) {
        std::size_t j = i;
        Int128 sum = 0;
        for (; j < found_.size() && found_[j].first == found_[i].first; ++j)
          sum += found_[j].second;
        if (sum != 0) found_[w++] = {found_[i].first, sum};
        i = j;
      }
      found_.resize(w);
    }
    return found_;
  }

  // The first key >= `key` in batch b.
  std::uint32_t Seek(std::size_t b, std::string_view key) {
    const shm::BatchView& bv = batches_[b];
    std::uint32_t& p = pos_[b];
    const std::uint32_t n = bv.key_count();
    if (p > 0 && (p > n || bv.key(p - 1) >= key)) return p = bv.LowerBound(key);  // backwards
    if (p == n || bv.key(p) >= key) return p;
    // key(p) < key: gallop forward to a step past it, then search in between.
    std::uint32_t lo = p, step = 1;
    while (lo + step < n && bv.key(lo + step) < key) {
      lo += step;
      step *= 2;
    }
    std::uint32_t hi = std::min<std::uint64_t>(n, static_cast<std::uint64_t>(lo) + step);
    // key(lo) < key <= key(hi) (or hi == n)
    while (hi - lo > 1) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      (bv.key(mid) < key ? lo : hi) = mid;
    }
    return p = hi;
  }

  ImportedIndex* index_;
  std::string id_;
  std::vector<std::uint32_t> key_;
  Time as_of_;
  Frontier until_;
  bool started_ = false;
  std::vector<shm::BatchView> batches_;                     // this tick's
  std::vector<std::uint32_t> pos_;                          // per batch: where the last Seek ended
  std::vector<std::pair<std::string_view, Int128>> found_;  // Lookup's answer
};

}  // namespace

std::unique_ptr<JoinSide> MakeOwnSide(Node* input, std::vector<std::uint32_t> key) {
  return std::make_unique<OwnSide>(input, std::move(key));
}

std::unique_ptr<JoinSide> MakeImportedSide(ImportedIndex* index, std::string index_id,
                                           std::vector<std::uint32_t> key, Time as_of,
                                           Frontier until) {
  return std::make_unique<ImportedSide>(index, std::move(index_id), std::move(key), as_of, until);
}

void JoinNode::Emit(const Row& l, const Row& r, Int128 count, Time t, Delta* out) {
  if (count == 0 || meter_.stopped()) return;
  // Beyond int64 an update carries a count as parts (base/count.h), up to kMaxJoinParts of them.
  const Int128 most = Int128{INT64_MAX} * kMaxJoinParts;
  if (count > most || count < -most) {
    if (!overflowed_) out->errors.push_back({"multiplicity overflow in a join", t, 1});
    overflowed_ = true;
    return;
  }
  Row row;
  row.reserve(l.size() + r.size());
  row.insert(row.end(), l.begin(), l.end());
  row.insert(row.end(), r.begin(), r.end());
  if (FitsInt64(count)) {
    out->rows.push_back({std::move(row), t, static_cast<std::int64_t>(count)});
    meter_.Charge(out->rows.back());
    return;
  }
  PushCount(count, [&](std::int64_t part) {
    out->rows.push_back({row, t, part});
    meter_.Charge(out->rows.back());
  });
}

Delta JoinNode::Pull(const TickCtx& ctx) {
  Delta out;
  std::vector<KeyedUpdate> left_updates, right_updates;
  left_->Pull(ctx, &left_updates, &out.errors);
  right_->Pull(ctx, &right_updates, &out.errors);
  // A one-shot's output is charged to its budget; past it, the loops below stop (they exchange
  // nothing, so a worker that stops early never leaves another waiting).
  meter_.Start(ctx.budget);
  // A product that overflows even 128 bits is past what Emit can carry: it takes the error path.
  auto product = [](Int128 a, Int128 b) {
    Int128 p;
    return __builtin_mul_overflow(a, b, &p) ? Int128{INT64_MAX} * (kMaxJoinParts + 1) : p;
  };
  // Each side's updates by time, and by key within a time: a key's updates are one run (its
  // other side is read once for all of them), and an imported side's probes move forward through
  // its batches. Sorted as pointers: an update is heavy to move.
  auto ordered = [](const std::vector<KeyedUpdate>& v) {
    std::vector<const KeyedUpdate*> p;
    p.reserve(v.size());
    for (const KeyedUpdate& k : v) p.push_back(&k);
    auto less = [](const KeyedUpdate* a, const KeyedUpdate* b) {
      return a->update.time != b->update.time ? a->update.time < b->update.time : a->key < b->key;
    };
    if (!std::is_sorted(p.begin(), p.end(), less)) std::sort(p.begin(), p.end(), less);
    return p;
  };
  struct Run {  // [begin, end) of one time's updates, all of one key
    std::size_t begin, end;
  };
  auto runs_of = [](const std::vector<const KeyedUpdate*>& v, std::vector<Run>* runs) {
    runs->clear();
    for (std::size_t i = 0; i < v.size();) {
      std::size_t j = i + 1;
      while (j < v.size() && v[j]->key == v[i]->key) ++j;
      runs->push_back({i, j});
      i = j;
    }
  };
  // A left outer join's keys touched at a time: whether the right side had rows of the key just
  // before it and has them at it, and the key's left run (empty when only the right changed).
  struct Touched {
    std::string_view key;
    Run left;
    bool was_empty = false, now_empty = false;
  };
  const std::vector<const KeyedUpdate*> l = ordered(left_updates), r = ordered(right_updates);
  std::vector<const KeyedUpdate*> lt, rt;
  std::vector<Run> lruns, rruns;
  std::vector<Touched> touched;
  std::vector<std::pair<Row, Int128>> other;  // the other side's rows of one key
  auto collect = [&](Row row, Int128 count) { other.emplace_back(std::move(row), count); };
  std::size_t li = 0, ri = 0;
  while ((li < l.size() || ri < r.size()) && !meter_.stopped()) {
    const Time t = li == l.size()   ? r[ri]->update.time
                   : ri == r.size() ? l[li]->update.time
                                    : std::min(l[li]->update.time, r[ri]->update.time);
    lt.clear();
    rt.clear();
    for (; li < l.size() && l[li]->update.time == t; ++li) lt.push_back(l[li]);
    for (; ri < r.size() && r[ri]->update.time == t; ++ri) rt.push_back(r[ri]);
    runs_of(lt, &lruns);
    runs_of(rt, &rruns);

    if (left_outer_) {  // the touched keys in key order: the two runs' keys merged
      touched.clear();
      std::size_t a = 0, b = 0;
      while (a < lruns.size() || b < rruns.size()) {
        const bool take_left =
            b == rruns.size() ||
            (a < lruns.size() && lt[lruns[a].begin]->key <= rt[rruns[b].begin]->key);
        const bool take_right =
            a == lruns.size() ||
            (b < rruns.size() && rt[rruns[b].begin]->key <= lt[lruns[a].begin]->key);
        const KeyedUpdate* k = take_left ? lt[lruns[a].begin] : rt[rruns[b].begin];
        if (!k->null_key) {
          touched.push_back({k->key, take_left ? lruns[a] : Run{0, 0}, false, false});
          touched.back().was_empty = right_->EmptyAt(k->key, t, true);
        }
        a += take_left ? 1 : 0;
        b += take_right ? 1 : 0;
      }
    }
    right_->Apply(rt);  // the right side now as of t
    if (left_outer_) {
      for (Touched& k : touched) {
        k.now_empty = right_->EmptyAt(k.key, t, false);
        // Gained right rows: the key's left rows before t were unmatched until now (this time's
        // left updates are matched by the join below).
        if (k.was_empty && !k.now_empty) {
          left_->ForEachAt(k.key, t, true, [&](const Row& a, Int128 count) {
            Emit(a, nulls_, product(count, -1), t, &out);
          });
        }
      }
    }
    for (const Run& run : lruns) {  // dA_t ⋈ B(≤ t)
      const KeyedUpdate* first = lt[run.begin];
      if (first->null_key) continue;
      other.clear();
      right_->ForEachAt(first->key, t, false, collect);
      for (std::size_t i = run.begin; i < run.end && !other.empty() && !meter_.stopped(); ++i) {
        for (const auto& [b, count] : other) {
          Emit(lt[i]->row(), b, product(lt[i]->update.diff, count), t, &out);
        }
      }
    }
    for (const Run& run : rruns) {  // A(< t) ⋈ dB_t: the left side still before t
      const KeyedUpdate* first = rt[run.begin];
      if (first->null_key) continue;
      other.clear();
      left_->ForEachAt(first->key, t, true, collect);
      for (std::size_t i = run.begin; i < run.end && !other.empty() && !meter_.stopped(); ++i) {
        for (const auto& [a, count] : other) {
          Emit(a, rt[i]->row(), product(count, rt[i]->update.diff), t, &out);
        }
      }
    }
    left_->Apply(lt);  // the left side now as of t
    if (!left_outer_) continue;
    for (const KeyedUpdate* a : lt) {  // a null key never matches: unmatched, always
      if (a->null_key) Emit(a->row(), nulls_, a->update.diff, t, &out);
    }
    for (const Touched& k : touched) {
      if (!k.was_empty && k.now_empty) {  // lost its right rows: the key's left rows now
        left_->ForEachAt(k.key, t, false,
                         [&](const Row& a, Int128 count) { Emit(a, nulls_, count, t, &out); });
      } else if (k.was_empty && k.now_empty) {  // unmatched before and after: this time's updates
        for (std::size_t i = k.left.begin; i < k.left.end; ++i) {
          Emit(lt[i]->row(), nulls_, lt[i]->update.diff, t, &out);
        }
      }
    }
  }
  meter_.Flush();
  return out;
}

}  // namespace tandem::workers
