#include "postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "run_binary.h"

namespace tandem::testing {
namespace postgres_server_detail {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kBinDir = "/usr/lib/postgresql/15/bin";
// Part of the template's name: a change to initdb's arguments below must change it, so that no
// server copies a template made with the old ones.
constexpr int kTemplateFormat = 2;
constexpr int kStartAttempts = 5;
constexpr auto kStopLimit = 15s;  // the postmaster's own SIGKILL of its children comes after 5 s
// The prefix of every directory a server (or a template being made) lives in, followed by the pid
// of the test process that made it and '-': how a later test knows whose it was.
constexpr const char* kDirPrefix = "tandem-postgres-";

// As whom the server and its tools run: `postgres` when the test is root, else the test's user.
struct Identity {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

std::optional<Identity> ServerIdentity(std::string* why) {
  if (geteuid() != 0) return Identity{.switch_user = false, .uid = geteuid(), .gid = getegid()};
  struct passwd entry, *found = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r("postgres", &entry, buf.data(), buf.size(), &found) != 0 || !found) {
    *why =
        "running as root and there is no user `postgres` to run PostgreSQL as (Debian's "
        "postgresql-15 package makes it)";
    return std::nullopt;
  }
  return Identity{.switch_user = true, .uid = found->pw_uid, .gid = found->pw_gid};
}

std::string Runuser() {
  for (const char* path : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Runs argv (argv[0] a path) as the server's user, output captured (run_binary.h).
BinaryRun RunAsServerUser(const Identity& id, std::vector<std::string> argv,
                          std::chrono::milliseconds limit = 60s) {
  if (!id.switch_user) {
    const std::string binary = argv.front();
    argv.erase(argv.begin());
    return RunBinary(binary, argv, {.limit = limit, .strip_tandem_env = true});
  }
  std::vector<std::string> args = {"-u", "postgres", "--"};
  args.insert(args.end(), argv.begin(), argv.end());
  return RunBinary(Runuser(), args, {.limit = limit, .strip_tandem_env = true});
}

bool GiveTo(const std::string& path, const Identity& id) {
  return !id.switch_user || chown(path.c_str(), id.uid, id.gid) == 0;
}

// Running, or a zombie nobody reaped yet (an orphan's reaper may be slow): not one that is gone.
bool ProcessAlive(pid_t pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close_paren = line.rfind(')');
  return close_paren == std::string::npos || close_paren + 2 >= line.size() ||
         line[close_paren + 2] != 'Z';
}

// "15.20-Debian-15.20-0-deb12u1": `postgres --version` as a file name (it answers as root too).
const std::string& VersionKey() {
  static const std::string key = [] {
    const BinaryRun run =
        RunBinary(std::string(kBinDir) + "/postgres", {"--version"}, {.limit = 30s});
    if (run.exit != 0) return std::string();
    std::string version = run.out;
    if (const auto at = version.find(") "); at != std::string::npos) version.erase(0, at + 2);
    std::string out;
    for (const char c : version) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.') {
        out += c;
      } else if (!out.empty() && out.back() != '-') {
        out += '-';
      }
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out;
  }();
  return key;
}

// Removes the directories of servers (and templates being made) whose tests are gone, killed
// before their destructor ran: <base>/tandem-postgres-<pid>-… where that pid is dead, and so is
// the postmaster its data directory names. Best effort: another user's, or one still in use, is
// left alone.
void RemoveStaleDirs(const std::string& base) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    const std::string rest = name.substr(std::strlen(kDirPrefix));
    const auto dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos ||
        !std::all_of(rest.begin(), rest.begin() + dash, [](char c) { return std::isdigit(c); })) {
      continue;  // a template, or not ours
    }
    const pid_t test = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
    if (test == getpid() || ProcessAlive(test)) continue;
    std::ifstream lock(entry.path() / "data" / "postmaster.pid");
    long postmaster = 0;
    if (lock >> postmaster && ProcessAlive(static_cast<pid_t>(postmaster))) continue;
    fs::remove_all(entry.path(), ec);
  }
}

// Where servers live: /dev/shm when it is a tmpfs with room to spare, else /tmp. A data
// directory is written as it is copied and as the server runs; on a disk that the rest of a
// loaded CI machine is also writing, the kernel throttles those writes, and copying the template
// or running initdb there took many times as long as in /dev/shm beside the same load. The
// template lives there too: memory until the machine restarts, the price of a cache.
const std::string& ServersBase() {
  static const std::string base = [] {
    struct statfs fs_info;
    constexpr std::uint64_t kRoom = std::uint64_t{2} << 30;
    if (statfs("/dev/shm", &fs_info) == 0 && fs_info.f_type == TMPFS_MAGIC &&
        static_cast<std::uint64_t>(fs_info.f_bavail) * fs_info.f_bsize >= kRoom &&
        access("/dev/shm", W_OK) == 0) {
      return std::string("/dev/shm");
    }
    return std::string("/tmp");
  }();
  return base;
}

// initdb's arguments, the same for a template and a server's own data directory. Not synced,
// the template either (syncing it is slow on a busy disk): /dev/shm does not survive a
// crash, /tmp is emptied as Debian boots (tmpfiles.d/tmp.conf), a container's goes with it.
std::vector<std::string> Initdb(const std::string& data_dir) {
  std::vector<std::string> argv = {std::string(kBinDir) + "/initdb", "-D", data_dir,
                                   "--encoding=UTF8", "--locale=C", "--auth=trust",
                                   "--username=postgres", "--no-instructions",
                                   // WAL in 1 MiB segments, not 16: a smaller data directory,
                                   // quicker to copy.
                                   "--wal-segsize=1", "--no-sync"};
  return argv;
}

bool UsableTemplate(const std::string& path, const Identity& id) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == id.uid &&
         (st.st_mode & 077) == 0 && fs::exists(path + "/PG_VERSION") &&
         fs::exists(path + "/global/pg_control");
}

// Removes this user's templates but `current`: another PostgreSQL version's or another
// kTemplateFormat's (made before an upgrade or a change of initdb's arguments), or one in the
// other base — data directories nobody copies again, held in memory while they are in /dev/shm.
// Templates being made are named by their maker's pid (RemoveStaleDirs' business), not matched.
void RemoveOtherTemplates(const std::string& current, const Identity& id) {
  const std::string prefix = std::string(kDirPrefix) + "template-";
  const std::string suffix = "-u" + std::to_string(id.uid);
  std::vector<fs::path> others;
  std::error_code ec;
  for (const std::string& base : {std::string("/tmp"), ServersBase()}) {
    for (const auto& entry : fs::directory_iterator(base, ec)) {
      const std::string name = entry.path().filename().string();
      struct stat st;
      if (name.starts_with(prefix) && name.ends_with(suffix) && entry.path() != current &&
          lstat(entry.path().c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == id.uid &&
          std::find(others.begin(), others.end(), entry.path()) == others.end()) {
        others.push_back(entry.path());
      }
    }
  }
  for (const fs::path& other : others) fs::remove_all(other, ec);
}

// The template data directory servers copy, made now if it is not there yet; nullopt when there
// is none to use (then each server runs initdb itself). Each call removes the user's other
// templates (a scan of two directories, as RemoveStaleDirs does). Several tests may make it at
// once: each makes its own and renames it into place, and the first rename wins (renaming a
// directory onto one that is not empty fails), so the template is always whole.
std::optional<std::string> Template(const Identity& id) {
  if (VersionKey().empty()) return std::nullopt;
  const std::string path = ServersBase() + "/tandem-postgres-template-" + VersionKey() + "-f" +
                           std::to_string(kTemplateFormat) + "-u" + std::to_string(id.uid);
  RemoveOtherTemplates(path, id);
  if (UsableTemplate(path, id)) return path;
  std::error_code ec;
  if (fs::exists(path, ec)) return std::nullopt;  // not one this user can trust: leave it
  std::string build =
      ServersBase() + "/" + kDirPrefix + std::to_string(getpid()) + "-template-XXXXXX";
  if (!mkdtemp(build.data())) return std::nullopt;
  if (GiveTo(build, id)) {
    const BinaryRun run = RunAsServerUser(id, Initdb(build + "/data"));
    if (run.exit == 0) (void)rename((build + "/data").c_str(), path.c_str());
  }
  fs::remove_all(build, ec);
  return UsableTemplate(path, id) ? std::optional(path) : std::nullopt;
}

// The environment of the server: the test's without TANDEM_* and PG* (PGDATA, PGOPTIONS, … would
// reach into it).
std::vector<std::string> ServerEnvironment() {
  std::vector<std::string> env = ChildEnvironment(true);
  std::erase_if(env, [](const std::string& e) { return e.rfind("PG", 0) == 0; });
  return env;
}

// Starts argv[0] as the server's user with the parent-death signal SIGQUIT, stdout and stderr on
// `log_fd`, stdin /dev/null. Returns the pid, or -1 with `why`.
pid_t SpawnServer(const Identity& id, const std::vector<std::string>& argv,
                  const std::vector<std::string>& env, int log_fd, std::string* why) {
  // Everything the child touches is prepared before fork: between fork and exec only
  // async-signal-safe calls.
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int report[2];  // the child's errno before exec; close-on-exec, so EOF means exec worked
  if (devnull < 0 || pipe2(report, O_CLOEXEC) != 0) {
    *why = std::string("cannot prepare the server's start: ") + std::strerror(errno);
    if (devnull >= 0) close(devnull);
    return -1;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    auto fail = [&](int e) {
      (void)!write(report[1], &e, sizeof e);
      _exit(127);
    };
    if (id.switch_user &&
        (setgroups(1, &id.gid) != 0 || setgid(id.gid) != 0 || setuid(id.uid) != 0)) {
      fail(errno);
    }
    // After the change of identity, which clears it.
    if (prctl(PR_SET_PDEATHSIG, SIGQUIT) != 0) fail(errno);
    if (getppid() != parent) fail(ECHILD);  // the test is already gone
    if (dup2(devnull, STDIN_FILENO) < 0 || dup2(log_fd, STDOUT_FILENO) < 0 ||
        dup2(log_fd, STDERR_FILENO) < 0) {
      fail(errno);
    }
    execve(args[0], args.data(), envp.data());
    fail(errno);
  }
  close(report[1]);
  close(devnull);
  if (pid < 0) {
    close(report[0]);
    *why = std::string("fork: ") + std::strerror(errno);
    return -1;
  }
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n > 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    *why = argv[0] + ": " + std::strerror(child_errno);
    return -1;
  }
  return pid;
}

// SIGQUIT (immediate shutdown), then waits for the postmaster to exit — it waits for its own
// children first — and reaps it; SIGKILL if it is still there after kStopLimit.
void StopProcess(pid_t pid) {
  kill(pid, SIGQUIT);
  const auto deadline = std::chrono::steady_clock::now() + kStopLimit;
  for (;;) {
    const pid_t done = waitpid(pid, nullptr, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(1ms);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// A TCP port on 127.0.0.1 nothing listens on now (the kernel's choice for port 0). Another
// process may take it before the server binds it: the caller retries.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string ReadFile(const std::string& path, std::size_t from = 0) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return from < text.size() ? text.substr(from) : std::string();
}

// Servers still running, for the atexit hook: only the process that started one stops it.
struct Running {
  pid_t pid;
  pid_t owner;
  std::string dir;
};
std::mutex& RegistryMutex() {
  static auto* mutex = new std::mutex;  // never destroyed: the atexit hook may run after statics
  return *mutex;
}
std::vector<Running>& Registry() {
  static auto* running = new std::vector<Running>;
  return *running;
}

void StopAllAtExit() {
  std::vector<Running> mine;
  {
    std::lock_guard lock(RegistryMutex());
    for (const Running& r : Registry()) {
      if (r.owner == getpid()) mine.push_back(r);
    }
    Registry().clear();
  }
  for (const Running& r : mine) {
    StopProcess(r.pid);
    std::error_code ec;
    fs::remove_all(r.dir, ec);
  }
}

void Register(pid_t pid, const std::string& dir) {
  static std::once_flag hook;
  std::call_once(hook, [] { std::atexit(StopAllAtExit); });
  std::lock_guard lock(RegistryMutex());
  Registry().push_back({.pid = pid, .owner = getpid(), .dir = dir});
}

void Unregister(pid_t pid) {
  std::lock_guard lock(RegistryMutex());
  std::erase_if(Registry(), [&](const Running& r) { return r.pid == pid; });
}

bool BindFailed(const std::string& log) {
  return log.find("could not bind") != std::string::npos ||
         log.find("Address already in use") != std::string::npos ||
         log.find("could not create any TCP/IP sockets") != std::string::npos;
}

}  // namespace postgres_server_detail

using namespace postgres_server_detail;

std::optional<std::string> PostgresServer::Unavailable() {
  for (const char* program : {"postgres", "initdb"}) {
    if (access(Binary(program).c_str(), X_OK) != 0) {
      return "PostgreSQL 15 is not installed (no " + Binary(program) +
             "; Debian: apt-get install postgresql-15)";
    }
  }
  std::string why;
  const auto id = ServerIdentity(&why);
  if (!id) return why;
  if (id->switch_user && Runuser().empty()) {
    return std::string("running as root and there is no runuser to run initdb as postgres");
  }
  return std::nullopt;
}

std::string PostgresServer::Binary(const std::string& name) {
  return std::string(kBinDir) + "/" + name;
}

PostgresServer::PostgresServer(const PostgresServerOptions& options) : owner_(getpid()) {
  if (auto why = Unavailable()) {
    error_ = *why;
    return;
  }
  std::string why;
  const Identity id = *ServerIdentity(&why);
  RemoveStaleDirs("/tmp");
  if (ServersBase() != "/tmp") RemoveStaleDirs(ServersBase());
  std::string dir = ServersBase() + "/" + kDirPrefix + std::to_string(getpid()) + "-XXXXXX";
  if (!mkdtemp(dir.data())) {
    error_ = std::string("mkdtemp: ") + std::strerror(errno);
    return;
  }
  dir_ = dir;
  const std::string socket = socket_dir();
  if (!GiveTo(dir_, id) || mkdir(socket.c_str(), 0700) != 0 || !GiveTo(socket, id)) {
    error_ = "cannot prepare " + dir_ + " for the server's user: " + std::strerror(errno);
    Stop();
    return;
  }
  const auto from = Template(id);
  const BinaryRun made = from ? RunAsServerUser(id, {"/bin/cp", "-a", *from, data_dir()})
                              : RunAsServerUser(id, Initdb(data_dir()));
  if (made.exit != 0) {
    error_ = std::string(from ? "copying the template data directory" : "initdb") +
             " failed: " + DescribeRun(made);
    Stop();
    return;
  }
  if (!StartOnFreePort(options)) Stop();
}

bool PostgresServer::StartOnFreePort(const PostgresServerOptions& options) {
  std::string why;
  const Identity id = *ServerIdentity(&why);
  const std::string log_path = dir_ + "/server.log";
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    const int port =
        attempt == 0 && options.first_port != 0 ? options.first_port : FreeLoopbackPort();
    if (port == 0) {
      error_ = std::string("no free TCP port on 127.0.0.1: ") + std::strerror(errno);
      return false;
    }
    std::vector<std::string> argv = {Binary("postgres"),   "-D", data_dir(),  "-p",
                                     std::to_string(port), "-k", socket_dir()};
    std::vector<std::string> settings = {
        "listen_addresses=127.0.0.1", "max_connections=" + std::to_string(options.max_connections),
        "shared_buffers=" + options.shared_buffers,
        std::string("wal_level=") + (options.logical_replication ? "logical" : "replica"),
        // Fast: nothing waits for the disk; the data dies with the test.
        "fsync=off", "synchronous_commit=off", "full_page_writes=off", "autovacuum=off", "jit=off",
        // Dynamic shared memory in files of the data directory, not /dev/shm: nothing outlives
        // the directory, even a SIGKILLed server's.
        "dynamic_shared_memory_type=mmap", "huge_pages=off",
        // Reproducible text: messages in English, times in UTC and ISO.
        "lc_messages=C", "TimeZone=UTC", "log_timezone=UTC", "DateStyle=ISO, MDY",
        "logging_collector=off"};
    settings.insert(settings.end(), options.settings.begin(), options.settings.end());
    for (const std::string& s : settings) {
      argv.push_back("-c");
      argv.push_back(s);
    }
    const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      error_ = "cannot open " + log_path + ": " + std::strerror(errno);
      return false;
    }
    struct stat st;
    const std::size_t log_from = fstat(log_fd, &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
    const pid_t pid = SpawnServer(id, argv, ServerEnvironment(), log_fd, &error_);
    close(log_fd);
    if (pid < 0) return false;
    Register(pid, dir_);

    // Ready when it answers on its Unix socket (PQping: no login needed), in this server's own
    // directory, where no other server can answer — over TCP, a port lost to another test's
    // server in the race between choosing it and binding it would answer for this one. Bounded,
    // and given up as soon as the server exits.
    const std::string ping = "host=" + socket_dir() + " port=" + std::to_string(port) +
                             " user=postgres dbname=postgres connect_timeout=5";
    const auto deadline = std::chrono::steady_clock::now() + options.start_limit;
    int status = 0;
    bool exited = false;
    bool port_not_ours = false;
    for (;;) {
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) {
        exited = true;
        break;
      }
      if (PQping(ping.c_str()) == PQPING_OK) {
        // PostgreSQL binds its TCP socket before it makes its Unix one and exits when it can
        // bind no TCP socket, so it holds the port now; that the port answers as this server
        // (its data directory) is checked all the same, over the connection Execute keeps.
        pid_ = pid;
        port_ = port;
        std::string why;
        if (AnswersAs(data_dir(), &why)) return true;
        error_ =
            "127.0.0.1:" + std::to_string(port) + " does not answer as the server started: " + why;
        port_not_ours = true;
        connection_.reset();
        pid_ = -1;
        port_ = 0;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(5ms);  // the polling interval, not synchronisation
    }
    if (!exited) StopProcess(pid);
    Unregister(pid);
    if (port_not_ours) continue;  // another server has it: another port
    const std::string log = ReadFile(log_path, log_from);
    if (exited && BindFailed(log)) continue;  // the port was taken meanwhile: another one
    error_ = (exited ? "PostgreSQL exited while starting (status " + std::to_string(status) + ")"
                     : "PostgreSQL did not accept connections within " +
                           std::to_string(options.start_limit.count()) + " ms") +
             "; its log:\n" + log;
    return false;
  }
  error_ = "PostgreSQL could not bind a free port of its own in " + std::to_string(kStartAttempts) +
           " attempts" + (error_.empty() ? std::string() : " (the last: " + error_ + ")") +
           "; its log:\n" + ReadFile(log_path);
  return false;
}

bool PostgresServer::AnswersAs(const std::string& data_directory, std::string* why) {
  connection_ = std::make_unique<PgConnection>(conninfo());
  const PgAnswer answer = connection_->Execute("SHOW data_directory");
  if (!answer.ok()) {
    *why = answer.error->ToString();
    return false;
  }
  if (answer.rows.size() != 1 || answer.rows[0].size() != 1 || !answer.rows[0][0]) {
    *why = "SHOW data_directory answered " + std::to_string(answer.rows.size()) + " rows";
    return false;
  }
  if (*answer.rows[0][0] != data_directory) {
    *why = "its data directory is " + *answer.rows[0][0] + ", not " + data_directory;
    return false;
  }
  return true;
}

PostgresServer::~PostgresServer() { Stop(); }

std::string PostgresServer::conninfo(const std::string& database) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=" + database +
         " user=postgres connect_timeout=10";
}

std::string PostgresServer::Log() const { return ReadFile(dir_ + "/server.log"); }

PgAnswer PostgresServer::Execute(const std::string& sql) {
  if (!ok()) {
    PgAnswer r;
    r.error = PgError{.sqlstate = "", .message = "no server: " + error_, .detail = "", .hint = ""};
    return r;
  }
  if (!connection_ || !connection_->ok()) connection_ = std::make_unique<PgConnection>(conninfo());
  return connection_->Execute(sql);
}

void PostgresServer::Stop() {
  if (getpid() != owner_) {
    // A forked child (a death test's): neither the server nor the session is its own. Closing
    // the connection would end the parent's session (libpq sends Terminate), so it is dropped.
    (void)connection_.release();
    return;
  }
  connection_.reset();
  if (pid_ > 0) {
    StopProcess(pid_);
    Unregister(pid_);
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace tandem::testing
