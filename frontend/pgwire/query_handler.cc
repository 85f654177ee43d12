#include "frontend/pgwire/query_handler.h"

#include "base/check.h"

namespace tandem::pgwire {

namespace {

bool IsNoticeSeverity(Severity s) {
  return s == Severity::kNotice || s == Severity::kWarning || s == Severity::kInfo ||
         s == Severity::kDebug || s == Severity::kLog;
}

}  // namespace

QuerySink::QuerySink(std::size_t max_buffered_bytes, std::function<void()> wake)
    : max_buffered_bytes_(max_buffered_bytes), wake_(std::move(wake)) {}

void QuerySink::WakeLocked() {
  if (woken_ || !wake_) return;
  woken_ = true;
  wake_();
}

bool QuerySink::OverflowLocked() {
  overflowed_ = true;
  unwanted_ = true;
  queued_.clear();
  queued_.shrink_to_fit();
  // Always: a wake still out may have found the output above high water and taken nothing, and
  // a client that reads nothing never drains it — only this wake makes the connection see it.
  if (wake_) wake_();
  return false;
}

bool QuerySink::QueueLocked(const std::string& message) {
  if (queued_.size() + message.size() > max_buffered_bytes_) return OverflowLocked();
  queued_.append(message);
  WakeLocked();
  return true;
}

bool QuerySink::RowDescription(std::span<const FieldDescription> fields) {
  std::string m;
  AppendRowDescription(m, fields);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ == Phase::kStatements, "RowDescription in the middle of a statement");
  phase_ = Phase::kRows;
  columns_ = fields.size();
  return QueueLocked(m);
}

bool QuerySink::DataRow(std::span<const Value> values) {
  std::string m;
  {
    MutexLock lock(mu_);
    if (unwanted_) return false;
    // Bounded before it is encoded: a row larger than the whole buffer is never copied.
    if (DataRowBytes(values) > max_buffered_bytes_) return OverflowLocked();
  }
  AppendDataRow(m, values);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ == Phase::kRows, "DataRow without a RowDescription");
  TANDEM_CHECK(values.size() == columns_, "a DataRow of another width than its RowDescription");
  return QueueLocked(m);
}

bool QuerySink::CommandComplete(std::string_view tag) {
  std::string m;
  AppendCommandComplete(m, tag);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ == Phase::kStatements || phase_ == Phase::kRows,
               "CommandComplete during a COPY, after an error or after Finish");
  phase_ = Phase::kStatements;
  return QueueLocked(m);
}

bool QuerySink::EmptyQuery() {
  std::string m;
  AppendEmptyQueryResponse(m);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ == Phase::kStatements, "EmptyQuery in the middle of a statement");
  return QueueLocked(m);
}

bool QuerySink::Notice(const ErrorFields& notice) {
  TANDEM_CHECK(IsNoticeSeverity(notice.severity), "a Notice of severity ERROR, FATAL or PANIC");
  TANDEM_CHECK(IsValidSqlstate(notice.sqlstate), "a Notice without a valid SQLSTATE");
  std::string m;
  AppendNoticeResponse(m, notice);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ != Phase::kFinished, "a Notice after Finish");
  return QueueLocked(m);
}

bool QuerySink::ParameterStatus(std::string_view name, std::string_view value) {
  std::string m;
  AppendParameterStatus(m, name, value);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ != Phase::kFinished, "a ParameterStatus after Finish");
  return QueueLocked(m);
}

bool QuerySink::CopyOutResponse(std::uint16_t columns) {
  std::string m;
  AppendCopyOutResponse(m, columns);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ == Phase::kStatements, "CopyOutResponse in the middle of a statement");
  phase_ = Phase::kCopyOut;
  return QueueLocked(m);
}

bool QuerySink::CopyData(std::string_view data) {
  {
    MutexLock lock(mu_);
    if (unwanted_) return false;
    // Bounded before it is encoded, as a DataRow.
    if (data.size() > max_buffered_bytes_) return OverflowLocked();
  }
  std::string m;
  AppendCopyData(m, data);
  MutexLock lock(mu_);
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ == Phase::kCopyOut, "CopyData without a CopyOutResponse");
  return QueueLocked(m);
}

bool QuerySink::CopyDone() {
  std::string m;
  AppendCopyDone(m);
  MutexLock lock(mu_);
  if (unwanted_) return false;
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
  if (unwanted_) return false;
  TANDEM_CHECK(phase_ != Phase::kFailed && phase_ != Phase::kFinished,
               "a second Error, or an Error after Finish");
  phase_ = Phase::kFailed;
  return QueueLocked(m);
}

void QuerySink::Finish(TransactionStatus status) {
  MutexLock lock(mu_);
  if (unwanted_) return;
  TANDEM_CHECK(phase_ == Phase::kStatements || phase_ == Phase::kFailed,
               "Finish in the middle of a statement (rows or a COPY not completed), or twice");
  phase_ = Phase::kFinished;
  status_ = status;
  WakeLocked();  // or a wake is out already, and its Take will see the finish
}

bool QuerySink::wanted() const {
  MutexLock lock(mu_);
  return !unwanted_;
}

bool QuerySink::overflowed() const {
  MutexLock lock(mu_);
  return overflowed_;
}

QuerySink::Taken QuerySink::Take() {
  MutexLock lock(mu_);
  Taken t;
  t.bytes.swap(queued_);
  t.finished = phase_ == Phase::kFinished;
  t.overflowed = overflowed_;
  t.status = status_;
  woken_ = false;
  return t;
}

void QuerySink::Detach() {
  MutexLock lock(mu_);
  unwanted_ = true;
  wake_ = nullptr;
  queued_.clear();
  queued_.shrink_to_fit();
}

}  // namespace tandem::pgwire
