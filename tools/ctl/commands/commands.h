// tandem-ctl's subcommands, one file each. Every Add* defines its subcommand of `app` (name,
// help, options and positionals, bound to state the returned Subcommand owns) and returns what
// runs it once the command line is parsed, with the global options and the loaded history.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>

#include "tools/ctl/schema.h"
#include "tools/ctl/session.h"

namespace tandem::ctl {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int(const Globals&, History)> run;
  // How it uses the state file (--state); nullopt: not at all (not loaded, not locked).
  std::optional<History::Access> state = History::Access::kWrite;
};

Subcommand AddCreateSource(CLI::App& app);
Subcommand AddCreateIndex(CLI::App& app);
Subcommand AddCreateView(CLI::App& app);
Subcommand AddCreateDataflow(CLI::App& app);
Subcommand AddPeek(CLI::App& app);
Subcommand AddFrontiers(CLI::App& app);
Subcommand AddWatch(CLI::App& app);
Subcommand AddAllowCompaction(CLI::App& app);
Subcommand AddDrop(CLI::App& app);
Subcommand AddRun(CLI::App& app);
Subcommand AddKeygen(CLI::App& app);
Subcommand AddQuery(CLI::App& app);
Subcommand AddWrite(CLI::App& app);
Subcommand AddLoad(CLI::App& app);
Subcommand AddSubscribe(CLI::App& app);
Subcommand AddStatus(CLI::App& app);
Subcommand AddReplay(CLI::App& app);

// An option taking one value, kept in `*into` when given (CLI11 leaves it unset otherwise).
CLI::Option* AddOptional(CLI::App& app, const std::string& name, std::optional<std::string>* into,
                         const std::string& help);

}  // namespace tandem::ctl
