// Subscriber fan-out: 200 subscribes (each with a snapshot of 5,000 rows) over four observer
// sessions of a two-runtime replica whose source ticks, and peeks all the while. The interactive
// runtime serves subscribes in bounded slices beside its peeks (workers/subscriptions.h), its
// command thread never lets a backlog of subscribe parts stand before a peek's answer, and each
// message a worker sends counts as progress for the stall watch — so every peek is answered
// within a bound (its latencies printed), /readyz stays 200 and no stall is reported, the replica
// stays up, and every subscribe's stream is contiguous and keeps up with the index.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

constexpr int kFanoutSessions = 4;
constexpr int kFanoutPerSession = 50;  // 200 subscribes, within max_subscribes_per_session (1,000)
constexpr std::uint64_t kFanoutKeys = 5000;
constexpr auto kFanoutPeeking = 10s;
constexpr auto kFanoutPeekBound = 2s;  // every peek is answered within this
// The source's tick. Each tick changes ~20 rows, so the 200 streams carry ~80,000 rows a second
// at 50 ms: an instrumented replica on a shared 2-core machine moves less than half that, falls
// behind, and — each lagging subscribe holding its slot's compaction back, each round reading
// from the lowest progress — does not catch up within the test. A slower tick keeps the same
// shape of load within what it can carry.
constexpr std::uint64_t kFanoutTickUs = kInstrumented ? 200'000 : 50'000;

// One subscribe's stream as received, checked as it arrives.
struct FanoutStream {
  std::uint64_t upper = 0;      // the last batch's
  std::uint64_t completed = 0;  // the upper of the last batch that completed an interval
  std::size_t batches = 0;
  std::string problem;  // the first broken rule, empty when none
  std::string end;      // its SubscribeEnd, if one came
};

// kFanoutSessions observer sessions with kFanoutPerSession subscribes of u2 each, drained on a
// thread of its own until destroyed. The streams are the thread's until it is joined (streams());
// the others may be read at any time.
class FanoutSubscribers {
 public:
  explicit FanoutSubscribers(std::string endpoint) : endpoint_(std::move(endpoint)) {
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  }

  bool subscribed() const { return subscribed_.load(); }
  bool failed() const { return failed_.load(); }
  // The lowest completed upper over every stream (0 while one has completed nothing).
  std::uint64_t min_completed() const { return min_completed_.load(); }
  std::uint64_t batches() const { return batches_.load(); }

  // Stops the thread; then the streams and the failure may be read.
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  const std::map<std::string, FanoutStream>& streams() const { return streams_; }
  const std::string& failure() const { return failure_; }

 private:
  void Fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
    failed_ = true;
  }

  void Handle(const ipc::pb::Response& r) {
    if (r.has_command_error()) {
      Fail("refused: " + r.command_error().what() + ": " + r.command_error().why());
      return;
    }
    if (r.has_subscribe_end()) {
      auto it = streams_.find(r.subscribe_end().uuid());
      if (it == streams_.end()) return Fail("an End for " + r.subscribe_end().uuid());
      it->second.end = ipc::pb::SubscribeEnd::Reason_Name(r.subscribe_end().reason()) + " (" +
                       r.subscribe_end().detail() + ")";
      return;
    }
    if (!r.has_subscribe_batch()) return;  // frontiers: every observer is told them
    const ipc::pb::SubscribeBatch& b = r.subscribe_batch();
    auto it = streams_.find(b.uuid());
    if (it == streams_.end()) return Fail("a batch for " + b.uuid());
    FanoutStream& s = it->second;
    if (!s.end.empty() && s.problem.empty()) s.problem = "a batch after its End";
    if (s.batches > 0 && b.lower() != s.upper && s.problem.empty()) {
      s.problem = "batch [" + std::to_string(b.lower()) + ", " + std::to_string(b.upper()) +
                  ") after upper " + std::to_string(s.upper);
    }
    if (b.upper() < b.lower() && s.problem.empty()) s.problem = "an upper below its lower";
    ++s.batches;
    s.upper = b.upper();
    if (b.upper() > b.lower()) s.completed = b.upper();
    batches_.fetch_add(1, std::memory_order_relaxed);
  }

  void Run(const std::stop_token& stop) {
    std::vector<std::unique_ptr<TestController>> sessions;
    for (int s = 0; s < kFanoutSessions; ++s) {
      sessions.push_back(std::make_unique<TestController>(endpoint_));
      if (!sessions.back()->Hello("fanout-" + std::to_string(s), /*observer=*/true)) {
        return Fail("no HelloAccepted for subscriber session " + std::to_string(s));
      }
      for (int i = 0; i < kFanoutPerSession; ++i) {
        const std::string uuid = "fan-" + std::to_string(s) + "-" + std::to_string(i);
        streams_[uuid];
        sessions.back()->Send(ipc::samples::Subscribe(uuid, "u2"));  // latest, with a snapshot
      }
    }
    subscribed_ = true;
    std::vector<zmq::pollitem_t> items;
    for (auto& c : sessions) c->client().AppendPollItems(items);
    while (!stop.stop_requested()) {
      try {
        zmq::poll(items.data(), items.size(), std::chrono::milliseconds(50));
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
      }
      for (auto& c : sessions) {
        while (auto r = c->Receive(0ms)) Handle(*r);
      }
      std::uint64_t lowest = UINT64_MAX;
      for (const auto& [uuid, s] : streams_) lowest = std::min(lowest, s.completed);
      min_completed_ = lowest;
    }
  }

  std::string endpoint_;
  std::map<std::string, FanoutStream> streams_;
  std::string failure_;
  std::atomic<bool> subscribed_{false}, failed_{false};
  std::atomic<std::uint64_t> min_completed_{0}, batches_{0};
  std::jthread thread_;  // last: it goes first, while what it uses is still there
};

double FanoutPercentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

TEST(SubscriberFanout, PeeksAreAnsweredAndNoStallIsReportedBesideTwoHundredSubscribes) {
  // One worker per runtime, a source of 5,000 keys ticking every kFanoutTickUs; a 5 s stall
  // timeout, so that a runtime busy with the subscribes for that long without a sign of progress is
  // reported within the run.
  Target target({"--runtime-stall-timeout", "5"}, 1,
                {.keys = kFanoutKeys, .tick_interval_us = kFanoutTickUs});
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  ASSERT_EQ(target.sup().runtime_pids().size(), 2u);
  const int port = target.sup().http_port();

  FanoutSubscribers subscribers(target.sup().controller_endpoint());
  ASSERT_TRUE(Eventually([&] { return subscribers.subscribed() || subscribers.failed(); }, 20s));
  // Peeks from the moment the snapshots are being sent: of one key, at the latest readable time
  // this session was told of (u2's write frontier - 1), one at a time.
  TestController peeker(target.sup().controller_endpoint());
  ASSERT_TRUE(peeker.Hello("fanout-peeks", /*observer=*/true)) << target.sup().Log();
  std::uint64_t write = 0;
  auto note = [&](const ipc::pb::Response& r) {
    if (r.has_frontiers() && r.frontiers().id() == "u2" &&
        !r.frontiers().write().elements().empty()) {
      write = std::max<std::uint64_t>(write, r.frontiers().write().elements(0));
    }
  };
  for (const auto& r : peeker.skipped) note(r);
  const auto told_deadline = std::chrono::steady_clock::now() + 10s;
  while (write < 2 && std::chrono::steady_clock::now() < told_deadline) {
    if (auto r = peeker.Receive(100ms)) note(*r);
  }
  ASSERT_GE(write, 2u) << "the peek session was told no frontier of u2\n" << target.sup().Log();

  std::vector<double> ms;
  int unanswered = 0, errors = 0, not_ready = 0;
  std::string first_error, readyz_body;
  const auto until = std::chrono::steady_clock::now() + kFanoutPeeking;
  auto next_readyz = std::chrono::steady_clock::now();
  for (int n = 0; std::chrono::steady_clock::now() < until; ++n) {
    if (std::chrono::steady_clock::now() >= next_readyz) {
      next_readyz += 250ms;
      const HttpResult readyz = HttpGet(port, "/readyz");
      if (readyz.status != 200) {
        ++not_ready;
        readyz_body = readyz.body;
      }
    }
    const std::string uuid = "fanout-peek-" + std::to_string(n);
    const auto t0 = std::chrono::steady_clock::now();
    peeker.Send(ipc::samples::PeekAt(
        uuid, "u2", write - 1,
        static_cast<std::int64_t>(static_cast<std::uint64_t>(n) % kFanoutKeys)));
    // Waits well past the bound, so that a late answer is measured rather than only missed.
    std::optional<ipc::pb::Response> answer;
    const auto deadline = t0 + 30s;
    while (!answer && std::chrono::steady_clock::now() < deadline) {
      auto r = peeker.Receive(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  deadline - std::chrono::steady_clock::now()) +
                              1ms);
      if (!r) continue;
      note(*r);
      if (r->has_peek_response() && r->peek_response().uuid() == uuid) answer = std::move(r);
    }
    if (!answer) {
      ++unanswered;
      continue;
    }
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (answer->peek_response().has_error() && errors++ == 0) {
      first_error = answer->peek_response().error();
    }
    std::this_thread::sleep_for(20ms);  // pacing the peeks, not waiting for an event
  }
  const std::uint64_t final_write = write;

  // Every subscribe keeps up: each has delivered what the peeks were told was written.
  const bool caught_up = Eventually(
      [&] { return subscribers.failed() || subscribers.min_completed() >= final_write; }, 15s);
  const std::uint64_t caught = subscribers.min_completed();
  subscribers.Stop();

  std::printf(
      "%zu peeks beside %d subscribes: p50 %.2f ms, p99 %.2f ms, max %.2f ms; %llu subscribe "
      "batches received; slowest stream at %llu of %llu\n",
      ms.size(), kFanoutSessions * kFanoutPerSession, FanoutPercentile(ms, 0.5),
      FanoutPercentile(ms, 0.99), FanoutPercentile(ms, 1.0),
      static_cast<unsigned long long>(subscribers.batches()),
      static_cast<unsigned long long>(caught), static_cast<unsigned long long>(final_write));

  EXPECT_EQ(subscribers.failure(), "");
  EXPECT_EQ(unanswered, 0) << "peeks with no answer within 30 s";
  EXPECT_EQ(errors, 0) << first_error;
  EXPECT_GT(ms.size(), 50u);
  const double bound_ms = std::chrono::duration<double, std::milli>(kFanoutPeekBound).count();
  EXPECT_LE(FanoutPercentile(ms, 1.0), bound_ms) << "the slowest peek";
  EXPECT_EQ(not_ready, 0) << readyz_body;
  const std::string metrics = HttpGet(port, "/metrics").body;
  for (const char* role : {"maintenance", "interactive"}) {
    const std::string labels = std::string("{role=\"") + role + "\"}";
    EXPECT_LE(MetricValue(metrics, "tandem_runtime_stalls_total" + labels), 0) << role;
    EXPECT_LE(MetricValue(metrics, "tandem_runtime_stalled" + labels), 0) << role;
  }
  EXPECT_EQ(target.sup().Log().find("has made no progress"), std::string::npos)
      << target.sup().Log();
  std::map<std::uint64_t, int> completed_counts;  // how many streams completed up to each upper
  for (const auto& [uuid, s] : subscribers.streams()) ++completed_counts[s.completed];
  std::string spread;
  for (const auto& [upper, n] : completed_counts) {
    spread += " " + std::to_string(n) + " at " + std::to_string(upper) + ";";
  }
  EXPECT_TRUE(caught_up) << "the slowest stream completed up to " << caught << ", the index to "
                         << final_write << "; streams:" << spread << "\n"
                         << HttpGet(port, "/metrics").body << target.sup().Log();
  ASSERT_EQ(subscribers.streams().size(),
            static_cast<std::size_t>(kFanoutSessions * kFanoutPerSession));
  int shown = 0;
  for (const auto& [uuid, s] : subscribers.streams()) {
    const bool ok = s.problem.empty() && s.end.empty() && s.completed > 0;
    if (!ok && shown++ < 5) {
      ADD_FAILURE() << uuid << ": " << s.batches << " batches, completed to " << s.completed
                    << (s.problem.empty() ? "" : "; " + s.problem)
                    << (s.end.empty() ? "" : "; ended " + s.end);
    }
  }
  EXPECT_EQ(shown, 0) << "streams broken, ended or never served";
  target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
