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
                                                      "2027-01-01"};
      return random.Pick(kDates);
    }
    case SqlType::kTimestamp: {
      static const std::vector<std::string> kDays = {"2026-11-30", "2026-12-01", "2026-12-06"};
      static const std::vector<std::string> kHours = {"00:00:00", "06:00:00", "12:30:00",
                                                      "23:59:59"};
      return random.Pick(kDays) + " " + random.Pick(kHours);
    }
    case SqlType::kInterval: {
      static const std::vector<std::string> kIntervals = {
          "00:00:00", "01:00:00", "1 day", "2 days", "-1 days", "1 day 06:00:00", "-06:00:00"};
      return random.Pick(kIntervals);
    }
  }
  return "";
}

std::string RandomLiteral(Random& random, SqlType type, bool numeric_constant) {
  const std::string text = RandomValueText(random, type);
  if (type == SqlType::kDouble && !numeric_constant) return "'" + text + "'::float8";
  const std::string literal = SqlLiteral(text, type);
  if (!literal.empty() && literal[0] == '-') return "(" + literal + ")";
  return literal;
}

}  // namespace tandem::testing::sql_oracle
