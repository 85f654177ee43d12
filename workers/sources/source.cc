#include "workers/sources/source.h"

#include "base/check.h"
#include "workers/sources/counter.h"
#include "workers/sources/file_source.h"
#include "workers/sources/key_value.h"
#include "workers/sources/log.h"
#include "workers/sources/table_source.h"

namespace tandem::workers {

std::unique_ptr<Source> MakeSource(const ipc::pb::SourceImport& import,
                                   std::chrono::steady_clock::time_point created,
                                   TableWriter* tables, std::uint32_t workers) {
  switch (import.source().kind_case()) {
    case ipc::pb::Source::kCounter:
      return std::make_unique<CounterSource>(import, created);
    case ipc::pb::Source::kKeyValue:
      return std::make_unique<KeyValueSource>(import, created);
    case ipc::pb::Source::kLog:
      return std::make_unique<LogSource>(import, created);
    case ipc::pb::Source::kTable:
      TANDEM_CHECK(tables != nullptr, "a table passed validation in a runtime without --data-dir");
      return std::make_unique<TableSource>(import, created, tables, workers);
    case ipc::pb::Source::kCsv:
      return std::make_unique<CsvSource>(import, created);
    case ipc::pb::Source::kJsonLines:
      return std::make_unique<JsonLinesSource>(import, created);
    case ipc::pb::Source::KIND_NOT_SET:
      break;
  }
  TANDEM_CHECK(false, "a source of no known kind passed validation");
  return nullptr;
}

}  // namespace tandem::workers
