// Tandem's own syntax around PostgreSQL's grammar — only what that grammar cannot say
// (README.md has the forms):
//   SUBSCRIBE [TO] name [AS OF expr]          SUBSCRIBE [TO] (query) [AS OF expr]
//   query AS OF expr                          (a SELECT, VALUES, WITH … SELECT, TABLE, (…))
//   EXPLAIN [ANALYZE] [VERBOSE] query AS OF expr          EXPLAIN (options) query AS OF expr
//   SHOW MATERIALIZED VIEWS                   SHOW COLUMNS FROM name
// Recognised from one statement's tokens alone: a keyword counts only unquoted and at the top
// level of the statement — not inside parentheses, brackets, strings or comments. So a table or
// alias named "of" or "subscribe" is written quoted. What it finds are token ranges; every part
// in PostgreSQL's own syntax (the name, the query, the expression) is then parsed by PostgreSQL's
// parser (parse.cc), never here.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "frontend/sql/pg_parser.h"
#include "frontend/sql/sql_error.h"

namespace tandem::sql {

// SUBSCRIBE [TO] target [AS OF as_of].
struct SubscribeSyntax {
  TokenRange target;  // the name, or the query inside the parentheses
  bool query = false;
  std::optional<TokenRange> as_of;

  SubscribeSyntax(TokenRange t, bool q, std::optional<TokenRange> a)
      : target(t), query(q), as_of(a) {}
};

// select AS OF as_of, where select starts as a query does (SELECT, VALUES, WITH, TABLE or `(`).
struct SelectAsOfSyntax {
  TokenRange select;
  TokenRange as_of;
  std::size_t as_keyword;  // the AS of AS OF, where an error about the pair points

  SelectAsOfSyntax(TokenRange s, TokenRange a, std::size_t k)
      : select(s), as_of(a), as_keyword(k) {}
};

// EXPLAIN [ANALYZE] [VERBOSE] | (options) select AS OF as_of: `explain` is the EXPLAIN, its
// options and the query, all PostgreSQL's.
struct ExplainAsOfSyntax {
  TokenRange explain;
  TokenRange as_of;
  std::size_t as_keyword;  // the AS of AS OF

  ExplainAsOfSyntax(TokenRange e, TokenRange a, std::size_t k)
      : explain(e), as_of(a), as_keyword(k) {}
};

struct ShowMaterializedViewsSyntax {};

// SHOW COLUMNS FROM relation.
struct ShowColumnsSyntax {
  TokenRange relation;

  explicit ShowColumnsSyntax(TokenRange r) : relation(r) {}
};

// std::monostate: the statement is PostgreSQL's, all of it.
using TandemSyntax =
    std::variant<std::monostate, SubscribeSyntax, SelectAsOfSyntax, ShowMaterializedViewsSyntax,
                 ShowColumnsSyntax, ExplainAsOfSyntax>;

// Which form tokens[statement] is, or PostgreSQL's syntax error in a Tandem form (a missing
// target, tokens after a parenthesised query, a name that is not `a` or `a.b` …) at a position
// in `sql`. REQUIRES: !statement.empty().
SqlResult<TandemSyntax> RecognizeTandemSyntax(std::string_view sql, std::span<const Token> tokens,
                                              TokenRange statement);

}  // namespace tandem::sql
