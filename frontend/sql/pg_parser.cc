#include "frontend/sql/pg_parser.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/message.h>
#include <pg_query.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tandem::sql {
namespace {

// Frees libpg_query's results on every path.
struct ScanResultGuard {
  PgQueryScanResult result;
  ~ScanResultGuard() { pg_query_free_scan_result(result); }
};
struct ParseResultGuard {
  PgQueryProtobufParseResult result;
  ~ParseResultGuard() { pg_query_free_protobuf_parse_result(result); }
};

// Reads a libpg_query protobuf into `message`, refusing nesting deeper than kMaxTreeDepth.
// Partial: pg_query.proto is proto3, which has no required fields, so the check a full parse adds
// (a walk of the whole tree, by reflection where the code is generated for size) finds nothing.
bool ReadProtobuf(const PgQueryProtobuf& bytes, google::protobuf::Message* message) {
  if (bytes.len > static_cast<std::size_t>(INT32_MAX)) return false;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const std::uint8_t*>(bytes.data),
                                                static_cast<int>(bytes.len));
  stream.SetRecursionLimit(kMaxTreeDepth);
  return message->ParsePartialFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

// What ShiftLocations reads of a message type: its `location`, and where its sub-messages are.
struct MessageShape {
  const google::protobuf::FieldDescriptor* location = nullptr;     // an int32 `location`, if any
  std::vector<const google::protobuf::FieldDescriptor*> messages;  // message fields, no oneof's
  std::vector<const google::protobuf::OneofDescriptor*> oneofs;    // oneofs with a message field
};

// The shape of every message type a ParseResult can hold, found once from its descriptor (they
// are immutable) and never destroyed. Looking at only these fields, not at every field of a type
// as Reflection::ListFields does (a Node has some 250 in its oneof), is most of what makes the
// walk cheap.
const std::unordered_map<const google::protobuf::Descriptor*, MessageShape>& Shapes() {
  using google::protobuf::Descriptor;
  using google::protobuf::FieldDescriptor;
  static const auto* shapes = [] {
    auto* map = new std::unordered_map<const Descriptor*, MessageShape>;
    std::vector<const Descriptor*> pending{pg_query::ParseResult::descriptor()};
    while (!pending.empty()) {
      const Descriptor* descriptor = pending.back();
      pending.pop_back();
      auto [shape, inserted] = map->try_emplace(descriptor);
      if (!inserted) continue;
      for (int i = 0; i < descriptor->field_count(); ++i) {
        const FieldDescriptor* field = descriptor->field(i);
        if (field->name() == "location" && field->cpp_type() == FieldDescriptor::CPPTYPE_INT32 &&
            !field->is_repeated()) {
          shape->second.location = field;
        }
        if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
        pending.push_back(field->message_type());
        if (const auto* oneof = field->real_containing_oneof(); oneof != nullptr) {
          auto& oneofs = shape->second.oneofs;
          if (std::find(oneofs.begin(), oneofs.end(), oneof) == oneofs.end()) {
            oneofs.push_back(oneof);
          }
        } else {
          shape->second.messages.push_back(field);
        }
      }
    }
    return map;
  }();
  return *shapes;
}

// Makes every `location` of the tree a byte offset into the input: a location in the parsed text
// (prefix + the input from byte `begin`) moves by begin - prefix_size; one inside the prefix, or
// PostgreSQL's -1, becomes -1. Iterative: the tree may be kMaxTreeDepth deep.
void ShiftLocations(pg_query::ParseResult* root, int prefix_size, int begin) {
  using google::protobuf::FieldDescriptor;
  const auto& shapes = Shapes();
  std::vector<google::protobuf::Message*> pending{root};
  while (!pending.empty()) {
    google::protobuf::Message* message = pending.back();
    pending.pop_back();
    const google::protobuf::Reflection* reflection = message->GetReflection();
    const MessageShape& shape = shapes.at(message->GetDescriptor());
    // proto3: a location of 0 is not "set", so it is read whether set or not.
    if (shape.location != nullptr) {
      const std::int32_t location = reflection->GetInt32(*message, shape.location);
      reflection->SetInt32(message, shape.location,
                           location < prefix_size ? -1 : location - prefix_size + begin);
    }
    for (const FieldDescriptor* field : shape.messages) {
      if (field->is_repeated()) {
        const int n = reflection->FieldSize(*message, field);
        for (int i = 0; i < n; ++i) {
          pending.push_back(reflection->MutableRepeatedMessage(message, field, i));
        }
      } else if (reflection->HasField(*message, field)) {
        pending.push_back(reflection->MutableMessage(message, field));
      }
    }
    for (const google::protobuf::OneofDescriptor* oneof : shape.oneofs) {
      const FieldDescriptor* field = reflection->GetOneofFieldDescriptor(*message, oneof);
      if (field != nullptr && field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        pending.push_back(reflection->MutableMessage(message, field));
      }
    }
  }
}

struct MessageCode {
  std::string_view text;
  enum class Match { kExact, kPrefix, kContains } match;
  const char* sqlstate;
};

// PostgreSQL 15's scanner (scan.l) and grammar (gram.y) raise every error as ERRCODE_SYNTAX_ERROR
// but these (read off their ereport calls).
constexpr MessageCode kParserMessageCodes[] = {
    {"constraints cannot be marked ", MessageCode::Match::kContains,
     sqlstate::kFeatureNotSupported},
    {"CREATE ASSERTION is not yet implemented", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"CREATE EXTENSION ... FROM is no longer supported", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"CREATE OR REPLACE CONSTRAINT TRIGGER is not supported", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"CREATE SCHEMA IF NOT EXISTS cannot include schema elements", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"MATCH PARTIAL not yet implemented", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"RECHECK is no longer required", MessageCode::Match::kExact, sqlstate::kFeatureNotSupported},
    {"UNENCRYPTED PASSWORD is no longer supported", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"UNIQUE predicate is not yet implemented", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"WITH CHECK OPTION not supported on recursive views", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"is only supported for ON DELETE actions", MessageCode::Match::kContains,
     sqlstate::kFeatureNotSupported},
    {"aggregates cannot have output arguments", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"an ordered-set aggregate with a VARIADIC direct argument", MessageCode::Match::kPrefix,
     sqlstate::kFeatureNotSupported},
    {"current database cannot be changed", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"unsafe use of string constant with Unicode escapes", MessageCode::Match::kExact,
     sqlstate::kFeatureNotSupported},
    {"invalid Unicode escape", MessageCode::Match::kExact, sqlstate::kInvalidEscapeSequence},
    {"unsafe use of \\' in a string literal", MessageCode::Match::kExact,
     sqlstate::kNonstandardUseOfEscapeCharacter},
    {"column number must be in range from 1 to ", MessageCode::Match::kPrefix,
     sqlstate::kInvalidParameterValue},
    {"precision for type float must be ", MessageCode::Match::kPrefix,
     sqlstate::kInvalidParameterValue},
    {"for hash partition provided more than once", MessageCode::Match::kContains,
     sqlstate::kDuplicateObject},
    {"cannot be used as a role name here", MessageCode::Match::kContains, sqlstate::kReservedName},
    {"role name \"", MessageCode::Match::kPrefix, sqlstate::kReservedName},
    {"frame ", MessageCode::Match::kPrefix, sqlstate::kWindowingError},
    {"stack depth limit exceeded", MessageCode::Match::kExact, sqlstate::kStatementTooComplex},
};

constexpr std::string_view kAtEndOfInput = "syntax error at end of input";

// PostgreSQL's scanner's white space (scan.l: space).
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

const char* SqlStateOfParserMessage(std::string_view message) {
  for (const MessageCode& code : kParserMessageCodes) {
    switch (code.match) {
      case MessageCode::Match::kExact:
        if (message == code.text) return code.sqlstate;
        break;
      case MessageCode::Match::kPrefix:
        if (message.starts_with(code.text)) return code.sqlstate;
        break;
      case MessageCode::Match::kContains:
        if (message.find(code.text) != std::string_view::npos) return code.sqlstate;
        break;
    }
  }
  return sqlstate::kSyntaxError;
}

SqlError SyntaxErrorAt(std::string_view sql, std::span<const Token> tokens, std::size_t index) {
  if (index >= tokens.size()) {
    return SqlError(sqlstate::kSyntaxError, std::string(kAtEndOfInput),
                    CursorPosition(sql, sql.size()));
  }
  const Token& token = tokens[index];
  return SqlError(sqlstate::kSyntaxError,
                  "syntax error at or near \"" + std::string(token.Text(sql)) + "\"",
                  CursorPosition(sql, static_cast<std::size_t>(token.start)));
}

SqlResult<std::vector<Token>> Scan(const std::string& sql) {
  ScanResultGuard scan{pg_query_scan(sql.c_str())};
  if (scan.result.error != nullptr) {
    const PgQueryError& error = *scan.result.error;
    std::string message = error.message != nullptr ? error.message : "invalid input";
    const char* state = SqlStateOfParserMessage(message);
    return SqlError(state, std::move(message), error.cursorpos > 0 ? error.cursorpos : 0);
  }
  pg_query::ScanResult result;
  if (!ReadProtobuf(scan.result.pbuf, &result)) {
    return SqlError(sqlstate::kInternalError, "could not read the tokens of PostgreSQL's scanner");
  }
  std::vector<Token> tokens;
  tokens.reserve(static_cast<std::size_t>(result.tokens_size()));
  const int size = static_cast<int>(sql.size());
  for (int i = 0; i < result.tokens_size(); ++i) {
    const pg_query::ScanToken& token = result.tokens(i);
    if (token.token() == pg_query::SQL_COMMENT || token.token() == pg_query::C_COMMENT) continue;
    // Where the next token (a comment included) starts, or the end: no token reaches past it.
    const int next = i + 1 < result.tokens_size() ? result.tokens(i + 1).start() : size;
    int end = std::min(token.end(), next);
    if (token.token() == pg_query::USCONST || token.token() == pg_query::UIDENT) {
      // libpg_query 15-4.0.0 ends these (U&'…', U&"…") at the last piece its scanner matched,
      // not at their closing quote; they run to the next token, less the spaces before it.
      end = next;
      while (end > token.start() && IsSpace(sql[static_cast<std::size_t>(end - 1)])) --end;
    }
    tokens.emplace_back(token.start(), std::max(end, token.start()), token.token(),
                        token.keyword_kind() != pg_query::NO_KEYWORD);
  }
  return tokens;
}

namespace {

// PostgreSQL's error for the text prefix + sql[begin, …): its position moved into sql.
SqlError ErrorInSql(std::string_view sql, std::size_t begin, std::string_view prefix,
                    const PgQueryError& error) {
  std::string message = error.message != nullptr ? error.message : "invalid input";
  int position = 0;
  if (error.cursorpos > 0) {
    // cursorpos counts characters of the parsed text; the prefix is ASCII, one character a byte.
    const int in_part = std::max(0, error.cursorpos - 1 - static_cast<int>(prefix.size()));
    position = CursorPosition(sql, begin) + in_part;
  }
  const char* state = SqlStateOfParserMessage(message);
  return SqlError(state, std::move(message), position);
}

}  // namespace

SqlError ParseErrorOfRest(std::string_view sql, std::size_t begin) {
  const std::string text(sql.substr(begin));
  ParseResultGuard parse{pg_query_parse_protobuf(text.c_str())};
  if (parse.result.error == nullptr) {
    return SqlError(sqlstate::kInternalError,
                    "PostgreSQL's parser accepted what its scanner refused",
                    CursorPosition(sql, begin));
  }
  if (parse.result.error->message != nullptr && parse.result.error->message == kAtEndOfInput) {
    return SqlError(sqlstate::kSyntaxError, std::string(kAtEndOfInput),
                    CursorPosition(sql, sql.size()));
  }
  return ErrorInSql(sql, begin, {}, *parse.result.error);
}

SqlResult<pg_query::ParseResult> ParseTokens(std::string_view sql, std::span<const Token> tokens,
                                             TokenRange range, std::string_view prefix) {
  assert(!range.empty() && range.end <= tokens.size());
  const auto begin = static_cast<std::size_t>(tokens[range.begin].start);
  const auto end = static_cast<std::size_t>(tokens[range.end - 1].end);
  std::string text;
  text.reserve(prefix.size() + (end - begin));
  text.append(prefix).append(sql.substr(begin, end - begin));

  ParseResultGuard parse{pg_query_parse_protobuf(text.c_str())};
  if (parse.result.error != nullptr) {
    const PgQueryError& error = *parse.result.error;
    if (error.message != nullptr && error.message == kAtEndOfInput) {
      return SyntaxErrorAt(sql, tokens, range.end);
    }
    return ErrorInSql(sql, begin, prefix, error);
  }
  pg_query::ParseResult result;
  if (!ReadProtobuf(parse.result.parse_tree, &result)) {
    return SqlError(sqlstate::kStatementTooComplex,
                    "statement is too deeply nested (its parse tree is more than " +
                        std::to_string(kMaxTreeDepth) + " levels deep)",
                    CursorPosition(sql, begin));
  }
  // Most inputs are one statement at its start: nothing to move, and big ones (an INSERT of many
  // rows) are where a walk of the whole tree would cost.
  if (!prefix.empty() || begin != 0) {
    ShiftLocations(&result, static_cast<int>(prefix.size()), static_cast<int>(begin));
  }
  return result;
}

}  // namespace tandem::sql
