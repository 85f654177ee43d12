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
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "temp_dir.h"
#include "thorough.h"
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

// A write with `n` updates, as the table writer makes them (they are checked when read back):
// for a plain table rows (i*100+j, "v<i>") with diff j+1; for an upsert table (key k) upserts of
// those rows, every third update a delete of key i instead, so that every kind goes through the
// log. Its time rises with i; its uuid is "uuid-<i>".
ipc::pb::TableLogWrite LogWrite(int i, int n = 2, bool upsert = false) {
  ipc::pb::TableLogWrite w;
  w.set_uuid("uuid-" + std::to_string(i));
  w.set_time(1'700'000'000'000ull + static_cast<std::uint64_t>(i));
  for (int j = 0; j < n; ++j) {
    auto* u = w.add_updates();
    const auto row =
        s::MakeRow({s::IntDatum(i * 100 + j), s::StringDatum("v" + std::to_string(i))});
    if (!upsert) {
      *u->mutable_update()->mutable_row() = row;
      u->mutable_update()->set_diff(j + 1);
    } else if (j % 3 == 2) {
      *u->mutable_delete_() = s::MakeRow({s::IntDatum(i)});
    } else {
      *u->mutable_upsert() = row;
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
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE(opened.log->Append(LogWrite(i, 7, /*upsert=*/true)).ok());
    }
    ASSERT_TRUE(opened.log->Sync().ok());
    EXPECT_EQ(opened.log->bytes(), fs::file_size(dir.File("u1.log")));
  }
  auto opened = MustOpen(dir.path(), Header("u1", /*upsert=*/true));
  ASSERT_EQ(opened.writes.size(), 3u);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(opened.writes[i - 1].SerializeAsString(),
              LogWrite(i, 7, /*upsert=*/true).SerializeAsString());
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

// Format 1 keyed upserts by spelling (1.5 and 1.50 apart); format 2 by value. A format-1 log means
// the same where its upsert key has no numeric or interval column, and is read; one whose key has
// such a column could merge acknowledged rows on replay, and is refused, left as it is.
TEST(TableLog, AFormatOneLogIsReadUnlessItsUpsertKeyHasANumericOrAnIntervalColumn) {
  TempDir dir("table-log");
  auto format_one = [&](const std::string& id, ipc::pb::ScalarType key_type) {
    ipc::pb::TableLogRecord record;
    auto* h = record.mutable_header();
    h->set_format(1);
    h->set_id(id);
    *h->mutable_schema() =
        s::MakeSchema({s::MakeColumn("k", key_type), s::MakeColumn("v", ipc::pb::STRING, true)});
    h->add_upsert_key(0);
    WriteBytes(dir.File(id + ".log"), FrameTableLogRecord(record.SerializeAsString()));
    ipc::pb::TableLogHeader now = *h;
    now.set_format(kTableLogFormat);
    return now;
  };
  const auto ints = format_one("u1", ipc::pb::INT64);
  EXPECT_TRUE(TableLog::Open(dir.path(), ints).ok()) << "int64 keys meant the same";
  for (const auto& [id, type, column] :
       {std::tuple{"u2", ipc::pb::NUMERIC, "numeric column k"},
        std::tuple{"u3", ipc::pb::INTERVAL, "interval column k"}}) {
    const auto header = format_one(id, type);
    const std::string before = ReadBytes(dir.File(std::string(id) + ".log"));
    auto r = TableLog::Open(dir.path(), header);
    ASSERT_FALSE(r.ok()) << id;
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(r.status().message().find("it has format 1"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(column), std::string::npos) << r.status().message();
    EXPECT_EQ(ReadBytes(dir.File(std::string(id) + ".log")), before);
  }
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

// The copies of torn tails kept beside the log in `dir`: name → bytes.
std::map<std::string, std::string> TornCopies(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (name.find(".log.torn-") != std::string::npos) out[name] = ReadBytes(e.path());
  }
  return out;
}

// A damaged length in the middle of the log runs past its end like a torn last record does; the
// good records after it tell the two apart.
TEST(TableLog, ALengthPastTheEndWithGoodRecordsAfterItIsDamageNotATornTail) {
  TempDir dir("table-log");
  const auto ends = MakeLog(dir.path(), 4);
  std::string bytes = ReadBytes(dir.File("u1.log"));
  for (const std::uint32_t len : {std::uint32_t(bytes.size()), std::uint32_t{kMaxTableLogRecord}}) {
    SCOPED_TRACE("length " + std::to_string(len));
    for (int i = 0; i < 4; ++i) bytes[ends[2] + i] = static_cast<char>((len >> (8 * i)) & 0xff);
    WriteBytes(dir.File("u1.log"), bytes);
    auto r = TableLog::Open(dir.path(), Header());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("at byte offset " + std::to_string(ends[2])),
              std::string::npos)
        << r.status().message();
    EXPECT_EQ(ReadBytes(dir.File("u1.log")), bytes) << "writes 3 and 4 are still there";
    EXPECT_TRUE(TornCopies(dir.path()).empty());
  }
}

TEST(TableLog, ATornTailIsCopiedBesideTheLogBeforeItIsCut) {
  TempDir src("table-log");
  const auto ends = MakeLog(src.path(), 3);
  const std::string full = ReadBytes(src.File("u1.log"));
  TempDir dir("table-log");
  const std::string torn = full.substr(0, ends[2] + 13) + std::string(100, '\0');
  WriteBytes(dir.File("u1.log"), torn);
  auto opened = MustOpen(dir.path(), Header());
  EXPECT_EQ(Serialized(opened.writes), Serialized({1, 2}));
  const auto copies = TornCopies(dir.path());
  ASSERT_EQ(copies.size(), 1u);
  const auto& [name, kept] = *copies.begin();
  EXPECT_EQ(name.rfind("u1.log.torn-" + std::to_string(ends[2]) + "-", 0), 0u) << name;
  EXPECT_EQ(ReadBytes(dir.File("u1.log")) + kept, torn) << "nothing cut is lost";
  EXPECT_NE(opened.warning.find(dir.File(name)), std::string::npos) << opened.warning;
  struct stat st {};
  ASSERT_EQ(stat(dir.File(name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A large torn upsert write: its updates start with the write tag too (TableUpdate.upsert is field
// 2, length-delimited), so the search for a good record after the cut finds many candidates —
// none of which is a record. It is a torn tail, found so in one pass over the tail.
TEST(TableLog, ALargeTornUpsertWriteIsATornTail) {
  TempDir dir("table-log");
  std::uint64_t start = 0;
  {
    auto opened = MustOpen(dir.path(), Header("u1", /*upsert=*/true));
    ASSERT_TRUE(opened.log->Append(LogWrite(1, 3, /*upsert=*/true)).ok());
    start = opened.log->bytes();
    ASSERT_TRUE(opened.log->Append(LogWrite(2, 60'000, /*upsert=*/true)).ok());
    ASSERT_TRUE(opened.log->Sync().ok());
  }
  std::string bytes = ReadBytes(dir.File("u1.log"));
  bytes.resize(start + (bytes.size() - start) * 2 / 3);
  WriteBytes(dir.File("u1.log"), bytes);
  auto opened = MustOpen(dir.path(), Header("u1", /*upsert=*/true));
  ASSERT_EQ(opened.writes.size(), 1u);
  EXPECT_NE(opened.warning.find("torn tail at byte offset " + std::to_string(start)),
            std::string::npos)
      << opened.warning;
}

// Records whose checksum holds but that the table writer cannot have written: each is damage
// wherever it is — the middle or the end of the log — and the file is left as it is.
TEST(TableLog, AWriteTheWriterCannotHaveMadeIsDamageNeverReplayed) {
  struct Case {
    std::string what;
    std::function<void(ipc::pb::TableLogWrite&)> damage;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"an upsert in a plain table",
       [](auto& w) {
         const ipc::pb::Row row = w.updates(0).update().row();  // mutable_upsert() clears it
         *w.mutable_updates(0)->mutable_upsert() = row;
       },
       "has no upsert key"},
      {"a string in the int64 column",
       [](auto& w) {
         w.mutable_updates(0)->mutable_update()->mutable_row()->mutable_datums(0)->set_string("x");
       },
       "does not fit the table"},
      {"a row of the wrong arity",
       [](auto& w) { w.mutable_updates(0)->mutable_update()->mutable_row()->add_datums(); },
       "does not fit the table"},
      {"NULL in the non-null column",
       [](auto& w) {
         w.mutable_updates(0)->mutable_update()->mutable_row()->mutable_datums(0)->Clear();
       },
       "does not fit the table"},
      {"a diff of zero", [](auto& w) { w.mutable_updates(0)->mutable_update()->set_diff(0); },
       "diff is 0"},
      {"the uuid of an earlier write", [](auto& w) { w.set_uuid("uuid-1"); }, "second write"},
      {"no uuid", [](auto& w) { w.clear_uuid(); }, "a uuid of 0 bytes"},
      {"a time past the last a write can have", [](auto& w) { w.set_time(kMaxTableWriteTime + 1); },
       "past the last"},
      {"the closed frontier's time", [](auto& w) { w.set_time(UINT64_MAX); }, "past the last"},
      {"a time before the write ahead of it", [](auto& w) { w.set_time(5); }, "before the write"},
  };
  for (const auto& c : cases) {
    for (const bool last : {false, true}) {
      SCOPED_TRACE(c.what + (last ? " (the last record)" : " (in the middle)"));
      TempDir dir("table-log");
      {
        auto opened = MustOpen(dir.path(), Header());
        ASSERT_TRUE(opened.log->Append(LogWrite(1)).ok());
        ipc::pb::TableLogWrite bad = LogWrite(2);
        c.damage(bad);
        ASSERT_TRUE(opened.log->Append(bad).ok());
        if (!last) {
          ASSERT_TRUE(opened.log->Append(LogWrite(3)).ok());
        }
        ASSERT_TRUE(opened.log->Sync().ok());
      }
      const std::string before = ReadBytes(dir.File("u1.log"));
      auto r = TableLog::Open(dir.path(), Header());
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
      EXPECT_NE(r.status().message().find("write 2, "), std::string::npos) << r.status().message();
      EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
      EXPECT_EQ(ReadBytes(dir.File("u1.log")), before);
    }
  }
}

// Every kind of damage at a random place in a random log. Whatever Open says, nothing that was
// in the file is gone: either Open refuses (Corruption) and the file is as it was, or it returns
// the writes of the records before the damage, in order, and what it cut off is in the copy
// beside the log — the log and the copy together are the damaged file, byte for byte.
TEST(TableLog, RandomDamageNeverLosesWhatPrecedesItAndIsNeverCutSilently) {
  const char* env = std::getenv("TANDEM_TEST_SEED");
  const std::uint64_t seed = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  SCOPED_TRACE("rerun: TANDEM_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto below = [&](std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng);
  };
  enum Kind {
    kLengthPastTheEnd,
    kZeroLength,
    kHeaderAsAWrite,
    kWrongType,
    kWrongArity,
    kNullInNonNull,
    kDuplicatedUuid,
    kReservedTime,
    kZeroFilledTail,
    kGarbageBetweenRecords,
    kCutAnywhere,
    kFlippedByte,
    kKinds
  };
  const char* const kNames[] = {"length past the end", "zero length",
                                "a header as a write", "wrong type",
                                "wrong arity",         "null in non-null",
                                "duplicated uuid",     "reserved time",
                                "zero-filled tail",    "garbage between records",
                                "cut anywhere",        "flipped byte"};
  std::map<int, int> refused, opened_ok;
  const int kRounds = testing::Thorough() ? 2000 : 240;
  for (int round = 0; round < kRounds; ++round) {
    const int n = 1 + static_cast<int>(below(6));
    const auto kind = static_cast<Kind>(round % kKinds);
    const int victim = 1 + static_cast<int>(below(static_cast<std::uint64_t>(n)));  // 1..n
    SCOPED_TRACE("round " + std::to_string(round) + ": " + kNames[kind] + " at write " +
                 std::to_string(victim) + " of " + std::to_string(n));
    // The log as the writer frames it (Append writes exactly these bytes), then damaged.
    auto framed = [](auto fill) {
      ipc::pb::TableLogRecord record;
      fill(record);
      return FrameTableLogRecord(record.SerializeAsString());
    };
    std::string original = framed([](auto& r) { *r.mutable_header() = Header(); });
    std::vector<std::uint64_t> ends{original.size()};  // record ends, the header's first
    std::vector<ipc::pb::TableLogWrite> writes;
    for (int i = 1; i <= n; ++i) {
      ipc::pb::TableLogWrite w = LogWrite(i, 1 + static_cast<int>(below(4)));
      auto* row = w.mutable_updates(0)->mutable_update()->mutable_row();
      if (i == victim) {
        switch (kind) {
          case kWrongType:
            row->mutable_datums(1)->set_int64(7);
            break;
          case kWrongArity:
            row->mutable_datums()->RemoveLast();
            break;
          case kNullInNonNull:
            row->mutable_datums(0)->Clear();
            break;
          case kDuplicatedUuid:
            if (i > 1) {
              w.set_uuid("uuid-1");
            } else {
              w.clear_uuid();
            }
            break;
          case kReservedTime:
            w.set_time(kMaxTableWriteTime + 1 + below(2));
            break;
          default:
            break;
        }
      }
      writes.push_back(w);
      original += i == victim && kind == kHeaderAsAWrite
                      ? framed([](auto& r) { *r.mutable_header() = Header(); })
                      : framed([&](auto& r) { *r.mutable_write() = w; });
      ends.push_back(original.size());
    }
    std::string bytes = original;
    const std::uint64_t at = ends[static_cast<std::size_t>(victim) - 1];  // the victim's start
    auto put_le32 = [&](std::uint64_t pos, std::uint32_t v) {
      for (std::uint64_t i = 0; i < 4; ++i)
        bytes[pos + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    };
    const std::uint64_t body = bytes.size() - ends[0];
    switch (kind) {
      case kLengthPastTheEnd:
        put_le32(at, static_cast<std::uint32_t>(bytes.size() - at + below(1000)));
        break;
      case kZeroLength:
        put_le32(at, 0);
        break;
      case kZeroFilledTail:
        bytes += std::string(1 + below(5000), '\0');
        break;
      case kGarbageBetweenRecords: {
        std::string garbage(1 + below(40), '\0');
        for (char& ch : garbage) ch = static_cast<char>(below(256));
        bytes.insert(at, garbage);
        break;
      }
      case kCutAnywhere:
        bytes.resize(ends[0] + below(body));
        break;
      case kFlippedByte:
        bytes[ends[0] + below(body)] ^= static_cast<char>(1 + below(255));
        break;
      default:
        break;
    }
    // Where the damage starts: the victim's record for a record that is wrong as written, else
    // the first byte that differs.
    const bool written_wrong = kind == kHeaderAsAWrite || kind == kWrongType ||
                               kind == kWrongArity || kind == kNullInNonNull ||
                               kind == kDuplicatedUuid || kind == kReservedTime;
    std::uint64_t damage = 0;
    while (damage < bytes.size() && damage < original.size() && bytes[damage] == original[damage]) {
      ++damage;
    }
    if (written_wrong) damage = at;
    std::size_t intact = 0;  // writes whose records end before the damage
    for (std::size_t i = 1; i < ends.size(); ++i) {
      if (ends[i] <= damage) intact = i;
    }
    TempDir dir("table-log");
    WriteBytes(dir.File("u1.log"), bytes);

    auto r = TableLog::Open(dir.path(), Header());
    if (!r.ok()) {
      ++refused[kind];
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
      EXPECT_EQ(ReadBytes(dir.File("u1.log")), bytes) << "a refused log is left as it is";
      EXPECT_TRUE(TornCopies(dir.path()).empty());
      continue;
    }
    ++opened_ok[kind];
    // The writes returned are the first ones, as written; every record that ends before the
    // damage is among them.
    const auto got = Serialized(r->writes);
    ASSERT_LE(got.size(), writes.size());
    EXPECT_EQ(got, Serialized(std::vector<ipc::pb::TableLogWrite>(
                       writes.begin(), writes.begin() + static_cast<std::ptrdiff_t>(got.size()))));
    EXPECT_GE(got.size(), intact) << "a write before the damage was lost";
    EXPECT_FALSE(written_wrong) << "a record written wrong was replayed";
    const std::string now = ReadBytes(dir.File("u1.log"));
    const auto copies = TornCopies(dir.path());
    if (now.size() < bytes.size()) {
      EXPECT_NE(r->warning, "");
      if (bytes.find_first_not_of('\0', now.size()) == std::string::npos) {
        EXPECT_TRUE(copies.empty()) << "zeros hold nothing to keep";
        continue;
      }
      ASSERT_EQ(copies.size(), 1u) << "cut without a copy";
      EXPECT_EQ(now + copies.begin()->second, bytes) << "the log and the copy are the damaged file";
    } else {
      EXPECT_EQ(now, bytes);
      EXPECT_TRUE(copies.empty());
    }
  }
  // Every kind happened, and the kinds that damage a written record were refused at least once.
  for (const Kind k : {kLengthPastTheEnd, kZeroLength, kHeaderAsAWrite, kWrongType, kWrongArity,
                       kNullInNonNull, kDuplicatedUuid, kReservedTime, kGarbageBetweenRecords}) {
    EXPECT_GT(refused[k], 0) << kNames[k] << " was never refused";
  }
  EXPECT_GT(opened_ok[kZeroFilledTail], 0);
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
