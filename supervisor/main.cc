// tandem-supervisor: see supervisor.h and `tandem-supervisor --help`.
#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <string>

#include "supervisor/config.h"
#include "supervisor/controller_auth.h"
#include "supervisor/process_group.h"
#include "supervisor/supervisor.h"

namespace {

// Protobuf logs to stderr by default, e.g. an ERROR line for every string field with invalid
// UTF-8 it refuses to parse: a hostile controller could flood stderr with them. Such a message is
// already answered with a CommandError and counted as malformed, so protobuf's own lines go to the
// debug log. FATAL is the exception: protobuf aborts right after it, and the reason must show.
void ForwardProtobufLog(google::protobuf::LogLevel level, const char* filename, int line,
                        const std::string& message) {
  if (level == google::protobuf::LOGLEVEL_FATAL) {
    spdlog::critical("protobuf {}:{}: {}", filename, line, message);
    return;
  }
  spdlog::debug("protobuf {}:{}: {}", filename, line, message);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tandem::supervisor;
  // First of all: until InitLogging, spdlog's default logger (which drops debug) receives these.
  google::protobuf::SetLogHandler(&ForwardProtobufLog);
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
  if (tandem::Status s = CheckControllerSecurity(*flags.config); !s.ok()) {
    spdlog::critical("impossible configuration: {}", s.message());
    return kExitConfig;
  }
  if (!flags.config->curve() && !IsLocalEndpoint(flags.config->controller_listen_addr)) {
    spdlog::warn(
        "the controller endpoint {} is not loopback and has no CURVE (--allow-insecure-endpoint): "
        "anyone who can reach it can control this replica",
        flags.config->controller_listen_addr);
  }
  // Before the supervisor starts its threads (unsetenv) and its runtimes (they must not inherit
  // NOTIFY_SOCKET): systemd's notification socket, when systemd started us (Type=notify).
  SystemdNotify notify = SystemdNotify::FromEnvironment();
  Supervisor supervisor(std::move(*flags.config), *signal_fd, std::move(notify));
  return supervisor.Run();
}
