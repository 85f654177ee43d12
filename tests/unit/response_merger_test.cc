// The response merger alone (workers/response_merger.h): one stream to the controller from N
// workers' answers.
#include "workers/response_merger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "unit/protocol_samples.h"
#include "workers/peek.h"

namespace tandem::workers::response_merger_test {
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

// ---- per-worker finishing (workers/peek.h: KeepFirstForFinishing) and the merge that completes it

using Rows = CountedRows;

Datum I(std::int64_t v) { return Datum(v); }

pb::PeekResponse PartOf(const std::string& uuid, const Rows& rows) {
  pb::PeekResponse p;
  p.set_uuid(uuid);
  auto* out = p.mutable_rows();
  for (const auto& [row, count] : rows) {
    auto* rc = out->add_rows();
    for (const Datum& d : row) *rc->mutable_row()->add_datums() = ToProto(d);
    rc->set_count(PartCount(count));
  }
  return p;
}

std::string Show(const pb::PeekResponse& r) {
  if (!r.has_rows()) return "Error(" + r.error() + ")";
  std::string out;
  for (const auto& rc : r.rows().rows()) out += ipc::ToJson(rc) + "; ";
  return out;
}

TEST(ResponseMerger, PerWorkerLimitsThenTheMergeGiveExactlyTheFinishingOfEveryRow) {
  // Random rows over small domains (so the same row is on several workers, as a projection
  // makes it), random multiplicities (some huge, some whose sums overflow int64), random
  // finishings, N = 1..4: finishing the merged per-worker parts must equal finishing all rows at
  // once — rows, or the overflow error of a row the answer needs.
  std::mt19937_64 rng(9);
  auto below = [&](std::uint64_t n) { return rng() % n; };
  const std::vector<Datum> domain = {Datum(Null{}), I(-2), I(-1), I(0), I(1), I(2), I(3)};
  int truncated = 0, errors = 0;
  for (int round = 0; round < 3000; ++round) {
    const auto workers = static_cast<std::uint32_t>(1 + below(4));
    std::vector<Rows> parts(workers);
    Rows all;
    const std::size_t n = below(40);
    for (std::size_t i = 0; i < n; ++i) {
      Row row;
      for (int c = 0; c < 2; ++c) row.push_back(domain[below(domain.size())]);
      // Some counts so large that two of them overflow int64 (an error only where needed).
      const std::uint64_t kind = below(20);
      const std::int64_t count = kind == 0  ? INT64_MAX - static_cast<std::int64_t>(below(3))
                                 : kind < 3 ? static_cast<std::int64_t>(1 + below(1ull << 40))
                                            : static_cast<std::int64_t>(1 + below(4));
      all.emplace_back(row, count);
      // A worker consolidates its own rows (ReadPeekPart): add to an equal row if it has one.
      Rows& part = parts[below(workers)];
      auto same = std::find_if(part.begin(), part.end(),
                               [&](const auto& rc) { return CompareRow(rc.first, row) == 0; });
      if (same != part.end()) {
        same->second += count;
      } else {
        part.emplace_back(std::move(row), count);
      }
    }
    pb::Finishing f;
    for (std::uint64_t o = below(3); o > 0; --o) {
      auto* by = f.add_order_by();
      by->set_column(static_cast<std::uint32_t>(below(2)));
      by->set_desc(below(2) == 0);
      by->set_nulls_last(below(2) == 0);
    }
    if (below(4) != 0) f.set_limit(below(2) == 0 ? below(4) : below(20));
    if (below(2) == 0) f.set_offset(below(3) == 0 ? below(1ull << 41) : below(12));
    if (below(3) == 0) f.add_project(static_cast<std::uint32_t>(below(2)));

    pb::PeekResponse want;
    if (const auto err = Finish(f, all, want.mutable_rows())) {
      want.set_error(*err);
      ++errors;
    }

    Harness h(workers);
    pb::Command c = ipc::samples::PeekAt("q", "u2");
    *c.mutable_peek()->mutable_finishing() = f;
    h.merger.ExpectPeek(c.peek());
    for (auto& part : parts) {
      const std::size_t before = part.size();
      KeepFirstForFinishing(f, &part);
      if (part.size() < before) ++truncated;
      if (f.has_limit()) {  // rows beyond offset + limit counted rows are never sent
        std::uint64_t sent = 0;
        for (std::size_t i = 0; i + 1 < part.size(); ++i) sent += part[i].second;
        EXPECT_LT(sent, std::max<std::uint64_t>(1, f.offset() + f.limit())) << "round " << round;
      }
      h.merger.OnPeekPart(PartOf("q", part));
    }
    ASSERT_EQ(h.sent.size(), 1u);
    EXPECT_EQ(Show(h.sent[0].peek_response()), Show(want))
        << "round " << round << ", " << workers << " workers, finishing " << ipc::ToJson(f);
  }
  EXPECT_GT(truncated, 1000) << "the rounds exercise the per-worker limit";
  EXPECT_GT(errors, 100) << "and overflows";
}

TEST(ResponseMerger, KeepFirstForFinishingCountsMultiplicitiesAndKeepsTheCrossingRowWhole) {
  pb::Finishing f;
  f.add_order_by()->set_column(0);
  f.mutable_order_by(0)->set_desc(true);
  f.set_offset(2);
  f.set_limit(2);  // 4 counted rows
  Rows rows;
  for (std::int64_t v = 0; v < 10; ++v) rows.emplace_back(Row{I(v)}, v == 8 ? 3 : 1);
  KeepFirstForFinishing(f, &rows);
  ASSERT_EQ(rows.size(), 2u) << "9 (1 row), then 8 (3 rows) reaches 4";
  EXPECT_EQ(rows[0].first, Row{I(9)});
  EXPECT_EQ(rows[1].first, Row{I(8)});
  EXPECT_EQ(rows[1].second, 3) << "the crossing row keeps its count: other workers add to it";

  f.clear_offset();
  f.set_limit(0);
  KeepFirstForFinishing(f, &rows);
  EXPECT_TRUE(rows.empty()) << "limit 0 needs no row";

  pb::Finishing unlimited;
  unlimited.set_offset(3);
  Rows all = {{Row{I(1)}, 1}, {Row{I(2)}, 1}};
  KeepFirstForFinishing(unlimited, &all);
  EXPECT_EQ(all.size(), 2u) << "without a limit every row may be needed";

  pb::Finishing huge;
  huge.set_offset(UINT64_MAX - 1);
  huge.set_limit(UINT64_MAX - 1);
  Rows big = {{Row{I(1)}, INT64_MAX}, {Row{I(2)}, INT64_MAX}};
  KeepFirstForFinishing(huge, &big);
  EXPECT_EQ(big.size(), 2u) << "offset + limit saturates";
}

TEST(ResponseMerger, ARowSkippedOverByTheOffsetMustFitInt64EvenWithLimitZero) {
  // Found by ImportCorrectness (seed 2500022): offset 3, limit 0, rows a x2 then b with a count
  // beyond int64. b covers the third skipped place, so the answer needs it and is the overflow
  // error (the reference's rule); Finish used to stop at the first row once the limit was spent.
  pb::Finishing f;
  f.add_order_by()->set_column(0);
  f.set_offset(3);
  f.set_limit(0);
  const Int128 beyond = Int128{INT64_MAX} + 5;
  const Rows rows = {{Row{I(1)}, 2}, {Row{I(2)}, beyond}};
  pb::Rows out;
  EXPECT_EQ(Finish(f, rows, &out), std::string(kMultiplicityOverflow));

  f.set_offset(2);  // a alone covers the offset: b is not needed
  out.Clear();
  EXPECT_EQ(Finish(f, rows, &out), std::nullopt);
  EXPECT_EQ(out.rows_size(), 0);
}

TEST(ResponseMerger, AnAnswerOverMaxResultSizeIsAnErrorNamingTheLimitAndTheSize) {
  Harness h(2);
  h.merger.SetMaxResultSize(1000);
  h.merger.ExpectPeek(ipc::samples::PeekAt("big", "u2").peek());
  h.merger.SetMaxResultSize(1 << 20);  // a later change is for later peeks
  h.merger.ExpectPeek(ipc::samples::PeekAt("fits", "u2").peek());
  Rows rows;
  for (std::int64_t v = 0; v < 100; ++v) rows.emplace_back(Row{I(v), I(-v)}, 1);
  for (const char* uuid : {"big", "fits"}) {
    h.merger.OnPeekPart(PartOf(uuid, rows));
    h.merger.OnPeekPart(PartOf(uuid, {}));
  }
  ASSERT_EQ(h.sent.size(), 2u);
  const auto& big = h.sent[0].peek_response();
  ASSERT_TRUE(big.result_case() == pb::PeekResponse::kError) << Show(big);
  const std::size_t size = PartOf("", rows).rows().ByteSizeLong();
  EXPECT_EQ(big.error(), "the result exceeds max_result_size (1000 bytes): the answer is " +
                             std::to_string(size) +
                             " bytes; add a limit, keys or a filter, or raise it");
  EXPECT_EQ(h.sent[1].peek_response().rows().rows_size(), 100);
  EXPECT_FALSE(h.merger.Expects("big"));
}

}  // namespace
}  // namespace tandem::workers::response_merger_test
