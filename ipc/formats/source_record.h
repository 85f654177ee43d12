// A record as a source's text formats read it (the CSV and JSON-lines formats; a log source's
// LogRecord carries the same rows) and as a source's envelope (workers/sources/envelope.h) takes
// it: an update of the collection, or — with an upsert key — an upsert or a delete of a key.
#pragma once

#include <cstdint>

#include "base/row.h"
#include "base/time.h"

namespace tandem::ipc {

struct SourceRecord {
  enum class Kind { kUpdate, kUpsert, kDelete };
  Kind kind = Kind::kUpdate;
  // kUpdate, kUpsert: the whole row; kDelete: the key columns, in upsert-key order.
  Row row;
  Time time = 0;
  std::int64_t diff = 1;  // kUpdate only
};

}  // namespace tandem::ipc
