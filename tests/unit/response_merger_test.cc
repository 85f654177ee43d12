// The response merger alone (workers/response_merger.h): one stream to the controller from N
// workers' answers.
#include "workers/response_merger.h"

#include <gtest/gtest.h>

#include <limits>

#include "unit/protocol_samples.h"

namespace tandem::workers {
namespace {

namespace pb = ipc::pb;

struct Harness {
  std::vector<pb::Response> sent;
  ResponseMerger merger;
  explicit Harness(std::uint32_t workers)
      : merger(workers, [this](const pb::Response& r) { sent.push_back(r); }) {}

  void Frontier(std::uint32_t worker, std::uint64_t seq, const std::string& id,
                std::optional<Time> t) {
    pb::Frontiers f;
    f.set_id(id);
    if (t) f.mutable_write()->add_elements(*t);
    merger.OnFrontier(worker, seq, f);
  }
  // The frontiers sent, as "id=t" ("id=closed" for the empty frontier).
  std::vector<std::string> Frontiers() const {
    std::vector<std::string> out;
    for (const auto& r : sent) {
      if (!r.has_frontiers()) continue;
      const auto& w = r.frontiers().write();
      out.push_back(r.frontiers().id() + "=" +
                    (w.elements().empty() ? "closed" : std::to_string(w.elements(0))));
    }
    return out;
  }
};

using Strings = std::vector<std::string>;

TEST(ResponseMerger, FrontiersAreTheMinimumOverWorkersAndNeverRegress) {
  Harness h(2);
  h.Frontier(0, 7, "u2", 5);
  EXPECT_TRUE(h.Frontiers().empty()) << "worker 1 is still at the minimum";
  h.Frontier(1, 7, "u2", 3);
  h.Frontier(1, 7, "u2", 6);
  h.Frontier(0, 7, "u2", 9);
  EXPECT_EQ(h.Frontiers(), (Strings{"u2=3", "u2=5", "u2=6"}));
  h.Frontier(0, 7, "u2", std::nullopt);
  h.Frontier(1, 7, "u2", std::nullopt);
  EXPECT_EQ(h.Frontiers().back(), "u2=closed");
  h.sent.clear();
  h.merger.ResendFrontiers();
  EXPECT_TRUE(h.Frontiers().empty()) << "closed on every worker: forgotten";
}

TEST(ResponseMerger, AReusedIdIsReportedAfterTheOldCollectionCloses) {
  Harness h(2);
  for (std::uint32_t w : {0u, 1u}) h.Frontier(w, 1, "u4", 8);
  // u4 dropped and created again (seq 5): the new one reports before the old one closed on
  // worker 1.
  h.Frontier(0, 1, "u4", std::nullopt);
  h.Frontier(0, 5, "u4", 2);
  h.Frontier(1, 5, "u4", 3);
  EXPECT_EQ(h.Frontiers(), (Strings{"u4=8"})) << "the new u4 waits for the old one to close";
  h.Frontier(1, 1, "u4", std::nullopt);
  EXPECT_EQ(h.Frontiers(), (Strings{"u4=8", "u4=closed", "u4=2"}));
}

TEST(ResponseMerger, APeekIsAnsweredOnceFromAllPartsThroughItsFinishing) {
  Harness h(2);
  pb::Command c = ipc::samples::Peek("p");
  c.mutable_peek()->clear_finishing();
  c.mutable_peek()->mutable_finishing()->set_limit(2);
  h.merger.ExpectPeek(c.peek());
  auto part = [](std::vector<std::pair<std::int64_t, std::uint64_t>> rows) {
    pb::PeekResponse p;
    p.set_uuid("p");
    auto* out = p.mutable_rows();
    for (auto [v, n] : rows) {
      auto* rc = out->add_rows();
      rc->mutable_row()->add_datums()->set_int64(v);
      rc->set_count(n);
    }
    return p;
  };
  h.merger.OnPeekPart(part({{3, 1}, {1, 1}}));
  EXPECT_TRUE(h.sent.empty());
  h.merger.OnPeekPart(part({{2, 5}}));
  ASSERT_EQ(h.sent.size(), 1u);
  const auto& rows = h.sent[0].peek_response().rows();
  ASSERT_EQ(rows.rows_size(), 2);
  EXPECT_EQ(rows.rows(0).row().datums(0).int64(), 1);
  EXPECT_EQ(rows.rows(1).row().datums(0).int64(), 2);
  EXPECT_EQ(rows.rows(1).count(), 1u) << "the limit counts multiplicities";
  EXPECT_FALSE(h.merger.Expects("p"));
  h.merger.OnPeekPart(part({{9, 1}}));
  EXPECT_EQ(h.sent.size(), 1u) << "exactly one answer per uuid";
}

TEST(ResponseMerger, OfSeveralErrorsThePeekAnswersTheEarliestWhicheverWorkerIsFirst) {
  for (bool reversed : {false, true}) {
    Harness h(2);
    h.merger.ExpectPeek(ipc::samples::Peek("e").peek());
    std::vector<std::string> errors = {"log line 12: bad", "log line 7: bad"};
    if (reversed) std::swap(errors[0], errors[1]);
    for (const auto& e : errors) {
      pb::PeekResponse p;
      p.set_uuid("e");
      p.set_error(e);
      h.merger.OnPeekPart(p);
    }
    ASSERT_EQ(h.sent.size(), 1u);
    EXPECT_EQ(h.sent[0].peek_response().error(), "log line 7: bad");
  }
}

TEST(ResponseMerger, ACanceledPartMakesTheAnswerCanceled) {
  Harness h(2);
  h.merger.ExpectPeek(ipc::samples::Peek("c").peek());
  pb::PeekResponse rows, canceled;
  rows.set_uuid("c");
  rows.mutable_rows();
  canceled.set_uuid("c");
  canceled.mutable_canceled();
  h.merger.OnPeekPart(rows);
  h.merger.OnPeekPart(canceled);
  ASSERT_EQ(h.sent.size(), 1u);
  EXPECT_TRUE(h.sent[0].peek_response().has_canceled());
}

}  // namespace
}  // namespace tandem::workers
