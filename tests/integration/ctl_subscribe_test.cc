// tandem-ctl subscribe (DESIGN §10, issue 16), the real binary against a real two-runtime replica
// (tandem-supervisor with tandem-worker, two workers): the snapshot and the changes it prints, in
// text and --json, their consolidation against peeks, and every way it ends — --up-to, the index
// closing, --for, SIGINT/SIGTERM (a clean cancel: the replica keeps serving), a stalled stdout
// and then the supervisor killed (exit 69, never an abort), the index dropped, a compacted as_of,
// and refusals.
#include <fcntl.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

#include "run_binary.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

namespace gpb = google::protobuf;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

gpb::Struct Json(const std::string& text) {
  gpb::Struct doc;
  const auto st = gpb::util::JsonStringToMessage(text, &doc);
  EXPECT_TRUE(st.ok()) << "not one JSON object: " << text;
  return doc;
}
bool Has(const gpb::Struct& doc, const std::string& name) { return doc.fields().count(name) > 0; }
const gpb::Value& Field(const gpb::Struct& doc, const std::string& name) {
  static const gpb::Value kMissing;
  auto it = doc.fields().find(name);
  EXPECT_NE(it, doc.fields().end()) << "no field " << name;
  return it == doc.fields().end() ? kMissing : it->second;
}
std::string JsonText(const gpb::Value& v) {
  std::string out;
  (void)gpb::util::MessageToJsonString(v, &out);
  return out;
}

// What a --json subscribe printed: its updates, the uppers of its progress lines, its end.
struct Stream {
  struct Update {
    std::uint64_t time;
    std::int64_t diff;
    std::string row;  // the JSON of the row
  };
  std::vector<Update> updates;
  std::vector<std::optional<std::uint64_t>> progress;  // nullopt: closed
  std::string end, detail;
  std::string error;  // the failure document's reason, if any
};

Stream ParseJsonStream(const std::string& out) {
  Stream s;
  for (const auto& line : Lines(out)) {
    const gpb::Struct doc = Json(line);
    if (Has(doc, "time")) {
      EXPECT_TRUE(s.end.empty()) << "an update after the end: " << line;
      s.updates.push_back({static_cast<std::uint64_t>(Field(doc, "time").number_value()),
                           static_cast<std::int64_t>(Field(doc, "diff").number_value()),
                           JsonText(Field(doc, "row"))});
    } else if (Has(doc, "progress")) {
      const auto& p = Field(doc, "progress");
      const bool closed = Field(doc, "closed").bool_value();
      EXPECT_EQ(p.kind_case() == gpb::Value::kNullValue, closed) << line;
      s.progress.push_back(closed ? std::nullopt
                                  : std::optional(static_cast<std::uint64_t>(p.number_value())));
    } else if (Has(doc, "end")) {
      s.end = Field(doc, "end").string_value();
      s.detail = Field(doc, "detail").string_value();
    } else if (Has(doc, "error")) {
      s.error = Field(doc, "error").string_value();
    } else {
      ADD_FAILURE() << "unexpected line " << line;
    }
  }
  return s;
}

// The stream's consolidated contents at `t`: every update at a time <= t, summed per row.
std::map<std::string, std::int64_t> ContentsAt(const Stream& s, std::uint64_t t) {
  std::map<std::string, std::int64_t> sum;
  for (const auto& u : s.updates) {
    if (u.time <= t) sum[u.row] += u.diff;
  }
  std::erase_if(sum, [](const auto& e) { return e.second == 0; });
  return sum;
}

// The rows of a `peek --json` answer as the same map.
std::map<std::string, std::int64_t> PeekRows(const std::string& out) {
  std::map<std::string, std::int64_t> rows;
  const auto lines = Lines(out);
  if (lines.empty()) return rows;
  const gpb::Struct doc = Json(lines.back());
  for (const auto& r : Field(doc, "rows").list_value().values()) {
    rows[JsonText(Field(r.struct_value(), "row"))] +=
        static_cast<std::int64_t>(Field(r.struct_value(), "count").number_value());
  }
  return rows;
}

// A tandem-ctl that runs while the test reads its output as it comes (and signals it).
class RunningCtl {
 public:
  explicit RunningCtl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {TANDEM_CTL_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return;
    // Only our ends do not block (Pump takes what is there): the command's stdout and stderr
    // block when full, as a shell's pipes do.
    for (int fd : {out[0], err[0]}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    pid_ = SpawnTiedToTest(argv, ChildEnvironment(true), out[1], err[1]);
    close(out[1]);
    close(err[1]);
    fds_[0] = out[0];
    fds_[1] = err[0];
  }
  ~RunningCtl() {
    if (pid_ > 0 && !status_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  RunningCtl(const RunningCtl&) = delete;
  RunningCtl& operator=(const RunningCtl&) = delete;

  bool started() const { return pid_ > 0; }
  // Closes our end of its stdout (a reader that went away, as `| head` does).
  void CloseStdout() {
    if (fds_[0] >= 0) close(fds_[0]);
    fds_[0] = -1;
  }
  void Signal(int sig) { kill(pid_, sig); }

  // Reads until `done(out)` holds, both pipes close, or `limit` passes.
  bool ReadUntil(const std::function<bool(const std::string&)>& done,
                 std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done(out)) {
      if (fds_[0] < 0 && fds_[1] < 0) return false;
      const auto left = ipc::Left(deadline).count();
      if (left <= 0) return false;
      Pump(static_cast<int>(std::min<long long>(left, 100)));
    }
    return true;
  }
  // The exit status once it ended (everything read), or nullopt after `limit`.
  std::optional<int> Wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!status_ && ipc::Left(deadline).count() > 0) {
      Pump(20);
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
    }
    // What is still in the pipes (the writer is gone: they close).
    while (status_ && (fds_[0] >= 0 || fds_[1] >= 0) && ipc::Left(deadline).count() > 0) Pump(20);
    return status_;
  }
  std::string Describe() const { return "--- stdout\n" + out + "--- stderr\n" + err; }

  std::string out, err;

 private:
  void Pump(int wait_ms) {
    pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
    if (poll(p, 2, wait_ms) <= 0) return;
    std::string* sinks[2] = {&out, &err};
    for (int i = 0; i < 2; ++i) {
      if (fds_[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (;;) {
        char buf[4096];
        const ssize_t n = read(fds_[i], buf, sizeof buf);
        if (n > 0) {
          sinks[i]->append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          close(fds_[i]);
          fds_[i] = -1;
        }
        break;
      }
    }
  }

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  std::optional<int> status_;
};

// A real two-runtime replica (two workers each) with a --data-dir for tables, and a tandem-ctl
// with its own state file.
class CtlSubscribe : public ::testing::Test {
 protected:
  CtlSubscribe()
      : sup_({.extra_args = {"--data-dir", data_.File("data")},
              .two_runtime = true,
              .workers = 2,
              .worker_binary = TANDEM_WORKER_BIN,
              .shm_size = "32MiB"}) {}
  void SetUp() override { ASSERT_TRUE(sup_.WaitReady()) << sup_.Log(); }

  std::vector<std::string> Args(std::vector<std::string> args) {
    args.insert(args.begin(), {"--endpoint", sup_.controller_endpoint(), "--state",
                               dir_.File("tandem-ctl.state")});
    return args;
  }
  BinaryRun Run(const std::vector<std::string>& args, std::chrono::milliseconds limit = 30s) {
    RunBinaryOptions options;
    options.limit = limit;
    return RunBinary(TANDEM_CTL_BIN, Args(args), options);
  }
  double Metric(const std::string& sample) {
    return MetricValue(HttpGet(sup_.http_port(), "/metrics").body, sample);
  }
  // `write u1 ARGS…`: the time it was written at.
  std::uint64_t Write(std::vector<std::string> args) {
    args.insert(args.begin(), {"write", "u1"});
    const auto w = Run(args);
    EXPECT_EQ(w.exit, 0) << DescribeRun(w) << sup_.Log();
    const std::string human = "written at ";
    const auto at = w.out.find(human);
    if (at == std::string::npos) return 0;
    return std::stoull(w.out.substr(at + human.size()));
  }
  // A plain table u1 (k int64, v string), its index s1; three writes, their times.
  std::vector<std::uint64_t> TableWithThreeWrites() {
    const auto src =
        Run({"create-source", "u1", "--table", "--schema", "k:int64,v:string", "--tick-ms", "50"});
    EXPECT_EQ(src.exit, 0) << DescribeRun(src) << sup_.Log();
    const std::uint64_t t1 = Write({"--row", R"(1,"a")", "--diff", "2", "--row", R"(2,"b")"});
    const std::uint64_t t2 = Write({"--row", R"(1,"a")", "--diff", "-1", "--row", R"(3,"c")"});
    const std::uint64_t t3 = Write({"--row", R"(2,"b")", "--diff", "-1"});
    EXPECT_LT(t1, t2);
    EXPECT_LT(t2, t3);
    return {t1, t2, t3};
  }

  TempDir data_{"ctl-subscribe-data"};  // before sup_, which is given its path
  SupervisorProcess sup_;
  TempDir dir_;
};

// The text form: `TIME DIFF DATUM…` per update, the snapshot at as_of first (consolidated), then
// each write's changes at its time, in time order; --up-to ends it (UP_TO, exit 0).
TEST_F(CtlSubscribe, UpToPrintsTheSnapshotThenEachChangeAtItsTimeAndExits0) {
  const auto t = TableWithThreeWrites();
  const std::string T1 = std::to_string(t[0]), T2 = std::to_string(t[1]), T3 = std::to_string(t[2]);
  const auto r = Run({"subscribe", "u1", "--as-of", T1, "--up-to", std::to_string(t[2] + 1)});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup_.Log();
  EXPECT_TRUE(Contains(r.err, "subscribe u1: ended: UP_TO")) << DescribeRun(r);
  auto lines = Lines(r.out);
  // Times never go back; within one time the order is the runtime's: compare sorted.
  std::uint64_t last = 0;
  for (const auto& l : lines) {
    const std::uint64_t time = std::stoull(l.substr(0, l.find(' ')));
    EXPECT_GE(time, last) << r.out;
    last = time;
  }
  std::sort(lines.begin(), lines.end());
  std::vector<std::string> want = {T1 + " 2 1 \"a\"", T1 + " 1 2 \"b\"", T2 + " -1 1 \"a\"",
                                   T2 + " 1 3 \"c\"", T3 + " -1 2 \"b\""};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(lines, want) << DescribeRun(r);

  // Without the snapshot: only the changes after as_of.
  const auto changes = Run({"subscribe", "u1", "--as-of", T1, "--no-snapshot", "--up-to",
                            std::to_string(t[2] + 1), "--progress"});
  ASSERT_EQ(changes.exit, 0) << DescribeRun(changes) << sup_.Log();
  auto got = Lines(changes.out);
  ASSERT_FALSE(got.empty()) << DescribeRun(changes);
  EXPECT_EQ(got.back(), "progress " + std::to_string(t[2] + 1))
      << "the last completed interval ends at --up-to\n"
      << changes.out;
  std::erase_if(got, [](const std::string& l) { return l.rfind("progress ", 0) == 0; });
  std::sort(got.begin(), got.end());
  std::vector<std::string> after = {T2 + " -1 1 \"a\"", T2 + " 1 3 \"c\"", T3 + " -1 2 \"b\""};
  std::sort(after.begin(), after.end());
  EXPECT_EQ(got, after) << DescribeRun(changes);
}

// --json: one {"time", "diff", "row"} per update, {"progress": U, "closed": false} per completed
// interval, contiguous up to --up-to, and {"end": "UP_TO"} last; summing the updates up to any
// time gives what a peek at that time reads (a generator over two workers).
TEST_F(CtlSubscribe, JsonStreamConsolidatesToWhatPeeksRead) {
  const auto src = Run({"create-source", "u1", "--generator", "key_value", "--keys", "20",
                        "--updates-per-tick", "3", "--tick-interval-us", "20000", "--seed", "5"});
  ASSERT_EQ(src.exit, 0) << DescribeRun(src) << sup_.Log();
  std::uint64_t as_of = 0;
  ASSERT_TRUE(Eventually(
      [&] {
        const auto p = Run({"--json", "peek", "u1"});
        if (p.exit != 0) return false;
        as_of = static_cast<std::uint64_t>(Field(Json(Lines(p.out).back()), "time").number_value());
        return as_of > 0;
      },
      20s))
      << sup_.Log();
  const std::uint64_t up_to = as_of + 15;
  const auto r = Run({"--json", "subscribe", "u1", "--as-of", std::to_string(as_of), "--up-to",
                      std::to_string(up_to)});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup_.Log();
  const Stream s = ParseJsonStream(r.out);
  EXPECT_EQ(s.end, "UP_TO") << r.out;
  ASSERT_FALSE(s.progress.empty()) << r.out;
  EXPECT_EQ(s.progress.back(), std::optional(up_to)) << r.out;
  std::uint64_t last = as_of;
  for (const auto& u : s.updates) {
    EXPECT_GE(u.time, last) << "in time order";
    EXPECT_LT(u.time, up_to);
    EXPECT_NE(u.diff, 0);
    last = u.time;
  }
  EXPECT_FALSE(ContentsAt(s, as_of).empty()) << "the snapshot: 20 keys at as_of\n" << r.out;
  for (std::uint64_t t : {as_of, as_of + 7, up_to - 1}) {
    const auto p = Run({"--json", "peek", "u1", "--at", std::to_string(t)});
    ASSERT_EQ(p.exit, 0) << DescribeRun(p);
    EXPECT_EQ(ContentsAt(s, t), PeekRows(p.out)) << "at " << t << "\n" << r.out << p.out;
  }
}

// A closed index (a counter with --max) ends the stream: the last progress is closed (null), the
// end CLOSED, exit 0.
TEST_F(CtlSubscribe, AClosedIndexEndsTheStreamClosedWithExit0) {
  const auto src = Run({"create-source", "u1", "--generator", "counter", "--max", "5",
                        "--tick-interval-us", "1000"});
  ASSERT_EQ(src.exit, 0) << DescribeRun(src) << sup_.Log();
  const auto r = Run({"--json", "subscribe", "u1", "--as-of", "0"});
  ASSERT_EQ(r.exit, 0) << DescribeRun(r) << sup_.Log();
  EXPECT_TRUE(Contains(r.err, "ended: CLOSED")) << DescribeRun(r);
  const Stream s = ParseJsonStream(r.out);
  EXPECT_EQ(s.end, "CLOSED");
  ASSERT_FALSE(s.progress.empty()) << r.out;
  EXPECT_EQ(s.progress.back(), std::nullopt) << r.out;
  std::map<std::string, std::int64_t> want;
  for (int n = 1; n <= 5; ++n) want["[" + std::to_string(n) + "]"] = 1;
  EXPECT_EQ(ContentsAt(s, kMaxTime), want) << r.out;
  for (const auto& u : s.updates) EXPECT_EQ(u.row, "[" + std::to_string(u.time) + "]") << r.out;
}

// --for: the stream is live (a write made while it runs is printed at its time), and when the
// time passes it cancels, waits for the End (CANCELED) and exits 0. The time must cover, on a
// loaded sanitizer run, a second tandem-ctl starting and its write's group commit (an fsync).
TEST_F(CtlSubscribe, ForCancelsAfterItsTimeAndPrintsWritesMadeMeanwhile) {
  const auto t = TableWithThreeWrites();
  RunningCtl sub(Args({"--json", "subscribe", "u1", "--for", "10"}));
  ASSERT_TRUE(sub.started());
  ASSERT_TRUE(
      sub.ReadUntil([](const std::string& out) { return Contains(out, "\"progress\""); }, 15s))
      << sub.Describe() << sup_.Log();
  const std::uint64_t t4 = Write({"--row", R"(9,"live")"});
  ASSERT_GT(t4, t[2]);
  const std::string want = "{\"time\":" + std::to_string(t4) + ",\"diff\":1,\"row\":[9,\"live\"]}";
  EXPECT_TRUE(sub.ReadUntil([&](const std::string& out) { return Contains(out, want); }, 10s))
      << want << "\n"
      << sub.Describe();
  const auto code = sub.Wait(30s);
  ASSERT_TRUE(code.has_value()) << sub.Describe();
  EXPECT_EQ(*code, 0) << sub.Describe();
  EXPECT_TRUE(Contains(sub.err, "subscribe u1: ended: CANCELED")) << sub.Describe();
  const Stream s = ParseJsonStream(sub.out);
  EXPECT_EQ(s.end, "CANCELED");
  // The snapshot at the latest time holds the three writes' result.
  ASSERT_FALSE(s.updates.empty());
  const std::uint64_t as_of = s.updates.front().time;
  EXPECT_GE(as_of, t[2]);
  EXPECT_EQ(ContentsAt(s, as_of),
            (std::map<std::string, std::int64_t>{{"[1,\"a\"]", 1}, {"[3,\"c\"]", 1}}))
      << sub.out;
}

// ^C (SIGINT) and SIGTERM: CancelSubscribe, the End awaited, exit 0. The replica counted the
// subscribe while it ran and not after, and goes on serving peeks and subscribes.
TEST_F(CtlSubscribe, InterruptCancelsCleanlyAndTheReplicaGoesOnServing) {
  const auto t = TableWithThreeWrites();
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    RunningCtl sub(Args({"--json", "subscribe", "u1"}));
    ASSERT_TRUE(sub.started());
    ASSERT_TRUE(
        sub.ReadUntil([](const std::string& out) { return Contains(out, "\"progress\""); }, 15s))
        << sub.Describe() << sup_.Log();
    EXPECT_TRUE(Eventually([&] { return Metric("tandem_subscribes") == 1; }, 5s))
        << "the supervisor counts the live subscribe: " << Metric("tandem_subscribes");
    sub.Signal(sig);
    const auto code = sub.Wait(20s);
    ASSERT_TRUE(code.has_value()) << sub.Describe();
    EXPECT_EQ(*code, 0) << sub.Describe();
    EXPECT_TRUE(Contains(sub.err, "subscribe u1: ended: CANCELED")) << sub.Describe();
    EXPECT_EQ(ParseJsonStream(sub.out).end, "CANCELED") << sub.out;
    EXPECT_TRUE(Eventually([&] { return Metric("tandem_subscribes") == 0; }, 5s))
        << Metric("tandem_subscribes");
  }
  const auto peek = Run({"--json", "peek", "u1", "--at", std::to_string(t[2])});
  ASSERT_EQ(peek.exit, 0) << DescribeRun(peek) << sup_.Log();
  EXPECT_EQ(PeekRows(peek.out),
            (std::map<std::string, std::int64_t>{{"[1,\"a\"]", 1}, {"[3,\"c\"]", 1}}));
  const auto again = Run(
      {"subscribe", "u1", "--as-of", std::to_string(t[2]), "--up-to", std::to_string(t[2] + 1)});
  EXPECT_EQ(again.exit, 0) << DescribeRun(again) << sup_.Log();
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

// A reader that goes away (`subscribe … | head`): the next write fails, and it cancels like ^C —
// the End awaited, exit 0, no SIGPIPE death — and the replica forgets the subscribe.
TEST_F(CtlSubscribe, AClosedStdoutCancelsTheSubscribeAndExits0) {
  TableWithThreeWrites();
  RunningCtl sub(Args({"subscribe", "u1", "--progress"}));
  ASSERT_TRUE(sub.started());
  ASSERT_TRUE(sub.ReadUntil([](const std::string& out) { return Contains(out, "progress "); }, 15s))
      << sub.Describe() << sup_.Log();
  sub.CloseStdout();  // the table's tick (50 ms) brings a progress line to write soon
  const auto code = sub.Wait(20s);
  ASSERT_TRUE(code.has_value()) << sub.Describe();
  EXPECT_EQ(*code, 0) << sub.Describe();
  EXPECT_TRUE(Contains(sub.err, "subscribe u1: ended: CANCELED")) << sub.Describe();
  EXPECT_TRUE(Eventually([&] { return Metric("tandem_subscribes") == 0; }, 5s))
      << Metric("tandem_subscribes");
}

// A stdout nobody reads while the stream goes on, then the supervisor SIGKILLed. The command
// keeps receiving (its session never stops reading: ipc/client.h), holds the batches for its
// stdout, and once the connection is gone prints everything it received and exits 69 — never
// an abort in libzmq. (With ZeroMQ's receive high-water mark it stopped reading the connection
// once 1000 batches waited behind its blocked stdout, and a connection cut then could fail
// libzmq 4.3.4's assertion `!_io_error`: exit 134, "Assertion failed"; a stall past the
// heartbeat timeout lost the session by itself.)
TEST_F(CtlSubscribe, AStalledStdoutThenAKilledSupervisorExits69AfterPrintingWhatCame) {
  const auto src = Run({"create-source", "u1", "--generator", "key_value", "--keys", "20",
                        "--updates-per-tick", "3", "--tick-interval-us", "1000", "--seed", "7"});
  ASSERT_EQ(src.exit, 0) << DescribeRun(src) << sup_.Log();
  RunningCtl sub(Args({"subscribe", "u1", "--progress"}));
  ASSERT_TRUE(sub.started());
  ASSERT_TRUE(sub.ReadUntil([](const std::string& out) { return Contains(out, "progress "); }, 15s))
      << sub.Describe() << sup_.Log();
  // From here its stdout is not read: the pipe fills (64 KiB: some 700 of these batches), its
  // printing blocks, and what the supervisor sends waits in the command. Until 2500 more batches
  // were sent (the supervisor counts them as it hands them to the session's connection).
  const std::size_t printed = sub.out.size();
  const double sent = Metric("tandem_subscribe_batches_total");
  ASSERT_TRUE(
      Eventually([&] { return Metric("tandem_subscribe_batches_total") >= sent + 2500; }, 60s))
      << sup_.Log();
  ASSERT_TRUE(sup_.Kill());
  // Only now is its stdout read.
  const auto code = sub.Wait(60s);
  const std::string tail =
      "--- stdout (last 2000 bytes)\n" +
      sub.out.substr(sub.out.size() - std::min<std::size_t>(sub.out.size(), 2000)) +
      "--- stderr\n" + sub.err;
  ASSERT_TRUE(code.has_value()) << tail;
  EXPECT_FALSE(Contains(sub.err, "Assertion")) << tail;
  // Lost (69); or, had stdout fallen 64 MiB of batches behind first, canceled for that (1).
  EXPECT_TRUE(*code == 69 || (*code == 1 && Contains(sub.err, "stdout did not keep up"))) << tail;
  if (*code == 69) {
    EXPECT_TRUE(Contains(sub.err, "was lost")) << tail;
  }
  // Everything queued was printed, whole lines, before it exited — more than the pipe held when
  // it stalled: what came meanwhile was kept.
  ASSERT_FALSE(sub.out.empty());
  EXPECT_EQ(sub.out.back(), '\n') << tail;
  std::size_t progress = 0;
  for (const auto& line : Lines(sub.out.substr(printed))) {
    if (line.rfind("progress ", 0) == 0) ++progress;
  }
  EXPECT_GE(progress, 1000u) << tail;
}

// An index dropped while subscribed ends the subscribe (DROPPED): exit 1 with the reason.
TEST_F(CtlSubscribe, AnIndexDroppedWhileSubscribedEndsItWithExit1) {
  TableWithThreeWrites();
  const auto index = Run({"create-index", "u2", "--on", "u1", "--key", "v"});
  ASSERT_EQ(index.exit, 0) << DescribeRun(index) << sup_.Log();
  RunningCtl sub(Args({"subscribe", "u2", "--progress"}));
  ASSERT_TRUE(sub.started());
  ASSERT_TRUE(sub.ReadUntil([](const std::string& out) { return Contains(out, "progress "); }, 15s))
      << sub.Describe() << sup_.Log();
  const auto drop = Run({"drop", "u2"});
  ASSERT_EQ(drop.exit, 0) << DescribeRun(drop) << sup_.Log();
  const auto code = sub.Wait(20s);
  ASSERT_TRUE(code.has_value()) << sub.Describe();
  EXPECT_EQ(*code, 1) << sub.Describe();
  EXPECT_TRUE(Contains(sub.err, "subscribe u2: ended: DROPPED")) << sub.Describe();
}

// Refusals: an unknown index and an --up-to not after the latest time are refused by the replica
// (exit 1, its reason); bad times are usage errors (64), before connecting; an as_of the index
// was compacted past ends at once (exit 1, "compacted").
TEST_F(CtlSubscribe, RefusedAndFailedSubscribesSayWhyWithTheirExitCodes) {
  const auto t = TableWithThreeWrites();
  const auto unknown = Run({"subscribe", "u9"});
  EXPECT_EQ(unknown.exit, 1) << DescribeRun(unknown);
  EXPECT_TRUE(Contains(unknown.err, "refused: subscribe u9: the replica refused Subscribe"))
      << DescribeRun(unknown);
  EXPECT_TRUE(Contains(unknown.err, "unknown index")) << DescribeRun(unknown);
  const auto json = Run({"--json", "subscribe", "u9"});
  EXPECT_EQ(json.exit, 1) << DescribeRun(json);
  const auto lines = Lines(json.out);
  ASSERT_EQ(lines.size(), 1u) << DescribeRun(json);
  EXPECT_TRUE(Contains(Field(Json(lines[0]), "error").string_value(), "unknown index"));
  EXPECT_EQ(Field(Json(lines[0]), "exit_code").number_value(), 1);

  const auto early = Run({"subscribe", "u1", "--up-to", "5"});  // latest is the wall clock
  EXPECT_EQ(early.exit, 1) << DescribeRun(early);
  EXPECT_TRUE(Contains(early.err, "refused: subscribe u1")) << DescribeRun(early);
  EXPECT_TRUE(Contains(early.err, "up_to 5 is not after as_of")) << DescribeRun(early);

  for (const auto& args : std::vector<std::vector<std::string>>{
           {"subscribe", "u1", "--as-of", "7", "--up-to", "7"},
           {"subscribe", "u1", "--as-of", "soon"},
           {"subscribe", "u1", "--for", "-1"},
           {"subscribe", "u1", "--up-to", "18446744073709551615"}}) {
    const auto bad = Run(args);
    EXPECT_EQ(bad.exit, 64) << DescribeRun(bad);
  }

  const auto compact = Run({"allow-compaction", "u1", std::to_string(t[2])});
  ASSERT_EQ(compact.exit, 0) << DescribeRun(compact) << sup_.Log();
  // The runtime applies the compaction as it goes: until then the old as_of may still be served.
  BinaryRun old;
  EXPECT_TRUE(Eventually(
      [&] {
        old = Run({"subscribe", "u1", "--as-of", std::to_string(t[0]), "--up-to",
                   std::to_string(t[2] + 1)});
        return old.exit != 0;
      },
      10s))
      << DescribeRun(old);
  EXPECT_EQ(old.exit, 1) << DescribeRun(old);
  EXPECT_TRUE(Contains(old.err, "compacted")) << DescribeRun(old);
  EXPECT_FALSE(sup_.Exited()) << sup_.Log();
}

}  // namespace
}  // namespace tandem::testing
