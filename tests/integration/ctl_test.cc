// tandem-ctl (tools/ctl), the real binary, against a real replica (tandem-supervisor with
// tandem-worker): every subcommand, its output and exit status, including the error paths
// (unreachable endpoint, refused command, unknown id, bad usage), and that a later invocation
// replays the history without rebuilding anything.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "base/datum_text.h"
#include "controller/history.h"
#include "controller/write_ledger.h"
#include "ipc/formats/log_parse.h"
#include "ipc/plan_typing.h"
#include "ipc/rows.h"
#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "tools/common/format.h"
#include "tools/ctl/schema.h"
#include "tools/ctl/view.h"

namespace tandem::testing {
namespace {

using CtlResult = BinaryRun;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A temporary directory for the state file, logs and scripts; removed at the end.

// Runs tandem-ctl with `args`; stdout and stderr captured; killed after `limit`.
CtlResult RunCtl(const std::vector<std::string>& args, std::chrono::milliseconds limit = 30s) {
  RunBinaryOptions options;
  options.limit = limit;
  return RunBinary(TANDEM_CTL_BIN, args, options);
}

std::string Describe(const CtlResult& r) { return DescribeRun(r); }

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

namespace gpb = google::protobuf;

// The non-empty lines of `text`.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// One JSON document; a failed parse is a test failure.
gpb::Struct Json(const std::string& text) {
  gpb::Struct doc;
  const auto st = gpb::util::JsonStringToMessage(text, &doc);
  EXPECT_TRUE(st.ok()) << "not one JSON object: " << text;
  return doc;
}
// The last line of a run's stdout, parsed (tandem-ctl --json prints one document a line).
gpb::Struct LastJson(const BinaryRun& r) {
  const auto lines = Lines(r.out);
  EXPECT_FALSE(lines.empty()) << DescribeRun(r);
  return lines.empty() ? gpb::Struct() : Json(lines.back());
}
const gpb::Value& Field(const gpb::Struct& doc, const std::string& name) {
  static const gpb::Value kMissing;
  auto it = doc.fields().find(name);
  EXPECT_NE(it, doc.fields().end()) << "no field " << name;
  return it == doc.fields().end() ? kMissing : it->second;
}
bool Has(const gpb::Struct& doc, const std::string& name) { return doc.fields().count(name) > 0; }

// A failure with --json: the reason on stderr, and on stdout a last line
// {"error": the same reason, "exit_code": the exit status}.
void ExpectJsonFailure(const BinaryRun& r, int code, const std::string& part) {
  EXPECT_EQ(r.exit, code) << DescribeRun(r);
  const gpb::Struct doc = LastJson(r);
  EXPECT_EQ(doc.fields_size(), 2) << r.out;
  EXPECT_EQ(Field(doc, "exit_code").number_value(), code) << r.out;
  EXPECT_TRUE(Contains(Field(doc, "error").string_value(), part)) << r.out;
  EXPECT_TRUE(Contains(r.err, Field(doc, "error").string_value())) << DescribeRun(r);
}

// A real replica and a tandem-ctl pointed at it with its own state file.
class Ctl : public ::testing::Test {
 protected:
  Ctl()
      : sup_({.two_runtime = true,
              .workers = 1,
              .worker_binary = TANDEM_WORKER_BIN,
              .shm_size = "32MiB"}) {}
  void SetUp() override { ASSERT_TRUE(sup_.WaitReady()) << sup_.Log(); }

  CtlResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", sup_.controller_endpoint(), "--state", State()});
    return RunCtl(args);
  }
  std::string State() const { return dir_.File("tandem-ctl.state"); }
  double Metric(const std::string& sample) {
    // A counter nobody incremented yet is not exported: 0.
    return std::max(0.0, MetricValue(HttpGet(sup_.http_port(), "/metrics").body, sample));
  }

  SupervisorProcess sup_;
  TempDir dir_;
};

constexpr char kKept[] = "tandem_dataflows_reconciled_total{role=\"maintenance\",outcome=\"kept\"}";
constexpr char kBuilt[] =
    "tandem_dataflows_reconciled_total{role=\"maintenance\",outcome=\"built\"}";

ipc::pb::Command FromJson(const std::string& json) {
  auto c = ipc::CommandFromJson(json);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : ipc::pb::Command();
}

TEST(CtlHistory, PruneForgetsDroppedDataflowsAndReplayNeverRepeatsADrop) {
  TempDir dir;
  controller::History h =
      *controller::History::Load(dir.File("none"), controller::History::Access::kWrite);
  EXPECT_TRUE(h.commands().empty());
  const std::string schema = R"("schema":{"columns":[{"name":"k","type":"INT64"}]})";
  h.Append(FromJson(R"({"create_dataflow":{"desc":{"source_imports":[{"id":"u1","source":)"
                    R"({"counter":{}},)" +
                    schema +
                    R"(}],"index_exports":[{"id":"u2","on":"u1","key":[0]}],"as_of":)"
                    R"({"elements":["0"]},"class":"MAINTAINED"}}})"));
  h.Append(FromJson(R"({"create_dataflow":{"desc":{"source_imports":[{"id":"u3","source":)"
                    R"({"counter":{}},)" +
                    schema +
                    R"(}],"objects_to_build":[{"id":"u4","plan":{"reduce":{"input":{"get":)"
                    R"({"id":"u3"}},"group_key":[0],"aggregates":[{"func":"COUNT"}]}}}],)"
                    R"("index_exports":[{"id":"u5","on":"u4","key":[0]},{"id":"u6","on":"u4",)"
                    R"("key":[1]}],"as_of":{"elements":["0"]},"class":"MAINTAINED"}}})"));
  h.Append(FromJson(R"({"allow_compaction":{"id":"u2","frontier":{"elements":["3"]}}})"));
  h.Append(FromJson(R"({"allow_compaction":{"id":"u6","frontier":{"elements":["2"]}}})"));
  h.Append(FromJson(R"({"allow_compaction":{"id":"u2","frontier":{}}})"));
  h.Append(FromJson(R"({"allow_compaction":{"id":"u5","frontier":{}}})"));
  EXPECT_EQ(h.IndexFor("u4"), "u6");
  EXPECT_EQ(h.Lookup("u4")->schema.columns(1).name(), "count");
  EXPECT_EQ(h.Lookup("u6")->key, (std::vector<std::uint32_t>{1}));
  h.Prune();
  ASSERT_EQ(h.commands().size(), 3u);  // u3's dataflow, u6's compaction, u5's drop
  EXPECT_EQ(h.LiveIds(), (std::set<std::string>{"u3", "u4", "u6"}));
  EXPECT_EQ(h.NextFreeId(), "u7");
  const auto replay = h.Replay();
  ASSERT_EQ(replay.size(), 2u) << "a drop a live replica already applied is not repeated";
  EXPECT_TRUE(replay[0].has_create_dataflow());
  EXPECT_EQ(replay[1].allow_compaction().id(), "u6");
  ASSERT_TRUE(h.Save().ok());
  h = controller::History();  // lets go of the state file (and its lock)
  auto back = controller::History::Load(dir.File("none"), controller::History::Access::kWrite);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->commands().size(), 3u);
}

// The schema words of DESIGN §16's types, their typmods, and datums typed by them.
TEST(CtlHistory, SchemasOfEveryTypeWithTheirTypmods) {
  auto schema = ctl::ParseSchema(
      "price:numeric(12,2),n:int4,m:int2,k:int8,f:float4,s:varchar(10),c:char(3),b:bytea?,"
      "d:date,t:time,ts:timestamp,tz:timestamptz?,i:interval,u:uuid,x:numeric");
  ASSERT_TRUE(schema.ok()) << schema.status().message();
  ASSERT_EQ(schema->columns_size(), 15);
  const auto& price = schema->columns(0);
  EXPECT_EQ(price.type(), ipc::pb::NUMERIC);
  EXPECT_EQ(price.precision(), 12u);
  EXPECT_EQ(price.scale(), 2u);
  EXPECT_EQ(schema->columns(1).type(), ipc::pb::INT32);
  EXPECT_EQ(schema->columns(2).type(), ipc::pb::INT16);
  EXPECT_EQ(schema->columns(3).type(), ipc::pb::INT64);
  EXPECT_EQ(schema->columns(4).type(), ipc::pb::FLOAT32);
  EXPECT_EQ(schema->columns(5).length(), 10u);
  EXPECT_FALSE(schema->columns(5).blank_padded());
  EXPECT_TRUE(schema->columns(6).blank_padded());
  EXPECT_TRUE(schema->columns(7).nullable());
  EXPECT_EQ(schema->columns(11).type(), ipc::pb::TIMESTAMPTZ);
  EXPECT_EQ(schema->columns(14).precision(), 0u) << "numeric without typmods is unconstrained";
  for (const auto& c : schema->columns()) EXPECT_TRUE(ipc::CheckColumnType(c).ok()) << c.name();
  EXPECT_EQ(ctl::ColumnTypeText(price), "numeric(12,2)");
  EXPECT_EQ(ctl::ColumnTypeText(schema->columns(6)), "char(3)");
  for (const char* bad : {"p:numeric(39)", "p:numeric(5,6)", "p:numeric(1,2,3)", "s:varchar(0)",
                          "n:int4(3)", "d:datetime", "p:numeric(12,"}) {
    EXPECT_FALSE(ctl::ParseSchema(bad).ok()) << bad;
  }
  // Datums typed by those columns: the bare PostgreSQL text, brought to the column's type.
  EXPECT_EQ(ctl::ParseDatum("12.5", &price)->numeric(), "12.50");
  EXPECT_FALSE(ctl::ParseDatum("2147483648", &schema->columns(1)).ok());
  EXPECT_EQ(ctl::ParseDatum("2026-12-06", &schema->columns(8))->date(), 20793);
  EXPECT_EQ(ctl::ParseDatum("date '2026-12-06'", nullptr)->date(), 20793);
  EXPECT_EQ(ctl::ParseDatum("\"ab\"", &schema->columns(6))->string(), "ab ");
  auto key = ctl::ParseKey("numeric '1.50', date '2026-12-06'", {&price, &schema->columns(8)});
  ASSERT_TRUE(key.ok()) << key.status().message();
  EXPECT_EQ(key->datums(0).numeric(), "1.50");
  EXPECT_EQ(ctl::DatumText(key->datums(1)), "date '2026-12-06'");
}

TEST(CtlHistory, SchemasColumnsAndDatums) {
  auto schema = ctl::ParseSchema("k:int64, name:string?,ok:bool,x:float64");
  ASSERT_TRUE(schema.ok());
  ASSERT_EQ(schema->columns_size(), 4);
  EXPECT_TRUE(schema->columns(1).nullable());
  EXPECT_EQ(schema->columns(3).type(), ipc::pb::FLOAT64);
  EXPECT_FALSE(ctl::ParseSchema("k:int32").ok());
  EXPECT_FALSE(ctl::ParseSchema("k").ok());
  auto cols = ctl::ParseColumns("name,0,ok", *schema);
  ASSERT_TRUE(cols.ok());
  EXPECT_EQ(*cols, (std::vector<std::uint32_t>{1, 0, 2}));
  EXPECT_FALSE(ctl::ParseColumns("nope", *schema).ok());
  EXPECT_EQ(ctl::ParseDatum("-12", &schema->columns(0))->int64(), -12);
  EXPECT_FALSE(ctl::ParseDatum("1.5", &schema->columns(0)).ok());
  EXPECT_FALSE(ctl::ParseDatum("null", &schema->columns(0)).ok()) << "k is not nullable";
  EXPECT_EQ(ctl::ParseDatum("\"12\"", &schema->columns(1))->string(), "12");
  EXPECT_TRUE(ctl::ParseDatum("null", &schema->columns(1))->has_null());
  EXPECT_EQ(ctl::ParseDatum("\"null\"", &schema->columns(1))->string(), "null");
  EXPECT_EQ(ctl::DatumText(*ctl::ParseDatum("\"a\\\"b\"", nullptr)), "\"a\\\"b\"");
  EXPECT_EQ(ctl::DatumText(*ctl::ParseDatum("2", &schema->columns(3))), "2.0");
  // An unquoted word is no datum: the reason says how to write a string.
  auto word = ctl::ParseDatum("abc", &schema->columns(1));
  ASSERT_FALSE(word.ok());
  EXPECT_TRUE(Contains(word.status().message(), "double quotes: \"abc\""))
      << word.status().message();
}

// A source has an index of its own, s<n> for u<n>, which takes none of the user's ids;
// what reads the source imports an index of it and starts where that index is readable.
TEST(CtlHistory, ASourceHasItsOwnIndexAndImportersStartWhereItIsReadable) {
  EXPECT_EQ(controller::History::SourceIndexId("u7"), std::optional<std::string>("s7"));
  EXPECT_EQ(controller::History::SourceIndexId("s7"), std::nullopt);
  EXPECT_EQ(controller::History::SourceIndexId("u07"), std::nullopt);
  EXPECT_EQ(controller::History::SourceIndexId("t3"), std::nullopt);
  TempDir dir;
  controller::History h =
      *controller::History::Load(dir.File("none"), controller::History::Access::kWrite);
  const std::string schema =
      R"("schema":{"columns":[{"name":"k","type":"INT64"},{"name":"v","type":"INT64"}]})";
  // create-source u1, then create-index u2 --on u1 --key v.
  h.Append(FromJson(R"({"create_dataflow":{"desc":{"debug_name":"source u1","source_imports":)"
                    R"([{"id":"u1","source":{"counter":{}},)" +
                    schema +
                    R"(}],"index_exports":[{"id":"s1","on":"u1","key":[0]}],"as_of":)"
                    R"({"elements":["0"]},"class":"MAINTAINED"}}})"));
  h.Append(FromJson(R"({"allow_compaction":{"id":"s1","frontier":{"elements":["5"]}}})"));
  h.Append(FromJson(R"({"create_dataflow":{"desc":{"debug_name":"index u2","index_imports":)"
                    R"([{"id":"s1","on":"u1",)" +
                    schema +
                    R"(,"key":[0]}],"index_exports":[{"id":"u2","on":"u1","key":[1]}],"as_of":)"
                    R"({"elements":["5"]},"class":"MAINTAINED"}}})"));
  h.Append(FromJson(R"({"allow_compaction":{"id":"s1","frontier":{"elements":["3"]}}})"));
  EXPECT_EQ(h.SourceIndex("u1"), std::optional<std::string>("s1"));
  EXPECT_EQ(h.IndexFor("u1"), "s1") << "peek u1 reads the source's own index";
  EXPECT_EQ(h.KindOf("u1").kind, controller::History::IdKind::kSource);
  using Indexes = std::vector<std::pair<std::string, std::vector<std::uint32_t>>>;
  EXPECT_EQ(h.IndexesOn("u1"), (Indexes{{"s1", {0}}, {"u2", {1}}}));
  ASSERT_TRUE(h.Lookup("u2"));
  EXPECT_EQ(h.Lookup("u2")->schema.columns_size(), 2);
  EXPECT_EQ(h.Lookup("u2")->key, (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(h.ReadableFrom("s1"), 5u) << "the latest frontier allowed, not the last one sent";
  EXPECT_EQ(h.ReadableFrom("u2"), 5u) << "its dataflow's as_of";
  EXPECT_EQ(h.NextFreeId(), "u3") << "s1 takes no user number";
  // Dropping the importer leaves the source; dropping the source's index leaves nothing.
  h.Append(FromJson(R"({"allow_compaction":{"id":"u2","frontier":{}}})"));
  h.Prune();
  EXPECT_EQ(h.LiveIds(), (std::set<std::string>{"u1", "s1"}));
  EXPECT_EQ(h.SourceIndex("u1"), std::optional<std::string>("s1"));
  h.Append(FromJson(R"({"allow_compaction":{"id":"s1","frontier":{}}})"));
  h.Prune();
  EXPECT_EQ(h.SourceIndex("u1"), std::nullopt);
  EXPECT_TRUE(h.LiveIds().empty());
}

// Locks are the kernel's per-process record locks: the contenders are other tandem-ctl processes.
TEST(CtlHistory, AWriterWhileAnotherWritesIsRefusedNamingItAndChangesNothing) {
  TempDir dir;
  const std::string state = dir.File("state");
  {
    controller::History h = *controller::History::Load(state, controller::History::Access::kWrite);
    h.Append(FromJson(R"({"allow_compaction":{"id":"u2","frontier":{"elements":["3"]}}})"));
    ASSERT_TRUE(h.Save().ok());
  }
  const std::string before = ReadFile(state);
  const std::string unreachable = "tcp://127.0.0.1:" + std::to_string(FreePort());
  {
    // This test is "the first tandem-ctl" now, changing the state file.
    auto first = controller::History::Load(state, controller::History::Access::kWrite);
    ASSERT_TRUE(first.ok());
    const std::string holder = "another tandem-ctl (pid " + std::to_string(getpid()) + ")";
    auto r = RunCtl({"--state", state, "create-source", "u9", "--generator", "counter"});
    EXPECT_EQ(r.exit, 1) << Describe(r);
    EXPECT_TRUE(Contains(r.err, holder + " is changing the state file")) << Describe(r);
    r = RunCtl({"--endpoint", unreachable, "--timeout", "1", "--state", state, "peek", "u2"});
    EXPECT_EQ(r.exit, 1) << Describe(r);
    EXPECT_TRUE(Contains(r.err, holder + " is changing the state file")) << Describe(r);
    EXPECT_EQ(ReadFile(state), before);
  }  // the first history is gone, and with it the lock
  auto reader = controller::History::Load(state, controller::History::Access::kRead);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->commands().size(), 1u);
  EXPECT_EQ(reader->Save().code(), StatusCode::kFailedPrecondition);
}

// A history with one dataflow, log source u1 indexed by u2 on column k, as create-index leaves it.
void WriteIndexHistory(const std::string& state, const std::string& log) {
  controller::History h = *controller::History::Load(state, controller::History::Access::kWrite);
  h.Append(FromJson(R"({"create_dataflow":{"desc":{"debug_name":"index u2","source_imports":)"
                    R"([{"id":"u1","source":{"log":{"path":")" +
                    log +
                    R"("}},"schema":{"columns":[{"name":"k","type":"INT64"}]}}],)"
                    R"("index_exports":[{"id":"u2","on":"u1","key":[0]}],"as_of":)"
                    R"({"elements":["0"]},"class":"MAINTAINED"}}})"));
  ASSERT_TRUE(h.Save().ok());
}

// Twenty read-only invocations at once on one state file: none is refused for the lock (each
// fails only for the endpoint nobody listens on).
TEST(CtlHistory, ReadOnlyInvocationsRunTogether) {
  TempDir dir;
  const std::string state = dir.File("state");
  WriteIndexHistory(state, dir.File("data.log"));
  const std::string command = std::string(TANDEM_CTL_BIN) +
                              " --endpoint tcp://127.0.0.1:" + std::to_string(FreePort()) +
                              " --timeout 1 --state " + state + " peek u2 --at 1";
  RunBinaryOptions options;
  options.limit = 60s;
  const auto r = RunBinary("/bin/sh",
                           {"-c", "pids=; for i in $(seq 20); do " + command +
                                      " & pids=\"$pids $!\"; done; n=0; fails=0; for p in $pids; "
                                      "do n=$((n+1)); wait $p; [ $? = 69 ] || fails=$((fails+1)); "
                                      "done; echo ran=$n fails=$fails"},
                           options);
  EXPECT_EQ(r.exit, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "ran=20 fails=0")) << Describe(r);
  EXPECT_FALSE(Contains(r.err, "another tandem-ctl")) << Describe(r);
}

TEST(CtlUsage, UnreachableEndpointExits69WithAClearMessage) {
  TempDir dir;
  WriteIndexHistory(dir.File("state"), dir.File("data.log"));
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(FreePort());
  for (const std::vector<std::string>& command : {std::vector<std::string>{"frontiers"},
                                                  {"peek", "u1", "--at", "1"},
                                                  {"drop", "u2"},
                                                  {"replay"}}) {
    std::vector<std::string> args = {"--endpoint", endpoint,  "--timeout",
                                     "1",          "--state", dir.File("state")};
    args.insert(args.end(), command.begin(), command.end());
    const auto r = RunCtl(args);
    EXPECT_EQ(r.exit, 69) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "cannot reach the replica at " + endpoint)) << Describe(r);
  }
}

TEST(CtlUsage, BadUsageExits64AndHelpExits0) {
  TempDir dir;
  const std::string state = dir.File("state");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{},
        {"--state", state, "bogus"},
        {"--state", state, "create-source", "u1"},
        {"--state", state, "create-source", "u1", "--log", "/x", "--schema", "k:money"},
        {"--state", state, "peek", "u1", "--at", "soon"},
        {"--state", state, "--timeout", "never", "watch"},
        {"--state", state, "create-index", "u2", "--on"}}) {
    const auto r = RunCtl(args);
    EXPECT_EQ(r.exit, 64) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "tandem-ctl: ")) << Describe(r);
  }
  const auto help = RunCtl({"--help"});
  EXPECT_EQ(help.exit, 0);
  EXPECT_TRUE(Contains(help.out, "usage: tandem-ctl")) << help.out;
  EXPECT_TRUE(Contains(help.out, "create-source u<n> creates a dataflow of its own")) << help.out;
  EXPECT_TRUE(Contains(help.out, "query")) << help.out;
}

TEST_F(Ctl, LogSourceIndexPeeksAndASecondInvocationReplaysWithoutRebuilding) {
  dir_.Write("data.log", "U 0 1 1 10\nU 0 1 2 20\nU 3 1 3 30\nU 4 -1 1 10\nP 5\n");
  auto src =
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"});
  ASSERT_EQ(src.exit, 0) << Describe(src) << sup_.Log();
  EXPECT_TRUE(Contains(src.out, "created source u1 with index s1 (key k)")) << src.out;
  EXPECT_TRUE(Contains(ReadFile(State()), "\"index_exports\":[{\"id\":\"s1\",\"on\":\"u1\""))
      << ReadFile(State());
  auto dup = Run({"create-source", "u1", "--generator", "counter"});
  EXPECT_EQ(dup.exit, 1) << Describe(dup);
  EXPECT_TRUE(Contains(dup.err, "tandem-ctl: refused: create-source u1: ")) << Describe(dup);

  auto idx = Run({"create-index", "u2", "--on", "u1", "--key", "k"});
  ASSERT_EQ(idx.exit, 0) << Describe(idx) << sup_.Log();
  EXPECT_TRUE(Contains(idx.out, "created index u2 on u1 (key k), importing s1")) << idx.out;
  EXPECT_TRUE(Contains(ReadFile(State()), "\"index_imports\":[{\"id\":\"s1\",\"on\":\"u1\""))
      << "u2's dataflow imports the source's index\n"
      << ReadFile(State());

  // create-index replayed the history first (u1's dataflow kept, the first reconciliation that
  // keeps one); the maintenance runtime's report of it may be counted after the command's answer.
  ASSERT_TRUE(Eventually([&] { return Metric(kKept) >= 1; }, 10s)) << sup_.Log();
  const double kept_before = Metric(kKept);
  const double built_before = Metric(kBuilt);
  auto at3 = Run({"peek", "u2", "--at", "3"});
  ASSERT_EQ(at3.exit, 0) << Describe(at3) << sup_.Log();
  EXPECT_TRUE(Contains(at3.out, "k  v   count\n")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, "1  10  1\n")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, "3  30  1\n")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, "(3 rows of u2 at time 3, ")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, " ms)")) << at3.out;
  // A peek observes: no replay, no reconciliation.
  EXPECT_EQ(Metric(kKept), kept_before);
  // A command that changes the replica replays the history: the dataflow is kept, not rebuilt.
  dir_.Write("nothing.jsonl", "# replays the history and sends nothing else\n");
  auto replay = Run({"run", dir_.File("nothing.jsonl")});
  ASSERT_EQ(replay.exit, 0) << Describe(replay);
  EXPECT_GE(Metric(kKept), kept_before + 1);
  EXPECT_EQ(Metric(kBuilt), built_before);

  auto keyed = Run({"--json", "peek", "u2", "--at", "4", "--key", "2", "--key", "1"});
  ASSERT_EQ(keyed.exit, 0) << Describe(keyed);
  EXPECT_TRUE(Contains(keyed.out,
                       "\"columns\":[\"k\",\"v\"],\"rows\":[{\"row\":[2,20],"
                       "\"count\":1}]}"))
      << keyed.out;
  EXPECT_TRUE(Contains(keyed.out, "\"latency_ms\":")) << keyed.out;

  auto ordered = Run({"--json", "peek", "u2", "--at", "3", "--order-by", "v:desc", "--limit", "2"});
  ASSERT_EQ(ordered.exit, 0) << Describe(ordered);
  EXPECT_TRUE(Contains(ordered.out,
                       "\"rows\":[{\"row\":[3,30],\"count\":1},{\"row\":[2,20],"
                       "\"count\":1}]"))
      << ordered.out;

  // Latest: the index's upper is 5, reported before this controller connected; then it moves.
  auto latest = Run({"peek", "u2"});
  ASSERT_EQ(latest.exit, 0) << Describe(latest);
  EXPECT_TRUE(Contains(latest.out, "at time 4,")) << latest.out;
  dir_.Write("data.log", "U 7 1 9 90\nP 8\n", true);
  // "Latest" is whatever is complete when asked: ask until the runtime has read the new lines.
  CtlResult later;
  ASSERT_TRUE(Eventually(
      [&] {
        later = Run({"--json", "peek", "u2", "--at", "latest"});
        return later.exit == 0 && Contains(later.out, "\"time\":7,");
      },
      10s))
      << Describe(later);
  EXPECT_TRUE(Contains(later.out, "{\"row\":[9,90],\"count\":1}")) << later.out;
  EXPECT_EQ(Metric(kBuilt), built_before);
  // u2's frontier (8) has not moved since: an observer is sent it when it connects.
  auto frontiers = Run({"frontiers", "u2", "--for", "0.2"});
  ASSERT_EQ(frontiers.exit, 0) << Describe(frontiers);
  EXPECT_TRUE(Contains(frontiers.out, "\nu2  8      8      8       reported")) << frontiers.out;
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, RefusedCommandsAndUnknownIdsExit1WithTheReason) {
  auto unknown_source = Run({"create-index", "u9", "--on", "u77", "--key", "0"});
  EXPECT_EQ(unknown_source.exit, 1) << Describe(unknown_source);
  EXPECT_TRUE(Contains(unknown_source.err,
                       "tandem-ctl: refused: create-index u9: u77 is not a source or collection "
                       "this controller created"))
      << Describe(unknown_source);
  EXPECT_FALSE(Contains(ReadFile(State()), "u9")) << "a refused command is not recorded";

  auto unknown_peek = Run({"peek", "u42", "--at", "1"});
  EXPECT_EQ(unknown_peek.exit, 1) << Describe(unknown_peek);
  EXPECT_TRUE(Contains(unknown_peek.err, "tandem-ctl: refused: peek u42: the replica refused Peek"))
      << Describe(unknown_peek);
  EXPECT_TRUE(Contains(unknown_peek.err, "unknown index u42")) << Describe(unknown_peek);

  auto unknown_latest = Run({"--timeout", "1", "peek", "u42"});
  EXPECT_EQ(unknown_latest.exit, 1) << Describe(unknown_latest);
  EXPECT_TRUE(Contains(unknown_latest.err, "unknown index u42")) << Describe(unknown_latest);

  auto compaction = Run({"allow-compaction", "u42", "3"});
  EXPECT_EQ(compaction.exit, 1) << Describe(compaction);
  EXPECT_TRUE(Contains(compaction.err,
                       "tandem-ctl: refused: allow-compaction u42: u42 is not an index this "
                       "controller created (state file " +
                           State() + ")"))
      << Describe(compaction);

  auto drop = Run({"drop", "u42"});
  EXPECT_EQ(drop.exit, 1) << Describe(drop);
  EXPECT_TRUE(Contains(drop.err, "refused: drop u42: u42 is not an index this controller created"))
      << Describe(drop);

  auto bad_key = Run({"create-source", "u1", "--generator", "key_value", "--keys", "0"});
  EXPECT_EQ(bad_key.exit, 1) << Describe(bad_key);
  EXPECT_TRUE(Contains(bad_key.err, "keys is 0")) << Describe(bad_key);
  EXPECT_FALSE(Contains(ReadFile(State()), "u1")) << "a refused source is not recorded";

  // A peek answered with an error (below since after compaction).
  dir_.Write("data.log", "U 0 1 1 10\nP 5\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64?"})
          .exit,
      0);
  // A source stands for its index (s1) in allow-compaction and peek.
  auto compact = Run({"allow-compaction", "u1", "3"});
  ASSERT_EQ(compact.exit, 0) << Describe(compact);
  EXPECT_TRUE(Contains(compact.out, "allowed compaction of s1 (the index of source u1) up to 3"))
      << compact.out;
  // The replica may compact from now on (not necessarily at once: until since has moved, time 1
  // is still exact and answered); once it has, a peek below since is an error.
  CtlResult below;
  EXPECT_TRUE(Eventually(
      [&] {
        below = Run({"peek", "u1", "--at", "1"});
        return below.exit != 0;
      },
      10s))
      << Describe(below);
  EXPECT_EQ(below.exit, 1) << Describe(below);
  EXPECT_TRUE(Contains(below.err, "tandem-ctl: refused: peek u1 @ 1: ")) << Describe(below);
  EXPECT_TRUE(Contains(below.err, "before since")) << Describe(below);
  auto above = Run({"peek", "u1", "--at", "3"});
  EXPECT_EQ(above.exit, 0) << Describe(above) << sup_.Log();
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, ViewsDataflowFilesFrontiersWatchRunCompactionAndDrop) {
  // A view: group by g, count and sum over a nullable column.
  dir_.Write("groups.log", "U 0 1 1 10\nU 0 1 1 20\nU 1 1 2 5\nU 1 1 2 null\nP 3\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("groups.log"), "--schema", "g:int64,x:int64?"})
          .exit,
      0);
  auto view = Run({"create-view", "u3", "--on", "u1", "--group-by", "g", "--aggregate", "count",
                   "--aggregate", "sum:x", "--index-id", "u4"});
  ASSERT_EQ(view.exit, 0) << Describe(view) << sup_.Log();
  EXPECT_TRUE(Contains(view.out, "created view u3 on u1 with index u4 (key g), importing s1"))
      << view.out;
  auto peek = Run({"peek", "u3", "--at", "2"});  // the view's id reads its index
  ASSERT_EQ(peek.exit, 0) << Describe(peek);
  EXPECT_TRUE(Contains(peek.out, "g  count  sum_x  #count\n")) << peek.out;
  EXPECT_TRUE(Contains(peek.out, "1  2      30     1\n")) << peek.out;
  EXPECT_TRUE(Contains(peek.out, "2  2      5      1\n")) << peek.out;

  // A ticking generator through a dataflow file (a DataflowDescription in protocol JSON).
  dir_.Write("counter.json", R"({"debug_name": "ticks",
    "source_imports": [{"id": "u10", "source": {"counter": {"tick_interval_us": "20000"}},
                        "schema": {"columns": [{"name": "n", "type": "INT64"}]}}],
    "index_exports": [{"id": "u11", "on": "u10", "key": [0]}],
    "as_of": {"elements": ["0"]}, "class": "MAINTAINED"})");
  auto file = Run({"create-dataflow", dir_.File("counter.json")});
  ASSERT_EQ(file.exit, 0) << Describe(file) << sup_.Log();
  EXPECT_TRUE(Contains(file.out, "created dataflow ticks (indexes u11)")) << file.out;
  dir_.Write("broken.json", "{\"debug_name\": ");
  EXPECT_EQ(Run({"create-dataflow", dir_.File("broken.json")}).exit, 64);

  auto frontiers = Run({"frontiers"});
  ASSERT_EQ(frontiers.exit, 0) << Describe(frontiers);
  EXPECT_TRUE(Contains(frontiers.out, "id   write")) << frontiers.out;
  EXPECT_TRUE(Contains(frontiers.out, "\nu11 ")) << frontiers.out;
  auto one = Run({"--json", "frontiers", "u11"});
  ASSERT_EQ(one.exit, 0) << Describe(one);
  EXPECT_TRUE(Contains(one.out, "{\"frontiers\":[{\"id\":\"u11\",\"write\":")) << one.out;
  EXPECT_FALSE(Contains(one.out, "\"u10\"")) << one.out;
  auto latest = Run({"peek", "u11", "--limit", "1", "--order-by", "n:desc"});
  ASSERT_EQ(latest.exit, 0) << Describe(latest);
  EXPECT_TRUE(Contains(latest.out, "(1 row of u11 at time ")) << latest.out;

  auto watch = Run({"--json", "watch", "--for", "1"});
  ASSERT_EQ(watch.exit, 0) << Describe(watch);
  EXPECT_TRUE(Contains(watch.out, "{\"frontiers\":{\"id\":\"u11\"")) << watch.out;
  auto human = Run({"watch", "--for", "0.5"});
  ASSERT_EQ(human.exit, 0) << Describe(human);
  EXPECT_TRUE(Contains(human.out, "frontiers u11 write ")) << human.out;

  // A script: a peek, a compaction (recorded), a refused command (exit 1, the rest still sent).
  dir_.Write("script.jsonl", R"(# a comment
{"peek": {"uuid": "p1", "id": "u4", "timestamp": "2"}}
{"allow_compaction": {"id": "u4", "frontier": {"elements": ["1"]}}}
{"allow_compaction": {"id": "u99", "frontier": {"elements": ["1"]}}}
{"peek": {"uuid": "p2", "id": "u4", "timestamp": "2", "keys": [{"datums": [{"int64": "2"}]}]}}
)");
  auto run = Run({"--json", "run", dir_.File("script.jsonl")});
  EXPECT_EQ(run.exit, 1) << Describe(run);
  EXPECT_TRUE(Contains(run.err, "tandem-ctl: refused: " + dir_.File("script.jsonl") +
                                    ":4 AllowCompaction(u99, [1]): u99 is not an index this "
                                    "controller created"))
      << Describe(run);
  EXPECT_TRUE(Contains(run.out, "{\"peek_response\":{\"uuid\":\"p1\",\"rows\"")) << run.out;
  EXPECT_TRUE(Contains(run.out, "{\"peek_response\":{\"uuid\":\"p2\",\"rows\"")) << run.out;
  EXPECT_TRUE(Contains(ReadFile(State()), "{\"allow_compaction\":{\"id\":\"u4\""))
      << ReadFile(State());
  dir_.Write("bad.jsonl", "{\"peek\": 3}\n");
  EXPECT_EQ(Run({"run", dir_.File("bad.jsonl")}).exit, 64);

  auto compaction = Run({"allow-compaction", "u11", "2"});
  ASSERT_EQ(compaction.exit, 0) << Describe(compaction);
  EXPECT_TRUE(Contains(compaction.out, "allowed compaction of u11 up to 2")) << compaction.out;

  // Drop the view's index: its dataflow and compactions leave the history; peeks are refused.
  auto drop = Run({"drop", "u4"});
  ASSERT_EQ(drop.exit, 0) << Describe(drop);
  EXPECT_TRUE(Contains(drop.out, "dropped u4")) << drop.out;
  const std::string state = ReadFile(State());
  EXPECT_FALSE(Contains(state, "\"u4\"")) << state;
  EXPECT_FALSE(Contains(state, "\"u3\"")) << state;
  EXPECT_TRUE(Contains(state, "\"u11\"")) << state;
  EXPECT_TRUE(Contains(state, "\"s1\"")) << "the source stays\n" << state;
  auto gone = Run({"peek", "u4", "--at", "2"});
  EXPECT_EQ(gone.exit, 1) << Describe(gone);
  EXPECT_TRUE(Contains(gone.err, "unknown index u4")) << Describe(gone);
  // A source nothing imports is dropped with its index.
  ASSERT_EQ(Run({"create-source", "u20", "--generator", "counter"}).exit, 0);
  auto source = Run({"drop", "u20"});
  EXPECT_EQ(source.exit, 0) << Describe(source);
  EXPECT_TRUE(Contains(source.out, "dropped source u20 (its index s20)")) << source.out;
  EXPECT_FALSE(Contains(ReadFile(State()), "u20"));
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

// ---------------------------------------------------------------------------------------------
// The datum syntax, closed indexes, refused drops, log paths, one JSON schema, exit codes and
// messages.

// What the tools print for a datum is what the log format (ipc/formats/log_parse.h, the parser the
// runtime uses) and --key read back: one syntax, checked against the real parser.
TEST(CtlDatums, WhatTheToolsPrintTheLogFormatAndKeysReadBack) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<Datum, ipc::pb::ScalarType>> datums = {
      {Null{}, ipc::pb::STRING},
      {true, ipc::pb::BOOL},
      {false, ipc::pb::BOOL},
      {std::int64_t{-12}, ipc::pb::INT64},
      {std::numeric_limits<std::int64_t>::min(), ipc::pb::INT64},
      {0.1, ipc::pb::FLOAT64},
      {-0.0, ipc::pb::FLOAT64},
      {2.0, ipc::pb::FLOAT64},
      {2e20, ipc::pb::FLOAT64},
      {1e-300, ipc::pb::FLOAT64},
      {nan, ipc::pb::FLOAT64},
      {inf, ipc::pb::FLOAT64},
      {-inf, ipc::pb::FLOAT64},
      {std::string(""), ipc::pb::STRING},
      {std::string("a,b"), ipc::pb::STRING},
      {std::string("null"), ipc::pb::STRING},
      {std::string("12"), ipc::pb::STRING},
      {std::string("say \"hi\" \\ there"), ipc::pb::STRING},
      {std::string("two\nlines\tand a tab"), ipc::pb::STRING}};
  auto same = [](const Datum& a, const Datum& b) {
    if (a.index() == 3 && b.index() == 3 && std::isnan(std::get<double>(a))) {
      return std::isnan(std::get<double>(b));
    }
    if (a.index() == 3 && b.index() == 3) {
      return std::signbit(std::get<double>(a)) == std::signbit(std::get<double>(b)) && a == b;
    }
    return a == b;
  };
  for (const auto& [datum, type] : datums) {
    const std::string text = DatumText(datum);
    SCOPED_TRACE(text);
    EXPECT_EQ(text.find('\n'), std::string::npos) << "a datum never breaks a line";
    EXPECT_EQ(text.find('\t'), std::string::npos);
    ipc::pb::Schema schema;
    auto* col = schema.add_columns();
    col->set_name("c");
    col->set_type(type);
    col->set_nullable(true);
    auto record = ipc::ParseLogLine("U 0 1 " + text, schema);
    ASSERT_TRUE(record.has_value());
    ASSERT_EQ(record->kind, ipc::LogRecord::Kind::kUpdate) << record->error;
    ASSERT_EQ(record->row.size(), 1u);
    EXPECT_TRUE(same(record->row[0], datum)) << "the log parser reads it back";
    auto typed = ctl::ParseDatum(text, col);
    ASSERT_TRUE(typed.ok()) << typed.status().message();
    EXPECT_TRUE(same(ipc::FromProto(*typed), datum)) << "--key reads it back";
    auto untyped = ctl::ParseDatum(text, nullptr);
    ASSERT_TRUE(untyped.ok()) << untyped.status().message();
    EXPECT_TRUE(same(ipc::FromProto(*untyped), datum)) << "without knowing the column's type";
  }
  // A multi-column key: commas inside quotes belong to the string.
  ipc::pb::Column s, n;
  s.set_name("s");
  s.set_type(ipc::pb::STRING);
  s.set_nullable(true);
  n.set_name("n");
  n.set_type(ipc::pb::INT64);
  auto key = ctl::ParseKey(R"("a, \"b\", c", 7)", {&s, &n});
  ASSERT_TRUE(key.ok()) << key.status().message();
  ASSERT_EQ(key->datums_size(), 2);
  EXPECT_EQ(key->datums(0).string(), "a, \"b\", c");
  EXPECT_EQ(key->datums(1).int64(), 7);
  EXPECT_TRUE(ctl::ParseKey("null,7", {&s, &n})->datums(0).has_null());
  EXPECT_FALSE(ctl::ParseKey("7", {&s, &n}).ok()) << "one datum per key column";
  EXPECT_FALSE(ctl::ParseKey(R"("open,7)", {&s, &n}).ok()) << "unterminated string";
  EXPECT_FALSE(ctl::ParseKey(R"("a\qb",7)", {&s, &n}).ok()) << "unknown escape";
  // JSON: the same numbers, the non-finite floats as the log format's words.
  tools::JsonWriter json;
  json.RowValue({Null{}, 2.0, nan, -inf, std::string("null"), std::int64_t{3}});
  EXPECT_EQ(json.str(), R"([null,2.0,"nan","-inf","null",3])");
}

TEST_F(Ctl, AClosedIndexIsReadAtItsFinalContents) {
  ASSERT_EQ(Run({"create-source", "u6", "--generator", "counter", "--max", "3000",
                 "--tick-interval-us", "0"})
                .exit,
            0)
      << sup_.Log();
  // Once the counter has ended its index is closed: the empty frontier, null in JSON.
  CtlResult frontiers;
  ASSERT_TRUE(Eventually(
      [&] {
        frontiers = Run({"--json", "frontiers", "s6", "--for", "0.1"});
        return frontiers.exit == 0 && Contains(frontiers.out, "\"closed\":true");
      },
      20s))
      << Describe(frontiers) << sup_.Log();
  const auto f = Field(LastJson(frontiers), "frontiers").list_value();
  ASSERT_EQ(f.values_size(), 1) << frontiers.out;
  EXPECT_EQ(Field(f.values(0).struct_value(), "write").kind_case(), gpb::Value::kNullValue);

  // "Latest" of a closed index is its final contents, read at the largest time.
  auto latest = Run({"--json", "peek", "u6"});
  ASSERT_EQ(latest.exit, 0) << Describe(latest) << sup_.Log();
  EXPECT_TRUE(Contains(latest.out, "\"time\":18446744073709551614,\"closed\":true")) << latest.out;
  const auto rows = Field(LastJson(latest), "rows").list_value();
  ASSERT_EQ(rows.values_size(), 3000);
  for (int i = 0; i < rows.values_size(); ++i) {
    const auto& row = rows.values(i).struct_value();
    ASSERT_EQ(Field(row, "row").list_value().values(0).number_value(), i + 1);
    ASSERT_EQ(Field(row, "count").number_value(), 1);
  }
  auto text = Run({"peek", "u6", "--order-by", "n:desc", "--limit", "1"});
  ASSERT_EQ(text.exit, 0) << Describe(text);
  EXPECT_TRUE(Contains(text.out, "3000  1\n")) << text.out;
  EXPECT_TRUE(Contains(text.out,
                       "(1 row of s6 at time 18446744073709551614 (closed: its final contents), "))
      << text.out;
  // Every time from since on is readable; a key lookup too.
  auto key = Run({"peek", "u6", "--key", "1500"});
  ASSERT_EQ(key.exit, 0) << Describe(key);
  EXPECT_TRUE(Contains(key.out, "1500  1\n")) << key.out;
  auto early = Run({"--json", "peek", "u6", "--at", "100"});
  ASSERT_EQ(early.exit, 0) << Describe(early);
  EXPECT_EQ(Field(LastJson(early), "rows").list_value().values_size(), 100) << early.out;
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, DropAndCompactionOfASourceOrAViewAreRefusedNamingTheIndex) {
  dir_.Write("groups.log", "U 0 1 1 10\nU 0 1 2 20\nP 2\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("groups.log"), "--schema", "g:int64,x:int64"})
          .exit,
      0);
  ASSERT_EQ(Run({"create-view", "u3", "--on", "u1", "--group-by", "g", "--aggregate", "count",
                 "--index-id", "u4"})
                .exit,
            0)
      << sup_.Log();
  const std::string before = ReadFile(State());

  auto view = Run({"drop", "u3"});
  EXPECT_EQ(view.exit, 1) << Describe(view);
  EXPECT_TRUE(Contains(view.err,
                       "tandem-ctl: refused: drop u3: u3 is a view, not an index; "
                       "drop u4 instead (the index of its dataflow)"))
      << Describe(view);
  EXPECT_EQ(view.out, "") << "no \"dropped\"";
  // A source stands for its index s1, which u3's dataflow imports: the replica refuses.
  auto source = Run({"drop", "u1"});
  EXPECT_EQ(source.exit, 1) << Describe(source);
  EXPECT_TRUE(Contains(source.err, "tandem-ctl: refused: drop u1: the replica refused "))
      << Describe(source);
  EXPECT_TRUE(Contains(source.err, "imported by u4")) << Describe(source);
  auto compact = Run({"allow-compaction", "u3", "1"});
  EXPECT_EQ(compact.exit, 1) << Describe(compact);
  EXPECT_TRUE(Contains(compact.err,
                       "refused: allow-compaction u3: u3 is a view, not an index; compaction "
                       "applies to an index: allow-compaction u4 1"))
      << Describe(compact);
  ExpectJsonFailure(Run({"--json", "drop", "u3"}), 1, "u3 is a view, not an index");
  // A script's line is checked the same way; the rest of the script still runs.
  dir_.Write("script.jsonl",
             "{\"allow_compaction\": {\"id\": \"u1\", \"frontier\": {}}}\n"
             "{\"peek\": {\"uuid\": \"p1\", \"id\": \"u4\", \"timestamp\": \"1\"}}\n");
  auto script = Run({"run", dir_.File("script.jsonl")});
  EXPECT_EQ(script.exit, 1) << Describe(script);
  EXPECT_TRUE(Contains(script.err, "u1 is a source, not an index")) << Describe(script);
  EXPECT_TRUE(Contains(script.out, "peek p1: 2 distinct rows")) << Describe(script);

  EXPECT_EQ(ReadFile(State()), before) << "a refused command is never recorded";
  // Nothing changed on the replica either: the index still answers, and a drop of it works.
  auto peek = Run({"peek", "u3", "--at", "1"});
  ASSERT_EQ(peek.exit, 0) << Describe(peek);
  EXPECT_TRUE(Contains(peek.out, "(2 rows of u4 at time 1, ")) << peek.out;
  auto drop = Run({"drop", "u4"});
  ASSERT_EQ(drop.exit, 0) << Describe(drop);
  EXPECT_FALSE(Contains(ReadFile(State()), "\"u3\"")) << "the view went with its only index";
  auto gone = Run({"drop", "u1"});
  ASSERT_EQ(gone.exit, 0) << "nothing imports it now\n" << Describe(gone);
  EXPECT_EQ(ReadFile(State()), "") << "the source's dataflow went with its index";
}

TEST_F(Ctl, ALogPathMustExistAndFrontiersWarnsWhenItIsGone) {
  const std::string before = ReadFile(State());
  auto missing =
      Run({"create-source", "u1", "--log", dir_.File("nope.log"), "--schema", "k:int64"});
  EXPECT_EQ(missing.exit, 1) << Describe(missing);
  EXPECT_TRUE(Contains(missing.err, "tandem-ctl: refused: create-source u1: --log " +
                                        dir_.File("nope.log") + ": no such file"))
      << Describe(missing);
  auto directory = Run({"create-source", "u1", "--log", dir_.path(), "--schema", "k:int64"});
  EXPECT_EQ(directory.exit, 1) << Describe(directory);
  EXPECT_TRUE(Contains(directory.err, "not a regular file (a directory)")) << Describe(directory);
  EXPECT_EQ(ReadFile(State()), before) << "nothing recorded";

  // A relative path is recorded as the absolute path it names here: the replica's working
  // directory is not ours.
  dir_.Write("data.log", "U 0 1 1\nP 1\n");
  RunBinaryOptions in_dir;
  auto relative =
      RunBinary("/bin/sh",
                {"-c", "cd " + dir_.path() + " && exec " + TANDEM_CTL_BIN + " --endpoint " +
                           sup_.controller_endpoint() + " --state " + State() +
                           " create-source u1 --log data.log --schema k:int64"},
                in_dir);
  ASSERT_EQ(relative.exit, 0) << Describe(relative);
  EXPECT_TRUE(Contains(ReadFile(State()), "\"path\":\"" + dir_.File("data.log") + "\""))
      << ReadFile(State());
  ASSERT_EQ(Run({"peek", "u1", "--at", "0"}).exit, 0);

  auto fine = Run({"frontiers"});
  ASSERT_EQ(fine.exit, 0) << Describe(fine);
  EXPECT_FALSE(Contains(fine.err, "warning")) << Describe(fine);
  std::filesystem::remove(dir_.File("data.log"));
  const std::string warning = "tandem-ctl: warning: the log file of source u1 (" +
                              dir_.File("data.log") +
                              ") does not exist now: its index s1 cannot advance until it is back";
  auto gone = Run({"frontiers"});
  ASSERT_EQ(gone.exit, 0) << Describe(gone);
  EXPECT_TRUE(Contains(gone.err, warning)) << Describe(gone);
  auto json = Run({"--json", "frontiers", "s1"});
  ASSERT_EQ(json.exit, 0) << Describe(json);
  const auto warnings = Field(LastJson(json), "warnings").list_value();
  ASSERT_EQ(warnings.values_size(), 1) << json.out;
  EXPECT_TRUE(Contains(warning, warnings.values(0).string_value())) << json.out;
}

TEST_F(Ctl, KeysAndTablesUseTheDatumSyntax) {
  // NULL and the string "null", a comma, quotes, a newline and a tab inside strings.
  dir_.Write("strings.log",
             "U 0 1 \"a,b\" 1\nU 0 1 \"null\" 2\nU 0 1 null 3\n"
             "U 0 1 \"say \\\"hi\\\"\\nbye\\t!\" 4\nU 0 1 \"a\" 5\nP 1\n");
  ASSERT_EQ(Run({"create-source", "u1", "--log", dir_.File("strings.log"), "--schema",
                 "s:string?,n:int64", "--key", "s,n"})
                .exit,
            0)
      << sup_.Log();
  auto all = Run({"peek", "u1", "--at", "0"});
  ASSERT_EQ(all.exit, 0) << Describe(all);
  EXPECT_EQ(all.out.substr(0, all.out.find("(5 rows")),
            "s                     n  count\n"
            "--------------------  -  -----\n"
            "null                  3  1\n"
            "\"a\"                   5  1\n"
            "\"a,b\"                 1  1\n"
            "\"null\"                2  1\n"
            "\"say \\\"hi\\\"\\nbye\\t!\"  4  1\n")
      << all.out;
  auto lookup = [&](const std::string& key) {
    auto r = Run({"--json", "peek", "u1", "--at", "0", "--key", key});
    EXPECT_EQ(r.exit, 0) << Describe(r);
    std::vector<std::string> found;
    const gpb::Struct doc = LastJson(r);
    for (const auto& row : Field(doc, "rows").list_value().values()) {
      const auto& datums = Field(row.struct_value(), "row").list_value();
      EXPECT_EQ(datums.values_size(), 2) << r.out;
      if (datums.values_size() == 2) {
        found.push_back(std::to_string(static_cast<int>(datums.values(1).number_value())));
      }
    }
    return found;
  };
  EXPECT_EQ(lookup("\"a,b\",1"), std::vector<std::string>{"1"}) << "a comma inside quotes";
  EXPECT_EQ(lookup("\"null\",2"), std::vector<std::string>{"2"}) << "the string \"null\"";
  EXPECT_EQ(lookup("null,3"), std::vector<std::string>{"3"}) << "NULL";
  EXPECT_EQ(lookup("null,2"), std::vector<std::string>{}) << "NULL is not the string \"null\"";
  EXPECT_EQ(lookup(R"("say \"hi\"\nbye\t!", 4)"), std::vector<std::string>{"4"}) << "escapes";
  // What a table prints can be typed back.
  EXPECT_EQ(lookup("\"a\",5"), std::vector<std::string>{"5"});

  auto unquoted = Run({"peek", "u1", "--at", "0", "--key", "a,5"});
  EXPECT_EQ(unquoted.exit, 1) << Describe(unquoted);
  EXPECT_TRUE(Contains(unquoted.err,
                       "tandem-ctl: refused: peek u1: --key a,5: 'a' for column s "
                       "(string): strings are written in double quotes: \"a\""))
      << Describe(unquoted);
  auto short_key = Run({"peek", "u1", "--at", "0", "--key", "\"a\""});
  EXPECT_EQ(short_key.exit, 1) << Describe(short_key);
  EXPECT_TRUE(Contains(short_key.err, "the index's key has 2 columns (s, n)"))
      << Describe(short_key);
}

TEST_F(Ctl, JsonIsOneSchemaParsedHere) {
  dir_.Write("data.log", "U 0 1 1 1.5\nU 1 1 2 nan\nU 1 1 3 -inf\nP 3\n");
  auto created = Run({"--json", "create-source", "u1", "--log", dir_.File("data.log"), "--schema",
                      "k:int64,x:float64"});
  ASSERT_EQ(created.exit, 0) << Describe(created) << sup_.Log();
  {
    const auto doc = LastJson(created);
    EXPECT_TRUE(Field(doc, "ok").bool_value());
    EXPECT_EQ(Field(doc, "command").string_value(), "create-source u1");
    const auto& ids = Field(doc, "created").list_value();
    ASSERT_EQ(ids.values_size(), 2) << created.out;
    EXPECT_EQ(ids.values(0).string_value(), "u1");
    EXPECT_EQ(ids.values(1).string_value(), "s1") << "the source's index";
  }
  // peek: the time a number, rows of datums; NaN and -inf as the log format spells them.
  auto peek = Run({"--json", "peek", "u1", "--at", "2"});
  ASSERT_EQ(peek.exit, 0) << Describe(peek);
  ASSERT_EQ(Lines(peek.out).size(), 1u) << peek.out;
  {
    const auto doc = LastJson(peek);
    EXPECT_EQ(Field(doc, "time").kind_case(), gpb::Value::kNumberValue);
    EXPECT_EQ(Field(doc, "time").number_value(), 2);
    EXPECT_FALSE(Field(doc, "closed").bool_value());
    EXPECT_EQ(Field(doc, "latency_ms").kind_case(), gpb::Value::kNumberValue);
    const auto& rows = Field(doc, "rows").list_value();
    ASSERT_EQ(rows.values_size(), 3) << peek.out;
    const auto& x = [&](int i) -> const gpb::Value& {
      return Field(rows.values(i).struct_value(), "row").list_value().values(1);
    };
    EXPECT_EQ(x(0).number_value(), 1.5);
    EXPECT_EQ(x(1).string_value(), "nan");
    EXPECT_EQ(x(2).string_value(), "-inf");
  }
  // frontiers: one document; each frontier is a number (or null when closed) with "closed".
  gpb::Struct frontier;
  {
    auto r = Run({"--json", "frontiers", "s1", "--for", "0.2"});
    ASSERT_EQ(r.exit, 0) << Describe(r);
    ASSERT_EQ(Lines(r.out).size(), 1u) << r.out;
    const auto doc = LastJson(r);
    const auto& list = Field(doc, "frontiers").list_value();
    ASSERT_EQ(list.values_size(), 1) << r.out;
    frontier = list.values(0).struct_value();
    EXPECT_EQ(Field(frontier, "id").string_value(), "s1");
    for (const char* name : {"write", "input", "output"}) {
      EXPECT_EQ(Field(frontier, name).kind_case(), gpb::Value::kNumberValue) << name << r.out;
      EXPECT_EQ(Field(frontier, name).number_value(), 3) << name << r.out;
    }
    EXPECT_FALSE(Field(frontier, "closed").bool_value());
    EXPECT_EQ(Field(doc, "warnings").list_value().values_size(), 0);
  }
  // watch: one document a line, the frontier object the same as in `frontiers`.
  dir_.Write("data.log", "P 5\n", true);
  auto watch = Run({"--json", "watch", "--for", "1.5"});
  ASSERT_EQ(watch.exit, 0) << Describe(watch);
  bool saw = false;
  for (const auto& line : Lines(watch.out)) {
    const auto doc = Json(line);
    ASSERT_EQ(doc.fields_size(), 1) << line;
    if (!Has(doc, "frontiers")) continue;
    const auto& f = Field(doc, "frontiers").struct_value();
    std::set<std::string> keys, expected;
    for (const auto& [k, v] : f.fields()) keys.insert(k);
    for (const auto& [k, v] : frontier.fields()) expected.insert(k);
    EXPECT_EQ(keys, expected) << line;
    if (Field(f, "write").number_value() == 5) saw = true;
  }
  EXPECT_TRUE(saw) << "the frontier moved to 5 while watching\n" << watch.out;
  // A failure: the last line on stdout is {"error", "exit_code"}, whatever the exit status.
  ExpectJsonFailure(Run({"--json", "peek", "u42", "--at", "1"}), 1, "unknown index u42");
  ExpectJsonFailure(Run({"--json", "peek", "u2", "--at", "soon"}), 64, "--at");
  ExpectJsonFailure(Run({"--json", "--endpoint", "tcp://127.0.0.1:" + std::to_string(FreePort()),
                         "--timeout", "0.5", "frontiers"}),
                    69, "cannot reach the replica");
}

TEST(CtlUsage, AnEndpointThatIsNoEndpointExits64NamingIt) {
  TempDir dir;
  for (const std::string endpoint : {"garbage", "tcp://", "http://127.0.0.1:2101"}) {
    const auto r = RunCtl({"--endpoint", endpoint, "--state", dir.File("state"), "frontiers"});
    EXPECT_EQ(r.exit, 64) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "--endpoint \"" + endpoint + "\" is not a ZeroMQ endpoint"))
        << Describe(r);
  }
  ExpectJsonFailure(
      RunCtl({"--json", "--endpoint", "garbage", "--state", dir.File("state"), "peek", "u1"}), 64,
      "--endpoint \"garbage\"");
}

// ---------------------------------------------------------------------------------------------
// Read commands observe; a replay never silently drops what it does
// not know; a session that ends says so; every invocation says Goodbye.

constexpr char kDroppedByReconcile[] =
    "tandem_dataflows_reconciled_total{role=\"maintenance\",outcome=\"dropped\"}";

TEST_F(Ctl, ReadCommandsObserveAndChangeNothingWhateverTheirStateFile) {
  dir_.Write("data.log", "U 0 1 1 10\nP 2\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"})
          .exit,
      0)
      << sup_.Log();
  const double kept = Metric(kKept);
  // Another directory, no state file at all: what used to replay nothing and reconcile every
  // dataflow away.
  TempDir elsewhere("elsewhere");
  auto there = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", sup_.controller_endpoint(), "--state",
                               elsewhere.File("tandem-ctl.state")});
    return RunCtl(args);
  };
  auto peek = there({"peek", "s1", "--at", "1"});
  ASSERT_EQ(peek.exit, 0) << Describe(peek) << sup_.Log();
  EXPECT_TRUE(Contains(peek.out, "c0  c1  count\n")) << "no history: no column names\n" << peek.out;
  EXPECT_TRUE(Contains(peek.out, "1   10  1\n")) << peek.out;
  auto latest = there({"--json", "peek", "s1"});
  ASSERT_EQ(latest.exit, 0) << Describe(latest);
  EXPECT_EQ(Field(LastJson(latest), "time").number_value(), 1) << latest.out;
  auto frontiers = there({"frontiers"});
  ASSERT_EQ(frontiers.exit, 0) << Describe(frontiers);
  EXPECT_TRUE(Contains(frontiers.out, "\ns1  2      2      2       reported")) << frontiers.out;
  auto watch = there({"watch", "--for", "0.3"});
  ASSERT_EQ(watch.exit, 0) << Describe(watch);
  EXPECT_TRUE(Contains(watch.out, "frontiers s1 write 2")) << watch.out;
  EXPECT_FALSE(std::filesystem::exists(elsewhere.File("tandem-ctl.state")));

  // Nothing was replayed or reconciled, and the dataflow still runs: it takes in new data.
  EXPECT_EQ(Metric(kKept), kept);
  EXPECT_EQ(Metric(kDroppedByReconcile), 0);
  EXPECT_FALSE(Contains(sup_.Log(), "superseded")) << sup_.Log();
  dir_.Write("data.log", "U 2 1 2 20\nP 3\n", true);
  CtlResult moved;
  ASSERT_TRUE(Eventually(
      [&] {
        moved = there({"--json", "peek", "s1"});
        return moved.exit == 0 && Contains(moved.out, "\"time\":2,");
      },
      10s))
      << Describe(moved) << sup_.Log();
  EXPECT_TRUE(Contains(moved.out, "{\"row\":[2,20],\"count\":1}")) << moved.out;
  // An observer cannot send what would change the replica, even in a script of its own making:
  // the only way is a controller session, which the next test guards.
  EXPECT_EQ(Metric(kDroppedByReconcile), 0);
}

TEST_F(Ctl, AReplayThatWouldDropUnknownIndexesIsRefusedUnlessReplace) {
  dir_.Write("data.log", "U 0 1 1 10\nP 2\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"})
          .exit,
      0)
      << sup_.Log();
  const double hellos = Metric("tandem_controller_events_total{event=\"hello\"}");
  // A second state file that knows nothing of u1 and its index s1.
  const std::string other = dir_.File("other.state");
  auto with_other = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", sup_.controller_endpoint(), "--state", other});
    return RunCtl(args);
  };
  const std::vector<std::string> counter = {"create-source", "u5", "--generator",        "counter",
                                            "--max",         "10", "--tick-interval-us", "0"};
  auto with_counter = [&](std::vector<std::string> before) {
    before.insert(before.end(), counter.begin(), counter.end());
    return with_other(before);
  };
  const std::string other_before = ReadFile(other);
  auto refused = with_counter({});
  EXPECT_EQ(refused.exit, 1) << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "tandem-ctl: refused: the replica at " +
                                        sup_.controller_endpoint() +
                                        " maintains an index that the state file " + other +
                                        " does not define: s1. Replaying this history would "
                                        "drop it; nothing was changed."))
      << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "--replace")) << Describe(refused);
  ExpectJsonFailure(with_counter({"--json"}), 1, "does not define: s1.");
  EXPECT_EQ(ReadFile(other), other_before) << "u5 is not recorded";

  // Changed nothing: no controller Hello reached the replica (the check is made as an observer),
  // no reconciliation, and reads are answered at once.
  EXPECT_EQ(Metric("tandem_controller_events_total{event=\"hello\"}"), hellos);
  EXPECT_EQ(Metric(kDroppedByReconcile), 0);
  auto peek = Run({"--timeout", "2", "peek", "u1", "--at", "1"});
  ASSERT_EQ(peek.exit, 0) << Describe(peek);
  EXPECT_TRUE(Contains(peek.out, "1  10  1\n")) << peek.out;
  dir_.Write("nothing.jsonl", "# replays the history\n");
  auto own = Run({"run", dir_.File("nothing.jsonl")});
  EXPECT_EQ(own.exit, 0) << "the state file that made u1 replays as before\n" << Describe(own);

  // --replace: the other history replaces the replica's dataflows.
  auto replaced = with_counter({"--replace"});
  ASSERT_EQ(replaced.exit, 0) << Describe(replaced) << sup_.Log();
  EXPECT_TRUE(Contains(replaced.err,
                       "tandem-ctl: warning: --replace: the replica's index s1 (not "
                       "in " +
                           other + ") will be dropped with their dataflows"))
      << Describe(replaced);
  // The runtime counts the drop as it reconciles, which may be just after tandem-ctl is done.
  EXPECT_TRUE(Eventually([&] { return Metric(kDroppedByReconcile) == 1; }, 10s))
      << Metric(kDroppedByReconcile);
  auto gone = Run({"peek", "u1", "--at", "1"});
  EXPECT_EQ(gone.exit, 1) << Describe(gone);
  EXPECT_TRUE(Contains(gone.err, "unknown index s1")) << Describe(gone);
  CtlResult counted;
  ASSERT_TRUE(Eventually(
      [&] {
        counted = with_other({"--json", "peek", "u5"});
        return counted.exit == 0 && Contains(counted.out, "\"closed\":true");
      },
      10s))
      << Describe(counted);
  EXPECT_EQ(Field(LastJson(counted), "rows").list_value().values_size(), 10) << counted.out;
  // And now the first state file is the one that does not know the replica's index.
  auto first = Run({"run", dir_.File("nothing.jsonl")});
  EXPECT_EQ(first.exit, 1) << Describe(first);
  EXPECT_TRUE(Contains(first.err, "does not define: s5.")) << Describe(first);
}

// `replay` replays like every command that changes the replica: refused, changing nothing, when
// the replica maintains indexes its history does not define. A read of an id of that history says
// another history was replayed to the replica; an empty history contacts no replica.
TEST_F(Ctl, ReplayIsRefusedLikeEveryReplayAndAnEmptyHistoryConnectsToNothing) {
  dir_.Write("data.log", "U 0 1 1 10\nP 2\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"})
          .exit,
      0)
      << sup_.Log();
  const std::string hello = "tandem_controller_events_total{event=\"hello\"}";
  const std::string observer_hello = "tandem_controller_events_total{event=\"observer_hello\"}";
  const double hellos = Metric(hello);
  const std::string endpoint = sup_.controller_endpoint();
  auto with = [&](const std::string& state, std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", endpoint, "--state", state});
    return RunCtl(args);
  };
  // Another state file: log source u1 with index u2, where the replica runs s1.
  const std::string other = dir_.File("other.state");
  WriteIndexHistory(other, dir_.File("data.log"));
  const std::string other_before = ReadFile(other);
  auto refused = with(other, {"replay"});
  EXPECT_EQ(refused.exit, 1) << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "tandem-ctl: refused: the replica at " + endpoint +
                                        " maintains an index that the state file " + other +
                                        " does not define: s1. Replaying this history would "
                                        "drop it; nothing was changed."))
      << Describe(refused);
  ExpectJsonFailure(with(other, {"--json", "replay"}), 1, "does not define: s1.");
  EXPECT_EQ(ReadFile(other), other_before);
  EXPECT_EQ(Metric(hello), hellos) << "checked as an observer: no controller Hello";
  EXPECT_EQ(Metric(kDroppedByReconcile), 0);

  // What the other history defines is unknown to the replica, which runs another history.
  auto peek = with(other, {"peek", "u2", "--at", "1"});
  EXPECT_EQ(peek.exit, 1) << Describe(peek);
  EXPECT_TRUE(Contains(peek.err, "unknown index u2 — the replica at " + endpoint +
                                     " maintains none of the indexes the state file " + other +
                                     " defines, but s1: another history was replayed to it."))
      << Describe(peek);
  EXPECT_TRUE(Contains(peek.err, "--state " + other + " --replace replay`")) << Describe(peek);
  // The replica runs this state file's history: an id unknown there is no missing replay.
  auto own = Run({"peek", "u42", "--at", "1"});
  EXPECT_EQ(own.exit, 1) << Describe(own);
  EXPECT_TRUE(Contains(own.err, "unknown index u42")) << Describe(own);
  EXPECT_FALSE(Contains(own.err, "replay")) << Describe(own);

  // An empty history: nothing to replay, and no replica is contacted (not even none at all).
  const double observers = Metric(observer_hello);
  const std::string empty = dir_.File("empty.state");
  auto nothing = with(empty, {"replay"});
  EXPECT_EQ(nothing.exit, 0) << Describe(nothing);
  EXPECT_TRUE(Contains(nothing.out, "nothing to replay: the state file " + empty +
                                        " holds no commands to replay (no replica was contacted)"))
      << Describe(nothing);
  auto json = with(empty, {"--json", "replay"});
  ASSERT_EQ(json.exit, 0) << Describe(json);
  const gpb::Struct doc = LastJson(json);
  EXPECT_TRUE(Field(doc, "ok").bool_value()) << json.out;
  EXPECT_EQ(Field(doc, "command").string_value(), "replay") << json.out;
  EXPECT_EQ(Field(doc, "commands").number_value(), 0) << json.out;
  EXPECT_EQ(Field(doc, "indexes").list_value().values_size(), 0) << json.out;
  auto nowhere = RunCtl({"--endpoint", "tcp://127.0.0.1:" + std::to_string(FreePort()), "--timeout",
                         "1", "--state", empty, "replay"});
  EXPECT_EQ(nowhere.exit, 0) << Describe(nowhere);
  EXPECT_EQ(Metric(observer_hello), observers);
  EXPECT_EQ(Metric(hello), hellos);
  EXPECT_FALSE(std::filesystem::exists(empty)) << "replay writes no state file";

  // It takes no argument.
  auto extra = Run({"replay", "extra"});
  EXPECT_EQ(extra.exit, 64) << Describe(extra);
  EXPECT_TRUE(Contains(extra.err, "extra")) << Describe(extra);
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, WatchSaysSoAndExits69WhenTheReplicaGoesAway) {
  CtlResult watch;
  std::thread watcher([&] { watch = Run({"--json", "watch"}); });
  const bool observing = Eventually([&] { return Metric("tandem_observer_sessions") == 1; }, 10s);
  ASSERT_EQ(kill(sup_.pid(), SIGTERM), 0);
  watcher.join();
  ASSERT_TRUE(observing) << sup_.Log();
  EXPECT_EQ(sup_.WaitExit(10s), std::optional<int>(0)) << sup_.Log();
  ExpectJsonFailure(watch, 69,
                    "the connection to the replica at " + sup_.controller_endpoint() +
                        " was lost (the supervisor exited, restarted or stopped answering)");
}

TEST_F(Ctl, ACommandSupersededByAnotherControllerSaysSoAndExits75) {
  dir_.Write("data.log", "U 0 1 1 10\nP 5\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"})
          .exit,
      0)
      << sup_.Log();
  // A script whose peek waits (s1 will not reach time 1000), then another controller's Hello.
  dir_.Write("wait.jsonl",
             "{\"peek\": {\"uuid\": \"w1\", \"id\": \"s1\", \"timestamp\": \"1000\"}}\n");
  const std::string peeks = "tandem_commands_total{command=\"Peek\",result=\"forwarded\"}";
  const double before = Metric(peeks);
  CtlResult run;
  std::thread runner([&] { run = Run({"--timeout", "20", "run", dir_.File("wait.jsonl")}); });
  const bool waiting = Eventually([&] { return Metric(peeks) > before; }, 10s);
  TestController intruder(sup_.controller_endpoint());
  const bool took_over = waiting && intruder.Hello("intruder");
  const auto started = std::chrono::steady_clock::now();
  runner.join();
  ASSERT_TRUE(waiting) << sup_.Log();
  ASSERT_TRUE(took_over) << sup_.Log();
  EXPECT_EQ(run.exit, 75) << Describe(run);
  EXPECT_TRUE(Contains(run.err, "tandem-ctl: another controller took over the replica at " +
                                    sup_.controller_endpoint() +
                                    " (Hello intruder); this session is over"))
      << Describe(run);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s) << "said so at once";
}

TEST_F(Ctl, EveryInvocationSaysGoodbye) {
  dir_.Write("data.log", "U 0 1 1 10\nP 2\n");
  dir_.Write("script.jsonl",
             "{\"peek\": {\"uuid\": \"p1\", \"id\": \"s1\", \"timestamp\": \"1\"}}\n");
  dir_.Write("bad.json", R"({"source_imports": [{"id": "u9", "source": {"counter": {}},
    "schema": {"columns": [{"name": "n", "type": "INT64"}]}}],
    "index_exports": [{"id": "u10", "on": "u9", "key": [5]}],
    "as_of": {"elements": ["0"]}, "class": "MAINTAINED"})");
  // Successes and failures, controllers and observers: every way a connected invocation ends.
  const std::vector<std::pair<std::vector<std::string>, int>> runs = {
      {{"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"}, 0},
      {{"peek", "u1", "--at", "1"}, 0},
      {{"peek", "u42", "--at", "1"}, 1},
      {{"--timeout", "1", "peek", "u1", "--at", "100"}, 1},
      {{"query", "--on", "u1", "--group-by", "k", "--aggregate", "count", "--at", "1"}, 0},
      {{"frontiers", "--for", "0.1"}, 0},
      {{"watch", "--for", "0.2"}, 0},
      {{"allow-compaction", "u1", "1"}, 0},
      {{"run", dir_.File("script.jsonl")}, 0},
      {{"create-dataflow", dir_.File("bad.json")}, 1}};  // refused by the replica
  const std::string goodbyes = "tandem_controller_events_total{event=\"goodbye\"}";
  for (const auto& [args, code] : runs) {
    auto r = Run(args);
    EXPECT_EQ(r.exit, code) << Describe(r);
  }
  EXPECT_TRUE(Eventually([&] { return Metric(goodbyes) == runs.size(); }, 10s))
      << Metric(goodbyes) << "\n"
      << sup_.Log();
  // The disconnect that follows a Goodbye is no news: nothing is logged about it.
  const std::string log = sup_.Log();
  EXPECT_FALSE(Contains(log, "disconnected")) << log;
  EXPECT_TRUE(Contains(log, "said goodbye; the replica keeps running")) << log;
  EXPECT_TRUE(Contains(log, "said goodbye; 0 observer(s) left")) << log;
}

// ---------------------------------------------------------------------------------------------
// Sources are first-class (they stay until dropped themselves; what reads them imports
// their index), and `query` runs a one-shot read: create, peek, drop.

// The transient (one-shot) indexes the replica's supervisor knows now: what a query left behind.
std::vector<std::string> LiveTransientIndexes(const std::string& endpoint) {
  TestController observer(endpoint);
  const Status hello = observer.client().Hello("look", /*observer=*/true);
  EXPECT_TRUE(hello.ok()) << hello.message();
  EXPECT_TRUE(observer.client().observer());
  std::vector<std::string> out;
  for (const auto& id : observer.client().accepted().live_indexes()) {
    if (id.starts_with('t')) out.push_back(id);
  }
  return out;
}

TEST_F(Ctl, ASourceStaysUntilItIsDroppedItself) {
  dir_.Write("data.log", "U 0 1 1 10\nU 0 1 2 20\nU 1 1 3 20\nP 2\n");
  auto source =
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"});
  ASSERT_EQ(source.exit, 0) << Describe(source) << sup_.Log();
  EXPECT_TRUE(Contains(source.out, "created source u1 with index s1 (key k)")) << source.out;
  auto own = Run({"peek", "u1", "--at", "1"});  // the source's own index
  ASSERT_EQ(own.exit, 0) << Describe(own);
  EXPECT_TRUE(Contains(own.out, "(3 rows of s1 at time 1, ")) << own.out;

  // A user's sequence: index it, drop the index, index it again.
  auto u2 = Run({"create-index", "u2", "--on", "u1", "--key", "v"});
  ASSERT_EQ(u2.exit, 0) << Describe(u2) << sup_.Log();
  EXPECT_TRUE(Contains(u2.out, "created index u2 on u1 (key v), importing s1")) << u2.out;
  auto by_v = Run({"--json", "peek", "u2", "--at", "1", "--key", "20"});
  ASSERT_EQ(by_v.exit, 0) << Describe(by_v) << sup_.Log();
  EXPECT_EQ(Field(LastJson(by_v), "rows").list_value().values_size(), 2) << by_v.out;
  auto drop_u2 = Run({"drop", "u2"});
  ASSERT_EQ(drop_u2.exit, 0) << Describe(drop_u2);
  EXPECT_TRUE(Contains(ReadFile(State()), "\"s1\"")) << "the source stays\n" << ReadFile(State());
  auto u3 = Run({"create-index", "u3", "--on", "u1", "--key", "v"});
  ASSERT_EQ(u3.exit, 0) << Describe(u3) << sup_.Log();
  auto again = Run({"--json", "peek", "u3", "--at", "1", "--key", "20"});
  ASSERT_EQ(again.exit, 0) << Describe(again) << sup_.Log();
  EXPECT_EQ(Field(LastJson(again), "rows").list_value().values_size(), 2) << again.out;

  // A view on the source imports its index too; both follow the source as it grows.
  auto view = Run({"create-view", "u4", "--on", "u1", "--group-by", "v", "--aggregate", "count",
                   "--index-id", "u5"});
  ASSERT_EQ(view.exit, 0) << Describe(view) << sup_.Log();
  EXPECT_TRUE(Contains(view.out, "created view u4 on u1 with index u5 (key v), importing u3"))
      << "the index keyed by the group-by columns\n"
      << view.out;
  dir_.Write("data.log", "U 2 1 4 20\nP 3\n", true);
  CtlResult grown;
  ASSERT_TRUE(Eventually(
      [&] {
        grown = Run({"--json", "peek", "u4", "--at", "2", "--key", "20"});
        return grown.exit == 0 && Contains(grown.out, "{\"row\":[20,3],\"count\":1}");
      },
      10s))
      << Describe(grown) << sup_.Log();

  // Dropping the source while something imports it is refused by the replica, naming the
  // importer; nothing changes.
  const std::string before = ReadFile(State());
  auto refused = Run({"drop", "u1"});
  EXPECT_EQ(refused.exit, 1) << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "tandem-ctl: refused: drop u1: the replica refused "))
      << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "imported by u3")) << Describe(refused);
  EXPECT_EQ(ReadFile(State()), before) << "a refused drop is not recorded";
  ExpectJsonFailure(Run({"--json", "drop", "u1"}), 1, "imported by");
  ASSERT_EQ(Run({"peek", "u1", "--at", "2"}).exit, 0) << "the source still answers";
  // u5's dataflow imports u3 (u3 is on the source): drop the importers first, then the source.
  auto drop_u3 = Run({"drop", "u3"});
  EXPECT_EQ(drop_u3.exit, 1) << "u4's dataflow imports u3\n" << Describe(drop_u3);
  EXPECT_TRUE(Contains(drop_u3.err, "imported by u5")) << Describe(drop_u3);
  ASSERT_EQ(Run({"drop", "u5"}).exit, 0);
  ASSERT_EQ(Run({"drop", "u3"}).exit, 0);
  auto dropped = Run({"--json", "drop", "u1"});
  ASSERT_EQ(dropped.exit, 0) << Describe(dropped);
  EXPECT_EQ(Field(LastJson(dropped), "id").string_value(), "s1") << dropped.out;
  EXPECT_EQ(ReadFile(State()), "") << "nothing left";
  auto gone = Run({"peek", "s1", "--at", "1"});
  EXPECT_EQ(gone.exit, 1) << Describe(gone);
  EXPECT_TRUE(Contains(gone.err, "unknown index s1")) << Describe(gone);
  // And the id may be created again.
  ASSERT_EQ(Run({"create-source", "u1", "--generator", "counter"}).exit, 0) << sup_.Log();
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, QueryPrintsAGroupByCountLikePeekAndLeavesNothingBehind) {
  dir_.Write("groups.log", "U 0 1 1 10\nU 0 1 1 20\nU 1 1 2 5\nU 2 1 2 6\nU 2 1 3 7\nP 3\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("groups.log"), "--schema", "g:int64,x:int64"})
          .exit,
      0)
      << sup_.Log();
  const std::string state = ReadFile(State());
  auto text = Run({"query", "--on", "u1", "--group-by", "g", "--aggregate", "count", "--at", "1"});
  ASSERT_EQ(text.exit, 0) << Describe(text) << sup_.Log();
  EXPECT_EQ(text.out.substr(0, text.out.find("(2 rows")),
            "g  count  #count\n"
            "-  -----  ------\n"
            "1  2      1\n"
            "2  1      1\n")
      << text.out;
  EXPECT_TRUE(Contains(text.out, "(2 rows of a query on u1 at time 1, ")) << text.out;
  EXPECT_TRUE(Contains(text.out, " ms)\n")) << text.out;

  // Latest: the source's index is complete up to 2 (its upper is 3).
  auto json = Run({"--json", "query", "--on", "u1", "--group-by", "g", "--aggregate", "count",
                   "--aggregate", "sum:x"});
  ASSERT_EQ(json.exit, 0) << Describe(json) << sup_.Log();
  ASSERT_EQ(Lines(json.out).size(), 1u) << json.out;
  const gpb::Struct doc = LastJson(json);
  const std::string id = Field(doc, "id").string_value();
  EXPECT_TRUE(id.starts_with('t')) << "a transient index\n" << json.out;
  EXPECT_EQ(Field(doc, "on").string_value(), "u1");
  EXPECT_EQ(Field(doc, "import").string_value(), "s1");
  EXPECT_EQ(Field(doc, "time").number_value(), 2);
  EXPECT_FALSE(Field(doc, "closed").bool_value());
  EXPECT_EQ(Field(doc, "latency_ms").kind_case(), gpb::Value::kNumberValue);
  EXPECT_TRUE(Contains(json.out,
                       "\"columns\":[\"g\",\"count\",\"sum_x\"],\"rows\":["
                       "{\"row\":[1,2,30],\"count\":1},{\"row\":[2,2,11],\"count\":1},"
                       "{\"row\":[3,1,7],\"count\":1}]}"))
      << json.out;
  // Without --group-by and --aggregate: the rows of --on, as a peek of it would print them.
  auto copy = Run({"--json", "query", "--on", "u1", "--at", "0"});
  ASSERT_EQ(copy.exit, 0) << Describe(copy);
  EXPECT_TRUE(Contains(copy.out,
                       "\"columns\":[\"g\",\"x\"],\"rows\":[{\"row\":[1,10],\"count\":1},"
                       "{\"row\":[1,20],\"count\":1}]}"))
      << copy.out;
  // Over a maintained view: how many groups have each count.
  ASSERT_EQ(Run({"create-view", "u2", "--on", "u1", "--group-by", "g", "--aggregate", "count",
                 "--index-id", "u3"})
                .exit,
            0)
      << sup_.Log();
  auto histogram = Run({"--json", "query", "--on", "u2", "--group-by", "count", "--aggregate",
                        "count", "--at", "2"});
  ASSERT_EQ(histogram.exit, 0) << Describe(histogram) << sup_.Log();
  EXPECT_EQ(Field(LastJson(histogram), "import").string_value(), "u3");
  EXPECT_TRUE(
      Contains(histogram.out, "\"rows\":[{\"row\":[1,1],\"count\":1},{\"row\":[2,2],\"count\":1}]"))
      << histogram.out;

  // Each query dropped what it built, and recorded nothing.
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{});
  // A script may send a one-shot read itself: `run` does not record it.
  const std::string with_view = ReadFile(State());
  dir_.Write("one_shot.jsonl",
             R"({"create_dataflow": {"desc": {"debug_name": "by hand", "class": "ONE_SHOT_READ",)"
             R"( "as_of": {"elements": ["2"]}, "until": {"elements": ["3"]}, "index_imports":)"
             R"( [{"id": "s1", "on": "u1", "schema": {"columns": [{"name": "g", "type":)"
             R"( "INT64"}, {"name": "x", "type": "INT64"}]}, "key": [0]}], "index_exports":)"
             R"( [{"id": "t5", "on": "u1", "key": [1]}]}}})"
             "\n"
             R"({"peek": {"uuid": "p1", "id": "t5", "timestamp": "2"}})"
             "\n");
  auto script = Run({"run", dir_.File("one_shot.jsonl")});
  ASSERT_EQ(script.exit, 0) << Describe(script) << sup_.Log();
  EXPECT_TRUE(Contains(script.out, "peek p1: 5 distinct rows")) << script.out;
  EXPECT_EQ(ReadFile(State()), with_view) << "a one-shot is no state to replay";
  // Left behind (as by a query killed before its drop): the next controller session replays
  // without counting it as an unknown index, and its reconciliation drops it.
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{"t5"});
  dir_.Write("nothing.jsonl", "# replays the history\n");
  auto replay = Run({"run", dir_.File("nothing.jsonl")});
  ASSERT_EQ(replay.exit, 0) << Describe(replay);
  EXPECT_EQ(ReadFile(State()), with_view);
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{});
  auto after = Run({"peek", id, "--at", "2"});
  EXPECT_EQ(after.exit, 1) << Describe(after);
  EXPECT_TRUE(Contains(after.err, "unknown index " + id)) << Describe(after);
  EXPECT_TRUE(Contains(ReadFile(State()), state)) << "only the view was added";
  EXPECT_FALSE(Contains(ReadFile(State()), "ONE_SHOT_READ")) << ReadFile(State());
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, QueryErrorsSayWhyWithTheUsualExitCodesAndDropTheOneShot) {
  dir_.Write("groups.log", "U 0 1 1 10\nU 1 1 2 5\nU 2 1 3 7\nP 4\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("groups.log"), "--schema", "g:int64,x:int64"})
          .exit,
      0)
      << sup_.Log();
  // Caught before connecting: unknown --on, bad columns, bad usage.
  auto unknown = Run({"query", "--on", "u77", "--group-by", "g", "--aggregate", "count"});
  EXPECT_EQ(unknown.exit, 1) << Describe(unknown);
  EXPECT_TRUE(Contains(unknown.err,
                       "tandem-ctl: refused: query --on u77: u77 is not a source or collection "
                       "this controller created"))
      << Describe(unknown);
  ExpectJsonFailure(Run({"--json", "query", "--on", "u77"}), 1, "u77 is not a source");
  auto column = Run({"query", "--on", "u1", "--group-by", "zz", "--aggregate", "count"});
  EXPECT_EQ(column.exit, 1) << Describe(column);
  EXPECT_TRUE(Contains(column.err,
                       "tandem-ctl: refused: query --on u1: --group-by: unknown column \"zz\" "
                       "(columns: g, x)"))
      << Describe(column);
  auto sum = Run({"query", "--on", "u1", "--group-by", "g", "--aggregate", "sum:nope"});
  EXPECT_EQ(sum.exit, 1) << Describe(sum);
  EXPECT_TRUE(Contains(sum.err, "--aggregate sum:nope: unknown column \"nope\"")) << Describe(sum);
  EXPECT_EQ(Run({"query", "--on", "u1", "--aggregate", "avg"}).exit, 64);
  EXPECT_EQ(Run({"query", "--on", "u1", "--at", "soon"}).exit, 64);
  EXPECT_EQ(Run({"query", "--on", "u1", "--at", "18446744073709551614"}).exit, 64);
  EXPECT_EQ(Run({"query", "--group-by", "g"}).exit, 64) << "--on is required";

  // A time the index has not reached: no answer in time, canceled, and the one-shot dropped.
  auto waits =
      Run({"--timeout", "1", "query", "--on", "u1", "--aggregate", "count", "--at", "1000"});
  EXPECT_EQ(waits.exit, 1) << Describe(waits);
  EXPECT_TRUE(
      Contains(waits.err, "tandem-ctl: refused: query --on u1 @ 1000: no answer within 1 s"))
      << Describe(waits);
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{});

  // A compacted time: the runtime's Error, printed; the one-shot dropped.
  ASSERT_EQ(Run({"allow-compaction", "u1", "3"}).exit, 0);
  ASSERT_TRUE(Eventually(
      [&] {
        return Run({"peek", "u1", "--at", "1"}).exit == 1;
      },
      10s))
      << "s1's since passes 1";
  auto compacted =
      Run({"query", "--on", "u1", "--group-by", "g", "--aggregate", "count", "--at", "1"});
  EXPECT_EQ(compacted.exit, 1) << Describe(compacted);
  EXPECT_TRUE(Contains(compacted.err, "tandem-ctl: refused: query --on u1 @ 1: "))
      << Describe(compacted);
  EXPECT_TRUE(Contains(compacted.err, "compacted")) << Describe(compacted);
  ExpectJsonFailure(Run({"--json", "query", "--on", "u1", "--at", "1"}), 1, "compacted");
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{});
  auto fine = Run({"query", "--on", "u1", "--group-by", "g", "--aggregate", "count", "--at", "3"});
  EXPECT_EQ(fine.exit, 0) << Describe(fine) << sup_.Log();

  // Latest of an index with no complete time yet: waited for (up to --timeout), then refused.
  dir_.Write("empty.log", "");
  ASSERT_EQ(
      Run({"create-source", "u5", "--log", dir_.File("empty.log"), "--schema", "n:int64"}).exit, 0);
  auto nothing = Run({"--timeout", "1", "query", "--on", "u5", "--aggregate", "count"});
  EXPECT_EQ(nothing.exit, 1) << Describe(nothing);
  EXPECT_TRUE(Contains(nothing.err, "s5 has no complete time yet")) << Describe(nothing);
  CtlResult waited;
  std::thread query([&] {
    waited = Run({"--json", "--timeout", "20", "query", "--on", "u5", "--aggregate", "count"});
  });
  std::this_thread::sleep_for(1s);
  dir_.Write("empty.log", "U 0 1 7\nU 0 1 8\nP 1\n", true);
  query.join();
  ASSERT_EQ(waited.exit, 0) << Describe(waited) << sup_.Log();
  EXPECT_TRUE(Contains(waited.out, "\"time\":0,")) << waited.out;
  EXPECT_TRUE(Contains(waited.out, "\"rows\":[{\"row\":[2],\"count\":1}]")) << waited.out;
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{});
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

// A CommandError: the state file names an index the replica refused to build (its dataflow is
// refused when replayed), so the one-shot's import names no live index.
TEST_F(Ctl, AQueryTheReplicaRefusesSaysWhyAndExits1) {
  {
    controller::History h =
        *controller::History::Load(State(), controller::History::Access::kWrite);
    h.Append(FromJson(R"({"create_dataflow":{"desc":{"debug_name":"source u9","source_imports":)"
                      R"([{"id":"u9","source":{"key_value":{"keys":"0"}},"schema":{"columns":)"
                      R"([{"name":"key","type":"INT64"},{"name":"value","type":"INT64"}]}}],)"
                      R"("index_exports":[{"id":"s9","on":"u9","key":[0]}],"as_of":)"
                      R"({"elements":["0"]},"class":"MAINTAINED"}}})"));
    ASSERT_TRUE(h.Save().ok());
  }
  auto refused =
      Run({"query", "--on", "u9", "--group-by", "value", "--aggregate", "count", "--at", "0"});
  EXPECT_EQ(refused.exit, 1) << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "keys is 0")) << "the replay's refusal, warned\n"
                                                  << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "tandem-ctl: refused: query --on u9 @ 0: the replica refused "))
      << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "unknown index")) << Describe(refused);
  ExpectJsonFailure(Run({"--json", "query", "--on", "u9", "--at", "0"}), 1, "the replica refused");
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{});
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

// In solo mode the solo runtime renders the one-shot: the same answer, and nothing left behind.
TEST(CtlSolo, QueryRunsOnTheSoloRuntime) {
  SupervisorProcess sup({.two_runtime = false,
                         .workers = 2,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "32MiB"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TempDir dir;
  auto ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {"--endpoint", sup.controller_endpoint(), "--state", dir.File("tandem-ctl.state")});
    return RunCtl(args);
  };
  dir.Write("groups.log", "U 0 1 1 10\nU 0 1 1 20\nU 1 1 2 5\nU 2 1 3 7\nP 3\n");
  ASSERT_EQ(
      ctl({"create-source", "u1", "--log", dir.File("groups.log"), "--schema", "g:int64,x:int64"})
          .exit,
      0)
      << sup.Log();
  auto q = ctl({"--json", "query", "--on", "u1", "--group-by", "g", "--aggregate", "count"});
  ASSERT_EQ(q.exit, 0) << Describe(q) << sup.Log();
  EXPECT_TRUE(Contains(q.out, "\"time\":2,\"closed\":false,\"latency_ms\":")) << q.out;
  EXPECT_TRUE(Contains(q.out,
                       "\"rows\":[{\"row\":[1,2],\"count\":1},{\"row\":[2,1],\"count\":1},"
                       "{\"row\":[3,1],\"count\":1}]"))
      << q.out;
  // The new user's sequence, solo too.
  ASSERT_EQ(ctl({"create-index", "u2", "--on", "u1", "--key", "x"}).exit, 0) << sup.Log();
  ASSERT_EQ(ctl({"drop", "u2"}).exit, 0);
  ASSERT_EQ(ctl({"create-index", "u3", "--on", "u1", "--key", "x"}).exit, 0) << sup.Log();
  auto peek = ctl({"peek", "u3", "--at", "2", "--key", "20"});
  ASSERT_EQ(peek.exit, 0) << Describe(peek);
  EXPECT_TRUE(Contains(peek.out, "1  20  1\n")) << peek.out;
  EXPECT_EQ(LiveTransientIndexes(sup.controller_endpoint()), std::vector<std::string>{});
  EXPECT_FALSE(sup.Exited()) << sup.Log();
}

// ---------------------------------------------------------------------------------------------
// Joins, top-k and the new aggregates in create-view's and query's short form.

ipc::pb::Column Column(const std::string& name, ipc::pb::ScalarType type, bool nullable) {
  ipc::pb::Column c;
  c.set_name(name);
  c.set_type(type);
  c.set_nullable(nullable);
  return c;
}

// Orders [cust INT64, amount INT64?, note STRING] and customers [id INT64, name STRING, vip BOOL].
ctl::ViewInput Orders() {
  ctl::ViewInput in{"u1", {}};
  *in.schema.add_columns() = Column("cust", ipc::pb::INT64, false);
  *in.schema.add_columns() = Column("amount", ipc::pb::INT64, true);
  *in.schema.add_columns() = Column("note", ipc::pb::STRING, false);
  return in;
}
ctl::ViewInput Customers() {
  ctl::ViewInput in{"u2", {}};
  *in.schema.add_columns() = Column("id", ipc::pb::INT64, false);
  *in.schema.add_columns() = Column("name", ipc::pb::STRING, false);
  *in.schema.add_columns() = Column("vip", ipc::pb::BOOL, false);
  return in;
}

std::vector<std::uint32_t> Keys(const google::protobuf::RepeatedField<std::uint32_t>& keys) {
  return {keys.begin(), keys.end()};
}

// The plan of `o` over orders (and customers for each --join), which must be accepted.
ctl::View Planned(const ctl::ViewOptions& o, std::vector<ctl::ViewInput> joined = {}) {
  std::vector<ctl::ViewInput> inputs = {Orders()};
  inputs.insert(inputs.end(), joined.begin(), joined.end());
  ctl::View view;
  const auto refused = ctl::PlanView(o, inputs, view);
  EXPECT_FALSE(refused) << (refused ? refused->why : "");
  return view;
}

// Refused, `usage` (exit 64) or not (exit 1), for a reason containing `why`.
void ExpectViewRefused(const ctl::ViewOptions& o, std::vector<ctl::ViewInput> joined, bool usage,
                       const std::string& why) {
  std::vector<ctl::ViewInput> inputs = {Orders()};
  inputs.insert(inputs.end(), joined.begin(), joined.end());
  ctl::View view;
  const auto refused = ctl::PlanView(o, inputs, view);
  ASSERT_TRUE(refused) << "accepted: " << ipc::ToJson(view.plan);
  EXPECT_EQ(refused->usage, usage) << refused->why;
  EXPECT_TRUE(Contains(refused->why, why)) << refused->why << "\nexpected to contain: " << why;
}

TEST(CtlView, AJoinPairsNamedColumnsAndALeftJoinsRightColumnsAreNullable) {
  ctl::ViewOptions o;
  o.joins = {{"u2", {"cust=id"}, true}};
  const ctl::View view = Planned(o, {Customers()});
  ASSERT_TRUE(view.plan.has_join()) << ipc::ToJson(view.plan);
  const auto& j = view.plan.join();
  EXPECT_EQ(j.left().get().id(), "u1");
  EXPECT_EQ(j.right().get().id(), "u2");
  EXPECT_EQ(Keys(j.left_key()), std::vector<std::uint32_t>{0});
  EXPECT_EQ(Keys(j.right_key()), std::vector<std::uint32_t>{0});
  EXPECT_EQ(j.kind(), ipc::pb::LEFT_OUTER);
  ASSERT_EQ(view.schema.columns_size(), 6);
  EXPECT_EQ(view.schema.columns(3).name(), "id");
  EXPECT_FALSE(view.schema.columns(0).nullable());
  for (int c = 3; c < 6; ++c) EXPECT_TRUE(view.schema.columns(c).nullable()) << c;
  // Each side is best imported by its join key; the view's index is on its first column.
  EXPECT_EQ(view.import_keys, (std::vector<std::vector<std::uint32_t>>{{0}, {0}}));
  EXPECT_EQ(view.key, std::vector<std::uint32_t>{0});

  // Several --join-on: a key of several columns, by name or position; inner by default.
  o.joins = {{"u2", {"note=name", " cust = 0 "}, false}};
  const ctl::View two = Planned(o, {Customers()});
  EXPECT_EQ(Keys(two.plan.join().left_key()), (std::vector<std::uint32_t>{2, 0}));
  EXPECT_EQ(Keys(two.plan.join().right_key()), (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(two.plan.join().kind(), ipc::pb::INNER);
  EXPECT_FALSE(two.schema.columns(4).nullable());
  EXPECT_EQ(two.import_keys, (std::vector<std::vector<std::uint32_t>>{{2, 0}, {1, 0}}));
}

TEST(CtlView, AChainOfJoinsResolvesEachLeftColumnInTheJoinSoFar) {
  ctl::ViewOptions o;
  // (orders ⋈ customers on cust = id) ⋈ orders on id = cust: "id" is column 3 of the first join.
  o.joins = {{"u2", {"cust=id"}, false}, {"u1", {"id=cust"}, true}};
  const ctl::View view = Planned(o, {Customers(), Orders()});
  ASSERT_TRUE(view.plan.has_join());
  const auto& outer = view.plan.join();
  ASSERT_TRUE(outer.left().has_join());
  EXPECT_EQ(outer.right().get().id(), "u1");
  EXPECT_EQ(Keys(outer.left_key()), std::vector<std::uint32_t>{3});
  EXPECT_EQ(Keys(outer.right_key()), std::vector<std::uint32_t>{0});
  EXPECT_EQ(outer.kind(), ipc::pb::LEFT_OUTER);
  EXPECT_EQ(outer.left().join().kind(), ipc::pb::INNER);
  EXPECT_EQ(view.schema.columns_size(), 9);
  EXPECT_EQ(view.import_keys, (std::vector<std::vector<std::uint32_t>>{{0}, {0}, {0}}));
}

TEST(CtlView, NewAggregatesAndGroupByReadTheJoinedColumns) {
  ctl::ViewOptions o;
  o.joins = {{"u2", {"cust=id"}, false}};
  o.group_by = "name";
  o.aggregates = {"count",      "count:amount", "count-distinct:note",
                  "avg:amount", "any:vip",      "all:vip"};
  const ctl::View view = Planned(o, {Customers()});
  ASSERT_TRUE(view.plan.has_reduce()) << ipc::ToJson(view.plan);
  const auto& r = view.plan.reduce();
  EXPECT_TRUE(r.input().has_join());
  EXPECT_EQ(Keys(r.group_key()), std::vector<std::uint32_t>{4});
  const std::vector<std::pair<ipc::pb::AggregateFunc, std::uint32_t>> expected = {
      {ipc::pb::COUNT, 0},
      {ipc::pb::COUNT_NON_NULL, 1},
      {ipc::pb::COUNT_DISTINCT, 2},
      {ipc::pb::AVG, 1},
      {ipc::pb::ANY, 5},
      {ipc::pb::ALL, 5}};
  ASSERT_EQ(r.aggregates_size(), 6);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r.aggregates(i).func(), expected[i].first) << i;
    if (i > 0) {
      EXPECT_EQ(r.aggregates(i).column(), expected[i].second) << i;
    }
  }
  std::vector<std::string> names;
  for (const auto& c : view.schema.columns()) names.push_back(c.name());
  EXPECT_EQ(names, (std::vector<std::string>{"name", "count", "count_amount", "count_distinct_note",
                                             "avg_amount", "any_vip", "all_vip"}));
  EXPECT_EQ(view.schema.columns(4).type(), ipc::pb::FLOAT64);
  // The join's sides are imported by the join key, not the group key.
  EXPECT_EQ(view.import_keys, (std::vector<std::vector<std::uint32_t>>{{0}, {0}}));
  EXPECT_EQ(view.key, std::vector<std::uint32_t>{0});
  // Without a join, --on is imported by the group key (as before).
  ctl::ViewOptions plain;
  plain.group_by = "note";
  plain.aggregates = {"avg:amount"};
  EXPECT_EQ(Planned(plain).import_keys, (std::vector<std::vector<std::uint32_t>>{{2}}));
}

TEST(CtlView, TopTakesALimitAnOrderAGroupAndAnOffset) {
  ctl::ViewOptions o;
  o.top = "10";
  o.by = "amount:desc:nulls-last, note";
  o.per = "cust";
  o.offset = "2";
  const ctl::View view = Planned(o);
  ASSERT_TRUE(view.plan.has_top_k()) << ipc::ToJson(view.plan);
  const auto& t = view.plan.top_k();
  EXPECT_EQ(t.input().get().id(), "u1");
  EXPECT_EQ(t.limit(), 10u);
  EXPECT_EQ(t.offset(), 2u);
  EXPECT_EQ(Keys(t.group_key()), std::vector<std::uint32_t>{0});
  ASSERT_EQ(t.order_by_size(), 2);
  EXPECT_EQ(t.order_by(0).column(), 1u);
  EXPECT_TRUE(t.order_by(0).desc());
  EXPECT_TRUE(t.order_by(0).nulls_last());
  EXPECT_EQ(t.order_by(1).column(), 2u);
  EXPECT_FALSE(t.order_by(1).desc());
  EXPECT_FALSE(t.order_by(1).nulls_last());
  EXPECT_EQ(ipc::Encode(view.schema), ipc::Encode(Orders().schema));
  EXPECT_EQ(view.key, std::vector<std::uint32_t>{0}) << "keyed by --per";

  // After a Reduce: the top 3 groups by count; names resolve in the Reduce's output.
  ctl::ViewOptions groups;
  groups.group_by = "note";
  groups.aggregates = {"count"};
  groups.top = "3";
  groups.by = "count:desc";
  const ctl::View top_groups = Planned(groups);
  ASSERT_TRUE(top_groups.plan.has_top_k());
  EXPECT_TRUE(top_groups.plan.top_k().input().has_reduce());
  EXPECT_EQ(top_groups.plan.top_k().offset(), 0u);
  EXPECT_EQ(top_groups.plan.top_k().order_by(0).column(), 1u);
  EXPECT_EQ(top_groups.import_keys, (std::vector<std::vector<std::uint32_t>>{{2}}));
}

TEST(CtlView, MalformedOptionsAreUsageErrorsAndUnknownColumnsOrWrongTypesRefusals) {
  const ctl::ViewInput customers = Customers();
  auto join = [](std::vector<std::string> on) {
    ctl::ViewOptions o;
    o.joins = {{"u2", std::move(on), false}};
    return o;
  };
  ExpectViewRefused(join({}), {customers}, true, "--join u2: needs --join-on LEFT=RIGHT");
  ExpectViewRefused(join({"cust"}), {customers}, true,
                    "--join u2 --join-on cust: expected LEFT=RIGHT");
  ExpectViewRefused(join({"cust=id=2"}), {customers}, true, "expected LEFT=RIGHT");
  ExpectViewRefused(join({"cust,note=id"}), {customers}, true, "left: one column");
  ExpectViewRefused(join({"nope=id"}), {customers}, false,
                    "--join u2 --join-on nope=id: left: unknown column \"nope\" (columns: cust, "
                    "amount, note)");
  ExpectViewRefused(join({"cust=nope"}), {customers}, false,
                    "right (u2): unknown column \"nope\" (columns: id, name, vip)");
  ExpectViewRefused(join({"cust=7"}), {customers}, false,
                    "right (u2): column 7 out of range: there are 3 columns");
  ExpectViewRefused(join({"cust=id", "note=vip"}), {customers}, false,
                    "--join u2 --join-on note=vip: note is string, u2's vip is bool (a join key "
                    "pairs columns of one type)");
  ctl::ViewOptions misplaced;
  misplaced.misplaced = "--left";
  ExpectViewRefused(misplaced, {}, true, "--left comes before any --join");

  auto aggregate = [](std::string text) {
    ctl::ViewOptions o;
    o.aggregates = {std::move(text)};
    return o;
  };
  ExpectViewRefused(aggregate("median:amount"), {}, true,
                    std::string("--aggregate \"median:amount\": expected ") + ctl::kAggregateHelp);
  ExpectViewRefused(aggregate("avg"), {}, true, "expected count|count:COL");
  ExpectViewRefused(aggregate("avg:note"), {}, false,
                    "--aggregate avg:note: avg needs an int64 or float64 column, note is string");
  ExpectViewRefused(aggregate("any:cust"), {}, false,
                    "--aggregate any:cust: any needs a bool column, cust is int64");
  ExpectViewRefused(aggregate("all:amount"), {}, false, "all needs a bool column, amount is int64");
  ExpectViewRefused(aggregate("count-distinct:zz"), {}, false, "unknown column \"zz\"");
  ExpectViewRefused(aggregate("avg:9"), {}, false, "aggregate 0: column 9 out of range");

  auto top = [](std::string n, std::optional<std::string> by) {
    ctl::ViewOptions o;
    o.top = std::move(n);
    o.by = std::move(by);
    return o;
  };
  ExpectViewRefused(top("0", "amount"), {}, true, "--top 0: keeps no row");
  ExpectViewRefused(top("ten", "amount"), {}, true, "--top: \"ten\" is not a non-negative integer");
  ExpectViewRefused(top("3", "amount:up"), {}, true,
                    "--by amount:up: \"up\" is not asc, desc, nulls-first or nulls-last");
  ExpectViewRefused(top("3", "nope:desc"), {}, false, "--by nope:desc: unknown column \"nope\"");
  ctl::ViewOptions per = top("3", "amount");
  per.per = "zz";
  ExpectViewRefused(per, {}, false, "--per: unknown column \"zz\"");
  per.per = std::nullopt;
  per.offset = "-1";
  ExpectViewRefused(per, {}, true, "--offset: \"-1\" is not a non-negative integer");
  ctl::ViewOptions by_alone;
  by_alone.by = "amount";
  ExpectViewRefused(by_alone, {}, true, "--by needs --top N");
}

// Two log sources in the state file (as create-source leaves them): u1 [cust, amount?, note]
// indexed by s1 on cust, u2 [id, name, vip] indexed by s2 on id.
void WriteJoinHistory(const std::string& state) {
  controller::History h = *controller::History::Load(state, controller::History::Access::kWrite);
  h.Append(FromJson(
      R"({"create_dataflow":{"desc":{"debug_name":"source u1","source_imports":[{"id":"u1",)"
      R"("source":{"log":{"path":"/nonexistent/orders.log"}},"schema":{"columns":[)"
      R"({"name":"cust","type":"INT64"},{"name":"amount","type":"INT64","nullable":true},)"
      R"({"name":"note","type":"STRING"}]}}],"index_exports":[{"id":"s1","on":"u1","key":[0]}],)"
      R"("as_of":{"elements":["0"]},"class":"MAINTAINED"}}})"));
  h.Append(FromJson(
      R"({"create_dataflow":{"desc":{"debug_name":"source u2","source_imports":[{"id":"u2",)"
      R"("source":{"log":{"path":"/nonexistent/customers.log"}},"schema":{"columns":[)"
      R"({"name":"id","type":"INT64"},{"name":"name","type":"STRING"},)"
      R"({"name":"vip","type":"BOOL"}]}}],"index_exports":[{"id":"s2","on":"u2","key":[0]}],)"
      R"("as_of":{"elements":["0"]},"class":"MAINTAINED"}}})"));
  ASSERT_TRUE(h.Save().ok());
}

// The command line's short form, caught before connecting (no replica: a well-formed command
// gets as far as the connection, exit 69).
TEST(CtlUsage, JoinTopAndAggregateMistakesAreCaughtBeforeConnecting) {
  TempDir dir;
  WriteJoinHistory(dir.File("state"));
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(FreePort());
  auto ctl = [&](std::vector<std::string> command) {
    std::vector<std::string> args = {"--endpoint", endpoint,  "--timeout",
                                     "1",          "--state", dir.File("state")};
    args.insert(args.end(), command.begin(), command.end());
    return RunCtl(args);
  };
  struct Case {
    std::vector<std::string> args;
    int exit;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"create-view", "u3", "--on", "u1", "--join", "u2", "--join-on", "note=id"},
       1,
       "tandem-ctl: refused: create-view u3: --join u2 --join-on note=id: note is string, u2's "
       "id is int64"},
      {{"query", "--on", "u1", "--join", "u2", "--join-on", "cust=ident"},
       1,
       "tandem-ctl: refused: query --on u1: --join u2 --join-on cust=ident: right (u2): unknown "
       "column \"ident\" (columns: id, name, vip)"},
      {{"query", "--on", "u1", "--join", "u9", "--join-on", "cust=id"},
       1,
       "u9 is not a source or collection this controller created"},
      {{"create-view", "u3", "--on", "u1", "--join", "u2"}, 64, "--join u2: needs --join-on"},
      {{"create-view", "u3", "--on", "u1", "--join-on", "cust=id", "--join", "u2"},
       64,
       "--join-on cust=id comes before any --join"},
      {{"create-view", "u3", "--on", "u1", "--left", "--join", "u2", "--join-on", "cust=id"},
       64,
       "--left comes before any --join"},
      {{"query", "--on", "u1", "--aggregate", "avg:note"},
       1,
       "--aggregate avg:note: avg needs an int64 or float64 column, note is string"},
      {{"query", "--on", "u1", "--aggregate", "any:cust"}, 1, "any needs a bool column"},
      {{"query", "--on", "u1", "--aggregate", "mean:amount"}, 64, "expected count|count:COL"},
      {{"query", "--on", "u1", "--top", "0"}, 64, "--top 0: keeps no row"},
      {{"query", "--on", "u1", "--top", "2", "--by", "amount:sideways"}, 64, "\"sideways\""},
      {{"query", "--on", "u1", "--top", "2", "--by", "nope"}, 1, "unknown column \"nope\""},
      {{"query", "--on", "u1", "--per", "cust"}, 64, "--per needs --top N"},
      // Well formed: joins chained, a left join, top-k per group, the new aggregates.
      {{"create-view",
        "u3",
        "--on",
        "u1",
        "--join",
        "u2",
        "--join-on",
        "cust=id",
        "--left",
        "--join",
        "u1",
        "--join-on",
        "id=cust",
        "--join-on",
        "note=note",
        "--top",
        "3",
        "--by",
        "amount:desc:nulls-last",
        "--per",
        "name"},
       69,
       "cannot reach the replica"},
      {{"query", "--on", "u1", "--join", "u2", "--join-on", "cust=id", "--group-by", "name",
        "--aggregate", "count:amount", "--aggregate", "count-distinct:note", "--aggregate",
        "avg:amount", "--aggregate", "any:vip", "--aggregate", "all:vip"},
       69,
       "cannot reach the replica"},
  };
  for (const Case& c : cases) {
    const auto r = ctl(c.args);
    EXPECT_EQ(r.exit, c.exit) << Describe(r);
    EXPECT_TRUE(Contains(r.err, c.err)) << Describe(r) << "\nexpected: " << c.err;
  }
}

// Through the replica: a maintained left join read by peek (both sides imported by their join
// key and read in place), and one-shot queries with a join, a chain, the new aggregates and a
// top-k per group.
TEST_F(Ctl, JoinsTopKAndNewAggregatesAreComputedByTheReplica) {
  dir_.Write("orders.log",
             "U 0 1 1 10 \"a\"\nU 0 1 1 20 \"b\"\nU 0 1 2 5 \"a\"\nU 0 1 3 7 \"c\"\n"
             "U 0 1 2 null \"d\"\nP 2\n");
  dir_.Write("customers.log", "U 0 1 1 \"ann\" true\nU 0 1 2 \"bob\" false\nP 2\n");
  ASSERT_EQ(Run({"create-source", "u1", "--log", dir_.File("orders.log"), "--schema",
                 "cust:int64,amount:int64?,note:string"})
                .exit,
            0)
      << sup_.Log();
  ASSERT_EQ(Run({"create-source", "u2", "--log", dir_.File("customers.log"), "--schema",
                 "id:int64,name:string,vip:bool"})
                .exit,
            0)
      << sup_.Log();

  // Every order with its customer; order 3 has none: nulls, and the view's index on the
  // (nullable) name finds it under null.
  auto view = Run({"create-view", "u3", "--on", "u1", "--join", "u2", "--join-on", "cust=id",
                   "--left", "--key", "name", "--index-id", "u4"});
  ASSERT_EQ(view.exit, 0) << Describe(view) << sup_.Log();
  EXPECT_TRUE(
      Contains(view.out, "created view u3 on u1 with index u4 (key name), importing s1, s2"))
      << view.out;
  auto all = Run({"--json", "peek", "u3", "--at", "1"});
  ASSERT_EQ(all.exit, 0) << Describe(all) << sup_.Log();
  EXPECT_TRUE(
      Contains(all.out, "\"columns\":[\"cust\",\"amount\",\"note\",\"id\",\"name\",\"vip\"]"))
      << all.out;
  for (const std::string row : {R"({"row":[1,10,"a",1,"ann",true],"count":1})",
                                R"({"row":[1,20,"b",1,"ann",true],"count":1})",
                                R"({"row":[2,5,"a",2,"bob",false],"count":1})",
                                R"({"row":[2,null,"d",2,"bob",false],"count":1})",
                                R"({"row":[3,7,"c",null,null,null],"count":1})"}) {
    EXPECT_TRUE(Contains(all.out, row)) << row << "\n" << all.out;
  }
  EXPECT_EQ(Field(LastJson(all), "rows").list_value().values_size(), 5) << all.out;
  auto unmatched = Run({"--json", "peek", "u3", "--at", "1", "--key", "null"});
  ASSERT_EQ(unmatched.exit, 0) << Describe(unmatched);
  EXPECT_TRUE(Contains(unmatched.out, R"("rows":[{"row":[3,7,"c",null,null,null],"count":1}])"))
      << unmatched.out;
  EXPECT_TRUE(Contains(sup_.Log(),
                       "join 1: left side imported index s1, in place, right side "
                       "imported index s2, in place"))
      << sup_.Log();

  // One-shot: per customer name, the new aggregates over the inner join.
  auto aggregates = Run({"--json",      "query",
                         "--on",        "u1",
                         "--join",      "u2",
                         "--join-on",   "cust=id",
                         "--group-by",  "name",
                         "--aggregate", "count:amount",
                         "--aggregate", "count-distinct:note",
                         "--aggregate", "avg:amount",
                         "--aggregate", "any:vip",
                         "--aggregate", "all:vip",
                         "--at",        "1"});
  ASSERT_EQ(aggregates.exit, 0) << Describe(aggregates) << sup_.Log();
  EXPECT_TRUE(
      Contains(aggregates.out,
               R"("columns":["name","count_amount","count_distinct_note","avg_amount",)"
               R"("any_vip","all_vip"],"rows":[{"row":["ann",2,2,15.0,true,true],"count":1},)"
               R"({"row":["bob",1,2,5.0,false,false],"count":1}]})"))
      << aggregates.out;

  // A chain: orders ⋈ customers ⋈ orders of the same customer (s1 imported once): 2×2 + 2×2.
  auto chain = Run({"--json", "query", "--on", "u1", "--join", "u2", "--join-on", "cust=id",
                    "--join", "u1", "--join-on", "id=cust", "--aggregate", "count", "--at", "1"});
  ASSERT_EQ(chain.exit, 0) << Describe(chain) << sup_.Log();
  EXPECT_TRUE(Contains(chain.out, R"("rows":[{"row":[8],"count":1}])")) << chain.out;

  // At the latest time complete in both imports (s1 and s2: 1).
  auto latest = Run({"--json", "query", "--on", "u1", "--join", "u2", "--join-on", "cust=id",
                     "--aggregate", "count"});
  ASSERT_EQ(latest.exit, 0) << Describe(latest) << sup_.Log();
  EXPECT_EQ(Field(LastJson(latest), "time").number_value(), 1) << latest.out;
  EXPECT_EQ(Field(LastJson(latest), "import").string_value(), "s1") << latest.out;
  EXPECT_TRUE(Contains(latest.out, R"("rows":[{"row":[4],"count":1}])")) << latest.out;

  // Top-k: each customer's largest order (nulls last), and the second largest overall.
  auto top = Run({"--json", "query", "--on", "u1", "--top", "1", "--by", "amount:desc:nulls-last",
                  "--per", "cust", "--at", "1"});
  ASSERT_EQ(top.exit, 0) << Describe(top) << sup_.Log();
  EXPECT_TRUE(Contains(top.out, R"({"row":[1,20,"b"],"count":1})")) << top.out;
  EXPECT_TRUE(Contains(top.out, R"({"row":[2,5,"a"],"count":1})")) << top.out;
  EXPECT_TRUE(Contains(top.out, R"({"row":[3,7,"c"],"count":1})")) << top.out;
  EXPECT_EQ(Field(LastJson(top), "rows").list_value().values_size(), 3) << top.out;
  auto second = Run({"--json", "query", "--on", "u1", "--top", "1", "--offset", "1", "--by",
                     "amount:desc:nulls-last", "--at", "1"});
  ASSERT_EQ(second.exit, 0) << Describe(second) << sup_.Log();
  EXPECT_TRUE(Contains(second.out, R"("rows":[{"row":[1,10,"a"],"count":1}])")) << second.out;
  EXPECT_EQ(LiveTransientIndexes(sup_.controller_endpoint()), std::vector<std::string>{});
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

// ---------------------------------------------------------------------------------------------
// Tables, upsert keys, csv/jsonl sources, and `write`.

// A source's dataflow as create-source leaves it: source `id` (`source` is its Source's JSON,
// `schema` its columns' JSON, `upsert_key` e.g. "[1,0]" or ""), its index s<n> keyed by `key`.
std::string SourceDataflowJson(const std::string& id, const std::string& source,
                               const std::string& columns, const std::string& upsert_key,
                               const std::string& key) {
  const std::string index = *controller::History::SourceIndexId(id);
  return R"({"create_dataflow":{"desc":{"debug_name":"source )" + id +
         R"(","source_imports":[{"id":")" + id + R"(","source":)" + source +
         R"(,"schema":{"columns":)" + columns + "}" +
         (upsert_key.empty() ? "" : R"(,"upsert_key":)" + upsert_key) +
         R"(}],"index_exports":[{"id":")" + index + R"(","on":")" + id + R"(","key":)" + key +
         R"(}],"as_of":{"elements":["0"]},"class":"MAINTAINED"}}})";
}

// A state file with plain table u1 (k int64, v string?), upsert table u2 (k int64, k2 string,
// v float64; upsert key k2, k), log source u3 (n int64) and JSON-lines source u4 (n int64, upsert
// key n).
void WriteTableHistory(const std::string& state) {
  controller::History h = *controller::History::Load(state, controller::History::Access::kWrite);
  h.Append(FromJson(SourceDataflowJson(
      "u1", R"({"table":{}})",
      R"([{"name":"k","type":"INT64"},{"name":"v","type":"STRING","nullable":true}])", "", "[0]")));
  h.Append(FromJson(SourceDataflowJson("u2", R"({"table":{"tick_interval_ms":"50"}})",
                                       R"([{"name":"k","type":"INT64"},)"
                                       R"({"name":"k2","type":"STRING"},)"
                                       R"({"name":"v","type":"FLOAT64"}])",
                                       "[1,0]", "[1,0]")));
  h.Append(FromJson(SourceDataflowJson("u3", R"({"log":{"path":"/nonexistent.log"}})",
                                       R"([{"name":"n","type":"INT64"}])", "", "[0]")));
  h.Append(FromJson(SourceDataflowJson("u4", R"({"json_lines":{"path":"/nonexistent.jsonl"}})",
                                       R"([{"name":"n","type":"INT64"}])", "[0]", "[0]")));
  ASSERT_TRUE(h.Save().ok());
}

TEST(CtlHistory, LiveSourceIsTheSourceImportOfALiveSourceOnly) {
  TempDir dir;
  WriteTableHistory(dir.File("state"));
  controller::History h =
      *controller::History::Load(dir.File("state"), controller::History::Access::kWrite);
  const auto u2 = h.LiveSource("u2");
  ASSERT_TRUE(u2.has_value());
  EXPECT_TRUE(u2->source().has_table());
  EXPECT_EQ(u2->source().table().tick_interval_ms(), 50u);
  EXPECT_EQ(std::vector<std::uint32_t>(u2->upsert_key().begin(), u2->upsert_key().end()),
            (std::vector<std::uint32_t>{1, 0}));
  EXPECT_FALSE(h.LiveSource("s2").has_value()) << "an index is no source";
  EXPECT_FALSE(h.LiveSource("u9").has_value());
  const auto files = h.SourceFiles();  // what frontiers checks
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files.at("u3").what, "log");
  EXPECT_EQ(files.at("u3").path, "/nonexistent.log");
  EXPECT_EQ(files.at("u4").what, "JSON-lines");
  EXPECT_EQ(files.at("u4").path, "/nonexistent.jsonl");
  h.Append(FromJson(R"({"allow_compaction":{"id":"s1","frontier":{}}})"));  // drops u1
  h.Prune();  // as `drop u1` leaves the history
  EXPECT_FALSE(h.LiveSource("u1").has_value()) << "a dropped source is not live";
}

// Every mistake in a create-source of a table, csv, jsonl or upsert source that the command line
// shows is caught before connecting (the endpoint has no replica): 64 for usage, 1 for a refused
// column or file; nothing is recorded.
TEST(CtlUsage, TableCsvJsonlAndUpsertKeyMistakesAreCaughtBeforeConnecting) {
  TempDir dir;
  const std::string state = dir.File("state");
  dir.Write("data.csv", "k,v\n");
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(FreePort());
  struct Case {
    std::vector<std::string> args;
    int exit;
    std::string part;
  };
  const std::vector<Case> cases = {
      {{"--table"}, 64, "--schema is required"},
      {{"--table", "--schema", "k:int64", "--csv", dir.File("data.csv")},
       64,
       "exactly one of --generator, --log, --table, --csv and --jsonl"},
      {{"--generator", "counter", "--upsert-key", "n"},
       64,
       "--upsert-key goes with --log, --table, --csv or --jsonl"},
      {{"--generator", "counter", "--tick-ms", "5"}, 64, "--tick-ms goes with --table"},
      {{"--csv", dir.File("data.csv"), "--schema", "k:int64", "--tick-ms", "5"},
       64,
       "--tick-ms goes with --table"},
      {{"--table", "--schema", "k:int64", "--tick-ms", "0"}, 64, "--tick-ms 0: between 1 and"},
      {{"--table", "--schema", "k:int64", "--tick-ms", "3600001"}, 64, "3600000 milliseconds"},
      {{"--table", "--schema", "k:int64", "--tick-ms", "soon"}, 64, "--tick-ms: \"soon\""},
      {{"--table", "--schema", "k:int64,v:string", "--upsert-key", "z"},
       1,
       "refused: create-source u1: --upsert-key: unknown column \"z\" (columns: k, v)"},
      {{"--table", "--schema", "k:int64,v:string", "--upsert-key", "k,k"},
       1,
       "--upsert-key: column k is given twice"},
      {{"--table", "--schema", "k:int64,v:string", "--upsert-key", "2"},
       1,
       "--upsert-key: column 2 is out of range (the schema has 2 columns)"},
      {{"--csv", dir.File("missing.csv"), "--schema", "k:int64"},
       1,
       "refused: create-source u1: --csv " + dir.File("missing.csv") + ": no such file"},
      {{"--jsonl", dir.path(), "--schema", "k:int64"}, 1, "not a regular file (a directory)"},
      {{"--jsonl", dir.File("data.csv")}, 64, "--schema is required"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--endpoint", endpoint, "--timeout",     "1",
                                     "--state",    state,    "create-source", "u1"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = RunCtl(args);
    EXPECT_EQ(r.exit, c.exit) << Describe(r);
    EXPECT_TRUE(Contains(r.err, c.part)) << "want " << c.part << "\n" << Describe(r);
    EXPECT_FALSE(Contains(r.err, "cannot reach")) << Describe(r);
  }
  EXPECT_FALSE(std::filesystem::exists(state)) << "nothing was recorded";
}

// `write` types its updates by the table in the state file and refuses, before connecting, what
// cannot be written to it; a write that is well-formed goes on to connect (here: unreachable).
TEST(CtlUsage, WriteIsTypedByTheStateFileAndRefusedBeforeConnecting) {
  TempDir dir;
  const std::string state = dir.File("state");
  WriteTableHistory(state);
  const std::string before = ReadFile(state);
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(FreePort());
  struct Case {
    std::vector<std::string> args;
    int exit;
    std::string part;
  };
  const std::vector<Case> cases = {
      {{"u1"}, 64, "write needs at least one --row, --upsert or --delete"},
      {{"u9", "--row", "1,null"},
       1,
       "refused: write u9: u9 is not a table this controller created (state file " + state +
           "); create it first, e.g. create-source u9 --table"},
      {{"u3", "--row", "1"}, 1, "refused: write u3: u3 is not a table (it is a log source)"},
      {{"u4", "--upsert", "1"}, 1, "u4 is not a table (it is a JSON-lines source)"},
      {{"s1", "--row", "1,null"}, 1, "s1 is not a table (it is an index)"},
      {{"u1", "--upsert", "1,null"},
       1,
       "refused: write u1: --upsert 1,null: u1 has no upsert key: write rows with diffs"},
      {{"u1", "--delete", "1"}, 1, "u1 has no upsert key"},
      {{"u2", "--row", R"(1,"a",2.5)"},
       1,
       "u2 is an upsert table (upsert key k2, k): write --upsert ROW"},
      {{"u1", "--row", "1"},
       1,
       "refused: write u1: --row 1: 1 datum, but u1 has 2 columns (k, v): give one datum per "
       "column"},
      {{"u1", "--row", "1,x"}, 1, "strings are written in double quotes: \"x\""},
      {{"u1", "--row", "1.5,null"}, 1, "--row 1.5,null: '1.5' for column k (int64)"},
      {{"u2", "--delete", R"("a")"},
       1,
       "--delete \"a\": 1 datum, but u2's upsert key has 2 columns (k2, k)"},
      {{"u2", "--delete", R"(1,"a")"}, 1, "for column k2 (string)"},
      {{"u2", "--upsert", R"(1,"a",null)"}, 1, "the column is not nullable"},
      {{"u1", "--row", "1,null", "--diff", "0"}, 64, "--diff 0: a diff is a non-zero integer"},
      {{"u1", "--row", "1,null", "--diff", "x"}, 64, "--diff x: a diff is a non-zero integer"},
      {{"u1", "--diff", "2", "--row", "1,null"}, 64, "--diff 2: --diff follows the --row"},
      {{"u1", "--row", "1,null", "--diff", "2", "--diff", "3"}, 64, "--diff 3: --diff follows"},
      {{"u2", "--upsert", R"(1,"a",2)", "--diff", "2"}, 64, "--diff 2: --diff follows"},
      {{"u1", "--row", "1,null", "--uuid", std::string(129, 'u')}, 64, "--uuid: 1 to 128 bytes"},
      // Well-formed: these connect.
      {{"u1", "--row", "1,null", "--diff", "-2", "--row", R"(2,"b")"},
       69,
       "cannot reach the replica at " + endpoint},
      {{"u2", "--upsert", R"(1,"a",2)", "--delete", R"("a",1)", "--uuid", "w-1"},
       69,
       "cannot reach the replica at " + endpoint},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--endpoint", endpoint, "--timeout", "1",
                                     "--state",    state,    "write"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = RunCtl(args);
    EXPECT_EQ(r.exit, c.exit) << Describe(r);
    EXPECT_TRUE(Contains(r.err, c.part)) << "want " << c.part << "\n" << Describe(r);
    if (c.exit != 69) {
      EXPECT_FALSE(Contains(r.err, "cannot reach")) << Describe(r);
    }
  }
  ExpectJsonFailure(
      RunCtl({"--json", "--endpoint", endpoint, "--state", state, "write", "u9", "--row", "1"}), 1,
      "u9 is not a table");
  EXPECT_EQ(ReadFile(state), before) << "write never changes the state file";
}

// The time of a write: "written at T" or --json's "time".
std::string WrittenAt(const CtlResult& r) {
  const std::string human = "written at ";
  if (auto at = r.out.find(human); at != std::string::npos) {
    return r.out.substr(at + human.size(), r.out.find('\n', at) - at - human.size());
  }
  const std::string json = "\"time\":";
  if (auto at = r.out.find(json); at != std::string::npos) {
    const auto from = at + json.size();
    return r.out.substr(from, r.out.find_first_not_of("0123456789", from) - from);
  }
  ADD_FAILURE() << "no time in " << Describe(r);
  return "0";
}

// A real replica with a --data-dir (tables need one) and a tandem-ctl with its own state file.
class CtlTables : public ::testing::Test {
 protected:
  CtlTables()
      : sup_({.extra_args = {"--data-dir", data_.File("data")},
              .two_runtime = true,
              .workers = 1,
              .worker_binary = TANDEM_WORKER_BIN,
              .shm_size = "32MiB"}) {}
  void SetUp() override { ASSERT_TRUE(sup_.WaitReady()) << sup_.Log(); }

  CtlResult Run(std::vector<std::string> args, const std::string& state = "") {
    args.insert(args.begin(), {"--endpoint", sup_.controller_endpoint(), "--state",
                               state.empty() ? State() : state});
    return RunCtl(args);
  }
  std::string State() const { return dir_.File("tandem-ctl.state"); }
  double Metric(const std::string& sample) {
    return std::max(0.0, MetricValue(HttpGet(sup_.http_port(), "/metrics").body, sample));
  }

  TempDir data_{"ctl-data"};  // before sup_, which is given its path
  SupervisorProcess sup_;
  TempDir dir_;
};

TEST_F(CtlTables, AnUpsertTableIsWrittenInAWriterSessionAndAPeekAtTheWrittenTimeSeesIt) {
  auto src = Run({"create-source", "u1", "--table", "--schema", "k:int64,v:string?", "--upsert-key",
                  "k", "--tick-ms", "50"});
  ASSERT_EQ(src.exit, 0) << Describe(src) << sup_.Log();
  EXPECT_TRUE(Contains(src.out, "created source u1 with index s1 (key k), upsert key k"))
      << src.out;
  EXPECT_TRUE(Contains(ReadFile(State()), R"("source":{"table":{"tick_interval_ms":"50"}})"))
      << ReadFile(State());
  EXPECT_TRUE(Contains(ReadFile(State()), R"("upsert_key":[0])")) << ReadFile(State());
  const std::string state = ReadFile(State());
  const double kept = Metric(kKept);
  const double built = Metric(kBuilt);

  auto w1 = Run({"--json", "write", "u1", "--upsert", R"(1,"a")", "--upsert", R"(2,"b")",
                 "--upsert", "3,null"});
  ASSERT_EQ(w1.exit, 0) << Describe(w1) << sup_.Log();
  const gpb::Struct doc = LastJson(w1);
  EXPECT_TRUE(Field(doc, "ok").bool_value()) << w1.out;
  EXPECT_EQ(Field(doc, "command").string_value(), "write u1") << w1.out;
  EXPECT_EQ(Field(doc, "id").string_value(), "u1") << w1.out;
  EXPECT_EQ(Field(doc, "updates").number_value(), 3) << w1.out;
  EXPECT_EQ(Field(doc, "uuid").string_value().size(), 32u) << "a random uuid\n" << w1.out;
  const std::string t1 = WrittenAt(w1);
  EXPECT_GT(std::stoull(t1), 1'600'000'000'000ull) << "a table's time is the wall clock in ms";

  // Of an upsert and a delete of one key in one write, the later wins: 4 is not there.
  auto w2 = Run({"write", "u1", "--upsert", R"(1,"c")", "--delete", "2", "--upsert", R"(4,"d")",
                 "--delete", "4"});
  ASSERT_EQ(w2.exit, 0) << Describe(w2) << sup_.Log();
  EXPECT_TRUE(Contains(w2.out, "written at ")) << w2.out;
  const std::string t2 = WrittenAt(w2);
  EXPECT_GT(std::stoull(t2), std::stoull(t1));

  // Read your writes: a peek at a write's time sees it (and nothing later).
  auto at1 = Run({"--json", "peek", "u1", "--at", t1});
  ASSERT_EQ(at1.exit, 0) << Describe(at1) << sup_.Log();
  EXPECT_TRUE(Contains(at1.out, R"("rows":[{"row":[1,"a"],"count":1},{"row":[2,"b"],"count":1},)"
                                R"({"row":[3,null],"count":1}])"))
      << at1.out;
  auto at2 = Run({"--json", "peek", "u1", "--at", t2});
  ASSERT_EQ(at2.exit, 0) << Describe(at2) << sup_.Log();
  EXPECT_TRUE(Contains(at2.out, R"("rows":[{"row":[1,"c"],"count":1},{"row":[3,null],"count":1}])"))
      << at2.out;
  auto key = Run({"--json", "peek", "u1", "--at", t2, "--key", "1"});
  ASSERT_EQ(key.exit, 0) << Describe(key);
  EXPECT_TRUE(Contains(key.out, R"("rows":[{"row":[1,"c"],"count":1}])")) << key.out;

  // A writer session never replays: nothing was reconciled, and the state file is as it was.
  EXPECT_EQ(Metric(kKept), kept);
  EXPECT_EQ(Metric(kBuilt), built);
  EXPECT_EQ(ReadFile(State()), state);
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(CtlTables, APlainTableTakesRowsWithDiffsAndARetriedUuidIsAppliedOnce) {
  auto src = Run({"create-source", "u1", "--table", "--schema", "k:int64,v:string"});
  ASSERT_EQ(src.exit, 0) << Describe(src) << sup_.Log();
  EXPECT_TRUE(Contains(src.out, "created source u1 with index s1 (key k)\n")) << src.out;
  const std::vector<std::string> write = {"write", "u1",    "--row",    R"(1,"x")", "--diff",
                                          "3",     "--row", R"(2,"y")", "--uuid",   "retry-1"};
  auto w1 = Run(write);
  ASSERT_EQ(w1.exit, 0) << Describe(w1) << sup_.Log();
  const std::string t1 = WrittenAt(w1);
  auto again = Run(write);  // the answer was "lost": the same write, the same uuid
  ASSERT_EQ(again.exit, 0) << Describe(again) << sup_.Log();
  EXPECT_EQ(WrittenAt(again), t1) << "a retried uuid is answered with its first time";
  auto w2 = Run({"write", "u1", "--row", R"(1,"x")", "--diff", "-1"});
  ASSERT_EQ(w2.exit, 0) << Describe(w2) << sup_.Log();
  const std::string t2 = WrittenAt(w2);
  auto peek = Run({"--json", "peek", "u1", "--at", t2});
  ASSERT_EQ(peek.exit, 0) << Describe(peek) << sup_.Log();
  EXPECT_TRUE(Contains(peek.out, R"("rows":[{"row":[1,"x"],"count":2},{"row":[2,"y"],"count":1}])"))
      << "3 - 1 copies of (1, x) and one (2, y): the retry was not applied again\n"
      << peek.out;
}

// What tandem-ctl cannot know from its state file, the replica refuses: exit 1 with its reason.
TEST_F(CtlTables, WritesTheReplicaRefusesExit1WithItsReason) {
  auto src = Run({"create-source", "u1", "--table", "--schema", "k:int64"});
  ASSERT_EQ(src.exit, 0) << Describe(src) << sup_.Log();
  // Another state file, whose u1 has two columns and which knows a table u7 the replica has not.
  const std::string other = dir_.File("other.state");
  WriteTableHistory(other);
  {
    controller::History h = *controller::History::Load(other, controller::History::Access::kWrite);
    h.Append(FromJson(SourceDataflowJson("u7", R"({"table":{}})",
                                         R"([{"name":"k","type":"INT64"}])", "", "[0]")));
    ASSERT_TRUE(h.Save().ok());
  }
  auto unknown = Run({"write", "u7", "--row", "1"}, other);
  EXPECT_EQ(unknown.exit, 1) << Describe(unknown);
  EXPECT_TRUE(
      Contains(unknown.err, "tandem-ctl: refused: write u7: the replica refused WriteTable"))
      << Describe(unknown);
  auto arity = Run({"write", "u1", "--row", "1,null"}, other);
  EXPECT_EQ(arity.exit, 1) << Describe(arity);
  EXPECT_TRUE(Contains(arity.err, "tandem-ctl: refused: write u1: the replica refused WriteTable"))
      << Describe(arity);
  // Nothing was written: u1 is still empty at the time of a write made after.
  auto w = Run({"write", "u1", "--row", "5"});
  ASSERT_EQ(w.exit, 0) << Describe(w) << sup_.Log();
  auto peek = Run({"--json", "peek", "u1", "--at", WrittenAt(w)});
  ASSERT_EQ(peek.exit, 0) << Describe(peek);
  EXPECT_TRUE(Contains(peek.out, R"("rows":[{"row":[5],"count":1}])")) << peek.out;
}

// A restarted replica runs nothing until a controller replays its history, and write and read
// sessions never replay: their refusal of an id the state file defines says so and names
// `replay`, which brings the table back with its rows and changes nothing else.
TEST_F(CtlTables, ARestartedReplicaNamesReplayForAnUnknownTableAndReplayBringsItBack) {
  auto src = Run({"create-source", "u1", "--table", "--schema", "k:int64,v:string"});
  ASSERT_EQ(src.exit, 0) << Describe(src) << sup_.Log();
  auto before = Run({"write", "u1", "--row", R"(1,"before")"});
  ASSERT_EQ(before.exit, 0) << Describe(before) << sup_.Log();
  const std::string state = ReadFile(State());

  ASSERT_TRUE(sup_.Kill()) << sup_.Log();
  sup_.Restart();  // the same data dir and ports
  ASSERT_TRUE(sup_.WaitReady()) << sup_.Log();
  const std::string endpoint = sup_.controller_endpoint();
  const std::string why = " — the replica at " + endpoint +
                          " maintains none of the indexes the state file " + State() +
                          " defines: this history was not replayed to it since it started";
  const std::string hint = "Run `tandem-ctl --endpoint " + endpoint + " --state " + State() +
                           " replay` (it replays the history and changes nothing else)";
  auto refused = Run({"write", "u1", "--row", R"(2,"after")"});
  EXPECT_EQ(refused.exit, 1) << Describe(refused);
  EXPECT_TRUE(
      Contains(refused.err, "tandem-ctl: refused: write u1: the replica refused WriteTable"))
      << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, "unknown table u1" + why)) << Describe(refused);
  EXPECT_TRUE(Contains(refused.err, hint)) << Describe(refused);
  auto peek = Run({"peek", "u1", "--at", "1"});
  EXPECT_EQ(peek.exit, 1) << Describe(peek);
  EXPECT_TRUE(Contains(peek.err, "unknown index s1" + why)) << Describe(peek);
  EXPECT_TRUE(Contains(peek.err, hint)) << Describe(peek);
  auto latest = Run({"peek", "u1"});  // refused while probing for the latest time
  EXPECT_EQ(latest.exit, 1) << Describe(latest);
  EXPECT_TRUE(Contains(latest.err, "unknown index s1" + why)) << Describe(latest);
  auto unknown = Run({"peek", "u42", "--at", "1"});  // no id of the history: no hint
  EXPECT_EQ(unknown.exit, 1) << Describe(unknown);
  EXPECT_TRUE(Contains(unknown.err, "unknown index u42")) << Describe(unknown);
  EXPECT_FALSE(Contains(unknown.err, "replay")) << Describe(unknown);

  auto replay = Run({"replay"});
  ASSERT_EQ(replay.exit, 0) << Describe(replay) << sup_.Log();
  EXPECT_TRUE(Contains(replay.out, "replayed 1 command of " + State() + " (index s1)\n"))
      << replay.out;
  EXPECT_EQ(ReadFile(State()), state) << "replay changes the replica only";
  auto after = Run({"write", "u1", "--row", R"(2,"after")"});
  ASSERT_EQ(after.exit, 0) << Describe(after) << sup_.Log();
  auto rows = Run({"--json", "peek", "u1", "--at", WrittenAt(after)});
  ASSERT_EQ(rows.exit, 0) << Describe(rows) << sup_.Log();
  EXPECT_TRUE(Contains(rows.out,
                       R"("rows":[{"row":[1,"before"],"count":1},{"row":[2,"after"],"count":1}])"))
      << "the row written before the restart is back\n"
      << rows.out;
  auto again = Run({"--json", "replay"});
  ASSERT_EQ(again.exit, 0) << Describe(again) << sup_.Log();
  const gpb::Struct doc = LastJson(again);
  EXPECT_TRUE(Field(doc, "ok").bool_value()) << again.out;
  EXPECT_EQ(Field(doc, "command").string_value(), "replay") << again.out;
  EXPECT_EQ(Field(doc, "commands").number_value(), 1) << again.out;
  const auto& indexes = Field(doc, "indexes").list_value();
  ASSERT_EQ(indexes.values_size(), 1) << again.out;
  EXPECT_EQ(indexes.values(0).string_value(), "s1") << again.out;
  EXPECT_FALSE(Has(doc, "replicas")) << again.out;
  EXPECT_EQ(ReadFile(State()), state);
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, ATableNeedsTheReplicasDataDir) {
  auto src = Run({"create-source", "u1", "--table", "--schema", "k:int64"});
  EXPECT_EQ(src.exit, 1) << Describe(src);
  EXPECT_TRUE(Contains(src.err, "refused: create-source u1: the replica refused CreateDataflow"))
      << Describe(src);
  EXPECT_TRUE(Contains(src.err, "--data-dir")) << Describe(src);
  EXPECT_FALSE(Contains(ReadFile(State()), "\"u1\"")) << "a refused command is not recorded";
}

// --csv and --jsonl are recorded as absolute paths (normalized) and read by the replica.
TEST_F(Ctl, CsvAndJsonLinesSourcesAreRecordedWithAbsolutePathsAndRead) {
  dir_.Write("orders.csv", "id,item\n1,apple\n2,\"pear, green\"\n");
  dir_.Write("events.jsonl", "{\"k\":1,\"v\":\"a\"}\n{\"k\":2}\n");
  const std::string relative =
      std::filesystem::relative(dir_.File("orders.csv")).string();  // from the test's directory
  auto csv = Run({"create-source", "u1", "--csv", relative, "--schema", "id:int64,item:string",
                  "--upsert-key", "id"});
  ASSERT_EQ(csv.exit, 0) << Describe(csv) << sup_.Log();
  EXPECT_TRUE(Contains(ReadFile(State()),
                       R"("source":{"csv":{"path":")" + dir_.File("orders.csv") + "\"}}"))
      << ReadFile(State());
  auto jsonl = Run({"create-source", "u2", "--jsonl", dir_.File("events.jsonl"), "--schema",
                    "k:int64,v:string?"});
  ASSERT_EQ(jsonl.exit, 0) << Describe(jsonl) << sup_.Log();
  EXPECT_TRUE(Contains(ReadFile(State()),
                       R"("source":{"json_lines":{"path":")" + dir_.File("events.jsonl") + "\"}}"))
      << ReadFile(State());
  CtlResult p1, p2;
  EXPECT_TRUE(Eventually(
      [&] {
        p1 = Run({"--json", "peek", "u1"});
        return p1.exit == 0 && Contains(p1.out, R"({"row":[2,"pear, green"],"count":1})");
      },
      10s))
      << Describe(p1) << sup_.Log();
  EXPECT_TRUE(Contains(p1.out, R"({"row":[1,"apple"],"count":1})")) << p1.out;
  EXPECT_TRUE(Eventually(
      [&] {
        p2 = Run({"--json", "peek", "u2"});
        return p2.exit == 0 && Contains(p2.out, R"({"row":[2,null],"count":1})");
      },
      10s))
      << Describe(p2) << sup_.Log();
  EXPECT_TRUE(Contains(p2.out, R"({"row":[1,"a"],"count":1})")) << p2.out;
}

// --upsert-key on a log source: S lines replace the row with their key, D lines delete it.
TEST_F(Ctl, AnUpsertLogSourceTakesSAndDLines) {
  dir_.Write("upserts.log", "S 1 1 \"a\"\nS 1 2 \"b\"\nD 2 2\nS 2 1 \"c\"\nP 3\n");
  auto log = Run({"create-source", "u1", "--log", dir_.File("upserts.log"), "--schema",
                  "k:int64,v:string", "--upsert-key", "k"});
  ASSERT_EQ(log.exit, 0) << Describe(log) << sup_.Log();
  EXPECT_TRUE(Contains(log.out, "created source u1 with index s1 (key k), upsert key k"))
      << log.out;
  auto at1 = Run({"--json", "peek", "u1", "--at", "1"});
  ASSERT_EQ(at1.exit, 0) << Describe(at1) << sup_.Log();
  EXPECT_TRUE(Contains(at1.out, R"("rows":[{"row":[1,"a"],"count":1},{"row":[2,"b"],"count":1}])"))
      << at1.out;
  auto at2 = Run({"--json", "peek", "u1", "--at", "2"});
  ASSERT_EQ(at2.exit, 0) << Describe(at2) << sup_.Log();
  EXPECT_TRUE(Contains(at2.out, R"("rows":[{"row":[1,"c"],"count":1}])")) << at2.out;
}

// Read your writes through several replicas (controller/write_ledger.h), the rules alone: a replica
// answers for a table only once it acknowledged every write of the state file to it, and from
// the latest time it acknowledged one at.
TEST(WriteLedger, AReplicaAnswersForATableOnceItAcknowledgedEveryWriteToIt) {
  const std::string a = "tcp://a:1", b = "tcp://b:2", c = "tcp://c:3";
  controller::WriteLedger ledger;
  controller::Apply(ledger, "u1", {"w1", {{a, 100}, {b, 120}}, {a, b}});
  auto readers = controller::ReadersOf(ledger, {"u1"}, {a, b, c});
  EXPECT_TRUE(readers.restricted);
  EXPECT_EQ(readers.floors, (std::map<std::size_t, Time>{{0, 100}, {1, 120}}));
  ASSERT_EQ(readers.left_out.count(2), 1u);
  EXPECT_TRUE(Contains(readers.left_out.at(2), "none of this state file's writes to u1"))
      << readers.left_out.at(2);
  // A write B did not acknowledge (sent through A alone) leaves it out until a retry of that
  // write is acknowledged by B — a retry through B alone, which leaves A as it was.
  controller::Apply(ledger, "u1", {"w2", {{a, 130}}, {a, b}});
  readers = controller::ReadersOf(ledger, {"u1"}, {a, b});
  EXPECT_EQ(readers.floors, (std::map<std::size_t, Time>{{0, 130}}));
  ASSERT_EQ(readers.left_out.count(1), 1u);
  EXPECT_TRUE(Contains(readers.left_out.at(1), "did not acknowledge write w2 to u1"))
      << readers.left_out.at(1);
  controller::Apply(ledger, "u1", {"w2", {{b, 150}}, {a, b}});
  readers = controller::ReadersOf(ledger, {"u1"}, {a, b});
  EXPECT_EQ(readers.floors, (std::map<std::size_t, Time>{{0, 130}, {1, 150}}));
  EXPECT_TRUE(readers.left_out.empty());
  // A floor only rises.
  controller::Apply(ledger, "u1", {"w3", {{a, 90}, {b, 160}}, {a, b}});
  EXPECT_EQ(ledger.at("u1").at(a).floor, 130u);
  EXPECT_EQ(ledger.at("u1").at(b).floor, 160u);
  // A replica first sent a write after others were lacks those for good.
  controller::Apply(ledger, "u2", {"w4", {{a, 10}}, {a}});
  controller::Apply(ledger, "u2", {"w5", {{a, 20}, {c, 25}}, {a, c}});
  const auto u2 = controller::ReadersOf(ledger, {"u2"}, {a, c});
  EXPECT_EQ(u2.floors, (std::map<std::size_t, Time>{{0, 20}}));
  ASSERT_EQ(u2.left_out.count(1), 1u);
  EXPECT_TRUE(Contains(u2.left_out.at(1), "after others were")) << u2.left_out.at(1);
  // An index over both tables: the replicas that may read both, from the later floor.
  EXPECT_EQ(controller::ReadersOf(ledger, {"u1", "u2"}, {a, b, c}).floors,
            (std::map<std::size_t, Time>{{0, 130}}));
  // A table this state file never wrote: every replica reads it.
  EXPECT_FALSE(controller::ReadersOf(ledger, {"u3"}, {a, b}).restricted);
  EXPECT_FALSE(controller::TargetsAt(controller::ReadersOf(ledger, {"u3"}, {a, b}), 5,
                                     controller::ReadAt::kLatest)
                   .only.has_value());
  readers = controller::ReadersOf(ledger, {"u1"}, {a, b});
  ASSERT_EQ(readers.floors, (std::map<std::size_t, Time>{{0, 130}, {1, 160}}));

  using Replicas = std::set<std::size_t>;
  // The latest time: every reader, each from its floor on.
  const auto latest = controller::TargetsAt(readers, 125, controller::ReadAt::kLatest);
  EXPECT_EQ(latest.only, (Replicas{0, 1}));
  EXPECT_EQ(latest.at_least, (std::map<std::size_t, std::uint64_t>{{0, 130}, {1, 160}}));
  // A time the user chose: the readers that have every write there …
  const auto exactly = controller::TargetsAt(readers, 140, controller::ReadAt::kExactly);
  EXPECT_EQ(exactly.only, (Replicas{0}));
  EXPECT_TRUE(exactly.at_least.empty());
  EXPECT_EQ(controller::TargetsAt(readers, 160, controller::ReadAt::kExactly).only,
            (Replicas{0, 1}));
  // … or, before the last write everywhere, every reader.
  EXPECT_EQ(controller::TargetsAt(readers, 120, controller::ReadAt::kExactly).only,
            (Replicas{0, 1}));
  // Probes for the latest time: every reader, at the probed time.
  const auto probe = controller::TargetsAt(readers, 5, controller::ReadAt::kProbe);
  EXPECT_EQ(probe.only, (Replicas{0, 1}));
  EXPECT_TRUE(probe.at_least.empty());
}

// tandem-ctl records a write before it sends it (missing everywhere) and its answers after: a
// crash in between leaves the replicas out of reads of the table, never silently in; a write
// known to be applied nowhere (refused everywhere, never sent) leaves nobody out.
TEST(WriteLedger, AWriteRecordedBeforeItIsSentIsMissingEverywhereUntilItsAnswers) {
  const std::string a = "tcp://a:1", b = "tcp://b:2";
  controller::WriteLedger ledger;
  controller::Apply(ledger, "u1", {"w1", {}, {a, b}});  // sent; no answer recorded (a crash, say)
  auto readers = controller::ReadersOf(ledger, {"u1"}, {a, b});
  EXPECT_TRUE(readers.restricted);
  EXPECT_TRUE(readers.floors.empty()) << "no replica is known to have w1";
  controller::Apply(ledger, "u1", {"w1", {{a, 100}, {b, 140}}, {a, b}});  // its answers
  readers = controller::ReadersOf(ledger, {"u1"}, {a, b});
  EXPECT_EQ(readers.floors, (std::map<std::size_t, Time>{{0, 100}, {1, 140}}));
  // Refused by every replica: recorded, then known to be applied nowhere.
  controller::Apply(ledger, "u1", {"w2", {}, {a, b}});
  controller::Apply(ledger, "u1", {.uuid = "w2", .applied_nowhere = true});
  readers = controller::ReadersOf(ledger, {"u1"}, {a, b});
  EXPECT_EQ(readers.floors, (std::map<std::size_t, Time>{{0, 100}, {1, 140}}));
  EXPECT_TRUE(readers.left_out.empty());
}

TEST(WriteLedger, TheTablesOfAnIndexAreThoseOfItsDataflowAndOfWhatItImports) {
  TempDir dir;
  const std::string state = dir.File("tables.state");
  WriteTableHistory(state);
  {
    // u6: an index of a view of table u1's index s1 and log source u3's index s3.
    controller::History h = *controller::History::Load(state, controller::History::Access::kWrite);
    const std::string schema = R"({"columns":[{"name":"n","type":"INT64"}]})";
    h.Append(
        FromJson(R"({"create_dataflow":{"desc":{"debug_name":"view u5","index_imports":[)"
                 R"({"id":"s1","on":"u1","schema":)" +
                 schema + R"(,"key":[0]},{"id":"s3","on":"u3","schema":)" + schema +
                 R"(,"key":[0]}],"objects_to_build":[{"id":"u5","plan":{"get":{"id":"u3"}}}],)"
                 R"("index_exports":[{"id":"u6","on":"u5","key":[0]}],"as_of":{"elements":["0"]},)"
                 R"("class":"MAINTAINED"}}})"));
    ASSERT_TRUE(h.Save().ok());
  }
  const controller::History h =
      *controller::History::Load(state, controller::History::Access::kRead);
  EXPECT_EQ(controller::TablesRead(h, "s1"), (std::set<std::string>{"u1"}));
  EXPECT_EQ(controller::TablesRead(h, "u1"), (std::set<std::string>{"u1"}));
  EXPECT_EQ(controller::TablesRead(h, "s2"), (std::set<std::string>{"u2"}));
  EXPECT_TRUE(controller::TablesRead(h, "s3").empty()) << "a log source is no table";
  EXPECT_EQ(controller::TablesRead(h, "u6"), (std::set<std::string>{"u1"}))
      << "through its import of s1";
  EXPECT_TRUE(controller::TablesRead(h, "u404").empty());
}

TEST(WriteLedger, IsKeptBesideTheStateFileAndForgetsDroppedTables) {
  TempDir dir;
  const std::string state = dir.File("s.state");
  auto none = controller::LoadWriteLedger(state);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  const std::string odd = "w\"1\n";  // a uuid is any bytes
  ASSERT_TRUE(controller::RecordWrites(
                  state, "u1", {{odd, {{"tcp://a:1", kMaxTime}}, {"tcp://a:1", "tcp://b:2"}}})
                  .ok());
  ASSERT_TRUE(
      controller::RecordWrites(state, "u2", {{"w2", {{"tcp://b:2", 7}}, {"tcp://b:2"}}}).ok());
  EXPECT_EQ(controller::WriteLedgerPath(state), state + ".writes");
  auto back = controller::LoadWriteLedger(state);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << ReadFile(state + ".writes");
  EXPECT_EQ(back->at("u1").at("tcp://a:1").floor, kMaxTime);
  EXPECT_EQ(back->at("u1").at("tcp://b:2").missing, (std::set<std::string>{odd}));
  EXPECT_EQ(back->at("u2").at("tcp://b:2").floor, 7u);
  ASSERT_TRUE(controller::ForgetTables(state, {"u2"}).ok());
  back = controller::LoadWriteLedger(state);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->count("u1"), 0u);
  EXPECT_EQ(back->count("u2"), 1u);
  ASSERT_TRUE(controller::ForgetTables(state, {}).ok());
  EXPECT_FALSE(std::filesystem::exists(state + ".writes")) << "an empty ledger is no file";
  // A damaged file is refused, naming it and the line.
  dir.Write("s.state.writes", "{\"table\":\"u1\",\"endpoint\":\"tcp://a:1\",\"floor\":\"x\"}\n");
  auto bad = controller::LoadWriteLedger(state);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), state + ".writes:1: floor \"x\" is not a time"))
      << bad.status().message();
}

}  // namespace
}  // namespace tandem::testing
