// How generator sources advance per lockstep step (DataflowShared::Prepare): a step takes at most
// the runtime's step budget of ticks, and when more ticks are already due the runtime is told to
// step again at once instead of sleeping until the next tick (the bug this pins: an unthrottled
// source, or one behind schedule, used to sleep up to 100 ms between steps).
#include <gtest/gtest.h>

#include <chrono>

#include "workers/dataflow.h"

namespace tandem::workers {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A dataflow with one key_value source ticking every `interval_us` (0 = as fast as possible),
// created at `created`, already past as_of 0.
std::unique_ptr<DataflowShared> KeyValueDataflow(std::uint64_t interval_us,
                                                 Clock::time_point created) {
  auto d = std::make_unique<DataflowShared>();
  d->as_of = 0;
  auto s = std::make_unique<SourceShared>();
  s->id = "u1";
  auto* kv = s->source.mutable_key_value();
  kv->set_keys(10);
  kv->set_updates_per_tick(1);
  kv->set_tick_interval_us(interval_us);
  s->created = created;
  s->upper = Frontier::At(1);
  d->target = Frontier::At(1);  // processed up to the source's upper, as after a step
  d->sources.push_back(std::move(s));
  return d;
}

TEST(SourcePacing, UnthrottledSourceAdvancesByTheStepBudgetAndStepsAgainAtOnce) {
  const auto now = Clock::now();
  const auto owned = KeyValueDataflow(0, now);
  DataflowShared& d = *owned;
  EXPECT_EQ(d.Prepare(1, 3, now), now);
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(4));
  EXPECT_EQ(d.target, Frontier::At(4));
}

TEST(SourcePacing, SourceBehindScheduleCatchesUpInBudgetSizedStepsWithoutSleeping) {
  const auto now = Clock::now();
  // 1 ms ticks, created 100 ms ago: ~100 ticks are due, the budget allows 10 per step.
  const auto owned = KeyValueDataflow(1000, now - 100ms);
  DataflowShared& d = *owned;
  EXPECT_EQ(d.Prepare(1, 10, now), now);
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(11));
}

TEST(SourcePacing, SourceOnScheduleSleepsUntilItsNextTick) {
  const auto now = Clock::now();
  const auto owned = KeyValueDataflow(1000, now - 100ms);
  DataflowShared& d = *owned;
  d.Prepare(1, 1000, now);  // catches up entirely
  const Time upper = d.sources[0]->upper.time();
  EXPECT_GE(upper, 100u);
  const Clock::time_point next = d.Prepare(1, 1000, now);
  EXPECT_GT(next, now);
  EXPECT_LE(next, now + 1ms);
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(upper));  // nothing new is due yet
}

TEST(SourcePacing, AStalledDataflowStartsNoTickAndRetriesWithBackoff) {
  const auto now = Clock::now();
  const auto owned = KeyValueDataflow(0, now);
  DataflowShared& d = *owned;
  d.Prepare(1, 3, now);
  ASSERT_EQ(d.target, Frontier::At(4));
  d.stalled = true;  // a worker found the segment full during the tick to 4
  EXPECT_EQ(d.Prepare(1, 3, now), now + 10ms);
  EXPECT_EQ(d.frontier, Frontier::At(4));
  EXPECT_EQ(d.target, Frontier::At(4)) << "no new tick while stalled";
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(4)) << "the source waits";
  EXPECT_FALSE(d.retry_pending) << "not before the backoff";
  d.stalled = true;  // still waiting (not retried)
  EXPECT_EQ(d.Prepare(1, 3, now + 5ms), now + 10ms);
  EXPECT_FALSE(d.retry_pending);
  d.stalled = true;
  EXPECT_EQ(d.Prepare(1, 3, now + 10ms), now + 10ms);
  EXPECT_TRUE(d.retry_pending) << "the backoff has passed: retry";
  d.stalled = true;  // the retry found no room either
  EXPECT_EQ(d.Prepare(1, 3, now + 10ms), now + 30ms) << "backs off to 20 ms";
  EXPECT_FALSE(d.retry_pending);
  // A retry that succeeds: nobody sets stalled; ticks go on at once.
  EXPECT_EQ(d.Prepare(1, 3, now + 30ms), now + 30ms);
  EXPECT_TRUE(d.retry_pending);
  EXPECT_EQ(d.target, Frontier::At(7));
}

TEST(SourcePacing, AGeneratorHeldBackByAnotherSourceDoesNotRunAheadOrSpin) {
  const auto now = Clock::now();
  const auto owned = KeyValueDataflow(0, now);
  DataflowShared& d = *owned;
  auto held = std::make_unique<SourceShared>();  // a second source whose upper stays at 1
  held->id = "u3";
  held->source.mutable_key_value()->set_tick_interval_us(1000000000);
  held->created = now;
  held->upper = Frontier::At(1);
  d.sources.push_back(std::move(held));
  EXPECT_EQ(d.Prepare(1, 3, now), now) << "the generator advances: step";
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(4));
  EXPECT_EQ(d.target, Frontier::At(1)) << "held back by the other source";
  const auto next = d.Prepare(1, 3, now);
  EXPECT_GT(next, now) << "nothing new to do: no busy loop";
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(4)) << "at most the budget ahead of the dataflow";
  EXPECT_TRUE(d.budget_limited);
}

TEST(SourcePacing, AGeneratorStopsAtUntilWithoutSpinning) {
  const auto now = Clock::now();
  const auto owned = KeyValueDataflow(0, now);
  DataflowShared& d = *owned;
  d.until = Frontier::At(5);
  EXPECT_EQ(d.Prepare(1, 3, now), now);
  EXPECT_EQ(d.target, Frontier::At(4));
  d.Prepare(1, 3, now);
  EXPECT_EQ(d.target, Frontier::At(5));
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(5));
  EXPECT_GT(d.Prepare(1, 3, now), now) << "past until there is nothing to do";
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(5));
}

TEST(SourcePacing, ABudgetThatHeldNothingBackIsNotReportedAsLimiting) {
  const auto now = Clock::now();
  const auto owned = KeyValueDataflow(1000, now - 100ms);
  DataflowShared& d = *owned;
  d.Prepare(1, 1000, now);  // catches up entirely
  EXPECT_FALSE(d.budget_limited);
  d.Prepare(1, 1, now + 50ms);
  EXPECT_TRUE(d.budget_limited) << "50 ticks were due, 1 was allowed";
}

}  // namespace
}  // namespace tandem::workers
