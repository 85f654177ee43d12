// create-dataflow: any dataflow, in the protocol's JSON form.
#include <google/protobuf/util/json_util.h>

#include <fstream>

#include "tools/ctl/commands/commands.h"
#include "tools/ctl/commands/create.h"

namespace tandem::ctl {
namespace {

int RunCreateDataflow(const std::string& file, Session& s) {
  std::ifstream f(file);
  if (!f) return Usage("cannot read " + file);
  const std::string text{std::istreambuf_iterator<char>(f), {}};
  pb::Command c;
  if (auto parsed = ipc::CommandFromJson(text); parsed.ok() && parsed->has_create_dataflow()) {
    c = *parsed;
  } else {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto st = google::protobuf::util::JsonStringToMessage(
        text, c.mutable_create_dataflow()->mutable_desc(), options);
    if (!st.ok()) {
      return Usage(file + ": neither a CreateDataflow command nor a DataflowDescription (" +
                   (parsed.ok() ? std::string("a command, but not CreateDataflow")
                                : parsed.status().message()) +
                   ")");
    }
  }
  std::string ids;
  const auto& d = c.create_dataflow().desc();
  for (const auto& x : d.index_exports()) ids += (ids.empty() ? "" : ", ") + x.id();
  return SubmitCreate(s, Canonical(c), "create-dataflow " + file,
                      "created dataflow " + (d.debug_name().empty() ? file : d.debug_name()) +
                          (ids.empty() ? "" : " (indexes " + ids + ")"));
}

}  // namespace

Subcommand AddCreateDataflow(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("create-dataflow", "any dataflow, in the protocol's JSON form");
  sub->footer("The protocol's JSON form of a CreateDataflow command or of a DataflowDescription.");
  sub->add_option("FILE", *file, "FILE.json")->required();
  return {sub, [file](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunCreateDataflow(*file, s);
          }};
}

}  // namespace tandem::ctl
