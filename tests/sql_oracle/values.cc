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
