// The memory a one-shot dataflow's operators may hold (DESIGN §8): a single read must never take
// the replica down, so what its operators make — rows decoded from its imports, and a join's
// output, which can be the product of its inputs — is charged to one budget per one-shot, shared by
// the compute threads of the pool (workers/one_shot.h). Past the limit, the operators that charge
// stop making rows, and the one-shot's exports answer an error instead of a result.
//
// What is charged is made, never given back: the one-shot's graph is freed all at once when it is
// computed, so the total bounds what it holds at any moment. Maintained dataflows have no budget
// (TickCtx::budget is null): they are the controller's to size.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "workers/operators/node.h"

namespace tandem::workers {

inline constexpr char kMaxOneShotMemory[] = "max_one_shot_memory";
inline constexpr std::uint64_t kDefaultMaxOneShotMemory = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kMinMaxOneShotMemory = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxMaxOneShotMemory = std::uint64_t{1} << 40;

// Thread-safe: charged by every compute thread of one one-shot.
class MemoryBudget {
 public:
  explicit MemoryBudget(std::uint64_t limit) : limit_(limit) {}
  // Adds `bytes`; false once the total is past the limit (and from then on).
  bool Charge(std::uint64_t bytes) {
    return used_.fetch_add(bytes, std::memory_order_relaxed) + bytes <= limit_;
  }
  bool exceeded() const { return used_.load(std::memory_order_relaxed) > limit_; }
  std::uint64_t limit() const { return limit_; }
  std::uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  // The error of a one-shot that exceeded its budget: the same text on every worker.
  std::string Why() const;

 private:
  const std::uint64_t limit_;
  std::atomic<std::uint64_t> used_{0};
};

// One operator's charges within one Pull, added up here and passed to the budget a slice at a time
// (a shared atomic per row would be most of a cheap row's cost). Without a budget it never stops.
class BudgetMeter {
 public:
  explicit BudgetMeter(MemoryBudget* budget) : budget_(budget) {}
  ~BudgetMeter() { Flush(); }
  BudgetMeter(const BudgetMeter&) = delete;
  BudgetMeter& operator=(const BudgetMeter&) = delete;

  // Charges to `budget` from now on (what was charged before is flushed first).
  void Start(MemoryBudget* budget) {
    Flush();
    budget_ = budget;
    stopped_ = budget_ != nullptr && budget_->exceeded();
  }

  // Charges what `u` holds. False once the budget is exceeded (by anyone): stop making rows.
  bool Charge(const RowUpdate& u) {
    if (budget_ == nullptr) return true;
    pending_ += HeldBytes(u);
    if (pending_ >= kSlice) Flush();
    return !stopped_;
  }
  bool stopped() const { return stopped_; }
  void Flush() {
    if (budget_ == nullptr || pending_ == 0) return;
    if (!budget_->Charge(pending_)) stopped_ = true;
    pending_ = 0;
  }
  // The bytes an update holds: itself, its datums and the strings they point to.
  static std::uint64_t HeldBytes(const RowUpdate& u);

 private:
  static constexpr std::uint64_t kSlice = 64 << 10;
  MemoryBudget* budget_;
  std::uint64_t pending_ = 0;
  bool stopped_ = false;
};

}  // namespace tandem::workers
