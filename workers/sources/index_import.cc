#include "workers/sources/index_import.h"

#include <string>

#include "base/check.h"
#include "base/row.h"
#include "shm/routing.h"

namespace tandem::workers {

Delta ImportNode::Pull(const TickCtx& ctx) {
  Delta d;
  if (const auto& error = index_->error()) {
    if (!errored_ && until_.Greater(as_of_)) d.errors.push_back({*error, as_of_, 1});
    errored_ = true;
    return d;
  }
  const Time lo = ctx.lo;
  auto in_tick = [&](Time t) { return t >= lo && ctx.hi.Greater(t); };
  for (const shm::BatchView& b : index_->Batches()) {
    const shm::BatchHeader& h = b.header();
    if (h.update_count == 0 || h.max_time < lo || !ctx.hi.Greater(h.min_time)) continue;
    for (std::uint32_t k = 0; k < b.key_count(); ++k) {
      const std::string_view key = b.key(k);
      const bool error = !key.empty() && key[0] == shm::kErrorKeyPrefix;
      for (std::uint32_t v = b.vals_begin(k); v < b.vals_end(k); ++v) {
        std::optional<Row> row;  // decoded once per value, and only when an update is in the tick
        for (std::uint32_t u = b.updates_begin(v); u < b.updates_end(v); ++u) {
          const Time t = b.time(u);
          if (!in_tick(t)) continue;
          if (error) {
            if (until_.Greater(t)) {
              d.errors.push_back({std::string(key.substr(1)), std::max(t, as_of_), b.diff(u)});
            }
            continue;
          }
          if (!row) {
            auto decoded = DecodeRow(b.val(v));
            TANDEM_CHECK(decoded.ok(), "an index value that is not an encoded row");
            row = std::move(decoded).value();
          }
          Emit(d, *row, t, b.diff(u));
        }
      }
    }
  }
  return d;
}

}  // namespace tandem::workers
