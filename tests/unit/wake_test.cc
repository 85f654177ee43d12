// Wake-ups: an idle reader sleeps without CPU, wakes promptly, and never loses a wake.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "shm/publisher.h"
#include "shm/reader.h"
#include "shm/wake.h"
#include "test_segment.h"

namespace tandem::shm {
namespace {

using namespace std::chrono_literals;
using testing::TestSegment;

// utime + stime of one thread, in clock ticks, from /proc.
long ThreadCpuTicks(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(in, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string f;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14) utime = std::stol(f);
    if (i == 15) {
      stime = std::stol(f);
      break;
    }
  }
  return utime + stime;
}

// Waits (bounded) until `flag` holds `want`, on the futex.
bool AwaitValue(std::atomic<std::uint32_t>& flag, std::uint32_t want, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (std::uint32_t v; (v = flag.load()) != want;) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    FutexWait(flag, v, 100ms);
  }
  return true;
}

TEST(Wake, IdleReaderUsesNoCpuAndWakesPromptlyOnPublish) {
  TestSegment seg(TestSegment::Options());
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  std::atomic<std::uint32_t> reader_tid{0};
  std::atomic<std::uint32_t> sleeping{0};
  std::chrono::steady_clock::time_point woke;
  WakeDrain drained;
  std::thread reader_thread([&] {
    auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
    WakeDrain ignore;
    reader->Poll(&ignore);  // the Publish above
    reader_tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
    sleeping = 1;
    FutexWakeAll(sleeping);
    while (drained.empty()) reader->Wait(&drained, 10s);
    woke = std::chrono::steady_clock::now();
  });
  ASSERT_TRUE(AwaitValue(sleeping, 1, 10s));
  const long before = ThreadCpuTicks(static_cast<pid_t>(reader_tid.load()));
  std::this_thread::sleep_for(1s);  // the measurement window, not synchronisation
  const long after = ThreadCpuTicks(static_cast<pid_t>(reader_tid.load()));
  EXPECT_LE(after - before, 1) << "an idle reader burns no CPU (ticks over 1 s)";

  const auto published = std::chrono::steady_clock::now();
  ASSERT_TRUE(pub->Append(*p, {}, Frontier::At(1)).ok());
  reader_thread.join();
  ASSERT_FALSE(drained.changed.empty());
  EXPECT_EQ(drained.changed[0].id, key.id.Pack());
  const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(woke - published);
  RecordProperty("wake_latency_us", static_cast<int>(latency.count()));
  EXPECT_LT(latency, 250ms) << "woke " << latency.count() << " us after the publish";
}

TEST(Wake, HundredThousandPublishWakeCyclesLoseNone) {
  constexpr std::uint32_t kCycles = 100000;
  TestSegment seg(TestSegment::Options());
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  const SlotKey key{GlobalId::User(1), 0};
  auto p = pub->BindSlot(key);
  std::atomic<std::uint32_t> acked{0};
  std::atomic<bool> failed{false};
  std::thread reader_thread([&] {
    auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
    auto f = reader->Follow(key);
    for (std::uint32_t i = 1; i <= kCycles && !failed; ++i) {
      // Re-read, then sleep until woken. Wait may return early (a late wake meant for the previous
      // cycle), so only the deadline tells a lost wake: we would sleep until it passes.
      const auto deadline = std::chrono::steady_clock::now() + 10s;
      for (;;) {
        auto snap = reader->Take(*f);
        if (snap.ok() && Frontier::At(i) <= snap->upper()) break;
        if (std::chrono::steady_clock::now() > deadline) {
          failed = true;
          return;
        }
        WakeDrain d;
        reader->Wait(&d, 10s);
      }
      acked.store(i);
      FutexWakeAll(acked);
    }
  });
  for (std::uint32_t i = 1; i <= kCycles && !failed; ++i) {
    EXPECT_TRUE(pub->Append(*p, {}, Frontier::At(i)).ok());
    if (!AwaitValue(acked, i, 10s)) {
      ADD_FAILURE() << "cycle " << i << " was not acknowledged";
      failed = true;
    }
  }
  reader_thread.join();
  EXPECT_FALSE(failed) << "a wake was lost";
  EXPECT_EQ(acked.load(), kCycles);
}

TEST(Wake, FullQueueOverflowsIntoARescanNotALoss) {
  TestSegment seg(TestSegment::Options());
  auto pub = std::move(Publisher::Attach(seg.segment.get(), 0)).value();
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  auto p = pub->BindSlot({GlobalId::User(1), 0});
  for (Time t = 1; t <= 3 * kWakeQueueCapacity; ++t)
    ASSERT_TRUE(pub->Append(*p, {}, Frontier::At(t)).ok());
  WakeDrain d;
  ASSERT_TRUE(reader->Poll(&d));
  EXPECT_TRUE(d.overflowed);
  EXPECT_EQ(d.changed.size(), kWakeQueueCapacity);
  WakeDrain again;
  EXPECT_FALSE(reader->Poll(&again)) << "overflow is reported once";
}

// Interrupt after Observe() ends the WaitSince that follows, whether it comes before the sleep
// or during it: the other thread interrupts whenever it runs, with no sleep to order the two.
TEST(Wake, InterruptAfterObserveEndsTheWait) {
  TestSegment seg(TestSegment::Options());
  auto reader = std::move(Reader::Attach(seg.segment.get(), 0)).value();
  for (int i = 0; i < 100; ++i) {
    const std::uint32_t observed = reader->wake().Observe();
    std::thread other([&] { reader->wake().Interrupt(); });
    WakeDrain d;
    const auto start = std::chrono::steady_clock::now();
    reader->wake().WaitSince(observed, &d, 30s);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 20s) << "cycle " << i;
    other.join();
  }
  // Interrupted before the wait began, in the same thread: the wait does not sleep at all.
  const std::uint32_t observed = reader->wake().Observe();
  reader->wake().Interrupt();
  WakeDrain d;
  const auto start = std::chrono::steady_clock::now();
  reader->wake().WaitSince(observed, &d, 30s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
}

}  // namespace
}  // namespace tandem::shm
