// The segment's lifecycle and every way opening or creating one is refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "shm/segment.h"
#include "test_segment.h"

namespace tandem::shm {
namespace {

using testing::TestSegment;
using testing::UniqueSegmentName;

bool Exists(const std::string& name) {
  struct stat st {};
  return stat(Segment::PathOf(name).c_str(), &st) == 0;
}

// Writes a raw file into /dev/shm the way another program might.
void WriteRawFile(const std::string& name, std::size_t bytes, std::uint64_t first_word) {
  const int fd = shm_open(("/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
  ASSERT_EQ(pwrite(fd, &first_word, sizeof first_word, 0), static_cast<ssize_t>(sizeof first_word));
  close(fd);
}

TEST(Segment, CreateThenOpenSeesTheHeaderWithOwnerOnlyPermissions) {
  auto opts = TestSegment::Options(3);
  opts.replica_id = "replica-7";
  opts.mode = Mode::kSolo;
  opts.generation = 42;
  TestSegment seg(opts);
  ASSERT_TRUE(seg.segment);
  struct stat st {};
  ASSERT_EQ(stat(Segment::PathOf(seg.name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_blocks) * 512, opts.size_bytes)
      << "the whole segment is reserved at creation";

  auto opened = Segment::Open(seg.name);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const SegmentHeader& h = (*opened)->header();
  EXPECT_EQ(h.magic.load(), kSegmentMagic);
  EXPECT_EQ(h.layout_version, kLayoutVersion);
  EXPECT_EQ(h.layout_hash, kLayoutHash);
  EXPECT_EQ(h.boost_version, static_cast<std::uint32_t>(BOOST_VERSION));
  EXPECT_EQ(h.workers, 3u);
  EXPECT_EQ((*opened)->mode(), Mode::kSolo);
  EXPECT_EQ(h.generation, 42u);
  EXPECT_EQ(h.supervisor_pid, getpid());
  EXPECT_STREQ(h.replica_id, "replica-7");

  seg.segment->SetRuntime(Role::kInteractive, 4242, RuntimeState::kReady);
  auto probe = Segment::Probe(seg.name);
  ASSERT_TRUE(probe.ok());
  EXPECT_TRUE(probe->valid);
  EXPECT_TRUE(probe->supervisor_alive);
  EXPECT_EQ(probe->header->runtimes[1].pid, 4242);
  EXPECT_EQ(probe->header->runtimes[1].state, RuntimeState::kReady);
}

TEST(Segment, OpenRefusesWrongMagic) {
  const std::string name = UniqueSegmentName("magic");
  ScopedSegmentRemover remover(name);
  WriteRawFile(name, 8192, 0x0123456789abcdefULL);
  auto opened = Segment::Open(name);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  EXPECT_NE(opened.status().message().find("not a Tandem segment (magic 0x0123456789abcdef"),
            std::string::npos)
      << opened.status().ToString();
}

TEST(Segment, OpenRefusesFileSmallerThanHeader) {
  const std::string name = UniqueSegmentName("small");
  ScopedSegmentRemover remover(name);
  WriteRawFile(name, 100, kSegmentMagic);
  auto opened = Segment::Open(name);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("smaller than the 4096-byte header"), std::string::npos)
      << opened.status().ToString();
}

TEST(Segment, OpenRefusesWrongLayoutVersion) {
  TestSegment seg(TestSegment::Options());
  seg.segment->mutable_header().layout_version = kLayoutVersion + 998;
  auto opened = Segment::Open(seg.name);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find(
                "layout version " + std::to_string(kLayoutVersion + 998) +
                ", but this build reads version " + std::to_string(kLayoutVersion)),
            std::string::npos)
      << opened.status().ToString();
}

std::string Hex(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A segment written by another build (another compiler, Boost version or struct layout, but the
// same layout version) is refused at attach, naming both hashes; probing says why.
TEST(Segment, OpenRefusesASegmentWithAnotherBuildsLayoutHash) {
  TestSegment seg(TestSegment::Options());
  const std::uint64_t other = kLayoutHash ^ 0x00f0'0000'0000'0f00ULL;
  seg.segment->mutable_header().layout_hash = other;
  seg.segment->mutable_header().boost_version = 107400;
  auto opened = Segment::Open(seg.name);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  const std::string& m = opened.status().message();
  EXPECT_NE(m.find("layout hash " + Hex(other) + " (a build with Boost 1.74.0)"), std::string::npos)
      << m;
  EXPECT_NE(m.find("this build's layout hash is " + Hex(kLayoutHash)), std::string::npos) << m;
  auto probe = Segment::Probe(seg.name);
  ASSERT_TRUE(probe.ok());
  EXPECT_FALSE(probe->valid);
  EXPECT_TRUE(probe->supervisor_alive);
  ASSERT_TRUE(probe->header.has_value()) << "the header is still shown";
  EXPECT_EQ(probe->header->layout_hash, other);

  seg.segment->mutable_header().layout_hash = kLayoutHash;
  EXPECT_TRUE(Segment::Open(seg.name).ok()) << "the hash alone made the difference";
}

// The version check comes first and still means something: a segment of another layout version
// is refused for its version, whatever its hash says.
TEST(Segment, LayoutVersionIsCheckedBeforeTheHash) {
  TestSegment seg(TestSegment::Options());
  seg.segment->mutable_header().layout_version = kLayoutVersion - 1;
  seg.segment->mutable_header().layout_hash = 0;
  auto opened = Segment::Open(seg.name);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("layout version " + std::to_string(kLayoutVersion - 1)),
            std::string::npos)
      << opened.status().ToString();
}

// The field tables behind kLayoutHash must cover their struct exactly: the check catches a field
// left out of a table (and so out of the hash) and an implicit padding hole.
struct Padded {
  std::uint32_t a;
  std::uint64_t b;
};
static_assert(layout_detail::Tiles(16, {layout_detail::Field{0, 4}, layout_detail::Field{8, 8}}) ==
              false);
static_assert(layout_detail::Tiles(sizeof(Padded),
                                   {layout_detail::Field{offsetof(Padded, a), 4},
                                    layout_detail::Field{offsetof(Padded, b), 8}}) == false);
static_assert(layout_detail::Tiles(24, {layout_detail::Field{0, 8}, layout_detail::Field{8, 8}}) ==
              false);
static_assert(layout_detail::Tiles(16, {layout_detail::Field{0, 8}, layout_detail::Field{8, 8}}));
// The hash depends on every input: one offset, one size, one struct size.
// Two fields of one size swapped, or a field's type changed but not its size, change the hash.
struct TwoWords {
  std::uint64_t upper;
  std::uint64_t since;
};
struct TwoWordsSwapped {
  std::uint64_t since;
  std::uint64_t upper;
};
struct TwoWordsSigned {
  std::uint64_t upper;
  std::int64_t since;
};
// The same as layout.h's table entries (whose macro is local to that header).
#define FIELD(S, f)                                            \
  layout_detail::Field {                                       \
    offsetof(S, f), sizeof(S::f), layout_detail::TextHash(#f), \
        layout_detail::TypeHash<decltype(S::f)>()              \
  }
static_assert(
    layout_detail::FoldStruct(1, 16, 8, {FIELD(TwoWords, upper), FIELD(TwoWords, since)}) !=
    layout_detail::FoldStruct(1, 16, 8,
                              {FIELD(TwoWordsSwapped, since), FIELD(TwoWordsSwapped, upper)}));
static_assert(
    layout_detail::FoldStruct(1, 16, 8, {FIELD(TwoWords, upper), FIELD(TwoWords, since)}) !=
    layout_detail::FoldStruct(1, 16, 8,
                              {FIELD(TwoWordsSigned, upper), FIELD(TwoWordsSigned, since)}));
static_assert(layout_detail::TypeHash<std::atomic<std::uint64_t>>() !=
              layout_detail::TypeHash<std::uint64_t>());
#undef FIELD
static_assert(layout_detail::FoldStruct(1, 16, 8, {layout_detail::Field{0, 8}}) !=
              layout_detail::FoldStruct(1, 16, 8, {layout_detail::Field{8, 8}}));
static_assert(layout_detail::FoldStruct(1, 16, 8, {layout_detail::Field{0, 8}}) !=
              layout_detail::FoldStruct(1, 16, 8, {layout_detail::Field{0, 4}}));
static_assert(layout_detail::FoldStruct(1, 16, 8, {layout_detail::Field{0, 8}}) !=
              layout_detail::FoldStruct(1, 24, 8, {layout_detail::Field{0, 8}}));

TEST(Segment, OpenOfMissingSegmentIsNotFound) {
  auto opened = Segment::Open(UniqueSegmentName("missing"));
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kNotFound);
}

TEST(Segment, CreateRefusesSegmentOfLiveSupervisor) {
  TestSegment seg(TestSegment::Options());
  auto opts = TestSegment::Options();
  opts.name = seg.name;
  auto again = Segment::Create(opts);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("live supervisor (pid " + std::to_string(getpid())),
            std::string::npos)
      << again.status().ToString();
  EXPECT_TRUE(Segment::Open(seg.name).ok()) << "the live segment is untouched";
}

TEST(Segment, CreateReplacesStaleSegmentOfDeadSupervisor) {
  auto opts = TestSegment::Options();
  ScopedSegmentRemover remover(opts.name);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto created = Segment::Create(opts);
    _exit(created.ok() ? 0 : 1);  // exits without removing: the segment is left stale
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto probe = Segment::Probe(opts.name);
  ASSERT_TRUE(probe.ok());
  EXPECT_FALSE(probe->supervisor_alive);
  EXPECT_EQ(probe->header->supervisor_pid, child);

  auto created = Segment::Create(opts);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)->header().supervisor_pid, getpid());
}

// What a squatted name must look like afterwards: the same file (inode), owner and bytes.
struct FileState {
  ino_t ino = 0;
  uid_t uid = 0;
  std::string bytes;
  friend bool operator==(const FileState&, const FileState&) = default;
};
FileState StateOf(const std::string& path) {
  FileState f;
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return f;
  f.ino = st.st_ino;
  f.uid = st.st_uid;
  if (S_ISREG(st.st_mode)) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char buf[4096];
    for (ssize_t n; fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0;) f.bytes.append(buf, n);
    if (fd >= 0) close(fd);
  }
  return f;
}

// Another local user squats the name first (tests run as root, so "another user" is the file
// chowned to nobody): Create never opens it as ours, never removes it, and says whose it is.
constexpr uid_t kNobody = 65534;

TEST(Segment, CreateNeverUsesOrRemovesAnotherUsersFileOfGarbage) {
  TANDEM_SKIP_UNLESS_ROOT();
  const std::string name = UniqueSegmentName("squat");
  ScopedSegmentRemover remover(name);
  WriteRawFile(name, 8192, 0x1111111111111111ULL);
  ASSERT_EQ(chown(Segment::PathOf(name).c_str(), kNobody, kNobody), 0) << std::strerror(errno);
  const FileState before = StateOf(Segment::PathOf(name));
  auto opts = TestSegment::Options();
  opts.name = name;
  auto created = Segment::Create(opts);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kFailedPrecondition);
  const std::string& why = created.status().message();
  EXPECT_NE(why.find("'" + Segment::PathOf(name) + "'"), std::string::npos) << why;
  EXPECT_NE(why.find("owned by uid 65534"), std::string::npos) << why;
  EXPECT_NE(why.find("never used or removed"), std::string::npos) << why;
  EXPECT_EQ(StateOf(Segment::PathOf(name)), before) << "the squatter's file is untouched";
}

TEST(Segment, CreateRefusesAnotherUsersFileWithTheRightMagicAndItsLockHeld) {
  TANDEM_SKIP_UNLESS_ROOT();
  const std::string name = UniqueSegmentName("squat");
  ScopedSegmentRemover remover(name);
  WriteRawFile(name, 8192, kSegmentMagic);
  ASSERT_EQ(chown(Segment::PathOf(name).c_str(), kNobody, kNobody), 0);
  const int held = open(Segment::PathOf(name).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  const FileState before = StateOf(Segment::PathOf(name));
  auto opts = TestSegment::Options();
  opts.name = name;
  auto created = Segment::Create(opts);
  close(held);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kFailedPrecondition)
      << created.status().ToString();
  EXPECT_NE(created.status().message().find("owned by uid 65534"), std::string::npos)
      << created.status().ToString();
  EXPECT_EQ(StateOf(Segment::PathOf(name)), before);
}

// A garbage file of our own uid under our name (a crashed run, a stray copy) is stale: its lock
// is free, so it is reclaimed, and Create says what it replaced.
TEST(Segment, CreateReclaimsAGarbageFileOfOurOwnUidAndSaysWhatItWas) {
  const std::string name = UniqueSegmentName("garbage");
  ScopedSegmentRemover remover(name);
  WriteRawFile(name, 8192, 0x1111111111111111ULL);
  auto opts = TestSegment::Options();
  opts.name = name;
  auto created = Segment::Create(opts);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_NE((*created)->replaced().find("not a Tandem segment (magic 0x1111111111111111"),
            std::string::npos)
      << (*created)->replaced();
  EXPECT_TRUE(Segment::Open(name).ok());
}

// ... but not while some process holds its lock: then it is in use, and left alone.
TEST(Segment, CreateLeavesAGarbageFileOfOurUidWhoseLockIsHeld) {
  const std::string name = UniqueSegmentName("garbage");
  ScopedSegmentRemover remover(name);
  WriteRawFile(name, 8192, 0x1111111111111111ULL);
  const int held = open(Segment::PathOf(name).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  const FileState before = StateOf(Segment::PathOf(name));
  auto opts = TestSegment::Options();
  opts.name = name;
  auto created = Segment::Create(opts);
  close(held);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kAlreadyExists) << created.status().ToString();
  EXPECT_NE(created.status().message().find("holds its lock"), std::string::npos)
      << created.status().ToString();
  EXPECT_EQ(StateOf(Segment::PathOf(name)), before);
}

// A FIFO (which would block a reader's open) and a symbolic link (which would lead a root
// supervisor's writes elsewhere) are refused at once, and left where they are.
TEST(Segment, CreateRefusesAFifoOrASymlinkUnderTheNameWithoutBlocking) {
  const std::string fifo = UniqueSegmentName("fifo");
  ScopedSegmentRemover fifo_remover(fifo);
  ASSERT_EQ(mkfifo(Segment::PathOf(fifo).c_str(), 0600), 0) << std::strerror(errno);
  const std::string link = UniqueSegmentName("link");
  ScopedSegmentRemover link_remover(link);
  char target[] = "/tmp/tandem-link-target-XXXXXX";
  const int tfd = mkstemp(target);
  ASSERT_GE(tfd, 0);
  ASSERT_EQ(write(tfd, "keep", 4), 4);
  close(tfd);
  ASSERT_EQ(symlink(target, Segment::PathOf(link).c_str()), 0) << std::strerror(errno);
  // In a child with an alarm: a blocking open would otherwise hang the test.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);
    int code = 0;
    for (const std::string& name : {fifo, link}) {
      auto opts = TestSegment::Options();
      opts.name = name;
      auto created = Segment::Create(opts);
      if (created.ok()) code |= 1;
      if (!created.ok() && created.status().code() != StatusCode::kFailedPrecondition) code |= 2;
      if (!created.ok() && created.status().message().find(
                               name == fifo ? "a FIFO" : "symbolic link") == std::string::npos) {
        code |= 4;
      }
    }
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "Create blocked or crashed (status " << status << ")";
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  struct stat st {};
  EXPECT_EQ(lstat(Segment::PathOf(fifo).c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(lstat(Segment::PathOf(link).c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(StateOf(target).bytes, "keep") << "the link's target is untouched";
  unlink(target);
}

TEST(Segment, CreateRefusesSizeBeyondRoomInDevShm) {
  struct statvfs vfs {};
  ASSERT_EQ(statvfs("/dev/shm", &vfs), 0);
  const std::uint64_t avail = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  auto opts = TestSegment::Options();
  opts.size_bytes = avail + (1ull << 30);
  ScopedSegmentRemover remover(opts.name);
  auto created = Segment::Create(opts);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kResourceExhausted);
  const std::string& m = created.status().message();
  EXPECT_NE(m.find("needs " + std::to_string(opts.size_bytes) + " bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("/dev/shm has only"), std::string::npos) << m;
  EXPECT_FALSE(Exists(opts.name)) << "nothing is left behind";
}

TEST(Segment, CreateRefusesSizeTooSmallForTheRegistry) {
  auto opts = TestSegment::Options(64, 128 << 10);
  auto created = Segment::Create(opts);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Exists(opts.name));
}

TEST(Segment, AllocateBeyondFreeSpaceIsResourceExhausted) {
  TestSegment seg(TestSegment::Options(1, 2 << 20));
  auto a = seg.segment->Allocate(4 << 20, "a test allocation");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(a.status().message().find("a test allocation needs 4194304 bytes"), std::string::npos)
      << a.status().ToString();
}

TEST(Segment, ListFindsSegmentsByPrefixAndRemoveUnlinks) {
  TestSegment seg(TestSegment::Options());
  const auto names = Segment::List("tandem.test.");
  EXPECT_NE(std::find(names.begin(), names.end(), seg.name), names.end());
  ASSERT_TRUE(Segment::Remove(seg.name).ok());
  EXPECT_FALSE(Exists(seg.name));
  EXPECT_EQ(Segment::Remove(seg.name).code(), StatusCode::kNotFound);
}

TEST(Segment, InvalidNamesAreRefused) {
  for (const char* bad : {"", "a/b", ".", ".."}) {
    auto opts = TestSegment::Options();
    opts.name = bad;
    EXPECT_EQ(Segment::Create(opts).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace tandem::shm
