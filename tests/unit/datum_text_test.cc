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
#include <variant>
#include <vector>

#include "base/count.h"
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
    switch (Pick(std::variant_size_v<Datum>)) {
      case 0:
        return Null{};
      case 1:
        return Pick(2) == 1;
      case 2:
        return Int();
      case 3:
        return Float();
      case 4:
        return String();
      case 5:
        return NumericValue();
      case 6:
        return Bytes{String()};
      case 7:
        return Date{static_cast<std::int32_t>(Between(kFirstDay, kLastDay))};
      case 8:
        return TimeOfDay{Pick(4) == 0 ? kMicrosPerDay * static_cast<std::int64_t>(Pick(2))
                                      : Between(0, kMicrosPerDay)};
      case 9:
        return Timestamp{Micros()};
      case 10:
        return TimestampTz{Micros()};
      case 11:
        return IntervalValue();
      default: {
        Uuid u;
        for (auto& b : u.bytes) b = static_cast<std::uint8_t>(rng_());
        return u;
      }
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
  // PostgreSQL's range: 4713-11-24 BC to 9999-12-31 here (the years people write).
  static constexpr std::int64_t kFirstDay = -2440588;
  static constexpr std::int64_t kLastDay = 2932896;

  std::int64_t Between(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }

  std::int64_t Micros() {
    switch (Pick(3)) {
      case 0:
        return Between(kFirstDay, kLastDay) * kMicrosPerDay;  // midnight
      case 1:
        return Between(-1'000'000'000, 1'000'000'000) * kMicrosPerSecond;  // whole seconds
      default:
        return Between(kFirstDay * kMicrosPerDay, (kLastDay + 1) * kMicrosPerDay - 1);
    }
  }

  Numeric NumericValue() {
    Int128 limit = 1;
    for (int i = 0; i < kNumericMaxDigits; ++i) limit *= 10;
    Int128 c;
    switch (Pick(3)) {
      case 0:
        c = limit - 1 - static_cast<Int128>(Pick(2));
        break;
      case 1:
        c = static_cast<Int128>(Between(-2000, 2000));
        break;
      default:
        c = (static_cast<Int128>(rng_()) << 62 | static_cast<Int128>(rng_() >> 2)) % limit;
        break;
    }
    if (Pick(2) == 0) c = -c;
    return Numeric::FromParts(c, static_cast<int>(Pick(kNumericMaxDigits + 1)));
  }

  Interval IntervalValue() {
    Interval i;
    i.months = static_cast<std::int32_t>(Pick(3) == 0 ? 0 : Between(-30'000, 30'000));
    i.days = static_cast<std::int32_t>(Pick(3) == 0 ? 0 : Between(-30'000, 30'000));
    switch (Pick(3)) {
      case 0:
        i.micros = 0;
        break;
      case 1:
        i.micros = Between(-100'000, 100'000) * kMicrosPerSecond;
        break;
      default:
        i.micros = Between(-1'000'000'000'000'000, 1'000'000'000'000'000);
        break;
    }
    return i;
  }

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
  using Kind = ColumnType::Kind;
  static constexpr Kind kKinds[] = {
      Kind::kAny,         Kind::kBool,     Kind::kInt64, Kind::kFloat64, Kind::kString,
      Kind::kNumeric,     Kind::kBytea,    Kind::kDate,  Kind::kTime,    Kind::kTimestamp,
      Kind::kTimestampTz, Kind::kInterval, Kind::kUuid};
  static_assert(std::size(kKinds) == std::variant_size_v<Datum>);
  return kKinds[d.index()];
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
  static constexpr pb::ScalarType kOfKind[] = {pb::SCALAR_TYPE_UNSPECIFIED,
                                               pb::BOOL,
                                               pb::INT64,
                                               pb::FLOAT64,
                                               pb::STRING,
                                               pb::NUMERIC,
                                               pb::BYTEA,
                                               pb::DATE,
                                               pb::TIME,
                                               pb::TIMESTAMP,
                                               pb::TIMESTAMPTZ,
                                               pb::INTERVAL,
                                               pb::UUID};
  static_assert(std::size(kOfKind) == std::variant_size_v<Datum>);
  if (d.index() != 0) return kOfKind[d.index()];
  return static_cast<pb::ScalarType>(1 + pick % 15);  // a null fits a nullable column of any type
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

// What the printer never writes is not read either: one syntax, not a family of them. (A typed
// column's bare PostgreSQL text is the exception, and only for the types of DESIGN §16.)
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

ColumnType Column(ColumnType::Kind kind) {
  ColumnType t;
  t.kind = kind;
  t.name = "c";
  return t;
}

// Typed literals: the type word and PostgreSQL's text in single quotes.
TEST(DatumText, NewKindsPrintAsPostgresTypedLiterals) {
  EXPECT_EQ(DatumText(Numeric::FromParts(1250, 2)), "numeric '12.50'");
  EXPECT_EQ(DatumText(Bytes{"\x0a\x0b"}), "bytea '\\x0a0b'");
  EXPECT_EQ(DatumText(Date{20793}), "date '2026-12-06'");
  EXPECT_EQ(DatumText(TimeOfDay{12 * 3600 * kMicrosPerSecond}), "time '12:00:00'");
  const std::int64_t noon = 20793 * kMicrosPerDay + 12 * 3600 * kMicrosPerSecond;
  EXPECT_EQ(DatumText(Timestamp{noon}), "timestamp '2026-12-06 12:00:00'");
  EXPECT_EQ(DatumText(TimestampTz{noon}), "timestamptz '2026-12-06 12:00:00+00'");
  EXPECT_EQ(DatumText(Interval{0, 1, 2 * 3600 * kMicrosPerSecond}), "interval '1 day 02:00:00'");
  Uuid u;
  const std::uint8_t bytes[16] = {0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
                                  0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11};
  std::copy(std::begin(bytes), std::end(bytes), u.bytes.begin());
  EXPECT_EQ(DatumText(u), "uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'");
  // A key list with typed literals splits at the commas between them.
  auto parts = SplitDatumList("numeric '1.5', date '2026-12-06',\"a,b\"");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(*parts, (std::vector<std::string>{"numeric '1.5'", "date '2026-12-06'", "\"a,b\""}));
}

// A typed column also reads PostgreSQL's bare text, brought to its type as PostgreSQL's input
// brings it (psql 15: SELECT '12.5'::numeric(12,2) → 12.50; '40000'::int2 → ERROR: value
// "40000" is out of range for type smallint; '1e39'::float4 → ERROR: "1e39" is out of range for
// type real; INSERT 'abcd' into varchar(3) → ERROR: value too long for type character
// varying(3); 'abc  '::varchar(3) → abc).
TEST(DatumText, TypedColumnsReadBareTextWithTheirTypesRules) {
  using Kind = ColumnType::Kind;
  auto read = [](std::string_view text, const ColumnType& t) { return ParseDatumText(text, t); };
  auto date = read("2026-12-06", Column(Kind::kDate));
  ASSERT_TRUE(date.ok()) << date.status().message();
  EXPECT_TRUE(*date == Datum(Date{20793}));
  ColumnType money = Column(Kind::kNumeric);
  money.precision = 12;
  money.scale = 2;
  auto price = read("12.5", money);
  ASSERT_TRUE(price.ok()) << price.status().message();
  EXPECT_EQ(DatumText(*price), "numeric '12.50'");
  EXPECT_TRUE(read("numeric '12.5'", money).ok());
  EXPECT_FALSE(read("12345678901.5", money).ok()) << "11 digits before the point in (12,2)";
  EXPECT_FALSE(read("date '2026-12-06'", money).ok()) << "a date is not a numeric";
  EXPECT_FALSE(read("12.5", Column(Kind::kInt64)).ok());

  EXPECT_TRUE(read("32767", Column(Kind::kInt16)).ok());
  EXPECT_FALSE(read("32768", Column(Kind::kInt16)).ok());
  EXPECT_TRUE(read("-2147483648", Column(Kind::kInt32)).ok());
  EXPECT_FALSE(read("2147483648", Column(Kind::kInt32)).ok());
  auto real = read("0.1", Column(Kind::kFloat32));
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(std::get<double>(*real), static_cast<double>(0.1f)) << "float4 rounds to float";
  EXPECT_FALSE(read("1e39", Column(Kind::kFloat32)).ok());
  EXPECT_EQ(ParsePostgresText("40000", Column(Kind::kInt16)).status().message(),
            "value \"40000\" is out of range for type smallint");
  EXPECT_EQ(ParsePostgresText("1e39", Column(Kind::kFloat32)).status().message(),
            "\"1e39\" is out of range for type real");
  EXPECT_EQ(ParsePostgresText("+-1", Column(Kind::kInt32)).status().message(),
            "invalid input syntax for type integer: \"+-1\"");
  EXPECT_TRUE(ParsePostgresText(" +12 ", Column(Kind::kInt32)).ok());

  ColumnType varchar = Column(Kind::kString);
  varchar.length = 3;
  EXPECT_FALSE(read("\"abcd\"", varchar).ok());
  EXPECT_EQ(ParsePostgresText("abcd", varchar).status().message(),
            "value too long for type character varying(3)");
  auto cut = read("\"abc  \"", varchar);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(std::get<std::string>(*cut), "abc") << "blanks beyond the length are cut";
  EXPECT_TRUE(read("\"\xc3\xa9t\xc3\xa9\"", varchar).ok()) << "characters, not bytes";
  ColumnType fixed = varchar;
  fixed.blank_padded = true;
  auto padded = read("\"a\"", fixed);
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(std::get<std::string>(*padded), "a  ");

  auto bytes = read("\\x0A0b", Column(Kind::kBytea));
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_EQ(std::get<Bytes>(*bytes).bytes, "\x0a\x0b");
  EXPECT_EQ(ParsePostgresText("\\xa", Column(Kind::kBytea)).status().message(),
            "invalid hexadecimal data: odd number of digits");
  // psql 15: SELECT 'ab\\c'::bytea → \x61625c63; '\001'::bytea → \x01.
  EXPECT_EQ(std::get<Bytes>(*ParsePostgresText("ab\\\\c", Column(Kind::kBytea))).bytes, "ab\\c");
  EXPECT_EQ(std::get<Bytes>(*ParsePostgresText("\\001", Column(Kind::kBytea))).bytes, "\x01");
  // psql 15: '{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}'::uuid, 'a0eebc999c0b4ef8bb6d6bb9bd380a11'
  // and 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11' are all a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11.
  for (const char* text :
       {"{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
        "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11"}) {
    auto u = read(text, Column(Kind::kUuid));
    ASSERT_TRUE(u.ok()) << text << ": " << u.status().message();
    EXPECT_EQ(UuidText(std::get<Uuid>(*u)), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  }
  EXPECT_FALSE(read("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", Column(Kind::kUuid)).ok());
  EXPECT_FALSE(read("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", Column(Kind::kUuid)).ok());
  // psql 15: ' yes '::bool → t, 'of'::bool → f.
  EXPECT_TRUE(*ParsePostgresText(" yes ", Column(Kind::kBool)) == Datum(true));
  EXPECT_TRUE(*ParsePostgresText("of", Column(Kind::kBool)) == Datum(false));
  EXPECT_FALSE(ParsePostgresText("o", Column(Kind::kBool)).ok());
}

// psql 15 (extra_float_digits 1): SELECT 1e20::float8, 123456789012345680000::float8,
// 0.0001::float8, 0.00001::float8, 1e15::float8, 1e14::float8, 1.5e-7::float8, '-0'::float8 →
// 1e+20 | 1.2345678901234568e+20 | 0.0001 | 1e-05 | 1e+15 | 100000000000000 | 1.5e-07 | -0;
// SELECT 0.1::float4, 1e6::float4, 123456::float4, 1234567::float4 → 0.1 | 1e+06 | 123456 |
// 1.234567e+06.
TEST(DatumText, PostgresTextPrintsFloatsAsPostgres) {
  const std::pair<double, const char*> float8[] = {
      {1e20, "1e+20"},
      {123456789012345680000.0, "1.2345678901234568e+20"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {1e15, "1e+15"},
      {1e14, "100000000000000"},
      {1.5e-7, "1.5e-07"},
      {-0.0, "-0"},
      {2.5, "2.5"},
      {-1234.5, "-1234.5"},
      {std::numeric_limits<double>::quiet_NaN(), "NaN"},
      {-std::numeric_limits<double>::infinity(), "-Infinity"}};
  for (const auto& [v, text] : float8) EXPECT_EQ(PostgresOutput(Datum(v)), text) << text;
  const std::pair<float, const char*> float4[] = {
      {0.1f, "0.1"}, {1e6f, "1e+06"}, {123456.0f, "123456"}, {1234567.0f, "1.234567e+06"}};
  for (const auto& [v, text] : float4) EXPECT_EQ(PostgresFloat4Output(v), text) << text;
  EXPECT_EQ(PostgresOutput(Datum(true)), "t");
  EXPECT_EQ(PostgresOutput(Datum(std::string("a b"))), "a b");
}

}  // namespace
}  // namespace tandem::datum_text_test
