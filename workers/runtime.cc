#include "workers/runtime.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>

#include "base/check.h"
#include "ipc/channel.h"
#include "shm/reader.h"
#include "shm/registry.h"
#include "shm/wake.h"
#include "workers/step_stats.h"

namespace tandem::workers {

namespace pb = ipc::pb;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {
// Heap memory freed but kept by malloc beyond this (a hydration's first tick held every update of
// a snapshot before publishing it) is returned to the system (malloc_trim), so the runtime's
// resident size settles near what it keeps instead of staying at its peak. Looked at by worker 0
// only (malloc_trim trims every arena of the process), at most once per kTrimInterval, after the
// step's peeks and reports.
constexpr std::size_t kTrimFreeBytes = std::size_t{64} << 20;
constexpr std::chrono::seconds kTrimInterval = 1s;

// Back-pressure on subscribes (Runtime::subscribe_bytes_in_flight_): parts waiting in the inbox,
// counted in memory (SpaceUsedLong).
constexpr std::int64_t kMaxSubscribeBytesInFlight = 64 << 20;

// Subscribe messages the command thread handles before it looks at the workers' other answers, its
// channel and the peek ring again: what a peek's answer or a command waits behind at most.
constexpr std::size_t kSubscribeMessagesPerDrain = 256;

// Never a message the channel cannot carry (its receiver would fail a check: shared fate). A
// peek's rows are bounded by max_result_size already; this is the backstop, which makes such an
// answer an Error instead.
pb::Response OversizeAnswer(const pb::Response& r, std::size_t bytes) {
  pb::Response error;
  error.mutable_peek_response()->set_uuid(r.peek_response().uuid());
  error.mutable_peek_response()->set_error("the answer is a message of " + std::to_string(bytes) +
                                           " bytes, over the internal message limit of " +
                                           std::to_string(ipc::kMaxMessageBytes) + " bytes");
  return error;
}

std::string EncodeForChannel(const pb::Response& r) {
  std::string bytes = ipc::Encode(r);
  if (bytes.size() <= ipc::kMaxMessageBytes || !r.has_peek_response()) return bytes;
  return ipc::Encode(OversizeAnswer(r, bytes.size()));
}
}  // namespace

// A worker thread: its reading side (interactive, solo), and how far it has come (the command
// thread trims the log below every worker's `applied` and reports progress by `progress`). Its part
// of the maintained side (maintenance, solo) is the MaintainedSide's.
struct Runtime::Worker {
  std::uint32_t me = 0;
  std::unique_ptr<ReadingSide> reading;   // solo, interactive
  std::atomic<std::uint64_t> applied{0};  // next command seq to apply
  // Loop turns and units of work finished within a turn (each message to the command thread):
  // ReportProgress.
  std::atomic<std::uint64_t> progress{0};
};

Runtime::Runtime(RuntimeOptions options)
    : options_(std::move(options)),
      ctx_(1),
      merger_(options_.workers, [this](const pb::Response& r) { SendResponse(r); }),
      subscribe_merger_(
          options_.workers, [this](const pb::Response& r) { SendResponse(r); },
          [this](const std::string& uuid) {
            // Every worker forgets its part, in command order (unknown uuids are fine).
            pb::Command forget;
            forget.mutable_cancel_subscribe()->set_uuid(uuid);
            ++next_seq_;
            AppendToLog(std::make_shared<const pb::Command>(std::move(forget)));
          }) {
  merger_.SetMaxResultSize(options_.max_result_size);
  subscribe_merger_.SetBatchBytes(options_.subscribe_batch_bytes);
}

Runtime::~Runtime() {
  stop_ = true;
  log_.WakeAll();
  for (auto& t : threads_) {
    if (t.joinable()) t.detach();  // the process is ending; workers may sit in a barrier
  }
}

int Runtime::Run() {
  auto seg = shm::Segment::Open(options_.segment);
  if (!seg.ok()) {
    spdlog::critical("cannot attach to segment {}: {}", options_.segment, seg.status().ToString());
    return 1;
  }
  segment_ = std::move(seg).value();
  const bool solo_segment = segment_->mode() == shm::Mode::kSolo;
  if (segment_->workers() != options_.workers || solo_segment != (options_.role == Role::kSolo)) {
    spdlog::critical("segment {} was made for {} workers in {} mode; this runtime is {} with {}",
                     options_.segment, segment_->workers(), solo_segment ? "solo" : "two-runtime",
                     RoleName(options_.role), options_.workers);
    return 1;
  }
  if (Renders(options_.role)) {
    maintained_ = MaintainedSide::Open(
        options_, segment_.get(), &log_,
        [this](const pb::Response& r) { SendToCommandThread(r, kNotAWorker); });
    if (!maintained_) return 1;
  }
  channel_ = std::make_unique<zmq::socket_t>(ipc::ConnectRuntimeChannel(ctx_, options_.channel));
  if (options_.peek_request_fd >= 0 && options_.peek_answer_fd >= 0) {
    shm::PeekRingsData* rings = shm::PeekRingsOf(*segment_);
    for (const int fd : {options_.peek_request_fd, options_.peek_answer_fd}) {
      if (fcntl(fd, F_GETFD) < 0) {
        spdlog::critical(
            "--peek-ring-fds: descriptor {} is not open (the supervisor hands them "
            "down when it spawns this runtime)",
            fd);
        return 1;
      }
    }
    if (rings == nullptr || !ServesPeeks(options_.role)) {
      spdlog::critical("--peek-ring-fds given, but {}", rings == nullptr
                                                            ? "the segment has no peek rings"
                                                            : "this runtime serves no peeks");
      return 1;
    }
    peek_requests_ =
        std::make_unique<shm::RingReader>(*segment_, &rings->requests, options_.peek_request_fd);
    peek_answers_ =
        std::make_unique<shm::RingWriter>(*segment_, &rings->answers, options_.peek_answer_fd);
  }

  const std::uint32_t n = options_.workers;
  if (ServesPeeks(options_.role)) {
    // One-shot dataflows' compute threads; a finished part wakes its reading worker.
    one_shots_ = std::make_unique<OneShotPool>(
        n, [this](std::uint32_t worker) { WakeReadingWorker(worker); },
        options_.max_one_shot_memory);
  }
  if (!options_.data_dir.empty()) {
    TANDEM_CHECK(maintained_ != nullptr, "only a maintenance or solo runtime writes tables");
    if (!maintained_->OpenTables()) return 1;
  }
  StartWorkers();
  segment_->SetRuntime(options_.role, getpid(), shm::RuntimeState::kAttached);

  pb::Response ready;
  auto* r = ready.mutable_status()->mutable_runtime_ready();
  r->set_role(RoleName(options_.role));
  r->set_pid(getpid());
  r->set_workers(n);
  r->set_peek_ring(peek_requests_ != nullptr);  // the supervisor may use the rings from now on
  SendResponse(ready);
  segment_->SetRuntime(options_.role, getpid(), shm::RuntimeState::kReady);
  spdlog::info("{} runtime ready: {} workers on segment {}", RoleName(options_.role), n,
               options_.segment);

  Serve();
}

void Runtime::StartWorkers() {
  const std::uint32_t n = options_.workers;
  std::atomic<std::uint32_t> attached{0};
  for (std::uint32_t i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    workers_.back()->me = i;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    threads_.emplace_back([this, i, &attached] {
      const std::string name = std::string(RoleShortName(options_.role)) + ":" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      Worker& w = *workers_[i];
      if (maintained_) {
        maintained_->Attach(i, [this, &w](std::vector<Renderer::FrontierReport> reports) {
          std::vector<Inbox::Message> messages;
          messages.reserve(reports.size());
          for (auto& r : reports) {
            messages.push_back({w.me, r.seq, std::move(r.response), 0});
          }
          answers_.inbox.PushAll(std::move(messages));
        });
      }
      if (ServesPeeks(options_.role)) {
        auto r = shm::Reader::Attach(segment_.get(), i);
        if (!r.ok()) spdlog::critical("worker {}: {}", i, r.status().ToString());
        TANDEM_CHECK(r.ok(), "could not take the reading side of this worker's registry row");
        w.reading = std::make_unique<ReadingSide>(
            std::move(r).value(), i, options_.workers, one_shots_.get(),
            [this, &w](const pb::Response& r, std::uint64_t seq) {
              SendToCommandThread(r, w.me, seq);
              w.progress.fetch_add(1, std::memory_order_relaxed);  // a unit of work done
            });
        w.reading->SetMaxResultSize(options_.max_result_size);
        w.reading->SetSubscribeBatchBytes(options_.subscribe_batch_bytes);
        w.reading->SetSubscribeBackPressure([this] {
          return subscribe_bytes_in_flight_.load(std::memory_order_relaxed) >
                 kMaxSubscribeBytesInFlight;
        });
      }
      attached.fetch_add(1);
      attached.notify_all();
      WorkerMain(i);
    });
  }
  // Every worker holds its side of its row before the runtime says it is ready.
  for (std::uint32_t a; (a = attached.load()) < n;) attached.wait(a);
}

// The command thread: the supervisor's commands in, the workers' answers merged and out.
//
// It sleeps in poll(2) on the channel's ZMQ_FD, the inbox's eventfd and, with the peek fast path,
// the peek request ring's eventfd (announced in the ring, shm/peek_ring.h) — not in
// zmq_poll, which costs two passes of a poll and a ZMQ_EVENTS query per socket (each a getpid and
// a poll system call inside libzmq) on every turn. ZMQ_FD is edge-like: it signals only after the
// socket's pending commands were processed, so the loop sleeps only right after a recv on the
// channel found nothing (that recv processed them, and no send on the channel came after it).
void Runtime::Serve() {
  const int channel_fd = channel_->get(zmq::sockopt::fd);
  for (;;) {
    // The workers' answers first: sending them on the channel may process the channel's commands
    // (a message's arrival among them), which the recv below then sees.
    bool busy = DrainInbox();
    // At most so many before the inbox is looked at again (a long backlog of commands never keeps
    // the answers waiting).
    for (int n = 0; n < 1024; ++n) {
      zmq::message_t seq, msg;
      if (!channel_->recv(seq, zmq::recv_flags::dontwait)) break;
      // The supervisor sends two frames per command (ipc/channel.h); ZeroMQ delivers them whole.
      TANDEM_CHECK(seq.more() && channel_->recv(msg, zmq::recv_flags::dontwait) && !msg.more(),
                   "the supervisor sent a command as its sequence number and its encoding");
      const auto number = ipc::ParseSequence(seq.to_string_view());
      TANDEM_CHECK(number && seq.size() == ipc::kSequenceBytes,
                   "the supervisor sent a command's sequence number as 8 bytes");
      OnSequenced(*number, msg.to_string_view());
      ReportProgress();  // a long backlog is progress too
      busy = true;
    }
    busy = DrainPeekRing(1024) || busy;
    ReportProgress();
    if (busy) continue;  // look again: the last recv must be one that found nothing
    const bool ring = peek_requests_ != nullptr;
    if (ring && !peek_requests_->PrepareToSleep()) {
      peek_requests_->Awake(false);  // a peek arrived since the drain above
      continue;
    }
    pollfd fds[4] = {{channel_fd, POLLIN, 0},
                     {answers_.inbox.fd(), POLLIN, 0},
                     {subscribes_.inbox.fd(), POLLIN, 0},
                     {ring ? peek_requests_->wake_fd() : -1, POLLIN, 0}};
    const int rc = poll(fds, ring ? 4 : 3, 100);
    TANDEM_CHECK(rc >= 0 || errno == EINTR, "poll on the command thread's channel and inboxes");
    if (ring) peek_requests_->Awake(rc > 0 && (fds[3].revents & POLLIN) != 0);
  }
}

bool Runtime::DrainPeekRing(int limit) {
  if (!peek_requests_) return false;
  bool any = false;
  std::string_view record;
  for (int n = 0; n < limit && peek_requests_->Front(&record); ++n) {
    const auto number = ipc::ParseSequence(record);
    TANDEM_CHECK(number.has_value(), "a peek ring record begins with its sequence number");
    OnSequenced(*number, record.substr(ipc::kSequenceBytes));
    peek_requests_->Pop();  // after OnSequenced: `record` points into the ring until then
    any = true;
  }
  return any;
}

void Runtime::OnSequenced(std::uint64_t seq, std::string_view bytes) {
  auto cmd = ipc::DecodeInternalCommand(bytes);
  // The supervisor forwards only what it decoded and validated.
  TANDEM_CHECK(cmd.ok(), "the supervisor sent an undecodable command");
  sequencer_.Offer(seq, std::move(cmd.message));
  while (auto next = sequencer_.Next()) OnCommand(std::move(*next));
}

bool Runtime::DrainInbox() {
  // At most so many of each before the supervisor's channel is looked at again: a stream of
  // subscribe parts never keeps a CancelSubscribe (or any command, or a peek's answer) waiting
  // long.
  const bool answers = DrainLane(answers_, 1024);
  const bool subscribes = DrainLane(subscribes_, kSubscribeMessagesPerDrain);
  return answers || subscribes;
}

bool Runtime::DrainLane(Lane& lane, std::size_t limit) {
  if (lane.at == lane.taken.size()) {
    lane.at = 0;
    lane.inbox.Take(&lane.taken);
  }
  const std::size_t end = std::min(lane.taken.size(), lane.at + limit);
  if (lane.at == end) return false;
  for (; lane.at < end; ++lane.at) {
    OnWorkerMessage(lane.taken[lane.at]);
    ReportProgress();
  }
  return true;
}

void Runtime::ReportProgress() {
  reported_progress_.resize(workers_.size(), ~std::uint64_t{0});
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (workers_[i]->progress.load(std::memory_order_relaxed) == reported_progress_[i]) return;
  }
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    reported_progress_[i] = workers_[i]->progress.load(std::memory_order_relaxed);
  }
  segment_->mutable_header().runtimes[shm::RuntimeEntryOf(options_.role)].progress.fetch_add(
      1, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------------------
// Command thread

void Runtime::SendResponse(const pb::Response& response) {
  const std::string bytes = EncodeForChannel(response);
  // The fast path carries peek answers only (DESIGN §14); one too large for it, or a ring full
  // now, takes the channel — the supervisor reads both.
  if (peek_answers_ && response.has_peek_response() && peek_answers_->TryPush({bytes})) return;
  channel_->send(zmq::buffer(bytes), zmq::send_flags::none);
}

void Runtime::AppendToLog(LoggedCommand command) {
  // Every worker has applied what is below its `applied`; lockstep workers (and the start
  // barrier's completion) read from the horizon on. Both only rise, so a stale bound is safe.
  std::uint64_t trim_below = UINT64_MAX;
  for (auto& w : workers_) trim_below = std::min(trim_below, w->applied.load());
  if (maintained_) trim_below = std::min(trim_below, maintained_->horizon());
  log_.Append(std::move(command), trim_below);
  // A lockstep worker waits on the log (Append wakes it); a free-running one on its row.
  if (!maintained_) {
    for (std::uint32_t i = 0; i < options_.workers; ++i) WakeReadingWorker(i);
  }
}

void Runtime::WakeReadingWorker(std::uint32_t worker) {
  if (maintained_) {
    log_.Poke();
    return;
  }
  shm::Registry registry(segment_.get());
  shm::WakeReceiver(&registry.row(worker).wake).Interrupt();
}

void Runtime::OnCommand(pb::Command command) {
  const bool hello = command.has_hello();
  Reconciler::Admitted admitted = reconciler_.Admit(std::move(command));
  // Frontiers are reported when they move; a new controller learns the current ones now.
  if (hello) merger_.ResendFrontiers();
  for (pb::Command& c : admitted.apply) Enqueue(std::move(c));
  if (admitted.reconciled) {
    pb::Response r;
    *r.mutable_status()->mutable_reconciled() = *admitted.reconciled;
    SendResponse(r);
  }
}

void Runtime::Enqueue(pb::Command c) {
  switch (c.kind_case()) {
    case pb::Command::kUpdateConfiguration: {
      auto parameters =
          std::make_shared<const LiveParameters>(LiveParameters::Parse(c.update_configuration()));
      if (parameters->log_level) spdlog::set_level(*parameters->log_level);
      // The mergers' bounds (only a runtime that serves peeks merges any): for the peeks after this
      // command, the batches sent from now on.
      if (parameters->max_result_size) merger_.SetMaxResultSize(*parameters->max_result_size);
      if (parameters->subscribe_batch_bytes) {
        subscribe_merger_.SetBatchBytes(*parameters->subscribe_batch_bytes);
      }
      // Workers apply it in order with the peeks (and fault injection fails a check).
      const bool reads = ServesPeeks(options_.role);
      if (parameters->abort_worker != options_.role && !(reads && parameters->ForReadingSide())) {
        return;
      }
      ++next_seq_;
      AppendToLog({std::make_shared<const pb::Command>(std::move(c)), std::move(parameters)});
      return;
    }
    case pb::Command::kPeek:
      if (options_.role == Role::kMaintenance) return;  // never routed here in two-runtime mode
      merger_.ExpectPeek(c.peek());
      break;
    case pb::Command::kCancelPeek:
      if (!merger_.Expects(c.cancel_peek().uuid())) return;  // answered already
      break;
    case pb::Command::kSubscribe:
      if (options_.role == Role::kMaintenance) return;  // never routed here in two-runtime mode
      subscribe_merger_.Expect(c.subscribe());
      break;
    case pb::Command::kCancelSubscribe:
      // Ends it now (CANCELED); the workers forget their parts. Ended already: nothing.
      if (!subscribe_merger_.Cancel(c.cancel_subscribe().uuid())) return;
      break;
    case pb::Command::kCreateDataflow:
    case pb::Command::kAllowCompaction:
      reconciler_.Track(c, next_seq_);
      break;
    case pb::Command::kWriteTable:
      if (!maintained_) return;  // never routed to interactive
      break;  // routed to its table in the start completion, in command order (LiveTables)
    default:
      return;  // CreateInstance, InitializationComplete, Schedule, AllowWrites: nothing to do
  }
  ++next_seq_;
  AppendToLog(std::make_shared<const pb::Command>(std::move(c)));
}

void Runtime::OnWorkerMessage(Inbox::Message& m) {
  pb::Response& r = m.response;
  if (r.has_frontiers()) {
    merger_.OnFrontier(m.worker, m.seq, r.frontiers());
    return;
  }
  if (r.has_write_response()) {  // the table writer's answer: the runtime's whole answer
    SendResponse(r);
    return;
  }
  if (r.has_subscribe_batch()) {
    subscribe_bytes_in_flight_.fetch_sub(static_cast<std::int64_t>(m.bytes),
                                         std::memory_order_relaxed);
    subscribe_merger_.OnPart(m.worker, std::move(*r.mutable_subscribe_batch()));
    return;
  }
  if (r.has_subscribe_end()) {
    subscribe_merger_.OnEnd(r.subscribe_end());
    return;
  }
  TANDEM_CHECK(r.has_peek_response(),
               "workers send frontiers, peek parts, subscribe parts and write answers only");
  merger_.OnPeekPart(r.peek_response());
}

// ---------------------------------------------------------------------------------------------
// Workers

void Runtime::SendToCommandThread(const pb::Response& r, std::uint32_t worker, std::uint64_t seq) {
  Inbox::Message m;
  m.worker = worker;
  m.seq = seq;
  if (r.has_subscribe_batch()) {
    // Back-pressure counts what the batch weighs while it waits in the inbox: parsed, in memory
    // (several times its encoded size: a heap object per update, row and datum).
    m.bytes = r.SpaceUsedLong();
    subscribe_bytes_in_flight_.fetch_add(static_cast<std::int64_t>(m.bytes),
                                         std::memory_order_relaxed);
  }
  if (r.has_peek_response()) {
    // The backstop the channel to the command thread had (a part it could not carry is an Error):
    // a worker's part is bounded below it already (ReadingSide::AnswerFrom).
    if (const std::size_t bytes = r.ByteSizeLong(); bytes > ipc::kMaxMessageBytes) {
      m.response = OversizeAnswer(r, bytes);
      answers_.inbox.Push(std::move(m));
      return;
    }
  }
  const bool subscribe = r.has_subscribe_batch() || r.has_subscribe_end();
  m.response = r;
  (subscribe ? subscribes_ : answers_).inbox.Push(std::move(m));
}

void Runtime::WorkerMain(std::uint32_t me) {
  Worker& w = *workers_[me];
  if (maintained_) {
    LockstepLoop(w);
  } else {
    InteractiveLoop(w);
  }
}

void Runtime::LockstepLoop(Worker& w) {
  // This worker's step statistics in the segment (/metrics): every barrier wait below, and the
  // exchanges' inside Step, counts as waiting; the rest of the iteration up to its sleep as busy.
  StepStats::Bind(segment_->step_stats(w.me));
  Clock::time_point next_trim{};
  for (;;) {
    w.progress.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t pokes = log_.pokes();  // before looking for work: no poke is missed
    const std::uint64_t horizon = maintained_->Start();
    const auto work_start = Clock::now();
    const std::uint64_t waited_before = StepStats::waited_ns();
    for (const auto& [seq, c] : log_.Read(w.applied, horizon)) Apply(w, seq, c);
    w.applied = horizon;
    // Solo: what is readable now is not kept waiting for the step.
    if (w.reading) w.reading->Serve();
    maintained_->Step(w.me);
    // Solo: subscribe work left after this slice goes on in the next iteration, at once.
    const bool more = w.reading && w.reading->Serve();
    maintained_->ReportFrontiers(w.me);
    if (w.me == 0 && Clock::now() >= next_trim) {
      next_trim = Clock::now() + kTrimInterval;
      if (mallinfo2().fordblks >= kTrimFreeBytes) malloc_trim(0);
    }
    StepStats::AddBusy(Clock::now() - work_start -
                       std::chrono::nanoseconds(StepStats::waited_ns() - waited_before));
    if (more) log_.Poke();  // every worker's wait below returns at once: the iteration is lockstep
    log_.WaitFor(horizon, maintained_->next_wake(), stop_, pokes);
  }
}

void Runtime::InteractiveLoop(Worker& w) {
  // The wake counter as it was when the subscribe work under way began: a round of it may span
  // several turns and read snapshots taken in the first, so the wait below must return for a
  // slot changed since then, not only since this turn.
  std::optional<std::uint32_t> work_observed;
  for (;;) {
    w.progress.fetch_add(1, std::memory_order_relaxed);
    // Observe the wake counter before looking for work: a command published (and its Interrupt)
    // or a slot changed after this point makes the wait below return at once.
    shm::Reader& reader = w.reading->reader();
    const std::uint32_t observed = reader.wake().Observe();
    if (!work_observed) work_observed = observed;
    const CommandLog::Numbered todo = log_.Read(w.applied);
    if (!todo.empty()) w.applied = todo.back().first + 1;
    for (const auto& [seq, c] : todo) Apply(w, seq, c);
    // One slice of subscribe work at most: with more left, the commands (peeks among them) that
    // arrived meanwhile are applied and answered before the next slice.
    if (w.reading->Serve()) continue;
    const std::uint32_t since = *work_observed;
    work_observed.reset();
    // Sleep until the publisher changes a slot of this row or a command arrives (Interrupt).
    shm::WakeDrain drained;
    reader.wake().WaitSince(
        since, &drained,
        w.reading->waiting() ? std::chrono::nanoseconds(50ms) : std::chrono::nanoseconds(1s));
  }
}

void Runtime::Apply(Worker& w, std::uint64_t seq, const LoggedCommand& c) {
  if (maintained_) maintained_->Apply(w.me, seq, *c);
  if (w.reading) w.reading->Apply(seq, c);
  if (const LiveParameters* p = c.parameters();
      p && p->abort_worker == options_.role && w.me == 0) {
    spdlog::critical("debug_abort_worker: failing a check on purpose");
    TANDEM_CHECK(false, "debug_abort_worker: fault injection requested by UpdateConfiguration");
  }
}

}  // namespace tandem::workers
