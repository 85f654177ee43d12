// A libpq client connection for tests, to anything that speaks PostgreSQL's protocol: a
// PostgreSQL server (postgres_server.h) or Tandem's frontend. Statements go through the simple
// query protocol (PQexec) and answers come back in text format as PgAnswer (sql_rows.h), so the
// differential suites ask both sides the same way.
//
// Thread safety: one thread at a time per connection (libpq's PGconn is not thread-safe);
// separate connections are independent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sql_rows.h"

struct pg_conn;    // libpq's PGconn, kept out of this header
struct pg_result;  // libpq's PGresult

namespace tandem::testing {

class PgConnection {
 public:
  // Connects with `conninfo` (libpq's "key=value …" string or a postgresql:// URI) and waits for
  // the answer (bound by the string's connect_timeout, if any). Check ok().
  explicit PgConnection(const std::string& conninfo);
  ~PgConnection();
  PgConnection(PgConnection&& other) noexcept;
  PgConnection& operator=(PgConnection&& other) noexcept;
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Connected and not broken since.
  bool ok() const;
  // Why the connection failed or broke (libpq's message); "" while ok().
  std::string error() const;

  // Runs `sql` — one statement or several separated by ';', which the server runs as one
  // implicit transaction unless they say BEGIN/COMMIT — and returns the last statement's answer,
  // or the first error (what PQexec returns). A lost connection is an error with an empty
  // SQLSTATE. Not for COPY: an answer that starts one is an error, and the connection is then in
  // the COPY state (raw() can finish it).
  PgAnswer Execute(const std::string& sql);
  // `sql` — one statement — through the extended query protocol (PQexecParams: Parse, Bind,
  // Describe, Execute, Sync), `parameters` its $1 … $n in text (types left to the server), the
  // results in binary when `binary_results` (each value its type's send bytes) else in text.
  PgAnswer ExecuteExtended(const std::string& sql, const std::vector<std::string>& parameters,
                           bool binary_results);

  // The NOTICE and WARNING messages received so far (e.g. "table \"t\" does not exist,
  // skipping"), as "NOTICE 00000: …"; kept here instead of libpq printing them to stderr.
  const std::vector<std::string>& notices() const { return *notices_; }

  // The libpq connection, for what this class does not cover (COPY, the extended protocol).
  pg_conn* raw() { return conn_; }

 private:
  // `result` (owned: cleared here) as an answer; null is the connection's error.
  PgAnswer AnswerOf(pg_result* result);

  pg_conn* conn_ = nullptr;
  // On the heap: libpq's notice callback holds this pointer, which must survive a move.
  std::unique_ptr<std::vector<std::string>> notices_;
};

}  // namespace tandem::testing
