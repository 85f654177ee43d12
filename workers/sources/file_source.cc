#include "workers/sources/file_source.h"

#include <spdlog/spdlog.h>

#include "ipc/formats/format_values.h"
#include "ipc/formats/json_lines.h"

namespace tandem::workers {

FileSource::FileSource(const ipc::pb::SourceImport& import,
                       std::chrono::steady_clock::time_point created, const std::string& path,
                       std::string noun)
    : Source(import, created),
      envelope_({import.upsert_key().begin(), import.upsert_key().end()}),
      tailer_(path, noun == "csv" ? "CSV" : "JSON-lines"),
      noun_(std::move(noun)) {}

std::unique_ptr<Node> FileSource::MakeNode(std::uint32_t me, Time as_of, Frontier until) {
  return envelope_.MakeNode(me, as_of, until);
}

void FileSource::Advance(AdvanceCtx& ctx) {
  Envelope& env = envelope_.Ensure(ctx.workers);
  if (upper.empty()) return;  // ended
  const Time now = std::min(clock(), kMaxTime - 1);
  Batch batch{&env, std::max(now, upper.time())};
  {
    const std::size_t lines = static_cast<std::size_t>(ctx.max_ticks) * kLogLinesPerTick;
    const std::size_t bytes = static_cast<std::size_t>(ctx.max_ticks) * kLogBytesPerTick;
    std::unique_ptr<LineSink> sink = Sink(&batch);
    tailer_.ReadNew(*sink, lines, bytes);
  }
  std::string broken = tailer_.broken();
  if (broken.empty()) broken = FormatBroken();
  if (!broken.empty()) {
    // The file (or its header) cannot be read: the source ends with the error, at the batch's
    // time — a peek from there on answers it, and no dataflow's frontier waits for it.
    batch.Error(noun_ + " source " + id + ": " + broken);
    spdlog::error("{} source {}: {}; the source ends here, with this error in its collections",
                  noun_, id, broken);
    upper = Frontier::Empty();
    return;
  }
  if (batch.added > 0) {
    upper = Frontier::At(batch.time + 1);
  } else if (!tailer_.missing()) {
    upper = Frontier::At(std::max(upper.time(), now));  // nothing new: the upper follows the clock
  }
  if (tailer_.rotations() != rotations_logged_) {
    rotations_logged_ = tailer_.rotations();
    spdlog::info("{} source {}: {} was replaced by another file; following it from its start",
                 noun_, id, tailer_.path());
  }
  if (tailer_.missing() != missing_logged_) {
    missing_logged_ = tailer_.missing();
    if (missing_logged_) {
      spdlog::warn(
          "{} source {}: {} does not exist (or cannot be read); its collections wait for it "
          "(their frontiers stay where they are)",
          noun_, id, tailer_.path());
    } else {
      spdlog::info("{} source {}: {} is there now; reading it", noun_, id, tailer_.path());
    }
  }
  if (tailer_.more()) {
    ctx.budget_limited = true;
    ctx.next = ctx.now;  // more of the file is there already: step again at once
  } else {
    ctx.next = std::min(ctx.next, ctx.now + std::chrono::milliseconds(10));
  }
}

namespace {

std::string Incomplete(const std::string& noun, std::uint64_t line, const std::string& path) {
  return noun + " line " + std::to_string(line) + ": incomplete (no newline) when " + path +
         " was replaced by another file (skipped)";
}

class CsvSink final : public LineSink {
 public:
  CsvSink(ipc::CsvReader* reader, const std::string& path,
          std::function<void(ipc::CsvReader::Result)> emit)
      : reader_(reader), path_(path), emit_(std::move(emit)) {}
  void Line(std::string_view line, std::uint64_t number) override {
    if (number == 1) line = ipc::WithoutByteOrderMark(line);
    if (auto r = reader_->Line(line, number)) emit_(std::move(*r));
  }
  void Overlong(std::uint64_t number, std::size_t max_line) override {
    if (auto r = reader_->Overlong(number, max_line)) emit_(std::move(*r));
  }
  void Replaced(std::uint64_t incomplete) override {
    if (incomplete != 0) {
      ipc::CsvReader::Result r;
      r.line = incomplete;
      r.error = Incomplete("csv", incomplete, path_);
      emit_(std::move(r));
    }
    if (auto r = reader_->End()) emit_(std::move(*r));
    if (reader_->broken().empty()) reader_->Reset();  // the new file starts with its header
  }

 private:
  ipc::CsvReader* reader_;
  const std::string& path_;
  std::function<void(ipc::CsvReader::Result)> emit_;
};

class JsonSink final : public LineSink {
 public:
  JsonSink(const ipc::pb::Schema& schema, const std::vector<std::uint32_t>& key,
           const std::string& path, std::function<void(SourceRecord)> add,
           std::function<void(std::string)> error)
      : schema_(schema), key_(key), path_(path), add_(std::move(add)), error_(std::move(error)) {}
  void Line(std::string_view line, std::uint64_t number) override {
    if (number == 1) line = ipc::WithoutByteOrderMark(line);
    auto r = ipc::ParseJsonLine(line, schema_, key_);
    if (!r) return;
    if (auto* rec = std::get_if<SourceRecord>(&*r)) {
      add_(std::move(*rec));
    } else {
      error_("json line " + std::to_string(number) + ": " + std::get<std::string>(*r));
    }
  }
  void Overlong(std::uint64_t number, std::size_t max_line) override {
    error_("json line " + std::to_string(number) + ": longer than " + std::to_string(max_line) +
           " bytes (skipped)");
  }
  void Replaced(std::uint64_t incomplete) override {
    if (incomplete != 0) error_(Incomplete("json", incomplete, path_));
  }

 private:
  const ipc::pb::Schema& schema_;
  const std::vector<std::uint32_t>& key_;
  const std::string& path_;
  std::function<void(SourceRecord)> add_;
  std::function<void(std::string)> error_;
};

}  // namespace

CsvSource::CsvSource(const ipc::pb::SourceImport& import,
                     std::chrono::steady_clock::time_point created)
    : FileSource(import, created, import.source().csv().path(), "csv"),
      reader_(import.schema(), {import.upsert_key().begin(), import.upsert_key().end()}) {}

std::unique_ptr<LineSink> CsvSource::Sink(Batch* batch) {
  return std::make_unique<CsvSink>(&reader_, tailer_.path(), [batch](ipc::CsvReader::Result r) {
    if (r.record) {
      batch->Add(std::move(*r.record));
    } else {
      batch->Error(std::move(r.error));
    }
  });
}

JsonLinesSource::JsonLinesSource(const ipc::pb::SourceImport& import,
                                 std::chrono::steady_clock::time_point created)
    : FileSource(import, created, import.source().json_lines().path(), "json") {}

std::unique_ptr<LineSink> JsonLinesSource::Sink(Batch* batch) {
  return std::make_unique<JsonSink>(
      schema, envelope_.upsert_key(), tailer_.path(),
      [batch](SourceRecord r) { batch->Add(std::move(r)); },
      [batch](std::string e) { batch->Error(std::move(e)); });
}

}  // namespace tandem::workers
