// log{path}: the lines of an append-only text file (workers/README.md "The log source format"),
// tailed as it grows. Advance reads new lines (at most the step budget's records) into the
// source's Envelope (envelope.h): `U` updates in a plain log source, `S` upserts and `D` deletes
// in one with an upsert key; each worker's node emits its share below the tick's hi. Bad lines
// are errors of the source. A file that cannot be read as a log (not a regular file, truncated)
// ends the source: that error at the upper, then the empty frontier.
#pragma once

#include <memory>
#include <vector>

#include "workers/sources/envelope_holder.h"
#include "workers/sources/log_file.h"
#include "workers/sources/source.h"

namespace tandem::workers {

class LogSource final : public Source {
 public:
  LogSource(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created)
      : Source(import, created),
        envelope_({import.upsert_key().begin(), import.upsert_key().end()}),
        tailer_(std::make_unique<LogTailer>(import.source().log().path(), import.schema(),
                                            envelope_.upsert_key())) {}
  void Advance(AdvanceCtx& ctx) override;
  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) override;

  // What was read and not yet emitted (nullptr before the first Advance).
  Envelope* envelope() const { return envelope_.get(); }

 private:
  EnvelopeHolder envelope_;
  std::unique_ptr<LogTailer> tailer_;
  bool missing_logged_ = false;  // the file was missing when last read (and we said so)
  std::uint64_t rotations_logged_ = 0;
};

}  // namespace tandem::workers
