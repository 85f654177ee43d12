#include "frontend/catalog/catalog.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <tuple>
#include <utility>

#include "base/time.h"
#include "controller/compaction.h"
#include "frontend/sqlstate.h"
#include "ipc/model.h"

namespace tandem::frontend {

namespace {

// `name` quoted as PostgreSQL quotes a relation in its messages.
std::string QuotedName(std::string_view name) { return "\"" + std::string(name) + "\""; }

std::uint64_t IdOrder(std::string_view id) { return UserIdNumber(id).value_or(0); }

// The DROP command that removes objects of `kind`: what a HINT tells the user to use.
std::string DropCommandFor(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kTable:
    case ObjectKind::kSource:
      return "DROP TABLE";
    case ObjectKind::kView:
      return "DROP VIEW";
    case ObjectKind::kMaterializedView:
      return "DROP MATERIALIZED VIEW";
  }
  return "DROP";
}

// One thing a DROP removes: an object or an index, by name.
struct Dropped {
  bool index = false;
  std::string name;
  bool operator<(const Dropped& o) const {
    return std::tie(index, name) < std::tie(o.index, o.name);
  }
};

}  // namespace

std::optional<std::uint64_t> UserIdNumber(std::string_view id) {
  if (id.size() < 2 || id[0] != 'u' || id[1] == '0') return std::nullopt;
  std::uint64_t n = 0;
  const auto r = std::from_chars(id.data() + 1, id.data() + id.size(), n);
  if (r.ec != std::errc() || r.ptr != id.data() + id.size()) return std::nullopt;
  return n;
}

std::string_view KindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kTable:
      return "table";
    case ObjectKind::kSource:
      return "source";
    case ObjectKind::kView:
      return "view";
    case ObjectKind::kMaterializedView:
      return "materialized view";
  }
  return "object";
}

// ---------------------------------------------------------------------------------------------
// Reading

const CatalogObject* Catalog::FindObject(std::string_view name) const {
  auto it = objects_.find(name);
  return it == objects_.end() ? nullptr : &it->second;
}

const CatalogIndex* Catalog::FindIndex(std::string_view name) const {
  auto it = indexes_.find(name);
  return it == indexes_.end() ? nullptr : &it->second;
}

std::vector<const CatalogIndex*> Catalog::IndexesOn(std::string_view name) const {
  std::vector<const CatalogIndex*> out;
  for (const auto& [n, index] : indexes_) {
    if (index.on == name) out.push_back(&index);
  }
  // Ids rise in creation order and the default index is made with its object: it comes first.
  std::sort(out.begin(), out.end(), [](const CatalogIndex* a, const CatalogIndex* b) {
    return IdOrder(a->id) < IdOrder(b->id);
  });
  return out;
}

const CatalogObject* Catalog::ObjectWithId(std::string_view id) const {
  if (id.empty()) return nullptr;
  for (const auto& [n, o] : objects_) {
    if (o.id == id) return &o;
  }
  return nullptr;
}

const CatalogIndex* Catalog::IndexWithId(std::string_view id) const {
  for (const auto& [n, i] : indexes_) {
    if (i.id == id) return &i;
  }
  return nullptr;
}

std::string Catalog::NewId() { return "u" + std::to_string(next_id_++); }

void Catalog::Retire(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    const auto n = UserIdNumber(id);
    if (n && *n < next_id_ && !ObjectWithId(id) && !IndexWithId(id)) retired_.insert(id);
  }
}

std::vector<const CatalogObject*> Catalog::Readers(std::string_view name) const {
  std::vector<const CatalogObject*> out;
  for (const auto& [n, o] : objects_) {
    if (std::find(o.depends_on.begin(), o.depends_on.end(), name) != o.depends_on.end()) {
      out.push_back(&o);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Creating

CatalogError Catalog::Create(CatalogObject object, std::vector<CatalogIndex> indexes,
                             std::vector<ipc::pb::Command> commands) {
  if (objects_.count(object.name)) {
    return sql::SqlError(sqlstate::kDuplicateTable,
                         "relation " + QuotedName(object.name) + " already exists");
  }
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    const bool twice =
        std::any_of(indexes.begin(), indexes.begin() + static_cast<long>(i),
                    [&](const CatalogIndex& x) { return x.name == indexes[i].name; });
    if (indexes_.count(indexes[i].name) || twice) {
      return sql::SqlError(sqlstate::kDuplicateTable,
                           "relation " + QuotedName(indexes[i].name) + " already exists");
    }
  }
  for (const auto& d : object.depends_on) {
    if (!objects_.count(d)) {
      return sql::SqlError(sqlstate::kUndefinedTable,
                           "relation " + QuotedName(d) + " does not exist");
    }
  }
  const std::string name = object.name;
  objects_.emplace(name, std::move(object));
  for (auto& i : indexes) {
    i.on = name;
    const std::string index_name = i.name;
    indexes_.emplace(index_name, std::move(i));
  }
  for (const auto& c : commands) history_.Append(c);
  return std::nullopt;
}

CatalogError Catalog::CreateIndex(CatalogIndex index, ipc::pb::Command command) {
  if (indexes_.count(index.name)) {
    return sql::SqlError(sqlstate::kDuplicateTable,
                         "relation " + QuotedName(index.name) + " already exists");
  }
  const CatalogObject* on = FindObject(index.on);
  if (!on) {
    return sql::SqlError(sqlstate::kUndefinedTable,
                         "relation " + QuotedName(index.on) + " does not exist");
  }
  if (on->kind == ObjectKind::kView) {
    return sql::SqlError(sqlstate::kWrongObjectType,
                         "cannot create index on view " + QuotedName(index.on));
  }
  const std::string name = index.name;
  indexes_.emplace(name, std::move(index));
  history_.Append(command);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Dropping

sql::SqlResult<DropPlan> Catalog::PlanDrop(ObjectKind kind, bool index, const std::string& name,
                                           bool cascade) const {
  // What is named, and its kind.
  std::string what;  // "table t", for messages
  if (index) {
    const CatalogIndex* i = FindIndex(name);
    if (!i) {
      if (const CatalogObject* o = FindObject(name)) {  // PostgreSQL's one namespace says so
        sql::SqlError e(sqlstate::kWrongObjectType, QuotedName(name) + " is not an index");
        const std::string its(
            KindName(o->kind == ObjectKind::kSource ? ObjectKind::kTable : o->kind));
        e.hint = "Use " + DropCommandFor(o->kind) + " to remove a " + its + ".";
        return e;
      }
      return sql::SqlError(sqlstate::kUndefinedObject,
                           "index " + QuotedName(name) + " does not exist");
    }
    const auto on = IndexesOn(i->on);
    if (!on.empty() && on.front() == i) {
      const CatalogObject* owner = FindObject(i->on);
      const std::string owner_text =
          std::string(KindName(owner ? owner->kind : ObjectKind::kTable)) + " " + i->on;
      sql::SqlError e(sqlstate::kDependentObjectsStillExist,
                      "cannot drop index " + name + " because " + owner_text + " requires it");
      e.hint = "You can drop " + owner_text + " instead.";
      return e;
    }
    what = "index " + name;
  } else {
    const CatalogObject* o = FindObject(name);
    const bool table_like = kind == ObjectKind::kTable || kind == ObjectKind::kSource;
    const auto matches = [&](ObjectKind k) {
      return table_like ? (k == ObjectKind::kTable || k == ObjectKind::kSource) : k == kind;
    };
    if (!o && FindIndex(name)) {
      const std::string kind_text(KindName(table_like ? ObjectKind::kTable : kind));
      sql::SqlError e(sqlstate::kWrongObjectType, QuotedName(name) + " is not a " + kind_text);
      e.hint = "Use DROP INDEX to remove an index.";
      return e;
    }
    if (!o) {
      return sql::SqlError(sqlstate::kUndefinedTable,
                           std::string(KindName(table_like ? ObjectKind::kTable : kind)) + " " +
                               QuotedName(name) + " does not exist");
    }
    if (!matches(o->kind)) {
      const std::string kind_text(KindName(table_like ? ObjectKind::kTable : kind));
      sql::SqlError e(
          sqlstate::kWrongObjectType,
          QuotedName(name) + " is not a" + (kind_text[0] == 'i' ? "n " : " ") + kind_text);
      const std::string its(
          KindName(o->kind == ObjectKind::kSource ? ObjectKind::kTable : o->kind));
      e.hint = "Use " + DropCommandFor(o->kind) + " to remove a" + (its[0] == 'i' ? "n " : " ") +
               its + ".";
      return e;
    }
    what = std::string(KindName(o->kind == ObjectKind::kSource ? ObjectKind::kTable : o->kind)) +
           " " + name;
  }

  // The closure: what goes with the target (an object's indexes) and what depends on it (the
  // objects that read a dropped object, or import a dropped index), transitively. Every step adds
  // a catalog entry not yet in `seen`, so the walk ends after at most every entry.
  std::set<Dropped> seen;
  std::deque<Dropped> work = {{index, name}};  // breadth first: direct dependants listed first
  std::vector<std::string> detail;             // "view v depends on table t", one per dependant
  std::vector<std::string> dependants;         // "view v"
  seen.insert(work.front());
  auto text_of = [&](const Dropped& d) {
    if (d.index) return "index " + d.name;
    const CatalogObject* o = FindObject(d.name);
    const ObjectKind k = o->kind == ObjectKind::kSource ? ObjectKind::kTable : o->kind;
    return std::string(KindName(k)) + " " + d.name;
  };
  auto add = [&](Dropped d, const Dropped& because, bool dependant) {
    if (!seen.insert(d).second) return;
    if (dependant) {
      detail.push_back(text_of(d) + " depends on " + text_of(because));
      dependants.push_back(text_of(d));
    }
    work.push_back(std::move(d));
  };
  while (!work.empty()) {
    const Dropped d = work.front();
    work.pop_front();
    if (d.index) {
      // Objects whose dataflow imports this index (a materialized view reading it in place).
      const CatalogIndex* i = FindIndex(d.name);
      for (const auto& c : history_.commands()) {
        if (!c.has_create_dataflow()) continue;
        const auto& desc = c.create_dataflow().desc();
        const bool imports = std::any_of(desc.index_imports().begin(), desc.index_imports().end(),
                                         [&](const auto& x) { return x.id() == i->id; });
        if (!imports) continue;
        for (const auto& e : desc.index_exports()) {
          const CatalogIndex* importer = IndexWithId(e.id());
          if (!importer) continue;
          if (importer->on == i->on) {
            add({true, importer->name}, d, false);  // an index of the same object: goes with it
          } else {
            add({false, importer->on}, d, true);
          }
        }
      }
      continue;
    }
    // Readers before indexes: a dependant is named for the object it reads, as PostgreSQL
    // names it, before the index it imports.
    for (const CatalogObject* r : Readers(d.name)) add({false, r->name}, d, true);
    for (const CatalogIndex* i : IndexesOn(d.name)) add({true, i->name}, d, false);
  }
  if (!detail.empty() && !cascade) {
    sql::SqlError e(sqlstate::kDependentObjectsStillExist,
                    "cannot drop " + what + " because other objects depend on it");
    for (const auto& line : detail) e.detail += (e.detail.empty() ? "" : "\n") + line;
    e.hint = "Use DROP ... CASCADE to drop the dependent objects too.";
    return e;
  }

  DropPlan plan;
  plan.dependants = std::move(dependants);
  std::set<std::string> objects;
  for (const auto& d : seen) {
    if (d.index) {
      plan.indexes.push_back(d.name);
    } else {
      objects.insert(d.name);
    }
  }
  // Objects: each once none of the others left reads it (dependants first). Invariant 3 keeps
  // the graph acyclic; a cycle (a damaged catalog) ends the loop with the rest in name order.
  while (!objects.empty()) {
    std::string next;
    for (const auto& o : objects) {
      const bool read = std::any_of(objects.begin(), objects.end(), [&](const std::string& r) {
        const auto& deps = FindObject(r)->depends_on;
        return r != o && std::find(deps.begin(), deps.end(), o) != deps.end();
      });
      if (!read) {
        next = o;
        break;
      }
    }
    if (next.empty()) next = *objects.begin();
    plan.objects.push_back(next);
    objects.erase(next);
  }
  std::sort(plan.indexes.begin(), plan.indexes.end(), [&](const auto& a, const auto& b) {
    return IdOrder(FindIndex(a)->id) > IdOrder(FindIndex(b)->id);
  });
  for (const auto& i : plan.indexes) plan.commands.push_back(controller::Drop(FindIndex(i)->id));
  return plan;
}

void Catalog::ApplyDrop(const DropPlan& plan) {
  std::vector<std::string> ids;
  for (const auto& i : plan.indexes) {
    if (const CatalogIndex* index = FindIndex(i)) ids.push_back(index->id);
    indexes_.erase(i);
  }
  for (const auto& o : plan.objects) {
    if (const CatalogObject* object = FindObject(o); object && !object->id.empty()) {
      ids.push_back(object->id);
    }
    objects_.erase(o);
  }
  Retire(ids);
  for (const auto& c : plan.commands) history_.Append(c);
  history_.Prune();
}

void Catalog::RecordCompaction(const std::string& id, std::uint64_t t) {
  RecordCompactions({{id, t}});
}

void Catalog::RecordCompactions(const std::map<std::string, std::uint64_t>& compactions) {
  // The compactions that change something: of a live index, later than the one recorded.
  std::map<std::string, std::uint64_t> taken;
  for (const auto& [id, t] : compactions) {
    if (IndexWithId(id) && t <= kMaxTime && t > history_.ReadableFrom(id)) taken.emplace(id, t);
  }
  if (taken.empty()) return;
  controller::History next;
  for (const auto& c : history_.commands()) {
    if (c.has_allow_compaction() && taken.count(c.allow_compaction().id()) > 0) continue;
    next.Append(c);
  }
  for (const auto& [id, t] : taken) next.Append(controller::AllowCompaction(id, t));
  history_ = std::move(next);
}

// ---------------------------------------------------------------------------------------------
// Restoring

Result<Catalog> Catalog::Restore(std::uint64_t next_id, std::vector<CatalogObject> objects,
                                 std::vector<CatalogIndex> indexes,
                                 std::vector<ipc::pb::Command> history,
                                 std::vector<std::string> retired) {
  Catalog c;
  c.next_id_ = next_id;
  auto bad = [](const std::string& why) { return Status::Corruption(why); };
  auto check_id = [&](const std::string& id, const std::string& of) -> Status {
    const auto n = UserIdNumber(id);
    if (!n || *n >= next_id) {
      return bad(of + " has id \"" + id + "\", not an id u<n> below next-id " +
                 std::to_string(next_id));
    }
    return Status::Ok();
  };
  std::set<std::string> ids;
  for (auto& o : objects) {
    if (o.name.empty()) return bad("an object has no name");
    if (o.kind == ObjectKind::kView) {
      if (!o.id.empty()) return bad("view " + o.name + " has an id");
    } else {
      TANDEM_RETURN_IF_ERROR(check_id(o.id, std::string(KindName(o.kind)) + " " + o.name));
      if (!ids.insert(o.id).second) return bad("id " + o.id + " is given twice");
    }
    const std::string name = o.name;
    if (!c.objects_.emplace(name, std::move(o)).second) return bad("object " + name + " twice");
  }
  for (const auto& [name, o] : c.objects_) {
    for (const auto& d : o.depends_on) {
      if (!c.objects_.count(d)) return bad(name + " depends on " + d + ", which is no object");
    }
    for (auto k : o.primary_key) {
      if (k >= o.columns.size()) return bad(name + "'s primary key column is out of range");
    }
  }
  for (auto& i : indexes) {
    TANDEM_RETURN_IF_ERROR(check_id(i.id, "index " + i.name));
    if (!ids.insert(i.id).second) return bad("id " + i.id + " is given twice");
    const CatalogObject* on = c.FindObject(i.on);
    if (!on || on->kind == ObjectKind::kView) {
      return bad("index " + i.name + " is on " + i.on + ", which is no table or materialized view");
    }
    for (auto k : i.key) {
      if (k >= on->columns.size()) return bad("index " + i.name + "'s key is out of range");
    }
    const std::string name = i.name;
    if (!c.indexes_.emplace(name, std::move(i)).second) return bad("index " + name + " twice");
  }
  for (const auto& [name, o] : c.objects_) {
    if (o.kind != ObjectKind::kView && c.IndexesOn(name).empty()) {
      return bad(std::string(KindName(o.kind)) + " " + name + " has no index");
    }
  }
  for (auto& command : history) {
    if (!command.has_create_dataflow() && !command.has_allow_compaction()) {
      return bad("the history has a " + ipc::Describe(command) +
                 " (only CreateDataflow and AllowCompaction define a replica's state)");
    }
    c.history_.Append(command);
  }
  const std::set<std::string> live = c.history_.LiveIndexes();
  for (const auto& [name, i] : c.indexes_) {
    if (!live.count(i.id)) return bad("index " + name + " (" + i.id + ") is not in the history");
  }
  for (const auto& id : live) {
    if (!c.IndexWithId(id)) return bad("the history maintains " + id + ", which no index is");
  }
  for (const auto& id : retired) {
    const auto n = UserIdNumber(id);
    if (!n || *n >= next_id || c.ObjectWithId(id) || c.IndexWithId(id)) {
      return bad("retired id " + id + " is not one this catalog handed out and no longer has");
    }
    c.retired_.insert(id);
  }
  return c;
}

}  // namespace tandem::frontend
