// Representative protocol messages and small builders for tests, the fuzz target and its seed
// corpus generator. No gtest here: the fuzz target includes it too.
//
// The sample epoch (Hello, then PrimaryDataflow()) knows:
//   u1  counter source            [INT64]
//   u2  key_value source          [INT64 key, INT64 value]
//   u3  log source                [STRING nullable name, FLOAT64 score, BOOL ok]
//   u4  Mfp(u2): key, value * 2 where value > 0         [INT64, INT64]
//   u5  Reduce(u2) by key: count, sum, min, max         [INT64, INT64, INT64?, INT64?, INT64?]
//   u6  Union(u1, Mfp(u2) value)                        [INT64]
//   u7  Distinct(u6)
//   u8  Mfp(u3): name if score > 0.5 else NULL, where ok and name is not null
//   u9  index on u4 key [0]; u10 index on u5 key [0]; u11 index on u3 key [0] (nullable STRING)
// SecondaryDataflowFromSources() imports key_value source u19 and builds u20 from it, indexed by
// u21. SecondaryDataflow() builds the same u20 and u21 from u4 read through an import of index u9
// (DESIGN §8), from as_of 5. OneShotOfU9() is a ONE_SHOT_READ of u9: t2 = Reduce(u4) by column 1,
// indexed by t1. Import(), EmptyOneShot() and OneShot() build others.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ipc/codec.h"

namespace tandem::ipc::samples {

// ---- values and expressions

inline pb::Datum IntDatum(std::int64_t v) {
  pb::Datum d;
  d.set_int64(v);
  return d;
}
inline pb::Datum FloatDatum(double v) {
  pb::Datum d;
  d.set_float64(v);
  return d;
}
inline pb::Datum StringDatum(std::string v) {
  pb::Datum d;
  d.set_string(std::move(v));
  return d;
}
inline pb::Datum BoolDatum(bool v) {
  pb::Datum d;
  d.set_bool_(v);
  return d;
}
inline pb::Datum NullDatum() {
  pb::Datum d;
  d.mutable_null();
  return d;
}

inline pb::Row MakeRow(std::vector<pb::Datum> datums) {
  pb::Row row;
  for (auto& d : datums) *row.add_datums() = std::move(d);
  return row;
}

inline pb::ScalarExpr Col(std::uint32_t c) {
  pb::ScalarExpr e;
  e.set_column(c);
  return e;
}
inline pb::ScalarExpr Lit(pb::Datum value, pb::ScalarType type) {
  pb::ScalarExpr e;
  *e.mutable_literal()->mutable_value() = std::move(value);
  e.mutable_literal()->set_type(type);
  return e;
}
inline pb::ScalarExpr IntLit(std::int64_t v) { return Lit(IntDatum(v), pb::INT64); }
inline pb::ScalarExpr Unary(pb::UnaryFunc f, pb::ScalarExpr operand) {
  pb::ScalarExpr e;
  e.mutable_unary()->set_func(f);
  *e.mutable_unary()->mutable_expr() = std::move(operand);
  return e;
}
inline pb::ScalarExpr Binary(pb::BinaryFunc f, pb::ScalarExpr l, pb::ScalarExpr r) {
  pb::ScalarExpr e;
  e.mutable_binary()->set_func(f);
  *e.mutable_binary()->mutable_left() = std::move(l);
  *e.mutable_binary()->mutable_right() = std::move(r);
  return e;
}
inline pb::ScalarExpr If(pb::ScalarExpr c, pb::ScalarExpr t, pb::ScalarExpr e) {
  pb::ScalarExpr x;
  *x.mutable_if_then_else()->mutable_cond() = std::move(c);
  *x.mutable_if_then_else()->mutable_then() = std::move(t);
  *x.mutable_if_then_else()->mutable_els() = std::move(e);
  return x;
}

inline pb::MapFilterProject Mfp(std::vector<pb::ScalarExpr> map,
                                std::vector<pb::ScalarExpr> predicates,
                                std::vector<std::uint32_t> projection) {
  pb::MapFilterProject mfp;
  for (auto& e : map) *mfp.add_map() = std::move(e);
  for (auto& e : predicates) *mfp.add_predicates() = std::move(e);
  for (auto c : projection) mfp.add_projection(c);
  return mfp;
}

// ---- schemas and plans

inline pb::Column MakeColumn(std::string name, pb::ScalarType type, bool nullable = false) {
  pb::Column c;
  c.set_name(std::move(name));
  c.set_type(type);
  c.set_nullable(nullable);
  return c;
}
inline pb::Schema MakeSchema(std::vector<pb::Column> columns) {
  pb::Schema s;
  for (auto& c : columns) *s.add_columns() = std::move(c);
  return s;
}
inline pb::Schema CounterSchema() { return MakeSchema({MakeColumn("n", pb::INT64)}); }
inline pb::Schema KeyValueSchema() {
  return MakeSchema({MakeColumn("key", pb::INT64), MakeColumn("value", pb::INT64)});
}
// k int64, s string (nullable), f float64 (nullable), b bool (nullable): one column of each kind
// the text formats parse.
inline pb::Schema WideSchema() {
  return MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("s", pb::STRING, true),
                     MakeColumn("f", pb::FLOAT64, true), MakeColumn("b", pb::BOOL, true)});
}
// One column of each type of DESIGN §16 (all nullable): price numeric(12,2), n int4, r float4,
// name varchar(5), code char(3), b bytea, d date, t time, ts timestamp, tz timestamptz,
// i interval, u uuid.
inline pb::Schema TypedSchema() {
  pb::Column price = MakeColumn("price", pb::NUMERIC, true);
  price.set_precision(12);
  price.set_scale(2);
  pb::Column name = MakeColumn("name", pb::STRING, true);
  name.set_length(5);
  pb::Column code = MakeColumn("code", pb::STRING, true);
  code.set_length(3);
  code.set_blank_padded(true);
  return MakeSchema({price, MakeColumn("n", pb::INT32, true), MakeColumn("r", pb::FLOAT32, true),
                     name, code, MakeColumn("b", pb::BYTEA, true), MakeColumn("d", pb::DATE, true),
                     MakeColumn("t", pb::TIME, true), MakeColumn("ts", pb::TIMESTAMP, true),
                     MakeColumn("tz", pb::TIMESTAMPTZ, true), MakeColumn("i", pb::INTERVAL, true),
                     MakeColumn("u", pb::UUID, true)});
}
inline pb::Schema LogSchema() {
  return MakeSchema({MakeColumn("name", pb::STRING, true), MakeColumn("score", pb::FLOAT64),
                     MakeColumn("ok", pb::BOOL)});
}

inline pb::Plan GetPlan(std::string id) {
  pb::Plan p;
  p.mutable_get()->set_id(std::move(id));
  return p;
}
inline pb::Plan MfpPlan(pb::Plan input, pb::MapFilterProject mfp) {
  pb::Plan p;
  *p.mutable_mfp()->mutable_input() = std::move(input);
  *p.mutable_mfp()->mutable_mfp() = std::move(mfp);
  return p;
}
inline pb::Plan ReducePlan(pb::Plan input, std::vector<std::uint32_t> group_key,
                           std::vector<std::pair<pb::AggregateFunc, std::uint32_t>> aggregates) {
  pb::Plan p;
  *p.mutable_reduce()->mutable_input() = std::move(input);
  for (auto c : group_key) p.mutable_reduce()->add_group_key(c);
  for (auto [func, column] : aggregates) {
    auto* a = p.mutable_reduce()->add_aggregates();
    a->set_func(func);
    a->set_column(column);
  }
  return p;
}
inline pb::Plan UnionPlan(std::vector<pb::Plan> inputs) {
  pb::Plan p;
  p.mutable_union_();
  for (auto& i : inputs) *p.mutable_union_()->add_inputs() = std::move(i);
  return p;
}
inline pb::Plan DistinctPlan(pb::Plan input) {
  pb::Plan p;
  *p.mutable_distinct()->mutable_input() = std::move(input);
  return p;
}

// Issue 14's plan nodes.
inline pb::Plan JoinPlan(pb::Plan left, pb::Plan right, std::vector<std::uint32_t> left_key,
                         std::vector<std::uint32_t> right_key, pb::JoinKind kind = pb::INNER) {
  pb::Plan p;
  auto* j = p.mutable_join();
  *j->mutable_left() = std::move(left);
  *j->mutable_right() = std::move(right);
  for (auto c : left_key) j->add_left_key(c);
  for (auto c : right_key) j->add_right_key(c);
  j->set_kind(kind);
  return p;
}

inline pb::ColumnOrder Order(std::uint32_t column, bool desc = false, bool nulls_last = false) {
  pb::ColumnOrder o;
  o.set_column(column);
  o.set_desc(desc);
  o.set_nulls_last(nulls_last);
  return o;
}

inline pb::Plan TopKPlan(pb::Plan input, std::vector<std::uint32_t> group_key,
                         std::vector<pb::ColumnOrder> order_by, std::optional<std::uint64_t> limit,
                         std::uint64_t offset = 0) {
  pb::Plan p;
  auto* t = p.mutable_top_k();
  *t->mutable_input() = std::move(input);
  for (auto c : group_key) t->add_group_key(c);
  for (auto& o : order_by) *t->add_order_by() = std::move(o);
  if (limit) t->set_limit(*limit);
  t->set_offset(offset);
  return p;
}

inline pb::Plan NegatePlan(pb::Plan input) {
  pb::Plan p;
  *p.mutable_negate()->mutable_input() = std::move(input);
  return p;
}

inline pb::Plan ThresholdPlan(pb::Plan input) {
  pb::Plan p;
  *p.mutable_threshold()->mutable_input() = std::move(input);
  return p;
}

// ---- dataflow pieces

inline pb::SourceImport CounterImport(std::string id) {
  pb::SourceImport s;
  s.set_id(std::move(id));
  s.mutable_source()->mutable_counter()->set_tick_interval_us(1000);
  s.mutable_source()->mutable_counter()->set_max(1000000);
  *s.mutable_schema() = CounterSchema();
  return s;
}
inline pb::SourceImport KeyValueImport(std::string id) {
  pb::SourceImport s;
  s.set_id(std::move(id));
  auto* kv = s.mutable_source()->mutable_key_value();
  kv->set_keys(100);
  kv->set_updates_per_tick(10);
  kv->set_tick_interval_us(500);
  kv->set_seed(7);
  *s.mutable_schema() = KeyValueSchema();
  return s;
}
inline pb::SourceImport LogImport(std::string id) {
  pb::SourceImport s;
  s.set_id(std::move(id));
  s.mutable_source()->mutable_log()->set_path("/var/tmp/tandem-scores.log");
  *s.mutable_schema() = LogSchema();
  return s;
}
// Tables and file sources (DESIGN §9). TableSchema(): [INT64 k, STRING? v, FLOAT64 score].
inline pb::Schema TableSchema() {
  return MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("v", pb::STRING, true),
                     MakeColumn("score", pb::FLOAT64)});
}
// A table source import of TableSchema(); with `upsert_key`, an upsert table.
inline pb::SourceImport TableImport(std::string id, std::vector<std::uint32_t> upsert_key = {}) {
  pb::SourceImport s;
  s.set_id(std::move(id));
  s.mutable_source()->mutable_table()->set_tick_interval_ms(100);
  *s.mutable_schema() = TableSchema();
  for (auto k : upsert_key) s.add_upsert_key(k);
  return s;
}
inline pb::SourceImport CsvImport(std::string id, std::vector<std::uint32_t> upsert_key = {}) {
  pb::SourceImport s;
  s.set_id(std::move(id));
  s.mutable_source()->mutable_csv()->set_path("/var/tmp/tandem-scores.csv");
  *s.mutable_schema() = TableSchema();
  for (auto k : upsert_key) s.add_upsert_key(k);
  return s;
}
inline pb::SourceImport JsonLinesImport(std::string id,
                                        std::vector<std::uint32_t> upsert_key = {}) {
  pb::SourceImport s;
  s.set_id(std::move(id));
  s.mutable_source()->mutable_json_lines()->set_path("/var/tmp/tandem-scores.jsonl");
  *s.mutable_schema() = TableSchema();
  for (auto k : upsert_key) s.add_upsert_key(k);
  return s;
}
inline pb::BuildDesc Build(std::string id, pb::Plan plan) {
  pb::BuildDesc b;
  b.set_id(std::move(id));
  *b.mutable_plan() = std::move(plan);
  return b;
}
inline pb::IndexExport Export(std::string id, std::string on, std::vector<std::uint32_t> key) {
  pb::IndexExport e;
  e.set_id(std::move(id));
  e.set_on(std::move(on));
  for (auto c : key) e.add_key(c);
  return e;
}

// A MAINTAINED dataflow from `as_of`, no until, with nothing in it yet.
inline pb::Command EmptyDataflow(std::string debug_name, std::uint64_t as_of = 0) {
  pb::Command c;
  auto* desc = c.mutable_create_dataflow()->mutable_desc();
  desc->set_debug_name(std::move(debug_name));
  desc->mutable_as_of()->add_elements(as_of);
  desc->mutable_until();
  desc->set_class_(pb::MAINTAINED);
  return c;
}
inline pb::DataflowDescription* Desc(pb::Command& c) {
  return c.mutable_create_dataflow()->mutable_desc();
}

// An import of index `id` on collection `on` (whose schema is `schema`), keyed by `key`: how a
// dataflow reads an index an earlier dataflow exports (DESIGN §8). The plan may Get `id` or `on`.
inline pb::IndexImport Import(std::string id, std::string on, pb::Schema schema,
                              std::vector<std::uint32_t> key) {
  pb::IndexImport i;
  i.set_id(std::move(id));
  i.set_on(std::move(on));
  *i.mutable_schema() = std::move(schema);
  for (auto c : key) i.add_key(c);
  return i;
}

// A ONE_SHOT_READ dataflow at `as_of` (until as_of + 1, the one time it computes), with nothing in
// it yet.
inline pb::Command EmptyOneShot(std::string debug_name, std::uint64_t as_of) {
  pb::Command c = EmptyDataflow(std::move(debug_name), as_of);
  Desc(c)->mutable_until()->add_elements(as_of + 1);
  Desc(c)->set_class_(pb::ONE_SHOT_READ);
  return c;
}

// A one-shot read at `as_of`: the index imports, builds and (transient) index exports given.
inline pb::Command OneShot(std::uint64_t as_of, std::vector<pb::IndexImport> imports,
                           std::vector<pb::BuildDesc> builds, std::vector<pb::IndexExport> exports,
                           std::string debug_name = "one-shot") {
  pb::Command c = EmptyOneShot(std::move(debug_name), as_of);
  auto* d = Desc(c);
  for (auto& i : imports) *d->add_index_imports() = std::move(i);
  for (auto& b : builds) *d->add_objects_to_build() = std::move(b);
  for (auto& e : exports) *d->add_index_exports() = std::move(e);
  return c;
}

// Two tables in one maintained dataflow (DESIGN §9): u40, plain, and u42, upsert by column 0
// (k), each of TableSchema() with an index on column 0 (u41, u43). Needs a validator with
// set_data_dir(true).
inline pb::Command TableDataflow() {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name("tables");
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  *d->add_source_imports() = TableImport("u40");
  *d->add_source_imports() = TableImport("u42", {0});
  auto* x = d->add_index_exports();
  x->set_id("u41");
  x->set_on("u40");
  x->add_key(0);
  x = d->add_index_exports();
  x->set_id("u43");
  x->set_on("u42");
  x->add_key(0);
  return c;
}

// TableUpdates of a WriteTable.
inline pb::TableUpdate RowUpdate(pb::Row row, std::int64_t diff = 1) {
  pb::TableUpdate u;
  *u.mutable_update()->mutable_row() = std::move(row);
  u.mutable_update()->set_diff(diff);
  return u;
}
inline pb::TableUpdate Upsert(pb::Row row) {
  pb::TableUpdate u;
  *u.mutable_upsert() = std::move(row);
  return u;
}
inline pb::TableUpdate Delete(pb::Row key) {
  pb::TableUpdate u;
  *u.mutable_delete_() = std::move(key);
  return u;
}
// A row of TableSchema().
inline pb::Row TableRow(std::int64_t k, std::string v = "x", double score = 1.5) {
  return MakeRow({IntDatum(k), StringDatum(std::move(v)), FloatDatum(score)});
}
inline pb::Command WriteTable(std::string uuid, std::string id,
                              std::vector<pb::TableUpdate> updates) {
  pb::Command c;
  auto* w = c.mutable_write_table();
  w->set_uuid(std::move(uuid));
  w->set_id(std::move(id));
  for (auto& u : updates) *w->add_updates() = std::move(u);
  return c;
}
// A write of two rows to the plain table u40 of TableDataflow().
inline pb::Command WriteU40(std::string uuid = "w-7c1e") {
  return WriteTable(std::move(uuid), "u40", {RowUpdate(TableRow(1)), RowUpdate(TableRow(2), -1)});
}
// An upsert and a delete on the upsert table u42 of TableDataflow().
inline pb::Command WriteU42(std::string uuid = "w-9d2f") {
  return WriteTable(std::move(uuid), "u42", {Upsert(TableRow(1)), Delete(MakeRow({IntDatum(2)}))});
}

// ---- commands (one representative, fully populated instance of each kind)

inline pb::Command Hello(std::string nonce = "controller-1") {
  pb::Command c;
  c.mutable_hello()->set_nonce(std::move(nonce));
  c.mutable_hello()->set_protocol_version(kProtocolVersion);
  return c;
}
// A read-only session's Hello (DESIGN §3): it starts no epoch.
inline pb::Command ObserverHello(std::string nonce = "observer-1") {
  pb::Command c = Hello(std::move(nonce));
  c.mutable_hello()->set_observer(true);
  return c;
}
// A writer session's Hello (DESIGN §9): an observer that may also send WriteTable.
inline pb::Command WriterHello(std::string nonce = "writer-1") {
  pb::Command c = ObserverHello(std::move(nonce));
  c.mutable_hello()->set_writer(true);
  return c;
}
inline pb::Command Goodbye() {
  pb::Command c;
  c.mutable_goodbye();
  return c;
}
inline pb::Command CreateInstance() {
  pb::Command c;
  auto* config = c.mutable_create_instance()->mutable_config();
  config->set_log_level("debug");
  (*config->mutable_params())["max_result_size"] = "1048576";
  (*config->mutable_params())["arrangement_merge_effort"] = "1000";
  return c;
}
inline pb::Command InitializationComplete() {
  pb::Command c;
  c.mutable_initialization_complete();
  return c;
}
inline pb::Command UpdateConfiguration() {
  pb::Command c;
  auto* params = c.mutable_update_configuration()->mutable_params();
  (*params)["enable_compute_interactive_runtime"] = "off";
  (*params)["max_result_size"] = "4096";
  (*params)["peek_timeout"] = "30s";
  return c;
}

inline pb::Command PrimaryDataflow() {
  pb::Command c = EmptyDataflow("primary", 0);
  auto* d = Desc(c);
  d->mutable_until()->add_elements(1000000);
  *d->add_source_imports() = CounterImport("u1");
  *d->add_source_imports() = KeyValueImport("u2");
  *d->add_source_imports() = LogImport("u3");
  *d->add_objects_to_build() =
      Build("u4", MfpPlan(GetPlan("u2"), Mfp({Binary(pb::MUL, Col(1), IntLit(2))},
                                             {Binary(pb::GT, Col(1), IntLit(0))}, {0, 2})));
  *d->add_objects_to_build() = Build(
      "u5",
      ReducePlan(GetPlan("u2"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}, {pb::MIN, 1}, {pb::MAX, 1}}));
  *d->add_objects_to_build() =
      Build("u6", UnionPlan({GetPlan("u1"), MfpPlan(GetPlan("u2"), Mfp({}, {}, {1}))}));
  *d->add_objects_to_build() = Build("u7", DistinctPlan(GetPlan("u6")));
  *d->add_objects_to_build() = Build(
      "u8",
      MfpPlan(GetPlan("u3"), Mfp({If(Binary(pb::GT, Col(1), Lit(FloatDatum(0.5), pb::FLOAT64)),
                                     Col(0), Lit(NullDatum(), pb::STRING)),
                                  Unary(pb::NEGATE, Col(1))},
                                 {Binary(pb::AND, Col(2), Unary(pb::IS_NOT_NULL, Col(0))),
                                  Unary(pb::NOT, Unary(pb::IS_NULL, Col(3)))},
                                 {3, 4, 2})));
  *d->add_index_exports() = Export("u9", "u4", {0});
  *d->add_index_exports() = Export("u10", "u5", {0});
  *d->add_index_exports() = Export("u11", "u3", {0});
  return c;
}

// Schema of u4 (and so of index u9), as PrimaryDataflow derives it.
inline pb::Schema U4Schema() {
  return MakeSchema({MakeColumn("key", pb::INT64), MakeColumn("", pb::INT64)});
}

// The import of sample index u9: on u4, key [0].
inline pb::IndexImport ImportU9() { return Import("u9", "u4", U4Schema(), {0}); }

// Maintained, from as_of 5: imports index u9 (on u4) and builds u20 = Reduce(u4) by column 1,
// indexed by u21. Accepted on the sample epoch (not beside SecondaryDataflowFromSources(), which
// creates the same ids).
inline pb::Command SecondaryDataflow() {
  pb::Command c = EmptyDataflow("secondary", 5);
  auto* d = Desc(c);
  *d->add_index_imports() = ImportU9();
  *d->add_objects_to_build() =
      Build("u20", ReducePlan(GetPlan("u4"), {1}, {{pb::COUNT, 0}, {pb::SUM, 0}}));
  *d->add_index_exports() = Export("u21", "u20", {0});
  return c;
}

// What SecondaryDataflow() does, built from a source instead of an index import: key_value source
// u19, u20 = Reduce(u19) by column 1 (value): count, sum of key, indexed by u21 on [0]. Accepted
// on the sample epoch.
inline pb::Command SecondaryDataflowFromSources() {
  pb::Command c = EmptyDataflow("secondary", 5);
  auto* d = Desc(c);
  *d->add_source_imports() = KeyValueImport("u19");
  *d->add_objects_to_build() =
      Build("u20", ReducePlan(GetPlan("u19"), {1}, {{pb::COUNT, 0}, {pb::SUM, 0}}));
  *d->add_index_exports() = Export("u21", "u20", {0});
  return c;
}

// One-shot read of index u9 at `as_of`: t2 = Reduce(u4) by column 1 (value): count, indexed by
// `index` on [0]. t2 is [INT64 value, INT64 count]. Accepted on the sample epoch.
inline pb::Command OneShotOfU9(std::uint64_t as_of = 5, std::string index = "t1") {
  return OneShot(as_of, {ImportU9()},
                 {Build("t2", ReducePlan(GetPlan("u4"), {1}, {{pb::COUNT, 0}}))},
                 {Export(std::move(index), "t2", {0})}, "count by value");
}

inline pb::Command Schedule(std::string id = "u9") {
  pb::Command c;
  c.mutable_schedule()->set_id(std::move(id));
  return c;
}
inline pb::Command AllowWrites(std::string id = "u9") {
  pb::Command c;
  c.mutable_allow_writes()->set_id(std::move(id));
  return c;
}
inline pb::Command AllowCompaction(std::string id = "u9",
                                   std::vector<std::uint64_t> frontier = {5}) {
  pb::Command c;
  c.mutable_allow_compaction()->set_id(std::move(id));
  auto* f = c.mutable_allow_compaction()->mutable_frontier();
  for (auto t : frontier) f->add_elements(t);
  return c;
}
inline pb::Command Drop(std::string id) { return AllowCompaction(std::move(id), {}); }

// A bare peek: `uuid` on index `id` at `t`, a full scan (or the rows under one int64 key).
inline pb::Command PeekAt(std::string uuid, std::string id, std::uint64_t t = 1,
                          std::optional<std::int64_t> key = std::nullopt) {
  pb::Command c;
  c.mutable_peek()->set_uuid(std::move(uuid));
  c.mutable_peek()->set_id(std::move(id));
  c.mutable_peek()->set_timestamp(t);
  if (key) *c.mutable_peek()->add_keys() = MakeRow({IntDatum(*key)});
  return c;
}

// Subscribe `uuid` to index `id` (DESIGN §10): as_of absent is "latest", up_to absent "until
// canceled".
inline pb::Command Subscribe(std::string uuid, std::string id,
                             std::optional<std::uint64_t> as_of = std::nullopt,
                             bool snapshot = true,
                             std::optional<std::uint64_t> up_to = std::nullopt) {
  pb::Command c;
  auto* s = c.mutable_subscribe();
  s->set_uuid(std::move(uuid));
  s->set_id(std::move(id));
  if (as_of) s->set_as_of(*as_of);
  s->set_snapshot(snapshot);
  if (up_to) s->set_up_to(*up_to);
  return c;
}
inline pb::Command CancelSubscribe(std::string uuid) {
  pb::Command c;
  c.mutable_cancel_subscribe()->set_uuid(std::move(uuid));
  return c;
}

// A peek on index u9 ([INT64 key, INT64 value2]) with every part populated.
inline pb::Command Peek(std::string uuid = "3f2a9c4e-5b1d-4e7a-9f00-1c2d3e4f5a6b") {
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(std::move(uuid));
  p->set_id("u9");
  p->set_timestamp(17);
  *p->add_keys() = MakeRow({IntDatum(3)});
  *p->add_keys() = MakeRow({IntDatum(-4)});
  *p->mutable_mfp() =
      Mfp({Binary(pb::ADD, Col(1), IntLit(1))}, {Binary(pb::GE, Col(0), IntLit(0))}, {0, 2});
  auto* order = p->mutable_finishing()->add_order_by();
  order->set_column(1);
  order->set_desc(true);
  order->set_nulls_last(true);
  p->mutable_finishing()->set_limit(10);
  p->mutable_finishing()->set_offset(2);
  p->mutable_finishing()->add_project(1);
  p->mutable_finishing()->add_project(0);
  return c;
}
inline pb::Command CancelPeek(std::string uuid = "3f2a9c4e-5b1d-4e7a-9f00-1c2d3e4f5a6b") {
  pb::Command c;
  c.mutable_cancel_peek()->set_uuid(std::move(uuid));
  return c;
}

// The sample epoch with §8 state in it: Hello, PrimaryDataflow(), AllowCompaction(u9, [5]), a
// maintained importer of u9 (u61: u4 by column 1, from as_of 5) and a one-shot read of u9 at 5
// (t9: u4 by column 1). Drop("u9") is refused on it (both import u9); OneShotOfU9() and
// SecondaryDataflow() are accepted. The fuzz target primes its validator with it.
inline std::vector<pb::Command> ImportingEpoch() {
  pb::Command importer = EmptyDataflow("importer", 5);
  *Desc(importer)->add_index_imports() = ImportU9();
  *Desc(importer)->add_index_exports() = Export("u61", "u4", {1});
  return {Hello(), PrimaryDataflow(), AllowCompaction("u9", {5}), std::move(importer),
          OneShot(5, {ImportU9()}, {}, {Export("t9", "u4", {1})}, "primed one-shot")};
}

// One of each kind, named for the corpus generator and for test output. In this order, a
// validator accepts every one of them (so not SecondaryDataflow(): see AllEncodableCommands()).
struct NamedCommand {
  const char* name;
  pb::Command command;
};
inline std::vector<NamedCommand> AllCommands() {
  return {{"hello", Hello()},
          {"create_instance", CreateInstance()},
          {"initialization_complete", InitializationComplete()},
          {"update_configuration", UpdateConfiguration()},
          {"create_dataflow_primary", PrimaryDataflow()},
          {"create_dataflow_secondary", SecondaryDataflowFromSources()},
          {"schedule", Schedule()},
          {"allow_writes", AllowWrites()},
          {"allow_compaction", AllowCompaction()},
          {"peek", Peek()},
          {"cancel_peek", CancelPeek()},
          {"subscribe", Subscribe("sub-1", "u9", 5, true, 9)},
          {"cancel_subscribe", CancelSubscribe("sub-1")},
          {"create_dataflow_one_shot", OneShotOfU9()},
          {"peek_one_shot", PeekAt("one-shot-1", "t1", 5)},
          {"allow_compaction_drop_one_shot", Drop("t1")},
          {"allow_compaction_drop", Drop("u9")},
          {"hello_observer", ObserverHello()},
          {"goodbye", Goodbye()}};
}

// AllCommands() plus well-encoded commands that sequence cannot hold (SecondaryDataflow() creates
// the ids SecondaryDataflowFromSources() does), so the codec tests cover their fields too.
inline std::vector<NamedCommand> AllEncodableCommands() {
  std::vector<NamedCommand> commands = AllCommands();
  commands.push_back({"create_dataflow_index_import", SecondaryDataflow()});
  commands.push_back({"create_dataflow_tables", TableDataflow()});
  commands.push_back({"write_table", WriteU40()});
  commands.push_back({"write_table_upsert", WriteU42()});
  commands.push_back({"hello_writer", WriterHello()});
  return commands;
}

// ---- responses (every kind, and every Status and PeekResponse variant)

inline pb::Response Frontiers() {
  pb::Response r;
  auto* f = r.mutable_frontiers();
  f->set_id("u9");
  f->mutable_write()->add_elements(12);
  f->mutable_input()->add_elements(11);
  f->mutable_output()->add_elements(10);
  return r;
}
inline pb::Response PeekRows() {
  pb::Response r;
  auto* p = r.mutable_peek_response();
  p->set_uuid("3f2a9c4e-5b1d-4e7a-9f00-1c2d3e4f5a6b");
  auto* rc = p->mutable_rows()->add_rows();
  *rc->mutable_row() =
      MakeRow({NullDatum(), BoolDatum(true), IntDatum(-3), FloatDatum(2.5), StringDatum("héllo")});
  rc->set_count(2);
  auto* rc2 = p->mutable_rows()->add_rows();
  *rc2->mutable_row() = MakeRow({IntDatum(INT64_MIN), FloatDatum(-0.0), StringDatum("")});
  rc2->set_count(1);
  return r;
}
inline pb::Response PeekError() {
  pb::Response r;
  r.mutable_peek_response()->set_uuid("e1");
  r.mutable_peek_response()->set_error("division by zero");
  return r;
}
inline pb::Response PeekCanceled() {
  pb::Response r;
  r.mutable_peek_response()->set_uuid("c1");
  r.mutable_peek_response()->mutable_canceled();
  return r;
}
inline pb::Response HelloAccepted() {
  pb::Response r;
  auto* h = r.mutable_status()->mutable_hello_accepted();
  h->set_nonce("controller-1");
  h->set_protocol_version(kProtocolVersion);
  h->set_replica_id("replica-7");
  h->set_interactive_runtime(true);
  h->add_live_indexes("u9");
  h->add_live_indexes("u10");
  return r;
}
// What an observer's Hello is answered with.
inline pb::Response ObserverHelloAccepted() {
  pb::Response r = HelloAccepted();
  r.mutable_status()->mutable_hello_accepted()->set_nonce("observer-1");
  r.mutable_status()->mutable_hello_accepted()->set_observer(true);
  return r;
}
inline pb::Response Superseded() {
  pb::Response r;
  r.mutable_status()->mutable_superseded()->set_by_nonce("controller-2");
  return r;
}
inline pb::Response ConfigurationApplied() {
  pb::Response r;
  auto* c = r.mutable_status()->mutable_configuration_applied();
  (*c->mutable_applied())["max_result_size"] = "4096";
  (*c->mutable_applied())["peek_timeout"] = "30s";
  c->add_needs_restart("enable_compute_interactive_runtime");
  return r;
}
inline pb::Response RuntimeReady() {
  pb::Response r;
  auto* rr = r.mutable_status()->mutable_runtime_ready();
  rr->set_role("interactive");
  rr->set_pid(4242);
  rr->set_workers(4);
  return r;
}
inline pb::Response Reconciled() {
  pb::Response r;
  auto* rc = r.mutable_status()->mutable_reconciled();
  rc->set_kept(3);
  rc->set_dropped(1);
  rc->set_built(2);
  return r;
}
inline pb::Response CommandError() {
  return MakeCommandError("CreateDataflow(u5)", "column 7 out of range: input has 2 columns");
}

struct NamedResponse {
  const char* name;
  pb::Response response;
};
// A subscribe's answers (DESIGN §10): a batch of changes, and its end.
inline pb::Response SubscribeBatchSample() {
  pb::Response r;
  auto* b = r.mutable_subscribe_batch();
  b->set_uuid("sub-1");
  b->set_lower(5);
  b->set_upper(7);
  auto* u = b->add_updates();
  *u->mutable_row() = MakeRow({IntDatum(1), IntDatum(10)});
  u->set_time(6);
  u->set_diff(-1);
  return r;
}
inline pb::Response SubscribeEndSample() {
  pb::Response r;
  r.mutable_subscribe_end()->set_uuid("sub-1");
  r.mutable_subscribe_end()->set_reason(pb::SubscribeEnd::UP_TO);
  r.mutable_subscribe_end()->set_detail("every time before 9 was delivered");
  return r;
}

// Answers to a WriteTable (DESIGN §9): durable at a time, or not applied.
inline pb::Response WriteAcknowledged(std::string uuid = "w-7c1e",
                                      std::uint64_t time = 1764624000000) {
  pb::Response r;
  r.mutable_write_response()->set_uuid(std::move(uuid));
  r.mutable_write_response()->set_time(time);
  return r;
}
inline pb::Response WriteFailed(std::string uuid = "w-9d2f") {
  pb::Response r;
  r.mutable_write_response()->set_uuid(std::move(uuid));
  r.mutable_write_response()->set_error("u42 was dropped before the write was durable");
  return r;
}
inline std::vector<NamedResponse> AllResponses() {
  return {{"frontiers", Frontiers()},
          {"peek_rows", PeekRows()},
          {"peek_error", PeekError()},
          {"peek_canceled", PeekCanceled()},
          {"status_hello_accepted", HelloAccepted()},
          {"status_hello_accepted_observer", ObserverHelloAccepted()},
          {"status_superseded", Superseded()},
          {"status_configuration_applied", ConfigurationApplied()},
          {"status_runtime_ready", RuntimeReady()},
          {"status_reconciled", Reconciled()},
          {"command_error", CommandError()},
          {"write_response", WriteAcknowledged()},
          {"write_response_error", WriteFailed()},
          {"subscribe_batch", SubscribeBatchSample()},
          {"subscribe_end", SubscribeEndSample()}};
}

}  // namespace tandem::ipc::samples
