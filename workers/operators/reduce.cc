#include "workers/operators/reduce.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/count.h"
#include "workers/exchange.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

struct DatumLess {
  bool operator()(const Datum& a, const Datum& b) const { return CompareDatum(a, b) < 0; }
};

class ReduceNode final : public Node {
 public:
  ReduceNode(Node* input, const pb::Plan::Reduce& r, bool exchange)
      : input_(input), key_(r.group_key().begin(), r.group_key().end()), exchange_(exchange) {
    for (const auto& a : r.aggregates()) aggs_.push_back(a);
  }

  Delta Pull(const TickCtx& ctx) override {
    Delta in = input_->Pull(ctx);
    Delta out;
    out.errors = std::move(in.errors);
    std::vector<RowUpdate> rows =
        exchange_ ? ctx.exchange->Shuffle(ctx.me, std::move(in.rows), key_, false)
                  : std::move(in.rows);
    std::string key;
    ForEachTime(rows, [&](Time t, std::size_t b, std::size_t e) {
      std::set<std::string> touched;
      for (std::size_t i = b; i < e; ++i) {
        key.clear();
        for (std::uint32_t c : key_) AppendEncodedDatum(rows[i].row[c], &key);
        // A new group takes its key from its first row. (Not "aggs is empty": a Reduce without
        // aggregates has none, and would append the key once per row.)
        auto [it, fresh] = groups_.try_emplace(key);
        Group& g = it->second;
        if (fresh) {
          g.aggs.resize(aggs_.size());
          for (std::uint32_t c : key_) g.key.push_back(rows[i].row[c]);
        }
        Apply(g, rows[i].row, rows[i].diff);
        touched.insert(key);
      }
      for (const std::string& k : touched) {
        auto it = groups_.find(k);
        Group& g = it->second;
        Output now = Compute(g);
        if (!(now == g.out)) {
          Emit(g.out, t, -1, &out);
          Emit(now, t, 1, &out);
          g.out = std::move(now);
        }
        if (g.count == 0) groups_.erase(it);
      }
    });
    return out;
  }

 private:
  // Every multiplicity here is an exact sum of diffs (base/count.h).
  struct AggState {
    Int128 int_sum = 0;
    // The 128-bit sum itself overflowed (values and multiplicities near int64's limits): the
    // SUM is an error from then on, even if later retractions would bring it back in range.
    bool int_sum_overflowed = false;
    double float_sum = 0;
    bool is_float = false;
    Int128 nonnull = 0;                         // multiplicity of non-null values
    std::map<Datum, Int128, DatumLess> values;  // MIN/MAX
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
    Row key;
    Int128 count = 0;
    std::vector<AggState> aggs;
    Output out;
  };

  void Apply(Group& g, const Row& row, std::int64_t diff) {
    g.count += diff;
    for (std::size_t a = 0; a < aggs_.size(); ++a) {
      const pb::Aggregate& agg = aggs_[a];
      if (agg.func() == pb::COUNT) continue;
      const Datum& v = row[agg.column()];
      if (v.index() == 0) continue;  // nulls are ignored
      AggState& s = g.aggs[a];
      if (agg.func() == pb::SUM) {
        s.nonnull += diff;
        if (v.index() == 2) {
          Int128 product;
          s.int_sum_overflowed |=
              __builtin_mul_overflow(static_cast<Int128>(std::get<std::int64_t>(v)),
                                     static_cast<Int128>(diff), &product) ||
              __builtin_add_overflow(s.int_sum, product, &s.int_sum);
        } else {
          s.is_float = true;
          s.float_sum += std::get<double>(v) * static_cast<double>(diff);
        }
      } else {
        auto& c = s.values[v];
        c += diff;
        if (c == 0) s.values.erase(v);
      }
    }
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
    o.row = g.key;
    for (std::size_t a = 0; a < aggs_.size(); ++a) {
      const AggState& s = g.aggs[a];
      switch (aggs_[a].func()) {
        case pb::COUNT:
          if (!FitsInt64(g.count)) {
            o.error = "integer overflow in COUNT";
            o.row.push_back(Null{});
          } else {
            o.row.push_back(static_cast<std::int64_t>(g.count));
          }
          break;
        case pb::SUM:
          if (s.nonnull <= 0) {
            o.row.push_back(Null{});
          } else if (s.is_float) {
            o.row.push_back(s.float_sum);
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
        default:
          TANDEM_CHECK(false, "unknown aggregate passed validation");
      }
    }
    return o;
  }
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  static void Emit(const Output& o, Time t, std::int64_t diff, Delta* out) {
    if (!o.present) return;
    if (!o.error.empty()) {
      out->errors.push_back({o.error, t, diff});
    } else {
      out->rows.push_back({o.row, t, diff});
    }
  }

  Node* input_;
  std::vector<std::uint32_t> key_;
  bool exchange_;
  std::vector<pb::Aggregate> aggs_;
  std::map<std::string, Group> groups_;
};

}  // namespace

std::unique_ptr<Node> MakeReduce(Node* input, const pb::Plan::Reduce& reduce, bool exchange) {
  return std::make_unique<ReduceNode>(input, reduce, exchange);
}

}  // namespace tandem::workers
