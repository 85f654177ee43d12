// The supervisor's loop (DESIGN §1, §3): what it polls, signals, the runtimes' channels, peek
// admission, frontiers and the internal HTTP endpoint. Starting up is startup.cc; shared fate,
// stalls and shutdown are fate.cc; the controller endpoint is controller_endpoint.cc.
#include "supervisor/supervisor.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
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
// At most this many tandem_index_hold_gap series (the largest gaps): bounded however many
// indexes live (--slots-per-row allows 256 by default).
constexpr std::size_t kHoldGapSeries = 32;
// At most this many tandem_subscribe_lag series (the largest lags).
constexpr std::size_t kSubscribeLagSeries = 20;

// zmq_poll's answer for `items` (ZeroMQ sockets and descriptors), with fewer system calls. A
// system call costs ~1 us on the 2-core VM of BENCHMARKS.md, and zmq_poll makes many each turn: a
// first pass (a poll with timeout 0, then ZMQ_EVENTS of every socket — a getpid and a poll inside
// libzmq each), then, when nothing was ready, the sleeping poll and the same ZMQ_EVENTS pass again.
// Here ZMQ_EVENTS is asked once, before sleeping, and only of the sockets not in `quiet` (it
// processes the socket's pending commands, so its ZMQ_FD then signals anything that arrives later:
// the socket joins `quiet`). When nothing is ready, one poll sleeps on the descriptors and the
// sockets' ZMQ_FDs. A socket whose ZMQ_FD fired is reported readable (its handler reads with
// dontwait, so a false alarm costs one empty read) and leaves `quiet`. (Nothing touches a socket
// while the loop sleeps, so one whose ZMQ_FD stayed quiet has nothing new.) A sleep that times out
// with nothing at all empties `quiet`: every socket is asked again on the next turn.
// EINTR: nothing is reported.
void PollItems(std::vector<zmq::pollitem_t>& items, int timeout_ms,
               std::unordered_set<void*>& quiet) {
  thread_local std::vector<pollfd> fds;
  fds.assign(items.size(), pollfd{});
  bool ready = false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    zmq::pollitem_t& item = items[i];
    item.revents = 0;
    if (item.socket == nullptr) {
      fds[i] = {item.fd,
                static_cast<short>(((item.events & ZMQ_POLLIN) ? POLLIN : 0) |
                                   ((item.events & ZMQ_POLLOUT) ? POLLOUT : 0)),
                0};
      continue;
    }
    // A socket's ZMQ_FD says only "look"; a socket polled for POLLOUT could stay "ready" without
    // ever leaving `quiet` (every poll would return at once). The loop polls sockets for input.
    TANDEM_CHECK(item.events == ZMQ_POLLIN,
                 "the supervisor polls its ZeroMQ sockets for input only");
    int fd = -1;
    std::size_t size = sizeof fd;
    TANDEM_CHECK(zmq_getsockopt(item.socket, ZMQ_FD, &fd, &size) == 0, "ZMQ_FD of a socket");
    fds[i] = {fd, POLLIN, 0};
    if (quiet.count(item.socket)) continue;
    std::uint32_t events = 0;
    size = sizeof events;
    TANDEM_CHECK(zmq_getsockopt(item.socket, ZMQ_EVENTS, &events, &size) == 0,
                 "ZMQ_EVENTS of a socket");
    item.revents = static_cast<short>(events & static_cast<std::uint32_t>(item.events));
    if (item.revents != 0) {
      ready = true;
    } else {
      quiet.insert(item.socket);
    }
  }
  const int rc = poll(fds.data(), fds.size(), ready ? 0 : timeout_ms);
  if (rc < 0) {
    TANDEM_CHECK(errno == EINTR, "poll in the supervisor's loop");
    for (auto& item : items) item.revents = 0;
    return;
  }
  if (rc == 0 && !ready) {
    quiet.clear();
    return;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    zmq::pollitem_t& item = items[i];
    const short r = fds[i].revents;
    if (item.socket != nullptr) {
      // Found ready by ZMQ_EVENTS, or its ZMQ_FD fired: "look".
      if (r != 0) item.revents = static_cast<short>(item.events & ZMQ_POLLIN);
      if (item.revents != 0) quiet.erase(item.socket);
      continue;
    }
    if (r & POLLIN) item.revents |= ZMQ_POLLIN;
    if (r & POLLOUT) item.revents |= ZMQ_POLLOUT;
    if (r & POLLPRI) item.revents |= ZMQ_POLLPRI;
    if (r & ~(POLLIN | POLLOUT | POLLPRI)) item.revents |= ZMQ_POLLERR;
  }
}
}  // namespace

Supervisor::Supervisor(SupervisorConfig config, int signal_fd, SystemdNotify notify)
    : config_(std::move(config)), signal_fd_(signal_fd), ctx_(1), notify_(std::move(notify)) {
  validator_.set_index_capacity(config_.slots_per_row);
  validator_.set_segment_bytes(config_.shm_size);
  validator_.set_data_dir(!config_.data_dir.empty());
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
  metrics_.Declare(kLocalReaders, T::kGauge,
                   "local readers (LocalReader) attached now, by their reader-table entries");
  metrics_.Set(kLocalReaders, {}, 0);
  metrics_.Declare(kLocalReadersCleared, T::kCounter,
                   "reader-table entries of local readers that died, cleared by the supervisor");
  metrics_.Declare(kReaderTableRepairs, T::kCounter,
                   "reader-table headers put back after a process that may write the table (the "
                   "replica's user, the --reader-group) overwrote them");
  metrics_.Set(kObservers, {}, 0);
  metrics_.Declare(kPeekRingRecords, T::kCounter,
                   "records offered to the peek fast path's rings (DESIGN §14), by ring (requests: "
                   "Peek and CancelPeek to the runtime; answers: PeekResponses back) and result "
                   "(pushed; full: no room then, sent on the runtime channel instead; too_large: "
                   "over a quarter of the ring, sent on the channel)");
  std::vector<double> step_buckets;
  for (std::size_t i = 0; i + 1 < shm::kStepBuckets; ++i) {
    step_buckets.push_back(std::ldexp(1.0, shm::kStepBucketMinLog2 + static_cast<int>(i)));
  }
  metrics_.Declare(kStepSeconds, T::kHistogram,
                   "wall time of one lockstep step of every dataflow (exchange barriers "
                   "included), by role (maintenance, solo) and worker, in seconds",
                   std::move(step_buckets));
  metrics_.Declare(kWorkerBusy, T::kCounter,
                   "time a lockstep worker spent working (applying commands, stepping, serving "
                   "solo's peeks), barrier waits excluded, by role and worker, in seconds");
  metrics_.Declare(kWorkerWaiting, T::kCounter,
                   "time a lockstep worker spent waiting for the other workers at barriers "
                   "(iteration start, tick, exchanges), by role and worker, in seconds");
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
  metrics_.Declare(kOneShotsBuilt, T::kCounter,
                   "one-shot (ONE_SHOT_READ) dataflows the controller built (forwarded creates; a "
                   "replay of one already running is not counted again)");
  metrics_.Inc(kOneShotsBuilt, {}, 0);
  metrics_.Declare(kOneShotsRunning, T::kGauge,
                   "one-shot dataflows built and not yet dropped (AllowCompaction(empty) of "
                   "their exports)");
  metrics_.Set(kOneShotsRunning, {}, 0);
  metrics_.Declare(
      kOneShotLatency, T::kHistogram,
      "time from forwarding a one-shot CreateDataflow to the Frontiers response that "
      "reports the last of its exports computed (write past its as_of), in seconds",
      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30});
  metrics_.Declare(kHoldGap, T::kGauge,
                   "how far the slowest hold of an index (peer, import, reader holds) is behind "
                   "the controller's frontier, in timestamp units: the most, over worker "
                   "ordinals, of own frontier - since; the " +
                       std::to_string(kHoldGapSeries) + " largest");
  metrics_.Declare(
      kWrites, T::kCounter,
      "table writes (WriteTable) by result: ok (acknowledged durable), error (answered "
      "not applied), refused (CommandError from the supervisor)");
  for (const char* result : {"ok", "error", "refused"})
    metrics_.Inc(kWrites, {{"result", result}}, 0);
  metrics_.Declare(kWriteSeconds, T::kHistogram,
                   "time from forwarding a write to its WriteResponse, in seconds",
                   {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1, 2.5, 5, 10});
  metrics_.Declare(kWritesInFlight, T::kGauge, "writes forwarded and not yet answered");
  metrics_.Declare(kSubscribes, T::kGauge, "live subscribes (DESIGN §10), of every session");
  metrics_.Set(kSubscribes, {}, 0);
  metrics_.Declare(kSubscribeBatches, T::kCounter, "SubscribeBatch answers sent to sessions");
  metrics_.Inc(kSubscribeBatches, {}, 0);
  metrics_.Declare(kSubscribeRows, T::kCounter,
                   "subscribe updates (one row's change at one time) sent to sessions");
  metrics_.Inc(kSubscribeRows, {}, 0);
  metrics_.Declare(
      kSubscribeEnds, T::kCounter,
      "subscribes ended, by reason (up_to, canceled, dropped, error, too_slow, closed, "
      "session_ended: the controller's new epoch, or an observer's session ended)");
  for (const char* reason :
       {"up_to", "canceled", "dropped", "error", "too_slow", "closed", "session_ended"}) {
    metrics_.Inc(kSubscribeEnds, {{"reason", reason}}, 0);
  }
  metrics_.Declare(kSubscribeLag, T::kGauge,
                   "how far a live subscribe is behind its index: the index's write frontier - the "
                   "upper delivered to the subscriber, in timestamp units, by wire uuid; the " +
                       std::to_string(kSubscribeLagSeries) + " largest");
  metrics_.Declare(kSubscribeLagMax, T::kGauge,
                   "the largest lag of any live subscribe (tandem_subscribe_lag)");
  metrics_.Set(kSubscribeLagMax, {}, 0);
  metrics_.Declare(kHoldGapMax, T::kGauge,
                   "the largest hold gap of any index (tandem_index_hold_gap), in timestamp units");
}

void Supervisor::NoteForwarded(const ipc::pb::Command& cmd) {
  if (one_shots_.OnForwarded(cmd, Clock::now())) metrics_.Inc(kOneShotsBuilt);
  metrics_.Set(kOneShotsRunning, {}, static_cast<double>(one_shots_.running()));
}

void Supervisor::SetSubscribeMetrics() {
  if (!mux_) return;
  metrics_.Set(kSubscribes, {}, static_cast<double>(mux_->live_subscribes()));
  for (const auto& [reason, n] : mux_->subscribe_ends()) {
    metrics_.Inc(kSubscribeEnds, {{"reason", reason}},
                 static_cast<double>(n) - metrics_.Value(kSubscribeEnds, {{"reason", reason}}));
  }
  std::vector<std::pair<std::uint64_t, std::string>> lags;
  for (const Multiplexer::SubscribeInfo& s : mux_->LiveSubscribes()) {
    std::uint64_t lag = 0;
    if (auto it = frontiers_.latest().find(s.id);
        it != frontiers_.latest().end() && !it->second.write().elements().empty()) {
      const std::uint64_t write = it->second.write().elements(0);
      lag = write > s.delivered ? write - s.delivered : 0;
    }
    lags.emplace_back(lag, s.wire_uuid);
  }
  std::sort(lags.begin(), lags.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  metrics_.Clear(kSubscribeLag);  // an ended subscribe's series goes with it
  for (std::size_t i = 0; i < lags.size() && i < kSubscribeLagSeries; ++i) {
    metrics_.Set(kSubscribeLag, {{"uuid", lags[i].second}}, static_cast<double>(lags[i].first));
  }
  metrics_.Set(kSubscribeLagMax, {}, lags.empty() ? 0 : static_cast<double>(lags.front().first));
}

void Supervisor::SetHoldGaps(const std::vector<shm::SlotInfo>& slots) {
  Time max_gap = 0;
  const std::vector<HoldGap> gaps = HoldGaps(slots, kHoldGapSeries, &max_gap);
  metrics_.Clear(kHoldGap);  // a dropped index's series goes with it
  for (const HoldGap& g : gaps) metrics_.Set(kHoldGap, {{"id", g.id}}, static_cast<double>(g.gap));
  metrics_.Set(kHoldGapMax, {}, static_cast<double>(max_gap));
}

int Supervisor::Run() {
  started_at_ = Clock::now();
  spdlog::info("starting: {}", DescribeConfiguration(config_));
  if (int code = Start(); code != kExitOk) return code;
  return Loop();
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
    // The peek answer ring (DESIGN §14) of the runtime that serves peeks: its eventfd is written
    // only while the loop says it sleeps, and an answer that came before that is taken now.
    Runtime* const peeks = PeekServingRuntime();
    const std::size_t answers_at = items.size();
    bool answers_waiting = false;
    if (peeks) {
      items.push_back({nullptr, peeks->peek_path->answers().wake_fd(), ZMQ_POLLIN, 0});
      answers_waiting = !peeks->peek_path->answers().PrepareToSleep();
    }
    const std::size_t zap_at = items.size();
    if (auth_) items.push_back(auth_->PollItem());
    const std::size_t http_at = items.size();
    http_->AppendPollItems(&items);
    // Every socket is asked again at least every 100 ms, busy or not: were a signal ever missed
    // (every path that may consume one takes its socket out of `quiet_`), a message would wait at
    // most that long, never for the loop to go idle.
    if (const auto now = Clock::now(); now - quiet_since_ >= std::chrono::milliseconds(100)) {
      quiet_.clear();
      quiet_since_ = now;
    }
    PollItems(items, answers_waiting ? 0 : 100, quiet_);
    metrics_.Inc(kLoopTurns);
    if (peeks) {
      peeks->peek_path->answers().Awake((items[answers_at].revents & ZMQ_POLLIN) != 0);
      DrainPeekAnswers(*peeks);
    }
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
    FlushSubscribeEnds();  // TOO_SLOW ends wait for room in their session's pipe
    const auto now = Clock::now();
    http_->Tick(now);
    SweepReaders(now);
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
      spdlog::info("ready: controller endpoint {}, internal HTTP {}", bound_controller_,
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
  mux_->ExpireOrphans(Clock::now());
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

bool Supervisor::AdmitWrite(const std::string& peer, const ipc::pb::Command& cmd) {
  const std::uint32_t limit = config_.guards.max_writes_in_flight;
  mux_->ExpireOrphans(Clock::now());
  if (mux_->outstanding_writes() < limit) return true;
  RefuseCommand(peer, cmd, "too_many_writes",
                ipc::Describe(cmd) + ": the replica has " +
                    std::to_string(mux_->outstanding_writes()) +
                    " writes waiting for their answers, the limit (--max-writes-in-flight " +
                    std::to_string(limit) + "); send it again after some answers");
  return false;
}

Supervisor::Runtime* Supervisor::FindRuntime(Role id) {
  auto it = runtimes_.find(id);
  return it == runtimes_.end() ? nullptr : &it->second;
}

Supervisor::Runtime* Supervisor::PeekServingRuntime() {
  for (auto& [id, r] : runtimes_) {
    if (r.peek_path) return &r;
  }
  return nullptr;
}

void Supervisor::SendToRuntime(Role id, const std::string& encoded, bool peek) {
  Runtime* r = FindRuntime(id);
  TANDEM_CHECK(r != nullptr, "the multiplexer routed to a runtime this mode does not have");
  Deliver(*r, r->next_seq++, encoded, peek);
}

void Supervisor::Deliver(Runtime& r, std::uint64_t seq, const std::string& encoded, bool peek) {
  if (!r.unsent.empty()) {  // the runtime is not ready: keep the order
    r.unsent.push_back({seq, encoded, peek});
    return;
  }
  // A ring that is full now (or a record larger than it takes) sends the command on the channel:
  // back-pressure onto the slower path, never a drop; its number keeps the order.
  if (peek && r.peek_ring && r.peek_path->TrySend(seq, encoded)) return;
  // HWM 0 on runtime channels: never drops while the runtime is connected; it reads in order.
  // A send finds no peer before the runtime has connected (then the command waits in `unsent`,
  // in order, until it is ready) and once its end of the channel is closed — its process is gone
  // and its SIGCHLD is on the way (shared fate takes the replica down). A blocking send would
  // then never return, so the supervisor would never get to that SIGCHLD.
  quiet_.erase(r.channel->handle());
  const std::string number = ipc::SequenceFrame(seq);
  if (!r.channel->send(zmq::buffer(number), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
    if (!r.ready) {
      r.unsent.push_back({seq, encoded, peek});
      return;
    }
    spdlog::warn(
        "the {} runtime's channel has no peer (the runtime is gone?): a command was not "
        "delivered",
        RoleName(r.id));
    return;
  }
  // ZeroMQ takes a message's later frames once it took the first (and the high-water mark is 0).
  TANDEM_CHECK(r.channel->send(zmq::buffer(encoded), zmq::send_flags::dontwait).has_value(),
               "a runtime channel took a command's number but not the command");
}

void Supervisor::SendUnsent(Runtime& r) {
  std::vector<Runtime::Unsent> unsent = std::move(r.unsent);
  r.unsent.clear();
  for (const Runtime::Unsent& u : unsent) Deliver(r, u.seq, u.encoded, u.peek);
}

void Supervisor::DrainPeekAnswers(Runtime& r) {
  if (!r.peek_path) return;
  shm::RingReader& answers = r.peek_path->answers();
  std::string_view bytes;
  // At most so many per loop turn, like the channel (OnRuntimeReadable).
  for (int n = 0; n < 1024 && answers.Front(&bytes); ++n) {
    OnRuntimeMessage(r, bytes);  // done with `bytes` (forwarded or copied) before the Pop
    answers.Pop();
  }
}

void Supervisor::OnRuntimeReadable(Runtime& r) {
  // At most so many per loop turn: a runtime's stream of subscribe batches never keeps the
  // sessions' commands (a CancelSubscribe), the queued Ends or the runtime watch waiting long.
  for (int n = 0; n < 1024; ++n) {
    zmq::message_t msg;
    if (!r.channel->recv(msg, zmq::recv_flags::dontwait)) {
      quiet_.insert(r.channel->handle());  // read until nothing: its ZMQ_FD signals what comes
      return;
    }
    OnRuntimeMessage(r, msg.to_string_view());
  }
}

void Supervisor::OnRuntimeMessage(Runtime& r, std::string_view bytes) {
  auto decoded = ipc::DecodeResponse(bytes);
  // Runtimes are ours: an undecodable message is our bug, not bad input.
  TANDEM_CHECK(decoded.ok(), "a runtime sent an undecodable response");
  ipc::pb::Response& response = decoded.message;
  if (response.has_status() && response.status().has_runtime_ready()) {
    r.ready = true;
    // Only a runtime that says it reads the rings gets peeks through them (one spawned without
    // the fds — the fake runtime of the tests — does not say so).
    r.peek_ring = r.peek_path != nullptr && response.status().runtime_ready().peek_ring();
    SendUnsent(r);
    metrics_.Set(kRuntimeStalled, {{"role", RoleName(r.id)}}, 0);  // watched from now on
    spdlog::info("the {} runtime (pid {}) is ready with {} workers{}", RoleName(r.id),
                 response.status().runtime_ready().pid(),
                 response.status().runtime_ready().workers(),
                 r.peek_ring ? "; peeks take the peek rings" : "");
    return;
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
    if (r.id == Role::kInteractive) return;
  }
  const auto verdict = mux_->OnResponse(r.id, &response, Clock::now());
  if (verdict.peek_latency) {
    metrics_.Observe(kPeekLatency, {},
                     std::chrono::duration<double>(*verdict.peek_latency).count());
  }
  if (response.has_write_response()) {
    // Made (or not) whether or not its session still listens.
    metrics_.Inc(kWrites, {{"result", response.write_response().has_time() ? "ok" : "error"}});
    if (verdict.write_latency) {
      metrics_.Observe(kWriteSeconds, {},
                       std::chrono::duration<double>(*verdict.write_latency).count());
    }
  }
  if (!verdict.forward) {
    metrics_.Inc(kDropped, {{"reason", verdict.drop_reason}});
    return;
  }
  if (!verdict.subscribe.empty()) {
    DeliverSubscribeAnswer(verdict, response);
    return;
  }
  if (response.has_frontiers()) {
    if (auto latency = one_shots_.OnFrontiers(response.frontiers(), Clock::now())) {
      metrics_.Observe(kOneShotLatency, {}, std::chrono::duration<double>(*latency).count());
    }
    OnFrontiers(response, bytes);
    return;
  }
  if (verdict.to != kControllerSession) {
    const std::string* observer = sessions_.ObserverPeer(verdict.to);
    // ForgetSession ends a session in both places at once.
    TANDEM_CHECK(observer != nullptr,
                 "the multiplexer tracks peeks and writes of live sessions only");
    SendToPeer(*observer, response);
    return;
  }
  if (!sessions_.controller()) {
    metrics_.Inc(kDropped, {{"reason", "no_controller"}});
    return;
  }
  if (response.has_peek_response() && !verdict.rewritten) {
    // The controller's uuid is the wire uuid: forwarded as the runtime encoded it.
    SendEncodedToPeer(*sessions_.controller(), bytes, "PeekResponse");
    return;
  }
  SendToPeer(*sessions_.controller(), response);
}

void Supervisor::OnFrontiers(const ipc::pb::Response& response, std::string_view bytes) {
  const std::string& id = response.frontiers().id();
  frontiers_.Record(response.frontiers(),
                    validator_.collections().count(id) > 0 ||
                        (last_complete_ && last_complete_->collections().count(id) > 0));
  if (!sessions_.controller() && sessions_.observers().empty()) {
    metrics_.Inc(kDropped, {{"reason", "no_controller"}});
    return;
  }
  if (sessions_.controller()) SendEncodedToPeer(*sessions_.controller(), bytes, "Frontiers");
  for (const auto& [peer, observer] : sessions_.observers()) {
    SendEncodedToPeer(peer, bytes, "Frontiers");
  }
}

void Supervisor::SetPeekRingMetrics() {
  const Runtime* r = PeekServingRuntime();
  if (!r) return;
  for (const auto& [name, ring] : {std::pair<const char*, const shm::PeekRingData*>{
                                       "requests", &r->peek_path->rings().requests},
                                   {"answers", &r->peek_path->rings().answers}}) {
    metrics_.SetCounter(kPeekRingRecords, {{"ring", name}, {"result", "pushed"}},
                        static_cast<double>(ring->pushed.load(std::memory_order_relaxed)));
    metrics_.SetCounter(kPeekRingRecords, {{"ring", name}, {"result", "full"}},
                        static_cast<double>(ring->full.load(std::memory_order_relaxed)));
    metrics_.SetCounter(kPeekRingRecords, {{"ring", name}, {"result", "too_large"}},
                        static_cast<double>(ring->too_large.load(std::memory_order_relaxed)));
  }
}

void Supervisor::SetStepMetrics() {
  if (!segment_) return;
  const std::string role =
      RoleName(segment_->mode() == shm::Mode::kSolo ? Role::kSolo : Role::kMaintenance);
  std::vector<std::uint64_t> counts(shm::kStepBuckets);
  for (std::uint32_t i = 0; i < segment_->workers(); ++i) {
    const shm::StepStatsData* s = segment_->step_stats(i);
    if (!s) return;
    const Labels labels = {{"role", role}, {"worker", std::to_string(i)}};
    for (std::size_t b = 0; b < counts.size(); ++b) {
      counts[b] = s->step_buckets[b].load(std::memory_order_relaxed);
    }
    auto seconds = [](const std::atomic<std::uint64_t>& ns) {
      return static_cast<double>(ns.load(std::memory_order_relaxed)) / 1e9;
    };
    metrics_.SetHistogram(kStepSeconds, labels, counts, seconds(s->step_ns));
    metrics_.SetCounter(kWorkerBusy, labels, seconds(s->busy_ns));
    metrics_.SetCounter(kWorkerWaiting, labels, seconds(s->waiting_ns));
  }
}

std::string Supervisor::ReadinessStatus() const {
  if (Ready()) return "ready: controller endpoint " + bound_controller_;
  std::string why = "not ready:";
  for (const auto& [id, r] : runtimes_) {
    if (!r.ready) why += std::string(" ") + RoleName(id) + " runtime not ready;";
    if (r.ready && r.stalled) {
      why +=
          std::string(" ") + RoleName(id) + " runtime (pid " + std::to_string(r.pid) + ") stalled;";
    }
  }
  return why;
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
               SecondsText(std::chrono::duration<double>(Clock::now() - r.progress_at).count()) +
               " s;";
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
      SetHoldGaps(slots);
    }
    SetPeekRingMetrics();
    SetStepMetrics();
    metrics_.Set(kReady, {}, Ready() ? 1 : 0);
    metrics_.Set(kPeeksInFlight, {}, static_cast<double>(mux_ ? mux_->outstanding_peeks() : 0));
    metrics_.Set(kWritesInFlight, {}, static_cast<double>(mux_ ? mux_->outstanding_writes() : 0));
    SetSubscribeMetrics();
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
