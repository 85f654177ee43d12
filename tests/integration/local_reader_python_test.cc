// The Python binding of LocalReader (issue 17, acceptance 3): a real replica with the indexes
// tests/python/local_reader_test.py expects, then that script, run by python3 against the module
// built in this tree (build/<preset>/python).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "log_source.h"
#include "replica.h"
#include "run_binary.h"
#include "supervisor_harness.h"

namespace tandem::testing {
namespace {

using ipc::pb::Response;

TEST(LocalReaderPython, TheBindingLooksUpScansAndRaisesWhatThePeekPathWould) {
  Replica r(true, 2);
  ASSERT_TRUE(r.ready) << r.sup.Log();
  LogFile log;
  log.Append("U 0 1 1 10\nU 0 1 2 20\nU 0 1 3 30\nP 1\nU 1 1 1 11\nP 2\nU 2 -1 2 20\nP 3\n");
  r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
  r.ctl->Send(LogIndexDataflow("u3", "u4", log.path(), 0, 0));  // v / 0: errors
  ASSERT_TRUE(AwaitUpper(r, "u2", 2)) << r.sup.Log();
  ASSERT_TRUE(AwaitUpper(r, "u4", 2)) << r.sup.Log();
  setenv("PYTHONPATH", TANDEM_PYTHON_MODULE_DIR, 1);
  const BinaryRun run =
      RunBinary(TANDEM_PYTHON, {TANDEM_PYTHON_TEST_SCRIPT, r.sup.segment()}, {.limit = 60s});
  EXPECT_EQ(run.exit, 0) << DescribeRun(run);
  EXPECT_NE(run.err.find("Ran 6 tests"), std::string::npos) << DescribeRun(run);
  EXPECT_NE(run.err.find("\nOK"), std::string::npos) << DescribeRun(run);
  EXPECT_FALSE(r.sup.Exited()) << r.sup.Log();
}

}  // namespace
}  // namespace tandem::testing
