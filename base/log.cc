#include "base/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <string>

#include "base/json.h"

namespace tandem {

namespace {

// `s` as a JSON string (base/json.h's escaping), quotes included.
void AppendJsonString(std::string_view s, spdlog::memory_buf_t& out) {
  out.push_back('"');
  const std::string escaped = JsonEscape(s);
  out.append(std::string_view(escaped));
  out.push_back('"');
}

// {"ts":"2026-11-29T15:55:48.123456Z","level":"info","component":"supervisor","pid":42,"msg":"..."}
class JsonFormatter final : public spdlog::formatter {
 public:
  explicit JsonFormatter(std::string component) : component_(std::move(component)) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch - secs);
    const std::time_t t = secs.count();
    std::tm tm{};
    gmtime_r(&t, &tm);
    char ts[64];
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long>(micros.count()));
    dest.append(std::string_view("{\"ts\":\""));
    dest.append(std::string_view(ts));
    dest.append(std::string_view("\",\"level\":"));
    const auto level = spdlog::level::to_string_view(msg.level);
    AppendJsonString(std::string_view(level.data(), level.size()), dest);
    dest.append(std::string_view(",\"component\":"));
    AppendJsonString(component_, dest);
    dest.append(std::string_view(",\"pid\":"));
    dest.append(std::to_string(getpid()));
    dest.append(std::string_view(",\"msg\":"));
    AppendJsonString(std::string_view(msg.payload.data(), msg.payload.size()), dest);
    dest.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>(component_);
  }

 private:
  std::string component_;
};

}  // namespace

Result<spdlog::level::level_enum> ParseLogLevel(std::string_view name) {
  for (auto level :
       {spdlog::level::trace, spdlog::level::debug, spdlog::level::info, spdlog::level::warn,
        spdlog::level::err, spdlog::level::critical, spdlog::level::off}) {
    const auto n = spdlog::level::to_string_view(level);
    if (name == std::string_view(n.data(), n.size())) return level;
  }
  if (name == "warning" || name == "warn") return spdlog::level::warn;
  if (name == "error") return spdlog::level::err;
  return Status::InvalidArgument("unknown log level '" + std::string(name) +
                                 "' (trace, debug, info, warn, error, critical, off)");
}

Result<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return Status::InvalidArgument("unknown log format '" + std::string(name) + "' (text, json)");
}

void InitLogging(std::string component, spdlog::level::level_enum level, LogFormat format) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(component, sink);
  if (format == LogFormat::kJson) {
    logger->set_formatter(std::make_unique<JsonFormatter>(component));
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %^%-5l%$ " + component + "[%P] %v",
                        spdlog::pattern_time_type::utc);
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace tandem
