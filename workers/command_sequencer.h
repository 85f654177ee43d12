// The runtime's one ordered stream of commands (DESIGN §14): the supervisor numbers every command
// it sends this runtime (ipc/channel.h), and sends Peek and CancelPeek through the peek request
// ring when it can and everything else on the channel. The two paths race: a peek taken from the
// ring may carry a higher number than commands still in flight on the channel. The sequencer holds
// a command until every lower number has been applied, then lets it through — so the command
// thread applies exactly the order the supervisor sent (§3.1's and §4.1's arguments unchanged).
//
// A number seen twice or below the next one is the supervisor's bug: it aborts (shared fate).
//
// Thread safety: none; the command thread's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "ipc/codec.h"

namespace tandem::workers {

class CommandSequencer {
 public:
  // Command number `seq` arrived (from either path).
  void Offer(std::uint64_t seq, ipc::pb::Command command);
  // The next command in the supervisor's order, once it has arrived; nullopt until then.
  std::optional<ipc::pb::Command> Next();
  // Commands that arrived ahead of a lower number still on its way.
  std::size_t waiting() const { return waiting_.size(); }
  std::uint64_t next() const { return next_; }

 private:
  std::uint64_t next_ = 1;  // the number of the next command to apply
  std::map<std::uint64_t, ipc::pb::Command> waiting_;
};

}  // namespace tandem::workers
