// What an input's tokens say before any parser runs: where its statements are, and how deeply a
// statement can nest. Both work on PostgreSQL's tokens (pg_parser.h: Scan), never on raw text,
// so a `;` or a `(` inside a string, a quoted identifier or a comment is not one.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "frontend/sql/pg_parser.h"

namespace tandem::sql {

// The statements of an input, in order: token ranges split at each `;` outside parentheses and
// brackets and outside a `BEGIN ATOMIC … END` body (where PostgreSQL's grammar keeps its `;`s
// inside the one CREATE FUNCTION statement). The `;`s are in no range; empty statements (`;;`)
// have none.
std::vector<TokenRange> SplitStatements(std::span<const Token> tokens);

// The deepest nesting a statement may have: see NestingBound. PostgreSQL itself stops at its
// stack limit (max_stack_depth, 2 MB by default); this bound keeps libpg_query's, protobuf's and
// this layer's recursions inside kParseStackBytes (parse.h), and is far beyond what a
// person or a query generator writes (an expression of a thousand chained operators).
inline constexpr int kMaxNestingDepth = 1000;

// An upper bound, in levels, on how deeply the tree PostgreSQL builds for the statement
// `tokens` nests; each level is at most a few tree nodes (pg_parser.h: kMaxTreeDepth). Counted
// per group — the statement, and each (…), […] and CASE … END inside it — as
//   depth(group) = max over its items of (operators in the item + deepest group in the item)
//                  + chaining keywords in the group + 1
// where items are separated by `,`, AND, OR (PostgreSQL flattens AND and OR chains) and, inside
// CASE, WHEN/THEN/ELSE; an operator is any token but a name, a constant or punctuation (so a
// keyword counts too: over-counting is safe); UNION, INTERSECT, EXCEPT and JOIN chain across
// items (`SELECT a, b UNION SELECT …`) and are counted for the whole group.
int NestingBound(std::span<const Token> tokens);

}  // namespace tandem::sql
