#include "tools/ctl/ctl.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "base/global_id.h"
#include "base/json.h"
#include "ipc/rows.h"
#include "tools/common/format.h"

namespace tandem::ctl {

namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool IsDrop(const pb::Command& c) {
  return c.has_allow_compaction() && c.allow_compaction().frontier().elements().empty();
}

// Ids a CreateDataflow creates.
std::vector<std::string> CreatedIds(const pb::DataflowDescription& d) {
  std::vector<std::string> ids;
  for (const auto& s : d.source_imports()) ids.push_back(s.id());
  for (const auto& b : d.objects_to_build()) ids.push_back(b.id());
  for (const auto& e : d.index_exports()) ids.push_back(e.id());
  return ids;
}

std::set<std::string> DroppedIds(const std::vector<pb::Command>& commands) {
  std::set<std::string> dropped;
  for (const auto& c : commands) {
    if (IsDrop(c)) dropped.insert(c.allow_compaction().id());
  }
  return dropped;
}

pb::Column MakeColumn(const std::string& name, pb::ScalarType type, bool nullable) {
  pb::Column c;
  c.set_name(name);
  c.set_type(type);
  c.set_nullable(nullable);
  return c;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// History

struct History::Lock {
  explicit Lock(int fd) : fd(fd) {}
  ~Lock() { close(fd); }  // releases the flock
  int fd;
};

Result<History> History::Load(const std::string& path) {
  History h;
  h.path_ = path;
  const std::string lock_path = path + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot open the state lock " + lock_path + ": " +
                               std::strerror(errno));
  }
  h.lock_ = std::make_shared<const Lock>(fd);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    (void)!pread(fd, holder, sizeof holder - 1, 0);
    return Status::Unavailable("another tandem-ctl (pid " + std::string(Trim(holder)) +
                               ") is using the state file " + path +
                               "; run one at a time or pass a different --state");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    return Status::Unavailable("cannot write the state lock " + lock_path);
  }
  std::ifstream in(path);
  if (!in) {
    if (std::filesystem::exists(path)) {
      return Status::Unavailable("cannot read the state file " + path);
    }
    return h;
  }
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (Trim(line).empty()) continue;
    auto c = ipc::CommandFromJson(line);
    if (!c.ok()) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) + ": " +
                                     c.status().message());
    }
    h.commands_.push_back(std::move(*c));
  }
  return h;
}

Status History::Save() const {
  if (!lock_)
    return Status::FailedPrecondition("the state file " + path_ + " was opened read-only");
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::Unavailable("cannot write the state file " + tmp);
    for (const auto& c : commands_) out << ipc::ToJson(c) << '\n';
    out.flush();
    if (!out) return Status::Unavailable("cannot write the state file " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_, ec);
  if (ec)
    return Status::Unavailable("cannot replace the state file " + path_ + ": " + ec.message());
  return Status::Ok();
}

std::vector<pb::Command> History::Replay() const {
  // A drop already applied by a live replica must not be repeated (the dataflow is kept by
  // reconciliation, its export already gone), nor may a compaction of a dropped id.
  const std::set<std::string> dropped = DroppedIds(commands_);
  std::vector<pb::Command> out;
  for (const auto& c : commands_) {
    if (IsPendingSource(c)) continue;
    if (c.has_allow_compaction() && dropped.count(c.allow_compaction().id())) continue;
    out.push_back(c);
  }
  return out;
}

void History::Append(const pb::Command& command) { commands_.push_back(command); }

void History::Prune() {
  const std::set<std::string> dropped = DroppedIds(commands_);
  std::set<std::string> gone;  // ids of pruned dataflows
  std::vector<pb::Command> kept;
  for (const auto& c : commands_) {
    if (c.has_create_dataflow() && !IsPendingSource(c)) {
      const auto& d = c.create_dataflow().desc();
      const bool all_dropped =
          !d.index_exports().empty() &&
          std::all_of(d.index_exports().begin(), d.index_exports().end(),
                      [&](const auto& e) { return dropped.count(e.id()) > 0; });
      if (all_dropped) {
        for (const auto& id : CreatedIds(d)) gone.insert(id);
        continue;
      }
    }
    kept.push_back(c);
  }
  commands_.clear();
  for (auto& c : kept) {
    if (c.has_allow_compaction() && gone.count(c.allow_compaction().id())) continue;
    commands_.push_back(std::move(c));
  }
}

bool History::IsPendingSource(const pb::Command& command) {
  return command.has_create_dataflow() &&
         command.create_dataflow().desc().debug_name() == kPendingSource;
}

std::optional<pb::SourceImport> History::PendingSource(const std::string& id) const {
  for (const auto& c : commands_) {
    if (!IsPendingSource(c)) continue;
    for (const auto& s : c.create_dataflow().desc().source_imports()) {
      if (s.id() == id) return s;
    }
  }
  return std::nullopt;
}

void History::RemovePendingSource(const std::string& id) {
  std::erase_if(commands_, [&](const pb::Command& c) {
    return IsPendingSource(c) && c.create_dataflow().desc().source_imports_size() == 1 &&
           c.create_dataflow().desc().source_imports(0).id() == id;
  });
}

std::set<std::string> History::LiveIds() const {
  std::set<std::string> ids;
  for (const auto& c : commands_) {
    if (c.has_create_dataflow()) {
      for (const auto& id : CreatedIds(c.create_dataflow().desc())) ids.insert(id);
    }
  }
  for (const auto& id : DroppedIds(commands_)) ids.erase(id);
  return ids;
}

std::string History::NextFreeId(const std::set<std::string>& also_taken) const {
  std::uint64_t max = 0;
  auto consider = [&](const std::string& id) {
    if (id.size() < 2 || id[0] != 'u') return;
    std::uint64_t n = 0;
    const auto r = std::from_chars(id.data() + 1, id.data() + id.size(), n);
    if (r.ec == std::errc() && r.ptr == id.data() + id.size()) max = std::max(max, n);
  };
  for (const auto& c : commands_) {
    if (c.has_create_dataflow()) {
      for (const auto& id : CreatedIds(c.create_dataflow().desc())) consider(id);
    }
    if (c.has_allow_compaction()) consider(c.allow_compaction().id());
  }
  for (const auto& id : also_taken) consider(id);
  return "u" + std::to_string(max + 1);
}

std::optional<CollectionInfo> History::Lookup(const std::string& id) const {
  std::optional<CollectionInfo> found;
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow()) continue;
    const auto& d = c.create_dataflow().desc();
    std::map<std::string, pb::Schema> env;
    for (const auto& s : d.source_imports()) env[s.id()] = s.schema();
    for (const auto& i : d.index_imports()) env[i.on()] = env[i.id()] = i.schema();
    for (const auto& b : d.objects_to_build()) env[b.id()] = PlanSchema(b.plan(), env);
    for (const auto& [name, schema] : env) {
      if (name == id) found = CollectionInfo{schema, false, "", {}};
    }
    for (const auto& e : d.index_exports()) {
      if (e.id() != id) continue;
      CollectionInfo info;
      if (auto it = env.find(e.on()); it != env.end()) info.schema = it->second;
      info.is_index = true;
      info.on = e.on();
      info.key.assign(e.key().begin(), e.key().end());
      found = info;
    }
  }
  return found;
}

std::string History::IndexFor(const std::string& id) const {
  if (auto info = Lookup(id); info && info->is_index) return id;
  const std::set<std::string> dropped = DroppedIds(commands_);
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow()) continue;
    for (const auto& e : c.create_dataflow().desc().index_exports()) {
      if (e.on() == id && !dropped.count(e.id())) return e.id();
    }
  }
  return id;
}

History::IdKind History::KindOf(const std::string& id) const {
  IdKind out;
  if (PendingSource(id)) {
    out.kind = IdKind::kPendingSource;
    return out;
  }
  if (!LiveIds().count(id)) return out;
  const std::set<std::string> dropped = DroppedIds(commands_);
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow() || IsPendingSource(c)) continue;
    const auto& d = c.create_dataflow().desc();
    const auto ids = CreatedIds(d);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    for (const auto& e : d.index_exports()) {
      if (!dropped.count(e.id())) out.indexes.push_back(e.id());
    }
    if (std::any_of(d.index_exports().begin(), d.index_exports().end(),
                    [&](const auto& e) { return e.id() == id; })) {
      out.kind = IdKind::kIndex;
    } else if (std::any_of(d.source_imports().begin(), d.source_imports().end(),
                           [&](const auto& x) { return x.id() == id; })) {
      out.kind = IdKind::kSource;
    } else {
      out.kind = IdKind::kView;
    }
  }
  return out;
}

std::set<std::string> History::LiveIndexes() const {
  const std::set<std::string> dropped = DroppedIds(commands_);
  std::set<std::string> out;
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow() || IsPendingSource(c)) continue;
    for (const auto& e : c.create_dataflow().desc().index_exports()) {
      if (!dropped.count(e.id())) out.insert(e.id());
    }
  }
  return out;
}

std::map<std::string, std::string> History::LogSources() const {
  const std::set<std::string> live = LiveIds();
  std::map<std::string, std::string> out;
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow()) continue;
    for (const auto& s : c.create_dataflow().desc().source_imports()) {
      if (s.source().has_log() && live.count(s.id())) out[s.id()] = s.source().log().path();
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Schemas, columns, datums

pb::Schema PlanSchema(const pb::Plan& plan, const std::map<std::string, pb::Schema>& env) {
  switch (plan.kind_case()) {
    case pb::Plan::kGet: {
      auto it = env.find(plan.get().id());
      return it == env.end() ? pb::Schema() : it->second;
    }
    case pb::Plan::kMfp: {
      pb::Schema in = PlanSchema(plan.mfp().input(), env);
      const auto& mfp = plan.mfp().mfp();
      for (int i = 0; i < mfp.map_size(); ++i) {
        const auto& e = mfp.map(i);
        if (e.has_column() && static_cast<int>(e.column()) < in.columns_size()) {
          *in.add_columns() = in.columns(static_cast<int>(e.column()));
        } else if (e.has_literal()) {
          *in.add_columns() = MakeColumn("", e.literal().type(), true);
        } else {
          *in.add_columns() = MakeColumn("", pb::SCALAR_TYPE_UNSPECIFIED, true);
        }
        in.mutable_columns(in.columns_size() - 1)
            ->set_name("c" + std::to_string(in.columns_size() - 1));
      }
      if (mfp.projection().empty()) return in;
      pb::Schema out;
      for (std::uint32_t p : mfp.projection()) {
        if (static_cast<int>(p) < in.columns_size())
          *out.add_columns() = in.columns(static_cast<int>(p));
      }
      return out;
    }
    case pb::Plan::kReduce: {
      const pb::Schema in = PlanSchema(plan.reduce().input(), env);
      pb::Schema out;
      for (std::uint32_t g : plan.reduce().group_key()) {
        if (static_cast<int>(g) < in.columns_size())
          *out.add_columns() = in.columns(static_cast<int>(g));
      }
      for (const auto& a : plan.reduce().aggregates()) {
        const pb::Column* col = static_cast<int>(a.column()) < in.columns_size()
                                    ? &in.columns(static_cast<int>(a.column()))
                                    : nullptr;
        const std::string of = col && !col->name().empty() ? "_" + col->name() : "";
        switch (a.func()) {
          case pb::COUNT:
            *out.add_columns() = MakeColumn("count", pb::INT64, false);
            break;
          case pb::SUM:
            *out.add_columns() =
                MakeColumn("sum" + of, col ? col->type() : pb::SCALAR_TYPE_UNSPECIFIED, true);
            break;
          case pb::MIN:
            *out.add_columns() =
                MakeColumn("min" + of, col ? col->type() : pb::SCALAR_TYPE_UNSPECIFIED, true);
            break;
          default:
            *out.add_columns() =
                MakeColumn("max" + of, col ? col->type() : pb::SCALAR_TYPE_UNSPECIFIED, true);
            break;
        }
      }
      return out;
    }
    case pb::Plan::kUnion:
      return plan.union_().inputs().empty() ? pb::Schema()
                                            : PlanSchema(plan.union_().inputs(0), env);
    case pb::Plan::kDistinct:
      return PlanSchema(plan.distinct().input(), env);
    default:
      return pb::Schema();
  }
}

std::string TypeName(pb::ScalarType type) {
  switch (type) {
    case pb::BOOL:
      return "bool";
    case pb::INT64:
      return "int64";
    case pb::FLOAT64:
      return "float64";
    case pb::STRING:
      return "string";
    default:
      return "?";
  }
}

Result<pb::Schema> ParseSchema(const std::string& text) {
  pb::Schema schema;
  if (Trim(text).empty()) return Status::InvalidArgument("the schema is empty");
  for (const std::string& part : Split(text, ',')) {
    const std::string item = Trim(part);
    const auto colon = item.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::InvalidArgument("schema column \"" + item +
                                     "\": expected name:type (types bool, int64, float64, "
                                     "string; a trailing ? makes it nullable)");
    }
    std::string type = item.substr(colon + 1);
    const bool nullable = !type.empty() && type.back() == '?';
    if (nullable) type.pop_back();
    pb::ScalarType t;
    if (type == "bool") {
      t = pb::BOOL;
    } else if (type == "int64") {
      t = pb::INT64;
    } else if (type == "float64") {
      t = pb::FLOAT64;
    } else if (type == "string") {
      t = pb::STRING;
    } else {
      return Status::InvalidArgument("schema column \"" + item + "\": unknown type \"" + type +
                                     "\" (bool, int64, float64, string)");
    }
    *schema.add_columns() = MakeColumn(item.substr(0, colon), t, nullable);
  }
  return schema;
}

Result<std::vector<std::uint32_t>> ParseColumns(const std::string& text, const pb::Schema& schema) {
  std::vector<std::uint32_t> out;
  for (const std::string& part : Split(text, ',')) {
    const std::string item = Trim(part);
    if (item.empty()) return Status::InvalidArgument("empty column in \"" + text + "\"");
    bool found = false;
    for (int i = 0; i < schema.columns_size(); ++i) {
      if (schema.columns(i).name() == item) {
        out.push_back(static_cast<std::uint32_t>(i));
        found = true;
        break;
      }
    }
    if (found) continue;
    std::uint32_t n = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), n);
    if (r.ec != std::errc() || r.ptr != item.data() + item.size()) {
      std::string names;
      for (const auto& c : schema.columns()) names += (names.empty() ? "" : ", ") + c.name();
      return Status::InvalidArgument("unknown column \"" + item + "\"" +
                                     (names.empty() ? "" : " (columns: " + names + ")"));
    }
    out.push_back(n);
  }
  return out;
}

namespace {
tools::ColumnType ColumnTypeOf(const pb::Column* column) {
  tools::ColumnType t;
  if (!column) return t;
  t.name = column->name();
  t.nullable = column->nullable();
  switch (column->type()) {
    case pb::BOOL:
      t.kind = tools::ColumnType::Kind::kBool;
      break;
    case pb::INT64:
      t.kind = tools::ColumnType::Kind::kInt64;
      break;
    case pb::FLOAT64:
      t.kind = tools::ColumnType::Kind::kFloat64;
      break;
    case pb::STRING:
      t.kind = tools::ColumnType::Kind::kString;
      break;
    default:
      t.nullable = true;  // a column whose type the history does not know: take any datum
      break;
  }
  return t;
}
}  // namespace

Result<pb::Datum> ParseDatum(const std::string& text, const pb::Column* column) {
  auto d = tools::ParseDatumText(text, ColumnTypeOf(column));
  if (!d.ok()) return d.status();
  return ipc::ToProto(*d);
}

Result<pb::Row> ParseKey(const std::string& text, const std::vector<const pb::Column*>& columns) {
  auto parts = tools::SplitDatumList(text);
  if (!parts.ok()) return parts.status();
  if (!columns.empty() && parts->size() != columns.size()) {
    std::string names;
    for (const auto* c : columns) {
      names += (names.empty() ? "" : ", ") + (c && !c->name().empty() ? c->name() : "?");
    }
    return Status::InvalidArgument(std::to_string(parts->size()) +
                                   (parts->size() == 1 ? " datum" : " datums") +
                                   ", but the index's key has " + std::to_string(columns.size()) +
                                   " column" + (columns.size() == 1 ? "" : "s") + " (" + names +
                                   "): give one datum per key column, comma-separated");
  }
  pb::Row row;
  for (std::size_t i = 0; i < parts->size(); ++i) {
    auto d = ParseDatum((*parts)[i], columns.empty() ? nullptr : columns[i]);
    if (!d.ok()) return d.status();
    *row.add_datums() = std::move(*d);
  }
  return row;
}

std::string DatumText(const pb::Datum& d) { return tools::DatumText(ipc::FromProto(d)); }

std::string JsonString(const std::string& text) { return JsonQuote(text); }

pb::Command Canonical(const pb::Command& command) {
  auto back = ipc::CommandFromJson(ipc::ToJson(command));
  return back.ok() ? *back : command;
}

std::string RandomHex(int bytes) {
  static std::random_device rd;
  static std::mt19937_64 gen(rd() ^ (static_cast<std::uint64_t>(rd()) << 32));
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < bytes; ++i) {
    const auto b = static_cast<unsigned>(gen() & 0xff);
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

}  // namespace tandem::ctl
