// PlanDml: INSERT, UPDATE and DELETE bound with the query binder (binder.h) — the target table
// read through its default index and filtered by WHERE as a FROM item and a WHERE are, VALUES and
// SET expressions bound as a select list's — into the rows the statement writes.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "frontend/plan/binder.h"
#include "frontend/plan/dml.h"

namespace tandem::frontend::plan {

namespace {

using DmlNodes = google::protobuf::RepeatedPtrField<pg_query::Node>;

const char* DmlVerb(DmlKind kind) {
  switch (kind) {
    case DmlKind::kInsert:
      return "insert into";
    case DmlKind::kUpdate:
      return "update";
    case DmlKind::kDelete:
      return "delete from";
  }
  return "change";
}

// The table a statement writes, or the refusal PostgreSQL gives for its name.
const CatalogObject& DmlTarget(Binder& binder, const CatalogReader& catalog,
                               const pg_query::RangeVar& range, DmlKind kind) {
  if (!range.catalogname().empty() ||
      (!range.schemaname().empty() && range.schemaname() != "public")) {
    binder.Fail(sqlstate::kUndefinedTable,
                "relation \"" + range.schemaname() + "." + range.relname() + "\" does not exist",
                range.location());
  }
  const std::string& name = range.relname();
  const CatalogObject* object = catalog.FindObject(name);
  if (object == nullptr) {
    const std::string shown = range.schemaname().empty() ? name : range.schemaname() + "." + name;
    binder.Fail(sqlstate::kUndefinedTable, "relation \"" + shown + "\" does not exist",
                range.location());
  }
  const std::string verb = DmlVerb(kind);
  switch (object->kind) {
    case ObjectKind::kTable:
      if (name != kOneRowObject) return *object;
      break;
    case ObjectKind::kView:
      binder.Fail(sqlstate::kWrongObjectType, "cannot " + verb + " view \"" + name + "\"",
                  range.location());
    case ObjectKind::kMaterializedView:
      binder.Fail(sqlstate::kWrongObjectType, "cannot change materialized view \"" + name + "\"",
                  range.location());
    case ObjectKind::kSource:
      break;
  }
  binder.Fail(sqlstate::kWrongObjectType,
              "cannot " + verb + " source \"" + name + "\": it is read-only", range.location());
}

// `e` assigned to column `column` as PostgreSQL's assignment casts do (pg_cast's implicit and
// assignment casts, and anything to a string type): a Cast the runtime evaluates with
// PostgreSQL's errors (bigint into integer: 22003 "integer out of range"; numeric(p,s): rounded,
// 22003 "numeric field overflow"), or 42804 where PostgreSQL has no such cast. A varchar(n) or
// char(n) column takes the value as text: BuildWrite checks its length (22001) and pads a char(n)
// as PostgreSQL's assignment does, which an explicit cast would cut instead.
pb::ScalarExpr DmlAssign(Binder& binder, BoundExpr e, const CatalogColumn& column, int location) {
  const std::string what = "column \"" + column.name + "\"";
  const PgTypeId from = IdOf(e.type, e.mods), to = IdOf(column.type, column.mods);
  if (!CanCast(from, to, CastContext::kAssignment)) {
    SqlError error(sqlstate::kDatatypeMismatch,
                   "column \"" + column.name + "\" is of type " +
                       SqlTypeNameWithMods(column.type, column.mods) +
                       " but expression is of type " + std::string(PgTypeName(from)),
                   binder.Position(location));
    error.hint = "You will need to rewrite or cast the expression.";
    throw PlanFailure{std::move(error)};
  }
  binder.RecordUnknownType(e, column.type, column.mods);  // varchar, char: the column's
  TypeMods mods = column.mods;
  if (column.type == pb::STRING) mods = TypeMods{};  // the length: BuildWrite's
  return binder.CoerceTo(std::move(e), column.type, mods, CastContext::kAssignment, location, what)
      .expr;
}

// A value of VALUES or SET bound for column `column`. A decimal constant (numeric to PostgreSQL)
// assigned to a double precision column is read as a float8, as PostgreSQL's assignment cast
// numeric → float8 reads its digits (float8in of its text, which strtod of them is).
BoundExpr DmlBindValue(Binder& binder, const pg_query::Node& value, const ExprContext& context,
                       const CatalogColumn& column) {
  if (column.type == pb::FLOAT64 && value.has_a_const() && value.a_const().has_fval()) {
    BoundExpr text;
    text.literal = value.a_const().fval().fval();
    return text;  // untyped: DmlAssign parses it as the column's type
  }
  return binder.Bind(value, context);
}

void RefuseCommon(Binder& binder, const DmlNodes& returning, bool with, const char* statement) {
  if (!returning.empty()) {
    binder.Fail(sqlstate::kFeatureNotSupported,
                std::string(statement) + " … RETURNING is not supported",
                NodeLocation(returning.Get(0)));
  }
  if (with) {
    binder.Fail(sqlstate::kFeatureNotSupported,
                std::string("WITH on ") + statement + " is not supported");
  }
}

// `table`'s rows, its columns qualified by `alias`, kept where `where` holds.
Relation DmlMatching(Binder& binder, const CatalogObject& table, const pg_query::RangeVar& range,
                     const pg_query::Node* where) {
  Relation r = binder.ReadObject(table, range.location());
  const std::string alias = range.has_alias() ? range.alias().aliasname() : table.name;
  if (range.has_alias() && range.alias().colnames_size() > 0) {
    binder.Fail(sqlstate::kSyntaxError, "a column list on the target's alias is not allowed",
                range.location());
  }
  for (auto& c : r.columns) c.table = alias;
  if (where != nullptr) r = binder.ApplyWhere(std::move(r), *where, nullptr);
  return r;
}

// The index of column `name` of `table`, or 42703 as PostgreSQL words it.
std::uint32_t DmlColumn(Binder& binder, const CatalogObject& table, const std::string& name,
                        int location) {
  for (std::uint32_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i].name == name) return i;
  }
  binder.Fail(sqlstate::kUndefinedColumn,
              "column \"" + name + "\" of relation \"" + table.name + "\" does not exist",
              location);
}

// Whether column i of `select`'s output is its i-th select list entry: a plain SELECT whose list
// has no `*`.
bool PositionalTargets(const pg_query::SelectStmt& select) {
  if ((select.op() != pg_query::SETOP_NONE && select.op() != pg_query::SET_OPERATION_UNDEFINED) ||
      select.values_lists_size() > 0) {
    return false;
  }
  for (const auto& t : select.target_list()) {
    const auto& val = t.res_target().val();
    if (val.has_column_ref() && val.column_ref().fields_size() > 0 &&
        val.column_ref().fields().rbegin()->has_a_star()) {
      return false;
    }
  }
  return true;
}

// Column i of `select` when it is a bare string constant with no DISTINCT, grouping or ORDER BY
// around it: PostgreSQL leaves its type unknown for INSERT … SELECT to resolve as the column's.
// Its text; nullopt otherwise.
std::optional<std::string> UnknownConstant(const pg_query::SelectStmt& select, std::size_t i) {
  if (!PositionalTargets(select) || select.distinct_clause_size() > 0 ||
      select.group_clause_size() > 0 || select.has_having_clause() ||
      select.sort_clause_size() > 0 || select.target_list_size() <= static_cast<int>(i)) {
    return std::nullopt;
  }
  const auto& val = select.target_list(static_cast<int>(i)).res_target().val();
  if (val.has_a_const() && !val.a_const().isnull() && val.a_const().has_sval()) {
    return val.a_const().sval().sval();
  }
  return std::nullopt;
}

PlannedRelation DmlInsert(Binder& binder, const pg_query::InsertStmt& insert,
                          const CatalogObject& table) {
  if (insert.has_on_conflict_clause()) {
    binder.Fail(sqlstate::kFeatureNotSupported, "INSERT … ON CONFLICT is not supported",
                insert.on_conflict_clause().location());
  }
  if (insert.override() == pg_query::OVERRIDING_USER_VALUE ||
      insert.override() == pg_query::OVERRIDING_SYSTEM_VALUE) {
    binder.Fail(sqlstate::kFeatureNotSupported, "INSERT … OVERRIDING is not supported");
  }
  // The target columns: the list's, or every column in order.
  std::vector<std::uint32_t> targets;
  std::vector<int> target_locations;
  std::set<std::uint32_t> named;
  for (const auto& c : insert.cols()) {
    const auto& target = c.res_target();
    const std::uint32_t column = DmlColumn(binder, table, target.name(), target.location());
    if (target.indirection_size() > 0) {
      binder.Fail(sqlstate::kFeatureNotSupported,
                  "subscripts and field selection in INSERT's column list are not supported",
                  target.location());
    }
    if (!named.insert(column).second) {
      binder.Fail(sqlstate::kDuplicateColumn,
                  "column \"" + target.name() + "\" specified more than once", target.location());
    }
    targets.push_back(column);
    target_locations.push_back(target.location());
  }
  const bool listed = insert.cols_size() > 0;
  if (!listed) {
    targets = Iota(0, table.columns.size());
    target_locations.assign(targets.size(), -1);
  }
  const std::size_t n = table.columns.size();
  // The source's expressions count against the targets as PostgreSQL counts them.
  auto check_count = [&](std::size_t count, int extra_expression_location) {
    if (count > targets.size()) {
      binder.Fail(sqlstate::kSyntaxError, "INSERT has more expressions than target columns",
                  extra_expression_location);
    }
    if (listed && count < targets.size()) {
      binder.Fail(sqlstate::kSyntaxError, "INSERT has more target columns than expressions",
                  target_locations[count]);
    }
  };

  Relation one;
  std::vector<pb::Plan> inputs;
  if (!insert.has_select_stmt()) {  // DEFAULT VALUES
    one = binder.OneRow(insert.relation().location());
    std::vector<pb::ScalarExpr> map;
    for (const auto& c : table.columns) map.push_back(NullExpr(c.type));
    inputs.push_back(
        MfpPlan(one.plan, std::move(map), {}, Iota(one.columns.size(), one.columns.size() + n)));
  } else if (!insert.select_stmt().has_select_stmt()) {
    binder.Fail(sqlstate::kFeatureNotSupported,
                "INSERT from " + NodeKindName(insert.select_stmt()) + " is not supported",
                NodeLocation(insert.select_stmt()));
  } else if (const auto& select = insert.select_stmt().select_stmt();
             select.values_lists_size() > 0 && select.sort_clause_size() == 0 &&
             !select.has_limit_count() && !select.has_limit_offset() && !select.has_with_clause()) {
    // VALUES: each expression assigned to its column on its own (PostgreSQL's transformInsertRow).
    one = binder.OneRow(NodeLocation(select.values_lists(0)));
    ExprContext context;
    context.input = &one;
    context.clause = "VALUES";
    std::size_t width = 0;
    for (int l = 0; l < select.values_lists_size(); ++l) {
      const auto& items = select.values_lists(l).list().items();
      const std::size_t count = static_cast<std::size_t>(items.size());
      if (l == 0) {
        width = count;
      } else if (count != width) {
        binder.Fail(sqlstate::kSyntaxError, "VALUES lists must all be the same length",
                    NodeLocation(items.Get(0)));
      }
    }
    for (const auto& list : select.values_lists()) {
      const auto& items = list.list().items();
      check_count(items.size(), items.size() > static_cast<int>(targets.size())
                                    ? NodeLocation(items.Get(static_cast<int>(targets.size())))
                                    : -1);
      std::vector<pb::ScalarExpr> map;
      for (const auto& c : table.columns) map.push_back(NullExpr(c.type));
      for (int i = 0; i < items.size(); ++i) {
        const pg_query::Node& item = items.Get(i);
        const std::uint32_t column = targets[static_cast<std::size_t>(i)];
        if (item.has_set_to_default()) continue;  // NULL: no column has another default
        map[column] = DmlAssign(binder, DmlBindValue(binder, item, context, table.columns[column]),
                                table.columns[column], NodeLocation(item));
      }
      inputs.push_back(
          MfpPlan(one.plan, std::move(map), {}, Iota(one.columns.size(), one.columns.size() + n)));
    }
  } else {
    // A query: its columns assigned to the targets in order.
    std::vector<std::string> names;
    Relation source = binder.BindNested(insert.select_stmt(), nullptr, &names);
    const std::size_t width = source.columns.size();
    const bool positional =
        PositionalTargets(select) && select.target_list_size() == static_cast<int>(width);
    auto location_of = [&](std::size_t i) {
      return positional ? select.target_list(static_cast<int>(i)).res_target().location() : -1;
    };
    const int extra = width > targets.size() ? location_of(targets.size()) : -1;
    check_count(width, extra);
    std::vector<pb::ScalarExpr> map;
    for (const auto& c : table.columns) map.push_back(NullExpr(c.type));
    for (std::size_t i = 0; i < width; ++i) {
      const std::uint32_t column = targets[i];
      const ScopeColumn& from = source.columns[i];
      BoundExpr e;
      const std::optional<std::string> unknown = UnknownConstant(select, i);
      const int location = location_of(i);
      if (unknown.has_value()) {
        e.literal = *unknown;  // type unknown: parsed as the column's
      } else if (from.untyped_null) {
        e.type = pb::SCALAR_TYPE_UNSPECIFIED;  // a bare NULL: the column's type
      } else {
        e.expr = ColumnExpr(static_cast<std::uint32_t>(i));
        e.type = from.type;
        e.mods = from.mods;
      }
      map[column] = DmlAssign(binder, std::move(e), table.columns[column], location);
    }
    inputs.push_back(MfpPlan(std::move(source.plan), std::move(map), {}, Iota(width, width + n)));
  }
  PlannedRelation out;
  out.plan = inputs.size() == 1 ? std::move(inputs[0]) : UnionPlan(std::move(inputs));
  out.columns = table.columns;
  return out;
}

PlannedRelation DmlUpdate(Binder& binder, const pg_query::UpdateStmt& update,
                          const CatalogObject& table) {
  if (update.from_clause_size() > 0) {
    binder.Fail(sqlstate::kFeatureNotSupported, "UPDATE … FROM is not supported",
                NodeLocation(update.from_clause(0)));
  }
  Relation r = DmlMatching(binder, table, update.relation(),
                           update.has_where_clause() ? &update.where_clause() : nullptr);
  const std::size_t n = table.columns.size();
  // The assignments, by column: SET c = e, SET (a, b) = (e1, e2), DEFAULT.
  std::vector<const pg_query::Node*> values(n, nullptr);
  std::vector<int> locations(n, -1);
  std::vector<bool> assigned(n, false);
  for (const auto& t : update.target_list()) {
    const auto& target = t.res_target();
    const std::uint32_t column = DmlColumn(binder, table, target.name(), target.location());
    if (target.indirection_size() > 0) {
      binder.Fail(sqlstate::kFeatureNotSupported,
                  "subscripts and field selection in SET are not supported", target.location());
    }
    if (assigned[column]) {
      binder.Fail(sqlstate::kSyntaxError,  // PostgreSQL gives no position
                  "multiple assignments to same column \"" + target.name() + "\"");
    }
    assigned[column] = true;
    const pg_query::Node* value = &target.val();
    if (value->has_multi_assign_ref()) {
      const auto& multi = value->multi_assign_ref();
      if (!multi.source().has_row_expr() ||
          multi.source().row_expr().args_size() != multi.ncolumns() || multi.colno() < 1 ||
          multi.colno() > multi.ncolumns()) {
        binder.Fail(sqlstate::kFeatureNotSupported,
                    "SET (…) = other than a list of expressions is not supported",
                    target.location());
      }
      value = &multi.source().row_expr().args(multi.colno() - 1);
    }
    values[column] = value;
    locations[column] = NodeLocation(*value) >= 0 ? NodeLocation(*value) : target.location();
  }
  // Subqueries in SET: marks appended after the table's columns, as a select list's.
  std::map<const pg_query::SubLink*, BoundExpr> marks;
  for (const pg_query::Node* value : values) {
    if (value != nullptr) r = binder.AddSubqueryMarks(std::move(r), *value, nullptr, &marks);
  }
  ExprContext context;
  context.input = &r;
  context.clause = "UPDATE";
  context.subqueries = &marks;
  std::vector<pb::ScalarExpr> map;
  for (std::uint32_t c = 0; c < n; ++c) {
    if (values[c] == nullptr) {
      map.push_back(ColumnExpr(c));
    } else if (values[c]->has_set_to_default()) {
      map.push_back(NullExpr(table.columns[c].type));
    } else {
      map.push_back(DmlAssign(binder, DmlBindValue(binder, *values[c], context, table.columns[c]),
                              table.columns[c], locations[c]));
    }
  }
  const std::size_t m = r.columns.size();
  std::vector<std::uint32_t> projection = Iota(0, n);
  for (std::size_t c = 0; c < n; ++c) projection.push_back(static_cast<std::uint32_t>(m + c));
  PlannedRelation out;
  out.plan = MfpPlan(std::move(r.plan), std::move(map), {}, std::move(projection));
  out.columns = table.columns;
  for (const auto& c : table.columns) out.columns.push_back(c);
  return out;
}

PlannedRelation DmlDelete(Binder& binder, const pg_query::DeleteStmt& del,
                          const CatalogObject& table) {
  if (del.using_clause_size() > 0) {
    binder.Fail(sqlstate::kFeatureNotSupported, "DELETE … USING is not supported",
                NodeLocation(del.using_clause(0)));
  }
  Relation r = DmlMatching(binder, table, del.relation(),
                           del.has_where_clause() ? &del.where_clause() : nullptr);
  PlannedRelation out;
  out.plan = std::move(r.plan);
  out.columns = table.columns;
  return out;
}

}  // namespace

SqlResult<DmlPlan> PlanDml(const pg_query::Node& statement, const CatalogReader& catalog,
                           std::string_view sql, UnknownTypes* unknowns) {
  Binder binder(catalog, sql);
  binder.set_unknown_types(unknowns);
  DmlPlan out;
  try {
    const CatalogObject* table = nullptr;
    switch (statement.node_case()) {
      case pg_query::Node::kInsertStmt: {
        const auto& insert = statement.insert_stmt();
        out.kind = DmlKind::kInsert;
        table = &DmlTarget(binder, catalog, insert.relation(), out.kind);
        RefuseCommon(binder, insert.returning_list(), insert.has_with_clause(), "INSERT");
        out.rows = DmlInsert(binder, insert, *table);
        break;
      }
      case pg_query::Node::kUpdateStmt: {
        const auto& update = statement.update_stmt();
        out.kind = DmlKind::kUpdate;
        table = &DmlTarget(binder, catalog, update.relation(), out.kind);
        RefuseCommon(binder, update.returning_list(), update.has_with_clause(), "UPDATE");
        out.rows = DmlUpdate(binder, update, *table);
        break;
      }
      case pg_query::Node::kDeleteStmt: {
        const auto& del = statement.delete_stmt();
        out.kind = DmlKind::kDelete;
        table = &DmlTarget(binder, catalog, del.relation(), out.kind);
        RefuseCommon(binder, del.returning_list(), del.has_with_clause(), "DELETE");
        out.rows = DmlDelete(binder, del, *table);
        break;
      }
      default:
        binder.Fail(sqlstate::kFeatureNotSupported,
                    NodeKindName(statement) + " is not INSERT, UPDATE or DELETE",
                    NodeLocation(statement));
    }
    out.object = table->name;
    out.table_id = table->id;
    out.columns = table->columns;
    out.primary_key = table->primary_key;
  } catch (const PlanFailure& failure) {
    return failure.error;
  }
  out.rows.imports = binder.imports();
  out.rows.import_objects = binder.import_objects();
  // The replica's checks, here: a failure is the planner's bug. The output's nullability is the
  // plan's; the table's NOT NULL is BuildWrite's to check.
  std::vector<pb::ScalarType> types;
  for (const auto& c : out.rows.columns) types.push_back(c.type);
  pb::Schema schema;
  if (auto failed = CheckPlanned(out.rows.plan, out.rows.imports, types, &schema)) return *failed;
  for (int i = 0; i < schema.columns_size(); ++i) {
    out.rows.columns[static_cast<std::size_t>(i)].nullable = schema.columns(i).nullable();
  }
  return out;
}

}  // namespace tandem::frontend::plan
