// Datums at the protocol boundary (ipc/rows.h, ipc/plan_typing.h): every kind goes to pb::Datum
// and back unchanged; CheckDatumFits lets a datum into a column only when its type allows it
// (int2/int4 ranges, float4 values, varchar/char lengths in characters, numeric(p,s)); a column's
// typmods are checked (CheckColumnType).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/datum_text.h"
#include "ipc/plan_typing.h"
#include "ipc/rows.h"
#include "random_rows.h"

namespace tandem::ipc::datum_fits_test {
namespace {

pb::Column Column(pb::ScalarType type) {
  pb::Column c;
  c.set_name("c");
  c.set_type(type);
  c.set_nullable(true);
  return c;
}

pb::Datum Proto(const Datum& d) { return ToProto(d); }

TEST(ProtoDatums, EveryKindGoesToProtoAndBackUnchanged) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    testing::RowGenerator gen(seed);
    for (int i = 0; i < 200; ++i) {
      const Datum d = gen.NextDatumOfAnyKind();
      auto back = CheckedFromProto(ToProto(d));
      ASSERT_TRUE(back.ok()) << DatumText(d) << ": " << back.status().message();
      if (std::holds_alternative<double>(d) && std::isnan(std::get<double>(d))) continue;
      ASSERT_TRUE(*back == d) << DatumText(d) << " came back as " << DatumText(*back);
    }
  }
}

TEST(ProtoDatums, MalformedNewKindsAreRefused) {
  pb::Datum bad_numeric;
  bad_numeric.set_numeric("12.5.0");
  EXPECT_FALSE(CheckedFromProto(bad_numeric).ok());
  pb::Datum short_uuid;
  short_uuid.set_uuid("0123456789abcde");
  EXPECT_FALSE(CheckedFromProto(short_uuid).ok());
  pb::Datum late_time;
  late_time.set_time(kMicrosPerDay + 1);
  EXPECT_FALSE(CheckedFromProto(late_time).ok());
  pb::Datum early;
  early.set_timestamptz(-210866803200000001);  // a microsecond before 4714-11-24 00:00:00 BC
  EXPECT_FALSE(CheckedFromProto(early).ok());
  early.set_timestamptz(-210866803200000000);
  EXPECT_TRUE(CheckedFromProto(early).ok());
  pb::Datum late_date;
  late_date.set_date(2145042906);  // 5874898-01-01
  EXPECT_FALSE(CheckedFromProto(late_date).ok());
  EXPECT_FALSE(CheckDatumFits(bad_numeric, Column(pb::NUMERIC)).ok());
  EXPECT_FALSE(CheckDatumFits(short_uuid, Column(pb::UUID)).ok());
}

TEST(DatumFits, IntegersFitTheirWidth) {
  EXPECT_TRUE(CheckDatumFits(Proto(std::int64_t{32767}), Column(pb::INT16)).ok());
  EXPECT_FALSE(CheckDatumFits(Proto(std::int64_t{32768}), Column(pb::INT16)).ok());
  EXPECT_TRUE(CheckDatumFits(Proto(std::int64_t{-2147483648LL}), Column(pb::INT32)).ok());
  EXPECT_FALSE(CheckDatumFits(Proto(std::int64_t{2147483648LL}), Column(pb::INT32)).ok());
  EXPECT_TRUE(
      CheckDatumFits(Proto(std::numeric_limits<std::int64_t>::min()), Column(pb::INT64)).ok());
  EXPECT_FALSE(CheckDatumFits(Proto(1.0), Column(pb::INT32)).ok());
}

TEST(DatumFits, Float4TakesOnlyFloatValues) {
  EXPECT_TRUE(CheckDatumFits(Proto(static_cast<double>(0.1f)), Column(pb::FLOAT32)).ok());
  EXPECT_FALSE(CheckDatumFits(Proto(0.1), Column(pb::FLOAT32)).ok()) << "0.1 is no float";
  EXPECT_FALSE(CheckDatumFits(Proto(1e39), Column(pb::FLOAT32)).ok());
  EXPECT_TRUE(CheckDatumFits(Proto(std::nan("")), Column(pb::FLOAT32)).ok());
  EXPECT_TRUE(CheckDatumFits(Proto(-HUGE_VAL), Column(pb::FLOAT32)).ok());
  EXPECT_TRUE(CheckDatumFits(Proto(0.1), Column(pb::FLOAT64)).ok());
}

TEST(DatumFits, StringLengthsCountCharacters) {
  pb::Column varchar = Column(pb::STRING);
  varchar.set_length(3);
  EXPECT_TRUE(CheckDatumFits(Proto(std::string("\xc3\xa9\xc3\xa9\xc3\xa9")), varchar).ok())
      << "three characters in six bytes";
  EXPECT_FALSE(CheckDatumFits(Proto(std::string("abcd")), varchar).ok());
  EXPECT_TRUE(CheckDatumFits(Proto(std::string("")), varchar).ok());
  pb::Column fixed = varchar;
  fixed.set_blank_padded(true);
  EXPECT_TRUE(CheckDatumFits(Proto(std::string("ab ")), fixed).ok());
  EXPECT_FALSE(CheckDatumFits(Proto(std::string("ab")), fixed).ok()) << "char(3) is padded";
}

TEST(DatumFits, NumericTypmodsFixScaleAndIntegerDigits) {
  pb::Column money = Column(pb::NUMERIC);
  money.set_precision(5);
  money.set_scale(2);
  EXPECT_TRUE(CheckDatumFits(Proto(Numeric::FromParts(99999, 2)), money).ok());    // 999.99
  EXPECT_FALSE(CheckDatumFits(Proto(Numeric::FromParts(100000, 2)), money).ok());  // 1000.00
  EXPECT_FALSE(CheckDatumFits(Proto(Numeric::FromParts(15, 1)), money).ok()) << "scale 1, not 2";
  EXPECT_TRUE(CheckDatumFits(Proto(Numeric::FromParts(-99999, 2)), money).ok());
  EXPECT_TRUE(CheckDatumFits(Proto(Numeric::FromParts(15, 1)), Column(pb::NUMERIC)).ok())
      << "unconstrained numeric takes any scale";
  EXPECT_FALSE(CheckDatumFits(Proto(std::int64_t{1}), money).ok());
}

TEST(DatumFits, EachNewKindFitsItsOwnColumnOnly) {
  const std::pair<Datum, pb::ScalarType> kinds[] = {{Bytes{"x"}, pb::BYTEA},
                                                    {Date{1}, pb::DATE},
                                                    {TimeOfDay{1}, pb::TIME},
                                                    {Timestamp{1}, pb::TIMESTAMP},
                                                    {TimestampTz{1}, pb::TIMESTAMPTZ},
                                                    {Interval{1, 2, 3}, pb::INTERVAL},
                                                    {Uuid{}, pb::UUID}};
  for (const auto& [d, type] : kinds) {
    for (const auto& [other, column_type] : kinds) {
      EXPECT_EQ(CheckDatumFits(Proto(d), Column(column_type)).ok(), type == column_type)
          << DatumText(d) << " in a " << TypeName(column_type) << " column";
    }
  }
}

TEST(ColumnTypes, TypmodsOnlyWhereTheTypeHasThem) {
  pb::Column c = Column(pb::NUMERIC);
  c.set_precision(12);
  c.set_scale(2);
  EXPECT_TRUE(CheckColumnType(c).ok());
  c.set_scale(13);
  EXPECT_FALSE(CheckColumnType(c).ok());
  c.set_precision(39);
  c.set_scale(0);
  EXPECT_FALSE(CheckColumnType(c).ok());
  pb::Column n = Column(pb::INT32);
  n.set_length(3);
  EXPECT_FALSE(CheckColumnType(n).ok());
  pb::Column padded = Column(pb::STRING);
  padded.set_blank_padded(true);
  EXPECT_FALSE(CheckColumnType(padded).ok()) << "char without a length";
  padded.set_length(3);
  EXPECT_TRUE(CheckColumnType(padded).ok());
  EXPECT_FALSE(CheckColumnType(Column(static_cast<pb::ScalarType>(99))).ok());
  EXPECT_TRUE(IsKnownType(pb::UUID));
  EXPECT_FALSE(IsKnownType(pb::SCALAR_TYPE_UNSPECIFIED));
}

}  // namespace
}  // namespace tandem::ipc::datum_fits_test
