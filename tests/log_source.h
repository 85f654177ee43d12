// Log-source test helpers shared by the process tests (integration, adversarial): a log file to
// append to, and a dataflow indexing a log source.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "base/time.h"
#include "ipc/codec.h"

namespace tandem::testing {

// A log file the test appends to; removed at the end.
class LogFile {
 public:
  LogFile() {
    char tmpl[] = "/tmp/tandem-log-XXXXXX";
    const int fd = mkstemp(tmpl);
    close(fd);
    path_ = tmpl;
  }
  ~LogFile() { std::filesystem::remove(path_); }
  void Append(const std::string& lines) {
    std::ofstream out(path_, std::ios::app);
    out << lines;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// log source `src` (k int64, v int64) → index `idx` on it, keyed by k; optionally through a map
// of v / divisor (for errors in the data).
inline ipc::pb::Command LogIndexDataflow(const std::string& src, const std::string& idx,
                                         const std::string& path, Time as_of = 0,
                                         std::optional<std::int64_t> divisor = std::nullopt) {
  ipc::pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_class_(ipc::pb::MAINTAINED);
  d->mutable_as_of()->add_elements(as_of);
  auto* s = d->add_source_imports();
  s->set_id(src);
  s->mutable_source()->mutable_log()->set_path(path);
  for (const char* name : {"k", "v"}) {
    auto* col = s->mutable_schema()->add_columns();
    col->set_name(name);
    col->set_type(ipc::pb::INT64);
  }
  std::string on = src;
  if (divisor) {
    const std::string view = idx + "_view";
    auto* b = d->add_objects_to_build();
    b->set_id("u" + std::to_string(std::stoi(idx.substr(1)) + 1000));
    auto* mfp = b->mutable_plan()->mutable_mfp();
    mfp->mutable_input()->mutable_get()->set_id(src);
    auto* e = mfp->mutable_mfp()->add_map()->mutable_binary();
    e->set_func(ipc::pb::DIV);
    e->mutable_left()->set_column(1);
    e->mutable_right()->mutable_literal()->mutable_value()->set_int64(*divisor);
    e->mutable_right()->mutable_literal()->set_type(ipc::pb::INT64);
    on = b->id();
  }
  auto* x = d->add_index_exports();
  x->set_id(idx);
  x->set_on(on);
  x->add_key(0);
  return c;
}

}  // namespace tandem::testing
