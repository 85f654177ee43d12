#include "workers/renderer.h"

#include <vector>

#include "base/check.h"
#include "ipc/model.h"

namespace tandem::workers {

namespace pb = ipc::pb;

void Renderer::Create(std::uint64_t seq, DataflowShared* shared) {
  std::map<std::string, shm::PublishedRef> imports;
  for (const auto& imp : shared->desc.index_imports()) {
    const auto ref = FindExport(imp.id());
    TANDEM_CHECK(ref.has_value(), "an import of an index no dataflow here exports");
    imports[imp.id()] = *ref;
  }
  dataflows_[seq] =
      std::make_unique<DataflowInstance>(shared, me_, exchange_, publisher_.get(), imports);
}

std::optional<shm::PublishedRef> Renderer::FindExport(const std::string& id) const {
  for (const auto& [seq, df] : dataflows_) {
    auto e = df->exports().find(id);
    if (e != df->exports().end() && !df->shared().dropped_exports.count(id)) return e->second;
  }
  return std::nullopt;
}

Frontier Renderer::ExportUpper(const std::string& id) const {
  const auto ref = FindExport(id);
  return ref ? publisher_->upper(*ref) : Frontier::Empty();
}

void Renderer::AllowCompaction(const std::string& id, Frontier frontier) {
  for (auto it = dataflows_.begin(); it != dataflows_.end();) {
    DataflowInstance& df = *it->second;
    if (df.exports().count(id)) {
      const Status s = df.AllowCompaction(id, frontier);
      TANDEM_CHECK(s.ok(), "AllowCompaction of a published index failed");
    }
    // Only once this worker has applied the drop of every export: the shared part already knows
    // every drop of this iteration (the start barrier reads the whole horizon), so asking it
    // would let go of a dataflow whose own drop comes later in the horizon — and that drop would
    // then find no dataflow, leaving the slot published forever.
    if (!df.AllExportsUnpublished()) {
      ++it;
      continue;
    }
    // Report every collection of the dataflow closed (empty frontiers), then let go.
    const pb::DataflowDescription& desc = df.shared().desc;
    auto& reported = reported_[it->first];
    std::vector<FrontierReport> closed;
    for (const auto& i : ipc::CreatedIds(desc)) {
      // Once per id: an export dropped in an earlier iteration has reported its empty frontier.
      if (auto was = reported.find(i); was != reported.end() && was->second.empty()) continue;
      closed.push_back({{}, it->first});
      closed.back().response.mutable_frontiers()->set_id(i);
    }
    if (!closed.empty()) send_(std::move(closed));
    reported_.erase(it->first);
    it = dataflows_.erase(it);
  }
}

bool Renderer::Step() {
  bool ticked = false;
  for (auto& [seq, df] : dataflows_) ticked |= df->Step();
  publisher_->Maintain();
  return ticked;
}

void Renderer::Report(std::uint64_t seq, const std::string& id, Frontier upper,
                      std::vector<FrontierReport>* reports) {
  auto& reported = reported_[seq];
  auto it = reported.find(id);
  if (it != reported.end() && !(it->second < upper)) return;
  reported[id] = upper;
  reports->push_back({{}, seq});
  pb::Response& r = reports->back().response;
  r.mutable_frontiers()->set_id(id);
  if (!upper.empty()) r.mutable_frontiers()->mutable_write()->add_elements(upper.time());
}

void Renderer::ReportFrontiers() {
  std::vector<FrontierReport> reports;
  for (auto& [seq, df] : dataflows_) {
    const DataflowShared& sh = df->shared();
    for (const auto& s : sh.desc.source_imports()) Report(seq, s.id(), sh.target, &reports);
    for (const auto& b : sh.desc.objects_to_build()) Report(seq, b.id(), sh.target, &reports);
    for (const auto& [id, ref] : df->exports()) {
      Report(seq, id, sh.dropped_exports.count(id) ? Frontier::Empty() : publisher_->upper(ref),
             &reports);
    }
  }
  if (!reports.empty()) send_(std::move(reports));
}

}  // namespace tandem::workers
