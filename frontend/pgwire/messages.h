// The PostgreSQL frontend/backend protocol 3.0 as bytes: framing and decoding what a client
// sends, encoding what the server answers. The spec is PostgreSQL's manual, "Frontend/Backend
// Protocol": "Message Formats" for every layout here, "Message Flow" for when each is sent (that
// is connection.h's business, not this file's). No I/O and no state: functions of bytes.
//
// Framing. A connection starts with a *startup packet* (Int32 length including itself, Int32
// code, then the code's contents): a StartupMessage (the code is the protocol version), an
// SSLRequest, a GSSENCRequest or a CancelRequest. Every later message is *typed*: Byte1 type,
// Int32 length including itself but not the type byte, then the contents.
//
// Bounds. Every length read from the network is checked before anything is buffered for it:
//   * a startup packet is 8 ..= kMaxStartupPacketBytes (10000, PostgreSQL's
//     MAX_STARTUP_PACKET_LENGTH) bytes;
//   * a typed message's contents are at most kSmallMessageLimit (10000, PostgreSQL's
//     PQ_SMALL_MESSAGE_LIMIT) bytes, except the types that carry statement text or data
//     (Query, Parse, Bind, FunctionCall, CopyData), which may be `max_message_bytes`:
//     kDefaultMaxMessageBytes (64 MiB) unless configured. PostgreSQL allows 1 GiB; a frontend
//     that buffers a whole statement per connection takes less, and no statement Tandem plans
//     comes near 64 MiB;
//   * a type byte the protocol does not define is refused at once: a client that sends one has
//     lost its framing, and the next four bytes are not a length (PostgreSQL does the same).
//
// Encoding. The Append* functions append one whole backend message to `out`. A protocol String
// is NUL-terminated, so a name, tag or text that contains a NUL is cut at its first NUL (no text
// Tandem sends has one; a DataRow value is length-prefixed and may hold any bytes). A message's
// contents must fit the Int32 length and its column count the Int16 one (a broken invariant
// aborts): callers bound what they encode — QuerySink refuses what SQL could make too large
// (kMaxColumns, kMaxBackendMessageBytes; DataRowBytes tells a row's size first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "frontend/pgwire/pg_type.h"

namespace tandem::pgwire {

// ---- bounds -------------------------------------------------------------------------------------

inline constexpr std::size_t kMaxStartupPacketBytes = 10000;
inline constexpr std::size_t kSmallMessageLimit = 10000;
inline constexpr std::size_t kDefaultMaxMessageBytes = std::size_t{64} << 20;
// The most columns a result (RowDescription, DataRow, CopyOutResponse) may have: PostgreSQL's
// MaxTupleAttributeNumber ("target lists can have at most 1664 entries", 54011). The protocol's
// Int16 count would allow 32767; no client expects more than PostgreSQL sends.
inline constexpr std::size_t kMaxColumns = 1664;
// The most bytes a backend message's contents may have: its Int32 length counts itself.
inline constexpr std::size_t kMaxBackendMessageBytes = 0x7fffffff - 4;

// ---- startup packet codes -----------------------------------------------------------------------

inline constexpr std::uint32_t kProtocolVersion30 = 3u << 16;  // major 3, minor 0
inline constexpr std::uint32_t kCancelRequestCode = (1234u << 16) | 5678u;
inline constexpr std::uint32_t kSslRequestCode = (1234u << 16) | 5679u;
inline constexpr std::uint32_t kGssEncRequestCode = (1234u << 16) | 5680u;

inline constexpr std::uint32_t ProtocolMajor(std::uint32_t version) { return version >> 16; }
inline constexpr std::uint32_t ProtocolMinor(std::uint32_t version) { return version & 0xffffu; }

// ---- frontend message types (after startup) -----------------------------------------------------

namespace frontend {
inline constexpr char kQuery = 'Q';
inline constexpr char kTerminate = 'X';
inline constexpr char kParse = 'P';
inline constexpr char kBind = 'B';
inline constexpr char kDescribe = 'D';
inline constexpr char kExecute = 'E';
inline constexpr char kClose = 'C';
inline constexpr char kSync = 'S';
inline constexpr char kFlush = 'H';
inline constexpr char kFunctionCall = 'F';
inline constexpr char kCopyData = 'd';
inline constexpr char kCopyDone = 'c';
inline constexpr char kCopyFail = 'f';
// PasswordMessage, SASLInitialResponse, SASLResponse and GSSResponse share 'p': expected only
// while authenticating, which `trust` never does.
inline constexpr char kPasswordMessage = 'p';
}  // namespace frontend

// The message's name in PostgreSQL's docs ("Query", "Parse", …), or nullptr when `type` is no
// frontend message type of protocol 3.0.
const char* FrontendMessageName(char type);

// The most contents bytes a message of `type` may have (see Bounds above); 0 when `type` is no
// frontend message type.
std::size_t FrontendMessageLimit(char type, std::size_t max_message_bytes);

// ---- values shared by both directions -----------------------------------------------------------

// A session's cancel key, sent in BackendKeyData and quoted back in a CancelRequest.
struct BackendKey {
  std::int32_t process_id = 0;
  std::int32_t secret_key = 0;
};

enum class TransactionStatus : char {
  kIdle = 'I',           // not in a transaction block
  kInTransaction = 'T',  // in a transaction block
  kFailed = 'E',         // in a failed transaction block: statements refused until it ends
};

// ErrorResponse / NoticeResponse severities, as their S and V fields spell them.
enum class Severity { kError, kFatal, kPanic, kWarning, kNotice, kDebug, kInfo, kLog };
const char* SeverityName(Severity severity);

// The fields of an ErrorResponse or NoticeResponse that Tandem sends ("Error and Notice Message
// Fields"): S and V (severity), C (SQLSTATE, frontend/sqlstate.h), M (message), and when not empty
// D (detail), H (hint) and P (position: 1-based, in characters, into the query string).
struct ErrorFields {
  ErrorFields() = default;
  ErrorFields(Severity severity, std::string sqlstate, std::string message)
      : severity(severity), sqlstate(std::move(sqlstate)), message(std::move(message)) {}
  static ErrorFields Error(std::string sqlstate, std::string message) {
    return ErrorFields(Severity::kError, std::move(sqlstate), std::move(message));
  }
  static ErrorFields Fatal(std::string sqlstate, std::string message) {
    return ErrorFields(Severity::kFatal, std::move(sqlstate), std::move(message));
  }

  Severity severity = Severity::kError;
  std::string sqlstate;  // five characters, digits and upper-case letters
  std::string message;
  std::string detail;
  std::string hint;
  std::uint32_t position = 0;  // 0: none
};

// True when `code` is five characters each a digit or an upper-case ASCII letter.
bool IsValidSqlstate(std::string_view code);

// A format code: 0 text, 1 binary.
enum class Format : std::int16_t { kText = 0, kBinary = 1 };

// One column of a RowDescription. Tandem's columns come from no table (table OID and attribute
// number 0), so a FieldDescription is a name, a type and the format its values are sent in.

struct FieldDescription {
  FieldDescription() = default;
  FieldDescription(std::string name, PgType type) : name(std::move(name)), type(type) {}

  std::string name;
  PgType type = kText;
  std::int32_t type_modifier = -1;  // atttypmod: -1 unless the type has one (varchar(n): n + 4)
  Format format = Format::kText;    // how the column's DataRow values are sent
};

// A value in a DataRow, in its column's format; std::nullopt is SQL NULL.
using Value = std::optional<std::string>;

// ---- framing ------------------------------------------------------------------------------------

// What the front of a byte stream holds.
struct Frame {
  enum class Kind {
    kIncomplete,  // not a whole packet or message yet: wait for more bytes
    kMessage,     // one whole packet or message: `type`, `body`, `size`
    kInvalid,     // a length out of bounds or an unknown type: `error` says which; the stream
                  // cannot be followed past it
  };
  Kind kind = Kind::kIncomplete;
  char type = 0;          // kMessage: the type byte; 0 for a startup packet
  std::string_view body;  // kMessage: the contents after the length word (views `in`)
  std::size_t size = 0;   // kMessage: the bytes the frame takes at the front of `in`
  std::string error;      // kInvalid
};

// The startup packet at the front of `in`.
Frame ReadStartupFrame(std::string_view in);
// The typed message at the front of `in`, its contents bounded by FrontendMessageLimit.
Frame ReadMessageFrame(std::string_view in, std::size_t max_message_bytes);

// ---- decoding startup packets -------------------------------------------------------------------

struct StartupMessage {
  std::uint32_t protocol_version = 0;
  // name → value, in the order sent ("user", "database", "application_name", "options",
  // run-time parameters, "_pq_.*" protocol options). A name sent twice is refused.
  std::vector<std::pair<std::string, std::string>> parameters;
};
struct SslRequest {};
struct GssEncRequest {};
struct CancelRequest {
  BackendKey key;
};
using StartupPacket = std::variant<StartupMessage, SslRequest, GssEncRequest, CancelRequest>;

// Decodes a startup packet's contents (Frame::body of ReadStartupFrame). Refuses (InvalidArgument,
// saying what is wrong) a packet whose length does not fit its code, a parameter list that is not
// NUL-terminated name/value pairs ending in an empty name, an empty or repeated name. The protocol
// version is not checked here: a StartupMessage of any version decodes.
Result<StartupPacket> DecodeStartupPacket(std::string_view body);

// ---- decoding typed messages --------------------------------------------------------------------

// A Query's contents: one String. Refuses contents without a terminating NUL or with bytes after
// it.
Result<std::string_view> DecodeQuery(std::string_view body);

// The extended query protocol's messages ("Message Formats"). Each decoder refuses
// (InvalidArgument, naming the message and what is wrong) contents cut short, a String without its
// NUL, bytes after the last field, and what the field's definition rules out; counts are read as
// PostgreSQL reads them, unsigned (0 ..= 65535). Views point into `body`.

struct ParseMessage {
  std::string_view statement;  // "" is the unnamed statement
  std::string_view query;
  std::vector<std::uint32_t> parameter_types;  // OIDs; 0 leaves a parameter's type to infer
};
Result<ParseMessage> DecodeParse(std::string_view body);

struct BindMessage {
  std::string_view portal;     // "" is the unnamed portal
  std::string_view statement;  // "" is the unnamed statement
  // One per parameter: the format count may be 0 (every parameter text), 1 (that format for all)
  // or the parameter count (refused otherwise); the decoder spells it out per parameter.
  std::vector<Format> parameter_formats;
  std::vector<std::optional<std::string_view>> parameters;  // nullopt: NULL
  // As sent: 0 (every column text), 1 (one format for all) or one per result column — which the
  // statement decides, so it is checked when the portal is made.
  std::vector<Format> result_formats;
};
Result<BindMessage> DecodeBind(std::string_view body);

// Describe and Close name a prepared statement ('S') or a portal ('P').
enum class Target : char { kStatement = 'S', kPortal = 'P' };
struct TargetMessage {
  Target target = Target::kStatement;
  std::string_view name;
};
using DescribeMessage = TargetMessage;
using CloseMessage = TargetMessage;
Result<DescribeMessage> DecodeDescribe(std::string_view body);
Result<CloseMessage> DecodeClose(std::string_view body);

struct ExecuteMessage {
  std::string_view portal;
  // The most rows to return before PortalSuspended; 0 is no limit (a negative count too, as
  // PostgreSQL reads it).
  std::uint32_t max_rows = 0;
};
Result<ExecuteMessage> DecodeExecute(std::string_view body);

// ---- encoding backend messages ------------------------------------------------------------------

// The single byte that answers an SSLRequest or a GSSENCRequest: 'N', encryption declined.
inline constexpr char kEncryptionDeclined = 'N';

void AppendAuthenticationOk(std::string& out);
void AppendParameterStatus(std::string& out, std::string_view name, std::string_view value);
void AppendBackendKeyData(std::string& out, BackendKey key);
// The newest minor version of the requested major version the server supports, and the
// protocol options ("_pq_.*") of the StartupMessage it did not recognise.
void AppendNegotiateProtocolVersion(std::string& out, std::uint32_t newest_minor,
                                    std::span<const std::string> unrecognized_options);
void AppendReadyForQuery(std::string& out, TransactionStatus status);
void AppendRowDescription(std::string& out, std::span<const FieldDescription> fields);
void AppendDataRow(std::string& out, std::span<const Value> values);
// The whole message AppendDataRow would append, in bytes.
std::size_t DataRowBytes(std::span<const Value> values);
// The command tag: "SELECT 3", "INSERT 0 1", "CREATE TABLE", … (whoever ran the statement knows).
void AppendCommandComplete(std::string& out, std::string_view tag);
void AppendEmptyQueryResponse(std::string& out);
void AppendErrorResponse(std::string& out, const ErrorFields& error);
void AppendNoticeResponse(std::string& out, const ErrorFields& notice);
// COPY … TO STDOUT in text format, `columns` columns: then CopyData messages, then CopyDone.
void AppendCopyOutResponse(std::string& out, std::uint16_t columns);
void AppendCopyData(std::string& out, std::string_view data);
void AppendCopyDone(std::string& out);
// The extended query protocol's answers.
void AppendParseComplete(std::string& out);
void AppendBindComplete(std::string& out);
void AppendCloseComplete(std::string& out);
void AppendNoData(std::string& out);
void AppendPortalSuspended(std::string& out);
// The types of a prepared statement's parameters, in order (at most 65535: the Int16 count).
void AppendParameterDescription(std::string& out, std::span<const std::uint32_t> types);

}  // namespace tandem::pgwire
