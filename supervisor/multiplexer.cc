#include "supervisor/multiplexer.h"

#include "base/check.h"

namespace tandem::supervisor {

namespace {

constexpr char kControllerEscape[] = "~c:";

std::string NamespacePrefix(SessionId session) {
  return session == kControllerSession ? kControllerEscape : "~o" + std::to_string(session) + ":";
}

}  // namespace

std::string WireUuid(SessionId session, std::string_view uuid) {
  // Observers' wire uuids begin "~o<digits>:", escaped controller ones "~c:", the controller's
  // others do not begin with '~': no two (session, uuid) pairs share a wire uuid.
  if (session == kControllerSession && !uuid.starts_with('~')) return std::string(uuid);
  return NamespacePrefix(session) + std::string(uuid);
}

std::string UuidAsSent(SessionId session, std::string_view wire) {
  const std::string prefix = NamespacePrefix(session);
  if (wire.starts_with(prefix)) wire.remove_prefix(prefix.size());
  return std::string(wire);
}

std::vector<Role> Multiplexer::Route(const ipc::pb::Command& command) const {
  if (!two_runtime_) return {Role::kSolo};
  switch (command.kind_case()) {
    case ipc::pb::Command::kPeek:
    case ipc::pb::Command::kCancelPeek:
      return {Role::kInteractive};
    default:
      return {Role::kMaintenance, Role::kInteractive};
  }
}

void Multiplexer::Forward(const ipc::pb::Command& command, const std::string& encoded,
                          Clock::time_point now, SessionId session) {
  TANDEM_CHECK(session == kControllerSession || command.has_peek() || command.has_cancel_peek(),
               "an observer session sends only Peek and CancelPeek");
  if (command.has_hello()) EndSession(kControllerSession);
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
  if (command.has_peek()) peeks_[wire_uuid] = {now, session};
  const std::string& bytes = rewritten.empty() ? encoded : rewritten;
  for (Role to : Route(command)) send_(to, bytes);
}

void Multiplexer::EndSession(SessionId session) {
  std::erase_if(peeks_, [&](const auto& entry) { return entry.second.session == session; });
}

Multiplexer::Verdict Multiplexer::OnResponse(Role from, ipc::pb::Response* response,
                                             Clock::time_point now) {
  (void)from;
  Verdict v;
  if (!response->has_peek_response()) return v;
  auto it = peeks_.find(response->peek_response().uuid());
  if (it == peeks_.end()) {
    v.forward = false;
    // Answered already, or its session ended (or, for the controller, said Hello since).
    v.drop_reason = "unknown_peek";
    return v;
  }
  v.to = it->second.session;
  v.peek_latency = now - it->second.forwarded_at;
  response->mutable_peek_response()->set_uuid(UuidAsSent(v.to, it->first));
  peeks_.erase(it);
  return v;
}

}  // namespace tandem::supervisor
