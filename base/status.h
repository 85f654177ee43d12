// Status and Result<T>: errors as values at module boundaries.
//
// Bad input from outside (a malformed segment, a full segment, a read outside the readable
// interval) is a Status with a reason, never a crash. A broken invariant of our own is not a
// Status: it is TANDEM_CHECK (check.h), which logs and aborts — shared fate makes that safe.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace tandem {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller asked for something malformed
  kNotFound,            // no such segment, slot, key ...
  kAlreadyExists,       // e.g. a live segment of that name
  kFailedPrecondition,  // the state does not allow it (read outside [since, upper), wrong owner)
  kResourceExhausted,   // segment full, registry row full, /dev/shm too small
  kCorruption,          // bytes that are not what they claim to be (wrong magic, bad encoding)
  kUnavailable,         // the other side is gone
  kInternal,            // an OS call failed unexpectedly
  kOutOfRange,          // a value that does not fit its type (a count beyond int64)
  kDataError,           // the data read has an error at that time (its collection's error, as
                        // a peek would answer it: division by zero, a bad log line …)
};

const char* StatusCodeName(StatusCode code);

// "`what`: <strerror(errno)>", the message of a system call that just failed.
std::string ErrnoMessage(const std::string& what);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  // Internal, with ErrnoMessage(what): a system call that just failed.
  static Status FromErrno(const std::string& what) { return Internal(ErrnoMessage(what)); }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status DataError(std::string m) { return {StatusCode::kDataError, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Result<T>: a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace tandem

#define TANDEM_CONCAT_INNER(a, b) a##b
#define TANDEM_CONCAT(a, b) TANDEM_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define TANDEM_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::tandem::Status _tandem_status = (expr);        \
    if (!_tandem_status.ok()) return _tandem_status; \
  } while (0)

#define TANDEM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

// `TANDEM_ASSIGN_OR_RETURN(auto x, MakeX());`
#define TANDEM_ASSIGN_OR_RETURN(lhs, expr) \
  TANDEM_ASSIGN_OR_RETURN_IMPL(TANDEM_CONCAT(_tandem_result_, __LINE__), lhs, expr)
