// How the executor's results become pgwire messages: a column's PostgreSQL type, a datum's text
// form, the rows of a read sent at the client's pace, and the SQLSTATE of each failure that is
// not the SQL layer's own (a replica's answer, the driver's).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "frontend/catalog/objects.h"
#include "frontend/pgwire/messages.h"
#include "frontend/pgwire/query_handler.h"
#include "frontend/server/prepared_statements.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"

namespace tandem::frontend {

// A result column as RowDescription names it: PostgreSQL's type OID, length and type modifier
// (numeric(p,s): ((p << 16) | s) + 4; varchar(n), char(n): n + 4; else -1), so a client decodes
// it as PostgreSQL's (psycopg2: Decimal, date, datetime, timedelta, UUID).
pgwire::FieldDescription DescribeColumn(const CatalogColumn& column);

// A datum in PostgreSQL's text format (base/datum_text.h's PostgresOutput): t/f, decimal
// integers, floats in their shortest exact form (PostgreSQL 15's float8out: "1.5", "1e+20", "NaN",
// "Infinity"; a float4 column's as float4out prints them), text as it is, 12.50, \x0a0b,
// 2026-12-06, 2026-12-06 12:00:00+00, 1 day 02:00:00, uuids; NULL as nullopt.
pgwire::Value PostgresText(const ipc::pb::Datum& datum, bool float4 = false);

// A statement's result rows, sent: to a simple Query's answer (`portal` null) RowDescription, a
// DataRow per row and count (RowCount.count times) in text, and "SELECT n"; to an Execute's
// (`portal`: the one it runs) no RowDescription (Describe gave it), the rows kept in the portal
// and the first portal->max_rows of them sent in the Bind's formats (SendPortalRows). Waits for
// room before each row until `deadline`. False when the answer is no longer wanted or the client
// did not read in time (then an error was sent when one could be).
bool SendRows(pgwire::QuerySink& sink, Portal* portal, std::vector<pgwire::FieldDescription> fields,
              ipc::pb::Rows rows, std::chrono::steady_clock::time_point deadline);

// Waits for room for the next row until `deadline`; false (with ERROR 57014 when still wanted)
// when the client did not read in time or the answer is no longer wanted.
bool WaitToSendRow(pgwire::QuerySink& sink, std::chrono::steady_clock::time_point deadline);

// ErrorResponse fields of a SQL layer error.
pgwire::ErrorFields ErrorOf(const sql::SqlError& error);

// The SQL error of a failed driver request (`what`: "reading", "writing", "creating …") —
// Unavailable (no replica answered in time) 57P03, canceled 57014, a replica's refusal XX000 —
// or of an error a replica answered a read with (a data error: division by zero 22012, an
// overflow 22003, a compacted time 55000, the rest as sqlstate::DataErrorState says).
sql::SqlError DriverError(const Status& status, const std::string& what);
sql::SqlError ReadError(const std::string& replica_error);

}  // namespace tandem::frontend
