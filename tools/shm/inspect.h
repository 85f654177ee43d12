// tandem-shm, the shared-memory inspector: the subcommands as functions over streams,
// so main.cc is only argument parsing.
//
// Safety: everything here reads a segment through Segment::Probe / Segment::Open and
// shm::Inspector only. It never attaches as a runtime's Publisher or Reader, never takes a row's
// creation lock or the allocator's mutex, never writes the segment, and never waits on anything a
// runtime holds: on a live replica a dump announces what it reads in the replica's reader table,
// as a local reader does (shm/reader_table.h), which the publisher reads but never waits for. A
// kept (post-mortem) segment, which nobody frees, is read without announcing.
//
// Exit codes: kExitOk; kExitError for a runtime error (no such segment, a read refused), with the
// reason on `err`; kExitCorrupt when the segment is not what this build can read — corrupt, not a
// Tandem segment, or another build's layout — with the reason naming what is inconsistent (every
// offset and count read from a segment is checked against the mapping first); kExitUsage for bad
// usage.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "shm/layout.h"
#include "shm/reader.h"
#include "tools/common/format.h"

namespace tandem::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 64;
inline constexpr int kExitCorrupt = 65;  // EX_DATAERR

// A table with a header row; columns padded to their widest cell, numeric columns right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> headers, std::vector<bool> right_aligned = {});
  void Add(std::vector<std::string> row);
  std::string Render() const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

const char* RuntimeStateName(shm::RuntimeState state);
const char* ModeName(shm::Mode mode);
// "filled", "unpublished", "released" for the set kSlot* bits.
std::vector<std::string> SlotFlagNames(std::uint32_t flags);
bool PidAlive(std::int32_t pid);

// Accepts "tandem.r1", "/dev/shm/tandem.r1", or "r1" when there is no segment "r1" but there is
// a "tandem.r1". An argument starting with "/", "./" or "../" that is not /dev/shm/<name> is a
// file holding a copy of a segment (IsSegmentFile), read from a private copy-on-write mapping.
std::string ResolveSegmentName(const std::string& arg);
bool IsSegmentFile(const std::string& arg);

struct Output {
  std::ostream& out;
  std::ostream& err;
  bool json = false;
};

// `prefix` narrows the names considered; it must begin with "tandem." (kSegmentPrefix).
inline constexpr const char* kSegmentPrefix = "tandem.";
int RunLs(const Output& o, const std::string& prefix = kSegmentPrefix);
int RunInfo(const Output& o, const std::string& segment);
int RunSlots(const Output& o, const std::string& segment);

struct DumpOptions {
  std::string segment;
  std::string id;  // "u1"
  std::optional<std::uint32_t> ordinal;
  std::optional<Time> at;
  std::optional<Time> as_of;
  std::optional<std::uint64_t> limit;
};
int RunDump(const Output& o, const DumpOptions& options);

// `read`: through LocalReader, as a program on this host reads (tools/shm/read.cc). Keys in the
// datum syntax, comma-separated.
struct ReadOptions {
  std::string segment;
  std::string id;
  std::optional<std::string> key, prefix, from, to;
  std::optional<Time> at;  // latest readable when unset
  std::optional<std::uint64_t> limit;
};
int RunRead(const Output& o, const ReadOptions& options);

struct WatchOptions {
  std::string segment;
  std::uint32_t interval_ms = 1000;
  std::optional<std::uint64_t> count;  // refreshes; forever when unset
  bool clear_screen = false;           // stdout is a terminal
};
int RunWatch(const Output& o, const WatchOptions& options);

int RunGc(const Output& o, bool dry_run, const std::string& prefix = kSegmentPrefix);

// The slots table (`slots`, `watch`) and its JSON form, exposed for tests.
std::string RenderSlotsTable(std::vector<shm::SlotInfo> slots);
void SlotsJson(JsonWriter& json, std::vector<shm::SlotInfo> slots);

}  // namespace tandem::tools
