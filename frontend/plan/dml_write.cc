// The rows of a DML statement → the updates of its WriteTable (BuildWrite, KeysToCheck), constant
// relations evaluated as a replica evaluates them (EvaluateConstant), and the command tag.
// Keys are compared by their key encoding (base/row.h "Keys": 1.5 and 1.50 are one primary key,
// as the table's index holds them) and rows by their encoding (an update to another spelling of
// the same key is a change).
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/datum_text.h"
#include "base/row.h"
#include "frontend/plan/binder.h"
#include "frontend/plan/dml.h"
#include "ipc/plan_typing.h"
#include "ipc/rows.h"
#include "workers/expr.h"

namespace tandem::frontend::plan {

namespace {

// ---- constants

// Whether `plan` reads only the one-row collection, through map/filter/project and unions.
bool ConstantPlan(const pb::Plan& plan, const PlannedRelation& relation, int depth) {
  if (depth > kMaxPlanNesting) return false;
  switch (plan.kind_case()) {
    case pb::Plan::kGet:
      for (std::size_t i = 0; i < relation.imports.size(); ++i) {
        if (relation.imports[i].on() == plan.get().id() ||
            relation.imports[i].id() == plan.get().id()) {
          return i < relation.import_objects.size() && relation.import_objects[i] == kOneRowObject;
        }
      }
      return false;
    case pb::Plan::kMfp:
      return ConstantPlan(plan.mfp().input(), relation, depth + 1);
    case pb::Plan::kUnion:
      for (const auto& input : plan.union_().inputs()) {
        if (!ConstantPlan(input, relation, depth + 1)) return false;
      }
      return true;
    default:
      return false;
  }
}

// The schema of a ConstantPlan's rows (the one-row collection's is one INT64 column).
pb::Schema ConstantSchema(const pb::Plan& plan) {
  switch (plan.kind_case()) {
    case pb::Plan::kMfp: {
      auto schema = ipc::MfpSchema(plan.mfp().mfp(), ConstantSchema(plan.mfp().input()));
      TANDEM_CHECK(schema.ok(), "a constant plan the binder made does not type-check");
      return *std::move(schema);
    }
    case pb::Plan::kUnion:
      return ConstantSchema(plan.union_().inputs(0));
    default: {
      pb::Schema one_row;
      one_row.add_columns()->set_type(pb::INT64);
      return one_row;
    }
  }
}

// The rows of a ConstantPlan, or false with *error (the replica's words) for a data error.
bool EvaluateConstantPlan(const pb::Plan& plan, int depth, std::vector<Row>* out,
                          std::string* error) {
  switch (plan.kind_case()) {
    case pb::Plan::kGet:
      out->push_back(Row{Datum(std::int64_t{1})});  // the one row of kOneRowObject
      return true;
    case pb::Plan::kMfp: {
      std::vector<Row> input;
      if (!EvaluateConstantPlan(plan.mfp().input(), depth + 1, &input, error)) return false;
      const workers::Mfp mfp(plan.mfp().mfp(), ConstantSchema(plan.mfp().input()));
      for (Row& row : input) {
        switch (mfp.Apply(&row, error)) {
          case workers::Mfp::Outcome::kKept:
            out->push_back(std::move(row));
            break;
          case workers::Mfp::Outcome::kDropped:
            break;
          case workers::Mfp::Outcome::kError:
            return false;
        }
      }
      return true;
    }
    case pb::Plan::kUnion:
      for (const auto& input : plan.union_().inputs()) {
        if (!EvaluateConstantPlan(input, depth + 1, out, error)) return false;
      }
      return true;
    default:
      *error = "not a constant plan";
      return false;
  }
}

// A replica's data error as PostgreSQL reports it.
SqlError DataError(const std::string& error) {
  if (error == "division by zero") return SqlError(sqlstate::kDivisionByZero, "division by zero");
  if (error.rfind("integer overflow", 0) == 0) {
    return SqlError(sqlstate::kNumericValueOutOfRange, "bigint out of range");
  }
  return SqlError(sqlstate::DataErrorState(error), error);
}

// ---- rows and keys

// A datum as PostgreSQL's text output gives it (a DETAIL's values).
std::string PostgresText(const Datum& d) {
  if (std::holds_alternative<Null>(d)) return "null";
  if (const auto* b = std::get_if<bool>(&d)) return *b ? "t" : "f";
  if (const auto* i = std::get_if<std::int64_t>(&d)) return std::to_string(*i);
  if (const auto* f = std::get_if<double>(&d)) {
    if (std::isnan(*f)) return "NaN";
    if (std::isinf(*f)) return *f > 0 ? "Infinity" : "-Infinity";
    return FloatText(*f);
  }
  if (const auto* s = std::get_if<std::string>(&d)) return *s;
  return PostgresOutput(d);  // numeric, bytea, date, time, timestamps, interval, uuid
}

std::string JoinedText(const Row& row) {
  std::string out;
  for (std::size_t i = 0; i < row.size(); ++i) out += (i > 0 ? ", " : "") + PostgresText(row[i]);
  return out;
}

// Columns [offset, offset + arity) of `row`.
Row Slice(const Row& row, std::size_t offset, std::size_t arity) {
  return Row(row.begin() + static_cast<std::ptrdiff_t>(offset),
             row.begin() + static_cast<std::ptrdiff_t>(offset + arity));
}

Row KeyOf(const DmlPlan& plan, const Row& row, std::size_t offset) {
  Row key;
  for (const std::uint32_t k : plan.primary_key) key.push_back(row[offset + k]);
  return key;
}

std::optional<SqlError> NotNullViolation(const DmlPlan& plan, const Row& row) {
  for (std::size_t c = 0; c < plan.columns.size(); ++c) {
    if (!plan.columns[c].nullable && std::holds_alternative<Null>(row[c])) {
      SqlError error(sqlstate::kNotNullViolation, "null value in column \"" + plan.columns[c].name +
                                                      "\" of relation \"" + plan.object +
                                                      "\" violates not-null constraint");
      error.detail = "Failing row contains (" + JoinedText(row) + ").";
      return error;
    }
  }
  return std::nullopt;
}

SqlError UniqueViolation(const DmlPlan& plan, const Row& key) {
  SqlError error(sqlstate::kUniqueViolation,
                 "duplicate key value violates unique constraint \"" + plan.object + "_pkey\"");
  std::string names;
  for (std::size_t i = 0; i < plan.primary_key.size(); ++i) {
    names += (i > 0 ? ", " : "") + plan.columns[plan.primary_key[i]].name;
  }
  error.detail = "Key (" + names + ")=(" + JoinedText(key) + ") already exists.";
  return error;
}

// PostgreSQL's assignment to varchar(n) and char(n) (varchar.c): a value longer than n
// characters is cut to n when what is cut is blanks, else 22001; char(n) pads with blanks to n.
// Lengths count characters (UTF-8), not bytes.
std::optional<SqlError> FitLength(const CatalogColumn& column, Datum* datum) {
  if (column.type != pb::STRING || column.mods.length == 0) return std::nullopt;
  auto* text = std::get_if<std::string>(datum);
  if (text == nullptr) return std::nullopt;
  const std::size_t n = column.mods.length;
  std::size_t chars = 0, cut = text->size();  // cut: the byte where character n + 1 starts
  for (std::size_t i = 0; i < text->size(); ++i) {
    if ((static_cast<unsigned char>((*text)[i]) & 0xC0) == 0x80) continue;
    if (chars == n) cut = i;
    ++chars;
  }
  if (chars > n) {
    if (text->find_first_not_of(' ', cut) != std::string::npos) {
      return SqlError(sqlstate::kStringDataRightTruncation,
                      std::string("value too long for type ") +
                          (column.mods.blank_padded ? "character(" : "character varying(") +
                          std::to_string(n) + ")");
    }
    text->resize(cut);
    chars = n;
  }
  if (column.mods.blank_padded && chars < n) text->append(n - chars, ' ');
  return std::nullopt;
}

// The new values of `row` (from `offset`) fitted to their columns' lengths.
std::optional<SqlError> FitLengths(const DmlPlan& plan, Row* row, std::size_t offset) {
  for (std::size_t c = 0; c < plan.columns.size() && offset + c < row->size(); ++c) {
    if (auto e = FitLength(plan.columns[c], &(*row)[offset + c])) return e;
  }
  return std::nullopt;
}

const char* DmlStatementName(DmlKind kind) {
  switch (kind) {
    case DmlKind::kInsert:
      return "INSERT";
    case DmlKind::kUpdate:
      return "UPDATE";
    case DmlKind::kDelete:
      return "DELETE";
  }
  return "DML";
}

pb::TableUpdate RowUpdate(const Row& row, std::int64_t diff) {
  pb::TableUpdate update;
  *update.mutable_update()->mutable_row() = ipc::ToProto(row);
  update.mutable_update()->set_diff(diff);
  return update;
}

}  // namespace

std::optional<SqlResult<std::vector<ipc::pb::Row>>> EvaluateConstant(
    const PlannedRelation& relation) {
  if (!ConstantPlan(relation.plan, relation, 0)) return std::nullopt;
  std::vector<Row> rows;
  std::string error;
  if (!EvaluateConstantPlan(relation.plan, 0, &rows, &error)) {
    return SqlResult<std::vector<ipc::pb::Row>>(DataError(error));
  }
  std::vector<ipc::pb::Row> out;
  out.reserve(rows.size());
  for (const Row& row : rows) out.push_back(ipc::ToProto(row));
  return SqlResult<std::vector<ipc::pb::Row>>(std::move(out));
}

std::vector<ipc::pb::Row> KeysToCheck(const DmlPlan& plan, const std::vector<ipc::pb::Row>& rows) {
  std::vector<ipc::pb::Row> out;
  if (plan.primary_key.empty() || plan.kind == DmlKind::kDelete) return out;
  const std::size_t n = plan.columns.size();
  const std::size_t arity = plan.kind == DmlKind::kUpdate ? 2 * n : n;
  std::set<std::string> seen;
  for (const auto& proto : rows) {
    Row row = ipc::FromProto(proto);
    if (row.size() != arity) continue;  // BuildWrite refuses it
    const std::size_t offset = plan.kind == DmlKind::kUpdate ? n : 0;
    if (FitLengths(plan, &row, offset)) continue;  // BuildWrite refuses it
    const Row key = KeyOf(plan, row, offset);
    if (plan.kind == DmlKind::kUpdate && EncodeKey(key) == EncodeKey(KeyOf(plan, row, 0))) {
      continue;  // the row keeps its key
    }
    if (seen.insert(EncodeKey(key)).second) out.push_back(ipc::ToProto(key));
  }
  return out;
}

sql::SqlResult<DmlWrite> BuildWrite(const DmlPlan& plan, const std::vector<ipc::pb::Row>& rows,
                                    const std::vector<ipc::pb::Row>& existing) {
  const std::size_t n = plan.columns.size();
  const bool update = plan.kind == DmlKind::kUpdate;
  const std::size_t arity = update ? 2 * n : n;
  const std::size_t limit = update ? kMaxUpdateRows : kMaxInsertOrDeleteRows;
  if (rows.size() > limit) {
    return SqlError(sqlstate::kProgramLimitExceeded,
                    std::string(DmlStatementName(plan.kind)) + " of more than " +
                        std::to_string(limit) + " rows in one statement is not supported (\"" +
                        plan.object + "\" would get " + std::to_string(rows.size()) + ")");
  }
  std::vector<Row> decoded;
  decoded.reserve(rows.size());
  for (const auto& proto : rows) {
    decoded.push_back(ipc::FromProto(proto));
    if (decoded.back().size() != arity) {
      return SqlError(sqlstate::kInternalError,
                      "internal error in the planner: a row of " +
                          std::to_string(decoded.back().size()) + " columns for \"" + plan.object +
                          "\", whose statement reads " + std::to_string(arity));
    }
    if (plan.kind != DmlKind::kDelete) {
      if (auto e = FitLengths(plan, &decoded.back(), update ? n : 0)) return *e;
    }
  }
  DmlWrite out;
  out.count = decoded.size();
  const std::size_t new_offset = update ? n : 0;  // where a row's new values are

  if (plan.primary_key.empty()) {
    // Plain rows: diffs, equal rows coalesced in the order they first appear.
    std::vector<std::pair<Row, std::int64_t>> diffs;
    std::map<std::string, std::size_t> at;
    auto add = [&](Row row, std::int64_t diff) {
      auto [it, fresh] = at.emplace(EncodeRow(row), diffs.size());
      if (fresh) {
        diffs.emplace_back(std::move(row), diff);
      } else {
        diffs[it->second].second += diff;
      }
    };
    for (const Row& row : decoded) {
      if (plan.kind != DmlKind::kDelete) {
        Row fresh = Slice(row, new_offset, n);
        if (auto null = NotNullViolation(plan, fresh)) return *null;
        if (update) add(Slice(row, 0, n), -1);
        add(std::move(fresh), +1);
      } else {
        add(row, -1);
      }
    }
    for (auto& [row, diff] : diffs) {
      if (diff != 0) out.updates.push_back(RowUpdate(row, diff));
    }
    return out;
  }

  // An upsert table: every delete, then every upsert.
  std::map<std::string, Row> present;  // existing rows by key (the keys KeysToCheck gave)
  for (const auto& proto : existing) {
    const Row row = ipc::FromProto(proto);
    if (row.size() != n) {
      return SqlError(sqlstate::kInternalError, "internal error: an existing row of \"" +
                                                    plan.object + "\" has " +
                                                    std::to_string(row.size()) + " columns");
    }
    present.emplace(EncodeKey(KeyOf(plan, row, 0)), row);
  }
  std::vector<Row> deletes;
  std::vector<Row> upserts;
  if (plan.kind == DmlKind::kDelete) {
    std::set<std::string> deleted;
    for (const Row& row : decoded) {
      Row key = KeyOf(plan, row, 0);
      if (deleted.insert(EncodeKey(key)).second) deletes.push_back(std::move(key));
    }
  } else {
    std::set<std::string> old_keys;  // the keys the updated rows leave (or keep)
    if (update) {
      for (const Row& row : decoded) old_keys.insert(EncodeKey(KeyOf(plan, row, 0)));
    }
    std::set<std::string> new_keys;
    for (const Row& row : decoded) {
      Row fresh = Slice(row, new_offset, n);
      if (auto null = NotNullViolation(plan, fresh)) return *null;
      const Row key = KeyOf(plan, fresh, 0);
      const std::string encoded = EncodeKey(key);
      // Another row of the statement has the key, or a row the statement does not move keeps it.
      if (!new_keys.insert(encoded).second ||
          (present.count(encoded) > 0 && old_keys.count(encoded) == 0)) {
        return UniqueViolation(plan, key);
      }
      if (update && EncodeRow(fresh) == EncodeRow(Slice(row, 0, n))) {
        continue;  // updated to itself: nothing to write
      }
      upserts.push_back(std::move(fresh));
    }
    if (update) {
      for (const Row& row : decoded) {
        Row key = KeyOf(plan, row, 0);
        if (new_keys.count(EncodeKey(key)) == 0) deletes.push_back(std::move(key));
      }
    }
  }
  for (const Row& key : deletes) {
    pb::TableUpdate u;
    *u.mutable_delete_() = ipc::ToProto(key);
    out.updates.push_back(std::move(u));
  }
  for (const Row& row : upserts) {
    pb::TableUpdate u;
    *u.mutable_upsert() = ipc::ToProto(row);
    out.updates.push_back(std::move(u));
  }
  return out;
}

std::string CommandTag(const DmlPlan& plan, std::uint64_t count) {
  switch (plan.kind) {
    case DmlKind::kInsert:
      return "INSERT 0 " + std::to_string(count);
    case DmlKind::kUpdate:
      return "UPDATE " + std::to_string(count);
    case DmlKind::kDelete:
      return "DELETE " + std::to_string(count);
  }
  return "";
}

}  // namespace tandem::frontend::plan
