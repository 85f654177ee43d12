// Rows between the protocol (pb::Datum, pb::Row) and the engine (base/row.h).
#pragma once

#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::ipc {

pb::Datum ToProto(const Datum& d);
Datum FromProto(const pb::Datum& d);
Row FromProto(const pb::Row& r);
pb::Row ToProto(const Row& row);

}  // namespace tandem::ipc
