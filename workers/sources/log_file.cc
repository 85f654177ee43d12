#include "workers/sources/log_file.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

bool ParseU64(std::string_view s, std::uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool ParseI64(std::string_view s, std::int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// Splits on single spaces, keeping quoted strings (with escapes) whole.
bool Tokenize(std::string_view line, std::vector<std::string>* tokens, std::string* error) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    if (line[i] == '"') {
      std::string s = "\"";
      ++i;
      bool closed = false;
      while (i < line.size()) {
        const char c = line[i++];
        if (c == '\\') {
          if (i >= line.size()) break;
          const char e = line[i++];
          switch (e) {
            case 'n':
              s += '\n';
              break;
            case 't':
              s += '\t';
              break;
            case '"':
              s += '"';
              break;
            case '\\':
              s += '\\';
              break;
            default:
              *error = std::string("unknown escape \\") + e;
              return false;
          }
          continue;
        }
        if (c == '"') {
          closed = true;
          break;
        }
        s += c;
      }
      if (!closed) return *error = "unterminated string", false;
      tokens->push_back(std::move(s));  // keeps its leading quote as the string marker
      continue;
    }
    const std::size_t end = line.find(' ', i);
    tokens->emplace_back(line.substr(i, end == std::string_view::npos ? line.size() - i : end - i));
    i = end == std::string_view::npos ? line.size() : end;
  }
  return true;
}

bool ParseDatum(const std::string& tok, const pb::Column& col, Datum* out, std::string* error) {
  if (tok == "null") {
    if (!col.nullable()) return *error = "null in non-nullable column " + col.name(), false;
    *out = Null{};
    return true;
  }
  switch (col.type()) {
    case pb::BOOL:
      if (tok == "true" || tok == "false") {
        *out = tok == "true";
        return true;
      }
      break;
    case pb::INT64: {
      std::int64_t v;
      if (ParseI64(tok, &v)) {
        *out = v;
        return true;
      }
      break;
    }
    case pb::FLOAT64: {
      if (tok == "nan") return *out = std::nan(""), true;
      if (tok == "inf") return *out = HUGE_VAL, true;
      if (tok == "-inf") return *out = -HUGE_VAL, true;
      char* end = nullptr;
      const double v = std::strtod(tok.c_str(), &end);
      if (!tok.empty() && end == tok.c_str() + tok.size()) {
        *out = v;
        return true;
      }
      break;
    }
    case pb::STRING:
      if (!tok.empty() && tok[0] == '"') {
        *out = tok.substr(1);
        return true;
      }
      break;
    default:
      break;
  }
  *error = "'" + tok + "' is not a value of column " + col.name();
  return false;
}

}  // namespace

std::optional<LogRecord> ParseLogLine(std::string_view line, const pb::Schema& schema) {
  if (line.empty() || line[0] == '#') return std::nullopt;
  LogRecord r;
  std::vector<std::string> tok;
  if (!Tokenize(line, &tok, &r.error)) {
    r.kind = LogRecord::Kind::kError;
    return r;
  }
  auto fail = [&](std::string why) {
    r = LogRecord{};
    r.kind = LogRecord::Kind::kError;
    r.error = std::move(why);
    return r;
  };
  if (tok.empty()) return std::nullopt;
  if (tok[0] == "C" && tok.size() == 1) {
    r.kind = LogRecord::Kind::kClose;
    return r;
  }
  if (tok[0] == "P" && tok.size() == 2) {
    r.kind = LogRecord::Kind::kProgress;
    if (!ParseU64(tok[1], &r.time) || r.time > kMaxTime) return fail("bad progress time");
    return r;
  }
  if (tok[0] != "U") return fail("unknown record '" + tok[0] + "' (U, P or C)");
  if (tok.size() < 3) return fail("an update needs a time and a diff");
  if (!ParseU64(tok[1], &r.time) || r.time > kMaxTime) return fail("bad time '" + tok[1] + "'");
  if (!ParseI64(tok[2], &r.diff)) return fail("bad diff '" + tok[2] + "'");
  if (tok.size() - 3 != static_cast<std::size_t>(schema.columns_size())) {
    return fail("row has " + std::to_string(tok.size() - 3) + " values, the schema has " +
                std::to_string(schema.columns_size()) + " columns");
  }
  for (int c = 0; c < schema.columns_size(); ++c) {
    Datum d;
    std::string why;
    if (!ParseDatum(tok[3 + static_cast<std::size_t>(c)], schema.columns(c), &d, &why))
      return fail(why);
    r.row.push_back(std::move(d));
  }
  return r;
}

std::vector<LogRecord> LogTailer::ReadNew(std::size_t max_lines) {
  std::vector<LogRecord> out;
  more_ = false;
  std::ifstream in(path_, std::ios::binary);
  missing_ = !in;
  if (!in) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  // Read in chunks; `pending` holds the bytes from `offset_` on that are not consumed yet. Every
  // line counts against the budget, blank and comment lines too (they cost a read as well).
  constexpr std::size_t kChunk = 1 << 20;
  std::string pending;
  std::size_t lines = 0;
  bool eof = false;
  while (!eof && lines < max_lines) {
    const std::size_t had = pending.size();
    pending.resize(had + kChunk);
    in.read(pending.data() + had, static_cast<std::streamsize>(kChunk));
    pending.resize(had + static_cast<std::size_t>(in.gcount()));
    eof = pending.size() < had + kChunk;
    std::size_t start = 0;
    for (std::size_t nl; lines < max_lines && (nl = pending.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      ++line_;
      ++lines;
      std::string_view line(pending.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (auto r = ParseLogLine(line, schema_)) {
        r->line = line_;
        if (r->kind == LogRecord::Kind::kError)
          r->error = "log line " + std::to_string(line_) + ": " + r->error;
        out.push_back(std::move(*r));
      }
    }
    offset_ += start;  // only complete lines are consumed
    pending.erase(0, start);
  }
  // Stopped by the budget: is there another complete line already?
  more_ =
      lines >= max_lines && (pending.find('\n') != std::string::npos || (!eof && in.peek() != EOF));
  return out;
}

}  // namespace tandem::workers
