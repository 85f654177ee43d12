// Messages over the size limit (issue 12, item 8): a command larger than ipc::kMaxMessageBytes
// (16 MiB) is answered with a CommandError naming the limit, and the session stays: the next
// command of the same controller is served. (Only beyond the transport's own limit, twice that,
// does ZeroMQ drop the connection; that is counted as a disconnect.)
#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

TEST(OversizeMessage, IsAnsweredWithACommandErrorNamingTheLimitAndTheSessionStays) {
  Target target;
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const pid_t supervisor = target.sup().pid();
  for (int round = 0; round < 3; ++round) {
    target.ctl().SendRaw(std::string(ipc::kMaxMessageBytes + 1024, 'x'));
    auto r = target.ctl().ReceiveUntil(
        [](const ipc::pb::Response& r) { return r.has_command_error(); }, 10s);
    ASSERT_TRUE(r) << "no answer to an over-size message\n" << target.sup().Log();
    EXPECT_NE(r->command_error().why().find(std::to_string(ipc::kMaxMessageBytes)),
              std::string::npos)
        << r->command_error().why();
    // The same session goes on: its next command is not refused with "send Hello first".
    const std::string uuid = "after-oversize-" + std::to_string(round);
    target.ctl().Send(ipc::samples::PeekAt(uuid, "u2", 1));
    auto peek = target.ctl().ReceiveUntil(
        [&](const ipc::pb::Response& r) {
          return r.has_command_error() ||
                 (r.has_peek_response() && r.peek_response().uuid() == uuid);
        },
        10s);
    ASSERT_TRUE(peek) << target.sup().Log();
    ASSERT_TRUE(peek->has_peek_response()) << peek->command_error().why();
    EXPECT_TRUE(peek->peek_response().has_rows()) << peek->peek_response().error();
  }
  const std::string metrics = HttpGet(target.sup().http_port(), "/metrics").body;
  EXPECT_EQ(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"oversized\"}"), 3);
  EXPECT_LE(MetricValue(metrics, "tandem_controller_events_total{event=\"disconnected\"}"), 0);
  // Three 16 MiB messages read and freed: the supervisor does not keep them.
  if (kRssIsMeaningful) {
    EXPECT_LT(RssBytes(supervisor), 96u << 20) << RssBytes(supervisor);
  }
  target.ExpectStillServing();
}

TEST(OversizeMessage, BeyondTheTransportLimitTheConnectionIsDroppedAndCounted) {
  Target target;
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  {
    TestController big(target.sup().controller_endpoint());
    big.SendRaw(std::string(2 * ipc::kMaxMessageBytes + 1024, 'x'));
    EXPECT_TRUE(Eventually(
        [&] {
          return MetricValue(HttpGet(target.sup().http_port(), "/metrics").body,
                             "tandem_controller_events_total{event=\"disconnected\"}") >= 1;
        },
        10s));
  }
  target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
