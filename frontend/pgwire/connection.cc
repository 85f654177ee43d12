#include "frontend/pgwire/connection.h"

#include <limits>
#include <vector>

#include "base/check.h"
#include "base/utf8.h"
#include "frontend/sqlstate.h"

namespace tandem::pgwire {

namespace {

// Buffered input beyond which a connection that is not reading messages (a Query being
// answered, output above high water) asks not to be read from: a client may pipeline a little.
constexpr std::size_t kBlockedInputBytes = 64 * 1024;

bool IsFalse(std::string_view v) {
  return v == "false" || v == "off" || v == "no" || v == "0" || v == "f" || v == "n";
}

}  // namespace

// ---- CancelRegistry -----------------------------------------------------------------------------

CancelRegistry::CancelRegistry() = default;

BackendKey CancelRegistry::Register(Connection* connection) {
  TANDEM_CHECK(by_process_id_.size() < std::numeric_limits<std::int32_t>::max() - 1,
               "every process id taken");
  while (by_process_id_.count(next_process_id_) != 0) {
    next_process_id_ =
        next_process_id_ == std::numeric_limits<std::int32_t>::max() ? 1 : next_process_id_ + 1;
  }
  BackendKey key;
  key.process_id = next_process_id_;
  key.secret_key = static_cast<std::int32_t>(random_());
  next_process_id_ =
      next_process_id_ == std::numeric_limits<std::int32_t>::max() ? 1 : next_process_id_ + 1;
  by_process_id_.emplace(key.process_id, Entry{key.secret_key, connection});
  return key;
}

void CancelRegistry::Unregister(BackendKey key) {
  const auto it = by_process_id_.find(key.process_id);
  if (it != by_process_id_.end() && it->second.secret_key == key.secret_key) {
    by_process_id_.erase(it);
  }
}

Connection* CancelRegistry::Find(BackendKey key) const {
  const auto it = by_process_id_.find(key.process_id);
  if (it == by_process_id_.end() || it->second.secret_key != key.secret_key) return nullptr;
  return it->second.connection;
}

// ---- Connection ---------------------------------------------------------------------------------

Connection::Connection(QueryHandlerFactory& factory, CancelRegistry& cancels,
                       ConnectionOptions options, std::function<void()> wake)
    : factory_(factory), cancels_(cancels), options_(std::move(options)), wake_(std::move(wake)) {}

Connection::~Connection() {
  if (sink_) sink_->Detach();
  if (key_) cancels_.Unregister(*key_);
  handler_.reset();
}

void Connection::RefuseStartup(ErrorFields refusal) {
  TANDEM_CHECK(state_ == State::kStartup && in_.empty(), "RefuseStartup after input");
  refusal.severity = Severity::kFatal;
  refusal_ = std::move(refusal);
}

void Connection::Receive(std::string_view bytes) {
  if (closed() || input_ended_) return;
  in_.append(bytes);
  ProcessInput();
}

void Connection::ReceiveEnd() {
  if (closed() || input_ended_) return;
  input_ended_ = true;
  if (state_ == State::kQuery) {
    // The client went away mid-answer: no client waits for an answer with its sending side shut.
    // Its answer ends soon (a SUBSCRIBE that sends nothing would otherwise run forever), and
    // nothing it pipelined behind it is acted on.
    in_.clear();
    in_start_ = 0;
    if (handler_) handler_->Cancel();
    return;
  }
  ProcessInput();
}

void Connection::Pump() {
  if (state_ == State::kQuery) TakeAnswer();
  ProcessInput();
}

void Connection::Terminate(const ErrorFields& why) {
  if (closed()) return;
  Fatal(why);
}

void Connection::Cancel() {
  if (state_ == State::kQuery && handler_) handler_->Cancel();
}

void Connection::ConsumeOutput(std::size_t n) {
  TANDEM_CHECK(n <= unsent(), "consumed more output than there is");
  out_start_ += n;
  if (out_start_ == out_.size()) {
    out_.clear();
    out_start_ = 0;
  } else if (out_start_ > out_.size() / 2) {
    out_.erase(0, out_start_);
    out_start_ = 0;
  }
}

bool Connection::wants_input() const {
  if (closed() || input_ended_) return false;
  const bool blocked = state_ == State::kQuery || unsent() >= options_.output_high_water;
  return !blocked || unread().size() < kBlockedInputBytes;
}

void Connection::ProcessInput() {
  while (!closed() && state_ != State::kQuery && unsent() < options_.output_high_water) {
    const std::string_view in = unread();
    const Frame f = state_ == State::kStartup ? ReadStartupFrame(in)
                                              : ReadMessageFrame(in, options_.max_message_bytes);
    if (f.kind == Frame::Kind::kInvalid) {
      Fatal(ErrorFields::Fatal(sqlstate::kProtocolViolation, f.error));
      break;
    }
    if (f.kind == Frame::Kind::kIncomplete) {
      if (input_ended_) {
        if (in.empty()) {
          Close("the client closed the connection");
        } else {
          Fatal(ErrorFields::Fatal(sqlstate::kProtocolViolation,
                                   "unexpected end of input within a message (" +
                                       std::to_string(in.size()) + " bytes of it received)"));
        }
      }
      break;
    }
    // `f.body` views in_, which nothing below appends to before it is used.
    in_start_ += f.size;
    if (state_ == State::kStartup) {
      OnStartupPacket(f.body);
    } else {
      OnMessage(f.type, f.body);
    }
  }
  if (closed()) {
    in_.clear();
    in_start_ = 0;
  } else if (in_start_ == in_.size()) {
    in_.clear();
    in_start_ = 0;
  } else if (in_start_ > in_.size() / 2) {
    in_.erase(0, in_start_);
    in_start_ = 0;
  }
}

void Connection::OnStartupPacket(std::string_view body) {
  Result<StartupPacket> packet = DecodeStartupPacket(body);
  if (!packet.ok()) {
    Fatal(ErrorFields::Fatal(sqlstate::kProtocolViolation, packet.status().message()));
    return;
  }
  if (std::holds_alternative<SslRequest>(*packet)) {
    if (ssl_declined_) {
      Fatal(ErrorFields::Fatal(sqlstate::kProtocolViolation, "a second SSLRequest"));
      return;
    }
    ssl_declined_ = true;
    out_.push_back(kEncryptionDeclined);
    return;
  }
  if (std::holds_alternative<GssEncRequest>(*packet)) {
    if (gss_declined_) {
      Fatal(ErrorFields::Fatal(sqlstate::kProtocolViolation, "a second GSSENCRequest"));
      return;
    }
    gss_declined_ = true;
    out_.push_back(kEncryptionDeclined);
    return;
  }
  if (const auto* cancel = std::get_if<CancelRequest>(&*packet)) {
    Close("CancelRequest");
    if (Connection* target = cancels_.Find(cancel->key)) target->Cancel();
    return;
  }
  OnStartupMessage(std::get<StartupMessage>(std::move(*packet)));
}

void Connection::OnStartupMessage(StartupMessage startup) {
  const std::uint32_t major = ProtocolMajor(startup.protocol_version);
  const std::uint32_t minor = ProtocolMinor(startup.protocol_version);
  if (major != ProtocolMajor(kProtocolVersion30)) {
    Fatal(ErrorFields::Fatal(sqlstate::kFeatureNotSupported,
                             "unsupported frontend protocol " + std::to_string(major) + "." +
                                 std::to_string(minor) + ": server supports 3.0 to 3.0"));
    return;
  }
  if (refusal_) {
    Fatal(*refusal_);
    return;
  }
  StartupParameters p;
  std::vector<std::string> unrecognized_options;
  bool has_database = false;
  for (auto& [name, value] : startup.parameters) {
    if (name.rfind("_pq_.", 0) == 0) {
      unrecognized_options.push_back(name);
      continue;
    }
    if (name == "user") {
      p.user = value;
    } else if (name == "database") {
      p.database = value;
      has_database = true;
    } else if (name == "application_name") {
      p.application_name = value;
    } else if (name == "options") {
      p.options = value;
    } else if (name == "replication" && !IsFalse(value)) {
      Fatal(ErrorFields::Fatal(sqlstate::kFeatureNotSupported,
                               "replication connections are not supported"));
      return;
    }
    p.parameters.emplace_back(std::move(name), std::move(value));
  }
  if (p.user.empty()) {
    Fatal(ErrorFields::Fatal(sqlstate::kInvalidAuthorizationSpecification,
                             "no PostgreSQL user name specified in startup packet"));
    return;
  }
  // PostgreSQL's default: the database named as the user.
  if (!has_database || p.database.empty()) p.database = p.user;
  if (p.database != options_.database) {
    ErrorFields e = ErrorFields::Fatal(sqlstate::kInvalidCatalogName,
                                       "database \"" + p.database + "\" does not exist");
    e.hint = "The database is \"" + options_.database + "\".";
    Fatal(std::move(e));
    return;
  }
  key_ = cancels_.Register(this);
  p.key = *key_;
  ErrorFields refusal = ErrorFields::Fatal(sqlstate::kInternalError, "the session was refused");
  handler_ = factory_.Open(p, refusal);
  if (!handler_) {
    refusal.severity = Severity::kFatal;
    Fatal(std::move(refusal));
    return;
  }
  extended_ = handler_->SupportsExtendedProtocol();

  // Protocol 3.0 and "trust": the server's side of the startup, in PostgreSQL's order.
  if (minor != 0 || !unrecognized_options.empty()) {
    AppendNegotiateProtocolVersion(out_, 0, unrecognized_options);
  }
  AppendAuthenticationOk(out_);
  // What PostgreSQL 15 reports at startup (its GUC_REPORT parameters), alphabetically.
  AppendParameterStatus(out_, "application_name", p.application_name);
  AppendParameterStatus(out_, "client_encoding", "UTF8");
  AppendParameterStatus(out_, "DateStyle", "ISO, MDY");
  AppendParameterStatus(out_, "default_transaction_read_only", "off");
  AppendParameterStatus(out_, "in_hot_standby", "off");
  AppendParameterStatus(out_, "integer_datetimes", "on");
  AppendParameterStatus(out_, "IntervalStyle", "postgres");
  AppendParameterStatus(out_, "is_superuser", "off");
  AppendParameterStatus(out_, "server_encoding", "UTF8");
  AppendParameterStatus(out_, "server_version", options_.server_version);
  AppendParameterStatus(out_, "session_authorization", p.user);
  AppendParameterStatus(out_, "standard_conforming_strings", "on");
  AppendParameterStatus(out_, "TimeZone", "UTC");
  AppendBackendKeyData(out_, *key_);
  AppendReadyForQuery(out_, transaction_status_);
  startup_ = std::move(p);
  state_ = State::kReady;
}

void Connection::OnMessage(char type, std::string_view body) {
  if (ignore_till_sync_ && type != frontend::kSync && type != frontend::kTerminate) return;
  switch (type) {
    case frontend::kQuery:
      OnQuery(body);
      return;
    case frontend::kTerminate:
      Close("Terminate");
      return;
    case frontend::kSync:
      if (extended_) {
        Ask(QuerySink::Answering::kSync,
            [this](std::shared_ptr<QuerySink> sink) { handler_->Sync(std::move(sink)); });
        return;
      }
      ignore_till_sync_ = false;
      AppendReadyForQuery(out_, transaction_status_);
      return;
    case frontend::kFlush:  // everything is sent as soon as it is written
    case frontend::kCopyData:
    case frontend::kCopyDone:
    case frontend::kCopyFail:
      return;
    case frontend::kParse:
    case frontend::kBind:
    case frontend::kDescribe:
    case frontend::kExecute:
    case frontend::kClose: {
      if (extended_) {
        OnExtended(type, body);
        return;
      }
      ErrorFields e =
          ErrorFields::Error(sqlstate::kFeatureNotSupported,
                             std::string("the extended query protocol is not supported (a ") +
                                 FrontendMessageName(type) + " message)");
      e.hint = "Use the simple query protocol.";
      SendError(e);
      ignore_till_sync_ = true;
      return;
    }
    case frontend::kFunctionCall:
      SendError(ErrorFields::Error(sqlstate::kFeatureNotSupported,
                                   "function calls (a FunctionCall message) are not supported"));
      AppendReadyForQuery(out_, transaction_status_);
      return;
    default:
      Fatal(ErrorFields::Fatal(sqlstate::kProtocolViolation,
                               std::string("unexpected ") + FrontendMessageName(type) +
                                   " message: no authentication is in progress"));
      return;
  }
}

void Connection::OnQuery(std::string_view body) {
  Result<std::string_view> text = DecodeQuery(body);
  if (!text.ok()) {
    Fatal(ErrorFields::Fatal(sqlstate::kProtocolViolation, text.status().message()));
    return;
  }
  if (const std::optional<std::size_t> bad = FindInvalidUtf8(*text)) {
    SendError(
        ErrorFields::Error(sqlstate::kCharacterNotInRepertoire, InvalidUtf8Message(*text, *bad)));
    AppendReadyForQuery(out_, transaction_status_);
    return;
  }
  Ask(QuerySink::Answering::kQuery,
      [this, sql = std::string(*text)](std::shared_ptr<QuerySink> sink) mutable {
        handler_->Query(std::move(sql), std::move(sink));
      });
}

void Connection::Ask(QuerySink::Answering answering,
                     const std::function<void(std::shared_ptr<QuerySink>)>& ask) {
  sink_ = std::make_shared<QuerySink>(options_.max_buffered_bytes, wake_, answering);
  state_ = State::kQuery;
  ask(sink_);
  TakeAnswer();  // an answer given at once goes out at once
}

void Connection::OnExtended(char type, std::string_view body) {
  // A message whose contents do not decode, inside a frame that did: an ERROR, and the rest is
  // skipped until Sync (as PostgreSQL's "insufficient data left in message" and its kin).
  auto bad = [this](const Status& s) {
    SendError(ErrorFields::Error(sqlstate::kProtocolViolation, s.message()));
    ignore_till_sync_ = true;
  };
  // Names and queries are text: valid UTF-8 (22021 otherwise, skipped until Sync).
  auto not_utf8 = [this](std::string_view text) {
    const std::optional<std::size_t> invalid = FindInvalidUtf8(text);
    if (!invalid) return false;
    SendError(ErrorFields::Error(sqlstate::kCharacterNotInRepertoire,
                                 InvalidUtf8Message(text, *invalid)));
    ignore_till_sync_ = true;
    return true;
  };
  using Answering = QuerySink::Answering;
  switch (type) {
    case frontend::kParse: {
      Result<ParseMessage> m = DecodeParse(body);
      if (!m.ok()) return bad(m.status());
      if (not_utf8(m->statement) || not_utf8(m->query)) return;
      ParseRequest r{std::string(m->statement), std::string(m->query),
                     std::move(m->parameter_types)};
      Ask(Answering::kParse, [this, &r](std::shared_ptr<QuerySink> sink) {
        handler_->Parse(std::move(r), std::move(sink));
      });
      return;
    }
    case frontend::kBind: {
      Result<BindMessage> m = DecodeBind(body);
      if (!m.ok()) return bad(m.status());
      if (not_utf8(m->portal) || not_utf8(m->statement)) return;
      BindRequest r;
      r.portal = m->portal;
      r.statement = m->statement;
      r.parameter_formats = std::move(m->parameter_formats);
      for (const auto& p : m->parameters) {
        r.parameters.push_back(p ? std::optional<std::string>(*p) : std::nullopt);
      }
      r.result_formats = std::move(m->result_formats);
      Ask(Answering::kBind, [this, &r](std::shared_ptr<QuerySink> sink) {
        handler_->Bind(std::move(r), std::move(sink));
      });
      return;
    }
    case frontend::kDescribe: {
      Result<DescribeMessage> m = DecodeDescribe(body);
      if (!m.ok()) return bad(m.status());
      if (not_utf8(m->name)) return;
      Ask(m->target == Target::kStatement ? Answering::kDescribeStatement
                                          : Answering::kDescribePortal,
          [this, &m](std::shared_ptr<QuerySink> sink) {
            handler_->Describe(m->target, std::string(m->name), std::move(sink));
          });
      return;
    }
    case frontend::kExecute: {
      Result<ExecuteMessage> m = DecodeExecute(body);
      if (!m.ok()) return bad(m.status());
      if (not_utf8(m->portal)) return;
      Ask(Answering::kExecute, [this, &m](std::shared_ptr<QuerySink> sink) {
        handler_->Execute(std::string(m->portal), m->max_rows, std::move(sink));
      });
      return;
    }
    default: {  // Close
      Result<CloseMessage> m = DecodeClose(body);
      if (!m.ok()) return bad(m.status());
      if (not_utf8(m->name)) return;
      Ask(Answering::kClose, [this, &m](std::shared_ptr<QuerySink> sink) {
        handler_->Close(m->target, std::string(m->name), std::move(sink));
      });
      return;
    }
  }
}

void Connection::TakeAnswer() {
  if (!sink_) return;
  // Above high water nothing more is taken; an overflow still cuts the client. Below it, whole
  // messages up to high water (the first one whatever its size): the output holds at most
  // output_high_water + max_buffered_bytes, the rest waits in the sink's bounded queue.
  if (unsent() >= options_.output_high_water && !sink_->overflowed()) return;
  const std::size_t budget =
      unsent() < options_.output_high_water ? options_.output_high_water - unsent() : 0;
  QuerySink::Taken taken = sink_->Take(budget);
  if (out_.empty()) {
    out_.swap(taken.bytes);
    out_start_ = 0;
  } else {
    out_.append(taken.bytes);
  }
  if (taken.overflowed) {
    Fatal(ErrorFields::Fatal(sqlstate::kOutOfMemory,
                             "the answer outgrew the " +
                                 std::to_string(options_.max_buffered_bytes) +
                                 " bytes the server buffers for a client: it reads too slowly"));
    return;
  }
  if (!taken.finished) return;
  const QuerySink::Answering answered = sink_->answering();
  sink_->Detach();
  sink_.reset();
  transaction_status_ = taken.status;
  state_ = State::kReady;
  if (answered == QuerySink::Answering::kQuery || answered == QuerySink::Answering::kSync) {
    if (answered == QuerySink::Answering::kSync) ignore_till_sync_ = false;
    AppendReadyForQuery(out_, transaction_status_);
  } else if (taken.failed) {
    ignore_till_sync_ = true;  // the extended protocol's error recovery
  }
}

void Connection::SendError(const ErrorFields& error) { AppendErrorResponse(out_, error); }

void Connection::Fatal(ErrorFields error) {
  error.severity = Severity::kFatal;
  AppendErrorResponse(out_, error);
  Close(error.message);
}

void Connection::Close(std::string reason) {
  if (closed()) return;
  state_ = State::kClosed;
  close_reason_ = std::move(reason);
  if (sink_) {
    sink_->Detach();
    sink_.reset();
  }
  if (key_) {
    cancels_.Unregister(*key_);
    key_.reset();
  }
  handler_.reset();
}

}  // namespace tandem::pgwire
