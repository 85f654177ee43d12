#include "supervisor/multiplexer.h"

namespace tandem::supervisor {

const char* RuntimeName(RuntimeId id) {
  switch (id) {
    case RuntimeId::kMaintenance:
      return "maintenance";
    case RuntimeId::kInteractive:
      return "interactive";
    case RuntimeId::kSolo:
      return "solo";
  }
  return "?";
}

std::vector<RuntimeId> Multiplexer::Route(const ipc::pb::Command& command) const {
  if (!two_runtime_) return {RuntimeId::kSolo};
  switch (command.kind_case()) {
    case ipc::pb::Command::kPeek:
    case ipc::pb::Command::kCancelPeek:
      return {RuntimeId::kInteractive};
    default:
      return {RuntimeId::kMaintenance, RuntimeId::kInteractive};
  }
}

void Multiplexer::Forward(const ipc::pb::Command& command, const std::string& encoded,
                          Clock::time_point now) {
  if (command.has_hello()) peeks_.clear();
  if (command.has_peek()) peeks_[command.peek().uuid()] = now;
  for (RuntimeId to : Route(command)) send_(to, encoded);
}

Multiplexer::Verdict Multiplexer::OnResponse(RuntimeId from, const ipc::pb::Response& response,
                                             Clock::time_point now) {
  (void)from;
  Verdict v;
  if (!response.has_peek_response()) return v;
  auto it = peeks_.find(response.peek_response().uuid());
  if (it == peeks_.end()) {
    v.forward = false;
    v.drop_reason = "unknown_peek";  // answered already, or forwarded before the last Hello
    return v;
  }
  v.peek_latency = now - it->second;
  peeks_.erase(it);
  return v;
}

}  // namespace tandem::supervisor
