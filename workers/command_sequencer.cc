#include "workers/command_sequencer.h"

#include "base/check.h"

namespace tandem::workers {

void CommandSequencer::Offer(std::uint64_t seq, ipc::pb::Command command) {
  TANDEM_CHECK(seq >= next_,
               "the supervisor sent a command numbered below one already applied (each number is "
               "sent once)");
  const bool fresh = waiting_.emplace(seq, std::move(command)).second;
  TANDEM_CHECK(fresh, "the supervisor sent a command number twice");
}

std::optional<ipc::pb::Command> CommandSequencer::Next() {
  auto it = waiting_.begin();
  if (it == waiting_.end() || it->first != next_) return std::nullopt;
  ipc::pb::Command command = std::move(it->second);
  waiting_.erase(it);
  ++next_;
  return command;
}

}  // namespace tandem::workers
