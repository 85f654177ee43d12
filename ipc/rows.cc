#include "ipc/rows.h"

#include <algorithm>
#include <cstring>
#include <variant>

#include "base/check.h"

namespace tandem::ipc {

pb::Datum ToProto(const Datum& d) {
  static_assert(std::variant_size_v<Datum> == 13, "every datum kind has its field in pb::Datum");
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
    case 4:
      out.set_string(std::get<std::string>(d));
      break;
    case 5:
      out.set_numeric(NumericText(std::get<Numeric>(d)));
      break;
    case 6:
      out.set_bytea(std::get<Bytes>(d).bytes);
      break;
    case 7:
      out.set_date(std::get<Date>(d).days);
      break;
    case 8:
      out.set_time(std::get<Time>(d).micros);
      break;
    case 9:
      out.set_timestamp(std::get<Timestamp>(d).micros);
      break;
    case 10:
      out.set_timestamptz(std::get<TimestampTz>(d).micros);
      break;
    case 11: {
      const Interval& i = std::get<Interval>(d);
      out.mutable_interval()->set_months(i.months);
      out.mutable_interval()->set_days(i.days);
      out.mutable_interval()->set_micros(i.micros);
      break;
    }
    case 12: {
      const auto& bytes = std::get<Uuid>(d).bytes;
      out.set_uuid(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      break;
    }
  }
  return out;
}

Result<Datum> CheckedFromProto(const pb::Datum& d) {
  switch (d.kind_case()) {
    case pb::Datum::kNull:
      return Datum(Null{});
    case pb::Datum::kBool:
      return Datum(d.bool_());
    case pb::Datum::kInt64:
      return Datum(static_cast<std::int64_t>(d.int64()));
    case pb::Datum::kFloat64:
      return Datum(d.float64());
    case pb::Datum::kString:
      return Datum(d.string());
    case pb::Datum::kNumeric: {
      auto n = ParseNumeric(d.numeric());
      if (!n.ok()) {
        return Status::InvalidArgument("numeric datum '" + d.numeric() +
                                       "': " + n.status().message());
      }
      return Datum(*n);
    }
    case pb::Datum::kBytea:
      return Datum(Bytes{d.bytea()});
    case pb::Datum::kDate:
      return Datum(Date{d.date()});
    case pb::Datum::kTime:
      if (d.time() < 0 || d.time() > kMicrosPerDay) {
        return Status::InvalidArgument("time datum " + std::to_string(d.time()) +
                                       " outside [00:00:00, 24:00:00]");
      }
      return Datum(Time{d.time()});
    case pb::Datum::kTimestamp:
      return Datum(Timestamp{d.timestamp()});
    case pb::Datum::kTimestamptz:
      return Datum(TimestampTz{d.timestamptz()});
    case pb::Datum::kInterval:
      return Datum(Interval{d.interval().months(), d.interval().days(), d.interval().micros()});
    case pb::Datum::kUuid: {
      Uuid u;
      if (d.uuid().size() != u.bytes.size()) {
        return Status::InvalidArgument("uuid datum of " + std::to_string(d.uuid().size()) +
                                       " bytes, not 16");
      }
      std::memcpy(u.bytes.data(), d.uuid().data(), u.bytes.size());
      return Datum(u);
    }
    case pb::Datum::KIND_NOT_SET:
      break;
  }
  return Status::InvalidArgument("datum has no value");
}

Datum FromProto(const pb::Datum& d) {
  if (d.kind_case() == pb::Datum::KIND_NOT_SET) return Null{};
  auto datum = CheckedFromProto(d);
  TANDEM_CHECK(datum.ok(),
               "a datum that was not validated (CheckDatumFits) or not made by ToProto");
  return std::move(*datum);
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
  using Kind = ColumnType::Kind;
  ColumnType t;
  t.name = column.name();
  t.nullable = column.nullable();
  switch (column.type()) {
    case pb::BOOL:
      t.kind = Kind::kBool;
      break;
    case pb::INT64:
      t.kind = Kind::kInt64;
      break;
    case pb::FLOAT64:
      t.kind = Kind::kFloat64;
      break;
    case pb::STRING:
      t.kind = Kind::kString;
      t.length = static_cast<int>(std::min<std::uint32_t>(column.length(), 10'485'760));
      t.blank_padded = column.blank_padded();
      break;
    case pb::INT16:
      t.kind = Kind::kInt16;
      break;
    case pb::INT32:
      t.kind = Kind::kInt32;
      break;
    case pb::FLOAT32:
      t.kind = Kind::kFloat32;
      break;
    case pb::NUMERIC:
      t.kind = Kind::kNumeric;
      t.precision = static_cast<int>(std::min<std::uint32_t>(column.precision(), 1000));
      t.scale = static_cast<int>(std::min<std::uint32_t>(column.scale(), 1000));
      break;
    case pb::BYTEA:
      t.kind = Kind::kBytea;
      break;
    case pb::DATE:
      t.kind = Kind::kDate;
      break;
    case pb::TIME:
      t.kind = Kind::kTime;
      break;
    case pb::TIMESTAMP:
      t.kind = Kind::kTimestamp;
      break;
    case pb::TIMESTAMPTZ:
      t.kind = Kind::kTimestampTz;
      break;
    case pb::INTERVAL:
      t.kind = Kind::kInterval;
      break;
    case pb::UUID:
      t.kind = Kind::kUuid;
      break;
    default:  // unspecified or unknown (refused by validation): read by the text alone
      t.kind = Kind::kAny;
      break;
  }
  return t;
}

}  // namespace tandem::ipc
