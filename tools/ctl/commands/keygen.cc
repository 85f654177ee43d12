// keygen: writes a CURVE key pair for the controller endpoint (DESIGN §12) — FILE (the secret key,
// 0600) and FILE.pub (the public key, 0644) — and never overwrites either. Talks to no replica.
#include <iostream>

#include "ipc/curve_keys.h"
#include "tools/ctl/commands/commands.h"

namespace tandem::ctl {
namespace {

int RunKeygen(const std::string& path) {
  if (!ipc::CurveAvailable()) return Fail(kExitFailed, "keygen: libzmq has no CURVE support");
  auto keys = ipc::GenerateCurveKeyPair();
  if (!keys.ok()) return Fail(kExitFailed, "keygen: " + keys.status().message());
  if (Status s = ipc::WriteCurveKeyPair(path, *keys); !s.ok()) {
    return Fail(kExitFailed, "keygen: " + s.message());
  }
  const std::string pub = ipc::PublicKeyPathFor(path);
  PrintOk(
      "keygen",
      [&](tools::JsonWriter& j) {
        j.Key("secret_key_file").String(path);
        j.Key("public_key_file").String(pub);
        j.Key("public_key").String(keys->public_z85);
      },
      "wrote the secret key to " + path + " (0600) and the public key " + keys->public_z85 +
          " to " + pub + " (0644)");
  return kExitOk;
}

}  // namespace

Subcommand AddKeygen(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("keygen", "write a CURVE key pair: FILE (secret) and FILE.pub");
  sub->footer(
      "Writes a new CURVE key pair: the secret key to FILE (mode 0600) and the public key to\n"
      "FILE.pub (0644), refusing (exit 1) to overwrite either. For a controller: FILE is its\n"
      "--curve-client-key, FILE.pub goes into the replica's --curve-authorized-keys directory.\n"
      "For a replica: FILE is tandem-supervisor's --curve-secret-key, FILE.pub the controllers'\n"
      "--curve-server-key.");
  sub->add_option("FILE", *path, "where the secret key goes (the public key: FILE.pub)")
      ->required();
  Subcommand c{sub, [path](const Globals&, History) { return RunKeygen(*path); }};
  c.state = std::nullopt;
  return c;
}

}  // namespace tandem::ctl
