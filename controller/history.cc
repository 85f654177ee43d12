#include "controller/history.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/global_id.h"
#include "ipc/model.h"
#include "ipc/plan_typing.h"

namespace tandem::controller {

namespace {

std::set<std::string> DroppedIds(const std::vector<pb::Command>& commands) {
  std::set<std::string> dropped;
  for (const auto& c : commands) {
    if (ipc::IsDrop(c)) dropped.insert(c.allow_compaction().id());
  }
  return dropped;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// History

struct History::Lock {
  explicit Lock(int fd) : fd(fd) {}
  ~Lock() { close(fd); }  // releases the record lock (nothing else in this process opens it)
  int fd;
};

Result<History> History::Load(const std::string& path, Access access) {
  History h;
  h.path_ = path;
  const std::string lock_path = path + ".lock";
  // A reader needs only to read the lock file (a user who may only read the state directory can
  // still peek); one that cannot open it at all reads without it — Save replaces the state file
  // whole (rename), so what it reads is some writer's whole file either way.
  int fd = access == Access::kRead ? open(lock_path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 && access == Access::kWrite) {
    return Status::Unavailable("cannot open the state lock " + lock_path + ": " +
                               std::strerror(errno));
  }
  auto lock = fd >= 0 ? std::make_shared<const Lock>(fd) : nullptr;
  struct flock want {};
  want.l_type = access == Access::kWrite ? F_WRLCK : F_RDLCK;
  want.l_whence = SEEK_SET;  // l_start 0, l_len 0: the whole file
  if (lock && fcntl(fd, F_SETLK, &want) != 0) {
    if (errno != EACCES && errno != EAGAIN) {
      return Status::Unavailable("cannot lock the state lock " + lock_path + ": " +
                                 std::strerror(errno));
    }
    struct flock holder = want;
    const bool known = fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
    const std::string who = known ? "another tandem-ctl (pid " + std::to_string(holder.l_pid) + ")"
                                  : "another tandem-ctl";
    const std::string doing = known && holder.l_type == F_RDLCK ? " is reading the state file "
                                                                : " is changing the state file ";
    return Status::Unavailable(who + doing + path +
                               "; run one at a time or pass a different --state");
  }
  if (access == Access::kWrite) h.lock_ = std::move(lock);
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
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;  // blank
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
  if (!lock_) {
    return Status::FailedPrecondition("the state file " + path_ +
                                      " was opened read-only (by a command that only reads it)");
  }
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
        for (const auto& id : ipc::CreatedIds(d)) gone.insert(id);
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
      for (const auto& id : ipc::CreatedIds(c.create_dataflow().desc())) ids.insert(id);
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
      for (const auto& id : ipc::CreatedIds(c.create_dataflow().desc())) consider(id);
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
    for (const auto& b : d.objects_to_build()) {
      // The supervisor accepted these plans; an empty schema only if that build's was older.
      auto schema = ipc::PlanSchema(b.plan(), env);
      env[b.id()] = schema.ok() ? *std::move(schema) : pb::Schema();
    }
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

std::vector<std::pair<std::string, std::vector<std::uint32_t>>> History::IndexesOn(
    const std::string& on) const {
  const std::set<std::string> dropped = DroppedIds(commands_);
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> out;
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow() || IsPendingSource(c)) continue;
    for (const auto& e : c.create_dataflow().desc().index_exports()) {
      if (e.on() == on && !dropped.count(e.id())) {
        out.emplace_back(e.id(), std::vector<std::uint32_t>(e.key().begin(), e.key().end()));
      }
    }
  }
  return out;
}

std::optional<std::string> History::SourceIndexId(const std::string& source) {
  const auto id = GlobalId::Parse(source);
  if (!id || id->kind() != GlobalId::Kind::kUser || id->ToString() != source) return std::nullopt;
  return GlobalId::System(id->number()).ToString();
}

std::optional<std::string> History::SourceIndex(const std::string& source) const {
  const auto index = SourceIndexId(source);
  if (!index) return std::nullopt;
  const std::set<std::string> dropped = DroppedIds(commands_);
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow() || IsPendingSource(c)) continue;
    const auto& d = c.create_dataflow().desc();
    const bool has_source = std::any_of(d.source_imports().begin(), d.source_imports().end(),
                                        [&](const auto& s) { return s.id() == source; });
    for (const auto& e : d.index_exports()) {
      if (has_source && e.id() == *index && e.on() == source && !dropped.count(e.id())) {
        return e.id();
      }
    }
  }
  return std::nullopt;
}

std::uint64_t History::ReadableFrom(const std::string& id) const {
  std::uint64_t from = 0;
  for (const auto& c : commands_) {
    if (c.has_create_dataflow()) {
      const auto& d = c.create_dataflow().desc();
      for (const auto& e : d.index_exports()) {
        if (e.id() == id && !d.as_of().elements().empty()) from = d.as_of().elements(0);
      }
    }
    if (c.has_allow_compaction() && c.allow_compaction().id() == id &&
        !c.allow_compaction().frontier().elements().empty()) {
      from = std::max(from, c.allow_compaction().frontier().elements(0));
    }
  }
  return from;
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
    const auto ids = ipc::CreatedIds(d);
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

std::optional<pb::SourceImport> History::LiveSource(const std::string& id) const {
  if (!LiveIds().count(id)) return std::nullopt;
  std::optional<pb::SourceImport> found;  // the last definition: an id dropped and made again
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow() || IsPendingSource(c)) continue;
    for (const auto& s : c.create_dataflow().desc().source_imports()) {
      if (s.id() == id) found = s;
    }
  }
  return found;
}

std::map<std::string, History::SourceFile> History::SourceFiles() const {
  const std::set<std::string> live = LiveIds();
  std::map<std::string, SourceFile> out;
  for (const auto& c : commands_) {
    if (!c.has_create_dataflow()) continue;
    for (const auto& s : c.create_dataflow().desc().source_imports()) {
      if (!live.count(s.id())) continue;
      if (s.source().has_log()) out[s.id()] = {"log", s.source().log().path()};
      if (s.source().has_csv()) out[s.id()] = {"CSV", s.source().csv().path()};
      if (s.source().has_json_lines()) out[s.id()] = {"JSON-lines", s.source().json_lines().path()};
    }
  }
  return out;
}

pb::Command Canonical(const pb::Command& command) {
  auto back = ipc::CommandFromJson(ipc::ToJson(command));
  return back.ok() ? *back : command;
}

std::string JoinIds(const std::vector<std::string>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == ids.size() ? " and " : ", ") + ids[i];
  }
  return out;
}

}  // namespace tandem::controller
