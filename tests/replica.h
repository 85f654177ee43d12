// A real replica for a multi-process test: tandem-supervisor with the real tandem-worker, ready,
// and a controller session that said Hello (`ready` says whether all of that worked).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/time.h"
#include "supervisor_harness.h"

namespace tandem::testing {

struct Replica {
  explicit Replica(bool two_runtime = true, int workers = 2, std::vector<std::string> extra = {})
      : sup({.extra_args = std::move(extra),
             .two_runtime = two_runtime,
             .workers = workers,
             .worker_binary = TANDEM_WORKER_BIN,
             .shm_size = "64MiB"}) {
    ready = sup.WaitReady();
    if (ready) {
      ctl = std::make_unique<TestController>(sup.controller_endpoint());
      ready = ctl->Hello();
    }
  }
  SupervisorProcess sup;
  std::unique_ptr<TestController> ctl;
  bool ready = false;
};

// Waits (10 s at most) until index `id`'s write frontier, in the Frontiers the controller session
// is sent, passes `t` (or closes).
inline bool AwaitUpper(Replica& r, const std::string& id, Time t) {
  return r.ctl
      ->ReceiveUntil(
          [&](const ipc::pb::Response& x) {
            if (!x.has_frontiers() || x.frontiers().id() != id) return false;
            const auto& w = x.frontiers().write().elements();
            return w.empty() || w[0] > t;
          },
          std::chrono::seconds(10))
      .has_value();
}

}  // namespace tandem::testing
