#include "controller/latest.h"

#include <algorithm>

namespace tandem::controller {

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
  if (*sent) return Status::InvalidArgument(s.Refusal(**sent));
  auto w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + wait);
  if (w.refused) return Status::InvalidArgument(s.Refusal(*w.refused));
  if (w.answer) return !w.answer->has_canceled();
  if (s.over()) return Status::Unavailable(s.EndReason());
  // Several replicas: no replica answered within `wait`, and the replica set cancelled it at its
  // deadline already (their late answers are dropped).
  if (s.multi()) return false;
  s.CancelPeek(p->uuid());
  // Exactly one answer per peek: Canceled, or the result if it was produced meanwhile — or, in
  // an observer session, the refusal that was slower than `wait`.
  w = s.AwaitPeek(p->uuid(), std::chrono::steady_clock::now() + s.timeout());
  if (w.refused) return Status::InvalidArgument(s.Refusal(*w.refused));
  if (w.answer) return !w.answer->has_canceled();
  if (s.over()) return Status::Unavailable(s.EndReason());
  return Status::Unavailable("the replica did not answer a canceled peek");
}

// The most advanced write frontier of index `id` over the replicas of the session that may answer
// its reads (Session::ReadsFrom; closed beats every time), if any reported one.
std::optional<pb::Frontiers> Freshest(Session& s, const std::string& id) {
  const ReplicaSet& set = s.set();
  std::optional<pb::Frontiers> best;
  for (std::size_t i = 0; i < set.size(); ++i) {
    if (!s.ReadsFrom(i)) continue;
    const auto& all = set.frontiers(i);
    auto it = all.find(id);
    if (it == all.end()) continue;
    const auto& w = it->second.write().elements();
    if (!best) {
      best = it->second;
    } else if (!best->write().elements().empty() &&
               (w.empty() || w[0] > best->write().elements(0))) {
      best = it->second;
    }
  }
  return best;
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

Result<Latest> LatestTime(Session& s, const std::string& id,
                          std::optional<std::chrono::steady_clock::time_point> wait_until) {
  std::optional<pb::Frontiers> best;
  // Takes the reports for `id` that come until `deadline`; once one is known, only those
  // already queued.
  auto collect = [&](std::chrono::steady_clock::time_point deadline) {
    if (s.multi()) {
      // Several replicas: the freshest frontier any of them reported. A peek at that time is
      // answered first by the replica that has it (the others would wait, and are cancelled).
      for (;;) {
        best = Freshest(s, id);
        if (best || ipc::Left(deadline).count() <= 0) return;
        (void)s.set().Poll(std::min(ipc::Left(deadline), std::chrono::milliseconds(50)));
      }
    }
    for (;;) {
      const auto left = std::max(ipc::Left(deadline), std::chrono::milliseconds(0));
      auto r = s.client().Receive(best ? std::chrono::milliseconds(0) : left);
      if (!r) break;
      if (r->has_frontiers() && r->frontiers().id() == id) best = r->frontiers();
    }
  };
  auto complete = [&] {
    return best && (best->write().elements().empty() || best->write().elements(0) > 0);
  };
  collect(std::chrono::steady_clock::now() + std::min(s.timeout(), kFrontierWait));
  for (;;) {
    if (s.over()) return Status::Unavailable(s.EndReason());
    if (complete()) break;
    Status why = Status::Ok();
    if (!best) {  // nothing reported: probe
      auto probed = ProbeLatest(s, id);
      if (probed.ok()) return *probed;
      // Ended (Unavailable), or a refused probe: said as it is. No complete time: wait for one.
      if (probed.status().code() != StatusCode::kFailedPrecondition) return probed.status();
      why = probed.status();
    } else {
      why = Status::FailedPrecondition(id + " has no complete time yet");
    }
    if (!wait_until || ipc::Left(*wait_until).count() <= 0 || s.Interrupted()) return why;
    // Not readable yet: wait (bounded) for its frontier to be reported past 0.
    best.reset();
    collect(std::min(*wait_until, std::chrono::steady_clock::now() + kProbeRecheck));
  }
  if (best->write().elements().empty()) return Latest{kMaxTime, true};
  return Latest{best->write().elements(0) - 1, false};
}

Result<Latest> LatestOfAll(Session& s, const std::vector<std::string>& ids,
                           std::optional<std::chrono::steady_clock::time_point> wait_until) {
  Latest all;
  bool first = true;
  for (const auto& id : ids) {
    auto latest = LatestTime(s, id, wait_until);
    if (!latest.ok()) return latest.status();
    if (first || latest->time < all.time) all.time = latest->time;
    all.closed = (first || all.closed) && latest->closed;
    first = false;
  }
  return all;
}

}  // namespace tandem::controller
