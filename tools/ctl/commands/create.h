// What create-index, create-view, create-dataflow and query share: a new dataflow, its --on
// input (the index it imports), the plan of a view, and sending it through a controller session.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/ctl/session.h"
#include "tools/ctl/view.h"

namespace tandem::ctl {

// A CreateDataflow command for a maintained dataflow from as_of 0.
pb::Command NewDataflow(const std::string& debug_name);

// "k,v": the columns' names (or cN).
std::string ColumnsText(const std::vector<std::uint32_t>& cols, const pb::Schema& schema);

// Runs `command` through a controller session and reports the created ids.
int SubmitCreate(Session& s, const pb::Command& command, const std::string& what,
                 const std::string& human, const std::function<void(History&)>& also = {});

// Where --on comes from. `collection` is what a plan reads (Get) and an index export is on: --on
// itself, or the collection of --on when --on names an index. A dataflow reads it by importing
// one of `indexes` (every live index on it, or just --on when --on is an index); only a pending
// source of an old state file (`pending`, consumed) is read as a source import instead.
struct Input {
  std::optional<pb::SourceImport> pending;
  std::string collection;
  pb::Schema schema;
  std::vector<pb::IndexImport> indexes;

  // The import for a reader that needs `key`: the index keyed by it if there is one, else the
  // first (a source's own index, s<n>, for a source).
  const pb::IndexImport& ImportFor(const std::vector<std::uint32_t>& key) const;
};

// nullopt (after refusing) when the history knows nothing called `on`, or nothing to import it
// by.
std::optional<Input> ResolveInput(const History& h, const std::string& on, const std::string& what);

// Adds the import of `in` that suits `key` to the dataflow of `c` (a pending source: its source
// import); a maintained dataflow starts where that index is readable (History::ReadableFrom).
// Returns the import's id ("" for a pending source).
std::string AddInput(const History& h, const Input& in, const std::vector<std::uint32_t>& key,
                     pb::Command& c);

// A view as create-view and query spell it (tools/ctl/view.h), over --on (`in`) and the
// collections of its --join(s): those resolved into `joined`, the view's plan into `out`. An exit
// code when a collection, column or aggregate is refused (1, as refusals of `what`) or an option
// is malformed (64).
std::optional<int> BuildView(const History& h, const ViewOptions& o, const Input& in,
                             const std::string& what, std::vector<Input>& joined, View& out);

// Adds the imports the view reads to the dataflow of `c`: for --on (`in`) and each of `joined`,
// the index suiting view.import_keys (once each); a maintained dataflow starts where all of them
// are readable. Returns the imports' ids ("" for a pending source).
std::vector<std::string> AddInputs(const History& h, const Input& in,
                                   const std::vector<Input>& joined, const View& view,
                                   pb::Command& c);

// The view options create-view and query share: --join, --join-on, --left, --group-by,
// --aggregate, --top, --by, --per, --offset, --key (with `key_help`).
void AddViewOptions(CLI::App& sub, ViewOptions& view, const std::string& key_help);

// Refused (false) when `id` exists already.
bool IsNew(const History& h, const std::string& id, const std::string& what);

}  // namespace tandem::ctl
