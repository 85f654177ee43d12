// Supervisor configuration: booleans, parameter resolution, flags, sizes.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "supervisor/config.h"
#include "supervisor/dyncfg.h"
#include "supervisor/metrics.h"
#include "temp_dir.h"

namespace tandem::supervisor {
namespace {

TEST(Dyncfg, EveryBooleanSpellingCaseInsensitively) {
  for (const char* yes : {"on", "ON", "true", "True", "yes", "YES", "1"}) {
    auto b = ParseBool(yes);
    ASSERT_TRUE(b.ok()) << yes;
    EXPECT_TRUE(*b) << yes;
  }
  for (const char* no : {"off", "Off", "false", "FALSE", "no", "No", "0"}) {
    auto b = ParseBool(no);
    ASSERT_TRUE(b.ok()) << no;
    EXPECT_FALSE(*b) << no;
  }
  for (const char* bad : {"", "2", "y", "enabled", "onn"}) EXPECT_FALSE(ParseBool(bad).ok()) << bad;
}

TEST(Dyncfg, ReplicaOverrideBeatsEnvironmentValueBeatsDefault) {
  ConfigSet c;
  EXPECT_EQ(c.Get(kEnableInteractiveRuntime), "true");
  EXPECT_EQ(c.SourceOf(kEnableInteractiveRuntime), "default");
  ASSERT_TRUE(c.Set(ConfigSet::Scope::kEnvironment, kEnableInteractiveRuntime, "off").ok());
  EXPECT_FALSE(c.GetBool(kEnableInteractiveRuntime)) << "not the compile-time default";
  EXPECT_EQ(c.SourceOf(kEnableInteractiveRuntime), "environment");
  ASSERT_TRUE(c.Set(ConfigSet::Scope::kReplica, kEnableInteractiveRuntime, "Yes").ok());
  EXPECT_TRUE(c.GetBool(kEnableInteractiveRuntime));
  EXPECT_EQ(c.SourceOf(kEnableInteractiveRuntime), "replica");
  ASSERT_TRUE(c.Set(ConfigSet::Scope::kEnvironment, kEnableInteractiveRuntime, "0").ok());
  EXPECT_TRUE(c.GetBool(kEnableInteractiveRuntime)) << "the replica's value still wins";
}

TEST(Dyncfg, UnknownNamesAndIllTypedValuesAreRefusedAndChangeNothing) {
  ConfigSet c;
  EXPECT_FALSE(c.Set(ConfigSet::Scope::kReplica, "no_such_param", "1").ok());
  EXPECT_FALSE(c.Set(ConfigSet::Scope::kReplica, kControllerHeartbeatTimeoutMs, "soon").ok());
  EXPECT_FALSE(c.Set(ConfigSet::Scope::kReplica, kLogLevel, "loud").ok());
  EXPECT_FALSE(c.SetAssignment(ConfigSet::Scope::kReplica, "=x").ok());
  EXPECT_EQ(c.Get(kControllerHeartbeatTimeoutMs), "3000");
  EXPECT_EQ(c.SourceOf(kLogLevel), "default");
}

TEST(Dyncfg, OnlyTheLogLevelIsLive) {
  EXPECT_FALSE(FindParam(kEnableInteractiveRuntime)->live);
  EXPECT_TRUE(FindParam(kLogLevel)->live);
}

TEST(Dyncfg, MaxResultSizeIsLiveDefaultsTo8MiBAndStaysBelowTheMessageLimit) {
  ConfigSet c;
  EXPECT_TRUE(FindParam(kMaxResultSize)->live);
  EXPECT_EQ(c.GetInt(kMaxResultSize), 8 << 20);
  EXPECT_FALSE(c.Set(ConfigSet::Scope::kReplica, kMaxResultSize, "0").ok());
  EXPECT_FALSE(c.Set(ConfigSet::Scope::kReplica, kMaxResultSize, "16777216").ok())
      << "a result as large as a message leaves no room for the rest of it";
  EXPECT_TRUE(c.Set(ConfigSet::Scope::kReplica, kMaxResultSize, "15728640").ok());
  EXPECT_TRUE(c.Set(ConfigSet::Scope::kReplica, kMaxResultSize, "1").ok());
  EXPECT_EQ(c.Get(kMaxResultSize), "1");
}

FlagsOutcome Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "tandem-supervisor");
  return ParseSupervisorFlags(static_cast<int>(args.size()), args.data());
}

TEST(SupervisorFlags, DefaultsFollowDesign) {
  auto out = Parse({});
  ASSERT_TRUE(out.config) << out.output;
  EXPECT_EQ(out.config->controller_listen_addr, "tcp://127.0.0.1:2101");
  EXPECT_EQ(out.config->internal_http_listen_addr, "127.0.0.1:6878");
  EXPECT_TRUE(out.config->two_runtime());
  EXPECT_EQ(out.config->effective_interactive_workers(), out.config->workers);
  EXPECT_EQ(out.config->shm_name, "tandem.r1");
}

TEST(SupervisorFlags, UnknownFlagAndBadValuesAreUsageErrors) {
  EXPECT_EQ(Parse({"--frobnicate"}).exit_code, kExitUsage);
  EXPECT_EQ(Parse({"--workers", "0"}).exit_code, kExitUsage);
  EXPECT_EQ(Parse({"--interactive-runtime", "perhaps"}).exit_code, kExitUsage);
  EXPECT_EQ(Parse({"--shm-size", "12 parsecs"}).exit_code, kExitUsage);
  EXPECT_EQ(Parse({"--log-format", "xml"}).exit_code, kExitUsage);
  EXPECT_EQ(Parse({"--param", "nope=1"}).exit_code, kExitUsage);
}

TEST(SupervisorFlags, RepeatedParamsAllCountAndARepeatedFlagTakesItsLastValue) {
  auto out = Parse({"--param", "log_level=debug", "--param", "controller_heartbeat_timeout_ms=9",
                    "--workers", "2", "--workers", "3"});
  ASSERT_TRUE(out.config) << out.output;
  EXPECT_EQ(out.config->params.Get(kLogLevel), "debug");
  EXPECT_EQ(out.config->params.GetInt(kControllerHeartbeatTimeoutMs), 9);
  EXPECT_EQ(out.config->workers, 3u);
}

TEST(SupervisorFlags, HeartbeatParameterOutOfRangeIsAUsageErrorNamingItAndTheValue) {
  // ZeroMQ refuses these when the endpoint is set up, which used to end in exit 69 ("could not
  // bind"); they are bad usage and are refused with the flags, before anything starts.
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"controller_heartbeat_interval_ms=-5", "'-5' is out of range (1 to 2147483647)"},
      {"controller_heartbeat_interval_ms=0", "'0' is out of range"},
      {"controller_heartbeat_interval_ms=2147483648", "'2147483648' is out of range"},
      {"controller_heartbeat_timeout_ms=-1", "'-1' is out of range (1 to 6553599)"},
      {"controller_heartbeat_timeout_ms=6553600", "'6553600' is out of range"},
  };
  for (const auto& [assignment, why] : bad) {
    for (const char* flag : {"--param", "--replica-param"}) {
      SCOPED_TRACE(std::string(flag) + " " + assignment);
      const auto out = Parse({flag, assignment});
      EXPECT_FALSE(out.config);
      EXPECT_EQ(out.exit_code, kExitUsage);
      const std::string name(assignment, std::string_view(assignment).find('='));
      EXPECT_NE(out.output.find("parameter " + name + ": " + why), std::string::npos) << out.output;
    }
  }
  const auto edges = Parse({"--param", "controller_heartbeat_interval_ms=1", "--param",
                            "controller_heartbeat_timeout_ms=6553599"});
  ASSERT_TRUE(edges.config) << edges.output;
  EXPECT_EQ(edges.config->params.GetInt(kControllerHeartbeatTimeoutMs), 6553599);
  // The same check guards UpdateConfiguration (it probes with ConfigSet::Set).
  ConfigSet c;
  EXPECT_FALSE(c.Set(ConfigSet::Scope::kReplica, kControllerHeartbeatIntervalMs, "-1").ok());
  EXPECT_EQ(c.SourceOf(kControllerHeartbeatIntervalMs), "default");
}

TEST(SupervisorFlags, HelpDocumentsEveryFlagAndTheExitCodes) {
  auto out = Parse({"--help"});
  EXPECT_FALSE(out.config);
  EXPECT_EQ(out.exit_code, kExitOk);
  for (const char* s : {"--replica-id",
                        "--workers",
                        "--interactive-workers",
                        "--interactive-runtime",
                        "--controller-listen-addr",
                        "--internal-http-listen-addr",
                        "--shm-size",
                        "--runtime-dir",
                        "--grace-period",
                        "--log-level",
                        "--log-format",
                        "--param",
                        "--replica-param",
                        "--keep-segment-on-crash",
                        "64 ",
                        "69 ",
                        "70 ",
                        "78 ",
                        "128+N",
                        "enable_compute_interactive_runtime",
                        "controller_heartbeat_timeout_ms (default 3000, 1 to 6553599, at start)"}) {
    EXPECT_NE(out.output.find(s), std::string::npos) << s;
  }
}

TEST(SupervisorFlags, EnvironmentFallbacks) {
  setenv("TANDEM_WORKERS", "3", 1);
  setenv("TANDEM_INTERACTIVE_RUNTIME", "off", 1);
  setenv("TANDEM_PARAMS", "controller_heartbeat_timeout_ms=777,log_level=debug", 1);
  auto out = Parse({});
  unsetenv("TANDEM_WORKERS");
  unsetenv("TANDEM_INTERACTIVE_RUNTIME");
  unsetenv("TANDEM_PARAMS");
  ASSERT_TRUE(out.config) << out.output;
  EXPECT_EQ(out.config->workers, 3u);
  EXPECT_FALSE(out.config->two_runtime());
  EXPECT_EQ(out.config->params.GetInt(kControllerHeartbeatTimeoutMs), 777);
  EXPECT_EQ(out.config->params.SourceOf(kLogLevel), "environment");
}

TEST(SupervisorFlags, UnequalWorkerCountsAreAnImpossibleConfiguration) {
  auto out =
      Parse({"--workers", "4", "--interactive-workers", "2", "--worker-binary", "/bin/true"});
  ASSERT_TRUE(out.config);
  const Status s = CheckConfiguration(*out.config);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("maintenance has 4 and interactive has 2"), std::string::npos);
}

TEST(SupervisorFlags, DataDirIsMadeAbsoluteAndHasAnEnvironmentFallback) {
  EXPECT_TRUE(Parse({}).config->data_dir.empty()) << "no data directory unless given";
  const std::string cwd = std::filesystem::current_path().string();
  auto out = Parse({"--data-dir", "state/./tables/"});
  ASSERT_TRUE(out.config) << out.output;
  EXPECT_EQ(out.config->data_dir, cwd + "/state/tables");
  out = Parse({"--data-dir", "/var/lib/tandem/"});
  ASSERT_TRUE(out.config) << out.output;
  EXPECT_EQ(out.config->data_dir, "/var/lib/tandem");
  setenv("TANDEM_DATA_DIR", "/srv/tandem", 1);
  out = Parse({});
  auto flag_wins = Parse({"--data-dir", "/other"});
  unsetenv("TANDEM_DATA_DIR");
  ASSERT_TRUE(out.config) << out.output;
  EXPECT_EQ(out.config->data_dir, "/srv/tandem");
  EXPECT_EQ(flag_wins.config->data_dir, "/other");
  EXPECT_NE(DescribeConfiguration(*out.config).find("data_dir=/srv/tandem"), std::string::npos);
  EXPECT_NE(Parse({"--help"}).output.find("--data-dir"), std::string::npos);
}

TEST(SupervisorFlags, DataDirIsCreatedPrivateWithItsParents) {
  testing::TempDir tmp("data-dir");
  const std::string dir = tmp.File("a/b/data");
  ASSERT_TRUE(EnsureDataDir(dir).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(tmp.File("a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "its parents too";
  EXPECT_TRUE(EnsureDataDir(dir).ok()) << "an existing directory is used as it is";
}

TEST(SupervisorFlags, ADataDirThatIsNotADirectoryOrCannotBeMadeIsRefused) {
  testing::TempDir tmp("data-dir");
  tmp.Write("file", "not a directory");
  Status s = EnsureDataDir(tmp.File("file"));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("exists and is not a directory"), std::string::npos) << s.message();
  s = EnsureDataDir(tmp.File("file/below"));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("could not create --data-dir " + tmp.File("file/below")),
            std::string::npos)
      << s.message();
}

TEST(SupervisorFlags, MaxWritesInFlightDefaultsTo10000WithAnEnvironmentFallback) {
  EXPECT_EQ(Parse({}).config->guards.max_writes_in_flight, 10000u);
  EXPECT_EQ(Parse({"--max-writes-in-flight", "5"}).config->guards.max_writes_in_flight, 5u);
  EXPECT_EQ(Parse({"--max-writes-in-flight", "0"}).exit_code, kExitUsage);
  setenv("TANDEM_MAX_WRITES_IN_FLIGHT", "12", 1);
  auto out = Parse({});
  unsetenv("TANDEM_MAX_WRITES_IN_FLIGHT");
  ASSERT_TRUE(out.config) << out.output;
  EXPECT_EQ(out.config->guards.max_writes_in_flight, 12u);
  EXPECT_NE(DescribeConfiguration(*out.config).find("max_writes_in_flight=12"), std::string::npos);
}

TEST(ByteSize, Units) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("64M"), 64ull << 20);
  EXPECT_EQ(*ParseByteSize("1GiB"), 1ull << 30);
  EXPECT_EQ(*ParseByteSize("2kib"), 2048u);
  EXPECT_FALSE(ParseByteSize("MiB").ok());
  EXPECT_FALSE(ParseByteSize("5 furlongs").ok());
}

TEST(Metrics, RendersPrometheusTextWithHistograms) {
  Metrics m;
  m.Declare("tandem_x_total", Metrics::Type::kCounter, "x");
  m.Declare("tandem_lat_seconds", Metrics::Type::kHistogram, "lat", {0.1, 1});
  m.Inc("tandem_x_total", {{"kind", "a\"b"}}, 2);
  m.Observe("tandem_lat_seconds", {}, 0.05);
  m.Observe("tandem_lat_seconds", {}, 5);
  const std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE tandem_x_total counter"), std::string::npos);
  EXPECT_NE(text.find("tandem_x_total{kind=\"a\\\"b\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("tandem_lat_seconds_bucket{le=\"0.1\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("tandem_lat_seconds_bucket{le=\"+Inf\"} 2"), std::string::npos);
  EXPECT_NE(text.find("tandem_lat_seconds_count 2"), std::string::npos);
}

}  // namespace
}  // namespace tandem::supervisor
