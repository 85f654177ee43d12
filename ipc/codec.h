// Codecs for the controller protocol (DESIGN §3): protobuf envelopes inside ZeroMQ frames, and
// their JSON mapping (the human form used by tools and test scripts).
//
// Decoding never trusts its input: malformed, truncated, oversized or empty messages, and
// envelopes with no (or an unknown) kind, are a DecodeError with a reason and a metric label —
// never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ipc/tandem.pb.h"

namespace tandem::ipc {

namespace pb = ::tandem::protocol;

// Checked at Hello. Bump when the meaning of an existing field changes.
inline constexpr std::uint32_t kProtocolVersion = 1;
// Largest command or response we accept (also set as ZMQ_MAXMSGSIZE on controller sockets).
inline constexpr std::size_t kMaxMessageBytes = 16u << 20;
// A command the supervisor forwards to a runtime may be a little larger than the session's
// message it was: the multiplexer puts the session's peek and write uuids into namespaces
// (ipc/model.h WireUuid, WriteWireUuid: a prefix of at most a few dozen bytes).
inline constexpr std::size_t kMaxInternalMessageBytes = kMaxMessageBytes + 4096;

// Why a message could not be decoded; `label` is the metric label (tandem_malformed_total).
struct DecodeError {
  std::string label;  // "empty", "oversized", "unparsable", "no_kind"
  std::string reason;
};

template <typename T>
struct Decoded {
  bool ok() const { return error.label.empty(); }
  T message;
  DecodeError error;
};

// Labels are checked in this order: "empty" (no bytes), "oversized" (more than kMaxMessageBytes),
// "unparsable" (not a protobuf encoding of the envelope), "no_kind" (the envelope parsed but no
// known kind is set — e.g. its only field has a number this version does not know: protobuf
// keeps such a field as an unknown field, so it is not "unparsable").
Decoded<pb::Command> DecodeCommand(std::string_view bytes);
// A command the supervisor forwards, as a runtime decodes it: up to kMaxInternalMessageBytes.
Decoded<pb::Command> DecodeInternalCommand(std::string_view bytes);
Decoded<pb::Response> DecodeResponse(std::string_view bytes);
// Deterministic: equal messages encode to equal bytes (map entries sorted by key), so encodings
// may be compared and checked in (the fuzz seed corpus).
std::string Encode(const google::protobuf::Message& message);

// The JSON mapping (protobuf canonical JSON; unknown fields refused). An envelope with no kind is
// refused like "no_kind" above. Errors are InvalidArgument with the parser's reason.
Result<pb::Command> CommandFromJson(std::string_view json);
Result<pb::Response> ResponseFromJson(std::string_view json);
// One line, field names as in tandem.proto (snake_case), enums by name, every field printed
// (zeros and empty lists included, so "column": 0 is visible), map entries sorted by key: equal
// messages give equal text. 64-bit integers are JSON strings (canonical mapping).
// Never fails: a message the printer refuses (nesting deeper than the JSON printer allows, which
// a decodable message can reach) prints as {"unprintable": "<reason>"}; use TryToJson to tell.
std::string ToJson(const google::protobuf::Message& message);
Result<std::string> TryToJson(const google::protobuf::Message& message);

// "Hello", "CreateDataflow", ... — the command's name in logs, errors and metric labels.
const char* CommandName(const pb::Command& command);
// "Frontiers", "PeekResponse", "Status", "CommandError".
const char* ResponseName(const pb::Response& response);
// A short description for errors and logs: "CreateDataflow(u5, u6)", "Peek(3f2a…, u5 @ 17)".
std::string Describe(const pb::Command& command);

// Helpers for building messages.
pb::Response MakeCommandError(std::string what, std::string why);
// SubscribeEnd{uuid, reason, detail} (DESIGN §10).
pb::Response MakeSubscribeEnd(std::string uuid, pb::SubscribeEnd::Reason reason,
                              std::string detail);

// A controller-supplied string made safe to quote in errors and logs: bytes outside printable
// ASCII become '?', and text longer than `max_chars` is cut to that many bytes followed by "…".
std::string Printable(std::string_view text, std::size_t max_chars = 40);

}  // namespace tandem::ipc
