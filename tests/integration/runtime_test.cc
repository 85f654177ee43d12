// The real runtime (tandem-worker) under the real supervisor: the three failures DESIGN §4.1
// forbids, peeks that wait, cancel and drop, errors in the data, reconciliation, shared fate of a
// worker thread's failed check.
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "base/time.h"
#include "log_source.h"
#include "replica.h"
#include "shm/layout.h"
#include "shm/reader.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "unit/protocol_samples.h"

namespace tandem::testing {
namespace {

using ipc::pb::Command;
using ipc::pb::Response;
namespace samples = ipc::samples;

std::optional<Response> AwaitPeek(TestController& ctl, const std::string& uuid,
                                  std::chrono::milliseconds limit = 10s) {
  return ctl.ReceiveUntil(
      [&](const Response& r) { return r.has_peek_response() && r.peek_response().uuid() == uuid; },
      limit);
}

bool AwaitUpper(TestController& ctl, const std::string& id, Time upper,
                std::chrono::milliseconds limit = 10s) {
  return ctl
      .ReceiveUntil(
          [&](const Response& r) {
            return r.has_frontiers() && r.frontiers().id() == id &&
                   (r.frontiers().write().elements().empty() ||
                    r.frontiers().write().elements(0) >= upper);
          },
          limit)
      .has_value();
}

// Appends `lines` to `log`, creates log source u1 → index u2 on it, and waits until u2's upper
// reaches `upper`.
bool StartLogIndex(Replica& r, LogFile& log, const std::string& lines, Time upper) {
  log.Append(lines);
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  return AwaitUpper(*r.ctl, "u2", upper);
}

// Sends InitializationComplete (the replay is over) and waits for the runtimes' Reconciled.
std::optional<Response> CompleteReplay(TestController& ctl) {
  Command done;
  done.mutable_initialization_complete();
  ctl.Send(done);
  return ctl.ReceiveUntil(
      [](const Response& r) { return r.has_status() && r.status().has_reconciled(); });
}

std::multiset<std::string> RowsOf(const Response& r) {
  std::multiset<std::string> out;
  for (const auto& rc : r.peek_response().rows().rows()) {
    std::string s;
    for (const auto& d : rc.row().datums()) s += std::to_string(d.int64()) + ",";
    out.insert(s + "x" + std::to_string(rc.count()));
  }
  return out;
}

TEST(Runtime, PeekOnAMaintenanceIndexIsServedByInteractiveFromTheRegistry) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  ASSERT_TRUE(StartLogIndex(r, log, "U 0 1 1 10\nU 0 1 2 20\nU 3 1 3 30\nU 4 -1 1 10\nP 5\n", 5))
      << r.sup.Log();
  r.ctl->Send(samples::PeekAt("a", "u2", 3));
  auto a = AwaitPeek(*r.ctl, "a");
  ASSERT_TRUE(a) << r.sup.Log();
  ASSERT_TRUE(a->peek_response().has_rows()) << a->peek_response().error();
  EXPECT_EQ(RowsOf(*a), (std::multiset<std::string>{"1,10,x1", "2,20,x1", "3,30,x1"}));
  r.ctl->Send(samples::PeekAt("b", "u2", 4, 1));
  auto b = AwaitPeek(*r.ctl, "b");
  ASSERT_TRUE(b && b->peek_response().has_rows());
  EXPECT_TRUE(RowsOf(*b).empty()) << "key 1 was retracted at 4";
  r.ctl->Send(samples::PeekAt("c", "u2", 2, 2));
  auto c = AwaitPeek(*r.ctl, "c");
  ASSERT_TRUE(c && c->peek_response().has_rows());
  EXPECT_EQ(RowsOf(*c), (std::multiset<std::string>{"2,20,x1"}));
}

TEST(Runtime, SoloServesTheSamePeek) {
  Replica r(false, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  ASSERT_TRUE(StartLogIndex(r, log, "U 0 1 1 10\nU 0 1 2 20\nP 2\n", 2)) << r.sup.Log();
  r.ctl->Send(samples::PeekAt("a", "u2", 1));
  auto a = AwaitPeek(*r.ctl, "a");
  ASSERT_TRUE(a && a->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*a), (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));
}

TEST(Runtime, DroppingAMaintenanceIndexLeavesInteractiveServingOthers) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile one, two;
  one.Append("U 0 1 1 10\nP 2\n");
  two.Append("U 0 1 7 70\nP 2\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", one.path()));
  r.ctl->Send(LogIndexDataflow("u3", "u4", two.path()));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u2", 2));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u4", 2));
  r.ctl->Send(samples::Drop("u2"));  // drop: broadcast to interactive too
  r.ctl->Send(samples::Drop("u1"));
  r.ctl->Send(samples::PeekAt("after", "u4", 1));
  auto after = AwaitPeek(*r.ctl, "after");
  ASSERT_TRUE(after && after->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*after), (std::multiset<std::string>{"7,70,x1"}));
  EXPECT_EQ(HttpGet(r.sup.http_port(), "/readyz").status, 200);
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Runtime, PeekBelowSinceAnswersError) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  ASSERT_TRUE(StartLogIndex(r, log, "U 0 1 1 10\nU 5 1 2 20\nP 10\n", 10)) << r.sup.Log();
  r.ctl->Send(samples::AllowCompaction("u2", {6}));
  // Interactive applied the compaction before the peek (one ordered stream), so its hold is 6;
  // maintenance compacts once both allow it.
  r.ctl->Send(samples::PeekAt("old", "u2", 3));
  auto old = AwaitPeek(*r.ctl, "old");
  ASSERT_TRUE(old);
  // Either maintenance already compacted (since 6) or not yet: a read below the hold is refused
  // once since passes it; before, it is still exact.
  if (old->peek_response().has_error()) {
    EXPECT_NE(old->peek_response().error().find("before since"), std::string::npos);
  }
  ASSERT_TRUE(Eventually(
      [&] {
        static int n = 0;
        const std::string uuid = "again" + std::to_string(n++);
        r.ctl->Send(samples::PeekAt(uuid, "u2", 3));
        auto a = AwaitPeek(*r.ctl, uuid);
        return a && a->peek_response().has_error() &&
               a->peek_response().error().find("before since") != std::string::npos;
      },
      10s));
  r.ctl->Send(samples::PeekAt("ok", "u2", 7));
  auto ok = AwaitPeek(*r.ctl, "ok");
  ASSERT_TRUE(ok && ok->peek_response().has_rows());
  EXPECT_EQ(RowsOf(*ok), (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));
}

TEST(Runtime, PeekOnAnUnknownIdIsRefused) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  r.ctl->Send(samples::PeekAt("x", "u99", 0));
  auto e = r.ctl->ReceiveUntil([](const Response& r) { return r.has_command_error(); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->command_error().why().find("u99"), std::string::npos);
}

TEST(Runtime, PeekWaitsForUpperAndCancelYieldsOneAnswer) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  ASSERT_TRUE(StartLogIndex(r, log, "U 0 1 1 10\nP 1\n", 1)) << r.sup.Log();
  r.ctl->Send(samples::PeekAt("later", "u2", 3));
  EXPECT_FALSE(AwaitPeek(*r.ctl, "later", 300ms)) << "upper is 1: the peek at 3 waits";
  log.Append("U 2 1 2 20\nP 4\n");
  auto later = AwaitPeek(*r.ctl, "later");
  ASSERT_TRUE(later && later->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*later), (std::multiset<std::string>{"1,10,x1", "2,20,x1"}));

  r.ctl->Send(samples::PeekAt("never", "u2", 100));
  Command cancel;
  cancel.mutable_cancel_peek()->set_uuid("never");
  r.ctl->Send(cancel);
  auto canceled = AwaitPeek(*r.ctl, "never");
  ASSERT_TRUE(canceled);
  EXPECT_TRUE(canceled->peek_response().has_canceled());
  EXPECT_FALSE(AwaitPeek(*r.ctl, "never", 300ms)) << "exactly one answer";
}

TEST(Runtime, DropDuringAWaitingPeekAnswersError) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  ASSERT_TRUE(StartLogIndex(r, log, "U 0 1 1 10\nP 1\n", 1)) << r.sup.Log();
  r.ctl->Send(samples::PeekAt("waiting", "u2", 50));
  r.ctl->Send(samples::Drop("u2"));
  auto e = AwaitPeek(*r.ctl, "waiting");
  ASSERT_TRUE(e);
  ASSERT_TRUE(e->peek_response().has_error());
  EXPECT_NE(e->peek_response().error().find("dropped"), std::string::npos);
}

TEST(Runtime, DivisionByZeroMakesPeeksOfThatIndexAnswerErrorWhileOthersAnswer) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile bad, good;
  bad.Append("U 0 1 1 10\nP 2\n");
  good.Append("U 0 1 5 50\nP 2\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", bad.path(), 0, 0));
  r.ctl->Send(LogIndexDataflow("u3", "u4", good.path(), 0, 5));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u2", 2)) << r.sup.Log();
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u4", 2)) << r.sup.Log();
  r.ctl->Send(samples::PeekAt("bad", "u2", 1));
  auto e = AwaitPeek(*r.ctl, "bad");
  ASSERT_TRUE(e && e->peek_response().has_error()) << r.sup.Log();
  EXPECT_NE(e->peek_response().error().find("division by zero"), std::string::npos);
  r.ctl->Send(samples::PeekAt("good", "u4", 1));
  auto g = AwaitPeek(*r.ctl, "good");
  ASSERT_TRUE(g && g->peek_response().has_rows()) << r.sup.Log();
  ASSERT_EQ(g->peek_response().rows().rows_size(), 1);
  EXPECT_EQ(g->peek_response().rows().rows(0).row().datums(2).int64(), 10);
}

TEST(Runtime, ReconnectKeepsUnchangedDataflowsAndDropsOmittedOnes) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile one, two;
  one.Append("U 0 1 1 10\nP 2\n");
  two.Append("U 0 1 2 20\nP 2\n");
  const Command keep = LogIndexDataflow("u1", "u2", one.path());
  const Command omit = LogIndexDataflow("u3", "u4", two.path());
  r.ctl->Send(keep);
  r.ctl->Send(omit);
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u2", 2));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u4", 2));
  // A new controller replays only the first dataflow.
  TestController next(r.sup.controller_endpoint());
  ASSERT_TRUE(next.Hello("second"));
  next.Send(keep);
  auto rec = CompleteReplay(next);
  ASSERT_TRUE(rec) << r.sup.Log();
  EXPECT_EQ(rec->status().reconciled().kept(), 1u);
  EXPECT_EQ(rec->status().reconciled().dropped(), 1u);
  EXPECT_EQ(rec->status().reconciled().built(), 0u);
  const std::string m = HttpGet(r.sup.http_port(), "/metrics").body;
  EXPECT_EQ(
      MetricValue(m, "tandem_dataflows_reconciled_total{role=\"maintenance\",outcome=\"kept\"}"),
      1);
  EXPECT_EQ(
      MetricValue(m, "tandem_dataflows_reconciled_total{role=\"maintenance\",outcome=\"dropped\"}"),
      1);
  EXPECT_TRUE(std::any_of(next.skipped.begin(), next.skipped.end(), [](const Response& r) {
    return r.has_frontiers() && r.frontiers().id() == "u2";
  })) << "a new controller is told the current frontiers";
  next.Send(samples::PeekAt("kept", "u2", 1));
  auto kept = AwaitPeek(next, "kept");
  ASSERT_TRUE(kept && kept->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*kept), (std::multiset<std::string>{"1,10,x1"}));
}

// `n` updates (k, k) for k in [from, from + n) at time 0, then progress to 1.
std::string LogRows(int from, int n) {
  std::string lines;
  for (int k = from; k < from + n; ++k) {
    lines += "U 0 1 " + std::to_string(k) + " " + std::to_string(k) + "\n";
  }
  return lines + "P 1\n";
}

// A full segment is a resource limit, not a bug: the index whose batch does not fit stalls (its
// upper stops, its updates wait in the worker, its dataflow's inputs pause) while the replica
// keeps serving and other dataflows keep publishing; once room is freed — here by dropping
// another index — the waiting updates are published and the index goes on.
TEST(Runtime, AFullSegmentStallsOnlyTheIndexThatDoesNotFitUntilRoomIsFreed) {
  Replica r(true, 1, {"--shm-size", "32MiB"});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile small, filler, big;
  small.Append("U 0 1 1 10\nP 2\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", small.path()));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u2", 2)) << r.sup.Log();
  // 59 bytes per published update: the filler's batch takes 17.7 of the 32 MiB, leaving ~15.8 MB,
  // and the big index's one batch (16.8 MB) fits only in the hole the filler leaves when dropped.
  filler.Append(LogRows(0, 300000));
  r.ctl->Send(LogIndexDataflow("u5", "u6", filler.path()));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u6", 1, 30s)) << r.sup.Log();
  big.Append(LogRows(0, 285000));
  r.ctl->Send(LogIndexDataflow("u3", "u4", big.path()));
  ASSERT_TRUE(
      Eventually([&] { return r.sup.Log().find("segment is full") != std::string::npos; }, 30s))
      << r.sup.Log();
  // Operators see it in the registry (tandem-shm slots shows the flag as "stalled").
  auto stalled_ids = [&] {
    std::set<std::string> ids;
    auto seg = shm::Segment::Open(r.sup.segment());
    EXPECT_TRUE(seg.ok()) << seg.status().ToString();
    if (!seg.ok()) return ids;
    for (const auto& slot : shm::Inspector(seg->get()).Slots()) {
      if (slot.flags & shm::kSlotStalled) ids.insert(slot.key.id.ToString());
    }
    return ids;
  };
  EXPECT_EQ(stalled_ids(), std::set<std::string>{"u4"});
  EXPECT_EQ(MetricValue(HttpGet(r.sup.http_port(), "/metrics").body, "tandem_index_parts_stalled"),
            1);
  // While u4 waits: the replica serves, and the small dataflow keeps publishing.
  r.ctl->Send(samples::PeekAt("small", "u2", 1));
  auto a = AwaitPeek(*r.ctl, "small");
  ASSERT_TRUE(a && a->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*a), (std::multiset<std::string>{"1,10,x1"}));
  small.Append("U 3 1 5 50\nP 5\n");
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u2", 5, 30s)) << r.sup.Log();
  EXPECT_EQ(HttpGet(r.sup.http_port(), "/readyz").status, 200);
  EXPECT_EQ(r.sup.Log().find("resumed"), std::string::npos) << "u4 still waits";
  // Dropping the filler frees its memory once interactive released it; u4's batch goes in.
  r.ctl->Send(samples::Drop("u6"));
  r.ctl->Send(samples::Drop("u5"));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u4", 1, 30s)) << r.sup.Log();
  EXPECT_NE(r.sup.Log().find("resumed"), std::string::npos) << r.sup.Log();
  EXPECT_TRUE(stalled_ids().empty());
  EXPECT_EQ(MetricValue(HttpGet(r.sup.http_port(), "/metrics").body, "tandem_index_parts_stalled"),
            0);
  r.ctl->Send(samples::PeekAt("big", "u4", 0, 284999));
  auto b = AwaitPeek(*r.ctl, "big");
  ASSERT_TRUE(b && b->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*b), (std::multiset<std::string>{"284999,284999,x1"}));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

// A table whose index is paused on a full segment: its writes are still made durable and
// acknowledged until what it holds for the index passes --max-table-backlog-bytes; then writes are
// refused with the reason (never held in memory without bound), and once room is freed the index
// takes what waited, writes are acknowledged again, and every acknowledged write is in the index.
TEST(Runtime, ATableWhoseIndexIsPausedOnAFullSegmentRefusesWritesPastItsBacklogBound) {
  TempDir data("backlog");
  constexpr std::uint64_t kBound = 2u << 20;
  Replica r(true, 1,
            {"--shm-size", "32MiB", "--data-dir", data.File("data"), "--max-table-backlog-bytes",
             std::to_string(kBound)});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile filler;
  filler.Append(LogRows(0, 300000));  // 17.7 of the 32 MiB
  r.ctl->Send(LogIndexDataflow("u5", "u6", filler.path()));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u6", 1, 30s)) << r.sup.Log();
  r.ctl->Send(samples::TableDataflow());
  ASSERT_TRUE(r.ctl->ReceiveUntil(
      [](const Response& x) { return x.has_frontiers() && x.frontiers().id() == "u41"; }, 10s))
      << r.sup.Log();

  ipc::ControllerClient writer(r.sup.controller_endpoint(), ipc::ControllerClient::Options{});
  ASSERT_TRUE(writer.Hello("backlog-writer", /*observer=*/true, /*writer=*/true).ok());
  const std::string value(256u << 10, 'v');  // a row of 256 KiB per write
  int acked = 0;
  Time last = 0;
  std::string refusal;
  for (int i = 0; i < 200 && refusal.empty(); ++i) {
    auto out = writer.Write(samples::WriteTable("b-" + std::to_string(i), "u40",
                                                {samples::RowUpdate(samples::TableRow(i, value))})
                                .write_table());
    ASSERT_TRUE(out.ok()) << out.status().ToString() << "\n" << r.sup.Log();
    ASSERT_TRUE(out->response) << out->refused->why();
    if (out->response->has_error()) {
      refusal = out->response->error();
    } else {
      ++acked;
      last = out->response->time();
    }
  }
  ASSERT_FALSE(refusal.empty()) << acked << " writes acknowledged, none refused\n" << r.sup.Log();
  EXPECT_NE(refusal.find("table u40"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("paused on a full segment"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("--max-table-backlog-bytes " + std::to_string(kBound)), std::string::npos)
      << refusal;
  EXPECT_NE(r.sup.Log().find("segment is full"), std::string::npos) << r.sup.Log();
  // What was acknowledged fits the segment (32 MiB, the filler's share included) and the bound:
  // nothing beyond them was held.
  EXPECT_LT(acked, 136) << refusal;

  // Room: the index takes what waited, and writes are acknowledged again.
  r.ctl->Send(samples::Drop("u6"));
  r.ctl->Send(samples::Drop("u5"));
  bool accepted = false;
  for (int i = 0; !accepted && i < 600; ++i) {
    auto out = writer.Write(
        samples::WriteTable("after", "u40", {samples::RowUpdate(samples::TableRow(-1, "small"))})
            .write_table());
    ASSERT_TRUE(out.ok() && out->response) << r.sup.Log();
    accepted = !out->response->has_error();
    if (accepted) last = out->response->time();
    if (!accepted) std::this_thread::sleep_for(50ms);  // a retry's pace, not a synchronisation
  }
  ASSERT_TRUE(accepted) << r.sup.Log();
  // Every acknowledged write is in the index (only the key column read back).
  Command peek = samples::PeekAt("all", "u41", last);
  *peek.mutable_peek()->mutable_mfp() = samples::Mfp({}, {}, {0});
  r.ctl->Send(peek);
  auto a = AwaitPeek(*r.ctl, "all", 30s);
  ASSERT_TRUE(a && a->peek_response().has_rows()) << (a ? a->peek_response().error() : "none");
  EXPECT_EQ(a->peek_response().rows().rows_size(), acked + 1);
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

// tandem_index_hold_gap: a frozen interactive runtime has not applied the controller's
// compaction, so its peer hold keeps u2's since at the as_of while maintenance's own frontier
// moved on: the gap is what it holds back, per index, and back to 0 once it catches up; a dropped
// index's series goes.
TEST(Runtime, AHoldThatLagsShowsAsTheIndexsHoldGap) {
  Replica r(true, 2, {"--runtime-stall-timeout", "30", "--runtime-stall-kill", "60"});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log, other;
  ASSERT_TRUE(StartLogIndex(r, log, "U 0 1 1 10\nU 5 1 2 20\nP 10\n", 10)) << r.sup.Log();
  other.Append("U 0 1 7 70\nP 2\n");
  r.ctl->Send(LogIndexDataflow("u3", "u4", other.path()));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u4", 2)) << r.sup.Log();
  const int port = r.sup.http_port();
  auto gap = [&](const std::string& id) {
    return MetricValue(HttpGet(port, "/metrics").body, "tandem_index_hold_gap{id=\"" + id + "\"}");
  };
  EXPECT_EQ(gap("u2"), 0);
  EXPECT_EQ(gap("u4"), 0);
  const std::vector<pid_t>& pids = r.sup.runtime_pids();  // maintenance first
  ASSERT_EQ(pids.size(), 2u);
  kill(pids[1], SIGSTOP);
  r.ctl->Send(samples::AllowCompaction("u2", {6}));
  const bool lagged = Eventually([&] { return gap("u2") == 6; }, 10s);
  const std::string while_frozen = HttpGet(port, "/metrics").body;
  kill(pids[1], SIGCONT);
  EXPECT_TRUE(lagged) << while_frozen;
  EXPECT_EQ(MetricValue(while_frozen, "tandem_index_hold_gap{id=\"u4\"}"), 0) << while_frozen;
  EXPECT_EQ(MetricValue(while_frozen, "tandem_index_hold_gap_max"), 6) << while_frozen;
  EXPECT_TRUE(Eventually([&] { return gap("u2") == 0; }, 10s)) << HttpGet(port, "/metrics").body;
  r.ctl->Send(samples::Drop("u4"));
  r.ctl->Send(samples::Drop("u3"));
  EXPECT_TRUE(Eventually(
      [&] {
        return HttpGet(port, "/metrics").body.find("tandem_index_hold_gap{id=\"u4\"}") ==
               std::string::npos;
      },
      10s))
      << HttpGet(port, "/metrics").body;
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Runtime, AWorkerThreadsFailedCheckTakesTheReplicaDown) {
  for (const char* role : {"maintenance", "interactive"}) {
    // Fault injection exists only when the supervisor allows it (issue 12).
    Replica r(true, 2, {"--enable-fault-injection"});
    ASSERT_TRUE(r.ready) << r.sup.Log();
    Command c;
    (*c.mutable_update_configuration()->mutable_params())["debug_abort_worker"] = role;
    r.ctl->Send(c);
    EXPECT_EQ(r.sup.WaitExit(10s), 134) << r.sup.Log();
    const std::string log = r.sup.Log();
    EXPECT_NE(log.find("check failed"), std::string::npos) << log;
    EXPECT_NE(log.find(std::string("the ") + role + " runtime"), std::string::npos) << log;
    EXPECT_NE(log.find("killed by signal 6"), std::string::npos) << log;
    for (pid_t p : r.sup.runtime_pids())
      EXPECT_TRUE(Eventually([&] { return ProcessGone(p); }, 10s));
    EXPECT_FALSE(r.sup.SegmentExists());
  }
}

TEST(Runtime, ReplayingADropOfAnIndexThatIsAlreadyGoneChangesNothing) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nP 2\n");
  Command two = LogIndexDataflow("u1", "u2", log.path());
  auto* second = two.mutable_create_dataflow()->mutable_desc()->add_index_exports();
  second->set_id("u3");
  second->set_on("u1");
  second->add_key(1);
  r.ctl->Send(two);
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u3", 2));
  r.ctl->Send(samples::Drop("u3"));
  // A reconnecting controller replays its history, drop included.
  TestController next(r.sup.controller_endpoint());
  ASSERT_TRUE(next.Hello("replay"));
  next.Send(two);
  next.Send(samples::Drop("u3"));
  auto rec = CompleteReplay(next);
  ASSERT_TRUE(rec) << r.sup.Log();
  EXPECT_EQ(rec->status().reconciled().kept(), 1u);
  next.Send(samples::PeekAt("still", "u2", 1));
  auto still = AwaitPeek(next, "still");
  ASSERT_TRUE(still && still->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*still), (std::multiset<std::string>{"1,10,x1"}));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

// Three log files holding (1, 10), (2, 20), (3, 30) at time 0, each followed by P 2.
struct LogFiles {
  LogFile one, two, three;
  LogFiles() {
    one.Append("U 0 1 1 10\nP 2\n");
    two.Append("U 0 1 2 20\nP 2\n");
    three.Append("U 0 1 3 30\nP 2\n");
  }
};

// Indexes u2 (on log u1, file one) and u4 (on log u3, file two), both complete to 2.
bool StartTwoLogIndexes(Replica& r, LogFiles& logs) {
  r.ctl->Send(LogIndexDataflow("u1", "u2", logs.one.path()));
  r.ctl->Send(LogIndexDataflow("u3", "u4", logs.two.path()));
  return AwaitUpper(*r.ctl, "u2", 2) && AwaitUpper(*r.ctl, "u4", 2);
}

// Issue 10 item 5: a controller that replays nothing makes the replica drop every dataflow in one
// go. All their slots must be freed (they used to stay published, holding their memory), and an
// id must be reusable (re-creating one used to abort the replica on the stale slot).
void DropSeveralAtOnceThenReuse(bool two_runtime) {
  Replica r(two_runtime, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFiles logs;
  ASSERT_TRUE(StartTwoLogIndexes(r, logs)) << r.sup.Log();
  LogFile& three = logs.three;
  TestController next(r.sup.controller_endpoint());
  ASSERT_TRUE(next.Hello("fresh"));
  auto rec = CompleteReplay(next);
  ASSERT_TRUE(rec) << r.sup.Log();
  EXPECT_EQ(rec->status().reconciled().dropped(), 2u);
  EXPECT_TRUE(Eventually([&] { return LiveSlots(r.sup.segment()).empty(); }, 10s))
      << "left behind:" << LiveSlots(r.sup.segment());
  next.Send(LogIndexDataflow("u5", "u4", three.path()));
  ASSERT_TRUE(AwaitUpper(next, "u4", 2)) << r.sup.Log();
  next.Send(samples::PeekAt("again", "u4", 1));
  auto again = AwaitPeek(next, "again");
  ASSERT_TRUE(again && again->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*again), (std::multiset<std::string>{"3,30,x1"}));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Runtime, DroppingSeveralDataflowsAtOnceFreesEverySlotAndIdsAreReusable) {
  DropSeveralAtOnceThenReuse(true);
}
TEST(Runtime, DroppingSeveralDataflowsAtOnceFreesEverySlotAndIdsAreReusableSolo) {
  DropSeveralAtOnceThenReuse(false);
}

// Issue 10 item 7: with several bad lines, every peek answers the same error — the earliest line.
TEST(Runtime, APeekOverSeveralBadLogLinesAlwaysAnswersTheEarliest) {
  Replica r(true, 4);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  std::string lines = "U 0 1 1 10\n";
  for (int i = 0; i < 14; ++i) lines += "U 0 1 x" + std::to_string(i) + " 1\n";  // lines 2..15
  ASSERT_TRUE(StartLogIndex(r, log, lines + "P 2\n", 2)) << r.sup.Log();
  for (int i = 0; i < 5; ++i) {
    const std::string uuid = "e" + std::to_string(i);
    r.ctl->Send(samples::PeekAt(uuid, "u2", 1));
    auto e = AwaitPeek(*r.ctl, uuid);
    ASSERT_TRUE(e) << r.sup.Log();
    EXPECT_EQ(e->peek_response().error().rfind("log line 2: ", 0), 0u)
        << e->peek_response().error();
  }
}

// Issue 10 item 8: a log source whose file is missing says so in the log, and reads the file once
// it appears.
TEST(Runtime, AMissingLogFileIsReportedAndReadOnceItAppears) {
  Replica r(true, 1);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  TempDir dir("missing-log");
  const std::string path = dir.File("later.log");
  r.ctl->Send(LogIndexDataflow("u1", "u2", path));
  ASSERT_TRUE(Eventually(
      [&] { return r.sup.Log().find(path + " does not exist") != std::string::npos; }, 10s))
      << r.sup.Log();
  EXPECT_NE(r.sup.Log().find("log source u1: " + path + " does not exist"), std::string::npos)
      << r.sup.Log();
  dir.Write("later.log", "U 0 1 1 10\nP 2\n");
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u2", 2)) << r.sup.Log();
  EXPECT_NE(r.sup.Log().find(path + " is there now"), std::string::npos);
}

// An observer's peek of a running index is answered while a new controller is still replaying
// (between its Hello and its InitializationComplete); the replay still reconciles as before.
TEST(Runtime, AnObserversPeekIsServedWhileAControllerReplays) {
  Replica r;
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  ASSERT_TRUE(StartLogIndex(r, log, "U 0 1 1 10\nP 2\n", 2)) << r.sup.Log();
  TestController next(r.sup.controller_endpoint());
  ASSERT_TRUE(next.Hello("replaying"));
  TestController observer(r.sup.controller_endpoint());
  ASSERT_TRUE(observer.Hello("reader", true));
  observer.Send(samples::PeekAt("look", "u2", 1));
  auto look = AwaitPeek(observer, "look");
  ASSERT_TRUE(look && look->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*look), (std::multiset<std::string>{"1,10,x1"}));
  next.Send(LogIndexDataflow("u1", "u2", log.path()));
  auto rec = CompleteReplay(next);
  ASSERT_TRUE(rec) << r.sup.Log();
  EXPECT_EQ(rec->status().reconciled().kept(), 1u);
}

// Issue 11 defect 2: the index past the registry's slots per row aborted the replica. It is
// refused with a CommandError, the replica keeps serving, and once an index is dropped a new one
// fits — at once, though the dropped index's slot is freed only after its reader let go.
void IndexBeyondTheSlotsPerRow(bool two_runtime) {
  Replica r(two_runtime, 2, {"--slots-per-row", "2"});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFiles logs;
  ASSERT_TRUE(StartTwoLogIndexes(r, logs)) << r.sup.Log();
  LogFile& three = logs.three;
  r.ctl->Send(LogIndexDataflow("u5", "u6", three.path()));
  auto refused = r.ctl->ReceiveUntil([](const Response& x) { return x.has_command_error(); });
  ASSERT_TRUE(refused) << r.sup.Log();
  EXPECT_NE(refused->command_error().why().find("room for 2 indexes"), std::string::npos)
      << refused->command_error().why();
  r.ctl->Send(samples::PeekAt("still", "u2", 1));
  auto still = AwaitPeek(*r.ctl, "still");
  ASSERT_TRUE(still && still->peek_response().has_rows()) << r.sup.Log();
  r.ctl->Send(samples::Drop("u2"));
  r.ctl->Send(LogIndexDataflow("u5", "u6", three.path()));
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u6", 2)) << r.sup.Log();
  r.ctl->Send(samples::PeekAt("new", "u6", 1));
  auto fresh = AwaitPeek(*r.ctl, "new");
  ASSERT_TRUE(fresh && fresh->peek_response().has_rows()) << r.sup.Log();
  EXPECT_EQ(RowsOf(*fresh), (std::multiset<std::string>{"3,30,x1"}));
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(Runtime, AnIndexBeyondTheSlotsPerRowIsRefusedAndTheReplicaKeepsServing) {
  IndexBeyondTheSlotsPerRow(true);
}
TEST(Runtime, AnIndexBeyondTheSlotsPerRowIsRefusedAndTheReplicaKeepsServingSolo) {
  IndexBeyondTheSlotsPerRow(false);
}

// Issue 19: every lockstep worker's step statistics reach /metrics — a histogram of step
// durations and busy and waiting seconds per worker, by role — and grow while a dataflow runs
// (with two workers the loop's barriers and the index's error exchange make both wait).
TEST(Runtime, StepStatisticsOfEveryLockstepWorkerAreInMetrics) {
  Replica r;  // two-runtime, two workers
  ASSERT_TRUE(r.ready) << r.sup.Log();
  Command c = samples::EmptyDataflow("steps", 0);
  auto* d = samples::Desc(c);
  *d->add_source_imports() = samples::KeyValueImport("u2");
  *d->add_objects_to_build() = samples::Build(
      "u5",
      samples::ReducePlan(samples::GetPlan("u2"), {0}, {{ipc::pb::COUNT, 0}, {ipc::pb::SUM, 1}}));
  *d->add_index_exports() = samples::Export("u10", "u5", {0});
  r.ctl->Send(c);
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u10", 5)) << r.sup.Log();
  struct Worker {
    double count, inf, sum, busy, waiting;
  };
  auto scrape = [&](int worker) {
    const std::string m = HttpGet(r.sup.http_port(), "/metrics").body;
    const std::string labels = "role=\"maintenance\",worker=\"" + std::to_string(worker) + "\"";
    return Worker{MetricValue(m, "tandem_runtime_step_seconds_count{" + labels + "}"),
                  MetricValue(m, "tandem_runtime_step_seconds_bucket{" + labels + ",le=\"+Inf\"}"),
                  MetricValue(m, "tandem_runtime_step_seconds_sum{" + labels + "}"),
                  MetricValue(m, "tandem_runtime_worker_busy_seconds_total{" + labels + "}"),
                  MetricValue(m, "tandem_runtime_worker_waiting_seconds_total{" + labels + "}")};
  };
  const Worker before[2] = {scrape(0), scrape(1)};
  ASSERT_TRUE(AwaitUpper(*r.ctl, "u10", 200)) << r.sup.Log();  // ticks of 500 us
  for (int w = 0; w < 2; ++w) {
    const Worker after = scrape(w);
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_GT(before[w].count, 0);
    EXPECT_GT(after.count, before[w].count);
    EXPECT_EQ(after.inf, after.count) << "+Inf is every step";
    EXPECT_GT(after.sum, before[w].sum);
    EXPECT_GT(after.busy, before[w].busy);
    EXPECT_GT(after.waiting, 0);
    EXPECT_GE(after.waiting, before[w].waiting);
  }
  const std::string m = HttpGet(r.sup.http_port(), "/metrics").body;
  EXPECT_NE(m.find("# TYPE tandem_runtime_step_seconds histogram"), std::string::npos);
  EXPECT_NE(m.find("# TYPE tandem_runtime_worker_busy_seconds_total counter"), std::string::npos);
  EXPECT_NE(m.find("# TYPE tandem_runtime_worker_waiting_seconds_total counter"),
            std::string::npos);
  EXPECT_EQ(m.find("role=\"interactive\",worker="), std::string::npos)
      << "interactive has no lockstep steps";
  EXPECT_EQ(m.find("worker=\"2\""), std::string::npos) << "two workers, two series each";
}

}  // namespace
}  // namespace tandem::testing
