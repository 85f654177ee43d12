#include "ipc/rows.h"

namespace tandem::ipc {

pb::Datum ToProto(const Datum& d) {
  pb::Datum out;
  switch (d.index()) {
    case 0:
      out.mutable_null();
      break;
    case 1:
      out.set_bool_(std::get<bool>(d));
      break;
    case 2:
      out.set_int64(std::get<std::int64_t>(d));
      break;
    case 3:
      out.set_float64(std::get<double>(d));
      break;
    default:
      out.set_string(std::get<std::string>(d));
      break;
  }
  return out;
}

Datum FromProto(const pb::Datum& d) {
  switch (d.kind_case()) {
    case pb::Datum::kBool:
      return d.bool_();
    case pb::Datum::kInt64:
      return static_cast<std::int64_t>(d.int64());
    case pb::Datum::kFloat64:
      return d.float64();
    case pb::Datum::kString:
      return d.string();
    default:
      return Null{};
  }
}

Row FromProto(const pb::Row& r) {
  Row row;
  row.reserve(static_cast<std::size_t>(r.datums_size()));
  for (const auto& d : r.datums()) row.push_back(FromProto(d));
  return row;
}

pb::Row ToProto(const Row& row) {
  pb::Row r;
  for (const Datum& d : row) *r.add_datums() = ToProto(d);
  return r;
}

ColumnType ColumnTypeOf(const pb::Column& column) {
  ColumnType t;
  t.name = column.name();
  t.nullable = column.nullable();
  switch (column.type()) {
    case pb::BOOL:
      t.kind = ColumnType::Kind::kBool;
      break;
    case pb::INT64:
      t.kind = ColumnType::Kind::kInt64;
      break;
    case pb::FLOAT64:
      t.kind = ColumnType::Kind::kFloat64;
      break;
    case pb::STRING:
      t.kind = ColumnType::Kind::kString;
      break;
    default:
      t.kind = ColumnType::Kind::kAny;
      break;
  }
  return t;
}

}  // namespace tandem::ipc
