// The CSV format of a csv source and of `tandem-ctl load` (workers/README.md "CSV and JSON-lines
// sources"), as a pure function of lines: CsvReader joins the lines of a record (a quoted field
// may span lines), reads the header, and turns each later record into a SourceRecord. No I/O
// (file_source.h tails the file), so it is unit-tested and fuzzed alone
// (tests/fuzz/fuzz_csv_json.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/codec.h"
#include "ipc/formats/source_record.h"

namespace tandem::ipc {

// The most bytes one CSV record (all its lines) may have; a longer one is bad data.
inline constexpr std::size_t kMaxCsvRecordBytes = std::size_t{1} << 20;

class CsvReader {
 public:
  // `upsert_key` empty: every record is a kUpdate (diff 1); else a kUpsert, or a kDelete when
  // the record has non-key fields and every one of them is empty and unquoted.
  CsvReader(pb::Schema schema, std::vector<std::uint32_t> upsert_key);

  // A record, or the bad data where one was (`error`: "csv line 7: …", `line`: the 1-based line
  // where the record starts).
  struct Result {
    std::optional<SourceRecord> record;
    std::string error;
    std::uint64_t line = 0;
  };
  // One line, without its newline. Returns a Result once a record is complete — nullopt while
  // a quoted field goes on to the next line, for blank lines, and for the header (the first
  // record), which is checked: a problem with it makes the reader broken() and it reads nothing
  // more.
  std::optional<Result> Line(std::string_view line, std::uint64_t line_number);
  // A line that was too long to be read (its bytes were dropped): the record it was part of is
  // bad data (returned; in the header: broken()), and the next line starts a new record.
  std::optional<Result> Overlong(std::uint64_t line_number, std::size_t max_line);
  // The end of the input (a rotated file read to its end, or the end of a loaded file): a record
  // still inside quotes is bad data.
  std::optional<Result> End();
  // Why the header cannot be used ("csv line 1: …"); empty while it can.
  const std::string& broken() const { return broken_; }
  bool has_header() const { return have_header_; }
  // Inside a record that goes on to the next line (a quoted field).
  bool in_record() const { return in_record_; }
  // A new file (rotation): expect a header again.
  void Reset();

 private:
  struct Field {
    std::string text;
    bool quoted = false;
  };
  enum class State { kFieldStart, kUnquoted, kQuoted, kQuoteInQuoted, kError };
  // Runs the line through the field state machine; true when the record is complete.
  bool Scan(std::string_view line);
  std::optional<Result> Finish();
  Result Bad(std::string why) const;
  Result Record();
  std::string Header();  // error text, or empty

  pb::Schema schema_;
  std::vector<std::uint32_t> key_;
  std::vector<int> key_pos_;
  // The record being read.
  std::vector<Field> fields_;
  State state_ = State::kFieldStart;
  std::string error_;  // the record's first problem (state kError, or too long)
  std::size_t bytes_ = 0;
  std::uint64_t start_line_ = 0;
  bool in_record_ = false;
  // The header: for each schema column, its field index (-1: not in the header).
  bool have_header_ = false;
  std::size_t header_fields_ = 0;
  std::vector<int> column_field_;
  std::string broken_;
};

}  // namespace tandem::ipc
