// The reference evaluator (tests/reference/) on small cases computed by hand.
#include "reference/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "base/datum_text.h"
#include "ipc/validate.h"
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

}  // namespace
}  // namespace tandem::reference
