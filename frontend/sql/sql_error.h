// SqlError and SqlResult<T>: what the SQL layer (parse, classify, and later bind and plan) answers
// when a statement cannot run — the fields of PostgreSQL's ErrorResponse that a client reads:
// the SQLSTATE ('C'), the message ('M') and the cursor position ('P').
//
// Errors are values: bad SQL from a client is a SqlError, never a crash and never an exception
// that crosses this layer's interface.
#pragma once

#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "frontend/sqlstate.h"

namespace tandem::sql {

// The SQLSTATEs this layer answers with are frontend/sqlstate.h's (`sqlstate::kSyntaxError`, …).

struct SqlError {
  std::string sqlstate;  // five characters, one of sqlstate:: (or another of PostgreSQL's)
  std::string message;   // PostgreSQL's wording where PostgreSQL has the error
  // ErrorResponse 'P': 1-based, in characters (not bytes) of the query string the client sent;
  // 0 = no position.
  int position = 0;
  // ErrorResponse 'D' and 'H' (empty: not sent): PostgreSQL's DETAIL and HINT where it has them
  // (DROP's dependants, a wrong object kind's "Use DROP … to remove …").
  std::string detail;
  std::string hint;

  SqlError(std::string state, std::string text, int pos = 0)
      : sqlstate(std::move(state)), message(std::move(text)), position(pos) {}

  std::string ToString() const;  // "42601: syntax error at or near "x" (position 8)"
};

// The 1-based character position ('P') of byte `offset` of the UTF-8 text `sql`: what a byte
// offset from libpg_query (a token's start, a node's location) becomes in an ErrorResponse.
// Counts from byte 0, O(offset): for the one error a query string fails with, never once per
// statement or per node (a string of 100,000 statements would cost 100,000 passes over it) —
// positions of many offsets go through a CursorCounter. REQUIRES: offset <= sql.size().
int CursorPosition(std::string_view sql, std::size_t offset);

// CursorPosition of offsets asked for in increasing order, each counted on from the one before:
// one pass over the text for all of them. Holds a view of `sql`, which must outlive it.
class CursorCounter {
 public:
  explicit CursorCounter(std::string_view sql) : sql_(sql) {}

  // REQUIRES: offset <= sql.size(), and no smaller than any offset asked for before.
  int At(std::size_t offset);

 private:
  std::string_view sql_;
  std::size_t offset_ = 0;  // bytes [0, offset_) counted
  int characters_ = 0;      // the characters that start in them
};

// A T or a SqlError.
template <typename T>
class [[nodiscard]] SqlResult {
 public:
  // A T is moved in once (a tree moved by reflection, where protobuf's code is generated for
  // size, costs a pass over its type's fields: a Node has some 250).
  SqlResult(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}       // NOLINT
  SqlResult(const T& value) : v_(std::in_place_index<0>, value) {}             // NOLINT
  SqlResult(SqlError error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  // REQUIRES: !ok().
  const SqlError& error() const {
    assert(!ok());
    return std::get<SqlError>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, SqlError> v_;
};

}  // namespace tandem::sql
