// The multiplexer's routing, command by command (DESIGN §3.1), and its per-connection state.
#include "supervisor/multiplexer.h"

#include <gtest/gtest.h>

#include <vector>

#include "supervisor/controllers.h"

namespace tandem::supervisor {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;

// One command of every kind.
std::vector<Command> EveryCommand() {
  std::vector<Command> all(10);
  all[0].mutable_hello()->set_nonce("n");
  all[1].mutable_create_instance();
  all[2].mutable_initialization_complete();
  all[3].mutable_update_configuration();
  all[4].mutable_create_dataflow();
  all[5].mutable_schedule()->set_id("u1");
  all[6].mutable_allow_writes()->set_id("u1");
  all[7].mutable_allow_compaction()->set_id("u1");
  all[8].mutable_peek()->set_uuid("p");
  all[9].mutable_cancel_peek()->set_uuid("p");
  return all;
}

struct Sent {
  RuntimeId to;
  std::string bytes;
};

class MultiplexerTest : public ::testing::Test {
 protected:
  Multiplexer Make(bool two_runtime) {
    return Multiplexer(two_runtime, [this](RuntimeId to, const std::string& b) {
      sent.push_back({to, b});
    });
  }
  std::vector<Sent> sent;
  Multiplexer::Clock::time_point t0 = Multiplexer::Clock::now();
};

TEST_F(MultiplexerTest, EveryCommandButPeeksGoesToBothRuntimesMaintenanceFirst) {
  Multiplexer mux = Make(true);
  for (const Command& c : EveryCommand()) {
    sent.clear();
    mux.Forward(c, ipc::Encode(c), t0);
    if (c.has_peek() || c.has_cancel_peek()) {
      ASSERT_EQ(sent.size(), 1u) << ipc::CommandName(c);
      EXPECT_EQ(sent[0].to, RuntimeId::kInteractive) << ipc::CommandName(c);
    } else {
      ASSERT_EQ(sent.size(), 2u) << ipc::CommandName(c);
      EXPECT_EQ(sent[0].to, RuntimeId::kMaintenance) << ipc::CommandName(c);
      EXPECT_EQ(sent[1].to, RuntimeId::kInteractive) << ipc::CommandName(c);
    }
    for (const Sent& s : sent) EXPECT_EQ(s.bytes, ipc::Encode(c)) << "forwarded unchanged";
  }
}

TEST_F(MultiplexerTest, ArrivalOrderIsKeptOnEachRuntimeStream) {
  Multiplexer mux = Make(true);
  const auto all = EveryCommand();
  for (const Command& c : all) mux.Forward(c, ipc::Encode(c), t0);
  std::vector<std::string> to_interactive, to_maintenance;
  for (const Sent& s : sent) {
    (s.to == RuntimeId::kInteractive ? to_interactive : to_maintenance).push_back(s.bytes);
  }
  ASSERT_EQ(to_interactive.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(to_interactive[i], ipc::Encode(all[i]));
  EXPECT_EQ(to_maintenance.size(), all.size() - 2);
}

TEST_F(MultiplexerTest, SoloModePassesEverythingThrough) {
  Multiplexer mux = Make(false);
  for (const Command& c : EveryCommand()) {
    sent.clear();
    mux.Forward(c, ipc::Encode(c), t0);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].to, RuntimeId::kSolo);
  }
}

TEST_F(MultiplexerTest, ResponsesAreForwardedAndEachPeekAnsweredOnce) {
  Multiplexer mux = Make(true);
  Command peek;
  peek.mutable_peek()->set_uuid("p1");
  mux.Forward(peek, ipc::Encode(peek), t0);
  Response frontiers;
  frontiers.mutable_frontiers()->set_id("u1");
  EXPECT_TRUE(mux.OnResponse(RuntimeId::kMaintenance, frontiers, t0).forward);
  Response answer;
  answer.mutable_peek_response()->set_uuid("p1");
  const auto first =
      mux.OnResponse(RuntimeId::kInteractive, answer, t0 + std::chrono::milliseconds(3));
  EXPECT_TRUE(first.forward);
  ASSERT_TRUE(first.peek_latency);
  EXPECT_EQ(*first.peek_latency, std::chrono::milliseconds(3));
  const auto second = mux.OnResponse(RuntimeId::kInteractive, answer, t0);
  EXPECT_FALSE(second.forward) << "a second response for one uuid is dropped";
  EXPECT_STREQ(second.drop_reason, "unknown_peek");
}

TEST_F(MultiplexerTest, HelloResetsPerConnectionState) {
  Multiplexer mux = Make(true);
  Command peek;
  peek.mutable_peek()->set_uuid("old");
  mux.Forward(peek, ipc::Encode(peek), t0);
  EXPECT_EQ(mux.outstanding_peeks(), 1u);
  Command hello;
  hello.mutable_hello()->set_nonce("reconnect");
  mux.Forward(hello, ipc::Encode(hello), t0);
  EXPECT_EQ(mux.outstanding_peeks(), 0u);
  Response late;
  late.mutable_peek_response()->set_uuid("old");
  EXPECT_FALSE(mux.OnResponse(RuntimeId::kInteractive, late, t0).forward)
      << "an answer to the previous connection's peek is not sent to the new controller";
}

TEST(ControllerSessions, NewestHelloWinsAndTheOldOneIsSuperseded) {
  ControllerSessions s;
  EXPECT_EQ(s.StandingOf("a"), ControllerSessions::Standing::kNoHello);
  EXPECT_FALSE(s.Activate("a"));
  EXPECT_EQ(s.StandingOf("a"), ControllerSessions::Standing::kActive);
  auto previous = s.Activate("b");
  ASSERT_TRUE(previous);
  EXPECT_EQ(*previous, "a");
  EXPECT_EQ(s.StandingOf("a"), ControllerSessions::Standing::kSuperseded);
  EXPECT_EQ(s.StandingOf("b"), ControllerSessions::Standing::kActive);
  EXPECT_FALSE(s.Activate("b")) << "a repeated Hello supersedes nobody";
  auto back = s.Activate("a");  // a superseded controller may come back with a new Hello
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, "b");
  EXPECT_EQ(s.StandingOf("b"), ControllerSessions::Standing::kSuperseded);
}

TEST(ControllerSessions, DisconnectOfTheActiveControllerLeavesNone) {
  ControllerSessions s;
  s.Activate("a");
  EXPECT_FALSE(s.Disconnected("zzz"));
  EXPECT_TRUE(s.Disconnected("a"));
  EXPECT_FALSE(s.active());
  EXPECT_EQ(s.StandingOf("a"), ControllerSessions::Standing::kNoHello);
}

}  // namespace
}  // namespace tandem::supervisor
