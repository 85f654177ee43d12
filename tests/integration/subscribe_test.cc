// Subscribes through the real command path (issue 16, acceptance 2): the real supervisor and
// runtimes, a test controller, and the registry's view of the holds.
//   * a snapshot at as_of, then every change, in contiguous batches, up to up_to, then one End;
//   * exactly one End per subscribe under cancel / drop / up_to, also when they race;
//   * the hold: a live subscribe keeps its index exact from its progress on while the controller
//     allows compaction past it, and every end path releases it (the index compacts afterwards);
//   * as_of compacted, a data error, a closed index: each ends with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/time.h"
#include "log_source.h"
#include "replica.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "supervisor_harness.h"
#include "unit/protocol_samples.h"

namespace tandem::testing {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;
namespace pb = ::tandem::protocol;
namespace samples = ipc::samples;

std::string Mode(bool two_runtime) { return two_runtime ? "two-runtime" : "solo"; }

// What one subscribe sent, in order, until its End (or the wait ran out).
struct Stream {
  std::vector<pb::SubscribeBatch> batches;
  std::optional<pb::SubscribeEnd> end;
  std::string problems;  // broken stream rules, "" when none
};

bool IsFor(const Response& r, const std::string& uuid) {
  return (r.has_subscribe_batch() && r.subscribe_batch().uuid() == uuid) ||
         (r.has_subscribe_end() && r.subscribe_end().uuid() == uuid);
}

// Receives `uuid`'s answers until its End, checking the stream rules (DESIGN §10) on the way:
// contiguous batches starting at `first_lower`, times within [lower, upper), consolidated.
// `until_upper`: stop (without an End) once a batch reaches this upper.
Stream Collect(TestController& ctl, const std::string& uuid, Time first_lower,
               std::optional<std::uint64_t> until_upper = std::nullopt,
               std::chrono::milliseconds limit = 15s) {
  Stream s;
  std::uint64_t lower = first_lower;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!s.end) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto r = ctl.ReceiveUntil([&](const Response& x) { return IsFor(x, uuid); }, left);
    if (!r) break;
    if (r->has_subscribe_end()) {
      s.end = r->subscribe_end();
      break;
    }
    const pb::SubscribeBatch& b = r->subscribe_batch();
    if (b.lower() != lower) {
      s.problems += " batch lower " + std::to_string(b.lower()) + " != " + std::to_string(lower);
    }
    if (b.upper() < b.lower()) s.problems += " upper below lower";
    std::set<std::pair<std::string, std::uint64_t>> seen;
    for (const auto& u : b.updates()) {
      if (u.time() < b.lower() || (b.upper() > b.lower() && u.time() >= b.upper())) {
        s.problems += " update at " + std::to_string(u.time()) + " outside [" +
                      std::to_string(b.lower()) + ", " + std::to_string(b.upper()) + ")";
      }
      if (u.diff() == 0) s.problems += " a zero diff";
      if (!seen.insert({u.row().SerializeAsString(), u.time()}).second) {
        s.problems += " a row twice at one time";
      }
    }
    lower = b.upper();
    s.batches.push_back(b);
    if (until_upper && b.upper() >= *until_upper) break;
  }
  return s;
}

// Nothing more arrives for `uuid` within `quiet` (after its End).
bool Quiet(TestController& ctl, const std::string& uuid, std::chrono::milliseconds quiet = 300ms) {
  return !ctl.ReceiveUntil([&](const Response& x) { return IsFor(x, uuid); }, quiet).has_value();
}

// The contents at t: the sum of every update at a time <= t, as "k,v" → count (non-zero only).
std::map<std::string, std::int64_t> ContentsAt(const Stream& s, Time t) {
  std::map<std::string, std::int64_t> out;
  for (const auto& b : s.batches) {
    for (const auto& u : b.updates()) {
      if (u.time() > t) continue;
      std::string row;
      for (const auto& d : u.row().datums())
        row += (row.empty() ? "" : ",") + std::to_string(d.int64());
      if ((out[row] += u.diff()) == 0) out.erase(row);
    }
  }
  return out;
}

std::string Text(const std::map<std::string, std::int64_t>& m) {
  std::string out;
  for (const auto& [row, n] : m) out += " (" + row + ")x" + std::to_string(n);
  return out.empty() ? " (empty)" : out;
}

std::string Describe(const Stream& s) {
  std::string out;
  for (const auto& b : s.batches) {
    out += " [" + std::to_string(b.lower()) + "," + std::to_string(b.upper()) + ")#" +
           std::to_string(b.updates_size());
  }
  if (s.end)
    out += " End(" + pb::SubscribeEnd::Reason_Name(s.end->reason()) + ": " + s.end->detail() + ")";
  return out;
}

// The read holds every row's slot of `id` publishes, and its since (per row).
struct SlotHolds {
  std::uint64_t reader_holds = 0;
  Frontier since;
};
std::vector<SlotHolds> HoldsOf(const std::string& segment_name, const std::string& id) {
  std::vector<SlotHolds> out;
  auto segment = shm::Segment::Open(segment_name);
  if (!segment.ok()) return out;
  shm::Registry registry(segment->get());
  for (std::uint32_t row = 0; row < registry.workers(); ++row) {
    for (std::uint32_t i = 0; i < registry.slots_per_row(); ++i) {
      const shm::SlotData& slot = registry.slot(row, i);
      if (slot.state.load() != static_cast<std::uint32_t>(shm::SlotState::kLive)) continue;
      if (registry.KeyOf(slot).id.ToString() != id) continue;
      if (slot.flags.load() & shm::kSlotUnpublished) continue;
      out.push_back({slot.reader_holds.load(), Frontier::FromRaw(slot.since.load())});
    }
  }
  return out;
}
bool EveryRow(const Replica& r, const std::string& id, int workers,
              const std::function<bool(const SlotHolds&)>& ok) {
  return Eventually(
      [&] {
        const auto holds = HoldsOf(r.sup.segment(), id);
        return holds.size() == static_cast<std::size_t>(workers) &&
               std::all_of(holds.begin(), holds.end(), ok);
      },
      10s);
}

constexpr int kWorkers = 2;

// u1 → u2 (k, v) keyed by k, with rows at times 0..3 and the log's upper at 4.
void StartU2(Replica& r, LogFile& log, Time as_of = 0) {
  log.Append("U 0 1 1 10\nU 0 1 2 20\nP 1\nU 1 -1 1 10\nU 1 1 1 11\nP 2\nU 3 1 3 30\nP 4\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path(), as_of));
}

void SnapshotThenChanges(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  StartU2(r, log);
  r.ctl->Send(samples::Subscribe("s1", "u2", 0, true, 4));
  const Stream s = Collect(*r.ctl, "s1", 0);
  ASSERT_TRUE(s.end) << Describe(s) << r.sup.Log();
  EXPECT_EQ(s.end->reason(), pb::SubscribeEnd::UP_TO) << Describe(s);
  EXPECT_EQ(s.problems, "") << Describe(s);
  ASSERT_FALSE(s.batches.empty());
  EXPECT_EQ(s.batches.back().upper(), 4u) << Describe(s);
  // The snapshot is the first batch, [0, 1), at time 0.
  EXPECT_EQ(s.batches.front().lower(), 0u);
  EXPECT_EQ(Text(ContentsAt(s, 0)), " (1,10)x1 (2,20)x1");
  EXPECT_EQ(Text(ContentsAt(s, 1)), " (1,11)x1 (2,20)x1");
  EXPECT_EQ(Text(ContentsAt(s, 2)), " (1,11)x1 (2,20)x1");
  EXPECT_EQ(Text(ContentsAt(s, 3)), " (1,11)x1 (2,20)x1 (3,30)x1");
  EXPECT_TRUE(Quiet(*r.ctl, "s1")) << "something after the End";

  // Without a snapshot: only the changes after as_of, from as_of + 1.
  r.ctl->Send(samples::Subscribe("s2", "u2", 1, false, 4));
  const Stream c = Collect(*r.ctl, "s2", 2);
  ASSERT_TRUE(c.end) << Describe(c);
  EXPECT_EQ(c.end->reason(), pb::SubscribeEnd::UP_TO);
  EXPECT_EQ(c.problems, "") << Describe(c);
  EXPECT_EQ(Text(ContentsAt(c, 3)), " (3,30)x1") << Describe(c);
  // Every end released its holds.
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const SlotHolds& h) { return h.reader_holds == 0; }));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Subscribe, ASnapshotThenEveryChangeUpToUpToThenOneEndTwoRuntime) { SnapshotThenChanges(true); }
TEST(Subscribe, ASnapshotThenEveryChangeUpToUpToThenOneEndSolo) { SnapshotThenChanges(false); }

void CancelAndDrop(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  StartU2(r, log);
  // A live subscribe holds the index in every row; canceling ends it once and releases the hold.
  r.ctl->Send(samples::Subscribe("c1", "u2", 0));
  Stream s = Collect(*r.ctl, "c1", 0, 4);
  ASSERT_FALSE(s.batches.empty()) << Describe(s) << r.sup.Log();
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const SlotHolds& h) { return h.reader_holds == 1; }));
  r.ctl->Send(samples::CancelSubscribe("c1"));
  s = Collect(*r.ctl, "c1", s.batches.back().upper());
  ASSERT_TRUE(s.end) << Describe(s);
  EXPECT_EQ(s.end->reason(), pb::SubscribeEnd::CANCELED);
  r.ctl->Send(samples::CancelSubscribe("c1"));  // ended already: nothing
  EXPECT_TRUE(Quiet(*r.ctl, "c1"));
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const SlotHolds& h) { return h.reader_holds == 0; }));

  // Dropping the index ends its subscribes DROPPED, once each.
  r.ctl->Send(samples::Subscribe("d1", "u2", 1, true));
  r.ctl->Send(samples::Subscribe("d2", "u2", 2, false));
  ASSERT_FALSE(Collect(*r.ctl, "d1", 1, 4).batches.empty());
  r.ctl->Send(samples::Drop("u2"));
  std::map<std::string, pb::SubscribeEnd> ends;
  r.ctl->ReceiveUntil(
      [&](const Response& x) {
        if (x.has_subscribe_end()) ends[x.subscribe_end().uuid()] = x.subscribe_end();
        return ends.size() == 2;
      },
      10s);
  ASSERT_EQ(ends.size(), 2u) << r.sup.Log();
  for (const char* uuid : {"d1", "d2"}) {
    EXPECT_EQ(ends[uuid].reason(), pb::SubscribeEnd::DROPPED) << uuid;
    EXPECT_TRUE(Quiet(*r.ctl, uuid)) << uuid;
  }
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Subscribe, CancelAndDropEachEndItOnceAndReleaseTheHoldTwoRuntime) { CancelAndDrop(true); }
TEST(Subscribe, CancelAndDropEachEndItOnceAndReleaseTheHoldSolo) { CancelAndDrop(false); }

// Many subscribes whose up_to, cancel and the index's drop all land at about the same time: each
// gets exactly one End.
TEST(Subscribe, CancelDropAndUpToRacingGiveExactlyOneEndEach) {
  Replica r(true, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nP 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  constexpr int kSubs = 24;
  for (int i = 0; i < kSubs; ++i) {
    r.ctl->Send(samples::Subscribe("r" + std::to_string(i), "u2", 0, i % 2 == 0,
                                   i % 3 == 0 ? std::optional<std::uint64_t>(2) : std::nullopt));
  }
  // The log moves past every up_to while cancels and the drop are on their way.
  log.Append("U 1 1 2 20\nP 3\n");
  for (int i = 0; i < kSubs; i += 2) r.ctl->Send(samples::CancelSubscribe("r" + std::to_string(i)));
  r.ctl->Send(samples::Drop("u2"));
  std::map<std::string, int> ends;
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  while (ends.size() < static_cast<std::size_t>(kSubs) &&
         std::chrono::steady_clock::now() < deadline) {
    auto x = r.ctl->ReceiveUntil([](const Response& y) { return y.has_subscribe_end(); }, 1s);
    if (x) ++ends[x->subscribe_end().uuid()];
  }
  // Anything late would be a second End.
  r.ctl->ReceiveUntil(
      [&](const Response& y) {
        if (y.has_subscribe_end()) ++ends[y.subscribe_end().uuid()];
        return false;
      },
      500ms);
  ASSERT_EQ(ends.size(), static_cast<std::size_t>(kSubs)) << r.sup.Log();
  for (const auto& [uuid, n] : ends) EXPECT_EQ(n, 1) << uuid;
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

// While a subscribe lives, AllowCompaction past its progress leaves every later time exact; once
// it ends, the index compacts to the allowed frontier.
TEST(Subscribe, ALiveSubscribeHoldsItsIndexExactAndItsEndLetsItCompact) {
  Replica r(true, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  StartU2(r, log);
  r.ctl->Send(samples::Subscribe("h1", "u2", 0, true));
  Stream first = Collect(*r.ctl, "h1", 0, 4);
  ASSERT_FALSE(first.batches.empty()) << Describe(first);
  r.ctl->Send(samples::AllowCompaction("u2", {20}));
  log.Append("U 5 1 5 50\nU 7 1 7 70\nP 9\n");
  const Stream later = Collect(*r.ctl, "h1", first.batches.back().upper(), 9);
  EXPECT_EQ(later.problems, "") << Describe(later);
  std::set<std::uint64_t> times;
  for (const auto& b : later.batches) {
    for (const auto& u : b.updates()) times.insert(u.time());
  }
  EXPECT_EQ(times, (std::set<std::uint64_t>{5, 7})) << "times stay exact under the hold";
  // Since never passes what the subscribe has yet to read (its progress - 1).
  const auto holds = HoldsOf(r.sup.segment(), "u2");
  for (const auto& h : holds) EXPECT_TRUE(h.since.LessEqual(8)) << h.since.ToString();
  r.ctl->Send(samples::CancelSubscribe("h1"));
  ASSERT_TRUE(Collect(*r.ctl, "h1", later.batches.empty() ? 4 : later.batches.back().upper()).end);
  // Released: since follows the index's upper now (the allowed frontier is past it).
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const SlotHolds& h) {
    return h.reader_holds == 0 && !h.since.LessEqual(8);
  })) << r.sup.Log();
}

TEST(Subscribe, AnAsOfBeforeTheCompactionFrontierEndsWithAnError) {
  Replica r(true, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  StartU2(r, log);
  r.ctl->Send(samples::AllowCompaction("u2", {3}));
  r.ctl->Send(samples::Subscribe("e1", "u2", 1, true));
  const Stream s = Collect(*r.ctl, "e1", 1);
  ASSERT_TRUE(s.end) << Describe(s);
  EXPECT_EQ(s.end->reason(), pb::SubscribeEnd::ERROR);
  EXPECT_NE(s.end->detail().find("compacted"), std::string::npos) << s.end->detail();
  EXPECT_TRUE(s.batches.empty()) << Describe(s);
  EXPECT_TRUE(Quiet(*r.ctl, "e1"));
}

TEST(Subscribe, ADataErrorInTheIndexEndsItWithTheError) {
  Replica r(true, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("P 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path(), 0, 0));  // v / 0: every row an error
  r.ctl->Send(samples::Subscribe("x1", "u2", 0, true));
  Stream s = Collect(*r.ctl, "x1", 0, 1);
  ASSERT_FALSE(s.batches.empty()) << Describe(s);
  log.Append("U 2 1 1 10\nP 3\n");
  s = Collect(*r.ctl, "x1", s.batches.back().upper());
  ASSERT_TRUE(s.end) << Describe(s);
  EXPECT_EQ(s.end->reason(), pb::SubscribeEnd::ERROR);
  EXPECT_NE(s.end->detail().find("division by zero"), std::string::npos) << s.end->detail();
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const SlotHolds& h) { return h.reader_holds == 0; }));
}

TEST(Subscribe, AClosedIndexEndsItClosedAfterItsLastChange) {
  Replica r(false, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nP 1\nU 2 1 2 20\nC\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  r.ctl->Send(samples::Subscribe("z1", "u2", 0, true));
  const Stream s = Collect(*r.ctl, "z1", 0);
  ASSERT_TRUE(s.end) << Describe(s);
  EXPECT_EQ(s.end->reason(), pb::SubscribeEnd::CLOSED) << Describe(s);
  ASSERT_FALSE(s.batches.empty());
  EXPECT_EQ(s.batches.back().upper(), Frontier::Empty().raw());
  EXPECT_EQ(Text(ContentsAt(s, 5)), " (1,10)x1 (2,20)x1");
}

}  // namespace
}  // namespace tandem::testing
