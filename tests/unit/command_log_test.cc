// The command log alone (workers/command_log.h): numbered in order, read from anywhere a reader
// stands, trimmed only below what every reader has passed, waking a waiting worker.
#include "workers/command_log.h"

#include <gtest/gtest.h>

#include <thread>

#include "unit/protocol_samples.h"

namespace tandem::workers {
namespace {

using namespace std::chrono_literals;
namespace s = ipc::samples;

CommandLog::Entry PeekEntry(const std::string& uuid) {
  return std::make_shared<const ipc::pb::Command>(s::PeekAt(uuid, "u2"));
}

TEST(CommandLog, NumbersCommandsInOrderAndReadsAnyRangeItHolds) {
  CommandLog log;
  for (const char* u : {"a", "b", "c"}) log.Append(PeekEntry(u), 0);
  EXPECT_EQ(log.end(), 3u);
  const auto all = log.Read(0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].first, 2u);
  EXPECT_EQ(all[2].second->peek().uuid(), "c");
  const auto middle = log.Read(1, 2);
  ASSERT_EQ(middle.size(), 1u);
  EXPECT_EQ(middle[0].second->peek().uuid(), "b");
  EXPECT_TRUE(log.Read(3).empty());
}

TEST(CommandLog, TrimsOnlyBelowWhatEveryReaderHasPassed) {
  CommandLog log;
  log.Append(PeekEntry("a"), 0);
  log.Append(PeekEntry("b"), 0);
  log.Append(PeekEntry("c"), 1);  // entry 0 is behind every reader: dropped
  const auto rest = log.Read(1);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].first, 1u);
  EXPECT_EQ(log.end(), 3u) << "numbers do not move when the front is dropped";
  EXPECT_DEATH(log.Read(0), "does not hold") << "a reader behind the trim is a broken invariant";
}

TEST(CommandLog, AWaitingWorkerWakesForTheNextCommandOrAtItsDeadline) {
  CommandLog log;
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  log.WaitFor(0, start + 20ms, stop);  // nothing comes: returns at the deadline
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  std::thread appender([&] { log.Append(PeekEntry("a"), 0); });
  log.WaitFor(0, std::chrono::steady_clock::now() + 60s, stop);  // returns once it is there
  appender.join();
  EXPECT_EQ(log.end(), 1u);
  stop = true;
  log.WaitFor(5, std::chrono::steady_clock::now() + 60s, stop);  // returns: stopping
}

}  // namespace
}  // namespace tandem::workers
