// Evaluating a CallFunc (DESIGN §16): PostgreSQL 15's functions on datums, with its null rules,
// results and words. The signatures are ipc/func_typing.h's; validation refused every other call,
// so arguments of other types are our bug and abort.
//
// Null rules: COALESCE, NULLIF, GREATEST and LEAST read their null arguments (the caller passes
// them as they are); every other function is null when an argument is. An error in the data —
// an integer out of range, a negative substring length, the square root of a negative number, an
// unknown date_trunc unit, a LIKE pattern ending in its escape — is false with `*error` set to
// PostgreSQL's message, never a wrong value. Text is UTF-8 and counted in characters; case
// folding (LOWER, UPPER, ILIKE) is ASCII's, as in a PostgreSQL database with the C collation.
// Each call reads only its arguments: safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::workers {

// `func` on `args`, whose types are `arg_types` (one each), into `*out`.
bool EvalFunc(ipc::pb::Func func, const std::vector<Datum>& args,
              const std::vector<ipc::pb::ScalarType>& arg_types, Datum* out, std::string* error);

// PostgreSQL's LIKE (ILIKE with `fold_case`): % any characters, _ one, \ makes the next
// character literal. A pattern whose matching reaches a trailing lone \ is an error in the data
// ("LIKE pattern must not end with escape character"), as in PostgreSQL, which gives up as soon
// as a match is impossible and so may never reach it.
bool EvalLike(const std::string& text, const std::string& pattern, bool fold_case, bool* matches,
              std::string* error);

}  // namespace tandem::workers
