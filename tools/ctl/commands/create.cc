#include "tools/ctl/commands/create.h"

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

// nullopt (after refusing) when the history knows nothing called `on`.
std::optional<Input> ResolveInput(const History& h, const std::string& on,
                                  const std::string& what) {
  Input in;
  in.pending = h.PendingSource(on);
  if (in.pending) {
    in.schema = in.pending->schema();
  } else if (auto info = h.Lookup(on); info && h.LiveIds().count(on)) {
    in.schema = info->schema;
  } else {
    Refused(what, on + " is not a source or collection this controller created (state file " +
                      h.path() + "); create it first, e.g. create-source " + on + " --log FILE");
    return std::nullopt;
  }
  return in;
}

// Refused (nullopt) when `id` exists already.
bool IsNew(const History& h, const std::string& id, const std::string& what) {
  if (!h.LiveIds().count(id)) return true;
  Refused(what, id + " already exists in " + h.path());
  return false;
}

}  // namespace tandem::ctl
