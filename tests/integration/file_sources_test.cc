// The CSV and JSON-lines sources and `tandem-ctl load`, end to end: the real supervisor and
// runtime, files on disk, peeks through the supervisor; and a load into a table that, run again,
// applies nothing twice (its batches' uuids are deterministic).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <thread>

#include "ipc/codec.h"
#include "replica.h"
#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "unit/protocol_samples.h"
#include "workers/tables/table.h"

namespace tandem::testing {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;
namespace samples = ipc::samples;
namespace pb = ipc::pb;

std::optional<Response> AwaitPeek(TestController& ctl, const std::string& uuid,
                                  std::chrono::milliseconds limit = 10s) {
  return ctl.ReceiveUntil(
      [&](const Response& r) { return r.has_peek_response() && r.peek_response().uuid() == uuid; },
      limit);
}

// The rows of a peek answer as "datum,datum,…x<count>".
std::multiset<std::string> RowsOf(const Response& r) {
  std::multiset<std::string> out;
  for (const auto& rc : r.peek_response().rows().rows()) {
    std::string s;
    for (const auto& d : rc.row().datums()) {
      if (d.has_int64()) s += std::to_string(d.int64());
      if (d.has_string()) s += d.string();
      if (d.has_null()) s += "null";
      if (d.has_float64()) s += std::to_string(d.float64());
      s += ",";
    }
    out.insert(s + "x" + std::to_string(rc.count()));
  }
  return out;
}

// Peeks `id` at the wall clock now (a source on the clock is readable there within ~10 ms).
std::optional<Response> PeekNow(TestController& ctl, const std::string& id,
                                const std::string& uuid) {
  ctl.Send(samples::PeekAt(uuid, id, WallClockMs()));
  return AwaitPeek(ctl, uuid);
}

pb::SourceImport FileImport(const std::string& id, bool csv, const std::string& path,
                            std::vector<std::uint32_t> key = {}) {
  pb::SourceImport s;
  s.set_id(id);
  if (csv) {
    s.mutable_source()->mutable_csv()->set_path(path);
  } else {
    s.mutable_source()->mutable_json_lines()->set_path(path);
  }
  *s.mutable_schema() = samples::MakeSchema(
      {samples::MakeColumn("k", pb::INT64), samples::MakeColumn("v", pb::STRING, true)});
  for (auto k : key) s.add_upsert_key(k);
  return s;
}

Command IndexOn(pb::SourceImport import, const std::string& index) {
  Command c = samples::EmptyDataflow(index, 0);
  auto* d = samples::Desc(c);
  const std::string on = import.id();
  *d->add_source_imports() = std::move(import);
  auto* x = d->add_index_exports();
  x->set_id(index);
  x->set_on(on);
  x->add_key(0);
  return c;
}

TEST(FileSources, ACsvAndAnUpsertJsonLinesFileAreReadAsTheyGrow) {
  Replica r(true, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  TempDir dir("file-sources");
  dir.Write("a.csv", "v,k\nx,1\n\"multi\nline\",2\n");
  dir.Write("b.jsonl", "{\"k\":1,\"v\":\"a\"}\n{\"k\":2,\"v\":\"b\"}\n");
  r.ctl->Send(IndexOn(FileImport("u1", true, dir.File("a.csv")), "u2"));
  r.ctl->Send(IndexOn(FileImport("u3", false, dir.File("b.jsonl"), {0}), "u4"));
  std::this_thread::sleep_for(300ms);
  auto csv = PeekNow(*r.ctl, "u2", "p1");
  ASSERT_TRUE(csv && csv->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*csv), (std::multiset<std::string>{"1,x,x1", "2,multi\nline,x1"}));
  dir.Write("a.csv", "zz,3\n", /*append=*/true);
  dir.Write("b.jsonl", "{\"k\":1,\"v\":\"c\"}\n{\"k\":2}\n{\"k\":\"bad\"}\n", /*append=*/true);
  std::this_thread::sleep_for(300ms);
  csv = PeekNow(*r.ctl, "u2", "p2");
  ASSERT_TRUE(csv && csv->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*csv), (std::multiset<std::string>{"1,x,x1", "2,multi\nline,x1", "3,zz,x1"}));
  auto json = PeekNow(*r.ctl, "u4", "p3");
  ASSERT_TRUE(json) << r.sup.Log();
  EXPECT_EQ(json->peek_response().error(),
            "json line 5: column k is an int64: an integer without "
            "fraction or exponent");
}

TEST(FileSources, ALoadIntoATableAppliesEveryBatchOnceEvenWhenRunAgain) {
  TempDir dir("ctl-load");
  Replica r(true, 2, {"--data-dir", dir.File("data")});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  Command table = IndexOn(samples::TableImport("u40", {0}), "u41");
  r.ctl->Send(table);
  // The state file tandem-ctl reads the table's schema and upsert key from.
  dir.Write("state", ipc::ToJson(table) + "\n");
  std::string csv = "k,v,score\n";
  for (int i = 0; i < 2500; ++i) csv += std::to_string(i) + ",v" + std::to_string(i) + ",1.5\n";
  csv += "7,,\n";  // a delete of key 7 (every non-key field empty and unquoted)
  dir.Write("rows.csv", csv);
  const std::vector<std::string> args = {
      "--endpoint", r.sup.controller_endpoint(), "--state", dir.File("state"), "load",
      "u40",        dir.File("rows.csv")};
  RunBinaryOptions options;
  options.limit = 60s;
  for (int run = 0; run < 2; ++run) {
    BinaryRun l = RunBinary(TANDEM_CTL_BIN, args, options);
    ASSERT_EQ(l.exit, 0) << DescribeRun(l) << r.sup.Log();
    EXPECT_NE(l.out.find("loaded 2501 rows in 3 writes"), std::string::npos) << DescribeRun(l);
  }
  auto peek = PeekNow(*r.ctl, "u41", "p1");
  ASSERT_TRUE(peek && peek->peek_response().has_rows()) << r.sup.Log();
  const auto rows = RowsOf(*peek);
  EXPECT_EQ(rows.size(), 2499u) << "each batch applied once; key 7 deleted";
  EXPECT_EQ(rows.count("8,v8,1.500000,x1"), 1u);
  auto load = [&](const std::string& name, const std::string& text) {
    dir.Write(name, text);
    return RunBinary(TANDEM_CTL_BIN,
                     {"--endpoint", r.sup.controller_endpoint(), "--state", dir.File("state"),
                      "load", "u40", dir.File(name)},
                     options);
  };
  BinaryRun bad = load("bad.csv", "k,v,score\n1,a,1\nx,b,2\n");
  EXPECT_EQ(bad.exit, 1) << DescribeRun(bad);
  EXPECT_NE(bad.err.find("csv line 3: 'x' is not an int64 (column k)"), std::string::npos)
      << DescribeRun(bad);
  // A spreadsheet's export starts with a UTF-8 byte-order mark: it is not part of the header.
  BinaryRun bom = load("bom.csv", "\xEF\xBB\xBFk,v,score\n9000,bom,2\n");
  EXPECT_EQ(bom.exit, 0) << DescribeRun(bom);
  EXPECT_NE(bom.out.find("loaded 1 rows in 1 writes"), std::string::npos) << DescribeRun(bom);
}

}  // namespace
}  // namespace tandem::testing
