// An in-memory CatalogReader (frontend/catalog/objects.h) for the planner's tests: tables with
// their columns and default indexes, views with their SQL, the one-row collection. Plain data,
// no I/O; not thread-safe while being filled.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/catalog/objects.h"

namespace tandem::testing {

class MemoryCatalog : public frontend::CatalogReader {
 public:
  // A table `name` with `columns`; its default index "<name>_primary_idx" is keyed by
  // `primary_key` (an upsert table) or, when that is empty, by every column. Ids are "u1", "u2"…
  const frontend::CatalogObject& AddTable(
      const std::string& name, std::vector<frontend::CatalogColumn> columns,
      std::vector<std::uint32_t> primary_key = {},
      frontend::ObjectKind kind = frontend::ObjectKind::kTable) {
    auto object = std::make_unique<frontend::CatalogObject>();
    object->name = name;
    object->kind = kind;
    object->id = "u" + std::to_string(++next_id_);
    object->columns = std::move(columns);
    object->primary_key = primary_key;
    std::vector<std::uint32_t> key = primary_key;
    if (key.empty()) {
      for (std::uint32_t i = 0; i < object->columns.size(); ++i) key.push_back(i);
    }
    AddIndex(name + "_primary_idx", name, std::move(key));
    const auto& ref = *object;
    objects_[name] = std::move(object);
    return ref;
  }

  // Another index on `on`, after its default one.
  void AddIndex(const std::string& name, const std::string& on, std::vector<std::uint32_t> key) {
    auto index = std::make_unique<frontend::CatalogIndex>();
    index->name = name;
    index->id = "u" + std::to_string(++next_id_);
    index->on = on;
    index->key = std::move(key);
    on_[on].push_back(index.get());
    indexes_[name] = std::move(index);
  }

  // A view: catalog only, its columns as the caller says (as the frontend would record them
  // from planning its query).
  void AddView(const std::string& name, const std::string& sql,
               std::vector<frontend::CatalogColumn> columns) {
    auto object = std::make_unique<frontend::CatalogObject>();
    object->name = name;
    object->kind = frontend::ObjectKind::kView;
    object->columns = std::move(columns);
    object->definition_sql = sql;
    objects_[name] = std::move(object);
  }

  const frontend::CatalogObject* FindObject(std::string_view name) const override {
    auto it = objects_.find(std::string(name));
    return it == objects_.end() ? nullptr : it->second.get();
  }
  const frontend::CatalogIndex* FindIndex(std::string_view name) const override {
    auto it = indexes_.find(std::string(name));
    return it == indexes_.end() ? nullptr : it->second.get();
  }
  std::vector<const frontend::CatalogIndex*> IndexesOn(std::string_view name) const override {
    auto it = on_.find(std::string(name));
    if (it == on_.end()) return {};
    return std::vector<const frontend::CatalogIndex*>(it->second.begin(), it->second.end());
  }

 private:
  int next_id_ = 0;
  std::map<std::string, std::unique_ptr<frontend::CatalogObject>> objects_;
  std::map<std::string, std::unique_ptr<frontend::CatalogIndex>> indexes_;
  std::map<std::string, std::vector<frontend::CatalogIndex*>> on_;
};

}  // namespace tandem::testing
