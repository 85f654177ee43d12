#include "ipc/validate.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <utility>

#include "base/global_id.h"
#include "ipc/plan_typing.h"
#include "ipc/reasons.h"
#include "ipc/source_schema.h"
#include "ipc/table_write.h"

namespace tandem::ipc {
namespace {

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

// What a plan of one dataflow may read by name: its source imports, its index imports, the
// collections those indexes are on, and the builds before it.
using Scope = std::map<std::string, pb::Schema>;

// ---------------------------------------------------------------------------------------------
// Dataflow pieces

Status CheckProtocolVersion(const pb::Hello& hello) {
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

}  // namespace

// ---------------------------------------------------------------------------------------------

Status Validator::Validate(const pb::Command& command) {
  Status why;
  switch (command.kind_case()) {
    case pb::Command::KIND_NOT_SET:
      return Invalid(Describe(command) + ": command has no kind");
    case pb::Command::kHello:
      why = CheckProtocolVersion(command.hello());
      if (!why.ok()) break;
      if (command.hello().observer()) return why;  // an observer's Hello starts no epoch
      hello_seen_ = true;
      collections_.clear();
      indexes_.clear();
      origins_.clear();
      dataflows_.clear();
      allowed_compaction_.clear();
      tables_.clear();
      return Status::Ok();
    default:
      if (!hello_seen_) {
        return Status::FailedPrecondition(Describe(command) + ": refused before the first Hello");
      }
      break;
  }
  switch (command.kind_case()) {
    case pb::Command::kCreateInstance:
      why = CheckParamNames(command.create_instance().config().params());
      break;
    case pb::Command::kUpdateConfiguration:
      why = CheckParamNames(command.update_configuration().params());
      break;
    case pb::Command::kCreateDataflow:
      why = ValidateCreateDataflow(command.create_dataflow().desc());
      break;
    case pb::Command::kSchedule:
      if (collections_.count(command.schedule().id()) == 0) {
        why = Status::NotFound("unknown id " + Quoted(command.schedule().id()));
      }
      break;
    case pb::Command::kAllowWrites:
      if (collections_.count(command.allow_writes().id()) == 0) {
        why = Status::NotFound("unknown id " + Quoted(command.allow_writes().id()));
      }
      break;
    case pb::Command::kAllowCompaction:
      why = ValidateAllowCompaction(command.allow_compaction());
      break;
    case pb::Command::kPeek:
      why = ValidatePeek(command.peek());
      break;
    case pb::Command::kWriteTable:
      why = ValidateWriteTable(command.write_table());
      break;
    case pb::Command::kCancelPeek:
      if (command.cancel_peek().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kSubscribe:
      why = ValidateSubscribe(command.subscribe());
      break;
    case pb::Command::kCancelSubscribe:
      if (command.cancel_subscribe().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kHello:
    case pb::Command::kInitializationComplete:
    case pb::Command::kGoodbye:
    case pb::Command::KIND_NOT_SET:
      break;
  }
  if (why.ok()) return why;
  return Status(why.code(), Describe(command) + ": " + why.message());
}

Status Validator::ValidateObserver(const pb::Command& command, bool writer) const {
  Status why;
  switch (command.kind_case()) {
    case pb::Command::kHello:
      why = CheckProtocolVersion(command.hello());
      break;
    case pb::Command::kPeek:
      why = ValidatePeek(command.peek());
      break;
    case pb::Command::kCancelPeek:
      if (command.cancel_peek().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kSubscribe:
      why = ValidateSubscribe(command.subscribe());
      break;
    case pb::Command::kCancelSubscribe:
      if (command.cancel_subscribe().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kGoodbye:
      break;
    case pb::Command::kWriteTable:
      if (writer) {
        why = ValidateWriteTable(command.write_table());
      } else {
        why = Invalid(
            "observer sessions are read-only: they may send only Peek, CancelPeek, Subscribe, "
            "CancelSubscribe and Goodbye; say Hello with observer: true and writer: true to write "
            "tables");
      }
      break;
    case pb::Command::KIND_NOT_SET:
      return Invalid(Describe(command) + ": command has no kind");
    default:
      why = Invalid(writer ? "writer sessions may only read and write tables: they may send only "
                             "Peek, CancelPeek, Subscribe, CancelSubscribe, WriteTable and "
                             "Goodbye (send Hello without observer to control the replica)"
                           : "observer sessions are read-only: they may send only Peek, "
                             "CancelPeek, Subscribe, CancelSubscribe and Goodbye (send Hello "
                             "without observer to control the replica)");
      break;
  }
  if (why.ok()) return why;
  return Status(why.code(), Describe(command) + ": " + why.message());
}

namespace {

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

// The index exports of a dataflow: new ids, on a collection of the dataflow, keys in range.
Status CheckIndexExports(const pb::DataflowDescription& desc,
                         const std::map<std::string, pb::Schema>& collections, Scope* scope_out,
                         std::map<std::string, pb::Schema>* created,
                         std::map<std::string, Validator::IndexInfo>* new_indexes) {
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
    new_indexes->emplace(index.id(), Validator::IndexInfo{index.on(),
                                                          {index.key().begin(), index.key().end()},
                                                          desc.as_of().elements(0)});
  }

  return Status::Ok();
}

// The index imports of a dataflow: each names a known index of the epoch with the same `on`,
// key and schema, once; their ids and `on` collections join the dataflow's scope.
Status CheckIndexImports(const pb::DataflowDescription& desc,
                         const std::map<std::string, pb::Schema>& collections,
                         const std::map<std::string, Validator::IndexInfo>& indexes,
                         Scope* scope_out) {
  Scope& scope = *scope_out;
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

Status Validator::ValidateCreateDataflow(const pb::DataflowDescription& desc) {
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
    TANDEM_RETURN_IF_ERROR(CheckNewId(import.id(), "source import", collections_, scope));
    Status source = CheckSourceImport(import, as_of, segment_bytes_);
    if (source.ok() && import.source().has_table() && !data_dir_) {
      source =
          Status::FailedPrecondition("a table needs the replica's --data-dir (none was given)");
    }
    if (!source.ok()) return Within("source import " + import.id(), source);
    scope.emplace(import.id(), import.schema());
  }

  TANDEM_RETURN_IF_ERROR(CheckIndexImports(desc, collections_, indexes_, &scope));

  // A maintained importer reads the index from as_of on, forever: below the frontier the
  // controller allowed, the index may already be compacted and the dataflow would be wrong at
  // every time. (A one-shot there is accepted: the runtime answers its peeks Error "compacted".)
  if (!one_shot) {
    for (const auto& import : desc.index_imports()) {
      // Where the index's since may be: its own as_of, or past it as far as compaction was
      // allowed in this epoch. (An earlier controller may have compacted the same arrangement
      // further: the runtime then makes such an import an error of the dataflow — a dataflow
      // kept across the reconnect is not new, and held the index where it needed it.)
      const IndexInfo& index = indexes_.at(import.id());
      if (as_of < index.as_of) {
        return Invalid("index import " + import.id() + ": as_of " + TimeText(as_of) +
                       " is before the as_of " + TimeText(index.as_of) + " of " + import.id() +
                       " (its since starts there), so a maintained dataflow would read compacted "
                       "data: send as_of >= " +
                       TimeText(index.as_of));
      }
      const auto allowed = allowed_compaction_.find(import.id());
      if (allowed != allowed_compaction_.end() && as_of < allowed->second) {
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
    TANDEM_RETURN_IF_ERROR(CheckNewId(build.id(), "build", collections_, scope));
    auto schema = PlanChecker(scope, collections_).Check(build.plan());
    if (!schema.ok()) return Within("build " + build.id(), schema.status());
    scope.emplace(build.id(), *schema);
    created.emplace(build.id(), std::move(schema).value());
  }

  std::map<std::string, IndexInfo> new_indexes;
  TANDEM_RETURN_IF_ERROR(CheckIndexExports(desc, collections_, &scope, &created, &new_indexes));
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
      indexes_.size() + static_cast<std::size_t>(desc.index_exports_size()) > index_capacity_) {
    return Status::ResourceExhausted(
        "the replica has room for " + std::to_string(index_capacity_) +
        " indexes (--slots-per-row) and maintains " + std::to_string(indexes_.size()) +
        "; drop one first, or restart the replica with a larger --slots-per-row");
  }

  Record(desc, std::move(created), std::move(new_indexes));
  return Status::Ok();
}

void Validator::Record(const pb::DataflowDescription& desc,
                       std::map<std::string, pb::Schema> created,
                       std::map<std::string, IndexInfo> new_indexes) {
  const std::uint64_t dataflow = next_dataflow_++;
  Dataflow& members = dataflows_[dataflow];
  members.debug_name = desc.debug_name();
  for (const auto& import : desc.index_imports()) members.imports.push_back(import.id());
  if (desc.class_() == pb::ONE_SHOT_READ) members.one_shot_as_of = desc.as_of().elements(0);
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
  }
  for (auto& [id, schema] : created) collections_.insert_or_assign(id, std::move(schema));
  for (auto& [id, info] : new_indexes) indexes_.insert_or_assign(id, std::move(info));
}

Status Validator::ValidateSubscribe(const pb::Subscribe& subscribe) const {
  if (subscribe.uuid().empty()) return Invalid("uuid is empty");
  if (subscribe.uuid().size() > WriteBounds::kMaxUuidBytes) {
    return Invalid("uuid is " + std::to_string(subscribe.uuid().size()) + " bytes, at most " +
                   std::to_string(WriteBounds::kMaxUuidBytes));
  }
  if (indexes_.count(subscribe.id()) == 0) {
    if (collections_.count(subscribe.id()) > 0) {
      return Invalid(Quoted(subscribe.id()) + " is not an index (subscribes read indexes)");
    }
    return Status::NotFound("unknown index " + Quoted(subscribe.id()));
  }
  if (const auto as_of = OneShotAsOf(subscribe.id())) {
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

Status Validator::ValidatePeek(const pb::Peek& peek) const {
  if (peek.uuid().empty()) return Invalid("uuid is empty");
  const auto index = indexes_.find(peek.id());
  if (index == indexes_.end()) {
    if (collections_.count(peek.id()) > 0) {
      return Invalid(Quoted(peek.id()) + " is not an index (peeks read indexes)");
    }
    return Status::NotFound("unknown index " + Quoted(peek.id()));
  }
  TANDEM_RETURN_IF_ERROR(CheckTime(peek.timestamp(), "timestamp"));
  // A one-shot result is computed at its as_of only (until = as_of + 1): no other time is exact.
  if (const auto as_of = OneShotAsOf(peek.id()); as_of && peek.timestamp() != *as_of) {
    return Invalid(peek.id() + " is a one-shot result, readable only at time " + TimeText(*as_of));
  }
  const pb::Schema& schema = collections_.at(peek.id());
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

Status Validator::ValidateWriteTable(const pb::WriteTable& write) const {
  if (write.uuid().empty()) return Invalid("uuid is empty (it is the write's idempotency key)");
  if (write.uuid().size() > WriteBounds::kMaxUuidBytes) {
    return Invalid("uuid of " + std::to_string(write.uuid().size()) + " bytes is over the bound " +
                   std::to_string(WriteBounds::kMaxUuidBytes) + " bytes");
  }
  const std::string& id = write.id();
  const auto table = tables_.find(id);
  if (table == tables_.end()) {
    const auto origin = origins_.find(id);
    if (origin == origins_.end()) return Status::NotFound("unknown table " + Quoted(id));
    const std::string what = origin->second.kind == Origin::kIndex ? "an index"
                             : origin->second.kind == Origin::kView
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

Status Validator::ValidateAllowCompaction(const pb::AllowCompaction& command) {
  const std::string& id = command.id();
  if (collections_.count(id) == 0) return Status::NotFound("unknown id " + Quoted(id));
  const Origin origin = origins_.at(id);  // a copy: a drop erases it
  if (origin.kind != Origin::kIndex) {
    // The runtimes would accept it and do nothing: only an index has a compaction frontier, and
    // a dataflow goes away when its last index is dropped.
    return Invalid(id + " is a " + (origin.kind == Origin::kSource ? "source" : "view") +
                   ", not an index: only indexes can be compacted or dropped (the dataflow that "
                   "defines it exports " +
                   IdList(dataflows_.at(origin.dataflow).live_exports) + ")");
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
    // A one-shot result has one time and nothing to compact: accepted, it changes nothing.
    if (OneShotAsOf(id)) return Status::Ok();
    // Compaction frontiers only rise: a lower one is accepted (the runtimes ignore it too).
    auto [allowed, inserted] = allowed_compaction_.try_emplace(id, time);
    if (!inserted && allowed->second < time) allowed->second = time;
    return Status::Ok();
  }
  // An importer reads the index's batches in place until it is dropped (DESIGN §8): the
  // controller drops the importers first.
  std::string importers;
  std::vector<std::string> to_drop;
  for (const auto& [number, importer] : dataflows_) {
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
  // Drop the index. Once a dataflow has no index left the runtimes drop all of it, so its
  // sources and views are forgotten with its last index (and their ids may be created again).
  collections_.erase(id);
  indexes_.erase(id);
  origins_.erase(id);
  allowed_compaction_.erase(id);
  auto dataflow = dataflows_.find(origin.dataflow);
  std::erase(dataflow->second.live_exports, id);
  if (dataflow->second.live_exports.empty()) {
    for (const auto& other : dataflow->second.others) {
      collections_.erase(other);
      origins_.erase(other);
      tables_.erase(other);
    }
    dataflows_.erase(dataflow);
  }
  return Status::Ok();
}

std::vector<std::string> Validator::ImportersOf(const std::string& index) const {
  std::vector<std::string> exports;
  for (const auto& [number, dataflow] : dataflows_) {
    if (std::find(dataflow.imports.begin(), dataflow.imports.end(), index) !=
        dataflow.imports.end()) {
      exports.insert(exports.end(), dataflow.live_exports.begin(), dataflow.live_exports.end());
    }
  }
  return exports;
}

std::optional<std::uint64_t> Validator::OneShotAsOf(const std::string& index) const {
  const auto origin = origins_.find(index);
  if (origin == origins_.end() || origin->second.kind != Origin::kIndex) return std::nullopt;
  return dataflows_.at(origin->second.dataflow).one_shot_as_of;
}

}  // namespace tandem::ipc
