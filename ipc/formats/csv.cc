#include "ipc/formats/csv.h"

#include <unordered_set>

#include "base/datum_text.h"
#include "ipc/formats/format_values.h"

namespace tandem::ipc {

namespace {

// `text` for an error message: at most 40 bytes (cut at a character), and only valid UTF-8.
std::string Quote(std::string_view text) {
  if (!ValidUtf8(text)) return "(text that is not valid UTF-8)";
  if (text.size() <= 40) return "'" + std::string(text) + "'";
  std::size_t n = 40;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return "'" + std::string(text.substr(0, n)) + "…'";
}

}  // namespace

CsvReader::CsvReader(pb::Schema schema, std::vector<std::uint32_t> upsert_key)
    : schema_(std::move(schema)), key_(std::move(upsert_key)) {
  key_pos_ = KeyPositions(schema_, key_);
}

void CsvReader::Reset() {
  fields_.clear();
  state_ = State::kFieldStart;
  error_.clear();
  bytes_ = 0;
  in_record_ = false;
  have_header_ = false;
  header_fields_ = 0;
  column_field_.clear();
}

CsvReader::Result CsvReader::Bad(std::string why) const {
  Result r;
  r.line = start_line_;
  r.error = "csv line " + std::to_string(start_line_) + ": " + why;
  return r;
}

bool CsvReader::Scan(std::string_view line) {
  bytes_ += line.size() + 1;
  if (bytes_ > kMaxCsvRecordBytes) {
    // The record ends here, bad: a quote that is never closed must not swallow what follows.
    if (error_.empty()) {
      error_ =
          "the record is longer than " + std::to_string(kMaxCsvRecordBytes) + " bytes" +
          (state_ == State::kQuoted || state_ == State::kQuoteInQuoted ? " (is a quote not closed?)"
                                                                       : "");
    }
    return true;
  }
  const bool keep = error_.empty();
  auto append = [&](char c) {
    if (keep) fields_.back().text += c;
  };
  auto next_field = [&] {
    if (keep) fields_.emplace_back();
    state_ = State::kFieldStart;
  };
  for (const char c : line) {
    switch (state_) {
      case State::kFieldStart:
        if (c == '"') {
          if (keep) fields_.back().quoted = true;
          state_ = State::kQuoted;
        } else if (c == ',') {
          next_field();
        } else {
          append(c);
          state_ = State::kUnquoted;
        }
        break;
      case State::kUnquoted:
        if (c == ',') {
          next_field();
        } else if (c == '"') {
          if (error_.empty()) error_ = "a quote inside an unquoted field (quote the whole field)";
          state_ = State::kError;
        } else {
          append(c);
        }
        break;
      case State::kQuoted:
        if (c == '"') {
          state_ = State::kQuoteInQuoted;
        } else {
          append(c);
        }
        break;
      case State::kQuoteInQuoted:
        if (c == '"') {
          append('"');
          state_ = State::kQuoted;
        } else if (c == ',') {
          next_field();
        } else {
          if (error_.empty())
            error_ = "text after a closing quote (a quote in a quoted field is \"\")";
          state_ = State::kError;
        }
        break;
      case State::kError:
        break;
    }
    if (state_ == State::kError) break;  // the record ends with this line
  }
  return state_ != State::kQuoted;
}

std::optional<CsvReader::Result> CsvReader::Line(std::string_view line, std::uint64_t line_number) {
  if (!broken_.empty()) return std::nullopt;
  if (!in_record_) {
    if (line.empty()) return std::nullopt;  // a blank line outside a record is no record
    in_record_ = true;
    start_line_ = line_number;
    fields_.assign(1, Field{});
    state_ = State::kFieldStart;
    error_.clear();
    bytes_ = 0;
  } else {
    // Inside a quoted field: the newline is part of it.
    if (error_.empty()) fields_.back().text += '\n';
  }
  if (!Scan(line)) return std::nullopt;  // a quoted field goes on
  return Finish();
}

std::optional<CsvReader::Result> CsvReader::Overlong(std::uint64_t line_number,
                                                     std::size_t max_line) {
  if (!broken_.empty()) return std::nullopt;
  const std::string what = "longer than " + std::to_string(max_line) + " bytes (skipped)";
  if (!in_record_) start_line_ = line_number;
  Result r =
      in_record_ ? Bad("its line " + std::to_string(line_number) + " is " + what) : Bad(what);
  in_record_ = false;
  if (!have_header_) {
    broken_ = r.error + ": the header cannot be read";
    return std::nullopt;
  }
  return r;
}

std::optional<CsvReader::Result> CsvReader::End() {
  if (!in_record_ || !broken_.empty()) return std::nullopt;
  in_record_ = false;
  Result r = Bad("a quoted field is not closed at the end of the file");
  if (!have_header_) {
    broken_ = r.error + ": the header cannot be read";
    return std::nullopt;
  }
  return r;
}

std::optional<CsvReader::Result> CsvReader::Finish() {
  in_record_ = false;
  if (!have_header_) {
    std::string why = error_.empty() ? Header() : error_;
    if (!why.empty()) {
      broken_ = "csv line " + std::to_string(start_line_) + ": the header: " + why;
    }
    return std::nullopt;
  }
  if (!error_.empty()) return Bad(error_);
  return Record();
}

std::string CsvReader::Header() {
  std::unordered_set<std::string> names;
  for (const Field& f : fields_) {
    if (!names.insert(f.text).second) return "the column name " + Quote(f.text) + " is there twice";
  }
  column_field_.assign(static_cast<std::size_t>(schema_.columns_size()), -1);
  for (int c = 0; c < schema_.columns_size(); ++c) {
    const pb::Column& col = schema_.columns(c);
    for (std::size_t f = 0; f < fields_.size(); ++f) {
      if (fields_[f].text == col.name())
        column_field_[static_cast<std::size_t>(c)] = static_cast<int>(f);
    }
    if (column_field_[static_cast<std::size_t>(c)] < 0 && !col.nullable()) {
      return "it has no column " + Quote(col.name()) +
             " (a column of the schema that is not nullable must be in the header)";
    }
  }
  header_fields_ = fields_.size();
  have_header_ = true;
  return "";
}

CsvReader::Result CsvReader::Record() {
  if (fields_.size() != header_fields_) {
    return Bad("the record has " + std::to_string(fields_.size()) + " fields, the header " +
               std::to_string(header_fields_));
  }
  // An upsert delete: the record has non-key fields, and every one is empty and unquoted.
  bool del = false;
  if (!key_.empty()) {
    bool any = false, all_empty = true;
    for (std::size_t c = 0; c < column_field_.size(); ++c) {
      if (key_pos_[c] >= 0 || column_field_[c] < 0) continue;
      const Field& f = fields_[static_cast<std::size_t>(column_field_[c])];
      any = true;
      all_empty = all_empty && !f.quoted && f.text.empty();
    }
    del = any && all_empty;
  }
  auto value = [&](std::size_t c, Datum* out) -> std::string {
    const pb::Column& col = schema_.columns(static_cast<int>(c));
    if (column_field_[c] < 0) return *out = Null{}, "";
    const Field& f = fields_[static_cast<std::size_t>(column_field_[c])];
    if (!f.quoted && f.text.empty()) {
      if (!col.nullable()) return "an empty field (null) in the non-nullable column " + col.name();
      return *out = Null{}, "";
    }
    switch (col.type()) {
      case pb::STRING:
        if (!ValidUtf8(f.text)) return "the value of column " + col.name() + " is not valid UTF-8";
        *out = f.text;
        return FitDatumToColumn(col, out);  // varchar(n), char(n)
      case pb::INT64: {
        std::int64_t v;
        if (ParseInt64Text(f.text, &v)) return *out = v, "";
        return Quote(f.text) + " is not an int64 (column " + col.name() + ")";
      }
      case pb::FLOAT64: {
        double v;
        if (ParseFloat64Text(f.text, &v)) return *out = v, "";
        return Quote(f.text) + " is not a float64 (column " + col.name() + ")";
      }
      case pb::BOOL: {
        bool v;
        if (ParseBoolText(f.text, &v)) return *out = v, "";
        return Quote(f.text) + " is not a bool (column " + col.name() + ": true or false)";
      }
      case pb::INT16:
      case pb::INT32:
      case pb::FLOAT32:
      case pb::NUMERIC:
      case pb::BYTEA:
      case pb::DATE:
      case pb::TIME:
      case pb::TIMESTAMP:
      case pb::TIMESTAMPTZ:
      case pb::INTERVAL:
      case pb::UUID:
        // PostgreSQL's text forms, as COPY … CSV reads them: 12.50, 2026-12-06 12:00:00+00, …
        return ReadPostgresText(f.text, col, out);
      default:
        return "column " + col.name() + " has a type a csv source cannot read";
    }
  };
  Result r;
  r.line = start_line_;
  SourceRecord rec;
  if (del) {
    rec.kind = SourceRecord::Kind::kDelete;
    for (const std::uint32_t c : key_) {
      Datum d;
      if (std::string why = value(c, &d); !why.empty()) return Bad(why);
      rec.row.push_back(std::move(d));
    }
  } else {
    rec.kind = key_.empty() ? SourceRecord::Kind::kUpdate : SourceRecord::Kind::kUpsert;
    for (std::size_t c = 0; c < column_field_.size(); ++c) {
      Datum d;
      if (std::string why = value(c, &d); !why.empty()) return Bad(why);
      rec.row.push_back(std::move(d));
    }
  }
  r.record = std::move(rec);
  return r;
}

}  // namespace tandem::ipc
