#include "sql_oracle/compare.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

namespace tandem::testing::sql_oracle {
namespace {

__extension__ typedef __int128 Int128;

inline constexpr Int128 kMicrosPerDay = Int128{86'400} * 1'000'000;
inline constexpr Int128 kMicrosPerMonth = 30 * kMicrosPerDay;

// A run of decimal digits of `text` from `*pos` (at most 18: every field PostgreSQL prints fits),
// *pos past it; nullopt when there is none or it is longer.
std::optional<Int128> Digits(std::string_view text, std::size_t* pos) {
  const std::size_t begin = *pos;
  Int128 value = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9') {
    value = value * 10 + (text[*pos] - '0');
    ++*pos;
  }
  if (*pos == begin || *pos - begin > 18) return std::nullopt;
  return value;
}

// The time part of an interval's output: [+-]H…H:MM:SS[.f…f] (hours of any number of digits,
// at most 6 decimals of a second), as signed microseconds.
std::optional<Int128> TimeMicros(std::string_view token) {
  std::size_t pos = 0;
  const bool negative = !token.empty() && token[0] == '-';
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) ++pos;
  const std::optional<Int128> hours = Digits(token, &pos);
  if (!hours || pos >= token.size() || token[pos++] != ':') return std::nullopt;
  const std::size_t minutes_at = pos;
  const std::optional<Int128> minutes = Digits(token, &pos);
  if (!minutes || pos - minutes_at != 2 || *minutes > 59) return std::nullopt;
  if (pos >= token.size() || token[pos++] != ':') return std::nullopt;
  const std::size_t seconds_at = pos;
  const std::optional<Int128> seconds = Digits(token, &pos);
  if (!seconds || pos - seconds_at != 2 || *seconds > 59) return std::nullopt;
  Int128 fraction = 0;
  if (pos < token.size()) {
    if (token[pos++] != '.') return std::nullopt;
    const std::size_t fraction_at = pos;
    const std::optional<Int128> digits = Digits(token, &pos);
    const std::size_t count = pos - fraction_at;
    if (!digits || count > 6 || pos != token.size()) return std::nullopt;
    fraction = *digits;
    for (std::size_t i = count; i < 6; ++i) fraction *= 10;
  }
  const Int128 micros = ((*hours * 60 + *minutes) * 60 + *seconds) * 1'000'000 + fraction;
  return negative ? -micros : micros;
}

// An interval as PostgreSQL prints it under IntervalStyle postgres — signed fields "N year[s]",
// "N mon[s]", "N day[s]" in that order, each at most once, then maybe a signed time part
// ("1 year 2 mons -3 days +04:05:06.5", "-00:00:01", "00:00:00") — as its span in
// microseconds, a month 30 days and a day 24 hours, as PostgreSQL compares intervals ('1 mon' =
// '30 days' = '720:00:00'). nullopt when `text` is not such an output.
std::optional<Int128> IntervalSpan(std::string_view text) {
  static constexpr std::string_view kUnits[][2] = {
      {"year", "years"}, {"mon", "mons"}, {"day", "days"}};
  static constexpr Int128 kUnitMicros[] = {12 * kMicrosPerMonth, kMicrosPerMonth, kMicrosPerDay};
  std::vector<std::string_view> tokens;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    if (end == pos) return std::nullopt;  // a doubled, leading or trailing space
    tokens.push_back(text.substr(pos, end - pos));
    pos = end == text.size() ? end : end + 1;
    if (pos == text.size() && end != text.size()) return std::nullopt;
  }
  if (tokens.empty()) return std::nullopt;
  Int128 span = 0;
  std::size_t next_unit = 0;  // units come in order, each at most once
  std::size_t t = 0;
  while (t < tokens.size()) {
    const std::string_view token = tokens[t];
    if (token.find(':') != std::string_view::npos) {
      if (t + 1 != tokens.size()) return std::nullopt;  // the time part comes last
      const std::optional<Int128> micros = TimeMicros(token);
      if (!micros) return std::nullopt;
      return span + *micros;
    }
    if (t + 1 >= tokens.size()) return std::nullopt;
    std::size_t pos = 0;
    const bool negative = token[0] == '-';
    if (token[0] == '-' || token[0] == '+') ++pos;
    const std::optional<Int128> count = Digits(token, &pos);
    if (!count || pos != token.size()) return std::nullopt;
    const std::string_view unit = tokens[t + 1];
    std::size_t u = next_unit;
    while (u < 3 && unit != kUnits[u][0] && unit != kUnits[u][1]) ++u;
    if (u == 3) return std::nullopt;
    span += (negative ? -*count : *count) * kUnitMicros[u];
    next_unit = u + 1;
    t += 2;
  }
  return span;
}

enum class ValueClass { kInteger, kNumber, kBool, kText };

ValueClass ClassOf(unsigned oid) {
  switch (oid) {
    case pg_type::kInt2:
    case pg_type::kInt4:
    case pg_type::kInt8:
      return ValueClass::kInteger;
    case pg_type::kFloat4:
    case pg_type::kFloat8:
    case pg_type::kNumeric:
      return ValueClass::kNumber;
    case pg_type::kBool:
      return ValueClass::kBool;
    default:
      return ValueClass::kText;
  }
}

const char* ClassName(ValueClass c) {
  switch (c) {
    case ValueClass::kInteger:
      return "integer";
    case ValueClass::kNumber:
      return "number";
    case ValueClass::kBool:
      return "bool";
    case ValueClass::kText:
      return "text";
  }
  return "?";
}

bool Compatible(ValueClass expected, ValueClass actual) {
  if (expected == actual) return true;
  return (expected == ValueClass::kNumber && actual == ValueClass::kInteger) ||
         (expected == ValueClass::kInteger && actual == ValueClass::kNumber);
}

// One value, parsed once for ordering and comparison.
struct Cell {
  bool null = true;
  bool numeric = false;      // `number` holds it (compared as a number)
  bool approximate = false;  // numeric, and equal to a number within kRelativeTolerance
  long double number = 0;
  bool interval = false;  // `span` holds it (compared as an interval's span)
  Int128 span = 0;
  std::string text;
};

using CellRow = std::vector<Cell>;

enum class ColumnMode { kText, kExact, kApproximate, kInterval };

// How each column compares: as intervals' spans (either side interval), as integers (both sides
// integers), as numbers within the tolerance (either side float or numeric), or as text.
std::vector<ColumnMode> ColumnModes(const std::vector<unsigned>& expected,
                                    const std::vector<unsigned>& actual) {
  std::vector<ColumnMode> modes(expected.size(), ColumnMode::kText);
  for (std::size_t c = 0; c < expected.size(); ++c) {
    const ValueClass e = ClassOf(expected[c]);
    const ValueClass a = c < actual.size() ? ClassOf(actual[c]) : e;
    if (expected[c] == pg_type::kInterval ||
        (c < actual.size() && actual[c] == pg_type::kInterval)) {
      modes[c] = ColumnMode::kInterval;
    } else if (e == ValueClass::kNumber || a == ValueClass::kNumber) {
      modes[c] = ColumnMode::kApproximate;
    } else if (e == ValueClass::kInteger || a == ValueClass::kInteger) {
      modes[c] = ColumnMode::kExact;
    }
  }
  return modes;
}

Cell ToCell(const SqlValue& value, ColumnMode mode) {
  Cell cell;
  if (!value) return cell;
  cell.null = false;
  cell.text = *value;
  if (mode == ColumnMode::kInterval) {
    if (const std::optional<Int128> span = IntervalSpan(*value)) {
      cell.interval = true;
      cell.span = *span;
    }
  } else if (mode != ColumnMode::kText) {
    char* end = nullptr;
    errno = 0;
    const long double n = std::strtold(value->c_str(), &end);
    if (!value->empty() && end == value->c_str() + value->size()) {
      cell.numeric = true;
      cell.approximate = mode == ColumnMode::kApproximate;
      cell.number = n;
    }
  }
  return cell;
}

std::vector<CellRow> ToCells(const std::vector<SqlRow>& rows,
                             const std::vector<ColumnMode>& modes) {
  std::vector<CellRow> out;
  out.reserve(rows.size());
  for (const SqlRow& row : rows) {
    CellRow cells;
    for (std::size_t c = 0; c < row.size(); ++c) {
      cells.push_back(ToCell(row[c], c < modes.size() ? modes[c] : ColumnMode::kText));
    }
    out.push_back(std::move(cells));
  }
  return out;
}

// A total order of cells: NULL first, then numbers (NaN last), then intervals by span (equal
// spans tie whatever their spelling, as CellsMatch pairs them), then texts.
int OrderCells(const Cell& a, const Cell& b) {
  if (a.null != b.null) return a.null ? -1 : 1;
  if (a.null) return 0;
  if (a.numeric != b.numeric) return a.numeric ? -1 : 1;
  if (a.numeric) {
    const bool an = std::isnan(a.number), bn = std::isnan(b.number);
    if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
    if (a.number < b.number) return -1;
    return a.number > b.number ? 1 : 0;
  }
  if (a.interval != b.interval) return a.interval ? -1 : 1;
  if (a.interval) return a.span < b.span ? -1 : (a.span > b.span ? 1 : 0);
  return a.text.compare(b.text) < 0 ? -1 : (a.text == b.text ? 0 : 1);
}

int OrderCellRows(const CellRow& a, const CellRow& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t c = 0; c < n; ++c) {
    if (int r = OrderCells(a[c], b[c]); r != 0) return r;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

bool CellsMatch(const Cell& expected, const Cell& actual) {
  if (expected.null || actual.null) return expected.null == actual.null;
  if (expected.numeric && actual.numeric) {
    const long double a = expected.number, b = actual.number;
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b) || !expected.approximate) return a == b;
    const long double scale = std::max(std::fabs(a), std::fabs(b));
    return std::fabs(a - b) <= static_cast<long double>(kRelativeTolerance) * scale;
  }
  if (expected.interval || actual.interval) {
    return expected.interval && actual.interval && expected.span == actual.span;
  }
  return expected.numeric == actual.numeric && expected.text == actual.text;
}

bool RowsMatch(const CellRow& expected, const CellRow& actual) {
  if (expected.size() != actual.size()) return false;
  for (std::size_t c = 0; c < expected.size(); ++c) {
    if (!CellsMatch(expected[c], actual[c])) return false;
  }
  return true;
}

std::string Rows(const std::vector<const SqlRow*>& rows, std::size_t max_listed) {
  std::string out;
  for (std::size_t i = 0; i < rows.size() && i < max_listed; ++i) {
    out += "    " + FormatRow(*rows[i]) + "\n";
  }
  if (rows.size() > max_listed) {
    out += "    … and " + std::to_string(rows.size() - max_listed) + " more\n";
  }
  return out;
}

// Rows [begin, end) of both sides as multisets: "" or the rows missing and extra.
std::string DiffMultiset(const std::vector<SqlRow>& expected_rows,
                         const std::vector<CellRow>& expected,
                         const std::vector<SqlRow>& actual_rows, const std::vector<CellRow>& actual,
                         std::size_t begin, std::size_t end_expected, std::size_t end_actual) {
  std::vector<std::size_t> e, a;
  for (std::size_t i = begin; i < end_expected; ++i) e.push_back(i);
  for (std::size_t i = begin; i < end_actual; ++i) a.push_back(i);
  std::sort(e.begin(), e.end(), [&](std::size_t x, std::size_t y) {
    return OrderCellRows(expected[x], expected[y]) < 0;
  });
  std::sort(a.begin(), a.end(),
            [&](std::size_t x, std::size_t y) { return OrderCellRows(actual[x], actual[y]) < 0; });
  std::vector<const SqlRow*> missing, extra;
  std::size_t i = 0, j = 0;
  while (i < e.size() || j < a.size()) {
    if (i < e.size() && j < a.size() && RowsMatch(expected[e[i]], actual[a[j]])) {
      ++i, ++j;
    } else if (j == a.size() || (i < e.size() && OrderCellRows(expected[e[i]], actual[a[j]]) < 0)) {
      missing.push_back(&expected_rows[e[i++]]);
    } else {
      extra.push_back(&actual_rows[a[j++]]);
    }
  }
  if (missing.empty() && extra.empty()) return "";
  std::string out;
  if (!missing.empty()) {
    out += "  rows PostgreSQL has and the engine does not (" + std::to_string(missing.size()) +
           "):\n" + Rows(missing, 10);
  }
  if (!extra.empty()) {
    out += "  rows the engine has and PostgreSQL does not (" + std::to_string(extra.size()) +
           "):\n" + Rows(extra, 10);
  }
  return out;
}

CellRow Project(const CellRow& row, const std::vector<std::size_t>& columns) {
  CellRow out;
  for (std::size_t c : columns) {
    if (c < row.size()) out.push_back(row[c]);
  }
  return out;
}

}  // namespace

std::string DiffAnswers(const PgAnswer& expected, const PgAnswer& actual,
                        const AnswerOrder& order) {
  if (!expected.ok() || !actual.ok()) {
    if (!expected.ok() && !actual.ok()) {
      if (expected.sqlstate() == actual.sqlstate()) return "";
      return "  both failed, with different SQLSTATEs: PostgreSQL " + expected.error->ToString() +
             "; the engine " + actual.error->ToString() + "\n";
    }
    if (!expected.ok()) {
      return "  PostgreSQL failed (" + expected.error->ToString() + ") and the engine answered " +
             std::to_string(actual.rows.size()) + " rows\n";
    }
    return "  the engine failed: " + actual.error->ToString() + "\n";
  }
  const std::size_t width = expected.column_types.size();
  if (actual.column_types.size() != width) {
    return "  PostgreSQL answered " + std::to_string(width) + " columns, the engine " +
           std::to_string(actual.column_types.size()) + "\n";
  }
  for (std::size_t c = 0; c < width; ++c) {
    const ValueClass e = ClassOf(expected.column_types[c]);
    const ValueClass a = ClassOf(actual.column_types[c]);
    if (!Compatible(e, a)) {
      return "  column " + std::to_string(c + 1) + ": PostgreSQL's type (OID " +
             std::to_string(expected.column_types[c]) + ") is " + ClassName(e) +
             ", the engine's (OID " + std::to_string(actual.column_types[c]) + ") " + ClassName(a) +
             "\n";
    }
  }
  for (const SqlRow& row : actual.rows) {
    if (row.size() != width) {
      return "  the engine answered a row of " + std::to_string(row.size()) + " values in " +
             std::to_string(width) + " columns\n";
    }
  }
  const std::vector<ColumnMode> modes = ColumnModes(expected.column_types, actual.column_types);
  const std::vector<CellRow> e = ToCells(expected.rows, modes);
  const std::vector<CellRow> a = ToCells(actual.rows, modes);
  const std::string counts = "  PostgreSQL answered " + std::to_string(e.size()) +
                             " rows, the engine " + std::to_string(a.size()) + "\n";
  if (!order.ordered) {
    std::string diff = DiffMultiset(expected.rows, e, actual.rows, a, 0, e.size(), a.size());
    return diff.empty() ? "" : counts + diff;
  }
  if (e.size() != a.size()) {
    return counts + DiffMultiset(expected.rows, e, actual.rows, a, 0, e.size(), a.size());
  }
  std::vector<std::size_t> columns = order.order_columns;
  if (columns.empty()) {
    for (std::size_t c = 0; c < width; ++c) columns.push_back(c);
  }
  std::size_t begin = 0;
  while (begin < e.size()) {
    const CellRow key = Project(e[begin], columns);
    std::size_t end = begin + 1;
    while (end < e.size() && OrderCellRows(Project(e[end], columns), key) == 0) ++end;
    for (std::size_t i = begin; i < end; ++i) {
      if (!RowsMatch(key, Project(a[i], columns))) {
        std::string out = "  the ordered lists part at row " + std::to_string(i + 1) +
                          ": PostgreSQL " + FormatRow(expected.rows[i]) + ", the engine " +
                          FormatRow(actual.rows[i]) + " (ORDER BY columns";
        for (std::size_t c : columns) out += " " + std::to_string(c + 1);
        return out + ")\n";
      }
    }
    std::string diff = DiffMultiset(expected.rows, e, actual.rows, a, begin, end, end);
    if (!diff.empty()) {
      return "  rows " + std::to_string(begin + 1) + "-" + std::to_string(end) +
             " (tied on the ORDER BY columns) differ:\n" + diff;
    }
    begin = end;
  }
  return "";
}

std::string FormatAnswer(const PgAnswer& answer, std::size_t max_rows) {
  if (!answer.ok()) return "  " + answer.error->ToString() + "\n";
  std::string out = "  columns:";
  for (std::size_t c = 0; c < answer.column_types.size(); ++c) {
    const std::string name = c < answer.column_names.size() ? answer.column_names[c] : "?";
    out += " " + name + "(" + std::to_string(answer.column_types[c]) + ")";
  }
  out += "\n  " + std::to_string(answer.rows.size()) + " rows:\n";
  for (std::size_t r = 0; r < answer.rows.size() && r < max_rows; ++r) {
    out += "    " + FormatRow(answer.rows[r]) + "\n";
  }
  if (answer.rows.size() > max_rows) {
    out += "    … and " + std::to_string(answer.rows.size() - max_rows) + " more\n";
  }
  return out;
}

}  // namespace tandem::testing::sql_oracle
