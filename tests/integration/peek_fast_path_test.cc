// The peek fast path (DESIGN §14) through the real supervisor and runtimes: peeks and their answers
// take the segment's rings, yet a peek never overtakes a command sent before it on the channel;
// a record that does not fit (a full ring, an answer too large) takes the channel and nothing is
// lost; without rings everything takes the channel.
#include <signal.h>

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/time.h"
#include "log_source.h"
#include "replica.h"
#include "supervisor_harness.h"
#include "unit/protocol_samples.h"

namespace tandem::testing {
namespace {

using ipc::pb::Response;
namespace samples = ipc::samples;

double RingRecords(Replica& r, const std::string& ring, const std::string& result) {
  return MetricValue(
      HttpGet(r.sup.http_port(), "/metrics").body,
      "tandem_peek_ring_records_total{ring=\"" + ring + "\",result=\"" + result + "\"}");
}

// Receives the answers of `uuids` (each once), whatever order they come in: uuid → response.
std::map<std::string, Response> AwaitPeeks(TestController& ctl, std::set<std::string> uuids) {
  std::map<std::string, Response> out;
  while (!uuids.empty()) {
    auto r = ctl.ReceiveUntil(
        [&](const Response& x) {
          return x.has_peek_response() && uuids.count(x.peek_response().uuid()) > 0;
        },
        std::chrono::seconds(20));
    if (!r) break;
    uuids.erase(r->peek_response().uuid());
    out.emplace(r->peek_response().uuid(), *r);
  }
  return out;
}

std::size_t RowCount(const Response& r) {
  std::size_t n = 0;
  for (const auto& rc : r.peek_response().rows().rows()) n += rc.count();
  return n;
}

// Each CreateDataflow is followed at once by a peek of its index: the peek takes the ring, which
// is faster than the channel the create takes, so without the sequence numbers the runtime would
// see the peek of an index it does not know yet. Every peek must wait for its index and answer it.
void APeekRightAfterItsCreateWaitsForIt(bool two_runtime) {
  Replica r(two_runtime, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 0 1 2 20\nU 1 1 3 30\nP 2\n");
  constexpr int kIndexes = 20;
  std::set<std::string> uuids;
  for (int i = 0; i < kIndexes; ++i) {
    const std::string src = "u" + std::to_string(2 * i + 1), idx = "u" + std::to_string(2 * i + 2);
    r.ctl->Send(LogIndexDataflow(src, idx, log.path()));
    r.ctl->Send(samples::PeekAt("p" + std::to_string(i), idx, 1));
    uuids.insert("p" + std::to_string(i));
  }
  const auto answers = AwaitPeeks(*r.ctl, uuids);
  ASSERT_EQ(answers.size(), uuids.size()) << r.sup.Log();
  for (const auto& [uuid, a] : answers) {
    ASSERT_TRUE(a.peek_response().has_rows()) << uuid << ": " << a.peek_response().error();
    EXPECT_EQ(RowCount(a), 3u) << uuid;
  }
  EXPECT_GE(RingRecords(r, "requests", "pushed"), kIndexes) << "the peeks took the request ring";
  EXPECT_GE(RingRecords(r, "answers", "pushed"), kIndexes) << "their answers took the answer ring";
}

TEST(PeekFastPath, APeekRightAfterTheCreateOfItsIndexWaitsForIt) {
  APeekRightAfterItsCreateWaitsForIt(true);
}

TEST(PeekFastPath, APeekRightAfterTheCreateOfItsIndexWaitsForItSolo) {
  APeekRightAfterItsCreateWaitsForIt(false);
}

// The smallest rings (4 KiB: records up to 1 KiB): many peeks sent at once fill the request ring,
// and an answer of many rows is larger than a record. Both take the channel; every peek is
// answered, once, right.
TEST(PeekFastPath, WhatDoesNotFitTheRingsTakesTheChannelAndEveryPeekIsAnswered) {
  Replica r(true, 2, {"--peek-ring-bytes", "4096"});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  std::string lines;
  for (int k = 0; k < 200; ++k)
    lines += "U 0 1 " + std::to_string(k) + " " + std::to_string(k) + "\n";
  log.Append(lines + "P 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitUpper(r, "u2", 0)) << r.sup.Log();

  constexpr int kPeeks = 400;
  std::set<std::string> uuids;
  // The interactive runtime stopped while they are sent: nothing drains the ring, so it fills
  // whatever the machine's timing (continued below, long before the stall watch would notice).
  const std::vector<pid_t>& pids = r.sup.runtime_pids();  // maintenance first
  ASSERT_EQ(pids.size(), 2u);
  kill(pids[1], SIGSTOP);
  for (int i = 0; i < kPeeks; ++i) {
    const std::string uuid = "point-" + std::to_string(i);
    r.ctl->Send(samples::PeekAt(uuid, "u2", 0, i % 200));  // one key: a small answer
    uuids.insert(uuid);
  }
  r.ctl->Send(samples::PeekAt("all", "u2", 0));  // 200 rows: over 1 KiB
  uuids.insert("all");
  // Every peek was sent (ring or channel) once the supervisor counts them in flight.
  const bool sent = Eventually(
      [&] {
        return MetricValue(HttpGet(r.sup.http_port(), "/metrics").body, "tandem_peeks_in_flight") ==
               kPeeks + 1;
      },
      10s);
  kill(pids[1], SIGCONT);
  ASSERT_TRUE(sent) << r.sup.Log();
  const auto answers = AwaitPeeks(*r.ctl, uuids);
  ASSERT_EQ(answers.size(), uuids.size()) << r.sup.Log();
  for (const auto& [uuid, a] : answers) {
    ASSERT_TRUE(a.peek_response().has_rows()) << uuid << ": " << a.peek_response().error();
    EXPECT_EQ(RowCount(a), uuid == "all" ? 200u : 1u) << uuid;
  }
  EXPECT_GT(RingRecords(r, "requests", "full"), 0) << "400 peeks fill a 4 KiB ring";
  EXPECT_GT(RingRecords(r, "requests", "pushed"), 0);
  EXPECT_EQ(RingRecords(r, "requests", "pushed") + RingRecords(r, "requests", "full"), kPeeks + 1)
      << "every peek was offered to the ring once";
  EXPECT_GE(RingRecords(r, "answers", "too_large"), 1) << "200 rows are over 1 KiB";
}

TEST(PeekFastPath, WithoutRingsEveryPeekTakesTheChannel) {
  Replica r(true, 2, {"--peek-ring-bytes", "0"});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nP 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  r.ctl->Send(samples::PeekAt("a", "u2", 0));
  const auto answers = AwaitPeeks(*r.ctl, {"a"});
  ASSERT_EQ(answers.size(), 1u) << r.sup.Log();
  EXPECT_EQ(RowCount(answers.at("a")), 1u);
  EXPECT_EQ(RingRecords(r, "requests", "pushed"), -1) << "no rings, no ring series";
}

TEST(PeekFastPath, ARingSizeThatIsNotAPowerOfTwoIsAConfigurationError) {
  SupervisorProcess sup(
      {.extra_args = {"--peek-ring-bytes", "5000"}, .worker_binary = TANDEM_WORKER_BIN});
  EXPECT_FALSE(sup.WaitReady());
  EXPECT_NE(sup.Log().find("power of two"), std::string::npos) << sup.Log();
}

}  // namespace
}  // namespace tandem::testing
