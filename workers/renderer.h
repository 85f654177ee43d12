// One lockstep worker's part of the maintained side (workers/maintained_side.h; maintenance, and
// solo): its part of every rendered Maintained dataflow, and the publisher of its registry row
// (DESIGN §4: maintenance worker i is row i's one publishing thread). Reports the frontiers of its
// dataflows' collections.
//
// Thread safety: belongs to one worker thread; Step exchanges with the other workers (barriers),
// so every worker calls it in the same iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ipc/codec.h"
#include "shm/publisher.h"
#include "workers/dataflow.h"

namespace tandem::workers {

class Renderer {
 public:
  // Frontiers reports, each of a collection of the dataflow created by command `seq`.
  struct FrontierReport {
    ipc::pb::Response response;
    std::uint64_t seq = 0;
  };
  // Sends the reports of one step (or one drop) at once: one hand-off to the command thread per
  // step, not one per collection (each hand-off may wake it, and on a machine with as many cores
  // as workers every wake-up preempts a worker while the others wait at the next barrier).
  using SendFrontier = std::function<void(std::vector<FrontierReport>)>;
  Renderer(std::unique_ptr<shm::Publisher> publisher, std::uint32_t me, Exchange* exchange,
           SendFrontier send)
      : publisher_(std::move(publisher)), me_(me), exchange_(exchange), send_(std::move(send)) {}

  // CreateDataflow `seq`: renders this worker's part (publishes its exports' slots; its index
  // imports read what earlier dataflows here publish).
  void Create(std::uint64_t seq, DataflowShared* shared);
  // The upper of this worker's part of index `id` as published (the empty frontier once it is
  // dropped or when no dataflow here exports it). Read by the tick barrier's completion step while
  // every worker waits (an import's progress is the minimum over workers).
  Frontier ExportUpper(const std::string& id) const;
  // AllowCompaction of `id` (nothing if no dataflow here exports it). Once this worker has
  // applied the drop of every export of a dataflow, reports its collections closed and lets go.
  void AllowCompaction(const std::string& id, Frontier frontier);
  // One step of every dataflow (in creation order), then the publisher's background work.
  // Returns whether some dataflow ticked.
  bool Step();
  // Reports every collection whose frontier moved since the last report.
  void ReportFrontiers();

 private:
  // This worker's part of the live (not dropped) index export `id`, if a dataflow here has one.
  std::optional<shm::PublishedRef> FindExport(const std::string& id) const;
  // Adds a report to `reports` when `id`'s frontier moved since the last one.
  void Report(std::uint64_t seq, const std::string& id, Frontier upper,
              std::vector<FrontierReport>* reports);

  std::unique_ptr<shm::Publisher> publisher_;
  std::uint32_t me_;
  Exchange* exchange_;
  SendFrontier send_;
  std::map<std::uint64_t, std::unique_ptr<DataflowInstance>> dataflows_;  // by seq
  // The frontiers reported, by dataflow, then collection id.
  std::map<std::uint64_t, std::map<std::string, Frontier>> reported_;
};

}  // namespace tandem::workers
