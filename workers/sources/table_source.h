// table{tick_interval_ms}: a table's source (DESIGN §9; workers/tables/table.h). Advance takes
// what the group commit made durable since the last step and the table's upper (which follows the
// wall clock while no write comes) and queues the writes' updates into the envelope — plain, or
// upsert by the table's key. A table whose log cannot be opened ends at once with that error.
#pragma once

#include <memory>

#include "workers/sources/envelope.h"
#include "workers/sources/source.h"
#include "workers/tables/table.h"

namespace tandem::workers {

class TableSource final : public Source {
 public:
  TableSource(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created,
              TableWriter* writer, std::uint32_t workers);
  void Advance(AdvanceCtx& ctx) override;
  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) override;
  // The controller dropped the table: its log is moved to the data dir's dropped/.
  void OnDropped() override;

  const std::shared_ptr<Table>& table() const { return table_; }

 private:
  TableWriter* writer_;
  std::shared_ptr<Table> table_;
  Envelope envelope_;
  bool dropped_ = false;
};

}  // namespace tandem::workers
