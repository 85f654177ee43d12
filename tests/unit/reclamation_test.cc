// Reclamation: a reader's old snapshot stays correct while the publisher merges past it, the
// memory it pins is freed once it lets go, and garbage stays bounded while readers keep up.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "base/row.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "test_segment.h"

namespace tandem::shm {
namespace {

using testing::TestSegment;

std::string Key(std::int64_t k) { return EncodeRow({k}); }
std::string Val(std::int64_t v) { return EncodeRow({v, std::string("payload")}); }

// A churning arrangement of 64 keys: every tick replaces the values of 8 keys.
class Churn {
 public:
  Churn(Publisher* pub, const PublishedRef& ref) : pub_(pub), ref_(ref) {
    std::vector<Update> init;
    for (std::int64_t k = 0; k < 64; ++k) init.push_back({Key(k), Val(0), 0, 1});
    EXPECT_TRUE(pub_->Append(ref_, init, Frontier::At(1)).ok());
    value_.assign(64, 0);
  }
  void Tick() {
    std::vector<Update> ups;
    for (int i = 0; i < 8; ++i) {
      const std::int64_t k = static_cast<std::int64_t>((tick_ * 8 + i) % 64);
      ups.push_back({Key(k), Val(value_[k]), upper_, -1});
      value_[k] = static_cast<std::int64_t>(upper_);
      ups.push_back({Key(k), Val(value_[k]), upper_, +1});
    }
    ASSERT_TRUE(pub_->Append(ref_, ups, Frontier::At(upper_ + 1)).ok());
    ++upper_;
    ++tick_;
  }
  Time upper() const { return upper_; }

 private:
  Publisher* pub_;
  PublishedRef ref_;
  std::vector<std::int64_t> value_;
  Time upper_ = 1;
  std::uint64_t tick_ = 0;
};

std::vector<std::pair<std::string, std::int64_t>> Contents(const Snapshot& snap, Time t) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  EXPECT_TRUE(snap.Scan(t,
                        [&](auto k, auto v, auto n) {
                          out.emplace_back(std::string(k) + std::string(v), n);
                          return true;
                        })
                  .ok());
  return out;
}

TEST(Reclamation, OldSnapshotReadsCorrectlyWhileMergesRetireItsBatches) {
  TestSegment seg(TestSegment::Options());
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  const std::uint64_t empty = seg.segment->used_bytes();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  auto f = reader->Follow(key);
  Churn churn(pub.get(), *p);
  for (int i = 0; i < 20; ++i) churn.Tick();
  std::uint64_t pinned = 0;
  {
    auto old = reader->Take(*f);
    ASSERT_TRUE(old.ok());
    const Time t = churn.upper() - 1;
    const auto expected = Contents(*old, t);
    ASSERT_EQ(expected.size(), 64u);
    // Let compaction run freely: the hold follows the publisher (the reader reads at t, which it
    // took before raising its hold, so I1 still protects that read).
    for (int i = 0; i < 300; ++i) {
      churn.Tick();
      ASSERT_TRUE(pub->AllowCompaction(*p, Frontier::At(churn.upper() - 1)).ok());
      ASSERT_TRUE(reader->AdvanceHold(*f, Frontier::At(churn.upper() - 1)).ok());
      if (i % 50 == 0) {
        ASSERT_EQ(Contents(*old, t), expected) << "old snapshot unchanged after " << i << " ticks";
      }
    }
    ASSERT_EQ(Contents(*old, t), expected);
    EXPECT_GT(pub->stats().retired_pending, 0u) << "batches the old snapshot sees are pinned";
    pinned = seg.segment->used_bytes();
  }
  pub->Maintain();
  EXPECT_EQ(pub->stats().retired_pending, 0u);
  const std::uint64_t after = seg.segment->used_bytes();
  EXPECT_LT(after, pinned);
  // Steady level: the current batches and their list, plus allocator bookkeeping — nothing else.
  const auto slots = Inspector(seg.segment.get()).Slots();
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_LE(after, empty + slots[0].bytes + 1024)
      << "empty " << empty << " batches " << slots[0].bytes << " pinned " << pinned;
}

TEST(Reclamation, GarbageStaysBoundedWhileTheReaderKeepsUp) {
  TestSegment seg(TestSegment::Options());
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  auto f = reader->Follow(key);
  Churn churn(pub.get(), *p);
  std::uint64_t max_pending = 0, max_used = 0, used_at_100 = 0;
  for (int i = 0; i < 2000; ++i) {
    {
      auto snap = reader->Take(*f);
      ASSERT_TRUE(snap.ok());
      ASSERT_EQ(Contents(*snap, churn.upper() - 1).size(), 64u);
    }
    churn.Tick();
    ASSERT_TRUE(pub->AllowCompaction(*p, Frontier::At(churn.upper() - 1)).ok());
    ASSERT_TRUE(reader->AdvanceHold(*f, Frontier::At(churn.upper() - 1)).ok());
    max_pending = std::max(max_pending, pub->stats().retired_pending);
    if (i == 100) used_at_100 = seg.segment->used_bytes();
    if (i > 100) max_used = std::max(max_used, seg.segment->used_bytes());
  }
  EXPECT_EQ(max_pending, 0u) << "a reader that lets go leaves nothing pinned";
  EXPECT_LE(max_used, used_at_100 * 2) << "no growth after warm-up";
}

// A tool killed mid-read: a child process claims a spare reader entry of the slot with a snapshot
// and exits without releasing it. Returns the entry it left claimed.
std::size_t LeaveADeadToolsEntry(Segment* segment, std::uint32_t index) {
  const pid_t child = fork();
  if (child == 0) {
    auto snap = Inspector(segment).Take(0, index);
    _exit(snap.ok() ? 0 : 1);  // _exit: the snapshot's release never runs
  }
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Registry registry(segment);
  for (std::size_t e = kRuntimeReaderEntry + 1; e < kReaderEntries; ++e) {
    const ReaderEntry& entry = registry.slot(0, index).readers[e];
    if (entry.owner.load() != 0) {
      EXPECT_NE(entry.version.load(), kReaderIdle) << "the dead tool's announcement is left";
      return e;
    }
  }
  ADD_FAILURE() << "the dead tool left no entry claimed";
  return 0;
}

// Only a ReaderEntry's owner writes it (shm/layout.h). The publisher meets the entry of a tool
// that died mid-read; right then — between its liveness check and whatever it does next — a new
// tool takes the entry over from the dead owner and announces the version it reads. The new
// tool's announcement must survive, and the batches it reads must stay allocated while 300 more
// merges retire them. (The publisher used to store kReaderIdle into the entry it found dead,
// erasing the new tool's announcement and freeing the batches under it.)
TEST(Reclamation, ANewToolTakingOverADeadToolsEntryKeepsItsAnnouncement) {
  TestSegment seg(TestSegment::Options());
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  auto f = reader->Follow(key);
  ASSERT_TRUE(p.ok() && f.ok());
  Churn churn(pub.get(), *p);
  for (int i = 0; i < 20; ++i) churn.Tick();
  const std::size_t dead_entry = LeaveADeadToolsEntry(seg.segment.get(), p->index);
  ASSERT_NE(dead_entry, 0u);
  const ReaderEntry& entry = Registry(seg.segment.get()).slot(0, p->index).readers[dead_entry];

  std::optional<Snapshot> tool;
  Time t = 0;
  std::vector<std::pair<std::string, std::int64_t>> expected;
  pub->SetDeadReaderHookForTesting([&](std::uint32_t index, std::size_t e) {
    if (tool || index != p->index || e != dead_entry) return;
    auto snap = Inspector(seg.segment.get()).Take(0, p->index);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    tool.emplace(std::move(*snap));
    t = tool->upper().time() - 1;
    expected = Contents(*tool, t);
  });
  for (int i = 0; i < 300; ++i) {
    churn.Tick();
    ASSERT_TRUE(pub->AllowCompaction(*p, Frontier::At(churn.upper() - 1)).ok());
    ASSERT_TRUE(reader->AdvanceHold(*f, Frontier::At(churn.upper() - 1)).ok());
  }
  pub->SetDeadReaderHookForTesting(nullptr);
  ASSERT_TRUE(tool.has_value()) << "the publisher never met the dead tool's entry";
  ASSERT_EQ(expected.size(), 64u);
  ASSERT_NE(entry.owner.load(), 0u);
  ASSERT_EQ(entry.version.load(), tool->list_version())
      << "the new tool's announcement was overwritten (kReaderIdle = " << kReaderIdle << ")";
  EXPECT_GT(pub->stats().retired_pending, 0u) << "the batches the new tool reads are pinned";
  EXPECT_EQ(Contents(*tool, t), expected) << "the new tool reads exactly after 300 merges";
  tool.reset();
  pub->Maintain();
  EXPECT_EQ(pub->stats().retired_pending, 0u) << "and they are freed once it lets go";
}

// pid reuse: a tool entry left by an earlier process whose pid a live process (here, this one)
// now has. Its owner is dead — the start time differs — so its stale announcement pins nothing,
// the publisher never writes the entry, and the next tool takes it over.
TEST(Reclamation, AnEntryLeftByAProcessWhosePidWasReusedPinsNothing) {
  TestSegment seg(TestSegment::Options());
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  auto f = reader->Follow(key);
  ASSERT_TRUE(p.ok() && f.ok());
  Churn churn(pub.get(), *p);
  const std::uint64_t earlier = CurrentProcessToken() - (std::uint64_t{1} << 22);  // start - 1
  ASSERT_EQ(ProcessTokenPid(earlier), getpid());
  ReaderEntry& entry = Registry(seg.segment.get()).slot(0, p->index).readers[1];
  entry.owner.store(earlier);
  entry.version.store(1);
  for (int i = 0; i < 100; ++i) {
    churn.Tick();
    ASSERT_TRUE(pub->AllowCompaction(*p, Frontier::At(churn.upper() - 1)).ok());
    ASSERT_TRUE(reader->AdvanceHold(*f, Frontier::At(churn.upper() - 1)).ok());
  }
  EXPECT_EQ(pub->stats().retired_pending, 0u) << "the stale announcement pinned memory";
  EXPECT_GT(pub->stats().freed, 100u);
  EXPECT_EQ(entry.owner.load(), earlier) << "the publisher wrote a reader entry";
  EXPECT_EQ(entry.version.load(), 1u) << "the publisher wrote a reader entry";
  auto snap = Inspector(seg.segment.get()).Take(0, p->index);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(entry.owner.load(), CurrentProcessToken()) << "a new tool takes the entry over";
  EXPECT_EQ(entry.version.load(), snap->list_version());
}

}  // namespace
}  // namespace tandem::shm
