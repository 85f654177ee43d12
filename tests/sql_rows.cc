#include "sql_rows.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <span>

namespace tandem::testing {
namespace sql_rows_detail {

using Rows = std::span<const SqlRow>;

bool IsFloatType(unsigned type) { return type == pg_type::kFloat4 || type == pg_type::kFloat8; }

unsigned TypeOf(const std::vector<unsigned>& types, std::size_t column) {
  return column < types.size() ? types[column] : 0;
}

// The whole text as a number of the column's type (float4 read as float, then widened exactly),
// or nullopt when it is not one.
std::optional<double> ParseFloat(const std::string& text, unsigned type) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = type == pg_type::kFloat4
                           ? static_cast<double>(std::strtof(text.c_str(), &end))
                           : std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// The distance in units in the last place of the column's type between two finite numbers: the
// bit patterns mapped to unsigned integers in the numbers' order (negatives reversed below the
// positives), then subtracted.
std::uint64_t UlpDistance(double a, double b, unsigned type) {
  auto ordered = [](auto bits) {
    using U = decltype(bits);
    constexpr U kSign = U{1} << (sizeof(U) * 8 - 1);
    return static_cast<std::uint64_t>((bits & kSign) ? static_cast<U>(~bits) : (bits | kSign));
  };
  std::uint64_t x, y;
  if (type == pg_type::kFloat4) {
    x = ordered(std::bit_cast<std::uint32_t>(static_cast<float>(a)));
    y = ordered(std::bit_cast<std::uint32_t>(static_cast<float>(b)));
  } else {
    x = ordered(std::bit_cast<std::uint64_t>(a));
    y = ordered(std::bit_cast<std::uint64_t>(b));
  }
  return x > y ? x - y : y - x;
}

// A row's identity for counting: values that ValuesMatch with float_ulps = 0 have one key (a
// float column keyed by its number, -0 as 0 and every NaN as one).
std::string RowKey(const SqlRow& row, const std::vector<unsigned>& types,
                   const RowComparison& how) {
  std::string key;
  for (std::size_t c = 0; c < row.size(); ++c) {
    const SqlValue& v = row[c];
    if (!v) {
      key += 'N';
      continue;
    }
    const unsigned type = TypeOf(types, c);
    if (IsFloatType(type) && !how.float_text) {
      if (auto number = ParseFloat(*v, type)) {
        double d = *number;
        if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
        if (d == 0) d = 0;  // -0 as 0
        const auto bits = std::bit_cast<std::uint64_t>(d);
        key += 'F';
        key.append(reinterpret_cast<const char*>(&bits), sizeof bits);
        continue;
      }
    }
    const std::uint64_t size = v->size();
    key += 'T';
    key.append(reinterpret_cast<const char*>(&size), sizeof size);
    key += *v;
  }
  return key;
}

bool RowsMatch(const SqlRow& expected, const SqlRow& actual, const std::vector<unsigned>& types,
               const RowComparison& how) {
  if (expected.size() != actual.size()) return false;
  for (std::size_t c = 0; c < expected.size(); ++c) {
    if (!ValuesMatch(expected[c], actual[c], TypeOf(types, c), how)) return false;
  }
  return true;
}

std::string Plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// "" when `expected` and `actual` hold the same rows as many times each, else which rows are
// missing from `actual` and which are extra, with their counts.
std::string MultisetDiff(Rows expected, Rows actual, const std::vector<unsigned>& types,
                         const RowComparison& how) {
  struct Tally {
    const SqlRow* row = nullptr;
    std::size_t expected = 0, actual = 0;
  };
  std::map<std::string, Tally> tallies;
  for (const SqlRow& row : expected) {
    Tally& t = tallies[RowKey(row, types, how)];
    t.row = &row;
    ++t.expected;
  }
  for (const SqlRow& row : actual) {
    Tally& t = tallies[RowKey(row, types, how)];
    if (!t.row) t.row = &row;
    ++t.actual;
  }
  // Rows left over on each side after exact matches; with a float tolerance, paired greedily
  // (bounded: a tolerance cannot rescue thousands of differing rows).
  std::vector<Tally*> missing, extra;
  for (auto& [key, t] : tallies) {
    if (t.expected > t.actual) missing.push_back(&t);
    if (t.actual > t.expected) extra.push_back(&t);
  }
  if (how.float_ulps > 0 && !how.float_text && !missing.empty() && !extra.empty() &&
      missing.size() * extra.size() <= 4'000'000) {
    for (Tally* m : missing) {
      for (Tally* x : extra) {
        while (m->expected > m->actual && x->actual > x->expected &&
               RowsMatch(*m->row, *x->row, types, how)) {
          ++m->actual;  // counted as found in actual …
          --x->actual;  // … and no longer extra there
        }
      }
    }
    std::erase_if(missing, [](const Tally* t) { return t->expected <= t->actual; });
    std::erase_if(extra, [](const Tally* t) { return t->actual <= t->expected; });
  }
  if (missing.empty() && extra.empty()) return "";

  std::size_t missing_rows = 0, extra_rows = 0;
  for (const Tally* t : missing) missing_rows += t->expected - t->actual;
  for (const Tally* t : extra) extra_rows += t->actual - t->expected;
  std::string out = "expected " + Plural(expected.size(), "row") + ", actual " +
                    std::to_string(actual.size()) + "; " + std::to_string(missing_rows) +
                    " missing, " + std::to_string(extra_rows) + " extra\n";
  auto list = [&](const char* title, std::vector<Tally*> tallies_of_side, std::size_t rows) {
    if (tallies_of_side.empty()) return;
    std::vector<std::pair<std::string, const Tally*>> lines;
    for (const Tally* t : tallies_of_side) lines.emplace_back(FormatRow(*t->row), t);
    std::sort(lines.begin(), lines.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out += "  " + std::string(title) + " (" + Plural(rows, "row") + "):\n";
    for (std::size_t i = 0; i < lines.size() && i < how.max_listed; ++i) {
      const Tally* t = lines[i].second;
      out += "    " + lines[i].first + "   expected " + std::to_string(t->expected) + "x, actual " +
             std::to_string(t->actual) + "x\n";
    }
    if (lines.size() > how.max_listed) {
      out += "    … and " + Plural(lines.size() - how.max_listed, "more distinct row") + "\n";
    }
  };
  list("missing from actual", missing, missing_rows);
  list("extra in actual", extra, extra_rows);
  return out;
}

// The rows of `rows` around `mark`, numbered from 1, the row `mark` flagged with '>'.
std::string Window(const char* title, Rows rows, std::size_t mark, const RowComparison& how) {
  const std::size_t context = std::max<std::size_t>(2, how.max_listed / 4);
  const std::size_t from = mark > context ? mark - context : 0;
  const std::size_t to = std::min(rows.size(), mark + context + 1);
  std::string out = "  " + std::string(title) + ", " + Plural(rows.size(), "row");
  if (from >= to) return out + " (none at row " + std::to_string(mark + 1) + ")\n";
  out += ", rows " + std::to_string(from + 1) + "–" + std::to_string(to) + ":\n";
  for (std::size_t i = from; i < to; ++i) {
    out += (i == mark ? "  > " : "    ") + std::to_string(i + 1) + " " + FormatRow(rows[i]) + "\n";
  }
  return out;
}

// The first row where two ordered lists part (nullopt: they do not), and why.
std::optional<std::pair<std::size_t, std::string>> FirstOrderedDifference(
    Rows expected, Rows actual, const std::vector<unsigned>& types, const RowComparison& how) {
  if (how.order_columns.empty()) {
    const std::size_t common = std::min(expected.size(), actual.size());
    for (std::size_t i = 0; i < common; ++i) {
      if (!RowsMatch(expected[i], actual[i], types, how)) return std::pair{i, "the rows differ"};
    }
    if (expected.size() != actual.size()) return std::pair{common, "one list ends"};
    return std::nullopt;
  }
  // Runs of rows tied on the ORDER BY columns, compared as multisets.
  auto tied = [&](const SqlRow& a, const SqlRow& b) {
    for (std::size_t c : how.order_columns) {
      const SqlValue none;
      const SqlValue& x = c < a.size() ? a[c] : none;
      const SqlValue& y = c < b.size() ? b[c] : none;
      if (!ValuesMatch(x, y, TypeOf(types, c), how)) return false;
    }
    return true;
  };
  std::size_t i = 0;
  while (i < expected.size() && i < actual.size()) {
    if (!tied(expected[i], actual[i])) {
      return std::pair{i, std::string("the ORDER BY columns' values differ")};
    }
    std::size_t end_expected = i + 1, end_actual = i + 1;
    while (end_expected < expected.size() && tied(expected[i], expected[end_expected])) {
      ++end_expected;
    }
    while (end_actual < actual.size() && tied(expected[i], actual[end_actual])) ++end_actual;
    const std::string diff = MultisetDiff(expected.subspan(i, end_expected - i),
                                          actual.subspan(i, end_actual - i), types, how);
    if (!diff.empty()) {
      std::string indented =
          "the run of rows tied on the ORDER BY columns that starts here "
          "differs:\n    ";
      for (std::size_t c = 0; c + 1 < diff.size(); ++c) {
        indented += diff[c];
        if (diff[c] == '\n') indented += "    ";
      }
      return std::pair{i, indented + "\n"};
    }
    i = end_expected;
  }
  if (expected.size() != actual.size()) return std::pair{i, std::string("one list ends")};
  return std::nullopt;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return "(" + out + ")";
}

}  // namespace sql_rows_detail

using namespace sql_rows_detail;

std::string PgError::ToString() const {
  std::string out =
      sqlstate.empty() ? "client error: " + message : "ERROR " + sqlstate + ": " + message;
  if (!detail.empty()) out += " (DETAIL: " + detail + ")";
  if (!hint.empty()) out += " (HINT: " + hint + ")";
  return out;
}

std::string FormatValue(const SqlValue& value) {
  if (!value) return "NULL";
  std::string out = "'";
  for (const char ch : *value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\'') {
      out += "''";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "'";
}

std::string FormatRow(const SqlRow& row) {
  std::vector<std::string> values;
  for (const SqlValue& v : row) values.push_back(FormatValue(v));
  return Join(values);
}

bool ValuesMatch(const SqlValue& expected, const SqlValue& actual, unsigned type,
                 const RowComparison& how) {
  if (!expected || !actual) return !expected && !actual;
  if (*expected == *actual) return true;
  if (!IsFloatType(type) || how.float_text) return false;
  const auto e = ParseFloat(*expected, type), a = ParseFloat(*actual, type);
  if (!e || !a) return false;
  if (std::isnan(*e) || std::isnan(*a)) return std::isnan(*e) && std::isnan(*a);
  if (*e == *a) return true;  // -0 = 0 too
  if (how.float_ulps == 0 || std::isinf(*e) || std::isinf(*a)) return false;
  return UlpDistance(*e, *a, type) <= how.float_ulps;
}

std::string DiffRows(const std::vector<SqlRow>& expected, const std::vector<SqlRow>& actual,
                     const std::vector<unsigned>& types, const RowComparison& how) {
  if (how.order == RowOrder::kMultiset) {
    const std::string diff = MultisetDiff(expected, actual, types, how);
    return diff.empty() ? "" : "rows differ as multisets: " + diff;
  }
  const auto difference = FirstOrderedDifference(expected, actual, types, how);
  if (!difference) return "";
  const auto& [row, why] = *difference;
  std::string out = "ordered rows differ at row " + std::to_string(row + 1) + ": " + why;
  if (out.back() != '\n') out += '\n';
  out += Window("expected", expected, row, how);
  out += Window("actual", actual, row, how);
  const std::string as_multisets = MultisetDiff(expected, actual, types, how);
  out += as_multisets.empty() ? "  as multisets they are equal: only the order differs\n"
                              : "  as multisets: " + as_multisets;
  return out;
}

std::string DiffResults(const PgAnswer& expected, const PgAnswer& actual,
                        const RowComparison& how) {
  auto describe = [](const PgAnswer& r) {
    return r.ok() ? Plural(r.rows.size(), "row") + " of " + Join(r.column_names)
                  : r.error->ToString();
  };
  if (!expected.ok() || !actual.ok()) {
    if (!expected.ok() && !actual.ok() && expected.error->sqlstate == actual.error->sqlstate) {
      return "";
    }
    return "expected " + describe(expected) + "\n  actual " + describe(actual) + "\n";
  }
  if (expected.column_types.size() != actual.column_types.size()) {
    return "expected " + Plural(expected.column_types.size(), "column") + " " +
           Join(expected.column_names) + ", actual " + std::to_string(actual.column_types.size()) +
           " " + Join(actual.column_names) + "\n";
  }
  if (how.column_names && expected.column_names != actual.column_names) {
    return "column names differ: expected " + Join(expected.column_names) + ", actual " +
           Join(actual.column_names) + "\n";
  }
  if (how.column_types && expected.column_types != actual.column_types) {
    std::vector<std::string> e, a;
    for (unsigned t : expected.column_types) e.push_back(std::to_string(t));
    for (unsigned t : actual.column_types) a.push_back(std::to_string(t));
    return "column type OIDs differ: expected " + Join(e) + ", actual " + Join(a) + " for " +
           Join(expected.column_names) + "\n";
  }
  return DiffRows(expected.rows, actual.rows, expected.column_types, how);
}

::testing::AssertionResult SameResult(const PgAnswer& expected, const PgAnswer& actual,
                                      const RowComparison& how) {
  const std::string diff = DiffResults(expected, actual, how);
  if (diff.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diff;
}

}  // namespace tandem::testing
