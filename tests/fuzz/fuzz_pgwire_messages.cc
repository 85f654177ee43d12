// Fuzz target: what a PostgreSQL client sends once it has started up — the extended query
// protocol's messages and a Query (frontend/pgwire/messages.h), the framing of a stream of typed
// messages, and a Bind parameter's bytes in binary format read as a value of a type
// (frontend/server/binary_values.h).
//
// Input: the first byte says what the rest is (after any other first byte nothing is decoded).
//   'P' 'B' 'D' 'C' 'E' 'Q'  the contents of a Parse, Bind, Describe, Close, Execute or Query
//                            message (its body: no type byte, no length word);
//   'M'  a stream of typed messages (type byte, Int32 length, contents) read with
//        ReadMessageFrame, each framed body of the six types above decoded as above;
//   'V'  the second byte picks a type OID, kOids[byte % 20]: pg_type.h's 19 types in its order
//        (0 bool, 1 bytea, 2 name, 3 int8, 4 int2, 5 int4, 6 text, 7 float4, 8 float8,
//        9 unknown, 10 bpchar, 11 varchar, 12 date, 13 time, 14 timestamp, 15 timestamptz,
//        16 interval, 17 numeric, 18 uuid) and 19: OID 26 (oid), which has no binary receive
//        here; the rest is the parameter's bytes, given to BinaryParameterText as parameter 7.
//
// Properties (a violation abort()s, which libFuzzer and the corpus runner report):
//   * a decoder either refuses with InvalidArgument "invalid <Message> message: <why>" or
//     returns a message whose strings hold no NUL and view the body, whose counts are within
//     65535, and (Bind) with one format per parameter, each 0 or 1; Describe/Close name 'S' or
//     'P'; Execute's row limit is the Int32 sent when positive, else 0;
//   * re-encoding a decoded message (a client's encoders below) gives the body again — for Bind
//     with one of the ways of sending its format codes (none, one, one per parameter; with no
//     parameter also one code of either format), all of which decode to the same message; for
//     Execute with the limit as decoded — and the encoding decodes to the same message;
//   * a decoded body is exactly one message: it cut short, or with a byte after it, is refused;
//   * framing: a frame is of a known type, within FrontendMessageLimit, its body the bytes after
//     the length word, and its bytes are the type, the length and the body; bytes after a frame
//     change nothing and a frame cut by one byte is incomplete; an invalid frame is decided by
//     its first five bytes and says why; an incomplete one is shorter than its length says; a
//     smaller message limit frames the same messages or refuses them, never others;
//   * BinaryParameterText either fails with a valid SQLSTATE and a message — the SQLSTATE
//     binary_values.h documents for what is wrong (08P01 bytes missing, 22P03 bytes left or a
//     bad numeric, 22008 a date/time out of range, 22021 invalid UTF-8, 42622 a long name, 0A000
//     the OID) —
//     or gives text that is valid UTF-8 without NUL: never empty for a fixed-size type, the
//     value itself for bool, int2/4/8, float4/8 (NaN as "NaN"), uuid, bytea and the text types,
//     and for numeric an optional '-' (never on zero), digits without a leading zero and
//     exactly dscale digits after the point, or NaN/Infinity/-Infinity as its sign says.
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/datum_text.h"
#include "base/status.h"
#include "base/utf8.h"
#include "frontend/pgwire/messages.h"
#include "frontend/pgwire/pg_type.h"
#include "frontend/server/binary_values.h"
#include "frontend/sqlstate.h"
#include "fuzz/fuzz_check.h"

namespace tandem::pgwire {
namespace {

// ---- bytes --------------------------------------------------------------------------------------

void PutU16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}
void PutU32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}
void PutStr(std::string& out, std::string_view s) {
  out.append(s);
  out.push_back('\0');
}
// The big-endian unsigned integer of in[at, at + n). REQUIRES: at + n <= in.size(), n <= 8.
std::uint64_t GetUnsigned(std::string_view in, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

bool NoNul(std::string_view s) { return s.find('\0') == std::string_view::npos; }

// True when `part` lies within `whole` (an empty view anywhere).
bool Within(std::string_view whole, std::string_view part) {
  if (part.empty()) return true;
  const auto begin = reinterpret_cast<std::uintptr_t>(whole.data());
  const auto at = reinterpret_cast<std::uintptr_t>(part.data());
  return at >= begin && at - begin <= whole.size() && part.size() <= whole.size() - (at - begin);
}

std::string Printable(std::string_view s) {
  std::string out;
  for (const char c : s.substr(0, 64)) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out.push_back(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", b);
      out += hex;
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

// ---- a client's encoders: the layouts the decoders read -----------------------------------------

std::string EncodeParse(const ParseMessage& m) {
  std::string out;
  PutStr(out, m.statement);
  PutStr(out, m.query);
  PutU16(out, static_cast<std::uint16_t>(m.parameter_types.size()));
  for (const std::uint32_t oid : m.parameter_types) PutU32(out, oid);
  return out;
}

// A Bind with `codes` as its parameter format codes.
std::string EncodeBind(const BindMessage& m, std::span<const Format> codes) {
  std::string out;
  PutStr(out, m.portal);
  PutStr(out, m.statement);
  PutU16(out, static_cast<std::uint16_t>(codes.size()));
  for (const Format f : codes) PutU16(out, static_cast<std::uint16_t>(f));
  PutU16(out, static_cast<std::uint16_t>(m.parameters.size()));
  for (const auto& p : m.parameters) {
    if (!p) {
      PutU32(out, 0xffffffffu);  // -1: NULL
      continue;
    }
    PutU32(out, static_cast<std::uint32_t>(p->size()));
    out.append(*p);
  }
  PutU16(out, static_cast<std::uint16_t>(m.result_formats.size()));
  for (const Format f : m.result_formats) PutU16(out, static_cast<std::uint16_t>(f));
  return out;
}

std::string EncodeTarget(const TargetMessage& m) {
  std::string out(1, static_cast<char>(m.target));
  PutStr(out, m.name);
  return out;
}

std::string EncodeExecute(const ExecuteMessage& m) {
  std::string out;
  PutStr(out, m.portal);
  PutU32(out, m.max_rows);
  return out;
}

bool Same(const ParseMessage& a, const ParseMessage& b) {
  return a.statement == b.statement && a.query == b.query && a.parameter_types == b.parameter_types;
}
bool Same(const BindMessage& a, const BindMessage& b) {
  return a.portal == b.portal && a.statement == b.statement &&
         a.parameter_formats == b.parameter_formats && a.parameters == b.parameters &&
         a.result_formats == b.result_formats;
}
bool Same(const TargetMessage& a, const TargetMessage& b) {
  return a.target == b.target && a.name == b.name;
}
bool Same(const ExecuteMessage& a, const ExecuteMessage& b) {
  return a.portal == b.portal && a.max_rows == b.max_rows;
}

// ---- the decoders -------------------------------------------------------------------------------

void CheckRefusal(const Status& status, const char* message, std::string_view body) {
  const std::string prefix = std::string("invalid ") + message + " message: ";
  FUZZ_CHECK(status.code() == StatusCode::kInvalidArgument,
             status.ToString() + " for " + Printable(body));
  FUZZ_CHECK(status.message().size() > prefix.size() && status.message().rfind(prefix, 0) == 0,
             status.message());
}

// Decodes `body` with `decode`: a refusal is worded as every decoder words it, a decoded message
// passes `check`, and a decoded body cut short or with a byte after it is refused.
template <typename M, typename CheckFn>
void CheckDecoder(std::string_view body, Result<M> (*decode)(std::string_view), const char* message,
                  CheckFn check) {
  const Result<M> m = decode(body);
  if (!m.ok()) {
    CheckRefusal(m.status(), message, body);
    return;
  }
  check(body, *m);
  for (const std::size_t cut : {std::size_t{0}, body.size() / 2, body.size() - 1}) {
    if (cut >= body.size()) continue;
    const Result<M> shorter = decode(body.substr(0, cut));
    FUZZ_CHECK(!shorter.ok(), std::string(message) + " cut to " + std::to_string(cut) +
                                  " bytes decoded: " + Printable(body));
    CheckRefusal(shorter.status(), message, body);
  }
  const std::string longer = std::string(body) + '\0';
  const Result<M> more = decode(longer);
  FUZZ_CHECK(!more.ok(), std::string(message) + " with a byte after it decoded");
  CheckRefusal(more.status(), message, longer);
}

void CheckParse(std::string_view body) {
  CheckDecoder(body, &DecodeParse, "Parse", [](std::string_view b, const ParseMessage& m) {
    FUZZ_CHECK(NoNul(m.statement) && NoNul(m.query), Printable(b));
    FUZZ_CHECK(Within(b, m.statement) && Within(b, m.query), "a Parse string outside its body");
    FUZZ_CHECK(m.parameter_types.size() <= 65535, std::to_string(m.parameter_types.size()));
    const std::string again = EncodeParse(m);
    FUZZ_CHECK(again == b, "Parse re-encoded as " + Printable(again) + " from " + Printable(b));
    const Result<ParseMessage> decoded = DecodeParse(again);
    FUZZ_CHECK(decoded.ok() && Same(*decoded, m), "Parse decoded differently the second time");
  });
}

void CheckBind(std::string_view body) {
  CheckDecoder(body, &DecodeBind, "Bind", [](std::string_view b, const BindMessage& m) {
    FUZZ_CHECK(NoNul(m.portal) && NoNul(m.statement), Printable(b));
    FUZZ_CHECK(Within(b, m.portal) && Within(b, m.statement), "a Bind name outside its body");
    const std::size_t n = m.parameters.size();
    FUZZ_CHECK(n <= 65535 && m.result_formats.size() <= 65535, std::to_string(n));
    FUZZ_CHECK(m.parameter_formats.size() == n, std::to_string(m.parameter_formats.size()) +
                                                    " formats for " + std::to_string(n) +
                                                    " parameters");
    bool all_text = true;
    bool all_first = true;
    for (const Format f : m.parameter_formats) {
      FUZZ_CHECK(f == Format::kText || f == Format::kBinary, std::to_string(static_cast<int>(f)));
      all_text = all_text && f == Format::kText;
      all_first = all_first && f == m.parameter_formats.front();
    }
    for (const Format f : m.result_formats) {
      FUZZ_CHECK(f == Format::kText || f == Format::kBinary, std::to_string(static_cast<int>(f)));
    }
    for (const auto& p : m.parameters) {
      FUZZ_CHECK(!p || Within(b, *p), "a Bind parameter value outside its body");
    }
    // The ways a client may send these format codes; the body is one of them.
    std::vector<std::vector<Format>> ways = {m.parameter_formats};
    if (all_text) ways.emplace_back();
    if (n >= 1 && all_first) ways.push_back({m.parameter_formats.front()});
    if (n == 0) {
      ways.push_back({Format::kText});
      ways.push_back({Format::kBinary});
    }
    bool found = false;
    for (const auto& codes : ways) {
      const std::string again = EncodeBind(m, codes);
      found = found || again == b;
      const Result<BindMessage> decoded = DecodeBind(again);
      FUZZ_CHECK(decoded.ok(), decoded.status().message() + " re-decoding " + Printable(again));
      FUZZ_CHECK(Same(*decoded, m), "Bind decoded differently from " + Printable(again));
    }
    FUZZ_CHECK(found, "no way of sending the decoded Bind is its body " + Printable(b));
  });
}

void CheckTarget(std::string_view body, bool describe) {
  const auto check = [describe](std::string_view b, const TargetMessage& m) {
    FUZZ_CHECK(m.target == Target::kStatement || m.target == Target::kPortal, Printable(b));
    FUZZ_CHECK(NoNul(m.name) && Within(b, m.name), Printable(b));
    const std::string again = EncodeTarget(m);
    FUZZ_CHECK(again == b, "re-encoded as " + Printable(again) + " from " + Printable(b));
    const Result<TargetMessage> decoded = describe ? DecodeDescribe(again) : DecodeClose(again);
    FUZZ_CHECK(decoded.ok() && Same(*decoded, m), "decoded differently the second time");
  };
  if (describe) {
    CheckDecoder(body, &DecodeDescribe, "Describe", check);
  } else {
    CheckDecoder(body, &DecodeClose, "Close", check);
  }
}

void CheckExecute(std::string_view body) {
  CheckDecoder(body, &DecodeExecute, "Execute", [](std::string_view b, const ExecuteMessage& m) {
    FUZZ_CHECK(NoNul(m.portal) && Within(b, m.portal), Printable(b));
    FUZZ_CHECK(b.size() >= 5, Printable(b));  // a NUL and the Int32
    const auto sent = static_cast<std::int32_t>(GetUnsigned(b, b.size() - 4, 4));
    FUZZ_CHECK(m.max_rows == (sent > 0 ? static_cast<std::uint32_t>(sent) : 0u),
               std::to_string(m.max_rows) + " rows from " + std::to_string(sent));
    const std::string again = EncodeExecute(m);
    FUZZ_CHECK(again.substr(0, again.size() - 4) == b.substr(0, b.size() - 4), Printable(b));
    if (sent > 0) FUZZ_CHECK(again == b, Printable(again) + " from " + Printable(b));
    const Result<ExecuteMessage> decoded = DecodeExecute(again);
    FUZZ_CHECK(decoded.ok() && Same(*decoded, m), "Execute decoded differently the second time");
  });
}

void CheckQuery(std::string_view body) {
  CheckDecoder(body, &DecodeQuery, "Query", [](std::string_view b, std::string_view text) {
    FUZZ_CHECK(NoNul(text) && Within(b, text), Printable(b));
    FUZZ_CHECK(std::string(text) + '\0' == b, Printable(b));
  });
}

// The decoder of a frontend message type, if this target checks one.
void CheckBody(char type, std::string_view body) {
  switch (type) {
    case frontend::kParse:
      return CheckParse(body);
    case frontend::kBind:
      return CheckBind(body);
    case frontend::kDescribe:
      return CheckTarget(body, /*describe=*/true);
    case frontend::kClose:
      return CheckTarget(body, /*describe=*/false);
    case frontend::kExecute:
      return CheckExecute(body);
    case frontend::kQuery:
      return CheckQuery(body);
    default:
      return;
  }
}

// ---- framing ------------------------------------------------------------------------------------

bool SameFrame(const Frame& a, const Frame& b) {
  return a.kind == b.kind && a.type == b.type && a.body == b.body && a.size == b.size &&
         a.error == b.error;
}

void CheckFrame(std::string_view in, const Frame& f, std::size_t limit) {
  switch (f.kind) {
    case Frame::Kind::kMessage: {
      FUZZ_CHECK(FrontendMessageName(f.type) != nullptr, Printable(in));
      FUZZ_CHECK(f.size == 5 + f.body.size() && f.size <= in.size(), Printable(in));
      FUZZ_CHECK(f.body.size() <= FrontendMessageLimit(f.type, limit), Printable(in));
      FUZZ_CHECK(f.body.data() == in.data() + 5, "a frame's body is not after its length word");
      std::string framed(1, f.type);
      PutU32(framed, static_cast<std::uint32_t>(f.body.size() + 4));
      framed.append(f.body);
      FUZZ_CHECK(framed == in.substr(0, f.size), Printable(in));
      FUZZ_CHECK(SameFrame(ReadMessageFrame(in.substr(0, f.size), limit), f),
                 "the bytes after a frame changed it: " + Printable(in));
      FUZZ_CHECK(ReadMessageFrame(in.substr(0, f.size - 1), limit).kind == Frame::Kind::kIncomplete,
                 "a frame cut by one byte is not incomplete: " + Printable(in));
      break;
    }
    case Frame::Kind::kInvalid: {
      FUZZ_CHECK(!f.error.empty(), Printable(in));
      const Frame head = ReadMessageFrame(in.substr(0, 5), limit);
      FUZZ_CHECK(head.kind == Frame::Kind::kInvalid && head.error == f.error,
                 "an invalid frame is not decided by its first five bytes: " + Printable(in));
      break;
    }
    case Frame::Kind::kIncomplete:
      FUZZ_CHECK(f.error.empty(), f.error);
      FUZZ_CHECK(in.empty() || FrontendMessageName(in[0]) != nullptr, Printable(in));
      FUZZ_CHECK(in.size() < 5 || in.size() - 1 < GetUnsigned(in, 1, 4), Printable(in));
      break;
  }
}

void CheckStream(std::string_view in) {
  // A limit most Query, Parse and Bind bodies exceed (the other types' is kSmallMessageLimit).
  constexpr std::size_t kSmallLimit = 16;
  while (true) {
    const Frame f = ReadMessageFrame(in, kDefaultMaxMessageBytes);
    const Frame small = ReadMessageFrame(in, kSmallLimit);
    CheckFrame(in, f, kDefaultMaxMessageBytes);
    CheckFrame(in, small, kSmallLimit);
    if (small.kind == Frame::Kind::kMessage) {
      FUZZ_CHECK(SameFrame(small, f), "a smaller limit framed another message");
    }
    if (f.kind == Frame::Kind::kInvalid) {
      FUZZ_CHECK(small.kind == Frame::Kind::kInvalid, "a smaller limit took an invalid frame");
    }
    if (f.kind != Frame::Kind::kMessage) return;
    CheckBody(f.type, f.body);
    in.remove_prefix(f.size);
  }
}

// ---- binary parameters --------------------------------------------------------------------------

constexpr std::uint32_t kUnsupportedOid = 26;  // oid
constexpr std::uint32_t kOids[] = {
    kBool.oid,        kBytea.oid,    kName.oid,    kInt8.oid,   kInt2.oid,
    kInt4.oid,        kText.oid,     kFloat4.oid,  kFloat8.oid, kUnknown.oid,
    kBpchar.oid,      kVarchar.oid,  kDate.oid,    kTime.oid,   kTimestamp.oid,
    kTimestamptz.oid, kInterval.oid, kNumeric.oid, kUuid.oid,   kUnsupportedOid,
};
constexpr int kParameterNumber = 7;

// The bytes of a fixed-size type's binary form; 0 for a variable-size one.
std::size_t FixedBytes(std::uint32_t oid) {
  switch (oid) {
    case kBool.oid:
      return 1;
    case kInt2.oid:
      return 2;
    case kInt4.oid:
    case kFloat4.oid:
    case kDate.oid:
      return 4;
    case kInt8.oid:
    case kFloat8.oid:
    case kTime.oid:
    case kTimestamp.oid:
    case kTimestamptz.oid:
      return 8;
    case kInterval.oid:
    case kUuid.oid:
      return 16;
    default:
      return 0;
  }
}

// The types whose value may be out of range (22008).
bool HasRange(std::uint32_t oid) {
  return oid == kDate.oid || oid == kTime.oid || oid == kTimestamp.oid || oid == kTimestamptz.oid;
}

bool IsTextType(std::uint32_t oid) {
  return oid == kText.oid || oid == kVarchar.oid || oid == kBpchar.oid || oid == kUnknown.oid;
}

bool AllDigits(std::string_view s) {
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// numeric_out's text for the numeric whose binary form is `bytes` (REQUIRES: 8 bytes or more).
void CheckNumericText(std::string_view bytes, std::string_view text) {
  const auto sign = static_cast<std::uint16_t>(GetUnsigned(bytes, 4, 2));
  const auto dscale = static_cast<std::size_t>(GetUnsigned(bytes, 6, 2));
  if (sign == 0xC000 || sign == 0xD000 || sign == 0xF000) {
    FUZZ_CHECK(text == (sign == 0xC000   ? "NaN"
                        : sign == 0xD000 ? "Infinity"
                                         : "-Infinity"),
               std::string(text));
    return;
  }
  const bool negative = !text.empty() && text.front() == '-';
  FUZZ_CHECK(!negative || sign == 0x4000, std::string(text));
  std::string_view rest = text.substr(negative ? 1 : 0);
  const std::size_t point = rest.find('.');
  const std::string_view whole = rest.substr(0, point);
  FUZZ_CHECK(!whole.empty() && AllDigits(whole), std::string(text));
  FUZZ_CHECK(whole == "0" || whole.front() != '0', std::string(text));
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : rest.substr(point + 1);
  FUZZ_CHECK((point == std::string_view::npos) == (dscale == 0), std::string(text));
  FUZZ_CHECK(fraction.size() == dscale && AllDigits(fraction),
             std::string(text) + " for dscale " + std::to_string(dscale));
  if (negative) {
    FUZZ_CHECK(whole != "0" || fraction.find_first_not_of('0') != std::string_view::npos,
               "a negative zero: " + std::string(text));
  }
}

// The value of a fixed-size type's text, against its bytes (REQUIRES: bytes.size() is the type's).
void CheckFixedText(std::uint32_t oid, std::string_view bytes, const std::string& text) {
  FUZZ_CHECK(!text.empty(), std::to_string(oid) + " from " + Printable(bytes));
  const std::uint64_t u = bytes.size() <= 8 ? GetUnsigned(bytes, 0, bytes.size()) : 0;
  switch (oid) {
    case kBool.oid:
      FUZZ_CHECK(text == (u != 0 ? "t" : "f"), text);
      break;
    case kInt2.oid:
    case kInt4.oid:
    case kInt8.oid: {
      const std::int64_t sent = oid == kInt2.oid   ? static_cast<std::int16_t>(u)
                                : oid == kInt4.oid ? static_cast<std::int32_t>(u)
                                                   : static_cast<std::int64_t>(u);
      std::int64_t read = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), read);
      FUZZ_CHECK(error == std::errc() && end == text.data() + text.size() && read == sent,
                 text + " for " + std::to_string(sent));
      break;
    }
    case kFloat4.oid: {
      const auto sent = std::bit_cast<float>(static_cast<std::uint32_t>(u));
      if (std::isnan(sent)) {
        FUZZ_CHECK(text == "NaN", text);
        break;
      }
      char* end = nullptr;
      const float read = std::strtof(text.c_str(), &end);
      FUZZ_CHECK(end == text.c_str() + text.size() &&
                     std::bit_cast<std::uint32_t>(read) == std::bit_cast<std::uint32_t>(sent),
                 text + " from " + Printable(bytes));
      break;
    }
    case kFloat8.oid: {
      const auto sent = std::bit_cast<double>(u);
      if (std::isnan(sent)) {
        FUZZ_CHECK(text == "NaN", text);
        break;
      }
      char* end = nullptr;
      const double read = std::strtod(text.c_str(), &end);
      FUZZ_CHECK(end == text.c_str() + text.size() &&
                     std::bit_cast<std::uint64_t>(read) == std::bit_cast<std::uint64_t>(sent),
                 text + " from " + Printable(bytes));
      break;
    }
    case kUuid.oid: {
      const Result<Uuid> read = ParseUuidText(text);
      FUZZ_CHECK(text.size() == 36 && read.ok(), text);
      FUZZ_CHECK(std::string_view(reinterpret_cast<const char*>(read->bytes.data()),
                                  read->bytes.size()) == bytes,
                 text + " from " + Printable(bytes));
      break;
    }
    default:  // date, time, timestamp, timestamptz, interval: not empty (above)
      break;
  }
}

void CheckBinaryParameter(std::uint32_t oid, std::string_view bytes) {
  const sql::SqlResult<std::string> text =
      ::tandem::frontend::BinaryParameterText(bytes, oid, kParameterNumber);
  const std::string what = "OID " + std::to_string(oid) + " from " + Printable(bytes);
  std::string state;
  if (text.ok()) {
    FUZZ_CHECK(!FindInvalidUtf8(*text).has_value() && NoNul(*text), Printable(*text) + ", " + what);
  } else {
    state = text.error().sqlstate;
    FUZZ_CHECK(IsValidSqlstate(state) && !text.error().message.empty(), state + ", " + what);
  }
  const std::string trailing =
      "incorrect binary data format in bind parameter " + std::to_string(kParameterNumber);
  if (oid == kUnsupportedOid) {
    FUZZ_CHECK(state == sqlstate::kFeatureNotSupported, state + ", " + what);
    return;
  }
  if (const std::size_t fixed = FixedBytes(oid); fixed != 0) {
    if (bytes.size() < fixed) {
      FUZZ_CHECK(state == sqlstate::kProtocolViolation, state + ", " + what);
    } else if (bytes.size() > fixed) {
      FUZZ_CHECK(state == sqlstate::kInvalidBinaryRepresentation ||
                     (HasRange(oid) && state == sqlstate::kDatetimeFieldOverflow),
                 state + ", " + what);
      if (state == sqlstate::kInvalidBinaryRepresentation) {
        FUZZ_CHECK(text.error().message == trailing, text.error().message);
      }
    } else if (text.ok()) {
      CheckFixedText(oid, bytes, *text);
    } else {
      FUZZ_CHECK(HasRange(oid) && state == sqlstate::kDatetimeFieldOverflow, state + ", " + what);
    }
    return;
  }
  const bool valid_utf8 = !FindInvalidUtf8(bytes).has_value();
  if (IsTextType(oid) || oid == kName.oid) {
    if (!valid_utf8) {
      FUZZ_CHECK(state == sqlstate::kCharacterNotInRepertoire, state + ", " + what);
    } else if (oid == kName.oid && bytes.size() >= 64) {
      FUZZ_CHECK(state == sqlstate::kNameTooLong, state + ", " + what);
    } else {
      FUZZ_CHECK(text.ok() && *text == bytes, state + ", " + what);
    }
    return;
  }
  if (oid == kBytea.oid) {
    FUZZ_CHECK(text.ok() && text->size() == 2 + 2 * bytes.size(), what);
    const Result<std::string> read = ParseByteaText(*text);
    FUZZ_CHECK(read.ok() && *read == bytes, *text + ", " + what);
    return;
  }
  if (oid == kNumeric.oid) {
    // Fewer than 6 bytes is 08P01; from 6 on, the sign is checked (22P03) before the dscale and
    // the digits are read (08P01 when missing).
    if (text.ok()) {
      CheckNumericText(bytes, *text);
    } else if (bytes.size() < 6) {
      FUZZ_CHECK(state == sqlstate::kProtocolViolation, state + ", " + what);
    } else {
      FUZZ_CHECK(
          state == sqlstate::kProtocolViolation || state == sqlstate::kInvalidBinaryRepresentation,
          state + ", " + what);
    }
    return;
  }
  FUZZ_CHECK(false, "a type without a check: " + what);
}

}  // namespace
}  // namespace tandem::pgwire

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tandem::pgwire;  // NOLINT(google-build-using-namespace)
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (static_cast<char>(data[0])) {
    case 'P':
    case 'B':
    case 'D':
    case 'C':
    case 'E':
    case 'Q':
      CheckBody(static_cast<char>(data[0]), rest);
      break;
    case 'M':
      CheckStream(rest);
      break;
    case 'V':
      if (rest.empty()) break;
      CheckBinaryParameter(kOids[static_cast<unsigned char>(rest[0]) % std::size(kOids)],
                           rest.substr(1));
      break;
    default:
      break;
  }
  return 0;
}
