#include "workers/operators/threshold.h"

#include <optional>

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
    // Touched entries → their count before this time, and the spelling printed then for a row
    // that can be spelled apart (the others print their one spelling throughout).
    struct Before {
      Int128 count;
      std::optional<Row> printed;
    };
    std::map<std::string, Before> before;
    for (std::size_t i = b; i < e; ++i) {
      const Row& row = rows[i].row;
      key.clear();
      AppendKey(row, &key);
      auto [it, fresh] = state_.try_emplace(key);
      Entry& entry = it->second;
      if (fresh) entry.printed = row;
      const bool spelled = Spellings::Spelled(row);
      auto [was, first] = before.try_emplace(key, Before{entry.count, std::nullopt});
      if (first && spelled) was->second.printed = entry.printed;
      entry.count += rows[i].diff;
      if (spelled) entry.spellings.Add(row, rows[i].diff);
    }
    auto emit = [&](const Row& row, Int128 diff) {
      PushCount(diff, [&](std::int64_t part) { out.rows.push_back({row, t, part}); });
    };
    for (auto& [k, was] : before) {
      auto it = state_.find(k);
      Entry& entry = it->second;
      const Row* printed = entry.spellings.Printed();
      if (!was.printed || printed == nullptr || CompareRow(*printed, *was.printed) == 0) {
        emit(entry.printed, Output(entry.count) - Output(was.count));
      } else {  // another spelling is printed now: the old one's output goes
        entry.printed = *printed;
        emit(*was.printed, -Output(was.count));
        emit(entry.printed, Output(entry.count));
      }
      if (entry.count == 0 && entry.spellings.empty()) state_.erase(it);
    }
  });
  return out;
}

}  // namespace tandem::workers
