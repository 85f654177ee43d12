#include "frontend/server/replay_history.h"

namespace tandem::frontend {

InMemoryReplayHistory::InMemoryReplayHistory(const std::vector<pb::Command>& commands) {
  for (const auto& c : commands) (void)Record(c);
}

bool InMemoryReplayHistory::Record(const pb::Command& command) {
  MutexLock lock(mu_);
  if (command.has_create_dataflow()) {
    const auto& desc = command.create_dataflow().desc();
    if (desc.class_() == pb::ONE_SHOT_READ) return false;
    for (const auto& x : desc.index_exports()) live_.insert(x.id());
  } else if (command.has_allow_compaction() &&
             command.allow_compaction().frontier().elements().empty()) {
    if (live_.erase(command.allow_compaction().id())) {
      dropped_.insert(command.allow_compaction().id());
    }
  } else {
    return false;
  }
  commands_.push_back(command);
  ++version_;
  return true;
}

std::vector<pb::Command> InMemoryReplayHistory::Commands() const {
  MutexLock lock(mu_);
  return commands_;
}

std::vector<std::string> InMemoryReplayHistory::LiveIndexIds() const {
  MutexLock lock(mu_);
  return {live_.begin(), live_.end()};
}

std::uint64_t InMemoryReplayHistory::Version() const {
  MutexLock lock(mu_);
  return version_;
}

bool InMemoryReplayHistory::Dropped(std::string_view index_id) const {
  MutexLock lock(mu_);
  return dropped_.find(index_id) != dropped_.end();
}

}  // namespace tandem::frontend
