#include "workers/response_merger.h"

#include "ipc/model.h"
#include "workers/peek.h"

namespace tandem::workers {

namespace pb = ipc::pb;

ResponseMerger::ResponseMerger(std::uint32_t workers, Send send)
    : workers_(workers), send_(std::move(send)), max_result_size_(kDefaultMaxResultSize) {}

void ResponseMerger::SendFrontier(const std::string& id, Frontier f) const {
  pb::Response out;
  auto* fr = out.mutable_frontiers();
  fr->set_id(id);
  for (auto* e : {fr->mutable_write(), fr->mutable_input(), fr->mutable_output()}) {
    if (!f.empty()) e->add_elements(f.time());
  }
  send_(out);
}

void ResponseMerger::ResendFrontiers() const {
  for (const auto& [id, f] : reported_) SendFrontier(id, f);
}

void ResponseMerger::OnFrontier(std::uint32_t worker, std::uint64_t seq,
                                const pb::Frontiers& frontiers) {
  const std::string& id = frontiers.id();
  auto& per = frontiers_[{id, seq}];
  if (per.empty()) per.assign(workers_, Frontier::Minimum());
  per[worker] = ipc::FrontierOf(frontiers.write());
  for (auto it = frontiers_.lower_bound({id, 0});
       it != frontiers_.end() && it->first.first == id;) {
    Frontier merged = Frontier::Empty();
    for (const Frontier& w : it->second) merged = Min(merged, w);
    auto was = reported_.find(id);
    const bool report = was == reported_.end() ? !(merged == Frontier::Minimum())
                                               : was->second < merged;  // never regress
    if (report) SendFrontier(id, merged);
    if (!merged.empty()) {
      if (report) reported_[id] = merged;
      return;
    }
    // Closed (dropped or done) on every worker: a later collection of that id starts afresh.
    reported_.erase(id);
    it = frontiers_.erase(it);
  }
}

void ResponseMerger::OnPeekPart(const pb::PeekResponse& part) {
  auto it = peeks_.find(part.uuid());
  if (it == peeks_.end()) return;
  PeekMerge& m = it->second;
  ++m.parts;
  switch (part.result_case()) {
    case pb::PeekResponse::kError:
      if (m.error.empty() || ErrorLess(part.error(), m.error)) m.error = part.error();
      break;
    case pb::PeekResponse::kCanceled:
      m.canceled = true;
      break;
    default:
      for (const auto& rc : part.rows().rows()) {
        m.rows.emplace_back(FromProto(rc.row()), CountOfPart(rc));
      }
  }
  if (m.parts < workers_) return;
  pb::Response out;
  auto* resp = out.mutable_peek_response();
  resp->set_uuid(part.uuid());
  if (!m.error.empty()) {
    resp->set_error(m.error);
  } else if (m.canceled) {
    resp->mutable_canceled();
  } else if (auto err = Finish(m.peek.finishing(), std::move(m.rows), resp->mutable_rows())) {
    resp->clear_rows();
    resp->set_error(*err);
  } else if (const std::size_t size = resp->rows().ByteSizeLong(); size > m.max_result_size) {
    resp->set_error(ResultTooLarge("the answer", size, m.max_result_size, kMaxResultSize));
  }
  peeks_.erase(it);
  send_(out);
}

}  // namespace tandem::workers
