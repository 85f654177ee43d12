#include "workers/operators/memory_budget.h"

#include <string>
#include <variant>

namespace tandem::workers {

std::string MemoryBudget::Why() const {
  return "the one-shot needs more memory than " + std::string(kMaxOneShotMemory) + " (" +
         std::to_string(limit_) +
         " bytes) for the rows its operators make (a join's output, mostly): narrow it (a filter, "
         "a more selective join key) or raise " +
         kMaxOneShotMemory;
}

std::uint64_t BudgetMeter::HeldBytes(const RowUpdate& u) {
  std::uint64_t bytes = sizeof(RowUpdate) + u.row.capacity() * sizeof(Datum);
  for (const Datum& d : u.row) {
    // The kinds that hold bytes on the heap: strings and bytea (beyond the short-string buffer).
    const std::string* s = std::get_if<std::string>(&d);
    if (const auto* b = std::get_if<Bytes>(&d)) s = &b->bytes;
    if (s != nullptr && s->capacity() > 15) bytes += s->capacity() + 1;
  }
  return bytes;
}

}  // namespace tandem::workers
