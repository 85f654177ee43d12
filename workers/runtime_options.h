// What a runtime process is started with (tandem-worker's flags, workers/main.cc): read by the
// runtime (workers/runtime.h) and by its sides (workers/maintained_side.h, workers/reading_side.h),
// never changed after start. The live parameters among them change by UpdateConfiguration
// (workers/live_parameters.h).
#pragma once

#include <cstdint>
#include <string>

#include "base/role.h"
#include "workers/operators/memory_budget.h"
#include "workers/peek.h"
#include "workers/subscriptions.h"

namespace tandem::workers {

struct RuntimeOptions {
  Role role = Role::kSolo;
  std::uint32_t workers = 1;
  std::string segment;
  std::string channel;
  std::string replica_id;
  // max_result_size at start (the supervisor's resolved value); UpdateConfiguration changes it.
  std::size_t max_result_size = kDefaultMaxResultSize;
  // max_one_shot_memory (workers/operators/memory_budget.h): each one-shot's budget.
  std::uint64_t max_one_shot_memory = kDefaultMaxOneShotMemory;
  // subscribe_batch_bytes at start (DESIGN §10); UpdateConfiguration changes it.
  std::size_t subscribe_batch_bytes = kDefaultSubscribeBatchBytes;
  // --data-dir (maintenance, solo): where tables keep their logs (DESIGN §9). Empty: no tables.
  std::string data_dir;
  // --max-table-backlog-bytes: what one table may hold that its index has not taken (Table::Admit).
  std::uint64_t max_table_backlog_bytes = std::uint64_t{64} << 20;
  // --peek-ring-fds R,A (the runtime that serves peeks, when the segment has peek rings): the
  // eventfds the supervisor made for the request ring's and the answer ring's wake-ups (DESIGN
  // §14, shm/peek_ring.h). -1: no fast path; everything takes the channel.
  int peek_request_fd = -1;
  int peek_answer_fd = -1;
  // --reader-table-fd (maintenance, solo): the reader table the supervisor handed down. -1: taken
  // from the segment's reader-table socket instead.
  int reader_table_fd = -1;
};

}  // namespace tandem::workers
