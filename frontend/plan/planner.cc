// PlanQuery: binds the query (binder.h), finishes it for the top level, and checks the plan as
// the replica will (ipc/plan_typing.h) before anyone sees it.
#include "frontend/plan/planner.h"

#include <map>
#include <utility>

#include "frontend/plan/binder.h"
#include "ipc/plan_typing.h"

namespace tandem::frontend::plan {

namespace {

SqlError Internal(const std::string& why) {
  return SqlError(sqlstate::kInternalError, "internal error in the planner: " + why);
}

}  // namespace

std::optional<SqlError> CheckPlanned(const pb::Plan& plan,
                                     const std::vector<pb::IndexImport>& imports,
                                     const std::vector<pb::ScalarType>& types, pb::Schema* schema) {
  std::map<std::string, pb::Schema> scope;
  for (const auto& import : imports) {
    scope[import.on()] = import.schema();
    scope[import.id()] = import.schema();
  }
  if (plan.ByteSizeLong() > kMaxPlanBytes) {
    return SqlError(sqlstate::kStatementTooComplex,
                    "statement is too complex: its plan would be over " +
                        std::to_string(kMaxPlanBytes) + " bytes");
  }
  const int nesting = PlanNesting(plan);
  if (nesting > kMaxPlanNesting) {
    return SqlError(sqlstate::kStatementTooComplex,
                    "statement is too complex: its plan nests " + std::to_string(nesting) +
                        " levels (at most " + std::to_string(kMaxPlanNesting) + ")");
  }
  const ipc::PlanChecker checker(scope, scope);
  auto checked = checker.Check(plan);
  if (!checked.ok()) return Internal("the plan does not type-check: " + checked.status().message());
  if (static_cast<std::size_t>(checked->columns_size()) != types.size()) {
    return Internal("the plan has " + std::to_string(checked->columns_size()) +
                    " columns, the binder " + std::to_string(types.size()));
  }
  for (int i = 0; i < checked->columns_size(); ++i) {
    if (checked->columns(i).type() != types[static_cast<std::size_t>(i)]) {
      return Internal("column " + std::to_string(i) + " is " +
                      ipc::TypeName(checked->columns(i).type()) + " in the plan");
    }
  }
  *schema = std::move(*checked);
  return std::nullopt;
}

SqlResult<PlannedRelation> PlanQuery(const pg_query::Node& query, const CatalogReader& catalog,
                                     std::string_view sql, UnknownTypes* unknowns) {
  Binder binder(catalog, sql);
  binder.set_unknown_types(unknowns);
  PlannedRelation out;
  OrderedRelation ordered;
  try {
    ordered = binder.BindQuery(query, nullptr);
  } catch (const PlanFailure& failure) {
    return failure.error;
  }
  // The top level's ORDER BY / LIMIT / OFFSET are the Finishing; hidden ORDER BY keys are
  // projected away by it.
  Relation& r = ordered.relation;
  if (ordered.limit.has_value() && *ordered.limit == 0) {
    try {
      r.plan = binder.NoRows(r);
    } catch (const PlanFailure& failure) {
      return failure.error;
    }
    ordered.limit.reset();
  }
  for (const auto& o : ordered.order) *out.finishing.add_order_by() = o;
  if (ordered.limit.has_value()) out.finishing.set_limit(*ordered.limit);
  out.finishing.set_offset(ordered.offset);
  if (r.columns.size() > ordered.visible) {
    for (std::size_t i = 0; i < ordered.visible; ++i) {
      out.finishing.add_project(static_cast<std::uint32_t>(i));
    }
  }
  out.plan = std::move(r.plan);
  out.imports = binder.imports();
  out.import_objects = binder.import_objects();

  // The replica's checks, here: a failure is the planner's bug.
  std::vector<pb::ScalarType> types;
  for (const auto& c : r.columns) types.push_back(c.type);
  pb::Schema schema;
  if (auto failed = CheckPlanned(out.plan, out.imports, types, &schema)) return *failed;
  for (int i = 0; i < schema.columns_size() && static_cast<std::size_t>(i) < ordered.visible; ++i) {
    // The modifiers PostgreSQL keeps for the column (a column's numeric(10,2), a cast's
    // varchar(5)): RowDescription's type modifier.
    out.columns.push_back(CatalogColumn{ordered.names[static_cast<std::size_t>(i)],
                                        schema.columns(i).type(), schema.columns(i).nullable(),
                                        r.columns[static_cast<std::size_t>(i)].mods});
  }
  for (const auto& o : out.finishing.order_by()) {
    if (o.column() >= static_cast<std::uint32_t>(schema.columns_size())) {
      return Internal("ORDER BY column out of range");
    }
  }
  return out;
}

}  // namespace tandem::frontend::plan
