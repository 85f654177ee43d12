// tandem-frontend: see frontend/README.md and `tandem-frontend --help`.
#include <google/protobuf/stubs/logging.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "frontend/pgwire/server.h"
#include "frontend/server/config.h"
#include "frontend/server/endpoints_file.h"
#include "frontend/server/live_catalog.h"
#include "frontend/server/local_replica.h"
#include "frontend/server/replica_driver.h"
#include "frontend/server/sql_executor.h"
#include "frontend/server/sql_sessions.h"
#include "frontend/server/sql_threads.h"
#include "frontend/sql/parse.h"
#include "ipc/curve_keys.h"

namespace {

using namespace tandem::frontend;

// Protobuf's own log lines go to the debug log (a hostile message must not flood stderr); FATAL
// is said, as protobuf aborts right after it.
void ForwardProtobufLog(google::protobuf::LogLevel level, const char* filename, int line,
                        const std::string& message) {
  if (level == google::protobuf::LOGLEVEL_FATAL) {
    spdlog::critical("protobuf {}:{}: {}", filename, line, message);
    return;
  }
  spdlog::debug("protobuf {}:{}: {}", filename, line, message);
}

// SIGTERM, SIGINT and SIGHUP are blocked in every thread (each inherits the mask of main) and
// taken by main's sigwait: the one place that decides to shut down (SIGTERM, SIGINT; SIGHUP is
// logged and ignored — there is nothing to reload).
sigset_t ShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

int Run(const FrontendConfig& config) {
  if (tandem::Status s = EnsureDirectory(config.data_dir, "--data-dir"); !s.ok()) {
    spdlog::critical("impossible configuration: {}", s.message());
    return kExitConfig;
  }
  spdlog::info("tandem-frontend: {}", DescribeConfiguration(config));
  // The catalog first: a second frontend on this data dir is refused before it starts a replica.
  auto catalog = LiveCatalog::Open(config.data_dir);
  if (!catalog.ok()) {
    spdlog::critical("catalog: {}", catalog.status().message());
    return catalog.status().code() == tandem::StatusCode::kUnavailable ? kExitUnavailable
                                                                       : kExitSoftware;
  }
  if (tandem::Status s = EnsureOneRowObject(**catalog); !s.ok()) {
    spdlog::critical("catalog: {}", s.message());
    return kExitSoftware;
  }
  {
    const auto snapshot = (*catalog)->Snapshot();
    spdlog::info("catalog {}: {} objects, {} indexes, {} commands of history",
                 config.data_dir + "/catalog", snapshot->objects().size(),
                 snapshot->indexes().size(), snapshot->history().commands().size());
  }

  std::unique_ptr<LocalReplica> local;
  std::vector<std::string> endpoints = config.replicas;
  if (endpoints.empty()) {
    local = std::make_unique<LocalReplica>(config.local, config.data_dir);
    auto endpoint = local->Start();
    if (!endpoint.ok()) {
      spdlog::critical("{}", endpoint.status().message());
      return endpoint.status().code() == tandem::StatusCode::kFailedPrecondition ? kExitConfig
                                                                                 : kExitUnavailable;
    }
    endpoints = {*endpoint};
  }

  ReplicaDriver::Options driver_options;
  driver_options.endpoints = endpoints;
  driver_options.history_window = config.history_window;
  if (!config.curve_server_key.empty()) {
    auto keys = tandem::ipc::LoadCurveClientKeys(config.curve_server_key, config.curve_client_key);
    if (!keys.ok()) {
      spdlog::critical("CURVE keys: {}", keys.status().message());
      return kExitConfig;
    }
    driver_options.curve = std::move(*keys);
  }
  driver_options.on_compaction = [live = catalog->get()](const std::string& index, tandem::Time t) {
    live->RecordCompaction(index, t);
  };
  auto driver = ReplicaDriver::Create(driver_options, **catalog);
  if (!driver.ok()) {
    std::fprintf(stderr, "tandem-frontend: --replica: %s\n", driver.status().message().c_str());
    return kExitUsage;
  }
  (*driver)->Start();

  SqlThreads threads;
  if (tandem::Status s = threads.Start(config.sql_threads, tandem::sql::kParseStackBytes);
      !s.ok()) {
    spdlog::critical("{}", s.message());
    return kExitSoftware;
  }
  tandem::pgwire::ServerOptions server_options;
  server_options.listen_address = config.sql_listen_addr;
  server_options.max_connections = config.max_connections;
  std::unique_ptr<LocalReads> local_reads;
  if (local != nullptr && config.local.local_reads == "on") {
    local_reads = std::make_unique<LocalReads>(SegmentName(config.local.replica_id));
  }
  SqlExecutor executor(**catalog, **driver, server_options.connection.server_version,
                       local_reads.get());
  SqlSessions sessions(threads, executor, config.statement_timeout);
  int exit_code = kExitOk;
  {
    tandem::pgwire::Server server(sessions, server_options);
    if (tandem::Status s = server.Start(); !s.ok()) {
      const bool usage = s.code() == tandem::StatusCode::kInvalidArgument;
      spdlog::critical("--sql-listen-addr {}: {}", config.sql_listen_addr, s.message());
      exit_code = usage ? kExitUsage : kExitUnavailable;
    } else {
      EndpointsFile endpoints_file(config.endpoints_file);
      tandem::Status written = tandem::Status::Ok();
      if (!config.endpoints_file.empty()) written = endpoints_file.Write(server.BoundAddress());
      if (!written.ok()) {
        spdlog::critical("{}", written.message());
        exit_code = kExitUnavailable;
      } else {
        spdlog::info("ready: SQL on {} (database tandem), {} replica(s)", server.BoundAddress(),
                     endpoints.size());
        const sigset_t signals = ShutdownSignals();
        for (;;) {
          int signal = 0;
          if (sigwait(&signals, &signal) != 0) continue;
          if (signal == SIGHUP) {
            spdlog::info("SIGHUP: nothing to reload (ignored)");
            continue;
          }
          spdlog::info("{}: shutting down", strsignal(signal));
          break;
        }
      }
      server.Stop();
    }
  }
  // Statements still waiting for the driver are answered ("shutting down"), then the threads end.
  (*driver)->Stop();
  threads.Stop();
  if (local) local->Stop();
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  google::protobuf::SetLogHandler(&ForwardProtobufLog);
  // Before any thread starts: every thread inherits the blocked mask.
  const sigset_t signals = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  FrontendFlags flags = ParseFrontendFlags(argc, argv);
  if (!flags.config) {
    std::fprintf(flags.exit_code == kExitOk ? stdout : stderr, "%s\n", flags.output.c_str());
    return flags.exit_code;
  }
  tandem::InitLogging("frontend", flags.config->log_level, flags.config->log_format);
  return Run(*flags.config);
}
