// Wake-ups from publisher i to reader i over WakeChannelData (protocol in layout.h).
//
// WakeSender: the row's publishing thread only. WakeReceiver: the row's reading thread only.
// The sleeping side waits on a process-shared futex, so an idle reader uses no CPU.
#pragma once

#include <chrono>
#include <vector>

#include "shm/layout.h"

namespace tandem::shm {

// Blocks while *word == expected, up to `timeout`, on a process-shared (non-private) futex.
// Returns false on timeout; true when woken, interrupted or the value already differed.
bool FutexWait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
               std::chrono::nanoseconds timeout);
void FutexWakeAll(std::atomic<std::uint32_t>& word);

class WakeSender {
 public:
  explicit WakeSender(WakeChannelData* channel) : ch_(channel) {}
  // Tells the reader that `changed` changed and wakes it if it sleeps. Never blocks: a full
  // queue sets the sticky overflow flag, which makes the reader rescan every slot.
  void Notify(const ChangedSlot& changed);

 private:
  WakeChannelData* ch_;
};

struct WakeDrain {
  std::vector<ChangedSlot> changed;  // in the order notified; may repeat a slot
  bool overflowed = false;           // some notifications were dropped: rescan every slot
  bool empty() const { return changed.empty() && !overflowed; }
};

class WakeReceiver {
 public:
  explicit WakeReceiver(WakeChannelData* channel) : ch_(channel) {}
  // Appends what has been notified to `out` without blocking. Returns !out->empty().
  bool Poll(WakeDrain* out);
  // Like Poll, but when nothing is pending sleeps until a notification, Interrupt or `timeout`.
  // May return early with nothing drained (a wake that was meant for an earlier sleep): callers
  // re-read the state they wait for and wait again. Wait observes when it starts: an Interrupt
  // before that is not remembered (a caller that must not miss one uses Observe + WaitSince).
  bool Wait(WakeDrain* out, std::chrono::nanoseconds timeout);
  // Ends a Wait in progress, and any WaitSince whose `observed` it follows (e.g. new work for the
  // reading thread, shutdown). Any thread, any process that maps the channel.
  void Interrupt();

  // For callers that check other state before sleeping: Observe() first, then check, then
  // WaitSince(observed, ...) — a notification or Interrupt after Observe() is never slept through.
  std::uint32_t Observe() const;
  bool WaitSince(std::uint32_t observed, WakeDrain* out, std::chrono::nanoseconds timeout);

 private:
  WakeChannelData* ch_;
};

}  // namespace tandem::shm
