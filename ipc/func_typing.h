// The typing of Cast and CallFunc (DESIGN §16): which casts exist, what each function takes and
// returns. ExprType (plan_typing.h) types the operands and asks here; the evaluator
// (workers/cast_eval.h, workers/func_eval.h) may then assume what these functions accepted.
//
// Arguments must have exactly the types below: a binder that speaks SQL inserts the Casts
// PostgreSQL would apply implicitly (int4 + numeric, a literal's unknown type …); the runtime
// never converts on its own. A typmod (numeric(p,s), varchar(n), char(n)) never matters to an
// argument: functions read the value. Types below are PostgreSQL's names for the ScalarTypes:
// int2 INT16, int4 INT32, int8 INT64, float4 FLOAT32, float8 FLOAT64, text STRING.
//
// Casts (Cast.to is a Column: its type and typmod; name and nullable are ignored). A cast to the
// operand's own type always exists (it applies the typmod). Besides, PostgreSQL's explicit casts:
//   int2 int4 int8 float4 float8 numeric  to each other (float → integer rounds half to even,
//                                         numeric → integer half away from zero; out of range is
//                                         a data error)
//   bool → int4, int4 → bool
//   any type → text, text → any type     (the type's output and input function)
//   date → timestamp, timestamptz;  timestamp ↔ timestamptz (the zone is UTC)
//   timestamp, timestamptz → date, time
//   interval → time (its time of day), time → interval
// Every other pair is refused with PostgreSQL's words: "cannot cast type date to integer".
// A target typmod: numeric(p,s) rounds to s, then more than p - s integer digits is a data
// error ("numeric field overflow"); varchar(n) truncates to n characters and char(n) truncates or
// pads with blanks to n, as an explicit cast does. The result is nullable when the operand is.
//
// Functions (t: one type throughout, any type; "num": int2, int4, int8, float4, float8, numeric):
//   COALESCE(t, t, ...)             -> t   the first argument not null; nullable when all are
//   NULLIF(t, t)                    -> t   null when equal (as values: 1.5 = 1.50); nullable
//   GREATEST(t, ...), LEAST(t, ...) -> t   nulls ignored, null when all are; nullable when all are
//   CONCAT(text, text)              -> text       a || b;  CONCAT(bytea, bytea) -> bytea
//   CHAR_LENGTH(text)               -> int4       characters
//   OCTET_LENGTH(text | bytea)      -> int4       bytes
//   LOWER(text), UPPER(text)        -> text       ASCII letters only (C collation, as PostgreSQL)
//   SUBSTR(text, int4[, int4])      -> text       characters counted from 1; a negative length
//                                                 is a data error
//   STRPOS(text, text)              -> int4       position of the second in the first, 0: none
//   BTRIM, LTRIM, RTRIM(text[, text]) -> text     the characters of the second (default ' ')
//   REPLACE(text, text, text)       -> text
//   LIKE(text, text), ILIKE(text, text) -> bool   PostgreSQL's patterns: % _ and \ escaping the
//                                                 next character; ILIKE folds ASCII case only
//   ABS(num)                        -> the same type (the most negative integer: a data error)
//   ROUND, TRUNC(numeric[, int4])   -> numeric;   ROUND, TRUNC(float8) -> float8
//   FLOOR, CEIL(numeric)            -> numeric;   FLOOR, CEIL(float8)  -> float8
//   POWER(float8, float8)           -> float8;    POWER(numeric, numeric) -> numeric
//   SQRT(float8)                    -> float8;    SQRT(numeric)           -> numeric
//   DATE_TRUNC(text, timestamp | timestamptz | interval) -> the same type
//   EXTRACT(text, date | time | timestamp | timestamptz | interval)   -> numeric
//   DATE_PART(text, date | time | timestamp | timestamptz | interval) -> float8
// Every function but COALESCE, NULLIF, GREATEST and LEAST is null in, null out: its result is
// nullable when an argument is. A result has no typmod, except COALESCE, NULLIF, GREATEST and
// LEAST of arguments that all have the same one (as an IfThenElse of branches that do).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// PostgreSQL's name of a type, as its messages print it: "integer", "double precision",
// "timestamp with time zone"; a typmod when the column has one: "character varying(3)",
// "character(2)", "numeric(5,2)".
std::string SqlTypeName(pb::ScalarType type);
std::string SqlColumnTypeName(const pb::Column& column);

// Whether two columns have the same typmod (precision, scale, length, blank padding); `from`'s
// typmod onto `to`.
bool SameTypmod(const pb::Column& a, const pb::Column& b);
void CopyTypmod(const pb::Column& from, pb::Column* to);

// The column a Cast of a value of `operand` gives, or why the cast is refused (no such cast, an
// unknown target type, a typmod out of range or on a type that has none).
Result<pb::Column> CastType(const pb::Cast& cast, const pb::Column& operand);

// The column a CallFunc on arguments of `args` gives, or why it is refused (an unknown function,
// the wrong number or types of arguments).
Result<pb::Column> FuncType(const pb::CallFunc& call, const std::vector<pb::Column>& args);

}  // namespace tandem::ipc
