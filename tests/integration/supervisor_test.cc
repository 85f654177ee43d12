// tandem-supervisor on real processes, with a scripted runtime (tests/helpers/fake_worker.cc):
// shared fate, clean shutdown, configuration refusals, controllers, routing, HTTP.
#include <gtest/gtest.h>

#include <set>

#include "supervisor_harness.h"

namespace tandem::testing {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;

Command HelloCmd(const std::string& nonce) {
  Command c;
  c.mutable_hello()->set_nonce(nonce);
  c.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
  return c;
}

// ---- Shared fate ---------------------------------------------------------------------------

void ExpectReplicaDownAfterKilling(std::size_t victim, const std::string& role) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  ASSERT_EQ(sup.runtime_pids().size(), 2u);
  const pid_t target = sup.runtime_pids()[victim];
  const pid_t other = sup.runtime_pids()[1 - victim];
  ASSERT_EQ(kill(target, SIGKILL), 0);
  EXPECT_TRUE(Eventually([&] { return ProcessGone(other); }, 1s)) << "the other runtime survived";
  EXPECT_EQ(sup.WaitExit(10s), 137) << sup.Log();
  EXPECT_FALSE(sup.SegmentExists());
  EXPECT_TRUE(sup.RuntimeDirEmpty());
  EXPECT_NE(sup.Log().find("the " + role + " runtime (pid " + std::to_string(target) +
                           ") killed by signal 9"),
            std::string::npos)
      << sup.Log();
}

TEST(SharedFate, SigkillOfMaintenanceTakesTheReplicaDownWithExit137) {
  ExpectReplicaDownAfterKilling(0, "maintenance");
}

TEST(SharedFate, SigkillOfInteractiveTakesTheReplicaDownWithExit137) {
  ExpectReplicaDownAfterKilling(1, "interactive");
}

TEST(SharedFate, RuntimeAbortExits134) {
  SupervisorProcess sup({.fake_worker_script = "interactive:crash=300,6"});
  EXPECT_EQ(sup.WaitExit(10s), 134) << sup.Log();
  EXPECT_FALSE(sup.SegmentExists());
  EXPECT_NE(sup.Log().find("interactive runtime"), std::string::npos);
  EXPECT_NE(sup.Log().find("killed by signal 6"), std::string::npos) << sup.Log();
}

TEST(SharedFate, UnexpectedExitZeroExits70) {
  SupervisorProcess sup({.fake_worker_script = "maintenance:exit=300,0"});
  EXPECT_EQ(sup.WaitExit(10s), 70) << sup.Log();
  EXPECT_NE(sup.Log().find("maintenance runtime"), std::string::npos);
  EXPECT_NE(sup.Log().find("exited with code 0"), std::string::npos) << sup.Log();
  EXPECT_FALSE(sup.SegmentExists());
}

TEST(SharedFate, SolosCrashAlsoEndsTheReplica) {
  SupervisorProcess sup({.fake_worker_script = "solo:crash=300,9", .two_runtime = false});
  EXPECT_EQ(sup.WaitExit(10s), 137) << sup.Log();
  EXPECT_NE(sup.Log().find("the solo runtime"), std::string::npos);
}

TEST(SharedFate, KilledSupervisorTakesItsRuntimesWithIt) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  ASSERT_EQ(kill(sup.pid(), SIGKILL), 0);
  EXPECT_EQ(sup.WaitExit(5s), 137);
  for (pid_t p : sup.runtime_pids()) {
    EXPECT_TRUE(Eventually([&] { return ProcessGone(p); }, 1s)) << "runtime " << p << " survived";
  }
  auto probe = shm::Segment::Probe(sup.segment());
  ASSERT_TRUE(probe.ok());
  EXPECT_FALSE(probe->supervisor_alive) << "the left-over segment reads as stale";
}

TEST(SharedFate, KeepSegmentOnCrashLeavesItForInspection) {
  SupervisorProcess sup({.extra_args = {"--keep-segment-on-crash"}});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  kill(sup.runtime_pids()[0], SIGKILL);
  EXPECT_EQ(sup.WaitExit(10s), 137);
  ASSERT_TRUE(sup.SegmentExists());
  auto probe = shm::Segment::Probe(sup.segment());
  ASSERT_TRUE(probe.ok());
  EXPECT_TRUE(probe->valid);
  EXPECT_FALSE(probe->supervisor_alive);
  EXPECT_TRUE(sup.RuntimeDirEmpty());
}

TEST(Shutdown, SigtermExits0AndCleansUp) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  ASSERT_EQ(kill(sup.pid(), SIGTERM), 0);
  EXPECT_EQ(sup.WaitExit(10s), 0) << sup.Log();
  for (pid_t p : sup.runtime_pids()) EXPECT_TRUE(ProcessGone(p));
  EXPECT_FALSE(sup.SegmentExists());
  EXPECT_TRUE(sup.RuntimeDirEmpty());
  EXPECT_NE(sup.Log().find("shut down cleanly"), std::string::npos);
}

TEST(Shutdown, RuntimeIgnoringSigtermIsKilledAfterTheGracePeriod) {
  SupervisorProcess sup({.fake_worker_script = "interactive:ignore-sigterm"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(sup.pid(), SIGINT), 0);
  EXPECT_EQ(sup.WaitExit(15s), 0) << sup.Log();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1900ms) << "waited the 2 s grace period";
  EXPECT_NE(sup.Log().find("outlived the grace period"), std::string::npos) << sup.Log();
  for (pid_t p : sup.runtime_pids()) EXPECT_TRUE(ProcessGone(p));
  EXPECT_FALSE(sup.SegmentExists());
}

TEST(Startup, RuntimeThatNeverReportsReadyFailsStartupWith69) {
  SupervisorProcess sup(
      {.extra_args = {"--startup-timeout", "1"}, .fake_worker_script = "maintenance:no-ready"});
  EXPECT_EQ(sup.WaitExit(10s), 69) << sup.Log();
  EXPECT_NE(sup.Log().find("did not report ready"), std::string::npos);
  EXPECT_FALSE(sup.SegmentExists());
}

TEST(Startup, BusyControllerPortExits69) {
  SupervisorProcess first;
  ASSERT_TRUE(first.WaitReady()) << first.Log();
  SupervisorProcess second(
      {.extra_args = {"--controller-listen-addr", first.controller_endpoint()}});
  EXPECT_EQ(second.WaitExit(10s), 69) << second.Log();
  EXPECT_NE(second.Log().find("could not bind the controller endpoint"), std::string::npos);
  EXPECT_FALSE(second.SegmentExists());
}

// ---- Configuration -------------------------------------------------------------------------

TEST(Configuration, UnequalWorkerCountsExit78NamingBoth) {
  SupervisorProcess sup({.extra_args = {"--workers", "4", "--interactive-workers", "2"}});
  EXPECT_EQ(sup.WaitExit(10s), 78);
  EXPECT_NE(sup.Log().find("maintenance has 4 and interactive has 2"), std::string::npos)
      << sup.Log();
  EXPECT_FALSE(sup.SegmentExists());
}

TEST(Configuration, UnequalWorkerCountsAreFineInSoloMode) {
  SupervisorProcess sup(
      {.extra_args = {"--interactive-workers", "3"}, .two_runtime = false, .workers = 2});
  EXPECT_TRUE(sup.WaitReady()) << sup.Log();
}

TEST(Configuration, UnknownFlagExits64) {
  SupervisorProcess sup({.extra_args = {"--no-such-flag"}});
  EXPECT_EQ(sup.WaitExit(10s), 64);
  EXPECT_NE(sup.Log().find("--no-such-flag"), std::string::npos) << sup.Log();
}

TEST(Configuration, BadBooleanExits64) {
  SupervisorProcess sup(
      {.extra_args = {"--replica-param", "enable_compute_interactive_runtime=maybe"}});
  EXPECT_EQ(sup.WaitExit(10s), 64);
  EXPECT_NE(sup.Log().find("is not a boolean"), std::string::npos) << sup.Log();
}

TEST(Configuration, NegativeHeartbeatParameterExits64NamingItBeforeAnythingStarts) {
  for (const char* assignment :
       {"controller_heartbeat_interval_ms=-5", "controller_heartbeat_timeout_ms=-5"}) {
    SCOPED_TRACE(assignment);
    SupervisorProcess sup({.extra_args = {"--param", assignment}});
    EXPECT_EQ(sup.WaitExit(10s), 64) << sup.Log();
    const std::string name(assignment, std::string_view(assignment).find('='));
    EXPECT_NE(sup.Log().find("parameter " + name + ": '-5' is out of range"), std::string::npos)
        << sup.Log();
    EXPECT_EQ(sup.Log().find("could not bind"), std::string::npos) << sup.Log();
    EXPECT_EQ(sup.Log().find("spawned"), std::string::npos) << "nothing started";
    EXPECT_FALSE(sup.SegmentExists());
  }
}

TEST(Configuration, SegmentLargerThanDevShmExits78) {
  SupervisorProcess sup({.extra_args = {"--shm-size", "100000GiB"}});
  EXPECT_EQ(sup.WaitExit(10s), 78);
  EXPECT_NE(sup.Log().find("/dev/shm has only"), std::string::npos) << sup.Log();
}

TEST(Configuration, ReplicaParamOverridesEnvironmentParamForTheMode) {
  // Environment-wide off, replica override on (the harness passes --interactive-runtime on).
  SupervisorProcess sup({.extra_args = {"--param", "enable_compute_interactive_runtime=no"}});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  EXPECT_EQ(sup.runtime_pids().size(), 2u) << "two-runtime: the replica's value won";
  EXPECT_NE(sup.Log().find("enable_compute_interactive_runtime=true (replica)"), std::string::npos);
}

TEST(Configuration, InteractiveSwitchIsNotLive) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  Command c;
  (*c.mutable_update_configuration()->mutable_params())["enable_compute_interactive_runtime"] =
      "off";
  (*c.mutable_update_configuration()->mutable_params())["log_level"] = "info";
  ctl.Send(c);
  auto r = ctl.ReceiveUntil(
      [](const Response& r) { return r.has_status() && r.status().has_configuration_applied(); });
  ASSERT_TRUE(r);
  const auto& applied = r->status().configuration_applied();
  ASSERT_EQ(applied.needs_restart_size(), 1);
  EXPECT_EQ(applied.needs_restart(0), "enable_compute_interactive_runtime");
  EXPECT_EQ(applied.applied().at("log_level"), "info");
  // Still two runtimes: a peek is answered by interactive.
  Command peek;
  peek.mutable_peek()->set_uuid("p1");
  peek.mutable_peek()->set_id("u1");
  ctl.Send(peek);  // refused by validation (no such index) — but the replica is unchanged
  EXPECT_TRUE(ctl.ReceiveUntil([](const Response& r) { return r.has_command_error(); }));
  EXPECT_EQ(shm::Segment::Probe(sup.segment())->header->mode, shm::Mode::kTwoRuntime);
}

// ---- Controllers ---------------------------------------------------------------------------

TEST(Controllers, CommandsBeforeHelloAreRefused) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  Command c;
  c.mutable_schedule()->set_id("u1");
  ctl.Send(c);
  auto r = ctl.Receive();
  ASSERT_TRUE(r && r->has_command_error());
  EXPECT_NE(r->command_error().why().find("send Hello first"), std::string::npos);
}

TEST(Controllers, WrongProtocolVersionIsRefused) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  Command c = HelloCmd("n");
  c.mutable_hello()->set_protocol_version(ipc::kProtocolVersion + 7);
  ctl.Send(c);
  auto r = ctl.Receive();
  ASSERT_TRUE(r && r->has_command_error()) << "no answer";
  EXPECT_NE(r->command_error().why().find("protocol version"), std::string::npos);
}

TEST(Controllers, NewestHelloWinsAndTheOldControllerIsRefused) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController first(sup.controller_endpoint()), second(sup.controller_endpoint());
  ASSERT_TRUE(first.Hello("first"));
  ASSERT_TRUE(second.Hello("second"));
  auto told = first.ReceiveUntil(
      [](const Response& r) { return r.has_status() && r.status().has_superseded(); });
  ASSERT_TRUE(told);
  EXPECT_EQ(told->status().superseded().by_nonce(), "second");
  Command c;
  c.mutable_create_instance();
  first.Send(c);
  auto refused = first.ReceiveUntil([](const Response& r) { return r.has_command_error(); });
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->command_error().why().find("superseded"), std::string::npos);
  second.Send(c);
  EXPECT_TRUE(second.ReceiveUntil([](const Response& r) {
    return r.has_frontiers() && r.frontiers().id() == "echo:interactive:CreateInstance";
  })) << "the new controller's commands are forwarded";
}

TEST(Controllers, KilledControllerIsNoticedAndANewOneCanReplay) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  // A controller in its own process, killed after its Hello.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TestController ctl(sup.controller_endpoint());
    _exit(ctl.Hello("doomed") ? (pause(), 0) : 1);
  }
  const int port = sup.http_port();
  const std::string hello = "tandem_controller_events_total{event=\"hello\"}";
  ASSERT_TRUE(
      Eventually([&] { return MetricValue(HttpGet(port, "/metrics").body, hello) >= 1; }, 10s));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const std::string gone = "tandem_controller_events_total{event=\"disconnected\"}";
  EXPECT_TRUE(
      Eventually([&] { return MetricValue(HttpGet(port, "/metrics").body, gone) >= 1; }, 2s))
      << "noticed within the heartbeat timeout";
  EXPECT_NE(sup.Log().find("the active controller disconnected"), std::string::npos);
  EXPECT_EQ(HttpGet(port, "/readyz").status, 200) << "the replica keeps running";
  TestController next(sup.controller_endpoint());
  ASSERT_TRUE(next.Hello("next"));
  Command c;
  c.mutable_create_instance();
  next.Send(c);
  EXPECT_TRUE(next.ReceiveUntil([](const Response& r) {
    return r.has_frontiers() && r.frontiers().id() == "echo:maintenance:CreateInstance";
  }));
}

TEST(Controllers, FrozenControllerIsNoticedByHeartbeat) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TestController ctl(sup.controller_endpoint());
    _exit(ctl.Hello("frozen") ? (pause(), 0) : 1);
  }
  const int port = sup.http_port();
  ASSERT_TRUE(Eventually(
      [&] {
        return MetricValue(HttpGet(port, "/metrics").body,
                           "tandem_controller_events_total{event=\"hello\"}") >= 1;
      },
      10s));
  kill(child, SIGSTOP);  // alive, connected, silent: only heartbeats can tell
  EXPECT_TRUE(Eventually(
      [&] {
        return MetricValue(HttpGet(port, "/metrics").body,
                           "tandem_controller_events_total{event=\"disconnected\"}") >= 1;
      },
      5s));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// ---- Routing through real processes --------------------------------------------------------

// A dataflow with a counter source u1 and an index u2 on it (key: column 0).
Command CounterIndexDataflow() {
  Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name("counter index");
  d->set_class_(ipc::pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  auto* src = d->add_source_imports();
  src->set_id("u1");
  src->mutable_source()->mutable_counter()->set_tick_interval_us(1000);
  auto* col = src->mutable_schema()->add_columns();
  col->set_name("n");
  col->set_type(ipc::pb::INT64);
  auto* idx = d->add_index_exports();
  idx->set_id("u2");
  idx->set_on("u1");
  idx->add_key(0);
  return c;
}

TEST(Routing, BroadcastsToBothRuntimesAndPeeksOnlyToInteractive) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  ctl.Send(CounterIndexDataflow());
  std::set<std::string> seen;
  ASSERT_TRUE(ctl.ReceiveUntil([&](const Response& r) {
    if (r.has_command_error()) ADD_FAILURE() << r.command_error().why();
    seen.insert(r.frontiers().id());
    return seen.count("echo:maintenance:CreateDataflow") &&
           seen.count("echo:interactive:CreateDataflow");
  })) << "both runtimes get CreateDataflow";
  EXPECT_TRUE(seen.count("echo:maintenance:Hello") ||
              std::any_of(ctl.skipped.begin(), ctl.skipped.end(), [](const Response& r) {
                return r.frontiers().id() == "echo:maintenance:Hello";
              }));
  Command peek;
  peek.mutable_peek()->set_uuid("peek-1");
  peek.mutable_peek()->set_id("u2");
  peek.mutable_peek()->set_timestamp(0);
  ctl.Send(peek);
  auto answer = ctl.ReceiveUntil([](const Response& r) { return r.has_peek_response(); });
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->peek_response().uuid(), "peek-1");
  ASSERT_EQ(answer->peek_response().rows().rows_size(), 1);
  EXPECT_EQ(answer->peek_response().rows().rows(0).row().datums(0).string(), "interactive");
  EXPECT_FALSE(ctl.ReceiveUntil([](const Response& r) { return r.has_peek_response(); }, 300ms))
      << "exactly one PeekResponse: maintenance never saw the peek";
  const std::string m = HttpGet(sup.http_port(), "/metrics").body;
  EXPECT_EQ(MetricValue(m, "tandem_peek_latency_seconds_count"), 1);
}

TEST(Routing, SoloModeSendsEverythingToTheSoloRuntime) {
  SupervisorProcess sup({.two_runtime = false});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  Command c;
  c.mutable_create_instance();
  ctl.Send(c);
  EXPECT_TRUE(ctl.ReceiveUntil(
      [](const Response& r) { return r.frontiers().id() == "echo:solo:CreateInstance"; }));
}

// ---- Malformed input -----------------------------------------------------------------------

TEST(Malformed, EveryKindIsAnsweredOrDisconnectedCountedAndTheSupervisorKeepsServing) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  // Garbage, an empty message, a truncated command, an envelope with an unknown kind.
  Command valid;
  valid.mutable_allow_compaction()->set_id("u1");
  valid.mutable_allow_compaction()->mutable_frontier()->add_elements(5);
  const std::string enc = ipc::Encode(valid);
  const std::vector<std::string> bad = {std::string("\xff\xff\xff\xff garbage", 13), "",
                                        enc.substr(0, enc.size() - 2),
                                        std::string("\xa2\x06\x00", 3)};
  for (const auto& b : bad) {
    ctl.SendRaw(b);
    auto r = ctl.ReceiveUntil([](const Response& r) { return r.has_command_error(); });
    ASSERT_TRUE(r && r->has_command_error())
        << "no CommandError for malformed message of " << b.size() << " bytes";
  }
  // Two frames in one message.
  ctl.socket().send(zmq::buffer(enc), zmq::send_flags::sndmore);
  ctl.socket().send(zmq::buffer(enc), zmq::send_flags::none);
  auto r = ctl.ReceiveUntil([](const Response& r) { return r.has_command_error(); });
  ASSERT_TRUE(r && r->has_command_error());
  // Oversized: the connection is dropped by the transport, and counted.
  {
    TestController big(sup.controller_endpoint());
    big.SendRaw(std::string(ipc::kMaxMessageBytes + 1024, 'x'));
    EXPECT_TRUE(Eventually(
        [&] {
          return MetricValue(HttpGet(sup.http_port(), "/metrics").body,
                             "tandem_controller_events_total{event=\"disconnected\"}") >= 1;
        },
        5s));
  }
  const std::string metrics = HttpGet(sup.http_port(), "/metrics").body;
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"unparsable\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"empty\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"no_kind\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"frames\"}"), 1);
  // Still serving.
  Command c;
  c.mutable_create_instance();
  ctl.Send(c);
  EXPECT_TRUE(ctl.ReceiveUntil(
      [](const Response& r) { return r.frontiers().id() == "echo:maintenance:CreateInstance"; }));
  EXPECT_EQ(HttpGet(sup.http_port(), "/readyz").status, 200);
}

// ---- HTTP ----------------------------------------------------------------------------------

TEST(Http, LivezReadyzAndMetricsFamilies) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  EXPECT_EQ(HttpGet(sup.http_port(), "/livez").status, 200);
  EXPECT_EQ(HttpGet(sup.http_port(), "/readyz").status, 200);
  EXPECT_EQ(HttpGet(sup.http_port(), "/nope").status, 404);
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  const std::string m = HttpGet(sup.http_port(), "/metrics").body;
  for (const char* family :
       {"tandem_commands_total", "tandem_refused_commands_total", "tandem_malformed_messages_total",
        "tandem_peek_latency_seconds", "tandem_runtime_up", "tandem_segment_bytes",
        "tandem_supervisor_loop_turns_total", "tandem_ready", "tandem_index_parts_stalled"}) {
    EXPECT_NE(m.find(std::string("# TYPE ") + family), std::string::npos) << family;
  }
  EXPECT_EQ(MetricValue(m, "tandem_runtime_up{role=\"maintenance\"}"), 1);
  EXPECT_EQ(MetricValue(m, "tandem_runtime_up{role=\"interactive\"}"), 1);
  EXPECT_GT(MetricValue(m, "tandem_segment_bytes{kind=\"used\"}"), 0);
  EXPECT_GT(MetricValue(m, "tandem_segment_bytes{kind=\"free\"}"), 0);
  EXPECT_EQ(MetricValue(m, "tandem_index_parts_stalled"), 0);
  EXPECT_EQ(MetricValue(m, "tandem_commands_total{command=\"Hello\",result=\"forwarded\"}"), 1);
}

TEST(Http, ReadyzIs503UntilTheRuntimesReport) {
  SupervisorProcess sup(
      {.extra_args = {"--startup-timeout", "30"}, .fake_worker_script = "interactive:no-ready"});
  ASSERT_TRUE(Eventually([&] { return HttpGet(sup.http_port(), "/livez").status == 200; }, 10s));
  const HttpResult r = HttpGet(sup.http_port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("interactive runtime not ready"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace tandem::testing
