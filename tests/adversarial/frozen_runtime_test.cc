// A frozen runtime (issue 12, item 6): SIGSTOP of either runtime used to leave /readyz at 200
// while every peek timed out. Each runtime raises a progress counter in the segment header (every
// ~100 ms while all its threads turn their loops, traffic or not); the supervisor marks the
// replica not ready when one has not moved for --runtime-stall-timeout, ready again when it moves,
// and takes the replica down (exit 75, shared fate) when it has not moved for
// --runtime-stall-kill. The real runtime binary, both roles.
#include <signal.h>

#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

const std::vector<std::string> kShortStall = {"--runtime-stall-timeout", "2",
                                              "--runtime-stall-kill", "6"};

pid_t RuntimePid(Target& target, const std::string& role) {
  const auto& pids = target.sup().runtime_pids();  // maintenance first
  return pids.size() == 2 ? pids[role == "interactive" ? 1 : 0] : -1;
}

void StoppedRuntimeIsNotReadyAndReadyAgainAfterSigcont(const std::string& role) {
  Target target(kShortStall);
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const int port = target.sup().http_port();
  // Idle past the stall timeout: still ready (progress does not depend on traffic).
  const auto idle_until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < idle_until) {
    ASSERT_EQ(HttpGet(port, "/readyz").status, 200) << target.sup().Log();
    std::this_thread::sleep_for(100ms);  // sampling a window, not waiting for an event
  }
  const pid_t pid = RuntimePid(target, role);
  ASSERT_GT(pid, 0);
  {
    Stopped frozen(pid);
    ASSERT_TRUE(Eventually([&] { return HttpGet(port, "/readyz").status == 503; }, 5s))
        << target.sup().Log();
    const HttpResult readyz = HttpGet(port, "/readyz");
    EXPECT_NE(readyz.body.find(role + " runtime (pid " + std::to_string(pid) + ") stalled"),
              std::string::npos)
        << readyz.body;
    const std::string metrics = HttpGet(port, "/metrics").body;
    EXPECT_EQ(MetricValue(metrics, "tandem_runtime_stalled{role=\"" + role + "\"}"), 1);
    EXPECT_EQ(MetricValue(metrics, "tandem_runtime_stalls_total{role=\"" + role + "\"}"), 1);
    EXPECT_EQ(MetricValue(metrics, "tandem_ready"), 0);
  }  // SIGCONT, before the kill timeout
  ASSERT_TRUE(Eventually([&] { return HttpGet(port, "/readyz").status == 200; }, 5s))
      << target.sup().Log();
  EXPECT_EQ(
      MetricValue(HttpGet(port, "/metrics").body, "tandem_runtime_stalled{role=\"" + role + "\"}"),
      0);
  EXPECT_NE(target.sup().Log().find("makes progress again"), std::string::npos);
  target.ExpectStillServing();
}

TEST(FrozenRuntime, StoppedInteractiveMakesTheReplicaNotReadyUntilSigcont) {
  StoppedRuntimeIsNotReadyAndReadyAgainAfterSigcont("interactive");
}

TEST(FrozenRuntime, StoppedMaintenanceMakesTheReplicaNotReadyUntilSigcont) {
  StoppedRuntimeIsNotReadyAndReadyAgainAfterSigcont("maintenance");
}

void StoppedPastTheKillTimeoutTakesTheReplicaDownWith75(const std::string& role) {
  Target target(kShortStall);
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const pid_t pid = RuntimePid(target, role);
  ASSERT_GT(pid, 0);
  Stopped frozen(pid);
  EXPECT_EQ(target.sup().WaitExit(15s), 75) << target.sup().Log();
  const std::string log = target.sup().Log();
  EXPECT_NE(log.find("the " + role + " runtime (pid " + std::to_string(pid) +
                     ") has made no progress for"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("taking the replica down (shared fate)"), std::string::npos) << log;
  for (pid_t p : target.sup().runtime_pids())
    EXPECT_TRUE(Eventually([&] { return ProcessGone(p); }, 10s)) << p;
  EXPECT_FALSE(target.sup().SegmentExists());
  EXPECT_TRUE(target.sup().RuntimeDirEmpty());
}

TEST(FrozenRuntime, InteractiveStoppedPastTheKillTimeoutTakesTheReplicaDownWith75) {
  StoppedPastTheKillTimeoutTakesTheReplicaDownWith75("interactive");
}

TEST(FrozenRuntime, MaintenanceStoppedPastTheKillTimeoutTakesTheReplicaDownWith75) {
  StoppedPastTheKillTimeoutTakesTheReplicaDownWith75("maintenance");
}

// Solo mode: the one runtime reports in the maintenance entry of the header, idle it stays
// ready, stopped it does not.
TEST(FrozenRuntime, StoppedSoloRuntimeMakesTheReplicaNotReadyUntilSigcont) {
  std::vector<std::string> args = kShortStall;
  SupervisorProcess sup({.extra_args = args,
                         .two_runtime = false,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "64MiB"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  ASSERT_EQ(sup.runtime_pids().size(), 1u);
  const auto idle_until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < idle_until) {
    ASSERT_EQ(HttpGet(sup.http_port(), "/readyz").status, 200) << sup.Log();
    std::this_thread::sleep_for(100ms);  // sampling a window, not waiting for an event
  }
  {
    Stopped frozen(sup.runtime_pids()[0]);
    ASSERT_TRUE(Eventually([&] { return HttpGet(sup.http_port(), "/readyz").status == 503; }, 5s))
        << sup.Log();
    EXPECT_NE(HttpGet(sup.http_port(), "/readyz").body.find("solo runtime"), std::string::npos);
  }
  EXPECT_TRUE(Eventually([&] { return HttpGet(sup.http_port(), "/readyz").status == 200; }, 5s))
      << sup.Log();
}

}  // namespace
}  // namespace tandem::testing::adversarial
