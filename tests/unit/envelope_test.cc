// The upsert envelope (workers/sources/envelope.h, DESIGN §9): records become updates — as they
// are for a plain source, or, for an upsert key, as the retraction of a key's old row and the
// insertion of its new one, applied in time order and, within a time, in the order added.
#include "workers/sources/envelope.h"

#include <gtest/gtest.h>

#include <map>

#include "base/datum_text.h"
#include "shm/routing.h"

namespace tandem::workers {
namespace {

using Kind = SourceRecord::Kind;

SourceRecord Upsert(std::int64_t k, std::string v, Time t) {
  return {Kind::kUpsert, {Datum{k}, Datum{std::move(v)}}, t, 1};
}
SourceRecord Delete(std::int64_t k, Time t) { return {Kind::kDelete, {Datum{k}}, t, 1}; }

// Every worker's node pulled for one tick [lo, hi): the rows each emitted, as (row, time) → diff.
struct Ticker {
  Envelope& e;
  std::uint32_t workers;
  Time as_of = 0;
  std::vector<std::unique_ptr<Node>> nodes;
  Ticker(Envelope& e, std::uint32_t workers, Time as_of = 0)
      : e(e), workers(workers), as_of(as_of) {
    for (std::uint32_t i = 0; i < workers; ++i) {
      nodes.push_back(e.MakeNode(i, as_of, Frontier::Empty()));
    }
  }
  std::map<std::pair<std::string, Time>, std::int64_t> Tick(
      Time lo, Time hi, std::vector<std::size_t>* per_worker = nullptr) {
    std::map<std::pair<std::string, Time>, std::int64_t> out;
    for (std::uint32_t i = 0; i < workers; ++i) {
      TickCtx ctx{lo, Frontier::At(hi), 0, i, nullptr};
      Delta d = nodes[i]->Pull(ctx);
      if (per_worker) per_worker->push_back(d.rows.size());
      for (const RowUpdate& u : d.rows) {
        auto& diff = out[{RowText(u.row), u.time}];
        diff += u.diff;
        if (diff == 0) out.erase({RowText(u.row), u.time});
      }
    }
    return out;
  }
};

using Out = std::map<std::pair<std::string, Time>, std::int64_t>;

TEST(Envelope, PlainRecordsAreEmittedAsTheyAreSpreadOverTheWorkers) {
  Envelope e({}, 2);
  Ticker t(e, 2);
  for (int i = 0; i < 4; ++i) e.Add({Kind::kUpdate, {Datum{std::int64_t{i}}}, 5, -2});
  std::vector<std::size_t> per_worker;
  const Out out = t.Tick(0, 6, &per_worker);
  EXPECT_EQ(out.size(), 4u);
  for (const auto& [row, diff] : out) EXPECT_EQ(diff, -2);
  EXPECT_EQ(per_worker, (std::vector<std::size_t>{2, 2})) << "round robin";
}

TEST(Envelope, RecordsAtOrAfterTheTicksEndWaitForALaterTick) {
  Envelope e({}, 1);
  Ticker t(e, 1);
  e.Add({Kind::kUpdate, {Datum{std::int64_t{1}}}, 7, 1});
  EXPECT_TRUE(t.Tick(0, 7).empty());
  EXPECT_EQ(e.queued(), 1u);
  EXPECT_EQ(t.Tick(7, 8), (Out{{{"(1)", 7}, 1}}));
  EXPECT_EQ(e.queued(), 0u);
}

TEST(Envelope, AnUpsertReplacesTheKeysRowWithARetractionOfTheOldOne) {
  Envelope e({0}, 1);
  Ticker t(e, 1);
  e.Add(Upsert(1, "a", 3));
  EXPECT_EQ(t.Tick(0, 4), (Out{{{"(1, \"a\")", 3}, 1}}));
  e.Add(Upsert(1, "b", 5));
  EXPECT_EQ(t.Tick(4, 6), (Out{{{"(1, \"a\")", 5}, -1}, {{"(1, \"b\")", 5}, 1}}));
}

TEST(Envelope, OfTwoRecordsForOneKeyAtOneTimeTheLaterOneWins) {
  Envelope e({0}, 1);
  Ticker t(e, 1);
  e.Add(Upsert(1, "a", 3));
  e.Add(Upsert(1, "b", 3));
  EXPECT_EQ(t.Tick(0, 4), (Out{{{"(1, \"b\")", 3}, 1}}));
  e.Add(Upsert(1, "c", 5));
  e.Add(Delete(1, 5));
  EXPECT_EQ(t.Tick(4, 6), (Out{{{"(1, \"b\")", 5}, -1}}));
}

TEST(Envelope, RecordsApplyInTimeOrderNotInTheOrderTheyArrived) {
  Envelope e({0}, 1);
  Ticker t(e, 1);
  e.Add(Upsert(1, "late", 5));
  e.Add(Upsert(1, "early", 3));  // a log may write times out of order before its progress mark
  EXPECT_EQ(
      t.Tick(0, 6),
      (Out{{{"(1, \"early\")", 3}, 1}, {{"(1, \"early\")", 5}, -1}, {{"(1, \"late\")", 5}, 1}}));
}

TEST(Envelope, DeletingAnAbsentKeyAndUpsertingTheSameRowChangeNothing) {
  Envelope e({0}, 1);
  Ticker t(e, 1);
  e.Add(Delete(9, 1));
  e.Add(Upsert(1, "a", 2));
  e.Add(Upsert(1, "a", 3));
  EXPECT_EQ(t.Tick(0, 4), (Out{{{"(1, \"a\")", 2}, 1}}));
}

TEST(Envelope, AKeysRecordsAllGoToTheWorkerThatOwnsItsEncodedKey) {
  constexpr std::uint32_t kWorkers = 3;
  Envelope e({0}, kWorkers);
  Ticker t(e, kWorkers);
  for (std::int64_t k = 0; k < 12; ++k) e.Add(Upsert(k, "v", 1));
  for (std::int64_t k = 0; k < 12; ++k) e.Add(Delete(k, 2));
  std::vector<std::size_t> per_worker;
  t.Tick(0, 3, &per_worker);
  std::vector<std::size_t> expected(kWorkers, 0);
  for (std::int64_t k = 0; k < 12; ++k) {
    std::string key;
    AppendEncodedDatum(Datum{k}, &key);
    expected[shm::WorkerOf(key, kWorkers)] += 2;  // its insertion and its deletion
  }
  EXPECT_EQ(per_worker, expected) << "a delete found the row its upsert left on the same worker";
}

TEST(Envelope, TimesBelowAsOfAreAdvancedToIt) {
  Envelope e({0}, 1);
  Ticker t(e, 1, /*as_of=*/10);
  e.Add(Upsert(1, "a", 3));
  e.Add(Upsert(1, "b", 4));
  EXPECT_EQ(t.Tick(0, 11), (Out{{{"(1, \"b\")", 10}, 1}}));
}

TEST(Envelope, ErrorsAreEmittedOnceByWorkerZero) {
  Envelope e({}, 2);
  Ticker t(e, 2);
  e.AddError({"bad line", 2, 1});
  std::size_t errors = 0;
  for (std::uint32_t i = 0; i < 2; ++i) {
    TickCtx ctx{0, Frontier::At(3), 0, i, nullptr};
    errors += t.nodes[i]->Pull(ctx).errors.size();
  }
  EXPECT_EQ(errors, 1u);
}

}  // namespace
}  // namespace tandem::workers
