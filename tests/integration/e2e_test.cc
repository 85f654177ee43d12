// End to end: the product used the way its users use it — a real tandem-supervisor with real
// tandem-worker runtimes, driven only through the real tandem-ctl and inspected only through the
// real tandem-shm (issue 5's acceptance 1-4): the demo's scenario, tandem-shm agreeing with
// tandem-ctl, a post-mortem on a segment kept after a crash, and the inspector run in a loop
// against a replica under load without causing a wrong answer or a crash.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

namespace gpb = google::protobuf;

// A temporary directory for tandem-ctl's state file and the log sources; removed at the end.

// One JSON document (tandem-ctl and tandem-shm print one per line with --json).
std::optional<gpb::Struct> ParseJson(const std::string& text) {
  gpb::Struct doc;
  if (!gpb::util::JsonStringToMessage(text, &doc).ok()) return std::nullopt;
  return doc;
}

// The non-empty lines of `text`.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// A JSON value in one canonical text form, so a row printed by tandem-ctl and the same row
// printed by tandem-shm compare equal (numbers that are integers print as integers).
std::string Canonical(const gpb::Value& v) {
  switch (v.kind_case()) {
    case gpb::Value::kNullValue:
      return "null";
    case gpb::Value::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case gpb::Value::kNumberValue: {
      const double d = v.number_value();
      if (std::floor(d) == d && std::fabs(d) < 1e15) {
        return std::to_string(static_cast<long long>(d));
      }
      std::ostringstream out;
      out.precision(17);
      out << d;
      return out.str();
    }
    case gpb::Value::kStringValue:
      return "\"" + v.string_value() + "\"";
    case gpb::Value::kListValue: {
      std::string s = "[";
      for (int i = 0; i < v.list_value().values_size(); ++i) {
        if (i) s += ",";
        s += Canonical(v.list_value().values(i));
      }
      return s + "]";
    }
    case gpb::Value::kStructValue: {
      std::string s = "{";
      for (const auto& [k, field] : std::map<std::string, gpb::Value>(
               v.struct_value().fields().begin(), v.struct_value().fields().end())) {
        if (s.size() > 1) s += ",";
        s += "\"" + k + "\":" + Canonical(field);
      }
      return s + "}";
    }
    default:
      return "?";
  }
}

const gpb::Value& Field(const gpb::Struct& doc, const std::string& name) {
  static const gpb::Value kMissing;
  auto it = doc.fields().find(name);
  return it == doc.fields().end() ? kMissing : it->second;
}
const gpb::ListValue& List(const gpb::Struct& doc, const std::string& name) {
  return Field(doc, name).list_value();
}
double Number(const gpb::Struct& doc, const std::string& name) {
  return Field(doc, name).number_value();
}

// Rows with their counts: canonical row text → count (a multiset).
using Rows = std::map<std::string, std::int64_t>;

std::string Show(const Rows& rows) {
  std::string s;
  for (const auto& [row, count] : rows) s += "  " + row + " x" + std::to_string(count) + "\n";
  return s.empty() ? "  (none)\n" : s;
}

// `tandem-ctl --json peek` → its rows ({"row": [...], "count": n}).
Rows PeekRows(const gpb::Struct& peek) {
  Rows rows;
  for (const auto& r : List(peek, "rows").values()) {
    const auto& row = r.struct_value();
    rows[Canonical(Field(row, "row"))] += static_cast<std::int64_t>(Number(row, "count"));
  }
  return rows;
}

// `tandem-shm --json dump` → its rows ({"ordinal": i, "key": [...], "val": [...], "count": n});
// the value is the whole row, as a peek prints it.
Rows DumpRows(const gpb::Struct& dump) {
  Rows rows;
  for (const auto& r : List(dump, "rows").values()) {
    const auto& row = r.struct_value();
    rows[Canonical(Field(row, "val"))] += static_cast<std::int64_t>(Number(row, "count"));
  }
  return rows;
}

// The ordinals tandem-shm's `slots --json` lists `id` on, with their uppers.
std::map<int, std::string> SlotUppers(const gpb::Struct& slots, const std::string& id) {
  std::map<int, std::string> uppers;
  for (const auto& s : List(slots, "slots").values()) {
    const auto& slot = s.struct_value();
    if (Field(slot, "id").string_value() != id) continue;
    uppers[static_cast<int>(Number(slot, "ordinal"))] = Canonical(Field(slot, "upper"));
  }
  return uppers;
}

// A real replica (two runtimes, two workers each, real tandem-worker) and the two tools.
class E2e : public ::testing::Test {
 protected:
  static SupervisorOptions Options(std::vector<std::string> extra = {}) {
    SupervisorOptions o;
    o.extra_args = std::move(extra);
    o.two_runtime = true;
    o.workers = 2;
    o.worker_binary = TANDEM_WORKER_BIN;
    o.shm_size = "128MiB";
    return o;
  }

  // tandem-ctl against `sup`, with this test's state file.
  BinaryRun Ctl(SupervisorProcess& sup, std::vector<std::string> args) {
    args.insert(args.begin(),
                {"--endpoint", sup.controller_endpoint(), "--state", dir_.File("ctl.state")});
    return RunBinary(TANDEM_CTL_BIN, args);
  }
  // tandem-ctl with --json, its output parsed (one document, the last line).
  std::optional<gpb::Struct> CtlJson(SupervisorProcess& sup, std::vector<std::string> args,
                                     BinaryRun* run = nullptr) {
    args.insert(args.begin(), "--json");
    BinaryRun r = Ctl(sup, std::move(args));
    std::optional<gpb::Struct> doc;
    if (r.exit == 0 && !Lines(r.out).empty()) doc = ParseJson(Lines(r.out).back());
    if (run) *run = std::move(r);
    return doc;
  }
  static BinaryRun Shm(const std::vector<std::string>& args) {
    return RunBinary(TANDEM_SHM_BIN, args);
  }
  static std::optional<gpb::Struct> ShmJson(std::vector<std::string> args,
                                            BinaryRun* run = nullptr) {
    args.push_back("--json");
    BinaryRun r = Shm(args);
    std::optional<gpb::Struct> doc;
    if (r.exit == 0) doc = ParseJson(r.out);
    if (run) *run = std::move(r);
    return doc;
  }

  // SIGTERM → exit 0, both runtimes gone, nothing left in /dev/shm or the runtime directory.
  static void ShutDownCleanly(SupervisorProcess& sup) {
    const std::vector<pid_t> runtimes = sup.runtime_pids();
    ASSERT_EQ(kill(sup.pid(), SIGTERM), 0);
    EXPECT_EQ(sup.WaitExit(20s), std::optional<int>(0)) << sup.Log();
    EXPECT_FALSE(sup.SegmentExists()) << "/dev/shm/" << sup.segment() << " was left behind";
    EXPECT_TRUE(sup.RuntimeDirEmpty());
    for (pid_t p : runtimes) {
      EXPECT_TRUE(Eventually([&] { return ProcessGone(p); }, 5s)) << "runtime " << p;
    }
  }

  TempDir dir_;
};

// ---------------------------------------------------------------------------------------------
// 1. tools/demo.sh's scenario, through the real tandem-ctl and tandem-shm.

TEST_F(E2e, DemoScenarioThroughTandemCtl) {
  SupervisorProcess sup(Options());
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  ASSERT_EQ(sup.runtime_pids().size(), 2u) << "a two-runtime replica";

  // The demo's dataflows, scaled down for a shared 2-core machine: 10 ms ticks, so the indexes
  // (never compacted here) stay far below the segment however slowly a sanitizer run goes — were
  // it to fill, the sources would pause and `latest` stop rising.
  constexpr int kKeys = 2000;
  auto r =
      Ctl(sup, {"create-source", "u1", "--generator", "key_value", "--keys", std::to_string(kKeys),
                "--updates-per-tick", "20", "--tick-interval-us", "10000", "--seed", "7"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  r = Ctl(sup,
          {"create-view", "u2", "--on", "u1", "--aggregate", "count", "--aggregate", "sum:value",
           "--aggregate", "min:value", "--aggregate", "max:value", "--index-id", "u3"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();
  EXPECT_NE(r.out.find("created view u2 on u1 with index u3"), std::string::npos) << r.out;
  r = Ctl(sup, {"create-source", "u4", "--generator", "key_value", "--keys", "1000",
                "--updates-per-tick", "10", "--tick-interval-us", "10000", "--seed", "11"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  r = Ctl(sup, {"create-index", "u5", "--on", "u4", "--key", "key"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();
  EXPECT_NE(r.out.find("created index u5 on u4 (key key)"), std::string::npos) << r.out;

  // Until both indexes have a complete time (as the demo waits).
  ASSERT_TRUE(Eventually(
      [&] {
        return Ctl(sup, {"peek", "u5", "--key", "42"}).exit == 0 &&
               Ctl(sup, {"peek", "u3"}).exit == 0;
      },
      30s))
      << sup.Log();

  // Peeks while maintenance runs: the view always counts every key once; time moves on and the
  // results change.
  double last_time = -1;
  std::set<std::string> view_rows, key42_rows;
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(300ms);
    BinaryRun run;
    auto view = CtlJson(sup, {"peek", "u2", "--at", "latest"}, &run);
    ASSERT_TRUE(view) << DescribeRun(run) << sup.Log();
    EXPECT_EQ(Field(*view, "id").string_value(), "u3") << "the view's id reads its index";
    const double t = Number(*view, "time");
    EXPECT_GT(t, last_time) << "successive `peek --at latest` times rise";
    last_time = t;
    ASSERT_EQ(List(*view, "rows").values_size(), 1) << run.out;
    const auto& row = List(*view, "rows").values(0).struct_value();
    EXPECT_EQ(Number(row, "count"), 1) << run.out;
    const auto& cols = Field(row, "row").list_value();
    ASSERT_EQ(cols.values_size(), 4) << run.out;
    EXPECT_EQ(cols.values(0).number_value(), kKeys) << "the view's count is the number of keys\n"
                                                    << run.out;
    EXPECT_LE(cols.values(2).number_value(), cols.values(3).number_value()) << run.out;
    view_rows.insert(Canonical(Field(row, "row")));

    auto point = CtlJson(sup, {"peek", "u5", "--key", "42"}, &run);
    ASSERT_TRUE(point) << DescribeRun(run);
    const Rows rows = PeekRows(*point);
    ASSERT_EQ(rows.size(), 1u) << run.out;
    EXPECT_EQ(rows.begin()->first.rfind("[42,", 0), 0u) << run.out;
    EXPECT_EQ(rows.begin()->second, 1) << run.out;
    key42_rows.insert(rows.begin()->first);

    // The readable table form, as the demo shows it.
    r = Ctl(sup, {"peek", "u2"});
    ASSERT_EQ(r.exit, 0) << DescribeRun(r);
    EXPECT_NE(r.out.find("count"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(1 row of u3 at time "), std::string::npos) << r.out;
  }
  EXPECT_GT(view_rows.size(), 1u) << "the view's sum/min/max change while maintenance runs";

  // The sharing registry: both indexes, on every worker ordinal.
  BinaryRun run;
  auto slots = ShmJson({"slots", sup.segment()}, &run);
  ASSERT_TRUE(slots) << DescribeRun(run);
  for (const std::string id : {"u3", "u5"}) {
    const auto uppers = SlotUppers(*slots, id);
    EXPECT_EQ(uppers.size(), 2u) << id << " on both ordinals\n" << run.out;
    EXPECT_TRUE(uppers.contains(0) && uppers.contains(1)) << id << "\n" << run.out;
  }
  r = Shm({"slots", sup.segment()});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  EXPECT_NE(r.out.find("\nu3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nu5 "), std::string::npos) << r.out;

  // The supervisor counted the peeks it relayed (the demo shows this excerpt of /metrics).
  const std::string metrics = HttpGet(sup.http_port(), "/metrics").body;
  EXPECT_NE(metrics.find("tandem_peek_latency_seconds_count"), std::string::npos) << metrics;
  EXPECT_FALSE(sup.Exited()) << sup.Log();

  ShutDownCleanly(sup);
}

// ---------------------------------------------------------------------------------------------
// 2. tandem-shm dump/slots agree with tandem-ctl peek/frontiers on the same index and time.

// A deterministic log: key k has one current value, some rows have multiplicity 2, a nullable
// string column. Returns the log text for times [from, to) and keeps `state` (row → count) and
// `history` (the state after each time) up to date.
struct LogModel {
  std::map<std::int64_t, std::string> current;  // key → row text as the log writes it
  Rows state;                                   // canonical row → count
  std::map<std::int64_t, Rows> at;              // time → state after that time

  static std::string LogRow(std::int64_t k, std::int64_t v) {
    const std::string s = v % 5 == 0 ? "null" : "\"n " + std::to_string(v % 17) + "\"";
    return std::to_string(k) + " " + std::to_string(v) + " " + s;
  }
  static std::string CanonicalRow(std::int64_t k, std::int64_t v) {
    const std::string s = v % 5 == 0 ? "null" : "\"n " + std::to_string(v % 17) + "\"";
    return "[" + std::to_string(k) + "," + std::to_string(v) + "," + s + "]";
  }
  std::string Times(int from, int to, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string log;
    std::map<std::int64_t, std::int64_t> value;
    for (const auto& [k, row] : current) value[k] = std::stoll(row.substr(row.find(' ') + 1));
    for (int t = from; t < to; ++t) {
      const int changes = t == 0 ? 60 : 12;
      for (int j = 0; j < changes; ++j) {
        const std::int64_t k = t == 0 ? j : static_cast<std::int64_t>(rng() % 60);
        const std::int64_t v = static_cast<std::int64_t>(rng() % 1000);
        if (value.contains(k)) {
          if (value[k] == v) continue;
          const std::int64_t mult = state[CanonicalRow(k, value[k])];
          log += "U " + std::to_string(t) + " " + std::to_string(-mult) + " " +
                 LogRow(k, value[k]) + "\n";
          state.erase(CanonicalRow(k, value[k]));
        }
        const int mult = k % 7 == 3 ? 2 : 1;
        log += "U " + std::to_string(t) + " " + std::to_string(mult) + " " + LogRow(k, v) + "\n";
        state[CanonicalRow(k, v)] += mult;
        value[k] = v;
        current[k] = LogRow(k, v);
      }
      at[t] = state;
    }
    return log + "P " + std::to_string(to) + "\n";
  }
};

TEST_F(E2e, ShmDumpAgreesWithCtlPeek) {
  SupervisorProcess sup(Options());
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  LogModel model;
  dir_.Write("data.log", model.Times(0, 12, 1));
  auto r = Ctl(sup, {"create-source", "u1", "--log", dir_.File("data.log"), "--schema",
                     "k:int64,v:int64,s:string?"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  r = Ctl(sup, {"create-index", "u2", "--on", "u1", "--key", "k"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();

  auto agree_at = [&](int t) {
    SCOPED_TRACE("time " + std::to_string(t));
    BinaryRun peek_run, dump_run;
    auto peek = CtlJson(sup, {"peek", "u2", "--at", std::to_string(t)}, &peek_run);
    ASSERT_TRUE(peek) << DescribeRun(peek_run) << sup.Log();
    auto dump = ShmJson({"dump", sup.segment(), "u2", "--at", std::to_string(t)}, &dump_run);
    ASSERT_TRUE(dump) << DescribeRun(dump_run);
    EXPECT_EQ(Number(*dump, "time"), t);
    EXPECT_EQ(List(*dump, "ordinals").values_size(), 2) << "every ordinal\n" << dump_run.out;
    EXPECT_EQ(List(*dump, "errors").values_size(), 0) << dump_run.out;
    EXPECT_FALSE(Field(*dump, "truncated").bool_value());
    std::set<int> ordinals_with_rows;
    for (const auto& row : List(*dump, "rows").values()) {
      ordinals_with_rows.insert(static_cast<int>(Number(row.struct_value(), "ordinal")));
    }
    EXPECT_EQ(ordinals_with_rows.size(), 2u) << "60 keys spread over both ordinals";
    const Rows from_ctl = PeekRows(*peek), from_shm = DumpRows(*dump);
    EXPECT_EQ(from_ctl, from_shm) << "tandem-ctl peek:\n"
                                  << Show(from_ctl) << "tandem-shm dump:\n"
                                  << Show(from_shm);
    EXPECT_EQ(from_ctl, model.at[t]) << "tandem-ctl peek:\n"
                                     << Show(from_ctl) << "expected:\n"
                                     << Show(model.at[t]);
  };
  // Uppers: what tandem-ctl's `frontiers` reports is what tandem-shm's `slots` shows.
  auto uppers_agree = [&](int upper) {
    SCOPED_TRACE("upper " + std::to_string(upper));
    const std::string expected = std::to_string(upper);  // a time: a JSON number
    BinaryRun run;
    std::map<int, std::string> uppers;
    ASSERT_TRUE(Eventually(
        [&] {
          auto slots = ShmJson({"slots", sup.segment()}, &run);
          if (!slots) return false;
          uppers = SlotUppers(*slots, "u2");
          return uppers == std::map<int, std::string>{{0, expected}, {1, expected}};
        },
        20s))
        << DescribeRun(run) << sup.Log();
    auto frontiers = CtlJson(sup, {"frontiers", "u2", "--for", "0.2"}, &run);
    ASSERT_TRUE(frontiers) << DescribeRun(run);
    ASSERT_EQ(List(*frontiers, "frontiers").values_size(), 1) << run.out;
    const auto& f = List(*frontiers, "frontiers").values(0).struct_value();
    EXPECT_EQ(Field(f, "id").string_value(), "u2") << run.out;
    EXPECT_EQ(Canonical(Field(f, "write")), expected) << run.out;
    EXPECT_FALSE(Field(f, "closed").bool_value()) << run.out;
    r = Shm({"slots", sup.segment()});
    ASSERT_EQ(r.exit, 0) << DescribeRun(r);
    EXPECT_NE(r.out.find("[" + std::to_string(upper) + "]"), std::string::npos) << r.out;
  };

  uppers_agree(12);
  for (int t : {0, 1, 4, 7, 11}) agree_at(t);

  // The log grows: both move on together, and the older times still agree.
  dir_.Write("data.log", model.Times(12, 16, 2), /*append=*/true);
  uppers_agree(16);
  for (int t : {3, 12, 15}) agree_at(t);
  EXPECT_FALSE(sup.Exited()) << sup.Log();
  ShutDownCleanly(sup);
}

// ---------------------------------------------------------------------------------------------
// 3. A crash with --keep-segment-on-crash leaves the segment; tandem-shm reads it; gc removes it.

TEST_F(E2e, PostMortemAfterCrashWithKeepSegment) {
  SupervisorProcess sup(Options({"--keep-segment-on-crash"}));
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  dir_.Write("data.log", "U 0 1 1 10\nU 0 1 2 20\nU 1 1 3 30\nU 2 -1 1 10\nU 2 1 1 11\nP 4\n");
  auto r = Ctl(
      sup, {"create-source", "u1", "--log", dir_.File("data.log"), "--schema", "k:int64,v:int64"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  r = Ctl(sup, {"create-index", "u2", "--on", "u1", "--key", "k"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();
  r = Ctl(sup, {"peek", "u2", "--at", "3"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();
  const Rows expected = {{"[1,11]", 1}, {"[2,20]", 1}, {"[3,30]", 1}};

  // The maintenance runtime is the first in the header; tandem-shm agrees.
  BinaryRun run;
  auto info = ShmJson({"info", sup.segment()}, &run);
  ASSERT_TRUE(info) << DescribeRun(run);
  ASSERT_GE(sup.runtime_pids().size(), 2u);
  const pid_t maintenance = sup.runtime_pids()[0];
  const auto& first = List(*info, "runtimes").values(0).struct_value();
  EXPECT_EQ(Field(first, "role").string_value(), "maintenance") << run.out;
  EXPECT_EQ(Number(first, "pid"), maintenance) << run.out;

  ASSERT_EQ(kill(maintenance, SIGKILL), 0);
  ASSERT_EQ(sup.WaitExit(20s), std::optional<int>(137)) << sup.Log();
  EXPECT_NE(sup.Log().find("killed by signal 9"), std::string::npos) << sup.Log();
  for (pid_t p : sup.runtime_pids()) {
    EXPECT_TRUE(Eventually([&] { return ProcessGone(p); }, 5s)) << "runtime " << p;
  }
  ASSERT_TRUE(sup.SegmentExists()) << "--keep-segment-on-crash keeps it";

  info = ShmJson({"info", sup.segment()}, &run);
  ASSERT_TRUE(info) << DescribeRun(run);
  EXPECT_FALSE(Field(*info, "supervisor_alive").bool_value()) << run.out;
  EXPECT_EQ(Number(*info, "workers"), 2) << run.out;
  for (const auto& rt : List(*info, "runtimes").values()) {
    EXPECT_FALSE(Field(rt.struct_value(), "alive").bool_value()) << run.out;
  }
  r = Shm({"info", sup.segment()});
  EXPECT_EQ(r.exit, 0) << DescribeRun(r);

  auto slots = ShmJson({"slots", sup.segment()}, &run);
  ASSERT_TRUE(slots) << DescribeRun(run);
  EXPECT_EQ(SlotUppers(*slots, "u2"), (std::map<int, std::string>{{0, "4"}, {1, "4"}})) << run.out;
  r = Shm({"slots", sup.segment()});
  EXPECT_EQ(r.exit, 0) << DescribeRun(r);

  auto dump = ShmJson({"dump", sup.segment(), "u2", "--at", "3"}, &run);
  ASSERT_TRUE(dump) << DescribeRun(run);
  EXPECT_FALSE(Field(*dump, "supervisor_alive").bool_value());
  EXPECT_EQ(DumpRows(*dump), expected) << run.out;
  dump = ShmJson({"dump", sup.segment(), "u2", "--at", "0"}, &run);
  ASSERT_TRUE(dump) << DescribeRun(run);
  EXPECT_EQ(DumpRows(*dump), (Rows{{"[1,10]", 1}, {"[2,20]", 1}})) << run.out;
  r = Shm({"dump", sup.segment(), "u2"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  EXPECT_NE(r.out.find("post-mortem"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 rows"), std::string::npos) << r.out;

  // gc, limited to this test's segment (others' segments on this machine are not ours).
  auto listed = ShmJson({"ls", "--prefix", sup.segment()}, &run);
  ASSERT_TRUE(listed) << DescribeRun(run);
  ASSERT_EQ(List(*listed, "segments").values_size(), 1) << run.out;
  EXPECT_FALSE(
      Field(List(*listed, "segments").values(0).struct_value(), "supervisor_alive").bool_value());
  r = Shm({"gc", "--prefix", sup.segment(), "--dry-run"});
  EXPECT_EQ(r.exit, 0) << DescribeRun(r);
  EXPECT_TRUE(sup.SegmentExists()) << "--dry-run removes nothing";
  r = Shm({"gc", "--prefix", sup.segment()});
  EXPECT_EQ(r.exit, 0) << DescribeRun(r);
  EXPECT_NE(r.out.find(sup.segment()), std::string::npos) << r.out;
  EXPECT_FALSE(sup.SegmentExists()) << DescribeRun(r);
  r = Shm({"info", sup.segment()});
  EXPECT_NE(r.exit, 0) << "gone\n" << DescribeRun(r);
}

// ---------------------------------------------------------------------------------------------
// 4. tandem-shm dump and watch in a loop against a replica under load: no wrong answer, no crash.

TEST_F(E2e, InspectorUnderLoadCausesNoWrongAnswer) {
  SupervisorProcess sup(Options());
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  constexpr int kKeys = 500;
  auto r =
      Ctl(sup, {"create-source", "u1", "--generator", "key_value", "--keys", std::to_string(kKeys),
                "--updates-per-tick", "20", "--tick-interval-us", "1000", "--seed", "3"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  r = Ctl(sup, {"create-index", "u2", "--on", "u1", "--key", "key"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();
  ASSERT_TRUE(Eventually(
      [&] {
        return Ctl(sup, {"peek", "u2", "--key", "1"}).exit == 0;
      },
      30s))
      << sup.Log();

  // A key_value collection has exactly one value per key at every time: `keys` (all of them if
  // empty) each appear once, with count 1, and nothing else does.
  auto check = [&](const Rows& rows, const std::vector<int>& keys) -> std::string {
    std::map<int, int> seen;
    for (const auto& [row, count] : rows) {
      if (count != 1) return "count " + std::to_string(count) + " for " + row;
      if (row.size() < 3 || row[0] != '[') return "malformed row " + row;
      seen[std::stoi(row.substr(1))] += 1;
    }
    if (keys.empty()) {
      if (seen.size() != static_cast<std::size_t>(kKeys)) {
        return std::to_string(seen.size()) + " distinct keys, not " + std::to_string(kKeys);
      }
      for (const auto& [k, n] : seen) {
        if (n != 1) return "key " + std::to_string(k) + " has " + std::to_string(n) + " rows";
        if (k < 0 || k >= kKeys) return "key " + std::to_string(k) + " out of range";
      }
      return "";
    }
    for (int k : keys) {
      if (seen[k] != 1)
        return "key " + std::to_string(k) + " has " + std::to_string(seen[k]) + " rows";
    }
    if (seen.size() != std::set<int>(keys.begin(), keys.end()).size()) return "rows for other keys";
    return "";
  };

  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(mu);
    if (failures.size() < 20) failures.push_back(what);
  };
  std::atomic<int> dumps{0}, watches{0};
  std::thread inspector([&] {
    while (!stop) {
      BinaryRun run;
      auto dump = ShmJson({"dump", sup.segment(), "u2"}, &run);
      if (!dump) {
        fail("tandem-shm dump: " + DescribeRun(run));
      } else if (auto wrong = check(DumpRows(*dump), {}); !wrong.empty()) {
        fail("tandem-shm dump at " + Canonical(Field(*dump, "time")) + ": " + wrong);
      }
      ++dumps;
      run = Shm({"watch", sup.segment(), "--interval", "20", "--count", "3", "--json"});
      if (run.exit != 0) {
        fail("tandem-shm watch: " + DescribeRun(run));
      } else {
        const auto lines = Lines(run.out);
        if (lines.size() != 3) fail("tandem-shm watch printed " + std::to_string(lines.size()));
        for (const auto& line : lines) {
          auto frame = ParseJson(line);
          if (!frame || SlotUppers(*frame, "u2").size() != 2) fail("watch frame: " + line);
        }
      }
      ++watches;
      run = Shm({"slots", sup.segment()});
      if (run.exit != 0) fail("tandem-shm slots: " + DescribeRun(run));
    }
  });

  std::mt19937 rng(5);
  int peeks = 0;
  double last_time = -1;
  // At least 5 s, and until there are enough samples of each kind — a loaded machine runs the
  // tools slower — but never more than 60 s.
  const auto start = std::chrono::steady_clock::now();
  auto more = [&] {
    const auto now = std::chrono::steady_clock::now();
    if (now > start + 60s) return false;
    return now < start + 5s || peeks < 10 || dumps < 3 || watches < 3;
  };
  while (more()) {
    std::vector<int> keys;
    std::vector<std::string> args = {"peek", "u2", "--at", "latest"};
    if (peeks % 5 != 4) {  // every fifth peek reads the whole index
      for (int i = 0; i < 4; ++i) {
        keys.push_back(static_cast<int>(rng() % kKeys));
        args.insert(args.end(), {"--key", std::to_string(keys.back())});
      }
    }
    BinaryRun run;
    auto peek = CtlJson(sup, args, &run);
    ++peeks;
    if (!peek) {
      fail("tandem-ctl peek: " + DescribeRun(run));
      continue;
    }
    if (auto wrong = check(PeekRows(*peek), keys); !wrong.empty()) {
      fail("tandem-ctl peek at " + Canonical(Field(*peek, "time")) + ": " + wrong + "\n" + run.out);
    }
    const double t = Number(*peek, "time");
    if (t < last_time) fail("latest went back from " + std::to_string(last_time));
    last_time = t;
  }
  stop = true;
  inspector.join();

  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GE(dumps, 3);
  EXPECT_GE(watches, 3);
  EXPECT_GE(peeks, 10);
  RecordProperty("dumps", dumps.load());
  RecordProperty("peeks", peeks);
  EXPECT_FALSE(sup.Exited()) << sup.Log();
  EXPECT_EQ(HttpGet(sup.http_port(), "/readyz").status, 200);
  ShutDownCleanly(sup);
}

// ---------------------------------------------------------------------------------------------
// 5. Issue 10 item 3: a closed index (its sources ended) is readable at every time from since
//    on, and "the latest" is its final contents — in both tools.

TEST_F(E2e, AClosedIndexIsReadInFullByBothTools) {
  SupervisorProcess sup(Options());
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  auto r = Ctl(sup, {"create-source", "u6", "--generator", "counter", "--max", "3000",
                     "--tick-interval-us", "0"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  r = Ctl(sup, {"create-index", "u7", "--on", "u6", "--key", "n"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();
  // Closed: the empty frontier (null) on both ordinals, as the segment says.
  BinaryRun run;
  ASSERT_TRUE(Eventually(
      [&] {
        auto slots = ShmJson({"slots", sup.segment()}, &run);
        return slots &&
               SlotUppers(*slots, "u7") == std::map<int, std::string>{{0, "null"}, {1, "null"}};
      },
      30s))
      << DescribeRun(run) << sup.Log();
  Rows expected;
  for (int n = 1; n <= 3000; ++n) expected["[" + std::to_string(n) + "]"] = 1;

  auto peek = CtlJson(sup, {"peek", "u7"}, &run);
  ASSERT_TRUE(peek) << DescribeRun(run) << sup.Log();
  EXPECT_TRUE(Field(*peek, "closed").bool_value()) << run.out;
  EXPECT_NE(run.out.find("\"time\":18446744073709551614,"), std::string::npos) << run.out;
  EXPECT_EQ(PeekRows(*peek), expected);

  auto dump = ShmJson({"dump", sup.segment(), "u7"}, &run);
  ASSERT_TRUE(dump) << DescribeRun(run);
  EXPECT_TRUE(Field(*dump, "closed").bool_value()) << run.out;
  EXPECT_NE(run.out.find("\"time\":18446744073709551614,"), std::string::npos) << run.out;
  EXPECT_EQ(DumpRows(*dump), expected);
  for (const auto& o : List(*dump, "ordinals").values()) {
    EXPECT_EQ(Field(o.struct_value(), "upper").kind_case(), gpb::Value::kNullValue) << run.out;
  }
  r = Shm({"dump", sup.segment(), "u7", "--limit", "1"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  EXPECT_NE(r.out.find(" at time 18446744073709551614 (closed: its final contents)"),
            std::string::npos)
      << r.out;
  // An earlier time still reads what was there then, in both tools.
  peek = CtlJson(sup, {"peek", "u7", "--at", "10"}, &run);
  ASSERT_TRUE(peek) << DescribeRun(run);
  dump = ShmJson({"dump", sup.segment(), "u7", "--at", "10"}, &run);
  ASSERT_TRUE(dump) << DescribeRun(run);
  EXPECT_EQ(PeekRows(*peek).size(), 10u);
  EXPECT_EQ(PeekRows(*peek), DumpRows(*dump));
  ShutDownCleanly(sup);
}

// ---------------------------------------------------------------------------------------------
// 6. Issue 10 items 9 and 10: both tools print a datum the same way — as text in the log
//    format's syntax, and in JSON (NaN and the infinities spelled alike).

TEST_F(E2e, BothToolsPrintDatumsTheSameWay) {
  SupervisorProcess sup(Options());
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  dir_.Write("data.log",
             "U 0 1 1 \"a,b\" nan\nU 0 1 2 \"null\" inf\nU 0 1 3 null -inf\n"
             "U 0 1 4 \"q\\\"uote\\nnl\\t\" -1.5\nU 0 1 5 \"x\" 2e20\nU 0 1 6 \"y\" 0.1\nP 1\n");
  auto r = Ctl(sup, {"create-source", "u1", "--log", dir_.File("data.log"), "--schema",
                     "k:int64,s:string?,x:float64"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  r = Ctl(sup, {"create-index", "u2", "--on", "u1", "--key", "k"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup.Log();
  BinaryRun peek_run, dump_run;
  auto peek = CtlJson(sup, {"peek", "u2", "--at", "0"}, &peek_run);
  ASSERT_TRUE(peek) << DescribeRun(peek_run) << sup.Log();
  auto dump = ShmJson({"dump", sup.segment(), "u2", "--at", "0"}, &dump_run);
  ASSERT_TRUE(dump) << DescribeRun(dump_run);
  EXPECT_EQ(PeekRows(*peek).size(), 6u) << peek_run.out;
  EXPECT_EQ(PeekRows(*peek), DumpRows(*dump));
  // The same JSON text for every datum, floats included.
  for (const std::string datum :
       {"[1,\"a,b\",\"nan\"]", "[2,\"null\",\"inf\"]", "[3,null,\"-inf\"]",
        "[4,\"q\\\"uote\\nnl\\t\",-1.5]", "[5,\"x\",2e+20]", "[6,\"y\",0.1]"}) {
    EXPECT_NE(peek_run.out.find("{\"row\":" + datum + ","), std::string::npos) << datum << "\n"
                                                                               << peek_run.out;
    EXPECT_NE(dump_run.out.find(",\"val\":" + datum + ","), std::string::npos) << datum << "\n"
                                                                               << dump_run.out;
  }
  // And the same text: strings quoted and escaped, NULL as null.
  r = Ctl(sup, {"peek", "u2", "--at", "0"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  const auto ctl_lines = Lines(r.out);
  ASSERT_EQ(ctl_lines.size(), 9u) << r.out << "a string never breaks a line";
  EXPECT_EQ(ctl_lines[2], "1  \"a,b\"            nan    1") << r.out;
  EXPECT_EQ(ctl_lines[3], "2  \"null\"           inf    1") << r.out;
  EXPECT_EQ(ctl_lines[4], "3  null             -inf   1") << r.out;
  EXPECT_EQ(ctl_lines[5], "4  \"q\\\"uote\\nnl\\t\"  -1.5   1") << r.out;
  r = Shm({"dump", sup.segment(), "u2", "--at", "0"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r);
  for (const std::string row : {"(1, \"a,b\", nan)", "(2, \"null\", inf)", "(3, null, -inf)",
                                "(4, \"q\\\"uote\\nnl\\t\", -1.5)", "(5, \"x\", 2e+20)"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
  ShutDownCleanly(sup);
}

}  // namespace
}  // namespace tandem::testing
