// What create-index, create-view and create-dataflow share: a new maintained dataflow, its --on
// input, and sending it through a controller session.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/ctl/session.h"

namespace tandem::ctl {

// A CreateDataflow command for a maintained dataflow from as_of 0.
pb::Command NewDataflow(const std::string& debug_name);

// "k,v": the columns' names (or cN).
std::string ColumnsText(const std::vector<std::uint32_t>& cols, const pb::Schema& schema);

// Runs `command` through a controller session and reports the created ids.
int SubmitCreate(Session& s, const pb::Command& command, const std::string& what,
                 const std::string& human, const std::function<void(History&)>& also = {});

// Where --on comes from: a pending source (consumed) or a collection the history knows.
struct Input {
  std::optional<pb::SourceImport> pending;
  pb::Schema schema;
};

// nullopt (after refusing) when the history knows nothing called `on`.
std::optional<Input> ResolveInput(const History& h, const std::string& on, const std::string& what);

// Refused (false) when `id` exists already.
bool IsNew(const History& h, const std::string& id, const std::string& what);

}  // namespace tandem::ctl
