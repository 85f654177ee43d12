// Durable table writes survive crashes (issue 15, Acceptance 2; DESIGN §9 invariant W1): a writer
// session keeps a window of WriteTable commands in flight against a plain table and an upsert
// table while, at a random moment of each round, the maintenance runtime (or, in the other test,
// the supervisor) is SIGKILLed. Each round then starts a new supervisor with the same --data-dir,
// replays the controller's history (the CreateDataflow of the tables), re-sends every write that
// was never acknowledged with its uuid, and peeks: the tables hold exactly the writer's writes —
// every acknowledged one, none twice (each write of the plain table inserts rows no other write
// has, so a write applied twice shows as a count of 2, a lost one as a missing row), and the
// upsert table holds per key the last write's value.
//
// TANDEM_TEST_ROUNDS=<n> changes the number of rounds (default 20); TANDEM_TEST_SEED the seed.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "differential.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

namespace pb = ::tandem::protocol;

constexpr std::int64_t kUpsertKeys = 64;

// u1: a plain table (k, v); u2: an upsert table (k, v) keyed by k; u3, u4: indexes on them.
pb::Command TablesDataflow() {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name("crash test tables");
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  d->mutable_until();
  for (const char* id : {"u1", "u2"}) {
    auto* s = d->add_source_imports();
    s->set_id(id);
    s->mutable_source()->mutable_table()->set_tick_interval_ms(50);
    for (const char* name : {"k", "v"}) {
      auto* col = s->mutable_schema()->add_columns();
      col->set_name(name);
      col->set_type(pb::INT64);
    }
    if (std::string(id) == "u2") s->add_upsert_key(0);
  }
  for (auto [index, on] : {std::pair{"u3", "u1"}, std::pair{"u4", "u2"}}) {
    auto* e = d->add_index_exports();
    e->set_id(index);
    e->set_on(on);
    e->add_key(0);
  }
  return c;
}

pb::Datum Int(std::int64_t v) {
  pb::Datum d;
  d.set_int64(v);
  return d;
}

// The writer's own record: every write it made, in order, and which were acknowledged.
struct Write {
  pb::Command command;
  std::optional<Time> time;  // acknowledged
  int sends = 0;
};

class Writer {
 public:
  explicit Writer(std::uint64_t seed) : rng_(seed) {}

  // A new write: to the plain table, rows (seq * 8 + i, seq) that no other write has; to the
  // upsert table, upserts of random keys with value seq, sometimes a delete.
  std::size_t Next() {
    const std::int64_t seq = static_cast<std::int64_t>(writes_.size());
    pb::Command c;
    auto* w = c.mutable_write_table();
    w->set_uuid("crash-" + std::to_string(seq));
    if (rng_() % 2 == 0) {
      w->set_id("u1");
      const int rows = 1 + static_cast<int>(rng_() % 3);
      for (int i = 0; i < rows; ++i) {
        auto* u = w->add_updates()->mutable_update();
        *u->mutable_row()->add_datums() = Int(seq * 8 + i);
        *u->mutable_row()->add_datums() = Int(seq);
        u->set_diff(1);
      }
    } else {
      w->set_id("u2");
      const int n = 1 + static_cast<int>(rng_() % 2);
      for (int i = 0; i < n; ++i) {
        const std::int64_t k = static_cast<std::int64_t>(rng_() % kUpsertKeys);
        auto* u = w->add_updates();
        if (rng_() % 5 == 0) {
          *u->mutable_delete_()->add_datums() = Int(k);
        } else {
          *u->mutable_upsert()->add_datums() = Int(k);
          *u->mutable_upsert()->add_datums() = Int(seq);
        }
      }
    }
    writes_.push_back({std::move(c), std::nullopt, 0});
    return writes_.size() - 1;
  }

  std::vector<Write>& writes() { return writes_; }

  // What the tables hold at `t` when every acknowledged write is applied exactly once at its
  // acknowledged time (in the order written, within one time): u1 its rows with count 1, u2 per
  // key the last value.
  std::map<std::string, std::string> Expected(Time t) const {
    std::vector<const Write*> applied;
    for (const auto& w : writes_) {
      if (w.time && *w.time <= t) applied.push_back(&w);
    }
    std::stable_sort(applied.begin(), applied.end(),
                     [](const Write* a, const Write* b) { return *a->time < *b->time; });
    std::map<std::vector<std::int64_t>, int> plain;
    std::map<std::int64_t, std::int64_t> upsert;
    for (const Write* w : applied) {
      const auto& wt = w->command.write_table();
      for (const auto& u : wt.updates()) {
        if (u.has_update()) {
          plain[{u.update().row().datums(0).int64(), u.update().row().datums(1).int64()}] += 1;
        } else if (u.has_upsert()) {
          upsert[u.upsert().datums(0).int64()] = u.upsert().datums(1).int64();
        } else {
          upsert.erase(u.delete_().datums(0).int64());
        }
      }
    }
    std::string p, q;
    for (const auto& [row, n] : plain)
      p += "(" + std::to_string(row[0]) + "," + std::to_string(row[1]) + ")x" + std::to_string(n) +
           " ";
    for (const auto& [k, v] : upsert)
      q += "(" + std::to_string(k) + "," + std::to_string(v) + ")x1 ";
    return {{"u3", p}, {"u4", q}};
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  std::vector<Write> writes_;
};

std::string RowsText(const pb::PeekResponse& p) {
  std::string out;
  for (const auto& rc : p.rows().rows()) {
    out += "(" + std::to_string(rc.row().datums(0).int64()) + "," +
           std::to_string(rc.row().datums(1).int64()) + ")x" + std::to_string(rc.count()) + " ";
  }
  return out;
}

// A first difference between two RowsText strings, for the failure message.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  std::size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  const std::size_t from = expected.rfind(' ', i == 0 ? 0 : i - 1);
  const std::size_t start = from == std::string::npos ? 0 : from + 1;
  return "expected ..." + expected.substr(start, 80) + "\n  actual   ..." +
         actual.substr(start, 80);
}

enum class Victim { kMaintenance, kSupervisor };

void RunCrashRounds(Victim victim, std::uint64_t seed_base) {
  const TempDir temp("table-crash");
  const std::string data_dir = temp.File("data");
  const pb::Command create = TablesDataflow();
  const std::uint64_t seed = SeedFromEnv().value_or(seed_base);
  const char* rounds_env = std::getenv("TANDEM_TEST_ROUNDS");
  const int rounds = rounds_env ? std::max(1, std::atoi(rounds_env)) : 20;
  Writer writer(seed);
  // durable_retries: re-sent writes answered with a time from before their replica's restart
  // (made durable before the crash, not applied again).
  int acked = 0, retried = 0, unanswered_at_crash = 0, durable_retries = 0;
  const auto start = std::chrono::steady_clock::now();

  for (int round = 0; round <= rounds; ++round) {
    const auto restarted_ms =
        static_cast<Time>(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
    SupervisorProcess sup({.extra_args = {"--data-dir", data_dir},
                           .two_runtime = true,
                           .workers = 2,
                           .worker_binary = TANDEM_WORKER_BIN,
                           .shm_size = "64MiB"});
    ASSERT_TRUE(sup.WaitReady(30s)) << "round " << round << "\n" << Tail(sup.Log());
    TestController ctl(sup.controller_endpoint());
    ASSERT_TRUE(ctl.Hello("crash-" + std::to_string(round)));
    Session session(sup, ctl);
    // The controller's history: the tables' dataflow, replayed each round (to a new replica: no
    // reconciliation, the runtime re-reads the tables' logs). The writer is another session, not
    // ordered with this one: it writes once the indexes report.
    ctl.Send(create);
    pb::Command done;
    done.mutable_initialization_complete();
    ctl.Send(done);
    ASSERT_TRUE(session.WaitFor(
        [&] { return session.Write("u3").has_value() && session.Write("u4").has_value(); }, 30s))
        << "round " << round << ": the tables' indexes never reported\n"
        << Tail(sup.Log());
    ASSERT_TRUE(session.command_errors().empty()) << session.command_errors().front();

    TestController wctl(sup.controller_endpoint());
    wctl.Send(
        ipc::MakeHello("writer-" + std::to_string(round), /*observer=*/true, /*writer=*/true));
    ASSERT_TRUE(wctl.ReceiveUntil([](const auto& r) {
                      return r.has_status() && r.status().has_hello_accepted();
                    })
                    .has_value())
        << "round " << round << ": the writer's Hello was not accepted\n"
        << Tail(sup.Log());
    Session ws(sup, wctl);

    // Re-send every write never acknowledged, with its uuid, in order; wait for all answers.
    auto& writes = writer.writes();
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < writes.size(); ++i) {
      if (writes[i].time) continue;
      wctl.Send(writes[i].command);
      ++writes[i].sends;
      ++retried;
      pending.push_back(i);
    }
    auto take_answers = [&] {
      for (auto it = pending.begin(); it != pending.end();) {
        auto& w = writes[*it];
        auto r = ws.write_responses().find(w.command.write_table().uuid());
        if (r == ws.write_responses().end()) {
          ++it;
          continue;
        }
        EXPECT_TRUE(r->second.has_time()) << "round " << round << ": " << ipc::ToJson(r->second);
        w.time = r->second.time();
        ++acked;
        if (w.sends > 1 && *w.time < restarted_ms) ++durable_retries;
        ws.write_responses().erase(r);
        it = pending.erase(it);
      }
    };
    ASSERT_TRUE(ws.WaitFor(
        [&] {
          take_answers();
          return pending.empty() || !ws.command_errors().empty();
        },
        30s))
        << "round " << round << ": " << pending.size() << " re-sent writes unanswered\n"
        << Tail(sup.Log());
    ASSERT_TRUE(ws.command_errors().empty()) << ws.command_errors().front();

    // Every write the writer made is now acknowledged: the tables hold exactly them.
    Time latest = 0;
    for (const auto& w : writes) latest = std::max<Time>(latest, w.time.value_or(0));
    if (!writes.empty()) {
      ASSERT_TRUE(session.WaitFor(
          [&] {
            auto a = session.Write("u3"), b = session.Write("u4");
            return a && b && *a > latest && *b > latest;
          },
          30s))
          << "round " << round << ": the indexes did not pass " << latest << "\n"
          << Tail(sup.Log());
      // At the latest time, and at the time of a write acknowledged earlier (maybe before a
      // crash): a replayed write keeps its time.
      const Time earlier = *writes[writer.rng()() % writes.size()].time;
      for (Time t : {latest, earlier}) {
        const auto expected = writer.Expected(t);
        for (const char* index : {"u3", "u4"}) {
          pb::Command peek;
          const std::string uuid = "r" + std::to_string(round) + index + "@" + std::to_string(t);
          peek.mutable_peek()->set_uuid(uuid);
          peek.mutable_peek()->set_id(index);
          peek.mutable_peek()->set_timestamp(t);
          ctl.Send(peek);
          ASSERT_TRUE(session.WaitFor(
              [&] { return session.peeks().count(uuid) > 0 || !session.command_errors().empty(); },
              30s))
              << "round " << round << ": a peek unanswered\n"
              << Tail(sup.Log());
          ASSERT_TRUE(session.command_errors().empty()) << session.command_errors().front();
          const pb::PeekResponse& p = session.peeks().at(uuid);
          ASSERT_TRUE(p.has_rows()) << "round " << round << ": " << ipc::ToJson(p);
          const std::string actual = RowsText(p);
          EXPECT_EQ(actual, expected.at(index))
              << "round " << round << " (after killing the "
              << (victim == Victim::kMaintenance ? "maintenance runtime" : "supervisor") << "), "
              << index << " at " << t << " (latest " << latest << "):\n  "
              << FirstDifference(expected.at(index), actual);
          if (actual != expected.at(index)) return;
        }
      }
      session.peeks().clear();
    }
    if (round == rounds) break;

    // Write with a window in flight; at a random moment, kill.
    const auto kill_at =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(100 + writer.rng()() % 400);
    const std::size_t window = 1 + writer.rng()() % 32;
    while (std::chrono::steady_clock::now() < kill_at && !sup.Exited()) {
      while (pending.size() < window) {
        const std::size_t i = writer.Next();
        wctl.Send(writes[i].command);
        ++writes[i].sends;
        pending.push_back(i);
      }
      ws.Pump(1ms);
      take_answers();
      ASSERT_TRUE(ws.command_errors().empty()) << ws.command_errors().front();
    }
    const pid_t target = victim == Victim::kMaintenance ? sup.runtime_pids().at(0) : sup.pid();
    ASSERT_EQ(kill(target, SIGKILL), 0);
    // Answers that were already on their way count (the writer saw them); later ones cannot come.
    ws.Pump(0ms);
    take_answers();
    unanswered_at_crash += static_cast<int>(pending.size());
    if (victim == Victim::kMaintenance) {
      EXPECT_TRUE(sup.WaitExit(20s).has_value()) << "shared fate: the supervisor stayed up";
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ crash       ] %s killed %d times: %zu writes, %d acknowledged (%d re-sent, %d of them "
      "durable before the crash; %d unanswered at a crash), %.1f s\n",
      victim == Victim::kMaintenance ? "maintenance" : "supervisor", rounds, writer.writes().size(),
      acked, retried, durable_retries, unanswered_at_crash, seconds);
  if (rounds >= 20) {
    EXPECT_GE(writer.writes().size(), 1000u) << "thousands of writes (acceptance 2)";
    EXPECT_GT(durable_retries, 0) << "no retry of a write made durable before a crash";
  }
  EXPECT_GT(unanswered_at_crash, 0) << "no crash caught a write in flight";
}

TEST(TableCrash, KilledMaintenanceLosesAndDoublesNoAcknowledgedWrite) {
  RunCrashRounds(Victim::kMaintenance, 2100000);
}

TEST(TableCrash, KilledSupervisorLosesAndDoublesNoAcknowledgedWrite) {
  RunCrashRounds(Victim::kSupervisor, 2200000);
}

}  // namespace
}  // namespace tandem::testing
