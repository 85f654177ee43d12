// Fault injection from a controller (issue 12, item 3): `debug_abort_worker` makes a runtime fail
// a check on purpose. Without --enable-fault-injection it must not exist for controllers: the
// UpdateConfiguration naming it is refused with a CommandError that says why, and nothing
// changes (nothing reaches a runtime, the replica keeps serving).
#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

TEST(FaultInjection, DebugAbortWorkerIsRefusedWithoutTheFlagAndTheReplicaKeepsServing) {
  Target target;
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  for (const char* role : {"interactive", "maintenance"}) {
    ipc::pb::Command c;
    (*c.mutable_update_configuration()->mutable_params())["debug_abort_worker"] = role;
    // A live parameter beside it: a refused command applies none of its parameters.
    (*c.mutable_update_configuration()->mutable_params())["log_level"] = "warn";
    target.ctl().Send(c);
    auto r = target.ctl().ReceiveUntil(
        [](const ipc::pb::Response& r) {
          return r.has_command_error() ||
                 (r.has_status() && r.status().has_configuration_applied());
        },
        5s);
    ASSERT_TRUE(r) << target.sup().Log();
    ASSERT_TRUE(r->has_command_error()) << "fault injection was accepted: " << r->DebugString();
    EXPECT_NE(r->command_error().why().find("--enable-fault-injection"), std::string::npos)
        << r->command_error().why();
    EXPECT_NE(r->command_error().why().find("debug_abort_worker"), std::string::npos)
        << r->command_error().why();
  }
  // The runtimes would have aborted within milliseconds; the good peek proves they did not.
  target.ExpectStillServing();
  EXPECT_EQ(target.sup().Log().find("debug_abort_worker: failing a check"), std::string::npos);
  EXPECT_GE(MetricValue(HttpGet(target.sup().http_port(), "/metrics").body,
                        "tandem_refused_commands_total{reason=\"fault_injection_disabled\"}"),
            2);
}

TEST(FaultInjection, DebugAbortWorkerAtStartWithoutTheFlagExits64) {
  SupervisorProcess sup({.extra_args = {"--param", "debug_abort_worker=interactive"}});
  EXPECT_EQ(sup.WaitExit(10s), 64) << sup.Log();
  EXPECT_NE(sup.Log().find("--enable-fault-injection"), std::string::npos) << sup.Log();
}

}  // namespace
}  // namespace tandem::testing::adversarial
