// Invariant W1 (DESIGN §9) on real processes (issue 15, Acceptance 2): after any crash and a
// restart with the same --data-dir, a table holds exactly the acknowledged writes — none lost,
// none twice.
//
// One data dir survives every round. Each round starts a two-runtime replica on it, replays the
// controller's history (a plain table u1 with index u2, an upsert table u3 with index u4), opens
// a writer session, first re-sends every write the previous rounds sent without seeing its answer
// (same uuid: each must be answered with a time, and applied once), retries one write answered in
// an earlier round (answered with its first time), then peeks both indexes at the latest
// acknowledged time and at a random earlier one and compares them with the writer's own record.
// Then a window of writes runs until, after a seeded random delay, the supervisor (rounds 0, 3, …),
// the maintenance runtime (1, 4, …) or the interactive runtime (2, 5, …) is SIGKILLed; each
// session's times must rise in send order, above every time acknowledged before. The last round
// only checks; the summary prints the rows present against the rows acknowledged.
//
// The writer's record is its model: the plain table holds the sum of the acknowledged updates
// (unique ids, some inserted twice, some retracted), the upsert table per key the last
// acknowledged upsert or delete by (time, send order). One writer session sends everything in
// order, and unanswered writes are re-sent first, in their order, so the order the runtime
// received the writes of one time (one group commit) is the order of their first send.
//
// A failure prints the seed: TANDEM_CRASH_SEED=<seed> reruns it (TANDEM_CRASH_ROUNDS changes the
// number of rounds).
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/time.h"
#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "thorough.h"
#include "unit/protocol_samples.h"
#include "workers/tables/table_log.h"

namespace tandem::testing {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;
namespace samples = ipc::samples;

constexpr char kPlain[] = "u1";
constexpr char kPlainIndex[] = "u2";
constexpr char kUpsert[] = "u3";
constexpr char kUpsertIndex[] = "u4";
constexpr std::int64_t kKeys = 16;  // the upsert table's key space: small, so keys repeat
constexpr std::size_t kWindow = 8;  // writes in flight
// Writes per second at most: the tables (and so the peeks' answers) stay bounded over many
// rounds, and writes are in flight whenever the kill comes.
constexpr int kWritesPerSecond = 1500;
constexpr auto kAnswerLimit = 20s;  // for any answer the replica owes us

// Kills (then one more restart checks the last): 8 by default (about 10 s on an idle machine;
// also under the sanitizers), 30 thorough (the slow label's run; 20 or more find what 8 miss).
const int kDefaultRounds = Thorough() ? 30 : 8;

Time WallMs() {
  return static_cast<Time>(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count());
}

// A table (k int64, v string) with an index on k: the same CreateDataflow in every round (a table
// re-sent changed would be dropped and created empty).
Command TableDataflow(const std::string& table, const std::string& index, bool upsert) {
  Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name(std::string(upsert ? "upsert" : "plain") + " table " + table);
  d->set_class_(ipc::pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  auto* s = d->add_source_imports();
  s->set_id(table);
  s->mutable_source()->mutable_table()->set_tick_interval_ms(50);
  *s->mutable_schema() = samples::MakeSchema(
      {samples::MakeColumn("k", ipc::pb::INT64), samples::MakeColumn("v", ipc::pb::STRING)});
  if (upsert) s->add_upsert_key(0);
  auto* x = d->add_index_exports();
  x->set_id(index);
  x->set_on(table);
  x->add_key(0);
  return c;
}

Command WriterHello(const std::string& nonce) {
  Command c = samples::Hello(nonce);
  c.mutable_hello()->set_observer(true);
  c.mutable_hello()->set_writer(true);
  return c;
}

// "k|v" → count, the form both the peeks and the model are compared in.
using Contents = std::map<std::string, std::int64_t>;

std::string Key(std::int64_t k, const std::string& v) { return std::to_string(k) + "|" + v; }

std::string Differences(const Contents& want, const Contents& got) {
  std::ostringstream out;
  int shown = 0;
  auto show = [&](const std::string& what) {
    if (shown++ < 12) out << "\n  " << what;
  };
  for (const auto& [row, n] : want) {
    auto it = got.find(row);
    if (it == got.end()) {
      show("missing " + row + " x" + std::to_string(n));
    } else if (it->second != n) {
      show(row + ": want x" + std::to_string(n) + ", got x" + std::to_string(it->second));
    }
  }
  for (const auto& [row, n] : got) {
    if (!want.contains(row)) show("unexpected " + row + " x" + std::to_string(n));
  }
  if (shown > 12) out << "\n  … " << shown - 12 << " more";
  out << "\n  (" << want.size() << " rows wanted, " << got.size() << " got)";
  return out.str();
}

// One write the writer sent: the command (re-sent as is) and what it knows of its fate.
struct Write {
  std::string uuid;
  bool upsert = false;  // to the upsert table u3, else to the plain table u1
  Command command;
  int round = 0;             // the round it was first sent in
  std::optional<Time> time;  // the acknowledged time
};

// One incarnation of the replica: the supervisor on the shared data dir, the controller that
// replayed the history, and the writer session.
struct Incarnation {
  std::unique_ptr<SupervisorProcess> sup;
  std::unique_ptr<TestController> ctl;
  std::unique_ptr<TestController> writer_session;
  TestController* writer = nullptr;  // the writer session
};

enum class Kill { kMaintenance, kInteractive, kSupervisor, kSigterm };

// The end of a replica's log (a failure's context; a round's debug log is long).
std::string LogTail(const SupervisorProcess& sup) {
  const std::string log = sup.Log();
  constexpr std::size_t kTail = 16000;
  return log.size() <= kTail ? log : "…" + log.substr(log.size() - kTail);
}

class CrashRun {
 public:
  explicit CrashRun(std::uint64_t seed) : seed_(seed), rng_(seed), data_dir_(tmp_.File("data")) {}

  const std::string& data_dir() const { return data_dir_; }

  // Starts the replica on the data dir, replays the history and opens the writer session, then
  // re-sends every write not yet answered (each must be answered with a time).
  Incarnation Start(int round) {
    round_ = round;
    round_start_ms_ = WallMs();
    Incarnation in;
    in.sup = std::make_unique<SupervisorProcess>(SupervisorOptions{
        .extra_args = {"--data-dir", data_dir_},
        .workers = 2,
        .worker_binary = TANDEM_WORKER_BIN,
        .shm_size = "64MiB",
    });
    if (!in.sup->WaitReady(30s)) {
      ADD_FAILURE() << "round " << round << ": the replica did not start\n" << LogTail(*in.sup);
      return in;
    }
    in.ctl = std::make_unique<TestController>(in.sup->controller_endpoint());
    if (!in.ctl->Hello("controller-" + std::to_string(round))) {
      ADD_FAILURE() << "round " << round << ": the controller's Hello\n" << LogTail(*in.sup);
      return in;
    }
    // A fresh runtime has nothing to reconcile (no Reconciled): each command of the history is
    // checked against refusals with the client's barrier instead.
    for (const Command& c :
         {TableDataflow(kPlain, kPlainIndex, false), TableDataflow(kUpsert, kUpsertIndex, true),
          samples::InitializationComplete()}) {
      auto errors = in.ctl->client().SendChecked(c);
      if (!errors.ok() || !errors->empty()) {
        ADD_FAILURE() << "round " << round << ": the replay: "
                      << (errors.ok() ? (*errors)[0].what() + ": " + (*errors)[0].why()
                                      : errors.status().ToString())
                      << "\n"
                      << LogTail(*in.sup);
        return in;
      }
    }
    in.writer_session = std::make_unique<TestController>(in.sup->controller_endpoint());
    in.writer = in.writer_session.get();
    in.writer->Send(WriterHello("writer-" + std::to_string(round)));
    auto hello = in.writer->ReceiveUntil(
        [](const Response& r) {
          return r.has_command_error() || (r.has_status() && r.status().has_hello_accepted());
        },
        kAnswerLimit);
    if (!hello || hello->has_command_error()) {
      ADD_FAILURE() << "round " << round << ": the writer's Hello "
                    << (hello ? hello->command_error().why() : std::string("was not answered"));
      return in;
    }
    ResendUnanswered(in);
    return in;
  }

  // Peeks both indexes at the latest acknowledged time and at a random earlier one, and compares
  // them with the writer's record.
  void Check(Incarnation& in) {
    Time latest = 0;
    std::vector<Time> times;
    for (const Write& w : writes_) {
      if (w.time) {
        latest = std::max(latest, *w.time);
        times.push_back(*w.time);
      }
    }
    if (times.empty()) latest = round_start_ms_;
    for (const char* index : {kPlainIndex, kUpsertIndex}) {
      auto upper = in.ctl->ReceiveUntil(
          [&](const Response& r) {
            return r.has_frontiers() && r.frontiers().id() == index &&
                   !r.frontiers().write().elements().empty() &&
                   r.frontiers().write().elements(0) > latest;
          },
          kAnswerLimit);
      if (!upper) {
        ADD_FAILURE() << "round " << round_ << ": " << index << "'s upper never passed " << latest
                      << "\n"
                      << LogTail(*in.sup);
        return;
      }
    }
    std::vector<Time> at = {latest};
    if (!times.empty()) at.push_back(times[rng_() % times.size()]);
    for (Time t : at) {
      for (bool upsert : {false, true}) {
        auto got = Peek(in, upsert ? kUpsertIndex : kPlainIndex, t);
        if (!got) return;
        const Contents want = Model(upsert, t);
        if (t == latest) {
          auto rows = [](const Contents& c) {
            std::int64_t n = 0;
            for (const auto& [row, count] : c) n += count;
            return n;
          };
          present_[upsert] = rows(*got);
          acknowledged_[upsert] = rows(want);
        }
        if (got != want) {
          ADD_FAILURE() << "round " << round_ << ": " << (upsert ? "upsert" : "plain")
                        << " table at " << t << " (latest acknowledged " << latest
                        << ") is not what was acknowledged:" << Differences(want, *got);
          return;
        }
      }
    }
  }

  // Re-sends a write answered in an earlier round, with its uuid: answered with its first time
  // (and, as the Check after it shows, not applied again).
  void RetryAnswered(Incarnation& in) {
    std::vector<std::size_t> old;
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      if (writes_[i].time && writes_[i].round < round_) old.push_back(i);
    }
    if (old.empty()) return;
    const std::size_t i = old[rng_() % old.size()];
    const Time first = *writes_[i].time;
    in.writer->Send(writes_[i].command);
    in_flight_.insert(i);
    if (!PumpUntil(
            in, [&] { return in_flight_.empty(); }, kAnswerLimit)) {
      ADD_FAILURE() << "round " << round_ << ": a retried acknowledged write was not answered";
      return;
    }
    EXPECT_EQ(*writes_[i].time, first) << "round " << round_ << ": retry of " << writes_[i].uuid;
    ++retried_answered_;
  }

  // Writes with a window of kWindow in flight for `delay`, then kills `kill` and waits (bounded)
  // until every process of the replica is gone and its segment removed.
  void WriteThenKill(Incarnation& in, std::chrono::milliseconds delay, Kill kill) {
    before_writes_max_ = 0;
    for (const Write& w : writes_) {
      if (w.time) before_writes_max_ = std::max(before_writes_max_, *w.time);
    }
    first_fresh_ = writes_.size();
    const auto start = std::chrono::steady_clock::now();
    const auto kill_at = start + delay;
    while (std::chrono::steady_clock::now() < kill_at) {
      const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      const auto allowed = static_cast<std::size_t>(1 + elapsed.count() * kWritesPerSecond / 1000);
      while (in_flight_.size() < kWindow && writes_.size() - first_fresh_ < allowed) {
        Send(in, NewWrite());
      }
      Pump(in, std::min(2ms, std::max(0ms, ipc::Left(kill_at))));
      if (::testing::Test::HasFailure()) break;
    }
    const std::vector<pid_t> runtimes = in.sup->runtime_pids();
    switch (kill) {
      case Kill::kMaintenance:
        ASSERT_FALSE(runtimes.empty());
        ASSERT_EQ(::kill(runtimes[0], SIGKILL), 0);
        break;
      case Kill::kInteractive:
        ASSERT_EQ(runtimes.size(), 2u);
        ASSERT_EQ(::kill(runtimes[1], SIGKILL), 0);
        break;
      case Kill::kSupervisor:
        ASSERT_EQ(::kill(in.sup->pid(), SIGKILL), 0);
        break;
      case Kill::kSigterm:
        ASSERT_EQ(::kill(in.sup->pid(), SIGTERM), 0);
        break;
    }
    // Answers that arrive before the replica is down are acknowledgements like any other.
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!in.sup->Exited() && std::chrono::steady_clock::now() < deadline) Pump(in, 20ms);
    const auto status = in.sup->WaitExit(1ms);
    ASSERT_TRUE(status) << "round " << round_ << ": the supervisor did not exit\n"
                        << LogTail(*in.sup);
    for (int i = 0; i < 100000 && Pump(in, 10ms); ++i) {
    }
    EXPECT_EQ(*status, kill == Kill::kSigterm ? 0 : 137) << LogTail(*in.sup);
    for (pid_t p : runtimes) {
      // The data dir's lock waits 10 s at most: the next round needs the old runtimes gone.
      ASSERT_TRUE(Eventually([&] { return ProcessGone(p); }, 20s))
          << "round " << round_ << ": runtime " << p << " survived";
    }
    if (in.sup->SegmentExists()) (void)shm::Segment::Remove(in.sup->segment());
    CheckSessionTimes();
  }

  // Sends `n` writes (kWindow in flight) and waits until every one is answered.
  void WriteAll(Incarnation& in, int n) {
    const auto deadline = std::chrono::steady_clock::now() + kAnswerLimit;
    for (int sent = 0; sent < n;) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << in_flight_.size() << " in flight";
      ASSERT_FALSE(::testing::Test::HasFailure());
      while (in_flight_.size() < kWindow && sent < n) {
        Send(in, NewWrite());
        ++sent;
      }
      Pump(in, 20ms);
    }
    ASSERT_TRUE(PumpUntil(
        in, [&] { return in_flight_.empty(); }, kAnswerLimit))
        << in_flight_.size() << " writes not answered";
  }

  std::string Summary() const {
    std::size_t acked = 0, upserts = 0;
    for (const Write& w : writes_) {
      acked += w.time.has_value();
      upserts += w.upsert;
    }
    std::ostringstream out;
    out << writes_.size() << " writes (" << upserts << " to the upsert table), " << acked
        << " acknowledged; " << resent_ << " re-sends of unanswered writes, " << resent_applied_
        << " of them already applied before the crash; " << retried_answered_
        << " retries of answered writes; at the last check, rows present / acknowledged: plain "
        << present_[0] << " / " << acknowledged_[0] << ", upsert " << present_[1] << " / "
        << acknowledged_[1];
    return out.str();
  }

 private:
  // At the latest acknowledged time of the last Check, per table (plain, upsert): the rows the
  // index holds, and the rows the acknowledged writes make.
  std::int64_t present_[2] = {0, 0}, acknowledged_[2] = {0, 0};

  std::size_t NewWrite() {
    const std::size_t seq = writes_.size();
    Write w;
    w.uuid = "crash-" + std::to_string(seed_) + "-" + std::to_string(seq);
    w.upsert = rng_() % 2 == 0;
    w.round = round_;
    auto* wt = w.command.mutable_write_table();
    wt->set_uuid(w.uuid);
    wt->set_id(w.upsert ? kUpsert : kPlain);
    const int n = 1 + static_cast<int>(rng_() % (w.upsert ? 3 : 4));
    for (int i = 0; i < n; ++i) {
      auto* u = wt->add_updates();
      const std::string value = "w" + std::to_string(seq) + "." + std::to_string(i);
      if (w.upsert) {
        const auto k = static_cast<std::int64_t>(rng_() % kKeys);
        if (rng_() % 10 < 3) {
          *u->mutable_delete_() = samples::MakeRow({samples::IntDatum(k)});
        } else {
          *u->mutable_upsert() =
              samples::MakeRow({samples::IntDatum(k), samples::StringDatum(value)});
        }
      } else if (auto victim = Retractable(); victim && rng_() % 3 == 0) {
        // A retraction of a row whose insert was acknowledged (so at any time its count is >= 0).
        --sent_count_[*victim];
        *u->mutable_update()->mutable_row() =
            samples::MakeRow({samples::IntDatum(*victim), samples::StringDatum(note_[*victim])});
        u->mutable_update()->set_diff(-1);
      } else {
        const std::int64_t id = next_id_++;
        const std::int64_t diff = rng_() % 5 == 0 ? 2 : 1;
        note_[id] = value;
        sent_count_[id] = diff;
        *u->mutable_update()->mutable_row() =
            samples::MakeRow({samples::IntDatum(id), samples::StringDatum(value)});
        u->mutable_update()->set_diff(diff);
      }
    }
    writes_.push_back(std::move(w));
    return seq;
  }

  // A plain row whose insert was acknowledged and whose count (with every write sent) is > 0.
  std::optional<std::int64_t> Retractable() {
    while (!retractable_.empty()) {
      const std::size_t i = rng_() % retractable_.size();
      const std::int64_t id = retractable_[i];
      if (sent_count_[id] > 0) return id;
      retractable_[i] = retractable_.back();
      retractable_.pop_back();
    }
    return std::nullopt;
  }

  void Send(Incarnation& in, std::size_t i) {
    in.writer->Send(writes_[i].command);
    in_flight_.insert(i);
  }

  void ResendUnanswered(Incarnation& in) {
    std::vector<std::size_t> resent;
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      if (!writes_[i].time) {
        Send(in, i);  // in their order: the runtime receives them as it first did
        resent.push_back(i);
      }
    }
    if (!PumpUntil(
            in, [&] { return in_flight_.empty(); }, kAnswerLimit)) {
      ADD_FAILURE() << "round " << round_ << ": " << in_flight_.size() << " of " << resent.size()
                    << " re-sent writes not answered\n"
                    << LogTail(*in.sup);
      return;
    }
    for (std::size_t i : resent) {
      ++resent_;
      // Times are the wall clock: one below this round's start was given before the crash.
      if (*writes_[i].time < round_start_ms_) ++resent_applied_;
    }
  }

  // Takes one response from the writer's session, waiting up to `limit`; false if none came.
  bool Pump(Incarnation& in, std::chrono::milliseconds limit) {
    auto r = in.writer->Receive(limit);
    if (!r) return false;
    if (r->has_command_error()) {
      ADD_FAILURE() << "round " << round_ << ": refused: " << r->command_error().what() << ": "
                    << r->command_error().why();
    } else if (r->has_write_response()) {
      const auto& wr = r->write_response();
      auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                             [&](std::size_t i) { return writes_[i].uuid == wr.uuid(); });
      if (it == in_flight_.end()) {
        ADD_FAILURE() << "round " << round_
                      << ": an answer to a write not in flight: " << wr.uuid();
      } else if (wr.has_error()) {
        ADD_FAILURE() << "round " << round_ << ": write " << wr.uuid() << " answered "
                      << wr.error();
        in_flight_.erase(it);
      } else {
        Write& w = writes_[*it];
        if (w.time) {
          EXPECT_EQ(*w.time, wr.time()) << "a second answer to " << w.uuid;
        } else {
          w.time = wr.time();
          if (!w.upsert) {
            for (const auto& u : w.command.write_table().updates()) {
              if (u.update().diff() > 0) retractable_.push_back(u.update().row().datums(0).int64());
            }
          }
        }
        in_flight_.erase(it);
      }
    }
    return true;
  }

  bool PumpUntil(Incarnation& in, const std::function<bool()>& done,
                 std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline || ::testing::Test::HasFailure())
        return false;
      Pump(in, 20ms);
    }
    return true;
  }

  // The writes of this round's session got non-decreasing times in send order per table, each
  // after every time acknowledged before the session began writing.
  void CheckSessionTimes() {
    Time last[2] = {0, 0};
    for (std::size_t i = first_fresh_; i < writes_.size(); ++i) {
      const Write& w = writes_[i];
      if (!w.time) continue;
      EXPECT_GT(*w.time, before_writes_max_) << "round " << round_ << ": " << w.uuid;
      EXPECT_GE(*w.time, last[w.upsert]) << "round " << round_ << ": " << w.uuid;
      last[w.upsert] = *w.time;
    }
  }

  std::optional<Contents> Peek(Incarnation& in, const std::string& index, Time t) {
    const std::string uuid = "peek-" + std::to_string(round_) + "-" + std::to_string(peeks_++);
    in.ctl->Send(samples::PeekAt(uuid, index, t));
    auto r = in.ctl->ReceiveUntil(
        [&](const Response& r) {
          return r.has_peek_response() && r.peek_response().uuid() == uuid;
        },
        kAnswerLimit);
    if (!r || !r->peek_response().has_rows()) {
      ADD_FAILURE() << "round " << round_ << ": peek of " << index << " at " << t << ": "
                    << (r ? r->peek_response().error() : std::string("not answered")) << "\n"
                    << LogTail(*in.sup);
      return std::nullopt;
    }
    Contents got;
    for (const auto& rc : r->peek_response().rows().rows()) {
      got[Key(rc.row().datums(0).int64(), rc.row().datums(1).string())] +=
          static_cast<std::int64_t>(rc.count());
    }
    return got;
  }

  // What the table must hold at `t`: every acknowledged write with a time <= t.
  Contents Model(bool upsert, Time t) const {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      if (writes_[i].upsert == upsert && writes_[i].time && *writes_[i].time <= t)
        order.push_back(i);
    }
    Contents want;
    if (!upsert) {
      for (std::size_t i : order) {
        for (const auto& u : writes_[i].command.write_table().updates()) {
          const auto& row = u.update().row();
          want[Key(row.datums(0).int64(), row.datums(1).string())] += u.update().diff();
        }
      }
      std::erase_if(want, [](const auto& e) { return e.second == 0; });
      return want;
    }
    // By time, then by the order of the first send (the order the runtime received them).
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return *writes_[a].time < *writes_[b].time;
    });
    std::map<std::int64_t, std::string> value;
    for (std::size_t i : order) {
      for (const auto& u : writes_[i].command.write_table().updates()) {
        if (u.has_upsert()) {
          value[u.upsert().datums(0).int64()] = u.upsert().datums(1).string();
        } else {
          value.erase(u.delete_().datums(0).int64());
        }
      }
    }
    for (const auto& [k, v] : value) want[Key(k, v)] = 1;
    return want;
  }

  const std::uint64_t seed_;
  std::mt19937_64 rng_;
  TempDir tmp_{"table-crash"};
  const std::string data_dir_;

  std::vector<Write> writes_;  // in the order of their first send
  std::set<std::size_t> in_flight_;
  int round_ = 0;
  Time round_start_ms_ = 0;
  Time before_writes_max_ = 0;
  std::size_t first_fresh_ = 0;
  int peeks_ = 0;

  // The plain table's rows as sent (acknowledged or not: every write is answered eventually).
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, std::string> note_;
  std::map<std::int64_t, std::int64_t> sent_count_;
  std::vector<std::int64_t> retractable_;

  std::size_t resent_ = 0, resent_applied_ = 0, retried_answered_ = 0;
};

std::uint64_t SeedFromEnvironment() {
  if (const char* s = std::getenv("TANDEM_CRASH_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

int RoundsFromEnvironment() {
  if (const char* s = std::getenv("TANDEM_CRASH_ROUNDS")) return std::max(1, std::atoi(s));
  return kDefaultRounds;
}

TEST(TableCrash, EveryAcknowledgedWriteSurvivesKillsOfEveryProcessOnce) {
  const std::uint64_t seed = SeedFromEnvironment();
  const int rounds = RoundsFromEnvironment();
  std::cout << "table crash: seed " << seed << ", " << rounds
            << " rounds (rerun: TANDEM_CRASH_SEED=" << seed << ")" << std::endl;
  SCOPED_TRACE("TANDEM_CRASH_SEED=" + std::to_string(seed));
  RecordProperty("seed", std::to_string(seed));
  CrashRun run(seed);
  std::mt19937_64 delays(seed ^ 0x9e3779b97f4a7c15ull);
  const auto started = std::chrono::steady_clock::now();
  // Rounds 0 .. rounds-1 end in a kill; one more restart checks what the last one left.
  for (int round = 0; round <= rounds; ++round) {
    const auto round_started = std::chrono::steady_clock::now();
    auto in = run.Start(round);
    ASSERT_FALSE(::testing::Test::HasFailure()) << run.Summary();
    run.RetryAnswered(in);
    ASSERT_FALSE(::testing::Test::HasFailure()) << run.Summary();
    run.Check(in);
    ASSERT_FALSE(::testing::Test::HasFailure()) << run.Summary();
    if (round == rounds) break;
    const auto delay = std::chrono::milliseconds(150 + delays() % 1350);
    const Kill kill = round % 3 == 1   ? Kill::kMaintenance
                      : round % 3 == 2 ? Kill::kInteractive
                                       : Kill::kSupervisor;
    std::cout << "round " << round << " (restart, replay, re-sends, check: "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - round_started)
                     .count()
              << " ms): kill the "
              << (kill == Kill::kMaintenance   ? "maintenance runtime"
                  : kill == Kill::kInteractive ? "interactive runtime"
                                               : "supervisor")
              << " after " << delay.count() << " ms" << std::endl;
    run.WriteThenKill(in, delay, kill);
    ASSERT_FALSE(::testing::Test::HasFailure()) << run.Summary();
  }
  std::cout << "table crash: " << run.Summary() << " in "
            << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                started)
                   .count()
            << " s" << std::endl;
}

// `tandem-ctl load` cut by a SIGKILL — of the supervisor, then of the maintenance runtime — and run
// again after each restart on the same data dir: every row of the file is in the table exactly
// once (its batches' uuids are the file's; the table log keeps which it applied). A plain table,
// so a batch applied twice would show as a count of 2.
TEST(TableCrash, ALoadCutByKillsAndRunAgainAppliesEveryRowExactlyOnce) {
  TempDir tmp("load-crash");
  const std::string data_dir = tmp.File("data");
  constexpr int kRows = 200000;
  std::string csv = "k,v\n";
  for (int i = 0; i < kRows; ++i) csv += std::to_string(i) + ",v\n";
  tmp.Write("rows.csv", csv);
  const Command table = TableDataflow(kPlain, kPlainIndex, false);
  tmp.Write("state", ipc::ToJson(table) + "\n");  // the history tandem-ctl reads the table from
  std::unique_ptr<SupervisorProcess> sup;
  std::unique_ptr<TestController> ctl;
  auto start = [&] {
    ctl.reset();
    sup = std::make_unique<SupervisorProcess>(SupervisorOptions{
        .extra_args = {"--data-dir", data_dir},
        .workers = 2,
        .worker_binary = TANDEM_WORKER_BIN,
        .shm_size = "256MiB",
    });
    ASSERT_TRUE(sup->WaitReady(30s)) << LogTail(*sup);
    ctl = std::make_unique<TestController>(sup->controller_endpoint());
    ASSERT_TRUE(ctl->Hello("controller"));
    for (const Command& c : {table, samples::InitializationComplete()}) {
      auto errors = ctl->client().SendChecked(c);
      ASSERT_TRUE(errors.ok() && errors->empty()) << LogTail(*sup);
    }
  };
  auto load = [&] {
    RunBinaryOptions options;
    options.limit = 120s;
    return RunBinary(TANDEM_CTL_BIN,
                     {"--endpoint", sup->controller_endpoint(), "--state", tmp.File("state"),
                      "load", kPlain, tmp.File("rows.csv")},
                     options);
  };
  const std::string acknowledged = "tandem_writes_total{result=\"ok\"}";
  for (const Kill kill : {Kill::kSupervisor, Kill::kMaintenance}) {
    ASSERT_NO_FATAL_FAILURE(start());
    BinaryRun cut;
    std::thread loading([&] { cut = load(); });
    // Cut once a few batches are acknowledged: mid-file.
    const bool started = Eventually(
        [&] { return MetricValue(HttpGet(sup->http_port(), "/metrics").body, acknowledged) >= 3; },
        60s);
    if (kill == Kill::kSupervisor) {
      ::kill(sup->pid(), SIGKILL);
    } else {
      ::kill(sup->runtime_pids().at(0), SIGKILL);
    }
    loading.join();
    ASSERT_TRUE(started) << DescribeRun(cut) << LogTail(*sup);
    EXPECT_EQ(cut.exit, 1) << "the load was cut mid-file\n" << DescribeRun(cut);
    EXPECT_NE(cut.err.find("not acknowledged"), std::string::npos) << DescribeRun(cut);
    ASSERT_TRUE(sup->WaitExit(20s)) << LogTail(*sup);
    for (pid_t p : sup->runtime_pids())
      ASSERT_TRUE(Eventually([&] { return ProcessGone(p); }, 20s));
  }
  ASSERT_NO_FATAL_FAILURE(start());
  const BinaryRun done = load();
  ASSERT_EQ(done.exit, 0) << DescribeRun(done) << LogTail(*sup);
  EXPECT_NE(done.out.find("loaded " + std::to_string(kRows) + " rows"), std::string::npos)
      << DescribeRun(done);
  // Every key once: the index at the latest time, only its key column read back.
  Command peek = samples::PeekAt("all", kPlainIndex, WallMs());
  *peek.mutable_peek()->mutable_mfp() = samples::Mfp({}, {}, {0});
  ctl->Send(peek);
  auto r = ctl->ReceiveUntil(
      [](const Response& x) { return x.has_peek_response() && x.peek_response().uuid() == "all"; },
      60s);
  ASSERT_TRUE(r && r->peek_response().has_rows())
      << (r ? r->peek_response().error() : "no answer") << LogTail(*sup);
  std::int64_t rows = 0, doubled = 0;
  for (const auto& rc : r->peek_response().rows().rows()) {
    rows += static_cast<std::int64_t>(rc.count());
    doubled += rc.count() != 1;
  }
  std::cout << "load crash: " << kRows << " rows in the file, " << rows
            << " present after two cut loads and one whole one (" << doubled
            << " keys not exactly once)" << std::endl;
  EXPECT_EQ(r->peek_response().rows().rows_size(), kRows);
  EXPECT_EQ(rows, kRows);
  EXPECT_EQ(doubled, 0);
}

// Appends `bytes` to the table log of `id` in `data_dir`.
void AppendToLog(const std::string& data_dir, const std::string& id, const std::string& bytes) {
  const std::string path = data_dir + "/tables/" + id + ".log";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A torn last record — a crash during an append, before its fdatasync — is dropped when the table
// reopens: the table holds everything acknowledged, and later writes append after the last good
// record (the next restart reads them, no corruption in the middle).
TEST(TableCrash, ATornLastRecordIsDroppedAndTheTableRestartsWithEverythingAcknowledged) {
  CrashRun run(15);
  {
    auto in = run.Start(0);
    ASSERT_FALSE(::testing::Test::HasFailure());
    run.WriteAll(in, 60);
    ASSERT_FALSE(::testing::Test::HasFailure());
    run.WriteThenKill(in, 0ms, Kill::kMaintenance);
    ASSERT_FALSE(::testing::Test::HasFailure());
  }
  // u1: a frame whose length (64) runs past the end of the file.
  AppendToLog(run.data_dir(), kPlain, std::string("\x40\x00\x00\x00\x12\x34", 6));
  // u3: a whole frame (length 8) whose checksum fails, with nothing after it.
  AppendToLog(run.data_dir(), kUpsert,
              std::string("\x08\x00\x00\x00\xde\xad\xbe\xef", 8) + std::string("garbage!", 8));
  ASSERT_FALSE(::testing::Test::HasFailure());
  {
    auto in = run.Start(1);
    ASSERT_FALSE(::testing::Test::HasFailure());
    run.Check(in);
    ASSERT_FALSE(::testing::Test::HasFailure());
    const std::string log = in.sup->Log();
    EXPECT_NE(log.find("tables/u1.log: dropped a torn tail"), std::string::npos)
        << LogTail(*in.sup);
    EXPECT_NE(log.find("tables/u3.log: dropped a torn tail"), std::string::npos)
        << LogTail(*in.sup);
    run.WriteAll(in, 40);
    ASSERT_FALSE(::testing::Test::HasFailure());
    run.WriteThenKill(in, 0ms, Kill::kSigterm);
    ASSERT_FALSE(::testing::Test::HasFailure());
  }
  {
    auto in = run.Start(2);
    ASSERT_FALSE(::testing::Test::HasFailure());
    run.Check(in);
    EXPECT_EQ(in.sup->Log().find("dropped a torn tail"), std::string::npos) << LogTail(*in.sup);
  }
  std::cout << run.Summary() << std::endl;
}

// A record whose checksum holds but that the table writer cannot have made — here an upsert in
// the plain table's log, which the runtime cannot apply to a plain table — breaks its table only:
// the replica starts and serves, the table's index answers with the damage, writes to the table are
// refused with it, its log is left as it is, and the other table works.
TEST(TableCrash, ARecordTheWriterCannotHaveMadeBreaksOnlyItsTable) {
  CrashRun run(16);
  {
    auto in = run.Start(0);
    ASSERT_FALSE(::testing::Test::HasFailure());
    run.WriteAll(in, 20);
    ASSERT_FALSE(::testing::Test::HasFailure());
    run.WriteThenKill(in, 0ms, Kill::kSigterm);
    ASSERT_FALSE(::testing::Test::HasFailure());
  }
  ipc::pb::TableLogRecord bad;
  bad.mutable_write()->set_uuid("no-writer-made-this");
  bad.mutable_write()->set_time(WallMs() + 60'000);
  *bad.mutable_write()->add_updates()->mutable_upsert() =
      samples::MakeRow({samples::IntDatum(1), samples::StringDatum("x")});
  AppendToLog(run.data_dir(), kPlain, workers::FrameTableLogRecord(bad.SerializeAsString()));
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::string path = run.data_dir() + "/tables/" + kPlain + ".log";
  auto read = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = read(path);

  auto in = run.Start(1);
  ASSERT_FALSE(::testing::Test::HasFailure());
  auto peek = [&](const char* index, const std::string& uuid) {
    in.ctl->Send(samples::PeekAt(uuid, index, WallMs()));
    return in.ctl->ReceiveUntil(
        [&](const Response& r) {
          return r.has_peek_response() && r.peek_response().uuid() == uuid;
        },
        kAnswerLimit);
  };
  auto broken = peek(kPlainIndex, "peek-broken");
  ASSERT_TRUE(broken) << LogTail(*in.sup);
  EXPECT_NE(broken->peek_response().error().find("corrupt"), std::string::npos)
      << broken->DebugString();
  EXPECT_NE(broken->peek_response().error().find("has no upsert key"), std::string::npos)
      << broken->DebugString();
  auto fine = peek(kUpsertIndex, "peek-fine");
  ASSERT_TRUE(fine) << LogTail(*in.sup);
  EXPECT_TRUE(fine->peek_response().has_rows()) << fine->DebugString();

  Command write;
  write.mutable_write_table()->set_uuid("after-the-damage");
  write.mutable_write_table()->set_id(kPlain);
  auto* u = write.mutable_write_table()->add_updates()->mutable_update();
  *u->mutable_row() = samples::MakeRow({samples::IntDatum(99), samples::StringDatum("y")});
  u->set_diff(1);
  in.writer->Send(write);
  auto answer = in.writer->ReceiveUntil(
      [](const Response& r) {
        return r.has_write_response() && r.write_response().uuid() == "after-the-damage";
      },
      kAnswerLimit);
  ASSERT_TRUE(answer) << LogTail(*in.sup);
  EXPECT_NE(answer->write_response().error().find("corrupt"), std::string::npos)
      << answer->DebugString();
  EXPECT_FALSE(in.sup->Exited()) << LogTail(*in.sup);
  EXPECT_EQ(read(path), before) << "the damaged log is left as it is";
}

}  // namespace
}  // namespace tandem::testing
