#include "frontend/sql/parse.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "base/utf8.h"
#include "frontend/sql/pg_parser.h"
#include "frontend/sql/statement_tokens.h"
#include "frontend/sql/tandem_syntax.h"

namespace tandem::sql {
namespace {

// PostgreSQL's UTF8 check of a query's text (base/utf8.h): the first invalid sequence, in its
// words (22021).
std::optional<SqlError> CheckEncoding(std::string_view sql) {
  if (const auto at = FindInvalidUtf8(sql)) {
    return SqlError(sqlstate::kCharacterNotInRepertoire, InvalidUtf8Message(sql, *at));
  }
  return std::nullopt;
}

// Parses one statement's parts with PostgreSQL's parser; every error at a position in sql. Each
// part's tree is swapped out of PostgreSQL's parse result into `*out`, where the caller keeps it:
// moved once (a move of a tree is a pass over its type's fields when protobuf's code is generated
// for size, and a statement would otherwise be moved through half a dozen results).
class StatementParser {
 public:
  StatementParser(std::string_view sql, std::span<const Token> tokens)
      : sql_(sql), tokens_(tokens) {}

  // The one statement tokens[range] is.
  std::optional<SqlError> Statement(TokenRange range, pg_query::Node* out) const {
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
    out->Swap(parsed->mutable_stmts(0)->mutable_stmt());
    return std::nullopt;
  }

  // The query tokens[range] is (a SelectStmt); `role` names it in the error otherwise.
  std::optional<SqlError> Query(TokenRange range, const std::string& role,
                                pg_query::Node* out) const {
    if (std::optional<SqlError> error = Statement(range, out)) return error;
    if (!out->has_select_stmt()) {
      return SqlError(sqlstate::kSyntaxError, role + " must be a query (SELECT, VALUES or TABLE)",
                      Position(range.begin));
    }
    return std::nullopt;
  }

  // The name tokens[range] is, as a RangeVar (CheckName made it words joined by dots).
  std::optional<SqlError> Name(TokenRange range, pg_query::Node* out) const {
    SqlResult<pg_query::ParseResult> parsed = ParseTokens(sql_, tokens_, range, "SELECT * FROM ");
    if (!parsed.ok()) return parsed.error();
    const pg_query::SelectStmt* select = OnlySelect(*parsed);
    if (select == nullptr || select->from_clause_size() != 1 ||
        !select->from_clause(0).has_range_var() || select->from_clause(0).range_var().has_alias()) {
      return SqlError(sqlstate::kSyntaxError, "expected a name", Position(range.begin));
    }
    out->Swap(
        parsed->mutable_stmts(0)->mutable_stmt()->mutable_select_stmt()->mutable_from_clause(0));
    return std::nullopt;
  }

  // The one expression tokens[range] is (what `SELECT <it>` would select, with nothing else).
  std::optional<SqlError> Expression(TokenRange range, const std::string& role,
                                     pg_query::Node* out) const {
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
    out->Swap(parsed->mutable_stmts(0)
                  ->mutable_stmt()
                  ->mutable_select_stmt()
                  ->mutable_target_list(0)
                  ->mutable_res_target()
                  ->mutable_val());
    return std::nullopt;
  }

  // Where an error at tokens[token] points. From byte 0: for the one error a Parse returns, never
  // for a statement that parses.
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

// The form `syntax` says tokens[range] is, parsed into *form.
std::optional<SqlError> BuildForm(const StatementParser& parser, TokenRange range,
                                  const TandemSyntax& syntax, Form* form) {
  if (std::holds_alternative<std::monostate>(syntax)) {
    return parser.Statement(range, &form->emplace<PostgresStatement>().stmt);
  }
  if (const auto* subscribe = std::get_if<SubscribeSyntax>(&syntax)) {
    auto& statement = form->emplace<SubscribeStatement>();
    std::optional<SqlError> error =
        subscribe->query ? parser.Query(subscribe->target, "SUBSCRIBE's query", &statement.target)
                         : parser.Name(subscribe->target, &statement.target);
    if (error || !subscribe->as_of) return error;
    return parser.Expression(*subscribe->as_of, "AS OF", &statement.as_of.emplace());
  }
  if (const auto* select_as_of = std::get_if<SelectAsOfSyntax>(&syntax)) {
    auto& statement = form->emplace<SelectAsOfStatement>();
    if (std::optional<SqlError> error = parser.Statement(select_as_of->select, &statement.select)) {
      return error;
    }
    if (!statement.select.has_select_stmt()) {
      return SqlError(sqlstate::kSyntaxError,
                      "AS OF follows a query (SELECT, VALUES or TABLE) only",
                      parser.Position(select_as_of->as_keyword));
    }
    return parser.Expression(select_as_of->as_of, "AS OF", &statement.as_of);
  }
  if (const auto* explain_as_of = std::get_if<ExplainAsOfSyntax>(&syntax)) {
    auto& statement = form->emplace<ExplainAsOfStatement>();
    if (std::optional<SqlError> error =
            parser.Statement(explain_as_of->explain, &statement.explain)) {
      return error;
    }
    if (!statement.explain.has_explain_stmt() ||
        !statement.explain.explain_stmt().query().has_select_stmt()) {
      return SqlError(sqlstate::kSyntaxError,
                      "AS OF follows a query (SELECT, VALUES or TABLE) only",
                      parser.Position(explain_as_of->as_keyword));
    }
    return parser.Expression(explain_as_of->as_of, "AS OF", &statement.as_of);
  }
  if (std::holds_alternative<ShowMaterializedViewsSyntax>(syntax)) {
    form->emplace<ShowMaterializedViewsStatement>();
    return std::nullopt;
  }
  const auto& show_columns = std::get<ShowColumnsSyntax>(syntax);
  return parser.Name(show_columns.relation, &form->emplace<ShowColumnsStatement>().relation);
}

// The statement tokens[range] is — bounded, recognised, parsed — into *out. `positions` counts
// through sql: the statements of one input are parsed in order, so each one's position is counted
// on from the last one's (not from byte 0, which for 100,000 statements is 100,000 passes over the
// input).
std::optional<SqlError> ParseStatement(std::string_view sql, std::span<const Token> tokens,
                                       TokenRange range, CursorCounter& positions,
                                       ParsedStatement* out) {
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
  if (std::optional<SqlError> error = BuildForm(parser, range, *syntax, &out->form)) return error;
  const auto begin = static_cast<std::size_t>(tokens[range.begin].start);
  const auto end = static_cast<std::size_t>(tokens[range.end - 1].end);
  out->text = TextSpan(begin, end - begin);
  out->position = positions.At(begin);
  return std::nullopt;
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
  CursorCounter positions(sql);
  for (const TokenRange range : SplitStatements(tokens)) {
    if (range.end == tokens.size()) {
      unfinished = range.begin;
      break;
    }
    ParsedStatement statement;
    if (std::optional<SqlError> error = ParseStatement(sql, tokens, range, positions, &statement)) {
      return *std::move(error);
    }
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
  const std::vector<TokenRange> ranges = SplitStatements(tokens);
  std::vector<ParsedStatement> statements;
  statements.reserve(ranges.size());
  CursorCounter positions(sql);
  for (const TokenRange range : ranges) {
    if (std::optional<SqlError> error =
            ParseStatement(sql, tokens, range, positions, &statements.emplace_back())) {
      return *std::move(error);
    }
  }
  return statements;
}

}  // namespace tandem::sql
