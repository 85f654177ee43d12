#include "workers/temporal_bounds.h"

#include <algorithm>

#include "base/check.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

constexpr std::int64_t kMicrosPerTick = 1000;  // a Tandem time is a millisecond

// Exact floor and ceiling of e / 1000 (C++ division truncates towards zero). Neither overflows:
// |e / 1000| is far from the int64 limits.
std::int64_t FloorMillis(std::int64_t e) {
  return e / kMicrosPerTick - (e % kMicrosPerTick < 0 ? 1 : 0);
}
std::int64_t CeilMillis(std::int64_t e) {
  return e / kMicrosPerTick + (e % kMicrosPerTick > 0 ? 1 : 0);
}

// The first time t >= 0 at which a bound starting at `millis` holds.
Time TimeFrom(std::int64_t millis) { return millis <= 0 ? 0 : static_cast<Time>(millis); }

void RaiseLower(std::int64_t millis, Validity* v) {
  v->lower = std::max(v->lower, TimeFrom(millis));
}
void LowerUpper(std::int64_t millis, Validity* v) {
  v->upper = Min(v->upper, Frontier::At(TimeFrom(millis)));
}

}  // namespace

void Narrow(pb::BinaryFunc op, std::int64_t e, Validity* v) {
  switch (op) {
    case pb::GE:
      RaiseLower(CeilMillis(e), v);
      return;
    case pb::GT:
      RaiseLower(FloorMillis(e) + 1, v);
      return;
    case pb::LT:
      LowerUpper(CeilMillis(e), v);
      return;
    case pb::LE:
      LowerUpper(FloorMillis(e) + 1, v);
      return;
    case pb::EQ:
      RaiseLower(CeilMillis(e), v);
      LowerUpper(FloorMillis(e) + 1, v);
      return;
    default:
      break;
  }
  TANDEM_CHECK(false, "a temporal bound that is not EQ, LT, LE, GT or GE passed validation");
}

}  // namespace tandem::workers
