#include "reference/reference.h"
#include "reference/reference_values.h"  // the value semantics of the types of DESIGN §16

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/datetime.h"
#include "base/datum_text.h"
#include "base/numeric.h"
#include "reference/temporal.h"

namespace tandem::reference {
namespace {

constexpr const char* kOverflow = "integer overflow";
constexpr const char* kDivisionByZero = "division by zero";
constexpr const char* kCountOverflow = "integer overflow in COUNT";
constexpr const char* kAvgOverflow = "integer overflow in AVG";
constexpr int kMaxPlanDepth = 1000;

// Wide enough for any sum of int64 products of an int64 value and an int64 multiplicity that a
// test can build: SUM overflow is judged on the final value.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

bool FitsInt64(Count v) {
  return v >= std::numeric_limits<std::int64_t>::min() &&
         v <= std::numeric_limits<std::int64_t>::max();
}

bool IsNull(const Datum& d) { return std::holds_alternative<Null>(d); }
bool IsTrue(const Datum& d) { return std::holds_alternative<bool>(d) && std::get<bool>(d); }
bool IsFalse(const Datum& d) { return std::holds_alternative<bool>(d) && !std::get<bool>(d); }

Value TypeError(const std::string& what) {
  return Value::Error("reference: type error in " + what);
}

Value EvalUnary(const pb::CallUnary& call, const Row& row, const Types& types) {
  Value v = Eval(call.expr(), row, types);
  if (v.is_error()) return v;
  switch (call.func()) {
    case pb::IS_NULL:
      return Value::Of(IsNull(v.datum));
    case pb::IS_NOT_NULL:
      return Value::Of(!IsNull(v.datum));
    case pb::NOT:
      if (IsNull(v.datum)) return v;
      if (!std::holds_alternative<bool>(v.datum)) return TypeError("NOT");
      return Value::Of(!std::get<bool>(v.datum));
    case pb::NEGATE:
      if (IsNull(v.datum)) return v;
      return NegateValue(v.datum, TypeOf(call.expr(), row, types).type());
    default:
      break;
  }
  return TypeError("unknown unary function");
}

Value IntArithmetic(pb::BinaryFunc func, std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  switch (func) {
    case pb::ADD:
      if (__builtin_add_overflow(a, b, &out)) return Value::Error(kOverflow);
      return Value::Of(out);
    case pb::SUB:
      if (__builtin_sub_overflow(a, b, &out)) return Value::Error(kOverflow);
      return Value::Of(out);
    case pb::MUL:
      if (__builtin_mul_overflow(a, b, &out)) return Value::Error(kOverflow);
      return Value::Of(out);
    case pb::DIV:
      if (b == 0) return Value::Error(kDivisionByZero);
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
        return Value::Error(kOverflow);
      }
      return Value::Of(a / b);
    case pb::MOD:
      if (b == 0) return Value::Error(kDivisionByZero);
      if (b == -1) return Value::Of(std::int64_t{0});  // INT64_MIN % -1 is 0, not a trap
      return Value::Of(a % b);
    default:
      break;
  }
  return TypeError("int64 arithmetic");
}

Value FloatArithmetic(pb::BinaryFunc func, double a, double b) {
  switch (func) {
    case pb::ADD:
      return Value::Of(a + b);
    case pb::SUB:
      return Value::Of(a - b);
    case pb::MUL:
      return Value::Of(a * b);
    case pb::DIV:
      if (b == 0.0) return Value::Error(kDivisionByZero);
      return Value::Of(a / b);
    case pb::MOD:
      if (b == 0.0) return Value::Error(kDivisionByZero);
      return Value::Of(std::fmod(a, b));
    default:
      break;
  }
  return TypeError("float64 arithmetic");
}

Value EvalBinary(const pb::CallBinary& call, const Row& row, const Types& types) {
  const Value l = Eval(call.left(), row, types);
  const Value r = Eval(call.right(), row, types);
  const pb::BinaryFunc func = call.func();
  if (func == pb::AND || func == pb::OR) {
    // The absorbing value wins over null and over an error on the other side.
    const bool absorbing = func == pb::OR;
    auto is_absorbing = [&](const Value& v) {
      return !v.is_error() && (absorbing ? IsTrue(v.datum) : IsFalse(v.datum));
    };
    if (is_absorbing(l) || is_absorbing(r)) return Value::Of(absorbing);
    if (l.is_error()) return l;
    if (r.is_error()) return r;
    if (IsNull(l.datum) || IsNull(r.datum)) return Value::Of(Null{});
    if (!std::holds_alternative<bool>(l.datum) || !std::holds_alternative<bool>(r.datum)) {
      return TypeError(func == pb::AND ? "AND" : "OR");
    }
    return Value::Of(!absorbing);
  }
  if (l.is_error()) return l;
  if (r.is_error()) return r;
  if (IsNull(l.datum) || IsNull(r.datum)) return Value::Of(Null{});
  switch (func) {
    case pb::ADD:
    case pb::SUB:
    case pb::MUL:
    case pb::DIV:
    case pb::MOD: {
      const pb::ScalarType lt = TypeOf(call.left(), row, types).type();
      const pb::ScalarType rt = TypeOf(call.right(), row, types).type();
      const auto* li = std::get_if<std::int64_t>(&l.datum);
      const auto* ri = std::get_if<std::int64_t>(&r.datum);
      if (li && ri && lt == pb::INT64 && rt == pb::INT64) return IntArithmetic(func, *li, *ri);
      const auto* lf = std::get_if<double>(&l.datum);
      const auto* rf = std::get_if<double>(&r.datum);
      if (lf && rf && lt == pb::FLOAT64 && rt == pb::FLOAT64) {
        return FloatArithmetic(func, *lf, *rf);
      }
      return Arithmetic(func, l.datum, lt, r.datum, rt);
    }
    case pb::EQ:
    case pb::NE:
    case pb::LT:
    case pb::LE:
    case pb::GT:
    case pb::GE: {
      if (l.datum.index() != r.datum.index()) return TypeError("comparison");
      const int c = CompareValues(l.datum, r.datum);
      switch (func) {
        case pb::EQ:
          return Value::Of(c == 0);
        case pb::NE:
          return Value::Of(c != 0);
        case pb::LT:
          return Value::Of(c < 0);
        case pb::LE:
          return Value::Of(c <= 0);
        case pb::GT:
          return Value::Of(c > 0);
        default:
          return Value::Of(c >= 0);
      }
    }
    default:
      break;
  }
  return TypeError("unknown binary function");
}

Row Project(const Row& row, const std::vector<std::uint32_t>& columns) {
  Row out;
  out.reserve(columns.size());
  for (auto c : columns) out.push_back(row.at(c));
  return out;
}

template <typename Repeated>
std::vector<std::uint32_t> Columns(const Repeated& repeated) {
  return std::vector<std::uint32_t>(repeated.begin(), repeated.end());
}

void AddAll(Contents& into, const Contents& from) {
  for (const auto& [row, count] : from.rows) AddTo(into.rows, row, count);
  for (const auto& [message, count] : from.errors) AddTo(into.errors, message, count);
}

Count Total(const Multiset& rows) {
  Count total = 0;
  for (const auto& [row, count] : rows) total += count;
  return total;
}

// The spelling a key equal by value is printed with: the smallest (OrderRows) of `spellings`
// (the exact rows of one key, each with its summed count) whose count is > 0; nullptr when none
// is. Spellings whose counts total > 0 always have one.
const Row* SmallestPresent(const Multiset& spellings) {
  for (const auto& [row, count] : spellings) {
    if (count > 0) return &row;
  }
  return nullptr;
}

// Whole rows grouped by value (KeyLess): per group its spellings with their counts.
std::map<Row, Multiset, KeyLess> RowsByValue(const Multiset& rows) {
  std::map<Row, Multiset, KeyLess> groups;
  for (const auto& [row, count] : rows) AddTo(groups[row], row, count);
  return groups;
}

// The group's non-null values of the aggregate's column, each with its total count (zero totals
// dropped), in ascending OrderDatums order.
Multiset NonNullValues(const pb::Aggregate& aggregate,
                       const std::vector<std::pair<const Row*, Count>>& group) {
  Multiset per_value;
  for (const auto& [row, count] : group) {
    const Datum& d = row->at(aggregate.column());
    if (!IsNull(d)) AddTo(per_value, Row{d}, count);
  }
  return per_value;
}

// One aggregate over one group: rows of the group with their (non-zero) multiplicities.
// Returns the datum, or an error message.
Value Aggregate(const pb::Aggregate& aggregate,
                const std::vector<std::pair<const Row*, Count>>& group, Count total,
                const Types& types) {
  pb::ScalarType input = aggregate.column() < types.size() ? types[aggregate.column()].type()
                                                           : pb::SCALAR_TYPE_UNSPECIFIED;
  for (const auto& [row, count] : group) {  // untyped: the kind of the values says
    if (input != pb::SCALAR_TYPE_UNSPECIFIED || aggregate.func() == pb::COUNT) break;
    input = TypeOfDatum(row->at(aggregate.column()));
  }
  if (input == pb::NUMERIC || input == pb::INTERVAL || input == pb::FLOAT32) {
    if (aggregate.func() == pb::SUM) {
      // Null when the non-null values' multiplicities sum to zero or less (as SUM's, AVG's and
      // COUNT's "no value": under negative multiplicities some may still be there).
      const Multiset per_value = NonNullValues(aggregate, group);
      Count non_null = 0;
      for (const auto& [value, count] : per_value) non_null += count;
      if (non_null <= 0) return Value::Of(Null{});
      return SumOfTyped(per_value, input);
    }
  }
  if ((input == pb::NUMERIC || input == pb::INTERVAL) && aggregate.func() == pb::AVG) {
    const Multiset per_value = NonNullValues(aggregate, group);
    Count total_count = 0;
    for (const auto& [value, count] : per_value) total_count += count;
    if (total_count <= 0) return Value::Of(Null{});
    return AvgOfTyped(per_value, input, total_count);
  }
  switch (aggregate.func()) {
    case pb::COUNT:
      if (total > std::numeric_limits<std::int64_t>::max()) return Value::Error(kOverflow);
      return Value::Of(static_cast<std::int64_t>(total));
    case pb::SUM: {
      Count non_null = 0;  // null when the non-null values' multiplicities sum to zero or less
      bool is_float = false;
      Int128 int_sum = 0;
      double float_sum = 0;
      for (const auto& [row, count] : group) {
        const Datum& d = row->at(aggregate.column());
        if (IsNull(d)) continue;
        non_null += count;
        if (const auto* i = std::get_if<std::int64_t>(&d)) {
          Int128 product;
          if (__builtin_mul_overflow(static_cast<Int128>(*i), count, &product) ||
              __builtin_add_overflow(int_sum, product, &int_sum)) {
            return Value::Error(kOverflow);
          }
        } else if (const auto* f = std::get_if<double>(&d)) {
          is_float = true;
          float_sum += *f * static_cast<double>(count);
        } else {
          return TypeError("SUM");
        }
      }
      if (non_null <= 0) return Value::Of(Null{});
      if (is_float) return Value::Of(float_sum);
      if (int_sum > std::numeric_limits<std::int64_t>::max() ||
          int_sum < std::numeric_limits<std::int64_t>::min()) {
        return Value::Error(kOverflow);
      }
      return Value::Of(static_cast<std::int64_t>(int_sum));
    }
    case pb::MIN:
    case pb::MAX: {
      // Multiplicity per value, then the extreme value with a positive one.
      std::optional<Datum> best;
      for (const auto& [value, count] : NonNullValues(aggregate, group)) {
        if (count <= 0) continue;
        if (!best || (aggregate.func() == pb::MIN ? OrderDatums(value[0], *best) < 0
                                                  : OrderDatums(value[0], *best) > 0)) {
          best = value[0];
        }
      }
      return Value::Of(best ? *best : Datum(Null{}));
    }
    case pb::COUNT_NON_NULL: {
      Count non_null = 0;
      for (const auto& [row, count] : group) {
        if (!IsNull(row->at(aggregate.column()))) non_null += count;
      }
      if (!FitsInt64(non_null)) return Value::Error(kCountOverflow);
      return Value::Of(static_cast<std::int64_t>(non_null));
    }
    case pb::COUNT_DISTINCT: {
      // Distinct as PostgreSQL's = says: the spellings of a value (1.5, 1.50) count together.
      std::map<Row, Count, KeyLess> by_value;
      for (const auto& [value, count] : NonNullValues(aggregate, group)) by_value[value] += count;
      std::int64_t distinct = 0;
      for (const auto& [value, count] : by_value) distinct += count > 0;
      return Value::Of(distinct);
    }
    case pb::AVG: {
      // Per distinct value first (ascending OrderDatums), so that the float sum's rounding is a
      // function of the multiset alone.
      const Multiset per_value = NonNullValues(aggregate, group);
      Count total_count = 0;
      for (const auto& [value, count] : per_value) total_count += count;
      if (total_count <= 0) return Value::Of(Null{});
      if (std::holds_alternative<std::int64_t>(per_value.begin()->first[0])) {
        Int128 sum = 0;
        for (const auto& [value, count] : per_value) {
          const auto* i = std::get_if<std::int64_t>(&value[0]);
          if (i == nullptr) return TypeError("AVG");
          Int128 product;
          if (__builtin_mul_overflow(static_cast<Int128>(*i), count, &product) ||
              __builtin_add_overflow(sum, product, &sum)) {
            return Value::Error(kAvgOverflow);
          }
        }
        return Value::Of(static_cast<double>(sum) / static_cast<double>(total_count));
      }
      double sum = 0.0;
      for (const auto& [value, count] : per_value) {
        const auto* f = std::get_if<double>(&value[0]);
        if (f == nullptr) return TypeError("AVG");
        sum += *f * static_cast<double>(count);
      }
      return Value::Of(sum / static_cast<double>(total_count));
    }
    case pb::ANY:
    case pb::ALL: {
      bool some_true = false, some_false = false;
      for (const auto& [value, count] : NonNullValues(aggregate, group)) {
        if (count <= 0) continue;
        if (!std::holds_alternative<bool>(value[0])) {
          return TypeError(aggregate.func() == pb::ANY ? "ANY" : "ALL");
        }
        (std::get<bool>(value[0]) ? some_true : some_false) = true;
      }
      if (!some_true && !some_false) return Value::Of(Null{});
      return Value::Of(aggregate.func() == pb::ANY ? some_true : !some_false);
    }
    default:
      break;
  }
  return TypeError("unknown aggregate function");
}

// Order of a finishing or a TopK: the order_by columns, then the whole row.
int CompareOrdered(const google::protobuf::RepeatedPtrField<pb::ColumnOrder>& order_by,
                   const Row& a, const Row& b) {
  for (const auto& order : order_by) {
    const Datum& x = a.at(order.column());
    const Datum& y = b.at(order.column());
    const bool xn = IsNull(x), yn = IsNull(y);
    if (xn || yn) {
      if (xn && yn) continue;
      // Where nulls go does not depend on `desc`.
      const int null_first = xn ? -1 : 1;
      return order.nulls_last() ? -null_first : null_first;
    }
    int c = OrderDatums(x, y);
    if (order.desc()) c = -c;
    if (c != 0) return c;
  }
  return OrderRows(a, b);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Datum FromProto(const pb::Datum& datum) {
  switch (datum.kind_case()) {
    case pb::Datum::kBool:
      return datum.bool_();
    case pb::Datum::kInt64:
      return static_cast<std::int64_t>(datum.int64());
    case pb::Datum::kFloat64:
      return datum.float64();
    case pb::Datum::kString:
      return datum.string();
    case pb::Datum::kNumeric: {
      auto n = ParseNumeric(datum.numeric());
      if (!n.ok()) break;  // not a numeric: the validator refuses it before anything runs
      return *n;
    }
    case pb::Datum::kBytea:
      return Bytes{datum.bytea()};
    case pb::Datum::kDate:
      return Date{datum.date()};
    case pb::Datum::kTime:
      return TimeOfDay{datum.time()};
    case pb::Datum::kTimestamp:
      return Timestamp{datum.timestamp()};
    case pb::Datum::kTimestamptz:
      return TimestampTz{datum.timestamptz()};
    case pb::Datum::kInterval:
      return Interval{datum.interval().months(), datum.interval().days(),
                      datum.interval().micros()};
    case pb::Datum::kUuid: {
      Uuid u;
      if (datum.uuid().size() != u.bytes.size()) break;  // refused by the validator
      std::memcpy(u.bytes.data(), datum.uuid().data(), u.bytes.size());
      return u;
    }
    case pb::Datum::kNull:
    case pb::Datum::KIND_NOT_SET:
      break;
  }
  return Null{};
}

Row FromProto(const pb::Row& row) {
  Row out;
  out.reserve(static_cast<std::size_t>(row.datums_size()));
  for (const auto& d : row.datums()) out.push_back(FromProto(d));
  return out;
}

pb::Datum ToProto(const Datum& datum) {
  pb::Datum out;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Null>) {
          out.mutable_null();
        } else if constexpr (std::is_same_v<T, bool>) {
          out.set_bool_(v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          out.set_int64(v);
        } else if constexpr (std::is_same_v<T, double>) {
          out.set_float64(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out.set_string(v);
        } else if constexpr (std::is_same_v<T, Numeric>) {
          out.set_numeric(NumericText(v));
        } else if constexpr (std::is_same_v<T, Bytes>) {
          out.set_bytea(v.bytes);
        } else if constexpr (std::is_same_v<T, Date>) {
          out.set_date(v.days);
        } else if constexpr (std::is_same_v<T, TimeOfDay>) {
          out.set_time(v.micros);
        } else if constexpr (std::is_same_v<T, Timestamp>) {
          out.set_timestamp(v.micros);
        } else if constexpr (std::is_same_v<T, TimestampTz>) {
          out.set_timestamptz(v.micros);
        } else if constexpr (std::is_same_v<T, Interval>) {
          out.mutable_interval()->set_months(v.months);
          out.mutable_interval()->set_days(v.days);
          out.mutable_interval()->set_micros(v.micros);
        } else {
          static_assert(std::is_same_v<T, Uuid>, "every datum kind has its proto field");
          out.set_uuid(std::string(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()));
        }
      },
      datum);
  return out;
}

pb::Row ToProto(const Row& row) {
  pb::Row out;
  for (const auto& d : row) *out.add_datums() = ToProto(d);
  return out;
}

Value Eval(const pb::ScalarExpr& expr, const Row& row) { return Eval(expr, row, Types{}); }

Value Eval(const pb::ScalarExpr& expr, const Row& row, const Types& types) {
  switch (expr.kind_case()) {
    case pb::ScalarExpr::kColumn:
      if (expr.column() >= row.size()) return TypeError("column reference");
      return Value::Of(row[expr.column()]);
    case pb::ScalarExpr::kLiteral:
      return Value::Of(FromProto(expr.literal().value()));
    case pb::ScalarExpr::kUnary:
      return EvalUnary(expr.unary(), row, types);
    case pb::ScalarExpr::kBinary:
      return EvalBinary(expr.binary(), row, types);
    case pb::ScalarExpr::kIfThenElse: {
      const Value cond = Eval(expr.if_then_else().cond(), row, types);
      if (cond.is_error()) return cond;
      return IsTrue(cond.datum) ? Eval(expr.if_then_else().then(), row, types)
                                : Eval(expr.if_then_else().els(), row, types);
    }
    case pb::ScalarExpr::kCast: {
      Value v = Eval(expr.cast().expr(), row, types);
      if (v.is_error() || IsNull(v.datum)) return v;
      return CastValue(v.datum, TypeOf(expr.cast().expr(), row, types), expr.cast().to());
    }
    case pb::ScalarExpr::kCall: {
      const auto& args = expr.call().args();
      return CallFunction(
          expr.call(), [&](int i) { return Eval(args.Get(i), row, types); },
          [&](int i) { return TypeOf(args.Get(i), row, types); });
    }
    case pb::ScalarExpr::kNow:  // a temporal filter's is put in as a literal (temporal.h)
      return TypeError("tandem_now() outside a temporal filter");
    case pb::ScalarExpr::KIND_NOT_SET:
      break;
  }
  return TypeError("expression without kind");
}

MfpResult ApplyMfp(const pb::MapFilterProject& mfp, const Row& row) {
  return ApplyMfp(mfp, row, Types{});
}

MfpResult ApplyMfp(const pb::MapFilterProject& mfp, const Row& row, const Types& types) {
  MfpResult result;
  Row columns = row;
  Types column_types = types;
  // Untyped input (types empty): every column is typed by its datum.
  const bool typed = !types.empty();
  for (const auto& expr : mfp.map()) {
    if (typed) column_types.push_back(TypeOf(expr, columns, column_types));
    Value v = Eval(expr, columns, column_types);
    if (v.is_error()) {
      result.kind = MfpResult::Kind::kError;
      result.error = std::move(*v.error);
      return result;
    }
    columns.push_back(std::move(v.datum));
  }
  for (const auto& predicate : mfp.predicates()) {
    Value v = Eval(predicate, columns, column_types);
    if (v.is_error()) {
      result.kind = MfpResult::Kind::kError;
      result.error = std::move(*v.error);
      return result;
    }
    if (!IsTrue(v.datum)) return result;  // false or null: dropped
  }
  result.kind = MfpResult::Kind::kRow;
  result.row =
      mfp.projection_size() == 0 ? std::move(columns) : Project(columns, Columns(mfp.projection()));
  return result;
}

std::string CountToString(Count count) {
  if (count == 0) return "0";
  const bool negative = count < 0;
  UInt128 magnitude = negative ? -static_cast<UInt128>(count) : static_cast<UInt128>(count);
  std::string digits;
  for (; magnitude != 0; magnitude /= 10) digits.insert(digits.begin(), '0' + magnitude % 10);
  return (negative ? "-" : "") + digits;
}

void AddTo(Multiset& set, const Row& row, Count diff) {
  if (diff == 0) return;
  auto [it, inserted] = set.emplace(row, diff);
  if (!inserted && (it->second += diff) == 0) set.erase(it);
}

void AddTo(ErrorSet& set, const std::string& message, Count diff) {
  if (diff == 0) return;
  auto [it, inserted] = set.emplace(message, diff);
  if (!inserted && (it->second += diff) == 0) set.erase(it);
}

Contents MfpOf(const Contents& input, const pb::MapFilterProject& mfp) {
  return MfpOf(input, mfp, Types{});
}

Contents MfpOf(const Contents& input, const pb::MapFilterProject& mfp, const Types& types) {
  Contents out;
  out.errors = input.errors;
  for (const auto& [row, count] : input.rows) {
    const MfpResult r = ApplyMfp(mfp, row, types);
    if (r.kind == MfpResult::Kind::kRow) AddTo(out.rows, r.row, count);
    if (r.kind == MfpResult::Kind::kError) AddTo(out.errors, r.error, count);
  }
  return out;
}

Contents ReduceOf(const Contents& input, const pb::Plan::Reduce& reduce) {
  return ReduceOf(input, reduce, Types{});
}

Contents ReduceOf(const Contents& input, const pb::Plan::Reduce& reduce, const Types& types) {
  Contents out;
  out.errors = input.errors;
  const std::vector<std::uint32_t> group_key = Columns(reduce.group_key());
  // Groups by the group key's value; every member counts towards the aggregates.
  struct Group {
    Multiset keys;  // the group key's spellings, each with its members' summed count
    std::vector<std::pair<const Row*, Count>> members;
  };
  std::map<Row, Group, KeyLess> groups;
  for (const auto& [row, count] : input.rows) {
    Row key = Project(row, group_key);
    Group& group = groups[key];
    AddTo(group.keys, key, count);
    group.members.emplace_back(&row, count);
  }
  for (const auto& [value, group] : groups) {
    const Count total = Total(group.keys);
    if (total <= 0) continue;
    Row row = *SmallestPresent(group.keys);
    bool failed = false;
    for (const auto& aggregate : reduce.aggregates()) {
      Value v = Aggregate(aggregate, group.members, total, types);
      if (v.is_error()) {
        AddTo(out.errors, *v.error, 1);
        failed = true;
        break;
      }
      row.push_back(std::move(v.datum));
    }
    if (!failed) AddTo(out.rows, row, 1);
  }
  return out;
}

Contents UnionOf(const std::vector<Contents>& inputs) {
  Contents out;
  for (const auto& input : inputs) AddAll(out, input);
  return out;
}

Contents DistinctOf(const Contents& input) {
  Contents out;
  out.errors = input.errors;
  for (const auto& [value, spellings] : RowsByValue(input.rows)) {
    if (Total(spellings) > 0) out.rows.emplace(*SmallestPresent(spellings), 1);
  }
  return out;
}

Contents JoinOf(const Contents& left, const Contents& right, const pb::Plan::Join& join,
                std::size_t right_arity) {
  Contents out;
  out.errors = left.errors;
  for (const auto& [message, count] : right.errors) AddTo(out.errors, message, count);
  const std::vector<std::uint32_t> left_key = Columns(join.left_key());
  const std::vector<std::uint32_t> right_key = Columns(join.right_key());
  auto has_null = [](const Row& key) { return std::any_of(key.begin(), key.end(), IsNull); };
  // Right rows by key value (OrderKeys == 0: 1.5 finds 1.50); null keys never match.
  std::map<Row, std::vector<std::pair<const Row*, Count>>, KeyLess> by_key;
  for (const auto& [row, count] : right.rows) {
    Row key = Project(row, right_key);
    if (!has_null(key)) by_key[std::move(key)].emplace_back(&row, count);
  }
  for (const auto& [l, cl] : left.rows) {
    const Row key = Project(l, left_key);
    const auto match = has_null(key) ? by_key.end() : by_key.find(key);
    if (match == by_key.end()) {
      if (join.kind() == pb::LEFT_OUTER) {
        Row padded = l;
        padded.resize(l.size() + right_arity, Datum(Null{}));
        AddTo(out.rows, padded, cl);
      }
      continue;
    }
    for (const auto& [r, cr] : match->second) {
      Row joined = l;
      joined.insert(joined.end(), r->begin(), r->end());
      Count product;
      if (__builtin_mul_overflow(cl, cr, &product)) {
        // Not a runtime error: the reference's counts cannot hold it (no test comes near).
        AddTo(out.errors, "reference: join count beyond 128 bits", 1);
        continue;
      }
      AddTo(out.rows, joined, product);
    }
  }
  return out;
}

Contents TopKOf(const Contents& input, const pb::Plan::TopK& top_k) {
  Contents out;
  out.errors = input.errors;
  const std::vector<std::uint32_t> group_key = Columns(top_k.group_key());
  // Groups by the group key's value; members keep their own rows.
  std::map<Row, std::vector<std::pair<const Row*, Count>>, KeyLess> groups;
  for (const auto& [row, count] : input.rows) {
    if (count > 0) groups[Project(row, group_key)].emplace_back(&row, count);
  }
  // Positions are exact 128-bit numbers; the window is [begin, end), or [begin, ...) unlimited.
  const bool limited = top_k.has_limit();
  const Int128 begin = top_k.offset();
  const Int128 end = begin + top_k.limit();
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end(), [&](const auto& a, const auto& b) {
      return CompareOrdered(top_k.order_by(), *a.first, *b.first) < 0;
    });
    Int128 position = 0;  // of the first unit of the current row
    for (const auto& [row, count] : members) {
      if (limited && position >= end) break;
      // The row's units are [position, position + count); the window is [begin, end).
      const Int128 from = std::max(position, begin);
      const Int128 to = limited ? std::min(position + count, end) : position + count;
      if (to > from) AddTo(out.rows, *row, to - from);
      position += count;
    }
  }
  return out;
}

Contents NegateOf(const Contents& input) {
  Contents out;
  out.errors = input.errors;
  for (const auto& [row, count] : input.rows) out.rows.emplace(row, -count);
  return out;
}

Contents ThresholdOf(const Contents& input) {
  Contents out;
  out.errors = input.errors;
  for (const auto& [value, spellings] : RowsByValue(input.rows)) {
    const Count total = Total(spellings);
    if (total > 0) out.rows.emplace(*SmallestPresent(spellings), total);
  }
  return out;
}

PeekAnswer AnswerPeek(const Contents& contents, const std::vector<std::uint32_t>& key,
                      const std::vector<Row>& keys, const pb::MapFilterProject& mfp,
                      const pb::Finishing& finishing) {
  return AnswerPeek(contents, key, keys, mfp, finishing, Types{});
}

PeekAnswer AnswerPeek(const Contents& contents, const std::vector<std::uint32_t>& key,
                      const std::vector<Row>& keys, const pb::MapFilterProject& mfp,
                      const pb::Finishing& finishing, const Types& types) {
  PeekAnswer answer;
  auto fail = [&](std::string message) {
    answer.ok = false;
    answer.error = std::move(message);
    answer.rows.clear();
    return answer;
  };
  if (contents.HasError()) return fail(contents.FirstError());
  Multiset selected;
  for (const auto& [row, count] : contents.rows) {
    if (!keys.empty()) {
      const Row row_key = Project(row, key);
      const bool match = std::any_of(keys.begin(), keys.end(),
                                     [&](const Row& k) { return OrderKeys(k, row_key) == 0; });
      if (!match) continue;
    }
    if (!FitsInt64(count)) return fail("multiplicity overflow of " + RowText(row));
    MfpResult r = ApplyMfp(mfp, row, types);
    if (r.kind == MfpResult::Kind::kError) return fail(r.error);
    if (r.kind != MfpResult::Kind::kRow) continue;
    // A selected row the mfp keeps with a negative count is an error, whatever other rows the
    // projection makes equal to it: the answer does not depend on where rows live.
    if (count < 0) {
      return fail("negative multiplicity " + CountToString(count) + " of " + RowText(row));
    }
    AddTo(selected, r.row, count);
  }
  std::vector<std::pair<Row, Count>> sorted(selected.begin(), selected.end());
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    return CompareOrdered(finishing.order_by(), a.first, b.first) < 0;
  });
  // Offset and limit count multiplicities.
  std::uint64_t skip = finishing.offset();
  std::uint64_t left =
      finishing.has_limit() ? finishing.limit() : std::numeric_limits<std::uint64_t>::max();
  const std::vector<std::uint32_t> project = Columns(finishing.project());
  std::map<Row, std::size_t, RowLess> position;  // of each output row in answer.rows
  for (const auto& [row, signed_count] : sorted) {
    // Rows after the limit are not looked at; a row the answer needs (returns, or skips over by
    // the offset) must have a count that fits int64.
    if (skip == 0 && left == 0) break;
    if (!FitsInt64(signed_count)) return fail("multiplicity overflow of " + RowText(row));
    std::uint64_t count = static_cast<std::uint64_t>(signed_count);
    const std::uint64_t skipped = std::min(skip, count);
    skip -= skipped;
    count -= skipped;
    count = std::min(count, left);
    left -= count;
    if (count == 0) continue;
    Row out = project.empty() ? row : Project(row, project);
    // Each distinct row once, at its first place.
    auto [it, inserted] = position.emplace(out, answer.rows.size());
    if (inserted) {
      answer.rows.emplace_back(std::move(out), count);
    } else if (__builtin_add_overflow(answer.rows[it->second].second, count,
                                      &answer.rows[it->second].second) ||
               answer.rows[it->second].second > std::numeric_limits<std::int64_t>::max()) {
      return fail("multiplicity overflow of " + RowText(answer.rows[it->second].first));
    }
  }
  return answer;
}

std::string ToString(const PeekAnswer& answer) {
  if (!answer.ok) return "Error(" + answer.error + ")";
  std::string out = "[";
  for (std::size_t i = 0; i < answer.rows.size(); ++i) {
    out += (i > 0 ? ", " : "") + RowText(answer.rows[i].first) + " x" +
           std::to_string(answer.rows[i].second);
  }
  return out + "]";
}

std::string ToString(const Multiset& set) {
  std::string out = "{";
  bool first = true;
  for (const auto& [row, count] : set) {
    out += (first ? "" : ", ") + RowText(row) + " x" + CountToString(count);
    first = false;
  }
  return out + "}";
}

// ---------------------------------------------------------------------------------------------

Evaluator::Evaluator(pb::DataflowDescription desc) : desc_(std::move(desc)) {}

void Evaluator::AddUpdates(const std::string& id, const std::vector<Update>& updates) {
  auto& list = updates_[id];
  list.insert(list.end(), updates.begin(), updates.end());
}

void Evaluator::AddUpdate(const std::string& id, Update update) {
  updates_[id].push_back(std::move(update));
}

void Evaluator::AddRecord(const std::string& id, SourceRecord record) {
  records_[id].push_back(std::move(record));
}

void Evaluator::AddError(const std::string& id, ErrorUpdate error) {
  errors_[id].push_back(std::move(error));
}

Status Evaluator::ImportFrom(const std::string& id, std::shared_ptr<const Evaluator> upstream) {
  const bool imported =
      std::any_of(desc_.index_imports().begin(), desc_.index_imports().end(),
                  [&](const pb::IndexImport& import) { return import.id() == id; });
  if (!imported) return Status::InvalidArgument("reference: " + id + " is not an index import");
  const bool exported =
      upstream != nullptr &&
      std::any_of(upstream->desc().index_exports().begin(), upstream->desc().index_exports().end(),
                  [&](const pb::IndexExport& e) { return e.id() == id; });
  if (!exported) {
    return Status::InvalidArgument("reference: the upstream dataflow does not export " + id);
  }
  upstream_[id] = std::move(upstream);
  return Status::Ok();
}

Result<Contents> Evaluator::Input(const std::string& id, Time t) const {
  // An import of another dataflow's index: that index's collection from as_of on (advanced to
  // as_of: before it there is nothing).
  for (const auto& import : desc_.index_imports()) {
    if (import.id() != id && import.on() != id) continue;
    auto upstream = upstream_.find(import.id());
    if (upstream == upstream_.end()) continue;
    const Time as_of = desc_.as_of().elements_size() > 0 ? desc_.as_of().elements(0) : 0;
    if (t < as_of) return Contents{};
    return upstream->second->At(import.id(), t);
  }

  // Names of the same input: an index import and the collection it is on.
  std::vector<std::string> names = {id};
  bool known = false;
  for (const auto& import : desc_.source_imports()) known = known || import.id() == id;
  for (const auto& import : desc_.index_imports()) {
    if (import.id() == id) names.push_back(import.on());
    if (import.on() == id) names.push_back(import.id());
    known = known || import.id() == id || import.on() == id;
  }
  if (!known) return Status::NotFound("reference: unknown collection " + id);
  Contents out;
  for (const auto& name : names) {
    if (auto it = records_.find(name); it != records_.end()) {
      std::vector<std::uint32_t> key;
      for (const auto& import : desc_.source_imports()) {
        if (import.id() == name) key = Columns(import.upsert_key());
      }
      if (key.empty()) {
        return Status::InvalidArgument("reference: records for " + name +
                                       ", which has no upsert key");
      }
      for (const auto& [row, count] : UpsertContents(it->second, key, t)) {
        AddTo(out.rows, row, count);
      }
    }
    if (auto it = updates_.find(name); it != updates_.end()) {
      for (const auto& u : it->second) {
        if (u.time <= t) AddTo(out.rows, u.row, u.diff);
      }
    }
    if (auto it = errors_.find(name); it != errors_.end()) {
      for (const auto& e : it->second) {
        if (e.time <= t) AddTo(out.errors, e.message, e.diff);
      }
    }
  }
  return out;
}

Result<Contents> Evaluator::Eval(const pb::Plan& plan, Time t, int depth) const {
  if (depth > kMaxPlanDepth) return Status::InvalidArgument("reference: plan too deep");
  switch (plan.kind_case()) {
    case pb::Plan::kGet:
      return AtDepth(plan.get().id(), t, depth + 1);
    case pb::Plan::kMfp: {
      TANDEM_ASSIGN_OR_RETURN(Contents input, Eval(plan.mfp().input(), t, depth + 1));
      TANDEM_ASSIGN_OR_RETURN(Types types, TypesOf(plan.mfp().input(), depth + 1));
      if (HasTemporalFilter(plan.mfp().mfp())) {
        return TemporalMfpOf(input, plan.mfp().mfp(), t,
                             [&types](const pb::MapFilterProject& mfp, const Row& row) {
                               return ApplyMfp(mfp, row, types);
                             });
      }
      return MfpOf(input, plan.mfp().mfp(), types);
    }
    case pb::Plan::kReduce: {
      TANDEM_ASSIGN_OR_RETURN(Contents input, Eval(plan.reduce().input(), t, depth + 1));
      TANDEM_ASSIGN_OR_RETURN(Types types, TypesOf(plan.reduce().input(), depth + 1));
      return ReduceOf(input, plan.reduce(), types);
    }
    case pb::Plan::kUnion: {
      std::vector<Contents> inputs;
      for (const auto& p : plan.union_().inputs()) {
        TANDEM_ASSIGN_OR_RETURN(Contents input, Eval(p, t, depth + 1));
        inputs.push_back(std::move(input));
      }
      return UnionOf(inputs);
    }
    case pb::Plan::kDistinct: {
      TANDEM_ASSIGN_OR_RETURN(Contents input, Eval(plan.distinct().input(), t, depth + 1));
      return DistinctOf(input);
    }
    case pb::Plan::kJoin: {
      TANDEM_ASSIGN_OR_RETURN(Contents left, Eval(plan.join().left(), t, depth + 1));
      TANDEM_ASSIGN_OR_RETURN(Contents right, Eval(plan.join().right(), t, depth + 1));
      TANDEM_ASSIGN_OR_RETURN(std::size_t right_arity, Arity(plan.join().right(), depth + 1));
      return JoinOf(left, right, plan.join(), right_arity);
    }
    case pb::Plan::kTopK: {
      TANDEM_ASSIGN_OR_RETURN(Contents input, Eval(plan.top_k().input(), t, depth + 1));
      return TopKOf(input, plan.top_k());
    }
    case pb::Plan::kNegate: {
      TANDEM_ASSIGN_OR_RETURN(Contents input, Eval(plan.negate().input(), t, depth + 1));
      return NegateOf(input);
    }
    case pb::Plan::kThreshold: {
      TANDEM_ASSIGN_OR_RETURN(Contents input, Eval(plan.threshold().input(), t, depth + 1));
      return ThresholdOf(input);
    }
    case pb::Plan::KIND_NOT_SET:
      break;
  }
  return Status::InvalidArgument("reference: plan node without kind");
}

Result<Contents> Evaluator::At(const std::string& id, Time t) const { return AtDepth(id, t, 0); }

Result<std::size_t> Evaluator::Arity(const std::string& id) const { return ArityOf(id, 0); }

Result<std::size_t> Evaluator::ArityOf(const std::string& id, int depth) const {
  if (depth > kMaxPlanDepth) return Status::InvalidArgument("reference: plan too deep");
  for (const auto& build : desc_.objects_to_build()) {
    if (build.id() == id) return Arity(build.plan(), depth + 1);
  }
  for (const auto& index : desc_.index_exports()) {
    if (index.id() == id) return ArityOf(index.on(), depth + 1);
  }
  for (const auto& import : desc_.source_imports()) {
    if (import.id() == id) return static_cast<std::size_t>(import.schema().columns_size());
  }
  for (const auto& import : desc_.index_imports()) {
    if (import.id() == id || import.on() == id) {
      return static_cast<std::size_t>(import.schema().columns_size());
    }
  }
  return Status::NotFound("reference: unknown collection " + id);
}

Result<std::size_t> Evaluator::Arity(const pb::Plan& plan, int depth) const {
  if (depth > kMaxPlanDepth) return Status::InvalidArgument("reference: plan too deep");
  switch (plan.kind_case()) {
    case pb::Plan::kGet:
      return ArityOf(plan.get().id(), depth + 1);
    case pb::Plan::kMfp: {
      const auto& mfp = plan.mfp().mfp();
      if (mfp.projection_size() > 0) return static_cast<std::size_t>(mfp.projection_size());
      TANDEM_ASSIGN_OR_RETURN(std::size_t input, Arity(plan.mfp().input(), depth + 1));
      return input + static_cast<std::size_t>(mfp.map_size());
    }
    case pb::Plan::kReduce:
      return static_cast<std::size_t>(plan.reduce().group_key_size() +
                                      plan.reduce().aggregates_size());
    case pb::Plan::kUnion:
      if (plan.union_().inputs_size() == 0) return std::size_t{0};
      return Arity(plan.union_().inputs(0), depth + 1);
    case pb::Plan::kDistinct:
      return Arity(plan.distinct().input(), depth + 1);
    case pb::Plan::kJoin: {
      TANDEM_ASSIGN_OR_RETURN(std::size_t left, Arity(plan.join().left(), depth + 1));
      TANDEM_ASSIGN_OR_RETURN(std::size_t right, Arity(plan.join().right(), depth + 1));
      return left + right;
    }
    case pb::Plan::kTopK:
      return Arity(plan.top_k().input(), depth + 1);
    case pb::Plan::kNegate:
      return Arity(plan.negate().input(), depth + 1);
    case pb::Plan::kThreshold:
      return Arity(plan.threshold().input(), depth + 1);
    case pb::Plan::KIND_NOT_SET:
      break;
  }
  return Status::InvalidArgument("reference: plan node without kind");
}

Result<Types> Evaluator::TypesOfId(const std::string& id, int depth) const {
  if (depth > kMaxPlanDepth) return Status::InvalidArgument("reference: plan too deep");
  for (const auto& build : desc_.objects_to_build()) {
    if (build.id() == id) return TypesOf(build.plan(), depth + 1);
  }
  for (const auto& index : desc_.index_exports()) {
    if (index.id() == id) return TypesOfId(index.on(), depth + 1);
  }
  for (const auto& import : desc_.source_imports()) {
    if (import.id() == id) {
      return Types(import.schema().columns().begin(), import.schema().columns().end());
    }
  }
  for (const auto& import : desc_.index_imports()) {
    if (import.id() == id || import.on() == id) {
      return Types(import.schema().columns().begin(), import.schema().columns().end());
    }
  }
  return Status::NotFound("reference: unknown collection " + id);
}

Result<Types> Evaluator::TypesOf(const pb::Plan& plan, int depth) const {
  if (depth > kMaxPlanDepth) return Status::InvalidArgument("reference: plan too deep");
  switch (plan.kind_case()) {
    case pb::Plan::kGet:
      return TypesOfId(plan.get().id(), depth + 1);
    case pb::Plan::kMfp: {
      const auto& mfp = plan.mfp().mfp();
      TANDEM_ASSIGN_OR_RETURN(Types types, TypesOf(plan.mfp().input(), depth + 1));
      // Types need no values: a row of nulls stands for the input.
      const Row nulls(types.size() + static_cast<std::size_t>(mfp.map_size()), Datum(Null{}));
      for (const auto& expr : mfp.map()) types.push_back(TypeOf(expr, nulls, types));
      if (mfp.projection_size() == 0) return types;
      Types out;
      for (auto c : mfp.projection()) {
        if (c >= types.size()) return Status::InvalidArgument("reference: projection out of range");
        out.push_back(types[c]);
      }
      return out;
    }
    case pb::Plan::kReduce: {
      TANDEM_ASSIGN_OR_RETURN(Types input, TypesOf(plan.reduce().input(), depth + 1));
      Types out;
      for (auto c : plan.reduce().group_key()) {
        if (c >= input.size()) return Status::InvalidArgument("reference: group key out of range");
        out.push_back(input[c]);
      }
      for (const auto& aggregate : plan.reduce().aggregates()) {
        const pb::Column column = aggregate.column() < input.size()
                                      ? input[aggregate.column()]
                                      : ColumnOfType(pb::SCALAR_TYPE_UNSPECIFIED);
        out.push_back(AggregateType(aggregate.func(), column));
      }
      return out;
    }
    case pb::Plan::kUnion:
      if (plan.union_().inputs_size() == 0) return Types{};
      return TypesOf(plan.union_().inputs(0), depth + 1);
    case pb::Plan::kDistinct:
      return TypesOf(plan.distinct().input(), depth + 1);
    case pb::Plan::kJoin: {
      TANDEM_ASSIGN_OR_RETURN(Types left, TypesOf(plan.join().left(), depth + 1));
      TANDEM_ASSIGN_OR_RETURN(Types right, TypesOf(plan.join().right(), depth + 1));
      left.insert(left.end(), right.begin(), right.end());
      return left;
    }
    case pb::Plan::kTopK:
      return TypesOf(plan.top_k().input(), depth + 1);
    case pb::Plan::kNegate:
      return TypesOf(plan.negate().input(), depth + 1);
    case pb::Plan::kThreshold:
      return TypesOf(plan.threshold().input(), depth + 1);
    case pb::Plan::KIND_NOT_SET:
      break;
  }
  return Status::InvalidArgument("reference: plan node without kind");
}

Result<Contents> Evaluator::AtDepth(const std::string& id, Time t, int depth) const {
  if (depth > kMaxPlanDepth) return Status::InvalidArgument("reference: plan too deep");
  for (const auto& build : desc_.objects_to_build()) {
    if (build.id() == id) return Eval(build.plan(), t, depth + 1);
  }
  for (const auto& index : desc_.index_exports()) {
    if (index.id() == id) return AtDepth(index.on(), t, depth + 1);
  }
  return Input(id, t);
}

Result<std::vector<std::uint32_t>> Evaluator::IndexKey(const std::string& id) const {
  for (const auto& index : desc_.index_exports()) {
    if (index.id() == id) return Columns(index.key());
  }
  for (const auto& index : desc_.index_imports()) {
    if (index.id() == id) return Columns(index.key());
  }
  return Status::NotFound("reference: " + id + " is not an index of the dataflow");
}

PeekAnswer Evaluator::Peek(const pb::Peek& peek) const {
  PeekAnswer answer;
  auto key = IndexKey(peek.id());
  auto contents = At(peek.id(), peek.timestamp());
  if (!key.ok() || !contents.ok()) {
    answer.ok = false;
    answer.error = "not found: " + (key.ok() ? contents.status() : key.status()).message();
    return answer;
  }
  std::vector<Row> keys;
  for (const auto& k : peek.keys()) keys.push_back(FromProto(k));
  auto types = TypesOfId(peek.id(), 0);
  return AnswerPeek(*contents, *key, keys, peek.mfp(), peek.finishing(),
                    types.ok() ? *types : Types{});
}

Multiset UpsertContents(const std::vector<SourceRecord>& records,
                        const std::vector<std::uint32_t>& key, Time t) {
  // Key value -> the index of its winning record so far (1.50's record replaces 1.5's). Records
  // are visited in the order added, so of two at one time the later replaces the earlier (>=).
  std::map<Row, std::size_t, KeyLess> last;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const SourceRecord& r = records[i];
    if (r.time > t) continue;
    const Row k = r.kind == SourceRecord::Kind::kUpsert ? Project(r.row, key) : r.row;
    auto [it, inserted] = last.emplace(k, i);
    if (!inserted && r.time >= records[it->second].time) it->second = i;
  }
  Multiset out;
  for (const auto& [k, i] : last) {
    if (records[i].kind == SourceRecord::Kind::kUpsert) AddTo(out, records[i].row, 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

std::string LogUpdateLine(const Row& row, Time time, std::int64_t diff) {
  std::string line = "U " + std::to_string(time) + " " + std::to_string(diff);
  for (const auto& d : row) line += " " + DatumText(d);
  return line + "\n";
}

std::string LogRecordLine(const SourceRecord& record) {
  std::string line =
      (record.kind == SourceRecord::Kind::kUpsert ? "S " : "D ") + std::to_string(record.time);
  for (const auto& d : record.row) line += " " + DatumText(d);
  return line + "\n";
}

}  // namespace tandem::reference
