// Plan typing: the one derivation of the columns a plan, a map/filter/project or a scalar
// expression produces (types, nullability and names), and why one does not type-check. The
// validator checks every plan and peek with it before a runtime sees them (DESIGN §3.2); the
// runtime (workers/plan_graph.cc) and tandem-ctl derive the schemas they need with it, so all of
// them agree on every column.
//
// What holds for every function here:
//   * a derivation reads only its arguments: no state, safe from any thread;
//   * a refusal is a Status with a reason that says where it arose, outermost first
//     ("Join left: Mfp: map expression 0: left operand of ADD: column 7 out of range: input has
//     2 columns"); NotFound for a Get of an unknown collection, InvalidArgument for the rest;
//   * recursion follows the plan's nesting, which protobuf's decoding limit bounds (100 nested
//     messages) for every plan that arrived as bytes or JSON;
//   * schemas are compared by column type and nullability only: names are labels (a Reduce's
//     "count", "sum_v"; a computed column's "c5", named by its position).
//
// The typing of scalar expressions (DESIGN §16; a binder that speaks SQL inserts Casts so that its
// operands meet these — the runtime never converts implicitly):
//   * NOT, AND, OR: BOOL. IS [NOT] NULL: any type, BOOL not null.
//   * NEGATE: INT16, INT32, INT64, FLOAT32, FLOAT64, NUMERIC, INTERVAL: the same type.
//   * ADD SUB MUL DIV: two operands of one numeric type (INT16, INT32, INT64, FLOAT32, FLOAT64,
//     NUMERIC): that type; an integer result beyond its width is a data error ("integer out of
//     range"), integer division truncates. MOD: the integer types and NUMERIC.
//   * date and time arithmetic, PostgreSQL's operators:
//       DATE + INT32, INT32 + DATE, DATE - INT32 -> DATE;   DATE - DATE -> INT32
//       DATE + INTERVAL, INTERVAL + DATE, DATE - INTERVAL -> TIMESTAMP;  DATE + TIME -> TIMESTAMP
//       TIMESTAMP + INTERVAL, INTERVAL + TIMESTAMP, TIMESTAMP - INTERVAL -> TIMESTAMP
//       TIMESTAMPTZ + INTERVAL, INTERVAL + TIMESTAMPTZ, TIMESTAMPTZ - INTERVAL -> TIMESTAMPTZ
//       TIMESTAMP - TIMESTAMP, TIMESTAMPTZ - TIMESTAMPTZ, TIME - TIME -> INTERVAL
//       TIME + INTERVAL, INTERVAL + TIME, TIME - INTERVAL -> TIME (wrapping at midnight)
//       INTERVAL + INTERVAL, INTERVAL - INTERVAL -> INTERVAL
//       INTERVAL * FLOAT64, FLOAT64 * INTERVAL, INTERVAL / FLOAT64 -> INTERVAL
//   * EQ NE LT LE GT GE: two operands of one type (any): BOOL. NUMERIC and INTERVAL compare as
//     values (1.5 = 1.50, '1 mon' = '30 days'), every other type in its datum order.
//   * Cast and CallFunc: the signatures in ipc/func_typing.h.
//   * Now (the time itself, tandem_now()): TIMESTAMPTZ, not nullable. Where it may appear (a
//     maintained dataflow's temporal filters only) is the validator's rule: ipc/temporal_filter.h.
//   * The result is nullable when an operand is (a CallFunc says its own rule).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// A ScalarType other than unspecified: the scalar types a column may have.
bool IsKnownType(pb::ScalarType type);
// A type as reasons name it: "INT64", "unspecified type", "unknown type 99".
std::string TypeName(pb::ScalarType type);
// varchar(n)/char(n): n at most this (PostgreSQL's limit).
inline constexpr std::uint32_t kMaxStringLength = 10'485'760;
// Refuses a column of no known type or with typmods its type has not: a precision or scale on
// anything but NUMERIC (precision 1..38, scale 0..precision; 0, 0 is unconstrained numeric), a
// length or blank padding on anything but STRING (blank padding needs a length; a length at most
// kMaxStringLength).
Status CheckColumnType(const pb::Column& column);
// "[INT64, STRING nullable]": a schema's types as reasons name them.
std::string SchemaText(const pb::Schema& schema);
// Column types and nullability equal; names are not compared.
bool SameShape(const pb::Schema& a, const pb::Schema& b);

// Refuses a column reference beyond a row of `columns` columns.
Status CheckColumnInRange(std::uint64_t column, int columns);
// Refuses a datum that does not fit `column` (a peek key's or a written row's): no value, a null
// for a column that is not nullable, another kind (an int64 datum fits INT16/INT32/INT64 within
// their range, a float64 datum FLOAT32 when it is a float value — NaN and ±inf are), a numeric
// that is not a number, a uuid that is not 16 bytes, a time outside [0, 24h], a string longer
// than varchar(n) or not exactly char(n) (in characters), a numeric of numeric(p,s) whose scale
// is not s or with more than p - s digits before the point.
Status CheckDatumFits(const pb::Datum& datum, const pb::Column& column);

// The type of `expr` over a row of `columns`. Refuses a column out of range, an unknown function,
// operands of the wrong types, a literal whose value is not of its type, an expression without a
// kind.
Result<pb::Column> ExprType(const pb::ScalarExpr& expr, const std::vector<pb::Column>& columns);
// The output schema of `mfp` applied to rows of `input`: each map expression may read the input
// and the expressions before it; predicates must be BOOL; projected columns must be in range.
Result<pb::Schema> MfpSchema(const pb::MapFilterProject& mfp, const pb::Schema& input);

// Types the plans of one dataflow. `scope`: what a plan may Get by name (the dataflow's source
// imports, its index imports and the collections they are on, and the builds before it).
// `known`: every collection of the epoch, so that a Get of one outside the scope is refused as
// "import an index on it" rather than as unknown. Both must outlive the checker.
class PlanChecker {
 public:
  PlanChecker(const std::map<std::string, pb::Schema>& scope,
              const std::map<std::string, pb::Schema>& known)
      : scope_(scope), known_(known) {}

  // The output schema of `plan`, or why it does not type-check.
  Result<pb::Schema> Check(const pb::Plan& plan) const;

 private:
  Result<pb::Schema> Get(const pb::Plan::Get& get) const;
  Result<pb::Schema> Union(const pb::Plan::Union& plan) const;

  const std::map<std::string, pb::Schema>& scope_;
  const std::map<std::string, pb::Schema>& known_;
};

// The schema of every index `desc` exports, by the export's id (the schema of the collection it
// is on). REQUIRES: `desc` passed validation.
std::map<std::string, pb::Schema> ExportSchemas(const pb::DataflowDescription& desc);

// The output schema of `plan` when the ids it may Get have the schemas in `scope`
// (PlanChecker without an epoch): used by the runtime and by tandem-ctl.
Result<pb::Schema> PlanSchema(const pb::Plan& plan, const std::map<std::string, pb::Schema>& scope);

}  // namespace tandem::ipc
