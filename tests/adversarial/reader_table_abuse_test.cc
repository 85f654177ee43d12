// A member of --reader-group abuses the reader table (shm/reader_table.h), the one file of the
// replica it may write: shrinks it (a mapping cut short kills whoever touches it with SIGBUS),
// grows it, punches it, scribbles over every byte, unlinks or replaces its name. None of it may
// stop the replica: the size cannot change, the name cannot be taken from the replica's user, and
// what it overwrites costs at worst other readers' announcements — the supervisor puts the header
// back and says so, and readers attach and read again.
//
// Tests run as root, so "a member of the reader group" is the probe run as nobody (65534) with the
// group.
#include "adversarial/adversarial.h"
#include "run_binary.h"

namespace tandem::testing::adversarial {
namespace {

constexpr gid_t kReaderGroup = 4243;

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

void AbuseAndExpectServing(bool two_runtime) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a reader as another user";
  Target target({"--reader-group", std::to_string(kReaderGroup)}, 2,
                {.two_runtime = two_runtime, .keys = 2000});
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const std::string segment = target.sup().segment();

  const BinaryRun abuse =
      RunAsUser(TANDEM_LOCAL_READER_PROBE_BIN, {"abuse-table", segment}, {kReaderGroup});
  if (abuse.exit == 125) GTEST_SKIP() << "could not run the probe as nobody with the group";
  ASSERT_EQ(abuse.exit, 0) << DescribeRun(abuse);
  EXPECT_TRUE(Has(abuse.out, "shrink: refused")) << abuse.out;
  EXPECT_TRUE(Has(abuse.out, "shrink-partly: refused")) << abuse.out;
  EXPECT_TRUE(Has(abuse.out, "grow: refused")) << abuse.out;
  EXPECT_TRUE(Has(abuse.out, "unlink: refused")) << abuse.out;
  EXPECT_TRUE(Has(abuse.out, "replace: refused")) << abuse.out;
  EXPECT_TRUE(Has(abuse.out, "scribble: done")) << abuse.out;
  EXPECT_TRUE(Has(abuse.out, "lock-all: done")) << abuse.out;

  // The supervisor's next sweep finds the header overwritten and puts it back.
  EXPECT_TRUE(Eventually(
      [&] {
        return MetricValue(HttpGet(target.sup().http_port(), "/metrics").body,
                           "tandem_reader_table_repairs_total") >= 1;
      },
      10s))
      << target.sup().Log();
  EXPECT_TRUE(Has(target.sup().Log(), "reader table's header was overwritten"))
      << target.sup().Log();
  // The replica serves, its index keeps moving (its publishers read the scribbled entries), and
  // a reader of the group attaches again: the entries the abuser locked went with its process.
  target.ExpectStillServing();
  EXPECT_TRUE(target.ReadableAt(5, 20s)) << target.sup().Log();
  const BinaryRun reader =
      RunAsUser(TANDEM_LOCAL_READER_PROBE_BIN, {"attach", segment}, {kReaderGroup});
  EXPECT_EQ(reader.exit, 0) << DescribeRun(reader);
  EXPECT_FALSE(target.sup().Exited()) << target.sup().Log();
}

TEST(ReaderTableAbuse, AGroupMemberCannotStopATwoRuntimeReplicaThroughTheReaderTable) {
  AbuseAndExpectServing(true);
}

TEST(ReaderTableAbuse, AGroupMemberCannotStopASoloReplicaThroughTheReaderTable) {
  AbuseAndExpectServing(false);
}

}  // namespace
}  // namespace tandem::testing::adversarial
