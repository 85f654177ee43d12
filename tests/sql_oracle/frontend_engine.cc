#include "sql_oracle/frontend_engine.h"

#include <cctype>
#include <optional>
#include <utility>

#include "frontend/server/binary_values.h"
#include "sql_oracle/query_generator.h"
#include "sql_oracle/random.h"

namespace tandem::testing::sql_oracle {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Whether `sql` has the keyword `word` (upper case) at `at`, as a whole word, in any case.
bool KeywordAt(const std::string& sql, std::size_t at, const std::string& word) {
  if (at + word.size() > sql.size()) return false;
  if (at > 0 && IsWordChar(sql[at - 1])) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(sql[at + i])) != word[i]) return false;
  }
  return at + word.size() == sql.size() || !IsWordChar(sql[at + word.size()]);
}

// The positions of `sql`'s characters at parenthesis depth 0 outside quotes, in order; calls
// `at(i)` for each until it returns true. Returns that i, or nullopt.
template <typename F>
std::optional<std::size_t> FindAtTopLevel(const std::string& sql, std::size_t from, F at) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = from; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote != 0) {
      if (c == quote) {
        if (i + 1 < sql.size() && sql[i + 1] == quote) {
          ++i;  // a doubled quote stays inside
        } else {
          quote = 0;
        }
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (depth == 0 && at(i)) {
      return i;
    }
  }
  return std::nullopt;
}

std::string Trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])) != 0) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])) != 0) --e;
  return s.substr(b, e - b);
}

// Whether an ORDER BY item names an output column: an ordinal or a bare identifier, after its
// direction and null placement are taken off.
bool NamesAnOutput(std::string item) {
  item = Trim(item);
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* suffix : {"NULLS FIRST", "NULLS LAST", "DESC", "ASC"}) {
      const std::string s = suffix;
      if (item.size() > s.size() && KeywordAt(item, item.size() - s.size(), s)) {
        item = Trim(item.substr(0, item.size() - s.size()));
        stripped = true;
      }
    }
  }
  if (item.empty()) return false;
  bool digits = true, identifier = !std::isdigit(static_cast<unsigned char>(item[0]));
  for (char c : item) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) digits = false;
    if (!IsWordChar(c)) identifier = false;
  }
  return digits || identifier;
}

PgAnswer ErrorAnswer(std::string sqlstate, std::string message) {
  PgAnswer answer;
  answer.error = PgError{std::move(sqlstate), std::move(message), "", ""};
  return answer;
}

bool EndsWithComparison(const std::string& out) {
  std::size_t e = out.size();
  while (e > 0 && out[e - 1] == ' ') --e;
  if (e == 0) return false;
  const char last = out[e - 1];
  if (last == '=') return e < 2 || (out[e - 2] != '|' && out[e - 2] != ':');
  return last == '<' || last == '>';
}

}  // namespace

ParameterizedQuery ParameterizeComparedNumbers(const std::string& sql) {
  ParameterizedQuery q;
  std::string& out = q.sql;
  const std::size_t n = sql.size();
  char quote = 0;
  for (std::size_t i = 0; i < n;) {
    const char c = sql[i];
    if (quote != 0) {
      out += c;
      ++i;
      if (c == quote) {
        if (i < n && sql[i] == quote) {
          out += sql[i++];  // a doubled quote stays inside
        } else {
          quote = 0;
        }
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      out += c;
      ++i;
      continue;
    }
    const bool starts_number =
        std::isdigit(static_cast<unsigned char>(c)) != 0 &&
        (i == 0 || (!IsWordChar(sql[i - 1]) && sql[i - 1] != '.' && sql[i - 1] != '$'));
    if (starts_number && EndsWithComparison(out)) {
      std::size_t j = i;
      while (j < n && std::isdigit(static_cast<unsigned char>(sql[j])) != 0) ++j;
      bool decimal = false;
      if (j + 1 < n && sql[j] == '.' && std::isdigit(static_cast<unsigned char>(sql[j + 1]))) {
        decimal = true;
        ++j;
        while (j < n && std::isdigit(static_cast<unsigned char>(sql[j])) != 0) ++j;
      }
      const bool more = j < n && (IsWordChar(sql[j]) || sql[j] == '.' ||
                                  (sql[j] == ':' && j + 1 < n && sql[j + 1] == ':'));
      if (!more) {
        const std::string text = sql.substr(i, j - i);
        std::string type = "numeric";
        if (!decimal && text.size() <= 18) {
          const long long v = std::stoll(text);
          type = v <= 2147483647LL ? "int4" : "int8";
        }
        q.values.push_back(text);
        out += "$" + std::to_string(q.values.size()) + "::" + type;
        i = j;
        continue;
      }
      out.append(sql, i, j - i);
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  return q;
}

SplitQuery SplitTopLevelOrder(const std::string& sql) {
  SplitQuery out;
  const std::optional<std::size_t> start = FindAtTopLevel(sql, 0, [&](std::size_t i) {
    return KeywordAt(sql, i, "ORDER") || KeywordAt(sql, i, "LIMIT") || KeywordAt(sql, i, "OFFSET");
  });
  if (!start) {
    out.body = sql;
    return out;
  }
  std::size_t cut = *start;
  while (cut > 0 && std::isspace(static_cast<unsigned char>(sql[cut - 1])) != 0) --cut;
  out.body = sql.substr(0, cut);
  out.tail = sql.substr(cut);
  if (!KeywordAt(sql, *start, "ORDER")) return out;
  // The items: from after BY to LIMIT/OFFSET or the end, split at top-level commas.
  const std::optional<std::size_t> by =
      FindAtTopLevel(sql, *start + 5, [&](std::size_t i) { return KeywordAt(sql, i, "BY"); });
  if (!by) {
    out.tail_on_outputs = false;
    return out;
  }
  const std::size_t items_start = *by + 2;
  const std::size_t items_end = FindAtTopLevel(sql, items_start, [&](std::size_t i) {
                                  return KeywordAt(sql, i, "LIMIT") || KeywordAt(sql, i, "OFFSET");
                                }).value_or(sql.size());
  const std::string items = sql.substr(items_start, items_end - items_start);
  std::size_t from = 0;
  for (;;) {
    const std::optional<std::size_t> comma =
        FindAtTopLevel(items, from, [&](std::size_t i) { return items[i] == ','; });
    const std::size_t end = comma.value_or(items.size());
    if (!NamesAnOutput(items.substr(from, end - from))) out.tail_on_outputs = false;
    if (!comma) break;
    from = *comma + 1;
  }
  return out;
}

FrontendEngine::FrontendEngine(const std::string& conninfo, FrontendEngineOptions options)
    : options_(std::move(options)) {
  connection_ = std::make_unique<PgConnection>(conninfo);
  if (!connection_->ok()) error_ = "connecting to " + conninfo + ": " + connection_->error();
}

std::string FrontendEngine::Name() const {
  switch (options_.mode) {
    case FrontendEngineOptions::Mode::kOneShot:
      return options_.name + ", queries as they are";
    case FrontendEngineOptions::Mode::kExtended:
      return options_.name + ", queries prepared, compared numbers as parameters, binary results";
    case FrontendEngineOptions::Mode::kMaterialized:
      break;
  }
  return options_.name + ", queries as materialized views made during the writes";
}

std::string FrontendEngine::DropView(const std::string& name) {
  const PgAnswer dropped = connection_->Execute("DROP MATERIALIZED VIEW " + name);
  return dropped.ok() ? "" : "DROP MATERIALIZED VIEW " + name + ": " + dropped.error->ToString();
}

std::string FrontendEngine::DropAll() {
  std::string why;
  for (const auto& [sql, view] : views_) {
    if (!view.created) continue;
    if (std::string failed = DropView(view.name); !failed.empty() && why.empty()) {
      why = failed + " (the view of " + sql + ")";
    }
  }
  views_.clear();
  for (const std::string& table : tables_) {
    const PgAnswer dropped = connection_->Execute("DROP TABLE " + table);
    if (!dropped.ok() && why.empty()) {
      why = "DROP TABLE " + table + ": " + dropped.error->ToString();
    }
  }
  tables_.clear();
  return why;
}

FrontendEngine::View FrontendEngine::CreateView(const std::string& sql) {
  View view;
  view.name = "mv_" + std::to_string(next_view_++);
  const SplitQuery split = SplitTopLevelOrder(sql);
  const std::string definition = split.tail_on_outputs ? split.body : sql;
  const std::string create = "CREATE MATERIALIZED VIEW " + view.name + " AS " + definition;
  const PgAnswer created = connection_->Execute(create);
  if (!created.ok()) {
    view.refusal = created;
    // A refusal (0A000) or a bound (54xxx) is counted as the suite counts them; anything else
    // names the statement that failed.
    const std::string state = created.sqlstate();
    if (state != "0A000" && state.rfind("54", 0) != 0) {
      view.refusal.error->message = create + ": " + created.error->message;
    }
    return view;
  }
  view.created = true;
  ++views_created_;
  view.read = "SELECT * FROM " + view.name + (split.tail_on_outputs ? split.tail : "");
  return view;
}

PgAnswer FrontendEngine::ReadView(View& view) {
  if (options_.refresh_before_read) {
    const PgAnswer refreshed = connection_->Execute("REFRESH MATERIALIZED VIEW " + view.name);
    if (!refreshed.ok()) {
      return ErrorAnswer(
          "XX000", "REFRESH MATERIALIZED VIEW " + view.name + ": " + refreshed.error->ToString());
    }
  }
  PgAnswer answer = connection_->Execute(view.read);
  if (!answer.ok()) answer.error->message = view.read + ": " + answer.error->message;
  return answer;
}

std::string FrontendEngine::Load(const Database& database) {
  if (!error_.empty()) return error_;
  if (std::string why = DropAll(); !why.empty()) return "dropping the last database: " + why;
  for (const TableSchema& table : database.tables) {
    const PgAnswer created = connection_->Execute(table.CreateSql());
    if (!created.ok()) return table.CreateSql() + ": " + created.error->ToString();
    tables_.push_back(table.name);
  }
  const bool materialized = options_.mode == FrontendEngineOptions::Mode::kMaterialized;
  const std::size_t half = materialized ? database.writes.size() / 2 : database.writes.size();
  for (std::size_t w = 0; w <= database.writes.size(); ++w) {
    if (w == half && materialized) {
      // The views of the queries the suite will ask, made between the two halves of the writes:
      // hydrated from the first, maintained through the second.
      const QueryGenerator generator(database.tables, options_.enabled);
      for (int q = 0; q < options_.queries_per_database; ++q) {
        const std::string sql =
            generator.Generate(MixSeed(database.seed, static_cast<std::uint64_t>(q))).sql;
        auto found = views_.find(sql);
        if (found == views_.end()) {
          found = views_.emplace(sql, CreateView(sql)).first;
          if (found->second.created) ++views_during_writes_;
        }
        ++found->second.reads_left;
      }
    }
    if (w == database.writes.size()) break;
    const PgAnswer written = connection_->Execute(database.writes[w]);
    if (!written.ok()) return database.writes[w] + ": " + written.error->ToString();
  }
  return "";
}

PgAnswer FrontendEngine::Query(const std::string& sql) {
  if (!error_.empty()) return ErrorAnswer("08006", error_);
  if (options_.mode == FrontendEngineOptions::Mode::kOneShot) return connection_->Execute(sql);
  if (options_.mode == FrontendEngineOptions::Mode::kExtended) {
    const ParameterizedQuery q = ParameterizeComparedNumbers(sql);
    PgAnswer answer = connection_->ExecuteExtended(q.sql, q.values, /*binary_results=*/true);
    if (!answer.ok()) return answer;
    for (auto& row : answer.rows) {
      for (std::size_t c = 0; c < row.size() && c < answer.column_types.size(); ++c) {
        if (!row[c]) continue;
        auto text =
            frontend::BinaryParameterText(*row[c], answer.column_types[c], static_cast<int>(c + 1));
        if (!text.ok()) {
          return ErrorAnswer("XX000",
                             "column " + std::to_string(c + 1) + " (type " +
                                 std::to_string(answer.column_types[c]) +
                                 ") is no binary value of its type: " + text.error().message);
        }
        row[c] = std::move(*text);
      }
    }
    return answer;
  }

  auto found = views_.find(sql);
  if (found == views_.end()) {  // not foreseen by Load: made now, read, dropped
    View view = CreateView(sql);
    if (!view.created) return view.refusal;
    PgAnswer answer = ReadView(view);
    if (std::string failed = DropView(view.name); !failed.empty()) {
      return ErrorAnswer("XX000", failed);
    }
    return answer;
  }
  View& view = found->second;
  PgAnswer answer = view.created ? ReadView(view) : view.refusal;
  if (--view.reads_left <= 0) {
    const std::string failed = view.created ? DropView(view.name) : "";
    views_.erase(found);
    if (!failed.empty()) return ErrorAnswer("XX000", failed);
  }
  return answer;
}

}  // namespace tandem::testing::sql_oracle
