#include "frontend/pgwire/query_handler.h"

#include <algorithm>
#include <limits>
#include <string>

#include "base/check.h"
#include "frontend/sqlstate.h"

namespace tandem::pgwire {

namespace {

bool IsNoticeSeverity(Severity s) {
  return s == Severity::kNotice || s == Severity::kWarning || s == Severity::kInfo ||
         s == Severity::kDebug || s == Severity::kLog;
}

// The whole size of the backend message at in[at]: its type byte and its Int32 length.
std::size_t MessageSize(std::string_view in, std::size_t at) {
  std::size_t length = 0;
  for (std::size_t k = 1; k <= 4; ++k)
    length = (length << 8) | static_cast<unsigned char>(in[at + k]);
  return 1 + length;
}

ErrorFields TooManyColumns(std::size_t columns) {
  ErrorFields e =
      ErrorFields::Error(sqlstate::kTooManyColumns, "target lists can have at most " +
                                                        std::to_string(kMaxColumns) + " entries");
  e.detail = "The result has " + std::to_string(columns) + " columns.";
  return e;
}

// A message of `bytes` (type byte and length word included) that the sink can never queue.
ErrorFields TooLarge(const char* what, std::size_t bytes, std::size_t room_bytes) {
  const std::size_t limit = std::min(room_bytes, kMaxBackendMessageBytes + 5);
  return ErrorFields::Error(sqlstate::kProgramLimitExceeded,
                            std::string(what) + " of " + std::to_string(bytes) +
                                " bytes exceeds the " + std::to_string(limit) +
                                " bytes the server can send to a client at once");
}

}  // namespace

QuerySink::QuerySink(std::size_t max_buffered_bytes, std::function<void()> wake,
                     Answering answering)
    : max_buffered_bytes_(max_buffered_bytes), answering_(answering), wake_(std::move(wake)) {}

void QuerySink::WakeLocked() {
  if (woken_ || !wake_) return;
  woken_ = true;
  wake_();
}

std::function<void()> QuerySink::RoomMadeLocked() {
  room_.NotifyAll();
  return std::move(on_room_);
}

bool QuerySink::OverflowLocked() {
  overflowed_ = true;
  unwanted_ = true;
  ClearQueueLocked();
  room_.NotifyAll();  // another thread of the producer's may wait: the answer is unwanted
  // Always: a wake still out may have found the output above high water and taken nothing, and
  // a client that reads nothing never drains it — only this wake makes the connection see it.
  if (wake_) wake_();
  return false;
}

bool QuerySink::RefuseLocked(const ErrorFields& error) {
  std::string m;
  AppendErrorResponse(m, error);
  phase_ = Phase::kFailed;
  failed_ = true;
  refused_ = true;
  QueueLocked(m);
  room_.NotifyAll();
  return false;
}

bool QuerySink::QueueLocked(const std::string& message) {
  if (QueuedBytesLocked() + message.size() > max_buffered_bytes_) return OverflowLocked();
  queued_.append(message);
  WakeLocked();
  return true;
}

bool QuerySink::RowDescription(std::span<const FieldDescription> fields) {
  std::string m;
  if (fields.size() <= kMaxColumns) AppendRowDescription(m, fields);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  const bool describes =
      answering_ == Answering::kDescribePortal || answering_ == Answering::kDescribeStatement;
  if (describes) {
    TANDEM_CHECK(phase_ == (answering_ == Answering::kDescribeStatement ? Phase::kParameters
                                                                        : Phase::kStatements),
                 "a Describe's RowDescription out of order (a statement's follows its "
                 "ParameterDescription)");
  } else {
    TANDEM_CHECK(answering_ == Answering::kQuery,
                 "a RowDescription answering neither a Query "
                 "nor a Describe (an Execute's rows have none)");
    TANDEM_CHECK(phase_ == Phase::kStatements, "RowDescription in the middle of a statement");
  }
  if (fields.size() > kMaxColumns) return RefuseLocked(TooManyColumns(fields.size()));
  phase_ = describes ? Phase::kAnswered : Phase::kRows;
  columns_ = fields.size();
  return QueueLocked(m);
}

bool QuerySink::DataRow(std::span<const Value> values) {
  std::string m;
  {
    MutexLock lock(mu_);
    if (unwanted_ || refused_) return false;
    if (answering_ == Answering::kExecute && phase_ == Phase::kStatements) {
      // An Execute's first row: Describe gave its RowDescription (or the client did not ask).
      if (values.size() > kMaxColumns) return RefuseLocked(TooManyColumns(values.size()));
      phase_ = Phase::kRows;
      columns_ = values.size();
    }
    TANDEM_CHECK(phase_ == Phase::kRows, "DataRow without a RowDescription");
    TANDEM_CHECK(values.size() == columns_, "a DataRow of another width than its RowDescription");
    // Bounded before it is encoded: a row larger than room is never copied.
    if (const std::size_t bytes = DataRowBytes(values);
        bytes > room_bytes() || bytes - 5 > kMaxBackendMessageBytes) {
      return RefuseLocked(TooLarge("a row", bytes, room_bytes()));
    }
  }
  AppendDataRow(m, values);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  return QueueLocked(m);
}

bool QuerySink::CommandComplete(std::string_view tag) {
  std::string m;
  AppendCommandComplete(m, tag);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(answering_ == Answering::kQuery || answering_ == Answering::kExecute,
               "a CommandComplete answering neither a Query nor an Execute");
  TANDEM_CHECK(phase_ == Phase::kStatements || phase_ == Phase::kRows,
               "CommandComplete during a COPY, after an error, after Finish or twice for an "
               "Execute");
  phase_ = answering_ == Answering::kExecute ? Phase::kAnswered : Phase::kStatements;
  return QueueLocked(m);
}

bool QuerySink::EmptyQuery() {
  std::string m;
  AppendEmptyQueryResponse(m);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(answering_ == Answering::kQuery || answering_ == Answering::kExecute,
               "an EmptyQuery answering neither a Query nor an Execute");
  TANDEM_CHECK(phase_ == Phase::kStatements, "EmptyQuery in the middle of a statement");
  if (answering_ == Answering::kExecute) phase_ = Phase::kAnswered;
  return QueueLocked(m);
}

bool QuerySink::Notice(const ErrorFields& notice) {
  TANDEM_CHECK(IsNoticeSeverity(notice.severity), "a Notice of severity ERROR, FATAL or PANIC");
  TANDEM_CHECK(IsValidSqlstate(notice.sqlstate), "a Notice without a valid SQLSTATE");
  std::string m;
  AppendNoticeResponse(m, notice);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(phase_ != Phase::kFinished, "a Notice after Finish");
  return QueueLocked(m);
}

bool QuerySink::ParameterStatus(std::string_view name, std::string_view value) {
  std::string m;
  AppendParameterStatus(m, name, value);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(phase_ != Phase::kFinished, "a ParameterStatus after Finish");
  return QueueLocked(m);
}

bool QuerySink::CopyOutResponse(std::uint16_t columns) {
  std::string m;
  if (columns <= kMaxColumns) AppendCopyOutResponse(m, columns);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(answering_ == Answering::kQuery || answering_ == Answering::kExecute,
               "a CopyOutResponse answering neither a Query nor an Execute");
  TANDEM_CHECK(phase_ == Phase::kStatements, "CopyOutResponse in the middle of a statement");
  if (columns > kMaxColumns) return RefuseLocked(TooManyColumns(columns));
  phase_ = Phase::kCopyOut;
  return QueueLocked(m);
}

bool QuerySink::CopyData(std::string_view data) {
  {
    MutexLock lock(mu_);
    if (unwanted_ || refused_) return false;
    TANDEM_CHECK(phase_ == Phase::kCopyOut, "CopyData without a CopyOutResponse");
    // Bounded before it is encoded, as a DataRow.
    if (const std::size_t bytes = 5 + data.size();
        bytes > room_bytes() || data.size() > kMaxBackendMessageBytes) {
      return RefuseLocked(TooLarge("a CopyData message", bytes, room_bytes()));
    }
  }
  std::string m;
  AppendCopyData(m, data);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  return QueueLocked(m);
}

bool QuerySink::CopyDone() {
  std::string m;
  AppendCopyDone(m);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(phase_ == Phase::kCopyOut, "CopyDone without a CopyOutResponse");
  phase_ = Phase::kStatements;
  return QueueLocked(m);
}

bool QuerySink::Error(const ErrorFields& error) {
  TANDEM_CHECK(error.severity == Severity::kError, "a query's Error of severity other than ERROR");
  TANDEM_CHECK(IsValidSqlstate(error.sqlstate), "an Error without a valid SQLSTATE");
  std::string m;
  AppendErrorResponse(m, error);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(phase_ != Phase::kFailed && phase_ != Phase::kFinished,
               "a second Error, or an Error after Finish");
  TANDEM_CHECK(phase_ != Phase::kAnswered, "an Error after an extended message's answer");
  phase_ = Phase::kFailed;
  failed_ = true;
  return QueueLocked(m);
}

bool QuerySink::AnsweredLocked(Answering to, const char* misuse, const std::string& m) {
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(answering_ == to && phase_ == Phase::kStatements, misuse);
  phase_ = Phase::kAnswered;
  return QueueLocked(m);
}

bool QuerySink::ParseComplete() {
  std::string m;
  AppendParseComplete(m);
  MutexLock lock(mu_);
  return AnsweredLocked(Answering::kParse, "ParseComplete answering another message, or twice", m);
}

bool QuerySink::BindComplete() {
  std::string m;
  AppendBindComplete(m);
  MutexLock lock(mu_);
  return AnsweredLocked(Answering::kBind, "BindComplete answering another message, or twice", m);
}

bool QuerySink::CloseComplete() {
  std::string m;
  AppendCloseComplete(m);
  MutexLock lock(mu_);
  return AnsweredLocked(Answering::kClose, "CloseComplete answering another message, or twice", m);
}

bool QuerySink::ParameterDescription(std::span<const std::uint32_t> types) {
  std::string m;
  if (types.size() <= std::numeric_limits<std::uint16_t>::max()) {
    AppendParameterDescription(m, types);
  }
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(answering_ == Answering::kDescribeStatement,
               "a ParameterDescription answering another message than a statement's Describe");
  TANDEM_CHECK(phase_ == Phase::kStatements, "a ParameterDescription after the answer began");
  if (types.size() > std::numeric_limits<std::uint16_t>::max()) {
    return RefuseLocked(ErrorFields::Error(
        sqlstate::kProgramLimitExceeded,
        "a statement of " + std::to_string(types.size()) + " parameters (at most 65535)"));
  }
  phase_ = Phase::kParameters;
  return QueueLocked(m);
}

bool QuerySink::NoData() {
  std::string m;
  AppendNoData(m);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(
      answering_ == Answering::kDescribePortal || answering_ == Answering::kDescribeStatement,
      "NoData answering another message than a Describe");
  TANDEM_CHECK(phase_ == (answering_ == Answering::kDescribeStatement ? Phase::kParameters
                                                                      : Phase::kStatements),
               "a Describe's NoData out of order (a statement's follows its "
               "ParameterDescription)");
  phase_ = Phase::kAnswered;
  return QueueLocked(m);
}

bool QuerySink::PortalSuspended() {
  std::string m;
  AppendPortalSuspended(m);
  MutexLock lock(mu_);
  if (unwanted_ || refused_) return false;
  TANDEM_CHECK(answering_ == Answering::kExecute, "PortalSuspended answering another message");
  TANDEM_CHECK(phase_ == Phase::kRows, "PortalSuspended without the rows of its row limit");
  phase_ = Phase::kAnswered;
  return QueueLocked(m);
}

void QuerySink::Finish(TransactionStatus status) {
  MutexLock lock(mu_);
  if (unwanted_) return;
  // After a refusal the handler may not have finished its statement's rows or COPY: it stopped.
  // A Query's answer may be empty of statements only if it had none (EmptyQuery); an extended
  // message's is its one answer (Sync's: none).
  const bool query = answering_ == Answering::kQuery || answering_ == Answering::kSync;
  TANDEM_CHECK(refused_ || phase_ == Phase::kFailed ||
                   phase_ == (query ? Phase::kStatements : Phase::kAnswered),
               "Finish in the middle of a statement (rows or a COPY not completed), before an "
               "extended message's answer, or twice");
  TANDEM_CHECK(phase_ != Phase::kFinished, "Finish twice");
  phase_ = Phase::kFinished;
  status_ = status;
  WakeLocked();  // or a wake is out already, and its Take will see the finish
}

bool QuerySink::wanted() const {
  MutexLock lock(mu_);
  return !unwanted_ && !refused_;
}

bool QuerySink::has_room() const {
  MutexLock lock(mu_);
  return HasRoomLocked();
}

bool QuerySink::WaitForRoom(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  while (!HasRoomLocked()) {
    if (!room_.WaitUntil(mu_, deadline) && !HasRoomLocked()) return false;
  }
  return !unwanted_ && !refused_;
}

bool QuerySink::NotifyWhenRoom(std::function<void()> ready) {
  MutexLock lock(mu_);
  if (HasRoomLocked()) return true;
  on_room_ = std::move(ready);
  return false;
}

bool QuerySink::overflowed() const {
  MutexLock lock(mu_);
  return overflowed_;
}

void QuerySink::ClearQueueLocked() {
  queued_.clear();
  queued_.shrink_to_fit();
  queued_start_ = 0;
}

QuerySink::Taken QuerySink::Take(std::size_t budget) {
  Taken t;
  std::function<void()> ready;
  {
    MutexLock lock(mu_);
    t = TakeLocked(budget);
    if (!t.bytes.empty() && HasRoomLocked()) ready = RoomMadeLocked();
  }
  if (ready) ready();
  return t;
}

QuerySink::Taken QuerySink::TakeLocked(std::size_t budget) {
  Taken t;
  // Whole messages: Byte1 type, Int32 length counting itself, contents (the queue holds only
  // what the Append* functions wrote).
  std::size_t end = queued_start_;
  while (end < queued_.size()) {
    const std::size_t size = MessageSize(queued_, end);
    if (end > queued_start_ && end - queued_start_ + size > budget) break;
    if (end == queued_start_ && budget == 0) break;
    end += size;
  }
  TANDEM_CHECK(end <= queued_.size(), "the answer's queue holds a partial message");
  if (queued_start_ == 0 && end == queued_.size()) {
    t.bytes.swap(queued_);
  } else {
    t.bytes.assign(queued_, queued_start_, end - queued_start_);
    queued_start_ = end;
    if (queued_start_ == queued_.size()) {
      queued_.clear();
      queued_start_ = 0;
    } else if (queued_start_ > queued_.size() / 2) {
      queued_.erase(0, queued_start_);
      queued_start_ = 0;
    }
  }
  t.finished = phase_ == Phase::kFinished && QueuedBytesLocked() == 0;
  t.failed = failed_;
  t.overflowed = overflowed_;
  t.status = status_;
  woken_ = false;
  return t;
}

void QuerySink::Detach() {
  std::function<void()> ready;
  {
    MutexLock lock(mu_);
    unwanted_ = true;
    wake_ = nullptr;
    ClearQueueLocked();
    ready = RoomMadeLocked();
  }
  if (ready) ready();
}

// A session that does not support the extended query protocol is never asked to answer it
// (SupportsExtendedProtocol): being asked is the connection's bug.
void QueryHandler::Parse(ParseRequest, std::shared_ptr<QuerySink>) {
  TANDEM_CHECK(false, "Parse asked of a session without the extended query protocol");
}
void QueryHandler::Bind(BindRequest, std::shared_ptr<QuerySink>) {
  TANDEM_CHECK(false, "Bind asked of a session without the extended query protocol");
}
void QueryHandler::Describe(Target, std::string, std::shared_ptr<QuerySink>) {
  TANDEM_CHECK(false, "Describe asked of a session without the extended query protocol");
}
void QueryHandler::Execute(std::string, std::uint32_t, std::shared_ptr<QuerySink>) {
  TANDEM_CHECK(false, "Execute asked of a session without the extended query protocol");
}
void QueryHandler::Close(Target, std::string, std::shared_ptr<QuerySink>) {
  TANDEM_CHECK(false, "Close asked of a session without the extended query protocol");
}
void QueryHandler::Sync(std::shared_ptr<QuerySink>) {
  TANDEM_CHECK(false, "Sync asked of a session without the extended query protocol");
}

}  // namespace tandem::pgwire
