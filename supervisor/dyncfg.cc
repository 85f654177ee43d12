#include "supervisor/dyncfg.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "base/check.h"
#include "ipc/codec.h"

namespace tandem::supervisor {

Result<bool> ParseBool(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "on" || lower == "true" || lower == "yes" || lower == "1") return true;
  if (lower == "off" || lower == "false" || lower == "no" || lower == "0") return false;
  return Status::InvalidArgument("'" + std::string(text) +
                                 "' is not a boolean (on/off, true/false, yes/no, 1/0)");
}

const std::vector<ParamDef>& ParamDefinitions() {
  // The heartbeat settings go to ZeroMQ as int milliseconds. The timeout is also the TTL a peer
  // is told, which ZMTP carries in 16 bits of deciseconds: at most 6553599 ms. Zero would turn
  // heartbeats off, and a frozen controller would never be noticed.
  constexpr long long kMaxInt = std::numeric_limits<int>::max();
  static const std::vector<ParamDef> kDefs = {
      {kEnableInteractiveRuntime, ParamType::kBool, "true", false,
       "run a separate interactive runtime that serves peeks from shared memory (two-runtime "
       "mode); off runs one solo runtime. Decided when the replica starts.",
       0, 0},
      {kControllerHeartbeatIntervalMs, ParamType::kInt, "1000", false,
       "ZMTP heartbeat interval on controller connections, in milliseconds", 1, kMaxInt},
      {kControllerHeartbeatTimeoutMs, ParamType::kInt, "3000", false,
       "a controller silent for this long is considered gone, in milliseconds", 1, 6553599},
      {kLogLevel, ParamType::kString, "info", true,
       "log level of the supervisor and runtimes: trace, debug, info, warn, error", 0, 0},
      // A peek's answer, and each worker's part of it, must fit a message (ipc/codec.h:
      // kMaxMessageBytes, 16 MiB) with room for the rest of it: at most 15 MiB.
      {kMaxResultSize, ParamType::kInt, std::to_string(8 << 20), true,
       "the largest answer a peek may have, in bytes (the encoded size of its rows, and of each "
       "worker's part of them): a larger one answers Error instead",
       1, static_cast<long long>(ipc::kMaxMessageBytes - (1u << 20))},
      // A one-shot's operators (workers/operators/memory_budget.h): a single read must never take
      // the replica down. Fixed at start: the runtime that serves peeks sizes its pool with it.
      {kMaxOneShotMemory, ParamType::kInt, std::to_string(1LL << 30), false,
       "the most memory a one-shot query's operators may take for the rows they make (decoded "
       "imports, a join's output), in bytes: one that needs more answers Error instead",
       1LL << 20, 1LL << 40},
      // Subscribes (DESIGN §10). A batch's updates, at most 15 MiB (workers/subscriptions.h
      // kMaxSubscribeBatchBytes), and the rest of it fit a message.
      {kSubscribeBatchBytes, ParamType::kInt, std::to_string(1 << 20), true,
       "the largest SubscribeBatch, in bytes (the encoded size of its updates; a larger interval "
       "is sent in parts, a larger row alone); the runtimes get it at start and on change",
       4096, static_cast<long long>(ipc::kMaxMessageBytes - (1u << 20))},
      {kMaxSubscribesPerSession, ParamType::kInt, "1000", true,
       "live subscribes one session may have; a Subscribe beyond it is refused (CommandError)", 0,
       1000000},
      // Memory per stalled subscriber: at most this many messages (each at most
      // subscribe_batch_bytes of updates) wait for it, then its subscribes end TOO_SLOW.
      {kControllerSendHwm, ParamType::kInt, "10000", false,
       "messages queued per controller-endpoint peer that is not reading (ZeroMQ's send "
       "high-water mark); a subscribe whose batch finds the queue full ends too slow",
       1, 10000000},
      {kDebugAbortWorker, ParamType::kString, "", true,
       "fault injection: set to solo, maintenance or interactive to make worker 0 of that "
       "runtime fail an invariant check (the replica then goes down: shared fate); only with "
       "--enable-fault-injection",
       0, 0},
  };
  return kDefs;
}

const ParamDef* FindParam(std::string_view name) {
  for (const ParamDef& d : ParamDefinitions()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

namespace {

Result<std::string> Normalise(const ParamDef& def, std::string_view value) {
  switch (def.type) {
    case ParamType::kBool: {
      TANDEM_ASSIGN_OR_RETURN(bool b, ParseBool(value));
      return std::string(b ? "true" : "false");
    }
    case ParamType::kInt: {
      long long v = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
        return Status::InvalidArgument("'" + std::string(value) + "' is not an integer");
      }
      if (v < def.min || v > def.max) {
        return Status::InvalidArgument("'" + std::string(value) + "' is out of range (" +
                                       std::to_string(def.min) + " to " + std::to_string(def.max) +
                                       ")");
      }
      return std::to_string(v);
    }
    case ParamType::kString:
      if (def.name == kLogLevel) {
        static const char* kLevels[] = {"trace", "debug",    "info", "warn",
                                        "error", "critical", "off"};
        if (std::none_of(std::begin(kLevels), std::end(kLevels),
                         [&](const char* l) { return value == l; })) {
          return Status::InvalidArgument("'" + std::string(value) + "' is not a log level");
        }
      }
      if (def.name == kDebugAbortWorker && !value.empty() && value != "solo" &&
          value != "maintenance" && value != "interactive") {
        return Status::InvalidArgument("'" + std::string(value) +
                                       "' is not a runtime (solo, maintenance, interactive)");
      }
      return std::string(value);
  }
  return Status::Internal("unreachable");
}

}  // namespace

Status ConfigSet::Set(Scope scope, std::string_view name, std::string_view value) {
  const ParamDef* def = FindParam(name);
  if (!def) return Status::InvalidArgument("unknown parameter '" + std::string(name) + "'");
  auto normal = Normalise(*def, value);
  if (!normal.ok()) {
    return Status::InvalidArgument("parameter " + std::string(name) + ": " +
                                   normal.status().message());
  }
  (scope == Scope::kReplica ? replica_ : environment_)[std::string(name)] = *normal;
  return Status::Ok();
}

Status ConfigSet::SetAssignment(Scope scope, std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Status::InvalidArgument("'" + std::string(assignment) + "' is not NAME=VALUE");
  }
  return Set(scope, assignment.substr(0, eq), assignment.substr(eq + 1));
}

std::string ConfigSet::Get(std::string_view name) const {
  if (auto it = replica_.find(name); it != replica_.end()) return it->second;
  if (auto it = environment_.find(name); it != environment_.end()) return it->second;
  const ParamDef* def = FindParam(name);
  TANDEM_CHECK(def != nullptr, "ConfigSet::Get of an unknown parameter");
  return def->default_value;
}

bool ConfigSet::GetBool(std::string_view name) const { return Get(name) == "true"; }

long long ConfigSet::GetInt(std::string_view name) const { return std::stoll(Get(name)); }

std::string ConfigSet::SourceOf(std::string_view name) const {
  if (replica_.count(name)) return "replica";
  if (environment_.count(name)) return "environment";
  return "default";
}

std::map<std::string, std::string> ConfigSet::Effective() const {
  std::map<std::string, std::string> out;
  for (const ParamDef& d : ParamDefinitions()) out[d.name] = Get(d.name);
  return out;
}

}  // namespace tandem::supervisor
