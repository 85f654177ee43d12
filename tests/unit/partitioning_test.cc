// Route once (issue 19): which nodes know where their rows are among the workers, and that the
// generators emit exactly the keys their worker owns — what lets an exchange be skipped.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "shm/batch.h"
#include "unit/protocol_samples.h"
#include "workers/exchange.h"
#include "workers/expr.h"
#include "workers/partitioning.h"
#include "workers/sources/source.h"

namespace tandem::workers {
namespace {

namespace pb = ipc::pb;
namespace s = ipc::samples;

TEST(Partitioning, AnExchangeIsSatisfiedOnlyByExactlyItsKeyOrTheWholeRow) {
  EXPECT_TRUE(Partitioning::By({0, 2}).Satisfies({0, 2}, false));
  EXPECT_FALSE(Partitioning::By({0, 2}).Satisfies({2, 0}, false));  // another byte order
  EXPECT_FALSE(Partitioning::By({0}).Satisfies({0, 1}, false));     // a coarser key routes apart
  EXPECT_FALSE(Partitioning::By({0}).Satisfies({}, true));
  EXPECT_TRUE(Partitioning::WholeRow().Satisfies({}, true));
  EXPECT_FALSE(Partitioning::WholeRow().Satisfies({0}, false));
  EXPECT_FALSE(Partitioning::Unknown().Satisfies({0}, false));
}

TEST(Partitioning, AnMfpKeepsItsInputsPartitioningWhereItsProjectionPutsTheColumns) {
  const auto by0 = Partitioning::By({0});
  const Mfp filter(s::Mfp({}, {s::Binary(pb::GT, s::Col(1), s::IntLit(0))}, {}),
                   s::KeyValueSchema());
  EXPECT_EQ(filter.Through(by0), by0);
  EXPECT_EQ(filter.Through(Partitioning::WholeRow()), Partitioning::WholeRow());
  const Mfp map_only(s::Mfp({s::Binary(pb::MUL, s::Col(1), s::IntLit(2))}, {}, {}),
                     s::KeyValueSchema());
  EXPECT_EQ(map_only.Through(by0), by0);  // the map's column is appended after the input's
  EXPECT_EQ(map_only.Through(Partitioning::WholeRow()), Partitioning::Unknown());
  const Mfp swap(s::Mfp({}, {}, {1, 0}), s::KeyValueSchema());
  EXPECT_EQ(swap.Through(by0), Partitioning::By({1}));
  EXPECT_EQ(swap.Through(Partitioning::By({1, 0})), Partitioning::By({0, 1}));
  const Mfp drop_key(s::Mfp({s::Binary(pb::MUL, s::Col(0), s::IntLit(2))}, {}, {2, 1}),
                     s::KeyValueSchema());
  EXPECT_EQ(drop_key.Through(by0), Partitioning::Unknown());
  EXPECT_EQ(Mfp().Through(Partitioning::WholeRow()), Partitioning::WholeRow());
}

// Every worker's part of a key_value source over a few ticks: rows by (key, value, time).
std::multiset<std::tuple<std::int64_t, std::int64_t, Time, std::int64_t>> Part(
    Source& source, std::uint32_t me, Exchange& exchange, std::vector<Row>* rows = nullptr) {
  auto node = source.MakeNode(me, 0, Frontier::Empty());
  std::multiset<std::tuple<std::int64_t, std::int64_t, Time, std::int64_t>> out;
  std::uint64_t tick = 0;
  for (Time lo : {0, 1, 4}) {
    Delta d = node->Pull(TickCtx{lo,
                                 Frontier::At(lo == 0   ? 1
                                              : lo == 1 ? 4
                                                        : 9),
                                 ++tick, me, &exchange});
    for (const RowUpdate& u : d.rows) {
      out.emplace(std::get<std::int64_t>(u.row[0]), std::get<std::int64_t>(u.row[1]), u.time,
                  u.diff);
      if (rows) rows->push_back(u.row);
    }
  }
  EXPECT_EQ(node->partitioning(), Partitioning::By({0}));
  return out;
}

TEST(Partitioning, EachWorkerOfAKeyValueSourceEmitsExactlyTheKeysItOwnsAndTogetherTheyEmitAll) {
  const auto now = std::chrono::steady_clock::now();
  auto single = MakeSource(s::KeyValueImport("u1"), now, nullptr, 1);
  Exchange one(1);
  const auto whole = Part(*single, 0, one);
  ASSERT_FALSE(whole.empty());
  for (std::uint32_t n : {2u, 3u}) {
    auto source = MakeSource(s::KeyValueImport("u1"), now, nullptr, n);
    Exchange exchange(n);
    std::multiset<std::tuple<std::int64_t, std::int64_t, Time, std::int64_t>> together;
    for (std::uint32_t me = 0; me < n; ++me) {
      std::vector<Row> rows;
      const auto part = Part(*source, me, exchange, &rows);
      for (const Row& row : rows) {
        std::string key;
        AppendEncodedDatum(row[0], &key);
        EXPECT_EQ(shm::WorkerOf(key, n), me) << "worker " << me << " of " << n;
      }
      together.insert(part.begin(), part.end());
    }
    EXPECT_EQ(together, whole) << n << " workers";
  }
}

TEST(Partitioning, AKeyValueSourcesArrangedPullEncodesExactlyWhatItsRowsWouldBe) {
  const auto now = std::chrono::steady_clock::now();
  for (std::uint32_t n : {1u, 2u}) {
    auto by_rows = MakeSource(s::KeyValueImport("u1"), now, nullptr, n);
    auto arranged = MakeSource(s::KeyValueImport("u1"), now, nullptr, n);
    Exchange exchange(n);
    for (std::uint32_t me = 0; me < n; ++me) {
      auto rows_node = by_rows->MakeNode(me, 2, Frontier::At(6));  // as_of 2, until 6
      auto arranged_node = arranged->MakeNode(me, 2, Frontier::At(6));
      ASSERT_TRUE(arranged_node->CanPullArranged({0}));
      EXPECT_FALSE(arranged_node->CanPullArranged({1}));
      EXPECT_FALSE(arranged_node->CanPullArranged({0, 1}));
      std::uint64_t tick = 0;
      for (Time lo : {0, 1, 4}) {
        const TickCtx ctx{lo, Frontier::At(lo == 0 ? 1 : lo == 1 ? 4 : 9), ++tick, me, &exchange};
        std::vector<std::tuple<std::string, std::string, Time, std::int64_t>> want, got;
        for (const RowUpdate& u : rows_node->Pull(ctx).rows) {
          std::string key, row;
          AppendEncodedDatum(u.row[0], &key);
          AppendEncodedRow(u.row, &row);
          want.emplace_back(key, row, u.time, u.diff);
        }
        shm::UpdateBuffer updates;
        std::vector<ErrorUpdate> errors;
        arranged_node->PullArranged(ctx, {0}, &updates, &errors);
        for (std::size_t i = 0; i < updates.size(); ++i) {
          got.emplace_back(std::string(updates.key(i)), std::string(updates.val(i)),
                           updates.time(i), updates.diff(i));
        }
        EXPECT_TRUE(errors.empty());
        EXPECT_EQ(got, want) << n << " workers, worker " << me << ", tick from " << lo;
        if (lo == 4) {
          EXPECT_FALSE(want.empty());  // times 4, 5 (until 6 drops 6..8)
        }
      }
    }
  }
}

TEST(Partitioning, ACounterEmitsEachValueOnTheWorkerThatOwnsIt) {
  const auto now = std::chrono::steady_clock::now();
  auto source = MakeSource(s::CounterImport("u1"), now, nullptr, 2);
  Exchange exchange(2);
  std::set<std::int64_t> seen;
  for (std::uint32_t me = 0; me < 2; ++me) {
    auto node = source->MakeNode(me, 0, Frontier::Empty());
    EXPECT_EQ(node->partitioning(), Partitioning::By({0}));
    for (const RowUpdate& u : node->Pull(TickCtx{0, Frontier::At(50), 1, me, &exchange}).rows) {
      const auto v = std::get<std::int64_t>(u.row[0]);
      EXPECT_EQ(OwnerOf(v, 2), me);
      EXPECT_TRUE(seen.insert(v).second);
    }
  }
  EXPECT_EQ(seen.size(), 49u);  // 1 … 49
}

TEST(Exchange, EveryRowReachesTheWorkerItsKeyRoutesToOverSeveralRounds) {
  constexpr std::uint32_t kWorkers = 2;
  Exchange exchange(kWorkers);
  std::vector<std::map<std::int64_t, std::int64_t>> got(kWorkers);  // per worker: key -> count
  std::vector<std::thread> threads;
  for (std::uint32_t me = 0; me < kWorkers; ++me) {
    threads.emplace_back([&, me] {
      for (int round = 0; round < 5; ++round) {
        std::vector<RowUpdate> rows;
        for (std::int64_t k = 0; k < 100; ++k) {
          rows.push_back({{k, std::string(40, 'x')}, static_cast<Time>(round), 1});
        }
        for (const RowUpdate& u : exchange.Shuffle(me, std::move(rows), {0}, false)) {
          ++got[me][std::get<std::int64_t>(u.row[0])];
          EXPECT_EQ(std::get<std::string>(u.row[1]), std::string(40, 'x'));
          EXPECT_EQ(u.time, static_cast<Time>(round));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (std::int64_t k = 0; k < 100; ++k) {
    const std::uint32_t owner = OwnerOf(k, kWorkers);
    EXPECT_EQ(got[owner][k], 5 * static_cast<std::int64_t>(kWorkers)) << k;
    EXPECT_EQ(got[1 - owner].count(k), 0u) << k;
  }
}

}  // namespace
}  // namespace tandem::workers
