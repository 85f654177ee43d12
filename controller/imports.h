// How a new dataflow reads what the history defines (DESIGN §8): by importing an index of it.
// A source, view or index named as an input (`on`) resolves to the collection a plan reads (Get)
// and the live indexes it may be imported by; the import chosen for a reader is the index keyed
// as the reader needs (then the runtime reads the arrangement in place), else the first — a
// source's own index s<n> for a source.
//
// Invariant (I1 for imports): a maintained dataflow starts (as_of) no earlier than every index it
// imports is readable (History::ReadableFrom: its dataflow's as_of or the last compaction the
// history allowed for it), since the supervisor refuses an import below the allowed frontier.
// A one-shot read (controller/one_shot.h) picks its own time.
//
// A pending source (controller/history.h) is read as a source import of its own instead, and the
// dataflow that reads it takes its line out of the history once accepted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "controller/history.h"

namespace tandem::controller {

// A CreateDataflow command for a maintained dataflow from as_of 0.
pb::Command NewDataflow(const std::string& debug_name);

// Where an input comes from. `collection` is what a plan reads (Get) and an index export is on:
// the input itself, or the collection of it when it names an index. A dataflow reads it by
// importing one of `indexes` (every live index on it, or just the input when it is an index);
// only a pending source (`pending`) is read as a source import instead.
struct Input {
  std::optional<pb::SourceImport> pending;
  std::string collection;
  pb::Schema schema;
  std::vector<pb::IndexImport> indexes;

  // The import for a reader that needs `key`: the index keyed by it if there is one, else the
  // first (a source's own index, s<n>, for a source).
  const pb::IndexImport& ImportFor(const std::vector<std::uint32_t>& key) const;
};

// Input `on` of the history. NotFound when the history knows nothing live called `on`;
// FailedPrecondition when it has no index to import it by.
Result<Input> ResolveInput(const History& h, const std::string& on);

// Adds the import of `in` that suits `key` to the dataflow of `c` (a pending source: its source
// import); a maintained dataflow starts where that index is readable. Returns the import's id
// ("" for a pending source).
std::string AddInput(const History& h, const Input& in, const std::vector<std::uint32_t>& key,
                     pb::Command& c);

// Adds the imports a reader of `in` and `joined` needs to the dataflow of `c`: for `in` and each
// of `joined`, the index suiting import_keys[0] and import_keys[1 + i] (once each); a maintained
// dataflow starts where all of them are readable. Returns the imports' ids ("" for a pending
// source). REQUIRES: import_keys.size() == 1 + joined.size().
std::vector<std::string> AddInputs(const History& h, const Input& in,
                                   const std::vector<Input>& joined,
                                   const std::vector<std::vector<std::uint32_t>>& import_keys,
                                   pb::Command& c);

}  // namespace tandem::controller
