#include "ipc/formats/log_parse.h"

#include <charconv>

#include "base/datum_text.h"
#include "ipc/rows.h"

namespace tandem::ipc {

namespace {

bool ParseU64(std::string_view s, std::uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// Splits on single spaces, keeping a quoted string (its escapes checked) and a typed literal
// (`date '2026-12-06'`) whole as one token, quotes included: each token is the text of one field,
// for ParseDatumText.
bool Tokenize(std::string_view line, std::vector<std::string_view>* tokens, std::string* error) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    if (line[i] == '"') {
      auto length = ReadQuotedString(line.substr(i));
      if (!length.ok()) return *error = length.status().message(), false;
      tokens->push_back(line.substr(i, *length));
      i += *length;
      continue;
    }
    std::size_t end = line.find(' ', i);
    if (end != std::string_view::npos && end + 1 < line.size() && line[end + 1] == '\'') {
      // A typed literal (numeric '12.50'): the word, a space and the quoted text, whose closing
      // quote ends the token.
      const std::size_t close = line.find('\'', end + 2);
      if (close == std::string_view::npos) return *error = "unterminated typed literal", false;
      end = close + 1;
    }
    tokens->push_back(line.substr(i, end == std::string_view::npos ? line.size() - i : end - i));
    i = end == std::string_view::npos ? line.size() : end;
  }
  return true;
}

// One field of a row, typed by its column; false with the reason when it is not the column's.
bool ParseField(std::string_view tok, const pb::Column& col, Datum* out, std::string* error) {
  const ColumnType type = ColumnTypeOf(col);
  // A column of a type the log has no datums of (kAny here) takes null at most.
  if (type.kind != ColumnType::Kind::kAny || tok == "null") {
    auto d = ParseDatumText(tok, type);
    if (d.ok()) return *out = std::move(d).value(), true;
  }
  if (tok == "null" && !col.nullable()) {
    return *error = "null in non-nullable column " + col.name(), false;
  }
  *error = "'" + std::string(tok) + "' is not a value of column " + col.name();
  return false;
}

}  // namespace

std::optional<LogRecord> ParseLogLine(std::string_view line, const pb::Schema& schema,
                                      const std::vector<std::uint32_t>& upsert_key) {
  if (line.empty() || line[0] == '#') return std::nullopt;
  LogRecord r;
  std::vector<std::string_view> tok;
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
  const bool upsert = !upsert_key.empty();
  if (tok[0] == "S" || tok[0] == "D") {
    if (!upsert) return fail("S/D lines need an upsert key (this log source has none)");
    const bool del = tok[0] == "D";
    if (tok.size() < 2) return fail(del ? "a delete needs a time" : "an upsert needs a time");
    if (!ParseU64(tok[1], &r.time) || r.time > kMaxTime)
      return fail("bad time '" + std::string(tok[1]) + "'");
    const std::size_t want =
        del ? upsert_key.size() : static_cast<std::size_t>(schema.columns_size());
    if (tok.size() - 2 != want) {
      return fail((del ? "the key has " : "row has ") + std::to_string(tok.size() - 2) +
                  " values, " +
                  (del ? "the upsert key has " + std::to_string(want) + " columns"
                       : "the schema has " + std::to_string(want) + " columns"));
    }
    r.kind = del ? LogRecord::Kind::kDelete : LogRecord::Kind::kUpsert;
    for (std::size_t i = 0; i < want; ++i) {
      const int c = del ? static_cast<int>(upsert_key[i]) : static_cast<int>(i);
      if (c >= schema.columns_size()) return fail("the upsert key names no column of the schema");
      Datum d;
      std::string why;
      if (!ParseField(tok[2 + i], schema.columns(c), &d, &why)) return fail(why);
      r.row.push_back(std::move(d));
    }
    return r;
  }
  if (tok[0] != "U") {
    return fail("unknown record '" + std::string(tok[0]) +
                (upsert ? "' (S, D, P or C)" : "' (U, P or C)"));
  }
  if (upsert) {
    return fail(
        "U lines are not read by a log source with an upsert key (S replaces a row, D "
        "deletes a key)");
  }
  if (tok.size() < 3) return fail("an update needs a time and a diff");
  if (!ParseU64(tok[1], &r.time) || r.time > kMaxTime)
    return fail("bad time '" + std::string(tok[1]) + "'");
  if (!ParseInt64Text(tok[2], &r.diff)) return fail("bad diff '" + std::string(tok[2]) + "'");
  if (tok.size() - 3 != static_cast<std::size_t>(schema.columns_size())) {
    return fail("row has " + std::to_string(tok.size() - 3) + " values, the schema has " +
                std::to_string(schema.columns_size()) + " columns");
  }
  for (int c = 0; c < schema.columns_size(); ++c) {
    Datum d;
    std::string why;
    if (!ParseField(tok[3 + static_cast<std::size_t>(c)], schema.columns(c), &d, &why))
      return fail(why);
    r.row.push_back(std::move(d));
  }
  return r;
}

LineFramer::Event LineFramer::Next(std::string_view data) {
  std::size_t consumed = 0;
  if (skipping_) {
    const std::size_t nl = data.find('\n');
    if (nl == std::string_view::npos) return {Event::kNone, data.size(), {}};
    skipping_ = false;  // the over-long line ends here
    consumed = nl + 1;
    data.remove_prefix(consumed);
  }
  const std::size_t nl = data.substr(0, max_line_ + 1).find('\n');
  if (nl != std::string_view::npos) {
    std::string_view line = data.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return {Event::kLine, consumed + nl + 1, line};
  }
  if (data.size() > max_line_) {  // no newline within the bound: drop the line's bytes
    skipping_ = true;
    return {Event::kOverlong, consumed + max_line_ + 1, {}};
  }
  return {Event::kNone, consumed, {}};
}

}  // namespace tandem::ipc
