#include "tools/shm/support.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

namespace tandem::tools {

using namespace inspect;

// ---------------------------------------------------------------------------------------------
// gc

namespace {

// Removes `name` only if it is still the stale file we probed: we take its creation lock
// ourselves (so no supervisor can be holding it) and check the name still points at the file we
// locked (a new supervisor may have replaced it meanwhile) before unlinking.
Status RemoveIfStale(const std::string& name) {
  const int fd = shm_open(("/" + name).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("already gone");
    return Status::Internal(std::string("shm_open: ") + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }  // also drops our lock, after the unlink
  } closer{fd};
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return Status::FailedPrecondition("its lock is held again: a supervisor owns it now");
  }
  struct stat locked {
  }, named{};
  if (fstat(fd, &locked) != 0 || stat(Segment::PathOf(name).c_str(), &named) != 0 ||
      locked.st_ino != named.st_ino || locked.st_dev != named.st_dev) {
    return Status::FailedPrecondition("it was replaced while we looked");
  }
  return Segment::Remove(name);
}

// Why segment `name` (probed as `p`) must stay, or nullopt when it is stale: its supervisor is
// gone and it is ours to remove.
std::optional<std::string> ReasonToKeep(const std::string& name, const SegmentProbe& p) {
  // Never another user's file, nor a FIFO, directory or device: not ours to remove, whatever
  // is in it (a squatter's, or another user's replica).
  if (!p.regular_file) return p.problem + "; not removing what is not a regular file";
  if (p.owner_uid != geteuid()) {
    return "owned by uid " + std::to_string(p.owner_uid) + ", not by this user (uid " +
           std::to_string(geteuid()) + "); not removing another user's file";
  }
  if (p.supervisor_alive) {
    return "supervisor alive" +
           (p.header ? " (pid " + std::to_string(p.header->supervisor_pid) + ")" : std::string());
  }
  // Shared fate means runtimes die with their supervisor; if one still runs, something is
  // wrong and its memory is still in use: leave it for a person (a reused pid errs the same
  // safe way).
  if (p.header) {
    for (const auto& rt : p.header->runtimes) {
      if (PidAlive(rt.pid)) {
        return "supervisor gone but runtime pid " + std::to_string(rt.pid) + " still runs";
      }
    }
  }
  // Like Segment::Create: a file with someone else's magic is not ours to delete.
  if (!p.valid && p.magic != 0 && p.magic != shm::kSegmentMagic) {
    return p.problem + "; not removing a file that is not Tandem's";
  }
  if (p.magic == 0) {
    // Creation never finished — or is under way right now (the creator takes its lock just
    // after creating the file). Leave young ones alone.
    struct stat st {};
    if (stat(Segment::PathOf(name).c_str(), &st) == 0 &&
        std::time(nullptr) - st.st_ctim.tv_sec < 10) {
      return "unfinished and less than 10 s old: creation may be under way";
    }
  }
  return std::nullopt;
}

struct Named {
  std::string name, reason;
};
struct GcOutcome {
  std::vector<Named> removed, kept, failed;
};

void PrintGc(const Output& o, bool dry_run, const GcOutcome& r) {
  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("dry_run").Bool(dry_run);
    for (const auto& [key, list] : {std::pair{"removed", &r.removed}, {"kept", &r.kept}}) {
      json.Key(key).BeginArray();
      for (const auto& n : *list) {
        json.BeginObject().Key("name").String(n.name).Key("reason").String(n.reason).EndObject();
      }
      json.EndArray();
    }
    json.Key("failed").BeginArray();
    for (const auto& f : r.failed) {
      json.BeginObject().Key("name").String(f.name).Key("error").String(f.reason).EndObject();
    }
    json.EndArray();
    if (!r.failed.empty()) {
      json.Key("error")
          .String("could not remove " + std::to_string(r.failed.size()) + " segment" +
                  (r.failed.size() == 1 ? "" : "s"))
          .Key("exit_code")
          .Int(kExitError);
    }
    json.EndObject();
    Emit(o, json);
  } else {
    for (const auto& n : r.removed) {
      o.out << (dry_run ? "would remove " : "removed ") << n.name << " (" << n.reason << ")\n";
    }
    for (const auto& k : r.kept) o.out << "kept " << k.name << " (" << k.reason << ")\n";
    if (r.removed.empty()) o.out << (dry_run ? "nothing to remove\n" : "nothing removed\n");
  }
  for (const auto& f : r.failed) {
    o.err << "tandem-shm: could not remove " << f.name << ": " << f.reason << "\n";
  }
}

}  // namespace

int RunGc(const Output& o, bool dry_run, const std::string& prefix) {
  if (!StartsWith(prefix, kSegmentPrefix)) {
    return Usage(o, "--prefix must begin with '" + std::string(kSegmentPrefix) + "'");
  }
  std::vector<std::string> names = Segment::List(prefix);
  std::sort(names.begin(), names.end());
  GcOutcome r;
  for (const std::string& name : names) {
    auto probe = Segment::Probe(name);
    if (!probe.ok()) {
      if (probe.status().code() != StatusCode::kNotFound) {
        r.kept.push_back({name, probe.status().message()});
      }
      continue;
    }
    const SegmentProbe& p = *probe;
    if (auto reason = ReasonToKeep(name, p)) {
      r.kept.push_back({name, *std::move(reason)});
      continue;
    }
    std::string why =
        p.header ? "supervisor pid " + std::to_string(p.header->supervisor_pid) + " is gone"
                 : "supervisor gone (" + p.problem + ")";
    if (!dry_run) {
      if (Status s = RemoveIfStale(name); !s.ok()) {
        if (s.code() == StatusCode::kFailedPrecondition) {
          r.kept.push_back({name, s.message()});
        } else if (s.code() != StatusCode::kNotFound) {
          r.failed.push_back({name, s.message()});
        }
        continue;
      }
    }
    r.removed.push_back({name, why});
  }
  PrintGc(o, dry_run, r);
  return r.failed.empty() ? kExitOk : kExitError;
}

}  // namespace tandem::tools
