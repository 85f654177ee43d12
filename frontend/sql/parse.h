// Parse: the text a client sent → its statements, each as PostgreSQL's parser gave it (a
// pg_query::Node tree) or as one of Tandem's own forms around PostgreSQL's grammar
// (tandem_syntax.h), with where it is in the text. The first step of the frontend's three
// (parse → bind → plan, DESIGN §15): nothing here looks at the catalog.
//
// How: the input is bounded (kMaxSqlBytes, valid UTF-8 without NUL), scanned once by
// PostgreSQL's scanner, split into statements at top-level `;`, each statement's nesting bounded
// (statement_tokens.h), its Tandem form recognised from its tokens, and every part in
// PostgreSQL's syntax parsed by PostgreSQL's parser (pg_parser.h). As PostgreSQL does with a
// simple Query, the whole input is parsed before any of it runs: one error fails all of it.
//
// Invariant of every tree returned: each node's `location` is a byte offset into the input (or
// -1), so a later error about a node points at it with CursorPosition(sql, location).
//
// The trees are PostgreSQL's own, pg_query::Node (libpg_query's protobuf of its parse nodes),
// handed to every caller as they are; the binder translates them into Tandem's terms at its edge,
// and nothing past it sees one. A tree is up to kMaxTreeDepth (4000) protobuf messages deep
// (pg_parser.h: the reader refuses a deeper one), so every walker of a tree keeps a depth
// counter — an explicit stack, or recursion that counts its depth and stops with 54001 past the
// bound — and none recurses unbounded. Protobuf's own recursions over a tree (its copy, its
// destructor, its serialisation) go once per level and are bounded by the same guard: no tree
// deeper than kMaxTreeDepth exists, and 4000 of their frames fit in kParseStackBytes.
//
// Thread safety: a pure function of its input; any number of threads may call Parse at once,
// each on a stack of at least kParseStackBytes and each long-lived:
// libpg_query takes a pthread key per thread that ever parses and never gives it back
// (pg_parser.h), so a thread per query or per connection exhausts the process's keys.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"

namespace tandem::sql {

// The most bytes of SQL one Parse takes: a simple Query message's string, all its statements.
// PostgreSQL takes up to 1 GB; 1 MiB is far beyond a hand-written or generated statement and
// keeps one client's parse (its tokens, its trees) to tens of MiB.
inline constexpr std::size_t kMaxSqlBytes = std::size_t{1} << 20;

// The stack a thread calling Parse needs. What bounds it is the depth of the trees
// (kMaxNestingDepth in statement_tokens.h, kMaxTreeDepth in pg_parser.h): the deepest go through
// libpg_query's and protobuf's recursive readers, whose frames, protobuf's code being generated for
// size (reading by reflection), take most of 4 MiB for a tree kMaxTreeDepth deep.
inline constexpr std::size_t kParseStackBytes = std::size_t{4} << 20;

// A statement of PostgreSQL's grammar: the `stmt` of its RawStmt (a SelectStmt, a CreateStmt …).
struct PostgresStatement {
  pg_query::Node stmt;
};

// SUBSCRIBE [TO] target [AS OF as_of] (Materialize's spelling).
struct SubscribeStatement {
  pg_query::Node target;  // a RangeVar (SUBSCRIBE name) or a SelectStmt (SUBSCRIBE (query))
  std::optional<pg_query::Node> as_of;  // an expression
};

// A query with a trailing AS OF: read at that time (DESIGN §15 "Timestamps").
struct SelectAsOfStatement {
  pg_query::Node select;  // a SelectStmt
  pg_query::Node as_of;   // an expression
};

// EXPLAIN [options] query AS OF as_of: the plan of the query read at that time.
struct ExplainAsOfStatement {
  pg_query::Node explain;  // an ExplainStmt (its options), its query a SelectStmt
  pg_query::Node as_of;    // an expression
};

// SHOW MATERIALIZED VIEWS (SHOW TABLES, VIEWS and INDEXES are PostgreSQL's `SHOW name`: they
// are PostgresStatements with a VariableShowStmt; classify.h names them).
struct ShowMaterializedViewsStatement {};

// SHOW COLUMNS FROM relation.
struct ShowColumnsStatement {
  pg_query::Node relation;  // a RangeVar
};

// Bytes [offset, offset + length) of the input.
struct TextSpan {
  std::size_t offset = 0;
  std::size_t length = 0;

  TextSpan() = default;
  TextSpan(std::size_t o, std::size_t l) : offset(o), length(l) {}
};

struct ParsedStatement {
  std::variant<PostgresStatement, SubscribeStatement, SelectAsOfStatement,
               ShowMaterializedViewsStatement, ShowColumnsStatement, ExplainAsOfStatement>
      form;
  // From its first token to the end of its last (comments around it and its `;` left out).
  TextSpan text;
  // CursorPosition of text.offset: where an error about the whole statement points (counted on
  // from the statement before, so a Parse of many statements is one pass over the input).
  int position = 0;
};

// The statements of `sql`, in order (none for an input of only spaces, comments and `;`s), or
// the first error: 42601 and PostgreSQL's message for a syntax error, at PostgreSQL's position;
// 54000 for an input over kMaxSqlBytes; 54001 for a statement nesting deeper than
// kMaxNestingDepth; 22021 for bytes that are not UTF-8 (or a NUL).
SqlResult<std::vector<ParsedStatement>> Parse(std::string_view sql);

}  // namespace tandem::sql
