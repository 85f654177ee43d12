#include "frontend/sql/statement_tokens.h"

#include <algorithm>

namespace tandem::sql {
namespace {

// Names, constants and punctuation: tokens that never add a level to the tree.
bool IsNeutral(const Token& token) {
  switch (token.kind) {
    case pg_query::IDENT:
    case pg_query::UIDENT:
    case pg_query::FCONST:
    case pg_query::SCONST:
    case pg_query::USCONST:
    case pg_query::BCONST:
    case pg_query::XCONST:
    case pg_query::ICONST:
    case pg_query::PARAM:
    case pg_query::ASCII_46:  // .
    case pg_query::ASCII_58:  // :
    case pg_query::ASCII_59:  // ; (inside a BEGIN ATOMIC body)
      return true;
    default:
      return false;
  }
}

bool IsChaining(const Token& token) {
  return token.Is(pg_query::UNION) || token.Is(pg_query::INTERSECT) || token.Is(pg_query::EXCEPT) ||
         token.Is(pg_query::JOIN);
}

struct Group {
  enum class Kind { kStatement, kBracket, kCase };
  Kind kind;
  int item_operators = 0;  // in the current item, outside its groups
  int item_deepest = 0;    // the deepest group closed in the current item
  int deepest_item = 0;    // the deepest item ended so far
  int chaining = 0;

  explicit Group(Kind k) : kind(k) {}
  void EndItem() {
    deepest_item = std::max(deepest_item, item_operators + item_deepest);
    item_operators = 0;
    item_deepest = 0;
  }
  int Depth() {
    EndItem();
    return deepest_item + chaining + 1;
  }
};

}  // namespace

std::vector<TokenRange> SplitStatements(std::span<const Token> tokens) {
  std::vector<TokenRange> statements;
  std::size_t begin = 0;
  int depth = 0;            // ( and [ open
  bool in_atomic = false;   // inside BEGIN ATOMIC … END
  int cases_in_atomic = 0;  // CASE … END open inside it
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& token = tokens[i];
    if (token.Opens()) {
      ++depth;
    } else if (token.Closes()) {
      depth = std::max(0, depth - 1);  // a stray `)` is the parser's to report
    } else if (depth == 0 && token.Is(pg_query::BEGIN_P) && i + 1 < tokens.size() &&
               tokens[i + 1].Is(pg_query::ATOMIC)) {
      in_atomic = true;
      cases_in_atomic = 0;
    } else if (in_atomic && token.Is(pg_query::CASE)) {
      ++cases_in_atomic;
    } else if (in_atomic && token.Is(pg_query::END_P)) {
      if (cases_in_atomic > 0) {
        --cases_in_atomic;
      } else {
        in_atomic = false;
      }
    } else if (token.Is(pg_query::ASCII_59) && depth == 0 && !in_atomic) {
      if (i > begin) statements.emplace_back(begin, i);
      begin = i + 1;
    }
  }
  if (tokens.size() > begin) statements.emplace_back(begin, tokens.size());
  return statements;
}

int NestingBound(std::span<const Token> tokens) {
  std::vector<Group> groups{Group(Group::Kind::kStatement)};
  auto close_top = [&groups] {
    const int depth = groups.back().Depth();
    groups.pop_back();
    Group& parent = groups.back();
    parent.item_deepest = std::max(parent.item_deepest, depth);
  };
  for (const Token& token : tokens) {
    Group& group = groups.back();
    if (token.Opens()) {
      groups.emplace_back(Group::Kind::kBracket);
    } else if (token.Is(pg_query::CASE)) {
      groups.emplace_back(Group::Kind::kCase);
    } else if (token.Closes()) {
      if (groups.size() > 1) close_top();  // a stray `)` is the parser's to report
    } else if (token.Is(pg_query::END_P)) {
      if (group.kind == Group::Kind::kCase) {
        close_top();
      } else {
        ++group.item_operators;
      }
    } else if (token.Is(pg_query::ASCII_44) || token.Is(pg_query::AND) || token.Is(pg_query::OR) ||
               (group.kind == Group::Kind::kCase &&
                (token.Is(pg_query::WHEN) || token.Is(pg_query::THEN) ||
                 token.Is(pg_query::ELSE)))) {
      group.EndItem();
    } else if (IsChaining(token)) {
      ++group.chaining;
    } else if (!IsNeutral(token)) {
      ++group.item_operators;
    }
  }
  while (groups.size() > 1) close_top();  // unclosed: the parser reports them
  return groups.back().Depth();
}

}  // namespace tandem::sql
