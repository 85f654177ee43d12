#include "workers/sources/index_import.h"

#include <string>

#include "base/check.h"
#include "base/row.h"
#include "shm/routing.h"
#include "workers/operators/memory_budget.h"

namespace tandem::workers {

bool IsErrorKey(std::string_view key) { return !key.empty() && key[0] == shm::kErrorKeyPrefix; }

Row DecodeIndexValue(std::string_view val) {
  auto row = DecodeRow(val);
  TANDEM_CHECK(row.ok(), "an index value that is not an encoded row");
  return std::move(row).value();
}

Delta ImportNode::Pull(const TickCtx& ctx) {
  Delta d;
  if (const auto& error = index_->error()) {
    if (!errored_ && until_.Greater(as_of_)) d.errors.push_back({*error, as_of_, 1});
    errored_ = true;
    return d;
  }
  // A one-shot's decoded rows are charged to its budget: past it, nothing more is decoded.
  BudgetMeter meter(ctx.budget);
  // Decoded once per value, and only when an update of it is in the tick.
  const shm::BatchView* batch = nullptr;
  std::uint32_t value = 0;
  std::optional<Row> row;
  ForEachUpdateIn(index_->Batches(), ctx.lo, ctx.hi,
                  [&](const shm::BatchView& b, std::string_view key, std::uint32_t v, Time t,
                      std::int64_t diff) {
                    if (IsErrorKey(key)) {
                      if (until_.Greater(t)) {
                        d.errors.push_back({std::string(key.substr(1)), std::max(t, as_of_), diff});
                      }
                      return;
                    }
                    if (meter.stopped()) return;
                    if (batch != &b || value != v || !row) {
                      batch = &b;
                      value = v;
                      row = DecodeIndexValue(b.val(v));
                    }
                    const std::size_t before = d.rows.size();
                    Emit(d, *row, t, diff);
                    if (d.rows.size() > before) meter.Charge(d.rows.back());
                  });
  return d;
}

}  // namespace tandem::workers
