// tandem-worker: the compute runtime (see runtime.h and README.md). Spawned by tandem-supervisor.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "base/log.h"
#include "workers/runtime.h"

int main(int argc, char** argv) {
  using namespace tandem::workers;
  RuntimeOptions o;
  std::string role, log_level = "info", log_format = "text";
  CLI::App app{"tandem-worker: a Tandem compute runtime; started by tandem-supervisor",
               "tandem-worker"};
  app.add_option("--role", role, "solo | maintenance | interactive")->required();
  app.add_option("--workers", o.workers, "worker threads (N)")->check(CLI::Range(1, 1024));
  app.add_option("--segment", o.segment, "shared-memory segment name")->required();
  app.add_option("--channel", o.channel, "supervisor channel (ipc://…)")->required();
  app.add_option("--replica-id", o.replica_id, "replica id");
  app.add_option("--log-level", log_level);
  app.add_option("--log-format", log_format);
  app.add_option("--max-result-size", o.max_result_size,
                 "max_result_size: the largest peek answer, in bytes")
      ->check(CLI::Range(std::size_t{1}, tandem::workers::kMaxMaxResultSize));
  app.add_option("--max-one-shot-memory", o.max_one_shot_memory,
                 "max_one_shot_memory: the most bytes of rows a one-shot's operators may make")
      ->check(
          CLI::Range(tandem::workers::kMinMaxOneShotMemory, tandem::workers::kMaxMaxOneShotMemory));
  app.add_option("--subscribe-batch-bytes", o.subscribe_batch_bytes,
                 "subscribe_batch_bytes: the most updates' bytes in one SubscribeBatch")
      ->check(CLI::Range(tandem::workers::kMinSubscribeBatchBytes,
                         tandem::workers::kMaxSubscribeBatchBytes));
  app.add_option("--data-dir", o.data_dir,
                 "where tables keep their durable logs (maintenance, solo; DESIGN §9)");
  app.add_option("--max-table-backlog-bytes", o.max_table_backlog_bytes,
                 "bytes of writes one table may hold that its index has not taken yet")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--reader-table-fd", o.reader_table_fd,
                 "the inherited descriptor of the reader table (a rendering runtime's; without it "
                 "the table is taken from the segment's reader-table socket)")
      ->check(CLI::NonNegativeNumber);
  std::vector<int> ring_fds;
  app.add_option("--peek-ring-fds", ring_fds,
                 "R,A: the inherited eventfds of the peek request and answer rings' wake-ups (the "
                 "peek fast path, DESIGN §14); without it peeks take the channel")
      ->delimiter(',')
      ->expected(2)
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  if (ring_fds.size() == 2) {
    o.peek_request_fd = ring_fds[0];
    o.peek_answer_fd = ring_fds[1];
  }
  if (auto parsed = tandem::ParseRole(role)) {
    o.role = *parsed;
  } else {
    std::fprintf(stderr, "tandem-worker: unknown role '%s'\n", role.c_str());
    return 64;
  }
  auto level = tandem::ParseLogLevel(log_level);
  auto format = tandem::ParseLogFormat(log_format);
  tandem::InitLogging(RoleShortName(o.role), level.ok() ? *level : spdlog::level::info,
                      format.ok() ? *format : tandem::LogFormat::kText);
  Runtime runtime(std::move(o));
  return runtime.Run();
}
