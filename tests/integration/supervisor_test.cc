// tandem-supervisor on real processes, with a scripted runtime (tests/helpers/fake_worker.cc):
// shared fate, clean shutdown, configuration refusals, controllers, routing, HTTP.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ipc/table_write.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "unit/protocol_samples.h"

namespace tandem::testing {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;
namespace samples = ipc::samples;

// ---- Shared fate ---------------------------------------------------------------------------

void ExpectReplicaDownAfterKilling(std::size_t victim, const std::string& role) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  ASSERT_EQ(sup.runtime_pids().size(), 2u);
  const pid_t target = sup.runtime_pids()[victim];
  const pid_t other = sup.runtime_pids()[1 - victim];
  ASSERT_EQ(kill(target, SIGKILL), 0);
  EXPECT_TRUE(Eventually([&] { return ProcessGone(other); }, 10s)) << "the other runtime survived";
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
    // A bound, not a speed: the parent-death signal and init's reaping take their time on a
    // loaded machine.
    EXPECT_TRUE(Eventually([&] { return ProcessGone(p); }, 10s)) << "runtime " << p << " survived";
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

TEST(Startup, PortZeroIsTheKernelsChoiceAndTheEndpointsFileNamesWhatWasBound) {
  SupervisorProcess sup;  // the harness binds port 0 for both endpoints
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const std::string controller = sup.controller_endpoint();
  const std::string http = "127.0.0.1:" + std::to_string(sup.http_port());
  EXPECT_NE(controller, "tcp://127.0.0.1:0");
  EXPECT_EQ(tools::ReadFile(sup.endpoints_file()),
            "controller_listen_addr=" + controller + "\ninternal_http_listen_addr=" + http + "\n");
  EXPECT_NE(sup.Log().find("bound: controller endpoint " + controller + ", internal HTTP " + http),
            std::string::npos)
      << sup.Log();
  TestController ctl(controller);
  EXPECT_TRUE(ctl.Hello()) << sup.Log();
  ASSERT_EQ(kill(sup.pid(), SIGTERM), 0);
  EXPECT_EQ(sup.WaitExit(10s), 0) << sup.Log();
  EXPECT_FALSE(std::filesystem::exists(sup.endpoints_file())) << "it names ports no longer held";
}

// Two supervisors given one --endpoints-file by mistake: the second's file replaces the first's,
// and the first, exiting, leaves it (it names ports still held); the second removes its own.
TEST(Startup, ASupervisorExitingLeavesAnEndpointsFileAnotherReplacedSinceItWroteIt) {
  SupervisorProcess first;
  ASSERT_TRUE(first.WaitReady()) << first.Log();
  const std::string path = first.endpoints_file();
  const std::string firsts = tools::ReadFile(path);
  SupervisorProcess second({.extra_args = {"--endpoints-file", path}});
  ASSERT_TRUE(Eventually(
      [&] {
        const std::string now = tools::ReadFile(path);
        return !now.empty() && now != firsts;
      },
      30s))
      << second.Log();
  const std::string seconds = tools::ReadFile(path);
  ASSERT_EQ(kill(first.pid(), SIGTERM), 0);
  EXPECT_EQ(first.WaitExit(10s), 0) << first.Log();
  EXPECT_EQ(tools::ReadFile(path), seconds) << "the second replica's file, left alone";
  EXPECT_NE(first.Log().find("is no longer the one this supervisor wrote: left alone"),
            std::string::npos)
      << first.Log();
  ASSERT_EQ(kill(second.pid(), SIGTERM), 0);
  EXPECT_EQ(second.WaitExit(10s), 0) << second.Log();
  EXPECT_FALSE(std::filesystem::exists(path)) << "its own file, removed";
}

TEST(Startup, AnEndpointsFileThatCannotBeWrittenExits69AndLeavesNothing) {
  SupervisorProcess sup({.extra_args = {"--endpoints-file", "/nonexistent-dir/endpoints"}});
  EXPECT_EQ(sup.WaitExit(10s), 69) << sup.Log();
  EXPECT_NE(sup.Log().find("could not write --endpoints-file /nonexistent-dir/endpoints"),
            std::string::npos)
      << sup.Log();
  EXPECT_FALSE(sup.SegmentExists());
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

TEST(Configuration, BadStallAndBoundFlagsExit64NamingThemBeforeAnythingStarts) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--runtime-stall-timeout", "0"}, "--runtime-stall-timeout"},
      {{"--runtime-stall-timeout", "1"}, "--runtime-stall-timeout"},  // below the idle wake
      {{"--runtime-stall-timeout", "soon"}, "--runtime-stall-timeout"},
      {{"--runtime-stall-kill", "-1"}, "--runtime-stall-kill"},
      {{"--runtime-stall-timeout", "30", "--runtime-stall-kill", "20"}, "must be longer than"},
      {{"--max-peeks-per-session", "0"}, "--max-peeks-per-session"},
      {{"--max-peeks-per-session", "500", "--max-peeks-in-flight", "100"}, "must be at least"},
      {{"--http-max-connections", "0"}, "--http-max-connections"},
      {{"--http-request-timeout", "0"}, "--http-request-timeout"},
  };
  for (const auto& [args, named] : cases) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    SupervisorProcess sup({.extra_args = args});
    EXPECT_EQ(sup.WaitExit(10s), 64) << sup.Log();
    EXPECT_NE(sup.Log().find(named), std::string::npos) << sup.Log();
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
  Command c = samples::Hello("n");
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
      Eventually([&] { return MetricValue(HttpGet(port, "/metrics").body, gone) >= 1; }, 5s))
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
  SupervisorProcess sup({.heartbeat_interval_ms = 100, .heartbeat_timeout_ms = 500});
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

// ---- Observers and Goodbye (DESIGN §3) -----------------------------------------------------

// Sends `hello` and returns its HelloAccepted (nullopt if refused or unanswered).
std::optional<ipc::pb::Status::HelloAccepted> SayHello(TestController& session,
                                                       const Command& hello) {
  session.Send(hello);
  auto r = session.ReceiveUntil([](const Response& r) {
    return r.has_command_error() || (r.has_status() && r.status().has_hello_accepted());
  });
  if (!r || !r->has_status()) return std::nullopt;
  return r->status().hello_accepted();
}

std::vector<std::string> LiveIndexes(const std::optional<ipc::pb::Status::HelloAccepted>& a) {
  if (!a) return {"(no HelloAccepted)"};
  return {a->live_indexes().begin(), a->live_indexes().end()};
}

// A counter source `source` indexed by `index`, from `as_of`; `max` > 0 makes the counter end
// (the scripted runtime then reports the source closed).
Command CounterDataflow(const std::string& source, const std::string& index, std::uint64_t as_of,
                        std::uint64_t max = 0) {
  Command c = CounterIndexDataflow();
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->mutable_as_of()->set_elements(0, as_of);
  d->mutable_source_imports(0)->set_id(source);
  d->mutable_source_imports(0)->mutable_source()->mutable_counter()->set_max(max);
  d->mutable_index_exports(0)->set_id(index);
  d->mutable_index_exports(0)->set_on(source);
  return c;
}

bool IsEcho(const Response& r, const std::string& role, const std::string& command) {
  return r.has_frontiers() && r.frontiers().id() == "echo:" + role + ":" + command;
}

// Sends each command as the controller and waits until the interactive runtime (which receives
// every command but a peek) has echoed all of them. False if one was refused.
bool SendAccepted(TestController& ctl, const std::vector<Command>& commands) {
  int echoes = 0, refused = 0;
  for (const Command& c : commands) ctl.Send(c);
  const bool all =
      ctl.ReceiveUntil([&](const Response& r) {
           if (r.has_command_error()) {
             ++refused;
             ADD_FAILURE() << r.command_error().why();
           }
           if (r.has_frontiers() && r.frontiers().id().rfind("echo:interactive:", 0) == 0) {
             ++echoes;
           }
           return refused > 0 || echoes == static_cast<int>(commands.size());
         })
          .has_value();
  return all && refused == 0;
}

// Sends a peek and returns its answer (or the CommandError refusing it).
std::optional<Response> PeekAnswer(TestController& session, const std::string& uuid,
                                   const std::string& id) {
  session.Send(samples::PeekAt(uuid, id));
  return session.ReceiveUntil([&](const Response& r) {
    return r.has_command_error() || (r.has_peek_response() && r.peek_response().uuid() == uuid);
  });
}

TEST(Observers, ObserverHelloDoesNotSupersedeTheControllerAndTheControllersHelloKeepsTheObserver) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint()), obs(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl-1"));
  const auto accepted = SayHello(obs, samples::ObserverHello("obs-1"));
  ASSERT_TRUE(accepted);
  EXPECT_TRUE(accepted->observer());
  EXPECT_EQ(accepted->nonce(), "obs-1");
  // The controller is still in charge and was told nothing; and the observer's Hello reached no
  // runtime: maintenance echoes in order, so its echo would come before the dataflow's.
  ctl.Send(CounterDataflow("u1", "u2", 0));
  int hellos = 0;
  ASSERT_TRUE(ctl.ReceiveUntil([&](const Response& r) {
    if (r.has_command_error()) ADD_FAILURE() << r.command_error().why();
    if (r.has_status() && r.status().has_superseded()) ADD_FAILURE() << "controller superseded";
    if (IsEcho(r, "maintenance", "Hello")) ++hellos;
    return IsEcho(r, "maintenance", "CreateDataflow");
  }));
  EXPECT_EQ(hellos, 1) << "only the controller's Hello reached the runtimes";

  // A newer controller supersedes the old controller, not the observer.
  TestController ctl2(sup.controller_endpoint());
  ASSERT_TRUE(ctl2.Hello("ctl-2"));
  ASSERT_TRUE(ctl.ReceiveUntil(
      [](const Response& r) { return r.has_status() && r.status().has_superseded(); }));
  const auto answer = PeekAnswer(obs, "after-ctl-2", "u2");
  ASSERT_TRUE(answer && answer->has_peek_response())
      << (answer ? answer->command_error().why() : "no answer");
  for (const Response& r : obs.skipped) {
    EXPECT_FALSE(r.has_status() && r.status().has_superseded()) << "observer told superseded";
    EXPECT_FALSE(r.has_command_error()) << r.command_error().why();
  }
}

TEST(Observers, CommandsThatWouldChangeAnythingAreRefusedAndReachNoRuntime) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint()), obs(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  ASSERT_TRUE(
      SendAccepted(ctl, {CounterDataflow("u1", "u2", 0), samples::InitializationComplete()}));
  ASSERT_TRUE(SayHello(obs, samples::ObserverHello("obs")));

  Command compact;
  compact.mutable_allow_compaction()->set_id("u2");
  compact.mutable_allow_compaction()->mutable_frontier()->add_elements(3);
  Command configure;
  (*configure.mutable_update_configuration()->mutable_params())["log_level"] = "info";
  Command instance;
  instance.mutable_create_instance();
  Command schedule;
  schedule.mutable_schedule()->set_id("u2");
  const std::vector<Command> writes = {CounterDataflow("u3", "u4", 0),
                                       compact,
                                       samples::Drop("u2"),
                                       samples::InitializationComplete(),
                                       configure,
                                       instance,
                                       schedule};
  for (const Command& w : writes) {
    SCOPED_TRACE(ipc::Describe(w));
    obs.Send(w);
    auto r = obs.ReceiveUntil([](const Response& r) { return r.has_command_error(); });
    ASSERT_TRUE(r);
    EXPECT_EQ(r->command_error().what(), ipc::CommandName(w));
    EXPECT_NE(r->command_error().why().find("observer sessions are read-only"), std::string::npos)
        << r->command_error().why();
  }
  EXPECT_EQ(MetricValue(HttpGet(sup.http_port(), "/metrics").body,
                        "tandem_refused_commands_total{reason=\"read_only\"}"),
            static_cast<double>(writes.size()));

  // The controller's next command is the next one each runtime echoes after the controller's own.
  Command marker;
  marker.mutable_allow_writes()->set_id("u2");
  ctl.Send(marker);
  std::map<std::string, int> echoes;
  ASSERT_TRUE(ctl.ReceiveUntil([&](const Response& r) {
    if (r.has_frontiers()) ++echoes[r.frontiers().id()];
    return echoes["echo:maintenance:AllowWrites"] == 1 &&
           echoes["echo:interactive:AllowWrites"] == 1;
  }));
  for (const auto& [id, n] : echoes) EXPECT_LE(n, 1) << id << ": sent once, by the controller";
  for (const char* kind :
       {"AllowCompaction", "UpdateConfiguration", "CreateInstance", "Schedule"}) {
    EXPECT_EQ(echoes["echo:maintenance:" + std::string(kind)], 0) << kind;
    EXPECT_EQ(echoes["echo:interactive:" + std::string(kind)], 0) << kind;
  }
  // Nor did the validator record any of it: u2 is still there, u3 and u4 are free.
  const auto still = PeekAnswer(ctl, "still", "u2");
  ASSERT_TRUE(still && still->has_peek_response());
  EXPECT_TRUE(SendAccepted(ctl, {CounterDataflow("u3", "u4", 0)}));
}

TEST(Observers, EachSessionGetsTheAnswerToItsOwnPeekEvenWithTheSameUuid) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const std::string ep = sup.controller_endpoint();
  TestController ctl(ep), obs1(ep), obs2(ep);
  ASSERT_TRUE(ctl.Hello("ctl"));
  ASSERT_TRUE(
      SendAccepted(ctl, {CounterDataflow("u1", "u2", 0), samples::InitializationComplete()}));
  ASSERT_TRUE(SayHello(obs1, samples::ObserverHello("o1")));
  ASSERT_TRUE(SayHello(obs2, samples::ObserverHello("o2")));
  for (TestController* s : {&ctl, &obs1, &obs2}) s->Send(samples::PeekAt("same", "u2"));
  // Each session then peeks once more: the interactive stream is ordered, so any answer to
  // "same" meant for it (or sent to it by mistake) arrives before the answer to "last".
  std::vector<std::string> wire_uuids;
  for (TestController* s : {&ctl, &obs1, &obs2}) {
    s->Send(samples::PeekAt("last", "u2"));
    int same = 0;
    ASSERT_TRUE(s->ReceiveUntil([&](const Response& r) {
      if (r.has_command_error()) ADD_FAILURE() << r.command_error().why();
      if (r.has_peek_response() && r.peek_response().uuid() == "same") {
        ++same;
        // The scripted runtime answers with the uuid it was sent.
        wire_uuids.push_back(r.peek_response().rows().rows(0).row().datums(1).string());
      }
      return r.has_peek_response() && r.peek_response().uuid() == "last";
    }));
    EXPECT_EQ(same, 1) << "exactly one answer, its own";
  }
  ASSERT_EQ(wire_uuids.size(), 3u);
  EXPECT_EQ(wire_uuids[0], "same") << "the controller's uuid is forwarded as sent";
  EXPECT_EQ(std::set<std::string>(wire_uuids.begin(), wire_uuids.end()).size(), 3u)
      << "each session's peek reached the runtime under a uuid of its own";
  EXPECT_EQ(MetricValue(HttpGet(sup.http_port(), "/metrics").body,
                        "tandem_responses_dropped_total{reason=\"unknown_peek\"}"),
            -1)
      << "no answer was left without its session";
}

// The Frontiers an observer receives (by id; not the scripted runtime's echoes) until its peek
// `marker` on u2 is answered: right after its Hello, those are the cached ones (sent before
// anything else the supervisor does) and whatever the runtimes reported since.
using SeenFrontiers = std::map<std::string, ipc::pb::Frontiers>;
SeenFrontiers FrontiersUntilPeek(TestController& obs, const std::string& marker) {
  SeenFrontiers seen;
  obs.Send(samples::PeekAt(marker, "u2"));
  EXPECT_TRUE(obs.ReceiveUntil([&](const Response& r) {
    if (r.has_frontiers() && r.frontiers().id().rfind("echo:", 0) != 0) {
      seen[r.frontiers().id()] = r.frontiers();
    }
    return r.has_peek_response() && r.peek_response().uuid() == marker;
  }));
  return seen;
}

std::string WriteText(const SeenFrontiers& seen, const std::string& id) {
  auto it = seen.find(id);
  if (it == seen.end()) return "absent";
  if (it->second.write().elements().empty()) return "closed";
  return std::to_string(it->second.write().elements(0));
}

// Receives until the frontiers of every id in `expected` were seen as expected ("closed" or the
// write time), counting what earlier waits skipped.
bool FrontiersArrive(TestController& session, const std::map<std::string, std::string>& expected) {
  SeenFrontiers seen;
  for (const Response& r : session.skipped) {
    if (r.has_frontiers()) seen[r.frontiers().id()] = r.frontiers();
  }
  session.skipped.clear();
  auto all_there = [&] {
    for (const auto& [id, text] : expected) {
      if (WriteText(seen, id) != text) return false;
    }
    return true;
  };
  const bool done = all_there() || session
                                       .ReceiveUntil([&](const Response& r) {
                                         if (r.has_frontiers())
                                           seen[r.frontiers().id()] = r.frontiers();
                                         return all_there();
                                       })
                                       .has_value();
  for (const auto& [id, text] : expected) EXPECT_EQ(WriteText(seen, id), text) << id;
  return done;
}

TEST(Observers, ReceiveEveryCollectionsLatestFrontiersAtConnectIncludingClosedOnes) {
  SupervisorProcess sup({.fake_worker_script = "maintenance:frontiers"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const std::string ep = sup.controller_endpoint();
  TestController ctl(ep);
  ASSERT_TRUE(ctl.Hello("ctl"));
  // u1 ends (closed), u2 indexes it; u3/u4 tick; u5/u6 are dropped before the observer comes
  // (the scripted runtime, like tandem-worker, reports a dropped dataflow's ids closed).
  ASSERT_TRUE(SendAccepted(ctl, {CounterDataflow("u1", "u2", 4, /*max=*/5),
                                 CounterDataflow("u3", "u4", 7), CounterDataflow("u5", "u6", 9),
                                 samples::InitializationComplete(), samples::Drop("u6")}));
  ASSERT_TRUE(
      FrontiersArrive(ctl, {{"u1", "closed"}, {"u2", "5"}, {"u5", "closed"}, {"u6", "closed"}}));

  TestController obs(ep);
  ASSERT_TRUE(SayHello(obs, samples::ObserverHello("obs")));
  const auto at_connect = FrontiersUntilPeek(obs, "m1");
  EXPECT_EQ(WriteText(at_connect, "u1"), "closed") << "a closed collection is kept and shown";
  EXPECT_EQ(WriteText(at_connect, "u2"), "5");
  EXPECT_EQ(WriteText(at_connect, "u3"), "8");
  EXPECT_EQ(WriteText(at_connect, "u4"), "8");
  EXPECT_EQ(WriteText(at_connect, "u5"), "absent") << "dropped: forgotten";
  EXPECT_EQ(WriteText(at_connect, "u6"), "absent") << "dropped: forgotten";
  EXPECT_EQ(at_connect.size(), 4u);

  // New reports are forwarded as they come: a new dataflow, and a drop (shown closed).
  ASSERT_TRUE(SendAccepted(ctl, {CounterDataflow("u7", "u8", 11), samples::Drop("u4")}));
  EXPECT_TRUE(
      FrontiersArrive(obs, {{"u7", "12"}, {"u8", "12"}, {"u3", "closed"}, {"u4", "closed"}}));

  // A second observer: what is live, none of what was dropped.
  TestController obs2(ep);
  ASSERT_TRUE(SayHello(obs2, samples::ObserverHello("obs2")));
  const auto second = FrontiersUntilPeek(obs2, "m2");
  EXPECT_EQ(WriteText(second, "u1"), "closed");
  EXPECT_EQ(WriteText(second, "u2"), "5");
  EXPECT_EQ(WriteText(second, "u7"), "12");
  EXPECT_EQ(WriteText(second, "u8"), "12");
  EXPECT_EQ(second.size(), 4u) << "not u3, u4 (dropped)";
  // Several observers at once: each gets every new report.
  ASSERT_TRUE(SendAccepted(ctl, {CounterDataflow("u9", "u10", 0)}));
  EXPECT_TRUE(FrontiersArrive(obs, {{"u9", "1"}, {"u10", "1"}}));
  EXPECT_TRUE(FrontiersArrive(obs2, {{"u9", "1"}, {"u10", "1"}}));
  EXPECT_TRUE(FrontiersArrive(ctl, {{"u10", "1"}})) << "and so does the controller";
}

TEST(Observers, LiveIndexesAreThoseOfTheLastCompleteEpoch) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const std::string ep = sup.controller_endpoint();
  using Ids = std::vector<std::string>;
  TestController a(ep);
  EXPECT_EQ(LiveIndexes(SayHello(a, samples::Hello("a"))), Ids{})
      << "a new replica maintains nothing";
  ASSERT_TRUE(
      SendAccepted(a, {CounterDataflow("u1", "u2", 0), CounterDataflow("u3", "u4", 0),
                       CounterDataflow("u9", "u10", 0), samples::InitializationComplete()}));

  // A controller that reconnects learns what the replica maintains (in GlobalId order).
  TestController b(ep);
  EXPECT_EQ(LiveIndexes(SayHello(b, samples::Hello("b"))), (Ids{"u2", "u4", "u10"}));
  TestController obs(ep);
  EXPECT_EQ(LiveIndexes(SayHello(obs, samples::ObserverHello("o1"))), (Ids{"u2", "u4", "u10"}));

  // b replays only part of the history: until its InitializationComplete the runtimes still
  // maintain everything, and observers' peeks are checked against that.
  ASSERT_TRUE(SendAccepted(b, {CounterDataflow("u1", "u2", 0)}));
  TestController obs2(ep);
  EXPECT_EQ(LiveIndexes(SayHello(obs2, samples::ObserverHello("o2"))), (Ids{"u2", "u4", "u10"}))
      << "a partial replay does not shrink it";
  auto during = PeekAnswer(obs, "during", "u4");
  ASSERT_TRUE(during);
  EXPECT_TRUE(during->has_peek_response())
      << "u4 is still maintained: " << during->command_error().why();
  auto mine = PeekAnswer(b, "mine", "u4");
  ASSERT_TRUE(mine && mine->has_command_error()) << "b's own epoch does not know u4";

  ASSERT_TRUE(SendAccepted(b, {samples::InitializationComplete()}));
  TestController obs3(ep);
  EXPECT_EQ(LiveIndexes(SayHello(obs3, samples::ObserverHello("o3"))), Ids{"u2"});
  auto after = PeekAnswer(obs, "after", "u4");
  ASSERT_TRUE(after && after->has_command_error());
  EXPECT_NE(after->command_error().why().find("unknown index u4"), std::string::npos)
      << after->command_error().why();

  // After it, every accepted command keeps it current.
  ASSERT_TRUE(SendAccepted(b, {CounterDataflow("u5", "u6", 0), samples::Drop("u2")}));
  TestController c(ep);
  EXPECT_EQ(LiveIndexes(SayHello(c, samples::Hello("c"))), Ids{"u6"});
  TestController obs4(ep);
  EXPECT_EQ(LiveIndexes(SayHello(obs4, samples::ObserverHello("o4"))), Ids{"u6"});
}

TEST(Observers, GoodbyeForgetsTheSessionAtOnceAndItsDisconnectIsNoWarning) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const int port = sup.http_port();
  const std::string observers = "tandem_observer_sessions";
  {
    TestController ctl(sup.controller_endpoint()), obs(sup.controller_endpoint());
    ASSERT_TRUE(ctl.Hello("ctl-bye"));
    ASSERT_TRUE(SayHello(obs, samples::ObserverHello("obs-bye")));
    EXPECT_EQ(MetricValue(HttpGet(port, "/metrics").body, observers), 1);
    ctl.Send(samples::Goodbye());
    obs.Send(samples::Goodbye());
    // Forgotten at once: their next commands are refused as before any Hello.
    for (TestController* s : {&ctl, &obs}) {
      s->Send(samples::PeekAt("p", "u1"));
      auto r = s->ReceiveUntil([](const Response& r) { return r.has_command_error(); });
      ASSERT_TRUE(r);
      EXPECT_NE(r->command_error().why().find("send Hello first"), std::string::npos)
          << r->command_error().why();
    }
    EXPECT_EQ(MetricValue(HttpGet(port, "/metrics").body, observers), 0);
  }  // both connections close
  EXPECT_TRUE(Eventually(
      [&] {
        return MetricValue(HttpGet(port, "/metrics").body,
                           "tandem_controller_events_total{event=\"disconnected\"}") >= 2;
      },
      5s));
  const std::string log = sup.Log();
  EXPECT_NE(log.find("the controller (nonce ctl-bye) said goodbye"), std::string::npos) << log;
  EXPECT_NE(log.find("an observer (nonce obs-bye, session 1) said goodbye"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("disconnected (gone or silent"), std::string::npos) << log;
  EXPECT_EQ(log.find(" warning supervisor["), std::string::npos) << log;
  EXPECT_EQ(MetricValue(HttpGet(port, "/metrics").body,
                        "tandem_controller_events_total{event=\"goodbye\"}"),
            2);
}

TEST(Observers, KilledObserverIsNoticedAndItsSessionFreed) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TestController obs(sup.controller_endpoint());
    _exit(SayHello(obs, samples::ObserverHello("doomed-obs")) ? (pause(), 0) : 1);
  }
  const int port = sup.http_port();
  ASSERT_TRUE(Eventually(
      [&] { return MetricValue(HttpGet(port, "/metrics").body, "tandem_observer_sessions") == 1; },
      10s));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(Eventually(
      [&] { return MetricValue(HttpGet(port, "/metrics").body, "tandem_observer_sessions") == 0; },
      5s))
      << "noticed within the heartbeat timeout";
  EXPECT_NE(sup.Log().find("an observer (nonce doomed-obs, session 1) disconnected"),
            std::string::npos)
      << sup.Log();
  EXPECT_EQ(sup.Log().find(" warning supervisor["), std::string::npos) << sup.Log();
}

// ---- Malformed input -----------------------------------------------------------------------

TEST(Malformed, EveryKindIsAnsweredCountedAndTheSupervisorKeepsServing) {
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
  // Oversized (over ipc::kMaxMessageBytes, under the transport's limit of twice that): answered
  // with a CommandError naming the limit, counted, and the session kept (issue 12; it used to be
  // dropped by the transport, and the peer learnt nothing).
  ctl.SendRaw(std::string(ipc::kMaxMessageBytes + 1024, 'x'));
  r = ctl.ReceiveUntil([](const Response& r) { return r.has_command_error(); });
  ASSERT_TRUE(r && r->has_command_error());
  EXPECT_NE(r->command_error().why().find(std::to_string(ipc::kMaxMessageBytes)), std::string::npos)
      << r->command_error().why();
  const std::string metrics = HttpGet(sup.http_port(), "/metrics").body;
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"unparsable\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"empty\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"no_kind\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"frames\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_malformed_messages_total{reason=\"oversized\"}"), 1);
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
  EXPECT_EQ(MetricValue(m, "tandem_runtime_stalled{role=\"maintenance\"}"), 0);
  EXPECT_EQ(MetricValue(m, "tandem_runtime_stalled{role=\"interactive\"}"), 0);
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

// Issue 11 defect 3: a --runtime-dir that does not exist used to exit 69; it is made, with its
// parents, 0700, as daemons do with their run directories.
TEST(Supervisor, AMissingRuntimeDirIsCreatedWithItsParents0700) {
  SupervisorProcess sup({.runtime_subdir = "run/tandem"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  struct stat st {};
  ASSERT_EQ(stat(sup.runtime_parent().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_NE(sup.Log().find("created --runtime-dir"), std::string::npos);
  kill(sup.pid(), SIGTERM);
  EXPECT_EQ(sup.WaitExit(10s), 0) << sup.Log();
  EXPECT_TRUE(sup.RuntimeDirEmpty());
}

// ---- One-shot dataflows in /metrics (issue 13) ----------------------------------------------

// A one-shot read of `index` (on `on`, one int64 column keyed by it) at `as_of`, exporting
// `export_id` (transient).
Command OneShotRead(const std::string& index, const std::string& on, std::uint64_t as_of,
                    const std::string& export_id) {
  Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name("one-shot");
  d->set_class_(ipc::pb::ONE_SHOT_READ);
  d->mutable_as_of()->add_elements(as_of);
  d->mutable_until()->add_elements(as_of + 1);
  auto* imp = d->add_index_imports();
  imp->set_id(index);
  imp->set_on(on);
  auto* col = imp->mutable_schema()->add_columns();
  col->set_name("n");
  col->set_type(ipc::pb::INT64);
  imp->add_key(0);
  auto* x = d->add_index_exports();
  x->set_id(export_id);
  x->set_on(on);
  x->add_key(0);
  return c;
}

// Built, running and build-to-answer latency of one-shot dataflows, from what the supervisor
// forwards: the scripted interactive runtime reports each export computed (write [as_of + 1]) as
// soon as it gets the create, like tandem-worker once the result is computed.
TEST(OneShotMetrics, CountBuiltAndRunningAndTimeTheBuildToTheAnswer) {
  SupervisorProcess sup({.fake_worker_script = "interactive:frontiers"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  const int port = sup.http_port();
  const std::string before = HttpGet(port, "/metrics").body;
  EXPECT_EQ(MetricValue(before, "tandem_one_shot_dataflows_built_total"), 0) << before;
  EXPECT_EQ(MetricValue(before, "tandem_one_shot_dataflows_running"), 0) << before;
  ASSERT_TRUE(SendAccepted(ctl, {CounterDataflow("u1", "u2", 0)}));
  ctl.Send(OneShotRead("u2", "u1", 0, "t1"));
  const auto first = ctl.ReceiveUntil([](const Response& r) {
    return r.has_command_error() || (r.has_frontiers() && r.frontiers().id() == "t1");
  });
  ASSERT_TRUE(first) << sup.Log();
  ASSERT_FALSE(first->has_command_error()) << first->command_error().why();
  // The scripted runtime's echo of that create follows its report: take it, so that each
  // SendAccepted below counts the echo of its own command.
  ASSERT_TRUE(ctl.ReceiveUntil(
      [](const Response& r) { return IsEcho(r, "interactive", "CreateDataflow"); }));
  // The supervisor counts a command when it forwards it, before any runtime sees it.
  auto metrics_reach = [&](std::vector<std::pair<std::string, double>> expected) {
    std::string m;
    const bool reached = Eventually(
        [&] {
          m = HttpGet(port, "/metrics").body;
          for (const auto& [sample, value] : expected) {
            if (MetricValue(m, sample) != value) return false;
          }
          return true;
        },
        5s);
    EXPECT_TRUE(reached) << m;
    return reached;
  };
  ASSERT_TRUE(SendAccepted(ctl, {OneShotRead("u2", "u1", 0, "t2")}));
  metrics_reach({{"tandem_one_shot_dataflows_built_total", 2},
                 {"tandem_one_shot_dataflows_running", 2},
                 {"tandem_one_shot_build_to_answer_seconds_count", 2}});
  ASSERT_TRUE(SendAccepted(ctl, {samples::Drop("t1")}));
  metrics_reach(
      {{"tandem_one_shot_dataflows_running", 1}, {"tandem_one_shot_dataflows_built_total", 2}});
  ASSERT_TRUE(SendAccepted(ctl, {samples::Drop("t2")}));
  metrics_reach({{"tandem_one_shot_dataflows_running", 0},
                 {"tandem_one_shot_build_to_answer_seconds_count", 2}});
  EXPECT_GT(
      MetricValue(HttpGet(port, "/metrics").body, "tandem_one_shot_build_to_answer_seconds_sum"),
      0);
}

// ---- Writes (DESIGN §9) ----------------------------------------------------------------------

// Sends the table dataflow (table u40, its index u41) on `ctl` and waits until the runtime reports
// the table's frontiers: by then the supervisor knows the table. (A writer session is another
// connection: its write can reach the supervisor before the controller's CreateDataflow does,
// and is refused as naming an unknown table — a flaky failure in CI.)
void CreateTableAndAwaitIt(TestController& ctl) {
  ctl.Send(samples::TableDataflow());
  ctl.Send(samples::InitializationComplete());
  ASSERT_TRUE(ctl.ReceiveUntil(
      [](const Response& r) {
        if (r.has_command_error()) ADD_FAILURE() << r.command_error().why();
        return r.has_command_error() || (r.has_frontiers() && r.frontiers().id() == "u40");
      },
      10s));
}

// A writer session: the real client, as tandem-ctl write uses it.
std::unique_ptr<ipc::ControllerClient> WriterSession(const SupervisorProcess& sup,
                                                     const std::string& nonce) {
  auto writer = std::make_unique<ipc::ControllerClient>(sup.controller_endpoint(),
                                                        ipc::ControllerClient::Options{});
  const Status s = writer->Hello(nonce, /*observer=*/true, /*writer=*/true);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(writer->writer());
  return writer;
}

TEST(Writes, AWriterSessionsWriteReachesMaintenanceOnlyAndItsAnswerComesBackToIt) {
  TempDir tmp("writes");
  const std::string data_dir = tmp.File("state/data");  // made by the supervisor
  SupervisorProcess sup({.extra_args = {"--data-dir", data_dir}});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  EXPECT_TRUE(std::filesystem::exists(data_dir + "/fake-maintenance"))
      << "the maintenance runtime gets --data-dir";
  EXPECT_FALSE(std::filesystem::exists(data_dir + "/fake-interactive"))
      << "the interactive runtime does not";
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  ASSERT_TRUE(SendAccepted(ctl, {samples::TableDataflow(), samples::InitializationComplete()}));

  auto writer = WriterSession(sup, "writer-1");
  const Command write = samples::WriteU40("w-1");
  auto outcome = writer->Write(write.write_table());
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(outcome->response) << outcome->refused->why();
  EXPECT_EQ(outcome->response->uuid(), "w-1") << "the uuid as the session sent it";
  EXPECT_EQ(outcome->response->time(), 1u) << "answered by the maintenance runtime";
  // An upsert table's write too, from the same session.
  outcome = writer->Write(samples::WriteU42("w-2").write_table());
  ASSERT_TRUE(outcome.ok() && outcome->response) << outcome.status().ToString();
  EXPECT_EQ(outcome->response->uuid(), "w-2");

  // Only maintenance saw the writes (every session gets the runtimes' echoes), and the answers
  // went to the writer alone.
  int maintenance_echoes = 0;
  EXPECT_FALSE(ctl.ReceiveUntil(
      [&](const Response& r) {
        if (IsEcho(r, "maintenance", "WriteTable")) ++maintenance_echoes;
        return IsEcho(r, "interactive", "WriteTable") || r.has_write_response();
      },
      500ms))
      << "the interactive runtime never gets a write; the controller never gets its answer";
  EXPECT_EQ(maintenance_echoes, 2);
  EXPECT_FALSE(
      writer->ReceiveUntil([](const Response& r) { return r.has_write_response(); }, 300ms))
      << "exactly one answer per write";

  // A write the validator refuses is answered CommandError naming it, and reaches no runtime.
  const Command bad = samples::WriteTable("w-3", "u42", {samples::RowUpdate(samples::TableRow(1))});
  outcome = writer->Write(bad.write_table());
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(outcome->refused);
  EXPECT_EQ(outcome->refused->what(), ipc::DescribeWrite(bad.write_table()));
  EXPECT_NE(outcome->refused->why().find("u42 has an upsert key [0]"), std::string::npos)
      << outcome->refused->why();

  const std::string m = HttpGet(sup.http_port(), "/metrics").body;
  EXPECT_EQ(MetricValue(m, "tandem_writes_total{result=\"ok\"}"), 2);
  EXPECT_EQ(MetricValue(m, "tandem_writes_total{result=\"refused\"}"), 1);
  EXPECT_EQ(MetricValue(m, "tandem_writes_total{result=\"error\"}"), 0);
  EXPECT_EQ(MetricValue(m, "tandem_write_seconds_count"), 2);
  EXPECT_EQ(MetricValue(m, "tandem_writes_in_flight"), 0);
}

TEST(Writes, APlainObserversWriteIsRefusedAndTheControllersAnswerComesBackToIt) {
  TempDir tmp("writes");
  SupervisorProcess sup({.extra_args = {"--data-dir", tmp.path()}});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint()), obs(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  ASSERT_TRUE(SendAccepted(ctl, {samples::TableDataflow(), samples::InitializationComplete()}));
  ASSERT_TRUE(SayHello(obs, samples::ObserverHello("reader")));
  const Command write = samples::WriteU40("w-obs");
  obs.Send(write);
  auto refused = obs.ReceiveUntil([](const Response& r) { return r.has_command_error(); });
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->command_error().what(), ipc::DescribeWrite(write.write_table()));
  EXPECT_NE(refused->command_error().why().find(
                "observer sessions are read-only: they may send only Peek, CancelPeek, "
                "Subscribe, CancelSubscribe and Goodbye; say Hello with observer: true and "
                "writer: true"),
            std::string::npos)
      << refused->command_error().why();
  // The controller writes too; a failed write is answered with its error.
  ctl.Send(samples::WriteU40("c-1"));
  ctl.Send(samples::WriteU40("fail-1"));
  std::map<std::string, Response> answers;
  ASSERT_TRUE(ctl.ReceiveUntil([&](const Response& r) {
    if (r.has_write_response()) answers[r.write_response().uuid()] = r;
    return answers.size() == 2;
  }));
  EXPECT_EQ(answers["c-1"].write_response().time(), 1u);
  EXPECT_EQ(answers["fail-1"].write_response().error(), "maintenance failed it");
  EXPECT_FALSE(obs.ReceiveUntil([](const Response& r) { return r.has_write_response(); }, 300ms));
  const std::string m = HttpGet(sup.http_port(), "/metrics").body;
  EXPECT_EQ(MetricValue(m, "tandem_writes_total{result=\"ok\"}"), 1);
  EXPECT_EQ(MetricValue(m, "tandem_writes_total{result=\"error\"}"), 1);
  EXPECT_EQ(MetricValue(m, "tandem_writes_total{result=\"refused\"}"), 1);
  EXPECT_EQ(MetricValue(m, "tandem_refused_commands_total{reason=\"read_only\"}"), 1);
}

TEST(Writes, SoloModeSendsWritesAndTheDataDirToTheSoloRuntime) {
  TempDir tmp("writes");
  SupervisorProcess sup({.extra_args = {"--data-dir", tmp.path()}, .two_runtime = false});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  EXPECT_TRUE(std::filesystem::exists(tmp.File("fake-solo")));
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  ctl.Send(samples::TableDataflow());
  ASSERT_TRUE(ctl.ReceiveUntil([](const Response& r) {
    if (r.has_command_error()) ADD_FAILURE() << r.command_error().why();
    return IsEcho(r, "solo", "CreateDataflow");
  }));
  auto writer = WriterSession(sup, "solo-writer");
  auto outcome = writer->Write(samples::WriteU42("w-solo").write_table());
  ASSERT_TRUE(outcome.ok() && outcome->response) << outcome.status().ToString();
  EXPECT_EQ(outcome->response->time(), 3u) << "answered by the solo runtime";
}

TEST(Writes, WithoutADataDirATableIsRefused) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  ctl.Send(samples::TableDataflow());
  auto refused = ctl.ReceiveUntil([](const Response& r) { return r.has_command_error(); });
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->command_error().why().find(
                "a table needs the replica's --data-dir (none was given)"),
            std::string::npos)
      << refused->command_error().why();
}

TEST(Writes, WritesBeyondMaxWritesInFlightAreRefusedUntilAnswersCome) {
  TempDir tmp("writes");
  SupervisorProcess sup({.extra_args = {"--data-dir", tmp.path(), "--max-writes-in-flight", "2"},
                         .fake_worker_script = "maintenance:hold-writes"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  ASSERT_TRUE(SendAccepted(ctl, {samples::TableDataflow(), samples::InitializationComplete()}));
  auto writer = WriterSession(sup, "flood");
  for (const char* uuid : {"h-1", "h-2"}) writer->Send(samples::WriteU40(uuid));
  const Command third = samples::WriteU40("h-3");
  auto outcome = writer->Write(third.write_table());
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(outcome->refused) << "two writes wait for their answers";
  EXPECT_EQ(outcome->refused->what(), ipc::DescribeWrite(third.write_table()));
  EXPECT_NE(outcome->refused->why().find("the replica has 2 writes waiting for their answers, the "
                                         "limit (--max-writes-in-flight 2)"),
            std::string::npos)
      << outcome->refused->why();
  const std::string m = HttpGet(sup.http_port(), "/metrics").body;
  EXPECT_EQ(MetricValue(m, "tandem_writes_in_flight"), 2);
  EXPECT_EQ(MetricValue(m, "tandem_refused_commands_total{reason=\"too_many_writes\"}"), 1);
}

TEST(Writes, WithTheRealRuntimeAnAcknowledgedWriteIsReadAtItsTime) {
  TempDir tmp("writes");
  SupervisorProcess sup(
      {.extra_args = {"--data-dir", tmp.File("data")}, .worker_binary = TANDEM_WORKER_BIN});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  CreateTableAndAwaitIt(ctl);
  auto writer = WriterSession(sup, "real-writer");
  const Command write = samples::WriteTable(
      "real-1", "u40",
      {samples::RowUpdate(samples::TableRow(1)), samples::RowUpdate(samples::TableRow(2), 2)});
  auto outcome = writer->Write(write.write_table());
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(outcome->response) << outcome->refused->why();
  ASSERT_TRUE(outcome->response->has_time()) << outcome->response->error();
  const std::uint64_t time = outcome->response->time();
  // Read your writes: a peek at the acknowledged time sees the write (k 1 once, k 2 twice).
  writer->Send(samples::PeekAt("read-1", "u41", time));
  auto answer = writer->ReceiveUntil(
      [](const Response& r) { return r.has_peek_response() || r.has_command_error(); }, 10s);
  ASSERT_TRUE(answer && answer->has_peek_response()) << (answer ? ipc::ToJson(*answer) : "none");
  ASSERT_TRUE(answer->peek_response().has_rows()) << ipc::ToJson(*answer);
  std::map<std::int64_t, std::int64_t> counts;
  for (const auto& row : answer->peek_response().rows().rows()) {
    counts[row.row().datums(0).int64()] += row.count();
  }
  EXPECT_EQ(counts, (std::map<std::int64_t, std::int64_t>{{1, 1}, {2, 2}}));
  EXPECT_TRUE(std::filesystem::exists(tmp.File("data/tables/u40.log"))) << "the write is logged";
}

// The supervisor puts a write's uuid into its namespace ("~w<n>:") before forwarding it, so the
// runtime's command is a little larger than the session's message: a write at the message limit
// must still reach the runtime (it used to fail the runtime's decode check: the replica went down).
TEST(Writes, AWriteAtTheMessageLimitIsAnsweredAndTheReplicaKeepsServing) {
  TempDir tmp("writes");
  SupervisorProcess sup(
      {.extra_args = {"--data-dir", tmp.File("data")}, .worker_binary = TANDEM_WORKER_BIN});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello("ctl"));
  CreateTableAndAwaitIt(ctl);
  auto writer = WriterSession(sup, "big-writer");
  // One row whose string makes the command exactly the message limit.
  Command write = samples::WriteTable("big-1", "u40", {samples::RowUpdate(samples::TableRow(1))});
  const std::size_t base = ipc::Encode(write).size();
  auto* v = write.mutable_write_table()
                ->mutable_updates(0)
                ->mutable_update()
                ->mutable_row()
                ->mutable_datums(1);
  v->set_string(std::string(ipc::kMaxMessageBytes - base - 8, 'x'));
  while (ipc::Encode(write).size() < ipc::kMaxMessageBytes) v->mutable_string()->push_back('x');
  while (ipc::Encode(write).size() > ipc::kMaxMessageBytes) v->mutable_string()->pop_back();
  ASSERT_EQ(ipc::Encode(write).size(), ipc::kMaxMessageBytes);
  writer->Send(write);
  auto answer = writer->ReceiveUntil(
      [](const Response& r) { return r.has_write_response() || r.has_command_error(); }, 30s);
  ASSERT_TRUE(answer) << sup.Log();
  ASSERT_TRUE(answer->has_write_response()) << ipc::ToJson(*answer).substr(0, 400);
  EXPECT_TRUE(answer->write_response().has_time()) << answer->write_response().error();
  // Still serving: a small write after it is answered too.
  auto small = writer->Write(
      samples::WriteTable("small-1", "u40", {samples::RowUpdate(samples::TableRow(2))})
          .write_table());
  ASSERT_TRUE(small.ok()) << small.status().ToString() << sup.Log();
  ASSERT_TRUE(small->response && small->response->has_time());
  EXPECT_FALSE(sup.Exited());
}

TEST(Configuration, ADataDirThatIsAFileExits78) {
  TempDir tmp("writes");
  tmp.Write("not-a-dir", "x");
  SupervisorProcess sup({.extra_args = {"--data-dir", tmp.File("not-a-dir")}});
  EXPECT_EQ(sup.WaitExit(10s), 78);
  EXPECT_NE(sup.Log().find("exists and is not a directory"), std::string::npos) << sup.Log();
  EXPECT_FALSE(sup.SegmentExists());
}

}  // namespace
}  // namespace tandem::testing
