// Each operator alone (workers/operators/), in process, on one worker: a scripted input node
// feeds it the changes of successive ticks, and the test checks the changes it emits.
#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <tuple>

#include "base/datum_text.h"
#include "base/numeric.h"
#include "unit/protocol_samples.h"
#include "workers/exchange.h"
#include "workers/operators/cached.h"
#include "workers/operators/index_export.h"
#include "workers/operators/join.h"
#include "workers/operators/memory_budget.h"
#include "workers/operators/mfp.h"
#include "workers/operators/negate.h"
#include "workers/operators/reduce.h"
#include "workers/operators/threshold.h"
#include "workers/operators/top_k.h"
#include "workers/operators/union.h"
#include "workers/plan_graph.h"
#include "workers/sources/index_import.h"

namespace tandem::workers {
namespace {

namespace pb = ipc::pb;
namespace s = ipc::samples;

// Emits the next scripted delta on each pull.
class Script final : public Node {
 public:
  explicit Script(std::vector<Delta> ticks) : ticks_(std::move(ticks)) {}
  Delta Pull(const TickCtx&) override {
    return next_ < ticks_.size() ? std::move(ticks_[next_++]) : Delta{};
  }

 private:
  std::vector<Delta> ticks_;
  std::size_t next_ = 0;
};

Row Ints(std::vector<std::int64_t> v) {
  Row r;
  for (auto x : v) r.emplace_back(std::in_place_type<std::int64_t>, x);
  return r;
}

Row Datums(std::vector<Datum> v) { return Row(std::move(v)); }

Delta Rows(std::vector<RowUpdate> rows) { return Delta{std::move(rows), {}}; }

// The changes of one pull, consolidated: "row@time" → diff, errors as "!message@time".
std::map<std::string, std::int64_t> Changes(const Delta& d) {
  std::map<std::string, std::int64_t> out;
  for (const auto& u : d.rows) {
    std::string k = "(";
    for (const auto& datum : u.row) k += DatumText(datum) + ",";
    out[k + ")@" + std::to_string(u.time)] += u.diff;
  }
  for (const auto& e : d.errors) out["!" + e.message + "@" + std::to_string(e.time)] += e.diff;
  std::erase_if(out, [](const auto& kv) { return kv.second == 0; });
  return out;
}

struct OneWorker {
  Exchange exchange{1};
  std::uint64_t tick = 0;
  Delta Pull(Node& n, Time lo, Time hi) {
    return n.Pull(TickCtx{lo, Frontier::At(hi), ++tick, 0, &exchange});
  }
};

using Changes_ = std::map<std::string, std::int64_t>;

// The columns of the rows these tests feed: (int, int, float, bool) — AggregatedRow's, whose
// prefix the two-integer rows share.
pb::Schema AggregatedRowSchema() {
  return s::MakeSchema({s::MakeColumn("a", pb::INT64), s::MakeColumn("b", pb::INT64),
                        s::MakeColumn("f", pb::FLOAT64), s::MakeColumn("flag", pb::BOOL)});
}

TEST(Operators, MfpMapsFiltersProjectsAndTurnsDataErrorsIntoErrors) {
  Script in({Rows({{Ints({1, 2}), 0, 1}, {Ints({0, 5}), 0, 2}, {Ints({3, 0}), 1, 1}})});
  // map: c1 / c0; filter c1 > 1; project (c0, c2)
  MfpNode mfp(&in, Mfp(s::Mfp({s::Binary(pb::DIV, s::Col(1), s::Col(0))},
                              {s::Binary(pb::GT, s::Col(1), s::IntLit(1))}, {0, 2}),
                       s::KeyValueSchema()));
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(mfp, 0, 2)), (Changes_{{"(1,2,)@0", 1}, {"!division by zero@0", 2}}));
}

TEST(Operators, CoalesceEvaluatesNoArgumentPastTheFirstThatIsNotNull) {
  // COALESCE(c1, 10 / c0): the division by zero is reached only where c1 is null.
  const Row zero_value = {std::int64_t{0}, std::int64_t{5}};
  const Row zero_null = {std::int64_t{0}, Null{}};
  const Row two_null = {std::int64_t{2}, Null{}};
  Script in({Rows({{zero_value, 0, 1}, {zero_null, 0, 1}, {two_null, 0, 1}})});
  pb::ScalarExpr coalesce;
  coalesce.mutable_call()->set_func(pb::COALESCE);
  *coalesce.mutable_call()->add_args() = s::Col(1);
  *coalesce.mutable_call()->add_args() = s::Binary(pb::DIV, s::IntLit(10), s::Col(0));
  MfpNode mfp(
      &in, Mfp(s::Mfp({coalesce}, {}, {2}), s::MakeSchema({s::MakeColumn("k", pb::INT64),
                                                           s::MakeColumn("v", pb::INT64, true)})));
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(mfp, 0, 1)), (Changes_{{"(5,)@0", 2}, {"!division by zero@0", 1}}));
}

TEST(Operators, SumIsNullWhenTheNonNullValuesMultiplicitiesSumToZeroEvenWithValuesPresent) {
  // Under a Negate below: (1, 5) +1, (1, 3) -1, (1, null) +1. The group is there (count 1), its
  // non-null values' multiplicities sum to 0: SUM is null, as COUNT(v) is 0 — for int8 and
  // numeric alike (the reference's rule too).
  const Row five = {std::int64_t{1}, std::int64_t{5}};
  const Row three = {std::int64_t{1}, std::int64_t{3}};
  const Row none = {std::int64_t{1}, Null{}};
  Script in({Rows({{five, 0, 1}, {three, 0, -1}, {none, 0, 1}})});
  const pb::Schema schema =
      s::MakeSchema({s::MakeColumn("k", pb::INT64), s::MakeColumn("v", pb::INT64, true)});
  auto reduce =
      MakeReduce(&in, s::ReducePlan(s::GetPlan("x"), {0}, {{pb::SUM, 1}}).reduce(), schema);
  OneWorker w;
  const Changes_ int_sum = Changes(w.Pull(*reduce, 0, 1));
  EXPECT_EQ(int_sum.size(), 1u);
  EXPECT_EQ(int_sum.count("(1,null,)@0"), 1u) << int_sum.begin()->first;

  Script numerics({Rows({{Row{std::int64_t{1}, *ParseNumeric("5")}, 0, 1},
                         {Row{std::int64_t{1}, *ParseNumeric("3")}, 0, -1},
                         {none, 0, 1}})});
  const pb::Schema numeric_schema =
      s::MakeSchema({s::MakeColumn("k", pb::INT64), s::MakeColumn("v", pb::NUMERIC, true)});
  auto numeric_reduce = MakeReduce(
      &numerics, s::ReducePlan(s::GetPlan("x"), {0}, {{pb::SUM, 1}}).reduce(), numeric_schema);
  OneWorker w2;
  const Changes_ numeric_sum = Changes(w2.Pull(*numeric_reduce, 0, 1));
  EXPECT_EQ(numeric_sum, int_sum);
}

TEST(Operators, AvgOfNumericCountsPastInt64) {
  // 1.5 and 2.5 at multiplicity 2^62 each, three times: 6 x 2^62 values, beyond int64. The
  // average is exact (the count as a numeric), not a multiplicity overflow.
  const std::int64_t huge = std::int64_t{1} << 62;
  const Row a = {std::int64_t{1}, *ParseNumeric("1.5")};
  const Row b = {std::int64_t{1}, *ParseNumeric("2.5")};
  Script in(
      {Rows({{a, 0, huge}, {b, 0, huge}, {a, 0, huge}, {b, 0, huge}, {a, 0, huge}, {b, 0, huge}})});
  const pb::Schema schema =
      s::MakeSchema({s::MakeColumn("k", pb::INT64), s::MakeColumn("v", pb::NUMERIC, true)});
  auto reduce =
      MakeReduce(&in, s::ReducePlan(s::GetPlan("x"), {0}, {{pb::AVG, 1}}).reduce(), schema);
  OneWorker w;
  const Changes_ changes = Changes(w.Pull(*reduce, 0, 1));
  // PostgreSQL's numeric_avg: the sum over the count with select_div_scale's 16 digits.
  EXPECT_EQ(changes, (Changes_{{"(1,numeric '2.0000000000000000',)@0", 1}}));
}

TEST(Operators, CountDistinctCountsANumericOnceWhateverItsScales) {
  auto row = [](const char* n) { return Row{std::int64_t{1}, *ParseNumeric(n)}; };
  Script in({Rows({{row("1.5"), 0, 1}, {row("1.50"), 0, 1}, {row("2"), 0, 1}}),
             Rows({{row("1.5"), 1, -1}}), Rows({{row("1.50"), 2, -1}})});
  const pb::Schema schema =
      s::MakeSchema({s::MakeColumn("k", pb::INT64), s::MakeColumn("v", pb::NUMERIC, true)});
  auto reduce = MakeReduce(
      &in, s::ReducePlan(s::GetPlan("x"), {0}, {{pb::COUNT_DISTINCT, 1}}).reduce(), schema);
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*reduce, 0, 1)), (Changes_{{"(1,2,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(*reduce, 1, 2)), Changes_{}) << "1.50 is still there";
  EXPECT_EQ(Changes(w.Pull(*reduce, 2, 3)), (Changes_{{"(1,2,)@2", -1}, {"(1,1,)@2", 1}}));
}

TEST(Operators, ReduceWithoutAggregatesListsEachGroupOnce) {
  Script in({Rows({{Ints({1, 10}), 0, 1}, {Ints({1, 11}), 0, 1}, {Ints({2, 20}), 0, 1}}),
             Rows({{Ints({1, 12}), 1, 1}, {Ints({1, 10}), 1, -1}, {Ints({2, 20}), 1, -1}})});
  auto reduce =
      MakeReduce(&in, s::ReducePlan(s::GetPlan("x"), {0}, {}).reduce(), AggregatedRowSchema());
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*reduce, 0, 1)), (Changes_{{"(1,)@0", 1}, {"(2,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(*reduce, 1, 2)), (Changes_{{"(2,)@1", -1}})) << "group 1 stays";
}

TEST(Operators, ReduceRetractsAGroupsOldRowWhenItsAggregatesChange) {
  Script in({Rows({{Ints({1, 10}), 0, 1}, {Ints({1, 30}), 0, 1}}), Rows({{Ints({1, 30}), 1, -1}})});
  auto reduce = MakeReduce(
      &in,
      s::ReducePlan(s::GetPlan("x"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}, {pb::MAX, 1}}).reduce(),
      AggregatedRowSchema());
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*reduce, 0, 1)), (Changes_{{"(1,2,40,30,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(*reduce, 1, 2)),
            (Changes_{{"(1,2,40,30,)@1", -1}, {"(1,1,10,10,)@1", 1}}));
}

// With two workers a Reduce combines each worker's rows into one partial state per (time, group)
// before the exchange (workers/operators/reduce.cc); merged, the partials must give exactly what
// one worker applying every row gives — for every aggregate, 128-bit sums of extreme values and
// counts beyond int64 included.
// A (group, int, float, flag) row; flag: 0 null, 1 true, 2 false. (Built in place: copying a
// Datum here trips GCC 12's maybe-uninitialized false positive, as at Aggregates::Compute.)
Row AggregatedRow(std::int64_t group, std::int64_t i, double f, std::uint64_t flag) {
  Row r;
  r.emplace_back(std::in_place_type<std::int64_t>, group);
  r.emplace_back(std::in_place_type<std::int64_t>, i);
  r.emplace_back(std::in_place_type<double>, f);
  if (flag == 0) {
    r.emplace_back(std::in_place_type<Null>);
  } else {
    r.emplace_back(std::in_place_type<bool>, flag == 1);
  }
  return r;
}

// A pull covers `span` times: pull p is [p * span, (p + 1) * span).
std::vector<Changes_> ReduceOnOneWorker(const pb::Plan::Reduce& plan,
                                        const std::vector<std::vector<RowUpdate>>& pulls,
                                        Time span) {
  std::vector<Delta> script;
  for (const auto& rows : pulls) script.push_back(Rows(rows));
  Script in(std::move(script));
  auto reduce = MakeReduce(&in, plan, AggregatedRowSchema());
  OneWorker w;
  std::vector<Changes_> out;
  for (std::size_t p = 0; p < pulls.size(); ++p) {
    out.push_back(Changes(w.Pull(*reduce, p * span, (p + 1) * span)));
  }
  return out;
}

// The same Reduce on two workers in lockstep, worker w pulling dealt[w]; both workers' changes of
// each pull together.
std::vector<Changes_> ReduceOnTwoWorkers(const pb::Plan::Reduce& plan,
                                         std::vector<std::vector<RowUpdate>> dealt[2], Time span) {
  Exchange exchange(2);
  std::vector<Delta> out[2];
  auto worker = [&](std::uint32_t me) {
    std::vector<Delta> script;
    for (auto& rows : dealt[me]) script.push_back(Rows(std::move(rows)));
    const std::size_t pulls = script.size();
    Script in(std::move(script));
    auto reduce = MakeReduce(&in, plan, AggregatedRowSchema());
    for (std::size_t p = 0; p < pulls; ++p) {
      out[me].push_back(
          reduce->Pull(TickCtx{p * span, Frontier::At((p + 1) * span), p + 1, me, &exchange}));
    }
  };
  std::thread second(worker, 1);
  worker(0);
  second.join();
  std::vector<Changes_> both;
  for (std::size_t p = 0; p < out[0].size(); ++p) {
    Delta d = std::move(out[0][p]);
    d.rows.insert(d.rows.end(), out[1][p].rows.begin(), out[1][p].rows.end());
    d.errors.insert(d.errors.end(), out[1][p].errors.begin(), out[1][p].errors.end());
    both.push_back(Changes(d));
  }
  return both;
}

// The rows of each pull dealt alternately to two workers, each pulling its own.
std::vector<Changes_> ReduceOnTwoWorkersDealt(const pb::Plan::Reduce& plan,
                                              const std::vector<std::vector<RowUpdate>>& pulls,
                                              Time span) {
  std::vector<std::vector<RowUpdate>> dealt[2];
  for (const auto& rows : pulls) {
    for (auto& half : dealt) half.emplace_back();
    for (std::size_t i = 0; i < rows.size(); ++i) dealt[i % 2].back().push_back(rows[i]);
  }
  return ReduceOnTwoWorkers(plan, dealt, span);
}

// A deterministic draw in [0, n) (a 64-bit LCG): the randomized tests' rows.
struct Draw {
  std::uint64_t x;
  std::uint64_t operator()(std::uint64_t n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % n;
  }
};

std::size_t RowChanges(const Changes_& c) {
  return static_cast<std::size_t>(
      std::count_if(c.begin(), c.end(), [](const auto& kv) { return kv.first[0] == '('; }));
}

// With two workers a Reduce combines each worker's rows into one partial state per (time, group)
// before the exchange (workers/operators/reduce.cc); merged, the partials must give exactly what
// one worker applying every row gives — for every aggregate, 128-bit sums of extreme values and
// counts beyond int64 included.
TEST(Operators, AReduceOverTwoWorkersCombiningBeforeTheExchangeEqualsOneWorker) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  // Rows over three pulls of two times each, inserted and retracted.
  std::vector<std::vector<RowUpdate>> pulls(3);
  Draw next{12345};
  for (std::size_t p = 0; p < pulls.size(); ++p) {
    for (int n = 0; n < 120; ++n) {
      const auto group = static_cast<std::int64_t>(next(4));
      const std::int64_t ints[] = {kMin, kMax, -1, 0, 7, static_cast<std::int64_t>(next(100))};
      const std::uint64_t flag = next(3);
      // Extremes in group 0 only — int64's limits as values and diffs of kMax, whose sums need
      // the high word of a 128-bit sum and make its COUNT and SUM errors (an error's changes do
      // not show: it is retracted and emitted again) — and small values in groups 1-3, whose
      // changes show. A kMax diff comes with a small value, so that no order of the additions
      // overflows 128 bits or rounds a float sum differently.
      const bool extreme = group == 0;
      const std::int64_t diff =
          extreme && next(4) == 0 ? kMax : static_cast<std::int64_t>(next(5)) - 2;
      if (diff == 0) continue;
      const bool huge = diff == kMax;
      const std::int64_t value = extreme && !huge ? ints[next(6)] : ints[2 + next(4)];
      pulls[p].push_back(
          {AggregatedRow(group, value, huge ? 0.0 : static_cast<double>(next(41)) / 8.0, flag),
           static_cast<Time>(2 * p + next(2)), diff});
    }
  }
  // Grouped by (flag, group): a key that is not the first columns, as a partial's key is.
  const pb::Plan::Reduce plan = s::ReducePlan(s::GetPlan("x"), {3, 0},
                                              {{pb::COUNT, 0},
                                               {pb::SUM, 1},
                                               {pb::SUM, 2},
                                               {pb::MIN, 1},
                                               {pb::MAX, 2},
                                               {pb::COUNT_NON_NULL, 3},
                                               {pb::COUNT_DISTINCT, 1},
                                               {pb::AVG, 1},
                                               {pb::AVG, 2},
                                               {pb::ANY, 3},
                                               {pb::ALL, 3}})
                                    .reduce();
  const std::vector<Changes_> one = ReduceOnOneWorker(plan, pulls, 2);
  const std::vector<Changes_> two = ReduceOnTwoWorkersDealt(plan, pulls, 2);
  for (std::size_t p = 0; p < pulls.size(); ++p) {
    EXPECT_EQ(two[p], one[p]) << "pull " << p;
    EXPECT_GE(RowChanges(one[p]), 2u) << "pull " << p << " changes rows of groups";
  }
}

// GROUP BY takes keys equal by value as one group, printed in the smallest spelling whose count is
// positive.
TEST(Operators, AReduceGroupsEqualNumericsAndPrintsTheSmallestSpellingPresent) {
  auto row = [](Int128 coefficient, int scale, std::int64_t v) {
    return Datums({Numeric::FromParts(coefficient, scale), v, 0.0, false});
  };
  const pb::Plan::Reduce plan =
      s::ReducePlan(s::GetPlan("x"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}}).reduce();
  const std::vector<Changes_> changes =
      ReduceOnOneWorker(plan,
                        {{{row(150, 2, 1), 0, 1}, {row(15, 1, 2), 0, 1}},
                         {{row(15, 1, 2), 1, -1}},
                         {{row(1500, 3, 4), 2, 1}}},
                        1);
  EXPECT_EQ(changes[0], (Changes_{{"(numeric '1.5',2,3,)@0", 1}}));
  EXPECT_EQ(changes[1], (Changes_{{"(numeric '1.5',2,3,)@1", -1}, {"(numeric '1.50',1,1,)@1", 1}}));
  EXPECT_EQ(changes[2],
            (Changes_{{"(numeric '1.50',1,1,)@2", -1}, {"(numeric '1.50',2,5,)@2", 1}}));
}

// Two workers — each combining its rows into partials of one spelling, the exchange routing
// equal values alike — print what one worker prints.
TEST(Operators, AReduceOverTwoWorkersPrintsTheSpellingOneWorkerPrints) {
  const std::vector<Numeric> keys = {Numeric::FromParts(15, 1), Numeric::FromParts(150, 2),
                                     Numeric::FromParts(1500, 3), Numeric::FromParts(2, 0),
                                     Numeric::FromParts(20, 1)};
  std::vector<std::vector<RowUpdate>> pulls(4);
  Draw next{777};
  for (std::size_t p = 0; p < pulls.size(); ++p) {
    for (int n = 0; n < 60; ++n) {
      const std::int64_t diff = static_cast<std::int64_t>(next(4)) - 1;  // mostly insertions
      if (diff == 0) continue;
      // 1.5 only in the first two pulls, all of it retracted in the third: 1.50 or 1.500 is
      // printed from then on.
      const std::size_t k = p < 2 ? next(keys.size()) : 1 + next(keys.size() - 1);
      pulls[p].push_back({Datums({keys[k], static_cast<std::int64_t>(next(9)), 0.0, false}),
                          static_cast<Time>(2 * p + next(2)), diff});
    }
  }
  for (std::size_t p = 0; p < 2; ++p) {
    for (const RowUpdate& u : pulls[p]) {
      if (CompareDatum(u.row[0], Datum(keys[0])) == 0) pulls[2].push_back({u.row, 4, -u.diff});
    }
  }
  const pb::Plan::Reduce plan =
      s::ReducePlan(s::GetPlan("x"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}}).reduce();
  const std::vector<Changes_> one = ReduceOnOneWorker(plan, pulls, 2);
  const std::vector<Changes_> two = ReduceOnTwoWorkersDealt(plan, pulls, 2);
  std::size_t spelled_apart = 0;
  for (std::size_t p = 0; p < pulls.size(); ++p) {
    EXPECT_EQ(two[p], one[p]) << "pull " << p;
    for (const auto& [change, diff] : one[p]) {
      spelled_apart +=
          change.starts_with("(numeric '1.50',") || change.starts_with("(numeric '1.500',");
    }
  }
  EXPECT_GT(spelled_apart, 0u) << "some time prints a spelling other than the first";
}

// A worker whose tick had about one row per group sends rows, not partials, for the next ticks
// (a partial would cost more than its row), while the other worker still sends partials: one
// exchange then carries both, and the result is still one worker's.
TEST(Operators, AReduceWhoseWorkersSendRowsAndPartialsInOneExchangeEqualsOneWorker) {
  std::vector<std::vector<RowUpdate>> dealt[2];
  for (int p = 0; p < 3; ++p) {
    for (auto& half : dealt) half.emplace_back();
    for (std::int64_t i = 0; i < 400; ++i) {
      // Worker 0: a group per row in the first pull (it stops combining), then groups 0-9 as
      // worker 1 has throughout (it keeps combining).
      const std::int64_t group0 = p == 0 ? 1000 + i : i % 10;
      const auto t = static_cast<Time>(2 * p + i % 2);
      const std::int64_t diff = i % 7 == 3 ? -1 : 1;
      dealt[0].back().push_back({AggregatedRow(group0, i, 0.5 * i, i % 3), t, diff});
      dealt[1].back().push_back({AggregatedRow(i % 10, -i, 0.25 * i, i % 2), t, diff});
    }
  }
  std::vector<std::vector<RowUpdate>> pulls;
  for (int p = 0; p < 3; ++p) {
    pulls.push_back(dealt[0][p]);
    pulls.back().insert(pulls.back().end(), dealt[1][p].begin(), dealt[1][p].end());
  }
  const pb::Plan::Reduce plan =
      s::ReducePlan(s::GetPlan("x"), {0},
                    {{pb::COUNT, 0}, {pb::SUM, 1}, {pb::SUM, 2}, {pb::MAX, 1}, {pb::ANY, 3}})
          .reduce();
  const std::vector<Changes_> one = ReduceOnOneWorker(plan, pulls, 2);
  const std::vector<Changes_> two = ReduceOnTwoWorkers(plan, dealt, 2);
  for (std::size_t p = 0; p < pulls.size(); ++p) {
    EXPECT_EQ(two[p], one[p]) << "pull " << p;
    EXPECT_GE(RowChanges(one[p]), 10u) << "pull " << p;
  }
}

TEST(Operators, CountBeyondInt64IsAnErrorAndFitsAgainAfterARetraction) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Script in({Rows({{Ints({1}), 0, kMax}, {Ints({1}), 0, 1}}), Rows({{Ints({1}), 1, -1}})});
  auto reduce = MakeReduce(&in, s::ReducePlan(s::GetPlan("x"), {}, {{pb::COUNT, 0}}).reduce(),
                           AggregatedRowSchema());
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*reduce, 0, 1)), (Changes_{{"!integer overflow in COUNT@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(*reduce, 1, 2)), (Changes_{{"!integer overflow in COUNT@1", -1},
                                                      {"(" + std::to_string(kMax) + ",)@1", 1}}));
}

TEST(Operators, DistinctEmitsOnlyWhenARowAppearsOrDisappears) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Script in({Rows({{Ints({1}), 0, kMax}, {Ints({1}), 0, kMax}, {Ints({2}), 0, 1}}),
             Rows({{Ints({1}), 1, -kMax}, {Ints({2}), 1, -1}}), Rows({{Ints({1}), 2, -kMax}})});
  ThresholdNode distinct(&in, ThresholdNode::Kind::kDistinct);
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(distinct, 0, 1)), (Changes_{{"(1,)@0", 1}, {"(2,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(distinct, 1, 2)), (Changes_{{"(2,)@1", -1}}))
      << "row 1 still has a count of INT64_MAX";
  EXPECT_EQ(Changes(w.Pull(distinct, 2, 3)), (Changes_{{"(1,)@2", -1}}));
}

// DISTINCT takes rows equal by value as one, and prints the smallest spelling whose count is
// positive: another once that one goes.
TEST(Operators, DistinctCountsSpellingsOfOneValueAsOneRowAndPrintsTheSmallestPresent) {
  const Numeric one_five = Numeric::FromParts(15, 1), one_fifty = Numeric::FromParts(150, 2);
  Script in({Rows({{Datums({one_fifty}), 0, 1},
                   {Datums({one_five}), 0, 2},
                   {Datums({Interval{1, 0, 0}}), 0, 1}}),
             Rows({{Datums({one_five}), 1, -2}, {Datums({Interval{0, 30, 0}}), 1, 1}}),
             Rows({{Datums({one_fifty}), 2, -1}})});
  ThresholdNode distinct(&in, ThresholdNode::Kind::kDistinct);
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(distinct, 0, 1)),
            (Changes_{{"(numeric '1.5',)@0", 1}, {"(interval '1 mon',)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(distinct, 1, 2)), (Changes_{{"(numeric '1.5',)@1", -1},
                                                       {"(numeric '1.50',)@1", 1},
                                                       {"(interval '1 mon',)@1", -1},
                                                       {"(interval '30 days',)@1", 1}}));
  EXPECT_EQ(Changes(w.Pull(distinct, 2, 3)), (Changes_{{"(numeric '1.50',)@2", -1}}));
}

TEST(Operators, ThresholdSumsTheCountsOfEverySpellingOfAValue) {
  const Numeric one_five = Numeric::FromParts(15, 1), one_fifty = Numeric::FromParts(150, 2);
  // EXCEPT ALL of {1.50, 1.50} and {1.5}: one 1.50 is left.
  Script in({Rows({{Datums({one_fifty}), 0, 2}, {Datums({one_five}), 0, -1}})});
  ThresholdNode threshold(&in, ThresholdNode::Kind::kThreshold);
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(threshold, 0, 1)), (Changes_{{"(numeric '1.50',)@0", 1}}));
}

TEST(Operators, UnionIsTheSumOfItsInputs) {
  Script a({Rows({{Ints({1}), 0, 1}})});
  Script b({Delta{{{Ints({1}), 0, -1}, {Ints({2}), 0, 1}}, {{"boom", 0, 1}}}});
  UnionNode u({&a, &b});
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(u, 0, 1)), (Changes_{{"(2,)@0", 1}, {"!boom@0", 1}}));
}

TEST(Operators, ACachedNodeComputesOncePerTickForAllItsConsumers) {
  Script in({Rows({{Ints({1}), 0, 1}}), Rows({{Ints({2}), 1, 1}})});
  CachedNode cached(&in);
  cached.AddConsumer();
  cached.AddConsumer();
  OneWorker w;
  const TickCtx first{0, Frontier::At(1), 1, 0, &w.exchange};
  EXPECT_EQ(Changes(cached.Pull(first)), Changes(cached.Pull(first)));
  const TickCtx second{1, Frontier::At(2), 2, 0, &w.exchange};
  EXPECT_EQ(Changes(cached.Pull(second)), (Changes_{{"(2,)@1", 1}}));
}

TEST(Operators, TheIndexExportArrangesRowsByKeyAndErrorsUnderTheErrorPrefix) {
  OneWorker w;
  Delta d{{{Ints({5, 50}), 3, 1}}, {{"bad", 3, 1}}};
  const TickCtx ctx{0, Frontier::At(4), 1, 0, &w.exchange};
  shm::UpdateBuffer updates = ArrangeByKey(ctx, std::move(d), {1}, Partitioning::Unknown());
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates.key(0), EncodeRow(Ints({50})));
  EXPECT_EQ(updates.val(0), EncodeRow(Ints({5, 50})));
  EXPECT_EQ(updates.key(1), std::string(1, '\0') + "bad");
  EXPECT_EQ(updates.time(1), 3u);
}

TEST(Operators, ThresholdKeepsPositiveCountsWithTheirCountAndDropsTheRest) {
  Script in({Rows({{Ints({1}), 0, 3}, {Ints({2}), 0, -2}}),
             Rows({{Ints({1}), 1, -4}, {Ints({2}), 1, 5}})});
  ThresholdNode threshold(&in, ThresholdNode::Kind::kThreshold);
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(threshold, 0, 1)), (Changes_{{"(1,)@0", 3}}));
  EXPECT_EQ(Changes(w.Pull(threshold, 1, 2)), (Changes_{{"(1,)@1", -3}, {"(2,)@1", 3}}));
}

TEST(Operators, NegateFlipsEveryRowsCountButNotErrors) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  Script in({Delta{{{Ints({1}), 0, 2}, {Ints({2}), 0, kMin}}, {{"boom", 0, 1}}}});
  NegateNode negate(&in);
  OneWorker w;
  Delta d = w.Pull(negate, 0, 1);
  Int128 two = 0;
  for (const auto& u : d.rows) two += std::get<std::int64_t>(u.row[0]) == 2 ? u.diff : 0;
  EXPECT_EQ(two, -static_cast<Int128>(kMin)) << "INT64_MIN negated in two parts";
  d.rows.erase(
      std::remove_if(d.rows.begin(), d.rows.end(),
                     [](const RowUpdate& u) { return std::get<std::int64_t>(u.row[0]) == 2; }),
      d.rows.end());
  EXPECT_EQ(Changes(d), (Changes_{{"(1,)@0", -2}, {"!boom@0", 1}}));
}

TEST(Operators, TopKKeepsTheWindowOfEachGroupCountingMultiplicities) {
  // Groups by c0, order by c1 descending, offset 1, limit 2.
  Script in({Rows({{Ints({1, 10}), 0, 1},
                   {Ints({1, 20}), 0, 2},
                   {Ints({1, 5}), 0, 1},
                   {Ints({2, 7}), 0, 1}}),
             Rows({{Ints({1, 30}), 1, 1}, {Ints({2, 7}), 1, -1}})});
  auto top = MakeTopK(&in, s::TopKPlan(s::GetPlan("x"), {0}, {s::Order(1, true)}, 2, 1).top_k());
  OneWorker w;
  // Group 1 in order: 20, 20, 10, 5 → positions 1..2 are 20 and 10. Group 2: only 7, at 0.
  EXPECT_EQ(Changes(w.Pull(*top, 0, 1)), (Changes_{{"(1,20,)@0", 1}, {"(1,10,)@0", 1}}));
  // 30 comes first: the window is 20, 20.
  EXPECT_EQ(Changes(w.Pull(*top, 1, 2)), (Changes_{{"(1,20,)@1", 1}, {"(1,10,)@1", -1}}));
}

TEST(Operators, TopKPlacesNullsAsAskedAndIgnoresRowsWithoutAPositiveCount) {
  Script in({Rows({{Datums({Null{}}), 0, 1}, {Ints({3}), 0, 1}, {Ints({4}), 0, -1}})});
  auto top =
      MakeTopK(&in, s::TopKPlan(s::GetPlan("x"), {}, {s::Order(0, false, true)}, 1, 0).top_k());
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*top, 0, 1)), (Changes_{{"(3,)@0", 1}}));
}

TEST(Operators, AJoinPairsEqualKeysMultiplyingCountsAndNullKeysNeverMatch) {
  // left (k, a), right (k, b): key 1 many-to-many, key 2 only left, null on both sides.
  Script l({Rows({{Ints({1, 10}), 0, 1},
                  {Ints({1, 11}), 0, 2},
                  {Ints({2, 20}), 0, 1},
                  {Datums({Null{}, std::int64_t{0}}), 0, 1}}),
            Rows({{Ints({2, 21}), 1, 1}})});
  Script r({Rows({{Ints({1, 100}), 0, 3}, {Datums({Null{}, std::int64_t{1}}), 0, 1}}),
            Rows({{Ints({2, 200}), 1, 1}, {Ints({1, 100}), 1, -3}})});
  JoinNode join(MakeOwnSide(&l, {0}), MakeOwnSide(&r, {0}), false, 2, {0});
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(join, 0, 1)),
            (Changes_{{"(1,10,1,100,)@0", 3}, {"(1,11,1,100,)@0", 6}}));
  // At 1: key 2 gains a right row (joins both left rows, the new one once), key 1 loses its.
  EXPECT_EQ(Changes(w.Pull(join, 1, 2)), (Changes_{{"(2,20,2,200,)@1", 1},
                                                   {"(2,21,2,200,)@1", 1},
                                                   {"(1,10,1,100,)@1", -3},
                                                   {"(1,11,1,100,)@1", -6}}));
  EXPECT_EQ(join.ArrangedRecords(), 5u) << "1,10  1,11  2,20  2,21 and 2,200 (1,100 left)";
}

// Keys compare by value (base/row.h "Keys"): 1.5 and 1.50 meet in a join, each side keeping its
// spelling.
TEST(Operators, AJoinMatchesNumericsOfEveryScaleAndIntervalsOfEqualSpan) {
  const Numeric a = Numeric::FromParts(-7500, 4), b = Numeric::FromParts(-75, 2);
  Script l({Rows({{Datums({a, std::int64_t{1}}), 0, 1},
                  {Datums({Interval{1, 0, 0}, std::int64_t{2}}), 0, 1}})});
  Script r({Rows({{Datums({b, std::int64_t{10}}), 0, 1},
                  {Datums({Interval{0, 30, 0}, std::int64_t{20}}), 0, 1},
                  {Datums({Interval{0, 31, 0}, std::int64_t{30}}), 0, 1}})});
  JoinNode join(MakeOwnSide(&l, {0}), MakeOwnSide(&r, {0}), false, 2, {0});
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(join, 0, 1)),
            (Changes_{{"(numeric '-0.7500',1,numeric '-0.75',10,)@0", 1},
                      {"(interval '1 mon',2,interval '30 days',20,)@0", 1}}));
}

// A one-shot's join charges what it emits to the one-shot's budget and stops past it; without a
// budget (a maintained dataflow) the same join emits its whole product.
TEST(Operators, AJoinStopsEmittingOnceItsOneShotBudgetIsExceeded) {
  auto sides = [] {
    std::vector<RowUpdate> rows;
    for (std::int64_t i = 0; i < 300; ++i) rows.push_back({Ints({7, i}), 0, 1});
    return Rows(std::move(rows));
  };
  {
    Script l({sides()}), r({sides()});
    JoinNode join(MakeOwnSide(&l, {0}), MakeOwnSide(&r, {0}), false, 2, {0});
    OneWorker w;
    EXPECT_EQ(w.Pull(join, 0, 1).rows.size(), 300u * 300u);
  }
  Script l({sides()}), r({sides()});
  JoinNode join(MakeOwnSide(&l, {0}), MakeOwnSide(&r, {0}), false, 2, {0});
  Exchange exchange{1};
  MemoryBudget budget(256 << 10);
  const Delta out = join.Pull(TickCtx{0, Frontier::At(1), 1, 0, &exchange, &budget});
  EXPECT_TRUE(budget.exceeded());
  // One left row's matches (300) at most past the slice that crossed the limit.
  const std::size_t row = BudgetMeter::HeldBytes(out.rows.front());
  EXPECT_LT(out.rows.size(), ((256u << 10) + (64u << 10)) / row + 300);
  EXPECT_GT(out.rows.size(), (256u << 10) / row - 300);
  EXPECT_LE(budget.used(), (256u << 10) + (64u << 10) + 300 * row);
  EXPECT_NE(budget.Why().find("max_one_shot_memory (262144 bytes)"), std::string::npos);
}

TEST(Operators, ALeftJoinKeepsUnmatchedLeftRowsWithNullsUntilAMatchArrives) {
  Script l({Rows({{Ints({1, 10}), 0, 2}, {Datums({Null{}, std::int64_t{5}}), 0, 1}}), Rows({}),
            Rows({})});
  Script r({Rows({}), Rows({{Ints({1, 100}), 1, 1}}), Rows({{Ints({1, 100}), 2, -1}})});
  JoinNode join(MakeOwnSide(&l, {0}), MakeOwnSide(&r, {0}), true, 2, {0});
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(join, 0, 1)),
            (Changes_{{"(1,10,null,null,)@0", 2}, {"(null,5,null,null,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(join, 1, 2)),
            (Changes_{{"(1,10,null,null,)@1", -2}, {"(1,10,1,100,)@1", 2}}));
  EXPECT_EQ(Changes(w.Pull(join, 2, 3)),
            (Changes_{{"(1,10,null,null,)@2", 2}, {"(1,10,1,100,)@2", -2}}));
}

TEST(Operators, ALeftJoinCountsAnUpdateAtTheTimeItsKeyGainsAMatchOnce) {
  Script l({Rows({{Ints({1, 10}), 0, 1}, {Ints({1, 11}), 0, 1}})});
  Script r({Rows({{Ints({1, 100}), 0, 1}})});
  JoinNode join(MakeOwnSide(&l, {0}), MakeOwnSide(&r, {0}), true, 2, {0});
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(join, 0, 1)),
            (Changes_{{"(1,10,1,100,)@0", 1}, {"(1,11,1,100,)@0", 1}}));
}

// An index of `rows` keyed by column `key`, in process memory (as a one-shot's snapshot is).
class LocalIndex final : public ImportedIndex {
 public:
  // Each inner vector is one batch of (row, time, diff).
  using Updates = std::vector<std::tuple<Row, Time, std::int64_t>>;
  LocalIndex(const std::vector<std::pair<Row, Time>>& rows, std::uint32_t key) {
    Updates u;
    for (const auto& [row, t] : rows) u.emplace_back(row, t, 1);
    Add(u, key);
  }
  LocalIndex(const std::vector<Updates>& batches, std::uint32_t key) {
    for (const Updates& u : batches) Add(u, key);
  }
  std::vector<shm::BatchView> Batches() override {
    std::vector<shm::BatchView> views;
    for (const auto& b : batches_) views.push_back(b.view());
    return views;
  }
  void Read(Frontier) override {}

 private:
  void Add(const Updates& updates, std::uint32_t key) {
    shm::UpdateBuffer buffer;
    for (const auto& [row, t, diff] : updates) {
      std::string k;
      AppendEncodedDatum(row[key], &k);
      buffer.Push(k, EncodeRow(row), t, diff);
    }
    auto batch = shm::BuildLocalBatch(std::move(buffer), Frontier::At(0));
    ASSERT_TRUE(batch.ok() && batch->has_value());
    batches_.push_back(std::move(**batch));
  }
  std::vector<shm::LocalBatch> batches_;
};

// An imported side's value whose updates are in several batches counts once, consolidated: one
// that cancels across batches is gone, and one split over two batches keeps its whole count.
TEST(Operators, AJoinReadsAnImportedValueSplitOverBatchesAsItsConsolidatedCount) {
  LocalIndex dim({{{Ints({1, 10}), 0, 1}, {Ints({2, 20}), 0, 1}},
                  {{Ints({1, 10}), 0, -1}, {Ints({2, 20}), 0, 2}, {Ints({3, 30}), 1, 1}}},
                 0);
  Script facts(
      {Rows({{Ints({100, 1}), 0, 1}, {Ints({101, 2}), 0, 1}, {Ints({102, 3}), 0, 1}}), Rows({})});
  JoinNode join(MakeOwnSide(&facts, {1}),
                MakeImportedSide(&dim, "s_dim", {0}, 0, Frontier::Empty()), false, 2, {1});
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(join, 0, 1)), (Changes_{{"(101,2,2,20,)@0", 3}}))
      << "key 1 cancelled across the batches; 2 is 1 + 2; 3 only from time 1";
  EXPECT_EQ(Changes(w.Pull(join, 1, 2)), (Changes_{{"(102,3,3,30,)@1", 1}}));
}

// A left outer join with an imported left side: key 1 gains a right row at 1 and loses it at 2,
// within one tick; each left row is unmatched, matched, then unmatched again — at its times.
TEST(Operators, ALeftJoinOverAnImportedLeftSideFollowsMatchesGainedAndLostInOneTick) {
  LocalIndex left({{{Ints({1, 10}), 0, 1}, {Ints({1, 11}), 0, 1}, {Ints({2, 20}), 1, 1}}}, 0);
  Script right({Rows({{Ints({1, 100}), 1, 1}, {Ints({1, 100}), 2, -1}})});
  JoinNode join(MakeImportedSide(&left, "s_left", {0}, 0, Frontier::Empty()),
                MakeOwnSide(&right, {0}), true, 2, {0});
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(join, 0, 3)), (Changes_{{"(1,10,null,null,)@0", 1},
                                                   {"(1,11,null,null,)@0", 1},
                                                   {"(1,10,null,null,)@1", -1},
                                                   {"(1,11,null,null,)@1", -1},
                                                   {"(1,10,1,100,)@1", 1},
                                                   {"(1,11,1,100,)@1", 1},
                                                   {"(2,20,null,null,)@1", 1},
                                                   {"(1,10,null,null,)@2", 1},
                                                   {"(1,11,null,null,)@2", 1},
                                                   {"(1,10,1,100,)@2", -1},
                                                   {"(1,11,1,100,)@2", -1}}));
  EXPECT_EQ(join.ArrangedRecords(), 0u) << "the right row came and went; the left is imported";
}

// A join whose right input is an index import arranged by the join key
// reads that index in place; the same join whose import is keyed otherwise arranges it again.
TEST(Operators, AJoinOverAnImportedIndexArrangedByItsKeyKeepsNoSecondArrangement) {
  constexpr int kFacts = 50, kDims = 200;
  std::vector<std::pair<Row, Time>> dims;
  for (int d = 0; d < kDims; ++d) dims.push_back({Ints({d, 1000 + d}), 0});
  auto run = [&](std::uint32_t import_key, std::size_t* records, std::string* arrangement) {
    pb::DataflowDescription desc;
    desc.mutable_as_of()->add_elements(0);
    *desc.add_index_imports() =
        s::Import("s_dim", "u_dim",
                  s::MakeSchema({s::MakeColumn("id", pb::INT64), s::MakeColumn("v", pb::INT64)}),
                  {import_key});
    *desc.add_objects_to_build() =
        s::Build("t", s::JoinPlan(s::GetPlan("u_fact"), s::GetPlan("s_dim"), {1}, {0}));
    *desc.add_index_exports() = s::Export("s_t", "t", {0});
    std::vector<Delta> fact_ticks(1);
    for (int f = 0; f < kFacts; ++f) fact_ticks[0].rows.push_back({Ints({f, f % kDims}), 0, 1});
    fact_ticks.push_back(Rows({{Ints({0, 0}), 1, -1}}));
    std::vector<PlanInput> inputs;
    inputs.push_back({{"u_fact"}, std::make_unique<Script>(std::move(fact_ticks)), {}, nullptr});
    auto index = std::make_unique<LocalIndex>(dims, import_key);
    ImportedIndex* raw = index.get();
    inputs.push_back(
        {{"s_dim", "u_dim"},
         std::make_unique<ImportNode>(std::move(index), std::vector<std::uint32_t>{import_key}, 0,
                                      Frontier::Empty()),
         {import_key},
         raw});
    PlanGraph g = BuildPlanGraph(desc, std::move(inputs));
    EXPECT_EQ(g.joins.size(), 1u);
    OneWorker w;
    Changes_ out = Changes(w.Pull(*g.exports.at(0).first, 0, 1));
    for (auto& [k, v] : Changes(w.Pull(*g.exports.at(0).first, 1, 2))) out[k] += v;
    *records = g.joins.at(0)->ArrangedRecords();
    *arrangement = g.arrangements.at(0);
    return out;
  };
  std::size_t in_place = 0, arranged = 0;
  std::string in_place_log, arranged_log;
  const Changes_ a = run(0, &in_place, &in_place_log);
  const Changes_ b = run(1, &arranged, &arranged_log);
  EXPECT_EQ(a, b) << "both read the same join";
  EXPECT_EQ(a.size(), static_cast<std::size_t>(kFacts + 1)) << "each fact at 0, one retracted at 1";
  EXPECT_EQ(in_place, static_cast<std::size_t>(kFacts - 1)) << "only the facts are arranged";
  EXPECT_EQ(arranged, static_cast<std::size_t>(kFacts - 1 + kDims));
  EXPECT_EQ(in_place_log,
            "join 1: left side its own arrangement, right side imported index s_dim, in place");
  EXPECT_EQ(arranged_log, "join 1: left side its own arrangement, right side its own arrangement");
}

// Two indexes of one collection imported, keyed differently: a join of the collection by name
// reads the one arranged by its join key in place, whichever order the imports come in.
TEST(Operators, AJoinOfACollectionWithTwoImportedIndexesReadsTheOneArrangedByItsKey) {
  const pb::Schema dim_schema =
      s::MakeSchema({s::MakeColumn("id", pb::INT64), s::MakeColumn("v", pb::INT64)});
  for (const bool by_id_first : {true, false}) {
    pb::DataflowDescription desc;
    desc.mutable_as_of()->add_elements(0);
    const std::vector<std::pair<std::string, std::uint32_t>> order =
        by_id_first
            ? std::vector<std::pair<std::string, std::uint32_t>>{{"s_by_id", 0}, {"s_by_v", 1}}
            : std::vector<std::pair<std::string, std::uint32_t>>{{"s_by_v", 1}, {"s_by_id", 0}};
    std::vector<PlanInput> inputs;
    inputs.push_back({{"u_fact"}, std::make_unique<Script>(std::vector<Delta>{}), {}, nullptr});
    std::vector<std::pair<Row, Time>> dims{{Ints({1, 10}), 0}};
    for (const auto& [id, key] : order) {
      *desc.add_index_imports() = s::Import(id, "u_dim", dim_schema, {key});
      auto index = std::make_unique<LocalIndex>(dims, key);
      ImportedIndex* raw = index.get();
      inputs.push_back(
          {{id, "u_dim"},
           std::make_unique<ImportNode>(std::move(index), std::vector<std::uint32_t>{key}, 0,
                                        Frontier::Empty()),
           {key},
           raw});
    }
    *desc.add_objects_to_build() =
        s::Build("t", s::JoinPlan(s::GetPlan("u_fact"), s::GetPlan("u_dim"), {1}, {0}));
    *desc.add_index_exports() = s::Export("s_t", "t", {0});
    PlanGraph g = BuildPlanGraph(desc, std::move(inputs));
    EXPECT_EQ(g.arrangements.at(0),
              "join 1: left side its own arrangement, right side imported index s_by_id, in place")
        << (by_id_first ? "by id first" : "by v first");
  }
}

}  // namespace
}  // namespace tandem::workers
