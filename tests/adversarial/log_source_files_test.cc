// Log sources on files that are not logs (issue 12 items 2 and 10). A device as the path used to
// grow maintenance to gigabytes (one unbounded "line"), a FIFO without a writer blocked its
// thread — every dataflow's frontier stopped —, and a truncated or replaced file stalled its
// source silently. Now: what is not a regular file, and a truncated file, end the source with an
// error of its collection; an over-long line is an error naming it, skipped; a replaced file is
// followed like `tail -F`. Every other dataflow keeps advancing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "adversarial/adversarial.h"
#include "log_source.h"
#include "temp_dir.h"

namespace tandem::testing::adversarial {
namespace {

// The attack's dataflow: log source u3 on `path` → index u4.
class LogTarget {
 public:
  LogTarget() { started_ = target.Start(); }

  bool started() const { return started_; }
  void Attach(const std::string& path) { target.ctl().Send(LogIndexDataflow("u3", "u4", path)); }

  // u4's write frontier reaches `upper` (nullopt: closed) within 10 s.
  bool AwaitU4(std::optional<Time> upper) {
    return target.ctl()
        .ReceiveUntil(
            [&](const ipc::pb::Response& r) {
              if (!r.has_frontiers() || r.frontiers().id() != "u4") return false;
              const auto& w = r.frontiers().write().elements();
              return w.empty() || (upper && w[0] >= *upper);
            },
            10s)
        .has_value();
  }
  // The answer to a peek of u4 at `t`.
  ipc::pb::PeekResponse PeekU4(Time t) {
    const std::string uuid = "u4-at-" + std::to_string(t) + "-" + std::to_string(++peeks_);
    target.ctl().Send(ipc::samples::PeekAt(uuid, "u4", t));
    auto r = target.ctl().ReceiveUntil(
        [&](const ipc::pb::Response& r) {
          return r.has_peek_response() && r.peek_response().uuid() == uuid;
        },
        10s);
    return r ? r->peek_response() : ipc::pb::PeekResponse();
  }
  // u2 (the key_value index, 2 ticks a millisecond) advances by 2000 more ticks: the other
  // dataflow's steps go on. A bounded wait of about a second.
  bool U2KeepsAdvancing() {
    std::optional<Time> first;
    return target.ctl()
        .ReceiveUntil(
            [&](const ipc::pb::Response& r) {
              if (!r.has_frontiers() || r.frontiers().id() != "u2") return false;
              const auto& w = r.frontiers().write().elements();
              if (w.empty()) return false;
              if (!first) first = w[0];
              return w[0] > *first + 2000;
            },
            10s)
        .has_value();
  }
  std::uint64_t MaxRuntimeRss() {
    std::uint64_t rss = 0;
    for (pid_t pid : target.sup().runtime_pids()) rss = std::max(rss, RssBytes(pid));
    return rss;
  }

  Target target;
  TempDir dir{"adversarial-log"};

 private:
  bool started_ = false;
  int peeks_ = 0;
};

// Replaces the start of the file at `path` by `text` and cuts the file to text's size, so a
// reader sees either the old size or the new one, never a size in between.
void ShrinkInPlace(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(text.size())), 0);
  ::close(fd);
}

// The source ended with `error` in its collection: u4 is closed, a peek from time 0 answers it.
void ExpectEndedWithError(LogTarget& t, const std::string& error) {
  ASSERT_TRUE(t.AwaitU4(std::nullopt)) << "u4 never closed\n" << t.target.sup().Log();
  const auto answer = t.PeekU4(0);
  EXPECT_NE(answer.error().find(error), std::string::npos) << answer.ShortDebugString() << "\n"
                                                           << t.target.sup().Log();
}

TEST(LogSourceFiles, ADeviceAsThePathEndsTheSourceWithAnErrorAndMaintenanceStaysSmall) {
  LogTarget t;
  ASSERT_TRUE(t.started()) << t.target.sup().Log();
  t.Attach("/dev/zero");
  ExpectEndedWithError(t, "log source u3: /dev/zero is a character device, not a regular file");
  t.target.ctl().Send(ipc::samples::Drop("u4"));
  ASSERT_TRUE(t.U2KeepsAdvancing()) << t.target.sup().Log();
  // /dev/urandom too, with the same ids once u4 is dropped.
  t.Attach("/dev/urandom");
  ExpectEndedWithError(t, "/dev/urandom is a character device");
  ASSERT_TRUE(t.U2KeepsAdvancing()) << t.target.sup().Log();
  EXPECT_LT(t.MaxRuntimeRss(), 200u << 20);
  t.target.ExpectStillServing();
}

TEST(LogSourceFiles, AFifoWithoutAWriterNeverBlocksAndOtherDataflowsKeepAdvancing) {
  LogTarget t;
  ASSERT_TRUE(t.started()) << t.target.sup().Log();
  const std::string fifo = t.dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  t.Attach(fifo);
  ExpectEndedWithError(t, fifo + " is a FIFO, not a regular file");
  ASSERT_TRUE(t.U2KeepsAdvancing()) << t.target.sup().Log();
  t.target.ctl().Send(ipc::samples::Drop("u4"));
  t.target.ExpectStillServing();
}

TEST(LogSourceFiles, AnOverlongLineIsAnErrorNamingItAndLaterLinesAreStillRead) {
  LogTarget t;
  ASSERT_TRUE(t.started()) << t.target.sup().Log();
  t.dir.Write("a.log", "U 0 1 1 10\nP 1\n" + std::string(3 << 20, 'x') + "\nU 1 1 2 20\nP 2\n");
  t.Attach(t.dir.File("a.log"));
  ASSERT_TRUE(t.AwaitU4(2)) << t.target.sup().Log();
  EXPECT_EQ(t.PeekU4(0).rows().rows_size(), 1);
  EXPECT_EQ(t.PeekU4(1).error(), "log line 3: longer than 1048576 bytes (skipped)");
  EXPECT_LT(t.MaxRuntimeRss(), 200u << 20);
  t.target.ExpectStillServing();
}

TEST(LogSourceFiles, ATruncatedLogIsAnErrorOfItsCollectionNamingTheTruncation) {
  LogTarget t;
  ASSERT_TRUE(t.started()) << t.target.sup().Log();
  t.dir.Write("a.log", "U 0 1 1 10\nU 0 1 2 20\nP 2\n");
  t.Attach(t.dir.File("a.log"));
  ASSERT_TRUE(t.AwaitU4(2)) << t.target.sup().Log();
  // Truncated, then new lines — in one step the source can see: the new text overwrites the
  // file's start while its size stays 26 bytes (nothing new to read), then ftruncate makes it
  // 15. Truncating first and then writing (std::ofstream's trunc) let the source see 0 bytes
  // now and then, and the error named 0 bytes (a flaky CI failure).
  ShrinkInPlace(t.dir.File("a.log"), "U 2 1 3 30\nP 3\n");
  ASSERT_TRUE(t.AwaitU4(std::nullopt)) << "u4 never moved again\n" << t.target.sup().Log();
  EXPECT_EQ(t.PeekU4(1).rows().rows_size(), 2) << "what was read before stays readable";
  EXPECT_NE(t.PeekU4(2).error().find("log source u3: " + t.dir.File("a.log") +
                                     " was truncated (to 15 bytes; 26 bytes had been read)"),
            std::string::npos);
  EXPECT_NE(t.target.sup().Log().find("was truncated"), std::string::npos);
  t.target.ExpectStillServing();
}

TEST(LogSourceFiles, ARotatedLogIsFollowedLikeTailF) {
  LogTarget t;
  ASSERT_TRUE(t.started()) << t.target.sup().Log();
  const std::string path = t.dir.File("a.log");
  t.dir.Write("a.log", "U 0 1 1 10\nU 0 1 2 20\nP 2\n");
  t.Attach(path);
  ASSERT_TRUE(t.AwaitU4(2)) << t.target.sup().Log();
  t.dir.Write("a.log", "U 2 1 3 30\n", true);  // the old file's last line
  std::filesystem::rename(path, t.dir.File("a.log.1"));
  t.dir.Write("a.log", "U 3 1 4 40\nP 5\n");  // the new file at the path
  ASSERT_TRUE(t.AwaitU4(5)) << "u4 never moved again\n" << t.target.sup().Log();
  const auto rows = t.PeekU4(4);
  ASSERT_TRUE(rows.has_rows()) << rows.error();
  EXPECT_EQ(rows.rows().rows_size(), 4);
  EXPECT_NE(t.target.sup().Log().find("was replaced by another file; following it"),
            std::string::npos);
  t.target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
