// The replica set's logic without replica processes: the first-answer rule
// (controller/peek_race.h), endpoint lists, and controller::ReplicaSet against fake replicas —
// ZeroMQ ROUTERs in threads of this process that answer Hello, barriers and peeks as a script says,
// and record what they were sent. The real thing, three real replicas with one killed and
// restarted, is tests/integration/replica_set_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <zmq.hpp>

#include "controller/peek_race.h"
#include "controller/replica_set.h"
#include "ipc/codec.h"

namespace tandem::controller {
namespace {

using namespace std::chrono_literals;
using ipc::DecodeCommand;
using ipc::Describe;
using ipc::Encode;
using Outcome = PeekRace::Outcome;
using Clock = std::chrono::steady_clock;

pb::PeekResponse Rows(const std::string& uuid, std::int64_t v) {
  pb::PeekResponse r;
  r.set_uuid(uuid);
  auto* rc = r.mutable_rows()->add_rows();
  rc->mutable_row()->add_datums()->set_int64(v);
  rc->set_count(1);
  return r;
}

pb::PeekResponse Error(const std::string& uuid, const std::string& why) {
  pb::PeekResponse r;
  r.set_uuid(uuid);
  r.set_error(why);
  return r;
}

TEST(PeekRace, TheFirstRowsWinAndTheReplicasStillAskedAreCancelled) {
  PeekRace race;
  for (std::size_t i = 0; i < 3; ++i) race.Asked(i);
  race.Answered(2, Rows("p", 7));
  ASSERT_TRUE(race.decided());
  EXPECT_EQ(race.outcome(), Outcome::kRows);
  EXPECT_EQ(race.replica(), 2u);
  EXPECT_EQ(race.TakeCancels(), (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(race.TakeCancels().empty());  // once
  race.Answered(0, Rows("p", 8));           // a late answer changes nothing
  EXPECT_EQ(race.answer()->rows().rows(0).row().datums(0).int64(), 7);
}

TEST(PeekRace, AnErrorFromALaggingReplicaDoesNotWinOverRowsThatComeLater) {
  PeekRace race;
  race.Asked(0);
  race.Asked(1);
  race.Answered(1, Error("p", "s1: as_of 3 is compacted"));
  EXPECT_FALSE(race.decided());
  race.Answered(0, Rows("p", 1));
  ASSERT_TRUE(race.decided());
  EXPECT_EQ(race.outcome(), Outcome::kRows);
  EXPECT_EQ(race.replica(), 0u);
  ASSERT_EQ(race.other_errors().size(), 1u);
  EXPECT_NE(race.other_errors()[0].find("compacted"), std::string::npos);
}

TEST(PeekRace, ARefusalFromAReplayingReplicaDoesNotWinEither) {
  PeekRace race;
  race.Asked(0);
  race.Asked(1);
  pb::CommandError e;
  e.set_what("Peek");
  e.set_why("Peek(p, u2 @ 4): unknown index u2");
  race.Refused(0, e);
  EXPECT_FALSE(race.decided());
  race.Answered(1, Rows("p", 1));
  EXPECT_EQ(race.outcome(), Outcome::kRows);
}

TEST(PeekRace, AnErrorEveryReplicaAnswersIsTheAnswerOnceAllHaveAnswered) {
  PeekRace race;
  race.Asked(0);
  race.Asked(1);
  race.Answered(0, Error("p", "division by zero"));
  EXPECT_FALSE(race.decided());
  race.Answered(1, Error("p", "division by zero"));
  ASSERT_TRUE(race.decided());
  EXPECT_EQ(race.outcome(), Outcome::kError);
  EXPECT_EQ(race.replica(), 0u);  // the first error
  EXPECT_EQ(race.answer()->error(), "division by zero");
  EXPECT_TRUE(race.TakeCancels().empty());
}

TEST(PeekRace, AnErrorAndAReplicaThatWentAwayDecideAsError) {
  PeekRace race;
  race.Asked(0);
  race.Asked(1);
  race.Answered(0, Error("p", "x"));
  race.Gone(1);
  ASSERT_TRUE(race.decided());
  EXPECT_EQ(race.outcome(), Outcome::kError);
}

TEST(PeekRace, AtTheDeadlineAnErrorBeatsATimeout) {
  PeekRace race;
  race.Asked(0);
  race.Asked(1);
  race.Answered(0, Error("p", "x"));
  race.Expire();
  EXPECT_EQ(race.outcome(), Outcome::kError);
  EXPECT_EQ(race.TakeCancels(), (std::vector<std::size_t>{1}));
}

TEST(PeekRace, WithNothingAnsweredTheDeadlineIsATimeoutOrNoReplica) {
  PeekRace waiting;
  waiting.Asked(0);
  waiting.Expire();
  EXPECT_EQ(waiting.outcome(), Outcome::kTimedOut);
  PeekRace gone;
  gone.Asked(0);
  gone.Gone(0);
  EXPECT_FALSE(gone.decided());  // a replica that comes back may still be asked
  gone.Asked(0);
  gone.Answered(0, Rows("p", 3));
  EXPECT_EQ(gone.outcome(), Outcome::kRows);
  PeekRace never;
  never.Asked(0);
  never.Gone(0);
  never.Expire();
  EXPECT_EQ(never.outcome(), Outcome::kNoReplica);
}

TEST(PeekRace, AnswersOfReplicasNotAskedAreIgnored) {
  PeekRace race;
  race.Asked(0);
  race.Answered(1, Rows("p", 1));
  EXPECT_FALSE(race.decided());
  race.Cancel();
  EXPECT_EQ(race.outcome(), Outcome::kCanceled);
  EXPECT_EQ(race.TakeCancels(), (std::vector<std::size_t>{0}));
}

TEST(ParseEndpointList, SplitsOnCommas) {
  auto r = ParseEndpointList("tcp://a:1,tcp://b:2,tcp://c:3");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<std::string>{"tcp://a:1", "tcp://b:2", "tcp://c:3"}));
  EXPECT_EQ(ParseEndpointList("tcp://a:1")->size(), 1u);
}

TEST(ParseEndpointList, RefusesEmptyElementsAndDuplicates) {
  for (const char* bad : {"", ",", "tcp://a:1,", ",tcp://a:1", "tcp://a:1,,tcp://b:2"}) {
    auto r = ParseEndpointList(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("is empty"), std::string::npos) << r.status().message();
  }
  auto dup = ParseEndpointList("tcp://a:1,tcp://b:2,tcp://a:1");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("tcp://a:1 is given twice"), std::string::npos);
}

TEST(ReplicaSetCreate, RefusesWhatIsNoEndpoint) {
  auto r = ReplicaSet::Create({"tcp://127.0.0.1:1", "nonsense"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("\"nonsense\" is not a ZeroMQ endpoint"), std::string::npos);
  EXPECT_FALSE(ReplicaSet::Create({}, {}).ok());
}

// A fake replica: a ROUTER in a thread of its own. It accepts every Hello, answers every empty
// UpdateConfiguration (the barrier) with ConfigurationApplied, answers peeks as `peeks` says
// (rows holding `value`, an error, or nothing until cancelled), and records every command kind
// it was sent and the time of every peek. It answers a WriteTable at its write time, as a table
// would by its own clock: from then on peeks before that time answer no rows. Restart() closes
// the socket (the client sees its connection drop) and binds the same endpoint again: a replica
// that came back.
class FakeReplica {
 public:
  enum class Peeks { kRows, kError, kSilent };
  FakeReplica(Peeks peeks, std::int64_t value) : peeks_(peeks), value_(value) {
    Bind("tcp://127.0.0.1:*");
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeReplica() {
    stop_ = true;
    thread_.join();
  }
  const std::string& endpoint() const { return endpoint_; }
  std::vector<std::string> commands() {
    std::lock_guard lock(mu_);
    return commands_;
  }
  // Closes the socket, stays away for `down_for`, binds the same endpoint again.
  void Restart(std::chrono::milliseconds down_for = 0ms) {
    down_for_ = down_for;
    restart_ = true;
  }
  void set_peeks(Peeks p) { peeks_ = p; }
  void set_write_time(std::uint64_t t) { write_time_ = t; }
  // Refuse every AllowCompaction (CommandError), as a replica does for an id it does not know.
  void set_refuse_compaction(bool refuse) { refuse_compaction_ = refuse; }
  std::vector<std::uint64_t> peek_times() {
    std::lock_guard lock(mu_);
    return peek_times_;
  }

 private:
  void Bind(const std::string& where) {
    socket_.emplace(context_, zmq::socket_type::router);
    socket_->set(zmq::sockopt::linger, 0);
    for (int i = 0; i < 200; ++i) {  // a closed socket frees its port in the I/O thread
      try {
        socket_->bind(where);
        endpoint_ = socket_->get(zmq::sockopt::last_endpoint);
        return;
      } catch (const zmq::error_t&) {
        std::this_thread::sleep_for(10ms);
      }
    }
    ADD_FAILURE() << "cannot bind " << where;
  }
  void Reply(const zmq::message_t& peer, const pb::Response& r) {
    socket_->send(zmq::buffer(peer.to_string_view()), zmq::send_flags::sndmore);
    socket_->send(zmq::buffer(Encode(r)), zmq::send_flags::none);
  }
  void Loop() {
    std::map<std::string, std::string> waiting;  // silent peeks: uuid -> peer
    bool written = false;
    while (!stop_) {
      if (restart_.exchange(false)) {
        socket_.reset();
        waiting.clear();
        std::this_thread::sleep_for(down_for_.load());  // a replica that is away for a while
        Bind(endpoint_);
        std::lock_guard lock(mu_);
        commands_.push_back("(restarted)");
      }
      zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 10ms);
      zmq::message_t peer, body;
      if (!socket_->recv(peer, zmq::recv_flags::dontwait)) continue;
      (void)socket_->recv(body);
      auto d = DecodeCommand(body.to_string_view());
      if (!d.ok()) continue;
      const pb::Command& c = d.message;
      {
        std::lock_guard lock(mu_);
        commands_.push_back(c.kind_case() == pb::Command::kUpdateConfiguration
                                ? "Barrier"
                                : Describe(c).substr(0, Describe(c).find('(')));
      }
      pb::Response r;
      if (c.has_hello()) {
        r.mutable_status()->mutable_hello_accepted()->set_nonce(c.hello().nonce());
        r.mutable_status()->mutable_hello_accepted()->set_observer(c.hello().observer());
        r.mutable_status()->mutable_hello_accepted()->set_replica_id("fake" +
                                                                     std::to_string(value_));
        Reply(peer, r);
      } else if (c.has_update_configuration()) {
        r.mutable_status()->mutable_configuration_applied();
        Reply(peer, r);
      } else if (c.has_allow_compaction() && refuse_compaction_) {
        r.mutable_command_error()->set_what("AllowCompaction");
        r.mutable_command_error()->set_why("unknown id " + c.allow_compaction().id());
        Reply(peer, r);
      } else if (c.has_write_table()) {
        r.mutable_write_response()->set_uuid(c.write_table().uuid());
        r.mutable_write_response()->set_time(write_time_);
        written = true;
        Reply(peer, r);
      } else if (c.has_peek()) {
        {
          std::lock_guard lock(mu_);
          peek_times_.push_back(c.peek().timestamp());
        }
        const Peeks p = peeks_;
        if (p == Peeks::kRows && written && c.peek().timestamp() < write_time_) {
          r.mutable_peek_response()->set_uuid(c.peek().uuid());
          r.mutable_peek_response()->mutable_rows();  // before the write: none
          Reply(peer, r);
        } else if (p == Peeks::kRows) {
          *r.mutable_peek_response() = Rows(c.peek().uuid(), value_);
          Reply(peer, r);
        } else if (p == Peeks::kError) {
          *r.mutable_peek_response() = Error(c.peek().uuid(), "as_of is compacted");
          Reply(peer, r);
        } else {
          waiting[c.peek().uuid()] = peer.to_string();
        }
      } else if (c.has_cancel_peek()) {
        auto it = waiting.find(c.cancel_peek().uuid());
        if (it != waiting.end()) {
          r.mutable_peek_response()->set_uuid(it->first);
          r.mutable_peek_response()->mutable_canceled();
          Reply(zmq::message_t(it->second.data(), it->second.size()), r);
          waiting.erase(it);
        }
      }
    }
  }

  zmq::context_t context_{1};
  std::optional<zmq::socket_t> socket_;
  std::string endpoint_;
  std::atomic<Peeks> peeks_;
  std::int64_t value_;
  std::atomic<bool> stop_{false}, restart_{false};
  std::atomic<std::chrono::milliseconds> down_for_{0ms};
  std::atomic<std::uint64_t> write_time_{0};
  std::atomic<bool> refuse_compaction_{false};
  std::mutex mu_;
  std::vector<std::string> commands_;
  std::vector<std::uint64_t> peek_times_;
  std::thread thread_;
};

pb::Command PeekCommand(const std::string& uuid) {
  pb::Command c;
  c.mutable_peek()->set_uuid(uuid);
  c.mutable_peek()->set_id("u2");
  c.mutable_peek()->set_timestamp(4);
  return c;
}

pb::Command PeekCommandAt(const std::string& uuid, std::uint64_t t) {
  pb::Command c = PeekCommand(uuid);
  c.mutable_peek()->set_timestamp(t);
  return c;
}

pb::Command Compaction(std::uint64_t t) {
  pb::Command c;
  c.mutable_allow_compaction()->set_id("u2");
  c.mutable_allow_compaction()->mutable_frontier()->add_elements(t);
  return c;
}

std::unique_ptr<ReplicaSet> MakeSet(const std::vector<std::string>& endpoints,
                                    bool observer = false,
                                    std::chrono::milliseconds hello_timeout = 2s) {
  ReplicaSet::Options o;
  o.client.timeout = hello_timeout;
  o.retry_interval = 50ms;
  o.observer = observer;
  auto set = ReplicaSet::Create(endpoints, o);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return std::move(set).value();
}

// What `fake` was sent after its last restart (or from the start).
std::vector<std::string> SinceRestart(FakeReplica& fake) {
  auto all = fake.commands();
  auto it = std::find(all.rbegin(), all.rend(), "(restarted)");
  return {it.base(), all.end()};
}

TEST(ReplicaSet, AReplicaTheAdmitCheckRefusesIsNeverReplayedToNorRetried) {
  // tandem-ctl's check: a replica maintaining indexes the history does not define must not get
  // the replay (reconciliation would drop them). Here: refuse the replica called "fake2".
  FakeReplica a(FakeReplica::Peeks::kRows, 1), b(FakeReplica::Peeks::kRows, 2);
  ReplicaSet::Options o;
  o.client.timeout = 2s;
  o.retry_interval = 50ms;
  o.admit = [](const pb::Status::HelloAccepted& accepted) {
    return accepted.replica_id() == "fake2" ? Status::FailedPrecondition("maintains u9")
                                            : Status::Ok();
  };
  auto created = ReplicaSet::Create({a.endpoint(), b.endpoint()}, o);
  ASSERT_TRUE(created.ok());
  ReplicaSet& set = **created;
  set.SetHistory({Compaction(3)});
  ASSERT_TRUE(set.Connect(Clock::now() + 5s).ok());
  for (const auto until = Clock::now() + 5s; set.ready() < 1 && Clock::now() < until;) {
    (void)set.Poll(20ms);
  }
  EXPECT_EQ(set.status(0).state, ReplicaSet::State::kReady);
  EXPECT_EQ(set.status(1).state, ReplicaSet::State::kDown);
  EXPECT_EQ(set.status(1).last_error, "maintains u9");
  for (int i = 0; i < 10; ++i) (void)set.Poll(20ms);  // several retry intervals
  EXPECT_EQ(b.commands(), (std::vector<std::string>{"Hello"})) << "neither replayed nor retried";
  EXPECT_EQ(a.commands(), (std::vector<std::string>{"Hello", "AllowCompaction",
                                                    "InitializationComplete", "Barrier"}));
}

TEST(ReplicaSet, EveryCommandGoesToEveryReplicaAndJoinsTheHistoryOnceAccepted) {
  FakeReplica a(FakeReplica::Peeks::kRows, 1), b(FakeReplica::Peeks::kRows, 2);
  auto set = MakeSet({a.endpoint(), b.endpoint()});
  ASSERT_TRUE(set->Connect(Clock::now() + 5s).ok());
  ASSERT_EQ(set->ready(), 2u);
  auto out = set->Submit(Compaction(3), /*record=*/true, Clock::now() + 5s);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->accepted, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(set->history().size(), 1u);
  const std::vector<std::string> want = {"Hello", "InitializationComplete", "Barrier",
                                         "AllowCompaction", "Barrier"};
  EXPECT_EQ(a.commands(), want);
  EXPECT_EQ(b.commands(), want);
}

TEST(ReplicaSet, AReplicaThatComesBackIsReplayedTheHistory) {
  FakeReplica a(FakeReplica::Peeks::kRows, 1), b(FakeReplica::Peeks::kRows, 2);
  auto set = MakeSet({a.endpoint(), b.endpoint()});
  ASSERT_TRUE(set->Connect(Clock::now() + 5s).ok());
  ASSERT_TRUE(set->Submit(Compaction(3), true, Clock::now() + 5s).ok());
  b.Restart();
  // It is noticed down (its connection dropped) and, once back, replayed to.
  const auto deadline = Clock::now() + 10s;
  while (set->status(1).replays < 2 && Clock::now() < deadline) (void)set->Poll(20ms);
  ASSERT_EQ(set->status(1).replays, 2u) << set->status(1).last_error;
  EXPECT_EQ(set->status(1).sessions, 2u);
  EXPECT_EQ(set->status(0).sessions, 1u);  // the other kept its session
  EXPECT_EQ(SinceRestart(b), (std::vector<std::string>{"Hello", "AllowCompaction",
                                                       "InitializationComplete", "Barrier"}));
  // And it takes new commands again.
  auto out = set->Submit(Compaction(5), true, Clock::now() + 5s);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->accepted.size(), 2u);
}

TEST(ReplicaSet, ACommandSubmittedWhileAReplicaIsDownReachesItInTheReplay) {
  FakeReplica a(FakeReplica::Peeks::kRows, 1);
  std::string b_endpoint;
  auto b = std::make_unique<FakeReplica>(FakeReplica::Peeks::kRows, 2);
  b_endpoint = b->endpoint();
  auto set = MakeSet({a.endpoint(), b_endpoint});
  ASSERT_TRUE(set->Connect(Clock::now() + 5s).ok());
  b->Restart(500ms);  // away for a while: submit while the set sees it down
  const auto deadline = Clock::now() + 10s;
  while (set->status(1).state == ReplicaSet::State::kReady && Clock::now() < deadline) {
    (void)set->Poll(5ms);
  }
  auto out = set->Submit(Compaction(9), true, Clock::now() + 5s);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->accepted, (std::vector<std::size_t>{0}));
  while (set->status(1).replays < 2 && Clock::now() < deadline) (void)set->Poll(20ms);
  const auto seen = SinceRestart(*b);
  EXPECT_NE(std::find(seen.begin(), seen.end(), "AllowCompaction"), seen.end());
}

// Broadcast: commands nobody waits for, each batch followed by a barrier of its own — so that a
// refusal of one (a compaction of an index the replica no longer knows) is never taken for the
// verdict of a Submit sent right after it.
TEST(ReplicaSet, ARefusedBroadcastIsNotTheVerdictOfTheNextSubmit) {
  FakeReplica a(FakeReplica::Peeks::kRows, 1);
  a.set_refuse_compaction(true);
  auto set = MakeSet({a.endpoint()});
  ASSERT_TRUE(set->Connect(Clock::now() + 5s).ok());
  EXPECT_EQ(set->Broadcast({Compaction(3), Compaction(4)}), 1u);
  pb::Command create;
  create.mutable_create_dataflow()->mutable_desc()->set_debug_name("d");
  auto out = set->Submit(create, /*record=*/true, Clock::now() + 5s);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->refused.empty());
  EXPECT_EQ(out->accepted, (std::vector<std::size_t>{0}));
  EXPECT_NE(set->status(0).last_error.find("AllowCompaction refused: unknown id u2"),
            std::string::npos)
      << set->status(0).last_error;
  EXPECT_EQ(a.commands(), (std::vector<std::string>{"Hello", "InitializationComplete", "Barrier",
                                                    "AllowCompaction", "AllowCompaction", "Barrier",
                                                    "CreateDataflow", "Barrier"}));
}

// The wake descriptor: a thread that owns the set sleeps in its waits and is woken by others.
TEST(ReplicaSet, AReadableWakeDescriptorEndsAWaitAndIsHandedToOnWake) {
  FakeReplica a(FakeReplica::Peeks::kRows, 1);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int woken = 0;
  ReplicaSet::Options o;
  o.client.timeout = 2s;
  o.wake_fd = fds[0];
  o.on_wake = [&] {
    char c;
    ASSERT_EQ(read(fds[0], &c, 1), 1);
    ++woken;
  };
  auto created = ReplicaSet::Create({a.endpoint()}, o);
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE((*created)->Connect(Clock::now() + 5s).ok());
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  const auto start = Clock::now();
  (void)(*created)->Poll(20s);
  EXPECT_LT(Clock::now() - start, 10s);
  EXPECT_EQ(woken, 1);
  close(fds[0]);
  close(fds[1]);
}

TEST(ReplicaSet, APeekIsAnsweredByTheFirstAndCancelledAtASilentReplica) {
  FakeReplica silent(FakeReplica::Peeks::kSilent, 1), fast(FakeReplica::Peeks::kRows, 2);
  auto set = MakeSet({silent.endpoint(), fast.endpoint()}, /*observer=*/true);
  ASSERT_TRUE(set->Connect(Clock::now() + 5s).ok());
  ASSERT_TRUE(set->StartPeek(PeekCommand("aaaa1111")).ok());
  const auto r = set->AwaitPeek("aaaa1111", Clock::now() + 5s);
  ASSERT_EQ(r.outcome, Outcome::kRows);
  EXPECT_EQ(r.replica, 1u);
  EXPECT_EQ(r.answer->rows().rows(0).row().datums(0).int64(), 2);
  // The silent one was told to cancel.
  const auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    (void)set->Poll(10ms);
    const auto c = silent.commands();
    if (std::find(c.begin(), c.end(), "CancelPeek") != c.end()) break;
  }
  const auto c = silent.commands();
  EXPECT_NE(std::find(c.begin(), c.end(), "CancelPeek"), c.end());
  EXPECT_EQ(std::count(c.begin(), c.end(), "InitializationComplete"), 0);  // observers never
}

TEST(ReplicaSet, AnErrorFromOneReplicaWaitsForTheRowsOfAnother) {
  FakeReplica lagging(FakeReplica::Peeks::kError, 1), slow(FakeReplica::Peeks::kSilent, 2);
  auto set = MakeSet({lagging.endpoint(), slow.endpoint()}, true);
  ASSERT_TRUE(set->Connect(Clock::now() + 5s).ok());
  ASSERT_TRUE(set->StartPeek(PeekCommand("bbbb2222")).ok());
  // The error arrives; the other has the peek (before it is told to answer rows) and says nothing.
  const auto deadline = Clock::now() + 5s;
  std::vector<ReplicaSet::PeekResult> polled;
  auto has_peek = [&] {
    const auto c = slow.commands();
    return std::find(c.begin(), c.end(), "Peek") != c.end();
  };
  while (!has_peek() && Clock::now() < deadline) {
    for (auto& r : set->Poll(10ms)) polled.push_back(r);
  }
  ASSERT_TRUE(has_peek());
  for (auto& r : set->Poll(50ms)) polled.push_back(r);
  EXPECT_TRUE(polled.empty());
  EXPECT_EQ(set->peeks_in_flight(), 1u);
  // A peek to the chosen replica alone.
  slow.set_peeks(FakeReplica::Peeks::kRows);
  ASSERT_TRUE(set->StartPeek(PeekCommand("cccc3333"), 1).ok());
  auto only = set->AwaitPeek("cccc3333", Clock::now() + 5s);
  ASSERT_EQ(only.outcome, Outcome::kRows);
  EXPECT_EQ(only.replica, 1u);
  EXPECT_TRUE(only.other_errors.empty());  // replica 0 was not asked
  // At the deadline the first peek returns the error it has rather than a timeout.
  auto first = set->AwaitPeek("bbbb2222", Clock::now() + 100ms);
  EXPECT_EQ(first.outcome, Outcome::kError);
  EXPECT_EQ(first.answer->error(), "as_of is compacted");
}

TEST(ReplicaSet, AReplicaThatIsNotThereDoesNotHoldUpTheOthers) {
  FakeReplica up(FakeReplica::Peeks::kRows, 5);
  // Nothing listens on the second endpoint: its Hello waits in ZeroMQ's queue.
  std::string nowhere;
  {
    FakeReplica gone(FakeReplica::Peeks::kRows, 0);
    nowhere = gone.endpoint();
  }
  // A Hello timeout far beyond the grace, so that a slow (sanitized, loaded) first handshake
  // cannot blur which of the two ended the wait.
  auto set = MakeSet({nowhere, up.endpoint()}, true, 20s);
  const auto started = Clock::now();
  ASSERT_TRUE(set->Connect(Clock::now() + 30s).ok());
  EXPECT_LT(Clock::now() - started, 10s);  // the grace after the first ready one, not 20 s
  EXPECT_EQ(set->status(0).state, ReplicaSet::State::kConnecting);
  ASSERT_TRUE(set->StartPeek(PeekCommand("dddd4444")).ok());
  auto r = set->AwaitPeek("dddd4444", Clock::now() + 5s);
  ASSERT_EQ(r.outcome, Outcome::kRows);
  EXPECT_EQ(r.replica, 1u);
}

// Read your writes. A table's time is its replica's clock, so one write is answered by each
// replica at its own time: here A at 100 and B at 200. A peek at 150 that B answers misses the
// write; asked from each replica's own time of the write on (PeekTargets::at_least), B answers at
// 200, with it — and at exactly 150 only A may answer (PeekTargets::only).
TEST(ReplicaSet, AWriteHasATimePerReplicaAndAPeekAsksEachFromItsOwn) {
  FakeReplica a(FakeReplica::Peeks::kSilent, 1), b(FakeReplica::Peeks::kRows, 2);
  a.set_write_time(100);
  b.set_write_time(200);
  ReplicaSet::Options o;
  o.client.timeout = 2s;
  o.retry_interval = 50ms;
  o.observer = true;
  o.writer = true;
  auto created = ReplicaSet::Create({a.endpoint(), b.endpoint()}, o);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ReplicaSet& set = **created;
  ASSERT_TRUE(set.Connect(Clock::now() + 5s).ok());
  for (const auto until = Clock::now() + 5s; set.ready() < 2 && Clock::now() < until;) {
    (void)set.Poll(20ms);
  }
  ASSERT_EQ(set.ready(), 2u);

  pb::WriteTable w;
  w.set_uuid("w-1");
  w.set_id("u1");
  w.add_updates()->mutable_upsert()->add_datums()->set_int64(1);
  ASSERT_TRUE(set.StartWrite(w).ok());
  EXPECT_FALSE(set.StartWrite(w).ok()) << "its uuid is in flight";
  std::optional<ReplicaSet::WriteResult> written;
  for (const auto until = Clock::now() + 5s; !written && Clock::now() < until;) {
    (void)set.Poll(20ms);
    written = set.TakeWrite("w-1");
  }
  ASSERT_TRUE(written) << "every replica answers the write";
  ASSERT_EQ(written->answers.size(), 2u);
  EXPECT_EQ(written->answers.at(0).time(), 100u);
  EXPECT_EQ(written->answers.at(1).time(), 200u);
  EXPECT_TRUE(written->refused.empty());
  EXPECT_TRUE(written->unanswered.empty());
  EXPECT_TRUE(written->not_sent.empty());
  EXPECT_EQ(set.writes_in_flight(), 0u);
  const auto a_commands = a.commands();
  EXPECT_EQ(std::count(a_commands.begin(), a_commands.end(), "WriteTable"), 1);

  // Why: asked at 150, B answers first (A is slow) and the write is not in its answer.
  ASSERT_TRUE(set.StartPeek(PeekCommandAt("eeee5555", 150)).ok());
  auto missed = set.AwaitPeek("eeee5555", Clock::now() + 5s);
  ASSERT_EQ(missed.outcome, Outcome::kRows);
  EXPECT_EQ(missed.replica, 1u);
  EXPECT_EQ(missed.timestamp, 150u);
  EXPECT_EQ(missed.answer->rows().rows_size(), 0);

  // The latest time as one replica saw it (150): each replica is asked from its own time of the
  // write on, so B at 200, and its answer has the write.
  ReplicaSet::PeekTargets latest;
  latest.at_least = {{0, 100}, {1, 200}};
  ASSERT_TRUE(set.StartPeek(PeekCommandAt("ffff6666", 150), latest).ok());
  auto seen = set.AwaitPeek("ffff6666", Clock::now() + 5s);
  ASSERT_EQ(seen.outcome, Outcome::kRows);
  EXPECT_EQ(seen.replica, 1u);
  EXPECT_EQ(seen.timestamp, 200u) << "the answer's time is the time B was asked at";
  ASSERT_EQ(seen.answer->rows().rows_size(), 1);
  EXPECT_EQ(seen.answer->rows().rows(0).row().datums(0).int64(), 2);
  EXPECT_EQ(b.peek_times(), (std::vector<std::uint64_t>{150, 200}));
  // A was asked too, at 150 (its own 100 is earlier), and told to cancel.
  for (const auto until = Clock::now() + 5s; a.peek_times().size() < 2 && Clock::now() < until;) {
    (void)set.Poll(10ms);
  }
  EXPECT_EQ(a.peek_times(), (std::vector<std::uint64_t>{150, 150}));

  // Exactly at 150: only A, whose write is at 100, may answer; B is not asked.
  a.set_peeks(FakeReplica::Peeks::kRows);
  ReplicaSet::PeekTargets exactly;
  exactly.only = std::set<std::size_t>{0};
  ASSERT_TRUE(set.StartPeek(PeekCommandAt("gggg7777", 150), exactly).ok());
  auto at_a = set.AwaitPeek("gggg7777", Clock::now() + 5s);
  ASSERT_EQ(at_a.outcome, Outcome::kRows);
  EXPECT_EQ(at_a.replica, 0u);
  EXPECT_EQ(at_a.timestamp, 150u);
  ASSERT_EQ(at_a.answer->rows().rows_size(), 1);
  EXPECT_EQ(at_a.answer->rows().rows(0).row().datums(0).int64(), 1);
  for (int i = 0; i < 5; ++i) (void)set.Poll(10ms);
  EXPECT_EQ(b.peek_times().size(), 2u) << "B was not asked";

  // Targets name replicas of the set only.
  ReplicaSet::PeekTargets nowhere;
  nowhere.only = std::set<std::size_t>{2};
  EXPECT_FALSE(set.StartPeek(PeekCommandAt("hhhh8888", 150), nowhere).ok());
}

// A replica that goes away before answering a write leaves it unanswered there (it may or may
// not have been applied), and one that is not up is not sent it.
TEST(ReplicaSet, AWriteToAReplicaThatIsDownOrGoesAwayIsNotAcknowledgedThere) {
  FakeReplica a(FakeReplica::Peeks::kRows, 1), b(FakeReplica::Peeks::kRows, 2);
  a.set_write_time(100);
  b.set_write_time(200);
  ReplicaSet::Options o;
  o.client.timeout = 2s;
  o.retry_interval = 10s;  // a replica that goes down stays down for this test
  o.observer = true;
  o.writer = true;
  auto created = ReplicaSet::Create({a.endpoint(), b.endpoint()}, o);
  ASSERT_TRUE(created.ok());
  ReplicaSet& set = **created;
  ASSERT_TRUE(set.Connect(Clock::now() + 5s).ok());
  for (const auto until = Clock::now() + 5s; set.ready() < 2 && Clock::now() < until;) {
    (void)set.Poll(20ms);
  }
  ASSERT_EQ(set.ready(), 2u);
  b.Restart(200ms);
  for (const auto until = Clock::now() + 10s;
       set.status(1).state == ReplicaSet::State::kReady && Clock::now() < until;) {
    (void)set.Poll(10ms);
  }
  ASSERT_NE(set.status(1).state, ReplicaSet::State::kReady);
  pb::WriteTable w;
  w.set_uuid("w-2");
  w.set_id("u1");
  w.add_updates()->mutable_upsert()->add_datums()->set_int64(1);
  ASSERT_TRUE(set.StartWrite(w).ok());
  std::optional<ReplicaSet::WriteResult> r;
  for (const auto until = Clock::now() + 5s; !r && Clock::now() < until;) {
    (void)set.Poll(20ms);
    r = set.TakeWrite("w-2");
  }
  ASSERT_TRUE(r);
  EXPECT_EQ(r->answers.size(), 1u);
  EXPECT_EQ(r->answers.at(0).time(), 100u);
  EXPECT_EQ(r->not_sent, (std::vector<std::size_t>{1}));
  // Expired before its answer was taken in: unanswered.
  w.set_uuid("w-3");
  ASSERT_TRUE(set.StartWrite(w).ok());
  const auto expired = set.ExpireWrite("w-3");
  EXPECT_EQ(expired.unanswered, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(expired.answers.empty());
  EXPECT_EQ(set.writes_in_flight(), 0u);
  for (int i = 0; i < 5; ++i) (void)set.Poll(10ms);  // its late answer is dropped
  EXPECT_FALSE(set.TakeWrite("w-3"));
}

}  // namespace
}  // namespace tandem::controller
