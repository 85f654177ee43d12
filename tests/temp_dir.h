// A temporary directory for one test, removed with everything in it when the test ends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tandem::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& what = "test") {
    std::string tmpl = "/tmp/tandem-" + what + "-XXXXXX";
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  void Write(const std::string& name, const std::string& text, bool append = false) const {
    std::ofstream out(File(name), append ? std::ios::app : std::ios::trunc);
    out << text;
  }

 private:
  std::string path_;
};

}  // namespace tandem::testing
