// The shared parts of the randomized differential suites (runtime_correctness_test.cc,
// import_correctness_test.cc, upsert_correctness_test.cc): random expressions, plans, data and
// peeks, the log file of a source, upsert records and their S/D log file, and the controller's side
// of a session (frontiers, answers, protocol invariants), with the comparison of a runtime's answer
// against the reference evaluator's (tests/reference/).
//
// Everything is deterministic in the generator's seed, under every compiler, so that a failing
// case reruns alone (the rule of the draws: class Generator).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ipc/codec.h"
#include "reference/reference.h"
#include "reference/reference_values.h"
#include "subscribe_stream.h"
#include "supervisor_harness.h"
#include "thorough.h"

namespace tandem::testing {

namespace pb = ::tandem::protocol;
using reference::Contents;
using reference::Evaluator;
using reference::PeekAnswer;

// ---- random generation ----------------------------------------------------------------------

struct ColumnType {
  pb::ScalarType type = pb::INT64;
  bool nullable = false;
};
using Types = std::vector<ColumnType>;

// Strings of the data domain: spaces, quotes, backslashes and the empty string exercise the log
// format's quoting.
inline const std::vector<std::string>& StringDomain() {
  static const std::vector<std::string> kStrings = {"a", "b", "a b", "q\"t", "back\\slash", ""};
  return kStrings;
}

// The data domains of the types of DESIGN §16 (Generator::EnableNewTypes): few values, so that
// equal ones recur, with three spellings of one value that are equal as values (and as keys) but
// not as datums (1.5, 1.50 and 1.500; '1 mon', '30 days' and '720:00:00'), a leap day and month
// ends (interval arithmetic clamps them).
inline const std::vector<std::string>& NumericDomain() {
  static const std::vector<std::string> kNumerics = {
      "0", "1", "1.5", "1.50", "1.500", "-2.25", "0.001", "-0.5", "12345.6789", "3"};
  return kNumerics;
}
inline const std::vector<std::int32_t>& DateDomain() {
  // 1969-12-31, 2000-01-01, 2024-02-29, 2026-01-31, 2026-12-06
  static const std::vector<std::int32_t> kDays = {-1, 10957, 19782, 20484, 20793};
  return kDays;
}
inline const std::vector<std::int64_t>& ClockDomain() {
  // 00:00, 12:00, 23:59:59.5
  static const std::vector<std::int64_t> kClocks = {0, 43'200'000'000, 86'399'500'000};
  return kClocks;
}
inline const std::vector<Interval>& IntervalDomain() {
  static const std::vector<Interval> kIntervals = {{1, 0, 0},
                                                   {0, 30, 0},
                                                   {0, 0, 2'592'000'000'000},
                                                   {0, 1, 7'200'000'000},
                                                   {0, -1, 0},
                                                   {0, 0, 1'500'000},
                                                   {14, 0, 0},
                                                   {0, 0, 0}};
  return kIntervals;
}

inline const std::vector<std::string>& ByteaDomain() {
  static const std::vector<std::string> kBytes = {"", std::string(1, '\0'), "ab", "\xff\x10"};
  return kBytes;
}
inline const std::vector<Uuid>& UuidDomain() {
  static const std::vector<Uuid> kUuids = {Uuid{},
                                           Uuid{{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
                                                 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}},
                                           Uuid{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}};
  return kUuids;
}

class Random {
 public:
  explicit Random(std::uint64_t seed) : rng_(seed) {}
  // Uniform in [0, n).
  std::uint64_t Below(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }
  std::int64_t Between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }
  std::mt19937_64& engine() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

inline pb::ScalarExpr ColumnExpr(std::uint32_t c) {
  pb::ScalarExpr e;
  e.set_column(c);
  return e;
}

inline pb::ScalarExpr LiteralExpr(const Datum& d, pb::ScalarType type) {
  pb::ScalarExpr e;
  *e.mutable_literal()->mutable_value() = reference::ToProto(d);
  e.mutable_literal()->set_type(type);
  return e;
}

inline pb::ScalarExpr UnaryExpr(pb::UnaryFunc f, pb::ScalarExpr x) {
  pb::ScalarExpr e;
  e.mutable_unary()->set_func(f);
  *e.mutable_unary()->mutable_expr() = std::move(x);
  return e;
}

inline pb::ScalarExpr BinaryExpr(pb::BinaryFunc f, pb::ScalarExpr l, pb::ScalarExpr r) {
  pb::ScalarExpr e;
  e.mutable_binary()->set_func(f);
  *e.mutable_binary()->mutable_left() = std::move(l);
  *e.mutable_binary()->mutable_right() = std::move(r);
  return e;
}

// `x` as `type` (no typmod).
inline pb::ScalarExpr CastExpr(pb::ScalarExpr x, pb::ScalarType type) {
  pb::ScalarExpr e;
  *e.mutable_cast()->mutable_expr() = std::move(x);
  e.mutable_cast()->mutable_to()->set_type(type);
  e.mutable_cast()->mutable_to()->set_nullable(true);
  return e;
}

inline pb::ScalarExpr CallExpr(pb::Func f, std::vector<pb::ScalarExpr> args) {
  pb::ScalarExpr e;
  e.mutable_call()->set_func(f);
  for (auto& a : args) *e.mutable_call()->add_args() = std::move(a);
  return e;
}

inline pb::ScalarExpr IfExpr(pb::ScalarExpr c, pb::ScalarExpr t, pb::ScalarExpr f) {
  pb::ScalarExpr e;
  *e.mutable_if_then_else()->mutable_cond() = std::move(c);
  *e.mutable_if_then_else()->mutable_then() = std::move(t);
  *e.mutable_if_then_else()->mutable_els() = std::move(f);
  return e;
}

// How often each plan node was generated (CountOperators): what a suite covered.
struct OperatorCounts {
  int joins = 0, left_joins = 0, self_joins = 0, chained_joins = 0, two_key_joins = 0;
  int top_ks = 0, negates = 0, thresholds = 0, except_alls = 0;
  int new_aggregates = 0;  // COUNT_NON_NULL, COUNT_DISTINCT, AVG, ANY, ALL
  int avg_float = 0;       // AVG of a FLOAT64 column
  int total() const { return joins + top_ks + negates + thresholds + new_aggregates; }
  OperatorCounts& operator+=(const OperatorCounts& o) {
    joins += o.joins, left_joins += o.left_joins, self_joins += o.self_joins;
    chained_joins += o.chained_joins, two_key_joins += o.two_key_joins;
    top_ks += o.top_ks, negates += o.negates, thresholds += o.thresholds;
    except_alls += o.except_alls, new_aggregates += o.new_aggregates, avg_float += o.avg_float;
    return *this;
  }
  std::string ToString() const {
    return std::to_string(joins) + " joins (" + std::to_string(left_joins) + " left outer, " +
           std::to_string(self_joins) + " self-joins, " + std::to_string(chained_joins) +
           " over a join, " + std::to_string(two_key_joins) + " with two key pairs), " +
           std::to_string(top_ks) + " top-k, " + std::to_string(negates) + " negate, " +
           std::to_string(thresholds) + " threshold (" + std::to_string(except_alls) +
           " EXCEPT ALL), " + std::to_string(new_aggregates) + " new aggregates (" +
           std::to_string(avg_float) + " AVG of FLOAT64)";
  }
};

// Whether a randomized suite's coverage checks apply to a run of `cases` cases.
//  * CheckPlanCoverage: what the generated cases are made of (their operators, their plans'
//    shapes) — the same in every tree, since a seed builds one case under every compiler
//    (Generator), and sized so that the first half of the seeds, a sanitizer's run
//    (CasesFromEnv), meets it. Checked in every tree.
//  * CheckCoverage: what a run happens to meet (a read racing compaction, a one-shot sent before
//    its data, a read below the allowed compaction): timing, so sized for the release run and not
//    asserted in a sanitizer's halved, slower run.
// Answers are checked in every run.
inline bool CheckPlanCoverage(std::size_t cases, std::size_t at_least) { return cases >= at_least; }
inline bool CheckCoverage(std::size_t cases, std::size_t at_least) {
  const bool halved = std::getenv("TANDEM_TEST_SANITIZER") != nullptr &&
                      std::getenv("TANDEM_TEST_CASES") == nullptr;
  return cases >= at_least && !halved;
}

// Which types and functions a new-types suite's dataflows used (CountTypes): the types of their
// sources' columns, literals and casts, and their functions.
struct TypeCounts {
  std::map<pb::ScalarType, int> types;
  std::map<pb::Func, int> funcs;
  TypeCounts& operator+=(const TypeCounts& o) {
    for (const auto& [t, n] : o.types) types[t] += n;
    for (const auto& [f, n] : o.funcs) funcs[f] += n;
    return *this;
  }
  std::string ToString() const {
    std::string out = "types";
    for (const auto& [t, n] : types) out += " " + pb::ScalarType_Name(t) + "=" + std::to_string(n);
    out += "; functions";
    for (const auto& [f, n] : funcs) out += " " + pb::Func_Name(f) + "=" + std::to_string(n);
    return out;
  }
};

// Adds what `m` (a dataflow, a plan, an expression: any message) holds to `counts`.
inline void CountTypes(const google::protobuf::Message& m, TypeCounts& counts) {
  if (const auto* column = dynamic_cast<const pb::Column*>(&m)) ++counts.types[column->type()];
  if (const auto* literal = dynamic_cast<const pb::Literal*>(&m)) ++counts.types[literal->type()];
  if (const auto* call = dynamic_cast<const pb::CallFunc*>(&m)) ++counts.funcs[call->func()];
  const google::protobuf::Reflection* reflection = m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(m, &fields);
  for (const auto* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) {
      CountTypes(reflection->GetMessage(m, field), counts);
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(m, field); ++i) {
      CountTypes(reflection->GetRepeatedMessage(m, field, i), counts);
    }
  }
}

// What a new-types suite covered, printed; over `at_least` cases or more, every type of the
// protocol and every function appears.
inline void ExpectNewTypeCoverage(const TypeCounts& counts, std::size_t cases,
                                  std::size_t at_least = 20) {
  std::printf("[ types       ] %s\n", counts.ToString().c_str());
  if (!CheckPlanCoverage(cases, at_least)) return;
  for (int t = pb::ScalarType_MIN; t <= pb::ScalarType_MAX; ++t) {
    const auto type = static_cast<pb::ScalarType>(t);
    if (!pb::ScalarType_IsValid(t) || type == pb::SCALAR_TYPE_UNSPECIFIED) continue;
    EXPECT_GT(counts.types.count(type), 0u) << "no case used " << pb::ScalarType_Name(type);
  }
  for (int f = pb::Func_MIN; f <= pb::Func_MAX; ++f) {
    const auto func = static_cast<pb::Func>(f);
    if (!pb::Func_IsValid(f) || func == pb::FUNC_UNSPECIFIED) continue;
    EXPECT_GT(counts.funcs.count(func), 0u) << "no case called " << pb::Func_Name(func);
  }
}

// What a new-operator suite covered, printed; over 20 cases or more, every case has a new
// operator and every new operator (and each variant of a join; chains unless `max_joins` is 1)
// appears. `more`: further counts the suite expects above zero, and `extra`: what it prints
// besides. With `new_types` an AVG of FLOAT64 and a self-join need not appear (the typed SUM and
// AVG take many of the aggregates, FLOAT64 is one type among sixteen, and the calls of functions
// over plans make two sides alike less often): the new-operator suites have them.
inline void ExpectNewOperatorCoverage(const OperatorCounts& o, int new_operator_cases,
                                      std::size_t cases, const std::vector<int>& more = {},
                                      const std::string& extra = "", int max_joins = 2,
                                      bool new_types = false) {
  std::printf("[ operators   ] %d of %zu cases with a new operator: %s%s\n", new_operator_cases,
              cases, o.ToString().c_str(), extra.c_str());
  if (!CheckPlanCoverage(cases, 20)) return;
  EXPECT_EQ(new_operator_cases, static_cast<int>(cases));
  std::vector<int> counts = {o.joins,         o.left_joins,     o.self_joins, o.chained_joins,
                             o.two_key_joins, o.top_ks,         o.negates,    o.thresholds,
                             o.except_alls,   o.new_aggregates, o.avg_float};
  if (new_types) counts.pop_back();                     // o.avg_float
  if (max_joins < 2) counts.erase(counts.begin() + 3);  // no chained joins
  if (new_types) counts.erase(counts.begin() + 2);      // o.self_joins
  counts.insert(counts.end(), more.begin(), more.end());
  for (int n : counts) EXPECT_GT(n, 0) << o.ToString() << extra;
}

inline bool IsJoinFree(const pb::Plan& plan);

// The new operators (Join, TopK, Negate, Threshold, the new aggregates) in `plan`. AVG of a
// FLOAT64 column is counted by the generator (the plan alone does not say the column's type).
inline OperatorCounts CountOperators(const pb::Plan& plan) {
  OperatorCounts n;
  switch (plan.kind_case()) {
    case pb::Plan::kMfp:
      return CountOperators(plan.mfp().input());
    case pb::Plan::kReduce:
      for (const auto& a : plan.reduce().aggregates()) {
        if (a.func() >= pb::COUNT_NON_NULL) ++n.new_aggregates;
      }
      n += CountOperators(plan.reduce().input());
      return n;
    case pb::Plan::kUnion:
      for (const auto& input : plan.union_().inputs()) n += CountOperators(input);
      return n;
    case pb::Plan::kDistinct:
      return CountOperators(plan.distinct().input());
    case pb::Plan::kJoin: {
      const auto& j = plan.join();
      ++n.joins;
      if (j.kind() == pb::LEFT_OUTER) ++n.left_joins;
      if (j.left().SerializeAsString() == j.right().SerializeAsString()) ++n.self_joins;
      if (!IsJoinFree(j.left()) || !IsJoinFree(j.right())) ++n.chained_joins;
      if (j.left_key_size() > 1) ++n.two_key_joins;
      n += CountOperators(j.left());
      n += CountOperators(j.right());
      return n;
    }
    case pb::Plan::kTopK:
      ++n.top_ks;
      n += CountOperators(plan.top_k().input());
      return n;
    case pb::Plan::kNegate:
      ++n.negates;
      n += CountOperators(plan.negate().input());
      return n;
    case pb::Plan::kThreshold: {
      ++n.thresholds;
      const pb::Plan& in = plan.threshold().input();
      if (in.has_union_() && std::any_of(in.union_().inputs().begin(), in.union_().inputs().end(),
                                         [](const pb::Plan& p) { return p.has_negate(); })) {
        ++n.except_alls;
      }
      n += CountOperators(in);
      return n;
    }
    default:
      return n;
  }
}

// True when `plan` has no Join (a Get of an earlier build that is a join is not seen here).
inline bool IsJoinFree(const pb::Plan& plan) {
  switch (plan.kind_case()) {
    case pb::Plan::kMfp:
      return IsJoinFree(plan.mfp().input());
    case pb::Plan::kReduce:
      return IsJoinFree(plan.reduce().input());
    case pb::Plan::kUnion:
      return std::all_of(plan.union_().inputs().begin(), plan.union_().inputs().end(),
                         [](const pb::Plan& p) { return IsJoinFree(p); });
    case pb::Plan::kDistinct:
      return IsJoinFree(plan.distinct().input());
    case pb::Plan::kJoin:
      return false;
    case pb::Plan::kTopK:
      return IsJoinFree(plan.top_k().input());
    case pb::Plan::kNegate:
      return IsJoinFree(plan.negate().input());
    case pb::Plan::kThreshold:
      return IsJoinFree(plan.threshold().input());
    default:
      return true;
  }
}

// Random expressions, plans, data and peeks for one case.
//
// With `new_operators` the plans also have Join, TopK, Negate, Threshold and the aggregates
// COUNT_NON_NULL, COUNT_DISTINCT, AVG, ANY and ALL, and FLOAT64 expressions; without, the
// generator draws exactly what it drew before those existed (the old seeds keep their cases).
//
// The rule of every draw here and in the functions below that draw from rand(): every draw is its
// own statement, or in a braced list (or after && || ?:, which sequence it). Never two draws as
// arguments of one call or operands of one operator: argument evaluation order is unspecified,
// and a seed must build the same case under every compiler (GCC and clang take arguments in
// different orders).
class Generator {
 public:
  Generator(std::uint64_t seed, bool allow_errors, bool new_operators = false, int max_joins = 2)
      : seed_(seed),
        rand_(seed),
        allow_errors_(allow_errors),
        new_operators_(new_operators),
        max_joins_(max_joins) {}

  Random& rand() { return rand_; }
  bool new_operators() const { return new_operators_; }
  // With new_operators: the types of DESIGN §16 too — int2, int4, float4, numeric, date,
  // timestamp and interval columns, their operators, casts, a few functions (ROUND, ABS,
  // DATE_TRUNC, DATE_PART, CONCAT) and SUM/AVG over them. Off by default: a seed builds the case
  // it built before. Only well-typed expressions (ipc/plan_typing.h), and without allow_errors
  // none that can fail (no division by a possible zero, no cast that can leave a range, no
  // multiplication that widens int2/int4 or a numeric's scale).
  void EnableNewTypes() { new_types_ = new_operators_; }
  bool new_types() const { return new_types_; }
  // AVG of FLOAT64 columns generated so far (CountOperators cannot tell them from the plan).
  int avg_float() const { return avg_float_; }

  // A datum of the data domain for a column: small, so that equal rows and keys recur.
  Datum DataDatum(const ColumnType& c) {
    if (c.nullable && rand_.Chance(0.2)) return Null{};
    switch (c.type) {
      case pb::INT64:
        return rand_.Between(allow_errors_ ? -1 : 0, 4);
      case pb::BOOL:
        return rand_.Chance(0.5);
      case pb::FLOAT64:
      case pb::FLOAT32:  // halves are float4 values too
        return static_cast<double>(rand_.Between(-4, 4)) / 2;
      case pb::INT16:
      case pb::INT32:
        if (allow_errors_ && rand_.Chance(0.05)) {
          return std::int64_t{c.type == pb::INT16 ? 32767 : 2147483647};
        }
        return rand_.Between(allow_errors_ ? -1 : 0, 4);
      case pb::NUMERIC:
        return reference::NumericInput(rand_.Pick(NumericDomain())).datum;
      case pb::DATE:
        return Date{rand_.Pick(DateDomain())};
      case pb::TIMESTAMP: {
        const std::int64_t day = rand_.Pick(DateDomain());
        const std::int64_t clock = rand_.Pick(ClockDomain());
        return Timestamp{day * 86'400'000'000 + clock};
      }
      case pb::INTERVAL:
        return rand_.Pick(IntervalDomain());
      case pb::TIME:
        return TimeOfDay{rand_.Pick(ClockDomain())};
      case pb::TIMESTAMPTZ: {
        const std::int64_t day = rand_.Pick(DateDomain());
        const std::int64_t clock = rand_.Pick(ClockDomain());
        return TimestampTz{day * 86'400'000'000 + clock};
      }
      case pb::BYTEA:
        return Bytes{rand_.Pick(ByteaDomain())};
      case pb::UUID:
        return rand_.Pick(UuidDomain());
      default:
        return rand_.Pick(StringDomain());
    }
  }

  ColumnType RandomScalarType() {
    static const std::vector<pb::ScalarType> kTypes = {pb::INT64, pb::INT64, pb::BOOL, pb::STRING};
    static const std::vector<pb::ScalarType> kNewTypes = {pb::INT64, pb::INT64, pb::BOOL,
                                                          pb::STRING, pb::FLOAT64};
    static const std::vector<pb::ScalarType> kTypedTypes = {
        pb::INT64,   pb::BOOL,        pb::STRING,  pb::FLOAT64, pb::INT16,     pb::INT32,
        pb::FLOAT32, pb::NUMERIC,     pb::NUMERIC, pb::DATE,    pb::TIMESTAMP, pb::INTERVAL,
        pb::TIME,    pb::TIMESTAMPTZ, pb::BYTEA,   pb::UUID};
    if (new_types_) return {rand_.Pick(kTypedTypes), false};
    return {rand_.Pick(new_operators_ ? kNewTypes : kTypes), false};
  }

  // An expression of one of the types of DESIGN §16 (new_types only).
  pb::ScalarExpr TypedExpr(pb::ScalarType type, const Types& columns, int depth) {
    auto operand = [&](pb::ScalarType t) { return Expr(t, columns, depth - 1); };
    auto binary = [&](pb::BinaryFunc f, pb::ScalarType lt, pb::ScalarType rt) {
      pb::ScalarExpr left = operand(lt);
      pb::ScalarExpr right = operand(rt);
      return BinaryExpr(f, std::move(left), std::move(right));
    };
    auto with_literal = [&](pb::BinaryFunc f, pb::ScalarType lt, pb::ScalarExpr right) {
      pb::ScalarExpr left = operand(lt);
      return BinaryExpr(f, std::move(left), std::move(right));
    };
    auto if_then_else = [&] {
      pb::ScalarExpr cond = operand(pb::BOOL);
      pb::ScalarExpr then = operand(type);
      pb::ScalarExpr els = operand(type);
      return IfExpr(std::move(cond), std::move(then), std::move(els));
    };
    // A function returning `type`, sometimes (every function of the protocol returns one of the
    // types drawn here).
    if (rand_.Chance(0.3)) return FuncCall(type, columns, depth);
    switch (type) {
      case pb::INT16:
      case pb::INT32:
        switch (rand_.Below(allow_errors_ ? 9 : 6)) {
          case 0:
            return binary(pb::ADD, type, type);
          case 1:
            return binary(pb::SUB, type, type);
          case 2:
            return UnaryExpr(pb::NEGATE, operand(type));
          case 3:
            if (type == pb::INT32) return binary(pb::SUB, pb::DATE, pb::DATE);
            return if_then_else();
          case 4:
            return CastExpr(operand(pb::INT64), type);
          case 5:
            return if_then_else();
          case 6:
            return binary(pb::MUL, type, type);
          case 7:
            return binary(pb::DIV, type, type);
          default:
            return binary(pb::MOD, type, type);
        }
      case pb::FLOAT32:
        switch (rand_.Below(4)) {
          case 0:
            return binary(pb::ADD, type, type);
          case 1:
            return with_literal(pb::MUL, type, Literal(type));
          case 2:
            return CastExpr(operand(pb::INT16), type);
          default:
            return if_then_else();
        }
      case pb::NUMERIC:
        switch (rand_.Below(8)) {
          case 0:
            return binary(pb::ADD, type, type);
          case 1:
            return binary(pb::SUB, type, type);
          case 2: {  // by an integer: the scale stays
            const std::int64_t k = rand_.Between(-3, 3);
            return with_literal(
                pb::MUL, type, LiteralExpr(reference::NumericInput(std::to_string(k)).datum, type));
          }
          case 3: {
            if (allow_errors_) return binary(pb::DIV, type, type);
            const std::vector<std::string> kDivisors = {"3", "-0.5", "7", "0.001"};
            const std::string divisor = rand_.Pick(kDivisors);
            return with_literal(pb::DIV, type,
                                LiteralExpr(reference::NumericInput(divisor).datum, type));
          }
          case 4:
            return UnaryExpr(pb::NEGATE, operand(type));
          case 5:
            return CastExpr(operand(pb::INT64), type);
          case 6:
            return FuncCall(type, columns, depth);
          default:
            return if_then_else();
        }
      case pb::DATE:
        switch (rand_.Below(4)) {
          case 0:
            return with_literal(pb::ADD, type, LiteralExpr(rand_.Between(-40, 40), pb::INT32));
          case 1:
            return with_literal(pb::SUB, type, LiteralExpr(rand_.Between(-40, 40), pb::INT32));
          case 2:
            return CastExpr(operand(pb::TIMESTAMP), type);
          default:
            return if_then_else();
        }
      case pb::TIMESTAMP:
        switch (rand_.Below(6)) {
          case 0:
            return binary(pb::ADD, type, pb::INTERVAL);
          case 1:
            return binary(pb::SUB, type, pb::INTERVAL);
          case 2:
            return binary(pb::ADD, pb::DATE, pb::INTERVAL);
          case 3:
            return CastExpr(operand(pb::DATE), type);
          case 4:
            return CallOf(pb::DATE_TRUNC, type, columns, depth);
          default:
            return if_then_else();
        }
      case pb::INTERVAL:
        switch (rand_.Below(7)) {
          case 0:
            return binary(pb::ADD, type, type);
          case 1:
            return binary(pb::SUB, type, type);
          case 2:
            return UnaryExpr(pb::NEGATE, operand(type));
          case 3:
            if (rand_.Chance(0.3)) return binary(pb::SUB, pb::TIME, pb::TIME);
            if (rand_.Chance(0.3)) return binary(pb::SUB, pb::TIMESTAMPTZ, pb::TIMESTAMPTZ);
            return binary(pb::SUB, pb::TIMESTAMP, pb::TIMESTAMP);
          case 4:
            return with_literal(pb::MUL, type, Literal(pb::FLOAT64));
          case 5:
            return CallOf(pb::DATE_TRUNC, type, columns, depth);
          default:
            return if_then_else();
        }
      case pb::TIME:
        switch (rand_.Below(4)) {
          case 0:
            return binary(pb::ADD, type, pb::INTERVAL);
          case 1:
            return binary(pb::SUB, type, pb::INTERVAL);
          case 2:
            return CastExpr(operand(pb::TIMESTAMP), type);
          default:
            return if_then_else();
        }
      case pb::TIMESTAMPTZ:
        switch (rand_.Below(4)) {
          case 0:
            return binary(pb::ADD, type, pb::INTERVAL);
          case 1:
            return binary(pb::SUB, type, pb::INTERVAL);
          case 2:
            return CastExpr(operand(pb::TIMESTAMP), type);
          default:
            return CallOf(pb::DATE_TRUNC, type, columns, depth);
        }
      case pb::STRING: {
        static const std::vector<pb::ScalarType> kShown = {
            pb::NUMERIC, pb::DATE,  pb::TIMESTAMP, pb::INTERVAL, pb::FLOAT32,
            pb::INT16,   pb::BYTEA, pb::UUID,      pb::TIME,     pb::TIMESTAMPTZ};
        if (rand_.Chance(0.4)) return CastExpr(operand(rand_.Pick(kShown)), pb::STRING);
        return FuncCall(type, columns, depth);
      }
      case pb::BYTEA:
        // Text whose escapes bytea's input may refuse (a backslash not before x or digits).
        if (allow_errors_ && rand_.Chance(0.5)) return CastExpr(operand(pb::STRING), type);
        return if_then_else();
      case pb::FLOAT64:
        if (rand_.Chance(0.3)) return CastExpr(operand(pb::NUMERIC), type);
        return FuncCall(type, columns, depth);
      case pb::BOOL:  // LIKE and ILIKE (the comparisons of the new types: Expr's BOOL)
        return FuncCall(type, columns, depth);
      default:
        return if_then_else();
    }
  }

  // A call of a function that returns `type` (new_types only): COALESCE, NULLIF, GREATEST and
  // LEAST of any type; of text, its functions; LIKE and ILIKE for BOOL; the lengths and STRPOS
  // for INT32; the math of NUMERIC and FLOAT64 (EXTRACT, DATE_PART of a field the source has);
  // DATE_TRUNC of TIMESTAMP, TIMESTAMPTZ and INTERVAL. Without allow_errors none can fail.
  pb::ScalarExpr FuncCall(pb::ScalarType type, const Types& columns, int depth) {
    std::vector<pb::Func> funcs = {pb::COALESCE, pb::NULLIF, pb::GREATEST, pb::LEAST};
    switch (type) {
      case pb::STRING:
        funcs.insert(funcs.end(), {pb::CONCAT, pb::LOWER, pb::UPPER, pb::SUBSTR, pb::BTRIM,
                                   pb::LTRIM, pb::RTRIM, pb::REPLACE});
        break;
      case pb::INT32:
        funcs.insert(funcs.end(), {pb::CHAR_LENGTH, pb::OCTET_LENGTH, pb::STRPOS});
        break;
      case pb::BYTEA:
        funcs.push_back(pb::CONCAT);
        break;
      case pb::BOOL:
        funcs.insert(funcs.end(), {pb::LIKE, pb::ILIKE, pb::LIKE, pb::ILIKE});
        break;
      case pb::NUMERIC:
      case pb::FLOAT64:
        funcs.insert(funcs.end(), {pb::ABS, pb::ROUND, pb::TRUNC, pb::FLOOR, pb::CEIL, pb::POWER,
                                   pb::SQRT, type == pb::NUMERIC ? pb::EXTRACT : pb::DATE_PART});
        break;
      case pb::INT16:
      case pb::INT64:
      case pb::FLOAT32:
        funcs.push_back(pb::ABS);
        break;
      case pb::TIMESTAMP:
      case pb::TIMESTAMPTZ:
      case pb::INTERVAL:
        funcs.push_back(pb::DATE_TRUNC);
        break;
      default:
        break;
    }
    const pb::Func f = rand_.Pick(funcs);
    return CallOf(f, type, columns, depth);
  }

  // A call of any function of the protocol (new_types only); `type` gets its result's type. The
  // k-th call of a case calls function (seed + k) mod their number, so that the cases of a few
  // consecutive seeds call every function (a suite's seeds are; their generators' seeds are
  // seed * 7919 + attempt, and 7919 is prime to the count).
  pb::ScalarExpr AnyFuncCall(const Types& columns, int depth, pb::ScalarType* type) {
    constexpr std::uint64_t kFuncs = pb::Func_MAX - pb::COALESCE + 1;
    const auto f = static_cast<pb::Func>(pb::COALESCE + (seed_ + func_calls_++) % kFuncs);
    static const std::vector<pb::ScalarType> kNumbers = {pb::INT16,   pb::INT32,   pb::INT64,
                                                         pb::FLOAT32, pb::FLOAT64, pb::NUMERIC};
    static const std::vector<pb::ScalarType> kMath = {pb::NUMERIC, pb::FLOAT64};
    static const std::vector<pb::ScalarType> kTruncated = {pb::TIMESTAMP, pb::TIMESTAMPTZ,
                                                           pb::INTERVAL};
    switch (f) {
      case pb::COALESCE:
      case pb::NULLIF:
      case pb::GREATEST:
      case pb::LEAST:
        *type = RandomScalarType().type;
        break;
      case pb::CONCAT:  // text || text, bytea || bytea
        *type = rand_.Chance(0.3) ? pb::BYTEA : pb::STRING;
        break;
      case pb::LOWER:
      case pb::UPPER:
      case pb::SUBSTR:
      case pb::BTRIM:
      case pb::LTRIM:
      case pb::RTRIM:
      case pb::REPLACE:
        *type = pb::STRING;
        break;
      case pb::CHAR_LENGTH:
      case pb::OCTET_LENGTH:
      case pb::STRPOS:
        *type = pb::INT32;
        break;
      case pb::LIKE:
      case pb::ILIKE:
        *type = pb::BOOL;
        break;
      case pb::ABS:
        *type = rand_.Pick(kNumbers);
        break;
      case pb::EXTRACT:
        *type = pb::NUMERIC;
        break;
      case pb::DATE_PART:
        *type = pb::FLOAT64;
        break;
      case pb::DATE_TRUNC:
        *type = rand_.Pick(kTruncated);
        break;
      default:  // ROUND, TRUNC, FLOOR, CEIL, POWER, SQRT
        *type = rand_.Pick(kMath);
        break;
    }
    return CallOf(f, *type, columns, depth);
  }

  // A call of `f` that returns `type` (which `f` must return).
  pb::ScalarExpr CallOf(pb::Func f, pb::ScalarType type, const Types& columns, int depth) {
    auto operand = [&](pb::ScalarType t) { return Expr(t, columns, depth - 1); };
    auto int4 = [](std::int64_t v) { return LiteralExpr(v, pb::INT32); };
    auto text = [](const std::string& v) { return LiteralExpr(v, pb::STRING); };
    switch (f) {
      case pb::COALESCE:
      case pb::GREATEST:
      case pb::LEAST: {
        const int n = 2 + static_cast<int>(rand_.Below(2));
        std::vector<pb::ScalarExpr> args;
        for (int i = 0; i < n; ++i) args.push_back(operand(type));
        return CallExpr(f, std::move(args));
      }
      case pb::NULLIF:
      case pb::CONCAT:
      case pb::STRPOS: {
        const pb::ScalarType of = f == pb::STRPOS ? pb::STRING : type;
        pb::ScalarExpr first = operand(of);
        pb::ScalarExpr second = operand(of);
        return CallExpr(f, {std::move(first), std::move(second)});
      }
      case pb::LOWER:
      case pb::UPPER:
      case pb::CHAR_LENGTH:
        return CallExpr(f, {operand(pb::STRING)});
      case pb::OCTET_LENGTH:
        return CallExpr(f, {operand(rand_.Chance(0.5) ? pb::STRING : pb::BYTEA)});
      case pb::SUBSTR: {
        pb::ScalarExpr value = operand(pb::STRING);
        const std::int64_t start = rand_.Between(-1, 3);
        if (rand_.Chance(0.3)) return CallExpr(f, {std::move(value), int4(start)});
        const std::int64_t length = rand_.Between(0, 3);
        return CallExpr(f, {std::move(value), int4(start), int4(length)});
      }
      case pb::BTRIM:
      case pb::LTRIM:
      case pb::RTRIM: {
        pb::ScalarExpr value = operand(pb::STRING);
        if (rand_.Chance(0.5)) return CallExpr(f, {std::move(value)});
        static const std::vector<std::string> kCharacters = {"a", " b", "\\", "q\""};
        return CallExpr(f, {std::move(value), text(rand_.Pick(kCharacters))});
      }
      case pb::REPLACE: {
        pb::ScalarExpr value = operand(pb::STRING);
        pb::ScalarExpr from = operand(pb::STRING);
        pb::ScalarExpr to = operand(pb::STRING);
        return CallExpr(f, {std::move(value), std::move(from), std::move(to)});
      }
      case pb::LIKE:
      case pb::ILIKE: {
        static const std::vector<std::string> kPatterns = {"a%", "%b", "_",    "a_b",
                                                           "%",  "A%", "%\\%", "q\"%"};
        pb::ScalarExpr value = operand(pb::STRING);
        return CallExpr(f, {std::move(value), text(rand_.Pick(kPatterns))});
      }
      case pb::ABS:
        return CallExpr(f, {operand(type)});
      case pb::ROUND:
      case pb::TRUNC: {
        pb::ScalarExpr value = operand(type);
        if (type != pb::NUMERIC || rand_.Chance(0.4)) return CallExpr(f, {std::move(value)});
        const std::int64_t places = rand_.Between(-1, 3);
        return CallExpr(f, {std::move(value), int4(places)});
      }
      case pb::FLOOR:
      case pb::CEIL:
        return CallExpr(f, {operand(type)});
      case pb::SQRT:  // of a magnitude
        return CallExpr(f, {CallExpr(pb::ABS, {operand(type)})});
      case pb::POWER: {  // of a leaf (a power of a power of an epoch is past 38 digits), to 0..2
        pb::ScalarExpr value = Expr(type, columns, 0);
        const std::int64_t exponent = rand_.Between(0, 2);
        pb::ScalarExpr power =
            type == pb::NUMERIC
                ? LiteralExpr(reference::NumericInput(std::to_string(exponent)).datum, type)
                : LiteralExpr(static_cast<double>(exponent), type);
        return CallExpr(f, {std::move(value), std::move(power)});
      }
      case pb::EXTRACT:
      case pb::DATE_PART: {
        static const std::vector<pb::ScalarType> kSources = {pb::DATE, pb::TIME, pb::TIMESTAMP,
                                                             pb::TIMESTAMPTZ, pb::INTERVAL};
        static const std::vector<std::string> kDateFields = {"year", "month", "day",     "doy",
                                                             "dow",  "epoch", "quarter", "week"};
        static const std::vector<std::string> kTimeFields = {"hour", "minute", "second",
                                                             "milliseconds", "epoch"};
        static const std::vector<std::string> kTimestampFields = {
            "year",   "month", "day",    "hour",  "minute",
            "second", "doy",   "isodow", "epoch", "microseconds"};
        static const std::vector<std::string> kIntervalFields = {"year",   "month",  "day",  "hour",
                                                                 "minute", "second", "epoch"};
        const pb::ScalarType source = rand_.Pick(kSources);
        const auto& fields = source == pb::DATE       ? kDateFields
                             : source == pb::TIME     ? kTimeFields
                             : source == pb::INTERVAL ? kIntervalFields
                                                      : kTimestampFields;
        pb::ScalarExpr field = text(rand_.Pick(fields));
        return CallExpr(f, {std::move(field), operand(source)});
      }
      case pb::DATE_TRUNC: {
        static const std::vector<std::string> kUnits = {"day",  "month",  "hour",
                                                        "year", "minute", "quarter"};
        static const std::vector<std::string> kTimestampUnits = {"week"};
        std::string unit = rand_.Pick(kUnits);
        if (type != pb::INTERVAL && rand_.Chance(0.2)) unit = rand_.Pick(kTimestampUnits);
        return CallExpr(f, {text(unit), operand(type)});
      }
      default:
        ADD_FAILURE() << "no call of " << pb::Func_Name(f) << " is generated";
        return Literal(type);
    }
  }

  // A random expression of `type` over `columns`. Its nullability is not tracked (the validator
  // derives the schemas the peeks need).
  pb::ScalarExpr Expr(pb::ScalarType type, const Types& columns, int depth) {
    std::vector<std::uint32_t> of_type;
    for (std::uint32_t c = 0; c < columns.size(); ++c) {
      if (columns[c].type == type) of_type.push_back(c);
    }
    if (depth <= 0 || rand_.Chance(0.25)) {
      if (!of_type.empty() && rand_.Chance(0.75)) return ColumnExpr(rand_.Pick(of_type));
      return Literal(type);
    }
    const bool typed = type == pb::INT16 || type == pb::INT32 || type == pb::FLOAT32 ||
                       type == pb::NUMERIC || type == pb::DATE || type == pb::TIMESTAMP ||
                       type == pb::INTERVAL || type == pb::TIME || type == pb::TIMESTAMPTZ ||
                       type == pb::BYTEA || type == pb::UUID;
    if (typed || (new_types_ && (type == pb::STRING || type == pb::FLOAT64 || type == pb::BOOL) &&
                  rand_.Chance(0.4))) {
      return TypedExpr(type, columns, depth);
    }
    // The operands, drawn left to right (never as arguments of one call).
    auto binary = [&](pb::BinaryFunc f, pb::ScalarType operand) {
      pb::ScalarExpr left = Expr(operand, columns, depth - 1);
      pb::ScalarExpr right = Expr(operand, columns, depth - 1);
      return BinaryExpr(f, std::move(left), std::move(right));
    };
    auto if_then_else = [&] {
      pb::ScalarExpr cond = Expr(pb::BOOL, columns, depth - 1);
      pb::ScalarExpr then = Expr(type, columns, depth - 1);
      pb::ScalarExpr els = Expr(type, columns, depth - 1);
      return IfExpr(std::move(cond), std::move(then), std::move(els));
    };
    switch (type) {
      case pb::INT64:
        switch (rand_.Below(allow_errors_ ? 7 : 5)) {
          case 0:
            return binary(pb::ADD, type);
          case 1:
            return binary(pb::SUB, type);
          case 2: {
            // Multiply by something small only: no overflow in stacked plans.
            pb::ScalarExpr left = Expr(type, columns, depth - 1);
            pb::ScalarExpr right = SmallInt();
            return BinaryExpr(pb::MUL, std::move(left), std::move(right));
          }
          case 3:
            return UnaryExpr(pb::NEGATE, Expr(type, columns, depth - 1));
          case 4:
            return if_then_else();
          case 5:
            return binary(pb::DIV, type);
          default:
            return binary(pb::MOD, type);
        }
      case pb::BOOL:
        switch (rand_.Below(7)) {
          case 0:
          case 1: {
            static const std::vector<pb::BinaryFunc> kCompare = {pb::EQ, pb::NE, pb::LT,
                                                                 pb::LE, pb::GT, pb::GE};
            pb::ScalarType operand = rand_.Chance(0.6)   ? pb::INT64
                                     : rand_.Chance(0.7) ? pb::STRING
                                                         : pb::BOOL;
            if (new_operators_ && rand_.Chance(0.25)) operand = pb::FLOAT64;
            if (new_types_ && rand_.Chance(0.5)) operand = RandomScalarType().type;
            const pb::BinaryFunc compare = rand_.Pick(kCompare);
            return binary(compare, operand);
          }
          case 2:
            return binary(pb::AND, type);
          case 3:
            return binary(pb::OR, type);
          case 4:
            return UnaryExpr(pb::NOT, Expr(type, columns, depth - 1));
          case 5: {
            const pb::UnaryFunc test = rand_.Chance(0.5) ? pb::IS_NULL : pb::IS_NOT_NULL;
            const pb::ScalarType operand = RandomScalarType().type;
            return UnaryExpr(test, Expr(operand, columns, depth - 1));
          }
          default:
            return if_then_else();
        }
      case pb::FLOAT64:  // only with new_operators
        switch (rand_.Below(4)) {
          case 0:
            return binary(pb::ADD, type);
          case 1:
            return binary(pb::SUB, type);
          case 2: {
            pb::ScalarExpr left = Expr(type, columns, depth - 1);
            pb::ScalarExpr right = Literal(type);
            return BinaryExpr(pb::MUL, std::move(left), std::move(right));
          }
          default:
            return if_then_else();
        }
      default:
        return if_then_else();
    }
  }

  pb::ScalarExpr SmallInt() { return LiteralExpr(rand_.Between(-2, 3), pb::INT64); }

  pb::ScalarExpr Literal(pb::ScalarType type) {
    if (rand_.Chance(0.1)) return LiteralExpr(Null{}, type);
    switch (type) {
      case pb::INT64:
        return LiteralExpr(rand_.Between(allow_errors_ ? -2 : 0, 4), type);
      case pb::BOOL:
        return LiteralExpr(rand_.Chance(0.5), type);
      case pb::FLOAT64:  // only with new_operators
        return LiteralExpr(static_cast<double>(rand_.Between(-4, 4)) / 2, type);
      case pb::STRING:
        return LiteralExpr(rand_.Pick(StringDomain()), type);
      default:  // the types of DESIGN §16: their data domains
        return LiteralExpr(DataDatum({type, false}), type);
    }
  }

  // A random map/filter/project over `input`; `output` gets its column types.
  pb::MapFilterProject Mfp(const Types& input, Types* output, int expr_depth = 2) {
    pb::MapFilterProject mfp;
    Types columns = input;
    // With new_types: two or three calls of functions first (AnyFuncCall).
    const int calls = new_types_ ? 2 + static_cast<int>(rand_.Below(2)) : 0;
    for (int i = 0; i < calls; ++i) {
      pb::ScalarType type = pb::INT64;
      *mfp.add_map() = AnyFuncCall(columns, expr_depth, &type);
      columns.push_back({type, true});
    }
    const int maps = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < maps; ++i) {
      const ColumnType type = RandomScalarType();
      *mfp.add_map() = Expr(type.type, columns, expr_depth);
      columns.push_back({type.type, true});
    }
    const int predicates = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < predicates; ++i)
      *mfp.add_predicates() = Expr(pb::BOOL, columns, expr_depth);
    if (rand_.Chance(0.4)) {
      *output = columns;
      return mfp;
    }
    const int width = 1 + static_cast<int>(rand_.Below(std::min<std::size_t>(4, columns.size())));
    output->clear();
    for (int i = 0; i < width; ++i) {
      const auto c = static_cast<std::uint32_t>(rand_.Below(columns.size()));
      mfp.add_projection(c);
      output->push_back(columns[c]);
    }
    return mfp;
  }

  // What bounds a collection: its multiplicities, |count| < 2^bits, and how many joins are
  // stacked under it. A term of the runtime's incremental join whose product of two counts is
  // beyond 64 x INT64_MAX is a sticky data error the reference cannot model (workers/README.md
  // "Join"; below that the product goes out exactly, as int64 parts), so the generator joins only
  // sides whose counts multiply (twice: a delta is a difference of two counts) below
  // 2^kMaxJoinBits, well inside int64. Joins of joins of small key domains multiply rows and
  // widths: at most max_joins of them stack up.
  static constexpr int kSmallBits = 12;  // sources without huge multiplicities
  static constexpr int kMaxJoinBits = 62;
  struct Shape {
    int bits = kSmallBits;
    int joins = 0;
  };
  // A collection a plan may read.
  struct Collection {
    std::string id;
    Types types;
    Shape shape;
  };

  // A random plan of depth <= `depth` over `scope`; `output` gets its column types, `shape` (if
  // given) what bounds it.
  pb::Plan Plan(const std::vector<Collection>& scope, int depth, Types* output,
                Shape* shape = nullptr) {
    Shape b;
    pb::Plan plan =
        new_operators_ ? NewPlan(scope, depth, output, &b) : OldPlan(scope, depth, output, &b);
    if (new_types_ && rand_.Chance(0.7)) {  // calls of functions over the plan's output
      const int calls = 1 + static_cast<int>(rand_.Below(2));
      for (int i = 0; i < calls; ++i) {
        pb::ScalarType type = pb::INT64;
        pb::ScalarExpr call = AnyFuncCall(*output, 2, &type);
        plan = WithMap(std::move(plan), std::move(call));
        output->push_back({type, true});
      }
    }
    if (shape != nullptr) *shape = b;
    return plan;
  }

  // The aggregates of a reduce whose group key is already set (`keyless`: it has none): zero to
  // two (at least one without a key: an index needs a column). With new_operators an ANY/ALL
  // without a BOOL column in `input` (sometimes an AVG without a FLOAT64 one) wraps the reduce's
  // input in an Mfp that maps one (`input` gets the column).
  void AddAggregates(pb::Plan::Reduce* reduce, Types& input, bool keyless, Types* output) {
    const int aggregates = static_cast<int>(rand_.Below(3)) + (keyless ? 1 : 0);
    for (int i = 0; i < aggregates; ++i) {
      std::vector<std::uint32_t> ints, floats, bools;
      for (std::uint32_t c = 0; c < input.size(); ++c) {
        if (input[c].type == pb::INT64) ints.push_back(c);
        if (input[c].type == pb::FLOAT64) floats.push_back(c);
        if (input[c].type == pb::BOOL) bools.push_back(c);
      }
      if (new_types_) {
        // SUM and AVG of the types of DESIGN §16 (an interval's only where errors may be: huge
        // multiplicities take its sum out of range).
        std::vector<std::uint32_t> typed;
        for (std::uint32_t c = 0; c < input.size(); ++c) {
          const pb::ScalarType t = input[c].type;
          if (t == pb::INT16 || t == pb::INT32 || t == pb::FLOAT32 || t == pb::NUMERIC ||
              (t == pb::INTERVAL && allow_errors_)) {
            typed.push_back(c);
          }
        }
        if (!typed.empty() && rand_.Chance(0.4)) {
          pb::Aggregate a;
          const bool sum = rand_.Chance(0.5);
          a.set_func(sum ? pb::SUM : pb::AVG);
          a.set_column(rand_.Pick(typed));
          const pb::ScalarType t = input[a.column()].type;
          const bool exact = t == pb::NUMERIC || t == pb::INTERVAL;
          const pb::ScalarType out =
              sum ? (t == pb::INT16 || t == pb::INT32 ? pb::INT64 : t) : (exact ? t : pb::FLOAT64);
          output->push_back({out, true});
          *reduce->add_aggregates() = std::move(a);
          continue;
        }
      }
      std::uint64_t f = rand_.Below(new_operators_ ? 11 : 4);
      if (f >= 9) f = 6;  // AVG twice as often: its INT64 and FLOAT64 cases
      pb::Aggregate a;
      if (f == 0 || (f == 1 && ints.empty())) {
        a.set_func(pb::COUNT);
        output->push_back({pb::INT64, false});
      } else if (f == 1) {
        a.set_func(pb::SUM);
        a.set_column(rand_.Pick(ints));
        output->push_back({pb::INT64, true});
      } else if (f <= 3) {
        a.set_func(f == 2 ? pb::MIN : pb::MAX);
        a.set_column(static_cast<std::uint32_t>(rand_.Below(input.size())));
        output->push_back({input[a.column()].type, true});
      } else if (f <= 5 || (f == 6 && ints.empty() && floats.empty())) {
        a.set_func(f == 5 ? pb::COUNT_DISTINCT : pb::COUNT_NON_NULL);
        a.set_column(static_cast<std::uint32_t>(rand_.Below(input.size())));
        output->push_back({pb::INT64, false});
      } else if (f == 6) {
        if (floats.empty() && rand_.Chance(0.4)) {  // AVG of a FLOAT64 expression
          Wrap(reduce, Expr(pb::FLOAT64, input, 2));
          floats.push_back(static_cast<std::uint32_t>(input.size()));
          input.push_back({pb::FLOAT64, true});
        }
        a.set_func(pb::AVG);
        const bool of_float = !floats.empty() && (ints.empty() || rand_.Chance(0.7));
        a.set_column(rand_.Pick(of_float ? floats : ints));
        if (of_float) ++avg_float_;
        output->push_back({pb::FLOAT64, true});
      } else {
        if (bools.empty()) {
          Wrap(reduce, Expr(pb::BOOL, input, 2));
          bools.push_back(static_cast<std::uint32_t>(input.size()));
          input.push_back({pb::BOOL, true});
        }
        a.set_func(f == 7 ? pb::ANY : pb::ALL);
        a.set_column(rand_.Pick(bools));
        output->push_back({pb::BOOL, true});
      }
      *reduce->add_aggregates() = std::move(a);
    }
  }

  // A join of `left` and `right` (of types `lt`, `rt`) on one or two pairs of key columns of the
  // same type; when no column pair fits, `right` is wrapped in an Mfp mapping a column of a left
  // key column's type. Sometimes both sides key on a skewed INT64 (most values 1). With
  // `left_key` (and `right_key`) set, the join takes those keys instead (their types must match
  // pairwise) and leaves the sides as they are.
  pb::Plan MakeJoin(pb::Plan left, Types lt, pb::Plan right, Types rt, Types* output,
                    std::vector<std::uint32_t> left_key = {},
                    std::vector<std::uint32_t> right_key = {}) {
    if (left_key.empty()) {
      std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
      for (std::uint32_t i = 0; i < lt.size(); ++i) {
        for (std::uint32_t j = 0; j < rt.size(); ++j) {
          if (lt[i].type == rt[j].type) pairs.emplace_back(i, j);
        }
      }
      const bool self = left.SerializeAsString() == right.SerializeAsString();
      if (pairs.empty() || rand_.Chance(0.1)) {
        const auto i = static_cast<std::uint32_t>(rand_.Below(lt.size()));
        right = WithMap(std::move(right), Expr(lt[i].type, rt, 1));
        rt.push_back({lt[i].type, true});
        pairs = {{i, static_cast<std::uint32_t>(rt.size() - 1)}};
      } else if (self && rand_.Chance(0.6)) {  // mostly the same columns on both sides
        std::erase_if(pairs, [](const auto& p) { return p.first != p.second; });
      }
      std::shuffle(pairs.begin(), pairs.end(), rand_.engine());
      const std::size_t n = pairs.size() > 1 && rand_.Chance(0.35) ? 2 : 1;
      for (std::size_t k = 0; k < n; ++k) {
        left_key.push_back(pairs[k].first);
        right_key.push_back(pairs[k].second);
      }
      if (lt[left_key[0]].type == pb::INT64 && rand_.Chance(0.15)) {
        // Skewed keys: IF(c > 0, 1, c) keeps null and the values <= 0, and makes the rest 1.
        auto skew = [&](pb::Plan side, Types& types, std::uint32_t* key) {
          const auto c = *key;
          side = WithMap(
              std::move(side),
              IfExpr(BinaryExpr(pb::GT, ColumnExpr(c), LiteralExpr(std::int64_t{0}, pb::INT64)),
                     LiteralExpr(std::int64_t{1}, pb::INT64), ColumnExpr(c)));
          *key = static_cast<std::uint32_t>(types.size());
          types.push_back({pb::INT64, true});
          return side;
        };
        left = skew(std::move(left), lt, &left_key[0]);
        right = skew(std::move(right), rt, &right_key[0]);
      }
    }
    pb::Plan plan;
    auto* j = plan.mutable_join();
    const bool outer = rand_.Chance(0.5);
    j->set_kind(outer ? pb::LEFT_OUTER : pb::INNER);
    *j->mutable_left() = std::move(left);
    *j->mutable_right() = std::move(right);
    for (auto k : left_key) j->add_left_key(k);
    for (auto k : right_key) j->add_right_key(k);
    *output = lt;
    for (auto c : rt) output->push_back({c.type, c.nullable || outer});
    return plan;
  }

  // Whether a join of collections so bounded stays within kMaxJoinBits and max_joins, and the
  // bound of the join.
  bool Joinable(const Shape& l, const Shape& r) const {
    return l.bits + r.bits + 1 <= kMaxJoinBits && l.joins + r.joins + 1 <= max_joins_;
  }
  static Shape Joined(const Shape& l, const Shape& r) {
    return Shape{l.bits + r.bits, l.joins + r.joins + 1};
  }

  // The reduce's input with one more column, `expr` over its columns.
  static void Wrap(pb::Plan::Reduce* reduce, pb::ScalarExpr expr) {
    pb::Plan wrapped;
    wrapped.mutable_mfp()->mutable_input()->Swap(reduce->mutable_input());
    *wrapped.mutable_mfp()->mutable_mfp()->add_map() = std::move(expr);
    reduce->mutable_input()->Swap(&wrapped);
  }

  // `plan` with one more column, `expr` over its columns.
  static pb::Plan WithMap(pb::Plan plan, pb::ScalarExpr expr) {
    pb::Plan wrapped;
    *wrapped.mutable_mfp()->mutable_input() = std::move(plan);
    *wrapped.mutable_mfp()->mutable_mfp()->add_map() = std::move(expr);
    return wrapped;
  }

  // `plan` (of `types`) made to have the column types of `to`: mostly unchanged when it already
  // has them, else an Mfp mapping an expression of each of `to`'s types over it.
  pb::Plan Fit(pb::Plan plan, const Types& types, const Types& to) {
    bool same = to.size() == types.size();
    for (std::size_t i = 0; same && i < to.size(); ++i) same = to[i].type == types[i].type;
    if (!same || rand_.Chance(0.2)) {
      pb::Plan fitted;
      *fitted.mutable_mfp()->mutable_input() = std::move(plan);
      auto* mfp = fitted.mutable_mfp()->mutable_mfp();
      for (std::size_t i = 0; i < to.size(); ++i) {
        *mfp->add_map() = Expr(to[i].type, types, 1);
        mfp->add_projection(static_cast<std::uint32_t>(types.size() + i));
      }
      plan = std::move(fitted);
    }
    return plan;
  }

 private:
  pb::Plan GetOf(const std::vector<Collection>& scope, Types* output, Shape* shape) {
    pb::Plan plan;
    const Collection& c = rand_.Pick(scope);
    plan.mutable_get()->set_id(c.id);
    *output = c.types;
    *shape = c.shape;
    return plan;
  }

  pb::Plan MfpOf(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    pb::Plan plan;
    Types input;
    *plan.mutable_mfp()->mutable_input() = Plan(scope, depth - 1, &input, shape);
    *plan.mutable_mfp()->mutable_mfp() = Mfp(input, output);
    shape->bits += 4;  // a projection merges rows
    return plan;
  }

  pb::Plan ReduceOf(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    pb::Plan plan;
    Types input;
    auto* reduce = plan.mutable_reduce();
    *reduce->mutable_input() = Plan(scope, depth - 1, &input);
    output->clear();
    const int keys = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < keys; ++i) {
      const auto c = static_cast<std::uint32_t>(rand_.Below(input.size()));
      reduce->add_group_key(c);
      output->push_back(input[c]);
    }
    // Aggregate-free reduces too (the group keys alone: a SELECT DISTINCT of them); without
    // keys, at least one aggregate (an index needs a column).
    AddAggregates(reduce, input, keys == 0, output);
    *shape = Shape{1, 0};
    return plan;
  }

  // A union of two branches, the second made to fit the first.
  pb::Plan UnionOf(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    pb::Plan plan;
    Types left, right;
    Shape ls, rs;
    auto* u = plan.mutable_union_();
    *u->add_inputs() = Plan(scope, depth - 1, &left, &ls);
    pb::Plan second = Plan(scope, depth - 1, &right, &rs);
    *u->add_inputs() = Fit(std::move(second), right, left);
    *output = left;
    for (auto& c : *output) c.nullable = true;
    *shape = Shape{std::max(ls.bits, rs.bits) + 1, std::max(ls.joins, rs.joins)};
    return plan;
  }

  pb::Plan DistinctOf(const std::vector<Collection>& scope, int depth, Types* output,
                      Shape* shape) {
    pb::Plan plan;
    *plan.mutable_distinct()->mutable_input() = Plan(scope, depth - 1, output, shape);
    shape->bits = 1;
    return plan;
  }

  pb::Plan OldPlan(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    const std::uint64_t kind = depth <= 0 ? 0 : rand_.Below(10);
    if (kind == 0) return GetOf(scope, output, shape);
    if (kind <= 3) return MfpOf(scope, depth, output, shape);
    if (kind <= 5) return ReduceOf(scope, depth, output, shape);
    if (kind <= 7) return UnionOf(scope, depth, output, shape);
    return DistinctOf(scope, depth, output, shape);
  }

  pb::Plan NewPlan(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    const std::uint64_t kind = depth <= 0 ? 0 : rand_.Below(100);
    if (kind < 5) return GetOf(scope, output, shape);
    if (kind < 20) return MfpOf(scope, depth, output, shape);
    if (kind < 38) return ReduceOf(scope, depth, output, shape);
    if (kind < 45) return UnionOf(scope, depth, output, shape);
    if (kind < 49) return DistinctOf(scope, depth, output, shape);
    if (kind < 72) return JoinOf(scope, depth, output, shape);
    if (kind < 83) return TopKOf(scope, depth, output, shape);
    return NegateOf(scope, depth, output, shape);
  }

  // A join: its left side sometimes a join itself (a chain), its right side sometimes the same
  // plan as the left (a self-join). Sides that are not Joinable: the left side alone.
  pb::Plan JoinOf(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    Types lt, rt;
    Shape ls, rs;
    pb::Plan left = depth >= 2 && rand_.Chance(0.3) ? JoinOf(scope, depth - 1, &lt, &ls)
                                                    : Plan(scope, depth - 1, &lt, &ls);
    pb::Plan right;
    if (rand_.Chance(0.2)) {
      right = left;
      rt = lt;
      rs = ls;
    } else {
      right = Plan(scope, depth - 1, &rt, &rs);
    }
    if (!Joinable(ls, rs)) {
      *output = lt;
      *shape = ls;
      return left;
    }
    *shape = Joined(ls, rs);
    return MakeJoin(std::move(left), std::move(lt), std::move(right), std::move(rt), output);
  }

  pb::Plan TopKOf(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    pb::Plan plan;
    auto* top = plan.mutable_top_k();
    *top->mutable_input() = Plan(scope, depth - 1, output, shape);
    const int keys = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < keys; ++i)
      top->add_group_key(static_cast<std::uint32_t>(rand_.Below(output->size())));
    const int order = 1 + static_cast<int>(rand_.Below(2));
    for (int i = 0; i < order; ++i) {
      auto* o = top->add_order_by();
      o->set_column(static_cast<std::uint32_t>(rand_.Below(output->size())));
      o->set_desc(rand_.Chance(0.5));
      o->set_nulls_last(rand_.Chance(0.5));
    }
    if (rand_.Chance(0.75)) top->set_limit(1 + rand_.Below(5));
    if (rand_.Chance(0.5)) top->set_offset(rand_.Below(4));
    return plan;
  }

  // Negate, mostly under a Threshold (or a union with a threshold above it), so that most
  // collections keep non-negative counts: EXCEPT ALL = Threshold(Union(A, Negate(B))), INTERSECT
  // ALL = Union(A, Negate(Threshold(Union(A, Negate(B))))) (min of the counts), a threshold of
  // anything, a double negation; rarely a bare Union(A, Negate(B)) or Negate(A), whose negative
  // counts a peek answers with an error.
  pb::Plan NegateOf(const std::vector<Collection>& scope, int depth, Types* output, Shape* shape) {
    auto negate = [](pb::Plan p) {
      pb::Plan n;
      *n.mutable_negate()->mutable_input() = std::move(p);
      return n;
    };
    auto threshold = [](pb::Plan p) {
      pb::Plan t;
      *t.mutable_threshold()->mutable_input() = std::move(p);
      return t;
    };
    auto union_of = [](std::vector<pb::Plan> inputs) {
      pb::Plan u;
      for (auto& p : inputs) *u.mutable_union_()->add_inputs() = std::move(p);
      return u;
    };
    // A's plan and types, and a second (third) branch fitted to them.
    Shape as;
    pb::Plan a = Plan(scope, depth - 1, output, &as);
    auto branch = [&] {
      Types types;
      Shape b;
      pb::Plan p = Plan(scope, depth - 1, &types, &b);
      as = Shape{std::max(as.bits, b.bits) + 1, std::max(as.joins, b.joins)};
      return Fit(std::move(p), types, *output);
    };
    auto nullable = [&] {
      for (auto& c : *output) c.nullable = true;
    };
    const std::uint64_t form = rand_.Below(100);
    pb::Plan plan;
    if (form < 45) {
      pb::Plan b = branch();
      plan = threshold(union_of({std::move(a), negate(std::move(b))}));
      nullable();
    } else if (form < 55) {
      pb::Plan b = branch();
      pb::Plan a2 = a;
      plan = union_of(
          {std::move(a), negate(threshold(union_of({std::move(a2), negate(std::move(b))})))});
      nullable();
    } else if (form < 67) {
      plan = threshold(std::move(a));
    } else if (form < 77) {
      plan = negate(negate(std::move(a)));
    } else if (form < 87) {
      pb::Plan b = branch();
      pb::Plan c = branch();
      plan = threshold(union_of({std::move(a), std::move(b), negate(std::move(c))}));
      nullable();
    } else if (form < 95) {
      pb::Plan b = branch();
      plan = union_of({std::move(a), negate(std::move(b))});
      nullable();
    } else {
      plan = negate(std::move(a));
    }
    *shape = as;
    return plan;
  }

 public:
  // Peek keys for an index: mostly keys present in `rows` (the collection at some time), some
  // random ones (maybe absent), and nulls where the key column is nullable.
  std::vector<Row> Keys(const std::vector<std::uint32_t>& key, const pb::Schema& schema,
                        const reference::Multiset& rows) {
    std::vector<Row> present;
    for (const auto& [row, count] : rows) {
      Row k;
      for (auto c : key) k.push_back(row[c]);
      present.push_back(std::move(k));
    }
    std::vector<Row> keys;
    const int n = 1 + static_cast<int>(rand_.Below(3));
    for (int i = 0; i < n; ++i) {
      if (!present.empty() && rand_.Chance(0.7)) {
        keys.push_back(rand_.Pick(present));
        continue;
      }
      Row k;
      for (auto c : key) {
        const auto& column = schema.columns(static_cast<int>(c));
        k.push_back(DataDatum({column.type(), column.nullable()}));
      }
      keys.push_back(std::move(k));
    }
    // Mostly distinct keys (by value: 1.5 and 1.50 are one key); sometimes the same key twice,
    // maybe in two spellings (it still selects its rows once).
    if (!rand_.Chance(0.15)) {
      std::vector<Row> distinct;
      for (auto& k : keys) {
        const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const Row& d) {
          return reference::OrderKeys(d, k) == 0;
        });
        if (!seen) distinct.push_back(std::move(k));
      }
      keys = std::move(distinct);
    }
    return keys;
  }

  pb::Finishing Finishing(std::size_t columns) {
    pb::Finishing f;
    const int order = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < order; ++i) {
      auto* o = f.add_order_by();
      o->set_column(static_cast<std::uint32_t>(rand_.Below(columns)));
      o->set_desc(rand_.Chance(0.5));
      o->set_nulls_last(rand_.Chance(0.5));
    }
    if (rand_.Chance(0.5)) f.set_limit(rand_.Below(6));
    if (rand_.Chance(0.3)) f.set_offset(rand_.Below(4));
    if (rand_.Chance(0.4)) {
      const int width = 1 + static_cast<int>(rand_.Below(columns));
      for (int i = 0; i < width; ++i)
        f.add_project(static_cast<std::uint32_t>(rand_.Below(columns)));
    }
    return f;
  }

 private:
  std::uint64_t seed_;
  Random rand_;
  bool allow_errors_;
  bool new_operators_;
  bool new_types_ = false;
  std::uint64_t func_calls_ = 0;  // AnyFuncCall's so far
  int max_joins_;
  int avg_float_ = 0;
};

inline Types TypesOf(const pb::Schema& schema) {
  Types out;
  for (const auto& c : schema.columns()) out.push_back({c.type(), c.nullable()});
  return out;
}

// Empty when the validator's schema of a build agrees with the generator's column types (the
// same types; a column the generator knows cannot be null is not nullable there either), else
// what differs: a generator bug, or a validator that derives schemas against the contract.
inline std::string TypeMismatch(const Types& generated, const pb::Schema& derived) {
  const Types d = TypesOf(derived);
  bool ok = d.size() == generated.size();
  for (std::size_t i = 0; ok && i < d.size(); ++i) {
    ok = d[i].type == generated[i].type && (generated[i].nullable || !d[i].nullable);
  }
  if (ok) return "";
  auto text = [](const Types& types) {
    std::string out;
    for (const auto& c : types) {
      out += std::string(out.empty() ? "" : ", ") + pb::ScalarType_Name(c.type) +
             (c.nullable ? "?" : "");
    }
    return "(" + out + ")";
  };
  return "generated " + text(generated) + ", validator " + text(d);
}

// A failed case as the suites print it: `first` (how to run it again), its dataflow, and its
// log file's lines, indented.
inline std::string CaseText(const std::string& first, const pb::Command& create,
                            const std::string& log_text) {
  std::string text = first + "\n  dataflow: " + ipc::ToJson(create) + "\n  log file:\n";
  std::istringstream in(log_text);
  for (std::string line; std::getline(in, line);) text += "    " + line + "\n";
  return text;
}

// Makes `d` a maintained dataflow from time 0 that never closes, reading the log file `path` as
// its source `source_id` with columns c0, c1, ... of `types` (the suites add what it builds).
inline void MaintainedFromLog(pb::DataflowDescription* d, const std::string& source_id,
                              const std::string& path, const Types& types) {
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  d->mutable_until();
  auto* src = d->add_source_imports();
  src->set_id(source_id);
  src->mutable_source()->mutable_log()->set_path(path);
  for (std::size_t i = 0; i < types.size(); ++i) {
    auto* col = src->mutable_schema()->add_columns();
    col->set_name("c" + std::to_string(i));
    col->set_type(types[i].type);
    col->set_nullable(types[i].nullable);
  }
}

// A log source's columns: k INT64, v INT64 nullable, s STRING maybe nullable, two or three of
// them (k always) in some order; with new_operators sometimes also f FLOAT64 nullable and b BOOL
// (AVG of floats, ANY/ALL, joins and top-k on those types); with new_types one or two columns of
// the types of DESIGN §16.
inline Types RandomSourceTypes(Generator& gen) {
  Types source_types = {{pb::INT64, false}};
  std::vector<ColumnType> extra = {{pb::INT64, true}, {pb::STRING, gen.rand().Chance(0.3)}};
  if (gen.rand().Chance(0.3)) extra.erase(extra.begin() + static_cast<long>(gen.rand().Below(2)));
  source_types.insert(source_types.end(), extra.begin(), extra.end());
  if (gen.new_operators()) {
    if (gen.rand().Chance(0.6)) source_types.push_back({pb::FLOAT64, true});
    if (gen.rand().Chance(0.4)) source_types.push_back({pb::BOOL, gen.rand().Chance(0.5)});
  }
  if (gen.new_types()) {  // one or two columns of the types of DESIGN §16
    static const std::vector<pb::ScalarType> kTyped = {
        pb::INT16,    pb::INT32, pb::FLOAT32,     pb::NUMERIC, pb::DATE, pb::TIMESTAMP,
        pb::INTERVAL, pb::TIME,  pb::TIMESTAMPTZ, pb::BYTEA,   pb::UUID};
    const int n = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < n; ++i) {
      const pb::ScalarType type = gen.rand().Pick(kTyped);
      source_types.push_back({type, gen.rand().Chance(0.4)});
    }
  }
  std::shuffle(source_types.begin(), source_types.end(), gen.rand().engine());
  return source_types;
}

// Whether a source's multiplicities are huge (RandomUpdates), their base, and the bound of its
// counts (Generator::Shape::bits; a row is inserted at most a few hundred times). With
// new_operators half of the huge sources take 2^33 instead of ~2^62: joinable with small counts
// (never with each other: far beyond int64 a product is the join's sticky error).
struct Magnitude {
  bool huge = false;
  std::int64_t diff = std::numeric_limits<std::int64_t>::max() / 2;
  int bits = Generator::kSmallBits;
};
inline Magnitude RandomMagnitude(Generator& gen, double huge_chance) {
  Magnitude m;
  m.huge = gen.rand().Chance(huge_chance);
  if (!m.huge) return m;
  m.bits = 72;
  if (gen.new_operators() && gen.rand().Chance(0.5)) {
    m.diff = std::int64_t{1} << 33;
    m.bits = 42;
  }
  return m;
}

// Updates over times [0, end) on a small domain: insertions, retractions of what is there,
// duplicates, and pairs that cancel within one time. Counts never go negative. With `huge`,
// insertions have multiplicities near INT64_MAX / 2, so that sums of two or three of them (in
// consolidation, COUNT, a union, a peek) no longer fit int64. `scale` multiplies the number of
// updates per time.
// `huge_diff` is the base of those multiplicities.
inline std::vector<reference::Update> RandomUpdates(
    Generator& gen, const Types& types, Time end, bool huge = false, int scale = 1,
    std::int64_t huge_diff = std::numeric_limits<std::int64_t>::max() / 2) {
  const std::int64_t kHalf = huge_diff;
  std::vector<reference::Update> updates;
  reference::Multiset current;
  auto random_row = [&] {
    Row row;
    for (const auto& c : types) row.push_back(gen.DataDatum(c));
    return row;
  };
  for (Time t = 0; t < end; ++t) {
    const int ops = static_cast<int>(gen.rand().Below(t == 0 ? 8 : 5)) * scale;
    for (int i = 0; i < ops; ++i) {
      const std::uint64_t op = gen.rand().Below(10);
      if (op < 5 || current.empty()) {  // insert
        const Row row = random_row();
        const std::int64_t diff = huge && gen.rand().Chance(0.6)
                                      ? kHalf + gen.rand().Between(0, 1 << 20)
                                  : gen.rand().Chance(0.7) ? 1
                                                           : gen.rand().Between(2, 3);
        updates.push_back({row, t, diff});
        reference::AddTo(current, row, diff);
      } else if (op < 8) {  // retract some of an existing row
        auto it = current.begin();
        std::advance(it, static_cast<long>(gen.rand().Below(current.size())));
        const std::int64_t most = static_cast<std::int64_t>(
            std::min<reference::Count>(it->second, std::numeric_limits<std::int64_t>::max()));
        const std::int64_t diff = -gen.rand().Between(1, most);
        updates.push_back({it->first, t, diff});
        reference::AddTo(current, Row(it->first), diff);
      } else if (op < 9) {  // a pair that cancels
        const Row row = random_row();
        const std::int64_t diff = gen.rand().Between(1, 2);
        updates.push_back({row, t, diff});
        updates.push_back({row, t, -diff});
      } else {  // a duplicate: the same insertion on two lines
        const Row row = random_row();
        updates.push_back({row, t, 1});
        updates.push_back({row, t, 1});
        reference::AddTo(current, row, 2);
      }
    }
  }
  return updates;
}

// The log file: updates grouped between progress marks, shuffled within each group (any order
// is allowed there), with comments and blank lines, ending with `P <end>` (and `C` if closed).
inline std::string LogText(Generator& gen, std::vector<reference::Update> updates, Time end,
                           bool closed = false) {
  std::string text = "# tandem runtime correctness test\n";
  std::size_t next = 0;
  Time mark = 0;
  while (mark < end) {
    const Time next_mark = std::min<Time>(end, mark + 1 + gen.rand().Below(4));
    std::vector<reference::Update> group;
    while (next < updates.size() && updates[next].time < next_mark)
      group.push_back(updates[next++]);
    std::shuffle(group.begin(), group.end(), gen.rand().engine());
    for (const auto& u : group) {
      text += reference::LogUpdateLine(u.row, u.time, u.diff);
      if (gen.rand().Chance(0.03)) text += "\n";
      if (gen.rand().Chance(0.03)) text += "# a comment\n";
    }
    text += "P " + std::to_string(next_mark) + "\n";
    mark = next_mark;
  }
  if (closed) text += "C\n";
  return text;
}

// ---- upsert sources (issue 15) --------------------------------------------------------------

// One or two distinct key columns of `types` (an upsert source's key, in key order).
inline std::vector<std::uint32_t> RandomUpsertKey(Generator& gen, const Types& types) {
  std::vector<std::uint32_t> columns(types.size());
  for (std::uint32_t c = 0; c < columns.size(); ++c) columns[c] = c;
  std::shuffle(columns.begin(), columns.end(), gen.rand().engine());
  columns.resize(types.size() > 1 && gen.rand().Chance(0.4) ? 2 : 1);
  return columns;
}

// The key of an upsert record: the key columns of an upsert's row, a delete's row itself.
inline Row RecordKey(const reference::SourceRecord& r, const std::vector<std::uint32_t>& key) {
  if (r.kind == reference::SourceRecord::Kind::kDelete) return r.row;
  Row k;
  for (auto c : key) k.push_back(r.row[c]);
  return k;
}

// Upsert records over times [0, end) on the small data domain (so keys recur): new keys,
// replacements of a key's row, identical repeats of the current row, deletes of present and of
// absent keys, and bursts of two to four records for one key at one time (the last wins). `scale`
// multiplies the number of records per time.
inline std::vector<reference::SourceRecord> RandomRecords(Generator& gen, const Types& types,
                                                          const std::vector<std::uint32_t>& key,
                                                          Time end, int scale = 1) {
  using Kind = reference::SourceRecord::Kind;
  std::vector<reference::SourceRecord> records;
  std::map<Row, Row, reference::KeyLess> current;  // key value -> row (1.50 replaces 1.5)
  auto random_row = [&] {
    Row row;
    for (const auto& c : types) row.push_back(gen.DataDatum(c));
    return row;
  };
  auto random_key = [&] {
    Row k;
    for (auto c : key) k.push_back(gen.DataDatum(types[c]));
    return k;
  };
  auto present = [&]() -> Row {
    auto it = current.begin();
    std::advance(it, static_cast<long>(gen.rand().Below(current.size())));
    return it->first;
  };
  auto with_key = [&](Row row, const Row& k) {
    for (std::size_t i = 0; i < key.size(); ++i) row[key[i]] = k[i];
    return row;
  };
  auto add = [&](reference::SourceRecord r) {
    const Row k = RecordKey(r, key);
    if (r.kind == Kind::kUpsert) {
      current[k] = r.row;
    } else {
      current.erase(k);
    }
    records.push_back(std::move(r));
  };
  for (Time t = 0; t < end; ++t) {
    const int ops = static_cast<int>(gen.rand().Below(t == 0 ? 8 : 5)) * scale;
    for (int i = 0; i < ops; ++i) {
      const std::uint64_t op = gen.rand().Below(10);
      if (op < 3 || current.empty()) {  // a random row: a new key or a replacement
        add({Kind::kUpsert, random_row(), t});
      } else if (op < 5) {  // a present key's row replaced
        Row row = random_row();
        const Row k = present();
        add({Kind::kUpsert, with_key(std::move(row), k), t});
      } else if (op < 6) {  // the current row again: no change
        add({Kind::kUpsert, current.at(present()), t});
      } else if (op < 8) {  // a present key deleted
        add({Kind::kDelete, present(), t});
      } else if (op < 9) {  // a random key deleted, maybe absent
        add({Kind::kDelete, random_key(), t});
      } else {  // several records for one key at one time
        const Row k = current.empty() || gen.rand().Chance(0.3) ? random_key() : present();
        const int n = 2 + static_cast<int>(gen.rand().Below(3));
        for (int j = 0; j < n; ++j) {
          if (gen.rand().Chance(0.3)) {
            add({Kind::kDelete, k, t});
          } else {
            add({Kind::kUpsert, with_key(random_row(), k), t});
          }
        }
      }
    }
  }
  return records;
}

// The lines of an upsert log source's file, in file order: records (an index into `records`,
// which are in time order) grouped between progress marks (the last `P <end>`). Within a group
// the records are shuffled except that the records of one key at one time keep their order (of
// those the later line wins).
struct UpsertLogItem {
  bool mark = false;
  std::size_t record = 0;  // !mark
  Time time = 0;           // mark: P <time>
};
inline std::vector<UpsertLogItem> UpsertLogOrder(
    Generator& gen, const std::vector<reference::SourceRecord>& records,
    const std::vector<std::uint32_t>& key, Time end) {
  // A key is its value (OrderKeys): the records for 1.5 and 1.50 at one time are one class.
  using Class = std::pair<Time, Row>;
  auto less = [](const Class& a, const Class& b) {
    return a.first != b.first ? a.first < b.first : reference::OrderKeys(a.second, b.second) < 0;
  };
  std::vector<UpsertLogItem> items;
  std::size_t next = 0;
  Time mark = 0;
  while (mark < end) {
    const Time next_mark = std::min<Time>(end, mark + 1 + gen.rand().Below(4));
    std::vector<std::size_t> group;
    while (next < records.size() && records[next].time < next_mark) group.push_back(next++);
    std::vector<std::size_t> shuffled = group;
    std::shuffle(shuffled.begin(), shuffled.end(), gen.rand().engine());
    // Each (time, key) class takes the positions the shuffle gave it, in its original order.
    std::map<Class, std::vector<std::size_t>, decltype(less)> classes(less);
    for (std::size_t i : group) classes[{records[i].time, RecordKey(records[i], key)}].push_back(i);
    std::map<Class, std::size_t, decltype(less)> taken(less);
    for (std::size_t& slot : shuffled) {
      const Class c{records[slot].time, RecordKey(records[slot], key)};
      slot = classes[c][taken[c]++];
    }
    for (std::size_t i : shuffled) items.push_back({false, i, 0});
    items.push_back({true, 0, next_mark});
    mark = next_mark;
  }
  return items;
}

// An upsert log source's file (UpsertLogOrder), with comments and blank lines in between.
inline std::string UpsertLogText(Generator& gen,
                                 const std::vector<reference::SourceRecord>& records,
                                 const std::vector<std::uint32_t>& key, Time end) {
  std::string text = "# tandem upsert correctness test\n";
  for (const auto& item : UpsertLogOrder(gen, records, key, end)) {
    if (item.mark) {
      text += "P " + std::to_string(item.time) + "\n";
      continue;
    }
    text += reference::LogRecordLine(records[item.record]);
    if (gen.rand().Chance(0.03)) text += "\n";
    if (gen.rand().Chance(0.03)) text += "# a comment\n";
  }
  return text;
}

// ---- the controller side --------------------------------------------------------------------

// Receives responses, keeps the latest frontiers and the peek answers, and checks protocol
// invariants on the way (frontiers never regress, one answer per uuid).
class Session {
 public:
  Session(SupervisorProcess& sup, TestController& ctl) : sup_(sup), ctl_(&ctl) {}

  // From here on the responses come to `ctl` (a controller that replaced the previous one).
  void Rebind(TestController& ctl) { ctl_ = &ctl; }

  void Pump(std::chrono::milliseconds limit) {
    auto r = ctl_->Receive(limit);
    while (r) {
      Handle(*r);
      r = ctl_->Receive(0ms);
    }
  }

  bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline || sup_.Exited()) return done();
      Pump(20ms);
    }
    return true;
  }

  // UINT64_MAX stands for the empty frontier; nullopt if nothing was reported.
  std::optional<std::uint64_t> Write(const std::string& id) const {
    auto it = write_.find(id);
    if (it == write_.end()) return std::nullopt;
    return it->second;
  }

  std::map<std::string, pb::PeekResponse>& peeks() { return peeks_; }
  // Forgets `id`'s frontiers (it was dropped and is about to be created again).
  void Forget(const std::string& id) { write_.erase(id); }
  std::vector<std::string>& command_errors() { return command_errors_; }
  // WriteResponses by uuid (the uuid the session sent).
  std::map<std::string, pb::WriteResponse>& write_responses() { return write_responses_; }
  // Status responses (Reconciled, ...), in arrival order.
  std::vector<pb::Response>& statuses() { return statuses_; }
  // Subscribe answers (SubscribeBatch, SubscribeEnd) by uuid (subscribe_stream.h).
  SubscribeStreams& subscribes() { return subscribes_; }

 private:
  void Handle(const pb::Response& r) {
    if (r.has_frontiers()) {
      const auto& f = r.frontiers();
      const std::uint64_t raw = f.write().elements_size() == 0
                                    ? std::numeric_limits<std::uint64_t>::max()
                                    : f.write().elements(0);
      EXPECT_LE(f.write().elements_size(), 1) << ipc::ToJson(r);
      auto [it, inserted] = write_.emplace(f.id(), raw);
      if (!inserted) {
        EXPECT_GE(raw, it->second)
            << "write frontier of " << f.id() << " regressed: " << ipc::ToJson(r);
        it->second = std::max(it->second, raw);
      }
    } else if (r.has_peek_response()) {
      const auto& p = r.peek_response();
      EXPECT_TRUE(peeks_.emplace(p.uuid(), p).second)
          << "a second PeekResponse for " << p.uuid() << ": " << ipc::ToJson(r);
    } else if (r.has_write_response()) {
      const auto& w = r.write_response();
      EXPECT_TRUE(write_responses_.emplace(w.uuid(), w).second)
          << "a second WriteResponse for " << w.uuid() << ": " << ipc::ToJson(r);
    } else if (r.has_command_error()) {
      command_errors_.push_back(ipc::ToJson(r));
    } else if (r.has_status()) {
      statuses_.push_back(r);
    } else {
      subscribes_.Handle(r);
    }
  }

  SupervisorProcess& sup_;
  TestController* ctl_;
  std::map<std::string, std::uint64_t> write_;
  std::map<std::string, pb::PeekResponse> peeks_;
  std::map<std::string, pb::WriteResponse> write_responses_;
  std::vector<std::string> command_errors_;
  std::vector<pb::Response> statuses_;
  SubscribeStreams subscribes_;
};

inline std::string AnswerText(const pb::PeekResponse& p) {
  switch (p.result_case()) {
    case pb::PeekResponse::kRows: {
      PeekAnswer a;
      for (const auto& rc : p.rows().rows()) {
        a.rows.emplace_back(reference::FromProto(rc.row()), rc.count());
      }
      return reference::ToString(a);
    }
    case pb::PeekResponse::kError:
      return "Error(" + p.error() + ")";
    case pb::PeekResponse::kCanceled:
      return "Canceled";
    default:
      return "(no result)";
  }
}

// True when the runtime's answer is the reference's: the same rows with the same counts in the
// same order, or both an error (messages are not compared: they are the runtime's wording).
inline bool Agrees(const PeekAnswer& expected, const pb::PeekResponse& actual) {
  if (!expected.ok) return actual.has_error();
  if (!actual.has_rows() || actual.rows().rows_size() != static_cast<int>(expected.rows.size())) {
    return false;
  }
  for (int i = 0; i < actual.rows().rows_size(); ++i) {
    const auto& rc = actual.rows().rows(i);
    if (rc.count() != expected.rows[static_cast<std::size_t>(i)].second) return false;
    const Row row = reference::FromProto(rc.row());
    const Row& want = expected.rows[static_cast<std::size_t>(i)].first;
    // Same datums, same types (OrderRows alone equates -0.0 and 0.0, which is fine here).
    if (row.size() != want.size() || reference::OrderRows(row, want) != 0) return false;
    for (std::size_t d = 0; d < row.size(); ++d) {
      if (row[d].index() != want[d].index()) return false;
    }
  }
  return true;
}

inline std::string Tail(const std::string& log) {
  constexpr std::size_t kTail = 4000;
  return "--- supervisor log (tail) ---\n" +
         (log.size() > kTail ? log.substr(log.size() - kTail) : log);
}

// The number of cases a randomized suite runs: TANDEM_TEST_CASES when set; else `fallback`, halved
// under a sanitizer (the asan and tsan test presets set TANDEM_TEST_SANITIZER) — there the
// reference evaluator and the instrumented runtime make a case several times slower, and the
// sanitizers look for memory and thread errors, which the first half of the seeds meets as well.
// The release run (`tools/run.sh test`) runs every seed.
inline int CasesFromEnv(int fallback) {
  if (const char* v = std::getenv("TANDEM_TEST_CASES")) return std::max(1, std::atoi(v));
  if (std::getenv("TANDEM_TEST_SANITIZER") != nullptr) return std::max(1, fallback / 2);
  return fallback;
}

inline std::optional<std::uint64_t> SeedFromEnv() {
  const char* v = std::getenv("TANDEM_TEST_SEED");
  if (!v) return std::nullopt;
  return std::strtoull(v, nullptr, 10);
}

}  // namespace tandem::testing
