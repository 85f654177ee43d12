// The reference evaluator's value semantics of the types of DESIGN §16 (int2, int4, float4,
// numeric, date, time, timestamp, timestamptz, interval, bytea, uuid, varchar(n), char(n)): its
// operators, casts, functions and aggregates, written from PostgreSQL 15's documentation and the
// rules its source comments state, never from the runtime's base/numeric.cc, base/datetime*.cc or
// workers/. Independent by construction:
//   * numerics are exact GMP rationals (mpq_class) until a result is rounded to its scale, half
//     away from zero; a result whose coefficient needs more than 38 digits is "value overflows
//     numeric format". Result scales: + - the larger scale, * the sum of the scales, / and avg
//     PostgreSQL's select_div_scale (16 significant digits counted in base-10000 weights, at
//     least either scale); every scale is capped at 38 (the largest a Numeric holds).
//   * dates go through std::chrono's civil calendar (year_month_day, sys_days), shifted by whole
//     400-year cycles where a year is beyond chrono's ±32767; timestamps are a day count and the
//     microseconds of the day.
//   * intervals keep months, days and microseconds apart; they compare by their span with 30-day
//     months and 24-hour days.
// Every value error is a Value::Error with PostgreSQL's words; int64 arithmetic keeps the words
// of reference.h ("integer overflow"). Types are ipc/tandem.proto's Columns; a column of type
// SCALAR_TYPE_UNSPECIFIED is one whose type is unknown (a null of an untyped row): its values
// are null.
#pragma once

#include <gmpxx.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/reference.h"

namespace tandem::reference {

pb::Column ColumnOfType(pb::ScalarType type);
// The type a datum of this kind has when nothing else says (int64 → INT64, double → FLOAT64).
pb::ScalarType TypeOfDatum(const Datum& d);

// The type of `expr` over `row` whose columns have `types` (a column beyond `types` is typed by
// its datum): ipc/plan_typing.h's rules, derived here.
pb::Column TypeOf(const pb::ScalarExpr& expr, const Row& row, const Types& types);
// The output column of an aggregate over a column of `input`.
pb::Column AggregateType(pb::AggregateFunc func, const pb::Column& input);

// ---- exact numerics

mpq_class NumericToRational(const Numeric& n);
// `v` rounded half away from zero to `scale` (capped at 38); more than 38 digits: an error.
Value NumericOfRational(const mpq_class& v, int scale);
// PostgreSQL's select_div_scale for a / b.
int DivScale(const mpq_class& a, int a_scale, const mpq_class& b, int b_scale);
std::string NumericOutput(const Numeric& n);
Value NumericInput(std::string_view text);

// ---- intervals and calendar

Int128 IntervalSpanMicros(const Interval& i);
Value IntervalMulFloat(const Interval& i, double factor);
Value IntervalDivFloat(const Interval& i, double divisor);

// ---- operators

// SQL value order: numerics and intervals by value, every other kind in its datum order.
// REQUIRES: a and b of one kind, not null.
int CompareValues(const Datum& a, const Datum& b);
// NEGATE of a non-null value of `type`.
Value NegateValue(const Datum& v, pb::ScalarType type);
// ADD SUB MUL DIV MOD of two non-null values of these types (the typing of plan_typing.h).
Value Arithmetic(pb::BinaryFunc func, const Datum& l, pb::ScalarType lt, const Datum& r,
                 pb::ScalarType rt);

// ---- casts and text

// PostgreSQL's output function of a non-null value of `type` (float4 as a real prints).
std::string OutputText(const Datum& v, const pb::Column& type);
// PostgreSQL's input function of `to`'s type, then its typmod.
Value InputText(std::string_view text, const pb::Column& to);
// Cast.to on a non-null value of `from`.
Value CastValue(const Datum& v, const pb::Column& from, const pb::Column& to);

// ---- functions (reference_funcs.cc)

// CallFunc: `arg(i)` evaluates argument i (only when needed: COALESCE stops at its first
// non-null argument), `arg_type(i)` is its type.
Value CallFunction(const pb::CallFunc& call, const std::function<Value(int)>& arg,
                   const std::function<pb::Column(int)>& arg_type);

// ---- aggregates of the new types over a group's distinct non-null values and their total
// counts (counts <= 0 are skipped by MIN/MAX only, as in reference.cc)

// SUM of NUMERIC, INTERVAL or FLOAT32 values; null when `per_value` is empty.
Value SumOfTyped(const Multiset& per_value, pb::ScalarType type);
// AVG of NUMERIC or INTERVAL values; REQUIRES: total count > 0.
Value AvgOfTyped(const Multiset& per_value, pb::ScalarType type, Count total);

}  // namespace tandem::reference
