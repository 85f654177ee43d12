// LocalReader (issue 17, DESIGN §11) against the real supervisor and runtimes: a reader process
// maps the segment read-only and reads indexes in place, with a peek's answers; its death (even
// mid-read, a thousand times) leaks nothing; a stopped reader never makes the publisher wait; the
// replica's death or restart makes the next call fail clearly, and Reattach works; another user is
// refused unless --reader-group lets them in.
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "client/local_reader.h"
#include "ipc/rows.h"
#include "log_source.h"
#include "replica.h"
#include "supervisor_harness.h"
#include "unit/protocol_samples.h"

namespace tandem::testing {
namespace {

using ipc::pb::Response;
namespace samples = ipc::samples;

GlobalId Id(const char* text) { return *GlobalId::Parse(text); }

// Rows with counts, sorted: the order-free form of an answer.
using Counted = std::vector<std::pair<std::string, std::int64_t>>;

Counted OfLocal(const LocalAnswer& a) {
  Counted out;
  for (const auto& [row, n] : a.rows) out.emplace_back(RowToString(row), n);
  std::sort(out.begin(), out.end());
  return out;
}

// u2's answer to a peek at t (scan, or under one key), as rows or its error.
struct PeekResult {
  Counted rows;
  std::string error;
  bool answered = false;
};
PeekResult PeekU(Replica& r, const std::string& id, Time t, std::optional<std::int64_t> key = {}) {
  static int n = 0;
  const std::string uuid = "p" + std::to_string(++n);
  r.ctl->Send(samples::PeekAt(uuid, id, t, key));
  auto resp = r.ctl->ReceiveUntil(
      [&](const Response& x) { return x.has_peek_response() && x.peek_response().uuid() == uuid; },
      10s);
  PeekResult out;
  if (!resp) return out;
  out.answered = true;
  const auto& p = resp->peek_response();
  if (p.has_rows()) {
    for (const auto& rc : p.rows().rows()) {
      out.rows.emplace_back(RowToString(ipc::FromProto(rc.row())),
                            static_cast<std::int64_t>(rc.count()));
    }
    std::sort(out.rows.begin(), out.rows.end());
  } else {
    out.error = p.error();
  }
  return out;
}

// Waits until index `id`'s write frontier passes `t` (its Frontiers on the controller session).
bool AwaitUpper(Replica& r, const std::string& id, Time t) {
  return r.ctl
      ->ReceiveUntil(
          [&](const Response& x) {
            if (!x.has_frontiers() || x.frontiers().id() != id) return false;
            const auto& w = x.frontiers().write().elements();
            return w.empty() || w[0] > t;
          },
          10s)
      .has_value();
}

std::unique_ptr<LocalReader> AttachOrDie(const std::string& segment) {
  auto reader = LocalReader::Attach(segment);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  return reader.ok() ? std::move(reader).value() : nullptr;
}

void LookupsAndScansEqualPeeks(bool two_runtime, int workers) {
  SCOPED_TRACE(std::string(two_runtime ? "two-runtime" : "solo") + " N=" + std::to_string(workers));
  Replica r(two_runtime, workers);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  // Keys 0..19 at times 0..4, with retractions, duplicates and a row whose count goes to zero.
  std::string lines;
  for (int t = 0; t < 5; ++t) {
    for (int k = 0; k < 20; ++k) {
      lines += "U " + std::to_string(t) + " 1 " + std::to_string(k) + " " +
               std::to_string(k * 10 + t) + "\n";
      if (t > 0 && k % 3 == 0) {
        lines += "U " + std::to_string(t) + " -1 " + std::to_string(k) + " " +
                 std::to_string(k * 10 + t - 1) + "\n";
      }
    }
    lines += "P " + std::to_string(t + 1) + "\n";
  }
  log.Append(lines);
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitUpper(r, "u2", 4)) << r.sup.Log();

  auto reader = AttachOrDie(r.sup.segment());
  ASSERT_TRUE(reader);
  for (Time t = 0; t < 5; ++t) {
    const PeekResult scan = PeekU(r, "u2", t);
    ASSERT_TRUE(scan.answered && scan.error.empty()) << scan.error;
    auto local = reader->Scan(Id("u2"), KeyRange::All(), t);
    ASSERT_TRUE(local.ok()) << local.status().ToString();
    EXPECT_EQ(local->time, t);
    EXPECT_EQ(OfLocal(*local), scan.rows) << "scan at " << t;
    for (std::int64_t k = -1; k < 21; ++k) {
      const PeekResult peek = PeekU(r, "u2", t, k);
      auto one = reader->Lookup(Id("u2"), Row{Datum(k)}, t);
      ASSERT_TRUE(one.ok()) << one.status().ToString();
      EXPECT_EQ(OfLocal(*one), peek.rows) << "key " << k << " at " << t;
    }
  }
  // Latest: the index's upper is 5, so the latest readable time is 4.
  auto latest = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{3})});
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->time, 4u);
  // Ranges and prefixes over the key (k): [5, 8) holds keys 5, 6, 7.
  auto range = reader->Scan(
      Id("u2"), KeyRange::Between(Row{Datum(std::int64_t{5})}, Row{Datum(std::int64_t{8})}), 4);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  std::set<std::int64_t> keys;
  for (const auto& [row, n] : range->rows) keys.insert(std::get<std::int64_t>(row[0]));
  EXPECT_EQ(keys, (std::set<std::int64_t>{5, 6, 7}));
  auto prefix = reader->Scan(Id("u2"), KeyRange::Prefix(Row{Datum(std::int64_t{9})}), 4);
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(OfLocal(*prefix), PeekU(r, "u2", 4, 9).rows);

  // What a peek refuses, the reader refuses: a time not complete yet, an unknown index.
  auto future = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}, 5);
  EXPECT_EQ(future.status().code(), StatusCode::kFailedPrecondition) << future.status().ToString();
  EXPECT_NE(future.status().message().find("not complete yet"), std::string::npos);
  auto unknown = reader->Lookup(Id("u77"), Row{Datum(std::int64_t{1})});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound) << unknown.status().ToString();
  // Compacted: the controller allows compaction to 3; once since passes 2, a read at 2 fails as a
  // peek does, and the latest still reads.
  r.ctl->Send(samples::AllowCompaction("u2", {3}));
  ASSERT_TRUE(Eventually(
      [&] {
        auto old = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}, 2);
        return !old.ok() && old.status().message().find("compacted") != std::string::npos;
      },
      10s));
  EXPECT_FALSE(PeekU(r, "u2", 2).error.empty());
  EXPECT_TRUE(reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}).ok());
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

TEST(LocalReader, LookupsAndScansEqualPeeksTwoRuntimeOneWorker) {
  LookupsAndScansEqualPeeks(true, 1);
}
TEST(LocalReader, LookupsAndScansEqualPeeksTwoRuntimeTwoWorkers) {
  LookupsAndScansEqualPeeks(true, 2);
}
TEST(LocalReader, LookupsAndScansEqualPeeksSoloFourWorkers) { LookupsAndScansEqualPeeks(false, 4); }

// The index's error at a time is the reader's DataError, with the message a peek answers.
TEST(LocalReader, AnIndexErrorIsADataErrorWithThePeeksMessage) {
  Replica r(true, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 0 1 2 20\nP 1\nU 1 1 3 0\nP 2\n");
  // u2 = u1 with v / 0 … no: v / divisor, and divisor 0 divides every row by zero.
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path(), 0, 0));
  ASSERT_TRUE(AwaitUpper(r, "u2", 1)) << r.sup.Log();
  auto reader = AttachOrDie(r.sup.segment());
  ASSERT_TRUE(reader);
  const PeekResult peek = PeekU(r, "u2", 1);
  ASSERT_FALSE(peek.error.empty());
  auto local = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}, 1);
  EXPECT_EQ(local.status().code(), StatusCode::kDataError) << local.status().ToString();
  EXPECT_EQ(local.status().message(), peek.error);
  auto scan = reader->Scan(Id("u2"), KeyRange::All(), 1);
  EXPECT_EQ(scan.status().message(), peek.error);
}

// The replica goes away under a reader: the next call says so (the header's closed flag, or the
// supervisor's lock); a new replica of the same name is "restarted", and Reattach reads it.
TEST(LocalReader, TheReplicasDeathAndRestartAreClearErrorsAndReattachWorks) {
  SupervisorOptions o{
      .two_runtime = true, .workers = 1, .worker_binary = TANDEM_WORKER_BIN, .shm_size = "64MiB"};
  auto sup = std::make_unique<SupervisorProcess>(o);
  ASSERT_TRUE(sup->WaitReady()) << sup->Log();
  const std::string segment = sup->segment();
  LogFile log;
  log.Append("U 0 1 1 10\nP 1\n");
  {
    TestController ctl(sup->controller_endpoint());
    ASSERT_TRUE(ctl.Hello());
    ctl.Send(LogIndexDataflow("u1", "u2", log.path()));
  }
  auto reader = AttachOrDie(segment);
  ASSERT_TRUE(reader);
  ASSERT_TRUE(
      Eventually([&] { return reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}).ok(); }, 10s));
  // SIGKILL: the supervisor cannot mark anything; its lock goes with it.
  kill(sup->pid(), SIGKILL);
  ASSERT_TRUE(sup->WaitExit(10s));
  Status status;
  ASSERT_TRUE(Eventually(
      [&] {
        status = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}).status();
        return !status.ok();
      },
      5s));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_NE(status.message().find("is gone"), std::string::npos) << status.ToString();

  // A new replica under the same name: "restarted", then Reattach reads the new one.
  o.segment_name = segment;
  auto again = std::make_unique<SupervisorProcess>(o);
  ASSERT_TRUE(again->WaitReady()) << again->Log();
  {
    TestController ctl(again->controller_endpoint());
    ASSERT_TRUE(ctl.Hello());
    ctl.Send(LogIndexDataflow("u1", "u2", log.path()));
  }
  status = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}).status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);  // sticky until Reattach
  auto fresh = LocalReader::Attach(segment);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_NE((*fresh)->generation(), reader->generation());
  ASSERT_TRUE(reader->Reattach().ok());
  ASSERT_TRUE(
      Eventually([&] { return reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}).ok(); }, 10s));
  // SIGTERM: the supervisor marks the segment closed before it goes.
  kill(again->pid(), SIGTERM);
  ASSERT_EQ(again->WaitExit(10s), 0);
  status = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}).status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  auto gone = LocalReader::Attach(segment);
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound) << gone.status().ToString();
}

}  // namespace
}  // namespace tandem::testing
