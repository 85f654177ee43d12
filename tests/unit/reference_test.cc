// The reference evaluator (tests/reference/) on small cases computed by hand.
#include "reference/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "base/datum_text.h"
#include "ipc/validate.h"
#include "reference/reference_values.h"
#include "unit/protocol_samples.h"

namespace tandem::reference {
namespace {

using namespace ipc::samples;  // NOLINT(google-build-using-namespace): builders read as a DSL

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

pb::ScalarExpr NullLit(pb::ScalarType type) { return Lit(NullDatum(), type); }
pb::ScalarExpr BoolLit(bool b) { return Lit(BoolDatum(b), pb::BOOL); }
pb::ScalarExpr StrLit(std::string s) { return Lit(StringDatum(std::move(s)), pb::STRING); }
pb::ScalarExpr FloatLit(double f) { return Lit(FloatDatum(f), pb::FLOAT64); }
// An expression that is an error on every row.
pb::ScalarExpr ErrorExpr() { return Binary(pb::DIV, IntLit(1), IntLit(0)); }

Datum EvalConst(const pb::ScalarExpr& e) {
  const Value v = Eval(e, Row{});
  EXPECT_FALSE(v.is_error()) << *v.error;
  return v.datum;
}
std::string EvalError(const pb::ScalarExpr& e, const Row& row = {}) {
  const Value v = Eval(e, row);
  EXPECT_TRUE(v.is_error()) << "got " << DatumText(v.datum);
  return v.error.value_or("");
}

// A datum for three-valued logic tables: 0 false, 1 true, 2 null, 3 error.
pb::ScalarExpr Tv(int v) {
  switch (v) {
    case 0:
      return BoolLit(false);
    case 1:
      return BoolLit(true);
    case 2:
      return NullLit(pb::BOOL);
    default:
      return Binary(pb::EQ, ErrorExpr(), IntLit(1));
  }
}

// Results of a three-valued table as a string over the same encoding ("E" for an error).
std::string TvResult(const pb::ScalarExpr& e) {
  const Value v = Eval(e, Row{});
  if (v.is_error()) return "E";
  if (std::holds_alternative<Null>(v.datum)) return "N";
  return std::get<bool>(v.datum) ? "T" : "F";
}

// ---- scalar expressions ---------------------------------------------------------------------

// The reference's own datum order (datum_order.h) against pairs whose order is written here by
// hand from the documented order — and the runtime's (base/row.h) and the row encoding's agree
// with it on every pair, so neither can drift without a differential suite seeing it.
TEST(ReferenceOrder, DatumsOrderByTypeThenValueWithNaNHighestAndSignedZerosEqual) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Datum null = Null{};
  auto s = [](std::string v) { return Datum{std::move(v)}; };
  auto i = [](std::int64_t v) { return Datum{v}; };
  auto f = [](double v) { return Datum{v}; };
  // (a, b, sign of a vs b)
  const std::vector<std::tuple<Datum, Datum, int>> pairs = {
      {null, null, 0},
      {null, Datum{false}, -1},
      {Datum{false}, Datum{true}, -1},
      {Datum{true}, i(INT64_MIN), -1},
      {i(INT64_MAX), f(-inf), -1},
      {i(-1), i(0), -1},
      {i(INT64_MIN), i(INT64_MAX), -1},
      {f(-0.0), f(0.0), 0},
      {f(-1.5), f(-0.0), -1},
      {f(inf), f(nan), -1},
      {f(nan), f(-nan), 0},
      {f(nan), s(""), -1},
      {s(""), s(std::string(1, '\0')), -1},
      {s("a"), s("ab"), -1},
      {s("b"), s("ab"), 1},
      {s("\x7f"), s("\x80"), -1},  // bytes are unsigned
      {s("z"), s("\xc3\xa9"), -1},
  };
  auto sign = [](int c) { return c < 0 ? -1 : (c > 0 ? 1 : 0); };
  for (const auto& [a, b, want] : pairs) {
    SCOPED_TRACE(DatumText(a) + " vs " + DatumText(b));
    EXPECT_EQ(sign(reference::OrderDatums(a, b)), want);
    EXPECT_EQ(sign(reference::OrderDatums(b, a)), -want);
    EXPECT_EQ(sign(CompareDatum(a, b)), want) << "the runtime's order";
    const std::string ea = EncodeRow({a}), eb = EncodeRow({b});
    EXPECT_EQ(sign(ea.compare(eb)), want) << "the encoding's order";
  }
  EXPECT_LT(reference::OrderRows({i(1)}, {i(1), null}), 0) << "a proper prefix first";
  EXPECT_EQ(reference::OrderRows({f(0.0), s("x")}, {f(-0.0), s("x")}), 0);
}

TEST(ReferenceScalar, AndOrNotAreThreeValued) {
  // Rows: left in {F, T, N, E}; columns: right in {F, T, N, E}.
  std::string and_table, or_table;
  for (int l = 0; l < 4; ++l) {
    for (int r = 0; r < 4; ++r) {
      and_table += TvResult(Binary(pb::AND, Tv(l), Tv(r)));
      or_table += TvResult(Binary(pb::OR, Tv(l), Tv(r)));
    }
    and_table += "|";
    or_table += "|";
  }
  EXPECT_EQ(and_table, "FFFF|FTNE|FNNE|FEEE|");
  EXPECT_EQ(or_table, "FTNE|TTTT|NTNE|ETEE|");
  EXPECT_EQ(TvResult(Unary(pb::NOT, Tv(0))), "T");
  EXPECT_EQ(TvResult(Unary(pb::NOT, Tv(1))), "F");
  EXPECT_EQ(TvResult(Unary(pb::NOT, Tv(2))), "N");
  EXPECT_EQ(TvResult(Unary(pb::NOT, Tv(3))), "E");
}

TEST(ReferenceScalar, IsNullNeverReturnsNull) {
  EXPECT_EQ(EvalConst(Unary(pb::IS_NULL, NullLit(pb::INT64))), Datum(true));
  EXPECT_EQ(EvalConst(Unary(pb::IS_NULL, IntLit(0))), Datum(false));
  EXPECT_EQ(EvalConst(Unary(pb::IS_NOT_NULL, NullLit(pb::STRING))), Datum(false));
  EXPECT_EQ(EvalConst(Unary(pb::IS_NOT_NULL, StrLit(""))), Datum(true));
  EXPECT_EQ(EvalError(Unary(pb::IS_NULL, ErrorExpr())), "division by zero");
}

TEST(ReferenceScalar, NullPropagatesThroughArithmeticAndComparisons) {
  for (auto f : {pb::ADD, pb::SUB, pb::MUL, pb::DIV, pb::MOD, pb::EQ, pb::NE, pb::LT, pb::LE,
                 pb::GT, pb::GE}) {
    EXPECT_EQ(EvalConst(Binary(f, NullLit(pb::INT64), IntLit(3))), Datum(Null{}))
        << pb::BinaryFunc_Name(f);
    EXPECT_EQ(EvalConst(Binary(f, IntLit(3), NullLit(pb::INT64))), Datum(Null{}))
        << pb::BinaryFunc_Name(f);
  }
  // Even division by a null zero is null, not an error.
  EXPECT_EQ(EvalConst(Binary(pb::DIV, NullLit(pb::INT64), IntLit(0))), Datum(Null{}));
  EXPECT_EQ(EvalConst(Unary(pb::NEGATE, NullLit(pb::INT64))), Datum(Null{}));
  EXPECT_EQ(EvalConst(Binary(pb::EQ, NullLit(pb::STRING), NullLit(pb::STRING))), Datum(Null{}));
}

TEST(ReferenceScalar, IntegerArithmetic) {
  EXPECT_EQ(EvalConst(Binary(pb::ADD, IntLit(2), IntLit(3))), Datum(std::int64_t{5}));
  EXPECT_EQ(EvalConst(Binary(pb::SUB, IntLit(2), IntLit(3))), Datum(std::int64_t{-1}));
  EXPECT_EQ(EvalConst(Binary(pb::MUL, IntLit(-4), IntLit(3))), Datum(std::int64_t{-12}));
  EXPECT_EQ(EvalConst(Binary(pb::DIV, IntLit(-7), IntLit(2))), Datum(std::int64_t{-3}));
  EXPECT_EQ(EvalConst(Binary(pb::MOD, IntLit(-7), IntLit(2))), Datum(std::int64_t{-1}));
  EXPECT_EQ(EvalConst(Binary(pb::MOD, IntLit(kMin), IntLit(-1))), Datum(std::int64_t{0}));
  EXPECT_EQ(EvalConst(Unary(pb::NEGATE, IntLit(5))), Datum(std::int64_t{-5}));
  EXPECT_EQ(EvalError(Binary(pb::ADD, IntLit(kMax), IntLit(1))), "integer overflow");
  EXPECT_EQ(EvalError(Binary(pb::SUB, IntLit(kMin), IntLit(1))), "integer overflow");
  EXPECT_EQ(EvalError(Binary(pb::MUL, IntLit(kMax / 2 + 1), IntLit(2))), "integer overflow");
  EXPECT_EQ(EvalError(Binary(pb::DIV, IntLit(kMin), IntLit(-1))), "integer overflow");
  EXPECT_EQ(EvalError(Unary(pb::NEGATE, IntLit(kMin))), "integer overflow");
  EXPECT_EQ(EvalError(Binary(pb::DIV, IntLit(1), IntLit(0))), "division by zero");
  EXPECT_EQ(EvalError(Binary(pb::MOD, IntLit(1), IntLit(0))), "division by zero");
  // An error on either side wins over null on the other.
  EXPECT_EQ(EvalError(Binary(pb::ADD, NullLit(pb::INT64), ErrorExpr())), "division by zero");
}

TEST(ReferenceScalar, FloatArithmetic) {
  EXPECT_EQ(EvalConst(Binary(pb::ADD, FloatLit(0.5), FloatLit(0.25))), Datum(0.75));
  EXPECT_EQ(EvalConst(Binary(pb::DIV, FloatLit(1), FloatLit(4))), Datum(0.25));
  EXPECT_EQ(EvalConst(Binary(pb::MOD, FloatLit(7.5), FloatLit(2))), Datum(1.5));
  EXPECT_EQ(EvalConst(Unary(pb::NEGATE, FloatLit(0.5))), Datum(-0.5));
  EXPECT_EQ(EvalError(Binary(pb::DIV, FloatLit(1), FloatLit(-0.0))), "division by zero");
  EXPECT_EQ(EvalError(Binary(pb::MOD, FloatLit(1), FloatLit(0))), "division by zero");
  const Datum big = EvalConst(Binary(pb::MUL, FloatLit(1e300), FloatLit(1e300)));
  EXPECT_TRUE(std::isinf(std::get<double>(big))) << "float overflow is IEEE, not an error";
}

TEST(ReferenceScalar, ComparisonsUseTheDatumOrder) {
  EXPECT_EQ(EvalConst(Binary(pb::LT, StrLit("a"), StrLit("b"))), Datum(true));
  EXPECT_EQ(EvalConst(Binary(pb::LT, StrLit("b"), StrLit("ab"))), Datum(false));
  EXPECT_EQ(EvalConst(Binary(pb::LT, StrLit("a"), StrLit("\xff"))), Datum(true)) << "bytewise";
  EXPECT_EQ(EvalConst(Binary(pb::GE, IntLit(3), IntLit(3))), Datum(true));
  EXPECT_EQ(EvalConst(Binary(pb::NE, IntLit(3), IntLit(3))), Datum(false));
  EXPECT_EQ(EvalConst(Binary(pb::LT, BoolLit(false), BoolLit(true))), Datum(true));
  EXPECT_EQ(EvalConst(Binary(pb::EQ, FloatLit(-0.0), FloatLit(0.0))), Datum(true));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(EvalConst(Binary(pb::EQ, FloatLit(nan), FloatLit(nan))), Datum(true));
  EXPECT_EQ(EvalConst(Binary(pb::GT, FloatLit(nan), FloatLit(inf))), Datum(true));
}

TEST(ReferenceScalar, IfThenElseEvaluatesOnlyTheChosenBranch) {
  EXPECT_EQ(EvalConst(If(BoolLit(true), IntLit(1), ErrorExpr())), Datum(std::int64_t{1}));
  EXPECT_EQ(EvalConst(If(BoolLit(false), ErrorExpr(), IntLit(2))), Datum(std::int64_t{2}));
  EXPECT_EQ(EvalConst(If(NullLit(pb::BOOL), IntLit(1), IntLit(2))), Datum(std::int64_t{2}))
      << "a null condition picks the else branch";
  EXPECT_EQ(EvalError(If(BoolLit(true), ErrorExpr(), IntLit(2))), "division by zero");
  EXPECT_EQ(EvalError(If(Tv(3), IntLit(1), IntLit(2))), "division by zero");
}

TEST(ReferenceScalar, ColumnsReadTheRow) {
  const Row row = {std::int64_t{4}, Null{}, std::string("x")};
  EXPECT_EQ(Eval(Binary(pb::MUL, Col(0), Col(0)), row).datum, Datum(std::int64_t{16}));
  EXPECT_EQ(Eval(Unary(pb::IS_NULL, Col(1)), row).datum, Datum(true));
  EXPECT_EQ(Eval(Binary(pb::EQ, Col(2), StrLit("x")), row).datum, Datum(true));
}

// ---- map/filter/project ---------------------------------------------------------------------

TEST(ReferenceMfp, MapsSeeEarlierMapsThenFilterThenProject) {
  // (a, b) -> maps: a + 1 (col 2), col2 * b (col 3); keep col3 > 5; output (col3, a).
  const auto mfp = Mfp({Binary(pb::ADD, Col(0), IntLit(1)), Binary(pb::MUL, Col(2), Col(1))},
                       {Binary(pb::GT, Col(3), IntLit(5))}, {3, 0});
  const MfpResult kept = ApplyMfp(mfp, {std::int64_t{2}, std::int64_t{3}});
  ASSERT_EQ(kept.kind, MfpResult::Kind::kRow);
  EXPECT_EQ(kept.row, (Row{std::int64_t{9}, std::int64_t{2}}));
  EXPECT_EQ(ApplyMfp(mfp, {std::int64_t{1}, std::int64_t{2}}).kind, MfpResult::Kind::kDropped);
  EXPECT_EQ(ApplyMfp(mfp, {std::int64_t{1}, Null{}}).kind, MfpResult::Kind::kDropped)
      << "a null predicate drops the row";
}

TEST(ReferenceMfp, EmptyMfpIsTheIdentityAndEmptyProjectionKeepsMaps) {
  const Row row = {std::int64_t{1}, std::string("a")};
  const MfpResult id = ApplyMfp(pb::MapFilterProject(), row);
  ASSERT_EQ(id.kind, MfpResult::Kind::kRow);
  EXPECT_EQ(id.row, row);
  const MfpResult mapped = ApplyMfp(Mfp({Unary(pb::IS_NULL, Col(1))}, {}, {}), row);
  EXPECT_EQ(mapped.row, (Row{std::int64_t{1}, std::string("a"), false}));
}

TEST(ReferenceMfp, ErrorsInMapsAndPredicates) {
  const Row row = {std::int64_t{0}};
  // A map error is an error even if a later predicate is false.
  const MfpResult map_error =
      ApplyMfp(Mfp({Binary(pb::DIV, IntLit(1), Col(0))}, {BoolLit(false)}, {}), row);
  EXPECT_EQ(map_error.kind, MfpResult::Kind::kError);
  EXPECT_EQ(map_error.error, "division by zero");
  // Predicates in order: an error before a false one is an error, after it the row is dropped.
  const auto bad = Binary(pb::EQ, Binary(pb::DIV, IntLit(1), Col(0)), IntLit(1));
  EXPECT_EQ(ApplyMfp(Mfp({}, {bad, BoolLit(false)}, {}), row).kind, MfpResult::Kind::kError);
  EXPECT_EQ(ApplyMfp(Mfp({}, {BoolLit(false), bad}, {}), row).kind, MfpResult::Kind::kDropped);
}

// ---- whole collections ----------------------------------------------------------------------

Row R(std::int64_t a, std::int64_t b) { return {a, b}; }
Row RN(std::int64_t a) { return {a, Null{}}; }

Contents Make(std::vector<std::pair<Row, std::int64_t>> rows) {
  Contents c;
  for (auto& [row, count] : rows) AddTo(c.rows, row, count);
  return c;
}

TEST(ReferenceOperators, ReduceCountSumMinMax) {
  // Group 1: (1,5)x2, (1,null)x1, (1,-3)x1; group 2: (2,null)x3; group 3: (3,7)x1, (3,8)x-1.
  const Contents input =
      Make({{R(1, 5), 2}, {RN(1), 1}, {R(1, -3), 1}, {RN(2), 3}, {R(3, 7), 1}, {R(3, 8), -1}});
  const auto reduce =
      ReducePlan(GetPlan("x"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}, {pb::MIN, 1}, {pb::MAX, 1}})
          .reduce();
  const Contents out = ReduceOf(input, reduce);
  EXPECT_FALSE(out.HasError());
  Multiset expected;
  AddTo(expected,
        {std::int64_t{1}, std::int64_t{4}, std::int64_t{7}, std::int64_t{-3}, std::int64_t{5}}, 1);
  AddTo(expected, {std::int64_t{2}, std::int64_t{3}, Null{}, Null{}, Null{}}, 1);
  // Group 3 has total multiplicity 0: no row.
  EXPECT_EQ(ToString(out.rows), ToString(expected));
}

TEST(ReferenceOperators, ReduceWithoutGroupKeyAndOverflow) {
  const auto count_sum = ReducePlan(GetPlan("x"), {}, {{pb::COUNT, 0}, {pb::SUM, 0}}).reduce();
  EXPECT_TRUE(ReduceOf(Contents{}, count_sum).rows.empty()) << "no group, no row";
  const Contents out = ReduceOf(Make({{R(1, 0), 2}, {R(2, 0), 1}}), count_sum);
  EXPECT_EQ(ToString(out.rows), "{(3, 4) x1}");
  const Contents overflow = ReduceOf(Make({{R(kMax, 0), 2}}), count_sum);
  EXPECT_TRUE(overflow.HasError());
  EXPECT_EQ(overflow.FirstError(), "integer overflow");
}

TEST(ReferenceOperators, MinMaxOfStringsIgnoreNonPositiveValues) {
  Contents input;
  AddTo(input.rows, {std::string("b")}, 1);
  AddTo(input.rows, {std::string("a")}, -1);
  AddTo(input.rows, {std::string("c")}, 2);
  AddTo(input.rows, {Datum(Null{})}, 5);
  const auto reduce = ReducePlan(GetPlan("x"), {}, {{pb::MIN, 0}, {pb::MAX, 0}}).reduce();
  EXPECT_EQ(ToString(ReduceOf(input, reduce).rows), "{(\"b\", \"c\") x1}");
}

TEST(ReferenceOperators, UnionDistinctAndErrorsFlowDownstream) {
  Contents a = Make({{R(1, 1), 2}, {R(2, 2), 1}});
  Contents b = Make({{R(1, 1), 1}, {R(2, 2), -1}});
  AddTo(b.errors, "boom", 1);
  const Contents u = UnionOf({a, b});
  EXPECT_EQ(ToString(u.rows), "{(1, 1) x3}");
  EXPECT_EQ(u.FirstError(), "boom");
  const Contents d = DistinctOf(Make({{R(1, 1), 3}, {R(2, 2), -2}, {R(3, 3), 1}}));
  EXPECT_EQ(ToString(d.rows), "{(1, 1) x1, (3, 3) x1}");
  const Contents m = MfpOf(u, Mfp({}, {Binary(pb::EQ, Col(0), IntLit(9))}, {}));
  EXPECT_TRUE(m.rows.empty());
  EXPECT_EQ(m.FirstError(), "boom") << "errors pass every operator";
}

// ---- joins ----------------------------------------------------------------------------------

pb::Plan::Join Join(std::vector<std::uint32_t> left_key, std::vector<std::uint32_t> right_key,
                    pb::JoinKind kind = pb::INNER) {
  return JoinPlan(GetPlan("l"), GetPlan("r"), std::move(left_key), std::move(right_key), kind)
      .join();
}

Datum I(std::int64_t v) { return v; }
Datum S(std::string v) { return v; }
const Datum kNull = Null{};

Multiset Expect(std::vector<std::pair<Row, Count>> rows) {
  Multiset m;
  for (auto& [row, count] : rows) AddTo(m, row, count);
  return m;
}

TEST(ReferenceJoin, InnerManyToManyMultipliesCounts) {
  const Contents left = Make({{R(1, 10), 2}, {R(1, 11), 1}, {R(2, 20), 1}});
  const Contents right = Make({{R(1, 100), 3}, {R(1, 101), -1}, {R(3, 300), 1}});
  const Contents out = JoinOf(left, right, Join({0}, {0}), 2);
  EXPECT_FALSE(out.HasError());
  EXPECT_EQ(ToString(out.rows), ToString(Expect({{{I(1), I(10), I(1), I(100)}, 6},
                                                 {{I(1), I(10), I(1), I(101)}, -2},
                                                 {{I(1), I(11), I(1), I(100)}, 3},
                                                 {{I(1), I(11), I(1), I(101)}, -1}})));
}

TEST(ReferenceJoin, NullKeysNeverMatch) {
  const Contents left = Make({{{kNull, I(1)}, 1}, {R(1, 2), 1}});
  const Contents right = Make({{{kNull, I(5)}, 1}, {R(1, 6), 1}});
  EXPECT_EQ(ToString(JoinOf(left, right, Join({0}, {0}), 2).rows),
            ToString(Expect({{{I(1), I(2), I(1), I(6)}, 1}})));
}

TEST(ReferenceJoin, LeftOuterPadsUnmatchedAndNullKeyLeftRowsWithNulls) {
  const Contents left = Make({{R(1, 10), 2},
                              {R(2, 20), 1},        // no right row at 2
                              {{kNull, I(30)}, 1},  // a null key matches nothing
                              {R(3, 40), -1},       // unmatched: padded with its own count
                              {R(5, 50), 1}});      // matched by a zero-sum pair at 5
  const Contents right = Make({{R(1, 100), 1},
                               {{kNull, I(999)}, 1},  // never matches the null-key left row
                               {R(4, 400), 1},        // matches no left row: not output
                               {R(5, 500), 1},
                               {R(5, 501), -1}});
  const Contents out = JoinOf(left, right, Join({0}, {0}, pb::LEFT_OUTER), 2);
  EXPECT_EQ(ToString(out.rows), ToString(Expect({{{I(1), I(10), I(1), I(100)}, 2},
                                                 {{I(2), I(20), kNull, kNull}, 1},
                                                 {{kNull, I(30), kNull, kNull}, 1},
                                                 {{I(3), I(40), kNull, kNull}, -1},
                                                 {{I(5), I(50), I(5), I(500)}, 1},
                                                 {{I(5), I(50), I(5), I(501)}, -1}})));
  // The inner join of the same inputs is exactly the matched part.
  EXPECT_EQ(ToString(JoinOf(left, right, Join({0}, {0}), 2).rows),
            ToString(Expect({{{I(1), I(10), I(1), I(100)}, 2},
                             {{I(5), I(50), I(5), I(500)}, 1},
                             {{I(5), I(50), I(5), I(501)}, -1}})));
}

TEST(ReferenceJoin, LeftOuterWithAnEmptyRightSideUsesTheGivenArity) {
  const Contents out = JoinOf(Make({{R(1, 10), 1}}), Contents{}, Join({0}, {1}, pb::LEFT_OUTER), 3);
  EXPECT_EQ(ToString(out.rows), ToString(Expect({{{I(1), I(10), kNull, kNull, kNull}, 1}})));
  EXPECT_TRUE(JoinOf(Make({{R(1, 10), 1}}), Contents{}, Join({0}, {1}), 3).rows.empty());
}

TEST(ReferenceJoin, SelfJoinSquaresCountsAndCountsErrorsOfBothSides) {
  Contents a = Make({{{I(1), S("a")}, 1}, {{I(1), S("b")}, 2}, {{I(2), S("c")}, 1}});
  AddTo(a.errors, "boom", 1);
  const Contents out = JoinOf(a, a, Join({0}, {0}), 2);
  EXPECT_EQ(ToString(out.rows), ToString(Expect({{{I(1), S("a"), I(1), S("a")}, 1},
                                                 {{I(1), S("a"), I(1), S("b")}, 2},
                                                 {{I(1), S("b"), I(1), S("a")}, 2},
                                                 {{I(1), S("b"), I(1), S("b")}, 4},
                                                 {{I(2), S("c"), I(2), S("c")}, 1}})));
  // Both inputs' error sets, summed: the one error arrives by each side.
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors.begin()->first, "boom");
  EXPECT_TRUE(out.errors.begin()->second == 2);
}

TEST(ReferenceJoin, MultiColumnKeysPairColumnsInOrder) {
  // left (a, b, tag) on [a, b]; right (b', a', tag) on [a', b'] = columns [1, 0].
  const Contents left = Make({{{I(1), I(2), S("l1")}, 1},
                              {{I(1), I(3), S("l2")}, 1},
                              {{I(2), I(1), S("l3")}, 1},
                              {{I(1), kNull, S("l4")}, 1}});
  const Contents right = Make({{{I(2), I(1), S("r1")}, 1},     // (a, b) = (1, 2)
                               {{I(1), I(2), S("r2")}, 1},     // (a, b) = (2, 1)
                               {{I(3), I(1), S("r3")}, 1},     // (a, b) = (1, 3)
                               {{kNull, I(1), S("r4")}, 1}});  // null b: never matches
  const Contents out = JoinOf(left, right, Join({0, 1}, {1, 0}), 3);
  EXPECT_EQ(ToString(out.rows),
            ToString(Expect({{{I(1), I(2), S("l1"), I(2), I(1), S("r1")}, 1},
                             {{I(1), I(3), S("l2"), I(3), I(1), S("r3")}, 1},
                             {{I(2), I(1), S("l3"), I(1), I(2), S("r2")}, 1}})));
}

// ---- top-k ----------------------------------------------------------------------------------

pb::Plan::TopK TopK(std::vector<std::uint32_t> group_key,
                    std::vector<std::tuple<std::uint32_t, bool, bool>> order,
                    std::optional<std::uint64_t> limit, std::uint64_t offset = 0) {
  pb::Plan::TopK k;
  *k.mutable_input() = GetPlan("x");
  for (auto c : group_key) k.add_group_key(c);
  for (auto [column, desc, nulls_last] : order) {
    auto* o = k.add_order_by();
    o->set_column(column);
    o->set_desc(desc);
    o->set_nulls_last(nulls_last);
  }
  if (limit) k.set_limit(*limit);
  k.set_offset(offset);
  return k;
}

Contents TopKInput() {
  // Group 1 by v asc, nulls first: null (unit 0), 3 (units 1-3), 5 (4-5), 9 (6); (1, 7) has a
  // negative count and takes no position. Group 2: 4 (0). Group 3: 1 (0-4).
  Contents c = Make({{RN(1), 1},
                     {R(1, 3), 3},
                     {R(1, 5), 2},
                     {R(1, 9), 1},
                     {R(1, 7), -2},
                     {R(2, 4), 1},
                     {R(3, 1), 5}});
  AddTo(c.errors, "boom", 1);
  return c;
}

TEST(ReferenceTopK, OffsetAndLimitCountMultiplicitiesAcrossTheWindowEdges) {
  // Units [2, 5) of each group: group 1 -> (1, 3) units 2, 3 and (1, 5) unit 4.
  const Contents out = TopKOf(TopKInput(), TopK({0}, {{1, false, false}}, 3, 2));
  EXPECT_EQ(ToString(out.rows), "{(1, 3) x2, (1, 5) x1, (3, 1) x3}");
  EXPECT_EQ(out.FirstError(), "boom") << "errors pass unchanged";
  EXPECT_EQ(ToString(TopKOf(TopKInput(), TopK({0}, {{1, false, false}}, 1, 3)).rows),
            "{(1, 3) x1, (3, 1) x1}");
}

TEST(ReferenceTopK, DescendingWithNullsLast) {
  // Group 1 by v desc, nulls last: 9 (0), 5 (1-2), 3 (3-5), null (6).
  EXPECT_EQ(ToString(TopKOf(TopKInput(), TopK({0}, {{1, true, true}}, 2)).rows),
            "{(1, 5) x1, (1, 9) x1, (2, 4) x1, (3, 1) x2}");
  EXPECT_EQ(ToString(TopKOf(TopKInput(), TopK({0}, {{1, true, true}}, 10, 5)).rows),
            "{(1, null) x1, (1, 3) x1}");
  // desc with nulls first: the null leads even though desc reverses the values.
  EXPECT_EQ(ToString(TopKOf(TopKInput(), TopK({0}, {{1, true, false}}, 1)).rows),
            "{(1, null) x1, (2, 4) x1, (3, 1) x1}");
}

TEST(ReferenceTopK, WithoutGroupKeyOneGroup) {
  // By v asc nulls first: (1,null) 0 | (3,1) 1-5 | (1,3) 6-8 | (2,4) 9 | (1,5) 10-11 | (1,9) 12.
  EXPECT_EQ(ToString(TopKOf(TopKInput(), TopK({}, {{1, false, false}}, 5, 5)).rows),
            "{(1, 3) x3, (2, 4) x1, (3, 1) x1}");
}

TEST(ReferenceTopK, WithoutLimitToTheEnd) {
  EXPECT_EQ(ToString(TopKOf(TopKInput(), TopK({}, {{1, false, false}}, std::nullopt, 11)).rows),
            "{(1, 5) x1, (1, 9) x1}");
  // No limit, no offset: every row with a positive count, the negative one gone.
  EXPECT_EQ(ToString(TopKOf(TopKInput(), TopK({0}, {}, std::nullopt)).rows),
            "{(1, null) x1, (1, 3) x3, (1, 5) x2, (1, 9) x1, (2, 4) x1, (3, 1) x5}");
  EXPECT_TRUE(TopKOf(TopKInput(), TopK({0}, {}, std::nullopt, 100)).rows.empty());
}

TEST(ReferenceTopK, TiesAreBrokenByTheWholeRow) {
  const Contents input = Make({{R(2, 5), 1}, {R(1, 5), 2}, {R(3, 4), 1}});
  // v desc: 5 (ties: (1, 5) units 0-1 before (2, 5) unit 2), then (3, 4) unit 3.
  EXPECT_EQ(ToString(TopKOf(input, TopK({}, {{1, true, false}}, 2)).rows), "{(1, 5) x2}");
  EXPECT_EQ(ToString(TopKOf(input, TopK({}, {{1, true, false}}, 2, 1)).rows),
            "{(1, 5) x1, (2, 5) x1}");
  // No order_by: the row order itself.
  EXPECT_EQ(ToString(TopKOf(input, TopK({}, {}, 1, 3)).rows), "{(3, 4) x1}");
}

// ---- negate and threshold -------------------------------------------------------------------

TEST(ReferenceOperators, NegateNegatesRowsButNotErrors) {
  Contents input = Make({{R(1, 1), 2}, {R(2, 2), -1}});
  AddTo(input.errors, "boom", 1);
  const Contents out = NegateOf(input);
  EXPECT_EQ(ToString(out.rows), "{(1, 1) x-2, (2, 2) x1}");
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_TRUE(out.errors.begin()->second == 1) << "errors unchanged";
}

TEST(ReferenceOperators, ThresholdKeepsPositiveCountsOnly) {
  Contents input = Make({{R(1, 1), 2}, {R(2, 2), -1}, {R(3, 3), 1}});
  AddTo(input.errors, "boom", 1);
  const Contents out = ThresholdOf(input);
  EXPECT_EQ(ToString(out.rows), "{(1, 1) x2, (3, 3) x1}");
  EXPECT_EQ(out.FirstError(), "boom");
  // A zero count is never stored, so a cancelled row is gone already.
  EXPECT_TRUE(ThresholdOf(UnionOf({Make({{R(4, 4), 1}}), Make({{R(4, 4), -1}})})).rows.empty());
}

TEST(ReferenceOperators, ExceptAllIsThresholdOfUnionWithNegate) {
  const Contents a = Make({{R(1, 0), 3}, {R(2, 0), 1}, {R(3, 0), 1}});
  const Contents b = Make({{R(1, 0), 1}, {R(2, 0), 2}, {R(4, 0), 1}});
  EXPECT_EQ(ToString(ThresholdOf(UnionOf({a, NegateOf(b)})).rows), "{(1, 0) x2, (3, 0) x1}");
}

// ---- the new aggregates ---------------------------------------------------------------------

Row G(std::int64_t g, Datum v, std::string tag = "a") { return {I(g), std::move(v), S(tag)}; }

pb::Plan::Reduce Agg(std::vector<std::pair<pb::AggregateFunc, std::uint32_t>> aggregates) {
  return ReducePlan(GetPlan("x"), {0}, std::move(aggregates)).reduce();
}

TEST(ReferenceAggregates, CountNonNullAndCountDistinct) {
  const Contents input = Make({
      // Group 1: 5 x2, -3 x1, null x1.
      {G(1, I(5)), 2},
      {G(1, I(-3)), 1},
      {G(1, kNull), 1},
      // Group 2: only nulls.
      {G(2, kNull), 3},
      // Group 3: 7 has total count 0 (two rows), 9 has -1, 8 has 2: one distinct value.
      {G(3, I(7), "a"), 1},
      {G(3, I(7), "b"), -1},
      {G(3, I(9)), -1},
      {G(3, I(8)), 2},
  });
  const Contents out = ReduceOf(input, Agg({{pb::COUNT_NON_NULL, 1}, {pb::COUNT_DISTINCT, 1}}));
  EXPECT_FALSE(out.HasError());
  // Group 3's COUNT_NON_NULL is 1 - 1 - 1 + 2 = 1.
  EXPECT_EQ(ToString(out.rows), "{(1, 3, 2) x1, (2, 0, 0) x1, (3, 1, 1) x1}");
}

TEST(ReferenceAggregates, CountNonNullBeyondInt64IsAnError) {
  const Contents input = Make({{G(1, I(1), "a"), kMax}, {G(1, I(2), "b"), 1}});
  const Contents out = ReduceOf(input, Agg({{pb::COUNT_NON_NULL, 1}}));
  EXPECT_TRUE(out.rows.empty());
  EXPECT_EQ(out.FirstError(), "integer overflow in COUNT");
}

TEST(ReferenceAggregates, AvgOfInt64) {
  const Contents input = Make({
      {G(1, I(1)), 2},  // (1 x2 + 2 x1) / 3
      {G(1, I(2)), 1},
      {G(1, kNull), 5},
      {G(2, kNull), 1},  // all null
      {G(3, I(5), "a"), 1},
      {G(3, I(5), "b"), -1},  // non-null total 0
      {G(3, kNull), 2},
      {G(4, I(kMax)), 2},  // the exact sum is beyond int64; the average is not
  });
  const Contents out = ReduceOf(input, Agg({{pb::AVG, 1}}));
  EXPECT_FALSE(out.HasError());
  // Multiset equality: datum types and doubles compared exactly.
  EXPECT_EQ(out.rows, Expect({{{I(1), 4.0 / 3.0}, 1},
                              {{I(2), kNull}, 1},
                              {{I(3), kNull}, 1},
                              {{I(4), static_cast<double>(kMax)}, 1}}))
      << ToString(out.rows);
  // value x count summed beyond 128 bits.
  const Contents overflow = ReduceOf(
      Make({{G(1, I(kMax), "a"), kMax}, {G(1, I(kMax), "b"), kMax}, {G(1, I(kMax), "c"), kMax}}),
      Agg({{pb::AVG, 1}}));
  EXPECT_TRUE(overflow.rows.empty());
  EXPECT_EQ(overflow.FirstError(), "integer overflow in AVG");
}

TEST(ReferenceAggregates, AvgOfFloat64SumsDistinctValuesInAscendingOrder) {
  const Contents input = Make({
      // Group 1: -1e16, 1, 1e16 in ascending order: (-1e16 + 1) rounds to -1e16, so the sum is 0
      // (the order 1e16, -1e16, 1 would give 1).
      {G(1, -1e16), 1},
      {G(1, 1.0), 1},
      {G(1, 1e16), 1},
      // Group 2: 1e16 in two rows with counts 1 and -1 is one value of count 0, which adds
      // nothing: 1.0 / 1 (row by row, 1 + 1e16 - 1e16 would be 0).
      {G(2, 1.0), 1},
      {G(2, 1e16, "a"), 1},
      {G(2, 1e16, "b"), -1},
      // Group 3: 0.1 x3 as one term, 0.1 * 3.0, then 0.7; / 4.
      {G(3, 0.1, "a"), 1},
      {G(3, 0.1, "b"), 2},
      {G(3, 0.7), 1},
      {G(3, kNull), 4},
      // Group 4: all null.
      {G(4, kNull), 1},
  });
  const Contents out = ReduceOf(input, Agg({{pb::AVG, 1}}));
  EXPECT_FALSE(out.HasError());
  std::map<std::int64_t, Datum> avg;
  for (const auto& [row, count] : out.rows) avg[std::get<std::int64_t>(row[0])] = row[1];
  ASSERT_EQ(avg.size(), 4u);
  EXPECT_EQ(std::get<double>(avg[1]), 0.0);
  EXPECT_EQ(std::get<double>(avg[2]), 1.0);
  double sum = 0.0;
  sum += 0.1 * 3.0;
  sum += 0.7 * 1.0;
  EXPECT_EQ(std::get<double>(avg[3]), sum / 4.0);
  EXPECT_EQ(avg[4], kNull);
}

TEST(ReferenceAggregates, AnyAndAll) {
  const Contents input = Make({
      {G(1, true), 2},  // all true
      {G(2, true), 1},  // mixed
      {G(2, false), 1},
      {G(3, false), 3},      // all false
      {G(4, kNull), 1},      // all null
      {G(5, true, "a"), 1},  // true's total is 0: only false counts
      {G(5, true, "b"), -1},
      {G(5, false), 1},
      {G(6, true), -1},  // true's total is negative: no value counts
      {G(6, kNull), 2},
      {G(7, true), 1},  // true and null
      {G(7, kNull), 1},
  });
  const Contents out = ReduceOf(input, Agg({{pb::ANY, 1}, {pb::ALL, 1}}));
  EXPECT_FALSE(out.HasError());
  EXPECT_EQ(ToString(out.rows), ToString(Expect({{{I(1), true, true}, 1},
                                                 {{I(2), true, false}, 1},
                                                 {{I(3), false, false}, 1},
                                                 {{I(4), kNull, kNull}, 1},
                                                 {{I(5), false, false}, 1},
                                                 {{I(6), kNull, kNull}, 1},
                                                 {{I(7), true, true}, 1}})));
}

TEST(ReferenceAggregates, NewAggregatesBesideTheOldOnesAndErrorsPass) {
  Contents input = Make({{G(1, I(4)), 2}, {G(1, I(6)), 1}, {G(1, kNull), 1}});
  AddTo(input.errors, "boom", 1);
  const Contents out = ReduceOf(input, Agg({{pb::COUNT, 0},
                                            {pb::COUNT_NON_NULL, 1},
                                            {pb::SUM, 1},
                                            {pb::AVG, 1},
                                            {pb::COUNT_DISTINCT, 1},
                                            {pb::MAX, 1}}));
  EXPECT_EQ(out.rows, Expect({{{I(1), I(4), I(3), I(14), 14.0 / 3.0, I(2), I(6)}, 1}}))
      << ToString(out.rows);
  EXPECT_EQ(out.FirstError(), "boom");
}

// ---- dataflows ------------------------------------------------------------------------------

// u1: log source (k INT64, v INT64 nullable, s STRING)
// u2 = Mfp(u1): (k, 10 / v) where s <> "x"          -- division: data errors
// u3 = Reduce(u2) by k: count, sum(col 1)
// u4 = Union(Distinct(Mfp(u1) project k), Mfp(u3) project k)
// u5: index on u3 key [0]; u6: index on u4 key [0]; u7: index on u1 key [1, 2]
pb::DataflowDescription TestDataflow() {
  pb::Command c = EmptyDataflow("reference test");
  auto* d = Desc(c);
  auto* src = d->add_source_imports();
  src->set_id("u1");
  src->mutable_source()->mutable_log()->set_path("/nonexistent.log");
  *src->mutable_schema() = MakeSchema(
      {MakeColumn("k", pb::INT64), MakeColumn("v", pb::INT64, true), MakeColumn("s", pb::STRING)});
  *d->add_objects_to_build() =
      Build("u2", MfpPlan(GetPlan("u1"), Mfp({Binary(pb::DIV, IntLit(10), Col(1))},
                                             {Binary(pb::NE, Col(2), StrLit("x"))}, {0, 3})));
  *d->add_objects_to_build() =
      Build("u3", ReducePlan(GetPlan("u2"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}}));
  *d->add_objects_to_build() =
      Build("u4", UnionPlan({DistinctPlan(MfpPlan(GetPlan("u1"), Mfp({}, {}, {0}))),
                             MfpPlan(GetPlan("u3"), Mfp({}, {}, {0}))}));
  *d->add_index_exports() = Export("u5", "u3", {0});
  *d->add_index_exports() = Export("u6", "u4", {0});
  *d->add_index_exports() = Export("u7", "u1", {1, 2});
  return *d;
}

Row Src(std::int64_t k, std::optional<std::int64_t> v, std::string s) {
  return {k, v ? Datum(*v) : Datum(Null{}), std::move(s)};
}

Evaluator TestEvaluator() {
  Evaluator e(TestDataflow());
  e.AddUpdates("u1", {{Src(1, 2, "a"), 0, 1},
                      {Src(1, 5, "b"), 0, 2},
                      {Src(2, std::nullopt, "a"), 1, 1},
                      {Src(3, 0, "x"), 1, 1},   // filtered by s <> "x", but 10/0 is an error
                      {Src(3, 0, "x"), 3, -1},  // ... retracted again at 3
                      {Src(1, 5, "b"), 2, -2},  // retraction
                      {Src(2, 1, "a"), 2, 1},   // a zero-sum pair at 2:
                      {Src(2, 1, "a"), 2, -1}});
  return e;
}

TEST(ReferenceDataflow, ValidatesAsTheSupervisorWould) {
  ipc::Validator v;
  ASSERT_TRUE(v.Validate(Hello()).ok());
  pb::Command c;
  *c.mutable_create_dataflow()->mutable_desc() = TestDataflow();
  const Status s = v.Validate(c);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(ReferenceDataflow, SourcesAccumulateUpdatesUpToT) {
  const Evaluator e = TestEvaluator();
  EXPECT_EQ(ToString(e.At("u1", 0)->rows), "{(1, 2, \"a\") x1, (1, 5, \"b\") x2}");
  EXPECT_EQ(ToString(e.At("u1", 2)->rows),
            "{(1, 2, \"a\") x1, (2, null, \"a\") x1, (3, 0, \"x\") x1}");
  EXPECT_EQ(ToString(e.At("u1", 3)->rows), "{(1, 2, \"a\") x1, (2, null, \"a\") x1}");
  EXPECT_EQ(e.At("u7", 3)->rows, e.At("u1", 3)->rows) << "an index is its collection";
  EXPECT_EQ(e.At("u9", 0).status().code(), StatusCode::kNotFound);
}

TEST(ReferenceDataflow, OperatorsAtEachTime) {
  const Evaluator e = TestEvaluator();
  // t=0: u2 = (1, 5) x1, (1, 2) x2 -> u3 = (1, 3, 9).
  EXPECT_EQ(ToString(e.At("u3", 0)->rows), "{(1, 3, 9) x1}");
  EXPECT_EQ(ToString(e.At("u4", 0)->rows), "{(1) x2}");
  // t=1: (3, 0, "x") makes an error in u2 and everything downstream.
  EXPECT_TRUE(e.At("u2", 1)->HasError());
  EXPECT_TRUE(e.At("u5", 1)->HasError());
  EXPECT_TRUE(e.At("u6", 2)->HasError());
  EXPECT_FALSE(e.At("u1", 1)->HasError());
  // t=3: the error is retracted. u2 = (1, 5) x1, (2, null) x1 -> u3: (1, 1, 5), (2, 1, null).
  EXPECT_FALSE(e.At("u3", 3)->HasError());
  EXPECT_EQ(ToString(e.At("u3", 3)->rows), "{(1, 1, 5) x1, (2, 1, null) x1}");
  EXPECT_EQ(ToString(e.At("u4", 3)->rows), "{(1) x2, (2) x2}");
}

pb::Peek MakePeek(std::string id, Time t) {
  pb::Peek p;
  p.set_uuid("p");
  p.set_id(std::move(id));
  p.set_timestamp(t);
  return p;
}

// u1: log source (k INT64, name STRING); u2: log source (k INT64 nullable, v INT64)
// u3 = u1 LEFT OUTER JOIN u2 ON u1.k = u2.k
// u4 = Reduce(u3) by k: COUNT(v), AVG(v)         -- over the right side's v (column 3)
// u5 = TopK(u3) by v desc nulls last, limit 2
// u6 = Threshold(Union(u1.k, Negate(u2.k)))      -- u1.k EXCEPT ALL u2.k
// u7: index on u3 key [0]; u8: index on u4 key [0]
pb::DataflowDescription JoinDataflow() {
  pb::Command c = EmptyDataflow("reference join test");
  auto* d = Desc(c);
  auto* u1 = d->add_source_imports();
  u1->set_id("u1");
  u1->mutable_source()->mutable_log()->set_path("/nonexistent-1.log");
  *u1->mutable_schema() = MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("name", pb::STRING)});
  auto* u2 = d->add_source_imports();
  u2->set_id("u2");
  u2->mutable_source()->mutable_log()->set_path("/nonexistent-2.log");
  *u2->mutable_schema() =
      MakeSchema({MakeColumn("k", pb::INT64, true), MakeColumn("v", pb::INT64)});
  *d->add_objects_to_build() =
      Build("u3", JoinPlan(GetPlan("u1"), GetPlan("u2"), {0}, {0}, pb::LEFT_OUTER));
  *d->add_objects_to_build() =
      Build("u4", ReducePlan(GetPlan("u3"), {0}, {{pb::COUNT_NON_NULL, 3}, {pb::AVG, 3}}));
  pb::Plan top;
  *top.mutable_top_k() = TopK({}, {{3, true, true}}, 2);
  *top.mutable_top_k()->mutable_input() = GetPlan("u3");
  *d->add_objects_to_build() = Build("u5", top);
  pb::Plan negate;
  *negate.mutable_negate()->mutable_input() = MfpPlan(GetPlan("u2"), Mfp({}, {}, {0}));
  pb::Plan threshold;
  *threshold.mutable_threshold()->mutable_input() =
      UnionPlan({MfpPlan(GetPlan("u1"), Mfp({}, {}, {0})), negate});
  *d->add_objects_to_build() = Build("u6", threshold);
  *d->add_index_exports() = Export("u7", "u3", {0});
  *d->add_index_exports() = Export("u8", "u4", {0});
  return *d;
}

Evaluator JoinEvaluator() {
  Evaluator e(JoinDataflow());
  e.AddUpdates("u1", {{{I(1), S("a")}, 0, 1}, {{I(2), S("b")}, 0, 1}, {{I(3), S("c")}, 2, 1}});
  e.AddUpdates("u2", {{{I(1), I(10)}, 1, 1},
                      {{I(1), I(20)}, 1, 1},
                      {{kNull, I(5)}, 1, 1},
                      {{I(1), I(10)}, 2, -1},
                      {{I(3), I(7)}, 2, 1}});
  e.AddError("u2", {"bad", 3, 1});
  return e;
}

TEST(ReferenceDataflow, JoinBuildsAtEachTime) {
  const Evaluator e = JoinEvaluator();
  EXPECT_EQ(*e.Arity("u3"), 4u);
  EXPECT_EQ(*e.Arity("u7"), 4u);
  EXPECT_EQ(*e.Arity("u4"), 3u);
  EXPECT_EQ(*e.Arity("u6"), 1u);
  EXPECT_EQ(e.Arity("u9").status().code(), StatusCode::kNotFound);
  // t=0: u2 is empty; its width comes from its schema.
  EXPECT_EQ(ToString(e.At("u3", 0)->rows),
            "{(1, \"a\", null, null) x1, (2, \"b\", null, null) x1}");
  EXPECT_EQ(ToString(e.At("u8", 0)->rows), "{(1, 0, null) x1, (2, 0, null) x1}");
  // t=1: k=1 matches twice; the null-key right row matches nothing.
  EXPECT_EQ(ToString(e.At("u7", 1)->rows),
            "{(1, \"a\", 1, 10) x1, (1, \"a\", 1, 20) x1, (2, \"b\", null, null) x1}");
  const Multiset u4 = e.At("u4", 1)->rows;
  EXPECT_EQ(u4, Expect({{{I(1), I(2), 15.0}, 1}, {{I(2), I(0), kNull}, 1}}));
  EXPECT_TRUE(std::holds_alternative<double>(u4.begin()->first[2])) << "AVG is float64";
  EXPECT_EQ(ToString(e.At("u5", 1)->rows), "{(1, \"a\", 1, 10) x1, (1, \"a\", 1, 20) x1}");
  EXPECT_EQ(ToString(e.At("u6", 1)->rows), "{(2) x1}");
  // t=2: (1, 10) retracted, k=3 arrives on both sides.
  EXPECT_EQ(ToString(e.At("u3", 2)->rows),
            "{(1, \"a\", 1, 20) x1, (2, \"b\", null, null) x1, (3, \"c\", 3, 7) x1}");
  EXPECT_EQ(ToString(e.At("u5", 2)->rows), "{(1, \"a\", 1, 20) x1, (3, \"c\", 3, 7) x1}");
  EXPECT_EQ(ToString(e.At("u6", 2)->rows), "{(2) x1}");
  pb::Peek p = MakePeek("u7", 2);
  *p.add_keys() = MakeRow({IntDatum(3)});
  EXPECT_EQ(ToString(e.Peek(p)), "[(3, \"c\", 3, 7) x1]");
  // t=3: u2's error reaches every collection built on u2.
  EXPECT_FALSE(e.At("u3", 2)->HasError());
  for (const char* id : {"u3", "u4", "u5", "u6", "u7", "u8"}) {
    EXPECT_EQ(e.At(id, 3)->FirstError(), "bad") << id;
  }
  EXPECT_FALSE(e.At("u1", 3)->HasError());
}

TEST(ReferenceDataflow, PeeksSeeErrorsWhateverTheKeys) {
  const Evaluator e = TestEvaluator();
  pb::Peek p = MakePeek("u5", 1);
  *p.add_keys() = MakeRow({IntDatum(1)});
  const PeekAnswer a = e.Peek(p);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error, "division by zero");
  p.set_timestamp(3);
  EXPECT_EQ(ToString(e.Peek(p)), "[(1, 1, 5) x1]");
  EXPECT_FALSE(e.Peek(MakePeek("u3", 3)).ok) << "u3 is not an index";
}

TEST(ReferenceDataflow, PeekKeysMatchNullsAndSeveralKeys) {
  const Evaluator e = TestEvaluator();
  pb::Peek p = MakePeek("u7", 2);
  *p.add_keys() = MakeRow({NullDatum(), StringDatum("a")});
  *p.add_keys() = MakeRow({IntDatum(2), StringDatum("a")});
  *p.add_keys() = MakeRow({IntDatum(7), StringDatum("a")});
  EXPECT_EQ(ToString(e.Peek(p)), "[(1, 2, \"a\") x1, (2, null, \"a\") x1]");
}

// ---- index imports --------------------------------------------------------------------------

// u10 imports u5 (on u3: k, count, sum) at as_of 1: u11 = Mfp(u3) project (k, count);
// u12: index on u11 key [0]; u13: index on u10 (the imported collection itself) key [1].
pb::DataflowDescription ImportingDataflow(std::uint64_t as_of) {
  pb::Command c = EmptyDataflow("imports u5", as_of);
  auto* d = Desc(c);
  auto* import = d->add_index_imports();
  import->set_id("u5");
  import->set_on("u3");
  *import->mutable_schema() =
      MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("count", pb::INT64),
                  MakeColumn("sum", pb::INT64, true)});
  import->add_key(0);
  *d->add_objects_to_build() = Build("u11", MfpPlan(GetPlan("u3"), Mfp({}, {}, {0, 1})));
  *d->add_index_exports() = Export("u12", "u11", {0});
  *d->add_index_exports() = Export("u13", "u5", {1});
  return *d;
}

TEST(ReferenceImports, AnImportIsTheIndexFromAsOfOnAndNothingBefore) {
  auto upstream = std::make_shared<Evaluator>(TestEvaluator());
  Evaluator e(ImportingDataflow(3));
  ASSERT_TRUE(e.ImportFrom("u5", upstream).ok());
  for (Time t : {3, 4, 100}) {
    EXPECT_EQ(e.At("u5", t)->rows, upstream->At("u5", t)->rows) << t;
    EXPECT_EQ(e.At("u3", t)->rows, upstream->At("u5", t)->rows) << "both names, at " << t;
    EXPECT_EQ(e.At("u13", t)->rows, upstream->At("u3", t)->rows) << t;
  }
  EXPECT_EQ(ToString(e.At("u12", 3)->rows), "{(1, 1) x1, (2, 1) x1}");
  EXPECT_TRUE(e.At("u12", 2)->rows.empty()) << "before as_of the import is empty";
  EXPECT_FALSE(e.At("u12", 2)->HasError());
  EXPECT_EQ(ToString(e.Peek(MakePeek("u13", 3))), "[(1, 1, 5) x1, (2, 1, null) x1]");
}

TEST(ReferenceImports, ErrorsOfTheImportedIndexFlowIntoTheImporter) {
  auto upstream = std::make_shared<Evaluator>(TestEvaluator());
  Evaluator e(ImportingDataflow(1));
  ASSERT_TRUE(e.ImportFrom("u5", upstream).ok());
  EXPECT_TRUE(e.At("u12", 1)->HasError());
  EXPECT_TRUE(e.At("u12", 2)->HasError());
  EXPECT_FALSE(e.At("u12", 3)->HasError());
}

TEST(ReferenceImports, ChainsOfImportsAndRefusedBindings) {
  auto upstream = std::make_shared<Evaluator>(TestEvaluator());
  auto middle = std::make_shared<Evaluator>(ImportingDataflow(0));
  ASSERT_TRUE(middle->ImportFrom("u5", upstream).ok());
  // A one-shot read of u12 at 3: u20 = Reduce(u11) count; t1: index on u20.
  pb::Command c = EmptyDataflow("one-shot", 3);
  auto* d = Desc(c);
  d->set_class_(pb::ONE_SHOT_READ);
  d->mutable_until()->add_elements(4);
  auto* import = d->add_index_imports();
  import->set_id("u12");
  import->set_on("u11");
  *import->mutable_schema() =
      MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("count", pb::INT64)});
  import->add_key(0);
  *d->add_objects_to_build() = Build("t2", ReducePlan(GetPlan("u12"), {}, {{pb::COUNT, 0}}));
  *d->add_index_exports() = Export("t1", "t2", {0});
  Evaluator last(*d);
  EXPECT_FALSE(last.ImportFrom("u5", middle).ok()) << "u5 is not imported by this dataflow";
  EXPECT_FALSE(last.ImportFrom("u12", upstream).ok()) << "upstream does not export u12";
  ASSERT_TRUE(last.ImportFrom("u12", middle).ok());
  EXPECT_EQ(ToString(last.Peek(MakePeek("t1", 3))), "[(2) x1]");
}

// ---- peeks: mfp and finishing ---------------------------------------------------------------

Contents PeekInput() {
  // (k, v): (1, 10) x2, (2, null) x1, (3, 5) x3, (4, 10) x1
  return Make({{R(1, 10), 2}, {RN(2), 1}, {R(3, 5), 3}, {R(4, 10), 1}});
}

PeekAnswer Answer(const pb::Finishing& f, const pb::MapFilterProject& mfp = {},
                  const std::vector<Row>& keys = {}) {
  return AnswerPeek(PeekInput(), {0}, keys, mfp, f);
}

pb::Finishing Finish(std::vector<std::tuple<std::uint32_t, bool, bool>> order,
                     std::optional<std::uint64_t> limit = std::nullopt, std::uint64_t offset = 0,
                     std::vector<std::uint32_t> project = {}) {
  pb::Finishing f;
  for (auto [column, desc, nulls_last] : order) {
    auto* o = f.add_order_by();
    o->set_column(column);
    o->set_desc(desc);
    o->set_nulls_last(nulls_last);
  }
  if (limit) f.set_limit(*limit);
  f.set_offset(offset);
  for (auto c : project) f.add_project(c);
  return f;
}

TEST(ReferencePeek, DefaultOrderIsTheRowOrder) {
  EXPECT_EQ(ToString(Answer({})), "[(1, 10) x2, (2, null) x1, (3, 5) x3, (4, 10) x1]");
}

TEST(ReferencePeek, OrderByDescWithNullsFirstAndLast) {
  // v desc, nulls first (the default); ties by the whole row.
  EXPECT_EQ(ToString(Answer(Finish({{1, true, false}}))),
            "[(2, null) x1, (1, 10) x2, (4, 10) x1, (3, 5) x3]");
  EXPECT_EQ(ToString(Answer(Finish({{1, true, true}}))),
            "[(1, 10) x2, (4, 10) x1, (3, 5) x3, (2, null) x1]");
  EXPECT_EQ(ToString(Answer(Finish({{1, false, true}}))),
            "[(3, 5) x3, (1, 10) x2, (4, 10) x1, (2, null) x1]");
  // Two columns: v asc nulls first, then k desc.
  EXPECT_EQ(ToString(Answer(Finish({{1, false, false}, {0, true, false}}))),
            "[(2, null) x1, (3, 5) x3, (4, 10) x1, (1, 10) x2]");
}

TEST(ReferencePeek, OffsetAndLimitCountMultiplicities) {
  // Row order: (1,10)x2 (2,null)x1 (3,5)x3 (4,10)x1 -> units 0,1 | 2 | 3,4,5 | 6.
  EXPECT_EQ(ToString(Answer(Finish({}, 3, 1))), "[(1, 10) x1, (2, null) x1, (3, 5) x1]");
  EXPECT_EQ(ToString(Answer(Finish({}, std::nullopt, 4))), "[(3, 5) x2, (4, 10) x1]");
  EXPECT_EQ(ToString(Answer(Finish({}, 0))), "[]");
  EXPECT_EQ(ToString(Answer(Finish({}, 100, 7))), "[]");
}

TEST(ReferencePeek, ProjectMergesEqualRowsAtTheirFirstPlace) {
  // Ordered by k desc: (4,10)x1 (3,5)x3 (2,null)x1 (1,10)x2; project v -> 10, 5, null, 10.
  EXPECT_EQ(ToString(Answer(Finish({{0, true, false}}, std::nullopt, 0, {1}))),
            "[(10) x3, (5) x3, (null) x1]");
  // Limit applies before the projection.
  EXPECT_EQ(ToString(Answer(Finish({{0, true, false}}, 2, 0, {1}))), "[(10) x1, (5) x1]");
}

TEST(ReferencePeek, KeysAndMfp) {
  // Keys 1 and 2 and 9; mfp: append v + k, keep v is not null, output (col 2, k).
  const auto mfp = Mfp({Binary(pb::ADD, Col(1), Col(0))}, {Unary(pb::IS_NOT_NULL, Col(1))}, {2, 0});
  EXPECT_EQ(ToString(Answer({}, mfp, {{std::int64_t{1}}, {std::int64_t{2}}, {std::int64_t{9}}})),
            "[(11, 1) x2]");
  // The mfp merges rows: project v only.
  EXPECT_EQ(ToString(Answer({}, Mfp({}, {}, {1}))), "[(null) x1, (5) x3, (10) x3]");
}

TEST(ReferencePeek, MfpErrorsOnSelectedRowsOnly) {
  const auto mfp = Mfp({Binary(pb::DIV, IntLit(100), Binary(pb::SUB, Col(0), IntLit(3)))}, {}, {});
  EXPECT_FALSE(Answer({}, mfp).ok);
  EXPECT_EQ(ToString(Answer({}, mfp, {{std::int64_t{1}}})), "[(1, 10, -50) x2]");
}

TEST(ReferencePeek, NegativeMultiplicityIsAnError) {
  const PeekAnswer a = AnswerPeek(Make({{R(1, 1), -1}}), {0}, {}, {}, {});
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.error.find("negative multiplicity"), std::string::npos);
}

// ---- the log format -------------------------------------------------------------------------

TEST(ReferenceLog, DatumsAndLines) {
  EXPECT_EQ(DatumText(Null{}), "null");
  EXPECT_EQ(DatumText(true), "true");
  EXPECT_EQ(DatumText(std::int64_t{-12}), "-12");
  EXPECT_EQ(DatumText(1.5), "1.5");
  EXPECT_EQ(DatumText(-0.0), "-0.0");
  EXPECT_EQ(DatumText(2e10), "2e+10");  // the shortest text that reads back equal
  EXPECT_EQ(DatumText(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(DatumText(std::string("a \"b\"\\\n\t")), "\"a \\\"b\\\"\\\\\\n\\t\"");
  EXPECT_EQ(LogUpdateLine({std::int64_t{1}, Null{}, std::string("a b")}, 3, -2),
            "U 3 -2 1 null \"a b\"\n");
}

TEST(ReferenceLog, UpsertAndDeleteLines) {
  EXPECT_EQ(LogRecordLine({SourceRecord::Kind::kUpsert, {I(1), kNull, S("a b")}, 3}),
            "S 3 1 null \"a b\"\n");
  EXPECT_EQ(LogRecordLine({SourceRecord::Kind::kDelete, {S("k"), I(-2)}, 7}), "D 7 \"k\" -2\n");
}

// ---- upsert sources -------------------------------------------------------------------------

using Kind = SourceRecord::Kind;

SourceRecord Up(Row row, Time t) { return {Kind::kUpsert, std::move(row), t}; }
SourceRecord Del(Row key, Time t) { return {Kind::kDelete, std::move(key), t}; }

TEST(ReferenceUpsert, TheLastRecordOfEachKeyUpToTWins) {
  // Key column 0: k=1 set at 0, replaced at 2, deleted at 4, set again at 6; k=2 set at 1.
  const std::vector<SourceRecord> records = {
      Up({I(1), S("a")}, 0), Up({I(2), S("b")}, 1), Up({I(1), S("c")}, 2),
      Del({I(1)}, 4),        Up({I(1), S("d")}, 6),
  };
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 0)), "{(1, \"a\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 1)), "{(1, \"a\") x1, (2, \"b\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 3)), "{(1, \"c\") x1, (2, \"b\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 5)), "{(2, \"b\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 100)), "{(1, \"d\") x1, (2, \"b\") x1}");
}

TEST(ReferenceUpsert, OfRecordsAtOneTimeTheLaterAddedWins) {
  EXPECT_EQ(ToString(UpsertContents({Up({I(1), S("a")}, 5), Up({I(1), S("b")}, 5)}, {0}, 5)),
            "{(1, \"b\") x1}");
  EXPECT_EQ(ToString(UpsertContents({Up({I(1), S("a")}, 5), Del({I(1)}, 5)}, {0}, 5)), "{}");
  EXPECT_EQ(ToString(UpsertContents({Del({I(1)}, 5), Up({I(1), S("a")}, 5)}, {0}, 5)),
            "{(1, \"a\") x1}");
}

TEST(ReferenceUpsert, TimeOrdersRecordsNotTheOrderAdded) {
  // A record added later at an earlier time does not override a later time's record.
  const std::vector<SourceRecord> records = {Up({I(1), S("late")}, 7), Up({I(1), S("early")}, 3)};
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 3)), "{(1, \"early\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 7)), "{(1, \"late\") x1}");
}

TEST(ReferenceUpsert, RepeatsAndAbsentDeletesChangeNothing) {
  const std::vector<SourceRecord> records = {Del({I(9)}, 0), Up({I(1), S("a")}, 1),
                                             Up({I(1), S("a")}, 1), Up({I(1), S("a")}, 2),
                                             Del({I(3)}, 2)};
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 0)), "{}");
  EXPECT_EQ(ToString(UpsertContents(records, {0}, 2)), "{(1, \"a\") x1}") << "count 1, not 3";
}

TEST(ReferenceUpsert, TwoKeyColumnsInKeyOrderAndNullKeys) {
  // Key (2, 0): a delete names column 2 first, then column 0.
  const std::vector<SourceRecord> records = {
      Up({I(1), I(10), S("x")}, 0),  Up({I(1), I(11), S("y")}, 0),
      Up({kNull, I(12), S("x")}, 0), Up({I(1), I(13), S("x")}, 1),  // replaces (1, 10, "x")
      Del({S("y"), I(1)}, 2),                                       // deletes (1, 11, "y")
      Del({S("x"), kNull}, 3),  // a null key is a key like any other
  };
  EXPECT_EQ(ToString(UpsertContents(records, {2, 0}, 0)),
            "{(null, 12, \"x\") x1, (1, 10, \"x\") x1, (1, 11, \"y\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {2, 0}, 1)),
            "{(null, 12, \"x\") x1, (1, 11, \"y\") x1, (1, 13, \"x\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {2, 0}, 2)),
            "{(null, 12, \"x\") x1, (1, 13, \"x\") x1}");
  EXPECT_EQ(ToString(UpsertContents(records, {2, 0}, 3)), "{(1, 13, \"x\") x1}");
}

// u1: an upsert source keyed by column 0 (k, v); u2: a plain source (k, w); u3 = sum of v per k
// over u1 joined with u2; u4: index on u3.
pb::DataflowDescription UpsertDataflow() {
  pb::Command c = EmptyDataflow("upserts");
  auto* d = Desc(c);
  auto* u1 = d->add_source_imports();
  u1->set_id("u1");
  u1->mutable_source()->mutable_log()->set_path("/tmp/u1.log");
  *u1->mutable_schema() = MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("v", pb::INT64)});
  u1->add_upsert_key(0);
  auto* u2 = d->add_source_imports();
  u2->set_id("u2");
  u2->mutable_source()->mutable_log()->set_path("/tmp/u2.log");
  *u2->mutable_schema() = MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("w", pb::INT64)});
  *d->add_objects_to_build() =
      Build("u3", JoinPlan(GetPlan("u1"), GetPlan("u2"), {0}, {0}, pb::INNER));
  *d->add_index_exports() = Export("u4", "u3", {0});
  *d->add_objects_to_build() = Build("u5", ReducePlan(GetPlan("u1"), {}, {{pb::SUM, 1}}));
  *d->add_index_exports() = Export("u6", "u5", {0});
  return *d;
}

TEST(ReferenceUpsert, AnUpsertSourceFeedsTheDataflowItsCurrentRows) {
  Evaluator e(UpsertDataflow());
  e.AddRecord("u1", Up({I(1), I(10)}, 0));
  e.AddRecord("u1", Up({I(2), I(20)}, 0));
  e.AddRecord("u1", Up({I(1), I(11)}, 1));
  e.AddRecord("u1", Del({I(2)}, 2));
  e.AddUpdate("u2", {{I(1), I(100)}, 0, 2});
  e.AddUpdate("u2", {{I(2), I(200)}, 0, 1});
  EXPECT_EQ(ToString(e.At("u1", 0)->rows), "{(1, 10) x1, (2, 20) x1}");
  EXPECT_EQ(ToString(e.At("u4", 0)->rows), "{(1, 10, 1, 100) x2, (2, 20, 2, 200) x1}");
  EXPECT_EQ(ToString(e.At("u4", 1)->rows), "{(1, 11, 1, 100) x2, (2, 20, 2, 200) x1}");
  EXPECT_EQ(ToString(e.At("u4", 2)->rows), "{(1, 11, 1, 100) x2}");
  EXPECT_EQ(ToString(e.At("u6", 0)->rows), "{(30) x1}");
  EXPECT_EQ(ToString(e.At("u6", 2)->rows), "{(11) x1}");
  pb::Peek p = MakePeek("u4", 1);
  *p.add_keys() = MakeRow({IntDatum(1)});
  EXPECT_EQ(ToString(e.Peek(p)), "[(1, 11, 1, 100) x2]");
}

TEST(ReferenceUpsert, RecordsForASourceWithoutAnUpsertKeyAreRefused) {
  Evaluator e(UpsertDataflow());
  e.AddRecord("u2", Up({I(1), I(1)}, 0));
  EXPECT_EQ(e.At("u2", 0).status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceConversions, ProtoRoundTrip) {
  const Row row = {Null{}, true, std::int64_t{kMin}, -0.5, std::string("x\0y", 3)};
  EXPECT_EQ(CompareRow(FromProto(ToProto(row)), row), 0);
}

// ---- the types of DESIGN §16 (reference_values.h) --------------------------------------------

pb::Column To(pb::ScalarType type, std::uint32_t precision, std::uint32_t scale,
              std::uint32_t length, bool blank_padded) {
  pb::Column c;
  c.set_type(type);
  c.set_nullable(true);
  c.set_precision(precision);
  c.set_scale(scale);
  c.set_length(length);
  c.set_blank_padded(blank_padded);
  return c;
}
pb::ScalarExpr Cast(pb::ScalarExpr e, pb::Column to) {
  pb::ScalarExpr out;
  *out.mutable_cast()->mutable_expr() = std::move(e);
  *out.mutable_cast()->mutable_to() = std::move(to);
  return out;
}
// A value of `type` as PostgreSQL's 'text'::type: a cast of a text literal.
pb::ScalarExpr As(std::string text, pb::ScalarType type) {
  return Cast(StrLit(std::move(text)), To(type, 0, 0, 0, false));
}
pb::ScalarExpr Fn(pb::Func func, std::vector<pb::ScalarExpr> args) {
  pb::ScalarExpr out;
  out.mutable_call()->set_func(func);
  for (auto& a : args) *out.mutable_call()->add_args() = std::move(a);
  return out;
}

// What psql shows for `SELECT (<query>)::text`: the value's output text, NULL, or "ERROR: " and
// the message.
std::string Shown(const pb::ScalarExpr& e) {
  const Value v = Eval(e, Row{});
  if (v.is_error()) return "ERROR: " + *v.error;
  if (std::holds_alternative<Null>(v.datum)) return "NULL";
  return OutputText(v.datum, TypeOf(e, Row{}, Types{}));
}

struct Case {
  const char* query;  // what PostgreSQL was asked
  pb::ScalarExpr expr;
  std::string expected;
};

void ExpectCases(const std::vector<Case>& cases) {
  for (const auto& c : cases) EXPECT_EQ(Shown(c.expr), c.expected) << c.query;
}

// int2 and int4 arithmetic: results beyond the width are errors; division truncates.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, SmallIntegerArithmeticStaysInItsWidth) {
  const std::vector<Case> cases = {
      {"('32767'::smallint + '1'::smallint)",
       Binary(pb::ADD, As("32767", pb::INT16), As("1", pb::INT16)), "ERROR: smallint out of range"},
      {"('-32768'::smallint - '1'::smallint)",
       Binary(pb::SUB, As("-32768", pb::INT16), As("1", pb::INT16)),
       "ERROR: smallint out of range"},
      {"('200'::smallint * '-200'::smallint)",
       Binary(pb::MUL, As("200", pb::INT16), As("-200", pb::INT16)),
       "ERROR: smallint out of range"},
      {"('-7'::smallint / '2'::smallint)", Binary(pb::DIV, As("-7", pb::INT16), As("2", pb::INT16)),
       "-3"},
      {"('-7'::smallint % '2'::smallint)", Binary(pb::MOD, As("-7", pb::INT16), As("2", pb::INT16)),
       "-1"},
      {"('-32768'::smallint / '-1'::smallint)",
       Binary(pb::DIV, As("-32768", pb::INT16), As("-1", pb::INT16)),
       "ERROR: smallint out of range"},
      {"('-32768'::smallint % '-1'::smallint)",
       Binary(pb::MOD, As("-32768", pb::INT16), As("-1", pb::INT16)), "0"},
      {"('1'::smallint / '0'::smallint)", Binary(pb::DIV, As("1", pb::INT16), As("0", pb::INT16)),
       "ERROR: division by zero"},
      {"('2147483647'::integer + '1'::integer)",
       Binary(pb::ADD, As("2147483647", pb::INT32), As("1", pb::INT32)),
       "ERROR: integer out of range"},
      {"('65536'::integer * '32768'::integer)",
       Binary(pb::MUL, As("65536", pb::INT32), As("32768", pb::INT32)),
       "ERROR: integer out of range"},
      {"('-2147483648'::integer / '-1'::integer)",
       Binary(pb::DIV, As("-2147483648", pb::INT32), As("-1", pb::INT32)),
       "ERROR: integer out of range"},
      {"('7'::integer % '-3'::integer)", Binary(pb::MOD, As("7", pb::INT32), As("-3", pb::INT32)),
       "1"},
      {"('-2147483647'::integer - '1'::integer)",
       Binary(pb::SUB, As("-2147483647", pb::INT32), As("1", pb::INT32)), "-2147483648"},
      {"(- '-32768'::smallint)", Unary(pb::NEGATE, As("-32768", pb::INT16)),
       "ERROR: smallint out of range"},
      {"(- '-2147483648'::integer)", Unary(pb::NEGATE, As("-2147483648", pb::INT32)),
       "ERROR: integer out of range"},
      {"(- '5'::integer)", Unary(pb::NEGATE, As("5", pb::INT32)), "-5"},
      {"('1'::integer % '0'::integer)", Binary(pb::MOD, As("1", pb::INT32), As("0", pb::INT32)),
       "ERROR: division by zero"},
  };
  ExpectCases(cases);
}

// float4 arithmetic is float4 arithmetic; division by zero is an error.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, Float4ArithmeticRoundsToFloat4) {
  const std::vector<Case> cases = {
      {"('0.1'::real + '0.2'::real)",
       Binary(pb::ADD, As("0.1", pb::FLOAT32), As("0.2", pb::FLOAT32)), "0.3"},
      {"('1.1'::real * '1.1'::real)",
       Binary(pb::MUL, As("1.1", pb::FLOAT32), As("1.1", pb::FLOAT32)), "1.21"},
      {"('1'::real / '3'::real)", Binary(pb::DIV, As("1", pb::FLOAT32), As("3", pb::FLOAT32)),
       "0.33333334"},
      {"('1'::real / '0'::real)", Binary(pb::DIV, As("1", pb::FLOAT32), As("0", pb::FLOAT32)),
       "ERROR: division by zero"},
      {"('16777216'::real - '1'::real)",
       Binary(pb::SUB, As("16777216", pb::FLOAT32), As("1", pb::FLOAT32)), "1.6777215e+07"},
      {"(- '1.5'::real)", Unary(pb::NEGATE, As("1.5", pb::FLOAT32)), "-1.5"},
      {"('1'::double precision / '3'::double precision)",
       Binary(pb::DIV, As("1", pb::FLOAT64), As("3", pb::FLOAT64)), "0.3333333333333333"},
      {"('0.1'::double precision + '0.2'::double precision)",
       Binary(pb::ADD, As("0.1", pb::FLOAT64), As("0.2", pb::FLOAT64)), "0.30000000000000004"},
  };
  ExpectCases(cases);
}

// numeric + - keep the larger scale, * adds the scales, / and % follow select_div_scale and trunc.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, NumericArithmeticHasPostgresScales) {
  const std::vector<Case> cases = {
      {"('1.5'::numeric + '2.25'::numeric)",
       Binary(pb::ADD, As("1.5", pb::NUMERIC), As("2.25", pb::NUMERIC)), "3.75"},
      {"('1.5'::numeric - '1.50'::numeric)",
       Binary(pb::SUB, As("1.5", pb::NUMERIC), As("1.50", pb::NUMERIC)), "0.00"},
      {"('1.23'::numeric * '4.5'::numeric)",
       Binary(pb::MUL, As("1.23", pb::NUMERIC), As("4.5", pb::NUMERIC)), "5.535"},
      {"('-0.5'::numeric * '0.5'::numeric)",
       Binary(pb::MUL, As("-0.5", pb::NUMERIC), As("0.5", pb::NUMERIC)), "-0.25"},
      {"('1'::numeric / '3'::numeric)", Binary(pb::DIV, As("1", pb::NUMERIC), As("3", pb::NUMERIC)),
       "0.33333333333333333333"},
      {"('2'::numeric / '3'::numeric)", Binary(pb::DIV, As("2", pb::NUMERIC), As("3", pb::NUMERIC)),
       "0.66666666666666666667"},
      {"('1'::numeric / '7000000'::numeric)",
       Binary(pb::DIV, As("1", pb::NUMERIC), As("7000000", pb::NUMERIC)),
       "0.000000142857142857142857"},
      {"('123456789'::numeric / '0.001'::numeric)",
       Binary(pb::DIV, As("123456789", pb::NUMERIC), As("0.001", pb::NUMERIC)),
       "123456789000.00000000"},
      {"('0'::numeric / '7'::numeric)", Binary(pb::DIV, As("0", pb::NUMERIC), As("7", pb::NUMERIC)),
       "0.00000000000000000000"},
      {"('0.0001'::numeric / '3'::numeric)",
       Binary(pb::DIV, As("0.0001", pb::NUMERIC), As("3", pb::NUMERIC)),
       "0.000033333333333333333333"},
      {"('100000000000000000000'::numeric / '3'::numeric)",
       Binary(pb::DIV, As("100000000000000000000", pb::NUMERIC), As("3", pb::NUMERIC)),
       "33333333333333333333"},
      {"('-1'::numeric / '3'::numeric)",
       Binary(pb::DIV, As("-1", pb::NUMERIC), As("3", pb::NUMERIC)), "-0.33333333333333333333"},
      {"('10'::numeric / '4'::numeric)",
       Binary(pb::DIV, As("10", pb::NUMERIC), As("4", pb::NUMERIC)), "2.5000000000000000"},
      {"('1.000'::numeric / '8'::numeric)",
       Binary(pb::DIV, As("1.000", pb::NUMERIC), As("8", pb::NUMERIC)), "0.12500000000000000000"},
      {"('5'::numeric / '0'::numeric)", Binary(pb::DIV, As("5", pb::NUMERIC), As("0", pb::NUMERIC)),
       "ERROR: division by zero"},
      {"('9999'::numeric / '10000'::numeric)",
       Binary(pb::DIV, As("9999", pb::NUMERIC), As("10000", pb::NUMERIC)),
       "0.99990000000000000000"},
      {"('10000'::numeric / '9999'::numeric)",
       Binary(pb::DIV, As("10000", pb::NUMERIC), As("9999", pb::NUMERIC)), "1.0001000100010001"},
      {"('3'::numeric / '3'::numeric)", Binary(pb::DIV, As("3", pb::NUMERIC), As("3", pb::NUMERIC)),
       "1.00000000000000000000"},
      {"('-1.333'::numeric / '1.5'::numeric)",
       Binary(pb::DIV, As("-1.333", pb::NUMERIC), As("1.5", pb::NUMERIC)),
       "-0.88866666666666666667"},
      {"('1.5'::numeric / '-0.25'::numeric)",
       Binary(pb::DIV, As("1.5", pb::NUMERIC), As("-0.25", pb::NUMERIC)), "-6.0000000000000000"},
      {"('7'::numeric % '-3.5'::numeric)",
       Binary(pb::MOD, As("7", pb::NUMERIC), As("-3.5", pb::NUMERIC)), "0.0"},
      {"('-7.5'::numeric % '2'::numeric)",
       Binary(pb::MOD, As("-7.5", pb::NUMERIC), As("2", pb::NUMERIC)), "-1.5"},
      {"('7.25'::numeric % '0.5'::numeric)",
       Binary(pb::MOD, As("7.25", pb::NUMERIC), As("0.5", pb::NUMERIC)), "0.25"},
      {"('1'::numeric % '0'::numeric)", Binary(pb::MOD, As("1", pb::NUMERIC), As("0", pb::NUMERIC)),
       "ERROR: division by zero"},
      // PostgreSQL 15: 100000000000000000000000000000000000000; tandem keeps 38 digits
      {"('99999999999999999999999999999999999999'::numeric + '1'::numeric)",
       Binary(pb::ADD, As("99999999999999999999999999999999999999", pb::NUMERIC),
              As("1", pb::NUMERIC)),
       "ERROR: value overflows numeric format"},
      // PostgreSQL 15: 100000000000000000000000000000000000000; tandem keeps 38 digits
      {"('10000000000000000000'::numeric * '10000000000000000000'::numeric)",
       Binary(pb::MUL, As("10000000000000000000", pb::NUMERIC),
              As("10000000000000000000", pb::NUMERIC)),
       "ERROR: value overflows numeric format"},
      {"(- '0.50'::numeric)", Unary(pb::NEGATE, As("0.50", pb::NUMERIC)), "-0.50"},
      {"(- '-3'::numeric)", Unary(pb::NEGATE, As("-3", pb::NUMERIC)), "3"},
      {"('0.001'::numeric - '0.001'::numeric)",
       Binary(pb::SUB, As("0.001", pb::NUMERIC), As("0.001", pb::NUMERIC)), "0.000"},
      {"('0.5'::numeric * '0.5'::numeric)",
       Binary(pb::MUL, As("0.5", pb::NUMERIC), As("0.5", pb::NUMERIC)), "0.25"},
      {"('0.25'::numeric * '-2'::numeric)",
       Binary(pb::MUL, As("0.25", pb::NUMERIC), As("-2", pb::NUMERIC)), "-0.50"},
  };
  ExpectCases(cases);
}

// numerics and intervals compare by value: 1.5 = 1.50, 1 mon = 30 days.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, NumericAndIntervalCompareByValue) {
  const std::vector<Case> cases = {
      {"('1.5'::numeric = '1.50'::numeric)",
       Binary(pb::EQ, As("1.5", pb::NUMERIC), As("1.50", pb::NUMERIC)), "true"},
      {"('1.49'::numeric < '1.5'::numeric)",
       Binary(pb::LT, As("1.49", pb::NUMERIC), As("1.5", pb::NUMERIC)), "true"},
      {"('-0.1'::numeric > '-1'::numeric)",
       Binary(pb::GT, As("-0.1", pb::NUMERIC), As("-1", pb::NUMERIC)), "true"},
      {"('1 mon'::interval = '30 days'::interval)",
       Binary(pb::EQ, As("1 mon", pb::INTERVAL), As("30 days", pb::INTERVAL)), "true"},
      {"('1 day'::interval = '24 hours'::interval)",
       Binary(pb::EQ, As("1 day", pb::INTERVAL), As("24 hours", pb::INTERVAL)), "true"},
      {"('29 days 23:59:59'::interval < '1 mon'::interval)",
       Binary(pb::LT, As("29 days 23:59:59", pb::INTERVAL), As("1 mon", pb::INTERVAL)), "true"},
      {"('1 year'::interval > '360 days'::interval)",
       Binary(pb::GT, As("1 year", pb::INTERVAL), As("360 days", pb::INTERVAL)), "false"},
      {"('2'::numeric <> '2.000'::numeric)",
       Binary(pb::NE, As("2", pb::NUMERIC), As("2.000", pb::NUMERIC)), "false"},
      {"('2026-12-06'::date <= '2026-12-07'::date)",
       Binary(pb::LE, As("2026-12-06", pb::DATE), As("2026-12-07", pb::DATE)), "true"},
      {"('2026-12-06 12:00:00'::timestamp < '2026-12-06 12:00:00.000001'::timestamp)",
       Binary(pb::LT, As("2026-12-06 12:00:00", pb::TIMESTAMP),
              As("2026-12-06 12:00:00.000001", pb::TIMESTAMP)),
       "true"},
      {"greatest('1.5'::numeric, '2'::numeric, '1.75'::numeric)",
       Fn(pb::GREATEST, {As("1.5", pb::NUMERIC), As("2", pb::NUMERIC), As("1.75", pb::NUMERIC)}),
       "2"},
      {"least('1 mon'::interval, '31 days'::interval, '29 days'::interval)",
       Fn(pb::LEAST,
          {As("1 mon", pb::INTERVAL), As("31 days", pb::INTERVAL), As("29 days", pb::INTERVAL)}),
       "29 days"},
      {"nullif('1.5'::numeric, '1.50'::numeric)",
       Fn(pb::NULLIF, {As("1.5", pb::NUMERIC), As("1.50", pb::NUMERIC)}), "NULL"},
      {"nullif('1.5'::numeric, '1.6'::numeric)",
       Fn(pb::NULLIF, {As("1.5", pb::NUMERIC), As("1.6", pb::NUMERIC)}), "1.5"},
  };
  ExpectCases(cases);
}

// date +- integer, date - date, date +- interval, date + time.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, DateArithmetic) {
  const std::vector<Case> cases = {
      {"('2026-12-06'::date + '30'::integer)",
       Binary(pb::ADD, As("2026-12-06", pb::DATE), As("30", pb::INT32)), "2027-01-05"},
      {"('2026-03-01'::date - '1'::integer)",
       Binary(pb::SUB, As("2026-03-01", pb::DATE), As("1", pb::INT32)), "2026-02-28"},
      {"('1'::integer + '2024-02-28'::date)",
       Binary(pb::ADD, As("1", pb::INT32), As("2024-02-28", pb::DATE)), "2024-02-29"},
      {"('2026-12-06'::date - '1970-01-01'::date)",
       Binary(pb::SUB, As("2026-12-06", pb::DATE), As("1970-01-01", pb::DATE)), "20793"},
      {"('2000-01-01'::date - '2026-12-06'::date)",
       Binary(pb::SUB, As("2000-01-01", pb::DATE), As("2026-12-06", pb::DATE)), "-9836"},
      {"('2026-01-31'::date + '1 mon'::interval)",
       Binary(pb::ADD, As("2026-01-31", pb::DATE), As("1 mon", pb::INTERVAL)),
       "2026-02-28 00:00:00"},
      {"('2024-03-31'::date - '1 mon'::interval)",
       Binary(pb::SUB, As("2024-03-31", pb::DATE), As("1 mon", pb::INTERVAL)),
       "2024-02-29 00:00:00"},
      {"('2026-12-06'::date + '12:34:56.5'::time)",
       Binary(pb::ADD, As("2026-12-06", pb::DATE), As("12:34:56.5", pb::TIME)),
       "2026-12-06 12:34:56.5"},
      {"('5874897-12-31'::date + '1'::integer)",
       Binary(pb::ADD, As("5874897-12-31", pb::DATE), As("1", pb::INT32)),
       "ERROR: date out of range"},
      {"('4714-11-24 BC'::date - '1'::integer)",
       Binary(pb::SUB, As("4714-11-24 BC", pb::DATE), As("1", pb::INT32)),
       "ERROR: date out of range"},
      {"('0001-01-01'::date + '-1'::integer)",
       Binary(pb::ADD, As("0001-01-01", pb::DATE), As("-1", pb::INT32)), "0001-12-31 BC"},
      {"('2026-12-06'::date + '1 day 02:00:00'::interval)",
       Binary(pb::ADD, As("2026-12-06", pb::DATE), As("1 day 02:00:00", pb::INTERVAL)),
       "2026-12-07 02:00:00"},
      {"('-1 year'::interval + '2024-02-29'::date)",
       Binary(pb::ADD, As("-1 year", pb::INTERVAL), As("2024-02-29", pb::DATE)),
       "2023-02-28 00:00:00"},
  };
  ExpectCases(cases);
}

// timestamp +- interval (months, then days, then time; month ends clamped), timestamp - timestamp.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, TimestampArithmetic) {
  const std::vector<Case> cases = {
      {"('2026-01-31 10:00:00'::timestamp + '1 mon'::interval)",
       Binary(pb::ADD, As("2026-01-31 10:00:00", pb::TIMESTAMP), As("1 mon", pb::INTERVAL)),
       "2026-02-28 10:00:00"},
      {"('2024-01-31 00:00:00'::timestamp + '1 mon 1 day'::interval)",
       Binary(pb::ADD, As("2024-01-31 00:00:00", pb::TIMESTAMP), As("1 mon 1 day", pb::INTERVAL)),
       "2024-03-01 00:00:00"},
      {"('2026-03-31 00:00:00'::timestamp - '1 mon'::interval)",
       Binary(pb::SUB, As("2026-03-31 00:00:00", pb::TIMESTAMP), As("1 mon", pb::INTERVAL)),
       "2026-02-28 00:00:00"},
      {"('2026-12-06 23:00:00'::timestamp + '2 hours'::interval)",
       Binary(pb::ADD, As("2026-12-06 23:00:00", pb::TIMESTAMP), As("2 hours", pb::INTERVAL)),
       "2026-12-07 01:00:00"},
      {"('2026-12-06 12:00:00'::timestamp + '-1 year -2 mons +3 days -04:05:06.5'::interval)",
       Binary(pb::ADD, As("2026-12-06 12:00:00", pb::TIMESTAMP),
              As("-1 year -2 mons +3 days -04:05:06.5", pb::INTERVAL)),
       "2025-10-09 07:54:53.5"},
      {"('13 mons'::interval + '2025-11-30 00:00:00'::timestamp)",
       Binary(pb::ADD, As("13 mons", pb::INTERVAL), As("2025-11-30 00:00:00", pb::TIMESTAMP)),
       "2026-12-30 00:00:00"},
      {"('2026-12-06 12:00:00'::timestamp - '2026-12-01 18:30:00'::timestamp)",
       Binary(pb::SUB, As("2026-12-06 12:00:00", pb::TIMESTAMP),
              As("2026-12-01 18:30:00", pb::TIMESTAMP)),
       "4 days 17:30:00"},
      {"('2026-12-01 18:30:00'::timestamp - '2026-12-06 12:00:00'::timestamp)",
       Binary(pb::SUB, As("2026-12-01 18:30:00", pb::TIMESTAMP),
              As("2026-12-06 12:00:00", pb::TIMESTAMP)),
       "-4 days -17:30:00"},
      {"('2026-12-06 12:00:00'::timestamp - '2026-12-06 11:00:00.25'::timestamp)",
       Binary(pb::SUB, As("2026-12-06 12:00:00", pb::TIMESTAMP),
              As("2026-12-06 11:00:00.25", pb::TIMESTAMP)),
       "00:59:59.75"},
      {"('2026-12-06 12:00:00+00'::timestamptz - '2020-02-29 00:00:00+00'::timestamptz)",
       Binary(pb::SUB, As("2026-12-06 12:00:00+00", pb::TIMESTAMPTZ),
              As("2020-02-29 00:00:00+00", pb::TIMESTAMPTZ)),
       "2472 days 12:00:00"},
      {"('2026-12-06 12:00:00+05:30'::timestamptz + '1 mon'::interval)",
       Binary(pb::ADD, As("2026-12-06 12:00:00+05:30", pb::TIMESTAMPTZ), As("1 mon", pb::INTERVAL)),
       "2027-01-06 06:30:00+00"},
      {"('0044-03-15 12:00:00 BC'::timestamp + '100 years'::interval)",
       Binary(pb::ADD, As("0044-03-15 12:00:00 BC", pb::TIMESTAMP), As("100 years", pb::INTERVAL)),
       "0057-03-15 12:00:00"},
      {"('4714-11-24 00:00:00 BC'::timestamp + '-1 microsecond'::interval)",
       Binary(pb::ADD, As("4714-11-24 00:00:00 BC", pb::TIMESTAMP),
              As("-1 microsecond", pb::INTERVAL)),
       "ERROR: timestamp out of range"},
  };
  ExpectCases(cases);
}

// time - time, time +- interval wraps at midnight, interval +- interval, interval * and / float8.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, TimeAndIntervalArithmetic) {
  const std::vector<Case> cases = {
      {"('12:00:00'::time - '13:30:00.5'::time)",
       Binary(pb::SUB, As("12:00:00", pb::TIME), As("13:30:00.5", pb::TIME)), "-01:30:00.5"},
      {"('23:00:00'::time + '2 hours'::interval)",
       Binary(pb::ADD, As("23:00:00", pb::TIME), As("2 hours", pb::INTERVAL)), "01:00:00"},
      {"('01:00:00'::time - '2 hours'::interval)",
       Binary(pb::SUB, As("01:00:00", pb::TIME), As("2 hours", pb::INTERVAL)), "23:00:00"},
      {"('12:00:00'::time + '1 day 3 mons 00:00:01'::interval)",
       Binary(pb::ADD, As("12:00:00", pb::TIME), As("1 day 3 mons 00:00:01", pb::INTERVAL)),
       "12:00:01"},
      {"('24:00:00'::time + '0 seconds'::interval)",
       Binary(pb::ADD, As("24:00:00", pb::TIME), As("0 seconds", pb::INTERVAL)), "00:00:00"},
      {"('1 mon 2 days'::interval + '-3 days 04:00:00'::interval)",
       Binary(pb::ADD, As("1 mon 2 days", pb::INTERVAL), As("-3 days 04:00:00", pb::INTERVAL)),
       "1 mon -1 days +04:00:00"},
      {"('1 year'::interval - '1 mon'::interval)",
       Binary(pb::SUB, As("1 year", pb::INTERVAL), As("1 mon", pb::INTERVAL)), "11 mons"},
      {"('1 mon 1 day'::interval * '0.7'::double precision)",
       Binary(pb::MUL, As("1 mon 1 day", pb::INTERVAL), As("0.7", pb::FLOAT64)),
       "21 days 16:48:00"},
      {"('1 mon'::interval / '7'::double precision)",
       Binary(pb::DIV, As("1 mon", pb::INTERVAL), As("7", pb::FLOAT64)), "4 days 06:51:25.6896"},
      {"('2.5'::double precision * '1 day 00:00:01'::interval)",
       Binary(pb::MUL, As("2.5", pb::FLOAT64), As("1 day 00:00:01", pb::INTERVAL)),
       "2 days 12:00:02.5"},
      {"('1 day'::interval / '0'::double precision)",
       Binary(pb::DIV, As("1 day", pb::INTERVAL), As("0", pb::FLOAT64)), "ERROR: division by zero"},
      {"('-1 mon -1 day'::interval * '1.5'::double precision)",
       Binary(pb::MUL, As("-1 mon -1 day", pb::INTERVAL), As("1.5", pb::FLOAT64)),
       "-1 mons -16 days -12:00:00"},
      {"('1 year 1 day'::interval / '3'::double precision)",
       Binary(pb::DIV, As("1 year 1 day", pb::INTERVAL), As("3", pb::FLOAT64)), "4 mons 08:00:00"},
      {"(- '1 year -2 days 00:00:03'::interval)",
       Unary(pb::NEGATE, As("1 year -2 days 00:00:03", pb::INTERVAL)),
       "-1 years +2 days -00:00:03"},
      {"('1 day'::interval * '1e10'::double precision)",
       Binary(pb::MUL, As("1 day", pb::INTERVAL), As("1e10", pb::FLOAT64)),
       "ERROR: interval out of range"},
      {"('100000000 days'::interval * '100'::double precision)",
       Binary(pb::MUL, As("100000000 days", pb::INTERVAL), As("100", pb::FLOAT64)),
       "ERROR: interval out of range"},
      {"('1 year'::interval * 'nan'::double precision)",
       Binary(pb::MUL, As("1 year", pb::INTERVAL), As("nan", pb::FLOAT64)),
       "ERROR: interval out of range"},
      // PostgreSQL 15: -104311412 days -08:01:49.551616; its timestamp_mi wraps the int64 silently
      {"('294247-01-01 00:00:00'::timestamp - '4714-11-24 00:00:00 BC'::timestamp)",
       Binary(pb::SUB, As("294247-01-01 00:00:00", pb::TIMESTAMP),
              As("4714-11-24 00:00:00 BC", pb::TIMESTAMP)),
       "ERROR: interval out of range"},
      // PostgreSQL 15: 294247-01-11 00:00:00; tandem counts microseconds from 1970 in an int64
      {"'294247-01-11 00:00:00'::timestamp", As("294247-01-11 00:00:00", pb::TIMESTAMP),
       "ERROR: timestamp out of range: \"294247-01-11 00:00:00\""},
      {"('2147483647 days'::interval + '1 day'::interval)",
       Binary(pb::ADD, As("2147483647 days", pb::INTERVAL), As("1 day", pb::INTERVAL)),
       "ERROR: interval out of range"},
  };
  ExpectCases(cases);
}

// PostgreSQL casts among int2, int4, int8, float4, float8 and numeric, and typmods.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, CastsBetweenNumbers) {
  const std::vector<Case> cases = {
      {"CAST('32768'::bigint AS smallint)",
       Cast(As("32768", pb::INT64), To(pb::INT16, 0, 0, 0, false)), "ERROR: smallint out of range"},
      {"CAST('-2147483648'::bigint AS integer)",
       Cast(As("-2147483648", pb::INT64), To(pb::INT32, 0, 0, 0, false)), "-2147483648"},
      {"CAST('2147483648'::bigint AS integer)",
       Cast(As("2147483648", pb::INT64), To(pb::INT32, 0, 0, 0, false)),
       "ERROR: integer out of range"},
      {"CAST('2.5'::double precision AS integer)",
       Cast(As("2.5", pb::FLOAT64), To(pb::INT32, 0, 0, 0, false)), "2"},
      {"CAST('3.5'::double precision AS smallint)",
       Cast(As("3.5", pb::FLOAT64), To(pb::INT16, 0, 0, 0, false)), "4"},
      {"CAST('-2.5'::double precision AS bigint)",
       Cast(As("-2.5", pb::FLOAT64), To(pb::INT64, 0, 0, 0, false)), "-2"},
      {"CAST('1e19'::double precision AS bigint)",
       Cast(As("1e19", pb::FLOAT64), To(pb::INT64, 0, 0, 0, false)), "ERROR: bigint out of range"},
      {"CAST('nan'::double precision AS integer)",
       Cast(As("nan", pb::FLOAT64), To(pb::INT32, 0, 0, 0, false)), "ERROR: integer out of range"},
      {"CAST('2.5'::numeric AS integer)",
       Cast(As("2.5", pb::NUMERIC), To(pb::INT32, 0, 0, 0, false)), "3"},
      {"CAST('-2.5'::numeric AS bigint)",
       Cast(As("-2.5", pb::NUMERIC), To(pb::INT64, 0, 0, 0, false)), "-3"},
      {"CAST('32767.5'::numeric AS smallint)",
       Cast(As("32767.5", pb::NUMERIC), To(pb::INT16, 0, 0, 0, false)),
       "ERROR: smallint out of range"},
      {"CAST('0.1'::double precision AS numeric)",
       Cast(As("0.1", pb::FLOAT64), To(pb::NUMERIC, 0, 0, 0, false)), "0.1"},
      {"CAST('1.5'::real AS numeric)",
       Cast(As("1.5", pb::FLOAT32), To(pb::NUMERIC, 0, 0, 0, false)), "1.5"},
      {"CAST('1e20'::double precision AS numeric)",
       Cast(As("1e20", pb::FLOAT64), To(pb::NUMERIC, 0, 0, 0, false)), "100000000000000000000"},
      {"CAST('12345678901234567890'::double precision AS numeric)",
       Cast(As("12345678901234567890", pb::FLOAT64), To(pb::NUMERIC, 0, 0, 0, false)),
       "12345678901234600000"},
      // PostgreSQL 15: 0.0000000000000000000000000000000000000005; tandem keeps 38 digits after the
      // point (rounded)
      {"CAST('5e-40'::numeric AS text)",
       Cast(As("5e-40", pb::NUMERIC), To(pb::STRING, 0, 0, 0, false)),
       "0.00000000000000000000000000000000000000"},
      // PostgreSQL 15: NaN; tandem has no numeric NaN
      {"CAST('nan'::double precision AS numeric)",
       Cast(As("nan", pb::FLOAT64), To(pb::NUMERIC, 0, 0, 0, false)),
       "ERROR: cannot convert NaN to numeric"},
      // PostgreSQL 15: -Infinity; tandem has no numeric infinity
      {"CAST('-inf'::double precision AS numeric)",
       Cast(As("-inf", pb::FLOAT64), To(pb::NUMERIC, 0, 0, 0, false)),
       "ERROR: cannot convert infinity to numeric"},
      {"CAST('0.1'::real AS double precision)",
       Cast(As("0.1", pb::FLOAT32), To(pb::FLOAT64, 0, 0, 0, false)), "0.10000000149011612"},
      {"CAST('0.1'::double precision AS real)",
       Cast(As("0.1", pb::FLOAT64), To(pb::FLOAT32, 0, 0, 0, false)), "0.1"},
      {"CAST('1e300'::double precision AS real)",
       Cast(As("1e300", pb::FLOAT64), To(pb::FLOAT32, 0, 0, 0, false)),
       "ERROR: value out of range: overflow"},
      {"CAST('1e-300'::double precision AS real)",
       Cast(As("1e-300", pb::FLOAT64), To(pb::FLOAT32, 0, 0, 0, false)),
       "ERROR: value out of range: underflow"},
      {"CAST('0.1'::numeric AS double precision)",
       Cast(As("0.1", pb::NUMERIC), To(pb::FLOAT64, 0, 0, 0, false)), "0.1"},
      {"CAST('0.1'::numeric AS real)",
       Cast(As("0.1", pb::NUMERIC), To(pb::FLOAT32, 0, 0, 0, false)), "0.1"},
      {"CAST('16777217'::integer AS real)",
       Cast(As("16777217", pb::INT32), To(pb::FLOAT32, 0, 0, 0, false)), "1.6777216e+07"},
      {"CAST('123.456'::numeric AS numeric(5,2))",
       Cast(As("123.456", pb::NUMERIC), To(pb::NUMERIC, 5, 2, 0, false)), "123.46"},
      {"CAST('999.995'::numeric AS numeric(5,2))",
       Cast(As("999.995", pb::NUMERIC), To(pb::NUMERIC, 5, 2, 0, false)),
       "ERROR: numeric field overflow"},
      {"CAST('-0.005'::numeric AS numeric(3,2))",
       Cast(As("-0.005", pb::NUMERIC), To(pb::NUMERIC, 3, 2, 0, false)), "-0.01"},
      {"CAST('12345'::integer AS numeric(4,0))",
       Cast(As("12345", pb::INT32), To(pb::NUMERIC, 4, 0, 0, false)),
       "ERROR: numeric field overflow"},
      {"CAST('1.25'::double precision AS numeric(2,1))",
       Cast(As("1.25", pb::FLOAT64), To(pb::NUMERIC, 2, 1, 0, false)), "1.3"},
      {"CAST('1'::boolean AS integer)", Cast(As("1", pb::BOOL), To(pb::INT32, 0, 0, 0, false)),
       "1"},
      {"CAST('-3'::integer AS boolean)", Cast(As("-3", pb::INT32), To(pb::BOOL, 0, 0, 0, false)),
       "true"},
      {"CAST('0'::integer AS boolean)", Cast(As("0", pb::INT32), To(pb::BOOL, 0, 0, 0, false)),
       "false"},
  };
  ExpectCases(cases);
}

// Output and input functions: any type to text and back, typmods of varchar(n) and char(n).
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, CastsThroughText) {
  const std::vector<Case> cases = {
      {"CAST('1e15'::double precision AS text)",
       Cast(As("1e15", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)), "1e+15"},
      {"CAST('1e14'::double precision AS text)",
       Cast(As("1e14", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)), "100000000000000"},
      {"CAST('123456789012345680'::double precision AS text)",
       Cast(As("123456789012345680", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)),
       "1.2345678901234568e+17"},
      {"CAST('0.0001'::double precision AS text)",
       Cast(As("0.0001", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)), "0.0001"},
      {"CAST('0.00001'::double precision AS text)",
       Cast(As("0.00001", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)), "1e-05"},
      {"CAST('1234567'::real AS text)",
       Cast(As("1234567", pb::FLOAT32), To(pb::STRING, 0, 0, 0, false)), "1.234567e+06"},
      {"CAST(CAST('383474.61436088'::numeric AS real) AS text)",
       Cast(Cast(As("383474.61436088", pb::NUMERIC), To(pb::FLOAT32, 0, 0, 0, false)),
            To(pb::STRING, 0, 0, 0, false)),
       "383474.62"},
      {"CAST(CAST('31954.562039703946'::double precision AS real) AS text)",
       Cast(Cast(As("31954.562039703946", pb::FLOAT64), To(pb::FLOAT32, 0, 0, 0, false)),
            To(pb::STRING, 0, 0, 0, false)),
       "31954.562"},
      {"CAST(CAST('-264360.8727819766'::double precision AS real) AS text)",
       Cast(Cast(As("-264360.8727819766", pb::FLOAT64), To(pb::FLOAT32, 0, 0, 0, false)),
            To(pb::STRING, 0, 0, 0, false)),
       "-264360.88"},
      {"CAST(CAST('69684093'::numeric AS real) AS text)",
       Cast(Cast(As("69684093", pb::NUMERIC), To(pb::FLOAT32, 0, 0, 0, false)),
            To(pb::STRING, 0, 0, 0, false)),
       "6.9684096e+07"},
      {"CAST(CAST('3245135902.47247'::numeric AS real) AS text)",
       Cast(Cast(As("3245135902.47247", pb::NUMERIC), To(pb::FLOAT32, 0, 0, 0, false)),
            To(pb::STRING, 0, 0, 0, false)),
       "3.2451359e+09"},
      {"CAST('123456'::real AS text)",
       Cast(As("123456", pb::FLOAT32), To(pb::STRING, 0, 0, 0, false)), "123456"},
      {"CAST('-0'::double precision AS text)",
       Cast(As("-0", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)), "-0"},
      {"CAST('-inf'::double precision AS text)",
       Cast(As("-inf", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)), "-Infinity"},
      {"CAST('nan'::double precision AS text)",
       Cast(As("nan", pb::FLOAT64), To(pb::STRING, 0, 0, 0, false)), "NaN"},
      {"CAST('-0.5'::numeric AS text)",
       Cast(As("-0.5", pb::NUMERIC), To(pb::STRING, 0, 0, 0, false)), "-0.5"},
      {"CAST('  1.5e3 '::numeric AS text)",
       Cast(As("  1.5e3 ", pb::NUMERIC), To(pb::STRING, 0, 0, 0, false)), "1500"},
      {"CAST('1.50e-2'::numeric AS text)",
       Cast(As("1.50e-2", pb::NUMERIC), To(pb::STRING, 0, 0, 0, false)), "0.0150"},
      {"CAST('abc'::numeric AS text)", Cast(As("abc", pb::NUMERIC), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: invalid input syntax for type numeric: \"abc\""},
      {"CAST('.5'::numeric AS text)", Cast(As(".5", pb::NUMERIC), To(pb::STRING, 0, 0, 0, false)),
       "0.5"},
      {"CAST('-5.'::numeric AS text)", Cast(As("-5.", pb::NUMERIC), To(pb::STRING, 0, 0, 0, false)),
       "-5"},
      {"CAST(' 12 '::integer AS text)", Cast(As(" 12 ", pb::INT32), To(pb::STRING, 0, 0, 0, false)),
       "12"},
      {"CAST('40000'::smallint AS text)",
       Cast(As("40000", pb::INT16), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: value \"40000\" is out of range for type smallint"},
      {"CAST('1x'::integer AS text)", Cast(As("1x", pb::INT32), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: invalid input syntax for type integer: \"1x\""},
      {"CAST('yes'::boolean AS text)", Cast(As("yes", pb::BOOL), To(pb::STRING, 0, 0, 0, false)),
       "true"},
      {"CAST('of'::boolean AS text)", Cast(As("of", pb::BOOL), To(pb::STRING, 0, 0, 0, false)),
       "false"},
      {"CAST('maybe'::boolean AS text)",
       Cast(As("maybe", pb::BOOL), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: invalid input syntax for type boolean: \"maybe\""},
      {"CAST('2026-12-06'::date AS text)",
       Cast(As("2026-12-06", pb::DATE), To(pb::STRING, 0, 0, 0, false)), "2026-12-06"},
      {"CAST('0044-03-15 BC'::date AS text)",
       Cast(As("0044-03-15 BC", pb::DATE), To(pb::STRING, 0, 0, 0, false)), "0044-03-15 BC"},
      {"CAST('2026-02-30'::date AS text)",
       Cast(As("2026-02-30", pb::DATE), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: date/time field value out of range: \"2026-02-30\""},
      {"CAST('4714-11-23 BC'::date AS text)",
       Cast(As("4714-11-23 BC", pb::DATE), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: date out of range: \"4714-11-23 BC\""},
      {"CAST('20261206x'::date AS text)",
       Cast(As("20261206x", pb::DATE), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: invalid input syntax for type date: \"20261206x\""},
      {"CAST('24:00:00'::time AS text)",
       Cast(As("24:00:00", pb::TIME), To(pb::STRING, 0, 0, 0, false)), "24:00:00"},
      {"CAST('12:00:00.1234567'::time AS text)",
       Cast(As("12:00:00.1234567", pb::TIME), To(pb::STRING, 0, 0, 0, false)), "12:00:00.123457"},
      {"CAST('25:00:00'::time AS text)",
       Cast(As("25:00:00", pb::TIME), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: date/time field value out of range: \"25:00:00\""},
      {"CAST('2026-12-06T12:00:00.5'::timestamp AS text)",
       Cast(As("2026-12-06T12:00:00.5", pb::TIMESTAMP), To(pb::STRING, 0, 0, 0, false)),
       "2026-12-06 12:00:00.5"},
      {"CAST('2026-12-06'::timestamp AS text)",
       Cast(As("2026-12-06", pb::TIMESTAMP), To(pb::STRING, 0, 0, 0, false)),
       "2026-12-06 00:00:00"},
      {"CAST('2026-12-06 12:00:00-08'::timestamptz AS text)",
       Cast(As("2026-12-06 12:00:00-08", pb::TIMESTAMPTZ), To(pb::STRING, 0, 0, 0, false)),
       "2026-12-06 20:00:00+00"},
      {"CAST('2026-12-06 00:30:00+05:30'::timestamptz AS text)",
       Cast(As("2026-12-06 00:30:00+05:30", pb::TIMESTAMPTZ), To(pb::STRING, 0, 0, 0, false)),
       "2026-12-05 19:00:00+00"},
      {"CAST('2026-12-06 12:00:00Z'::timestamptz AS text)",
       Cast(As("2026-12-06 12:00:00Z", pb::TIMESTAMPTZ), To(pb::STRING, 0, 0, 0, false)),
       "2026-12-06 12:00:00+00"},
      {"CAST('2026-12-06 23:30:00+05'::date AS text)",
       Cast(As("2026-12-06 23:30:00+05", pb::DATE), To(pb::STRING, 0, 0, 0, false)), "2026-12-06"},
      {"CAST('12/06/2026'::date AS text)",
       Cast(As("12/06/2026", pb::DATE), To(pb::STRING, 0, 0, 0, false)), "2026-12-06"},
      {"CAST('2026-12-06 12:00:00-08:30'::timestamp AS text)",
       Cast(As("2026-12-06 12:00:00-08:30", pb::TIMESTAMP), To(pb::STRING, 0, 0, 0, false)),
       "2026-12-06 12:00:00"},
      {"CAST('2026-12-06 12:60:00'::date AS text)",
       Cast(As("2026-12-06 12:60:00", pb::DATE), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: date/time field value out of range: \"2026-12-06 12:60:00\""},
      {"CAST('2026-12-06 24:00:00'::date AS text)",
       Cast(As("2026-12-06 24:00:00", pb::DATE), To(pb::STRING, 0, 0, 0, false)), "2026-12-06"},
      {"CAST('1 year 2 mons 3 days 04:05:06.5'::interval AS text)",
       Cast(As("1 year 2 mons 3 days 04:05:06.5", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)),
       "1 year 2 mons 3 days 04:05:06.5"},
      {"CAST('-1 day +00:00:01'::interval AS text)",
       Cast(As("-1 day +00:00:01", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)),
       "-1 days +00:00:01"},
      {"CAST('@ 1 hour ago'::interval AS text)",
       Cast(As("@ 1 hour ago", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)), "-01:00:00"},
      {"CAST('36 hours'::interval AS text)",
       Cast(As("36 hours", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)), "36:00:00"},
      {"CAST('1.5 seconds'::interval AS text)",
       Cast(As("1.5 seconds", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)), "00:00:01.5"},
      {"CAST('-1 mons'::interval AS text)",
       Cast(As("-1 mons", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)), "-1 mons"},
      {"CAST('0'::interval AS text)", Cast(As("0", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)),
       "00:00:00"},
      {"CAST('100:00:00'::interval AS text)",
       Cast(As("100:00:00", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)), "100:00:00"},
      {"CAST('1 fortnight'::interval AS text)",
       Cast(As("1 fortnight", pb::INTERVAL), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: invalid input syntax for type interval: \"1 fortnight\""},
      {"CAST('\\x0A0b'::bytea AS text)",
       Cast(As("\\x0A0b", pb::BYTEA), To(pb::STRING, 0, 0, 0, false)), "\\x0a0b"},
      {"CAST('abc'::bytea AS text)", Cast(As("abc", pb::BYTEA), To(pb::STRING, 0, 0, 0, false)),
       "\\x616263"},
      {"CAST('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid AS text)",
       Cast(As("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", pb::UUID), To(pb::STRING, 0, 0, 0, false)),
       "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
      {"CAST('{a0eebc999c0b4ef8bb6d6bb9bd380a11}'::uuid AS text)",
       Cast(As("{a0eebc999c0b4ef8bb6d6bb9bd380a11}", pb::UUID), To(pb::STRING, 0, 0, 0, false)),
       "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
      {"CAST('a0eebc99-9c0b'::uuid AS text)",
       Cast(As("a0eebc99-9c0b", pb::UUID), To(pb::STRING, 0, 0, 0, false)),
       "ERROR: invalid input syntax for type uuid: \"a0eebc99-9c0b\""},
      {"CAST('abcdef'::text AS varchar(3))",
       Cast(As("abcdef", pb::STRING), To(pb::STRING, 0, 0, 3, false)), "abc"},
      {"CAST('ab'::text AS char(4))", Cast(As("ab", pb::STRING), To(pb::STRING, 0, 0, 4, true)),
       "ab  "},
      {"CAST('abcdef'::text AS char(3))",
       Cast(As("abcdef", pb::STRING), To(pb::STRING, 0, 0, 3, true)), "abc"},
      {"CAST(CAST('12.345'::text AS numeric(4,2)) AS text)",
       Cast(Cast(As("12.345", pb::STRING), To(pb::NUMERIC, 4, 2, 0, false)),
            To(pb::STRING, 0, 0, 0, false)),
       "12.35"},
      {"CAST(CAST('123.45'::text AS numeric(4,2)) AS text)",
       Cast(Cast(As("123.45", pb::STRING), To(pb::NUMERIC, 4, 2, 0, false)),
            To(pb::STRING, 0, 0, 0, false)),
       "ERROR: numeric field overflow"},
  };
  ExpectCases(cases);
}

// date, timestamp, timestamptz, time and interval casts (the zone is UTC).
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, TemporalCasts) {
  const std::vector<Case> cases = {
      {"CAST('2026-12-06'::date AS timestamp)",
       Cast(As("2026-12-06", pb::DATE), To(pb::TIMESTAMP, 0, 0, 0, false)), "2026-12-06 00:00:00"},
      {"CAST('2026-12-06'::date AS timestamptz)",
       Cast(As("2026-12-06", pb::DATE), To(pb::TIMESTAMPTZ, 0, 0, 0, false)),
       "2026-12-06 00:00:00+00"},
      {"CAST('2026-12-06 23:59:59.999999'::timestamp AS date)",
       Cast(As("2026-12-06 23:59:59.999999", pb::TIMESTAMP), To(pb::DATE, 0, 0, 0, false)),
       "2026-12-06"},
      {"CAST('0001-01-01 12:00:00 BC'::timestamp AS date)",
       Cast(As("0001-01-01 12:00:00 BC", pb::TIMESTAMP), To(pb::DATE, 0, 0, 0, false)),
       "0001-01-01 BC"},
      {"CAST('2026-12-06 12:34:56'::timestamp AS time)",
       Cast(As("2026-12-06 12:34:56", pb::TIMESTAMP), To(pb::TIME, 0, 0, 0, false)), "12:34:56"},
      {"CAST('2026-12-06 12:34:56+02'::timestamptz AS time)",
       Cast(As("2026-12-06 12:34:56+02", pb::TIMESTAMPTZ), To(pb::TIME, 0, 0, 0, false)),
       "10:34:56"},
      {"CAST('2026-12-06 00:34:56+02'::timestamptz AS date)",
       Cast(As("2026-12-06 00:34:56+02", pb::TIMESTAMPTZ), To(pb::DATE, 0, 0, 0, false)),
       "2026-12-05"},
      {"CAST('2026-12-06 12:34:56'::timestamp AS timestamptz)",
       Cast(As("2026-12-06 12:34:56", pb::TIMESTAMP), To(pb::TIMESTAMPTZ, 0, 0, 0, false)),
       "2026-12-06 12:34:56+00"},
      {"CAST('2026-12-06 12:34:56+02'::timestamptz AS timestamp)",
       Cast(As("2026-12-06 12:34:56+02", pb::TIMESTAMPTZ), To(pb::TIMESTAMP, 0, 0, 0, false)),
       "2026-12-06 10:34:56"},
      {"CAST('1 day 25:00:00'::interval AS time)",
       Cast(As("1 day 25:00:00", pb::INTERVAL), To(pb::TIME, 0, 0, 0, false)), "01:00:00"},
      {"CAST('-01:00:00'::interval AS time)",
       Cast(As("-01:00:00", pb::INTERVAL), To(pb::TIME, 0, 0, 0, false)), "23:00:00"},
      {"CAST('12:30:00'::time AS interval)",
       Cast(As("12:30:00", pb::TIME), To(pb::INTERVAL, 0, 0, 0, false)), "12:30:00"},
      {"CAST('5874897-12-31'::date AS timestamp)",
       Cast(As("5874897-12-31", pb::DATE), To(pb::TIMESTAMP, 0, 0, 0, false)),
       "ERROR: date out of range for timestamp"},
  };
  ExpectCases(cases);
}

// The string functions by characters (UTF-8), LIKE with % _ and backslash.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, StringFunctions) {
  const std::vector<Case> cases = {
      {"concat('ab'::text, 'cd'::text)",
       Fn(pb::CONCAT, {As("ab", pb::STRING), As("cd", pb::STRING)}), "abcd"},
      {"char_length('h\u00e9llo'::text)", Fn(pb::CHAR_LENGTH, {As("h\u00e9llo", pb::STRING)}), "5"},
      {"octet_length('h\u00e9llo'::text)", Fn(pb::OCTET_LENGTH, {As("h\u00e9llo", pb::STRING)}),
       "6"},
      {"octet_length('\\x0102'::bytea)", Fn(pb::OCTET_LENGTH, {As("\\x0102", pb::BYTEA)}), "2"},
      {"lower('Ab\u00c9C'::text COLLATE \"C\")", Fn(pb::LOWER, {As("Ab\u00c9C", pb::STRING)}),
       "ab\u00c9c"},
      {"upper('ab\u00e9c'::text COLLATE \"C\")", Fn(pb::UPPER, {As("ab\u00e9c", pb::STRING)}),
       "AB\u00e9C"},
      {"substr('h\u00e9llo'::text, '2'::integer)",
       Fn(pb::SUBSTR, {As("h\u00e9llo", pb::STRING), As("2", pb::INT32)}), "\u00e9llo"},
      {"substr('hello'::text, '2'::integer, '3'::integer)",
       Fn(pb::SUBSTR, {As("hello", pb::STRING), As("2", pb::INT32), As("3", pb::INT32)}), "ell"},
      {"substr('hello'::text, '-1'::integer, '3'::integer)",
       Fn(pb::SUBSTR, {As("hello", pb::STRING), As("-1", pb::INT32), As("3", pb::INT32)}), "h"},
      {"substr('hello'::text, '0'::integer)",
       Fn(pb::SUBSTR, {As("hello", pb::STRING), As("0", pb::INT32)}), "hello"},
      {"substr('hello'::text, '9'::integer)",
       Fn(pb::SUBSTR, {As("hello", pb::STRING), As("9", pb::INT32)}), ""},
      {"substr('hello'::text, '2'::integer, '-1'::integer)",
       Fn(pb::SUBSTR, {As("hello", pb::STRING), As("2", pb::INT32), As("-1", pb::INT32)}),
       "ERROR: negative substring length not allowed"},
      {"strpos('h\u00e9llo'::text, 'llo'::text)",
       Fn(pb::STRPOS, {As("h\u00e9llo", pb::STRING), As("llo", pb::STRING)}), "3"},
      {"strpos('hello'::text, 'x'::text)",
       Fn(pb::STRPOS, {As("hello", pb::STRING), As("x", pb::STRING)}), "0"},
      {"strpos('hello'::text, ''::text)",
       Fn(pb::STRPOS, {As("hello", pb::STRING), As("", pb::STRING)}), "1"},
      {"btrim('  ab  '::text)", Fn(pb::BTRIM, {As("  ab  ", pb::STRING)}), "ab"},
      {"ltrim('xxabxx'::text, 'x'::text)",
       Fn(pb::LTRIM, {As("xxabxx", pb::STRING), As("x", pb::STRING)}), "abxx"},
      {"rtrim('xxabxy'::text, 'yx'::text)",
       Fn(pb::RTRIM, {As("xxabxy", pb::STRING), As("yx", pb::STRING)}), "xxab"},
      {"btrim('\u00e9a\u00e9'::text, '\u00e9'::text)",
       Fn(pb::BTRIM, {As("\u00e9a\u00e9", pb::STRING), As("\u00e9", pb::STRING)}), "a"},
      {"replace('abcabc'::text, 'bc'::text, 'X'::text)",
       Fn(pb::REPLACE, {As("abcabc", pb::STRING), As("bc", pb::STRING), As("X", pb::STRING)}),
       "aXaX"},
      {"replace('abc'::text, ''::text, 'X'::text)",
       Fn(pb::REPLACE, {As("abc", pb::STRING), As("", pb::STRING), As("X", pb::STRING)}), "abc"},
      {"('hello'::text LIKE 'h%o'::text)",
       Fn(pb::LIKE, {As("hello", pb::STRING), As("h%o", pb::STRING)}), "true"},
      {"('hello'::text LIKE 'h_l%'::text)",
       Fn(pb::LIKE, {As("hello", pb::STRING), As("h_l%", pb::STRING)}), "true"},
      {"('h%llo'::text LIKE 'h\\%%'::text)",
       Fn(pb::LIKE, {As("h%llo", pb::STRING), As("h\\%%", pb::STRING)}), "true"},
      {"('hello'::text LIKE 'H%'::text)",
       Fn(pb::LIKE, {As("hello", pb::STRING), As("H%", pb::STRING)}), "false"},
      {"('hello'::text ILIKE 'H%'::text)",
       Fn(pb::ILIKE, {As("hello", pb::STRING), As("H%", pb::STRING)}), "true"},
      {"('h\u00e9llo'::text LIKE 'h_llo'::text)",
       Fn(pb::LIKE, {As("h\u00e9llo", pb::STRING), As("h_llo", pb::STRING)}), "true"},
      {"('abc'::text LIKE 'abc\\'::text)",
       Fn(pb::LIKE, {As("abc", pb::STRING), As("abc\\", pb::STRING)}), "false"},
      {"('abcd'::text LIKE 'abc\\'::text)",
       Fn(pb::LIKE, {As("abcd", pb::STRING), As("abc\\", pb::STRING)}),
       "ERROR: LIKE pattern must not end with escape character"},
      {"('abcd'::text LIKE '%\\'::text)",
       Fn(pb::LIKE, {As("abcd", pb::STRING), As("%\\", pb::STRING)}),
       "ERROR: LIKE pattern must not end with escape character"},
      {"('ABC'::text ILIKE 'a_c'::text)",
       Fn(pb::ILIKE, {As("ABC", pb::STRING), As("a_c", pb::STRING)}), "true"},
      {"(''::text LIKE '%'::text)", Fn(pb::LIKE, {As("", pb::STRING), As("%", pb::STRING)}),
       "true"},
      {"('a_c'::text LIKE 'a\\_c'::text)",
       Fn(pb::LIKE, {As("a_c", pb::STRING), As("a\\_c", pb::STRING)}), "true"},
  };
  ExpectCases(cases);
}

// abs, round, trunc, floor, ceil, power, sqrt over numeric and float8.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, NumericFunctions) {
  const std::vector<Case> cases = {
      {"abs('-32768'::smallint)", Fn(pb::ABS, {As("-32768", pb::INT16)}),
       "ERROR: smallint out of range"},
      {"abs('-2147483648'::integer)", Fn(pb::ABS, {As("-2147483648", pb::INT32)}),
       "ERROR: integer out of range"},
      {"abs('-9223372036854775808'::bigint)", Fn(pb::ABS, {As("-9223372036854775808", pb::INT64)}),
       "ERROR: bigint out of range"},
      {"abs('-5'::integer)", Fn(pb::ABS, {As("-5", pb::INT32)}), "5"},
      {"abs('-1.50'::numeric)", Fn(pb::ABS, {As("-1.50", pb::NUMERIC)}), "1.50"},
      {"abs('-0.5'::double precision)", Fn(pb::ABS, {As("-0.5", pb::FLOAT64)}), "0.5"},
      {"round('2.5'::numeric)", Fn(pb::ROUND, {As("2.5", pb::NUMERIC)}), "3"},
      {"round('-2.5'::numeric)", Fn(pb::ROUND, {As("-2.5", pb::NUMERIC)}), "-3"},
      {"round('1234.5678'::numeric, '2'::integer)",
       Fn(pb::ROUND, {As("1234.5678", pb::NUMERIC), As("2", pb::INT32)}), "1234.57"},
      {"round('1234.5678'::numeric, '-2'::integer)",
       Fn(pb::ROUND, {As("1234.5678", pb::NUMERIC), As("-2", pb::INT32)}), "1200"},
      {"round('1.5'::numeric, '3'::integer)",
       Fn(pb::ROUND, {As("1.5", pb::NUMERIC), As("3", pb::INT32)}), "1.500"},
      {"trunc('-1.99'::numeric, '1'::integer)",
       Fn(pb::TRUNC, {As("-1.99", pb::NUMERIC), As("1", pb::INT32)}), "-1.9"},
      {"trunc('1299'::numeric, '-2'::integer)",
       Fn(pb::TRUNC, {As("1299", pb::NUMERIC), As("-2", pb::INT32)}), "1200"},
      {"round('2.5'::double precision)", Fn(pb::ROUND, {As("2.5", pb::FLOAT64)}), "2"},
      {"round('3.5'::double precision)", Fn(pb::ROUND, {As("3.5", pb::FLOAT64)}), "4"},
      {"trunc('-2.7'::double precision)", Fn(pb::TRUNC, {As("-2.7", pb::FLOAT64)}), "-2"},
      {"floor('-1.5'::numeric)", Fn(pb::FLOOR, {As("-1.5", pb::NUMERIC)}), "-2"},
      {"ceil('-1.5'::numeric)", Fn(pb::CEIL, {As("-1.5", pb::NUMERIC)}), "-1"},
      {"floor('2.000'::numeric)", Fn(pb::FLOOR, {As("2.000", pb::NUMERIC)}), "2"},
      {"floor('-0.5'::double precision)", Fn(pb::FLOOR, {As("-0.5", pb::FLOAT64)}), "-1"},
      {"ceil('0.5'::double precision)", Fn(pb::CEIL, {As("0.5", pb::FLOAT64)}), "1"},
      {"sqrt('2'::numeric)", Fn(pb::SQRT, {As("2", pb::NUMERIC)}), "1.414213562373095"},
      {"sqrt('16'::numeric)", Fn(pb::SQRT, {As("16", pb::NUMERIC)}), "4.000000000000000"},
      {"sqrt('0.0001'::numeric)", Fn(pb::SQRT, {As("0.0001", pb::NUMERIC)}), "0.01000000000000000"},
      {"sqrt('1000000'::numeric)", Fn(pb::SQRT, {As("1000000", pb::NUMERIC)}),
       "1000.0000000000000"},
      {"sqrt('-1'::numeric)", Fn(pb::SQRT, {As("-1", pb::NUMERIC)}),
       "ERROR: cannot take square root of a negative number"},
      {"sqrt('2'::double precision)", Fn(pb::SQRT, {As("2", pb::FLOAT64)}), "1.4142135623730951"},
      {"sqrt('-1'::double precision)", Fn(pb::SQRT, {As("-1", pb::FLOAT64)}),
       "ERROR: cannot take square root of a negative number"},
      {"power('2'::double precision, '10'::double precision)",
       Fn(pb::POWER, {As("2", pb::FLOAT64), As("10", pb::FLOAT64)}), "1024"},
      {"power('0'::double precision, '-1'::double precision)",
       Fn(pb::POWER, {As("0", pb::FLOAT64), As("-1", pb::FLOAT64)}),
       "ERROR: zero raised to a negative power is undefined"},
      {"power('-8'::double precision, '0.5'::double precision)",
       Fn(pb::POWER, {As("-8", pb::FLOAT64), As("0.5", pb::FLOAT64)}),
       "ERROR: a negative number raised to a non-integer power yields a complex result"},
      {"power('10'::double precision, '400'::double precision)",
       Fn(pb::POWER, {As("10", pb::FLOAT64), As("400", pb::FLOAT64)}),
       "ERROR: value out of range: overflow"},
      {"power('2'::numeric, '10'::numeric)",
       Fn(pb::POWER, {As("2", pb::NUMERIC), As("10", pb::NUMERIC)}), "1024.0000000000000000"},
      {"power('1.5'::numeric, '2'::numeric)",
       Fn(pb::POWER, {As("1.5", pb::NUMERIC), As("2", pb::NUMERIC)}), "2.2500000000000000"},
      {"power('2'::numeric, '-2'::numeric)",
       Fn(pb::POWER, {As("2", pb::NUMERIC), As("-2", pb::NUMERIC)}), "0.2500000000000000"},
  };
  ExpectCases(cases);
}

// date_trunc, extract (numeric) and date_part (float8) as PostgreSQL 15.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, DateTruncAndExtract) {
  const std::vector<Case> cases = {
      {"date_trunc('month', '2026-12-06 12:34:56.789'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("month", pb::STRING), As("2026-12-06 12:34:56.789", pb::TIMESTAMP)}),
       "2026-12-01 00:00:00"},
      {"date_trunc('week', '2026-12-06 12:34:56'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("week", pb::STRING), As("2026-12-06 12:34:56", pb::TIMESTAMP)}),
       "2026-11-30 00:00:00"},
      {"date_trunc('quarter', '2026-12-06 12:34:56'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("quarter", pb::STRING), As("2026-12-06 12:34:56", pb::TIMESTAMP)}),
       "2026-10-01 00:00:00"},
      {"date_trunc('hour', '2026-12-06 12:34:56+00'::timestamptz)",
       Fn(pb::DATE_TRUNC, {As("hour", pb::STRING), As("2026-12-06 12:34:56+00", pb::TIMESTAMPTZ)}),
       "2026-12-06 12:00:00+00"},
      {"date_trunc('milliseconds', '2026-12-06 12:34:56.789123'::timestamp)",
       Fn(pb::DATE_TRUNC,
          {As("milliseconds", pb::STRING), As("2026-12-06 12:34:56.789123", pb::TIMESTAMP)}),
       "2026-12-06 12:34:56.789"},
      {"date_trunc('decade', '2026-12-06 00:00:00'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("decade", pb::STRING), As("2026-12-06 00:00:00", pb::TIMESTAMP)}),
       "2020-01-01 00:00:00"},
      {"date_trunc('century', '2026-12-06 00:00:00'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("century", pb::STRING), As("2026-12-06 00:00:00", pb::TIMESTAMP)}),
       "2001-01-01 00:00:00"},
      {"date_trunc('millennium', '2000-12-06 00:00:00'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("millennium", pb::STRING), As("2000-12-06 00:00:00", pb::TIMESTAMP)}),
       "1001-01-01 00:00:00"},
      {"date_trunc('century', '0050-01-01 00:00:00 BC'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("century", pb::STRING), As("0050-01-01 00:00:00 BC", pb::TIMESTAMP)}),
       "0100-01-01 00:00:00 BC"},
      {"date_trunc('fortnight', '2026-12-06 00:00:00'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("fortnight", pb::STRING), As("2026-12-06 00:00:00", pb::TIMESTAMP)}),
       "ERROR: unit \"fortnight\" not recognized for type timestamp without time zone"},
      {"date_trunc('hour', '1 year 2 mons 3 days 04:05:06'::interval)",
       Fn(pb::DATE_TRUNC,
          {As("hour", pb::STRING), As("1 year 2 mons 3 days 04:05:06", pb::INTERVAL)}),
       "1 year 2 mons 3 days 04:00:00"},
      {"date_trunc('quarter', '1 year 5 mons 3 days'::interval)",
       Fn(pb::DATE_TRUNC, {As("quarter", pb::STRING), As("1 year 5 mons 3 days", pb::INTERVAL)}),
       "1 year 3 mons"},
      {"date_trunc('week', '3 days'::interval)",
       Fn(pb::DATE_TRUNC, {As("week", pb::STRING), As("3 days", pb::INTERVAL)}),
       "ERROR: unit \"week\" not supported for type interval"},
      {"date_trunc('YEAR', '2026-12-06 12:00:00'::timestamp)",
       Fn(pb::DATE_TRUNC, {As("YEAR", pb::STRING), As("2026-12-06 12:00:00", pb::TIMESTAMP)}),
       "2026-01-01 00:00:00"},
      {"EXTRACT(epoch FROM '2026-12-06 12:00:00.5'::timestamp)",
       Fn(pb::EXTRACT, {As("epoch", pb::STRING), As("2026-12-06 12:00:00.5", pb::TIMESTAMP)}),
       "1796558400.500000"},
      {"EXTRACT(second FROM '2026-12-06 12:00:07.25'::timestamp)",
       Fn(pb::EXTRACT, {As("second", pb::STRING), As("2026-12-06 12:00:07.25", pb::TIMESTAMP)}),
       "7.250000"},
      {"EXTRACT(milliseconds FROM '2026-12-06 12:00:07.25'::timestamp)",
       Fn(pb::EXTRACT,
          {As("milliseconds", pb::STRING), As("2026-12-06 12:00:07.25", pb::TIMESTAMP)}),
       "7250.000"},
      {"EXTRACT(microseconds FROM '12:00:07.25'::time)",
       Fn(pb::EXTRACT, {As("microseconds", pb::STRING), As("12:00:07.25", pb::TIME)}), "7250000"},
      {"EXTRACT(year FROM '0044-03-15 00:00:00 BC'::timestamp)",
       Fn(pb::EXTRACT, {As("year", pb::STRING), As("0044-03-15 00:00:00 BC", pb::TIMESTAMP)}),
       "-44"},
      {"EXTRACT(century FROM '2000-01-01'::date)",
       Fn(pb::EXTRACT, {As("century", pb::STRING), As("2000-01-01", pb::DATE)}), "20"},
      {"EXTRACT(millennium FROM '2001-01-01'::date)",
       Fn(pb::EXTRACT, {As("millennium", pb::STRING), As("2001-01-01", pb::DATE)}), "3"},
      {"EXTRACT(decade FROM '0005-01-01 BC'::date)",
       Fn(pb::EXTRACT, {As("decade", pb::STRING), As("0005-01-01 BC", pb::DATE)}), "-1"},
      {"EXTRACT(dow FROM '2026-12-06'::date)",
       Fn(pb::EXTRACT, {As("dow", pb::STRING), As("2026-12-06", pb::DATE)}), "0"},
      {"EXTRACT(isodow FROM '2026-12-06'::date)",
       Fn(pb::EXTRACT, {As("isodow", pb::STRING), As("2026-12-06", pb::DATE)}), "7"},
      {"EXTRACT(doy FROM '2024-12-31'::date)",
       Fn(pb::EXTRACT, {As("doy", pb::STRING), As("2024-12-31", pb::DATE)}), "366"},
      {"EXTRACT(week FROM '2027-01-01'::date)",
       Fn(pb::EXTRACT, {As("week", pb::STRING), As("2027-01-01", pb::DATE)}), "53"},
      {"EXTRACT(isoyear FROM '2027-01-01'::date)",
       Fn(pb::EXTRACT, {As("isoyear", pb::STRING), As("2027-01-01", pb::DATE)}), "2026"},
      {"EXTRACT(quarter FROM '2026-08-01 00:00:00+00'::timestamptz)",
       Fn(pb::EXTRACT, {As("quarter", pb::STRING), As("2026-08-01 00:00:00+00", pb::TIMESTAMPTZ)}),
       "3"},
      {"EXTRACT(julian FROM '2026-12-06'::date)",
       Fn(pb::EXTRACT, {As("julian", pb::STRING), As("2026-12-06", pb::DATE)}), "2461381"},
      {"EXTRACT(julian FROM '2026-12-06 12:00:00'::timestamp)",
       Fn(pb::EXTRACT, {As("julian", pb::STRING), As("2026-12-06 12:00:00", pb::TIMESTAMP)}),
       "2461381.50000000000000000000"},
      {"EXTRACT(epoch FROM '2026-12-06'::date)",
       Fn(pb::EXTRACT, {As("epoch", pb::STRING), As("2026-12-06", pb::DATE)}), "1796515200"},
      {"EXTRACT(hour FROM '2026-12-06'::date)",
       Fn(pb::EXTRACT, {As("hour", pb::STRING), As("2026-12-06", pb::DATE)}),
       "ERROR: unit \"hour\" not supported for type date"},
      {"EXTRACT(epoch FROM '01:00:00.5'::time)",
       Fn(pb::EXTRACT, {As("epoch", pb::STRING), As("01:00:00.5", pb::TIME)}), "3600.500000"},
      {"EXTRACT(day FROM '01:00:00'::time)",
       Fn(pb::EXTRACT, {As("day", pb::STRING), As("01:00:00", pb::TIME)}),
       "ERROR: unit \"day\" not supported for type time without time zone"},
      {"EXTRACT(epoch FROM '1 year 1 mon 1 day 00:00:01.5'::interval)",
       Fn(pb::EXTRACT,
          {As("epoch", pb::STRING), As("1 year 1 mon 1 day 00:00:01.5", pb::INTERVAL)}),
       "34236001.500000"},
      {"EXTRACT(hour FROM '-25:30:00'::interval)",
       Fn(pb::EXTRACT, {As("hour", pb::STRING), As("-25:30:00", pb::INTERVAL)}), "-25"},
      {"EXTRACT(month FROM '14 mons'::interval)",
       Fn(pb::EXTRACT, {As("month", pb::STRING), As("14 mons", pb::INTERVAL)}), "2"},
      {"EXTRACT(quarter FROM '14 mons'::interval)",
       Fn(pb::EXTRACT, {As("quarter", pb::STRING), As("14 mons", pb::INTERVAL)}), "1"},
      {"EXTRACT(second FROM '-00:01:02.5'::interval)",
       Fn(pb::EXTRACT, {As("second", pb::STRING), As("-00:01:02.5", pb::INTERVAL)}), "-2.500000"},
      {"EXTRACT(dow FROM '1 day'::interval)",
       Fn(pb::EXTRACT, {As("dow", pb::STRING), As("1 day", pb::INTERVAL)}),
       "ERROR: unit \"dow\" not supported for type interval"},
      {"EXTRACT(foo FROM '2026-12-06 00:00:00'::timestamp)",
       Fn(pb::EXTRACT, {As("foo", pb::STRING), As("2026-12-06 00:00:00", pb::TIMESTAMP)}),
       "ERROR: unit \"foo\" not recognized for type timestamp without time zone"},
      {"EXTRACT(year FROM '5874897-12-31'::date)",
       Fn(pb::EXTRACT, {As("year", pb::STRING), As("5874897-12-31", pb::DATE)}), "5874897"},
      {"EXTRACT(epoch FROM '5874897-12-31'::date)",
       Fn(pb::EXTRACT, {As("epoch", pb::STRING), As("5874897-12-31", pb::DATE)}),
       "185331706992000"},
      {"EXTRACT(week FROM '5874897-12-31'::date)",
       Fn(pb::EXTRACT, {As("week", pb::STRING), As("5874897-12-31", pb::DATE)}), "1"},
      {"EXTRACT(julian FROM '4714-11-24 BC'::date)",
       Fn(pb::EXTRACT, {As("julian", pb::STRING), As("4714-11-24 BC", pb::DATE)}), "0"},
      {"EXTRACT(isoyear FROM '2021-01-03'::date)",
       Fn(pb::EXTRACT, {As("isoyear", pb::STRING), As("2021-01-03", pb::DATE)}), "2020"},
      {"EXTRACT(week FROM '2021-01-03'::date)",
       Fn(pb::EXTRACT, {As("week", pb::STRING), As("2021-01-03", pb::DATE)}), "53"},
      {"EXTRACT(dow FROM '0001-01-01 00:00:00 BC'::timestamp)",
       Fn(pb::EXTRACT, {As("dow", pb::STRING), As("0001-01-01 00:00:00 BC", pb::TIMESTAMP)}), "6"},
      {"date_part('epoch', '2026-12-06 12:00:00.5'::timestamp)",
       Fn(pb::DATE_PART, {As("epoch", pb::STRING), As("2026-12-06 12:00:00.5", pb::TIMESTAMP)}),
       "1796558400.5"},
      {"date_part('epoch', '8237-03-13 09:38:53.770583'::timestamp)",
       Fn(pb::DATE_PART,
          {As("epoch", pb::STRING), As("8237-03-13 09:38:53.770583", pb::TIMESTAMP)}),
       "197773609133.7706"},
      {"date_part('minute', '1602-10-16'::date)",
       Fn(pb::DATE_PART, {As("minute", pb::STRING), As("1602-10-16", pb::DATE)}), "0"},
      {"date_part('julian', '2026-12-06 06:00:00.1'::timestamp)",
       Fn(pb::DATE_PART, {As("julian", pb::STRING), As("2026-12-06 06:00:00.1", pb::TIMESTAMP)}),
       "2461381.2500011576"},
      {"date_part('milliseconds', '2026-12-06 06:00:07.123457'::timestamp)",
       Fn(pb::DATE_PART,
          {As("milliseconds", pb::STRING), As("2026-12-06 06:00:07.123457", pb::TIMESTAMP)}),
       "7123.457"},
      {"date_part('epoch', '1 year 1 mon 1 day 00:00:01.000001'::interval)",
       Fn(pb::DATE_PART,
          {As("epoch", pb::STRING), As("1 year 1 mon 1 day 00:00:01.000001", pb::INTERVAL)}),
       "34236001.000001"},
      {"date_part('second', '-00:01:02.7'::interval)",
       Fn(pb::DATE_PART, {As("second", pb::STRING), As("-00:01:02.7", pb::INTERVAL)}), "-2.7"},
      {"date_part('second', '00:00:01.1'::time)",
       Fn(pb::DATE_PART, {As("second", pb::STRING), As("00:00:01.1", pb::TIME)}), "1.1"},
      {"date_part('doy', '2026-12-06'::date)",
       Fn(pb::DATE_PART, {As("doy", pb::STRING), As("2026-12-06", pb::DATE)}), "340"},
  };
  ExpectCases(cases);
}

// COALESCE stops at its first non-null argument; the others are null in, null out.
// Expectations: PostgreSQL 15 (TimeZone UTC), `SELECT (<query>)::text` for each query.
TEST(ReferenceTypes, NullsAndConditionalFunctions) {
  const std::vector<Case> cases = {
      {"coalesce(NULL::numeric, '1.50'::numeric)",
       Fn(pb::COALESCE, {NullLit(pb::NUMERIC), As("1.50", pb::NUMERIC)}), "1.50"},
      {"coalesce('2'::numeric, ('1'::numeric / '0'::numeric))",
       Fn(pb::COALESCE,
          {As("2", pb::NUMERIC), Binary(pb::DIV, As("1", pb::NUMERIC), As("0", pb::NUMERIC))}),
       "2"},
      {"greatest(NULL::integer, '3'::integer, '7'::integer)",
       Fn(pb::GREATEST, {NullLit(pb::INT32), As("3", pb::INT32), As("7", pb::INT32)}), "7"},
      {"least(NULL::date, NULL::date)", Fn(pb::LEAST, {NullLit(pb::DATE), NullLit(pb::DATE)}),
       "NULL"},
      {"char_length(NULL::text)", Fn(pb::CHAR_LENGTH, {NullLit(pb::STRING)}), "NULL"},
      {"nullif(NULL::integer, '1'::integer)",
       Fn(pb::NULLIF, {NullLit(pb::INT32), As("1", pb::INT32)}), "NULL"},
  };
  ExpectCases(cases);
}

Datum Num(const char* text) { return NumericInput(text).datum; }
Datum Iv(const char* text) { return InputText(text, To(pb::INTERVAL, 0, 0, 0, false)).datum; }
std::string Text(const Datum& d, pb::ScalarType type) {
  if (std::holds_alternative<Null>(d)) return "NULL";
  return OutputText(d, To(type, 0, 0, 0, false));
}

// A dataflow over a source typed int2, numeric, float4, interval: the evaluator types every plan
// from the source's schema, so the map and the aggregates have their types' semantics.
Evaluator TypedEvaluator(pb::Plan plan) {
  pb::Command command = EmptyDataflow("typed");
  pb::DataflowDescription desc = *Desc(command);
  pb::SourceImport source = LogImport("u1");
  *source.mutable_schema() =
      MakeSchema({MakeColumn("a", pb::INT16, true), MakeColumn("b", pb::NUMERIC, true),
                  MakeColumn("c", pb::FLOAT32, true), MakeColumn("d", pb::INTERVAL, true)});
  *desc.add_source_imports() = std::move(source);
  *desc.add_objects_to_build() = Build("u2", std::move(plan));
  Evaluator e(desc);
  const float f1 = 0.1f, f2 = 0.2f;
  const std::vector<Row> rows = {
      {I(32767), Num("1.5"), Datum(double{f1}), Iv("1 mon")},
      {I(32767), Num("2.25"), Datum(double{f2}), Iv("1 day")},
      {kNull, Num("2.25"), Datum(double{f2}), Iv("1 day 12:00:00")},
      {kNull, kNull, kNull, Iv("-00:00:00.5")},
      {kNull, Num("-0.125"), kNull, kNull},
  };
  for (const auto& row : rows) e.AddUpdate("u1", Update{row, 0, 1});
  return e;
}

// PostgreSQL 15: SELECT sum(a), sum(b), avg(b), min(b), max(b), sum(c), sum(d), avg(d), min(d),
// max(d) FROM (VALUES (32767::smallint, 1.5::numeric, 0.1::real, '1 mon'::interval),
// (32767, 2.25, 0.2, '1 day'), (NULL, 2.25, 0.2, '1 day 12:00:00'), (NULL, NULL, NULL,
// '-00:00:00.5'), (NULL, -0.125, NULL, NULL)) t(a, b, c, d)
// -> 65534 | 5.875 | 1.4687500000000000 | -0.125 | 2.25 | 0.5 | 1 mon 2 days 11:59:59.5 |
//    8 days 02:59:59.875 | -00:00:00.5 | 1 mon
TEST(ReferenceTypes, SumAndAvgOfNumericIntervalFloat4AndInt2) {
  const Evaluator e = TypedEvaluator(ReducePlan(GetPlan("u1"), {},
                                                {{pb::SUM, 0},
                                                 {pb::SUM, 1},
                                                 {pb::AVG, 1},
                                                 {pb::MIN, 1},
                                                 {pb::MAX, 1},
                                                 {pb::SUM, 2},
                                                 {pb::SUM, 3},
                                                 {pb::AVG, 3},
                                                 {pb::MIN, 3},
                                                 {pb::MAX, 3}}));
  const auto out = e.At("u2", 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_FALSE(out->HasError()) << out->FirstError();
  ASSERT_EQ(out->rows.size(), 1u);
  const Row& row = out->rows.begin()->first;
  const std::vector<pb::ScalarType> types = {pb::INT64,    pb::NUMERIC, pb::NUMERIC,  pb::NUMERIC,
                                             pb::NUMERIC,  pb::FLOAT32, pb::INTERVAL, pb::INTERVAL,
                                             pb::INTERVAL, pb::INTERVAL};
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < row.size(); ++i) shown.push_back(Text(row[i], types.at(i)));
  const std::vector<std::string> expected = {
      "65534",       "5.875", "1.4687500000000000",      "-0.125",
      "2.25",        "0.5",   "1 mon 2 days 11:59:59.5", "8 days 02:59:59.875",
      "-00:00:00.5", "1 mon"};
  EXPECT_EQ(shown, expected);
  EXPECT_TRUE(std::holds_alternative<std::int64_t>(row[0])) << "SUM of int2 is an int8";
}

// MIN/MAX follow the datum order: of two equal values the one of the smaller scale (numeric) or
// fewer months (interval) is the smaller. (PostgreSQL returns either of the equal values: for
// min/max of '1 mon' and '30 days' it answers 30 days both times.)
TEST(ReferenceTypes, MinAndMaxOfEqualValuesFollowTheDatumOrder) {
  const Contents input = Make({{G(1, Num("1.50")), 1}, {G(1, Num("1.5")), 1}});
  const Types types = {To(pb::INT64, 0, 0, 0, false), To(pb::NUMERIC, 0, 0, 0, false),
                       To(pb::STRING, 0, 0, 0, false)};
  const Contents out = ReduceOf(input, Agg({{pb::MIN, 1}, {pb::MAX, 1}}), types);
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(NumericOutput(std::get<Numeric>(out.rows.begin()->first[1])), "1.5");
  EXPECT_EQ(NumericOutput(std::get<Numeric>(out.rows.begin()->first[2])), "1.50");
  const Contents months = Make({{G(1, Iv("1 mon")), 1}, {G(1, Iv("30 days")), 1}});
  const Types iv = {To(pb::INT64, 0, 0, 0, false), To(pb::INTERVAL, 0, 0, 0, false),
                    To(pb::STRING, 0, 0, 0, false)};
  const Contents m = ReduceOf(months, Agg({{pb::MIN, 1}, {pb::MAX, 1}}), iv);
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(Text(m.rows.begin()->first[1], pb::INTERVAL), "30 days");
  EXPECT_EQ(Text(m.rows.begin()->first[2], pb::INTERVAL), "1 mon");
}

// PostgreSQL 15: SELECT (a + a) FROM (VALUES (32767::smallint)) t(a) -> ERROR: smallint out of
// range; SELECT b / 3, c * c FROM (VALUES (2.25::numeric, 0.1::real)) t(b, c)
// -> 0.75000000000000000000 | 0.010000001; SELECT 1.5::numeric / 3, 0.2::real * 0.2::real
// -> 0.50000000000000000000 | 0.040000003
TEST(ReferenceTypes, MapsAreTypedFromTheSourceSchema) {
  pb::ScalarExpr third = Binary(pb::DIV, Col(1), Cast(IntLit(3), To(pb::NUMERIC, 0, 0, 0, false)));
  const Evaluator quotient =
      TypedEvaluator(MfpPlan(GetPlan("u1"), Mfp({third, Binary(pb::MUL, Col(2), Col(2))},
                                                {Unary(pb::IS_NOT_NULL, Col(2))}, {4, 5})));
  const auto rows = quotient.At("u2", 0);
  ASSERT_TRUE(rows.ok());
  std::vector<std::string> shown;
  for (const auto& [row, count] : rows->rows) {
    shown.push_back(Text(row[0], pb::NUMERIC) + " " + Text(row[1], pb::FLOAT32));
  }
  EXPECT_EQ(shown, (std::vector<std::string>{"0.50000000000000000000 0.010000001",
                                             "0.75000000000000000000 0.040000003"}));
  const Evaluator overflow =
      TypedEvaluator(MfpPlan(GetPlan("u1"), Mfp({Binary(pb::ADD, Col(0), Col(0))}, {}, {4})));
  const auto errors = overflow.At("u2", 0);
  ASSERT_TRUE(errors.ok());
  EXPECT_EQ(errors->FirstError(), "smallint out of range");
  EXPECT_EQ(ToString(errors->rows), "{(null) x3}");
}

// The reference's datum order of the new kinds (datum_order.h).
TEST(ReferenceOrder, NewKindsOrderByKindThenValue) {
  const std::vector<Datum> ascending = {
      Datum{std::string("z")},
      Num("-1"),
      Num("1.5"),
      Num("1.50"),
      Num("1.6"),
      Datum{Bytes{"a"}},
      Datum{Date{-1}},
      Datum{Date{0}},
      Datum{TimeOfDay{0}},
      Datum{TimeOfDay{kMicrosPerDay}},
      Datum{Timestamp{-1}},
      Datum{TimestampTz{-5}},
      Iv("-1 day"),
      Iv("30 days"),
      Iv("1 mon"),
      Iv("1 mon 00:00:01"),
      Datum{Uuid{}},
  };
  for (std::size_t i = 0; i < ascending.size(); ++i) {
    for (std::size_t j = 0; j < ascending.size(); ++j) {
      const int expected = i < j ? -1 : (i > j ? 1 : 0);
      EXPECT_EQ(OrderDatums(ascending[i], ascending[j]), expected) << i << " vs " << j;
    }
  }
  EXPECT_EQ(CompareValues(Num("1.5"), Num("1.50")), 0) << "as SQL values they are equal";
  EXPECT_EQ(CompareValues(Iv("1 mon"), Iv("30 days")), 0);
}

TEST(ReferenceTypes, ProtocolDatumsOfTheNewKindsRoundTrip) {
  const Row row = {Num("-12.50"),
                   Datum{Bytes{std::string("\0\1", 2)}},
                   Datum{Date{-2440588}},
                   Datum{TimeOfDay{kMicrosPerDay}},
                   Datum{Timestamp{-1}},
                   Datum{TimestampTz{1}},
                   Iv("-1 years +2 days -00:00:03"),
                   Datum{Uuid{{1, 2}}}};
  EXPECT_EQ(OrderRows(FromProto(ToProto(row)), row), 0);
  EXPECT_EQ(ToProto(row).datums(0).numeric(), "-12.50");
}

// ---- keys compare by value ------------------------------------------------------------------

// A row of a numeric key and an int64 value.
Row NK(const char* numeric, std::int64_t v) { return {Num(numeric), I(v)}; }
// A row of an interval key and an int64 value.
Row IK(const char* interval, std::int64_t v) { return {Iv(interval), I(v)}; }

// The key order (datum_order.h) is the datum order without scale, months and days.
TEST(ReferenceKeys, NumericsCompareByValueIntervalsBySpanAndEveryOtherDatumAsInTheDatumOrder) {
  EXPECT_EQ(OrderKeyDatums(Num("1.5"), Num("1.50")), 0);
  EXPECT_EQ(OrderKeyDatums(Num("1.500"), Num("1.5")), 0);
  EXPECT_EQ(OrderKeyDatums(Num("0"), Num("0.00")), 0);
  EXPECT_EQ(OrderKeyDatums(Num("-2.250"), Num("-2.25")), 0);
  EXPECT_LT(OrderKeyDatums(Num("1.50"), Num("1.6")), 0);
  EXPECT_LT(OrderKeyDatums(Num("-2.25"), Num("1.5")), 0);
  EXPECT_EQ(OrderKeyDatums(Iv("1 mon"), Iv("30 days")), 0);
  EXPECT_EQ(OrderKeyDatums(Iv("30 days"), Iv("720:00:00")), 0);
  EXPECT_EQ(OrderKeyDatums(Iv("1 day"), Iv("24:00:00")), 0);
  EXPECT_LT(OrderKeyDatums(Iv("1 mon"), Iv("30 days 00:00:01")), 0);
  EXPECT_GT(OrderKeyDatums(Iv("-1 day"), Iv("-25:00:00")), 0);
  EXPECT_LT(OrderKeyDatums(I(1), Num("1")), 0) << "kinds first: an int64 is never a numeric key";
  EXPECT_EQ(OrderKeyDatums(kNull, kNull), 0);
  EXPECT_LT(OrderKeyDatums(S("a"), S("a ")), 0);
  EXPECT_EQ(OrderKeys({Num("1.5"), Iv("1 mon")}, {Num("1.50"), Iv("720:00:00")}), 0);
  EXPECT_LT(OrderKeys({Num("1.5")}, {Num("1.50"), kNull}), 0) << "a proper prefix first";
  // The datum order refines the key order: it orders the spellings of one key among themselves.
  const std::vector<Datum> ascending = {Num("1.5"),  Num("1.50"),         Num("1.500"),
                                        Num("1.6"),  Iv("720:00:00"),     Iv("30 days"),
                                        Iv("1 mon"), Iv("1 mon 00:00:01")};
  for (std::size_t i = 0; i < ascending.size(); ++i) {
    for (std::size_t j = i + 1; j < ascending.size(); ++j) {
      EXPECT_LT(OrderDatums(ascending[i], ascending[j]), 0) << i << " vs " << j;
      EXPECT_LE(OrderKeyDatums(ascending[i], ascending[j]), 0) << i << " vs " << j;
    }
  }
}

TEST(ReferenceKeys, ReduceGroupsSpellingsOfOneValueAndPrintsTheSmallestPresent) {
  const auto count_sum = ReducePlan(GetPlan("x"), {0}, {{pb::COUNT, 1}, {pb::SUM, 1}}).reduce();
  auto reduced = [&](std::vector<std::pair<Row, std::int64_t>> rows) {
    return ToString(ReduceOf(Make(std::move(rows)), count_sum).rows);
  };
  // 1.50 and 1.5 are one group over both members; both present, it prints as 1.5.
  EXPECT_EQ(reduced({{NK("1.50", 10), 2}, {NK("1.5", 1), 1}, {NK("2", 5), 1}}),
            "{(numeric '1.5', 3, 21) x1, (numeric '2', 1, 5) x1}");
  // 1.5's count is negative: the group prints as 1.50, and 1.5's member still counts.
  EXPECT_EQ(reduced({{NK("1.5", 1), -1}, {NK("1.50", 10), 2}}), "{(numeric '1.50', 1, 19) x1}");
  // 1.5's rows sum to zero (each row's own count is not): 1.500 is the smallest present.
  EXPECT_EQ(reduced({{NK("1.5", 1), 1}, {NK("1.5", 2), -1}, {NK("1.500", 10), 1}}),
            "{(numeric '1.500', 1, 9) x1}");
  // Spellings whose counts cancel as one value leave no group.
  EXPECT_EQ(reduced({{NK("1.5", 1), 1}, {NK("1.50", 1), -1}}), "{}");
  // Intervals by span: '720:00:00' < '30 days' < '1 mon' in the datum order.
  EXPECT_EQ(reduced({{IK("1 mon", 1), 1}, {IK("30 days", 2), 1}}),
            "{(interval '30 days', 2, 3) x1}");
  EXPECT_EQ(reduced({{IK("1 mon", 1), 1}, {IK("720:00:00", 2), 1}, {IK("30 days", 4), -1}}),
            "{(interval '720:00:00', 1, -1) x1}");
}

TEST(ReferenceKeys, JoinMatchesKeysEqualByValueAndEachSideKeepsItsSpelling) {
  const Contents left = Make({{NK("1.5", 1), 1}, {NK("2", 2), 1}, {NK("7", 3), 1}});
  const Contents right =
      Make({{NK("1.50", 10), 2}, {NK("1.500", 11), 1}, {NK("2.0", 20), 1}, {{kNull, I(0)}, 1}});
  EXPECT_EQ(ToString(JoinOf(left, right, Join({0}, {0}), 2).rows),
            ToString(Expect({{{Num("1.5"), I(1), Num("1.50"), I(10)}, 2},
                             {{Num("1.5"), I(1), Num("1.500"), I(11)}, 1},
                             {{Num("2"), I(2), Num("2.0"), I(20)}, 1}})));
  // LEFT_OUTER: '1 mon' finds '720:00:00', so only the unmatched '1 day' is padded.
  const Contents months = Make({{IK("1 mon", 1), 1}, {IK("1 day", 2), 1}});
  const Contents hours = Make({{IK("720:00:00", 3), 1}});
  EXPECT_EQ(ToString(JoinOf(months, hours, Join({0}, {0}, pb::LEFT_OUTER), 2).rows),
            ToString(Expect({{{Iv("1 day"), I(2), kNull, kNull}, 1},
                             {{Iv("1 mon"), I(1), Iv("720:00:00"), I(3)}, 1}})));
}

// A row's count is the sum over its spellings, so a positive spelling beside a negative one may
// leave nothing.
TEST(ReferenceKeys, DistinctAndThresholdSumTheCountsOfEverySpellingOfARow) {
  const Contents cancel = Make({{NK("1.5", 1), -1}, {NK("1.50", 1), 1}});
  EXPECT_TRUE(DistinctOf(cancel).rows.empty()) << "the value's total is 0";
  EXPECT_TRUE(ThresholdOf(cancel).rows.empty());
  // 1.5 x-1, 1.50 x2, 1.500 x1: total 2, printed as 1.50 (the smallest with a positive count).
  const Contents mixed =
      Make({{NK("1.5", 1), -1}, {NK("1.50", 1), 2}, {NK("1.500", 1), 1}, {NK("3", 1), 1}});
  EXPECT_EQ(ToString(DistinctOf(mixed).rows), "{(numeric '1.50', 1) x1, (numeric '3', 1) x1}");
  EXPECT_EQ(ToString(ThresholdOf(mixed).rows), "{(numeric '1.50', 1) x2, (numeric '3', 1) x1}");
  // Every column by value: rows that differ by value in another column stay apart.
  const Contents apart = Make({{NK("1.5", 1), 1}, {NK("1.50", 2), 1}});
  EXPECT_EQ(ToString(DistinctOf(apart).rows), ToString(apart.rows));
  EXPECT_EQ(ToString(ThresholdOf(apart).rows), ToString(apart.rows));
  // Intervals: '720:00:00' is not present (x-1); of the rest '30 days' is the smallest.
  const Contents spans = Make({{{Iv("1 mon")}, 2}, {{Iv("30 days")}, 1}, {{Iv("720:00:00")}, -1}});
  EXPECT_EQ(ToString(DistinctOf(spans).rows), "{(interval '30 days') x1}");
  EXPECT_EQ(ToString(ThresholdOf(spans).rows), "{(interval '30 days') x2}");
}

TEST(ReferenceKeys, TopKGroupsByTheKeyValueAndKeepsItsRowsAsTheyAre) {
  const Contents input =
      Make({{NK("1.5", 3), 1}, {NK("1.50", 1), 1}, {NK("1.500", 2), 1}, {NK("2", 9), 1}});
  EXPECT_EQ(ToString(TopKOf(input, TopK({0}, {{1, false, false}}, 2)).rows),
            "{(numeric '1.50', 1) x1, (numeric '1.500', 2) x1, (numeric '2', 9) x1}");
}

TEST(ReferenceKeys, PeekKeysSelectTheRowsWhoseKeyIsEqualByValue) {
  const Contents c = Make({{NK("1.5", 1), 1}, {NK("1.50", 2), 1}, {NK("2", 3), 1}});
  EXPECT_EQ(ToString(AnswerPeek(c, {0}, {{Num("1.500")}}, pb::MapFilterProject{}, pb::Finishing{})),
            "[(numeric '1.5', 1) x1, (numeric '1.50', 2) x1]");
  EXPECT_EQ(ToString(AnswerPeek(c, {0}, {{Num("1.5")}, {Num("1.50")}}, pb::MapFilterProject{},
                                pb::Finishing{})),
            "[(numeric '1.5', 1) x1, (numeric '1.50', 2) x1]")
      << "two spellings of one key select its rows once";
  const Contents spans = Make({{IK("1 mon", 1), 1}, {IK("1 day", 2), 1}});
  EXPECT_EQ(
      ToString(AnswerPeek(spans, {0}, {{Iv("30 days")}}, pb::MapFilterProject{}, pb::Finishing{})),
      "[(interval '1 mon', 1) x1]");
}

TEST(ReferenceKeys, AnUpsertForAKeyEqualByValueReplacesItsRowAndADeleteRemovesIt) {
  const std::vector<SourceRecord> numerics = {Up({Num("1.5"), S("a")}, 0),
                                              Up({Num("1.50"), S("b")}, 1), Del({Num("1.500")}, 2)};
  EXPECT_EQ(ToString(UpsertContents(numerics, {0}, 0)), "{(numeric '1.5', \"a\") x1}");
  EXPECT_EQ(ToString(UpsertContents(numerics, {0}, 1)), "{(numeric '1.50', \"b\") x1}");
  EXPECT_EQ(ToString(UpsertContents(numerics, {0}, 2)), "{}");
  // At one time the later added wins whatever its spelling.
  const std::vector<SourceRecord> intervals = {
      Up({Iv("1 mon"), S("c")}, 0), Up({Iv("720:00:00"), S("d")}, 0), Del({Iv("30 days")}, 1)};
  EXPECT_EQ(ToString(UpsertContents(intervals, {0}, 0)), "{(interval '720:00:00', \"d\") x1}");
  EXPECT_EQ(ToString(UpsertContents(intervals, {0}, 1)), "{}");
}

}  // namespace
}  // namespace tandem::reference
