// CURVE on the controller endpoint (issue 12), the parts that are configuration and tools rather
// than attacks (those are in tests/adversarial/curve_auth_test.cc): a non-loopback endpoint needs
// CURVE or --allow-insecure-endpoint (exit 78 otherwise), unusable key files refuse to start
// (exit 78, naming the file), SIGHUP without CURVE changes nothing, and tandem-ctl keygen + a
// CURVE replica + tandem-ctl peek, end to end through the real binaries.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "curve_fixture.h"
#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

std::string Describe(const BinaryRun& r) {
  return "exit " + std::to_string(r.exit) + "\nstdout: " + r.out + "\nstderr: " + r.err;
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

// ---- Which endpoints need CURVE ---------------------------------------------------------------

TEST(CurveConfig, NonLoopbackEndpointWithoutCurveExits78) {
  for (const std::string host : {"0.0.0.0", "*"}) {
    SupervisorProcess sup({.extra_args = {"--controller-listen-addr",
                                          "tcp://" + host + ":" + std::to_string(FreePort())}});
    EXPECT_EQ(sup.WaitExit(10s), 78) << sup.Log();
    EXPECT_NE(sup.Log().find("is not a loopback address"), std::string::npos) << sup.Log();
    EXPECT_NE(sup.Log().find("--allow-insecure-endpoint"), std::string::npos);
    EXPECT_FALSE(sup.SegmentExists()) << "refused before anything starts";
  }
}

TEST(CurveConfig, AllowInsecureEndpointAllowsANonLoopbackEndpoint) {
  SupervisorProcess sup(
      {.extra_args = {"--controller-listen-addr", "tcp://0.0.0.0:0", "--allow-insecure-endpoint"}});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());  // the port it bound, on loopback
  EXPECT_TRUE(ctl.Hello()) << sup.Log();
  EXPECT_NE(sup.Log().find("anyone who can reach it can control this replica"), std::string::npos)
      << "the risk is logged";
}

TEST(CurveConfig, CurveAllowsANonLoopbackEndpoint) {
  CurveFixture keys;
  const auto client = keys.Client("operator");
  auto args = keys.SupervisorArgs();
  args.insert(args.end(), {"--controller-listen-addr", "tcp://0.0.0.0:0"});
  SupervisorProcess sup({.extra_args = args});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint(), client);
  EXPECT_TRUE(ctl.Hello()) << sup.Log();
  EXPECT_NE(sup.Log().find("CURVE, server public key " + keys.server().public_z85),
            std::string::npos)
      << sup.Log();
}

// ---- Key files --------------------------------------------------------------------------------

TEST(CurveConfig, SecretKeyReadableByOthersRefusesToStart) {
  CurveFixture keys;
  ASSERT_EQ(chmod(keys.server_secret_file().c_str(), 0640), 0);
  SupervisorProcess sup({.extra_args = keys.SupervisorArgs()});
  EXPECT_EQ(sup.WaitExit(10s), 78) << sup.Log();
  EXPECT_NE(sup.Log().find("permissions 0640 for secret key file '" + keys.server_secret_file() +
                           "' are too open"),
            std::string::npos)
      << sup.Log();
}

TEST(CurveConfig, MalformedKeysRefuseToStartNamingTheFile) {
  {
    CurveFixture keys;
    keys.dir().Write("authorized/broken.pub", "not a key\n");
    SupervisorProcess sup({.extra_args = keys.SupervisorArgs()});
    EXPECT_EQ(sup.WaitExit(10s), 78) << sup.Log();
    EXPECT_NE(sup.Log().find("malformed key file '" + keys.authorized_dir() + "/broken.pub'"),
              std::string::npos)
        << sup.Log();
  }
  {
    CurveFixture keys;
    std::ofstream(keys.server_secret_file(), std::ios::trunc) << "# a comment only\n";
    SupervisorProcess sup({.extra_args = keys.SupervisorArgs()});
    EXPECT_EQ(sup.WaitExit(10s), 78) << sup.Log();
    EXPECT_NE(sup.Log().find("malformed secret key file '" + keys.server_secret_file() + "'"),
              std::string::npos)
        << sup.Log();
  }
  {
    CurveFixture keys;
    ASSERT_EQ(chmod(keys.authorized_dir().c_str(), 0770), 0);
    SupervisorProcess sup({.extra_args = keys.SupervisorArgs()});
    EXPECT_EQ(sup.WaitExit(10s), 78) << sup.Log();
    EXPECT_NE(sup.Log().find("are too open: group or others could authorize any key"),
              std::string::npos)
        << sup.Log();
  }
}

TEST(CurveConfig, TheTwoCurveFlagsGoTogether) {
  CurveFixture keys;
  SupervisorProcess sup({.extra_args = {"--curve-secret-key", keys.server_secret_file()}});
  EXPECT_EQ(sup.WaitExit(10s), 64) << sup.Log();
  EXPECT_NE(sup.Log().find("--curve-authorized-keys"), std::string::npos) << sup.Log();
}

TEST(CurveConfig, SighupWithoutCurveKeepsTheReplicaRunning) {
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  ASSERT_EQ(kill(sup.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually(
      [&] { return sup.Log().find("SIGHUP: nothing to reload") != std::string::npos; }, 5s))
      << sup.Log();
  EXPECT_FALSE(sup.Exited());
  EXPECT_EQ(HttpGet(sup.http_port(), "/readyz").status, 200);
}

// ---- tandem-ctl keygen, and tandem-ctl over CURVE ----------------------------------------------

TEST(CurveCtl, KeygenWritesAPairAndNeverOverwrites) {
  TempDir dir("keygen");
  const std::string key = dir.File("me.key");
  BinaryRun r = RunBinary(TANDEM_CTL_BIN, {"keygen", key});
  ASSERT_EQ(r.exit, 0) << Describe(r);
  EXPECT_EQ(ModeOf(key), 0600u);
  EXPECT_EQ(ModeOf(key + ".pub"), 0644u);
  auto pair = ipc::ReadCurveSecretKeyFile(key);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto pub = ipc::ReadCurvePublicKeyFile(key + ".pub");
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(*pub, pair->public_z85) << "the two files are one pair";
  EXPECT_NE(r.out.find(*pub), std::string::npos) << "the public key is printed";
  EXPECT_EQ(r.out.find(pair->secret_z85), std::string::npos) << "the secret key is not";

  const std::string before = tools::ReadFile(key);
  r = RunBinary(TANDEM_CTL_BIN, {"keygen", key});
  EXPECT_EQ(r.exit, 1) << Describe(r);
  EXPECT_NE(r.err.find("refusing to overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(tools::ReadFile(key), before);
  std::filesystem::remove(key);  // the public one is still there: still refused
  r = RunBinary(TANDEM_CTL_BIN, {"keygen", key});
  EXPECT_EQ(r.exit, 1) << Describe(r);
  EXPECT_FALSE(std::filesystem::exists(key));
}

TEST(CurveCtl, KeysAgainstAReplicaWithoutCurveSayWhy) {
  CurveFixture keys;
  keys.Client("operator");
  SupervisorProcess sup;
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  BinaryRun r = RunBinary(TANDEM_CTL_BIN,
                          {"--endpoint", sup.controller_endpoint(), "--state", keys.dir().File("s"),
                           "--curve-server-key", keys.server_public_file(), "--curve-client-key",
                           keys.client_secret_file("operator"), "frontiers"});
  EXPECT_EQ(r.exit, 69) << Describe(r);
  EXPECT_NE(r.err.find("it does not use CURVE, and this client does"), std::string::npos) << r.err;
  r = RunBinary(TANDEM_CTL_BIN,
                {"--endpoint", sup.controller_endpoint(), "--state", keys.dir().File("s"),
                 "--curve-client-key", keys.client_secret_file("operator"), "frontiers"});
  EXPECT_EQ(r.exit, 64) << Describe(r);
  EXPECT_NE(r.err.find("go together"), std::string::npos) << r.err;
}

TEST(CurveCtl, KeygenThenACurveReplicaThenPeek) {
  TempDir dir("curve-ctl");
  auto ctl = [&](const std::vector<std::string>& args) {
    return RunBinary(TANDEM_CTL_BIN, args, {.limit = 30s});
  };
  ASSERT_EQ(ctl({"keygen", dir.File("server.key")}).exit, 0);
  ASSERT_EQ(ctl({"keygen", dir.File("client.key")}).exit, 0);
  ASSERT_EQ(ctl({"keygen", dir.File("stranger.key")}).exit, 0);
  ASSERT_EQ(mkdir(dir.File("authorized").c_str(), 0700), 0);
  std::filesystem::copy_file(dir.File("client.key.pub"), dir.File("authorized/client.pub"));

  SupervisorProcess sup({.extra_args = {"--curve-secret-key", dir.File("server.key"),
                                        "--curve-authorized-keys", dir.File("authorized")},
                         .workers = 1,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "64MiB"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  const std::vector<std::string> base = {
      "--endpoint", sup.controller_endpoint(), "--state", dir.File("ctl.state"), "--timeout", "10"};
  auto with = [&](std::vector<std::string> keys, std::vector<std::string> args) {
    std::vector<std::string> all = base;
    all.insert(all.end(), keys.begin(), keys.end());
    all.insert(all.end(), args.begin(), args.end());
    return ctl(all);
  };
  const std::vector<std::string> good = {"--curve-server-key", dir.File("server.key.pub"),
                                         "--curve-client-key", dir.File("client.key")};
  BinaryRun r = with(good, {"create-source", "u1", "--generator", "key_value", "--keys", "100",
                            "--updates-per-tick", "5", "--tick-interval-us", "1000"});
  ASSERT_EQ(r.exit, 0) << Describe(r);
  r = with(good, {"create-index", "u2", "--on", "u1", "--key", "key"});
  ASSERT_EQ(r.exit, 0) << Describe(r) << sup.Log();
  ASSERT_TRUE(Eventually(
      [&] {
        return (r = with(good, {"peek", "u2", "--key", "7"})).exit == 0;
      },
      30s))
      << Describe(r) << sup.Log();
  EXPECT_NE(r.out.find("7"), std::string::npos) << r.out;

  // Without keys, with an unknown key, with an unprotected secret key: refused, and said why.
  r = with({}, {"peek", "u2", "--key", "7"});
  EXPECT_EQ(r.exit, 69) << Describe(r);
  EXPECT_NE(r.err.find("requires CURVE"), std::string::npos) << r.err;
  r = with({"--curve-server-key", dir.File("server.key.pub"), "--curve-client-key",
            dir.File("stranger.key")},
           {"peek", "u2", "--key", "7"});
  EXPECT_EQ(r.exit, 69) << Describe(r);
  EXPECT_NE(r.err.find("does not accept this client's CURVE key"), std::string::npos) << r.err;
  ASSERT_EQ(chmod(dir.File("client.key").c_str(), 0644), 0);
  r = with(good, {"peek", "u2", "--key", "7"});
  EXPECT_EQ(r.exit, 64) << Describe(r);
  EXPECT_NE(r.err.find("are too open"), std::string::npos) << r.err;
  ASSERT_EQ(chmod(dir.File("client.key").c_str(), 0600), 0);
  // The keys from the environment work as the flags do.
  setenv("TANDEM_CURVE_SERVER_KEY", dir.File("server.key.pub").c_str(), 1);
  setenv("TANDEM_CURVE_CLIENT_KEY", dir.File("client.key").c_str(), 1);
  r = RunBinary(TANDEM_CTL_BIN,
                {"--endpoint", sup.controller_endpoint(), "--state", dir.File("ctl.state"), "peek",
                 "u2", "--key", "7"},
                {.limit = 30s, .strip_tandem_env = false});
  unsetenv("TANDEM_CURVE_SERVER_KEY");
  unsetenv("TANDEM_CURVE_CLIENT_KEY");
  EXPECT_EQ(r.exit, 0) << Describe(r);
}

}  // namespace
}  // namespace tandem::testing
