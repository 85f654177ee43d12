// The multiplexer's routing, command by command (DESIGN §3.1), its per-session state (peek uuid
// namespaces), the sessions on the endpoint, and the frontiers kept for observers.
#include "supervisor/multiplexer.h"
#include "unit/protocol_samples.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ipc/client.h"
#include "supervisor/frontiers_cache.h"
#include "supervisor/sessions.h"

namespace tandem::supervisor {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;
namespace samples = ipc::samples;

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
  Role to;
  std::string bytes;
  bool peek;  // offered to the peek fast path
};

// A runtime's stream that records what the multiplexer sends on it.
class FakeStream : public RuntimeStream {
 public:
  FakeStream(Role role, std::vector<Sent>* sent) : role_(role), sent_(sent) {}
  void Send(const std::string& encoded, bool peek) override {
    sent_->push_back({role_, encoded, peek});
  }

 private:
  Role role_;
  std::vector<Sent>* sent_;
};

class MultiplexerTest : public ::testing::Test {
 protected:
  Multiplexer Make(bool two_runtime) {
    return two_runtime ? Multiplexer(maintenance, interactive) : Multiplexer(solo);
  }
  std::vector<Sent> sent;
  FakeStream maintenance{Role::kMaintenance, &sent};
  FakeStream interactive{Role::kInteractive, &sent};
  FakeStream solo{Role::kSolo, &sent};
  Multiplexer::Clock::time_point t0 = Multiplexer::Clock::now();
};

TEST_F(MultiplexerTest, EveryCommandButPeeksAndWritesGoesToBothRuntimesMaintenanceFirst) {
  Multiplexer mux = Make(true);
  for (const Command& c : EveryCommand()) {
    sent.clear();
    mux.Forward(c, ipc::Encode(c), t0);
    if (c.has_peek() || c.has_cancel_peek()) {
      ASSERT_EQ(sent.size(), 1u) << ipc::CommandName(c);
      EXPECT_EQ(sent[0].to, Role::kInteractive) << ipc::CommandName(c);
    } else {
      ASSERT_EQ(sent.size(), 2u) << ipc::CommandName(c);
      EXPECT_EQ(sent[0].to, Role::kMaintenance) << ipc::CommandName(c);
      EXPECT_EQ(sent[1].to, Role::kInteractive) << ipc::CommandName(c);
    }
    for (const Sent& s : sent) {
      EXPECT_EQ(s.bytes, ipc::Encode(c)) << "forwarded unchanged";
      EXPECT_EQ(s.peek, c.has_peek() || c.has_cancel_peek())
          << ipc::CommandName(c) << ": only peeks are offered to the fast path";
    }
  }
}

TEST_F(MultiplexerTest, ArrivalOrderIsKeptOnEachRuntimeStream) {
  Multiplexer mux = Make(true);
  const auto all = EveryCommand();
  for (const Command& c : all) mux.Forward(c, ipc::Encode(c), t0);
  std::vector<std::string> to_interactive, to_maintenance;
  for (const Sent& s : sent) {
    (s.to == Role::kInteractive ? to_interactive : to_maintenance).push_back(s.bytes);
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
    EXPECT_EQ(sent[0].to, Role::kSolo);
  }
}

TEST_F(MultiplexerTest, ResponsesAreForwardedAndEachPeekAnsweredOnce) {
  Multiplexer mux = Make(true);
  Command peek;
  peek.mutable_peek()->set_uuid("p1");
  mux.Forward(peek, ipc::Encode(peek), t0);
  Response frontiers;
  frontiers.mutable_frontiers()->set_id("u1");
  EXPECT_TRUE(mux.OnResponse(Role::kMaintenance, &frontiers, t0).forward);
  Response answer;
  answer.mutable_peek_response()->set_uuid("p1");
  const auto first = mux.OnResponse(Role::kInteractive, &answer, t0 + std::chrono::milliseconds(3));
  EXPECT_TRUE(first.forward);
  EXPECT_EQ(first.to, kControllerSession);
  EXPECT_EQ(answer.peek_response().uuid(), "p1");
  ASSERT_TRUE(first.peek_latency);
  EXPECT_EQ(*first.peek_latency, std::chrono::milliseconds(3));
  const auto second = mux.OnResponse(Role::kInteractive, &answer, t0);
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
  EXPECT_EQ(mux.outstanding_peeks(kControllerSession), 0u);
  EXPECT_EQ(mux.outstanding_peeks(), 1u) << "in flight until the runtime answers its cancel";
  mux.ExpireOrphans(t0 + Multiplexer::kOrphanLifetime);
  EXPECT_EQ(mux.outstanding_peeks(), 0u) << "or until kOrphanLifetime has passed";
  mux.Forward(peek, ipc::Encode(peek), t0);
  mux.Forward(hello, ipc::Encode(hello), t0);
  Response late;
  late.mutable_peek_response()->set_uuid("old");
  EXPECT_FALSE(mux.OnResponse(Role::kInteractive, &late, t0).forward)
      << "an answer to the previous connection's peek is not sent to the new controller";
}

Response Answer(const std::string& wire_uuid) {
  Response r;
  r.mutable_peek_response()->set_uuid(wire_uuid);
  r.mutable_peek_response()->mutable_canceled();
  return r;
}

// The uuid of the last command sent to a runtime.
std::string SentUuid(const std::vector<Sent>& sent) {
  const auto c = ipc::DecodeCommand(sent.back().bytes);
  EXPECT_TRUE(c.ok());
  return c.message.has_peek() ? c.message.peek().uuid() : c.message.cancel_peek().uuid();
}

TEST_F(MultiplexerTest, SameUuidFromTheControllerAndAnObserverReachesEachItsOwnSession) {
  Multiplexer mux = Make(true);
  mux.Forward(samples::PeekAt("same", "u2"), ipc::Encode(samples::PeekAt("same", "u2")), t0);
  const std::string controller_wire = SentUuid(sent);
  mux.Forward(samples::PeekAt("same", "u2"), ipc::Encode(samples::PeekAt("same", "u2")), t0, 7);
  const std::string observer_wire = SentUuid(sent);
  EXPECT_EQ(controller_wire, "same") << "the controller's common case is forwarded unchanged";
  EXPECT_EQ(sent[0].bytes, ipc::Encode(samples::PeekAt("same", "u2")));
  EXPECT_EQ(observer_wire, "~o7:same");
  EXPECT_EQ(mux.outstanding_peeks(), 2u);

  Response to_observer = Answer(observer_wire);
  const auto v1 = mux.OnResponse(Role::kInteractive, &to_observer, t0);
  EXPECT_TRUE(v1.forward);
  EXPECT_EQ(v1.to, 7u);
  EXPECT_EQ(to_observer.peek_response().uuid(), "same") << "mapped back to what it sent";
  Response to_controller = Answer(controller_wire);
  const auto v2 = mux.OnResponse(Role::kInteractive, &to_controller, t0);
  EXPECT_TRUE(v2.forward);
  EXPECT_EQ(v2.to, kControllerSession);
  EXPECT_EQ(to_controller.peek_response().uuid(), "same");
  Response again = Answer(observer_wire);
  EXPECT_FALSE(mux.OnResponse(Role::kInteractive, &again, t0).forward) << "exactly one";
}

TEST_F(MultiplexerTest, ObserverCancelPeekIsNamespacedLikeItsPeek) {
  Multiplexer mux = Make(true);
  Command cancel;
  cancel.mutable_cancel_peek()->set_uuid("p");
  mux.Forward(cancel, ipc::Encode(cancel), t0, 3);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to, Role::kInteractive);
  EXPECT_EQ(SentUuid(sent), "~o3:p");
}

TEST_F(MultiplexerTest, AControllerUuidThatLooksLikeANamespaceCannotReachAnObserver) {
  Multiplexer mux = Make(true);
  // The controller sends exactly the wire uuid observer 1's "x" would get, and observer 1 sends
  // "x": both are answered, each to its own session.
  mux.Forward(samples::PeekAt("~o1:x", "u2"), ipc::Encode(samples::PeekAt("~o1:x", "u2")), t0);
  const std::string controller_wire = SentUuid(sent);
  mux.Forward(samples::PeekAt("x", "u2"), ipc::Encode(samples::PeekAt("x", "u2")), t0, 1);
  const std::string observer_wire = SentUuid(sent);
  EXPECT_NE(controller_wire, observer_wire);
  Response a = Answer(controller_wire);
  const auto va = mux.OnResponse(Role::kInteractive, &a, t0);
  EXPECT_EQ(va.to, kControllerSession);
  EXPECT_EQ(a.peek_response().uuid(), "~o1:x");
  Response b = Answer(observer_wire);
  const auto vb = mux.OnResponse(Role::kInteractive, &b, t0);
  EXPECT_EQ(vb.to, 1u);
  EXPECT_EQ(b.peek_response().uuid(), "x");
}

TEST(PeekUuidNamespaces, AreInjectiveAndMapBack) {
  const std::vector<std::string> uuids = {"", "a", "~", "~c:", "~c:a", "~o1:a", "~o12:a", ":a"};
  std::set<std::string> seen;
  for (SessionId session : {SessionId{0}, SessionId{1}, SessionId{12}, SessionId{123}}) {
    for (const auto& uuid : uuids) {
      const std::string wire = WireUuid(session, uuid);
      EXPECT_EQ(UuidAsSent(session, wire), uuid) << session << " " << uuid;
      EXPECT_TRUE(seen.insert(wire).second) << "collision: " << wire;
    }
  }
}

TEST_F(MultiplexerTest, ControllerHelloKeepsObserverPeeksAndEndSessionDropsThem) {
  Multiplexer mux = Make(true);
  mux.Forward(samples::PeekAt("c", "u2"), ipc::Encode(samples::PeekAt("c", "u2")), t0);
  mux.Forward(samples::PeekAt("o", "u2"), ipc::Encode(samples::PeekAt("o", "u2")), t0, 2);
  mux.Forward(samples::PeekAt("o", "u2"), ipc::Encode(samples::PeekAt("o", "u2")), t0, 3);
  Command hello;
  hello.mutable_hello()->set_nonce("new controller");
  mux.Forward(hello, ipc::Encode(hello), t0);
  EXPECT_EQ(mux.outstanding_peeks(), 3u)
      << "a controller's Hello never supersedes observers (and its own old peek is in flight "
         "until answered)";
  Response late = Answer("c");
  EXPECT_FALSE(mux.OnResponse(Role::kInteractive, &late, t0).forward);
  sent.clear();
  mux.EndSession(2);
  // The ended session's waiting peek is cancelled in the runtime (it would wait there for ever).
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to, Role::kInteractive);
  Command cancel;
  ASSERT_TRUE(cancel.ParseFromString(sent[0].bytes));
  EXPECT_EQ(cancel.cancel_peek().uuid(), "~o2:o");
  Response gone = Answer("~o2:o");
  const auto v = mux.OnResponse(Role::kInteractive, &gone, t0);
  EXPECT_FALSE(v.forward) << "the session ended: its answers go nowhere";
  Response kept = Answer("~o3:o");
  EXPECT_TRUE(mux.OnResponse(Role::kInteractive, &kept, t0).forward);
  EXPECT_EQ(mux.outstanding_peeks(), 0u);
}

TEST(Sessions, NewestControllerHelloWinsAndTheOldOneIsSuperseded) {
  Sessions s;
  EXPECT_EQ(s.StandingOf("a"), Sessions::Standing::kNoHello);
  EXPECT_FALSE(s.BecomeController("a", "na"));
  EXPECT_EQ(s.StandingOf("a"), Sessions::Standing::kController);
  auto previous = s.BecomeController("b", "nb");
  ASSERT_TRUE(previous);
  EXPECT_EQ(*previous, "a");
  EXPECT_EQ(s.StandingOf("a"), Sessions::Standing::kSuperseded);
  EXPECT_EQ(s.StandingOf("b"), Sessions::Standing::kController);
  // A repeated Hello of the controller replaces its own session: it supersedes nobody.
  EXPECT_EQ(s.End("b").kind, Sessions::Ended::Kind::kController);
  EXPECT_FALSE(s.BecomeController("b", "nb2"));
  // A superseded controller may come back with a new Hello.
  EXPECT_EQ(s.End("a").kind, Sessions::Ended::Kind::kSuperseded);
  auto back = s.BecomeController("a", "na2");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, "b");
  EXPECT_EQ(s.StandingOf("b"), Sessions::Standing::kSuperseded);
}

TEST(Sessions, ObserversNeitherSupersedeNorAreSupersededByTheController) {
  Sessions s;
  ASSERT_FALSE(s.BecomeController("ctl", "c1"));
  const SessionId o1 = s.BecomeObserver("obs1", "o1");
  const SessionId o2 = s.BecomeObserver("obs2", "o2");
  EXPECT_NE(o1, kControllerSession);
  EXPECT_NE(o1, o2);
  EXPECT_EQ(*s.controller(), "ctl") << "an observer's Hello supersedes nobody";
  const auto superseded = s.BecomeController("ctl2", "c2");
  ASSERT_TRUE(superseded);
  EXPECT_EQ(*superseded, "ctl");
  EXPECT_EQ(s.StandingOf("obs1"), Sessions::Standing::kObserver)
      << "a controller's Hello supersedes no observer";
  EXPECT_EQ(s.StandingOf("obs2"), Sessions::Standing::kObserver);
  EXPECT_EQ(s.ObserverSession("obs2"), o2);
  ASSERT_NE(s.ObserverPeer(o1), nullptr);
  EXPECT_EQ(*s.ObserverPeer(o1), "obs1");
  EXPECT_EQ(s.observers().size(), 2u);
}

TEST(Sessions, EndForgetsAPeerWhateverItWasAndObserverSessionsAreNeverReused) {
  Sessions s;
  s.BecomeController("a", "na");
  const SessionId first = s.BecomeObserver("o", "no");
  const Sessions::Ended ended = s.End("o");
  EXPECT_EQ(ended.kind, Sessions::Ended::Kind::kObserver);
  EXPECT_EQ(ended.session, first);
  EXPECT_EQ(ended.nonce, "no");
  EXPECT_EQ(s.ObserverPeer(first), nullptr);
  EXPECT_EQ(s.StandingOf("o"), Sessions::Standing::kNoHello);
  EXPECT_GT(s.BecomeObserver("o", "again"), first) << "a new session, never an old one's id";
  EXPECT_EQ(s.End("zzz").kind, Sessions::Ended::Kind::kNone);
  const Sessions::Ended controller = s.End("a");
  EXPECT_EQ(controller.kind, Sessions::Ended::Kind::kController);
  EXPECT_EQ(controller.nonce, "na");
  EXPECT_FALSE(s.controller());
  EXPECT_EQ(s.StandingOf("a"), Sessions::Standing::kNoHello);
  EXPECT_EQ(s.End("a").kind, Sessions::Ended::Kind::kNone) << "forgotten once";
}

ipc::pb::Frontiers MakeFrontiers(const std::string& id, std::optional<std::uint64_t> at) {
  ipc::pb::Frontiers f;
  f.set_id(id);
  for (auto* e : {f.mutable_write(), f.mutable_input(), f.mutable_output()}) {
    if (at) e->add_elements(*at);
  }
  return f;
}

TEST(FrontiersCache, KeepsTheLatestPerIdAndClosedOnesButForgetsDroppedOnes) {
  FrontiersCache cache;
  cache.Record(MakeFrontiers("u2", 3), true);
  cache.Record(MakeFrontiers("u2", 5), true);
  cache.Record(MakeFrontiers("u1", std::nullopt), true);  // a source that ended: closed
  cache.Record(MakeFrontiers("u4", 9), true);
  ASSERT_EQ(cache.latest().size(), 3u);
  EXPECT_EQ(cache.latest().at("u2").write().elements(0), 5u);
  EXPECT_TRUE(cache.latest().at("u1").write().elements().empty()) << "closed is shown";
  cache.Record(MakeFrontiers("u4", std::nullopt), false);  // the closing report of its drop
  EXPECT_EQ(cache.latest().count("u4"), 0u);
  cache.Record(MakeFrontiers("u9", std::nullopt), false);  // never seen, already gone
  EXPECT_EQ(cache.latest().count("u9"), 0u);
  // An id that is unknown but still moving is kept (e.g. built before its epoch completed).
  cache.Record(MakeFrontiers("u7", 1), false);
  EXPECT_EQ(cache.latest().count("u7"), 1u);
}

}  // namespace
}  // namespace tandem::supervisor

namespace tandem::supervisor {
namespace {

// The in-flight bound (issue 12) counts per session: forwarded peeks count until answered or
// their session ends, a repeated uuid counts once, and Waiting() names the peeks a cancel can
// still reach.
TEST_F(MultiplexerTest, OutstandingPeeksArePerSessionAndFollowAnswersAndEndedSessions) {
  Multiplexer mux = Make(true);
  const SessionId observer = kControllerSession + 1;
  for (const char* uuid : {"a", "b", "b"}) {
    const Command c = samples::PeekAt(uuid, "u2", 1);
    mux.Forward(c, ipc::Encode(c), t0);
  }
  const Command o = samples::PeekAt("a", "u2", 1);
  mux.Forward(o, ipc::Encode(o), t0, observer);
  EXPECT_EQ(mux.outstanding_peeks(kControllerSession), 2u);
  EXPECT_EQ(mux.outstanding_peeks(observer), 1u);
  EXPECT_EQ(mux.outstanding_peeks(), 3u);
  EXPECT_TRUE(mux.Waiting(kControllerSession, "b"));
  EXPECT_TRUE(mux.Waiting(observer, "a"));
  EXPECT_FALSE(mux.Waiting(observer, "b"));

  Response answer;
  answer.mutable_peek_response()->set_uuid("b");
  answer.mutable_peek_response()->mutable_rows();
  EXPECT_TRUE(mux.OnResponse(Role::kInteractive, &answer, t0).forward);
  EXPECT_EQ(mux.outstanding_peeks(kControllerSession), 1u);
  EXPECT_FALSE(mux.Waiting(kControllerSession, "b"));

  // An ended session's peeks leave its own count at once, but the replica's only when the
  // runtimes answer them (their answers go nowhere): a flood that leaves stays bounded.
  mux.EndSession(observer);
  EXPECT_EQ(mux.outstanding_peeks(observer), 0u);
  EXPECT_EQ(mux.outstanding_peeks(), 2u);
  EXPECT_FALSE(mux.Waiting(observer, "a"));
  Response canceled;
  canceled.mutable_peek_response()->set_uuid(ipc::WireUuid(observer, "a"));
  canceled.mutable_peek_response()->mutable_canceled();
  const auto verdict = mux.OnResponse(Role::kInteractive, &canceled, t0);
  EXPECT_FALSE(verdict.forward);
  EXPECT_STREQ(verdict.drop_reason, "session_ended");
  EXPECT_EQ(mux.outstanding_peeks(), 1u);
}

// ---- Writes (DESIGN §9)

// The WriteTable a runtime received in `s`.
ipc::pb::WriteTable Received(const Sent& s) {
  Command c;
  EXPECT_TRUE(c.ParseFromString(s.bytes));
  EXPECT_TRUE(c.has_write_table());
  return c.write_table();
}

Response WriteAnswer(const std::string& wire_uuid, std::uint64_t time = 1000) {
  Response r;
  r.mutable_write_response()->set_uuid(wire_uuid);
  r.mutable_write_response()->set_time(time);
  return r;
}

TEST_F(MultiplexerTest, WritesGoToMaintenanceOnlyNeverInteractive) {
  Multiplexer mux = Make(true);
  EXPECT_EQ(mux.Route(samples::WriteU40()), std::vector<Role>{Role::kMaintenance});
  mux.Forward(samples::WriteU40("a"), ipc::Encode(samples::WriteU40("a")), t0);
  mux.Forward(samples::WriteU42("b"), ipc::Encode(samples::WriteU42("b")), t0, 3);
  ASSERT_EQ(sent.size(), 2u);
  for (const Sent& s : sent) EXPECT_EQ(s.to, Role::kMaintenance);
  // Everything of the write but its uuid travels as sent.
  ipc::pb::WriteTable got = Received(sent[0]);
  EXPECT_EQ(ipc::ClientUuidOfWrite(got.uuid()), "a");
  got.set_uuid("a");
  EXPECT_EQ(ipc::Encode(got), ipc::Encode(samples::WriteU40("a").write_table()));
  EXPECT_EQ(mux.outstanding_writes(), 2u);
}

TEST_F(MultiplexerTest, SoloModeSendsWritesToTheSoloRuntime) {
  Multiplexer mux = Make(false);
  EXPECT_EQ(mux.Route(samples::WriteU40()), std::vector<Role>{Role::kSolo});
  mux.Forward(samples::WriteU40(), ipc::Encode(samples::WriteU40()), t0, 4);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to, Role::kSolo);
  Response answer = WriteAnswer(Received(sent[0]).uuid());
  const auto v = mux.OnResponse(Role::kSolo, &answer, t0);
  EXPECT_TRUE(v.forward);
  EXPECT_EQ(v.to, 4u);
}

TEST_F(MultiplexerTest, EachWriteGetsAWireUuidOfItsOwnThatMapsBackToTheClientsUuid) {
  Multiplexer mux = Make(true);
  mux.Forward(samples::WriteU40("w"), ipc::Encode(samples::WriteU40("w")), t0);
  mux.Forward(samples::WriteU40("w"), ipc::Encode(samples::WriteU40("w")), t0);
  ASSERT_EQ(sent.size(), 2u);
  const std::string first = Received(sent[0]).uuid(), second = Received(sent[1]).uuid();
  EXPECT_EQ(first, ipc::WriteWireUuid(0, "w"));
  EXPECT_EQ(second, ipc::WriteWireUuid(1, "w"));
  Response answer = WriteAnswer(second, 77);
  const auto v = mux.OnResponse(Role::kMaintenance, &answer, t0 + std::chrono::milliseconds(3));
  EXPECT_TRUE(v.forward);
  EXPECT_EQ(v.to, kControllerSession);
  EXPECT_EQ(answer.write_response().uuid(), "w") << "the uuid as the session sent it";
  EXPECT_EQ(answer.write_response().time(), 77u);
  ASSERT_TRUE(v.write_latency.has_value());
  EXPECT_EQ(*v.write_latency, std::chrono::milliseconds(3));
  EXPECT_FALSE(v.peek_latency.has_value());
  EXPECT_EQ(mux.outstanding_writes(), 1u);
}

TEST_F(MultiplexerTest, AnswersReachTheSessionThatSentTheWriteEvenWithTheSameUuid) {
  Multiplexer mux = Make(true);
  // The controller and two writer sessions send a write with one uuid (a retry from elsewhere).
  mux.Forward(samples::WriteU40("same"), ipc::Encode(samples::WriteU40("same")), t0);
  mux.Forward(samples::WriteU40("same"), ipc::Encode(samples::WriteU40("same")), t0, 5);
  mux.Forward(samples::WriteU40("same"), ipc::Encode(samples::WriteU40("same")), t0, 6);
  ASSERT_EQ(sent.size(), 3u);
  const std::set<std::string> wire = {Received(sent[0]).uuid(), Received(sent[1]).uuid(),
                                      Received(sent[2]).uuid()};
  EXPECT_EQ(wire.size(), 3u) << "no two writes share a wire uuid";
  // Answered out of order, each reaches its own session, once.
  for (const auto& [index, session] :
       std::vector<std::pair<int, SessionId>>{{2, 6}, {0, kControllerSession}, {1, 5}}) {
    Response answer = WriteAnswer(Received(sent[static_cast<std::size_t>(index)]).uuid());
    const auto v = mux.OnResponse(Role::kMaintenance, &answer, t0);
    EXPECT_TRUE(v.forward);
    EXPECT_EQ(v.to, session);
    EXPECT_EQ(answer.write_response().uuid(), "same");
    Response again = WriteAnswer(Received(sent[static_cast<std::size_t>(index)]).uuid());
    const auto twice = mux.OnResponse(Role::kMaintenance, &again, t0);
    EXPECT_FALSE(twice.forward) << "exactly one answer per write";
    EXPECT_STREQ(twice.drop_reason, "unknown_write");
  }
  EXPECT_EQ(mux.outstanding_writes(), 0u);
}

TEST_F(MultiplexerTest, AnEndedSessionsWriteAnswersAreDroppedAndCountedUntilAnswered) {
  Multiplexer mux = Make(true);
  mux.Forward(samples::WriteU40("gone"), ipc::Encode(samples::WriteU40("gone")), t0, 7);
  mux.Forward(samples::WriteU40("kept"), ipc::Encode(samples::WriteU40("kept")), t0, 8);
  ASSERT_EQ(sent.size(), 2u);
  sent.clear();
  mux.EndSession(7, t0);
  EXPECT_TRUE(sent.empty()) << "a write is not cancelled: it may be durable already";
  EXPECT_EQ(mux.outstanding_writes(), 2u) << "it still holds its place until answered";
  // A later session never gets the ended one's answer.
  Response gone = WriteAnswer(ipc::WriteWireUuid(0, "gone"));
  const auto v = mux.OnResponse(Role::kMaintenance, &gone, t0);
  EXPECT_FALSE(v.forward);
  EXPECT_STREQ(v.drop_reason, "session_ended");
  Response kept = WriteAnswer(ipc::WriteWireUuid(1, "kept"));
  EXPECT_TRUE(mux.OnResponse(Role::kMaintenance, &kept, t0).forward);
  EXPECT_EQ(mux.outstanding_writes(), 0u);
}

TEST_F(MultiplexerTest, AnEndedSessionsUnansweredWritesExpireAfterTheOrphanLifetime) {
  Multiplexer mux = Make(true);
  mux.Forward(samples::WriteU40("x"), ipc::Encode(samples::WriteU40("x")), t0, 9);
  mux.EndSession(9, t0);
  mux.ExpireOrphans(t0 + Multiplexer::kOrphanLifetime - std::chrono::seconds(1));
  EXPECT_EQ(mux.outstanding_writes(), 1u);
  mux.ExpireOrphans(t0 + Multiplexer::kOrphanLifetime);
  EXPECT_EQ(mux.outstanding_writes(), 0u);
}

TEST_F(MultiplexerTest, AControllersHelloDropsTheAnswersToTheOldControllersWrites) {
  Multiplexer mux = Make(true);
  mux.Forward(samples::WriteU40("c"), ipc::Encode(samples::WriteU40("c")), t0);
  mux.Forward(samples::WriteU40("w"), ipc::Encode(samples::WriteU40("w")), t0, 2);
  mux.Forward(samples::Hello("new"), ipc::Encode(samples::Hello("new")), t0);
  Response old = WriteAnswer(ipc::WriteWireUuid(0, "c"));
  const auto v = mux.OnResponse(Role::kMaintenance, &old, t0);
  EXPECT_FALSE(v.forward) << "the new controller never sent it";
  EXPECT_STREQ(v.drop_reason, "session_ended");
  Response writer = WriteAnswer(ipc::WriteWireUuid(1, "w"));
  const auto w = mux.OnResponse(Role::kMaintenance, &writer, t0);
  EXPECT_TRUE(w.forward) << "a controller's Hello never ends a writer session";
  EXPECT_EQ(w.to, 2u);
}

TEST(Sessions, AWriterSessionIsAnObserverWithAWriterFlag) {
  Sessions s;
  const SessionId reader = s.BecomeObserver("reader", "r");
  const SessionId writer = s.BecomeObserver("writer", "w", true);
  EXPECT_NE(reader, writer);
  EXPECT_EQ(s.StandingOf("writer"), Sessions::Standing::kObserver);
  EXPECT_TRUE(s.IsWriter("writer"));
  EXPECT_FALSE(s.IsWriter("reader"));
  EXPECT_EQ(s.ObserverSession("writer"), writer);
  const auto ended = s.End("writer");
  EXPECT_EQ(ended.kind, Sessions::Ended::Kind::kObserver);
  EXPECT_EQ(ended.session, writer);
}

}  // namespace
}  // namespace tandem::supervisor

namespace tandem::supervisor {
namespace {

// ---- Subscribes (DESIGN §10)

using ipc::pb::SubscribeEnd;

// The command a runtime received in `s`.
Command Decoded(const Sent& s) {
  Command c;
  EXPECT_TRUE(c.ParseFromString(s.bytes));
  return c;
}

Response Batch(const std::string& wire, std::uint64_t lower, std::uint64_t upper, int updates = 0) {
  Response r;
  auto* b = r.mutable_subscribe_batch();
  b->set_uuid(wire);
  b->set_lower(lower);
  b->set_upper(upper);
  for (int i = 0; i < updates; ++i) {
    auto* u = b->add_updates();
    *u->mutable_row() = samples::MakeRow({samples::IntDatum(i)});
    u->set_time(lower);
    u->set_diff(1);
  }
  return r;
}

Response End(const std::string& wire, SubscribeEnd::Reason reason) {
  Response r;
  r.mutable_subscribe_end()->set_uuid(wire);
  r.mutable_subscribe_end()->set_reason(reason);
  return r;
}

// What FlushEnds delivered, by session.
std::vector<std::pair<SessionId, Response>> Flush(Multiplexer& mux, bool take = true) {
  std::vector<std::pair<SessionId, Response>> out;
  mux.FlushEnds([&](SessionId s, const Response& r) {
    if (take) out.emplace_back(s, r);
    return take;
  });
  return out;
}

TEST_F(MultiplexerTest, SubscribesGoToInteractiveOnlyAndInSoloModeToTheSoloRuntime) {
  const Command sub = ipc::MakeSubscribe("s", "u2", 5);
  const Command cancel = ipc::MakeCancelSubscribe("s");
  Multiplexer two = Make(true);
  EXPECT_EQ(two.Route(sub), std::vector<Role>{Role::kInteractive});
  EXPECT_EQ(two.Route(cancel), std::vector<Role>{Role::kInteractive});
  Multiplexer solo = Make(false);
  EXPECT_EQ(solo.Route(sub), std::vector<Role>{Role::kSolo});
  EXPECT_EQ(solo.Route(cancel), std::vector<Role>{Role::kSolo});
  two.Forward(sub, ipc::Encode(sub), t0);
  two.Forward(cancel, ipc::Encode(cancel), t0);
  ASSERT_EQ(sent.size(), 2u);
  for (const Sent& s : sent) EXPECT_EQ(s.to, Role::kInteractive);
  solo.Forward(sub, ipc::Encode(sub), t0, 4);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[2].to, Role::kSolo);
}

TEST_F(MultiplexerTest, EverySubscribeGetsAWireUuidOfItsOwnAndItsAnswersReachItsSessionOnly) {
  Multiplexer mux = Make(true);
  const Command sub = ipc::MakeSubscribe("same", "u2", 5, true, 9);
  mux.Forward(sub, ipc::Encode(sub), t0);
  mux.Forward(sub, ipc::Encode(sub), t0, 7);
  ASSERT_EQ(sent.size(), 2u);
  const Command c0 = Decoded(sent[0]), c1 = Decoded(sent[1]);
  EXPECT_EQ(c0.subscribe().uuid(), ipc::SubscribeWireUuid(kControllerSession, 0, "same"));
  EXPECT_EQ(c1.subscribe().uuid(), ipc::SubscribeWireUuid(7, 1, "same"));
  EXPECT_TRUE(ipc::IsObserverRead(c1)) << "an observer's subscribe stays an observer read";
  EXPECT_FALSE(ipc::IsObserverRead(c0));
  // Everything but the uuid travels as sent.
  Command as_sent = c1;
  as_sent.mutable_subscribe()->set_uuid("same");
  EXPECT_EQ(ipc::Encode(as_sent), ipc::Encode(sub));
  EXPECT_EQ(mux.live_subscribes(), 2u);
  EXPECT_EQ(mux.live_subscribes(7), 1u);
  EXPECT_TRUE(mux.Subscribed(7, "same"));
  EXPECT_FALSE(mux.Subscribed(8, "same"));

  Response to_observer = Batch(c1.subscribe().uuid(), 5, 6, 2);
  const auto v = mux.OnResponse(Role::kInteractive, &to_observer, t0);
  EXPECT_TRUE(v.forward);
  EXPECT_EQ(v.to, 7u);
  EXPECT_EQ(v.subscribe, c1.subscribe().uuid());
  EXPECT_EQ(to_observer.subscribe_batch().uuid(), "same") << "mapped back to the client's uuid";
  Response to_controller = End(c0.subscribe().uuid(), SubscribeEnd::UP_TO);
  const auto e = mux.OnResponse(Role::kInteractive, &to_controller, t0);
  EXPECT_TRUE(e.forward);
  EXPECT_EQ(e.to, kControllerSession);
  EXPECT_EQ(to_controller.subscribe_end().uuid(), "same");
  EXPECT_FALSE(mux.Subscribed(kControllerSession, "same")) << "its End ends it";
  EXPECT_EQ(mux.subscribe_ends().at("up_to"), 1u);
}

TEST_F(MultiplexerTest, ExactlyOneEndPerSubscribeAndNothingAfterIt) {
  Multiplexer mux = Make(true);
  const Command sub = ipc::MakeSubscribe("s", "u2", 5);
  mux.Forward(sub, ipc::Encode(sub), t0, 3);
  const std::string first = Decoded(sent.back()).subscribe().uuid();
  Response end = End(first, SubscribeEnd::CANCELED);
  EXPECT_TRUE(mux.OnResponse(Role::kInteractive, &end, t0).forward);
  for (Response late : {Batch(first, 6, 7), End(first, SubscribeEnd::CANCELED)}) {
    const auto v = mux.OnResponse(Role::kInteractive, &late, t0);
    EXPECT_FALSE(v.forward) << "nothing for a subscribe after its End";
    EXPECT_STREQ(v.drop_reason, "unknown_subscribe");
  }
  // The same uuid again is a new subscribe: a new wire uuid, which the old one's answers miss.
  mux.Forward(sub, ipc::Encode(sub), t0, 3);
  const std::string second = Decoded(sent.back()).subscribe().uuid();
  EXPECT_NE(first, second);
  Response stale = Batch(first, 7, 8);
  EXPECT_FALSE(mux.OnResponse(Role::kInteractive, &stale, t0).forward);
  Response fresh = Batch(second, 5, 6);
  EXPECT_TRUE(mux.OnResponse(Role::kInteractive, &fresh, t0).forward);
}

TEST_F(MultiplexerTest, CancelSubscribeIsSentAsTheLiveWireUuidAndAnUnknownOneGoesNowhere) {
  Multiplexer mux = Make(true);
  const Command cancel = ipc::MakeCancelSubscribe("s");
  mux.Forward(cancel, ipc::Encode(cancel), t0, 2);
  EXPECT_TRUE(sent.empty()) << "nothing live under that uuid: nothing to cancel, no answer";
  const Command sub = ipc::MakeSubscribe("s", "u2", 5);
  mux.Forward(sub, ipc::Encode(sub), t0, 2);
  const std::string wire = Decoded(sent.back()).subscribe().uuid();
  mux.Forward(cancel, ipc::Encode(cancel), t0, 3);
  EXPECT_EQ(sent.size(), 1u) << "another session's cancel cannot reach it";
  mux.Forward(cancel, ipc::Encode(cancel), t0, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].to, Role::kInteractive);
  EXPECT_EQ(Decoded(sent[1]).cancel_subscribe().uuid(), wire);
  mux.Forward(cancel, ipc::Encode(cancel), t0, 2);
  EXPECT_EQ(sent.size(), 2u) << "cancelled once; its End is on the way";
  Response end = End(wire, SubscribeEnd::CANCELED);
  const auto v = mux.OnResponse(Role::kInteractive, &end, t0);
  EXPECT_TRUE(v.forward);
  EXPECT_EQ(v.to, 2u);
  EXPECT_EQ(end.subscribe_end().uuid(), "s");
}

TEST_F(MultiplexerTest, ATooSlowSubscribeIsCancelledItsLaterAnswersDroppedAndItsEndWaits) {
  Multiplexer mux = Make(true);
  const Command sub = ipc::MakeSubscribe("slow", "u2", 5, false);
  mux.Forward(sub, ipc::Encode(sub), t0, 4);
  const std::string wire = Decoded(sent.back()).subscribe().uuid();
  Response batch = Batch(wire, 6, 7, 3);
  ASSERT_TRUE(mux.OnResponse(Role::kInteractive, &batch, t0).forward);
  mux.TooSlow(wire, t0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].to, Role::kInteractive);
  EXPECT_EQ(Decoded(sent[1]).cancel_subscribe().uuid(), wire) << "cancelled in the runtime";
  EXPECT_EQ(mux.live_subscribes(), 0u);
  EXPECT_FALSE(mux.Subscribed(4, "slow")) << "a cancel from the client now goes nowhere";
  for (Response late : {Batch(wire, 7, 8), End(wire, SubscribeEnd::CANCELED)}) {
    const auto v = mux.OnResponse(Role::kInteractive, &late, t0);
    EXPECT_FALSE(v.forward);
    EXPECT_STREQ(v.drop_reason, "subscribe_ended");
  }
  EXPECT_TRUE(Flush(mux, false).empty());
  EXPECT_EQ(mux.pending_ends(), 1u) << "the pipe is still full: retried later";
  const auto delivered = Flush(mux);
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].first, 4u);
  EXPECT_EQ(delivered[0].second.subscribe_end().uuid(), "slow");
  EXPECT_EQ(delivered[0].second.subscribe_end().reason(), SubscribeEnd::TOO_SLOW);
  EXPECT_EQ(mux.pending_ends(), 0u);
  EXPECT_EQ(mux.subscribe_ends().at("too_slow"), 1u);
  EXPECT_EQ(mux.subscribe_ends().count("canceled"), 0u) << "one end per subscribe";
}

TEST_F(MultiplexerTest, AnEndedSubscribesTombstoneExpiresAfterTheOrphanLifetime) {
  Multiplexer mux = Make(true);
  const Command sub = ipc::MakeSubscribe("s", "u2", 5);
  mux.Forward(sub, ipc::Encode(sub), t0, 4);
  const std::string wire = Decoded(sent.back()).subscribe().uuid();
  mux.TooSlow(wire, t0);
  mux.ExpireOrphans(t0 + Multiplexer::kOrphanLifetime);
  Response late = Batch(wire, 7, 8);
  const auto v = mux.OnResponse(Role::kInteractive, &late, t0);
  EXPECT_FALSE(v.forward) << "still dropped, only no longer told apart";
  EXPECT_STREQ(v.drop_reason, "unknown_subscribe");
}

TEST_F(MultiplexerTest, AnEndedObserversSubscribesAreCancelledAndNobodyIsTold) {
  Multiplexer mux = Make(true);
  const Command a = ipc::MakeSubscribe("a", "u2", 5), b = ipc::MakeSubscribe("b", "u2", 5);
  mux.Forward(a, ipc::Encode(a), t0, 5);
  const std::string wire_a = Decoded(sent.back()).subscribe().uuid();
  mux.Forward(b, ipc::Encode(b), t0, 5);
  const std::string wire_b = Decoded(sent.back()).subscribe().uuid();
  mux.Forward(a, ipc::Encode(a), t0, 6);
  mux.TooSlow(wire_b, t0);  // its End waits for room in the pipe
  sent.clear();
  mux.EndSession(5, t0);
  ASSERT_EQ(sent.size(), 1u) << "b was cancelled when it ended too slow";
  EXPECT_EQ(sent[0].to, Role::kInteractive);
  EXPECT_EQ(Decoded(sent[0]).cancel_subscribe().uuid(), wire_a);
  EXPECT_EQ(mux.pending_ends(), 0u) << "an ended observer is told nothing";
  Response late = Batch(wire_a, 6, 7);
  const auto v = mux.OnResponse(Role::kInteractive, &late, t0);
  EXPECT_FALSE(v.forward);
  EXPECT_STREQ(v.drop_reason, "session_ended");
  EXPECT_EQ(mux.live_subscribes(), 1u) << "another observer's subscribe is untouched";
  EXPECT_TRUE(mux.Subscribed(6, "a"));
  EXPECT_EQ(mux.subscribe_ends().at("session_ended"), 1u);
}

TEST_F(MultiplexerTest, TheControllersHelloEndsItsSubscribesWithSessionEndedAfterTheHello) {
  Multiplexer mux = Make(true);
  const Command sub = ipc::MakeSubscribe("c", "u2", 5);
  mux.Forward(sub, ipc::Encode(sub), t0);
  const std::string wire = Decoded(sent.back()).subscribe().uuid();
  mux.Forward(sub, ipc::Encode(sub), t0, 9);  // an observer's
  sent.clear();
  mux.Forward(samples::Hello("again"), ipc::Encode(samples::Hello("again")), t0);
  // The cancel comes before the Hello on the interactive stream.
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].to, Role::kInteractive);
  EXPECT_EQ(Decoded(sent[0]).cancel_subscribe().uuid(), wire);
  EXPECT_TRUE(Decoded(sent[1]).has_hello());
  EXPECT_TRUE(Decoded(sent[2]).has_hello());
  EXPECT_TRUE(mux.Subscribed(9, "c")) << "a controller's Hello ends no observer's subscribe";
  EXPECT_FALSE(mux.Subscribed(kControllerSession, "c"));
  const auto delivered = Flush(mux);
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].first, kControllerSession);
  const auto& end = delivered[0].second.subscribe_end();
  EXPECT_EQ(end.uuid(), "c");
  EXPECT_EQ(end.reason(), SubscribeEnd::SESSION_ENDED);
  EXPECT_NE(end.detail().find("Hello"), std::string::npos) << end.detail();
  Response late = End(wire, SubscribeEnd::CANCELED);
  EXPECT_FALSE(mux.OnResponse(Role::kInteractive, &late, t0).forward)
      << "the runtime's CANCELED is not a second End";
}

TEST_F(MultiplexerTest, AControllerThatLeftIsToldItsSubscribesEndedOnlyOnceItIsBack) {
  Multiplexer mux = Make(true);
  const Command sub = ipc::MakeSubscribe("c", "u2", 5);
  mux.Forward(sub, ipc::Encode(sub), t0);
  mux.EndSession(kControllerSession, t0);  // disconnected
  EXPECT_EQ(mux.pending_ends(), 1u);
  EXPECT_TRUE(Flush(mux, false).empty()) << "no controller to tell yet";
  mux.Forward(samples::Hello("back"), ipc::Encode(samples::Hello("back")), t0);
  const auto delivered = Flush(mux);
  ASSERT_EQ(delivered.size(), 1u) << "one End, though the Hello ended the session again";
  EXPECT_EQ(delivered[0].second.subscribe_end().reason(), SubscribeEnd::SESSION_ENDED);
}

TEST_F(MultiplexerTest, DeferredEndsOfOneSessionWaitInOrderBehindTheFirstRefused) {
  Multiplexer mux = Make(true);
  for (const char* uuid : {"x", "y"}) {
    Response e = End(uuid, SubscribeEnd::UP_TO);
    mux.DeferEnd(3, e);
  }
  Response other = End("z", SubscribeEnd::UP_TO);
  mux.DeferEnd(4, other);
  std::vector<std::string> got;
  mux.FlushEnds([&](SessionId s, const Response& r) {
    if (s == 3) return false;
    got.push_back(r.subscribe_end().uuid());
    return true;
  });
  EXPECT_EQ(got, std::vector<std::string>{"z"});
  EXPECT_EQ(mux.pending_ends(), 2u);
  mux.FlushEnds([&](SessionId, const Response& r) {
    got.push_back(r.subscribe_end().uuid());
    return true;
  });
  EXPECT_EQ(got, (std::vector<std::string>{"z", "x", "y"}));
}

TEST_F(MultiplexerTest, ASubscribesProgressIsWhatWasDeliveredToItsSession) {
  Multiplexer mux = Make(true);
  const Command with = ipc::MakeSubscribe("w", "u2", 5, true);
  const Command without = ipc::MakeSubscribe("n", "u3", 5, false);
  mux.Forward(with, ipc::Encode(with), t0);
  mux.Forward(without, ipc::Encode(without), t0);
  std::map<std::string, std::uint64_t> delivered;
  for (const auto& s : mux.LiveSubscribes()) delivered[s.id] = s.delivered;
  EXPECT_EQ(delivered["u2"], 5u) << "a snapshot's first batch starts at as_of";
  EXPECT_EQ(delivered["u3"], 6u) << "without one, at as_of + 1";
  mux.Delivered(ipc::SubscribeWireUuid(kControllerSession, 0, "w"), 12, 4);
  for (const auto& s : mux.LiveSubscribes()) delivered[s.id] = s.delivered;
  EXPECT_EQ(delivered["u2"], 12u);
}

}  // namespace
}  // namespace tandem::supervisor
