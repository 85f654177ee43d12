// The real clients against tandem-frontend: psql (PostgreSQL 15's, ON_ERROR_STOP=0, a script
// file) and psycopg2 (Debian's python3-psycopg2 in its default transaction mode:
// tests/python/frontend_clients_test.py) each run a script of every statement kind the frontend
// takes — CREATE TABLE with PRIMARY KEY and NOT NULL, CREATE TABLE … WITH (source = 'csv', path =
// …) over a CSV file, CREATE VIEW, CREATE MATERIALIZED VIEW of a join and an aggregate (read
// after later writes: maintained), CREATE INDEX, SHOW TABLES / VIEWS / MATERIALIZED VIEWS /
// INDEXES / COLUMNS FROM, EXPLAIN (a peek, a one-shot), INSERT … VALUES, INSERT … SELECT, UPDATE,
// DELETE, BEGIN/COMMIT/ROLLBACK, SELECT with joins of every kind, GROUP BY/HAVING, DISTINCT, the
// set operations, ORDER BY/LIMIT/OFFSET, subqueries in FROM, WITH, [NOT] IN and [NOT] EXISTS,
// DROP refused without CASCADE (2BP01) then with it (and, in psycopg2's, DROP INDEX and a table
// dropped with its indexes) — and every answer is checked, and the
// errors' SQLSTATEs: 42P01 unknown table, 42703 unknown column, 42601 syntax, 23505 duplicate
// key, 23502 NULL into NOT NULL, 0A000 not supported.
//
// The expected answers are PostgreSQL's: each script is run against a private PostgreSQL 15
// server first (Tandem's own statements — SHOW, the CSV source, EXPLAIN's text — left out or
// replaced by their PostgreSQL equivalent, and the materialized view REFRESHed before it is read,
// since PostgreSQL's are snapshots), with the same expectations.
//
// KeysByValue (over libpq, on tandem-frontend and on PostgreSQL 15 with the same statements):
// numerics and intervals are keys by value — 1.5 = 1.50 = 1.500, '1 mon' = '30 days' — in a
// PRIMARY KEY (23505), a join, GROUP BY, DISTINCT, UNION/INTERSECT/EXCEPT and count(DISTINCT).
// Where an operator prints one key for equal values spelled apart, Tandem prints the smallest
// spelling present (numerics by value then scale: 1.5 before 1.50; intervals by span, then
// months, then days: '30 days' before '1 mon'); PostgreSQL prints whichever its plan met first,
// so on PostgreSQL only the value is checked there.
//
// The extended query protocol through the drivers that use it (tests/python/
// extended_protocol_test.py, on PostgreSQL 15 first with the same expectations): psycopg 3 with
// server-side binding — text and binary parameters and results, prepared statements (and the
// DEALLOCATE it sends after a ROLLBACK and when its cache is full), a pipeline, a stream — and
// asyncpg — binary everywhere, the parameter types a Parse infers, named statements and Close,
// executemany, a cursor's portal read two rows per Execute (PortalSuspended) — write and read
// back a value of every type of DESIGN §16 equal to what was written, and get their errors'
// SQLSTATEs (22P02, 22P03, 08P01, 42601, 22001, 22003, 23505, 25P02 …).
//
// pgbench (PostgreSQL 15's) runs a custom script — a SELECT and an UPDATE of a random account —
// 200 times on each of 2 connections in each query mode (simple, extended, prepared): every
// transaction is processed, none fails, and every UPDATE is applied exactly once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "frontend_harness.h"
#include "pg_connection.h"
#include "postgres_server.h"
#include "run_binary.h"
#include "temp_dir.h"

#ifndef TANDEM_FRONTEND_CLIENTS_PY
#define TANDEM_FRONTEND_CLIENTS_PY "tests/python/frontend_clients_test.py"
#endif
#ifndef TANDEM_EXTENDED_PROTOCOL_PY
#define TANDEM_EXTENDED_PROTOCOL_PY "tests/python/extended_protocol_test.py"
#endif

namespace tandem::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kPython[] = "/usr/bin/python3";
constexpr char kCsv[] = "id,name,price\n1,apple,0.5\n2,pear,1.25\n3,plum,2.5\n";

// Where the script runs: tandem-frontend, or PostgreSQL (the check of the expectations).
enum class Server { kTandem, kPostgres };

// The tables; products is the CSV source on Tandem, a table with the CSV's rows on PostgreSQL.
// psql variable csv_path: the CSV file.
std::string SetupScript(Server server) {
  std::string sql =
      "CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL, city text);\n"
      "CREATE TABLE orders (id bigint PRIMARY KEY, customer bigint NOT NULL, amount bigint, "
      "paid boolean);\n";
  if (server == Server::kTandem) {
    sql +=
        "CREATE TABLE products (id bigint, name text, price double precision) "
        "WITH (source = 'csv', path = :'csv_path');\n";
  } else {
    sql +=
        "CREATE TABLE products (id bigint, name text, price double precision);\n"
        "INSERT INTO products VALUES (1, 'apple', 0.5), (2, 'pear', 1.25), (3, 'plum', 2.5);\n";
  }
  return sql;
}

// The script proper: each part after an \echo '## <section>' line whose output is checked.
std::string MainScript(Server server) {
  const bool tandem = server == Server::kTandem;
  std::string s;
  s += "\\echo '## writes'\n"
       "INSERT INTO customers VALUES (1, 'ann', 'oslo'), (2, 'bob', 'rome'), (3, 'cy', NULL), "
       "(4, 'dee', 'oslo');\n"
       "INSERT INTO orders VALUES (10, 1, 5, true), (11, 1, 7, false), (12, 2, 3, true), "
       "(13, 3, NULL, NULL), (14, 9, 1, true);\n"
       "\\set QUIET on\n"
       "CREATE VIEW big_orders AS SELECT id, customer, amount FROM orders WHERE amount > 4;\n"
       "CREATE MATERIALIZED VIEW spend AS SELECT c.name, count(*) AS n, max(o.amount) AS top "
       "FROM customers AS c JOIN orders AS o ON o.customer = c.id GROUP BY c.name;\n"
       "CREATE INDEX orders_by_customer ON orders (customer);\n"
       "\\set QUIET off\n";
  if (tandem) {
    s += "\\echo '## show tables'\nSHOW TABLES;\n"
         "\\echo '## show views'\nSHOW VIEWS;\n"
         "\\echo '## show materialized views'\nSHOW MATERIALIZED VIEWS;\n"
         "\\echo '## show indexes'\nSHOW INDEXES;\n"
         "\\echo '## show columns'\nSHOW COLUMNS FROM orders;\n";
  }
  s += "\\echo '## explain peek'\nEXPLAIN SELECT * FROM orders WHERE id = 10;\n"
       "\\echo '## explain one-shot'\n"
       "EXPLAIN SELECT c.name, o.amount FROM customers AS c JOIN orders AS o ON o.customer = "
       "c.id;\n"
       "\\echo '## insert select'\n"
       "INSERT INTO orders SELECT id + 100, customer, amount * 2, paid FROM orders WHERE amount "
       "IS NOT NULL;\n"
       "\\echo '## update'\nUPDATE orders SET amount = amount + 1 WHERE customer = 1;\n"
       "\\echo '## delete'\nDELETE FROM orders WHERE paid = false;\n"
       "\\echo '## transaction'\n"
       "BEGIN;\nINSERT INTO customers VALUES (6, 'eve', NULL);\nCOMMIT;\n"
       "BEGIN;\nSELECT count(*) FROM customers;\nROLLBACK;\n"
       "\\echo '## peek'\nSELECT * FROM orders WHERE id = 10;\n"
       "\\echo '## all orders'\nSELECT * FROM orders ORDER BY id;\n"
       "\\echo '## join group by having'\n"
       "SELECT c.name, count(*) AS n FROM customers AS c JOIN orders AS o ON o.customer = c.id "
       "GROUP BY c.name HAVING count(*) > 1 ORDER BY c.name;\n"
       "\\echo '## left join'\n"
       "SELECT c.name, o.id FROM customers AS c LEFT JOIN orders AS o ON o.customer = c.id AND "
       "o.amount > 5 ORDER BY c.name, o.id;\n"
       "\\echo '## right join'\n"
       "SELECT o.id, c.name FROM customers AS c RIGHT JOIN orders AS o ON o.customer = c.id "
       "ORDER BY o.id;\n"
       "\\echo '## full join'\n"
       "SELECT c.name, o.id FROM customers AS c FULL JOIN orders AS o ON o.customer = c.id "
       "WHERE c.id IS NULL OR o.id IS NULL ORDER BY c.name, o.id;\n"
       "\\echo '## cross join'\nSELECT count(*) FROM customers CROSS JOIN products;\n"
       "\\echo '## distinct'\nSELECT DISTINCT customer FROM orders ORDER BY customer;\n"
       "\\echo '## union'\n"
       "SELECT city FROM customers WHERE city IS NOT NULL UNION SELECT name FROM customers "
       "WHERE id = 1 ORDER BY 1;\n"
       "\\echo '## union all'\n"
       "SELECT customer FROM orders WHERE customer = 1 UNION ALL SELECT id FROM customers "
       "WHERE id = 1;\n"
       "\\echo '## except'\nSELECT customer FROM orders EXCEPT SELECT id FROM customers;\n"
       "\\echo '## except all'\n"
       "SELECT customer FROM orders EXCEPT ALL SELECT id FROM customers ORDER BY 1;\n"
       "\\echo '## intersect'\n"
       "SELECT customer FROM orders INTERSECT SELECT id FROM customers ORDER BY 1;\n"
       "\\echo '## intersect all'\n"
       "SELECT customer FROM orders INTERSECT ALL SELECT customer FROM orders WHERE paid "
       "ORDER BY 1;\n"
       "\\echo '## order limit offset'\n"
       "SELECT id, amount FROM orders ORDER BY id DESC LIMIT 2 OFFSET 1;\n"
       "\\echo '## subquery in from'\n"
       "SELECT t.customer, t.n FROM (SELECT customer, count(*) AS n FROM orders GROUP BY "
       "customer) AS t WHERE t.n > 1 ORDER BY t.customer;\n"
       "\\echo '## with'\n"
       "WITH paid_orders AS (SELECT customer, amount FROM orders WHERE paid) SELECT customer, "
       "count(*), max(amount) FROM paid_orders GROUP BY customer ORDER BY customer;\n"
       "\\echo '## in'\n"
       "SELECT name FROM customers WHERE id IN (SELECT customer FROM orders WHERE amount > 5) "
       "ORDER BY name;\n"
       "\\echo '## not in'\n"
       "SELECT name FROM customers WHERE id NOT IN (SELECT customer FROM orders) ORDER BY name;\n"
       "\\echo '## exists'\n"
       "SELECT c.name FROM customers AS c WHERE EXISTS (SELECT 1 FROM orders AS o WHERE "
       "o.customer = c.id AND o.paid) ORDER BY c.name;\n"
       "\\echo '## not exists'\n"
       "SELECT c.name FROM customers AS c WHERE NOT EXISTS (SELECT 1 FROM orders AS o WHERE "
       "o.customer = c.id) ORDER BY c.name;\n"
       "\\echo '## aggregates'\n"
       "SELECT count(*), count(amount), min(amount), max(amount), sum(amount) FROM orders;\n"
       "\\echo '## view'\nSELECT * FROM big_orders ORDER BY id;\n"
       "\\echo '## materialized view'\n";
  if (!tandem) s += "\\set QUIET on\nREFRESH MATERIALIZED VIEW spend;\n\\set QUIET off\n";
  s += "SELECT * FROM spend ORDER BY name;\n"
       "\\echo '## csv source'\nSELECT id, name, price FROM products ORDER BY id;\n"
       "\\echo '## csv join'\n"
       "SELECT p.name, o.id FROM products AS p JOIN orders AS o ON o.customer = p.id ORDER BY "
       "o.id;\n"
       "\\echo '## errors'\n"
       "SELECT * FROM missing;\n"
       "SELECT nope FROM orders;\n"
       "SELEC 1;\n"
       "INSERT INTO orders VALUES (10, 1, 1, true);\n"
       "INSERT INTO customers VALUES (7, NULL, 'x');\n"
       "SELECT count(*) FROM orders FOR UPDATE;\n";
  if (tandem) s += "SELECT id, row_number() OVER (ORDER BY id) FROM orders;\n";
  s += "\\echo '## after errors'\n"
       "SELECT count(*) FROM orders;\n"
       "SELECT * FROM orders WHERE id = 10;\n"
       "SELECT count(*) FROM customers;\n"
       "\\echo '## drop'\n"
       "DROP TABLE orders;\n"
       "\\set QUIET on\n"
       "DROP TABLE orders CASCADE;\n"
       "\\set QUIET off\n"
       "\\echo '## after drop'\n";
  if (tandem) s += "SHOW VIEWS;\nSHOW MATERIALIZED VIEWS;\n";
  s += "SELECT * FROM spend;\n"
       "SELECT count(*) FROM customers;\n"
       "\\echo '## end'\n";
  return s;
}

// psql's output (-A -t -F '|') by section: the lines after each "## <section>" line.
std::map<std::string, std::string> Sections(const std::string& out) {
  std::map<std::string, std::string> sections;
  std::istringstream in(out);
  std::string line, current = "(before any section)";
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      current = line.substr(3);
      sections[current];
      continue;
    }
    sections[current] += line + "\n";
  }
  return sections;
}

// The SQLSTATEs of the ERRORs psql printed (VERBOSITY verbose: "ERROR:  42P01: …"), in order.
std::vector<std::string> ErrorStates(const std::string& err) {
  std::vector<std::string> states;
  const std::regex error("ERROR:  ([0-9A-Z]{5}): ");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), error); it != std::sregex_iterator();
       ++it) {
    states.push_back((*it)[1].str());
  }
  return states;
}

// What each section must print: PostgreSQL's answers (the materialized view's after the later
// writes: Tandem maintains it, PostgreSQL's is REFRESHed).
const std::map<std::string, std::string>& ExpectedSections() {
  static const std::map<std::string, std::string> expected = {
      {"writes", "INSERT 0 4\nINSERT 0 5\n"},
      {"insert select", "INSERT 0 4\n"},
      {"update", "UPDATE 4\n"},
      {"delete", "DELETE 2\n"},
      {"transaction", "BEGIN\nINSERT 0 1\nCOMMIT\nBEGIN\n5\nROLLBACK\n"},
      {"peek", "10|1|6|t\n"},
      {"all orders", "10|1|6|t\n12|2|3|t\n13|3||\n14|9|1|t\n110|1|11|t\n112|2|6|t\n114|9|2|t\n"},
      {"join group by having", "ann|2\nbob|2\n"},
      {"left join", "ann|10\nann|110\nbob|112\ncy|\ndee|\neve|\n"},
      {"right join", "10|ann\n12|bob\n13|cy\n14|\n110|ann\n112|bob\n114|\n"},
      {"full join", "dee|\neve|\n|14\n|114\n"},
      {"cross join", "15\n"},
      {"distinct", "1\n2\n3\n9\n"},
      {"union", "ann\noslo\nrome\n"},
      {"union all", "1\n1\n1\n"},
      {"except", "9\n"},
      {"except all", "1\n2\n9\n9\n"},
      {"intersect", "1\n2\n3\n"},
      {"intersect all", "1\n1\n2\n2\n9\n9\n"},
      {"order limit offset", "112|6\n110|11\n"},
      {"subquery in from", "1|2\n2|2\n9|2\n"},
      {"with", "1|2|11\n2|2|6\n9|2|2\n"},
      {"in", "ann\nbob\n"},
      {"not in", "dee\neve\n"},
      {"exists", "ann\nbob\n"},
      {"not exists", "dee\neve\n"},
      {"aggregates", "7|6|1|11|29\n"},
      {"view", "10|1|6\n110|1|11\n112|2|6\n"},
      {"materialized view", "ann|2|11\nbob|2|6\ncy|1|\n"},
      {"csv source", "1|apple|0.5\n2|pear|1.25\n3|plum|2.5\n"},
      {"csv join", "apple|10\npear|12\nplum|13\napple|110\npear|112\n"},
      {"errors", ""},
      {"after errors", "7\n10|1|6|t\n5\n"},
      {"drop", ""},
      {"after drop", "5\n"},
      {"end", ""},
  };
  return expected;
}

// Runs the two scripts with psql against `port` (database `database`, user `user`): the setup,
// then — once `ready` holds (the CSV source has its rows) — the main one. Checks every section
// and the errors' SQLSTATEs.
void RunPsqlScripts(Server server, int port, const std::string& database, const std::string& user,
                    const std::function<bool()>& ready) {
  FrontendClientEnvironment();
  TempDir dir("frontend-psql");
  dir.Write("products.csv", kCsv);
  dir.Write("setup.sql", SetupScript(server));
  dir.Write("main.sql", MainScript(server));
  // The connection, then: go on past errors, errors with their SQLSTATE, the CSV file's path as
  // :'csv_path', unaligned tuples only.
  std::vector<std::string> connect = {"-X", "-h", "127.0.0.1", "-p", std::to_string(port)};
  connect.insert(connect.end(), {"-d", database, "-U", user});
  connect.insert(connect.end(), {"-v", "ON_ERROR_STOP=0", "-v", "VERBOSITY=verbose"});
  connect.insert(connect.end(), {"-v", "csv_path=" + dir.File("products.csv")});
  connect.insert(connect.end(), {"-A", "-t", "-F", "|"});
  auto psql = [&](const std::string& file) {
    std::vector<std::string> args = connect;
    args.push_back("-f");
    args.push_back(dir.File(file));
    return RunBinary(FrontendPsqlBinary(), args, {.limit = 180s, .strip_tandem_env = true});
  };
  const BinaryRun setup = psql("setup.sql");
  ASSERT_EQ(setup.exit, 0) << DescribeRun(setup);
  ASSERT_EQ(ErrorStates(setup.err), std::vector<std::string>()) << DescribeRun(setup);
  ASSERT_TRUE(Eventually(ready, 30s)) << "the CSV source's rows never came";

  const BinaryRun run = psql("main.sql");
  ASSERT_EQ(run.exit, 0) << DescribeRun(run);
  const std::map<std::string, std::string> sections = Sections(run.out);
  for (const auto& [section, text] : ExpectedSections()) {
    const auto found = sections.find(section);
    ASSERT_NE(found, sections.end()) << "no section " << section << "\n" << DescribeRun(run);
    EXPECT_EQ(found->second, text) << "section " << section << "\n" << DescribeRun(run);
  }
  if (server == Server::kTandem) {
    // Tandem's own statements: the catalog's answers.
    const std::string tables = sections.at("show tables");
    for (const char* table : {"customers\n", "orders\n", "products\n"}) {
      EXPECT_NE(tables.find(table), std::string::npos) << table << DescribeRun(run);
    }
    EXPECT_EQ(sections.at("show views"), "big_orders\n") << DescribeRun(run);
    EXPECT_EQ(sections.at("show materialized views"), "spend\n") << DescribeRun(run);
    EXPECT_NE(sections.at("show indexes").find("orders_by_customer|orders|customer\n"),
              std::string::npos)
        << DescribeRun(run);
    EXPECT_EQ(sections.at("show columns"),
              "id|bigint|NO\ncustomer|bigint|NO\namount|bigint|YES\npaid|boolean|YES\n")
        << DescribeRun(run);
    EXPECT_NE(sections.at("explain peek").find("Peek"), std::string::npos) << DescribeRun(run);
    EXPECT_NE(sections.at("explain one-shot").find("One-shot"), std::string::npos)
        << DescribeRun(run);
  }
  std::vector<std::string> states = {"42P01", "42703", "42601", "23505", "23502", "0A000"};
  if (server == Server::kTandem) states.push_back("0A000");  // the window function
  states.insert(states.end(), {"2BP01", "42P01"});
  EXPECT_EQ(ErrorStates(run.err), states) << DescribeRun(run);
}

// ---- PostgreSQL: the expectations are PostgreSQL's

// The database the scripts connect to ("tandem", as on the frontend), C collation (the order
// Tandem sorts text in).
void CreateTandemDatabase(PostgresServer& server) {
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(server
                  .Execute("CREATE DATABASE tandem TEMPLATE template0 LC_COLLATE 'C' "
                           "LC_CTYPE 'C'")
                  .ok());
}

TEST(FrontendClientsTest, PsqlScriptAnswersAsExpectedOnPostgres) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer server;
  ASSERT_NO_FATAL_FAILURE(CreateTandemDatabase(server));
  RunPsqlScripts(Server::kPostgres, server.port(), "tandem", "postgres", [] { return true; });
}

TEST(FrontendClientsTest, Psycopg2ScriptAnswersAsExpectedOnPostgres) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer server;
  ASSERT_NO_FATAL_FAILURE(CreateTandemDatabase(server));
  FrontendClientEnvironment();
  TempDir dir("frontend-psycopg2");
  dir.Write("products.csv", kCsv);
  const BinaryRun run =
      RunBinary(kPython,
                {TANDEM_FRONTEND_CLIENTS_PY, "--port", std::to_string(server.port()), "--user",
                 "postgres", "--csv", dir.File("products.csv"), "--postgres"},
                {.limit = 180s, .strip_tandem_env = true});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.out.find("all checks passed"), std::string::npos) << DescribeRun(run);
}

// ---- tandem-frontend

TEST(FrontendClientsTest, PsqlRunsEveryStatementKind) {
  FrontendServer frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  PgConnection reader(frontend.conninfo());
  ASSERT_TRUE(reader.ok()) << reader.error();
  RunPsqlScripts(Server::kTandem, frontend.Port(), "tandem", "tester", [&] {
    const PgAnswer rows = reader.Execute("SELECT count(*) FROM products");
    if (rows.ok() && rows.rows == std::vector<SqlRow>{{"3"}}) return true;
    std::this_thread::sleep_for(100ms);  // a read is a dataflow: not in a tight loop
    return false;
  });
  if (HasFailure()) std::cout << frontend.LogTail();
  // Still serving.
  const PgAnswer one = reader.Execute("SELECT 1");
  EXPECT_TRUE(one.ok()) << (one.ok() ? "" : one.error->ToString());
}

TEST(FrontendClientsTest, Psycopg2RunsEveryStatementKind) {
  FrontendServer frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  FrontendClientEnvironment();
  TempDir dir("frontend-psycopg2");
  dir.Write("products.csv", kCsv);
  const BinaryRun run =
      RunBinary(kPython,
                {TANDEM_FRONTEND_CLIENTS_PY, "--port", std::to_string(frontend.Port()), "--user",
                 "tester", "--csv", dir.File("products.csv")},
                {.limit = 180s, .strip_tandem_env = true});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run) << frontend.LogTail();
  EXPECT_NE(run.out.find("all checks passed"), std::string::npos) << DescribeRun(run);
}

// ---- the extended query protocol: psycopg 3 and asyncpg

// Why psycopg 3 and asyncpg cannot be imported by kPython (for GTEST_SKIP); nullopt when they can.
std::optional<std::string> ExtendedProtocolDriversMissing() {
  const BinaryRun run = RunBinary(kPython, {"-c", "import psycopg, asyncpg"}, {.limit = 60s});
  if (run.exit == 0) return std::nullopt;
  return std::string(kPython) + " cannot import psycopg (3) and asyncpg: " + run.err;
}

// Runs tests/python/extended_protocol_test.py against `port`; it must pass every check.
void RunExtendedProtocolScript(int port, const std::string& user, bool postgres) {
  FrontendClientEnvironment();
  std::vector<std::string> args = {TANDEM_EXTENDED_PROTOCOL_PY, "--port", std::to_string(port),
                                   "--user", user};
  if (postgres) args.push_back("--postgres");
  const BinaryRun run = RunBinary(kPython, args, {.limit = 180s, .strip_tandem_env = true});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.out.find("all checks passed"), std::string::npos) << DescribeRun(run);
}

TEST(FrontendClientsTest, ExtendedProtocolScriptAnswersAsExpectedOnPostgres) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  if (auto why = ExtendedProtocolDriversMissing()) GTEST_SKIP() << *why;
  PostgresServer server;
  ASSERT_NO_FATAL_FAILURE(CreateTandemDatabase(server));
  RunExtendedProtocolScript(server.port(), "postgres", /*postgres=*/true);
}

TEST(FrontendClientsTest, ExtendedProtocolDriversRoundTripEveryType) {
  if (auto why = ExtendedProtocolDriversMissing()) GTEST_SKIP() << *why;
  FrontendServer frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  RunExtendedProtocolScript(frontend.Port(), "tester", /*postgres=*/false);
  if (HasFailure()) std::cout << frontend.LogTail();
}

// ---- pgbench

// The accounts pgbench's script reads and updates: aid 1..kAccounts, abalance 0 at first.
constexpr int kAccounts = 1000;

TEST(FrontendClientsTest, PgbenchRunsEveryQueryMode) {
  const std::string pgbench = PostgresServer::Binary("pgbench");
  if (access(pgbench.c_str(), X_OK) != 0) GTEST_SKIP() << pgbench << " is not installed";
  FrontendServer frontend;
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  PgConnection connection(frontend.conninfo());
  ASSERT_TRUE(connection.ok()) << connection.error();
  auto run = [&](const std::string& sql) {
    const PgAnswer answer = connection.Execute(sql);
    EXPECT_TRUE(answer.ok()) << sql.substr(0, 200) << ": "
                             << (answer.ok() ? "" : answer.error->ToString());
    return answer;
  };
  run("CREATE TABLE accounts (aid int4 PRIMARY KEY, abalance int4, filler text)");
  // INSERT … VALUES of 250 rows at a time.
  for (int first = 1; first <= kAccounts; first += 250) {
    std::string sql = "INSERT INTO accounts VALUES ";
    for (int aid = first; aid <= std::min(first + 249, kAccounts); ++aid) {
      if (aid > first) sql += ", ";
      sql += "(" + std::to_string(aid) + ", 0, 'account " + std::to_string(aid) + "')";
    }
    run(sql);
  }
  ASSERT_EQ(run("SELECT count(*), sum(abalance) FROM accounts").rows,
            (std::vector<SqlRow>{{std::to_string(kAccounts), "0"}}));

  FrontendClientEnvironment();
  TempDir dir("frontend-pgbench");
  dir.Write("script.sql", "\\set aid random(1, " + std::to_string(kAccounts) +
                              ")\n"
                              "SELECT abalance FROM accounts WHERE aid = :aid;\n"
                              "UPDATE accounts SET abalance = abalance + 1 WHERE aid = :aid;\n");
  int updates = 0;
  for (const char* mode : {"simple", "extended", "prepared"}) {
    const BinaryRun bench =
        RunBinary(pgbench,
                  {"-n", "-M", mode, "-f", dir.File("script.sql"), "-t", "200", "-c", "2", "-h",
                   "127.0.0.1", "-p", std::to_string(frontend.Port()), "-U", "tester", "tandem"},
                  {.limit = 120s, .strip_tandem_env = true});
    EXPECT_EQ(bench.exit, 0) << mode << "\n" << DescribeRun(bench);
    EXPECT_NE(bench.out.find("number of transactions actually processed: 400/400"),
              std::string::npos)
        << mode << "\n"
        << DescribeRun(bench);
    EXPECT_NE(bench.out.find("number of failed transactions: 0 (0.000%)"), std::string::npos)
        << mode << "\n"
        << DescribeRun(bench);
    // Each transaction's UPDATE added 1 to one balance, once.
    updates += 2 * 200;
    EXPECT_EQ(run("SELECT sum(abalance) FROM accounts").rows,
              std::vector<SqlRow>{{std::to_string(updates)}})
        << "after pgbench -M " << mode;
  }
  if (HasFailure()) std::cout << frontend.LogTail();
}

// ---- keys by value: the same statements on tandem-frontend and on PostgreSQL

// One server for every test of the suite (each test's tables are its own), started at the first
// test that asks for it.
class KeysByValue : public ::testing::TestWithParam<Server> {
 protected:
  static void TearDownTestSuite() {
    tandem_.reset();
    postgres_.reset();
  }

  void SetUp() override {
    if (GetParam() == Server::kPostgres) {
      TANDEM_SKIP_UNLESS_POSTGRES();
      if (postgres_ == nullptr) postgres_ = std::make_unique<PostgresServer>();
      ASSERT_TRUE(postgres_->ok()) << postgres_->error();
      connection_ = std::make_unique<PgConnection>(postgres_->conninfo());
    } else {
      if (tandem_ == nullptr) tandem_ = std::make_unique<FrontendServer>();
      ASSERT_GT(tandem_->Port(), 0) << tandem_->LogTail();
      connection_ = std::make_unique<PgConnection>(tandem_->conninfo());
    }
    ASSERT_TRUE(connection_->ok()) << connection_->error();
  }

  void TearDown() override {
    if (HasFailure() && GetParam() == Server::kTandem && tandem_ != nullptr) {
      std::cout << tandem_->LogTail();
    }
  }

  bool tandem() const { return GetParam() == Server::kTandem; }

  // Runs `sql`, which must succeed; its answer.
  PgAnswer Run(const std::string& sql) {
    PgAnswer answer = connection_->Execute(sql);
    EXPECT_TRUE(answer.ok()) << sql << ": " << (answer.ok() ? "" : answer.error->ToString());
    return answer;
  }

  // The rows of `sql`, which must succeed.
  std::vector<SqlRow> Rows(const std::string& sql) { return Run(sql).rows; }

  // The SQLSTATE of `sql`, which must fail.
  std::string Refusal(const std::string& sql) {
    const PgAnswer answer = connection_->Execute(sql);
    EXPECT_FALSE(answer.ok()) << sql << " succeeded";
    return answer.sqlstate();
  }

  // One row of one value: `tandems` on Tandem; on PostgreSQL any of `spellings` (all equal).
  void ExpectOneKey(const std::vector<SqlRow>& rows, const std::string& tandems,
                    const std::set<std::string>& spellings, const std::string& sql) {
    ASSERT_EQ(rows.size(), 1u) << sql;
    ASSERT_EQ(rows[0].size(), 1u) << sql;
    ASSERT_TRUE(rows[0][0].has_value()) << sql;
    if (tandem()) {
      EXPECT_EQ(*rows[0][0], tandems) << sql;
    } else {
      EXPECT_EQ(spellings.count(*rows[0][0]), 1u) << sql << ": " << *rows[0][0];
    }
  }

 private:
  static std::unique_ptr<FrontendServer> tandem_;
  static std::unique_ptr<PostgresServer> postgres_;
  std::unique_ptr<PgConnection> connection_;
};

std::unique_ptr<FrontendServer> KeysByValue::tandem_;
std::unique_ptr<PostgresServer> KeysByValue::postgres_;

TEST_P(KeysByValue, NumericPrimaryKeyRefusesAnEqualValueOfAnotherScale) {
  Run("CREATE TABLE pk_numeric (x numeric PRIMARY KEY)");
  Run("INSERT INTO pk_numeric VALUES (1.5)");
  EXPECT_EQ(Refusal("INSERT INTO pk_numeric VALUES (1.50)"), "23505");
  EXPECT_EQ(Rows("SELECT x FROM pk_numeric"), std::vector<SqlRow>{{"1.5"}});
}

TEST_P(KeysByValue, IntervalPrimaryKeyRefusesAnEqualSpan) {
  Run("CREATE TABLE pk_interval (iv interval PRIMARY KEY)");
  Run("INSERT INTO pk_interval VALUES (INTERVAL '1 mon')");
  EXPECT_EQ(Refusal("INSERT INTO pk_interval VALUES (INTERVAL '30 days')"), "23505");
  EXPECT_EQ(Refusal("INSERT INTO pk_interval VALUES (INTERVAL '720:00:00')"), "23505");
  EXPECT_EQ(Rows("SELECT iv FROM pk_interval"), std::vector<SqlRow>{{"1 mon"}});
}

TEST_P(KeysByValue, JoinMatchesNumericsOfDifferentScalesEachSidePrintingItsOwn) {
  Run("CREATE TABLE join_scaled (id bigint, m numeric(12,4))");
  Run("CREATE TABLE join_free (id bigint, x numeric)");
  Run("INSERT INTO join_scaled VALUES (1, -0.75), (2, 0.25)");
  Run("INSERT INTO join_free VALUES (3, -0.75), (4, 0.3)");
  const std::string sql =
      "SELECT s.id, s.m, f.id, f.x FROM join_scaled AS s JOIN join_free AS f ON s.m = f.x";
  EXPECT_EQ(Rows(sql), (std::vector<SqlRow>{{"1", "-0.7500", "3", "-0.75"}})) << sql;
}

TEST_P(KeysByValue, GroupByNumericIsOneGroupPrintingTheSmallestSpellingPresent) {
  Run("CREATE TABLE group_numeric (id bigint, x numeric)");
  Run("INSERT INTO group_numeric VALUES (1, 1.50), (2, 1.5)");
  const std::string sql = "SELECT x, count(*) FROM group_numeric GROUP BY x";
  const std::vector<SqlRow> both = Rows(sql);
  ASSERT_EQ(both.size(), 1u) << sql;
  EXPECT_EQ(both[0][1], SqlValue("2")) << sql;
  ASSERT_TRUE(both[0][0].has_value()) << sql;
  if (tandem()) {
    EXPECT_EQ(*both[0][0], "1.5") << sql;
  } else {
    EXPECT_TRUE(*both[0][0] == "1.5" || *both[0][0] == "1.50") << sql << ": " << *both[0][0];
  }
  // Without the 1.5 row the key's only spelling is 1.50.
  Run("DELETE FROM group_numeric WHERE id = 2");
  EXPECT_EQ(Rows(sql), (std::vector<SqlRow>{{"1.50", "1"}})) << sql;
}

TEST_P(KeysByValue, DistinctIntervalsOfOneSpanAreOneRowPrintingTheSmallestSpelling) {
  Run("CREATE TABLE distinct_interval (id bigint, iv interval)");
  Run("INSERT INTO distinct_interval VALUES (1, INTERVAL '1 mon'), (2, INTERVAL '30 days')");
  const std::string sql = "SELECT DISTINCT iv FROM distinct_interval";
  ExpectOneKey(Rows(sql), "30 days", {"1 mon", "30 days"}, sql);
}

TEST_P(KeysByValue, UnionIntersectAndExceptMatchNumericsOfDifferentScales) {
  Run("CREATE TABLE set_short (x numeric)");
  Run("CREATE TABLE set_long (x numeric)");
  Run("INSERT INTO set_short VALUES (1.5)");
  Run("INSERT INTO set_long VALUES (1.50)");
  const std::string union_sql = "SELECT x FROM set_long UNION SELECT x FROM set_short";
  ExpectOneKey(Rows(union_sql), "1.5", {"1.5", "1.50"}, union_sql);
  // INTERSECT keeps the left input's rows that the right matches: the left's spelling.
  const std::string intersect_sql = "SELECT x FROM set_long INTERSECT SELECT x FROM set_short";
  ExpectOneKey(Rows(intersect_sql), "1.50", {"1.5", "1.50"}, intersect_sql);
  const std::string except_sql = "SELECT x FROM set_long EXCEPT SELECT x FROM set_short";
  EXPECT_EQ(Rows(except_sql), std::vector<SqlRow>{}) << except_sql;
}

TEST_P(KeysByValue, IntersectAllCountsEachValueOnceWhateverItsSpellings) {
  Run("CREATE TABLE all_left (x numeric)");
  Run("CREATE TABLE all_right (x numeric)");
  Run("INSERT INTO all_left VALUES (1.5), (1.50)");
  const std::string none = "SELECT x FROM all_left INTERSECT ALL SELECT x FROM all_right";
  EXPECT_EQ(Rows(none), std::vector<SqlRow>{}) << none;
  Run("INSERT INTO all_left VALUES (1.50), (1.50)");
  Run("INSERT INTO all_right VALUES (1.50)");
  const std::string one = "SELECT x FROM all_left INTERSECT ALL SELECT x FROM all_right";
  ExpectOneKey(Rows(one), "1.50", {"1.5", "1.50"}, one);
}

// The general outer join finds the left rows in no pair exactly: of two rows equal by value, the
// one the ON condition (which reads the spelling) refuses keeps its row with nulls.
TEST_P(KeysByValue, AnOuterJoinKeepsTheUnmatchedSpellingOfAValueAnotherSpellingMatched) {
  Run("CREATE TABLE outer_left (k bigint, iv interval)");
  Run("CREATE TABLE outer_right (k bigint)");
  Run("INSERT INTO outer_left VALUES (1, INTERVAL '1 mon'), (1, INTERVAL '30 days')");
  Run("INSERT INTO outer_right VALUES (1)");
  const std::string sql =
      "SELECT l.iv, r.k FROM outer_left AS l LEFT JOIN outer_right AS r "
      "ON l.k = r.k AND extract(day FROM l.iv) > 0 ORDER BY l.iv::text";
  EXPECT_EQ(Rows(sql), (std::vector<SqlRow>{{"1 mon", std::nullopt}, {"30 days", "1"}})) << sql;
}

TEST_P(KeysByValue, CountDistinctCountsEqualNumericsOfEveryScaleOnce) {
  Run("CREATE TABLE count_numeric (id bigint, x numeric)");
  Run("INSERT INTO count_numeric VALUES (1, 1.5), (2, 1.50), (3, 1.500)");
  EXPECT_EQ(Rows("SELECT count(DISTINCT x) FROM count_numeric"), std::vector<SqlRow>{{"1"}});
}

INSTANTIATE_TEST_SUITE_P(Servers, KeysByValue,
                         ::testing::Values(Server::kTandem, Server::kPostgres),
                         [](const ::testing::TestParamInfo<Server>& info) {
                           return std::string(info.param == Server::kTandem ? "Tandem"
                                                                            : "Postgres");
                         });

}  // namespace
}  // namespace tandem::testing
