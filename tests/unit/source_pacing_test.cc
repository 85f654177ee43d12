// How sources advance per lockstep step (DataflowShared::Prepare, Source::Advance): a step takes at
// most the runtime's step budget of ticks, and when more ticks are already due the runtime is told
// to step again at once instead of sleeping until the next tick (the bug this pins: an unthrottled
// source, or one behind schedule, used to sleep up to 100 ms between steps).
#include <gtest/gtest.h>

#include <chrono>

#include "temp_dir.h"
#include "workers/dataflow.h"
#include "workers/sources/generator.h"
#include "workers/sources/log.h"

namespace tandem::workers {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A dataflow with one key_value source ticking every `interval_us` (0 = as fast as possible),
// created at `created`, already past as_of 0.
std::unique_ptr<DataflowShared> KeyValueDataflow(std::uint64_t interval_us,
                                                 Clock::time_point created,
                                                 std::uint64_t updates_per_tick = 1) {
  auto d = std::make_unique<DataflowShared>();
  d->as_of = 0;
  ipc::pb::SourceImport import;
  import.set_id("u1");
  auto* kv = import.mutable_source()->mutable_key_value();
  kv->set_keys(10);
  kv->set_updates_per_tick(updates_per_tick);
  kv->set_tick_interval_us(interval_us);
  auto s = MakeSource(import, created);
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

// Issue 12 item 1: the step budget is the runtime's, grown by light dataflows; a heavy
// generator takes only as many ticks as kMaxStepRows allows (at least one), so its step's rows
// stay bounded (1024 ticks of 10^6 updates used to be reserved at once: bad_alloc).
TEST(SourcePacing, AHeavyGeneratorTakesNoMoreTicksThanItsRowBoundAllows) {
  const auto now = Clock::now();
  const auto heavy = KeyValueDataflow(0, now, 1000000);  // 2·10^6 rows a tick
  EXPECT_EQ(heavy->Prepare(1, kMaxStepTicks, now), now);
  EXPECT_EQ(heavy->sources[0]->upper, Frontier::At(2)) << "one tick";
  const auto medium = KeyValueDataflow(0, now, 1000);  // 2000 rows a tick: 524 ticks a step
  medium->Prepare(1, kMaxStepTicks, now);
  EXPECT_EQ(medium->sources[0]->upper, Frontier::At(1 + kMaxStepRows / 2000));
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
  ipc::pb::SourceImport import;  // a second source whose upper stays at 1
  import.set_id("u3");
  import.mutable_source()->mutable_key_value()->set_tick_interval_us(1000000000);
  auto held = MakeSource(import, now);
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

// A dataflow with one log source (k int64) on `path`.
std::unique_ptr<DataflowShared> LogDataflow(const std::string& path) {
  auto d = std::make_unique<DataflowShared>();
  d->as_of = 0;
  ipc::pb::SourceImport import;
  import.set_id("u1");
  import.mutable_source()->mutable_log()->set_path(path);
  auto* col = import.mutable_schema()->add_columns();
  col->set_name("k");
  col->set_type(ipc::pb::INT64);
  d->sources.push_back(MakeSource(import, Clock::now()));
  return d;
}

const LogSource& Log(const DataflowShared& d) { return dynamic_cast<LogSource&>(*d.sources[0]); }

std::size_t PendingRows(const LogSource& s) {
  return s.envelope() == nullptr ? 0 : s.envelope()->queued();
}

// The errors the source has read: what worker 0's node emits in a tick up to the empty frontier
// (a node is made once per worker: call this once per dataflow).
std::vector<ErrorUpdate> ReadErrors(DataflowShared& d) {
  auto node = d.sources[0]->MakeNode(0, d.as_of, Frontier::Empty());
  return node->Pull(TickCtx{0, Frontier::Empty(), 0, 0, nullptr}).errors;
}

// Issue 10 item 13: a log source read a whole 10^6-line file in one step (a solo peek waited
// 603 ms behind it). It follows the step budget like a generator.
TEST(SourcePacing, ALogSourceReadsAtMostItsStepBudgetAndStepsAgainAtOnce) {
  testing::TempDir dir("pacing");
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "U 0 1 " + std::to_string(i) + "\n";
  text += "P 1\n";
  dir.Write("events.log", text);
  const auto owned = LogDataflow(dir.File("events.log"));
  DataflowShared& d = *owned;
  const auto now = Clock::now();
  EXPECT_EQ(d.Prepare(1, 2, now), now) << "more of the file is there: step again at once";
  EXPECT_EQ(PendingRows(Log(d)), 2 * kLogLinesPerTick);
  EXPECT_TRUE(d.budget_limited);
  EXPECT_EQ(d.sources[0]->upper, Frontier::Minimum()) << "the progress mark is not read yet";
  std::size_t steps = 1;
  while (d.sources[0]->upper == Frontier::Minimum() && steps < 100) {
    d.Prepare(1, 2, now);
    ++steps;
  }
  EXPECT_EQ(steps, 8u) << "1001 lines, 128 a step";
  EXPECT_EQ(PendingRows(Log(d)), 1000u);
  EXPECT_EQ(d.sources[0]->upper, Frontier::At(1));
  EXPECT_GT(d.Prepare(1, 2, now), now) << "all read: wait for the file to grow";
  EXPECT_FALSE(d.budget_limited);
}

// Issue 10 item 7: errors name their own line (not the next progress mark), and a progress mark
// below an earlier one is reported, not ignored.
TEST(SourcePacing, LogErrorsNameTheLineTheyAreOn) {
  testing::TempDir dir("pacing");
  dir.Write("events.log",
            "U 0 1 1\n"     // 1
            "U 0 1 x\n"     // 2: not an int64
            "P 5\n"         // 3
            "U 2 1 2\n"     // 4: below the mark
            "P 3\n"         // 5: below the mark
            "U 6 1 3\nC\n"  // 6, 7
            "P 9\n");       // 8: after C
  const auto owned = LogDataflow(dir.File("events.log"));
  DataflowShared& d = *owned;
  d.Prepare(1, 1000, Clock::now());
  std::vector<std::string> errors;
  for (const auto& e : ReadErrors(d)) errors.push_back(e.message);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].rfind("log line 2: ", 0), 0u) << errors[0];
  EXPECT_EQ(errors[1], "log line 4: update at time 2 is below the progress mark 5");
  EXPECT_EQ(errors[2], "log line 5: progress mark P 3 is below the earlier mark 5");
  EXPECT_EQ(errors[3], "log line 8: progress mark P 9 after the close mark C");
  EXPECT_TRUE(d.sources[0]->upper.empty());
}

// A bad line arises at the upper when it is read: after "P 10" in the same read, at 10 (it used
// to take the upper from before the read, so its time depended on where the budget split the
// file).
TEST(SourcePacing, ALogErrorAfterAMarkIsAtThatMarkHoweverTheFileIsSplit) {
  for (Time budget : {1000u, 1u}) {
    testing::TempDir dir("pacing");
    dir.Write("events.log", "P 5\nP 10\nU 12 1 x\n");
    const auto owned = LogDataflow(dir.File("events.log"));
    DataflowShared& d = *owned;
    for (int i = 0; i < 5; ++i) d.Prepare(1, budget, Clock::now());
    const std::vector<ErrorUpdate> errors = ReadErrors(d);
    ASSERT_EQ(errors.size(), 1u) << "budget " << budget;
    EXPECT_EQ(errors[0].time, 10u) << "budget " << budget;
  }
}

// Comment and blank lines count against the step budget too: a file of mostly comments is not
// read in one step.
TEST(SourcePacing, CommentLinesCountAgainstTheLogBudget) {
  testing::TempDir dir("pacing");
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "# a comment\n\n";
  dir.Write("events.log", text + "P 1\n");
  const auto owned = LogDataflow(dir.File("events.log"));
  DataflowShared& d = *owned;
  const auto now = Clock::now();
  EXPECT_EQ(d.Prepare(1, 1, now), now) << "more of the file is there: step again at once";
  EXPECT_EQ(d.sources[0]->upper, Frontier::Minimum());
}

}  // namespace
}  // namespace tandem::workers
