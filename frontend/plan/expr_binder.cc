// Scalar expressions: PostgreSQL's expression nodes → ScalarExpr over a relation's columns, with
// PostgreSQL's types (bigint, double precision, text, boolean and `unknown` constants), its
// operator resolution for those types and its error messages.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "frontend/plan/binder.h"

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

BoundExpr Binder::Coerce(BoundExpr e, pb::ScalarType type, int location, const std::string& what) {
  if (e.type == type) return e;
  BoundExpr out;
  out.type = type;
  if (e.type == pb::SCALAR_TYPE_UNSPECIFIED) {
    if (!e.literal.has_value()) {
      out.expr = NullExpr(type);
      return out;
    }
    const std::string& text = *e.literal;
    const std::string trimmed = Trim(text);
    switch (type) {
      case pb::STRING:
        out.expr = StringExpr(text);
        return out;
      case pb::INT64: {
        std::int64_t v = 0;
        bool out_of_range = false;
        if (!ParseInt64(trimmed, &v, &out_of_range)) {
          if (out_of_range) {
            Fail(sqlstate::kNumericValueOutOfRange,
                 "value \"" + text + "\" is out of range for type bigint", location);
          }
          Fail(sqlstate::kInvalidTextRepresentation,
               "invalid input syntax for type bigint: \"" + text + "\"", location);
        }
        out.expr = IntExpr(v);
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
      default:
        break;
    }
  }
  if (e.int_literal && type == pb::FLOAT64) {
    out.expr = FloatExpr(static_cast<double>(e.int_value));
    return out;
  }
  Fail(sqlstate::kDatatypeMismatch,
       what + " must be type " + TypeSqlName(type) + ", not type " + TypeSqlName(e.type), location);
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
                                  int location) {
  pb::ScalarType common = pb::SCALAR_TYPE_UNSPECIFIED;
  bool mixed_numbers = false;
  for (BoundExpr* b : branches) {
    if (b->type == pb::SCALAR_TYPE_UNSPECIFIED || b->type == common) continue;
    if (common == pb::SCALAR_TYPE_UNSPECIFIED) {
      common = b->type;
      continue;
    }
    const bool numbers = (common == pb::INT64 && b->type == pb::FLOAT64) ||
                         (common == pb::FLOAT64 && b->type == pb::INT64);
    if (!numbers) {
      Fail(sqlstate::kDatatypeMismatch,
           std::string(construct) + " types " + TypeSqlName(common) + " and " +
               TypeSqlName(b->type) + " cannot be matched",
           location);
    }
    mixed_numbers = true;
    common = pb::FLOAT64;
  }
  if (common == pb::SCALAR_TYPE_UNSPECIFIED) common = pb::STRING;
  for (BoundExpr* b : branches) {
    if (mixed_numbers && b->type == pb::INT64 && !b->int_literal) {
      Fail(sqlstate::kFeatureNotSupported,
           std::string(construct) +
               " of bigint and double precision is not supported yet (it needs a cast of "
               "bigint to double precision)",
           location);
    }
    *b = Coerce(std::move(*b), common, location, std::string(construct) + " branch");
  }
  return common;
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
          out.numeric = aggregation.group[i].numeric;
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
      BoundExpr arg = Resolve(Bind(test.arg(), context), test.location());
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
      const pb::ScalarType type = CommonType(branches, "COALESCE", coalesce.location());
      bool numeric = false;
      for (const auto& a : args) numeric |= a.numeric;
      pb::ScalarExpr e = args.back().expr;
      for (std::size_t i = args.size() - 1; i-- > 0;) {
        e = IfThenElse(Unary(pb::IS_NOT_NULL, args[i].expr), args[i].expr, std::move(e));
      }
      BoundExpr out;
      out.type = type;
      out.numeric = numeric;
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
      Fail(sqlstate::kFeatureNotSupported, "parameters ($n) are not supported",
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
      out.type = CommonType(branches, greatest ? "GREATEST" : "LEAST", minmax.location());
      out.expr = args[0].expr;
      for (std::size_t i = 1; i < args.size(); ++i) {
        out.numeric |= args[i].numeric;
        const pb::ScalarExpr& x = out.expr;
        const pb::ScalarExpr& y = args[i].expr;
        out.expr = IfThenElse(Unary(pb::IS_NULL, x), y,
                              IfThenElse(Binary(pb::OR, Unary(pb::IS_NULL, y),
                                                Binary(greatest ? pb::GE : pb::LE, x, y)),
                                         x, y));
      }
      out.numeric |= args[0].numeric;
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
      out.numeric = level->columns[found[0]].numeric;
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
  BoundExpr out;
  if (constant.isnull()) return out;  // NULL: unknown, no literal
  switch (constant.val_case()) {
    case pg_query::A_Const::kIval:
      out.type = pb::INT64;
      out.int_literal = true;
      out.int_value = constant.ival().ival();
      out.expr = IntExpr(out.int_value);
      return out;
    case pg_query::A_Const::kFval: {
      std::int64_t v = 0;
      bool out_of_range = false;
      if (ParseInt64(constant.fval().fval(), &v, &out_of_range)) {
        out.type = pb::INT64;
        out.int_literal = true;
        out.int_value = v;
        out.expr = IntExpr(v);
        return out;
      }
      Fail(sqlstate::kFeatureNotSupported,
           "numeric constants are not supported yet: " + constant.fval().fval() +
               " is numeric in PostgreSQL (write '" + constant.fval().fval() +
               "'::float8 for a double precision)",
           constant.location());
    }
    case pg_query::A_Const::kBoolval:
      out.type = pb::BOOL;
      out.expr = BoolExpr(constant.boolval().boolval());
      return out;
    case pg_query::A_Const::kSval:
      out.literal = constant.sval().sval();
      return out;
    default:
      Fail(sqlstate::kFeatureNotSupported, "bit string constants are not supported",
           constant.location());
  }
}

BoundExpr Binder::BindTypeCast(const pg_query::TypeCast& cast, const ExprContext& context) {
  const auto& type_name = cast.type_name();
  const std::string name = LastName(type_name.names());
  pb::ScalarType type = pb::SCALAR_TYPE_UNSPECIFIED;
  if (name == "int8" || name == "bigint") type = pb::INT64;
  if (name == "float8") type = pb::FLOAT64;
  if (name == "text") type = pb::STRING;
  if (name == "bool" || name == "boolean") type = pb::BOOL;
  if (type == pb::SCALAR_TYPE_UNSPECIFIED || type_name.array_bounds_size() > 0 ||
      type_name.typmods_size() > 0 || type_name.setof() || type_name.pct_type()) {
    Fail(sqlstate::kFeatureNotSupported,
         "type " + name +
             " is not supported yet: the types are bigint (int8), double precision "
             "(float8), text and boolean",
         type_name.location());
  }
  // A decimal constant cast to double precision: PostgreSQL reads the numeric's digits as a
  // float8 (float8in of its text), which strtod of the same digits is.
  if (type == pb::FLOAT64 && cast.arg().has_a_const() && cast.arg().a_const().has_fval()) {
    BoundExpr text;
    text.literal = cast.arg().a_const().fval().fval();
    return Coerce(std::move(text), pb::FLOAT64, cast.location(), "cast");
  }
  BoundExpr arg = Bind(cast.arg(), context);
  if (arg.type == type) {
    arg.numeric = false;  // numeric::bigint of an integer value: the value
    return arg;
  }
  if (arg.type == pb::SCALAR_TYPE_UNSPECIFIED || (arg.int_literal && type == pb::FLOAT64)) {
    return Coerce(std::move(arg), type, cast.location(), "cast");
  }
  Fail(
      sqlstate::kFeatureNotSupported,
      "casts from " + TypeSqlName(arg.type) + " to " + TypeSqlName(type) + " are not supported yet",
      cast.location());
}

// ---- operators

BoundExpr Binder::BindOperator(const std::string& op, BoundExpr left, BoundExpr right,
                               int location) {
  static const std::map<std::string, pb::BinaryFunc> kArithmetic = {
      {"+", pb::ADD}, {"-", pb::SUB}, {"*", pb::MUL}, {"/", pb::DIV}, {"%", pb::MOD}};
  static const std::map<std::string, pb::BinaryFunc> kComparison = {
      {"=", pb::EQ},  {"<>", pb::NE}, {"!=", pb::NE}, {"<", pb::LT},
      {"<=", pb::LE}, {">", pb::GT},  {">=", pb::GE}};
  const auto arithmetic = kArithmetic.find(op);
  const auto comparison = kComparison.find(op);
  if (arithmetic == kArithmetic.end() && comparison == kComparison.end()) {
    Fail(sqlstate::kFeatureNotSupported, "operator " + op + " is not supported yet", location);
  }
  const bool is_arithmetic = arithmetic != kArithmetic.end();
  // An unknown operand takes the other's type (both unknown: text, for a comparison).
  if (left.type == pb::SCALAR_TYPE_UNSPECIFIED && right.type == pb::SCALAR_TYPE_UNSPECIFIED) {
    if (is_arithmetic) {
      Fail(sqlstate::kAmbiguousFunction, "operator is not unique: unknown " + op + " unknown",
           location);
    }
    left = Coerce(std::move(left), pb::STRING, location, "operand");
    right = Coerce(std::move(right), pb::STRING, location, "operand");
  } else if (left.type == pb::SCALAR_TYPE_UNSPECIFIED) {
    left = Coerce(std::move(left), right.type, location, "operand");
  } else if (right.type == pb::SCALAR_TYPE_UNSPECIFIED) {
    right = Coerce(std::move(right), left.type, location, "operand");
  }
  // PostgreSQL types an integer constant that fits 32 bits `integer`: its messages say so.
  auto shown = [](const BoundExpr& e) {
    if (e.int_literal && e.int_value >= INT32_MIN && e.int_value <= INT32_MAX)
      return std::string("integer");
    return TypeSqlName(e.type);
  };
  const std::string signature = shown(left) + " " + op + " " + shown(right);
  const bool numbers = [](pb::ScalarType t) {
    return t == pb::INT64 || t == pb::FLOAT64;
  }(left.type) && (right.type == pb::INT64 || right.type == pb::FLOAT64);
  if (left.type != right.type) {
    if (!numbers)
      Fail(sqlstate::kUndefinedFunction, "operator does not exist: " + signature, location);
    // bigint and double precision: exact only for an integer constant, converted here.
    if (left.type == pb::INT64 && left.int_literal) {
      left = Coerce(std::move(left), pb::FLOAT64, location, "operand");
    } else if (right.type == pb::INT64 && right.int_literal) {
      right = Coerce(std::move(right), pb::FLOAT64, location, "operand");
    } else {
      Fail(sqlstate::kFeatureNotSupported,
           "operator " + signature +
               " is not supported yet (it needs a cast of bigint to double precision)",
           location);
    }
  }
  BoundExpr out;
  if (is_arithmetic) {
    if (!numbers || (left.type == pb::FLOAT64 && arithmetic->second == pb::MOD)) {
      Fail(sqlstate::kUndefinedFunction, "operator does not exist: " + signature, location);
    }
    // numeric (a sum of bigint) stays numeric, exact for + - * %; its division is not integer
    // division.
    out.numeric = left.numeric || right.numeric;
    if (out.numeric && arithmetic->second == pb::DIV) {
      Fail(sqlstate::kFeatureNotSupported,
           "division of a sum of bigint is not supported yet: it is numeric in PostgreSQL (cast "
           "the sum to bigint for integer division)",
           location);
    }
    out.type = left.type;
    out.expr = Binary(arithmetic->second, std::move(left.expr), std::move(right.expr));
    return out;
  }
  out.type = pb::BOOL;
  out.expr = Binary(comparison->second, std::move(left.expr), std::move(right.expr));
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
        if (operand.type != pb::INT64 && operand.type != pb::FLOAT64) {
          Fail(sqlstate::kUndefinedFunction,
               "operator does not exist: " + op + " " + TypeSqlName(operand.type), location);
        }
        if (op == "+") return operand;
        BoundExpr out;
        out.type = operand.type;
        out.numeric = operand.numeric;
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
      const BoundExpr eq = BindOperator("=", left, right, location);
      BoundExpr out;
      out.type = left.type == pb::SCALAR_TYPE_UNSPECIFIED ? right.type : left.type;
      if (out.type == pb::SCALAR_TYPE_UNSPECIFIED) out.type = pb::STRING;
      out.numeric = left.numeric || right.numeric;
      out.expr = IfThenElse(eq.expr, NullExpr(out.type), eq.expr.binary().left());
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
    case pg_query::AEXPR_ILIKE:
      Fail(sqlstate::kFeatureNotSupported, "LIKE and ILIKE are not supported yet", location);
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
  std::vector<BoundExpr*> branches;
  for (auto& r : results) branches.push_back(&r);
  BoundExpr out;
  out.type = CommonType(branches, "CASE", expr.location());
  for (const auto& r : results) out.numeric |= r.numeric;
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
  if (call.funcname_size() == 1 && !call.agg_star() && !call.agg_distinct() &&
      call.agg_order_size() == 0 && !call.has_agg_filter() && !call.func_variadic()) {
    std::vector<BoundExpr> args;
    for (const auto& a : call.args()) args.push_back(Bind(a, context));
    std::string types;
    for (const auto& a : args) types += (types.empty() ? "" : ", ") + TypeSqlName(a.type);
    if (name == "abs" && args.size() == 1 &&
        (args[0].type == pb::INT64 || args[0].type == pb::FLOAT64)) {
      // |x|: -x below zero; x + 0.0 otherwise for a float, so -0 is 0 as fabs gives.
      const pb::ScalarExpr& x = args[0].expr;
      const bool is_float = args[0].type == pb::FLOAT64;
      BoundExpr out;
      out.type = args[0].type;
      out.numeric = args[0].numeric;
      out.expr = IfThenElse(Binary(pb::LT, x, is_float ? FloatExpr(0) : IntExpr(0)),
                            Unary(pb::NEGATE, x), is_float ? Binary(pb::ADD, x, FloatExpr(0)) : x);
      return out;
    }
    if (name == "mod" && args.size() == 2) {
      BoundExpr out = BindOperator("%", args[0], args[1], call.location());
      if (out.type != pb::INT64) {
        Fail(sqlstate::kUndefinedFunction, "function mod(" + types + ") does not exist",
             call.location());
      }
      return out;
    }
    if (name == "abs" || name == "mod") {
      Fail(sqlstate::kUndefinedFunction, "function " + name + "(" + types + ") does not exist",
           call.location());
    }
  }
  Fail(sqlstate::kFeatureNotSupported, "function " + name + " is not supported yet",
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
    const pb::ScalarType t = args[0].type;
    const std::string signature = name + "(" + TypeSqlName(t) + ")";
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
    agg.arg = std::move(args[0].expr);
    // PostgreSQL: sum(bigint) is numeric; sum, min and max of a numeric are numeric.
    agg.numeric = (name == "sum" && t == pb::INT64) ||
                  (args[0].numeric && (name == "sum" || name == "min" || name == "max"));
    if (name == "count") {
      agg.func = call.agg_distinct() ? pb::COUNT_DISTINCT : pb::COUNT_NON_NULL;
      agg.type = pb::INT64;
    } else if (name == "sum") {
      if (t != pb::INT64 && t != pb::FLOAT64) no_such();
      no_distinct();
      agg.func = pb::SUM;
      agg.type = t;
    } else if (name == "min" || name == "max") {
      if (t == pb::BOOL) no_such();
      agg.func = name == "min" ? pb::MIN : pb::MAX;
      agg.type = t;
    } else if (name == "avg") {
      if (t == pb::INT64) {
        Fail(sqlstate::kFeatureNotSupported,
             "avg(bigint) is not supported yet: its result is numeric", call.location());
      }
      if (t != pb::FLOAT64) no_such();
      no_distinct();
      agg.func = pb::AVG;
      agg.type = pb::FLOAT64;
    } else {  // bool_or, bool_and, every
      if (t != pb::BOOL) no_such();
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
  out.numeric = agg.numeric;
  out.expr = ColumnExpr(static_cast<std::uint32_t>(aggregation.group.size() + index));
  return out;
}

}  // namespace tandem::frontend::plan
