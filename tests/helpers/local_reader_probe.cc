// tandem-test-local-reader: a local reader process for the fault tests
// (tests/integration/local_reader_test.cc). It attaches to a replica's segment with LocalReader and
//   attach SEGMENT                 prints "attached" (exit 0), or "error: <code>: <message>" (2);
//   stop-mid-read SEGMENT INDEX    scans INDEX at its latest time and, holding the read's
//                                  announcement, stops itself (SIGSTOP) at the first row; once
//                                  continued it finishes and prints "rows N" (exit 0).
//   abuse-table SEGMENT            does to the replica's reader table everything a process that
//                                  may write it can try — grow, punch it, scribble over every
//                                  byte, unlink and replace its name, lock every entry, shrink —
//                                  and prints one line per attempt, "<what>: done" or "<what>:
//                                  refused (<why>)" (0).
// The test kills or continues it while it is stopped: a reader dying or hanging mid-read.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <cerrno>
#include <random>

#include "client/local_reader.h"
#include "shm/descriptor_handout.h"
#include "shm/reader_table.h"

namespace {

void Report(const char* what, bool done) {
  if (done) {
    std::printf("%s: done\n", what);
  } else {
    std::printf("%s: refused (%s)\n", what, std::strerror(errno));
  }
}

// A writable descriptor of the table, as any process allowed to write it gets one: the file under
// its name when the table is a file, else what the replica's socket hands out.
int WritableTable(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0) return fd;
  auto received = tandem::shm::ReceiveDescriptor(path, std::chrono::seconds(5));
  return received.ok() ? received->fd : -1;
}

int AbuseTable(const std::string& segment) {
  const std::string path = "/dev/shm/" + tandem::shm::ReaderTableName(segment);
  const int fd = WritableTable(path);
  if (fd < 0) {
    std::printf("error: no writable descriptor of %s\n", path.c_str());
    return 2;
  }
  const auto size = static_cast<off_t>(tandem::shm::kReaderTableBytes);
  Report("grow", ftruncate(fd, size * 2) == 0);
  Report("punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, size) == 0);
  // Scribble: random bytes over whatever of the table is still there.
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      std::mt19937_64 rng(42);
      auto* bytes = static_cast<unsigned char*>(p);
      for (off_t i = 0; i < st.st_size; ++i) bytes[i] = static_cast<unsigned char>(rng());
      munmap(p, static_cast<std::size_t>(st.st_size));
      Report("scribble", true);
    } else {
      Report("scribble", false);
    }
  }
  Report("unlink", unlink(path.c_str()) == 0);
  const std::string decoy = path + ".decoy";
  const int made = open(decoy.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (made >= 0) close(made);
  Report("replace", made >= 0 && rename(decoy.c_str(), path.c_str()) == 0);
  (void)unlink(decoy.c_str());
  // Every entry's lock taken through this descriptor, and left to the process's exit: a
  // description that outlived it (kept open by the replica, say) would keep them all.
  bool locked = true;
  for (std::uint32_t i = 0; i < tandem::shm::kReaderTableEntries; ++i) {
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = static_cast<off_t>(sizeof(tandem::shm::ReaderTableHeader) +
                                    i * sizeof(tandem::shm::ReaderTableSlot));
    fl.l_len = 1;
    // The supervisor's sweep holds an entry's lock for a moment while it clears it (the scribble
    // above made every entry look claimed): try again a little later.
    bool got = false;
    for (int attempt = 0; attempt < 1000 && !got; ++attempt) {
      got = fcntl(fd, F_OFD_SETLK, &fl) == 0;
      if (!got && errno != EAGAIN && errno != EACCES) break;
      if (!got) usleep(1000);
    }
    locked = got && locked;
  }
  Report("lock-all", locked);
  // Last, so that a table that could shrink stays cut short under the replica's mappings.
  Report("shrink-partly", ftruncate(fd, 4096) == 0);
  Report("shrink", ftruncate(fd, 0) == 0);
  close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s attach SEGMENT | stop-mid-read SEGMENT INDEX | abuse-table SEGMENT\n",
                 argv[0]);
    return 64;
  }
  const std::string mode = argv[1];
  if (mode == "abuse-table") return AbuseTable(argv[2]);
  auto reader = tandem::LocalReader::Attach(argv[2]);
  if (!reader.ok()) {
    std::printf("error: %s\n", reader.status().ToString().c_str());
    return 2;
  }
  if (mode == "attach") {
    std::printf("attached\n");
    return 0;
  }
  if (mode != "stop-mid-read" || argc < 4) return 64;
  const auto id = tandem::GlobalId::Parse(argv[3]);
  if (!id) return 64;
  std::uint64_t rows = 0;
  auto t = (*reader)->Scan(*id, tandem::KeyRange::All(), std::nullopt, [&](const tandem::RowView&) {
    if (rows++ == 0) raise(SIGSTOP);  // mid-read: announced
    return true;
  });
  if (!t.ok()) {
    std::printf("error: %s\n", t.status().ToString().c_str());
    return 2;
  }
  std::printf("rows %llu\n", static_cast<unsigned long long>(rows));
  return 0;
}
