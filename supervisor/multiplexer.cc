#include "supervisor/multiplexer.h"

#include "base/check.h"

namespace tandem::supervisor {

std::vector<Role> Multiplexer::Route(const ipc::pb::Command& command) const {
  if (!two_runtime_) return {Role::kSolo};
  switch (command.kind_case()) {
    case ipc::pb::Command::kPeek:
    case ipc::pb::Command::kCancelPeek:
      return {Role::kInteractive};
    case ipc::pb::Command::kWriteTable:
      return {Role::kMaintenance};
    default:
      return {Role::kMaintenance, Role::kInteractive};
  }
}

void Multiplexer::Forward(const ipc::pb::Command& command, const std::string& encoded,
                          Clock::time_point now, SessionId session) {
  TANDEM_CHECK(session == kControllerSession || command.has_peek() || command.has_cancel_peek() ||
                   command.has_write_table(),
               "an observer session sends only Peek, CancelPeek and WriteTable");
  ExpireOrphans(now);
  if (command.has_hello()) EndSession(kControllerSession, now);
  if (command.has_write_table()) {
    std::string wire_uuid = ipc::WriteWireUuid(next_write_++, command.write_table().uuid());
    ipc::pb::Command copy = command;
    copy.mutable_write_table()->set_uuid(wire_uuid);
    const std::string bytes = ipc::Encode(copy);
    writes_.insert_or_assign(std::move(wire_uuid), Tracked{now, session});
    for (Role to : Route(command)) send_(to, bytes);
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
  for (Role to : Route(command)) send_(to, bytes);
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
}

void Multiplexer::EndSession(SessionId session, Clock::time_point now) {
  // Nobody waits for their answers any more: cancel them, so that a peek waiting for an upper
  // does not stay in the runtimes for ever (observers come and go with every read command).
  for (auto& [wire_uuid, tracked] : peeks_) {
    if (tracked.session != session || tracked.orphaned) continue;
    ipc::pb::Command cancel;
    cancel.mutable_cancel_peek()->set_uuid(wire_uuid);
    const std::string bytes = ipc::Encode(cancel);
    for (Role to : Route(cancel)) send_(to, bytes);
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
  response->mutable_peek_response()->set_uuid(UuidAsSent(v.to, it->first));
  peeks_.erase(it);
  Untrack(v.to);
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
