#include "workers/operators/reduce.h"

#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/count.h"
#include "base/datetime.h"
#include "base/numeric.h"
#include "shm/batch.h"
#include "workers/exchange.h"
#include "workers/operators/spellings.h"
#include "workers/sources/index_import.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

// Partitioned by the first `columns` columns (a Reduce's output starts with its group key).
Partitioning GroupKeyPartitioning(std::size_t columns) {
  std::vector<std::uint32_t> first(columns);
  for (std::size_t i = 0; i < columns; ++i) first[i] = static_cast<std::uint32_t>(i);
  return Partitioning::By(std::move(first));
}

struct DatumLess {
  bool operator()(const Datum& a, const Datum& b) const { return CompareDatum(a, b) < 0; }
};

// The aggregates of one Reduce: the state of one group, built from its rows with their
// multiplicities, and the output row it makes (workers/README.md "Operators").
class Aggregates {
 public:
  Aggregates(const pb::Plan::Reduce& r, const pb::Schema& input) {
    for (const auto& a : r.aggregates()) {
      aggs_.push_back(a);
      types_.push_back(a.func() == pb::COUNT ? pb::SCALAR_TYPE_UNSPECIFIED
                                             : input.columns(static_cast<int>(a.column())).type());
    }
  }

  // Every multiplicity here is an exact sum of diffs (base/count.h).
  struct AggState {
    Int128 int_sum = 0;
    // The 128-bit sum itself overflowed (values and multiplicities near int64's limits): the
    // SUM is an error from then on, even if later retractions would bring it back in range.
    bool int_sum_overflowed = false;
    double float_sum = 0;
    bool is_float = false;
    Int128 nonnull = 0;  // multiplicity of non-null values
    // MIN, MAX, COUNT_DISTINCT, ANY, ALL and a float AVG: each value's count (never 0), and how
    // many values have a positive count over their spellings (COUNT_DISTINCT, without a walk over
    // them; SameValue).
    std::map<Datum, Int128, DatumLess> values;
    std::int64_t positive_values = 0;
  };
  struct Output {
    bool present = false;
    Row row;
    std::string error;
    bool operator==(const Output& o) const {
      return present == o.present && error == o.error && CompareRow(row, o.row) == 0 &&
             row.size() == o.row.size();
    }
  };
  struct Group {
    Row key;  // as the group's first row spells it; printed unless `spellings` names another
    Spellings spellings;
    Int128 count = 0;
    std::vector<AggState> aggs;
    Output out;
  };

  void Apply(Group& g, const Row& row, Int128 diff) const {
    g.count += diff;
    for (std::size_t a = 0; a < aggs_.size(); ++a) {
      const pb::Aggregate& agg = aggs_[a];
      if (agg.func() == pb::COUNT) continue;
      const Datum& v = row[agg.column()];
      if (v.index() == 0) continue;  // nulls are ignored
      AggState& s = g.aggs[a];
      switch (agg.func()) {
        case pb::COUNT_NON_NULL:
          s.nonnull += diff;
          break;
        case pb::SUM:
        case pb::AVG:
          s.nonnull += diff;
          if (types_[a] == pb::NUMERIC || types_[a] == pb::INTERVAL) {
            AddValue(s, v, diff);  // summed exactly over the values present (Compute)
          } else if (v.index() == 2) {
            Int128 product;
            s.int_sum_overflowed |=
                __builtin_mul_overflow(static_cast<Int128>(std::get<std::int64_t>(v)),
                                       static_cast<Int128>(diff), &product) ||
                __builtin_add_overflow(s.int_sum, product, &s.int_sum);
          } else if (agg.func() == pb::SUM) {
            s.is_float = true;
            s.float_sum += std::get<double>(v) * static_cast<double>(diff);
          } else {  // a float AVG sums its distinct values in order (Compute)
            s.is_float = true;
            AddValue(s, v, diff);
          }
          break;
        default:  // MIN, MAX, COUNT_DISTINCT, ANY, ALL: the values with their counts
          AddValue(s, v, diff);
      }
    }
  }

  static void PushInt128(Int128 v, Row* row) {
    const auto u = static_cast<UInt128>(v);
    row->push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(u >> 64)));
    row->push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(u)));
  }
  static Int128 ReadInt128(const Row& row, std::size_t* at) {
    const auto hi = static_cast<std::uint64_t>(std::get<std::int64_t>(row[(*at)++]));
    const auto lo = static_cast<std::uint64_t>(std::get<std::int64_t>(row[(*at)++]));
    return static_cast<Int128>((static_cast<UInt128>(hi) << 64) | lo);
  }

  // Numerics and intervals count as values (base/row.h "Keys": 1.5 and 1.50 are one), whose
  // spellings are adjacent in datum order.
  static bool SameValue(const Datum& a, const Datum& b) {
    if (const auto* n = std::get_if<Numeric>(&a)) {
      return CompareNumericValue(*n, std::get<Numeric>(b)) == 0;
    }
    return CompareIntervalValue(std::get<Interval>(a), std::get<Interval>(b)) == 0;
  }
  // The count of `v`'s value over every spelling of it.
  static Int128 ValueTotal(const AggState& s, const Datum& v) {
    Int128 total = 0;
    const auto at = s.values.lower_bound(v);
    for (auto it = at; it != s.values.end() && SameValue(it->first, v); ++it) total += it->second;
    for (auto it = at; it != s.values.begin();) {
      if (!SameValue((--it)->first, v)) break;
      total += it->second;
    }
    return total;
  }

  static void AddValue(AggState& s, const Datum& v, Int128 diff) {
    const bool spelled = Spellings::Spelled(v);
    auto& c = s.values[v];
    const bool was_positive = spelled ? ValueTotal(s, v) > 0 : c > 0;
    c += diff;
    const bool positive = spelled ? ValueTotal(s, v) > 0 : c > 0;
    s.positive_values += (positive ? 1 : 0) - (was_positive ? 1 : 0);
    if (c == 0) s.values.erase(v);
  }

// GCC 12 at -O3 reports the std::string alternative of Datum as maybe-uninitialized when a row
// of variants reallocates here (a known false positive of its variant move; clang, GCC -O2 and
// ASan/UBSan builds are silent).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
  Output Compute(const Group& g) const {
    Output o;
    if (g.count <= 0) return o;
    o.present = true;
    const Row* printed = g.spellings.Printed();
    o.row = printed != nullptr ? *printed : g.key;
    auto push_count = [&o](Int128 n) {  // COUNT and COUNT(c): int64, or the overflow error
      if (!FitsInt64(n)) {
        o.error = "integer overflow in COUNT";
        o.row.push_back(Null{});
      } else {
        o.row.push_back(static_cast<std::int64_t>(n));
      }
    };
    for (std::size_t a = 0; a < aggs_.size(); ++a) {
      const AggState& s = g.aggs[a];
      switch (aggs_[a].func()) {
        case pb::COUNT:
          push_count(g.count);
          break;
        case pb::SUM:
          if (s.nonnull <= 0) {
            o.row.push_back(Null{});
          } else if (types_[a] == pb::NUMERIC || types_[a] == pb::INTERVAL) {
            PushExact(SumOfValues(types_[a], s), o);
          } else if (s.is_float) {
            PushFloat(types_[a], s.float_sum, o);
          } else if (s.int_sum_overflowed || !FitsInt64(s.int_sum)) {
            o.error = "integer overflow in SUM";
            o.row.push_back(Null{});
          } else {
            o.row.push_back(static_cast<std::int64_t>(s.int_sum));
          }
          break;
        case pb::MIN:
        case pb::MAX: {
          std::optional<Datum> best;
          if (aggs_[a].func() == pb::MIN) {
            for (const auto& [v, c] : s.values) {
              if (c > 0) {
                best = v;
                break;
              }
            }
          } else {
            for (auto it = s.values.rbegin(); it != s.values.rend(); ++it) {
              if (it->second > 0) {
                best = it->first;
                break;
              }
            }
          }
          o.row.push_back(best ? *best : Datum(Null{}));
          break;
        }
        case pb::COUNT_NON_NULL:
          push_count(s.nonnull);
          break;
        case pb::COUNT_DISTINCT:
          o.row.push_back(s.positive_values);
          break;
        case pb::AVG:
          if (s.nonnull <= 0) {
            o.row.push_back(Null{});
          } else if (types_[a] == pb::NUMERIC || types_[a] == pb::INTERVAL) {
            PushExact(AverageOfValues(types_[a], s), o);
          } else if (s.is_float) {
            // Summed over the distinct values in datum order: the rounding depends on the
            // multiset alone, not on the order the updates came in.
            double sum = 0;
            for (const auto& [v, c] : s.values) sum += std::get<double>(v) * static_cast<double>(c);
            o.row.push_back(sum / static_cast<double>(s.nonnull));
          } else if (s.int_sum_overflowed) {
            o.error = "integer overflow in AVG";
            o.row.push_back(Null{});
          } else {
            o.row.push_back(static_cast<double>(s.int_sum) / static_cast<double>(s.nonnull));
          }
          break;
        case pb::ANY:
        case pb::ALL: {
          // bool_or / bool_and over the values present: ANY is true if one is true, ALL is false
          // if one is false; otherwise the other value if present, else null.
          const bool decisive = aggs_[a].func() == pb::ANY;
          bool has[2] = {false, false};
          for (const auto& [v, c] : s.values) {
            if (c > 0) has[std::get<bool>(v) ? 1 : 0] = true;
          }
          if (has[decisive ? 1 : 0]) {
            o.row.push_back(decisive);
          } else if (has[decisive ? 0 : 1]) {
            o.row.push_back(!decisive);
          } else {
            o.row.push_back(Null{});
          }
          break;
        }
        default:
          TANDEM_CHECK(false, "unknown aggregate passed validation");
      }
    }
    return o;
  }
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  // Σ value × count over the values present, exactly: a NUMERIC or an INTERVAL, or the data
  // error of a sum out of its type's range.
  static Result<Datum> SumOfValues(pb::ScalarType type, const AggState& s) {
    if (type == pb::NUMERIC) {
      Numeric sum = NumericFromInt64(0);
      for (const auto& [v, c] : s.values) {
        TANDEM_ASSIGN_OR_RETURN(Numeric count, NumericFromCount(c));
        TANDEM_ASSIGN_OR_RETURN(Numeric term, NumericMul(std::get<Numeric>(v), count));
        TANDEM_ASSIGN_OR_RETURN(sum, NumericAdd(sum, term));
      }
      return Datum(sum);
    }
    Int128 months = 0, days = 0, micros = 0;
    bool overflow = false;
    for (const auto& [v, c] : s.values) {
      const auto& i = std::get<Interval>(v);
      Int128 m, d, u;
      overflow |= __builtin_mul_overflow(static_cast<Int128>(i.months), c, &m) ||
                  __builtin_mul_overflow(static_cast<Int128>(i.days), c, &d) ||
                  __builtin_mul_overflow(static_cast<Int128>(i.micros), c, &u) ||
                  __builtin_add_overflow(months, m, &months) ||
                  __builtin_add_overflow(days, d, &days) ||
                  __builtin_add_overflow(micros, u, &micros);
    }
    if (overflow || months < INT32_MIN || months > INT32_MAX || days < INT32_MIN ||
        days > INT32_MAX || !FitsInt64(micros)) {
      return Status::DataError("interval out of range");
    }
    return Datum(Interval{static_cast<std::int32_t>(months), static_cast<std::int32_t>(days),
                          static_cast<std::int64_t>(micros)});
  }
  // PostgreSQL's avg of numeric (numeric_avg: the sum divided with the division's scale) and of
  // interval (interval_avg: the sum divided by the count as a float8). The count may be past
  // int64 (multiplicities sum as Int128).
  static Result<Datum> AverageOfValues(pb::ScalarType type, const AggState& s) {
    TANDEM_ASSIGN_OR_RETURN(Datum sum, SumOfValues(type, s));
    if (type == pb::NUMERIC) {
      TANDEM_ASSIGN_OR_RETURN(Numeric avg, NumericAvg(std::get<Numeric>(sum), s.nonnull));
      return Datum(avg);
    }
    TANDEM_ASSIGN_OR_RETURN(Interval avg,
                            IntervalDiv(std::get<Interval>(sum), static_cast<double>(s.nonnull)));
    return Datum(avg);
  }
  static void PushExact(Result<Datum> value, Output& o) {
    if (value.ok()) {
      o.row.push_back(*std::move(value));
    } else {
      o.error = value.status().message();
      o.row.push_back(Null{});
    }
  }
  // A float SUM's result: FLOAT32 rounded to float, PostgreSQL's overflow error when it leaves
  // float's range.
  static void PushFloat(pb::ScalarType type, double sum, Output& o) {
    if (type != pb::FLOAT32 || !std::isfinite(sum)) {
      o.row.push_back(sum);
    } else if (const float f = static_cast<float>(sum); std::isinf(f)) {
      o.error = "value out of range: overflow";
      o.row.push_back(Null{});
    } else {
      o.row.push_back(static_cast<double>(f));
    }
  }

  static void Emit(const Output& o, Time t, std::int64_t diff, Delta* out) {
    if (!o.present) return;
    if (!o.error.empty()) {
      out->errors.push_back({o.error, t, diff});
    } else {
      out->rows.push_back({o.row, t, diff});
    }
  }

  // Counts `diff` of the group's key as `row`'s `key_columns` spell it, when it can be spelled
  // apart (spellings.h): called with each change of the group's count.
  static void Spell(Group& g, const Row& row, const std::vector<std::uint32_t>& key_columns,
                    Int128 diff) {
    if (diff == 0 || !Spellings::Spelled(row, key_columns)) return;
    Row spelling;
    spelling.reserve(key_columns.size());
    for (std::uint32_t c : key_columns) spelling.push_back(row[c]);
    g.spellings.Add(spelling, diff);
  }

  // True when the group holds nothing: no multiplicity, no count of a spelling of its key, and no
  // value of any aggregate.
  static bool Empty(const Group& g) {
    if (g.count != 0 || !g.spellings.empty()) return false;
    for (const AggState& s : g.aggs) {
      if (s.nonnull != 0 || s.int_sum != 0 || s.int_sum_overflowed || s.float_sum != 0 ||
          !s.values.empty()) {
        return false;
      }
    }
    return true;
  }

  // A worker's partial state of a group (its own rows of one time, applied to an empty group),
  // carried through the exchange as a row: the group key columns, then the count and each
  // aggregate's state (AppendPartial); MergePartial adds one into the group its key routes to.
  // Merging the partials of every worker gives the state applying every row would: the counts,
  // the integer sums and the values' counts are sums, the overflow flags ors, and a float SUM
  // a sum in another order (as the exchange's arrival order already is). So is the 128-bit
  // overflow of an integer sum, sticky once seen: it depends on the order of the additions, which
  // with several workers never was fixed (it takes products near 2^126 to reach it). A partial
  // that Empty() calls empty is not sent; its is_float alone would say nothing (validation
  // fixes a SUM or AVG column's type, and a float sum of 0 is the same sum).
  void AppendPartial(const Group& g, Row* row) const {
    row->reserve(row->size() + 2 + 8 * aggs_.size());
    PushInt128(g.count, row);
    for (const AggState& s : g.aggs) {
      PushInt128(s.int_sum, row);
      row->push_back(s.int_sum_overflowed);
      row->push_back(s.is_float);
      row->push_back(s.float_sum);
      PushInt128(s.nonnull, row);
      row->push_back(static_cast<std::int64_t>(s.values.size()));
      for (const auto& [v, c] : s.values) {
        row->push_back(v);
        PushInt128(c, row);
      }
    }
  }
  void MergePartial(Group& g, const Row& row, std::size_t at) const {
    g.count += ReadInt128(row, &at);
    for (AggState& s : g.aggs) {
      const Int128 sum = ReadInt128(row, &at);
      s.int_sum_overflowed |= std::get<bool>(row[at++]);
      s.int_sum_overflowed |= __builtin_add_overflow(s.int_sum, sum, &s.int_sum);
      s.is_float |= std::get<bool>(row[at++]);
      s.float_sum += std::get<double>(row[at++]);
      s.nonnull += ReadInt128(row, &at);
      const std::int64_t values = std::get<std::int64_t>(row[at++]);
      for (std::int64_t i = 0; i < values; ++i) {
        const Datum& v = row[at++];
        AddValue(s, v, ReadInt128(row, &at));
      }
    }
    TANDEM_CHECK(at == row.size(), "a Reduce partial row of another shape than its aggregates");
  }

  Group NewGroup(Row key) const {
    Group g;
    g.key = std::move(key);
    g.aggs.resize(aggs_.size());
    return g;
  }

 private:
  std::vector<pb::Aggregate> aggs_;
  std::vector<pb::ScalarType> types_;  // each aggregate's input column type
};

class ReduceNode final : public Node {
 public:
  ReduceNode(Node* input, const pb::Plan::Reduce& r, const pb::Schema& input_schema)
      : input_(input),
        key_(r.group_key().begin(), r.group_key().end()),
        partial_key_(GroupKeyPartitioning(key_.size()).columns),
        aggregates_(r, input_schema) {}

  // Output rows start with the group key, by which the input was exchanged.
  Partitioning partitioning() const override { return GroupKeyPartitioning(key_.size()); }

  Delta Pull(const TickCtx& ctx) override {
    Delta out;
    Delta in = input_->Pull(ctx);
    std::move(in.errors.begin(), in.errors.end(), std::back_inserter(out.errors));
    if (ctx.exchange->workers() == 1 || input_->partitioning().Satisfies(key_, false)) {
      // Every row is where its group is: applied as it comes.
      Absorb(in.rows, /*from_exchange=*/false, &out);
      return out;
    }
    // Each worker sends, this tick, either one partial per (time, group) of its rows (Combine) or
    // its rows; the receiver tells them apart (a partial's diff is 0, a row's never is).
    const bool combine = plain_ticks_ == 0;
    std::vector<RowUpdate> send;
    if (combine) {
      const std::size_t rows = in.rows.size();
      send = Combine(std::move(in.rows));
      // Groups of few rows a tick (a key near-unique in the tick): a partial (2 + 8 datums an
      // aggregate) costs more than the rows it replaces, so rows go as they are for a while,
      // then combining is tried again. (A key's retraction and insertion in one tick are two
      // rows of one group: combining must save more than that pair to pay.)
      if (rows >= kProbeRows && send.size() * kMinRowsPerPartial > rows) plain_ticks_ = kPlainTicks;
    } else {
      send = std::move(in.rows);
      std::erase_if(send, [](const RowUpdate& u) { return u.diff == 0; });  // change nothing
      --plain_ticks_;
    }
    std::vector<RowUpdate> received =
        ctx.exchange->Shuffle(ctx.me, std::move(send), combine ? partial_key_ : key_, false);
    Absorb(received, /*from_exchange=*/true, &out);
    return out;
  }

 private:
  // A combined tick of at least kProbeRows rows with fewer than kMinRowsPerPartial rows a partial
  // sends rows for the next kPlainTicks ticks.
  static constexpr std::size_t kProbeRows = 256;
  static constexpr std::size_t kMinRowsPerPartial = 4;
  static constexpr int kPlainTicks = 64;

  // Applies `rows` — and, when they come from the exchange, the partials among them (diff 0) —
  // time by time, then settles every group each time touched.
  void Absorb(std::vector<RowUpdate>& rows, bool from_exchange, Delta* out) {
    auto partial = [from_exchange](const RowUpdate& u) { return from_exchange && u.diff == 0; };
    ForEachGroupChangeBy(
        rows,
        [&](const RowUpdate& u) -> const std::vector<std::uint32_t>& {
          return partial(u) ? partial_key_ : key_;
        },
        [&](const std::string& key, const RowUpdate& u) {
          const std::vector<std::uint32_t>& columns = partial(u) ? partial_key_ : key_;
          Aggregates::Group& g = GroupOf(key, u.row, columns);
          const Int128 before = g.count;
          if (partial(u)) {
            aggregates_.MergePartial(g, u.row, key_.size());
          } else {
            aggregates_.Apply(g, u.row, u.diff);
          }
          Aggregates::Spell(g, u.row, columns, g.count - before);
        },
        [&](Time t, const std::string& key) { Settle(t, key, out); });
  }

  // The group of `key` (encoded), made from `row`'s `key_columns` when new. (Not "aggs is empty":
  // a Reduce without aggregates has none, and would append the key once per row.)
  Aggregates::Group& GroupOf(const std::string& key, const Row& row,
                             const std::vector<std::uint32_t>& key_columns) {
    auto [it, fresh] = groups_.try_emplace(key);
    if (fresh) {
      Row key_row;
      for (std::uint32_t c : key_columns) key_row.push_back(row[c]);
      it->second = aggregates_.NewGroup(std::move(key_row));
    }
    return it->second;
  }

  // This worker's rows as partial rows (Aggregates::AppendPartial), one per (time, group) whose
  // rows left anything; a partial's diff is 0: the tag by which Absorb knows it. Rows combine by
  // their key's exact encoding, not its key encoding: a partial carries one spelling of its key,
  // whose count is the partial's (Absorb counts it as the receiver's group's spelling).
  std::vector<RowUpdate> Combine(std::vector<RowUpdate> rows) {
    std::unordered_map<std::string, Aggregates::Group> combined;
    std::vector<std::pair<Time, Aggregates::Group*>> order;  // first-seen order: deterministic
    std::string at;
    for (const RowUpdate& u : rows) {
      at.assign(reinterpret_cast<const char*>(&u.time), sizeof u.time);
      for (std::uint32_t c : key_) AppendEncodedDatum(u.row[c], &at);
      auto [it, fresh] = combined.try_emplace(at);
      if (fresh) {
        Row key_row;
        key_row.reserve(key_.size());
        for (std::uint32_t c : key_) key_row.push_back(u.row[c]);
        it->second = aggregates_.NewGroup(std::move(key_row));
        order.emplace_back(u.time, &it->second);
      }
      aggregates_.Apply(it->second, u.row, u.diff);
    }
    std::vector<RowUpdate> partials;
    partials.reserve(order.size());
    for (auto& [t, g] : order) {
      if (Aggregates::Empty(*g)) continue;  // rows that cancelled out change nothing
      Row row = std::move(g->key);
      aggregates_.AppendPartial(*g, &row);
      partials.push_back({std::move(row), t, 0});
    }
    return partials;
  }

  void Settle(Time t, const std::string& key, Delta* out) {
    auto it = groups_.find(key);
    Aggregates::Group& g = it->second;
    Aggregates::Output now = aggregates_.Compute(g);
    if (!(now == g.out)) {
      Aggregates::Emit(g.out, t, -1, out);
      Aggregates::Emit(now, t, 1, out);
      g.out = std::move(now);
    }
    // Only once nothing of it is left: a group whose count is 0 may still hold values with
    // non-zero counts (a retraction of a value never inserted), which later updates see.
    if (Aggregates::Empty(g)) groups_.erase(it);
  }

  Node* input_;
  std::vector<std::uint32_t> key_;
  std::vector<std::uint32_t> partial_key_;  // 0 .. key_.size() - 1: a partial row's group key
  int plain_ticks_ = 0;  // > 0: ticks left that send rows, not partials (this worker's choice)
  Aggregates aggregates_;
  std::map<std::string, Aggregates::Group> groups_;
};

// A Reduce by the key of the imported index it reads (DESIGN §8: "uses the imported arrangement
// instead of building its own"). It keeps no state: a group's aggregates at time t are computed
// from the arrangement itself — the values of its key with their counts at t, read in place from
// the batches with a merge cursor. The first tick emits every group at as_of (one pass over the
// whole arrangement); every later update at time t in the tick [lo, hi) of key k retracts k's
// output at t - 1 and emits it at t, when they differ. Exact because the importer holds the index
// at max(as_of, lo - 1) (workers/sources/index_import.h): every t - 1 read is at or past since.
// Errors of the import pass through as the ImportNode would emit them.
// GCC 12 at -O3: the same false positive as at Compute above, for the optional groups here.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
class ArrangedReduceNode final : public Node {
 public:
  ArrangedReduceNode(ImportedIndex* index, const pb::Plan::Reduce& r, const pb::Schema& input,
                     Time as_of, Frontier until)
      : index_(index),
        aggregates_(r, input),
        key_columns_(r.group_key().begin(), r.group_key().end()),
        as_of_(as_of),
        until_(until) {}

  // The import is arranged (and so partitioned) by the group key; output rows start with it.
  Partitioning partitioning() const override { return GroupKeyPartitioning(key_columns_.size()); }

  Delta Pull(const TickCtx& ctx) override {
    Delta out;
    const bool first = !started_;
    started_ = true;
    if (const auto& error = index_->error()) {  // as the ImportNode would read it
      if (first && until_.Greater(as_of_)) out.errors.push_back({*error, as_of_, 1});
      return out;
    }
    const std::vector<shm::BatchView> batches = index_->Batches();
    if (first && until_.Greater(as_of_)) {
      shm::MergeCursor c(batches);
      std::string key;
      std::optional<Aggregates::Group> g;
      auto flush = [&] {
        if (g) Aggregates::Emit(aggregates_.Compute(*g), as_of_, 1, &out);
        g.reset();
      };
      for (; c.Valid(); c.Next()) {
        if (IsErrorKey(c.key())) {  // an error present at as_of, as its consolidated count
          PushCount(c.CountAt(as_of_), [&](std::int64_t part) {
            out.errors.push_back({std::string(c.key().substr(1)), as_of_, part});
          });
          continue;
        }
        if (!g || c.key() != key) {
          flush();
          key = c.key();
        }
        const Int128 count = c.CountAt(as_of_);
        if (count == 0) continue;
        Row row = DecodeIndexValue(c.val());
        if (!g) g = aggregates_.NewGroup(KeyOf(row));
        aggregates_.Apply(*g, row, count);
        Aggregates::Spell(*g, row, key_columns_, count);
      }
      flush();
    }
    // The tick's updates after what was emitted already: errors pass through at their times; rows
    // mark the (key, time) pairs to recompute.
    const Time lo = first ? as_of_ + 1 : ctx.lo;
    std::map<std::string, std::set<Time>> touched;
    if (until_.Greater(lo)) {
      ForEachUpdateIn(batches, lo, Min(ctx.hi, until_),
                      [&](const shm::BatchView&, std::string_view key, std::uint32_t, Time t,
                          std::int64_t diff) {
                        if (IsErrorKey(key)) {
                          out.errors.push_back({std::string(key.substr(1)), t, diff});
                        } else {
                          touched[std::string(key)].insert(t);
                        }
                      });
    }
    for (const auto& [key, times] : touched) {
      for (Time t : times) {
        Aggregates::Output before = At(batches, key, t - 1), now = At(batches, key, t);
        if (before == now) continue;
        Aggregates::Emit(before, t, -1, &out);
        Aggregates::Emit(now, t, 1, &out);
      }
    }
    return out;
  }

 private:
  Row KeyOf(const Row& row) const {
    Row key;
    for (std::uint32_t c : key_columns_) key.push_back(row[c]);
    return key;
  }
  // Key `key`'s output at time t, from its values' counts at t.
  Aggregates::Output At(const std::vector<shm::BatchView>& batches, const std::string& key,
                        Time t) const {
    shm::MergeCursor c(batches);
    c.SeekKey(key);
    std::optional<Aggregates::Group> g;
    for (; c.Valid(); c.Next()) {
      const Int128 count = c.CountAt(t);
      if (count == 0) continue;
      Row row = DecodeIndexValue(c.val());
      if (!g) g = aggregates_.NewGroup(KeyOf(row));
      aggregates_.Apply(*g, row, count);
      Aggregates::Spell(*g, row, key_columns_, count);
    }
    return g ? aggregates_.Compute(*g) : Aggregates::Output{};
  }

  ImportedIndex* index_;
  Aggregates aggregates_;
  std::vector<std::uint32_t> key_columns_;
  Time as_of_;
  Frontier until_;
  bool started_ = false;
};
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace

std::unique_ptr<Node> MakeReduce(Node* input, const pb::Plan::Reduce& reduce,
                                 const pb::Schema& input_schema) {
  return std::make_unique<ReduceNode>(input, reduce, input_schema);
}

}  // namespace tandem::workers

namespace tandem::workers {

std::unique_ptr<Node> MakeArrangedReduce(ImportedIndex* index, const pb::Plan::Reduce& reduce,
                                         const pb::Schema& input, Time as_of, Frontier until) {
  return std::make_unique<ArrangedReduceNode>(index, reduce, input, as_of, until);
}

}  // namespace tandem::workers
