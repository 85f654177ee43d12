// Rows between the protocol (pb::Datum, pb::Row, pb::Column) and the engine (base/row.h, and
// base/datum_text.h for a column a datum is read for).
#pragma once

#include "base/datum_text.h"
#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::ipc {

pb::Datum ToProto(const Datum& d);
Datum FromProto(const pb::Datum& d);
Row FromProto(const pb::Row& r);
pb::Row ToProto(const Row& row);

// What ParseDatumText needs to know of a column: its type (kAny for a type it has no datums of),
// nullability and name (a view of column.name()).
ColumnType ColumnTypeOf(const pb::Column& column);

}  // namespace tandem::ipc
