#include "workers/sources/table_source.h"

#include "base/check.h"
#include "ipc/rows.h"

namespace tandem::workers {

namespace pb = ipc::pb;

TableSource::TableSource(const pb::SourceImport& import,
                         std::chrono::steady_clock::time_point created, TableWriter* writer,
                         std::uint32_t workers)
    : Source(import, created),
      writer_(writer),
      table_(writer->Open(import)),
      envelope_({import.upsert_key().begin(), import.upsert_key().end()}, workers) {}

void TableSource::Advance(AdvanceCtx& ctx) {
  if (upper.empty()) return;
  if (!table_->broken().empty()) {
    // Bad data, not a bug: the collection answers the error from here on and closes.
    envelope_.AddError({table_->broken(), upper.time(), 1});
    upper = Frontier::Empty();
    return;
  }
  Table::Taken taken = table_->Take(WallClockMs());
  for (pb::TableLogWrite& w : taken.writes) {
    for (pb::TableUpdate& u : *w.mutable_updates()) {
      SourceRecord r;
      r.time = w.time();
      switch (u.kind_case()) {
        case pb::TableUpdate::kUpdate:
          r.kind = SourceRecord::Kind::kUpdate;
          r.row = ipc::FromProto(u.update().row());
          r.diff = u.update().diff();
          break;
        case pb::TableUpdate::kUpsert:
          r.kind = SourceRecord::Kind::kUpsert;
          r.row = ipc::FromProto(u.upsert());
          break;
        case pb::TableUpdate::kDelete:
          r.kind = SourceRecord::Kind::kDelete;
          r.row = ipc::FromProto(u.delete_());
          break;
        case pb::TableUpdate::KIND_NOT_SET:
          TANDEM_CHECK(false, "a table update of no kind passed validation");
      }
      envelope_.Add(std::move(r));
    }
  }
  if (!dropped_ && taken.upper > upper.time()) {
    upper = Frontier::At(taken.upper);
  }
  ctx.next = std::min(ctx.next, ctx.now + table_->tick());
}

std::unique_ptr<Node> TableSource::MakeNode(std::uint32_t me, Time as_of, Frontier until) {
  return envelope_.MakeNode(me, as_of, until);
}

void TableSource::OnDropped() {
  if (dropped_) return;
  dropped_ = true;
  writer_->Drop(table_);
}

}  // namespace tandem::workers
