#include "supervisor/supervisor.h"

#include <dirent.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <zmq_addon.hpp>

#include "base/check.h"
#include "base/global_id.h"
#include "ipc/channel.h"
#include "shm/layout.h"
#include "shm/reader.h"
#include "supervisor/metric_names.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

namespace {

// The controller socket's own limit: messages above it are dropped by ZeroMQ, which disconnects
// the peer. Messages between ipc::kMaxMessageBytes and this are read and answered with a
// CommandError (DecodeCommand's "oversized"), the session kept (issue 12).
constexpr std::int64_t kTransportMessageBytes =
    2 * static_cast<std::int64_t>(ipc::kMaxMessageBytes);

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace

Supervisor::Supervisor(SupervisorConfig config, int signal_fd)
    : config_(std::move(config)), signal_fd_(signal_fd), ctx_(1) {
  validator_.set_index_capacity(config_.slots_per_row);
  validator_.set_segment_bytes(config_.shm_size);
  DeclareMetrics();
}

Supervisor::~Supervisor() = default;

void Supervisor::DeclareMetrics() {
  using T = Metrics::Type;
  metrics_.Declare(kCommands, T::kCounter,
                   "controller commands by type and result (forwarded or refused)");
  metrics_.Declare(kRefused, T::kCounter, "refused controller commands by reason");
  metrics_.Declare(kMalformed, T::kCounter, "undecodable controller messages by reason");
  metrics_.Declare(kResponses, T::kCounter, "responses forwarded to the controller, by type");
  metrics_.Declare(kDropped, T::kCounter, "responses not forwarded, by reason");
  metrics_.Declare(kPeekLatency, T::kHistogram,
                   "time from forwarding a peek to its response, in seconds",
                   {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1, 2.5, 5, 10});
  metrics_.Declare(kRuntimeUp, T::kGauge,
                   "1 while the runtime process runs and has reported ready");
  metrics_.Declare(kSegmentBytes, T::kGauge, "shared-memory segment bytes (total, used, free)");
  metrics_.Declare(kStalled, T::kGauge,
                   "index parts (one per worker) whose updates wait for room in the segment");
  metrics_.Declare(kLoopTurns, T::kCounter, "turns of the supervisor loop");
  metrics_.Declare(kControllerEvents, T::kCounter,
                   "sessions: hello, superseded, observer_hello, goodbye, disconnected");
  metrics_.Declare(kObservers, T::kGauge, "observer sessions open now");
  metrics_.Set(kObservers, {}, 0);
  metrics_.Declare(kReady, T::kGauge, "1 when /readyz answers 200");
  metrics_.Declare(kReconciled, T::kCounter,
                   "dataflows after a reconnect, by runtime and outcome (kept, dropped, built)");
  metrics_.Declare(kRuntimeStalled, T::kGauge,
                   "1 while the runtime has made no progress for --runtime-stall-timeout");
  metrics_.Declare(kRuntimeStalls, T::kCounter,
                   "times the runtime was found stalled (no progress for --runtime-stall-timeout)");
  metrics_.Declare(kPeeksInFlight, T::kGauge, "peeks forwarded and not yet answered");
  metrics_.Declare(kHttpConnections, T::kCounter,
                   "internal HTTP connections by outcome (accepted; evicted, the oldest one closed "
                   "beyond --http-max-connections; timed_out; bad; answered)");
  metrics_.Declare(kHttpOpen, T::kGauge, "internal HTTP connections open now");
}

int Supervisor::Run() {
  started_at_ = Clock::now();
  spdlog::info("starting: {}", DescribeConfiguration(config_));
  if (int code = Start(); code != kExitOk) return code;
  return Loop();
}

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
    router_->set(zmq::sockopt::sndhwm, 100000);
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
  return kExitOk;
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
      config_.two_runtime(), [this](Role id, const std::string& b) { SendToRuntime(id, b); });
  return kExitOk;
}

// fork+exec of each runtime into the process group (DESIGN §5), recorded in the segment header.
int Supervisor::SpawnRuntimes() {
  for (auto& [id, r] : runtimes_) {
    const std::vector<std::string> argv = {
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
        config_.params.Get(kMaxResultSize)};
    auto pid = children_.Spawn(RoleName(id), argv);
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

int Supervisor::Loop() {
  for (;;) {
    std::vector<zmq::pollitem_t> items = {
        {router_->handle(), 0, ZMQ_POLLIN, 0},
        {monitor_->handle(), 0, ZMQ_POLLIN, 0},
        {nullptr, signal_fd_, ZMQ_POLLIN, 0},
    };
    std::vector<Runtime*> order;
    for (auto& [id, r] : runtimes_) {
      items.push_back({r.channel->handle(), 0, ZMQ_POLLIN, 0});
      order.push_back(&r);
    }
    const std::size_t zap_at = items.size();
    if (auth_) items.push_back(auth_->PollItem());
    const std::size_t http_at = items.size();
    http_->AppendPollItems(&items);
    try {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
    metrics_.Inc(kLoopTurns);
    if (items[2].revents & ZMQ_POLLIN) {
      if (auto code = OnSignals()) return *code;
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (items[3 + i].revents & ZMQ_POLLIN) OnRuntimeReadable(*order[i]);
    }
    if (auth_ && (items[zap_at].revents & ZMQ_POLLIN)) auth_->OnReadable();
    if (items[0].revents & ZMQ_POLLIN) OnControllerReadable();
    if (items[1].revents & ZMQ_POLLIN) OnMonitorReadable();
    http_->OnPoll(items.data() + http_at, items.size() - http_at);
    const auto now = Clock::now();
    http_->Tick(now);
    if (auto code = WatchRuntimes(now)) return *code;

    // Only before the replica was first ready: a stall later is the stall watch's.
    if (!logged_ready_ && !Ready() &&
        Clock::now() - started_at_ > std::chrono::duration<double>(config_.startup_timeout_s)) {
      for (auto& [id, r] : runtimes_) {
        if (!r.ready) {
          spdlog::error("the {} runtime (pid {}) did not report ready within {} s", RoleName(id),
                        r.pid, config_.startup_timeout_s);
        }
      }
      children_.SignalAll(SIGKILL);
      children_.ReapAll(2.0, nullptr);
      Cleanup(false);
      return kExitUnavailable;
    }
    if (Ready() && !logged_ready_) {
      logged_ready_ = true;
      spdlog::info("ready: controller endpoint {}, internal HTTP {}",
                   config_.controller_listen_addr, config_.internal_http_listen_addr);
    }
  }
}

std::optional<int> Supervisor::OnSignals() {
  signalfd_siginfo info{};
  while (read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (info.ssi_signo == SIGCHLD) {
      if (auto exit = children_.ReapOne()) {
        // Shared fate: no runtime exits unasked, whatever its status.
        return SharedFate(*exit, exit->signaled ? 128 + exit->code : kExitChildExited);
      }
      continue;
    }
    if (info.ssi_signo == SIGHUP) {  // reload, as daemons do
      if (auth_) {
        auth_->Reload();
      } else {
        spdlog::info("SIGHUP: nothing to reload (no --curve-authorized-keys)");
      }
      continue;
    }
    return Shutdown(std::string("received ") + strsignal(static_cast<int>(info.ssi_signo)));
  }
  // SIGCHLD coalesces: reap whatever else exited.
  if (auto exit = children_.ReapOne()) {
    return SharedFate(*exit, exit->signaled ? 128 + exit->code : kExitChildExited);
  }
  return std::nullopt;
}

int Supervisor::SharedFate(const ChildExit& first, int exit_code) {
  spdlog::critical("the {} runtime (pid {}) {}; taking the replica down (shared fate)", first.role,
                   first.pid, first.Describe());
  children_.SignalAll(SIGKILL);
  std::vector<ChildExit> others;
  if (!children_.ReapAll(5.0, &others)) {
    spdlog::error("some runtimes did not exit after SIGKILL");
  }
  for (const auto& e : others)
    spdlog::info("the {} runtime (pid {}) {}", e.role, e.pid, e.Describe());
  Cleanup(config_.keep_segment_on_crash);
  if (config_.keep_segment_on_crash) {
    spdlog::warn("kept segment /dev/shm/{} for inspection (tandem-shm info {})", config_.shm_name,
                 config_.shm_name);
  }
  spdlog::info("exiting with {}", exit_code);
  return exit_code;
}

int Supervisor::Shutdown(const std::string& why) {
  spdlog::info("{}: stopping the runtimes (grace period {} s)", why, config_.grace_period_s);
  for (auto& [id, r] : runtimes_) {
    segment_->SetRuntime(id, r.pid, shm::RuntimeState::kStopping);
  }
  children_.SignalAll(SIGTERM);
  std::vector<ChildExit> exited;
  if (!children_.ReapAll(config_.grace_period_s, &exited)) {
    for (const auto& [pid, role] : children_.live()) {
      spdlog::warn("the {} runtime (pid {}) outlived the grace period; killing it", role, pid);
    }
    children_.SignalAll(SIGKILL);
    children_.ReapAll(5.0, &exited);
  }
  for (const auto& e : exited)
    spdlog::info("the {} runtime (pid {}) {}", e.role, e.pid, e.Describe());
  Cleanup(false);
  spdlog::info("shut down cleanly");
  return kExitOk;
}

void Supervisor::Cleanup(bool keep_segment) {
  for (auto& [id, r] : runtimes_) r.channel.reset();
  runtimes_.clear();
  if (segment_ && !keep_segment) {
    (void)shm::Segment::Remove(config_.shm_name);
  }
  segment_.reset();  // releases the creator's lock: a kept segment reads as stale
  if (!runtime_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(runtime_dir_, ec);
    if (ec) spdlog::warn("could not remove {}: {}", runtime_dir_, ec.message());
    runtime_dir_.clear();
  }
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

bool Supervisor::Ready() const {
  if (!segment_ || !bound_ || runtimes_.empty()) return false;
  for (const auto& [id, r] : runtimes_) {
    if (!r.ready || r.stalled) return false;
  }
  return true;
}

std::optional<int> Supervisor::WatchRuntimes(Clock::time_point now) {
  if (!segment_) return std::nullopt;
  const auto& g = config_.guards;
  for (auto& [id, r] : runtimes_) {
    if (!r.ready) continue;  // before it: --startup-timeout
    const std::uint64_t progress =
        segment_->header().runtimes[shm::RuntimeEntryOf(id)].progress.load(
            std::memory_order_relaxed);
    if (progress != r.progress || r.progress_at == Clock::time_point{}) {
      r.progress = progress;
      r.progress_at = now;
      if (r.stalled) {
        r.stalled = false;
        metrics_.Set(kRuntimeStalled, {{"role", RoleName(id)}}, 0);
        spdlog::info("the {} runtime (pid {}) makes progress again; ready", RoleName(id), r.pid);
      }
      continue;
    }
    const double idle = std::chrono::duration<double>(now - r.progress_at).count();
    if (idle >= g.runtime_stall_kill_s) return StallFate(r, idle);
    if (idle >= g.runtime_stall_timeout_s && !r.stalled) {
      r.stalled = true;
      metrics_.Set(kRuntimeStalled, {{"role", RoleName(id)}}, 1);
      metrics_.Inc(kRuntimeStalls, {{"role", RoleName(id)}});
      spdlog::warn(
          "the {} runtime (pid {}) has made no progress for {} s (stopped or wedged); not ready. "
          "It is taken down after {} s (--runtime-stall-kill)",
          RoleName(id), r.pid, Seconds(idle), Seconds(g.runtime_stall_kill_s));
    }
  }
  return std::nullopt;
}

int Supervisor::StallFate(const Runtime& stalled, double seconds) {
  spdlog::critical(
      "the {} runtime (pid {}) has made no progress for {} s (--runtime-stall-kill {} s); taking "
      "the replica down (shared fate)",
      RoleName(stalled.id), stalled.pid, Seconds(seconds),
      Seconds(config_.guards.runtime_stall_kill_s));
  children_.SignalAll(SIGKILL);  // SIGKILL ends a stopped process too
  std::vector<ChildExit> exited;
  if (!children_.ReapAll(5.0, &exited)) spdlog::error("some runtimes did not exit after SIGKILL");
  for (const auto& e : exited)
    spdlog::info("the {} runtime (pid {}) {}", e.role, e.pid, e.Describe());
  Cleanup(config_.keep_segment_on_crash);
  spdlog::info("exiting with {}", kExitRuntimeStalled);
  return kExitRuntimeStalled;
}

bool Supervisor::AdmitPeekCommand(const std::string& peer, const ipc::pb::Command& cmd,
                                  SessionId session) {
  if (cmd.has_cancel_peek()) {
    // Nothing waits under that uuid (answered, or never sent): nothing to cancel, and not
    // forwarding it keeps a flood of cancels from queueing behind a busy runtime.
    if (mux_->Waiting(session, cmd.cancel_peek().uuid())) return true;
    metrics_.Inc(kCommands, {{"command", "CancelPeek"}, {"result", "not_waiting"}});
    return false;
  }
  if (!cmd.has_peek()) return true;
  const auto& g = config_.guards;
  if (mux_->outstanding_peeks(session) >= g.max_peeks_per_session) {
    Refuse(peer, "Peek", "too_many_peeks",
           ipc::Describe(cmd) + ": this session has " +
               std::to_string(mux_->outstanding_peeks(session)) +
               " peeks waiting for their answers, the limit (--max-peeks-per-session " +
               std::to_string(g.max_peeks_per_session) + "); send it again after some answers");
    return false;
  }
  if (mux_->outstanding_peeks() >= g.max_peeks_in_flight) {
    Refuse(peer, "Peek", "too_many_peeks",
           ipc::Describe(cmd) + ": the replica has " + std::to_string(mux_->outstanding_peeks()) +
               " peeks waiting for their answers, the limit (--max-peeks-in-flight " +
               std::to_string(g.max_peeks_in_flight) + "); send it again after some answers");
    return false;
  }
  return true;
}

Supervisor::Runtime* Supervisor::FindRuntime(Role id) {
  auto it = runtimes_.find(id);
  return it == runtimes_.end() ? nullptr : &it->second;
}

void Supervisor::SendToRuntime(Role id, const std::string& encoded) {
  Runtime* r = FindRuntime(id);
  TANDEM_CHECK(r != nullptr, "the multiplexer routed to a runtime this mode does not have");
  // HWM 0 on runtime channels: never drops; the runtime reads in order.
  r->channel->send(zmq::buffer(encoded), zmq::send_flags::none);
}

void Supervisor::OnRuntimeReadable(Runtime& r) {
  for (;;) {
    zmq::message_t msg;
    if (!r.channel->recv(msg, zmq::recv_flags::dontwait)) return;
    auto decoded = ipc::DecodeResponse(msg.to_string_view());
    // Runtimes are ours: an undecodable message is our bug, not bad input.
    TANDEM_CHECK(decoded.ok(), "a runtime sent an undecodable response");
    ipc::pb::Response& response = decoded.message;
    if (response.has_status() && response.status().has_runtime_ready()) {
      r.ready = true;
      metrics_.Set(kRuntimeStalled, {{"role", RoleName(r.id)}}, 0);  // watched from now on
      spdlog::info("the {} runtime (pid {}) is ready with {} workers", RoleName(r.id),
                   response.status().runtime_ready().pid(),
                   response.status().runtime_ready().workers());
      continue;
    }
    if (response.has_status() && response.status().has_reconciled()) {
      const auto& rec = response.status().reconciled();
      const std::string role = RoleName(r.id);
      metrics_.Inc(kReconciled, {{"role", role}, {"outcome", "kept"}}, rec.kept());
      metrics_.Inc(kReconciled, {{"role", role}, {"outcome", "dropped"}}, rec.dropped());
      metrics_.Inc(kReconciled, {{"role", role}, {"outcome", "built"}}, rec.built());
      spdlog::info("the {} runtime reconciled: kept {}, dropped {}, built {}", role, rec.kept(),
                   rec.dropped(), rec.built());
      // Forwarded once, from the runtime that renders dataflows.
      if (r.id == Role::kInteractive) continue;
    }
    const auto verdict = mux_->OnResponse(r.id, &response, Clock::now());
    if (verdict.peek_latency) {
      metrics_.Observe(kPeekLatency, {},
                       std::chrono::duration<double>(*verdict.peek_latency).count());
    }
    if (!verdict.forward) {
      metrics_.Inc(kDropped, {{"reason", verdict.drop_reason}});
      continue;
    }
    if (response.has_frontiers()) {
      OnFrontiers(response);
      continue;
    }
    if (verdict.to != kControllerSession) {
      const std::string* observer = sessions_.ObserverPeer(verdict.to);
      // ForgetSession ends a session in both places at once.
      TANDEM_CHECK(observer != nullptr, "the multiplexer tracks peeks of live sessions only");
      SendToPeer(*observer, response);
      continue;
    }
    if (!sessions_.controller()) {
      metrics_.Inc(kDropped, {{"reason", "no_controller"}});
      continue;
    }
    SendToPeer(*sessions_.controller(), response);
  }
}

void Supervisor::OnFrontiers(const ipc::pb::Response& response) {
  const std::string& id = response.frontiers().id();
  frontiers_.Record(response.frontiers(),
                    validator_.collections().count(id) > 0 ||
                        (last_complete_ && last_complete_->collections().count(id) > 0));
  if (!sessions_.controller() && sessions_.observers().empty()) {
    metrics_.Inc(kDropped, {{"reason", "no_controller"}});
    return;
  }
  const std::string bytes = ipc::Encode(response);
  if (sessions_.controller()) SendEncodedToPeer(*sessions_.controller(), bytes, "Frontiers");
  for (const auto& [peer, observer] : sessions_.observers()) {
    SendEncodedToPeer(peer, bytes, "Frontiers");
  }
}

HttpResponse Supervisor::ServeHttp(const std::string& path) {
  if (path == "/livez") return {200, "text/plain", "ok\n"};
  if (path == "/readyz") {
    if (Ready()) return {200, "text/plain", "ready\n"};
    std::string why = "not ready:";
    if (!segment_) why += " no segment;";
    if (!bound_) why += " endpoint not bound;";
    for (const auto& [id, r] : runtimes_) {
      if (!r.ready) why += std::string(" ") + RoleName(id) + " runtime not ready;";
      if (r.ready && r.stalled) {
        why += std::string(" ") + RoleName(id) + " runtime (pid " + std::to_string(r.pid) +
               ") stalled: no progress for " +
               Seconds(std::chrono::duration<double>(Clock::now() - r.progress_at).count()) + " s;";
      }
    }
    return {503, "text/plain", why + "\n"};
  }
  if (path == "/metrics") {
    for (const auto& [id, r] : runtimes_) {
      metrics_.Set(kRuntimeUp, {{"role", RoleName(id)}},
                   r.ready && children_.live().count(r.pid) ? 1 : 0);
    }
    if (segment_) {
      metrics_.Set(kSegmentBytes, {{"kind", "total"}}, static_cast<double>(segment_->size_bytes()));
      metrics_.Set(kSegmentBytes, {{"kind", "used"}}, static_cast<double>(segment_->used_bytes()));
      metrics_.Set(kSegmentBytes, {{"kind", "free"}}, static_cast<double>(segment_->free_bytes()));
      const auto slots = shm::Inspector(segment_.get()).Slots();
      metrics_.Set(kStalled, {},
                   static_cast<double>(std::count_if(slots.begin(), slots.end(), [](const auto& s) {
                     return (s.flags & shm::kSlotStalled) != 0;
                   })));
    }
    metrics_.Set(kReady, {}, Ready() ? 1 : 0);
    metrics_.Set(kPeeksInFlight, {}, static_cast<double>(mux_ ? mux_->outstanding_peeks() : 0));
    metrics_.Set(kHttpOpen, {}, static_cast<double>(http_->open_connections()));
    const HttpServer::Counts& hc = http_->counts();
    for (const auto& [outcome, n] : {std::pair<const char*, std::uint64_t>{"accepted", hc.accepted},
                                     {"evicted", hc.evicted},
                                     {"timed_out", hc.timed_out},
                                     {"bad", hc.bad},
                                     {"answered", hc.answered}}) {
      metrics_.Inc(
          kHttpConnections, {{"outcome", outcome}},
          static_cast<double>(n) - metrics_.Value(kHttpConnections, {{"outcome", outcome}}));
    }
    return {200, "text/plain; version=0.0.4; charset=utf-8", metrics_.Render()};
  }
  return {404, "text/plain", "not found: try /livez, /readyz or /metrics\n"};
}

}  // namespace tandem::supervisor
