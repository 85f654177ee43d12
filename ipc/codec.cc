#include "ipc/codec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "base/global_id.h"

namespace tandem::ipc {
namespace {

namespace gpb = ::google::protobuf;

// The envelope's kind case is KIND_NOT_SET both when nothing was sent and when the only field has
// a number this version does not know (protobuf keeps it as an unknown field).
template <typename Envelope>
bool HasKind(const Envelope& envelope) {
  return envelope.kind_case() != Envelope::KIND_NOT_SET;
}

template <typename Envelope>
Decoded<Envelope> Decode(std::string_view bytes, const char* what,
                         std::size_t limit = kMaxMessageBytes) {
  Decoded<Envelope> out;
  if (bytes.empty()) {
    out.error = {"empty", std::string("empty ") + what};
  } else if (bytes.size() > limit) {
    out.error = {"oversized", std::string(what) + " of " + std::to_string(bytes.size()) +
                                  " bytes exceeds the limit of " + std::to_string(limit) +
                                  " bytes"};
  } else if (!out.message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    out.message.Clear();
    out.error = {"unparsable", std::string(what) + " of " + std::to_string(bytes.size()) +
                                   " bytes is not a valid protobuf encoding"};
  } else if (!HasKind(out.message)) {
    out.message.Clear();
    out.error = {"no_kind", std::string(what) + " has no known kind (empty envelope, or a kind " +
                                "this protocol version does not know)"};
  }
  return out;
}

template <typename Envelope>
Result<Envelope> FromJson(std::string_view json, const char* what) {
  Envelope message;
  gpb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  options.case_insensitive_enum_parsing = false;
  const auto status =
      gpb::util::JsonStringToMessage(gpb::StringPiece(json.data(), json.size()), &message, options);
  if (!status.ok()) {
    return Status::InvalidArgument(std::string(what) + " JSON: " + std::string(status.message()));
  }
  if (!HasKind(message)) {
    return Status::InvalidArgument(std::string(what) + " JSON has no kind");
  }
  return message;
}

constexpr char kTypeUrlPrefix[] = "type.googleapis.com";

// One resolver for the generated pool, built on first use. The resolver is safe to share across
// threads (it only reads the immutable generated pool).
gpb::util::TypeResolver* GeneratedTypeResolver() {
  static gpb::util::TypeResolver* resolver = gpb::util::NewTypeResolverForDescriptorPool(
      kTypeUrlPrefix, gpb::DescriptorPool::generated_pool());
  return resolver;
}

}  // namespace

Decoded<pb::Command> DecodeCommand(std::string_view bytes) {
  return Decode<pb::Command>(bytes, "command");
}

Decoded<pb::Command> DecodeInternalCommand(std::string_view bytes) {
  return Decode<pb::Command>(bytes, "command", kMaxInternalMessageBytes);
}

Decoded<pb::Response> DecodeResponse(std::string_view bytes) {
  return Decode<pb::Response>(bytes, "response");
}

std::string Encode(const google::protobuf::Message& message) {
  std::string out;
  {
    gpb::io::StringOutputStream stream(&out);
    gpb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }  // the CodedOutputStream flushes into `out` when it goes away
  return out;
}

Result<pb::Command> CommandFromJson(std::string_view json) {
  return FromJson<pb::Command>(json, "command");
}

Result<pb::Response> ResponseFromJson(std::string_view json) {
  return FromJson<pb::Response>(json, "response");
}

Result<std::string> TryToJson(const google::protobuf::Message& message) {
  // Not MessageToJsonString: it serializes non-deterministically, so map entries would print in
  // hash order. Serialize deterministically, then print from the bytes.
  gpb::util::JsonPrintOptions options;
  options.add_whitespace = false;
  options.always_print_primitive_fields = true;
  options.always_print_enums_as_ints = false;
  options.preserve_proto_field_names = true;
  std::string json;
  const auto status = gpb::util::BinaryToJsonString(
      GeneratedTypeResolver(),
      std::string(kTypeUrlPrefix) + "/" + message.GetDescriptor()->full_name(), Encode(message),
      &json, options);
  if (!status.ok()) return Status::InvalidArgument(std::string(status.message()));
  return json;
}

std::string ToJson(const google::protobuf::Message& message) {
  auto json = TryToJson(message);
  if (json.ok()) return std::move(json).value();
  // Still valid JSON: the reason is quoted.
  std::string out = "{\"unprintable\": \"";
  for (const char c : Printable(json.status().message(), 200)) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"}";
}

const char* CommandName(const pb::Command& command) {
  switch (command.kind_case()) {
    case pb::Command::kHello:
      return "Hello";
    case pb::Command::kCreateInstance:
      return "CreateInstance";
    case pb::Command::kInitializationComplete:
      return "InitializationComplete";
    case pb::Command::kUpdateConfiguration:
      return "UpdateConfiguration";
    case pb::Command::kCreateDataflow:
      return "CreateDataflow";
    case pb::Command::kSchedule:
      return "Schedule";
    case pb::Command::kAllowWrites:
      return "AllowWrites";
    case pb::Command::kAllowCompaction:
      return "AllowCompaction";
    case pb::Command::kPeek:
      return "Peek";
    case pb::Command::kCancelPeek:
      return "CancelPeek";
    case pb::Command::kGoodbye:
      return "Goodbye";
    case pb::Command::kWriteTable:
      return "WriteTable";
    case pb::Command::kSubscribe:
      return "Subscribe";
    case pb::Command::kCancelSubscribe:
      return "CancelSubscribe";
    case pb::Command::KIND_NOT_SET:
      break;
  }
  return "NoKind";
}

const char* ResponseName(const pb::Response& response) {
  switch (response.kind_case()) {
    case pb::Response::kFrontiers:
      return "Frontiers";
    case pb::Response::kPeekResponse:
      return "PeekResponse";
    case pb::Response::kStatus:
      return "Status";
    case pb::Response::kCommandError:
      return "CommandError";
    case pb::Response::kWriteResponse:
      return "WriteResponse";
    case pb::Response::kSubscribeBatch:
      return "SubscribeBatch";
    case pb::Response::kSubscribeEnd:
      return "SubscribeEnd";
    case pb::Response::KIND_NOT_SET:
      break;
  }
  return "NoKind";
}

namespace {

std::string FrontierText(const pb::Frontier& frontier) {
  std::string out = "[";
  for (int i = 0; i < frontier.elements_size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(frontier.elements(i));
  }
  return out + "]";
}

// "u1, u2, u3, u4, …+2": the first few of `items`, printable, and how many more there are.
std::string ShortList(const std::vector<std::string>& items) {
  constexpr std::size_t kShown = 4;
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kShown; ++i) {
    out += (i > 0 ? ", " : "") + Printable(items[i], 40);
  }
  if (items.size() > kShown) out += ", …+" + std::to_string(items.size() - kShown);
  return out;
}

// The ids a dataflow creates that a user can have named: its index exports first (what it is
// read and dropped by), then its sources and builds. Only GlobalIds in canonical spelling: an id
// that is not one (a tool's placeholder, a typo) names nothing the replica could know, and the
// reason for refusing it quotes it anyway.
std::string CreatedIds(const pb::DataflowDescription& desc) {
  std::vector<std::string> ids;
  auto add = [&](const std::string& id) {
    const auto parsed = GlobalId::Parse(id);
    if (parsed && parsed->ToString() == id) ids.push_back(id);
  };
  for (const auto& index : desc.index_exports()) add(index.id());
  for (const auto& source : desc.source_imports()) add(source.id());
  for (const auto& build : desc.objects_to_build()) add(build.id());
  return ShortList(ids);
}

}  // namespace

std::string Describe(const pb::Command& command) {
  const std::string name = CommandName(command);
  switch (command.kind_case()) {
    case pb::Command::kHello:
      return name + "(" + Printable(command.hello().nonce(), 24) + ", v" +
             std::to_string(command.hello().protocol_version()) + ")";
    case pb::Command::kUpdateConfiguration: {
      // Sorted: map iteration order differs between equal messages.
      std::vector<std::string> names;
      for (const auto& [key, value] : command.update_configuration().params()) {
        names.push_back(key);
      }
      std::sort(names.begin(), names.end());
      return name + "(" + ShortList(names) + ")";
    }
    case pb::Command::kCreateDataflow: {
      const std::string ids = CreatedIds(command.create_dataflow().desc());
      return ids.empty() ? name : name + "(" + ids + ")";
    }
    case pb::Command::kSchedule:
      return name + "(" + Printable(command.schedule().id(), 24) + ")";
    case pb::Command::kAllowWrites:
      return name + "(" + Printable(command.allow_writes().id(), 24) + ")";
    case pb::Command::kAllowCompaction:
      return name + "(" + Printable(command.allow_compaction().id(), 24) + ", " +
             FrontierText(command.allow_compaction().frontier()) + ")";
    case pb::Command::kPeek:
      return name + "(" + Printable(command.peek().uuid(), 8) + ", " +
             Printable(command.peek().id(), 24) + " @ " +
             std::to_string(command.peek().timestamp()) + ")";
    case pb::Command::kCancelPeek:
      return name + "(" + Printable(command.cancel_peek().uuid(), 8) + ")";
    case pb::Command::kWriteTable:
      return name + "(" + Printable(command.write_table().uuid(), 8) + ", " +
             Printable(command.write_table().id(), 24) + ", " +
             std::to_string(command.write_table().updates_size()) + " updates)";
    case pb::Command::kSubscribe: {
      const pb::Subscribe& s = command.subscribe();
      return name + "(" + Printable(s.uuid(), 8) + ", " + Printable(s.id(), 24) + " @ " +
             (s.has_as_of() ? std::to_string(s.as_of()) : "latest") +
             (s.has_up_to() ? " up to " + std::to_string(s.up_to()) : "") + ")";
    }
    case pb::Command::kCancelSubscribe:
      return name + "(" + Printable(command.cancel_subscribe().uuid(), 8) + ")";
    case pb::Command::kCreateInstance:
    case pb::Command::kInitializationComplete:
    case pb::Command::kGoodbye:
    case pb::Command::KIND_NOT_SET:
      break;
  }
  return name;
}

pb::Response MakeSubscribeEnd(std::string uuid, pb::SubscribeEnd::Reason reason,
                              std::string detail) {
  pb::Response r;
  auto* end = r.mutable_subscribe_end();
  end->set_uuid(std::move(uuid));
  end->set_reason(reason);
  end->set_detail(std::move(detail));
  return r;
}

pb::Response MakeCommandError(std::string what, std::string why) {
  pb::Response response;
  auto* error = response.mutable_command_error();
  error->set_what(std::move(what));
  error->set_why(std::move(why));
  return response;
}

std::string Printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  const std::size_t n = text.size() <= max_chars ? text.size() : max_chars;
  out.reserve(n + 3);
  for (std::size_t i = 0; i < n; ++i) {
    const char c = text[i];
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  if (n < text.size()) out += "…";
  return out;
}

}  // namespace tandem::ipc
