// The subscribe merger alone (workers/subscribe_merger.h): one stream per subscribe from N
// workers' parts — batches up to the minimum of the workers' progress, in time order, bounded in
// bytes, then exactly one End.
#include "workers/subscribe_merger.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/protocol_samples.h"

namespace tandem::workers::subscribe_merger_test {
namespace {

namespace pb = ipc::pb;
namespace samples = ipc::samples;

struct Harness {
  std::vector<pb::Response> sent;
  std::vector<std::string> forgotten;
  SubscribeMerger merger;
  explicit Harness(std::uint32_t workers)
      : merger(
            workers, [this](const pb::Response& r) { sent.push_back(r); },
            [this](const std::string& uuid) { forgotten.push_back(uuid); }) {}

  // Worker `w`'s part of "s": updates (value, time, diff) in [lower, upper).
  void Part(std::uint32_t w, std::uint64_t lower, std::uint64_t upper,
            std::vector<std::tuple<std::int64_t, std::uint64_t, std::int64_t>> updates = {}) {
    pb::SubscribeBatch b;
    b.set_uuid("s");
    b.set_lower(lower);
    b.set_upper(upper);
    for (auto [v, t, d] : updates) {
      auto* u = b.add_updates();
      *u->mutable_row() = samples::MakeRow({samples::IntDatum(v)});
      u->set_time(t);
      u->set_diff(d);
    }
    merger.OnPart(w, b);
  }
  // What was sent, as "[lower,upper):v@t*d,… " and "End(REASON)".
  std::string Text() const {
    std::string out;
    for (const auto& r : sent) {
      if (r.has_subscribe_end()) {
        out += "End(" + pb::SubscribeEnd::Reason_Name(r.subscribe_end().reason()) + ")";
        continue;
      }
      const auto& b = r.subscribe_batch();
      out += "[" + std::to_string(b.lower()) + "," + std::to_string(b.upper()) + "):";
      for (const auto& u : b.updates()) {
        out += std::to_string(u.row().datums(0).int64()) + "@" + std::to_string(u.time()) + "*" +
               std::to_string(u.diff()) + ",";
      }
      out += " ";
    }
    return out;
  }
};

TEST(SubscribeMerger, ABatchWaitsForEveryWorkerAndCoversUpToTheirMinimumProgress) {
  Harness h(2);
  h.merger.Expect(samples::Subscribe("s", "u2", 3, true).subscribe());
  h.Part(0, 3, 4, {{1, 3, 1}});  // worker 0's snapshot
  EXPECT_EQ(h.Text(), "") << "worker 1 has not sent its snapshot";
  h.Part(1, 3, 4, {{2, 3, 1}});
  EXPECT_EQ(h.Text(), "[3,4):1@3*1,2@3*1, ");
  // Worker 0 runs ahead: its updates at 5 wait until worker 1 passes 5; sent in time order.
  h.Part(0, 4, 7, {{1, 5, -1}, {1, 6, 1}});
  h.Part(1, 4, 6, {{2, 4, 1}});
  EXPECT_EQ(h.Text(), "[3,4):1@3*1,2@3*1, [4,6):2@4*1,1@5*-1, ");
  h.Part(1, 6, 7);
  EXPECT_EQ(h.Text(), "[3,4):1@3*1,2@3*1, [4,6):2@4*1,1@5*-1, [6,7):1@6*1, ");
}

TEST(SubscribeMerger, WithoutASnapshotTheStreamStartsAfterAsOf) {
  Harness h(1);
  h.merger.Expect(samples::Subscribe("s", "u2", 3, false).subscribe());
  h.Part(0, 4, 5);
  EXPECT_EQ(h.Text(), "[4,5): ");
}

TEST(SubscribeMerger, UpToEndsItOnceWithTheLastBatchAtUpTo) {
  Harness h(2);
  h.merger.Expect(samples::Subscribe("s", "u2", 0, false, 3).subscribe());
  h.Part(0, 1, 3, {{1, 2, 1}});
  h.Part(1, 1, 3);
  EXPECT_EQ(h.Text(), "[1,3):1@2*1, End(UP_TO)");
  EXPECT_EQ(h.forgotten, (std::vector<std::string>{"s"}));
  h.Part(0, 3, 4);  // nothing after the End
  EXPECT_FALSE(h.merger.Cancel("s"));
  EXPECT_EQ(h.Text(), "[1,3):1@2*1, End(UP_TO)");
}

TEST(SubscribeMerger, UpToJustAfterAsOfWithoutASnapshotEndsOnceEveryWorkerHasReadAsOf) {
  Harness h(2);
  h.merger.Expect(samples::Subscribe("s", "u2", 3, false, 4).subscribe());
  h.Part(0, 4, 4);  // worker 0: readable at as_of, no error, nothing more asked for
  EXPECT_EQ(h.Text(), "");
  h.Part(1, 4, 4);
  EXPECT_EQ(h.Text(), "End(UP_TO)");
}

TEST(SubscribeMerger, TheEmptyFrontierEndsItClosed) {
  Harness h(1);
  h.merger.Expect(samples::Subscribe("s", "u2", 0, false).subscribe());
  h.Part(0, 1, Frontier::Empty().raw(), {{1, 9, 1}});
  EXPECT_EQ(h.Text(), "[1," + std::to_string(Frontier::Empty().raw()) + "):1@9*1, End(CLOSED)");
}

TEST(SubscribeMerger, AWorkersEndEndsItOnceAndTheOtherWorkersForgetIt) {
  Harness h(2);
  h.merger.Expect(samples::Subscribe("s", "u2", 0, true).subscribe());
  pb::SubscribeEnd end;
  end.set_uuid("s");
  end.set_reason(pb::SubscribeEnd::ERROR);
  end.set_detail("u2: division by zero");
  h.merger.OnEnd(end);
  h.merger.OnEnd(end);  // the other worker's: dropped
  h.Part(1, 0, 1);
  EXPECT_EQ(h.Text(), "End(ERROR)");
  EXPECT_EQ(h.sent[0].subscribe_end().detail(), "u2: division by zero");
  EXPECT_EQ(h.forgotten, (std::vector<std::string>{"s"}));
}

TEST(SubscribeMerger, CancelEndsItCanceledOnceAndDropsWhatComesLater) {
  Harness h(2);
  h.merger.Expect(samples::Subscribe("s", "u2", 0, true).subscribe());
  h.Part(0, 0, 1, {{1, 0, 1}});
  EXPECT_TRUE(h.merger.Cancel("s"));
  EXPECT_FALSE(h.merger.Cancel("s"));
  h.Part(1, 0, 1);
  EXPECT_EQ(h.Text(), "End(CANCELED)");
  EXPECT_TRUE(h.forgotten.empty()) << "the cancel itself reaches the workers";
}

TEST(SubscribeMerger, ALargeIntervalIsSentInBoundedPartsWithUpperEqualToLower) {
  Harness h(1);
  h.merger.SetBatchBytes(kMinSubscribeBatchBytes);
  h.merger.Expect(samples::Subscribe("s", "u2", 0, true).subscribe());
  std::vector<std::tuple<std::int64_t, std::uint64_t, std::int64_t>> many;
  for (int i = 0; i < 2000; ++i) many.push_back({1000000 + i, 0, 1});
  h.Part(0, 0, 1, many);
  ASSERT_GT(h.sent.size(), 2u);
  int updates = 0;
  for (std::size_t i = 0; i < h.sent.size(); ++i) {
    const auto& b = h.sent[i].subscribe_batch();
    EXPECT_EQ(b.lower(), 0u);
    EXPECT_EQ(b.upper(), i + 1 == h.sent.size() ? 1u : 0u) << i;
    std::size_t bytes = 0;
    for (const auto& u : b.updates()) bytes += EncodedUpdateBytes(u);
    EXPECT_LE(bytes, kMinSubscribeBatchBytes) << i;
    updates += b.updates_size();
  }
  EXPECT_EQ(updates, 2000);
}

TEST(SubscribeMerger, ProgressWithoutChangesIsAProgressOnlyBatch) {
  Harness h(2);
  h.merger.Expect(samples::Subscribe("s", "u2", 0, false).subscribe());
  h.Part(0, 1, 5);
  h.Part(1, 1, 3);
  h.Part(1, 3, 9);
  EXPECT_EQ(h.Text(), "[1,3): [3,5): ");
}

TEST(SubscribeMerger, BatchBytesParameterIsParsedWithinItsBounds) {
  EXPECT_EQ(ParseSubscribeBatchBytes(kSubscribeBatchBytes, "65536"), 65536u);
  EXPECT_EQ(ParseSubscribeBatchBytes(kSubscribeBatchBytes, "4095"), std::nullopt);
  EXPECT_EQ(ParseSubscribeBatchBytes(kSubscribeBatchBytes, "16777216"), std::nullopt);
  EXPECT_EQ(ParseSubscribeBatchBytes(kSubscribeBatchBytes, "12x"), std::nullopt);
  EXPECT_EQ(ParseSubscribeBatchBytes("max_result_size", "65536"), std::nullopt);
}

}  // namespace
}  // namespace tandem::workers::subscribe_merger_test
