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
  auto& set = buffers_[round_[me]++ % 2];
  std::string key;
  for (RowUpdate& u : rows) {
    key.clear();
    if (whole_row) {
      AppendEncodedRow(u.row, &key);
    } else {
      for (std::uint32_t c : key_columns) AppendEncodedDatum(u.row[c], &key);
    }
    set[me][shm::WorkerOf(key, workers_)].push_back(std::move(u));
  }
  TimedArriveAndWait(barrier_);  // waiting time in the worker's step statistics
  std::vector<RowUpdate> mine;
  for (std::uint32_t from = 0; from < workers_; ++from) {
    auto& in = set[from][me];
    std::move(in.begin(), in.end(), std::back_inserter(mine));
    in.clear();
  }
  return mine;
}

std::vector<RowUpdate> PullExchanged(Node* input, const TickCtx& ctx,
                                     const std::vector<std::uint32_t>& key_columns, bool whole_row,
                                     std::vector<ErrorUpdate>* errors) {
  Delta in = input->Pull(ctx);
  std::move(in.errors.begin(), in.errors.end(), std::back_inserter(*errors));
  return ctx.exchange->Shuffle(ctx.me, std::move(in.rows), key_columns, whole_row);
}

}  // namespace tandem::workers
