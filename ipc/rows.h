// Rows between the protocol (pb::Datum, pb::Row, pb::Column) and the engine (base/row.h, and
// base/datum_text.h for a column a datum is read for).
#pragma once

#include "base/datum_text.h"
#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// Numeric datums travel as their text (NumericText), uuids as their 16 bytes, intervals as
// months, days and microseconds.
pb::Datum ToProto(const Datum& d);
// The datum a pb::Datum stands for; refused: a numeric that is not a number (ParseNumeric), a
// uuid that is not 16 bytes, a time outside [0, 24h], a date or timestamp outside PostgreSQL's
// range (from 4714-11-24 BC), no value.
Result<Datum> CheckedFromProto(const pb::Datum& d);
// REQUIRES: `d` came from ToProto or passed CheckDatumFits (ipc/plan_typing.h) — every datum a
// runtime or a tool receives from the supervisor has. A datum without a value is null.
Datum FromProto(const pb::Datum& d);
Row FromProto(const pb::Row& r);
pb::Row ToProto(const Row& row);

// What ParseDatumText needs to know of a column: its type (kAny for a type it has no datums of),
// nullability and name (a view of column.name()).
ColumnType ColumnTypeOf(const pb::Column& column);

}  // namespace tandem::ipc
