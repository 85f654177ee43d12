// Blocking calls of the replica driver for SQL threads: post a request, wait for its answer,
// give up early on the session's cancel. The driver answers every request by its deadline (it
// enforces it), so the wait is bounded; a margin beyond it guards against a driver that stopped.
//
//   auto rows = AwaitDriver<PeekAnswer>(session.cancel, driver, deadline,
//       [&](Done<PeekAnswer> done) { return driver.Peek(std::move(request), std::move(done)); });
//
// A canceled wait returns Unavailable("canceled") at once (the executor answers 57014) and asks
// the driver to cancel the request. Writes and DDL are not cancelable once sent: wait for them
// with `cancelable` false.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "frontend/server/cancel_token.h"
#include "frontend/server/replica_driver.h"

namespace tandem::frontend {

// How long past its deadline a request's answer is waited for before the driver counts as gone.
inline constexpr std::chrono::seconds kDriverAnswerMargin{5};

template <typename T>
Result<T> AwaitDriver(CancelToken& cancel, ReplicaDriver& driver, DriverClock::time_point deadline,
                      const std::function<ReplicaDriver::RequestId(Done<T>)>& post,
                      bool cancelable = true) {
  struct State {
    Mutex mu;
    CondVar cv;
    std::optional<Result<T>> answer;
    bool canceled = false;
  };
  auto state = std::make_shared<State>();
  const ReplicaDriver::RequestId id = post([state](Result<T> answer) {
    MutexLock lock(state->mu);
    state->answer.emplace(std::move(answer));
    state->cv.NotifyAll();
  });
  if (cancelable) {
    cancel.OnCancel([state, &driver, id] {
      {
        MutexLock lock(state->mu);
        state->canceled = true;
        state->cv.NotifyAll();
      }
      driver.Cancel(id);
    });
  }
  const auto give_up = deadline + kDriverAnswerMargin;
  std::optional<Result<T>> out;
  {
    MutexLock lock(state->mu);
    while (!state->answer && !state->canceled) {
      if (!state->cv.WaitUntil(state->mu, give_up) && DriverClock::now() >= give_up) break;
    }
    if (state->answer) {
      out.emplace(std::move(*state->answer));
    } else if (state->canceled) {
      out.emplace(Status::Unavailable("canceled"));
    } else {
      out.emplace(Status::Unavailable("the replica driver did not answer"));
    }
  }
  if (cancelable) cancel.ClearOnCancel();
  return std::move(*out);
}

}  // namespace tandem::frontend
