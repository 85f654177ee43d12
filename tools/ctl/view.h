// tandem-ctl: the plan of a view as create-view and query spell it in short form — joins of --on
// with --join collections, a Reduce by --group-by with --aggregate(s), a TopK (--top) — with
// every column name resolved against the schemas the state file knows, before connecting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/ctl/schema.h"

namespace tandem::ctl {

// One --join ID: the collection it joins, its --join-on LEFT=RIGHT pairs (LEFT a column of what
// it joins to: --on, or the previous join's output; RIGHT a column of ID) and --left (a left
// outer join).
struct JoinOption {
  std::string with;
  std::vector<std::string> on;
  bool left_outer = false;
};

struct ViewOptions {
  std::optional<std::string> group_by, key;
  std::vector<std::string> aggregates;
  std::vector<JoinOption> joins;
  // --top N --by COL[:asc|:desc][:nulls-first|:nulls-last],... --per COLS --offset N
  std::optional<std::string> top, by, per, offset;
  // A --join-on or --left before any --join: reported by PlanView (the command line keeps it).
  std::optional<std::string> misplaced;
};

// What a view reads by name: --on first, then each --join's collection.
struct ViewInput {
  std::string collection;
  pb::Schema schema;
};

// The view: Join(s) of the inputs, then a Reduce (or nothing), then a TopK (or nothing); without
// any of them, a copy (an empty Mfp) of --on.
struct View {
  pb::Plan plan;
  pb::Schema schema;
  std::vector<std::uint32_t> group;  // the Reduce's group key, in the columns it reads
  std::vector<std::uint32_t> key;    // of the index on the view
  // For each input, the key of the index best imported for it (an arrangement the runtime reads
  // in place): the first join's left key or the group key for --on, the join key for the others.
  std::vector<std::vector<std::uint32_t>> import_keys;
};

// Why PlanView refused: `usage` for a malformed option (exit 64), else a column or type the
// schemas refuse (exit 1).
struct ViewRefusal {
  bool usage = false;
  std::string why;
};

// The view of `o` over `inputs` (inputs.size() == 1 + o.joins.size()) into `out`.
std::optional<ViewRefusal> PlanView(const ViewOptions& o, const std::vector<ViewInput>& inputs,
                                    View& out);

// The --aggregate syntax: count | count:COL | count-distinct:COL | sum:COL | min:COL | max:COL |
// avg:COL | any:COL | all:COL.
inline constexpr char kAggregateHelp[] =
    "count|count:COL|count-distinct:COL|sum:COL|min:COL|max:COL|avg:COL|any:COL|all:COL";

}  // namespace tandem::ctl
