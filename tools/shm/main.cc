// tandem-shm: the shared-memory inspector. Argument parsing only; the subcommands
// live in tools/shm/inspect.h. Exit codes: 0 ok, 1 runtime error, 64 bad usage, 65 a corrupt
// segment (or not one this build can read).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "tools/shm/inspect.h"

// Long (~100 lines) because it declares every subcommand's flags in one place, read down like a
// table; the work is in the Run* functions.
int main(int argc, char** argv) {
  using namespace tandem::tools;
  CLI::App app{
      "tandem-shm: inspect Tandem shared-memory segments (/dev/shm/tandem.*).\n"
      "Read-only and lock-free: safe against a live replica, and works on a segment kept after a "
      "crash."};
  app.require_subcommand(1);
  bool json = false;
  const char* kJsonHelp = "print one JSON document on stdout";
  app.add_flag("--json", json, kJsonHelp);

  auto* ls = app.add_subcommand("ls", "list tandem.* segments and whether their supervisor lives");
  ls->add_flag("--json", json, kJsonHelp);
  std::string prefix = kSegmentPrefix;
  const char* kPrefixHelp = "only segments whose name begins with this (itself beginning tandem.)";
  ls->add_option("--prefix", prefix, kPrefixHelp)->capture_default_str();

  std::string segment;
  auto* info = app.add_subcommand("info", "header, runtimes, bytes used and free, slot count");
  info->add_option(
          "SEG", segment,
          "segment name (tandem.r1, r1 or /dev/shm/tandem.r1), or a file holding a copy of "
          "one (a path starting with /, ./ or ../)")
      ->required();
  info->add_flag("--json", json, kJsonHelp);

  auto* slots = app.add_subcommand("slots", "every live slot per ordinal: frontiers, batches");
  slots->add_option("SEG", segment, "segment name")->required();
  slots->add_flag("--json", json, kJsonHelp);

  DumpOptions dump_options;
  std::uint32_t ordinal = 0;
  tandem::Time at = 0, as_of = 0;
  std::uint64_t limit = 0;
  auto* dump = app.add_subcommand("dump", "rows with counts of an index at a time");
  dump->add_option("SEG", dump_options.segment, "segment name")->required();
  dump->add_option("ID", dump_options.id, "index id, e.g. u1")->required();
  auto* ordinal_opt = dump->add_option("--ordinal", ordinal, "only this worker ordinal");
  auto* at_opt = dump->add_option(
      "--at", at,
      "read time (default: upper-1, or since when upper is the minimum; a closed index: "
      "its final contents, at 18446744073709551614)");
  auto* as_of_opt =
      dump->add_option("--as-of", as_of, "the slot created at this as_of (default: the newest)");
  auto* limit_opt = dump->add_option("--limit", limit, "print at most N rows");
  dump->add_flag("--json", json, kJsonHelp);

  ReadOptions read_options;
  std::string read_key, read_prefix, read_from, read_to;
  tandem::Time read_at = 0;
  std::uint64_t read_limit = 0;
  auto* read = app.add_subcommand(
      "read", "an index read in place like a peek, through LocalReader (what a program here sees)");
  read->add_option("SEG", read_options.segment, "segment name")->required();
  read->add_option("ID", read_options.id, "index id, e.g. u1")->required();
  auto* key_opt = read->add_option("--key", read_key, "one key: its columns' datums, d1,d2,...");
  auto* prefix_opt =
      read->add_option("--prefix", read_prefix, "keys whose leading columns are these");
  auto* from_opt = read->add_option("--from", read_from, "keys from this one (inclusive)");
  auto* to_opt = read->add_option("--to", read_to, "keys before this one (exclusive)");
  auto* read_at_opt = read->add_option("--at", read_at, "read time (default: the latest readable)");
  auto* read_limit_opt = read->add_option("--limit", read_limit, "print at most N rows");
  read->add_flag("--json", json, kJsonHelp);

  WatchOptions watch_options;
  std::uint64_t count = 0;
  auto* watch = app.add_subcommand("watch", "refresh `slots` every interval");
  watch->add_option("SEG", watch_options.segment, "segment name")->required();
  watch->add_option("--interval", watch_options.interval_ms, "milliseconds between refreshes")
      ->check(CLI::Range(1u, 3600u * 1000u))
      ->capture_default_str();
  auto* count_opt =
      watch->add_option("--count", count, "stop after N refreshes")->check(CLI::PositiveNumber);
  watch->add_flag("--json", json, kJsonHelp + std::string(" per refresh, one line each"));

  bool dry_run = false;
  auto* gc = app.add_subcommand("gc", "remove tandem.* segments whose supervisor is dead");
  gc->add_flag("--dry-run", dry_run, "only print what would be removed");
  gc->add_flag("--json", json, kJsonHelp);
  gc->add_option("--prefix", prefix, kPrefixHelp)->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code == 0) return kExitOk;
    // The flag may not have been parsed yet: look for it, so a script still gets JSON.
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--json") {
        std::cout << JsonError(e.what(), kExitUsage) << "\n";
        break;
      }
    }
    return kExitUsage;
  }

  const Output out{std::cout, std::cerr, json};
  if (ls->parsed()) return RunLs(out, prefix);
  if (info->parsed()) return RunInfo(out, segment);
  if (slots->parsed()) return RunSlots(out, segment);
  if (dump->parsed()) {
    if (ordinal_opt->count()) dump_options.ordinal = ordinal;
    if (at_opt->count()) dump_options.at = at;
    if (as_of_opt->count()) dump_options.as_of = as_of;
    if (limit_opt->count()) dump_options.limit = limit;
    return RunDump(out, dump_options);
  }
  if (read->parsed()) {
    if (key_opt->count()) read_options.key = read_key;
    if (prefix_opt->count()) read_options.prefix = read_prefix;
    if (from_opt->count()) read_options.from = read_from;
    if (to_opt->count()) read_options.to = read_to;
    if (read_at_opt->count()) read_options.at = read_at;
    if (read_limit_opt->count()) read_options.limit = read_limit;
    return RunRead(out, read_options);
  }
  if (watch->parsed()) {
    if (count_opt->count()) watch_options.count = count;
    watch_options.clear_screen = !json && isatty(STDOUT_FILENO);
    return RunWatch(out, watch_options);
  }
  if (gc->parsed()) return RunGc(out, dry_run, prefix);
  return kExitUsage;
}
