// What /metrics says about one-shot dataflows and hold gaps (supervisor/reads.h), as pure
// functions of the commands and responses the supervisor forwards and of the segment's slots.
#include <gtest/gtest.h>

#include "shm/layout.h"
#include "supervisor/metrics.h"
#include "supervisor/reads.h"

namespace tandem::supervisor {
namespace {

using Clock = OneShots::Clock;
using std::chrono::milliseconds;

ipc::pb::Command OneShot(std::vector<std::string> exports, Time as_of,
                         ipc::pb::DataflowClass cls = ipc::pb::ONE_SHOT_READ) {
  ipc::pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_class_(cls);
  d->mutable_as_of()->add_elements(as_of);
  d->mutable_until()->add_elements(as_of + 1);
  auto* imp = d->add_index_imports();
  imp->set_id("u2");
  imp->set_on("u1");
  for (const auto& e : exports) {
    auto* x = d->add_index_exports();
    x->set_id(e);
    x->set_on("g");
  }
  return c;
}

ipc::pb::Command Drop(const std::string& id) {
  ipc::pb::Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier();
  return c;
}

ipc::pb::Frontiers Write(const std::string& id, std::optional<Time> write) {
  ipc::pb::Frontiers f;
  f.set_id(id);
  if (write) f.mutable_write()->add_elements(*write);
  return f;
}

TEST(OneShots, TimesFromTheCreateToTheFrontierPastAsOfAndRunsUntilDropped) {
  OneShots shots;
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(shots.OnForwarded(OneShot({"t1"}, 5), t0));
  EXPECT_EQ(shots.running(), 1u);
  EXPECT_FALSE(shots.OnFrontiers(Write("t1", 5), t0 + milliseconds(1))) << "not past as_of";
  EXPECT_FALSE(shots.OnFrontiers(Write("u2", 9), t0 + milliseconds(1))) << "not a one-shot";
  auto latency = shots.OnFrontiers(Write("t1", 6), t0 + milliseconds(7));
  ASSERT_TRUE(latency);
  EXPECT_EQ(*latency, milliseconds(7));
  EXPECT_FALSE(shots.OnFrontiers(Write("t1", 6), t0 + milliseconds(9))) << "timed once";
  EXPECT_EQ(shots.running(), 1u) << "computed, still running until dropped";
  EXPECT_FALSE(shots.OnForwarded(Drop("t2"), t0)) << "another id";
  ipc::pb::Command partial = Drop("t1");
  partial.mutable_allow_compaction()->mutable_frontier()->add_elements(6);
  EXPECT_FALSE(shots.OnForwarded(partial, t0));
  EXPECT_EQ(shots.running(), 1u) << "a non-empty frontier changes nothing";
  EXPECT_FALSE(shots.OnForwarded(Drop("t1"), t0));
  EXPECT_EQ(shots.running(), 0u);
  EXPECT_FALSE(shots.OnFrontiers(Write("t1", std::nullopt), t0)) << "the drop's empty frontier";
}

TEST(OneShots, MaintainedDataflowsAreNotOneShots) {
  OneShots shots;
  EXPECT_FALSE(shots.OnForwarded(OneShot({"u3"}, 5, ipc::pb::MAINTAINED), Clock::now()));
  EXPECT_EQ(shots.running(), 0u);
  EXPECT_FALSE(shots.OnFrontiers(Write("u3", 6), Clock::now()));
}

TEST(OneShots, SeveralExportsAreAnsweredWhenTheLastReportsAndRunUntilTheLastIsDropped) {
  OneShots shots;
  const Clock::time_point t0 = Clock::now();
  ASSERT_TRUE(shots.OnForwarded(OneShot({"t1", "t2"}, 3), t0));
  EXPECT_FALSE(shots.OnFrontiers(Write("t2", 4), t0 + milliseconds(2)));
  auto latency = shots.OnFrontiers(Write("t1", 4), t0 + milliseconds(5));
  ASSERT_TRUE(latency);
  EXPECT_EQ(*latency, milliseconds(5));
  shots.OnForwarded(Drop("t1"), t0);
  EXPECT_EQ(shots.running(), 1u);
  shots.OnForwarded(Drop("t2"), t0);
  EXPECT_EQ(shots.running(), 0u);
}

TEST(OneShots, ADropBeforeTheAnswerIsNotTimedAndATransientIdIsReusable) {
  OneShots shots;
  const Clock::time_point t0 = Clock::now();
  ASSERT_TRUE(shots.OnForwarded(OneShot({"t1"}, 3), t0));
  shots.OnForwarded(Drop("t1"), t0);
  EXPECT_FALSE(shots.OnFrontiers(Write("t1", 4), t0 + milliseconds(1)));
  ASSERT_TRUE(shots.OnForwarded(OneShot({"t1"}, 8), t0 + milliseconds(10)));
  EXPECT_FALSE(shots.OnFrontiers(Write("t1", 4), t0 + milliseconds(11))) << "the old as_of";
  auto latency = shots.OnFrontiers(Write("t1", 9), t0 + milliseconds(13));
  ASSERT_TRUE(latency);
  EXPECT_EQ(*latency, milliseconds(3));
}

TEST(OneShots, AReplayKeepsWhatItCreatesAgainAndForgetsTheRest) {
  OneShots shots;
  const Clock::time_point t0 = Clock::now();
  ASSERT_TRUE(shots.OnForwarded(OneShot({"t1"}, 3), t0));
  ASSERT_TRUE(shots.OnForwarded(OneShot({"t2"}, 3), t0));
  ipc::pb::Command hello;
  hello.mutable_hello()->set_nonce("n");
  shots.OnForwarded(hello, t0);
  EXPECT_FALSE(shots.OnForwarded(OneShot({"t1"}, 3), t0)) << "replayed: not built again";
  ipc::pb::Command done;
  done.mutable_initialization_complete();
  shots.OnForwarded(done, t0);
  EXPECT_EQ(shots.running(), 1u) << "t2 was left out of the replay";
  EXPECT_TRUE(shots.OnFrontiers(Write("t1", 4), t0 + milliseconds(1)));
  EXPECT_FALSE(shots.OnFrontiers(Write("t2", 4), t0 + milliseconds(1)));
}

TEST(OneShots, TracksABoundedNumber) {
  OneShots shots;
  const Clock::time_point t0 = Clock::now();
  for (std::size_t i = 0; i < OneShots::kMaxTracked + 10; ++i) {
    EXPECT_TRUE(shots.OnForwarded(OneShot({"t" + std::to_string(i + 1)}, 3), t0));
  }
  EXPECT_EQ(shots.running(), OneShots::kMaxTracked);
}

shm::SlotInfo Slot(std::uint64_t id, std::uint32_t ordinal, Time own, Time since,
                   std::uint32_t flags = shm::kSlotFilled) {
  shm::SlotInfo s;
  s.key = shm::SlotKey{GlobalId::User(id), 0};
  s.ordinal = ordinal;
  s.flags = flags;
  s.own_frontier = Frontier::At(own);
  s.since = Frontier::At(since);
  return s;
}

TEST(HoldGaps, TheSlowestOrdinalOfEachIndexLargestFirstAndBounded) {
  std::vector<shm::SlotInfo> slots = {
      Slot(2, 0, 10, 10),
      Slot(2, 1, 10, 4),  // u2: ordinal 1 held at 4 → 6
      Slot(3, 0, 8, 8),
      Slot(3, 1, 8, 8),  // u3: caught up → 0
      Slot(4, 0, 20, 18),
      Slot(4, 1, 20, 19),
      Slot(5, 0, 50, 0, 0),                                         // a placeholder: nothing
      Slot(6, 0, 50, 0, shm::kSlotFilled | shm::kSlotUnpublished),  // dropped: nothing
  };
  shm::SlotInfo dropped = Slot(7, 0, 0, 0);
  dropped.own_frontier = Frontier::Empty();
  slots.push_back(dropped);
  Time max_gap = 0;
  auto gaps = HoldGaps(slots, 10, &max_gap);
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_EQ(gaps[0].id, "u2");
  EXPECT_EQ(gaps[0].gap, 6u);
  EXPECT_EQ(gaps[1].id, "u4");
  EXPECT_EQ(gaps[1].gap, 2u);
  EXPECT_EQ(gaps[2].id, "u3");
  EXPECT_EQ(gaps[2].gap, 0u);
  EXPECT_EQ(max_gap, 6u);
  gaps = HoldGaps(slots, 1, &max_gap);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].id, "u2");
  EXPECT_EQ(max_gap, 6u);
}

TEST(Metrics, ClearForgetsEverySeriesOfAGauge) {
  Metrics m;
  m.Declare("g", Metrics::Type::kGauge, "a gauge");
  m.Set("g", {{"id", "u2"}}, 3);
  m.Set("g", {{"id", "u3"}}, 4);
  m.Clear("g");
  m.Set("g", {{"id", "u3"}}, 5);
  const std::string text = m.Render();
  EXPECT_EQ(text.find("u2"), std::string::npos) << text;
  EXPECT_NE(text.find("g{id=\"u3\"} 5\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace tandem::supervisor
