#include "sql_oracle/oracle_catalog.h"

namespace tandem::testing::sql_oracle {

ipc::pb::ScalarType ScalarTypeOf(SqlType type) {
  switch (type) {
    case SqlType::kBigint:
      return ipc::pb::INT64;
    case SqlType::kDouble:
      return ipc::pb::FLOAT64;
    case SqlType::kText:
      return ipc::pb::STRING;
    case SqlType::kBool:
      return ipc::pb::BOOL;
    case SqlType::kInt4:
      return ipc::pb::INT32;
    case SqlType::kNumeric:
      return ipc::pb::NUMERIC;
    case SqlType::kDate:
      return ipc::pb::DATE;
    case SqlType::kTimestamp:
      return ipc::pb::TIMESTAMP;
    case SqlType::kInterval:
      return ipc::pb::INTERVAL;
    case SqlType::kInt2:
      return ipc::pb::INT16;
    case SqlType::kFloat4:
      return ipc::pb::FLOAT32;
    case SqlType::kNumeric12_4:
    case SqlType::kNumericAny:
      return ipc::pb::NUMERIC;
    case SqlType::kVarchar:
    case SqlType::kChar:
      return ipc::pb::STRING;
    case SqlType::kBytea:
      return ipc::pb::BYTEA;
    case SqlType::kTime:
      return ipc::pb::TIME;
    case SqlType::kTimestampTz:
      return ipc::pb::TIMESTAMPTZ;
    case SqlType::kUuid:
      return ipc::pb::UUID;
  }
  return ipc::pb::SCALAR_TYPE_UNSPECIFIED;
}

void OracleCatalog::Reset(const Database& database, std::string_view one_row_object) {
  objects_.clear();
  indexes_.clear();
  if (!one_row_object.empty()) {
    frontend::CatalogObject object;
    object.name = std::string(one_row_object);
    object.kind = frontend::ObjectKind::kSource;
    object.id = kOneRowId;
    frontend::CatalogColumn column;
    column.name = "one";
    column.type = ipc::pb::INT64;
    column.nullable = false;
    object.columns.push_back(std::move(column));
    frontend::CatalogIndex index;
    index.name = object.name + "_primary_idx";
    index.id = object.id + "i";
    index.on = object.name;
    index.key = {0};
    objects_.push_back(std::move(object));
    indexes_.push_back(std::move(index));
  }
  for (std::size_t t = 0; t < database.tables.size(); ++t) {
    const TableSchema& table = database.tables[t];
    frontend::CatalogObject object;
    object.name = table.name;
    object.kind = frontend::ObjectKind::kTable;
    object.id = "u" + std::to_string(t + 1);
    for (const ColumnSchema& c : table.columns) {
      frontend::CatalogColumn column;
      column.name = c.name;
      column.type = ScalarTypeOf(c.type);
      if (c.type == SqlType::kNumeric) column.mods = frontend::TypeMods{10, 2, 0, false};
      if (c.type == SqlType::kNumeric12_4) column.mods = frontend::TypeMods{12, 4, 0, false};
      if (c.type == SqlType::kVarchar) column.mods = frontend::TypeMods{0, 0, 4, false};
      if (c.type == SqlType::kChar) column.mods = frontend::TypeMods{0, 0, 3, true};
      column.nullable = !c.not_null;
      object.columns.push_back(std::move(column));
    }
    for (std::size_t k : table.primary_key) {
      object.primary_key.push_back(static_cast<std::uint32_t>(k));
    }
    frontend::CatalogIndex index;
    index.name = table.name + "_primary_idx";
    index.id = object.id + "i";
    index.on = table.name;
    if (!object.primary_key.empty()) {
      index.key = object.primary_key;
    } else {
      for (std::size_t c = 0; c < table.columns.size(); ++c) {
        index.key.push_back(static_cast<std::uint32_t>(c));
      }
    }
    objects_.push_back(std::move(object));
    indexes_.push_back(std::move(index));
  }
}

const frontend::CatalogObject* OracleCatalog::FindObject(std::string_view name) const {
  for (const frontend::CatalogObject& object : objects_) {
    if (object.name == name) return &object;
  }
  return nullptr;
}

const frontend::CatalogIndex* OracleCatalog::FindIndex(std::string_view name) const {
  for (const frontend::CatalogIndex& index : indexes_) {
    if (index.name == name) return &index;
  }
  return nullptr;
}

std::vector<const frontend::CatalogIndex*> OracleCatalog::IndexesOn(std::string_view name) const {
  std::vector<const frontend::CatalogIndex*> out;
  for (const frontend::CatalogIndex& index : indexes_) {
    if (index.on == name) out.push_back(&index);
  }
  return out;
}

}  // namespace tandem::testing::sql_oracle
