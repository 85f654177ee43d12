#include "workers/operators/mfp.h"

#include <array>
#include <utility>

namespace tandem::workers {

Delta MfpNode::Pull(const TickCtx& ctx) {
  Delta d = input_->Pull(ctx);
  if (mfp_.identity()) return d;
  if (mfp_.temporal()) return PullTemporal(ctx, std::move(d));
  std::vector<RowUpdate> out;
  out.reserve(d.rows.size());
  std::string error;
  for (RowUpdate& u : d.rows) {
    switch (mfp_.Apply(&u.row, &error)) {
      case Mfp::Outcome::kKept:
        out.push_back(std::move(u));
        break;
      case Mfp::Outcome::kDropped:
        break;
      case Mfp::Outcome::kError:
        d.errors.push_back({error, u.time, u.diff});
        break;
    }
  }
  d.rows = std::move(out);
  return d;
}

Delta MfpNode::PullTemporal(const TickCtx& ctx, Delta d) {
  std::vector<RowUpdate> out;
  out.reserve(d.rows.size());
  std::string error;
  Validity validity;
  for (RowUpdate& u : d.rows) {
    switch (mfp_.Apply(&u.row, &error, &validity)) {
      case Mfp::Outcome::kKept: {
        // At most three updates of one row: each takes a copy but the last, which takes the row.
        std::array<std::pair<Time, std::int64_t>, 3> updates;
        std::size_t n = 0;
        ScheduleUpdates(validity, u.time, u.diff, [&](Time t, std::int64_t diff) {
          if (until_.Greater(t)) updates[n++] = {t, diff};
        });
        for (std::size_t i = 0; i < n; ++i) {
          RowUpdate update{i + 1 == n ? std::move(u.row) : u.row, updates[i].first,
                           updates[i].second};
          if (ctx.hi.Greater(update.time)) {
            out.push_back(std::move(update));
          } else {
            pending_.Push(std::move(update));
          }
        }
        break;
      }
      case Mfp::Outcome::kDropped:
        break;
      case Mfp::Outcome::kError:
        d.errors.push_back({error, u.time, u.diff});
        break;
    }
  }
  // What earlier ticks kept for this one. Pulled in every tick, the node keeps nothing before lo.
  pending_.ReleaseBefore(ctx.hi, &out);
  d.rows = std::move(out);
  return d;
}

}  // namespace tandem::workers
