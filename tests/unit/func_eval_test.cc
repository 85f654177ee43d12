// Cast and CallFunc: their typing (ipc/func_typing.h) and evaluation (workers/cast_eval.h,
// workers/func_eval.h). Every expectation is PostgreSQL 15's answer (UTF-8 database, C
// collation), asked with the query in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "base/datetime.h"
#include "base/numeric.h"
#include "ipc/func_typing.h"
#include "workers/cast_eval.h"
#include "workers/func_eval.h"

namespace tandem::workers {
namespace {

namespace pb = ipc::pb;

pb::Column Col(pb::ScalarType type, bool nullable = false) {
  pb::Column c;
  c.set_type(type);
  c.set_nullable(nullable);
  return c;
}

pb::Column Varchar(std::uint32_t n, bool padded = false) {
  pb::Column c = Col(pb::STRING);
  c.set_length(n);
  c.set_blank_padded(padded);
  return c;
}

pb::Column NumericCol(std::uint32_t precision, std::uint32_t scale) {
  pb::Column c = Col(pb::NUMERIC);
  c.set_precision(precision);
  c.set_scale(scale);
  return c;
}

Numeric Num(std::string_view text) {
  Result<Numeric> n = ParseNumeric(text);
  EXPECT_TRUE(n.ok()) << text;
  return n.ok() ? *n : Numeric{};
}

// ---- typing -----------------------------------------------------------------------------------

Result<pb::Column> TypeOfCast(pb::ScalarType from, const pb::Column& to, bool nullable = false) {
  pb::Cast cast;
  *cast.mutable_to() = to;
  return ipc::CastType(cast, Col(from, nullable));
}

TEST(CastTypeTest, PostgresExplicitCastsExistAndOthersAreRefusedInItsWords) {
  // select 1::int8::int2, 1.5::float4::numeric, true::int4, 1::bool, now()::date,
  // '1h'::interval::time
  for (auto [from, to] :
       std::vector<std::pair<pb::ScalarType, pb::ScalarType>>{{pb::INT64, pb::INT16},
                                                              {pb::FLOAT32, pb::NUMERIC},
                                                              {pb::NUMERIC, pb::INT32},
                                                              {pb::BOOL, pb::INT32},
                                                              {pb::INT32, pb::BOOL},
                                                              {pb::TIMESTAMPTZ, pb::DATE},
                                                              {pb::TIMESTAMP, pb::TIME},
                                                              {pb::DATE, pb::TIMESTAMPTZ},
                                                              {pb::INTERVAL, pb::TIME},
                                                              {pb::TIME, pb::INTERVAL},
                                                              {pb::UUID, pb::STRING},
                                                              {pb::STRING, pb::BYTEA},
                                                              {pb::TIMESTAMP, pb::TIMESTAMPTZ},
                                                              {pb::DATE, pb::DATE}}) {
    EXPECT_TRUE(TypeOfCast(from, Col(to)).ok()) << from << " -> " << to;
  }
  // select 1::int8::bool / 1::int2::bool / true::int8 / '2020-01-01'::date::int4
  EXPECT_EQ(TypeOfCast(pb::INT64, Col(pb::BOOL)).status().message(),
            "cannot cast type bigint to boolean");
  EXPECT_EQ(TypeOfCast(pb::INT16, Col(pb::BOOL)).status().message(),
            "cannot cast type smallint to boolean");
  EXPECT_EQ(TypeOfCast(pb::BOOL, Col(pb::INT64)).status().message(),
            "cannot cast type boolean to bigint");
  EXPECT_EQ(TypeOfCast(pb::DATE, Col(pb::INT32)).status().message(),
            "cannot cast type date to integer");
  EXPECT_EQ(TypeOfCast(pb::TIME, Col(pb::TIMESTAMP)).status().message(),
            "cannot cast type time without time zone to timestamp without time zone");
  EXPECT_EQ(TypeOfCast(pb::UUID, Col(pb::BYTEA)).status().message(),
            "cannot cast type uuid to bytea");
}

TEST(CastTypeTest, ResultHasTheTargetTypmodAndTheOperandsNullability) {
  Result<pb::Column> c = TypeOfCast(pb::STRING, NumericCol(5, 2), true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->type(), pb::NUMERIC);
  EXPECT_EQ(c->precision(), 5u);
  EXPECT_EQ(c->scale(), 2u);
  EXPECT_TRUE(c->nullable());
  c = TypeOfCast(pb::INT32, Varchar(3, true));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->length(), 3u);
  EXPECT_TRUE(c->blank_padded());
  EXPECT_FALSE(c->nullable());
}

TEST(CastTypeTest, RefusesTypmodsOutOfRangeOrOnTypesWithoutOne) {
  EXPECT_FALSE(TypeOfCast(pb::INT32, NumericCol(39, 0)).ok());
  EXPECT_FALSE(TypeOfCast(pb::INT32, NumericCol(5, 6)).ok());
  EXPECT_FALSE(TypeOfCast(pb::INT32, NumericCol(0, 2)).ok());
  pb::Column int_with_length = Col(pb::INT32);
  int_with_length.set_length(3);
  EXPECT_FALSE(TypeOfCast(pb::INT64, int_with_length).ok());
  // bpchar without a length (PostgreSQL's `::bpchar`) is a cast target: no padding, no limit.
  pb::Column char_without_length = Col(pb::STRING);
  char_without_length.set_blank_padded(true);
  EXPECT_TRUE(TypeOfCast(pb::INT64, char_without_length).ok());
  EXPECT_FALSE(TypeOfCast(pb::INT64, Col(pb::SCALAR_TYPE_UNSPECIFIED)).ok());
}

Result<pb::Column> TypeOfCall(pb::Func func, const std::vector<pb::Column>& args) {
  pb::CallFunc call;
  call.set_func(func);
  return ipc::FuncType(call, args);
}

TEST(FuncTypeTest, SignaturesGiveTheirResultTypes) {
  const pb::Column text = Col(pb::STRING), i4 = Col(pb::INT32), num = Col(pb::NUMERIC),
                   f8 = Col(pb::FLOAT64), ts = Col(pb::TIMESTAMP);
  auto type_of = [](Result<pb::Column> c) {
    return c.ok() ? c->type() : pb::SCALAR_TYPE_UNSPECIFIED;
  };
  EXPECT_EQ(type_of(TypeOfCall(pb::CONCAT, {text, text})), pb::STRING);
  EXPECT_EQ(type_of(TypeOfCall(pb::CHAR_LENGTH, {text})), pb::INT32);
  EXPECT_EQ(type_of(TypeOfCall(pb::OCTET_LENGTH, {Col(pb::BYTEA)})), pb::INT32);
  EXPECT_EQ(type_of(TypeOfCall(pb::SUBSTR, {text, i4})), pb::STRING);
  EXPECT_EQ(type_of(TypeOfCall(pb::SUBSTR, {text, i4, i4})), pb::STRING);
  EXPECT_EQ(type_of(TypeOfCall(pb::STRPOS, {text, text})), pb::INT32);
  EXPECT_EQ(type_of(TypeOfCall(pb::BTRIM, {text})), pb::STRING);
  EXPECT_EQ(type_of(TypeOfCall(pb::RTRIM, {text, text})), pb::STRING);
  EXPECT_EQ(type_of(TypeOfCall(pb::REPLACE, {text, text, text})), pb::STRING);
  EXPECT_EQ(type_of(TypeOfCall(pb::ILIKE, {text, text})), pb::BOOL);
  EXPECT_EQ(type_of(TypeOfCall(pb::ABS, {Col(pb::INT16)})), pb::INT16);
  EXPECT_EQ(type_of(TypeOfCall(pb::ROUND, {num, i4})), pb::NUMERIC);
  EXPECT_EQ(type_of(TypeOfCall(pb::ROUND, {f8})), pb::FLOAT64);
  EXPECT_EQ(type_of(TypeOfCall(pb::POWER, {num, num})), pb::NUMERIC);
  EXPECT_EQ(type_of(TypeOfCall(pb::SQRT, {f8})), pb::FLOAT64);
  EXPECT_EQ(type_of(TypeOfCall(pb::DATE_TRUNC, {text, Col(pb::TIMESTAMPTZ)})), pb::TIMESTAMPTZ);
  EXPECT_EQ(type_of(TypeOfCall(pb::EXTRACT, {text, Col(pb::DATE)})), pb::NUMERIC);
  EXPECT_EQ(type_of(TypeOfCall(pb::DATE_PART, {text, ts})), pb::FLOAT64);
  EXPECT_EQ(type_of(TypeOfCall(pb::GREATEST, {Col(pb::UUID), Col(pb::UUID)})), pb::UUID);
}

TEST(FuncTypeTest, ArgumentsMustMatchExactly) {
  const pb::Column text = Col(pb::STRING), i8 = Col(pb::INT64);
  EXPECT_EQ(TypeOfCall(pb::SUBSTR, {text, i8}).status().message(),
            "SUBSTR does not take (STRING, INT64)");
  EXPECT_FALSE(TypeOfCall(pb::ROUND, {Col(pb::FLOAT32)}).ok());
  EXPECT_FALSE(TypeOfCall(pb::ROUND, {Col(pb::FLOAT64), Col(pb::INT32)}).ok());
  EXPECT_FALSE(TypeOfCall(pb::POWER, {Col(pb::NUMERIC), Col(pb::FLOAT64)}).ok());
  EXPECT_FALSE(TypeOfCall(pb::COALESCE, {Col(pb::INT32), i8}).ok());
  EXPECT_FALSE(TypeOfCall(pb::COALESCE, {}).ok());
  EXPECT_FALSE(TypeOfCall(pb::NULLIF, {i8}).ok());
  EXPECT_FALSE(TypeOfCall(pb::DATE_TRUNC, {text, Col(pb::DATE)}).ok());
  EXPECT_FALSE(TypeOfCall(pb::EXTRACT, {text, Col(pb::INT64)}).ok());
  EXPECT_FALSE(TypeOfCall(pb::FUNC_UNSPECIFIED, {}).ok());
  EXPECT_FALSE(TypeOfCall(static_cast<pb::Func>(999), {}).ok());
}

TEST(FuncTypeTest, NullabilityFollowsEachFunctionsNullRule) {
  const pb::Column maybe = Col(pb::INT32, true), never = Col(pb::INT32, false);
  EXPECT_FALSE(TypeOfCall(pb::COALESCE, {maybe, never})->nullable());
  EXPECT_TRUE(TypeOfCall(pb::COALESCE, {maybe, maybe})->nullable());
  EXPECT_FALSE(TypeOfCall(pb::GREATEST, {never, maybe})->nullable());
  EXPECT_TRUE(TypeOfCall(pb::NULLIF, {never, never})->nullable());
  EXPECT_TRUE(TypeOfCall(pb::ABS, {maybe})->nullable());
  EXPECT_FALSE(TypeOfCall(pb::ABS, {never})->nullable());
  EXPECT_TRUE(TypeOfCall(pb::STRPOS, {Col(pb::STRING), Col(pb::STRING, true)})->nullable());
}

TEST(FuncTypeTest, SameTypeFunctionsKeepACommonTypmodOnly) {
  // select coalesce(1.50::numeric(5,2), 2.0::numeric(6,1)) is numeric (no typmod)
  Result<pb::Column> mixed = TypeOfCall(pb::COALESCE, {NumericCol(5, 2), NumericCol(6, 1)});
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->precision(), 0u);
  Result<pb::Column> same = TypeOfCall(pb::LEAST, {Varchar(3), Varchar(3)});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->length(), 3u);
}

// ---- casts ------------------------------------------------------------------------------------

Datum CastOk(const Datum& in, pb::ScalarType from, const pb::Column& to) {
  Datum out;
  std::string error;
  EXPECT_TRUE(EvalCast(in, from, to, &out, &error)) << error;
  return out;
}

std::string CastError(const Datum& in, pb::ScalarType from, const pb::Column& to) {
  Datum out;
  std::string error;
  EXPECT_FALSE(EvalCast(in, from, to, &out, &error));
  return error;
}

std::string CastText(const Datum& in, pb::ScalarType from) {
  const Datum out = CastOk(in, from, Col(pb::STRING));
  return std::holds_alternative<std::string>(out) ? std::get<std::string>(out) : "<not text>";
}

Datum FromText(std::string_view text, const pb::Column& to) {
  return CastOk(std::string(text), pb::STRING, to);
}

std::string FromTextError(std::string_view text, const pb::Column& to) {
  return CastError(std::string(text), pb::STRING, to);
}

TEST(CastEvalTest, NullCastsToNull) {
  EXPECT_TRUE(std::holds_alternative<Null>(CastOk(Null{}, pb::STRING, Col(pb::INT32))));
}

TEST(CastEvalTest, IntegerNarrowingIsRangeChecked) {
  // select 2147483647::int8::int4; select 2147483648::int8::int4; select 32768::int4::int2
  EXPECT_EQ(CastOk(std::int64_t{2147483647}, pb::INT64, Col(pb::INT32)),
            Datum(std::int64_t{2147483647}));
  EXPECT_EQ(CastError(std::int64_t{2147483648}, pb::INT64, Col(pb::INT32)), "integer out of range");
  EXPECT_EQ(CastError(std::int64_t{32768}, pb::INT32, Col(pb::INT16)), "smallint out of range");
}

TEST(CastEvalTest, FloatToIntegerRoundsHalfToEven) {
  // select 2.5::float8::int4, 3.5::float8::int4, (-2.5)::float8::int2 → 2, 4, -2
  EXPECT_EQ(CastOk(2.5, pb::FLOAT64, Col(pb::INT32)), Datum(std::int64_t{2}));
  EXPECT_EQ(CastOk(3.5, pb::FLOAT64, Col(pb::INT32)), Datum(std::int64_t{4}));
  EXPECT_EQ(CastOk(-2.5, pb::FLOAT64, Col(pb::INT16)), Datum(std::int64_t{-2}));
  // select 2147483647.4::float8::int4, (-2147483648.4)::float8::int4 → in range;
  // (-2147483648.6)::float8::int4 → integer out of range
  EXPECT_EQ(CastOk(2147483647.4, pb::FLOAT64, Col(pb::INT32)), Datum(std::int64_t{2147483647}));
  EXPECT_EQ(CastOk(-2147483648.4, pb::FLOAT64, Col(pb::INT32)), Datum(std::int64_t{-2147483648}));
  EXPECT_EQ(CastError(-2147483648.6, pb::FLOAT64, Col(pb::INT32)), "integer out of range");
  EXPECT_EQ(CastError(2147483647.5, pb::FLOAT64, Col(pb::INT32)), "integer out of range");
  EXPECT_EQ(CastError(std::nan(""), pb::FLOAT64, Col(pb::INT64)), "bigint out of range");
  EXPECT_EQ(CastError(9.3e18, pb::FLOAT64, Col(pb::INT64)), "bigint out of range");
}

TEST(CastEvalTest, NumericToIntegerRoundsHalfAwayFromZero) {
  // select 2.5::numeric::int4, (-2.5)::numeric::int4 → 3, -3; 1e10::numeric::int4 → error
  EXPECT_EQ(CastOk(Num("2.5"), pb::NUMERIC, Col(pb::INT32)), Datum(std::int64_t{3}));
  EXPECT_EQ(CastOk(Num("-2.5"), pb::NUMERIC, Col(pb::INT32)), Datum(std::int64_t{-3}));
  EXPECT_EQ(CastError(Num("10000000000"), pb::NUMERIC, Col(pb::INT32)), "integer out of range");
}

TEST(CastEvalTest, FloatNarrowingAndWidening) {
  // select 1e39::float8::float4 → value out of range: overflow; 1e-50 → underflow
  EXPECT_EQ(CastError(1e39, pb::FLOAT64, Col(pb::FLOAT32)), "value out of range: overflow");
  EXPECT_EQ(CastError(1e-50, pb::FLOAT64, Col(pb::FLOAT32)), "value out of range: underflow");
  // select 0.1::float4::float8 → 0.10000000149011612
  const Datum f4 = CastOk(0.1, pb::FLOAT64, Col(pb::FLOAT32));
  EXPECT_EQ(CastText(CastOk(f4, pb::FLOAT32, Col(pb::FLOAT64)), pb::FLOAT64),
            "0.10000000149011612");
  // select 16777217::int4::float4::float8 → 16777216
  EXPECT_EQ(CastOk(std::int64_t{16777217}, pb::INT32, Col(pb::FLOAT32)), Datum(16777216.0));
  // select 'inf'::float8::float4 is Infinity (no overflow error for an infinite input)
  EXPECT_TRUE(std::isinf(std::get<double>(
      CastOk(std::numeric_limits<double>::infinity(), pb::FLOAT64, Col(pb::FLOAT32)))));
}

TEST(CastEvalTest, FloatsToNumericUseTheirPrintedDigits) {
  // select 0.1::float4::numeric, 1e20::float4::numeric, 1.5e-7::float4::numeric
  //   → 0.1, 100000000000000000000, 0.00000015
  const Datum f4 = CastOk(0.1, pb::FLOAT64, Col(pb::FLOAT32));
  EXPECT_EQ(NumericText(std::get<Numeric>(CastOk(f4, pb::FLOAT32, Col(pb::NUMERIC)))), "0.1");
  EXPECT_EQ(NumericText(std::get<Numeric>(CastOk(CastOk(1e20, pb::FLOAT64, Col(pb::FLOAT32)),
                                                 pb::FLOAT32, Col(pb::NUMERIC)))),
            "100000000000000000000");
  EXPECT_EQ(NumericText(std::get<Numeric>(CastOk(CastOk(1.5e-7, pb::FLOAT64, Col(pb::FLOAT32)),
                                                 pb::FLOAT32, Col(pb::NUMERIC)))),
            "0.00000015");
  // select 0.1::float4::numeric(3,2) → 0.10
  EXPECT_EQ(NumericText(std::get<Numeric>(CastOk(f4, pb::FLOAT32, NumericCol(3, 2)))), "0.10");
  // select 12.5::float8::numeric(3,1) → 12.5
  EXPECT_EQ(NumericText(std::get<Numeric>(CastOk(12.5, pb::FLOAT64, NumericCol(3, 1)))), "12.5");
}

TEST(CastEvalTest, NumericTypmodRoundsThenChecksPrecision) {
  // select 123.456::numeric(5,2), 1.005::numeric(4,2), 12345::int4::numeric(7,2)
  //   → 123.46, 1.01, 12345.00
  EXPECT_EQ(NumericText(std::get<Numeric>(CastOk(Num("123.456"), pb::NUMERIC, NumericCol(5, 2)))),
            "123.46");
  EXPECT_EQ(NumericText(std::get<Numeric>(CastOk(Num("1.005"), pb::NUMERIC, NumericCol(4, 2)))),
            "1.01");
  EXPECT_EQ(
      NumericText(std::get<Numeric>(CastOk(std::int64_t{12345}, pb::INT32, NumericCol(7, 2)))),
      "12345.00");
  // select 999.995::numeric(5,2) → ERROR: numeric field overflow
  EXPECT_EQ(
      CastError(Num("999.995"), pb::NUMERIC, NumericCol(5, 2)).rfind("numeric field overflow", 0),
      0u);
  // select '12.345'::text::numeric(4,2) → 12.35
  EXPECT_EQ(NumericText(std::get<Numeric>(FromText("12.345", NumericCol(4, 2)))), "12.35");
}

TEST(CastEvalTest, BoolAndInt4) {
  // select true::int4, 5::bool, 0::bool, (-1)::bool → 1, t, f, t
  EXPECT_EQ(CastOk(true, pb::BOOL, Col(pb::INT32)), Datum(std::int64_t{1}));
  EXPECT_EQ(CastOk(std::int64_t{5}, pb::INT32, Col(pb::BOOL)), Datum(true));
  EXPECT_EQ(CastOk(std::int64_t{0}, pb::INT32, Col(pb::BOOL)), Datum(false));
  EXPECT_EQ(CastOk(std::int64_t{-1}, pb::INT32, Col(pb::BOOL)), Datum(true));
}

TEST(CastEvalTest, FloatTextIsTheShortestRoundTripInPostgresNotation) {
  // select 1e15::float8, 1e14::float8, 123456789012345.6::float8, 0.0001::float8, 0.00001::float8,
  //   1.5e-7::float8::text, '-0'::float8::text, 5e-324::float8::text,
  //   1.7976931348623157e308::float8::text, 'nan'::float8::text, '-inf'::float8::text
  EXPECT_EQ(CastText(1e15, pb::FLOAT64), "1e+15");
  EXPECT_EQ(CastText(1e14, pb::FLOAT64), "100000000000000");
  EXPECT_EQ(CastText(123456789012345.6, pb::FLOAT64), "123456789012345.6");
  EXPECT_EQ(CastText(0.0001, pb::FLOAT64), "0.0001");
  EXPECT_EQ(CastText(0.00001, pb::FLOAT64), "1e-05");
  EXPECT_EQ(CastText(1.5e-7, pb::FLOAT64), "1.5e-07");
  EXPECT_EQ(CastText(-0.0, pb::FLOAT64), "-0");
  EXPECT_EQ(CastText(5e-324, pb::FLOAT64), "5e-324");
  EXPECT_EQ(CastText(1.7976931348623157e308, pb::FLOAT64), "1.7976931348623157e+308");
  EXPECT_EQ(CastText(std::nan(""), pb::FLOAT64), "NaN");
  EXPECT_EQ(CastText(-std::numeric_limits<double>::infinity(), pb::FLOAT64), "-Infinity");
  EXPECT_EQ(CastText(1e16, pb::FLOAT64), "1e+16");
  // select 1e6::float4, 1e5::float4, 0.1::float4::text, 123456.7::float4::text,
  //   1234567::float4::text, 12345678::float4::text, 2.5e-5::float4::text,
  //   3.4028235e38::float4::text, 1.0e-45::float4::text
  auto f4 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  EXPECT_EQ(CastText(f4(1e6), pb::FLOAT32), "1e+06");
  EXPECT_EQ(CastText(f4(1e5), pb::FLOAT32), "100000");
  EXPECT_EQ(CastText(f4(0.1), pb::FLOAT32), "0.1");
  EXPECT_EQ(CastText(f4(123456.7), pb::FLOAT32), "123456.7");
  EXPECT_EQ(CastText(f4(1234567), pb::FLOAT32), "1.234567e+06");
  EXPECT_EQ(CastText(f4(12345678), pb::FLOAT32), "1.2345678e+07");
  EXPECT_EQ(CastText(f4(2.5e-5), pb::FLOAT32), "2.5e-05");
  EXPECT_EQ(CastText(f4(3.4028235e38), pb::FLOAT32), "3.4028235e+38");
  EXPECT_EQ(CastText(f4(1.0e-45), pb::FLOAT32), "1e-45");
}

TEST(CastEvalTest, OtherTypesToText) {
  // select true::text, false::varchar(3) → true, fal
  EXPECT_EQ(CastText(true, pb::BOOL), "true");
  EXPECT_EQ(CastOk(false, pb::BOOL, Varchar(3)), Datum(std::string("fal")));
  EXPECT_EQ(CastText(std::int64_t{-12}, pb::INT16), "-12");
  EXPECT_EQ(CastText(Num("12.50"), pb::NUMERIC), "12.50");
  // select '\x0aFF'::bytea::text → \x0aff
  EXPECT_EQ(CastText(Bytes{std::string("\x0a\xff", 2)}, pb::BYTEA), "\\x0aff");
  // select '{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}'::uuid::text
  const Datum uuid = FromText("{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}", Col(pb::UUID));
  EXPECT_EQ(CastText(uuid, pb::UUID), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  // select '2026-12-06 23:59:59.999999'::timestamp::timestamptz::text
  const Datum ts = FromText("2026-12-06 23:59:59.999999", Col(pb::TIMESTAMP));
  EXPECT_EQ(CastText(CastOk(ts, pb::TIMESTAMP, Col(pb::TIMESTAMPTZ)), pb::TIMESTAMPTZ),
            "2026-12-06 23:59:59.999999+00");
}

TEST(CastEvalTest, TextToIntegersAsPostgresReadsThem) {
  // select ' 12 '::int4, '+12'::int2, '-0'::int8 → 12, 12, 0
  EXPECT_EQ(FromText(" 12 ", Col(pb::INT32)), Datum(std::int64_t{12}));
  EXPECT_EQ(FromText("+12", Col(pb::INT16)), Datum(std::int64_t{12}));
  EXPECT_EQ(FromText("-0", Col(pb::INT64)), Datum(std::int64_t{0}));
  EXPECT_EQ(FromText("-9223372036854775808", Col(pb::INT64)), Datum(INT64_MIN));
  // select '1x'::int4; select ''::int4
  EXPECT_EQ(FromTextError("1x", Col(pb::INT32)), "invalid input syntax for type integer: \"1x\"");
  EXPECT_EQ(FromTextError("", Col(pb::INT32)), "invalid input syntax for type integer: \"\"");
  EXPECT_EQ(FromTextError("1 2", Col(pb::INT64)), "invalid input syntax for type bigint: \"1 2\"");
  // select '99999'::int2; select '99999999999'::int4
  EXPECT_EQ(FromTextError("99999", Col(pb::INT16)),
            "value \"99999\" is out of range for type smallint");
  EXPECT_EQ(FromTextError("99999999999", Col(pb::INT32)),
            "value \"99999999999\" is out of range for type integer");
  EXPECT_EQ(FromTextError("9223372036854775808", Col(pb::INT64)),
            "value \"9223372036854775808\" is out of range for type bigint");
}

TEST(CastEvalTest, TextToFloatsAsPostgresReadsThem) {
  // select ' Infinity '::float8, '-inf'::float4, 'NaN'::float8, '0x10'::float8, '4e-320'::float8
  EXPECT_TRUE(std::isinf(std::get<double>(FromText(" Infinity ", Col(pb::FLOAT64)))));
  EXPECT_EQ(FromText("-inf", Col(pb::FLOAT32)), Datum(-std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(std::isnan(std::get<double>(FromText("NaN", Col(pb::FLOAT64)))));
  EXPECT_EQ(FromText("0x10", Col(pb::FLOAT64)), Datum(16.0));
  EXPECT_EQ(FromText("4e-320", Col(pb::FLOAT64)), Datum(4e-320));
  // select '1e400'::float8; select '1e-400'::float8; select 'abc'::float4; select '1e40'::float4;
  // select ' '::float8
  EXPECT_EQ(FromTextError("1e400", Col(pb::FLOAT64)),
            "\"1e400\" is out of range for type double precision");
  EXPECT_EQ(FromTextError("1e-400", Col(pb::FLOAT64)),
            "\"1e-400\" is out of range for type double precision");
  EXPECT_EQ(FromTextError("abc", Col(pb::FLOAT32)), "invalid input syntax for type real: \"abc\"");
  EXPECT_EQ(FromTextError("1e40", Col(pb::FLOAT32)), "\"1e40\" is out of range for type real");
  EXPECT_EQ(FromTextError(" ", Col(pb::FLOAT64)),
            "invalid input syntax for type double precision: \" \"");
}

TEST(CastEvalTest, TextToBoolTakesPostgresSpellings) {
  // select 'yes'::bool, ' of '::bool, 'T'::bool, '0'::bool, 'tr'::bool → t f t f t
  EXPECT_EQ(FromText("yes", Col(pb::BOOL)), Datum(true));
  EXPECT_EQ(FromText(" of ", Col(pb::BOOL)), Datum(false));
  EXPECT_EQ(FromText("T", Col(pb::BOOL)), Datum(true));
  EXPECT_EQ(FromText("0", Col(pb::BOOL)), Datum(false));
  EXPECT_EQ(FromText("tr", Col(pb::BOOL)), Datum(true));
  // select 'o'::bool; select 'truex'::bool
  EXPECT_EQ(FromTextError("o", Col(pb::BOOL)), "invalid input syntax for type boolean: \"o\"");
  EXPECT_EQ(FromTextError("truex", Col(pb::BOOL)),
            "invalid input syntax for type boolean: \"truex\"");
}

TEST(CastEvalTest, TextToByteaInBothFormats) {
  // select '\x 0a ff'::bytea::text, 'a\\b\101'::bytea::text, 'abc'::bytea::text
  //   → \x0aff, \x615c6241, \x616263
  EXPECT_EQ(CastText(FromText("\\x 0a ff", Col(pb::BYTEA)), pb::BYTEA), "\\x0aff");
  EXPECT_EQ(CastText(FromText("a\\\\b\\101", Col(pb::BYTEA)), pb::BYTEA), "\\x615c6241");
  EXPECT_EQ(CastText(FromText("abc", Col(pb::BYTEA)), pb::BYTEA), "\\x616263");
  // select '\x0g'::bytea; select '\x0'::bytea; select 'a\b'::bytea
  EXPECT_EQ(FromTextError("\\x0g", Col(pb::BYTEA)), "invalid hexadecimal digit: \"g\"");
  EXPECT_EQ(FromTextError("\\x0", Col(pb::BYTEA)),
            "invalid hexadecimal data: odd number of digits");
  EXPECT_EQ(FromTextError("a\\b", Col(pb::BYTEA)), "invalid input syntax for type bytea");
}

TEST(CastEvalTest, TextToUuid) {
  // select 'a0eebc999c0b4ef8bb6d6bb9bd380a11'::uuid,
  // 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11'::uuid
  const Datum plain = FromText("a0eebc999c0b4ef8bb6d6bb9bd380a11", Col(pb::UUID));
  EXPECT_EQ(FromText("a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", Col(pb::UUID)), plain);
  EXPECT_EQ(CastText(plain, pb::UUID), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  // select 'a0eebc99-9c0b4ef8-bb6d6bb9bd380a1'::uuid; select ' a0eebc99-...'::uuid
  EXPECT_EQ(FromTextError("a0eebc99-9c0b4ef8-bb6d6bb9bd380a1", Col(pb::UUID)),
            "invalid input syntax for type uuid: \"a0eebc99-9c0b4ef8-bb6d6bb9bd380a1\"");
  EXPECT_EQ(FromTextError(" a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", Col(pb::UUID)),
            "invalid input syntax for type uuid: \" a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\"");
  EXPECT_FALSE(FromTextError("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", Col(pb::UUID)).empty());
}

TEST(CastEvalTest, TextToOtherTypesUsesTheirInputFunctions) {
  // select 'abc'::numeric; select 'x'::date
  EXPECT_EQ(FromTextError("abc", Col(pb::NUMERIC)),
            "invalid input syntax for type numeric: \"abc\"");
  EXPECT_EQ(FromTextError("x", Col(pb::DATE)), "invalid input syntax for type date: \"x\"");
  EXPECT_EQ(CastText(FromText("1 day 02:00:00", Col(pb::INTERVAL)), pb::INTERVAL),
            "1 day 02:00:00");
}

TEST(CastEvalTest, VarcharTruncatesAndCharPadsByCharacters) {
  // select 'abcd'::varchar(3), 'abcdef'::char(3), 12345::varchar(3), 'äöüß'::varchar(2),
  //   'ab'::char(4)||'|' (char's || drops the padding; the value is 'ab  ')
  EXPECT_EQ(CastOk(std::string("abcd"), pb::STRING, Varchar(3)), Datum(std::string("abc")));
  EXPECT_EQ(CastOk(std::string("abcdef"), pb::STRING, Varchar(3, true)), Datum(std::string("abc")));
  EXPECT_EQ(CastOk(std::int64_t{12345}, pb::INT32, Varchar(3)), Datum(std::string("123")));
  EXPECT_EQ(CastOk(std::string("äöüß"), pb::STRING, Varchar(2)), Datum(std::string("äö")));
  EXPECT_EQ(CastOk(std::string("ab"), pb::STRING, Varchar(4, true)), Datum(std::string("ab  ")));
  EXPECT_EQ(CastOk(std::string("é"), pb::STRING, Varchar(3, true)), Datum(std::string("é  ")));
}

TEST(CastEvalTest, CharLosesItsPaddingToTextAndVarcharOnly) {
  // select 'ab'::char(4)::varchar || '|', 'ab'::char(4)::varchar(3) || '|',
  //   ('ab'::char(4)::char(6))::bytea, 'a b'::char(5)::text || '|', ' '::char(3)::text || '|',
  //   ('ab'::char(4))::bytea → ab|, ab|, \x616220202020, a b|, |, \x61622020
  const pb::Column char4 = Varchar(4, true);
  auto cast = [&](const std::string& in, const pb::Column& from, const pb::Column& to) {
    Datum out;
    std::string error;
    EXPECT_TRUE(EvalCastFromColumn(in, from, to, &out, &error)) << error;
    return out;
  };
  EXPECT_EQ(cast("ab  ", char4, Col(pb::STRING)), Datum(std::string("ab")));
  EXPECT_EQ(cast("ab  ", char4, Varchar(3)), Datum(std::string("ab")));
  EXPECT_EQ(cast("ab  ", char4, Varchar(6, true)), Datum(std::string("ab    ")));
  EXPECT_EQ(cast("a b  ", Varchar(5, true), Col(pb::STRING)), Datum(std::string("a b")));
  EXPECT_EQ(cast("   ", Varchar(3, true), Col(pb::STRING)), Datum(std::string("")));
  EXPECT_EQ(CastText(cast("ab  ", char4, Col(pb::BYTEA)), pb::BYTEA), "\\x61622020");
  // A varchar keeps its trailing blanks: select 'ab  '::varchar(4)::text || '|' → 'ab  |'
  EXPECT_EQ(cast("ab  ", Varchar(4), Col(pb::STRING)), Datum(std::string("ab  ")));
}

TEST(CastEvalTest, AssignmentToVarcharOrCharRefusesCuttingAnythingButBlanks) {
  // create temp table t(v varchar(3), c char(3), n numeric(4,1));
  // insert into t(v) values ('abcd') → ERROR: value too long for type character varying(3)
  // insert into t(c) values ('abcd') → ERROR: value too long for type character(3)
  // insert into t(v) values (12345)  → ERROR: value too long for type character varying(3)
  // insert into t(v, c) values ('ab   ', 'x    '), ('äöü', 'é') → 'ab ', 'x  ', 'äöü', 'é  '
  // insert into t(n) values (999.96) → ERROR: numeric field overflow
  auto assign = [](const Datum& in, pb::ScalarType from, const pb::Column& to, std::string* error) {
    Datum out;
    return EvalAssignmentCast(in, from, to, &out, error) ? out : Datum(Null{});
  };
  std::string error;
  EXPECT_TRUE(
      std::holds_alternative<Null>(assign(std::string("abcd"), pb::STRING, Varchar(3), &error)));
  EXPECT_EQ(error, "value too long for type character varying(3)");
  EXPECT_TRUE(std::holds_alternative<Null>(
      assign(std::string("abcd"), pb::STRING, Varchar(3, true), &error)));
  EXPECT_EQ(error, "value too long for type character(3)");
  EXPECT_TRUE(
      std::holds_alternative<Null>(assign(std::int64_t{12345}, pb::INT32, Varchar(3), &error)));
  EXPECT_EQ(error, "value too long for type character varying(3)");
  EXPECT_EQ(assign(std::string("ab   "), pb::STRING, Varchar(3), &error),
            Datum(std::string("ab ")));
  EXPECT_EQ(assign(std::string("x    "), pb::STRING, Varchar(3, true), &error),
            Datum(std::string("x  ")));
  EXPECT_EQ(assign(std::string("äöü"), pb::STRING, Varchar(3), &error), Datum(std::string("äöü")));
  EXPECT_EQ(assign(std::string("é"), pb::STRING, Varchar(3, true), &error),
            Datum(std::string("é  ")));
  EXPECT_TRUE(
      std::holds_alternative<Null>(assign(Num("999.96"), pb::NUMERIC, NumericCol(4, 1), &error)));
  EXPECT_EQ(error.rfind("numeric field overflow", 0), 0u);
}

TEST(CastEvalTest, DatesTimesAndTimestamps) {
  // select '2020-01-02 03:04:05.5'::timestamp::date, ...::time,
  //   '2020-01-02 03:04:05.5+02'::timestamptz::timestamp, '2020-01-02'::date::timestamp
  const Datum ts = FromText("2020-01-02 03:04:05.5", Col(pb::TIMESTAMP));
  EXPECT_EQ(CastText(CastOk(ts, pb::TIMESTAMP, Col(pb::DATE)), pb::DATE), "2020-01-02");
  EXPECT_EQ(CastText(CastOk(ts, pb::TIMESTAMP, Col(pb::TIME)), pb::TIME), "03:04:05.5");
  const Datum tz = FromText("2020-01-02 03:04:05.5+02", Col(pb::TIMESTAMPTZ));
  EXPECT_EQ(CastText(CastOk(tz, pb::TIMESTAMPTZ, Col(pb::TIMESTAMP)), pb::TIMESTAMP),
            "2020-01-02 01:04:05.5");
  const Datum date = FromText("2020-01-02", Col(pb::DATE));
  EXPECT_EQ(CastText(CastOk(date, pb::DATE, Col(pb::TIMESTAMP)), pb::TIMESTAMP),
            "2020-01-02 00:00:00");
  // select '2020-01-01'::date::timestamptz → 2020-01-01 00:00:00+00
  EXPECT_EQ(CastText(CastOk(FromText("2020-01-01", Col(pb::DATE)), pb::DATE, Col(pb::TIMESTAMPTZ)),
                     pb::TIMESTAMPTZ),
            "2020-01-01 00:00:00+00");
  // select '2026-12-06 12:00:00+00'::timestamptz::date → 2026-12-06
  EXPECT_EQ(CastText(CastOk(FromText("2026-12-06 12:00:00+00", Col(pb::TIMESTAMPTZ)),
                            pb::TIMESTAMPTZ, Col(pb::DATE)),
                     pb::DATE),
            "2026-12-06");
  // select '5874897-12-31'::date::timestamp → ERROR: date out of range for timestamp
  EXPECT_EQ(CastError(FromText("5874897-12-31", Col(pb::DATE)), pb::DATE, Col(pb::TIMESTAMP)),
            "date out of range for timestamp");
}

TEST(CastEvalTest, IntervalAndTime) {
  // select '12:00'::time::interval::text, '36:00'::interval::time::text,
  //   '1 day'::interval::time::text, '1 day 25:30'::interval::time, '-1:00'::interval::time
  //   → 12:00:00, 12:00:00, 00:00:00, 01:30:00, 23:00:00
  EXPECT_EQ(
      CastText(CastOk(FromText("12:00", Col(pb::TIME)), pb::TIME, Col(pb::INTERVAL)), pb::INTERVAL),
      "12:00:00");
  for (auto [in, want] :
       std::vector<std::pair<const char*, const char*>>{{"36:00", "12:00:00"},
                                                        {"1 day", "00:00:00"},
                                                        {"1 day 25:30", "01:30:00"},
                                                        {"-1:00", "23:00:00"}}) {
    EXPECT_EQ(
        CastText(CastOk(FromText(in, Col(pb::INTERVAL)), pb::INTERVAL, Col(pb::TIME)), pb::TIME),
        want)
        << in;
  }
}

// ---- functions --------------------------------------------------------------------------------

struct Arg {
  Datum value;
  pb::ScalarType type;
};

Arg T(std::string s) { return {std::move(s), pb::STRING}; }
Arg I4(std::int64_t v) { return {v, pb::INT32}; }
Arg F8(double v) { return {v, pb::FLOAT64}; }
Arg N(std::string_view text) { return {Num(text), pb::NUMERIC}; }
Arg NullOf(pb::ScalarType type) { return {Null{}, type}; }
Arg Typed(std::string_view text, pb::ScalarType type) { return {FromText(text, Col(type)), type}; }

bool Call(pb::Func func, const std::vector<Arg>& args, Datum* out, std::string* error) {
  std::vector<Datum> values;
  std::vector<pb::ScalarType> types;
  for (const Arg& a : args) {
    values.push_back(a.value);
    types.push_back(a.type);
  }
  return EvalFunc(func, values, types, out, error);
}

Datum CallOk(pb::Func func, const std::vector<Arg>& args) {
  Datum out;
  std::string error;
  EXPECT_TRUE(Call(func, args, &out, &error)) << pb::Func_Name(func) << ": " << error;
  return out;
}

std::string CallError(pb::Func func, const std::vector<Arg>& args) {
  Datum out;
  std::string error;
  EXPECT_FALSE(Call(func, args, &out, &error)) << pb::Func_Name(func);
  return error;
}

// The result as PostgreSQL would print it.
std::string CallText(pb::Func func, const std::vector<Arg>& args, pb::ScalarType result) {
  const Datum out = CallOk(func, args);
  if (std::holds_alternative<Null>(out)) return "NULL";
  return SqlValueText(out, result);
}

TEST(FuncEvalTest, EveryNullInNullOutFunctionIsNullOnANullArgument) {
  const std::vector<std::pair<pb::Func, std::vector<Arg>>> calls = {
      {pb::CONCAT, {T("a"), NullOf(pb::STRING)}},
      {pb::CHAR_LENGTH, {NullOf(pb::STRING)}},
      {pb::OCTET_LENGTH, {NullOf(pb::BYTEA)}},
      {pb::LOWER, {NullOf(pb::STRING)}},
      {pb::UPPER, {NullOf(pb::STRING)}},
      {pb::SUBSTR, {T("abc"), I4(1), NullOf(pb::INT32)}},
      {pb::STRPOS, {NullOf(pb::STRING), T("a")}},
      {pb::BTRIM, {T("abc"), NullOf(pb::STRING)}},
      {pb::LTRIM, {NullOf(pb::STRING)}},
      {pb::RTRIM, {NullOf(pb::STRING)}},
      {pb::REPLACE, {T("abc"), T("b"), NullOf(pb::STRING)}},
      {pb::LIKE, {NullOf(pb::STRING), T("%")}},
      {pb::ILIKE, {T("a"), NullOf(pb::STRING)}},
      {pb::ABS, {NullOf(pb::INT64)}},
      {pb::ROUND, {N("1.5"), NullOf(pb::INT32)}},
      {pb::TRUNC, {NullOf(pb::FLOAT64)}},
      {pb::FLOOR, {NullOf(pb::NUMERIC)}},
      {pb::CEIL, {NullOf(pb::FLOAT64)}},
      {pb::POWER, {F8(0), NullOf(pb::FLOAT64)}},  // null before the 0 ^ null error
      {pb::SQRT, {NullOf(pb::NUMERIC)}},
      {pb::DATE_TRUNC, {NullOf(pb::STRING), Typed("2020-01-01", pb::TIMESTAMP)}},
      {pb::EXTRACT, {T("no such field"), NullOf(pb::DATE)}},
      {pb::DATE_PART, {T("hour"), NullOf(pb::INTERVAL)}},
  };
  for (const auto& [func, args] : calls) {
    EXPECT_TRUE(std::holds_alternative<Null>(CallOk(func, args))) << pb::Func_Name(func);
  }
}

TEST(FuncEvalTest, CoalesceNullifGreatestLeastReadNulls) {
  // select coalesce(null::int, 3, 4), coalesce(null::int, null::int) → 3, NULL
  EXPECT_EQ(CallOk(pb::COALESCE, {NullOf(pb::INT32), I4(3), I4(4)}), Datum(std::int64_t{3}));
  EXPECT_TRUE(
      std::holds_alternative<Null>(CallOk(pb::COALESCE, {NullOf(pb::INT32), NullOf(pb::INT32)})));
  // select nullif(1, 1), nullif(1, 2), nullif(null::int, 1), nullif(1, null::int)
  EXPECT_TRUE(std::holds_alternative<Null>(CallOk(pb::NULLIF, {I4(1), I4(1)})));
  EXPECT_EQ(CallOk(pb::NULLIF, {I4(1), I4(2)}), Datum(std::int64_t{1}));
  EXPECT_TRUE(std::holds_alternative<Null>(CallOk(pb::NULLIF, {NullOf(pb::INT32), I4(1)})));
  EXPECT_EQ(CallOk(pb::NULLIF, {I4(1), NullOf(pb::INT32)}), Datum(std::int64_t{1}));
  // select nullif(interval '1 mon', interval '30 days') → NULL (equal as values)
  EXPECT_TRUE(std::holds_alternative<Null>(
      CallOk(pb::NULLIF, {Typed("1 mon", pb::INTERVAL), Typed("30 days", pb::INTERVAL)})));
  // select greatest(null::int, 3, null), greatest('NaN'::float8, 1), least('-0'::float8, 0)
  //   → 3, NaN, -0
  EXPECT_EQ(CallOk(pb::GREATEST, {NullOf(pb::INT32), I4(3), NullOf(pb::INT32)}),
            Datum(std::int64_t{3}));
  EXPECT_TRUE(std::isnan(std::get<double>(CallOk(pb::GREATEST, {F8(std::nan("")), F8(1)}))));
  EXPECT_EQ(CallText(pb::LEAST, {F8(-0.0), F8(0.0)}, pb::FLOAT64), "-0");
  EXPECT_TRUE(std::holds_alternative<Null>(CallOk(pb::LEAST, {NullOf(pb::INT32)})));
  // select greatest(1.50, 1.5), least(1.5, 1.50) → 1.50, 1.5 (the first of equals)
  EXPECT_EQ(CallText(pb::GREATEST, {N("1.50"), N("1.5")}, pb::NUMERIC), "1.50");
  EXPECT_EQ(CallText(pb::LEAST, {N("1.5"), N("1.50")}, pb::NUMERIC), "1.5");
  // select greatest(interval '1 mon', interval '30 days'), greatest('30 days', '1 mon')
  EXPECT_EQ(CallText(pb::GREATEST, {Typed("1 mon", pb::INTERVAL), Typed("30 days", pb::INTERVAL)},
                     pb::INTERVAL),
            "1 mon");
  EXPECT_EQ(CallText(pb::GREATEST, {Typed("30 days", pb::INTERVAL), Typed("1 mon", pb::INTERVAL)},
                     pb::INTERVAL),
            "30 days");
  // select greatest('b'::text, 'a', 'c'), least(date '2020-01-01', date '2019-01-01')
  EXPECT_EQ(CallText(pb::GREATEST, {T("b"), T("a"), T("c")}, pb::STRING), "c");
  EXPECT_EQ(
      CallText(pb::LEAST, {Typed("2020-01-01", pb::DATE), Typed("2019-01-01", pb::DATE)}, pb::DATE),
      "2019-01-01");
}

TEST(FuncEvalTest, StringFunctionsCountCharacters) {
  // select 'a'::text || 'b', char_length('héllo'), octet_length('héllo'),
  //   octet_length('\x0102'::bytea), char_length('')
  EXPECT_EQ(CallText(pb::CONCAT, {T("a"), T("b")}, pb::STRING), "ab");
  EXPECT_EQ(CallOk(pb::CHAR_LENGTH, {T("héllo")}), Datum(std::int64_t{5}));
  EXPECT_EQ(CallOk(pb::OCTET_LENGTH, {T("héllo")}), Datum(std::int64_t{6}));
  EXPECT_EQ(CallOk(pb::OCTET_LENGTH, {{Bytes{std::string("\x01\x02")}, pb::BYTEA}}),
            Datum(std::int64_t{2}));
  EXPECT_EQ(CallOk(pb::CHAR_LENGTH, {T("")}), Datum(std::int64_t{0}));
  // select lower('ÀBC'), upper('àbc'), upper('straße'), lower('ÄBC') → Àbc, àBC, STRAßE, Äbc
  EXPECT_EQ(CallText(pb::LOWER, {T("ÀBC")}, pb::STRING), "Àbc");
  EXPECT_EQ(CallText(pb::UPPER, {T("àbc")}, pb::STRING), "àBC");
  EXPECT_EQ(CallText(pb::UPPER, {T("straße")}, pb::STRING), "STRAßE");
  EXPECT_EQ(CallText(pb::LOWER, {T("ÄBC")}, pb::STRING), "Äbc");
}

TEST(FuncEvalTest, SubstrCountsFromOneAndRefusesNegativeLengths) {
  // select substr('hello', 0, 3), substr('hello', -1), substr('hello', 2), substr('héllo', 2, 2),
  //   substr('hello', 10), substr('abc', -5, 7), substr('abc', 2, 0) → he, hello, ello, él, '', a,
  //   ''
  EXPECT_EQ(CallText(pb::SUBSTR, {T("hello"), I4(0), I4(3)}, pb::STRING), "he");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("hello"), I4(-1)}, pb::STRING), "hello");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("hello"), I4(2)}, pb::STRING), "ello");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("héllo"), I4(2), I4(2)}, pb::STRING), "él");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("hello"), I4(10)}, pb::STRING), "");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("abc"), I4(-5), I4(7)}, pb::STRING), "a");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("abc"), I4(2), I4(0)}, pb::STRING), "");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("abc"), I4(INT32_MAX), I4(INT32_MAX)}, pb::STRING), "");
  EXPECT_EQ(CallText(pb::SUBSTR, {T("abc"), I4(INT32_MIN), I4(INT32_MAX)}, pb::STRING), "");
  // select substr('hello', 1, -1) → ERROR: negative substring length not allowed
  EXPECT_EQ(CallError(pb::SUBSTR, {T("hello"), I4(1), I4(-1)}),
            "negative substring length not allowed");
}

TEST(FuncEvalTest, StrposTrimAndReplace) {
  // select strpos('héllo', 'l'), strpos('abc', ''), strpos('abcabc', 'ca'), strpos('abc', 'x')
  EXPECT_EQ(CallOk(pb::STRPOS, {T("héllo"), T("l")}), Datum(std::int64_t{3}));
  EXPECT_EQ(CallOk(pb::STRPOS, {T("abc"), T("")}), Datum(std::int64_t{1}));
  EXPECT_EQ(CallOk(pb::STRPOS, {T("abcabc"), T("ca")}), Datum(std::int64_t{3}));
  EXPECT_EQ(CallOk(pb::STRPOS, {T("abc"), T("x")}), Datum(std::int64_t{0}));
  // select btrim('  a b  '), ltrim('xxaxx', 'x'), rtrim('aéé', 'é'), btrim('abc', ''),
  //   btrim('xyxabcxy', 'xy'), ltrim('  abc  '), rtrim('  abc  '), btrim('')
  EXPECT_EQ(CallText(pb::BTRIM, {T("  a b  ")}, pb::STRING), "a b");
  EXPECT_EQ(CallText(pb::LTRIM, {T("xxaxx"), T("x")}, pb::STRING), "axx");
  EXPECT_EQ(CallText(pb::RTRIM, {T("aéé"), T("é")}, pb::STRING), "a");
  EXPECT_EQ(CallText(pb::BTRIM, {T("abc"), T("")}, pb::STRING), "abc");
  EXPECT_EQ(CallText(pb::BTRIM, {T("xyxabcxy"), T("xy")}, pb::STRING), "abc");
  EXPECT_EQ(CallText(pb::LTRIM, {T("  abc  ")}, pb::STRING), "abc  ");
  EXPECT_EQ(CallText(pb::RTRIM, {T("  abc  ")}, pb::STRING), "  abc");
  EXPECT_EQ(CallText(pb::BTRIM, {T("")}, pb::STRING), "");
  // An é in the set does not trim the é-sharing bytes of another character.
  EXPECT_EQ(CallText(pb::RTRIM, {T("aè"), T("é")}, pb::STRING), "aè");
  // select replace('abcabc', 'b', 'XY'), replace('abc', '', 'x'), replace('aaaa', 'aa', 'b')
  EXPECT_EQ(CallText(pb::REPLACE, {T("abcabc"), T("b"), T("XY")}, pb::STRING), "aXYcaXYc");
  EXPECT_EQ(CallText(pb::REPLACE, {T("abc"), T(""), T("x")}, pb::STRING), "abc");
  EXPECT_EQ(CallText(pb::REPLACE, {T("aaaa"), T("aa"), T("b")}, pb::STRING), "bb");
}

bool Like(const std::string& text, const std::string& pattern, bool fold = false) {
  bool matches = false;
  std::string error;
  EXPECT_TRUE(EvalLike(text, pattern, fold, &matches, &error)) << error;
  return matches;
}

std::string LikeError(const std::string& text, const std::string& pattern) {
  bool matches = false;
  std::string error;
  EXPECT_FALSE(EvalLike(text, pattern, false, &matches, &error));
  return error;
}

TEST(FuncEvalTest, LikeHasPostgresPatterns) {
  // select 'a' like 'a\\', 'a\' like 'a\\', 'a%' like 'a\%', 'ab' like 'a\%', 'a_' like 'a\_',
  //   'a' like 'a%%', '' like '%', 'abc' like '_b_', 'a' like '\a'  → f t t f t t t t t
  EXPECT_FALSE(Like("a", "a\\\\"));
  EXPECT_TRUE(Like("a\\", "a\\\\"));
  EXPECT_TRUE(Like("a%", "a\\%"));
  EXPECT_FALSE(Like("ab", "a\\%"));
  EXPECT_TRUE(Like("a_", "a\\_"));
  EXPECT_TRUE(Like("a", "a%%"));
  EXPECT_TRUE(Like("", "%"));
  EXPECT_TRUE(Like("abc", "_b_"));
  EXPECT_TRUE(Like("a", "\\a"));
  // select 'abc' like 'a%c', 'abc' like 'a%b', 'aXbYc' like 'a_b_c', 'héllo' like 'h_llo',
  //   'héllo' like 'h%o', '' like '', '' like '_', 'abc' like '%%%', '%' like '\%', 'x' like '%x%y'
  //   → t f t t t t f t t f
  EXPECT_TRUE(Like("abc", "a%c"));
  EXPECT_FALSE(Like("abc", "a%b"));
  EXPECT_TRUE(Like("aXbYc", "a_b_c"));
  EXPECT_TRUE(Like("héllo", "h_llo"));
  EXPECT_TRUE(Like("héllo", "h%o"));
  EXPECT_TRUE(Like("", ""));
  EXPECT_FALSE(Like("", "_"));
  EXPECT_TRUE(Like("abc", "%%%"));
  EXPECT_TRUE(Like("%", "\\%"));
  EXPECT_FALSE(Like("x", "%x%y"));
  // select 'é' like '_' → t
  EXPECT_TRUE(Like("é", "_"));
  // A pathological pattern stays polynomial (PostgreSQL's abort rule).
  EXPECT_FALSE(Like(std::string(5000, 'a'), std::string(200, '%') + "b"));
  EXPECT_FALSE(Like(std::string(3000, 'a'), "%a%a%a%a%a%a%a%a%a%a%b"));
}

TEST(FuncEvalTest, LikeTrailingEscapeIsAnErrorOnlyWhenMatchingReachesIt) {
  // select 'a' like 'a\', 'b' like 'a\' → f, f (the match fails first)
  EXPECT_FALSE(Like("a", "a\\"));
  EXPECT_FALSE(Like("b", "a\\"));
  // select 'a\' like 'a\'; select 'a' like '%\'; select 'ab' like 'a\'
  EXPECT_EQ(LikeError("a\\", "a\\"), "LIKE pattern must not end with escape character");
  EXPECT_EQ(LikeError("a", "%\\"), "LIKE pattern must not end with escape character");
  EXPECT_EQ(LikeError("ab", "a\\"), "LIKE pattern must not end with escape character");
  EXPECT_EQ(CallError(pb::LIKE, {T("ab"), T("a\\")}),
            "LIKE pattern must not end with escape character");
}

TEST(FuncEvalTest, IlikeFoldsAsciiOnly) {
  // select 'AB' ilike 'ab', 'ÀB' ilike 'àb', 'ab' ilike 'A_', 'ÉX' ilike 'éx', 'ÉX' ilike 'Éx',
  //   'HÉllo' ilike 'hÉLLO' → t f t f t t
  EXPECT_TRUE(Like("AB", "ab", true));
  EXPECT_FALSE(Like("ÀB", "àb", true));
  EXPECT_TRUE(Like("ab", "A_", true));
  EXPECT_FALSE(Like("ÉX", "éx", true));
  EXPECT_TRUE(Like("ÉX", "Éx", true));
  EXPECT_TRUE(Like("HÉllo", "hÉLLO", true));
  EXPECT_EQ(CallOk(pb::ILIKE, {T("AB"), T("a%")}), Datum(true));
  EXPECT_EQ(CallOk(pb::LIKE, {T("AB"), T("a%")}), Datum(false));
}

TEST(FuncEvalTest, AbsOfEveryNumberType) {
  // select abs(-5::int2), abs(-1.5), abs('-inf'::float8) → 5, 1.5, Infinity
  EXPECT_EQ(CallOk(pb::ABS, {{std::int64_t{-5}, pb::INT16}}), Datum(std::int64_t{5}));
  EXPECT_EQ(CallText(pb::ABS, {N("-1.5")}, pb::NUMERIC), "1.5");
  EXPECT_EQ(CallText(pb::ABS, {F8(-std::numeric_limits<double>::infinity())}, pb::FLOAT64),
            "Infinity");
  EXPECT_EQ(CallOk(pb::ABS, {{-2.5, pb::FLOAT32}}), Datum(2.5));
  // select abs(-32768::int2); abs((-2147483648)::int4); abs((-9223372036854775808)::int8)
  EXPECT_EQ(CallError(pb::ABS, {{std::int64_t{INT16_MIN}, pb::INT16}}), "smallint out of range");
  EXPECT_EQ(CallError(pb::ABS, {{std::int64_t{INT32_MIN}, pb::INT32}}), "integer out of range");
  EXPECT_EQ(CallError(pb::ABS, {{INT64_MIN, pb::INT64}}), "bigint out of range");
  // select abs(-0::numeric) → 0
  EXPECT_EQ(CallText(pb::ABS, {N("-0")}, pb::NUMERIC), "0");
}

TEST(FuncEvalTest, RoundingFunctions) {
  // select round(2.5::float8), round(3.5::float8), round(-2.5::float8), round('-0.4'::float8),
  //   round(0.5::float8), trunc(-1.9::float8), floor(-1.5::float8), ceil(-0.5::float8)
  //   → 2, 4, -2, -0, 0, -1, -2, -0
  EXPECT_EQ(CallText(pb::ROUND, {F8(2.5)}, pb::FLOAT64), "2");
  EXPECT_EQ(CallText(pb::ROUND, {F8(3.5)}, pb::FLOAT64), "4");
  EXPECT_EQ(CallText(pb::ROUND, {F8(-2.5)}, pb::FLOAT64), "-2");
  EXPECT_EQ(CallText(pb::ROUND, {F8(-0.4)}, pb::FLOAT64), "-0");
  EXPECT_EQ(CallText(pb::ROUND, {F8(0.5)}, pb::FLOAT64), "0");
  EXPECT_EQ(CallText(pb::TRUNC, {F8(-1.9)}, pb::FLOAT64), "-1");
  EXPECT_EQ(CallText(pb::FLOOR, {F8(-1.5)}, pb::FLOAT64), "-2");
  EXPECT_EQ(CallText(pb::CEIL, {F8(-0.5)}, pb::FLOAT64), "-0");
  // select round(2.5), round(-2.5), round(1234.5678, 2), round(1234.5678, -2), trunc(1234.5678, 2),
  //   trunc(-1.5), floor(-1.5), ceil(-1.5), round(-0.5::numeric), trunc(-0.5::numeric),
  //   trunc(12.345::numeric, 1), round(12.345::numeric, -1), ceil(1.2::numeric),
  //   floor(-1.2::numeric) → 3 -3 1234.57 1200 1234.56 -1 -2 -1 -1 0 12.3 10 2 -2
  EXPECT_EQ(CallText(pb::ROUND, {N("2.5")}, pb::NUMERIC), "3");
  EXPECT_EQ(CallText(pb::ROUND, {N("-2.5")}, pb::NUMERIC), "-3");
  EXPECT_EQ(CallText(pb::ROUND, {N("1234.5678"), I4(2)}, pb::NUMERIC), "1234.57");
  EXPECT_EQ(CallText(pb::ROUND, {N("1234.5678"), I4(-2)}, pb::NUMERIC), "1200");
  EXPECT_EQ(CallText(pb::TRUNC, {N("1234.5678"), I4(2)}, pb::NUMERIC), "1234.56");
  EXPECT_EQ(CallText(pb::TRUNC, {N("-1.5")}, pb::NUMERIC), "-1");
  EXPECT_EQ(CallText(pb::FLOOR, {N("-1.5")}, pb::NUMERIC), "-2");
  EXPECT_EQ(CallText(pb::CEIL, {N("-1.5")}, pb::NUMERIC), "-1");
  EXPECT_EQ(CallText(pb::ROUND, {N("-0.5")}, pb::NUMERIC), "-1");
  EXPECT_EQ(CallText(pb::TRUNC, {N("-0.5")}, pb::NUMERIC), "0");
  EXPECT_EQ(CallText(pb::TRUNC, {N("12.345"), I4(1)}, pb::NUMERIC), "12.3");
  EXPECT_EQ(CallText(pb::ROUND, {N("12.345"), I4(-1)}, pb::NUMERIC), "10");
  EXPECT_EQ(CallText(pb::CEIL, {N("1.2")}, pb::NUMERIC), "2");
  EXPECT_EQ(CallText(pb::FLOOR, {N("-1.2")}, pb::NUMERIC), "-2");
  // Scales beyond what a numeric keeps are clamped, never UB: round(1.5, 2^31 - 1) would need more
  // than 38 digits (PostgreSQL prints 2000 zeros), round(12345, -2^31) rounds every digit away.
  EXPECT_EQ(CallError(pb::ROUND, {N("1.5"), I4(INT32_MAX)}), "value overflows numeric format");
  EXPECT_EQ(CallText(pb::ROUND, {N("12345"), I4(INT32_MIN)}, pb::NUMERIC), "0");
}

TEST(FuncEvalTest, FloatPowerAndSqrt) {
  // select power(2::float8, 3::float8), sqrt(2::float8) → 8, 1.4142135623730951
  EXPECT_EQ(CallText(pb::POWER, {F8(2), F8(3)}, pb::FLOAT64), "8");
  EXPECT_EQ(CallText(pb::SQRT, {F8(2)}, pb::FLOAT64), "1.4142135623730951");
  // select power(0::float8, -1::float8); power(-2::float8, 0.5::float8);
  //   power(10::float8, 400::float8); power(10::float8, -400::float8); sqrt(-1::float8)
  EXPECT_EQ(CallError(pb::POWER, {F8(0), F8(-1)}), "zero raised to a negative power is undefined");
  EXPECT_EQ(CallError(pb::POWER, {F8(-2), F8(0.5)}),
            "a negative number raised to a non-integer power yields a complex result");
  EXPECT_EQ(CallError(pb::POWER, {F8(10), F8(400)}), "value out of range: overflow");
  EXPECT_EQ(CallError(pb::POWER, {F8(10), F8(-400)}), "value out of range: underflow");
  EXPECT_EQ(CallError(pb::SQRT, {F8(-1)}), "cannot take square root of a negative number");
  // select power(0.5::float8, 'inf'), power('inf'::float8, -1), power('-inf'::float8, 3),
  //   power('-inf'::float8, 2), power(2::float8, '-inf'), power('nan'::float8, 0),
  //   power(1::float8, 'nan'), power(2::float8, 'nan'), power(-1::float8, 'inf'),
  //   sqrt('-0'::float8), sqrt('nan'::float8)
  //   → 0, 0, -Infinity, Infinity, 0, 1, 1, NaN, 1, -0, NaN
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  EXPECT_EQ(CallText(pb::POWER, {F8(0.5), F8(inf)}, pb::FLOAT64), "0");
  EXPECT_EQ(CallText(pb::POWER, {F8(inf), F8(-1)}, pb::FLOAT64), "0");
  EXPECT_EQ(CallText(pb::POWER, {F8(-inf), F8(3)}, pb::FLOAT64), "-Infinity");
  EXPECT_EQ(CallText(pb::POWER, {F8(-inf), F8(2)}, pb::FLOAT64), "Infinity");
  EXPECT_EQ(CallText(pb::POWER, {F8(2), F8(-inf)}, pb::FLOAT64), "0");
  EXPECT_EQ(CallText(pb::POWER, {F8(nan), F8(0)}, pb::FLOAT64), "1");
  EXPECT_EQ(CallText(pb::POWER, {F8(1), F8(nan)}, pb::FLOAT64), "1");
  EXPECT_EQ(CallText(pb::POWER, {F8(2), F8(nan)}, pb::FLOAT64), "NaN");
  EXPECT_EQ(CallText(pb::POWER, {F8(-1), F8(inf)}, pb::FLOAT64), "1");
  EXPECT_EQ(CallText(pb::SQRT, {F8(-0.0)}, pb::FLOAT64), "-0");
  EXPECT_EQ(CallText(pb::SQRT, {F8(nan)}, pb::FLOAT64), "NaN");
  // select power('-inf'::float8, 0.5::float8) → the complex-result error
  EXPECT_EQ(CallError(pb::POWER, {F8(-inf), F8(0.5)}),
            "a negative number raised to a non-integer power yields a complex result");
}

TEST(FuncEvalTest, NumericPowerAndSqrtHavePostgresScales) {
  // select power(2::numeric, 3::numeric), power(2.5, 2), power(2::numeric, -2),
  //   power(2::numeric, 0.0) → 8.0000000000000000, 6.2500000000000000, 0.2500000000000000,
  //   1.0000000000000000
  EXPECT_EQ(CallText(pb::POWER, {N("2"), N("3")}, pb::NUMERIC), "8.0000000000000000");
  EXPECT_EQ(CallText(pb::POWER, {N("2.5"), N("2")}, pb::NUMERIC), "6.2500000000000000");
  EXPECT_EQ(CallText(pb::POWER, {N("2"), N("-2")}, pb::NUMERIC), "0.2500000000000000");
  EXPECT_EQ(CallText(pb::POWER, {N("2"), N("0.0")}, pb::NUMERIC), "1.0000000000000000");
  // Non-integer exponents (power_var's logarithm path):
  // select power(100::numeric, 1.5), power(1.5::numeric, 0.5), power(2.5::numeric, 10.5),
  //   power(1.0000001::numeric, 12345.678), power(2::numeric, 0.5), power(10::numeric, 1.5),
  //   power(1.000001, 1000000), power(0::numeric, 2.5)
  //   → 1000.0000000000000, 1.2247448713915890, 15078.914929239175, 1.0012353301307312,
  //     1.4142135623730950, 31.622776601683793, 2.7182804693193769, 0.0000000000000000
  EXPECT_EQ(CallText(pb::POWER, {N("100"), N("1.5")}, pb::NUMERIC), "1000.0000000000000");
  EXPECT_EQ(CallText(pb::POWER, {N("1.5"), N("0.5")}, pb::NUMERIC), "1.2247448713915890");
  EXPECT_EQ(CallText(pb::POWER, {N("2.5"), N("10.5")}, pb::NUMERIC), "15078.914929239175");
  EXPECT_EQ(CallText(pb::POWER, {N("1.0000001"), N("12345.678")}, pb::NUMERIC),
            "1.0012353301307312");
  EXPECT_EQ(CallText(pb::POWER, {N("2"), N("0.5")}, pb::NUMERIC), "1.4142135623730950");
  EXPECT_EQ(CallText(pb::POWER, {N("10"), N("1.5")}, pb::NUMERIC), "31.622776601683793");
  EXPECT_EQ(CallText(pb::POWER, {N("1.000001"), N("1000000")}, pb::NUMERIC), "2.7182804693193769");
  EXPECT_EQ(CallText(pb::POWER, {N("0"), N("2.5")}, pb::NUMERIC), "0.0000000000000000");
  // select power(-0.5::numeric, 2147483649) → 0 (a negative base, an odd integer beyond int4)
  EXPECT_EQ(NumericSign(std::get<Numeric>(CallOk(pb::POWER, {N("-0.5"), N("2147483649")}))), 0);
  // select power(0::numeric, -1::numeric); power(-2::numeric, 0.5);
  //   power(2::numeric, 2147483648) → errors
  EXPECT_EQ(CallError(pb::POWER, {N("0"), N("-1")}),
            "zero raised to a negative power is undefined");
  EXPECT_EQ(CallError(pb::POWER, {N("0"), N("-1.5")}),
            "zero raised to a negative power is undefined");
  EXPECT_EQ(CallError(pb::POWER, {N("-2"), N("0.5")}),
            "a negative number raised to a non-integer power yields a complex result");
  EXPECT_EQ(CallError(pb::POWER, {N("2"), N("2147483648")}), "value overflows numeric format");
  EXPECT_EQ(CallError(pb::POWER, {N("10"), N("40.5")}), "value overflows numeric format");
  // select sqrt(2::numeric), sqrt(4::numeric), sqrt(1.21), sqrt(0::numeric), sqrt(0.0001),
  //   sqrt(12345678901234567890::numeric) → 1.414213562373095, 2.000000000000000,
  //   1.100000000000000, 0.000000000000000, 0.01000000000000000, 3513641828.8201443
  EXPECT_EQ(CallText(pb::SQRT, {N("2")}, pb::NUMERIC), "1.414213562373095");
  EXPECT_EQ(CallText(pb::SQRT, {N("4")}, pb::NUMERIC), "2.000000000000000");
  EXPECT_EQ(CallText(pb::SQRT, {N("1.21")}, pb::NUMERIC), "1.100000000000000");
  EXPECT_EQ(CallText(pb::SQRT, {N("0")}, pb::NUMERIC), "0.000000000000000");
  EXPECT_EQ(CallText(pb::SQRT, {N("0.0001")}, pb::NUMERIC), "0.01000000000000000");
  EXPECT_EQ(CallText(pb::SQRT, {N("12345678901234567890")}, pb::NUMERIC), "3513641828.8201443");
  // select sqrt(-1::numeric)
  EXPECT_EQ(CallError(pb::SQRT, {N("-1")}), "cannot take square root of a negative number");
}

TEST(FuncEvalTest, DateTruncExtractAndDatePart) {
  // select date_trunc('hour', '2026-12-06 12:34:56.789'::timestamp),
  //   date_trunc('month', '2026-12-06 12:34:56+00'::timestamptz),
  //   date_trunc('day', '1 day 25:30:00'::interval)
  //   → 2026-12-06 12:00:00, 2026-12-01 00:00:00+00, 1 day
  EXPECT_EQ(CallText(pb::DATE_TRUNC, {T("hour"), Typed("2026-12-06 12:34:56.789", pb::TIMESTAMP)},
                     pb::TIMESTAMP),
            "2026-12-06 12:00:00");
  EXPECT_EQ(CallText(pb::DATE_TRUNC, {T("month"), Typed("2026-12-06 12:34:56+00", pb::TIMESTAMPTZ)},
                     pb::TIMESTAMPTZ),
            "2026-12-01 00:00:00+00");
  EXPECT_EQ(
      CallText(pb::DATE_TRUNC, {T("day"), Typed("1 day 25:30:00", pb::INTERVAL)}, pb::INTERVAL),
      "1 day");
  // select date_trunc('xx', '2020-01-02'::timestamptz); ... ::timestamp
  EXPECT_EQ(CallError(pb::DATE_TRUNC, {T("xx"), Typed("2020-01-02", pb::TIMESTAMPTZ)}),
            "unit \"xx\" not recognized for type timestamp with time zone");
  EXPECT_EQ(CallError(pb::DATE_TRUNC, {T("xx"), Typed("2020-01-02", pb::TIMESTAMP)}),
            "unit \"xx\" not recognized for type timestamp without time zone");
  // select extract(epoch from '1 day 02:00:00'::interval), extract(dow from '2026-12-06'::date),
  //   extract(second from '2020-01-01 12:00:01.5'::timestamp), extract(timezone from now())
  //   → 93600.000000, 0, 1.500000, 0
  EXPECT_EQ(CallText(pb::EXTRACT, {T("epoch"), Typed("1 day 02:00:00", pb::INTERVAL)}, pb::NUMERIC),
            "93600.000000");
  EXPECT_EQ(CallText(pb::EXTRACT, {T("dow"), Typed("2026-12-06", pb::DATE)}, pb::NUMERIC), "0");
  EXPECT_EQ(CallText(pb::EXTRACT, {T("second"), Typed("2020-01-01 12:00:01.5", pb::TIMESTAMP)},
                     pb::NUMERIC),
            "1.500000");
  EXPECT_EQ(CallText(pb::EXTRACT, {T("timezone"), Typed("2020-01-01 12:00:00", pb::TIMESTAMPTZ)},
                     pb::NUMERIC),
            "0");
  // select extract(hour from '2020-01-02'::date); extract(xx from '2020-01-02'::timestamptz)
  EXPECT_EQ(CallError(pb::EXTRACT, {T("hour"), Typed("2020-01-02", pb::DATE)}),
            "unit \"hour\" not supported for type date");
  EXPECT_EQ(CallError(pb::EXTRACT, {T("xx"), Typed("2020-01-02", pb::TIMESTAMPTZ)}),
            "unit \"xx\" not recognized for type timestamp with time zone");
  // select date_part('hour', '2020-01-02'::date), date_part('minute', '12:34:56'::time),
  //   date_part('doy', '2026-12-06'::date),
  //   date_part('epoch', '2020-01-01 12:00:01.5'::timestamptz) → 0, 34, 340, 1577880001.5
  EXPECT_EQ(CallOk(pb::DATE_PART, {T("hour"), Typed("2020-01-02", pb::DATE)}), Datum(0.0));
  EXPECT_EQ(CallOk(pb::DATE_PART, {T("minute"), Typed("12:34:56", pb::TIME)}), Datum(34.0));
  EXPECT_EQ(CallOk(pb::DATE_PART, {T("doy"), Typed("2026-12-06", pb::DATE)}), Datum(340.0));
  EXPECT_EQ(CallOk(pb::DATE_PART, {T("epoch"), Typed("2020-01-01 12:00:01.5", pb::TIMESTAMPTZ)}),
            Datum(1577880001.5));
  // date_part's float8 is computed as PostgreSQL does, not as the nearest double of extract's:
  // select date_part('epoch', '7688-05-18 07:12:45.493107'::timestamp),
  //   date_part('epoch', '2251-05-16 21:20:18.035689'::timestamptz),
  //   date_part('epoch', interval '1 year 2 mons 3 days 04:05:06.789'),
  //   date_part('MilliSeconDsXYZ', '2020-01-01 00:00:01.5'::timestamp),
  //   date_part('secs', '2020-01-01 00:00:01.5'::timestamp),
  //   date_part('second', interval '-1 day -00:00:01.25'),
  //   date_part('milliseconds', time '12:00:01.2345')
  //   → 180454633965.49313, 8879232018.035688, 37015506.789000005, 1500, 1.5, -1.25, 1234.5
  auto part = [](const char* field, std::string_view value, pb::ScalarType type) {
    return CallText(pb::DATE_PART, {T(field), Typed(value, type)}, pb::FLOAT64);
  };
  EXPECT_EQ(part("epoch", "7688-05-18 07:12:45.493107", pb::TIMESTAMP), "180454633965.49313");
  EXPECT_EQ(part("epoch", "2251-05-16 21:20:18.035689", pb::TIMESTAMPTZ), "8879232018.035688");
  EXPECT_EQ(part("epoch", "1 year 2 mons 3 days 04:05:06.789", pb::INTERVAL), "37015506.789000005");
  EXPECT_EQ(part("MilliSeconDsXYZ", "2020-01-01 00:00:01.5", pb::TIMESTAMP), "1500");
  EXPECT_EQ(part("secs", "2020-01-01 00:00:01.5", pb::TIMESTAMP), "1.5");
  EXPECT_EQ(part("second", "-1 day -00:00:01.25", pb::INTERVAL), "-1.25");
  EXPECT_EQ(part("milliseconds", "12:00:01.2345", pb::TIME), "1234.5");
  // select date_part('day', '5874897-12-31'::date) → ERROR: date out of range for timestamp
  EXPECT_EQ(CallError(pb::DATE_PART, {T("day"), Typed("5874897-12-31", pb::DATE)}),
            "date out of range for timestamp");
}

}  // namespace
}  // namespace tandem::workers
