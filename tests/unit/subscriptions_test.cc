// A reading worker's subscribes alone (workers/subscriptions.h), on a real segment row: slices
// bounded in messages or time, subscribes visited round-robin across slices, an interval a slice
// cuts continued in order on the next visit, one read of a slot shared by subscribes at different
// progress — and every subscribe's parts contiguous, with exactly the index's changes.
#include "workers/subscriptions.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/row.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "test_segment.h"
#include "unit/protocol_samples.h"

namespace tandem::workers::subscriptions_test {
namespace {

namespace pb = ipc::pb;
namespace samples = ipc::samples;
using testing::TestSegment;

constexpr std::int64_t kKeys = 100;
constexpr std::int64_t kPerTick = 10;  // keys whose value changes per tick

// (key, value) at a time → diff: the changes a subscribe must deliver.
using Changes = std::map<std::tuple<Time, std::int64_t, std::int64_t>, std::int64_t>;

// Row 0 of a two-runtime segment: maintenance's publisher and interactive's reader of one index
// u1 (rows [k, v], keyed by k), both on this thread, and worker 0's Subscriptions over them.
struct Harness {
  Harness() : seg(TestSegment::Options(1, 32ull << 20)) {
    auto p = shm::Publisher::Attach(seg.segment.get(), 0);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    pub = std::move(p).value();
    auto r = shm::Reader::Attach(seg.segment.get(), 0);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    reader = std::move(r).value();
    const shm::SlotKey key{GlobalId::User(1), 0};
    auto bound = pub->BindSlot(key);
    EXPECT_TRUE(bound.ok()) << bound.status().ToString();
    published = *bound;
    auto followed = reader->Follow(key);
    EXPECT_TRUE(followed.ok()) << followed.status().ToString();
    ref = *followed;
    subs = std::make_unique<Subscriptions>(reader.get(),
                                           [this](const pb::Response& r) { sent.push_back(r); });
    // Time 0: every key at value 0.
    std::vector<shm::Update> first;
    for (std::int64_t k = 0; k < kKeys; ++k) first.push_back(MakeUpdate(k, 0, 0, 1));
    EXPECT_TRUE(pub->Append(published, first, Frontier::At(1)).ok());
    upper = 1;
    value.assign(kKeys, 0);
  }

  static shm::Update MakeUpdate(std::int64_t k, std::int64_t v, Time t, std::int64_t diff) {
    return {EncodeRow({k}), EncodeRow({k, v}), t, diff};
  }

  // `n` ticks, one batch each: kPerTick keys change value at the tick's time.
  void Tick(int n) {
    for (int i = 0; i < n; ++i) {
      const Time t = upper;
      std::vector<shm::Update> ups;
      for (std::int64_t j = 0; j < kPerTick; ++j) {
        const auto k = static_cast<std::int64_t>((t * 7 + static_cast<Time>(j)) % Time{kKeys});
        const std::int64_t v = static_cast<std::int64_t>(t) * 1000 + k;
        ups.push_back(MakeUpdate(k, value[static_cast<std::size_t>(k)], t, -1));
        ups.push_back(MakeUpdate(k, v, t, 1));
        changes[{t, k, value[static_cast<std::size_t>(k)]}] -= 1;
        changes[{t, k, v}] += 1;
        value[static_cast<std::size_t>(k)] = v;
      }
      ASSERT_TRUE(pub->Append(published, ups, Frontier::At(t + 1)).ok());
      pub->Maintain();
      upper = t + 1;
    }
  }

  void Subscribe(const std::string& uuid, Time as_of) {
    subs->Add(samples::Subscribe(uuid, "u1", as_of, /*snapshot=*/false).subscribe(), &ref);
  }

  // Serves slices of `slice` until one says nothing is left (at most `limit` of them).
  int ServeAll(const SubscribeSlice& slice, int limit = 10000) {
    int slices = 0;
    while (slices < limit) {
      ++slices;
      if (!subs->Serve(slice)) break;
    }
    return slices;
  }

  // The batches sent for `uuid`, in order.
  std::vector<pb::SubscribeBatch> Batches(const std::string& uuid) const {
    std::vector<pb::SubscribeBatch> out;
    for (const auto& r : sent) {
      if (r.has_subscribe_batch() && r.subscribe_batch().uuid() == uuid)
        out.push_back(r.subscribe_batch());
    }
    return out;
  }

  // What is wrong with `uuid`'s stream from `lower` (empty: nothing): contiguous batches, parts
  // (upper == lower) followed by more of their interval, within batch_bytes unless alone, its
  // last upper `upper`, and exactly the changes at times in [lower, upper).
  std::string Check(const std::string& uuid, Time lower, Time want_upper,
                    std::size_t batch_bytes) const {
    Changes got;
    Time expected = lower;
    bool open = false;
    for (const pb::SubscribeBatch& b : Batches(uuid)) {
      if (b.lower() != expected) {
        return "batch [" + std::to_string(b.lower()) + ", " + std::to_string(b.upper()) +
               ") after upper " + std::to_string(expected);
      }
      std::size_t bytes = 0;
      for (const auto& u : b.updates()) {
        bytes += EncodedUpdateBytes(u);
        if (u.time() < b.lower()) return "an update below its batch's lower";
        got[{u.time(), u.row().datums(0).int64(), u.row().datums(1).int64()}] += u.diff();
      }
      if (b.updates_size() > 1 && bytes > batch_bytes) return "a batch over batch_bytes";
      open = b.upper() == b.lower();
      expected = b.upper();
    }
    if (open) return "the stream ends with a part of an unfinished interval";
    if (expected != want_upper) {
      return "last upper " + std::to_string(expected) + ", expected " + std::to_string(want_upper);
    }
    Changes want;
    for (const auto& [key, diff] : changes) {
      if (std::get<0>(key) >= lower && std::get<0>(key) < want_upper && diff != 0) want[key] = diff;
    }
    std::erase_if(got, [](const auto& entry) { return entry.second == 0; });
    if (got != want) {
      return "got " + std::to_string(got.size()) + " changes, expected " +
             std::to_string(want.size());
    }
    return "";
  }

  TestSegment seg;
  std::unique_ptr<shm::Publisher> pub;
  std::unique_ptr<shm::Reader> reader;
  shm::PublishedRef published;
  shm::FollowedRef ref;
  std::unique_ptr<Subscriptions> subs;
  std::vector<pb::Response> sent;
  std::vector<std::int64_t> value;  // each key's value now
  Changes changes;                  // from time 1 on
  Time upper = 0;
};

TEST(Subscriptions, SlicesVisitSubscribesRoundRobinAndCutIntervalsGoOnInOrder) {
  Harness h;
  const std::vector<std::string> uuids = {"a", "b", "c", "d", "e"};
  for (const auto& u : uuids) h.Subscribe(u, 0);
  h.Tick(60);  // 1,200 updates: intervals of several parts of kMinSubscribeBatchBytes
  h.subs->SetBatchBytes(kMinSubscribeBatchBytes);
  // Two messages a slice: each of the first five slices serves the next subscribe, in order.
  const SubscribeSlice two{.max_messages = 2};
  for (const auto& u : uuids) {
    const std::size_t before = h.sent.size();
    EXPECT_TRUE(h.subs->Serve(two)) << "an interval of several parts is left";
    ASSERT_EQ(h.sent.size(), before + 2);
    std::set<std::string> served;
    for (std::size_t i = before; i < h.sent.size(); ++i) {
      served.insert(h.sent[i].subscribe_batch().uuid());
      EXPECT_EQ(h.sent[i].subscribe_batch().upper(), h.sent[i].subscribe_batch().lower())
          << "a part of an unfinished interval";
    }
    EXPECT_EQ(served, std::set<std::string>{u}) << "slice for " << u;
  }
  // The rest, one message a slice: every stream contiguous, complete to the upper.
  h.ServeAll({.max_messages = 1});
  for (const auto& u : uuids) {
    EXPECT_EQ(h.Check(u, 1, h.upper, kMinSubscribeBatchBytes), "") << u;
    EXPECT_GT(h.Batches(u).size(), 3u) << u << ": the interval was sent in parts";
  }
  // More ticks: the next round serves each from where it is.
  h.Tick(3);
  EXPECT_FALSE(h.subs->Serve({})) << "one round with nothing cut leaves nothing";
  for (const auto& u : uuids) EXPECT_EQ(h.Check(u, 1, h.upper, kMinSubscribeBatchBytes), "") << u;
}

TEST(Subscriptions, ASpentDeadlineStillSendsOnePartPerSlice) {
  Harness h;
  h.Subscribe("a", 0);
  h.Subscribe("b", 0);
  h.Tick(40);
  h.subs->SetBatchBytes(kMinSubscribeBatchBytes);
  const SubscribeSlice past{.deadline = std::chrono::steady_clock::time_point::min()};
  const std::size_t before = h.sent.size();
  EXPECT_TRUE(h.subs->Serve(past));
  EXPECT_EQ(h.sent.size(), before + 1) << "one part, then the slice is over";
  const int slices = h.ServeAll(past);
  EXPECT_GT(slices, 4);
  EXPECT_EQ(h.Check("a", 1, h.upper, kMinSubscribeBatchBytes), "");
  EXPECT_EQ(h.Check("b", 1, h.upper, kMinSubscribeBatchBytes), "");
}

TEST(Subscriptions, SubscribesAtDifferentProgressEachGetTheirOwnIntervalOfOneRead) {
  Harness h;
  h.Subscribe("early", 0);
  h.Tick(10);
  EXPECT_FALSE(h.subs->Serve({}));
  EXPECT_EQ(h.Check("early", 1, 11, kDefaultSubscribeBatchBytes), "");
  h.Tick(10);
  h.Subscribe("late", 15);  // as_of 15: its changes start at 16
  h.Subscribe("later", 19);
  h.Tick(5);
  h.ServeAll({});
  EXPECT_EQ(h.Check("early", 1, h.upper, kDefaultSubscribeBatchBytes), "");
  EXPECT_EQ(h.Check("late", 16, h.upper, kDefaultSubscribeBatchBytes), "");
  EXPECT_EQ(h.Check("later", 20, h.upper, kDefaultSubscribeBatchBytes), "");
}

TEST(Subscriptions, BackPressureEndsTheSliceAndTheStreamGoesOnAfterIt) {
  Harness h;
  h.Subscribe("a", 0);
  h.Subscribe("b", 0);
  h.Tick(40);
  h.subs->SetBatchBytes(kMinSubscribeBatchBytes);
  bool congested = false;
  const std::size_t before = h.sent.size();
  // Congested after the first part: the slice stops there, and says nothing can be done now.
  h.subs->SetBackPressure([&] { return congested || h.sent.size() > before; });
  EXPECT_FALSE(h.subs->Serve({}));
  EXPECT_EQ(h.sent.size(), before + 1);
  h.subs->SetBackPressure([&] { return congested; });
  congested = true;
  EXPECT_FALSE(h.subs->Serve({}));
  EXPECT_EQ(h.sent.size(), before + 1) << "nothing while congested";
  congested = false;
  h.ServeAll({});
  EXPECT_EQ(h.Check("a", 1, h.upper, kMinSubscribeBatchBytes), "");
  EXPECT_EQ(h.Check("b", 1, h.upper, kMinSubscribeBatchBytes), "");
}

TEST(Subscriptions, ADropInTheMiddleOfAnIntervalEndsItAndLeavesNoSnapshotOpen) {
  Harness h;
  h.Subscribe("a", 0);
  h.Subscribe("b", 0);
  h.Tick(40);
  h.subs->SetBatchBytes(kMinSubscribeBatchBytes);
  EXPECT_TRUE(h.subs->Serve({.max_messages = 1}));  // "a" has a part out, its round goes on
  h.subs->OnDropped("u1");
  int ends = 0;
  for (const auto& r : h.sent) {
    if (r.has_subscribe_end()) {
      EXPECT_EQ(r.subscribe_end().reason(), pb::SubscribeEnd::DROPPED);
      ++ends;
    }
  }
  EXPECT_EQ(ends, 2);
  EXPECT_TRUE(h.subs->empty());
  // What the peek server does next: the reader lets the slot go — which it refuses (a failed
  // check) while a read hold or a snapshot of it is still there.
  ASSERT_TRUE(h.reader->AdvanceHold(h.ref, Frontier::Empty()).ok());
  EXPECT_FALSE(h.subs->Serve({}));
}

}  // namespace
}  // namespace tandem::workers::subscriptions_test
