// tandem-fake-worker: a scripted stand-in for tandem-worker, so the supervisor can be tested on
// real processes before (and independently of) the real runtime — the way tini and dumb-init
// test themselves. It speaks the runtime side of the supervisor channel: opens the segment,
// records its pid and state in the header, reports RuntimeReady, and echoes every command:
//   Peek        → PeekResponse{uuid, rows: [(role)]}
//   anything    → Frontiers{id: "echo:<role>:<CommandName>"}
//
// Behaviour comes from TANDEM_FAKE_WORKER (inherited through the supervisor), rules separated by
// ';', each "<role>:<action>" (role: maintenance, interactive, solo or *):
//   crash=<ms>,<signal>   raise the signal <ms> after reporting ready
//   exit=<ms>,<code>      exit with the code <ms> after reporting ready
//   ignore-sigterm        ignore SIGTERM (to exercise the grace period)
//   no-ready              never report ready
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <zmq.hpp>

#include "ipc/channel.h"
#include "ipc/codec.h"
#include "shm/segment.h"

namespace {

using namespace tandem;

struct Script {
  int crash_ms = -1, crash_signal = 0;
  int exit_ms = -1, exit_code = 0;
  bool ignore_sigterm = false;
  bool no_ready = false;
};

Script ParseScript(const std::string& role) {
  Script s;
  const char* env = std::getenv("TANDEM_FAKE_WORKER");
  if (!env) return s;
  std::stringstream rules(env);
  for (std::string rule; std::getline(rules, rule, ';');) {
    const auto colon = rule.find(':');
    if (colon == std::string::npos) continue;
    const std::string who = rule.substr(0, colon), action = rule.substr(colon + 1);
    if (who != role && who != "*") continue;
    if (action.rfind("crash=", 0) == 0) {
      std::sscanf(action.c_str(), "crash=%d,%d", &s.crash_ms, &s.crash_signal);
    } else if (action.rfind("exit=", 0) == 0) {
      std::sscanf(action.c_str(), "exit=%d,%d", &s.exit_ms, &s.exit_code);
    } else if (action == "ignore-sigterm") {
      s.ignore_sigterm = true;
    } else if (action == "no-ready") {
      s.no_ready = true;
    }
  }
  return s;
}

int Main(int argc, char** argv) {
  std::string role, segment_name, channel;
  int workers = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--role") role = argv[i + 1];
    if (flag == "--segment") segment_name = argv[i + 1];
    if (flag == "--channel") channel = argv[i + 1];
    if (flag == "--workers") workers = std::atoi(argv[i + 1]);
  }
  const Script script = ParseScript(role);
  if (script.ignore_sigterm) signal(SIGTERM, SIG_IGN);
  auto segment = shm::Segment::Open(segment_name);
  if (!segment.ok()) {
    std::fprintf(stderr, "fake-worker: %s\n", segment.status().ToString().c_str());
    return 3;
  }
  const auto rrole =
      role == "interactive" ? shm::RuntimeRole::kInteractive : shm::RuntimeRole::kMaintenance;
  (*segment)->SetRuntime(rrole, getpid(), shm::RuntimeState::kAttached);

  zmq::context_t ctx(1);
  zmq::socket_t sock = ipc::ConnectRuntimeChannel(ctx, channel);
  if (!script.no_ready) {
    ipc::pb::Response ready;
    auto* r = ready.mutable_status()->mutable_runtime_ready();
    r->set_role(role);
    r->set_pid(getpid());
    r->set_workers(static_cast<std::uint32_t>(workers));
    sock.send(zmq::buffer(ipc::Encode(ready)), zmq::send_flags::none);
    (*segment)->SetRuntime(rrole, getpid(), shm::RuntimeState::kReady);
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
    if (script.crash_ms >= 0 && elapsed_ms >= script.crash_ms) raise(script.crash_signal);
    if (script.exit_ms >= 0 && elapsed_ms >= script.exit_ms) std::exit(script.exit_code);
    zmq::pollitem_t item{sock.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(10));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t msg;
    if (!sock.recv(msg, zmq::recv_flags::none)) continue;
    auto cmd = ipc::DecodeCommand(msg.to_string_view());
    if (!cmd.ok()) return 4;  // the supervisor only forwards what it decoded
    ipc::pb::Response out;
    if (cmd.message.has_peek()) {
      auto* pr = out.mutable_peek_response();
      pr->set_uuid(cmd.message.peek().uuid());
      auto* row = pr->mutable_rows()->add_rows();
      row->mutable_row()->add_datums()->set_string(role);
      row->set_count(1);
    } else {
      out.mutable_frontiers()->set_id("echo:" + role + ":" + ipc::CommandName(cmd.message));
    }
    sock.send(zmq::buffer(ipc::Encode(out)), zmq::send_flags::none);
  }
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
