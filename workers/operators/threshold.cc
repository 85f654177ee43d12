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
    // Touched entries → (the spelling printed, the count) before this time.
    std::map<std::string, std::pair<Row, Int128>> before;
    for (std::size_t i = b; i < e; ++i) {
      const Row& row = rows[i].row;
      key.clear();
      AppendKey(row, &key);
      auto [it, fresh] = state_.try_emplace(key);
      Entry& entry = it->second;
      if (fresh) entry.printed = row;
      before.try_emplace(key, entry.printed, entry.count);
      entry.count += rows[i].diff;
      if (Spellings::Spelled(row, nullptr)) entry.spellings.Add(row, rows[i].diff);
    }
    auto emit = [&](const Row& row, Int128 diff) {
      PushCount(diff, [&](std::int64_t part) { out.rows.push_back({row, t, part}); });
    };
    for (auto& [k, was] : before) {
      auto it = state_.find(k);
      Entry& entry = it->second;
      if (const Row* printed = entry.spellings.Printed()) entry.printed = *printed;
      const auto& [was_printed, was_count] = was;
      if (CompareRow(was_printed, entry.printed) == 0) {
        emit(entry.printed, Output(entry.count) - Output(was_count));
      } else {  // another spelling is printed now: the old one's output goes
        emit(was_printed, -Output(was_count));
        emit(entry.printed, Output(entry.count));
      }
      if (entry.count == 0 && entry.spellings.empty()) state_.erase(it);
    }
  });
  return out;
}

}  // namespace tandem::workers
