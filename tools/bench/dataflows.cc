#include "tools/bench/dataflows.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace tandem::bench {

namespace {

pb::DataflowDescription* NewDataflow(pb::Command& c, const std::string& name) {
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name(name);
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  return d;
}

void AddKeyValueSource(pb::DataflowDescription* d, const std::string& id, const KeyValue& kv) {
  auto* s = d->add_source_imports();
  s->set_id(id);
  auto* g = s->mutable_source()->mutable_key_value();
  g->set_keys(kv.keys);
  g->set_updates_per_tick(kv.updates_per_tick);
  g->set_tick_interval_us(kv.tick_interval_us);
  g->set_seed(kv.seed);
  for (const char* name : {"key", "value"}) {
    auto* col = s->mutable_schema()->add_columns();
    col->set_name(name);
    col->set_type(pb::INT64);
  }
}

void AddIndex(pb::DataflowDescription* d, const std::string& id, const std::string& on) {
  auto* x = d->add_index_exports();
  x->set_id(id);
  x->set_on(on);
  x->add_key(0);
}

}  // namespace

// source `src` → index `index` by key.
pb::Command IndexedSource(const std::string& src, const std::string& index, const KeyValue& kv) {
  pb::Command c;
  auto* d = NewDataflow(c, "bench-index-" + index);
  AddKeyValueSource(d, src, kv);
  AddIndex(d, index, src);
  return c;
}

// source `src` → (optionally an index by key) and Reduce(count, sum(value)) grouped by
// key % groups, indexed as `reduce_index`.
pb::Command ReducedSource(const std::string& src, const std::string& src_index,
                          const std::string& reduce, const std::string& reduce_index,
                          const KeyValue& kv, std::int64_t groups) {
  pb::Command c;
  auto* d = NewDataflow(c, "bench-reduce-" + reduce);
  AddKeyValueSource(d, src, kv);
  if (!src_index.empty()) AddIndex(d, src_index, src);
  auto* b = d->add_objects_to_build();
  b->set_id(reduce);
  auto* r = b->mutable_plan()->mutable_reduce();
  auto* m = r->mutable_input()->mutable_mfp();
  m->mutable_input()->mutable_get()->set_id(src);
  auto* mod = m->mutable_mfp()->add_map()->mutable_binary();
  mod->set_func(pb::MOD);
  mod->mutable_left()->set_column(0);
  mod->mutable_right()->mutable_literal()->mutable_value()->set_int64(groups);
  mod->mutable_right()->mutable_literal()->set_type(pb::INT64);
  m->mutable_mfp()->add_projection(2);  // group
  m->mutable_mfp()->add_projection(1);  // value
  r->add_group_key(0);
  r->add_aggregates()->set_func(pb::COUNT);
  auto* sum = r->add_aggregates();
  sum->set_func(pb::SUM);
  sum->set_column(1);
  AddIndex(d, reduce_index, reduce);
  return c;
}

namespace {

// Map(g = column `key` % groups) on `input`, projected to `projection` (g is the column after the
// input's `width` columns).
pb::Plan ModGroup(pb::Plan input, std::uint32_t key, std::int64_t groups,
                  std::initializer_list<std::uint32_t> projection) {
  pb::Plan p;
  auto* m = p.mutable_mfp();
  *m->mutable_input() = std::move(input);
  auto* mod = m->mutable_mfp()->add_map()->mutable_binary();
  mod->set_func(pb::MOD);
  mod->mutable_left()->set_column(key);
  mod->mutable_right()->mutable_literal()->mutable_value()->set_int64(groups);
  mod->mutable_right()->mutable_literal()->set_type(pb::INT64);
  for (auto c : projection) m->mutable_mfp()->add_projection(c);
  return p;
}

pb::Plan GetPlan(const std::string& id) {
  pb::Plan p;
  p.mutable_get()->set_id(id);
  return p;
}

}  // namespace

pb::Command GroupedTarget::Create(const KeyValue& kv) const {
  pb::Command c;
  auto* d = NewDataflow(c, "bench-slow-path-" + index);
  AddKeyValueSource(d, src, kv);
  if (!arranged) {
    AddIndex(d, index, src);
    return c;
  }
  auto* b = d->add_objects_to_build();
  b->set_id(view);
  *b->mutable_plan() = ModGroup(GetPlan(src), 0, groups, {2, 0, 1});  // (g, key, value)
  AddIndex(d, index, view);
  return c;
}

pb::IndexImport GroupedTarget::Import() const {
  pb::IndexImport imp;
  imp.set_id(index);
  imp.set_on(arranged ? view : src);
  const std::vector<std::string> columns = arranged ? std::vector<std::string>{"g", "key", "value"}
                                                    : std::vector<std::string>{"key", "value"};
  for (const std::string& name : columns) {
    auto* col = imp.mutable_schema()->add_columns();
    col->set_name(name);
    col->set_type(pb::INT64);
  }
  imp.add_key(0);
  return imp;
}

pb::Command GroupedTarget::OneShot(std::uint64_t as_of, const std::string& result,
                                   const std::string& build) const {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name("bench-slow-path-query");
  d->set_class_(pb::ONE_SHOT_READ);
  d->mutable_as_of()->add_elements(as_of);
  d->mutable_until()->add_elements(as_of + 1);
  *d->add_index_imports() = Import();
  auto* b = d->add_objects_to_build();
  b->set_id(build);
  auto* r = b->mutable_plan()->mutable_reduce();
  std::uint32_t value = 2;
  if (arranged) {
    *r->mutable_input() = GetPlan(view);  // (g, key, value), arranged by g
  } else {
    *r->mutable_input() = ModGroup(GetPlan(src), 0, groups, {2, 1});  // (g, value)
    value = 1;
  }
  r->add_group_key(0);
  r->add_aggregates()->set_func(pb::COUNT);
  auto* sum = r->add_aggregates();
  sum->set_func(pb::SUM);
  sum->set_column(value);
  AddIndex(d, result, build);
  return c;
}

std::vector<pb::Command> JoinTarget::Create(const KeyValue& fact_kv, const KeyValue& dim_kv) const {
  std::vector<pb::Command> out;
  if (imported) {
    pb::Command c;
    auto* d = NewDataflow(c, "bench-join-dim-" + dim_index);
    AddKeyValueSource(d, dim, dim_kv);
    AddIndex(d, dim_index, dim);
    out.push_back(std::move(c));
  }
  pb::Command c;
  auto* d = NewDataflow(c, "bench-join-" + join_index);
  AddKeyValueSource(d, fact, fact_kv);
  if (imported) {
    auto* imp = d->add_index_imports();
    imp->set_id(dim_index);
    imp->set_on(dim);
    for (const char* name : {"key", "value"}) {
      auto* col = imp->mutable_schema()->add_columns();
      col->set_name(name);
      col->set_type(pb::INT64);
    }
    imp->add_key(0);
  } else {
    AddKeyValueSource(d, dim, dim_kv);
  }
  auto* b = d->add_objects_to_build();
  b->set_id(join);
  auto* j = b->mutable_plan()->mutable_join();
  *j->mutable_left() = ModGroup(GetPlan(fact), 0, static_cast<std::int64_t>(dim_keys),
                                {0, 1, 2});  // (key, value, fk)
  *j->mutable_right() = GetPlan(dim);
  j->add_left_key(2);
  j->add_right_key(0);
  j->set_kind(pb::INNER);
  AddIndex(d, join_index, join);
  out.push_back(std::move(c));
  return out;
}

std::vector<std::string> JoinTarget::Built() const {
  if (imported) return {dim_index, join_index};
  return {join_index};
}

}  // namespace tandem::bench
