#include "tools/bench/postgres_peer.h"

#include <stdexcept>

#include "tests/postgres_server.h"

namespace tandem::bench {

std::optional<std::string> PostgresPeer::Unavailable() {
  return testing::PostgresServer::Unavailable();
}

PostgresPeer::PostgresPeer() : server_(std::make_unique<testing::PostgresServer>()) {
  if (!server_->ok()) throw std::runtime_error("PostgreSQL did not start: " + server_->error());
}

PostgresPeer::~PostgresPeer() = default;  // PostgresServer's destructor stops it

std::string PostgresPeer::conninfo() const { return server_->conninfo(); }

pid_t PostgresPeer::pid() const { return server_->pid(); }

}  // namespace tandem::bench
