// Each operator alone (workers/operators/), in process, on one worker: a scripted input node
// feeds it the changes of successive ticks, and the test checks the changes it emits.
#include <gtest/gtest.h>

#include <map>

#include "unit/protocol_samples.h"
#include "workers/exchange.h"
#include "workers/operators/cached.h"
#include "workers/operators/distinct.h"
#include "workers/operators/index_export.h"
#include "workers/operators/mfp.h"
#include "workers/operators/reduce.h"
#include "workers/operators/union.h"

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

Delta Rows(std::vector<RowUpdate> rows) { return Delta{std::move(rows), {}}; }

// The changes of one pull, consolidated: "row@time" → diff, errors as "!message@time".
std::map<std::string, std::int64_t> Changes(const Delta& d) {
  std::map<std::string, std::int64_t> out;
  for (const auto& u : d.rows) {
    std::string k = "(";
    for (const auto& datum : u.row) k += DatumToString(datum) + ",";
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

TEST(Operators, MfpMapsFiltersProjectsAndTurnsDataErrorsIntoErrors) {
  Script in({Rows({{Ints({1, 2}), 0, 1}, {Ints({0, 5}), 0, 2}, {Ints({3, 0}), 1, 1}})});
  // map: c1 / c0; filter c1 > 1; project (c0, c2)
  MfpNode mfp(&in, Mfp(s::Mfp({s::Binary(pb::DIV, s::Col(1), s::Col(0))},
                              {s::Binary(pb::GT, s::Col(1), s::IntLit(1))}, {0, 2}),
                       0));
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(mfp, 0, 2)), (Changes_{{"(1,2,)@0", 1}, {"!division by zero@0", 2}}));
}

TEST(Operators, ReduceWithoutAggregatesListsEachGroupOnce) {
  Script in({Rows({{Ints({1, 10}), 0, 1}, {Ints({1, 11}), 0, 1}, {Ints({2, 20}), 0, 1}}),
             Rows({{Ints({1, 12}), 1, 1}, {Ints({1, 10}), 1, -1}, {Ints({2, 20}), 1, -1}})});
  auto reduce = MakeReduce(&in, s::ReducePlan(s::GetPlan("x"), {0}, {}).reduce());
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*reduce, 0, 1)), (Changes_{{"(1,)@0", 1}, {"(2,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(*reduce, 1, 2)), (Changes_{{"(2,)@1", -1}})) << "group 1 stays";
}

TEST(Operators, ReduceRetractsAGroupsOldRowWhenItsAggregatesChange) {
  Script in({Rows({{Ints({1, 10}), 0, 1}, {Ints({1, 30}), 0, 1}}), Rows({{Ints({1, 30}), 1, -1}})});
  auto reduce = MakeReduce(
      &in,
      s::ReducePlan(s::GetPlan("x"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}, {pb::MAX, 1}}).reduce());
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*reduce, 0, 1)), (Changes_{{"(1,2,40,30,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(*reduce, 1, 2)),
            (Changes_{{"(1,2,40,30,)@1", -1}, {"(1,1,10,10,)@1", 1}}));
}

TEST(Operators, CountBeyondInt64IsAnErrorAndFitsAgainAfterARetraction) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Script in({Rows({{Ints({1}), 0, kMax}, {Ints({1}), 0, 1}}), Rows({{Ints({1}), 1, -1}})});
  auto reduce = MakeReduce(&in, s::ReducePlan(s::GetPlan("x"), {}, {{pb::COUNT, 0}}).reduce());
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(*reduce, 0, 1)), (Changes_{{"!integer overflow in COUNT@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(*reduce, 1, 2)), (Changes_{{"!integer overflow in COUNT@1", -1},
                                                      {"(" + std::to_string(kMax) + ",)@1", 1}}));
}

TEST(Operators, DistinctEmitsOnlyWhenARowAppearsOrDisappears) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Script in({Rows({{Ints({1}), 0, kMax}, {Ints({1}), 0, kMax}, {Ints({2}), 0, 1}}),
             Rows({{Ints({1}), 1, -kMax}, {Ints({2}), 1, -1}}), Rows({{Ints({1}), 2, -kMax}})});
  DistinctNode distinct(&in);
  OneWorker w;
  EXPECT_EQ(Changes(w.Pull(distinct, 0, 1)), (Changes_{{"(1,)@0", 1}, {"(2,)@0", 1}}));
  EXPECT_EQ(Changes(w.Pull(distinct, 1, 2)), (Changes_{{"(2,)@1", -1}}))
      << "row 1 still has a count of INT64_MAX";
  EXPECT_EQ(Changes(w.Pull(distinct, 2, 3)), (Changes_{{"(1,)@2", -1}}));
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
  shm::UpdateBuffer updates = ArrangeByKey(ctx, std::move(d), {1});
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates.key(0), EncodeRow(Ints({50})));
  EXPECT_EQ(updates.val(0), EncodeRow(Ints({5, 50})));
  EXPECT_EQ(updates.key(1), std::string(1, '\0') + "bad");
  EXPECT_EQ(updates.time(1), 3u);
}

}  // namespace
}  // namespace tandem::workers
