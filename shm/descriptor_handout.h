// How a file that has no name reaches other processes — other users' included: a Unix socket that
// hands one descriptor (SCM_RIGHTS) to every process that connects, then closes the connection.
// The reader table (shm/reader_table.h) is a sealed memfd reached this way, so that no reader can
// change its size under the replica.
//
// Who may connect is the socket file's mode and group: connect(2) needs write permission on it.
// Each connection gets an open file description of its own (the file reopened through
// /proc/self/fd): what a receiver locks through it is its own, and goes when its last descriptor
// of it closes — never kept alive by the server or shared with another receiver.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <sys/types.h>

#include "base/status.h"

namespace tandem::shm {

class DescriptorHandout {
 public:
  // Binds `path` (nothing may be there), gives it `mode` and, if set, group `gid`, and serves the
  // file of `fd` (which must stay open while this lives) from a thread of its own until destroyed.
  // The thread never waits for a peer: a connection is answered at once and closed.
  [[nodiscard]] static Result<std::unique_ptr<DescriptorHandout>> Start(const std::string& path,
                                                                        int fd, mode_t mode,
                                                                        std::optional<gid_t> gid);
  // Stops serving and closes the socket; the socket file stays until its owner removes it. In a
  // process forked from the one that started it (the thread is not there) it only closes.
  ~DescriptorHandout();
  DescriptorHandout(const DescriptorHandout&) = delete;
  DescriptorHandout& operator=(const DescriptorHandout&) = delete;

  std::uint64_t handed() const { return handed_.load(std::memory_order_relaxed); }
  // Connections that got nothing (a reopen or a send failed: the peer, or this process, is out of
  // descriptors).
  std::uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  DescriptorHandout() = default;
  void Serve();

  int listen_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd: written once to stop Serve
  int fd_ = -1;       // the file handed out (not owned)
  std::string path_;
  std::uint64_t fork_generation_ = 0;
  std::atomic<std::uint64_t> handed_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::thread thread_;
};

// What a connecting process gets: a descriptor of its own (close it), and who served it.
struct ReceivedDescriptor {
  int fd = -1;
  uid_t server_uid = 0;
};

// Connects to `path` and takes the descriptor served there. NotFound: nothing at `path`;
// FailedPrecondition: the socket's mode or group does not let this user connect; Unavailable:
// nobody serves it (its server exited) or no descriptor came within `timeout`; InvalidArgument:
// a path too long for a Unix socket.
[[nodiscard]] Result<ReceivedDescriptor> ReceiveDescriptor(const std::string& path,
                                                           std::chrono::milliseconds timeout);

// Whether a process serves `path` now (a connect is accepted). False for anything but a socket.
bool HandoutServed(const std::string& path);

}  // namespace tandem::shm
