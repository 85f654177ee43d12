// The CSV format (ipc/formats/csv.h; workers/README.md "CSV and JSON-lines sources"): records
// from lines, the header, values, bad data with the line where its record starts, upsert deletes.
#include "ipc/formats/csv.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/datum_text.h"
#include "unit/protocol_samples.h"

namespace tandem::ipc {
namespace {

using samples::MakeColumn;
using samples::MakeSchema;
using samples::WideSchema;

// Feeds `text` line by line (split on \n, a \r before it removed, as LineFramer does); the
// results in order.
std::vector<CsvReader::Result> Feed(CsvReader& r, std::string_view text) {
  std::vector<CsvReader::Result> out;
  std::uint64_t n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (auto res = r.Line(line, ++n)) out.push_back(std::move(*res));
    start = nl + 1;
  }
  return out;
}

Row Only(const std::vector<CsvReader::Result>& rs, std::size_t i = 0) {
  EXPECT_LT(i, rs.size());
  if (i >= rs.size()) return {};
  EXPECT_TRUE(rs[i].record.has_value()) << rs[i].error;
  return rs[i].record ? rs[i].record->row : Row{};
}

TEST(Csv, TheHeaderNamesColumnsInAnyOrderAndRecordsBecomeUpdates) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r, "b,f,s,k\ntrue,1.5,abc,-12\nFALSE,2e10,x,0\n");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(Only(rs, 0), (Row{std::int64_t{-12}, std::string("abc"), 1.5, true}));
  EXPECT_EQ(Only(rs, 1), (Row{std::int64_t{0}, std::string("x"), 2e10, false}));
  EXPECT_EQ(rs[0].record->kind, SourceRecord::Kind::kUpdate);
  EXPECT_EQ(rs[0].record->diff, 1);
  EXPECT_EQ(rs[0].line, 2u);
  EXPECT_TRUE(r.broken().empty());
}

TEST(Csv, FloatsAreReadLikeTheLogFormat) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r, "k,f\n1,nan\n2,inf\n3,-inf\n4,-0.0\n5,7\n");
  ASSERT_EQ(rs.size(), 5u);
  EXPECT_TRUE(std::isnan(std::get<double>(Only(rs, 0)[2])));
  EXPECT_EQ(std::get<double>(Only(rs, 1)[2]), HUGE_VAL);
  EXPECT_EQ(std::get<double>(Only(rs, 2)[2]), -HUGE_VAL);
  EXPECT_TRUE(std::signbit(std::get<double>(Only(rs, 3)[2])));
  EXPECT_EQ(std::get<double>(Only(rs, 4)[2]), 7.0);
}

TEST(Csv, QuotedFieldsKeepCommasDoubledQuotesAndNewlinesAcrossLines) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r, "k,s\n1,\"a,b\"\n2,\"say \"\"hi\"\"\"\n3,\"two\nlines\n\"\n4,x\n");
  ASSERT_EQ(rs.size(), 4u);
  EXPECT_EQ(std::get<std::string>(Only(rs, 0)[1]), "a,b");
  EXPECT_EQ(std::get<std::string>(Only(rs, 1)[1]), "say \"hi\"");
  EXPECT_EQ(std::get<std::string>(Only(rs, 2)[1]), "two\nlines\n");
  EXPECT_EQ(rs[2].line, 4u);  // where the record starts
  EXPECT_EQ(rs[3].line, 7u);
}

TEST(Csv, CrLfLineEndsAreRead) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r, "k,s\r\n1,\"a\r\nb\"\r\n2,c\r\n");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(std::get<std::string>(Only(rs, 0)[1]), "a\nb");  // the line end inside is a \n
  EXPECT_EQ(std::get<std::string>(Only(rs, 1)[1]), "c");
}

TEST(Csv, AnUnquotedEmptyFieldIsNullAndAQuotedOneTheEmptyString) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r, "k,s,f,b\n1,,,\n2,\"\",,\n");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(Only(rs, 0), (Row{std::int64_t{1}, Null{}, Null{}, Null{}}));
  EXPECT_EQ(Only(rs, 1), (Row{std::int64_t{2}, std::string(), Null{}, Null{}}));
}

TEST(Csv, NullableColumnsMissingFromTheHeaderAreNullAndUnknownColumnsIgnored) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r, "extra,k\nwhatever,5\n");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(Only(rs), (Row{std::int64_t{5}, Null{}, Null{}, Null{}}));
}

TEST(Csv, HeaderWithoutANonNullableColumnBreaksTheReader) {
  CsvReader r(WideSchema(), {});
  EXPECT_TRUE(Feed(r, "s,f\nx,1\n").empty());
  EXPECT_NE(r.broken().find("csv line 1: "), std::string::npos) << r.broken();
  EXPECT_NE(r.broken().find("'k'"), std::string::npos) << r.broken();
  EXPECT_FALSE(r.Line("1,2", 3).has_value());  // reads nothing more
}

TEST(Csv, DuplicateHeaderNameBreaksTheReader) {
  CsvReader r(WideSchema(), {});
  EXPECT_TRUE(Feed(r, "\nk,s,k\n1,x,1\n").empty());
  EXPECT_EQ(r.broken(), "csv line 2: the header: the column name 'k' is there twice");
}

TEST(Csv, BadRecordsAreErrorsNamingTheirLineAndReadingGoesOn) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r,
                 "k,s,f,b\n"
                 "x,a,,\n"                    // 2: not an int64
                 ",a,,\n"                     // 3: null in a non-nullable column
                 "1,a\n"                      // 4: too few fields
                 "1,a,,,\n"                   // 5: too many
                 "1,a,1.5.1,\n"               // 6: not a float
                 "1,a,,yes\n"                 // 7: not a bool
                 "1,a\"b,,\n"                 // 8: a quote inside an unquoted field
                 "1,\"a\"b,,\n"               // 9: text after a closing quote
                 "9223372036854775808,a,,\n"  // 10: out of range
                 "1,\xff,,\n"                 // 11: not UTF-8
                 "7,ok,,\n");                 // 12
  ASSERT_EQ(rs.size(), 11u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_FALSE(rs[i].record.has_value()) << i;
    EXPECT_EQ(rs[i].line, i + 2);
    EXPECT_EQ(rs[i].error.rfind("csv line " + std::to_string(i + 2) + ": ", 0), 0u) << rs[i].error;
  }
  EXPECT_EQ(rs[0].error, "csv line 2: 'x' is not an int64 (column k)");
  EXPECT_EQ(rs[2].error, "csv line 4: the record has 2 fields, the header 4");
  EXPECT_EQ(Only(rs, 10)[0], Datum(std::int64_t{7}));
}

TEST(Csv, BlankLinesOutsideARecordAreSkipped) {
  CsvReader r(WideSchema(), {});
  auto rs = Feed(r, "\nk\n\n1\n\n2\n");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[1].line, 6u);
}

TEST(Csv, AnOverlongLineIsBadDataAndEndOfFileInsideQuotesToo) {
  CsvReader r(WideSchema(), {});
  Feed(r, "k,s\n");
  auto o = r.Overlong(2, 100);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->error, "csv line 2: longer than 100 bytes (skipped)");
  ASSERT_FALSE(r.Line("3,\"open", 3).has_value());
  auto e = r.End();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->line, 3u);
  EXPECT_FALSE(e->record.has_value());
}

// An unclosed quote ends its record, as bad data naming the line it started on, once the record
// passes kMaxCsvRecordBytes: the lines after it are read, not swallowed until the end of the file.
TEST(Csv, AnUnclosedQuoteEndsItsRecordAtTheRecordBound) {
  CsvReader r(WideSchema(), {});
  Feed(r, "k,s\n");
  ASSERT_FALSE(r.Line("1,\"never closed", 2).has_value());
  const std::string line(1000, 'x');
  std::optional<CsvReader::Result> bad;
  std::uint64_t n = 2;
  while (!bad && n < 10'000) bad = r.Line(line, ++n);
  ASSERT_TRUE(bad.has_value()) << "swallowed " << n << " lines";
  EXPECT_LE((n - 2) * (line.size() + 1), kMaxCsvRecordBytes + line.size() + 1);
  EXPECT_EQ(bad->line, 2u);
  EXPECT_FALSE(bad->record.has_value());
  EXPECT_NE(bad->error.find("is a quote not closed?"), std::string::npos) << bad->error;
  EXPECT_FALSE(r.in_record());
  auto after = r.Line("7,fine", ++n);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->record->row[0], Datum(std::int64_t{7}));
}

TEST(Csv, ResetExpectsAHeaderAgain) {
  CsvReader r(WideSchema(), {});
  Feed(r, "k,s\n1,a\n");
  r.Reset();
  auto rs = Feed(r, "s,k\nb,2\n");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(Only(rs), (Row{std::int64_t{2}, std::string("b"), Null{}, Null{}}));
}

TEST(Csv, UpsertRecordsAndDeletesWhenEveryNonKeyFieldIsEmptyAndUnquoted) {
  CsvReader r(WideSchema(), {0});
  auto rs = Feed(r, "k,s,f\n1,a,\n1,,\n1,\"\",\n1,,2\n");
  ASSERT_EQ(rs.size(), 4u);
  EXPECT_EQ(rs[0].record->kind, SourceRecord::Kind::kUpsert);
  EXPECT_EQ(Only(rs, 0), (Row{std::int64_t{1}, std::string("a"), Null{}, Null{}}));
  EXPECT_EQ(rs[1].record->kind, SourceRecord::Kind::kDelete);
  EXPECT_EQ(Only(rs, 1), (Row{std::int64_t{1}}));              // the key columns only
  EXPECT_EQ(rs[2].record->kind, SourceRecord::Kind::kUpsert);  // "" is a value
  EXPECT_EQ(rs[3].record->kind, SourceRecord::Kind::kUpsert);
}

TEST(Csv, UpsertDeleteRowIsTheKeyInUpsertKeyOrder) {
  pb::Schema s = MakeSchema(
      {MakeColumn("a", pb::INT64), MakeColumn("v", pb::STRING, true), MakeColumn("b", pb::STRING)});
  CsvReader r(s, {2, 0});
  auto rs = Feed(r, "a,v,b\n1,,x\n");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].record->kind, SourceRecord::Kind::kDelete);
  EXPECT_EQ(Only(rs), (Row{std::string("x"), std::int64_t{1}}));
}

TEST(Csv, AnUpsertSchemaOfOnlyKeyColumnsNeverDeletes) {
  CsvReader r(MakeSchema({MakeColumn("k", pb::INT64)}), {0});
  auto rs = Feed(r, "k\n1\n");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].record->kind, SourceRecord::Kind::kUpsert);
}

// The types of DESIGN §16 in PostgreSQL's text forms, as COPY … CSV takes them.
TEST(Csv, NewTypesAreReadInPostgresTextForms) {
  CsvReader r(samples::TypedSchema(), {});
  auto rs = Feed(r,
                 "price,n,r,name,code,b,d,t,ts,tz,i,u\n"
                 "12.5,-7,0.1,abc,a,\\x0a0b,2026-12-06,12:00:00,2026-12-06 12:00:00,"
                 "2026-12-06 14:00:00+02,1 day 02:00:00,a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\n");
  ASSERT_EQ(rs.size(), 1u);
  const Row row = Only(rs);
  ASSERT_EQ(row.size(), 12u);
  EXPECT_EQ(DatumText(row[0]), "numeric '12.50'") << "numeric(12,2) rounds to its scale";
  EXPECT_EQ(std::get<std::int64_t>(row[1]), -7);
  EXPECT_EQ(std::get<double>(row[2]), static_cast<double>(0.1f)) << "float4 rounds";
  EXPECT_EQ(std::get<std::string>(row[3]), "abc");
  EXPECT_EQ(std::get<std::string>(row[4]), "a  ") << "char(3) pads";
  EXPECT_EQ(std::get<Bytes>(row[5]).bytes, "\x0a\x0b");
  EXPECT_EQ(DatumText(row[6]), "date '2026-12-06'");
  EXPECT_EQ(DatumText(row[7]), "time '12:00:00'");
  EXPECT_EQ(DatumText(row[8]), "timestamp '2026-12-06 12:00:00'");
  EXPECT_EQ(DatumText(row[9]), "timestamptz '2026-12-06 12:00:00+00'") << "read in UTC";
  EXPECT_EQ(DatumText(row[10]), "interval '1 day 02:00:00'");
  EXPECT_EQ(DatumText(row[11]), "uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'");
}

TEST(Csv, NewTypesRefuseWhatTheirTypeRefuses) {
  const char* kHeader = "price,n,name,d\n";
  for (const char* record : {"12345678901.5,,,", ",2147483648,,", ",,abcdef,", ",,,2026-13-01"}) {
    CsvReader r(samples::TypedSchema(), {});
    auto rs = Feed(r, std::string(kHeader) + record + "\n");
    ASSERT_EQ(rs.size(), 1u) << record;
    EXPECT_FALSE(rs[0].record.has_value()) << record;
    EXPECT_NE(rs[0].error.find("(column "), std::string::npos) << rs[0].error;
  }
}

}  // namespace
}  // namespace tandem::ipc
