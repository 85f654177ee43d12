#include "tools/ctl/commands/create.h"

#include <utility>

#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {

using tools::JsonWriter;

// Runs `command` through a session and reports the created ids.
int SubmitCreate(Session& s, const pb::Command& command, const std::string& what,
                 const std::string& human, const std::function<void(History&)>& also) {
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  auto ok = s.Submit(command, true, what, also);
  if (!ok.ok()) return s.Ended(ok.status());
  if (!*ok) return kExitFailed;
  PrintOk(
      what,
      [&](JsonWriter& json) {
        json.Key("created").BeginArray();
        const auto& d = command.create_dataflow().desc();
        for (const auto& x : d.source_imports()) json.String(x.id());
        for (const auto& x : d.objects_to_build()) json.String(x.id());
        for (const auto& x : d.index_exports()) json.String(x.id());
        json.EndArray();
      },
      human);
  return kExitOk;
}

std::string ColumnsText(const std::vector<std::uint32_t>& cols, const pb::Schema& schema) {
  std::string out;
  for (auto c : cols) out += (out.empty() ? "" : ",") + ColumnName(schema, static_cast<int>(c));
  return out;
}

std::optional<Input> ResolveInput(const History& h, const std::string& on,
                                  const std::string& what) {
  auto in = controller::ResolveInput(h, on);
  if (!in.ok()) {
    Refused(what, in.status().message());
    return std::nullopt;
  }
  return std::move(in).value();
}

std::optional<int> BuildView(const History& h, const ViewOptions& o, const Input& in,
                             const std::string& what, std::vector<Input>& joined, View& out) {
  std::vector<ViewInput> inputs = {{in.collection, in.schema}};
  for (const auto& j : o.joins) {
    auto other = ResolveInput(h, j.with, what + ": --join");
    if (!other) return kExitFailed;
    inputs.push_back({other->collection, other->schema});
    joined.push_back(std::move(*other));
  }
  if (auto refused = PlanView(o, inputs, out)) {
    if (refused->usage) return Usage(refused->why);
    return Refused(what, refused->why);
  }
  return std::nullopt;
}

void AddViewOptions(CLI::App& sub, ViewOptions& view, const std::string& key_help) {
  ViewOptions* v = &view;
  // --join-on and --left belong to the --join before them: taken in command-line order.
  sub.add_option_function<std::string>(
         "--join",
         [v](const std::string& id) {
           v->joins.push_back({id, {}, false});
         },
         "ID: join with this collection (or index); repeatable, left-deep")
      ->trigger_on_parse();
  sub.add_option_function<std::string>(
         "--join-on",
         [v](const std::string& pair) {
           if (v->joins.empty()) {
             if (!v->misplaced) v->misplaced = "--join-on " + pair;
             return;
           }
           v->joins.back().on.push_back(pair);
         },
         "LEFT=RIGHT: a key column pair of the --join before it (repeatable)")
      ->trigger_on_parse();
  sub.add_flag_callback(
         "--left",
         [v] {
           if (v->joins.empty()) {
             if (!v->misplaced) v->misplaced = "--left";
             return;
           }
           v->joins.back().left_outer = true;
         },
         "the --join before it is a left outer join")
      ->trigger_on_parse();
  AddOptional(sub, "--group-by", &view.group_by, "COLS to group by");
  sub.add_option("--aggregate", view.aggregates, std::string(kAggregateHelp) + " (repeatable)")
      ->allow_extra_args(false);
  AddOptional(sub, "--top", &view.top, "N: the first N rows (per --per group) in --by order");
  AddOptional(sub, "--by", &view.by, "COL[:desc][:nulls-last],...: the order of --top");
  AddOptional(sub, "--per", &view.per, "COLS: --top per group of these columns");
  AddOptional(sub, "--offset", &view.offset, "N: --top skips the first N rows");
  AddOptional(sub, "--key", &view.key, key_help);
}

// Refused (nullopt) when `id` exists already.
bool IsNew(const History& h, const std::string& id, const std::string& what) {
  if (!h.LiveIds().count(id)) return true;
  Refused(what, id + " already exists in " + h.path());
  return false;
}

}  // namespace tandem::ctl
