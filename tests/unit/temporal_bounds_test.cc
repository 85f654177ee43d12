// The arithmetic of temporal filters (workers/temporal_bounds.h): the times a comparison of the
// time itself with a row's TIMESTAMPTZ holds at, the updates a row's bounds give, and the queue
// that keeps updates for later ticks (workers/operators/pending_updates.h).
#include <gtest/gtest.h>

#include <limits>
#include <utility>
#include <vector>

#include "workers/operators/pending_updates.h"
#include "workers/temporal_bounds.h"

namespace tandem::workers {
namespace {

namespace pb = ipc::pb;

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

Validity BoundOf(pb::BinaryFunc op, std::int64_t e_micros) {
  Validity v;
  Narrow(op, e_micros, &v);
  return v;
}

// Whether the bound holds at the (small) time t, by definition: now = t × 1000 µs against e.
bool HoldsByDefinition(pb::BinaryFunc op, std::int64_t e, Time t) {
  const std::int64_t now = static_cast<std::int64_t>(t) * 1000;  // t is small here
  switch (op) {
    case pb::EQ:
      return now == e;
    case pb::LT:
      return now < e;
    case pb::LE:
      return now <= e;
    case pb::GT:
      return now > e;
    default:
      return now >= e;
  }
}

bool Covers(const Validity& v, Time t) { return v.lower <= t && v.upper.Greater(t); }

TEST(TemporalBounds, ALowerBoundStartsAtTheFirstMillisecondWhoseMicrosecondsReachIt) {
  EXPECT_EQ(BoundOf(pb::GE, 5000).lower, 5u);
  EXPECT_EQ(BoundOf(pb::GE, 5001).lower, 6u) << "5 ms is 5000 µs, still before 5001 µs";
  EXPECT_EQ(BoundOf(pb::GT, 5000).lower, 6u);
  EXPECT_EQ(BoundOf(pb::GT, 4999).lower, 5u);
  EXPECT_TRUE(BoundOf(pb::GE, 5000).upper.empty());
}

TEST(TemporalBounds, AnUpperBoundEndsAtTheFirstMillisecondPastIt) {
  EXPECT_EQ(BoundOf(pb::LT, 5000).upper, Frontier::At(5));
  EXPECT_EQ(BoundOf(pb::LT, 5001).upper, Frontier::At(6)) << "5 ms = 5000 µs < 5001 µs";
  EXPECT_EQ(BoundOf(pb::LE, 5000).upper, Frontier::At(6));
  EXPECT_EQ(BoundOf(pb::LE, 4999).upper, Frontier::At(5));
  EXPECT_EQ(BoundOf(pb::LT, 5000).lower, 0u);
}

TEST(TemporalBounds, EqualityHoldsForOneMillisecondOnlyAtAWholeMillisecond) {
  const Validity whole = BoundOf(pb::EQ, 7000);
  EXPECT_EQ(whole.lower, 7u);
  EXPECT_EQ(whole.upper, Frontier::At(8));
  EXPECT_TRUE(BoundOf(pb::EQ, 7001).empty()) << "no millisecond is 7001 µs";
  EXPECT_TRUE(BoundOf(pb::EQ, -1000).empty()) << "times start at 0";
  EXPECT_FALSE(BoundOf(pb::EQ, 0).empty());
}

TEST(TemporalBounds, BeforeTheEpochALowerBoundBoundsNothingAndAnUpperOneHoldsNever) {
  EXPECT_EQ(BoundOf(pb::GE, -5'000'000).lower, 0u);
  EXPECT_FALSE(BoundOf(pb::GE, -5'000'000).empty());
  EXPECT_TRUE(BoundOf(pb::LT, -1).empty());
  EXPECT_TRUE(BoundOf(pb::LT, 0).empty()) << "now < 0 µs: never, now is at least 0";
  EXPECT_TRUE(BoundOf(pb::LE, -1).empty());
  EXPECT_FALSE(BoundOf(pb::LE, 0).empty()) << "now <= 0 µs holds at time 0";
  EXPECT_EQ(BoundOf(pb::GT, -1).lower, 0u) << "floor(-1 / 1000) + 1 = 0";
  EXPECT_EQ(BoundOf(pb::GT, -1000).lower, 0u);
  EXPECT_EQ(BoundOf(pb::LE, -999).upper, Frontier::At(0)) << "floor(-0.999) + 1 = 0: never";
}

TEST(TemporalBounds, TheInt64ExtremesNeitherOverflowNorWrap) {
  EXPECT_EQ(BoundOf(pb::GE, kInt64Max).lower, static_cast<Time>(kInt64Max / 1000 + 1));
  EXPECT_EQ(BoundOf(pb::LE, kInt64Max).upper,
            Frontier::At(static_cast<Time>(kInt64Max / 1000 + 1)));
  EXPECT_EQ(BoundOf(pb::GE, kInt64Min).lower, 0u);
  EXPECT_TRUE(BoundOf(pb::LT, kInt64Min).empty());
}

TEST(TemporalBounds, EveryComparisonHoldsExactlyAtTheTimesItsBoundsGive) {
  // Every operator against values around whole milliseconds, negative ones included, at every
  // time near them: the bounds and the definition agree.
  for (pb::BinaryFunc op : {pb::EQ, pb::LT, pb::LE, pb::GT, pb::GE}) {
    for (std::int64_t e = -3005; e <= 6005; e += 1) {
      const Validity v = BoundOf(op, e);
      for (Time t = 0; t <= 9; ++t) {
        ASSERT_EQ(Covers(v, t), HoldsByDefinition(op, e, t))
            << pb::BinaryFunc_Name(op) << " e=" << e << " µs at t=" << t << " ms";
      }
    }
  }
}

TEST(TemporalBounds, SeveralBoundsHoldWhereAllOfThemDo) {
  Validity v;
  Narrow(pb::GE, 2000, &v);   // from 2
  Narrow(pb::LT, 10000, &v);  // before 10
  Narrow(pb::GT, 4500, &v);   // from 5
  Narrow(pb::LE, 8000, &v);   // before 9
  EXPECT_EQ(v.lower, 5u);
  EXPECT_EQ(v.upper, Frontier::At(9));
  Narrow(pb::LT, 5000, &v);
  EXPECT_TRUE(v.empty()) << "before 5 and from 5";
}

std::vector<std::pair<Time, std::int64_t>> ScheduledFor(const Validity& v, Time t, std::int64_t d) {
  std::vector<std::pair<Time, std::int64_t>> out;
  ScheduleUpdates(v, t, d, [&](Time time, std::int64_t diff) { out.emplace_back(time, diff); });
  return out;
}

using TimedDiffs = std::vector<std::pair<Time, std::int64_t>>;

TEST(TemporalBounds, ARowEntersAtTheLaterOfItsTimeAndItsLowerBoundAndLeavesAtItsUpper) {
  const Validity window{.lower = 10, .upper = Frontier::At(20)};
  EXPECT_EQ(ScheduledFor(window, 3, 2), (TimedDiffs{{10, 2}, {20, -2}})) << "enters in the future";
  EXPECT_EQ(ScheduledFor(window, 12, 1), (TimedDiffs{{12, 1}, {20, -1}}))
      << "already in its window";
  EXPECT_EQ(ScheduledFor(window, 12, -1), (TimedDiffs{{12, -1}, {20, 1}})) << "a retraction's too";
  EXPECT_EQ(ScheduledFor(window, 20, 1), TimedDiffs{}) << "its window is over";
  EXPECT_EQ(ScheduledFor(window, 25, 1), TimedDiffs{});
  EXPECT_EQ(ScheduledFor(Validity{.lower = 10}, 3, 1), (TimedDiffs{{10, 1}})) << "no upper: stays";
  EXPECT_EQ(ScheduledFor(Validity{.lower = 9, .upper = Frontier::At(9)}, 0, 1), TimedDiffs{});
}

TEST(TemporalBounds, TheRetractionOfTheSmallestDiffIsTwoUpdates) {
  EXPECT_EQ(ScheduledFor(Validity{.lower = 0, .upper = Frontier::At(4)}, 1, kInt64Min),
            (TimedDiffs{{1, kInt64Min}, {4, kInt64Max}, {4, 1}}));
}

RowUpdate TaggedAt(Time t, std::int64_t diff, std::int64_t tag) {
  return RowUpdate{Row{Datum(tag)}, t, diff};
}

TEST(TemporalBounds, PendingUpdatesGoOutInTheTickThatHoldsTheirTimeInTimeOrder) {
  PendingUpdates pending;
  for (Time t : {30u, 10u, 20u, 10u, 50u, 40u}) pending.Push(TaggedAt(t, 1, static_cast<int>(t)));
  std::vector<RowUpdate> out;
  pending.ReleaseBefore(Frontier::At(10), &out);
  EXPECT_TRUE(out.empty()) << "nothing before 10";
  pending.ReleaseBefore(Frontier::At(21), &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].time, 10u);
  EXPECT_EQ(out[1].time, 10u);
  EXPECT_EQ(out[2].time, 20u);
  EXPECT_EQ(pending.size(), 3u);
  out.clear();
  pending.ReleaseBefore(Frontier::At(40), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].time, 30u);
  out.clear();
  pending.ReleaseBefore(Frontier::Empty(), &out);
  ASSERT_EQ(out.size(), 2u) << "the empty frontier (every input closed) releases everything";
  EXPECT_EQ(out[0].time, 40u);
  EXPECT_EQ(out[1].time, 50u);
  EXPECT_TRUE(pending.empty());
}

TEST(TemporalBounds, ASlidingWindowKeepsOneUpdatePerRowInTheWindow) {
  // A row every ms, each in the window for 100 ms: its insertion goes out at once, its retraction
  // waits. In steady state the queue holds the window's rows, never the whole history.
  PendingUpdates pending;
  std::size_t most = 0;
  for (Time t = 0; t < 1000; ++t) {
    std::vector<RowUpdate> out;
    const Validity v{.lower = t, .upper = Frontier::At(t + 100)};
    ScheduleUpdates(v, t, 1, [&](Time time, std::int64_t diff) {
      if (time < t + 1) {
        out.push_back(TaggedAt(time, diff, 0));
      } else {
        pending.Push(TaggedAt(time, diff, 0));
      }
    });
    pending.ReleaseBefore(Frontier::At(t + 1), &out);
    most = std::max(most, pending.size());
    std::int64_t net = 0;
    for (const RowUpdate& u : out) {
      ASSERT_EQ(u.time, t) << "an update out of its tick";
      net += u.diff;
    }
    EXPECT_EQ(net, t < 100 ? 1 : 0) << "at " << t << ": one in, and from 100 on one out";
  }
  EXPECT_EQ(most, 100u);
}

}  // namespace
}  // namespace tandem::workers
