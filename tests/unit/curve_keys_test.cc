// CURVE key files (ipc/curve_keys.h) and the supervisor's endpoint and authorized-keys rules
// (supervisor/controller_auth.h), in process.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "ipc/curve_keys.h"
#include "supervisor/controller_auth.h"
#include "temp_dir.h"

namespace tandem {
namespace {

using supervisor::IsLocalEndpoint;
using supervisor::LoadAuthorizedKeys;
using testing::TempDir;

TEST(CurveKeys, KeyTextIsOneZ85KeyWithCommentsAndBlankLines) {
  auto pair = ipc::GenerateCurveKeyPair();
  ASSERT_TRUE(pair.ok());
  const std::string& key = pair->public_z85;
  EXPECT_EQ(*ipc::ParseCurveKeyText(key), key);
  EXPECT_EQ(*ipc::ParseCurveKeyText("# a comment\n\n  " + key + "  \r\n# end\n"), key);
  EXPECT_FALSE(ipc::ParseCurveKeyText("").ok());
  EXPECT_FALSE(ipc::ParseCurveKeyText("# only a comment\n").ok());
  EXPECT_FALSE(ipc::ParseCurveKeyText(key.substr(1)).ok()) << "39 characters";
  EXPECT_FALSE(ipc::ParseCurveKeyText(key + "x").ok());
  EXPECT_FALSE(ipc::ParseCurveKeyText(key + "\n" + key).ok()) << "two keys";
  std::string bad = key;
  bad[3] = '"';  // not in the Z85 alphabet
  EXPECT_FALSE(ipc::ParseCurveKeyText(bad).ok());
  // The error never repeats the text (it might be a secret key in the wrong place).
  auto e = ipc::ParseCurveKeyText(pair->secret_z85 + "x");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message().find(pair->secret_z85), std::string::npos);
}

TEST(CurveKeys, WrittenPairReadsBackWithItsModes) {
  TempDir dir("curve-keys");
  auto pair = ipc::GenerateCurveKeyPair();
  ASSERT_TRUE(pair.ok());
  const std::string path = dir.File("k");
  ASSERT_TRUE(ipc::WriteCurveKeyPair(path, *pair).ok());
  auto back = ipc::ReadCurveSecretKeyFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->secret_z85, pair->secret_z85);
  EXPECT_EQ(back->public_z85, pair->public_z85) << "derived from the secret key";
  EXPECT_EQ(*ipc::ReadCurvePublicKeyFile(path + ".pub"), pair->public_z85);
  EXPECT_EQ(ipc::WriteCurveKeyPair(path, *pair).code(), StatusCode::kAlreadyExists);

  for (mode_t mode : {0640, 0604, 0660, 0601}) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    auto refused = ipc::ReadCurveSecretKeyFile(path);
    ASSERT_FALSE(refused.ok()) << std::oct << mode;
    EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("too open"), std::string::npos);
    EXPECT_NE(refused.status().message().find("chmod 600"), std::string::npos);
  }
  ASSERT_EQ(chmod(path.c_str(), 0400), 0);
  EXPECT_TRUE(ipc::ReadCurveSecretKeyFile(path).ok()) << "read-only for its owner is fine";
  EXPECT_EQ(ipc::ReadCurveSecretKeyFile(dir.File("missing")).status().code(),
            StatusCode::kNotFound);
  dir.Write("garbage", "hello\n");
  chmod(dir.File("garbage").c_str(), 0600);
  auto garbage = ipc::ReadCurveSecretKeyFile(dir.File("garbage"));
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(garbage.status().message().find(dir.File("garbage")), std::string::npos);
}

TEST(CurveKeys, OnlyLoopbackAndLocalEndpointsAreLocal) {
  for (const char* e : {"tcp://127.0.0.1:2101", "tcp://127.1.2.3:1", "tcp://localhost:2101",
                        "tcp://[::1]:2101", "tcp://lo:2101", "tcp://[::ffff:127.0.0.1]:5",
                        "tcp://127.0.0.1:*", "ipc:///tmp/x.sock", "inproc://x"}) {
    EXPECT_TRUE(IsLocalEndpoint(e)) << e;
  }
  for (const char* e : {"tcp://0.0.0.0:2101", "tcp://*:2101", "tcp://[::]:2101",
                        "tcp://10.0.0.5:2101", "tcp://eth0:2101", "tcp://example.com:2101",
                        "tcp://128.0.0.1:1", "pgm://eth0;239.192.1.1:5555", "udp://*:5"}) {
    EXPECT_FALSE(IsLocalEndpoint(e)) << e;
  }
}

TEST(CurveKeys, AuthorizedKeysDirectory) {
  TempDir dir("curve-authorized");
  auto a = ipc::GenerateCurveKeyPair(), b = ipc::GenerateCurveKeyPair();
  dir.Write("alice.pub", "# alice\n" + a->public_z85 + "\n");
  dir.Write("bob", b->public_z85);
  dir.Write(".hidden", "skipped, whatever it holds");
  auto keys = LoadAuthorizedKeys(dir.path());
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_TRUE(keys->errors.empty());
  ASSERT_EQ(keys->keys.size(), 2u);
  EXPECT_EQ(keys->keys.at(a->public_z85), "alice.pub");
  EXPECT_EQ(keys->keys.at(b->public_z85), "bob");

  dir.Write("broken", "nope");
  chmod(dir.File("bob").c_str(), 0666);
  keys = LoadAuthorizedKeys(dir.path());
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->keys.size(), 1u) << "the good one stays";
  ASSERT_EQ(keys->errors.size(), 2u);
  EXPECT_NE(keys->errors[0].find("bob' are too open"), std::string::npos) << keys->errors[0];
  EXPECT_NE(keys->errors[1].find("broken"), std::string::npos) << keys->errors[1];

  chmod(dir.path().c_str(), 0757);
  EXPECT_FALSE(LoadAuthorizedKeys(dir.path()).ok()) << "a directory others may write to";
  chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(LoadAuthorizedKeys(dir.File("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(LoadAuthorizedKeys(dir.File("alice.pub")).ok()) << "not a directory";
}

}  // namespace
}  // namespace tandem
