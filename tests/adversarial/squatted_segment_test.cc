// A squatted segment name (issue 12 item 4): another local user creates /dev/shm/<name> before
// the replica starts — random bytes, or a Tandem header with its lock held. The supervisor never
// opens such a file as its segment and never removes it: it exits 78 at once naming the file and
// its owner, and the same replica under another name starts and serves. A garbage file of our own
// uid under the name is a stale segment: reclaimed, with a warning, and the replica serves.
//
// Tests run as root, so "another user" is the file chowned to nobody (65534).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "adversarial/adversarial.h"
#include "test_segment.h"

namespace tandem::testing::adversarial {
namespace {

constexpr uid_t kNobody = 65534;

std::string SquatName(const std::string& what) {
  static int counter = 0;
  return "tandem.test.squat." + what + "." + std::to_string(getpid()) + "." +
         std::to_string(counter++);
}

// The squatter's file: made with `bytes`, owned by `uid`. Removed when the test ends.
class Squat {
 public:
  Squat(std::string name, const std::string& bytes, uid_t uid)
      : name_(std::move(name)), path_(shm::Segment::PathOf(name_)) {
    const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0) << path_ << ": " << std::strerror(errno);
    if (fd < 0) return;
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    EXPECT_EQ(fchown(fd, uid, uid), 0) << std::strerror(errno);
    close(fd);
    before_ = State();
  }
  ~Squat() {
    if (lock_fd_ >= 0) close(lock_fd_);
    unlink(path_.c_str());
  }
  // Holds an exclusive flock on the file, as a live supervisor would.
  void HoldLock() {
    lock_fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(lock_fd_, 0);
    ASSERT_EQ(flock(lock_fd_, LOCK_EX | LOCK_NB), 0);
  }
  // Inode, owner, mode and bytes.
  std::string State() const {
    struct stat st {};
    if (lstat(path_.c_str(), &st) != 0) return "(gone)";
    std::string s = std::to_string(st.st_ino) + "/" + std::to_string(st.st_uid) + "/" +
                    std::to_string(st.st_mode) + "/";
    const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    char buf[4096];
    for (ssize_t n; fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, n);
    if (fd >= 0) close(fd);
    return s;
  }
  bool Untouched() const { return State() == before_; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }

 private:
  std::string name_, path_, before_;
  int lock_fd_ = -1;
};

std::string RandomBytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string b(n, '\0');
  for (auto& c : b) c = static_cast<char>(rng());
  return b;
}

// The first page of a Tandem segment as this build writes it: magic, version, header size,
// layout hash, Boost version — what an opener checks before anything else.
std::string TandemHeaderPage() {
  std::string page(shm::kHeaderBytes, '\0');
  const std::uint64_t magic = shm::kSegmentMagic, hash = shm::kLayoutHash;
  const std::uint32_t version = shm::kLayoutVersion, header = shm::kHeaderBytes;
  std::memcpy(&page[0], &magic, 8);
  std::memcpy(&page[8], &version, 4);
  std::memcpy(&page[12], &header, 4);
  std::memcpy(&page[16], &hash, 8);
  return page;
}

// The replica under `name` must refuse at once (78), naming the file and its owner, and leave
// the file as it was; the same replica under another name then starts and serves.
void ExpectRefusedThenServedElsewhere(const Squat& squat, const std::string& owner) {
  {
    SupervisorProcess sup({.worker_binary = TANDEM_WORKER_BIN, .segment_name = squat.name()});
    const auto code = sup.WaitExit(15s);
    ASSERT_TRUE(code.has_value()) << "the supervisor neither started nor refused\n" << sup.Log();
    EXPECT_EQ(*code, 78) << sup.Log();
    EXPECT_NE(sup.Log().find("'" + squat.path() + "'"), std::string::npos) << sup.Log();
    EXPECT_NE(sup.Log().find(owner), std::string::npos) << sup.Log();
    EXPECT_TRUE(squat.Untouched()) << "the squatter's file was changed";
  }
  Target elsewhere;
  ASSERT_TRUE(elsewhere.Start()) << elsewhere.sup().Log();
  elsewhere.ExpectStillServing();
}

TEST(SquattedSegment, AnotherUsersRandomBytesAreRefusedClearlyAndLeftUntouched) {
  TANDEM_SKIP_UNLESS_ROOT();
  Squat squat(SquatName("random"), RandomBytes(64 << 10, 4), kNobody);
  ExpectRefusedThenServedElsewhere(squat, "owned by uid 65534");
}

TEST(SquattedSegment, AnotherUsersTandemHeaderWithItsLockHeldIsRefusedClearly) {
  TANDEM_SKIP_UNLESS_ROOT();
  Squat squat(SquatName("locked"), TandemHeaderPage(), kNobody);
  squat.HoldLock();
  ExpectRefusedThenServedElsewhere(squat, "owned by uid 65534");
}

TEST(SquattedSegment, AFifoUnderTheNameIsRefusedAtOnceNotWaitedOn) {
  TANDEM_SKIP_UNLESS_ROOT();
  const std::string name = SquatName("fifo");
  const std::string path = shm::Segment::PathOf(name);
  struct Unlinker {  // before the first ASSERT: the FIFO goes whatever happens
    std::string path;
    ~Unlinker() { unlink(path.c_str()); }
  } unlinker{path};
  ASSERT_EQ(mkfifo(path.c_str(), 0666), 0) << std::strerror(errno);
  ASSERT_EQ(chown(path.c_str(), kNobody, kNobody), 0);
  SupervisorProcess sup({.worker_binary = TANDEM_WORKER_BIN, .segment_name = name});
  const auto code = sup.WaitExit(15s);
  ASSERT_TRUE(code.has_value()) << "the supervisor blocked on the FIFO\n" << sup.Log();
  EXPECT_EQ(*code, 78) << sup.Log();
  EXPECT_NE(sup.Log().find("is a FIFO owned by uid 65534"), std::string::npos) << sup.Log();
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// Our own uid's garbage under our name (a crashed run, a stray copy): stale, so reclaimed —
// the supervisor took its lock first, so nobody was using it — and the log says what it was.
TEST(SquattedSegment, OurOwnGarbageUnderTheNameIsReclaimedAndTheReplicaServes) {
  Squat squat(SquatName("ours"), RandomBytes(64 << 10, 5), geteuid());
  Target target({}, 2, {.segment_name = squat.name()});
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  EXPECT_NE(target.sup().Log().find("replaced what was under its name: a file of this user under "
                                    "the segment's name: not a Tandem segment"),
            std::string::npos)
      << target.sup().Log();
  target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
