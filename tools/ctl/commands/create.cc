#include "tools/ctl/commands/create.h"

#include <algorithm>

#include "ipc/validate.h"
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

std::optional<int> BuildView(const ViewOptions& o, const Input& in, const std::string& what,
                             View& out) {
  if (o.group_by) {
    auto g = ParseColumns(*o.group_by, in.schema);
    if (!g.ok()) return Refused(what, "--group-by: " + g.status().message());
    out.group = *g;
  }
  if (!o.group_by && o.aggregates.empty()) {
    auto* mfp = out.plan.mutable_mfp();
    mfp->mutable_input()->mutable_get()->set_id(in.collection);
    mfp->mutable_mfp();
  } else {
    auto* r = out.plan.mutable_reduce();
    r->mutable_input()->mutable_get()->set_id(in.collection);
    for (auto g : out.group) r->add_group_key(g);
    for (const auto& text : o.aggregates) {
      auto* agg = r->add_aggregates();
      const auto colon = text.find(':');
      const std::string func = text.substr(0, colon);
      if (func == "count" && colon == std::string::npos) {
        agg->set_func(pb::COUNT);
        continue;
      }
      if (colon == std::string::npos || (func != "sum" && func != "min" && func != "max")) {
        return Usage("--aggregate \"" + text + "\": expected count, sum:COL, min:COL or max:COL");
      }
      agg->set_func(func == "sum" ? pb::SUM : func == "min" ? pb::MIN : pb::MAX);
      auto col = ParseColumns(text.substr(colon + 1), in.schema);
      if (!col.ok()) return Refused(what, "--aggregate " + text + ": " + col.status().message());
      if (col->size() != 1) return Usage("--aggregate " + text + ": one column");
      agg->set_column((*col)[0]);
    }
  }
  const auto planned = ipc::PlanSchema(out.plan, {{in.collection, in.schema}});
  if (!planned.ok()) return Refused(what, planned.status().message());
  out.schema = *planned;
  if (o.key) {
    auto parsed = ParseColumns(*o.key, out.schema);
    if (!parsed.ok()) return Refused(what, "--key: " + parsed.status().message());
    out.key = *parsed;
  } else {
    for (std::uint32_t i = 0; i < out.group.size(); ++i) out.key.push_back(i);
    if (out.key.empty()) out.key.push_back(0);
  }
  return std::nullopt;
}

// Refused (nullopt) when `id` exists already.
bool IsNew(const History& h, const std::string& id, const std::string& what) {
  if (!h.LiveIds().count(id)) return true;
  Refused(what, id + " already exists in " + h.path());
  return false;
}

}  // namespace tandem::ctl
