// The parts of tandem_frontend_core that need no replica: flags, the in-memory replay history,
// the transaction states of BEGIN/COMMIT/ROLLBACK, the SQL threads' stacks, the cancel token and
// the endpoints file.
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "frontend/server/cancel_token.h"
#include "frontend/server/config.h"
#include "frontend/server/endpoints_file.h"
#include "frontend/server/replay_history.h"
#include "frontend/server/sql_answers.h"
#include "frontend/server/sql_threads.h"
#include "frontend/server/transaction_block.h"
#include "frontend/sql/parse.h"
#include "temp_dir.h"

namespace tandem::frontend {
namespace {

using pgwire::TransactionStatus;

FrontendFlags Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "tandem-frontend");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseFrontendFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(FrontendFlags, DefaultsAndADerivedReplicaIdPerDataDir) {
  auto f = Parse({"--data-dir", "/tmp/x/../frontend-a"});
  ASSERT_TRUE(f.config) << f.output;
  EXPECT_EQ(f.config->data_dir, "/tmp/frontend-a");
  EXPECT_EQ(f.config->sql_listen_addr, "127.0.0.1:6875");
  EXPECT_TRUE(f.config->replicas.empty());
  EXPECT_EQ(f.config->history_window.count(), 1000);
  EXPECT_EQ(f.config->local.replica_id.rfind("fe-", 0), 0u);
  auto g = Parse({"--data-dir", "/tmp/frontend-b"});
  ASSERT_TRUE(g.config);
  EXPECT_NE(f.config->local.replica_id, g.config->local.replica_id);
  EXPECT_EQ(Parse({"--data-dir", "/tmp/frontend-a"}).config->local.replica_id,
            f.config->local.replica_id);
}

TEST(FrontendFlags, BadUsageExits64WithTheReason) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {},
           {"--data-dir", "/tmp/d", "--bogus"},
           {"--data-dir", "/tmp/d", "--history-window-ms", "-1"},
           {"--data-dir", "/tmp/d", "--replica", "tcp://a:1", "--replica", "tcp://a:1"},
           {"--data-dir", "/tmp/d", "--interactive-runtime", "maybe"},
           {"--data-dir", "/tmp/d", "--log-level", "loud"}}) {
    auto f = Parse(args);
    EXPECT_FALSE(f.config);
    EXPECT_EQ(f.exit_code, kExitUsage) << f.output;
    EXPECT_NE(f.output.find("tandem-frontend: "), std::string::npos) << f.output;
  }
  auto help = Parse({"--help"});
  EXPECT_EQ(help.exit_code, kExitOk);
  EXPECT_NE(help.output.find("Exit codes"), std::string::npos);
}

pb::Command Create(const std::string& index) {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_class_(pb::MAINTAINED);
  d->add_index_exports()->set_id(index);
  return c;
}

TEST(InMemoryReplayHistory, KeepsDataflowsAndDropsNotOneShotsNorCompactions) {
  InMemoryReplayHistory h;
  EXPECT_EQ(h.Version(), 0u);
  EXPECT_TRUE(h.Record(Create("u2")));
  EXPECT_TRUE(h.Record(Create("u4")));
  pb::Command one_shot = Create("t1");
  one_shot.mutable_create_dataflow()->mutable_desc()->set_class_(pb::ONE_SHOT_READ);
  EXPECT_FALSE(h.Record(one_shot));
  pb::Command compaction;
  compaction.mutable_allow_compaction()->set_id("u2");
  compaction.mutable_allow_compaction()->mutable_frontier()->add_elements(5);
  EXPECT_FALSE(h.Record(compaction));
  pb::Command drop;
  drop.mutable_allow_compaction()->set_id("u2");
  drop.mutable_allow_compaction()->mutable_frontier();
  EXPECT_TRUE(h.Record(drop));
  EXPECT_EQ(h.Version(), 3u);
  EXPECT_EQ(h.Commands().size(), 3u);
  EXPECT_EQ(h.LiveIndexIds(), (std::vector<std::string>{"u4"}));
}

TEST(TransactionCommands, FollowPostgresStatesTagsAndWarnings) {
  auto begin = ApplyTransactionCommand(TransactionCommand::kBegin, TransactionStatus::kIdle);
  EXPECT_EQ(begin.tag, "BEGIN");
  EXPECT_EQ(begin.status, TransactionStatus::kInTransaction);
  EXPECT_TRUE(begin.warning.empty());
  auto again =
      ApplyTransactionCommand(TransactionCommand::kBegin, TransactionStatus::kInTransaction);
  EXPECT_EQ(again.warning_sqlstate, "25001");
  EXPECT_EQ(again.status, TransactionStatus::kInTransaction);
  auto commit =
      ApplyTransactionCommand(TransactionCommand::kCommit, TransactionStatus::kInTransaction);
  EXPECT_EQ(commit.tag, "COMMIT");
  EXPECT_EQ(commit.status, TransactionStatus::kIdle);
  // COMMIT of a failed block rolls it back, as PostgreSQL says.
  auto failed = ApplyTransactionCommand(TransactionCommand::kCommit, TransactionStatus::kFailed);
  EXPECT_EQ(failed.tag, "ROLLBACK");
  EXPECT_EQ(failed.status, TransactionStatus::kIdle);
  auto idle = ApplyTransactionCommand(TransactionCommand::kRollback, TransactionStatus::kIdle);
  EXPECT_EQ(idle.tag, "ROLLBACK");
  EXPECT_EQ(idle.warning_sqlstate, "25P01");
  EXPECT_EQ(idle.warning, "there is no transaction in progress");
}

TEST(SqlThreads, RunEveryTaskOnThreadsWithTheStackAsked) {
  SqlThreads threads;
  ASSERT_TRUE(threads.Start(3, sql::kParseStackBytes).ok());
  constexpr int kTasks = 50;
  std::atomic<int> ran{0}, small_stacks{0};
  std::promise<void> all;
  for (int i = 0; i < kTasks; ++i) {
    ASSERT_TRUE(threads.Post([&] {
      pthread_attr_t attr;
      std::size_t stack = 0;
      if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &stack);
        pthread_attr_destroy(&attr);
      }
      if (stack < sql::kParseStackBytes) ++small_stacks;
      if (++ran == kTasks) all.set_value();
    }));
  }
  ASSERT_EQ(all.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(small_stacks, 0);
  threads.Stop();
  EXPECT_FALSE(threads.Post([] {}));  // stopped: refused, not run
}

TEST(CancelToken, CallsTheWaitersActionOnceAndResetsPerQuery) {
  CancelToken token;
  int called = 0;
  token.OnCancel([&] { ++called; });
  EXPECT_FALSE(token.canceled());
  token.Cancel();
  EXPECT_TRUE(token.canceled());
  EXPECT_EQ(called, 1);
  token.ClearOnCancel();
  token.Cancel();
  EXPECT_EQ(called, 1);
  // Registered after the cancel: called at once.
  token.OnCancel([&] { ++called; });
  EXPECT_EQ(called, 2);
  token.Reset();
  EXPECT_FALSE(token.canceled());
  token.Cancel();
  EXPECT_EQ(called, 2);  // Reset dropped the action
}

TEST(EndpointsFile, WrittenWholeAndRemovedOnlyIfStillOurs) {
  testing::TempDir dir("frontend-unit");
  const std::string path = dir.File("endpoints");
  {
    EndpointsFile file(path);
    ASSERT_TRUE(file.Write("127.0.0.1:5555").ok());
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "sql_listen_addr=127.0.0.1:5555");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  {
    EndpointsFile file(path);
    ASSERT_TRUE(file.Write("127.0.0.1:5555").ok());
    // Another process replaced it: not ours to remove.
    dir.Write("other", "sql_listen_addr=127.0.0.1:6666\n");
    std::filesystem::rename(dir.File("other"), path);
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  EndpointsFile unwritable(dir.File("missing/endpoints"));
  EXPECT_FALSE(unwritable.Write("127.0.0.1:1").ok());
}

// RowDescription as PostgreSQL 15 sends it (psql's \gdesc, and pg_attribute.atttypmod of
// CREATE TABLE x (a numeric(10,2), b varchar(5), c char(3), …)): the OID, the binary length and the
// type modifier a client decodes by (psycopg2: Decimal, date, datetime, timedelta, UUID).
TEST(SqlAnswersTest, ColumnsAreDescribedWithPostgresOidsLengthsAndModifiers) {
  struct Case {
    ipc::pb::ScalarType type;
    TypeMods mods;
    std::uint32_t oid;
    std::int16_t typlen;
    std::int32_t typmod;
  };
  const std::vector<Case> cases = {
      {ipc::pb::INT16, {}, 21, 2, -1},
      {ipc::pb::INT32, {}, 23, 4, -1},
      {ipc::pb::INT64, {}, 20, 8, -1},
      {ipc::pb::FLOAT32, {}, 700, 4, -1},
      {ipc::pb::FLOAT64, {}, 701, 8, -1},
      {ipc::pb::NUMERIC, {}, 1700, -1, -1},
      {ipc::pb::NUMERIC, {10, 2, 0, false}, 1700, -1, (10 << 16 | 2) + 4},  // 655366
      {ipc::pb::STRING, {}, 25, -1, -1},
      {ipc::pb::STRING, {0, 0, 5, false}, 1043, -1, 9},
      {ipc::pb::STRING, {0, 0, 3, true}, 1042, -1, 7},
      {ipc::pb::BYTEA, {}, 17, -1, -1},
      {ipc::pb::DATE, {}, 1082, 4, -1},
      {ipc::pb::TIME, {}, 1083, 8, -1},
      {ipc::pb::TIMESTAMP, {}, 1114, 8, -1},
      {ipc::pb::TIMESTAMPTZ, {}, 1184, 8, -1},
      {ipc::pb::INTERVAL, {}, 1186, 16, -1},
      {ipc::pb::UUID, {}, 2950, 16, -1},
      {ipc::pb::BOOL, {}, 16, 1, -1},
  };
  for (const Case& c : cases) {
    const pgwire::FieldDescription f = DescribeColumn(CatalogColumn{"x", c.type, true, c.mods});
    EXPECT_EQ(f.type.oid, c.oid) << ipc::pb::ScalarType_Name(c.type);
    EXPECT_EQ(f.type.typlen, c.typlen) << ipc::pb::ScalarType_Name(c.type);
    EXPECT_EQ(f.type_modifier, c.typmod) << ipc::pb::ScalarType_Name(c.type);
  }
}

// A replica's data error with PostgreSQL's words gets PostgreSQL's SQLSTATE.
TEST(SqlAnswersTest, DataErrorsGetPostgresSqlstates) {
  EXPECT_EQ(ReadError("integer out of range").sqlstate, "22003");
  EXPECT_EQ(ReadError("numeric field overflow").sqlstate, "22003");
  EXPECT_EQ(ReadError("division by zero").sqlstate, "22012");
  EXPECT_EQ(ReadError("value too long for type character varying(3)").sqlstate, "22001");
  EXPECT_EQ(ReadError("invalid input syntax for type date: \"x\"").sqlstate, "22007");
  EXPECT_EQ(ReadError("invalid input syntax for type integer: \"x\"").sqlstate, "22P02");
  EXPECT_EQ(ReadError("date out of range: \"5874898-01-01\"").sqlstate, "22008");
  EXPECT_EQ(ReadError("something else").sqlstate, "22000");
}

}  // namespace
}  // namespace tandem::frontend
