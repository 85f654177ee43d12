// A SELECT one index answers (DESIGN §15 "a peek"), recognised in a planned relation, and
// EXPLAIN's text.
#include <map>
#include <set>
#include <utility>

#include "frontend/plan/binder.h"
#include "ipc/plan_typing.h"

namespace tandem::frontend::plan {

namespace {

// `outer` applied after `inner`, as one map/filter/project over `input`'s rows. The outer maps
// are evaluated only on rows the inner predicates keep (IF on their conjunction): as separate
// stages, an outer map never sees a row the inner filter dropped, so must its error not.
std::optional<pb::MapFilterProject> Compose(const pb::MapFilterProject& inner,
                                            const pb::MapFilterProject& outer,
                                            const pb::Schema& input) {
  const std::uint32_t n = static_cast<std::uint32_t>(input.columns_size());
  const std::uint32_t m1 = static_cast<std::uint32_t>(inner.map_size());
  std::vector<std::uint32_t> p1;
  if (inner.projection_size() == 0) {
    p1 = Iota(0, n + m1);
  } else {
    p1.assign(inner.projection().begin(), inner.projection().end());
  }
  const std::uint32_t k = static_cast<std::uint32_t>(p1.size());
  const std::uint32_t m2 = static_cast<std::uint32_t>(outer.map_size());
  // Column j of the outer stage's row (its input, then its maps) in the composed row.
  std::vector<std::uint32_t> remap = p1;
  for (std::uint32_t i = 0; i < m2; ++i) remap.push_back(n + m1 + i);
  std::vector<pb::Column> columns(input.columns().begin(), input.columns().end());
  pb::MapFilterProject out;
  for (const auto& e : inner.map()) {
    auto type = ipc::ExprType(e, columns);
    if (!type.ok()) return std::nullopt;
    columns.push_back(*type);
    *out.add_map() = e;
  }
  std::size_t bytes = out.ByteSizeLong();
  std::optional<pb::ScalarExpr> guard;
  for (const auto& p : inner.predicates()) {
    guard = guard ? Binary(pb::AND, *guard, p) : p;
  }
  for (const auto& e : outer.map()) {
    pb::ScalarExpr mapped = Renumber(e, remap);
    auto type = ipc::ExprType(mapped, columns);
    if (!type.ok()) return std::nullopt;
    if (guard.has_value() && mapped.kind_case() != pb::ScalarExpr::kColumn &&
        mapped.kind_case() != pb::ScalarExpr::kLiteral) {
      mapped = IfThenElse(*guard, std::move(mapped), NullExpr(type->type()));
      type = ipc::ExprType(mapped, columns);
      if (!type.ok()) return std::nullopt;
    }
    // Each guarded map repeats the filter: a peek whose mfp would be large is not one.
    bytes += mapped.ByteSizeLong();
    if (bytes > kMaxPlanBytes) return std::nullopt;
    columns.push_back(*type);
    *out.add_map() = std::move(mapped);
  }
  for (const auto& p : inner.predicates()) *out.add_predicates() = p;
  for (const auto& p : outer.predicates()) *out.add_predicates() = Renumber(p, remap);
  if (outer.projection_size() == 0) {
    for (auto c : remap) out.add_projection(c);
  } else {
    for (auto c : outer.projection()) out.add_projection(remap.at(c));
  }
  (void)k;
  return out;
}

// The values `predicate` requires of input column `column` (< arity): `c = v` or an OR of them.
bool EqualityValues(const pb::ScalarExpr& e, std::uint32_t column, std::vector<pb::Datum>* out) {
  if (e.kind_case() != pb::ScalarExpr::kBinary) return false;
  const auto& b = e.binary();
  if (b.func() == pb::OR) {
    std::vector<pb::Datum> left, right;
    if (!EqualityValues(b.left(), column, &left) || !EqualityValues(b.right(), column, &right)) {
      return false;
    }
    for (auto& d : left) out->push_back(std::move(d));
    for (auto& d : right) out->push_back(std::move(d));
    return true;
  }
  if (b.func() != pb::EQ) return false;
  const pb::ScalarExpr* col = &b.left();
  const pb::ScalarExpr* lit = &b.right();
  if (col->kind_case() != pb::ScalarExpr::kColumn) std::swap(col, lit);
  if (col->kind_case() != pb::ScalarExpr::kColumn || col->column() != column ||
      lit->kind_case() != pb::ScalarExpr::kLiteral || lit->literal().value().has_null()) {
    return false;
  }
  // A key lookup finds equal encodings: a numeric (1.5 = 1.50) and an interval ('1 mon' =
  // '30 days') equal in value may be stored with another encoding, so they are no keys.
  const auto kind = lit->literal().value().kind_case();
  if (kind == pb::Datum::kNumeric || kind == pb::Datum::kInterval) return false;
  out->push_back(lit->literal().value());
  return true;
}

// The key rows of a lookup: every key column equal to constants in a predicate of `mfp` over
// the input's own columns (the predicates stay in the mfp: they hold on every row the keys
// select). None when a key column is not fixed, or the rows would be more than kMaxPeekKeys.
template <typename Key>
std::optional<std::vector<pb::Row>> KeysFor(const pb::MapFilterProject& mfp, const Key& key) {
  std::vector<std::vector<pb::Datum>> values;
  for (auto key_column : key) {
    std::vector<pb::Datum> found;
    for (const auto& p : mfp.predicates()) {
      std::vector<pb::Datum> v;
      if (EqualityValues(p, key_column, &v)) {
        found = std::move(v);
        break;
      }
    }
    if (found.empty()) return std::nullopt;
    values.push_back(std::move(found));
  }
  if (values.empty()) return std::nullopt;
  std::size_t total = 1;
  for (const auto& v : values) {
    total *= v.size();
    if (total > kMaxPeekKeys) return std::nullopt;
  }
  std::vector<pb::Row> rows(1);
  for (const auto& v : values) {
    std::vector<pb::Row> next;
    for (const auto& row : rows) {
      for (const auto& d : v) {
        pb::Row r = row;
        *r.add_datums() = d;
        next.push_back(std::move(r));
      }
    }
    rows = std::move(next);
  }
  // One lookup per distinct key.
  std::set<std::string> seen;
  std::vector<pb::Row> keys;
  for (auto& row : rows) {
    if (seen.insert(row.SerializeAsString()).second) keys.push_back(std::move(row));
  }
  return keys;
}

}  // namespace

std::optional<PeekPlan> AsPeek(const PlannedRelation& relation) {
  // Map/filter/projects over one Get, innermost first.
  std::vector<const pb::MapFilterProject*> stages;
  const pb::Plan* plan = &relation.plan;
  for (int depth = 0; plan->kind_case() == pb::Plan::kMfp; ++depth) {
    if (depth > kMaxPlanNesting) return std::nullopt;
    stages.insert(stages.begin(), &plan->mfp().mfp());
    plan = &plan->mfp().input();
  }
  if (plan->kind_case() != pb::Plan::kGet) return std::nullopt;
  const pb::IndexImport* import = nullptr;
  std::size_t which = 0;
  for (std::size_t i = 0; i < relation.imports.size(); ++i) {
    if (relation.imports[i].on() == plan->get().id()) {
      import = &relation.imports[i];
      which = i;
    }
  }
  if (import == nullptr) return std::nullopt;
  PeekPlan peek;
  peek.index_id = import->id();
  peek.object = relation.import_objects.at(which);
  peek.finishing = relation.finishing;
  for (const auto* stage : stages) {
    auto composed = Compose(peek.mfp, *stage, import->schema());
    if (!composed.has_value()) return std::nullopt;
    peek.mfp = std::move(*composed);
  }
  if (auto keys = KeysFor(peek.mfp, import->key())) peek.keys = std::move(*keys);
  return peek;
}

std::optional<PeekPlan> AsPeek(const PlannedRelation& relation, const CatalogReader& catalog) {
  auto peek = AsPeek(relation);
  if (!peek.has_value() || !peek->keys.empty()) return peek;
  // Another index on the same object whose whole key the predicates fix: a keyed peek of it.
  const auto indexes = catalog.IndexesOn(peek->object);
  for (std::size_t i = 1; i < indexes.size(); ++i) {
    if (auto keys = KeysFor(peek->mfp, indexes[i]->key)) {
      peek->index_id = indexes[i]->id;
      peek->keys = std::move(*keys);
      return peek;
    }
  }
  return peek;
}

namespace {

std::string ExplainWith(const PlannedRelation& relation, const std::optional<PeekPlan>& peek) {
  std::string out;
  if (peek.has_value()) {
    out = "Peek of index " + peek->index_id + " on " + peek->object;
    out += peek->keys.empty() ? " (the whole index)\n"
                              : " (" + std::to_string(peek->keys.size()) + " key lookups)\n";
  } else {
    out = "One-shot dataflow\n";
    for (std::size_t i = 0; i < relation.imports.size(); ++i) {
      out +=
          "  reads index " + relation.imports[i].id() + " on " + relation.import_objects[i] + "\n";
    }
  }
  const auto& f = relation.finishing;
  if (f.order_by_size() > 0 || f.has_limit() || f.offset() > 0) {
    out += "  finishing:";
    if (f.order_by_size() > 0) out += " order by " + std::to_string(f.order_by_size()) + " columns";
    if (f.has_limit()) out += " limit " + std::to_string(f.limit());
    if (f.offset() > 0) out += " offset " + std::to_string(f.offset());
    out += "\n";
  }
  return out;
}

}  // namespace

std::string Explain(const PlannedRelation& relation) {
  return ExplainWith(relation, AsPeek(relation));
}

std::string Explain(const PlannedRelation& relation, const CatalogReader& catalog) {
  return ExplainWith(relation, AsPeek(relation, catalog));
}

}  // namespace tandem::frontend::plan
