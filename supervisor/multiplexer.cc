#include "supervisor/multiplexer.h"

#include <algorithm>

#include <cctype>
#include <set>

#include "base/check.h"

namespace tandem::supervisor {

namespace {

// "too_slow" for TOO_SLOW: the label of an end's reason in tandem_subscribe_ends_total.
std::string ReasonLabel(ipc::pb::SubscribeEnd::Reason reason) {
  std::string name = ipc::pb::SubscribeEnd::Reason_Name(reason);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.empty() ? "unspecified" : name;
}

}  // namespace

std::vector<Role> Multiplexer::Route(const ipc::pb::Command& command) const {
  if (solo_ != nullptr) return {Role::kSolo};
  switch (command.kind_case()) {
    case ipc::pb::Command::kPeek:
    case ipc::pb::Command::kCancelPeek:
    case ipc::pb::Command::kSubscribe:
    case ipc::pb::Command::kCancelSubscribe:
      return {Role::kInteractive};
    case ipc::pb::Command::kWriteTable:
      return {Role::kMaintenance};
    default:
      return {Role::kMaintenance, Role::kInteractive};
  }
}

void Multiplexer::SendTo(Role to, const std::string& bytes, bool peek) {
  RuntimeStream* stream = to == Role::kSolo          ? solo_
                          : to == Role::kMaintenance ? maintenance_
                                                     : interactive_;
  TANDEM_CHECK(stream != nullptr, "the multiplexer routed to a runtime this mode does not have");
  stream->Send(bytes, peek);
}

void Multiplexer::Forward(const ipc::pb::Command& command, const std::string& encoded,
                          Clock::time_point now, SessionId session) {
  TANDEM_CHECK(session == kControllerSession || command.has_peek() || command.has_cancel_peek() ||
                   command.has_write_table() || command.has_subscribe() ||
                   command.has_cancel_subscribe(),
               "an observer session sends only Peek, CancelPeek, Subscribe, CancelSubscribe and "
               "WriteTable");
  ExpireOrphans(now);
  if (command.has_hello()) EndSession(kControllerSession, now);
  if (command.has_subscribe()) {
    const ipc::pb::Subscribe& sub = command.subscribe();
    TANDEM_CHECK(sub.has_as_of(), "the supervisor fills in a subscribe's as_of before forwarding");
    auto& mine = subscribes_by_session_[session];
    TANDEM_CHECK(mine.count(sub.uuid()) == 0, "one live subscribe per uuid and session");
    std::string wire = ipc::SubscribeWireUuid(session, next_subscribe_++, sub.uuid());
    ipc::pb::Command copy = command;
    copy.mutable_subscribe()->set_uuid(wire);
    const std::string bytes = ipc::Encode(copy);
    const std::uint64_t first_lower =
        sub.snapshot() || sub.as_of() == UINT64_MAX ? sub.as_of() : sub.as_of() + 1;
    mine[sub.uuid()] = wire;
    subscribes_.insert_or_assign(wire, Subscription{session, sub.uuid(), sub.id(), first_lower});
    for (Role to : Route(command)) SendTo(to, bytes, false);
    return;
  }
  if (command.has_cancel_subscribe()) {
    // Nothing live under that uuid (ended, or never subscribed): nothing to cancel, no answer.
    auto mine = subscribes_by_session_.find(session);
    if (mine == subscribes_by_session_.end()) return;
    auto wire = mine->second.find(command.cancel_subscribe().uuid());
    if (wire == mine->second.end()) return;
    Subscription& tracked = subscribes_.at(wire->second);
    if (tracked.cancel_sent) return;  // its End (CANCELED, or another reason) is on the way
    tracked.cancel_sent = true;
    ForwardCancelSubscribe(wire->second);
    return;
  }
  if (command.has_write_table()) {
    std::string wire_uuid = ipc::WriteWireUuid(next_write_++, command.write_table().uuid());
    ipc::pb::Command copy = command;
    copy.mutable_write_table()->set_uuid(wire_uuid);
    const std::string bytes = ipc::Encode(copy);
    writes_.insert_or_assign(std::move(wire_uuid), Tracked{now, session});
    for (Role to : Route(command)) SendTo(to, bytes, false);
    return;
  }
  const std::string* uuid = command.has_peek()          ? &command.peek().uuid()
                            : command.has_cancel_peek() ? &command.cancel_peek().uuid()
                                                        : nullptr;
  std::string wire_uuid;
  std::string rewritten;
  if (uuid) {
    wire_uuid = WireUuid(session, *uuid);
    if (wire_uuid != *uuid) {
      ipc::pb::Command copy = command;
      if (copy.has_peek()) {
        copy.mutable_peek()->set_uuid(wire_uuid);
      } else {
        copy.mutable_cancel_peek()->set_uuid(wire_uuid);
      }
      rewritten = ipc::Encode(copy);
    }
  }
  if (command.has_peek()) {
    auto it = peeks_.find(wire_uuid);
    if (it == peeks_.end() || it->second.orphaned) ++per_session_[session];
    peeks_.insert_or_assign(wire_uuid, Tracked{now, session});
  }
  const std::string& bytes = rewritten.empty() ? encoded : rewritten;
  for (Role to : Route(command)) SendTo(to, bytes, uuid != nullptr);
}

void Multiplexer::ExpireOrphans(Clock::time_point now) {
  while (!orphans_.empty() && now - orphans_.front().first >= kOrphanLifetime) {
    auto it = peeks_.find(orphans_.front().second);
    if (it != peeks_.end() && it->second.orphaned) peeks_.erase(it);
    orphans_.pop_front();
  }
  while (!orphaned_writes_.empty() && now - orphaned_writes_.front().first >= kOrphanLifetime) {
    auto it = writes_.find(orphaned_writes_.front().second);
    if (it != writes_.end() && it->second.orphaned) writes_.erase(it);
    orphaned_writes_.pop_front();
  }
  while (!ended_subscribes_order_.empty() &&
         now - ended_subscribes_order_.front().first >= kOrphanLifetime) {
    ended_subscribes_.erase(ended_subscribes_order_.front().second);
    ended_subscribes_order_.pop_front();
  }
}

void Multiplexer::ForwardCancelSubscribe(const std::string& wire) {
  ipc::pb::Command cancel;
  cancel.mutable_cancel_subscribe()->set_uuid(wire);
  const std::string bytes = ipc::Encode(cancel);
  for (Role to : Route(cancel)) SendTo(to, bytes, false);
}

void Multiplexer::EndSubscribe(std::unordered_map<std::string, Subscription>::iterator it,
                               const std::string& reason, bool cancel, const char* drop_reason,
                               Clock::time_point now) {
  const std::string wire = it->first;
  if (auto mine = subscribes_by_session_.find(it->second.session);
      mine != subscribes_by_session_.end()) {
    mine->second.erase(it->second.client_uuid);
    if (mine->second.empty()) subscribes_by_session_.erase(mine);
  }
  ++subscribe_ends_[reason];
  if (cancel) {
    if (!it->second.cancel_sent) ForwardCancelSubscribe(wire);
    ended_subscribes_[wire] = drop_reason;
    ended_subscribes_order_.emplace_back(now, wire);
  }
  subscribes_.erase(it);
}

bool Multiplexer::Subscribed(SessionId session, const std::string& uuid) const {
  auto mine = subscribes_by_session_.find(session);
  return mine != subscribes_by_session_.end() && mine->second.count(uuid) > 0;
}

bool Multiplexer::UuidInUse(SessionId session, const std::string& uuid) const {
  // Ended, but its End has not reached the session yet: the uuid is not free (a new subscribe's
  // batches could reach the session before the old one's End).
  return Subscribed(session, uuid) ||
         std::any_of(pending_ends_.begin(), pending_ends_.end(), [&](const PendingEnd& p) {
           return p.session == session && p.end.subscribe_end().uuid() == uuid;
         });
}

std::size_t Multiplexer::pending_ends(SessionId session) const {
  return static_cast<std::size_t>(
      std::count_if(pending_ends_.begin(), pending_ends_.end(),
                    [&](const PendingEnd& p) { return p.session == session; }));
}

void Multiplexer::Delivered(const std::string& wire, std::uint64_t upper, std::size_t updates) {
  (void)updates;
  auto it = subscribes_.find(wire);
  if (it != subscribes_.end() && upper > it->second.delivered) it->second.delivered = upper;
}

void Multiplexer::TooSlow(const std::string& wire, Clock::time_point now) {
  auto it = subscribes_.find(wire);
  if (it == subscribes_.end()) return;
  const SessionId session = it->second.session;
  const std::string uuid = it->second.client_uuid;
  EndSubscribe(it, "too_slow", true, "subscribe_ended", now);
  pending_ends_.push_back(
      {session,
       ipc::MakeSubscribeEnd(uuid, ipc::pb::SubscribeEnd::TOO_SLOW,
                             "too slow: the session's pipe was full (it did not read its answers "
                             "fast enough), so the supervisor ended the subscribe")});
}

void Multiplexer::DeferEnd(SessionId session, ipc::pb::Response end) {
  pending_ends_.push_back({session, std::move(end)});
}

void Multiplexer::FlushEnds(const std::function<bool(SessionId, const ipc::pb::Response&)>& send) {
  std::set<SessionId> blocked;  // its pipe refused one: its later Ends wait behind it
  for (auto it = pending_ends_.begin(); it != pending_ends_.end();) {
    if (blocked.count(it->session) == 0 && send(it->session, it->end)) {
      it = pending_ends_.erase(it);
      continue;
    }
    blocked.insert(it->session);
    ++it;
  }
}

std::vector<Multiplexer::SubscribeInfo> Multiplexer::LiveSubscribes() const {
  std::vector<SubscribeInfo> out;
  out.reserve(subscribes_.size());
  for (const auto& [wire, s] : subscribes_) out.push_back({wire, s.id, s.delivered});
  return out;
}

void Multiplexer::EndSession(SessionId session, Clock::time_point now) {
  // Nobody waits for their answers any more: cancel them, so that a peek waiting for an upper
  // does not stay in the runtimes for ever (observers come and go with every read command).
  for (auto& [wire_uuid, tracked] : peeks_) {
    if (tracked.session != session || tracked.orphaned) continue;
    ipc::pb::Command cancel;
    cancel.mutable_cancel_peek()->set_uuid(wire_uuid);
    const std::string bytes = ipc::Encode(cancel);
    for (Role to : Route(cancel)) SendTo(to, bytes, true);
    tracked.orphaned = true;
    orphans_.emplace_back(now, wire_uuid);
  }
  per_session_.erase(session);
  // A write cannot be taken back (it may be durable already): only its answer is dropped.
  for (auto& [wire_uuid, tracked] : writes_) {
    if (tracked.session != session || tracked.orphaned) continue;
    tracked.orphaned = true;
    orphaned_writes_.emplace_back(now, wire_uuid);
  }
  // Its subscribes end: cancelled in the runtimes, their answers dropped. The controller is told
  // (SESSION_ENDED) after its next HelloAccepted; an ended observer is told nothing.
  std::vector<std::string> wires;
  if (auto mine = subscribes_by_session_.find(session); mine != subscribes_by_session_.end()) {
    for (const auto& [uuid, wire] : mine->second) wires.push_back(wire);
  }
  for (const std::string& wire : wires) {
    auto it = subscribes_.find(wire);
    const std::string uuid = it->second.client_uuid;
    EndSubscribe(it, "session_ended", true, "session_ended", now);
    if (session == kControllerSession) {
      pending_ends_.push_back(
          {session, ipc::MakeSubscribeEnd(
                        uuid, ipc::pb::SubscribeEnd::SESSION_ENDED,
                        "the controller's session ended: a new Hello started another epoch, "
                        "and the subscribes of the previous one ended")});
    }
  }
  if (session != kControllerSession) {
    std::erase_if(pending_ends_, [&](const PendingEnd& e) { return e.session == session; });
  }
}

void Multiplexer::Untrack(SessionId session) {
  auto it = per_session_.find(session);
  if (it != per_session_.end() && --it->second == 0) per_session_.erase(it);
}

Multiplexer::Verdict Multiplexer::OnResponse(Role from, ipc::pb::Response* response,
                                             Clock::time_point now) {
  (void)from;
  Verdict v;
  if (response->has_write_response()) return OnWriteResponse(response, now);
  if (response->has_subscribe_batch() || response->has_subscribe_end()) {
    return OnSubscribeResponse(response);
  }
  if (!response->has_peek_response()) return v;
  auto it = peeks_.find(response->peek_response().uuid());
  if (it == peeks_.end()) {
    v.forward = false;
    // Answered already, or its session ended (or, for the controller, said Hello since).
    v.drop_reason = "unknown_peek";
    return v;
  }
  if (it->second.orphaned) {
    v.forward = false;
    v.drop_reason = "session_ended";
    peeks_.erase(it);
    return v;
  }
  v.to = it->second.session;
  v.peek_latency = now - it->second.forwarded_at;
  if (std::string as_sent = UuidAsSent(v.to, it->first); as_sent != it->first) {
    response->mutable_peek_response()->set_uuid(std::move(as_sent));
    v.rewritten = true;
  }
  peeks_.erase(it);
  Untrack(v.to);
  return v;
}

Multiplexer::Verdict Multiplexer::OnSubscribeResponse(ipc::pb::Response* response) {
  Verdict v;
  const bool end = response->has_subscribe_end();
  const std::string& wire =
      end ? response->subscribe_end().uuid() : response->subscribe_batch().uuid();
  auto it = subscribes_.find(wire);
  if (it == subscribes_.end()) {
    v.forward = false;
    auto ended = ended_subscribes_.find(wire);
    if (ended == ended_subscribes_.end()) {
      v.drop_reason = "unknown_subscribe";  // ended long ago, or never forwarded
      return v;
    }
    v.drop_reason = ended->second;
    if (end) ended_subscribes_.erase(ended);  // the runtime's last word on it
    return v;
  }
  v.to = it->second.session;
  v.subscribe = it->first;
  if (!end) {
    response->mutable_subscribe_batch()->set_uuid(it->second.client_uuid);
    return v;
  }
  response->mutable_subscribe_end()->set_uuid(it->second.client_uuid);
  // Its one End: forgotten now (the supervisor delivers it, deferred if need be).
  EndSubscribe(it, ReasonLabel(response->subscribe_end().reason()), false, nullptr,
               Clock::time_point{});
  return v;
}

Multiplexer::Verdict Multiplexer::OnWriteResponse(ipc::pb::Response* response,
                                                  Clock::time_point now) {
  Verdict v;
  auto it = writes_.find(response->write_response().uuid());
  if (it == writes_.end()) {
    v.forward = false;
    v.drop_reason = "unknown_write";  // answered already, or expired after its session ended
    return v;
  }
  if (it->second.orphaned) {
    v.forward = false;
    v.drop_reason = "session_ended";
    writes_.erase(it);
    return v;
  }
  v.to = it->second.session;
  v.write_latency = now - it->second.forwarded_at;
  response->mutable_write_response()->set_uuid(std::string(ipc::ClientUuidOfWrite(it->first)));
  writes_.erase(it);
  return v;
}

}  // namespace tandem::supervisor
