// Scalar expressions: PostgreSQL's expression nodes → ScalarExpr over a relation's columns, with
// PostgreSQL's types (DESIGN §16's and `unknown` constants), its operator and function resolution
// (type_rules.h) with the Casts the runtime needs, and its error messages.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "base/datetime.h"
#include "base/numeric.h"
#include "frontend/plan/binder.h"
#include "frontend/sql/parameters.h"

namespace tandem::frontend::plan {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

const std::set<std::string>& AggregateNames() {
  static const std::set<std::string> names = {"count", "sum",     "min",      "max",
                                              "avg",   "bool_or", "bool_and", "every"};
  return names;
}

std::string LastName(const google::protobuf::RepeatedPtrField<pg_query::Node>& names) {
  if (names.empty() || !names.rbegin()->has_string()) return "";
  return names.rbegin()->string().sval();
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// The text of an integer: an optional sign and digits, nothing else. False when it is not one
// or does not fit int64 (*out_of_range then says which).
bool ParseInt64(const std::string& text, std::int64_t* out, bool* out_of_range) {
  *out_of_range = false;
  if (text.empty()) return false;
  std::size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return false;
  for (std::size_t j = i; j < text.size(); ++j) {
    if (!std::isdigit(static_cast<unsigned char>(text[j]))) return false;
  }
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE) {
    *out_of_range = true;
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

int NodeLocation(const pg_query::Node& node) {
  const Message* message = nullptr;
  const auto* reflection = node.GetReflection();
  const auto* oneof = node.GetDescriptor()->FindOneofByName("node");
  if (oneof == nullptr) return -1;
  const FieldDescriptor* field = reflection->GetOneofFieldDescriptor(node, oneof);
  if (field == nullptr || field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return -1;
  message = &reflection->GetMessage(node, field);
  const FieldDescriptor* location = message->GetDescriptor()->FindFieldByName("location");
  if (location == nullptr || location->cpp_type() != FieldDescriptor::CPPTYPE_INT32) return -1;
  return message->GetReflection()->GetInt32(*message, location);
}

std::string NodeKindName(const pg_query::Node& node) {
  const auto* oneof = node.GetDescriptor()->FindOneofByName("node");
  const FieldDescriptor* field =
      oneof == nullptr ? nullptr : node.GetReflection()->GetOneofFieldDescriptor(node, oneof);
  return field == nullptr ? "an empty node" : field->json_name();
}

Binder::DepthGuard::DepthGuard(Binder* binder) : binder_(binder) {
  if (++binder_->depth_ > kMaxBindDepth) {
    binder_->Fail(sqlstate::kStatementTooComplex, "statement is too complex: it nests more than " +
                                                      std::to_string(kMaxBindDepth) + " levels");
  }
}

void Binder::Fail(const char* state, std::string message, int location) const {
  throw PlanFailure{SqlError(state, std::move(message), Position(location))};
}

int Binder::Position(int location) const {
  if (location < 0 || text_.empty() || static_cast<std::size_t>(location) > text_.size()) {
    return 0;
  }
  return sql::CursorPosition(text_, static_cast<std::size_t>(location));
}

// ---- names

std::string Binder::FigureColumnName(const pg_query::Node& node) {
  // PostgreSQL's FigureColnameInternal: a name and its strength (2: a column's or a function's,
  // 1: a type's or "case", 0: none).
  struct Figure {
    static int Of(const pg_query::Node& n, std::string* name, int depth) {
      if (depth > kMaxBindDepth) return 0;
      switch (n.node_case()) {
        case pg_query::Node::kColumnRef: {
          const auto& fields = n.column_ref().fields();
          if (!fields.empty() && fields.rbegin()->has_string()) {
            *name = fields.rbegin()->string().sval();
            return 2;
          }
          return 0;
        }
        case pg_query::Node::kFuncCall:
          *name = LastName(n.func_call().funcname());
          return 2;
        case pg_query::Node::kAExpr:
          if (n.a_expr().kind() == pg_query::AEXPR_NULLIF) {
            *name = "nullif";
            return 2;
          }
          return 0;
        case pg_query::Node::kTypeCast: {
          if (sql::IsParameterConstant(n)) {
            *name = "?column?";  // a parameter's value: PostgreSQL names a Param so
            return 0;
          }
          const int strength = Of(n.type_cast().arg(), name, depth + 1);
          if (strength <= 1) {
            *name = LastName(n.type_cast().type_name().names());
            return 1;
          }
          return strength;
        }
        case pg_query::Node::kCaseExpr: {
          int strength = 0;
          if (n.case_expr().has_defresult()) {
            strength = Of(n.case_expr().defresult(), name, depth + 1);
          }
          if (strength <= 1) {
            *name = "case";
            return 1;
          }
          return strength;
        }
        case pg_query::Node::kCoalesceExpr:
          *name = "coalesce";
          return 2;
        case pg_query::Node::kMinMaxExpr:
          *name = n.min_max_expr().op() == pg_query::IS_GREATEST ? "greatest" : "least";
          return 2;
        case pg_query::Node::kSubLink:
          if (n.sub_link().sub_link_type() == pg_query::EXISTS_SUBLINK) {
            *name = "exists";
            return 2;
          }
          if (n.sub_link().sub_link_type() == pg_query::ARRAY_SUBLINK) {
            *name = "array";
            return 2;
          }
          if (n.sub_link().sub_link_type() == pg_query::EXPR_SUBLINK &&
              n.sub_link().subselect().has_select_stmt()) {
            // The name of the subquery's (leftmost) first column.
            const pg_query::SelectStmt* select = &n.sub_link().subselect().select_stmt();
            for (int i = 0; i < kMaxBindDepth && select->has_larg(); ++i) select = &select->larg();
            if (select->target_list_size() == 0) return 0;
            const auto& target = select->target_list(0).res_target();
            if (!target.name().empty()) {
              *name = target.name();
              return 2;
            }
            return Of(target.val(), name, depth + 1);
          }
          return 0;
        default:
          return 0;
      }
    }
  };
  std::string name;
  return Figure::Of(node, &name, 0) > 0 ? name : "?column?";
}

bool Binder::ContainsAggregate(const pg_query::Node& node, int depth) const {
  if (depth > kMaxWalkDepth) {
    Fail(sqlstate::kStatementTooComplex, "statement is too complex");
  }
  if (node.has_func_call()) {
    const auto& call = node.func_call();
    if (call.funcname_size() == 1 && AggregateNames().count(LastName(call.funcname())) > 0 &&
        !call.has_over()) {
      return true;
    }
  }
  if (node.has_sub_link()) return false;  // its aggregates are the subquery's
  // Every Node field (and repeated Node) of the node's message, through reflection.
  const auto* oneof = node.GetDescriptor()->FindOneofByName("node");
  const FieldDescriptor* field = node.GetReflection()->GetOneofFieldDescriptor(node, oneof);
  if (field == nullptr || field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return false;
  const Message& message = node.GetReflection()->GetMessage(node, field);
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* f = descriptor->field(i);
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->message_type() != pg_query::Node::descriptor()) continue;
    if (f->is_repeated()) {
      for (int j = 0; j < reflection->FieldSize(message, f); ++j) {
        const auto& child =
            static_cast<const pg_query::Node&>(reflection->GetRepeatedMessage(message, f, j));
        if (ContainsAggregate(child, depth + 1)) return true;
      }
    } else if (reflection->HasField(message, f)) {
      const auto& child = static_cast<const pg_query::Node&>(reflection->GetMessage(message, f));
      if (ContainsAggregate(child, depth + 1)) return true;
    }
  }
  return false;
}

// ---- coercion

namespace {

PgTypeId Id(const BoundExpr& e) { return IdOf(e.type, e.mods); }

// The text of an unsigned decimal numeric constant ("12.50", ".5", "007") in PostgreSQL's output
// form ("12.50", "0.5", "7"), or nothing for any other text (an exponent, a sign, blanks: the
// runtime's cast reads those). Nothing too for more than kNumericMaxDigits significant digits.
std::optional<std::string> PlainNumericText(const std::string& text) {
  std::size_t point = text.find('.');
  const std::string whole = text.substr(0, point);
  const std::string fraction = point == std::string::npos ? "" : text.substr(point + 1);
  if (whole.empty() && fraction.empty()) return std::nullopt;
  for (char c : whole + fraction) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  std::size_t first = 0;
  while (first < whole.size() && whole[first] == '0') ++first;
  std::string digits = whole.substr(first);
  if (digits.size() + fraction.size() > 38) return std::nullopt;  // base/numeric.h's 38 digits
  if (digits.empty()) digits = "0";
  return fraction.empty() ? digits : digits + "." + fraction;
}

// PostgreSQL's name of an integer type in its range errors ("integer out of range").
const char* IntegerWord(pb::ScalarType type) {
  return type == pb::INT16 ? "smallint" : type == pb::INT32 ? "integer" : "bigint";
}

bool FitsInteger(std::int64_t v, pb::ScalarType type) {
  if (type == pb::INT16) return v >= INT16_MIN && v <= INT16_MAX;
  if (type == pb::INT32) return v >= INT32_MIN && v <= INT32_MAX;
  return true;
}

// The numeric text of a NUMERIC literal expression, or nothing.
std::optional<std::string> NumericLiteralText(const pb::ScalarExpr& e) {
  if (!e.has_literal() || e.literal().value().kind_case() != pb::Datum::kNumeric) {
    return std::nullopt;
  }
  return e.literal().value().numeric();
}

}  // namespace

BoundExpr Binder::Coerce(BoundExpr e, pb::ScalarType type, int location, const std::string& what) {
  return CoerceTo(std::move(e), type, TypeMods{}, CastContext::kImplicit, location, what);
}

BoundExpr Binder::CoerceTo(BoundExpr e, pb::ScalarType type, const TypeMods& mods,
                           CastContext context, int location, const std::string& what) {
  const PgTypeId from = Id(e), to = IdOf(type, mods);
  if (e.type == type && e.mods == mods) return e;
  BoundExpr out;
  out.type = type;
  out.mods = mods;
  const bool has_typmod =
      (type == pb::NUMERIC && mods.precision > 0) || (type == pb::STRING && mods.length > 0);
  // The value as `type` without its modifiers, then (where it has some) the cast that applies
  // them: numeric(p,s) rounds, varchar(n) and char(n) cut or pad (an assignment checks the
  // length where it writes: dml_write.cc).
  auto with_typmod = [&](pb::ScalarExpr value) {
    out.expr = has_typmod ? CastExpr(std::move(value), type, mods) : std::move(value);
    return out;
  };
  if (from == PgTypeId::kUnknown) {
    RecordUnknownType(e, type, mods);
    if (!e.literal.has_value()) {
      out.expr = NullExpr(type);
      return out;
    }
    const std::string& text = *e.literal;
    const std::string trimmed = Trim(text);
    switch (type) {
      case pb::STRING:
        return with_typmod(StringExpr(text));
      case pb::INT16:
      case pb::INT32:
      case pb::INT64: {
        std::int64_t v = 0;
        bool out_of_range = false;
        const bool parsed = ParseInt64(trimmed, &v, &out_of_range);
        if (!parsed && !out_of_range) {
          Fail(sqlstate::kInvalidTextRepresentation,
               std::string("invalid input syntax for type ") + IntegerWord(type) + ": \"" + text +
                   "\"",
               location);
        }
        if (!parsed || !FitsInteger(v, type)) {
          Fail(sqlstate::kNumericValueOutOfRange,
               "value \"" + text + "\" is out of range for type " + IntegerWord(type), location);
        }
        out.expr = IntExpr(v, type);
        out.int_literal = true;
        out.int_value = v;
        return out;
      }
      case pb::FLOAT64: {
        const std::string lower = Lower(trimmed);
        double v = 0;
        if (lower == "nan") {
          v = std::nan("");
        } else if (lower == "infinity" || lower == "+infinity" || lower == "inf" ||
                   lower == "+inf") {
          v = HUGE_VAL;
        } else if (lower == "-infinity" || lower == "-inf") {
          v = -HUGE_VAL;
        } else {
          errno = 0;
          char* end = nullptr;
          v = std::strtod(trimmed.c_str(), &end);
          const bool hex = lower.find('x') != std::string::npos;
          if (trimmed.empty() || end != trimmed.c_str() + trimmed.size() || hex ||
              lower.find("inf") != std::string::npos || lower.find("nan") != std::string::npos) {
            Fail(sqlstate::kInvalidTextRepresentation,
                 "invalid input syntax for type double precision: \"" + text + "\"", location);
          }
          if (errno == ERANGE && (std::isinf(v) || v == 0)) {
            Fail(sqlstate::kNumericValueOutOfRange,
                 "\"" + text + "\" is out of range for type double precision", location);
          }
        }
        out.expr = FloatExpr(v);
        return out;
      }
      case pb::BOOL: {
        const std::string lower = Lower(trimmed);
        auto prefix_of = [&](const char* word) {
          return !lower.empty() && std::string(word).compare(0, lower.size(), lower) == 0;
        };
        if (prefix_of("true") || prefix_of("yes") || lower == "on" || lower == "1") {
          out.expr = BoolExpr(true);
        } else if (prefix_of("false") || prefix_of("no") || lower == "off" || lower == "0") {
          out.expr = BoolExpr(false);
        } else {
          Fail(sqlstate::kInvalidTextRepresentation,
               "invalid input syntax for type boolean: \"" + text + "\"", location);
        }
        return out;
      }
      case pb::NUMERIC: {
        if (auto plain = PlainNumericText(trimmed)) return with_typmod(NumericExpr(*plain));
        auto n = ParseNumeric(text);
        if (!n.ok()) DataFail(n.status(), location);
        return with_typmod(NumericExpr(NumericText(*n)));
      }
      case pb::DATE:
      case pb::TIME:
      case pb::TIMESTAMP:
      case pb::TIMESTAMPTZ:
      case pb::INTERVAL: {
        // Read here by base/datetime.h, the runtime's own input functions: PostgreSQL's errors
        // at planning with the constant's position, and a literal a key lookup can use.
        out.expr.mutable_literal()->set_type(type);
        pb::Datum* v = out.expr.mutable_literal()->mutable_value();
        if (type == pb::DATE) {
          auto d = ParseDate(text);
          if (!d.ok()) DataFail(d.status(), location);
          v->set_date(d->days);
        } else if (type == pb::TIME) {
          auto t = ParseTime(text);
          if (!t.ok()) DataFail(t.status(), location);
          v->set_time(t->micros);
        } else if (type == pb::TIMESTAMP) {
          auto t = ParseTimestamp(text);
          if (!t.ok()) DataFail(t.status(), location);
          v->set_timestamp(t->micros);
        } else if (type == pb::TIMESTAMPTZ) {
          auto t = ParseTimestampTz(text);
          if (!t.ok()) DataFail(t.status(), location);
          v->set_timestamptz(t->micros);
        } else {
          auto i = ParseInterval(text);
          if (!i.ok()) DataFail(i.status(), location);
          v->mutable_interval()->set_months(i->months);
          v->mutable_interval()->set_days(i->days);
          v->mutable_interval()->set_micros(i->micros);
        }
        return out;
      }
      default:
        // float4, bytea, uuid: read by the runtime's cast, with PostgreSQL's input rules and
        // errors (a bad text fails the read, not the planning).
        out.expr = CastExpr(StringExpr(text), type, mods);
        return out;
    }
  }
  if (!CanCast(from, to, context)) {
    if (context == CastContext::kExplicit) {
      Fail(sqlstate::kCannotCoerce,
           "cannot cast type " + std::string(PgTypeName(from)) + " to " +
               SqlTypeNameWithMods(type, mods),
           location);
    }
    Fail(sqlstate::kDatatypeMismatch,
         what + " must be type " + SqlTypeNameWithMods(type, mods) + ", not type " +
             std::string(PgTypeName(from)),
         location);
  }
  // Constants converted here where the conversion is exact (so `k = 5` on a bigint key is still a
  // key lookup): integers into a wider integer, numeric or float; numeric digits into a float
  // (PostgreSQL's numeric → float reads the numeric's text as float8in/float4in do).
  if (e.int_literal && e.expr.has_literal()) {
    const std::int64_t v = e.int_value;
    if (type == pb::INT16 || type == pb::INT32 || type == pb::INT64) {
      if (!FitsInteger(v, type)) {
        Fail(sqlstate::kNumericValueOutOfRange, std::string(IntegerWord(type)) + " out of range",
             location);
      }
      out.expr = IntExpr(v, type);
      out.int_literal = true;
      out.int_value = v;
      return out;
    }
    if (type == pb::NUMERIC) return with_typmod(NumericExpr(std::to_string(v)));
    if (type == pb::STRING && from != PgTypeId::kBool) {
      return with_typmod(StringExpr(std::to_string(v)));  // int4out/int8out
    }
    if (type == pb::FLOAT64 && v >= -(std::int64_t{1} << 53) && v <= (std::int64_t{1} << 53)) {
      out.expr = FloatExpr(static_cast<double>(v));
      return out;
    }
  }
  if (auto digits = NumericLiteralText(e.expr); digits && (type == pb::FLOAT64)) {
    out.expr = FloatExpr(std::strtod(digits->c_str(), nullptr));
    return out;
  }
  // Between the string types: character loses its trailing blanks (PostgreSQL's rtrim1); text
  // and varchar without a length are one value, as is character(n) as character without one.
  if (from == PgTypeId::kBpchar && (to == PgTypeId::kText || to == PgTypeId::kVarchar)) {
    return with_typmod(CallExpr(pb::RTRIM, {std::move(e.expr)}));
  }
  if (e.type == pb::STRING && type == pb::STRING && !has_typmod &&
      (to == PgTypeId::kText || to == PgTypeId::kBpchar || from != PgTypeId::kBpchar)) {
    out.expr = std::move(e.expr);
    return out;
  }
  out.expr = CastExpr(std::move(e.expr), type, mods);
  return out;
}

std::optional<pb::ScalarExpr> Binder::AsText(const BoundExpr& e, int location) {
  const PgTypeId id = Id(e);
  if (id != PgTypeId::kUnknown && !IsStringType(id)) return std::nullopt;
  return CoerceTo(e, pb::STRING, {}, CastContext::kImplicit, location, "argument").expr;
}

void Binder::DataFail(const Status& status, int location) const {
  Fail(sqlstate::DataErrorState(status.message()), status.message(), location);
}

void Binder::CheckChain(int arguments, const char* construct, int location) const {
  // Each argument nests the expression one IF deeper; the replica's decoder takes
  // kMaxPlanNesting messages in all.
  if (arguments > kMaxPlanNesting / 2) {
    Fail(sqlstate::kStatementTooComplex,
         std::string("statement is too complex: ") + construct + " with more than " +
             std::to_string(kMaxPlanNesting / 2) + " arguments",
         location);
  }
}

BoundExpr Binder::Resolve(BoundExpr e, int location) {
  if (e.type != pb::SCALAR_TYPE_UNSPECIFIED) return e;
  return Coerce(std::move(e), pb::STRING, location, "a constant");
}

pb::ScalarType Binder::CommonType(const std::vector<BoundExpr*>& branches, const char* construct,
                                  int location, TypeMods* mods) {
  std::vector<PgTypeId> ids;
  for (const BoundExpr* b : branches) ids.push_back(Id(*b));
  const CommonTypeChoice choice = SelectCommonType(ids);
  if (!choice.type) {
    if (choice.convert_failed) {
      // CASE says which part: its ELSE (resolved first) or a WHEN's result.
      std::string part = construct;
      if (part == "CASE") part = choice.bad == 0 ? "CASE/ELSE" : "CASE/WHEN";
      Fail(sqlstate::kCannotCoerce,
           part + " could not convert type " + std::string(PgTypeName(choice.a)) + " to " +
               std::string(PgTypeName(choice.b)),
           location);
    }
    Fail(sqlstate::kDatatypeMismatch,
         std::string(construct) + " types " + std::string(PgTypeName(choice.a)) + " and " +
             std::string(PgTypeName(choice.b)) + " cannot be matched",
         location);
  }
  // PostgreSQL's select_common_typmod: the inputs' modifiers when all of them have the same.
  const PgTypeId common = *choice.type;
  std::optional<TypeMods> same;
  bool differ = false;
  for (const BoundExpr* b : branches) {
    if (Id(*b) == PgTypeId::kUnknown) continue;
    if (Id(*b) != common || (same && !(*same == b->mods))) differ = true;
    if (!same) same = b->mods;
  }
  const TypeMods common_mods = !differ && same ? *same : ModsOf(common);
  const pb::ScalarType type = ScalarOf(common);
  for (BoundExpr* b : branches) {
    *b = CoerceTo(std::move(*b), type, common_mods, CastContext::kImplicit, location,
                  std::string(construct) + " branch");
  }
  if (mods != nullptr) *mods = common_mods;
  return type;
}

// ---- dispatch

BoundExpr Binder::Bind(const pg_query::Node& node, const ExprContext& context) {
  DepthGuard guard(this);
  BoundExpr out =
      context.aggregation != nullptr ? BindGrouped(node, context) : BindNode(node, context);
  // NULLIF, IS DISTINCT FROM, GREATEST, abs … use an operand more than once: nested, they grow
  // exponentially. Checked at every level, an expression never gets much past the bound.
  if (out.expr.ByteSizeLong() > kMaxPlanBytes) {
    Fail(sqlstate::kStatementTooComplex,
         "statement is too complex: an expression would be over " + std::to_string(kMaxPlanBytes) +
             " bytes",
         NodeLocation(node));
  }
  return out;
}

pb::ScalarExpr Binder::BindCondition(const pg_query::Node& node, const ExprContext& context) {
  BoundExpr e = Bind(node, context);
  return Coerce(std::move(e), pb::BOOL, NodeLocation(node),
                std::string("argument of ") + context.clause)
      .expr;
}

BoundExpr Binder::BindGrouped(const pg_query::Node& node, const ExprContext& context) {
  Aggregation& aggregation = *context.aggregation;
  ExprContext plain = context;
  plain.aggregation = nullptr;
  plain.outer = nullptr;
  if (node.has_func_call() && !node.func_call().has_over() &&
      AggregateNames().count(LastName(node.func_call().funcname())) > 0 &&
      node.func_call().funcname_size() == 1) {
    return BindAggregate(node.func_call(), LastName(node.func_call().funcname()), context);
  }
  // An expression equal to a GROUP BY expression is that group column.
  if (!aggregation.group.empty() && !node.has_a_const() && !ContainsAggregate(node)) {
    std::optional<BoundExpr> as_input;
    try {
      as_input = BindNode(node, plain);
    } catch (const PlanFailure&) {
      if (node.has_column_ref()) throw;
    }
    if (as_input.has_value()) {
      const std::string key = as_input->expr.SerializeAsString();
      for (std::size_t i = 0; i < aggregation.group.size(); ++i) {
        if (aggregation.group_keys[i] == key) {
          BoundExpr out;
          out.expr = ColumnExpr(static_cast<std::uint32_t>(i));
          out.type = aggregation.group[i].type;
          out.mods = aggregation.group[i].mods;
          return out;
        }
      }
    }
  }
  if (node.has_column_ref()) {
    const BoundExpr column = BindNode(node, plain);  // 42703/42702 first, as PostgreSQL
    const auto& c = context.input->columns.at(column.expr.column());
    Fail(sqlstate::kGroupingError,
         "column \"" + (c.table.empty() ? c.name : c.table + "." + c.name) +
             "\" must appear in the GROUP BY clause or be used in an aggregate function",
         node.column_ref().location());
  }
  return BindNode(node, context);
}

BoundExpr Binder::BindNode(const pg_query::Node& node, const ExprContext& context) {
  switch (node.node_case()) {
    case pg_query::Node::kColumnRef:
      return BindColumnRef(node.column_ref(), context);
    case pg_query::Node::kAConst:
      return BindConst(node.a_const());
    case pg_query::Node::kAExpr:
      return BindAExpr(node.a_expr(), context);
    case pg_query::Node::kBoolExpr:
      return BindBool(node.bool_expr(), context);
    case pg_query::Node::kFuncCall:
      return BindFuncCall(node.func_call(), context);
    case pg_query::Node::kTypeCast:
      return BindTypeCast(node.type_cast(), context);
    case pg_query::Node::kCaseExpr:
      return BindCase(node.case_expr(), context);
    case pg_query::Node::kNullTest: {
      const auto& test = node.null_test();
      // PostgreSQL leaves an unknown tested here unknown: it types no parameter.
      BoundExpr tested = Bind(test.arg(), context);
      tested.unknown_location = -1;
      BoundExpr arg = Resolve(std::move(tested), test.location());
      BoundExpr out;
      out.type = pb::BOOL;
      out.expr = Unary(test.nulltesttype() == pg_query::IS_NULL ? pb::IS_NULL : pb::IS_NOT_NULL,
                       std::move(arg.expr));
      return out;
    }
    case pg_query::Node::kBooleanTest: {
      const auto& test = node.boolean_test();
      static const char* const kNames[] = {
          "", "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE", "IS UNKNOWN", "IS NOT UNKNOWN"};
      const int kind = static_cast<int>(test.booltesttype());
      if (kind < 1 || kind > 6) Fail(sqlstate::kFeatureNotSupported, "this boolean test");
      BoundExpr arg = Coerce(Bind(test.arg(), context), pb::BOOL, test.location(),
                             std::string("argument of ") + kNames[kind]);
      BoundExpr out;
      out.type = pb::BOOL;
      pb::ScalarExpr x = std::move(arg.expr);
      switch (test.booltesttype()) {
        case pg_query::IS_TRUE:  // if picks `els` on null
          out.expr = IfThenElse(x, BoolExpr(true), BoolExpr(false));
          break;
        case pg_query::IS_NOT_TRUE:
          out.expr = IfThenElse(x, BoolExpr(false), BoolExpr(true));
          break;
        case pg_query::IS_FALSE:
          out.expr = IfThenElse(Unary(pb::NOT, x), BoolExpr(true), BoolExpr(false));
          break;
        case pg_query::IS_NOT_FALSE:
          out.expr = IfThenElse(Unary(pb::NOT, x), BoolExpr(false), BoolExpr(true));
          break;
        case pg_query::IS_UNKNOWN:
          out.expr = Unary(pb::IS_NULL, x);
          break;
        default:
          out.expr = Unary(pb::IS_NOT_NULL, x);
          break;
      }
      return out;
    }
    case pg_query::Node::kCoalesceExpr: {
      const auto& coalesce = node.coalesce_expr();
      CheckChain(coalesce.args_size(), "COALESCE", coalesce.location());
      std::vector<BoundExpr> args;
      for (const auto& a : coalesce.args()) args.push_back(Bind(a, context));
      std::vector<BoundExpr*> branches;
      for (auto& a : args) branches.push_back(&a);
      TypeMods mods;
      const pb::ScalarType type = CommonType(branches, "COALESCE", coalesce.location(), &mods);
      pb::ScalarExpr e = args.back().expr;
      for (std::size_t i = args.size() - 1; i-- > 0;) {
        e = IfThenElse(Unary(pb::IS_NOT_NULL, args[i].expr), args[i].expr, std::move(e));
      }
      BoundExpr out;
      out.type = type;
      out.mods = mods;
      out.expr = std::move(e);
      return out;
    }
    case pg_query::Node::kSubLink:
      if (context.subqueries != nullptr) {
        auto it = context.subqueries->find(&node.sub_link());
        if (it != context.subqueries->end()) return it->second;
      }
      Fail(sqlstate::kFeatureNotSupported,
           "a subquery here is not supported yet: only EXISTS, IN and scalar subqueries in a WHERE "
           "or in the select list of a query without aggregates are",
           node.sub_link().location());
    case pg_query::Node::kParamRef:
      // The extended protocol's parameters are replaced by constants before a statement is bound
      // (sql/parameters.h): one left is in a simple Query, where PostgreSQL has none either.
      Fail(sqlstate::kUndefinedParameter,
           "there is no parameter $" + std::to_string(node.param_ref().number()),
           node.param_ref().location());
    case pg_query::Node::kMinMaxExpr: {
      // GREATEST/LEAST ignore nulls (null only when every argument is), PostgreSQL's order.
      const auto& minmax = node.min_max_expr();
      CheckChain(minmax.args_size(), "GREATEST and LEAST", minmax.location());
      const bool greatest = minmax.op() == pg_query::IS_GREATEST;
      std::vector<BoundExpr> args;
      for (const auto& a : minmax.args()) args.push_back(Bind(a, context));
      std::vector<BoundExpr*> branches;
      for (auto& a : args) branches.push_back(&a);
      BoundExpr out;
      out.type =
          CommonType(branches, greatest ? "GREATEST" : "LEAST", minmax.location(), &out.mods);
      out.expr = args[0].expr;
      for (std::size_t i = 1; i < args.size(); ++i) {
        const pb::ScalarExpr& x = out.expr;
        const pb::ScalarExpr& y = args[i].expr;
        out.expr = IfThenElse(Unary(pb::IS_NULL, x), y,
                              IfThenElse(Binary(pb::OR, Unary(pb::IS_NULL, y),
                                                Binary(greatest ? pb::GE : pb::LE, x, y)),
                                         x, y));
      }
      return out;
    }
    default:
      Fail(sqlstate::kFeatureNotSupported, "expression " + NodeKindName(node) + " is not supported",
           NodeLocation(node));
  }
}

// ---- leaves

BoundExpr Binder::BindColumnRef(const pg_query::ColumnRef& ref, const ExprContext& context) {
  const auto& fields = ref.fields();
  for (const auto& f : fields) {
    if (f.has_a_star()) {
      Fail(sqlstate::kFeatureNotSupported, "* in an expression is not supported", ref.location());
    }
  }
  if (fields.size() > 2) {
    Fail(sqlstate::kFeatureNotSupported,
         "qualified names with a schema or database (a.b.c) are not supported", ref.location());
  }
  const std::string name = fields.rbegin()->string().sval();
  const std::string table = fields.size() == 2 ? fields.begin()->string().sval() : "";
  const std::string shown = table.empty() ? "\"" + name + "\"" : table + "." + name;
  // Look in the input, then in the enclosing row of a correlated subquery.
  const Relation* levels[] = {context.input, context.outer};
  bool table_seen = false;
  std::uint32_t base = 0;
  for (const Relation* level : levels) {
    if (level == nullptr) continue;
    std::vector<std::uint32_t> found;
    bool table_here = false;
    for (std::uint32_t i = 0; i < level->columns.size(); ++i) {
      const ScopeColumn& c = level->columns[i];
      if (!table.empty()) {
        if (c.table != table) continue;
        table_seen = table_here = true;
        if (c.name == name) found.push_back(i);
      } else if (c.name == name && !c.only_qualified && !name.empty()) {
        found.push_back(i);
      }
    }
    if (found.size() > 1) {
      Fail(sqlstate::kAmbiguousColumn,
           "column reference " + (table.empty() ? shown : "\"" + shown + "\"") + " is ambiguous",
           ref.location());
    }
    if (found.size() == 1) {
      if (level == context.outer && context.used_outer != nullptr) *context.used_outer = true;
      BoundExpr out;
      out.expr = ColumnExpr(base + found[0]);
      out.type = level->columns[found[0]].type;
      out.mods = level->columns[found[0]].mods;
      return out;
    }
    // A qualifier names the nearest range of that name: an outer one of the same name is hidden.
    if (table_here) break;
    base = static_cast<std::uint32_t>(level->columns.size());
  }
  if (!table.empty() && !table_seen) {
    Fail(sqlstate::kUndefinedTable, "missing FROM-clause entry for table \"" + table + "\"",
         ref.location());
  }
  Fail(sqlstate::kUndefinedColumn, "column " + shown + " does not exist", ref.location());
}

BoundExpr Binder::BindConst(const pg_query::A_Const& constant) {
  // PostgreSQL's make_const: an integer is integer when it fits 32 bits (the scanner's ival),
  // bigint when it fits 64, else numeric; a constant with a point or an exponent is numeric.
  BoundExpr out;
  // An unknown (a string or NULL) is the statement's own when the text bound is the statement's.
  const int location = text_.data() == sql_.data() ? constant.location() : -1;
  if (constant.isnull()) {  // NULL: unknown, no literal
    out.unknown_location = location;
    return out;
  }
  switch (constant.val_case()) {
    case pg_query::A_Const::kIval:
      out.type = pb::INT32;
      out.int_literal = true;
      out.int_value = constant.ival().ival();
      out.expr = IntExpr(out.int_value, pb::INT32);
      return out;
    case pg_query::A_Const::kFval: {
      const std::string& text = constant.fval().fval();
      std::int64_t v = 0;
      bool out_of_range = false;
      if (ParseInt64(text, &v, &out_of_range)) {
        // -2147483648 arrives here (the scanner's 2147483648, negated): integer, as make_const.
        out.type = FitsInteger(v, pb::INT32) ? pb::INT32 : pb::INT64;
        out.int_literal = true;
        out.int_value = v;
        out.expr = IntExpr(v, out.type);
        return out;
      }
      out.type = pb::NUMERIC;
      if (auto plain = PlainNumericText(text)) {
        out.expr = NumericExpr(*plain);
      } else {
        // An exponent (1.5e3), or more digits than a literal holds: the runtime's numeric input
        // reads it, with PostgreSQL's errors ("value overflows numeric format").
        out.expr = CastExpr(StringExpr(text), pb::NUMERIC);
      }
      return out;
    }
    case pg_query::A_Const::kBoolval:
      out.type = pb::BOOL;
      out.expr = BoolExpr(constant.boolval().boolval());
      return out;
    case pg_query::A_Const::kSval:
      out.literal = constant.sval().sval();
      out.unknown_location = location;
      return out;
    default:
      Fail(sqlstate::kFeatureNotSupported, "bit string constants are not supported",
           constant.location());
  }
}

BoundExpr Binder::BindTypeCast(const pg_query::TypeCast& cast, const ExprContext& context) {
  // CAST(x AS t), x::t and typed literals (DATE '2026-12-06', INTERVAL '1 day'): PostgreSQL's
  // explicit cast — an unknown constant read as t, anything else converted if pg_cast or an I/O
  // conversion allows it (42846 otherwise).
  const TypeNameResult target = ResolveTypeName(cast.type_name());
  if (!target.type) Fail(target.error.sqlstate, target.error.message, target.error.location);
  const pb::ScalarType type = target.type->type;
  const TypeMods& mods = target.type->mods;
  // A decimal constant cast to double precision: PostgreSQL reads the numeric's digits as a
  // float8 (float8in of its text), which strtod of the same digits is.
  if (type == pb::FLOAT64 && cast.arg().has_a_const() && cast.arg().a_const().has_fval()) {
    BoundExpr text;
    text.literal = cast.arg().a_const().fval().fval();
    return CoerceTo(std::move(text), pb::FLOAT64, {}, CastContext::kExplicit, cast.location(),
                    "cast");
  }
  BoundExpr arg = Bind(cast.arg(), context);
  return CoerceTo(std::move(arg), type, mods, CastContext::kExplicit, cast.location(), "cast");
}

// ---- operators

BoundExpr Binder::BindOperator(const std::string& op, BoundExpr left, BoundExpr right, int location,
                               BoundExpr* converted_left) {
  static const std::map<std::string, pb::BinaryFunc> kArithmetic = {
      {"+", pb::ADD}, {"-", pb::SUB}, {"*", pb::MUL}, {"/", pb::DIV}, {"%", pb::MOD}};
  static const std::map<std::string, pb::BinaryFunc> kComparison = {
      {"=", pb::EQ},  {"<>", pb::NE}, {"!=", pb::NE}, {"<", pb::LT},
      {"<=", pb::LE}, {">", pb::GT},  {">=", pb::GE}};
  const auto arithmetic = kArithmetic.find(op);
  const auto comparison = kComparison.find(op);
  if (arithmetic == kArithmetic.end() && comparison == kComparison.end() && op != "||") {
    Fail(sqlstate::kFeatureNotSupported, "operator " + op + " is not supported yet", location);
  }
  const std::string signature =
      std::string(PgTypeName(Id(left))) + " " + op + " " + std::string(PgTypeName(Id(right)));
  // PostgreSQL's choice of operator for the operand types as written (operator_table.h); both
  // unknown: text, as PostgreSQL's exact match of unknown = unknown.
  OperatorChoice choice;
  OperatorLookup found = OperatorLookup::kMissing;
  if (Id(left) == PgTypeId::kUnknown && Id(right) == PgTypeId::kUnknown) {
    // PostgreSQL: unknown = unknown and unknown || unknown are text's; '1' + '2' is ambiguous.
    if (comparison != kComparison.end()) {
      choice = OperatorChoice{PgTypeId::kText, PgTypeId::kText, PgTypeId::kBool};
      found = OperatorLookup::kFound;
    } else if (op == "||") {
      choice = OperatorChoice{PgTypeId::kText, PgTypeId::kText, PgTypeId::kText};
      found = OperatorLookup::kFound;
    } else {
      found = OperatorLookup::kNotUnique;
    }
  } else {
    found = FindOperator(op, Id(left), Id(right), &choice);
  }
  if (found == OperatorLookup::kNotUnique) {
    Fail(sqlstate::kAmbiguousFunction, "operator is not unique: " + signature, location);
  }
  if (found == OperatorLookup::kMissing) {
    Fail(sqlstate::kUndefinedFunction, "operator does not exist: " + signature, location);
  }
  if (choice.left == PgTypeId::kJsonb || choice.right == PgTypeId::kJsonb ||
      choice.result == PgTypeId::kJsonb) {
    Fail(sqlstate::kFeatureNotSupported,
         "operator " + signature + " is jsonb's in PostgreSQL, and Tandem has no jsonb", location);
  }
  // Each operand converted to the operator's declared type (an anynonarray operand of || to
  // text, by its output function as PostgreSQL's textanycat does).
  // `as_declared` (when given): the operand as the declared type, before a comparison of
  // character trims it (NULLIF returns it).
  auto convert = [&](BoundExpr e, PgTypeId to, BoundExpr* as_declared) {
    if (to == PgTypeId::kAnyNonArray) {
      return CoerceTo(std::move(e), pb::STRING, {}, CastContext::kExplicit, location, "operand");
    }
    if (to == PgTypeId::kBpchar) {  // character compares without its trailing blanks
      BoundExpr out = Id(e) == PgTypeId::kBpchar
                          ? std::move(e)  // char(n) keeps its length
                          : CoerceTo(std::move(e), pb::STRING, ModsOf(to), CastContext::kImplicit,
                                     location, "operand");
      if (as_declared != nullptr) *as_declared = out;
      out.expr = CallExpr(pb::RTRIM, {std::move(out.expr)});
      out.mods = {};
      return out;
    }
    BoundExpr out = CoerceTo(std::move(e), ScalarOf(to), ModsOf(to), CastContext::kImplicit,
                             location, "operand");
    if (as_declared != nullptr) *as_declared = out;
    return out;
  };
  left = convert(std::move(left), choice.left, converted_left);
  right = convert(std::move(right), choice.right, nullptr);
  BoundExpr out;
  out.type = ScalarOf(choice.result);
  out.mods = ModsOf(choice.result);
  if (op == "||") {
    if (choice.result != PgTypeId::kText && choice.result != PgTypeId::kBytea) {
      Fail(sqlstate::kFeatureNotSupported, "operator " + signature + " is not supported yet",
           location);
    }
    out.expr = CallExpr(pb::CONCAT, {std::move(left.expr), std::move(right.expr)});
    return out;
  }
  // PostgreSQL's cross-type operators (int4 + int8, float4 < float8, date < timestamp) are the
  // same-type operator of the wider type, which the runtime has: the narrower side converted.
  const PgTypeId l = Id(left), r = Id(right);
  const bool same_family = (IsNumericFamily(l) && IsNumericFamily(r)) ||
                           (Category(l) == 'D' && Category(r) == 'D' && l != PgTypeId::kTime &&
                            r != PgTypeId::kTime && comparison != kComparison.end());
  if (l != r && same_family) {
    const PgTypeId wider = CanCast(l, r, CastContext::kImplicit) ? r : l;
    left =
        CoerceTo(std::move(left), ScalarOf(wider), {}, CastContext::kImplicit, location, "operand");
    right = CoerceTo(std::move(right), ScalarOf(wider), {}, CastContext::kImplicit, location,
                     "operand");
  }
  const pb::BinaryFunc func =
      arithmetic != kArithmetic.end() ? arithmetic->second : comparison->second;
  // time + date is date + time (the runtime has the one order).
  if (func == pb::ADD && l == PgTypeId::kTime && r == PgTypeId::kDate) std::swap(left, right);
  out.expr = Binary(func, std::move(left.expr), std::move(right.expr));
  return out;
}

BoundExpr Binder::BindAExpr(const pg_query::A_Expr& expr, const ExprContext& context) {
  const std::string op = LastName(expr.name());
  const int location = expr.location();
  auto list_items = [&](const pg_query::Node& node) {
    std::vector<const pg_query::Node*> items;
    if (node.has_list()) {
      for (const auto& item : node.list().items()) items.push_back(&item);
    } else {
      items.push_back(&node);
    }
    return items;
  };
  switch (expr.kind()) {
    case pg_query::AEXPR_OP: {
      if (expr.name_size() != 1) {
        Fail(sqlstate::kFeatureNotSupported, "OPERATOR(schema.op) is not supported", location);
      }
      if (!expr.has_lexpr()) {
        BoundExpr operand = Bind(expr.rexpr(), context);
        if (op != "-" && op != "+") {
          Fail(sqlstate::kFeatureNotSupported, "prefix operator " + op + " is not supported",
               location);
        }
        // PostgreSQL's prefix + and - exist for the numbers and (-) interval; for an unknown
        // operand it finds several and says so.
        const PgTypeId id = Id(operand);
        if (id == PgTypeId::kUnknown) {
          Fail(sqlstate::kAmbiguousFunction, "operator is not unique: " + op + " unknown",
               location);
        }
        if (!IsNumericFamily(id) && !(op == "-" && id == PgTypeId::kInterval)) {
          Fail(sqlstate::kUndefinedFunction,
               "operator does not exist: " + op + " " + std::string(PgTypeName(id)), location);
        }
        if (op == "+") return operand;
        BoundExpr out;
        out.type = operand.type;
        out.expr = Unary(pb::NEGATE, std::move(operand.expr));
        return out;
      }
      if (!expr.has_rexpr()) {
        Fail(sqlstate::kFeatureNotSupported, "postfix operators are not supported", location);
      }
      BoundExpr left = Bind(expr.lexpr(), context);
      BoundExpr right = Bind(expr.rexpr(), context);
      return BindOperator(op, std::move(left), std::move(right), location);
    }
    case pg_query::AEXPR_DISTINCT:
    case pg_query::AEXPR_NOT_DISTINCT: {
      BoundExpr left = Bind(expr.lexpr(), context);
      BoundExpr right = Bind(expr.rexpr(), context);
      // Type-checks as `=`; then: both null → not distinct, one null → distinct, else <>.
      const BoundExpr ne = BindOperator("<>", left, right, location);
      const pb::ScalarExpr a = ne.expr.binary().left(), b = ne.expr.binary().right();
      pb::ScalarExpr distinct =
          IfThenElse(Unary(pb::IS_NULL, a), Unary(pb::IS_NOT_NULL, b),
                     IfThenElse(Unary(pb::IS_NULL, b), BoolExpr(true), ne.expr));
      BoundExpr out;
      out.type = pb::BOOL;
      out.expr = expr.kind() == pg_query::AEXPR_DISTINCT ? std::move(distinct)
                                                         : Unary(pb::NOT, std::move(distinct));
      return out;
    }
    case pg_query::AEXPR_NULLIF: {
      BoundExpr left = Bind(expr.lexpr(), context);
      BoundExpr right = Bind(expr.rexpr(), context);
      // The result is the type of the `=` operator's left operand (nullif(1, 2.5) is numeric).
      BoundExpr value;
      const BoundExpr eq = BindOperator("=", left, right, location, &value);
      BoundExpr out;
      out.type = value.type;
      out.mods = value.mods;
      out.expr = IfThenElse(eq.expr, NullExpr(out.type), value.expr);
      return out;
    }
    case pg_query::AEXPR_IN: {
      // x IN (a, b) = x = a OR x = b; NOT IN = x <> a AND x <> b: SQL's three values exactly.
      const bool in = op == "=";
      BoundExpr left = Bind(expr.lexpr(), context);
      std::vector<BoundExpr> items;
      for (const pg_query::Node* item : list_items(expr.rexpr())) {
        items.push_back(Bind(*item, context));
      }
      std::vector<BoundExpr*> all = {&left};
      for (auto& item : items) all.push_back(&item);
      CommonType(all, "IN", location);
      std::vector<pb::ScalarExpr> tests;
      for (auto& item : items) {
        tests.push_back(BindOperator(in ? "=" : "<>", left, item, location).expr);
      }
      BoundExpr out;
      out.type = pb::BOOL;
      out.expr = Balanced(in ? pb::OR : pb::AND, std::move(tests));
      return out;
    }
    case pg_query::AEXPR_BETWEEN:
    case pg_query::AEXPR_NOT_BETWEEN: {
      const auto bounds = list_items(expr.rexpr());
      if (bounds.size() != 2) Fail(sqlstate::kSyntaxError, "BETWEEN needs two bounds", location);
      BoundExpr x = Bind(expr.lexpr(), context);
      BoundExpr low = Bind(*bounds[0], context);
      BoundExpr high = Bind(*bounds[1], context);
      BoundExpr out;
      out.type = pb::BOOL;
      if (expr.kind() == pg_query::AEXPR_BETWEEN) {
        out.expr = Binary(pb::AND, BindOperator(">=", x, low, location).expr,
                          BindOperator("<=", x, high, location).expr);
      } else {
        out.expr = Binary(pb::OR, BindOperator("<", x, low, location).expr,
                          BindOperator(">", x, high, location).expr);
      }
      return out;
    }
    case pg_query::AEXPR_LIKE:
    case pg_query::AEXPR_ILIKE: {
      // ~~ (LIKE), !~~ (NOT LIKE), ~~* (ILIKE), !~~* (NOT ILIKE) of text, with PostgreSQL's
      // default escape (a backslash); character is matched with its blanks (bpcharlike).
      const bool negated = !op.empty() && op[0] == '!';
      const bool ilike = expr.kind() == pg_query::AEXPR_ILIKE;
      if (expr.rexpr().has_func_call()) {
        Fail(sqlstate::kFeatureNotSupported, "LIKE … ESCAPE is not supported yet", location);
      }
      BoundExpr value = Bind(expr.lexpr(), context);
      BoundExpr pattern = Bind(expr.rexpr(), context);
      std::optional<pb::ScalarExpr> v = Id(value) == PgTypeId::kBpchar
                                            ? std::optional<pb::ScalarExpr>(value.expr)
                                            : AsText(value, location);
      std::optional<pb::ScalarExpr> p = Id(pattern) == PgTypeId::kBpchar
                                            ? std::optional<pb::ScalarExpr>(pattern.expr)
                                            : AsText(pattern, location);
      if (!v || !p) {
        Fail(sqlstate::kUndefinedFunction,
             "operator does not exist: " + std::string(PgTypeName(Id(value))) + " " + op + " " +
                 std::string(PgTypeName(Id(pattern))),
             location);
      }
      BoundExpr out;
      out.type = pb::BOOL;
      out.expr = CallExpr(ilike ? pb::ILIKE : pb::LIKE, {std::move(*v), std::move(*p)});
      if (negated) out.expr = Unary(pb::NOT, std::move(out.expr));
      return out;
    }
    case pg_query::AEXPR_SIMILAR:
      Fail(sqlstate::kFeatureNotSupported, "SIMILAR TO is not supported", location);
    case pg_query::AEXPR_BETWEEN_SYM:
    case pg_query::AEXPR_NOT_BETWEEN_SYM:
      Fail(sqlstate::kFeatureNotSupported, "BETWEEN SYMMETRIC is not supported yet", location);
    default:
      Fail(sqlstate::kFeatureNotSupported, "ANY/ALL/SOME over arrays are not supported", location);
  }
}

BoundExpr Binder::BindBool(const pg_query::BoolExpr& expr, const ExprContext& context) {
  const char* name = expr.boolop() == pg_query::AND_EXPR  ? "AND"
                     : expr.boolop() == pg_query::OR_EXPR ? "OR"
                                                          : "NOT";
  std::vector<pb::ScalarExpr> args;
  for (const auto& a : expr.args()) {
    args.push_back(
        Coerce(Bind(a, context), pb::BOOL, NodeLocation(a), std::string("argument of ") + name)
            .expr);
  }
  BoundExpr out;
  out.type = pb::BOOL;
  if (expr.boolop() == pg_query::NOT_EXPR) {
    out.expr = Unary(pb::NOT, std::move(args.at(0)));
    return out;
  }
  const pb::BinaryFunc func = expr.boolop() == pg_query::AND_EXPR ? pb::AND : pb::OR;
  out.expr = Balanced(func, std::move(args));
  return out;
}

BoundExpr Binder::BindCase(const pg_query::CaseExpr& expr, const ExprContext& context) {
  CheckChain(expr.args_size(), "CASE", expr.location());
  std::optional<BoundExpr> arg;
  if (expr.has_arg()) arg = Bind(expr.arg(), context);
  std::vector<pb::ScalarExpr> conditions;
  std::vector<BoundExpr> results;
  for (const auto& w : expr.args()) {
    const auto& when = w.case_when();
    if (arg.has_value()) {
      conditions.push_back(
          BindOperator("=", *arg, Bind(when.expr(), context), when.location()).expr);
    } else {
      conditions.push_back(
          Coerce(Bind(when.expr(), context), pb::BOOL, when.location(), "argument of CASE/WHEN")
              .expr);
    }
    results.push_back(Bind(when.result(), context));
  }
  results.push_back(expr.has_defresult() ? Bind(expr.defresult(), context) : BoundExpr{});
  // PostgreSQL resolves the ELSE first, then the THENs in order (its messages name them so).
  std::vector<BoundExpr*> branches = {&results.back()};
  for (std::size_t i = 0; i + 1 < results.size(); ++i) branches.push_back(&results[i]);
  BoundExpr out;
  out.type = CommonType(branches, "CASE", expr.location(), &out.mods);
  out.expr = results.back().expr;
  for (std::size_t i = conditions.size(); i-- > 0;) {
    out.expr =
        IfThenElse(std::move(conditions[i]), std::move(results[i].expr), std::move(out.expr));
  }
  return out;
}

// ---- functions and aggregates

BoundExpr Binder::BindFuncCall(const pg_query::FuncCall& call, const ExprContext& context) {
  const std::string name = LastName(call.funcname());
  if (AggregateNames().count(name) > 0 && call.funcname_size() == 1 && !call.has_over()) {
    if (context.clause == nullptr) {
      Fail(sqlstate::kGroupingError, "aggregate function calls cannot be nested", call.location());
    }
    Fail(sqlstate::kGroupingError,
         std::string("aggregate functions are not allowed in ") + context.clause, call.location());
  }
  if (call.has_over()) {
    Fail(sqlstate::kFeatureNotSupported, "window functions are not supported yet", call.location());
  }
  if (call.agg_star() || call.agg_distinct() || call.agg_order_size() > 0 ||
      call.has_agg_filter() || call.func_variadic() || call.agg_within_group()) {
    Fail(sqlstate::kFeatureNotSupported,
         "function " + name + " with *, DISTINCT, ORDER BY, FILTER or VARIADIC is not supported",
         call.location());
  }
  // The name as written (the grammar's own spellings qualified: pg_catalog.extract), for
  // PostgreSQL's "function … does not exist".
  std::string shown;
  for (const auto& n : call.funcname()) {
    shown += (shown.empty() ? "" : ".") + (n.has_string() ? n.string().sval() : std::string());
  }
  if (call.funcname_size() > 2 ||
      (call.funcname_size() == 2 && call.funcname(0).string().sval() != "pg_catalog")) {
    Fail(sqlstate::kUndefinedFunction, "function " + shown + " does not exist", call.location());
  }
  std::vector<BoundExpr> args;
  for (const auto& a : call.args()) args.push_back(Bind(a, context));
  const int at = call.location();
  auto no_such = [&]() {
    std::string types;
    for (const auto& a : args)
      types += (types.empty() ? "" : ", ") + std::string(PgTypeName(Id(a)));
    Fail(sqlstate::kUndefinedFunction, "function " + shown + "(" + types + ") does not exist", at);
  };
  auto text_arg = [&](std::size_t i) {
    std::optional<pb::ScalarExpr> t = AsText(args.at(i), at);
    if (!t) no_such();
    return std::move(*t);
  };
  auto int4_arg = [&](std::size_t i) {
    const PgTypeId id = Id(args.at(i));
    if (id != PgTypeId::kUnknown && !CanCast(id, PgTypeId::kInt4, CastContext::kImplicit))
      no_such();
    return CoerceTo(args[i], pb::INT32, {}, CastContext::kImplicit, at, "argument").expr;
  };
  auto result = [](pb::ScalarType type, pb::ScalarExpr expr) {
    BoundExpr out;
    out.type = type;
    out.expr = std::move(expr);
    return out;
  };
  auto arity = [&](std::size_t low, std::size_t high) {
    if (args.size() < low || args.size() > high) no_such();
  };
  // The time itself (DESIGN §16's temporal filters; Materialize's mz_now()): a timestamptz, the
  // time of the update being computed. The runtime reads it only in a materialized view's
  // temporal filter (`tandem_now() < t + interval '10 seconds'`); a read refuses it (sql_reads).
  if (name == "tandem_now") {
    arity(0, 0);
    pb::ScalarExpr now;
    now.mutable_now();
    return result(pb::TIMESTAMPTZ, std::move(now));
  }
  // String functions (text in; character without its trailing blanks, as PostgreSQL's cast to
  // text).
  if (name == "length" || name == "char_length" || name == "character_length") {
    arity(1, 1);
    if (Id(args[0]) == PgTypeId::kBytea && name == "length") {
      return result(pb::INT32, CallExpr(pb::OCTET_LENGTH, {args[0].expr}));
    }
    return result(pb::INT32, CallExpr(pb::CHAR_LENGTH, {text_arg(0)}));
  }
  if (name == "octet_length") {
    arity(1, 1);
    if (Id(args[0]) == PgTypeId::kBytea) {
      return result(pb::INT32, CallExpr(pb::OCTET_LENGTH, {args[0].expr}));
    }
    // octet_length(character) counts its blanks (PostgreSQL's bpcharoctetlen).
    if (Id(args[0]) == PgTypeId::kBpchar) {
      return result(pb::INT32, CallExpr(pb::OCTET_LENGTH, {args[0].expr}));
    }
    return result(pb::INT32, CallExpr(pb::OCTET_LENGTH, {text_arg(0)}));
  }
  if (name == "lower" || name == "upper") {
    arity(1, 1);
    return result(pb::STRING, CallExpr(name == "lower" ? pb::LOWER : pb::UPPER, {text_arg(0)}));
  }
  if (name == "substr" || name == "substring") {
    arity(2, 3);
    std::vector<pb::ScalarExpr> a = {text_arg(0), int4_arg(1)};
    if (args.size() == 3) a.push_back(int4_arg(2));
    return result(pb::STRING, CallExpr(pb::SUBSTR, std::move(a)));
  }
  if (name == "strpos" || name == "position") {
    // position(a IN b) is pg_catalog.position(b, a) from the grammar; strpos(b, a).
    arity(2, 2);
    return result(pb::INT32, CallExpr(pb::STRPOS, {text_arg(0), text_arg(1)}));
  }
  if (name == "btrim" || name == "ltrim" || name == "rtrim") {
    arity(1, 2);
    std::vector<pb::ScalarExpr> a = {text_arg(0)};
    if (args.size() == 2) a.push_back(text_arg(1));
    const pb::Func f = name == "btrim" ? pb::BTRIM : name == "ltrim" ? pb::LTRIM : pb::RTRIM;
    return result(pb::STRING, CallExpr(f, std::move(a)));
  }
  if (name == "replace") {
    arity(3, 3);
    return result(pb::STRING, CallExpr(pb::REPLACE, {text_arg(0), text_arg(1), text_arg(2)}));
  }
  // Math: PostgreSQL's candidates are (double precision) and (numeric); an integer, real or
  // unknown argument goes to double precision (the preferred type), numeric stays numeric.
  auto float_or_numeric = [&](std::size_t i) {
    const PgTypeId id = Id(args.at(i));
    if (id != PgTypeId::kUnknown && !IsNumericFamily(id)) no_such();
    const pb::ScalarType t = id == PgTypeId::kNumeric ? pb::NUMERIC : pb::FLOAT64;
    return CoerceTo(args[i], t, {}, CastContext::kImplicit, at, "argument");
  };
  if (name == "abs") {
    arity(1, 1);
    const PgTypeId id = Id(args[0]);
    if (id == PgTypeId::kUnknown)
      return result(pb::FLOAT64, CallExpr(pb::ABS, {float_or_numeric(0).expr}));
    if (!IsNumericFamily(id)) no_such();
    return result(args[0].type, CallExpr(pb::ABS, {args[0].expr}));
  }
  if (name == "round" || name == "trunc" || name == "floor" || name == "ceil" ||
      name == "ceiling" || name == "sqrt") {
    const bool digits = name == "round" || name == "trunc";
    arity(1, digits ? 2 : 1);
    const pb::Func f = name == "round"   ? pb::ROUND
                       : name == "trunc" ? pb::TRUNC
                       : name == "floor" ? pb::FLOOR
                       : name == "sqrt"  ? pb::SQRT
                                         : pb::CEIL;
    if (args.size() == 2) {
      // round(numeric, integer) only: an integer first argument becomes numeric; a float has no
      // such function.
      const PgTypeId id = Id(args[0]);
      if (id != PgTypeId::kUnknown && !CanCast(id, PgTypeId::kNumeric, CastContext::kImplicit)) {
        no_such();
      }
      const pb::ScalarExpr x =
          CoerceTo(args[0], pb::NUMERIC, {}, CastContext::kImplicit, at, "argument").expr;
      return result(pb::NUMERIC, CallExpr(f, {x, int4_arg(1)}));
    }
    BoundExpr x = float_or_numeric(0);
    return result(x.type, CallExpr(f, {std::move(x.expr)}));
  }
  if (name == "power" || name == "pow") {
    arity(2, 2);
    // (numeric, numeric) when neither is a float and one is numeric; else double precision.
    bool any_numeric = false, any_float = false;
    for (const auto& a : args) {
      const PgTypeId id = Id(a);
      if (id != PgTypeId::kUnknown && !IsNumericFamily(id)) no_such();
      any_numeric |= id == PgTypeId::kNumeric;
      any_float |= id == PgTypeId::kFloat4 || id == PgTypeId::kFloat8;
    }
    const pb::ScalarType t = any_numeric && !any_float ? pb::NUMERIC : pb::FLOAT64;
    return result(
        t, CallExpr(pb::POWER,
                    {CoerceTo(args[0], t, {}, CastContext::kImplicit, at, "argument").expr,
                     CoerceTo(args[1], t, {}, CastContext::kImplicit, at, "argument").expr}));
  }
  if (name == "mod") {
    arity(2, 2);
    const PgTypeId l = Id(args[0]), r = Id(args[1]);
    const bool ok = (l == PgTypeId::kUnknown || IsIntegerType(l) || l == PgTypeId::kNumeric) &&
                    (r == PgTypeId::kUnknown || IsIntegerType(r) || r == PgTypeId::kNumeric);
    if (!ok) no_such();
    return BindOperator("%", args[0], args[1], at);
  }
  // Dates and times: date_trunc(text, timestamp | timestamptz | interval) — a date is taken as
  // timestamptz and a time as interval, as PostgreSQL's implicit casts pick; extract(field from x)
  // (the grammar's pg_catalog.extract) numeric; date_part double precision.
  if (name == "date_trunc" || name == "extract" || name == "date_part") {
    arity(2, 2);
    const PgTypeId id = Id(args[1]);
    pb::ScalarType t = args[1].type;
    if (name == "date_trunc") {
      if (id == PgTypeId::kDate) t = pb::TIMESTAMPTZ;
      if (id == PgTypeId::kTime) t = pb::INTERVAL;
      if (t != pb::TIMESTAMP && t != pb::TIMESTAMPTZ && t != pb::INTERVAL) {
        if (id == PgTypeId::kUnknown) {
          Fail(sqlstate::kAmbiguousFunction,
               "function " + shown + "(" + std::string(PgTypeName(Id(args[0]))) +
                   ", unknown) is not unique",
               at);
        }
        no_such();
      }
    } else if (id == PgTypeId::kUnknown) {
      Fail(sqlstate::kAmbiguousFunction,
           "function " + shown + "(" + std::string(PgTypeName(Id(args[0]))) +
               ", unknown) is not unique",
           at);
    } else if (Category(id) != 'D' && id != PgTypeId::kInterval) {
      no_such();
    }
    const pb::ScalarExpr unit = text_arg(0);
    const pb::ScalarExpr x = CoerceTo(args[1], t, {}, CastContext::kImplicit, at, "argument").expr;
    if (name == "date_trunc") return result(t, CallExpr(pb::DATE_TRUNC, {unit, x}));
    return result(name == "extract" ? pb::NUMERIC : pb::FLOAT64,
                  CallExpr(name == "extract" ? pb::EXTRACT : pb::DATE_PART, {unit, x}));
  }
  Fail(sqlstate::kFeatureNotSupported, "function " + shown + " is not supported yet",
       call.location());
}

BoundExpr Binder::BindAggregate(const pg_query::FuncCall& call, const std::string& name,
                                const ExprContext& context) {
  Aggregation& aggregation = *context.aggregation;
  if (call.has_agg_filter() || call.agg_order_size() > 0 || call.agg_within_group() ||
      call.func_variadic()) {
    Fail(sqlstate::kFeatureNotSupported,
         "FILTER, ORDER BY and WITHIN GROUP in aggregate calls are not supported", call.location());
  }
  AggregateCall agg;
  if (call.agg_star()) {
    if (name != "count") {
      Fail(sqlstate::kWrongObjectType,
           name + "(*) must be used to call a parameterless aggregate function", call.location());
    }
    agg.func = pb::COUNT;
    agg.type = pb::INT64;
  } else {
    ExprContext inner = context;
    inner.aggregation = nullptr;
    inner.outer = nullptr;
    inner.clause = nullptr;  // an aggregate inside: "cannot be nested"
    std::vector<BoundExpr> args;
    for (const auto& a : call.args()) args.push_back(Resolve(Bind(a, inner), NodeLocation(a)));
    if (args.size() != 1) {
      std::string types;
      for (const auto& a : args) types += (types.empty() ? "" : ", ") + TypeSqlName(a.type);
      Fail(sqlstate::kUndefinedFunction, "function " + name + "(" + types + ") does not exist",
           call.location());
    }
    const PgTypeId t = Id(args[0]);
    const std::string signature = name + "(" + std::string(PgTypeName(t)) + ")";
    auto no_such = [&] {
      Fail(sqlstate::kUndefinedFunction, "function " + signature + " does not exist",
           call.location());
    };
    auto no_distinct = [&] {
      if (call.agg_distinct()) {
        Fail(sqlstate::kFeatureNotSupported, name + "(DISTINCT …) is not supported yet",
             call.location());
      }
    };
    // The runtime's SUM and AVG keep their input's type (AVG of a float is FLOAT64): PostgreSQL's
    // result types are reached by converting the input first — sum(int2|int4) is bigint,
    // sum(int8) and avg of an integer numeric, sum(time) and avg(time) interval.
    auto input_as = [&](pb::ScalarType type) {
      agg.arg =
          CoerceTo(args[0], type, {}, CastContext::kImplicit, call.location(), "argument").expr;
      agg.type = type;
    };
    agg.arg = args[0].expr;
    agg.type = args[0].type;
    if (name == "count") {
      agg.func = call.agg_distinct() ? pb::COUNT_DISTINCT : pb::COUNT_NON_NULL;
      agg.type = pb::INT64;
    } else if (name == "sum") {
      no_distinct();
      agg.func = pb::SUM;
      if (t == PgTypeId::kInt2 || t == PgTypeId::kInt4) {
        input_as(pb::INT64);
      } else if (t == PgTypeId::kInt8) {
        input_as(pb::NUMERIC);
      } else if (t == PgTypeId::kTime) {
        input_as(pb::INTERVAL);
      } else if (!(t == PgTypeId::kFloat4 || t == PgTypeId::kFloat8 || t == PgTypeId::kNumeric ||
                   t == PgTypeId::kInterval)) {
        no_such();
      }
    } else if (name == "min" || name == "max") {
      if (t == PgTypeId::kBool || t == PgTypeId::kBytea || t == PgTypeId::kUuid) no_such();
      agg.func = name == "min" ? pb::MIN : pb::MAX;
      if (t == PgTypeId::kVarchar) input_as(pb::STRING);  // max(text): varchar has none
      agg.mods = t == PgTypeId::kBpchar ? ModsOf(t) : TypeMods{};
    } else if (name == "avg") {
      no_distinct();
      agg.func = pb::AVG;
      if (IsIntegerType(t) || t == PgTypeId::kNumeric) {
        input_as(pb::NUMERIC);
      } else if (t == PgTypeId::kFloat4 || t == PgTypeId::kFloat8) {
        agg.type = pb::FLOAT64;
      } else if (t == PgTypeId::kInterval || t == PgTypeId::kTime) {
        input_as(pb::INTERVAL);
      } else {
        no_such();
      }
    } else {  // bool_or, bool_and, every
      if (t != PgTypeId::kBool) no_such();
      agg.func = name == "bool_or" ? pb::ANY : pb::ALL;
      agg.type = pb::BOOL;
    }
  }
  agg.key = std::to_string(static_cast<int>(agg.func)) + ":" + agg.arg.SerializeAsString();
  std::size_t index = aggregation.calls.size();
  for (std::size_t i = 0; i < aggregation.calls.size(); ++i) {
    if (aggregation.calls[i].key == agg.key) index = i;
  }
  if (index == aggregation.calls.size()) aggregation.calls.push_back(agg);
  BoundExpr out;
  out.type = agg.type;
  out.mods = agg.mods;
  out.expr = ColumnExpr(static_cast<std::uint32_t>(aggregation.group.size() + index));
  return out;
}

}  // namespace tandem::frontend::plan
