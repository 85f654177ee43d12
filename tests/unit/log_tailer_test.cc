// The log source's reading (ipc/formats/log_parse.h, workers/sources/log_file.h), in process:
// lines are cut with a bounded length, only regular files are read and never with a blocking
// open, a truncated file is reported and a replaced one followed like `tail -F`.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "temp_dir.h"
#include "unit/protocol_samples.h"
#include "workers/sources/log_file.h"

namespace tandem::workers {
namespace {

using ipc::kMaxLogLineBytes;
using ipc::LineFramer;
using ipc::LogRecord;
using ipc::ParseLogLine;
using testing::TempDir;

ipc::pb::Schema KV() {
  return ipc::samples::MakeSchema({ipc::samples::MakeColumn("k", ipc::pb::INT64),
                                   ipc::samples::MakeColumn("v", ipc::pb::INT64)});
}

constexpr std::size_t kLots = 1 << 20;

TEST(LineFramer, CutsCompleteLinesAndKeepsAPartialOneForLater) {
  LineFramer f(8);
  auto e = f.Next("ab\r\ncd");
  EXPECT_EQ(e.kind, LineFramer::Event::kLine);
  EXPECT_EQ(e.line, "ab");
  EXPECT_EQ(e.consumed, 4u);
  e = f.Next("cd");
  EXPECT_EQ(e.kind, LineFramer::Event::kNone);
  EXPECT_EQ(e.consumed, 0u);
  e = f.Next("12345678\n");  // exactly the bound
  EXPECT_EQ(e.kind, LineFramer::Event::kLine);
  EXPECT_EQ(e.line, "12345678");
}

TEST(LineFramer, AnOverlongLineIsReportedOnceAndDroppedUpToItsNewline) {
  LineFramer f(8);
  auto e = f.Next("123456789");
  EXPECT_EQ(e.kind, LineFramer::Event::kOverlong);
  EXPECT_EQ(e.consumed, 9u);
  EXPECT_TRUE(f.skipping());
  e = f.Next("more and more");  // still the same line: dropped, nothing kept
  EXPECT_EQ(e.kind, LineFramer::Event::kNone);
  EXPECT_EQ(e.consumed, 13u);
  e = f.Next("end\nok\n");
  EXPECT_EQ(e.kind, LineFramer::Event::kLine);
  EXPECT_EQ(e.line, "ok");
  EXPECT_EQ(e.consumed, 7u);
  EXPECT_FALSE(f.skipping());
}

TEST(LogTailer, AnOverlongLineIsAnErrorNamingItAndTheNextLinesAreRead) {
  TempDir dir("tailer");
  dir.Write("a.log", "U 0 1 1 10\n" + std::string(kMaxLogLineBytes + 10, '7') + "\nU 0 1 2 20\n");
  LogTailer t(dir.File("a.log"), KV());
  auto records = t.ReadNew(kLots, kLots);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].kind, LogRecord::Kind::kUpdate);
  EXPECT_EQ(records[1].kind, LogRecord::Kind::kError);
  EXPECT_EQ(records[1].error, "log line 2: longer than 1048576 bytes (skipped)");
  EXPECT_EQ(records[2].kind, LogRecord::Kind::kUpdate);
  EXPECT_EQ(records[2].line, 3u);
}

TEST(LogTailer, AnOverlongLineStillBeingWrittenIsNeverBuffered) {
  TempDir dir("tailer");
  const std::string path = dir.File("a.log");
  LogTailer t(path, KV());
  std::size_t errors = 0;
  for (int i = 0; i < 8; ++i) {  // 8 MiB of one line, appended in pieces
    dir.Write("a.log", std::string(1 << 20, 'x'), true);
    for (const auto& r : t.ReadNew(kLots, 1 << 16)) errors += r.kind == LogRecord::Kind::kError;
  }
  EXPECT_EQ(errors, 1u);
  dir.Write("a.log", "\nU 0 1 1 10\n", true);
  auto records = t.ReadNew(kLots, 1 << 16);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind, LogRecord::Kind::kUpdate);
  EXPECT_EQ(records[0].line, 2u);
}

TEST(LogTailer, ReadsAtMostItsByteBudgetPerCall) {
  TempDir dir("tailer");
  std::string lines;
  for (int i = 0; i < 100000; ++i) lines += "U 0 1 " + std::to_string(i) + " 1\n";
  dir.Write("a.log", lines);
  LogTailer t(dir.File("a.log"), KV());
  const auto first = t.ReadNew(kLots, 1 << 16);  // at least one longest line: 1 MiB + 1
  EXPECT_LT(first.size(), 100000u);
  EXPECT_TRUE(t.more());
  std::size_t total = first.size();
  while (t.more()) total += t.ReadNew(kLots, 1 << 16).size();
  EXPECT_EQ(total, 100000u);
}

TEST(LogTailer, ADeviceIsNeverReadAndSaysWhy) {
  for (const char* device : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    LogTailer t(device, KV());
    EXPECT_TRUE(t.ReadNew(kLots, kLots).empty());
    EXPECT_EQ(t.broken(), std::string(device) +
                              " is a character device, not a regular file: a "
                              "log source reads only regular files");
  }
  TempDir dir("tailer");
  LogTailer t(dir.path(), KV());
  t.ReadNew(kLots, kLots);
  EXPECT_NE(t.broken().find("is a directory"), std::string::npos);
}

TEST(LogTailer, AFifoWithoutAWriterIsRefusedAtOnceWithoutBlocking) {
  TempDir dir("tailer");
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  LogTailer t(fifo, KV());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(t.ReadNew(kLots, kLots).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_NE(t.broken().find("is a FIFO, not a regular file"), std::string::npos) << t.broken();
}

TEST(LogTailer, ATruncatedFileIsBrokenNamingTheSizes) {
  TempDir dir("tailer");
  dir.Write("a.log", "U 0 1 1 10\nU 0 1 2 20\nP 1\n");
  LogTailer t(dir.File("a.log"), KV());
  EXPECT_EQ(t.ReadNew(kLots, kLots).size(), 3u);
  dir.Write("a.log", "U 1 1 3 30\n");  // truncated and rewritten, shorter
  EXPECT_TRUE(t.ReadNew(kLots, kLots).empty());
  EXPECT_EQ(t.broken(), dir.File("a.log") +
                            " was truncated (to 11 bytes; 26 bytes had been read): a log is "
                            "append-only");
  dir.Write("a.log", "U 1 1 3 30\nU 1 1 4 40\nU 1 1 5 50\n");
  EXPECT_TRUE(t.ReadNew(kLots, kLots).empty()) << "nothing is read after a truncation";
}

TEST(LogTailer, AReplacedFileIsFollowedAfterTheOldOneIsReadToItsEnd) {
  TempDir dir("tailer");
  const std::string path = dir.File("a.log");
  dir.Write("a.log", "U 0 1 1 10\n");
  LogTailer t(path, KV());
  EXPECT_EQ(t.ReadNew(kLots, kLots).size(), 1u);
  dir.Write("a.log", "U 0 1 2 20\nU 0 1 9", true);  // the writer's last lines before rotating
  std::filesystem::rename(path, dir.File("a.log.1"));
  dir.Write("a.log", "U 1 1 3 30\nP 2\n");  // the new file, shorter than what was read
  auto old = t.ReadNew(kLots, kLots);
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old[0].kind, LogRecord::Kind::kUpdate);
  EXPECT_EQ(old[1].kind, LogRecord::Kind::kError);
  EXPECT_EQ(old[1].error, "log line 3: incomplete (no newline) when " + path +
                              " was replaced by another file (skipped)");
  EXPECT_TRUE(t.more());
  auto next = t.ReadNew(kLots, kLots);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].kind, LogRecord::Kind::kUpdate);
  EXPECT_EQ(next[0].line, 1u);
  EXPECT_EQ(next[1].kind, LogRecord::Kind::kProgress);
  EXPECT_TRUE(t.broken().empty()) << t.broken();
  EXPECT_EQ(t.rotations(), 1u);
}

TEST(LogTailer, AFileReplacedByAFifoIsBroken) {
  TempDir dir("tailer");
  const std::string path = dir.File("a.log");
  dir.Write("a.log", "U 0 1 1 10\n");
  LogTailer t(path, KV());
  EXPECT_EQ(t.ReadNew(kLots, kLots).size(), 1u);
  std::filesystem::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  t.ReadNew(kLots, kLots);  // the old file's end: follows the path
  t.ReadNew(kLots, kLots);
  EXPECT_NE(t.broken().find("is a FIFO"), std::string::npos) << t.broken();
}

// Upsert lines. `S <time> <datum>…` is a whole row, `D <time> <key datum>…` the key
// columns in upsert-key order; they are read only in a log source with an upsert key, `U` only in
// one without.
TEST(LogParse, UpsertAndDeleteLinesNeedAnUpsertKeyAndUpdateLinesNeedNone) {
  const ipc::pb::Schema s =
      ipc::samples::MakeSchema({ipc::samples::MakeColumn("k", ipc::pb::INT64),
                                ipc::samples::MakeColumn("v", ipc::pb::STRING, true),
                                ipc::samples::MakeColumn("b", ipc::pb::BOOL)});
  const std::vector<std::uint32_t> key = {2, 0};  // b, then k
  auto up = ParseLogLine("S 5 1 \"x\" true", s, key);
  ASSERT_TRUE(up.has_value());
  EXPECT_EQ(up->kind, LogRecord::Kind::kUpsert);
  EXPECT_EQ(up->time, 5u);
  EXPECT_EQ(up->row, (Row{std::int64_t{1}, std::string("x"), true}));
  auto del = ParseLogLine("D 6 false 7", s, key);
  ASSERT_TRUE(del.has_value());
  EXPECT_EQ(del->kind, LogRecord::Kind::kDelete);
  EXPECT_EQ(del->row, (Row{false, std::int64_t{7}}));

  auto err = [&](std::string_view line, const std::vector<std::uint32_t>& k) {
    auto r = ParseLogLine(line, s, k);
    EXPECT_TRUE(r.has_value() && r->kind == LogRecord::Kind::kError) << line;
    return r ? r->error : "";
  };
  EXPECT_EQ(err("S 5 1 null true", {}), "S/D lines need an upsert key (this log source has none)");
  EXPECT_EQ(err("D 5 1", {}), "S/D lines need an upsert key (this log source has none)");
  EXPECT_NE(err("U 5 1 1 null true", key).find("U lines are not read"), std::string::npos);
  EXPECT_EQ(err("D 6 7 false", key), "'7' is not a value of column b");  // key order
  EXPECT_EQ(err("D 6 false", key), "the key has 1 values, the upsert key has 2 columns");
  EXPECT_EQ(err("S 6 1 null", key), "row has 2 values, the schema has 3 columns");
  EXPECT_EQ(err("D x false 1", key), "bad time 'x'");
  EXPECT_EQ(err("D", key), "a delete needs a time");
  EXPECT_EQ(err("X 1", key), "unknown record 'X' (S, D, P or C)");
  EXPECT_EQ(err("S 1 null null true", key), "null in non-nullable column k");
}

TEST(LogTailer, AnUpsertLogSourceReadsSAndDLinesWithTheirLineNumbers) {
  TempDir dir("tailer");
  dir.Write("a.log", "S 1 1 10\nU 1 1 1 10\nD 2 1\nP 3\n");
  LogTailer t(dir.File("a.log"), KV(), {0});
  auto records = t.ReadNew(kLots, kLots);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].kind, LogRecord::Kind::kUpsert);
  EXPECT_EQ(records[1].kind, LogRecord::Kind::kError);
  EXPECT_EQ(records[1].error.rfind("log line 2: U lines are not read", 0), 0u) << records[1].error;
  EXPECT_EQ(records[2].kind, LogRecord::Kind::kDelete);
  EXPECT_EQ(records[2].line, 3u);
  EXPECT_EQ(records[2].row, (Row{std::int64_t{1}}));
  EXPECT_EQ(records[3].kind, LogRecord::Kind::kProgress);
}

}  // namespace
}  // namespace tandem::workers
