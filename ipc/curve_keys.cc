#include "ipc/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tandem::ipc {

namespace {

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// At most this much of a key file is read: a key file is ~150 bytes.
constexpr std::size_t kMaxKeyFileBytes = 64 * 1024;

Result<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read key file '" + path + "': " + std::strerror(errno));
  std::string text(kMaxKeyFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxKeyFileBytes) {
    return Status::InvalidArgument("key file '" + path +
                                   "' is not a key file (larger than 64 KiB)");
  }
  return text;
}

Status WriteNewFile(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) return Status::AlreadyExists("'" + path + "' exists; not overwritten");
    return Status::Internal("cannot create '" + path + "': " + std::strerror(errno));
  }
  // The umask may have taken bits away: the mode is exactly what was asked.
  const bool ok = fchmod(fd, mode) == 0 &&
                  write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  fsync(fd) == 0;
  const int saved = errno;
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    return Status::Internal("cannot write '" + path + "': " + std::strerror(saved));
  }
  return Status::Ok();
}

}  // namespace

bool CurveAvailable() { return zmq_has("curve") != 0; }

bool IsCurveKey(std::string_view key) {
  if (key.size() != kCurveKeyZ85Size) return false;
  const std::string z(key);
  std::uint8_t bin[32];
  return zmq_z85_decode(bin, z.c_str()) != nullptr;
}

std::string CurveKeyToZ85(std::string_view binary32) {
  if (binary32.size() != 32) return {};
  char z[kCurveKeyZ85Size + 1] = {};
  if (!zmq_z85_encode(z, reinterpret_cast<const std::uint8_t*>(binary32.data()), 32)) return {};
  return z;
}

Result<std::string> ParseCurveKeyText(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string key;
  for (std::string line; std::getline(in, line);) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    const auto e = line.find_last_not_of(" \t\r");
    if (!key.empty()) return Status::InvalidArgument("more than one key");
    key = line.substr(b, e - b + 1);
  }
  if (key.empty()) return Status::InvalidArgument("no key (expected 40 characters of Z85)");
  if (!IsCurveKey(key)) {
    return Status::InvalidArgument("not a CURVE key (expected 40 characters of Z85, found " +
                                   std::to_string(key.size()) + " characters that are not)");
  }
  return key;
}

Result<std::string> ReadCurvePublicKeyFile(const std::string& path) {
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  auto key = ParseCurveKeyText(*text);
  if (!key.ok()) {
    return Status::InvalidArgument("malformed key file '" + path + "': " + key.status().message());
  }
  return key;
}

Result<CurveKeyPair> ReadCurveSecretKeyFile(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return Status::NotFound("cannot read secret key file '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition("secret key file '" + path + "' is not a regular file");
  }
  if (st.st_uid != geteuid()) {
    return Status::FailedPrecondition("secret key file '" + path + "' is owned by uid " +
                                      std::to_string(st.st_uid) + ", not by this user (uid " +
                                      std::to_string(geteuid()) + "); refusing to use it");
  }
  if ((st.st_mode & 077) != 0) {
    return Status::FailedPrecondition(
        "permissions " + Octal(st.st_mode) + " for secret key file '" + path +
        "' are too open: a secret key must not be accessible by group or others (chmod 600 '" +
        path + "'); refusing to use it");
  }
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  auto key = ParseCurveKeyText(*text);
  if (!key.ok()) {
    return Status::InvalidArgument("malformed secret key file '" + path +
                                   "': " + key.status().message());
  }
  CurveKeyPair pair;
  pair.secret_z85 = *key;
  char pub[kCurveKeyZ85Size + 1] = {};
  if (zmq_curve_public(pub, pair.secret_z85.c_str()) != 0) {
    return Status::FailedPrecondition("cannot derive the public key of '" + path +
                                      "': libzmq has no CURVE support");
  }
  pair.public_z85 = pub;
  return pair;
}

Result<CurveKeyPair> GenerateCurveKeyPair() {
  char pub[kCurveKeyZ85Size + 1] = {}, sec[kCurveKeyZ85Size + 1] = {};
  if (zmq_curve_keypair(pub, sec) != 0) {
    return Status::FailedPrecondition("libzmq has no CURVE support (zmq_curve_keypair failed)");
  }
  return CurveKeyPair{pub, sec};
}

Status WriteCurveKeyPair(const std::string& secret_path, const CurveKeyPair& keys) {
  const std::string public_path = PublicKeyPathFor(secret_path);
  for (const std::string& p : {secret_path, public_path}) {
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0) {
      return Status::AlreadyExists("'" + p + "' exists; refusing to overwrite it");
    }
  }
  const std::string secret_text =
      "# Tandem CURVE secret key (Z85). Keep it private: it is this party's identity.\n"
      "# Use: tandem-supervisor --curve-secret-key, or tandem-ctl/tandem-bench "
      "--curve-client-key.\n" +
      keys.secret_z85 + "\n";
  const std::string public_text =
      "# Tandem CURVE public key (Z85). Not secret. A client's goes into the supervisor's\n"
      "# --curve-authorized-keys directory; the server's is tandem-ctl's --curve-server-key.\n" +
      keys.public_z85 + "\n";
  if (Status s = WriteNewFile(secret_path, secret_text, 0600); !s.ok()) return s;
  if (Status s = WriteNewFile(public_path, public_text, 0644); !s.ok()) {
    unlink(secret_path.c_str());
    return s;
  }
  return Status::Ok();
}

Result<CurveClientKeys> LoadCurveClientKeys(const std::string& server_public_file,
                                            const std::string& client_secret_file) {
  auto server = ReadCurvePublicKeyFile(server_public_file);
  if (!server.ok()) return server.status();
  auto client = ReadCurveSecretKeyFile(client_secret_file);
  if (!client.ok()) return client.status();
  return CurveClientKeys{*server, client->public_z85, client->secret_z85};
}

}  // namespace tandem::ipc
