// One client connection's protocol state machine, without I/O: bytes in (Receive), bytes out
// (output/ConsumeOutput), the session's SQL through a QueryHandler (query_handler.h). The owner —
// the server (server.h), or a test — moves the bytes and calls Pump when the handler's sink
// wakes it.
//
// Message flow (PostgreSQL's "Message Flow"):
//   kStartup  SSLRequest / GSSENCRequest → 'N' (each at most once), then a StartupMessage:
//             protocol 3.0 (3.x asks for NegotiateProtocolVersion), a user, database
//             `ConnectionOptions::database` → AuthenticationOk (trust), ParameterStatus …,
//             BackendKeyData, ReadyForQuery 'I'. A CancelRequest instead: the key's session is
//             told (CancelRegistry), and the connection closes without a word, as PostgreSQL's.
//   kReady    Query → kQuery (the handler's answer, then ReadyForQuery); Terminate → closed.
//             Flush and CopyData/CopyDone/CopyFail (no COPY FROM is under way) → ignored, as
//             PostgreSQL does; FunctionCall → ERROR 0A000, ReadyForQuery.
//             The extended query protocol, when the session supports it
//             (QueryHandler::SupportsExtendedProtocol): Parse, Bind, Describe, Execute, Close →
//             kQuery (the handler's answer; no ReadyForQuery); an answer with an Error makes
//             every message but Sync and Terminate ignored until a Sync (the extended protocol's
//             error recovery); Sync → kQuery (the handler's Sync), then ReadyForQuery. A name or
//             query that is not UTF-8 → ERROR 22021, and contents that do not decode (a well-
//             framed message) → ERROR 08P01, each skipped until Sync. When it does not: Parse,
//             Bind, Describe, Execute, Close → ERROR 0A000, ignored until a Sync, which
//             ReadyForQuery answers.
//   kQuery    Input is buffered, not read, until the answer finishes (one message at a time).
//   kClosed   Nothing more is read; `output` may still hold bytes (a FATAL) to send.
//
// What is refused, and how:
//   * a startup packet or message whose length or type is out of bounds (messages.h), a packet
//     or message that does not decode, a message the startup or authentication phase does not
//     expect → FATAL 08P01 and closed: the stream cannot be trusted past it;
//   * protocol major version other than 3 → FATAL 0A000; no user → FATAL 28000; another
//     database → FATAL 3D000; a startup refused by the owner (RefuseStartup: too many
//     connections, 53300) or by the factory → that FATAL;
//   * a Query whose text is not valid UTF-8 → ERROR 22021 and ReadyForQuery (client_encoding is
//     UTF8, whatever the client asked for: ParameterStatus says so);
//   * input that ends inside a message → FATAL 08P01; input that ends between messages → closed
//     once the answer to everything received before has been produced; input that ends while a
//     Query is answered → the client is gone: the handler is told to Cancel (as PostgreSQL's
//     client_connection_check_interval ends the query of a client that left), input buffered
//     behind the Query is dropped, and the connection closes once the answer ends.
// The transaction status of ReadyForQuery is the one the handler's last Finish reported; an
// error of the connection's own (an unsupported message) changes nothing in the session, so it
// leaves the status as it was.
//
// Bounds: a message's contents by messages.h; the answer the handler has queued but the
// connection has not taken by ConnectionOptions::max_buffered_bytes (beyond it the client is cut:
// FATAL 53200, closed); the output by `output_high_water` — the connection takes whole messages
// of an answer only up to it (the first one whatever its size), and above it neither takes more
// nor reads another message. A client that does not read costs at most output_high_water +
// max_buffered_bytes of answer.
//
// Thread safety: none. Every call, and the handler's Query/Cancel/destruction, on one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#include "frontend/pgwire/messages.h"
#include "frontend/pgwire/query_handler.h"

namespace tandem::pgwire {

inline constexpr std::size_t kDefaultMaxBufferedBytes = std::size_t{64} << 20;
inline constexpr std::size_t kDefaultOutputHighWater = std::size_t{1} << 20;

struct ConnectionOptions {
  // The one database there is: a StartupMessage naming another is refused (3D000).
  std::string database = "tandem";
  // ParameterStatus server_version. Clients parse its leading number (libpq's PQserverVersion,
  // psql's \d queries), so it reads as PostgreSQL 15's.
  std::string server_version = "15.0 (Tandem)";
  // A Query's (and later Parse's, Bind's, CopyData's) contents, at most.
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  // An answer queued by the handler and not yet taken by the connection, at most.
  std::size_t max_buffered_bytes = kDefaultMaxBufferedBytes;
  // Unsent output above which the connection takes no more of an answer and reads no message.
  std::size_t output_high_water = kDefaultOutputHighWater;
};

// Who is connected, by cancel key: a CancelRequest arrives on a new connection and names its
// target by the key BackendKeyData gave it. Used on the connections' thread only.
class CancelRegistry {
 public:
  CancelRegistry();
  CancelRegistry(const CancelRegistry&) = delete;
  CancelRegistry& operator=(const CancelRegistry&) = delete;

  // A key for `connection`: a process id no registered connection has, and a random secret.
  BackendKey Register(Connection* connection);
  void Unregister(BackendKey key);
  // The connection registered with exactly this key, or nullptr.
  Connection* Find(BackendKey key) const;
  std::size_t size() const { return by_process_id_.size(); }

 private:
  struct Entry {
    std::int32_t secret_key;
    Connection* connection;
  };
  std::unordered_map<std::int32_t, Entry> by_process_id_;
  std::int32_t next_process_id_ = 1;
  std::random_device random_;
};

class Connection {
 public:
  enum class State { kStartup, kReady, kQuery, kClosed };

  // `factory` and `cancels` outlive the connection. `wake` is given to each query's sink
  // (QuerySink: called under its lock, from any thread); it should make the owner call Pump.
  Connection(QueryHandlerFactory& factory, CancelRegistry& cancels, ConnectionOptions options,
             std::function<void()> wake);
  // Ends the session, if one is open (the handler is destroyed, its sink unwanted).
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // REQUIRES: before the first Receive. The startup is answered with FATAL `refusal` instead of
  // a session — after SSLRequest/GSSENCRequest are declined, and a CancelRequest still honoured,
  // as PostgreSQL does when it is full.
  void RefuseStartup(ErrorFields refusal);

  // Bytes from the client; as many whole messages as the state allows are acted on.
  void Receive(std::string_view bytes);
  // The client sent its last byte (end of file). What was received before is still answered —
  // unless a Query is being answered: then it is canceled and nothing after it is acted on.
  void ReceiveEnd();
  // Takes what the handler's sink has queued into the output; when its answer finished, sends
  // ReadyForQuery and acts on buffered input. Call after a wake and after output was consumed.
  void Pump();
  // Ends the session from the server's side with FATAL `why` (a server shutting down: 57P01).
  void Terminate(const ErrorFields& why);
  // A CancelRequest named this connection: the handler is told if a Query is being answered.
  void Cancel();

  // The bytes to send, oldest first; ConsumeOutput(n) once the first n were sent.
  std::string_view output() const { return std::string_view(out_).substr(out_start_); }
  void ConsumeOutput(std::size_t n);

  State state() const { return state_; }
  bool closed() const { return state_ == State::kClosed; }
  // Whether the owner should read from the client now: false when closed, and when a Query is
  // being answered or the output is above its high water and some input is buffered already.
  bool wants_input() const;
  TransactionStatus transaction_status() const { return transaction_status_; }
  // Why the connection closed: "Terminate", "CancelRequest", the FATAL's message, …
  const std::string& close_reason() const { return close_reason_; }
  // The session's startup, once accepted.
  const std::optional<StartupParameters>& startup() const { return startup_; }

 private:
  std::size_t unsent() const { return out_.size() - out_start_; }
  std::string_view unread() const { return std::string_view(in_).substr(in_start_); }

  void ProcessInput();
  void OnStartupPacket(std::string_view body);
  void OnStartupMessage(StartupMessage startup);
  void OnMessage(char type, std::string_view body);
  void OnQuery(std::string_view body);
  void OnExtended(char type, std::string_view body);  // Parse, Bind, Describe, Execute, Close
  // Hands one message to the handler: `ask` calls it with a new sink answering `answering`; the
  // connection reads no other message until its Finish.
  void Ask(QuerySink::Answering answering,
           const std::function<void(std::shared_ptr<QuerySink>)>& ask);
  void TakeAnswer();
  void SendError(const ErrorFields& error);  // ERROR, the session goes on
  void Fatal(ErrorFields error);             // FATAL, then closed
  void Close(std::string reason);

  QueryHandlerFactory& factory_;
  CancelRegistry& cancels_;
  const ConnectionOptions options_;
  const std::function<void()> wake_;

  State state_ = State::kStartup;
  std::optional<ErrorFields> refusal_;
  bool ssl_declined_ = false;
  bool gss_declined_ = false;
  bool ignore_till_sync_ = false;
  bool extended_ = false;  // the session's SupportsExtendedProtocol(), asked once at its start
  bool input_ended_ = false;
  TransactionStatus transaction_status_ = TransactionStatus::kIdle;
  std::optional<BackendKey> key_;  // registered in cancels_
  std::optional<StartupParameters> startup_;
  std::unique_ptr<QueryHandler> handler_;
  std::shared_ptr<QuerySink> sink_;  // kQuery: the answer being taken
  std::string close_reason_;

  std::string in_;
  std::size_t in_start_ = 0;  // in_[in_start_..] is not yet acted on
  std::string out_;
  std::size_t out_start_ = 0;  // out_[out_start_..] is not yet sent
};

}  // namespace tandem::pgwire
