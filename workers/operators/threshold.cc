#include "workers/operators/threshold.h"

#include "workers/exchange.h"

namespace tandem::workers {

Int128 ThresholdNode::Output(Int128 count) const {
  if (count <= 0) return 0;
  return kind_ == Kind::kDistinct ? 1 : count;
}

Delta ThresholdNode::Pull(const TickCtx& ctx) {
  Delta out;
  std::vector<RowUpdate> rows = PullExchanged(input_, ctx, {}, true, &out.errors);
  std::string key;
  ForEachTime(rows, [&](Time t, std::size_t b, std::size_t e) {
    std::map<std::string, Int128> before;  // touched rows → count before this time
    for (std::size_t i = b; i < e; ++i) {
      key.clear();
      AppendEncodedRow(rows[i].row, &key);
      auto& [row, count] = state_[key];
      if (!before.count(key)) before[key] = count;
      if (row.empty() && !rows[i].row.empty()) row = rows[i].row;
      count += rows[i].diff;
    }
    for (const auto& [k, was] : before) {
      auto it = state_.find(k);
      const Int128 change = Output(it->second.second) - Output(was);
      PushCount(change, [&](std::int64_t part) {
        out.rows.push_back({it->second.first, t, part});
      });
      if (it->second.second == 0) state_.erase(it);
    }
  });
  return out;
}

}  // namespace tandem::workers
