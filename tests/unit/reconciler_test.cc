// The reconciler alone (workers/reconciler.h): what a runtime applies after a new controller's
// Hello, replay and InitializationComplete.
#include "workers/reconciler.h"

#include <gtest/gtest.h>

#include "ipc/model.h"
#include "unit/protocol_samples.h"

namespace tandem::workers::reconciler_test {
namespace {

namespace s = ipc::samples;
using ipc::pb::Command;

// A dataflow from a log source `src` to one index `idx` per extra id in `indexes`.
Command Dataflow(const std::string& src, std::vector<std::string> indexes) {
  Command c = s::EmptyDataflow("df " + src);
  auto* d = s::Desc(c);
  *d->add_source_imports() = s::LogImport(src);
  for (const auto& idx : indexes) *d->add_index_exports() = s::Export(idx, src, {0});
  return c;
}

// Admits `c` and tracks what it applies, numbering the log like the runtime; returns what to
// apply, as command descriptions.
struct Harness {
  Reconciler r;
  std::uint64_t seq = 0;
  std::optional<ipc::pb::Status::Reconciled> last;
  std::vector<std::string> Admit(Command c) {
    auto admitted = r.Admit(std::move(c));
    std::vector<std::string> applied;
    for (const auto& a : admitted.apply) {
      r.Track(a, seq++);
      applied.push_back(ipc::Describe(a));
    }
    if (admitted.reconciled) last = admitted.reconciled;
    return applied;
  }
};

TEST(Reconciler, WithNothingRunningAHelloHoldsNothingBack) {
  Harness h;
  EXPECT_TRUE(h.Admit(s::Hello()).empty());
  EXPECT_FALSE(h.r.holding());
  EXPECT_EQ(h.Admit(Dataflow("u1", {"u2"})).size(), 1u);
  EXPECT_TRUE(h.r.IsLiveExport("u2"));
}

TEST(Reconciler, KeepsTheUnchangedDropsTheOmittedAndBuildsTheNew) {
  Harness h;
  h.Admit(s::Hello());
  const Command keep = Dataflow("u1", {"u2"});
  const Command omit = Dataflow("u3", {"u4", "u5"});
  h.Admit(keep);
  h.Admit(omit);
  h.Admit(s::Hello("second"));
  EXPECT_TRUE(h.r.holding());
  EXPECT_TRUE(h.Admit(keep).empty()) << "held back until InitializationComplete";
  EXPECT_TRUE(h.Admit(Dataflow("u6", {"u7"})).empty());
  const auto applied = h.Admit(s::InitializationComplete());
  ASSERT_EQ(applied.size(), 3u);
  EXPECT_EQ(applied[0].rfind("AllowCompaction(u4", 0), 0u) << applied[0];
  EXPECT_EQ(applied[1].rfind("AllowCompaction(u5", 0), 0u) << applied[1];
  EXPECT_EQ(applied[2].rfind("CreateDataflow(", 0), 0u) << applied[2];
  ASSERT_TRUE(h.last);
  EXPECT_EQ(h.last->kept(), 1u);
  EXPECT_EQ(h.last->dropped(), 1u);
  EXPECT_EQ(h.last->built(), 1u);
  EXPECT_TRUE(h.r.IsLiveExport("u2"));
  EXPECT_FALSE(h.r.IsLiveExport("u4"));
  EXPECT_TRUE(h.r.IsLiveExport("u7"));
  EXPECT_FALSE(h.r.holding());
}

TEST(Reconciler, AnExportDroppedBeforeIsNotDroppedAgain) {
  Harness h;
  h.Admit(s::Hello());
  h.Admit(Dataflow("u1", {"u2", "u3"}));
  h.Admit(s::Drop("u3"));
  EXPECT_FALSE(h.r.IsLiveExport("u3"));
  h.Admit(s::Hello("second"));
  const auto applied = h.Admit(s::InitializationComplete());
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].rfind("AllowCompaction(u2", 0), 0u) << applied[0];
}

TEST(Reconciler, AnObserversReadsAreNotHeldBackButTheControllersPeeksAre) {
  Harness h;
  h.Admit(s::Hello());
  h.Admit(Dataflow("u1", {"u2"}));
  h.Admit(s::Hello("second"));
  Command observer = s::Peek(ipc::WireUuid(3, "a"));
  observer.mutable_peek()->set_id("u2");
  EXPECT_EQ(h.Admit(observer).size(), 1u) << "an observer reads what runs now";
  EXPECT_EQ(h.Admit(s::CancelPeek(ipc::WireUuid(3, "a"))).size(), 1u);
  // The controller's peek of the same index waits: its replay may redefine u2.
  Command own = s::Peek("b");
  own.mutable_peek()->set_id("u2");
  EXPECT_TRUE(h.Admit(own).empty());
  // A controller uuid that looks like an observer's reaches the runtime escaped ("~c:~o…").
  EXPECT_TRUE(h.Admit(s::Peek(ipc::WireUuid(ipc::kControllerSession, "~o1:x"))).empty());
  const auto applied = h.Admit(s::InitializationComplete());
  ASSERT_EQ(applied.size(), 3u);  // the drop of u2 (not replayed), then the two held peeks
  EXPECT_EQ(applied[1].rfind("Peek(b", 0), 0u) << applied[1];
}

// An id dropped, created again in another dataflow and dropped again: the second drop is the
// newer dataflow's (it used to be taken for the older one, which had dropped that id already).
TEST(Reconciler, ASecondDropOfAReusedIdDropsTheNewerDataflow) {
  Harness h;
  h.Admit(s::Hello());
  h.Admit(Dataflow("u1", {"u2", "u3"}));
  h.Admit(s::Drop("u3"));
  h.Admit(Dataflow("u4", {"u3"}));
  EXPECT_TRUE(h.r.IsLiveExport("u3"));
  h.Admit(s::Drop("u3"));
  EXPECT_FALSE(h.r.IsLiveExport("u3"));
  EXPECT_TRUE(h.r.IsLiveExport("u2"));
  h.Admit(s::Hello("second"));
  const auto applied = h.Admit(s::InitializationComplete());
  ASSERT_EQ(applied.size(), 1u) << "only u2 runs";
  EXPECT_EQ(applied[0].rfind("AllowCompaction(u2", 0), 0u) << applied[0];
}

TEST(Reconciler, ANewHelloForgetsAnUnfinishedReplay) {
  Harness h;
  h.Admit(s::Hello());
  const Command keep = Dataflow("u1", {"u2"});
  h.Admit(keep);
  h.Admit(s::Hello("second"));
  h.Admit(Dataflow("u3", {"u4"}));  // replayed, then that controller went away
  h.Admit(s::Hello("third"));
  h.Admit(keep);
  EXPECT_TRUE(h.Admit(s::InitializationComplete()).empty()) << "kept u2; u4 was never built";
  EXPECT_EQ(h.last->kept(), 1u);
  EXPECT_EQ(h.last->built(), 0u);
}

Command WriteTo(const std::string& table) {
  Command write;
  write.mutable_write_table()->set_uuid("~w1:a");
  write.mutable_write_table()->set_id(table);
  return write;
}

// A writer's write to a table that runs now is not held behind a controller's replay: it was
// validated against what runs, and waits for nobody's InitializationComplete.
TEST(Reconciler, AWriteToARunningTableGoesThroughWhileAReplayIsHeld) {
  Harness h;
  h.Admit(s::Hello());
  h.Admit(Dataflow("u1", {"u2"}));
  h.Admit(s::Hello("second"));
  ASSERT_TRUE(h.r.holding());
  const auto applied = h.Admit(WriteTo("u1"));
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].rfind("WriteTable", 0), 0u) << applied[0];
}

// Every write is answered (DESIGN §9): a write held with a replay (to a table the replay creates)
// that a newer Hello abandons is not dropped with it — it is applied after the next replay.
TEST(Reconciler, AWriteHeldWithAnAbandonedReplayIsAppliedAfterTheNextOne) {
  Harness h;
  h.Admit(s::Hello());
  const Command keep = Dataflow("u1", {"u2"});
  h.Admit(keep);
  h.Admit(s::Hello("second"));
  h.Admit(keep);
  h.Admit(Dataflow("u9", {"u10"}));
  EXPECT_TRUE(h.Admit(WriteTo("u9")).empty()) << "u9 does not run yet: held with the replay";
  h.Admit(s::Hello("third"));  // abandons the second replay
  h.Admit(keep);
  const auto applied = h.Admit(s::InitializationComplete());
  ASSERT_EQ(applied.size(), 1u) << "the kept dataflow is not rebuilt; the write is applied";
  EXPECT_EQ(applied[0].rfind("WriteTable", 0), 0u) << applied[0];
}

}  // namespace
}  // namespace tandem::workers::reconciler_test
