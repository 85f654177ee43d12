// The hostile-client suite's common ground (issue 12, DESIGN §12): a real replica (the real
// supervisor and both real runtimes) serving one key_value index, and the check every attack is
// followed by — a fresh peek through a fresh controller session must still be answered with rows.
//
// Each attack lives in a file of its own (`<class>_test.cc`, picked up by CMakeLists.txt) and
// ends with ExpectStillServing(); RSS bounds use RssBytes().
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shm/segment.h"
#include "supervisor_harness.h"
#include "unit/protocol_samples.h"

namespace tandem::testing::adversarial {

using namespace std::chrono_literals;

// Under AddressSanitizer freed memory waits in its quarantine (256 MiB by default) and the
// allocator caches more, so a process's RSS says nothing about what it keeps: RSS bounds are
// asserted only in uninstrumented builds (the numbers are still printed).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRssIsMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kRssIsMeaningful = false;
#else
inline constexpr bool kRssIsMeaningful = true;
#endif
#else
inline constexpr bool kRssIsMeaningful = true;
#endif

// Whether the processes run instrumented by a sanitizer (ASan, TSan): several times slower, so a
// workload sized to keep a replica busy uninstrumented would outrun it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kInstrumented = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kInstrumented = true;
#else
inline constexpr bool kInstrumented = false;
#endif
#else
inline constexpr bool kInstrumented = false;
#endif

// A field of /proc/<pid>/status given in kB ("VmRSS:"), in bytes (0 when the process is gone).
inline std::uint64_t StatusBytes(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(field.size())) * 1024;
  }
  return 0;
}
// Resident set size of process `pid`.
inline std::uint64_t RssBytes(pid_t pid) { return StatusBytes(pid, "VmRSS:"); }
// Its private (anonymous) resident memory: what it allocated itself, not the segment pages it
// has read.
inline std::uint64_t AnonRssBytes(pid_t pid) { return StatusBytes(pid, "RssAnon:"); }

// Stops process `pid` (SIGSTOP) for its scope, and SIGCONTs it when it goes, whatever the test did.
struct Stopped {
  explicit Stopped(pid_t p) : pid(p) { kill(pid, SIGSTOP); }
  ~Stopped() { kill(pid, SIGCONT); }
  pid_t pid;
};

// What a Target runs: the mode, the segment (size, name), how many keys its key_value source
// has and how often it ticks, and — for a CURVE target (curve_auth_test.cc) — the keys its own
// controller and ExpectStillServing's use (unset: no security mechanism).
struct TargetOptions {
  bool two_runtime = true;
  std::string shm_size = "64MiB";
  std::uint64_t keys = 100;
  std::string segment_name;  // empty: the harness's unique name
  std::optional<ipc::CurveClientKeys> client_keys;
  std::uint64_t tick_interval_us = 0;  // 0: ipc::samples::KeyValueImport's (500 µs)
};

// A replica with the real runtime (two-runtime unless told otherwise): key_value source u1 →
// index u2 (keyed by k), readable once Start() returns true.
class Target {
 public:
  explicit Target(std::vector<std::string> extra_args = {}, int workers = 2,
                  TargetOptions options = {})
      : keys_(options.keys),
        tick_interval_us_(options.tick_interval_us),
        client_keys_(std::move(options.client_keys)),
        sup_({.extra_args = std::move(extra_args),
              .two_runtime = options.two_runtime,
              .workers = workers,
              .worker_binary = TANDEM_WORKER_BIN,
              .shm_size = options.shm_size,
              .segment_name = std::move(options.segment_name)}) {}

  // Waits for readiness, says Hello, creates u1 → u2 and waits until u2 is readable.
  bool Start() {
    if (!sup_.WaitReady()) return false;
    ctl_ = std::make_unique<TestController>(sup_.controller_endpoint(), client_keys_);
    if (!ctl_->Hello()) return false;
    ipc::pb::Command c = ipc::samples::EmptyDataflow("adversarial");
    auto* d = ipc::samples::Desc(c);
    *d->add_source_imports() = ipc::samples::KeyValueImport("u1");
    auto* kv = d->mutable_source_imports(0)->mutable_source()->mutable_key_value();
    kv->set_keys(keys_);
    if (tick_interval_us_ > 0) kv->set_tick_interval_us(tick_interval_us_);
    *d->add_index_exports() = ipc::samples::Export("u2", "u1", {0});
    ctl_->Send(c);
    // Ingesting the source is the long part: allow 10 s plus a second per 20 000 keys (1.5 M keys
    // under ASan, beside another test on 2 cores, took longer than 10 s).
    return ReadableAt(1, 10s + std::chrono::seconds(keys_ / 20000));
  }

  // True once u2's write frontier is past `t` (within `within`).
  bool ReadableAt(Time t, std::chrono::milliseconds within = 10s) {
    return ctl_
        ->ReceiveUntil(
            [&](const ipc::pb::Response& r) {
              return r.has_frontiers() && r.frontiers().id() == "u2" &&
                     (r.frontiers().write().elements().empty() ||
                      r.frontiers().write().elements(0) > t);
            },
            within)
        .has_value();
  }

  // The check after every attack: the supervisor and both runtimes are up, and a peek of u2 at
  // time 1 (of key 1 when u2 has more than 10^4 keys) through a new observer session is answered
  // with rows.
  void ExpectStillServing() {
    ASSERT_FALSE(sup_.Exited()) << "the replica went down\n" << sup_.Log();
    TestController reader(sup_.controller_endpoint(), client_keys_);
    ASSERT_TRUE(reader.Hello("after-attack", /*observer=*/true)) << sup_.Log();
    const std::string uuid = "after-attack-" + std::to_string(++checks_);
    // A large index is looked up by key: a full scan of it may be over max_result_size.
    reader.Send(keys_ > 10000 ? ipc::samples::PeekAt(uuid, "u2", 1, 1)
                              : ipc::samples::PeekAt(uuid, "u2", 1));
    auto r = reader.ReceiveUntil(
        [&](const ipc::pb::Response& r) {
          return r.has_peek_response() && r.peek_response().uuid().find(uuid) != std::string::npos;
        },
        10s);
    ASSERT_TRUE(r) << "no answer to a good peek\n" << sup_.Log();
    ASSERT_TRUE(r->peek_response().has_rows()) << r->peek_response().error();
    EXPECT_GT(r->peek_response().rows().rows_size(), 0);
  }

  // The runtime that serves peeks: interactive's entry of the segment header (solo's own).
  pid_t ServingRuntime() {
    auto segment = shm::Segment::Open(sup_.segment());
    if (!segment.ok()) return -1;
    const bool solo = sup_.runtime_pids().size() == 1;
    return (*segment)
        ->header()
        .runtimes[shm::RuntimeEntryOf(solo ? Role::kSolo : Role::kInteractive)]
        .pid.load();
  }
  SupervisorProcess& sup() { return sup_; }
  TestController& ctl() { return *ctl_; }

 private:
  std::uint64_t keys_;
  std::uint64_t tick_interval_us_;
  std::optional<ipc::CurveClientKeys> client_keys_;
  SupervisorProcess sup_;
  std::unique_ptr<TestController> ctl_;
  int checks_ = 0;
};

}  // namespace tandem::testing::adversarial
