// The extended query protocol's messages as bytes (frontend/pgwire/messages.h): what each decoder
// reads from a client's Parse, Bind, Describe, Close and Execute, what it refuses, and the exact
// bytes of the answers. (A decoded message views its body: each test keeps the body alive.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/pgwire/messages.h"

namespace tandem::pgwire::extended_messages_test {
namespace {

// A message body built field by field, as a client writes it.
class Body {
 public:
  Body& Str(std::string_view s) {
    bytes_.append(s);
    bytes_.push_back('\0');
    return *this;
  }
  Body& I16(std::int32_t v) {
    const auto u = static_cast<std::uint16_t>(v);
    bytes_.push_back(static_cast<char>(u >> 8));
    bytes_.push_back(static_cast<char>(u));
    return *this;
  }
  Body& I32(std::int64_t v) {
    const auto u = static_cast<std::uint32_t>(v);
    for (int shift = 24; shift >= 0; shift -= 8) bytes_.push_back(static_cast<char>(u >> shift));
    return *this;
  }
  Body& Raw(std::string_view s) {
    bytes_.append(s);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

TEST(PgwireExtendedMessages, ParseReadsTheNameTheQueryAndEachParameterType) {
  const Body body = Body().Str("s1").Str("SELECT $1::int8 + $2").I16(2).I32(kInt8.oid).I32(0);
  auto m = DecodeParse(body.bytes());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->statement, "s1");
  EXPECT_EQ(m->query, "SELECT $1::int8 + $2");
  EXPECT_EQ(m->parameter_types, (std::vector<std::uint32_t>{kInt8.oid, 0}));

  const std::string unnamed_body = Body().Str("").Str("SELECT 1").I16(0).bytes();
  auto unnamed = DecodeParse(unnamed_body);
  ASSERT_TRUE(unnamed.ok());
  EXPECT_EQ(unnamed->statement, "");
  EXPECT_TRUE(unnamed->parameter_types.empty());
}

TEST(PgwireExtendedMessages, CountsAreUnsignedAsPostgresReadsThem) {
  Body body;
  body.Str("").Str("q").I16(40000);
  for (int i = 0; i < 40000; ++i) body.I32(kText.oid);
  auto m = DecodeParse(body.bytes());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->parameter_types.size(), 40000u);
}

TEST(PgwireExtendedMessages, BindSpellsOutAFormatPerParameterAndKeepsNulls) {
  // No format codes: every parameter text.
  const std::string none_body =
      Body().Str("p").Str("s").I16(0).I16(2).I32(2).Raw("42").I32(-1).I16(0).bytes();
  auto none = DecodeBind(none_body);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->portal, "p");
  EXPECT_EQ(none->statement, "s");
  ASSERT_EQ(none->parameters.size(), 2u);
  EXPECT_EQ(none->parameters[0], std::optional<std::string_view>("42"));
  EXPECT_EQ(none->parameters[1], std::nullopt);
  EXPECT_EQ(none->parameter_formats, (std::vector<Format>{Format::kText, Format::kText}));
  EXPECT_TRUE(none->result_formats.empty());

  // One code: that format for every parameter.
  const std::string one_body = Body()
                                   .Str("")
                                   .Str("")
                                   .I16(1)
                                   .I16(1)
                                   .I16(2)
                                   .I32(8)
                                   .Raw(std::string(7, '\0') + "\x2a")
                                   .I32(0)
                                   .I16(1)
                                   .I16(1)
                                   .bytes();
  auto one = DecodeBind(one_body);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->parameter_formats, (std::vector<Format>{Format::kBinary, Format::kBinary}));
  EXPECT_EQ(one->parameters[1], std::optional<std::string_view>(""));  // empty, not NULL
  EXPECT_EQ(one->result_formats, (std::vector<Format>{Format::kBinary}));

  // One code each.
  const std::string each_body = Body()
                                    .Str("")
                                    .Str("")
                                    .I16(2)
                                    .I16(1)
                                    .I16(0)
                                    .I16(2)
                                    .I32(1)
                                    .Raw("x")
                                    .I32(1)
                                    .Raw("y")
                                    .I16(3)
                                    .I16(0)
                                    .I16(1)
                                    .I16(0)
                                    .bytes();
  auto each = DecodeBind(each_body);
  ASSERT_TRUE(each.ok()) << each.status().ToString();
  EXPECT_EQ(each->parameter_formats, (std::vector<Format>{Format::kBinary, Format::kText}));
  EXPECT_EQ(each->result_formats.size(), 3u);
}

TEST(PgwireExtendedMessages, BindRefusesWhatItsFieldsRuleOut) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Body().Str("").Str("").I16(2).I16(0).I16(0).I16(3).I32(0).I32(0).I32(0).I16(0).bytes(),
       "2 parameter format codes for 3 parameters (0, 1 or one each)"},
      {Body().Str("").Str("").I16(1).I16(2).I16(0).I16(0).bytes(),
       "a parameter format code 2 is neither 0 (text) nor 1 (binary)"},
      {Body().Str("").Str("").I16(0).I16(1).I32(-2).I16(0).bytes(),
       "a parameter value's length is -2 (-1 is NULL)"},
      {Body().Str("").Str("").I16(0).I16(1).I32(100).Raw("short").bytes(),
       "it ends inside a parameter value"},
      {Body().Str("").Str("").I16(0).I16(0).I16(1).I16(-1).bytes(),
       "a result format code -1 is neither 0 (text) nor 1 (binary)"},
  };
  for (const auto& [bytes, why] : cases) {
    auto m = DecodeBind(bytes);
    ASSERT_FALSE(m.ok()) << why;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(m.status().message(), "invalid Bind message: " + why);
  }
}

TEST(PgwireExtendedMessages, DescribeAndCloseNameAStatementOrAPortal) {
  const std::string d_body = Body().Raw("P").Str("cursor").bytes();
  auto d = DecodeDescribe(d_body);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->target, Target::kPortal);
  EXPECT_EQ(d->name, "cursor");
  const std::string c_body = Body().Raw("S").Str("").bytes();
  auto c = DecodeClose(c_body);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->target, Target::kStatement);
  EXPECT_EQ(c->name, "");
  auto bad = DecodeDescribe(Body().Raw("X").Str("s").bytes());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "invalid Describe message: what to describe is neither 'S' (statement) nor 'P' "
            "(portal)");
}

TEST(PgwireExtendedMessages, ExecuteReadsItsRowLimitAndZeroOrLessIsNone) {
  const std::string limited_body = Body().Str("p").I32(10).bytes();
  auto limited = DecodeExecute(limited_body);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->portal, "p");
  EXPECT_EQ(limited->max_rows, 10u);
  EXPECT_EQ(DecodeExecute(Body().Str("").I32(0).bytes())->max_rows, 0u);
  EXPECT_EQ(DecodeExecute(Body().Str("").I32(-5).bytes())->max_rows, 0u);
}

// Every strict prefix of a valid body is cut short, and one more byte is a byte too many: each is
// refused, never read past its end.
TEST(PgwireExtendedMessages, ABodyCutAtAnyByteOrWithAByteAfterItIsRefused) {
  using Decode = bool (*)(std::string_view);
  const std::vector<std::pair<std::string, Decode>> valid = {
      {Body().Str("s").Str("SELECT $1").I16(1).I32(kInt4.oid).bytes(),
       [](std::string_view b) { return DecodeParse(b).ok(); }},
      {Body().Str("p").Str("s").I16(1).I16(0).I16(1).I32(3).Raw("abc").I16(1).I16(0).bytes(),
       [](std::string_view b) { return DecodeBind(b).ok(); }},
      {Body().Raw("S").Str("s").bytes(), [](std::string_view b) { return DecodeDescribe(b).ok(); }},
      {Body().Raw("P").Str("p").bytes(), [](std::string_view b) { return DecodeClose(b).ok(); }},
      {Body().Str("p").I32(7).bytes(), [](std::string_view b) { return DecodeExecute(b).ok(); }},
  };
  for (const auto& [bytes, decode] : valid) {
    ASSERT_TRUE(decode(bytes)) << ::testing::PrintToString(bytes);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(decode(std::string_view(bytes).substr(0, n)))
          << ::testing::PrintToString(bytes) << " cut to " << n << " bytes";
    }
    EXPECT_FALSE(decode(bytes + "x")) << ::testing::PrintToString(bytes);
  }
}

TEST(PgwireExtendedMessages, TheAnswersAreTheBytesTheProtocolDefines) {
  std::string out;
  AppendParseComplete(out);
  AppendBindComplete(out);
  AppendCloseComplete(out);
  AppendNoData(out);
  AppendPortalSuspended(out);
  EXPECT_EQ(out, std::string("1\0\0\0\x04"
                             "2\0\0\0\x04"
                             "3\0\0\0\x04"
                             "n\0\0\0\x04"
                             "s\0\0\0\x04",
                             25));
  out.clear();
  const std::vector<std::uint32_t> types = {kInt4.oid, kText.oid};
  AppendParameterDescription(out, types);
  EXPECT_EQ(out, std::string("t\0\0\0\x0e\0\x02\0\0\0\x17\0\0\0\x19", 15));
}

}  // namespace
}  // namespace tandem::pgwire::extended_messages_test
