#include "sql_oracle/values.h"

#include <cstdio>
#include <vector>

namespace tandem::testing::sql_oracle {

std::string DoubleText(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string RandomValueText(Random& random, SqlType type) {
  static const std::vector<std::string> kTexts = {"a", "b", "c", "ab", "B", "", "a b", "it's"};
  switch (type) {
    case SqlType::kBigint:
      return std::to_string(random.Between(-2, 9));
    case SqlType::kDouble:
      return DoubleText(static_cast<double>(random.Between(-8, 16)) / 4.0);
    case SqlType::kText:
      return random.Pick(kTexts);
    case SqlType::kBool:
      return random.Percent(50) ? "t" : "f";
    case SqlType::kInt4:
      return std::to_string(random.Between(-2, 9));
    case SqlType::kNumeric: {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.2f",
                    static_cast<double>(random.Between(-8, 16)) / 4.0);
      return buffer;
    }
    case SqlType::kDate: {
      static const std::vector<std::string> kDates = {"2026-11-28", "2026-11-30", "2026-12-01",
                                                      "2026-12-06", "2026-12-07", "2026-12-31",
                                                      "2027-01-01", "2024-02-29"};
      return random.Pick(kDates);
    }
    case SqlType::kInterval: {
      // Whole hours and days, and a month: '1 mon', '30 days' and '720:00:00' are one value
      // spelled three ways (a month is 30 days, a day 24 hours, in comparisons and keys);
      // '1 mon 2 days' and '-1 mons' carry months into date and timestamp arithmetic. No year:
      // every epoch of a sum of two values stays below 10^7 (query_generator.cc: Extract).
      static const std::vector<std::string> kIntervals = {
          "00:00:00",  "01:00:00", "1 day",   "2 days",    "-1 days",      "1 day 06:00:00",
          "-06:00:00", "1 mon",    "30 days", "720:00:00", "1 mon 2 days", "-1 mons"};
      return random.Pick(kIntervals);
    }
    case SqlType::kInt2:
      return std::to_string(random.Between(-2, 9));
    case SqlType::kFloat4:
      return DoubleText(static_cast<double>(random.Between(-8, 16)) / 4.0);
    case SqlType::kNumeric12_4: {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.4f",
                    static_cast<double>(random.Between(-8, 16)) / 4.0);
      return buffer;
    }
    case SqlType::kNumericAny: {
      // One value at several scales: equal, printed apart (PostgreSQL keeps the scale written).
      static const std::vector<std::string> kNumerics = {"1.5", "1.50",  "2",    "2.0", "-0.25",
                                                         "0",   "0.000", "3.75", "10",  "-1.5"};
      return random.Pick(kNumerics);
    }
    case SqlType::kVarchar: {
      static const std::vector<std::string> kVarchars = {"a",   "b", "ab",   "B",
                                                         "a b", "",  "abcd", "it's"};
      return random.Pick(kVarchars);
    }
    case SqlType::kChar: {
      static const std::vector<std::string> kChars = {"a", "b", "ab", "B", "a b", "", "abc"};
      return random.Pick(kChars);
    }
    case SqlType::kBytea: {
      static const std::vector<std::string> kByteas = {"\\x",   "\\x01", "\\x0102",
                                                       "\\xff", "\\x61", "\\x6162"};
      return random.Pick(kByteas);
    }
    case SqlType::kTime: {
      static const std::vector<std::string> kTimes = {"00:00:00", "06:00:00", "12:30:00",
                                                      "23:00:00", "23:59:59", "12:30:00.5"};
      return random.Pick(kTimes);
    }
    case SqlType::kTimestampTz:
    case SqlType::kTimestamp: {
      // A leap day and a month's last day, whose month arithmetic clamps.
      static const std::vector<std::string> kDays = {"2026-11-30", "2026-12-01", "2026-12-06",
                                                     "2024-02-29", "2026-01-31"};
      static const std::vector<std::string> kHours = {"00:00:00", "06:00:00", "12:30:00",
                                                      "23:59:59"};
      const std::string day = random.Pick(kDays);
      const std::string text = day + " " + random.Pick(kHours);
      return type == SqlType::kTimestampTz ? text + "+00" : text;
    }
    case SqlType::kUuid: {
      static const std::vector<std::string> kUuids = {
          "00000000-0000-0000-0000-000000000000", "123e4567-e89b-12d3-a456-426614174000",
          "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "ffffffff-ffff-ffff-ffff-ffffffffffff"};
      return random.Pick(kUuids);
    }
  }
  return "";
}

std::string RandomCalendarInterval(Random& random) {
  static const std::vector<std::string> kIntervals = {
      "INTERVAL '1 mon'",         "INTERVAL '-1 mon'",    "INTERVAL '30 days'",
      "INTERVAL '1 year 2 mons'", "INTERVAL '1 day'",     "INTERVAL '-06:00:00'",
      "INTERVAL '1 mon -1 days'", "INTERVAL '720:00:00'", "INTERVAL '-1 year'"};
  return random.Pick(kIntervals);
}

std::string RandomLiteral(Random& random, SqlType type, bool numeric_constant) {
  const std::string text = RandomValueText(random, type);
  if (type == SqlType::kDouble && !numeric_constant) return "'" + text + "'::float8";
  const std::string literal = SqlLiteral(text, type);
  if (!literal.empty() && literal[0] == '-') return "(" + literal + ")";
  return literal;
}

}  // namespace tandem::testing::sql_oracle
