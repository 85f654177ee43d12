// SUBSCRIBE's lines (frontend/server/sql_subscribe.h): COPY's text format, as PostgreSQL's COPY TO
// writes it and psql prints it — mz_timestamp, mz_diff, then the columns, tab-separated, NULL as
// \N and the escapes of COPY's text format.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "frontend/server/sql_subscribe.h"
#include "unit/protocol_samples.h"

namespace tandem::frontend {
namespace {

namespace samples = ipc::samples;

TEST(SubscribeCopyText, LineIsTimeDiffAndColumnsInCopyTextFormat) {
  ipc::pb::Datum null;  // no kind: NULL
  ipc::pb::Datum yes;
  yes.set_bool_(true);
  const auto row = samples::MakeRow(
      {samples::IntDatum(-7), samples::StringDatum("plain"), null, samples::FloatDatum(1.5), yes});
  EXPECT_EQ(CopyTextLine(1700000000123, -1, row), "1700000000123\t-1\t-7\tplain\t\\N\t1.5\tt\n");
}

TEST(SubscribeCopyText, TabNewlineBackslashAndControlCharactersAreEscaped) {
  const auto row = samples::MakeRow({samples::StringDatum("a\tb\nc\\d\re\bf\fg\vh")});
  EXPECT_EQ(CopyTextLine(5, 2, row), "5\t2\ta\\tb\\nc\\\\d\\re\\bf\\fg\\vh\n");
  // A text that reads "\N" is not NULL: its backslash is escaped.
  EXPECT_EQ(CopyTextLine(5, 1, samples::MakeRow({samples::StringDatum("\\N")})), "5\t1\t\\\\N\n");
  // Other bytes, UTF-8 included, pass as they are.
  EXPECT_EQ(CopyTextLine(5, 1, samples::MakeRow({samples::StringDatum("é\x01")})), "5\t1\té\x01\n");
}

TEST(SubscribeCopyText, FloatsUsePostgresTextForms) {
  const auto row = samples::MakeRow(
      {samples::FloatDatum(std::numeric_limits<double>::infinity()), samples::FloatDatum(1e20)});
  EXPECT_EQ(CopyTextLine(1, 1, row), "1\t1\tInfinity\t1e+20\n");
}

}  // namespace
}  // namespace tandem::frontend
