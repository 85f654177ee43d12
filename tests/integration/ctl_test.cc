// tandem-ctl (tools/ctl), the real binary, against a real replica (tandem-supervisor with
// tandem-worker): every subcommand, its output and exit status, including the error paths
// (unreachable endpoint, refused command, unknown id, bad usage), and that a later invocation
// replays the history without rebuilding anything.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "tools/ctl/ctl.h"

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
  ctl::History h = *ctl::History::Load(dir.File("none"));
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
  h = ctl::History();  // lets go of the state file (and its lock)
  auto back = ctl::History::Load(dir.File("none"));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->commands().size(), 3u);
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
  EXPECT_EQ(ctl::ParseDatum("12", &schema->columns(1))->string(), "12");
  EXPECT_TRUE(ctl::ParseDatum("null", &schema->columns(1))->has_null());
  EXPECT_EQ(ctl::DatumJson(*ctl::ParseDatum("a\"b", nullptr)), "\"a\\\"b\"");
  EXPECT_EQ(ctl::DatumText(*ctl::ParseDatum("2", &schema->columns(3))), "2.0");
}

TEST(CtlHistory, ASecondTandemCtlOnTheSameStateFileIsRefusedAndChangesNothing) {
  TempDir dir;
  const std::string state = dir.File("state");
  {
    ctl::History h = *ctl::History::Load(state);
    h.Append(FromJson(R"({"allow_compaction":{"id":"u2","frontier":{"elements":["3"]}}})"));
    ASSERT_TRUE(h.Save().ok());
  }
  const std::string before = ReadFile(state);
  {
    auto first = ctl::History::Load(state);  // this test is "the first tandem-ctl" now
    ASSERT_TRUE(first.ok());
    auto second = ctl::History::Load(state);
    ASSERT_FALSE(second.ok());
    EXPECT_TRUE(Contains(second.status().message(), "pid " + std::to_string(getpid())))
        << second.status().message();
    const auto r = RunCtl({"--state", state, "create-source", "u9", "--generator", "counter"});
    EXPECT_EQ(r.exit, 1) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "another tandem-ctl")) << Describe(r);
    EXPECT_EQ(ReadFile(state), before);
  }  // the first history is gone, and with it the lock
  auto reader = ctl::History::Load(state);
  ASSERT_TRUE(reader.ok());
  reader->ReleaseLock();  // what peek, frontiers and watch do: they never save
  EXPECT_TRUE(ctl::History::Load(state).ok()) << "a read-only invocation keeps nobody out";
  EXPECT_EQ(reader->Save().code(), StatusCode::kFailedPrecondition);
}

TEST(CtlUsage, UnreachableEndpointExits69WithAClearMessage) {
  TempDir dir;
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(FreePort());
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"frontiers"}, {"peek", "u1", "--at", "1"}, {"drop", "u1"}}) {
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
        {"--state", state, "create-source", "u1", "--log", "/x", "--schema", "k:decimal"},
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
  EXPECT_TRUE(Contains(help.out, "PENDING source")) << help.out;
}

TEST_F(Ctl, LogSourceIndexPeeksAndASecondInvocationReplaysWithoutRebuilding) {
  dir_.Write("data.log", "U 0 1 1 10\nU 0 1 2 20\nU 3 1 3 30\nU 4 -1 1 10\nP 5\n");
  auto src =
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"});
  ASSERT_EQ(src.exit, 0) << Describe(src);
  EXPECT_TRUE(Contains(ReadFile(State()), "tandem-ctl:pending-source"));
  auto dup = Run({"create-source", "u1", "--generator", "counter"});
  EXPECT_EQ(dup.exit, 1) << Describe(dup);
  EXPECT_TRUE(Contains(dup.err, "tandem-ctl: refused: create-source u1: ")) << Describe(dup);

  auto idx = Run({"create-index", "u2", "--on", "u1", "--key", "k"});
  ASSERT_EQ(idx.exit, 0) << Describe(idx) << sup_.Log();
  EXPECT_TRUE(Contains(idx.out, "created index u2 on u1")) << idx.out;
  EXPECT_FALSE(Contains(ReadFile(State()), "pending-source")) << "u1 became part of u2's dataflow";

  const double kept_before = Metric(kKept);
  const double built_before = Metric(kBuilt);
  auto at3 = Run({"peek", "u2", "--at", "3"});
  ASSERT_EQ(at3.exit, 0) << Describe(at3) << sup_.Log();
  EXPECT_TRUE(Contains(at3.out, "k  v   count\n")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, "1  10  1\n")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, "3  30  1\n")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, "(3 rows of u2 at time 3, ")) << at3.out;
  EXPECT_TRUE(Contains(at3.out, " ms)")) << at3.out;
  // The second invocation replayed the history: the dataflow was kept, nothing rebuilt.
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
        return later.exit == 0 && Contains(later.out, "\"timestamp\":7");
      },
      10s))
      << Describe(later);
  EXPECT_TRUE(Contains(later.out, "{\"row\":[9,90],\"count\":1}")) << later.out;
  EXPECT_EQ(Metric(kBuilt), built_before);
  // u2's frontier (8) is not reported again to a new controller: `frontiers` probes it.
  auto frontiers = Run({"frontiers", "u2", "--for", "0.2"});
  ASSERT_EQ(frontiers.exit, 0) << Describe(frontiers);
  EXPECT_TRUE(Contains(frontiers.out, "\nu2  8      8      8       ")) << frontiers.out;
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

TEST_F(Ctl, RefusedCommandsAndUnknownIdsExit1WithTheReason) {
  auto unknown_source = Run({"create-index", "u9", "--on", "u77", "--key", "0"});
  EXPECT_EQ(unknown_source.exit, 1) << Describe(unknown_source);
  EXPECT_TRUE(Contains(unknown_source.err, "tandem-ctl: refused: CreateDataflow: "))
      << Describe(unknown_source);
  EXPECT_TRUE(Contains(unknown_source.err, "u77")) << Describe(unknown_source);
  EXPECT_FALSE(Contains(ReadFile(State()), "u9")) << "a refused command is not recorded";

  auto unknown_peek = Run({"peek", "u42", "--at", "1"});
  EXPECT_EQ(unknown_peek.exit, 1) << Describe(unknown_peek);
  EXPECT_TRUE(Contains(unknown_peek.err, "tandem-ctl: refused: Peek: ")) << Describe(unknown_peek);
  EXPECT_TRUE(Contains(unknown_peek.err, "unknown index u42")) << Describe(unknown_peek);

  auto unknown_latest = Run({"--timeout", "1", "peek", "u42"});
  EXPECT_EQ(unknown_latest.exit, 1) << Describe(unknown_latest);
  EXPECT_TRUE(Contains(unknown_latest.err, "unknown index u42")) << Describe(unknown_latest);

  auto compaction = Run({"allow-compaction", "u42", "3"});
  EXPECT_EQ(compaction.exit, 1) << Describe(compaction);
  EXPECT_TRUE(Contains(compaction.err, "tandem-ctl: refused: AllowCompaction: "))
      << Describe(compaction);

  auto drop = Run({"drop", "u42"});
  EXPECT_EQ(drop.exit, 1) << Describe(drop);
  EXPECT_TRUE(Contains(drop.err, "unknown id u42")) << Describe(drop);

  auto bad_key = Run({"create-source", "u1", "--generator", "key_value", "--keys", "0"});
  EXPECT_EQ(bad_key.exit, 1) << Describe(bad_key);
  EXPECT_TRUE(Contains(bad_key.err, "keys is 0")) << Describe(bad_key);

  // A peek answered with an error (below since after compaction).
  dir_.Write("data.log", "U 0 1 1 10\nP 5\n");
  ASSERT_EQ(
      Run({"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64?"})
          .exit,
      0);
  ASSERT_EQ(Run({"create-index", "u2", "--on", "u1", "--key", "0"}).exit, 0);
  auto compact = Run({"allow-compaction", "u2", "3"});
  ASSERT_EQ(compact.exit, 0) << Describe(compact);
  auto below = Run({"peek", "u2", "--at", "1"});
  EXPECT_EQ(below.exit, 1) << Describe(below);
  EXPECT_TRUE(Contains(below.err, "tandem-ctl: refused: peek u2 @ 1: ")) << Describe(below);
  auto above = Run({"peek", "u2", "--at", "3"});
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
  EXPECT_TRUE(Contains(view.out, "created view u3 on u1 with index u4 (key g)")) << view.out;
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
  EXPECT_TRUE(Contains(one.out, "{\"id\":\"u11\",\"write\":{\"elements\":[\"")) << one.out;
  EXPECT_FALSE(Contains(one.out, "\"u10\"")) << one.out;
  auto latest = Run({"peek", "u11", "--limit", "1", "--order-by", "n:desc"});
  ASSERT_EQ(latest.exit, 0) << Describe(latest);
  EXPECT_TRUE(Contains(latest.out, "(1 row of u11 at time ")) << latest.out;

  auto watch = Run({"--json", "watch", "--for", "1"});
  ASSERT_EQ(watch.exit, 0) << Describe(watch);
  EXPECT_TRUE(Contains(watch.out, "{\"status\":{\"reconciled\":{\"kept\":2,")) << watch.out;
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
  EXPECT_TRUE(Contains(run.err, "tandem-ctl: refused: AllowCompaction: ")) << Describe(run);
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
  auto gone = Run({"peek", "u4", "--at", "2"});
  EXPECT_EQ(gone.exit, 1) << Describe(gone);
  EXPECT_TRUE(Contains(gone.err, "unknown index u4")) << Describe(gone);
  // A pending source is dropped locally.
  ASSERT_EQ(Run({"create-source", "u20", "--generator", "counter"}).exit, 0);
  EXPECT_EQ(Run({"drop", "u20"}).exit, 0);
  EXPECT_FALSE(Contains(ReadFile(State()), "u20"));
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

}  // namespace
}  // namespace tandem::testing
