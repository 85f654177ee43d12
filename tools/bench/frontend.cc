#include "tools/bench/frontend.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tandem::bench {

Frontend::Frontend(const Options& o) : dir_("tandem-bench-frontend") {
  const std::string replica_id = "bench." + o.name + "xfe";
  segment_ = "/dev/shm/tandem." + replica_id;
  const std::vector<std::string> argv = {o.frontend,
                                         "--data-dir",
                                         dir_.path + "/data",
                                         "--sql-listen-addr",
                                         "127.0.0.1:0",
                                         "--endpoints-file",
                                         dir_.path + "/frontend.endpoints",
                                         "--supervisor-binary",
                                         o.supervisor,
                                         "--replica-id",
                                         replica_id,
                                         "--shm-size",
                                         o.shm_size,
                                         "--workers",
                                         std::to_string(o.workers),
                                         "--interactive-runtime",
                                         "on",
                                         "--replica-grace-period",
                                         "5",
                                         "--log-level",
                                         "warning"};
  pid_ = SpawnChild(argv, dir_.path + "/frontend.log");
  slot_ = RegisterChild(pid_, segment_);
}

void Frontend::Stop() {
  if (pid_ > 0) {
    StopChild(pid_, 30s);
    pid_ = -1;
  }
  UnregisterChild(slot_);
  slot_ = -1;
  // The replica removes its segment as it stops; whatever happened, nothing is left.
  std::error_code ec;
  std::filesystem::remove(segment_, ec);
  std::filesystem::remove(segment_ + ".readers", ec);
}

void Frontend::CheckAlive() {
  if (pid_ <= 0) throw std::runtime_error("tandem-frontend already stopped");
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    throw std::runtime_error("tandem-frontend exited with " + std::to_string(code) + ":\n" + Log());
  }
}

void Frontend::WaitListening(std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (sql_port_ == 0 || !replica_) {
    CheckAlive();
    if (Clock::now() > deadline) {
      throw std::runtime_error("tandem-frontend did not listen within " +
                               std::to_string(limit.count()) + " s:\n" + Log());
    }
    if (sql_port_ == 0) {
      // sql_listen_addr=HOST:PORT, renamed into place whole.
      std::ifstream in(dir_.path + "/frontend.endpoints");
      std::string line;
      if (std::getline(in, line) && line.rfind("sql_listen_addr=", 0) == 0) {
        sql_port_ = std::atoi(line.c_str() + line.rfind(':') + 1);
      }
    }
    if (!replica_) replica_ = tools::ReadEndpointsFile(dir_.path + "/data/replica.endpoints");
    Sleep(20ms);
  }
}

std::string Frontend::conninfo() const {
  return "host=127.0.0.1 port=" + std::to_string(sql_port_) +
         " dbname=tandem user=bench connect_timeout=10";
}

std::string Frontend::replica_endpoint() const {
  return tools::LoopbackEndpoint(replica_ ? replica_->controller : 0);
}

std::string Frontend::ReplicaMetrics() const {
  return replica_ && replica_->http > 0 ? tools::HttpGet(replica_->http, "/metrics").body : "";
}

std::string Frontend::Log() const { return ReadFile(dir_.path + "/frontend.log"); }

}  // namespace tandem::bench
