// The runtime's operators on typed datums (the contract at the top of ipc/plan_typing.h):
// arithmetic of one numeric type, PostgreSQL's date and time operators, comparisons, negation.
// Operands are never null here (the caller applies SQL's null rule) and their types passed
// validation, so a datum of another kind than its type is our bug and aborts. An error in the
// data (overflow, division by zero, a date out of range) is false with *error in PostgreSQL's
// words, never a wrong value.
#pragma once

#include <cstdint>
#include <string>

#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::workers {

// The values of an integer type (INT16, INT32; INT64 for any other) and PostgreSQL's words for
// one outside them.
struct IntegerRange {
  std::int64_t min, max;
  const char* out_of_range;  // "integer out of range"
};
IntegerRange IntegerRangeOf(ipc::pb::ScalarType type);

// ADD, SUB, MUL, DIV or MOD of `a` (of type `left`) and `b` (of type `right`).
bool EvalArith(ipc::pb::BinaryFunc func, ipc::pb::ScalarType left, ipc::pb::ScalarType right,
               const Datum& a, const Datum& b, Datum* out, std::string* error);

// NEGATE of `a` of type `type`.
bool EvalNegate(ipc::pb::ScalarType type, const Datum& a, Datum* out, std::string* error);

// Three-way comparison of two datums of `type`: NUMERIC and INTERVAL as values (1.5 = 1.50,
// '1 mon' = '30 days'), every other type in its datum order.
int CompareAsValues(ipc::pb::ScalarType type, const Datum& a, const Datum& b);

}  // namespace tandem::workers
