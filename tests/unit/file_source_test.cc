// The CSV and JSON-lines sources (workers/sources/file_source.h) and the upsert log source, in
// process: Advance reads the file into the envelope, timed by the clock (a batch at
// max(now, upper), then upper = that + 1; with nothing new the upper follows the clock), and
// worker 0's node emits what was read — rows, upsert retractions, errors of bad data at the
// batch's time, and the error that ends a source.
#include "workers/sources/file_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "base/datum_text.h"
#include "temp_dir.h"
#include "unit/protocol_samples.h"
#include "workers/sources/log.h"

namespace tandem::workers::file_source_test {
namespace {

namespace pb = ipc::pb;
using Clock = std::chrono::steady_clock;
using ipc::samples::MakeColumn;
using ipc::samples::MakeSchema;
using testing::TempDir;

pb::SourceImport Import(const std::string& kind, const std::string& path,
                        std::vector<std::uint32_t> key = {}) {
  pb::SourceImport import;
  import.set_id("u1");
  if (kind == "csv") import.mutable_source()->mutable_csv()->set_path(path);
  if (kind == "json") import.mutable_source()->mutable_json_lines()->set_path(path);
  if (kind == "log") import.mutable_source()->mutable_log()->set_path(path);
  *import.mutable_schema() =
      MakeSchema({MakeColumn("k", pb::INT64), MakeColumn("v", pb::STRING, true)});
  for (std::uint32_t c : key) import.add_upsert_key(c);
  return import;
}

// One source, one worker, driven like the runtime's step: Advance, then a tick up to the upper.
struct Driver {
  explicit Driver(const pb::SourceImport& import) : source(MakeSource(import, Clock::now())) {
    if (auto* f = dynamic_cast<FileSource*>(source.get())) f->clock = [this] { return now; };
    node = source->MakeNode(0, 0, Frontier::Empty());
  }
  // Advances the source with the clock at `ms`; returns ctx.next - ctx.now.
  Clock::duration Advance(Time ms) {
    now = ms;
    AdvanceCtx ctx;
    ctx.now = Clock::now();
    ctx.next = ctx.now + std::chrono::seconds(1);
    ctx.max_ticks = 1000;
    ctx.workers = 1;
    source->Advance(ctx);
    return ctx.next - ctx.now;
  }
  // What the node emits up to the source's upper (everything, once it is empty), sorted.
  Delta Tick() {
    Delta d = node->Pull(TickCtx{lo, source->upper, tick++, 0, nullptr});
    lo = source->upper.empty() ? kMaxTime : source->upper.time();
    std::sort(d.rows.begin(), d.rows.end(), [](const RowUpdate& a, const RowUpdate& b) {
      return a.time != b.time ? a.time < b.time : CompareRow(a.row, b.row) < 0;
    });
    return d;
  }
  std::unique_ptr<Source> source;
  std::unique_ptr<Node> node;
  Time now = 0;
  Time lo = 0;
  std::uint64_t tick = 0;
};

std::string Rows(const Delta& d) {
  std::string out;
  for (const RowUpdate& u : d.rows) {
    out += RowText(u.row) + "@" + std::to_string(u.time) + (u.diff > 0 ? "+" : "") +
           std::to_string(u.diff) + " ";
  }
  return out;
}

TEST(CsvSource, ABatchIsTimedAtTheClockAndTheUpperFollowsTheClockWhenNothingIsNew) {
  TempDir dir("csvsrc");
  dir.Write("a.csv", "k,v\n1,a\n2,\n");
  Driver d(Import("csv", dir.File("a.csv")));
  EXPECT_LE(d.Advance(1000), std::chrono::milliseconds(10)) << "re-read every ~10 ms";
  EXPECT_EQ(d.source->upper, Frontier::At(1001));
  Delta t = d.Tick();
  EXPECT_TRUE(t.errors.empty());
  EXPECT_EQ(Rows(t), "(1, \"a\")@1000+1 (2, null)@1000+1 ");
  d.Advance(1005);  // nothing new: the upper follows the clock
  EXPECT_EQ(d.source->upper, Frontier::At(1005));
  dir.Write("a.csv", "3,c\n", /*append=*/true);
  d.Advance(900);  // a clock behind the upper: the batch is at the upper
  EXPECT_EQ(d.source->upper, Frontier::At(1006));
  EXPECT_EQ(Rows(d.Tick()), "(3, \"c\")@1005+1 ");
}

TEST(CsvSource, BadRecordsAreErrorsAtTheBatchTimeAndReadingGoesOn) {
  TempDir dir("csvsrc");
  dir.Write("a.csv", "k,v\nx,a\n\"4\",\"multi\nline\"\n,b\n5,e\n");
  Driver d(Import("csv", dir.File("a.csv")));
  d.Advance(2000);
  Delta t = d.Tick();
  ASSERT_EQ(t.errors.size(), 2u);
  EXPECT_EQ(t.errors[0].message, "csv line 2: 'x' is not an int64 (column k)");
  EXPECT_EQ(t.errors[0].time, 2000u);
  EXPECT_EQ(t.errors[1].message.rfind("csv line 5: ", 0), 0u) << t.errors[1].message;
  // The one datum printer escapes a newline inside a string (base/datum_text.h).
  EXPECT_EQ(Rows(t), "(4, \"multi\\nline\")@2000+1 (5, \"e\")@2000+1 ");
  EXPECT_FALSE(d.source->upper.empty());
}

TEST(CsvSource, AHeaderWithoutANonNullableColumnEndsTheSourceWithAnError) {
  TempDir dir("csvsrc");
  dir.Write("a.csv", "v\na\n");
  Driver d(Import("csv", dir.File("a.csv")));
  d.Advance(3000);
  EXPECT_TRUE(d.source->upper.empty());
  Delta t = d.Tick();
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].message.rfind("csv source u1: csv line 1: the header: ", 0), 0u)
      << t.errors[0].message;
  EXPECT_EQ(t.errors[0].time, 3000u);
}

TEST(CsvSource, AMissingFileWaitsAndATruncatedOneEndsTheSource) {
  TempDir dir("csvsrc");
  Driver d(Import("csv", dir.File("a.csv")));
  d.Advance(10);
  EXPECT_EQ(d.source->upper, Frontier::Minimum()) << "a missing file: the frontier waits";
  dir.Write("a.csv", "k,v\n1,a\n");
  d.Advance(20);
  EXPECT_EQ(d.source->upper, Frontier::At(21));
  dir.Write("a.csv", "k\n");
  d.Advance(30);
  EXPECT_TRUE(d.source->upper.empty());
  Delta t = d.Tick();
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_NE(t.errors[0].message.find("was truncated"), std::string::npos) << t.errors[0].message;
  EXPECT_EQ(t.errors[0].message.rfind("csv source u1: ", 0), 0u);
}

TEST(CsvSource, ARotatedFileStartsWithItsHeaderAgain) {
  TempDir dir("csvsrc");
  dir.Write("a.csv", "k,v\n1,a\n");
  Driver d(Import("csv", dir.File("a.csv")));
  d.Advance(100);
  ASSERT_EQ(std::rename(dir.File("a.csv").c_str(), dir.File("a.csv.1").c_str()), 0);
  dir.Write("a.csv", "v,k\nb,2\n");
  // 101: the old file read to its end, the new one found; 102: the new file read.
  for (Time ms = 101; ms < 105; ++ms) d.Advance(ms);
  EXPECT_EQ(Rows(d.Tick()), "(1, \"a\")@100+1 (2, \"b\")@102+1 ");
}

// A UTF-8 byte-order mark at the start of a file (and of a rotated one) is not part of its first
// line: the header's first column is 'k', not BOM + 'k'. Only the first line's is skipped.
TEST(CsvSource, AByteOrderMarkAtTheStartOfEachFileIsSkipped) {
  TempDir dir("csvsrc");
  dir.Write("a.csv", "\xEF\xBB\xBFk,v\n1,a\n");
  Driver d(Import("csv", dir.File("a.csv")));
  d.Advance(100);
  ASSERT_EQ(std::rename(dir.File("a.csv").c_str(), dir.File("a.csv.1").c_str()), 0);
  dir.Write("a.csv", "\xEF\xBB\xBFv,k\n\xEF\xBB\xBF,2\n");
  for (Time ms = 101; ms < 105; ++ms) d.Advance(ms);
  const Delta t = d.Tick();
  EXPECT_TRUE(t.errors.empty()) << t.errors[0].message;
  EXPECT_EQ(Rows(t), "(1, \"a\")@100+1 (2, \"\xEF\xBB\xBF\")@102+1 ");
}

TEST(CsvSource, AnUpsertCsvReplacesRowsAndDeletesKeys) {
  TempDir dir("csvsrc");
  dir.Write("a.csv", "k,v\n1,a\n2,b\n");
  Driver d(Import("csv", dir.File("a.csv"), {0}));
  d.Advance(10);
  EXPECT_EQ(Rows(d.Tick()), "(1, \"a\")@10+1 (2, \"b\")@10+1 ");
  dir.Write("a.csv", "1,c\n2,\n3,\n", /*append=*/true);  // 2 deleted; 3 had no row
  d.Advance(20);
  EXPECT_EQ(Rows(d.Tick()), "(1, \"a\")@20-1 (1, \"c\")@20+1 (2, \"b\")@20-1 ");
}

TEST(JsonLinesSource, ObjectsBecomeRowsAndBadLinesErrorsNamingTheirLine) {
  TempDir dir("jsonsrc");
  dir.Write("a.jsonl", "{\"k\":1,\"v\":\"a\"}\n\n{\"k\":\"x\"}\n{\"k\":2}\n");
  Driver d(Import("json", dir.File("a.jsonl")));
  d.Advance(500);
  EXPECT_EQ(d.source->upper, Frontier::At(501));
  Delta t = d.Tick();
  EXPECT_EQ(Rows(t), "(1, \"a\")@500+1 (2, null)@500+1 ");
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].message.rfind("json line 3: ", 0), 0u) << t.errors[0].message;
  EXPECT_EQ(t.errors[0].time, 500u);
}

TEST(JsonLinesSource, AByteOrderMarkAtTheStartOfTheFileIsSkipped) {
  TempDir dir("jsonsrc");
  dir.Write("a.jsonl", "\xEF\xBB\xBF{\"k\":1,\"v\":\"a\"}\n{\"k\":2}\n");
  Driver d(Import("json", dir.File("a.jsonl")));
  d.Advance(500);
  const Delta t = d.Tick();
  EXPECT_TRUE(t.errors.empty()) << t.errors[0].message;
  EXPECT_EQ(Rows(t), "(1, \"a\")@500+1 (2, null)@500+1 ");
}

TEST(JsonLinesSource, AnUpsertJsonSourceDeletesOnAKeyOnlyObject) {
  TempDir dir("jsonsrc");
  dir.Write("a.jsonl", "{\"k\":1,\"v\":\"a\"}\n");
  Driver d(Import("json", dir.File("a.jsonl"), {0}));
  d.Advance(10);
  d.Tick();
  dir.Write("a.jsonl", "{\"k\":1,\"v\":null}\n", /*append=*/true);
  d.Advance(20);
  EXPECT_EQ(Rows(d.Tick()), "(1, null)@20+1 (1, \"a\")@20-1 ");
  dir.Write("a.jsonl", "{\"k\":1}\n", /*append=*/true);
  d.Advance(30);
  EXPECT_EQ(Rows(d.Tick()), "(1, null)@30-1 ");
}

TEST(JsonLinesSource, ANonRegularFileEndsTheSource) {
  Driver d(Import("json", "/dev/null"));
  d.Advance(10);
  EXPECT_TRUE(d.source->upper.empty());
  Delta t = d.Tick();
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].message,
            "json source u1: /dev/null is a character device, not a regular file: a JSON-lines "
            "source reads only regular files");
}

// The log source with an upsert key: S replaces, D deletes, at the lines' own times.
TEST(UpsertLogSource, SAndDLinesReplaceAndDeleteRowsWithTheRuntimesRetractions) {
  TempDir dir("upsertlog");
  dir.Write(
      "a.log",
      "S 1 1 \"a\"\nS 1 2 \"b\"\nS 2 1 \"c\"\nS 2 1 \"c\"\nD 3 2\nD 3 9\nU 3 1 1 \"x\"\nP 4\n");
  Driver d(Import("log", dir.File("a.log"), {0}));
  d.Advance(0);
  EXPECT_EQ(d.source->upper, Frontier::At(4));
  Delta t = d.Tick();
  EXPECT_EQ(Rows(t), "(1, \"a\")@1+1 (2, \"b\")@1+1 (1, \"a\")@2-1 (1, \"c\")@2+1 (2, \"b\")@3-1 ");
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].message.rfind("log line 7: U lines are not read", 0), 0u)
      << t.errors[0].message;
}

TEST(UpsertLogSource, SAndDLinesInAPlainLogSourceAreBadData) {
  TempDir dir("upsertlog");
  dir.Write("a.log", "S 1 1 \"a\"\nP 2\n");
  Driver d(Import("log", dir.File("a.log")));
  d.Advance(0);
  Delta t = d.Tick();
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].message,
            "log line 1: S/D lines need an upsert key (this log source has none)");
}

}  // namespace
}  // namespace tandem::workers::file_source_test
