// PostgreSQL's own scanner and parser, at the edge: libpg_query (Debian libpg-query-dev, the
// PostgreSQL 15 parser as a library) called through its protobuf interface, its trees read with
// C++ protobuf (pg_query.proto, compiled at build time). Nothing else in this folder calls the
// C API; everything above sees Tokens and pg_query::Node trees.
//
// Addressing: an input is the UTF-8 text a client sent (a simple Query's string, one or several
// statements). Tokens and node `location`s are byte offsets into it; a SqlError's position is
// PostgreSQL's 1-based character position in it (CursorPosition()).
//
// Bounds: libpg_query 15-4.0.0 checks no stack depth — its tree printer recurses once per level
// of the tree, and a deep enough tree ('a+a+…' 30,000 long) overflows an 8 MiB stack. So nothing
// reaches ParseTokens() unbounded: Parse() (parse.h) first bounds a statement's nesting from its
// tokens (statement_tokens.h), and ParseTokens() refuses a tree deeper than kMaxTreeDepth
// protobuf messages as it reads it (the exact second guard, also protecting protobuf's own
// recursive parser).
//
// Thread safety: libpg_query keeps its state per thread (its memory contexts are thread-local);
// these functions may run on any number of threads at once — on long-lived threads only. The
// first call on a thread runs libpg_query's pg_query_init, which takes a pthread key (to free the
// thread's memory contexts when it exits) and never deletes it: a process has PTHREAD_KEYS_MAX
// (1024) keys, so once about a thousand threads have parsed, pthread_key_create fails for the
// whole process — every library that needs a key — and each later thread leaks its contexts at
// exit. So no thread per query or per connection: parse on a fixed set of threads that live as
// long as the process (the frontend's workers).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"

namespace tandem::sql {

// The deepest tree, counted in nested protobuf messages, read from libpg_query; deeper is refused
// with 54001. A level of the statement's nesting (statement_tokens.h) is at most about four.
inline constexpr int kMaxTreeDepth = 4000;

// One token of PostgreSQL's scanner (comments are not tokens here).
struct Token {
  int start = 0;  // bytes [start, end) of the input
  int end = 0;
  pg_query::Token kind = pg_query::NUL;
  bool keyword = false;  // one of PostgreSQL's keywords, unquoted (any category, reserved or not)

  Token(int s, int e, pg_query::Token k, bool kw) : start(s), end(e), kind(k), keyword(kw) {}
  bool Is(pg_query::Token k) const { return kind == k; }
  bool Opens() const { return Is(pg_query::ASCII_40) || Is(pg_query::ASCII_91); }   // ( [
  bool Closes() const { return Is(pg_query::ASCII_41) || Is(pg_query::ASCII_93); }  // ) ]
  std::string_view Text(std::string_view sql) const {
    return sql.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start));
  }
};

// Tokens [begin, end) of an input's token list.
struct TokenRange {
  std::size_t begin = 0;
  std::size_t end = 0;

  TokenRange(std::size_t b, std::size_t e) : begin(b), end(e) {}
  bool empty() const { return begin >= end; }
  std::size_t size() const { return empty() ? 0 : end - begin; }
};

// The tokens of `sql`, or the lexical error PostgreSQL reports first (an unterminated quoted
// string, a zero-length delimited identifier …). REQUIRES: sql holds no NUL byte.
SqlResult<std::vector<Token>> Scan(const std::string& sql);

// Parses tokens[range] of `sql` — prefixed with `prefix`, Tandem's own ASCII wrapper such as
// "SELECT " in front of an expression — with PostgreSQL's parser. On success every node's
// `location` is a byte offset into `sql` (-1 where PostgreSQL has none, and for nodes of the
// prefix). On error, PostgreSQL's message and SQLSTATE at a position in `sql`; "syntax error at
// end of input" where the range is followed by another token (the `;` after a statement, the
// `AS` after a SELECT) becomes "syntax error at or near" that token, as PostgreSQL would say
// reading the whole input. REQUIRES: !range.empty().
SqlResult<pg_query::ParseResult> ParseTokens(std::string_view sql, std::span<const Token> tokens,
                                             TokenRange range, std::string_view prefix = {});

// What PostgreSQL's parser reports for sql[begin, end of sql) — a text holding a lexical error,
// which it cannot parse — at a position in sql: the lexical error, or a syntax error before it.
SqlError ParseErrorOfRest(std::string_view sql, std::size_t begin);

// PostgreSQL's syntax error at tokens[index]: `syntax error at or near "…"`, or `syntax error at
// end of input` when index == tokens.size().
SqlError SyntaxErrorAt(std::string_view sql, std::span<const Token> tokens, std::size_t index);

// The SQLSTATE PostgreSQL 15's scanner and grammar give with `message` (libpg_query reports the
// message, not the code): 42601 but for the few errors raised with another code.
const char* SqlStateOfParserMessage(std::string_view message);

}  // namespace tandem::sql
