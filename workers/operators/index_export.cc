#include "workers/operators/index_export.h"

#include <string>

#include "shm/routing.h"
#include "workers/exchange.h"

namespace tandem::workers {

namespace {

// Exchanges `errors` by message (every worker calls it: one barrier) and appends this worker's
// under the error prefix.
void AppendExchangedErrors(const TickCtx& ctx, std::vector<ErrorUpdate> errors,
                           shm::UpdateBuffer* updates) {
  std::vector<RowUpdate> rows;
  rows.reserve(errors.size());
  for (ErrorUpdate& err : errors) rows.push_back({{std::move(err.message)}, err.time, err.diff});
  rows = ctx.exchange->Shuffle(ctx.me, std::move(rows), {0}, false);
  for (const RowUpdate& err : rows) {
    updates->Push(std::string(1, shm::kErrorKeyPrefix) + std::get<std::string>(err.row[0]), "",
                  err.time, err.diff);
  }
}

}  // namespace

shm::UpdateBuffer ArrangeByKey(const TickCtx& ctx, Delta delta,
                               const std::vector<std::uint32_t>& key,
                               const Partitioning& partitioning) {
  std::vector<RowUpdate> rows =
      partitioning.Satisfies(key, false)
          ? std::move(delta.rows)
          : ctx.exchange->Shuffle(ctx.me, std::move(delta.rows), key, false);
  // Encoded once, into one buffer; the two strings are reused, so no allocation per update.
  shm::UpdateBuffer updates;
  std::string key_bytes, val_bytes;
  for (const RowUpdate& u : rows) {
    key_bytes.clear();
    val_bytes.clear();
    AppendKeyColumns(u.row, key, &key_bytes);
    AppendEncodedRow(u.row, &val_bytes);
    if (updates.empty()) {
      // Rows of one collection have similar sizes: the first one is a good estimate.
      updates.Reserve(rows.size() + delta.errors.size(),
                      (key_bytes.size() + val_bytes.size()) * (rows.size() + 1));
    }
    updates.Push(key_bytes, val_bytes, u.time, u.diff);
  }
  AppendExchangedErrors(ctx, std::move(delta.errors), &updates);
  return updates;
}

shm::UpdateBuffer PullIntoIndex(Node* node, const TickCtx& ctx,
                                const std::vector<std::uint32_t>& key) {
  if (!node->CanPullArranged(key))
    return ArrangeByKey(ctx, node->Pull(ctx), key, node->partitioning());
  shm::UpdateBuffer updates;
  std::vector<ErrorUpdate> errors;
  node->PullArranged(ctx, key, &updates, &errors);
  AppendExchangedErrors(ctx, std::move(errors), &updates);
  return updates;
}

}  // namespace tandem::workers
