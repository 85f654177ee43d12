#include "frontend/catalog/ddl.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "controller/history.h"
#include "controller/imports.h"
#include "frontend/catalog/sql_type.h"
#include "frontend/sql/pg_parser.h"
#include "frontend/sqlstate.h"
#include "ipc/plan_typing.h"
#include "ipc/source_schema.h"

namespace tandem::frontend {

namespace pb = ipc::pb;
using sql::SqlError;
using sql::SqlResult;

namespace {

// PostgreSQL's limit on a table's columns (MaxHeapAttributeNumber).
constexpr std::size_t kMaxColumns = 1600;

std::string Quoted(std::string_view name) { return "\"" + std::string(name) + "\""; }

// The 1-based position of byte `location` of the input, or of the statement when -1.
int PositionOf(const StatementText& text, int location) {
  std::size_t offset = text.span.offset;
  if (location >= 0 && static_cast<std::size_t>(location) <= text.sql.size()) {
    offset = static_cast<std::size_t>(location);
  }
  return offset <= text.sql.size() ? sql::CursorPosition(text.sql, offset) : 0;
}

SqlError ErrorAt(const char* state, std::string message, const StatementText& text,
                 int location = -1) {
  return SqlError(state, std::move(message), PositionOf(text, location));
}

SqlError NotSupported(const std::string& what, const StatementText& text, int location = -1) {
  const auto plural = [&](std::string_view tail) {
    return what.size() >= tail.size() &&
           what.compare(what.size() - tail.size(), tail.size(), tail) == 0;
  };
  const char* verb = plural(" constraints") || plural(" columns") ? " are" : " is";
  return ErrorAt(sqlstate::kFeatureNotSupported, what + verb + " not supported", text, location);
}

// The name a RangeVar stands for in the one schema, public, of the one database, tandem.
SqlResult<std::string> RelationName(const pg_query::RangeVar& rv, const StatementText& text) {
  if (!rv.catalogname().empty() && rv.catalogname() != "tandem") {
    return ErrorAt(sqlstate::kFeatureNotSupported,
                   "cross-database references are not implemented: " + rv.catalogname() + "." +
                       rv.schemaname() + "." + rv.relname(),
                   text, rv.location());
  }
  if (!rv.schemaname().empty() && rv.schemaname() != "public") {
    return ErrorAt(sqlstate::kInvalidSchemaName,
                   "schema " + Quoted(rv.schemaname()) + " does not exist", text, rv.location());
  }
  return rv.relname();
}

// A new relation's name: a temporary or unlogged one is refused (Tandem's objects are durable and
// shared by every session).
SqlResult<std::string> NewRelationName(const pg_query::RangeVar& rv, const StatementText& text) {
  if (rv.relpersistence() == "t") return NotSupported("TEMPORARY", text, rv.location());
  if (rv.relpersistence() == "u") return NotSupported("UNLOGGED", text, rv.location());
  return RelationName(rv, text);
}

pb::Schema SchemaOf(const std::vector<CatalogColumn>& columns) {
  pb::Schema s;
  for (const auto& c : columns) {
    auto* col = s.add_columns();
    *col = ColumnOfType(c.type, c.mods);
    col->set_name(c.name);
    col->set_nullable(c.nullable);
  }
  return s;
}

// The text of a String node (sval), or nullopt.
std::optional<std::string> StringOf(const pg_query::Node& n) {
  if (n.has_string()) return n.string().sval();
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Types

// A column's type, or PostgreSQL's error for its name (sql_type.h).
SqlResult<ResolvedType> ColumnTypeOf(const pg_query::TypeName& t, const StatementText& text) {
  TypeNameResult r = ResolveTypeName(t);
  if (r.type) return *r.type;
  return ErrorAt(r.error.sqlstate, r.error.message, text, r.error.location);
}

// ---------------------------------------------------------------------------------------------
// CREATE TABLE's columns and constraints

// PostgreSQL's name for a constraint kind that Tandem refuses ("UNIQUE constraints").
std::string ConstraintName(pg_query::ConstrType t) {
  switch (t) {
    case pg_query::CONSTR_DEFAULT:
      return "DEFAULT";
    case pg_query::CONSTR_IDENTITY:
      return "GENERATED AS IDENTITY";
    case pg_query::CONSTR_GENERATED:
      return "GENERATED columns";
    case pg_query::CONSTR_CHECK:
      return "CHECK constraints";
    case pg_query::CONSTR_UNIQUE:
      return "UNIQUE constraints";
    case pg_query::CONSTR_EXCLUSION:
      return "EXCLUDE constraints";
    case pg_query::CONSTR_FOREIGN:
      return "FOREIGN KEY constraints";
    case pg_query::CONSTR_ATTR_DEFERRABLE:
    case pg_query::CONSTR_ATTR_NOT_DEFERRABLE:
    case pg_query::CONSTR_ATTR_DEFERRED:
    case pg_query::CONSTR_ATTR_IMMEDIATE:
      return "DEFERRABLE";
    default:
      return "this constraint";
  }
}

struct TableDefinition {
  std::vector<CatalogColumn> columns;
  std::vector<std::uint32_t> primary_key;
  bool has_primary_key = false;
};

// A PRIMARY KEY (of a column or of the table) → the definition's key; its columns are NOT NULL.
std::optional<SqlError> AddPrimaryKey(TableDefinition& def, const std::vector<std::string>& cols,
                                      const pg_query::Constraint& c, const std::string& table,
                                      const StatementText& text) {
  if (def.has_primary_key) {
    return ErrorAt(sqlstate::kInvalidTableDefinition,
                   "multiple primary keys for table " + Quoted(table) + " are not allowed", text,
                   c.location());
  }
  if (!c.including().empty()) return NotSupported("INCLUDE", text, c.location());
  if (!c.options().empty()) return NotSupported("WITH in a PRIMARY KEY", text, c.location());
  if (!c.indexspace().empty()) return NotSupported("USING INDEX TABLESPACE", text, c.location());
  if (c.deferrable() || c.initdeferred()) return NotSupported("DEFERRABLE", text, c.location());
  def.has_primary_key = true;
  for (const auto& name : cols) {
    std::optional<std::uint32_t> found;
    for (std::uint32_t i = 0; i < def.columns.size(); ++i) {
      if (def.columns[i].name == name) found = i;
    }
    if (!found) {
      return ErrorAt(sqlstate::kUndefinedColumn,
                     "column " + Quoted(name) + " named in key does not exist", text, c.location());
    }
    if (std::find(def.primary_key.begin(), def.primary_key.end(), *found) !=
        def.primary_key.end()) {
      return ErrorAt(sqlstate::kDuplicateColumn,
                     "column " + Quoted(name) + " appears twice in primary key constraint", text,
                     c.location());
    }
    def.primary_key.push_back(*found);
    def.columns[*found].nullable = false;
  }
  return std::nullopt;
}

SqlResult<TableDefinition> TableDefinitionOf(const pg_query::CreateStmt& stmt,
                                             const std::string& table, const StatementText& text) {
  TableDefinition def;
  // Columns first (a table constraint may name a column defined after it), with their own
  // constraints; PRIMARY KEYs in the order written.
  struct Key {
    std::vector<std::string> columns;
    const pg_query::Constraint* constraint;
  };
  std::vector<Key> keys;
  for (const auto& elt : stmt.table_elts()) {
    if (elt.has_column_def()) {
      const auto& cd = elt.column_def();
      for (const auto& c : def.columns) {
        if (c.name == cd.colname()) {
          return ErrorAt(sqlstate::kDuplicateColumn,
                         "column " + Quoted(cd.colname()) + " specified more than once", text,
                         cd.location());
        }
      }
      if (cd.has_raw_default()) return NotSupported("DEFAULT", text, cd.location());
      if (cd.has_coll_clause()) return NotSupported("COLLATE", text, cd.location());
      if (!cd.compression().empty()) return NotSupported("COMPRESSION", text, cd.location());
      if (!cd.storage().empty()) return NotSupported("STORAGE", text, cd.location());
      auto type = ColumnTypeOf(cd.type_name(), text);
      if (!type.ok()) return type.error();
      CatalogColumn col;
      col.name = cd.colname();
      if (type->mods.blank_padded && type->mods.length == 0) {
        return NotSupported("a character column without a length (bpchar)", text,
                            cd.type_name().location());
      }
      col.type = type->type;
      col.mods = type->mods;
      col.nullable = !cd.is_not_null();
      bool said_null = false, said_not_null = cd.is_not_null();
      for (const auto& cn : cd.constraints()) {
        if (!cn.has_constraint())
          return NotSupported("this column constraint", text, cd.location());
        const auto& c = cn.constraint();
        switch (c.contype()) {
          case pg_query::CONSTR_NOTNULL:
            said_not_null = true;
            col.nullable = false;
            break;
          case pg_query::CONSTR_NULL:
            said_null = true;
            break;
          case pg_query::CONSTR_PRIMARY:
            keys.push_back({{cd.colname()}, &c});
            break;
          default:
            return NotSupported(ConstraintName(c.contype()), text, c.location());
        }
        if (said_null && said_not_null) {
          return ErrorAt(sqlstate::kSyntaxError,
                         "conflicting NULL/NOT NULL declarations for column " +
                             Quoted(cd.colname()) + " of table " + Quoted(table),
                         text, c.location());
        }
      }
      def.columns.push_back(std::move(col));
      if (def.columns.size() > kMaxColumns) {
        return ErrorAt(sqlstate::kTooManyColumns,
                       "tables can have at most " + std::to_string(kMaxColumns) + " columns", text,
                       cd.location());
      }
    } else if (elt.has_constraint()) {
      const auto& c = elt.constraint();
      if (c.contype() != pg_query::CONSTR_PRIMARY) {
        return NotSupported(ConstraintName(c.contype()), text, c.location());
      }
      Key k{{}, &c};
      for (const auto& n : c.keys()) {
        auto s = StringOf(n);
        if (!s) return NotSupported("this PRIMARY KEY", text, c.location());
        k.columns.push_back(std::move(*s));
      }
      keys.push_back(std::move(k));
    } else if (elt.has_table_like_clause()) {
      return NotSupported("LIKE in CREATE TABLE", text);
    } else {
      return NotSupported("this table element", text);
    }
  }
  for (const auto& k : keys) {
    if (auto e = AddPrimaryKey(def, k.columns, *k.constraint, table, text)) return *e;
  }
  if (def.columns.empty()) {
    return ErrorAt(sqlstate::kFeatureNotSupported,
                   "a table without columns is not supported: give it at least one", text);
  }
  return def;
}

// ---------------------------------------------------------------------------------------------
// CREATE TABLE … WITH (…): the source options

// An option's value as text: a string constant, a number, or a bare word.
SqlResult<std::string> OptionValue(const pg_query::DefElem& d, const StatementText& text) {
  if (!d.has_arg()) {
    return ErrorAt(sqlstate::kInvalidParameterValue,
                   "parameter " + Quoted(d.defname()) + " needs a value", text, d.location());
  }
  const auto& a = d.arg();
  if (a.has_string()) return a.string().sval();
  if (a.has_integer()) return std::to_string(a.integer().ival());
  if (a.has_float_()) return a.float_().fval();
  if (a.has_type_name() && a.type_name().names_size() >= 1) {
    if (auto s = StringOf(a.type_name().names(a.type_name().names_size() - 1))) return *s;
  }
  return ErrorAt(sqlstate::kInvalidParameterValue,
                 "invalid value for parameter " + Quoted(d.defname()), text, d.location());
}

struct SourceOptions {
  std::string source = "table";
  std::map<std::string, std::pair<std::string, int>> values;  // name → (value, location)
};

SqlResult<SourceOptions> SourceOptionsOf(const pg_query::CreateStmt& stmt,
                                         const StatementText& text) {
  SourceOptions o;
  for (const auto& n : stmt.options()) {
    if (!n.has_def_elem()) return NotSupported("this WITH option", text);
    const auto& d = n.def_elem();
    if (!d.defnamespace().empty()) {
      return ErrorAt(sqlstate::kInvalidParameterValue,
                     "unrecognized parameter namespace " + Quoted(d.defnamespace()), text,
                     d.location());
    }
    auto v = OptionValue(d, text);
    if (!v.ok()) return v.error();
    if (!o.values.emplace(d.defname(), std::pair{*v, d.location()}).second) {
      return ErrorAt(sqlstate::kInvalidParameterValue,
                     "parameter " + Quoted(d.defname()) + " specified more than once", text,
                     d.location());
    }
  }
  if (auto it = o.values.find("source"); it != o.values.end()) {
    o.source = it->second.first;
    if (o.source == "jsonl" || o.source == "json-lines") o.source = "json_lines";
    if (o.source == "key-value") o.source = "key_value";
    o.values.erase(it);
  }
  return o;
}

// The parameters each source takes (besides `source`).
const std::map<std::string, std::set<std::string>>& SourceParameters() {
  static const auto* kParams = new std::map<std::string, std::set<std::string>>{
      {"table", {"tick_interval_ms"}},
      {"csv", {"path"}},
      {"json_lines", {"path"}},
      {"counter", {"tick_interval_us", "max"}},
      {"key_value", {"keys", "updates_per_tick", "tick_interval_us", "seed"}},
  };
  return *kParams;
}

// The SourceImport of table `name` (id `id`) as its options say, checked as the supervisor will
// check it (CheckSourceImport), so that a refusal is the client's error now.
SqlResult<pb::SourceImport> SourceImportOf(const SourceOptions& o, const TableDefinition& def,
                                           const std::string& name, const std::string& id,
                                           const StatementText& text) {
  const auto params = SourceParameters().find(o.source);
  if (params == SourceParameters().end()) {
    return ErrorAt(sqlstate::kInvalidParameterValue,
                   "invalid value for parameter \"source\": " + Quoted(o.source) +
                       " (table, csv, json_lines, counter or key_value)",
                   text);
  }
  for (const auto& entry : o.values) {
    const std::string& param = entry.first;
    if (!params->second.count(param)) {
      const bool known = std::any_of(SourceParameters().begin(), SourceParameters().end(),
                                     [&](const auto& p) { return p.second.count(param) > 0; });
      return ErrorAt(
          sqlstate::kInvalidParameterValue,
          known ? "parameter " + Quoted(param) + " is not one of a " + o.source + " source's"
                : "unrecognized parameter " + Quoted(param),
          text, entry.second.second);
    }
  }
  std::optional<SqlError> bad;
  auto number = [&](const char* param, std::uint64_t def_value) {
    auto it = o.values.find(param);
    if (it == o.values.end()) return def_value;
    const std::string& v = it->second.first;
    std::uint64_t n = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) {
      if (!bad) {
        bad = ErrorAt(sqlstate::kInvalidParameterValue,
                      "invalid value for parameter " + Quoted(param) + ": " + Quoted(v) +
                          " (a whole number of 0 or more)",
                      text, it->second.second);
      }
      return def_value;
    }
    return n;
  };
  pb::SourceImport s;
  s.set_id(id);
  *s.mutable_schema() = SchemaOf(def.columns);
  const bool generator = o.source == "counter" || o.source == "key_value";
  if (generator) {
    const std::size_t arity = o.source == "counter" ? 1 : 2;
    const bool shaped = def.columns.size() == arity &&
                        std::all_of(def.columns.begin(), def.columns.end(),
                                    [](const CatalogColumn& c) { return c.type == pb::INT64; });
    if (!shaped) {
      return ErrorAt(sqlstate::kInvalidTableDefinition,
                     o.source == "counter"
                         ? "a counter source has one bigint column (its count)"
                         : "a key_value source has two bigint columns (its key and its value)",
                     text);
    }
    if (def.has_primary_key) {
      return ErrorAt(sqlstate::kInvalidTableDefinition,
                     "a " + o.source + " source has no PRIMARY KEY (its updates are its own)",
                     text);
    }
    // A generator never makes a null.
    for (auto& c : *s.mutable_schema()->mutable_columns()) c.set_nullable(false);
  }
  if (o.source == "table") {
    s.mutable_source()->mutable_table()->set_tick_interval_ms(
        number("tick_interval_ms", kSqlTableTickMs));
  } else if (o.source == "csv" || o.source == "json_lines") {
    auto it = o.values.find("path");
    if (it == o.values.end()) {
      return ErrorAt(sqlstate::kInvalidParameterValue,
                     "a " + o.source + " source needs parameter \"path\" (an absolute file path)",
                     text);
    }
    if (o.source == "csv") {
      s.mutable_source()->mutable_csv()->set_path(it->second.first);
    } else {
      s.mutable_source()->mutable_json_lines()->set_path(it->second.first);
    }
  } else if (o.source == "counter") {
    auto* c = s.mutable_source()->mutable_counter();
    c->set_tick_interval_us(number("tick_interval_us", 100000));
    c->set_max(number("max", 0));
  } else {
    auto* kv = s.mutable_source()->mutable_key_value();
    kv->set_keys(number("keys", 100));
    kv->set_updates_per_tick(number("updates_per_tick", 1));
    kv->set_tick_interval_us(number("tick_interval_us", 100000));
    kv->set_seed(number("seed", 1));
  }
  if (bad) return *bad;
  for (auto k : def.primary_key) s.add_upsert_key(k);
  const Status checked = ipc::CheckSourceImport(s, 0, 0);
  if (!checked.ok()) {
    return ErrorAt(sqlstate::kInvalidParameterValue,
                   "cannot create " + name + ": " + checked.message(), text);
  }
  return s;
}

// A fresh index name: `base`, else base1, base2 … (as PostgreSQL picks t_pkey1).
std::string FreeIndexName(const Catalog& catalog, const std::string& base) {
  if (!catalog.FindIndex(base)) return base;
  for (std::uint64_t n = 1;; ++n) {
    const std::string name = base + std::to_string(n);
    if (!catalog.FindIndex(name)) return name;
  }
}

pb::IndexImport ImportOf(const CatalogIndex& index, const CatalogObject& on) {
  pb::IndexImport i;
  i.set_id(index.id);
  i.set_on(on.id);
  *i.mutable_schema() = SchemaOf(on.columns);
  for (auto k : index.key) i.add_key(k);
  return i;
}

// The query text of CREATE [MATERIALIZED] VIEW … AS query (…WITH DATA): from the token after the
// first AS outside parentheses to the end of the statement, a trailing WITH DATA left out.
std::string DefinitionText(const StatementText& text) {
  const std::string statement(text.sql.substr(text.span.offset, text.span.length));
  auto tokens = sql::Scan(statement);
  if (!tokens.ok()) return statement;
  const auto& t = *tokens;
  int depth = 0;
  std::size_t end = t.size();
  if (end >= 2 && t[end - 1].Is(pg_query::DATA_P) &&
      (t[end - 2].Is(pg_query::WITH) || t[end - 2].Is(pg_query::WITH_LA))) {
    end -= 2;
  }
  for (std::size_t i = 0; i + 1 < end; ++i) {
    if (t[i].Opens()) ++depth;
    if (t[i].Closes()) --depth;
    if (depth == 0 && t[i].Is(pg_query::AS)) {
      const auto from = static_cast<std::size_t>(t[i + 1].start);
      const auto to = static_cast<std::size_t>(t[end - 1].end);
      return statement.substr(from, to - from);
    }
  }
  return statement;
}

// The columns a view or materialized view gets: the planner's, renamed by a column list.
SqlResult<std::vector<CatalogColumn>> NamedColumns(
    std::vector<CatalogColumn> columns,
    const google::protobuf::RepeatedPtrField<pg_query::Node>& names, const char* what,
    const StatementText& text) {
  if (static_cast<std::size_t>(names.size()) > columns.size()) {
    return ErrorAt(sqlstate::kSyntaxError,
                   std::string(what) + " specifies more column names than columns", text);
  }
  for (int i = 0; i < names.size(); ++i) {
    auto s = StringOf(names[i]);
    if (!s) return NotSupported("this column name", text);
    columns[static_cast<std::size_t>(i)].name = std::move(*s);
  }
  for (std::size_t i = 0; i < columns.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (columns[i].name == columns[j].name) {
        return ErrorAt(sqlstate::kDuplicateColumn,
                       "column " + Quoted(columns[i].name) + " specified more than once", text);
      }
    }
  }
  if (columns.empty()) {
    return ErrorAt(sqlstate::kFeatureNotSupported,
                   std::string(what) + " without columns is not supported", text);
  }
  return columns;
}

// The objects a view's or materialized view's query reads: those it names and those whose
// indexes its plan imports.
std::vector<std::string> Dependencies(const pg_query::Node& query, const Catalog& catalog,
                                      const std::vector<pb::IndexImport>* imports) {
  std::vector<std::string> deps = MentionedObjects(query, catalog);
  if (!imports) return deps;
  // What the named objects read, transitively (a view's tables): an import of one of those is
  // a dependency already, as PostgreSQL records a materialized view's on the view it names.
  std::set<std::string> reached;
  std::vector<std::string> work = deps;
  while (!work.empty()) {
    const std::string name = work.back();
    work.pop_back();
    if (!reached.insert(name).second) continue;
    if (const CatalogObject* o = catalog.FindObject(name)) {
      for (const auto& d : o->depends_on) work.push_back(d);
    }
  }
  for (const auto& i : *imports) {
    const CatalogIndex* index = catalog.IndexWithId(i.id());
    if (index && !reached.count(index->on)) {
      deps.push_back(index->on);
      reached.insert(index->on);
    }
  }
  return deps;
}

std::optional<SqlError> Taken(const Catalog& catalog, const std::string& name,
                              const StatementText& text, int location) {
  if (catalog.FindObject(name)) {
    return ErrorAt(sqlstate::kDuplicateTable, "relation " + Quoted(name) + " already exists", text,
                   location);
  }
  return std::nullopt;
}

DdlOutcome Skipped(const char* tag, const std::string& name) {
  DdlOutcome out;
  out.command_tag = tag;
  out.notices.push_back(
      {sqlstate::kDuplicateTable, "relation " + Quoted(name) + " already exists, skipping", ""});
  return out;
}

}  // namespace

std::string_view PostgresTypeName(pb::ScalarType type) { return SqlTypeName(type); }

std::vector<std::string> MentionedObjects(const pg_query::Node& query, const Catalog& catalog) {
  // An explicit stack over the tree's messages (reflection): no recursion, whatever the depth.
  std::vector<std::string> out;
  std::vector<const google::protobuf::Message*> stack = {&query};
  const auto* range_var = pg_query::RangeVar::descriptor();
  while (!stack.empty()) {
    const google::protobuf::Message* m = stack.back();
    stack.pop_back();
    if (m->GetDescriptor() == range_var) {
      const auto& rv = static_cast<const pg_query::RangeVar&>(*m);
      const bool ours = (rv.schemaname().empty() || rv.schemaname() == "public") &&
                        (rv.catalogname().empty() || rv.catalogname() == "tandem");
      if (ours && catalog.FindObject(rv.relname()) &&
          std::find(out.begin(), out.end(), rv.relname()) == out.end()) {
        out.push_back(rv.relname());
      }
      continue;
    }
    const auto* reflection = m->GetReflection();
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    reflection->ListFields(*m, &fields);
    for (const auto* f : fields) {
      if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
      if (f->is_repeated()) {
        for (int i = reflection->FieldSize(*m, f) - 1; i >= 0; --i) {
          stack.push_back(&reflection->GetRepeatedMessage(*m, f, i));
        }
      } else {
        stack.push_back(&reflection->GetMessage(*m, f));
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// CREATE TABLE

SqlResult<DdlOutcome> CreateTable(const pg_query::CreateStmt& stmt, const StatementText& text,
                                  Catalog& catalog) {
  auto name = NewRelationName(stmt.relation(), text);
  if (!name.ok()) return name.error();
  const int at = stmt.relation().location();
  if (!stmt.inh_relations().empty()) return NotSupported("INHERITS", text, at);
  if (stmt.has_partspec()) return NotSupported("PARTITION BY", text, at);
  if (stmt.has_partbound()) return NotSupported("PARTITION OF", text, at);
  if (stmt.has_of_typename()) return NotSupported("CREATE TABLE OF a type", text, at);
  if (!stmt.tablespacename().empty()) return NotSupported("TABLESPACE", text, at);
  if (!stmt.access_method().empty()) return NotSupported("USING an access method", text, at);
  if (stmt.oncommit() > pg_query::ONCOMMIT_NOOP) return NotSupported("ON COMMIT", text, at);
  if (catalog.FindObject(*name)) {
    if (stmt.if_not_exists()) return Skipped("CREATE TABLE", *name);
    return *Taken(catalog, *name, text, at);
  }
  auto def = TableDefinitionOf(stmt, *name, text);
  if (!def.ok()) return def.error();
  auto options = SourceOptionsOf(stmt, text);
  if (!options.ok()) return options.error();
  // Checked with a placeholder id before any id is handed out: a refusal changes nothing.
  auto checked = SourceImportOf(*options, *def, *name, "u1", text);
  if (!checked.ok()) return checked.error();

  CatalogObject object;
  object.name = *name;
  object.kind = options->source == "table" ? ObjectKind::kTable : ObjectKind::kSource;
  object.id = catalog.NewId();
  object.columns = def->columns;
  object.primary_key = def->primary_key;
  CatalogIndex index;
  index.name = FreeIndexName(catalog, *name + "_primary_idx");
  index.id = catalog.NewId();
  index.on = *name;
  index.key = def->primary_key;
  if (index.key.empty()) {
    for (std::uint32_t i = 0; i < def->columns.size(); ++i) index.key.push_back(i);
  }
  pb::SourceImport source = std::move(checked).value();
  source.set_id(object.id);
  pb::Command c = controller::NewDataflow(std::string(KindName(object.kind)) + " " + object.name);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  *d->add_source_imports() = std::move(source);
  auto* x = d->add_index_exports();
  x->set_id(index.id);
  x->set_on(object.id);
  for (auto k : index.key) x->add_key(k);
  c = controller::Canonical(c);
  DdlOutcome out;
  out.command_tag = "CREATE TABLE";
  out.commands.push_back(c);
  if (auto e = catalog.Create(std::move(object), {std::move(index)}, {c})) return *e;
  return out;
}

// ---------------------------------------------------------------------------------------------
// CREATE VIEW

SqlResult<DdlOutcome> CreateView(const pg_query::ViewStmt& stmt, const StatementText& text,
                                 const PlannedQuery& query, Catalog& catalog) {
  auto name = NewRelationName(stmt.view(), text);
  if (!name.ok()) return name.error();
  const int at = stmt.view().location();
  if (stmt.replace()) return NotSupported("CREATE OR REPLACE VIEW", text, at);
  if (!stmt.options().empty()) return NotSupported("WITH options of a view", text, at);
  if (stmt.with_check_option() > pg_query::NO_CHECK_OPTION) {
    return NotSupported("WITH CHECK OPTION", text, at);
  }
  if (auto e = Taken(catalog, *name, text, at)) return *e;
  auto columns = NamedColumns(*query.columns, stmt.aliases(), "CREATE VIEW", text);
  if (!columns.ok()) return columns.error();
  CatalogObject object;
  object.name = *name;
  object.kind = ObjectKind::kView;
  object.columns = std::move(columns).value();
  object.definition_sql = DefinitionText(text);
  object.depends_on = Dependencies(stmt.query(), catalog, query.imports);
  if (auto e = catalog.Create(std::move(object), {}, {})) return *e;
  DdlOutcome out;
  out.command_tag = "CREATE VIEW";
  return out;
}

// ---------------------------------------------------------------------------------------------
// CREATE MATERIALIZED VIEW

SqlResult<DdlOutcome> CreateMaterializedView(const pg_query::CreateTableAsStmt& stmt,
                                             const StatementText& text, const PlannedQuery& query,
                                             std::uint64_t as_of_floor, Catalog& catalog) {
  if (stmt.objtype() != pg_query::OBJECT_MATVIEW) {
    return NotSupported("CREATE TABLE AS", text);
  }
  const auto& into = stmt.into();
  auto name = NewRelationName(into.rel(), text);
  if (!name.ok()) return name.error();
  const int at = into.rel().location();
  if (into.skip_data()) return NotSupported("WITH NO DATA", text, at);
  if (!into.options().empty()) return NotSupported("WITH options of a materialized view", text, at);
  if (!into.table_space_name().empty()) return NotSupported("TABLESPACE", text, at);
  if (!into.access_method().empty()) return NotSupported("USING an access method", text, at);
  if (catalog.FindObject(*name)) {
    if (stmt.if_not_exists()) return Skipped("CREATE MATERIALIZED VIEW", *name);
    return *Taken(catalog, *name, text, at);
  }
  if (query.finishing && (query.finishing->has_limit() || query.finishing->offset() != 0)) {
    return NotSupported("LIMIT or OFFSET in a materialized view's query", text);
  }
  auto columns = NamedColumns(*query.columns, into.col_names(), "CREATE MATERIALIZED VIEW", text);
  if (!columns.ok()) return columns.error();

  // The plan, projected as the finishing says (ORDER BY alone orders nothing in a collection).
  pb::Plan plan = *query.plan;
  if (query.finishing && !query.finishing->project().empty()) {
    pb::Plan projected;
    *projected.mutable_mfp()->mutable_input() = std::move(plan);
    for (auto p : query.finishing->project()) {
      projected.mutable_mfp()->mutable_mfp()->add_projection(p);
    }
    plan = std::move(projected);
  }
  // The imports must be the catalog's live indexes, and the plan must produce the columns: the
  // collection's schema is what later importers of its index declare (the supervisor compares).
  std::map<std::string, pb::Schema> scope;
  std::uint64_t as_of = as_of_floor;
  for (const auto& i : *query.imports) {
    const CatalogIndex* index = catalog.IndexWithId(i.id());
    if (!index) {
      return ErrorAt(sqlstate::kInternalError,
                     "the plan imports " + i.id() + ", which is no index of the catalog", text);
    }
    scope[i.id()] = scope[i.on()] = i.schema();
    as_of = std::max(as_of, catalog.ReadableFrom(i.id()));
  }
  auto schema = ipc::PlanSchema(plan, scope);
  if (!schema.ok()) {
    return ErrorAt(sqlstate::kInternalError,
                   "the materialized view's plan does not type-check: " + schema.status().message(),
                   text);
  }
  if (static_cast<std::size_t>(schema->columns_size()) != columns->size()) {
    return ErrorAt(sqlstate::kInternalError,
                   "the materialized view's plan has " + std::to_string(schema->columns_size()) +
                       " columns, its query " + std::to_string(columns->size()),
                   text);
  }
  for (std::size_t i = 0; i < columns->size(); ++i) {
    const auto& planned = schema->columns(static_cast<int>(i));
    if (planned.type() != (*columns)[i].type) {
      return ErrorAt(sqlstate::kInternalError,
                     "the materialized view's plan makes column " + std::to_string(i + 1) + " " +
                         std::string(PostgresTypeName(planned.type())) + ", its query " +
                         std::string(PostgresTypeName((*columns)[i].type)),
                     text);
    }
    (*columns)[i].nullable = planned.nullable();  // the plan's: what the supervisor records
  }

  CatalogObject object;
  object.name = *name;
  object.kind = ObjectKind::kMaterializedView;
  object.columns = std::move(columns).value();
  object.definition_sql = DefinitionText(text);
  object.depends_on = Dependencies(stmt.query(), catalog, query.imports);
  CatalogIndex index;
  index.name = FreeIndexName(catalog, *name + "_primary_idx");
  index.on = *name;
  for (std::uint32_t i = 0; i < object.columns.size(); ++i) index.key.push_back(i);
  object.id = catalog.NewId();
  index.id = catalog.NewId();

  pb::Command c = controller::NewDataflow("materialized view " + object.name);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  for (const auto& i : *query.imports) *d->add_index_imports() = i;
  auto* b = d->add_objects_to_build();
  b->set_id(object.id);
  *b->mutable_plan() = std::move(plan);
  auto* x = d->add_index_exports();
  x->set_id(index.id);
  x->set_on(object.id);
  for (auto k : index.key) x->add_key(k);
  d->mutable_as_of()->Clear();
  d->mutable_as_of()->add_elements(as_of);
  c = controller::Canonical(c);
  DdlOutcome out;
  out.command_tag = "CREATE MATERIALIZED VIEW";
  out.commands.push_back(c);
  if (auto e = catalog.Create(std::move(object), {std::move(index)}, {c})) return *e;
  return out;
}

// ---------------------------------------------------------------------------------------------
// CREATE INDEX

SqlResult<DdlOutcome> CreateIndex(const pg_query::IndexStmt& stmt, const StatementText& text,
                                  std::uint64_t as_of_floor, Catalog& catalog) {
  auto on_name = RelationName(stmt.relation(), text);
  if (!on_name.ok()) return on_name.error();
  const int at = stmt.relation().location();
  if (stmt.unique()) return NotSupported("CREATE UNIQUE INDEX", text);
  if (stmt.has_where_clause()) return NotSupported("a partial index (WHERE)", text);
  if (!stmt.index_including_params().empty()) return NotSupported("INCLUDE", text);
  if (!stmt.options().empty()) return NotSupported("WITH options of an index", text);
  if (!stmt.table_space().empty()) return NotSupported("TABLESPACE", text);
  if (!stmt.access_method().empty() && stmt.access_method() != "btree") {
    return NotSupported("index access method " + Quoted(stmt.access_method()), text);
  }
  const CatalogObject* on = catalog.FindObject(*on_name);
  if (!on) {
    return ErrorAt(sqlstate::kUndefinedTable, "relation " + Quoted(*on_name) + " does not exist",
                   text, at);
  }
  if (on->kind == ObjectKind::kView) {
    SqlError e = ErrorAt(sqlstate::kWrongObjectType,
                         "cannot create index on relation " + Quoted(*on_name), text, at);
    e.detail = "This operation is not supported for views.";
    e.hint = "Create a materialized view of the query and index that.";
    return e;
  }
  std::vector<std::uint32_t> key;
  std::vector<std::string> key_names;
  for (const auto& p : stmt.index_params()) {
    if (!p.has_index_elem()) return NotSupported("this index column", text);
    const auto& e = p.index_elem();
    if (e.has_expr() || e.name().empty()) return NotSupported("an index on an expression", text);
    if (!e.collation().empty()) return NotSupported("COLLATE in an index", text);
    if (!e.opclass().empty()) return NotSupported("an operator class in an index", text);
    if (e.ordering() == pg_query::SORTBY_DESC || e.ordering() == pg_query::SORTBY_USING ||
        e.nulls_ordering() == pg_query::SORTBY_NULLS_FIRST ||
        e.nulls_ordering() == pg_query::SORTBY_NULLS_LAST) {
      return NotSupported("an ordering (DESC, NULLS FIRST/LAST) in an index", text);
    }
    std::optional<std::uint32_t> found;
    for (std::uint32_t i = 0; i < on->columns.size(); ++i) {
      if (on->columns[i].name == e.name()) found = i;
    }
    if (!found) {
      return ErrorAt(sqlstate::kUndefinedColumn, "column " + Quoted(e.name()) + " does not exist",
                     text);
    }
    key.push_back(*found);
    key_names.push_back(e.name());
  }
  if (key.empty()) return NotSupported("an index without columns", text);
  std::string name = stmt.idxname();
  if (name.empty()) {
    std::string base = *on_name;
    for (const auto& k : key_names) base += "_" + k;
    name = FreeIndexName(catalog, base + "_idx");
  } else if (catalog.FindIndex(name)) {
    if (stmt.if_not_exists()) return Skipped("CREATE INDEX", name);
    return ErrorAt(sqlstate::kDuplicateTable, "relation " + Quoted(name) + " already exists", text);
  }
  const auto existing = catalog.IndexesOn(on->name);
  if (existing.empty()) {
    return ErrorAt(sqlstate::kInternalError, on->name + " has no index to import", text);
  }
  const CatalogIndex& imported = *existing.front();

  CatalogIndex index;
  index.name = name;
  index.on = on->name;
  index.key = key;
  index.id = catalog.NewId();
  pb::Command c = controller::NewDataflow("index " + name);
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  *d->add_index_imports() = ImportOf(imported, *on);
  auto* x = d->add_index_exports();
  x->set_id(index.id);
  x->set_on(on->id);
  for (auto k : key) x->add_key(k);
  d->mutable_as_of()->Clear();
  d->mutable_as_of()->add_elements(std::max(as_of_floor, catalog.ReadableFrom(imported.id)));
  c = controller::Canonical(c);
  DdlOutcome out;
  out.command_tag = "CREATE INDEX";
  out.commands.push_back(c);
  if (auto e = catalog.CreateIndex(std::move(index), c)) return *e;
  return out;
}

// ---------------------------------------------------------------------------------------------
// DROP

SqlResult<DdlOutcome> Drop(const pg_query::DropStmt& stmt, const StatementText& text,
                           Catalog& catalog) {
  ObjectKind kind = ObjectKind::kTable;
  bool index = false;
  const char* tag = "DROP TABLE";
  switch (stmt.remove_type()) {
    case pg_query::OBJECT_TABLE:
      break;
    case pg_query::OBJECT_VIEW:
      kind = ObjectKind::kView;
      tag = "DROP VIEW";
      break;
    case pg_query::OBJECT_MATVIEW:
      kind = ObjectKind::kMaterializedView;
      tag = "DROP MATERIALIZED VIEW";
      break;
    case pg_query::OBJECT_INDEX:
      index = true;
      tag = "DROP INDEX";
      break;
    default:
      return NotSupported("this DROP", text);
  }
  const bool cascade = stmt.behavior() == pg_query::DROP_CASCADE;
  // Every name is planned against the catalog as the drops before it leave it (DROP TABLE a, b
  // where b reads a: a's CASCADE takes b, and b is then gone), on a copy: all or nothing.
  Catalog next = catalog;
  DdlOutcome out;
  out.command_tag = tag;
  for (const auto& object : stmt.objects()) {
    // A name: a List of String nodes (schema.name or name).
    std::vector<std::string> parts;
    if (object.has_list()) {
      for (const auto& item : object.list().items()) {
        auto s = StringOf(item);
        if (!s) return NotSupported("this name", text);
        parts.push_back(std::move(*s));
      }
    } else if (auto s = StringOf(object)) {
      parts.push_back(std::move(*s));
    }
    if (parts.empty() || parts.size() > 3) return NotSupported("this name", text);
    if (parts.size() == 3 && parts[0] != "tandem") {
      return ErrorAt(sqlstate::kFeatureNotSupported,
                     "cross-database references are not implemented: " + parts[0] + "." + parts[1] +
                         "." + parts[2],
                     text);
    }
    if (parts.size() >= 2 && parts[parts.size() - 2] != "public") {
      return ErrorAt(sqlstate::kInvalidSchemaName,
                     "schema " + Quoted(parts[parts.size() - 2]) + " does not exist", text);
    }
    const std::string& name = parts.back();
    // Missing from both namespaces (PostgreSQL's one): a name of the other kind is 42809 even
    // with IF EXISTS, as in PostgreSQL.
    const bool missing = !next.FindIndex(name) && !next.FindObject(name);
    if (missing && stmt.missing_ok()) {
      const std::string what(index ? "index" : KindName(kind));
      out.notices.push_back({sqlstate::kSuccessfulCompletion,
                             what + " " + Quoted(name) + " does not exist, skipping", ""});
      continue;
    }
    auto plan = next.PlanDrop(kind, index, name, cascade);
    if (!plan.ok()) {
      SqlError e = plan.error();
      e.position = PositionOf(text, -1);
      return e;
    }
    // PostgreSQL's NOTICE for what CASCADE takes besides the named object.
    const auto& deps = plan->dependants;
    if (deps.size() == 1)
      out.notices.push_back({sqlstate::kSuccessfulCompletion, "drop cascades to " + deps[0], ""});
    if (deps.size() > 1) {
      DdlNotice n{sqlstate::kSuccessfulCompletion,
                  "drop cascades to " + std::to_string(deps.size()) + " other objects", ""};
      for (const auto& d : deps)
        n.detail += (n.detail.empty() ? "" : "\n") + ("drop cascades to " + d);
      out.notices.push_back(std::move(n));
    }
    for (auto& c : plan->commands) out.commands.push_back(c);
    next.ApplyDrop(*plan);
  }
  catalog = std::move(next);
  return out;
}

// ---------------------------------------------------------------------------------------------
// SHOW

ShowResult Show(sql::StatementKind kind, const Catalog& catalog) {
  ShowResult r;
  r.columns = {"name"};
  auto list = [&](std::initializer_list<ObjectKind> kinds) {
    for (const auto& [name, o] : catalog.objects()) {
      if (std::find(kinds.begin(), kinds.end(), o.kind) != kinds.end()) r.rows.push_back({name});
    }
  };
  switch (kind) {
    case sql::StatementKind::kShowTables:
      list({ObjectKind::kTable, ObjectKind::kSource});
      break;
    case sql::StatementKind::kShowViews:
      list({ObjectKind::kView});
      break;
    case sql::StatementKind::kShowMaterializedViews:
      list({ObjectKind::kMaterializedView});
      break;
    case sql::StatementKind::kShowIndexes:
      r.columns = {"name", "on", "key"};
      for (const auto& [name, i] : catalog.indexes()) {
        const CatalogObject* on = catalog.FindObject(i.on);
        std::string key;
        for (auto k : i.key) {
          key += (key.empty() ? "" : ", ") +
                 (on && k < on->columns.size() ? on->columns[k].name : std::to_string(k));
        }
        r.rows.push_back({name, i.on, key});
      }
      break;
    default:
      break;
  }
  return r;
}

SqlResult<ShowResult> ShowColumns(const pg_query::Node& relation, const StatementText& text,
                                  const Catalog& catalog) {
  if (!relation.has_range_var()) return NotSupported("SHOW COLUMNS of this", text);
  auto name = RelationName(relation.range_var(), text);
  if (!name.ok()) return name.error();
  const CatalogObject* o = catalog.FindObject(*name);
  if (!o) {
    return ErrorAt(sqlstate::kUndefinedTable, "relation " + Quoted(*name) + " does not exist", text,
                   relation.range_var().location());
  }
  ShowResult r;
  r.columns = {"name", "type", "nullable"};
  for (const auto& c : o->columns) {
    r.rows.push_back({c.name, SqlTypeNameWithMods(c.type, c.mods), c.nullable ? "YES" : "NO"});
  }
  return r;
}

}  // namespace tandem::frontend
