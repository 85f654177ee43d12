// SUBSCRIBE's lines (frontend/server/sql_subscribe.h): COPY's text format, as PostgreSQL's COPY TO
// writes it and psql prints it — mz_timestamp, mz_diff, then the columns, tab-separated, NULL as
// \N and the escapes of COPY's text format. And the queue between the replica driver and the
// stream (subscribe_queue.h): in order, bounded in bytes, never blocking the driver.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <string>

#include "frontend/server/sql_subscribe.h"
#include "frontend/server/subscribe_queue.h"
#include "unit/protocol_samples.h"

namespace tandem::frontend {
namespace {

namespace samples = ipc::samples;

TEST(SubscribeCopyText, LineIsTimeDiffAndColumnsInCopyTextFormat) {
  ipc::pb::Datum null;  // no kind: NULL
  ipc::pb::Datum yes;
  yes.set_bool_(true);
  const auto row = samples::MakeRow(
      {samples::IntDatum(-7), samples::StringDatum("plain"), null, samples::FloatDatum(1.5), yes});
  EXPECT_EQ(CopyTextLine(1700000000123, -1, row), "1700000000123\t-1\t-7\tplain\t\\N\t1.5\tt\n");
}

TEST(SubscribeCopyText, TabNewlineBackslashAndControlCharactersAreEscaped) {
  const auto row = samples::MakeRow({samples::StringDatum("a\tb\nc\\d\re\bf\fg\vh")});
  EXPECT_EQ(CopyTextLine(5, 2, row), "5\t2\ta\\tb\\nc\\\\d\\re\\bf\\fg\\vh\n");
  // A text that reads "\N" is not NULL: its backslash is escaped.
  EXPECT_EQ(CopyTextLine(5, 1, samples::MakeRow({samples::StringDatum("\\N")})), "5\t1\t\\\\N\n");
  // Other bytes, UTF-8 included, pass as they are.
  EXPECT_EQ(CopyTextLine(5, 1, samples::MakeRow({samples::StringDatum("é\x01")})), "5\t1\té\x01\n");
}

TEST(SubscribeCopyText, FloatsUsePostgresTextForms) {
  const auto row = samples::MakeRow(
      {samples::FloatDatum(std::numeric_limits<double>::infinity()), samples::FloatDatum(1e20)});
  EXPECT_EQ(CopyTextLine(1, 1, row), "1\t1\tInfinity\t1e+20\n");
}

ipc::pb::SubscribeBatch BatchOf(std::uint64_t lower, std::uint64_t upper, int updates) {
  ipc::pb::SubscribeBatch b;
  b.set_lower(lower);
  b.set_upper(upper);
  for (int i = 0; i < updates; ++i) {
    auto* u = b.add_updates();
    *u->mutable_row() = samples::MakeRow({samples::IntDatum(i)});
    u->set_time(lower);
    u->set_diff(1);
  }
  return b;
}

TEST(SubscribeBatchQueue, BatchesComeInOrderThenTheEnd) {
  SubscribeBatchQueue queue(std::size_t{1} << 20);
  queue.Push(BatchOf(5, 6, 1));
  queue.Push(BatchOf(6, 9, 0));
  auto taken = queue.Take(DriverClock::now() + std::chrono::seconds(5));
  ASSERT_EQ(taken.batches.size(), 2u);
  EXPECT_EQ(taken.batches[0].lower(), 5u);
  EXPECT_EQ(taken.batches[1].lower(), 6u);
  EXPECT_FALSE(taken.end);
  EXPECT_FALSE(taken.overflowed);
  ipc::pb::SubscribeEnd end;
  end.set_reason(ipc::pb::SubscribeEnd::CLOSED);
  queue.Push(BatchOf(9, 10, 0));
  queue.End(end);
  queue.Push(BatchOf(10, 11, 0));  // after the end: dropped
  taken = queue.Take(DriverClock::now() + std::chrono::seconds(5));
  ASSERT_EQ(taken.batches.size(), 1u);
  EXPECT_EQ(taken.batches[0].lower(), 9u);
  ASSERT_TRUE(taken.end && taken.end->ok());
  EXPECT_EQ((*taken.end)->reason(), ipc::pb::SubscribeEnd::CLOSED);
  EXPECT_TRUE(queue.AwaitEnd(DriverClock::now()));
}

TEST(SubscribeBatchQueue, OneBatchIsAlwaysTakenAndTheQueueOverflowsPastItsBound) {
  SubscribeBatchQueue queue(1);  // smaller than any batch
  queue.Push(BatchOf(1, 2, 100));
  auto taken = queue.Take(DriverClock::now() + std::chrono::seconds(5));
  ASSERT_EQ(taken.batches.size(), 1u);
  EXPECT_FALSE(taken.overflowed);
  queue.Push(BatchOf(2, 3, 1));
  queue.Push(BatchOf(3, 4, 1));  // the client did not take the one before: overflow
  queue.Push(BatchOf(4, 5, 1));
  taken = queue.Take(DriverClock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(taken.overflowed);
  EXPECT_TRUE(taken.batches.empty());
}

TEST(SubscribeBatchQueue, TakeReturnsAtItsTimeOrWhenWoken) {
  SubscribeBatchQueue queue(std::size_t{1} << 20);
  const auto start = DriverClock::now();
  auto taken = queue.Take(start + std::chrono::milliseconds(50));
  EXPECT_GE(DriverClock::now() - start, std::chrono::milliseconds(50));
  EXPECT_TRUE(taken.batches.empty());
  EXPECT_FALSE(taken.end);
  queue.Wake();
  taken = queue.Take(DriverClock::now() + std::chrono::seconds(30));
  EXPECT_LT(DriverClock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(queue.AwaitEnd(DriverClock::now() + std::chrono::milliseconds(10)));
}

}  // namespace
}  // namespace tandem::frontend
