// The PostgreSQL test server (tests/postgres_server.h), the oracle of the SQL suites: it starts,
// answers with NULLs and duplicates as PostgreSQL does, reports errors with their SQLSTATE, runs
// beside another one, leaves nothing behind, and the real clients — psql and Python's psycopg2
// in its default transaction mode — reach it. Skipped where PostgreSQL 15 is not installed.
#include "postgres_server.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_binary.h"
#include "sql_rows.h"

namespace tandem::testing::postgres_server_test {
namespace {

using namespace std::chrono_literals;

SqlRow Row(std::initializer_list<SqlValue> values) { return SqlRow(values); }

// The pids of `parent`'s children, from /proc.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 2));
    char state;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) children.push_back(std::stoi(name));
  }
  return children;
}

// The System V shared memory segments process `creator` made (PostgreSQL's interlock segment).
int SysvSegmentsOf(pid_t creator) {
  std::ifstream in("/proc/sysvipc/shm");
  std::string line;
  std::getline(in, line);  // the header
  int count = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    long key, id, perms, size, cpid;
    if (fields >> key >> id >> perms >> size >> cpid && cpid == creator) ++count;
  }
  return count;
}

bool Running(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

TEST(PostgresServer, StartsAndAnswersRowsWithNullsAndDuplicatesInTextWithTypeOids) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  EXPECT_GT(pg.port(), 0);

  auto created = pg.Execute("CREATE TABLE t (k int8, v text, f float8, b bool)");
  ASSERT_TRUE(created.ok()) << created.error->ToString();
  EXPECT_EQ(created.command_tag, "CREATE TABLE");
  auto inserted = pg.Execute(
      "INSERT INTO t VALUES (1, 'a', 0.1, true), (1, 'a', 0.1, true), (2, NULL, NULL, NULL),"
      " (3, '', '-0', false), (2, NULL, NULL, NULL), (NULL, 'it''s', 1e100, NULL)");
  ASSERT_TRUE(inserted.ok()) << inserted.error->ToString();
  EXPECT_EQ(inserted.command_tag, "INSERT 0 6");

  const PgAnswer r = pg.Execute("SELECT k, v, f, b FROM t");
  ASSERT_TRUE(r.ok()) << r.error->ToString();
  EXPECT_EQ(r.column_names, (std::vector<std::string>{"k", "v", "f", "b"}));
  EXPECT_EQ(r.column_types, (std::vector<unsigned>{pg_type::kInt8, pg_type::kText, pg_type::kFloat8,
                                                   pg_type::kBool}));
  EXPECT_EQ(r.command_tag, "SELECT 6");
  PgAnswer expected = r;
  expected.rows = {Row({"2", std::nullopt, std::nullopt, std::nullopt}),
                   Row({"1", "a", "0.1", "t"}),
                   Row({std::nullopt, "it's", "1e+100", std::nullopt}),
                   Row({"3", "", "-0", "f"}),
                   Row({"1", "a", "0.1", "t"}),
                   Row({"2", std::nullopt, std::nullopt, std::nullopt})};
  EXPECT_TRUE(SameResult(expected, r, {.float_text = true}));
  // A NULL is not the empty string, and a duplicate counts.
  expected.rows[3][1] = std::nullopt;
  EXPECT_FALSE(SameResult(expected, r));
  expected.rows[3][1] = "";
  expected.rows.pop_back();
  EXPECT_FALSE(SameResult(expected, r));

  const PgAnswer ordered =
      pg.Execute("SELECT k, count(*) FROM t GROUP BY k ORDER BY k NULLS FIRST");
  ASSERT_TRUE(ordered.ok()) << ordered.error->ToString();
  EXPECT_EQ(ordered.rows, (std::vector<SqlRow>{Row({std::nullopt, "1"}), Row({"1", "2"}),
                                               Row({"2", "2"}), Row({"3", "1"})}));
}

// What sql_rows.h's float comparison relies on: PostgreSQL 15 prints float8 in shortest exact
// form (extra_float_digits = 1), one text per number.
TEST(PostgresServer, PrintsFloatsInShortestExactForm) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  const PgAnswer r = pg.Execute(
      "SELECT 0.1::float8, 1e100::float8, 1/3::float8, '-0'::float8, 'NaN'::float8,"
      " '-Infinity'::float8, 100000::float8, 1e15::float8, 1e16::float8, 0.0001::float8,"
      " current_setting('extra_float_digits')");
  ASSERT_TRUE(r.ok()) << r.error->ToString();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0], Row({"0.1", "1e+100", "0.3333333333333333", "-0", "NaN", "-Infinity",
                            "100000", "1e+15", "1e+16", "0.0001", "1"}));
}

TEST(PostgresServer, AnErrorCarriesItsSqlstateAndTheSessionGoesOn) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  const PgAnswer missing = pg.Execute("SELECT * FROM no_such_table");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.sqlstate(), "42P01") << missing.error->ToString();
  EXPECT_NE(missing.error->message.find("no_such_table"), std::string::npos);
  EXPECT_EQ(pg.Execute("SELEC 1").sqlstate(), "42601");
  EXPECT_EQ(
      pg.Execute("CREATE TABLE u (k int8 PRIMARY KEY); INSERT INTO u VALUES (1), (1)").sqlstate(),
      "23505");
  // The failed statements' implicit transaction rolled back: no table u.
  EXPECT_EQ(pg.Execute("SELECT * FROM u").sqlstate(), "42P01");
  const PgAnswer after = pg.Execute("SELECT 1 AS one");
  ASSERT_TRUE(after.ok()) << after.error->ToString();
  EXPECT_EQ(after.rows, (std::vector<SqlRow>{Row({"1"})}));
  // The same errors compare equal by SQLSTATE (the differential suites' rule for errors).
  EXPECT_TRUE(SameResult(missing, pg.Execute("SELECT x FROM also_missing")));
  EXPECT_FALSE(SameResult(missing, after));
}

TEST(PostgresServer, TwoServersAtOnceHaveTheirOwnPortsDirectoriesAndData) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer a, b;
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_NE(a.port(), b.port());
  EXPECT_NE(a.dir(), b.dir());
  ASSERT_TRUE(a.Execute("CREATE TABLE only_in_a (k int8)").ok());
  EXPECT_TRUE(a.Execute("SELECT * FROM only_in_a").ok());
  EXPECT_EQ(b.Execute("SELECT * FROM only_in_a").sqlstate(), "42P01");
}

// The race between choosing a free port and binding it, lost on purpose: the second server is
// told to take the first one's port. Its postmaster cannot bind it and exits; the start is not
// fooled by the first server answering on that port, but tries another, and each server answers
// for itself.
TEST(PostgresServer, APortAnotherServerHoldsIsRetriedNotMistakenForItsOwn) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer a;
  ASSERT_TRUE(a.ok()) << a.error();
  PostgresServer b({.first_port = a.port()});
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_NE(b.port(), a.port());
  for (PostgresServer* pg : {&a, &b}) {
    const PgAnswer answer = pg->Execute("SHOW data_directory");
    ASSERT_TRUE(answer.ok()) << answer.error->ToString();
    EXPECT_EQ(answer.rows, std::vector<SqlRow>{Row({pg->data_dir()})});
  }
  EXPECT_NE(b.Log().find("could not bind"), std::string::npos) << b.Log();
}

// A template of another PostgreSQL version or initdb format (made before an upgrade) is removed
// by the next server's start; the current one stays.
TEST(PostgresServer, TemplatesOfOtherVersionsAndFormatsAreRemoved) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  std::filesystem::path base;
  struct stat owner;
  {
    PostgresServer pg;  // makes the current template if there is none yet
    ASSERT_TRUE(pg.ok()) << pg.error();
    base = std::filesystem::path(pg.dir()).parent_path();
    ASSERT_EQ(stat(pg.data_dir().c_str(), &owner), 0);
  }
  const std::string suffix = "-u" + std::to_string(owner.st_uid);
  const std::filesystem::path stale = base / ("tandem-postgres-template-0.0-old-f1" + suffix);
  std::filesystem::create_directories(stale / "global");
  ASSERT_EQ(chown(stale.c_str(), owner.st_uid, owner.st_gid), 0);
  auto templates = [&] {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(base)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("tandem-postgres-template-") && name.ends_with(suffix)) {
        names.push_back(name);
      }
    }
    return names;
  };
  std::vector<std::string> current = templates();
  std::erase(current, stale.filename().string());
  PostgresServer pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_EQ(templates(), current);
}

TEST(PostgresServer, LeavesNoProcessDirectorySegmentOrListenerBehind) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  pid_t postmaster;
  std::vector<pid_t> children;
  std::string dir, conninfo;
  {
    PostgresServer pg;
    ASSERT_TRUE(pg.ok()) << pg.error();
    ASSERT_TRUE(pg.Execute("CREATE TABLE t AS SELECT 1 AS k").ok());  // a backend and WAL
    postmaster = pg.pid();
    children = ChildrenOf(postmaster);
    dir = pg.dir();
    conninfo = pg.conninfo();
    EXPECT_FALSE(children.empty());  // checkpointer, walwriter, the test's backend, …
    EXPECT_TRUE(std::filesystem::exists(pg.data_dir() + "/PG_VERSION"));
    EXPECT_EQ(SysvSegmentsOf(postmaster), 1);
  }
  EXPECT_FALSE(Running(postmaster));
  for (pid_t child : children) EXPECT_FALSE(Running(child)) << "child " << child;
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_EQ(SysvSegmentsOf(postmaster), 0);
  EXPECT_EQ(PQping(conninfo.c_str()), PQPING_NO_RESPONSE);
}

TEST(PostgresServer, LogicalReplicationIsConfigurable) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer plain;
  PostgresServer upstream({.logical_replication = true});
  ASSERT_TRUE(plain.ok()) << plain.error();
  ASSERT_TRUE(upstream.ok()) << upstream.error();
  EXPECT_EQ(plain.Execute("SHOW wal_level").rows, (std::vector<SqlRow>{Row({"replica"})}));
  EXPECT_EQ(upstream.Execute("SHOW wal_level").rows, (std::vector<SqlRow>{Row({"logical"})}));
  const PgAnswer slot =
      upstream.Execute("SELECT slot_name FROM pg_create_logical_replication_slot('s', 'pgoutput')");
  ASSERT_TRUE(slot.ok()) << slot.error->ToString();
  EXPECT_EQ(slot.rows, (std::vector<SqlRow>{Row({"s"})}));
  EXPECT_EQ(plain.Execute("SELECT pg_create_logical_replication_slot('s', 'pgoutput')").sqlstate(),
            "55000");  // object_not_in_prerequisite_state: wal_level < logical
}

TEST(PostgresServer, PsqlReachesItOverTcpAndTheUnixSocket) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  ASSERT_TRUE(
      pg.Execute("CREATE TABLE t (k int8, v text); INSERT INTO t VALUES (1, 'x'), (2, NULL)").ok());
  const std::string psql = PostgresServer::Binary("psql");
  // -X: no ~/.psqlrc; -A -t: unaligned rows only; NULL printed as <null>.
  const BinaryRun tcp = RunBinary(psql,
                                  {"-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-P", "null=<null>",
                                   "-d", pg.conninfo(), "-c", "SELECT k, v FROM t ORDER BY k"},
                                  {.limit = 30s});
  EXPECT_EQ(tcp.exit, 0) << DescribeRun(tcp);
  EXPECT_EQ(tcp.out, "1|x\n2|<null>\n") << DescribeRun(tcp);
  const BinaryRun socket =
      RunBinary(psql,
                {"-X", "-A", "-t", "-h", pg.socket_dir(), "-p", std::to_string(pg.port()), "-U",
                 "postgres", "-d", "postgres", "-c", "SELECT count(*) FROM t"},
                {.limit = 30s});
  EXPECT_EQ(socket.exit, 0) << DescribeRun(socket);
  EXPECT_EQ(socket.out, "2\n") << DescribeRun(socket);
  // An error reaches psql with its SQLSTATE (VERBOSITY verbose prints it).
  const BinaryRun error = RunBinary(psql,
                                    {"-X", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose", "-d",
                                     pg.conninfo(), "-c", "SELECT * FROM no_such_table"},
                                    {.limit = 30s});
  EXPECT_NE(error.exit, 0) << DescribeRun(error);
  EXPECT_NE(error.err.find("42P01"), std::string::npos) << DescribeRun(error);
}

TEST(PostgresServer, Psycopg2ReachesItInItsDefaultTransactionMode) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  const std::string python = "/usr/bin/python3";
  const BinaryRun probe = RunBinary(python, {"-c", "import psycopg2"}, {.limit = 30s});
  if (probe.exit != 0) {
    GTEST_SKIP() << "no psycopg2 for " << python
                 << " (Debian: python3-psycopg2): " << DescribeRun(probe);
  }
  PostgresServer pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  // Default mode: a transaction begins with the first statement and ends with commit/rollback.
  const std::string script = R"py(
import sys, psycopg2
conn = psycopg2.connect(sys.argv[1])
cur = conn.cursor()
cur.execute("CREATE TABLE py (k int8 PRIMARY KEY, v text)")
cur.execute("INSERT INTO py VALUES (%s, %s), (%s, %s)", (1, "one", 2, None))
conn.commit()
cur.execute("SELECT k, v FROM py ORDER BY k")
print(cur.fetchall())
try:
    cur.execute("SELECT * FROM no_such_table")
except psycopg2.Error as e:
    print(e.pgcode)
conn.rollback()
cur.execute("INSERT INTO py VALUES (3, 'rolled back')")
conn.rollback()
conn.close()
)py";
  const BinaryRun run = RunBinary(python, {"-c", script, pg.conninfo()}, {.limit = 30s});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_EQ(run.out, "[(1, 'one'), (2, None)]\n42P01\n") << DescribeRun(run);
  const PgAnswer rows = pg.Execute("SELECT k, v FROM py");
  ASSERT_TRUE(rows.ok()) << rows.error->ToString();
  EXPECT_TRUE(SameResult(PgAnswer{.column_names = {"k", "v"},
                                  .column_types = {pg_type::kInt8, pg_type::kText},
                                  .rows = {Row({"2", std::nullopt}), Row({"1", "one"})},
                                  .command_tag = "SELECT 2",
                                  .error = std::nullopt},
                         rows));
}

}  // namespace
}  // namespace tandem::testing::postgres_server_test
