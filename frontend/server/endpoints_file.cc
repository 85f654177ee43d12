#include "frontend/server/endpoints_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tandem::frontend {

EndpointsFile::~EndpointsFile() { Remove(); }

Status EndpointsFile::Write(const std::string& sql_listen_addr) {
  const std::string tmp = path_ + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "sql_listen_addr=" << sql_listen_addr << "\n";
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return Status::Unavailable("could not write --endpoints-file " + path_ + " (via " + tmp +
                                 ")");
    }
  }
  struct stat st {};
  if (stat(tmp.c_str(), &st) != 0 || std::rename(tmp.c_str(), path_.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return Status::Unavailable("could not write --endpoints-file " + path_ + ": " + error);
  }
  written_ = st;
  return Status::Ok();
}

void EndpointsFile::Remove() {
  if (!written_) return;
  struct stat now {};
  if (stat(path_.c_str(), &now) == 0 && now.st_dev == written_->st_dev &&
      now.st_ino == written_->st_ino) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  written_.reset();
}

}  // namespace tandem::frontend
