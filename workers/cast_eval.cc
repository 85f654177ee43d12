#include "workers/cast_eval.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <system_error>
#include <utility>

#include "base/check.h"
#include "base/datetime.h"
#include "base/numeric.h"
#include "base/utf8.h"
#include "ipc/func_typing.h"
#include "workers/arith.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

template <typename T>
const T& CastOperand(const Datum& d) {
  TANDEM_CHECK(std::holds_alternative<T>(d), "cast operand is not of its validated type");
  return std::get<T>(d);
}

bool IsCastIntegerType(pb::ScalarType type) {
  return type == pb::INT16 || type == pb::INT32 || type == pb::INT64;
}

// A C-locale isspace, as PostgreSQL's input functions skip blanks.
bool IsCastSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string CastInvalidInput(pb::ScalarType type, std::string_view text) {
  return "invalid input syntax for type " + ipc::SqlTypeName(type) + ": \"" + std::string(text) +
         "\"";
}

// ---- output functions -------------------------------------------------------------------------

// PostgreSQL's float output with extra_float_digits = 1 (the default): the shortest digits that
// read back to the same value, in fixed notation when the decimal exponent is in [-4, 15) (float8)
// or [-4, 6) (float4), otherwise as d.ddde+XX.
std::string PgFloatText(double value, bool is_float4) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  std::array<char, 64> buf{};
  const std::to_chars_result res =
      is_float4 ? std::to_chars(buf.data(), buf.data() + buf.size(), static_cast<float>(value),
                                std::chars_format::scientific)
                : std::to_chars(buf.data(), buf.data() + buf.size(), value,
                                std::chars_format::scientific);
  TANDEM_CHECK(res.ec == std::errc(), "to_chars of a float failed");
  const std::string_view sci(buf.data(), static_cast<std::size_t>(res.ptr - buf.data()));
  const bool negative = sci[0] == '-';
  const std::size_t e_at = sci.find('e');
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e_at; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_at + (sci[e_at + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                  exponent);
  std::string out = negative ? "-" : "";
  const int max_fixed = is_float4 ? 6 : 15;
  if (exponent < -4 || exponent >= max_fixed) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int magnitude = exponent < 0 ? -exponent : exponent;
    out += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) out += '0';
    return out + std::to_string(magnitude);
  }
  if (exponent < 0) {
    return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  }
  const std::size_t whole = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= whole) return out + digits + std::string(whole - digits.size(), '0');
  return out + digits.substr(0, whole) + "." + digits.substr(whole);
}

constexpr char kCastHexDigits[] = "0123456789abcdef";

std::string CastByteaText(const std::string& bytes) {
  std::string out = "\\x";
  out.reserve(2 + 2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kCastHexDigits[b >> 4];
    out += kCastHexDigits[b & 15];
  }
  return out;
}

std::string CastUuidText(const Uuid& uuid) {
  std::string out;
  for (std::size_t i = 0; i < uuid.bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kCastHexDigits[uuid.bytes[i] >> 4];
    out += kCastHexDigits[uuid.bytes[i] & 15];
  }
  return out;
}

// ---- input functions --------------------------------------------------------------------------

// PostgreSQL's boolin: blanks around; a prefix of true/false/yes/no, on/off (two letters at
// least), 1/0, any case.
Result<Datum> CastParseBoolText(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && IsCastSpace(text[begin])) ++begin;
  while (end > begin && IsCastSpace(text[end - 1])) --end;
  const std::string_view v = text.substr(begin, end - begin);
  auto prefix_of = [&](std::string_view word, std::size_t at_least) {
    if (v.size() < at_least || v.size() > word.size()) return false;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const char c = (v[i] >= 'A' && v[i] <= 'Z') ? static_cast<char>(v[i] - 'A' + 'a') : v[i];
      if (c != word[i]) return false;
    }
    return true;
  };
  if (prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || v == "1") {
    return Datum(true);
  }
  if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || v == "0") {
    return Datum(false);
  }
  return Status::DataError(CastInvalidInput(pb::BOOL, text));
}

// PostgreSQL's pg_strtoint16/32/64: blanks around, a sign, at least one decimal digit.
Result<Datum> CastParseIntegerText(std::string_view text, pb::ScalarType type) {
  const IntegerRange range = IntegerRangeOf(type);
  std::size_t i = 0;
  while (i < text.size() && IsCastSpace(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (i == text.size() || text[i] < '0' || text[i] > '9') {
    return Status::DataError(CastInvalidInput(type, text));
  }
  // Accumulated negatively: the most negative value has no positive counterpart.
  std::int64_t acc = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (__builtin_mul_overflow(acc, 10, &acc) || __builtin_sub_overflow(acc, text[i] - '0', &acc) ||
        acc < range.min) {
      return Status::DataError("value \"" + std::string(text) + "\" is out of range for type " +
                               ipc::SqlTypeName(type));
    }
  }
  while (i < text.size() && IsCastSpace(text[i])) ++i;
  if (i != text.size()) return Status::DataError(CastInvalidInput(type, text));
  if (!negative) {
    if (acc < -range.max) {
      return Status::DataError("value \"" + std::string(text) + "\" is out of range for type " +
                               ipc::SqlTypeName(type));
    }
    acc = -acc;
  }
  return Datum(acc);
}

// PostgreSQL's float8in / float4in: blanks around, strtod's syntax (NaN, Infinity, inf, hex
// included); a text beyond the range, or one that underflows to zero, is out of range (a
// denormal is a value).
Result<Datum> CastParseFloatText(std::string_view text, pb::ScalarType type) {
  const bool is_float4 = type == pb::FLOAT32;
  const std::string copy(text);  // strtod needs a terminator
  const char* begin = copy.c_str();
  while (IsCastSpace(*begin)) ++begin;
  if (*begin == '\0') return Status::DataError(CastInvalidInput(type, text));
  char* end = nullptr;
  errno = 0;
  double value = 0;
  if (is_float4) {
    value = static_cast<double>(std::strtof(begin, &end));
  } else {
    value = std::strtod(begin, &end);
  }
  if (end == begin) return Status::DataError(CastInvalidInput(type, text));
  if (errno == ERANGE && (value == 0.0 || std::isinf(value))) {
    return Status::DataError("\"" + copy + "\" is out of range for type " + ipc::SqlTypeName(type));
  }
  while (IsCastSpace(*end)) ++end;
  if (*end != '\0' || static_cast<std::size_t>(end - copy.c_str()) != copy.size()) {
    return Status::DataError(CastInvalidInput(type, text));
  }
  return Datum(value);
}

int CastHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The UTF-8 character that starts at text[at] (for messages).
std::string_view CastCharAt(std::string_view text, std::size_t at) {
  std::size_t end = at + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return text.substr(at, end - at);
}

// PostgreSQL's byteain: "\x" and pairs of hex digits (blanks between pairs), or the escape
// format (\\ and \ooo octal; any other byte as itself).
Result<Datum> CastParseByteaText(std::string_view text) {
  Bytes out;
  if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x') {
    std::size_t i = 2;
    while (i < text.size()) {
      const char c = text[i];
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        ++i;
        continue;
      }
      const int high = CastHexValue(c);
      if (high < 0) {
        return Status::DataError("invalid hexadecimal digit: \"" +
                                 std::string(CastCharAt(text, i)) + "\"");
      }
      if (++i == text.size()) {
        return Status::DataError("invalid hexadecimal data: odd number of digits");
      }
      const int low = CastHexValue(text[i]);
      if (low < 0) {
        return Status::DataError("invalid hexadecimal digit: \"" +
                                 std::string(CastCharAt(text, i)) + "\"");
      }
      ++i;
      out.bytes += static_cast<char>(high * 16 + low);
    }
    return Datum(std::move(out));
  }
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '\\') {
      out.bytes += text[i++];
      continue;
    }
    if (i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' && text[i + 2] >= '0' &&
        text[i + 2] <= '7' && text[i + 3] >= '0' && text[i + 3] <= '7') {
      out.bytes += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                     (text[i + 3] - '0'));
      i += 4;
    } else if (i + 1 < text.size() && text[i + 1] == '\\') {
      out.bytes += '\\';
      i += 2;
    } else {
      return Status::DataError("invalid input syntax for type bytea");
    }
  }
  return Datum(std::move(out));
}

// PostgreSQL's uuid_in: 32 hex digits, a '-' allowed after any group of four, optionally in
// braces; nothing else (no blanks).
Result<Datum> CastParseUuidText(std::string_view text) {
  Uuid out;
  std::size_t i = 0;
  const bool braces = !text.empty() && text[0] == '{';
  if (braces) ++i;
  for (std::size_t b = 0; b < out.bytes.size(); ++b) {
    if (i + 1 >= text.size() || CastHexValue(text[i]) < 0 || CastHexValue(text[i + 1]) < 0) {
      return Status::DataError(CastInvalidInput(pb::UUID, text));
    }
    out.bytes[b] =
        static_cast<std::uint8_t>(CastHexValue(text[i]) * 16 + CastHexValue(text[i + 1]));
    i += 2;
    if (i < text.size() && text[i] == '-' && b % 2 == 1 && b + 1 < out.bytes.size()) ++i;
  }
  if (braces) {
    if (i >= text.size() || text[i] != '}')
      return Status::DataError(CastInvalidInput(pb::UUID, text));
    ++i;
  }
  if (i != text.size()) return Status::DataError(CastInvalidInput(pb::UUID, text));
  return Datum(out);
}

template <typename T>
Result<Datum> CastAsDatum(Result<T> r) {
  if (!r.ok()) return r.status();
  return Datum(std::move(r).value());
}

Result<Datum> CastFromText(const std::string& text, pb::ScalarType to) {
  switch (to) {
    case pb::BOOL:
      return CastParseBoolText(text);
    case pb::INT16:
    case pb::INT32:
    case pb::INT64:
      return CastParseIntegerText(text, to);
    case pb::FLOAT32:
    case pb::FLOAT64:
      return CastParseFloatText(text, to);
    case pb::NUMERIC:
      return CastAsDatum(ParseNumeric(text));
    case pb::STRING:
      return Datum(text);
    case pb::BYTEA:
      return CastParseByteaText(text);
    case pb::DATE:
      return CastAsDatum(ParseDate(text));
    case pb::TIME:
      return CastAsDatum(ParseTime(text));
    case pb::TIMESTAMP:
      return CastAsDatum(ParseTimestamp(text));
    case pb::TIMESTAMPTZ:
      return CastAsDatum(ParseTimestampTz(text));
    case pb::INTERVAL:
      return CastAsDatum(ParseInterval(text));
    case pb::UUID:
      return CastParseUuidText(text);
    default:
      TANDEM_CHECK(false, "cast from text to a type validation does not know");
  }
  return Status::Internal("unreachable");
}

// ---- the numeric family -----------------------------------------------------------------------

// PostgreSQL's float → integer: rint (half to even), then the range [min, max] — tested as
// min <= v < -min, which is exact in binary floating point.
Result<Datum> FloatToInteger(double value, pb::ScalarType to) {
  const IntegerRange range = IntegerRangeOf(to);
  const double rounded = std::rint(value);
  const double low = static_cast<double>(range.min);
  if (std::isnan(rounded) || !(rounded >= low && rounded < -low)) {
    return Status::DataError(range.out_of_range);
  }
  return Datum(static_cast<std::int64_t>(rounded));
}

// float4 → numeric: PostgreSQL prints the float with FLT_DIG (6) significant digits and reads
// that text.
Result<Numeric> NumericFromFloat4(double value) {
  if (!std::isfinite(value)) return NumericFromDouble(value);
  std::array<char, 64> buf{};
  const std::to_chars_result res =
      std::to_chars(buf.data(), buf.data() + buf.size(), static_cast<float>(value),
                    std::chars_format::general, 6);
  TANDEM_CHECK(res.ec == std::errc(), "to_chars of a float failed");
  return ParseNumeric(std::string_view(buf.data(), static_cast<std::size_t>(res.ptr - buf.data())));
}

Result<Datum> NumberCast(const Datum& in, pb::ScalarType from, pb::ScalarType to) {
  if (IsCastIntegerType(from)) {
    const std::int64_t v = CastOperand<std::int64_t>(in);
    if (IsCastIntegerType(to)) {
      const IntegerRange range = IntegerRangeOf(to);
      if (v < range.min || v > range.max) return Status::DataError(range.out_of_range);
      return Datum(v);
    }
    if (to == pb::FLOAT32) return Datum(static_cast<double>(static_cast<float>(v)));
    if (to == pb::FLOAT64) return Datum(static_cast<double>(v));
    return Datum(NumericFromInt64(v));
  }
  if (from == pb::FLOAT32 || from == pb::FLOAT64) {
    const double v = CastOperand<double>(in);
    if (IsCastIntegerType(to)) return FloatToInteger(v, to);
    if (to == pb::FLOAT64) return Datum(v);
    if (to == pb::FLOAT32) {
      const float narrowed = static_cast<float>(v);
      if (std::isinf(narrowed) && !std::isinf(v)) {
        return Status::DataError("value out of range: overflow");
      }
      if (narrowed == 0.0f && v != 0.0) return Status::DataError("value out of range: underflow");
      return Datum(static_cast<double>(narrowed));
    }
    return CastAsDatum(from == pb::FLOAT32 ? NumericFromFloat4(v) : NumericFromDouble(v));
  }
  TANDEM_CHECK(from == pb::NUMERIC, "number cast from a type that is not a number");
  const Numeric& n = CastOperand<Numeric>(in);
  if (IsCastIntegerType(to)) {
    const IntegerRange range = IntegerRangeOf(to);
    const std::string type_name = ipc::SqlTypeName(to);
    return CastAsDatum(NumericToInt64(n, range.min, range.max, type_name));
  }
  if (to == pb::FLOAT64) return Datum(NumericToDouble(n));
  if (to == pb::FLOAT32) {
    // numeric_float4 reads the numeric's text with strtof: one rounding, to the nearest float.
    const std::string text = NumericText(n);
    return Datum(static_cast<double>(std::strtof(text.c_str(), nullptr)));
  }
  return Datum(n);
}

// ---- dates and times --------------------------------------------------------------------------

Result<Datum> TemporalCast(const Datum& in, pb::ScalarType from, pb::ScalarType to) {
  switch (from) {
    case pb::DATE: {
      Result<Timestamp> ts = TimestampOfDate(CastOperand<Date>(in));
      if (!ts.ok()) return ts.status();
      if (to == pb::TIMESTAMP) return Datum(*ts);
      return Datum(TimestampTzOfTimestamp(*ts));
    }
    case pb::TIMESTAMP:
    case pb::TIMESTAMPTZ: {
      const Timestamp wall = from == pb::TIMESTAMP
                                 ? CastOperand<Timestamp>(in)
                                 : TimestampOfTimestampTz(CastOperand<TimestampTz>(in));
      if (to == pb::TIMESTAMP) return Datum(wall);
      if (to == pb::TIMESTAMPTZ) return Datum(TimestampTzOfTimestamp(wall));
      if (to == pb::DATE) return CastAsDatum(DateOfTimestamp(wall));
      TANDEM_CHECK(to == pb::TIME, "timestamp cast to a type validation refuses");
      return Datum(TimeOfTimestamp(wall));
    }
    case pb::INTERVAL: {
      TANDEM_CHECK(to == pb::TIME, "interval cast to a type validation refuses");
      // PostgreSQL's interval_time: the time part modulo a day, months and days ignored.
      std::int64_t micros = CastOperand<Interval>(in).micros % kMicrosPerDay;
      if (micros < 0) micros += kMicrosPerDay;
      return Datum(TimeOfDay{micros});
    }
    case pb::TIME: {
      TANDEM_CHECK(to == pb::INTERVAL, "time cast to a type validation refuses");
      return Datum(Interval{0, 0, CastOperand<TimeOfDay>(in).micros});
    }
    default:
      TANDEM_CHECK(false, "cast validation refuses");
  }
  return Status::Internal("unreachable");
}

Result<Datum> CastValue(const Datum& in, pb::ScalarType from, pb::ScalarType to) {
  if (from == to) return in;
  if (to == pb::STRING) return Datum(SqlValueText(in, from));
  if (from == pb::STRING) return CastFromText(CastOperand<std::string>(in), to);
  const auto is_number = [](pb::ScalarType t) {
    return IsCastIntegerType(t) || t == pb::FLOAT32 || t == pb::FLOAT64 || t == pb::NUMERIC;
  };
  if (is_number(from) && is_number(to)) return NumberCast(in, from, to);
  if (from == pb::BOOL && to == pb::INT32) {
    return Datum(std::int64_t{CastOperand<bool>(in) ? 1 : 0});
  }
  if (from == pb::INT32 && to == pb::BOOL) return Datum(CastOperand<std::int64_t>(in) != 0);
  return TemporalCast(in, from, to);
}

// varchar(n) keeps the first n characters (an explicit cast truncates); char(n) truncates or pads
// with blanks to n characters.
std::string ApplyLengthTypmod(std::string text, std::uint32_t length, bool blank_padded) {
  if (length == 0) return text;  // text, varchar and bpchar without a length: any length
  text.resize(Utf8CodePointOffset(text, length));
  const std::size_t chars = Utf8CodePoints(text);
  if (blank_padded && chars < length) text.append(length - chars, ' ');
  return text;
}

}  // namespace

std::string SqlValueText(const Datum& datum, pb::ScalarType type) {
  switch (type) {
    case pb::BOOL:
      return CastOperand<bool>(datum) ? "true" : "false";
    case pb::INT16:
    case pb::INT32:
    case pb::INT64:
      return std::to_string(CastOperand<std::int64_t>(datum));
    case pb::FLOAT32:
    case pb::FLOAT64:
      return PgFloatText(CastOperand<double>(datum), type == pb::FLOAT32);
    case pb::NUMERIC:
      return NumericText(CastOperand<Numeric>(datum));
    case pb::STRING:
      return CastOperand<std::string>(datum);
    case pb::BYTEA:
      return CastByteaText(CastOperand<Bytes>(datum).bytes);
    case pb::DATE:
      return DateText(CastOperand<Date>(datum));
    case pb::TIME:
      return TimeText(CastOperand<TimeOfDay>(datum));
    case pb::TIMESTAMP:
      return TimestampText(CastOperand<Timestamp>(datum));
    case pb::TIMESTAMPTZ:
      return TimestampTzText(CastOperand<TimestampTz>(datum));
    case pb::INTERVAL:
      return IntervalText(CastOperand<Interval>(datum));
    case pb::UUID:
      return CastUuidText(CastOperand<Uuid>(datum));
    default:
      TANDEM_CHECK(false, "text of a type validation does not know");
  }
  return {};
}

bool EvalCast(const Datum& in, pb::ScalarType from, const pb::Column& to, Datum* out,
              std::string* error) {
  if (std::holds_alternative<Null>(in)) {
    *out = Null{};
    return true;
  }
  Result<Datum> value = CastValue(in, from, to.type());
  if (!value.ok()) {
    *error = value.status().message();
    return false;
  }
  if (to.type() == pb::NUMERIC && to.precision() > 0) {
    Result<Numeric> fitted = NumericApplyTypmod(
        std::get<Numeric>(*value), static_cast<int>(to.precision()), static_cast<int>(to.scale()));
    if (!fitted.ok()) {
      *error = fitted.status().message();
      return false;
    }
    *out = *fitted;
    return true;
  }
  if (to.type() == pb::STRING && to.length() > 0) {
    *out =
        ApplyLengthTypmod(std::move(std::get<std::string>(*value)), to.length(), to.blank_padded());
    return true;
  }
  *out = std::move(*value);
  return true;
}

bool EvalCastFromColumn(const Datum& in, const pb::Column& from, const pb::Column& to, Datum* out,
                        std::string* error) {
  if (from.type() == pb::STRING && from.blank_padded() && to.type() == pb::STRING &&
      !to.blank_padded() && std::holds_alternative<std::string>(in)) {
    const std::string& padded = std::get<std::string>(in);
    const std::size_t end = padded.find_last_not_of(' ');
    return EvalCast(Datum(padded.substr(0, end == std::string::npos ? 0 : end + 1)), pb::STRING, to,
                    out, error);
  }
  return EvalCast(in, from.type(), to, out, error);
}

bool EvalAssignmentCast(const Datum& in, pb::ScalarType from, const pb::Column& to, Datum* out,
                        std::string* error) {
  if (to.type() != pb::STRING || to.length() == 0 || std::holds_alternative<Null>(in)) {
    return EvalCast(in, from, to, out, error);
  }
  pb::Column text = to;
  text.set_length(0);
  text.set_blank_padded(false);
  Datum unbounded;
  if (!EvalCast(in, from, text, &unbounded, error)) return false;
  const std::string& value = std::get<std::string>(unbounded);
  const Datum fitted = ApplyLengthTypmod(value, to.length(), to.blank_padded());
  const std::string& kept = std::get<std::string>(fitted);
  if (kept.size() < value.size() &&
      value.find_first_not_of(' ', kept.size()) != std::string::npos) {
    *error = "value too long for type " + ipc::SqlColumnTypeName(to);
    return false;
  }
  *out = fitted;
  return true;
}

}  // namespace tandem::workers
