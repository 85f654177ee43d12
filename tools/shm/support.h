// tandem-shm: what its subcommands (one file each: ls, info, slots and watch, dump, gc) share —
// names of states and flags, sizes and times as text, failures, opening a segment to inspect.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "shm/reader_table.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "tools/shm/inspect.h"

namespace tandem::tools {

const char* ModeName(shm::Mode mode);
std::vector<std::string> SlotFlagNames(std::uint32_t flags);
bool PidAlive(std::int32_t pid);

namespace inspect {

using shm::Inspector;
using shm::Segment;
using shm::SegmentProbe;
using shm::SlotInfo;
using shm::Snapshot;

bool StartsWith(std::string_view s, std::string_view prefix);
std::string Join(const std::vector<std::string>& parts, const char* sep);
std::string Bytes(std::uint64_t bytes);      // "1.5 MiB"
std::string UtcTime(std::uint64_t unix_ns);  // ISO 8601, UTC
std::uint64_t NowUnixMs();

// A failure: the reason on stderr, and with --json also {"error", "exit_code"} on stdout.
int Failure(const Output& o, const std::string& message, int code);
int Fail(const Output& o, const std::string& message);  // kExitError
// kExitCorrupt for a Corruption status, kExitError for any other; `context` prefixes the reason.
int Fail(const Output& o, const Status& status, const std::string& context = {});
int Usage(const Output& o, const std::string& message);  // kExitUsage
// One JSON document, a line.
void Emit(const Output& o, const JsonWriter& json);

// Opens `arg` (resolved) for reading through Inspector. Works on a segment whose supervisor is
// gone: Open checks magic, version and size, not liveness. A live replica's reader table is
// opened too: the Inspector announces its reads there (shm/reader_table.h).
struct Opened {
  std::string name;
  std::unique_ptr<shm::ReaderTable> table;  // a live replica's; nullptr post-mortem
  std::unique_ptr<Segment> segment;
  SegmentProbe probe;
};
Result<Opened> OpenSegment(const std::string& arg);
// The same over `size` bytes at `base` (Segment::OpenImage; the supervisor counts as dead): how
// the fuzz target runs the subcommands below on an image in memory.
Result<Opened> OpenImage(const std::string& label, char* base, std::uint64_t size);

// By id, as_of, ordinal, slot.
void SortSlots(std::vector<SlotInfo>& slots);
std::string SlotsHeadline(const Opened& opened, std::size_t count);

}  // namespace inspect

// The subcommands on an opened segment (Run* open it, then call these).
int PrintInfo(const Output& o, inspect::Opened& opened);
int PrintSlots(const Output& o, inspect::Opened& opened);
int PrintDump(const Output& o, inspect::Opened& opened, const DumpOptions& options);

}  // namespace tandem::tools
