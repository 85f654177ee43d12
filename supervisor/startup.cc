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

#include "base/check.h"
#include "ipc/channel.h"
#include "shm/layout.h"
#include "supervisor/metric_names.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

namespace {

// The controller socket's own limit: messages above it are dropped by ZeroMQ, which disconnects
// the peer. Messages between ipc::kMaxMessageBytes and this are read and answered with a
// CommandError (DecodeCommand's "oversized"), the session kept.
constexpr std::int64_t kTransportMessageBytes =
    2 * static_cast<std::int64_t>(ipc::kMaxMessageBytes);

}  // namespace

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

// The controller endpoint (ROUTER, heartbeats, a disconnect monitor) and the internal HTTP one.
int Supervisor::BindEndpoints() {
  try {
    router_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
    router_->set(zmq::sockopt::maxmsgsize, kTransportMessageBytes);
    router_->set(zmq::sockopt::router_mandatory, 1);
    const int ivl = static_cast<int>(config_.params.GetInt(kControllerHeartbeatIntervalMs));
    const int timeout = static_cast<int>(config_.params.GetInt(kControllerHeartbeatTimeoutMs));
    router_->set(zmq::sockopt::heartbeat_ivl, ivl);
    router_->set(zmq::sockopt::heartbeat_timeout, timeout);
    router_->set(zmq::sockopt::heartbeat_ttl, timeout);
    // Per peer: a controller or observer that stops reading holds at most this many messages
    // here; beyond it, sends to it fail (router_mandatory) and its subscribes end TOO_SLOW.
    router_->set(zmq::sockopt::sndhwm, static_cast<int>(config_.params.GetInt(kControllerSendHwm)));
    if (config_.curve()) {
      auto auth = ControllerAuth::Create(config_, ctx_, metrics_);
      if (!auth.ok()) {
        spdlog::critical("impossible configuration: {}", auth.status().message());
        Cleanup(false);
        return auth.status().code() == StatusCode::kUnavailable ? kExitUnavailable : kExitConfig;
      }
      auth_ = std::move(auth).value();
      auth_->ConfigureRouter(*router_);
    }
    zmq_socket_monitor(router_->handle(), "inproc://controller-monitor",
                       ZMQ_EVENT_DISCONNECTED | (auth_ ? ControllerAuth::kMonitorEvents : 0));
    monitor_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::pair);
    monitor_->connect("inproc://controller-monitor");
    router_->bind(config_.controller_listen_addr);
  } catch (const zmq::error_t& e) {
    spdlog::error("could not bind the controller endpoint {}: {}", config_.controller_listen_addr,
                  e.what());
    Cleanup(false);
    return kExitUnavailable;
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
  bound_controller_ = router_->get(zmq::sockopt::last_endpoint);
  bound_http_ = http_->BoundAddress();
  spdlog::info("bound: controller endpoint {}, internal HTTP {}", bound_controller_, bound_http_);
  if (!config_.endpoints_file.empty()) {
    if (Status s = WriteEndpointsFile(bound_controller_, bound_http_); !s.ok()) {
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

int Supervisor::BindRuntimeChannels() {
  std::vector<Role> ids;
  if (config_.two_runtime()) {
    ids = {Role::kMaintenance, Role::kInteractive};
  } else {
    ids = {Role::kSolo};
  }
  for (Role id : ids) {
    Runtime r;
    r.id = id;
    r.endpoint = ipc::RuntimeChannelEndpoint(runtime_dir_, RoleName(id));
    try {
      r.channel = std::make_unique<zmq::socket_t>(ipc::BindRuntimeChannel(ctx_, r.endpoint));
    } catch (const zmq::error_t& e) {
      spdlog::error("could not bind runtime channel {}: {}", r.endpoint, e.what());
      Cleanup(false);
      return kExitUnavailable;
    }
    runtimes_.emplace(id, std::move(r));
  }
  mux_ = std::make_unique<Multiplexer>(
      config_.two_runtime(),
      [this](Role id, const std::string& b, bool peek) { SendToRuntime(id, b, peek); });
  return kExitOk;
}

// fork+exec of each runtime into the process group (DESIGN §5), recorded in the segment header.
int Supervisor::SpawnRuntimes() {
  for (auto& [id, r] : runtimes_) {
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
        r.endpoint,
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
      r.peek_path = std::make_unique<PeekPath>(*segment_);
      argv.push_back("--peek-ring-fds");
      argv.push_back(r.peek_path->FdsArgument());
      inherit = r.peek_path->InheritedFds();
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
    r.pid = *pid;
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
