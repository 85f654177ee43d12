// The supervisor's end of the peek fast path (DESIGN §14) to the runtime that serves peeks
// (interactive, or solo): the request ring it writes Peek and CancelPeek into, the answer ring it
// reads PeekResponses from, and the two rings' wake-up eventfds, which that runtime inherits when
// it is spawned (--peek-ring-fds). The rings are the segment's (shm/peek_ring.h).
//
// The path is used only once the runtime has said, in its RuntimeReady, that it reads the rings;
// until then, and whenever a record does not fit, commands take the channel. Either way each
// command carries its sequence number (ipc/channel.h), so the runtime applies one order.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shm/peek_ring.h"
#include "shm/segment.h"

namespace tandem::supervisor {

class PeekPath {
 public:
  // REQUIRES: the segment has peek rings (shm::PeekRingsOf). Makes the eventfds.
  explicit PeekPath(const shm::Segment& segment);
  ~PeekPath();
  PeekPath(const PeekPath&) = delete;
  PeekPath& operator=(const PeekPath&) = delete;

  // What the runtime inherits, and the value of its --peek-ring-fds.
  std::vector<int> InheritedFds() const { return {request_fd_, answer_fd_}; }
  std::string FdsArgument() const;

  // Command number `seq` (encoded) into the request ring; false when it does not fit now (it
  // then takes the channel).
  bool TrySend(std::uint64_t seq, const std::string& encoded);
  shm::RingReader& answers() { return answers_; }
  const shm::PeekRingsData& rings() const { return *rings_; }

 private:
  shm::PeekRingsData* rings_;
  int request_fd_;
  int answer_fd_;
  shm::RingWriter requests_;
  shm::RingReader answers_;
};

}  // namespace tandem::supervisor
