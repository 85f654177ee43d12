// Starting a replica (DESIGN §1, §6): the runtime directory, the segment, the controller and HTTP
// endpoints, the runtimes' channels, and spawning the runtimes. Any failure here exits with the
// code docs/flags.md documents, leaving nothing behind.
#include "supervisor/supervisor.h"

#include <dirent.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "shm/layout.h"

namespace tandem::supervisor {

bool Supervisor::EnsureRuntimeDir() {
  // --runtime-dir is made (with its parents, 0700) if it does not exist, as daemons do with
  // their run directories.
  std::error_code ec;
  if (std::filesystem::is_directory(config_.runtime_dir, ec)) return true;
  const mode_t old = umask(0077);
  std::filesystem::create_directories(config_.runtime_dir, ec);
  umask(old);
  if (ec) {
    spdlog::error("could not create --runtime-dir {}: {}", config_.runtime_dir, ec.message());
    return false;
  }
  spdlog::info("created --runtime-dir {} (0700)", config_.runtime_dir);
  return true;
}

int Supervisor::Start() {
  // Before anything is made: an unusable --data-dir is an impossible configuration.
  if (!config_.data_dir.empty()) {
    if (Status s = EnsureDataDir(config_.data_dir); !s.ok()) {
      spdlog::critical("impossible configuration: {}", s.message());
      return kExitConfig;
    }
  }
  if (!EnsureRuntimeDir()) return kExitUnavailable;
  CleanStaleRuntimeDirs();
  // The runtime directory: our ipc:// sockets, readable by nobody else.
  runtime_dir_ =
      config_.runtime_dir + "/tandem." + config_.replica_id + "." + std::to_string(getpid());
  if (mkdir(runtime_dir_.c_str(), 0700) != 0) {
    spdlog::error("could not create runtime directory {}: {}", runtime_dir_, std::strerror(errno));
    runtime_dir_.clear();
    return kExitUnavailable;
  }
  chmod(runtime_dir_.c_str(), 0700);

  // Everything the runtimes need before they start, then the runtimes (each step cleans up what
  // it made when it fails).
  for (int (Supervisor::*step)() : {&Supervisor::CreateSegment, &Supervisor::BindEndpoints,
                                    &Supervisor::BindRuntimeChannels, &Supervisor::SpawnRuntimes}) {
    if (const int code = (this->*step)(); code != kExitOk) return code;
  }
  return kExitOk;
}

int Supervisor::CreateSegment() {
  shm::SegmentOptions so;
  so.name = config_.shm_name;
  so.replica_id = config_.replica_id;
  so.size_bytes = config_.shm_size;
  so.workers = config_.workers;
  so.mode = config_.two_runtime() ? shm::Mode::kTwoRuntime : shm::Mode::kSolo;
  so.slots_per_row = config_.slots_per_row;
  so.peek_ring_bytes = config_.peek_ring_bytes;
  if (!config_.reader_group.empty()) {
    auto gid = LookupGroup(config_.reader_group);
    if (!gid.ok()) {
      spdlog::error("{}", gid.status().message());
      Cleanup(false);
      return kExitConfig;
    }
    so.reader_gid = *gid;
  }
  auto seg = shm::Segment::Create(so);
  if (!seg.ok()) {
    spdlog::error("could not create the segment: {}", seg.status().message());
    Cleanup(false);
    // A segment larger than /dev/shm has room for is an impossible configuration (DESIGN §6);
    // so is a name taken by a file the supervisor must never use or remove (another user's, a
    // FIFO, a link: FailedPrecondition): only another name or that file's owner can help. A
    // live supervisor of the same name is a busy resource, like a bound port: 69.
    return seg.status().code() == StatusCode::kResourceExhausted ||
                   seg.status().code() == StatusCode::kInvalidArgument ||
                   seg.status().code() == StatusCode::kFailedPrecondition
               ? kExitConfig
               : kExitUnavailable;
  }
  segment_ = std::move(seg).value();
  if (!segment_->replaced().empty()) {
    spdlog::warn("segment /dev/shm/{} replaced what was under its name: {}", config_.shm_name,
                 segment_->replaced());
  }
  spdlog::info("segment /dev/shm/{} created: {} bytes, {} rows", config_.shm_name, config_.shm_size,
               config_.workers);
  auto table = shm::ReaderTable::Create(config_.shm_name, segment_->header().generation,
                                        shm::kLayoutHash, so.reader_gid);
  if (!table.ok()) {
    spdlog::error("could not create the reader table: {}", table.status().message());
    Cleanup(false);
    return table.status().code() == StatusCode::kAlreadyExists ? kExitUnavailable : kExitConfig;
  }
  reader_table_ = std::move(table).value();
  spdlog::info("reader table {} created ({} local readers at most{})", reader_table_->path(),
               shm::kReaderTableEntries,
               config_.reader_group.empty() ? std::string(", the replica's user only")
                                            : ", group " + config_.reader_group + " may read");
  return kExitOk;
}

// The controller endpoint (ControllerEndpoint::Bind) and the internal HTTP one.
int Supervisor::BindEndpoints() {
  if (const int code = endpoint_.Bind(); code != kExitOk) {
    Cleanup(false);
    return code;
  }
  HttpServer::Limits limits;
  limits.max_connections = config_.guards.http_max_connections;
  limits.request_timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(config_.guards.http_request_timeout_s));
  http_ =
      std::make_unique<HttpServer>([this](const std::string& p) { return ServeHttp(p); }, limits);
  if (Status s = http_->Bind(config_.internal_http_listen_addr); !s.ok()) {
    spdlog::error("{}", s.message());
    Cleanup(false);
    return kExitUnavailable;
  }
  bound_ = true;
  bound_http_ = http_->BoundAddress();
  spdlog::info("bound: controller endpoint {}, internal HTTP {}", endpoint_.bound_address(),
               bound_http_);
  if (!config_.endpoints_file.empty()) {
    if (Status s = WriteEndpointsFile(endpoint_.bound_address(), bound_http_); !s.ok()) {
      spdlog::error("{}", s.message());
      Cleanup(false);
      return kExitUnavailable;
    }
  }
  return kExitOk;
}

// --endpoints-file: written whole to a temporary beside it, then renamed, so that a reader sees
// either no file or both lines (an orchestrator or test that asked for port 0 waits for it).
Status Supervisor::WriteEndpointsFile(const std::string& controller, const std::string& http) {
  const std::string tmp = config_.endpoints_file + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "controller_listen_addr=" << controller << "\n"
        << "internal_http_listen_addr=" << http << "\n";
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return Status::Unavailable("could not write --endpoints-file " + config_.endpoints_file +
                                 " (via " + tmp + ")");
    }
  }
  // The inode the rename keeps: what Cleanup checks the path still names before removing it.
  struct stat written {};
  if (stat(tmp.c_str(), &written) != 0 ||
      std::rename(tmp.c_str(), config_.endpoints_file.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return Status::Unavailable("could not write --endpoints-file " + config_.endpoints_file + ": " +
                               error);
  }
  endpoints_written_ = WrittenFile{written.st_dev, written.st_ino, written.st_mtim};
  return Status::Ok();
}

// Each runtime's channel, in the runtime directory (maintenance before interactive).
int Supervisor::BindRuntimeChannels() {
  for (auto& [id, link] : links_) {
    if (Status s = link.Bind(ctx_, runtime_dir_); !s.ok()) {
      spdlog::error("{}", s.message());
      Cleanup(false);
      return kExitUnavailable;
    }
  }
  return kExitOk;
}

// fork+exec of each runtime into the process group (DESIGN §5), recorded in the segment header.
int Supervisor::SpawnRuntimes() {
  for (auto& [id, link] : links_) {
    std::vector<std::string> argv = {
        config_.worker_binary,
        "--role",
        RoleName(id),
        "--workers",
        std::to_string(id == Role::kInteractive ? config_.effective_interactive_workers()
                                                : config_.workers),
        "--segment",
        config_.shm_name,
        "--channel",
        link.endpoint(),
        "--replica-id",
        config_.replica_id,
        "--log-level",
        config_.params.SourceOf(kLogLevel) == "default"
            ? std::string(spdlog::level::to_string_view(config_.log_level).data())
            : config_.params.Get(kLogLevel),
        "--log-format",
        config_.log_format == LogFormat::kJson ? "json" : "text",
        "--max-result-size",
        config_.params.Get(kMaxResultSize),
        "--max-one-shot-memory",
        config_.params.Get(kMaxOneShotMemory),
        "--subscribe-batch-bytes",
        config_.params.Get(kSubscribeBatchBytes)};
    for (std::string& arg : RuntimeArgs(id)) argv.push_back(std::move(arg));
    std::vector<int> inherit;
    if (ServesPeeks(id) && shm::PeekRingsOf(*segment_) != nullptr) {
      // The peek fast path (DESIGN §14): this runtime alone gets the rings' eventfds.
      const PeekPath& peek_path = link.EnablePeekPath(*segment_);
      argv.push_back("--peek-ring-fds");
      argv.push_back(peek_path.FdsArgument());
      inherit = peek_path.InheritedFds();
    }
    if (Renders(id)) {
      // Its publishers honour the reader table's announcements: handed down, never taken through
      // the socket that readers of the --reader-group may keep busy or scribble on.
      argv.push_back("--reader-table-fd");
      argv.push_back(std::to_string(reader_table_->inheritable_fd()));
      inherit.push_back(reader_table_->inheritable_fd());
    }
    auto pid = children_.Spawn(RoleName(id), argv, inherit);
    if (!pid.ok()) {
      spdlog::error("{}", pid.status().message());
      children_.SignalAll(SIGKILL);
      children_.ReapAll(2.0, nullptr);
      Cleanup(false);
      return kExitUnavailable;
    }
    link.Spawned(*pid);
    segment_->SetRuntime(id, *pid, shm::RuntimeState::kStarting);
    spdlog::info("spawned {} runtime, pid {}", RoleName(id), *pid);
  }
  return kExitOk;
}

std::vector<std::string> Supervisor::RuntimeArgs(Role id) const {
  // Tables are the maintenance (or solo) runtime's (DESIGN §9): only it gets the data directory,
  // and only when there is one (an older runtime does not know the flag).
  if (config_.data_dir.empty() || id == Role::kInteractive) return {};
  return {"--data-dir", config_.data_dir, "--max-table-backlog-bytes",
          std::to_string(config_.guards.max_table_backlog_bytes)};
}

void Supervisor::CleanStaleRuntimeDirs() {
  // Directories of earlier supervisors of this replica that were SIGKILLed (no cleanup ran).
  const std::string prefix = "tandem." + config_.replica_id + ".";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(config_.runtime_dir, ec)) {
    const std::string name = entry.path().filename();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::filesystem::remove_all(entry.path(), ec);
    spdlog::info("removed stale runtime directory {}", entry.path().string());
  }
}

}  // namespace tandem::supervisor
