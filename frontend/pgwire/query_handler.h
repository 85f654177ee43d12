// What the wire protocol asks of the SQL layer, and how the answer comes back.
//
// One QueryHandler per session: a QueryHandlerFactory opens it once a client's startup is
// accepted, and the connection destroys it when the session ends. For each simple Query message
// the connection calls Query() with the message's text — every statement in it; splitting them is
// the SQL layer's — and a QuerySink. The handler answers through the sink, at once or later and
// from any thread (a read waits for a replica over ZeroMQ), and ends the answer with Finish(); the
// connection then sends ReadyForQuery and reads the client's next message. It sends nothing else
// in between: one Query is answered at a time, as PostgreSQL does.
//
// Threads. Query(), Cancel() and the destructor are called on the connection's thread — the
// server's one I/O thread, which serves every client — never at once, and must not block: no
// waiting for a replica, a lock held across I/O, a join or a sleep there (every other session
// would stall behind it). They hand the work to a thread of the handler's and return. The sink's
// methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/thread_annotations.h"
#include "frontend/pgwire/messages.h"

namespace tandem::pgwire {

class Connection;

// A Parse message, owned (messages.h's ParseMessage views the connection's input).
struct ParseRequest {
  std::string statement;
  std::string query;  // valid UTF-8 without NUL
  std::vector<std::uint32_t> parameter_types;
};
// A Bind message, owned.
struct BindRequest {
  std::string portal;
  std::string statement;
  std::vector<Format> parameter_formats;  // one per parameter
  std::vector<std::optional<std::string>> parameters;
  std::vector<Format> result_formats;  // as sent: none, one for all, or one per column
};

// What a client's StartupMessage asked for, once the connection accepted it.
struct StartupParameters {
  std::string user;
  std::string database;
  std::string application_name;
  std::string options;  // "options": command-line style run-time parameters (-c name=value)
  // Every parameter the client sent, in order, but the protocol options ("_pq_.*").
  std::vector<std::pair<std::string, std::string>> parameters;
  BackendKey key;  // the session's cancel key
};

// Where a handler puts its answer to one Query message. Thread-safe.
//
// The answer is, per statement of the message, one of
//   RowDescription DataRow* CommandComplete          a statement that returns rows
//   CommandComplete                                  one that does not ("INSERT 0 1")
//   CopyOutResponse CopyData* CopyDone CommandComplete  one that streams (SUBSCRIBE, COPY TO)
//   EmptyQuery                                       an empty statement ("", ";")
// with Notice and ParameterStatus anywhere; an Error ends the statements (PostgreSQL runs none of
// a message's statements after one that failed); Finish ends the answer with the transaction
// status the session is now in. An answer out of this order is a bug of its handler: it aborts.
//
// Every method but Finish returns whether the answer is still wanted. False once the session has
// ended (the client left, or was cut) or the answer outgrew the bytes the sink may queue
// (`max_buffered_bytes`; the client is cut, FATAL 53200); then further calls do nothing, and the
// handler should stop producing. Finish after false is harmless.
//
// Back-pressure. The connection takes from the queue only as fast as its client reads, so an
// answer larger than the buffer (a big SELECT, a SUBSCRIBE that keeps streaming) must follow the
// client's pace: before each message the producer waits for *room* — the queue holding at most
// half of max_buffered_bytes — with WaitForRoom (a thread that may block) or NotifyWhenRoom (one
// that must not: a callback says when). A producer that does so never overflows, however large
// its answer and however slowly its client reads; a client that reads nothing at all is cut by
// the server after its send-stall timeout (server.h), which ends the answer (unwanted). A
// producer that does not wait overflows once its client falls max_buffered_bytes behind.
//
// What a query can make too large for the protocol is refused, never aborted on: a
// RowDescription or CopyOutResponse of more than kMaxColumns columns (ERROR 54011, PostgreSQL's
// "target lists can have at most 1664 entries"), a DataRow or CopyData message larger than room
// (half of `max_buffered_bytes`) or than a message can be (ERROR 54000). The sink then sends that
// ERROR itself, as the end of the message's statements, and returns false; every later call but
// Finish does nothing and returns false, and the handler ends the answer with Finish and the status
// the failed statement leaves (kFailed inside a transaction block).
//
// The extended query protocol's messages are answered on a sink each too, which checks the order
// of its answer (`Answering` below):
//   Parse                ParseComplete
//   Bind                 BindComplete
//   Describe statement   ParameterDescription, then RowDescription or NoData
//   Describe portal      RowDescription or NoData
//   Execute              DataRow* then CommandComplete or (the row limit reached) PortalSuspended;
//                        or EmptyQuery; or CopyOutResponse CopyData* CopyDone CommandComplete
//   Close                CloseComplete
//   Sync                 nothing (Finish ends the implicit transaction and reports its status)
// each or an Error instead, with Notice and ParameterStatus anywhere, then Finish. Execute's
// DataRows have no RowDescription before them (Describe gave it); their width is the first one's.
//
// Each message is encoded by the caller's thread, into a queue the connection's thread takes.
class QuerySink {
 public:
  // What the sink answers.
  enum class Answering {
    kQuery,
    kParse,
    kBind,
    kDescribeStatement,
    kDescribePortal,
    kExecute,
    kClose,
    kSync
  };

  // `wake` is called (under the sink's lock, so it must not call back into the sink) when the
  // queue turns non-empty, when the answer finishes and when it overflows: the connection's owner
  // then calls Connection::Pump on its thread.
  QuerySink(std::size_t max_buffered_bytes, std::function<void()> wake,
            Answering answering = Answering::kQuery);
  QuerySink(const QuerySink&) = delete;
  QuerySink& operator=(const QuerySink&) = delete;

  bool RowDescription(std::span<const FieldDescription> fields);
  bool DataRow(std::span<const Value> values);
  bool CommandComplete(std::string_view tag);
  bool EmptyQuery();
  // The severity is NOTICE, WARNING, INFO, DEBUG or LOG.
  bool Notice(const ErrorFields& notice);
  // A run-time parameter the client should know changed (SET application_name …).
  bool ParameterStatus(std::string_view name, std::string_view value);
  bool CopyOutResponse(std::uint16_t columns);
  bool CopyData(std::string_view data);
  bool CopyDone();
  // The extended query protocol's answers (above).
  bool ParseComplete();
  bool BindComplete();
  bool CloseComplete();
  bool ParameterDescription(std::span<const std::uint32_t> types);
  bool NoData();
  bool PortalSuspended();
  // The severity is ERROR.
  bool Error(const ErrorFields& error);
  void Finish(TransactionStatus status);

  Answering answering() const { return answering_; }

  // False once the answer is no longer wanted (see above).
  bool wanted() const;

  // Back-pressure (see above). Room: the queue holds at most `room_bytes()` (half of
  // max_buffered_bytes), so any message the sink accepts fits.
  std::size_t room_bytes() const { return max_buffered_bytes_ / 2; }
  // Whether there is room now, or the answer is unwanted (then no waiting helps: the next call
  // returns false).
  bool has_room() const;
  // Blocks until there is room (true), the answer is unwanted or `deadline` passes (false). Not on
  // the connection's thread: it is the one that makes room.
  bool WaitForRoom(std::chrono::steady_clock::time_point deadline);
  // For a producer that must not block. True when there is room now or the answer is unwanted:
  // `ready` is dropped uncalled. Otherwise false, and `ready` is called once, without the sink's
  // lock, when the connection has taken enough to make room or the session ends — on the
  // connection's thread, so it must not block (post the work to the producer's thread). A later
  // call replaces a callback not yet called.
  bool NotifyWhenRoom(std::function<void()> ready);

 private:
  friend class Connection;
  // What the connection takes from the queue on its thread.
  struct Taken {
    Taken() {}
    std::string bytes;
    bool finished = false;    // Finish was called; `status` is the one it gave
    bool failed = false;      // finished, with an Error (the extended protocol then skips to Sync)
    bool overflowed = false;  // the answer outgrew max_buffered_bytes
    TransactionStatus status = TransactionStatus::kIdle;
  };
  // kStatements is every answer's first phase; kParameters follows a statement's
  // ParameterDescription; kAnswered follows an extended message's one answer.
  enum class Phase { kStatements, kRows, kCopyOut, kParameters, kAnswered, kFailed, kFinished };

  // Whole messages from the front of the queue, as many as fit in `budget` bytes — and the first
  // one even when it alone is larger, so that a message larger than `budget` still goes out once
  // the connection's output is empty. `finished` only once the queue is empty.
  Taken Take(std::size_t budget);
  Taken TakeLocked(std::size_t budget) TANDEM_REQUIRES(mu_);
  // Whether the answer outgrew max_buffered_bytes (the connection checks it even when it takes
  // nothing, its output being above high water).
  bool overflowed() const;
  // No more wakes, and every later call is unwanted; a waiting producer is released. Called when
  // the session ends.
  void Detach();

  std::size_t QueuedBytesLocked() const TANDEM_REQUIRES(mu_) {
    return queued_.size() - queued_start_;
  }
  void ClearQueueLocked() TANDEM_REQUIRES(mu_);
  // Queues one whole encoded message within max_buffered_bytes, else overflows. The caller has
  // checked that the phase allows it. Returns whether the answer is still wanted.
  bool QueueLocked(const std::string& message) TANDEM_REQUIRES(mu_);
  // The answer outgrew max_buffered_bytes: unwanted from now on, the queue dropped. False.
  bool OverflowLocked() TANDEM_REQUIRES(mu_);
  // What the handler gave cannot be sent (see above): `error` ends the statements, and every
  // later call but Finish is ignored. False.
  bool RefuseLocked(const ErrorFields& error) TANDEM_REQUIRES(mu_);
  void WakeLocked() TANDEM_REQUIRES(mu_);
  bool HasRoomLocked() const TANDEM_REQUIRES(mu_) {
    return unwanted_ || refused_ || QueuedBytesLocked() <= room_bytes();
  }
  // There may be room now: waiting producers are woken, and the callback handed back to be
  // called once the lock is released.
  std::function<void()> RoomMadeLocked() TANDEM_REQUIRES(mu_);

  // Queues the single-message answer `m` of `to` (an extended message); aborting with `misuse`
  // unless it answers that, first.
  bool AnsweredLocked(Answering to, const char* misuse, const std::string& m) TANDEM_REQUIRES(mu_);

  const std::size_t max_buffered_bytes_;
  const Answering answering_;
  mutable Mutex mu_;
  std::function<void()> wake_ TANDEM_GUARDED_BY(mu_);
  std::string queued_ TANDEM_GUARDED_BY(mu_);  // whole messages; queued_[queued_start_..] waits
  std::size_t queued_start_ TANDEM_GUARDED_BY(mu_) = 0;
  bool woken_ TANDEM_GUARDED_BY(mu_) = false;  // a wake is out that Take has not answered
  bool unwanted_ TANDEM_GUARDED_BY(mu_) = false;
  bool overflowed_ TANDEM_GUARDED_BY(mu_) = false;
  bool refused_ TANDEM_GUARDED_BY(mu_) = false;           // RefuseLocked: only Finish is heeded
  bool failed_ TANDEM_GUARDED_BY(mu_) = false;            // an Error was queued (or refused)
  CondVar room_;                                          // signalled by RoomMadeLocked
  std::function<void()> on_room_ TANDEM_GUARDED_BY(mu_);  // NotifyWhenRoom's, not yet called
  Phase phase_ TANDEM_GUARDED_BY(mu_) = Phase::kStatements;
  std::size_t columns_ TANDEM_GUARDED_BY(mu_) = 0;  // kRows: the RowDescription's (or first row's)
  TransactionStatus status_ TANDEM_GUARDED_BY(mu_) = TransactionStatus::kIdle;
};

// One session's SQL. See the top of this file for threads and order: every method here runs on
// the I/O thread and must return without blocking.
class QueryHandler {
 public:
  // The session ended (Terminate, the client left or was cut, the server stopped). A sink still
  // held is unwanted from now on.
  virtual ~QueryHandler() = default;

  // A simple Query message: `sql` is its whole text, valid UTF-8 without NUL. Answer on `sink`.
  virtual void Query(std::string sql, std::shared_ptr<QuerySink> sink) = 0;

  // A CancelRequest quoted this session's key while a message was being answered: end the answer
  // soon with ERROR 57014 "canceling statement due to user request" (or do nothing, when it
  // finished meanwhile: a cancel may race the answer).
  virtual void Cancel() = 0;

  // ---- the extended query protocol (PostgreSQL's "Extended Query")
  //
  // Whether this session answers it. When not, the connection refuses its messages itself
  // (ERROR 0A000, then every message is skipped until Sync) and answers Sync with ReadyForQuery;
  // none of the methods below is called.
  virtual bool SupportsExtendedProtocol() const { return false; }
  // Each answers one message on `sink` (QuerySink, "Answering"), as Query does: from any thread,
  // ended by Finish, one message at a time. After an answer with an Error the connection skips
  // every message until Sync, as PostgreSQL does. A name "" is the unnamed statement or portal.
  virtual void Parse(ParseRequest request, std::shared_ptr<QuerySink> sink);
  virtual void Bind(BindRequest request, std::shared_ptr<QuerySink> sink);
  virtual void Describe(Target target, std::string name, std::shared_ptr<QuerySink> sink);
  // `max_rows`: the most rows to send before PortalSuspended; 0 is no limit.
  virtual void Execute(std::string portal, std::uint32_t max_rows, std::shared_ptr<QuerySink> sink);
  // Closing a name that does not exist is no error (CloseComplete).
  virtual void Close(Target target, std::string name, std::shared_ptr<QuerySink> sink);
  // The end of an implicit transaction (PostgreSQL commits it at Sync): Finish with the status the
  // session is in then; the connection sends ReadyForQuery with it.
  virtual void Sync(std::shared_ptr<QuerySink> sink);
};

class QueryHandlerFactory {
 public:
  virtual ~QueryHandlerFactory() = default;
  // A session for an accepted startup; nullptr refuses it with `refusal` (sent as FATAL).
  // Called on the connection's thread (the I/O thread): it must not block.
  virtual std::unique_ptr<QueryHandler> Open(const StartupParameters& startup,
                                             ErrorFields& refusal) = 0;
};

}  // namespace tandem::pgwire
