#include "base/datum_text.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tandem {

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
  out.reserve(text.size() + 2);
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

bool ParseInt64Text(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseFloat64Text(std::string_view s, double* out) {
  if (s == "nan") return *out = std::numeric_limits<double>::quiet_NaN(), true;
  if (s == "inf") return *out = std::numeric_limits<double>::infinity(), true;
  if (s == "-inf") return *out = -std::numeric_limits<double>::infinity(), true;
  if (s.empty() || s.size() > 512) return false;
  bool digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E') {
      return false;  // no spaces, hex, "infinity", …
    }
  }
  if (!digit || s[0] == '+') return false;
  char text[513];  // strtod reads a NUL-terminated copy
  s.copy(text, s.size());
  text[s.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (end != text + s.size()) return false;
  if (errno == ERANGE && std::isinf(v)) return false;  // overflow (an underflow is its value)
  *out = v;
  return true;
}

Result<std::size_t> ReadQuotedString(std::string_view text, std::string* value) {
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') return i + 1;
    if (c != '\\') {
      if (value) value->push_back(c);
      continue;
    }
    if (++i >= text.size()) break;
    char unescaped;
    switch (text[i]) {
      case '"':
        unescaped = '"';
        break;
      case '\\':
        unescaped = '\\';
        break;
      case 'n':
        unescaped = '\n';
        break;
      case 't':
        unescaped = '\t';
        break;
      default:
        return Status::InvalidArgument(std::string("unknown escape \\") + text[i] +
                                       " in a string (\\\" \\\\ \\n \\t)");
    }
    if (value) value->push_back(unescaped);
  }
  return Status::InvalidArgument("unterminated string");
}

namespace {

const char* ColumnKindName(ColumnType::Kind kind) {
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

// A float's text as the printer writes it: distinguishes 2.0 from the integer 2 without a type.
bool LooksLikeFloat(std::string_view t) {
  return t == "nan" || t == "inf" || t == "-inf" || t.find_first_of(".eE") != std::string::npos;
}

}  // namespace

Result<Datum> ParseDatumText(std::string_view text, const ColumnType& column) {
  // The reason, with the text and the column in front (built only on the way out).
  auto wrong = [&](std::string_view why) {
    std::string of;
    if (!column.name.empty()) {
      of = " for column " + std::string(column.name) + " (" + ColumnKindName(column.kind) + ")";
    }
    return Status::InvalidArgument("'" + std::string(text) + "'" + of + ": " + std::string(why));
  };
  if (text.empty()) return wrong("an empty datum (null, true, 12, 1.5, \"text\")");
  if (text == "null") {
    if (!column.nullable) return wrong("the column is not nullable");
    return Datum(Null{});
  }
  using Kind = ColumnType::Kind;
  if (text[0] == '"') {
    std::string s;
    auto length = ReadQuotedString(text, &s);
    if (!length.ok()) return wrong(length.status().message());
    if (*length != text.size()) return wrong("text after the closing quote of a string");
    if (column.kind != Kind::kAny && column.kind != Kind::kString) {
      return wrong("a string, not a " + std::string(ColumnKindName(column.kind)));
    }
    return Datum(std::move(s));
  }
  const bool is_bool = text == "true" || text == "false";
  std::int64_t i = 0;
  double f = 0;
  switch (column.kind) {
    case Kind::kBool:
      if (is_bool) return Datum(text == "true");
      return wrong("not a bool (true, false)");
    case Kind::kInt64:
      if (ParseInt64Text(text, &i)) return Datum(i);
      return wrong("not an int64");
    case Kind::kFloat64:
      if (ParseFloat64Text(text, &f)) return Datum(f);
      return wrong("not a float64 (1.5, -2, 1e9, nan, inf, -inf)");
    case Kind::kString:
      return wrong("strings are written in double quotes: \"" + std::string(text) + "\"");
    case Kind::kAny:
      break;
  }
  if (is_bool) return Datum(text == "true");
  if (ParseInt64Text(text, &i)) return Datum(i);
  if (LooksLikeFloat(text) && ParseFloat64Text(text, &f)) return Datum(f);
  return wrong(
      "not a datum (null, true, false, an integer, a float such as 1.5, or a string in double "
      "quotes such as \"" +
      std::string(text) + "\")");
}

namespace {

std::string WithoutBlanks(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

Result<std::vector<std::string>> SplitDatumList(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;  // the escaped byte (checked when the datum is read)
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(WithoutBlanks(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (quoted) {
    return Status::InvalidArgument("unterminated string in \"" + std::string(text) + "\"");
  }
  out.push_back(WithoutBlanks(text.substr(start)));
  return out;
}

}  // namespace tandem
