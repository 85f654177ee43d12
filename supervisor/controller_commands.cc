// A command's way in through the controller endpoint, after OnReadable read it: decode → the
// peer's session → validation → admission (the in-flight bounds, the subscribe limit) → the
// multiplexer's Forward. Every refusal is a CommandError that changes nothing.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "supervisor/controller_endpoint.h"
#include "supervisor/metric_names.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

void ControllerEndpoint::OnMessage(const std::string& peer, const std::string& payload) {
  auto decoded = ipc::DecodeCommand(payload);
  if (!decoded.ok()) {
    metrics_.Inc(kMalformed, {{"reason", decoded.error.label}});
    SendToPeer(peer, ipc::MakeCommandError("message", decoded.error.reason));
    return;
  }
  const ipc::pb::Command& cmd = decoded.message;
  const std::string name = ipc::CommandName(cmd);

  if (cmd.has_goodbye()) {
    // From anyone, never answered, never forwarded: the sender is leaving.
    metrics_.Inc(kCommands, {{"command", name}, {"result", "accepted"}});
    EndSession(peer, true);
    return;
  }
  if (cmd.has_hello()) {
    if (cmd.hello().observer()) {
      OnObserverHello(peer, cmd);
    } else {
      OnControllerHello(peer, cmd, payload);
    }
    return;
  }
  switch (sessions_.StandingOf(peer)) {
    case Sessions::Standing::kNoHello:
      RefuseCommand(peer, cmd, "before_hello", ipc::Describe(cmd) + ": send Hello first");
      return;
    case Sessions::Standing::kSuperseded:
      RefuseCommand(peer, cmd, "superseded",
                    ipc::Describe(cmd) + ": this controller was superseded by a newer Hello");
      return;
    case Sessions::Standing::kObserver:
      OnObserverCommand(peer, cmd, payload);
      return;
    case Sessions::Standing::kController:
      break;
  }
  if (Status s = validator_.Validate(cmd); !s.ok()) {
    RefuseCommand(peer, cmd, "validation", s.message());
    return;
  }
  if (cmd.has_write_table() && !AdmitWrite(peer, cmd)) return;
  if (cmd.has_subscribe() || cmd.has_cancel_subscribe()) {
    ForwardSubscribeCommand(peer, cmd, payload, kControllerSession, validator_.catalog());
    return;
  }
  if (cmd.has_initialization_complete() && last_complete_) {
    // The runtimes reconcile now: what the replica maintains is the replayed epoch.
    last_complete_.reset();
  }
  if (cmd.has_update_configuration()) {
    HandleUpdateConfiguration(peer, cmd);
    return;
  }
  if (!AdmitPeek(peer, cmd, kControllerSession)) return;
  mux_.Forward(cmd, payload, Clock::now());
  NoteForwarded(cmd);
  metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
}

void ControllerEndpoint::OnObserverCommand(const std::string& peer, const ipc::pb::Command& cmd,
                                           const std::string& payload) {
  const std::string name = ipc::CommandName(cmd);
  const bool writer = sessions_.IsWriter(peer);
  // A writer session's writes are checked against what the replica runs (the catalog), like its
  // peeks.
  if (Status s = validator_.ValidateObserver(cmd, writer, Catalog()); !s.ok()) {
    const bool allowed = cmd.has_peek() || cmd.has_cancel_peek() || cmd.has_subscribe() ||
                         cmd.has_cancel_subscribe() || (writer && cmd.has_write_table());
    RefuseCommand(peer, cmd, allowed ? "validation" : "read_only", s.message());
    return;
  }
  if (cmd.has_subscribe() || cmd.has_cancel_subscribe()) {
    ForwardSubscribeCommand(peer, cmd, payload, sessions_.ObserverSession(peer), Catalog());
    return;
  }
  if (cmd.has_write_table() ? !AdmitWrite(peer, cmd)
                            : !AdmitPeek(peer, cmd, sessions_.ObserverSession(peer))) {
    return;
  }
  mux_.Forward(cmd, payload, Clock::now(), sessions_.ObserverSession(peer));
  metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
}

bool ControllerEndpoint::AdmitPeek(const std::string& peer, const ipc::pb::Command& cmd,
                                   SessionId session) {
  if (cmd.has_cancel_peek()) {
    // Nothing waits under that uuid (answered, or never sent): nothing to cancel, and not
    // forwarding it keeps a flood of cancels from queueing behind a busy runtime.
    if (mux_.Waiting(session, cmd.cancel_peek().uuid())) return true;
    metrics_.Inc(kCommands, {{"command", "CancelPeek"}, {"result", "not_waiting"}});
    return false;
  }
  if (!cmd.has_peek()) return true;
  const auto& g = config_.guards;
  mux_.ExpireOrphans(Clock::now());
  if (mux_.outstanding_peeks(session) >= g.max_peeks_per_session) {
    Refuse(peer, "Peek", "too_many_peeks",
           ipc::Describe(cmd) + ": this session has " +
               std::to_string(mux_.outstanding_peeks(session)) +
               " peeks waiting for their answers, the limit (--max-peeks-per-session " +
               std::to_string(g.max_peeks_per_session) + "); send it again after some answers");
    return false;
  }
  if (mux_.outstanding_peeks() >= g.max_peeks_in_flight) {
    Refuse(peer, "Peek", "too_many_peeks",
           ipc::Describe(cmd) + ": the replica has " + std::to_string(mux_.outstanding_peeks()) +
               " peeks waiting for their answers, the limit (--max-peeks-in-flight " +
               std::to_string(g.max_peeks_in_flight) + "); send it again after some answers");
    return false;
  }
  return true;
}

bool ControllerEndpoint::AdmitWrite(const std::string& peer, const ipc::pb::Command& cmd) {
  const std::uint32_t limit = config_.guards.max_writes_in_flight;
  mux_.ExpireOrphans(Clock::now());
  if (mux_.outstanding_writes() < limit) return true;
  RefuseCommand(peer, cmd, "too_many_writes",
                ipc::Describe(cmd) + ": the replica has " +
                    std::to_string(mux_.outstanding_writes()) +
                    " writes waiting for their answers, the limit (--max-writes-in-flight " +
                    std::to_string(limit) + "); send it again after some answers");
  return false;
}

void ControllerEndpoint::ForwardSubscribeCommand(const std::string& peer,
                                                 const ipc::pb::Command& cmd,
                                                 const std::string& payload, SessionId session,
                                                 const ipc::Catalog& catalog) {
  const std::string name = ipc::CommandName(cmd);
  if (cmd.has_cancel_subscribe()) {
    // Nothing live under that uuid (ended, or never subscribed): forwarded nowhere, no answer.
    if (!mux_.Subscribed(session, cmd.cancel_subscribe().uuid())) {
      metrics_.Inc(kCommands, {{"command", name}, {"result", "not_live"}});
      return;
    }
    mux_.Forward(cmd, payload, Clock::now(), session);
    metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
    return;
  }
  const ipc::pb::Subscribe& sub = cmd.subscribe();
  if (mux_.UuidInUse(session, sub.uuid())) {
    RefuseCommand(peer, cmd, "subscribe_uuid_live",
                  ipc::Describe(cmd) +
                      ": this session has a live subscribe with this uuid, or one whose end it "
                      "has not read yet (CancelSubscribe it, or use another uuid)");
    return;
  }
  const auto limit = static_cast<std::size_t>(config_.params.GetInt(kMaxSubscribesPerSession));
  // Ends still waiting for this session's pipe count too: a session that does not read cannot
  // pile up ended subscribes by sending new ones.
  const std::size_t held = mux_.live_subscribes(session) + mux_.pending_ends(session);
  if (held >= limit) {
    RefuseCommand(peer, cmd, "too_many_subscribes",
                  ipc::Describe(cmd) + ": this session has " + std::to_string(held) +
                      " live subscribes (or ends not yet read), the limit "
                      "(max_subscribes_per_session " +
                      std::to_string(limit) + "); cancel some first");
    return;
  }
  ipc::pb::Command filled = cmd;
  if (!sub.has_as_of()) filled.mutable_subscribe()->set_as_of(LatestAsOf(sub.id(), catalog));
  const std::uint64_t as_of = filled.subscribe().as_of();
  if (sub.has_up_to() && sub.up_to() <= as_of) {
    RefuseCommand(peer, cmd, "validation",
                  ipc::Describe(cmd) + ": up_to " + std::to_string(sub.up_to()) +
                      " is not after as_of " + std::to_string(as_of) +
                      (sub.has_as_of() ? "" : " (the latest time readable now)"));
    return;
  }
  mux_.Forward(filled, sub.has_as_of() ? payload : ipc::Encode(filled), Clock::now(), session);
  metrics_.Inc(kCommands, {{"command", name}, {"result", "forwarded"}});
  metrics_.Set(kSubscribes, {}, static_cast<double>(mux_.live_subscribes()));
}

std::uint64_t ControllerEndpoint::LatestAsOf(const std::string& id,
                                             const ipc::Catalog& catalog) const {
  std::uint64_t latest = 0;
  if (auto it = frontiers_.latest().find(id);
      it != frontiers_.latest().end() && !it->second.write().elements().empty()) {
    const std::uint64_t write = it->second.write().elements(0);
    latest = write > 0 ? write - 1 : 0;
  }
  if (auto it = catalog.allowed_compaction().find(id); it != catalog.allowed_compaction().end()) {
    latest = std::max(latest, it->second);
  }
  return latest;
}

void ControllerEndpoint::HandleUpdateConfiguration(const std::string& peer,
                                                   const ipc::pb::Command& cmd) {
  // Check everything first: a refused command changes nothing.
  for (const auto& [key, value] : cmd.update_configuration().params()) {
    if (IsFaultInjectionParam(key) && !config_.guards.enable_fault_injection) {
      Refuse(peer, "UpdateConfiguration", "fault_injection_disabled",
             "UpdateConfiguration: parameter " + key +
                 " injects faults, and this supervisor was started without "
                 "--enable-fault-injection; nothing was applied");
      return;
    }
    ConfigSet probe;
    if (Status s = probe.Set(ConfigSet::Scope::kReplica, key, value); !s.ok()) {
      Refuse(peer, "UpdateConfiguration", "validation", "UpdateConfiguration: " + s.message());
      return;
    }
  }
  ipc::pb::Command live;
  ipc::pb::Response reply;
  auto* applied = reply.mutable_status()->mutable_configuration_applied();
  for (const auto& [key, value] : cmd.update_configuration().params()) {
    const ParamDef* def = FindParam(key);
    if (!def->live) {
      applied->add_needs_restart(key);
      spdlog::info("UpdateConfiguration: {} is fixed when the replica starts; not applied", key);
      continue;
    }
    (void)config_.params.Set(ConfigSet::Scope::kReplica, key, value);
    (*applied->mutable_applied())[key] = config_.params.Get(key);
    (*live.mutable_update_configuration()->mutable_params())[key] = config_.params.Get(key);
    if (key == kLogLevel) {
      if (auto level = ParseLogLevel(value); level.ok()) spdlog::set_level(*level);
    }
  }
  if (!live.update_configuration().params().empty()) {
    mux_.Forward(live, ipc::Encode(live), Clock::now());
  }
  metrics_.Inc(kCommands, {{"command", "UpdateConfiguration"}, {"result", "forwarded"}});
  SendToPeer(peer, reply);
}

void ControllerEndpoint::NoteForwarded(const ipc::pb::Command& cmd) {
  if (one_shots_.OnForwarded(cmd, Clock::now())) metrics_.Inc(kOneShotsBuilt);
  metrics_.Set(kOneShotsRunning, {}, static_cast<double>(one_shots_.running()));
}

}  // namespace tandem::supervisor
