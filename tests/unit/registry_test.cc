// The sharing registry: placeholders, holds, since = min(own, peer hold), ownership of rows,
// reads outside [since, upper), and publish/read correctness against the naive reference.
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <random>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "base/row.h"
#include "reference.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "test_segment.h"

namespace tandem::shm::registry_test {
namespace {

using testing::ReferenceCollection;
using testing::TestSegment;

const SlotKey kX{GlobalId::User(1), 10};

std::string Key(std::int64_t k) { return EncodeRow({k}); }
std::string Val(std::int64_t v) { return EncodeRow({v}); }

struct Row0 {
  explicit Row0(Mode mode = Mode::kTwoRuntime, std::uint64_t size = 4ull << 20)
      : seg(TestSegment::Options(1, size, mode)) {
    auto p = Publisher::Attach(seg.segment.get(), 0);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    pub = std::move(p).value();
    auto r = Reader::Attach(seg.segment.get(), 0);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    reader = std::move(r).value();
  }
  SlotInfo Info(std::uint32_t index) {
    for (const SlotInfo& i : Inspector(seg.segment.get()).Slots()) {
      if (i.index == index) return i;
    }
    ADD_FAILURE() << "no live slot " << index;
    return {};
  }
  SlotData& Data(std::uint32_t index) { return Registry(seg.segment.get()).slot(0, index); }
  TestSegment seg;
  std::unique_ptr<Publisher> pub;
  std::unique_ptr<Reader> reader;
};

TEST(Registry, PlaceholderHasMinimumFrontiersNeverEmpty) {
  Row0 row;
  Registry registry(row.seg.segment.get());
  auto index = registry.FindOrCreate(0, kX, Side::kReader);
  ASSERT_TRUE(index.ok());
  const SlotInfo info = row.Info(*index);
  EXPECT_EQ(info.upper, Frontier::Minimum());
  EXPECT_EQ(info.since, Frontier::Minimum());
  EXPECT_EQ(info.own_frontier, Frontier::Minimum());
  EXPECT_EQ(info.peer_hold, Frontier::Minimum());
  EXPECT_EQ(info.flags & kSlotFilled, 0u);
  // No importer and no reader hold: the import hold is the empty frontier ("none"), not the
  // minimum, so it never holds since back by itself.
  EXPECT_TRUE(info.import_hold.empty());
  EXPECT_EQ(info.importers, 0u);
  EXPECT_EQ(info.reader_holds, 0u);
}

TEST(Registry, AReusedSlotStartsWithNoImportOrReaderHolds) {
  Row0 row;
  auto p = row.pub->BindSlot(kX);
  ASSERT_TRUE(p.ok());
  auto f = row.reader->Follow(kX);
  ASSERT_TRUE(f.ok());
  // Holds of a life. The import holds are still there when maintenance drops the slot (the
  // publisher does not clear them on a drop): its next life must not start with them.
  ASSERT_TRUE(row.pub->HoldForImport(*p, 12).ok());
  ASSERT_TRUE(row.pub->HoldForImport(*p, 12).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(row.reader->HoldRead(*f, 10));
  const SlotInfo held = row.Info(p->index);
  EXPECT_EQ(held.import_hold, Frontier::At(12));
  EXPECT_EQ(held.importers, 2u);
  EXPECT_EQ(held.reader_holds, 3u);
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::Empty()).ok());
  for (int i = 0; i < 3; ++i) row.reader->ReleaseRead(*f, 10);  // reads end before the release
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::Empty()).ok());
  row.pub->Maintain();
  ASSERT_TRUE(Inspector(row.seg.segment.get()).Slots().empty());
  auto again = row.pub->BindSlot({GlobalId::User(2), 20});
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->index, p->index) << "the freed slot is the first free one";
  const SlotInfo fresh = row.Info(again->index);
  EXPECT_TRUE(fresh.import_hold.empty());
  EXPECT_EQ(fresh.importers, 0u);
  EXPECT_EQ(fresh.reader_holds, 0u);
}

TEST(Registry, PublisherFillsTheReadersPlaceholderInPlace) {
  Row0 row;
  auto followed = row.reader->Follow(kX);
  ASSERT_TRUE(followed.ok());
  EXPECT_EQ(row.Info(followed->index).peer_hold, Frontier::At(10));
  auto published = row.pub->BindSlot(kX);
  ASSERT_TRUE(published.ok());
  EXPECT_EQ(published->index, followed->index);
  const SlotInfo info = row.Info(published->index);
  EXPECT_NE(info.flags & kSlotFilled, 0u);
  EXPECT_EQ(info.since, Frontier::At(10));
  EXPECT_EQ(Inspector(row.seg.segment.get()).Slots().size(), 1u);
}

TEST(Registry, ReaderBindsTheSlotThePublisherCreated) {
  Row0 row;
  auto published = row.pub->BindSlot(kX);
  ASSERT_TRUE(published.ok());
  EXPECT_EQ(row.Info(published->index).peer_hold, Frontier::At(10))
      << "the publisher registers the peer hold at as_of";
  auto followed = row.reader->Follow(kX);
  ASSERT_TRUE(followed.ok());
  EXPECT_EQ(followed->index, published->index);
}

TEST(Registry, PeerHoldOnlyRisesAndSinceIsMinOfOwnAndHold) {
  Row0 row;
  auto p = row.pub->BindSlot(kX);
  auto f = row.reader->Follow(kX);
  ASSERT_TRUE(p.ok() && f.ok());
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(5)).ok());
  EXPECT_EQ(row.reader->hold(*f), Frontier::At(10)) << "a lower hold changes nothing";
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(20)).ok());
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(30)).ok());
  EXPECT_EQ(row.pub->since(*p), Frontier::At(20)) << "held back by the slower runtime";
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(25)).ok());
  EXPECT_EQ(row.pub->since(*p), Frontier::At(20)) << "the publisher applies holds when it runs";
  row.pub->Maintain();
  EXPECT_EQ(row.pub->since(*p), Frontier::At(25));
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(22)).ok());
  EXPECT_EQ(row.Info(p->index).own_frontier, Frontier::At(30)) << "own frontier only rises";
  EXPECT_EQ(row.pub->since(*p), Frontier::At(25)) << "since never regresses";
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::Empty()).ok());
  row.pub->Maintain();
  EXPECT_EQ(row.pub->since(*p), Frontier::At(30)) << "a released hold leaves only the own frontier";
}

TEST(Registry, SinceEqualsMinOfOwnAndHoldOverRandomSequences) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Row0 row;
    std::mt19937_64 rng(seed);
    const SlotKey key{GlobalId::User(seed), rng() % 5};
    auto p = row.pub->BindSlot(key);
    auto f = row.reader->Follow(key);
    ASSERT_TRUE(p.ok() && f.ok());
    Time own = key.as_of, hold = key.as_of;
    for (int step = 0; step < 40; ++step) {
      const Time t = rng() % 60;
      if (rng() % 2) {
        ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(t)).ok());
        own = std::max(own, t);
      } else {
        ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(t)).ok());
        hold = std::max(hold, t);
      }
      row.pub->Maintain();
      ASSERT_EQ(row.pub->since(*p), Frontier::At(std::min(own, hold))) << "seed " << seed;
      ASSERT_EQ(row.reader->hold(*f), Frontier::At(hold));
    }
  }
}

TEST(Registry, SoloModesOwnReaderHoldsLikeAPeer) {
  Row0 row(Mode::kSolo);
  auto p = row.pub->BindSlot(kX);
  ASSERT_TRUE(p.ok());
  auto f = row.reader->Follow(kX);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->index, p->index);
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(50)).ok());
  row.pub->Maintain();
  EXPECT_EQ(row.pub->since(*p), Frontier::At(kX.as_of)) << "the reader's hold keeps since back";
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(50)).ok());
  row.pub->Maintain();
  EXPECT_EQ(row.pub->since(*p), Frontier::At(50));
  // The reader's release lets the slot go.
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::Empty()).ok());
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::Empty()).ok());
  row.pub->Maintain();
  EXPECT_TRUE(Inspector(row.seg.segment.get()).Slots().empty());
}

TEST(Registry, AReadHoldKeepsThePeerHoldAtItsTimeUntilReleased) {
  Row0 row;
  auto p = row.pub->BindSlot(kX);
  auto f = row.reader->Follow(kX);
  ASSERT_TRUE(p.ok() && f.ok());
  ASSERT_TRUE(row.reader->HoldRead(*f, 20));
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(50)).ok());
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(50)).ok());
  row.pub->Maintain();
  EXPECT_EQ(row.reader->hold(*f), Frontier::At(20));
  EXPECT_EQ(row.pub->since(*p), Frontier::At(20));
  EXPECT_EQ(row.Info(p->index).peer_hold, Frontier::At(20));
  // Below the hold nothing can be held any more: the read is refused and nothing changes.
  EXPECT_FALSE(row.reader->HoldRead(*f, 10));
  EXPECT_EQ(row.reader->hold(*f), Frontier::At(20));
  row.reader->ReleaseRead(*f, 20);
  row.pub->Maintain();
  EXPECT_EQ(row.reader->hold(*f), Frontier::At(50)) << "the controller's frontier, once released";
  EXPECT_EQ(row.pub->since(*p), Frontier::At(50));
}

TEST(Registry, ImportHoldsKeepSinceAtTheSlowestImporterAndAreShownInTheSlot) {
  Row0 row;
  auto p = row.pub->BindSlot(kX);
  auto f = row.reader->Follow(kX);
  ASSERT_TRUE(p.ok() && f.ok());
  ASSERT_TRUE(row.pub->HoldForImport(*p, 30).ok());
  ASSERT_TRUE(row.pub->HoldForImport(*p, 40).ok());
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(100)).ok());
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(100)).ok());
  row.pub->Maintain();
  EXPECT_EQ(row.pub->since(*p), Frontier::At(30));
  EXPECT_EQ(row.pub->import_hold(*p), Frontier::At(30));
  EXPECT_EQ(row.Data(p->index).importers.load(), 2u);
  ASSERT_TRUE(row.pub->MoveImportHold(*p, 30, 60).ok());
  row.pub->Maintain();
  EXPECT_EQ(row.pub->since(*p), Frontier::At(40));
  EXPECT_FALSE(row.pub->HoldForImport(*p, 10).ok()) << "below since: compacted already";
  EXPECT_FALSE(row.pub->MoveImportHold(*p, 60, 50).ok()) << "holds only rise";
  ASSERT_TRUE(row.pub->ReleaseImportHold(*p, 40).ok());
  ASSERT_TRUE(row.pub->ReleaseImportHold(*p, 60).ok());
  row.pub->Maintain();
  EXPECT_EQ(row.pub->since(*p), Frontier::At(100));
  EXPECT_TRUE(row.pub->import_hold(*p).empty());
  EXPECT_EQ(row.Data(p->index).importers.load(), 0u);
}

TEST(Registry, ReadsOutsideSinceAndUpperAreRefusedWithReasons) {
  Row0 row;
  auto f = row.reader->Follow(kX);
  {
    auto snap = row.reader->Take(*f);
    ASSERT_TRUE(snap.ok());
    const Status s = snap->CheckReadable(10);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(s.message().find("not published yet"), std::string::npos) << s.ToString();
  }
  auto p = row.pub->BindSlot(kX);
  ASSERT_TRUE(row.pub->Append(*p, {{Key(1), Val(1), 12, 1}}, Frontier::At(20)).ok());
  {
    auto snap = row.reader->Take(*f);
    ASSERT_TRUE(snap.ok());
    EXPECT_TRUE(snap->CheckReadable(10).ok());
    EXPECT_TRUE(snap->CheckReadable(19).ok());
    const Status below = snap->CheckReadable(9);
    EXPECT_NE(below.message().find("before since [10]"), std::string::npos) << below.ToString();
    const Status above = snap->CheckReadable(20);
    EXPECT_NE(above.message().find("not complete yet (upper [20])"), std::string::npos)
        << above.ToString();
    std::vector<ValueCount> out;
    EXPECT_FALSE(snap->Lookup(Key(1), 20, &out).ok());
    EXPECT_FALSE(snap->Scan(9, [](auto, auto, auto) { return true; }).ok());
    ASSERT_TRUE(snap->Lookup(Key(1), 12, &out).ok());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].count, 1);
    ASSERT_TRUE(snap->Lookup(Key(1), 11, &out).ok());
    EXPECT_TRUE(out.empty());
  }
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::Empty()).ok());
  auto snap = row.reader->Take(*f);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->CheckReadable(15).code(), StatusCode::kNotFound);
  EXPECT_NE(snap->CheckReadable(15).message().find("dropped"), std::string::npos);
}

// Build + merge + compaction through the real publisher and reader give, at every readable time,
// the same multiset as the naive reference — with holds and own frontiers moving at random.
// 200 seeds; under a sanitizer (the asan and tsan test presets set TANDEM_TEST_SANITIZER) the
// first 50, each still 30 ticks of appends, merges, compactions and hold moves: there the run is
// for memory errors and races on these paths (33 s under ASan for 200), and the uninstrumented run
// checks all 200 against the reference.
TEST(Registry, PublishedArrangementMatchesReferenceAtEveryReadableTime) {
  const std::uint64_t seeds = std::getenv("TANDEM_TEST_SANITIZER") != nullptr ? 50 : 200;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    Row0 row;
    std::mt19937_64 rng(seed);
    ReferenceCollection ref;
    const SlotKey key{GlobalId::User(seed), 0};
    auto p = row.pub->BindSlot(key);
    auto f = row.reader->Follow(key);
    ASSERT_TRUE(p.ok() && f.ok());
    Time upper = 0;
    for (int tick = 0; tick < 30; ++tick) {
      const Time next = upper + 1 + rng() % 3;
      std::vector<Update> ups;
      for (int i = static_cast<int>(rng() % 12); i > 0; --i) {
        ups.push_back({Key(static_cast<std::int64_t>(rng() % 8)),
                       Val(static_cast<std::int64_t>(rng() % 4)), upper + rng() % (next - upper),
                       static_cast<std::int64_t>(rng() % 5) - 2});
      }
      ref.Add(ups);
      ASSERT_TRUE(row.pub->Append(*p, ups, Frontier::At(next)).ok());
      upper = next;
      if (rng() % 3 == 0) {
        ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(rng() % upper)).ok());
      }
      if (rng() % 3 == 0) {
        ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(rng() % upper)).ok());
      }
      row.pub->Maintain();

      auto snap = row.reader->Take(*f);
      ASSERT_TRUE(snap.ok());
      ASSERT_EQ(snap->upper(), Frontier::At(upper));
      ASSERT_LE(snap->batches().size(), 2 + std::bit_width(std::uint64_t{12} * (tick + 1)))
          << "O(log n) batches";
      for (Time t = snap->since().time(); t < upper; ++t) {
        std::map<std::pair<std::string, std::string>, std::int64_t> got;
        ASSERT_TRUE(snap->Scan(t,
                               [&](auto k, auto v, auto n) {
                                 got[{std::string(k), std::string(v)}] = n;
                                 return true;
                               })
                        .ok());
        ASSERT_EQ(got, ref.At(t)) << "seed " << seed << " t " << t;
        // Point lookups agree with the scan.
        for (std::int64_t k = 0; k < 8; ++k) {
          std::vector<ValueCount> vals;
          ASSERT_TRUE(snap->Lookup(Key(k), t, &vals).ok());
          for (const auto& vc : vals) ASSERT_EQ((got[{Key(k), vc.val}]), vc.count);
        }
      }
      if (snap->since().time() > 0) {
        ASSERT_FALSE(snap->CheckReadable(snap->since().time() - 1).ok());
      }
    }
  }
}

TEST(Registry, EachRowHasOnePublisherAndOneReader) {
  TestSegment seg(TestSegment::Options(2));
  auto p0 = Publisher::Attach(seg.segment.get(), 0);
  ASSERT_TRUE(p0.ok());
  auto again = Publisher::Attach(seg.segment.get(), 0);
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  std::thread([&] {
    auto other = Publisher::Attach(seg.segment.get(), 0);
    EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(other.status().message().find("already has a publisher"), std::string::npos);
    EXPECT_TRUE(Publisher::Attach(seg.segment.get(), 1).ok()) << "row 1 is free";
  }).join();
  auto r0 = Reader::Attach(seg.segment.get(), 0);
  ASSERT_TRUE(r0.ok());
  EXPECT_FALSE(Reader::Attach(seg.segment.get(), 0).ok());
  EXPECT_EQ(Reader::Attach(seg.segment.get(), 2).status().code(), StatusCode::kInvalidArgument);
  p0->reset();
  EXPECT_TRUE(Publisher::Attach(seg.segment.get(), 0).ok()) << "detaching frees the row";
}

TEST(Registry, ForkedChildActsUnderItsOwnIdentity) {
  TestSegment seg(TestSegment::Options(2));
  auto parent = Publisher::Attach(seg.segment.get(), 0);
  ASSERT_TRUE(parent.ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child's thread inherits the parent's cached token; it must not be mistaken for it.
    auto same_row = Publisher::Attach(seg.segment.get(), 0);
    const bool refused_as_other =
        !same_row.ok() &&
        same_row.status().message().find("already has a publisher") != std::string::npos;
    auto own_row = Publisher::Attach(seg.segment.get(), 1);
    if (own_row.ok()) (void)std::move(own_row).value().release();  // dies holding row 1
    _exit(refused_as_other && own_row.ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(Publisher::Attach(seg.segment.get(), 1).ok())
      << "a row held by a dead process is taken over";
}

TEST(RegistryDeathTest, PublisherUsedFromAnotherThreadAborts) {
  // "fast" style: the child is a fork of this process and shares the segment created here, so
  // nothing is left behind when it aborts.
  GTEST_FLAG_SET(death_test_style, "fast");
  TestSegment seg(TestSegment::Options());
  // No reader table: its handout thread would make the fork multi-threaded, and the child's
  // thread below is then more than ThreadSanitizer lets a forked child start.
  seg.table.reset();
  auto p = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  EXPECT_DEATH(std::thread([&] { (void)p->BindSlot(kX); }).join(),
               "used only by the thread that attached it");
}

TEST(Registry, FullRowIsResourceExhausted) {
  Row0 row;
  for (std::uint64_t i = 0; i < 16; ++i)
    ASSERT_TRUE(row.pub->BindSlot({GlobalId::User(i), 0}).ok());
  auto full = row.pub->BindSlot({GlobalId::User(99), 0});
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("all 16 slots are live"), std::string::npos);
}

TEST(Registry, DropAndRecreateNeverBindsTheStaleSlot) {
  Row0 row;
  auto first = row.pub->BindSlot(kX);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(row.pub->AllowCompaction(*first, Frontier::Empty()).ok());
  auto second = row.pub->BindSlot(kX);  // same id and as_of, created again
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second->index, first->index);
  // The reader, lagging behind, still binds the first for its first create...
  auto f1 = row.reader->Follow(kX);
  ASSERT_TRUE(f1.ok());
  EXPECT_EQ(f1->index, first->index);
  ASSERT_TRUE(row.reader->AdvanceHold(*f1, Frontier::Empty()).ok());
  // ...and the second one after it released the first.
  auto f2 = row.reader->Follow(kX);
  ASSERT_TRUE(f2.ok());
  EXPECT_EQ(f2->index, second->index);
}

TEST(Registry, AppendRefusesTimesOutsideTheIntervalAndChangesNothing) {
  Row0 row;
  auto p = row.pub->BindSlot(kX);
  ASSERT_TRUE(row.pub->Append(*p, {{Key(1), Val(1), 3, 1}}, Frontier::At(5)).ok());
  EXPECT_EQ(row.pub->Append(*p, {{Key(1), Val(1), 4, 1}}, Frontier::At(9)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(row.pub->Append(*p, {{Key(1), Val(1), 9, 1}}, Frontier::At(9)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(row.pub->Append(*p, {}, Frontier::At(4)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(row.pub->upper(*p), Frontier::At(5));
  EXPECT_EQ(row.pub->batch_count(*p), 1u);
}

TEST(Registry, FullSegmentOnAppendIsAnErrorAndTheReaderKeepsReading) {
  Row0 row(Mode::kTwoRuntime, 2 << 20);
  auto p = row.pub->BindSlot(kX);
  auto f = row.reader->Follow(kX);
  ASSERT_TRUE(row.pub->Append(*p, {{Key(1), Val(1), 10, 1}}, Frontier::At(11)).ok());
  std::vector<Update> huge;
  for (int i = 0; i < 100000; ++i) huge.push_back({Key(i), Val(i), 11, 1});
  const std::uint64_t used = row.seg.segment->used_bytes();
  const Status s = row.pub->Append(*p, huge, Frontier::At(12));
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("bytes are free"), std::string::npos) << s.ToString();
  EXPECT_EQ(row.seg.segment->used_bytes(), used) << "nothing allocated is left behind";
  EXPECT_EQ(row.pub->upper(*p), Frontier::At(11));
  auto snap = row.reader->Take(*f);
  std::vector<ValueCount> out;
  ASSERT_TRUE(snap->Lookup(Key(1), 10, &out).ok());
  EXPECT_EQ(out.size(), 1u);
  EXPECT_TRUE(row.pub->Append(*p, {{Key(2), Val(2), 11, 1}}, Frontier::At(12)).ok())
      << "the publisher keeps going with what fits";
}

TEST(Registry, AppendOrKeepLeavesTheUpdatesForARetryAndFlagsTheSlotStalledMeanwhile) {
  Row0 row(Mode::kTwoRuntime, 2 << 20);
  auto p = row.pub->BindSlot(kX);
  auto filler = row.pub->BindSlot({GlobalId::User(2), 0});
  std::vector<Update> big;
  for (int i = 0; i < 30000; ++i) big.push_back({Key(i), Val(i), 10, 1});  // ~60% of it
  ASSERT_TRUE(row.pub->Append(*filler, big, Frontier::At(11)).ok());
  UpdateBuffer kept = big;
  ASSERT_EQ(row.pub->AppendOrKeep(*p, &kept, Frontier::At(11), false).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(kept.size(), big.size()) << "the updates are left for a retry";
  EXPECT_TRUE(row.Info(p->index).flags & kSlotStalled);
  EXPECT_EQ(row.pub->upper(*p), Frontier::Minimum()) << "nothing published, upper unchanged";
  // Room comes back (the filler is dropped and released); the retry publishes them.
  ASSERT_TRUE(row.pub->AllowCompaction(*filler, Frontier::Empty()).ok());
  auto f = row.reader->Follow({GlobalId::User(2), 0});
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::Empty()).ok());
  row.pub->Maintain();
  ASSERT_TRUE(row.pub->AppendOrKeep(*p, &kept, Frontier::At(11), true).ok());
  EXPECT_TRUE(kept.empty()) << "consumed on success";
  EXPECT_FALSE(row.Info(p->index).flags & kSlotStalled);
  EXPECT_EQ(row.pub->upper(*p), Frontier::At(11));
  auto g = row.reader->Follow(kX);
  auto snap = row.reader->Take(*g);
  std::vector<ValueCount> out;
  ASSERT_TRUE(snap->Lookup(Key(29999), 10, &out).ok());
  EXPECT_EQ(out.size(), 1u);
}

// The index's own history fills the segment; the controller then allows compaction. A retry
// merges the spine at the new since (the churn consolidates away) and the waiting updates fit.
TEST(Registry, ARetryCompactsTheStalledIndexSoCompactionAloneMakesRoom) {
  Row0 row(Mode::kTwoRuntime, 2 << 20);
  auto p = row.pub->BindSlot(kX);
  auto f = row.reader->Follow(kX);
  Time t = 10;
  // 1,000 keys rewritten at every time: ~20,000 updates that compact to 1,000 rows.
  for (; t < 30; ++t) {
    std::vector<Update> churn;
    for (int k = 0; k < 1000; ++k) {
      if (t > 10) churn.push_back({Key(k), Val(static_cast<int>(t) - 1), t, -1});
      churn.push_back({Key(k), Val(static_cast<int>(t)), t, 1});
    }
    ASSERT_TRUE(row.pub->Append(*p, churn, Frontier::At(t + 1)).ok());
  }
  // About 1.5 MB of the 2 MiB: more than the churn leaves free, less than compaction frees (with
  // room to spare for where the compacted batch lands: the allocator is best-fit, and a batch
  // needs one contiguous block).
  UpdateBuffer big;
  for (int i = 0; i < 25000; ++i) big.Push(Key(100000 + i), Val(i), t, 1);
  ASSERT_EQ(row.pub->AppendOrKeep(*p, &big, Frontier::At(t + 1), false).code(),
            StatusCode::kResourceExhausted);
  // Both runtimes allow compaction up to t (own frontier and the reader's peer hold).
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::At(t)).ok());
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::At(t)).ok());
  row.pub->Maintain();
  const Status retried = row.pub->AppendOrKeep(*p, &big, Frontier::At(t + 1), true);
  ASSERT_TRUE(retried.ok()) << retried.ToString();
  auto snap = row.reader->Take(*f);
  std::vector<ValueCount> out;
  ASSERT_TRUE(snap->Lookup(Key(7), t, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].val, Val(29));
  out.clear();
  ASSERT_TRUE(snap->Lookup(Key(124999), t, &out).ok());
  EXPECT_EQ(out.size(), 1u);
}

TEST(Registry, UnpublishedAndReleasedSlotIsFreedWithAllItsMemory) {
  Row0 row;
  const std::uint64_t baseline = row.seg.segment->used_bytes();
  auto p = row.pub->BindSlot(kX);
  auto f = row.reader->Follow(kX);
  for (Time t = 0; t < 50; ++t) {
    ASSERT_TRUE(row.pub
                    ->Append(*p, {{Key(static_cast<std::int64_t>(t)), Val(1), 10 + t, 1}},
                             Frontier::At(11 + t))
                    .ok());
  }
  EXPECT_GT(row.seg.segment->used_bytes(), baseline);
  ASSERT_TRUE(row.pub->AllowCompaction(*p, Frontier::Empty()).ok());
  EXPECT_EQ(Inspector(row.seg.segment.get()).Slots().size(), 1u) << "still held by the reader";
  ASSERT_TRUE(row.reader->AdvanceHold(*f, Frontier::Empty()).ok());
  row.pub->Maintain();
  EXPECT_TRUE(Inspector(row.seg.segment.get()).Slots().empty());
  EXPECT_EQ(row.seg.segment->used_bytes(), baseline);
}

}  // namespace
}  // namespace tandem::shm::registry_test
