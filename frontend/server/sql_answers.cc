#include "frontend/server/sql_answers.h"

#include <charconv>
#include <cmath>

#include "base/datum_text.h"
#include "frontend/catalog/sql_type.h"
#include "frontend/pgwire/pg_type.h"
#include "frontend/sqlstate.h"
#include "ipc/rows.h"

namespace tandem::frontend {

namespace pb = ipc::pb;

pgwire::FieldDescription DescribeColumn(const CatalogColumn& column) {
  pgwire::PgType type = pgwire::kText;
  switch (column.type) {
    case pb::BOOL:
      type = pgwire::kBool;
      break;
    case pb::INT16:
      type = pgwire::kInt2;
      break;
    case pb::INT32:
      type = pgwire::kInt4;
      break;
    case pb::INT64:
      type = pgwire::kInt8;
      break;
    case pb::FLOAT32:
      type = pgwire::kFloat4;  // SendRows prints its values as float4out does
      break;
    case pb::FLOAT64:
      type = pgwire::kFloat8;
      break;
    case pb::STRING:
      if (column.mods.blank_padded) {
        type = pgwire::kBpchar;
      } else if (column.mods.length > 0) {
        type = pgwire::kVarchar;
      }
      break;
    case pb::NUMERIC:
      type = pgwire::kNumeric;
      break;
    case pb::BYTEA:
      type = pgwire::kBytea;
      break;
    case pb::DATE:
      type = pgwire::kDate;
      break;
    case pb::TIME:
      type = pgwire::kTime;
      break;
    case pb::TIMESTAMP:
      type = pgwire::kTimestamp;
      break;
    case pb::TIMESTAMPTZ:
      type = pgwire::kTimestamptz;
      break;
    case pb::INTERVAL:
      type = pgwire::kInterval;
      break;
    case pb::UUID:
      type = pgwire::kUuid;
      break;
    default:
      break;
  }
  pgwire::FieldDescription field(column.name, type);
  field.type_modifier = TypeModifier(column.type, column.mods);
  return field;
}

pgwire::Value PostgresText(const pb::Datum& datum, bool float4) {
  switch (datum.kind_case()) {
    case pb::Datum::kNull:
    case pb::Datum::KIND_NOT_SET:
      return std::nullopt;
    case pb::Datum::kFloat64:
      if (float4) return PostgresFloat4Output(datum.float64());
      return PostgresOutput(Datum(datum.float64()));
    case pb::Datum::kBool:
    case pb::Datum::kInt64:
    case pb::Datum::kString:
    case pb::Datum::kNumeric:
    case pb::Datum::kBytea:
    case pb::Datum::kDate:
    case pb::Datum::kTime:
    case pb::Datum::kTimestamp:
    case pb::Datum::kTimestamptz:
    case pb::Datum::kInterval:
    case pb::Datum::kUuid:
      // A replica's answer: ToProto of datums, so FromProto's precondition holds.
      return PostgresOutput(ipc::FromProto(datum));
  }
  return std::nullopt;
}

bool WaitToSendRow(pgwire::QuerySink& sink, std::chrono::steady_clock::time_point deadline) {
  if (sink.has_room() || sink.WaitForRoom(deadline)) return true;
  if (sink.wanted()) {
    (void)sink.Error(pgwire::ErrorFields::Error(
        sqlstate::kQueryCanceled,
        "canceling statement due to statement timeout (the client did not read its rows)"));
  }
  return false;
}

bool SendRows(pgwire::QuerySink& sink, Portal* portal, std::vector<pgwire::FieldDescription> fields,
              pb::Rows rows, std::chrono::steady_clock::time_point deadline) {
  if (portal != nullptr) {
    auto formatted = WithResultFormats(std::move(fields), portal->result_formats);
    if (!formatted.ok()) {
      (void)sink.Error(ErrorOf(formatted.error()));
      return false;
    }
    portal->rows_kept = true;
    portal->fields = std::move(*formatted);
    portal->rows = std::move(rows);
    if (portal->keep_only) return true;
    return SendPortalRows(sink, *portal, deadline);
  }
  if (!sink.RowDescription(fields)) return false;
  std::uint64_t sent = 0;
  std::vector<pgwire::Value> values;
  for (const auto& r : rows.rows()) {
    values.clear();
    for (int c = 0; c < r.row().datums_size(); ++c) {
      const bool float4 = static_cast<std::size_t>(c) < fields.size() &&
                          fields[static_cast<std::size_t>(c)].type.oid == pgwire::kFloat4.oid;
      values.push_back(PostgresText(r.row().datums(c), float4));
    }
    for (std::uint64_t i = 0; i < r.count(); ++i) {
      if (!WaitToSendRow(sink, deadline) || !sink.DataRow(values)) return false;
      ++sent;
    }
  }
  return sink.CommandComplete("SELECT " + std::to_string(sent));
}

pgwire::ErrorFields ErrorOf(const sql::SqlError& error) {
  pgwire::ErrorFields f = pgwire::ErrorFields::Error(error.sqlstate, error.message);
  f.position = static_cast<std::uint32_t>(error.position);
  f.detail = error.detail;
  f.hint = error.hint;
  return f;
}

sql::SqlError DriverError(const Status& status, const std::string& what) {
  if (status.code() == StatusCode::kUnavailable) {
    if (status.message() == "canceled") {
      return sql::SqlError(sqlstate::kQueryCanceled, "canceling statement due to user request");
    }
    if (status.message().find("may or may not have been applied") != std::string::npos) {
      return sql::SqlError(sqlstate::kTransactionResolutionUnknown, what + ": " + status.message());
    }
    return sql::SqlError(sqlstate::kCannotConnectNow, what + ": " + status.message());
  }
  if (status.code() == StatusCode::kResourceExhausted) {
    return sql::SqlError(sqlstate::kProgramLimitExceeded, what + ": " + status.message());
  }
  if (status.message().find("compacted") != std::string::npos) {
    return sql::SqlError(sqlstate::kObjectNotInPrerequisiteState, what + ": " + status.message());
  }
  if (status.code() == StatusCode::kDataError) return ReadError(status.message());
  return sql::SqlError(sqlstate::kInternalError, what + ": " + status.message());
}

sql::SqlError ReadError(const std::string& replica_error) {
  if (replica_error.find("compacted") != std::string::npos) {
    return sql::SqlError(sqlstate::kObjectNotInPrerequisiteState, replica_error);
  }
  return sql::SqlError(sqlstate::DataErrorState(replica_error), replica_error);
}

}  // namespace tandem::frontend
