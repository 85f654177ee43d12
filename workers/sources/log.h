// log{path}: the lines of an append-only text file (workers/README.md "The log source format"),
// tailed as it grows. Advance reads new lines (at most the step budget's records) into per-worker
// queues, round robin; each worker's node emits the queued updates below the tick's hi. Bad lines
// are errors of the source, emitted by worker 0. A file that cannot be read as a log (not a
// regular file, truncated) ends the source: that error at the upper, then the empty frontier.
#pragma once

#include <memory>
#include <vector>

#include "workers/sources/log_file.h"
#include "workers/sources/source.h"

namespace tandem::workers {

class LogSource final : public Source {
 public:
  LogSource(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created)
      : Source(import, created),
        tailer_(std::make_unique<LogTailer>(import.source().log().path(), import.schema())) {}
  void Advance(AdvanceCtx& ctx) override;
  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) override;

  // Read, not yet emitted: updates by worker, and errors (taken by worker 0). Written by
  // Advance, taken by the workers' nodes between barriers.
  std::vector<std::vector<RowUpdate>> pending;
  std::vector<ErrorUpdate> pending_errors;

 private:
  std::unique_ptr<LogTailer> tailer_;
  std::uint64_t records_ = 0;
  bool missing_logged_ = false;  // the file was missing when last read (and we said so)
  std::uint64_t rotations_logged_ = 0;
};

}  // namespace tandem::workers
