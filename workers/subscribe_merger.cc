#include "workers/subscribe_merger.h"

#include <algorithm>
#include <utility>

#include "base/check.h"

namespace tandem::workers {

namespace pb = ipc::pb;

void SubscribeMerger::Expect(const pb::Subscribe& subscribe) {
  Merge m;
  m.delivered = subscribe.snapshot() ? subscribe.as_of() : subscribe.as_of() + 1;
  if (subscribe.has_up_to()) m.up_to = subscribe.up_to();
  m.progress.assign(workers_, m.delivered);
  m.heard.assign(workers_, false);
  subs_.insert_or_assign(subscribe.uuid(), std::move(m));
}

bool SubscribeMerger::Cancel(const std::string& uuid) {
  auto it = subs_.find(uuid);
  if (it == subs_.end()) return false;
  subs_.erase(it);
  send_(ipc::MakeSubscribeEnd(uuid, pb::SubscribeEnd::CANCELED, "canceled"));
  return true;
}

void SubscribeMerger::OnEnd(const pb::SubscribeEnd& end) {
  auto it = subs_.find(end.uuid());
  if (it == subs_.end()) return;  // ended already (another worker's end, a cancel)
  subs_.erase(it);
  send_([&] {
    pb::Response r;
    *r.mutable_subscribe_end() = end;
    return r;
  }());
  forget_(end.uuid());
}

void SubscribeMerger::OnPart(std::uint32_t worker, pb::SubscribeBatch part) {
  auto it = subs_.find(part.uuid());
  if (it == subs_.end()) return;  // ended already
  Merge& m = it->second;
  TANDEM_CHECK(worker < workers_, "a subscribe part from a worker that is not there");
  TANDEM_CHECK(part.lower() == m.progress[worker] && part.upper() >= part.lower(),
               "a worker's subscribe parts are not contiguous");
  for (auto& u : *part.mutable_updates()) m.pending.push_back(std::move(u));
  m.progress[worker] = part.upper();
  if (!m.heard[worker]) {
    m.heard[worker] = true;
    ++m.heard_from;
  }
  if (Deliver(it->first, m)) subs_.erase(it);
}

bool SubscribeMerger::Deliver(const std::string& uuid, Merge& m) {
  // Until every worker has sent a part, the index may not be readable at as_of everywhere.
  if (m.heard_from < workers_) return false;
  const std::uint64_t upper = *std::min_element(m.progress.begin(), m.progress.end());
  if (upper > m.delivered) SendUpTo(uuid, m, upper);
  if (m.delivered == Frontier::Empty().raw()) {
    send_(ipc::MakeSubscribeEnd(uuid, pb::SubscribeEnd::CLOSED,
                                "the index closed: nothing more will change"));
    forget_(uuid);
    return true;
  }
  // (delivered == up_to already when up_to == as_of + 1 without a snapshot: nothing to send.)
  if (m.up_to && m.delivered >= *m.up_to) {
    send_(
        ipc::MakeSubscribeEnd(uuid, pb::SubscribeEnd::UP_TO,
                              "every time before " + std::to_string(*m.up_to) + " was delivered"));
    forget_(uuid);
    return true;
  }
  return false;
}

void SubscribeMerger::SendUpTo(const std::string& uuid, Merge& m, std::uint64_t upper) {
  // Every kept update below `upper`, in time order (stable: a worker's own order within a time).
  auto below =
      std::stable_partition(m.pending.begin(), m.pending.end(),
                            [&](const pb::SubscribeUpdate& u) { return u.time() < upper; });
  std::stable_sort(m.pending.begin(), below,
                   [](const auto& a, const auto& b) { return a.time() < b.time(); });
  SendInBatches(uuid, m.delivered, upper, m.pending.begin(), below, batch_bytes_, send_);
  m.pending.erase(m.pending.begin(), below);
  m.delivered = upper;
}

}  // namespace tandem::workers
