// The comparison of SQL answers the differential suites use (tests/sql_rows.h): multisets count
// duplicates and keep NULL apart from the empty string, ordered lists allow ties of the ORDER BY
// columns in any order, floats compare as numbers (exactly, or within ulps), errors by SQLSTATE,
// and a mismatch reads as which rows are missing or extra, or where the order parts.
#include "sql_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tandem::testing::sql_rows_test {
namespace {

constexpr std::optional<std::string> kNull = std::nullopt;

SqlRow Row(std::initializer_list<SqlValue> values) { return SqlRow(values); }

const std::vector<unsigned> kIntText = {pg_type::kInt8, pg_type::kText};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SqlRows, AMultisetIgnoresOrderButCountsDuplicates) {
  const std::vector<SqlRow> a = {Row({"1", "x"}), Row({"1", "x"}), Row({"2", kNull})};
  const std::vector<SqlRow> b = {Row({"2", kNull}), Row({"1", "x"}), Row({"1", "x"})};
  EXPECT_EQ(DiffRows(a, b, kIntText), "");
  const std::vector<SqlRow> once = {Row({"2", kNull}), Row({"1", "x"})};
  const std::string diff = DiffRows(a, once, kIntText);
  EXPECT_TRUE(Contains(diff, "expected 3 rows, actual 2; 1 missing, 0 extra")) << diff;
  EXPECT_TRUE(Contains(diff, "('1', 'x')   expected 2x, actual 1x")) << diff;
}

TEST(SqlRows, NullIsNeitherTheEmptyStringNorTheWordNull) {
  EXPECT_NE(DiffRows({Row({"1", kNull})}, {Row({"1", ""})}, kIntText), "");
  EXPECT_NE(DiffRows({Row({"1", kNull})}, {Row({"1", "NULL"})}, kIntText), "");
  EXPECT_EQ(DiffRows({Row({kNull, kNull})}, {Row({kNull, kNull})}, kIntText), "");
  EXPECT_EQ(FormatRow(Row({kNull, "", "it's", "a\nb"})), "(NULL, '', 'it''s', 'a\\nb')");
}

TEST(SqlRows, FloatsCompareAsNumbersNotSpellings) {
  const RowComparison exact;
  EXPECT_TRUE(ValuesMatch("1e+100", "1e100", pg_type::kFloat8, exact));
  EXPECT_TRUE(ValuesMatch("100000", "1e+05", pg_type::kFloat8, exact));
  EXPECT_TRUE(ValuesMatch("-0", "0", pg_type::kFloat8, exact));  // float8eq: -0 = 0
  EXPECT_TRUE(ValuesMatch("NaN", "NaN", pg_type::kFloat8, exact));
  EXPECT_TRUE(ValuesMatch("-Infinity", "-Infinity", pg_type::kFloat8, exact));
  EXPECT_FALSE(ValuesMatch("Infinity", "-Infinity", pg_type::kFloat8, exact));
  EXPECT_FALSE(ValuesMatch("NaN", "0", pg_type::kFloat8, exact));
  EXPECT_FALSE(ValuesMatch("0.30000000000000004", "0.3", pg_type::kFloat8, exact));
  EXPECT_FALSE(ValuesMatch("1.5", "1.5x", pg_type::kFloat8, exact));  // not a number: as text
  // The spelling counts in a text column, and in float columns when asked.
  EXPECT_FALSE(ValuesMatch("1e+100", "1e100", pg_type::kText, exact));
  EXPECT_FALSE(ValuesMatch("1e+100", "1e100", pg_type::kFloat8, {.float_text = true}));
  // numeric is exact text: its scale is part of the value's text.
  EXPECT_FALSE(ValuesMatch("1.50", "1.5", pg_type::kNumeric, exact));
  // Multisets key floats by number: a -0 row pairs with a 0 row.
  const std::vector<unsigned> types = {pg_type::kFloat8};
  EXPECT_EQ(DiffRows({Row({"-0"}), Row({"1e+100"})}, {Row({"1e100"}), Row({"0"})}, types), "");
}

TEST(SqlRows, FloatUlpsToleratesTheLastBitsOfASumAndNoMore) {
  char next[32], far[32];
  std::snprintf(next, sizeof next, "%.17g", std::nextafter(0.3, 1.0));
  std::snprintf(far, sizeof far, "%.17g", 0.3 + 1e-12);
  RowComparison two_ulps;
  two_ulps.float_ulps = 2;
  EXPECT_TRUE(ValuesMatch("0.3", next, pg_type::kFloat8, two_ulps));
  EXPECT_FALSE(ValuesMatch("0.3", far, pg_type::kFloat8, two_ulps));
  EXPECT_FALSE(ValuesMatch("0.3", next, pg_type::kFloat8, {}));
  EXPECT_FALSE(ValuesMatch("1.7976931348623157e+308", "Infinity", pg_type::kFloat8, two_ulps));
  // float4: ulps of float.
  char next4[32];
  std::snprintf(next4, sizeof next4, "%.9g", static_cast<double>(std::nextafter(0.3f, 1.0f)));
  EXPECT_TRUE(ValuesMatch("0.3", next4, pg_type::kFloat4, two_ulps));
  // In a multiset, the rows left over after exact matches pair within the tolerance.
  const std::vector<unsigned> types = {pg_type::kText, pg_type::kFloat8};
  const std::vector<SqlRow> expected = {Row({"a", "0.3"}), Row({"b", "1"})};
  const std::vector<SqlRow> actual = {Row({"b", "1"}), Row({"a", next})};
  EXPECT_EQ(DiffRows(expected, actual, types, two_ulps), "");
  EXPECT_NE(DiffRows(expected, actual, types), "");
}

TEST(SqlRows, AnOrderedListAllowsTiesOfTheOrderByColumnsInAnyOrder) {
  // ORDER BY the first column: the rows tied on 1 may come either way.
  const std::vector<SqlRow> pg = {Row({"1", "a"}), Row({"1", "b"}), Row({"2", "c"})};
  const std::vector<SqlRow> swapped = {Row({"1", "b"}), Row({"1", "a"}), Row({"2", "c"})};
  RowComparison by_first{.order = RowOrder::kOrdered, .order_columns = {0}};
  EXPECT_EQ(DiffRows(pg, swapped, kIntText, by_first), "");
  // Ordered by every column, they may not.
  RowComparison by_all{.order = RowOrder::kOrdered};
  const std::string diff = DiffRows(pg, swapped, kIntText, by_all);
  EXPECT_TRUE(Contains(diff, "ordered rows differ at row 1")) << diff;
  EXPECT_TRUE(Contains(diff, "only the order differs")) << diff;
  // A row moved across ORDER BY values is a difference even by the first column.
  const std::vector<SqlRow> moved = {Row({"2", "c"}), Row({"1", "a"}), Row({"1", "b"})};
  const std::string moved_diff = DiffRows(pg, moved, kIntText, by_first);
  EXPECT_TRUE(Contains(moved_diff, "at row 1: the ORDER BY columns' values differ")) << moved_diff;
  // A different row inside a run of ties is named.
  const std::vector<SqlRow> other = {Row({"1", "a"}), Row({"1", "z"}), Row({"2", "c"})};
  const std::string other_diff = DiffRows(pg, other, kIntText, by_first);
  EXPECT_TRUE(Contains(other_diff, "('1', 'b')   expected 1x, actual 0x")) << other_diff;
  EXPECT_TRUE(Contains(other_diff, "('1', 'z')   expected 0x, actual 1x")) << other_diff;
  // One list ending early.
  const std::vector<SqlRow> shorter = {Row({"1", "a"}), Row({"1", "b"})};
  const std::string short_diff = DiffRows(pg, shorter, kIntText, by_all);
  EXPECT_TRUE(Contains(short_diff, "at row 3: one list ends")) << short_diff;
  EXPECT_TRUE(Contains(short_diff, "1 missing, 0 extra")) << short_diff;
}

TEST(SqlRows, ResultsCompareErrorsBySqlstateAndColumnsByNameAndType) {
  PgAnswer missing_table;
  missing_table.error = PgError{
      .sqlstate = "42P01", .message = "relation \"t\" does not exist", .detail = "", .hint = ""};
  PgAnswer other_message = missing_table;
  other_message.error->message = "unknown table t";
  EXPECT_TRUE(SameResult(missing_table, other_message));
  PgAnswer syntax = missing_table;
  syntax.error->sqlstate = "42601";
  EXPECT_FALSE(SameResult(missing_table, syntax));

  PgAnswer rows{.column_names = {"k", "v"},
                .column_types = kIntText,
                .rows = {Row({"1", "a"})},
                .command_tag = "SELECT 1",
                .error = std::nullopt};
  EXPECT_TRUE(SameResult(rows, rows));
  const std::string error_diff = DiffResults(rows, missing_table);
  EXPECT_TRUE(Contains(error_diff, "expected 1 row of (k, v)")) << error_diff;
  EXPECT_TRUE(Contains(error_diff, "ERROR 42P01")) << error_diff;

  PgAnswer renamed = rows;
  renamed.column_names = {"k", "w"};
  EXPECT_FALSE(SameResult(rows, renamed));
  EXPECT_TRUE(SameResult(rows, renamed, {.column_names = false}));
  PgAnswer retyped = rows;
  retyped.column_types = {pg_type::kInt4, pg_type::kText};
  EXPECT_TRUE(Contains(DiffResults(rows, retyped), "column type OIDs differ: expected (20, 25)"));
  EXPECT_TRUE(SameResult(rows, retyped, {.column_types = false}));
}

TEST(SqlRows, ADiffListsAtMostMaxListedRowsASide) {
  std::vector<SqlRow> many;
  for (int i = 0; i < 30; ++i) many.push_back(Row({std::to_string(i), "x"}));
  RowComparison three;
  three.max_listed = 3;
  const std::string diff = DiffRows(many, {}, kIntText, three);
  EXPECT_TRUE(Contains(diff, "expected 30 rows, actual 0; 30 missing, 0 extra")) << diff;
  EXPECT_TRUE(Contains(diff, "and 27 more distinct rows")) << diff;
}

}  // namespace
}  // namespace tandem::testing::sql_rows_test
