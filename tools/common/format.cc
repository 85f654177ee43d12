#include "tools/common/format.h"

#include <cmath>

#include "base/datum_text.h"
#include "base/json.h"

namespace tandem::tools {

// ---------------------------------------------------------------------------------------------
// JsonWriter

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::Key(std::string_view key) {
  Separate();
  out_ += JsonQuote(key);
  out_ += ':';
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::String(std::string_view value) {
  Separate();
  out_ += JsonQuote(value);
  return *this;
}
JsonWriter& JsonWriter::Int(std::int64_t value) {
  Separate();
  out_ += std::to_string(value);
  return *this;
}
JsonWriter& JsonWriter::UInt(std::uint64_t value) {
  Separate();
  out_ += std::to_string(value);
  return *this;
}
JsonWriter& JsonWriter::Double(double value) {
  if (!std::isfinite(value)) return String(FloatText(value));
  Separate();
  out_ += FloatText(value);
  return *this;
}
JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_ += value ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::FrontierValue(Frontier frontier) {
  return frontier.empty() ? Null() : UInt(frontier.time());
}
JsonWriter& JsonWriter::DatumValue(const Datum& d) {
  switch (d.index()) {
    case 0:
      return Null();
    case 1:
      return Bool(std::get<bool>(d));
    case 2:
      return Int(std::get<std::int64_t>(d));
    case 3:
      return Double(std::get<double>(d));
    case 4:
      return String(std::get<std::string>(d));
    default:  // numeric, bytea, date, time, timestamp, timestamptz, interval, uuid
      return String(PostgresOutput(d));
  }
}
JsonWriter& JsonWriter::RowValue(const Row& row) {
  BeginArray();
  for (const Datum& d : row) DatumValue(d);
  return EndArray();
}
JsonWriter& JsonWriter::Raw(std::string_view json) {
  Separate();
  out_ += json;
  return *this;
}

std::string JsonError(std::string_view message, int exit_code) {
  JsonWriter json;
  json.BeginObject().Key("error").String(message).Key("exit_code").Int(exit_code).EndObject();
  return json.str();
}

}  // namespace tandem::tools
