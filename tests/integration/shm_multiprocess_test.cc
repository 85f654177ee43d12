// Multi-process: one process publishes, merges and compacts continuously while another attaches,
// snapshots and reads at random readable times, checking every answer (tests/helpers/shm_torture).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
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

}  // namespace
}  // namespace tandem
