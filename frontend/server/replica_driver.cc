#include "frontend/server/replica_driver.h"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "controller/compaction.h"
#include "controller/one_shot.h"
#include "controller/session.h"
#include "ipc/client.h"

namespace tandem::frontend {

using controller::ReplicaSet;
using std::chrono::milliseconds;
using Outcome = controller::PeekRace::Outcome;

namespace {

// The longest the driver's loop sleeps: how late a deadline or a compaction may be noticed.
constexpr milliseconds kMaxPollWait{100};

}  // namespace

Result<std::unique_ptr<ReplicaDriver>> ReplicaDriver::Create(Options options,
                                                             const ReplayHistory& history) {
  // ReplicaSet::Create checks the endpoints (empty, twice, no ZeroMQ endpoint); the set itself is
  // made on the driver's thread, which owns its sockets.
  auto probe = ReplicaSet::Create(options.endpoints, {});
  if (!probe.ok()) return probe.status();
  probe->reset();
  return std::unique_ptr<ReplicaDriver>(new ReplicaDriver(std::move(options), history));
}

ReplicaDriver::ReplicaDriver(Options options, const ReplayHistory& history)
    : options_(std::move(options)), history_(history) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  MutexLock lock(mu_);
  for (const auto& e : options_.endpoints) {
    ReplicaView v;
    v.endpoint = e;
    v.state = ReplicaSet::StateName(ReplicaSet::State::kDown);
    replicas_view_.push_back(v);
  }
}

ReplicaDriver::~ReplicaDriver() {
  Stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ReplicaDriver::Start() {
  MutexLock lock(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void ReplicaDriver::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  // Requests posted but never taken (the thread never started, or stopped first).
  std::deque<Job> left;
  {
    MutexLock lock(mu_);
    left.swap(queue_);
  }
  for (auto& job : left) Answer(job.done, Status::Unavailable("the frontend is shutting down"));
}

void ReplicaDriver::Answer(Callback& done, const Status& error) {
  std::visit([&](auto& f) { f(error); }, done);
}

ReplicaDriver::RequestId ReplicaDriver::Post(Request request, Callback done,
                                             DriverClock::time_point deadline) {
  const RequestId id = next_id_++;
  Status refused = Status::Ok();
  {
    MutexLock lock(mu_);
    if (stopping_) {
      refused = Status::Unavailable("the frontend is shutting down");
    } else if (queue_.size() >= options_.max_queued) {
      refused = Status::ResourceExhausted("the replica driver's queue is full (" +
                                          std::to_string(options_.max_queued) +
                                          " requests waiting): try again");
    } else {
      Job job;
      job.id = id;
      job.request = std::move(request);
      job.done = std::move(done);
      job.deadline = deadline;
      queue_.push_back(std::move(job));
    }
  }
  if (!refused.ok()) {
    Answer(done, refused);
    return id;
  }
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  return id;
}

ReplicaDriver::RequestId ReplicaDriver::Submit(SubmitRequest request, Done<SubmitAnswer> done) {
  const auto deadline = request.deadline;
  return Post(std::move(request), std::move(done), deadline);
}
ReplicaDriver::RequestId ReplicaDriver::Peek(PeekRequest request, Done<PeekAnswer> done) {
  const auto deadline = request.deadline;
  return Post(std::move(request), std::move(done), deadline);
}
ReplicaDriver::RequestId ReplicaDriver::OneShot(OneShotRequest request, Done<PeekAnswer> done) {
  const auto deadline = request.deadline;
  return Post(std::move(request), std::move(done), deadline);
}
ReplicaDriver::RequestId ReplicaDriver::Write(WriteRequest request, Done<WriteAnswer> done) {
  const auto deadline = request.deadline;
  return Post(std::move(request), std::move(done), deadline);
}
ReplicaDriver::RequestId ReplicaDriver::LatestReadable(LatestRequest request, Done<Time> done) {
  const auto deadline = request.deadline;
  return Post(std::move(request), std::move(done), deadline);
}
ReplicaDriver::RequestId ReplicaDriver::Subscribe(SubscribeRequest request,
                                                  OnSubscribeBatch on_batch,
                                                  Done<pb::SubscribeEnd> done) {
  const auto deadline = request.deadline;
  SubscribeJob job;
  job.request = std::move(request);
  job.on_batch = std::move(on_batch);
  return Post(std::move(job), std::move(done), deadline);
}

void ReplicaDriver::Cancel(RequestId id) {
  {
    MutexLock lock(mu_);
    cancels_.insert(id);
  }
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

std::vector<ReplicaDriver::ReplicaView> ReplicaDriver::Replicas() const {
  MutexLock lock(mu_);
  return replicas_view_;
}

// ---- the driver's thread

void ReplicaDriver::OnWake() {
  std::uint64_t n = 0;
  (void)!read(wake_fd_, &n, sizeof n);
}

void ReplicaDriver::TakeQueue() {
  std::deque<Job> taken;
  std::set<RequestId> cancels;
  {
    MutexLock lock(mu_);
    taken.swap(queue_);
    cancels.swap(cancels_);
  }
  for (auto& job : taken) waiting_.push_back(std::move(job));
  if (cancels.empty()) return;
  const Status canceled = Status::Unavailable("canceled");
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (cancels.count(it->id)) {
      Answer(it->done, canceled);
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = reads_.begin(); it != reads_.end();) {
    if (!cancels.count(it->second.job.id)) {
      ++it;
      continue;
    }
    set_->CancelPeek(it->first);
    if (!it->second.result_index.empty())
      (void)set_->Broadcast({controller::Drop(it->second.result_index)});
    Answer(it->second.job.done, canceled);
    it = reads_.erase(it);
  }
  // Its SubscribeEnd (CANCELED, or what ended it first) answers it.
  for (const auto& [uuid, job] : subscribes_) {
    if (cancels.count(job.id)) set_->CancelSubscribe(uuid);
  }
}

void ReplicaDriver::Run() {
  ReplicaSet::Options o;
  o.client.timeout = options_.hello_timeout;
  o.client.curve = options_.curve;
  o.retry_interval = options_.retry_interval;
  o.wake_fd = wake_fd_;
  o.on_wake = [this] { OnWake(); };
  // The frontend is the controller of its replicas, but never takes one over: a replica that
  // maintains indexes its history does not define (made by another controller, or by a frontend
  // whose data dir this is not) is refused and left untouched — replaying it would drop them, and
  // a dropped table's rows with them (reconciliation, DESIGN §3). One-shot reads' transient ids
  // ('t…') are not state.
  o.admit = [this](const pb::Status::HelloAccepted& accepted) {
    std::set<std::string> live(live_indexes_.begin(), live_indexes_.end());
    for (const auto& c : submitted_) {
      for (const auto& x : c.create_dataflow().desc().index_exports()) live.insert(x.id());
    }
    std::vector<std::string> unknown;
    for (const auto& id : accepted.live_indexes()) {
      // A transient one-shot result ('t…'), or an index this frontend made and dropped (or
      // withdrew): reconciliation drops it, as it should.
      if (!live.count(id) && !id.starts_with('t') && !history_.Dropped(id)) unknown.push_back(id);
    }
    if (unknown.empty()) return Status::Ok();
    Status refused = Status::FailedPrecondition(
        "replica " + accepted.replica_id() + " maintains indexes this frontend's catalog does " +
        "not define (" + controller::JoinIds(unknown) +
        "): not replayed, since that would drop them; stop the controller that made them, or "
        "drop them with tandem-ctl, then restart the frontend");
    spdlog::error("{}", refused.message());
    return refused;
  };
  auto created = ReplicaSet::Create(options_.endpoints, o);
  if (!created.ok()) {  // checked by Create already
    spdlog::critical("replica driver: {}", created.status().message());
    return;
  }
  set_ = std::move(*created);
  RefreshHistory(true);
  for (std::size_t i = 0; i < set_->size(); ++i) {
    spdlog::info("replica {}: connecting to {}", i, options_.endpoints[i]);
  }
  // No Connect (it would wait, deaf to Stop): every replica starts down and the loop's first
  // polls, after retry_interval, say Hello to each.
  next_compaction_ = DriverClock::now();
  std::vector<std::uint64_t> replays(set_->size(), 0);
  std::vector<std::string> states(set_->size(), ReplicaSet::StateName(ReplicaSet::State::kDown));
  for (;;) {
    {
      MutexLock lock(mu_);
      if (stopping_) break;
    }
    RefreshHistory(false);
    TakeQueue();
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (TryStart(*it)) {
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
    if (DriverClock::now() >= next_compaction_) {
      Compact();
      next_compaction_ = DriverClock::now() + options_.compaction_interval;
    }
    milliseconds wait = kMaxPollWait;
    auto until = [&](DriverClock::time_point t) {
      wait = std::min(wait, std::max(milliseconds(0), ipc::Left(t) + milliseconds(1)));
    };
    until(next_compaction_);
    for (const auto& job : waiting_) until(job.deadline);
    for (const auto& [uuid, r] : reads_) until(r.job.deadline);
    for (const auto& [uuid, w] : writes_) until(w.job.deadline);
    for (auto& result : set_->Poll(wait)) OnPeekDecided(std::move(result));
    for (auto& event : set_->TakeSubscribeEvents()) OnSubscribeEvent(std::move(event));
    ExpireReads();
    CollectWrites();
    ResolveWrites();
    PublishReplicas();
    for (std::size_t i = 0; i < set_->size(); ++i) {
      const auto s = set_->status(i);
      const std::string state = ReplicaSet::StateName(s.state);
      if (state != states[i]) {
        if (s.state == ReplicaSet::State::kDown && !s.last_error.empty()) {
          spdlog::warn("replica {} ({}) is {}: {}", i, s.endpoint, state, s.last_error);
        } else {
          spdlog::info("replica {} ({}) is {}", i, s.endpoint, state);
        }
        states[i] = state;
      }
      if (s.replays != replays[i]) {
        spdlog::info("replica {} ({}) replayed the history ({} commands): replay {}", i, s.endpoint,
                     set_->history().size(), s.replays);
        replays[i] = s.replays;
      }
    }
  }
  const Status down = Status::Unavailable("the frontend is shutting down");
  for (auto& job : waiting_) Answer(job.done, down);
  waiting_.clear();
  for (auto& [uuid, r] : reads_) {
    set_->CancelPeek(uuid);
    Answer(r.job.done, down);
  }
  reads_.clear();
  for (auto& [uuid, w] : writes_) Answer(w.job.done, down);
  writes_.clear();
  for (auto& [uuid, job] : subscribes_) {
    set_->CancelSubscribe(uuid);  // the replica releases its hold at once
    Answer(job.done, down);
  }
  subscribes_.clear();
  set_.reset();  // Goodbye to every replica
}

void ReplicaDriver::PublishReplicas() {
  std::vector<ReplicaView> views;
  for (std::size_t i = 0; i < set_->size(); ++i) {
    const auto s = set_->status(i);
    ReplicaView v;
    v.endpoint = s.endpoint;
    v.state = ReplicaSet::StateName(s.state);
    v.sessions = s.sessions;
    v.replays = s.replays;
    v.last_error = s.last_error;
    views.push_back(std::move(v));
  }
  ready_ = set_->ready();
  MutexLock lock(mu_);
  replicas_view_ = std::move(views);
}

void ReplicaDriver::RefreshHistory(bool compaction_moved) {
  const std::uint64_t version = history_.Version();
  const bool changed = !history_loaded_ || version != history_version_;
  if (!changed && !compaction_moved) return;
  if (changed) {
    history_version_ = version;
    history_loaded_ = true;
    history_commands_ = history_.Commands();
    live_indexes_ = history_.LiveIndexIds();
    // The catalog recorded what was submitted (ReplayHistory's contract: before the next change).
    submitted_.clear();
  }
  std::vector<pb::Command> replay = history_commands_;
  // Accepted, not yet recorded by the catalog: replayed all the same.
  replay.insert(replay.end(), submitted_.begin(), submitted_.end());
  // Dropped indexes are no longer compacted.
  std::set<std::string> live(live_indexes_.begin(), live_indexes_.end());
  std::erase_if(compacted_, [&](const auto& entry) { return !live.count(entry.first); });
  // A replayed replica starts each index at the compaction the driver allowed (never reading
  // before it: those times are gone on the others too).
  for (const auto& [index, t] : compacted_) replay.push_back(controller::AllowCompaction(index, t));
  set_->SetHistory(std::move(replay));
}

bool ReplicaDriver::TryStart(Job& job) {
  if (DriverClock::now() >= job.deadline) {
    const std::string why =
        job.waiting_for.empty()
            ? (set_->ready() == 0 ? "no replica is connected" : "waiting for a replica")
            : job.waiting_for;
    Answer(job.done, Status::Unavailable(why + " (gave up after the statement's timeout)"));
    return true;
  }
  if (std::holds_alternative<SubmitRequest>(job.request)) return StartSubmit(job);
  if (std::holds_alternative<PeekRequest>(job.request)) return StartPeek(job);
  if (std::holds_alternative<OneShotRequest>(job.request)) return StartOneShot(job);
  if (std::holds_alternative<WriteRequest>(job.request)) return StartWrite(job);
  if (std::holds_alternative<SubscribeJob>(job.request)) return StartSubscribe(job);
  return AnswerLatest(job);
}

namespace {

// Whether any replica is ready or replaying (a command sent now reaches it in order).
bool AnyUp(const ReplicaSet& set) {
  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto s = set.status(i).state;
    if (s == ReplicaSet::State::kReady || s == ReplicaSet::State::kReplaying) return true;
  }
  return false;
}

// Unavailable, naming why each replica is left out, when the write ledger leaves none to read.
std::optional<Status> NoReaderHasEveryWrite(const controller::Readers& readers) {
  if (!readers.restricted || !readers.floors.empty()) return std::nullopt;
  std::string why;
  for (const auto& [i, reason] : readers.left_out) why += (why.empty() ? "" : "; ") + reason;
  return Status::Unavailable("no replica has every write this frontend acknowledged: " + why);
}

std::string RestartingOrNone(const ReplicaSet& set) {
  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto s = set.status(i);
    if (s.sessions > 0) return "no replica is connected (replica restarting: " + s.last_error + ")";
  }
  return "no replica is connected";
}

}  // namespace

bool ReplicaDriver::StartSubmit(Job& job) {
  auto& r = std::get<SubmitRequest>(job.request);
  auto& done = std::get<Done<SubmitAnswer>>(job.done);
  if (!AnyUp(*set_)) {
    job.waiting_for = RestartingOrNone(*set_);
    return false;
  }
  SubmitAnswer answer;
  bool first = true;
  for (const auto& command : r.commands) {
    // Recorded in the set at once: a replica replayed before the catalog records it gets it too.
    const bool record = r.record && !controller::IsOneShot(command);
    const bool drop =
        command.has_allow_compaction() && command.allow_compaction().frontier().elements().empty();
    auto outcome = set_->Submit(command, record, r.deadline);
    if (!outcome.ok()) {
      done(outcome.status());
      return true;
    }
    if (!outcome->refused.empty()) {
      const auto& [replica, error] = outcome->refused.front();
      done(Status::FailedPrecondition(controller::ReplicaRefusal(error)));
      return true;
    }
    if (outcome->accepted.empty() && !drop) {
      done(Status::Unavailable("no replica confirmed " + ipc::Describe(command) + " within " +
                               "the statement's timeout"));
      return true;
    }
    // A drop nobody confirmed in time was still sent (a replica that comes back is replayed the
    // history without it): the drops after it are sent too, and the Submit answers unconfirmed.
    if (record) submitted_.push_back(command);
    if (drop) {
      // Dropped: no longer compacted, even before the catalog records the drop.
      std::erase(live_indexes_, command.allow_compaction().id());
      compacted_.erase(command.allow_compaction().id());
    }
    std::set<std::size_t> accepted(outcome->accepted.begin(), outcome->accepted.end());
    if (first) {
      answer.accepted = accepted;
    } else {
      std::erase_if(answer.accepted, [&](std::size_t i) { return !accepted.count(i); });
    }
    answer.unconfirmed.insert(outcome->unconfirmed.begin(), outcome->unconfirmed.end());
    first = false;
  }
  done(std::move(answer));
  return true;
}

controller::Readers ReplicaDriver::ReadersOf(const std::set<std::string>& tables) const {
  if (writes_.empty()) return controller::ReadersOf(ledger_, tables, options_.endpoints);
  // A write not answered yet is acknowledged to no one: a read may or may not see it (the ledger
  // records it missing everywhere only so that a lost answer never loses it). It leaves no
  // replica out of a read meanwhile — else every read of a table would fail while another
  // session's write to it is in flight.
  controller::WriteLedger acknowledged;
  for (const std::string& table : tables) {
    auto entries = ledger_.find(table);
    if (entries == ledger_.end()) continue;
    auto& copy = acknowledged[table] = entries->second;
    for (auto& [endpoint, replica] : copy) {
      std::erase_if(replica.missing, [&](const std::string& uuid) { return writes_.count(uuid); });
    }
  }
  return controller::ReadersOf(acknowledged, tables, options_.endpoints);
}

std::optional<Time> ReplicaDriver::LatestOf(
    const std::string& id, const std::optional<std::set<std::size_t>>& only) const {
  std::optional<Time> best;
  for (std::size_t i = 0; i < set_->size(); ++i) {
    if (only && !only->count(i)) continue;
    if (set_->status(i).state != ReplicaSet::State::kReady) continue;
    const auto& all = set_->frontiers(i);
    auto it = all.find(id);
    if (it == all.end()) continue;
    const auto& w = it->second.write().elements();
    Time t = 0;
    if (w.empty()) {
      t = kMaxTime;  // closed: readable at every time
    } else if (w[0] == 0) {
      continue;  // no complete time yet
    } else {
      t = w[0] - 1;
    }
    if (!best || t > *best) best = t;
  }
  return best;
}

std::optional<Time> ReplicaDriver::ChooseTime(const ReadTime& time,
                                              const std::vector<std::string>& indexes,
                                              const controller::Readers& readers,
                                              std::string* why) const {
  if (time.kind == ReadTime::Kind::kExactly) return time.at;
  std::optional<std::set<std::size_t>> only;
  if (readers.restricted) {
    only.emplace();
    for (const auto& [i, floor] : readers.floors) only->insert(i);
  }
  std::optional<Time> all;
  for (const auto& id : indexes) {
    auto t = LatestOf(id, only);
    if (!t) {
      *why = "waiting for a replica to report a readable time of " + id;
      return std::nullopt;
    }
    all = all ? std::min(*all, *t) : *t;
  }
  // No input, or only closed ones (a source that emitted everything, such as the one-row
  // collection): every time reads the same; now's time keeps the read on the one timeline.
  if (!all || *all >= kMaxTime) return std::max(WallClockMs(), time.floor);
  return std::max(*all, time.floor);
}

bool ReplicaDriver::StartPeek(Job& job) {
  auto& r = std::get<PeekRequest>(job.request);
  if (set_->ready() == 0) {
    job.waiting_for = RestartingOrNone(*set_);
    return false;
  }
  const controller::Readers readers = ReadersOf(r.tables);
  if (auto none = NoReaderHasEveryWrite(readers)) {
    std::get<Done<PeekAnswer>>(job.done)(*none);
    return true;
  }
  auto t = ChooseTime(r.time, {r.index}, readers, &job.waiting_for);
  if (!t) return false;
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(controller::RandomHex(16));
  p->set_id(r.index);
  p->set_timestamp(*t);
  for (const auto& k : r.keys) *p->add_keys() = k;
  *p->mutable_mfp() = r.mfp;
  *p->mutable_finishing() = r.finishing;
  const auto at = r.time.kind == ReadTime::Kind::kExactly ? controller::ReadAt::kExactly
                                                          : controller::ReadAt::kLatest;
  if (Status s = set_->StartPeek(c, controller::TargetsAt(readers, *t, at)); !s.ok()) {
    std::get<Done<PeekAnswer>>(job.done)(s);
    return true;
  }
  const std::string uuid = p->uuid();
  InFlightRead read;
  read.job = std::move(job);
  reads_.emplace(uuid, std::move(read));
  return true;
}

bool ReplicaDriver::StartOneShot(Job& job) {
  auto& r = std::get<OneShotRequest>(job.request);
  if (set_->ready() == 0) {
    job.waiting_for = RestartingOrNone(*set_);
    return false;
  }
  const controller::Readers readers = ReadersOf(r.tables);
  std::vector<std::string> inputs;
  for (const auto& i : r.imports) inputs.push_back(i.id());
  auto t = ChooseTime(r.time, inputs, readers, &job.waiting_for);
  if (!t) return false;
  if (*t >= kMaxTime) *t = kMaxTime - 1;  // closed inputs: any time; a one-shot spans [t, t+1)
  const auto [result, build] = controller::TransientIds();
  const pb::Command create =
      controller::OneShotRead(r.debug_name, *t, r.imports, r.plan, r.key, result, build);
  auto outcome = set_->Submit(create, /*record=*/false, job.deadline);
  auto& done = std::get<Done<PeekAnswer>>(job.done);
  if (!outcome.ok()) {
    done(outcome.status());
    return true;
  }
  if (!outcome->refused.empty()) {
    // Replicas that accepted it drop it again.
    if (!outcome->accepted.empty()) (void)set_->Broadcast({controller::Drop(result)});
    done(Status::FailedPrecondition(controller::ReplicaRefusal(outcome->refused.front().second)));
    return true;
  }
  if (outcome->accepted.empty()) {
    done(
        Status::Unavailable("no replica confirmed the one-shot read within the statement's "
                            "timeout"));
    return true;
  }
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(controller::RandomHex(16));
  p->set_id(result);
  p->set_timestamp(*t);
  *p->mutable_mfp() = r.mfp;
  *p->mutable_finishing() = r.finishing;
  ReplicaSet::PeekTargets targets;
  targets.only = std::set<std::size_t>(outcome->accepted.begin(), outcome->accepted.end());
  if (Status s = set_->StartPeek(c, std::move(targets)); !s.ok()) {
    (void)set_->Broadcast({controller::Drop(result)});
    done(s);
    return true;
  }
  InFlightRead read;
  read.result_index = result;
  const std::string uuid = p->uuid();
  read.job = std::move(job);
  reads_.emplace(uuid, std::move(read));
  return true;
}

bool ReplicaDriver::StartWrite(Job& job) {
  auto& r = std::get<WriteRequest>(job.request);
  if (set_->ready() == 0) {
    job.waiting_for = RestartingOrNone(*set_);
    return false;
  }
  if (r.write.uuid().empty()) r.write.set_uuid(controller::RandomHex(16));
  // Writes a replica that is ready again still misses go to it first, in their order: a new
  // write to their table must not overtake them there.
  ResolveWrites();
  // Recorded before it is sent, missing everywhere (write_ledger.h: a lost answer never loses it).
  controller::AnsweredWrite before;
  before.uuid = r.write.uuid();
  before.sent_to.insert(options_.endpoints.begin(), options_.endpoints.end());
  controller::Apply(ledger_, r.write.id(), before);
  if (Status s = set_->StartWrite(r.write); !s.ok()) {
    controller::AnsweredWrite nowhere;  // not sent: no replica misses it
    nowhere.uuid = r.write.uuid();
    nowhere.applied_nowhere = true;
    controller::Apply(ledger_, r.write.id(), nowhere);
    std::get<Done<WriteAnswer>>(job.done)(s);
    return true;
  }
  const std::uint64_t seq = next_write_seq_++;
  write_seq_[r.write.uuid()] = seq;
  NoteSent(r.write.id(), seq);
  const std::string uuid = r.write.uuid();
  InFlightWrite w;
  w.job = std::move(job);
  writes_.emplace(uuid, std::move(w));
  return true;
}

bool ReplicaDriver::AnswerLatest(Job& job) {
  auto& r = std::get<LatestRequest>(job.request);
  if (set_->ready() == 0) {
    job.waiting_for = RestartingOrNone(*set_);
    return false;
  }
  auto t = ChooseTime(ReadTime(), r.indexes, controller::Readers(), &job.waiting_for);
  if (!t) return false;
  std::get<Done<Time>>(job.done)(*t);
  return true;
}

bool ReplicaDriver::StartSubscribe(Job& job) {
  const SubscribeRequest& r = std::get<SubscribeJob>(job.request).request;
  auto& done = std::get<Done<pb::SubscribeEnd>>(job.done);
  if (set_->ready() == 0) {
    job.waiting_for = RestartingOrNone(*set_);
    return false;
  }
  const controller::Readers readers = ReadersOf(r.tables);
  if (auto none = NoReaderHasEveryWrite(readers)) {
    done(*none);
    return true;
  }
  const bool exactly = r.time.kind == ReadTime::Kind::kExactly;
  // The replicas that may answer (as a peek at that time would be sent to: write_ledger.h).
  const ReplicaSet::PeekTargets targets =
      controller::TargetsAt(readers, exactly ? r.time.at : r.time.floor,
                            exactly ? controller::ReadAt::kExactly : controller::ReadAt::kLatest);
  // The freshest of them: the one whose frontier of the index is latest.
  std::optional<std::size_t> chosen;
  std::optional<Time> freshest;
  for (std::size_t i = 0; i < set_->size(); ++i) {
    if (targets.only && !targets.only->count(i)) continue;
    if (set_->status(i).state != ReplicaSet::State::kReady) continue;
    const auto latest = LatestOf(r.index, std::set<std::size_t>{i});
    if (!latest) continue;
    if (!freshest || *latest > *freshest) {
      freshest = latest;
      chosen = i;
    }
  }
  if (!chosen) {
    job.waiting_for = "waiting for a replica to report a readable time of " + r.index;
    return false;
  }
  Time as_of = 0;
  if (exactly) {
    as_of = r.time.at;
  } else {
    // A closed index reads the same at every time: now's, on the one timeline.
    as_of = *freshest >= kMaxTime ? WallClockMs() : *freshest;
    as_of = std::max(as_of, r.time.floor);
    if (auto floor = readers.floors.find(*chosen); floor != readers.floors.end()) {
      as_of = std::max(as_of, floor->second);
    }
  }
  if (as_of >= kMaxTime) as_of = kMaxTime - 1;
  const pb::Command command =
      ipc::MakeSubscribe(controller::RandomHex(16), r.index, as_of, r.snapshot, r.up_to);
  if (Status s = set_->StartSubscribe(command, *chosen); !s.ok()) {
    if (s.code() == StatusCode::kUnavailable && DriverClock::now() < job.deadline) {
      job.waiting_for = s.message();  // its replica went down just now: another may take it
      return false;
    }
    done(s);
    return true;
  }
  const std::string uuid = command.subscribe().uuid();
  subscribes_.emplace(uuid, std::move(job));
  return true;
}

void ReplicaDriver::OnSubscribeEvent(ReplicaSet::SubscribeEvent event) {
  auto it = subscribes_.find(event.uuid);
  if (it == subscribes_.end()) return;
  if (event.batch) {
    auto& on_batch = std::get<SubscribeJob>(it->second.request).on_batch;
    if (on_batch) on_batch(std::move(*event.batch));
    return;
  }
  Job job = std::move(it->second);
  subscribes_.erase(it);
  auto& done = std::get<Done<pb::SubscribeEnd>>(job.done);
  if (event.end) {
    done(std::move(*event.end));
  } else if (event.refused) {
    done(Status::FailedPrecondition(controller::ReplicaRefusal(*event.refused)));
  } else {
    done(Status::Unavailable("the replica streaming it (" + options_.endpoints[event.replica] +
                             ") went away: " + event.gone +
                             "; a subscribe is not moved to another replica, whose times differ"));
  }
}

void ReplicaDriver::OnPeekDecided(ReplicaSet::PeekResult result) {
  auto it = reads_.find(result.uuid);
  if (it == reads_.end()) return;
  InFlightRead read = std::move(it->second);
  reads_.erase(it);
  if (!read.result_index.empty()) (void)set_->Broadcast({controller::Drop(read.result_index)});
  auto& done = std::get<Done<PeekAnswer>>(read.job.done);
  switch (result.outcome) {
    case Outcome::kRows: {
      PeekAnswer a;
      a.response = std::move(*result.answer);
      a.timestamp = result.timestamp;
      a.replica = result.replica;
      done(std::move(a));
      return;
    }
    case Outcome::kError:
      done(Status::DataError(result.answer->error()));
      return;
    case Outcome::kRefused:
      done(Status::FailedPrecondition(controller::ReplicaRefusal(*result.refused)));
      return;
    case Outcome::kNoReplica:
      // Every replica asked went away (restarting): asked again of those that come back, until
      // the deadline. A one-shot is built again on them.
      if (DriverClock::now() < read.job.deadline) {
        read.job.waiting_for = "the replicas asked went away (replica restarting)";
        waiting_.push_back(std::move(read.job));
        return;
      }
      done(
          Status::Unavailable("every replica asked went away before answering (replica "
                              "restarting)"));
      return;
    case Outcome::kTimedOut:
      done(Status::Unavailable("no replica answered within the statement's timeout"));
      return;
    case Outcome::kCanceled:
      done(Status::Unavailable("canceled"));
      return;
  }
}

void ReplicaDriver::ExpireReads() {
  std::vector<std::string> due;
  for (const auto& [uuid, r] : reads_) {
    if (DriverClock::now() >= r.job.deadline) due.push_back(uuid);
  }
  for (const auto& uuid : due) {
    // Decides it now: an Error or refusal already received beats a timeout.
    OnPeekDecided(set_->AwaitPeek(uuid, DriverClock::now()));
  }
}

void ReplicaDriver::CollectWrites() {
  for (auto it = writes_.begin(); it != writes_.end();) {
    std::optional<ReplicaSet::WriteResult> result = set_->TakeWrite(it->first);
    if (!result && DriverClock::now() >= it->second.job.deadline) {
      result = set_->ExpireWrite(it->first);
    }
    if (!result) {
      ++it;
      continue;
    }
    auto& done = std::get<Done<WriteAnswer>>(it->second.job.done);
    const pb::WriteTable& write = std::get<WriteRequest>(it->second.job.request).write;
    controller::AnsweredWrite answered = controller::AnsweredBy(*set_, *result);
    answered.sent_to.insert(options_.endpoints.begin(), options_.endpoints.end());
    controller::Apply(ledger_, write.id(), answered);
    const std::uint64_t seq = write_seq_[write.uuid()];
    write_seq_.erase(write.uuid());
    bool acknowledged = false, refused = !result->refused.empty();
    for (const auto& [i, response] : result->answers) {
      if (response.result_case() == pb::WriteResponse::kTime)
        acknowledged = true;
      else
        refused = true;
    }
    // Kept for the replicas that miss it when it was applied somewhere, or when nobody said no
    // (its outcome is unknown: 08007). A write a replica refused and none took is not applied
    // anywhere it matters: the client is told so, and it is not sent again.
    if ((!result->unanswered.empty() || !result->not_sent.empty()) && (acknowledged || !refused)) {
      KeepUnresolved(seq, write);
    }
    WriteAnswer a;
    std::string errors;
    for (const auto& [i, response] : result->answers) {
      if (response.result_case() == pb::WriteResponse::kTime) {
        a.acknowledged[i] = response.time();
        a.time = std::max(a.time, static_cast<Time>(response.time()));
      } else {
        errors += (errors.empty() ? "" : "; ") + response.error();
      }
    }
    for (const auto& [i, e] : result->refused) {
      errors += (errors.empty() ? "" : "; ") + controller::ReplicaRefusal(e);
    }
    if (!a.acknowledged.empty()) {
      done(std::move(a));
    } else if (!errors.empty()) {
      done(Status::FailedPrecondition(errors));
    } else {
      done(Status::Unavailable(
          "no replica acknowledged the write in time: it may or may not have been applied; the "
          "frontend sends it again (applied at most once) to replicas as they come back"));
    }
    it = writes_.erase(it);
  }
}

namespace {

// Unresolved writes kept for replicas that miss them; beyond it the oldest is forgotten (that
// replica then stays out of reads of its table, as the ledger says).
constexpr std::size_t kMaxUnresolvedBytes = std::size_t{64} << 20;

}  // namespace

void ReplicaDriver::NoteSent(const std::string& table, std::uint64_t seq) {
  auto& sent = sent_seq_[table];
  sent.resize(set_->size(), 0);
  for (std::size_t i = 0; i < set_->size(); ++i) {
    if (set_->status(i).state == ReplicaSet::State::kReady) sent[i] = std::max(sent[i], seq);
  }
}

void ReplicaDriver::KeepUnresolved(std::uint64_t seq, const pb::WriteTable& write) {
  auto [it, inserted] = unresolved_.try_emplace(seq);
  if (!inserted) return;
  it->second.write = write;
  unresolved_bytes_ += write.ByteSizeLong();
  while (unresolved_bytes_ > kMaxUnresolvedBytes && !unresolved_.empty()) {
    auto oldest = unresolved_.begin();
    if (oldest->second.in_flight) break;
    spdlog::warn("write {} to {} is no longer kept for replicas that miss it (over {} bytes)",
                 oldest->second.write.uuid(), oldest->second.write.id(), kMaxUnresolvedBytes);
    unresolved_bytes_ -= oldest->second.write.ByteSizeLong();
    unresolved_.erase(oldest);
  }
}

void ReplicaDriver::ResolveWrites() {
  for (auto it = unresolved_.begin(); it != unresolved_.end();) {
    const std::uint64_t seq = it->first;
    UnresolvedWrite& u = it->second;
    const std::string& table = u.write.id();
    const std::string& uuid = u.write.uuid();
    auto forget = [&] {
      unresolved_bytes_ -= u.write.ByteSizeLong();
      return unresolved_.erase(it);
    };
    if (u.in_flight) {
      std::optional<ReplicaSet::WriteResult> result = set_->TakeWrite(uuid);
      if (!result && DriverClock::now() >= u.retry_deadline) result = set_->ExpireWrite(uuid);
      if (!result) {
        ++it;
        continue;
      }
      u.in_flight = false;
      controller::AnsweredWrite answered = controller::AnsweredBy(*set_, *result);
      controller::Apply(ledger_, table, answered);
      // Refused (its table was dropped, say): nothing to resolve.
      if (!result->refused.empty() && answered.acknowledged.empty()) {
        it = forget();
        continue;
      }
    }
    // Which replicas still miss it, and whether one that is ready can still be sent it.
    auto entries = ledger_.find(table);
    if (entries == ledger_.end()) {  // the table was dropped
      it = forget();
      continue;
    }
    // A resend goes to every ready replica (ReplicaSet::StartWrite): harmless where it was
    // applied (its uuid), right where it is missing with nothing newer to its table sent there,
    // and wrong where it is missing behind a newer write (an upsert applied out of order) — so
    // it waits while such a replica is ready.
    const auto& sent = sent_seq_[table];
    bool resolvable = false, send_now = false, blocked = false;
    for (std::size_t i = 0; i < set_->size(); ++i) {
      auto e = entries->second.find(options_.endpoints[i]);
      const bool missing = e == entries->second.end() || e->second.missing.count(uuid) > 0;
      if (!missing) continue;
      const bool ready = set_->status(i).state == ReplicaSet::State::kReady;
      if (i < sent.size() && sent[i] > seq) {
        blocked = blocked || ready;
        continue;
      }
      resolvable = true;
      send_now = send_now || ready;
    }
    send_now = send_now && !blocked;
    if (!resolvable) {
      it = forget();
      continue;
    }
    if (send_now && set_->StartWrite(u.write).ok()) {
      NoteSent(table, seq);
      u.in_flight = true;
      u.retry_deadline = DriverClock::now() + options_.hello_timeout;
    }
    ++it;
  }
}

void ReplicaDriver::Compact() {
  std::vector<pb::Command> batch;
  const auto window = static_cast<Time>(options_.history_window.count());
  for (const auto& id : live_indexes_) {
    auto latest = LatestOf(id, std::nullopt);
    if (!latest || *latest >= kMaxTime || *latest <= window) continue;
    const Time target = *latest - window;
    auto [it, inserted] = compacted_.try_emplace(id, 0);
    if (!inserted && it->second >= target) continue;
    it->second = target;
    batch.push_back(controller::AllowCompaction(id, target));
  }
  if (batch.empty()) return;
  (void)set_->Broadcast(batch);
  RefreshHistory(true);
  if (options_.on_compaction) {
    for (const auto& c : batch) {
      options_.on_compaction(c.allow_compaction().id(),
                             c.allow_compaction().frontier().elements(0));
    }
  }
}

}  // namespace tandem::frontend
