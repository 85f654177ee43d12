// The response merger (DESIGN §1): a runtime's N workers each answer for their part; the
// controller sees one stream. Frontiers are merged by minimum over workers, per collection of a
// dataflow, and never regress; a peek gets exactly one PeekResponse, from all workers' parts.
//
// Thread safety: none — owned by the runtime's command thread, which feeds it the workers'
// messages in arrival order and sends what it emits.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/row.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "workers/peek.h"

namespace tandem::workers {

class ResponseMerger {
 public:
  using Send = std::function<void(const ipc::pb::Response&)>;
  ResponseMerger(std::uint32_t workers, Send send);

  // Worker `worker` reports a collection of the dataflow created by command `seq`. The controller
  // sees one collection per id: the oldest dataflow's that has not closed it yet — a newer
  // dataflow's collection of a reused id (dropped, then created again) is reported once the older
  // one has reported its empty frontier. Nothing is sent before a collection passes the minimum.
  void OnFrontier(std::uint32_t worker, std::uint64_t seq, const ipc::pb::Frontiers& frontiers);
  // Sends the current frontier of every collection (a new controller learns them).
  void ResendFrontiers() const;

  // max_result_size (bytes) for the peeks expected from now on: a finished answer whose rows are
  // larger is sent as an Error naming it.
  void SetMaxResultSize(std::size_t bytes) { max_result_size_ = bytes; }
  // A peek every worker will answer a part of.
  void ExpectPeek(const ipc::pb::Peek& peek) {
    auto& m = peeks_[peek.uuid()];
    m.peek = peek;
    m.max_result_size = max_result_size_;
  }
  bool Expects(const std::string& uuid) const { return peeks_.count(uuid) > 0; }
  // One worker's part. When every worker's part is in, sends the one answer: an error if any part
  // is one (of several, the first in ErrorLess order, so the same every time), else canceled if
  // any part is, else the rows of all parts through the peek's finishing.
  void OnPeekPart(const ipc::pb::PeekResponse& part);

 private:
  struct PeekMerge {
    ipc::pb::Peek peek;
    std::uint32_t parts = 0;
    CountedRows rows;  // exact counts (workers/peek.h)
    std::string error;
    bool canceled = false;
    std::size_t max_result_size = 0;
  };
  void SendFrontier(const std::string& id, Frontier f) const;

  const std::uint32_t workers_;
  const Send send_;
  std::map<std::string, PeekMerge> peeks_;  // by uuid
  std::size_t max_result_size_;
  // (id, CreateDataflow seq) → per worker. An id has more than one entry only while a dropped
  // collection and a newer one of the same id are both still reporting.
  std::map<std::pair<std::string, std::uint64_t>, std::vector<Frontier>> frontiers_;
  std::map<std::string, Frontier> reported_;  // id → what the controller was last told
};

}  // namespace tandem::workers
