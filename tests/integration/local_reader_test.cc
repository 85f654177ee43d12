// LocalReader (DESIGN §11) against the real supervisor and runtimes: a reader process
// maps the segment read-only and reads indexes in place, with a peek's answers; its death (even
// mid-read, a thousand times) leaks nothing; a stopped reader never makes the publisher wait; the
// replica's death or restart makes the next call fail clearly, and Reattach works; another user is
// refused unless --reader-group lets them in.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/datum_text.h"
#include "child_process.h"
#include "client/local_reader.h"
#include "ipc/rows.h"
#include "log_source.h"
#include "replica.h"
#include "run_binary.h"
#include "shm/reader_table.h"
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
  for (const auto& [row, n] : a.rows) out.emplace_back(RowText(row), n);
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
      out.rows.emplace_back(RowText(ipc::FromProto(rc.row())),
                            static_cast<std::int64_t>(rc.count()));
    }
    std::sort(out.rows.begin(), out.rows.end());
  } else {
    out.error = p.error();
  }
  return out;
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

// A read from inside one of the reader's own callbacks would end the outer read's announcement
// while it still hands out rows from the segment: it is refused, and the outer read goes on.
TEST(LocalReader, AReadFromInsideItsOwnCallbackIsRefusedAndTheOuterReadGoesOn) {
  Replica r(true, 1);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 0 1 2 20\nU 0 1 3 30\nP 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitUpper(r, "u2", 0)) << r.sup.Log();
  auto reader = AttachOrDie(r.sup.segment());
  ASSERT_TRUE(reader);
  int rows = 0;
  Status inner;
  auto t = reader->Scan(Id("u2"), KeyRange::All(), 0, [&](const RowView&) {
    ++rows;
    inner = reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}, 0).status();
    return true;
  });
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(rows, 3);
  EXPECT_EQ(inner.code(), StatusCode::kFailedPrecondition) << inner.ToString();
  EXPECT_NE(inner.message().find("second LocalReader"), std::string::npos) << inner.ToString();
  EXPECT_TRUE(reader->Lookup(Id("u2"), Row{Datum(std::int64_t{1})}, 0).ok()) << "not busy after";
}

// A forked child shares its parent's reader-table entry and lock: a reader it inherited refuses
// every call, and destroying it there leaves the parent's entry — claimed, announcing — as it was.
TEST(LocalReader, AForkedChildNeitherUsesNorReleasesItsParentsReader) {
  Replica r(true, 1);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 0 1 2 20\nP 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitUpper(r, "u2", 0)) << r.sup.Log();
  auto reader = AttachOrDie(r.sup.segment());
  ASSERT_TRUE(reader);
  auto table = shm::ReaderTable::Open(r.sup.segment());
  ASSERT_TRUE(table.ok());
  auto announced = [&] {
    int n = 0;
    for (std::uint32_t i = 0; i < shm::kReaderTableEntries; ++i) {
      n += (*table)->slot(i).pid.load() == getpid() &&
           (*table)->slot(i).version.load() != shm::kReaderIdle;
    }
    return n;
  };
  auto t = reader->Scan(Id("u2"), KeyRange::All(), 0, [&](const RowView&) {
    // Mid-read: the parent announces. A child refuses to read and then lets its copy go.
    const pid_t child = fork();
    if (child == 0) {
      const Status s = reader->LatestReadable(Id("u2")).status();
      const bool refused = s.code() == StatusCode::kFailedPrecondition &&
                           s.message().find("fork") != std::string::npos;
      reader.reset();
      _exit(refused ? 0 : 1);
    }
    int status = 0;
    EXPECT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child used the reader";
    EXPECT_EQ(announced(), 1) << "the child released the parent's announcement";
    auto other = (*table)->Claim();  // a new reader must get another entry
    EXPECT_TRUE(other.ok());
    if (other.ok()) {
      EXPECT_NE((*other)->index(), 0u) << "entry 0 is the parent's";
    }
    return false;
  });
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(announced(), 0);
}

// Scans at the latest time while the controller compacts right behind the upper: a part found
// compacted after others were handed out is not read again (no row twice).
TEST(LocalReader, LatestScansRacingCompactionNeverHandOutARowTwice) {
  Replica r(true, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  std::atomic<bool> stop{false};
  LogFile log;
  std::string lines;
  for (int k = 0; k < 300; ++k) lines += "U 0 1 " + std::to_string(k) + " 7\n";
  log.Append(lines + "P 1\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitUpper(r, "u2", 0)) << r.sup.Log();
  std::atomic<int> compactions{0};
  std::thread churn([&] {
    for (Time t = 1; !stop; ++t) {
      log.Append("U " + std::to_string(t) + " 1 " + std::to_string(1000 + t) + " 1\nU " +
                 std::to_string(t) + " -1 " + std::to_string(1000 + t) + " 1\nP " +
                 std::to_string(t + 1) + "\n");
      // Right behind the write frontier the controller saw (the minimum over the index's parts),
      // as a controller compacts: one part may be past it, another not yet.
      Time frontier = 0;
      r.ctl->ReceiveUntil(
          [&](const Response& x) {
            if (x.has_frontiers() && x.frontiers().id() == "u2" &&
                !x.frontiers().write().elements().empty()) {
              frontier = x.frontiers().write().elements(0);
            }
            return false;
          },
          std::chrono::milliseconds(1));
      if (frontier > 0) {
        r.ctl->Send(samples::AllowCompaction("u2", {frontier - 1}));
        ++compactions;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  auto reader = AttachOrDie(r.sup.segment());
  int scans = 0, refused = 0;
  std::string why;
  // At least 2,000 scans, and on until the controller has compacted often enough for the race to
  // have run (a fast machine finishes 2,000 scans in ~0.2 s), within 10 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int i = 0; (i < 2000 || compactions.load() <= 20) &&
                  std::chrono::steady_clock::now() < deadline && reader;
       ++i) {
    auto a = reader->Scan(Id("u2"), KeyRange::All());
    if (!a.ok()) {
      ++refused;
      why = a.status().ToString();
      continue;
    }
    ++scans;
    std::set<std::string> seen;
    for (const auto& [row, n] : a->rows) {
      ASSERT_TRUE(seen.insert(RowText(row)).second) << "row " << RowText(row) << " twice";
      ASSERT_EQ(n, 1);
    }
    ASSERT_EQ(a->rows.size(), 300u) << "at time " << a->time;
  }
  stop = true;
  churn.join();
  EXPECT_GT(scans, 1000) << refused << " refused, the last: " << why;
  EXPECT_GT(compactions.load(), 20) << "the index hardly compacted: the race was not run";
}

// tandem-shm read is LocalReader on the command line: the same answers, the same errors.
TEST(LocalReader, TandemShmReadShowsWhatTheLibraryReads) {
  Replica r(true, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 0 1 2 20\nU 0 1 2 21\nP 1\nU 1 1 1 11\nP 2\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  ASSERT_TRUE(AwaitUpper(r, "u2", 1)) << r.sup.Log();
  const BinaryRun key = RunBinary(
      TANDEM_SHM_BIN, {"read", r.sup.segment(), "u2", "--key", "2", "--at", "0", "--json"});
  ASSERT_EQ(key.exit, 0) << DescribeRun(key);
  EXPECT_NE(key.out.find("\"time\":0"), std::string::npos) << key.out;
  EXPECT_NE(key.out.find("{\"row\":[2,20],\"count\":1}"), std::string::npos) << key.out;
  EXPECT_NE(key.out.find("{\"row\":[2,21],\"count\":1}"), std::string::npos) << key.out;
  const BinaryRun latest =
      RunBinary(TANDEM_SHM_BIN, {"read", r.sup.segment(), "u2", "--prefix", "1"});
  ASSERT_EQ(latest.exit, 0) << DescribeRun(latest);
  EXPECT_NE(latest.out.find("u2 in " + r.sup.segment() + " at time 1"), std::string::npos)
      << latest.out;
  EXPECT_NE(latest.out.find("2 rows"), std::string::npos) << latest.out;
  const BinaryRun unknown = RunBinary(TANDEM_SHM_BIN, {"read", r.sup.segment(), "u77"});
  EXPECT_EQ(unknown.exit, 1) << DescribeRun(unknown);
  EXPECT_NE(unknown.err.find("not an index"), std::string::npos) << unknown.err;
  const BinaryRun both =
      RunBinary(TANDEM_SHM_BIN, {"read", r.sup.segment(), "u2", "--key", "1", "--prefix", "1"});
  EXPECT_EQ(both.exit, 64) << DescribeRun(both);
  const BinaryRun future = RunBinary(TANDEM_SHM_BIN, {"read", r.sup.segment(), "u2", "--at", "9"});
  EXPECT_EQ(future.exit, 1) << DescribeRun(future);
  EXPECT_NE(future.err.find("not complete yet"), std::string::npos) << future.err;
}

// ---- readers that die, hang or are not allowed ----------------------------------------------

// Segment bytes that are not the current batches of a live slot: the registry, batch lists, and
// retired batches not freed yet — what a reader's announcement keeps, and a leak would grow.
std::uint64_t Overhead(const std::string& segment) {
  auto seg = shm::Segment::Open(segment);
  if (!seg.ok()) return 0;
  shm::Registry registry(seg->get());
  std::uint64_t batches = 0;
  for (std::uint32_t o = 0; o < registry.workers(); ++o) {
    for (std::uint32_t j = 0; j < registry.slots_per_row(); ++j) {
      const shm::SlotData& s = registry.slot(o, j);
      if (s.state.load() == static_cast<std::uint32_t>(shm::SlotState::kLive)) {
        batches += s.bytes.load();
      }
    }
  }
  return (*seg)->used_bytes() - batches;
}

// A probe process (tests/helpers/local_reader_probe.cc) stopped mid-read: it announced a batch
// list of `index` and stopped itself at the first row. -1 if it never got there.
pid_t StartStoppedReader(const std::string& segment, const std::string& index) {
  const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  const pid_t pid =
      SpawnTiedToTest({TANDEM_LOCAL_READER_PROBE_BIN, "stop-mid-read", segment, index},
                      ChildEnvironment(true), null, null);
  close(null);
  if (pid < 0) return -1;
  int status = 0;
  const bool stopped =
      Eventually([&] { return waitpid(pid, &status, WNOHANG | WUNTRACED) == pid; }, 20s);
  if (!stopped || !WIFSTOPPED(status)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

// u2 over a log that the test keeps appending to: `Step` adds a batch of rows at the next time,
// retracts the previous step's, and allows compaction to the time before — so the publisher keeps
// appending, merging and retiring batches.
struct ChurningIndex {
  explicit ChurningIndex(Replica& replica) : r(replica) {
    std::string lines;
    for (int k = 0; k < 500; ++k) lines += "U 0 1 " + std::to_string(k) + " 7\n";
    log.Append(lines + "P 1\n");
    r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  }
  bool Step() {
    std::string lines;
    for (int k = 0; k < 200; ++k) {
      lines += "U " + std::to_string(t) + " 1 " + std::to_string(100000 + t * 1000 + k) + " 1\n";
      if (t > 1) {
        lines += "U " + std::to_string(t) + " -1 " + std::to_string(100000 + (t - 1) * 1000 + k) +
                 " 1\n";
      }
    }
    log.Append(lines + "P " + std::to_string(t + 1) + "\n");
    r.ctl->Send(samples::AllowCompaction("u2", {t}));
    return AwaitUpper(r, "u2", t++);
  }
  Replica& r;
  LogFile log;
  Time t = 1;
};

// A reader stopped mid-read (SIGSTOP, holding its announcement) never makes the publisher wait:
// the index keeps advancing and merging. What it can see stays allocated until it finishes, and
// is freed then.
TEST(LocalReaderFaults, AStoppedReaderNeverMakesThePublisherWaitAndWhatItPinsIsFreedAfter) {
  Replica r(true, 1);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  ChurningIndex index(r);
  ASSERT_TRUE(AwaitUpper(r, "u2", 0)) << r.sup.Log();
  const std::uint64_t before = Overhead(r.sup.segment());
  const pid_t reader = StartStoppedReader(r.sup.segment(), "u2");
  ASSERT_GT(reader, 0);
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(index.Step()) << "the publisher waited at step " << i;
  }
  const std::uint64_t pinned = Overhead(r.sup.segment());
  kill(reader, SIGCONT);
  int status = 0;
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // The next merges free what only the reader's announcement kept.
  std::uint64_t after = 0;
  EXPECT_TRUE(Eventually(
      [&] {
        index.Step();
        after = Overhead(r.sup.segment());
        return after < before + (256u << 10);
      },
      20s))
      << "before " << before << ", while stopped " << pinned << ", after " << after;
  // The stopped reader did pin retired batches (the check above is not vacuous).
  EXPECT_GT(pinned, after + (256u << 10)) << "before " << before << ", after " << after;
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

// Readers SIGKILLed mid-read, again and again while the index merges: the supervisor clears each
// dead reader's entry (or a new reader takes it over), nothing stays pinned, and the segment's
// bytes besides the live batches come back to where they started.
TEST(LocalReaderFaults, ReadersKilledMidReadAThousandTimesLeakNothing) {
  const int kills = std::getenv("TANDEM_TEST_SANITIZER") ? 100 : 1000;
  Replica r(true, 1);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  ChurningIndex index(r);
  ASSERT_TRUE(AwaitUpper(r, "u2", 0)) << r.sup.Log();
  const std::uint64_t before = Overhead(r.sup.segment());
  for (int i = 0; i < kills; ++i) {
    const pid_t reader = StartStoppedReader(r.sup.segment(), "u2");
    ASSERT_GT(reader, 0) << "kill " << i << "\n" << r.sup.Log();
    if (i % 10 == 0) {
      ASSERT_TRUE(index.Step()) << "kill " << i;
    }
    kill(reader, SIGKILL);
    ASSERT_EQ(waitpid(reader, nullptr, 0), reader);
  }
  auto table = shm::ReaderTable::Open(r.sup.segment());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::uint64_t after = 0;
  EXPECT_TRUE(Eventually(
      [&] {
        index.Step();
        after = Overhead(r.sup.segment());
        bool clear = true;
        for (std::uint32_t i = 0; i < shm::kReaderTableEntries; ++i) {
          const auto& e = (*table)->slot(i);
          clear = clear && e.pid.load() == 0 && e.version.load() == shm::kReaderIdle;
        }
        return clear && after < before + (256u << 10);
      },
      20s))
      << "before " << before << ", after " << after;
  EXPECT_GT((*table)->header().claims.load(), static_cast<std::uint64_t>(kills) - 1);
  EXPECT_NE(MetricValue(HttpGet(r.sup.http_port(), "/metrics").body, "tandem_local_readers"), -1);
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

// Runs the probe's `attach` as uid/gid 65534 (nobody) with the supplementary `groups`.
BinaryRun AttachAs(const std::string& segment, const std::vector<gid_t>& groups) {
  return RunAsUser(TANDEM_LOCAL_READER_PROBE_BIN, {"attach", segment}, groups);
}

// Only the replica's user may attach — unless --reader-group names a group the reader is in.
TEST(LocalReaderFaults, AUserOutsideTheReaderGroupIsRefusedAndAMemberReads) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a reader as another user";
  constexpr gid_t kGroup = 4242;
  {
    Replica r(true, 1);
    ASSERT_TRUE(r.ready) << r.sup.Log();
    const BinaryRun refused = AttachAs(r.sup.segment(), {kGroup});
    EXPECT_EQ(refused.exit, 2) << DescribeRun(refused);
    EXPECT_NE(refused.out.find("permission denied"), std::string::npos) << refused.out;
    EXPECT_NE(refused.out.find("--reader-group"), std::string::npos) << refused.out;
  }
  Replica r(true, 1, {"--reader-group", std::to_string(kGroup)});
  ASSERT_TRUE(r.ready) << r.sup.Log();
  struct stat st {};
  ASSERT_EQ(stat(("/dev/shm/" + r.sup.segment()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(st.st_gid, kGroup);
  ASSERT_EQ(stat(("/dev/shm/" + shm::ReaderTableName(r.sup.segment())).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  const BinaryRun member = AttachAs(r.sup.segment(), {kGroup});
  EXPECT_EQ(member.exit, 0) << DescribeRun(member);
  const BinaryRun outsider = AttachAs(r.sup.segment(), {});
  EXPECT_EQ(outsider.exit, 2) << DescribeRun(outsider);
  EXPECT_NE(outsider.out.find("permission denied"), std::string::npos) << outsider.out;
}

}  // namespace
}  // namespace tandem::testing
