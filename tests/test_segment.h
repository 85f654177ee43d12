// A uniquely named segment for one test, removed when the test ends — so ctest -j is safe and
// /dev/shm is left clean even when an assertion fails.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "shm/reader_table.h"
#include "shm/segment.h"

namespace tandem::testing {

// A test that gives a file to another user (chown, to play the squatter) needs root; run as
// anyone else it is skipped, saying so.
#define TANDEM_SKIP_UNLESS_ROOT()                                                       \
  if (::geteuid() != 0)                                                                 \
  GTEST_SKIP() << "needs root: it makes a file another user's (chown); running as uid " \
               << ::geteuid()

inline std::string UniqueSegmentName(const std::string& what) {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->name()) : what;
  if (test.size() > 40) test.resize(40);
  return "tandem.test." + test + "." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

// The test plays the supervisor: it creates the segment and its reader table (shm/reader_table.h),
// which publishers honour (SetReaderTable) and tools announce in (Inspector).
struct TestSegment {
  explicit TestSegment(shm::SegmentOptions options) : name(options.name), remover(options.name) {
    auto created = shm::Segment::Create(options);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return;
    segment = std::move(created).value();
    auto t = shm::ReaderTable::Create(name, segment->header().generation, shm::kLayoutHash,
                                      std::nullopt);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) table = std::move(t).value();
  }
  static shm::SegmentOptions Options(std::uint32_t workers = 1, std::uint64_t size = 32ull << 20,
                                     shm::Mode mode = shm::Mode::kTwoRuntime) {
    shm::SegmentOptions o;
    o.name = UniqueSegmentName("seg");
    o.replica_id = "test";
    o.size_bytes = size;
    o.workers = workers;
    o.mode = mode;
    o.slots_per_row = 16;
    return o;
  }
  std::string name;
  shm::ScopedSegmentRemover remover;  // the segment and its reader table
  std::unique_ptr<shm::Segment> segment;
  std::unique_ptr<shm::ReaderTable> table;
};

}  // namespace tandem::testing
