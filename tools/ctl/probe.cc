#include "tools/ctl/probe.h"

#include "tools/ctl/session.h"

namespace tandem::ctl {

namespace {

// How long a probe peek may take before it counts as "not readable yet" and is canceled.
constexpr std::chrono::milliseconds kProbeWait{50};
constexpr std::chrono::milliseconds kProbeRecheck{250};

// Whether index `id` is readable at `t` (its upper is beyond t): a peek with limit 0 that answers
// at once (rows, or an error — below since, or an error in the data) says yes; one still waiting
// after `wait` is canceled, and Canceled says no. A refused probe is an error (InvalidArgument).
Result<bool> Readable(Session& s, const std::string& id, std::uint64_t t,
                      std::chrono::milliseconds wait = kProbeWait) {
  pb::Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(RandomHex(16));
  p->set_id(id);
  p->set_timestamp(t);
  p->mutable_finishing()->set_limit(0);
  auto sent = s.SendPeek(c);
  if (!sent.ok()) return sent.status();
  if (*sent) return Status::InvalidArgument(ReplicaRefusal(**sent));
  auto w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + wait);
  if (w.refused) return Status::InvalidArgument(ReplicaRefusal(*w.refused));
  if (w.answer) return !w.answer->has_canceled();
  if (s.over()) return Status::Unavailable(s.client().EndReason());
  pb::Command cancel;
  cancel.mutable_cancel_peek()->set_uuid(p->uuid());
  s.client().Send(cancel);
  // Exactly one answer per peek: Canceled, or the result if it was produced meanwhile.
  w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + s.client().timeout());
  if (w.answer) return !w.answer->has_canceled();
  if (s.over()) return Status::Unavailable(s.client().EndReason());
  return Status::Unavailable("the replica did not answer a canceled peek");
}

}  // namespace

// Finds the latest time index `id` can be read at with Readable: kMaxTime when it is readable
// there (closed: the empty frontier is above every time), else upper - 1 by exponential then
// binary search.
Result<Latest> ProbeLatest(Session& s, const std::string& id) {
  auto ready = Readable(s, id, 0);
  if (!ready.ok()) return ready.status();
  if (!*ready) return Status::FailedPrecondition(id + " has no complete time yet");
  auto closed = Readable(s, id, kMaxTime);
  if (!closed.ok()) return closed.status();
  if (*closed) return Latest{kMaxTime, true};
  std::uint64_t lo = 0, hi = 1;  // lo readable; hi: to be tested, then unreadable
  for (;;) {
    auto r = Readable(s, id, hi);
    if (!r.ok()) return r.status();
    if (!*r) break;
    lo = hi;
    if (hi > kMaxTime / 2) {
      hi = kMaxTime;  // not readable there: checked above
      break;
    }
    hi *= 2;
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    auto r = Readable(s, id, mid);
    if (!r.ok()) return r.status();
    (*r ? lo : hi) = mid;
  }
  // A busy replica may have been slower than kProbeWait: check the next time more patiently.
  for (int i = 0; i < 3; ++i) {
    auto r = Readable(s, id, lo + 1, kProbeRecheck);
    if (!r.ok()) return r.status();
    if (!*r) break;
    ++lo;
  }
  return Latest{lo, false};
}

}  // namespace tandem::ctl
