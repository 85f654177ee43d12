#include "tools/common/format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/json.h"

namespace tandem::tools {

// ---------------------------------------------------------------------------------------------
// JsonWriter

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::Key(std::string_view key) {
  Separate();
  out_ += JsonQuote(key);
  out_ += ':';
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::String(std::string_view value) {
  Separate();
  out_ += JsonQuote(value);
  return *this;
}
JsonWriter& JsonWriter::Int(std::int64_t value) {
  Separate();
  out_ += std::to_string(value);
  return *this;
}
JsonWriter& JsonWriter::UInt(std::uint64_t value) {
  Separate();
  out_ += std::to_string(value);
  return *this;
}
JsonWriter& JsonWriter::Double(double value) {
  if (!std::isfinite(value)) return String(FloatText(value));
  Separate();
  out_ += FloatText(value);
  return *this;
}
JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_ += value ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::FrontierValue(Frontier frontier) {
  return frontier.empty() ? Null() : UInt(frontier.time());
}
JsonWriter& JsonWriter::DatumValue(const Datum& d) {
  switch (d.index()) {
    case 0:
      return Null();
    case 1:
      return Bool(std::get<bool>(d));
    case 2:
      return Int(std::get<std::int64_t>(d));
    case 3:
      return Double(std::get<double>(d));
    default:
      return String(std::get<std::string>(d));
  }
}
JsonWriter& JsonWriter::RowValue(const Row& row) {
  BeginArray();
  for (const Datum& d : row) DatumValue(d);
  return EndArray();
}
JsonWriter& JsonWriter::Raw(std::string_view json) {
  Separate();
  out_ += json;
  return *this;
}

std::string JsonError(std::string_view message, int exit_code) {
  JsonWriter json;
  json.BeginObject().Key("error").String(message).Key("exit_code").Int(exit_code).EndObject();
  return json.str();
}

// ---------------------------------------------------------------------------------------------
// Datums as text

std::string FloatText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string QuoteString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string DatumText(const Datum& d) {
  switch (d.index()) {
    case 0:
      return "null";
    case 1:
      return std::get<bool>(d) ? "true" : "false";
    case 2:
      return std::to_string(std::get<std::int64_t>(d));
    case 3:
      return FloatText(std::get<double>(d));
    default:
      return QuoteString(std::get<std::string>(d));
  }
}

std::string RowText(const Row& row) {
  std::string s = "(";
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) s += ", ";
    s += DatumText(row[i]);
  }
  return s + ")";
}

namespace {

std::string_view Trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

const char* KindName(ColumnType::Kind kind) {
  switch (kind) {
    case ColumnType::Kind::kBool:
      return "bool";
    case ColumnType::Kind::kInt64:
      return "int64";
    case ColumnType::Kind::kFloat64:
      return "float64";
    case ColumnType::Kind::kString:
      return "string";
    default:
      return "any";
  }
}

// A quoted string (text begins with '"'): its value, or why not.
Result<std::string> Unquote(std::string_view text) {
  std::string out;
  std::size_t i = 1;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') break;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= text.size()) break;
    switch (text[i]) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      default:
        return Status::InvalidArgument(std::string("unknown escape \\") + text[i] +
                                       " in a string (\\\" \\\\ \\n \\t)");
    }
  }
  if (i >= text.size()) return Status::InvalidArgument("unterminated string");
  if (i + 1 != text.size()) {
    return Status::InvalidArgument("text after the closing quote of a string");
  }
  return out;
}

std::optional<std::int64_t> AsInt(std::string_view t) {
  std::int64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<double> AsFloat(std::string_view t) {
  if (t == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (t == "inf") return std::numeric_limits<double>::infinity();
  if (t == "-inf") return -std::numeric_limits<double>::infinity();
  if (t.empty() || t.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
  const std::string s(t);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  // strtod also reads "nan(...)", "infinity", hex floats: not the datum syntax.
  if (s.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
  return v;
}

bool LooksLikeFloat(std::string_view t) {
  return t == "nan" || t == "inf" || t == "-inf" || t.find_first_of(".eE") != std::string::npos;
}

}  // namespace

Result<Datum> ParseDatumText(std::string_view raw, const ColumnType& column) {
  const std::string_view text = Trim(raw);
  const std::string of = column.name.empty()
                             ? std::string()
                             : " for column " + column.name + " (" + KindName(column.kind) + ")";
  auto wrong = [&](const std::string& why) {
    return Status::InvalidArgument("'" + std::string(text) + "'" + of + ": " + why);
  };
  if (text.empty()) return wrong("an empty datum (null, true, 12, 1.5, \"text\")");
  if (text == "null") {
    if (!column.nullable) return wrong("the column is not nullable");
    return Datum(Null{});
  }
  using Kind = ColumnType::Kind;
  if (text[0] == '"') {
    auto s = Unquote(text);
    if (!s.ok()) return wrong(s.status().message());
    if (column.kind != Kind::kAny && column.kind != Kind::kString) {
      return wrong("a string, not a " + std::string(KindName(column.kind)));
    }
    return Datum(std::move(*s));
  }
  const bool is_bool = text == "true" || text == "false";
  const auto as_int = AsInt(text);
  const auto as_float = AsFloat(text);
  switch (column.kind) {
    case Kind::kBool:
      if (is_bool) return Datum(text == "true");
      return wrong("not a bool (true, false)");
    case Kind::kInt64:
      if (as_int) return Datum(*as_int);
      return wrong("not an int64");
    case Kind::kFloat64:
      if (as_float) return Datum(*as_float);
      return wrong("not a float64 (1.5, -2, 1e9, nan, inf, -inf)");
    case Kind::kString:
      return wrong("strings are written in double quotes: \"" + std::string(text) + "\"");
    case Kind::kAny:
      break;
  }
  if (is_bool) return Datum(text == "true");
  if (as_int) return Datum(*as_int);
  if (as_float && LooksLikeFloat(text)) return Datum(*as_float);
  return wrong(
      "not a datum (null, true, false, an integer, a float such as 1.5, or a string in double "
      "quotes such as \"" +
      std::string(text) + "\")");
}

Result<std::vector<std::string>> SplitDatumList(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      cur += c;
      if (c == '\\' && i + 1 < text.size()) {
        cur += text[++i];
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      cur += c;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (quoted) {
    return Status::InvalidArgument("unterminated string in \"" + std::string(text) + "\"");
  }
  out.push_back(std::move(cur));
  return out;
}

}  // namespace tandem::tools
