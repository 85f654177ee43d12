// Multi-process: one process publishes, merges and compacts continuously while another attaches,
// snapshots and reads at random readable times, checking every answer (tests/helpers/shm_torture).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "shm/registry.h"
#include "test_segment.h"

namespace tandem {
namespace {

using testing::TestSegment;
using namespace std::chrono_literals;

// A child process that is always reaped: killed if the test ends before it does.
class Child {
 public:
  explicit Child(std::vector<std::string> argv) {
    pid_ = testing::SpawnTiedToTest(argv, testing::ChildEnvironment(false), STDOUT_FILENO,
                                    STDERR_FILENO);
    EXPECT_GT(pid_, 0) << argv[0] << ": " << strerror(errno);
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  void Kill() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // Waits up to `limit` for the child to exit; its exit status, or -1 on timeout.
  int Wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);  // polling interval of a bounded wait
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

void RunTorture(std::uint32_t rows, double seconds, std::uint64_t seed) {
  TestSegment seg(TestSegment::Options(rows, 64ull << 20));
  ASSERT_TRUE(seg.segment);
  const std::string secs = std::to_string(seconds), s = std::to_string(seed);
  // The reader first: its placeholders and holds must work whichever side comes first.
  Child reader(
      {TANDEM_SHM_TORTURE_BIN, "read", "--segment", seg.name, "--seconds", secs, "--seed", s});
  Child publisher(
      {TANDEM_SHM_TORTURE_BIN, "publish", "--segment", seg.name, "--seconds", secs, "--seed", s});
  const auto limit = std::chrono::milliseconds(static_cast<int>(seconds * 1000) + 60000);
  EXPECT_EQ(publisher.Wait(limit), 0) << "publisher failed";
  EXPECT_EQ(reader.Wait(limit), 0) << "reader saw a wrong answer or crashed";
}

TEST(ShmMultiProcess, ReaderProcessSeesOnlyCorrectAnswersWhilePublisherMergesAndCompacts) {
  RunTorture(1, 4.0, 1);
}

TEST(ShmMultiProcess, TwoRowsInParallelStayCorrect) { RunTorture(2, 3.0, 2); }

// Tools (tandem-shm's Inspector) killed mid-read, one after another, while the publisher merges
// and compacts: each leaves its reader-table entry with a stale announcement. The next tool claims
// an entry and reads only right answers, the runtime's reader is undisturbed, and once the test
// (playing the supervisor) sweeps the table, the publisher frees every retired allocation: no dead
// tool pins memory. The publisher never writes an entry: before the sweep, the dead tool's
// announcement is still there.
TEST(ShmMultiProcess, ToolsKilledMidReadPinNothingAndDisturbNoOne) {
  TestSegment seg(TestSegment::Options(1, 64ull << 20));
  ASSERT_TRUE(seg.segment && seg.table);
  auto args = [&](const char* mode, double seconds) {
    return std::vector<std::string>{
        TANDEM_SHM_TORTURE_BIN,  mode,     "--segment", seg.name, "--seconds",
        std::to_string(seconds), "--seed", "3"};
  };
  // Entries whose tool died holding an announcement.
  auto dead_entries = [&] {
    int dead = 0;
    for (std::uint32_t i = 0; i < shm::kReaderTableEntries; ++i) {
      const auto& e = seg.table->slot(i);
      const auto pid = static_cast<pid_t>(e.pid.load());
      dead += pid != 0 && e.version.load() != shm::kReaderIdle && kill(pid, 0) != 0;
    }
    return dead;
  };
  Child reader(args("read", 5.0));
  Child publisher(args("publish", 5.0));
  std::mt19937_64 rng(3);
  auto kill_a_tool_mid_read = [&] {
    Child tool(args("inspect", 30.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(60 + rng() % 120));  // reading by now
    tool.Kill();
  };
  for (int i = 0; i < 6; ++i) kill_a_tool_mid_read();
  Child next(args("inspect", 1.0));
  EXPECT_EQ(next.Wait(60s), 0) << "a tool after the killed ones read a wrong answer";
  // Leave a dead tool's announcement behind (a kill can land between two snapshots, when the tool
  // announces nothing: then kill another).
  for (int i = 0; i < 20 && dead_entries() == 0; ++i) kill_a_tool_mid_read();
  ASSERT_GT(dead_entries(), 0) << "no tool was killed holding an announcement";
  // The supervisor's sweep, until the publisher has drained (it fails if memory stays pinned).
  std::atomic<bool> sweeping{true};
  std::thread sweeper([&] {
    while (sweeping) {
      seg.table->Sweep();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  EXPECT_EQ(reader.Wait(60s), 0) << "the runtime's reader saw a wrong answer";
  EXPECT_EQ(publisher.Wait(60s), 0) << "the publisher failed, or memory stayed pinned";
  sweeping = false;
  sweeper.join();
  EXPECT_EQ(dead_entries(), 0) << "the sweep left a dead tool's announcement";
}

}  // namespace
}  // namespace tandem
