// tandem-test-pgwire-server: the PostgreSQL listener of frontend/pgwire with the fake SQL layer
// of tests/pgwire_fake_sessions.h, for running real clients (psql, psycopg2) against it.
//
//   tandem-test-pgwire-server [--listen HOST:PORT] [--port-file FILE] [--max-connections N]
//                             [--max-open-files N]
//
// --max-open-files sets RLIMIT_NOFILE before the listener starts, to run it short of descriptors.
//
// The port bound (the kernel's for port 0) is written to FILE once the listener is up, whole (a
// rename): a reader that finds the file finds the port. SIGTERM or SIGINT stops it: exit 0.
// Exit 64 for bad usage, 69 when it cannot listen.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "frontend/pgwire/server.h"
#include "pgwire_fake_sessions.h"

int main(int argc, char** argv) {
  tandem::pgwire::ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  std::string port_file;
  rlim_t max_open_files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: %s [--listen HOST:PORT] [--port-file FILE] "
                   "[--max-connections N] [--max-open-files N]\n",
                   argv[0]);
      return 64;
    }
    const std::string value = argv[++i];
    if (arg == "--listen") {
      options.listen_address = value;
    } else if (arg == "--port-file") {
      port_file = value;
    } else if (arg == "--max-connections") {
      options.max_connections = std::strtoul(value.c_str(), nullptr, 10);
    } else if (arg == "--max-open-files") {
      max_open_files = std::strtoul(value.c_str(), nullptr, 10);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      return 64;
    }
  }
  // Blocked before any thread starts, so every thread inherits the mask and sigwait gets them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  if (max_open_files > 0) {
    const rlimit limit{max_open_files, max_open_files};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      std::perror("setrlimit");
      return 69;
    }
  }
  tandem::testing::FakeSessions sessions;
  tandem::pgwire::Server server(sessions, options);
  if (const tandem::Status s = server.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 69;
  }
  std::fprintf(stderr, "listening on %s\n", server.BoundAddress().c_str());
  if (!port_file.empty()) {
    const std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << server.port() << "\n";
    if (std::rename(tmp.c_str(), port_file.c_str()) != 0) {
      std::perror("rename");
      return 69;
    }
  }
  int signal = 0;
  sigwait(&stop, &signal);
  server.Stop();
  return 0;
}
