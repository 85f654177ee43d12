// CatalogStore: the catalog durable in the frontend's --data-dir (DESIGN §15) — its objects,
// indexes, next id and replay history in one file, `<data-dir>/catalog`, replaced whole on every
// change, so a crash at any point leaves the old catalog or the new one, never a mix, and the
// objects never disagree with the history a replica is replayed.
//
// Save: the text (CatalogToText) is written to `catalog.tmp`, fdatasync'ed, renamed over
// `catalog`, and the directory fsync'ed (the rename itself made durable); only then does it
// return, and only then may the DDL statement that changed the catalog answer.
//
// Load: a missing `catalog` is an empty catalog (a new data dir). One that is there must be whole
// — a format line of a version this build reads, an end line whose line count and checksum match
// what is before it — and consistent (Catalog::Restore): anything else is a Corruption naming
// the file and the line, never an empty catalog. A `catalog.tmp` left by a crash is ignored (the
// next Save replaces it).
//
// The file format (version 3; version 2 is the same with only the first four types and no
// modifiers, version 1 without `retired` lines too; both are read), one record a line, fields
// separated by one space:
//   tandem-catalog 1
//   next-id <n>
//   object <kind> <name> <id> <primary key> <depends on> <definition>
//   column <name> <type> <nullable>           (the columns of the object before, in order)
//   index <name> <id> <on> <key>
//   command <a protocol Command in its JSON form, one line>   (the history, in order)
//   retired <id>                                 (an id handed out and no longer defined)
//   end <lines before this one> <FNV-1a 64 of every byte before this line, 16 hex digits>
// <kind> is table, source, view or materialized-view; <type> bool, int16, int32, int64, float32,
// float64, numeric, string, bytea, date, time, timestamp, timestamptz, interval or uuid, with its
// modifiers after a colon: numeric:<precision>:<scale>, string:varchar:<length>,
// string:char:<length>; <nullable> 0 or 1. A string field is percent-encoded: every byte but A-Z
// a-z 0-9 _ . / : as %XX, and the empty string as "-". A list (<primary key>, <key>: column
// numbers; <depends on>: names) is its items joined with ",", the empty list "-".
//
// Who touches it: one frontend per data dir. Open takes an exclusive lock on
// `<data-dir>/catalog.lock` (a POSIX record lock, released when the store goes, and by the
// kernel when the process dies) for as long as the store lives; a second frontend on the same
// data dir is refused naming the holder's pid.
//
// Thread safety: none; the frontend's DDL path owns its store.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "frontend/catalog/catalog.h"

namespace tandem::frontend {

// The format version this build writes and reads.
// Version 3 added the types of DESIGN §16 and their modifiers: a build that reads 2 refuses a
// version 3 file by its version, not as a damaged column line.
inline constexpr int kCatalogFormatVersion = 3;

// The catalog as the file's text, and back (Corruption naming `file` and the line for anything
// that is not a whole, consistent catalog).
// `json_by_encoding`, when given: the history commands' JSON by their encoding, used where it has
// a command and left holding exactly this history's (a save prints mostly what the last one did).
std::string CatalogToText(const Catalog& catalog,
                          std::map<std::string, std::string>* json_by_encoding = nullptr);
Result<Catalog> CatalogFromText(std::string_view text, const std::string& file);

class CatalogStore {
 public:
  // Creates `data_dir` when missing and takes its lock. Unavailable when another process holds
  // it (naming its pid) or the directory cannot be made or locked.
  static Result<CatalogStore> Open(const std::string& data_dir);

  // The catalog in the file: empty when there is none. Corruption (naming the file) for a torn
  // or damaged one; Unavailable when it cannot be read.
  Result<Catalog> Load() const;
  // Replaces the file with `catalog`, durably (see above). Unavailable on any failed write,
  // fdatasync, rename or fsync; the file then still holds the catalog saved before.
  Status Save(const Catalog& catalog) const;

  const std::string& path() const { return path_; }  // <data-dir>/catalog

 private:
  struct Lock;
  struct JsonCache {
    Mutex mutex;
    std::map<std::string, std::string> json_by_encoding TANDEM_GUARDED_BY(mutex);
  };
  std::string dir_;
  std::string path_;
  std::shared_ptr<const Lock> lock_;
  std::shared_ptr<JsonCache> json_cache_ = std::make_shared<JsonCache>();
};

}  // namespace tandem::frontend
