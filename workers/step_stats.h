// Step statistics of the lockstep runtime's workers (maintenance, solo), kept in the segment
// (shm/layout.h StepStatsData) for the supervisor's /metrics: each step's duration in a histogram,
// and the worker's busy and waiting time.
//
// Each worker thread binds its own StepStatsData (StepStats::Bind) before its loop; every barrier
// it waits at goes through TimedArriveAndWait, which adds the wait to the bound stats. A thread
// with nothing bound (a one-shot dataflow's compute thread, a unit test) waits untimed: the same
// code serves both.
//
// Thread safety: the thread-local state is the calling thread's; the segment's words are written
// by their worker's thread only (relaxed adds), read by anyone.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "shm/layout.h"

namespace tandem::workers {

class StepStats {
 public:
  using Clock = std::chrono::steady_clock;

  // The calling thread's stats from now on (nullptr: none).
  static void Bind(shm::StepStatsData* data) {
    bound_ = data;
    waited_ns_ = 0;
  }
  static bool bound() { return bound_ != nullptr; }
  // Nanoseconds this thread has waited at barriers since Bind (whether bound or not: 0 if not).
  static std::uint64_t waited_ns() { return waited_ns_; }

  static void AddWaiting(Clock::duration d) {
    const std::uint64_t ns = Ns(d);
    waited_ns_ += ns;
    if (bound_) bound_->waiting_ns.fetch_add(ns, std::memory_order_relaxed);
  }
  static void AddBusy(Clock::duration d) {
    if (bound_) bound_->busy_ns.fetch_add(Ns(d), std::memory_order_relaxed);
  }
  // One step of `d` (wall time, exchange barriers included) into the histogram.
  static void RecordStep(Clock::duration d) {
    if (!bound_) return;
    const std::uint64_t ns = Ns(d);
    bound_->step_buckets[BucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
    bound_->step_ns.fetch_add(ns, std::memory_order_relaxed);
    bound_->step_count.fetch_add(1, std::memory_order_relaxed);
  }

  // The bucket of a step of `ns` nanoseconds: the first i with ns <= UpperBound(i) (in seconds),
  // the last (+Inf) beyond them all.
  static std::size_t BucketOf(std::uint64_t ns) {
    for (std::size_t i = 0; i + 1 < shm::kStepBuckets; ++i) {
      if (static_cast<double>(ns) <= UpperBound(i) * 1e9) return i;
    }
    return shm::kStepBuckets - 1;
  }
  // Bucket i's upper bound in seconds, i < kStepBuckets - 1: 2^(kStepBucketMinLog2 + i).
  static constexpr double UpperBound(std::size_t i) {
    const int e = shm::kStepBucketMinLog2 + static_cast<int>(i);
    double v = 1;
    for (int k = 0; k < (e < 0 ? -e : e); ++k) v = e < 0 ? v / 2 : v * 2;
    return v;
  }

 private:
  static std::uint64_t Ns(Clock::duration d) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    return ns > 0 ? static_cast<std::uint64_t>(ns) : 0;
  }
  static inline thread_local shm::StepStatsData* bound_ = nullptr;
  static inline thread_local std::uint64_t waited_ns_ = 0;
};

// barrier.arrive_and_wait(), the wait added to the calling worker's waiting time when it has
// stats bound (untimed otherwise: no clock read).
template <typename Barrier>
void TimedArriveAndWait(Barrier& barrier) {
  if (!StepStats::bound()) {
    barrier.arrive_and_wait();
    return;
  }
  const auto start = StepStats::Clock::now();
  barrier.arrive_and_wait();
  StepStats::AddWaiting(StepStats::Clock::now() - start);
}

}  // namespace tandem::workers
