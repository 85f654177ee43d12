// PostgreSQL's binary format (frontend/server/binary_values.h): the bytes of values of every type
// as PostgreSQL 15's send functions give them (the expected bytes below are what it answered to
// SELECT encode(<type>send(…), 'hex')), the round trip datum → binary → text that equals the
// datum's text form and reads back as the datum, and malformed parameters refused with
// PostgreSQL's SQLSTATEs. integration/binary_values_oracle_test.cc asks PostgreSQL itself.
#include "frontend/server/binary_values.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/datum_text.h"
#include "binary_value_samples.h"
#include "frontend/pgwire/pg_type.h"
#include "frontend/server/sql_answers.h"
#include "ipc/rows.h"

namespace tandem::frontend::binary_values_test {
namespace {

namespace pb = ipc::pb;
using testing::BinarySampler;
using testing::BinaryTypes;
using testing::Hex;

// REQUIRES: an even count of hex digits; blanks are skipped.
std::string Unhex(std::string_view hex) {
  std::string digits;
  for (char c : hex) {
    if (c != ' ') digits.push_back(c);
  }
  std::string out;
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

Numeric Num(std::string_view text) { return ParseNumeric(text).value(); }

// The binary form of `d` as a column of type `oid`, in hex.
std::string Binary(const Datum& d, std::uint32_t oid) {
  const pgwire::Value v = PostgresBinary(ipc::ToProto(d), oid);
  return v ? Hex(*v) : "NULL";
}

// BinaryParameterText's answer: the text, or "ERROR <sqlstate>: <message>".
std::string Received(std::string_view hex, std::uint32_t oid, int parameter = 1) {
  const sql::SqlResult<std::string> r = BinaryParameterText(Unhex(hex), oid, parameter);
  if (!r.ok()) return "ERROR " + r.error().sqlstate + ": " + r.error().message;
  return *r;
}

struct Fixed {
  Datum datum;
  std::uint32_t oid;
  std::string hex;   // PostgreSQL's <type>send of the value
  std::string text;  // PostgreSQL's output of the value
};

const std::vector<Fixed>& FixedValues() {
  using std::int64_t;
  static const std::vector<Fixed> values = {
      {true, pgwire::kBool.oid, "01", "t"},
      {false, pgwire::kBool.oid, "00", "f"},
      {int64_t{-2}, pgwire::kInt2.oid, "fffe", "-2"},
      {int64_t{32767}, pgwire::kInt2.oid, "7fff", "32767"},
      {int64_t{1}, pgwire::kInt4.oid, "00000001", "1"},
      {int64_t{-2147483648}, pgwire::kInt4.oid, "80000000", "-2147483648"},
      {int64_t{-1}, pgwire::kInt8.oid, "ffffffffffffffff", "-1"},
      {int64_t{1234567890123}, pgwire::kInt8.oid, "0000011f71fb04cb", "1234567890123"},
      {1.5, pgwire::kFloat4.oid, "3fc00000", "1.5"},
      {static_cast<double>(0.1f), pgwire::kFloat4.oid, "3dcccccd", "0.1"},
      {std::numeric_limits<double>::quiet_NaN(), pgwire::kFloat4.oid, "7fc00000", "NaN"},
      {1.5, pgwire::kFloat8.oid, "3ff8000000000000", "1.5"},
      {0.1, pgwire::kFloat8.oid, "3fb999999999999a", "0.1"},
      {-0.0, pgwire::kFloat8.oid, "8000000000000000", "-0"},
      {std::numeric_limits<double>::infinity(), pgwire::kFloat8.oid, "7ff0000000000000",
       "Infinity"},
      {-std::numeric_limits<double>::infinity(), pgwire::kFloat8.oid, "fff0000000000000",
       "-Infinity"},
      {std::numeric_limits<double>::quiet_NaN(), pgwire::kFloat8.oid, "7ff8000000000000", "NaN"},
      // numeric: ndigits, weight, sign, dscale, base-10000 digits.
      {Num("1.5"), pgwire::kNumeric.oid, "0002 0000 0000 0001 0001 1388", "1.5"},
      {Num("1.50"), pgwire::kNumeric.oid, "0002 0000 0000 0002 0001 1388", "1.50"},
      {Num("0"), pgwire::kNumeric.oid, "0000 0000 0000 0000", "0"},
      {Num("0.00"), pgwire::kNumeric.oid, "0000 0000 0000 0002", "0.00"},
      {Num("-12.50"), pgwire::kNumeric.oid, "0002 0000 4000 0002 000c 1388", "-12.50"},
      {Num("10000"), pgwire::kNumeric.oid, "0001 0001 0000 0000 0001", "10000"},
      {Num("0.0001"), pgwire::kNumeric.oid, "0001 ffff 0000 0004 0001", "0.0001"},
      {Num("0.00001"), pgwire::kNumeric.oid, "0001 fffe 0000 0005 03e8", "0.00001"},
      {Num("123456789.0123"), pgwire::kNumeric.oid, "0004 0002 0000 0004 0001 0929 1a85 007b",
       "123456789.0123"},
      {Num("99999999999999999999999999999999999999"), pgwire::kNumeric.oid,
       "000a 0009 0000 0000 0063 270f 270f 270f 270f 270f 270f 270f 270f 270f",
       "99999999999999999999999999999999999999"},
      {Num("-0.00000000000000000000000000000000000001"), pgwire::kNumeric.oid,
       "0001 fff6 4000 0026 0064", "-0.00000000000000000000000000000000000001"},
      {std::string("héllo"), pgwire::kText.oid, "68c3a96c6c6f", "héllo"},
      {std::string("x"), pgwire::kVarchar.oid, "78", "x"},
      {std::string("ab  "), pgwire::kBpchar.oid, "61622020", "ab  "},
      {std::string("abc"), pgwire::kName.oid, "616263", "abc"},
      {Bytes{std::string("\x00\xff\n", 3)}, pgwire::kBytea.oid, "00ff0a", "\\x00ff0a"},
      {Date{10957}, pgwire::kDate.oid, "00000000", "2000-01-01"},
      {Date{0}, pgwire::kDate.oid, "ffffd533", "1970-01-01"},
      {ParseDate("2026-12-06").value(), pgwire::kDate.oid, "0000266c", "2026-12-06"},
      {Date{kFirstDateDays}, pgwire::kDate.oid, "ffda97a7", "4714-11-24 BC"},
      {Date{kLastDateDays}, pgwire::kDate.oid, "7fda970c", "5874897-12-31"},
      {ParseDate("0044-03-15 BC").value(), pgwire::kDate.oid, "fff49d7b", "0044-03-15 BC"},
      {TimeOfDay{12 * kMicrosPerHour}, pgwire::kTime.oid, "0000000a0eebb000", "12:00:00"},
      {TimeOfDay{kMicrosPerDay}, pgwire::kTime.oid, "000000141dd76000", "24:00:00"},
      {TimeOfDay{1}, pgwire::kTime.oid, "0000000000000001", "00:00:00.000001"},
      {Timestamp{946'684'800'000'000}, pgwire::kTimestamp.oid, "0000000000000000",
       "2000-01-01 00:00:00"},
      {Timestamp{0}, pgwire::kTimestamp.oid, "fffca2fec4c82000", "1970-01-01 00:00:00"},
      {ParseTimestamp("2026-12-06 12:00:00.123456").value(), pgwire::kTimestamp.oid,
       "000304f49e0a1240", "2026-12-06 12:00:00.123456"},
      {Timestamp{kFirstTimestampMicros}, pgwire::kTimestamp.oid, "fd0f7cc1411fa000",
       "4714-11-24 00:00:00 BC"},
      {ParseTimestampTz("2026-12-06 12:00:00+00").value(), pgwire::kTimestamptz.oid,
       "000304f49e083000", "2026-12-06 12:00:00+00"},
      {ParseTimestampTz("2026-12-06 12:00:00+05:30").value(), pgwire::kTimestamptz.oid,
       "000304f001dc2a00", "2026-12-06 06:30:00+00"},
      {ParseInterval("1 year 2 mons 3 days 04:05:06.5").value(), pgwire::kInterval.oid,
       "000000036c9361a0 00000003 0000000e", "1 year 2 mons 3 days 04:05:06.5"},
      {ParseInterval("-00:00:01").value(), pgwire::kInterval.oid,
       "fffffffffff0bdc0 00000000 00000000", "-00:00:01"},
      {Interval{}, pgwire::kInterval.oid, "0000000000000000 00000000 00000000", "00:00:00"},
      {ParseInterval("-1 days +02:03:00").value(), pgwire::kInterval.oid,
       "00000001b7e1dd00 ffffffff 00000000", "-1 days +02:03:00"},
      {ParseUuidText("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").value(), pgwire::kUuid.oid,
       "a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
  };
  return values;
}

std::string Compact(std::string hex) {
  std::erase(hex, ' ');
  return hex;
}

TEST(BinaryValues, SendsPostgresBytesForEveryType) {
  for (const Fixed& f : FixedValues()) {
    EXPECT_EQ(Binary(f.datum, f.oid), Compact(f.hex)) << f.text << " as OID " << f.oid;
  }
}

TEST(BinaryValues, ReceivesPostgresBytesAsTheirText) {
  for (const Fixed& f : FixedValues()) {
    EXPECT_EQ(Received(f.hex, f.oid), f.text) << f.hex << " as OID " << f.oid;
  }
}

TEST(BinaryValues, NullIsNoValue) {
  pb::Datum null;
  null.mutable_null();
  EXPECT_EQ(PostgresBinary(null, pgwire::kInt4.oid), std::nullopt);
  EXPECT_EQ(PostgresBinary(pb::Datum(), pgwire::kText.oid), std::nullopt);
}

TEST(BinaryValues, ADatumOfAnotherTypeThanTheOidsIsSentAsItsText) {
  // A text column's binary form is its text's bytes (textsend).
  EXPECT_EQ(Binary(std::int64_t{12}, pgwire::kText.oid), Hex("12"));
  EXPECT_EQ(Binary(Num("1.50"), pgwire::kText.oid), Hex("1.50"));
  EXPECT_EQ(Binary(true, pgwire::kVarchar.oid), Hex("t"));
}

// For each type, many random values: the binary form has the type's length (where fixed), reads
// back as the datum's text (what a text-format client would have been sent), and that text reads
// back as the datum.
TEST(BinaryValues, RoundTripOfRandomValuesGivesTheirText) {
  BinarySampler sampler(20261206);
  for (const auto& type : BinaryTypes()) {
    ColumnType column;
    column.kind = type.kind;
    std::int16_t typlen = -1;
    for (const pgwire::PgType& t :
         {pgwire::kBool, pgwire::kInt2, pgwire::kInt4, pgwire::kInt8, pgwire::kFloat4,
          pgwire::kFloat8, pgwire::kDate, pgwire::kTime, pgwire::kTimestamp, pgwire::kTimestamptz,
          pgwire::kInterval, pgwire::kUuid}) {
      if (t.oid == type.oid) typlen = t.typlen;
    }
    for (int i = 0; i < 2000; ++i) {
      const Datum d = sampler.Next(type.oid);
      const pb::Datum proto = ipc::ToProto(d);
      const pgwire::Value text = PostgresText(proto, type.oid == pgwire::kFloat4.oid);
      ASSERT_TRUE(text.has_value());
      const pgwire::Value binary = PostgresBinary(proto, type.oid);
      ASSERT_TRUE(binary.has_value());
      if (typlen > 0) {
        ASSERT_EQ(binary->size(), static_cast<std::size_t>(typlen)) << type.name << " " << *text;
      }
      const auto received = BinaryParameterText(*binary, type.oid, 1);
      ASSERT_TRUE(received.ok()) << type.name << " " << *text << ": "
                                 << received.error().ToString();
      ASSERT_EQ(*received, *text) << type.name << " " << Hex(*binary);
      // Neither here nor in PostgreSQL 15 does an interval's text of -2^63 microseconds read.
      if (const auto* iv = std::get_if<Interval>(&d);
          iv != nullptr && iv->micros == std::numeric_limits<std::int64_t>::min()) {
        continue;
      }
      const Result<Datum> back = ParsePostgresText(*received, column);
      ASSERT_TRUE(back.ok()) << type.name << " " << *received << ": " << back.status().ToString();
      ASSERT_EQ(PostgresText(ipc::ToProto(*back), type.oid == pgwire::kFloat4.oid), *text)
          << type.name;
      ASSERT_EQ(Hex(*PostgresBinary(ipc::ToProto(*back), type.oid)), Hex(*binary)) << type.name;
    }
  }
}

// Numeric digits are the value's base-10000 digits with the scale as dscale: every coefficient
// and scale of 1.5 / 1.50 / 15 / 0.015 shape, and the digit groups cut where the point is.
TEST(BinaryValues, NumericDigitsFollowTheDecimalPoint) {
  EXPECT_EQ(Binary(Num("15"), pgwire::kNumeric.oid), "0001000000000000000f");
  EXPECT_EQ(Binary(Num("0.015"), pgwire::kNumeric.oid), "0001ffff000000030096");
  EXPECT_EQ(Binary(Num("12345.6789"), pgwire::kNumeric.oid),
            "000300010000000400010929"
            "1a85");
  EXPECT_EQ(Binary(Num("1e30"), pgwire::kNumeric.oid), "00010007000000000064");
  EXPECT_EQ(Binary(Num("-0.10"), pgwire::kNumeric.oid), "0001ffff4000000203e8");
}

TEST(BinaryValues, NumericReceivedAsPostgresPrintsIt) {
  const auto numeric = pgwire::kNumeric.oid;
  // Digits beyond dscale are dropped, not rounded (trunc_var); a zero left is positive.
  EXPECT_EQ(Received("0002 0000 0000 0000 0001 1388", numeric), "1");
  EXPECT_EQ(Received("0002 0000 0000 0002 0001 0d06", numeric), "1.33");  // 1.3350 → 1.33
  EXPECT_EQ(Received("0001 ffff 4000 0002 0001", numeric), "0.00");       // -0.0001 at scale 2
  EXPECT_EQ(Received("0001 0000 4000 0000 0000", numeric), "0");          // -0
  // Leading and trailing zero digits are taken.
  EXPECT_EQ(Received("0004 0001 0000 0001 0000 0007 1388 0000", numeric), "7.5");
  // Missing digits between the weight and the point are zeros; dscale pads the fraction.
  EXPECT_EQ(Received("0001 0002 0000 0003 0005", numeric), "500000000.000");
  EXPECT_EQ(Received("0001 fffd 0000 000e 0001", numeric), "0.00000000000100");
  // Larger than Tandem's numeric holds: PostgreSQL's text, which the SQL layer refuses as it
  // refuses the same text parameter.
  EXPECT_EQ(Received("0001 000a 0000 0000 0001", numeric), "1" + std::string(40, '0'));
  EXPECT_EQ(Received("0000 0000 0000 3fff", numeric), "0." + std::string(16383, '0'));
  EXPECT_EQ(Received("0001 8000 0000 3fff 0001", numeric), "0." + std::string(16383, '0'));
  EXPECT_EQ(Received("0000 0000 c000 0000", numeric), "NaN");
  EXPECT_EQ(Received("0001 0000 c000 0000 270f", numeric), "NaN");
  EXPECT_EQ(Received("0000 0000 d000 0000", numeric), "Infinity");
  EXPECT_EQ(Received("0000 0000 f000 0000", numeric), "-Infinity");
}

TEST(BinaryValues, InfinitiesAreReceivedAsPostgresSpellsThem) {
  EXPECT_EQ(Received("7fffffff", pgwire::kDate.oid), "infinity");
  EXPECT_EQ(Received("80000000", pgwire::kDate.oid), "-infinity");
  EXPECT_EQ(Received("7fffffffffffffff", pgwire::kTimestamp.oid), "infinity");
  EXPECT_EQ(Received("8000000000000000", pgwire::kTimestamptz.oid), "-infinity");
  // Any NaN is NaN; a byte other than 0 is true.
  EXPECT_EQ(Received("fff8000000000001", pgwire::kFloat8.oid), "NaN");
  EXPECT_EQ(Received("ffc00001", pgwire::kFloat4.oid), "NaN");
  EXPECT_EQ(Received("02", pgwire::kBool.oid), "t");
  // The extremes of an interval's fields.
  EXPECT_EQ(Received("8000000000000000 80000000 80000000", pgwire::kInterval.oid),
            "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808");
}

// Dates and timestamps at the ends of PostgreSQL's range, and a timestamp past Tandem's end.
TEST(BinaryValues, DatesAndTimestampsOutsideTheirRangeAreRefused) {
  EXPECT_EQ(Received("ffda97a7", pgwire::kDate.oid), "4714-11-24 BC");
  EXPECT_EQ(Received("ffda97a6", pgwire::kDate.oid), "ERROR 22008: date out of range");
  EXPECT_EQ(Received("7fda970d", pgwire::kDate.oid), "ERROR 22008: date out of range");
  EXPECT_EQ(Received("fd0f7cc1411f9fff", pgwire::kTimestamp.oid),
            "ERROR 22008: timestamp out of range");
  EXPECT_EQ(Received("7ffca2fec4c81fff", pgwire::kTimestamp.oid), "294247-01-10 04:00:54.775807");
  // PostgreSQL's timestamps go on to 294276-12-31; Tandem's end where int64 does.
  EXPECT_EQ(Received("7ffca2fec4c82000", pgwire::kTimestamptz.oid),
            "ERROR 22008: timestamp out of range");
  EXPECT_EQ(Received("7fffff5bb3b29fff", pgwire::kTimestamp.oid),
            "ERROR 22008: timestamp out of range");
  EXPECT_EQ(Received("000000141dd76001", pgwire::kTime.oid), "ERROR 22008: time out of range");
  EXPECT_EQ(Received("ffffffffffffffff", pgwire::kTime.oid), "ERROR 22008: time out of range");
}

TEST(BinaryValues, MalformedParametersAreRefusedWithPostgresSqlstates) {
  const std::string insufficient = "ERROR 08P01: insufficient data left in message";
  // Too few bytes for the layout, as PostgreSQL's pq_getmsg* answer.
  EXPECT_EQ(Received("", pgwire::kBool.oid), "ERROR 08P01: no data left in message");
  EXPECT_EQ(Received("00", pgwire::kInt2.oid), insufficient);
  EXPECT_EQ(Received("000001", pgwire::kInt4.oid), insufficient);
  EXPECT_EQ(Received("00000000000001", pgwire::kInt8.oid), insufficient);
  EXPECT_EQ(Received("3fc000", pgwire::kFloat4.oid), insufficient);
  EXPECT_EQ(Received("3ff80000000000", pgwire::kFloat8.oid), insufficient);
  EXPECT_EQ(Received("000000", pgwire::kDate.oid), insufficient);
  EXPECT_EQ(Received("00000000", pgwire::kTime.oid), insufficient);
  EXPECT_EQ(Received("", pgwire::kTimestamp.oid), insufficient);
  EXPECT_EQ(Received("0000000000000000 00000000 000000", pgwire::kInterval.oid), insufficient);
  EXPECT_EQ(Received("a0eebc999c0b4ef8bb6d6bb9bd380a", pgwire::kUuid.oid), insufficient);
  EXPECT_EQ(Received("0001 0000 0000", pgwire::kNumeric.oid), insufficient);
  EXPECT_EQ(Received("0002 0000 0000 0000 0001", pgwire::kNumeric.oid), insufficient);
  // Bytes left over, naming the parameter.
  EXPECT_EQ(Received("0000000101", pgwire::kInt4.oid, 3),
            "ERROR 22P03: incorrect binary data format in bind parameter 3");
  EXPECT_EQ(Received("0100", pgwire::kBool.oid),
            "ERROR 22P03: incorrect binary data format in bind parameter 1");
  EXPECT_EQ(Received("0001 0000 0000 0000 0001 0001", pgwire::kNumeric.oid, 2),
            "ERROR 22P03: incorrect binary data format in bind parameter 2");
  // A numeric's sign word, dscale and digits, checked as they are read.
  EXPECT_EQ(Received("0001 0000 0001 0000 000a", pgwire::kNumeric.oid),
            "ERROR 22P03: invalid sign in external \"numeric\" value");
  EXPECT_EQ(Received("0001 0000 8000 0000 000a", pgwire::kNumeric.oid),
            "ERROR 22P03: invalid sign in external \"numeric\" value");
  EXPECT_EQ(Received("0000 0000 0000 4000", pgwire::kNumeric.oid),
            "ERROR 22P03: invalid scale in external \"numeric\" value");
  EXPECT_EQ(Received("0001 0000 0000 0000 2710", pgwire::kNumeric.oid),
            "ERROR 22P03: invalid digit in external \"numeric\" value");
  EXPECT_EQ(Received("0001 0000 0000 0000 ffff", pgwire::kNumeric.oid),
            "ERROR 22P03: invalid digit in external \"numeric\" value");
  // Text is UTF-8 without NUL.
  for (std::uint32_t oid : {pgwire::kText.oid, pgwire::kVarchar.oid, pgwire::kBpchar.oid,
                            pgwire::kUnknown.oid, pgwire::kName.oid}) {
    EXPECT_EQ(Received("c328", oid),
              "ERROR 22021: invalid byte sequence for encoding \"UTF8\": 0xc3 0x28");
    EXPECT_EQ(Received("610062", oid),
              "ERROR 22021: invalid byte sequence for encoding \"UTF8\": 0x00");
    EXPECT_EQ(Received("eda080", oid),  // a surrogate
              "ERROR 22021: invalid byte sequence for encoding \"UTF8\": 0xed 0xa0 0x80");
    EXPECT_EQ(Received("", oid), "");
  }
  EXPECT_EQ(Received(Hex(std::string(63, 'a')), pgwire::kName.oid), std::string(63, 'a'));
  EXPECT_EQ(Received(Hex(std::string(64, 'a')), pgwire::kName.oid),
            "ERROR 42622: identifier too long");
  // A type the binary format here does not know.
  EXPECT_EQ(Received("7b7d", 114).substr(0, 11), "ERROR 0A000");
  EXPECT_EQ(Received("00", 0).substr(0, 11), "ERROR 0A000");
}

TEST(BinaryValues, BytesAndTextAreTakenAsTheyAre) {
  EXPECT_EQ(Received("", pgwire::kBytea.oid), "\\x");
  EXPECT_EQ(Received("00ff", pgwire::kBytea.oid), "\\x00ff");
  EXPECT_EQ(Received(Hex("it's \\ 😀"), pgwire::kText.oid), "it's \\ 😀");
  EXPECT_EQ(Received(Hex("ab  "), pgwire::kBpchar.oid), "ab  ");
}

}  // namespace
}  // namespace tandem::frontend::binary_values_test
