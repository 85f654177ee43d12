#include "ipc/validate.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <set>
#include <utility>

#include "base/global_id.h"
#include "ipc/plan_typing.h"
#include "ipc/reasons.h"
#include "ipc/source_schema.h"
#include "ipc/table_write.h"
#include "ipc/temporal_filter.h"

namespace tandem::ipc {
namespace {

// What a plan of one dataflow may read by name: its source imports, its index imports, the
// collections those indexes are on, and the builds before it.
using Scope = std::map<std::string, pb::Schema>;

// "[5]" or "[]": a frontier for a reason text.
std::string FrontierList(const pb::Frontier& frontier) {
  std::string out = "[";
  for (int i = 0; i < frontier.elements_size(); ++i) {
    out += (i > 0 ? ", " : "") + TimeText(frontier.elements(i));
  }
  return out + "]";
}

// A transient id (t<n>, DESIGN §2) names a one-shot result. `id` has been checked canonical.
bool IsTransient(const std::string& id) {
  const auto parsed = GlobalId::Parse(id);
  return parsed && parsed->kind() == GlobalId::Kind::kTransient;
}

// "u3" or "u3, u4": ids for a reason text.
std::string IdList(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

Status CheckParamNames(const google::protobuf::Map<std::string, std::string>& params) {
  for (const auto& [name, value] : params) {
    if (name.empty()) return Invalid("a parameter has an empty name");
  }
  return Status::Ok();
}

Status CheckHello(const pb::Hello& hello) {
  if (hello.protocol_version() != kProtocolVersion) {
    return Invalid("protocol version " + std::to_string(hello.protocol_version()) +
                   ", supervisor speaks " + std::to_string(kProtocolVersion));
  }
  if (hello.writer() && !hello.observer()) {
    return Invalid(
        "writer: true needs observer: true (a writer session is an observer that may also write "
        "tables; a controller writes anyway)");
  }
  return Status::Ok();
}

Status CheckUuid(const std::string& uuid) {
  if (uuid.empty()) return Invalid("uuid is empty");
  return Status::Ok();
}

Status CheckKnownId(const Catalog& catalog, const std::string& id) {
  if (catalog.collections().count(id) == 0) return Status::NotFound("unknown id " + Quoted(id));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// The time itself (ScalarExpr.now, tandem_now(); DESIGN §16)

// Where a plan may read the time: in a MAINTAINED dataflow, an Mfp's predicates may be temporal
// filters (the shape of ipc/temporal_filter.h), and nothing else reads it; a ONE_SHOT_READ
// dataflow and a peek compute one time, which their sender substitutes as a TIMESTAMPTZ literal.
// `one_time`: why the time may not be read at all here (empty: a maintained dataflow).
// Why a read at the one time `t` (`what`: "a peek reads one time, its timestamp") may not read
// the time itself, and what to send instead.
std::string OneTime(const std::string& what, std::uint64_t t) {
  constexpr std::uint64_t kLastMilli = std::numeric_limits<std::int64_t>::max() / 1000;
  return what + " " + TimeText(t) + ": substitute it as a TIMESTAMPTZ literal" +
         (t <= kLastMilli ? " (" + std::to_string(t * 1000) + " microseconds since the Unix epoch)"
                          : "");
}

Status CheckTimeReads(const pb::MapFilterProject& mfp, const std::string& one_time) {
  for (int i = 0; i < mfp.map_size(); ++i) {
    if (!ContainsNow(mfp.map(i))) continue;
    return Invalid("map expression " + std::to_string(i) + " reads tandem_now(): " +
                   (one_time.empty() ? "the time may be read only in a temporal filter (the "
                                       "predicates of a maintained dataflow's Mfp)"
                                     : one_time));
  }
  for (int i = 0; i < mfp.predicates_size(); ++i) {
    if (!ContainsNow(mfp.predicates(i))) continue;
    const std::string where = "predicate " + std::to_string(i);
    if (!one_time.empty()) return Invalid(where + " reads tandem_now(): " + one_time);
    const auto comparisons = TemporalComparisons(mfp.predicates(i));
    if (!comparisons.ok()) return Within(where, comparisons.status());
  }
  return Status::Ok();
}

Status CheckTimeReads(const pb::Plan& plan, const std::string& one_time) {
  switch (plan.kind_case()) {
    case pb::Plan::kMfp: {
      TANDEM_RETURN_IF_ERROR(CheckTimeReads(plan.mfp().input(), one_time));
      const Status ok = CheckTimeReads(plan.mfp().mfp(), one_time);
      if (!ok.ok()) return Within("Mfp", ok);
      return ok;
    }
    case pb::Plan::kReduce:
      return CheckTimeReads(plan.reduce().input(), one_time);
    case pb::Plan::kUnion:
      for (const auto& input : plan.union_().inputs()) {
        TANDEM_RETURN_IF_ERROR(CheckTimeReads(input, one_time));
      }
      return Status::Ok();
    case pb::Plan::kDistinct:
      return CheckTimeReads(plan.distinct().input(), one_time);
    case pb::Plan::kJoin: {
      const Status left = CheckTimeReads(plan.join().left(), one_time);
      if (!left.ok()) return Within("Join left", left);
      const Status right = CheckTimeReads(plan.join().right(), one_time);
      if (!right.ok()) return Within("Join right", right);
      return Status::Ok();
    }
    case pb::Plan::kTopK:
      return CheckTimeReads(plan.top_k().input(), one_time);
    case pb::Plan::kNegate:
      return CheckTimeReads(plan.negate().input(), one_time);
    case pb::Plan::kThreshold:
      return CheckTimeReads(plan.threshold().input(), one_time);
    case pb::Plan::kGet:
    case pb::Plan::KIND_NOT_SET:
      break;
  }
  return Status::Ok();
}

Status CheckPeek(const Catalog& catalog, const pb::Peek& peek) {
  if (peek.uuid().empty()) return Invalid("uuid is empty");
  const auto index = catalog.indexes().find(peek.id());
  if (index == catalog.indexes().end()) {
    if (catalog.collections().count(peek.id()) > 0) {
      return Invalid(Quoted(peek.id()) + " is not an index (peeks read indexes)");
    }
    return Status::NotFound("unknown index " + Quoted(peek.id()));
  }
  TANDEM_RETURN_IF_ERROR(CheckTime(peek.timestamp(), "timestamp"));
  // A one-shot result is computed at its as_of only (until = as_of + 1): no other time is exact.
  if (const auto as_of = catalog.OneShotAsOf(peek.id()); as_of && peek.timestamp() != *as_of) {
    return Invalid(peek.id() + " is a one-shot result, readable only at time " + TimeText(*as_of));
  }
  const pb::Schema& schema = catalog.collections().at(peek.id());
  const std::vector<std::uint32_t>& key = index->second.key;
  for (int k = 0; k < peek.keys_size(); ++k) {
    const pb::Row& row = peek.keys(k);
    const std::string what = "key " + std::to_string(k);
    if (static_cast<std::size_t>(row.datums_size()) != key.size()) {
      return Invalid(what + " has " + std::to_string(row.datums_size()) +
                     " datums, the index key has " + std::to_string(key.size()) + " columns");
    }
    for (int d = 0; d < row.datums_size(); ++d) {
      // Index keys were checked in range when the index was created.
      const Status fits = CheckDatumFits(row.datums(d), schema.columns(static_cast<int>(key[d])));
      if (!fits.ok()) return Within(what + " datum " + std::to_string(d), fits);
    }
  }
  auto output = MfpSchema(peek.mfp(), schema);
  if (!output.ok()) return Within("mfp", output.status());
  const Status time_reads =
      CheckTimeReads(peek.mfp(), OneTime("a peek reads one time, its timestamp", peek.timestamp()));
  if (!time_reads.ok()) return Within("mfp", time_reads);
  const int columns = output->columns_size();
  auto out_of_range = [&](std::uint32_t column) {
    return Invalid("column " + std::to_string(column) + " out of range: the mfp's output has " +
                   std::to_string(columns) + " columns");
  };
  for (int i = 0; i < peek.finishing().order_by_size(); ++i) {
    const std::uint32_t column = peek.finishing().order_by(i).column();
    if (column >= static_cast<std::uint32_t>(columns)) {
      return Within("finishing order_by " + std::to_string(i), out_of_range(column));
    }
  }
  for (int i = 0; i < peek.finishing().project_size(); ++i) {
    const std::uint32_t column = peek.finishing().project(i);
    if (column >= static_cast<std::uint32_t>(columns)) {
      return Within("finishing project " + std::to_string(i), out_of_range(column));
    }
  }
  return Status::Ok();
}

Status CheckSubscribe(const Catalog& catalog, const pb::Subscribe& subscribe) {
  if (subscribe.uuid().empty()) return Invalid("uuid is empty");
  if (subscribe.uuid().size() > WriteBounds::kMaxUuidBytes) {
    return Invalid("uuid is " + std::to_string(subscribe.uuid().size()) + " bytes, at most " +
                   std::to_string(WriteBounds::kMaxUuidBytes));
  }
  if (catalog.indexes().count(subscribe.id()) == 0) {
    if (catalog.collections().count(subscribe.id()) > 0) {
      return Invalid(Quoted(subscribe.id()) + " is not an index (subscribes read indexes)");
    }
    return Status::NotFound("unknown index " + Quoted(subscribe.id()));
  }
  if (const auto as_of = catalog.OneShotAsOf(subscribe.id())) {
    return Invalid(subscribe.id() + " is a one-shot result (readable only at time " +
                   TimeText(*as_of) + "): subscribes read maintained indexes");
  }
  if (subscribe.has_as_of()) TANDEM_RETURN_IF_ERROR(CheckTime(subscribe.as_of(), "as_of"));
  if (subscribe.has_up_to()) {
    TANDEM_RETURN_IF_ERROR(CheckTime(subscribe.up_to(), "up_to"));
    if (subscribe.has_as_of() && subscribe.up_to() <= subscribe.as_of()) {
      return Invalid("up_to " + TimeText(subscribe.up_to()) + " is not after as_of " +
                     TimeText(subscribe.as_of()) + " (the subscribe would deliver nothing)");
    }
  }
  return Status::Ok();
}

Status CheckWriteTable(const Catalog& catalog, const pb::WriteTable& write) {
  if (write.uuid().empty()) return Invalid("uuid is empty (it is the write's idempotency key)");
  if (write.uuid().size() > WriteBounds::kMaxUuidBytes) {
    return Invalid("uuid of " + std::to_string(write.uuid().size()) + " bytes is over the bound " +
                   std::to_string(WriteBounds::kMaxUuidBytes) + " bytes");
  }
  const std::string& id = write.id();
  const auto table = catalog.tables().find(id);
  if (table == catalog.tables().end()) {
    const auto origin = catalog.origins().find(id);
    if (origin == catalog.origins().end()) return Status::NotFound("unknown table " + Quoted(id));
    const std::string what = origin->second.kind == Catalog::Origin::kIndex ? "an index"
                             : origin->second.kind == Catalog::Origin::kView
                                 ? "a view"
                                 : std::string("a ") + origin->second.source_kind + " source";
    return Invalid(id + " is not a table (it is " + what + "): only a table source takes writes");
  }
  if (write.updates().empty()) return Invalid("the write has no updates (send at least one)");
  if (write.updates_size() > WriteBounds::kMaxUpdates) {
    return Invalid(std::to_string(write.updates_size()) + " updates are over the bound " +
                   std::to_string(WriteBounds::kMaxUpdates) + " (split the write)");
  }
  return CheckTableUpdates(write, table->second.schema, table->second.upsert_key);
}

Status CheckAllowCompaction(const Catalog& catalog, const pb::AllowCompaction& command) {
  const std::string& id = command.id();
  if (catalog.collections().count(id) == 0) return Status::NotFound("unknown id " + Quoted(id));
  const Catalog::Origin& origin = catalog.origins().at(id);
  if (origin.kind != Catalog::Origin::kIndex) {
    // The runtimes would accept it and do nothing: only an index has a compaction frontier, and
    // a dataflow goes away when its last index is dropped.
    return Invalid(id + " is a " + (origin.kind == Catalog::Origin::kSource ? "source" : "view") +
                   ", not an index: only indexes can be compacted or dropped (the dataflow that "
                   "defines it exports " +
                   IdList(catalog.dataflows().at(origin.dataflow).live_exports) + ")");
  }
  if (!command.has_frontier()) {
    return Invalid("frontier is missing (to drop, send an empty frontier explicitly)");
  }
  const pb::Frontier& frontier = command.frontier();
  if (frontier.elements_size() > 1) {
    return Invalid("frontier has " + std::to_string(frontier.elements_size()) +
                   " elements; over a total order it has at most one");
  }
  if (frontier.elements_size() == 1) {
    const std::uint64_t time = frontier.elements(0);
    TANDEM_RETURN_IF_ERROR(CheckTime(time, "frontier element"));
    // Accepted; for a one-shot result it changes nothing, and a lower frontier lowers nothing.
    return Status::Ok();
  }
  // An importer reads the index's batches in place until it is dropped (DESIGN §8): the
  // controller drops the importers first.
  std::string importers;
  std::vector<std::string> to_drop;
  for (const auto& [number, importer] : catalog.dataflows()) {
    if (std::find(importer.imports.begin(), importer.imports.end(), id) == importer.imports.end()) {
      continue;
    }
    importers += (importers.empty() ? "" : " and by ") + IdList(importer.live_exports) +
                 " (dataflow '" + Printable(importer.debug_name) + "')";
    to_drop.insert(to_drop.end(), importer.live_exports.begin(), importer.live_exports.end());
  }
  if (!importers.empty()) {
    return Invalid(id + " is imported by " + importers + ": drop " + IdList(to_drop) + " first");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// CreateDataflow

// An id a dataflow creates: a canonical GlobalId, new in the epoch and in the dataflow.
Status CheckNewId(const std::string& id, const std::string& what,
                  const std::map<std::string, pb::Schema>& collections, const Scope& scope) {
  const auto parsed = GlobalId::Parse(id);
  if (!parsed) {
    return Invalid(what + " id \"" + Printable(id) + "\" is not a GlobalId (u<n>, s<n> or t<n>)");
  }
  if (parsed->ToString() != id) {
    return Invalid(what + " id \"" + Printable(id) + "\" is not in canonical form (" +
                   parsed->ToString() + ")");
  }
  if (collections.count(id) > 0) return Invalid(what + " " + id + " already exists");
  if (scope.count(id) > 0) return Invalid(what + " " + id + " is already used in this dataflow");
  return Status::Ok();
}

// The index imports of a dataflow: each names a known index of the epoch with the same `on`,
// key and schema, once; their ids and `on` collections join the dataflow's scope.
Status CheckIndexImports(const pb::DataflowDescription& desc, const Catalog& catalog,
                         Scope* scope_out) {
  Scope& scope = *scope_out;
  const auto& collections = catalog.collections();
  const auto& indexes = catalog.indexes();
  std::set<std::string> sources;
  for (const auto& import : desc.source_imports()) sources.insert(import.id());
  std::set<std::string> imported_indexes;
  for (const auto& import : desc.index_imports()) {
    const std::string what = "index import " + Quoted(import.id());
    const auto index = indexes.find(import.id());
    if (index == indexes.end()) {
      if (collections.count(import.id()) > 0) return Invalid(what + ": not an index");
      return Status::NotFound(what + ": unknown index");
    }
    // Only a MAINTAINED dataflow's index is in the registry for an importer to read; a one-shot
    // result lives in the memory of the runtime that computed it.
    if (IsTransient(import.id())) {
      return Invalid(what + ": " + import.id() +
                     " is a one-shot result, not a maintained index: import the indexes it reads");
    }
    if (!imported_indexes.insert(import.id()).second) {
      return Invalid(what + ": imported twice in this dataflow");
    }
    if (import.on() != index->second.on) {
      return Invalid(what + ": the index is on " + index->second.on + ", not " +
                     Quoted(import.on()));
    }
    const std::vector<std::uint32_t> key(import.key().begin(), import.key().end());
    if (key != index->second.key) {
      return Invalid(what + ": key " + ListText(import.key()) + " differs from the index's key");
    }
    const pb::Schema& known = collections.at(import.id());
    if (!SameShape(import.schema(), known)) {
      return Invalid(what + ": schema " + SchemaText(import.schema()) +
                     " differs from the known schema " + SchemaText(known));
    }
    // Source import ids are new in the epoch and index import ids are known: they cannot clash.
    scope.emplace(import.id(), known);
    // The collection the index is on may be read by name too. It must not clash with a source
    // import (possible once it was dropped and its id re-created here), and two imported indexes
    // on it must agree on its schema (they may not, if it was dropped and re-created between).
    const auto [it, inserted] = scope.emplace(import.on(), known);
    if (!inserted && (sources.count(import.on()) > 0 || !SameShape(it->second, known))) {
      return Invalid(what + ": " + import.on() + " is already used in this dataflow as " +
                     SchemaText(it->second));
    }
  }

  return Status::Ok();
}

// The index exports of a dataflow: new ids, on a collection of the dataflow, keys in range.
Status CheckIndexExports(const pb::DataflowDescription& desc,
                         const std::map<std::string, pb::Schema>& collections, Scope* scope_out,
                         std::map<std::string, pb::Schema>* created) {
  Scope& scope = *scope_out;
  for (const auto& index : desc.index_exports()) {
    TANDEM_RETURN_IF_ERROR(CheckNewId(index.id(), "index export", collections, scope));
    const std::string what = "index export " + index.id();
    const auto on = scope.find(index.on());
    if (on == scope.end()) {
      if (collections.count(index.on()) > 0) {
        return Invalid(what + ": " + Quoted(index.on()) +
                       " is not a source, import or build of this dataflow");
      }
      return Status::NotFound(what + ": unknown collection " + Quoted(index.on()));
    }
    if (index.key_size() == 0) return Invalid(what + ": key is empty (name at least one column)");
    for (int i = 0; i < index.key_size(); ++i) {
      const Status in_range = CheckColumnInRange(index.key(i), on->second.columns_size());
      if (!in_range.ok()) return Within(what + ": key " + std::to_string(i), in_range);
    }
    // Later exports may not reuse this id either.
    scope.emplace(index.id(), on->second);
    created->emplace(index.id(), on->second);
  }

  return Status::Ok();
}

// The shape of a ONE_SHOT_READ dataflow (DESIGN §8): it computes one time, as_of, from index
// imports only (interactive imports maintenance's indexes; it has no sources of its own).
Status CheckOneShotShape(const pb::DataflowDescription& desc, std::uint64_t as_of) {
  if (as_of == kNotATime - 1) {
    return Invalid("a ONE_SHOT_READ dataflow needs until = as_of + 1, and as_of " +
                   TimeText(as_of) + " is the last time (UINT64_MAX is reserved)");
  }
  const std::uint64_t until = as_of + 1;
  if (desc.until().elements_size() != 1 || desc.until().elements(0) != until) {
    return Invalid("a ONE_SHOT_READ dataflow computes one time: until must be [" + TimeText(until) +
                   "] (as_of + 1), not " + FrontierList(desc.until()) + " (send until [" +
                   TimeText(until) + "], or class MAINTAINED)");
  }
  if (!desc.source_imports().empty()) {
    return Invalid("a ONE_SHOT_READ dataflow reads index imports only, not source import " +
                   Quoted(desc.source_imports(0).id()) +
                   " (import an index on it, or send class MAINTAINED)");
  }
  if (desc.index_imports().empty()) {
    return Invalid(
        "a ONE_SHOT_READ dataflow needs at least one index import (it reads maintained indexes "
        "at as_of): import the indexes it reads");
  }
  return Status::Ok();
}

}  // namespace

Status Validator::CheckCreateDataflow(const Catalog& catalog, const pb::DataflowDescription& desc,
                                      std::map<std::string, pb::Schema>* created_out) const {
  // Everything is checked before anything is recorded: a refused dataflow changes nothing.
  switch (desc.class_()) {
    case pb::MAINTAINED:
    case pb::ONE_SHOT_READ:
      break;
    case pb::DATAFLOW_CLASS_UNSPECIFIED:
      return Invalid(
          "class is unspecified; send MAINTAINED (kept up to date) or ONE_SHOT_READ (computed "
          "at as_of only)");
    default:
      return Invalid("class " + std::to_string(static_cast<int>(desc.class_())) +
                     " is not a known dataflow class");
  }

  if (desc.as_of().elements_size() != 1) {
    return Invalid("as_of must have exactly one element, has " +
                   std::to_string(desc.as_of().elements_size()));
  }
  const std::uint64_t as_of = desc.as_of().elements(0);
  TANDEM_RETURN_IF_ERROR(CheckTime(as_of, "as_of"));
  if (desc.until().elements_size() > 1) {
    return Invalid("until must have at most one element, has " +
                   std::to_string(desc.until().elements_size()));
  }
  if (desc.until().elements_size() == 1) {
    const std::uint64_t until = desc.until().elements(0);
    TANDEM_RETURN_IF_ERROR(CheckTime(until, "until"));
    if (!(as_of < until)) {
      return Invalid("as_of " + TimeText(as_of) + " is not before until " + TimeText(until));
    }
  }

  const bool one_shot = desc.class_() == pb::ONE_SHOT_READ;
  if (one_shot) TANDEM_RETURN_IF_ERROR(CheckOneShotShape(desc, as_of));

  Scope scope;

  for (const auto& import : desc.source_imports()) {
    TANDEM_RETURN_IF_ERROR(CheckNewId(import.id(), "source import", catalog.collections(), scope));
    Status source = CheckSourceImport(import, as_of, segment_bytes_);
    if (source.ok() && import.source().has_table() && !data_dir_) {
      source =
          Status::FailedPrecondition("a table needs the replica's --data-dir (none was given)");
    }
    if (!source.ok()) return Within("source import " + import.id(), source);
    scope.emplace(import.id(), import.schema());
  }

  TANDEM_RETURN_IF_ERROR(CheckIndexImports(desc, catalog, &scope));

  // A maintained importer reads the index from as_of on, forever: below the frontier the
  // controller allowed, the index may already be compacted and the dataflow would be wrong at
  // every time. (A one-shot there is accepted: the runtime answers its peeks Error "compacted".)
  if (!one_shot) {
    for (const auto& import : desc.index_imports()) {
      // Where the index's since may be: its own as_of, or past it as far as compaction was
      // allowed in this epoch. (An earlier controller may have compacted the same arrangement
      // further: the runtime then makes such an import an error of the dataflow — a dataflow
      // kept across the reconnect is not new, and held the index where it needed it.)
      const Catalog::IndexInfo& index = catalog.indexes().at(import.id());
      if (as_of < index.as_of) {
        return Invalid("index import " + import.id() + ": as_of " + TimeText(as_of) +
                       " is before the as_of " + TimeText(index.as_of) + " of " + import.id() +
                       " (its since starts there), so a maintained dataflow would read compacted "
                       "data: send as_of >= " +
                       TimeText(index.as_of));
      }
      const auto allowed = catalog.allowed_compaction().find(import.id());
      if (allowed != catalog.allowed_compaction().end() && as_of < allowed->second) {
        return Invalid("index import " + import.id() + ": as_of " + TimeText(as_of) +
                       " is below the compaction frontier [" + TimeText(allowed->second) +
                       "] the controller allowed for " + import.id() +
                       ", so a maintained dataflow would read compacted data: send as_of >= " +
                       TimeText(allowed->second) + " (or class ONE_SHOT_READ for one read)");
      }
    }
  }

  // Builds, in order: each may read what came before it.
  std::map<std::string, pb::Schema> created;
  for (const auto& import : desc.source_imports()) created.emplace(import.id(), import.schema());
  for (const auto& build : desc.objects_to_build()) {
    TANDEM_RETURN_IF_ERROR(CheckNewId(build.id(), "build", catalog.collections(), scope));
    auto schema = PlanChecker(scope, catalog.collections()).Check(build.plan());
    if (!schema.ok()) return Within("build " + build.id(), schema.status());
    const Status time_reads = CheckTimeReads(
        build.plan(),
        one_shot ? OneTime("a ONE_SHOT_READ dataflow computes one time, its as_of", as_of) : "");
    if (!time_reads.ok()) return Within("build " + build.id(), time_reads);
    scope.emplace(build.id(), *schema);
    created.emplace(build.id(), std::move(schema).value());
  }

  TANDEM_RETURN_IF_ERROR(CheckIndexExports(desc, catalog.collections(), &scope, &created));
  // Transient ids (t<n>) name one-shot results and nothing else (ids are canonical by now).
  for (const auto& index : desc.index_exports()) {
    if (one_shot && !IsTransient(index.id())) {
      return Invalid("index export " + index.id() +
                     ": a ONE_SHOT_READ dataflow exports transient ids (t<n>) only: its result "
                     "is never maintained and lives until it is dropped");
    }
    if (!one_shot && IsTransient(index.id())) {
      return Invalid("index export " + index.id() +
                     ": a transient id (t<n>) names a one-shot result; a MAINTAINED dataflow "
                     "exports u<n> or s<n> ids (or send class ONE_SHOT_READ with until = as_of "
                     "+ 1)");
    }
  }

  if (created.empty()) {
    return Invalid("the dataflow creates nothing (no source import, build or index export)");
  }
  // Only an index export makes a maintained dataflow readable — and droppable: AllowCompaction
  // with the empty frontier names an export. Without one it would compute forever, unseen.
  if (desc.index_exports().empty()) {
    return Invalid("the dataflow exports no index: nothing could read it or ever drop it");
  }
  // Every index takes a registry slot in each worker's row (DESIGN §4): past the capacity the
  // runtime could not publish it.
  if (index_capacity_ != 0 &&
      catalog.indexes().size() + static_cast<std::size_t>(desc.index_exports_size()) >
          index_capacity_) {
    return Status::ResourceExhausted(
        "the replica has room for " + std::to_string(index_capacity_) +
        " indexes (--slots-per-row) and maintains " + std::to_string(catalog.indexes().size()) +
        "; drop one first, or restart the replica with a larger --slots-per-row");
  }

  *created_out = std::move(created);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// The one per-command switch

Status Validator::Check(const pb::Command& command, Sender sender, const Catalog& catalog,
                        std::map<std::string, pb::Schema>* created) const {
  const bool controller = sender == Sender::kController;
  switch (command.kind_case()) {
    case pb::Command::KIND_NOT_SET:
      return Invalid("command has no kind");
    case pb::Command::kHello:
      return CheckHello(command.hello());
    case pb::Command::kPeek:
      return CheckPeek(catalog, command.peek());
    case pb::Command::kCancelPeek:
      return CheckUuid(command.cancel_peek().uuid());
    case pb::Command::kSubscribe:
      return CheckSubscribe(catalog, command.subscribe());
    case pb::Command::kCancelSubscribe:
      return CheckUuid(command.cancel_subscribe().uuid());
    case pb::Command::kGoodbye:
      return Status::Ok();
    case pb::Command::kWriteTable:
      if (sender == Sender::kObserver) {
        return Invalid(
            "observer sessions are read-only: they may send only Peek, CancelPeek, Subscribe, "
            "CancelSubscribe and Goodbye; say Hello with observer: true and writer: true to write "
            "tables");
      }
      return CheckWriteTable(catalog, command.write_table());
    // The controller's only:
    case pb::Command::kCreateInstance:
      if (!controller) break;
      return CheckParamNames(command.create_instance().config().params());
    case pb::Command::kUpdateConfiguration:
      if (!controller) break;
      return CheckParamNames(command.update_configuration().params());
    case pb::Command::kCreateDataflow:
      if (!controller) break;
      return CheckCreateDataflow(catalog, command.create_dataflow().desc(), created);
    case pb::Command::kSchedule:
      if (!controller) break;
      return CheckKnownId(catalog, command.schedule().id());
    case pb::Command::kAllowWrites:
      if (!controller) break;
      return CheckKnownId(catalog, command.allow_writes().id());
    case pb::Command::kAllowCompaction:
      if (!controller) break;
      return CheckAllowCompaction(catalog, command.allow_compaction());
    case pb::Command::kInitializationComplete:
      if (!controller) break;
      return Status::Ok();
  }
  return Invalid(sender == Sender::kWriter
                     ? "writer sessions may only read and write tables: they may send only "
                       "Peek, CancelPeek, Subscribe, CancelSubscribe, WriteTable and "
                       "Goodbye (send Hello without observer to control the replica)"
                     : "observer sessions are read-only: they may send only Peek, "
                       "CancelPeek, Subscribe, CancelSubscribe and Goodbye (send Hello "
                       "without observer to control the replica)");
}

Status Validator::Validate(const pb::Command& command) {
  if (!hello_seen_ && !command.has_hello() && command.kind_case() != pb::Command::KIND_NOT_SET) {
    return Status::FailedPrecondition(Describe(command) + ": refused before the first Hello");
  }
  std::map<std::string, pb::Schema> created;  // by a CreateDataflow
  if (Status why = Check(command, Sender::kController, catalog_, &created); !why.ok()) {
    return Status(why.code(), Describe(command) + ": " + why.message());
  }
  // Accepted: what it changes, it changes now.
  if (command.has_hello() && !command.hello().observer()) {  // an observer's starts no epoch
    hello_seen_ = true;
    catalog_.Clear();
  } else if (command.has_create_dataflow()) {
    catalog_.Add(command.create_dataflow().desc(), std::move(created));
  } else if (command.has_allow_compaction()) {
    catalog_.AllowCompaction(command.allow_compaction().id(),
                             command.allow_compaction().frontier());
  }
  return Status::Ok();
}

Status Validator::ValidateObserver(const pb::Command& command, bool writer) const {
  return ValidateObserver(command, writer, catalog_);
}

Status Validator::ValidateObserver(const pb::Command& command, bool writer,
                                   const Catalog& catalog) const {
  const Status why =
      Check(command, writer ? Sender::kWriter : Sender::kObserver, catalog, /*created=*/nullptr);
  if (why.ok()) return why;
  return Status(why.code(), Describe(command) + ": " + why.message());
}

}  // namespace tandem::ipc
