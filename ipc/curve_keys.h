// ZeroMQ CURVE keys (DESIGN §12): the key files of the controller endpoint, shared by the
// supervisor (its secret key, the authorized client keys), the controller client and the tools
// (tandem-ctl keygen, --curve-server-key, --curve-client-key).
//
// A key file holds one key in Z85 (40 characters): blank lines and lines starting with '#' are
// comments, whitespace around the key is ignored. A secret key file must be a regular file owned
// by this user and neither readable nor writable by group or others (as ssh insists for private
// keys): anything else is refused, naming the mode and the fix. A public key is not secret; a
// public key file only has to be well-formed.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace tandem::ipc {

inline constexpr std::size_t kCurveKeyZ85Size = 40;

struct CurveKeyPair {
  std::string public_z85;
  std::string secret_z85;
};

// What a controller client needs: the server's public key, its own pair.
struct CurveClientKeys {
  std::string server_public;
  std::string client_public;
  std::string client_secret;
};

// libzmq was built with CURVE.
bool CurveAvailable();
// `key` is 40 characters of valid Z85 encoding 32 bytes.
bool IsCurveKey(std::string_view key);
// Z85 of a 32-byte binary key (the form ZAP requests carry).
std::string CurveKeyToZ85(std::string_view binary32);

// The key in a key file's text; InvalidArgument saying what is wrong (without the text).
Result<std::string> ParseCurveKeyText(std::string_view text);
// The public key in `path`. InvalidArgument naming the file when it is malformed, NotFound when
// it cannot be read.
Result<std::string> ReadCurvePublicKeyFile(const std::string& path);
// The secret key in `path` and the public key derived from it. FailedPrecondition (ssh-style:
// "permissions 0644 for FILE are too open ...") for a file group or others may read or write or
// another user owns; InvalidArgument naming the file when it is malformed.
Result<CurveKeyPair> ReadCurveSecretKeyFile(const std::string& path);

// A fresh key pair (zmq_curve_keypair).
Result<CurveKeyPair> GenerateCurveKeyPair();
// Writes the secret key to `secret_path` (mode 0600) and the public key to `secret_path`.pub
// (0644). Refuses (AlreadyExists, naming it) when either exists; writes nothing then.
Status WriteCurveKeyPair(const std::string& secret_path, const CurveKeyPair& keys);
inline std::string PublicKeyPathFor(const std::string& secret_path) { return secret_path + ".pub"; }

// The client keys from the server's public key file and the client's secret key file.
Result<CurveClientKeys> LoadCurveClientKeys(const std::string& server_public_file,
                                            const std::string& client_secret_file);

}  // namespace tandem::ipc
