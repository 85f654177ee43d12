// The live parameters a runtime takes from an UpdateConfiguration (DESIGN §3), parsed once, by the
// command thread. It applies its own share at once (the log level, the mergers' bounds) and hands
// the command with what it parsed to the workers through the command log (workers/command_log.h),
// so a reading worker applies max_result_size and subscribe_batch_bytes in command order: to the
// peeks and subscribes after the command, never to one before it.
//
// A parameter a runtime does not use, and a value it cannot parse, is left out: the supervisor
// checked the command, and passes every runtime the same one.
#pragma once

#include <spdlog/spdlog.h>

#include <cstddef>
#include <optional>

#include "base/role.h"
#include "ipc/codec.h"

namespace tandem::workers {

struct LiveParameters {
  std::optional<spdlog::level::level_enum> log_level;  // log_level
  std::optional<std::size_t> max_result_size;          // workers/peek.h kMaxResultSize
  std::optional<std::size_t> subscribe_batch_bytes;    // workers/subscriptions.h
  // debug_abort_worker (fault injection): the runtime of this role fails a check in its worker 0
  // when that worker applies the command.
  std::optional<Role> abort_worker;

  static LiveParameters Parse(const ipc::pb::UpdateConfiguration& update);
  // Whether a reading side has anything to apply (workers/reading_side.h).
  bool ForReadingSide() const {
    return max_result_size.has_value() || subscribe_batch_bytes.has_value();
  }
};

}  // namespace tandem::workers
