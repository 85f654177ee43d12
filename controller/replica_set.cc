#include "controller/replica_set.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "ipc/table_write.h"

namespace tandem::controller {

using ipc::AnswersWrite;
using ipc::ControllerClient;
using ipc::Describe;
using ipc::DescribeWrite;
using ipc::Left;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Result<std::vector<std::string>> ParseEndpointList(const std::string& list) {
  std::vector<std::string> endpoints;
  std::set<std::string> seen;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    const std::string one =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (one.empty()) {
      return Status::InvalidArgument("endpoint list \"" + list + "\": element " +
                                     std::to_string(endpoints.size() + 1) +
                                     " is empty (expected A,B,C)");
    }
    if (!seen.insert(one).second) {
      // Two sessions to one replica would supersede each other, and its answers would count twice.
      return Status::InvalidArgument("endpoint list \"" + list + "\": " + one +
                                     " is given twice (each replica once)");
    }
    endpoints.push_back(one);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return endpoints;
}

struct ReplicaSet::Replica {
  std::string endpoint;
  std::unique_ptr<ControllerClient> client;
  State state = State::kDown;
  Clock::time_point since = Clock::now();
  Clock::time_point hello_sent;
  bool retry = true;  // false once superseded: another controller owns the replica now
  std::uint64_t sessions = 0, replays = 0;
  std::string last_error;
  pb::Status::HelloAccepted accepted;
  std::map<std::string, pb::Frontiers> frontiers;
  // Barriers sent on this session and not yet answered, oldest first: 0 is the replay's, any
  // other number the Submit of that sequence number. A CommandError belongs to the oldest.
  std::deque<std::uint64_t> barriers;
};

namespace {

pb::Command Barrier() {
  pb::Command c;
  c.mutable_update_configuration();
  return c;
}

bool IsBarrierAnswer(const pb::Response& r) {
  return r.has_status() && r.status().has_configuration_applied() &&
         r.status().configuration_applied().applied().empty() &&
         r.status().configuration_applied().needs_restart().empty();
}

}  // namespace

const char* ReplicaSet::StateName(State s) {
  switch (s) {
    case State::kConnecting:
      return "connecting";
    case State::kReplaying:
      return "replaying";
    case State::kReady:
      return "up";
    case State::kDown:
      return "down";
  }
  return "?";
}

ReplicaSet::ReplicaSet(std::vector<std::string> endpoints, const Options& options)
    : options_(options) {
  options_.client.end_on_disconnect = true;
  // Goodbye is sent here, without blocking (~ReplicaSet): the client's own would block behind a
  // replica whose queue is full.
  options_.client.goodbye = false;
  options_.client.send_hwm = options.send_hwm;
  for (auto& e : endpoints) {
    auto r = std::make_unique<Replica>();
    r->endpoint = std::move(e);
    replicas_.push_back(std::move(r));
  }
}

Result<std::unique_ptr<ReplicaSet>> ReplicaSet::Create(const std::vector<std::string>& endpoints,
                                                       const Options& options) {
  if (endpoints.empty()) return Status::InvalidArgument("no replica endpoint given");
  std::set<std::string> seen;
  for (const auto& e : endpoints) {
    if (e.empty()) return Status::InvalidArgument("an empty replica endpoint");
    if (!seen.insert(e).second) {
      return Status::InvalidArgument("replica endpoint " + e + " is given twice");
    }
    // Checked now, so that a typo is a usage error rather than a replica that is never up.
    auto probe = ControllerClient::Create(e, {});
    if (!probe.ok()) {
      return Status::InvalidArgument("\"" + e +
                                     "\" is not a ZeroMQ endpoint (expected e.g. "
                                     "tcp://127.0.0.1:2101): " +
                                     probe.status().message());
    }
  }
  return std::unique_ptr<ReplicaSet>(new ReplicaSet(endpoints, options));
}

ReplicaSet::~ReplicaSet() {
  pb::Command bye;
  bye.mutable_goodbye();
  for (auto& r : replicas_) {
    if (!r->client || !r->client->connected() || r->client->lost()) continue;
    try {
      (void)r->client->TrySend(bye);
    } catch (const zmq::error_t&) {
    }
  }
}

void ReplicaSet::StartSession(std::size_t i) {
  Replica& r = *replicas_[i];
  r.client.reset();
  r.frontiers.clear();
  r.barriers.clear();
  // The replay is sent at once, without waiting (SendTo): the queue must hold the whole history
  // and what follows it, or a long history could never be replayed (a full queue resets).
  ControllerClient::Options client = options_.client;
  const std::size_t room = history_.size() + static_cast<std::size_t>(options_.send_hwm);
  client.send_hwm = static_cast<int>(std::min<std::size_t>(room, INT32_MAX));
  r.client = std::make_unique<ControllerClient>(r.endpoint, client);
  r.state = State::kConnecting;
  r.since = r.hello_sent = Clock::now();
  r.client->StartHello("rs" + std::to_string(++nonce_) + "-" +
                           std::to_string(Clock::now().time_since_epoch().count()),
                       options_.observer, options_.observer && options_.writer);
}

void ReplicaSet::MarkDown(std::size_t i, const std::string& why) {
  Replica& r = *replicas_[i];
  r.state = State::kDown;
  r.since = Clock::now();
  r.last_error = why;
  r.barriers.clear();
  r.client.reset();
  for (auto& [uuid, race] : races_) race.race.Gone(i);
  // A write it was sent is unanswered there: it may or may not have been applied.
  for (auto& [uuid, write] : writes_) {
    if (write.waiting.erase(i)) write.result.unanswered.push_back(i);
  }
  // A Submit waiting for its verdict stops waiting for this replica (unconfirmed).
  if (auto v = verdicts_.find(i); v != verdicts_.end()) v->second.gone = true;
  // Its subscribes ended with its session (the supervisor ends them too, SESSION_ENDED, on a
  // connection we no longer read).
  for (auto it = subscribes_.begin(); it != subscribes_.end();) {
    if (it->second.replica != i) {
      ++it;
      continue;
    }
    SubscribeEvent e;
    e.uuid = it->first;
    e.replica = i;
    e.gone = r.last_error;
    subscribe_events_.push_back(std::move(e));
    it = subscribes_.erase(it);
  }
}

bool ReplicaSet::SendTo(std::size_t i, const pb::Command& command) {
  Replica& r = *replicas_[i];
  if (!r.client) return false;
  bool sent = false;
  try {
    sent = r.client->TrySend(command);
  } catch (const zmq::error_t& e) {
    MarkDown(i, std::string("sending to ") + r.endpoint + " failed: " + e.what());
    return false;
  }
  if (!sent) {
    // Its queue is full: it stopped reading. Dropping the session bounds what we hold for it;
    // the replay on its next session gives it everything it missed.
    MarkDown(i, "the replica at " + r.endpoint + " stopped reading (its send queue of " +
                    std::to_string(options_.send_hwm) + " messages is full); reconnecting");
  }
  return sent;
}

void ReplicaSet::OnAccepted(std::size_t i) {
  Replica& r = *replicas_[i];
  r.accepted = r.client->accepted();
  ++r.sessions;
  r.since = Clock::now();
  if (options_.observer) {
    if (!r.client->observer()) {
      MarkDown(i, "the replica at " + r.endpoint +
                      " does not support observer sessions (Hello{observer})");
      r.retry = false;
      return;
    }
    r.state = State::kReady;
    AskPending(i);
    return;
  }
  if (options_.admit) {
    if (Status s = options_.admit(r.accepted); !s.ok()) {
      MarkDown(i, s.message());
      r.retry = false;  // the same replica would be refused again
      return;
    }
  }
  // Invariant 1: the history, InitializationComplete, then what is being submitted now.
  r.state = State::kReplaying;
  for (const auto& c : history_) {
    if (!SendTo(i, c)) return;
  }
  pb::Command done;
  done.mutable_initialization_complete();
  if (!SendTo(i, done)) return;
  if (submitting_ && !SendTo(i, *submitting_)) return;
  if (!SendTo(i, Barrier())) return;
  r.barriers.push_back(0);
}

std::uint64_t ReplicaSet::AskedAt(const Race& race, std::size_t i) {
  const std::uint64_t at = race.peek.peek().timestamp();
  const auto floor = race.targets.at_least.find(i);
  return floor == race.targets.at_least.end() ? at : std::max(at, floor->second);
}

pb::Command ReplicaSet::PeekFor(const Race& race, std::size_t i) {
  pb::Command peek = race.peek;
  peek.mutable_peek()->set_timestamp(AskedAt(race, i));
  return peek;
}

bool ReplicaSet::AskPeek(std::size_t i, Race& race) {
  if (race.targets.only && !race.targets.only->count(i)) return true;
  const bool sent = AskedAt(race, i) == race.peek.peek().timestamp() ? SendTo(i, race.peek)
                                                                     : SendTo(i, PeekFor(race, i));
  if (sent) race.race.Asked(i);
  return sent;
}

void ReplicaSet::AskPending(std::size_t i) {
  for (auto& [uuid, race] : races_) {
    if (race.race.decided() || race.race.waiting().count(i)) continue;
    if (!AskPeek(i, race)) return;
  }
}

void ReplicaSet::Handle(std::size_t i, pb::Response& resp) {
  Replica& r = *replicas_[i];
  if (resp.has_status() && resp.status().has_hello_accepted()) {
    if (r.state == State::kConnecting && r.client->connected()) OnAccepted(i);
    return;
  }
  if (HandleSubscribe(i, resp)) return;
  if (resp.has_peek_response()) {
    auto it = races_.find(resp.peek_response().uuid());
    if (it != races_.end()) it->second.race.Answered(i, resp.peek_response());
    return;  // else: a late answer of a decided (cancelled) peek
  }
  if (resp.has_write_response()) {
    auto it = writes_.find(resp.write_response().uuid());
    if (it != writes_.end() && it->second.waiting.erase(i)) {
      it->second.result.answers[i] = resp.write_response();
    }
    return;  // else: a late answer of an expired write
  }
  if (resp.has_frontiers()) {
    r.frontiers[resp.frontiers().id()] = resp.frontiers();
    return;
  }
  if (resp.has_command_error()) {
    const pb::CommandError& e = resp.command_error();
    if (e.what() == "Hello") {
      MarkDown(i, "the replica at " + r.endpoint + " refused Hello: " + e.why());
      return;
    }
    if (e.what() == "Peek") {
      // The refusal names the peek as Describe() prints it (uuid prefix, id, time: this
      // replica's).
      for (auto& [uuid, race] : races_) {
        if (e.why().rfind(Describe(PeekFor(race, i)), 0) == 0) {
          race.race.Refused(i, e);
          break;
        }
      }
      return;
    }
    if (e.what() == "CancelPeek") return;
    // A refused write names it (DescribeWrite: uuid, table, updates).
    for (auto& [uuid, write] : writes_) {
      if (write.waiting.count(i) && AnswersWrite(resp, write.command.write_table())) {
        write.waiting.erase(i);
        write.result.refused.emplace_back(i, e);
        return;
      }
    }
    const std::uint64_t owner = r.barriers.empty() ? 0 : r.barriers.front();
    if (owner != 0 && owner == submit_seq_) {
      verdicts_[i].errors.push_back(e);
    } else {
      r.last_error = (owner == 0 && r.state == State::kReplaying ? "replay: " : "") + e.what() +
                     " refused: " + e.why();
    }
    return;
  }
  if (IsBarrierAnswer(resp)) {
    if (r.barriers.empty()) return;  // an UpdateConfiguration of someone else's? not ours
    const std::uint64_t owner = r.barriers.front();
    r.barriers.pop_front();
    if (owner == 0 && r.state == State::kReplaying) {
      r.state = State::kReady;
      r.since = Clock::now();
      ++r.replays;
      AskPending(i);
    } else if (owner != 0 && owner == submit_seq_) {
      verdicts_[i].done = true;
    }
  }
}

bool ReplicaSet::HandleSubscribe(std::size_t i, pb::Response& resp) {
  if (resp.has_subscribe_batch() || resp.has_subscribe_end()) {
    const std::string& uuid =
        resp.has_subscribe_batch() ? resp.subscribe_batch().uuid() : resp.subscribe_end().uuid();
    auto it = subscribes_.find(uuid);
    // Not ours (ended already), or another replica's uuid: dropped.
    if (it == subscribes_.end() || it->second.replica != i) return true;
    SubscribeEvent e;
    e.uuid = uuid;
    e.replica = i;
    if (resp.has_subscribe_batch()) {
      e.batch = std::move(*resp.mutable_subscribe_batch());
    } else {
      e.end = std::move(*resp.mutable_subscribe_end());
      subscribes_.erase(it);
    }
    subscribe_events_.push_back(std::move(e));
    return true;
  }
  if (!resp.has_command_error()) return false;
  const pb::CommandError& error = resp.command_error();
  if (error.what() == "CancelSubscribe") return true;
  if (error.what() != "Subscribe") return false;
  // The refusal names the subscribe as Describe() prints it (uuid prefix, id, as_of).
  for (auto it = subscribes_.begin(); it != subscribes_.end(); ++it) {
    if (it->second.replica != i || error.why().rfind(Describe(it->second.command), 0) != 0) {
      continue;
    }
    SubscribeEvent e;
    e.uuid = it->first;
    e.replica = i;
    e.refused = error;
    subscribe_events_.push_back(std::move(e));
    subscribes_.erase(it);
    return true;
  }
  // A Subscribe refused before it was ours to track (another session's?): never a Submit's.
  return true;
}

void ReplicaSet::Pump(milliseconds limit) {
  const auto now = Clock::now();
  milliseconds wait = limit;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    Replica& r = *replicas_[i];
    if (r.state == State::kDown && r.retry) {
      const auto due = r.since + options_.retry_interval;
      if (now >= due) {
        StartSession(i);
      } else {
        wait =
            std::min(wait, std::chrono::duration_cast<milliseconds>(due - now) + milliseconds(1));
      }
    } else if (r.state == State::kConnecting && now - r.hello_sent > options_.client.timeout) {
      MarkDown(i, "no answer to Hello from " + r.endpoint + " within " +
                      std::to_string(options_.client.timeout.count()) + " ms");
    }
  }
  std::vector<zmq::pollitem_t> items;
  for (auto& r : replicas_) {
    if (r->client) r->client->AppendPollItems(items);
  }
  if (options_.wake_fd >= 0) items.push_back({nullptr, options_.wake_fd, ZMQ_POLLIN, 0});
  try {
    zmq::poll(items.data(), items.size(), std::max(wait, milliseconds(0)));
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
    return;
  }
  if (options_.wake_fd >= 0 && (items.back().revents & ZMQ_POLLIN) && options_.on_wake) {
    options_.on_wake();
  }
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    for (;;) {
      Replica& r = *replicas_[i];
      if (!r.client) break;
      auto resp = r.client->Receive(milliseconds(0));
      if (!resp) {
        if (r.client->superseded()) {
          r.retry = false;  // another controller took over: do not take it back
          MarkDown(i, r.client->EndReason());
        } else if (r.client->lost()) {
          MarkDown(i, r.client->EndReason());
        } else if (!r.client->handshake_error().empty() && !r.client->connected()) {
          MarkDown(i, "the replica at " + r.endpoint +
                          " refused the connection: " + r.client->handshake_error());
        }
        break;
      }
      Handle(i, *resp);
    }
  }
  SettleDecided();
}

void ReplicaSet::SettleDecided() {
  for (auto it = races_.begin(); it != races_.end();) {
    Race& race = it->second;
    if (!race.race.decided()) {
      ++it;
      continue;
    }
    pb::Command cancel;
    cancel.mutable_cancel_peek()->set_uuid(it->first);
    for (std::size_t i : race.race.TakeCancels()) {
      if (replicas_[i]->client) (void)SendTo(i, cancel);
    }
    if (race.race.outcome() != PeekRace::Outcome::kCanceled) {
      decided_.push_back(ResultOf(it->first, race));
    }
    it = races_.erase(it);
  }
}

ReplicaSet::PeekResult ReplicaSet::ResultOf(const std::string& uuid, const Race& r) const {
  PeekResult result;
  result.uuid = uuid;
  result.outcome = r.race.outcome();
  result.replica = r.race.replica();
  result.answer = r.race.answer();
  result.refused = r.race.refused();
  result.other_errors = r.race.other_errors();
  result.timestamp = AskedAt(r, result.replica);
  return result;
}

Status ReplicaSet::Connect(Clock::time_point deadline) {
  for (std::size_t i = 0; i < replicas_.size(); ++i) StartSession(i);
  std::vector<bool> failed(replicas_.size(), false);
  std::optional<Clock::time_point> first_ready;
  // Once one replica serves, the others get this much longer: a replica that is down must not
  // hold up every command for a whole Hello timeout (it joins later, with a replay).
  constexpr milliseconds kGrace{500};
  for (;;) {
    bool settled = true;
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
      const State s = replicas_[i]->state;
      if (s == State::kDown) failed[i] = true;
      if (s != State::kReady && !failed[i]) settled = false;
    }
    if (ready() > 0 && !first_ready) first_ready = Clock::now();
    if (settled || Left(deadline).count() <= 0) break;
    if (first_ready && Clock::now() - *first_ready >= kGrace) break;
    Pump(std::min(Left(deadline), milliseconds(50)));
  }
  if (ready() > 0) return Status::Ok();
  std::string why;
  for (const auto& r : replicas_) {
    why += (why.empty() ? "" : "; ") + r->endpoint + ": " +
           (r->last_error.empty() ? std::string(StateName(r->state)) : r->last_error);
  }
  return Status::Unavailable("no replica is up (" + why + ")");
}

Result<ReplicaSet::SubmitOutcome> ReplicaSet::Submit(const pb::Command& command, bool record,
                                                     Clock::time_point deadline) {
  const std::uint64_t seq = ++submit_seq_;
  verdicts_.clear();
  std::vector<std::size_t> sent;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const State s = replicas_[i]->state;
    if (s != State::kReady && s != State::kReplaying) continue;
    if (!SendTo(i, command) || !SendTo(i, Barrier())) continue;
    replicas_[i]->barriers.push_back(seq);
    verdicts_[i];
    sent.push_back(i);
  }
  if (sent.empty()) {
    return Status::Unavailable("no replica is up to send " + Describe(command) + " to");
  }
  submitting_ = &command;
  for (;;) {
    bool all = true;
    for (std::size_t i : sent) {
      if (!verdicts_[i].done && !verdicts_[i].gone) all = false;
    }
    if (all || Left(deadline).count() <= 0) break;
    Pump(std::min(Left(deadline), milliseconds(50)));
  }
  submitting_ = nullptr;
  SubmitOutcome out;
  for (std::size_t i : sent) {
    const Verdict& v = verdicts_[i];
    for (const auto& e : v.errors) out.refused.emplace_back(i, e);
    if (v.done && v.errors.empty()) {
      out.accepted.push_back(i);
    } else if (!v.done && v.errors.empty()) {
      out.unconfirmed.push_back(i);
    }
  }
  verdicts_.clear();
  if (record && out.refused.empty() && !out.accepted.empty()) history_.push_back(command);
  return out;
}

std::size_t ReplicaSet::Broadcast(const std::vector<pb::Command>& commands) {
  std::size_t sent = 0;
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const State s = replicas_[i]->state;
    if (s != State::kReady && s != State::kReplaying) continue;
    bool ok = true;
    for (const auto& c : commands) {
      if (!(ok = SendTo(i, c))) break;
    }
    // Owner 0, as the replay's: a refusal before its answer is no Submit's, and its answer
    // changes nothing (a replaying replica's own replay barrier is answered first).
    if (!ok || !SendTo(i, Barrier())) continue;
    replicas_[i]->barriers.push_back(0);
    ++sent;
  }
  return sent;
}

Status ReplicaSet::StartPeek(const pb::Command& peek, std::optional<std::size_t> only) {
  PeekTargets targets;
  if (only) targets.only = std::set<std::size_t>{*only};
  return StartPeek(peek, std::move(targets));
}

Status ReplicaSet::StartPeek(const pb::Command& peek, PeekTargets targets) {
  if (!peek.has_peek()) return Status::InvalidArgument("StartPeek: not a Peek");
  auto out_of_range = [&](std::size_t i) {
    return Status::InvalidArgument("replica " + std::to_string(i) + " does not exist (0 to " +
                                   std::to_string(replicas_.size() - 1) + ")");
  };
  if (targets.only) {
    for (std::size_t i : *targets.only) {
      if (i >= replicas_.size()) return out_of_range(i);
    }
  }
  for (const auto& [i, at] : targets.at_least) {
    if (i >= replicas_.size()) return out_of_range(i);
  }
  const std::string& uuid = peek.peek().uuid();
  if (races_.count(uuid)) return Status::InvalidArgument("peek " + uuid + " is in flight already");
  Race& race = races_[uuid];
  race.peek = peek;
  race.targets = std::move(targets);
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i]->state == State::kReady) (void)AskPeek(i, race);
  }
  return Status::Ok();
}

ReplicaSet::PeekResult ReplicaSet::AwaitPeek(const std::string& uuid, Clock::time_point deadline) {
  for (;;) {
    for (auto it = decided_.begin(); it != decided_.end(); ++it) {
      if (it->uuid == uuid) {
        PeekResult r = std::move(*it);
        decided_.erase(it);
        return r;
      }
    }
    auto it = races_.find(uuid);
    if (it == races_.end()) {
      PeekResult r;
      r.uuid = uuid;
      r.outcome = PeekRace::Outcome::kCanceled;  // unknown, or cancelled by the caller
      return r;
    }
    if (Left(deadline).count() <= 0) {
      it->second.race.Expire();
      SettleDecided();
      continue;
    }
    Pump(std::min(Left(deadline), milliseconds(100)));
  }
}

void ReplicaSet::CancelPeek(const std::string& uuid) {
  auto it = races_.find(uuid);
  if (it != races_.end()) {
    it->second.race.Cancel();
    SettleDecided();
  }
  decided_.erase(std::remove_if(decided_.begin(), decided_.end(),
                                [&](const PeekResult& r) { return r.uuid == uuid; }),
                 decided_.end());
}

std::vector<ReplicaSet::PeekResult> ReplicaSet::Poll(milliseconds limit) {
  Pump(limit);
  std::vector<PeekResult> out(std::make_move_iterator(decided_.begin()),
                              std::make_move_iterator(decided_.end()));
  decided_.clear();
  return out;
}

Status ReplicaSet::StartWrite(const pb::WriteTable& write) {
  const std::string& uuid = write.uuid();
  if (writes_.count(uuid))
    return Status::InvalidArgument("write " + uuid + " is in flight already");
  Write w;
  *w.command.mutable_write_table() = write;
  w.result.uuid = uuid;
  // In the map before anything is sent: a replica whose send fails is marked down, and so
  // unanswered, through MarkDown.
  Write& sent = writes_[uuid] = std::move(w);
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i]->state != State::kReady) {
      sent.result.not_sent.push_back(i);
      continue;
    }
    sent.waiting.insert(i);
    if (!SendTo(i, sent.command)) {
      // MarkDown counted it unanswered; it was never sent.
      std::erase(sent.result.unanswered, i);
      sent.result.not_sent.push_back(i);
    }
  }
  if (sent.waiting.empty()) {
    writes_.erase(uuid);
    return Status::Unavailable("no replica is up to send " + DescribeWrite(write) + " to");
  }
  return Status::Ok();
}

std::optional<ReplicaSet::WriteResult> ReplicaSet::TakeWrite(const std::string& uuid) {
  auto it = writes_.find(uuid);
  if (it == writes_.end() || !it->second.waiting.empty()) return std::nullopt;
  WriteResult result = std::move(it->second.result);
  writes_.erase(it);
  return result;
}

ReplicaSet::WriteResult ReplicaSet::ExpireWrite(const std::string& uuid) {
  auto it = writes_.find(uuid);
  if (it == writes_.end()) {
    WriteResult none;
    none.uuid = uuid;
    return none;
  }
  WriteResult result = std::move(it->second.result);
  for (std::size_t i : it->second.waiting) result.unanswered.push_back(i);
  writes_.erase(it);
  return result;
}

Status ReplicaSet::StartSubscribe(const pb::Command& subscribe, std::size_t replica) {
  if (!subscribe.has_subscribe()) return Status::InvalidArgument("StartSubscribe: not a Subscribe");
  if (!subscribe.subscribe().has_as_of()) {
    return Status::InvalidArgument("StartSubscribe: a Subscribe without as_of");
  }
  if (replica >= replicas_.size()) {
    return Status::InvalidArgument("replica " + std::to_string(replica) + " does not exist");
  }
  const std::string& uuid = subscribe.subscribe().uuid();
  if (subscribes_.count(uuid)) {
    return Status::InvalidArgument("subscribe " + uuid + " is live already");
  }
  if (replicas_[replica]->state != State::kReady) {
    return Status::Unavailable("replica " + std::to_string(replica) + " (" +
                               replicas_[replica]->endpoint + ") is not ready");
  }
  // In the map before it is sent: a send that fails marks the replica down, and MarkDown would
  // report it gone — but it was never sent, so it is taken out again and refused here.
  LiveSubscribe live;
  live.command = subscribe;
  live.replica = replica;
  subscribes_.emplace(uuid, std::move(live));
  if (!SendTo(replica, subscribe)) {
    subscribes_.erase(uuid);
    std::erase_if(subscribe_events_, [&](const SubscribeEvent& e) { return e.uuid == uuid; });
    return Status::Unavailable("replica " + std::to_string(replica) + " (" +
                               replicas_[replica]->endpoint +
                               ") went down: " + replicas_[replica]->last_error);
  }
  return Status::Ok();
}

void ReplicaSet::CancelSubscribe(const std::string& uuid) {
  auto it = subscribes_.find(uuid);
  if (it == subscribes_.end() || it->second.cancel_sent) return;
  it->second.cancel_sent = true;
  pb::Command cancel;
  cancel.mutable_cancel_subscribe()->set_uuid(uuid);
  // A failed send marks the replica down: the subscribe's last event is then `gone`.
  (void)SendTo(it->second.replica, cancel);
}

std::vector<ReplicaSet::SubscribeEvent> ReplicaSet::TakeSubscribeEvents() {
  std::vector<SubscribeEvent> out(std::make_move_iterator(subscribe_events_.begin()),
                                  std::make_move_iterator(subscribe_events_.end()));
  subscribe_events_.clear();
  return out;
}

ReplicaSet::ReplicaStatus ReplicaSet::status(std::size_t i) const {
  const Replica& r = *replicas_.at(i);
  ReplicaStatus s;
  s.endpoint = r.endpoint;
  s.state = r.state;
  s.replica_id = r.accepted.replica_id();
  s.sessions = r.sessions;
  s.replays = r.replays;
  s.last_error = r.last_error;
  s.since = r.since;
  return s;
}

const pb::Status::HelloAccepted& ReplicaSet::accepted(std::size_t i) const {
  return replicas_.at(i)->accepted;
}

const std::map<std::string, pb::Frontiers>& ReplicaSet::frontiers(std::size_t i) const {
  return replicas_.at(i)->frontiers;
}

std::size_t ReplicaSet::ready() const {
  return static_cast<std::size_t>(std::count_if(
      replicas_.begin(), replicas_.end(), [](const auto& r) { return r->state == State::kReady; }));
}

}  // namespace tandem::controller
