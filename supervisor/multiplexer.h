// The multiplexer (DESIGN §3.1): one controller stream in front of the runtimes.
//
// Two-runtime mode: every command except Peek/CancelPeek goes to BOTH runtimes, maintenance
// first, in arrival order — so the create of a reader and every later compaction of what it reads
// are on one ordered stream in the reading runtime (the holds invariant, DESIGN §4.1, needs
// that). Peek and CancelPeek go to interactive only. Solo mode: everything to the solo runtime.
// Responses are forwarded as they come; each runtime reports frontiers only for what it renders,
// so the two streams never overlap.
//
// State: no per-dataflow state. Per connection (reset by Hello) it tracks the peeks it forwarded,
// to time them and to enforce exactly one PeekResponse per uuid towards the controller: a second
// response, or one for a peek of an earlier connection, is dropped (and counted).
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ipc/codec.h"

namespace tandem::supervisor {

enum class RuntimeId { kMaintenance = 0, kInteractive = 1, kSolo = 2 };
const char* RuntimeName(RuntimeId id);

class Multiplexer {
 public:
  using Clock = std::chrono::steady_clock;
  // Sends an encoded command to one runtime.
  using Send = std::function<void(RuntimeId, const std::string& encoded)>;

  Multiplexer(bool two_runtime, Send send) : two_runtime_(two_runtime), send_(std::move(send)) {}

  // The runtimes `command` goes to, in the order it is sent.
  std::vector<RuntimeId> Route(const ipc::pb::Command& command) const;

  // Sends a validated command (and its encoding) to its runtimes. Hello resets the connection
  // state first.
  void Forward(const ipc::pb::Command& command, const std::string& encoded, Clock::time_point now);

  struct Verdict {
    bool forward = true;
    // For the first PeekResponse of a tracked peek: how long the peek took.
    std::optional<std::chrono::nanoseconds> peek_latency;
    const char* drop_reason = nullptr;  // set when !forward
  };
  Verdict OnResponse(RuntimeId from, const ipc::pb::Response& response, Clock::time_point now);

  std::size_t outstanding_peeks() const { return peeks_.size(); }

 private:
  bool two_runtime_;
  Send send_;
  std::unordered_map<std::string, Clock::time_point> peeks_;  // uuid → forwarded at
};

}  // namespace tandem::supervisor
