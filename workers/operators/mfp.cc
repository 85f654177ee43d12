#include "workers/operators/mfp.h"

namespace tandem::workers {

Delta MfpNode::Pull(const TickCtx& ctx) {
  Delta d = input_->Pull(ctx);
  if (mfp_.identity()) return d;
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

}  // namespace tandem::workers
