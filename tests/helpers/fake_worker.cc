// tandem-fake-worker: a scripted stand-in for tandem-worker, so the supervisor can be tested on
// real processes before (and independently of) the real runtime — the way tini and dumb-init
// test themselves. It speaks the runtime side of the supervisor channel: opens the segment,
// records its pid and state in the header (and raises its progress counter every turn), reports
// RuntimeReady, and echoes every command:
//   Peek        → PeekResponse{uuid, rows: [(role, uuid)]}  (the uuid as this runtime got it)
//   WriteTable  → WriteResponse{uuid as this runtime got it, time: 1 maintenance, 2 interactive,
//                 3 solo} — or, for a client uuid (ipc::ClientUuidOfWrite) beginning with "fail",
//                 WriteResponse{uuid, error: "<role> failed it"} —, then the echo below
//   anything    → Frontiers{id: "echo:<role>:<CommandName>"}
// Given --data-dir DIR (the runtime that writes tables), it creates DIR/fake-<role>, so a test can
// tell which runtimes got it.
//
// Behaviour comes from TANDEM_FAKE_WORKER (inherited through the supervisor), rules separated by
// ';', each "<role>:<action>" (role: maintenance, interactive, solo or *):
//   crash=<ms>,<signal>   raise the signal <ms> after reporting ready
//   exit=<ms>,<code>      exit with the code <ms> after reporting ready
//   ignore-sigterm        ignore SIGTERM (to exercise the grace period)
//   no-ready              never report ready
//   hold-writes           never answer a WriteTable (a disk that does not keep up)
//   frontiers             report frontiers like a runtime that renders every dataflow, before the
//                         echo: on CreateDataflow, each id it creates at write [as_of + 1] —
//                         except a counter source with a max, reported closed (empty: it ran to
//                         its max); on AllowCompaction with the empty frontier (a drop), the index
//                         closed, and once all of a dataflow's indexes are dropped, every id of it
//                         closed (as tandem-worker does)
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "ipc/channel.h"
#include "ipc/codec.h"
#include "ipc/model.h"
#include "shm/segment.h"

namespace {

using namespace tandem;

struct Script {
  int crash_ms = -1, crash_signal = 0;
  int exit_ms = -1, exit_code = 0;
  bool ignore_sigterm = false;
  bool no_ready = false;
  bool frontiers = false;
  bool hold_writes = false;
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
    } else if (action == "frontiers") {
      s.frontiers = true;
    } else if (action == "hold-writes") {
      s.hold_writes = true;
    }
  }
  return s;
}

ipc::pb::Response MakeFrontiers(const std::string& id, std::optional<std::uint64_t> write) {
  ipc::pb::Response out;
  auto* f = out.mutable_frontiers();
  f->set_id(id);
  for (auto* e : {f->mutable_write(), f->mutable_input(), f->mutable_output()}) {
    if (write) e->add_elements(*write);
  }
  return out;
}

// The "frontiers" script: what a runtime rendering every dataflow would report.
class FrontierReports {
 public:
  std::vector<ipc::pb::Response> On(const ipc::pb::Command& c) {
    std::vector<ipc::pb::Response> out;
    if (c.has_create_dataflow()) {
      const auto& d = c.create_dataflow().desc();
      const std::uint64_t at = (d.as_of().elements().empty() ? 0 : d.as_of().elements(0)) + 1;
      Dataflow& df = dataflows_.emplace_back();
      for (const auto& s : d.source_imports()) {
        const bool ended = s.source().has_counter() && s.source().counter().max() > 0;
        out.push_back(MakeFrontiers(s.id(), ended ? std::nullopt : std::optional(at)));
        df.ids.push_back(s.id());
      }
      for (const auto& b : d.objects_to_build()) {
        out.push_back(MakeFrontiers(b.id(), at));
        df.ids.push_back(b.id());
      }
      for (const auto& x : d.index_exports()) {
        out.push_back(MakeFrontiers(x.id(), at));
        df.ids.push_back(x.id());
        df.live_exports.insert(x.id());
      }
    }
    if (ipc::IsDrop(c)) {
      const std::string& id = c.allow_compaction().id();
      for (auto it = dataflows_.begin(); it != dataflows_.end(); ++it) {
        if (!it->live_exports.erase(id)) continue;
        if (!it->live_exports.empty()) {
          out.push_back(MakeFrontiers(id, std::nullopt));
        } else {
          for (const auto& all : it->ids) out.push_back(MakeFrontiers(all, std::nullopt));
          dataflows_.erase(it);
        }
        break;
      }
    }
    return out;
  }

 private:
  struct Dataflow {
    std::vector<std::string> ids;
    std::set<std::string> live_exports;
  };
  std::vector<Dataflow> dataflows_;
};

int Main(int argc, char** argv) {
  std::string role, segment_name, channel, data_dir;
  int workers = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--role") role = argv[i + 1];
    if (flag == "--segment") segment_name = argv[i + 1];
    if (flag == "--channel") channel = argv[i + 1];
    if (flag == "--workers") workers = std::atoi(argv[i + 1]);
    if (flag == "--data-dir") data_dir = argv[i + 1];
  }
  if (!data_dir.empty()) std::ofstream(data_dir + "/fake-" + role) << getpid() << "\n";
  const Script script = ParseScript(role);
  if (script.ignore_sigterm) signal(SIGTERM, SIG_IGN);
  auto segment = shm::Segment::Open(segment_name);
  if (!segment.ok()) {
    std::fprintf(stderr, "fake-worker: %s\n", segment.status().ToString().c_str());
    return 3;
  }
  const Role header_role = role == "interactive" ? Role::kInteractive : Role::kMaintenance;
  (*segment)->SetRuntime(header_role, getpid(), shm::RuntimeState::kAttached);

  zmq::context_t ctx(1);
  zmq::socket_t sock = ipc::ConnectRuntimeChannel(ctx, channel);
  if (!script.no_ready) {
    ipc::pb::Response ready;
    auto* r = ready.mutable_status()->mutable_runtime_ready();
    r->set_role(role);
    r->set_pid(getpid());
    r->set_workers(static_cast<std::uint32_t>(workers));
    sock.send(zmq::buffer(ipc::Encode(ready)), zmq::send_flags::none);
    (*segment)->SetRuntime(header_role, getpid(), shm::RuntimeState::kReady);
  }
  FrontierReports reports;
  std::uint64_t next_seq = 1;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
    if (script.crash_ms >= 0 && elapsed_ms >= script.crash_ms) raise(script.crash_signal);
    if (script.exit_ms >= 0 && elapsed_ms >= script.exit_ms) std::exit(script.exit_code);
    zmq::pollitem_t item{sock.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(10));
    // Progress, as tandem-worker reports it (the supervisor's stall watch; shm/layout.h).
    (*segment)->mutable_header().runtimes[shm::RuntimeEntryOf(header_role)].progress.fetch_add(
        1, std::memory_order_relaxed);
    if (!(item.revents & ZMQ_POLLIN)) continue;
    // A command is two frames: its sequence number, then its encoding (ipc/channel.h). This
    // runtime takes no peek rings, so every number comes here, in order.
    zmq::message_t seq, msg;
    if (!sock.recv(seq, zmq::recv_flags::none)) continue;
    if (!seq.more() || !sock.recv(msg, zmq::recv_flags::none)) return 4;
    const auto number = ipc::ParseSequence(seq.to_string_view());
    if (!number || *number != next_seq++) return 5;
    auto cmd = ipc::DecodeCommand(msg.to_string_view());
    if (!cmd.ok()) return 4;  // the supervisor only forwards what it decoded
    if (script.frontiers) {
      for (const auto& report : reports.On(cmd.message)) {
        sock.send(zmq::buffer(ipc::Encode(report)), zmq::send_flags::none);
      }
    }
    ipc::pb::Response out;
    if (cmd.message.has_peek()) {
      auto* pr = out.mutable_peek_response();
      pr->set_uuid(cmd.message.peek().uuid());
      auto* row = pr->mutable_rows()->add_rows();
      row->mutable_row()->add_datums()->set_string(role);
      row->mutable_row()->add_datums()->set_string(cmd.message.peek().uuid());
      row->set_count(1);
    } else if (cmd.message.has_write_table()) {
      ipc::pb::Response answer;
      const std::string& uuid = cmd.message.write_table().uuid();
      answer.mutable_write_response()->set_uuid(uuid);
      if (ipc::ClientUuidOfWrite(uuid).starts_with("fail")) {
        answer.mutable_write_response()->set_error(role + " failed it");
      } else {
        answer.mutable_write_response()->set_time(role == "maintenance"   ? 1
                                                  : role == "interactive" ? 2
                                                                          : 3);
      }
      if (!script.hold_writes) sock.send(zmq::buffer(ipc::Encode(answer)), zmq::send_flags::none);
      out.mutable_frontiers()->set_id("echo:" + role + ":" + ipc::CommandName(cmd.message));
    } else {
      out.mutable_frontiers()->set_id("echo:" + role + ":" + ipc::CommandName(cmd.message));
    }
    sock.send(zmq::buffer(ipc::Encode(out)), zmq::send_flags::none);
  }
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
