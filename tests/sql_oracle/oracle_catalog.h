// OracleCatalog: an in-memory CatalogReader (frontend/catalog/objects.h) holding a Database's
// tables as the durable catalog would: each table an ObjectKind::kTable with collection id
// "u<n>", its columns (NOT NULL as not nullable), its PRIMARY KEY, and one default index
// "<table>_primary_idx" with id "u<n>i", keyed by the primary key or else by every column.
// Optionally the frontend's one-row object (the planner reads constants from it): a kSource
// with one column `one` int8 NOT NULL, collection id kOneRowId, whose row (1) the engine holds.
//
// Thread safety: const methods may be called from any number of threads; Reset from one, when
// no other call runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "frontend/catalog/objects.h"
#include "sql_oracle/schema.h"

namespace tandem::testing::sql_oracle {

class OracleCatalog : public frontend::CatalogReader {
 public:
  static constexpr char kOneRowId[] = "u0";

  // Replaces the catalog's objects with `database`'s tables, and the one-row object named
  // `one_row_object` unless that is empty.
  void Reset(const Database& database, std::string_view one_row_object = {});

  const frontend::CatalogObject* FindObject(std::string_view name) const override;
  const frontend::CatalogIndex* FindIndex(std::string_view name) const override;
  std::vector<const frontend::CatalogIndex*> IndexesOn(std::string_view name) const override;

  const std::vector<frontend::CatalogObject>& objects() const { return objects_; }

 private:
  std::vector<frontend::CatalogObject> objects_;
  std::vector<frontend::CatalogIndex> indexes_;
};

// The catalog's column type of a SqlType.
ipc::pb::ScalarType ScalarTypeOf(SqlType type);

}  // namespace tandem::testing::sql_oracle
