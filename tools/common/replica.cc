#include "tools/common/replica.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace tandem::tools {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    throw std::runtime_error("bind: " + std::string(strerror(errno)));
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::optional<BoundPorts> ReadEndpointsFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  BoundPorts ports;
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    const auto colon = line.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq) continue;
    const int port = std::atoi(line.c_str() + colon + 1);
    const std::string name = line.substr(0, eq);
    if (name == "controller_listen_addr") ports.controller = port;
    if (name == "internal_http_listen_addr") ports.http = port;
  }
  if (ports.controller <= 0 || ports.http <= 0) return std::nullopt;
  return ports;
}

const BoundPorts& AwaitBoundPorts(const std::string& endpoints_file,
                                  std::optional<BoundPorts>* known,
                                  const std::function<bool()>& alive,
                                  std::chrono::milliseconds limit) {
  static const BoundPorts kUnbound{};
  const auto deadline = Clock::now() + limit;
  for (auto pause = 1ms; !*known; pause = std::min<std::chrono::milliseconds>(pause * 2, 50ms)) {
    *known = ReadEndpointsFile(endpoints_file);
    if (*known) break;
    if (!alive() || Clock::now() >= deadline) return kUnbound;
    std::this_thread::sleep_for(pause);
  }
  return **known;
}

std::string LoopbackEndpoint(int port) {
  return "tcp://127.0.0.1:" + std::to_string(port > 0 ? port : 1);
}

void PinPorts(std::vector<std::string>* argv, const BoundPorts& ports) {
  for (std::size_t i = 0; i + 1 < argv->size(); ++i) {
    std::string& value = (*argv)[i + 1];
    const bool controller = (*argv)[i] == "--controller-listen-addr";
    if (!controller && (*argv)[i] != "--internal-http-listen-addr") continue;
    const auto colon = value.rfind(':');
    if (colon == std::string::npos) continue;
    value = value.substr(0, colon + 1) + std::to_string(controller ? ports.controller : ports.http);
  }
}

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

HttpResult HttpGet(int port, const std::string& path) {
  HttpResult r;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return r;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req =
      "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return r;
  }
  std::string resp;
  char buf[8192];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<size_t>(n));
  close(fd);
  if (resp.rfind("HTTP/1.1 ", 0) == 0 && resp.size() >= 12) r.status = std::atoi(resp.c_str() + 9);
  if (auto p = resp.find("\r\n\r\n"); p != std::string::npos) r.body = resp.substr(p + 4);
  return r;
}

// The value of one Prometheus sample line ("name{labels} value"), or -1.
double MetricValue(const std::string& text, const std::string& sample) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(sample + " ", 0) == 0) return std::atof(line.c_str() + sample.size() + 1);
  }
  return -1;
}

std::string SelfDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(in, dir, ':');) {
    if (access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// Starts argv in its own process group (so ^C reaches only us and we stop it in order), with a
// parent-death signal so it cannot outlive us, output into `log`.
pid_t SpawnChild(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// SIGTERM, then SIGKILL after `grace`; reaps. Returns the exit status (128+N for a signal).
int StopChild(pid_t pid, std::chrono::milliseconds grace) {
  int status = 0;
  kill(pid, SIGTERM);
  const auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(10ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return 128 + SIGKILL;
}

// A fresh directory /tmp/<prefix>-XXXXXX.
std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp: " + std::string(strerror(errno)));
  return tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---------------------------------------------------------------------------------------------
// ReplicaProcess

ReplicaProcess::ReplicaProcess(const ReplicaOptions& o) {
  static int counter = 0;
  replica_ = o.name + "x" + std::to_string(counter++);
  segment_ = o.segment_prefix + replica_;
  dir_ = MakeTempDir(o.temp_prefix);
  pid_ =
      SpawnChild(Argv(o, replica_, segment_, dir_, dir_ + "/endpoints"), dir_ + "/supervisor.log");
}

const BoundPorts& ReplicaProcess::Ports() const {
  auto* self = const_cast<ReplicaProcess*>(this);  // Exited() only reaps and records the exit
  return AwaitBoundPorts(
      dir_ + "/endpoints", &ports_, [self] { return self->pid_ > 0 && !self->Exited(); }, 60s);
}

std::vector<std::string> ReplicaProcess::Argv(const ReplicaOptions& o, const std::string& replica,
                                              const std::string& segment,
                                              const std::string& runtime_dir,
                                              const std::string& endpoints_file) {
  std::vector<std::string> args = {o.supervisor,
                                   "--replica-id",
                                   replica,
                                   "--shm-name",
                                   segment,
                                   "--shm-size",
                                   o.shm_size,
                                   "--workers",
                                   std::to_string(o.workers),
                                   "--interactive-runtime",
                                   o.two_runtime ? "on" : "off",
                                   "--controller-listen-addr",
                                   "tcp://127.0.0.1:0",
                                   "--internal-http-listen-addr",
                                   "127.0.0.1:0",
                                   "--endpoints-file",
                                   endpoints_file,
                                   "--runtime-dir",
                                   runtime_dir,
                                   "--log-level",
                                   o.log_level,
                                   "--grace-period",
                                   o.grace_period};
  args.insert(args.end(), o.extra_args.begin(), o.extra_args.end());
  return args;
}

void ReplicaProcess::Stop() {
  if (pid_ > 0) {
    StopChild(pid_, 5s);
    pid_ = -1;
  }
  std::error_code ec;
  std::filesystem::remove("/dev/shm/" + segment_, ec);
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  dir_.clear();
}

bool ReplicaProcess::Ready() const {
  return Ports().http > 0 && HttpGet(Ports().http, "/readyz").status == 200;
}

std::optional<int> ReplicaProcess::Exited() {
  if (exit_status_) return exit_status_;
  int status = 0;
  if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return exit_status_;
}

std::string ReplicaProcess::Log() const {
  return dir_.empty() ? "" : ReadFile(dir_ + "/supervisor.log");
}

std::string ReplicaProcess::Metrics() const {
  return Ports().http > 0 ? HttpGet(Ports().http, "/metrics").body : "";
}

std::string ReplicaProcess::endpoint() const { return LoopbackEndpoint(Ports().controller); }

}  // namespace tandem::tools
