#include "workers/exchange.h"

#include <iterator>
#include <string>

#include "shm/routing.h"
#include "workers/step_stats.h"

namespace tandem::workers {

Exchange::Exchange(std::uint32_t workers)
    : workers_(workers),
      barrier_(workers),
      buffers_(2, std::vector<std::vector<std::vector<RowUpdate>>>(
                      workers, std::vector<std::vector<RowUpdate>>(workers))),
      round_(workers, 0) {}

std::vector<RowUpdate> Exchange::Shuffle(std::uint32_t me, std::vector<RowUpdate> rows,
                                         const std::vector<std::uint32_t>& key_columns,
                                         bool whole_row) {
  if (workers_ == 1) return rows;
  const std::uint64_t round = round_[me]++;
  auto& set = buffers_[round % 2];
  std::string key;
  for (RowUpdate& u : rows) {
    key.clear();
    if (whole_row) {
      AppendKey(u.row, &key);
    } else {
      AppendKeyColumns(u.row, key_columns, &key);
    }
    set[me][shm::WorkerOf(key, workers_)].push_back(std::move(u));
  }
  TimedArriveAndWait(barrier_);  // waiting time in the worker's step statistics
  // Every receiver of the previous round read what this worker sent it before it arrived at the
  // barrier just passed: this worker frees those rows now, on its own thread (below).
  for (std::uint32_t to = 0; to < workers_; ++to) {
    if (to != me) buffers_[(round + 1) % 2][me][to].clear();
  }
  std::vector<RowUpdate> mine;
  std::size_t total = 0;
  for (std::uint32_t from = 0; from < workers_; ++from) total += set[from][me].size();
  mine.reserve(total);
  for (std::uint32_t from = 0; from < workers_; ++from) {
    auto& in = set[from][me];
    if (from == me) {
      std::move(in.begin(), in.end(), std::back_inserter(mine));
      in.clear();
    } else {
      // Copied, not moved: a row is freed by the thread that allocated it (its sender, above,
      // one round later), never by another worker. glibc frees into the allocating thread's
      // arena, under that arena's lock: freeing other workers' rows here made the workers contend
      // on each other's arenas (measured: a third of a worker's time with two workers).
      mine.insert(mine.end(), in.begin(), in.end());
    }
  }
  return mine;
}

std::vector<RowUpdate> PullExchanged(Node* input, const TickCtx& ctx,
                                     const std::vector<std::uint32_t>& key_columns, bool whole_row,
                                     std::vector<ErrorUpdate>* errors) {
  Delta in = input->Pull(ctx);
  std::move(in.errors.begin(), in.errors.end(), std::back_inserter(*errors));
  // Already where the exchange would send every row: no exchange (and no barrier: every worker
  // decides alike, from the plan).
  if (input->partitioning().Satisfies(key_columns, whole_row)) return std::move(in.rows);
  return ctx.exchange->Shuffle(ctx.me, std::move(in.rows), key_columns, whole_row);
}

}  // namespace tandem::workers
