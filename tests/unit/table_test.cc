// A table in process (workers/tables/table.h, DESIGN §9): the group-commit writer answers a write
// only once it is in the log, with one time per commit that the table's upper then passes; a
// retried uuid is answered with its first time and not applied again, also after a reopen; a
// drop answers nothing twice and moves the log away; a log of another definition breaks the table.
#include "workers/tables/table.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>

#include "ipc/rows.h"
#include "temp_dir.h"
#include "workers/sources/table_source.h"

namespace tandem::workers {
namespace {

namespace pb = ipc::pb;
using namespace std::chrono_literals;

pb::SourceImport TableImport(bool upsert) {
  pb::SourceImport import;
  import.set_id("u1");
  import.mutable_source()->mutable_table()->set_tick_interval_ms(10);
  auto* k = import.mutable_schema()->add_columns();
  k->set_name("k");
  k->set_type(pb::INT64);
  auto* v = import.mutable_schema()->add_columns();
  v->set_name("v");
  v->set_type(pb::STRING);
  if (upsert) import.add_upsert_key(0);
  return import;
}

pb::WriteTable TableWrite(const std::string& uuid, std::int64_t k, const std::string& v,
                          bool upsert = false) {
  pb::WriteTable w;
  w.set_uuid(uuid);
  w.set_id("u1");
  pb::TableUpdate* u = w.add_updates();
  const Row row{Datum{k}, Datum{v}};
  if (upsert) {
    *u->mutable_upsert() = ipc::ToProto(row);
  } else {
    *u->mutable_update()->mutable_row() = ipc::ToProto(row);
    u->mutable_update()->set_diff(1);
  }
  return w;
}

// The writer's answers, by uuid, waited for with a bound.
class Answers {
 public:
  TableWriter::Answer Sink() {
    return [this](std::vector<pb::Response> answers) {
      std::lock_guard l(mu_);
      for (auto& a : answers) got_.emplace(a.write_response().uuid(), a.write_response());
      cv_.notify_all();
    };
  }
  pb::WriteResponse Wait(const std::string& uuid) {
    std::unique_lock l(mu_);
    const bool came = cv_.wait_for(l, 10s, [&] { return got_.count(uuid) > 0; });
    EXPECT_TRUE(came) << "no answer for " << uuid;
    return came ? got_.find(uuid)->second : pb::WriteResponse{};
  }
  std::size_t Count(const std::string& uuid) {
    std::lock_guard l(mu_);
    return got_.count(uuid);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<std::string, pb::WriteResponse> got_;
};

std::unique_ptr<TableWriter> Writer(const testing::TempDir& dir, Answers& answers) {
  auto data_dir = DataDir::Open(dir.path(), 1s);
  EXPECT_TRUE(data_dir.ok()) << data_dir.status().ToString();
  return std::make_unique<TableWriter>(std::move(data_dir).value(), answers.Sink());
}

TEST(Table, AWriteIsAnsweredWithATimeTheUpperThenPassesAndItsUpdatesAreTaken) {
  testing::TempDir dir("table");
  Answers answers;
  auto writer = Writer(dir, answers);
  auto table = writer->Open(TableImport(false));
  const Time before = WallClockMs();
  writer->Submit(table, TableWrite("~w1:a", 1, "x"));
  const pb::WriteResponse r = answers.Wait("~w1:a");
  ASSERT_EQ(r.result_case(), pb::WriteResponse::kTime) << r.error();
  EXPECT_GE(r.time(), before);
  const Table::Taken taken = table->Take(0);
  ASSERT_EQ(taken.writes.size(), 1u);
  EXPECT_EQ(taken.writes[0].uuid(), "a") << "the log keeps the client's uuid";
  EXPECT_EQ(taken.writes[0].time(), r.time());
  EXPECT_GT(taken.upper, r.time());
}

// The backlog (what a table holds that its index has not taken): a write that would pass the bound
// is refused while something is held, and taking what is held lets writes in again. Every write
// answered without being published (a retried uuid, a write for another definition) gives its
// bytes back, so the backlog is exactly what waits.
TEST(Table, WritesPastTheBacklogBoundAreRefusedUntilTheIndexTakesWhatIsHeld) {
  testing::TempDir dir("table");
  Answers answers;
  auto writer = Writer(dir, answers);
  auto table = writer->Open(TableImport(false));
  const std::string big(4000, 'x');
  const std::uint64_t one = TableWrite("~w1:0", 0, big).ByteSizeLong();
  const std::uint64_t bound = 3 * one;
  int accepted = 0;
  for (int i = 0; i < 10; ++i) {
    const std::string uuid = "~w1:" + std::to_string(i);
    if (!writer->Submit(table, TableWrite(uuid, i, big), bound)) break;
    ++accepted;
    EXPECT_EQ(answers.Wait(uuid).result_case(), pb::WriteResponse::kTime);
  }
  EXPECT_EQ(accepted, 3);
  EXPECT_EQ(table->backlog(), 3 * one);
  // A retry of an acknowledged uuid and a write of another schema are answered, never published:
  // their bytes are let go of at once. (Admitted: the bound is checked before a write is known.)
  const Table::Taken taken = table->Take(0);
  EXPECT_EQ(taken.writes.size(), 3u);
  EXPECT_EQ(table->backlog(), 0u);
  ASSERT_TRUE(writer->Submit(table, TableWrite("~w2:0", 0, big), bound));
  EXPECT_EQ(answers.Wait("~w2:0").result_case(), pb::WriteResponse::kTime);
  pb::WriteTable wrong = TableWrite("~w1:x", 1, "y");
  wrong.mutable_updates(0)->mutable_update()->mutable_row()->mutable_datums()->RemoveLast();
  ASSERT_TRUE(writer->Submit(table, wrong, bound));
  EXPECT_EQ(answers.Wait("~w1:x").result_case(), pb::WriteResponse::kError);
  EXPECT_EQ(table->backlog(), 0u) << "nothing published, nothing held";
  // A write larger than the bound alone is admitted when nothing is held.
  ASSERT_TRUE(writer->Submit(table, TableWrite("~w1:huge", 7, std::string(5 * one, 'z')), bound));
  EXPECT_EQ(answers.Wait("~w1:huge").result_case(), pb::WriteResponse::kTime);
  EXPECT_FALSE(writer->Submit(table, TableWrite("~w1:more", 8, "z"), bound));
  EXPECT_EQ(table->Take(0).writes.size(), 1u);
  EXPECT_EQ(table->backlog(), 0u);
}

TEST(Table, TheUpperFollowsTheClockWhenNoWriteComes) {
  testing::TempDir dir("table");
  Answers answers;
  auto writer = Writer(dir, answers);
  auto table = writer->Open(TableImport(false));
  const Time now = WallClockMs();
  EXPECT_GE(table->Take(now).upper, now);
  EXPECT_EQ(table->Take(now + 5).upper, now) << "not before a tick (10 ms) has passed";
  EXPECT_EQ(table->Take(now + 10).upper, now + 10);
}

TEST(Table, ARetriedUuidIsAnsweredWithItsFirstTimeAndNotAppliedAgainEvenAfterAReopen) {
  testing::TempDir dir("table");
  Time first = 0;
  {
    Answers answers;
    auto writer = Writer(dir, answers);
    auto table = writer->Open(TableImport(false));
    writer->Submit(table, TableWrite("~w1:a", 1, "x"));
    first = answers.Wait("~w1:a").time();
    writer->Submit(table,
                   TableWrite("~w2:a", 1, "x"));  // the same client uuid from another session
    EXPECT_EQ(answers.Wait("~w2:a").time(), first);
    EXPECT_EQ(table->Take(0).writes.size(), 1u);
  }
  Answers answers;
  auto writer = Writer(dir, answers);
  auto table = writer->Open(TableImport(false));
  EXPECT_EQ(table->Take(0).writes.size(), 1u) << "the durable write is replayed";
  writer->Submit(table, TableWrite("~w9:a", 1, "x"));
  EXPECT_EQ(answers.Wait("~w9:a").time(), first);
  writer->Submit(table, TableWrite("~w9:b", 2, "y"));
  EXPECT_GT(answers.Wait("~w9:b").time(), first) << "new writes come after the replayed ones";
  EXPECT_EQ(table->Take(0).writes.size(), 1u) << "only b is new";
}

TEST(Table, ADropMovesTheLogAwaySoARecreatedTableStartsEmpty) {
  testing::TempDir dir("table");
  Answers answers;
  auto writer = Writer(dir, answers);
  auto table = writer->Open(TableImport(true));
  writer->Submit(table, TableWrite("~w1:a", 1, "x", /*upsert=*/true));
  ASSERT_EQ(answers.Wait("~w1:a").result_case(), pb::WriteResponse::kTime);
  writer->Drop(table);
  writer->Submit(table, TableWrite("~w2:b", 2, "y", true));
  EXPECT_EQ(answers.Wait("~w2:b").result_case(), pb::WriteResponse::kError);
  std::size_t dropped = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.File("dropped"))) {
    dropped += e.path().filename().string().starts_with("u1-");
  }
  EXPECT_EQ(dropped, 1u);
  auto again = writer->Open(TableImport(true));
  EXPECT_TRUE(again->broken().empty());
  EXPECT_TRUE(again->Take(0).writes.empty());
}

TEST(Table, ALogOfAnotherDefinitionBreaksTheTableAndItsWritesAreAnsweredWithTheError) {
  testing::TempDir dir("table");
  Answers answers;
  auto writer = Writer(dir, answers);
  { auto plain = writer->Open(TableImport(false)); }
  auto upsert = writer->Open(TableImport(true));  // same id, now with an upsert key
  ASSERT_FALSE(upsert->broken().empty());
  EXPECT_NE(upsert->broken().find("upsert key"), std::string::npos) << upsert->broken();
  writer->Submit(upsert, TableWrite("~w1:a", 1, "x", true));
  const pb::WriteResponse r = answers.Wait("~w1:a");
  EXPECT_EQ(r.error(), upsert->broken());
}

// A write the supervisor validated against an earlier definition of its table (a writer's,
// during a controller's replay that redefined it) is answered with an error and never logged.
TEST(Table, AWriteThatDoesNotFitTheTablesDefinitionIsRefusedAndNotLogged) {
  testing::TempDir dir("table");
  Answers answers;
  auto writer = Writer(dir, answers);
  auto table = writer->Open(TableImport(true));                          // an upsert table
  writer->Submit(table, TableWrite("~w1:a", 1, "x", /*upsert=*/false));  // an update with a diff
  const pb::WriteResponse r = answers.Wait("~w1:a");
  ASSERT_EQ(r.result_case(), pb::WriteResponse::kError);
  EXPECT_NE(r.error().find("upsert key"), std::string::npos) << r.error();
  pb::WriteTable short_row = TableWrite("~w1:b", 1, "x", true);
  short_row.mutable_updates(0)->mutable_upsert()->mutable_datums()->RemoveLast();
  writer->Submit(table, short_row);
  EXPECT_EQ(answers.Wait("~w1:b").result_case(), pb::WriteResponse::kError);
  writer->Submit(table, TableWrite("~w1:c", 1, "x", true));
  EXPECT_EQ(answers.Wait("~w1:c").result_case(), pb::WriteResponse::kTime);
  const Table::Taken taken = table->Take(0);
  ASSERT_EQ(taken.writes.size(), 1u) << "only the write that fits";
  EXPECT_EQ(taken.writes[0].uuid(), "c");
}

TEST(Table, ManyConcurrentWritesShareCommitsAndEachIsAnsweredOnce) {
  testing::TempDir dir("table");
  Answers answers;
  auto writer = Writer(dir, answers);
  auto table = writer->Open(TableImport(false));
  constexpr int kWrites = 500;
  for (int i = 0; i < kWrites; ++i) {
    writer->Submit(table, TableWrite("~w1:" + std::to_string(i), i, "v"));
  }
  std::set<Time> times;
  Time last = 0;
  for (int i = 0; i < kWrites; ++i) {
    const pb::WriteResponse r = answers.Wait("~w1:" + std::to_string(i));
    EXPECT_GE(r.time(), last) << "answer times follow submission order";
    last = r.time();
    times.insert(r.time());
  }
  for (int i = 0; i < kWrites; ++i) EXPECT_EQ(answers.Count("~w1:" + std::to_string(i)), 1u);
  EXPECT_LT(times.size(), static_cast<std::size_t>(kWrites)) << "group commit: fewer commits";
  EXPECT_EQ(table->Take(0).writes.size(), static_cast<std::size_t>(kWrites));
}

}  // namespace
}  // namespace tandem::workers
