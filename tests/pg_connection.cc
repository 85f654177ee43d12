#include "pg_connection.h"

#include <libpq-fe.h>

#include <utility>

namespace tandem::testing {
namespace pg_connection_detail {

std::string Field(const PGresult* result, int code) {
  const char* value = PQresultErrorField(result, code);
  return value ? value : "";
}

// libpq's messages end in a newline; failure messages read better without it.
std::string Trimmed(const char* message) {
  std::string out = message ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

void CollectNotice(void* arg, const PGresult* result) {
  auto* notices = static_cast<std::vector<std::string>*>(arg);
  notices->push_back(Field(result, PG_DIAG_SEVERITY_NONLOCALIZED) + " " +
                     Field(result, PG_DIAG_SQLSTATE) + ": " +
                     Field(result, PG_DIAG_MESSAGE_PRIMARY));
}

PgAnswer ClientError(std::string message) {
  PgAnswer r;
  r.error = PgError{.sqlstate = "", .message = std::move(message), .detail = "", .hint = ""};
  return r;
}

}  // namespace pg_connection_detail

using namespace pg_connection_detail;

PgConnection::PgConnection(const std::string& conninfo)
    : conn_(PQconnectdb(conninfo.c_str())), notices_(std::make_unique<std::vector<std::string>>()) {
  if (conn_) PQsetNoticeReceiver(conn_, CollectNotice, notices_.get());
}

PgConnection::~PgConnection() {
  if (conn_) PQfinish(conn_);
}

PgConnection::PgConnection(PgConnection&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)), notices_(std::move(other.notices_)) {}

PgConnection& PgConnection::operator=(PgConnection&& other) noexcept {
  if (this != &other) {
    if (conn_) PQfinish(conn_);
    conn_ = std::exchange(other.conn_, nullptr);
    notices_ = std::move(other.notices_);
  }
  return *this;
}

bool PgConnection::ok() const { return conn_ && PQstatus(conn_) == CONNECTION_OK; }

std::string PgConnection::error() const {
  if (!conn_) return "out of memory for a libpq connection";
  return ok() ? "" : Trimmed(PQerrorMessage(conn_));
}

PgAnswer PgConnection::Execute(const std::string& sql) {
  if (!ok()) return ClientError(error().empty() ? "not connected" : error());
  return AnswerOf(PQexec(conn_, sql.c_str()));
}

PgAnswer PgConnection::ExecuteExtended(const std::string& sql,
                                       const std::vector<std::string>& parameters,
                                       bool binary_results) {
  if (!ok()) return ClientError(error().empty() ? "not connected" : error());
  std::vector<const char*> values;
  for (const auto& p : parameters) values.push_back(p.c_str());
  return AnswerOf(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, binary_results ? 1 : 0));
}

PgAnswer PgConnection::AnswerOf(pg_result* result) {
  if (!result) return ClientError(Trimmed(PQerrorMessage(conn_)));
  PgAnswer r;
  switch (PQresultStatus(result)) {
    case PGRES_TUPLES_OK:
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY: {
      const int columns = PQnfields(result);
      for (int c = 0; c < columns; ++c) {
        r.column_names.emplace_back(PQfname(result, c));
        r.column_types.push_back(PQftype(result, c));
      }
      const int rows = PQntuples(result);
      r.rows.reserve(rows);
      for (int i = 0; i < rows; ++i) {
        SqlRow& row = r.rows.emplace_back();
        row.reserve(columns);
        for (int c = 0; c < columns; ++c) {
          if (PQgetisnull(result, i, c)) {
            row.emplace_back(std::nullopt);
          } else {
            row.emplace_back(std::string(PQgetvalue(result, i, c), PQgetlength(result, i, c)));
          }
        }
      }
      r.command_tag = PQcmdStatus(result);
      break;
    }
    case PGRES_FATAL_ERROR:
    case PGRES_NONFATAL_ERROR:
    case PGRES_BAD_RESPONSE: {
      std::string message = Field(result, PG_DIAG_MESSAGE_PRIMARY);
      if (message.empty()) message = Trimmed(PQresultErrorMessage(result));
      r.error = PgError{.sqlstate = Field(result, PG_DIAG_SQLSTATE),
                        .message = std::move(message),
                        .detail = Field(result, PG_DIAG_MESSAGE_DETAIL),
                        .hint = Field(result, PG_DIAG_MESSAGE_HINT)};
      break;
    }
    default:  // COPY IN/OUT/BOTH, single-row and pipeline results: not this class's
      r.error = PgError{.sqlstate = "",
                        .message = std::string("Execute does not handle a ") +
                                   PQresStatus(PQresultStatus(result)) + " answer",
                        .detail = "",
                        .hint = ""};
      break;
  }
  PQclear(result);
  return r;
}

}  // namespace tandem::testing
