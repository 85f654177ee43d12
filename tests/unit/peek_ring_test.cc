// The peek fast path's rings (shm/peek_ring.h): records come out whole and in order across the
// ring's end, a push that does not fit changes nothing, the consumer's sleep is never slept
// through, and another process's view of the segment agrees.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "shm/peek_ring.h"
#include "test_segment.h"

namespace tandem::shm {
namespace {

using testing::TestSegment;

struct Rings {
  explicit Rings(std::uint64_t capacity) : seg(Options(capacity)) {
    rings = PeekRingsOf(*seg.segment);
    wake = MakeRingWakeFd();
  }
  ~Rings() { close(wake); }
  static SegmentOptions Options(std::uint64_t capacity) {
    SegmentOptions o = TestSegment::Options();
    o.peek_ring_bytes = capacity;
    return o;
  }
  RingWriter Writer() { return RingWriter(*seg.segment, &rings->requests, wake); }
  RingReader Reader() { return RingReader(*seg.segment, &rings->requests, wake); }
  TestSegment seg;
  PeekRingsData* rings = nullptr;
  int wake = -1;
};

std::string Pop(RingReader& r) {
  std::string_view v;
  if (!r.Front(&v)) return "<empty>";
  std::string out(v);
  r.Pop();
  return out;
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

TEST(PeekRing, ASegmentWithoutRingsHasNone) {
  TestSegment seg(TestSegment::Options());
  EXPECT_EQ(PeekRingsOf(*seg.segment), nullptr);
}

TEST(PeekRing, RingsAreMadeWithTheSegmentAndSeenByAnotherOpener) {
  Rings r(8192);
  ASSERT_NE(r.rings, nullptr);
  EXPECT_EQ(r.rings->requests.capacity, 8192u);
  EXPECT_EQ(r.rings->answers.max_record, 2048u);
  EXPECT_EQ(r.rings->requests.data_offset % 64, 0u);
  auto other = Segment::Open(r.seg.name);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  RingWriter w = r.Writer();
  ASSERT_TRUE(w.TryPush({"hello ", "there"}));
  // The other mapping reads what this one wrote.
  RingReader reader(**other, &PeekRingsOf(**other)->requests, r.wake);
  EXPECT_EQ(Pop(reader), "hello there");
  EXPECT_EQ(Pop(reader), "<empty>");
}

TEST(PeekRing, ASizeThatIsNotAPowerOfTwoIsRefusedAtCreation) {
  SegmentOptions o = Rings::Options(5000);
  auto created = Segment::Create(o);
  ScopedSegmentRemover remover(o.name);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("power of two"), std::string::npos)
      << created.status().ToString();
}

TEST(PeekRing, RecordsComeOutWholeAndInOrderAcrossTheEnd) {
  Rings r(4096);
  RingWriter w = r.Writer();
  RingReader reader = r.Reader();
  std::mt19937 rng(7);
  std::uint64_t next_in = 0, next_out = 0;
  std::vector<std::string> sent;
  for (int round = 0; round < 2000; ++round) {
    // Push a few of random sizes (up to max_record), pop a few: the ring wraps many times.
    const int pushes = static_cast<int>(rng() % 4);
    for (int i = 0; i < pushes; ++i) {
      std::string payload(rng() % 1025, static_cast<char>('a' + next_in % 26));
      payload += std::to_string(next_in);
      if (payload.size() > 1024) payload.resize(1024);
      if (!w.TryPush({payload})) break;  // full now: nothing was written
      sent.push_back(payload);
      ++next_in;
    }
    const int pops = static_cast<int>(rng() % 4);
    for (int i = 0; i < pops && next_out < next_in; ++i) {
      ASSERT_EQ(Pop(reader), sent[next_out]) << "record " << next_out;
      ++next_out;
    }
  }
  while (next_out < next_in) ASSERT_EQ(Pop(reader), sent[next_out++]);
  EXPECT_EQ(Pop(reader), "<empty>");
  EXPECT_GT(r.rings->requests.head.load(), 20 * 4096u) << "the ring wrapped many times";
}

TEST(PeekRing, APushThatDoesNotFitChangesNothingAndIsCounted) {
  Rings r(4096);
  RingWriter w = r.Writer();
  RingReader reader = r.Reader();
  EXPECT_FALSE(w.TryPush({std::string(1025, 'x')})) << "over max_record (a quarter)";
  EXPECT_EQ(r.rings->requests.too_large.load(), 1u);
  int pushed = 0;
  while (w.TryPush({std::string(1000, 'y')})) ++pushed;
  EXPECT_EQ(pushed, 4) << "4 records of 1008 bytes fill 4096";
  EXPECT_EQ(r.rings->requests.full.load(), 1u);
  const std::uint64_t head = r.rings->requests.head.load();
  EXPECT_FALSE(w.TryPush({std::string(100, 'z')})) << "64 bytes are left";
  EXPECT_EQ(r.rings->requests.head.load(), head) << "a refused push wrote nothing";
  EXPECT_EQ(r.rings->requests.full.load(), 2u);
  EXPECT_EQ(Pop(reader), std::string(1000, 'y'));
  // Room again once the consumer took one: a pad over the last 64 bytes, the record at the start.
  EXPECT_TRUE(w.TryPush({std::string(1000, 'w')}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Pop(reader), std::string(1000, 'y'));
  EXPECT_EQ(Pop(reader), std::string(1000, 'w'));
  EXPECT_EQ(Pop(reader), "<empty>");
}

TEST(PeekRing, TheProducerWakesOnlyASleepingConsumerAndNoWakeIsLost) {
  Rings r(4096);
  RingWriter w = r.Writer();
  RingReader reader = r.Reader();
  ASSERT_TRUE(w.TryPush({"busy"}));
  EXPECT_FALSE(Readable(r.wake)) << "the consumer was not asleep: no system call";
  EXPECT_FALSE(reader.PrepareToSleep()) << "a record waits: do not sleep";
  reader.Awake(false);
  EXPECT_EQ(Pop(reader), "busy");
  EXPECT_TRUE(reader.PrepareToSleep());
  ASSERT_TRUE(w.TryPush({"wake"}));
  EXPECT_TRUE(Readable(r.wake)) << "announced asleep: woken";
  reader.Awake(true);
  EXPECT_FALSE(Readable(r.wake)) << "the wake-up was consumed";
  EXPECT_EQ(Pop(reader), "wake");
  EXPECT_EQ(r.rings->requests.wakes_sent.load(), 1u);
}

// Two threads, many records, the consumer sleeping whenever the ring is empty: every record
// arrives once, in order, and the consumer never sleeps through one (bounded: a lost wake-up would
// stall until the poll's timeout, which the test counts).
TEST(PeekRing, AProducerAndASleepingConsumerPassEveryRecordInOrder) {
  Rings r(4096);
  constexpr int kRecords = 20000;
  std::thread producer([&] {
    RingWriter w = r.Writer();
    for (int i = 0; i < kRecords;) {
      const std::string payload = std::to_string(i) + std::string(i % 300, '.');
      if (w.TryPush({payload})) {
        ++i;
      } else {
        std::this_thread::yield();
      }
    }
  });
  RingReader reader = r.Reader();
  int timeouts = 0;
  for (int i = 0; i < kRecords;) {
    std::string_view v;
    if (reader.Front(&v)) {
      ASSERT_EQ(v, std::to_string(i) + std::string(i % 300, '.'));
      reader.Pop();
      ++i;
      continue;
    }
    bool woken = false;
    if (reader.PrepareToSleep()) {
      pollfd p{r.wake, POLLIN, 0};
      const int rc = poll(&p, 1, 1000);
      if (rc == 0) ++timeouts;
      woken = rc == 1;
    }
    reader.Awake(woken);
  }
  producer.join();
  EXPECT_EQ(timeouts, 0) << "a sleeping consumer missed a wake-up";
}

TEST(PeekRing, ACorruptRingIsRefusedAtAttach) {
  Rings r(4096);
  r.rings->answers.capacity = 3000;  // what a torn or foreign segment could hold
  auto opened = Segment::Open(r.seg.name);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("peek answer ring"), std::string::npos)
      << opened.status().ToString();
}

}  // namespace
}  // namespace tandem::shm
