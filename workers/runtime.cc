#include "workers/runtime.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <zmq_addon.hpp>

#include "base/check.h"
#include "base/log.h"
#include "ipc/channel.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "shm/registry.h"
#include "shm/routing.h"
#include "shm/wake.h"
#include "workers/peek.h"

namespace tandem::workers {

namespace pb = ipc::pb;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {
// Work one lockstep iteration aims at: commands (and, in solo, peeks) wait at most about this long
// behind a step, plus whatever single tick or spine merge cannot be split. Small steps are also
// faster overall than big ones (their updates stay in cache): measured with `tandem-bench ingest`.
constexpr std::chrono::microseconds kStepBudget = 5ms;
}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kSolo:
      return "solo";
    case Role::kMaintenance:
      return "maintenance";
    case Role::kInteractive:
      return "interactive";
  }
  return "?";
}

const char* RoleShortName(Role role) {
  switch (role) {
    case Role::kSolo:
      return "solo";
    case Role::kMaintenance:
      return "maint";
    case Role::kInteractive:
      return "inter";
  }
  return "?";
}

struct Runtime::Worker {
  struct PendingPeek {
    std::string uuid, id;
    Time t = 0;
    bool scan = true;
    std::vector<std::string> keys;  // encoded, only those this worker owns
    Mfp mfp;
  };
  std::uint32_t me = 0;
  std::unique_ptr<shm::Publisher> publisher;                             // solo, maintenance
  std::unique_ptr<shm::Reader> reader;                                   // solo, interactive
  std::map<std::uint64_t, std::unique_ptr<DataflowInstance>> dataflows;  // by seq: creation order
  std::map<std::string, shm::FollowedRef> indexes;  // peers (interactive) or own exports (solo)
  std::vector<PendingPeek> peeks;
  std::unique_ptr<zmq::socket_t> out;
  std::atomic<std::uint64_t> applied{0};  // next command seq to apply
  // The frontiers this worker reported, by dataflow (CreateDataflow seq), then collection id.
  std::map<std::uint64_t, std::map<std::string, Frontier>> reported;
  std::chrono::steady_clock::duration step_work{};  // lockstep: the last step's duration
};

Runtime::Runtime(RuntimeOptions options) : options_(std::move(options)), ctx_(1) {}

Runtime::~Runtime() {
  stop_ = true;
  cv_.notify_all();
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
  const auto entry = options_.role == Role::kInteractive ? shm::RuntimeRole::kInteractive
                                                         : shm::RuntimeRole::kMaintenance;
  inbox_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::pull);
  inbox_->bind("inproc://worker-out");
  channel_ = std::make_unique<zmq::socket_t>(ipc::ConnectRuntimeChannel(ctx_, options_.channel));

  const std::uint32_t n = options_.workers;
  if (options_.role != Role::kInteractive) {
    exchange_ = std::make_unique<Exchange>(n);
    start_barrier_ =
        std::make_unique<std::barrier<Completion>>(n, Completion{this, &Runtime::StartCompletion});
    tick_barrier_ =
        std::make_unique<std::barrier<Completion>>(n, Completion{this, &Runtime::TickCompletion});
  }
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
      if (options_.role != Role::kInteractive) {
        auto p = shm::Publisher::Attach(segment_.get(), i);
        if (!p.ok()) spdlog::critical("worker {}: {}", i, p.status().ToString());
        TANDEM_CHECK(p.ok(), "could not take the publishing side of this worker's registry row");
        w.publisher = std::move(p).value();
      }
      if (options_.role != Role::kMaintenance) {
        auto r = shm::Reader::Attach(segment_.get(), i);
        if (!r.ok()) spdlog::critical("worker {}: {}", i, r.status().ToString());
        TANDEM_CHECK(r.ok(), "could not take the reading side of this worker's registry row");
        w.reader = std::move(r).value();
      }
      w.out = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::push);
      w.out->set(zmq::sockopt::sndhwm, 0);
      w.out->connect("inproc://worker-out");
      attached.fetch_add(1);
      attached.notify_all();
      WorkerMain(i);
    });
  }
  for (std::uint32_t a; (a = attached.load()) < n;) attached.wait(a);
  segment_->SetRuntime(entry, getpid(), shm::RuntimeState::kAttached);

  pb::Response ready;
  auto* r = ready.mutable_status()->mutable_runtime_ready();
  r->set_role(RoleName(options_.role));
  r->set_pid(getpid());
  r->set_workers(n);
  SendResponse(ready);
  segment_->SetRuntime(entry, getpid(), shm::RuntimeState::kReady);
  spdlog::info("{} runtime ready: {} workers on segment {}", RoleName(options_.role), n,
               options_.segment);

  for (;;) {
    zmq::pollitem_t items[] = {{channel_->handle(), 0, ZMQ_POLLIN, 0},
                               {inbox_->handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(100));
    if (items[0].revents & ZMQ_POLLIN) {
      zmq::message_t msg;
      while (channel_->recv(msg, zmq::recv_flags::dontwait)) {
        auto cmd = ipc::DecodeCommand(msg.to_string_view());
        // The supervisor forwards only what it decoded and validated.
        TANDEM_CHECK(cmd.ok(), "the supervisor sent an undecodable command");
        OnCommand(std::move(cmd.message));
      }
    }
    if (items[1].revents & ZMQ_POLLIN) {
      for (;;) {
        std::vector<zmq::message_t> frames;
        if (!zmq::recv_multipart(*inbox_, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
          break;
        }
        TANDEM_CHECK(frames.size() == 2, "a worker message has two frames");
        OnWorkerMessage(frames[0], frames[1]);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Command thread

void Runtime::SendResponse(const pb::Response& response) {
  channel_->send(zmq::buffer(ipc::Encode(response)), zmq::send_flags::none);
}

void Runtime::Publish(std::shared_ptr<const pb::Command> command) {
  {
    std::lock_guard lk(mu_);
    log_.push_back(std::move(command));
    // Trim what every worker has applied.
    std::uint64_t min_applied = UINT64_MAX;
    for (auto& w : workers_) min_applied = std::min(min_applied, w->applied.load());
    if (options_.role != Role::kInteractive) min_applied = std::min(min_applied, horizon_);
    while (!log_.empty() && log_base_ < min_applied) {
      log_.pop_front();
      ++log_base_;
    }
  }
  cv_.notify_all();
  if (options_.role == Role::kInteractive) {
    shm::Registry registry(segment_.get());
    for (std::uint32_t i = 0; i < options_.workers; ++i) {
      shm::WakeReceiver(&registry.row(i).wake).Interrupt();
    }
  }
}

void Runtime::Track(const pb::Command& c) {
  if (c.has_create_dataflow()) {
    LiveDataflow l;
    l.fingerprint = ipc::Encode(c.create_dataflow().desc());
    for (const auto& e : c.create_dataflow().desc().index_exports()) l.exports.push_back(e.id());
    live_[next_seq_] = std::move(l);
  } else if (c.has_allow_compaction() && c.allow_compaction().frontier().elements().empty()) {
    for (auto it = live_.begin(); it != live_.end(); ++it) {
      auto& l = it->second;
      if (std::find(l.exports.begin(), l.exports.end(), c.allow_compaction().id()) ==
          l.exports.end()) {
        continue;
      }
      l.dropped.insert(c.allow_compaction().id());
      if (l.dropped.size() == l.exports.size()) live_.erase(it);
      break;
    }
  }
}

void Runtime::OnCommand(pb::Command c) {
  if (c.has_hello()) {
    // A new controller: if we already run dataflows, hold its replayed history until
    // InitializationComplete and reconcile then.
    reconciling_ = !live_.empty();
    buffered_.clear();
    // Frontiers are reported when they move; a new controller learns the current ones now.
    for (const auto& [id, f] : reported_) SendFrontier(id, f);
    return;
  }
  if (reconciling_) {
    if (c.has_initialization_complete()) {
      Reconcile();
    } else {
      buffered_.push_back(std::move(c));
    }
    return;
  }
  switch (c.kind_case()) {
    case pb::Command::kUpdateConfiguration: {
      bool inject = false;
      for (const auto& [k, v] : c.update_configuration().params()) {
        if (k == "log_level") {
          if (auto level = ParseLogLevel(v); level.ok()) spdlog::set_level(*level);
        }
        if (k == "debug_abort_worker" && v == RoleName(options_.role)) inject = true;
      }
      if (!inject) return;
      break;  // fault injection: worker 0 fails a check when it applies this
    }
    case pb::Command::kPeek:
      if (options_.role == Role::kMaintenance) return;  // never routed here in two-runtime mode
      peeks_[c.peek().uuid()].peek = c.peek();
      break;
    case pb::Command::kCancelPeek:
      if (!peeks_.count(c.cancel_peek().uuid())) return;  // answered already
      break;
    case pb::Command::kCreateDataflow:
    case pb::Command::kAllowCompaction:
      Track(c);
      break;
    default:
      return;  // CreateInstance, InitializationComplete, Schedule, AllowWrites: nothing to do
  }
  ++next_seq_;
  Publish(std::make_shared<const pb::Command>(std::move(c)));
}

void Runtime::Reconcile() {
  reconciling_ = false;
  std::vector<pb::Command> replay = std::move(buffered_);
  buffered_.clear();
  std::vector<bool> skip(replay.size(), false);
  std::uint32_t kept = 0, dropped = 0, built = 0;
  std::vector<std::uint64_t> doomed;
  for (auto& [seq, live] : live_) {
    bool found = false;
    for (std::size_t i = 0; i < replay.size() && !found; ++i) {
      if (!skip[i] && replay[i].has_create_dataflow() &&
          ipc::Encode(replay[i].create_dataflow().desc()) == live.fingerprint) {
        skip[i] = found = true;  // unchanged: keep it running, do not rebuild
      }
    }
    if (found) {
      ++kept;
    } else {
      ++dropped;
      doomed.push_back(seq);
    }
  }
  for (std::uint64_t seq : doomed) {
    const LiveDataflow l = live_.at(seq);
    for (const auto& e : l.exports) {
      if (l.dropped.count(e)) continue;
      pb::Command drop;
      drop.mutable_allow_compaction()->set_id(e);
      drop.mutable_allow_compaction()->mutable_frontier();
      OnCommand(std::move(drop));
    }
  }
  for (std::size_t i = 0; i < replay.size(); ++i) {
    if (skip[i]) continue;
    if (replay[i].has_create_dataflow()) ++built;
    OnCommand(std::move(replay[i]));
  }
  spdlog::info("reconciled: kept {}, dropped {}, built {} dataflows", kept, dropped, built);
  pb::Response r;
  auto* rec = r.mutable_status()->mutable_reconciled();
  rec->set_kept(kept);
  rec->set_dropped(dropped);
  rec->set_built(built);
  SendResponse(r);
}

void Runtime::OnWorkerMessage(const zmq::message_t& header, const zmq::message_t& body) {
  WorkerHeader from;
  TANDEM_CHECK(header.size() == sizeof from, "a worker message starts with its header");
  std::memcpy(&from, header.data(), sizeof from);
  auto decoded = ipc::DecodeResponse(body.to_string_view());
  TANDEM_CHECK(decoded.ok(), "a worker sent an undecodable message");
  const pb::Response& r = decoded.message;
  if (r.has_frontiers()) {
    OnWorkerFrontier(from, r.frontiers());
    return;
  }
  TANDEM_CHECK(r.has_peek_response(), "workers send frontiers and peek parts only");
  const pb::PeekResponse& part = r.peek_response();
  auto it = peeks_.find(part.uuid());
  if (it == peeks_.end()) return;
  PeekMerge& m = it->second;
  ++m.parts;
  switch (part.result_case()) {
    case pb::PeekResponse::kError:
      // The same error whichever worker answers first.
      if (m.error.empty() || ErrorLess(part.error(), m.error)) m.error = part.error();
      break;
    case pb::PeekResponse::kCanceled:
      m.canceled = true;
      break;
    default:
      for (const auto& rc : part.rows().rows()) {
        m.rows.emplace_back(FromProto(rc.row()), static_cast<std::int64_t>(rc.count()));
      }
  }
  if (m.parts < options_.workers) return;
  pb::Response out;
  auto* resp = out.mutable_peek_response();
  resp->set_uuid(part.uuid());
  if (!m.error.empty()) {
    resp->set_error(m.error);
  } else if (m.canceled) {
    resp->mutable_canceled();
  } else if (auto err = Finish(m.peek.finishing(), std::move(m.rows), resp->mutable_rows())) {
    resp->clear_rows();
    resp->set_error(*err);
  }
  peeks_.erase(it);
  SendResponse(out);
}

void Runtime::SendFrontier(const std::string& id, Frontier f) {
  pb::Response out;
  auto* fr = out.mutable_frontiers();
  fr->set_id(id);
  for (auto* e : {fr->mutable_write(), fr->mutable_input(), fr->mutable_output()}) {
    if (!f.empty()) e->add_elements(f.time());
  }
  SendResponse(out);
}

void Runtime::OnWorkerFrontier(const WorkerHeader& from, const pb::Frontiers& f) {
  const std::string& id = f.id();
  auto& per = frontiers_[{id, from.seq}];
  if (per.empty()) per.assign(options_.workers, Frontier::Minimum());
  per[from.worker] =
      f.write().elements().empty() ? Frontier::Empty() : Frontier::At(f.write().elements(0));
  // The controller sees one collection per id: the oldest dataflow's that has not closed it yet.
  // A newer dataflow's collection of a reused id (dropped, then created again) is reported once
  // the older one has reported its empty frontier.
  for (auto it = frontiers_.lower_bound({id, 0});
       it != frontiers_.end() && it->first.first == id;) {
    Frontier merged = Frontier::Empty();
    for (const Frontier& w : it->second) merged = Min(merged, w);
    auto was = reported_.find(id);
    const bool report = was == reported_.end() ? !(merged == Frontier::Minimum())
                                               : was->second < merged;  // never regress
    if (report) SendFrontier(id, merged);
    if (!merged.empty()) {
      if (report) reported_[id] = merged;
      return;
    }
    // Closed (dropped or done) on every worker: a later collection of that id starts afresh.
    reported_.erase(id);
    it = frontiers_.erase(it);
  }
}

// ---------------------------------------------------------------------------------------------
// Workers

void Runtime::SendToCommandThread(Worker& w, const pb::Response& r, std::uint64_t seq) {
  const WorkerHeader header{w.me, seq};
  w.out->send(zmq::buffer(&header, sizeof header), zmq::send_flags::sndmore);
  w.out->send(zmq::buffer(ipc::Encode(r)), zmq::send_flags::none);
}

void Runtime::WorkerMain(std::uint32_t me) {
  Worker& w = *workers_[me];
  if (options_.role == Role::kInteractive) {
    InteractiveLoop(w);
  } else {
    LockstepLoop(w);
  }
}

void Runtime::StartCompletion() noexcept {
  std::lock_guard lk(mu_);
  // Dataflows dropped in the previous iteration: every worker has let go of them now.
  std::erase_if(shared_, [](const auto& entry) { return entry.second->AllExportsDropped(); });
  const std::uint64_t from = horizon_;
  horizon_ = log_base_ + log_.size();
  const auto now = Clock::now();
  for (std::uint64_t seq = from; seq < horizon_; ++seq) {
    const pb::Command& c = *log_[seq - log_base_];
    if (c.has_create_dataflow()) {
      auto s = std::make_unique<DataflowShared>();
      s->desc = c.create_dataflow().desc();
      s->fingerprint = ipc::Encode(s->desc);
      s->as_of = s->desc.as_of().elements(0);
      s->until = s->desc.until().elements().empty() ? Frontier::Empty()
                                                    : Frontier::At(s->desc.until().elements(0));
      for (const auto& si : s->desc.source_imports()) {
        auto src = std::make_unique<SourceShared>();
        src->id = si.id();
        src->source = si.source();
        src->schema = si.schema();
        src->created = now;
        s->sources.push_back(std::move(src));
      }
      shared_[seq] = std::move(s);
    } else if (c.has_allow_compaction() && c.allow_compaction().frontier().elements().empty()) {
      for (auto& [q, s] : shared_) {
        for (const auto& e : s->desc.index_exports()) {
          if (e.id() == c.allow_compaction().id()) s->dropped_exports.insert(e.id());
        }
      }
    }
  }
}

void Runtime::TickCompletion() noexcept {
  const auto now = Clock::now();
  Clock::duration longest{};
  for (const auto& w : workers_) longest = std::max(longest, w->step_work);
  // Grow only after a step the budget held back: a short step with nothing to do (a command, a
  // poll) must not blow the budget up for the next busy one.
  const bool limited = std::any_of(shared_.begin(), shared_.end(),
                                   [](const auto& entry) { return entry.second->budget_limited; });
  if (longest > kStepBudget) {  // scale down to fit the budget at once
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(longest).count();
    step_ticks_ = std::max<Time>(1, step_ticks_ * kStepBudget.count() / us);
  } else if (longest < kStepBudget / 2 && limited) {
    step_ticks_ = std::min<Time>(kMaxStepTicks, step_ticks_ * 2);
  }
  next_wake_ = now + 1s;
  for (auto& [seq, s] : shared_)
    next_wake_ = std::min(next_wake_, s->Prepare(options_.workers, step_ticks_, now));
}

void Runtime::LockstepLoop(Worker& w) {
  for (;;) {
    start_barrier_->arrive_and_wait();
    std::vector<std::pair<std::uint64_t, std::shared_ptr<const pb::Command>>> todo;
    {
      std::lock_guard lk(mu_);
      for (std::uint64_t seq = w.applied; seq < horizon_; ++seq) {
        todo.emplace_back(seq, log_[seq - log_base_]);
      }
      w.applied = horizon_;
    }
    for (const auto& [seq, c] : todo) Apply(w, seq, *c);
    if (w.reader) ServePeeks(w);  // solo: what is readable now is not kept waiting for the step
    tick_barrier_->arrive_and_wait();
    const auto step_start = Clock::now();
    for (auto& [seq, df] : w.dataflows) df->Step();
    w.publisher->Maintain();
    w.step_work = Clock::now() - step_start;
    if (w.reader) ServePeeks(w);
    ReportFrontiers(w);
    std::unique_lock lk(mu_);
    cv_.wait_until(lk, next_wake_,
                   [&] { return log_base_ + log_.size() > horizon_ || stop_.load(); });
  }
}

void Runtime::InteractiveLoop(Worker& w) {
  for (;;) {
    // Observe the wake counter before looking for work: a command published (and its Interrupt)
    // or a slot changed after this point makes the wait below return at once.
    const std::uint32_t observed = w.reader->wake().Observe();
    std::vector<std::pair<std::uint64_t, std::shared_ptr<const pb::Command>>> todo;
    {
      std::lock_guard lk(mu_);
      const std::uint64_t end = log_base_ + log_.size();
      for (std::uint64_t seq = w.applied; seq < end; ++seq) {
        todo.emplace_back(seq, log_[seq - log_base_]);
      }
      w.applied = end;
    }
    for (const auto& [seq, c] : todo) Apply(w, seq, *c);
    ServePeeks(w);
    // Sleep until the publisher changes a slot of this row or a command arrives (Interrupt).
    shm::WakeDrain drained;
    w.reader->wake().WaitSince(
        observed, &drained,
        w.peeks.empty() ? std::chrono::nanoseconds(1s) : std::chrono::nanoseconds(50ms));
  }
}

void Runtime::Apply(Worker& w, std::uint64_t seq, const pb::Command& c) {
  auto part = [&](const std::string& uuid, const std::function<void(pb::PeekResponse*)>& fill) {
    pb::Response r;
    r.mutable_peek_response()->set_uuid(uuid);
    fill(r.mutable_peek_response());
    SendToCommandThread(w, r);
  };
  switch (c.kind_case()) {
    case pb::Command::kCreateDataflow: {
      const auto& desc = c.create_dataflow().desc();
      if (options_.role != Role::kInteractive) {
        w.dataflows[seq] = std::make_unique<DataflowInstance>(shared_.at(seq).get(), w.me,
                                                              exchange_.get(), w.publisher.get());
      }
      if (options_.role != Role::kMaintenance) {
        // Interactive: maintenance's exports become peers, whose holds we own (DESIGN §4.1).
        for (const auto& e : desc.index_exports()) {
          auto ref = w.reader->Follow({*GlobalId::Parse(e.id()), desc.as_of().elements(0)});
          TANDEM_CHECK(ref.ok(), "could not follow an index: registry row full");
          w.indexes[e.id()] = *ref;
        }
      }
      break;
    }
    case pb::Command::kAllowCompaction: {
      const std::string& id = c.allow_compaction().id();
      const Frontier f = c.allow_compaction().frontier().elements().empty()
                             ? Frontier::Empty()
                             : Frontier::At(c.allow_compaction().frontier().elements(0));
      for (auto it = w.dataflows.begin(); it != w.dataflows.end();) {
        DataflowInstance& df = *it->second;
        if (df.exports().count(id)) {
          const Status s = df.AllowCompaction(id, f);
          TANDEM_CHECK(s.ok(), "AllowCompaction of a published index failed");
        }
        const DataflowShared& sh = *shared_.at(it->first);
        // Only once this worker has applied the drop of every export: `sh` already knows every
        // drop of this iteration (StartCompletion reads the whole horizon), so asking it would
        // let go of a dataflow whose own drop comes later in the horizon — and that drop would
        // then find no dataflow, leaving the slot published forever.
        if (df.AllExportsUnpublished()) {
          // Report every collection of the dataflow closed (empty frontiers), then let go.
          std::vector<std::string> ids;
          for (const auto& s : sh.desc.source_imports()) ids.push_back(s.id());
          for (const auto& b : sh.desc.objects_to_build()) ids.push_back(b.id());
          for (const auto& e : sh.desc.index_exports()) ids.push_back(e.id());
          auto& reported = w.reported[it->first];
          for (const auto& i : ids) {
            // Once per id: an export dropped in an earlier iteration has reported its empty
            // frontier already.
            if (auto was = reported.find(i); was != reported.end() && was->second.empty()) continue;
            pb::Response r;
            r.mutable_frontiers()->set_id(i);
            SendToCommandThread(w, r, it->first);
          }
          w.reported.erase(it->first);
          it = w.dataflows.erase(it);
        } else {
          ++it;
        }
      }
      // The reading side. For a collection this runtime does not render (interactive), this only
      // moves the peer hold: never a drop of our own (DESIGN §4.1, failure 1).
      if (auto it = w.indexes.find(id); it != w.indexes.end() && w.reader) {
        if (f.empty()) {
          for (auto p = w.peeks.begin(); p != w.peeks.end();) {
            if (p->id == id) {
              part(p->uuid, [&](pb::PeekResponse* r) {
                r->set_error(id + " was dropped while the peek waited");
              });
              p = w.peeks.erase(p);
            } else {
              ++p;
            }
          }
        }
        const Status s = w.reader->AdvanceHold(it->second, f);
        TANDEM_CHECK(s.ok(), "advancing a peer hold failed");
        if (f.empty()) w.indexes.erase(it);
      }
      break;
    }
    case pb::Command::kPeek: {
      const pb::Peek& p = c.peek();
      if (!w.reader) break;
      if (!w.indexes.count(p.id())) {
        // Not rendered here and not a peer (DESIGN §4.1, failure 2).
        part(p.uuid(), [&](pb::PeekResponse* r) {
          r->set_error("not found: " + p.id() + " is not an index this replica has");
        });
        break;
      }
      Worker::PendingPeek pending;
      pending.uuid = p.uuid();
      pending.id = p.id();
      pending.t = p.timestamp();
      pending.scan = p.keys().empty();
      // "Rows whose key equals one of keys": a key given twice still selects its rows once.
      std::set<std::string> keys;
      for (const auto& k : p.keys()) {
        std::string enc = EncodeRow(FromProto(k));
        if (WorkerOf(enc, options_.workers) == w.me) keys.insert(std::move(enc));
      }
      pending.keys.assign(keys.begin(), keys.end());
      pending.mfp = Mfp(p.mfp(), 0);
      w.peeks.push_back(std::move(pending));
      break;
    }
    case pb::Command::kUpdateConfiguration:
      // Only published for fault injection (debug_abort_worker names this runtime).
      if (w.me == 0) {
        spdlog::critical("debug_abort_worker: failing a check on purpose");
        TANDEM_CHECK(false, "debug_abort_worker: fault injection requested by UpdateConfiguration");
      }
      break;
    case pb::Command::kCancelPeek: {
      for (auto p = w.peeks.begin(); p != w.peeks.end(); ++p) {
        if (p->uuid == c.cancel_peek().uuid()) {
          part(p->uuid, [](pb::PeekResponse* r) { r->mutable_canceled(); });
          w.peeks.erase(p);
          break;
        }
      }
      break;
    }
    default:
      break;
  }
}

void Runtime::ServePeeks(Worker& w) {
  for (auto p = w.peeks.begin(); p != w.peeks.end();) {
    auto answer = [&](const std::function<void(pb::PeekResponse*)>& fill) {
      pb::Response r;
      r.mutable_peek_response()->set_uuid(p->uuid);
      fill(r.mutable_peek_response());
      SendToCommandThread(w, r);
      p = w.peeks.erase(p);
    };
    auto ref = w.indexes.find(p->id);
    if (ref == w.indexes.end()) {
      answer([&](pb::PeekResponse* r) { r->set_error(p->id + " was dropped"); });
      continue;
    }
    auto snap = w.reader->Take(ref->second);
    TANDEM_CHECK(snap.ok(), "a snapshot of a followed slot failed");
    if (snap->unpublished()) {
      answer([&](pb::PeekResponse* r) { r->set_error(p->id + " was dropped"); });
      continue;
    }
    if (snap->filled() && !snap->since().LessEqual(p->t)) {
      const std::string why = p->id + ": time " + std::to_string(p->t) + " is before since " +
                              snap->since().ToString() + " (compacted; no longer exact)";
      answer([&](pb::PeekResponse* r) { r->set_error(why); });
      continue;
    }
    if (!snap->filled() || !snap->upper().Greater(p->t)) {
      ++p;  // wait for upper to pass t
      continue;
    }
    PeekRows rows;
    auto err = ReadPeekPart(*snap, p->t, p->scan, p->keys, p->mfp, &rows);
    if (!err) {
      for (const auto& [row, count] : rows.rows) {
        if (count < 0) err = "the result has a row with negative multiplicity";
      }
    }
    answer([&](pb::PeekResponse* r) {
      if (err) {
        r->set_error(*err);
        return;
      }
      auto* out = r->mutable_rows();
      for (const auto& [row, count] : rows.rows) {
        auto* rc = out->add_rows();
        for (const Datum& d : row) *rc->mutable_row()->add_datums() = ToProto(d);
        rc->set_count(static_cast<std::uint64_t>(count));
      }
    });
  }
}

void Runtime::ReportFrontiers(Worker& w) {
  for (auto& [seq, df] : w.dataflows) {
    const DataflowShared& sh = *shared_.at(seq);
    auto& reported = w.reported[seq];
    auto report = [&](const std::string& id, Frontier upper) {
      auto it = reported.find(id);
      if (it != reported.end() && !(it->second < upper)) return;
      reported[id] = upper;
      pb::Response r;
      r.mutable_frontiers()->set_id(id);
      if (!upper.empty()) r.mutable_frontiers()->mutable_write()->add_elements(upper.time());
      SendToCommandThread(w, r, seq);
    };
    for (const auto& s : sh.desc.source_imports()) report(s.id(), sh.target);
    for (const auto& b : sh.desc.objects_to_build()) report(b.id(), sh.target);
    for (const auto& [id, ref] : df->exports()) {
      report(id, sh.dropped_exports.count(id) ? Frontier::Empty() : w.publisher->upper(ref));
    }
  }
}

}  // namespace tandem::workers
