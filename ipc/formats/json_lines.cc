#include "ipc/formats/json_lines.h"

#include <charconv>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "base/datum_text.h"
#include "ipc/formats/format_values.h"

namespace tandem::ipc {

namespace {

// A parsed JSON value of a field the schema has (nested values are only checked and skipped).
struct Value {
  enum Kind { kNull, kBool, kNumber, kString, kNested } kind = kNull;
  bool b = false;
  std::string text;      // kNumber: its text; kString: its decoded bytes
  bool integer = false;  // kNumber without fraction or exponent
};

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::string error;

  bool AtEnd() {
    SkipSpace();
    return i_ == s_.size();
  }
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool Fail(std::string why) {
    if (error.empty()) error = std::move(why) + " at byte " + std::to_string(i_ + 1);
    return false;
  }
  std::size_t pos() const { return i_; }

  // Any value; `depth` is its nesting.
  bool ParseValue(Value* v, int depth) {
    SkipSpace();
    if (i_ >= s_.size()) return Fail("a value is missing");
    const char c = s_[i_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxJsonDepth)
        return Fail("nested deeper than " + std::to_string(kMaxJsonDepth));
      v->kind = Value::kNested;
      return c == '{' ? SkipObject(depth + 1) : SkipArray(depth + 1);
    }
    if (c == '"') {
      v->kind = Value::kString;
      return ParseString(&v->text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v->kind = Value::kNumber;
      return ParseNumber(v);
    }
    if (Word("true")) return v->kind = Value::kBool, v->b = true, true;
    if (Word("false")) return v->kind = Value::kBool, v->b = false, true;
    if (Word("null")) return v->kind = Value::kNull, true;
    return Fail("not a JSON value");
  }

  bool ParseString(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return Fail("a string is expected");
    ++i_;
    for (;;) {
      if (i_ >= s_.size()) return Fail("the string is not closed");
      const unsigned char c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return Fail("a control character in a string (escape it)");
      if (c != '\\') {
        *out += static_cast<char>(c);
        continue;
      }
      if (i_ >= s_.size()) return Fail("the string is not closed");
      const char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          *out += e;
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail("a lone low surrogate \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t lo = 0;
            if (i_ + 1 >= s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u')
              return Fail("a high surrogate \\u escape without its low surrogate");
            i_ += 2;
            if (!Hex4(&lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF)
              return Fail("a high surrogate \\u escape without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Fail(std::string("an unknown escape \\") +
                      (static_cast<unsigned char>(e) < 0x80 && e >= 0x20 ? std::string(1, e)
                                                                         : std::string("?")));
      }
    }
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
      ++i_;
  }
  bool Word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool Hex4(std::uint32_t* out) {
    if (i_ + 4 > s_.size()) return Fail("a \\u escape needs 4 hex digits");
    *out = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      std::uint32_t d;
      if (h >= '0' && h <= '9') {
        d = static_cast<std::uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        d = static_cast<std::uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        d = static_cast<std::uint32_t>(h - 'A' + 10);
      } else {
        return Fail("a \\u escape needs 4 hex digits");
      }
      *out = *out * 16 + d;
    }
    return true;
  }
  static void AppendUtf8(std::uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool Digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ > start;
  }
  bool ParseNumber(Value* v) {
    const std::size_t start = i_;
    if (s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (!Digits()) {
      return Fail("not a JSON number");
    }
    v->integer = true;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      v->integer = false;
      if (!Digits()) return Fail("not a JSON number (digits after the point)");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      v->integer = false;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!Digits()) return Fail("not a JSON number (digits of the exponent)");
    }
    v->text = std::string(s_.substr(start, i_ - start));
    return true;
  }
  bool SkipArray(int depth) {
    ++i_;  // [
    if (Eat(']')) return true;
    for (;;) {
      Value v;
      if (!ParseValue(&v, depth)) return false;
      if (Eat(']')) return true;
      if (!Eat(',')) return Fail("',' or ']' expected in an array");
    }
  }
  bool SkipObject(int depth) {
    ++i_;  // {
    if (Eat('}')) return true;
    std::unordered_set<std::string> seen;
    for (;;) {
      SkipSpace();
      std::string name;
      if (!ParseString(&name)) return false;
      if (!seen.insert(name).second) return Fail("a duplicate field in a nested object");
      if (!Eat(':')) return Fail("':' expected after a field name");
      Value v;
      if (!ParseValue(&v, depth)) return false;
      if (Eat('}')) return true;
      if (!Eat(',')) return Fail("',' or '}' expected in an object");
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// `name` for an error message (valid UTF-8 already: the line is).
std::string Named(const std::string& name) {
  if (name.size() <= 40) return "\"" + name + "\"";
  std::size_t n = 40;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return "\"" + name.substr(0, n) + "…\"";
}

std::string ToDatum(const Value& v, const pb::Column& col, Datum* out) {
  if (v.kind == Value::kNull) {
    if (!col.nullable()) return "null in the non-nullable column " + col.name();
    return *out = Null{}, "";
  }
  switch (col.type()) {
    case pb::BOOL:
      if (v.kind == Value::kBool) return *out = v.b, "";
      return "column " + col.name() + " is a bool: true or false";
    case pb::INT64: {
      if (v.kind != Value::kNumber || !v.integer)
        return "column " + col.name() + " is an int64: an integer without fraction or exponent";
      std::int64_t i;
      if (!ParseInt64Text(v.text, &i))
        return v.text.substr(0, 40) + " is out of the int64 range (column " + col.name() + ")";
      return *out = i, "";
    }
    case pb::FLOAT64: {
      if (v.kind == Value::kString) {
        if (v.text == "nan") return *out = std::nan(""), "";
        if (v.text == "inf") return *out = HUGE_VAL, "";
        if (v.text == "-inf") return *out = -HUGE_VAL, "";
      }
      if (v.kind != Value::kNumber)
        return "column " + col.name() + " is a float64: a number, or \"nan\", \"inf\", \"-inf\"";
      double d;
      if (!ParseFloat64Text(v.text, &d))
        return v.text.substr(0, 40) + " is out of the float64 range (column " + col.name() + ")";
      return *out = d, "";
    }
    case pb::STRING:
      if (v.kind != Value::kString) return "column " + col.name() + " is a string";
      if (!ValidUtf8(v.text))
        return "the string of column " + col.name() +
               " is not valid UTF-8 (a \\u escape of a byte?)";
      *out = v.text;
      return FitDatumToColumn(col, out);  // varchar(n), char(n)
    case pb::INT16:
    case pb::INT32: {
      if (v.kind != Value::kNumber || !v.integer) {
        return "column " + col.name() + " is an integer: a number without fraction or exponent";
      }
      return ReadPostgresText(v.text, col, out);  // out of range: PostgreSQL's words
    }
    case pb::FLOAT32: {
      if (v.kind == Value::kString && (v.text == "nan" || v.text == "inf" || v.text == "-inf")) {
        return ReadPostgresText(v.text, col, out);
      }
      if (v.kind != Value::kNumber) {
        return "column " + col.name() + " is a float32: a number, or \"nan\", \"inf\", \"-inf\"";
      }
      return ReadPostgresText(v.text, col, out);
    }
    case pb::NUMERIC:
      // A number is read exactly from its text (never through a double); a string holds the
      // numeric's text ("12.50", so that a JSON writer's doubles cannot round it).
      if (v.kind != Value::kNumber && v.kind != Value::kString) {
        return "column " + col.name() + " is a numeric: a number or its text in a string";
      }
      return ReadPostgresText(v.text, col, out);
    case pb::BYTEA:
    case pb::DATE:
    case pb::TIME:
    case pb::TIMESTAMP:
    case pb::TIMESTAMPTZ:
    case pb::INTERVAL:
    case pb::UUID:
      if (v.kind != Value::kString) {
        return "column " + col.name() +
               " takes PostgreSQL's text form in a string (\"2026-12-06 12:00:00+00\", \"1 day "
               "02:00:00\", \"\\\\x0a0b\")";
      }
      return ReadPostgresText(v.text, col, out);
    default:
      return "column " + col.name() + " has a type a json_lines source cannot read";
  }
}

}  // namespace

std::optional<std::variant<SourceRecord, std::string>> ParseJsonLine(
    std::string_view line, const pb::Schema& schema, const std::vector<std::uint32_t>& key) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  if (!ValidUtf8(line)) return std::string("the line is not valid UTF-8");
  Parser p(line);
  if (!p.Eat('{')) return std::string("not a JSON object (a line is one object: {\"k\": 1, …})");
  std::unordered_map<std::string, int> column;  // schema column by name
  for (int c = 0; c < schema.columns_size(); ++c) column.emplace(schema.columns(c).name(), c);
  std::vector<std::optional<Value>> values(static_cast<std::size_t>(schema.columns_size()));
  std::unordered_set<std::string> seen;
  if (!p.Eat('}')) {
    for (;;) {
      if (p.AtEnd()) return std::string("the object is not closed");
      std::string name;
      if (!p.ParseString(&name)) return p.error;
      if (!seen.insert(name).second) return "the field " + Named(name) + " is there twice";
      if (!p.Eat(':')) return p.Fail("':' expected after a field name"), p.error;
      Value v;
      if (!p.ParseValue(&v, 1)) return p.error;
      if (auto it = column.find(name); it != column.end()) {
        values[static_cast<std::size_t>(it->second)] = std::move(v);
      }
      if (p.Eat('}')) break;
      if (!p.Eat(',')) return p.Fail("',' or '}' expected in the object"), p.error;
    }
  }
  if (!p.AtEnd()) return p.Fail("text after the object"), p.error;

  const std::vector<int> key_pos = KeyPositions(schema, key);
  bool del = false;
  if (!key.empty()) {
    bool nonkey_columns = false, nonkey_present = false;
    for (std::size_t c = 0; c < values.size(); ++c) {
      if (key_pos[c] >= 0) continue;
      nonkey_columns = true;
      nonkey_present = nonkey_present || values[c].has_value();
    }
    del = nonkey_columns && !nonkey_present;
  }
  auto datum = [&](std::size_t c, Datum* out) -> std::string {
    const pb::Column& col = schema.columns(static_cast<int>(c));
    if (!values[c]) {
      if (!col.nullable())
        return "the field " + Named(col.name()) + " is missing (column " + col.name() +
               " is not nullable)";
      return *out = Null{}, "";
    }
    return ToDatum(*values[c], col, out);
  };
  SourceRecord rec;
  if (del) {
    rec.kind = SourceRecord::Kind::kDelete;
    for (const std::uint32_t c : key) {
      Datum d;
      if (std::string why = datum(c, &d); !why.empty()) return why;
      rec.row.push_back(std::move(d));
    }
  } else {
    rec.kind = key.empty() ? SourceRecord::Kind::kUpdate : SourceRecord::Kind::kUpsert;
    for (std::size_t c = 0; c < values.size(); ++c) {
      Datum d;
      if (std::string why = datum(c, &d); !why.empty()) return why;
      rec.row.push_back(std::move(d));
    }
  }
  return rec;
}

}  // namespace tandem::ipc
