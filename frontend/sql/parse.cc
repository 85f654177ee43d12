#include "frontend/sql/parse.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "frontend/sql/pg_parser.h"
#include "frontend/sql/statement_tokens.h"
#include "frontend/sql/tandem_syntax.h"

namespace tandem::sql {
namespace {

// The length of the UTF-8 sequence at sql[i] if it is one PostgreSQL accepts (as its
// pg_utf8_islegal: no overlong forms, no surrogates, nothing above U+10FFFF, no NUL), else 0.
std::size_t LegalUtf8Length(std::string_view sql, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(sql[i + k]); };
  auto continuation = [&](std::size_t k, unsigned char low, unsigned char high) {
    return i + k < sql.size() && byte(k) >= low && byte(k) <= high;
  };
  const unsigned char lead = byte(0);
  if (lead == 0) return 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1, 0x80, 0xBF) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned char low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned char high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(1, low, high) && continuation(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned char low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned char high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(1, low, high) && continuation(2, 0x80, 0xBF) && continuation(3, 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

// PostgreSQL's report_invalid_encoding: the bytes of the sequence its lead byte announces.
SqlError InvalidEncoding(std::string_view sql, std::size_t i) {
  const auto lead = static_cast<unsigned char>(sql[i]);
  std::size_t announced = 1;
  if ((lead & 0xE0) == 0xC0) {
    announced = 2;
  } else if ((lead & 0xF0) == 0xE0) {
    announced = 3;
  } else if ((lead & 0xF8) == 0xF0) {
    announced = 4;
  }
  const std::size_t shown = std::min(announced, sql.size() - i);
  std::string bytes;
  for (std::size_t k = 0; k < shown; ++k) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(sql[i + k]));
    bytes += (k > 0 ? " " : "") + std::string(hex);
  }
  return SqlError(sqlstate::kCharacterNotInRepertoire,
                  "invalid byte sequence for encoding \"UTF8\": " + bytes);
}

std::optional<SqlError> CheckEncoding(std::string_view sql) {
  for (std::size_t i = 0; i < sql.size();) {
    const std::size_t length = LegalUtf8Length(sql, i);
    if (length == 0) return InvalidEncoding(sql, i);
    i += length;
  }
  return std::nullopt;
}

// Parses one statement's parts with PostgreSQL's parser; every error at a position in sql.
class StatementParser {
 public:
  StatementParser(std::string_view sql, std::span<const Token> tokens)
      : sql_(sql), tokens_(tokens) {}

  // The one statement tokens[range] is.
  SqlResult<pg_query::Node> Statement(TokenRange range) const {
    SqlResult<pg_query::ParseResult> parsed = ParseTokens(sql_, tokens_, range);
    if (!parsed.ok()) return parsed.error();
    if (parsed->stmts_size() != 1) {
      // SplitStatements cuts where PostgreSQL's grammar does; a range that holds several
      // statements is a disagreement between the two, reported rather than guessed at.
      return SqlError(sqlstate::kInternalError,
                      "PostgreSQL's parser found " + std::to_string(parsed->stmts_size()) +
                          " statements where one was expected",
                      Position(range.begin));
    }
    return std::move(*parsed->mutable_stmts(0)->mutable_stmt());
  }

  // The query tokens[range] is (a SelectStmt); `role` names it in the error otherwise.
  SqlResult<pg_query::Node> Query(TokenRange range, const std::string& role) const {
    SqlResult<pg_query::Node> statement = Statement(range);
    if (!statement.ok()) return statement;
    if (!statement->has_select_stmt()) {
      return SqlError(sqlstate::kSyntaxError, role + " must be a query (SELECT, VALUES or TABLE)",
                      Position(range.begin));
    }
    return statement;
  }

  // The name tokens[range] is, as a RangeVar (CheckName made it words joined by dots).
  SqlResult<pg_query::Node> Name(TokenRange range) const {
    SqlResult<pg_query::ParseResult> parsed = ParseTokens(sql_, tokens_, range, "SELECT * FROM ");
    if (!parsed.ok()) return parsed.error();
    const pg_query::SelectStmt* select = OnlySelect(*parsed);
    if (select == nullptr || select->from_clause_size() != 1 ||
        !select->from_clause(0).has_range_var() || select->from_clause(0).range_var().has_alias()) {
      return SqlError(sqlstate::kSyntaxError, "expected a name", Position(range.begin));
    }
    return std::move(
        *parsed->mutable_stmts(0)->mutable_stmt()->mutable_select_stmt()->mutable_from_clause(0));
  }

  // The one expression tokens[range] is (what `SELECT <it>` would select, with nothing else).
  SqlResult<pg_query::Node> Expression(TokenRange range, const std::string& role) const {
    SqlResult<pg_query::ParseResult> parsed = ParseTokens(sql_, tokens_, range, "SELECT ");
    if (!parsed.ok()) return parsed.error();
    const pg_query::SelectStmt* select = OnlySelect(*parsed);
    const bool one_expression =
        select != nullptr && select->target_list_size() == 1 &&
        select->target_list(0).has_res_target() &&
        select->target_list(0).res_target().name().empty() &&
        select->target_list(0).res_target().has_val() && select->distinct_clause_size() == 0 &&
        !select->has_into_clause() && select->from_clause_size() == 0 &&
        !select->has_where_clause() && select->group_clause_size() == 0 &&
        !select->has_having_clause() && select->window_clause_size() == 0 &&
        select->values_lists_size() == 0 && select->sort_clause_size() == 0 &&
        !select->has_limit_offset() && !select->has_limit_count() &&
        select->locking_clause_size() == 0 && !select->has_with_clause() && !select->has_larg() &&
        !select->has_rarg();
    if (!one_expression) {
      return SqlError(sqlstate::kSyntaxError, role + " takes one expression",
                      Position(range.begin));
    }
    return std::move(*parsed->mutable_stmts(0)
                          ->mutable_stmt()
                          ->mutable_select_stmt()
                          ->mutable_target_list(0)
                          ->mutable_res_target()
                          ->mutable_val());
  }

  int Position(std::size_t token) const {
    return CursorPosition(sql_, static_cast<std::size_t>(tokens_[token].start));
  }

 private:
  static const pg_query::SelectStmt* OnlySelect(const pg_query::ParseResult& parsed) {
    if (parsed.stmts_size() != 1 || !parsed.stmts(0).stmt().has_select_stmt()) return nullptr;
    return &parsed.stmts(0).stmt().select_stmt();
  }

  std::string_view sql_;
  std::span<const Token> tokens_;
};

using Form = decltype(ParsedStatement::form);

SqlResult<Form> BuildForm(const StatementParser& parser, TokenRange range,
                          const TandemSyntax& syntax) {
  if (std::holds_alternative<std::monostate>(syntax)) {
    SqlResult<pg_query::Node> statement = parser.Statement(range);
    if (!statement.ok()) return statement.error();
    return Form(PostgresStatement{std::move(*statement)});
  }
  if (const auto* subscribe = std::get_if<SubscribeSyntax>(&syntax)) {
    SqlResult<pg_query::Node> target = subscribe->query
                                           ? parser.Query(subscribe->target, "SUBSCRIBE's query")
                                           : parser.Name(subscribe->target);
    if (!target.ok()) return target.error();
    SubscribeStatement statement{std::move(*target), std::nullopt};
    if (subscribe->as_of) {
      SqlResult<pg_query::Node> as_of = parser.Expression(*subscribe->as_of, "AS OF");
      if (!as_of.ok()) return as_of.error();
      statement.as_of = std::move(*as_of);
    }
    return Form(std::move(statement));
  }
  if (const auto* select_as_of = std::get_if<SelectAsOfSyntax>(&syntax)) {
    SqlResult<pg_query::Node> select = parser.Statement(select_as_of->select);
    if (!select.ok()) return select.error();
    if (!select->has_select_stmt()) {
      return SqlError(sqlstate::kSyntaxError,
                      "AS OF follows a query (SELECT, VALUES or TABLE) only",
                      parser.Position(select_as_of->as_keyword));
    }
    SqlResult<pg_query::Node> as_of = parser.Expression(select_as_of->as_of, "AS OF");
    if (!as_of.ok()) return as_of.error();
    return Form(SelectAsOfStatement{std::move(*select), std::move(*as_of)});
  }
  if (std::holds_alternative<ShowMaterializedViewsSyntax>(syntax)) {
    return Form(ShowMaterializedViewsStatement{});
  }
  const auto& show_columns = std::get<ShowColumnsSyntax>(syntax);
  SqlResult<pg_query::Node> relation = parser.Name(show_columns.relation);
  if (!relation.ok()) return relation.error();
  return Form(ShowColumnsStatement{std::move(*relation)});
}

// The statement tokens[range] is: bounded, recognised, parsed.
SqlResult<ParsedStatement> ParseStatement(std::string_view sql, std::span<const Token> tokens,
                                          TokenRange range) {
  const StatementParser parser(sql, tokens);
  if (NestingBound(tokens.subspan(range.begin, range.size())) > kMaxNestingDepth) {
    return SqlError(sqlstate::kStatementTooComplex,
                    "statement is too deeply nested (more than " +
                        std::to_string(kMaxNestingDepth) +
                        " levels of parentheses, operators and subqueries)",
                    parser.Position(range.begin));
  }
  SqlResult<TandemSyntax> syntax = RecognizeTandemSyntax(sql, tokens, range);
  if (!syntax.ok()) return syntax.error();
  SqlResult<Form> form = BuildForm(parser, range, *syntax);
  if (!form.ok()) return form.error();
  const auto begin = static_cast<std::size_t>(tokens[range.begin].start);
  const auto end = static_cast<std::size_t>(tokens[range.end - 1].end);
  return ParsedStatement{std::move(*form), TextSpan(begin, end - begin),
                         parser.Position(range.begin)};
}

// The byte at which character `position` (1-based) of sql starts.
std::size_t ByteOffset(std::string_view sql, int position) {
  int characters = 0;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    if ((static_cast<unsigned char>(sql[i]) & 0xC0) == 0x80) continue;
    if (++characters == position) return i;
  }
  return sql.size();
}

// The error PostgreSQL reports first for an input its scanner refuses at `lexical`: a syntax
// error in a statement before it (`SELEC 1; SELECT 'abc` is about SELEC), else the lexical
// error — found by reading the input up to it as Parse does, then, for the statement it is in,
// by PostgreSQL's parser itself. That parse fails (the lexical error is in its text), so it
// builds no tree and no depth bound is needed.
SqlError FirstError(std::string_view sql, SqlError lexical) {
  if (lexical.position <= 0) return lexical;
  const std::size_t stop = ByteOffset(sql, lexical.position);
  SqlResult<std::vector<Token>> scanned = Scan(std::string(sql.substr(0, stop)));
  if (!scanned.ok()) return lexical;
  const std::vector<Token>& tokens = *scanned;
  std::size_t unfinished = tokens.size();  // the first token of the statement the error is in
  for (const TokenRange range : SplitStatements(tokens)) {
    if (range.end == tokens.size()) {
      unfinished = range.begin;
      break;
    }
    SqlResult<ParsedStatement> statement = ParseStatement(sql, tokens, range);
    if (!statement.ok()) return statement.error();
  }
  if (unfinished == tokens.size()) return lexical;
  SqlResult<TandemSyntax> syntax =
      RecognizeTandemSyntax(sql, tokens, TokenRange(unfinished, tokens.size()));
  if (!syntax.ok() || !std::holds_alternative<std::monostate>(*syntax)) {
    return lexical;  // in Tandem's own form: PostgreSQL's parser would refuse its keywords first
  }
  return ParseErrorOfRest(sql, static_cast<std::size_t>(tokens[unfinished].start));
}

}  // namespace

SqlResult<std::vector<ParsedStatement>> Parse(std::string_view sql) {
  if (sql.size() > kMaxSqlBytes) {
    return SqlError(sqlstate::kProgramLimitExceeded,
                    "statement is too long: " + std::to_string(sql.size()) +
                        " bytes (the limit is " + std::to_string(kMaxSqlBytes) + ")");
  }
  if (std::optional<SqlError> error = CheckEncoding(sql)) return *std::move(error);
  SqlResult<std::vector<Token>> scanned = Scan(std::string(sql));
  if (!scanned.ok()) return FirstError(sql, scanned.error());
  const std::vector<Token>& tokens = *scanned;
  std::vector<ParsedStatement> statements;
  for (const TokenRange range : SplitStatements(tokens)) {
    SqlResult<ParsedStatement> statement = ParseStatement(sql, tokens, range);
    if (!statement.ok()) return statement.error();
    statements.push_back(std::move(*statement));
  }
  return statements;
}

}  // namespace tandem::sql
