// tandem-shm, the real binary, against segments made in-process: a live one (this process is its
// supervisor, with a Publisher and a Reader per row) and stale ones (made by a forked child that
// exits without removing them), for ls/info/slots/dump/watch/gc, table and --json, and the
// error exits.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/row.h"
#include "run_binary.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "test_segment.h"

#ifndef TANDEM_SHM_BIN
#error "TANDEM_SHM_BIN must name the tandem-shm binary"
#endif

namespace tandem::shm {
namespace {

using testing::TestSegment;
using testing::UniqueSegmentName;

// tandem-shm's exit status is `code`; stdout and stderr are captured separately.
struct ToolRun {
  int code = -1;
  std::string out, err;
};

// Runs tandem-shm with `args` (in this test's environment, as is).
ToolRun RunTool(const std::vector<std::string>& args) {
  testing::RunBinaryOptions options;
  options.strip_tandem_env = false;
  const testing::BinaryRun run = testing::RunBinary(TANDEM_SHM_BIN, args, options);
  EXPECT_NE(run.exit, -1) << "could not start " << TANDEM_SHM_BIN;
  return {run.exit, run.out, run.err};
}

std::string Describe(const ToolRun& r) {
  return "exit " + std::to_string(r.code) + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

// A strict JSON syntax check (RFC 8259), enough to know the tool printed one valid document.
class JsonChecker {
 public:
  static bool Valid(const std::string& text) {
    JsonChecker c(text);
    c.Ws();
    if (!c.Value()) return false;
    c.Ws();
    return c.pos_ == text.size();
  }

 private:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  void Ws() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_])) ++pos_;
  }
  bool Lit(const char* lit) {
    const std::size_t n = std::strlen(lit);
    if (s_.compare(pos_, n, lit) != 0) return false;
    pos_ += n;
    return true;
  }
  bool String() {
    if (pos_ >= s_.size() || s_[pos_] != '"') return false;
    for (++pos_; pos_ < s_.size(); ++pos_) {
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++pos_ >= s_.size()) return false;
        if (s_[pos_] == 'u') {
          for (int i = 0; i < 4; ++i) {
            if (++pos_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_]))) {
              return false;
            }
          }
        } else if (!std::strchr("\"\\/bfnrt", s_[pos_])) {
          return false;
        }
      }
    }
    return false;
  }
  bool Number() {
    const std::size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::strchr("0123456789.eE+-", s_[pos_])) ++pos_;
    return pos_ > start && std::isdigit(static_cast<unsigned char>(s_[pos_ - 1]));
  }
  bool Value() {
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++pos_;
      Ws();
      if (pos_ < s_.size() && s_[pos_] == close) {
        ++pos_;
        return true;
      }
      for (;;) {
        Ws();
        if (c == '{') {
          if (!String()) return false;
          Ws();
          if (!Lit(":")) return false;
          Ws();
        }
        if (!Value()) return false;
        Ws();
        if (Lit(",")) continue;
        return Lit(close == '}' ? "}" : "]");
      }
    }
    if (c == '"') return String();
    if (Lit("true") || Lit("false") || Lit("null")) return true;
    return Number();
  }
  const std::string& s_;
  std::size_t pos_ = 0;
};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const SlotKey kIndex{GlobalId::User(7), 10};

std::string Key(std::int64_t k) { return EncodeRow({k}); }
std::string Val(std::int64_t v) { return EncodeRow({v}); }

// Publishes kIndex on `ordinal` of `segment`: rows keyed 1..3 and 's', an error, upper 20.
void PublishRows(Publisher& pub, std::uint32_t ordinal) {
  auto ref = pub.BindSlot(kIndex);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  std::vector<Update> ups;
  if (ordinal == 0) {
    ups = {{Key(1), Val(100), 12, 1},
           {Key(2), Val(200), 12, 1},
           {Key(2), Val(200), 15, 1},  // count 2 from time 15
           {EncodeRow({std::string("q\"s")}), EncodeRow({std::string("a\tb"), 2.5}), 13, 3},
           {std::string(1, '\0') + "division by zero", "", 14, 1}};
  } else {
    ups = {{Key(3), Val(300), 11, 1}, {Key(4), Val(400), 16, -1}, {Key(4), Val(400), 11, 1}};
  }
  ASSERT_TRUE(pub.Append(*ref, ups, Frontier::At(20)).ok());
}

// A live two-row replica made by this process: it holds the segment's lock like a supervisor.
class ShmToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(seg_.segment, nullptr);
    for (std::uint32_t o = 0; o < 2; ++o) {
      auto p = Publisher::Attach(seg_.segment.get(), o);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      (*p)->SetReaderTable(seg_.table.get());
      pubs_.push_back(std::move(p).value());
      auto r = Reader::Attach(seg_.segment.get(), o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      readers_.push_back(std::move(r).value());
      ASSERT_TRUE(readers_.back()->Follow(kIndex).ok());
      PublishRows(*pubs_.back(), o);
    }
    seg_.segment->SetRuntime(Role::kMaintenance, getpid(), RuntimeState::kReady);
  }
  const std::string& name() const { return seg_.name; }
  // Reader-table entries a tool left claimed (its pid still in them).
  int claimed_entries() {
    int claimed = 0;
    for (std::uint32_t i = 0; i < kReaderTableEntries; ++i)
      claimed += seg_.table->slot(i).pid.load() != 0;
    return claimed;
  }

  TestSegment seg_{TestSegment::Options(2)};
  std::vector<std::unique_ptr<Publisher>> pubs_;
  std::vector<std::unique_ptr<Reader>> readers_;
};

TEST_F(ShmToolTest, LsListsTheLiveSegment) {
  ToolRun r = RunTool({"ls", "--prefix", name()});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, name())) << r.out;
  EXPECT_TRUE(Contains(r.out, "alive")) << r.out;
  EXPECT_TRUE(Contains(r.out, "test")) << "replica id\n" << r.out;

  r = RunTool({"ls", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"name\":\"" + name() +
                                  "\",\"supervisor_alive\":true,"
                                  "\"supervisor_pid\":" +
                                  std::to_string(getpid())))
      << r.out;
}

TEST_F(ShmToolTest, InfoShowsHeaderRuntimesAndBytes) {
  ToolRun r = RunTool({"info", name()});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "two-runtime")) << r.out;
  EXPECT_TRUE(Contains(r.out, "pid " + std::to_string(getpid()) + " (alive)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "2 live of 32")) << r.out;
  EXPECT_TRUE(Contains(r.out, "maintenance")) << r.out;

  r = RunTool({"info", name(), "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"replica_id\":\"test\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"supervisor_alive\":true")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"workers\":2")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"live_slots\":2")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"segment_bytes\":" + std::to_string(32ull << 20))) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"used_bytes\":")) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"role\":\"maintenance\",\"pid\":" + std::to_string(getpid()) +
                                  ",\"state\":\"ready\",\"alive\":true}"))
      << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "{\"role\":\"interactive\",\"pid\":0,\"state\":\"absent\","
                       "\"alive\":false}"))
      << r.out;
}

TEST_F(ShmToolTest, SlotsShowsEveryOrdinal) {
  ToolRun r = RunTool({"slots", name()});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "2 live slots")) << r.out;
  EXPECT_TRUE(Contains(r.out, "UPPER")) << r.out;
  // Two data lines, one per ordinal, for u7@10, upper [20], since [10] (the peer hold at as_of).
  std::size_t lines = 0;
  for (std::size_t p = 0; (p = r.out.find("\nu7 ", p)) != std::string::npos; ++p) ++lines;
  EXPECT_EQ(lines, 2u) << r.out;
  EXPECT_TRUE(Contains(r.out, "[20]")) << r.out;
  EXPECT_TRUE(Contains(r.out, "filled")) << r.out;

  r = RunTool({"slots", name(), "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"id\":\"u7\",\"as_of\":10,\"ordinal\":0,")) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"id\":\"u7\",\"as_of\":10,\"ordinal\":1,")) << r.out;
  // Frontiers as JSON numbers (null when empty), with "closed" beside the upper.
  EXPECT_TRUE(Contains(r.out,
                       "\"upper\":20,\"closed\":false,\"since\":10,\"own_frontier\":10,"
                       "\"peer_hold\":10,\"import_hold\":null,\"importers\":0,"
                       "\"reader_holds\":0,\"held_by\":[\"own_frontier\"],\"held_at\":10,"
                       "\"flags\":[\"filled\"]"))
      << r.out;
}

// The data line of `id` on `ordinal` in a slots table (empty when there is none).
std::string SlotLine(const std::string& table, const std::string& id, std::uint32_t ordinal) {
  std::size_t p = 0;
  while ((p = table.find("\n" + id + " ", p)) != std::string::npos) {
    const std::size_t end = table.find('\n', p + 1);
    const std::string line = table.substr(p + 1, end - p - 1);
    // ID, AS_OF, ORD: the third column.
    std::vector<std::string> cols;
    for (std::size_t at = 0; at < line.size();) {
      const std::size_t start = line.find_first_not_of(' ', at);
      if (start == std::string::npos) break;
      const std::size_t stop = line.find(' ', start);
      cols.push_back(line.substr(start, stop - start));
      at = stop == std::string::npos ? line.size() : stop;
    }
    if (cols.size() > 2 && cols[2] == std::to_string(ordinal)) return line;
    p = end;
  }
  return {};
}

TEST_F(ShmToolTest, SlotsSayWhichHoldKeepsSinceBack) {
  // Ordinal 0: the controller allowed 15 on maintenance's stream, interactive has not applied it
  // yet: the peer hold (10) holds since back.
  auto p0 = pubs_[0]->BindSlot(kIndex);
  ASSERT_TRUE(p0.ok());
  ASSERT_TRUE(pubs_[0]->AllowCompaction(*p0, Frontier::At(15)).ok());
  // Ordinal 1: both runtimes applied 15, and two of maintenance's own importers hold the index
  // at 12.
  auto p1 = pubs_[1]->BindSlot(kIndex);
  ASSERT_TRUE(p1.ok());
  ASSERT_TRUE(pubs_[1]->HoldForImport(*p1, 12).ok());
  ASSERT_TRUE(pubs_[1]->HoldForImport(*p1, 12).ok());
  auto f1 = readers_[1]->Follow(kIndex);
  ASSERT_TRUE(f1.ok());
  ASSERT_TRUE(readers_[1]->AdvanceHold(*f1, Frontier::At(15)).ok());
  ASSERT_TRUE(pubs_[1]->AllowCompaction(*p1, Frontier::At(15)).ok());

  ToolRun r = RunTool({"slots", name()});
  ASSERT_EQ(r.code, 0) << Describe(r);
  for (const char* header :
       {"OWN", "PEER_HOLD", "IMPORT_HOLD", "IMPORTERS", "READER_HOLDS", "HELD_BY"}) {
    EXPECT_TRUE(Contains(r.out, header)) << header << "\n" << r.out;
  }
  EXPECT_TRUE(Contains(SlotLine(r.out, "u7", 0), " peer hold 10 ")) << r.out;
  EXPECT_TRUE(Contains(SlotLine(r.out, "u7", 1), " import hold 12 (2 importers) ")) << r.out;

  r = RunTool({"slots", name(), "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "\"ordinal\":0,\"slot\":0,\"upper\":20,\"closed\":false,\"since\":10,"
                       "\"own_frontier\":15,\"peer_hold\":10,\"import_hold\":null,"
                       "\"importers\":0,\"reader_holds\":0,\"held_by\":[\"peer_hold\"],"
                       "\"held_at\":10,"))
      << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "\"since\":12,\"own_frontier\":15,\"peer_hold\":15,\"import_hold\":12,"
                       "\"importers\":2,\"reader_holds\":0,\"held_by\":[\"import_hold\"],"
                       "\"held_at\":12,"))
      << r.out;

  // Ordinal 0 again: a read the reading side keeps at 10 (a waiting peek, a one-shot import)
  // keeps the peer hold there although interactive applied 15 now, and an importer holds 10
  // too: both hold since back, and the reader's hold shows beside the peer hold it keeps down.
  auto f0 = readers_[0]->Follow(kIndex);
  ASSERT_TRUE(f0.ok());
  ASSERT_TRUE(readers_[0]->HoldRead(*f0, 10));
  ASSERT_TRUE(readers_[0]->AdvanceHold(*f0, Frontier::At(15)).ok());
  ASSERT_TRUE(pubs_[0]->HoldForImport(*p0, 10).ok());
  r = RunTool({"slots", name()});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(SlotLine(r.out, "u7", 0),
                       " peer hold 10 (1 reader hold) and import hold 10 (1 importer) "))
      << r.out;
  r = RunTool({"slots", name(), "--json"});
  EXPECT_TRUE(Contains(r.out,
                       "\"peer_hold\":10,\"import_hold\":10,\"importers\":1,\"reader_holds\":1,"
                       "\"held_by\":[\"peer_hold\",\"import_hold\"],\"held_at\":10,"))
      << r.out;

  // Released: the own frontier is all that is left below.
  readers_[0]->ReleaseRead(*f0, 10);
  ASSERT_TRUE(pubs_[0]->ReleaseImportHold(*p0, 10).ok());
  r = RunTool({"slots", name(), "--json"});
  EXPECT_TRUE(Contains(r.out,
                       "\"ordinal\":0,\"slot\":0,\"upper\":20,\"closed\":false,\"since\":15,"
                       "\"own_frontier\":15,\"peer_hold\":15,\"import_hold\":null,"
                       "\"importers\":0,\"reader_holds\":0,\"held_by\":[\"own_frontier\"],"
                       "\"held_at\":15,"))
      << r.out;
}

TEST_F(ShmToolTest, DumpShowsRowsAndErrorsAtTheNewestTime) {
  ToolRun r = RunTool({"dump", name(), "u7"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "u7@10 in " + name() + " at time 19")) << r.out;
  EXPECT_TRUE(Contains(r.out, "(100)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "error: division by zero")) << r.out;
  EXPECT_FALSE(Contains(r.out, "(400)")) << "retracted at 16\n" << r.out;
  EXPECT_TRUE(Contains(r.out, "4 rows, 1 error")) << r.out;
  // Strings in the datum syntax: quoted, with \" and \t escaped (a tab never splits a cell).
  EXPECT_TRUE(Contains(r.out, "  0  (\"q\\\"s\")  ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  (\"a\\tb\", 2.5)  ")) << r.out;

  r = RunTool({"dump", name(), "u7", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"id\":\"u7\",\"as_of\":10,\"time\":19")) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"ordinal\":0,\"key\":[1],\"val\":[100],\"count\":1}")) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"ordinal\":0,\"key\":[2],\"val\":[200],\"count\":2}")) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"ordinal\":1,\"key\":[3],\"val\":[300],\"count\":1}")) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "{\"ordinal\":0,\"key\":[\"q\\\"s\"],\"val\":[\"a\\tb\",2.5],"
                       "\"count\":3}"))
      << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "\"errors\":[{\"ordinal\":0,\"message\":\"division by zero\","
                       "\"count\":1}]"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "\"truncated\":false")) << r.out;
}

TEST_F(ShmToolTest, DumpAtATimeOnOneOrdinalWithALimit) {
  ToolRun r = RunTool({"dump", name(), "u7", "--at", "12", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"time\":12")) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"ordinal\":0,\"key\":[2],\"val\":[200],\"count\":1}")) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"ordinal\":1,\"key\":[4],\"val\":[400],\"count\":1}")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"errors\":[]")) << "the error is at 14\n" << r.out;

  r = RunTool({"dump", name(), "u7", "--ordinal", "1", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"rows\":[{\"ordinal\":1,\"key\":[3],\"val\":[300],\"count\":1}]"))
      << r.out;

  r = RunTool({"dump", name(), "u7", "--limit", "2", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"truncated\":true")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"rows\":[{\"ordinal\":0,\"key\":[1],\"val\":[100],\"count\":1}]"))
      << "the error sorts first, then key 1\n"
      << r.out;

  r = RunTool({"dump", name(), "u7", "--as-of", "10", "--limit", "1"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "truncated by --limit 1")) << r.out;
}

TEST_F(ShmToolTest, DumpRefusesTimesOutsideSinceAndUpper) {
  ToolRun r = RunTool({"dump", name(), "u7", "--at", "5"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "time 5 is before since [10]")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  r = RunTool({"dump", name(), "u7", "--at", "20", "--json"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "not complete yet (upper [20])")) << r.err;
}

TEST_F(ShmToolTest, DumpErrors) {
  ToolRun r = RunTool({"dump", name(), "u8"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "no slot for index u8")) << r.err;

  r = RunTool({"dump", name(), "u7", "--as-of", "11"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "as_of present: 10")) << r.err;

  r = RunTool({"dump", name(), "u7", "--ordinal", "2"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "ordinal 2 is out of range")) << r.err;

  r = RunTool({"dump", name(), "not-an-id"});
  EXPECT_EQ(r.code, 64) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "invalid index id")) << r.err;
}

// Issue 10 item 3: an index whose sources have closed (the empty upper on every ordinal) is
// readable at every time from since on; by default the dump shows its final contents.
TEST_F(ShmToolTest, DumpOfAClosedIndexShowsItsFinalContents) {
  const SlotKey closed{GlobalId::User(9), 10};
  for (std::uint32_t o = 0; o < 2; ++o) {
    ASSERT_TRUE(readers_[o]->Follow(closed).ok());
    auto ref = pubs_[o]->BindSlot(closed);
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    // Rows only after as_of (since 10): a read at since would show none of them.
    const std::int64_t k = 100 + o;
    ASSERT_TRUE(pubs_[o]->Append(*ref, {{Key(k), Val(k), 12, 1}}, Frontier::At(13)).ok());
    ASSERT_TRUE(pubs_[o]->Append(*ref, {{Key(k + 10), Val(k), 40, 2}}, Frontier::Empty()).ok());
  }
  ToolRun r = RunTool({"dump", name(), "u9", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"time\":18446744073709551614,\"closed\":true")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"since\":10,\"upper\":null")) << r.out;
  for (const char* row : {"{\"ordinal\":0,\"key\":[100],\"val\":[100],\"count\":1}",
                          "{\"ordinal\":0,\"key\":[110],\"val\":[100],\"count\":2}",
                          "{\"ordinal\":1,\"key\":[101],\"val\":[101],\"count\":1}",
                          "{\"ordinal\":1,\"key\":[111],\"val\":[101],\"count\":2}"}) {
    EXPECT_TRUE(Contains(r.out, row)) << row << "\n" << r.out;
  }
  r = RunTool({"dump", name(), "u9"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(
      r.out, "u9@10 in " + name() + " at time 18446744073709551614 (closed: its final contents)"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "\n4 rows\n")) << r.out;
  r = RunTool({"dump", name(), "u9", "--at", "12", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out,
                       "\"rows\":[{\"ordinal\":0,\"key\":[100],\"val\":[100],\"count\":1},"
                       "{\"ordinal\":1,\"key\":[101],\"val\":[101],\"count\":1}]"))
      << r.out;
  r = RunTool({"slots", name(), "--json"});
  EXPECT_TRUE(Contains(r.out,
                       "\"id\":\"u9\",\"as_of\":10,\"ordinal\":0,\"slot\":1,\"upper\":null,"
                       "\"closed\":true"))
      << r.out;
}

// Issue 10 item 9: NULL prints as null and the string "null" as "null", in tables and JSON.
TEST_F(ShmToolTest, DumpTellsNullFromTheStringNull) {
  const SlotKey strings{GlobalId::User(5), 0};
  ASSERT_TRUE(readers_[0]->Follow(strings).ok());
  auto ref = pubs_[0]->BindSlot(strings);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_TRUE(pubs_[0]
                  ->Append(*ref,
                           {{EncodeRow({Null{}}), EncodeRow({std::string("line\nbreak")}), 0, 1},
                            {EncodeRow({std::string("null")}), EncodeRow({Null{}}), 0, 1}},
                           Frontier::At(1))
                  .ok());
  ToolRun r = RunTool({"dump", name(), "u5", "--ordinal", "0"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "  0  (null)    (\"line\\nbreak\")      1\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  0  (\"null\")  (null)               1\n")) << r.out;
  r = RunTool({"dump", name(), "u5", "--ordinal", "0", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"key\":[null],\"val\":[\"line\\nbreak\"]")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"key\":[\"null\"],\"val\":[null]")) << r.out;
}

// Issue 10 item 10: with --json a failure is also JSON on stdout: {"error", "exit_code"}.
TEST_F(ShmToolTest, FailuresAreJsonWithJson) {
  ToolRun r = RunTool({"dump", name(), "u8", "--json"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(
      r.out, "{\"error\":\"no slot for index u8 in segment '" + name() + "'\",\"exit_code\":1}"))
      << r.out;
  EXPECT_TRUE(Contains(r.err, "no slot for index u8")) << r.err;
  r = RunTool({"dump", name(), "u7", "--at", "5", "--json"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"exit_code\":1}")) << r.out;
  r = RunTool({"dump", name(), "not-an-id", "--json"});
  EXPECT_EQ(r.code, 64) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"exit_code\":64}")) << r.out;
  r = RunTool({"dump", name(), "u7", "--at", "soon", "--json"});
  EXPECT_EQ(r.code, 64) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"exit_code\":64}")) << r.out;
  r = RunTool({"info", UniqueSegmentName("missing"), "--json"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "no segment named")) << r.out;
}

TEST_F(ShmToolTest, WatchRefreshesCountTimes) {
  ToolRun r = RunTool({"watch", name(), "--interval", "10", "--count", "3"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "refresh 3")) << r.out;
  EXPECT_FALSE(Contains(r.out, "\x1b[")) << "no ANSI when stdout is not a terminal";

  r = RunTool({"watch", name(), "--interval", "10", "--count", "2", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = r.out.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(r.out.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (const auto& line : lines) {
    EXPECT_TRUE(JsonChecker::Valid(line)) << line;
    EXPECT_TRUE(Contains(line, "\"id\":\"u7\"")) << line;
  }
}

TEST_F(ShmToolTest, ReadingALiveSegmentLeavesTheRuntimeUndisturbed) {
  // Everything the tool did released its reader-table entries: the publisher keeps going, the
  // reader still reads, and a snapshot taken now sees every row.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(RunTool({"dump", name(), "u7"}).code, 0);
  auto ref = pubs_[0]->BindSlot(kIndex);
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(pubs_[0]->Append(*ref, {{Key(9), Val(900), 21, 1}}, Frontier::At(30)).ok());
  auto followed = readers_[0]->Follow(kIndex);
  ASSERT_TRUE(followed.ok());
  auto snap = readers_[0]->Take(*followed);
  ASSERT_TRUE(snap.ok());
  std::vector<ValueCount> vals;
  ASSERT_TRUE(snap->Lookup(Key(9), 25, &vals).ok());
  ASSERT_EQ(vals.size(), 1u);
  EXPECT_GT(seg_.table->header().claims.load(), 0u) << "the tool announced in the reader table";
  EXPECT_EQ(claimed_entries(), 0) << "an entry left claimed";
  ToolRun r = RunTool({"dump", name(), "u7", "--json"});
  EXPECT_TRUE(Contains(r.out, "\"time\":19")) << "min upper over ordinals is 20\n" << r.out;
}

// Acceptance 4 in miniature: dump and watch in a loop against a publisher appending, merging
// and compacting as fast as it can. Every dump must succeed and be exact: at every time t the
// index holds exactly the row (t, t) with count 1 (each step inserts the new row and retracts the
// previous one), and the publisher must never be held up or see an error.
TEST(ShmTool, DumpAndWatchInALoopAgainstABusyPublisher) {
  TestSegment seg(TestSegment::Options(1, 32ull << 20, Mode::kSolo));
  ASSERT_NE(seg.segment, nullptr);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> steps{0};
  std::atomic<std::uint64_t> merges{0}, freed{0};
  std::string publisher_error;
  std::thread publisher([&] {
    auto pub = Publisher::Attach(seg.segment.get(), 0);
    if (!pub.ok()) {
      publisher_error = pub.status().ToString();
      return;
    }
    (*pub)->SetReaderTable(seg.table.get());  // the tool's reads are announced there
    auto ref = (*pub)->BindSlot(kIndex);
    if (!ref.ok()) {
      publisher_error = ref.status().ToString();
      return;
    }
    // Time 10 (as_of) inserts row 10; time t > 10 inserts t and retracts t-1.
    for (Time t = kIndex.as_of; !stop.load(); ++t) {
      std::vector<Update> ups = {
          {Key(static_cast<std::int64_t>(t)), Val(static_cast<std::int64_t>(t)), t, 1}};
      if (t > kIndex.as_of) {
        ups.push_back(
            {Key(static_cast<std::int64_t>(t - 1)), Val(static_cast<std::int64_t>(t - 1)), t, -1});
      }
      if (Status s = (*pub)->Append(*ref, ups, Frontier::At(t + 1)); !s.ok()) {
        publisher_error = s.ToString();
        return;
      }
      if (t > kIndex.as_of + 4) (void)(*pub)->AllowCompaction(*ref, Frontier::At(t - 4));
      (*pub)->Maintain();
      merges.store((*pub)->stats().merges);
      freed.store((*pub)->stats().freed);
      steps.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  while (steps.load() < 5 && publisher_error.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int i = 0; i < 25 && publisher_error.empty(); ++i) {
    ToolRun r = RunTool({"dump", seg.name, "u7", "--json"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    const std::size_t at = r.out.find("\"time\":");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string t = std::to_string(std::stoull(r.out.substr(at + 7)));
    EXPECT_TRUE(Contains(
        r.out, "\"rows\":[{\"ordinal\":0,\"key\":[" + t + "],\"val\":[" + t + "],\"count\":1}]"))
        << r.out;
    if (i % 5 == 0) {
      r = RunTool({"watch", seg.name, "--interval", "1", "--count", "3", "--json"});
      ASSERT_EQ(r.code, 0) << Describe(r);
    }
  }
  stop.store(true);
  publisher.join();
  EXPECT_EQ(publisher_error, "");
  EXPECT_GT(merges.load(), 0u) << "the publisher merged while the tool read";
  EXPECT_GT(freed.load(), 0u) << "and freed retired batches";
}

TEST(ShmTool, BadSegmentNamesFailWithAMessage) {
  const std::string missing = UniqueSegmentName("missing");
  for (const auto& cmd : {"info", "slots"}) {
    ToolRun r = RunTool({cmd, missing});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "no segment named '" + missing + "'")) << r.err;
  }
  ToolRun r = RunTool({"dump", missing, "u1"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "no segment named")) << r.err;

  r = RunTool({"info", "tandem.bad/name"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "invalid segment name")) << r.err;

  // A file with the right prefix that is not a Tandem segment.
  const std::string foreign = UniqueSegmentName("foreign");
  ScopedSegmentRemover remover(foreign);
  const int fd = shm_open(("/" + foreign).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8192), 0);
  const std::uint64_t magic = 0x1111111111111111ULL;
  ASSERT_EQ(pwrite(fd, &magic, sizeof magic, 0), static_cast<ssize_t>(sizeof magic));
  close(fd);
  r = RunTool({"info", foreign});
  EXPECT_EQ(r.code, 65) << "not a segment this build can read: " << Describe(r);
  EXPECT_TRUE(Contains(r.err, "not a Tandem segment")) << r.err;
  r = RunTool({"gc", "--prefix", foreign});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "kept " + foreign)) << r.out;
  EXPECT_TRUE(Segment::Probe(foreign).ok()) << "gc must not delete a file that is not Tandem's";
}

TEST(ShmTool, BadUsageExits64) {
  EXPECT_EQ(RunTool({}).code, 64);
  EXPECT_EQ(RunTool({"frobnicate"}).code, 64);
  EXPECT_EQ(RunTool({"info"}).code, 64);
  EXPECT_EQ(RunTool({"dump", "tandem.x", "u1", "--at", "-1"}).code, 64);
  EXPECT_EQ(RunTool({"watch", "tandem.x", "--interval", "0"}).code, 64);
  EXPECT_EQ(RunTool({"gc", "--prefix", "other."}).code, 64);
  ToolRun help = RunTool({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(Contains(help.out, "dump")) << help.out;
}

// Post-mortem: a child makes a segment, publishes and dies without removing it (like a
// supervisor run with --keep-segment-on-crash). The tool reads it; gc removes it and only it.
TEST(ShmTool, ReadsAStaleSegmentAndGcRemovesOnlyIt) {
  // One prefix for this test's segments, so gc never touches anyone else's.
  const std::string prefix = UniqueSegmentName("gc") + ".";
  SegmentOptions stale_opts = TestSegment::Options(1);
  stale_opts.name = prefix + "stale";
  ScopedSegmentRemover stale_remover(stale_opts.name);
  SegmentOptions live_opts = TestSegment::Options(1);
  live_opts.name = prefix + "live";
  TestSegment live(live_opts);
  ASSERT_NE(live.segment, nullptr);

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto created = Segment::Create(stale_opts);
    if (!created.ok()) _exit(1);
    auto pub = Publisher::Attach(created->get(), 0);
    if (!pub.ok()) _exit(2);
    auto ref = (*pub)->BindSlot(kIndex);
    if (!ref.ok()) _exit(3);
    if (!(*pub)->Append(*ref, {{Key(5), Val(50), 10, 2}}, Frontier::At(11)).ok()) _exit(4);
    (*created)->SetRuntime(Role::kMaintenance, getpid(), RuntimeState::kReady);
    _exit(0);  // without removing the segment: it is left stale
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  ToolRun r = RunTool({"info", stale_opts.name, "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(
      r.out, "\"supervisor_pid\":" + std::to_string(child) + ",\"supervisor_alive\":false"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "\"state\":\"ready\",\"alive\":false")) << r.out;

  r = RunTool({"slots", stale_opts.name});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "supervisor dead")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[11]")) << r.out;

  r = RunTool({"dump", stale_opts.name, "u7", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"time\":10")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"rows\":[{\"ordinal\":0,\"key\":[5],\"val\":[50],\"count\":2}]"))
      << r.out;

  r = RunTool({"ls", "--prefix", prefix, "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"name\":\"" + stale_opts.name + "\",\"supervisor_alive\":false"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "\"name\":\"" + live_opts.name + "\",\"supervisor_alive\":true"))
      << r.out;

  // A stale segment whose header names a runtime that still runs (here: this process) is kept.
  SegmentOptions orphan_opts = TestSegment::Options(1);
  orphan_opts.name = prefix + "orphan";
  ScopedSegmentRemover orphan_remover(orphan_opts.name);
  const pid_t parent = getpid();
  const pid_t orphan_child = fork();
  ASSERT_GE(orphan_child, 0);
  if (orphan_child == 0) {
    auto created = Segment::Create(orphan_opts);
    if (!created.ok()) _exit(1);
    (*created)->SetRuntime(Role::kInteractive, parent, RuntimeState::kReady);
    _exit(0);
  }
  ASSERT_EQ(waitpid(orphan_child, &status, 0), orphan_child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  r = RunTool({"gc", "--dry-run", "--prefix", prefix});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "would remove " + stale_opts.name)) << r.out;
  EXPECT_TRUE(Segment::Probe(stale_opts.name).ok()) << "a dry run removes nothing";

  r = RunTool({"gc", "--prefix", prefix, "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(JsonChecker::Valid(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"removed\":[{\"name\":\"" + stale_opts.name + "\"")) << r.out;
  EXPECT_TRUE(Contains(
      r.out, "\"kept\":[{\"name\":\"" + live_opts.name + "\",\"reason\":\"supervisor alive"))
      << r.out;
  auto gone = Segment::Probe(stale_opts.name);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Segment::Probe(live_opts.name).ok()) << "gc must leave a live segment";
  EXPECT_TRUE(Contains(r.out, "{\"name\":\"" + orphan_opts.name +
                                  "\",\"reason\":\"supervisor gone but runtime pid " +
                                  std::to_string(parent) + " still runs\"}"))
      << r.out;
  EXPECT_TRUE(Segment::Probe(orphan_opts.name).ok()) << "gc must leave a segment still in use";

  r = RunTool({"gc", "--prefix", prefix});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "nothing removed")) << r.out;
}

// A copy of a segment saved in a file (a path, not a /dev/shm name) is read the same way, through
// a private mapping: the dump's announcement entry never reaches the file.
TEST_F(ShmToolTest, ReadsACopyOfASegmentInAFileWithoutChangingIt) {
  char path[] = "/tmp/tandem-shm-copy-XXXXXX";
  const int out = mkstemp(path);
  ASSERT_GE(out, 0);
  struct Unlink {
    const char* path;
    ~Unlink() { unlink(path); }
  } unlink_copy{path};
  const int in = open(Segment::PathOf(name()).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(in, 0);
  std::string bytes(seg_.segment->size_bytes(), '\0');
  ASSERT_EQ(pread(in, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  close(in);
  ASSERT_EQ(write(out, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(out);
  ToolRun r = RunTool({"info", path});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "replica id")) << r.out;
  r = RunTool({"dump", path, "u7", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"key\":[1],\"val\":[100],\"count\":1")) << r.out;
  std::string after(bytes.size(), '\0');
  const int again = open(path, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(again, 0);
  ASSERT_EQ(pread(again, after.data(), after.size(), 0), static_cast<ssize_t>(after.size()));
  close(again);
  EXPECT_TRUE(after == bytes) << "reading the copy changed it";
  r = RunTool({"info", std::string(path) + ".missing"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "no file named")) << r.err;
}

// Issue 12 item 4, the tools' side: another user's file under a tandem.* name — even a genuine
// stale segment — is never removed by gc (root could), and a FIFO there never blocks ls or gc.
TEST(ShmTool, GcAndLsNeverTouchAnotherUsersFileNorBlockOnAFifo) {
  TANDEM_SKIP_UNLESS_ROOT();
  const std::string prefix = UniqueSegmentName("others") + ".";
  SegmentOptions theirs = TestSegment::Options(1, 1ull << 20);
  theirs.name = prefix + "stale";
  ScopedSegmentRemover theirs_remover(theirs.name);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(Segment::Create(theirs).ok() ? 0 : 1);  // left stale
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(chown(Segment::PathOf(theirs.name).c_str(), 65534, 65534), 0);
  const std::string fifo = prefix + "fifo";
  ScopedSegmentRemover fifo_remover(fifo);
  ASSERT_EQ(mkfifo(Segment::PathOf(fifo).c_str(), 0666), 0);

  testing::RunBinaryOptions options;
  options.strip_tandem_env = false;
  options.limit = std::chrono::seconds(10);
  testing::BinaryRun run = testing::RunBinary(TANDEM_SHM_BIN, {"ls", "--prefix", prefix}, options);
  ASSERT_EQ(run.exit, 0) << testing::DescribeRun(run);
  EXPECT_TRUE(Contains(run.out, "a FIFO owned by uid")) << run.out;
  run = testing::RunBinary(TANDEM_SHM_BIN, {"gc", "--prefix", prefix}, options);
  ASSERT_EQ(run.exit, 0) << testing::DescribeRun(run);
  EXPECT_TRUE(Contains(run.out, "kept " + theirs.name + " (owned by uid 65534")) << run.out;
  EXPECT_TRUE(Contains(run.out, "kept " + fifo)) << run.out;
  EXPECT_TRUE(Segment::Probe(theirs.name).ok()) << "gc removed another user's segment";
  struct stat st {};
  EXPECT_EQ(lstat(Segment::PathOf(fifo).c_str(), &st), 0);
}

// Issue 12 item 5: an inspector is run after something went wrong, so a corrupted segment must
// never crash or hang it. A small segment with published rows is copied (a stale segment: no
// supervisor holds the copy's lock), and each copy gets bytes flipped at one place — in the
// header, in the registry's slots, in a batch list or a batch (deterministic random positions,
// single bytes xored or whole words overwritten). info, slots and dump run on every copy: each
// must exit 0 (the damage was harmless), 1 (a read refused) or 65 (the segment is corrupt), with
// a message naming what is wrong — never by a signal, never past its time limit.
TEST(ShmTool, CorruptedSegmentsAreReportedNeverCrashTheInspector) {
  SegmentOptions opts = TestSegment::Options(2, 1ull << 20);
  TestSegment seg(opts);
  ASSERT_NE(seg.segment, nullptr);
  std::vector<std::unique_ptr<Publisher>> pubs;
  for (std::uint32_t o = 0; o < 2; ++o) {
    auto p = Publisher::Attach(seg.segment.get(), o);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    (*p)->SetReaderTable(seg.table.get());
    pubs.push_back(std::move(p).value());
    PublishRows(*pubs.back(), o);
  }
  // Two more batches on ordinal 0, so its list has several.
  auto ref = pubs[0]->BindSlot(kIndex);
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(pubs[0]->Append(*ref, {{Key(8), Val(80), 21, 1}}, Frontier::At(22)).ok());
  ASSERT_TRUE(pubs[0]->Append(*ref, {{Key(9), Val(90), 22, 1}}, Frontier::At(23)).ok());

  // The regions worth hitting: the header, every live slot, every batch list and batch.
  struct Region {
    std::uint64_t at, bytes;
  };
  std::vector<Region> regions = {{0, sizeof(SegmentHeader)}};
  Segment& s = *seg.segment;
  regions.push_back({s.header().registry_offset, sizeof(RegistryData)});
  Registry registry(&s);
  for (std::uint32_t o = 0; o < registry.workers(); ++o) {
    for (std::uint32_t j = 0; j < registry.slots_per_row(); ++j) {
      const SlotData& slot = registry.slot(o, j);
      if (slot.state.load() != static_cast<std::uint32_t>(SlotState::kLive)) continue;
      regions.push_back({s.OffsetOf(&slot), sizeof(SlotData)});
      const std::uint64_t list = slot.list.load();
      if (list == 0) continue;
      const auto* l = s.At<BatchListData>(list);
      regions.push_back({list, 16 + 8 * l->count});
      for (std::uint64_t b = 0; b < l->count; ++b) {
        regions.push_back({l->batches[b], s.At<BatchHeader>(l->batches[b])->total_bytes});
      }
    }
  }
  ASSERT_GT(regions.size(), 6u);

  std::string image(opts.size_bytes, '\0');
  {
    const int fd = open(Segment::PathOf(seg.name).c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pread(fd, image.data(), image.size(), 0), static_cast<ssize_t>(image.size()));
    close(fd);
  }
  const std::string copy = UniqueSegmentName("corrupt");
  ScopedSegmentRemover remover(copy);
  std::mt19937_64 rng(20261201);
  int exits[3] = {0, 0, 0};  // 0, 1, 65
  // Each copy starts tandem-shm four times: ~0.17 s a start under ASan (-O0, leak check at exit),
  // so fewer there; Fuzz.shm_inspect runs the same code in-process under ASan over its corpus.
  const int kCopies = std::getenv("TANDEM_TEST_SANITIZER") != nullptr ? 30 : 150;
  for (int i = 0; i < kCopies; ++i) {
    std::string damaged = image;
    const Region& r = regions[rng() % regions.size()];
    std::uint64_t at = r.at + rng() % std::max<std::uint64_t>(r.bytes, 1);
    std::string what;
    if (rng() % 2) {
      const auto x = static_cast<char>(1 + rng() % 255);
      damaged[at] = static_cast<char>(damaged[at] ^ x);
      what = "byte " + std::to_string(at) + " xor " + std::to_string(static_cast<unsigned char>(x));
    } else {
      at &= ~std::uint64_t{7};
      static constexpr std::uint64_t kWords[] = {
          0, 1, 7, 4096, 0xffffffff, ~std::uint64_t{0}, 1ull << 40};
      const std::uint64_t word = rng() % 3 ? kWords[rng() % 7] : rng();
      std::memcpy(&damaged[at], &word, 8);
      what = "word " + std::to_string(at) + " = " + std::to_string(word);
    }
    (void)Segment::Remove(copy);
    const int fd = shm_open(("/" + copy).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(pwrite(fd, damaged.data(), damaged.size(), 0), static_cast<ssize_t>(damaged.size()));
    close(fd);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"info", copy},
                                                 {"slots", copy},
                                                 {"dump", copy, "u7"},
                                                 {"dump", copy, "u7", "--json"}}) {
      testing::RunBinaryOptions options;
      options.strip_tandem_env = false;
      options.limit = std::chrono::seconds(10);
      const testing::BinaryRun run = testing::RunBinary(TANDEM_SHM_BIN, args, options);
      const std::string where = args[0] + " with " + what + ": exit " + std::to_string(run.exit) +
                                "\nstdout:\n" + run.out.substr(0, 2000) + "stderr:\n" + run.err;
      ASSERT_TRUE(run.exit == 0 || run.exit == 1 || run.exit == 65) << where;
      if (run.exit != 0) {
        EXPECT_TRUE(run.err.rfind("tandem-shm: ", 0) == 0 && run.err.size() > 20) << where;
      }
      if (run.exit == 65) {
        EXPECT_TRUE(Contains(run.err, copy)) << "the message names the segment: " << where;
      }
      ++exits[run.exit == 0 ? 0 : run.exit == 1 ? 1 : 2];
    }
  }
  // The damage was found, not merely survived.
  EXPECT_GT(exits[2], 0) << exits[0] << " ok, " << exits[1] << " refused";
  RecordProperty("exits", std::to_string(exits[0]) + " ok, " + std::to_string(exits[1]) +
                              " refused, " + std::to_string(exits[2]) + " corrupt");
  std::printf("runs: %d exit 0, %d exit 1, %d exit 65\n", exits[0], exits[1], exits[2]);
}

}  // namespace
}  // namespace tandem::shm
