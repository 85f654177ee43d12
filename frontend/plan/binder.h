// The binder's state and its two halves: scalar expressions (expr_binder.cc: names → columns,
// PostgreSQL's types and operators → ScalarExpr) and relations (query_binder.cc: FROM, joins,
// WHERE, GROUP BY, set operations, subqueries → Plan). Internal to tandem_sql_plan: PlanQuery
// (planner.cc) is its only caller.
//
// Errors: a refusal is thrown as a PlanFailure inside this library and caught by PlanQuery, which
// returns it as a SqlError; no exception leaves the library. Recursion: every recursive call of
// the binder goes through a DepthGuard (kMaxBindDepth → 54001), so no tree, however deep, runs
// the stack out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "frontend/catalog/objects.h"
#include "frontend/catalog/sql_type.h"
#include "frontend/plan/planner.h"
#include "frontend/plan/type_rules.h"
#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"

namespace tandem::frontend::plan {

namespace pb = ::tandem::protocol;

// How deep the binder recurses (expressions and relations together) before refusing with 54001.
inline constexpr int kMaxBindDepth = 400;

// How deep ContainsAggregate walks a tree (a tree is at most sql::kMaxTreeDepth messages deep).
inline constexpr int kMaxWalkDepth = 4096;

struct PlanFailure {
  SqlError error;
};

// A column a name in a statement can stand for.
struct ScopeColumn {
  std::string table;  // the range's name (its alias) that qualifies it; "" for none
  std::string name;   // "" for a column no name reaches (the one-row collection's)
  pb::ScalarType type = pb::SCALAR_TYPE_UNSPECIFIED;
  // A side of a JOIN … USING column: reached only qualified (unqualified, the merged column).
  bool only_qualified = false;
  // A select list's bare NULL (text so far): a set operation types it from its other branch.
  bool untyped_null = false;
  TypeMods mods;  // numeric(p,s), varchar(n), char(n): a column's own, kept through references
};

// A bound relation: its plan and what names its columns. Column i of the plan is columns[i].
struct Relation {
  pb::Plan plan;
  std::vector<ScopeColumn> columns;
  std::vector<std::uint32_t> star;  // `*`'s columns, in order
};

// A bound scalar expression with PostgreSQL's view of its type.
struct BoundExpr {
  pb::ScalarExpr expr;
  // SCALAR_TYPE_UNSPECIFIED: PostgreSQL's `unknown` — a string constant or NULL whose type the
  // context decides (Coerce); `literal` then holds the constant.
  pb::ScalarType type = pb::SCALAR_TYPE_UNSPECIFIED;
  std::optional<std::string> literal;  // an unknown string constant's text (none: NULL)
  bool int_literal = false;            // an integer constant (exactly convertible to float8)
  std::int64_t int_value = 0;
  TypeMods mods;  // the modifiers PostgreSQL keeps (a column's, a cast's): RowDescription's typmod
  // An unknown constant written in the statement's own text (not a view's): its location, the key
  // of UnknownTypes (planner.h). -1 otherwise.
  int unknown_location = -1;
};

// The aggregates of an aggregating SELECT, collected while its targets and HAVING are bound.
struct AggregateCall {
  pb::AggregateFunc func = pb::AGGREGATE_FUNC_UNSPECIFIED;
  pb::ScalarExpr arg;  // over the input row; unused for COUNT(*)
  pb::ScalarType type = pb::SCALAR_TYPE_UNSPECIFIED;
  TypeMods mods;    // max(character): character
  std::string key;  // func + the argument, serialised: equal calls are computed once
};

struct Aggregation {
  std::vector<BoundExpr> group;         // over the input row
  std::vector<std::string> group_keys;  // their serialisations
  std::vector<AggregateCall> calls;
};

// Where an expression is bound: over which columns, and what it may contain.
struct ExprContext {
  const Relation* input = nullptr;
  // A correlated subquery's enclosing row: its columns are numbered after the input's. Set only
  // where correlation is planned (a subquery's WHERE); `used_outer` records that it was used.
  const Relation* outer = nullptr;
  bool* used_outer = nullptr;
  // Set: the expression is over the aggregated row (group columns, then aggregates) and
  // aggregate calls are collected here; unset: aggregates are refused in `clause`.
  Aggregation* aggregation = nullptr;
  const char* clause = "this context";  // "WHERE", "JOIN conditions" …: for error messages
  // The values of the subqueries in the expression, computed as columns of `input`.
  const std::map<const pg_query::SubLink*, BoundExpr>* subqueries = nullptr;
};

// CTEs visible at a point: each WITH adds a frame per CTE (a CTE sees those before it).
struct CteFrame {
  std::shared_ptr<const CteFrame> parent;
  std::string name;
  const pg_query::Node* query = nullptr;  // into the statement's tree
  std::vector<std::string> column_names;  // WITH name(a, b) AS …
  std::string_view sql;                   // the text its locations are into ("" in a view)
};
using CteScope = std::shared_ptr<const CteFrame>;

// A planned query before its top-level finishing: columns [0, visible) are the output, the
// rest are hidden ORDER BY keys.
struct OrderedRelation {
  Relation relation;
  std::size_t visible = 0;
  std::vector<std::string> names;  // the output columns' names
  std::vector<pb::ColumnOrder> order;
  std::optional<std::uint64_t> limit;
  std::uint64_t offset = 0;
};

// A subquery of EXISTS or IN as rows of keys — [correlation keys…, the IN value] — and the
// expressions over the outer relation they are compared with (an uncorrelated EXISTS: a constant
// on both sides).
struct SubqueryKeys {
  std::vector<pb::ScalarExpr> outer_keys;  // over the outer relation
  pb::Plan keys_plan;                      // the subquery's keys, not yet distinct
  std::size_t correlation = 0;             // how many of the keys are correlation keys
  bool in = false;                         // the last key is IN's value
};

class Binder {
 public:
  Binder(const CatalogReader& catalog, std::string_view sql)
      : catalog_(catalog), sql_(sql), text_(sql) {}

  // Where set, each unknown constant of the statement's text that is read as a type is recorded
  // there (planner.h's UnknownTypes).
  void set_unknown_types(UnknownTypes* types) { unknown_types_ = types; }
  // `e`, when an unknown constant of the statement's text, is read as `type` with `mods` (the
  // first reading of its location counts).
  void RecordUnknownType(const BoundExpr& e, pb::ScalarType type, const TypeMods& mods) {
    if (unknown_types_ != nullptr && e.unknown_location >= 0 &&
        e.type == pb::SCALAR_TYPE_UNSPECIFIED) {
      unknown_types_->emplace(e.unknown_location, CatalogColumn("", type, true, mods));
    }
  }

  // The whole query, finished for the top level or (nested) with its LIMIT as a TopK.
  OrderedRelation BindQuery(const pg_query::Node& query, const CteScope& ctes);
  Relation BindNested(const pg_query::Node& query, const CteScope& ctes,
                      std::vector<std::string>* names);
  Relation BindNestedSelect(const pg_query::SelectStmt& select, const CteScope& ctes,
                            std::vector<std::string>* names);

  // A plan of `r`'s column types with no rows that reads nothing of `r` (LIMIT 0: no data error
  // of `r`'s inputs can reach it, as PostgreSQL never runs such a query's input).
  pb::Plan NoRows(const Relation& r);

  const std::vector<pb::IndexImport>& imports() const { return imports_; }
  const std::vector<std::string>& import_objects() const { return import_objects_; }
  // The schema of every collection the plans Get (for plan typing).
  pb::Schema ImportSchema(const std::string& on) const;

  // ---- relations a statement is built from (query_binder.cc; INSERT/UPDATE/DELETE use them too)
  // The one row of kOneRowObject (no named columns), or 0A000 without it in the catalog.
  Relation OneRow(int location);
  // `object`'s rows through its default index, imported once however often it is read; its
  // columns qualified by its name.
  Relation ReadObject(const CatalogObject& object, int location);
  // `input` kept where `where` holds (subqueries in it planned as semi/anti-joins and marks);
  // its columns unchanged.
  Relation ApplyWhere(Relation input, const pg_query::Node& where, const CteScope& ctes);
  // `input` with a mark for every EXISTS/IN/scalar subquery in `node` (not inside another
  // subquery), recorded in *marks: the columns of `input` stay first.
  Relation AddSubqueryMarks(Relation input, const pg_query::Node& node, const CteScope& ctes,
                            std::map<const pg_query::SubLink*, BoundExpr>* marks);

  // ---- expressions (expr_binder.cc)
  BoundExpr Bind(const pg_query::Node& node, const ExprContext& context);
  // `node` bound and coerced to boolean: WHERE, HAVING, ON.
  pb::ScalarExpr BindCondition(const pg_query::Node& node, const ExprContext& context);
  // `e` as a value of `type` where PostgreSQL converts implicitly (an unknown constant parsed, an
  // integer converted to a wider number …), or 42804 "`what` must be type …, not type …".
  BoundExpr Coerce(BoundExpr e, pb::ScalarType type, int location, const std::string& what);
  // `e` as a value of `type` with `mods` in `context` (a Cast where the types differ; constants
  // converted here where exact), or PostgreSQL's error: 42846 "cannot cast type x to y" for an
  // explicit cast, 42804 with `what` otherwise.
  BoundExpr CoerceTo(BoundExpr e, pb::ScalarType type, const TypeMods& mods, CastContext context,
                     int location, const std::string& what);
  // An unknown constant left at the output as text, as PostgreSQL resolves it.
  BoundExpr Resolve(BoundExpr e, int location);
  // PostgreSQL's name for a target without an alias: "?column?", the column's, the function's.
  static std::string FigureColumnName(const pg_query::Node& node);
  bool ContainsAggregate(const pg_query::Node& node, int depth = 0) const;

  // 54001 for a CASE, COALESCE, GREATEST or LEAST of more arguments than a plan can nest.
  void CheckChain(int arguments, const char* construct, int location) const;

  // ---- errors
  [[noreturn]] void Fail(const char* sqlstate, std::string message, int location = -1) const;
  // A constant that is no value of its type (base/'s input functions' data error): its words
  // with PostgreSQL's SQLSTATE for them (sqlstate::DataErrorState).
  [[noreturn]] void DataFail(const Status& status, int location) const;
  int Position(int location) const;

  // Recursion bound, counted across expressions and relations.
  class DepthGuard {
   public:
    explicit DepthGuard(Binder* binder);
    ~DepthGuard() { --binder_->depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Binder* binder_;
  };

 private:
  // ---- relations (query_binder.cc)
  OrderedRelation BindSelect(const pg_query::SelectStmt& select, const CteScope& ctes);
  OrderedRelation BindSimpleSelect(const pg_query::SelectStmt& select, const CteScope& ctes);
  OrderedRelation BindSetOperation(const pg_query::SelectStmt& select, const CteScope& ctes);
  OrderedRelation BindValues(const pg_query::SelectStmt& select);
  // ORDER BY of a set operation or VALUES: output columns by name or position only.
  void BindOutputOrder(const pg_query::SelectStmt& select, OrderedRelation* out);
  void BindLimit(const pg_query::SelectStmt& select, OrderedRelation* out);
  Relation BindFrom(const google::protobuf::RepeatedPtrField<pg_query::Node>& from,
                    const CteScope& ctes, int location);
  Relation BindFromItem(const pg_query::Node& item, const CteScope& ctes);
  Relation BindRangeVar(const pg_query::RangeVar& range, const CteScope& ctes);
  Relation BindJoin(const pg_query::JoinExpr& join, const CteScope& ctes);
  Relation CrossJoin(Relation left, Relation right, int location);
  Relation ApplySubqueryConjunct(Relation input, const pg_query::SubLink& link, bool negated,
                                 const CteScope& ctes);
  SubqueryKeys BindSubqueryKeys(const Relation& input, const pg_query::SubLink& link,
                                const CteScope& ctes);
  // The conditions of subquery `sub`'s WHERE over `from`: its own (`local`) and its correlation
  // with `outer` (`inner = outer` equalities: the keys); any other reading `outer` is refused.
  // Subqueries in that WHERE are planned over `from` (semi/anti-joins and marks: *from grows).
  void SplitCorrelated(Relation* from, const Relation& outer, const pg_query::SelectStmt& sub,
                       const CteScope& ctes, std::vector<pb::ScalarExpr>* local,
                       std::vector<pb::ScalarExpr>* inner_keys,
                       std::vector<pb::ScalarExpr>* outer_keys);
  // A scalar subquery `(SELECT …)` as columns appended to `input` and its value over them: one
  // that returns at most one row (an aggregate without GROUP BY, or LIMIT 1), uncorrelated or
  // correlated by equalities.
  Relation AddScalarSubquery(Relation input, const pg_query::SubLink& link, const CteScope& ctes,
                             BoundExpr* value);
  // The Reduce of `aggregation` over `input` (`arity` columns): its group keys, then its
  // aggregates.
  pb::Plan BuildReduce(pb::Plan input, std::size_t arity, const std::vector<pb::ScalarExpr>& group,
                       const std::vector<AggregateCall>& calls);
  // `input` with columns appended from which `*value` (over the result) is the subquery's
  // EXISTS or IN, with SQL's three values: a subquery anywhere in a WHERE or a select list.
  Relation AddSubqueryMark(Relation input, const pg_query::SubLink& link, const CteScope& ctes,
                           BoundExpr* value);
  Relation FinishNested(OrderedRelation ordered);
  void CheckDistinctTables(const Relation& left, const Relation& right, int location) const;
  // 54001 when `plan` is over kMaxPlanBytes.
  void CheckSize(const pb::Plan& plan) const;

  // ---- expressions (expr_binder.cc)
  BoundExpr BindColumnRef(const pg_query::ColumnRef& ref, const ExprContext& context);
  BoundExpr BindConst(const pg_query::A_Const& constant);
  BoundExpr BindAExpr(const pg_query::A_Expr& expr, const ExprContext& context);
  // `left op right` with PostgreSQL's operator resolution (type_rules.h); *converted_left: the
  // left operand as the operator's declared type (character with its trailing blanks, which the
  // comparison itself trims).
  BoundExpr BindOperator(const std::string& op, BoundExpr left, BoundExpr right, int location,
                         BoundExpr* converted_left = nullptr);
  // A text argument of a string function: text as it is, character without its trailing blanks
  // (PostgreSQL's cast of bpchar to text), an unknown constant as text; else nothing.
  std::optional<pb::ScalarExpr> AsText(const BoundExpr& e, int location);
  BoundExpr BindFuncCall(const pg_query::FuncCall& call, const ExprContext& context);
  BoundExpr BindAggregate(const pg_query::FuncCall& call, const std::string& name,
                          const ExprContext& context);
  BoundExpr BindCase(const pg_query::CaseExpr& expr, const ExprContext& context);
  BoundExpr BindTypeCast(const pg_query::TypeCast& cast, const ExprContext& context);
  BoundExpr BindBool(const pg_query::BoolExpr& expr, const ExprContext& context);
  BoundExpr BindGrouped(const pg_query::Node& node, const ExprContext& context);
  BoundExpr BindNode(const pg_query::Node& node, const ExprContext& context);
  // Branches of CASE/COALESCE/NULLIF and set operations: one type for all, as PostgreSQL's
  // select_common_type (type_rules.h: unknowns take the others' type), each branch converted to it;
  // *mods: the branches' modifiers when they all share them.
  pb::ScalarType CommonType(const std::vector<BoundExpr*>& branches, const char* construct,
                            int location, TypeMods* mods = nullptr);

  const CatalogReader& catalog_;
  std::string_view sql_;   // the statement's text
  std::string_view text_;  // the text the node locations being bound are into ("" in a view)
  int depth_ = 0;
  int view_depth_ = 0;
  int relations_bound_ = 0;  // FROM items bound so far (kMaxBoundRelations)
  std::vector<pb::IndexImport> imports_;
  std::vector<std::string> import_objects_;
  UnknownTypes* unknown_types_ = nullptr;
};

// The byte offset a node's own `location` gives (-1: none), and its kind as PostgreSQL names it.
int NodeLocation(const pg_query::Node& node);
std::string NodeKindName(const pg_query::Node& node);

// ---- plan construction (plan_build.cc): small pure helpers

pb::ScalarExpr ColumnExpr(std::uint32_t column);
pb::ScalarExpr NullExpr(pb::ScalarType type);
pb::ScalarExpr IntExpr(std::int64_t value, pb::ScalarType type = pb::INT64);  // an integer type
pb::ScalarExpr NumericExpr(const std::string& text);  // PostgreSQL's text form: "-12.50"
// `expr` as a value of `type` (ipc/tandem.proto's Cast: PostgreSQL's cast and its errors).
pb::ScalarExpr CastExpr(pb::ScalarExpr expr, pb::ScalarType type, const TypeMods& mods = {});
pb::ScalarExpr CallExpr(pb::Func func, std::vector<pb::ScalarExpr> args);
// A value of `type` that is not null (0, false, "", the epoch …): null-safe keys' stand-in.
pb::ScalarExpr ZeroExpr(pb::ScalarType type);
pb::ScalarExpr BoolExpr(bool value);
pb::ScalarExpr FloatExpr(double value);
pb::ScalarExpr StringExpr(const std::string& value);
pb::ScalarExpr Unary(pb::UnaryFunc func, pb::ScalarExpr operand);
pb::ScalarExpr Binary(pb::BinaryFunc func, pb::ScalarExpr left, pb::ScalarExpr right);
pb::ScalarExpr IfThenElse(pb::ScalarExpr cond, pb::ScalarExpr then, pb::ScalarExpr els);
// AND or OR of `operands` (at least one) as a balanced tree: log2(n) deep, not n (an IN list of
// thousands stays within the plan's nesting); the same three-valued result as a chain.
pb::ScalarExpr Balanced(pb::BinaryFunc func, std::vector<pb::ScalarExpr> operands);
// Map `map`, keep rows where every predicate holds, project (empty: every column).
pb::Plan MfpPlan(pb::Plan input, std::vector<pb::ScalarExpr> map,
                 std::vector<pb::ScalarExpr> predicates, std::vector<std::uint32_t> projection);
pb::Plan UnionPlan(std::vector<pb::Plan> inputs);
pb::Plan NegatePlan(pb::Plan input);
pb::Plan ThresholdPlan(pb::Plan input);
pb::Plan DistinctPlan(pb::Plan input);
// An equi-join of `left` (arity left_arity) and `right` on key expressions over each side (none:
// every row matches — a constant key on both sides). Output: the left columns, then the right,
// kept where every one of `predicates` (over them) holds.
pb::Plan EquiJoin(pb::Plan left, std::size_t left_arity,
                  const std::vector<pb::ScalarExpr>& left_keys, pb::Plan right,
                  std::size_t right_arity, const std::vector<pb::ScalarExpr>& right_keys,
                  pb::JoinKind kind, const std::vector<pb::ScalarExpr>& predicates = {});
std::vector<std::uint32_t> Iota(std::size_t from, std::size_t to);  // [from, to)
// The rows of `rows` (columns of `types`) equal to no row of `present` (the same columns; equal
// as rows: 1.5 and 1.50 are not), nulls equal to nulls — a left join on null-safe keys,
// unmatched — with `append` (constants) after their columns, then `projection` of [their columns,
// append].
pb::Plan RowsNotIn(pb::Plan rows, const std::vector<pb::ScalarType>& types, pb::Plan present,
                   std::vector<pb::ScalarExpr> append,
                   const std::vector<std::uint32_t>& projection);
// An outer join with any ON condition: the pairs whose keys are equal and `conditions` (over the
// left columns, then the right) hold; then every left row in no pair, with nulls on the right;
// `full`: every right row in no pair too, with nulls on the left. Exact for duplicates: equal
// rows are in pairs all or none.
pb::Plan GeneralOuterJoin(pb::Plan left, const std::vector<pb::ScalarType>& left_types,
                          const std::vector<pb::ScalarExpr>& left_keys, pb::Plan right,
                          const std::vector<pb::ScalarType>& right_types,
                          const std::vector<pb::ScalarExpr>& right_keys,
                          const std::vector<pb::ScalarExpr>& conditions, bool full);
// Columns an expression reads (every column reference, recursively; bounded by the expression's
// nesting, which the binder bounded).
void ColumnsRead(const pb::ScalarExpr& expr, std::vector<std::uint32_t>* out);
// `expr` with every column c read as map[c].
pb::ScalarExpr Renumber(const pb::ScalarExpr& expr, const std::vector<std::uint32_t>& map);
// `expr` (over [aggregates…]) with column j replaced by values[j].
pb::ScalarExpr Substitute(const pb::ScalarExpr& expr, const std::vector<pb::ScalarExpr>& values);
// An aggregate's value over no rows: 0 for the counts, null for the rest.
pb::ScalarExpr AggregateOverNothing(const AggregateCall& call);
// Protobuf messages nested in `plan`, expressions included.
int PlanNesting(const pb::Plan& plan);
// "bigint", "double precision", "text", "character varying", …: format_type without modifiers.
std::string TypeSqlName(pb::ScalarType type, const TypeMods& mods = {});

// ---- the replica's checks of a finished plan (planner.cc), for every statement planned

// `plan` over `imports` as the replica will check it: nothing (and its schema in *schema) when
// it type-checks with columns of `types`, nests at most kMaxPlanNesting and is at most
// kMaxPlanBytes; else 54001 for the bounds, XX000 (the planner's bug) for the rest.
std::optional<SqlError> CheckPlanned(const pb::Plan& plan,
                                     const std::vector<pb::IndexImport>& imports,
                                     const std::vector<pb::ScalarType>& types, pb::Schema* schema);

}  // namespace tandem::frontend::plan
