// Codecs for the controller protocol: binary and JSON round trips of every message kind, and
// malformed input that must become a labelled DecodeError, never a crash.
#include "ipc/codec.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>

#include "ipc/validate.h"
#include "unit/protocol_samples.h"

namespace tandem::ipc {
namespace {

using google::protobuf::util::MessageDifferencer;

// Every case of a oneof `kind`, by field number, so a kind added to the schema without a sample
// fails the round-trip tests.
template <typename Envelope>
std::set<int> AllKinds() {
  std::set<int> kinds;
  const auto* oneof = Envelope::descriptor()->FindOneofByName("kind");
  for (int i = 0; i < oneof->field_count(); ++i) kinds.insert(oneof->field(i)->number());
  return kinds;
}

TEST(Codec, EveryCommandKindRoundTripsThroughBinary) {
  std::set<int> seen;
  for (const auto& [name, command] : samples::AllEncodableCommands()) {
    SCOPED_TRACE(name);
    const std::string bytes = Encode(command);
    const auto decoded = DecodeCommand(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error.label << ": " << decoded.error.reason;
    EXPECT_TRUE(MessageDifferencer::Equals(decoded.message, command));
    EXPECT_EQ(Encode(decoded.message), bytes);
    seen.insert(command.kind_case());
  }
  EXPECT_EQ(seen, AllKinds<pb::Command>());
}

TEST(Codec, EveryResponseKindRoundTripsThroughBinary) {
  std::set<int> seen;
  for (const auto& [name, response] : samples::AllResponses()) {
    SCOPED_TRACE(name);
    const std::string bytes = Encode(response);
    const auto decoded = DecodeResponse(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error.label << ": " << decoded.error.reason;
    EXPECT_TRUE(MessageDifferencer::Equals(decoded.message, response));
    seen.insert(response.kind_case());
  }
  EXPECT_EQ(seen, AllKinds<pb::Response>());
}

TEST(Codec, EveryCommandKindRoundTripsThroughJson) {
  for (const auto& [name, command] : samples::AllEncodableCommands()) {
    SCOPED_TRACE(name);
    const std::string json = ToJson(command);
    const auto parsed = CommandFromJson(json);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << json;
    EXPECT_TRUE(MessageDifferencer::Equals(*parsed, command)) << json;
    EXPECT_EQ(ToJson(*parsed), json);
  }
}

TEST(Codec, EveryResponseKindRoundTripsThroughJson) {
  for (const auto& [name, response] : samples::AllResponses()) {
    SCOPED_TRACE(name);
    const std::string json = ToJson(response);
    const auto parsed = ResponseFromJson(json);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << json;
    // Equals compares doubles with ==, so -0.0 (see below) counts as equal.
    EXPECT_TRUE(MessageDifferencer::Equals(*parsed, response)) << json;
    const std::string again = ToJson(*parsed);
    EXPECT_EQ(ToJson(*ResponseFromJson(again)), again);
  }
}

TEST(Codec, JsonLosesTheSignOfNegativeZero) {
  // A limitation of protobuf's JSON mapping: -0.0 prints as -0, which parses back as +0.0. Row
  // order (base/row.h) does not tell them apart either, so no result changes.
  pb::Response response;
  *response.mutable_peek_response()->mutable_rows()->add_rows()->mutable_row() =
      samples::MakeRow({samples::FloatDatum(-0.0)});
  const std::string json = ToJson(response);
  EXPECT_NE(json.find("{\"float64\":-0}"), std::string::npos) << json;
  const auto parsed = ResponseFromJson(json);
  ASSERT_TRUE(parsed.ok());
  const double back = parsed->peek_response().rows().rows(0).row().datums(0).float64();
  EXPECT_EQ(back, 0.0);
  EXPECT_FALSE(std::signbit(back));
}

TEST(Codec, JsonUsesSchemaFieldNamesEnumNamesAndPrintsZeros) {
  const std::string json = ToJson(samples::PrimaryDataflow());
  EXPECT_NE(json.find("\"source_imports\":"), std::string::npos) << json;
  EXPECT_NE(json.find("\"class\":\"MAINTAINED\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"type\":\"INT64\""), std::string::npos) << json;
  EXPECT_EQ(json.find('\n'), std::string::npos) << "one line per message";
  // A zero is printed, not left out: group key column 0 and as_of [0] are visible.
  EXPECT_NE(json.find("\"group_key\":[0]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"as_of\":{\"elements\":[\"0\"]}"), std::string::npos) << json;
}

TEST(Codec, EqualMessagesWithMapsEncodeAndPrintEqually) {
  // Maps iterate in hash order; the codecs must not.
  pb::Command a, b;
  auto* pa = a.mutable_update_configuration()->mutable_params();
  auto* pb_ = b.mutable_update_configuration()->mutable_params();
  for (int i = 0; i < 50; ++i) (*pa)["param_" + std::to_string(i)] = std::to_string(i);
  for (int i = 49; i >= 0; --i) (*pb_)["param_" + std::to_string(i)] = std::to_string(i);
  EXPECT_EQ(Encode(a), Encode(b));
  const std::string json = ToJson(a);
  EXPECT_EQ(json, ToJson(b));
  // Sorted by key: "param_10" prints before "param_2".
  EXPECT_LT(json.find("\"param_10\""), json.find("\"param_2\""));
}

TEST(Codec, JsonRefusesUnknownFields) {
  const auto parsed = CommandFromJson(R"({"hello": {"nonce": "n", "protocol_versoin": 1}})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("protocol_versoin"), std::string::npos)
      << parsed.status().message();
}

TEST(Codec, JsonRefusesEnvelopeWithoutKind) {
  EXPECT_FALSE(CommandFromJson("{}").ok());
  EXPECT_FALSE(ResponseFromJson("{}").ok());
}

TEST(Codec, JsonRefusesMalformedText) {
  for (const char* text : {"", "{", "{\"hello\":", "[]", "null", "{\"hello\": 3}", "\xff\xfe"}) {
    SCOPED_TRACE(text);
    const auto parsed = CommandFromJson(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(Codec, JsonAcceptsHandWrittenCommands) {
  // Numbers may be JSON numbers or strings; names may be snake_case or lowerCamelCase.
  const auto parsed =
      CommandFromJson(R"({"allowCompaction": {"id": "u9", "frontier": {"elements": [5]}}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(MessageDifferencer::Equals(*parsed, samples::AllowCompaction("u9", {5})));
}

TEST(Codec, DecodeRefusesEmptyMessage) {
  EXPECT_EQ(DecodeCommand("").error.label, "empty");
  EXPECT_EQ(DecodeResponse("").error.label, "empty");
  EXPECT_FALSE(DecodeCommand("").ok());
}

TEST(Codec, DecodeRefusesOversizedMessage) {
  const std::string bytes(kMaxMessageBytes + 1, '\0');
  const auto command = DecodeCommand(bytes);
  EXPECT_FALSE(command.ok());
  EXPECT_EQ(command.error.label, "oversized");
  EXPECT_FALSE(command.error.reason.empty());
  EXPECT_EQ(DecodeResponse(bytes).error.label, "oversized");
}

TEST(Codec, DecodeAcceptsMessageOfExactlyTheLimit) {
  // Hello: 1 byte envelope tag, 4 bytes length, 1 byte nonce tag, 4 bytes length, the nonce,
  // 2 bytes of protocol_version.
  pb::Command hello = samples::Hello(std::string(kMaxMessageBytes - 12, 'n'));
  const std::string bytes = Encode(hello);
  ASSERT_EQ(bytes.size(), kMaxMessageBytes);
  EXPECT_TRUE(DecodeCommand(bytes).ok());
}

TEST(Codec, EveryTruncationOfAValidMessageIsUnparsable) {
  google::protobuf::LogSilencer
      quiet;  // a cut through "héllo" is invalid UTF-8, which protobuf logs
  // The envelope's only field is the kind, length-delimited: every strict prefix cuts it short.
  for (const auto& [name, command] : samples::AllEncodableCommands()) {
    SCOPED_TRACE(name);
    const std::string bytes = Encode(command);
    for (std::size_t n = 1; n < bytes.size(); ++n) {
      const auto decoded = DecodeCommand(std::string_view(bytes).substr(0, n));
      ASSERT_EQ(decoded.error.label, "unparsable") << "prefix of " << n << " bytes";
      EXPECT_FALSE(decoded.error.reason.empty());
    }
  }
  for (const auto& [name, response] : samples::AllResponses()) {
    SCOPED_TRACE(name);
    const std::string bytes = Encode(response);
    for (std::size_t n = 1; n < bytes.size(); ++n) {
      ASSERT_EQ(DecodeResponse(std::string_view(bytes).substr(0, n)).error.label, "unparsable");
    }
  }
}

TEST(Codec, EnvelopeWithOnlyAnUnknownFieldHasNoKind) {
  // Field 99, varint 1: a kind from a future protocol version.
  const std::string future_varint("\x98\x06\x01", 3);
  // Field 15, length-delimited "hi".
  const std::string future_message("\x7a\x02hi", 4);
  // Field 1 (hello) sent as a varint: a known number with the wrong wire type is kept as an
  // unknown field too.
  const std::string wrong_wire_type("\x08\x01", 2);
  for (const auto& bytes : {future_varint, future_message, wrong_wire_type}) {
    const auto command = DecodeCommand(bytes);
    EXPECT_EQ(command.error.label, "no_kind");
    EXPECT_FALSE(command.error.reason.empty());
    EXPECT_EQ(DecodeResponse(bytes).error.label, "no_kind");
  }
}

TEST(Codec, KnownKindWithExtraUnknownFieldsDecodes) {
  std::string bytes = Encode(samples::Schedule("u9"));
  bytes += std::string("\x98\x06\x01", 3);
  const auto decoded = DecodeCommand(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error.reason;
  EXPECT_EQ(decoded.message.schedule().id(), "u9");
  // Kept when re-encoded (a newer peer's field survives forwarding); not in the JSON form.
  EXPECT_EQ(Encode(decoded.message), bytes);
  const auto json = TryToJson(decoded.message);
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(*json, R"({"schedule":{"id":"u9"}})");
}

// Every outcome of decoding arbitrary bytes is OK with a kind, or one of the labels.
template <typename Envelope>
void ExpectSaneOutcome(const Decoded<Envelope>& decoded, std::map<std::string, int>* labels) {
  if (decoded.ok()) {
    EXPECT_NE(decoded.message.kind_case(), Envelope::KIND_NOT_SET);
    ++(*labels)["ok"];
    return;
  }
  EXPECT_TRUE(decoded.error.label == "unparsable" || decoded.error.label == "no_kind" ||
              decoded.error.label == "empty")
      << decoded.error.label;
  EXPECT_FALSE(decoded.error.reason.empty());
  ++(*labels)[decoded.error.label];
}

TEST(Codec, RandomGarbageGetsALabelAndNeverCrashes) {
  google::protobuf::LogSilencer quiet;  // protobuf logs invalid UTF-8 in string fields
  std::map<std::string, int> labels;
  for (std::uint32_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937 rng(seed);
    for (int i = 0; i < 1000; ++i) {
      std::string bytes(rng() % 300, '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      ExpectSaneOutcome(DecodeCommand(bytes), &labels);
      ExpectSaneOutcome(DecodeResponse(bytes), &labels);
    }
  }
  EXPECT_GT(labels["unparsable"], 1000);
}

TEST(Codec, MutatedValidMessagesGetALabelAndNeverCrash) {
  google::protobuf::LogSilencer quiet;
  Validator primed;
  ASSERT_TRUE(primed.Validate(samples::Hello()).ok());
  ASSERT_TRUE(primed.Validate(samples::PrimaryDataflow()).ok());
  std::map<std::string, int> labels;
  std::mt19937 rng(42);
  const auto commands = samples::AllEncodableCommands();
  for (int i = 0; i < 4000; ++i) {
    std::string bytes = Encode(commands[rng() % commands.size()].command);
    for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips) {
      // The byte, then where: the order C++17 gave the assignment (its right side first).
      const auto byte = static_cast<char>(rng());
      bytes[rng() % bytes.size()] = byte;
    }
    const auto decoded = DecodeCommand(bytes);
    ExpectSaneOutcome(decoded, &labels);
    if (!decoded.ok()) continue;
    // Deeper: whatever decodes can be validated, described and printed.
    Validator validator = primed;
    const Status status = validator.Validate(decoded.message);
    if (!status.ok()) {
      EXPECT_EQ(status.message().rfind(Describe(decoded.message) + ": ", 0), 0u)
          << status.message();
    }
    const auto json = TryToJson(decoded.message);
    ASSERT_TRUE(json.ok()) << json.status().ToString();
    EXPECT_TRUE(CommandFromJson(*json).ok()) << *json;
  }
  EXPECT_GT(labels["ok"], 100);
  EXPECT_GT(labels["unparsable"], 100);
}

// A predicate of `depth` nested NOTs, in a peek.
pb::Command PeekWithNestedPredicate(int depth) {
  pb::ScalarExpr expr = samples::Col(0);
  for (int i = 0; i < depth; ++i) expr = samples::Unary(pb::NOT, std::move(expr));
  pb::Command peek = samples::Peek();
  *peek.mutable_peek()->mutable_mfp()->add_predicates() = std::move(expr);
  return peek;
}

TEST(Codec, NestingBeyondProtobufsLimitIsUnparsable) {
  // Protobuf decodes at most 100 nested messages; each NOT is two (ScalarExpr, CallUnary).
  EXPECT_TRUE(DecodeCommand(Encode(PeekWithNestedPredicate(48))).ok());
  EXPECT_EQ(DecodeCommand(Encode(PeekWithNestedPredicate(49))).error.label, "unparsable");
}

TEST(Codec, DecodableMessageTooDeepForTheJsonPrinterPrintsAsUnprintable) {
  // The JSON printer stops at 64 nested messages, below the decoder's 100: such a message is
  // valid on the wire but has no JSON form. ToJson still returns a JSON object that says so.
  const pb::Command printable = PeekWithNestedPredicate(30);
  EXPECT_TRUE(TryToJson(printable).ok());
  const auto decoded = DecodeCommand(Encode(PeekWithNestedPredicate(40)));
  ASSERT_TRUE(decoded.ok());
  EXPECT_FALSE(TryToJson(decoded.message).ok());
  const std::string json = ToJson(decoded.message);
  EXPECT_EQ(json.rfind("{\"unprintable\": \"", 0), 0u) << json;
  google::protobuf::Struct object;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &object).ok()) << json;
  EXPECT_TRUE(object.fields().at("unprintable").has_string_value());
}

TEST(Codec, CommandAndResponseNames) {
  EXPECT_STREQ(CommandName(samples::Hello()), "Hello");
  EXPECT_STREQ(CommandName(samples::PrimaryDataflow()), "CreateDataflow");
  EXPECT_STREQ(CommandName(samples::CancelPeek()), "CancelPeek");
  EXPECT_STREQ(CommandName(pb::Command()), "NoKind");
  EXPECT_STREQ(ResponseName(samples::Frontiers()), "Frontiers");
  EXPECT_STREQ(ResponseName(samples::PeekRows()), "PeekResponse");
  EXPECT_STREQ(ResponseName(samples::Reconciled()), "Status");
  EXPECT_STREQ(ResponseName(samples::CommandError()), "CommandError");
  EXPECT_STREQ(ResponseName(pb::Response()), "NoKind");
}

TEST(Codec, DescribeNamesTheCommandAndWhatItIsAbout) {
  EXPECT_EQ(Describe(samples::Hello("n-1")), "Hello(n-1, v1)");
  EXPECT_EQ(Describe(samples::CreateInstance()), "CreateInstance");
  EXPECT_EQ(Describe(samples::UpdateConfiguration()),
            "UpdateConfiguration(enable_compute_interactive_runtime, max_result_size, "
            "peek_timeout)");
  // A dataflow by its indexes first (what it is read and dropped by), then sources and views.
  EXPECT_EQ(Describe(samples::SecondaryDataflow()), "CreateDataflow(u21, u20)");  // imports u9
  EXPECT_EQ(Describe(samples::SecondaryDataflowFromSources()), "CreateDataflow(u21, u19, u20)");
  EXPECT_EQ(Describe(samples::PrimaryDataflow()), "CreateDataflow(u9, u10, u11, u1, …+7)");
  EXPECT_EQ(Describe(samples::Schedule("u9")), "Schedule(u9)");
  EXPECT_EQ(Describe(samples::AllowCompaction("u9", {5})), "AllowCompaction(u9, [5])");
  EXPECT_EQ(Describe(samples::Drop("u9")), "AllowCompaction(u9, [])");
  EXPECT_EQ(Describe(samples::Peek()), "Peek(3f2a9c4e…, u9 @ 17)");
  EXPECT_EQ(Describe(samples::CancelPeek("abc")), "CancelPeek(abc)");
  EXPECT_EQ(Describe(samples::Goodbye()), "Goodbye");
  EXPECT_EQ(Describe(samples::ObserverHello("o-1")), "Hello(o-1, v1)");
  EXPECT_EQ(Describe(samples::Schedule("u\n1\x01")), "Schedule(u?1?)");
}

TEST(Codec, DescribeOfADataflowNamesOnlyIdsAUserCouldHaveTyped) {
  // A tool's placeholder or a typo ("x1", "u01", "") is no id the replica knows: it is left out
  // of the description (the reason a validator gives quotes it).
  pb::Command c = samples::EmptyDataflow("placeholders");
  *samples::Desc(c)->add_source_imports() = samples::KeyValueImport("x1");
  *samples::Desc(c)->add_objects_to_build() = samples::Build("u01", samples::GetPlan("x1"));
  *samples::Desc(c)->add_objects_to_build() = samples::Build("u3", samples::GetPlan("x1"));
  *samples::Desc(c)->add_index_exports() = samples::Export("u4", "u3", {0});
  *samples::Desc(c)->add_index_exports() = samples::Export("", "u3", {0});
  EXPECT_EQ(Describe(c), "CreateDataflow(u4, u3)");
  EXPECT_EQ(Describe(samples::EmptyDataflow("nothing")), "CreateDataflow");
  pb::Command only_placeholders = samples::EmptyDataflow("x");
  *samples::Desc(only_placeholders)->add_source_imports() = samples::KeyValueImport("x1");
  EXPECT_EQ(Describe(only_placeholders), "CreateDataflow");
}

TEST(Codec, ObserverAndLiveIndexesSurviveBinaryAndJson) {
  const pb::Command hello = samples::ObserverHello();
  const auto decoded = DecodeCommand(Encode(hello));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded.message.hello().observer());
  EXPECT_NE(ToJson(hello).find("\"observer\":true"), std::string::npos) << ToJson(hello);
  // A controller's Hello prints observer false (zeros are printed): the field is always visible.
  EXPECT_NE(ToJson(samples::Hello()).find("\"observer\":false"), std::string::npos);

  const pb::Response accepted = samples::ObserverHelloAccepted();
  const auto back = DecodeResponse(Encode(accepted));
  ASSERT_TRUE(back.ok());
  const auto& a = back.message.status().hello_accepted();
  EXPECT_TRUE(a.observer());
  ASSERT_EQ(a.live_indexes_size(), 2);
  EXPECT_EQ(a.live_indexes(0), "u9");
  EXPECT_EQ(a.live_indexes(1), "u10");
  const std::string json = ToJson(accepted);
  EXPECT_NE(json.find("\"live_indexes\":[\"u9\",\"u10\"]"), std::string::npos) << json;
  const auto parsed = ResponseFromJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(MessageDifferencer::Equals(*parsed, accepted));

  const auto goodbye = CommandFromJson(R"({"goodbye": {}})");
  ASSERT_TRUE(goodbye.ok()) << goodbye.status().ToString();
  EXPECT_TRUE(goodbye->has_goodbye());
  EXPECT_STREQ(CommandName(*goodbye), "Goodbye");
}

TEST(Codec, DescribeIsTheSameForEqualMessagesWhateverTheirMapOrder) {
  // Found by the fuzz target: parameter names were listed in map iteration order, which differs
  // between equal messages (here: one decoded, one parsed from JSON), and cut after a few.
  pb::Command a;
  auto* params = a.mutable_update_configuration()->mutable_params();
  for (int i = 0; i < 40; ++i) (*params)["param_" + std::to_string(i)] = "x";
  const auto from_json = CommandFromJson(ToJson(a));
  ASSERT_TRUE(from_json.ok());
  const auto decoded = DecodeCommand(Encode(a));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(Describe(a), "UpdateConfiguration(param_0, param_1, param_10, param_11, …+36)");
  EXPECT_EQ(Describe(*from_json), Describe(a));
  EXPECT_EQ(Describe(decoded.message), Describe(a));
}

TEST(Codec, MakeCommandErrorCarriesWhatAndWhy) {
  const pb::Response r = MakeCommandError("Schedule(u9)", "unknown id u9");
  ASSERT_TRUE(r.has_command_error());
  EXPECT_EQ(r.command_error().what(), "Schedule(u9)");
  EXPECT_EQ(r.command_error().why(), "unknown id u9");
}

TEST(Codec, PrintableReplacesUnprintableBytesAndTruncates) {
  EXPECT_EQ(Printable("u5"), "u5");
  EXPECT_EQ(Printable(std::string("a\0b\tc\x80", 6)), "a?b?c?");
  EXPECT_EQ(Printable("abcdefghij", 4), "abcd…");
  EXPECT_EQ(Printable("abcd", 4), "abcd");
}

}  // namespace
}  // namespace tandem::ipc
