// The supervisor's link to one runtime (DESIGN §3.1, §14): its channel (a ZeroMQ PAIR over
// ipc:// in the replica's runtime directory), its process id, and — for the runtime that serves
// peeks, when the segment has rings — the peek fast path (peek_path.h).
//
// Commands: every command the multiplexer sends it gets the next number (1, 2, 3, … over both
// paths: ipc/channel.h), so the runtime applies one order whichever path a command took. A Peek
// or CancelPeek takes the request ring once the runtime has said (RuntimeReady) that it reads the
// rings, and when it fits; everything else, and a peek that does not fit, takes the channel (a
// full ring is back-pressure onto the slower path, never a drop). Before the runtime is ready,
// commands wait in order (unsent) and are sent when it says it is.
//
// Responses: the loop takes them one at a time (Receive: the channel; ReceiveAnswer: the answer
// ring) as RuntimeMessages. The link keeps what is its own — the ready handshake, the Reconciled
// report's metrics — and marks the rest to be passed on (to the multiplexer, then the controller
// endpoint). It never calls anyone back.
//
// The stall watch (guards.h): the runtime's progress counter in the segment, when it last moved,
// and whether the link is stalled (not ready) for --runtime-stall-timeout.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "base/role.h"
#include "base/status.h"
#include "ipc/codec.h"
#include "shm/peek_ring.h"
#include "shm/segment.h"
#include "supervisor/guards.h"
#include "supervisor/metrics.h"
#include "supervisor/multiplexer.h"
#include "supervisor/peek_path.h"
#include "supervisor/poll.h"

namespace tandem::supervisor {

// One response of a runtime: decoded, with its bytes as the runtime encoded them (forwarded as
// they are when nothing in them changes). The bytes are valid while this lives; a record taken
// from the answer ring is consumed (popped) when this is destroyed.
class RuntimeMessage {
 public:
  // From the channel.
  explicit RuntimeMessage(zmq::message_t message);
  // The front record of the answer ring `ring`.
  RuntimeMessage(std::string_view record, shm::RingReader& ring);
  RuntimeMessage(RuntimeMessage&& other) noexcept;
  RuntimeMessage& operator=(RuntimeMessage&&) = delete;
  RuntimeMessage(const RuntimeMessage&) = delete;
  RuntimeMessage& operator=(const RuntimeMessage&) = delete;
  ~RuntimeMessage();

  ipc::pb::Response& response() { return response_; }
  std::string_view bytes() const { return ring_ != nullptr ? record_ : message_.to_string_view(); }
  // False when it was the link's alone: the runtime's RuntimeReady, or the interactive runtime's
  // Reconciled (the maintenance runtime's reports the dataflows once).
  bool forward() const { return forward_; }

 private:
  friend class RuntimeLink;
  void Decode();

  ipc::pb::Response response_;
  zmq::message_t message_;           // from the channel
  std::string_view record_;          // from the ring: the record, left in it until the Pop
  shm::RingReader* ring_ = nullptr;  // set while the record is to be popped
  bool forward_ = true;
};

class RuntimeLink final : public RuntimeStream {
 public:
  using Clock = std::chrono::steady_clock;

  // `metrics`: the replica's (the link counts tandem_runtime_stalled, tandem_runtime_stalls_total
  // and tandem_dataflows_reconciled_total); `quiet`: the loop's (poll.h).
  RuntimeLink(Role role, Metrics& metrics, QuietSockets& quiet);
  ~RuntimeLink() override;
  RuntimeLink(const RuntimeLink&) = delete;
  RuntimeLink& operator=(const RuntimeLink&) = delete;

  // ---- Start-up (the Supervisor's)
  // Binds the channel in the replica's runtime directory. Unavailable with the reason.
  Status Bind(zmq::context_t& ctx, const std::string& runtime_dir);
  // The peek fast path to this runtime (REQUIRES: it serves peeks and `segment` has peek rings):
  // its eventfds are what the runtime's process inherits.
  const PeekPath& EnablePeekPath(const shm::Segment& segment);
  void Spawned(pid_t pid) { pid_ = pid; }
  // The replica ends: the channel and the peek path are closed.
  void Close();

  // ---- Commands (the multiplexer's)
  // Numbers the command and sends it: a peek through the peek fast path when it can, everything
  // else (and a peek that does not fit) on the channel; kept in order while not ready.
  void Send(const std::string& encoded, bool peek) override;

  // ---- Responses (the loop's)
  // The next response on the channel; none when nothing waits (the channel is quiet then).
  std::optional<RuntimeMessage> Receive();
  // The next record of the peek answer ring; none when nothing waits or there is no peek path.
  std::optional<RuntimeMessage> ReceiveAnswer();

  // ---- The stall watch (the loop's, while ready)
  // `progress`: the runtime's counter in the segment now. Marks the link stalled (not ready) when
  // it has not moved for --runtime-stall-timeout, and not stalled once it moves; returns the
  // seconds without progress once they reach --runtime-stall-kill (the replica goes down then).
  std::optional<double> WatchProgress(std::uint64_t progress, Clock::time_point now,
                                      const Guards& guards);

  Role role() const { return role_; }
  const std::string& endpoint() const { return endpoint_; }
  pid_t pid() const { return pid_; }
  bool ready() const { return ready_; }
  bool stalled() const { return stalled_; }
  Clock::time_point progress_at() const { return progress_at_; }
  // The peek fast path; nullptr when this runtime has none.
  PeekPath* peek_path() { return peek_path_.get(); }
  const PeekPath* peek_path() const { return peek_path_.get(); }
  // The channel, for the loop's poll.
  void* channel_handle() const { return channel_->handle(); }

 private:
  // Sends command number `seq` now, or keeps it in unsent_ (in order) while the runtime is not
  // connected yet.
  void Deliver(std::uint64_t seq, const std::string& encoded, bool peek);
  // Sends what waited in unsent_ (the runtime is ready now).
  void SendUnsent();
  // What of `message` is the link's own: the ready handshake, the Reconciled report's metrics.
  void OnStatus(RuntimeMessage& message);

  const Role role_;
  Metrics& metrics_;
  QuietSockets& quiet_;
  std::unique_ptr<zmq::socket_t> channel_;
  std::string endpoint_;
  pid_t pid_ = 0;
  bool ready_ = false;
  // The number of the next command sent to it (ipc/channel.h: 1, 2, 3, … over every path).
  std::uint64_t next_seq_ = 1;
  // The peek fast path (DESIGN §14), when this runtime serves peeks and the segment has rings;
  // used once the runtime said it reads them (`peek_ring`, in its RuntimeReady).
  std::unique_ptr<PeekPath> peek_path_;
  bool peek_ring_ = false;
  // Commands for it before it connected (a send finds no peer then): sent, in order, once it
  // says it is ready.
  struct Unsent {
    std::uint64_t seq;
    std::string encoded;
    bool peek;
  };
  std::vector<Unsent> unsent_;
  // The stall watch: the last progress counter seen, and when it last moved.
  std::uint64_t progress_ = 0;
  Clock::time_point progress_at_;
  bool stalled_ = false;  // for --runtime-stall-timeout or longer
};

}  // namespace tandem::supervisor
