#include "ipc/catalog.h"

#include <algorithm>
#include <utility>

#include "ipc/source_schema.h"

namespace tandem::ipc {

std::vector<std::string> Catalog::ImportersOf(const std::string& index) const {
  std::vector<std::string> exports;
  for (const auto& [number, dataflow] : dataflows_) {
    if (std::find(dataflow.imports.begin(), dataflow.imports.end(), index) !=
        dataflow.imports.end()) {
      exports.insert(exports.end(), dataflow.live_exports.begin(), dataflow.live_exports.end());
    }
  }
  return exports;
}

std::optional<std::uint64_t> Catalog::OneShotAsOf(const std::string& index) const {
  const auto origin = origins_.find(index);
  if (origin == origins_.end() || origin->second.kind != Origin::kIndex) return std::nullopt;
  return dataflows_.at(origin->second.dataflow).one_shot_as_of;
}

void Catalog::Clear() {
  collections_.clear();
  indexes_.clear();
  origins_.clear();
  dataflows_.clear();
  allowed_compaction_.clear();
  tables_.clear();
}

void Catalog::Add(const pb::DataflowDescription& desc, std::map<std::string, pb::Schema> created) {
  const std::uint64_t dataflow = next_dataflow_++;
  const std::uint64_t as_of = desc.as_of().elements(0);
  Dataflow& members = dataflows_[dataflow];
  members.debug_name = desc.debug_name();
  for (const auto& import : desc.index_imports()) members.imports.push_back(import.id());
  if (desc.class_() == pb::ONE_SHOT_READ) members.one_shot_as_of = as_of;
  for (const auto& import : desc.source_imports()) {
    origins_[import.id()] = {dataflow, Origin::kSource, SourceKindName(import.source())};
    members.others.push_back(import.id());
    if (import.source().has_table()) {
      tables_.insert_or_assign(
          import.id(),
          TableInfo{import.schema(), {import.upsert_key().begin(), import.upsert_key().end()}});
    }
  }
  for (const auto& build : desc.objects_to_build()) {
    origins_[build.id()] = {dataflow, Origin::kView};
    members.others.push_back(build.id());
  }
  for (const auto& index : desc.index_exports()) {
    origins_[index.id()] = {dataflow, Origin::kIndex};
    members.live_exports.push_back(index.id());
    indexes_.insert_or_assign(
        index.id(), IndexInfo{index.on(), {index.key().begin(), index.key().end()}, as_of});
  }
  for (auto& [id, schema] : created) collections_.insert_or_assign(id, std::move(schema));
}

void Catalog::AllowCompaction(const std::string& index, const pb::Frontier& frontier) {
  if (frontier.elements_size() == 1) {
    const std::uint64_t time = frontier.elements(0);
    // A one-shot result has one time and nothing to compact.
    if (OneShotAsOf(index)) return;
    // Compaction frontiers only rise: a lower one changes nothing (the runtimes ignore it too).
    auto [allowed, inserted] = allowed_compaction_.try_emplace(index, time);
    if (!inserted && allowed->second < time) allowed->second = time;
    return;
  }
  // Drop the index. Once a dataflow has no index left the runtimes drop all of it, so its
  // sources and views are forgotten with its last index (and their ids may be created again).
  const std::uint64_t number = origins_.at(index).dataflow;
  collections_.erase(index);
  indexes_.erase(index);
  origins_.erase(index);
  allowed_compaction_.erase(index);
  auto dataflow = dataflows_.find(number);
  std::erase(dataflow->second.live_exports, index);
  if (dataflow->second.live_exports.empty()) {
    for (const auto& other : dataflow->second.others) {
      collections_.erase(other);
      origins_.erase(other);
      tables_.erase(other);
    }
    dataflows_.erase(dataflow);
  }
}

}  // namespace tandem::ipc
