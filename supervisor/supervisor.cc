// The supervisor's loop (DESIGN §1, §3): what it polls, signals, the runtimes' responses passed
// on (link → multiplexer → controller endpoint, by return values) and the reader-table sweep.
// Starting up is startup.cc; shared fate, stalls and shutdown are fate.cc; the internal HTTP
// endpoint and /metrics are supervisor_http.cc.
#include "supervisor/supervisor.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstring>

#include "supervisor/metric_names.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

namespace {

// One link per runtime of the mode.
std::map<Role, RuntimeLink> MakeRuntimeLinks(bool two_runtime, Metrics& metrics,
                                             QuietSockets& quiet) {
  std::map<Role, RuntimeLink> links;
  const std::vector<Role> roles = two_runtime
                                      ? std::vector<Role>{Role::kMaintenance, Role::kInteractive}
                                      : std::vector<Role>{Role::kSolo};
  for (Role role : roles) links.try_emplace(role, role, metrics, quiet);
  return links;
}

Multiplexer MultiplexerOver(std::map<Role, RuntimeLink>& links) {
  if (auto solo = links.find(Role::kSolo); solo != links.end()) return Multiplexer(solo->second);
  return Multiplexer(links.at(Role::kMaintenance), links.at(Role::kInteractive));
}

}  // namespace

Supervisor::Supervisor(SupervisorConfig config, int signal_fd, SystemdNotify notify)
    : config_(std::move(config)),
      signal_fd_(signal_fd),
      ctx_(1),
      links_(MakeRuntimeLinks(config_.two_runtime(), metrics_, quiet_)),
      mux_(MultiplexerOver(links_)),
      endpoint_(config_, ctx_, metrics_, mux_, quiet_),
      notify_(std::move(notify)) {
  DeclareMetrics();
}

Supervisor::~Supervisor() = default;

int Supervisor::Run() {
  started_at_ = Clock::now();
  spdlog::info("starting: {}", DescribeConfiguration(config_));
  if (int code = Start(); code != kExitOk) return code;
  return Loop();
}

int Supervisor::Loop() {
  std::vector<zmq::pollitem_t> items;
  std::vector<RuntimeLink*> order;
  for (;;) {
    items.clear();
    order.clear();
    endpoint_.AppendPollItems(&items);
    const std::size_t signal_at = items.size();
    items.push_back({nullptr, signal_fd_, ZMQ_POLLIN, 0});
    for (auto& [id, link] : links_) {
      items.push_back({link.channel_handle(), 0, ZMQ_POLLIN, 0});
      order.push_back(&link);
    }
    // The peek answer ring (DESIGN §14) of the runtime that serves peeks: its eventfd is written
    // only while the loop says it sleeps, and an answer that came before that is taken now.
    RuntimeLink* const peeks = PeekServingRuntime();
    const std::size_t answers_at = items.size();
    bool answers_waiting = false;
    if (peeks) {
      items.push_back({nullptr, peeks->peek_path()->answers().wake_fd(), ZMQ_POLLIN, 0});
      answers_waiting = !peeks->peek_path()->answers().PrepareToSleep();
    }
    const std::size_t http_at = items.size();
    http_->AppendPollItems(&items);
    quiet_.ForgetPeriodically(Clock::now());
    PollItems(items, answers_waiting ? 0 : 100, quiet_);
    metrics_.Inc(kLoopTurns);
    if (peeks) {
      peeks->peek_path()->answers().Awake((items[answers_at].revents & ZMQ_POLLIN) != 0);
      DrainPeekAnswers(*peeks);
    }
    if (items[signal_at].revents & ZMQ_POLLIN) {
      if (auto code = OnSignals()) return *code;
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (items[signal_at + 1 + i].revents & ZMQ_POLLIN) OnRuntimeReadable(*order[i]);
    }
    endpoint_.OnPoll(items.data());  // ZAP, then the commands, then the monitor
    http_->OnPoll(items.data() + http_at, items.size() - http_at);
    endpoint_.FlushSubscribeEnds();  // TOO_SLOW ends wait for room in their session's pipe
    const auto now = Clock::now();
    http_->Tick(now);
    SweepReaders(now);
    if (auto code = WatchRuntimes(now)) return *code;

    // Only before the replica was first ready: a stall later is the stall watch's.
    if (!logged_ready_ && !Ready() &&
        Clock::now() - started_at_ > std::chrono::duration<double>(config_.startup_timeout_s)) {
      for (const auto& [id, link] : links_) {
        if (!link.ready()) {
          spdlog::error("the {} runtime (pid {}) did not report ready within {} s", RoleName(id),
                        link.pid(), config_.startup_timeout_s);
        }
      }
      children_.SignalAll(SIGKILL);
      children_.ReapAll(2.0, nullptr);
      Cleanup(false);
      return kExitUnavailable;
    }
    if (Ready() && !logged_ready_) {
      logged_ready_ = true;
      spdlog::info("ready: controller endpoint {}, internal HTTP {}", endpoint_.bound_address(),
                   bound_http_);
      notify_.Ready(ReadinessStatus());  // when /readyz first answers 200
    } else if (logged_ready_ && notify_.enabled()) {
      if (!notify_.ready_sent()) {
        if (Ready()) notify_.Ready(ReadinessStatus());  // the first try was not sent
      } else {
        notify_.SetStatus(ReadinessStatus());  // sent only when it changed (a stall, its end)
      }
    }
    notify_.Tick(now);  // WATCHDOG=1: this loop turns
  }
}

void Supervisor::DrainPeekAnswers(RuntimeLink& link) {
  // At most so many per loop turn, like the channel (OnRuntimeReadable). Each record leaves the
  // ring when its message goes (done with its bytes: forwarded or copied).
  for (int n = 0; n < 1024; ++n) {
    std::optional<RuntimeMessage> message = link.ReceiveAnswer();
    if (!message) return;
    PassOn(link, *message);
  }
}

void Supervisor::OnRuntimeReadable(RuntimeLink& link) {
  // At most so many per loop turn: a runtime's stream of subscribe batches never keeps the
  // sessions' commands (a CancelSubscribe), the queued Ends or the runtime watch waiting long.
  for (int n = 0; n < 1024; ++n) {
    std::optional<RuntimeMessage> message = link.Receive();
    if (!message) return;
    PassOn(link, *message);
  }
}

void Supervisor::PassOn(const RuntimeLink& link, RuntimeMessage& message) {
  if (!message.forward()) return;  // the link's alone (RuntimeMessage::forward)
  const Multiplexer::Verdict verdict =
      mux_.OnResponse(link.role(), &message.response(), Clock::now());
  endpoint_.Answer(verdict, message.response(), message.bytes());
}

RuntimeLink* Supervisor::PeekServingRuntime() {
  for (auto& [id, link] : links_) {
    if (link.peek_path() != nullptr) return &link;
  }
  return nullptr;
}

void Supervisor::SweepReaders(Clock::time_point now) {
  // A dead reader's announcement keeps the batches it could see; a sweep this often bounds how
  // long. Each sweep is one fcntl per attached reader.
  constexpr auto kReaderSweepInterval = std::chrono::milliseconds(200);
  if (!reader_table_ || now - last_reader_sweep_ < kReaderSweepInterval) return;
  last_reader_sweep_ = now;
  const shm::SweepResult swept = reader_table_->Sweep();
  metrics_.Set(kLocalReaders, {}, swept.live);
  if (swept.header_repaired) {
    // Only a process allowed to write the table (the replica's user, the --reader-group) can
    // have done it; announcements it overwrote are lost, so a reader may have read a batch freed
    // under it.
    metrics_.Inc(kReaderTableRepairs, {}, 1);
    spdlog::warn(
        "the reader table's header was overwritten (by a process of the replica's user "
        "or of the --reader-group): put back; local readers' announcements may have "
        "been lost");
  }
  if (swept.cleared > 0) {
    metrics_.Inc(kLocalReadersCleared, {}, swept.cleared);
    spdlog::info("cleared the reader-table entries of {} local reader(s) that exited",
                 swept.cleared);
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
      endpoint_.ReloadKeys();
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

}  // namespace tandem::supervisor
