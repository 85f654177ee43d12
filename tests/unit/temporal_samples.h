// Builders for temporal filters (DESIGN §16) in tests: the time itself, TIMESTAMPTZ and INTERVAL
// literals, and the comparisons a sliding window is made of. No gtest here.
#pragma once

#include <cstdint>
#include <utility>

#include "ipc/codec.h"
#include "unit/protocol_samples.h"

namespace tandem::ipc::samples {

// tandem_now().
inline pb::ScalarExpr NowExpr() {
  pb::ScalarExpr e;
  e.mutable_now();
  return e;
}

inline pb::Datum TimestampTzDatum(std::int64_t micros) {
  pb::Datum d;
  d.set_timestamptz(micros);
  return d;
}
inline pb::ScalarExpr TimestampTzLit(std::int64_t micros) {
  return Lit(TimestampTzDatum(micros), pb::TIMESTAMPTZ);
}
// An interval of microseconds only ('10 seconds' is 10'000'000).
inline pb::ScalarExpr IntervalLit(std::int64_t micros) {
  pb::Datum d;
  d.mutable_interval()->set_micros(micros);
  return Lit(std::move(d), pb::INTERVAL);
}

// The predicates of "the rows of the last `window_micros`" over a TIMESTAMPTZ column `ts`:
// now >= ts and now < ts + window (in SQL: tandem_now() >= ts AND tandem_now() < ts + INTERVAL).
inline std::vector<pb::ScalarExpr> SlidingWindow(std::uint32_t ts, std::int64_t window_micros) {
  return {Binary(pb::GE, NowExpr(), Col(ts)),
          Binary(pb::LT, NowExpr(), Binary(pb::ADD, Col(ts), IntervalLit(window_micros)))};
}

}  // namespace tandem::ipc::samples
