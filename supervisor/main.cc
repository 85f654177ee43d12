// tandem-supervisor: see supervisor.h and `tandem-supervisor --help`.
#include <cstdio>
#include <exception>

#include "supervisor/config.h"
#include "supervisor/process_group.h"
#include "supervisor/supervisor.h"

int main(int argc, char** argv) {
  using namespace tandem::supervisor;
  // Before anything starts a thread: every thread inherits the blocked mask.
  auto signal_fd = BlockAndOpenSignalFd();
  if (!signal_fd.ok()) {
    std::fprintf(stderr, "tandem-supervisor: %s\n", signal_fd.status().ToString().c_str());
    return kExitUnavailable;
  }
  FlagsOutcome flags = ParseSupervisorFlags(argc, argv);
  if (!flags.config) {
    std::fprintf(flags.exit_code == kExitOk ? stdout : stderr, "%s\n", flags.output.c_str());
    return flags.exit_code;
  }
  tandem::InitLogging("supervisor", flags.config->log_level, flags.config->log_format);
  if (tandem::Status s = CheckConfiguration(*flags.config); !s.ok()) {
    spdlog::critical("impossible configuration: {}", s.message());
    return kExitConfig;
  }
  Supervisor supervisor(std::move(*flags.config), *signal_fd);
  return supervisor.Run();
}
