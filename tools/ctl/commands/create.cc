#include "tools/ctl/commands/create.h"

#include <algorithm>

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

pb::Command NewDataflow(const std::string& debug_name) {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name(debug_name);
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  return c;
}

std::string ColumnsText(const std::vector<std::uint32_t>& cols, const pb::Schema& schema) {
  std::string out;
  for (auto c : cols) out += (out.empty() ? "" : ",") + ColumnName(schema, static_cast<int>(c));
  return out;
}

const pb::IndexImport& Input::ImportFor(const std::vector<std::uint32_t>& key) const {
  for (const auto& i : indexes) {
    if (std::equal(i.key().begin(), i.key().end(), key.begin(), key.end())) return i;
  }
  return indexes.front();
}

std::optional<Input> ResolveInput(const History& h, const std::string& on,
                                  const std::string& what) {
  Input in;
  in.collection = on;
  in.pending = h.PendingSource(on);
  if (in.pending) {
    in.schema = in.pending->schema();
    return in;
  }
  const auto info = h.Lookup(on);
  if (!info || !h.LiveIds().count(on)) {
    Refused(what, on + " is not a source or collection this controller created (state file " +
                      h.path() + "); create it first, e.g. create-source " + on + " --log FILE");
    return std::nullopt;
  }
  in.schema = info->schema;
  auto add = [&](const std::string& id, const std::string& collection,
                 const std::vector<std::uint32_t>& key) {
    pb::IndexImport i;
    i.set_id(id);
    i.set_on(collection);
    *i.mutable_schema() = in.schema;
    for (auto k : key) i.add_key(k);
    in.indexes.push_back(std::move(i));
  };
  if (info->is_index) {
    in.collection = info->on;
    add(on, info->on, info->key);
  } else {
    for (const auto& [id, key] : h.IndexesOn(on)) add(id, on, key);
  }
  if (in.indexes.empty()) {
    Refused(what, on + " has no index, so nothing can read it: a dataflow reads another's "
                       "collection by importing an index of it");
    return std::nullopt;
  }
  return in;
}

std::string AddInput(const History& h, const Input& in, const std::vector<std::uint32_t>& key,
                     pb::Command& c) {
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (in.pending) {
    *d->add_source_imports() = *in.pending;
    return "";
  }
  const pb::IndexImport& import = in.ImportFor(key);
  *d->add_index_imports() = import;
  if (d->class_() == pb::MAINTAINED) {
    d->mutable_as_of()->Clear();
    d->mutable_as_of()->add_elements(h.ReadableFrom(import.id()));
  }
  return import.id();
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

std::vector<std::string> AddInputs(const History& h, const Input& in,
                                   const std::vector<Input>& joined, const View& view,
                                   pb::Command& c) {
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  std::vector<std::string> ids;
  std::uint64_t as_of = 0;
  auto add = [&](const Input& input, const std::vector<std::uint32_t>& key) {
    if (input.pending) {
      for (const auto& s : d->source_imports()) {
        if (s.id() == input.pending->id()) return;
      }
      *d->add_source_imports() = *input.pending;
      ids.emplace_back();
      return;
    }
    const pb::IndexImport& import = input.ImportFor(key);
    for (const auto& i : d->index_imports()) {
      if (i.id() == import.id()) return;
    }
    *d->add_index_imports() = import;
    ids.push_back(import.id());
    as_of = std::max(as_of, h.ReadableFrom(import.id()));
  };
  add(in, view.import_keys.at(0));
  for (std::size_t i = 0; i < joined.size(); ++i) add(joined[i], view.import_keys.at(i + 1));
  if (d->class_() == pb::MAINTAINED && d->index_imports_size() > 0) {
    d->mutable_as_of()->Clear();
    d->mutable_as_of()->add_elements(as_of);
  }
  return ids;
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
