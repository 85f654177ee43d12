// Validation at the boundary (DESIGN §3.2): every rule refuses with a reason that names the
// command, and a refused command changes nothing.
#include "ipc/validate.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/time.h"
#include "ipc/client.h"
#include "ipc/plan_typing.h"
#include "ipc/source_schema.h"
#include "ipc/table_write.h"
#include "unit/protocol_samples.h"
#include "unit/temporal_samples.h"

namespace tandem::ipc {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace): builders read as a DSL here

constexpr std::uint64_t kNotATime = std::numeric_limits<std::uint64_t>::max();

// A validator after Hello and the primary dataflow (u1..u11, see protocol_samples.h).
Validator Primed() {
  Validator v;
  EXPECT_TRUE(v.Validate(Hello()).ok());
  const Status s = v.Validate(PrimaryDataflow());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return v;
}

// Everything the validator knows, comparable.
std::map<std::string, std::string> Snapshot(const Validator& v) {
  std::map<std::string, std::string> out;
  for (const auto& [id, schema] : v.collections()) out["collection " + id] = Encode(schema);
  for (const auto& [id, info] : v.indexes()) {
    std::string key;
    for (auto c : info.key) key += std::to_string(c) + ",";
    out["index " + id] = info.on + " " + key;
    std::string importers;
    for (const auto& importer : v.ImportersOf(id)) importers += importer + ",";
    out["importers of " + id] = importers;
    if (const auto as_of = v.OneShotAsOf(id)) out["one-shot " + id] = std::to_string(*as_of);
  }
  for (const auto& [id, frontier] : v.allowed_compaction()) {
    out["allowed compaction " + id] = std::to_string(frontier);
  }
  for (const auto& [id, table] : v.tables()) {
    std::string key;
    for (auto c : table.upsert_key) key += std::to_string(c) + ",";
    out["table " + id] = Encode(table.schema) + " key " + key;
  }
  out["hello"] = v.hello_seen() ? "yes" : "no";
  return out;
}

// Expects `command` refused with `code`, a message that starts with Describe(command) and
// contains `reason`, and no change to the validator.
void ExpectRefused(Validator& v, const pb::Command& command, StatusCode code,
                   const std::string& reason) {
  const auto before = Snapshot(v);
  const Status s = v.Validate(command);
  ASSERT_FALSE(s.ok()) << "accepted: " << ToJson(command);
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_EQ(s.message().rfind(Describe(command) + ": ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find(reason), std::string::npos)
      << "message: " << s.message() << "\nexpected to contain: " << reason;
  EXPECT_EQ(Snapshot(v), before) << "a refused command changed the validator";
}

void ExpectInvalid(Validator& v, const pb::Command& c, const std::string& reason) {
  ExpectRefused(v, c, StatusCode::kInvalidArgument, reason);
}

// Tests build minimal dataflows: a dataflow without the index export every dataflow needs gets
// one here, on the last collection it creates, so that only the rule under test decides.
pb::Command WithIndex(pb::Command c) {
  if (!c.has_create_dataflow()) return c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (d->index_exports_size() > 0) return c;
  const std::string on = d->objects_to_build_size() > 0
                             ? d->objects_to_build(d->objects_to_build_size() - 1).id()
                             : d->source_imports(d->source_imports_size() - 1).id();
  auto* x = d->add_index_exports();
  x->set_id("u900");
  x->set_on(on);
  x->add_key(0);
  return c;
}

void ExpectAccepted(Validator& v, const pb::Command& c) {
  const Status s = v.Validate(WithIndex(c));
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << ToJson(c);
}

// A dataflow with one build `id` of `plan` (and nothing else), on the primed epoch.
pb::Command OneBuild(const std::string& id, pb::Plan plan) {
  pb::Command c = EmptyDataflow("one-build");
  *Desc(c)->add_objects_to_build() = Build(id, std::move(plan));
  return c;
}

// A dataflow importing key_value source u30 [INT64 key, INT64 value] and building u31 from it.
pb::Command OverKeyValue(pb::Plan plan) {
  pb::Command c = EmptyDataflow("over-key-value");
  *Desc(c)->add_source_imports() = KeyValueImport("u30");
  *Desc(c)->add_objects_to_build() = Build("u31", std::move(plan));
  return c;
}

// A build over log source u30 [STRING? name, FLOAT64 score, BOOL ok] with one map expression.
pb::Command MapOverLog(pb::ScalarExpr expr) {
  pb::Command c = EmptyDataflow("map-over-log");
  *Desc(c)->add_source_imports() = LogImport("u30");
  *Desc(c)->add_objects_to_build() = Build("u31", MfpPlan(GetPlan("u30"), Mfp({expr}, {}, {})));
  return c;
}

pb::Command PeekU9(std::vector<pb::Row> keys = {}, pb::MapFilterProject mfp = {}) {
  pb::Command c;
  c.mutable_peek()->set_uuid("p1");
  c.mutable_peek()->set_id("u9");
  c.mutable_peek()->set_timestamp(3);
  for (auto& k : keys) *c.mutable_peek()->add_keys() = std::move(k);
  *c.mutable_peek()->mutable_mfp() = std::move(mfp);
  return c;
}

// ---- Hello and the epoch

TEST(Validator, RefusesEveryCommandBeforeHello) {
  Validator v;
  for (const auto& [name, command] : AllCommands()) {
    if (command.has_hello()) continue;
    SCOPED_TRACE(name);
    ExpectRefused(v, command, StatusCode::kFailedPrecondition, "refused before the first Hello");
  }
}

TEST(Validator, RefusesHelloWithWrongProtocolVersion) {
  Validator v;
  pb::Command hello = Hello("n-1");
  hello.mutable_hello()->set_protocol_version(kProtocolVersion + 1);
  const Status s = v.Validate(hello);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Hello(n-1, v2): protocol version 2, supervisor speaks 1");
  EXPECT_FALSE(v.hello_seen());
  ExpectRefused(v, Schedule("u1"), StatusCode::kFailedPrecondition, "before the first Hello");
}

TEST(Validator, RefusedHelloKeepsTheEpoch) {
  Validator v = Primed();
  pb::Command hello = Hello();
  hello.mutable_hello()->set_protocol_version(0);
  ExpectInvalid(v, hello, "protocol version 0");
  EXPECT_EQ(v.collections().count("u9"), 1u);
}

TEST(Validator, HelloResetsEpochSoReplayingTheSameDataflowIsAccepted) {
  Validator v = Primed();
  ExpectInvalid(v, PrimaryDataflow(), "already exists");
  ExpectAccepted(v, Hello("controller-2"));
  EXPECT_TRUE(v.collections().empty());
  EXPECT_TRUE(v.indexes().empty());
  ExpectAccepted(v, PrimaryDataflow());
}

TEST(Validator, RefusesCommandWithNoKind) {
  Validator v = Primed();
  ExpectInvalid(v, pb::Command(), "command has no kind");
}

TEST(Validator, AcceptsTheSampleEpochInOrder) {
  Validator v;
  for (const auto& [name, command] : AllCommands()) {
    SCOPED_TRACE(name);
    ExpectAccepted(v, command);
  }
}

TEST(Validator, RecordsSchemasOfSourcesBuildsAndIndexes) {
  Validator v = Primed();
  for (int i = 1; i <= 11; ++i) EXPECT_EQ(v.collections().count("u" + std::to_string(i)), 1u);
  EXPECT_EQ(v.indexes().size(), 3u);
  EXPECT_EQ(v.indexes().at("u10").on, "u5");
  EXPECT_EQ(v.indexes().at("u10").key, std::vector<std::uint32_t>{0});
  // Reduce: group key, then COUNT not nullable, SUM/MIN/MAX of the input type, nullable.
  const pb::Schema& u5 = v.collections().at("u5");
  ASSERT_EQ(u5.columns_size(), 5);
  EXPECT_EQ(u5.columns(0).name(), "key");
  EXPECT_FALSE(u5.columns(0).nullable());
  EXPECT_EQ(u5.columns(1).type(), pb::INT64);
  EXPECT_FALSE(u5.columns(1).nullable());
  for (int c = 2; c < 5; ++c) {
    EXPECT_EQ(u5.columns(c).type(), pb::INT64);
    EXPECT_TRUE(u5.columns(c).nullable());
  }
  // An index has the schema of what it is on.
  EXPECT_EQ(Encode(v.collections().at("u10")), Encode(u5));
  // Mfp: if-then-else with a NULL branch is nullable; projection [3, 4, 2].
  const pb::Schema& u8 = v.collections().at("u8");
  ASSERT_EQ(u8.columns_size(), 3);
  EXPECT_EQ(u8.columns(0).type(), pb::STRING);
  EXPECT_TRUE(u8.columns(0).nullable());
  EXPECT_EQ(u8.columns(1).type(), pb::FLOAT64);
  EXPECT_EQ(u8.columns(2).type(), pb::BOOL);
}

// ---- configuration

// The one derivation of a plan's columns, shared with tandem-ctl: aggregates are named by function
// and input column, computed columns by position, column references keep their names.
TEST(PlanSchema, NamesAggregatesByInputColumnComputedColumnsByPositionAndKeepsReferencedNames) {
  const std::map<std::string, pb::Schema> scope = {{"u1", KeyValueSchema()}};
  auto reduced = PlanSchema(ReducePlan(GetPlan("u1"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}}), scope);
  ASSERT_TRUE(reduced.ok()) << reduced.status().ToString();
  ASSERT_EQ(reduced->columns_size(), 3);
  EXPECT_EQ(reduced->columns(0).name(), "key");
  EXPECT_EQ(reduced->columns(1).name(), "count");
  EXPECT_EQ(reduced->columns(2).name(), "sum_value");
  auto mapped = PlanSchema(
      MfpPlan(GetPlan("u1"), Mfp({Col(1), Binary(pb::MUL, Col(1), IntLit(2))}, {}, {})), scope);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_EQ(mapped->columns_size(), 4);
  EXPECT_EQ(mapped->columns(2).name(), "value");
  EXPECT_EQ(mapped->columns(3).name(), "c3");
  auto unknown = PlanSchema(GetPlan("u9"), scope);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
}

TEST(Validator, RefusesParameterWithEmptyName) {
  Validator v = Primed();
  pb::Command update = UpdateConfiguration();
  (*update.mutable_update_configuration()->mutable_params())[""] = "x";
  ExpectInvalid(v, update, "empty name");
  pb::Command create = CreateInstance();
  (*create.mutable_create_instance()->mutable_config()->mutable_params())[""] = "x";
  ExpectInvalid(v, create, "empty name");
  ExpectAccepted(v, InitializationComplete());
}

// ---- CreateDataflow: class and frontiers

TEST(Validator, RefusesUnspecifiedOrUnknownDataflowClass) {
  Validator v = Primed();
  pb::Command c = SecondaryDataflowFromSources();
  Desc(c)->set_class_(pb::DATAFLOW_CLASS_UNSPECIFIED);
  ExpectInvalid(v, c, "class is unspecified");
  Desc(c)->set_class_(static_cast<pb::DataflowClass>(9));
  ExpectInvalid(v, c, "class 9 is not a known dataflow class");
}

TEST(Validator, RefusesAsOfThatIsNotExactlyOneValidTime) {
  Validator v = Primed();
  pb::Command c = SecondaryDataflowFromSources();
  Desc(c)->mutable_as_of()->Clear();
  ExpectInvalid(v, c, "as_of must have exactly one element, has 0");
  Desc(c)->mutable_as_of()->add_elements(1);
  Desc(c)->mutable_as_of()->add_elements(2);
  ExpectInvalid(v, c, "as_of must have exactly one element, has 2");
  Desc(c)->mutable_as_of()->Clear();
  Desc(c)->mutable_as_of()->add_elements(kNotATime);
  ExpectInvalid(v, c, "as_of 18446744073709551615 is not a valid time");
}

TEST(Validator, RefusesUntilThatIsNotOneValidTimeAfterAsOf) {
  Validator v = Primed();
  pb::Command c = SecondaryDataflowFromSources();  // as_of [5]
  Desc(c)->mutable_until()->add_elements(5);
  ExpectInvalid(v, c, "as_of 5 is not before until 5");
  Desc(c)->mutable_until()->add_elements(9);
  ExpectInvalid(v, c, "until must have at most one element, has 2");
  Desc(c)->mutable_until()->Clear();
  Desc(c)->mutable_until()->add_elements(kNotATime);
  ExpectInvalid(v, c, "until 18446744073709551615 is not a valid time");
  Desc(c)->mutable_until()->Clear();
  Desc(c)->mutable_until()->add_elements(6);
  ExpectAccepted(v, c);
  EXPECT_EQ(v.indexes().at("u21").on, "u20");
}

// ---- CreateDataflow: ids

TEST(Validator, RefusesIdThatIsNotACanonicalGlobalId) {
  Validator v = Primed();
  for (const char* id : {"", "x1", "u", "u-1", "U1", "u1 ", "u72057594037927936"}) {
    SCOPED_TRACE(id);
    ExpectInvalid(v, OneBuild(id, GetPlan("u1")), "is not a GlobalId");
  }
  ExpectInvalid(v, OneBuild("u07", GetPlan("u1")), "is not in canonical form (u7)");
}

TEST(Validator, RefusesIdThatAlreadyExistsInTheEpoch) {
  Validator v = Primed();
  pb::Command c = SecondaryDataflowFromSources();
  Desc(c)->mutable_objects_to_build(0)->set_id("u4");
  Desc(c)->mutable_index_exports(0)->set_on("u4");
  ExpectInvalid(v, c, "build u4 already exists");
  pb::Command index = SecondaryDataflowFromSources();
  Desc(index)->mutable_index_exports(0)->set_id("u10");
  ExpectInvalid(v, index, "index export u10 already exists");
  pb::Command source = EmptyDataflow("dup-source");
  *Desc(source)->add_source_imports() = CounterImport("u9");
  ExpectInvalid(v, source, "source import u9 already exists");
}

TEST(Validator, RefusesIdRepeatedWithinTheDataflow) {
  Validator v = Primed();
  pb::Command c = OverKeyValue(GetPlan("u30"));
  *Desc(c)->add_objects_to_build() = Build("u31", GetPlan("u30"));
  ExpectInvalid(v, c, "build u31 is already used in this dataflow");
  pb::Command e = OverKeyValue(GetPlan("u30"));
  *Desc(e)->add_index_exports() = Export("u31", "u30", {0});
  ExpectInvalid(v, e, "index export u31 is already used in this dataflow");
  pb::Command s = OverKeyValue(GetPlan("u30"));
  *Desc(s)->add_source_imports() = CounterImport("u30");
  ExpectInvalid(v, s, "source import u30 is already used in this dataflow");
}

TEST(Validator, RefusesDataflowThatCreatesNothing) {
  Validator v = Primed();
  ExpectInvalid(v, EmptyDataflow("nothing"), "creates nothing");
}

TEST(Validator, RefusesDataflowThatExportsNoIndex) {
  Validator v = Primed();
  pb::Command c = EmptyDataflow("no export");
  *Desc(c)->add_source_imports() = CounterImport("u50");
  ExpectInvalid(v, c, "exports no index");
}

// ---- CreateDataflow: sources

TEST(Validator, RefusesGeneratorSourceWithAnythingButItsFixedSchema) {
  Validator v = Primed();
  auto with_source = [](pb::SourceImport import) {
    pb::Command c = EmptyDataflow("source");
    *Desc(c)->add_source_imports() = std::move(import);
    return c;
  };
  pb::SourceImport counter = CounterImport("u30");
  counter.mutable_schema()->mutable_columns(0)->set_nullable(true);
  ExpectInvalid(v, with_source(counter), "a counter source has schema [INT64]");
  counter = CounterImport("u30");
  *counter.mutable_schema()->add_columns() = MakeColumn("extra", pb::INT64);
  ExpectInvalid(v, with_source(counter), "not [INT64, INT64]");

  pb::SourceImport kv = KeyValueImport("u30");
  kv.mutable_schema()->mutable_columns(1)->set_type(pb::FLOAT64);
  ExpectInvalid(v, with_source(kv), "a key_value source has schema [INT64, INT64]");
  kv = KeyValueImport("u30");
  kv.mutable_source()->mutable_key_value()->set_keys(0);
  ExpectInvalid(v, with_source(kv), "keys is 0");
  kv = KeyValueImport("u30");
  kv.mutable_source()->mutable_key_value()->set_updates_per_tick(0);
  ExpectInvalid(v, with_source(kv), "updates_per_tick is 0");

  // Column names are labels: any names will do.
  kv = KeyValueImport("u30");
  kv.mutable_schema()->mutable_columns(0)->set_name("k");
  ExpectAccepted(v, with_source(kv));
}

TEST(Validator, RefusesLogSourceWithoutPathOrTypedColumns) {
  Validator v = Primed();
  auto with_source = [](pb::SourceImport import) {
    pb::Command c = EmptyDataflow("source");
    *Desc(c)->add_source_imports() = std::move(import);
    return c;
  };
  pb::SourceImport log = LogImport("u30");
  log.mutable_source()->mutable_log()->clear_path();
  ExpectInvalid(v, with_source(log), "log source: path is empty");
  log = LogImport("u30");
  log.mutable_schema()->clear_columns();
  ExpectInvalid(v, with_source(log), "log source: schema has no columns");
  log = LogImport("u30");
  log.mutable_schema()->mutable_columns(2)->set_type(pb::SCALAR_TYPE_UNSPECIFIED);
  ExpectInvalid(v, with_source(log), "column 2 has unspecified type");
  log = LogImport("u30");
  log.clear_source();
  ExpectInvalid(v, with_source(log), "source has no kind");
}

// Accepted by a copy of `v` (so the same ids can be tried again on `v`).
void AcceptedByACopy(Validator v, const pb::Command& c) { ExpectAccepted(v, c); }

// Issue 12 item 1: a parameter a source cannot carry (the maintenance runtime would abort or
// take gigabytes) is refused, naming the parameter and its bound.
TEST(Validator, RefusesSourceParametersBeyondTheirBoundsNamingParameterAndBound) {
  using B = SourceBounds;
  Validator v = Primed();
  auto with_source = [](pb::SourceImport import, std::uint64_t as_of = 0) {
    pb::Command c = EmptyDataflow("source", as_of);
    *Desc(c)->add_source_imports() = std::move(import);
    return c;
  };
  auto kv = [](std::uint64_t keys, std::uint64_t updates) {
    pb::SourceImport s = KeyValueImport("u30");
    s.mutable_source()->mutable_key_value()->set_keys(keys);
    s.mutable_source()->mutable_key_value()->set_updates_per_tick(updates);
    return s;
  };
  for (std::uint64_t huge : {std::uint64_t{1} << 40, std::uint64_t{1} << 62}) {
    ExpectInvalid(v, with_source(kv(huge, 10)),
                  "keys " + std::to_string(huge) + " is over the bound 16777216");
    ExpectInvalid(v, with_source(kv(100, huge)),
                  "updates_per_tick " + std::to_string(huge) + " is over the bound 1000000");
  }
  AcceptedByACopy(v, with_source(kv(B::kMaxKeys, B::kMaxUpdatesPerTick)));

  pb::SourceImport slow = KeyValueImport("u30");
  slow.mutable_source()->mutable_key_value()->set_tick_interval_us(std::uint64_t{1} << 62);
  ExpectInvalid(v, with_source(slow), "tick_interval_us 4611686018427387904 is over the bound");
  pb::SourceImport counter = CounterImport("u30");
  counter.mutable_source()->mutable_counter()->set_tick_interval_us(B::kMaxTickIntervalUs + 1);
  ExpectInvalid(v, with_source(counter), "counter source: tick_interval_us 3600000001");
  counter = CounterImport("u30");
  counter.mutable_source()->mutable_counter()->set_max(kMaxTime);
  ExpectInvalid(v, with_source(counter), "counter source: max 18446744073709551614 is over");

  // The first tick catches up to as_of: as_of × rows per tick is bounded.
  ExpectInvalid(v, with_source(CounterImport("u30"), std::uint64_t{1} << 40),
                "counter source: as_of 1099511627776 makes its first tick emit 1 rows");
  ExpectInvalid(v, with_source(kv(100, 10), B::kMaxCatchUpRows), "over the bound 16777216 rows");
  AcceptedByACopy(v, with_source(kv(100, 10), B::kMaxCatchUpRows / 20));

  pb::SourceImport log = LogImport("u30");
  log.mutable_source()->mutable_log()->set_path("relative/scores.log");
  ExpectInvalid(v, with_source(log), "is not absolute");
  log.mutable_source()->mutable_log()->set_path(std::string("/tmp/a\0b", 8));
  ExpectInvalid(v, with_source(log), "has a NUL byte");
  log.mutable_source()->mutable_log()->set_path("/" + std::string(B::kMaxPathBytes, 'x'));
  ExpectInvalid(v, with_source(log), "path of 4096 is over the bound 4095");
}

// With the segment's size known, a key_value source whose rows could never fit is refused: keys
// = 3·10^7 needs at least 960 MB of a 256 MiB segment.
TEST(Validator, RefusesKeyValueSourceWhoseRowsCannotFitTheSegment) {
  Validator v = Primed();
  v.set_segment_bytes(256ull << 20);
  auto with_kv = [](std::uint64_t keys, std::uint64_t updates) {
    pb::Command c = EmptyDataflow("source");
    pb::SourceImport s = KeyValueImport("u30");
    s.mutable_source()->mutable_key_value()->set_keys(keys);
    s.mutable_source()->mutable_key_value()->set_updates_per_tick(updates);
    *Desc(c)->add_source_imports() = std::move(s);
    return c;
  };
  ExpectInvalid(
      v, with_kv(10000000, 10),
      "key_value source: keys 10000000 is over the bound 8388608 (its first tick is a row "
      "per key; the segment has 268435456 bytes, a row takes at least 32)");
  AcceptedByACopy(v, with_kv(8388608, 1000));
  Validator small = Primed();
  small.set_segment_bytes(32ull << 20);  // room for 2^20 rows, so at most 2^19 updates per tick
  ExpectInvalid(small, with_kv(1000, 600000),
                "updates_per_tick 600000 is over the bound 524288 (a tick is 2 rows per update");
  AcceptedByACopy(small, with_kv(1000, 524288));
}

// ---- CreateDataflow: index imports

TEST(Validator, AcceptsMaintainedDataflowImportingALiveIndex) {
  Validator v = Primed();
  // Index u9 exists, on u4, key [0], with u4's schema; the dataflow reads u4 through it.
  ExpectAccepted(v, SecondaryDataflow());
  // u20 = Reduce(u4) by column 1: [INT64, count INT64, sum INT64 nullable].
  EXPECT_EQ(v.indexes().at("u21").on, "u20");
  EXPECT_EQ(v.collections().at("u20").columns_size(), 3);
  EXPECT_EQ(v.ImportersOf("u9"), std::vector<std::string>{"u21"});
  EXPECT_TRUE(v.ImportersOf("u10").empty());
}

TEST(Validator, ImportedIndexIsReadByItsIdOrByTheCollectionItIsOn) {
  Validator v = Primed();
  pb::Command c = EmptyDataflow("both names", 5);
  *Desc(c)->add_index_imports() = ImportU9();
  *Desc(c)->add_objects_to_build() = Build("u40", UnionPlan({GetPlan("u9"), GetPlan("u4")}));
  *Desc(c)->add_index_exports() = Export("u41", "u40", {0});
  ExpectAccepted(v, c);
  EXPECT_EQ(v.collections().at("u40").columns_size(), 2);
}

TEST(Validator, RefusesIndexImportOfUnknownIndex) {
  Validator v = Primed();
  pb::Command c = SecondaryDataflow();
  Desc(c)->mutable_index_imports(0)->set_id("u99");
  ExpectRefused(v, c, StatusCode::kNotFound, "index import u99: unknown index");
}

TEST(Validator, RefusesIndexImportOfSomethingThatIsNotAnIndex) {
  Validator v = Primed();
  pb::Command c = SecondaryDataflow();
  Desc(c)->mutable_index_imports(0)->set_id("u4");
  ExpectInvalid(v, c, "index import u4: not an index");
}

TEST(Validator, RefusesIndexImportThatDisagreesWithTheIndex) {
  Validator v = Primed();
  pb::Command on = SecondaryDataflow();
  Desc(on)->mutable_index_imports(0)->set_on("u2");
  ExpectInvalid(v, on, "the index is on u4, not u2");
  pb::Command key = SecondaryDataflow();
  Desc(key)->mutable_index_imports(0)->mutable_key()->Set(0, 1);
  ExpectInvalid(v, key, "key [1] differs from the index's key");
  pb::Command schema = SecondaryDataflow();
  Desc(schema)->mutable_index_imports(0)->mutable_schema()->mutable_columns(1)->set_nullable(true);
  ExpectInvalid(v, schema, "schema [INT64, INT64 nullable] differs from the known schema");
  pb::Command twice = SecondaryDataflow();
  *Desc(twice)->add_index_imports() = Desc(twice)->index_imports(0);
  ExpectInvalid(v, twice, "imported twice");
}

// ---- CreateDataflow: plans

TEST(Validator, GetMustNameSomethingOfThisDataflow) {
  Validator v = Primed();
  ExpectRefused(v, OneBuild("u30", GetPlan("u99")), StatusCode::kNotFound,
                "build u30: Get(u99): unknown collection");
  // u4 exists, but a dataflow reads it only through an index import.
  ExpectInvalid(v, OneBuild("u30", GetPlan("u4")), "Get(u4): not a source import");
  // Builds see only the builds before them.
  pb::Command c = EmptyDataflow("order");
  *Desc(c)->add_source_imports() = CounterImport("u30");
  *Desc(c)->add_objects_to_build() = Build("u31", GetPlan("u32"));
  *Desc(c)->add_objects_to_build() = Build("u32", GetPlan("u30"));
  ExpectRefused(v, c, StatusCode::kNotFound, "build u31: Get(u32): unknown collection");
  std::swap(*Desc(c)->mutable_objects_to_build(0), *Desc(c)->mutable_objects_to_build(1));
  ExpectAccepted(v, c);
}

TEST(Validator, RefusesColumnReferenceOutOfRange) {
  Validator v = Primed();
  pb::Command c = EmptyDataflow("range");
  *Desc(c)->add_source_imports() = KeyValueImport("u5000");
  *Desc(c)->add_objects_to_build() =
      Build("u5001", MfpPlan(GetPlan("u5000"), Mfp({Col(7)}, {}, {})));
  const Status s = v.Validate(c);
  EXPECT_EQ(s.message(),
            "CreateDataflow(u5000, u5001): build u5001: Mfp: map expression 0: column 7 out of "
            "range: input has 2 columns");
  ExpectInvalid(v, OverKeyValue(MfpPlan(GetPlan("u30"), Mfp({}, {Col(2)}, {}))),
                "predicate 0: column 2 out of range");
  ExpectInvalid(v, OverKeyValue(MfpPlan(GetPlan("u30"), Mfp({}, {}, {0, 2}))),
                "projection 1: column 2 out of range: input has 2 columns");
}

TEST(Validator, MapExpressionsMayReferToEarlierMapOutputs) {
  Validator v = Primed();
  // value * 2 becomes column 2; column 3 = column 2 + 1; keep the rows where column 3 > 0.
  ExpectAccepted(
      v, OverKeyValue(MfpPlan(GetPlan("u30"), Mfp({Binary(pb::MUL, Col(1), IntLit(2)),
                                                   Binary(pb::ADD, Col(2), IntLit(1))},
                                                  {Binary(pb::GT, Col(3), IntLit(0))}, {0, 3}))));
  EXPECT_EQ(v.collections().at("u31").columns_size(), 2);
  // ... but not to later ones.
  v = Primed();
  ExpectInvalid(v, OverKeyValue(MfpPlan(GetPlan("u30"), Mfp({Col(3), Col(1)}, {}, {}))),
                "map expression 0: column 3 out of range: input has 2 columns");
}

TEST(Validator, RefusesTypeMismatchesInExpressions) {
  // Over log source u30: 0 STRING? name, 1 FLOAT64 score, 2 BOOL ok.
  const pb::ScalarExpr one_int = IntLit(1);
  const pb::ScalarExpr half = Lit(FloatDatum(0.5), pb::FLOAT64);
  struct Case {
    pb::ScalarExpr expr;
    std::string reason;
  };
  pb::ScalarExpr no_kind;
  pb::ScalarExpr unspecified_unary = Unary(pb::NOT, Col(2));
  unspecified_unary.mutable_unary()->set_func(pb::UNARY_FUNC_UNSPECIFIED);
  pb::ScalarExpr unknown_binary = Binary(pb::ADD, Col(1), half);
  unknown_binary.mutable_binary()->set_func(static_cast<pb::BinaryFunc>(77));
  pb::ScalarExpr no_value = Lit(IntDatum(0), pb::INT64);
  no_value.mutable_literal()->clear_value();
  const std::vector<Case> cases = {
      {Binary(pb::ADD, Col(1), one_int),
       "ADD needs two operands of one numeric type, or the date and time operands of one of "
       "PostgreSQL's operators, got FLOAT64 and INT64"},
      {Binary(pb::MUL, Col(0), Col(0)), "MUL needs two operands of one numeric type"},
      {Binary(pb::EQ, Col(0), one_int),
       "EQ needs two operands of the same type, got STRING and INT64"},
      {Binary(pb::AND, Col(2), Col(1)), "AND needs two BOOL operands, got BOOL and FLOAT64"},
      {Unary(pb::NOT, Col(1)), "NOT needs a BOOL operand, got FLOAT64"},
      {Unary(pb::NEGATE, Col(2)), "NEGATE needs a number or an INTERVAL, got BOOL"},
      {Lit(IntDatum(3), pb::FLOAT64), "literal: datum is INT64, the column is FLOAT64"},
      {Lit(NullDatum(), pb::SCALAR_TYPE_UNSPECIFIED), "literal has unspecified type"},
      {no_value, "literal has no value"},
      {If(Col(1), Col(0), Col(0)), "if condition must be BOOL, got FLOAT64"},
      {If(Col(2), Col(0), Col(1)), "if branches have different types: STRING and FLOAT64"},
      {If(Col(2), Col(0), no_kind), "else branch: expression has no kind"},
      {Unary(pb::IS_NULL, Binary(pb::SUB, Col(2), Col(2))),
       "operand of IS_NULL: SUB needs two operands of one numeric type"},
      {unspecified_unary, "unary function 0 is not a known function"},
      {unknown_binary, "binary function 77 is not a known function"},
      {no_kind, "expression has no kind"},
  };
  Validator v = Primed();
  for (const auto& [expr, reason] : cases) {
    SCOPED_TRACE(reason);
    ExpectInvalid(v, MapOverLog(expr), "build u31: Mfp: map expression 0: " + reason);
  }
}

TEST(Validator, AcceptsWellTypedExpressions) {
  const std::vector<pb::ScalarExpr> exprs = {
      Binary(pb::DIV, Col(1), Lit(FloatDatum(2), pb::FLOAT64)),
      Binary(pb::LT, Col(0), Lit(StringDatum("m"), pb::STRING)),
      Binary(pb::EQ, Col(2), Lit(BoolDatum(true), pb::BOOL)),
      Binary(pb::OR, Col(2), Lit(NullDatum(), pb::BOOL)),
      Unary(pb::IS_NULL, Col(0)),
      Unary(pb::NEGATE, Col(1)),
      If(Col(2), Col(1), Lit(NullDatum(), pb::FLOAT64)),
  };
  for (const auto& expr : exprs) {
    Validator v = Primed();
    ExpectAccepted(v, MapOverLog(expr));
  }
}

TEST(Validator, RefusesPredicateThatIsNotBool) {
  Validator v = Primed();
  ExpectInvalid(v, OverKeyValue(MfpPlan(GetPlan("u30"), Mfp({}, {Col(0)}, {}))),
                "predicate 0 has type INT64, must be BOOL");
}

TEST(Validator, RefusesReduceWithBadColumnsOrSumOnNonNumbers) {
  Validator v = Primed();
  ExpectInvalid(v, OverKeyValue(ReducePlan(GetPlan("u30"), {2}, {})),
                "Reduce: group key 0: column 2 out of range: input has 2 columns");
  ExpectInvalid(v, OverKeyValue(ReducePlan(GetPlan("u30"), {0}, {{pb::MAX, 5}})),
                "Reduce: aggregate 0: column 5 out of range");
  ExpectInvalid(
      v, OverKeyValue(ReducePlan(GetPlan("u30"), {0}, {{pb::AGGREGATE_FUNC_UNSPECIFIED, 0}})),
      "aggregate 0: aggregate function 0 is not a known function");
  pb::Command sum_strings = EmptyDataflow("sum");
  *Desc(sum_strings)->add_source_imports() = LogImport("u30");
  *Desc(sum_strings)->add_objects_to_build() =
      Build("u31", ReducePlan(GetPlan("u30"), {2}, {{pb::SUM, 0}}));
  ExpectInvalid(v, sum_strings, "SUM needs a number or an INTERVAL, column 0 is STRING");
  // COUNT ignores its column; MIN/MAX take any type.
  Desc(sum_strings)
      ->mutable_objects_to_build(0)
      ->mutable_plan()
      ->mutable_reduce()
      ->clear_aggregates();
  auto* reduce = Desc(sum_strings)->mutable_objects_to_build(0)->mutable_plan()->mutable_reduce();
  reduce->add_aggregates()->set_func(pb::COUNT);
  reduce->mutable_aggregates(0)->set_column(99);
  reduce->add_aggregates()->set_func(pb::MIN);
  ExpectAccepted(v, sum_strings);
  const pb::Schema& out = v.collections().at("u31");
  ASSERT_EQ(out.columns_size(), 3);
  EXPECT_EQ(out.columns(2).type(), pb::STRING);
  EXPECT_TRUE(out.columns(2).nullable());
}

TEST(Validator, UnionNeedsEqualColumnTypesAndOrsNullability) {
  Validator v = Primed();
  pb::Command c = EmptyDataflow("union");
  *Desc(c)->add_source_imports() = KeyValueImport("u30");
  *Desc(c)->add_source_imports() = LogImport("u31");
  auto add_union = [&](std::vector<pb::Plan> inputs) {
    pb::Command u = c;
    *Desc(u)->add_objects_to_build() = Build("u32", UnionPlan(std::move(inputs)));
    return u;
  };
  ExpectInvalid(v, add_union({}), "Union needs at least one input");
  ExpectInvalid(v, add_union({GetPlan("u30"), GetPlan("u31")}),
                "Union input 1 has columns [STRING nullable, FLOAT64, BOOL], input 0 has [INT64, "
                "INT64]");
  ExpectInvalid(v, add_union({GetPlan("u30"), MfpPlan(GetPlan("u30"), Mfp({}, {}, {0}))}),
                "Union input 1 has columns [INT64]");
  // [INT64] ∪ [INT64 nullable] is [INT64 nullable].
  ExpectAccepted(v,
                 add_union({MfpPlan(GetPlan("u30"), Mfp({}, {}, {0})),
                            MfpPlan(GetPlan("u30"), Mfp({Lit(NullDatum(), pb::INT64)}, {}, {2}))}));
  ASSERT_EQ(v.collections().at("u32").columns_size(), 1);
  EXPECT_TRUE(v.collections().at("u32").columns(0).nullable());
}

TEST(Validator, DistinctKeepsItsInputSchema) {
  Validator v = Primed();
  ExpectAccepted(v, OverKeyValue(DistinctPlan(GetPlan("u30"))));
  EXPECT_EQ(Encode(v.collections().at("u31")), Encode(v.collections().at("u30")));
  ExpectInvalid(v, OneBuild("u40", DistinctPlan(pb::Plan())), "plan node has no kind");
}

// ---- Join, TopK, Negate, Threshold and the aggregates of issue 14

// Key-value source u30 [INT64 key, INT64 value] and log source u31 [STRING? name, FLOAT64 score,
// BOOL ok], and build u32 of `plan` over them.
pb::Command OverKeyValueAndLog(pb::Plan plan) {
  pb::Command c = EmptyDataflow("over-key-value-and-log");
  *Desc(c)->add_source_imports() = KeyValueImport("u30");
  *Desc(c)->add_source_imports() = LogImport("u31");
  *Desc(c)->add_objects_to_build() = Build("u32", std::move(plan));
  return c;
}

TEST(Validator, RefusesJoinWithBadKeysNamingTheColumnsAndTypes) {
  Validator v = Primed();
  const auto join = [](std::vector<std::uint32_t> l, std::vector<std::uint32_t> r) {
    return OverKeyValueAndLog(JoinPlan(GetPlan("u30"), GetPlan("u31"), std::move(l), std::move(r)));
  };
  ExpectInvalid(v, join({}, {}),
                "build u32: Join: the join key is empty (pair at least one left and right column)");
  ExpectInvalid(v, join({0}, {}), "Join: left_key has 1 columns, right_key has 0");
  ExpectInvalid(v, join({0, 1}, {1}), "Join: left_key has 2 columns, right_key has 1");
  ExpectInvalid(v, join({2}, {1}),
                "Join: join key 0: left: column 2 out of range: input has 2 columns");
  ExpectInvalid(v, join({0}, {3}),
                "Join: join key 0: right: column 3 out of range: input has 3 columns");
  ExpectInvalid(v, join({0}, {0}),
                "Join: join key 0: left column 0 is INT64, right column 0 is STRING");
  // The second pair differs: u30 [INT64, INT64] against Mfp(u31) [STRING?, FLOAT64, BOOL, INT64].
  ExpectInvalid(
      v,
      OverKeyValueAndLog(JoinPlan(GetPlan("u30"), MfpPlan(GetPlan("u31"), Mfp({IntLit(1)}, {}, {})),
                                  {0, 1}, {3, 2})),
      "Join: join key 1: left column 1 is INT64, right column 2 is BOOL");
  pb::Command unknown_kind = join({0}, {0});
  Desc(unknown_kind)
      ->mutable_objects_to_build(0)
      ->mutable_plan()
      ->mutable_join()
      ->set_kind(static_cast<pb::JoinKind>(7));
  ExpectInvalid(v, unknown_kind, "Join: join kind 7 is not a known kind (INNER or LEFT_OUTER)");
  // Each side is checked first, and named.
  ExpectRefused(v, OverKeyValueAndLog(JoinPlan(GetPlan("u30"), GetPlan("u77"), {0}, {0})),
                StatusCode::kNotFound, "build u32: Join right: Get(u77): unknown collection");
  ExpectInvalid(v,
                OverKeyValueAndLog(
                    JoinPlan(MfpPlan(GetPlan("u30"), Mfp({}, {}, {5})), GetPlan("u30"), {0}, {0})),
                "build u32: Join left: Mfp: projection 0: column 5 out of range");
}

TEST(Validator, InnerJoinIsLeftColumnsThenRightColumnsWithTheirNullability) {
  Validator v = Primed();
  // u30 [key, value] ⋈ u30 on (key, value) = (value, key): a self-join on two key pairs.
  ExpectAccepted(v, OverKeyValueAndLog(JoinPlan(GetPlan("u30"), GetPlan("u30"), {0, 1}, {1, 0})));
  const pb::Schema& out = v.collections().at("u32");
  ASSERT_EQ(out.columns_size(), 4);
  EXPECT_EQ(out.columns(0).name(), "key");
  EXPECT_EQ(out.columns(3).name(), "value");
  for (const auto& column : out.columns()) {
    EXPECT_EQ(column.type(), pb::INT64);
    EXPECT_FALSE(column.nullable());
  }
  // A nullable key column joins a non-nullable one of the same type; nullability is kept.
  const std::map<std::string, pb::Schema> scope = {{"u1", KeyValueSchema()}, {"u2", LogSchema()}};
  auto mixed = PlanSchema(
      JoinPlan(GetPlan("u2"), MfpPlan(GetPlan("u2"), Mfp({}, {}, {0})), {0}, {0}), scope);
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  ASSERT_EQ(mixed->columns_size(), 4);
  EXPECT_EQ(mixed->columns(0).type(), pb::STRING);
  EXPECT_TRUE(mixed->columns(0).nullable());
  EXPECT_EQ(mixed->columns(1).type(), pb::FLOAT64);
  EXPECT_FALSE(mixed->columns(1).nullable());
  EXPECT_EQ(mixed->columns(2).type(), pb::BOOL);
  EXPECT_EQ(mixed->columns(3).type(), pb::STRING);
  EXPECT_TRUE(mixed->columns(3).nullable());
}

TEST(Validator, LeftOuterJoinMakesEveryRightColumnNullableAndAnIndexMayBeKeyedByThem) {
  Validator v = Primed();
  // u30 [key, value] ⟕ Distinct(u30) on key: [key, value, key?, value?], indexed by the right
  // key (nullable) and then the left value.
  pb::Command c = OverKeyValueAndLog(
      JoinPlan(GetPlan("u30"), DistinctPlan(GetPlan("u30")), {0}, {0}, pb::LEFT_OUTER));
  *Desc(c)->add_index_exports() = Export("u33", "u32", {2, 1});
  ExpectAccepted(v, c);
  const pb::Schema& out = v.collections().at("u32");
  ASSERT_EQ(out.columns_size(), 4);
  EXPECT_FALSE(out.columns(0).nullable());
  EXPECT_FALSE(out.columns(1).nullable());
  EXPECT_TRUE(out.columns(2).nullable());
  EXPECT_TRUE(out.columns(3).nullable());
  for (const auto& column : out.columns()) EXPECT_EQ(column.type(), pb::INT64);
  EXPECT_EQ(Encode(v.collections().at("u33")), Encode(out));
  EXPECT_EQ(v.indexes().at("u33").key, (std::vector<std::uint32_t>{2, 1}));
  // A peek of that index may look up a null right key (a left row without a match).
  pb::Command peek = PeekAt("p1", "u33", 0);
  *peek.mutable_peek()->add_keys() = MakeRow({NullDatum(), IntDatum(3)});
  ExpectAccepted(v, peek);
}

TEST(Validator, JoinReadsAnImportedIndexOnEitherSide) {
  Validator v = Primed();
  // u9 is an index on u4 [INT64, INT64]; its collection u4 is read by name on the right.
  pb::Command c = EmptyDataflow("join-import", 5);
  *Desc(c)->add_source_imports() = KeyValueImport("u30");
  *Desc(c)->add_index_imports() = ImportU9();
  *Desc(c)->add_objects_to_build() =
      Build("u31", JoinPlan(GetPlan("u30"), GetPlan("u4"), {1}, {0}));
  ExpectAccepted(v, c);
  EXPECT_EQ(v.ImportersOf("u9"), std::vector<std::string>{"u900"});
  EXPECT_EQ(v.collections().at("u31").columns_size(), 4);
}

TEST(Validator, RefusesTopKWithColumnsOutOfRangeOrLimitZero) {
  Validator v = Primed();
  ExpectInvalid(v, OverKeyValue(TopKPlan(GetPlan("u30"), {2}, {Order(1)}, 3)),
                "build u31: TopK: group key 0: column 2 out of range: input has 2 columns");
  ExpectInvalid(v, OverKeyValue(TopKPlan(GetPlan("u30"), {0}, {Order(1), Order(4, true)}, 3)),
                "TopK: order_by 1: column 4 out of range: input has 2 columns");
  ExpectInvalid(v, OverKeyValue(TopKPlan(GetPlan("u30"), {0}, {Order(1)}, 0)), "TopK: limit 0");
  ExpectInvalid(v,
                OverKeyValue(TopKPlan(MfpPlan(GetPlan("u30"), Mfp({}, {Col(0)}, {})), {}, {}, 1)),
                "Mfp: predicate 0 has type INT64, must be BOOL");
}

TEST(Validator, TopKNegateAndThresholdKeepTheirInputSchema) {
  Validator v = Primed();
  // No limit, any offset, no group key, no order: all accepted.
  ExpectAccepted(v, OverKeyValue(TopKPlan(GetPlan("u30"), {}, {}, std::nullopt, 1000)));
  EXPECT_EQ(Encode(v.collections().at("u31")), Encode(v.collections().at("u30")));
  v = Primed();
  pb::Command c = EmptyDataflow("top-k-of-log");
  *Desc(c)->add_source_imports() = LogImport("u40");
  *Desc(c)->add_objects_to_build() =
      Build("u41", TopKPlan(GetPlan("u40"), {2}, {Order(1, true, true), Order(0)}, 10, 2));
  ExpectAccepted(v, c);
  EXPECT_EQ(Encode(v.collections().at("u41")), Encode(v.collections().at("u40")));

  // EXCEPT ALL: Threshold(Union(A, Negate(B))).
  v = Primed();
  pb::Command except = EmptyDataflow("except-all");
  *Desc(except)->add_source_imports() = LogImport("u50");
  *Desc(except)->add_objects_to_build() = Build(
      "u51", ThresholdPlan(UnionPlan({GetPlan("u50"), NegatePlan(DistinctPlan(GetPlan("u50")))})));
  ExpectAccepted(v, except);
  EXPECT_EQ(Encode(v.collections().at("u51")), Encode(v.collections().at("u50")));
  ExpectInvalid(v, OneBuild("u60", NegatePlan(pb::Plan())), "plan node has no kind");
  ExpectRefused(v, OneBuild("u60", ThresholdPlan(GetPlan("u77"))), StatusCode::kNotFound,
                "Get(u77): unknown collection");
}

TEST(Validator, RefusesNewAggregatesOnColumnsOfTheWrongTypeOrOutOfRange) {
  Validator v = Primed();
  // Log u30: [STRING? name, FLOAT64 score, BOOL ok].
  const auto over_log = [](std::vector<std::pair<pb::AggregateFunc, std::uint32_t>> aggregates) {
    pb::Command c = EmptyDataflow("aggregates");
    *Desc(c)->add_source_imports() = LogImport("u30");
    *Desc(c)->add_objects_to_build() = Build("u31", ReducePlan(GetPlan("u30"), {}, aggregates));
    return c;
  };
  ExpectInvalid(v, over_log({{pb::AVG, 0}}),
                "Reduce: aggregate 0: AVG needs a number or an INTERVAL, column 0 is STRING");
  ExpectInvalid(v, over_log({{pb::AVG, 1}, {pb::AVG, 2}}),
                "aggregate 1: AVG needs a number or an INTERVAL, column 2 is BOOL");
  ExpectInvalid(v, OverKeyValue(ReducePlan(GetPlan("u30"), {}, {{pb::ANY, 1}})),
                "Reduce: aggregate 0: ANY needs a BOOL column, column 1 is INT64");
  ExpectInvalid(v, over_log({{pb::ALL, 1}}),
                "aggregate 0: ALL needs a BOOL column, column 1 is FLOAT64");
  ExpectInvalid(v, over_log({{pb::ANY, 0}}), "ANY needs a BOOL column, column 0 is STRING");
  for (const auto func : {pb::COUNT_NON_NULL, pb::COUNT_DISTINCT, pb::AVG, pb::ANY, pb::ALL}) {
    SCOPED_TRACE(pb::AggregateFunc_Name(func));
    ExpectInvalid(v, over_log({{func, 3}}),
                  "Reduce: aggregate 0: column 3 out of range: input has 3 columns");
  }
  ExpectInvalid(v, over_log({{static_cast<pb::AggregateFunc>(10), 0}}),
                "aggregate 0: aggregate function 10 is not a known function");
}

TEST(Validator, NewAggregatesHaveTheirOutputTypesAndNames) {
  Validator v = Primed();
  // Log u30: [STRING? name, FLOAT64 score, BOOL ok], grouped by ok.
  pb::Command c = EmptyDataflow("aggregates");
  *Desc(c)->add_source_imports() = LogImport("u30");
  *Desc(c)->add_objects_to_build() = Build("u31", ReducePlan(GetPlan("u30"), {2},
                                                             {{pb::COUNT_NON_NULL, 0},
                                                              {pb::COUNT_DISTINCT, 0},
                                                              {pb::COUNT_DISTINCT, 2},
                                                              {pb::AVG, 1},
                                                              {pb::ANY, 2},
                                                              {pb::ALL, 2}}));
  ExpectAccepted(v, c);
  const pb::Schema& out = v.collections().at("u31");
  ASSERT_EQ(out.columns_size(), 7);
  const std::vector<std::tuple<std::string, pb::ScalarType, bool>> expected = {
      {"ok", pb::BOOL, false},
      {"count_name", pb::INT64, false},
      {"count_distinct_name", pb::INT64, false},
      {"count_distinct_ok", pb::INT64, false},
      {"avg_score", pb::FLOAT64, true},
      {"any_ok", pb::BOOL, true},
      {"all_ok", pb::BOOL, true}};
  for (int i = 0; i < out.columns_size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(out.columns(i).name(), std::get<0>(expected[i]));
    EXPECT_EQ(out.columns(i).type(), std::get<1>(expected[i]));
    EXPECT_EQ(out.columns(i).nullable(), std::get<2>(expected[i]));
  }
  // AVG of an INT64 column is FLOAT64.
  v = Primed();
  ExpectAccepted(v, OverKeyValue(ReducePlan(GetPlan("u30"), {0}, {{pb::AVG, 1}})));
  ASSERT_EQ(v.collections().at("u31").columns_size(), 2);
  EXPECT_EQ(v.collections().at("u31").columns(1).type(), pb::FLOAT64);
}

// ---- CreateDataflow: index exports

TEST(Validator, RefusesIndexExportWithEmptyKeyOrKeyOutOfRange) {
  Validator v = Primed();
  pb::Command c = OverKeyValue(GetPlan("u30"));
  *Desc(c)->add_index_exports() = Export("u32", "u31", {});
  ExpectInvalid(v, c, "index export u32: key is empty");
  Desc(c)->mutable_index_exports(0)->add_key(1);
  Desc(c)->mutable_index_exports(0)->add_key(2);
  ExpectInvalid(v, c, "index export u32: key 1: column 2 out of range: input has 2 columns");
}

TEST(Validator, RefusesIndexExportOnSomethingNotOfThisDataflow) {
  Validator v = Primed();
  pb::Command c = OverKeyValue(GetPlan("u30"));
  *Desc(c)->add_index_exports() = Export("u32", "u4", {0});
  ExpectInvalid(v, c, "index export u32: u4 is not a source, import or build of this dataflow");
  Desc(c)->mutable_index_exports(0)->set_on("u77");
  ExpectRefused(v, c, StatusCode::kNotFound, "index export u32: unknown collection u77");
  // A source import may be indexed directly.
  Desc(c)->mutable_index_exports(0)->set_on("u30");
  ExpectAccepted(v, c);
}

// ---- Schedule, AllowWrites, AllowCompaction

TEST(Validator, ScheduleAndAllowWritesNeedAKnownId) {
  Validator v = Primed();
  ExpectAccepted(v, Schedule("u1"));
  ExpectAccepted(v, AllowWrites("u11"));
  ExpectRefused(v, Schedule("u99"), StatusCode::kNotFound, "unknown id u99");
  ExpectRefused(v, AllowWrites("u99"), StatusCode::kNotFound, "unknown id u99");
}

TEST(Validator, RefusesAllowCompactionWithBadFrontier) {
  Validator v = Primed();
  ExpectInvalid(v, AllowCompaction("u9", {3, 4}), "frontier has 2 elements");
  ExpectInvalid(v, AllowCompaction("u9", {kNotATime}),
                "frontier element 18446744073709551615 is not a valid time");
  pb::Command missing = AllowCompaction("u9");
  missing.mutable_allow_compaction()->clear_frontier();
  ExpectInvalid(v, missing, "frontier is missing");
  ExpectRefused(v, AllowCompaction("u99", {3}), StatusCode::kNotFound, "unknown id u99");
  ExpectAccepted(v, AllowCompaction("u9", {3}));
  EXPECT_EQ(v.indexes().count("u9"), 1u);
}

TEST(Validator, AllowCompactionDropForgetsIdSoALaterPeekIsRefused) {
  Validator v = Primed();
  ExpectAccepted(v, Peek());
  ExpectAccepted(v, Drop("u9"));
  EXPECT_EQ(v.collections().count("u9"), 0u);
  EXPECT_EQ(v.indexes().count("u9"), 0u);
  ExpectRefused(v, Peek(), StatusCode::kNotFound, "unknown index u9");
  ExpectRefused(v, Schedule("u9"), StatusCode::kNotFound, "unknown id u9");
  ExpectRefused(v, Drop("u9"), StatusCode::kNotFound, "unknown id u9");
  ExpectRefused(v, SecondaryDataflow(), StatusCode::kNotFound, "index import u9: unknown index");
  // A dropped id may be created again.
  pb::Command again = EmptyDataflow("again");
  *Desc(again)->add_source_imports() = KeyValueImport("u30");
  *Desc(again)->add_index_exports() = Export("u9", "u30", {0});
  ExpectAccepted(v, again);
  ExpectAccepted(v, Peek());
}

TEST(Validator, RefusesAllowCompactionOfASourceNamingTheIndexesToDropInstead) {
  Validator v = Primed();
  // Accepted, a runtime would do nothing with it: only an index has a compaction frontier.
  const std::string why =
      "u1 is a source, not an index: only indexes can be compacted or dropped (the dataflow that "
      "defines it exports u9, u10, u11)";
  ExpectInvalid(v, AllowCompaction("u1", {3}), why);
  ExpectInvalid(v, Drop("u1"), why);
  EXPECT_EQ(v.Validate(Drop("u1")).message(), "AllowCompaction(u1, []): " + why);
}

TEST(Validator, RefusesAllowCompactionOfAViewNamingTheIndexesLeft) {
  Validator v = Primed();
  ExpectInvalid(v, AllowCompaction("u4", {3}),
                "u4 is a view, not an index: only indexes can be compacted or dropped (the "
                "dataflow that defines it exports u9, u10, u11)");
  ExpectAccepted(v, Drop("u9"));
  ExpectInvalid(v, Drop("u4"), "u4 is a view, not an index");
  ExpectInvalid(v, Drop("u4"), "(the dataflow that defines it exports u10, u11)");
  // The view is still there: the dataflow keeps running for its other indexes.
  EXPECT_EQ(v.collections().count("u4"), 1u);
}

TEST(Validator, DroppingTheLastIndexOfADataflowForgetsItsSourcesAndViews) {
  Validator v = Primed();
  ExpectAccepted(v, SecondaryDataflowFromSources());  // u19 -> u20, indexed by u21
  ExpectAccepted(v, Drop("u9"));
  ExpectAccepted(v, Drop("u10"));
  EXPECT_EQ(v.collections().count("u1"), 1u) << "u11 still keeps the primary dataflow";
  EXPECT_EQ(v.collections().count("u4"), 1u);
  ExpectAccepted(v, Drop("u11"));
  for (int i = 1; i <= 11; ++i) {
    EXPECT_EQ(v.collections().count("u" + std::to_string(i)), 0u) << "u" << i;
  }
  EXPECT_TRUE(v.indexes().count("u21")) << "another dataflow is not affected";
  EXPECT_EQ(v.collections().count("u19"), 1u);
  ExpectRefused(v, Schedule("u4"), StatusCode::kNotFound, "unknown id u4");
  ExpectRefused(v, Drop("u1"), StatusCode::kNotFound, "unknown id u1");
  // The ids are free again, as they are in the runtimes.
  ExpectAccepted(v, PrimaryDataflow());
  EXPECT_EQ(v.indexes().size(), 4u);
}

// ---- Peek and CancelPeek

TEST(Validator, RefusesPeekOnUnknownId) {
  Validator v = Primed();
  pb::Command c = Peek();
  c.mutable_peek()->set_id("u99");
  ExpectRefused(v, c, StatusCode::kNotFound, "unknown index u99");
}

TEST(Validator, RefusesPeekOnACollectionThatIsNotAnIndex) {
  Validator v = Primed();
  pb::Command c = Peek();
  c.mutable_peek()->set_id("u4");
  ExpectInvalid(v, c, "u4 is not an index");
}

TEST(Validator, RefusesPeekWithEmptyUuidOrInvalidTimestamp) {
  Validator v = Primed();
  ExpectInvalid(v, Peek(""), "uuid is empty");
  pb::Command c = Peek();
  c.mutable_peek()->set_timestamp(kNotATime);
  ExpectInvalid(v, c, "timestamp 18446744073709551615 is not a valid time");
}

TEST(Validator, RefusesPeekKeyOfWrongArity) {
  Validator v = Primed();
  ExpectInvalid(v, PeekU9({MakeRow({IntDatum(1), IntDatum(2)})}),
                "key 0 has 2 datums, the index key has 1 columns");
  ExpectInvalid(v, PeekU9({MakeRow({IntDatum(1)}), MakeRow({})}),
                "key 1 has 0 datums, the index key has 1 columns");
}

TEST(Validator, RefusesPeekKeyOfWrongType) {
  Validator v = Primed();
  ExpectInvalid(v, PeekU9({MakeRow({StringDatum("1")})}),
                "key 0 datum 0: datum is STRING, the column is INT64");
  ExpectInvalid(v, PeekU9({MakeRow({pb::Datum()})}), "key 0 datum 0: datum has no value");
}

TEST(Validator, PeekKeyMayBeNullOnlyForANullableColumn) {
  Validator v = Primed();
  ExpectInvalid(v, PeekU9({MakeRow({NullDatum()})}),
                "key 0 datum 0: null for a column that is not nullable");
  pb::Command c = PeekU9({MakeRow({NullDatum()}), MakeRow({StringDatum("ada")})});
  c.mutable_peek()->set_id("u11");  // on u3, key [0]: STRING nullable
  ExpectAccepted(v, c);
}

TEST(Validator, RefusesPeekWhoseMfpDoesNotTypeCheck) {
  Validator v = Primed();
  ExpectInvalid(v, PeekU9({}, Mfp({Col(2)}, {}, {})),
                "mfp: map expression 0: column 2 out of range: input has 2 columns");
  ExpectInvalid(v, PeekU9({}, Mfp({}, {Col(0)}, {})), "mfp: predicate 0 has type INT64");
}

TEST(Validator, RefusesPeekFinishingColumnsOutsideTheMfpOutput) {
  Validator v = Primed();
  // The mfp keeps one column of u9's two.
  pb::Command c = PeekU9({}, Mfp({}, {}, {1}));
  c.mutable_peek()->mutable_finishing()->add_order_by()->set_column(1);
  ExpectInvalid(v, c,
                "finishing order_by 0: column 1 out of range: the mfp's output has 1 columns");
  c.mutable_peek()->mutable_finishing()->mutable_order_by(0)->set_column(0);
  c.mutable_peek()->mutable_finishing()->add_project(0);
  c.mutable_peek()->mutable_finishing()->add_project(1);
  ExpectInvalid(v, c, "finishing project 1: column 1 out of range");
  c.mutable_peek()->mutable_finishing()->mutable_project()->RemoveLast();
  ExpectAccepted(v, c);
}

TEST(Validator, PeekUuidsAreNotTrackedSoTheyMayRepeat) {
  Validator v = Primed();
  ExpectAccepted(v, Peek("same"));
  ExpectAccepted(v, Peek("same"));
}

TEST(Validator, CancelPeekNeedsOnlyANonEmptyUuid) {
  Validator v = Primed();
  ExpectAccepted(v, CancelPeek("never-seen"));
  ExpectInvalid(v, CancelPeek(""), "uuid is empty");
}

// ---- Observer sessions

TEST(Validator, ObserverHelloStartsNoEpoch) {
  Validator v = Primed();
  const auto before = Snapshot(v);
  ExpectAccepted(v, ObserverHello());
  EXPECT_EQ(Snapshot(v), before) << "an observer's Hello forgets nothing";
  ExpectInvalid(v, PrimaryDataflow(), "already exists");
  Validator fresh;
  ExpectAccepted(fresh, ObserverHello());
  EXPECT_FALSE(fresh.hello_seen()) << "nor does it open an epoch";
  pb::Command wrong = ObserverHello("o-1");
  wrong.mutable_hello()->set_protocol_version(kProtocolVersion + 1);
  EXPECT_EQ(fresh.ValidateObserver(wrong).message(),
            "Hello(o-1, v2): protocol version 2, supervisor speaks 1");
}

TEST(Validator, ObserverMayPeekCancelAndSayGoodbyeAgainstTheStateAsItIs) {
  const Validator v = Primed();
  EXPECT_TRUE(v.ValidateObserver(Peek()).ok());
  EXPECT_TRUE(v.ValidateObserver(CancelPeek()).ok());
  EXPECT_TRUE(v.ValidateObserver(Goodbye()).ok());
  EXPECT_TRUE(v.ValidateObserver(ObserverHello()).ok());
  // The same rules as a controller's peek.
  pb::Command unknown = Peek();
  unknown.mutable_peek()->set_id("u99");
  const Status s = v.ValidateObserver(unknown);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), Describe(unknown) + ": unknown index u99");
  EXPECT_EQ(v.ValidateObserver(CancelPeek("")).message(), "CancelPeek(): uuid is empty");
  EXPECT_NE(v.ValidateObserver(PeekU9({MakeRow({StringDatum("1")})}))
                .message()
                .find("datum is STRING, the column is INT64"),
            std::string::npos);
  // No Hello yet: nothing is known, so a peek is of an unknown index (not "before Hello").
  const Validator empty;
  EXPECT_EQ(empty.ValidateObserver(Peek()).code(), StatusCode::kNotFound);
}

TEST(Validator, ObserverMayNotChangeAnything) {
  const Validator v = Primed();
  const auto before = Snapshot(v);
  for (const auto& [name, command] : AllCommands()) {
    if (command.has_peek() || command.has_cancel_peek() || command.has_subscribe() ||
        command.has_cancel_subscribe() || command.has_goodbye() || command.has_hello()) {
      continue;
    }
    SCOPED_TRACE(name);
    const Status s = v.ValidateObserver(command);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message().rfind(Describe(command) + ": observer sessions are read-only: ", 0), 0u)
        << s.message();
  }
  EXPECT_EQ(Snapshot(v), before);
  EXPECT_EQ(v.ValidateObserver(pb::Command()).message(), "NoKind: command has no kind");
}

// ---- Index imports and one-shot dataflows (DESIGN §8)

// A maintained dataflow from `as_of` importing u9, building u40 = u4's rows, indexed by `index`.
pb::Command ImporterOfU9(std::uint64_t as_of, const std::string& index = "u41",
                         const std::string& name = "importer") {
  pb::Command c = EmptyDataflow(name, as_of);
  *Desc(c)->add_index_imports() = ImportU9();
  *Desc(c)->add_objects_to_build() = Build("u40", MfpPlan(GetPlan("u4"), Mfp({}, {}, {0, 1})));
  *Desc(c)->add_index_exports() = Export(index, "u40", {0});
  return c;
}

TEST(Validator, RefusesImportOfAOneShotResult) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9());
  pb::Command c = EmptyDataflow("reads a result", 5);
  *Desc(c)->add_index_imports() = Import("t1", "t2", v.collections().at("t2"), {0});
  *Desc(c)->add_index_exports() = Export("u40", "t2", {0});
  ExpectInvalid(v, c,
                "index import t1: t1 is a one-shot result, not a maintained index: import the "
                "indexes it reads");
}

TEST(Validator, RefusesMaintainedImportBelowTheAllowedCompactionFrontier) {
  Validator v = Primed();
  ExpectAccepted(v, AllowCompaction("u9", {7}));
  const pb::Command c = SecondaryDataflow();  // as_of 5
  EXPECT_EQ(v.Validate(c).message(),
            "CreateDataflow(u21, u20): index import u9: as_of 5 is below the compaction frontier "
            "[7] the controller allowed for u9, so a maintained dataflow would read compacted "
            "data: send as_of >= 7 (or class ONE_SHOT_READ for one read)");
  ExpectInvalid(v, c, "as_of 5 is below the compaction frontier [7]");
}

TEST(Validator, RefusesMaintainedImportBeforeTheIndexesOwnAsOf) {
  Validator v;
  ExpectAccepted(v, Hello());
  pb::Command late = EmptyDataflow("starts at 10", 10);
  *Desc(late)->add_source_imports() = KeyValueImport("u1");
  *Desc(late)->add_index_exports() = Export("u2", "u1", {0});
  ExpectAccepted(v, late);
  auto importer = [&](std::uint64_t as_of) {
    pb::Command c = EmptyDataflow("importer", as_of);
    *Desc(c)->add_index_imports() = Import("u2", "u1", KeyValueSchema(), {0});
    *Desc(c)->add_index_exports() = Export("u3", "u1", {1});
    return c;
  };
  // The arrangement's since starts at its as_of: before it, it is compacted already.
  ExpectInvalid(v, importer(5), "as_of 5 is before the as_of 10 of u2");
  ExpectAccepted(v, importer(10));
}

TEST(Validator, AcceptsMaintainedImportAtTheAllowedCompactionFrontier) {
  Validator v = Primed();
  ExpectAccepted(v, AllowCompaction("u9", {5}));
  ExpectAccepted(v, SecondaryDataflow());  // as_of 5
}

TEST(Validator, AllowedCompactionFrontierOnlyRises) {
  Validator v = Primed();
  EXPECT_TRUE(v.allowed_compaction().empty());
  ExpectAccepted(v, AllowCompaction("u9", {7}));
  ExpectAccepted(v, AllowCompaction("u9", {3}));  // accepted: the runtimes ignore it too
  EXPECT_EQ(v.allowed_compaction().at("u9"), 7u);
  ExpectInvalid(v, ImporterOfU9(5), "as_of 5 is below the compaction frontier [7]");
  ExpectAccepted(v, AllowCompaction("u9", {9}));
  EXPECT_EQ(v.allowed_compaction().at("u9"), 9u);
  ExpectInvalid(v, ImporterOfU9(8), "as_of 8 is below the compaction frontier [9]");
}

TEST(Validator, AllowedCompactionFrontierIsForgottenWithTheDroppedIndex) {
  Validator v = Primed();
  ExpectAccepted(v, AllowCompaction("u9", {7}));
  ExpectAccepted(v, Drop("u9"));
  EXPECT_EQ(v.allowed_compaction().count("u9"), 0u);
  // A new index u9 (on source u30) starts with no frontier: an import from as_of 0 is fine.
  pb::Command again = EmptyDataflow("again");
  *Desc(again)->add_source_imports() = KeyValueImport("u30");
  *Desc(again)->add_index_exports() = Export("u9", "u30", {0});
  ExpectAccepted(v, again);
  pb::Command importer = EmptyDataflow("importer", 0);
  *Desc(importer)->add_index_imports() = Import("u9", "u30", KeyValueSchema(), {0});
  *Desc(importer)->add_index_exports() = Export("u40", "u30", {1});
  ExpectAccepted(v, importer);
}

TEST(Validator, AcceptsOneShotReadOfAnImportedIndex) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9(5));
  EXPECT_EQ(v.indexes().at("t1").on, "t2");
  EXPECT_EQ(v.OneShotAsOf("t1"), std::optional<std::uint64_t>(5));
  EXPECT_EQ(v.OneShotAsOf("u9"), std::nullopt) << "a maintained index is not a one-shot result";
  EXPECT_EQ(v.OneShotAsOf("t2"), std::nullopt) << "a build is not an index";
  EXPECT_EQ(v.ImportersOf("u9"), std::vector<std::string>{"t1"});
  // t2 = Reduce(u4) by value: [INT64, count INT64].
  ASSERT_EQ(v.collections().at("t1").columns_size(), 2);
  EXPECT_EQ(v.collections().at("t1").columns(1).name(), "count");
}

TEST(Validator, AcceptsOneShotWithoutBuildsThatReindexesTheImport) {
  Validator v = Primed();
  // u4 by its second column, at time 3: no operator at all.
  ExpectAccepted(v, OneShot(3, {ImportU9()}, {}, {Export("t7", "u4", {1})}));
  EXPECT_EQ(v.indexes().at("t7").key, std::vector<std::uint32_t>{1});
}

TEST(Validator, RefusesOneShotWhoseUntilIsNotAsOfPlusOne) {
  Validator v = Primed();
  pb::Command c = OneShotOfU9(5);
  Desc(c)->mutable_until()->Clear();
  EXPECT_EQ(v.Validate(c).message(),
            "CreateDataflow(t1, t2): a ONE_SHOT_READ dataflow computes one time: until must be "
            "[6] (as_of + 1), not [] (send until [6], or class MAINTAINED)");
  ExpectInvalid(v, c, "until must be [6] (as_of + 1), not []");
  Desc(c)->mutable_until()->add_elements(7);
  ExpectInvalid(v, c, "until must be [6] (as_of + 1), not [7]");
}

TEST(Validator, RefusesOneShotAtTheLastTime) {
  Validator v = Primed();
  pb::Command c = OneShotOfU9(kNotATime - 1);
  Desc(c)->mutable_until()->Clear();
  ExpectInvalid(v, c,
                "a ONE_SHOT_READ dataflow needs until = as_of + 1, and as_of 18446744073709551614 "
                "is the last time (UINT64_MAX is reserved)");
}

TEST(Validator, RefusesOneShotWithASourceImport) {
  Validator v = Primed();
  pb::Command c = OneShotOfU9();
  *Desc(c)->add_source_imports() = KeyValueImport("u30");
  ExpectInvalid(v, c,
                "a ONE_SHOT_READ dataflow reads index imports only, not source import u30 (import "
                "an index on it, or send class MAINTAINED)");
}

TEST(Validator, RefusesOneShotWithoutAnIndexImport) {
  Validator v = Primed();
  pb::Command c = OneShotOfU9();
  Desc(c)->clear_index_imports();
  ExpectInvalid(v, c,
                "a ONE_SHOT_READ dataflow needs at least one index import (it reads maintained "
                "indexes at as_of): import the indexes it reads");
}

TEST(Validator, RefusesOneShotWithoutAnIndexExport) {
  Validator v = Primed();
  pb::Command c = OneShotOfU9();
  Desc(c)->clear_index_exports();
  ExpectInvalid(v, c, "the dataflow exports no index: nothing could read it or ever drop it");
}

TEST(Validator, RefusesOneShotExportingAnIdThatIsNotTransient) {
  Validator v = Primed();
  ExpectInvalid(v, OneShotOfU9(5, "u40"),
                "index export u40: a ONE_SHOT_READ dataflow exports transient ids (t<n>) only: "
                "its result is never maintained and lives until it is dropped");
  // Every export: one transient id is not enough.
  pb::Command two = OneShotOfU9(5, "t1");
  *Desc(two)->add_index_exports() = Export("s3", "t2", {1});
  ExpectInvalid(v, two, "index export s3: a ONE_SHOT_READ dataflow exports transient ids");
}

TEST(Validator, RefusesTransientExportInAMaintainedDataflow) {
  Validator v = Primed();
  ExpectInvalid(v, ImporterOfU9(5, "t41"),
                "index export t41: a transient id (t<n>) names a one-shot result; a MAINTAINED "
                "dataflow exports u<n> or s<n> ids (or send class ONE_SHOT_READ with until = as_of "
                "+ 1)");
  pb::Command from_source = SecondaryDataflowFromSources();
  Desc(from_source)->mutable_index_exports(0)->set_id("t21");
  ExpectInvalid(v, from_source, "index export t21: a transient id (t<n>) names a one-shot result");
}

// The runtime answers such a one-shot's peeks Error ("compacted"): never a wrong answer.
TEST(Validator, AcceptsOneShotImportBelowTheAllowedCompactionFrontier) {
  Validator v = Primed();
  ExpectAccepted(v, AllowCompaction("u9", {7}));
  ExpectAccepted(v, OneShotOfU9(5));
  ExpectAccepted(v, PeekAt("p1", "t1", 5));
}

TEST(Validator, PeekOfAOneShotResultIsRefusedAtAnyTimeButItsAsOf) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9(4));
  ExpectAccepted(v, PeekAt("p1", "t1", 4));
  const pb::Command later = PeekAt("p2", "t1", 5);
  EXPECT_EQ(v.Validate(later).message(),
            "Peek(p2, t1 @ 5): t1 is a one-shot result, readable only at time 4");
  ExpectInvalid(v, later, "t1 is a one-shot result, readable only at time 4");
  ExpectInvalid(v, PeekAt("p3", "t1", 3), "t1 is a one-shot result, readable only at time 4");
  // Maintained indexes keep every time.
  ExpectAccepted(v, PeekAt("p4", "u9", 3));
  ExpectAccepted(v, PeekAt("p5", "u9", 5));
}

TEST(Validator, PeekOfAOneShotResultChecksKeysAndMfpAgainstWhatItIndexes) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9(4));  // t1 on t2 [INT64 value, INT64 count], key [0]
  ExpectAccepted(v, PeekAt("p1", "t1", 4, 3));
  pb::Command wrong_key = PeekAt("p2", "t1", 4);
  *wrong_key.mutable_peek()->add_keys() = MakeRow({StringDatum("3")});
  ExpectInvalid(v, wrong_key, "key 0 datum 0: datum is STRING, the column is INT64");
  pb::Command wrong_mfp = PeekAt("p3", "t1", 4);
  *wrong_mfp.mutable_peek()->mutable_mfp() = Mfp({Col(2)}, {}, {});
  ExpectInvalid(v, wrong_mfp, "mfp: map expression 0: column 2 out of range: input has 2 columns");
}

TEST(Validator, ObserverPeekOfAOneShotResultFollowsTheSameRule) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9(4));
  EXPECT_TRUE(v.ValidateObserver(PeekAt("o1", "t1", 4)).ok());
  EXPECT_EQ(v.ValidateObserver(PeekAt("o2", "t1", 9)).message(),
            "Peek(o2, t1 @ 9): t1 is a one-shot result, readable only at time 4");
}

TEST(Validator, AllowCompactionOfAOneShotResultIsAcceptedAndChangesNothing) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9(4));
  const auto before = Snapshot(v);
  ExpectAccepted(v, AllowCompaction("t1", {9}));
  EXPECT_EQ(Snapshot(v), before);
  EXPECT_EQ(v.allowed_compaction().count("t1"), 0u);
  ExpectAccepted(v, PeekAt("p1", "t1", 4));
}

TEST(Validator, DroppingAOneShotResultForgetsItsDataflow) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9(4));
  ExpectAccepted(v, Drop("t1"));
  EXPECT_EQ(v.collections().count("t1"), 0u);
  EXPECT_EQ(v.collections().count("t2"), 0u) << "its build goes with its last index";
  EXPECT_TRUE(v.ImportersOf("u9").empty());
  ExpectRefused(v, PeekAt("p1", "t1", 4), StatusCode::kNotFound, "unknown index t1");
  // The transient ids are free again: the next one-shot may use them, at another time.
  ExpectAccepted(v, OneShotOfU9(8));
  ExpectAccepted(v, PeekAt("p2", "t1", 8));
}

// ---- Drops of imported indexes

TEST(Validator, RefusesDropOfAnIndexAMaintainedDataflowImportsNamingTheImporter) {
  Validator v = Primed();
  ExpectAccepted(v, SecondaryDataflow());  // "secondary", exports u21
  const pb::Command drop = Drop("u9");
  EXPECT_EQ(v.Validate(drop).message(),
            "AllowCompaction(u9, []): u9 is imported by u21 (dataflow 'secondary'): drop u21 "
            "first");
  ExpectInvalid(v, drop, "u9 is imported by u21 (dataflow 'secondary'): drop u21 first");
  EXPECT_EQ(v.indexes().count("u9"), 1u);
}

TEST(Validator, RefusesDropOfAnIndexAOneShotImportsNamingTheOneShot) {
  Validator v = Primed();
  ExpectAccepted(v, OneShotOfU9(4));
  ExpectInvalid(v, Drop("u9"), "u9 is imported by t1 (dataflow 'count by value'): drop t1 first");
}

TEST(Validator, RefusedDropNamesEveryImporterAndEveryIndexToDrop) {
  Validator v = Primed();
  pb::Command two_exports = ImporterOfU9(5, "u41", "a");
  *Desc(two_exports)->add_index_exports() = Export("u42", "u40", {1});
  ExpectAccepted(v, two_exports);
  ExpectAccepted(v, OneShotOfU9(5));
  ExpectInvalid(v, Drop("u9"),
                "u9 is imported by u41, u42 (dataflow 'a') and by t1 (dataflow 'count by value'): "
                "drop u41, u42, t1 first");
}

TEST(Validator, DropIsAcceptedOnceTheImporterIsDropped) {
  Validator v = Primed();
  ExpectAccepted(v, SecondaryDataflow());
  ExpectInvalid(v, Drop("u9"), "u9 is imported by u21");
  ExpectAccepted(v, Drop("u21"));
  EXPECT_TRUE(v.ImportersOf("u9").empty());
  ExpectAccepted(v, Drop("u9"));
  EXPECT_EQ(v.indexes().count("u9"), 0u);
}

TEST(Validator, ImporterWithAnIndexLeftStillHoldsItsImport) {
  Validator v = Primed();
  pb::Command two_exports = ImporterOfU9(5, "u41", "a");
  *Desc(two_exports)->add_index_exports() = Export("u42", "u40", {1});
  ExpectAccepted(v, two_exports);
  ExpectAccepted(v, Drop("u41"));
  ExpectInvalid(v, Drop("u9"), "u9 is imported by u42 (dataflow 'a'): drop u42 first");
  ExpectAccepted(v, Drop("u42"));
  ExpectAccepted(v, Drop("u9"));
}

TEST(Validator, DroppingAnImporterForgetsItsViewsButNotWhatItImports) {
  Validator v = Primed();
  ExpectAccepted(v, SecondaryDataflow());  // u20, indexed by u21, over u4 through u9
  ExpectAccepted(v, Drop("u21"));
  EXPECT_EQ(v.collections().count("u20"), 0u);
  EXPECT_EQ(v.indexes().count("u9"), 1u);
  EXPECT_EQ(v.collections().count("u4"), 1u);
  // The publisher's own drop logic is unchanged: its last index takes its sources and views.
  ExpectAccepted(v, Drop("u9"));
  ExpectAccepted(v, Drop("u10"));
  ExpectAccepted(v, Drop("u11"));
  EXPECT_TRUE(v.collections().empty());
  EXPECT_TRUE(v.indexes().empty());
}

TEST(Validator, CompactionOfAnImportedIndexIsAccepted) {
  Validator v = Primed();
  ExpectAccepted(v, SecondaryDataflow());
  ExpectAccepted(v, AllowCompaction("u9", {20}));
  EXPECT_EQ(v.allowed_compaction().at("u9"), 20u);
}

TEST(Validator, RefusedImporterRecordsNoImport) {
  Validator v = Primed();
  pb::Command c = SecondaryDataflow();
  Desc(c)->mutable_index_exports(0)->set_key(0, 9);  // out of range: refused at the last step
  ExpectInvalid(v, c, "index export u21: key 0: column 9 out of range");
  EXPECT_TRUE(v.ImportersOf("u9").empty());
  ExpectAccepted(v, Drop("u9"));
}

TEST(Validator, RefusedDropKeepsTheIndexItsFrontierAndItsImporter) {
  Validator v = Primed();
  ExpectAccepted(v, AllowCompaction("u9", {6}));
  ExpectAccepted(v, OneShotOfU9(6));
  ExpectInvalid(v, Drop("u9"), "drop t1 first");  // also checks that nothing changed
  EXPECT_EQ(v.allowed_compaction().at("u9"), 6u);
  ExpectAccepted(v, PeekAt("p1", "t1", 6));
  ExpectAccepted(v, PeekAt("p2", "u9", 6));
}

TEST(Validator, HelloForgetsCompactionFrontiersImportersAndOneShots) {
  Validator v = Primed();
  ExpectAccepted(v, AllowCompaction("u9", {7}));
  ExpectAccepted(v, OneShotOfU9(7));
  ExpectAccepted(v, Hello("controller-2"));
  EXPECT_TRUE(v.allowed_compaction().empty());
  EXPECT_EQ(v.OneShotAsOf("t1"), std::nullopt);
  ExpectAccepted(v, PrimaryDataflow());
  // The replayed u9 has no frontier yet and no importer: both are the new epoch's to send.
  ExpectAccepted(v, SecondaryDataflow());  // as_of 5 < 7
  ExpectAccepted(v, Drop("u21"));
  ExpectAccepted(v, Drop("u9"));
  ExpectRefused(v, PeekAt("p1", "t1", 7), StatusCode::kNotFound, "unknown index t1");
}

TEST(Validator, TheImportingEpochIsAcceptedAndHoldsU9) {
  Validator v;
  for (const auto& command : ImportingEpoch()) ExpectAccepted(v, command);
  EXPECT_EQ(v.ImportersOf("u9"), (std::vector<std::string>{"u61", "t9"}));
  ExpectInvalid(v, Drop("u9"),
                "u9 is imported by u61 (dataflow 'importer') and by t9 (dataflow 'primed "
                "one-shot'): drop u61, t9 first");
  ExpectAccepted(v, OneShotOfU9());
  ExpectAccepted(v, SecondaryDataflow());
}

// ---- all-or-nothing

TEST(Validator, RefusedDataflowRecordsNothingOfWhatCameBeforeTheError) {
  Validator v = Primed();
  // Source u30 and build u31 are fine; the export u32 is not.
  pb::Command c = OverKeyValue(GetPlan("u30"));
  *Desc(c)->add_index_exports() = Export("u32", "u31", {9});
  ExpectInvalid(v, c, "index export u32");  // also checks that nothing changed
  EXPECT_EQ(v.collections().count("u30"), 0u);
  EXPECT_EQ(v.collections().count("u31"), 0u);
  Desc(c)->mutable_index_exports(0)->set_key(0, 1);
  ExpectAccepted(v, c);
  EXPECT_EQ(v.indexes().at("u32").key, std::vector<std::uint32_t>{1});
}

}  // namespace
// Issue 11 defect 2: the index past the registry's slots per row aborted the replica. It is
// refused at the boundary, and fits again once another index is dropped.
TEST(Validator, RefusesAnIndexBeyondTheRegistrysCapacityUntilOneIsDropped) {
  Validator v;
  v.set_index_capacity(2);
  ASSERT_TRUE(v.Validate(Hello()).ok());
  auto dataflow = [](const std::string& src, const std::string& idx) {
    pb::Command c = EmptyDataflow("df " + idx);
    *Desc(c)->add_source_imports() = LogImport(src);
    *Desc(c)->add_index_exports() = Export(idx, src, {0});
    return c;
  };
  ASSERT_TRUE(v.Validate(dataflow("u1", "u2")).ok());
  ASSERT_TRUE(v.Validate(dataflow("u3", "u4")).ok());
  ExpectRefused(v, dataflow("u5", "u6"), StatusCode::kResourceExhausted,
                "the replica has room for 2 indexes (--slots-per-row) and maintains 2");
  ASSERT_TRUE(v.Validate(Drop("u2")).ok());
  EXPECT_TRUE(v.Validate(dataflow("u5", "u6")).ok());
  // The capacity is the replica's, not the epoch's.
  ASSERT_TRUE(v.Validate(Hello("next")).ok());
  ASSERT_TRUE(v.Validate(dataflow("u3", "u4")).ok());
  ASSERT_TRUE(v.Validate(dataflow("u5", "u6")).ok());
  ExpectRefused(v, dataflow("u7", "u8"), StatusCode::kResourceExhausted, "room for 2 indexes");
}

namespace {

// ---- Tables, csv and json_lines sources, upsert keys, WriteTable (DESIGN §9)

// Primed(), with a data directory and TableDataflow(): u40 (plain table), u42 (upsert by k).
Validator WithTables() {
  Validator v;
  v.set_data_dir(true);
  EXPECT_TRUE(v.Validate(Hello()).ok());
  EXPECT_TRUE(v.Validate(PrimaryDataflow()).ok());
  const Status s = v.Validate(TableDataflow());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return v;
}

pb::Command WithSource(pb::SourceImport import) {
  pb::Command c = EmptyDataflow("source");
  *Desc(c)->add_source_imports() = std::move(import);
  return c;
}

TEST(Validator, AcceptsTablesCsvAndJsonLinesSourcesPlainAndUpsertAndRemembersTables) {
  Validator v = Primed();
  v.set_data_dir(true);
  ExpectAccepted(v, TableDataflow());
  ASSERT_EQ(v.tables().size(), 2u);
  EXPECT_TRUE(v.tables().at("u40").upsert_key.empty());
  EXPECT_EQ(v.tables().at("u42").upsert_key, std::vector<std::uint32_t>{0});
  EXPECT_EQ(v.tables().at("u42").schema.columns_size(), 3);
  AcceptedByACopy(v, WithSource(CsvImport("u50")));
  AcceptedByACopy(v, WithSource(CsvImport("u50", {0, 2})));
  AcceptedByACopy(v, WithSource(JsonLinesImport("u50")));
  AcceptedByACopy(v, WithSource(JsonLinesImport("u50", {2})));
  pb::SourceImport log = LogImport("u50");
  log.add_upsert_key(0);
  AcceptedByACopy(v, WithSource(log));
  // A table may have every column in its key (upserts and deletes are explicit there).
  AcceptedByACopy(v, WithSource(TableImport("u50", {2, 0, 1})));
  pb::SourceImport default_tick = TableImport("u50");
  default_tick.mutable_source()->mutable_table()->set_tick_interval_ms(0);
  AcceptedByACopy(v, WithSource(default_tick));
  EXPECT_EQ(v.tables().count("u50"), 0u) << "only what was accepted on v itself";
}

TEST(Validator, RefusesATableWithoutADataDirectory) {
  Validator v = Primed();
  ExpectRefused(v, TableDataflow(), StatusCode::kFailedPrecondition,
                "source import u40: a table needs the replica's --data-dir (none was given)");
  // A csv or json_lines source needs none.
  AcceptedByACopy(v, WithSource(CsvImport("u50")));
  AcceptedByACopy(v, WithSource(JsonLinesImport("u50")));
}

TEST(Validator, RefusesTableCsvAndJsonLinesSourcesWithoutTypedColumnsOrWithBadPaths) {
  Validator v = Primed();
  v.set_data_dir(true);
  for (auto make : {+[](std::string id) { return TableImport(std::move(id)); },
                    +[](std::string id) { return CsvImport(std::move(id)); },
                    +[](std::string id) { return JsonLinesImport(std::move(id)); }}) {
    pb::SourceImport import = make("u50");
    const std::string kind = import.source().has_table() ? "table"
                             : import.source().has_csv() ? "csv"
                                                         : "json_lines";
    SCOPED_TRACE(kind);
    import.mutable_schema()->clear_columns();
    ExpectInvalid(v, WithSource(import), kind + " source: schema has no columns");
    import = make("u50");
    import.mutable_schema()->mutable_columns(1)->set_type(static_cast<pb::ScalarType>(77));
    ExpectInvalid(v, WithSource(import), kind + " source: column 1 has unknown type 77");
  }
  pb::SourceImport csv = CsvImport("u50");
  csv.mutable_source()->mutable_csv()->clear_path();
  ExpectInvalid(v, WithSource(csv), "csv source: path is empty");
  csv.mutable_source()->mutable_csv()->set_path("scores.csv");
  ExpectInvalid(v, WithSource(csv), "csv source: path scores.csv is not absolute");
  csv.mutable_source()->mutable_csv()->set_path(std::string("/tmp/a\0b", 8));
  ExpectInvalid(v, WithSource(csv), "has a NUL byte");
  csv.mutable_source()->mutable_csv()->set_path("/" +
                                                std::string(SourceBounds::kMaxPathBytes, 'a'));
  ExpectInvalid(v, WithSource(csv), "csv source: path of 4096 is over the bound 4095 (bytes)");
  pb::SourceImport json = JsonLinesImport("u50");
  json.mutable_source()->mutable_json_lines()->clear_path();
  ExpectInvalid(v, WithSource(json), "json_lines source: path is empty");
  json.mutable_source()->mutable_json_lines()->set_path("./x.jsonl");
  ExpectInvalid(v, WithSource(json), "json_lines source: path ./x.jsonl is not absolute");
}

TEST(Validator, RefusesATableTickIntervalOverAnHour) {
  Validator v = Primed();
  v.set_data_dir(true);
  pb::SourceImport table = TableImport("u50");
  table.mutable_source()->mutable_table()->set_tick_interval_ms(
      SourceBounds::kMaxTableTickIntervalMs);
  AcceptedByACopy(v, WithSource(table));
  table.mutable_source()->mutable_table()->set_tick_interval_ms(
      SourceBounds::kMaxTableTickIntervalMs + 1);
  ExpectInvalid(v, WithSource(table),
                "table source: tick_interval_ms 3600001 is over the bound 3600000 (one hour)");
}

TEST(Validator, RefusesAnUpsertKeyOnAGeneratorSource) {
  Validator v = Primed();
  pb::SourceImport counter = CounterImport("u50");
  counter.add_upsert_key(0);
  ExpectInvalid(v, WithSource(counter),
                "upsert_key is for log, table, csv and json_lines sources, not a counter source");
  pb::SourceImport kv = KeyValueImport("u50");
  kv.add_upsert_key(0);
  ExpectInvalid(v, WithSource(kv), "not a key_value source");
}

TEST(Validator, RefusesAnUpsertKeyColumnOutOfRangeOrTwice) {
  Validator v = Primed();
  v.set_data_dir(true);
  ExpectInvalid(v, WithSource(TableImport("u50", {0, 3})),
                "source import u50: upsert_key 1: column 3 out of range: input has 3 columns");
  ExpectInvalid(v, WithSource(TableImport("u50", {1, 0, 1})),
                "upsert_key 2: column 1 is in the key twice");
  pb::SourceImport log = LogImport("u50");
  log.add_upsert_key(9);
  ExpectInvalid(v, WithSource(log), "upsert_key 0: column 9 out of range");
}

TEST(Validator, RefusesACsvOrJsonLinesUpsertKeyOfEveryColumn) {
  Validator v = Primed();
  ExpectInvalid(v, WithSource(CsvImport("u50", {0, 1, 2})),
                "upsert_key [0, 1, 2] is every column: a csv record without a non-key field is a "
                "delete");
  ExpectInvalid(v, WithSource(JsonLinesImport("u50", {2, 1, 0})),
                "is every column: a json_lines record");
}

TEST(Validator, AcceptsWritesOfEachKindToTheirTable) {
  Validator v = WithTables();
  const auto before = Snapshot(v);
  ExpectAccepted(v, WriteU40());
  ExpectAccepted(v, WriteU42());
  // Nullable columns take null; a delete takes the key columns only.
  ExpectAccepted(v, WriteTable("w-null", "u40",
                               {RowUpdate(MakeRow({IntDatum(3), NullDatum(), FloatDatum(0)}), 5)}));
  ExpectAccepted(v, WriteTable("w-del", "u42", {Delete(MakeRow({IntDatum(9)}))}));
  ExpectAccepted(v, WriteTable(std::string(WriteBounds::kMaxUuidBytes, 'u'), "u40",
                               {RowUpdate(TableRow(1), -3)}));
  EXPECT_EQ(Snapshot(v), before) << "a write changes nothing the validator knows";
}

TEST(Validator, RefusesAWriteWithoutUuidOrWithAnOverlongOne) {
  Validator v = WithTables();
  ExpectInvalid(v, WriteU40(""), "uuid is empty");
  ExpectInvalid(v, WriteU40(std::string(WriteBounds::kMaxUuidBytes + 1, 'u')),
                "uuid of 129 bytes is over the bound 128 bytes");
}

TEST(Validator, RefusesAWriteToAnUnknownTable) {
  Validator v = WithTables();
  pb::Command w = WriteU40();
  w.mutable_write_table()->set_id("u99");
  ExpectRefused(v, w, StatusCode::kNotFound, "unknown table u99");
}

TEST(Validator, RefusesAWriteToACollectionThatIsNotATableNamingWhatItIs) {
  Validator v = WithTables();
  ASSERT_TRUE(v.Validate(WithIndex(WithSource(CsvImport("u50")))).ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"u3", "u3 is not a table (it is a log source)"},
      {"u1", "u1 is not a table (it is a counter source)"},
      {"u2", "u2 is not a table (it is a key_value source)"},
      {"u50", "u50 is not a table (it is a csv source)"},
      {"u4", "u4 is not a table (it is a view)"},
      {"u41", "u41 is not a table (it is an index)"}};
  for (const auto& [id, reason] : cases) {
    SCOPED_TRACE(id);
    ExpectInvalid(v, WriteTable("w", id, {RowUpdate(TableRow(1))}), reason);
  }
}

TEST(Validator, RefusesAWriteWithNoUpdatesOrTooMany) {
  Validator v = WithTables();
  ExpectInvalid(v, WriteTable("w", "u40", {}), "the write has no updates");
  pb::Command many = WriteTable("w", "u40", {});
  for (int i = 0; i <= WriteBounds::kMaxUpdates; ++i) {
    *many.mutable_write_table()->add_updates() = RowUpdate(TableRow(i));
  }
  ExpectInvalid(v, many, "100001 updates are over the bound 100000 (split the write)");
  many.mutable_write_table()->mutable_updates()->RemoveLast();
  ExpectAccepted(v, many);
}

TEST(Validator, RefusesUpsertsAndDeletesOnAPlainTable) {
  Validator v = WithTables();
  ExpectInvalid(v, WriteTable("w", "u40", {RowUpdate(TableRow(1)), Delete(MakeRow({IntDatum(1)}))}),
                "update 1: u40 has no upsert key: write updates with diffs");
  ExpectInvalid(v, WriteTable("w", "u40", {Upsert(TableRow(1))}),
                "update 0: u40 has no upsert key: write updates with diffs");
}

TEST(Validator, RefusesUpdatesWithDiffsOnAnUpsertTable) {
  Validator v = WithTables();
  ExpectInvalid(v, WriteTable("w", "u42", {Upsert(TableRow(1)), RowUpdate(TableRow(2))}),
                "update 1: u42 has an upsert key [0]: write upserts and deletes, not updates "
                "with diffs");
}

TEST(Validator, RefusesAZeroDiffAndAnUpdateWithoutKind) {
  Validator v = WithTables();
  ExpectInvalid(v, WriteTable("w", "u40", {RowUpdate(TableRow(1), 0)}), "update 0: diff is 0");
  ExpectInvalid(v, WriteTable("w", "u42", {Upsert(TableRow(1)), pb::TableUpdate()}),
                "update 1: update has no kind (update, upsert or delete)");
}

TEST(Validator, RefusesWriteRowsOfTheWrongArityTypeOrNullability) {
  Validator v = WithTables();
  ExpectInvalid(v, WriteTable("w", "u40", {RowUpdate(MakeRow({IntDatum(1), StringDatum("x")}))}),
                "update 0: row has 2 datums, the table has 3 columns");
  ExpectInvalid(
      v, WriteTable("w", "u40", {RowUpdate(MakeRow({IntDatum(1), IntDatum(2), FloatDatum(1)}))}),
      "update 0: datum 1: datum is INT64, the column is STRING");
  ExpectInvalid(v,
                WriteTable("w", "u42",
                           {Upsert(TableRow(1)),
                            Upsert(MakeRow({NullDatum(), StringDatum("x"), FloatDatum(1)}))}),
                "update 1: datum 0: null for a column that is not nullable");
  pb::Row no_value = TableRow(1);
  no_value.mutable_datums(2)->Clear();
  ExpectInvalid(v, WriteTable("w", "u40", {RowUpdate(no_value)}),
                "update 0: datum 2: datum has no value");
}

TEST(Validator, RefusesDeletesThatAreNotTheKeyColumns) {
  Validator v = WithTables();
  ExpectInvalid(v, WriteTable("w", "u42", {Delete(TableRow(1))}),
                "update 0: row has 3 datums, the upsert key has 1 columns");
  ExpectInvalid(v, WriteTable("w", "u42", {Delete(MakeRow({StringDatum("1")}))}),
                "update 0: datum 0: datum is STRING, the column is INT64");
  // The key columns in upsert_key order: (score, k) for a key [2, 0].
  ASSERT_TRUE(v.Validate(WithIndex(WithSource(TableImport("u50", {2, 0})))).ok());
  ExpectAccepted(v, WriteTable("w", "u50", {Delete(MakeRow({FloatDatum(1), IntDatum(1)}))}));
  ExpectInvalid(v, WriteTable("w", "u50", {Delete(MakeRow({IntDatum(1), FloatDatum(1)}))}),
                "datum 0: datum is INT64, the column is FLOAT64");
}

TEST(Validator, ForgetsATableWhenItsDataflowGoesAndWithHello) {
  Validator v = WithTables();
  ExpectAccepted(v, Drop("u41"));
  EXPECT_EQ(v.tables().count("u40"), 1u) << "u43 still keeps the dataflow";
  ExpectAccepted(v, WriteU40());
  ExpectAccepted(v, Drop("u43"));
  EXPECT_TRUE(v.tables().empty());
  ExpectRefused(v, WriteU40(), StatusCode::kNotFound, "unknown table u40");
  ExpectAccepted(v, TableDataflow());  // its ids are free again
  EXPECT_EQ(v.tables().size(), 2u);
  ExpectAccepted(v, Hello("controller-2"));
  EXPECT_TRUE(v.tables().empty());
  ExpectRefused(v, WriteU42(), StatusCode::kNotFound, "unknown table u42");
  // The data directory is the replica's: kept across epochs.
  ExpectAccepted(v, TableDataflow());
}

TEST(Validator, RefusesAWriterHelloThatIsNotAnObserver) {
  Validator v = Primed();
  pb::Command hello = Hello("c-2");
  hello.mutable_hello()->set_writer(true);
  ExpectInvalid(v, hello, "writer: true needs observer: true");
  EXPECT_FALSE(v.ValidateObserver(hello).ok());
  EXPECT_TRUE(v.ValidateObserver(WriterHello()).ok());
  EXPECT_TRUE(v.Validate(WriterHello()).ok()) << "an observer's Hello starts no epoch";
  EXPECT_EQ(v.collections().count("u9"), 1u);
}

TEST(Validator, AWriterSessionMayWriteAndReadButNothingElse) {
  const Validator v = WithTables();
  const auto before = Snapshot(v);
  EXPECT_TRUE(v.ValidateObserver(WriteU40(), true).ok());
  EXPECT_TRUE(v.ValidateObserver(WriteU42(), true).ok());
  EXPECT_TRUE(v.ValidateObserver(Peek(), true).ok());
  EXPECT_TRUE(v.ValidateObserver(CancelPeek(), true).ok());
  EXPECT_TRUE(v.ValidateObserver(Subscribe("s", "u9", 5), true).ok());
  EXPECT_TRUE(v.ValidateObserver(CancelSubscribe("s"), true).ok());
  EXPECT_TRUE(v.ValidateObserver(Goodbye(), true).ok());
  // Its writes are checked like the controller's.
  const Status unknown = v.ValidateObserver(WriteTable("w", "u99", {}), true);
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_EQ(unknown.message(), Describe(WriteTable("w", "u99", {})) + ": unknown table u99");
  const Status bad = v.ValidateObserver(WriteTable("w", "u40", {Upsert(TableRow(1))}), true);
  EXPECT_NE(bad.message().find("u40 has no upsert key"), std::string::npos) << bad.message();
  for (const auto& [name, command] : AllCommands()) {
    if (command.has_peek() || command.has_cancel_peek() || command.has_subscribe() ||
        command.has_cancel_subscribe() || command.has_goodbye() || command.has_hello()) {
      continue;
    }
    SCOPED_TRACE(name);
    const Status s = v.ValidateObserver(command, true);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message().rfind(
                  Describe(command) + ": writer sessions may only read and write tables: ", 0),
              0u)
        << s.message();
  }
  EXPECT_EQ(Snapshot(v), before);
}

TEST(Validator, APlainObserverMayNotWriteAndIsToldHowTo) {
  const Validator v = WithTables();
  const Status s = v.ValidateObserver(WriteU40());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), Describe(WriteU40()) +
                             ": observer sessions are read-only: they may send only Peek, "
                             "CancelPeek, Subscribe, CancelSubscribe and Goodbye; say Hello with "
                             "observer: true and writer: true to write tables");
}

TEST(Validator, DescribeWriteNamesTheWholeUuid) {
  const std::string uuid = "load-0123456789abcdef-batch-17";
  EXPECT_EQ(DescribeWrite(WriteU40(uuid).write_table()),
            "WriteTable(load-0123456789abcdef-batch-17, u40, 2 updates)");
  EXPECT_NE(Describe(WriteU40(uuid)), DescribeWrite(WriteU40(uuid).write_table()))
      << "Describe() shortens uuids";
}

}  // namespace
}  // namespace tandem::ipc

namespace tandem::ipc {
namespace {

// ---- Subscribe and CancelSubscribe (DESIGN §10)

using namespace samples;  // NOLINT(google-build-using-namespace): builders read as a DSL here

TEST(Validator, SubscribeOnAMaintainedIndexIsAcceptedWithOrWithoutAsOfAndChangesNothing) {
  Validator v = Primed();
  const auto before = Snapshot(v);
  for (const pb::Command& c : {MakeSubscribe("s1", "u9"), MakeSubscribe("s2", "u9", 4, false),
                               MakeSubscribe("s3", "u10", 4, true, 5),
                               MakeSubscribe("s4", "u11", std::nullopt, true, 1)}) {
    const Status s = v.Validate(c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    const Status o = v.ValidateObserver(c);
    EXPECT_TRUE(o.ok()) << "an observer may subscribe: " << o.ToString();
  }
  EXPECT_TRUE(v.Validate(MakeSubscribe("s1", "u9")).ok()) << "uuids are not tracked here";
  EXPECT_EQ(Snapshot(v), before) << "a subscribe changes nothing the validator knows";
}

TEST(Validator, RefusesSubscribeOnAnUnknownIdOrOnACollectionThatIsNotAnIndex) {
  Validator v = Primed();
  ExpectRefused(v, MakeSubscribe("s", "u99"), StatusCode::kNotFound, "unknown index u99");
  ExpectInvalid(v, MakeSubscribe("s", "u4"), "u4 is not an index (subscribes read indexes)");
  const Status o = v.ValidateObserver(MakeSubscribe("s", "u99"));
  EXPECT_EQ(o.code(), StatusCode::kNotFound);
  EXPECT_EQ(o.message(), Describe(MakeSubscribe("s", "u99")) + ": unknown index u99");
}

TEST(Validator, RefusesSubscribeOnAOneShotResult) {
  Validator v = Primed();
  ExpectAccepted(v, OneShot(3, {ImportU9()}, {}, {Export("t7", "u4", {1})}));
  ExpectInvalid(v, MakeSubscribe("s", "t7"), "t7 is a one-shot result");
  EXPECT_NE(v.ValidateObserver(MakeSubscribe("s", "t7")).message().find("maintained indexes"),
            std::string::npos);
}

TEST(Validator, RefusesSubscribeWithAnEmptyOrOversizedUuid) {
  Validator v = Primed();
  ExpectInvalid(v, MakeSubscribe("", "u9"), "uuid is empty");
  ExpectInvalid(v, MakeSubscribe(std::string(WriteBounds::kMaxUuidBytes + 1, 'x'), "u9"),
                "uuid is 129 bytes, at most 128");
  EXPECT_TRUE(v.Validate(MakeSubscribe(std::string(WriteBounds::kMaxUuidBytes, 'x'), "u9")).ok());
}

TEST(Validator, RefusesSubscribeWithAnInvalidTimeOrAnUpToNotAfterItsAsOf) {
  Validator v = Primed();
  ExpectInvalid(v, MakeSubscribe("s", "u9", kNotATime), "as_of 18446744073709551615");
  ExpectInvalid(v, MakeSubscribe("s", "u9", 1, true, kNotATime), "up_to 18446744073709551615");
  ExpectInvalid(v, MakeSubscribe("s", "u9", 5, true, 5), "up_to 5 is not after as_of 5");
  ExpectInvalid(v, MakeSubscribe("s", "u9", 5, false, 2), "up_to 2 is not after as_of 5");
  EXPECT_TRUE(v.Validate(MakeSubscribe("s", "u9", 5, true, 6)).ok());
  // as_of "latest": the supervisor checks up_to against the as_of it fills in.
  EXPECT_TRUE(v.Validate(MakeSubscribe("s", "u9", std::nullopt, true, 0)).ok());
  EXPECT_NE(v.ValidateObserver(MakeSubscribe("s", "u9", 5, true, 5)).message().find("not after"),
            std::string::npos);
}

TEST(Validator, CancelSubscribeNeedsOnlyANonEmptyUuid) {
  Validator v = Primed();
  EXPECT_TRUE(v.Validate(MakeCancelSubscribe("never subscribed")).ok());
  EXPECT_TRUE(v.ValidateObserver(MakeCancelSubscribe("never subscribed")).ok());
  ExpectInvalid(v, MakeCancelSubscribe(""), "uuid is empty");
  EXPECT_EQ(v.ValidateObserver(MakeCancelSubscribe("")).message(),
            "CancelSubscribe(): uuid is empty");
}

TEST(Validator, SubscribeIsRefusedBeforeTheFirstHello) {
  Validator v;
  ExpectRefused(v, MakeSubscribe("s", "u9"), StatusCode::kFailedPrecondition,
                "before the first Hello");
}

// ---- the time itself (tandem_now()) and temporal filters (DESIGN §16)

// A build u31 over log source u30 [INT64 k, TIMESTAMPTZ ts] with `mfp`.
pb::Command OverEvents(pb::MapFilterProject mfp) {
  pb::Command c = EmptyDataflow("over-events");
  pb::SourceImport events = LogImport("u30");
  *events.mutable_schema() =
      MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("ts", pb::TIMESTAMPTZ)});
  *Desc(c)->add_source_imports() = std::move(events);
  *Desc(c)->add_objects_to_build() = Build("u31", MfpPlan(GetPlan("u30"), std::move(mfp)));
  return c;
}

pb::ScalarExpr TenSecondsAfter(pb::ScalarExpr ts) {
  return Binary(pb::ADD, std::move(ts), IntervalLit(10'000'000));
}

TEST(Validator, TheTimeItselfIsATimestamptzThatIsNeverNull) {
  auto type = ExprType(NowExpr(), {});
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  EXPECT_EQ(type->type(), pb::TIMESTAMPTZ);
  EXPECT_FALSE(type->nullable());
}

TEST(Validator, AcceptsTemporalFiltersInAMaintainedDataflowsPredicates) {
  Validator v = Primed();
  // A sliding window, either way round, an equality, and an AND of two comparisons; beside an
  // ordinary predicate and a map that reads the time's bound only.
  ExpectAccepted(
      v, OverEvents(Mfp({TenSecondsAfter(Col(1))},
                        {Binary(pb::GT, Col(0), IntLit(0)), Binary(pb::GE, NowExpr(), Col(1)),
                         Binary(pb::GT, Col(2), NowExpr()),
                         Binary(pb::AND, Binary(pb::LE, NowExpr(), Col(2)),
                                Binary(pb::EQ, Col(1), NowExpr()))},
                        {0, 1})));
}

TEST(Validator, AcceptsATemporalFilterBelowOtherOperators) {
  Validator v = Primed();
  pb::Command c = OverEvents(Mfp({}, SlidingWindow(1, 10'000'000), {}));
  *Desc(c)->mutable_objects_to_build(0)->mutable_plan() =
      ReducePlan(JoinPlan(MfpPlan(GetPlan("u30"), Mfp({}, SlidingWindow(1, 5'000'000), {})),
                          GetPlan("u30"), {0}, {0}),
                 {}, {{pb::COUNT, 0}});
  ExpectAccepted(v, c);
}

TEST(Validator, RefusesTheTimeItselfOutsideAPredicate) {
  Validator v = Primed();
  ExpectInvalid(v, OverEvents(Mfp({NowExpr()}, {}, {})),
                "build u31: Mfp: map expression 0 reads tandem_now(): the time may be read only in "
                "a temporal filter (the predicates of a maintained dataflow's Mfp)");
  ExpectInvalid(
      v, OverEvents(Mfp({If(Binary(pb::GE, NowExpr(), Col(1)), IntLit(1), IntLit(0))}, {}, {})),
      "map expression 0 reads tandem_now()");
}

TEST(Validator, RefusesAPredicateThatReadsTheTimeButIsNoTemporalFilter) {
  Validator v = Primed();
  const std::vector<std::pair<pb::ScalarExpr, std::string>> cases = {
      {Binary(pb::NE, NowExpr(), Col(1)), "predicate 0: tandem_now() is an operand of NE"},
      {Binary(pb::LT, TenSecondsAfter(NowExpr()), Col(1)),
       "predicate 0: an operand of LT computes with tandem_now(): a temporal filter compares "
       "tandem_now() (EQ, LT, LE, GT or GE) with a TIMESTAMPTZ expression that does not read it"},
      {Binary(pb::LT, NowExpr(), NowExpr()), "both operands of LT read tandem_now()"},
      {Unary(pb::NOT, Binary(pb::LT, NowExpr(), Col(1))),
       "tandem_now() is read inside an expression that is not a comparison"},
      {Binary(pb::OR, Binary(pb::LT, NowExpr(), Col(1)), Binary(pb::GT, NowExpr(), Col(1))),
       "tandem_now() is an operand of OR"},
      {Binary(pb::AND, Binary(pb::LT, NowExpr(), Col(1)), Binary(pb::GT, Col(0), IntLit(0))),
       "an AND in a temporal filter joins temporal comparisons only: its right operand does not "
       "read tandem_now() (send it as a predicate of its own)"},
      {Binary(pb::LT, NowExpr(), If(Binary(pb::GT, NowExpr(), Col(1)), Col(1), Col(1))),
       "both operands of LT read tandem_now()"},
  };
  for (const auto& [predicate, reason] : cases) {
    ExpectInvalid(v, OverEvents(Mfp({}, {predicate}, {})), reason);
  }
  // The comparison's other side must be a TIMESTAMPTZ: typing says so first.
  ExpectInvalid(v, OverEvents(Mfp({}, {Binary(pb::LT, NowExpr(), Col(0))}, {})),
                "LT needs two operands of the same type, got TIMESTAMPTZ and INT64");
}

TEST(Validator, RefusesTheTimeItselfInAOneShotRead) {
  Validator v = Primed();
  const pb::Command one_shot = OneShot(
      5, {ImportU9()},
      {Build("t2",
             MfpPlan(GetPlan("u4"), Mfp({}, {Binary(pb::GE, NowExpr(), TimestampTzLit(0))}, {})))},
      {Export("t1", "t2", {0})});
  ExpectInvalid(v, one_shot,
                "build t2: Mfp: predicate 0 reads tandem_now(): a ONE_SHOT_READ dataflow computes "
                "one time, its as_of 5: substitute it as a TIMESTAMPTZ literal (5000 microseconds "
                "since the Unix epoch)");
}

TEST(Validator, RefusesTheTimeItselfInAPeek) {
  Validator v = Primed();
  ExpectInvalid(v, PeekU9({}, Mfp({}, {Binary(pb::GE, NowExpr(), TimestampTzLit(0))}, {})),
                "mfp: predicate 0 reads tandem_now(): a peek reads one time, its timestamp 3: "
                "substitute it as a TIMESTAMPTZ literal (3000 microseconds since the Unix epoch)");
  ExpectInvalid(v, PeekU9({}, Mfp({NowExpr()}, {}, {})), "mfp: map expression 0 reads");
}

}  // namespace
}  // namespace tandem::ipc
