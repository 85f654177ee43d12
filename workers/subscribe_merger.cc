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
  subs_.insert_or_assign(subscribe.uuid(), std::move(m));
}

void SubscribeMerger::SendEnd(const std::string& uuid, pb::SubscribeEnd::Reason reason,
                              const std::string& detail) {
  pb::Response r;
  r.mutable_subscribe_end()->set_uuid(uuid);
  r.mutable_subscribe_end()->set_reason(reason);
  r.mutable_subscribe_end()->set_detail(detail);
  send_(r);
}

bool SubscribeMerger::Cancel(const std::string& uuid) {
  auto it = subs_.find(uuid);
  if (it == subs_.end()) return false;
  subs_.erase(it);
  SendEnd(uuid, pb::SubscribeEnd::CANCELED, "canceled");
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
  if (Deliver(it->first, m)) subs_.erase(it);
}

bool SubscribeMerger::Deliver(const std::string& uuid, Merge& m) {
  const std::uint64_t upper = *std::min_element(m.progress.begin(), m.progress.end());
  if (upper <= m.delivered) return false;
  // Every kept update below `upper`, in time order (stable: a worker's own order within a time).
  auto below =
      std::stable_partition(m.pending.begin(), m.pending.end(),
                            [&](const pb::SubscribeUpdate& u) { return u.time() < upper; });
  std::stable_sort(m.pending.begin(), below,
                   [](const auto& a, const auto& b) { return a.time() < b.time(); });
  pb::Response r;
  pb::SubscribeBatch* batch = r.mutable_subscribe_batch();
  batch->set_uuid(uuid);
  batch->set_lower(m.delivered);
  batch->set_upper(m.delivered);
  std::size_t bytes = 0;
  for (auto u = m.pending.begin(); u != below; ++u) {
    const std::size_t size = EncodedUpdateBytes(*u);
    if (bytes > 0 && bytes + size > batch_bytes_) {
      send_(r);  // a bounded piece of the interval: upper == lower
      batch->clear_updates();
      bytes = 0;
    }
    *batch->add_updates() = std::move(*u);
    bytes += size;
  }
  m.pending.erase(m.pending.begin(), below);
  batch->set_upper(upper);
  send_(r);
  m.delivered = upper;
  if (upper == Frontier::Empty().raw()) {
    SendEnd(uuid, pb::SubscribeEnd::CLOSED, "the index closed: nothing more will change");
    forget_(uuid);
    return true;
  }
  if (m.up_to && upper >= *m.up_to) {
    SendEnd(uuid, pb::SubscribeEnd::UP_TO,
            "every time before " + std::to_string(*m.up_to) + " was delivered");
    forget_(uuid);
    return true;
  }
  return false;
}

}  // namespace tandem::workers
