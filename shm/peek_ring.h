// The peek fast path's rings (DESIGN §14; the data is PeekRingData in shm/layout.h).
//
// A ring carries records — opaque payloads of at most max_record bytes — from one producer thread
// to one consumer thread, usually in two processes, in order. It is a fast path, never the only
// one: a push that does not fit (the ring is full now, or the record is larger than max_record)
// returns false and changes nothing, and the caller sends the record another way (the runtime
// channel). So a full ring is back-pressure onto the slower path, never a drop; the order between
// the paths is restored by the sequence numbers the commands carry (ipc/channel.h,
// workers/command_sequencer.h).
//
// Wake-ups: the consumer sleeps in poll(2) on an eventfd (beside its other descriptors, which a
// futex could not join). It announces the sleep in `sleeping` and looks at the ring once more
// before it sleeps; the producer publishes `head`, then writes the eventfd only if `sleeping` is
// set. Both sides use seq_cst for these, so one of them always sees the other: no lost wake-up,
// and a busy consumer costs the producer no system call.
//
// Thread safety: a RingWriter is its ring's one producer thread's, a RingReader its one consumer
// thread's. Who is which: PeekRingsData in shm/layout.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "base/status.h"
#include "shm/layout.h"

namespace tandem::shm {

class Segment;

// Makes the two rings, each with `capacity` bytes of data (a power of two, at least
// kMinPeekRingBytes), in the segment's managed area: the supervisor, while it creates the
// segment. Returns the PeekRingsData's offset.
[[nodiscard]] Result<std::uint64_t> InitializePeekRings(Segment& segment, std::uint64_t capacity);
// Checks the header's rings against the mapping (attach, tools): Corruption naming what is wrong.
// A segment without rings (peek_rings_offset 0) is fine.
[[nodiscard]] Status CheckPeekRings(const Segment& segment);
// The segment's rings; nullptr when it has none.
PeekRingsData* PeekRingsOf(const Segment& segment);

// An eventfd for a ring's wake-ups: non-blocking, close-on-exec (the supervisor clears that for
// the one runtime it hands it to). Aborts when the system has none to give.
int MakeRingWakeFd();

class RingWriter {
 public:
  RingWriter(const Segment& segment, PeekRingData* ring, int wake_fd);
  // Appends one record, the concatenation of `parts`, and wakes the consumer if it sleeps. False
  // — nothing written, counted in `too_large` or `full` — when the record is larger than
  // max_record or does not fit now.
  bool TryPush(std::initializer_list<std::string_view> parts);
  const PeekRingData& data() const { return *ring_; }

 private:
  PeekRingData* ring_;
  char* bytes_;
  int wake_fd_;
};

class RingReader {
 public:
  RingReader(const Segment& segment, PeekRingData* ring, int wake_fd);
  // The oldest record's payload, left in the ring (valid until Pop); false when none waits.
  bool Front(std::string_view* payload);
  // Consumes the record Front returned. REQUIRES: Front returned true since the last Pop.
  void Pop();
  // Call before sleeping in poll(2) on wake_fd(): announces the sleep. False when a record
  // already waits — then do not sleep (and call Awake all the same).
  bool PrepareToSleep();
  // After the poll (or instead of it): no longer sleeping; `woken`: poll found wake_fd() readable,
  // whose count is then consumed.
  void Awake(bool woken);
  int wake_fd() const { return wake_fd_; }
  const PeekRingData& data() const { return *ring_; }

 private:
  PeekRingData* ring_;
  const char* bytes_;
  int wake_fd_;
  std::uint64_t front_bytes_ = 0;  // the record Front returned, header and padding included
};

}  // namespace tandem::shm
