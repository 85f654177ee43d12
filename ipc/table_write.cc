#include "ipc/table_write.h"

#include <cstddef>

#include "ipc/plan_typing.h"
#include "ipc/reasons.h"

namespace tandem::ipc {
namespace {

// A row of a write against the columns it fills (a table's, or its key columns for a delete).
Status CheckWriteRow(const pb::Row& row, const std::vector<const pb::Column*>& columns,
                     const std::string& of) {
  if (static_cast<std::size_t>(row.datums_size()) != columns.size()) {
    return Invalid("row has " + std::to_string(row.datums_size()) + " datums, " + of + " has " +
                   std::to_string(columns.size()) + " columns");
  }
  for (int d = 0; d < row.datums_size(); ++d) {
    const Status fits = CheckDatumFits(row.datums(d), *columns[static_cast<std::size_t>(d)]);
    if (!fits.ok()) return Within("datum " + std::to_string(d), fits);
  }
  return Status::Ok();
}

}  // namespace

std::string DescribeWrite(const pb::WriteTable& write) {
  return std::string("WriteTable(") + Printable(write.uuid(), WriteBounds::kMaxUuidBytes) + ", " +
         Printable(write.id(), 24) + ", " + std::to_string(write.updates_size()) + " updates)";
}

Status CheckTableUpdates(const pb::WriteTable& write, const pb::Schema& schema,
                         const std::vector<std::uint32_t>& upsert_key) {
  return CheckTableUpdates(write.id(), write.updates(), schema, upsert_key);
}

Status CheckTableUpdates(const std::string& id,
                         const google::protobuf::RepeatedPtrField<pb::TableUpdate>& updates,
                         const pb::Schema& schema, const std::vector<std::uint32_t>& upsert_key) {
  const bool upsert = !upsert_key.empty();
  std::vector<const pb::Column*> row_columns;
  for (const auto& column : schema.columns()) row_columns.push_back(&column);
  std::vector<const pb::Column*> key_columns;
  for (const std::uint32_t k : upsert_key) {
    if (k >= row_columns.size())
      return Invalid("upsert key column " + std::to_string(k) + " is out of range");
    key_columns.push_back(row_columns[k]);
  }
  for (int i = 0; i < updates.size(); ++i) {
    const pb::TableUpdate& update = updates.Get(i);
    Status why;
    switch (update.kind_case()) {
      case pb::TableUpdate::kUpdate:
        if (upsert) {
          why = Invalid(id + " has an upsert key " + ListText(upsert_key) +
                        ": write upserts and deletes, not updates with diffs");
        } else if (update.update().diff() == 0) {
          why = Invalid("diff is 0 (an update changes the row's multiplicity by a non-zero diff)");
        } else {
          why = CheckWriteRow(update.update().row(), row_columns, "the table");
        }
        break;
      case pb::TableUpdate::kUpsert:
        why = upsert ? CheckWriteRow(update.upsert(), row_columns, "the table")
                     : Invalid(id + " has no upsert key: write updates with diffs");
        break;
      case pb::TableUpdate::kDelete:
        why = upsert ? CheckWriteRow(update.delete_(), key_columns, "the upsert key")
                     : Invalid(id + " has no upsert key: write updates with diffs");
        break;
      case pb::TableUpdate::KIND_NOT_SET:
        why = Invalid("update has no kind (update, upsert or delete)");
        break;
    }
    if (!why.ok()) return Within("update " + std::to_string(i), why);
  }
  return Status::Ok();
}

}  // namespace tandem::ipc
