// The runtime's one ordered stream (workers/command_sequencer.h): commands that arrive out of
// order over the two paths come out in the supervisor's order, and a number reused is a bug.
#include "workers/command_sequencer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace tandem::workers {
namespace {

ipc::pb::Command PeekCommand(std::uint64_t n) {
  ipc::pb::Command c;
  c.mutable_peek()->set_uuid("p" + std::to_string(n));
  return c;
}

TEST(CommandSequencer, APeekAheadOfTheCreateBeforeItWaitsForIt) {
  CommandSequencer s;
  s.Offer(2, PeekCommand(2));  // the ring was faster than the channel
  EXPECT_FALSE(s.Next().has_value()) << "command 1 has not arrived";
  EXPECT_EQ(s.waiting(), 1u);
  ipc::pb::Command create;
  create.mutable_create_dataflow();
  s.Offer(1, create);
  auto first = s.Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->has_create_dataflow());
  auto second = s.Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->peek().uuid(), "p2");
  EXPECT_FALSE(s.Next().has_value());
  EXPECT_EQ(s.next(), 3u);
}

TEST(CommandSequencer, AnyArrivalOrderComesOutInTheSupervisorsOrder) {
  std::mt19937 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::uint64_t> order(200);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i + 1;
    std::shuffle(order.begin(), order.end(), rng);
    CommandSequencer s;
    std::vector<std::string> out;
    for (std::uint64_t n : order) {
      s.Offer(n, PeekCommand(n));
      while (auto c = s.Next()) out.push_back(c->peek().uuid());
    }
    ASSERT_EQ(out.size(), order.size());
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], "p" + std::to_string(i + 1));
    EXPECT_EQ(s.waiting(), 0u);
  }
}

TEST(CommandSequencerDeathTest, ANumberSentTwiceAborts) {
  CommandSequencer s;
  s.Offer(3, PeekCommand(3));
  EXPECT_DEATH(s.Offer(3, PeekCommand(3)), "command number twice");
}

TEST(CommandSequencerDeathTest, ANumberAlreadyAppliedAborts) {
  CommandSequencer s;
  s.Offer(1, PeekCommand(1));
  ASSERT_TRUE(s.Next().has_value());
  EXPECT_DEATH(s.Offer(1, PeekCommand(1)), "below one already applied");
}

}  // namespace
}  // namespace tandem::workers
