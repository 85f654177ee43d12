// tandem-ctl: finding the latest time an index can be read at when the replica has not reported
// its frontier (frontiers are reported as they advance, not again to a newcomer): probe peeks
// with limit 0, canceled when they would wait.
#pragma once

#include <chrono>

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

}  // namespace tandem::ctl
