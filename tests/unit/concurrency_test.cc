// The publisher, the reading thread and a tool as threads of one process, on one segment, each
// checking every answer it reads, while the publisher appends, merges, compacts, drops and
// recreates its index as fast as it can.
//
// Two ways to attach. kOneMapping: every thread uses one Segment object, so ThreadSanitizer
// (tools/run.sh tsan) sees both sides of every access and every synchronisation: it tracks memory
// by virtual address, so across two mappings of the same pages it would see neither a race nor the
// atomics that order them. kTwoMappings: the reader and the tool each map the segment again
// (Segment::Open), as separate processes do, which checks that nothing in the segment depends on
// the address it is mapped at. (tests/integration/shm_multiprocess_test.cc runs real processes.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "base/row.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "test_segment.h"

namespace tandem::shm {
namespace {

using testing::TestSegment;
using namespace std::chrono_literals;

enum class Mapping { kOneMapping, kTwoMappings };

constexpr std::int64_t kKeys = 64;
constexpr Time kTicksPerGeneration = 150;  // appends before the index is dropped and recreated
const GlobalId kId = GlobalId::User(7);

// The contents at every time are a pure function of (key, time), so every thread checks what it
// reads without talking to the publisher: key k changes value at every multiple of its period.
std::int64_t Period(std::int64_t k) { return 1 + k % 5; }
Time ChangedAt(std::int64_t k, Time t) { return t - t % static_cast<Time>(Period(k)); }
std::string KeyBytes(std::int64_t k) { return EncodeRow({k}); }
std::string ValueBytes(std::int64_t k, Time t) {
  const auto v = static_cast<std::int64_t>((static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ULL) ^
                                           (ChangedAt(k, t) * 0xBF58476D1CE4E5B9ULL));
  return EncodeRow({v, std::string(static_cast<std::size_t>(k % 4), 'v')});
}

// Checks `snap` at t (which it must be able to answer): a full scan or a few point lookups.
// Returns what was wrong, or "" when every answer was right.
std::string Check(const Snapshot& snap, Time t, std::mt19937_64& rng) {
  const std::string at = snap.key().ToString() + " at " + std::to_string(t) + ": ";
  if (Status s = snap.CheckReadable(t); !s.ok()) return at + s.ToString();
  if (rng() % 3 == 0) {
    std::int64_t next = 0;
    std::string wrong;
    Status s = snap.Scan(t, [&](std::string_view k, std::string_view v, std::int64_t n) {
      if (k != KeyBytes(next) || v != ValueBytes(next, t) || n != 1) {
        wrong = at + "scan wrong at key " + std::to_string(next);
        return false;
      }
      ++next;
      return true;
    });
    if (!s.ok()) return at + s.ToString();
    if (!wrong.empty()) return wrong;
    if (next != kKeys) return at + "scan saw " + std::to_string(next) + " keys";
    return "";
  }
  std::vector<ValueCount> vals;
  for (int i = 0; i < 8; ++i) {
    const auto k = static_cast<std::int64_t>(rng() % kKeys);
    if (Status s = snap.Lookup(KeyBytes(k), t, &vals); !s.ok()) return at + s.ToString();
    if (vals.size() != 1 || vals[0].val != ValueBytes(k, t) || vals[0].count != 1) {
      return at + "lookup of key " + std::to_string(k) + " wrong (" + std::to_string(vals.size()) +
             " values)";
    }
  }
  return "";
}

class Concurrency : public ::testing::TestWithParam<Mapping> {
 protected:
  void Fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.empty()) failure_ = what;
    stop_ = true;
  }
  // For at least 1.5 s, then on until `enough_` says every thread did the least work the test
  // counts on (a sanitized run on a loaded machine may need longer), but never past 30 s.
  bool Running() const {
    if (stop_) return false;
    const auto now = std::chrono::steady_clock::now();
    return now < deadline_ || (now < last_deadline_ && enough_ && !enough_());
  }

  std::atomic<bool> stop_{false};
  std::function<bool()> enough_;  // set before the threads start
  const std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::now() + 1500ms;
  const std::chrono::steady_clock::time_point last_deadline_ = deadline_ + 30s;
  std::mutex mu_;
  std::string failure_;
};

TEST_P(Concurrency, PublisherReaderAndToolThreadsReadOnlyCorrectAnswers) {
  TestSegment seg(TestSegment::Options(1, 32ull << 20));
  ASSERT_NE(seg.segment, nullptr);
  std::unique_ptr<Segment> reader_mapping, tool_mapping;
  std::unique_ptr<ReaderTable> tool_table_mapping;
  Segment* reader_segment = seg.segment.get();
  Segment* tool_segment = seg.segment.get();
  ReaderTable* tool_table = seg.table.get();
  if (GetParam() == Mapping::kTwoMappings) {
    auto r = Segment::Open(seg.name);
    auto t = Segment::Open(seg.name);
    auto tt = ReaderTable::Open(seg.name);
    ASSERT_TRUE(r.ok() && t.ok() && tt.ok());
    reader_mapping = std::move(r).value();
    tool_mapping = std::move(t).value();
    tool_table_mapping = std::move(tt).value();
    tool_table = tool_table_mapping.get();
    reader_segment = reader_mapping.get();
    tool_segment = tool_mapping.get();
    ASSERT_NE(reader_segment->At<char>(0), seg.segment->At<char>(0)) << "a second mapping";
  }
  std::atomic<std::uint64_t> appends{0}, generations{0}, merges{0}, freed{0};
  std::atomic<std::uint64_t> reader_checks{0}, tool_checks{0}, tool_refusals{0};
  enough_ = [&] {
    return appends > 100 && generations > 0 && merges > 0 && freed > 0 && reader_checks > 10 &&
           tool_checks > 10;
  };

  std::thread publisher([&] {
    auto pub = Publisher::Attach(seg.segment.get(), 0);
    if (!pub.ok()) return Fail(pub.status().ToString());
    (*pub)->SetReaderTable(seg.table.get());
    std::mt19937_64 rng(11);
    for (std::uint64_t g = 0; Running(); ++g) {
      Result<PublishedRef> ref = (*pub)->BindSlot({kId, g});
      while (!ref.ok() && ref.status().code() == StatusCode::kResourceExhausted && Running()) {
        (*pub)->Maintain();  // the row is full of dropped slots the reader has not released yet
        std::this_thread::sleep_for(1ms);
        ref = (*pub)->BindSlot({kId, g});
      }
      if (!ref.ok()) return Running() ? Fail("publish: " + ref.status().ToString()) : void();
      for (Time t = 0; t < kTicksPerGeneration && Running(); ++t) {
        std::vector<Update> ups;
        for (std::int64_t k = 0; k < kKeys; ++k) {
          if (t % static_cast<Time>(Period(k)) != 0) continue;
          if (t > 0) ups.push_back({KeyBytes(k), ValueBytes(k, t - 1), t, -1});
          ups.push_back({KeyBytes(k), ValueBytes(k, t), t, +1});
        }
        if (Status s = (*pub)->Append(*ref, std::move(ups), Frontier::At(t + 1)); !s.ok()) {
          return Fail("append: " + s.ToString());
        }
        ++appends;
        if (t > 8 && rng() % 3 == 0) {
          if (Status s = (*pub)->AllowCompaction(*ref, Frontier::At(t - rng() % 8)); !s.ok()) {
            return Fail("compaction: " + s.ToString());
          }
        }
        (*pub)->Maintain();
        merges = (*pub)->stats().merges;
        freed = (*pub)->stats().freed;
      }
      if (Status s = (*pub)->AllowCompaction(*ref, Frontier::Empty()); !s.ok()) {
        return Fail("drop: " + s.ToString());
      }
      ++generations;
    }
    merges = (*pub)->stats().merges;
    freed = (*pub)->stats().freed;
  });

  std::thread reader([&] {
    auto r = Reader::Attach(reader_segment, 0);
    if (!r.ok()) return Fail(r.status().ToString());
    Reader& rd = **r;
    std::mt19937_64 rng(12);
    std::uint64_t g = 0;
    Result<FollowedRef> ref = rd.Follow({kId, g});
    if (!ref.ok()) return Fail("follow: " + ref.status().ToString());
    while (Running()) {
      WakeDrain drain;
      rd.Wait(&drain, 20ms);
      bool dropped = false;
      {
        auto snap = rd.Take(*ref);
        if (!snap.ok()) return Fail("take: " + snap.status().ToString());
        dropped = snap->unpublished();
        const Time hold = rd.hold(*ref).time();
        if (!dropped && snap->filled() && !snap->upper().empty() && snap->upper().time() > hold) {
          const Time t = hold + rng() % (snap->upper().time() - hold);
          if (std::string wrong = Check(*snap, t, rng); !wrong.empty()) return Fail(wrong);
          ++reader_checks;
          if (rng() % 3 == 0) (void)rd.AdvanceHold(*ref, Frontier::At(t));
        }
      }
      if (dropped) {  // release the dropped index and follow its successor
        if (Status s = rd.AdvanceHold(*ref, Frontier::Empty()); !s.ok()) return Fail(s.ToString());
        ref = rd.Follow({kId, ++g});
        if (!ref.ok()) return Fail("follow: " + ref.status().ToString());
      }
    }
  });

  std::thread tool([&] {
    Inspector inspector(tool_segment, tool_table);
    std::mt19937_64 rng(13);
    while (Running()) {
      for (const SlotInfo& info : inspector.Slots()) {
        if (!(info.flags & kSlotFilled) || (info.flags & kSlotUnpublished)) continue;
        auto snap = inspector.Take(info.ordinal, info.index);
        if (!snap.ok()) {  // the slot changed identity meanwhile, or the reader table is full
          if (snap.status().code() != StatusCode::kUnavailable &&
              snap.status().code() != StatusCode::kResourceExhausted) {
            return Fail("tool: " + snap.status().ToString());
          }
          ++tool_refusals;
          continue;
        }
        if (snap->unpublished() || !snap->filled() || snap->since().empty() ||
            snap->upper().empty() || snap->upper() <= snap->since()) {
          continue;
        }
        const Time since = snap->since().time();
        const Time t = since + rng() % (snap->upper().time() - since);
        if (std::string wrong = Check(*snap, t, rng); !wrong.empty()) return Fail("tool: " + wrong);
        ++tool_checks;
      }
    }
  });

  publisher.join();
  reader.join();
  tool.join();
  EXPECT_EQ(failure_, "");
  EXPECT_GT(appends.load(), 100u);
  EXPECT_GT(generations.load(), 0u) << "the index was dropped and recreated";
  EXPECT_GT(merges.load(), 0u);
  EXPECT_GT(freed.load(), 0u);
  EXPECT_GT(reader_checks.load(), 10u);
  EXPECT_GT(tool_checks.load(), 10u);
  RecordProperty("appends", static_cast<int>(appends.load()));
  RecordProperty("reader_checks", static_cast<int>(reader_checks.load()));
  RecordProperty("tool_checks", static_cast<int>(tool_checks.load()));
  RecordProperty("tool_refusals", static_cast<int>(tool_refusals.load()));
}

// Slots dropped and recreated as fast as the two sides can, while a tool lists and reads them:
// a slot's identity (id, as_of) is rewritten whenever it is reused, under the row's creation lock,
// and the tool reads it without that lock, validating after the fact. Every key the tool lists is
// one the publisher or the reader created, and every snapshot it gets is of that slot or of one
// created in its place since.
TEST_P(Concurrency, ToolListsAndReadsSlotsWhileTheyAreDroppedAndRecreated) {
  TestSegment seg(TestSegment::Options(1, 32ull << 20));
  ASSERT_NE(seg.segment, nullptr);
  std::unique_ptr<Segment> mapping;
  std::unique_ptr<ReaderTable> table_mapping;
  Segment* other = seg.segment.get();
  ReaderTable* other_table = seg.table.get();
  if (GetParam() == Mapping::kTwoMappings) {
    auto m = Segment::Open(seg.name);
    auto t = ReaderTable::Open(seg.name);
    ASSERT_TRUE(m.ok() && t.ok());
    mapping = std::move(m).value();
    table_mapping = std::move(t).value();
    other = mapping.get();
    other_table = table_mapping.get();
  }
  std::atomic<std::uint64_t> created{0}, listed{0}, taken{0};
  enough_ = [&] { return created > 16 && listed > 0 && taken > 0; };

  std::thread publisher([&] {
    auto pub = Publisher::Attach(seg.segment.get(), 0);
    if (!pub.ok()) return Fail(pub.status().ToString());
    (*pub)->SetReaderTable(seg.table.get());
    for (std::uint64_t g = 1; Running(); ++g) {
      Result<PublishedRef> ref = (*pub)->BindSlot({kId, g});
      while (!ref.ok() && ref.status().code() == StatusCode::kResourceExhausted && Running()) {
        (*pub)->Maintain();
        std::this_thread::yield();
        ref = (*pub)->BindSlot({kId, g});
      }
      if (!ref.ok()) return Running() ? Fail("publish: " + ref.status().ToString()) : void();
      created = g;
      const std::vector<Update> ups = {{KeyBytes(0), ValueBytes(0, g), g, 1}};
      if (Status s = (*pub)->Append(*ref, ups, Frontier::At(g + 1)); !s.ok())
        return Fail(s.ToString());
      if (Status s = (*pub)->AllowCompaction(*ref, Frontier::Empty()); !s.ok()) {
        return Fail(s.ToString());
      }
      (*pub)->Maintain();
    }
  });

  std::thread reader([&] {
    auto r = Reader::Attach(other, 0);
    if (!r.ok()) return Fail(r.status().ToString());
    for (std::uint64_t g = 1; Running();) {
      Result<FollowedRef> ref = (*r)->Follow({kId, g});
      if (!ref.ok() && ref.status().code() == StatusCode::kResourceExhausted) {
        std::this_thread::yield();  // the row is full of slots the publisher has yet to free
        continue;
      }
      if (!ref.ok()) return Fail("follow: " + ref.status().ToString());
      bool dropped = false;
      {
        auto snap = (*r)->Take(*ref);
        if (!snap.ok()) return Fail(snap.status().ToString());
        dropped = snap->unpublished();
      }
      if (dropped) {
        if (Status s = (*r)->AdvanceHold(*ref, Frontier::Empty()); !s.ok())
          return Fail(s.ToString());
        ++g;
      } else {
        WakeDrain drain;
        (*r)->Wait(&drain, 1ms);
      }
    }
  });

  std::thread tool([&] {
    Inspector inspector(other, other_table);
    while (Running()) {
      for (const SlotInfo& info : inspector.Slots()) {
        // Read `created` after the slot: a key we list was created before we listed it.
        const std::uint64_t newest = created.load();
        if (!(info.key.id == kId) || info.key.as_of == 0 || info.key.as_of > newest + 1) {
          return Fail("tool listed a key nobody created: " + info.key.ToString());
        }
        ++listed;
        auto snap = inspector.Take(info.ordinal, info.index);
        if (!snap.ok()) {
          if (snap.status().code() != StatusCode::kUnavailable) {
            return Fail("tool: " + snap.status().ToString());
          }
          continue;
        }
        // The slot listed, or one created in its place since (Take reads whatever slot is at
        // the index now, consistently).
        if (!(snap->key().id == kId) || snap->key().as_of < info.key.as_of ||
            snap->key().as_of > created.load() + 1) {
          return Fail("asked for " + info.key.ToString() + ", got " + snap->key().ToString());
        }
        ++taken;
      }
    }
  });

  publisher.join();
  reader.join();
  tool.join();
  EXPECT_EQ(failure_, "");
  EXPECT_GT(created.load(), 16u) << "slots were reused";
  EXPECT_GT(listed.load(), 0u);
  EXPECT_GT(taken.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Mappings, Concurrency,
                         ::testing::Values(Mapping::kOneMapping, Mapping::kTwoMappings),
                         [](const ::testing::TestParamInfo<Mapping>& info) {
                           return info.param == Mapping::kOneMapping ? "OneMapping" : "TwoMappings";
                         });

}  // namespace
}  // namespace tandem::shm
