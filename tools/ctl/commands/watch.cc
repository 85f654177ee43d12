// watch: prints every response as it arrives, in an observer session.
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

int RunWatch(const std::optional<std::string>& for_text, Session& s) {
  std::optional<double> seconds;
  if (for_text) {
    auto parsed = ParseSeconds(*for_text, "--for");
    if (!parsed.ok()) return Usage(parsed.status().message());
    seconds = *parsed;
  }
  if (auto code = s.Open(Session::Mode::kObserve)) return *code;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(seconds.value_or(0) * 1000));
  while (!Interrupted()) {
    if (seconds && std::chrono::steady_clock::now() >= deadline) break;
    auto r = s.client().Receive(std::chrono::milliseconds(100));
    if (r) PrintResponse(*r);
    // Superseded or disconnected: nothing more will come on this session; say so and stop.
    if (s.client().superseded() || s.client().lost()) return s.Ended(Status::Ok());
  }
  return kExitOk;
}

}  // namespace

Subcommand AddWatch(CLI::App& app) {
  auto for_text = std::make_shared<std::optional<std::string>>();
  auto* sub = app.add_subcommand("watch", "print every response as it arrives");
  sub->footer(
      "Prints every response as it arrives, until interrupted (exit 0), --for passes (exit 0),\n"
      "or the session ends: superseded (75), replica gone (69).");
  AddOptional(*sub, "--for", for_text.get(), "SECONDS to watch (default: until interrupted)");
  return {sub,
          [for_text](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunWatch(*for_text, s);
          },
          History::Access::kRead};
}

}  // namespace tandem::ctl
