// Scalar expressions and map/filter/project, compiled from the protocol and evaluated per row.
//
// Semantics (SQL-like): arithmetic and comparisons with a null operand give null; AND/OR are
// three-valued (false AND null = false, true OR null = true); NOT null is null; a predicate that
// is null drops the row. Integer overflow, division or modulo by zero (integer or float) are
// errors *in the data*: they do not stop the dataflow — the row becomes an error update on the
// collection's error side (DESIGN §3.2).
//
// Types were checked by validation at the supervisor, so evaluation may assume them: operand type
// mismatches are our bug and abort.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/row.h"
#include "ipc/codec.h"
#include "workers/partitioning.h"

namespace tandem::workers {

struct Expr {
  enum class Kind { kColumn, kLiteral, kUnary, kBinary, kIf };
  Kind kind = Kind::kLiteral;
  std::uint32_t column = 0;
  Datum literal;
  int func = 0;  // pb::UnaryFunc or pb::BinaryFunc
  std::vector<Expr> args;
};

Expr CompileExpr(const ipc::pb::ScalarExpr& e);

// Evaluates `e` on `row`. False with `*error` set for an error in the data.
bool Eval(const Expr& e, const Row& row, Datum* out, std::string* error);

class Mfp {
 public:
  Mfp() = default;
  Mfp(const ipc::pb::MapFilterProject& mfp, std::size_t input_arity);
  bool identity() const { return identity_; }

  enum class Outcome { kKept, kDropped, kError };
  // Applies map, filter, project to `row` (in place on success).
  Outcome Apply(Row* row, std::string* error) const;
  // The partitioning of the output of rows partitioned by `in`: the same columns where the
  // projection put them (a filter or a map keeps them in place), unknown when one is projected
  // away; the whole row only while no column is added or removed.
  Partitioning Through(const Partitioning& in) const;

 private:
  // The predicates over `row` (the input and the maps' columns).
  Outcome Passes(const Row& row, std::string* error) const;

  bool identity_ = true;
  std::vector<Expr> map_, predicates_;
  std::vector<std::uint32_t> projection_;
};

}  // namespace tandem::workers
