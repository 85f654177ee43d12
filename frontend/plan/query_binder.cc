// Relations: PostgreSQL's query nodes (SelectStmt, FROM items, joins, WHERE with subqueries,
// GROUP BY, set operations, VALUES) → Plan, with the names their columns answer to.
#include <algorithm>
#include <charconv>
#include <set>
#include <string>
#include <utility>

#include "frontend/plan/binder.h"
#include "frontend/sql/parse.h"

namespace tandem::frontend::plan {

namespace {

using Nodes = google::protobuf::RepeatedPtrField<pg_query::Node>;

void CollectSubLinks(const pg_query::Node& node, std::vector<const pg_query::SubLink*>* out,
                     int depth, Binder& binder);

std::vector<std::uint32_t> StarOf(std::size_t n) { return Iota(0, n); }

// Relation `r` renamed as FROM's `alias`: its qualifier and the first columns' names.
void ApplyAlias(Binder& binder, Relation* r, const std::string& name, const Nodes* colnames,
                int location) {
  if (colnames != nullptr) {
    std::size_t visible = 0;
    for (auto c : r->star) (void)c, ++visible;
    if (static_cast<std::size_t>(colnames->size()) > visible) {
      binder.Fail(sqlstate::kInvalidColumnReference,
                  "table \"" + name + "\" has " + std::to_string(visible) +
                      " columns available but " + std::to_string(colnames->size()) +
                      " columns specified",
                  location);
    }
    for (int i = 0; i < colnames->size(); ++i) {
      r->columns[r->star[static_cast<std::size_t>(i)]].name = colnames->Get(i).string().sval();
    }
  }
  for (auto& c : r->columns) {
    if (!c.name.empty() || !c.table.empty()) c.table = name;
  }
}

// The conjuncts of an AND tree, in order.
void Conjuncts(const pg_query::Node& node, std::vector<const pg_query::Node*>* out, int depth,
               Binder& binder) {
  if (depth > kMaxBindDepth)
    binder.Fail(sqlstate::kStatementTooComplex, "statement is too complex");
  if (node.has_bool_expr() && node.bool_expr().boolop() == pg_query::AND_EXPR) {
    for (const auto& a : node.bool_expr().args()) Conjuncts(a, out, depth + 1, binder);
    return;
  }
  out->push_back(&node);
}

bool ReadsOnly(const pb::ScalarExpr& e, std::uint32_t from, std::uint32_t to, bool* any) {
  std::vector<std::uint32_t> columns;
  ColumnsRead(e, &columns);
  *any = !columns.empty();
  for (auto c : columns) {
    if (c < from || c >= to) return false;
  }
  return true;
}

std::optional<std::uint64_t> LimitValue(Binder& binder, const pg_query::Node& node,
                                        const char* what, const char* state) {
  if (node.has_a_const() && !node.a_const().isnull()) {
    const auto& c = node.a_const();
    if (c.has_ival() ||
        (c.has_fval() && c.fval().fval().find_first_of(".eE") == std::string::npos)) {
      std::int64_t v = c.has_ival() ? c.ival().ival() : 0;
      if (c.has_fval()) {
        const std::string& text = c.fval().fval();
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size()) {
          binder.Fail(sqlstate::kNumericValueOutOfRange, "bigint out of range", c.location());
        }
      }
      if (v < 0) binder.Fail(state, std::string(what) + " must not be negative", c.location());
      return static_cast<std::uint64_t>(v);
    }
  }
  // A string constant or NULL of unknown type, or one cast (an extended protocol parameter is
  // one: sql/parameters.h): bigint, as PostgreSQL reads LIMIT's and OFFSET's.
  const bool constant =
      node.has_a_const() || (node.has_type_cast() && node.type_cast().arg().has_a_const());
  if (constant) {
    ExprContext context;
    context.clause = what;
    const BoundExpr e =
        binder.CoerceTo(binder.Bind(node, context), pb::INT64, {}, CastContext::kAssignment,
                        NodeLocation(node), std::string("argument of ") + what);
    if (e.expr.has_literal()) {
      const auto& value = e.expr.literal().value();
      if (value.has_null()) return std::nullopt;
      if (value.has_int64()) {
        if (value.int64() < 0) {
          binder.Fail(state, std::string(what) + " must not be negative", NodeLocation(node));
        }
        return static_cast<std::uint64_t>(value.int64());
      }
    }
  }
  binder.Fail(sqlstate::kFeatureNotSupported,
              std::string(what) + " other than an integer constant is not supported",
              NodeLocation(node));
}

}  // namespace

pb::Schema Binder::ImportSchema(const std::string& on) const {
  for (const auto& import : imports_) {
    if (import.on() == on) return import.schema();
  }
  return {};
}

// ---- queries

OrderedRelation Binder::BindQuery(const pg_query::Node& query, const CteScope& ctes) {
  DepthGuard guard(this);
  if (!query.has_select_stmt()) {
    Fail(sqlstate::kFeatureNotSupported, NodeKindName(query) + " is not a query",
         NodeLocation(query));
  }
  return BindSelect(query.select_stmt(), ctes);
}

Relation Binder::BindNested(const pg_query::Node& query, const CteScope& ctes,
                            std::vector<std::string>* names) {
  OrderedRelation ordered = BindQuery(query, ctes);
  if (names != nullptr) *names = ordered.names;
  return FinishNested(std::move(ordered));
}

Relation Binder::BindNestedSelect(const pg_query::SelectStmt& select, const CteScope& ctes,
                                  std::vector<std::string>* names) {
  DepthGuard guard(this);
  OrderedRelation ordered = BindSelect(select, ctes);
  if (names != nullptr) *names = ordered.names;
  return FinishNested(std::move(ordered));
}

void Binder::CheckSize(const pb::Plan& plan) const {
  if (plan.ByteSizeLong() > kMaxPlanBytes) {
    Fail(sqlstate::kStatementTooComplex, "statement is too complex: its plan would be over " +
                                             std::to_string(kMaxPlanBytes) + " bytes");
  }
  // A relation is only ever nested deeper into the query's plan: refused as soon as it is too
  // deep, not after a thousand joins more.
  const int nesting = PlanNesting(plan);
  if (nesting > kMaxPlanNesting) {
    Fail(sqlstate::kStatementTooComplex, "statement is too complex: its plan nests " +
                                             std::to_string(nesting) + " levels (at most " +
                                             std::to_string(kMaxPlanNesting) + ")");
  }
}

Relation Binder::FinishNested(OrderedRelation ordered) {
  CheckSize(ordered.relation.plan);
  Relation r = std::move(ordered.relation);
  if (ordered.limit.has_value() && *ordered.limit == 0) {
    r.plan = NoRows(r);
  } else if (ordered.limit.has_value() || ordered.offset > 0) {
    pb::Plan plan;
    auto* top_k = plan.mutable_top_k();
    *top_k->mutable_input() = std::move(r.plan);
    for (const auto& o : ordered.order) *top_k->add_order_by() = o;
    if (ordered.limit.has_value()) top_k->set_limit(*ordered.limit);
    top_k->set_offset(ordered.offset);
    r.plan = std::move(plan);
  }
  if (r.columns.size() > ordered.visible) {
    r.plan = MfpPlan(std::move(r.plan), {}, {}, Iota(0, ordered.visible));
    r.columns.resize(ordered.visible);
  }
  for (std::size_t i = 0; i < r.columns.size(); ++i) {
    r.columns[i].table.clear();
    r.columns[i].name = ordered.names[i];
    r.columns[i].only_qualified = false;
  }
  r.star = StarOf(r.columns.size());
  return r;
}

OrderedRelation Binder::BindSelect(const pg_query::SelectStmt& select, const CteScope& ctes) {
  CteScope scope = ctes;
  if (select.has_with_clause()) {
    const auto& with = select.with_clause();
    if (with.recursive()) {
      Fail(sqlstate::kFeatureNotSupported, "WITH RECURSIVE is not supported", with.location());
    }
    std::set<std::string> names;
    for (const auto& node : with.ctes()) {
      const auto& cte = node.common_table_expr();
      if (!names.insert(cte.ctename()).second) {
        Fail(sqlstate::kDuplicateAlias,
             "WITH query name \"" + cte.ctename() + "\" specified more than once", cte.location());
      }
      if (cte.has_search_clause() || cte.has_cycle_clause()) {
        Fail(sqlstate::kFeatureNotSupported, "SEARCH and CYCLE are not supported", cte.location());
      }
      if (!cte.ctequery().has_select_stmt()) {
        Fail(sqlstate::kFeatureNotSupported, "data-modifying statements in WITH are not supported",
             cte.location());
      }
      auto frame = std::make_shared<CteFrame>();
      frame->parent = scope;
      frame->name = cte.ctename();
      frame->query = &cte.ctequery();
      for (const auto& c : cte.aliascolnames()) frame->column_names.push_back(c.string().sval());
      frame->sql = text_;
      scope = frame;
    }
  }
  if (select.has_into_clause()) {
    Fail(sqlstate::kFeatureNotSupported, "SELECT INTO is not supported");
  }
  if (select.locking_clause_size() > 0) {
    Fail(sqlstate::kFeatureNotSupported, "FOR UPDATE/SHARE is not supported",
         NodeLocation(select.locking_clause(0)));
  }
  if (select.window_clause_size() > 0) {
    Fail(sqlstate::kFeatureNotSupported, "WINDOW is not supported");
  }
  if (select.limit_option() == pg_query::LIMIT_OPTION_WITH_TIES) {
    Fail(sqlstate::kFeatureNotSupported, "FETCH … WITH TIES is not supported");
  }
  if (select.op() != pg_query::SETOP_NONE && select.op() != pg_query::SET_OPERATION_UNDEFINED) {
    return BindSetOperation(select, scope);
  }
  if (select.values_lists_size() > 0) return BindValues(select);
  return BindSimpleSelect(select, scope);
}

void Binder::BindLimit(const pg_query::SelectStmt& select, OrderedRelation* out) {
  if (select.has_limit_count()) {
    out->limit = LimitValue(*this, select.limit_count(), "LIMIT", "2201W");
  }
  if (select.has_limit_offset()) {
    out->offset = LimitValue(*this, select.limit_offset(), "OFFSET", "2201X").value_or(0);
  }
}

namespace {

pb::ColumnOrder SortOrder(Binder& binder, const pg_query::SortBy& sort, std::uint32_t column) {
  if (sort.sortby_dir() == pg_query::SORTBY_USING) {
    binder.Fail(sqlstate::kFeatureNotSupported, "ORDER BY … USING is not supported",
                sort.location());
  }
  pb::ColumnOrder order;
  order.set_column(column);
  order.set_desc(sort.sortby_dir() == pg_query::SORTBY_DESC);
  // PostgreSQL: nulls sort as larger than every value (last ascending, first descending).
  bool nulls_last = !order.desc();
  if (sort.sortby_nulls() == pg_query::SORTBY_NULLS_FIRST) nulls_last = false;
  if (sort.sortby_nulls() == pg_query::SORTBY_NULLS_LAST) nulls_last = true;
  order.set_nulls_last(nulls_last);
  return order;
}

// ORDER BY n or ORDER BY name of an output column; nullopt when `node` is neither.
std::optional<std::uint32_t> OutputColumn(Binder& binder, const pg_query::Node& node,
                                          const std::vector<std::string>& names) {
  if (node.has_a_const() && node.a_const().has_ival()) {
    const int position = node.a_const().ival().ival();
    if (position < 1 || static_cast<std::size_t>(position) > names.size()) {
      binder.Fail(sqlstate::kInvalidColumnReference,
                  "ORDER BY position " + std::to_string(position) + " is not in select list",
                  node.a_const().location());
    }
    return static_cast<std::uint32_t>(position - 1);
  }
  if (node.has_column_ref() && node.column_ref().fields_size() == 1 &&
      node.column_ref().fields(0).has_string()) {
    const std::string& name = node.column_ref().fields(0).string().sval();
    std::optional<std::uint32_t> found;
    for (std::uint32_t i = 0; i < names.size(); ++i) {
      if (names[i] != name) continue;
      if (found.has_value()) {
        binder.Fail(sqlstate::kAmbiguousColumn, "ORDER BY \"" + name + "\" is ambiguous",
                    node.column_ref().location());
      }
      found = i;
    }
    return found;
  }
  return std::nullopt;
}

}  // namespace

void Binder::BindOutputOrder(const pg_query::SelectStmt& select, OrderedRelation* out) {
  for (const auto& s : select.sort_clause()) {
    const auto& sort = s.sort_by();
    const auto column = OutputColumn(*this, sort.node(), out->names);
    if (!column.has_value()) {
      Fail(sqlstate::kFeatureNotSupported,
           "ORDER BY of UNION/INTERSECT/EXCEPT/VALUES by anything but an output column's name "
           "or position is not supported",
           NodeLocation(sort.node()));
    }
    out->order.push_back(SortOrder(*this, sort, *column));
  }
  BindLimit(select, out);
}

OrderedRelation Binder::BindSimpleSelect(const pg_query::SelectStmt& select, const CteScope& ctes) {
  bool distinct = false;
  for (const auto& d : select.distinct_clause()) {
    if (d.node_case() != pg_query::Node::NODE_NOT_SET) {
      Fail(sqlstate::kFeatureNotSupported, "SELECT DISTINCT ON is not supported yet",
           NodeLocation(d));
    }
    distinct = true;
  }
  if (select.group_distinct()) {
    Fail(sqlstate::kFeatureNotSupported, "GROUP BY DISTINCT is not supported");
  }
  const bool no_from = select.from_clause_size() == 0;
  Relation from = no_from ? OneRow(-1) : BindFrom(select.from_clause(), ctes, -1);
  if (select.has_where_clause()) from = ApplyWhere(std::move(from), select.where_clause(), ctes);

  bool aggregating = select.group_clause_size() > 0 || select.has_having_clause();
  for (const auto& t : select.target_list()) aggregating |= ContainsAggregate(t);
  for (const auto& s : select.sort_clause()) aggregating |= ContainsAggregate(s);

  // Subqueries in the select list (of a query without aggregates): marks on the input.
  std::map<const pg_query::SubLink*, BoundExpr> target_marks;
  if (!aggregating) {
    for (const auto& t : select.target_list()) {
      from = AddSubqueryMarks(std::move(from), t.res_target().val(), ctes, &target_marks);
    }
  }
  ExprContext plain;
  plain.input = &from;
  plain.clause = "SELECT";
  plain.subqueries = &target_marks;
  Aggregation aggregation;
  ExprContext context = plain;
  if (aggregating) {
    ExprContext group_context = plain;
    group_context.clause = "GROUP BY";
    for (const auto& g : select.group_clause()) {
      if (g.has_grouping_set()) {
        Fail(sqlstate::kFeatureNotSupported, "GROUPING SETS, ROLLUP and CUBE are not supported",
             NodeLocation(g));
      }
      const pg_query::Node* node = &g;
      // GROUP BY n: the n-th target's expression; GROUP BY name: an input column, else a
      // target's alias (PostgreSQL's order).
      if (g.has_a_const() && g.a_const().has_ival()) {
        const int position = g.a_const().ival().ival();
        if (position < 1 || position > select.target_list_size()) {
          Fail(sqlstate::kInvalidColumnReference,
               "GROUP BY position " + std::to_string(position) + " is not in select list",
               g.a_const().location());
        }
        node = &select.target_list(position - 1).res_target().val();
      } else if (g.has_column_ref() && g.column_ref().fields_size() == 1 &&
                 g.column_ref().fields(0).has_string()) {
        const std::string& name = g.column_ref().fields(0).string().sval();
        bool in_input = false;
        for (const auto& c : from.columns) in_input |= (c.name == name && !c.only_qualified);
        if (!in_input) {
          for (const auto& t : select.target_list()) {
            if (t.res_target().name() == name) node = &t.res_target().val();
          }
        }
      }
      BoundExpr e = Resolve(Bind(*node, group_context), NodeLocation(*node));
      aggregation.group_keys.push_back(e.expr.SerializeAsString());
      aggregation.group.push_back(std::move(e));
    }
    context.aggregation = &aggregation;
  }

  // Targets.
  OrderedRelation out;
  std::vector<BoundExpr> targets;
  std::vector<bool> untyped;  // a bare NULL: a set operation may type it from its other branch
  std::vector<int> locations;
  for (const auto& t : select.target_list()) {
    const auto& target = t.res_target();
    if (target.indirection_size() > 0) {
      Fail(sqlstate::kFeatureNotSupported, "subscripts and field selection are not supported",
           target.location());
    }
    const auto& val = target.val();
    if (val.has_column_ref() && val.column_ref().fields_size() > 0 &&
        val.column_ref().fields().rbegin()->has_a_star()) {
      const auto& fields = val.column_ref().fields();
      std::vector<std::uint32_t> columns;
      if (fields.size() == 1) {
        if (no_from) {
          Fail(sqlstate::kSyntaxError, "SELECT * with no tables specified is not valid",
               val.column_ref().location());
        }
        columns = from.star;
      } else if (fields.size() == 2) {
        const std::string& table = fields.begin()->string().sval();
        bool seen = false;
        for (std::uint32_t i = 0; i < from.columns.size(); ++i) {
          if (from.columns[i].table == table && !from.columns[i].name.empty()) {
            columns.push_back(i);
            seen = true;
          }
        }
        if (!seen) {
          Fail(sqlstate::kUndefinedTable, "missing FROM-clause entry for table \"" + table + "\"",
               val.column_ref().location());
        }
      } else {
        Fail(sqlstate::kFeatureNotSupported, "schema-qualified * is not supported",
             val.column_ref().location());
      }
      for (auto c : columns) {
        BoundExpr e;
        e.expr = ColumnExpr(c);
        e.type = from.columns[c].type;
        e.mods = from.columns[c].mods;
        if (aggregating) {
          const std::string key = e.expr.SerializeAsString();
          auto it = std::find(aggregation.group_keys.begin(), aggregation.group_keys.end(), key);
          if (it == aggregation.group_keys.end()) {
            const auto& col = from.columns[c];
            Fail(sqlstate::kGroupingError,
                 "column \"" + (col.table.empty() ? col.name : col.table + "." + col.name) +
                     "\" must appear in the GROUP BY clause or be used in an aggregate function",
                 val.column_ref().location());
          }
          e.expr = ColumnExpr(static_cast<std::uint32_t>(it - aggregation.group_keys.begin()));
        }
        targets.push_back(std::move(e));
        untyped.push_back(false);
        out.names.push_back(from.columns[c].name);
        locations.push_back(val.column_ref().location());
      }
      continue;
    }
    BoundExpr bound = Bind(val, context);
    untyped.push_back(bound.type == pb::SCALAR_TYPE_UNSPECIFIED && !bound.literal.has_value());
    targets.push_back(Resolve(std::move(bound), target.location()));
    out.names.push_back(!target.name().empty() ? target.name() : FigureColumnName(val));
    locations.push_back(target.location());
  }
  if (targets.empty()) {
    Fail(sqlstate::kFeatureNotSupported, "a SELECT without output columns is not supported");
  }

  std::optional<pb::ScalarExpr> having;
  if (select.has_having_clause()) {
    ExprContext having_context = context;
    having_context.clause = "HAVING";
    having = BindCondition(select.having_clause(), having_context);
  }

  // ORDER BY: an output column (by position or name), else an expression over the input —
  // an output column when equal to one, else a hidden column after them.
  std::vector<BoundExpr> hidden;
  for (const auto& s : select.sort_clause()) {
    const auto& sort = s.sort_by();
    std::optional<std::uint32_t> column = OutputColumn(*this, sort.node(), out.names);
    if (!column.has_value()) {
      ExprContext order_context = context;
      order_context.clause = "ORDER BY";
      BoundExpr e = Resolve(Bind(sort.node(), order_context), NodeLocation(sort.node()));
      const std::string key = e.expr.SerializeAsString();
      for (std::uint32_t i = 0; i < targets.size() && !column; ++i) {
        if (targets[i].expr.SerializeAsString() == key) column = i;
      }
      for (std::uint32_t i = 0; i < hidden.size() && !column; ++i) {
        if (hidden[i].expr.SerializeAsString() == key) {
          column = static_cast<std::uint32_t>(targets.size() + i);
        }
      }
      if (!column.has_value()) {
        if (distinct) {
          Fail(sqlstate::kInvalidColumnReference,
               "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
               NodeLocation(sort.node()));
        }
        column = static_cast<std::uint32_t>(targets.size() + hidden.size());
        hidden.push_back(std::move(e));
      }
    }
    out.order.push_back(SortOrder(*this, sort, *column));
  }

  // The plan: the input (aggregated), HAVING, then the targets and hidden ORDER BY keys.
  pb::Plan input = std::move(from.plan);
  std::size_t input_arity = from.columns.size();
  if (aggregating) {
    std::vector<pb::ScalarExpr> group;
    for (const auto& g : aggregation.group) group.push_back(g.expr);
    input = BuildReduce(std::move(input), input_arity, group, aggregation.calls);
    input_arity = aggregation.group.size() + aggregation.calls.size();
    if (aggregation.group.empty()) {
      // Exactly one row over no rows: the Reduce's row, or else the aggregates' values over
      // nothing (count 0, the others null) — R ∪ D ∪ -(R mapped onto D's constant row).
      std::vector<pb::ScalarExpr> defaults;
      for (const auto& call : aggregation.calls) defaults.push_back(AggregateOverNothing(call));
      const std::size_t n = defaults.size();
      Relation one = OneRow(-1);
      pb::Plan d = MfpPlan(std::move(one.plan), defaults, {},
                           Iota(one.columns.size(), one.columns.size() + n));
      pb::Plan r_as_d = MfpPlan(input, defaults, {}, Iota(n, 2 * n));
      input = UnionPlan({std::move(input), std::move(d), NegatePlan(std::move(r_as_d))});
    }
  }
  if (having.has_value()) input = MfpPlan(std::move(input), {}, {*having}, {});
  {
    std::vector<pb::ScalarExpr> map;
    std::vector<std::uint32_t> projection;
    auto add = [&](const BoundExpr& e) {
      if (e.expr.kind_case() == pb::ScalarExpr::kColumn) {
        projection.push_back(e.expr.column());
      } else {
        projection.push_back(static_cast<std::uint32_t>(input_arity + map.size()));
        map.push_back(e.expr);
      }
    };
    for (const auto& t : targets) add(t);
    for (const auto& h : hidden) add(h);
    bool identity = map.empty() && projection.size() == input_arity;
    for (std::size_t i = 0; identity && i < projection.size(); ++i) identity = projection[i] == i;
    if (!identity) input = MfpPlan(std::move(input), std::move(map), {}, std::move(projection));
  }
  if (distinct) input = DistinctPlan(std::move(input));
  out.relation.plan = std::move(input);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    out.relation.columns.push_back(
        ScopeColumn{"", out.names[i], targets[i].type, false, untyped[i], targets[i].mods});
  }
  for (const auto& h : hidden)
    out.relation.columns.push_back(ScopeColumn{"", "", h.type, false, false, h.mods});
  out.relation.star = StarOf(targets.size());
  out.visible = targets.size();
  BindLimit(select, &out);
  return out;
}

pb::Plan Binder::BuildReduce(pb::Plan input, std::size_t arity,
                             const std::vector<pb::ScalarExpr>& group,
                             const std::vector<AggregateCall>& calls) {
  // Group keys and aggregate arguments as columns, then the Reduce.
  std::vector<pb::ScalarExpr> map;
  std::vector<std::uint32_t> projection;
  auto column_of = [&](const pb::ScalarExpr& e) {
    if (e.kind_case() == pb::ScalarExpr::kColumn) return e.column();
    map.push_back(e);
    return static_cast<std::uint32_t>(arity + map.size() - 1);
  };
  for (const auto& g : group) projection.push_back(column_of(g));
  pb::Plan reduce_plan;
  auto* reduce = reduce_plan.mutable_reduce();
  for (std::size_t i = 0; i < group.size(); ++i) {
    reduce->add_group_key(static_cast<std::uint32_t>(i));
  }
  for (const auto& call : calls) {
    auto* aggregate = reduce->add_aggregates();
    aggregate->set_func(call.func);
    if (call.func == pb::COUNT) {
      aggregate->set_column(0);
      continue;
    }
    aggregate->set_column(static_cast<std::uint32_t>(projection.size()));
    projection.push_back(column_of(call.arg));
  }
  if (projection.empty()) projection.push_back(0);  // COUNT(*) alone: any column
  *reduce->mutable_input() = MfpPlan(std::move(input), std::move(map), {}, std::move(projection));
  return reduce_plan;
}

OrderedRelation Binder::BindValues(const pg_query::SelectStmt& select) {
  std::vector<std::vector<BoundExpr>> rows;
  Relation one = OneRow(-1);
  ExprContext context;
  context.input = &one;
  context.clause = "VALUES";
  for (const auto& list : select.values_lists()) {
    std::vector<BoundExpr> row;
    for (const auto& item : list.list().items()) row.push_back(Bind(item, context));
    if (!rows.empty() && row.size() != rows[0].size()) {
      Fail(sqlstate::kSyntaxError, "VALUES lists must all be the same length",
           NodeLocation(list.list().items(0)));
    }
    rows.push_back(std::move(row));
  }
  OrderedRelation out;
  const std::size_t width = rows[0].size();
  for (std::size_t c = 0; c < width; ++c) {
    std::vector<BoundExpr*> column;
    for (auto& row : rows) column.push_back(&row[c]);
    TypeMods mods;
    const pb::ScalarType type = CommonType(column, "VALUES", -1, &mods);
    out.names.push_back("column" + std::to_string(c + 1));
    out.relation.columns.push_back(ScopeColumn{"", out.names.back(), type, false, false, mods});
  }
  std::vector<pb::Plan> inputs;
  for (auto& row : rows) {
    std::vector<pb::ScalarExpr> map;
    for (auto& e : row) map.push_back(std::move(e.expr));
    inputs.push_back(MfpPlan(one.plan, std::move(map), {},
                             Iota(one.columns.size(), one.columns.size() + width)));
  }
  out.relation.plan = inputs.size() == 1 ? std::move(inputs[0]) : UnionPlan(std::move(inputs));
  out.relation.star = StarOf(width);
  out.visible = width;
  BindOutputOrder(select, &out);
  return out;
}

OrderedRelation Binder::BindSetOperation(const pg_query::SelectStmt& select, const CteScope& ctes) {
  std::vector<std::string> names, right_names;
  Relation left = BindNestedSelect(select.larg(), ctes, &names);
  Relation right = BindNestedSelect(select.rarg(), ctes, &right_names);
  const char* op = select.op() == pg_query::SETOP_UNION       ? "UNION"
                   : select.op() == pg_query::SETOP_INTERSECT ? "INTERSECT"
                                                              : "EXCEPT";
  if (left.columns.size() != right.columns.size()) {
    Fail(sqlstate::kSyntaxError,
         std::string("each ") + op + " query must have the same number of columns");
  }
  // Each column's type is PostgreSQL's select_common_type of the two branches' (a bare NULL is
  // unknown and takes the other's); a branch whose column has another type is converted.
  auto convert = [this](Relation* side, std::size_t column, pb::ScalarType type,
                        const TypeMods& mods) {
    ScopeColumn& c = side->columns[column];
    if (c.type == type && c.mods == mods && !c.untyped_null) return;
    BoundExpr e;
    if (!c.untyped_null) {
      e.expr = ColumnExpr(static_cast<std::uint32_t>(column));
      e.type = c.type;
      e.mods = c.mods;
    }
    e = CoerceTo(std::move(e), type, mods, CastContext::kImplicit, -1, "column");
    const std::size_t arity = side->columns.size();
    std::vector<std::uint32_t> projection = Iota(0, arity);
    projection[column] = static_cast<std::uint32_t>(arity);
    side->plan = MfpPlan(std::move(side->plan), {std::move(e.expr)}, {}, std::move(projection));
    c.type = type;
    c.mods = mods;
    c.untyped_null = false;
  };
  for (std::size_t i = 0; i < left.columns.size(); ++i) {
    if (left.columns[i].untyped_null && right.columns[i].untyped_null) continue;
    BoundExpr l, r;
    for (auto [side, e] : {std::pair{&left, &l}, std::pair{&right, &r}}) {
      if (side->columns[i].untyped_null) continue;
      e->type = side->columns[i].type;
      e->mods = side->columns[i].mods;
      e->expr = ColumnExpr(static_cast<std::uint32_t>(i));
    }
    TypeMods mods;
    const pb::ScalarType type = CommonType({&l, &r}, op, -1, &mods);
    convert(&left, i, type, mods);
    convert(&right, i, type, mods);
  }
  pb::Plan a = std::move(left.plan), b = std::move(right.plan);
  pb::Plan plan;
  // Bag semantics with counts a and b of a row: UNION ALL a + b; EXCEPT ALL max(0, a - b);
  // INTERSECT ALL min(a, b) = a - max(0, a - b); the distinct forms over Distinct inputs.
  switch (select.op()) {
    case pg_query::SETOP_UNION:
      plan = UnionPlan({std::move(a), std::move(b)});
      if (!select.all()) plan = DistinctPlan(std::move(plan));
      break;
    case pg_query::SETOP_EXCEPT:
      if (!select.all()) {
        a = DistinctPlan(std::move(a));
        b = DistinctPlan(std::move(b));
      }
      plan = ThresholdPlan(UnionPlan({std::move(a), NegatePlan(std::move(b))}));
      break;
    default: {  // INTERSECT
      if (!select.all()) {
        a = DistinctPlan(std::move(a));
        b = DistinctPlan(std::move(b));
      }
      pb::Plan a_minus_b = ThresholdPlan(UnionPlan({a, NegatePlan(std::move(b))}));
      plan = UnionPlan({std::move(a), NegatePlan(std::move(a_minus_b))});
      // Threshold prints one spelling of equal values (1.5, 1.50) with their whole count, so A's
      // spellings need not cancel one by one: by value the sum is min(a, b) ≥ 0, by spelling a
      // count may be negative. A Threshold sums them. (A Distinct input has one spelling a
      // value already.)
      if (select.all()) plan = ThresholdPlan(std::move(plan));
      break;
    }
  }
  CheckSize(plan);
  OrderedRelation out;
  out.relation.plan = std::move(plan);
  out.relation.columns = left.columns;
  for (std::size_t i = 0; i < right.columns.size(); ++i) {
    out.relation.columns[i].untyped_null =
        left.columns[i].untyped_null && right.columns[i].untyped_null;
  }
  out.relation.star = StarOf(left.columns.size());
  out.names = names;
  out.visible = names.size();
  BindOutputOrder(select, &out);
  return out;
}

// ---- FROM

pb::Plan Binder::NoRows(const Relation& r) {
  if (catalog_.FindObject(kOneRowObject) == nullptr) {
    return MfpPlan(r.plan, {}, {BoolExpr(false)}, {});
  }
  Relation one = OneRow(-1);
  std::vector<pb::ScalarExpr> nulls;
  for (const auto& c : r.columns) nulls.push_back(NullExpr(c.type));
  const std::size_t n = one.columns.size();
  return MfpPlan(std::move(one.plan), std::move(nulls), {BoolExpr(false)},
                 Iota(n, n + r.columns.size()));
}

Relation Binder::OneRow(int location) {
  const CatalogObject* object = catalog_.FindObject(kOneRowObject);
  if (object == nullptr) {
    Fail(sqlstate::kFeatureNotSupported,
         std::string("SELECT without FROM, VALUES and aggregates without GROUP BY read the "
                     "one-row collection ") +
             kOneRowObject + ", which this catalog does not have",
         location);
  }
  Relation r = ReadObject(*object, location);
  for (auto& c : r.columns) {
    c.name.clear();
    c.table.clear();
  }
  r.star.clear();
  return r;
}

Relation Binder::ReadObject(const CatalogObject& object, int location) {
  const auto indexes = catalog_.IndexesOn(object.name);
  if (indexes.empty() || object.id.empty()) {
    Fail(sqlstate::kInternalError, "relation \"" + object.name + "\" has no index to read",
         location);
  }
  const CatalogIndex& index = *indexes[0];
  bool known = false;
  for (const auto& import : imports_) known |= import.id() == index.id;
  if (!known) {
    pb::IndexImport import;
    import.set_id(index.id);
    import.set_on(object.id);
    for (const auto& c : object.columns) {
      auto* column = import.mutable_schema()->add_columns();
      column->set_name(c.name);
      column->set_type(c.type);
      column->set_nullable(c.nullable);
    }
    for (auto k : index.key) import.add_key(k);
    imports_.push_back(std::move(import));
    import_objects_.push_back(object.name);
  }
  Relation r;
  r.plan.mutable_get()->set_id(object.id);
  for (const auto& c : object.columns)
    r.columns.push_back(ScopeColumn{object.name, c.name, c.type, false, false, c.mods});
  r.star = StarOf(r.columns.size());
  return r;
}

Relation Binder::BindFrom(const Nodes& from, const CteScope& ctes, int location) {
  Relation r = BindFromItem(from.Get(0), ctes);
  for (int i = 1; i < from.size(); ++i) {
    r = CrossJoin(std::move(r), BindFromItem(from.Get(i), ctes), location);
  }
  return r;
}

void Binder::CheckDistinctTables(const Relation& left, const Relation& right, int location) const {
  std::set<std::string> tables;
  for (const auto& c : left.columns) {
    if (!c.table.empty()) tables.insert(c.table);
  }
  for (const auto& c : right.columns) {
    if (!c.table.empty() && tables.count(c.table) > 0) {
      Fail(sqlstate::kDuplicateAlias, "table name \"" + c.table + "\" specified more than once",
           location);
    }
  }
}

Relation Binder::CrossJoin(Relation left, Relation right, int location) {
  CheckDistinctTables(left, right, location);
  Relation r;
  r.plan = EquiJoin(std::move(left.plan), left.columns.size(), {}, std::move(right.plan),
                    right.columns.size(), {}, pb::INNER);
  r.star = left.star;
  for (auto c : right.star) r.star.push_back(static_cast<std::uint32_t>(c + left.columns.size()));
  r.columns = std::move(left.columns);
  for (auto& c : right.columns) r.columns.push_back(std::move(c));
  CheckSize(r.plan);
  return r;
}

Relation Binder::BindFromItem(const pg_query::Node& item, const CteScope& ctes) {
  DepthGuard guard(this);
  if (++relations_bound_ > kMaxBoundRelations) {
    Fail(sqlstate::kStatementTooComplex,
         "statement is too complex: it reads more than " + std::to_string(kMaxBoundRelations) +
             " relations, each view and WITH query counted where it is named",
         NodeLocation(item));
  }
  switch (item.node_case()) {
    case pg_query::Node::kRangeVar:
      return BindRangeVar(item.range_var(), ctes);
    case pg_query::Node::kJoinExpr:
      return BindJoin(item.join_expr(), ctes);
    case pg_query::Node::kRangeSubselect: {
      const auto& sub = item.range_subselect();
      if (sub.lateral()) {
        Fail(sqlstate::kFeatureNotSupported, "LATERAL is not supported",
             NodeLocation(sub.subquery()));
      }
      if (!sub.has_alias()) {
        Fail(sqlstate::kSyntaxError, "subquery in FROM must have an alias",
             NodeLocation(sub.subquery()));
      }
      Relation r = BindNested(sub.subquery(), ctes, nullptr);
      ApplyAlias(*this, &r, sub.alias().aliasname(), &sub.alias().colnames(), -1);
      return r;
    }
    default:
      Fail(sqlstate::kFeatureNotSupported, "FROM item " + NodeKindName(item) + " is not supported",
           NodeLocation(item));
  }
}

Relation Binder::BindRangeVar(const pg_query::RangeVar& range, const CteScope& ctes) {
  if (!range.catalogname().empty() ||
      (!range.schemaname().empty() && range.schemaname() != "public")) {
    Fail(sqlstate::kUndefinedTable,
         "relation \"" + range.schemaname() + "." + range.relname() + "\" does not exist",
         range.location());
  }
  const std::string& name = range.relname();
  const std::string alias = range.has_alias() ? range.alias().aliasname() : name;
  const Nodes* colnames = range.has_alias() ? &range.alias().colnames() : nullptr;
  if (range.schemaname().empty()) {
    for (const CteFrame* frame = ctes.get(); frame != nullptr; frame = frame->parent.get()) {
      if (frame->name != name) continue;
      const std::string_view saved = text_;
      text_ = frame->sql;
      std::vector<std::string> names;
      Relation r = BindNested(*frame->query, frame->parent, &names);
      text_ = saved;
      if (frame->column_names.size() > r.columns.size()) {
        Fail(sqlstate::kInvalidColumnReference,
             "WITH query \"" + name + "\" has " + std::to_string(r.columns.size()) +
                 " columns available but " + std::to_string(frame->column_names.size()) +
                 " columns specified",
             range.location());
      }
      for (std::size_t i = 0; i < frame->column_names.size(); ++i) {
        r.columns[i].name = frame->column_names[i];
      }
      ApplyAlias(*this, &r, alias, colnames, range.location());
      return r;
    }
  }
  const CatalogObject* object = catalog_.FindObject(name);
  if (object == nullptr) {
    const std::string shown = range.schemaname().empty() ? name : range.schemaname() + "." + name;
    Fail(sqlstate::kUndefinedTable, "relation \"" + shown + "\" does not exist", range.location());
  }
  Relation r;
  if (object->kind == ObjectKind::kView) {
    if (view_depth_ >= kMaxViewDepth) {
      Fail(sqlstate::kStatementTooComplex,
           "views nest more than " + std::to_string(kMaxViewDepth) + " deep at \"" + name + "\"",
           range.location());
    }
    auto parsed = sql::Parse(object->definition_sql);
    if (!parsed.ok() || parsed->size() != 1 ||
        !std::holds_alternative<sql::PostgresStatement>((*parsed)[0].form)) {
      Fail(sqlstate::kInternalError, "the definition of view \"" + name + "\" does not parse",
           range.location());
    }
    const pg_query::Node& stmt = std::get<sql::PostgresStatement>((*parsed)[0].form).stmt;
    const std::string_view saved = text_;
    text_ = {};  // errors inside a view point at no position of the statement
    ++view_depth_;
    r = BindNested(stmt, nullptr, nullptr);
    --view_depth_;
    text_ = saved;
    if (r.columns.size() != object->columns.size()) {
      Fail(sqlstate::kInternalError,
           "view \"" + name + "\" binds to a different number of columns than its catalog entry",
           range.location());
    }
    for (std::size_t i = 0; i < r.columns.size(); ++i) r.columns[i].name = object->columns[i].name;
  } else {
    r = ReadObject(*object, range.location());
  }
  ApplyAlias(*this, &r, alias, colnames, range.location());
  return r;
}

// ---- joins

Relation Binder::BindJoin(const pg_query::JoinExpr& join, const CteScope& ctes) {
  Relation left = BindFromItem(join.larg(), ctes);
  Relation right = BindFromItem(join.rarg(), ctes);
  const int location = NodeLocation(join.rarg());
  CheckDistinctTables(left, right, location);
  const std::uint32_t la = static_cast<std::uint32_t>(left.columns.size());
  const std::uint32_t ra = static_cast<std::uint32_t>(right.columns.size());
  const pg_query::JoinType type = join.jointype();
  if (type != pg_query::JOIN_INNER && type != pg_query::JOIN_LEFT && type != pg_query::JOIN_RIGHT &&
      type != pg_query::JOIN_FULL) {
    Fail(sqlstate::kFeatureNotSupported, "this kind of join is not supported", location);
  }

  Relation both;
  both.columns = left.columns;
  for (const auto& c : right.columns) both.columns.push_back(c);

  std::vector<pb::ScalarExpr> left_keys, right_keys, left_filters, right_filters, residual;
  std::vector<const pg_query::Node*> after_join;  // INNER JOIN conditions with subqueries
  // USING / NATURAL: the named columns of each side, equal.
  std::vector<std::string> using_names;
  if (join.is_natural()) {
    for (auto c : left.star) {
      const auto& name = left.columns[c].name;
      for (auto d : right.star) {
        if (right.columns[d].name == name &&
            std::find(using_names.begin(), using_names.end(), name) == using_names.end()) {
          using_names.push_back(name);
        }
      }
    }
  }
  for (const auto& u : join.using_clause()) using_names.push_back(u.string().sval());
  if (join.has_join_using_alias()) {
    Fail(sqlstate::kFeatureNotSupported, "JOIN … USING (…) AS alias is not supported", location);
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> using_pairs;
  for (const auto& name : using_names) {
    auto find = [&](const Relation& side, const char* which) {
      std::optional<std::uint32_t> found;
      for (std::uint32_t i = 0; i < side.columns.size(); ++i) {
        if (side.columns[i].name != name || side.columns[i].only_qualified) continue;
        if (found.has_value()) {
          Fail(sqlstate::kAmbiguousColumn,
               "common column name \"" + name + "\" appears more than once in " + which + " table",
               location);
        }
        found = i;
      }
      if (!found.has_value()) {
        Fail(sqlstate::kUndefinedColumn,
             "column \"" + name + "\" specified in USING clause does not exist in " + which +
                 " table",
             location);
      }
      return *found;
    };
    const std::uint32_t l = find(left, "left"), r = find(right, "right");
    const PgTypeId lt = IdOf(left.columns[l].type, left.columns[l].mods);
    const PgTypeId rt = IdOf(right.columns[r].type, right.columns[r].mods);
    if (lt != rt) {
      const std::string types = std::string(PgTypeName(lt)) + " and " + std::string(PgTypeName(rt));
      if (SelectCommonType({lt, rt}).type.has_value()) {
        Fail(sqlstate::kFeatureNotSupported,
             "JOIN/USING of columns of types " + types + " is not supported yet (join ON a = b)",
             location);
      }
      Fail(sqlstate::kDatatypeMismatch, "JOIN/USING types " + types + " cannot be matched",
           location);
    }
    using_pairs.emplace_back(l, r);
    left_keys.push_back(ColumnExpr(l));
    right_keys.push_back(ColumnExpr(r));
  }
  if (join.has_quals()) {
    std::vector<const pg_query::Node*> conjuncts;
    Conjuncts(join.quals(), &conjuncts, 0, *this);
    ExprContext context;
    context.input = &both;
    context.clause = "JOIN conditions";
    for (const pg_query::Node* conjunct : conjuncts) {
      // A subquery in an INNER JOIN's condition: a condition on the joined rows, as in a WHERE.
      std::vector<const pg_query::SubLink*> links;
      CollectSubLinks(*conjunct, &links, 0, *this);
      if (!links.empty() && type == pg_query::JOIN_INNER) {
        after_join.push_back(conjunct);
        continue;
      }
      pb::ScalarExpr e = BindCondition(*conjunct, context);
      bool any = false;
      if (e.kind_case() == pb::ScalarExpr::kBinary && e.binary().func() == pb::EQ) {
        const auto& a = e.binary().left();
        const auto& b = e.binary().right();
        bool a_any = false, b_any = false;
        const bool a_left = ReadsOnly(a, 0, la, &a_any),
                   b_right = ReadsOnly(b, la, la + ra, &b_any);
        const bool a_right = ReadsOnly(a, la, la + ra, &a_any),
                   b_left = ReadsOnly(b, 0, la, &b_any);
        if (a_any && b_any && a_left && b_right) {
          left_keys.push_back(a);
          right_keys.push_back(Renumber(b, [&] {
            std::vector<std::uint32_t> m(la + ra, 0);
            for (std::uint32_t i = la; i < la + ra; ++i) m[i] = i - la;
            return m;
          }()));
          continue;
        }
        if (a_any && b_any && a_right && b_left) {
          left_keys.push_back(b);
          std::vector<std::uint32_t> m(la + ra, 0);
          for (std::uint32_t i = la; i < la + ra; ++i) m[i] = i - la;
          right_keys.push_back(Renumber(a, m));
          continue;
        }
      }
      if (ReadsOnly(e, la, la + ra, &any)) {  // the right side alone (or no column)
        std::vector<std::uint32_t> m(la + ra, 0);
        for (std::uint32_t i = la; i < la + ra; ++i) m[i] = i - la;
        right_filters.push_back(Renumber(e, m));
      } else if (ReadsOnly(e, 0, la, &any)) {
        left_filters.push_back(e);
      } else {
        residual.push_back(e);
      }
    }
  }
  // INNER applies every condition exactly (a side's alone on that side, the rest after the
  // join); LEFT a right-side condition on the right side before the join (a left row then has
  // no match and keeps its nulls), RIGHT mirrored. The others of LEFT/RIGHT, and any of FULL,
  // need the general outer join (GeneralOuterJoin): the pairs, then the unmatched rows.
  std::vector<pb::ScalarType> left_types, right_types;
  for (const auto& c : left.columns) left_types.push_back(c.type);
  for (const auto& c : right.columns) right_types.push_back(c.type);
  std::vector<std::uint32_t> to_combined_right(ra);  // right-only numbering → combined
  for (std::uint32_t i = 0; i < ra; ++i) to_combined_right[i] = la + i;
  if (type == pg_query::JOIN_FULL && left_keys.empty()) {
    Fail(sqlstate::kFeatureNotSupported,
         "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions",
         location);
  }
  pb::Plan lp = std::move(left.plan), rp = std::move(right.plan);
  const bool general =
      (type == pg_query::JOIN_LEFT && (!left_filters.empty() || !residual.empty())) ||
      (type == pg_query::JOIN_RIGHT && (!right_filters.empty() || !residual.empty())) ||
      (type == pg_query::JOIN_FULL &&
       (!left_filters.empty() || !right_filters.empty() || !residual.empty()));
  if (general) {
    std::vector<pb::ScalarExpr> conditions = residual;  // over [left, right]
    if (type != pg_query::JOIN_RIGHT) {
      for (const auto& f : left_filters) conditions.push_back(f);
    } else {
      lp = MfpPlan(std::move(lp), {}, left_filters, {});
    }
    if (type != pg_query::JOIN_LEFT) {
      for (const auto& f : right_filters) conditions.push_back(Renumber(f, to_combined_right));
    } else {
      rp = MfpPlan(std::move(rp), {}, right_filters, {});
    }
    left_filters.clear();
    right_filters.clear();
    residual.clear();
    pb::Plan plan;
    if (type == pg_query::JOIN_RIGHT) {
      // The swapped LEFT JOIN: conditions over [right, left].
      std::vector<std::uint32_t> swap(la + ra);
      for (std::uint32_t i = 0; i < la; ++i) swap[i] = ra + i;
      for (std::uint32_t i = 0; i < ra; ++i) swap[la + i] = i;
      for (auto& c : conditions) c = Renumber(c, swap);
      plan = GeneralOuterJoin(std::move(rp), right_types, right_keys, std::move(lp), left_types,
                              left_keys, conditions, false);
      std::vector<std::uint32_t> projection = Iota(ra, ra + la);
      for (auto c : Iota(0, ra)) projection.push_back(c);
      plan = MfpPlan(std::move(plan), {}, {}, std::move(projection));
    } else {
      plan = GeneralOuterJoin(std::move(lp), left_types, left_keys, std::move(rp), right_types,
                              right_keys, conditions, type == pg_query::JOIN_FULL);
    }
    lp = std::move(plan);  // the joined relation, taken by the switch below
  }
  if (!left_filters.empty()) lp = MfpPlan(std::move(lp), {}, left_filters, {});
  if (!right_filters.empty()) rp = MfpPlan(std::move(rp), {}, right_filters, {});
  pb::Plan plan;
  switch (general ? pg_query::JOIN_TYPE_UNDEFINED : type) {
    case pg_query::JOIN_TYPE_UNDEFINED:
      plan = std::move(lp);
      break;
    case pg_query::JOIN_INNER:
      plan = EquiJoin(std::move(lp), la, left_keys, std::move(rp), ra, right_keys, pb::INNER,
                      residual);
      break;
    case pg_query::JOIN_LEFT:
      plan = EquiJoin(std::move(lp), la, left_keys, std::move(rp), ra, right_keys, pb::LEFT_OUTER);
      break;
    case pg_query::JOIN_RIGHT: {
      plan = EquiJoin(std::move(rp), ra, right_keys, std::move(lp), la, left_keys, pb::LEFT_OUTER);
      std::vector<std::uint32_t> projection = Iota(ra, ra + la);
      for (auto c : Iota(0, ra)) projection.push_back(c);
      plan = MfpPlan(std::move(plan), {}, {}, std::move(projection));
      break;
    }
    default: {  // FULL: LEFT ∪ the right rows no left row matches, with nulls on the left
      pb::Plan matched = EquiJoin(lp, la, left_keys, rp, ra, right_keys, pb::LEFT_OUTER);
      const std::uint32_t k =
          static_cast<std::uint32_t>(std::max<std::size_t>(left_keys.size(), 1));
      std::vector<pb::ScalarExpr> key_map = left_keys;
      if (key_map.empty()) key_map.push_back(IntExpr(0));
      std::vector<pb::ScalarExpr> marked_map = {BoolExpr(true)};
      pb::Plan left_keys_marked = MfpPlan(
          DistinctPlan(MfpPlan(std::move(lp), key_map, {}, Iota(la, la + k))), marked_map, {}, {});
      std::vector<pb::ScalarExpr> right_side_keys = right_keys;
      std::vector<pb::ScalarExpr> key_columns;
      for (std::uint32_t i = 0; i < k; ++i) key_columns.push_back(ColumnExpr(i));
      if (right_side_keys.empty()) right_side_keys.push_back(IntExpr(0));
      pb::Plan probe = EquiJoin(std::move(rp), ra, right_side_keys, std::move(left_keys_marked),
                                k + 1, key_columns, pb::LEFT_OUTER);
      std::vector<pb::ScalarExpr> nulls;
      for (const auto& c : left.columns) nulls.push_back(NullExpr(c.type));
      const std::uint32_t arity = ra + k + 1;
      std::vector<std::uint32_t> projection = Iota(arity, arity + la);
      for (auto c : Iota(0, ra)) projection.push_back(c);
      pb::Plan unmatched = MfpPlan(std::move(probe), std::move(nulls),
                                   {Unary(pb::IS_NULL, ColumnExpr(ra + k))}, std::move(projection));
      plan = UnionPlan({std::move(matched), std::move(unmatched)});
      break;
    }
  }
  Relation r;
  r.columns = std::move(both.columns);
  if (!using_pairs.empty()) {
    // The merged columns after both sides': the left's (INNER, LEFT), the right's (RIGHT), the
    // one that is not null (FULL). `*` lists them first; unqualified names reach only them.
    std::vector<pb::ScalarExpr> merged;
    std::set<std::uint32_t> used;
    for (const auto& [l, rr] : using_pairs) {
      const std::uint32_t rc = la + rr;
      used.insert(l);
      used.insert(rc);
      if (type == pg_query::JOIN_RIGHT) {
        merged.push_back(ColumnExpr(rc));
      } else if (type == pg_query::JOIN_FULL) {
        merged.push_back(
            IfThenElse(Unary(pb::IS_NOT_NULL, ColumnExpr(l)), ColumnExpr(l), ColumnExpr(rc)));
      } else {
        merged.push_back(ColumnExpr(l));
      }
      r.columns[l].only_qualified = true;
      r.columns[rc].only_qualified = true;
    }
    plan = MfpPlan(std::move(plan), merged, {}, {});
    for (std::size_t i = 0; i < using_pairs.size(); ++i) {
      r.star.push_back(static_cast<std::uint32_t>(la + ra + i));
      r.columns.push_back(ScopeColumn{"", using_names[i], left.columns[using_pairs[i].first].type,
                                      false, false, left.columns[using_pairs[i].first].mods});
    }
    for (auto c : left.star) {
      if (used.count(c) == 0) r.star.push_back(c);
    }
    for (auto c : right.star) {
      if (used.count(c + la) == 0) r.star.push_back(c + la);
    }
  } else {
    r.star = left.star;
    for (auto c : right.star) r.star.push_back(c + la);
  }
  r.plan = std::move(plan);
  CheckSize(r.plan);
  for (const pg_query::Node* conjunct : after_join) r = ApplyWhere(std::move(r), *conjunct, ctes);
  if (join.has_alias()) {
    ApplyAlias(*this, &r, join.alias().aliasname(), &join.alias().colnames(), location);
  }
  return r;
}

// ---- WHERE and its subqueries

Relation Binder::ApplyWhere(Relation input, const pg_query::Node& where, const CteScope& ctes) {
  std::vector<const pg_query::Node*> conjuncts;
  Conjuncts(where, &conjuncts, 0, *this);
  std::vector<pb::ScalarExpr> predicates;
  std::vector<std::pair<const pg_query::SubLink*, bool>> links;
  std::vector<const pg_query::Node*> plain;
  ExprContext context;
  context.input = &input;
  context.clause = "WHERE";
  for (const pg_query::Node* c : conjuncts) {
    if (c->has_sub_link()) {
      links.emplace_back(&c->sub_link(), false);
    } else if (c->has_bool_expr() && c->bool_expr().boolop() == pg_query::NOT_EXPR &&
               c->bool_expr().args_size() == 1 && c->bool_expr().args(0).has_sub_link()) {
      links.emplace_back(&c->bool_expr().args(0).sub_link(), true);
    } else {
      plain.push_back(c);
    }
  }
  // Subqueries elsewhere in a condition (under OR, NOT of more than one, CASE …): their values
  // as columns of marks appended to the input, projected away after the filter.
  const std::size_t n = input.columns.size();
  std::map<const pg_query::SubLink*, BoundExpr> marks;
  for (const pg_query::Node* c : plain)
    input = AddSubqueryMarks(std::move(input), *c, ctes, &marks);
  context.input = &input;
  context.subqueries = &marks;
  for (const pg_query::Node* c : plain) predicates.push_back(BindCondition(*c, context));
  if (!predicates.empty()) input.plan = MfpPlan(std::move(input.plan), {}, predicates, {});
  if (input.columns.size() > n) {
    input.plan = MfpPlan(std::move(input.plan), {}, {}, Iota(0, n));
    input.columns.resize(n);
  }
  for (const auto& [link, negated] : links) {
    input = ApplySubqueryConjunct(std::move(input), *link, negated, ctes);
  }
  return input;
}

void Binder::SplitCorrelated(Relation* from_relation, const Relation& outer_relation,
                             const pg_query::SelectStmt& sub, const CteScope& ctes,
                             std::vector<pb::ScalarExpr>* local,
                             std::vector<pb::ScalarExpr>* inner_keys,
                             std::vector<pb::ScalarExpr>* outer_keys) {
  Relation& from = *from_relation;
  const std::uint32_t n = static_cast<std::uint32_t>(outer_relation.columns.size());
  if (sub.has_where_clause()) {
    std::vector<const pg_query::Node*> conjuncts, plain;
    std::vector<std::pair<const pg_query::SubLink*, bool>> links;
    Conjuncts(sub.where_clause(), &conjuncts, 0, *this);
    for (const pg_query::Node* c : conjuncts) {
      if (c->has_sub_link()) {
        links.emplace_back(&c->sub_link(), false);
      } else if (c->has_bool_expr() && c->bool_expr().boolop() == pg_query::NOT_EXPR &&
                 c->bool_expr().args_size() == 1 && c->bool_expr().args(0).has_sub_link()) {
        links.emplace_back(&c->bool_expr().args(0).sub_link(), true);
      } else {
        plain.push_back(c);
      }
    }
    // Subqueries in the subquery's WHERE are its own: planned over its FROM (correlated to it,
    // not to the query around it). Their marks become columns of `from`, before any key.
    std::map<const pg_query::SubLink*, BoundExpr> marks;
    for (const pg_query::Node* c : plain)
      from = AddSubqueryMarks(std::move(from), *c, ctes, &marks);
    for (const auto& [link, negated] : links) {
      from = ApplySubqueryConjunct(std::move(from), *link, negated, ctes);
    }
    for (const pg_query::Node* c : plain) {
      bool used_outer = false;
      ExprContext context;
      context.input = &from;
      context.subqueries = &marks;
      context.outer = &outer_relation;
      context.used_outer = &used_outer;
      context.clause = "WHERE";
      pb::ScalarExpr e = BindCondition(*c, context);
      if (!used_outer) {
        local->push_back(std::move(e));
        continue;
      }
      // inner = outer (either way round): a correlation key.
      const std::uint32_t fa = static_cast<std::uint32_t>(from.columns.size());
      bool ok = false;
      if (e.kind_case() == pb::ScalarExpr::kBinary && e.binary().func() == pb::EQ) {
        const auto& a = e.binary().left();
        const auto& b = e.binary().right();
        bool a_any = false, b_any = false;
        for (int flip = 0; flip < 2 && !ok; ++flip) {
          const auto& inner = flip ? b : a;
          const auto& outer = flip ? a : b;
          if (ReadsOnly(inner, 0, fa, &a_any) && a_any && ReadsOnly(outer, fa, fa + n, &b_any) &&
              b_any) {
            inner_keys->push_back(inner);
            std::vector<std::uint32_t> m(fa + n, 0);
            for (std::uint32_t i = fa; i < fa + n; ++i) m[i] = i - fa;
            outer_keys->push_back(Renumber(outer, m));
            ok = true;
          }
        }
      }
      if (!ok) {
        Fail(sqlstate::kFeatureNotSupported,
             "a correlated subquery's condition other than an equality of its own columns "
             "with the outer query's is not supported",
             NodeLocation(*c));
      }
    }
  }
}

SubqueryKeys Binder::BindSubqueryKeys(const Relation& input, const pg_query::SubLink& link,
                                      const CteScope& ctes) {
  DepthGuard guard(this);
  const bool exists = link.sub_link_type() == pg_query::EXISTS_SUBLINK;
  const bool in = link.sub_link_type() == pg_query::ANY_SUBLINK &&
                  (link.oper_name_size() == 0 ||
                   (link.oper_name_size() == 1 && link.oper_name(0).string().sval() == "="));
  if (!exists && !in) {
    Fail(sqlstate::kFeatureNotSupported,
         "this subquery is not supported: only [NOT] EXISTS and [NOT] IN subqueries are",
         link.location());
  }
  if (in && link.testexpr().has_row_expr()) {
    Fail(sqlstate::kFeatureNotSupported, "row IN (subquery) is not supported", link.location());
  }
  const pg_query::SelectStmt& sub = link.subselect().select_stmt();

  SubqueryKeys keys;
  keys.in = in;
  std::vector<pb::ScalarExpr>& outer_keys = keys.outer_keys;
  pb::Plan& keys_plan = keys.keys_plan;
  std::size_t& correlation = keys.correlation;
  pb::ScalarType in_type = pb::SCALAR_TYPE_UNSPECIFIED;
  const bool simple =
      (sub.op() == pg_query::SETOP_NONE || sub.op() == pg_query::SET_OPERATION_UNDEFINED) &&
      sub.values_lists_size() == 0 && !sub.has_with_clause() && sub.from_clause_size() > 0 &&
      sub.group_clause_size() == 0 && !sub.has_having_clause() && sub.distinct_clause_size() == 0 &&
      !sub.has_limit_count() && !sub.has_limit_offset() && sub.sort_clause_size() == 0;
  ExprContext input_context;
  input_context.input = &input;
  input_context.clause = "WHERE";
  bool aggregates = false;
  for (const auto& t : sub.target_list()) aggregates |= ContainsAggregate(t);
  if (simple && !aggregates) {
    Relation from = BindFrom(sub.from_clause(), ctes, link.location());
    std::vector<pb::ScalarExpr> local, inner_keys;
    SplitCorrelated(&from, input, sub, ctes, &local, &inner_keys, &outer_keys);
    correlation = inner_keys.size();
    // The select list is checked as PostgreSQL would (an unknown column is an error even under
    // EXISTS); the outer query's columns in it are not planned.
    for (const auto& t : sub.target_list()) {
      const auto& val = t.res_target().val();
      if (val.has_column_ref() && val.column_ref().fields().rbegin()->has_a_star()) continue;
      bool used_outer = false;
      ExprContext context;
      context.input = &from;
      context.outer = &input;
      context.used_outer = &used_outer;
      context.clause = "SELECT";
      (void)Bind(val, context);
      if (used_outer) {
        Fail(sqlstate::kFeatureNotSupported,
             "a subquery whose select list reads the outer query's columns is not supported",
             t.res_target().location());
      }
    }
    if (in) {
      if (sub.target_list_size() != 1) {
        Fail(sqlstate::kSyntaxError,
             sub.target_list_size() > 1 ? "subquery has too many columns"
                                        : "subquery has too few columns",
             link.location());
      }
      ExprContext context;
      context.input = &from;
      context.clause = "SELECT";
      const pg_query::Node& target = sub.target_list(0).res_target().val();
      BoundExpr value;
      if (target.has_column_ref() && target.column_ref().fields().rbegin()->has_a_star()) {
        // IN (SELECT * …) of one column.
        std::vector<std::uint32_t> columns;
        const auto& fields = target.column_ref().fields();
        for (std::uint32_t c : from.star) {
          if (fields.size() == 1 || from.columns[c].table == fields.begin()->string().sval()) {
            columns.push_back(c);
          }
        }
        if (columns.size() != 1) {
          Fail(sqlstate::kSyntaxError,
               columns.empty() ? "subquery has too few columns" : "subquery has too many columns",
               link.location());
        }
        value.expr = ColumnExpr(columns[0]);
        value.type = from.columns[columns[0]].type;
        value.mods = from.columns[columns[0]].mods;
      } else {
        value = Bind(target, context);
      }
      BoundExpr test = Bind(link.testexpr(), input_context);
      const BoundExpr eq = BindOperator("=", test, value, link.location());
      in_type = value.type == pb::SCALAR_TYPE_UNSPECIFIED ? test.type : value.type;
      if (in_type == pb::SCALAR_TYPE_UNSPECIFIED) in_type = pb::STRING;
      outer_keys.push_back(eq.expr.binary().left());
      inner_keys.push_back(eq.expr.binary().right());
    }
    pb::Plan filtered = std::move(from.plan);
    if (!local.empty()) filtered = MfpPlan(std::move(filtered), {}, local, {});
    const std::size_t fa = from.columns.size();
    if (inner_keys.empty()) inner_keys.push_back(IntExpr(0));
    keys_plan = MfpPlan(std::move(filtered), inner_keys, {}, Iota(fa, fa + inner_keys.size()));
  } else {
    // Any other subquery, uncorrelated: its rows as they are.
    Relation r = BindNestedSelect(sub, ctes, nullptr);
    if (in) {
      if (r.columns.size() != 1) {
        Fail(sqlstate::kSyntaxError, "subquery has too many columns", link.location());
      }
      BoundExpr value;
      value.expr = ColumnExpr(0);
      value.type = r.columns[0].type;
      value.mods = r.columns[0].mods;
      BoundExpr test = Bind(link.testexpr(), input_context);
      const BoundExpr eq = BindOperator("=", test, value, link.location());
      in_type = r.columns[0].type;
      outer_keys.push_back(eq.expr.binary().left());
      // The subquery's value as the operator takes it (int4 IN (SELECT int8) compares int8s).
      keys_plan = MfpPlan(std::move(r.plan), {eq.expr.binary().right()}, {}, {1});
    } else {
      keys_plan = MfpPlan(std::move(r.plan), {IntExpr(0)}, {},
                          {static_cast<std::uint32_t>(r.columns.size())});
    }
  }
  if (outer_keys.empty()) outer_keys.push_back(IntExpr(0));
  (void)in_type;
  return keys;
}

Relation Binder::ApplySubqueryConjunct(Relation input, const pg_query::SubLink& link, bool negated,
                                       const CteScope& ctes) {
  DepthGuard guard(this);
  SubqueryKeys keys = BindSubqueryKeys(input, link, ctes);
  const std::uint32_t n = static_cast<std::uint32_t>(input.columns.size());
  const bool in = keys.in;
  const std::vector<pb::ScalarExpr>& outer_keys = keys.outer_keys;
  const pb::Plan& keys_plan = keys.keys_plan;
  const std::size_t correlation = keys.correlation;
  const std::size_t k = outer_keys.size();
  std::vector<pb::ScalarExpr> key_columns;
  for (std::uint32_t i = 0; i < k; ++i) key_columns.push_back(ColumnExpr(i));

  // EXISTS / IN: the input rows whose keys some subquery row has (each once: the keys are
  // distinct). NOT EXISTS: those that have none (a left join's unmatched rows). NOT IN also
  // needs SQL's nulls: kept only when its correlation group of the subquery is empty, or when
  // it has no null value and the tested value is not null.
  pb::Plan distinct_keys = DistinctPlan(keys_plan);
  Relation out;
  out.columns = input.columns;
  out.star = input.star;
  if (!negated) {
    out.plan = EquiJoin(std::move(input.plan), n, outer_keys, std::move(distinct_keys), k,
                        key_columns, pb::INNER);
    out.plan = MfpPlan(std::move(out.plan), {}, {}, Iota(0, n));
    CheckSize(out.plan);
    return out;
  }
  pb::Plan marked = MfpPlan(std::move(distinct_keys), {BoolExpr(true)}, {}, {});
  pb::Plan probe =
      EquiJoin(input.plan, n, outer_keys, std::move(marked), k + 1, key_columns, pb::LEFT_OUTER);
  std::vector<pb::ScalarExpr> predicates = {
      Unary(pb::IS_NULL, ColumnExpr(static_cast<std::uint32_t>(n + k)))};
  std::uint32_t arity = static_cast<std::uint32_t>(n + k + 1);
  if (in) {
    // Per correlation group: whether the subquery's values include a null.
    std::vector<pb::ScalarExpr> group_outer(outer_keys.begin(), outer_keys.begin() + correlation);
    pb::Plan stats;
    auto* reduce = stats.mutable_reduce();
    std::vector<pb::ScalarExpr> stats_map = {
        Unary(pb::IS_NULL, ColumnExpr(static_cast<std::uint32_t>(k - 1)))};
    std::vector<std::uint32_t> stats_projection = Iota(0, correlation);
    stats_projection.push_back(static_cast<std::uint32_t>(k));
    *reduce->mutable_input() = MfpPlan(keys_plan, stats_map, {}, stats_projection);
    for (std::uint32_t i = 0; i < correlation; ++i) reduce->add_group_key(i);
    auto* any_null = reduce->add_aggregates();
    any_null->set_func(pb::ANY);
    any_null->set_column(static_cast<std::uint32_t>(correlation));
    pb::Plan keyed_stats = std::move(stats);
    std::size_t stats_arity = correlation + 1;
    std::vector<pb::ScalarExpr> stats_keys;
    for (std::uint32_t i = 0; i < correlation; ++i) stats_keys.push_back(ColumnExpr(i));
    probe = EquiJoin(std::move(probe), arity, group_outer, std::move(keyed_stats), stats_arity,
                     stats_keys, pb::LEFT_OUTER);
    const pb::ScalarExpr has_null = ColumnExpr(static_cast<std::uint32_t>(arity + correlation));
    // Empty group (no stats row): kept; else no null in it and the tested value not null.
    predicates.push_back(IfThenElse(
        Unary(pb::IS_NULL, has_null), BoolExpr(true),
        IfThenElse(has_null, BoolExpr(false), Unary(pb::IS_NOT_NULL, outer_keys[k - 1]))));
    arity += static_cast<std::uint32_t>(stats_arity);
  }
  out.plan = MfpPlan(std::move(probe), {}, predicates, Iota(0, n));
  CheckSize(out.plan);
  return out;
}

namespace {

// The EXISTS and IN subqueries of `node`, outermost only (a subquery's own are its binding's).
void CollectSubLinks(const pg_query::Node& node, std::vector<const pg_query::SubLink*>* out,
                     int depth, Binder& binder) {
  using google::protobuf::FieldDescriptor;
  if (depth > kMaxWalkDepth)
    binder.Fail(sqlstate::kStatementTooComplex, "statement is too complex");
  if (node.has_sub_link()) {
    out->push_back(&node.sub_link());
    return;
  }
  const auto* oneof = node.GetDescriptor()->FindOneofByName("node");
  const FieldDescriptor* field = node.GetReflection()->GetOneofFieldDescriptor(node, oneof);
  if (field == nullptr || field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return;
  const auto& message = node.GetReflection()->GetMessage(node, field);
  const auto* reflection = message.GetReflection();
  for (int i = 0; i < message.GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor* f = message.GetDescriptor()->field(i);
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
        f->message_type() != pg_query::Node::descriptor()) {
      continue;
    }
    if (f->is_repeated()) {
      for (int j = 0; j < reflection->FieldSize(message, f); ++j) {
        CollectSubLinks(
            static_cast<const pg_query::Node&>(reflection->GetRepeatedMessage(message, f, j)), out,
            depth + 1, binder);
      }
    } else if (reflection->HasField(message, f)) {
      CollectSubLinks(static_cast<const pg_query::Node&>(reflection->GetMessage(message, f)), out,
                      depth + 1, binder);
    }
  }
}

}  // namespace

Relation Binder::AddSubqueryMark(Relation input, const pg_query::SubLink& link,
                                 const CteScope& ctes, BoundExpr* value) {
  DepthGuard guard(this);
  SubqueryKeys keys = BindSubqueryKeys(input, link, ctes);
  const std::uint32_t n = static_cast<std::uint32_t>(input.columns.size());
  const std::size_t k = keys.outer_keys.size();
  std::vector<pb::ScalarExpr> key_columns;
  for (std::uint32_t i = 0; i < k; ++i) key_columns.push_back(ColumnExpr(i));
  // A left join with the distinct keys and a marker: each input row once, the marker set when
  // some subquery row has its keys.
  pb::Plan marked = MfpPlan(DistinctPlan(keys.keys_plan), {BoolExpr(true)}, {}, {});
  Relation out;
  out.plan = EquiJoin(std::move(input.plan), n, keys.outer_keys, std::move(marked), k + 1,
                      key_columns, pb::LEFT_OUTER);
  out.star = input.star;
  out.columns = std::move(input.columns);
  for (std::size_t i = 0; i < k; ++i)
    out.columns.push_back(ScopeColumn{"", "", pb::INT64, false, false, {}});
  out.columns.push_back(ScopeColumn{"", "", pb::BOOL, false, false, {}});
  const pb::ScalarExpr matched =
      Unary(pb::IS_NOT_NULL, ColumnExpr(n + static_cast<std::uint32_t>(k)));
  value->type = pb::BOOL;
  if (!keys.in) {
    value->expr = matched;  // EXISTS: true or false, never null
    // The key columns' types are not read; give them the keys' own for the scope.
    CheckSize(out.plan);
    return out;
  }
  // IN: true when matched; else false when the subquery's group is empty, null when it has a
  // null or the tested value is null, false otherwise.
  const std::uint32_t arity = static_cast<std::uint32_t>(out.columns.size());
  const std::size_t c = keys.correlation;
  pb::Plan stats;
  auto* reduce = stats.mutable_reduce();
  std::vector<std::uint32_t> stats_projection = Iota(0, c);
  stats_projection.push_back(static_cast<std::uint32_t>(k));
  *reduce->mutable_input() =
      MfpPlan(keys.keys_plan, {Unary(pb::IS_NULL, ColumnExpr(static_cast<std::uint32_t>(k - 1)))},
              {}, stats_projection);
  for (std::uint32_t i = 0; i < c; ++i) reduce->add_group_key(i);
  auto* any_null = reduce->add_aggregates();
  any_null->set_func(pb::ANY);
  any_null->set_column(static_cast<std::uint32_t>(c));
  std::vector<pb::ScalarExpr> group_outer(keys.outer_keys.begin(), keys.outer_keys.begin() + c);
  std::vector<pb::ScalarExpr> stats_keys;
  for (std::uint32_t i = 0; i < c; ++i) stats_keys.push_back(ColumnExpr(i));
  out.plan = EquiJoin(std::move(out.plan), arity, group_outer, std::move(stats), c + 1, stats_keys,
                      pb::LEFT_OUTER);
  for (std::size_t i = 0; i < c; ++i)
    out.columns.push_back(ScopeColumn{"", "", pb::INT64, false, false, {}});
  out.columns.push_back(ScopeColumn{"", "", pb::BOOL, false, false, {}});
  const pb::ScalarExpr has_null = ColumnExpr(arity + static_cast<std::uint32_t>(c));
  value->expr = IfThenElse(
      matched, BoolExpr(true),
      IfThenElse(Unary(pb::IS_NULL, has_null), BoolExpr(false),
                 IfThenElse(Binary(pb::OR, has_null, Unary(pb::IS_NULL, keys.outer_keys[k - 1])),
                            NullExpr(pb::BOOL), BoolExpr(false))));
  CheckSize(out.plan);
  return out;
}

Relation Binder::AddScalarSubquery(Relation input, const pg_query::SubLink& link,
                                   const CteScope& ctes, BoundExpr* value) {
  DepthGuard guard(this);
  const pg_query::SelectStmt& sub = link.subselect().select_stmt();
  const std::uint32_t n = static_cast<std::uint32_t>(input.columns.size());
  const bool plain_select =
      (sub.op() == pg_query::SETOP_NONE || sub.op() == pg_query::SET_OPERATION_UNDEFINED) &&
      sub.values_lists_size() == 0;
  if (plain_select && sub.target_list_size() > 1) {
    Fail(sqlstate::kSyntaxError, "subquery must return only one column", link.location());
  }
  bool aggregates = false;
  for (const auto& t : sub.target_list()) aggregates |= ContainsAggregate(t);
  // One row at most: an aggregate without GROUP BY (exactly one row), or LIMIT 0 or 1.
  const bool global_aggregate = plain_select && aggregates && sub.group_clause_size() == 0;
  // A SELECT without FROM or GROUP BY is one row at most too.
  bool limited = plain_select && sub.from_clause_size() == 0 && sub.group_clause_size() == 0;
  if (sub.has_limit_count() && sub.limit_count().has_a_const() &&
      sub.limit_count().a_const().has_ival()) {
    limited = limited || sub.limit_count().a_const().ival().ival() <= 1;
  }
  const bool correlatable = global_aggregate && !sub.has_with_clause() &&
                            sub.from_clause_size() > 0 && !sub.has_having_clause() &&
                            sub.distinct_clause_size() == 0 && !sub.has_limit_count() &&
                            !sub.has_limit_offset() && sub.sort_clause_size() == 0 &&
                            sub.target_list(0).res_target().indirection_size() == 0;
  if (correlatable) {
    // Correlated (or not) by equalities: the aggregates per correlation key, left-joined; a key
    // no subquery row has gets the aggregates over nothing (count 0, the others null).
    Relation from = BindFrom(sub.from_clause(), ctes, link.location());
    std::vector<pb::ScalarExpr> local, inner_keys, outer_keys;
    SplitCorrelated(&from, input, sub, ctes, &local, &inner_keys, &outer_keys);
    Aggregation aggregation;
    ExprContext context;
    context.input = &from;
    context.aggregation = &aggregation;
    context.clause = "SELECT";
    const auto& target = sub.target_list(0).res_target();
    BoundExpr e = Resolve(Bind(target.val(), context), target.location());
    pb::Plan filtered = std::move(from.plan);
    if (!local.empty()) filtered = MfpPlan(std::move(filtered), {}, local, {});
    const std::uint32_t k = static_cast<std::uint32_t>(inner_keys.size());
    const std::uint32_t m = static_cast<std::uint32_t>(aggregation.calls.size());
    pb::Plan reduced =
        BuildReduce(std::move(filtered), from.columns.size(), inner_keys, aggregation.calls);
    if (k == 0) {
      // Uncorrelated: exactly one row, as the select of an aggregate without GROUP BY.
      Relation one = OneRow(link.location());
      std::vector<pb::ScalarExpr> defaults;
      for (const auto& call : aggregation.calls) defaults.push_back(AggregateOverNothing(call));
      const std::size_t o = one.columns.size();
      pb::Plan d = MfpPlan(std::move(one.plan), defaults, {}, Iota(o, o + m));
      pb::Plan r_as_d = MfpPlan(reduced, defaults, {}, Iota(m, 2 * m));
      reduced = UnionPlan({std::move(reduced), std::move(d), NegatePlan(std::move(r_as_d))});
      pb::Plan with_value = MfpPlan(std::move(reduced), {e.expr}, {}, {m});
      Relation out;
      out.plan = EquiJoin(std::move(input.plan), n, {}, std::move(with_value), 1, {}, pb::INNER);
      out.star = input.star;
      out.columns = std::move(input.columns);
      out.columns.push_back(ScopeColumn{"", "", e.type, false, false, e.mods});
      value->type = e.type;
      value->mods = e.mods;
      value->expr = ColumnExpr(n);
      CheckSize(out.plan);
      return out;
    }
    // Post-aggregate row: [keys…, aggregates…, marker]; the value over it, or over nothing.
    pb::Plan marked = MfpPlan(std::move(reduced), {BoolExpr(true)}, {}, {});
    std::vector<pb::ScalarExpr> key_columns;
    for (std::uint32_t i = 0; i < k; ++i) key_columns.push_back(ColumnExpr(i));
    Relation out;
    out.plan = EquiJoin(std::move(input.plan), n, outer_keys, std::move(marked), k + m + 1,
                        key_columns, pb::LEFT_OUTER);
    out.star = input.star;
    out.columns = std::move(input.columns);
    for (std::uint32_t i = 0; i < k + m + 1; ++i) {
      out.columns.push_back(ScopeColumn{"", "", pb::INT64, false, false, {}});
    }
    std::vector<pb::ScalarExpr> present, absent;
    for (std::uint32_t j = 0; j < m; ++j) {
      present.push_back(ColumnExpr(n + k + j));
      absent.push_back(AggregateOverNothing(aggregation.calls[j]));
    }
    value->type = e.type;
    value->mods = e.mods;
    value->expr = IfThenElse(Unary(pb::IS_NOT_NULL, ColumnExpr(n + k + m)),
                             Substitute(e.expr, present), Substitute(e.expr, absent));
    CheckSize(out.plan);
    return out;
  }
  if (!global_aggregate && !limited) {
    Fail(sqlstate::kFeatureNotSupported,
         "a scalar subquery that can return more than one row is not supported yet (only an "
         "aggregate without GROUP BY, or LIMIT 1)",
         link.location());
  }
  // Uncorrelated, at most one row: a left join on a constant (no row: null).
  std::vector<std::string> names;
  Relation r = BindNestedSelect(sub, ctes, &names);
  if (r.columns.size() != 1) {
    Fail(sqlstate::kSyntaxError, "subquery must return only one column", link.location());
  }
  Relation out;
  out.plan = EquiJoin(std::move(input.plan), n, {}, std::move(r.plan), 1, {}, pb::LEFT_OUTER);
  out.star = input.star;
  out.columns = std::move(input.columns);
  out.columns.push_back(ScopeColumn{"", "", r.columns[0].type, false, false, r.columns[0].mods});
  value->type = r.columns[0].type;
  value->mods = r.columns[0].mods;
  value->expr = ColumnExpr(n);
  CheckSize(out.plan);
  return out;
}

Relation Binder::AddSubqueryMarks(Relation input, const pg_query::Node& node, const CteScope& ctes,
                                  std::map<const pg_query::SubLink*, BoundExpr>* marks) {
  std::vector<const pg_query::SubLink*> links;
  CollectSubLinks(node, &links, 0, *this);
  for (const pg_query::SubLink* link : links) {
    BoundExpr value;
    if (link->sub_link_type() == pg_query::EXPR_SUBLINK) {
      input = AddScalarSubquery(std::move(input), *link, ctes, &value);
    } else if (link->sub_link_type() == pg_query::EXISTS_SUBLINK ||
               link->sub_link_type() == pg_query::ANY_SUBLINK) {
      input = AddSubqueryMark(std::move(input), *link, ctes, &value);
    } else {
      continue;  // refused where it is bound, naming it
    }
    (*marks)[link] = std::move(value);
  }
  return input;
}

}  // namespace tandem::frontend::plan
