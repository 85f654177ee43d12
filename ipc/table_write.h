// A WriteTable's bounds and the rules its updates follow (DESIGN §9, workers/README.md "Tables").
// The validator checks every write against the table its catalog knows; the runtime's table writer
// (workers/tables/table.cc) checks it again right before it is made durable, and the table log
// (workers/tables/table_log.cc) checks every record it reads back — so a write validated against
// an earlier definition of its table (a writer session's, during a controller's replay) never
// reaches the log of a new one, and a record these rules refuse reads as damage.
//
// What CheckTableUpdates refuses, naming the update (and the datum): an update without a kind;
// for a table without an upsert key, anything but `update` (a row and a non-zero diff); for an
// upsert table, `update` (it takes `upsert`, a whole row, and `delete`, the key columns in
// upsert_key order); a row of another arity, a datum of another type, a null for a column that is
// not nullable.
// Stateless; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// Bounds on a WriteTable (workers/README.md "Tables"). Beyond one it is refused, naming the bound.
struct WriteBounds {
  // The uuid is the write's idempotency key, kept in the table's log with every write.
  static constexpr std::size_t kMaxUuidBytes = 128;
  // Updates of one write: one time, one log record, one group commit's share.
  static constexpr int kMaxUpdates = 100'000;
};

// "WriteTable(<uuid>, <id>, <n> updates)": Describe() of a WriteTable, but with the uuid whole
// (up to WriteBounds::kMaxUuidBytes printable characters; Describe() shortens it to 8), so that a
// client with several writes in flight can tell which one a CommandError refuses: the supervisor
// sets CommandError.what to it for every WriteTable it refuses.
std::string DescribeWrite(const pb::WriteTable& write);

// The updates of `write` against a table of `schema` and `upsert_key` (empty: plain updates with
// diffs).
Status CheckTableUpdates(const pb::WriteTable& write, const pb::Schema& schema,
                         const std::vector<std::uint32_t>& upsert_key);
// The same rules for updates kept without their WriteTable (a table log's records, read back):
// `id` names the table in the reasons. These rules are part of the table log's format: a record
// they refuse reads as damage (workers/tables/table_log.h), so they may only loosen, or old logs
// need a new kTableLogFormat.
Status CheckTableUpdates(const std::string& id,
                         const google::protobuf::RepeatedPtrField<pb::TableUpdate>& updates,
                         const pb::Schema& schema, const std::vector<std::uint32_t>& upsert_key);

}  // namespace tandem::ipc
