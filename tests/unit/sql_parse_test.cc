// The frontend's SQL parsing (frontend/sql/): PostgreSQL's grammar through libpg_query, Tandem's
// own syntax around it, the statement classifier, and the bounds that keep hostile SQL an error.
// Expected syntax errors were read off a PostgreSQL 15 server (libpq: the SQLSTATE, the
// statement position and the primary message of each ErrorResponse).
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "frontend/sql/classify.h"
#include "frontend/sql/parse.h"
#include "frontend/sql/pg_parser.h"
#include "frontend/sql/sql_error.h"
#include "frontend/sql/statement_tokens.h"

namespace tandem::sql::sql_parse_test {
namespace {

std::vector<ParsedStatement> ParseOk(std::string_view sql) {
  SqlResult<std::vector<ParsedStatement>> parsed = Parse(sql);
  EXPECT_TRUE(parsed.ok()) << sql << ": " << (parsed.ok() ? "" : parsed.error().ToString());
  return parsed.ok() ? std::move(*parsed) : std::vector<ParsedStatement>{};
}

ParsedStatement ParseOne(std::string_view sql) {
  std::vector<ParsedStatement> statements = ParseOk(sql);
  EXPECT_EQ(statements.size(), 1u) << sql;
  if (statements.empty()) {
    return ParsedStatement{ShowMaterializedViewsStatement{}, TextSpan(0, 0), 0};
  }
  return std::move(statements.front());
}

SqlError ParseError(std::string_view sql) {
  SqlResult<std::vector<ParsedStatement>> parsed = Parse(sql);
  EXPECT_FALSE(parsed.ok()) << sql;
  return parsed.ok() ? SqlError("", "") : parsed.error();
}

// The one statement's kind, or "<sqlstate>: <message>".
std::string KindOf(std::string_view sql) {
  SqlResult<std::vector<ParsedStatement>> parsed = Parse(sql);
  if (!parsed.ok()) return "parse error " + parsed.error().ToString();
  if (parsed->size() != 1) return std::to_string(parsed->size()) + " statements";
  SqlResult<StatementKind> kind = Classify(parsed->front());
  if (!kind.ok()) return kind.error().sqlstate + ": " + kind.error().message;
  return std::string(StatementKindName(*kind));
}

// Every `location` in the tree, -1 included.
std::vector<int> Locations(const google::protobuf::Message& root) {
  std::vector<int> locations;
  std::vector<const google::protobuf::Message*> pending{&root};
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  while (!pending.empty()) {
    const google::protobuf::Message* message = pending.back();
    pending.pop_back();
    const google::protobuf::Reflection* reflection = message->GetReflection();
    if (const auto* field = message->GetDescriptor()->FindFieldByName("location");
        field != nullptr && field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_INT32) {
      locations.push_back(reflection->GetInt32(*message, field));
    }
    fields.clear();
    reflection->ListFields(*message, &fields);
    for (const auto* field : fields) {
      if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          pending.push_back(&reflection->GetRepeatedMessage(*message, field, i));
        }
      } else {
        pending.push_back(&reflection->GetMessage(*message, field));
      }
    }
  }
  return locations;
}

// The trees of a statement, whatever its form.
std::vector<const pg_query::Node*> Trees(const ParsedStatement& statement) {
  std::vector<const pg_query::Node*> trees;
  if (const auto* p = std::get_if<PostgresStatement>(&statement.form)) trees.push_back(&p->stmt);
  if (const auto* s = std::get_if<SubscribeStatement>(&statement.form)) {
    trees.push_back(&s->target);
    if (s->as_of) trees.push_back(&*s->as_of);
  }
  if (const auto* s = std::get_if<SelectAsOfStatement>(&statement.form)) {
    trees.push_back(&s->select);
    trees.push_back(&s->as_of);
  }
  if (const auto* s = std::get_if<ShowColumnsStatement>(&statement.form)) {
    trees.push_back(&s->relation);
  }
  if (const auto* s = std::get_if<ExplainAsOfStatement>(&statement.form)) {
    trees.push_back(&s->explain);
    trees.push_back(&s->as_of);
  }
  return trees;
}

int Characters(std::string_view sql) { return CursorPosition(sql, sql.size()) - 1; }

// What must hold of any answer of Parse, good or bad input alike.
void ExpectWellFormed(std::string_view sql, const SqlResult<std::vector<ParsedStatement>>& parsed) {
  if (!parsed.ok()) {
    const SqlError& error = parsed.error();
    EXPECT_EQ(error.sqlstate.size(), 5u) << error.ToString();
    EXPECT_FALSE(error.message.empty());
    EXPECT_GE(error.position, 0);
    EXPECT_LE(error.position, Characters(sql) + 1) << error.ToString();
    return;
  }
  for (const ParsedStatement& statement : *parsed) {
    EXPECT_LE(statement.text.offset + statement.text.length, sql.size());
    EXPECT_GT(statement.text.length, 0u);
    EXPECT_EQ(statement.position, CursorPosition(sql, statement.text.offset));
    SqlResult<StatementKind> kind = Classify(statement);
    if (!kind.ok()) {
      EXPECT_EQ(kind.error().sqlstate, sqlstate::kFeatureNotSupported);
    }
    for (const pg_query::Node* tree : Trees(statement)) {
      for (const int location : Locations(*tree)) {
        EXPECT_GE(location, -1);
        EXPECT_LT(location, static_cast<int>(sql.size()));
      }
    }
  }
}

struct KindCase {
  std::string sql;
  std::string kind;
};

TEST(SqlParse, EveryStatementKindOfTheFrontendParsesAndClassifies) {
  const std::vector<KindCase> cases = {
      {"CREATE TABLE t (id int8 PRIMARY KEY, name text NOT NULL, score float8, ok bool)",
       "CREATE TABLE"},
      {"CREATE TABLE f (a int8, b text) WITH (format = 'csv', path = '/data/f.csv')",
       "CREATE TABLE"},
      {"CREATE VIEW v AS SELECT id, name FROM t WHERE ok", "CREATE VIEW"},
      {"CREATE MATERIALIZED VIEW mv AS SELECT t.name, count(*), sum(u.x) FROM t JOIN u ON t.id = "
       "u.id GROUP BY t.name",
       "CREATE MATERIALIZED VIEW"},
      {"CREATE INDEX mv_name ON mv (name)", "CREATE INDEX"},
      {"DROP TABLE t CASCADE", "DROP"},
      {"DROP VIEW IF EXISTS v", "DROP"},
      {"DROP MATERIALIZED VIEW mv", "DROP"},
      {"DROP INDEX mv_name", "DROP"},
      {"SHOW TABLES", "SHOW TABLES"},
      {"show views", "SHOW VIEWS"},
      {"SHOW MATERIALIZED VIEWS", "SHOW MATERIALIZED VIEWS"},
      {"SHOW INDEXES", "SHOW INDEXES"},
      {"SHOW COLUMNS FROM t", "SHOW COLUMNS"},
      {"SHOW server_version", "SHOW"},
      {"SHOW ALL", "SHOW"},
      {"EXPLAIN SELECT * FROM t WHERE id = 1", "EXPLAIN"},
      {"EXPLAIN SELECT * FROM t WHERE id = 1 AS OF 1700000000000", "EXPLAIN"},
      {"INSERT INTO t VALUES (1, 'a', 1.5, true), (2, NULL, NULL, false)", "INSERT"},
      {"INSERT INTO t (id, name) SELECT id + 100, name FROM t", "INSERT"},
      {"UPDATE t SET name = upper(name) WHERE id > 3", "UPDATE"},
      {"DELETE FROM t WHERE name IS NULL", "DELETE"},
      {"SELECT * FROM t WHERE id = 1", "SELECT"},
      {"SELECT t.id, u.x FROM t LEFT JOIN u ON t.id = u.id RIGHT JOIN w ON w.k = u.x FULL JOIN z "
       "ON z.k = w.k CROSS JOIN y",
       "SELECT"},
      {"SELECT name, count(*) FROM t GROUP BY name HAVING count(*) > 1", "SELECT"},
      {"SELECT DISTINCT name FROM t", "SELECT"},
      {"SELECT id FROM t UNION ALL SELECT id FROM u EXCEPT SELECT id FROM w INTERSECT ALL "
       "SELECT id FROM z",
       "SELECT"},
      {"SELECT * FROM t ORDER BY id DESC LIMIT 10 OFFSET 5", "SELECT"},
      {"SELECT s.n FROM (SELECT name AS n FROM t) AS s", "SELECT"},
      {"WITH big AS (SELECT * FROM t WHERE score > 10) SELECT count(*) FROM big", "SELECT"},
      {"SELECT * FROM t WHERE id IN (SELECT id FROM u) AND EXISTS (SELECT 1 FROM w WHERE w.k = "
       "t.id)",
       "SELECT"},
      {"VALUES (1, 'a'), (2, 'b')", "SELECT"},
      {"TABLE t", "SELECT"},
      {"SELECT * FROM t AS OF 1700000000000", "SELECT"},
      {"SUBSCRIBE t", "SUBSCRIBE"},
      {"SUBSCRIBE TO t", "SUBSCRIBE"},
      {"SUBSCRIBE (SELECT name, count(*) FROM t GROUP BY name)", "SUBSCRIBE"},
      {"subscribe to (select 1) as of 5", "SUBSCRIBE"},
      {"BEGIN", "BEGIN"},
      {"BEGIN ISOLATION LEVEL SERIALIZABLE", "BEGIN"},
      {"START TRANSACTION", "BEGIN"},
      {"COMMIT", "COMMIT"},
      {"END", "COMMIT"},
      {"ROLLBACK", "ROLLBACK"},
      {"ABORT", "ROLLBACK"},
      {"SET statement_timeout = 1000", "SET"},
      {"SET SESSION TIME ZONE 'UTC'", "SET"},
      {"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "SET"},
      {"RESET statement_timeout", "SET"},
  };
  for (const KindCase& c : cases) EXPECT_EQ(KindOf(c.sql), c.kind) << c.sql;
}

TEST(SqlParse, NotSupportedStatementsAreRefusedNamingTheConstruct) {
  const std::vector<KindCase> cases = {
      {"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
       "0A000: CREATE FUNCTION is not supported"},
      {"CREATE PROCEDURE p() LANGUAGE sql AS 'SELECT 1'",
       "0A000: CREATE PROCEDURE is not supported"},
      {"CREATE SCHEMA s", "0A000: CREATE SCHEMA is not supported"},
      {"DROP SCHEMA s", "0A000: DROP SCHEMA is not supported"},
      {"DROP FOREIGN TABLE ft", "0A000: DROP FOREIGN TABLE is not supported"},
      {"DROP TEXT SEARCH CONFIGURATION c",
       "0A000: DROP TEXT SEARCH CONFIGURATION is not supported"},
      {"CREATE TABLE c AS SELECT 1", "0A000: CREATE TABLE AS is not supported"},
      {"SELECT 1 INTO c", "0A000: SELECT INTO is not supported"},
      {"SELECT 1 INTO c AS OF 5", "0A000: SELECT INTO is not supported"},
      {"ALTER TABLE t ADD COLUMN c int8", "0A000: ALTER TABLE is not supported"},
      {"ALTER MATERIALIZED VIEW mv RENAME TO mv2",
       "0A000: ALTER MATERIALIZED VIEW is not supported"},
      {"ALTER TABLE t RENAME COLUMN a TO b", "0A000: ALTER TABLE is not supported"},
      {"COPY t FROM STDIN", "0A000: COPY is not supported"},
      {"TRUNCATE t", "0A000: TRUNCATE TABLE is not supported"},
      {"SAVEPOINT a", "0A000: SAVEPOINT is not supported"},
      {"ROLLBACK TO SAVEPOINT a", "0A000: ROLLBACK TO SAVEPOINT is not supported"},
      {"PREPARE TRANSACTION 'x'", "0A000: PREPARE TRANSACTION is not supported"},
      {"GRANT SELECT ON t TO someone", "0A000: GRANT is not supported"},
      {"DO $$ BEGIN END $$", "0A000: DO is not supported"},
      {"MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN DELETE",
       "0A000: MERGE is not supported"},
      {"VACUUM t", "0A000: VACUUM is not supported"},
      {"ANALYZE t", "0A000: ANALYZE is not supported"},
      {"LISTEN channel", "0A000: LISTEN is not supported"},
      {"PREPARE q AS SELECT 1", "0A000: PREPARE is not supported"},
      {"DECLARE c CURSOR FOR SELECT 1", "0A000: DECLARE CURSOR is not supported"},
      {"REFRESH MATERIALIZED VIEW mv", "0A000: REFRESH MATERIALIZED VIEW is not supported"},
      {"CREATE TYPE pair AS (a int, b int)", "0A000: CREATE TYPE is not supported"},
      {"CREATE AGGREGATE a (int) (sfunc = f, stype = int)",
       "0A000: CREATE AGGREGATE is not supported"},
      {"SET CONSTRAINTS ALL DEFERRED", "0A000: SET CONSTRAINTS is not supported"},
      {"CREATE SUBSCRIPTION s CONNECTION 'x' PUBLICATION p",
       "0A000: CREATE SUBSCRIPTION is not supported"},
  };
  for (const KindCase& c : cases) EXPECT_EQ(KindOf(c.sql), c.kind) << c.sql;

  // The error points at the statement it is about.
  std::vector<ParsedStatement> statements = ParseOk("SELECT 1; COPY t TO STDOUT");
  ASSERT_EQ(statements.size(), 2u);
  SqlResult<StatementKind> kind = Classify(statements[1]);
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().position, 11);
}

struct ErrorCase {
  std::string sql;
  std::string sqlstate;
  int position;
  std::string message;
};

// What PostgreSQL 15 answers for each input (read off a server; see the file's comment).
TEST(SqlParse, SyntaxErrorsAreThoseOfPostgreSql) {
  const std::vector<ErrorCase> cases = {
      {"SELEC 1", "42601", 1, "syntax error at or near \"SELEC\""},
      {"SELECT 1 +", "42601", 11, "syntax error at end of input"},
      {"SELECT 1 +;", "42601", 11, "syntax error at or near \";\""},
      {"SELECT 1 +   ", "42601", 14, "syntax error at end of input"},
      {"SELECT 1; SELEC 2", "42601", 11, "syntax error at or near \"SELEC\""},
      {"SELECT 'h\xc3\xa9llo' FRM t", "42601", 20, "syntax error at or near \"t\""},
      {"SELECT * FROM t WHERE", "42601", 22, "syntax error at end of input"},
      {"SELECT 'abc", "42601", 8, "unterminated quoted string at or near \"'abc\""},
      {"CREATE TABLE x (a int,)", "42601", 23, "syntax error at or near \")\""},
      {"INSERT INTO t VALUES (1,", "42601", 25, "syntax error at end of input"},
      {"SELECT 1 LIMIT 1,2", "42601", 10, "LIMIT #,# syntax is not supported"},
      {"CREATE ASSERTION a CHECK (true)", "0A000", 0, "CREATE ASSERTION is not yet implemented"},
      {"SELECT \"\"", "42601", 8, "zero-length delimited identifier at or near \"\"\"\""},
      {"SELECT 1;\n  SELECT (2", "42601", 22, "syntax error at end of input"},
      {"SELECT 1 + AS", "42601", 12, "syntax error at or near \"AS\""},
      {"SELECT (SELECT 1 +)", "42601", 19, "syntax error at or near \")\""},
      {"SELECT 1 FROM t WHERE a IN (SELECT c FROM u WHERE)", "42601", 50,
       "syntax error at or near \")\""},
      {"SELEC 1; SELECT 'abc", "42601", 1, "syntax error at or near \"SELEC\""},
      {"SELECT U&'\\D800'", "42601", 16, "invalid Unicode surrogate pair"},
      {"SELECT \xc3\xbc FROM t WHERE \xc3\xbc ==", "42601", 27, "syntax error at end of input"},
      {"SELECT sum(a) OVER (ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM t", "42P20", 34,
       "frame start cannot be UNBOUNDED FOLLOWING"},
      {"CREATE TABLE x (a int UNIQUE NOT VALID)", "42601", 34, "syntax error at or near \"VALID\""},
      {"SHOW COLUMNS t", "42601", 14, "syntax error at or near \"t\""},
  };
  for (const ErrorCase& c : cases) {
    const SqlError error = ParseError(c.sql);
    EXPECT_EQ(error.sqlstate, c.sqlstate) << c.sql;
    EXPECT_EQ(error.position, c.position) << c.sql;
    EXPECT_EQ(error.message, c.message) << c.sql;
  }
}

TEST(SqlParse, ErrorsInTandemSyntaxReadAsPostgreSqlWould) {
  const std::vector<ErrorCase> cases = {
      {"SUBSCRIBE", "42601", 10, "syntax error at end of input"},
      {"SUBSCRIBE TO", "42601", 13, "syntax error at end of input"},
      {"SUBSCRIBE TO;", "42601", 13, "syntax error at or near \";\""},
      {"SUBSCRIBE AS OF 5", "42601", 11, "syntax error at or near \"AS\""},
      {"SUBSCRIBE (SELECT 1) x", "42601", 22, "syntax error at or near \"x\""},
      {"SUBSCRIBE (SELECT 1", "42601", 20, "syntax error at end of input"},
      {"SUBSCRIBE ()", "42601", 12, "syntax error at or near \")\""},
      // as `SELECT (SELECT 1 +)` above: the `)` after the incomplete query
      {"SUBSCRIBE (SELECT 1 +)", "42601", 22, "syntax error at or near \")\""},
      {"SUBSCRIBE t u", "42601", 13, "syntax error at or near \"u\""},
      {"SUBSCRIBE s.", "42601", 13, "syntax error at end of input"},
      {"SUBSCRIBE select", "42601", 11, "syntax error at or near \"select\""},
      {"SUBSCRIBE (INSERT INTO t VALUES (1))", "42601", 12,
       "SUBSCRIBE's query must be a query (SELECT, VALUES or TABLE)"},
      {"SUBSCRIBE t AS OF", "42601", 18, "syntax error at end of input"},
      {"SELECT 1 AS OF", "42601", 15, "syntax error at end of input"},
      {"SELECT 1 AS OF;", "42601", 15, "syntax error at or near \";\""},
      {"SELECT 1 + AS OF 5", "42601", 12, "syntax error at or near \"AS\""},
      {"SELECT 1 AS OF 5 +", "42601", 19, "syntax error at end of input"},
      {"SELECT * FROM t AS OF 5 FROM u", "42601", 23, "AS OF takes one expression"},
      {"SELECT * FROM t AS OF 5, 6", "42601", 23, "AS OF takes one expression"},
      {"WITH w AS (SELECT 1) INSERT INTO t SELECT * FROM w AS OF 5", "42601", 52,
       "AS OF follows a query (SELECT, VALUES or TABLE) only"},
      {"EXPLAIN SELECT 1 AS OF", "42601", 23, "syntax error at end of input"},
      {"EXPLAIN (COSTS false SELECT 1 AS OF 5", "42601", 22, "syntax error at or near \"SELECT\""},
      {"EXPLAIN ANALYZE SELECT * FROM t AS OF 5 FROM u", "42601", 39, "AS OF takes one expression"},
      {"EXPLAIN WITH w AS (SELECT 1) INSERT INTO t SELECT * FROM w AS OF 5", "42601", 60,
       "AS OF follows a query (SELECT, VALUES or TABLE) only"},
      // not a query after EXPLAIN: PostgreSQL's (`1 AS of` an alias, then the 5 it cannot read)
      {"EXPLAIN INSERT INTO t SELECT 1 AS OF 5", "42601", 38, "syntax error at or near \"5\""},
      {"SHOW MATERIALIZED TABLES", "42601", 19, "syntax error at or near \"TABLES\""},
      {"SHOW MATERIALIZED VIEWS FROM s", "42601", 25, "syntax error at or near \"FROM\""},
      {"SHOW COLUMNS FROM", "42601", 18, "syntax error at end of input"},
      // a later statement: positions count from the start of the whole input, in characters
      {"SELECT '\xc3\xbc'; SUBSCRIBE (SELECT 1 +)", "42601", 34, "syntax error at or near \")\""},
      {"SELECT 1; SELECT 2 AS OF", "42601", 25, "syntax error at end of input"},
  };
  for (const ErrorCase& c : cases) {
    const SqlError error = ParseError(c.sql);
    EXPECT_EQ(error.sqlstate, c.sqlstate) << c.sql;
    EXPECT_EQ(error.position, c.position) << c.sql;
    EXPECT_EQ(error.message, c.message) << c.sql;
  }
}

TEST(SqlParse, SubscribeTakesANameOrAParenthesizedQuery) {
  {
    const ParsedStatement s = ParseOne("SUBSCRIBE TO \"My View\" AS OF 42");
    const auto& subscribe = std::get<SubscribeStatement>(s.form);
    ASSERT_TRUE(subscribe.target.has_range_var());
    EXPECT_EQ(subscribe.target.range_var().relname(), "My View");
    ASSERT_TRUE(subscribe.as_of.has_value());
    EXPECT_EQ(subscribe.as_of->a_const().ival().ival(), 42);
  }
  {
    const ParsedStatement s = ParseOne("subscribe Public.Totals");
    const auto& subscribe = std::get<SubscribeStatement>(s.form);
    EXPECT_EQ(subscribe.target.range_var().schemaname(), "public");
    EXPECT_EQ(subscribe.target.range_var().relname(), "totals");
    EXPECT_FALSE(subscribe.as_of.has_value());
  }
  {
    // Keywords inside the query, its strings and its quoted names are the query's.
    const std::string sql =
        "SUBSCRIBE (SELECT a AS \"of\", 'AS OF 1', \"subscribe\" FROM t WHERE b IN (SELECT c AS "
        "of FROM u)) AS OF now() - INTERVAL '1 second'";
    const ParsedStatement s = ParseOne(sql);
    const auto& subscribe = std::get<SubscribeStatement>(s.form);
    ASSERT_TRUE(subscribe.target.has_select_stmt());
    EXPECT_EQ(subscribe.target.select_stmt().target_list_size(), 3);
    EXPECT_EQ(subscribe.target.select_stmt().target_list(0).res_target().name(), "of");
    ASSERT_TRUE(subscribe.as_of.has_value());
    ASSERT_TRUE(subscribe.as_of->has_a_expr());
    EXPECT_EQ(subscribe.as_of->a_expr().name(0).string().sval(), "-");
    // Locations are offsets into the whole input.
    EXPECT_EQ(subscribe.target.select_stmt().from_clause(0).range_var().location(),
              static_cast<int>(sql.find("t WHERE")));
    EXPECT_EQ(subscribe.as_of->a_expr().location(), static_cast<int>(sql.find("- INTERVAL")));
  }
  {
    // Nested parentheses around the query are the query's own.
    const ParsedStatement s = ParseOne("SUBSCRIBE ((SELECT 1) UNION (SELECT 2))");
    EXPECT_TRUE(std::get<SubscribeStatement>(s.form).target.has_select_stmt());
  }
  {
    // Comments are not tokens.
    const ParsedStatement s = ParseOne("/* a */ SUBSCRIBE -- to\n TO t /* AS OF 5 */");
    EXPECT_EQ(std::get<SubscribeStatement>(s.form).target.range_var().relname(), "t");
    EXPECT_FALSE(std::get<SubscribeStatement>(s.form).as_of.has_value());
  }
  {
    // U&"…" names and U&'…' strings (tokens libpg_query's scanner ends short) are whole.
    const ParsedStatement s = ParseOne("SUBSCRIBE U&\"d\\0061t\" AS OF U&'1'::int8");
    EXPECT_EQ(std::get<SubscribeStatement>(s.form).target.range_var().relname(), "dat");
    EXPECT_EQ(KindOf("SELECT U&'a' AS OF 1"), "SELECT");
  }
  // Quoted, "subscribe" is a name: PostgreSQL's syntax error.
  EXPECT_EQ(ParseError("\"subscribe\" t").message, "syntax error at or near \"\"subscribe\"\"");
}

TEST(SqlParse, AsOfIsTandemsOnlyAtTheTopLevelOfAQuery) {
  {
    const std::string sql = "SELECT a FROM t WHERE s = 'x AS OF y' AS OF 1700000000000 + 5";
    const ParsedStatement s = ParseOne(sql);
    const auto& select = std::get<SelectAsOfStatement>(s.form);
    ASSERT_TRUE(select.select.has_select_stmt());
    EXPECT_TRUE(select.select.select_stmt().has_where_clause());
    ASSERT_TRUE(select.as_of.has_a_expr());
    EXPECT_EQ(select.as_of.a_expr().lexpr().a_const().ival().ival(), 0);  // beyond int4: a float
    EXPECT_EQ(select.as_of.a_expr().lexpr().a_const().fval().fval(), "1700000000000");
    EXPECT_EQ(select.as_of.a_expr().lexpr().a_const().location(),
              static_cast<int>(sql.find("1700000000000")));
    EXPECT_EQ(select.select.select_stmt().target_list(0).res_target().val().column_ref().location(),
              7);
  }
  // Inside parentheses AS OF is PostgreSQL's (`AS of`, an alias), as is a quoted "of".
  EXPECT_TRUE(std::holds_alternative<PostgresStatement>(
      ParseOne("SELECT (SELECT 1 AS of) AS \"of\"").form));
  EXPECT_TRUE(std::holds_alternative<SelectAsOfStatement>(
      ParseOne("SELECT (SELECT 1 AS of) AS OF 7").form));
  EXPECT_TRUE(std::holds_alternative<SelectAsOfStatement>(
      ParseOne("(SELECT 1) UNION (SELECT 2) AS OF 7").form));
  EXPECT_TRUE(std::holds_alternative<SelectAsOfStatement>(ParseOne("VALUES (1) AS OF 7").form));
  EXPECT_TRUE(std::holds_alternative<SelectAsOfStatement>(ParseOne("TABLE t AS OF 7").form));
  EXPECT_TRUE(std::holds_alternative<SelectAsOfStatement>(
      ParseOne("WITH w AS (SELECT 1) SELECT * FROM w AS OF 7").form));
  EXPECT_EQ(ParseError("SELECT * FROM (SELECT * FROM t AS OF 5) s").message,
            "syntax error at or near \"5\"");
  // Only after a query: elsewhere AS OF stays PostgreSQL's.
  EXPECT_TRUE(
      std::holds_alternative<PostgresStatement>(ParseOne("CREATE VIEW of AS SELECT 1").form));
  EXPECT_EQ(ParseError("CREATE VIEW v AS OF 5").message, "syntax error at or near \"OF\"");
}

TEST(SqlParse, ExplainOfAQueryTakesItsAsOf) {
  {
    const std::string sql = "EXPLAIN SELECT a FROM t WHERE b = 'AS OF' AS OF now() - 5";
    const ParsedStatement s = ParseOne(sql);
    const auto& explain = std::get<ExplainAsOfStatement>(s.form);
    ASSERT_TRUE(explain.explain.has_explain_stmt());
    const pg_query::Node& query = explain.explain.explain_stmt().query();
    ASSERT_TRUE(query.has_select_stmt());
    EXPECT_TRUE(query.select_stmt().has_where_clause());
    EXPECT_EQ(explain.explain.explain_stmt().options_size(), 0);
    ASSERT_TRUE(explain.as_of.has_a_expr());
    EXPECT_EQ(explain.as_of.a_expr().location(), static_cast<int>(sql.find("- 5")));
    EXPECT_EQ(query.select_stmt().from_clause(0).range_var().location(),
              static_cast<int>(sql.find("t WHERE")));
  }
  // Every prefix PostgreSQL's EXPLAIN takes, before every kind of query.
  const std::vector<std::pair<std::string, int>> with_options = {
      {"EXPLAIN ANALYZE SELECT * FROM t AS OF 5", 1},
      {"explain analyse verbose select * from t as of 5", 2},
      {"EXPLAIN VERBOSE VALUES (1), (2) AS OF 5", 1},
      {"EXPLAIN (ANALYZE, COSTS false, FORMAT JSON) TABLE t AS OF 5", 3},
      {"EXPLAIN (SELECT 1) UNION (SELECT 2) AS OF 5", 0},
      {"EXPLAIN ((SELECT 1)) AS OF 5", 0},
      {"EXPLAIN (VERBOSE) (SELECT 1) AS OF 5", 1},
      {"EXPLAIN WITH w AS (SELECT 1 AS of) SELECT * FROM w AS OF 5", 0},
  };
  for (const auto& [sql, options] : with_options) {
    const ParsedStatement s = ParseOne(sql);
    const auto* explain = std::get_if<ExplainAsOfStatement>(&s.form);
    ASSERT_NE(explain, nullptr) << sql;
    EXPECT_EQ(explain->explain.explain_stmt().options_size(), options) << sql;
    EXPECT_TRUE(explain->explain.explain_stmt().query().has_select_stmt()) << sql;
    EXPECT_EQ(explain->as_of.a_const().ival().ival(), 5) << sql;
    EXPECT_EQ(KindOf(sql), "EXPLAIN") << sql;
  }
  // No top-level AS OF: PostgreSQL's own EXPLAIN, `of` an alias inside parentheses.
  for (const char* sql :
       {"EXPLAIN SELECT 1", "EXPLAIN (SELECT 1 AS of)",
        "EXPLAIN (FORMAT JSON) SELECT (SELECT 1 AS of)", "EXPLAIN DELETE FROM t"}) {
    EXPECT_TRUE(std::holds_alternative<PostgresStatement>(ParseOne(sql).form)) << sql;
  }
  EXPECT_EQ(KindOf("EXPLAIN SELECT 1 INTO c AS OF 5"), "0A000: SELECT INTO is not supported");
}

TEST(SqlParse, ShowFormsThatPostgreSqlCannotSay) {
  EXPECT_TRUE(std::holds_alternative<ShowMaterializedViewsStatement>(
      ParseOne("show materialized views").form));
  const ParsedStatement columns = ParseOne("SHOW COLUMNS FROM s.\"T\"");
  const auto& relation = std::get<ShowColumnsStatement>(columns.form).relation.range_var();
  EXPECT_EQ(relation.schemaname(), "s");
  EXPECT_EQ(relation.relname(), "T");
  // Alone, SHOW COLUMNS and SHOW MATERIALIZED are PostgreSQL's SHOW of a setting.
  EXPECT_EQ(KindOf("SHOW COLUMNS"), "SHOW");
  EXPECT_EQ(KindOf("SHOW materialized"), "SHOW");
  EXPECT_EQ(KindOf("SHOW \"tables\""), "SHOW TABLES");
}

TEST(SqlParse, SeveralStatementsEachWithItsSpanAndTheirLocationsInTheWholeInput) {
  const std::string sql =
      "  CREATE TABLE t (a int8) ; /* x; */ SUBSCRIBE t;SELECT a FROM t AS OF 5;\n"
      "SHOW MATERIALIZED VIEWS;;  SELECT ';'  -- ;\n";
  const std::vector<ParsedStatement> statements = ParseOk(sql);
  ASSERT_EQ(statements.size(), 5u);
  const std::vector<std::string> texts = {"CREATE TABLE t (a int8)", "SUBSCRIBE t",
                                          "SELECT a FROM t AS OF 5", "SHOW MATERIALIZED VIEWS",
                                          "SELECT ';'"};
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const TextSpan span = statements[i].text;
    EXPECT_EQ(sql.substr(span.offset, span.length), texts[i]);
    EXPECT_EQ(statements[i].position, static_cast<int>(span.offset) + 1);
  }
  EXPECT_EQ(
      std::get<PostgresStatement>(statements[0].form).stmt.create_stmt().relation().location(),
      static_cast<int>(sql.find("t (a")));
  EXPECT_EQ(std::get<SubscribeStatement>(statements[1].form).target.range_var().location(),
            static_cast<int>(sql.find("t;SELECT")));
  const auto& select = std::get<SelectAsOfStatement>(statements[2].form);
  EXPECT_EQ(select.select.select_stmt().from_clause(0).range_var().location(),
            static_cast<int>(sql.find("t AS OF")));
  EXPECT_EQ(select.as_of.a_const().location(), static_cast<int>(sql.find("5;")));
  for (const char* empty : {"", "   ", ";;", "-- only a comment", "/* c */ ; \n"}) {
    EXPECT_TRUE(ParseOk(empty).empty()) << empty;
  }
}

TEST(SqlParse, ABeginAtomicBodyIsOneStatement) {
  const std::vector<ParsedStatement> statements = ParseOk(
      "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT CASE WHEN true THEN 1 "
      "END; SELECT 2; END; SELECT 3");
  ASSERT_EQ(statements.size(), 2u);
  SqlResult<StatementKind> kind = Classify(statements[0]);
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().message, "CREATE FUNCTION is not supported");
  EXPECT_EQ(*Classify(statements[1]), StatementKind::kSelect);
}

TEST(SqlParse, BytesThatAreNotUtf8AreRefusedAsPostgreSqlDoes) {
  EXPECT_EQ(ParseError(std::string("SELECT '\xff'")).message,
            "invalid byte sequence for encoding \"UTF8\": 0xff");
  EXPECT_EQ(ParseError(std::string("SELECT '\xc0\xaf'")).message,
            "invalid byte sequence for encoding \"UTF8\": 0xc0 0xaf");
  EXPECT_EQ(ParseError(std::string("SELECT '\xed\xa0\x80'")).message,  // a surrogate
            "invalid byte sequence for encoding \"UTF8\": 0xed 0xa0 0x80");
  EXPECT_EQ(ParseError(std::string("SELECT 1 \xe2\x82")).message,
            "invalid byte sequence for encoding \"UTF8\": 0xe2 0x82");
  const SqlError nul = ParseError(std::string("SELECT 1;\0 DROP TABLE t", 22));
  EXPECT_EQ(nul.sqlstate, sqlstate::kCharacterNotInRepertoire);
  EXPECT_EQ(nul.message, "invalid byte sequence for encoding \"UTF8\": 0x00");
  // Valid multi-byte text is fine, and positions count it in characters.
  EXPECT_EQ(KindOf("SELECT '\xf0\x9f\x98\x80', '\xe2\x82\xac'"), "SELECT");
}

TEST(SqlParse, HugeInputIsRefusedBeforeParsing) {
  std::string sql = "SELECT 1 /*";
  sql.append(kMaxSqlBytes - sql.size() - 2, ' ');
  sql += "*/";
  EXPECT_EQ(ParseOk(sql).size(), 1u);  // exactly at the bound
  sql += " ";
  const SqlError error = ParseError(sql);
  EXPECT_EQ(error.sqlstate, sqlstate::kProgramLimitExceeded);
  EXPECT_EQ(error.message, "statement is too long: 1048577 bytes (the limit is 1048576)");
}

std::string Repeat(std::string_view piece, int n) {
  std::string out;
  out.reserve(piece.size() * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}

// A query string of 100,000 tiny statements is one pass over it, not one per statement: each
// statement's position is counted on from the one before (parse.h). Its time is not asserted
// (it takes well under a second); what is checked is every statement's span and position.
TEST(SqlParse, ManyTinyStatementsParseWithTheirSpansAndPositions) {
  constexpr int kStatements = 100000;
  // A two-byte character first, so a position (in characters) is one less than its byte offset.
  const std::string head = "-- \xc3\xa9\n";
  const std::string_view piece = "SELECT 1;";
  const std::string sql = head + Repeat(piece, kStatements);
  ASSERT_LE(sql.size(), kMaxSqlBytes);
  SqlResult<std::vector<ParsedStatement>> parsed = Parse(sql);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  ASSERT_EQ(parsed->size(), static_cast<std::size_t>(kStatements));
  int wrong = 0;
  for (std::size_t i = 0; i < parsed->size(); ++i) {
    const ParsedStatement& statement = (*parsed)[i];
    const std::size_t offset = head.size() + i * piece.size();
    const bool right = statement.text.offset == offset && statement.text.length == 8 &&
                       statement.position == static_cast<int>(offset) &&
                       std::holds_alternative<PostgresStatement>(statement.form);
    if (!right && ++wrong <= 5) {
      ADD_FAILURE() << "statement " << i << ": offset " << statement.text.offset << ", length "
                    << statement.text.length << ", position " << statement.position;
    }
  }
  EXPECT_EQ(wrong, 0);
  // A node's location in the last statement is a byte offset into the whole string.
  const auto& last = std::get<PostgresStatement>(parsed->back().form).stmt;
  EXPECT_EQ(last.select_stmt().target_list(0).res_target().location(),
            static_cast<int>(sql.size() - 2));
  // An error after all of them still points at its character.
  const SqlError error = ParseError(sql + "SELEC 2");
  EXPECT_EQ(error.message, "syntax error at or near \"SELEC\"");
  EXPECT_EQ(error.position, static_cast<int>(sql.size()));
}

// Inputs nesting deeper than kMaxNestingDepth, each in a shape of its own.
std::vector<std::string> TooDeep() {
  return {
      "SELECT " + Repeat("(", 100000) + "1" + Repeat(")", 100000),
      "SELECT " + Repeat("(", 100000),  // never closed
      "SELECT a" + Repeat("+a", 200000),
      "SELECT " + Repeat("- ", 5000) + "1",
      "SELECT " + Repeat("NOT ", 5000) + "true",
      "SELECT x" + Repeat("::int", 5000),
      "SELECT " + Repeat("f(", 5000) + "1" + Repeat(")", 5000),
      "SELECT " + Repeat("(SELECT ", 3000) + "1" + Repeat(")", 3000),
      "SELECT " + Repeat("CASE WHEN true THEN ", 3000) + "1" + Repeat(" END", 3000),
      "SELECT " + Repeat("ARRAY[", 5000) + "1" + Repeat("]", 5000),
      "SELECT * FROM t" + Repeat(" JOIN t ON true", 2000),
      "SELECT 1, 2" + Repeat(" UNION SELECT 1, 2", 2000),  // a chain across the commas
      "SELECT 1 WHERE " + Repeat("a = 1 AND (", 2000) + "true" + Repeat(")", 2000),
      "SUBSCRIBE (SELECT " + Repeat("(", 5000) + "1" + Repeat(")", 5000) + ")",
      "SELECT 1 AS OF " + Repeat("1 + ", 5000) + "1",
  };
}

// The deepest a statement of each shape may be, just inside kMaxNestingDepth.
std::vector<std::string> DeepestAllowed() {
  const int n = kMaxNestingDepth - 10;
  return {
      "SELECT " + Repeat("(", n) + "1" + Repeat(")", n),
      "SELECT a" + Repeat("+a", n),
      "SELECT " + Repeat("- ", n) + "1",
      "SELECT x" + Repeat("::int8", n),
      "SELECT " + Repeat("f(", n) + "1" + Repeat(")", n),
      "SELECT " + Repeat("(SELECT ", n / 2) + "1" + Repeat(")", n / 2),
      "SELECT " + Repeat("EXISTS (SELECT ", n / 3) + "1" + Repeat(")", n / 3),
      "SELECT * FROM " + Repeat("(SELECT * FROM ", n / 4) + "t" + Repeat(") s", n / 4),
      "SELECT " + Repeat("CASE WHEN true THEN ", n / 2) + "1" + Repeat(" END", n / 2),
      "SELECT " + Repeat("ARRAY[", n / 2) + "1" + Repeat("]", n / 2),
      "SELECT * FROM t" + Repeat(" JOIN t ON true", n / 4),
      "SELECT 1" + Repeat(" UNION SELECT 1", n / 2),
      // the deepest trees: four messages a level, close to kMaxTreeDepth
      "SELECT " + Repeat("CASE WHEN true THEN ", n) + "1" + Repeat(" END", n),
      "SELECT " + Repeat("a[", n) + "1" + Repeat("]", n),
  };
}

TEST(SqlParse, DeepNestingIsAnErrorNotACrash) {
  for (const std::string& sql : TooDeep()) {
    const SqlError error = ParseError(sql);
    EXPECT_EQ(error.sqlstate, sqlstate::kStatementTooComplex) << sql.substr(0, 60);
    EXPECT_EQ(error.message,
              "statement is too deeply nested (more than 1000 levels of parentheses, operators "
              "and subqueries)");
  }
  // 'a+a+a+…' a million long is over the size bound before anything else.
  EXPECT_EQ(ParseError("SELECT a" + Repeat("+a", 1000000)).sqlstate,
            sqlstate::kProgramLimitExceeded);
}

// The second guard, behind the nesting bound: PostgreSQL's tree is read only to kMaxTreeDepth.
TEST(SqlParse, TheTreeReaderRefusesTreesDeeperThanItsBound) {
  for (const int operators : {1500, 3000}) {  // each `+a` nests two messages (Node, A_Expr)
    const std::string sql = "SELECT a" + Repeat("+a", operators);
    SqlResult<std::vector<Token>> tokens = Scan(sql);
    ASSERT_TRUE(tokens.ok());
    SqlResult<pg_query::ParseResult> parsed =
        ParseTokens(sql, *tokens, TokenRange(0, tokens->size()));
    if (2 * operators < kMaxTreeDepth) {
      EXPECT_TRUE(parsed.ok());
    } else {
      ASSERT_FALSE(parsed.ok());
      EXPECT_EQ(parsed.error().sqlstate, sqlstate::kStatementTooComplex);
      EXPECT_EQ(parsed.error().position, 1);
    }
  }
}

TEST(SqlParse, LongButFlatStatementsAreNotDeep) {
  const std::vector<std::string> flat = {
      "SELECT " + Repeat("1, ", 20000) + "1",
      "SELECT * FROM t WHERE a IN (" + Repeat("1, ", 20000) + "1)",
      "SELECT * FROM t WHERE " + Repeat("a = 1 AND ", 20000) + "true",
      "SELECT * FROM t WHERE " + Repeat("a = 1 OR b = 2 AND ", 10000) + "true",
      "INSERT INTO t VALUES " + Repeat("(1, 'x', 2.5 + 1, NULL), ", 5000) + "(1, 'x', 2, NULL)",
      "SELECT CASE" + Repeat(" WHEN a = 1 THEN 2", 10000) + " END",
  };
  for (const std::string& sql : flat) EXPECT_EQ(KindOf(sql).substr(0, 6), sql.substr(0, 6));
}

// Runs `body` on a thread with a stack of `bytes`.
void OnStack(std::size_t bytes, void (*body)()) {
  pthread_attr_t attributes;
  ASSERT_EQ(pthread_attr_init(&attributes), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attributes, bytes), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attributes,
                [](void* f) -> void* {
                  reinterpret_cast<void (*)()>(f)();
                  return nullptr;
                },
                reinterpret_cast<void*>(body)),
            0);
  pthread_attr_destroy(&attributes);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
}

// Built with ASan or TSan: GCC says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The stack Parse requires (parse.h); twice that under a sanitizer, whose instrumented frames
// (ours and the generated pg_query.pb.cc's, not libprotobuf's or libpg_query's) are larger.
constexpr std::size_t kSmallStack = kSanitized ? 2 * kParseStackBytes : kParseStackBytes;

TEST(SqlParse, TheDeepestAllowedStatementsParseOnASmallStack) {
  OnStack(kSmallStack, [] {
    for (const std::string& sql : DeepestAllowed()) {
      SqlResult<std::vector<ParsedStatement>> parsed = Parse(sql);
      EXPECT_TRUE(parsed.ok()) << sql.substr(0, 60) << ": "
                               << (parsed.ok() ? "" : parsed.error().ToString());
      ExpectWellFormed(sql, parsed);
    }
    for (const std::string& sql : TooDeep()) EXPECT_FALSE(Parse(sql).ok());
  });
}

// Protobuf's own recursions over a tree — copy, serialisation, destructor — go once per level:
// the deepest tree the reader accepts (just inside kMaxTreeDepth) takes them on the stack Parse
// requires (parse.h).
TEST(SqlParse, TheDeepestTreeIsCopiedAndDestroyedOnASmallStack) {
  OnStack(kSmallStack, [] {
    // Each `+a` nests two messages (Node, A_Expr): the deepest accepted has about half the bound.
    for (int operators = kMaxTreeDepth / 2; operators > kMaxTreeDepth / 2 - 20; --operators) {
      const std::string sql = "SELECT a" + Repeat("+a", operators);
      SqlResult<std::vector<Token>> tokens = Scan(sql);
      ASSERT_TRUE(tokens.ok());
      SqlResult<pg_query::ParseResult> parsed =
          ParseTokens(sql, *tokens, TokenRange(0, tokens->size()));
      if (!parsed.ok()) continue;
      EXPECT_GT(operators, kMaxTreeDepth / 2 - 10);  // the bound is where it says
      const pg_query::ParseResult copy(*parsed);
      EXPECT_EQ(copy.SerializeAsString(), parsed->SerializeAsString());
      return;  // both trees destroyed on this stack
    }
    ADD_FAILURE() << "no tree just inside kMaxTreeDepth was accepted";
  });
}

// Statements to mutate: every kind above, Tandem's forms, and some that fail.
std::vector<std::string> Seeds() {
  return {
      "CREATE TABLE t (id int8 PRIMARY KEY, name text NOT NULL)",
      "CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) FROM t JOIN u ON t.id = u.id GROUP BY a",
      "CREATE INDEX i ON mv (a)",
      "DROP TABLE t CASCADE",
      "SHOW MATERIALIZED VIEWS; SHOW COLUMNS FROM t; SHOW TABLES",
      "EXPLAIN SELECT * FROM t WHERE id = 1",
      "INSERT INTO t VALUES (1, 'a'), (2, 'b''c')",
      "UPDATE t SET name = 'x' WHERE id IN (SELECT id FROM u)",
      "DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)",
      "WITH w AS (SELECT * FROM t) SELECT DISTINCT a FROM w LEFT JOIN u USING (a) ORDER BY 1 "
      "LIMIT 3",
      "SELECT a, sum(b) FROM t GROUP BY a HAVING sum(b) > 1 UNION ALL SELECT 1, 2 AS OF 17",
      "SUBSCRIBE TO (SELECT a AS \"of\", 'AS OF' FROM t) AS OF now() - INTERVAL '1 s'",
      "SUBSCRIBE s.t",
      "BEGIN; SET x = 1; COMMIT; ROLLBACK",
      "SELECT $1, E'\\n', $$dollar$$, B'101', X'ff', 1.5e3, U&\"d\\0061t\" FROM \"T\" /* c */ -- c",
      "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END",
      "SELEC 1",
      "SELECT 'unterminated",
  };
}

std::string Mutate(std::string sql, std::mt19937_64& rng) {
  static const std::vector<std::string> kPieces = {"(",
                                                   ")",
                                                   "[",
                                                   "]",
                                                   "'",
                                                   "\"",
                                                   ";",
                                                   ",",
                                                   " AS OF ",
                                                   " SUBSCRIBE ",
                                                   " TO ",
                                                   "/*",
                                                   "*/",
                                                   "--",
                                                   "$$",
                                                   "\\",
                                                   " SELECT ",
                                                   " FROM ",
                                                   "::",
                                                   "\xc3\xa9",
                                                   "\xff",
                                                   std::string(1, '\0'),
                                                   " CASE ",
                                                   " END ",
                                                   " BEGIN ATOMIC ",
                                                   " UNION ",
                                                   " JOIN ",
                                                   "E'",
                                                   "U&'",
                                                   "$1",
                                                   " SHOW ",
                                                   " COLUMNS ",
                                                   " MATERIALIZED ",
                                                   " VIEWS "};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = sql.empty() ? 0 : rng() % (sql.size() + 1);
    switch (rng() % 5) {
      case 0:  // a piece of syntax
        sql.insert(at, kPieces[rng() % kPieces.size()]);
        break;
      case 1:  // delete a run
        if (at < sql.size()) sql.erase(at, 1 + rng() % 8);
        break;
      case 2:  // a random byte
        if (at < sql.size()) sql[at] = static_cast<char>(rng() % 256);
        break;
      case 3:  // duplicate a run
        if (at < sql.size()) sql.insert(at, sql.substr(at, 1 + rng() % 16));
        break;
      default:  // cut the end
        sql.resize(at);
        break;
    }
  }
  return sql;
}

TEST(SqlParse, RandomBytesAndMutatedStatementsNeverCrash) {
  std::mt19937_64 rng(20250607);
  const std::string alphabet =
      "abcxyzSELECTFROMWHEREASOFSUBSCRIBETO0123456789 ()[]'\";,.:*+-/<>=$\\\n\t";
  int errors = 0;
  int parsed = 0;
  for (int i = 0; i < 10000; ++i) {
    std::string sql(rng() % 120, ' ');
    const bool any_byte = i % 3 == 0;
    for (char& c : sql) {
      c = any_byte ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    }
    const SqlResult<std::vector<ParsedStatement>> result = Parse(sql);
    ExpectWellFormed(sql, result);
    (result.ok() ? parsed : errors)++;
  }
  const std::vector<std::string> seeds = Seeds();
  for (int i = 0; i < 10000; ++i) {
    const std::string sql = Mutate(seeds[rng() % seeds.size()], rng);
    const SqlResult<std::vector<ParsedStatement>> result = Parse(sql);
    ExpectWellFormed(sql, result);
    (result.ok() ? parsed : errors)++;
  }
  // Both paths were exercised, not only the early refusals.
  EXPECT_GT(errors, 1000);
  EXPECT_GT(parsed, 500);
}

TEST(SqlParse, ThreadsParseAtOnce) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 300; ++i) {
        const std::string sql = "SELECT a + " + std::to_string(i) + " FROM t" + std::to_string(t) +
                                " AS OF " + std::to_string(i);
        SqlResult<std::vector<ParsedStatement>> parsed = Parse(sql);
        if (!parsed.ok() || parsed->size() != 1 ||
            !std::holds_alternative<SelectAsOfStatement>(parsed->front().form)) {
          ++failures[static_cast<std::size_t>(t)];
        }
        if (Parse("SELEC " + std::to_string(i)).ok()) ++failures[static_cast<std::size_t>(t)];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[static_cast<std::size_t>(t)], 0);
}

}  // namespace
}  // namespace tandem::sql::sql_parse_test
