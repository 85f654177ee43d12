// CURVE keys for tests (issue 12): a server key pair and an authorized-keys directory in a
// temporary directory, client key pairs made on demand, keys authorized and revoked by copying
// and removing their public key files — as an operator would, with tandem-ctl keygen's files.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ipc/curve_keys.h"
#include "temp_dir.h"

namespace tandem::testing {

class CurveFixture {
 public:
  CurveFixture() : dir_("curve") {
    auto server = ipc::GenerateCurveKeyPair();
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    server_ = *server;
    EXPECT_TRUE(ipc::WriteCurveKeyPair(server_secret_file(), server_).ok());
    EXPECT_EQ(mkdir(authorized_dir().c_str(), 0700), 0);
  }

  // A new client key pair `name` (files <dir>/<name> and <name>.pub), authorized or not.
  ipc::CurveClientKeys Client(const std::string& name, bool authorize = true) {
    auto pair = ipc::GenerateCurveKeyPair();
    EXPECT_TRUE(pair.ok());
    EXPECT_TRUE(ipc::WriteCurveKeyPair(dir_.File(name), *pair).ok());
    clients_[name] = *pair;
    if (authorize) Authorize(name);
    return Keys(name);
  }
  ipc::CurveClientKeys Keys(const std::string& name) {
    return {server_.public_z85, clients_[name].public_z85, clients_[name].secret_z85};
  }
  // Copies <name>.pub into the authorized directory / removes it from there.
  void Authorize(const std::string& name) {
    std::filesystem::copy_file(dir_.File(name + ".pub"), authorized_dir() + "/" + name + ".pub",
                               std::filesystem::copy_options::overwrite_existing);
  }
  void Revoke(const std::string& name) {
    std::filesystem::remove(authorized_dir() + "/" + name + ".pub");
  }

  std::vector<std::string> SupervisorArgs() const {
    return {"--curve-secret-key", server_secret_file(), "--curve-authorized-keys",
            authorized_dir()};
  }
  std::string server_secret_file() const { return dir_.File("server.key"); }
  std::string server_public_file() const { return dir_.File("server.key.pub"); }
  std::string client_secret_file(const std::string& name) const { return dir_.File(name); }
  std::string authorized_dir() const { return dir_.File("authorized"); }
  const ipc::CurveKeyPair& server() const { return server_; }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
  ipc::CurveKeyPair server_;
  std::map<std::string, ipc::CurveKeyPair> clients_;
};

}  // namespace tandem::testing
