#include "base/datum_text.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <variant>

#include "base/check.h"
#include "base/utf8.h"

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

namespace {

// The type words of the typed literals, by the datum's index in the variant (empty: none).
constexpr std::string_view kTypedLiteralWord[] = {
    "",         "",    "", "", "", "numeric", "bytea", "date", "time", "timestamp", "timestamptz",
    "interval", "uuid"};
static_assert(std::size(kTypedLiteralWord) == std::variant_size_v<Datum>);

constexpr char kHexDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view TrimBlanks(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n\f\v");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n\f\v");
  return s.substr(b, e - b + 1);
}

std::string AsciiLowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// PostgreSQL's float output (float8out/float4out with extra_float_digits 1): the shortest digits
// that read back, fixed-point when the decimal exponent is in [-4, 15) (float4: [-4, 6)), else
// d.ddde+XX with at least two exponent digits; NaN, Infinity, -Infinity.
std::string PostgresFloatText(double v, bool float4) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  char buf[64];
  const auto r = float4 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v),
                                        std::chars_format::scientific)
                        : std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));  // -d.ddde+XX
  const bool negative = sci[0] == '-';
  const auto e_at = sci.find('e');
  std::string digits;
  for (char c : sci.substr(negative ? 1 : 0, e_at - (negative ? 1 : 0))) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_at + (sci[e_at + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < (float4 ? 6 : 15)) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out += digits + std::string(static_cast<std::size_t>(exponent + 1) - digits.size(), '0');
    } else {
      out += digits.substr(0, static_cast<std::size_t>(exponent) + 1) + "." +
             digits.substr(static_cast<std::size_t>(exponent) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  const int magnitude = exponent < 0 ? -exponent : exponent;
  out += std::string(exponent < 0 ? "e-" : "e+") + (magnitude < 10 ? "0" : "") +
         std::to_string(magnitude);
  return out;
}

}  // namespace

std::string ByteaText(std::string_view bytes) {
  std::string out = "\\x";
  out.reserve(2 + 2 * bytes.size());
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kHexDigits[b >> 4]);
    out.push_back(kHexDigits[b & 0xF]);
  }
  return out;
}

Result<std::string> ParseByteaText(std::string_view text) {
  std::string out;
  if (text.substr(0, 2) == "\\x") {
    // The hex form: pairs of hex digits, blanks allowed between pairs.
    for (std::size_t i = 2; i < text.size();) {
      const char c = text[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++i;
        continue;
      }
      const int hi = HexValue(c);
      if (hi < 0) {
        return Status::DataError(std::string("invalid hexadecimal digit: \"") + c + "\"");
      }
      if (i + 1 >= text.size()) {
        return Status::DataError("invalid hexadecimal data: odd number of digits");
      }
      const int lo = HexValue(text[i + 1]);
      if (lo < 0) {
        return Status::DataError(std::string("invalid hexadecimal digit: \"") + text[i + 1] + "\"");
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
    return out;
  }
  // The escape form: bytes as they are, \\ for a backslash, \ooo (octal) for any byte.
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\\') {
      out.push_back('\\');
      ++i;
      continue;
    }
    if (i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' && text[i + 2] >= '0' &&
        text[i + 2] <= '7' && text[i + 3] >= '0' && text[i + 3] <= '7') {
      out.push_back(static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                      (text[i + 3] - '0')));
      i += 3;
      continue;
    }
    return Status::DataError("invalid input syntax for type bytea");
  }
  return out;
}

std::string UuidText(const Uuid& uuid) {
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < uuid.bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHexDigits[uuid.bytes[i] >> 4]);
    out.push_back(kHexDigits[uuid.bytes[i] & 0xF]);
  }
  return out;
}

Result<Uuid> ParseUuidText(std::string_view text) {
  // As PostgreSQL's uuid_in: optional braces around; 32 hex digits, a hyphen allowed after any
  // group of four.
  auto bad = [&] {
    return Status::DataError("invalid input syntax for type uuid: \"" + std::string(text) + "\"");
  };
  std::string_view t = text;
  const bool braces = !t.empty() && t.front() == '{';
  if (braces) {
    if (t.size() < 2 || t.back() != '}') return bad();
    t = t.substr(1, t.size() - 2);
  }
  Uuid u;
  std::size_t at = 0;
  for (int digit = 0; digit < 32; ++digit) {
    if (digit > 0 && digit % 4 == 0 && at < t.size() && t[at] == '-') ++at;
    if (at >= t.size() || HexValue(t[at]) < 0) return bad();
    const int v = HexValue(t[at++]);
    auto& byte = u.bytes[static_cast<std::size_t>(digit / 2)];
    byte = static_cast<std::uint8_t>(digit % 2 == 0 ? v << 4 : byte | v);
  }
  if (at != t.size()) return bad();
  return u;
}

std::string PostgresOutput(const Datum& d) {
  switch (d.index()) {
    case 0:
      break;
    case 1:
      return std::get<bool>(d) ? "t" : "f";
    case 2:
      return std::to_string(std::get<std::int64_t>(d));
    case 3:
      return PostgresFloatText(std::get<double>(d), false);
    case 4:
      return std::get<std::string>(d);
    case 5:
      return NumericText(std::get<Numeric>(d));
    case 6:
      return ByteaText(std::get<Bytes>(d).bytes);
    case 7:
      return DateText(std::get<Date>(d));
    case 8:
      return TimeText(std::get<TimeOfDay>(d));
    case 9:
      return TimestampText(std::get<Timestamp>(d));
    case 10:
      return TimestampTzText(std::get<TimestampTz>(d));
    case 11:
      return IntervalText(std::get<Interval>(d));
    case 12:
      return UuidText(std::get<Uuid>(d));
  }
  TANDEM_CHECK(false, "PostgresOutput of null (or of a datum of an unknown kind)");
  return {};
}

std::string PostgresFloat4Output(double v) { return PostgresFloatText(v, true); }

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
    case 4:
      return QuoteString(std::get<std::string>(d));
    default:  // the typed literals: a type word, then the PostgreSQL text (never holds a quote)
      return std::string(kTypedLiteralWord[d.index()]) + " '" + PostgresOutput(d) + "'";
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

std::string ColumnTypeName(const ColumnType& column) {
  using Kind = ColumnType::Kind;
  switch (column.kind) {
    case Kind::kAny:
      return "any";
    case Kind::kBool:
      return "bool";
    case Kind::kInt64:
      return "int64";
    case Kind::kFloat64:
      return "float64";
    case Kind::kString:
      if (column.length > 0) {
        return std::string(column.blank_padded ? "char(" : "varchar(") +
               std::to_string(column.length) + ")";
      }
      return "string";
    case Kind::kInt16:
      return "int2";
    case Kind::kInt32:
      return "int4";
    case Kind::kFloat32:
      return "float4";
    case Kind::kNumeric:
      if (column.precision > 0) {
        return "numeric(" + std::to_string(column.precision) + "," + std::to_string(column.scale) +
               ")";
      }
      return "numeric";
    case Kind::kBytea:
      return "bytea";
    case Kind::kDate:
      return "date";
    case Kind::kTime:
      return "time";
    case Kind::kTimestamp:
      return "timestamp";
    case Kind::kTimestampTz:
      return "timestamptz";
    case Kind::kInterval:
      return "interval";
    case Kind::kUuid:
      return "uuid";
  }
  return "any";
}

namespace {

// A float's text as the printer writes it: distinguishes 2.0 from the integer 2 without a type.
bool LooksLikeFloat(std::string_view t) {
  return t == "nan" || t == "inf" || t == "-inf" || t.find_first_of(".eE") != std::string::npos;
}

// The column kind whose datums a typed literal's word stands for (kAny: not a type word).
ColumnType::Kind TypedLiteralKind(std::string_view word) {
  using Kind = ColumnType::Kind;
  if (word == "numeric") return Kind::kNumeric;
  if (word == "bytea") return Kind::kBytea;
  if (word == "date") return Kind::kDate;
  if (word == "time") return Kind::kTime;
  if (word == "timestamp") return Kind::kTimestamp;
  if (word == "timestamptz") return Kind::kTimestampTz;
  if (word == "interval") return Kind::kInterval;
  if (word == "uuid") return Kind::kUuid;
  return Kind::kAny;
}

// The PostgreSQL type name in its input errors ("invalid input syntax for type integer").
const char* PostgresTypeName(ColumnType::Kind kind) {
  using Kind = ColumnType::Kind;
  switch (kind) {
    case Kind::kBool:
      return "boolean";
    case Kind::kInt16:
      return "smallint";
    case Kind::kInt32:
      return "integer";
    case Kind::kInt64:
      return "bigint";
    case Kind::kFloat32:
      return "real";
    case Kind::kFloat64:
      return "double precision";
    default:
      return "text";
  }
}

// PostgreSQL's boolin: t/true/yes/on/1, f/false/no/off/0, any case, a unique prefix of the words.
bool ParsePostgresBool(std::string_view text, bool* out) {
  const std::string t = AsciiLowercase(TrimBlanks(text));
  if (t.empty()) return false;
  auto prefix_of = [&](std::string_view word, std::size_t min) {
    return t.size() >= min && t.size() <= word.size() && word.substr(0, t.size()) == t;
  };
  if (prefix_of("true", 1) || prefix_of("yes", 1) || t == "on" || t == "1") {
    return *out = true, true;
  }
  if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || t == "0") {
    return *out = false, true;
  }
  return false;
}

}  // namespace

Result<Datum> FitToColumn(Datum datum, const ColumnType& column) {
  using Kind = ColumnType::Kind;
  switch (column.kind) {
    case Kind::kInt16:
    case Kind::kInt32: {
      const auto* v = std::get_if<std::int64_t>(&datum);
      if (v == nullptr) break;
      const std::int64_t limit = column.kind == Kind::kInt16 ? 32768 : 2147483648;
      if (*v < -limit || *v >= limit) {
        return Status::DataError(column.kind == Kind::kInt16 ? "smallint out of range"
                                                             : "integer out of range");
      }
      return datum;
    }
    case Kind::kFloat32: {
      const auto* v = std::get_if<double>(&datum);
      if (v == nullptr) break;
      if (std::isnan(*v) || std::isinf(*v)) return datum;
      // Overflow is a value that rounds to infinity as a float (FLT_MAX's own text rounds to it).
      const float f = static_cast<float>(*v);
      if (std::isinf(f)) return Status::DataError("value out of range: overflow");
      if (f == 0 && *v != 0) return Status::DataError("value out of range: underflow");
      return Datum(static_cast<double>(f));
    }
    case Kind::kNumeric: {
      const auto* n = std::get_if<Numeric>(&datum);
      if (n == nullptr) break;
      if (column.precision <= 0) return datum;
      if (column.precision > kNumericMaxDigits || column.scale < 0 ||
          column.scale > column.precision) {
        return Status::InvalidArgument("the column's type " + ColumnTypeName(column) +
                                       " is no numeric(p,s) (p 1 to 38, s 0 to p)");
      }
      auto fitted = NumericApplyTypmod(*n, column.precision, column.scale);
      if (!fitted.ok()) return fitted.status();
      return Datum(*fitted);
    }
    case Kind::kString: {
      auto* s = std::get_if<std::string>(&datum);
      if (s == nullptr) break;
      if (column.length <= 0) return datum;
      const auto length = static_cast<std::size_t>(column.length);
      const std::size_t chars = Utf8CodePoints(*s);
      if (chars > length) {
        // PostgreSQL cuts blanks beyond the length and refuses anything else.
        const std::size_t cut = Utf8CodePointOffset(*s, length);
        if (s->find_first_not_of(' ', cut) != std::string::npos) {
          return Status::DataError(std::string("value too long for type ") +
                                   (column.blank_padded ? "character(" : "character varying(") +
                                   std::to_string(column.length) + ")");
        }
        s->resize(cut);
      } else if (column.blank_padded) {
        s->append(length - chars, ' ');
      }
      return datum;
    }
    default:
      return datum;
  }
  return Status::InvalidArgument("a datum of another kind than its column's (" +
                                 ColumnTypeName(column) + ")");
}

Result<Datum> ParsePostgresText(std::string_view text, const ColumnType& column) {
  using Kind = ColumnType::Kind;
  auto syntax = [&](const char* type) {
    return Status::DataError(std::string("invalid input syntax for type ") + type + ": \"" +
                             std::string(text) + "\"");
  };
  // PostgreSQL's words for a number its type cannot hold ('value "40000" is out of range for type
  // smallint', '"1e39" is out of range for type real').
  auto out_of_range = [&](const char* opening) {
    return Status::DataError(opening + std::string(text) + "\" is out of range for type " +
                             PostgresTypeName(column.kind));
  };
  Result<Datum> value = Status::InvalidArgument("no type to read '" + std::string(text) + "' as");
  switch (column.kind) {
    case Kind::kAny:
      return value;
    case Kind::kBool: {
      bool b = false;
      if (!ParsePostgresBool(text, &b)) return syntax("boolean");
      return Datum(b);
    }
    case Kind::kInt16:
    case Kind::kInt32:
    case Kind::kInt64: {
      std::string_view t = TrimBlanks(text);
      const bool plus = !t.empty() && t[0] == '+';
      if (plus) t.remove_prefix(1);
      if (plus && !t.empty() && t[0] == '-') return syntax(PostgresTypeName(column.kind));
      std::int64_t i = 0;
      if (!ParseInt64Text(t, &i)) {
        // Digits that do not fit are out of range; anything else is not an integer.
        const std::string_view digits = !t.empty() && t[0] == '-' ? t.substr(1) : t;
        if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos) {
          return out_of_range("value \"");
        }
        return syntax(PostgresTypeName(column.kind));
      }
      if (!FitToColumn(Datum(i), column).ok()) return out_of_range("value \"");
      value = Datum(i);
      break;
    }
    case Kind::kFloat32:
    case Kind::kFloat64: {
      const std::string lower = AsciiLowercase(TrimBlanks(text));
      std::string_view t = lower;
      const bool plus = !t.empty() && t[0] == '+';
      if (plus) t.remove_prefix(1);
      if (plus && !t.empty() && t[0] == '-') return syntax(PostgresTypeName(column.kind));
      double f = 0;
      if (t == "nan") {
        f = std::numeric_limits<double>::quiet_NaN();
      } else if (t == "infinity" || t == "inf") {
        f = std::numeric_limits<double>::infinity();
      } else if (t == "-infinity" || t == "-inf") {
        f = -std::numeric_limits<double>::infinity();
      } else if (!ParseFloat64Text(t, &f)) {
        // A number beyond the range of a double, or not a number at all.
        const std::string body(t);
        char* end = nullptr;
        const double ignored = std::strtod(body.c_str(), &end);
        static_cast<void>(ignored);
        if (!body.empty() && end == body.c_str() + body.size() &&
            body.find_first_of("0123456789") != std::string::npos) {
          return out_of_range("\"");
        }
        return syntax(PostgresTypeName(column.kind));
      }
      if (!FitToColumn(Datum(f), column).ok()) return out_of_range("\"");
      value = Datum(f);
      break;
    }
    case Kind::kString: {
      if (const auto bad = FindInvalidUtf8(text)) {
        return Status::DataError(InvalidUtf8Message(text, *bad));
      }
      value = Datum(std::string(text));
      break;
    }
    case Kind::kNumeric: {
      auto n = ParseNumeric(text);
      if (!n.ok()) return n.status();
      value = Datum(*n);
      break;
    }
    case Kind::kBytea: {
      auto b = ParseByteaText(text);
      if (!b.ok()) return b.status();
      return Datum(Bytes{std::move(*b)});
    }
    case Kind::kDate: {
      auto d = ParseDate(text);
      if (!d.ok()) return d.status();
      return Datum(*d);
    }
    case Kind::kTime: {
      auto t = ParseTime(text);
      if (!t.ok()) return t.status();
      return Datum(*t);
    }
    case Kind::kTimestamp: {
      auto t = ParseTimestamp(text);
      if (!t.ok()) return t.status();
      return Datum(*t);
    }
    case Kind::kTimestampTz: {
      auto t = ParseTimestampTz(text);
      if (!t.ok()) return t.status();
      return Datum(*t);
    }
    case Kind::kInterval: {
      auto i = ParseInterval(text);
      if (!i.ok()) return i.status();
      return Datum(*i);
    }
    case Kind::kUuid: {
      auto u = ParseUuidText(TrimBlanks(text));
      if (!u.ok()) return u.status();
      return Datum(*u);
    }
  }
  return FitToColumn(std::move(*value), column);
}

Result<Datum> ParseDatumText(std::string_view text, const ColumnType& column) {
  // The reason, with the text and the column in front (built only on the way out).
  auto wrong = [&](std::string_view why) {
    std::string of;
    if (!column.name.empty()) {
      of = " for column " + std::string(column.name) + " (" + ColumnTypeName(column) + ")";
    }
    return Status::InvalidArgument("'" + std::string(text) + "'" + of + ": " + std::string(why));
  };
  // A value of the column's kind brought to its type (a refusal in PostgreSQL's words).
  auto fit = [&](Datum d) -> Result<Datum> {
    auto fitted = FitToColumn(std::move(d), column);
    if (!fitted.ok()) return wrong(fitted.status().message());
    return fitted;
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
      return wrong("a string, not a " + ColumnTypeName(column));
    }
    return fit(Datum(std::move(s)));
  }
  // A typed literal: numeric '12.50', date '2026-12-06', …
  if (const auto space = text.find(" '");
      space != std::string_view::npos && text.back() == '\'' && text.size() >= space + 3) {
    const Kind kind = TypedLiteralKind(text.substr(0, space));
    const std::string_view inner = text.substr(space + 2, text.size() - space - 3);
    if (kind != Kind::kAny && inner.find('\'') == std::string_view::npos) {
      if (column.kind != Kind::kAny && column.kind != kind) {
        return wrong("a " + std::string(text.substr(0, space)) + ", not a " +
                     ColumnTypeName(column));
      }
      ColumnType as = column;
      as.kind = kind;
      auto d = ParsePostgresText(inner, as);
      if (!d.ok()) return wrong(d.status().message());
      return d;
    }
  }
  const bool is_bool = text == "true" || text == "false";
  std::int64_t i = 0;
  double f = 0;
  switch (column.kind) {
    case Kind::kBool:
      if (is_bool) return Datum(text == "true");
      return wrong("not a bool (true, false)");
    case Kind::kInt64:
    case Kind::kInt16:
    case Kind::kInt32:
      if (ParseInt64Text(text, &i)) return fit(Datum(i));
      return wrong("not an " + ColumnTypeName(column));
    case Kind::kFloat64:
    case Kind::kFloat32:
      if (ParseFloat64Text(text, &f)) return fit(Datum(f));
      return wrong("not a " + ColumnTypeName(column) + " (1.5, -2, 1e9, nan, inf, -inf)");
    case Kind::kString:
      return wrong("strings are written in double quotes: \"" + std::string(text) + "\"");
    case Kind::kNumeric:
    case Kind::kBytea:
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
    case Kind::kTimestampTz:
    case Kind::kInterval:
    case Kind::kUuid: {
      auto d = ParsePostgresText(text, column);
      if (!d.ok()) return wrong(d.status().message());
      return d;
    }
    case Kind::kAny:
      break;
  }
  if (is_bool) return Datum(text == "true");
  if (ParseInt64Text(text, &i)) return Datum(i);
  if (LooksLikeFloat(text) && ParseFloat64Text(text, &f)) return Datum(f);
  return wrong(
      "not a datum (null, true, false, an integer, a float such as 1.5, a string in double "
      "quotes such as \"" +
      std::string(text) + "\", or a typed literal such as numeric '12.50' or date '2026-12-06')");
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
  bool literal = false;  // inside a typed literal's single quotes (which hold no quote)
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;  // the escaped byte (checked when the datum is read)
      } else if (c == '"') {
        quoted = false;
      }
    } else if (literal) {
      literal = c != '\'';
    } else if (c == '"') {
      quoted = true;
    } else if (c == '\'') {
      literal = true;
    } else if (c == ',') {
      out.push_back(WithoutBlanks(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (quoted || literal) {
    return Status::InvalidArgument("unterminated string in \"" + std::string(text) + "\"");
  }
  out.push_back(WithoutBlanks(text.substr(start)));
  return out;
}

}  // namespace tandem
