// Catalog: the frontend's SQL catalog in memory (DESIGN §15) — the objects (tables, sources, views,
// materialized views) and indexes by name, the GlobalIds they were given, what depends on what,
// and the replay history: the protocol commands (CreateDataflow, AllowCompaction) that define
// what every replica runs, in the order they were sent. ddl.h changes it, catalog_store.h keeps
// it durable, the planner reads it through CatalogReader (objects.h).
//
// Invariants (every mutation checks what it needs before it changes anything, so a refused one
// changes nothing):
//  1. Names: one namespace for tables, sources, views and materialized views, one for indexes
//     (objects.h); a name is PostgreSQL's identifier after case folding, compared byte for byte.
//  2. Ids: every GlobalId the catalog hands out is u<n> with n < next_id(); next_id() only rises
//     and is kept durably with the rest, so an id is never used twice, across restarts too (a
//     replica still running an id the catalog dropped can tell it from a new object's).
//  3. Dependencies: every name in an object's depends_on and every index's `on` is an object of
//     the catalog, created before it (so its ids are smaller). Every table, source and
//     materialized view has at least one index, its default one first (IndexesOn); a view has
//     none and no id.
//  4. History: the commands of the live objects, in the order they were sent — for each table,
//     source, materialized view and index its one CreateDataflow (exporting one index), and the
//     last AllowCompaction the frontend recorded for an index. A dropped object's commands are
//     pruned (controller::History::Prune), so the history holds what a replica should run now,
//     and Replay() is what a replica that (re)connects is sent between Hello and
//     InitializationComplete (controller/session.h).
//
// Thread safety: none. The frontend's one catalog is changed by one thread at a time; copyable, so
// a DDL statement can be applied to a copy that replaces the catalog once it is durable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "controller/history.h"
#include "frontend/catalog/objects.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"

namespace tandem::frontend {

// "table", "source", "view", "materialized view": as PostgreSQL names the kind in its messages
// (a source is a table to PostgreSQL's user: CREATE TABLE … WITH made it, DROP TABLE drops it).
std::string_view KindName(ObjectKind kind);

// A catalog mutation's verdict: nullopt, or why nothing was changed.
using CatalogError = std::optional<sql::SqlError>;

// What a DROP removes, in the order it must be sent: PlanDrop's answer, ApplyDrop's input.
struct DropPlan {
  std::vector<std::string> objects;  // names, dependants before what they depend on
  std::vector<std::string> indexes;  // names of every index on them, and the index dropped
  // What depends on the named object ("view v", "materialized view m"), nearest first: what
  // PostgreSQL's DETAIL and CASCADE's NOTICE list.
  std::vector<std::string> dependants;
  // The AllowCompaction to the empty frontier of each dropped index, highest id first: a
  // dataflow imports only indexes made before it, so none is dropped while an importer lives.
  std::vector<ipc::pb::Command> commands;
};

class Catalog final : public CatalogReader {
 public:
  Catalog() = default;

  // CatalogReader.
  const CatalogObject* FindObject(std::string_view name) const override;
  const CatalogIndex* FindIndex(std::string_view name) const override;
  std::vector<const CatalogIndex*> IndexesOn(std::string_view name) const override;

  // Every object and every index, by name.
  const std::map<std::string, CatalogObject, std::less<>>& objects() const { return objects_; }
  const std::map<std::string, CatalogIndex, std::less<>>& indexes() const { return indexes_; }
  // The object whose collection is `id` (nullptr when none is): an index import's `on`.
  const CatalogObject* ObjectWithId(std::string_view id) const;
  // The index with GlobalId `id` (nullptr when none is).
  const CatalogIndex* IndexWithId(std::string_view id) const;

  // Ids (invariant 2). NewId hands out u<next_id()> and raises next_id().
  std::uint64_t next_id() const { return next_id_; }
  std::string NewId();
  // Raises next_id() to `next` (never lowers it): the ids a withdrawn change handed out stay
  // handed out.
  void ReserveIdsBelow(std::uint64_t next) { next_id_ = std::max(next_id_, next); }
  // Whether `id` is one this catalog handed out and no longer has (dropped, or handed out by a
  // change that was withdrawn: Retire): a replica still running it runs something this frontend
  // made (reconciliation may drop it), not something of another controller. Kept durably.
  bool IsDroppedId(std::string_view id) const { return retired_.find(id) != retired_.end(); }
  const std::set<std::string, std::less<>>& retired_ids() const { return retired_; }
  // Marks ids this catalog handed out (n < next_id()) and does not have as dropped.
  void Retire(const std::vector<std::string>& ids);

  // The replay history (invariant 4).
  const controller::History& history() const { return history_; }
  // What a replica that connects or reconnects is sent after Hello, in order.
  std::vector<ipc::pb::Command> Replay() const { return history_.Replay(); }
  // The indexes the history has a replica maintain (for controller::UnknownLiveIndexes).
  std::set<std::string> LiveIndexes() const { return history_.LiveIndexes(); }
  // The earliest time index `id` is readable at, as far as the history knows: where a maintained
  // dataflow importing it may start (controller/imports.h, invariant I1).
  std::uint64_t ReadableFrom(const std::string& id) const { return history_.ReadableFrom(id); }

  // Mutations. Each checks first and changes nothing when it refuses.
  //
  // A table, source, view or materialized view with its indexes (none for a view, else its
  // default index first) and the commands that make it (none for a view), each joining the
  // history. 42P07 when the object's or an index's name is taken (PostgreSQL's "relation "t"
  // already exists"); 42P01 for a depends_on name that is no object. REQUIRES: the ids were
  // handed out by NewId, the commands are canonical (controller::Canonical).
  CatalogError Create(CatalogObject object, std::vector<CatalogIndex> indexes,
                      std::vector<ipc::pb::Command> commands);
  // An index on an existing table, source or materialized view, and its CreateDataflow. 42P07
  // when its name is taken; 42P01 when `on` is no object.
  CatalogError CreateIndex(CatalogIndex index, ipc::pb::Command command);

  // What DROP <kind> name [CASCADE] removes. `kind` kTable also drops a source (CREATE TABLE …
  // WITH made it); `index` drops an index instead (kind ignored). Refusals, PostgreSQL's:
  // 42P01 (42704 for an index) `table "t" does not exist`; 42809 `"t" is not a view` (or not
  // an index, or an index not a table) with the HINT naming the right DROP; 2BP01 without CASCADE
  // when a view or materialized view reads an object dropped — "cannot drop table t because other
  // objects depend on it", the DETAIL a line "view v depends on table t" per dependant
  // (transitively), the HINT "Use DROP ... CASCADE to drop the dependent objects too." An object's
  // indexes go with it, as in PostgreSQL. A default index is dropped only with its object: 2BP01
  // naming it.
  sql::SqlResult<DropPlan> PlanDrop(ObjectKind kind, bool index, const std::string& name,
                                    bool cascade) const;
  // Removes what `plan` says and records its commands in the history, which is pruned.
  // REQUIRES: `plan` is PlanDrop's answer for this catalog, unchanged since.
  void ApplyDrop(const DropPlan& plan);

  // Records the AllowCompaction of index `id` to time `t` that the frontend sent (its compaction
  // policy), replacing the one recorded before, at the end of the history: a maintained dataflow
  // made later starts no earlier (ReadableFrom), and a replay allows the same. A time not above
  // the last one recorded, or an id that is no live index, changes nothing.
  void RecordCompaction(const std::string& id, std::uint64_t t);
  // RecordCompaction of each (id, t), in one pass over the history.
  void RecordCompactions(const std::map<std::string, std::uint64_t>& compactions);

  // The catalog catalog_store.h read back: checked against invariants 1–4 (Corruption naming
  // what is wrong), so a damaged file that still parses is an error, not a catalog.
  static Result<Catalog> Restore(std::uint64_t next_id, std::vector<CatalogObject> objects,
                                 std::vector<CatalogIndex> indexes,
                                 std::vector<ipc::pb::Command> history,
                                 std::vector<std::string> retired = {});

 private:
  // The objects that read `name` (depends_on), directly.
  std::vector<const CatalogObject*> Readers(std::string_view name) const;

  std::map<std::string, CatalogObject, std::less<>> objects_;
  std::map<std::string, CatalogIndex, std::less<>> indexes_;
  std::uint64_t next_id_ = 1;
  controller::History history_;  // in memory only: catalog_store.h writes its commands
  std::set<std::string, std::less<>> retired_;  // IsDroppedId
};

// The number n of a GlobalId u<n>; nullopt for any other id.
std::optional<std::uint64_t> UserIdNumber(std::string_view id);

}  // namespace tandem::frontend
