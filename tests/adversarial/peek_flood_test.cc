// A flood of peeks behind a stopped interactive runtime (issue 12, item 7): nothing answers them,
// so without a bound every one would wait in the supervisor (its peek table and the channel's
// queue) — 200,000 of them grew it to 38 MB. A session may have --max-peeks-per-session (1,000 by
// default) peeks waiting; each beyond is refused with a CommandError naming the limit, and the
// supervisor's memory plateaus. CancelPeeks of peeks that do not wait are not forwarded at all.
#include <signal.h>

#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

// Sends `n` commands made by `make(i)` and returns how many CommandErrors about the per-session
// limit came back; waits until `expect_refused` of them arrived (or 20 s passed).
int Flood(TestController& ctl, int n, int expect_refused,
          const std::function<ipc::pb::Command(int)>& make) {
  int refused = 0;
  auto drain = [&](std::chrono::milliseconds limit) {
    while (auto r = ctl.Receive(limit)) {
      if (r->has_command_error() &&
          r->command_error().why().find("--max-peeks-per-session") != std::string::npos) {
        ++refused;
      }
      if (refused >= expect_refused) return;
      limit = 1ms;
    }
  };
  for (int i = 0; i < n; ++i) {
    ctl.Send(make(i));
    if (i % 500 == 499) drain(1ms);
  }
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (refused < expect_refused && std::chrono::steady_clock::now() < deadline) drain(100ms);
  return refused;
}

TEST(PeekFlood, PeeksBeyondTheSessionLimitAreRefusedAndTheSupervisorsMemoryPlateaus) {
  // A limit below the default (1,000): the peeks that wait are answered after SIGCONT, each a scan
  // of every batch appended while the runtime was stopped (its hold keeps them uncompacted) —
  // long under ASan, where the flood itself takes tens of seconds.
  // The interactive runtime stays stopped through the flood: the stall watch must not end the
  // replica meanwhile (a slow sanitizer run may take more than its default 60 s).
  Target target({"--max-peeks-per-session", "100", "--runtime-stall-timeout", "1800",
                 "--runtime-stall-kill", "3600"});
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  ASSERT_EQ(target.sup().runtime_pids().size(), 2u);
  const pid_t supervisor = target.sup().pid();
  int next = 0;
  auto peek = [&](int) { return ipc::samples::PeekAt("flood-" + std::to_string(next++), "u2", 1); };
  std::uint64_t after_first = 0, after_second = 0, after_cancels = 0;
  {
    Stopped frozen(target.sup().runtime_pids()[1]);  // the interactive runtime
    // 100 wait (the limit), 400 are refused.
    EXPECT_EQ(Flood(target.ctl(), 500, 400, peek), 400) << target.sup().Log();
    after_first = RssBytes(supervisor);
    // 30,000 more: every one refused, and nothing more kept.
    EXPECT_EQ(Flood(target.ctl(), 30000, 30000, peek), 30000) << target.sup().Log();
    after_second = RssBytes(supervisor);
    // 20,000 cancels of peeks that never were: dropped in the supervisor. The last flood of one
    // refused peek shows they were all read.
    int cancel = 0;
    Flood(target.ctl(), 20000, 0, [&](int) {
      ipc::pb::Command c;
      c.mutable_cancel_peek()->set_uuid("never-" + std::to_string(cancel++));
      return c;
    });
    EXPECT_EQ(Flood(target.ctl(), 1, 1, peek), 1);
    after_cancels = RssBytes(supervisor);
    const std::string metrics = HttpGet(target.sup().http_port(), "/metrics").body;
    EXPECT_EQ(MetricValue(metrics, "tandem_peeks_in_flight"), 100);
    EXPECT_EQ(MetricValue(metrics, "tandem_refused_commands_total{reason=\"too_many_peeks\"}"),
              30401);
  }
  std::printf(
      "supervisor RSS: %.1f MiB after 500 peeks, %.1f MiB after 30,500, %.1f MiB after "
      "20,000 cancels more\n",
      after_first / 1048576.0, after_second / 1048576.0, after_cancels / 1048576.0);
  if (kRssIsMeaningful) {
    EXPECT_LT(after_second, after_first + (2u << 20));
    EXPECT_LT(after_cancels, after_first + (2u << 20));
  }
  // Resumed, the interactive runtime answers the 100 that waited.
  int answered = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (answered < 100 && std::chrono::steady_clock::now() < deadline) {
    auto r = target.ctl().Receive(1s);
    if (r && r->has_peek_response() && r->peek_response().uuid().rfind("flood-", 0) == 0)
      ++answered;
  }
  EXPECT_EQ(answered, 100);
  ASSERT_FALSE(target.sup().Exited()) << "exit status " << target.sup().WaitExit(0ms).value_or(-1);
  target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
