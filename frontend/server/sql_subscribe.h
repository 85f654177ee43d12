// SUBSCRIBE [TO] name [AS OF t] (DESIGN §10, §15): the changes of a table's, a source's or a
// materialized view's default index, streamed to the client as Materialize does over the simple
// protocol — a COPY TO STDOUT in text format (psql prints it as it arrives): first the contents at
// the read time (the snapshot), then every change, one line per update
//
//   <mz_timestamp> TAB <mz_diff> TAB <column 1> TAB … NEWLINE
//
// in COPY's text format (\N for NULL; backslash, tab, newline, carriage return, backspace, form
// feed and vertical tab escaped with a backslash). The read time is the session's (the latest
// time the replica streaming it can read, at or after the session's last write) or AS OF t.
//
// A subscribe runs until it is cancelled (a CancelRequest: ERROR 57014, which ends the COPY as
// PostgreSQL ends a cancelled COPY TO: no CopyDone), the client leaves, or the replica ends it:
// the index closed (CopyDone, "COPY n"), was dropped, a data error, or the replica streaming it
// went away — it is not moved to another replica (replica_driver.h says why): an error ends it
// and the client subscribes again. The statement timeout bounds its start only.
//
// Memory: the batches the replica driver hands over wait in a queue of at most
// SubscribeLimits::max_queued_bytes (what they weigh parsed) while the client reads at its pace
// (QuerySink::WaitForRoom); a client that falls further behind is ended with ERROR 53000, so one
// slow client holds no more than that and its sink's buffer. The subscribe holds a SQL thread
// while it runs (sql_threads.h): --sql-threads bounds the statements, subscribes included, that
// run at once.
//
// Views (inlined queries, nothing maintained) and queries (`SUBSCRIBE (SELECT …)`) are refused
// with 0A000: a subscribe reads a maintained index; make the query a materialized view.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/time.h"
#include "frontend/catalog/catalog.h"
#include "frontend/pgwire/query_handler.h"
#include "frontend/server/replica_driver.h"
#include "frontend/server/statement_executor.h"
#include "frontend/sql/parse.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"

namespace tandem::frontend {

struct SubscribeLimits {
  SubscribeLimits() {}
  // The batches waiting for the client, by what they weigh in memory (SpaceUsedLong) — one batch
  // is always taken into an empty queue, however large (a batch is at most about 1 MiB encoded:
  // subscribe_batch_bytes).
  std::size_t max_queued_bytes = std::size_t{16} << 20;
  // How long a cancelled subscribe's end is waited for before the statement ends anyway.
  std::chrono::milliseconds end_patience{5000};
};

// Appends `text` in COPY's text format (the escapes above) to `out`.
void AppendCopyText(std::string& out, std::string_view text);
// One update as a COPY text line (above), ending with a newline.
std::string CopyTextLine(Time time, std::int64_t diff, const ipc::pb::Row& row);

// Runs `statement` (its target resolved against `catalog`) at `time`, answering on `sink`.
// ok(true): the stream ended and its COPY was completed (CopyDone, CommandComplete); ok(false):
// the answer is no longer wanted (the client left) — nothing more to send; an error: the
// statement's ErrorResponse, before the COPY began or ending it (an ErrorResponse ends copy-out
// mode). `position` is the statement's (errors about it point there).
sql::SqlResult<bool> RunSubscribe(ReplicaDriver& driver, const Catalog& catalog,
                                  const sql::SubscribeStatement& statement, int position,
                                  std::string_view sql, const ReadTime& time,
                                  pgwire::QuerySink& sink, SessionState& session,
                                  const SubscribeLimits& limits = SubscribeLimits());

}  // namespace tandem::frontend
