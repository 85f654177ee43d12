// Process-wide logging (spdlog) for every Tandem binary: one line per event, carrying the
// component (supervisor, maint, inter, solo, ctl) and the pid, as text or as JSON lines.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace tandem {

enum class LogFormat { kText, kJson };

Result<spdlog::level::level_enum> ParseLogLevel(std::string_view name);
Result<LogFormat> ParseLogFormat(std::string_view name);

// Installs the default logger (stderr). Call once, early in main.
void InitLogging(std::string component, spdlog::level::level_enum level, LogFormat format);

}  // namespace tandem
