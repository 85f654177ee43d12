// The datum syntax (base/datum_text.h): random rows of every datum type — null, bools, extreme
// integers, the floats that are hard to print (0.1, 1e-300, denormals, -0.0, nan, inf) and strings
// that need escapes — print and read back equal, floats bit for bit: one datum at a time (typed
// and untyped), as a key list, as a table's row text, and as a log line read by the log format's
// parser. Fixed seeds, so a failure names its seed and repeats.
#include "base/datum_text.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ipc/formats/log_parse.h"
#include "unit/protocol_samples.h"

namespace tandem::datum_text_test {
namespace {

namespace pb = ipc::pb;

constexpr std::uint64_t kSeeds = 64;
constexpr int kRowsPerSeed = 100;

// Datums of every type, biased towards the texts that are easy to get wrong.
class DatumGenerator {
 public:
  explicit DatumGenerator(std::uint64_t seed) : rng_(seed) {}

  Datum Next() {
    switch (Pick(5)) {
      case 0:
        return Null{};
      case 1:
        return Pick(2) == 1;
      case 2:
        return Int();
      case 3:
        return Float();
      default:
        return String();
    }
  }

  Row NextRow(std::uint64_t max_len) {
    Row row;
    const std::uint64_t len = Pick(max_len + 1);
    for (std::uint64_t i = 0; i < len; ++i) row.push_back(Next());
    return row;
  }

  std::uint64_t Pick(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }

 private:
  std::int64_t Int() {
    using L = std::numeric_limits<std::int64_t>;
    static constexpr std::int64_t kEdges[] = {L::min(), L::min() + 1, -1,      0,
                                              1,        L::max() - 1, L::max()};
    switch (Pick(3)) {
      case 0:
        return kEdges[Pick(std::size(kEdges))];
      case 1:
        return static_cast<std::int64_t>(Pick(2001)) - 1000;
      default:
        return static_cast<std::int64_t>(rng_());  // any 64 bits
    }
  }

  double Float() {
    using L = std::numeric_limits<double>;
    static constexpr double kEdges[] = {0.1,
                                        -0.1,
                                        1e-300,
                                        L::denorm_min(),
                                        -L::denorm_min(),
                                        L::min(),  // the smallest normal
                                        L::max(),
                                        L::lowest(),
                                        L::epsilon(),
                                        0.0,
                                        -0.0,
                                        1.0,
                                        2.0,
                                        2e10,
                                        1e21,
                                        9007199254740993.0,  // 2^53 + 1, rounded
                                        L::infinity(),
                                        -L::infinity(),
                                        L::quiet_NaN(),
                                        -L::quiet_NaN()};
    switch (Pick(5)) {
      case 0:
      case 1:
        return kEdges[Pick(std::size(kEdges))];
      case 2:  // a denormal: exponent bits zero, any mantissa, either sign
        return std::bit_cast<double>((rng_() & 0x800FFFFFFFFFFFFFULL));
      case 3:  // a short decimal, the kind people write
        return (static_cast<double>(Pick(20001)) - 10000.0) / 100.0;
      default: {  // any bit pattern: every finite double, and NaNs with payloads
        return std::bit_cast<double>(rng_());
      }
    }
  }

  std::string String() {
    static const std::string kWords[] = {"",    "null", "true", "false", "12",       "-1.5", "nan",
                                         "inf", "\"",   "\\",   "a,b",   " padded ", "\\n"};
    if (Pick(4) == 0) return kWords[Pick(std::size(kWords))];
    static const std::string kPieces[] = {
        "a",    "Z",    " ",    ",", "\"", "\\", "\n", "\t", "\r", std::string(1, '\0'),
        "\x01", "\x7f", "\xff", "é", "€",  "😀",  "(",  ")"};
    std::string s;
    const std::uint64_t len = Pick(9);
    for (std::uint64_t i = 0; i < len; ++i) s += kPieces[Pick(std::size(kPieces))];
    return s;
  }

  std::mt19937_64 rng_;
};

ColumnType::Kind KindOf(const Datum& d) {
  switch (d.index()) {
    case 1:
      return ColumnType::Kind::kBool;
    case 2:
      return ColumnType::Kind::kInt64;
    case 3:
      return ColumnType::Kind::kFloat64;
    case 4:
      return ColumnType::Kind::kString;
    default:
      return ColumnType::Kind::kAny;
  }
}

ColumnType TypeOf(const Datum& d) {
  ColumnType t;
  t.kind = KindOf(d);
  t.nullable = true;
  t.name = "c";
  return t;
}

// The same datum, floats bit for bit; a NaN reads back as the one quiet NaN.
bool SameDatum(const Datum& printed, const Datum& read) {
  if (printed.index() != read.index()) return false;
  if (const double* p = std::get_if<double>(&printed)) {
    const auto bits = std::bit_cast<std::uint64_t>(std::get<double>(read));
    if (std::isnan(*p)) {
      return bits == std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN());
    }
    return bits == std::bit_cast<std::uint64_t>(*p);
  }
  return printed == read;
}

::testing::AssertionResult SameRow(const Row& printed, const Row& read) {
  if (printed.size() != read.size()) {
    return ::testing::AssertionFailure() << printed.size() << " datums read as " << read.size();
  }
  for (std::size_t i = 0; i < printed.size(); ++i) {
    if (!SameDatum(printed[i], read[i])) {
      return ::testing::AssertionFailure()
             << "datum " << i << " " << DatumText(printed[i]) << " read as " << DatumText(read[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// The bits of a double, for messages: two floats that print alike differ here.
std::string Bits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
  return buf;
}

pb::ScalarType ScalarOf(const Datum& d, std::uint64_t pick) {
  static constexpr pb::ScalarType kAll[] = {pb::BOOL, pb::INT64, pb::FLOAT64, pb::STRING};
  switch (d.index()) {
    case 1:
      return pb::BOOL;
    case 2:
      return pb::INT64;
    case 3:
      return pb::FLOAT64;
    case 4:
      return pb::STRING;
    default:
      return kAll[pick % 4];  // a null fits a nullable column of any type
  }
}

TEST(DatumText, EveryDatumReadsBackEqualTypedAndUntyped) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    DatumGenerator gen(seed);
    for (int i = 0; i < kRowsPerSeed * 4; ++i) {
      const Datum d = gen.Next();
      const std::string text = DatumText(d);
      const std::string why = "seed " + std::to_string(seed) + ": " + text +
                              (d.index() == 3 ? " (bits " + Bits(std::get<double>(d)) + ")" : "");
      auto typed = ParseDatumText(text, TypeOf(d));
      ASSERT_TRUE(typed.ok()) << why << ": " << typed.status().message();
      ASSERT_TRUE(SameDatum(d, *typed)) << why << " read as " << DatumText(*typed);
      auto untyped = ParseDatumText(text);
      ASSERT_TRUE(untyped.ok()) << why << ": " << untyped.status().message();
      ASSERT_TRUE(SameDatum(d, *untyped)) << why << " read untyped as " << DatumText(*untyped);
    }
  }
}

TEST(DatumText, ADatumNeverBreaksALineOrATableCell) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    DatumGenerator gen(seed);
    for (int i = 0; i < kRowsPerSeed * 4; ++i) {
      const std::string text = DatumText(gen.Next());
      ASSERT_EQ(text.find_first_of("\n\t"), std::string::npos) << "seed " << seed << ": " << text;
    }
  }
}

TEST(DatumText, RowsReadBackAsKeyListsAndAsRowText) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    DatumGenerator gen(seed);
    for (int i = 0; i < kRowsPerSeed; ++i) {
      const Row row = gen.NextRow(6);
      // A key list ("d1,d2,…", with the blanks a person may put around each datum).
      std::string list;
      for (std::size_t j = 0; j < row.size(); ++j) {
        list += (j ? (gen.Pick(2) ? ", " : ",") : "") + DatumText(row[j]);
      }
      // RowText's "(d1, d2, …)" is a key list in parentheses.
      const std::string text = RowText(row);
      ASSERT_TRUE(text.size() >= 2 && text.front() == '(' && text.back() == ')') << text;
      for (const std::string& printed : {list, text.substr(1, text.size() - 2)}) {
        const std::string why = "seed " + std::to_string(seed) + ": " + printed;
        auto parts = SplitDatumList(printed);
        ASSERT_TRUE(parts.ok()) << why << ": " << parts.status().message();
        if (row.empty()) {  // the empty list is one empty part, which is no datum
          ASSERT_EQ(parts->size(), 1u) << why;
          EXPECT_TRUE((*parts)[0].empty()) << why;
          continue;
        }
        ASSERT_EQ(parts->size(), row.size()) << why;
        Row read;
        for (std::size_t j = 0; j < row.size(); ++j) {
          auto d = ParseDatumText((*parts)[j], TypeOf(row[j]));
          ASSERT_TRUE(d.ok()) << why << ": " << d.status().message();
          read.push_back(std::move(*d));
        }
        ASSERT_TRUE(SameRow(row, read)) << why;
      }
    }
  }
}

TEST(DatumText, RowsReadBackAsLogLines) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    DatumGenerator gen(seed);
    for (int i = 0; i < kRowsPerSeed; ++i) {
      const Row row = gen.NextRow(6);
      pb::Schema schema;
      for (std::size_t j = 0; j < row.size(); ++j) {
        *schema.add_columns() =
            ipc::samples::MakeColumn("c" + std::to_string(j), ScalarOf(row[j], gen.Pick(4)),
                                     std::holds_alternative<Null>(row[j]));
      }
      std::string line = "U 7 -2";
      for (const Datum& d : row) line += " " + DatumText(d);
      const std::string why = "seed " + std::to_string(seed) + ": " + line;
      const auto record = ipc::ParseLogLine(line, schema);
      ASSERT_TRUE(record.has_value()) << why;
      ASSERT_EQ(record->kind, ipc::LogRecord::Kind::kUpdate) << why << ": " << record->error;
      EXPECT_EQ(record->time, 7u) << why;
      EXPECT_EQ(record->diff, -2) << why;
      ASSERT_TRUE(SameRow(row, record->row)) << why;
    }
  }
}

// The shortest text that reads back equal (std::to_chars), with ".0" where it would read as an
// integer — never %.17g's 0.10000000000000001.
TEST(DatumText, FloatsPrintTheShortestTextThatReadsBackEqual) {
  EXPECT_EQ(FloatText(0.1), "0.1");
  EXPECT_EQ(FloatText(-0.0), "-0.0");
  EXPECT_EQ(FloatText(2.0), "2.0");
  EXPECT_EQ(FloatText(2e10), "2e+10");
  EXPECT_EQ(FloatText(1e-300), "1e-300");
  EXPECT_EQ(FloatText(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(FloatText(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(FloatText(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(FloatText(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(RowText({Null{}, true, std::int64_t{-12}, 0.5, std::string("a \"b\"\n")}),
            "(null, true, -12, 0.5, \"a \\\"b\\\"\\n\")");
  // Never longer than %.17g's text, which always reads back equal too.
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < kRowsPerSeed; ++i) {
      const double v = std::bit_cast<double>(rng());
      if (!std::isfinite(v)) continue;
      char longest[40];
      std::snprintf(longest, sizeof longest, "%.17g", v);
      EXPECT_LE(FloatText(v).size(), std::string(longest).size() + 2) << Bits(v);
    }
  }
}

// What the printer never writes is not read either: one syntax, not a family of them.
TEST(DatumText, RefusesTextsOutsideTheSyntax) {
  ColumnType f;
  f.kind = ColumnType::Kind::kFloat64;
  for (const char* text : {"+1.5", "0x10", "infinity", "NaN", "1e999", " 1.5", "1.5 ", "1,5"}) {
    EXPECT_FALSE(ParseDatumText(text, f).ok()) << text;
  }
  ColumnType s;
  s.kind = ColumnType::Kind::kString;
  for (const char* text : {"abc", "\"abc", "\"a\" b", "\"a\\qb\"", "\"a\\\""}) {
    EXPECT_FALSE(ParseDatumText(text, s).ok()) << text;
  }
  ColumnType k;
  k.kind = ColumnType::Kind::kInt64;
  k.nullable = false;
  k.name = "k";
  for (const char* text : {"null", "+1", "1.0", "9223372036854775808", "\"1\"", ""}) {
    EXPECT_FALSE(ParseDatumText(text, k).ok()) << text;
  }
  EXPECT_EQ(ParseDatumText("null", k).status().message(),
            "'null' for column k (int64): the column is not nullable");
  EXPECT_TRUE(ParseDatumText("2", f).ok()) << "a float column takes an integer";
  EXPECT_TRUE(ParseDatumText("1e-400", f).ok()) << "an underflow is its value";
}

}  // namespace
}  // namespace tandem::datum_text_test
