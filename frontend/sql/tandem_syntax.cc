#include "frontend/sql/tandem_syntax.h"

#include <algorithm>
#include <utility>

namespace tandem::sql {
namespace {

// An unquoted word spelled `word` (ASCII, lower case), whatever its case in the input.
bool IsWord(std::string_view sql, const Token& token, std::string_view word) {
  if (!token.Is(pg_query::IDENT)) return false;
  const std::string_view text = token.Text(sql);
  if (text.size() != word.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

// The first AS OF at the top level of tokens[range]: the index of its AS.
std::optional<std::size_t> FindTopLevelAsOf(std::span<const Token> tokens, TokenRange range) {
  int depth = 0;
  for (std::size_t i = range.begin; i < range.end; ++i) {
    const Token& token = tokens[i];
    if (token.Opens()) {
      ++depth;
    } else if (token.Closes()) {
      depth = std::max(0, depth - 1);
    } else if (depth == 0 && token.Is(pg_query::AS) && i + 1 < range.end &&
               tokens[i + 1].Is(pg_query::OF)) {
      return i;
    }
  }
  return std::nullopt;
}

// The `)` that closes the `(` at tokens[open], if it is in the range.
std::optional<std::size_t> MatchingClose(std::span<const Token> tokens, std::size_t open,
                                         std::size_t end) {
  int depth = 0;
  for (std::size_t i = open; i < end; ++i) {
    if (tokens[i].Is(pg_query::ASCII_40)) {
      ++depth;
    } else if (tokens[i].Is(pg_query::ASCII_41) && --depth == 0) {
      return i;
    }
  }
  return std::nullopt;
}

// A name as PostgreSQL writes one: words (identifiers, quoted or not, and keywords) joined by
// dots. Whether each word may be a name (`SUBSCRIBE select` may not) is the parser's to say.
std::optional<SqlError> CheckName(std::string_view sql, std::span<const Token> tokens,
                                  TokenRange name) {
  if (name.empty()) return SyntaxErrorAt(sql, tokens, name.begin);
  for (std::size_t i = name.begin; i < name.end; ++i) {
    const Token& token = tokens[i];
    const bool word_expected = (i - name.begin) % 2 == 0;
    const bool ok = word_expected
                        ? token.Is(pg_query::IDENT) || token.Is(pg_query::UIDENT) || token.keyword
                        : token.Is(pg_query::ASCII_46);
    if (!ok) return SyntaxErrorAt(sql, tokens, i);
  }
  if (name.size() % 2 == 0) return SyntaxErrorAt(sql, tokens, name.end);  // ends with a dot
  return std::nullopt;
}

SqlResult<TandemSyntax> RecognizeSubscribe(std::string_view sql, std::span<const Token> tokens,
                                           TokenRange statement) {
  std::size_t begin = statement.begin + 1;
  if (begin < statement.end && tokens[begin].Is(pg_query::TO)) ++begin;
  const std::optional<std::size_t> as = FindTopLevelAsOf(tokens, TokenRange(begin, statement.end));
  const TokenRange target(begin, as.value_or(statement.end));
  std::optional<TokenRange> as_of;
  if (as) {
    as_of = TokenRange(*as + 2, statement.end);
    if (as_of->empty()) return SyntaxErrorAt(sql, tokens, statement.end);
  }
  if (target.empty()) return SyntaxErrorAt(sql, tokens, target.begin);
  if (tokens[target.begin].Is(pg_query::ASCII_40)) {
    const std::optional<std::size_t> close = MatchingClose(tokens, target.begin, target.end);
    if (!close) return SyntaxErrorAt(sql, tokens, target.end);
    if (*close + 1 != target.end) return SyntaxErrorAt(sql, tokens, *close + 1);
    const TokenRange query(target.begin + 1, *close);
    if (query.empty()) return SyntaxErrorAt(sql, tokens, *close);
    return TandemSyntax(SubscribeSyntax(query, true, as_of));
  }
  if (std::optional<SqlError> error = CheckName(sql, tokens, target)) return *std::move(error);
  return TandemSyntax(SubscribeSyntax(target, false, as_of));
}

SqlResult<TandemSyntax> RecognizeShow(std::string_view sql, std::span<const Token> tokens,
                                      TokenRange statement) {
  const std::size_t second = statement.begin + 1;
  const std::size_t third = statement.begin + 2;
  // SHOW MATERIALIZED and SHOW COLUMNS alone are PostgreSQL's SHOW of a setting.
  if (third >= statement.end) return TandemSyntax();
  if (tokens[second].Is(pg_query::MATERIALIZED)) {
    if (!tokens[third].Is(pg_query::VIEWS)) return SyntaxErrorAt(sql, tokens, third);
    if (third + 1 != statement.end) return SyntaxErrorAt(sql, tokens, third + 1);
    return TandemSyntax(ShowMaterializedViewsSyntax());
  }
  if (tokens[second].Is(pg_query::COLUMNS)) {
    if (!tokens[third].Is(pg_query::FROM)) return SyntaxErrorAt(sql, tokens, third);
    const TokenRange relation(third + 1, statement.end);
    if (std::optional<SqlError> error = CheckName(sql, tokens, relation)) {
      return *std::move(error);
    }
    return TandemSyntax(ShowColumnsSyntax(relation));
  }
  return TandemSyntax();
}

// The tokens a query can start with (PostgreSQL's SelectStmt).
bool StartsQuery(const Token& token) {
  return token.Is(pg_query::SELECT) || token.Is(pg_query::VALUES) || token.Is(pg_query::WITH) ||
         token.Is(pg_query::TABLE) || token.Is(pg_query::ASCII_40);
}

// The AS OF at the top level of tokens[query, statement end), the query's: select [begin, AS) and
// the expression after OF. None: the statement is PostgreSQL's.
std::optional<std::pair<TokenRange, std::size_t>> QueryAsOf(std::span<const Token> tokens,
                                                            std::size_t query,
                                                            TokenRange statement) {
  const std::optional<std::size_t> as = FindTopLevelAsOf(tokens, TokenRange(query, statement.end));
  if (!as) return std::nullopt;
  return std::pair(TokenRange(*as + 2, statement.end), *as);
}

// EXPLAIN, then PostgreSQL's options — a parenthesised list, or ANALYZE (ANALYSE) and VERBOSE —
// then a query with a top-level AS OF. Any other EXPLAIN is PostgreSQL's, its errors too.
SqlResult<TandemSyntax> RecognizeExplain(std::string_view sql, std::span<const Token> tokens,
                                         TokenRange statement) {
  std::size_t query = statement.begin + 1;
  const bool option_list = query + 1 < statement.end && tokens[query].Is(pg_query::ASCII_40) &&
                           !StartsQuery(tokens[query + 1]);  // `EXPLAIN (SELECT …)` is a query
  if (option_list) {
    const std::optional<std::size_t> close = MatchingClose(tokens, query, statement.end);
    if (!close) return TandemSyntax();
    query = *close + 1;
  } else {
    while (query < statement.end &&
           (tokens[query].Is(pg_query::ANALYZE) || tokens[query].Is(pg_query::ANALYSE) ||
            tokens[query].Is(pg_query::VERBOSE))) {
      ++query;
    }
  }
  if (query >= statement.end || !StartsQuery(tokens[query])) return TandemSyntax();
  const auto as_of = QueryAsOf(tokens, query, statement);
  if (!as_of) return TandemSyntax();
  if (as_of->first.empty()) return SyntaxErrorAt(sql, tokens, statement.end);
  return TandemSyntax(
      ExplainAsOfSyntax(TokenRange(statement.begin, as_of->second), as_of->first, as_of->second));
}

}  // namespace

SqlResult<TandemSyntax> RecognizeTandemSyntax(std::string_view sql, std::span<const Token> tokens,
                                              TokenRange statement) {
  const Token& first = tokens[statement.begin];
  if (IsWord(sql, first, "subscribe")) return RecognizeSubscribe(sql, tokens, statement);
  if (first.Is(pg_query::SHOW)) return RecognizeShow(sql, tokens, statement);
  if (first.Is(pg_query::EXPLAIN)) return RecognizeExplain(sql, tokens, statement);
  if (StartsQuery(first)) {
    const auto as_of = QueryAsOf(tokens, statement.begin, statement);
    if (!as_of) return TandemSyntax();
    if (as_of->first.empty()) return SyntaxErrorAt(sql, tokens, statement.end);
    return TandemSyntax(
        SelectAsOfSyntax(TokenRange(statement.begin, as_of->second), as_of->first, as_of->second));
  }
  return TandemSyntax();
}

}  // namespace tandem::sql
