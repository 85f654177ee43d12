// The frontend's --endpoints-file: `sql_listen_addr=HOST:PORT` (the address bound, the kernel's
// port when 0 was asked for), written whole to a temporary beside it and renamed into place, so a
// reader (an orchestrator, a test) sees no file or the whole line — as the supervisor writes its
// own. Removed at exit unless another process replaced it since.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

#include "base/status.h"

namespace tandem::frontend {

class EndpointsFile {
 public:
  explicit EndpointsFile(std::string path) : path_(std::move(path)) {}
  ~EndpointsFile();  // Remove
  EndpointsFile(const EndpointsFile&) = delete;
  EndpointsFile& operator=(const EndpointsFile&) = delete;

  // Unavailable (exit 69) naming the file when it cannot be written.
  Status Write(const std::string& sql_listen_addr);
  // Removes the file if it is still the one written here.
  void Remove();

 private:
  std::string path_;
  std::optional<struct stat> written_;
};

}  // namespace tandem::frontend
