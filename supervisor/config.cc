#include "supervisor/config.h"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "shm/layout.h"

namespace tandem::supervisor {

namespace {

constexpr char kExitCodesHelp[] =
    "\nExit codes:\n"
    "  0        clean shutdown (SIGTERM/SIGINT), or --help\n"
    "  64       bad usage (unknown flag, malformed value)\n"
    "  69       could not bind an endpoint, spawn a runtime or create the segment\n"
    "  70       a runtime exited (with any exit code) without being asked to\n"
    "  75       a runtime made no progress for --runtime-stall-kill (stopped, wedged)\n"
    "  78       impossible configuration (unequal worker counts, segment larger than /dev/shm,\n"
    "           a non-loopback controller endpoint without CURVE, unusable CURVE key files,\n"
    "           a --data-dir that cannot be created or is not a directory)\n"
    "  128+N    a runtime died of signal N (137: SIGKILL, 134: abort)\n"
    "\nParameters (--param / --replica-param NAME=VALUE; replica beats environment beats "
    "default):\n";

std::string ParamsHelp() {
  std::string out;
  for (const ParamDef& d : ParamDefinitions()) {
    const std::string range = d.type == ParamType::kInt
                                  ? ", " + std::to_string(d.min) + " to " + std::to_string(d.max)
                                  : "";
    out += "  " + d.name + " (default " + d.default_value + range +
           (d.live ? ", live" : ", at start") + ")\n      " + d.help + "\n";
  }
  return out;
}

std::string DefaultRuntimeDir() {
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) return xdg;
  return "/tmp";
}

std::vector<std::string> SplitList(const char* text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

Result<std::uint64_t> ParseByteSize(std::string_view text) {
  std::uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || ptr == text.data()) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a size (e.g. 512MiB)");
  }
  std::string unit(ptr, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::uint64_t mult = 1;
  if (unit.empty() || unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kib" || unit == "kb") {
    mult = 1ull << 10;
  } else if (unit == "m" || unit == "mib" || unit == "mb") {
    mult = 1ull << 20;
  } else if (unit == "g" || unit == "gib" || unit == "gb") {
    mult = 1ull << 30;
  } else {
    return Status::InvalidArgument("'" + std::string(text) + "': unknown unit '" + unit + "'");
  }
  if (n > UINT64_MAX / mult)
    return Status::InvalidArgument("'" + std::string(text) + "' is too large");
  return n * mult;
}

// Long (~160 lines) because it declares every flag with its help text, fallback and range, read
// down like a table; checks across flags follow at its end.
FlagsOutcome ParseSupervisorFlags(int argc, const char* const* argv) {
  SupervisorConfig c;
  CLI::App app{
      "tandem-supervisor: creates the replica's shared-memory segment, spawns its runtimes\n"
      "(maintenance + interactive, or one solo runtime), fronts them with one controller\n"
      "endpoint, and takes the whole replica down if any runtime dies (shared fate).",
      "tandem-supervisor"};
  app.footer(std::string(kExitCodesHelp) + ParamsHelp());
  app.get_formatter()->column_width(40);
  // A flag given twice takes its last value, so wrappers can append overrides.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  std::string interactive_runtime, shm_size = "256MiB", log_level = "info", log_format = "text";
  std::vector<std::string> params, replica_params;
  app.add_option("--replica-id", c.replica_id, "this replica's id (names the segment)")
      ->envname("TANDEM_REPLICA_ID")
      ->capture_default_str();
  app.add_option("--workers", c.workers, "worker threads per runtime (N)")
      ->envname("TANDEM_WORKERS")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--interactive-workers", c.interactive_workers,
                 "worker threads of the interactive runtime (default: --workers; must equal it)")
      ->envname("TANDEM_INTERACTIVE_WORKERS")
      ->check(CLI::Range(1, 1024));
  app.add_option("--interactive-runtime", interactive_runtime,
                 "on|off: this replica's override of enable_compute_interactive_runtime "
                 "(default on)")
      ->envname("TANDEM_INTERACTIVE_RUNTIME");
  app.add_option("--controller-listen-addr", c.controller_listen_addr,
                 "ZeroMQ endpoint controllers connect to")
      ->envname("TANDEM_CONTROLLER_LISTEN_ADDR")
      ->capture_default_str();
  app.add_option("--internal-http-listen-addr", c.internal_http_listen_addr,
                 "host:port of /livez, /readyz, /metrics")
      ->envname("TANDEM_INTERNAL_HTTP_LISTEN_ADDR")
      ->capture_default_str();
  app.add_option("--endpoints-file", c.endpoints_file,
                 "once both endpoints are bound, write the addresses actually bound here "
                 "(controller_listen_addr=... and internal_http_listen_addr=..., one per line; a "
                 "port 0 above is the kernel's choice; a wildcard host stays one), atomically; "
                 "removed at exit unless replaced since")
      ->envname("TANDEM_ENDPOINTS_FILE");
  app.add_option("--shm-size", shm_size, "size of the shared-memory segment, reserved at start")
      ->envname("TANDEM_SHM_SIZE")
      ->capture_default_str();
  app.add_option("--shm-name", c.shm_name, "segment name in /dev/shm (default tandem.<replica-id>)")
      ->envname("TANDEM_SHM_NAME");
  app.add_option("--slots-per-row", c.slots_per_row, "registry slots per worker ordinal")
      ->envname("TANDEM_SLOTS_PER_ROW")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--peek-ring-bytes", c.peek_ring_bytes,
                 "bytes of each of the two peek rings in the segment (the peek fast path, DESIGN "
                 "§14): a power of two from 4096 to 2^30; 0 sends peeks and their answers over the "
                 "runtime channel only")
      ->envname("TANDEM_PEEK_RING_BYTES")
      ->check([](const std::string& text) -> std::string {
        std::uint64_t n = 0;
        if (!CLI::detail::lexical_cast(text, n)) return "not a number of bytes: " + text;
        if (n == 0 || shm::ValidPeekRingBytes(n)) return "";
        return "a power of two from 4096 to 2^30, or 0 (no fast path): " + text;
      })
      ->capture_default_str();
  app.add_option("--runtime-dir", c.runtime_dir,
                 "where the replica's 0700 directory of runtime sockets is made "
                 "(default $XDG_RUNTIME_DIR or /tmp; created 0700 with its parents if missing)")
      ->envname("TANDEM_RUNTIME_DIR");
  app.add_option("--grace-period", c.grace_period_s,
                 "seconds runtimes get to exit after SIGTERM before SIGKILL")
      ->envname("TANDEM_GRACE_PERIOD")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--startup-timeout", c.startup_timeout_s,
                 "seconds runtimes get to attach and report ready")
      ->envname("TANDEM_STARTUP_TIMEOUT")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->envname("TANDEM_LOG_LEVEL")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text|json")
      ->envname("TANDEM_LOG_FORMAT")
      ->capture_default_str();
  app.add_option("--param", params,
                 "NAME=VALUE, environment-wide parameter (repeatable; env TANDEM_PARAMS, "
                 "comma-separated)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--replica-param", replica_params,
                 "NAME=VALUE, this replica's override (repeatable; env TANDEM_REPLICA_PARAMS)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--worker-binary", c.worker_binary,
                 "the runtime executable (default: tandem-worker beside this binary)")
      ->envname("TANDEM_WORKER_BINARY");
  app.add_option("--data-dir", c.data_dir,
                 "DIR: where tables keep their durable logs (created 0700 with its parents; "
                 "passed to the maintenance or solo runtime); without it table sources are "
                 "refused")
      ->envname("TANDEM_DATA_DIR");
  app.add_option("--reader-group", c.reader_group,
                 "a group (name or number) whose members may read indexes in place with "
                 "LocalReader: the segment becomes 0640 and its reader table 0660, that group's")
      ->envname("TANDEM_READER_GROUP");
  app.add_flag("--keep-segment-on-crash", c.keep_segment_on_crash,
               "leave the segment in /dev/shm after a crash, for tandem-shm post-mortem")
      ->envname("TANDEM_KEEP_SEGMENT_ON_CRASH");
  AddGuardFlags(app, c.guards);

  auto* secret_key =
      app.add_option("--curve-secret-key", c.curve_secret_key,
                     "FILE: the controller endpoint's CURVE secret key (mode 0600; tandem-ctl "
                     "keygen): controllers must authenticate with an authorized key")
          ->envname("TANDEM_CURVE_SECRET_KEY");
  auto* authorized_keys =
      app.add_option("--curve-authorized-keys", c.curve_authorized_keys,
                     "DIR: one authorized client public key per file (reread on SIGHUP)")
          ->envname("TANDEM_CURVE_AUTHORIZED_KEYS");
  secret_key->needs(authorized_keys);
  authorized_keys->needs(secret_key);
  app.add_flag("--allow-insecure-endpoint", c.allow_insecure_endpoint,
               "let the controller endpoint listen on a non-loopback address without CURVE")
      ->envname("TANDEM_ALLOW_INSECURE_ENDPOINT");

  FlagsOutcome out;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out.output = app.help();
    out.exit_code = kExitOk;
    return out;
  } catch (const CLI::ParseError& e) {
    out.output = std::string("tandem-supervisor: ") + e.what() + "\nRun with --help for usage.";
    out.exit_code = kExitUsage;
    return out;
  }
  auto usage = [&](const Status& s) {
    out.output = "tandem-supervisor: " + s.message();
    out.exit_code = kExitUsage;
    return out;
  };
  if (params.empty()) params = SplitList(std::getenv("TANDEM_PARAMS"));
  if (replica_params.empty()) replica_params = SplitList(std::getenv("TANDEM_REPLICA_PARAMS"));
  for (const auto& p : params) {
    if (Status s = c.params.SetAssignment(ConfigSet::Scope::kEnvironment, p); !s.ok())
      return usage(s);
  }
  for (const auto& p : replica_params) {
    if (Status s = c.params.SetAssignment(ConfigSet::Scope::kReplica, p); !s.ok()) return usage(s);
  }
  if (Status s = CheckGuards(c.guards); !s.ok()) return usage(s);
  if (!c.guards.enable_fault_injection) {
    for (const auto& [name, value] : c.params.Effective()) {
      if (IsFaultInjectionParam(name) && c.params.SourceOf(name) != "default") {
        return usage(Status::InvalidArgument("parameter " + name +
                                             " injects faults; start with "
                                             "--enable-fault-injection to allow it"));
      }
    }
  }
  if (!interactive_runtime.empty()) {
    if (Status s = c.params.Set(ConfigSet::Scope::kReplica, kEnableInteractiveRuntime,
                                interactive_runtime);
        !s.ok()) {
      return usage(Status::InvalidArgument("--interactive-runtime: " + s.message()));
    }
  }
  auto size = ParseByteSize(shm_size);
  if (!size.ok()) return usage(Status::InvalidArgument("--shm-size: " + size.status().message()));
  c.shm_size = *size;
  auto level = ParseLogLevel(log_level);
  if (!level.ok()) return usage(level.status());
  c.log_level = *level;
  auto format = ParseLogFormat(log_format);
  if (!format.ok()) return usage(format.status());
  c.log_format = *format;
  if (c.replica_id.empty() || c.replica_id.size() > 48 ||
      c.replica_id.find_first_of("/ \t\n") != std::string::npos) {
    return usage(
        Status::InvalidArgument("--replica-id must be 1-48 characters without '/' or spaces"));
  }
  if (c.shm_name.empty()) c.shm_name = "tandem." + c.replica_id;
  if (!c.data_dir.empty()) {
    // Absolute: the runtimes may run elsewhere, and the start-up log names the real place.
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::absolute(c.data_dir, ec).lexically_normal();
    if (ec) return usage(Status::InvalidArgument("--data-dir " + c.data_dir + ": " + ec.message()));
    std::string text = dir.string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    c.data_dir = std::move(text);
  }
  if (c.runtime_dir.empty()) c.runtime_dir = DefaultRuntimeDir();
  if (c.worker_binary.empty()) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    c.worker_binary = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "tandem-worker";
  }
  out.config = std::move(c);
  return out;
}

Status EnsureDataDir(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status)) {
    if (std::filesystem::is_directory(status)) return Status::Ok();
    return Status::FailedPrecondition("--data-dir " + path + " exists and is not a directory");
  }
  const mode_t old = umask(0077);
  std::filesystem::create_directories(path, ec);
  umask(old);
  if (ec) {
    return Status::FailedPrecondition("could not create --data-dir " + path + ": " + ec.message());
  }
  return Status::Ok();
}

Status CheckConfiguration(const SupervisorConfig& c) {
  if (c.two_runtime() && c.effective_interactive_workers() != c.workers) {
    return Status::FailedPrecondition(
        "the maintenance and interactive runtimes must have the same number of workers "
        "(worker i of one pairs with worker i of the other), but maintenance has " +
        std::to_string(c.workers) + " and interactive has " +
        std::to_string(c.effective_interactive_workers()));
  }
  if (access(c.worker_binary.c_str(), X_OK) != 0) {
    return Status::FailedPrecondition("runtime executable '" + c.worker_binary +
                                      "' is missing or not executable (see --worker-binary)");
  }
  if (!c.reader_group.empty()) {
    if (auto gid = LookupGroup(c.reader_group); !gid.ok()) return gid.status();
  }
  // ipc:// endpoints are Unix socket paths: at most 107 bytes.
  const std::string longest =
      c.runtime_dir + "/tandem." + c.replica_id + ".4194304/interactive.sock";
  if (longest.size() > 100) {
    return Status::FailedPrecondition("--runtime-dir '" + c.runtime_dir +
                                      "' is too long for Unix socket paths");
  }
  return Status::Ok();
}

Result<gid_t> LookupGroup(const std::string& group) {
  std::vector<char> buf(16384);
  struct group entry {};
  struct group* found = nullptr;
  if (getgrnam_r(group.c_str(), &entry, buf.data(), buf.size(), &found) == 0 && found) {
    return found->gr_gid;
  }
  gid_t number = 0;
  const auto [end, ec] = std::from_chars(group.data(), group.data() + group.size(), number);
  if (ec == std::errc() && end == group.data() + group.size() && !group.empty()) return number;
  return Status::FailedPrecondition("--reader-group '" + group +
                                    "': no such group (a group name, or a number)");
}

std::string DescribeConfiguration(const SupervisorConfig& c) {
  std::ostringstream s;
  s << "replica_id=" << c.replica_id << " mode=" << (c.two_runtime() ? "two-runtime" : "solo")
    << " workers=" << c.workers << " interactive_workers=" << c.effective_interactive_workers()
    << " controller_listen_addr=" << c.controller_listen_addr
    << " internal_http_listen_addr=" << c.internal_http_listen_addr
    << " endpoints_file=" << (c.endpoints_file.empty() ? std::string("none") : c.endpoints_file)
    << " shm_name=" << c.shm_name << " shm_size=" << c.shm_size
    << " slots_per_row=" << c.slots_per_row << " peek_ring_bytes=" << c.peek_ring_bytes
    << " runtime_dir=" << c.runtime_dir
    << " data_dir=" << (c.data_dir.empty() ? std::string("none") : c.data_dir)
    << " grace_period_s=" << c.grace_period_s << " startup_timeout_s=" << c.startup_timeout_s
    << " worker_binary=" << c.worker_binary
    << " keep_segment_on_crash=" << (c.keep_segment_on_crash ? "true" : "false")
    << " reader_group=" << (c.reader_group.empty() ? std::string("none") : c.reader_group)
    << " controller_auth="
    << (c.curve() ? "curve(secret_key=" + c.curve_secret_key +
                        " authorized_keys=" + c.curve_authorized_keys + ")"
                  : std::string(c.allow_insecure_endpoint ? "none(insecure allowed)" : "none"))
    << DescribeGuards(c.guards);
  for (const auto& [name, value] : c.params.Effective()) {
    s << " " << name << "=" << value << " (" << c.params.SourceOf(name) << ")";
  }
  return s.str();
}

}  // namespace tandem::supervisor
