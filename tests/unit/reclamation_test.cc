// Reclamation: a reader's old snapshot stays correct while the publisher merges past it, the
// memory it pins is freed once it lets go, and garbage stays bounded while readers keep up.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "base/row.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "shm/reader_table.h"
#include "test_segment.h"

namespace tandem::shm::reclamation_test {
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

// A local reader (or tool) killed mid-read: a child process claims a reader-table entry, takes an
// announced snapshot of the slot and exits without releasing it (its lock goes with it; its
// announcement stays). Returns the entry it left.
std::uint32_t LeaveADeadReadersEntry(const TestSegment& seg, std::uint32_t index) {
  int report[2];
  EXPECT_EQ(pipe(report), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(report[0]);
    auto table = ReaderTable::Open(seg.name);
    if (!table.ok()) _exit(1);
    auto entry = (*table)->Claim();
    if (!entry.ok()) _exit(2);
    const SlotKey key =
        Registry(seg.segment.get()).KeyOf(Registry(seg.segment.get()).slot(0, index));
    auto snap = TakeAnnounced(*seg.segment, 0, index, key, entry->get());
    const std::uint32_t e = (*entry)->index();
    const bool told = write(report[1], &e, sizeof e) == sizeof e;
    _exit(snap.ok() && told ? 0 : 3);  // _exit: neither the snapshot nor the entry is released
  }
  close(report[1]);
  std::uint32_t e = kReaderTableEntries;
  EXPECT_EQ(read(report[0], &e, sizeof e), static_cast<ssize_t>(sizeof e));
  close(report[0]);
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  return e;
}

// A reader that died mid-read leaves its announcement, which keeps what it could see allocated:
// the publisher never writes the entry, and never waits. The supervisor's sweep (here the test's)
// finds the entry's lock free, clears it, and the next merges free everything.
TEST(Reclamation, ADeadReadersAnnouncementPinsUntilTheSweepClearsItAndThePublisherNeverWritesIt) {
  TestSegment seg(TestSegment::Options());
  ASSERT_TRUE(seg.table);
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  pub->SetReaderTable(seg.table.get());
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  auto f = reader->Follow(key);
  ASSERT_TRUE(p.ok() && f.ok());
  Churn churn(pub.get(), *p);
  for (int i = 0; i < 20; ++i) churn.Tick();
  const std::uint32_t dead = LeaveADeadReadersEntry(seg, p->index);
  ASSERT_LT(dead, kReaderTableEntries);
  const ReaderTableSlot& entry = seg.table->slot(dead);
  const std::uint64_t announced = entry.version.load();
  ASSERT_NE(announced, kReaderIdle) << "the dead reader's announcement is left";
  for (int i = 0; i < 100; ++i) {
    churn.Tick();
    ASSERT_TRUE(pub->AllowCompaction(*p, Frontier::At(churn.upper() - 1)).ok());
    ASSERT_TRUE(reader->AdvanceHold(*f, Frontier::At(churn.upper() - 1)).ok());
  }
  EXPECT_GT(pub->stats().retired_pending, 0u) << "what the dead reader could see stays allocated";
  EXPECT_EQ(entry.version.load(), announced) << "the publisher wrote a reader's entry";
  const SweepResult swept = seg.table->Sweep();
  EXPECT_EQ(swept.cleared, 1u);
  EXPECT_EQ(swept.live, 0u);
  EXPECT_EQ(entry.version.load(), kReaderIdle);
  EXPECT_EQ(entry.pid.load(), 0);
  pub->Maintain();
  EXPECT_EQ(pub->stats().retired_pending, 0u) << "freed once the sweep cleared the entry";
}

// A live reader's entry is never swept (its lock is held), and its announcement keeps exactly
// what it reads exact through 300 merges; a new reader claiming a dead reader's entry before any
// sweep resets it under its lock, so the stale announcement pins nothing from then on.
TEST(Reclamation, ALiveReaderIsNeverSweptAndANewClaimResetsADeadReadersEntry) {
  TestSegment seg(TestSegment::Options());
  ASSERT_TRUE(seg.table);
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  pub->SetReaderTable(seg.table.get());
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  auto f = reader->Follow(key);
  ASSERT_TRUE(p.ok() && f.ok());
  Churn churn(pub.get(), *p);
  for (int i = 0; i < 20; ++i) churn.Tick();
  const std::uint32_t dead = LeaveADeadReadersEntry(seg, p->index);
  ASSERT_LT(dead, kReaderTableEntries);

  // A local reader of its own process (another open file description: another lock owner).
  auto table = ReaderTable::Open(seg.name);
  ASSERT_TRUE(table.ok());
  auto mine = (*table)->Claim();
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  EXPECT_EQ((*mine)->index(), dead) << "the first free lock is the dead reader's entry";
  EXPECT_EQ(seg.table->slot(dead).version.load(), kReaderIdle) << "reset by the claim";
  {
    const SlotKey k =
        Registry(seg.segment.get()).KeyOf(Registry(seg.segment.get()).slot(0, p->index));
    auto snap = TakeAnnounced(*seg.segment, 0, p->index, k, mine->get());
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    const Time t = snap->upper().time() - 1;
    const auto expected = Contents(*snap, t);
    ASSERT_EQ(expected.size(), 64u);
    for (int i = 0; i < 300; ++i) {
      churn.Tick();
      ASSERT_TRUE(pub->AllowCompaction(*p, Frontier::At(churn.upper() - 1)).ok());
      ASSERT_TRUE(reader->AdvanceHold(*f, Frontier::At(churn.upper() - 1)).ok());
      if (i % 50 == 0) {
        const SweepResult swept = seg.table->Sweep();
        EXPECT_EQ(swept.live, 1u);
        EXPECT_EQ(swept.cleared, 0u);
      }
    }
    EXPECT_GT(pub->stats().retired_pending, 0u) << "the batches the live reader reads are pinned";
    EXPECT_EQ(Contents(*snap, t), expected) << "the live reader reads exactly after 300 merges";
  }
  pub->Maintain();
  EXPECT_EQ(pub->stats().retired_pending, 0u) << "and they are freed once it lets go";
  mine->reset();
  EXPECT_EQ(seg.table->slot(dead).pid.load(), 0) << "a reader that lets go clears its entry";
}

}  // namespace
}  // namespace tandem::shm::reclamation_test
