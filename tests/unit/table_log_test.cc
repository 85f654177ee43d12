// The tables' storage (workers/tables/table_log.h, data_dir.h), in process: a table log gives
// back every write that was appended, in order; a torn tail (what a crash leaves after the last
// sync: cut short, or zeros) is dropped and the file truncated, while a bad record with more data
// after it is data loss and the file is left alone; a log written for another table definition
// is refused; Retire moves a log to dropped/; a data dir is locked by one runtime at a time.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "temp_dir.h"
#include "unit/protocol_samples.h"
#include "workers/tables/data_dir.h"
#include "workers/tables/table_log.h"

namespace tandem::workers {
namespace {

namespace fs = std::filesystem;
namespace s = ipc::samples;
using testing::TempDir;

ipc::pb::TableLogHeader Header(const std::string& id = "u1", bool upsert = false) {
  ipc::pb::TableLogHeader h;
  h.set_format(kTableLogFormat);
  h.set_id(id);
  *h.mutable_schema() = s::MakeSchema(
      {s::MakeColumn("k", ipc::pb::INT64), s::MakeColumn("v", ipc::pb::STRING, true)});
  if (upsert) h.add_upsert_key(0);
  return h;
}

// A write with `n` updates (plain: row (i, "v<i>") diff +1; every third update an upsert or a
// delete instead, so that every kind goes through the log).
ipc::pb::TableLogWrite LogWrite(int i, int n = 2) {
  ipc::pb::TableLogWrite w;
  w.set_uuid("uuid-" + std::to_string(i));
  w.set_time(1'700'000'000'000ull + static_cast<std::uint64_t>(i));
  for (int j = 0; j < n; ++j) {
    auto* u = w.add_updates();
    const auto row =
        s::MakeRow({s::IntDatum(i * 100 + j), s::StringDatum("v" + std::to_string(i))});
    switch (j % 3) {
      case 0:
        *u->mutable_update()->mutable_row() = row;
        u->mutable_update()->set_diff(j + 1);
        break;
      case 1:
        *u->mutable_upsert() = row;
        break;
      default:
        *u->mutable_delete_() = s::MakeRow({s::IntDatum(i)});
    }
  }
  return w;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::vector<std::string> Serialized(const std::vector<ipc::pb::TableLogWrite>& writes) {
  std::vector<std::string> out;
  for (const auto& w : writes) out.push_back(w.SerializeAsString());
  return out;
}

std::vector<std::string> Serialized(std::initializer_list<int> ids) {
  std::vector<std::string> out;
  for (int i : ids) out.push_back(LogWrite(i).SerializeAsString());
  return out;
}

TableLog::Opened MustOpen(const std::string& dir, const ipc::pb::TableLogHeader& header) {
  auto opened = TableLog::Open(dir, header);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  if (!opened.ok()) throw std::runtime_error(opened.status().ToString());
  return std::move(opened).value();
}

// A log u1 in `dir` with writes 1..n, synced; returns the file's size after each record (the
// header first).
std::vector<std::uint64_t> MakeLog(const std::string& dir, int n) {
  auto opened = MustOpen(dir, Header());
  std::vector<std::uint64_t> ends{opened.log->bytes()};
  for (int i = 1; i <= n; ++i) {
    EXPECT_TRUE(opened.log->Append(LogWrite(i)).ok());
    ends.push_back(opened.log->bytes());
  }
  EXPECT_TRUE(opened.log->Sync().ok());
  return ends;
}

TEST(TableLog, ANewLogHoldsOnlyItsHeaderAndIsPrivateToItsOwner) {
  TempDir dir("table-log");
  auto opened = MustOpen(dir.path(), Header());
  EXPECT_TRUE(opened.writes.empty());
  EXPECT_EQ(opened.warning, "");
  EXPECT_EQ(opened.log->path(), dir.File("u1.log"));
  struct stat st {};
  ASSERT_EQ(stat(dir.File("u1.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), opened.log->bytes());
  EXPECT_GT(opened.log->bytes(), kTableLogFrame);
  opened.log.reset();
  auto again = MustOpen(dir.path(), Header());
  EXPECT_TRUE(again.writes.empty());
  EXPECT_EQ(again.warning, "");
}

TEST(TableLog, WritesAppendedAndSyncedComeBackOnReopenAsTheyWere) {
  TempDir dir("table-log");
  {
    auto opened = MustOpen(dir.path(), Header("u1", /*upsert=*/true));
    for (int i = 1; i <= 3; ++i) ASSERT_TRUE(opened.log->Append(LogWrite(i, 7)).ok());
    ASSERT_TRUE(opened.log->Sync().ok());
    EXPECT_EQ(opened.log->bytes(), fs::file_size(dir.File("u1.log")));
  }
  auto opened = MustOpen(dir.path(), Header("u1", /*upsert=*/true));
  ASSERT_EQ(opened.writes.size(), 3u);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(opened.writes[i - 1].SerializeAsString(), LogWrite(i, 7).SerializeAsString());
  }
  EXPECT_EQ(opened.writes[2].updates(2).delete_().datums(0).int64(), 3);
  EXPECT_EQ(opened.warning, "");
}

TEST(TableLog, AnAppendedRecordIsTheFramedTableLogRecordOfTheWrite) {
  TempDir dir("table-log");
  const auto ends = MakeLog(dir.path(), 1);
  ipc::pb::TableLogRecord record;
  *record.mutable_write() = LogWrite(1);
  EXPECT_EQ(ReadBytes(dir.File("u1.log")).substr(ends[0]),
            FrameTableLogRecord(record.SerializeAsString()));
}

TEST(TableLog, ReopenReturnsEveryWriteInOrderAcrossManyOpens) {
  TempDir dir("table-log");
  std::vector<ipc::pb::TableLogWrite> all;
  for (int round = 0; round < 5; ++round) {
    auto opened = MustOpen(dir.path(), Header());
    ASSERT_EQ(Serialized(opened.writes), Serialized(all)) << "round " << round;
    EXPECT_EQ(opened.log->bytes(), fs::file_size(dir.File("u1.log")));
    for (int i = 0; i < 40; ++i) {
      all.push_back(LogWrite(round * 40 + i, 1 + i % 5));
      ASSERT_TRUE(opened.log->Append(all.back()).ok());
      if (i % 7 == 0) {
        ASSERT_TRUE(opened.log->Sync().ok());
      }
    }
    ASSERT_TRUE(opened.log->Sync().ok());
  }
  EXPECT_EQ(Serialized(MustOpen(dir.path(), Header()).writes), Serialized(all));
}

TEST(TableLog, ALogWrittenForAnotherSchemaUpsertKeyOrIdIsRefusedNamingWhatDiffersAndLeftAlone) {
  TempDir dir("table-log");
  MakeLog(dir.path(), 2);
  const std::string before = ReadBytes(dir.File("u1.log"));

  auto other_schema = Header();
  other_schema.mutable_schema()->mutable_columns(1)->set_type(ipc::pb::INT64);
  auto r = TableLog::Open(dir.path(), other_schema);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("written for schema (k:int64, v:string nullable), this "
                                      "table has schema (k:int64, v:int64 nullable)"),
            std::string::npos)
      << r.status().message();

  r = TableLog::Open(dir.path(), Header("u1", /*upsert=*/true));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("written for upsert key none, this table has upsert key (k)"),
            std::string::npos)
      << r.status().message();

  fs::copy_file(dir.File("u1.log"), dir.File("u2.log"));
  r = TableLog::Open(dir.path(), Header("u2"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("written for table u1, not u2"), std::string::npos)
      << r.status().message();

  EXPECT_EQ(ReadBytes(dir.File("u1.log")), before);
  EXPECT_EQ(ReadBytes(dir.File("u2.log")), before);
  EXPECT_EQ(Serialized(MustOpen(dir.path(), Header()).writes), Serialized({1, 2}));
}

TEST(TableLog, ALastRecordCutAtAnyByteIsDroppedTheFileTruncatedAndTheLogGoesOnCleanly) {
  TempDir src("table-log");
  const auto ends = MakeLog(src.path(), 3);
  const std::string full = ReadBytes(src.File("u1.log"));
  ASSERT_EQ(full.size(), ends[3]);
  const std::uint64_t start = ends[2];  // where write 3's record begins
  for (std::uint64_t cut = start + 1; cut < ends[3]; ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(ends[3]));
    TempDir dir("table-log");
    WriteBytes(dir.File("u1.log"), full.substr(0, cut));
    {
      auto opened = MustOpen(dir.path(), Header());
      EXPECT_EQ(Serialized(opened.writes), Serialized({1, 2}));
      EXPECT_NE(opened.warning.find("torn tail at byte offset " + std::to_string(start)),
                std::string::npos)
          << opened.warning;
      EXPECT_EQ(fs::file_size(dir.File("u1.log")), start);
      EXPECT_EQ(opened.log->bytes(), start);
      ASSERT_TRUE(opened.log->Append(LogWrite(4)).ok());
      ASSERT_TRUE(opened.log->Sync().ok());
    }
    auto opened = MustOpen(dir.path(), Header());
    EXPECT_EQ(Serialized(opened.writes), Serialized({1, 2, 4}));
    EXPECT_EQ(opened.warning, "");
  }
  // Cut exactly at a record's end: nothing torn.
  TempDir dir("table-log");
  WriteBytes(dir.File("u1.log"), full.substr(0, start));
  auto opened = MustOpen(dir.path(), Header());
  EXPECT_EQ(Serialized(opened.writes), Serialized({1, 2}));
  EXPECT_EQ(opened.warning, "");
}

TEST(TableLog, AZeroFilledTailIsDroppedAfterAGoodOrACutShortRecord) {
  TempDir src("table-log");
  const auto ends = MakeLog(src.path(), 3);
  const std::string full = ReadBytes(src.File("u1.log"));
  const std::string zeros(4096, '\0');
  struct Case {
    std::string what;
    std::string bytes;
    std::uint64_t good_end;
    std::vector<std::string> writes;
  };
  const std::vector<Case> cases = {
      {"zeros after the last good record", full + zeros, ends[3], Serialized({1, 2, 3})},
      {"a cut-short record, then zeros", full.substr(0, ends[2] + 11) + zeros, ends[2],
       Serialized({1, 2})},
      {"a record's frame, then zeros in its payload's place",
       full.substr(0, ends[2] + kTableLogFrame) + zeros, ends[2], Serialized({1, 2})},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir dir("table-log");
    WriteBytes(dir.File("u1.log"), c.bytes);
    {
      auto opened = MustOpen(dir.path(), Header());
      EXPECT_EQ(Serialized(opened.writes), c.writes);
      EXPECT_NE(opened.warning, "");
      EXPECT_EQ(fs::file_size(dir.File("u1.log")), c.good_end);
      ASSERT_TRUE(opened.log->Append(LogWrite(9)).ok());
      ASSERT_TRUE(opened.log->Sync().ok());
    }
    auto again = MustOpen(dir.path(), Header());
    auto want = c.writes;
    want.push_back(LogWrite(9).SerializeAsString());
    EXPECT_EQ(Serialized(again.writes), want);
    EXPECT_EQ(again.warning, "");
  }
}

TEST(TableLog, ALastRecordWhoseChecksumFailsWithNothingAfterItIsTorn) {
  TempDir dir("table-log");
  const auto ends = MakeLog(dir.path(), 3);
  std::string bytes = ReadBytes(dir.File("u1.log"));
  bytes[ends[3] - 1] ^= 0x40;
  WriteBytes(dir.File("u1.log"), bytes);
  auto opened = MustOpen(dir.path(), Header());
  EXPECT_EQ(Serialized(opened.writes), Serialized({1, 2}));
  EXPECT_NE(opened.warning.find("checksum"), std::string::npos) << opened.warning;
  EXPECT_EQ(fs::file_size(dir.File("u1.log")), ends[2]);
}

TEST(TableLog, ABadRecordFollowedByMoreDataIsDataLossAndTheFileIsLeftAsItIs) {
  TempDir src("table-log");
  const auto ends = MakeLog(src.path(), 3);
  const std::string full = ReadBytes(src.File("u1.log"));
  auto with = [&](std::uint64_t at, std::string replacement) {
    std::string b = full;
    b.replace(at, replacement.size(), replacement);
    return b;
  };
  const std::string zeros(100, '\0');
  struct Case {
    std::string what;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"a flipped payload byte in the middle record", with(ends[1] + kTableLogFrame + 3, "\x7f")},
      {"a flipped checksum byte in the middle record", with(ends[1] + 5, "\x7f")},
      {"a zero length in the middle", with(ends[1], std::string(4, '\0'))},
      {"a length over 64 MiB in the middle", with(ends[1], "\xff\xff\xff\x7f")},
      {"a bad header followed by writes", with(kTableLogFrame + 1, "\x7f")},
      {"zeros, then something that is not zero", full + zeros + "x"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir dir("table-log");
    WriteBytes(dir.File("u1.log"), c.bytes);
    auto r = TableLog::Open(dir.path(), Header());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("data loss"), std::string::npos) << r.status().message();
    EXPECT_EQ(ReadBytes(dir.File("u1.log")), c.bytes);
  }
}

TEST(TableLog, AnEmptyFileOrATornHeaderIsGivenItsHeaderAgain) {
  TempDir src("table-log");
  const auto ends = MakeLog(src.path(), 0);
  const std::string header = ReadBytes(src.File("u1.log"));
  for (std::uint64_t cut = 0; cut < ends[0]; ++cut) {
    SCOPED_TRACE("header cut at " + std::to_string(cut));
    TempDir dir("table-log");
    WriteBytes(dir.File("u1.log"), header.substr(0, cut));
    {
      auto opened = MustOpen(dir.path(), Header());
      EXPECT_TRUE(opened.writes.empty());
      EXPECT_EQ(opened.warning.empty(), cut == 0) << opened.warning;
      EXPECT_EQ(ReadBytes(dir.File("u1.log")), header);
      ASSERT_TRUE(opened.log->Append(LogWrite(1)).ok());
      ASSERT_TRUE(opened.log->Sync().ok());
    }
    EXPECT_EQ(Serialized(MustOpen(dir.path(), Header()).writes), Serialized({1}));
  }
  TempDir dir("table-log");
  WriteBytes(dir.File("u1.log"), header.substr(0, 5) + std::string(4096, '\0'));
  EXPECT_TRUE(MustOpen(dir.path(), Header()).writes.empty());
  EXPECT_EQ(ReadBytes(dir.File("u1.log")), header);
}

TEST(TableLog, RetireMovesTheLogToDroppedAndANewOpenStartsEmpty) {
  TempDir dir("table-log");
  fs::create_directory(dir.File("tables"));
  fs::create_directory(dir.File("dropped"));
  const std::string tables = dir.File("tables");
  const std::string dropped = dir.File("dropped");
  const auto before_ms =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  std::vector<std::string> retired;
  for (int round = 0; round < 3; ++round) {  // quickly: the same ms must not clash
    auto opened = MustOpen(tables, Header());
    EXPECT_TRUE(opened.writes.empty()) << "round " << round;
    ASSERT_TRUE(opened.log->Append(LogWrite(round)).ok());
    ASSERT_TRUE(opened.log->Sync().ok());
    ASSERT_TRUE(opened.log->Retire(dropped).ok());
    EXPECT_FALSE(fs::exists(tables + "/u1.log"));
    retired.push_back(opened.log->path());
    EXPECT_EQ(fs::path(opened.log->path()).parent_path(), fs::path(dropped));
    const std::string name = fs::path(opened.log->path()).filename();
    ASSERT_EQ(name.rfind("u1-", 0), 0u) << name;
    EXPECT_GE(std::stoull(name.substr(3)), before_ms) << name;
    EXPECT_FALSE(opened.log->Append(LogWrite(99)).ok());
    EXPECT_FALSE(opened.log->Sync().ok());
  }
  std::sort(retired.begin(), retired.end());
  EXPECT_EQ(std::unique(retired.begin(), retired.end()), retired.end());
  EXPECT_EQ(std::distance(fs::directory_iterator(dropped), fs::directory_iterator()), 3);
  // A retired log is a whole log: it opens as one (renamed back into a tables dir).
  fs::create_directory(dir.File("check"));
  fs::copy_file(retired[0], dir.File("check/u1.log"));
  EXPECT_EQ(MustOpen(dir.File("check"), Header()).writes.size(), 1u);
  EXPECT_TRUE(MustOpen(tables, Header()).writes.empty());
}

TEST(TableLog, AWriteOverTheRecordLimitIsRefusedAndTheLogGoesOn) {
  TempDir dir("table-log");
  auto opened = MustOpen(dir.path(), Header());
  ipc::pb::TableLogWrite big = LogWrite(1, 1);
  big.mutable_updates(0)->mutable_update()->mutable_row()->mutable_datums(1)->set_string(
      std::string(kMaxTableLogRecord, 'x'));
  const Status status = opened.log->Append(big);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  big.Clear();
  const std::uint64_t before = opened.log->bytes();
  EXPECT_EQ(fs::file_size(dir.File("u1.log")), before);
  ASSERT_TRUE(opened.log->Append(LogWrite(2)).ok());
  ASSERT_TRUE(opened.log->Sync().ok());
  opened.log.reset();
  EXPECT_EQ(Serialized(MustOpen(dir.path(), Header()).writes), Serialized({2}));
}

TEST(TableLog, AnAppendThatRunsOutOfRoomPartWayIsCutOffAndTheLogGoesOn) {
  TempDir dir("table-log");
  auto opened = MustOpen(dir.path(), Header());
  ASSERT_TRUE(opened.log->Append(LogWrite(1)).ok());
  const std::uint64_t good = opened.log->bytes();
  // The file may grow by 100 bytes more: a bigger record is written in part (a short write),
  // then write(2) fails with EFBIG (SIGXFSZ ignored for the while).
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = good + 100;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const Status status = opened.log->Append(LogWrite(2, 50));
  const Status fits = opened.log->Append(LogWrite(3, 1));
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(status.code(), StatusCode::kInternal) << status.ToString();
  EXPECT_NE(status.message().find("File too large"), std::string::npos) << status.message();
  EXPECT_TRUE(fits.ok()) << fits.ToString();
  ASSERT_TRUE(opened.log->Sync().ok());
  EXPECT_EQ(opened.log->bytes(), fs::file_size(dir.File("u1.log")));
  opened.log.reset();
  auto again = MustOpen(dir.path(), Header());
  std::vector<std::string> want = Serialized({1});
  want.push_back(LogWrite(3, 1).SerializeAsString());
  EXPECT_EQ(Serialized(again.writes), want);
  EXPECT_EQ(again.warning, "");
}

TEST(TableLog, AnIdThatIsNotAFileNameIsRefused) {
  TempDir dir("table-log");
  for (const std::string id : {"", ".", "..", "../u1", "a/b"}) {
    auto r = TableLog::Open(dir.path(), Header(id));
    ASSERT_FALSE(r.ok()) << id;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << id;
  }
}

TEST(TableLog, ALogPathThatIsASymlinkIsRefused) {
  TempDir dir("table-log");
  MakeLog(dir.path(), 1);
  fs::create_symlink(dir.File("u1.log"), dir.File("u2.log"));
  auto r = TableLog::Open(dir.path(), Header("u2"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
}

TEST(DataDir, OpenCreatesTheDirectoryWithItsParentsPrivateAndTheLayoutInside) {
  TempDir tmp("data-dir");
  const std::string path = tmp.File("a/b/data");
  auto dd = DataDir::Open(path + "/", std::chrono::milliseconds(0));
  ASSERT_TRUE(dd.ok()) << dd.status().ToString();
  EXPECT_EQ((*dd)->path(), path);
  for (const std::string& d :
       {tmp.File("a"), tmp.File("a/b"), path, (*dd)->TablesDir(), (*dd)->DroppedDir()}) {
    struct stat st {};
    ASSERT_EQ(lstat(d.c_str(), &st), 0) << d;
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << d;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
  }
  EXPECT_EQ((*dd)->TablesDir(), path + "/tables");
  EXPECT_EQ((*dd)->DroppedDir(), path + "/dropped");
  EXPECT_EQ(ReadBytes(path + "/LOCK"), std::to_string(getpid()) + "\n");
  // Reopened once it is released: the same layout, fine.
  dd->reset();
  EXPECT_TRUE(DataDir::Open(path, std::chrono::milliseconds(0)).ok());
}

TEST(DataDir, ASecondOpenWaitsAboutItsWaitThenFailsNamingTheHolder) {
  TempDir tmp("data-dir");
  auto first = DataDir::Open(tmp.path(), std::chrono::milliseconds(0));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  auto second = DataDir::Open(tmp.path(), std::chrono::milliseconds(300));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(), "data dir " + tmp.path() + " is in use by pid " +
                                           std::to_string(getpid()) + " (another replica?)");
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_LT(waited, std::chrono::seconds(3));
  // The holder's pid is still in LOCK (the loser did not touch it).
  EXPECT_EQ(ReadBytes(tmp.File("LOCK")), std::to_string(getpid()) + "\n");
}

TEST(DataDir, AWaitingOpenGetsTheLockOnceTheHolderLetsGo) {
  TempDir tmp("data-dir");
  auto first = DataDir::Open(tmp.path(), std::chrono::milliseconds(0));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::thread release([&first] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    first->reset();
  });
  const auto start = std::chrono::steady_clock::now();
  auto second = DataDir::Open(tmp.path(), std::chrono::seconds(10));
  const auto waited = std::chrono::steady_clock::now() - start;
  release.join();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST(DataDir, APathThatIsNotADirectoryOrASymlinkedSubdirectoryIsRefused) {
  TempDir tmp("data-dir");
  tmp.Write("file", "x");
  auto r = DataDir::Open(tmp.File("file"), std::chrono::milliseconds(0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  r = DataDir::Open(tmp.File("file/below"), std::chrono::milliseconds(0));
  ASSERT_FALSE(r.ok());

  fs::create_directory(tmp.File("elsewhere"));
  fs::create_directory(tmp.File("data"));
  fs::create_directory_symlink(tmp.File("elsewhere"), tmp.File("data/tables"));
  r = DataDir::Open(tmp.File("data"), std::chrono::milliseconds(0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find("symlink"), std::string::npos) << r.status().message();

  // The data dir itself may be a symlink to a directory (a data volume linked in).
  fs::create_directory_symlink(tmp.File("elsewhere"), tmp.File("linked"));
  auto linked = DataDir::Open(tmp.File("linked"), std::chrono::milliseconds(0));
  ASSERT_TRUE(linked.ok()) << linked.status().ToString();
  EXPECT_TRUE(fs::is_directory(tmp.File("elsewhere/tables")));
}

}  // namespace
}  // namespace tandem::workers
