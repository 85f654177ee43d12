// tandem-bench's SQL client: one libpq connection over the simple query protocol (PQexec), or the
// extended one for a statement prepared once (PQprepare, then PQexecPrepared with one text
// parameter), text results — the same code asks tandem-frontend and PostgreSQL, so neither is
// asked more cheaply.
// One thread at a time (libpq's PGconn is not thread-safe); failures throw std::runtime_error.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct pg_conn;  // libpq's PGconn, kept out of this header

namespace tandem::bench {

class Pq {
 public:
  // Connects with `conninfo` (libpq's "key=value …", its connect_timeout bounding the wait).
  // Throws with libpq's message when the connection fails.
  explicit Pq(const std::string& conninfo);
  ~Pq();
  Pq(const Pq&) = delete;
  Pq& operator=(const Pq&) = delete;

  // Runs `sql` (one or more statements); returns the last result's rows, every value as text (a
  // NULL as ""). Throws "SQLSTATE: message" when the server answers with an error, or libpq's
  // message when the connection is lost.
  std::vector<std::vector<std::string>> Query(const std::string& sql);
  // The measured form: runs `sql` and returns how many rows its last result has, the first row's
  // first value in `*first` (left alone when there is none). Throws as Query does.
  std::size_t Lookup(const std::string& sql, std::string* first);
  // Prepares `sql` (parameter types inferred) as statement `name`. Throws as Query does.
  void Prepare(const std::string& name, const std::string& sql);
  // Lookup of prepared statement `name` with `parameter` as its one text parameter (libpq's
  // Bind, Describe, Execute, Sync).
  std::size_t LookupPrepared(const std::string& name, const std::string& parameter,
                             std::string* first);

 private:
  pg_conn* conn_ = nullptr;
};

}  // namespace tandem::bench
