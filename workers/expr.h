// Scalar expressions and map/filter/project, compiled from the protocol and evaluated per row.
//
// Semantics (SQL-like): arithmetic and comparisons with a null operand give null; AND/OR are
// three-valued (false AND null = false, true OR null = true); NOT null is null; a predicate that
// is null drops the row. Integer overflow, division or modulo by zero (integer or float) are
// errors *in the data*: they do not stop the dataflow — the row becomes an error update on the
// collection's error side (DESIGN §3.2).
//
// Types were checked by validation at the supervisor, so evaluation may assume them: operand type
// mismatches are our bug and abort. The operators themselves are workers/arith.h (arithmetic,
// comparison, negation), workers/cast_eval.h and workers/func_eval.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/row.h"
#include "ipc/codec.h"
#include "workers/partitioning.h"
#include "workers/temporal_bounds.h"

namespace tandem::workers {

// A scalar expression compiled against the types of the row it reads: each node knows its
// operands' types, so the typed operators (an int4's range, a numeric's scale, a date plus an
// interval) are chosen once, not per row.
struct Expr {
  enum class Kind { kColumn, kLiteral, kUnary, kBinary, kIf, kCast, kCall };
  Kind kind = Kind::kLiteral;
  std::uint32_t column = 0;
  Datum literal;
  int func = 0;  // pb::UnaryFunc, pb::BinaryFunc or pb::Func
  // The operands' types: unary and cast one, binary two, a call one per argument.
  std::vector<ipc::pb::ScalarType> arg_types;
  ipc::pb::Column cast_to;  // kCast
  std::vector<Expr> args;
};

// REQUIRES: `e` type-checks over rows of `columns` (validation passed it).
Expr CompileExpr(const ipc::pb::ScalarExpr& e, const std::vector<ipc::pb::Column>& columns);

// Evaluates `e` on `row`. False with `*error` set for an error in the data.
bool Eval(const Expr& e, const Row& row, Datum* out, std::string* error);

// A map/filter/project. Its predicates that read the time itself are temporal filters
// (ipc/temporal_filter.h; validation allows them in maintained dataflows only): their comparisons
// become bounds on the times a row is in the output (temporal_bounds.h), evaluated after the other
// predicates.
class Mfp {
 public:
  Mfp() = default;
  // REQUIRES: `mfp` type-checks over rows of `input` and reads the time only in temporal filters
  // (validation passed it).
  Mfp(const ipc::pb::MapFilterProject& mfp, const ipc::pb::Schema& input);
  bool identity() const { return identity_; }
  // True when the Mfp has temporal filters: its output rows hold only at the times they give.
  bool temporal() const { return !bounds_.empty(); }

  enum class Outcome { kKept, kDropped, kError };
  // Applies map, filter, project to `row` (in place on success). REQUIRES: !temporal().
  Outcome Apply(Row* row, std::string* error) const;
  // The same with the temporal filters: on kKept, `*validity` is the times the row is in the
  // output, possibly none. The other predicates first, in order, as above; then every bound: an
  // error in one's expression makes the row an error (whichever bound decides a time, the error
  // is the same), else a null one drops it.
  Outcome Apply(Row* row, std::string* error, Validity* validity) const;
  // The partitioning of the output of rows partitioned by `in`: the same columns where the
  // projection put them (a filter or a map keeps them in place), unknown when one is projected
  // away; the whole row only while no column is added or removed.
  Partitioning Through(const Partitioning& in) const;

 private:
  // One comparison of a temporal filter: now `op` `bound`.
  struct Bound {
    ipc::pb::BinaryFunc op;
    Expr bound;  // TIMESTAMPTZ over the input and the maps' columns
  };

  // The predicates over `row` (the input and the maps' columns), then, when `validity` is given,
  // the bounds.
  Outcome Passes(const Row& row, std::string* error, Validity* validity) const;
  Outcome ApplyWith(Row* row, std::string* error, Validity* validity) const;

  bool identity_ = true;
  std::vector<Expr> map_, predicates_;
  std::vector<Bound> bounds_;
  std::vector<std::uint32_t> projection_;
};

}  // namespace tandem::workers
