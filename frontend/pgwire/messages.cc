#include "frontend/pgwire/messages.h"

#include <limits>
#include <set>

#include "base/check.h"

namespace tandem::pgwire {

namespace {

// Network byte order (big-endian), as every integer of the protocol.
std::uint32_t ReadUint32(std::string_view in, std::size_t at) {
  return (std::uint32_t{static_cast<unsigned char>(in[at])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(in[at + 1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(in[at + 2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(in[at + 3])};
}

void PutUint32(std::string& out, std::uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}
void PutInt32(std::string& out, std::int32_t v) { PutUint32(out, static_cast<std::uint32_t>(v)); }
void PutInt16(std::string& out, std::int16_t v) {
  const auto u = static_cast<std::uint16_t>(v);
  out.push_back(static_cast<char>(u >> 8));
  out.push_back(static_cast<char>(u));
}
// A protocol String: the text up to its first NUL, then NUL.
void PutString(std::string& out, std::string_view s) {
  out.append(s.substr(0, s.find('\0')));
  out.push_back('\0');
}

// One backend message being written: the type byte and a length word patched at the end.
class MessageWriter {
 public:
  MessageWriter(std::string& out, char type) : out_(out), start_(out.size()) {
    out_.push_back(type);
    PutUint32(out_, 0);
  }
  ~MessageWriter() {
    const std::size_t length = out_.size() - start_ - 1;  // the length word counts itself
    TANDEM_CHECK(length <= std::numeric_limits<std::int32_t>::max(),
                 "a backend message's contents exceed its Int32 length");
    const auto v = static_cast<std::uint32_t>(length);
    out_[start_ + 1] = static_cast<char>(v >> 24);
    out_[start_ + 2] = static_cast<char>(v >> 16);
    out_[start_ + 3] = static_cast<char>(v >> 8);
    out_[start_ + 4] = static_cast<char>(v);
  }
  MessageWriter(const MessageWriter&) = delete;
  MessageWriter& operator=(const MessageWriter&) = delete;

 private:
  std::string& out_;
  const std::size_t start_;
};

void AppendFields(std::string& out, char type, const ErrorFields& e) {
  MessageWriter m(out, type);
  out.push_back('S');
  PutString(out, SeverityName(e.severity));
  out.push_back('V');  // the same, never translated
  PutString(out, SeverityName(e.severity));
  out.push_back('C');
  PutString(out, e.sqlstate);
  out.push_back('M');
  PutString(out, e.message);
  if (!e.detail.empty()) {
    out.push_back('D');
    PutString(out, e.detail);
  }
  if (!e.hint.empty()) {
    out.push_back('H');
    PutString(out, e.hint);
  }
  if (e.position != 0) {
    out.push_back('P');
    PutString(out, std::to_string(e.position));
  }
  out.push_back('\0');
}

std::string Quoted(char type) {
  if (type >= 0x20 && type < 0x7f) return std::string("'") + type + "'";
  return "0x" + std::string(1, "0123456789ABCDEF"[(type >> 4) & 0xf]) +
         "0123456789ABCDEF"[type & 0xf];
}

}  // namespace

const char* FrontendMessageName(char type) {
  switch (type) {
    case frontend::kQuery:
      return "Query";
    case frontend::kTerminate:
      return "Terminate";
    case frontend::kParse:
      return "Parse";
    case frontend::kBind:
      return "Bind";
    case frontend::kDescribe:
      return "Describe";
    case frontend::kExecute:
      return "Execute";
    case frontend::kClose:
      return "Close";
    case frontend::kSync:
      return "Sync";
    case frontend::kFlush:
      return "Flush";
    case frontend::kFunctionCall:
      return "FunctionCall";
    case frontend::kCopyData:
      return "CopyData";
    case frontend::kCopyDone:
      return "CopyDone";
    case frontend::kCopyFail:
      return "CopyFail";
    case frontend::kPasswordMessage:
      return "PasswordMessage";
    default:
      return nullptr;
  }
}

std::size_t FrontendMessageLimit(char type, std::size_t max_message_bytes) {
  switch (type) {
    case frontend::kQuery:
    case frontend::kParse:
    case frontend::kBind:
    case frontend::kFunctionCall:
    case frontend::kCopyData:
      return max_message_bytes;
    default:
      return FrontendMessageName(type) != nullptr ? kSmallMessageLimit : 0;
  }
}

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "ERROR";
    case Severity::kFatal:
      return "FATAL";
    case Severity::kPanic:
      return "PANIC";
    case Severity::kWarning:
      return "WARNING";
    case Severity::kNotice:
      return "NOTICE";
    case Severity::kDebug:
      return "DEBUG";
    case Severity::kInfo:
      return "INFO";
    case Severity::kLog:
      return "LOG";
  }
  return "ERROR";
}

bool IsValidSqlstate(std::string_view code) {
  if (code.size() != 5) return false;
  for (const char c : code) {
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'))) return false;
  }
  return true;
}

Frame ReadStartupFrame(std::string_view in) {
  Frame f;
  if (in.size() < 4) return f;
  const std::uint32_t length = ReadUint32(in, 0);
  if (length < 8 || length > kMaxStartupPacketBytes) {
    f.kind = Frame::Kind::kInvalid;
    f.error = "invalid length of startup packet: " + std::to_string(length) +
              " bytes (a startup packet is 8 to " + std::to_string(kMaxStartupPacketBytes) +
              " bytes)";
    return f;
  }
  if (in.size() < length) return f;
  f.kind = Frame::Kind::kMessage;
  f.body = in.substr(4, length - 4);
  f.size = length;
  return f;
}

Frame ReadMessageFrame(std::string_view in, std::size_t max_message_bytes) {
  Frame f;
  if (in.empty()) return f;
  const char type = in[0];
  const std::size_t limit = FrontendMessageLimit(type, max_message_bytes);
  if (limit == 0) {
    f.kind = Frame::Kind::kInvalid;
    f.error = "invalid frontend message type " + Quoted(type);
    return f;
  }
  if (in.size() < 5) return f;
  const std::uint32_t length = ReadUint32(in, 1);
  if (length < 4) {
    f.kind = Frame::Kind::kInvalid;
    f.error = std::string("invalid message length ") + std::to_string(length) + " of a " +
              FrontendMessageName(type) + " message (it counts its own 4 bytes)";
    return f;
  }
  const std::size_t contents = length - 4;
  if (contents > limit) {
    f.kind = Frame::Kind::kInvalid;
    f.error = std::string("a ") + FrontendMessageName(type) + " message of " +
              std::to_string(contents) + " bytes exceeds the limit of " + std::to_string(limit) +
              " bytes";
    return f;
  }
  if (in.size() - 1 < length) return f;
  f.kind = Frame::Kind::kMessage;
  f.type = type;
  f.body = in.substr(5, contents);
  f.size = 1 + std::size_t{length};
  return f;
}

Result<StartupPacket> DecodeStartupPacket(std::string_view body) {
  if (body.size() < 4) {
    return Status::InvalidArgument("a startup packet without a protocol version or request code");
  }
  const std::uint32_t code = ReadUint32(body, 0);
  const std::string_view rest = body.substr(4);
  switch (code) {
    case kSslRequestCode:
    case kGssEncRequestCode:
      if (!rest.empty()) {
        return Status::InvalidArgument(
            std::string(code == kSslRequestCode ? "an SSLRequest" : "a GSSENCRequest") + " of " +
            std::to_string(body.size() + 4) + " bytes (it is 8)");
      }
      if (code == kSslRequestCode) return StartupPacket(SslRequest{});
      return StartupPacket(GssEncRequest{});
    case kCancelRequestCode: {
      if (rest.size() != 8) {
        return Status::InvalidArgument("a CancelRequest of " + std::to_string(body.size() + 4) +
                                       " bytes (it is 16)");
      }
      CancelRequest cancel;
      cancel.key.process_id = static_cast<std::int32_t>(ReadUint32(rest, 0));
      cancel.key.secret_key = static_cast<std::int32_t>(ReadUint32(rest, 4));
      return StartupPacket(cancel);
    }
    default:
      break;
  }
  StartupMessage startup;
  startup.protocol_version = code;
  // Pairs of Strings, then one more NUL: the packet's last byte is that terminator.
  if (rest.empty() || rest.back() != '\0') {
    return Status::InvalidArgument(
        "invalid startup packet layout: expected a terminator as the last byte");
  }
  std::set<std::string_view> seen;
  std::size_t at = 0;
  while (at < rest.size() - 1) {
    const std::size_t name_end = rest.find('\0', at);
    const std::string_view name = rest.substr(at, name_end - at);
    if (name.empty()) {
      return Status::InvalidArgument(
          "invalid startup packet layout: an empty parameter name before the terminator");
    }
    const std::size_t value_at = name_end + 1;
    if (value_at >= rest.size() - 1) {
      return Status::InvalidArgument("invalid startup packet layout: parameter \"" +
                                     std::string(name) + "\" has no value");
    }
    const std::size_t value_end = rest.find('\0', value_at);
    if (!seen.insert(name).second) {
      return Status::InvalidArgument("startup packet sends parameter \"" + std::string(name) +
                                     "\" twice");
    }
    startup.parameters.emplace_back(std::string(name),
                                    std::string(rest.substr(value_at, value_end - value_at)));
    at = value_end + 1;
  }
  if (at != rest.size() - 1) {  // the last value's NUL is not the terminator too
    return Status::InvalidArgument(
        "invalid startup packet layout: expected a terminator as the last byte");
  }
  return StartupPacket(std::move(startup));
}

Result<std::string_view> DecodeQuery(std::string_view body) {
  const std::size_t nul = body.find('\0');
  if (nul == std::string_view::npos) {
    return Status::InvalidArgument("invalid Query message: its string has no terminating NUL");
  }
  if (nul + 1 != body.size()) {
    return Status::InvalidArgument(
        "invalid Query message: " + std::to_string(body.size() - nul - 1) +
        " bytes after its string");
  }
  return body.substr(0, nul);
}

namespace {

// Reads one typed message's fields front to back; each read checks that its bytes are there. The
// first failure is kept (`error`) and every later read fails too, so a decoder reads every field
// and checks once.
class FieldReader {
 public:
  FieldReader(std::string_view body, const char* message) : body_(body), message_(message) {}

  std::string_view String(const char* field) {
    if (!ok()) return {};
    const std::size_t nul = body_.find('\0', at_);
    if (nul == std::string_view::npos) {
      Fail(std::string(field) + " has no terminating NUL");
      return {};
    }
    const std::string_view s = body_.substr(at_, nul - at_);
    at_ = nul + 1;
    return s;
  }
  std::int32_t Int32(const char* field) {
    if (!Has(4, field)) return 0;
    const auto v = static_cast<std::int32_t>(ReadUint32(body_, at_));
    at_ += 4;
    return v;
  }
  std::int16_t Int16(const char* field) {
    if (!Has(2, field)) return 0;
    const auto v =
        static_cast<std::int16_t>((std::uint16_t{static_cast<unsigned char>(body_[at_])} << 8) |
                                  std::uint16_t{static_cast<unsigned char>(body_[at_ + 1])});
    at_ += 2;
    return v;
  }
  char Byte(const char* field) {
    if (!Has(1, field)) return 0;
    return body_[at_++];
  }
  std::string_view Bytes(std::size_t n, const char* field) {
    if (!Has(n, field)) return {};
    const std::string_view s = body_.substr(at_, n);
    at_ += n;
    return s;
  }
  // A count: an Int16 read unsigned, 0 ..= 65535, as PostgreSQL reads it (libpq sends up to 65535
  // parameters).
  std::size_t Count(const char* field) { return static_cast<std::uint16_t>(Int16(field)); }
  Format FormatCode(const char* field) {
    const std::int16_t code = Int16(field);
    if (ok() && code != 0 && code != 1) {
      Fail(std::string(field) + " " + std::to_string(code) + " is neither 0 (text) nor 1 (binary)");
    }
    return static_cast<Format>(code);
  }
  Target TargetByte(const char* field) {
    const char c = Byte(field);
    if (ok() && c != 'S' && c != 'P') {
      Fail(std::string(field) + " is neither 'S' (statement) nor 'P' (portal)");
    }
    return static_cast<Target>(c);
  }

  void Fail(const std::string& why) {
    if (ok()) error_ = why;
  }
  bool ok() const { return error_.empty(); }
  // OK once every field was read and nothing follows; else what is wrong.
  Status Finish() {
    if (ok() && at_ != body_.size()) {
      Fail(std::to_string(body_.size() - at_) + " bytes after its last field");
    }
    if (ok()) return Status::Ok();
    return Status::InvalidArgument(std::string("invalid ") + message_ + " message: " + error_);
  }

 private:
  bool Has(std::size_t n, const char* field) {
    if (!ok()) return false;
    if (body_.size() - at_ < n) {
      Fail(std::string("it ends inside ") + field);
      return false;
    }
    return true;
  }

  const std::string_view body_;
  const char* const message_;
  std::size_t at_ = 0;
  std::string error_;
};

}  // namespace

Result<ParseMessage> DecodeParse(std::string_view body) {
  FieldReader r(body, "Parse");
  ParseMessage m;
  m.statement = r.String("the statement name");
  m.query = r.String("the query string");
  const std::size_t n = r.Count("the parameter type count");
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    m.parameter_types.push_back(static_cast<std::uint32_t>(r.Int32("a parameter type")));
  }
  TANDEM_RETURN_IF_ERROR(r.Finish());
  return m;
}

Result<BindMessage> DecodeBind(std::string_view body) {
  FieldReader r(body, "Bind");
  BindMessage m;
  m.portal = r.String("the portal name");
  m.statement = r.String("the statement name");
  const std::size_t formats = r.Count("the parameter format count");
  std::vector<Format> sent;
  for (std::size_t i = 0; i < formats && r.ok(); ++i) {
    sent.push_back(r.FormatCode("a parameter format code"));
  }
  const std::size_t n = r.Count("the parameter count");
  if (r.ok() && formats > 1 && formats != n) {
    r.Fail(std::to_string(formats) + " parameter format codes for " + std::to_string(n) +
           " parameters (0, 1 or one each)");
  }
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    const std::int32_t length = r.Int32("a parameter value's length");
    if (length == -1) {
      m.parameters.emplace_back(std::nullopt);
    } else if (length < 0) {
      r.Fail("a parameter value's length is " + std::to_string(length) + " (-1 is NULL)");
    } else {
      m.parameters.emplace_back(r.Bytes(static_cast<std::size_t>(length), "a parameter value"));
    }
    m.parameter_formats.push_back(formats == 0 ? Format::kText : formats == 1 ? sent[0] : sent[i]);
  }
  const std::size_t results = r.Count("the result format count");
  for (std::size_t i = 0; i < results && r.ok(); ++i) {
    m.result_formats.push_back(r.FormatCode("a result format code"));
  }
  TANDEM_RETURN_IF_ERROR(r.Finish());
  return m;
}

namespace {

// Describe's and Close's contents: Byte1 'S' or 'P' (`target_field` names it), then a name.
Result<TargetMessage> DecodeTarget(std::string_view body, const char* message,
                                   const char* target_field) {
  FieldReader r(body, message);
  TargetMessage m;
  m.target = r.TargetByte(target_field);
  m.name = r.String("the name");
  TANDEM_RETURN_IF_ERROR(r.Finish());
  return m;
}

}  // namespace

Result<DescribeMessage> DecodeDescribe(std::string_view body) {
  return DecodeTarget(body, "Describe", "what to describe");
}

Result<CloseMessage> DecodeClose(std::string_view body) {
  return DecodeTarget(body, "Close", "what to close");
}

Result<ExecuteMessage> DecodeExecute(std::string_view body) {
  FieldReader r(body, "Execute");
  ExecuteMessage m;
  m.portal = r.String("the portal name");
  const std::int32_t max_rows = r.Int32("the row limit");
  m.max_rows = max_rows > 0 ? static_cast<std::uint32_t>(max_rows) : 0;
  TANDEM_RETURN_IF_ERROR(r.Finish());
  return m;
}

void AppendAuthenticationOk(std::string& out) {
  MessageWriter m(out, 'R');
  PutInt32(out, 0);
}

void AppendParameterStatus(std::string& out, std::string_view name, std::string_view value) {
  MessageWriter m(out, 'S');
  PutString(out, name);
  PutString(out, value);
}

void AppendBackendKeyData(std::string& out, BackendKey key) {
  MessageWriter m(out, 'K');
  PutInt32(out, key.process_id);
  PutInt32(out, key.secret_key);
}

void AppendNegotiateProtocolVersion(std::string& out, std::uint32_t newest_minor,
                                    std::span<const std::string> unrecognized_options) {
  MessageWriter m(out, 'v');
  PutUint32(out, newest_minor);
  PutUint32(out, static_cast<std::uint32_t>(unrecognized_options.size()));
  for (const std::string& option : unrecognized_options) PutString(out, option);
}

void AppendReadyForQuery(std::string& out, TransactionStatus status) {
  MessageWriter m(out, 'Z');
  out.push_back(static_cast<char>(status));
}

void AppendRowDescription(std::string& out, std::span<const FieldDescription> fields) {
  TANDEM_CHECK(fields.size() <= std::numeric_limits<std::int16_t>::max(),
               "a RowDescription of more columns than its Int16 count");
  MessageWriter m(out, 'T');
  PutInt16(out, static_cast<std::int16_t>(fields.size()));
  for (const FieldDescription& f : fields) {
    PutString(out, f.name);
    PutInt32(out, 0);  // no table
    PutInt16(out, 0);  // no attribute number
    PutUint32(out, f.type.oid);
    PutInt16(out, f.type.typlen);
    PutInt32(out, f.type_modifier);
    PutInt16(out, static_cast<std::int16_t>(f.format));
  }
}

std::size_t DataRowBytes(std::span<const Value> values) {
  std::size_t bytes = 1 + 4 + 2;
  for (const Value& v : values) bytes += 4 + (v ? v->size() : 0);
  return bytes;
}

void AppendDataRow(std::string& out, std::span<const Value> values) {
  TANDEM_CHECK(values.size() <= std::numeric_limits<std::int16_t>::max(),
               "a DataRow of more columns than its Int16 count");
  out.reserve(out.size() + DataRowBytes(values));
  MessageWriter m(out, 'D');
  PutInt16(out, static_cast<std::int16_t>(values.size()));
  for (const Value& v : values) {
    if (!v) {
      PutInt32(out, -1);
      continue;
    }
    TANDEM_CHECK(v->size() <= std::numeric_limits<std::int32_t>::max(),
                 "a DataRow value longer than its Int32 length");
    PutInt32(out, static_cast<std::int32_t>(v->size()));
    out.append(*v);
  }
}

void AppendCommandComplete(std::string& out, std::string_view tag) {
  MessageWriter m(out, 'C');
  PutString(out, tag);
}

void AppendEmptyQueryResponse(std::string& out) { MessageWriter m(out, 'I'); }

void AppendErrorResponse(std::string& out, const ErrorFields& error) {
  AppendFields(out, 'E', error);
}

void AppendNoticeResponse(std::string& out, const ErrorFields& notice) {
  AppendFields(out, 'N', notice);
}

void AppendCopyOutResponse(std::string& out, std::uint16_t columns) {
  TANDEM_CHECK(columns <= std::numeric_limits<std::int16_t>::max(),
               "a CopyOutResponse of more columns than its Int16 count");
  MessageWriter m(out, 'H');
  out.push_back('\0');  // text
  PutInt16(out, static_cast<std::int16_t>(columns));
  for (std::uint16_t i = 0; i < columns; ++i) PutInt16(out, 0);
}

void AppendCopyData(std::string& out, std::string_view data) {
  MessageWriter m(out, 'd');
  out.append(data);
}

void AppendCopyDone(std::string& out) { MessageWriter m(out, 'c'); }

void AppendParseComplete(std::string& out) { MessageWriter m(out, '1'); }
void AppendBindComplete(std::string& out) { MessageWriter m(out, '2'); }
void AppendCloseComplete(std::string& out) { MessageWriter m(out, '3'); }
void AppendNoData(std::string& out) { MessageWriter m(out, 'n'); }
void AppendPortalSuspended(std::string& out) { MessageWriter m(out, 's'); }

void AppendParameterDescription(std::string& out, std::span<const std::uint32_t> types) {
  TANDEM_CHECK(types.size() <= std::numeric_limits<std::uint16_t>::max(),
               "a ParameterDescription of more parameters than its Int16 count");
  MessageWriter m(out, 't');
  PutInt16(out, static_cast<std::int16_t>(static_cast<std::uint16_t>(types.size())));
  for (std::uint32_t oid : types) PutUint32(out, oid);
}

}  // namespace tandem::pgwire
