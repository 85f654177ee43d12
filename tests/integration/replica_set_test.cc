// Many replicas behind one controller (DESIGN §13): three real replicas (supervisor +
// maintenance + interactive runtime each) driven by one controller::ReplicaSet. Load runs (a log
// source the test keeps appending to: its contents at every time are known exactly, and every
// replica reads the same file, so they share one timeline); peeks go to all three in a loop and the
// first answer is taken; one replica is SIGKILLed and restarted twice meanwhile. No peek may fail,
// every answer must be the exact contents at its time, and the restarted replica must catch up: its
// frontier rejoins the others' and peeks sent to it alone answer correctly.
//
// Two sets, as tandem-ctl has them: the controller (which replays to the restarted replica) and
// the readers (observer sessions, which peek). A reader's session with a restarted replica is
// up before the controller's replay reaches it, so for a while its peeks there are refused
// ("unknown index u2"): the first-answer rule must take the others' rows, never that refusal.
//
// Why a log source and not a generator: a generator's schedule starts when its dataflow is
// created on that replica, so a replica restarted later is on a later schedule and its frontier
// stays behind the others' by its downtime for good (its answers at any time are still the same).
// A log file is one timeline for every replica, and a restarted one catches up by reading it.
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "base/time.h"
#include "controller/replica_set.h"
#include "log_source.h"
#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

using controller::ReplicaSet;
using ipc::pb::Command;
using Outcome = controller::PeekRace::Outcome;

// The log's contents: at time t (t >= 1) row (t, 7t) is inserted, and from t > kWindow on, row
// (t - kWindow, 7 (t - kWindow)) retracted. At time T key k is present iff T - kWindow < k <= T.
constexpr std::int64_t kWindow = 20;

std::string Tick(std::int64_t t) {
  std::string lines =
      "U " + std::to_string(t) + " 1 " + std::to_string(t) + " " + std::to_string(7 * t) + "\n";
  if (t > kWindow) {
    const std::int64_t old = t - kWindow;
    lines += "U " + std::to_string(t) + " -1 " + std::to_string(old) + " " +
             std::to_string(7 * old) + "\n";
  }
  return lines + "P " + std::to_string(t + 1) + "\n";
}

// Why `answer` is not the contents of the index at `time` for `key` (or for a full scan), or "".
std::string Check(const ipc::pb::PeekResponse& answer, std::int64_t time,
                  std::optional<std::int64_t> key) {
  std::map<std::int64_t, std::int64_t> want;
  for (std::int64_t k = std::max<std::int64_t>(1, time - kWindow + 1); k <= time; ++k) {
    if (!key || *key == k) want[k] = 7 * k;
  }
  std::map<std::int64_t, std::int64_t> got;
  for (const auto& rc : answer.rows().rows()) {
    if (rc.count() != 1 || rc.row().datums_size() != 2) return "a row with count != 1 or arity 2";
    got[rc.row().datums(0).int64()] = rc.row().datums(1).int64();
  }
  if (got == want) return "";
  return "at time " + std::to_string(time) + (key ? " key " + std::to_string(*key) : "") +
         ": got " + std::to_string(got.size()) + " rows, want " + std::to_string(want.size());
}

// Peek uuids differ in their first bytes: a refusal names its peek by a prefix of the uuid.
Command MakePeek(std::uint64_t n, std::int64_t time, std::optional<std::int64_t> key) {
  Command c;
  auto* p = c.mutable_peek();
  p->set_uuid(std::to_string(std::hash<std::uint64_t>{}(n * 0x9e3779b97f4a7c15ULL)) + "-" +
              std::to_string(n));
  p->set_id("u2");
  p->set_timestamp(static_cast<std::uint64_t>(time));
  if (key) p->add_keys()->add_datums()->set_int64(*key);
  return c;
}

Command AllowCompaction(const std::string& id, std::uint64_t t) {
  Command c;
  c.mutable_allow_compaction()->set_id(id);
  c.mutable_allow_compaction()->mutable_frontier()->add_elements(t);
  return c;
}

// The write frontier of u2 replica i reported (0 when none yet).
std::uint64_t UpperOf(const ReplicaSet& set, std::size_t i) {
  const auto& f = set.frontiers(i);
  auto it = f.find("u2");
  if (it == f.end() || it->second.write().elements().empty()) return 0;
  return it->second.write().elements(0);
}

// Polls `set` until every replica is ready, or `limit` passes. Decided peeks are not expected.
bool AllReady(ReplicaSet& set, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (set.ready() < set.size()) {
    if (std::chrono::steady_clock::now() > until) return false;
    (void)set.Poll(50ms);
  }
  return true;
}

TEST(ReplicaSet, ThreeReplicasServeEveryPeekWhileOneIsKilledAndRestartedTwice) {
  std::vector<std::unique_ptr<SupervisorProcess>> replicas;
  std::vector<std::string> endpoints;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(std::make_unique<SupervisorProcess>(
        SupervisorOptions{.worker_binary = TANDEM_WORKER_BIN, .shm_size = "32MiB"}));
    endpoints.push_back(replicas.back()->controller_endpoint());
  }
  for (auto& r : replicas) ASSERT_TRUE(r->WaitReady()) << r->Log();

  LogFile log;
  std::int64_t written = 0;  // the last time written (its progress mark is written + 1)
  auto write_ticks = [&](int n) {
    std::string lines;
    for (int i = 0; i < n; ++i) lines += Tick(++written);
    log.Append(lines);
  };
  write_ticks(5);

  ReplicaSet::Options options;
  options.client.timeout = 5s;
  options.retry_interval = 100ms;
  auto created = ReplicaSet::Create(endpoints, options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ReplicaSet& set = **created;
  ASSERT_TRUE(set.Connect(std::chrono::steady_clock::now() + 20s).ok());
  // Connect returns once one replica is ready (and a little after): the others may still be
  // replaying on a loaded machine.
  ASSERT_TRUE(AllReady(set, 20s)) << set.ready() << " of 3 ready";
  auto made = set.Submit(LogIndexDataflow("u1", "u2", log.path()), /*record=*/true,
                         std::chrono::steady_clock::now() + 10s);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(made->refused.empty()) << made->refused.front().second.why();
  ASSERT_EQ(made->accepted.size(), 3u);
  ReplicaSet::Options observe = options;
  observe.observer = true;
  auto readers_created = ReplicaSet::Create(endpoints, observe);
  ASSERT_TRUE(readers_created.ok());
  ReplicaSet& readers = **readers_created;
  ASSERT_TRUE(readers.Connect(std::chrono::steady_clock::now() + 20s).ok());
  ASSERT_TRUE(AllReady(readers, 20s)) << readers.ready() << " of 3 ready";
  std::uint64_t refusals_outvoted = 0;  // peeks some replica refused or failed, answered by another

  constexpr std::size_t kVictim = 1;
  std::mt19937_64 rng(0x18);
  std::uint64_t peeks = 0, failures = 0, by_victim = 0;
  std::vector<std::uint64_t> answered_by(3, 0);
  std::string first_failure;
  int restarts = 0;
  // The fault schedule, advanced once per iteration so that peeks never stop: run, kill, wait
  // until the set saw it down, restart, wait until it is ready again and has caught up.
  enum class Phase { kRun, kKilled, kRestarted, kCatchingUp, kDone } phase = Phase::kRun;
  auto phase_started = std::chrono::steady_clock::now();
  std::uint64_t catch_up_target = 0;
  // After a restart the controller is not polled until the readers' session with the restarted
  // replica is up and some peeks went to it: those peeks it refuses (it has no index yet), and
  // the others must answer them. The controller's own session is then made and replayed.
  bool hold_controller = false;
  std::uint64_t peeks_held = 0;
  const auto started = std::chrono::steady_clock::now();
  auto in_phase = [&] { return std::chrono::steady_clock::now() - phase_started; };
  auto enter = [&](Phase p) {
    phase = p;
    phase_started = std::chrono::steady_clock::now();
  };

  while (phase != Phase::kDone || in_phase() < 2s) {
    ASSERT_LT(std::chrono::steady_clock::now() - started, 150s) << "the run took too long";
    write_ticks(1);
    // A peek at a recent time (at most 30 ticks back: above the compaction frontier, which
    // trails by 200), by key or as a full scan; sometimes at the newest time, which waits for
    // the replicas to read the line. One draw a statement: operands are evaluated in no fixed
    // order, and the run must be the same under every compiler.
    const auto back = static_cast<std::int64_t>(rng() % 31);
    const bool newest = rng() % 4 == 0;
    const std::int64_t time = std::max<std::int64_t>(1, newest ? written : written - back);
    std::optional<std::int64_t> key;
    if (rng() % 5 != 0) key = time - kWindow + static_cast<std::int64_t>(rng() % (kWindow + 5));
    const Command peek = MakePeek(peeks++, time, key);
    ASSERT_TRUE(readers.StartPeek(peek).ok());
    const auto result =
        readers.AwaitPeek(peek.peek().uuid(), std::chrono::steady_clock::now() + 20s);
    // The controller notices the victim's fate and replays to it — except while it is held back
    // (below), so that the readers meet the restarted replica before its replay.
    if (!hold_controller) (void)set.Poll(0ms);
    if (result.outcome == Outcome::kRows && !result.other_errors.empty()) ++refusals_outvoted;
    std::string why;
    if (result.outcome != Outcome::kRows) {
      why = "outcome " + std::to_string(static_cast<int>(result.outcome)) +
            (result.answer && result.answer->has_error() ? ": " + result.answer->error() : "") +
            (result.refused ? ": refused: " + result.refused->why() : "");
    } else {
      why = Check(*result.answer, time, key);
      ++answered_by[result.replica];
    }
    if (!why.empty() && failures++ == 0) first_failure = "peek " + ipc::Describe(peek) + ": " + why;

    if (peeks % 100 == 0 && written > 250) {
      // Compaction moves on (recorded: a restarted replica gets it in its replay).
      auto s = set.Submit(AllowCompaction("u2", static_cast<std::uint64_t>(written - 200)),
                          /*record=*/true, std::chrono::steady_clock::now() + 10s);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE(s->refused.empty()) << s->refused.front().second.why();
    }

    switch (phase) {
      case Phase::kRun:
        if (restarts < 2 && in_phase() > 3s) {
          ASSERT_TRUE(replicas[kVictim]->Kill());
          enter(Phase::kKilled);
        } else if (restarts == 2) {
          enter(Phase::kDone);
        }
        break;
      case Phase::kKilled:
        // The others go on serving meanwhile (every peek above was checked).
        ASSERT_LT(in_phase(), 10s) << "the set did not notice the killed replica";
        if (set.status(kVictim).state == ReplicaSet::State::kDown) {
          replicas[kVictim]->Restart();
          ++restarts;
          hold_controller = true;
          peeks_held = 0;
          enter(Phase::kRestarted);
        }
        break;
      case Phase::kRestarted:
        ASSERT_LT(in_phase(), 60s)
            << "the restarted replica never became ready: " << set.status(kVictim).last_error
            << "\n"
            << replicas[kVictim]->Log();
        if (hold_controller) {
          if (readers.status(kVictim).state == ReplicaSet::State::kReady && ++peeks_held >= 20) {
            hold_controller = false;
          }
          break;
        }
        if (set.status(kVictim).state == ReplicaSet::State::kReady &&
            set.status(kVictim).sessions >= static_cast<std::uint64_t>(restarts + 1)) {
          catch_up_target = std::max(UpperOf(set, 0), UpperOf(set, 2));
          enter(Phase::kCatchingUp);
        }
        break;
      case Phase::kCatchingUp:
        ASSERT_LT(in_phase(), 60s)
            << "the restarted replica's frontier stays at " << UpperOf(set, kVictim)
            << ", the others' was " << catch_up_target;
        if (UpperOf(set, kVictim) >= catch_up_target) {
          // Caught up: it answers peeks alone, exactly.
          for (int i = 0; i < 5; ++i) {
            const std::int64_t t = written - i;
            const Command own = MakePeek(peeks++, t, std::nullopt);
            ASSERT_TRUE(readers.StartPeek(own, kVictim).ok());
            const auto r =
                readers.AwaitPeek(own.peek().uuid(), std::chrono::steady_clock::now() + 20s);
            ASSERT_EQ(r.outcome, Outcome::kRows)
                << (r.answer && r.answer->has_error() ? r.answer->error() : "")
                << (r.refused ? r.refused->why() : "");
            ASSERT_EQ(r.replica, kVictim);
            EXPECT_EQ(Check(*r.answer, t, std::nullopt), "");
            ++by_victim;
          }
          enter(Phase::kRun);
        }
        break;
      case Phase::kDone:
        break;
    }
  }
  EXPECT_EQ(failures, 0u) << first_failure;
  EXPECT_EQ(restarts, 2);
  EXPECT_EQ(by_victim, 10u);
  EXPECT_GE(set.status(kVictim).replays, 3u);  // the first Connect, and once per restart
  EXPECT_GT(peeks, 200u);
  // The restarted replica refused peeks before its replay (at least the 20 held per restart, less
  // any it got only after another had answered), and the others answered them.
  // How many depends on arrival order (rows and a refusal may come in one poll): some, not a count.
  EXPECT_GT(refusals_outvoted, 0u);
  // Rejoined: every replica's frontier of u2 passes the last time written, within a bound.
  const std::uint64_t end = static_cast<std::uint64_t>(written) + 1;
  const bool all_caught_up = [&] {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      (void)set.Poll(100ms);
      if (UpperOf(set, 0) >= end && UpperOf(set, 1) >= end && UpperOf(set, 2) >= end) return true;
    }
    return false;
  }();
  EXPECT_TRUE(all_caught_up) << UpperOf(set, 0) << " " << UpperOf(set, 1) << " " << UpperOf(set, 2)
                             << " want " << end;
  std::cerr << "peeks " << peeks << ", answered by replica 0/1/2: " << answered_by[0] << "/"
            << answered_by[1] << "/" << answered_by[2] << ", last time " << written
            << ", answered although another replica refused or failed: " << refusals_outvoted
            << "\n";
}

// tandem-ctl --endpoint A,B,C against three real replicas: a create goes to all, peek takes the
// first answer and says whose, frontiers and status show each replica; with one replica killed,
// status says so (exit 1), peeks go on and a create goes to the others with a warning; once it
// is back, the next command replays the history to it and it serves the peek asked of it alone.
TEST(ReplicaSetCtl, EveryCommandGoesToEveryReplicaAndADownOneCatchesUpAtTheNextCommand) {
  std::vector<std::unique_ptr<SupervisorProcess>> replicas;
  std::string endpoints;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(std::make_unique<SupervisorProcess>(
        SupervisorOptions{.worker_binary = TANDEM_WORKER_BIN, .shm_size = "32MiB"}));
    endpoints += (i ? "," : "") + replicas.back()->controller_endpoint();
  }
  for (auto& r : replicas) ASSERT_TRUE(r->WaitReady()) << r->Log();
  LogFile log;
  std::string lines;
  for (int t = 1; t <= 10; ++t) lines += Tick(t);
  log.Append(lines);
  const std::string state = "/tmp/tandem-rs-ctl-" + std::to_string(getpid()) + ".state";
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::filesystem::remove(path);
      std::filesystem::remove(path + ".lock");
    }
  } cleanup{state};
  auto ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", endpoints, "--state", state, "--timeout", "10"});
    return RunBinary(TANDEM_CTL_BIN, args, {.limit = 60s});
  };

  auto made = ctl({"create-source", "u1", "--log", log.path(), "--schema", "k:int64,v:int64"});
  ASSERT_EQ(made.exit, 0) << made.err;
  auto peek = ctl({"peek", "u1", "--at", "5"});
  ASSERT_EQ(peek.exit, 0) << peek.err;
  EXPECT_NE(peek.out.find("(5 rows of s1 from replica "), std::string::npos) << peek.out;
  auto json = ctl({"--json", "peek", "u1", "--at", "5", "--key", "3"});
  ASSERT_EQ(json.exit, 0) << json.err;
  EXPECT_NE(json.out.find("\"replica\":"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("[3,21]"), std::string::npos) << json.out;
  auto frontiers = ctl({"frontiers", "--for", "0.5"});
  ASSERT_EQ(frontiers.exit, 0) << frontiers.err;
  // One row per replica for the source index, each at the log's progress mark (11).
  std::size_t rows = 0;
  for (auto at = frontiers.out.find(" s1  11 "); at != std::string::npos;
       at = frontiers.out.find(" s1  11 ", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 3u) << frontiers.out;
  auto status = ctl({"status"});
  EXPECT_EQ(status.exit, 0) << status.out << status.err;

  ASSERT_TRUE(replicas[2]->Kill());
  status = ctl({"--timeout", "1", "status"});
  EXPECT_EQ(status.exit, 1) << status.out << status.err;
  EXPECT_NE(status.out.find("down"), std::string::npos) << status.out;
  peek = ctl({"--timeout", "2", "peek", "u1", "--at", "7", "--key", "7"});
  EXPECT_EQ(peek.exit, 0) << peek.err;
  EXPECT_NE(peek.out.find("(1 row of s1 from replica "), std::string::npos) << peek.out;
  auto index = ctl({"--timeout", "2", "create-index", "u2", "--on", "u1", "--key", "v"});
  EXPECT_EQ(index.exit, 0) << index.err;
  EXPECT_NE(index.err.find("replica 2 (" + replicas[2]->controller_endpoint() + ") is "),
            std::string::npos)
      << index.err;

  replicas[2]->Restart();
  ASSERT_TRUE(replicas[2]->WaitReady()) << replicas[2]->Log();
  // The next controller command replays the whole history to it (u1, then u2) — the next one
  // replica 2 answers: a replica just restarted on a loaded machine may miss one command's
  // deadline (the command warns "replica 2 (…) …" and exits 0), and the one after replays to it.
  auto compaction = ctl({"allow-compaction", "u1", "2"});
  ASSERT_TRUE(Eventually(
      [&] {
        if (compaction.exit == 0 && compaction.err.find("replica 2 (") == std::string::npos) {
          return true;
        }
        compaction = ctl({"allow-compaction", "u1", "2"});
        return false;
      },
      60s))
      << compaction.exit << ": " << compaction.err;
  status = ctl({"status"});
  EXPECT_EQ(status.exit, 0) << status.out << status.err;
  auto own = ctl({"--replica", "2", "peek", "u2", "--at", "9"});
  ASSERT_EQ(own.exit, 0) << own.err;
  EXPECT_NE(own.out.find("(9 rows of u2 at time 9"), std::string::npos) << own.out;
}

// The number after `key` in `text` (e.g. "\"time\":"), 0 when `key` is not there.
std::uint64_t NumberAfter(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return 0;
  return std::stoull(text.substr(at + key.size()));
}

// Read your writes through several replicas. A table's time is its replica's wall clock, so one
// write has a time per replica: written to replica 0 at t0 and then, with the same uuid, to
// replica 1 once its clock is 50 ms on, it is on replica 1 from t1 > t0 on only. A peek at t0
// answered by replica 1 would miss it (2 of 10 did before tandem-ctl recorded each replica's
// time). Every peek must see it, whichever replica answers: at t0 (only replica 0 has it there),
// at the latest time (each replica asked from its own time of the write on), and after a write
// through both at the time it printed. A table written through one replica is read from that one.
TEST(ReplicaSetCtl, EveryPeekThroughSeveralReplicasSeesTheWritesOfItsStateFile) {
  TempDir data("rs-data");  // outlives the replicas
  std::vector<std::unique_ptr<SupervisorProcess>> replicas;
  std::string endpoints;
  for (int i = 0; i < 2; ++i) {
    replicas.push_back(std::make_unique<SupervisorProcess>(
        SupervisorOptions{.extra_args = {"--data-dir", data.File("r" + std::to_string(i))},
                          .worker_binary = TANDEM_WORKER_BIN,
                          .shm_size = "32MiB"}));
    endpoints += (i ? "," : "") + replicas.back()->controller_endpoint();
  }
  for (auto& r : replicas) ASSERT_TRUE(r->WaitReady()) << r->Log();
  TempDir dir("rs-ryw");
  const std::string state = dir.File("tandem-ctl.state");
  // A run refused with "send Hello first" — a session the supervisor ended right after its Hello,
  // on a late disconnect of an earlier connection of the same descriptor (many short tandem-ctl
  // runs make that likely) — is run again with the same uuid, as its message advises, and
  // counted: the supervisor reads those disconnects first now, so there must be none.
  int hello_retries = 0;
  auto ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", endpoints, "--state", state, "--timeout", "10"});
    BinaryRun run = RunBinary(TANDEM_CTL_BIN, args, {.limit = 60s});
    for (int again = 0;
         again < 3 && run.exit != 0 && run.err.find("send Hello first") != std::string::npos;
         ++again) {
      ++hello_retries;
      run = RunBinary(TANDEM_CTL_BIN, args, {.limit = 60s});
    }
    return run;
  };
  auto has = [](const BinaryRun& r, const std::string& part) {
    return r.out.find(part) != std::string::npos;
  };
  for (const char* id : {"u1", "u2"}) {
    auto made = ctl({"create-source", id, "--table", "--schema", "k:int64", "--tick-ms", "20"});
    ASSERT_EQ(made.exit, 0) << made.err << replicas[0]->Log();
  }
  std::ifstream before_in(state);
  const std::string definition{std::istreambuf_iterator<char>(before_in), {}};

  auto first = ctl({"--replica", "0", "--json", "write", "u1", "--row", "1", "--uuid", "ryw-1"});
  ASSERT_EQ(first.exit, 0) << first.err;
  const std::uint64_t t0 = NumberAfter(first.out, "\"time\":");
  ASSERT_GT(t0, 0u) << first.out;
  while (WallClockMs() <= t0 + 50) std::this_thread::sleep_for(5ms);
  auto second = ctl({"--replica", "1", "--json", "write", "u1", "--row", "1", "--uuid", "ryw-1"});
  ASSERT_EQ(second.exit, 0) << second.err;
  const std::uint64_t t1 = NumberAfter(second.out, "\"time\":");
  ASSERT_GT(t1, t0 + 50) << second.out << " (a table's time is at least its clock's)";
  EXPECT_TRUE(std::filesystem::exists(state + ".writes"));

  const std::string one_row = R"("rows":[{"row":[1],"count":1}])";
  for (int i = 0; i < 10; ++i) {
    auto at_t0 = ctl({"--json", "peek", "u1", "--at", std::to_string(t0)});
    ASSERT_EQ(at_t0.exit, 0) << at_t0.err << replicas[0]->Log() << replicas[1]->Log();
    EXPECT_TRUE(has(at_t0, one_row)) << "peek " << i << " at " << t0 << ": " << at_t0.out;
    EXPECT_TRUE(has(at_t0, "\"replica\":0,"))
        << "only replica 0 has the write at " << t0 << ": " << at_t0.out;
    auto latest = ctl({"--json", "peek", "u1"});
    ASSERT_EQ(latest.exit, 0) << latest.err;
    EXPECT_TRUE(has(latest, one_row)) << "peek " << i << " at the latest time: " << latest.out;
  }

  // Through both: each replica answers at its own time, and the printed time is the latest.
  auto both = ctl({"write", "u1", "--row", "2"});
  ASSERT_EQ(both.exit, 0) << both.err;
  ASSERT_TRUE(has(both, "written at ")) << both.out;
  EXPECT_TRUE(has(both, "(replica 0 at ")) << both.out;
  EXPECT_TRUE(has(both, ", replica 1 at ")) << both.out;
  const std::uint64_t t2 = NumberAfter(both.out, "written at ");
  ASSERT_GT(t2, t1) << both.out;
  const std::string two_rows = R"("rows":[{"row":[1],"count":1},{"row":[2],"count":1}])";
  std::set<std::string> answered_by;
  for (int i = 0; i < 10; ++i) {
    auto at_t2 = ctl({"--json", "peek", "u1", "--at", std::to_string(t2)});
    ASSERT_EQ(at_t2.exit, 0) << at_t2.err;
    EXPECT_TRUE(has(at_t2, two_rows)) << "peek " << i << " at " << t2 << ": " << at_t2.out;
    auto latest = ctl({"--json", "peek", "u1"});
    ASSERT_EQ(latest.exit, 0) << latest.err;
    EXPECT_TRUE(has(latest, two_rows)) << "peek " << i << " at the latest time: " << latest.out;
  }

  // A table written through replica 0 alone is read from replica 0 alone, with a warning.
  auto only = ctl({"--replica", "0", "write", "u2", "--row", "7"});
  ASSERT_EQ(only.exit, 0) << only.err;
  for (int i = 0; i < 5; ++i) {
    auto p = ctl({"--json", "peek", "u2"});
    ASSERT_EQ(p.exit, 0) << p.err;
    EXPECT_TRUE(has(p, R"("rows":[{"row":[7],"count":1}])")) << p.out;
    EXPECT_TRUE(has(p, "\"replica\":0,")) << p.out;
    EXPECT_NE(
        p.err.find("replica 1 (" + replicas[1]->controller_endpoint() + ") is left out of peek u2"),
        std::string::npos)
        << p.err;
  }
  // Writes never change the state file (their times are kept beside it).
  std::ifstream after_in(state);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(after_in), {}), definition);
  std::printf("read your writes: %d tandem-ctl runs refused 'send Hello first', run again\n",
              hello_retries);
  EXPECT_EQ(hello_retries, 0) << "a session ended by another connection's disconnect";
}

}  // namespace
}  // namespace tandem::testing
