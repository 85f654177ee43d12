#include "frontend/catalog/catalog_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace tandem::frontend {

namespace {

constexpr char kFormatTag[] = "tandem-catalog";

bool SafeByte(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '/' || c == ':';
}

std::string EncodeField(std::string_view s) {
  if (s.empty()) return "-";
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (SafeByte(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> DecodeField(std::string_view s) {
  if (s == "-") return std::string();
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (SafeByte(c)) {
      out += s[i];
      continue;
    }
    if (c != '%' || i + 2 >= s.size()) return std::nullopt;
    const int hi = HexValue(s[i + 1]);
    const int lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string EncodeColumns(const std::vector<std::uint32_t>& cols) {
  if (cols.empty()) return "-";
  std::string out;
  for (auto c : cols) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::optional<std::uint64_t> ParseNumber(std::string_view s) {
  std::uint64_t n = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return n;
}

std::optional<std::vector<std::uint32_t>> DecodeColumns(std::string_view s) {
  std::vector<std::uint32_t> out;
  if (s == "-") return out;
  for (auto part : SplitOn(s, ',')) {
    auto n = ParseNumber(part);
    if (!n || *n > UINT32_MAX) return std::nullopt;
    out.push_back(static_cast<std::uint32_t>(*n));
  }
  return out;
}

std::string EncodeNames(const std::vector<std::string>& names) {
  if (names.empty()) return "-";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + EncodeField(n);
  return out;
}

std::optional<std::vector<std::string>> DecodeNames(std::string_view s) {
  std::vector<std::string> out;
  if (s == "-") return out;
  for (auto part : SplitOn(s, ',')) {
    auto n = DecodeField(part);
    if (!n || n->empty()) return std::nullopt;
    out.push_back(std::move(*n));
  }
  return out;
}

const char* KindWord(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kTable:
      return "table";
    case ObjectKind::kSource:
      return "source";
    case ObjectKind::kView:
      return "view";
    case ObjectKind::kMaterializedView:
      return "materialized-view";
  }
  return "?";
}

std::optional<ObjectKind> KindFromWord(std::string_view w) {
  for (auto k : {ObjectKind::kTable, ObjectKind::kSource, ObjectKind::kView,
                 ObjectKind::kMaterializedView}) {
    if (w == KindWord(k)) return k;
  }
  return std::nullopt;
}

constexpr std::pair<ipc::pb::ScalarType, const char*> kTypeWords[] = {
    {ipc::pb::BOOL, "bool"},
    {ipc::pb::INT16, "int16"},
    {ipc::pb::INT32, "int32"},
    {ipc::pb::INT64, "int64"},
    {ipc::pb::FLOAT32, "float32"},
    {ipc::pb::FLOAT64, "float64"},
    {ipc::pb::NUMERIC, "numeric"},
    {ipc::pb::STRING, "string"},
    {ipc::pb::BYTEA, "bytea"},
    {ipc::pb::DATE, "date"},
    {ipc::pb::TIME, "time"},
    {ipc::pb::TIMESTAMP, "timestamp"},
    {ipc::pb::TIMESTAMPTZ, "timestamptz"},
    {ipc::pb::INTERVAL, "interval"},
    {ipc::pb::UUID, "uuid"},
};

// A column's type and modifiers as one field: "int64", "numeric:10:2", "string:varchar:5".
std::string TypeWord(const CatalogColumn& c) {
  std::string word = "?";
  for (const auto& [type, w] : kTypeWords) {
    if (type == c.type) word = w;
  }
  if (c.type == ipc::pb::NUMERIC && c.mods.precision > 0) {
    word += ":" + std::to_string(c.mods.precision) + ":" + std::to_string(c.mods.scale);
  } else if (c.type == ipc::pb::STRING && c.mods.length > 0) {
    word +=
        std::string(c.mods.blank_padded ? ":char:" : ":varchar:") + std::to_string(c.mods.length);
  }
  return word;
}

// The type and modifiers of a column field (the types a format `version` has), or nothing.
bool TypeFromWord(std::string_view word, std::uint64_t version, CatalogColumn* c) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = word.find(':', start);
    parts.push_back(word.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  bool found = false;
  for (const auto& [type, w] : kTypeWords) {
    if (parts[0] == w) {
      c->type = type;
      found = true;
    }
  }
  const bool old_type = c->type == ipc::pb::BOOL || c->type == ipc::pb::INT64 ||
                        c->type == ipc::pb::FLOAT64 || c->type == ipc::pb::STRING;
  if (!found || (version < 3 && (!old_type || parts.size() > 1))) return false;
  auto number = [](std::string_view text, std::uint32_t max, std::uint32_t* out) {
    std::uint32_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || v > max) {
      return false;
    }
    *out = v;
    return true;
  };
  c->mods = TypeMods{};
  if (parts.size() == 1) return true;
  if (c->type == ipc::pb::NUMERIC && parts.size() == 3) {
    return number(parts[1], 38, &c->mods.precision) && c->mods.precision > 0 &&
           number(parts[2], c->mods.precision, &c->mods.scale);
  }
  if (c->type == ipc::pb::STRING && parts.size() == 3 &&
      (parts[1] == "varchar" || parts[1] == "char")) {
    c->mods.blank_padded = parts[1] == "char";
    return number(parts[2], 10485760, &c->mods.length) && c->mods.length > 0;
  }
  return false;
}

std::uint64_t Fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string Hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Writes all of `data` to `fd`.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Text

std::string CatalogToText(const Catalog& catalog,
                          std::map<std::string, std::string>* json_by_encoding) {
  std::string out = std::string(kFormatTag) + " " + std::to_string(kCatalogFormatVersion) + "\n";
  out += "next-id " + std::to_string(catalog.next_id()) + "\n";
  for (const auto& [name, o] : catalog.objects()) {
    out += std::string("object ") + KindWord(o.kind) + " " + EncodeField(o.name) + " " +
           EncodeField(o.id) + " " + EncodeColumns(o.primary_key) + " " +
           EncodeNames(o.depends_on) + " " + EncodeField(o.definition_sql) + "\n";
    for (const auto& c : o.columns) {
      out += "column " + EncodeField(c.name) + " " + TypeWord(c) + " " + (c.nullable ? "1" : "0") +
             "\n";
    }
  }
  for (const auto& [name, i] : catalog.indexes()) {
    out += "index " + EncodeField(i.name) + " " + EncodeField(i.id) + " " + EncodeField(i.on) +
           " " + EncodeColumns(i.key) + "\n";
  }
  for (const auto& id : catalog.retired_ids()) out += "retired " + EncodeField(id) + "\n";
  std::map<std::string, std::string> printed;
  for (const auto& c : catalog.history().commands()) {
    if (!json_by_encoding) {
      out += "command " + ipc::ToJson(c) + "\n";
      continue;
    }
    std::string encoding = ipc::Encode(c);
    auto known = json_by_encoding->find(encoding);
    const std::string& json = known != json_by_encoding->end()
                                  ? known->second
                                  : printed.emplace(encoding, ipc::ToJson(c)).first->second;
    out += "command " + json + "\n";
    if (known != json_by_encoding->end()) printed.emplace(std::move(encoding), known->second);
  }
  if (json_by_encoding) *json_by_encoding = std::move(printed);
  std::size_t lines = 0;
  for (char ch : out) lines += ch == '\n';
  out += "end " + std::to_string(lines) + " " + Hex16(Fnv1a64(out)) + "\n";
  return out;
}

Result<Catalog> CatalogFromText(std::string_view text, const std::string& file) {
  auto corrupt = [&](std::size_t line, const std::string& why) {
    return Status::Corruption(file + (line ? ":" + std::to_string(line) : std::string()) + ": " +
                              why);
  };
  // The end line first: a file cut short (a torn write) or changed is refused before anything
  // in it is believed.
  if (text.empty() || text.back() != '\n') {
    return corrupt(0,
                   "torn or corrupt catalog: it does not end with its end line (the data dir's "
                   "catalog is damaged; restore it from a backup)");
  }
  const std::size_t end_start = text.rfind('\n', text.size() - 2);
  const std::size_t body_size = end_start == std::string_view::npos ? 0 : end_start + 1;
  const std::string_view body = text.substr(0, body_size);
  const std::string_view end_line = text.substr(body_size, text.size() - body_size - 1);
  std::size_t body_lines = 0;
  for (char ch : body) body_lines += ch == '\n';
  const auto end_fields = SplitOn(end_line, ' ');
  if (end_fields.size() != 3 || end_fields[0] != "end") {
    return corrupt(body_lines + 1,
                   "torn or corrupt catalog: its last line is not its end line (the data dir's "
                   "catalog is damaged; restore it from a backup)");
  }
  const auto count = ParseNumber(end_fields[1]);
  if (!count || *count != body_lines || end_fields[2] != Hex16(Fnv1a64(body))) {
    return corrupt(body_lines + 1,
                   "torn or corrupt catalog: its end line's line count or checksum does not "
                   "match what is before it (the data dir's catalog is damaged; restore it from a "
                   "backup)");
  }

  std::uint64_t next_id = 0;
  bool have_next_id = false;
  std::vector<CatalogObject> objects;
  std::vector<CatalogIndex> indexes;
  std::vector<ipc::pb::Command> history;
  std::vector<std::string> retired;
  std::size_t number = 0;
  std::uint64_t format_version = 0;
  for (const auto line : SplitOn(body.substr(0, body.empty() ? 0 : body.size() - 1), '\n')) {
    ++number;
    if (number == 1) {
      const auto f = SplitOn(line, ' ');
      if (f.size() != 2 || f[0] != kFormatTag) {
        return corrupt(number, "not a Tandem catalog (its first line is not \"" +
                                   std::string(kFormatTag) + " <version>\")");
      }
      const auto version = ParseNumber(f[1]);
      // Version 1 is version 2 without retired ids; 2 is 3 with four types and no modifiers.
      if (!version || *version < 1 ||
          *version > static_cast<std::uint64_t>(kCatalogFormatVersion)) {
        return corrupt(number, "catalog format version " + std::string(f[1]) +
                                   ", this build reads version " +
                                   std::to_string(kCatalogFormatVersion));
      }
      format_version = *version;
      continue;
    }
    const std::size_t space = line.find(' ');
    const std::string_view tag = line.substr(0, space);
    const std::string_view rest =
        space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (tag == "command") {
      auto c = ipc::CommandFromJson(rest);
      if (!c.ok()) return corrupt(number, "a command that does not parse: " + c.status().message());
      history.push_back(std::move(*c));
      continue;
    }
    const auto f = SplitOn(rest, ' ');
    if (tag == "next-id" && f.size() == 1 && ParseNumber(f[0]) && !have_next_id) {
      next_id = *ParseNumber(f[0]);
      have_next_id = true;
    } else if (tag == "object" && f.size() == 6) {
      CatalogObject o;
      const auto kind = KindFromWord(f[0]);
      auto name = DecodeField(f[1]);
      auto id = DecodeField(f[2]);
      auto pk = DecodeColumns(f[3]);
      auto deps = DecodeNames(f[4]);
      auto def = DecodeField(f[5]);
      if (!kind || !name || name->empty() || !id || !pk || !deps || !def) {
        return corrupt(number, "an object line that does not parse");
      }
      o.kind = *kind;
      o.name = std::move(*name);
      o.id = std::move(*id);
      o.primary_key = std::move(*pk);
      o.depends_on = std::move(*deps);
      o.definition_sql = std::move(*def);
      objects.push_back(std::move(o));
    } else if (tag == "column" && f.size() == 3 && !objects.empty()) {
      auto name = DecodeField(f[0]);
      CatalogColumn c;
      if (!name || name->empty() || !TypeFromWord(f[1], format_version, &c) ||
          (f[2] != "0" && f[2] != "1")) {
        return corrupt(number, "a column line that does not parse");
      }
      c.name = std::move(*name);
      c.nullable = f[2] == "1";
      objects.back().columns.push_back(std::move(c));
    } else if (tag == "retired" && f.size() == 1) {
      auto id = DecodeField(f[0]);
      if (!id || id->empty()) return corrupt(number, "a retired line that does not parse");
      retired.push_back(std::move(*id));
    } else if (tag == "index" && f.size() == 4) {
      CatalogIndex i;
      auto name = DecodeField(f[0]);
      auto id = DecodeField(f[1]);
      auto on = DecodeField(f[2]);
      auto key = DecodeColumns(f[3]);
      if (!name || name->empty() || !id || !on || !key) {
        return corrupt(number, "an index line that does not parse");
      }
      i.name = std::move(*name);
      i.id = std::move(*id);
      i.on = std::move(*on);
      i.key = std::move(*key);
      indexes.push_back(std::move(i));
    } else {
      return corrupt(number, "a line that is no record of the catalog");
    }
  }
  if (number == 0) return corrupt(1, "not a Tandem catalog (it has no format line)");
  if (!have_next_id) return corrupt(0, "no next-id line");
  auto c = Catalog::Restore(next_id, std::move(objects), std::move(indexes), std::move(history),
                            std::move(retired));
  if (!c.ok()) return corrupt(0, "inconsistent catalog: " + c.status().message());
  return c;
}

// ---------------------------------------------------------------------------------------------
// The store

struct CatalogStore::Lock {
  explicit Lock(int fd) : fd(fd) {}
  ~Lock() { close(fd); }  // releases the record lock (nothing else in this process opens it)
  int fd;
};

Result<CatalogStore> CatalogStore::Open(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return Status::Unavailable("cannot create the data dir " + data_dir + ": " + ec.message());
  }
  CatalogStore s;
  s.dir_ = data_dir;
  s.path_ = (std::filesystem::path(data_dir) / "catalog").string();
  const std::string lock_path = s.path_ + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot open the catalog lock " + lock_path + ": " +
                               std::strerror(errno));
  }
  auto lock = std::make_shared<const Lock>(fd);
  struct flock want {};
  want.l_type = F_WRLCK;
  want.l_whence = SEEK_SET;  // l_start 0, l_len 0: the whole file
  if (fcntl(fd, F_SETLK, &want) != 0) {
    const int err = errno;
    struct flock holder = want;
    if ((err == EACCES || err == EAGAIN) && fcntl(fd, F_GETLK, &holder) == 0 &&
        holder.l_type != F_UNLCK) {
      return Status::Unavailable("another tandem-frontend (pid " + std::to_string(holder.l_pid) +
                                 ") uses the data dir " + data_dir +
                                 "; each frontend needs a data dir of its own");
    }
    return Status::Unavailable("cannot lock the catalog lock " + lock_path + ": " +
                               std::strerror(err));
  }
  s.lock_ = std::move(lock);
  return s;
}

Result<Catalog> CatalogStore::Load() const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (std::filesystem::exists(path_, ec) || ec) {
      return Status::Unavailable("cannot read the catalog " + path_);
    }
    return Catalog();
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Unavailable("cannot read the catalog " + path_);
  return CatalogFromText(text.str(), path_);
}

Status CatalogStore::Save(const Catalog& catalog) const {
  std::string text;
  {
    MutexLock lock(json_cache_->mutex);
    text = CatalogToText(catalog, &json_cache_->json_by_encoding);
  }
  const std::string tmp = path_ + ".tmp";
  auto failed = [&](const std::string& what) {
    return Status::Unavailable("cannot save the catalog: " + what + ": " + std::strerror(errno));
  };
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return failed("open " + tmp);
  const bool written = WriteAll(fd, text) && fdatasync(fd) == 0;
  const int write_errno = errno;
  if (close(fd) != 0 || !written) {
    if (!written) errno = write_errno;
    return failed("write " + tmp);
  }
  if (rename(tmp.c_str(), path_.c_str()) != 0) return failed("rename " + tmp + " to " + path_);
  // The rename is durable once the directory is.
  const int dir = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return failed("open the data dir " + dir_);
  const bool synced = fsync(dir) == 0;
  const int sync_errno = errno;
  close(dir);
  if (!synced) {
    errno = sync_errno;
    return failed("fsync the data dir " + dir_);
  }
  return Status::Ok();
}

}  // namespace tandem::frontend
