#include "tools/bench/pq.h"

#include <libpq-fe.h>

#include <stdexcept>

namespace tandem::bench {

namespace {

// The result of PQexec(`conn`, `sql`), owned; throws on an error answer or a lost connection.
struct PqResult {
  PqResult(PGconn* conn, const std::string& sql) : PqResult(conn, PQexec(conn, sql.c_str()), sql) {}
  PqResult(PGconn* conn, PGresult* r, const std::string& sql) : result(r) {
    if (result == nullptr) throw std::runtime_error(std::string("libpq: ") + PQerrorMessage(conn));
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) {
      return;
    }
    const char* sqlstate = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    std::string what = std::string(sqlstate ? sqlstate : "no SQLSTATE") + ": " +
                       PQresultErrorMessage(result) + " (" + sql.substr(0, 200) + ")";
    PQclear(result);
    throw std::runtime_error(what);
  }
  ~PqResult() { PQclear(result); }
  PqResult(const PqResult&) = delete;
  PqResult& operator=(const PqResult&) = delete;
  PGresult* result;
};

}  // namespace

Pq::Pq(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {
  if (conn_ == nullptr) throw std::runtime_error("libpq: out of memory");
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string why = PQerrorMessage(conn_);
    PQfinish(conn_);
    conn_ = nullptr;
    throw std::runtime_error("cannot connect (" + conninfo + "): " + why);
  }
}

Pq::~Pq() {
  if (conn_ != nullptr) PQfinish(conn_);
}

std::vector<std::vector<std::string>> Pq::Query(const std::string& sql) {
  const PqResult r(conn_, sql);
  std::vector<std::vector<std::string>> rows(static_cast<std::size_t>(PQntuples(r.result)));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (int c = 0; c < PQnfields(r.result); ++c) {
      rows[i].emplace_back(PQgetvalue(r.result, static_cast<int>(i), c));
    }
  }
  return rows;
}

std::size_t Pq::Lookup(const std::string& sql, std::string* first) {
  const PqResult r(conn_, sql);
  const int rows = PQntuples(r.result);
  if (rows > 0 && PQnfields(r.result) > 0) first->assign(PQgetvalue(r.result, 0, 0));
  return static_cast<std::size_t>(rows);
}

void Pq::Prepare(const std::string& name, const std::string& sql) {
  const PqResult r(conn_, PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr), sql);
}

std::size_t Pq::LookupPrepared(const std::string& name, const std::string& parameter,
                               std::string* first) {
  const char* values[] = {parameter.c_str()};
  const PqResult r(conn_, PQexecPrepared(conn_, name.c_str(), 1, values, nullptr, nullptr, 0),
                   name);
  const int rows = PQntuples(r.result);
  if (rows > 0 && PQnfields(r.result) > 0) first->assign(PQgetvalue(r.result, 0, 0));
  return static_cast<std::size_t>(rows);
}

}  // namespace tandem::bench
