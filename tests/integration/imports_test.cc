// Index imports and one-shot reads through the real command path (issue 13, acceptance 2): the
// real supervisor and runtime, driven by a test controller, observed through the answers and
// through the registry (the holds each slot publishes: shm/layout.h SlotData import_hold,
// importers, reader_holds, since).
//   * a maintained import holds the imported index's since at the importer's progress and
//     releases it when the importer is dropped;
//   * a one-shot read at as_of stays exact while the controller's AllowCompaction of the imported
//     index moves past as_of before the one-shot is dropped;
//   * dropping an imported index is refused, naming the importer, until the importer is dropped;
//   * a one-shot at a compacted as_of answers Error ("compacted");
//   * a waiting peek holds its time: AllowCompaction past it does not make it an Error;
//   * interactive rendering a one-shot while maintenance is killed: shared fate.
#include <gtest/gtest.h>

#include <signal.h>

#include <set>
#include <string>
#include <vector>

#include "base/time.h"
#include "log_source.h"
#include "replica.h"
#include "shm/layout.h"
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

std::optional<Response> AwaitPeek(TestController& ctl, const std::string& uuid,
                                  std::chrono::milliseconds limit = 10s) {
  return ctl.ReceiveUntil(
      [&](const Response& r) { return r.has_peek_response() && r.peek_response().uuid() == uuid; },
      limit);
}

// Waits for a write frontier of `id` at or beyond `upper` (UINT64_MAX: the empty frontier).
bool AwaitWrite(TestController& ctl, const std::string& id, std::uint64_t upper,
                std::chrono::milliseconds limit = 10s) {
  return ctl
      .ReceiveUntil(
          [&](const Response& r) {
            if (!r.has_frontiers() || r.frontiers().id() != id) return false;
            const auto& w = r.frontiers().write();
            return w.elements().empty() || w.elements(0) >= upper;
          },
          limit)
      .has_value();
}
bool AwaitDropped(TestController& ctl, const std::string& id) {
  return ctl
      .ReceiveUntil(
          [&](const Response& r) {
            return r.has_frontiers() && r.frontiers().id() == id &&
                   r.frontiers().write().elements().empty();
          },
          10s)
      .has_value();
}

std::optional<Response> AwaitCommandError(TestController& ctl,
                                          std::chrono::milliseconds limit = 5s) {
  return ctl.ReceiveUntil([](const Response& r) { return r.has_command_error(); }, limit);
}

// A peek's rows as "k,v,xN" (int64 datums), or "Error(...)".
std::multiset<std::string> RowsOf(const Response& r) {
  std::multiset<std::string> out;
  if (r.peek_response().has_error()) {
    out.insert("Error(" + r.peek_response().error() + ")");
    return out;
  }
  for (const auto& rc : r.peek_response().rows().rows()) {
    std::string s;
    for (const auto& d : rc.row().datums()) s += std::to_string(d.int64()) + ",";
    out.insert(s + "x" + std::to_string(rc.count()));
  }
  return out;
}

// The peek `uuid` of `id` at `t` answers these rows.
std::multiset<std::string> PeekRows(TestController& ctl, const std::string& uuid,
                                    const std::string& id, Time t) {
  ctl.Send(samples::PeekAt(uuid, id, t));
  auto a = AwaitPeek(ctl, uuid);
  if (!a) return {"(no answer)"};
  return RowsOf(*a);
}

// ---- the dataflows ----

// u1 (k INT64, v INT64): the log source of LogIndexDataflow("u1", "u2", ...); u2 is on it, key k.
pb::Schema U1Schema() {
  return samples::MakeSchema(
      {samples::MakeColumn("k", pb::INT64), samples::MakeColumn("v", pb::INT64)});
}
pb::IndexImport ImportOfU2() { return samples::Import("u2", "u1", U1Schema(), {0}); }

// A MAINTAINED dataflow from `as_of` importing u2: u3 = Reduce(u2) by k: count, sum(v); u4 its
// index by k.
Command Importer(Time as_of) {
  Command c = samples::EmptyDataflow("importer of u2", as_of);
  auto* d = samples::Desc(c);
  *d->add_index_imports() = ImportOfU2();
  *d->add_objects_to_build() = samples::Build(
      "u3", samples::ReducePlan(samples::GetPlan("u2"), {0}, {{pb::COUNT, 0}, {pb::SUM, 1}}));
  *d->add_index_exports() = samples::Export("u4", "u3", {0});
  return c;
}

// A ONE_SHOT_READ of u2 at `as_of`: t<n> = u1 itself (as imported) by k; t<n+2> = index of
// t<n+1> = Reduce(u1): count, sum(v).
Command OneShotOfU2(Time as_of, int n = 1) {
  const auto t = [n](int i) { return "t" + std::to_string(n + i); };
  return samples::OneShot(
      as_of, {ImportOfU2()},
      {samples::Build(
          t(1), samples::ReducePlan(samples::GetPlan("u1"), {}, {{pb::COUNT, 0}, {pb::SUM, 1}}))},
      {samples::Export(t(0), "u1", {0}), samples::Export(t(2), t(1), {0})});
}

// ---- the registry's view ----

// What the slots of one index publish, in every row.
struct Holds {
  Frontier since, own_frontier, peer_hold, import_hold;
  std::uint64_t importers = 0, reader_holds = 0;
};

template <typename S>
concept PublishesImportHolds = requires(const S& s) {
  s.import_hold.load();
  s.importers.load();
  s.reader_holds.load();
};

// Whether this build's segment layout publishes the import holds (the issue 13 contract adds
// them to SlotData); the tests that read them fail until it does.
constexpr bool kLayoutHasImportHolds = PublishesImportHolds<shm::SlotData>;

// The live slots of `id` in segment `name`, one per row (fewer if a row has none yet).
template <typename S = shm::SlotData>
std::vector<Holds> HoldsOf(const std::string& name, const std::string& id) {
  std::vector<Holds> out;
  if constexpr (PublishesImportHolds<S>) {
    auto segment = shm::Segment::Open(name);
    if (!segment.ok()) return out;
    shm::Registry registry(segment->get());
    for (std::uint32_t row = 0; row < registry.workers(); ++row) {
      for (std::uint32_t i = 0; i < registry.slots_per_row(); ++i) {
        const S& slot = registry.slot(row, i);
        if (slot.state.load() != static_cast<std::uint32_t>(shm::SlotState::kLive)) continue;
        if (registry.KeyOf(slot).id.ToString() != id) continue;
        if (slot.flags.load() & shm::kSlotUnpublished) continue;
        out.push_back(
            {Frontier::FromRaw(slot.since.load()), Frontier::FromRaw(slot.own_frontier.load()),
             Frontier::FromRaw(slot.peer_hold.load()), Frontier::FromRaw(slot.import_hold.load()),
             slot.importers.load(), slot.reader_holds.load()});
      }
    }
  }
  return out;
}

std::string HoldsText(const std::vector<Holds>& holds) {
  std::string out;
  for (const auto& h : holds) {
    out += " [since " + h.since.ToString() + ", own " + h.own_frontier.ToString() + ", peer " +
           h.peer_hold.ToString() + ", import_hold " + h.import_hold.ToString() + ", importers " +
           std::to_string(h.importers) + ", reader_holds " + std::to_string(h.reader_holds) + "]";
  }
  return out.empty() ? " (no slot)" : out;
}

// Waits until every row's slot of `id` satisfies `ok` (and there is one per worker).
bool EveryRow(const Replica& r, const std::string& id, int workers,
              const std::function<bool(const Holds&)>& ok, std::chrono::milliseconds limit = 10s) {
  if (!kLayoutHasImportHolds) {
    ADD_FAILURE() << "shm::SlotData has no import_hold / importers / reader_holds yet";
    return false;
  }
  return Eventually(
      [&] {
        const auto holds = HoldsOf(r.sup.segment(), id);
        return holds.size() == static_cast<std::size_t>(workers) &&
               std::all_of(holds.begin(), holds.end(), ok);
      },
      limit);
}

constexpr int kWorkers = 2;

// ---- (a) a maintained import holds since at the importer's progress ----

void MaintainedImportHoldsSince(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 1 1 2 20\nU 2 1 1 11\nP 3\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 3)) << r.sup.Log();
  r.ctl->Send(Importer(1));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u4", 3)) << r.sup.Log();
  // One local importer, holding u2 no later than its progress (u4's upper, 3) nor before its
  // as_of.
  const auto held_at = [](Time lo, Time hi) {
    return [lo, hi](const Holds& h) {
      return h.importers == 1 && !h.import_hold.empty() && h.import_hold.time() >= lo &&
             h.import_hold.time() <= hi;
    };
  };
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, held_at(1, 3)))
      << HoldsText(HoldsOf(r.sup.segment(), "u2"));

  // The controller allows compaction far ahead: since stops at the importer's hold.
  r.ctl->Send(samples::AllowCompaction("u2", {100}));
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers,
                       [](const Holds& h) {
                         return h.own_frontier == Frontier::At(100) && !h.since.empty() &&
                                h.since.time() <= 3 && h.since == h.import_hold;
                       }))
      << "since must be min(own 100, peer hold, import_hold <= 3):"
      << HoldsText(HoldsOf(r.sup.segment(), "u2"));

  // More data: the importer progresses and its hold (and since) follow it, never past it.
  log.Append("U 3 1 3 30\nU 4 -1 2 20\nP 6\n");
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u4", 6)) << r.sup.Log();
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers,
                       [](const Holds& h) {
                         return h.importers == 1 && !h.since.empty() && h.since.time() > 3 &&
                                h.since.time() <= 6 && h.since == h.import_hold;
                       }))
      << "the hold follows the importer's progress:" << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  // The importer is exact at every time from its as_of.
  EXPECT_EQ(PeekRows(*r.ctl, "a1", "u4", 1),
            (std::multiset<std::string>{"1,1,10,x1", "2,1,20,x1"}));
  EXPECT_EQ(PeekRows(*r.ctl, "a5", "u4", 5),
            (std::multiset<std::string>{"1,2,21,x1", "3,1,30,x1"}));

  // Dropping the importer releases its hold: since goes to the controller's frontier.
  r.ctl->Send(samples::Drop("u4"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "u4")) << r.sup.Log();
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const Holds& h) {
    return h.importers == 0 && h.import_hold.empty() && h.since == Frontier::At(100);
  })) << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, MaintainedImportHoldsSinceAtItsProgressUntilDroppedTwoRuntime) {
  MaintainedImportHoldsSince(true);
}
TEST(Imports, MaintainedImportHoldsSinceAtItsProgressUntilDroppedSolo) {
  MaintainedImportHoldsSince(false);
}

// ---- (b) a one-shot stays exact while compaction moves past its as_of ----

void OneShotStaysExactPastCompaction(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 1 1 2 20\nU 2 1 3 30\nU 3 -1 1 10\nU 4 1 4 40\nP 5\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 5)) << r.sup.Log();
  r.ctl->Send(OneShotOfU2(2));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t1", 3)) << "t1 reports write [as_of + 1]\n" << r.sup.Log();
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t3", 3)) << r.sup.Log();
  // The controller allows compaction of u2 past 2, and more data consolidates what was at 2.
  r.ctl->Send(samples::AllowCompaction("u2", {4}));
  log.Append("U 5 -1 2 20\nU 5 -1 3 30\nU 6 1 2 20\nP 8\n");
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 8)) << r.sup.Log();
  // u2 stays readable at 2 while the one-shot lives: a reader hold keeps since there.
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const Holds& h) {
    return h.own_frontier == Frontier::At(4) && h.reader_holds >= 1 && !h.since.empty() &&
           h.since.time() <= 2;
  })) << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  EXPECT_EQ(PeekRows(*r.ctl, "b1", "t1", 2),
            (std::multiset<std::string>{"1,10,x1", "2,20,x1", "3,30,x1"}));
  EXPECT_EQ(PeekRows(*r.ctl, "b3", "t3", 2), (std::multiset<std::string>{"3,60,x1"}));
  // Readable only at its as_of: a peek at another time is refused.
  r.ctl->Send(samples::PeekAt("b-other", "t1", 3));
  auto refused = AwaitCommandError(*r.ctl);
  ASSERT_TRUE(refused) << "a peek of a one-shot result at another time is refused";
  EXPECT_NE(refused->command_error().why().find("one-shot"), std::string::npos)
      << refused->command_error().why();
  // A non-empty AllowCompaction of the result changes nothing; the empty one drops it.
  r.ctl->Send(samples::AllowCompaction("t1", {3}));
  EXPECT_EQ(PeekRows(*r.ctl, "b1-again", "t1", 2),
            (std::multiset<std::string>{"1,10,x1", "2,20,x1", "3,30,x1"}));
  r.ctl->Send(samples::Drop("t1"));
  r.ctl->Send(samples::Drop("t3"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "t1")) << r.sup.Log();
  ASSERT_TRUE(AwaitDropped(*r.ctl, "t3")) << r.sup.Log();
  // The hold is gone with it: u2 compacts to the controller's frontier.
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const Holds& h) {
    return h.reader_holds == 0 && h.since == Frontier::At(4);
  })) << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotStaysExactWhileCompactionMovesPastItsAsOfTwoRuntime) {
  OneShotStaysExactPastCompaction(true);
}
TEST(Imports, OneShotStaysExactWhileCompactionMovesPastItsAsOfSolo) {
  OneShotStaysExactPastCompaction(false);
}

// ---- (c) a drop of an imported index is refused until its importers are gone ----

void ImportedIndexCannotBeDropped(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 1 1 2 20\nP 3\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 3)) << r.sup.Log();
  r.ctl->Send(Importer(1));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u4", 3)) << r.sup.Log();
  r.ctl->Send(OneShotOfU2(2));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t1", 3)) << r.sup.Log();

  r.ctl->Send(samples::Drop("u2"));
  auto refused = AwaitCommandError(*r.ctl);
  ASSERT_TRUE(refused) << "the drop of an imported index is refused\n" << r.sup.Log();
  const std::string why = refused->command_error().why();
  EXPECT_NE(why.find("u2"), std::string::npos) << why;
  EXPECT_NE(why.find("u4"), std::string::npos) << "names the maintained importer: " << why;
  EXPECT_NE(why.find("t1"), std::string::npos) << "names the one-shot importer: " << why;
  // Nothing changed: u2, its importer and the one-shot still answer.
  EXPECT_EQ(PeekRows(*r.ctl, "c2", "u2", 2), (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));
  EXPECT_EQ(PeekRows(*r.ctl, "c4", "u4", 2),
            (std::multiset<std::string>{"1,1,10,x1", "2,1,20,x1"}));
  EXPECT_EQ(PeekRows(*r.ctl, "c1", "t1", 2), (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));

  // Once one importer is gone the other still blocks it; once both are, the drop is accepted.
  r.ctl->Send(samples::Drop("t1"));
  r.ctl->Send(samples::Drop("t3"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "t3")) << r.sup.Log();
  r.ctl->Send(samples::Drop("u2"));
  refused = AwaitCommandError(*r.ctl);
  ASSERT_TRUE(refused) << "u4 still imports u2";
  EXPECT_NE(refused->command_error().why().find("u4"), std::string::npos)
      << refused->command_error().why();
  r.ctl->Send(samples::Drop("u4"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "u4")) << r.sup.Log();
  r.ctl->Send(samples::Drop("u2"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "u2")) << "the drop is accepted now\n" << r.sup.Log();
  EXPECT_TRUE(Eventually([&] { return LiveSlots(r.sup.segment()).empty(); }, 10s))
      << LiveSlots(r.sup.segment());
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, DroppingAnImportedIndexIsRefusedUntilItsImportersAreDroppedTwoRuntime) {
  ImportedIndexCannotBeDropped(true);
}
TEST(Imports, DroppingAnImportedIndexIsRefusedUntilItsImportersAreDroppedSolo) {
  ImportedIndexCannotBeDropped(false);
}

// ---- (d) a one-shot at a compacted as_of answers Error ----

void OneShotAtACompactedAsOf(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 1 1 2 20\nU 3 1 3 30\nP 5\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 5)) << r.sup.Log();
  r.ctl->Send(samples::AllowCompaction("u2", {4}));
  // A maintained importer there would be wrong forever: refused.
  r.ctl->Send(Importer(2));
  auto refused = AwaitCommandError(*r.ctl);
  ASSERT_TRUE(refused) << "a maintained import below the allowed compaction is refused";
  EXPECT_NE(refused->command_error().why().find("u2"), std::string::npos)
      << refused->command_error().why();
  // A one-shot there is accepted, reports its result's frontier, and answers Error.
  r.ctl->Send(OneShotOfU2(2));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t1", 3)) << r.sup.Log();
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t3", 3)) << r.sup.Log();
  for (const char* id : {"t1", "t3"}) {
    r.ctl->Send(samples::PeekAt(std::string("d-") + id, id, 2));
    auto a = AwaitPeek(*r.ctl, std::string("d-") + id);
    ASSERT_TRUE(a) << r.sup.Log();
    ASSERT_TRUE(a->peek_response().has_error()) << "never a wrong answer";
    const std::string& error = a->peek_response().error();
    EXPECT_NE(error.find("compacted"), std::string::npos) << error;
    EXPECT_NE(error.find("u2"), std::string::npos) << "names the index: " << error;
  }
  // Dropped like any: and a one-shot at a readable time of the same index is exact.
  r.ctl->Send(samples::Drop("t1"));
  r.ctl->Send(samples::Drop("t3"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "t3")) << r.sup.Log();
  r.ctl->Send(OneShotOfU2(4, 5));
  EXPECT_EQ(PeekRows(*r.ctl, "d-t5", "t5", 4),
            (std::multiset<std::string>{"1,10,x1", "2,20,x1", "3,30,x1"}));
  r.ctl->Send(samples::Drop("t5"));
  r.ctl->Send(samples::Drop("t7"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "t7")) << r.sup.Log();
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

// "Compacted" is decided against the current hold, not the controller's frontier alone (DESIGN
// §8: the peer hold is the minimum of the controller's frontier and every live one-shot's as_of,
// and "a new import below the current hold is not accepted"): while a one-shot at 5 holds u2, a
// one-shot at 7 is accepted after AllowCompaction to 9 — and once the first is dropped, the second
// alone keeps u2 readable at 7 and answers exactly. (The issue 13 contract note says "below the
// compaction frontier the controller allowed", which would make it an Error; the runtime and
// workers/README.md follow DESIGN.)
// The rule is the controller's frontier on the stream, not the hold another reader keeps lower:
// every worker decides alike for its row (a hold that other reads release row by row could make
// rows disagree, and the one-shot would never complete).
void OneShotBelowTheAllowedFrontierWhileAnotherHolds(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 4 1 2 20\nU 6 1 3 30\nU 8 -1 1 10\nP 10\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 10)) << r.sup.Log();
  r.ctl->Send(OneShotOfU2(5, 1));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t1", 6)) << r.sup.Log();
  r.ctl->Send(samples::AllowCompaction("u2", {9}));
  r.ctl->Send(OneShotOfU2(7, 4));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t4", 8)) << r.sup.Log();
  EXPECT_EQ(PeekRows(*r.ctl, "held", "t1", 5), (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));
  r.ctl->Send(samples::PeekAt("late", "t4", 7));
  const auto late = AwaitPeek(*r.ctl, "late");
  ASSERT_TRUE(late) << r.sup.Log();
  ASSERT_TRUE(late->peek_response().has_error()) << "never a wrong answer";
  EXPECT_NE(late->peek_response().error().find("compacted"), std::string::npos)
      << late->peek_response().error();
  EXPECT_TRUE(
      EveryRow(r, "u2", kWorkers,
               [](const Holds& h) { return h.reader_holds == 1 && h.since == Frontier::At(5); }))
      << "only t1 holds u2\n"
      << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  r.ctl->Send(samples::Drop("t1"));
  r.ctl->Send(samples::Drop("t3"));
  r.ctl->Send(samples::Drop("t4"));
  r.ctl->Send(samples::Drop("t6"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "t6")) << r.sup.Log();
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const Holds& h) {
    return h.reader_holds == 0 && h.since == Frontier::At(9);
  })) << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotBelowTheAllowedFrontierIsCompactedEvenWhileAnotherOneShotHoldsTwoRuntime) {
  OneShotBelowTheAllowedFrontierWhileAnotherHolds(true);
}
TEST(Imports, OneShotBelowTheAllowedFrontierIsCompactedEvenWhileAnotherOneShotHoldsSolo) {
  OneShotBelowTheAllowedFrontierWhileAnotherHolds(false);
}

TEST(Imports, OneShotAtACompactedAsOfAnswersErrorTwoRuntime) { OneShotAtACompactedAsOf(true); }
TEST(Imports, OneShotAtACompactedAsOfAnswersErrorSolo) { OneShotAtACompactedAsOf(false); }

// ---- (e) a waiting peek holds its time ----

// The issue's sequence: a log-source index with upper 3, a Peek at 5 (it waits), then
// AllowCompaction to 8, then data up to 10: the peek answers the exact rows at 5.
void WaitingPeekHoldsItsTime(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 1 1 2 20\nU 2 1 3 30\nP 3\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 3)) << r.sup.Log();
  r.ctl->Send(samples::PeekAt("wait", "u2", 5));
  r.ctl->Send(samples::AllowCompaction("u2", {8}));
  // While it waits, the peek is a reader hold: since stays at or below 5 although the
  // controller allowed 8 (and maintenance applied it).
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const Holds& h) {
    return h.own_frontier == Frontier::At(8) && h.reader_holds >= 1 && !h.since.empty() &&
           h.since.time() <= 5;
  })) << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  log.Append("U 3 1 4 40\nU 4 -1 1 10\nU 5 1 5 50\nU 6 1 6 60\nU 7 -1 2 20\nU 9 1 9 90\nP 10\n");
  auto a = AwaitPeek(*r.ctl, "wait");
  ASSERT_TRUE(a) << r.sup.Log();
  EXPECT_EQ(RowsOf(*a), (std::multiset<std::string>{"2,20,x1", "3,30,x1", "4,40,x1", "5,50,x1"}));
  // Answered: the hold is released and since goes to 8.
  EXPECT_TRUE(EveryRow(r, "u2", kWorkers, [](const Holds& h) {
    return h.reader_holds == 0 && h.since == Frontier::At(8);
  })) << HoldsText(HoldsOf(r.sup.segment(), "u2"));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, AWaitingPeekHoldsItsTimeAgainstCompactionTwoRuntime) {
  WaitingPeekHoldsItsTime(true);
}
TEST(Imports, AWaitingPeekHoldsItsTimeAgainstCompactionSolo) { WaitingPeekHoldsItsTime(false); }

// ---- counts beyond int64 ----

// A one-shot over an index whose consolidated count of a row does not fit int64 (the arrangement
// keeps it as several int64 parts): the result is computed (its exports report write
// [as_of + 1]) and a peek answers Error for that row's count, as a peek of the index itself does.
void OneShotOverCountsBeyondInt64(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 4611686018427701966 1 10\nU 0 4611686018427701966 1 10\nU 0 1 2 20\nP 2\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 2)) << r.sup.Log();
  const auto direct = PeekRows(*r.ctl, "direct", "u2", 1);
  ASSERT_EQ(direct.size(), 1u);
  EXPECT_NE(direct.begin()->find("multiplicity overflow"), std::string::npos) << *direct.begin();
  r.ctl->Send(OneShotOfU2(1, 1));
  EXPECT_TRUE(AwaitWrite(*r.ctl, "t1", 2)) << "t1 is computed\n" << r.sup.Log();
  EXPECT_TRUE(AwaitWrite(*r.ctl, "t3", 2)) << "t3 is computed\n" << r.sup.Log();
  for (const char* id : {"t1", "t3"}) {
    r.ctl->Send(samples::PeekAt(std::string("p-") + id, id, 1));
    auto a = AwaitPeek(*r.ctl, std::string("p-") + id);
    ASSERT_TRUE(a) << id << " answers\n" << r.sup.Log();
    EXPECT_TRUE(a->peek_response().has_error()) << id << ": " << *RowsOf(*a).begin();
  }
  EXPECT_EQ(PeekRows(*r.ctl, "p-key", "t1", 1).size(), 1u);
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotOverCountsBeyondInt64IsComputedTwoRuntime) {
  OneShotOverCountsBeyondInt64(true);
}
TEST(Imports, OneShotOverCountsBeyondInt64IsComputedSolo) { OneShotOverCountsBeyondInt64(false); }

// ---- one-shots waiting for their data ----

// One-shots created just as the data they read arrives (each at the time the log is about to
// reach: its import is not yet readable at as_of, or just became so) are each computed once it
// is, and answer exactly: none waits forever for a wake-up it missed.
void OneShotsRacingTheirData(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 0 0\nP 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 1)) << r.sup.Log();
  constexpr int kRounds = 60;
  for (int i = 1; i <= kRounds; ++i) {
    log.Append("U " + std::to_string(i) + " 1 " + std::to_string(i) + " " + std::to_string(i) +
               "\nP " + std::to_string(i + 1) + "\n");
    r.ctl->Send(OneShotOfU2(static_cast<Time>(i), 3 * i));
    if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(i % 5));
  }
  std::set<int> missing;
  for (int i = 1; i <= kRounds; ++i) missing.insert(i);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!missing.empty() && std::chrono::steady_clock::now() < deadline) {
    auto resp = r.ctl->Receive(100ms);
    if (!resp || !resp->has_frontiers()) continue;
    const std::string& id = resp->frontiers().id();
    if (id[0] != 't' || resp->frontiers().write().elements().empty()) continue;
    const int n = std::stoi(id.substr(1));
    if (n % 3 == 2) missing.erase(n / 3);  // t<3i+2>: the sum's index
  }
  std::string ids;
  for (int i : missing) ids += " t" + std::to_string(3 * i + 2) + "@" + std::to_string(i);
  EXPECT_TRUE(missing.empty()) << "one-shots never computed:" << ids << "\n" << r.sup.Log();
  for (int i = 1; i <= kRounds; i += 9) {
    const std::string id = "t" + std::to_string(3 * i + 2);
    // count i + 1 rows (0..i), sum 0 + 1 + ... + i
    EXPECT_EQ(PeekRows(*r.ctl, "sum" + std::to_string(i), id, static_cast<Time>(i)),
              (std::multiset<std::string>{std::to_string(i + 1) + "," +
                                          std::to_string(i * (i + 1) / 2) + ",x1"}))
        << id;
  }
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotsRacingTheirDataAreAllComputedTwoRuntime) { OneShotsRacingTheirData(true); }
TEST(Imports, OneShotsRacingTheirDataAreAllComputedSolo) { OneShotsRacingTheirData(false); }

// A one-shot over two indexes, neither readable at its as_of yet: computed once both are, in
// either order, however long apart.
void OneShotWaitingForTwoImports(bool two_runtime, bool first_u2, int gap_ms, bool huge) {
  SCOPED_TRACE(Mode(two_runtime) + (first_u2 ? ", u2 first" : ", u4 first") + ", gap " +
               std::to_string(gap_ms) + " ms" + (huge ? ", a count beyond int64" : ""));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile one, two;
  one.Append("U 0 1 1 10\nP 1\n");
  two.Append("U 0 1 2 20\nP 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", one.path()));
  r.ctl->Send(LogIndexDataflow("u3", "u4", two.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 1)) << r.sup.Log();
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u4", 1)) << r.sup.Log();
  r.ctl->Send(samples::OneShot(
      5, {ImportOfU2(), samples::Import("u4", "u3", U1Schema(), {0})},
      {samples::Build("t2", samples::UnionPlan({samples::GetPlan("u1"), samples::GetPlan("u3")}))},
      {samples::Export("t1", "t2", {0})}));
  r.ctl->Send(samples::PeekAt("both", "t1", 5));
  (first_u2 ? one : two).Append("U 3 1 3 30\nP 8\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  (first_u2 ? two : one)
      .Append(huge ? "U 4 4611686018427701966 4 40\nU 4 4611686018427701966 4 40\nP 9\n"
                   : "U 4 1 4 40\nP 9\n");
  auto a = AwaitPeek(*r.ctl, "both");
  ASSERT_TRUE(a) << "the one-shot was never computed\n" << r.sup.Log();
  if (huge) {
    EXPECT_TRUE(a->peek_response().has_error()) << *RowsOf(*a).begin();
  } else {
    EXPECT_EQ(RowsOf(*a), (std::multiset<std::string>{"1,10,x1", "2,20,x1", "3,30,x1", "4,40,x1"}));
  }
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotWaitingForTwoImportsIsComputedOnceBothAreReadable) {
  for (bool two_runtime : {true, false}) {
    for (bool first_u2 : {true, false}) {
      for (int gap : {0, 30}) {
        for (bool huge : {false, true})
          OneShotWaitingForTwoImports(two_runtime, first_u2, gap, huge);
      }
    }
  }
}

// An index id dropped and created again: a one-shot importing it reads the new index (never the
// old one's slot), whether the new one is already readable at as_of or not yet.
void OneShotOfARecreatedIndex(bool two_runtime, bool waiting) {
  SCOPED_TRACE(Mode(two_runtime) + (waiting ? ", waiting" : ""));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile old_log, new_log;
  old_log.Append("U 0 1 1 10\nP 5\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", old_log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 5)) << r.sup.Log();
  r.ctl->Send(OneShotOfU2(3, 1));
  EXPECT_EQ(PeekRows(*r.ctl, "old", "t1", 3), (std::multiset<std::string>{"1,10,x1"}));
  r.ctl->Send(samples::Drop("t1"));
  r.ctl->Send(samples::Drop("t3"));
  r.ctl->Send(samples::Drop("u2"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "u2")) << r.sup.Log();
  new_log.Append(waiting ? "U 0 1 2 20\nP 1\n" : "U 0 1 2 20\nP 5\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", new_log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", waiting ? 1 : 5)) << r.sup.Log();
  r.ctl->Send(OneShotOfU2(3, 4));
  r.ctl->Send(samples::PeekAt("new", "t4", 3));
  if (waiting) new_log.Append("U 2 1 3 30\nP 5\n");
  auto a = AwaitPeek(*r.ctl, "new");
  ASSERT_TRUE(a) << "the one-shot of the new u2 was never computed\n" << r.sup.Log();
  EXPECT_EQ(RowsOf(*a), waiting ? (std::multiset<std::string>{"2,20,x1", "3,30,x1"})
                                : (std::multiset<std::string>{"2,20,x1"}));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotOfARecreatedIndexReadsTheNewOne) {
  for (bool two_runtime : {true, false}) {
    for (bool waiting : {false, true}) OneShotOfARecreatedIndex(two_runtime, waiting);
  }
}

// After a reconnecting controller replays its history (an importer included), one-shots over
// kept indexes and over indexes created after the replay are computed and exact.
void OneShotsAfterAReplay(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log, later;
  log.Append("U 0 1 1 10\nU 1 1 2 20\nP 3\n");
  const Command source = LogIndexDataflow("u1", "u2", log.path());
  r.ctl->Send(source);
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 3)) << r.sup.Log();
  r.ctl->Send(Importer(1));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u4", 3)) << r.sup.Log();
  r.ctl->Send(OneShotOfU2(2, 1));
  EXPECT_EQ(PeekRows(*r.ctl, "before", "t1", 2),
            (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));
  r.ctl->Send(samples::Drop("t1"));
  r.ctl->Send(samples::Drop("t3"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "t3")) << r.sup.Log();

  TestController next(r.sup.controller_endpoint());
  ASSERT_TRUE(next.Hello("replay"));
  next.Send(source);
  next.Send(Importer(1));
  next.Send(samples::InitializationComplete());
  auto rec = next.ReceiveUntil(
      [](const Response& resp) { return resp.has_status() && resp.status().has_reconciled(); });
  ASSERT_TRUE(rec) << r.sup.Log();
  EXPECT_EQ(rec->status().reconciled().kept(), 2u) << ipc::ToJson(*rec);
  EXPECT_EQ(rec->status().reconciled().built(), 0u) << ipc::ToJson(*rec);
  // A kept index.
  next.Send(OneShotOfU2(2, 4));
  EXPECT_EQ(PeekRows(next, "kept", "t4", 2), (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));
  EXPECT_EQ(PeekRows(next, "importer", "u4", 2),
            (std::multiset<std::string>{"1,1,10,x1", "2,1,20,x1"}));
  // An index created after the replay.
  later.Append("U 0 1 7 70\nP 3\n");
  next.Send(LogIndexDataflow("u7", "u8", later.path()));
  ASSERT_TRUE(AwaitWrite(next, "u8", 3)) << r.sup.Log();
  next.Send(samples::OneShot(1, {samples::Import("u8", "u7", U1Schema(), {0})}, {},
                             {samples::Export("t9", "u7", {1})}));
  EXPECT_EQ(PeekRows(next, "new", "t9", 1), (std::multiset<std::string>{"7,70,x1"}));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotsAfterAReplayAreComputedTwoRuntime) { OneShotsAfterAReplay(true); }
TEST(Imports, OneShotsAfterAReplayAreComputedSolo) { OneShotsAfterAReplay(false); }

// A one-shot below the allowed frontier created just as another reader's hold goes away: each
// reading worker decides on its own row whether the import is still held at as_of (DESIGN §8),
// and a waiting peek releases its hold row by row as each part is answered. Whatever each row
// decides, the one-shot must end: its exports report write [as_of + 1] and its peek answers
// (exact rows, or Error "compacted") — it must never wait forever with rows that disagree.
void OneShotRacingAHoldsRelease(bool two_runtime, int workers) {
  SCOPED_TRACE(Mode(two_runtime) + ", " + std::to_string(workers) + " workers");
  Replica r(two_runtime, workers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  // Each round is a fresh index; the race is lost in a few percent of the rounds.
  constexpr int kRounds = 60;
  std::vector<std::unique_ptr<LogFile>> logs;
  for (int i = 0; i < kRounds; ++i) {
    logs.push_back(std::make_unique<LogFile>());
    LogFile& log = *logs.back();
    const std::string src = "u" + std::to_string(10 * i + 1);
    const std::string idx = "u" + std::to_string(10 * i + 2);
    std::string rows;
    for (int k = 0; k < 40; ++k)
      rows += "U 0 1 " + std::to_string(k) + " " + std::to_string(k) + "\n";
    log.Append(rows + "P 3\n");
    r.ctl->Send(LogIndexDataflow(src, idx, log.path()));
    ASSERT_TRUE(AwaitWrite(*r.ctl, idx, 3)) << r.sup.Log();
    r.ctl->Send(samples::PeekAt("wait" + std::to_string(i), idx, 5));  // waits, holds 5
    r.ctl->Send(samples::AllowCompaction(idx, {9}));
    log.Append("U 4 1 100 100\nU 6 1 200 200\nP 10\n");
    if (i % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(i % 4));
    const std::string t0 = "t" + std::to_string(10 * i + 1);
    r.ctl->Send(samples::OneShot(7, {samples::Import(idx, src, U1Schema(), {0})}, {},
                                 {samples::Export(t0, src, {0})}));
    r.ctl->Send(samples::PeekAt("shot" + std::to_string(i), t0, 7));
    auto shot = AwaitPeek(*r.ctl, "shot" + std::to_string(i), 10s);
    ASSERT_TRUE(shot) << "round " << i << ": the one-shot at 7 never answered\n"
                      << HoldsText(HoldsOf(r.sup.segment(), idx)) << "\n"
                      << r.sup.Log();
    if (shot->peek_response().has_error()) {
      EXPECT_NE(shot->peek_response().error().find("compacted"), std::string::npos)
          << shot->peek_response().error();
    } else {
      EXPECT_EQ(RowsOf(*shot).size(), 42u) << "round " << i;
    }
    r.ctl->Send(samples::Drop(t0));
  }
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, OneShotRacingAWaitingPeeksReleaseAlwaysEnds) {
  for (bool two_runtime : {true, false}) {
    for (int workers : {2, 4}) OneShotRacingAHoldsRelease(two_runtime, workers);
  }
}

// ---- (f) shared fate while interactive renders a one-shot ----

// `n` rows (k, k) at time 0, then P 1.
std::string ManyRows(int n) {
  std::string lines;
  for (int k = 0; k < n; ++k)
    lines += "U 0 1 " + std::to_string(k) + " " + std::to_string(k) + "\n";
  return lines + "P 1\n";
}

// Kills runtime `victim` (0 maintenance, 1 interactive) while interactive renders one-shot reads
// over a large index: the replica goes down as a whole, as for any runtime's death.
void KillWhileRenderingAOneShot(std::size_t victim, const std::string& role) {
  Replica r(true, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  ASSERT_EQ(r.sup.runtime_pids().size(), 2u);
  LogFile log;
  log.Append(ManyRows(100000));
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 1, 60s)) << r.sup.Log();
  // Interactive renders one-shots over it (the first one to the end: it can), and more back to
  // back: some are still being rendered when the kill lands.
  r.ctl->Send(OneShotOfU2(0, 10));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "t12", 1, 30s)) << r.sup.Log();
  for (int i = 1; i < 7; ++i) r.ctl->Send(OneShotOfU2(0, 10 + 3 * i));
  r.ctl->Send(samples::PeekAt("f", "t15", 0));
  const pid_t target = r.sup.runtime_pids()[victim];
  const pid_t other = r.sup.runtime_pids()[1 - victim];
  ASSERT_EQ(kill(target, SIGKILL), 0);
  EXPECT_TRUE(Eventually([&] { return ProcessGone(other); }, 10s)) << "the other runtime survived";
  EXPECT_EQ(r.sup.WaitExit(10s), 137) << r.sup.Log();
  EXPECT_FALSE(r.sup.SegmentExists());
  EXPECT_TRUE(r.sup.RuntimeDirEmpty());
  EXPECT_NE(r.sup.Log().find("the " + role + " runtime (pid " + std::to_string(target) +
                             ") killed by signal 9"),
            std::string::npos)
      << r.sup.Log();
}

// A one-shot dropped while its compute threads still read its snapshots, then at once the index
// it imported: the drop of the index waits for those reads, and the replica keeps serving (it
// used to abort: a snapshot was still open when the peer hold went).
void DropAnIndexRightAfterTheOneShotReadingIt(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append(ManyRows(100000));
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 1, 60s)) << r.sup.Log();
  for (int i = 0; i < 5; ++i) {
    r.ctl->Send(OneShotOfU2(0, 10 + 3 * i));
    r.ctl->Send(samples::Drop("t" + std::to_string(10 + 3 * i)));
    r.ctl->Send(samples::Drop("t" + std::to_string(12 + 3 * i)));
  }
  r.ctl->Send(samples::Drop("u2"));
  ASSERT_TRUE(AwaitDropped(*r.ctl, "u2")) << r.sup.Log();
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
  r.ctl->Send(LogIndexDataflow("u3", "u4", log.path()));
  EXPECT_TRUE(AwaitWrite(*r.ctl, "u4", 1, 60s)) << "still serving\n" << r.sup.Log();
}

TEST(Imports, DroppingAnIndexRightAfterTheOneShotReadingItWaitsForItsReadsTwoRuntime) {
  DropAnIndexRightAfterTheOneShotReadingIt(true);
}
TEST(Imports, DroppingAnIndexRightAfterTheOneShotReadingItWaitsForItsReadsSolo) {
  DropAnIndexRightAfterTheOneShotReadingIt(false);
}

// ---- joins over imported indexes (issue 14): the imported arrangement read in place ----

pb::Plan JoinOf(pb::Plan left, pb::Plan right, std::uint32_t left_key, std::uint32_t right_key,
                bool left_outer) {
  pb::Plan p;
  auto* j = p.mutable_join();
  *j->mutable_left() = std::move(left);
  *j->mutable_right() = std::move(right);
  j->add_left_key(left_key);
  j->add_right_key(right_key);
  j->set_kind(left_outer ? pb::LEFT_OUTER : pb::INNER);
  return p;
}

// A peek's rows with nulls spelled out: "1,10,null,null,x1".
std::multiset<std::string> JoinedRowsOf(TestController& ctl, const std::string& uuid,
                                        const std::string& id, Time t) {
  ctl.Send(samples::PeekAt(uuid, id, t));
  auto a = AwaitPeek(ctl, uuid);
  if (!a) return {"(no answer)"};
  if (a->peek_response().has_error()) return {"Error(" + a->peek_response().error() + ")"};
  std::multiset<std::string> out;
  for (const auto& rc : a->peek_response().rows().rows()) {
    std::string s;
    for (const auto& d : rc.row().datums())
      s += (d.has_null() ? std::string("null") : std::to_string(d.int64())) + ",";
    out.insert(s + "x" + std::to_string(rc.count()));
  }
  return out;
}

// Facts u5 (k, v = the dimension key) from their own log, joined with the imported dimension
// index u2 (on u1, keyed by k): u6 = u5 ⋈ u2 on u5.v = u1.k (left outer when asked), indexed by
// u7; u8 = u5 ⋈ u1 through the same import but keyed otherwise (by v: arranged again) for
// comparison, indexed by u9.
Command FactJoin(const std::string& facts, bool left_outer) {
  Command c = LogIndexDataflow("u5", "u10", facts);
  auto* d = samples::Desc(c);
  d->set_debug_name("fact join");
  *d->add_index_imports() = ImportOfU2();
  *d->add_index_imports() = samples::Import("u3", "u11", U1Schema(), {1});
  *d->add_objects_to_build() = samples::Build(
      "u6", JoinOf(samples::GetPlan("u5"), samples::GetPlan("u2"), 1, 0, left_outer));
  *d->add_index_exports() = samples::Export("u7", "u6", {0});
  *d->add_objects_to_build() = samples::Build(
      "u8", JoinOf(samples::GetPlan("u5"), samples::GetPlan("u3"), 1, 0, left_outer));
  *d->add_index_exports() = samples::Export("u9", "u8", {0});
  return c;
}

void JoinOverAnImportedIndex(bool two_runtime, bool left_outer) {
  SCOPED_TRACE(Mode(two_runtime) + (left_outer ? " left outer" : " inner"));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  // The dimension u1 (k, v), indexed by k (u2) and by v (u3, on u11: the same rows).
  LogFile dim, dim2, facts;
  const std::string dims = "U 0 1 1 10\nU 0 1 2 20\nU 2 -1 2 20\nU 2 1 2 21\nU 3 1 3 30\nP 4\n";
  dim.Append(dims);
  dim2.Append(dims);
  r.ctl->Send(LogIndexDataflow("u1", "u2", dim.path()));
  Command by_v = LogIndexDataflow("u11", "u3", dim2.path());
  samples::Desc(by_v)->mutable_index_exports(0)->set_key(0, 1);
  r.ctl->Send(by_v);
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 4)) << r.sup.Log();
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u3", 4)) << r.sup.Log();
  // Facts (k, dimension key): 100 → 1, 101 → 2, 102 → 3 (from 1), 103 → 9 (never matches).
  facts.Append("U 0 1 100 1\nU 0 1 101 2\nU 0 1 103 9\nU 1 1 102 3\nU 3 -1 100 1\nP 4\n");
  r.ctl->Send(FactJoin(facts.path(), left_outer));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u7", 4)) << r.sup.Log();
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u9", 4)) << r.sup.Log();
  using Rows = std::multiset<std::string>;
  Rows at0{"100,1,1,10,x1", "101,2,2,20,x1"}, at1 = at0, at2{"100,1,1,10,x1", "101,2,2,21,x1"},
                                              at3{"101,2,2,21,x1", "102,3,3,30,x1"};
  if (left_outer) {
    at0.insert("103,9,null,null,x1");
    at1 = at0;
    at1.insert("102,3,null,null,x1");
    at2.insert({"102,3,null,null,x1", "103,9,null,null,x1"});
    at3.insert("103,9,null,null,x1");
  }
  const std::vector<Rows> expected{at0, at1, at2, at3};
  for (Time t = 0; t < 4; ++t) {
    EXPECT_EQ(JoinedRowsOf(*r.ctl, "in-place" + std::to_string(t), "u7", t), expected[t])
        << "t=" << t;
    EXPECT_EQ(JoinedRowsOf(*r.ctl, "arranged" + std::to_string(t), "u9", t), expected[t])
        << "t=" << t;
  }
  // The render log says which input each join read in place and which it arranged.
  const std::string log = r.sup.Log();
  EXPECT_NE(log.find("dataflow fact join: join 1: left side its own arrangement, right side "
                     "imported index u2, in place"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("dataflow fact join: join 2: left side its own arrangement, right side its "
                     "own arrangement"),
            std::string::npos)
      << log;
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, AJoinReadsAnImportedIndexArrangedByItsKeyInPlaceTwoRuntime) {
  JoinOverAnImportedIndex(true, false);
}
TEST(Imports, AJoinReadsAnImportedIndexArrangedByItsKeyInPlaceSolo) {
  JoinOverAnImportedIndex(false, false);
}
TEST(Imports, ALeftJoinOverAnImportedIndexKeepsUnmatchedRowsWithNulls) {
  JoinOverAnImportedIndex(true, true);
  JoinOverAnImportedIndex(false, true);
}

// A one-shot self-join of an imported index on its key (both sides read in place), computed by
// the interactive runtime (or solo) at the one-shot's as_of.
void OneShotSelfJoin(bool two_runtime) {
  SCOPED_TRACE(Mode(two_runtime));
  Replica r(two_runtime, kWorkers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 0 1 1 11\nU 0 1 2 20\nU 1 1 2 21\nP 3\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitWrite(*r.ctl, "u2", 3)) << r.sup.Log();
  r.ctl->Send(samples::OneShot(
      0, {ImportOfU2()},
      {samples::Build("t2", JoinOf(samples::GetPlan("u2"), samples::GetPlan("u1"), 0, 0, false))},
      {samples::Export("t1", "t2", {0})}, "self join"));
  EXPECT_EQ(JoinedRowsOf(*r.ctl, "self", "t1", 0),
            (std::multiset<std::string>{"1,10,1,10,x1", "1,10,1,11,x1", "1,11,1,10,x1",
                                        "1,11,1,11,x1", "2,20,2,20,x1"}));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Imports, AOneShotSelfJoinOfAnImportedIndexIsExactAtItsAsOf) {
  OneShotSelfJoin(true);
  OneShotSelfJoin(false);
}

TEST(Imports, MaintenanceKilledWhileInteractiveRendersAOneShotTakesTheReplicaDown) {
  KillWhileRenderingAOneShot(0, "maintenance");
}
TEST(Imports, InteractiveKilledWhileRenderingAOneShotTakesTheReplicaDown) {
  KillWhileRenderingAOneShot(1, "interactive");
}

}  // namespace
}  // namespace tandem::testing
