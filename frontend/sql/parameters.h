// The extended query protocol's parameters ($1 … $n) in a parsed statement (DESIGN §17): how many
// it takes, and the statement with each replaced by another node — for Describe, a NULL of the
// parameter's type; for Execute, its value as a constant of its type — before it is bound. The
// binder then sees what it sees in a simple Query, so a parameter means what the same constant
// written into the text would.
//
// Walks are iterative over protobuf reflection: a tree is up to kMaxTreeDepth deep (parse.h).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "frontend/sql/parse.h"
#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"

namespace tandem::sql {

// The most parameters a statement may take (PostgreSQL's Bind carries a 16-bit count).
inline constexpr int kMaxParameters = 65535;

// The highest $n in `statement` (0: none). 42P02 "there is no parameter $0" for $0, 54000 past
// kMaxParameters; `sql` is the text its locations are into.
SqlResult<int> CountParameters(const ParsedStatement& statement, std::string_view sql);

// The type name each parameter is cast to where it is written cast (`$1::int4`: "int4"; the
// first such cast of each): what it is when no context reads it (an unreferenced WITH query's).
std::map<int, std::string> CastParameterTypes(const ParsedStatement& statement);

// Every $n node in `statement` replaced by what `replace` makes of it (n, its location).
void ReplaceParameters(ParsedStatement& statement,
                       const std::function<pg_query::Node(int number, int location)>& replace);

// A NULL constant at `location`, as the expression `NULL::name` when `type_name` is not empty
// (PostgreSQL's type name: "int4", "numeric", "timestamptz" …). A cast made here has the
// parameter's location on itself, its constant and its type name (IsParameterConstant); one
// written in SQL never has (its `::` or CAST comes after or before its constant).
pg_query::Node NullConstant(std::string_view type_name, int location);
// The string constant `text` at `location`, as `'text'::name` when `type_name` is not empty.
pg_query::Node StringConstant(std::string text, std::string_view type_name, int location);

// Whether `node` is a cast NullConstant or StringConstant made for a parameter: what PostgreSQL
// names "?column?" in a select list, as it names a parameter.
bool IsParameterConstant(const pg_query::Node& node);

}  // namespace tandem::sql
