// tandem-ctl: finding the latest time an index can be read at when the replica has not reported
// its frontier (frontiers are reported as they advance, not again to a newcomer): probe peeks
// with limit 0, canceled when they would wait.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "base/time.h"
#include "tools/ctl/session.h"

namespace tandem::ctl {

// How long `peek --at latest` waits for a frontier report before probing.
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

// Latest for `what` (a command reading index `id`): the freshest write frontier reported for the
// index, minus one; the largest time when it is closed. Frontiers are reported as they advance,
// so one that has not moved since an earlier controller saw it is not reported again: then it is
// found by probing (ProbeLatest). An index with no complete time yet is refused, or with
// `wait_until`, waited for until then. Returns an exit code when the session ended or the probe
// was refused (printed).
std::optional<int> LatestTime(
    Session& s, const std::string& id, const std::string& what, Latest& latest,
    std::optional<std::chrono::steady_clock::time_point> wait_until = std::nullopt);

}  // namespace tandem::ctl
