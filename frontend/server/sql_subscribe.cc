#include "frontend/server/sql_subscribe.h"

#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "base/thread_annotations.h"
#include "frontend/server/sql_answers.h"
#include "frontend/server/sql_reads.h"
#include "frontend/server/subscribe_queue.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

namespace pb = ipc::pb;
using sql::SqlError;

void AppendCopyText(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        out += c;
    }
  }
}

std::string CopyTextLine(Time time, std::int64_t diff, const pb::Row& row) {
  std::string line = std::to_string(time);
  line += '\t';
  line += std::to_string(diff);
  for (const auto& datum : row.datums()) {
    line += '\t';
    const pgwire::Value text = PostgresText(datum);
    if (text) {
      AppendCopyText(line, *text);
    } else {
      line += "\\N";
    }
  }
  line += '\n';
  return line;
}

namespace {

// How often a waiting stream looks at its cancel and its client.
constexpr std::chrono::milliseconds kSubscribePoll{200};

SqlError Canceled() {
  return SqlError(sqlstate::kQueryCanceled, "canceling statement due to user request");
}

// The error a subscribe's end becomes (every end but UP_TO and CLOSED).
SqlError EndError(const pb::SubscribeEnd& end, const std::string& name) {
  const std::string what = "SUBSCRIBE to \"" + name + "\"";
  const std::string detail = end.detail().empty() ? "" : ": " + end.detail();
  switch (end.reason()) {
    case pb::SubscribeEnd::CANCELED:
      return Canceled();
    case pb::SubscribeEnd::DROPPED:
      return SqlError(sqlstate::kUndefinedTable, what + " ended: \"" + name + "\" was dropped");
    case pb::SubscribeEnd::ERROR: {
      SqlError e = ReadError(end.detail());
      e.message = what + ": " + e.message;
      return e;
    }
    case pb::SubscribeEnd::TOO_SLOW:
      return SqlError(sqlstate::kInsufficientResources,
                      what + " ended: the frontend did not keep up with the replica" + detail);
    case pb::SubscribeEnd::SESSION_ENDED:
      return SqlError(sqlstate::kCannotConnectNow,
                      what + " ended: the frontend's session with its replica ended" + detail);
    default:
      return SqlError(sqlstate::kInternalError,
                      what + " ended: " + pb::SubscribeEnd::Reason_Name(end.reason()) + detail);
  }
}

// Clears the session's cancel action however the statement ends.
class CancelActionGuard {
 public:
  explicit CancelActionGuard(CancelToken& token) : token_(token) {}
  ~CancelActionGuard() { token_.ClearOnCancel(); }
  CancelActionGuard(const CancelActionGuard&) = delete;
  CancelActionGuard& operator=(const CancelActionGuard&) = delete;

 private:
  CancelToken& token_;
};

}  // namespace

sql::SqlResult<bool> RunSubscribe(ReplicaDriver& driver, const Catalog& catalog,
                                  const sql::SubscribeStatement& statement, int position,
                                  std::string_view sql, const ReadTime& time,
                                  pgwire::QuerySink& sink, SessionState& session,
                                  const SubscribeLimits& limits) {
  if (!statement.target.has_range_var()) {
    return SqlError(sqlstate::kFeatureNotSupported,
                    "SUBSCRIBE to a query is not supported: create a materialized view of it "
                    "(CREATE MATERIALIZED VIEW v AS …) and SUBSCRIBE to v",
                    position);
  }
  const pg_query::RangeVar& range = statement.target.range_var();
  const int at = range.location() >= 0
                     ? sql::CursorPosition(sql, static_cast<std::size_t>(range.location()))
                     : position;
  const std::string& name = range.relname();
  const CatalogObject* object = nullptr;
  if (range.catalogname().empty() &&
      (range.schemaname().empty() || range.schemaname() == "public")) {
    object = catalog.FindObject(name);
  }
  if (object == nullptr) {
    const std::string shown = range.schemaname().empty() ? name : range.schemaname() + "." + name;
    return SqlError(sqlstate::kUndefinedTable, "relation \"" + shown + "\" does not exist", at);
  }
  if (object->kind == ObjectKind::kView) {
    return SqlError(sqlstate::kFeatureNotSupported,
                    "SUBSCRIBE to view \"" + name +
                        "\" is not supported: a view is not maintained; create it as a "
                        "materialized view (CREATE MATERIALIZED VIEW) and SUBSCRIBE to that",
                    at);
  }
  const auto indexes = catalog.IndexesOn(name);
  if (indexes.empty() || object->id.empty()) {
    return SqlError(sqlstate::kInternalError, "relation \"" + name + "\" has no index to read", at);
  }
  const std::size_t columns = object->columns.size();
  if (columns + 2 > pgwire::kMaxColumns) {
    return SqlError(sqlstate::kTooManyColumns, "SUBSCRIBE to \"" + name + "\": too many columns",
                    at);
  }

  auto queue = std::make_shared<SubscribeBatchQueue>(limits.max_queued_bytes);
  SubscribeRequest request;
  request.index = indexes[0]->id;
  request.time = time;
  request.snapshot = true;
  request.tables = TablesRead(catalog, {name});
  request.deadline = DriverClock::now() + session.statement_timeout;
  const ReplicaDriver::RequestId id = driver.Subscribe(
      std::move(request), [queue](pb::SubscribeBatch batch) { queue->Push(std::move(batch)); },
      [queue](Result<pb::SubscribeEnd> end) { queue->End(std::move(end)); });
  CancelActionGuard guard(session.cancel);
  session.cancel.OnCancel([queue] { queue->Wake(); });

  // Ends the driver's subscribe (the replica releases its hold) and waits a while for its end.
  auto stop = [&] {
    driver.Cancel(id);
    (void)queue->AwaitEnd(DriverClock::now() + limits.end_patience);
  };
  bool copying = false;
  std::uint64_t lines = 0;
  for (;;) {
    if (session.cancel.canceled()) {
      stop();
      return Canceled();
    }
    if (!sink.wanted()) {
      driver.Cancel(id);  // nobody to tell: its end is not waited for
      return false;
    }
    SubscribeBatchQueue::Taken taken = queue->Take(DriverClock::now() + kSubscribePoll);
    if (taken.overflowed) {
      stop();
      return SqlError(sqlstate::kInsufficientResources,
                      "SUBSCRIBE to \"" + name + "\" ended: the client fell more than " +
                          std::to_string(limits.max_queued_bytes >> 20) +
                          " MiB of changes behind the stream");
    }
    for (const pb::SubscribeBatch& batch : taken.batches) {
      // The first batch says the subscribe started: its errors until then are the statement's.
      if (!copying) {
        if (!sink.CopyOutResponse(static_cast<std::uint16_t>(columns + 2))) {
          driver.Cancel(id);
          return false;
        }
        copying = true;
      }
      for (const pb::SubscribeUpdate& update : batch.updates()) {
        // At the client's pace, looking at the cancel and the client while waiting.
        while (!sink.has_room()) {
          if (session.cancel.canceled()) {
            stop();
            return Canceled();
          }
          (void)sink.WaitForRoom(DriverClock::now() + kSubscribePoll);
        }
        if (!sink.CopyData(CopyTextLine(update.time(), update.diff(), update.row()))) {
          driver.Cancel(id);
          return false;
        }
        ++lines;
      }
    }
    if (!taken.end) continue;
    const Result<pb::SubscribeEnd>& end = *taken.end;
    if (!end.ok()) {
      SqlError e = DriverError(end.status(), "SUBSCRIBE to \"" + name + "\"");
      if (!copying && e.position == 0) e.position = at;
      return e;
    }
    if (end->reason() != pb::SubscribeEnd::UP_TO && end->reason() != pb::SubscribeEnd::CLOSED) {
      SqlError e = EndError(*end, name);
      if (!copying) e.position = at;
      return e;
    }
    if (!copying && !sink.CopyOutResponse(static_cast<std::uint16_t>(columns + 2))) return false;
    if (!sink.CopyDone()) return false;
    return sink.CommandComplete("COPY " + std::to_string(lines));
  }
}

}  // namespace tandem::frontend
