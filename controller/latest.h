// The latest time an index can be read at (a read "at latest"): the freshest write frontier the
// session's replicas reported for it, minus one — or, when none reported one (frontiers are
// reported as they advance, not again to a newcomer), found by probe peeks with limit 0, canceled
// when they would wait. Only replicas that may answer the session's reads count
// (Session::ReadsFrom).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"
#include "controller/session.h"

namespace tandem::controller {

// How long LatestTime waits for a frontier report before probing.
inline constexpr std::chrono::milliseconds kFrontierWait{300};

// The latest time an index can be read at, and whether it is closed.
struct Latest {
  Time time = 0;
  bool closed = false;
};

// kMaxTime when index `id` is readable there (closed: the empty frontier is above every time),
// else upper - 1, by exponential then binary search. FailedPrecondition when it has no complete
// time yet, InvalidArgument when a probe is refused, Unavailable when the session ends.
Result<Latest> ProbeLatest(Session& s, const std::string& id);

// The latest time index `id` can be read at: the freshest write frontier reported for the index,
// minus one; the largest time when it is closed. Frontiers are reported as they advance, so one
// that has not moved since an earlier controller saw it is not reported again: then it is found
// by probing (ProbeLatest). An index with no complete time yet is refused (FailedPrecondition),
// or with `wait_until`, waited for until then (or an interrupt). Unavailable when the session
// ended (its EndReason, or the probe's); another error when a probe was refused (its reason).
Result<Latest> LatestTime(
    Session& s, const std::string& id,
    std::optional<std::chrono::steady_clock::time_point> wait_until = std::nullopt);

// The latest time every index of `ids` can be read at (a read over all of them: DESIGN §15 "one
// timeline"): the earliest of their LatestTimes, closed when every one is closed. The first
// error of LatestTime is returned. REQUIRES: `ids` is not empty.
Result<Latest> LatestOfAll(
    Session& s, const std::vector<std::string>& ids,
    std::optional<std::chrono::steady_clock::time_point> wait_until = std::nullopt);

}  // namespace tandem::controller
