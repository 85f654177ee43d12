// Temporal bounds (DESIGN §16): the times at which a row of a temporal filter is in the view, and
// the updates that put it there and take it out again.
//
// The time itself (tandem_now(), ipc/temporal_filter.h) at Tandem time t is t milliseconds since
// the Unix epoch — a table's time — so t × 1000 microseconds as a TIMESTAMPTZ. A comparison with a
// row's TIMESTAMPTZ value e (microseconds) holds at the times
//   now >= e   t >= ceil(e / 1000)               a lower bound
//   now >  e   t >= floor(e / 1000) + 1          a lower bound
//   now <  e   t <  ceil(e / 1000)               an upper bound
//   now <= e   t <  floor(e / 1000) + 1          an upper bound
//   now =  e   both now >= e and now <= e: [e / 1000, e / 1000 + 1) when e is a whole
//              millisecond, no time otherwise
// with floor and ceil exact for negative e too. Times start at 0: a lower bound below 0 bounds
// nothing, an upper bound at or below 0 holds at no time. Several bounds hold at the intersection
// of their times: from the greatest lower bound to the least upper bound.
#pragma once

#include <cstdint>
#include <limits>

#include "base/time.h"
#include "ipc/codec.h"

namespace tandem::workers {

// The times [lower, upper) at which a row's bounds all hold; no bound: every time.
struct Validity {
  Time lower = 0;
  Frontier upper = Frontier::Empty();  // empty: the bounds hold from `lower` on, forever
  // True when the bounds hold at no time.
  bool empty() const { return !upper.Greater(lower); }
};

// Narrows `*validity` to the times at which `now op e_micros` also holds.
// REQUIRES: `op` is EQ, LT, LE, GT or GE (the comparison written with the time on the left).
void Narrow(ipc::pb::BinaryFunc op, std::int64_t e_micros, Validity* validity);

// The updates of a row whose bounds hold over `validity`, for its update (time, diff) at the
// filter's input: it enters the view at max(time, lower) with `diff` and, when the bounds stop
// holding after that, leaves it at `upper` with -diff; nothing when they hold at no time from
// `time` on. Calls emit(time, diff) for each update, in time order (the retraction of the diff
// INT64_MIN is two updates, INT64_MAX and 1: it has no int64 negation).
template <typename Emit>
void ScheduleUpdates(const Validity& validity, Time time, std::int64_t diff, Emit&& emit) {
  const Time enter = time > validity.lower ? time : validity.lower;
  if (!validity.upper.Greater(enter)) return;
  emit(enter, diff);
  if (validity.upper.empty()) return;
  const Time leave = validity.upper.time();
  if (diff == std::numeric_limits<std::int64_t>::min()) {
    emit(leave, std::numeric_limits<std::int64_t>::max());
    emit(leave, std::int64_t{1});
  } else {
    emit(leave, -diff);
  }
}

}  // namespace tandem::workers
