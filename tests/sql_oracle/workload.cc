#include "sql_oracle/workload.h"

#include <utility>
#include <vector>

#include "sql_oracle/random.h"
#include "sql_oracle/values.h"

namespace tandem::testing::sql_oracle {
namespace {

// What the generator knows of a table while it writes the workload.
struct TableState {
  TableSchema schema;
  std::int64_t next_key = 0;
  std::vector<std::vector<std::string>> inserted;  // literals of rows inserted (for duplicates)
};

// A value of `type` as a literal: doubles bare or, with `float8`, '1.25'::float8.
std::string WriteLiteral(const std::string& text, SqlType type, bool float8) {
  if (float8 && type == SqlType::kDouble) return "'" + text + "'::float8";
  return SqlLiteral(text, type);
}

std::string ColumnValueLiteral(Random& random, const ColumnSchema& column, bool float8) {
  if (!column.not_null && random.Percent(15)) return "NULL";
  const std::string text = RandomValueText(random, column.type);
  return WriteLiteral(text, column.type, float8);
}

bool IsKeyColumn(const TableSchema& table, std::size_t c) {
  for (std::size_t k : table.primary_key) {
    if (k == c) return true;
  }
  return false;
}

std::vector<std::string> NewRow(Random& random, TableState& table, bool float8) {
  std::vector<std::string> row;
  const TableSchema& schema = table.schema;
  if (table.schema.primary_key.empty() && !table.inserted.empty() && random.Percent(25)) {
    return random.Pick(table.inserted);  // a duplicate row
  }
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    if (IsKeyColumn(schema, c)) {
      // Keys: the first key column from the counter (unique), others any value.
      if (c == schema.primary_key[0]) {
        row.push_back(std::to_string(table.next_key));
        table.next_key += random.Between(1, 2);
        continue;
      }
    }
    row.push_back(ColumnValueLiteral(random, schema.columns[c], float8));
  }
  table.inserted.push_back(row);
  return row;
}

std::string InsertSql(Random& random, TableState& table, int rows, bool float8) {
  std::string sql = "INSERT INTO " + table.schema.name + " VALUES";
  for (int r = 0; r < rows; ++r) {
    const std::vector<std::string> row = NewRow(random, table, float8);
    sql += r == 0 ? " (" : ", (";
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) sql += ", ";
      sql += row[c];
    }
    sql += ")";
  }
  return sql;
}

std::string ComparisonOn(Random& random, const ColumnSchema& column, bool float8) {
  if (random.Percent(15)) return column.name + (random.Percent(50) ? " IS NULL" : " IS NOT NULL");
  if (column.type == SqlType::kBool) return random.Percent(50) ? column.name : "NOT " + column.name;
  static const std::vector<std::string> kOps = {"=", "<>", "<", "<=", ">", ">="};
  const std::string& op = random.Pick(kOps);
  const std::string literal = RandomLiteral(random, column.type, !float8);
  return column.name + " " + op + " " + literal;
}

std::string WhereOn(Random& random, const TableSchema& table, bool float8) {
  const std::string left = ComparisonOn(random, random.Pick(table.columns), float8);
  if (random.Percent(60)) return left;
  const std::string right = ComparisonOn(random, random.Pick(table.columns), float8);
  return left + (random.Percent(50) ? " AND " : " OR ") + right;
}

std::string SetValue(Random& random, const ColumnSchema& column, bool float8) {
  if (!column.not_null && random.Percent(15)) return "NULL";
  if (random.Percent(50)) {
    switch (column.type) {
      case SqlType::kBigint:
        return column.name + " + " + std::to_string(random.Between(1, 2));
      case SqlType::kDouble:
        return column.name + (random.Percent(50) ? " + " : " - ") +
               (float8 ? "'0.5'::float8" : "0.5");
      case SqlType::kBool:
        return "NOT " + column.name;
      case SqlType::kText:
        break;
      case SqlType::kInt4:
      case SqlType::kDate:  // date + integer is a date
        return column.name + " + " + std::to_string(random.Between(1, 2));
      case SqlType::kNumeric:
        return column.name + (random.Percent(50) ? " + 0.25" : " - 0.5");
      case SqlType::kTimestamp:
      case SqlType::kInterval:
        return column.name + (random.Percent(50) ? " + INTERVAL '1 hour'" : " - INTERVAL '1 day'");
      case SqlType::kInt2:  // smallint + integer is an integer, assigned back to smallint
        return column.name + " + " + std::to_string(random.Between(1, 2));
      case SqlType::kFloat4:  // real + real is real
        return column.name + (random.Percent(50) ? " + '0.5'::real" : " - '0.25'::real");
      case SqlType::kNumeric12_4:
      case SqlType::kNumericAny:
        return column.name + (random.Percent(50) ? " + 0.25" : " - 0.5");
      case SqlType::kTime:  // wraps around midnight
        return column.name +
               (random.Percent(50) ? " + INTERVAL '1 hour'" : " - INTERVAL '30 minutes'");
      case SqlType::kTimestampTz:
        return column.name + (random.Percent(50) ? " + INTERVAL '1 hour'" : " - INTERVAL '1 day'");
      case SqlType::kVarchar:
      case SqlType::kChar:
      case SqlType::kBytea:
      case SqlType::kUuid:
        break;
    }
  }
  const std::string text = RandomValueText(random, column.type);
  return WriteLiteral(text, column.type, float8);
}

std::string UpdateSql(Random& random, const TableState& table, bool float8) {
  const TableSchema& schema = table.schema;
  std::vector<std::size_t> settable;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    if (!IsKeyColumn(schema, c)) settable.push_back(c);
  }
  if (settable.empty()) return "";
  std::string sql = "UPDATE " + schema.name + " SET ";
  const std::size_t first = random.Pick(settable);
  sql += schema.columns[first].name + " = " + SetValue(random, schema.columns[first], float8);
  if (settable.size() > 1 && random.Percent(30)) {
    const std::size_t second = random.Pick(settable);
    if (second != first) {
      sql += ", " + schema.columns[second].name + " = " +
             SetValue(random, schema.columns[second], float8);
    }
  }
  return sql + " WHERE " + WhereOn(random, schema, float8);
}

TableSchema NewTable(Random& random, int index, const WorkloadOptions& options) {
  TableSchema table;
  table.name = "t" + std::to_string(index + 1);
  const bool keyed = random.Percent(50);
  table.columns.push_back(ColumnSchema{keyed ? "k" : "i0", SqlType::kBigint, keyed});
  static const std::vector<SqlType> kTypes = {SqlType::kBigint, SqlType::kBigint, SqlType::kDouble,
                                              SqlType::kText, SqlType::kBool};
  // The original four first, then every type of DESIGN §16.
  static const std::vector<SqlType> kNewTypes = {
      SqlType::kBigint,     SqlType::kDouble,      SqlType::kText,   SqlType::kBool,
      SqlType::kInt4,       SqlType::kNumeric,     SqlType::kDate,   SqlType::kTimestamp,
      SqlType::kInterval,   SqlType::kInt2,        SqlType::kFloat4, SqlType::kNumeric12_4,
      SqlType::kNumericAny, SqlType::kVarchar,     SqlType::kChar,   SqlType::kBytea,
      SqlType::kTime,       SqlType::kTimestampTz, SqlType::kUuid};
  // With new_types, every table has a column of a new type (its last, when the draws gave none):
  // the query generator draws the new types' features over tables that have them.
  static const std::vector<SqlType> kOnlyNewTypes(kNewTypes.begin() + 4, kNewTypes.end());
  bool any_new = false;
  const int extra = static_cast<int>(random.Between(1, options.max_columns));
  for (int c = 1; c <= extra; ++c) {
    const SqlType type = options.new_types && c == extra && !any_new
                             ? random.Pick(kOnlyNewTypes)
                             : random.Pick(options.new_types ? kNewTypes : kTypes);
    any_new = any_new || IsNewType(type);
    // i bigint, f double, s text, b boolean, j integer, n numeric(10,2), d date, m timestamp,
    // v interval, h smallint, r real, p numeric(12,4), q numeric, g varchar, x char, y bytea,
    // e time, z timestamptz, u uuid (none of them a, c, k, t or w: aliases, output columns,
    // keys, tables and common tables)
    static const char kPrefix[] = {'i', 'f', 's', 'b', 'j', 'n', 'd', 'm', 'v', 'h',
                                   'r', 'p', 'q', 'g', 'x', 'y', 'e', 'z', 'u'};
    ColumnSchema column;
    column.name = std::string(1, kPrefix[static_cast<int>(type)]) + std::to_string(c);
    column.type = type;
    column.not_null = random.Percent(20);
    table.columns.push_back(std::move(column));
  }
  if (keyed) {
    table.primary_key.push_back(0);
    // Sometimes a key of two columns: the second is any value, the first stays unique.
    if (table.columns.size() > 2 && random.Percent(20)) {
      table.primary_key.push_back(1);
      table.columns[1].not_null = true;
    }
  }
  return table;
}

}  // namespace

Database GenerateWorkload(std::uint64_t seed, const WorkloadOptions& options) {
  Random random(seed);
  Database database;
  database.seed = seed;
  std::vector<TableState> tables;
  const int count = static_cast<int>(random.Between(options.min_tables, options.max_tables));
  for (int t = 0; t < count; ++t) {
    TableState state;
    state.schema = NewTable(random, t, options);
    state.next_key = random.Between(0, 3);
    tables.push_back(std::move(state));
  }
  for (TableState& table : tables) {
    // Now and then a table starts empty (and may stay so); most start with a few rows.
    const int rows =
        random.Percent(10) ? 0 : static_cast<int>(random.Between(2, options.max_initial_rows));
    if (rows > 0) {
      database.writes.push_back(InsertSql(random, table, rows, options.float8_literals));
    }
  }
  const int writes = static_cast<int>(random.Between(options.min_writes, options.max_writes));
  for (int w = 0; w < writes; ++w) {
    TableState& table = tables[random.Below(tables.size())];
    const std::uint64_t kind = random.Below(10);
    std::string sql;
    if (kind < 5) {
      const int rows = static_cast<int>(random.Between(1, 3));
      sql = InsertSql(random, table, rows, options.float8_literals);
    } else if (kind < 8) {
      sql = UpdateSql(random, table, options.float8_literals);
    } else {
      sql = "DELETE FROM " + table.schema.name + " WHERE " +
            WhereOn(random, table.schema, options.float8_literals);
    }
    if (!sql.empty()) database.writes.push_back(std::move(sql));
  }
  for (TableState& table : tables) database.tables.push_back(std::move(table.schema));
  return database;
}

std::string ResetSchema(PgConnection& connection) {
  const PgAnswer answer = connection.Execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
  return answer.ok() ? "" : "resetting the schema: " + answer.error->ToString();
}

std::string ApplyWorkload(PgConnection& connection, Database* database) {
  if (std::string why = ResetSchema(connection); !why.empty()) return why;
  for (const TableSchema& table : database->tables) {
    const PgAnswer answer = connection.Execute(table.CreateSql());
    if (!answer.ok()) return table.CreateSql() + ": " + answer.error->ToString();
  }
  for (const std::string& write : database->writes) {
    const PgAnswer answer = connection.Execute(write);
    if (!answer.ok()) return write + ": " + answer.error->ToString();
  }
  database->rows.clear();
  for (const TableSchema& table : database->tables) {
    std::string sql = "SELECT * FROM " + table.name + " ORDER BY ";
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) sql += ", ";
      sql += std::to_string(c + 1);
    }
    PgAnswer answer = connection.Execute(sql);
    if (!answer.ok()) return sql + ": " + answer.error->ToString();
    database->rows.push_back(std::move(answer.rows));
  }
  return "";
}

}  // namespace tandem::testing::sql_oracle
