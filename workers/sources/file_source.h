// csv{path} and json_lines{path} (workers/README.md "CSV and JSON-lines sources"): files of
// records, tailed like the log source (LineTailer: only regular files, bounded lines and reads,
// truncation ends the source, rotation is followed) and timed by the wall clock: each batch of
// lines read in one Advance is at T = max(now in ms since the Unix epoch, upper), after which
// the upper is T + 1; with nothing new the upper follows the clock. Records go into the source's
// Envelope (plain updates, or upserts/deletes with an upsert key); bad data is an error of the
// collection at T, and the source goes on. A file that cannot be read (not a regular file,
// truncated) or a CSV header that cannot be used ends the source: that error, then the empty
// frontier.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/time.h"  // WallClockMs
#include "ipc/formats/csv.h"
#include "workers/sources/envelope_holder.h"
#include "workers/sources/log_file.h"
#include "workers/sources/source.h"

namespace tandem::workers {

class FileSource : public Source {
 public:
  void Advance(AdvanceCtx& ctx) override;
  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) override;

  // What was read and not yet emitted (nullptr before the first Advance).
  Envelope* envelope() const { return envelope_.get(); }
  // The clock the batches are timed by (tests set their own).
  std::function<Time()> clock = WallClockMs;

 protected:
  // `noun`: "csv" or "json" (errors are "csv line 7: …"; broken files "csv source u1: …").
  FileSource(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created,
             const std::string& path, std::string noun);

  // Hands the lines of one Advance to the format; records and errors go to `batch`.
  struct Batch {
    Envelope* envelope;
    Time time;
    std::size_t added = 0;  // records and errors
    void Add(SourceRecord r) {
      r.time = time;
      envelope->Add(std::move(r));
      ++added;
    }
    void Error(std::string message) {
      envelope->AddError({std::move(message), time, 1});
      ++added;
    }
  };
  virtual std::unique_ptr<LineSink> Sink(Batch* batch) = 0;
  // Why the format cannot go on (a CSV header): the source ends with it. Empty while it can.
  virtual std::string FormatBroken() const { return ""; }

  EnvelopeHolder envelope_;
  LineTailer tailer_;
  std::string noun_;

 private:
  bool missing_logged_ = false;
  std::uint64_t rotations_logged_ = 0;
};

class CsvSource final : public FileSource {
 public:
  CsvSource(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created);

 private:
  std::unique_ptr<LineSink> Sink(Batch* batch) override;
  std::string FormatBroken() const override { return reader_.broken(); }
  ipc::CsvReader reader_;
};

class JsonLinesSource final : public FileSource {
 public:
  JsonLinesSource(const ipc::pb::SourceImport& import,
                  std::chrono::steady_clock::time_point created);

 private:
  std::unique_ptr<LineSink> Sink(Batch* batch) override;
};

}  // namespace tandem::workers
