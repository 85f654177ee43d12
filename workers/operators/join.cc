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

namespace {

bool HasNull(const Row& row, const std::vector<std::uint32_t>& key) {
  for (std::uint32_t c : key) {
    if (row[c].index() == 0) return true;
  }
  return false;
}

KeyedUpdate Keyed(RowUpdate u, const std::vector<std::uint32_t>& key) {
  KeyedUpdate k;
  for (std::uint32_t c : key) AppendEncodedDatum(u.row[c], &k.key);
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
    Delta in = input_->Pull(ctx);
    std::move(in.errors.begin(), in.errors.end(), std::back_inserter(*errors));
    std::vector<RowUpdate> mine = ctx.exchange->Shuffle(ctx.me, std::move(in.rows), key_, false);
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
    const Time lo = first ? 0 : ctx.lo;
    ForEachUpdateIn(batches_, lo, Min(ctx.hi, until_),
                    [&](const shm::BatchView& b, std::string_view key, std::uint32_t v, Time t,
                        std::int64_t diff) {
                      t = std::max(t, as_of_);
                      if (IsErrorKey(key)) {
                        errors->push_back({std::string(key.substr(1)), t, diff});
                        return;
                      }
                      KeyedUpdate k;
                      k.key = key;
                      k.update = {DecodeIndexValue(b.val(v)), t, diff};
                      k.null_key = HasNull(k.update.row, key_);
                      rows->push_back(std::move(k));
                    });
  }

  void ForEachAt(std::string_view key, Time t, bool before, const RowFn& fn) override {
    if (!Readable(t, before)) return;
    if (before) --t;
    shm::MergeCursor c(batches_);
    c.SeekKey(key);
    for (; c.Valid(); c.Next()) {
      const Int128 count = c.CountAt(t);
      if (count != 0) fn(DecodeIndexValue(c.val()), count);
    }
  }

  bool EmptyAt(std::string_view key, Time t, bool before) override {
    if (!Readable(t, before)) return true;
    if (before) --t;
    shm::MergeCursor c(batches_);
    c.SeekKey(key);
    for (; c.Valid(); c.Next()) {
      if (c.CountAt(t) != 0) return false;
    }
    return true;
  }

  std::string Describe() const override { return "imported index " + id_ + ", in place"; }

 private:
  // Below as_of the import is empty (and just before as_of is below it).
  bool Readable(Time t, bool before) const {
    return !batches_.empty() && (before ? t > as_of_ : t >= as_of_);
  }

  ImportedIndex* index_;
  std::string id_;
  std::vector<std::uint32_t> key_;
  Time as_of_;
  Frontier until_;
  bool started_ = false;
  std::vector<shm::BatchView> batches_;  // this tick's
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
  if (count == 0) return;
  if (!FitsInt64(count)) {
    if (!overflowed_) out->errors.push_back({"multiplicity overflow in a join", t, 1});
    overflowed_ = true;
    return;
  }
  Row row;
  row.reserve(l.size() + r.size());
  row.insert(row.end(), l.begin(), l.end());
  row.insert(row.end(), r.begin(), r.end());
  out->rows.push_back({std::move(row), t, static_cast<std::int64_t>(count)});
}

Delta JoinNode::Pull(const TickCtx& ctx) {
  Delta out;
  std::vector<KeyedUpdate> l, r;
  left_->Pull(ctx, &l, &out.errors);
  right_->Pull(ctx, &r, &out.errors);
  // Each side's updates by time; a product that overflows Int128 is beyond int64 too.
  auto product = [](Int128 a, Int128 b) {
    Int128 p;
    return __builtin_mul_overflow(a, b, &p) ? Int128{INT64_MAX} * 2 : p;
  };
  auto by_time = [](std::vector<KeyedUpdate>& v) {
    std::stable_sort(v.begin(), v.end(), [](const KeyedUpdate& a, const KeyedUpdate& b) {
      return a.update.time < b.update.time;
    });
  };
  by_time(l);
  by_time(r);
  std::size_t li = 0, ri = 0;
  std::vector<const KeyedUpdate*> lt, rt;
  while (li < l.size() || ri < r.size()) {
    const Time t = li == l.size()   ? r[ri].update.time
                   : ri == r.size() ? l[li].update.time
                                    : std::min(l[li].update.time, r[ri].update.time);
    lt.clear();
    rt.clear();
    for (; li < l.size() && l[li].update.time == t; ++li) lt.push_back(&l[li]);
    for (; ri < r.size() && r[ri].update.time == t; ++ri) rt.push_back(&r[ri]);

    // A left outer join: whether the right side had the key before t (read before Apply).
    std::map<std::string_view, bool> right_was_empty;  // touched non-null keys
    if (left_outer_) {
      for (const auto* v : {&lt, &rt}) {
        for (const KeyedUpdate* k : *v) {
          if (!k->null_key && !right_was_empty.count(k->key))
            right_was_empty[k->key] = right_->EmptyAt(k->key, t, true);
        }
      }
    }
    right_->Apply(rt);  // the right side now as of t
    for (const KeyedUpdate* a : lt) {
      if (a->null_key) continue;
      right_->ForEachAt(a->key, t, false, [&](const Row& b, Int128 count) {
        Emit(a->update.row, b, product(a->update.diff, count), t, &out);
      });
    }
    for (const KeyedUpdate* b : rt) {  // the left side still before t
      if (b->null_key) continue;
      left_->ForEachAt(b->key, t, true, [&](const Row& a, Int128 count) {
        Emit(a, b->update.row, product(count, b->update.diff), t, &out);
      });
    }
    left_->Apply(lt);  // the left side now as of t
    if (!left_outer_) continue;
    // The unmatched left rows, with nulls: a null key's row always; a key's rows while the right
    // side has none. Only where the right side's presence flips are the key's rows looked at.
    for (const KeyedUpdate* a : lt) {
      if (a->null_key || right_was_empty.at(a->key)) {
        // Unmatched before t; still unmatched after it unless the key gained right rows, which
        // the walk below then counts with the whole key (the update included).
        if (a->null_key || right_->EmptyAt(a->key, t, false))
          Emit(a->update.row, nulls_, a->update.diff, t, &out);
      }
    }
    for (const auto& [key, was_empty] : right_was_empty) {
      const bool now_empty = right_->EmptyAt(key, t, false);
      if (was_empty == now_empty) continue;
      // Gained right rows: the key's left rows before t leave (= now minus this time's updates);
      // lost them: the key's left rows now appear.
      const std::int64_t sign = now_empty ? 1 : -1;
      left_->ForEachAt(key, t, false, [&](const Row& a, Int128 count) {
        Emit(a, nulls_, product(count, sign), t, &out);
      });
      if (!now_empty) {
        for (const KeyedUpdate* a : lt) {
          if (!a->null_key && a->key == key) Emit(a->update.row, nulls_, a->update.diff, t, &out);
        }
      }
    }
  }
  return out;
}

}  // namespace tandem::workers
