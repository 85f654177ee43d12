// Shared fate (DESIGN §5) and readiness: when a runtime dies or stalls past --runtime-stall-kill
// the supervisor takes the whole group down; a clean shutdown; leaving nothing behind.
#include "supervisor/supervisor.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "shm/layout.h"

namespace tandem::supervisor {

int Supervisor::SharedFate(const ChildExit& first, int exit_code) {
  spdlog::critical("the {} runtime (pid {}) {}; taking the replica down (shared fate)", first.role,
                   first.pid, first.Describe());
  notify_.Stopping("the " + first.role + " runtime " + first.Describe() + ": shared fate");
  children_.SignalAll(SIGKILL);
  std::vector<ChildExit> others;
  if (!children_.ReapAll(5.0, &others)) {
    spdlog::error("some runtimes did not exit after SIGKILL");
  }
  for (const auto& e : others)
    spdlog::info("the {} runtime (pid {}) {}", e.role, e.pid, e.Describe());
  Cleanup(config_.keep_segment_on_crash);
  if (config_.keep_segment_on_crash) {
    spdlog::warn("kept segment /dev/shm/{} for inspection (tandem-shm info {})", config_.shm_name,
                 config_.shm_name);
  }
  spdlog::info("exiting with {}", exit_code);
  return exit_code;
}

int Supervisor::Shutdown(const std::string& why) {
  spdlog::info("{}: stopping the runtimes (grace period {} s)", why, config_.grace_period_s);
  notify_.Stopping("stopping: " + why);
  for (const auto& [id, link] : links_) {
    segment_->SetRuntime(id, link.pid(), shm::RuntimeState::kStopping);
  }
  children_.SignalAll(SIGTERM);
  std::vector<ChildExit> exited;
  if (!children_.ReapAll(config_.grace_period_s, &exited)) {
    for (const auto& [pid, role] : children_.live()) {
      spdlog::warn("the {} runtime (pid {}) outlived the grace period; killing it", role, pid);
    }
    children_.SignalAll(SIGKILL);
    children_.ReapAll(5.0, &exited);
  }
  for (const auto& e : exited)
    spdlog::info("the {} runtime (pid {}) {}", e.role, e.pid, e.Describe());
  Cleanup(false);
  spdlog::info("shut down cleanly");
  return kExitOk;
}

void Supervisor::Cleanup(bool keep_segment) {
  for (auto& [id, link] : links_) link.Close();
  // Local readers still mapping the segment fail from their next call on (DESIGN §11).
  if (segment_) segment_->MarkClosed();
  if (reader_table_) {
    reader_table_.reset();  // lets byte 0's lock go: readers see the supervisor gone
    (void)shm::ReaderTable::Remove(config_.shm_name);
  }
  if (segment_ && !keep_segment) {
    (void)shm::Segment::Remove(config_.shm_name);
  }
  segment_.reset();          // releases the creator's lock: a kept segment reads as stale
  if (endpoints_written_) {  // it names ports this replica no longer holds
    // (A replacement between this check and the remove is not guarded: two supervisors were
    // given one path, which is an operator's error this only makes less harmful.)
    struct stat now {};
    if (stat(config_.endpoints_file.c_str(), &now) != 0) {
      // gone already: nothing to remove
    } else if (now.st_dev == endpoints_written_->device &&
               now.st_ino == endpoints_written_->inode &&
               now.st_mtim.tv_sec == endpoints_written_->modified.tv_sec &&
               now.st_mtim.tv_nsec == endpoints_written_->modified.tv_nsec) {
      std::error_code ec;
      std::filesystem::remove(config_.endpoints_file, ec);
    } else {
      spdlog::warn("--endpoints-file {} is no longer the one this supervisor wrote: left alone",
                   config_.endpoints_file);
    }
    endpoints_written_.reset();
  }
  if (!runtime_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(runtime_dir_, ec);
    if (ec) spdlog::warn("could not remove {}: {}", runtime_dir_, ec.message());
    runtime_dir_.clear();
  }
}

bool Supervisor::Ready() const {
  if (!segment_ || !bound_) return false;
  for (const auto& [id, link] : links_) {
    if (!link.ready() || link.stalled()) return false;
  }
  return true;
}

std::string Supervisor::ReadinessStatus() const {
  if (Ready()) return "ready: controller endpoint " + endpoint_.bound_address();
  std::string why = "not ready:";
  for (const auto& [id, link] : links_) {
    if (!link.ready()) why += std::string(" ") + RoleName(id) + " runtime not ready;";
    if (link.ready() && link.stalled()) {
      why += std::string(" ") + RoleName(id) + " runtime (pid " + std::to_string(link.pid()) +
             ") stalled;";
    }
  }
  return why;
}

std::optional<int> Supervisor::WatchRuntimes(Clock::time_point now) {
  if (!segment_) return std::nullopt;
  for (auto& [id, link] : links_) {
    if (!link.ready()) continue;  // before it: --startup-timeout
    const std::uint64_t progress =
        segment_->header().runtimes[shm::RuntimeEntryOf(id)].progress.load(
            std::memory_order_relaxed);
    if (auto idle = link.WatchProgress(progress, now, config_.guards)) {
      return StallFate(link, *idle);
    }
  }
  return std::nullopt;
}

int Supervisor::StallFate(const RuntimeLink& stalled, double seconds) {
  spdlog::critical(
      "the {} runtime (pid {}) has made no progress for {} s (--runtime-stall-kill {} s); taking "
      "the replica down (shared fate)",
      RoleName(stalled.role()), stalled.pid(), SecondsText(seconds),
      SecondsText(config_.guards.runtime_stall_kill_s));
  children_.SignalAll(SIGKILL);  // SIGKILL ends a stopped process too
  std::vector<ChildExit> exited;
  if (!children_.ReapAll(5.0, &exited)) spdlog::error("some runtimes did not exit after SIGKILL");
  for (const auto& e : exited)
    spdlog::info("the {} runtime (pid {}) {}", e.role, e.pid, e.Describe());
  Cleanup(config_.keep_segment_on_crash);
  spdlog::info("exiting with {}", kExitRuntimeStalled);
  return kExitRuntimeStalled;
}

}  // namespace tandem::supervisor
