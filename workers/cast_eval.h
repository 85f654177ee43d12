// Evaluating a Cast (DESIGN §16): a value of one scalar type as another, with PostgreSQL 15's
// rules and words. Which casts exist is ipc/func_typing.h's table; validation refused every other
// one, so a cast that is not there (or a datum that is not of `from`) is our bug and aborts.
//
// An error in the data — an integer out of range, a text that is not a value of the type, a
// numeric(p,s) overflow — is false with `*error` set to PostgreSQL's message, never a wrong
// value. Each function reads only its arguments: safe from any thread.
#pragma once

#include <string>

#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::workers {

// `in`, a datum of type `from` (or null), as a value of `to` (its type and typmod) in `*out`.
// Null casts to null.
bool EvalCast(const Datum& in, ipc::pb::ScalarType from, const ipc::pb::Column& to, Datum* out,
              std::string* error);

// As EvalCast, knowing the operand's column: a char(n) value cast to text or varchar(m) loses its
// trailing blanks first, as PostgreSQL's bpchar → text does ('ab'::char(4)::text is 'ab'); to
// char(m) and to other types it keeps them. EvalCast cannot know a STRING was a char(n).
bool EvalCastFromColumn(const Datum& in, const ipc::pb::Column& from, const ipc::pb::Column& to,
                        Datum* out, std::string* error);

// The assignment cast a write applies (INSERT, UPDATE, COPY into a column of `to`): as EvalCast,
// except that a value longer than varchar(n) or char(n) is an error in the data ("value too long
// for type character varying(3)") unless every character cut is a blank.
bool EvalAssignmentCast(const Datum& in, ipc::pb::ScalarType from, const ipc::pb::Column& to,
                        Datum* out, std::string* error);

// PostgreSQL's output function for a datum of `type` (what a cast to text gives): "true",
// "12.50", "1.5e-07", "Infinity", "\x0102", "2026-12-06 12:00:00+00".
// REQUIRES: `datum` is not null and is of `type`.
std::string SqlValueText(const Datum& datum, ipc::pb::ScalarType type);

}  // namespace tandem::workers
