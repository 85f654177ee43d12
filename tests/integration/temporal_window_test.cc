// A sliding window maintained by the real runtime (DESIGN §16 "Temporal filters"), through the
// real supervisor: a table written every 10 ms by a writer session, a view of its rows of the last
// W (tandem_now() >= ts AND tandem_now() < ts + W) and its count(*), both indexed. While the
// writes go on, the controller reads both indexes at the latest acknowledged time and at a random
// earlier one and compares each answer with the reference evaluator's (which evaluates the filter
// at the read's time: no bounds, no schedule); it lets the indexes compact behind its reads, and
// the window's arrangement must stay bounded by the rows in the window, not grow with the history.
// After the last write, time alone empties the window.
//
// And a log source that closes: its last tick is [lo, ∞), so the window's index holds the view's
// whole future — every row's leaving included — with an empty upper.
//
// Default: 5 s of writes with a 1 s window. Thorough (the slow label, tests/thorough.h): 60 s with
// a 10 s window. The arrangement's size over time is printed for the notes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "base/time.h"
#include "differential.h"
#include "ipc/client.h"
#include "log_source.h"
#include "replica.h"
#include "shm/reader.h"
#include "shm/segment.h"
#include "temp_dir.h"
#include "thorough.h"
#include "unit/protocol_samples.h"
#include "unit/temporal_samples.h"

namespace tandem::testing {
namespace {

namespace samples = ipc::samples;

constexpr std::chrono::milliseconds kWriteEvery{10};

// Table u40 [k INT64, ts TIMESTAMPTZ]; u50 = its rows of the last `window_ms` (u52 on k); u51 =
// count(*) of u50 (u53 on the count).
pb::Command WindowDataflow(std::int64_t window_ms) {
  pb::Command c = samples::EmptyDataflow("sliding window");
  auto* d = samples::Desc(c);
  pb::SourceImport table;
  table.set_id("u40");
  table.mutable_source()->mutable_table()->set_tick_interval_ms(10);
  *table.mutable_schema() = samples::MakeSchema(
      {samples::MakeColumn("k", pb::INT64), samples::MakeColumn("ts", pb::TIMESTAMPTZ)});
  *d->add_source_imports() = std::move(table);
  *d->add_objects_to_build() = samples::Build(
      "u50", samples::MfpPlan(samples::GetPlan("u40"),
                              samples::Mfp({}, samples::SlidingWindow(1, window_ms * 1000), {})));
  *d->add_objects_to_build() =
      samples::Build("u51", samples::ReducePlan(samples::GetPlan("u50"), {}, {{pb::COUNT, 0}}));
  *d->add_index_exports() = samples::Export("u52", "u50", {0});
  *d->add_index_exports() = samples::Export("u53", "u51", {0});
  return c;
}

// An index's arrangement summed over the workers' slots.
struct ArrangementSize {
  std::uint64_t updates = 0, bytes = 0, batches = 0;
};
ArrangementSize SizeOf(const std::string& segment, const std::string& id) {
  ArrangementSize size;
  auto opened = shm::Segment::Open(segment);
  if (!opened.ok()) return size;
  shm::Inspector inspector(opened->get());
  for (const shm::SlotInfo& slot : inspector.Slots()) {
    if (slot.key.id.ToString() != id) continue;
    size.updates += slot.updates;
    size.bytes += slot.bytes;
    size.batches += slot.batches;
  }
  return size;
}

// The table's writes as the writer had them acknowledged: each row at its time.
struct Written {
  std::mutex mu;
  std::vector<reference::Update> updates;  // in time order (one writer, one write at a time)
  std::string failure;
};

void WriteEvery10ms(const std::string& endpoint, std::chrono::steady_clock::time_point end,
                    Written* written) {
  ipc::ControllerClient writer(endpoint, ipc::ControllerClient::Options{});
  if (Status hello = writer.Hello("temporal-writer", /*observer=*/true, /*writer=*/true);
      !hello.ok()) {
    std::lock_guard lock(written->mu);
    written->failure = "writer Hello: " + hello.ToString();
    return;
  }
  auto next = std::chrono::steady_clock::now();
  for (std::int64_t k = 0; std::chrono::steady_clock::now() < end; ++k) {
    const std::int64_t ts = static_cast<std::int64_t>(WallClockMs()) * 1000;
    pb::Row row = samples::MakeRow({samples::IntDatum(k), samples::TimestampTzDatum(ts)});
    const pb::Command write =
        samples::WriteTable("w" + std::to_string(k), "u40", {samples::RowUpdate(row)});
    auto out = writer.Write(write.write_table());
    std::lock_guard lock(written->mu);
    if (!out.ok() || !out->response || out->response->has_error()) {
      written->failure = "write " + std::to_string(k) + ": " +
                         (!out.ok()        ? out.status().ToString()
                          : !out->response ? out->refused->why()
                                           : out->response->error());
      return;
    }
    written->updates.push_back({reference::FromProto(row), out->response->time(), 1});
    next += kWriteEvery;
    std::this_thread::sleep_until(next);
  }
}

class WindowReader {
 public:
  WindowReader(Replica& r, const pb::Command& dataflow)
      : r_(r), reference_(dataflow.create_dataflow().desc()) {}

  void Add(const reference::Update& u) { reference_.AddUpdate("u40", u); }

  // Peeks `id` at `t` and compares the answer with the reference's. False (with a failure
  // recorded) on a mismatch or no answer.
  bool ReadAndCompare(const std::string& id, Time t, std::int64_t* count_out = nullptr) {
    const std::string uuid = "r" + std::to_string(++reads_);
    const pb::Command peek = samples::PeekAt(uuid, id, t);
    r_.ctl->Send(peek);
    auto answer = r_.ctl->ReceiveUntil(
        [&](const pb::Response& x) {
          return x.has_peek_response() && x.peek_response().uuid() == uuid;
        },
        std::chrono::seconds(20));
    r_.ctl->skipped.clear();  // frontiers: nobody looks at them
    if (!answer) {
      ADD_FAILURE() << "no answer to the peek of " << id << " at " << t << "\n"
                    << Tail(r_.sup.Log());
      return false;
    }
    const PeekAnswer expected = reference_.Peek(peek.peek());
    if (!Agrees(expected, answer->peek_response())) {
      ADD_FAILURE() << id << " at " << t << ": the runtime answered "
                    << AnswerText(answer->peek_response()) << ", the reference "
                    << reference::ToString(expected);
      return false;
    }
    if (count_out && expected.ok) {
      *count_out = expected.rows.empty() ? 0 : std::get<std::int64_t>(expected.rows[0].first[0]);
    }
    return true;
  }
  std::uint64_t reads() const { return reads_; }

 private:
  Replica& r_;
  Evaluator reference_;
  std::uint64_t reads_ = 0;
};

TEST(TemporalWindow,
     ASlidingWindowCountMatchesTheReferenceAtEveryReadAndItsArrangementStaysBounded) {
  const bool thorough = Thorough();
  const auto duration = thorough ? std::chrono::seconds(60) : std::chrono::seconds(5);
  const std::int64_t window_ms = thorough ? 10'000 : 1'000;
  TempDir data("temporal");
  Replica r(true, 2, {"--data-dir", data.File("data")});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  const pb::Command dataflow = WindowDataflow(window_ms);
  r.ctl->Send(dataflow);
  ASSERT_TRUE(AwaitUpper(r, "u53", 0)) << Tail(r.sup.Log());

  Written written;
  const auto start = std::chrono::steady_clock::now();
  std::thread writer(WriteEvery10ms, r.sup.controller_endpoint(), start + duration, &written);
  WindowReader reader(r, dataflow);
  std::mt19937_64 rng(20261207);
  std::size_t fed = 0;
  Time compacted = 0;
  std::int64_t most_in_window = 0;
  struct Sample {
    double seconds;
    std::int64_t in_window;
    ArrangementSize size;
  };
  std::vector<Sample> samples_taken;
  auto last_sample = start;
  bool ok = true;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(thorough ? 250 : 100));
    const bool writing = std::chrono::steady_clock::now() < start + duration;
    Time latest = 0;
    {
      std::lock_guard lock(written.mu);
      if (!written.failure.empty()) break;  // reported after the writer is joined
      for (; fed < written.updates.size(); ++fed) reader.Add(written.updates[fed]);
      if (fed > 0) latest = written.updates[fed - 1].time;
    }
    if (fed == 0) continue;
    // The latest acknowledged time, and a random readable one behind it.
    std::int64_t in_window = 0;
    ok = reader.ReadAndCompare("u53", latest, &in_window) && reader.ReadAndCompare("u52", latest);
    const Time two_windows = 2 * static_cast<Time>(window_ms);
    const Time earlier = std::uniform_int_distribution<Time>(
        std::max(compacted, latest > two_windows ? latest - two_windows : 0), latest)(rng);
    ok = ok && reader.ReadAndCompare(std::uniform_int_distribution<int>(0, 1)(rng) ? "u53" : "u52",
                                     earlier);
    if (!ok) break;
    most_in_window = std::max(most_in_window, in_window);
    // Once a second: compaction up to a second behind the latest read, and the arrangement's size.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_sample >= std::chrono::seconds(1)) {
      last_sample = now;
      compacted = latest > 1000 ? latest - 1000 : 0;
      r.ctl->Send(samples::AllowCompaction("u52", {compacted}));
      r.ctl->Send(samples::AllowCompaction("u53", {compacted}));
      samples_taken.push_back({std::chrono::duration<double>(now - start).count(), in_window,
                               SizeOf(r.sup.segment(), "u52")});
    }
    if (!writing) break;
  }
  writer.join();
  ASSERT_TRUE(ok);
  {
    std::lock_guard lock(written.mu);
    ASSERT_TRUE(written.failure.empty()) << written.failure << "\n" << Tail(r.sup.Log());
    for (; fed < written.updates.size(); ++fed) reader.Add(written.updates[fed]);
    ASSERT_GT(fed, 0u);
  }
  // No more writes: time alone (the table's upper follows the clock) takes every row out.
  const Time last_write = written.updates.back().time;
  std::int64_t after = -1;
  ASSERT_TRUE(reader.ReadAndCompare("u53", last_write + static_cast<Time>(window_ms) + 50, &after));
  EXPECT_EQ(after, 0) << "the window is empty one window after the last write";
  ASSERT_TRUE(reader.ReadAndCompare("u52", last_write + static_cast<Time>(window_ms) + 50));

  // The arrangement: bounded by the rows in the window (their insertions, and what compaction
  // has not merged away yet), not by the history (every row's insertion and retraction).
  std::ostringstream table;
  table << "temporal window: " << fed << " writes over " << duration.count() << " s, window "
        << window_ms << " ms, at most " << most_in_window << " rows in it, " << reader.reads()
        << " reads compared\n  seconds  in_window  u52_updates  u52_bytes  u52_batches\n";
  for (const Sample& s : samples_taken) {
    table << "  " << s.seconds << "  " << s.in_window << "  " << s.size.updates << "  "
          << s.size.bytes << "  " << s.size.batches << "\n";
  }
  std::cout << table.str();
  RecordProperty("writes", static_cast<int>(fed));
  RecordProperty("most_rows_in_window", static_cast<int>(most_in_window));
  const std::uint64_t bound = 5 * static_cast<std::uint64_t>(most_in_window) + 1000;
  for (const Sample& s : samples_taken) {
    if (s.seconds < 2.0 * static_cast<double>(window_ms) / 1000) continue;  // still filling
    EXPECT_LE(s.size.updates, bound) << "at " << s.seconds << " s:\n" << table.str();
  }
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(TemporalWindow, AClosedSourcesWindowIndexHoldsTheWholeFutureOfTheView) {
  Replica r(true, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  // Log source u1 [k INT64, ts TIMESTAMPTZ] → u2, its rows of the last 10 ms (u3 on k). Row 1
  // (ts 5 ms) arrives at 5, row 2 (ts 20 ms, in the future) at 7, row 3 (ts 8.5 ms) at 9 and goes
  // again at 12; then progress to 13, and the log closes.
  pb::Command c = samples::EmptyDataflow("closing window");
  auto* d = samples::Desc(c);
  LogFile log;
  pb::SourceImport source;
  source.set_id("u1");
  source.mutable_source()->mutable_log()->set_path(log.path());
  *source.mutable_schema() = samples::MakeSchema(
      {samples::MakeColumn("k", pb::INT64), samples::MakeColumn("ts", pb::TIMESTAMPTZ)});
  *d->add_source_imports() = std::move(source);
  *d->add_objects_to_build() = samples::Build(
      "u2", samples::MfpPlan(samples::GetPlan("u1"),
                             samples::Mfp({}, samples::SlidingWindow(1, 10'000), {})));
  *d->add_index_exports() = samples::Export("u3", "u2", {0});
  Evaluator reference(*d);
  const std::vector<reference::Update> updates = {
      {reference::FromProto(
           samples::MakeRow({samples::IntDatum(1), samples::TimestampTzDatum(5000)})),
       5, 1},
      {reference::FromProto(
           samples::MakeRow({samples::IntDatum(2), samples::TimestampTzDatum(20'000)})),
       7, 1},
      {reference::FromProto(
           samples::MakeRow({samples::IntDatum(3), samples::TimestampTzDatum(8500)})),
       9, 1},
      {reference::FromProto(
           samples::MakeRow({samples::IntDatum(3), samples::TimestampTzDatum(8500)})),
       12, -1},
  };
  std::string lines;
  for (const auto& u : updates) {
    lines += reference::LogUpdateLine(u.row, u.time, u.diff);
    reference.AddUpdate("u1", u);
  }
  log.Append(lines + "P 13\nC\n");
  r.ctl->Send(c);
  // The index closes: its upper is the empty frontier.
  ASSERT_TRUE(r.ctl
                  ->ReceiveUntil(
                      [](const pb::Response& x) {
                        return x.has_frontiers() && x.frontiers().id() == "u3" &&
                               x.frontiers().write().elements().empty();
                      },
                      std::chrono::seconds(10))
                  .has_value())
      << Tail(r.sup.Log());
  // Every time a row enters or leaves, and between: 1 in [5, 15), 2 in [20, 30), 3 in [9, 12).
  for (Time t : {4u, 5u, 8u, 9u, 11u, 12u, 14u, 15u, 19u, 20u, 29u, 30u, 1000u}) {
    const std::string uuid = "at" + std::to_string(t);
    const pb::Command peek = samples::PeekAt(uuid, "u3", t);
    r.ctl->Send(peek);
    auto answer = r.ctl->ReceiveUntil(
        [&](const pb::Response& x) {
          return x.has_peek_response() && x.peek_response().uuid() == uuid;
        },
        std::chrono::seconds(10));
    ASSERT_TRUE(answer) << "no answer at " << t << "\n" << Tail(r.sup.Log());
    const PeekAnswer expected = reference.Peek(peek.peek());
    EXPECT_TRUE(Agrees(expected, answer->peek_response()))
        << "at " << t << ": the runtime answered " << AnswerText(answer->peek_response())
        << ", the reference " << reference::ToString(expected);
  }
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

}  // namespace
}  // namespace tandem::testing
