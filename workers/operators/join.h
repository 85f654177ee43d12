// Join (workers/README.md "Operators"): the equi-join of two collections on pairs of key columns,
// inner or left outer, maintained incrementally with differential's join_core formula. Over the
// times t of a tick in order, with A and B the two sides' contents and dA_t, dB_t their changes:
//   output change at t = dA_t ⋈ B(≤ t) + A(< t) ⋈ dB_t
// (so each pair of updates is joined exactly once). A left outer join adds, per key, the left rows
// while the right side has none of that key, with nulls for the right columns.
//
// Each side is a JoinSide: either its own arrangement (the input exchanged by its join key and
// kept in this worker's memory) or, when the side is an index import whose key is exactly that
// side's join key, the imported arrangement itself, read in place from the index's batches — no
// second copy (DESIGN §8: what index sharing is for). Both route a key to the same worker
// (shm/routing.h over the same key encoding, base/row.h "Keys"), so a key's rows of both sides
// meet on one worker.
//
// A key with a null column never matches. Counts are exact: a product of two counts beyond int64
// goes out as several updates of int64 parts (base/count.h) — up to kMaxJoinParts of them. Beyond
// that (counts near INT64_MAX on both sides) it is the data error "multiplicity overflow in a
// join", emitted once (by each worker that meets it) and never retracted.
//
// Thread safety: a JoinNode and its sides belong to one worker thread; an own side exchanges (a
// barrier), so every worker pulls the join in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/count.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "workers/operators/memory_budget.h"
#include "workers/operators/node.h"

namespace tandem::workers {

class ImportedIndex;

inline constexpr std::int64_t kMaxJoinParts = 64;

// An update of one side with its key-encoded join key (base/row.h "Keys"; shm/routing.h's key
// bytes). An imported side's
// row stays encoded (a view into the tick's batches) until the join needs it: most of a first
// tick's updates of one side never meet a row of the other.
struct KeyedUpdate {
  std::string key;
  bool null_key = false;  // a key column is null: it never matches
  RowUpdate update;       // update.row: only once row() decoded it, when `encoded` is set
  std::string_view encoded;
  const Row& row() const;

 private:
  mutable std::optional<Row> decoded_;
};

class JoinSide {
 public:
  using RowFn = std::function<void(Row row, Int128 count)>;  // the row is the callee's
  virtual ~JoinSide() = default;
  // The side's changes in the tick, on the worker that owns their keys; errors go to `errors`.
  virtual void Pull(const TickCtx& ctx, std::vector<KeyedUpdate>* rows,
                    std::vector<ErrorUpdate>* errors) = 0;
  // Calls fn for every row of `key` with a non-zero count as of t (`before`: as of just before t).
  // An own arrangement answers with what it holds now — the join calls it at the right moment of
  // its Apply calls (JoinNode::Pull) — and an imported one as of that time.
  virtual void ForEachAt(std::string_view key, Time t, bool before, const RowFn& fn) = 0;
  virtual bool EmptyAt(std::string_view key, Time t, bool before) = 0;
  // The side's updates at one time, once they are to count: an own arrangement applies them.
  virtual void Apply(const std::vector<const KeyedUpdate*>& /*at_t*/) {}
  // Rows held in this worker's own arrangement (0 for an imported one).
  virtual std::size_t records() const { return 0; }
  // "own arrangement" or "imported index s1, in place" (the render log says which).
  virtual std::string Describe() const = 0;
};

// The input `input` arranged by `key` in this worker's memory.
std::unique_ptr<JoinSide> MakeOwnSide(Node* input, std::vector<std::uint32_t> key);
// The index import `index` (arranged by exactly this side's join key), read in place.
std::unique_ptr<JoinSide> MakeImportedSide(ImportedIndex* index, std::string index_id,
                                           std::vector<std::uint32_t> key, Time as_of,
                                           Frontier until);

class JoinNode final : public Node {
 public:
  // `right_arity`: the right input's columns (a left outer join's nulls). `left_key`: the left
  // side's join key columns.
  JoinNode(std::unique_ptr<JoinSide> left, std::unique_ptr<JoinSide> right, bool left_outer,
           std::size_t right_arity, std::vector<std::uint32_t> left_key)
      : left_(std::move(left)),
        right_(std::move(right)),
        left_outer_(left_outer),
        nulls_(right_arity, Null{}),
        left_key_(std::move(left_key)) {}
  Delta Pull(const TickCtx& ctx) override;
  // Both sides are where their join key routes them, and an output row starts with its left row.
  Partitioning partitioning() const override { return Partitioning::By(left_key_); }

  // Rows held by this worker's own arrangements of the two sides.
  std::size_t ArrangedRecords() const { return left_->records() + right_->records(); }

 private:
  // Appends l ++ r with `count` to `out`, charged to meter_; nothing once it has stopped.
  void Emit(const Row& l, const Row& r, Int128 count, Time t, Delta* out);

  std::unique_ptr<JoinSide> left_, right_;
  BudgetMeter meter_{nullptr};  // the current Pull's charges
  bool left_outer_;
  Row nulls_;
  bool overflowed_ = false;  // the sticky "multiplicity overflow in a join" was emitted
  std::vector<std::uint32_t> left_key_;
};

}  // namespace tandem::workers
