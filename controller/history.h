// The controller's history: the commands that define a replica's state (CreateDataflow,
// AllowCompaction), kept durably in a state file, one protocol-JSON Command per line, and
// replayed to every replica a controller session opens (controller/session.h): Hello, the history
// (Replay), InitializationComplete, then the session's new commands. Reconciliation on the
// replica keeps what was re-sent unchanged, so nothing already running is rebuilt, and drops what
// was not — which is why a session first checks the replica's live indexes against LiveIndexes().
//
// Invariants:
//  1. A command joins the history only once a replica accepted it (Session::Submit, Record);
//     a refused command is never recorded.
//  2. A dataflow whose every index export is dropped is pruned (Prune), with every
//     AllowCompaction of an id it created: the history holds what a replica should run now.
//  3. A command is sent and recorded canonical (Canonical: round-tripped through the JSON form
//     the state file holds), so what is sent now is what is replayed later: reconciliation
//     compares encodings.
//
// Sources: a source u<n> gets a dataflow of its own, the source and its *source index* s<n> on
// it (SourceIndexId); a dataflow reading the source imports that index (IndexImport), so dropping
// the reader leaves the source. That dataflow lives until the source is dropped (its index
// s<n>). s<n> is never an id a user picks (they are u<n>), so the source index takes none of
// theirs.
//
// A state file may hold a *pending* source: a CreateDataflow line with debug_name kPendingSource
// and only that source import. It is never replayed; the next dataflow reading it takes it as a
// source import of its own (controller/imports.h) and the line goes.
//
// Thread safety: none; a History is one session's. Across processes, the state file's lock
// (Access) keeps two writers from interleaving.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::controller {

namespace pb = ipc::pb;

// The debug_name of a pending source's CreateDataflow line.
inline constexpr char kPendingSource[] = "tandem-ctl:pending-source";

// The schema of one collection, and the index key when it is an index.
struct CollectionInfo {
  pb::Schema schema;
  bool is_index = false;
  std::string on;                  // for an index: the collection it is on
  std::vector<std::uint32_t> key;  // for an index
};

class History {
 public:
  // How a session uses the state file. kWrite holds an exclusive lock on `<path>.lock` for as
  // long as this history or a copy of it lives, so two controllers never interleave
  // their read-modify-write of one state file. kRead takes a shared lock only while it reads the
  // file (a long `watch` keeps no one out; any number of readers run at once) and cannot Save.
  // A conflicting holder is refused (Unavailable) naming its pid, which the kernel reports
  // (POSIX record locks): never a pid file that may not be written yet.
  enum class Access { kRead, kWrite };
  // A missing file is an empty history.
  static Result<History> Load(const std::string& path, Access access);
  // Rewrites the file (temporary file + rename). Refused for a history loaded kRead.
  Status Save() const;

  const std::string& path() const { return path_; }
  const std::vector<pb::Command>& commands() const { return commands_; }
  // The commands to replay (pending sources and drops that must not be repeated left out).
  std::vector<pb::Command> Replay() const;

  void Append(const pb::Command& command);
  // Removes dataflows whose every index export is dropped, with every AllowCompaction of an id
  // they created.
  void Prune();

  static bool IsPendingSource(const pb::Command& command);
  // The id of the index create-source puts on source u<n>: s<n>; nullopt unless `source` is u<n>.
  static std::optional<std::string> SourceIndexId(const std::string& source);
  std::optional<pb::SourceImport> PendingSource(const std::string& id) const;
  void RemovePendingSource(const std::string& id);

  // Every id created by a command of the history (pending sources included), not yet dropped.
  std::set<std::string> LiveIds() const;
  // Every id ever mentioned, for picking a fresh one.
  std::string NextFreeId(const std::set<std::string>& also_taken = {}) const;
  // What the history says about a collection (sources, builds, index exports), if anything.
  std::optional<CollectionInfo> Lookup(const std::string& id) const;
  // `id` if it is an index, else the first index on `id`, else `id` unchanged.
  std::string IndexFor(const std::string& id) const;
  // The live indexes on collection `on`, in the order they were created: {id, key}.
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> IndexesOn(
      const std::string& on) const;
  // The source index of source `source` (SourceIndexId) when the history has it, live.
  std::optional<std::string> SourceIndex(const std::string& source) const;
  // The earliest time index `id` is known to be readable at: the as_of of its dataflow or the
  // last compaction frontier the history allowed for it, whichever is later. A maintained
  // dataflow importing `id` starts there (the supervisor refuses one below the allowed frontier).
  std::uint64_t ReadableFrom(const std::string& id) const;

  // What a live id of the history is, for refusing a command that needs an index.
  struct IdKind {
    enum Kind { kUnknown, kPendingSource, kSource, kView, kIndex } kind = kUnknown;
    std::vector<std::string> indexes;  // the live index exports of its dataflow
  };
  IdKind KindOf(const std::string& id) const;
  // The live index exports of the history's dataflows (what it would have the replica run).
  std::set<std::string> LiveIndexes() const;
  // The source import of live source `id` as the history created it (not a pending one).
  std::optional<pb::SourceImport> LiveSource(const std::string& id) const;
  // The files of the live log, CSV and JSON-lines sources (pending ones included): source id ->
  // {what file ("log", "CSV", "JSON-lines"), path}.
  struct SourceFile {
    std::string what, path;
  };
  std::map<std::string, SourceFile> SourceFiles() const;

 private:
  struct Lock;
  std::string path_;
  std::shared_ptr<const Lock> lock_;
  std::vector<pb::Command> commands_;
};

// Round-trips a command through the JSON form, so what is sent now equals what is replayed later
// (reconciliation compares encodings).
pb::Command Canonical(const pb::Command& command);

// "u1, u2 and u3".
std::string JoinIds(const std::vector<std::string>& ids);

}  // namespace tandem::controller
