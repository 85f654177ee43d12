// What create-index, create-view, create-dataflow and query share: a new dataflow and its --on
// input (the index it imports: controller/imports.h), the plan of a view, and sending it through
// a controller session.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "controller/imports.h"
#include "tools/ctl/session.h"
#include "tools/ctl/view.h"

namespace tandem::ctl {

using controller::AddInput;
using controller::AddInputs;
using controller::Input;
using controller::NewDataflow;

// "k,v": the columns' names (or cN).
std::string ColumnsText(const std::vector<std::uint32_t>& cols, const pb::Schema& schema);

// Runs `command` through a controller session and reports the created ids.
int SubmitCreate(Session& s, const pb::Command& command, const std::string& what,
                 const std::string& human, const std::function<void(History&)>& also = {});

// controller::ResolveInput of `on`; nullopt (after refusing, as a refusal of `what`) when the
// history knows nothing called `on`, or nothing to import it by.
std::optional<Input> ResolveInput(const History& h, const std::string& on, const std::string& what);

// A view as create-view and query spell it (tools/ctl/view.h), over --on (`in`) and the
// collections of its --join(s): those resolved into `joined`, the view's plan into `out`. An exit
// code when a collection, column or aggregate is refused (1, as refusals of `what`) or an option
// is malformed (64).
std::optional<int> BuildView(const History& h, const ViewOptions& o, const Input& in,
                             const std::string& what, std::vector<Input>& joined, View& out);

// The view options create-view and query share: --join, --join-on, --left, --group-by,
// --aggregate, --top, --by, --per, --offset, --key (with `key_help`).
void AddViewOptions(CLI::App& sub, ViewOptions& view, const std::string& key_help);

// Refused (false) when `id` exists already.
bool IsNew(const History& h, const std::string& id, const std::string& what);

}  // namespace tandem::ctl
