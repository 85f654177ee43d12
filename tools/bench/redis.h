// tandem-bench's Redis peer (the redis and write scenarios): a minimal RESP client over a plain
// TCP socket, and a redis-server of the run's own, on a free port in a scratch directory, stopped
// and removed when it goes.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tools/bench/bench.h"

namespace tandem::bench {

class Redis {
 public:
  explicit Redis(int port) {
    for (int i = 0; i < 250 && fd_ < 0; ++i) {
      fd_ = ConnectLoopback(port);
      if (fd_ < 0) Sleep(20ms);
    }
    if (fd_ < 0) throw std::runtime_error("cannot connect to redis-server");
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Redis() {
    if (fd_ >= 0) close(fd_);
  }
  Redis(const Redis&) = delete;
  Redis& operator=(const Redis&) = delete;

  static void Append(std::string& out, const std::vector<std::string>& args) {
    out += "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  void Write(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) {
        CheckStop();
        continue;
      }
      if (n <= 0) throw std::runtime_error("redis write failed");
      done += static_cast<std::size_t>(n);
    }
  }
  // One reply: simple string, error, integer or bulk string (nullopt for a null bulk).
  std::optional<std::string> Reply() {
    const std::string line = Line();
    if (line.empty()) throw std::runtime_error("empty redis reply");
    if (line[0] == '-') throw std::runtime_error("redis: " + line);
    if (line[0] != '$') return line.substr(1);
    const long len = std::atol(line.c_str() + 1);
    if (len < 0) return std::nullopt;
    while (buf_.size() - pos_ < static_cast<std::size_t>(len) + 2) Fill();
    std::string v = buf_.substr(pos_, static_cast<std::size_t>(len));
    pos_ += static_cast<std::size_t>(len) + 2;
    return v;
  }

 private:
  void Fill() {
    if (pos_ > 0) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    char tmp[16384];
    for (;;) {
      const ssize_t n = read(fd_, tmp, sizeof tmp);
      if (n < 0 && errno == EINTR) {
        CheckStop();
        continue;
      }
      if (n <= 0) throw std::runtime_error("redis connection closed");
      buf_.append(tmp, static_cast<std::size_t>(n));
      return;
    }
  }
  std::string Line() {
    for (;;) {
      const auto end = buf_.find("\r\n", pos_);
      if (end != std::string::npos) {
        std::string line = buf_.substr(pos_, end - pos_);
        pos_ = end + 2;
        return line;
      }
      Fill();
    }
  }
  int fd_ = -1;
  std::string buf_;
  std::size_t pos_ = 0;
};

// A redis-server of our own on a free loopback port, its --dir a scratch directory (on /tmp's
// file system), with `args` after the port, bind, --save "" and --dir (e.g. "--appendonly", "no").
// Stopped (SIGTERM, SIGKILL after 2 s) and its directory removed when this goes.
class RedisServer {
 public:
  explicit RedisServer(const std::vector<std::string>& args)
      : scratch_("tandem-bench-redis"), port_(FreePort()) {
    std::string server = "/usr/bin/redis-server";
    if (access(server.c_str(), X_OK) != 0) server = "/usr/local/bin/redis-server";
    std::vector<std::string> argv = {server,   "--port",    std::to_string(port_),
                                     "--bind", "127.0.0.1", "--save",
                                     "",       "--dir",     scratch_.path};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = SpawnChild(argv, scratch_.path + "/redis.log");
    slot_ = RegisterChild(pid_, "");
  }
  ~RedisServer() {
    StopChild(pid_, 2s);
    UnregisterChild(slot_);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  int port() const { return port_; }
  const std::string& dir() const { return scratch_.path; }

 private:
  ScratchDir scratch_;  // removed after the server stopped (declared first: destroyed last)
  int port_;
  pid_t pid_ = -1;
  int slot_ = -1;
};

}  // namespace tandem::bench
