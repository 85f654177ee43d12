// Temporal filters (DESIGN §16) in process: the shape of a predicate that reads the time
// (ipc/temporal_filter.h), the reference evaluator's definition of them on cases computed by hand,
// and the Mfp operator (workers/operators/mfp.h) that turns them into each row's insertion and
// retraction — tick by tick, on scripted inputs, and against the reference at every time on random
// data, rows, bounds and tick boundaries.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/datum_text.h"
#include "ipc/temporal_filter.h"
#include "reference/reference.h"
#include "reference/temporal.h"
#include "thorough.h"
#include "unit/protocol_samples.h"
#include "unit/temporal_samples.h"
#include "workers/exchange.h"
#include "workers/operators/mfp.h"

namespace tandem::workers {
namespace {

namespace pb = ipc::pb;
namespace s = ipc::samples;

// The rows of these tests: (k INT64, ts TIMESTAMPTZ nullable).
pb::Schema EventSchema() {
  return s::MakeSchema({s::MakeColumn("k", pb::INT64), s::MakeColumn("ts", pb::TIMESTAMPTZ, true)});
}

// ts in microseconds since the Unix epoch (5000: at Tandem time 5), or null.
Row Event(std::int64_t k, std::optional<std::int64_t> ts_micros) {
  Row r;
  r.emplace_back(std::in_place_type<std::int64_t>, k);
  if (ts_micros) {
    r.emplace_back(std::in_place_type<TimestampTz>, TimestampTz{*ts_micros});
  } else {
    r.emplace_back(std::in_place_type<Null>);
  }
  return r;
}

// Feeds the scripted delta of each tick (the first pull gets the first), nothing after.
class EventScript final : public Node {
 public:
  explicit EventScript(std::vector<Delta> ticks) : ticks_(std::move(ticks)) {}
  Delta Pull(const TickCtx&) override {
    return next_ < ticks_.size() ? std::move(ticks_[next_++]) : Delta{};
  }

 private:
  std::vector<Delta> ticks_;
  std::size_t next_ = 0;
};

struct TemporalTicks {
  Exchange exchange{1};
  std::uint64_t tick = 0;
  Delta Pull(Node& n, Time lo, Frontier hi) {
    return n.Pull(TickCtx{lo, hi, ++tick, 0, &exchange});
  }
};

// One pull's changes, consolidated: "(k,ts,)@time" → diff; errors "!message@time".
using TemporalChanges = std::map<std::string, std::int64_t>;
TemporalChanges ChangesOf(const Delta& d) {
  TemporalChanges out;
  for (const auto& u : d.rows) {
    std::string k = "(";
    for (const auto& datum : u.row) k += DatumText(datum) + ",";
    out[k + ")@" + std::to_string(u.time)] += u.diff;
  }
  for (const auto& e : d.errors) out["!" + e.message + "@" + std::to_string(e.time)] += e.diff;
  std::erase_if(out, [](const auto& kv) { return kv.second == 0; });
  return out;
}

// Just the key column: the tests project (k).
pb::MapFilterProject KeysOf(std::vector<pb::ScalarExpr> predicates) {
  return s::Mfp({}, std::move(predicates), {0});
}

// ---- the shape

TEST(TemporalFilter, ComparisonsComeOutWithTheTimeOnTheLeftInTheOrderWritten) {
  const pb::ScalarExpr predicate =
      s::Binary(pb::AND, s::Binary(pb::LT, s::Col(1), s::NowExpr()),
                s::Binary(pb::AND, s::Binary(pb::GE, s::Col(2), s::NowExpr()),
                          s::Binary(pb::EQ, s::NowExpr(), s::Col(3))));
  auto comparisons = ipc::TemporalComparisons(predicate);
  ASSERT_TRUE(comparisons.ok()) << comparisons.status().ToString();
  ASSERT_EQ(comparisons->size(), 3u);
  EXPECT_EQ((*comparisons)[0].op, pb::GT) << "ts < now is now > ts";
  EXPECT_EQ((*comparisons)[0].bound->column(), 1u);
  EXPECT_EQ((*comparisons)[1].op, pb::LE) << "ts >= now is now <= ts";
  EXPECT_EQ((*comparisons)[1].bound->column(), 2u);
  EXPECT_EQ((*comparisons)[2].op, pb::EQ);
  EXPECT_EQ((*comparisons)[2].bound->column(), 3u);
  EXPECT_FALSE(ipc::ContainsNow(s::Binary(pb::LT, s::Col(1), s::Col(2))));
  EXPECT_TRUE(ipc::ContainsNow(s::Unary(pb::IS_NULL, s::NowExpr())));
}

// ---- the reference's definition

// The reference's collection at `t` through `mfp` (its temporal filters evaluated at t).
reference::Contents ReferenceAt(const reference::Contents& input, const pb::MapFilterProject& mfp,
                                Time t) {
  return reference::TemporalMfpOf(input, mfp, t, [](const pb::MapFilterProject& m, const Row& row) {
    return reference::ApplyMfp(m, row);
  });
}

reference::Contents EventsAt(std::vector<Row> rows) {
  reference::Contents c;
  for (auto& r : rows) reference::AddTo(c.rows, r, 1);
  return c;
}

std::string Keys(const reference::Contents& c) {
  std::string out;
  for (const auto& [row, count] : c.rows) {
    out += DatumText(row[0]) + "x" + reference::CountToString(count) + " ";
  }
  for (const auto& [message, count] : c.errors) out += "!" + message + " ";
  return out;
}

TEST(TemporalFilter, TheReferenceKeepsARowAtTheTimesEveryComparisonHoldsAt) {
  // Rows at 5 ms and 5.5 ms in a 10 ms window: in from 5 (6), out from 15 (16).
  const auto input = EventsAt({Event(1, 5000), Event(2, 5500)});
  const auto window = KeysOf(s::SlidingWindow(1, 10'000));
  EXPECT_EQ(Keys(ReferenceAt(input, window, 4)), "");
  EXPECT_EQ(Keys(ReferenceAt(input, window, 5)), "1x1 ");
  EXPECT_EQ(Keys(ReferenceAt(input, window, 6)), "1x1 2x1 ");
  EXPECT_EQ(Keys(ReferenceAt(input, window, 14)), "1x1 2x1 ");
  EXPECT_EQ(Keys(ReferenceAt(input, window, 15)), "2x1 ");
  EXPECT_EQ(Keys(ReferenceAt(input, window, 16)), "");
  // An AND of the two comparisons is the same filter.
  const auto anded =
      KeysOf({s::Binary(pb::AND, s::SlidingWindow(1, 10'000)[0], s::SlidingWindow(1, 10'000)[1])});
  for (Time t = 0; t < 20; ++t) {
    EXPECT_EQ(Keys(ReferenceAt(input, anded, t)), Keys(ReferenceAt(input, window, t)))
        << "at " << t;
  }
}

TEST(TemporalFilter, TheReferenceMakesAnErrorInAnyComparisonTheRowsWhateverTheOthersSay) {
  // now < ts + 1 s / 0.0: an error at every time, even when now >= ts + 1 s says "not yet".
  const pb::ScalarExpr error_bound = s::Binary(
      pb::LT, s::NowExpr(),
      s::Binary(
          pb::ADD, s::Col(1),
          s::Binary(pb::DIV, s::IntervalLit(1'000'000), s::Lit(s::FloatDatum(0), pb::FLOAT64))));
  const auto input = EventsAt({Event(1, 5000)});
  const auto mfp = KeysOf(
      {s::Binary(pb::GE, s::NowExpr(), s::Binary(pb::ADD, s::Col(1), s::IntervalLit(1'000'000))),
       error_bound});
  EXPECT_EQ(Keys(ReferenceAt(input, mfp, 0)), "!division by zero ");
  EXPECT_EQ(Keys(ReferenceAt(input, mfp, 2000)), "!division by zero ");
  // ... but not when an ordinary predicate drops the row first.
  auto dropped = mfp;
  *dropped.add_predicates() = s::Binary(pb::LT, s::Col(0), s::IntLit(0));
  EXPECT_EQ(Keys(ReferenceAt(input, dropped, 0)), "");
  // A null bound drops the row.
  EXPECT_EQ(
      Keys(ReferenceAt(EventsAt({Event(1, std::nullopt)}), KeysOf(s::SlidingWindow(1, 10'000)), 3)),
      "");
}

// ---- the operator, tick by tick

TEST(TemporalFilter, ARowEntersAndLeavesASlidingWindowAtItsEdgesAndWaitsBetween) {
  // A 10 ms window. Row 1 (ts 5 ms) arrives at 5, row 2 (ts 20 ms, in the future) at 6.
  EventScript in({Delta{{{Event(1, 5000), 5, 1}}, {}}, Delta{{{Event(2, 20'000), 6, 1}}, {}}});
  MfpNode mfp(&in, Mfp(KeysOf(s::SlidingWindow(1, 10'000)), EventSchema()));
  TemporalTicks w;
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 0, Frontier::At(6))), (TemporalChanges{{"(1,)@5", 1}}));
  EXPECT_EQ(mfp.pending(), 1u) << "row 1's retraction at 15";
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 6, Frontier::At(15))), TemporalChanges{})
      << "row 2 enters at 20: nothing between the window's edges";
  EXPECT_EQ(mfp.pending(), 3u) << "row 1's retraction, row 2's insertion and retraction";
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 15, Frontier::At(16))), (TemporalChanges{{"(1,)@15", -1}}));
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 16, Frontier::At(25))), (TemporalChanges{{"(2,)@20", 1}}));
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 25, Frontier::At(31))), (TemporalChanges{{"(2,)@30", -1}}));
  EXPECT_EQ(mfp.pending(), 0u);
}

TEST(TemporalFilter, ARetractionAtTheInputRetractsWhatTheRowScheduled) {
  // Row 1 inserted at 5 and deleted at 8, inside its window [5, 15): in at 5, out at 8, and its
  // two scheduled leavings at 15 cancel out.
  EventScript in({Delta{{{Event(1, 5000), 5, 1}}, {}}, Delta{{{Event(1, 5000), 8, -1}}, {}}});
  MfpNode mfp(&in, Mfp(KeysOf(s::SlidingWindow(1, 10'000)), EventSchema()));
  TemporalTicks w;
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 0, Frontier::At(6))), (TemporalChanges{{"(1,)@5", 1}}));
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 6, Frontier::At(9))), (TemporalChanges{{"(1,)@8", -1}}));
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 9, Frontier::At(20))), TemporalChanges{});
  EXPECT_EQ(mfp.pending(), 0u);
}

TEST(TemporalFilter, ANullBoundDropsTheRowAndAnErrorInOneIsAnErrorAtTheRowsTime) {
  // now < ts (never, from ts on) and now >= ts + (k = 2 ? 1 s / 0.0 : 1 s): row 2's second bound
  // is an error, whatever the first says; row 1's ts is null, so are both its bounds.
  const pb::ScalarExpr one_second = s::IntervalLit(1'000'000);
  const pb::ScalarExpr delay =
      s::If(s::Binary(pb::EQ, s::Col(0), s::IntLit(2)),
            s::Binary(pb::DIV, one_second, s::Lit(s::FloatDatum(0), pb::FLOAT64)), one_second);
  EventScript in({Delta{{{Event(1, std::nullopt), 3, 1}, {Event(2, 5000), 4, 2}}, {}}});
  MfpNode mfp(&in,
              Mfp(KeysOf({s::Binary(pb::LT, s::NowExpr(), s::Col(1)),
                          s::Binary(pb::GE, s::NowExpr(), s::Binary(pb::ADD, s::Col(1), delay))}),
                  EventSchema()));
  TemporalTicks w;
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 0, Frontier::At(10))),
            (TemporalChanges{{"!division by zero@4", 2}}));
  EXPECT_EQ(mfp.pending(), 0u);
}

TEST(TemporalFilter, NothingIsKeptAtOrBeyondTheDataflowsUntil) {
  EventScript in({Delta{{{Event(1, 5000), 5, 1}, {Event(2, 30'000), 5, 1}}, {}}});
  MfpNode mfp(&in, Mfp(KeysOf(s::SlidingWindow(1, 10'000)), EventSchema()), Frontier::At(12));
  TemporalTicks w;
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 0, Frontier::At(6))), (TemporalChanges{{"(1,)@5", 1}}));
  EXPECT_EQ(mfp.pending(), 0u) << "row 1 leaves at 15 and row 2 enters at 30: both beyond 12";
}

TEST(TemporalFilter, WhenEveryInputClosesTheLastTickReleasesTheWholeFuture) {
  EventScript in({Delta{{{Event(1, 5000), 5, 1}, {Event(2, 30'000), 5, 1}}, {}}});
  MfpNode mfp(&in, Mfp(KeysOf(s::SlidingWindow(1, 10'000)), EventSchema()));
  TemporalTicks w;
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 0, Frontier::Empty())),
            (TemporalChanges{{"(1,)@5", 1}, {"(1,)@15", -1}, {"(2,)@30", 1}, {"(2,)@40", -1}}));
  EXPECT_EQ(mfp.pending(), 0u);
}

TEST(TemporalFilter, AnMfpWithoutTemporalFiltersKeepsNothing) {
  EventScript in({Delta{{{Event(1, 5000), 5, 1}}, {}}});
  MfpNode mfp(&in, Mfp(KeysOf({s::Binary(pb::GT, s::Col(0), s::IntLit(0))}), EventSchema()));
  TemporalTicks w;
  EXPECT_EQ(ChangesOf(w.Pull(mfp, 0, Frontier::At(6))), (TemporalChanges{{"(1,)@5", 1}}));
  EXPECT_EQ(mfp.pending(), 0u);
}

// ---- the operator against the reference, on random cases

// A random comparison of the time with a bound over the row (ts, ts + interval, or a literal),
// either way round. Bounds are mostly whole milliseconds (where the edges are: = holds there
// only), and = is rarer than the others (it keeps a row for one millisecond at most).
pb::ScalarExpr RandomComparison(std::mt19937_64& rng) {
  auto below = [&](std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng);
  };
  auto micros = [&](std::int64_t from_ms, std::uint64_t span_ms) {
    return (from_ms + static_cast<std::int64_t>(below(span_ms))) * 1000 +
           (below(3) == 0 ? static_cast<std::int64_t>(below(1000)) : 0);
  };
  static const pb::BinaryFunc kOps[] = {pb::EQ, pb::LT, pb::LE, pb::GT, pb::GE,
                                        pb::LT, pb::LE, pb::GT, pb::GE};
  const pb::BinaryFunc op = kOps[below(9)];
  pb::ScalarExpr bound;
  switch (below(3)) {
    case 0:
      bound = s::Col(1);
      break;
    case 1:
      bound = s::Binary(pb::ADD, s::Col(1), s::IntervalLit(micros(-10, 40)));
      break;
    default:
      bound = s::TimestampTzLit(micros(-5, 100));
  }
  return below(2) ? s::Binary(op, s::NowExpr(), std::move(bound))
                  : s::Binary(op, std::move(bound), s::NowExpr());
}

TEST(TemporalFilter, TheOperatorMatchesTheReferenceAtEveryTimeOnRandomCases) {
  constexpr Time kHorizon = 100;  // the input's times are below it
  const std::uint64_t seeds = tandem::testing::Thorough() ? 400 : 20;
  std::uint64_t seeds_with_rows = 0, seeds_with_leaving_rows = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    std::mt19937_64 rng(seed);
    auto below = [&](std::uint64_t n) {
      return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng);
    };
    // The filter: 1-3 comparisons, two of them sometimes in one AND, maybe an ordinary predicate.
    pb::MapFilterProject mfp;
    const std::uint64_t comparisons = 1 + below(3);
    for (std::uint64_t i = 0; i < comparisons; ++i) *mfp.add_predicates() = RandomComparison(rng);
    if (comparisons >= 2 && below(2)) {
      pb::ScalarExpr both = s::Binary(pb::AND, mfp.predicates(0), mfp.predicates(1));
      mfp.mutable_predicates()->DeleteSubrange(0, 2);
      *mfp.add_predicates() = std::move(both);
    }
    if (below(2)) *mfp.add_predicates() = s::Binary(pb::NE, s::Col(0), s::IntLit(3));
    if (below(2)) {  // (k, ts) projected; else with nothing projected away either
      mfp.add_projection(0);
      mfp.add_projection(1);
    }
    // The input: rows with ts around the times (whole milliseconds and not, nulls), inserted and
    // some deleted again later, with diffs of 1 and 2.
    std::vector<RowUpdate> input;
    for (int i = 0; i < 40; ++i) {
      const Time t = below(kHorizon);
      std::optional<std::int64_t> ts;
      if (below(10) != 0) {
        ts = static_cast<std::int64_t>(below(140)) * 1000 - 20'000 +
             (below(3) == 0 ? static_cast<std::int64_t>(below(1000)) : 0);
      }
      const Row row = Event(static_cast<std::int64_t>(below(6)), ts);
      const std::int64_t diff = below(4) == 0 ? 2 : 1;
      input.push_back({row, t, diff});
      if (below(3) == 0) input.push_back({row, t + below(kHorizon - t), -diff});
    }
    // Ticks of random length; the last one either ends at a time or is [lo, ∞) (closed).
    const bool closes = below(2) == 0;
    std::vector<std::pair<Time, Frontier>> ticks;
    for (Time lo = 0; lo < kHorizon;) {
      const Time hi = std::min<Time>(kHorizon, lo + 1 + below(25));
      ticks.emplace_back(lo, Frontier::At(hi));
      lo = hi;
    }
    if (closes) ticks.emplace_back(kHorizon, Frontier::Empty());
    std::vector<Delta> deltas;
    for (const auto& [lo, hi] : ticks) {
      Delta d;
      for (const RowUpdate& u : input) {
        if (u.time >= lo && hi.Greater(u.time)) d.rows.push_back(u);
      }
      deltas.push_back(std::move(d));
    }
    EventScript in(std::move(deltas));
    MfpNode node(&in, Mfp(mfp, EventSchema()));
    TemporalTicks w;
    std::vector<RowUpdate> output;
    std::vector<ErrorUpdate> errors;
    for (const auto& [lo, hi] : ticks) {
      Delta d = w.Pull(node, lo, hi);
      for (RowUpdate& u : d.rows) {
        ASSERT_TRUE(u.time >= lo && hi.Greater(u.time))
            << "seed " << seed << ": an update at " << u.time << " out of its tick";
        output.push_back(std::move(u));
      }
      for (ErrorUpdate& e : d.errors) errors.push_back(std::move(e));
    }
    if (closes) {
      EXPECT_EQ(node.pending(), 0u) << "seed " << seed;
    }
    // What the case exercised: rows in the view, and rows leaving it while their input stays.
    seeds_with_rows += output.empty() ? 0 : 1;
    std::int64_t retracted = 0, input_retracted = 0;
    for (const RowUpdate& u : output) retracted += u.diff < 0 ? -u.diff : 0;
    for (const RowUpdate& u : input) input_retracted += u.diff < 0 ? -u.diff : 0;
    seeds_with_leaving_rows += retracted > input_retracted ? 1 : 0;
    // At every time the output (and, when closed, beyond the last input) must be the reference's.
    const Time last = closes ? kHorizon + 100 : kHorizon;
    for (Time t = 0; t < last; ++t) {
      reference::Contents in_at, out_at;
      for (const RowUpdate& u : input) {
        if (u.time <= t) reference::AddTo(in_at.rows, u.row, u.diff);
      }
      for (const RowUpdate& u : output) {
        if (u.time <= t) reference::AddTo(out_at.rows, u.row, u.diff);
      }
      for (const ErrorUpdate& e : errors) {
        if (e.time <= t) reference::AddTo(out_at.errors, e.message, e.diff);
      }
      const reference::Contents expected = ReferenceAt(in_at, mfp, t);
      ASSERT_EQ(reference::ToString(out_at.rows), reference::ToString(expected.rows))
          << "seed " << seed << " at " << t << ": " << ipc::ToJson(mfp);
      ASSERT_EQ(out_at.errors, expected.errors) << "seed " << seed << " at " << t;
    }
  }
  EXPECT_GE(seeds_with_rows, seeds / 2) << "the random filters keep too few rows to test much";
  EXPECT_GE(seeds_with_leaving_rows, seeds / 4) << "too few rows leave a view as time passes";
}

}  // namespace
}  // namespace tandem::workers
