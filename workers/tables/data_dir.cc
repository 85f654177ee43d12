#include "workers/tables/data_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace tandem::workers {

namespace {

constexpr std::chrono::milliseconds kLockRetry{20};

std::string Parent(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// mkdir(2) `dir` 0700; `created` says whether it did (false: it already existed as a
// directory, following symlinks when `follow`).
Status MakeDir(const std::string& dir, bool follow, bool& created) {
  created = false;
  if (mkdir(dir.c_str(), 0700) == 0) {
    created = true;
    return Status::Ok();
  }
  if (errno != EEXIST) return Status::FromErrno("mkdir " + dir);
  struct stat st {};
  if ((follow ? stat(dir.c_str(), &st) : lstat(dir.c_str(), &st)) != 0) {
    return Status::FromErrno("stat " + dir);
  }
  if (!follow && S_ISLNK(st.st_mode)) {
    return Status::FailedPrecondition(dir + " is a symlink (it must be a directory)");
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::FailedPrecondition(dir + " exists and is not a directory");
  }
  return Status::Ok();
}

// mkdir -p, each new directory 0700 and made durable in its parent. Existing components may be
// symlinks to directories.
Status MakeDirs(const std::string& path) {
  for (std::size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string prefix = path.substr(0, at);
    if (prefix.empty() || prefix.back() == '/') continue;  // "//" in the path
    bool created = false;
    TANDEM_RETURN_IF_ERROR(MakeDir(prefix, /*follow=*/true, created));
    if (created) TANDEM_RETURN_IF_ERROR(SyncDirectory(Parent(prefix)));
  }
  return Status::Ok();
}

// What LOCK says about its holder: "pid N", or why it cannot say.
std::string Holder(int fd) {
  char buf[32];
  ssize_t n;
  do {
    n = pread(fd, buf, sizeof buf - 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return "an unknown pid (its LOCK file is empty)";
  std::string text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return "an unknown pid (its LOCK file says '" + text + "')";
  }
  return "pid " + text;
}

Status WriteAllAt(int fd, const std::string& bytes, off_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        pwrite(fd, bytes.data() + done, bytes.size() - done, offset + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("write LOCK");
    }
    done += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open directory " + dir);
  int rc;
  do {
    rc = fsync(fd);
  } while (rc != 0 && errno == EINTR);
  const Status status = rc == 0 ? Status::Ok() : Status::FromErrno("fsync directory " + dir);
  close(fd);
  return status;
}

Result<std::unique_ptr<DataDir>> DataDir::Open(const std::string& given,
                                               std::chrono::milliseconds wait) {
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.empty()) return Status::InvalidArgument("the data dir path is empty");
  TANDEM_RETURN_IF_ERROR(MakeDirs(path));

  const std::string lock_path = path + "/LOCK";
  const int fd =
      open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0) {
    if (errno == ELOOP) {
      return Status::FailedPrecondition(lock_path + " is a symlink (it must be a regular file)");
    }
    return Status::FromErrno("open " + lock_path);
  }
  // From here the fd is the DataDir's (closed by its destructor, also on the error paths).
  std::unique_ptr<DataDir> dir(new DataDir(path, fd));
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::FromErrno("stat " + lock_path);
  if (!S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition(lock_path + " is not a regular file");
  }

  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return Status::FromErrno("flock " + lock_path);
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return Status::FailedPrecondition("data dir " + path + " is in use by " + Holder(fd) +
                                        " (another replica?)");
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(kLockRetry, deadline - now));
  }
  if (ftruncate(fd, 0) != 0) return Status::FromErrno("truncate " + lock_path);
  TANDEM_RETURN_IF_ERROR(WriteAllAt(fd, std::to_string(getpid()) + "\n", 0));

  bool created_any = false;
  for (const std::string& sub : {dir->TablesDir(), dir->DroppedDir()}) {
    bool created = false;
    TANDEM_RETURN_IF_ERROR(MakeDir(sub, /*follow=*/false, created));
    created_any = created_any || created;
  }
  if (created_any) TANDEM_RETURN_IF_ERROR(SyncDirectory(path));
  return dir;
}

DataDir::~DataDir() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
}

}  // namespace tandem::workers
