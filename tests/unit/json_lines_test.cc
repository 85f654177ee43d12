// The JSON-lines format (ipc/formats/json_lines.h; workers/README.md "CSV and JSON-lines
// sources"): a strict JSON object per line, fields by name, types, escapes, upsert deletes.
#include "ipc/formats/json_lines.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/datum_text.h"
#include "unit/protocol_samples.h"

namespace tandem::ipc {
namespace {

using samples::MakeColumn;
using samples::MakeSchema;
using samples::WideSchema;

SourceRecord Ok(std::string_view line, const pb::Schema& s = WideSchema(),
                const std::vector<std::uint32_t>& key = {}) {
  auto r = ParseJsonLine(line, s, key);
  EXPECT_TRUE(r.has_value()) << line;
  if (!r) return {};
  if (auto* e = std::get_if<std::string>(&*r)) {
    ADD_FAILURE() << line << ": " << *e;
    return {};
  }
  return std::get<SourceRecord>(*r);
}

std::string Bad(std::string_view line, const pb::Schema& s = WideSchema(),
                const std::vector<std::uint32_t>& key = {}) {
  auto r = ParseJsonLine(line, s, key);
  EXPECT_TRUE(r.has_value()) << line;
  if (!r) return {};
  auto* e = std::get_if<std::string>(&*r);
  EXPECT_NE(e, nullptr) << line << " parsed";
  return e ? *e : "";
}

TEST(JsonLines, FieldsByNameInAnyOrderMissingOnesNullUnknownOnesIgnored) {
  SourceRecord r = Ok(R"({"b": true, "k": -12, "x": {"deep": [1, {"y": null}]}, "s": "abc"})");
  EXPECT_EQ(r.kind, SourceRecord::Kind::kUpdate);
  EXPECT_EQ(r.diff, 1);
  EXPECT_EQ(r.row, (Row{std::int64_t{-12}, std::string("abc"), Null{}, true}));
  EXPECT_EQ(Ok(R"({"k":1,"s":null})").row, (Row{std::int64_t{1}, Null{}, Null{}, Null{}}));
}

TEST(JsonLines, BlankLinesAreNoRecord) {
  EXPECT_FALSE(ParseJsonLine("", WideSchema(), {}).has_value());
  EXPECT_FALSE(ParseJsonLine(" \t\r", WideSchema(), {}).has_value());
}

TEST(JsonLines, Float64TakesAnyNumberAndTheNamedSpecials) {
  EXPECT_EQ(std::get<double>(Ok(R"({"k":1,"f":7})").row[2]), 7.0);
  EXPECT_EQ(std::get<double>(Ok(R"({"k":1,"f":-2.5e3})").row[2]), -2500.0);
  EXPECT_TRUE(std::isnan(std::get<double>(Ok(R"({"k":1,"f":"nan"})").row[2])));
  EXPECT_EQ(std::get<double>(Ok(R"({"k":1,"f":"-inf"})").row[2]), -HUGE_VAL);
  EXPECT_EQ(std::get<double>(Ok(R"({"k":1,"f":"inf"})").row[2]), HUGE_VAL);
  EXPECT_NE(Bad(R"({"k":1,"f":1e400})").find("out of the float64 range"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"f":"1.5"})"), "");
}

TEST(JsonLines, Int64IsAnIntegerInRange) {
  EXPECT_EQ(Ok(R"({"k":9223372036854775807})").row[0], Datum(std::int64_t{9223372036854775807}));
  EXPECT_EQ(Ok(R"({"k":-9223372036854775808})").row[0], Datum(INT64_MIN));
  EXPECT_NE(Bad(R"({"k":9223372036854775808})").find("int64 range"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1.0})").find("is an int64"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1e2})").find("is an int64"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":"1"})"), "");
  EXPECT_NE(Bad(R"({"k":01})"), "");  // not JSON
  EXPECT_NE(Bad(R"({"k":-})"), "");
}

TEST(JsonLines, StringEscapesIncludingSurrogatePairs) {
  EXPECT_EQ(std::get<std::string>(Ok(R"({"k":1,"s":"a\"\\\/\b\f\n\r\t"})").row[1]),
            "a\"\\/\b\f\n\r\t");
  EXPECT_EQ(std::get<std::string>(Ok(R"({"k":1,"s":"\u00e9\u20AC\ud83d\ude00"})").row[1]),
            "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(std::get<std::string>(Ok(R"({"k":1,"s":"\u0000"})").row[1]), std::string(1, '\0'));
  EXPECT_EQ(std::get<std::string>(Ok("{\"k\":1,\"s\":\"\xc3\xa9\"}").row[1]), "\xc3\xa9");
  EXPECT_NE(Bad(R"({"k":1,"s":"\ud83d"})").find("surrogate"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"s":"\ud83dx"})").find("surrogate"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"s":"\ude00"})").find("surrogate"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"s":"\ud83d\u0041"})").find("surrogate"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"s":"\u12"})").find("hex"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"s":"\q"})").find("escape"), std::string::npos);
  EXPECT_NE(Bad("{\"k\":1,\"s\":\"a\tb\"}").find("control"), std::string::npos);
  EXPECT_EQ(Bad("{\"k\":1,\"s\":\"\xff\"}"), "the line is not valid UTF-8");
  EXPECT_EQ(Bad("{\"k\":1,\"s\":\"\xed\xa0\x80\"}"), "the line is not valid UTF-8");  // CESU
  EXPECT_EQ(Bad("{\"k\":1,\"s\":\"\xc0\xaf\"}"), "the line is not valid UTF-8");      // overlong
}

TEST(JsonLines, BadDataIsNamed) {
  EXPECT_NE(Bad("[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(Bad("42").find("not a JSON object"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1} x)").find("text after the object"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1}{})").find("text after the object"), std::string::npos);
  EXPECT_EQ(Bad(R"({"k":1,"k":2})"), "the field \"k\" is there twice");
  EXPECT_EQ(Bad(R"({"x":1,"k":2,"x":3})"), "the field \"x\" is there twice");
  EXPECT_NE(Bad(R"({"k":1,)"), "");
  EXPECT_NE(Bad(R"({"k":1)"), "");
  EXPECT_NE(Bad(R"({"k" 1})"), "");
  EXPECT_NE(Bad(R"({k:1})"), "");
  EXPECT_NE(Bad(R"({"k":1,"b":"true"})").find("is a bool"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"s":5})").find("is a string"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":null})").find("non-nullable"), std::string::npos);
  EXPECT_NE(Bad(R"({"s":"x"})").find("missing"), std::string::npos);
  EXPECT_NE(Bad(R"({"k":1,"x":tru})"), "");
  EXPECT_NE(Bad(R"({"k":1,"x":{"a":1,"a":2}})").find("duplicate"), std::string::npos);
  std::string deep = R"({"k":1,"x":)" + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_NE(Bad(deep).find("nested deeper"), std::string::npos);
}

TEST(JsonLines, UpsertDeleteIsAnObjectWithNoNonKeyFieldAtAll) {
  const std::vector<std::uint32_t> key = {0};
  SourceRecord d = Ok(R"({"k":42})", WideSchema(), key);
  EXPECT_EQ(d.kind, SourceRecord::Kind::kDelete);
  EXPECT_EQ(d.row, (Row{std::int64_t{42}}));
  SourceRecord u = Ok(R"({"k":42,"s":null})", WideSchema(), key);
  EXPECT_EQ(u.kind, SourceRecord::Kind::kUpsert);
  EXPECT_EQ(u.row, (Row{std::int64_t{42}, Null{}, Null{}, Null{}}));
  // Fields the schema does not have do not count.
  EXPECT_EQ(Ok(R"({"k":42,"other":1})", WideSchema(), key).kind, SourceRecord::Kind::kDelete);
  // The key in upsert-key order.
  EXPECT_EQ(Ok(R"({"b":true,"k":3})", WideSchema(), {3, 0}).row, (Row{true, std::int64_t{3}}));
}

TEST(JsonLines, AnUpsertSchemaOfOnlyKeyColumnsNeverDeletes) {
  pb::Schema s = MakeSchema({MakeColumn("k", pb::INT64)});
  EXPECT_EQ(Ok(R"({"k":1})", s, {0}).kind, SourceRecord::Kind::kUpsert);
}

// The types of DESIGN §16: a numeric from a JSON number's text exactly (never through a double)
// or from a string, the others from PostgreSQL's text in a string.
TEST(JsonLines, NewTypesReadNumericsExactlyAndTextFormsFromStrings) {
  const pb::Schema s = samples::TypedSchema();
  const Row row = Ok(R"({"price": 1234567890.125, "n": 5, "r": 0.1, "name": "ab", "code": "xyz",)"
                     R"( "b": "\\x0a0b", "d": "2026-12-06", "t": "12:00:00",)"
                     R"( "ts": "2026-12-06 12:00:00", "tz": "2026-12-06 12:00:00+00",)"
                     R"( "i": "1 day 02:00:00", "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"})",
                     s)
                      .row;
  ASSERT_EQ(row.size(), 12u);
  // 1234567890.125 rounds half away from zero to 1234567890.13 (a double would be ….12499…).
  EXPECT_EQ(DatumText(row[0]), "numeric '1234567890.13'");
  EXPECT_EQ(std::get<std::int64_t>(row[1]), 5);
  EXPECT_EQ(std::get<double>(row[2]), static_cast<double>(0.1f));
  EXPECT_EQ(std::get<std::string>(row[4]), "xyz");
  EXPECT_EQ(std::get<Bytes>(row[5]).bytes, "\x0a\x0b");
  EXPECT_EQ(DatumText(row[9]), "timestamptz '2026-12-06 12:00:00+00'");
  EXPECT_EQ(DatumText(row[10]), "interval '1 day 02:00:00'");
  pb::Schema exact;
  *exact.add_columns() = MakeColumn("price", pb::NUMERIC, true);
  EXPECT_EQ(DatumText(Ok(R"({"price": 0.30000000000000000000000000001})", exact).row[0]),
            "numeric '0.30000000000000000000000000001'");
  EXPECT_EQ(DatumText(Ok(R"({"price": "12.50"})", exact).row[0]), "numeric '12.50'");
  EXPECT_NE(Bad(R"({"n": 2147483648})", s).find("out of range"), std::string::npos);
  EXPECT_NE(Bad(R"({"d": 20261206})", s), "");
  EXPECT_NE(Bad(R"({"name": "abcdef"})", s).find("too long"), std::string::npos);
  EXPECT_NE(Bad(R"({"price": true})", s), "");
}

}  // namespace
}  // namespace tandem::ipc
