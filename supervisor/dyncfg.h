// Typed configuration parameters, resolved per replica (DESIGN §6).
//
// The value of a parameter for this replica is its replica-scoped override if one is set, else
// the environment-wide value, else the compile-time default. (Falling back to the default while
// an environment-wide value exists would silently ignore a production setting.)
//
// A parameter is `live` when changing it takes effect at once (UpdateConfiguration); the others
// are fixed when the replica is provisioned and report "needs restart" instead of changing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tandem::supervisor {

enum class ParamType { kBool, kInt, kString };

struct ParamDef {
  std::string name;
  ParamType type;
  std::string default_value;
  bool live;
  std::string help;
  // kInt: the values allowed, inclusive (a value outside is refused like an ill-typed one).
  long long min;
  long long max;
};

// Accepts on/off, true/false, yes/no, 1/0 in any case.
Result<bool> ParseBool(std::string_view text);

inline constexpr char kEnableInteractiveRuntime[] = "enable_compute_interactive_runtime";
inline constexpr char kControllerHeartbeatIntervalMs[] = "controller_heartbeat_interval_ms";
inline constexpr char kControllerHeartbeatTimeoutMs[] = "controller_heartbeat_timeout_ms";
inline constexpr char kLogLevel[] = "log_level";
inline constexpr char kDebugAbortWorker[] = "debug_abort_worker";
inline constexpr char kMaxResultSize[] = "max_result_size";
inline constexpr char kMaxOneShotMemory[] = "max_one_shot_memory";
// Subscribes (DESIGN §10).
inline constexpr char kSubscribeBatchBytes[] = "subscribe_batch_bytes";
inline constexpr char kMaxSubscribesPerSession[] = "max_subscribes_per_session";
inline constexpr char kControllerSendHwm[] = "controller_send_hwm";

// Every parameter this build knows.
const std::vector<ParamDef>& ParamDefinitions();
const ParamDef* FindParam(std::string_view name);

class ConfigSet {
 public:
  enum class Scope { kEnvironment, kReplica };

  // Type-checks and records a value. InvalidArgument for unknown names or ill-typed values.
  Status Set(Scope scope, std::string_view name, std::string_view value);
  // "NAME=VALUE"; the form of --param and --replica-param.
  Status SetAssignment(Scope scope, std::string_view assignment);

  // The resolved value (replica, else environment, else default), normalised ("true"/"false"
  // for booleans). REQUIRES: a known name.
  std::string Get(std::string_view name) const;
  bool GetBool(std::string_view name) const;
  long long GetInt(std::string_view name) const;
  // "replica", "environment" or "default": where Get's value came from.
  std::string SourceOf(std::string_view name) const;

  // Every parameter with its resolved value.
  std::map<std::string, std::string> Effective() const;

 private:
  std::map<std::string, std::string, std::less<>> environment_, replica_;
};

}  // namespace tandem::supervisor
