#include "workers/operators/top_k.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/count.h"
#include "workers/exchange.h"
#include "workers/peek.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

class TopKNode final : public Node {
 public:
  TopKNode(Node* input, const pb::Plan::TopK& p)
      : input_(input),
        key_(p.group_key().begin(), p.group_key().end()),
        offset_(p.offset()),
        limit_(p.has_limit() ? std::optional<Int128>(p.limit()) : std::nullopt) {
    *order_.mutable_order_by() = p.order_by();
  }

  // Output rows are input rows, exchanged by the group key.
  Partitioning partitioning() const override { return Partitioning::By(key_); }

  Delta Pull(const TickCtx& ctx) override {
    Delta out;
    std::vector<RowUpdate> rows = PullExchanged(input_, ctx, key_, false, &out.errors);
    ForEachGroupChange(
        rows, key_,
        [&](const std::string& key, const RowUpdate& u) {
          auto it = groups_.try_emplace(key, Group{Rows(Less{&order_}), {}}).first;
          Int128& count = it->second.rows[u.row];
          count += u.diff;
          if (count == 0) it->second.rows.erase(u.row);
        },
        [&](Time t, const std::string& key) {
          auto it = groups_.find(key);
          Window now = WindowOf(it->second.rows);
          EmitChange(it->second.out, now, t, &out);
          it->second.out = std::move(now);
          if (it->second.rows.empty()) groups_.erase(it);
        });
    return out;
  }

 private:
  struct Less {
    const pb::Finishing* order;
    bool operator()(const Row& a, const Row& b) const { return FinishingLess(*order, a, b); }
  };
  using Rows = std::map<Row, Int128, Less>;
  // The rows of a group's window, in order, with the number of their positions inside it.
  using Window = std::vector<std::pair<Row, Int128>>;
  struct Group {
    Rows rows;   // every row of the group with a non-zero count
    Window out;  // what was emitted
  };

  Window WindowOf(const Rows& rows) const {
    Window w;
    Int128 pos = 0;  // positions taken by the rows before
    const std::optional<Int128> end =
        limit_ ? std::optional<Int128>(offset_ + *limit_) : std::nullopt;
    for (const auto& [row, count] : rows) {
      if (end && pos >= *end) break;
      if (count <= 0) continue;
      const Int128 first = pos, last = pos + count;  // positions [first, last)
      pos = last;
      const Int128 lo = first > offset_ ? first : offset_;
      const Int128 hi = end && last > *end ? *end : last;
      if (hi > lo) w.emplace_back(row, hi - lo);
    }
    return w;
  }

  // Emits now − before; both are in the group's row order.
  void EmitChange(const Window& before, const Window& now, Time t, Delta* out) const {
    auto emit = [&](const Row& row, Int128 diff) {
      PushCount(diff, [&](std::int64_t part) { out->rows.push_back({row, t, part}); });
    };
    const Less less{&order_};
    std::size_t i = 0, j = 0;
    while (i < before.size() || j < now.size()) {
      if (j == now.size() || (i < before.size() && less(before[i].first, now[j].first))) {
        emit(before[i].first, -before[i].second);
        ++i;
      } else if (i == before.size() || less(now[j].first, before[i].first)) {
        emit(now[j].first, now[j].second);
        ++j;
      } else {
        emit(now[j].first, now[j].second - before[i].second);
        ++i;
        ++j;
      }
    }
  }

  Node* input_;
  std::vector<std::uint32_t> key_;
  pb::Finishing order_;  // only its order_by: the order FinishingLess defines
  Int128 offset_;
  std::optional<Int128> limit_;
  std::map<std::string, Group> groups_;
};

}  // namespace

std::unique_ptr<Node> MakeTopK(Node* input, const pb::Plan::TopK& top_k) {
  return std::make_unique<TopKNode>(input, top_k);
}

}  // namespace tandem::workers
