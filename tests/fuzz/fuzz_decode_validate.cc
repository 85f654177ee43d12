// Fuzz target: the bytes a controller can send, through decoding and validation (DESIGN §3.2).
//
// Each input is tried as a binary Command, as a binary Response and as JSON. Whatever decodes is
// validated by a copy of a Validator primed with samples::ImportingEpoch() (the sample primary
// dataflow, a compaction, a maintained importer and a one-shot read: so peeks, imports, drops and
// compactions reach their deep checks) and samples::TableDataflow() (a plain and an upsert table,
// with a data directory: so writes reach theirs), and these properties are checked —
// a violation abort()s, which libFuzzer and the corpus runner report:
//   * a failed decode has one of the documented labels and a reason;
//   * a decoded envelope has a kind, re-encodes to bytes that decode to the same encoding;
//   * a refused command leaves the validator unchanged and its reason starts with Describe();
//   * the same holds for the command checked as an observer's and as a writer session's
//     (ValidateObserver), which never accept a command that changes the epoch (a writer's
//     WriteTable changes no validator state);
//   * what prints as JSON parses back and validates identically, and its text is stable after
//     one round trip.
#include <google/protobuf/stubs/logging.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "ipc/codec.h"
#include "ipc/validate.h"
#include "unit/protocol_samples.h"

namespace tandem::ipc {
namespace {

const Validator& Primed() {
  static const Validator primed = [] {
    Validator v;
    v.set_data_dir(true);
    std::vector<pb::Command> epoch = samples::ImportingEpoch();
    epoch.push_back(samples::TableDataflow());
    for (const auto& command : epoch) {
      const Status s = v.Validate(command);
      FUZZ_CHECK(s.ok(), s.message());
    }
    return v;
  }();
  return primed;
}

std::map<std::string, std::string> Snapshot(const Validator& v) {
  std::map<std::string, std::string> out;
  for (const auto& [id, schema] : v.collections()) out["c " + id] = Encode(schema);
  for (const auto& [id, info] : v.indexes()) {
    std::string text = info.on + ":";
    for (auto c : info.key) text += std::to_string(c) + ",";
    out["i " + id] = text;
    for (const auto& importer : v.ImportersOf(id)) out["i " + id] += " imported by " + importer;
    if (const auto as_of = v.OneShotAsOf(id))
      out["i " + id] += " one-shot @" + std::to_string(*as_of);
  }
  for (const auto& [id, frontier] : v.allowed_compaction()) {
    out["f " + id] = std::to_string(frontier);
  }
  for (const auto& [id, table] : v.tables()) {
    out["t " + id] = Encode(table.schema);
    for (auto c : table.upsert_key) out["t " + id] += "," + std::to_string(c);
  }
  return out;
}

Status CheckValidation(const pb::Command& command) {
  Validator v = Primed();
  const Status status = v.Validate(command);
  if (!status.ok()) {
    FUZZ_CHECK(status.message().rfind(Describe(command) + ": ", 0) == 0, status.message());
    FUZZ_CHECK(Snapshot(v) == Snapshot(Primed()), "refused command changed the validator");
  }
  return status;
}

// As an observer's command (a writer session's when `writer`): it changes nothing, a writer may
// also write, and a refusal is described like any other. A writer's verdict on anything but a
// WriteTable is a plain observer's (bar the wording of the read-only refusal).
Status CheckObserverValidation(const pb::Command& command, bool writer = false) {
  const Status status = Primed().ValidateObserver(command, writer);
  if (status.ok()) {
    FUZZ_CHECK(
        command.has_hello() || command.has_peek() || command.has_cancel_peek() ||
            command.has_goodbye() || (writer && command.has_write_table()),
        std::string(writer ? "a writer" : "an observer") + " may send " + CommandName(command));
  } else {
    FUZZ_CHECK(status.message().rfind(Describe(command) + ": ", 0) == 0, status.message());
  }
  if (writer && !command.has_write_table()) {
    FUZZ_CHECK(
        status.ok() == CheckObserverValidation(command).ok(),
        "a writer session differs from an observer's on " + std::string(CommandName(command)));
  }
  if (writer && command.has_write_table()) {
    // A writer's write is checked as the controller's would be.
    Validator v = Primed();
    const Status as_controller = v.Validate(command);
    FUZZ_CHECK(as_controller.code() == status.code() && as_controller.message() == status.message(),
               status.message() + " vs the controller's " + as_controller.message());
  }
  return status;
}

template <typename Envelope>
void CheckDecoded(const Decoded<Envelope>& decoded, Decoded<Envelope> (*decode)(std::string_view)) {
  if (!decoded.ok()) {
    const std::string& label = decoded.error.label;
    FUZZ_CHECK(
        label == "empty" || label == "oversized" || label == "unparsable" || label == "no_kind",
        label);
    FUZZ_CHECK(!decoded.error.reason.empty(), label);
    return;
  }
  FUZZ_CHECK(decoded.message.kind_case() != Envelope::KIND_NOT_SET, "decoded without a kind");
  const std::string bytes = Encode(decoded.message);
  const auto again = decode(bytes);
  FUZZ_CHECK(again.ok(), again.error.reason);
  FUZZ_CHECK(Encode(again.message) == bytes, "re-encoding is not stable");
}

void CheckCommand(const pb::Command& command) {
  const Status status = CheckValidation(command);
  const Status observer = CheckObserverValidation(command);
  (void)CheckObserverValidation(command, /*writer=*/true);
  const auto json = TryToJson(command);
  if (!json.ok()) return;  // nested deeper than the JSON printer goes
  const auto parsed = CommandFromJson(*json);
  FUZZ_CHECK(parsed.ok(), parsed.status().message() + " in " + *json);
  const Status again = CheckValidation(*parsed);
  FUZZ_CHECK(again.code() == status.code() && again.message() == status.message(),
             status.message() + " vs " + again.message());
  const Status observer_again = CheckObserverValidation(*parsed);
  FUZZ_CHECK(
      observer_again.code() == observer.code() && observer_again.message() == observer.message(),
      observer.message() + " vs " + observer_again.message());
  // Text is stable after one round trip (not before: -0.0 prints as -0 and parses back as 0).
  const std::string text = ToJson(*parsed);
  const auto reparsed = CommandFromJson(text);
  FUZZ_CHECK(reparsed.ok() && ToJson(*reparsed) == text, text);
}

void CheckResponse(const pb::Response& response) {
  const auto json = TryToJson(response);
  if (!json.ok()) return;
  const auto parsed = ResponseFromJson(*json);
  FUZZ_CHECK(parsed.ok(), parsed.status().message() + " in " + *json);
  const std::string text = ToJson(*parsed);
  const auto reparsed = ResponseFromJson(text);
  FUZZ_CHECK(reparsed.ok() && ToJson(*reparsed) == text, text);
}

}  // namespace
}  // namespace tandem::ipc

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tandem::ipc;  // NOLINT(google-build-using-namespace)
  // Protobuf logs (to stderr) every string field with invalid UTF-8 it refuses to parse.
  // An object, not a leaked `new`: at -O1 the pointer is optimised away and LeakSanitizer reports
  // the silencer.
  static google::protobuf::LogSilencer quiet;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  const auto command = DecodeCommand(bytes);
  CheckDecoded(command, &DecodeCommand);
  if (command.ok()) CheckCommand(command.message);

  const auto response = DecodeResponse(bytes);
  CheckDecoded(response, &DecodeResponse);
  if (response.ok()) CheckResponse(response.message);

  const auto from_json = CommandFromJson(bytes);
  if (from_json.ok()) {
    FUZZ_CHECK(from_json->kind_case() != tandem::ipc::pb::Command::KIND_NOT_SET, "JSON kind");
    CheckCommand(*from_json);
  }
  return 0;
}
