#include "frontend/server/sql_executor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <variant>

#include "frontend/catalog/ddl.h"
#include "frontend/plan/dml.h"
#include "frontend/plan/planner.h"
#include "frontend/server/catalog_change.h"
#include "frontend/server/driver_waits.h"
#include "frontend/server/sql_answers.h"
#include "frontend/server/sql_reads.h"
#include "frontend/server/sql_subscribe.h"
#include "frontend/server/transaction_block.h"
#include "frontend/sql/classify.h"
#include "frontend/sql/parameters.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

using pgwire::ErrorFields;
using pgwire::TransactionStatus;
using sql::SqlError;
using sql::StatementKind;

namespace {

DriverClock::time_point DeadlineOf(const SessionState& session) {
  return DriverClock::now() + session.statement_timeout;
}

// Fails the statement: the error ends the Query's statements, and fails a transaction block.
bool Fail(pgwire::QuerySink& sink, SessionState& session, const ErrorFields& error) {
  return FailStatement(sink, session, error);
}
bool Fail(pgwire::QuerySink& sink, SessionState& session, const SqlError& error) {
  return FailStatement(sink, session, ErrorOf(error));
}

SqlError At(SqlError error, int position) {
  if (error.position == 0) error.position = position;
  return error;
}

// The text of an A_Const that is an integer literal (bigint literals parse as Float), or nullopt.
std::optional<std::int64_t> IntegerConstant(const pg_query::Node& node) {
  if (!node.has_a_const()) return std::nullopt;
  const auto& c = node.a_const();
  if (c.has_ival()) return c.ival().ival();
  if (c.has_fval()) {
    const std::string& text = c.fval().fval();
    std::int64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return v;
  }
  return std::nullopt;
}

// AS OF t: t is milliseconds since the epoch (the one timeline, DESIGN §15), an integer literal.
sql::SqlResult<Time> AsOfTime(const pg_query::Node& as_of, std::string_view sql) {
  const auto v = IntegerConstant(as_of);
  if (!v || *v < 0) {
    int location = -1;
    if (as_of.has_a_const()) location = as_of.a_const().location();
    return SqlError(
        sqlstate::kFeatureNotSupported,
        "AS OF takes a non-negative integer literal: a time in milliseconds since the "
        "epoch",
        location >= 0 ? sql::CursorPosition(sql, static_cast<std::size_t>(location)) : 0);
  }
  return static_cast<Time>(*v);
}

// A read at the latest time is at or after `floor`: the latest write this frontend acknowledged
// (to any session: a client told its write is done is never followed by a read that misses it)
// and the session's own — when it reads a table; a read of no table (generators, files,
// constants) has no write to follow, and a generator's ticks would never reach one's time.
ReadTime ReadTimeOf(bool reads_tables, const SessionState& session, Time acknowledged,
                    std::optional<Time> as_of) {
  ReadTime t;
  if (as_of) {
    t.kind = ReadTime::Kind::kExactly;
    t.at = *as_of;
  } else {
    // Never before time 1: the one-row collection's row is at time 1 (a counter's first value),
    // and a read at 0 of a replica just started would miss it. Every table's times are far later.
    t.floor = reads_tables ? std::max({session.last_write, acknowledged, Time{1}}) : Time{1};
  }
  return t;
}

// session.executing names `portal` while it lives — however the statement ends, an exception
// included (a portal freed later must not stay named).
class ExecutingPortal {
 public:
  ExecutingPortal(SessionState& session, Portal& portal) : session_(session) {
    session_.executing = &portal;
  }
  ~ExecutingPortal() { session_.executing = nullptr; }
  ExecutingPortal(const ExecutingPortal&) = delete;
  ExecutingPortal& operator=(const ExecutingPortal&) = delete;

 private:
  SessionState& session_;
};

// Whether a statement of `kind` may hold parameters ($n): the queries and the writes, as in
// PostgreSQL — not DDL (a view's text would keep a parameter no later read has) nor SET or SHOW.
bool TakesParameters(StatementKind kind, const sql::ParsedStatement& statement) {
  switch (kind) {
    case StatementKind::kSelect:
    case StatementKind::kExplain:
    case StatementKind::kInsert:
    case StatementKind::kUpdate:
    case StatementKind::kDelete:
      return true;
    case StatementKind::kSubscribe:
      return std::get<sql::SubscribeStatement>(statement.form).target.has_select_stmt();
    default:
      return false;
  }
}

// A result of text columns (SHOW, EXPLAIN) as a replica's rows.
ipc::pb::Rows TextRows(const ShowResult& result) {
  ipc::pb::Rows rows;
  for (const auto& row : result.rows) {
    auto* r = rows.add_rows();
    r->set_count(1);
    for (const auto& v : row) r->mutable_row()->add_datums()->set_string(v);
  }
  return rows;
}

std::vector<pgwire::FieldDescription> TextFields(const std::vector<std::string>& columns) {
  std::vector<pgwire::FieldDescription> fields;
  for (const auto& c : columns) fields.emplace_back(c, pgwire::kText);
  return fields;
}

// A SHOW's or EXPLAIN's rows and their command tag (a portal's: SendRows' "SELECT n").
bool SendText(pgwire::QuerySink& sink, SessionState& session, const ShowResult& result,
              const std::string& tag) {
  const auto deadline = DeadlineOf(session);
  if (session.executing != nullptr) {
    return SendRows(sink, session.executing, TextFields(result.columns), TextRows(result),
                    deadline);
  }
  if (!sink.RowDescription(TextFields(result.columns))) return false;
  std::vector<pgwire::Value> values;
  for (const auto& row : result.rows) {
    values.assign(row.begin(), row.end());
    if (!WaitToSendRow(sink, deadline) || !sink.DataRow(values)) return false;
  }
  return sink.CommandComplete(tag);
}

std::string ShowTag(const ShowResult& result) {
  return "SHOW " + std::to_string(result.rows.size());
}

const pg_query::Node& StatementNode(const sql::ParsedStatement& s) {
  return std::get<sql::PostgresStatement>(s.form).stmt;
}

// Whether a DROP names the one-row object (it cannot be dropped).
bool DropsOneRow(const pg_query::DropStmt& drop) {
  for (const auto& object : drop.objects()) {
    if (!object.has_list() || object.list().items().empty()) continue;
    const auto& last = object.list().items(object.list().items_size() - 1);
    if (last.has_string() && last.string().sval() == plan::kOneRowObject) return true;
  }
  return false;
}

// The session parameters a SHOW answers and a SET accepts (what drivers send at connect): their
// values are PostgreSQL's defaults; Tandem's behaviour does not change with them, but
// statement_timeout, which bounds the session's statements.
struct Parameter {
  std::string_view name;
  std::string_view value;
};
constexpr Parameter kParameters[] = {
    {"application_name", ""},
    {"client_encoding", "UTF8"},
    {"client_min_messages", "notice"},
    {"datestyle", "ISO, MDY"},
    {"default_transaction_isolation", "serializable"},
    {"extra_float_digits", "1"},
    {"integer_datetimes", "on"},
    {"intervalstyle", "postgres"},
    {"lc_messages", "C"},
    {"search_path", "public"},
    {"standard_conforming_strings", "on"},
    {"statement_timeout", ""},
    {"tandem_local_reads", "on"},
    {"timezone", "UTC"},
    {"transaction_isolation", "serializable"},
};

std::optional<std::string_view> ParameterDefault(std::string_view name) {
  for (const auto& p : kParameters) {
    if (p.name == name) return p.value;
  }
  return std::nullopt;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

SqlExecutor::SqlExecutor(LiveCatalog& catalog, ReplicaDriver& driver, std::string server_version,
                         LocalReads* local_reads)
    : catalog_(catalog),
      driver_(driver),
      local_reads_(local_reads),
      server_version_(std::move(server_version)),
      writers_(catalog, driver) {}

void SqlExecutor::Execute(std::string sql, pgwire::QuerySink& sink, SessionState& session) {
  auto parsed = sql::Parse(sql);
  if (!parsed.ok()) {
    (void)Fail(sink, session, parsed.error());
    return;
  }
  if (parsed->empty()) {
    (void)sink.EmptyQuery();
    return;
  }
  for (const sql::ParsedStatement& statement : *parsed) {
    if (session.cancel.canceled()) {
      (void)Fail(
          sink, session,
          ErrorFields::Error(sqlstate::kQueryCanceled, "canceling statement due to user request"));
      return;
    }
    auto kind = sql::Classify(statement);
    if (!kind.ok()) {
      (void)Fail(sink, session, kind.error());
      return;
    }
    if (!Run(statement, *kind, sql, sink, session)) return;
  }
}

sql::SqlResult<PreparedStatement> SqlExecutor::Prepare(std::string query,
                                                       const std::vector<std::uint32_t>& declared,
                                                       SessionState& session) {
  (void)session;
  PreparedStatement prepared;
  prepared.query = std::move(query);
  const std::string_view sql = prepared.query;
  for (std::size_t i = 0; i < declared.size(); ++i) {
    const std::uint32_t oid = declared[i];
    if (oid != 0 && oid != pgwire::kUnknown.oid && !ParameterTypeName(oid)) {
      return SqlError(sqlstate::kFeatureNotSupported,
                      "parameter $" + std::to_string(i + 1) + " has a type (OID " +
                          std::to_string(oid) + ") Tandem does not have",
                      0);
    }
  }
  auto parsed = sql::Parse(sql);
  if (!parsed.ok()) return parsed.error();
  if (parsed->size() > 1) {
    return SqlError(sqlstate::kSyntaxError,
                    "cannot insert multiple commands into a prepared statement",
                    (*parsed)[1].position);
  }
  int count = 0;
  if (!parsed->empty()) {
    prepared.statement = std::move(parsed->front());
    auto kind = sql::Classify(*prepared.statement);
    if (!kind.ok()) return kind.error();
    prepared.kind = *kind;
    auto counted = sql::CountParameters(*prepared.statement, sql);
    if (!counted.ok()) return counted.error();
    count = *counted;
  }
  if (count > 0 && !TakesParameters(prepared.kind, *prepared.statement)) {
    // PostgreSQL's utility statements take none: a view's text keeps what it was written with.
    return SqlError(sqlstate::kUndefinedParameter, "there is no parameter $1",
                    prepared.statement->position);
  }
  std::vector<std::uint32_t>& types = prepared.parameter_types;
  types.assign(std::max(static_cast<std::size_t>(count), declared.size()), 0);
  for (std::size_t i = 0; i < declared.size(); ++i) {
    types[i] = declared[i] == pgwire::kUnknown.oid ? 0 : declared[i];
  }
  if (std::find(types.begin(), types.end(), 0u) == types.end()) return prepared;

  // Inference: the statement bound with each parameter a NULL of its type (unknown where none
  // was given) at its place; each unknown's first reading (by location) is its type — text in a
  // select list, as PostgreSQL resolves it there; 42P18 where nothing reads it as a type.
  std::vector<std::vector<int>> locations(types.size());
  std::optional<sql::ParsedStatement> probe = prepared.statement;
  if (probe) {
    sql::ReplaceParameters(*probe, [&](int number, int location) {
      const auto i = static_cast<std::size_t>(number - 1);
      locations[i].push_back(location);
      return sql::NullConstant(types[i] != 0 ? *ParameterTypeName(types[i]) : "", location);
    });
    plan::UnknownTypes unknowns;
    if (auto planned = PlanForTypes(*probe, prepared.kind, sql, &unknowns); !planned.ok()) {
      return planned.error();
    }
    const std::map<int, std::string> casts = sql::CastParameterTypes(*prepared.statement);
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (types[i] != 0) continue;
      if (locations[i].empty()) {
        return SqlError(sqlstate::kIndeterminateDatatype,
                        "could not determine data type of parameter $" + std::to_string(i + 1), 0);
      }
      // Its first reading (by location: PostgreSQL deduces it where it first meets it).
      std::sort(locations[i].begin(), locations[i].end());
      for (int location : locations[i]) {
        if (auto it = unknowns.find(location); it != unknowns.end()) {
          types[i] = DescribeColumn(it->second).type.oid;
          break;
        }
      }
      if (types[i] == 0) {  // read nowhere (an unreferenced WITH query): as written cast
        const auto cast = casts.find(static_cast<int>(i + 1));
        if (cast != casts.end()) types[i] = ParameterTypeOid(cast->second).value_or(0);
      }
      if (types[i] == 0) {  // read as no type anywhere (`$1 IS NULL`), as PostgreSQL refuses it
        return SqlError(sqlstate::kIndeterminateDatatype,
                        "could not determine data type of parameter $" + std::to_string(i + 1), 0);
      }
    }
  }
  return prepared;
}

sql::SqlResult<bool> SqlExecutor::PlanForTypes(const sql::ParsedStatement& statement,
                                               StatementKind kind, std::string_view sql,
                                               plan::UnknownTypes* unknowns) {
  const std::shared_ptr<const Catalog> catalog = catalog_.Snapshot();
  const pg_query::Node* query = nullptr;
  switch (kind) {
    case StatementKind::kSelect:
      if (const auto* as_of = std::get_if<sql::SelectAsOfStatement>(&statement.form)) {
        query = &as_of->select;
      } else {
        query = &StatementNode(statement);
      }
      break;
    case StatementKind::kExplain:
      if (const auto* as_of = std::get_if<sql::ExplainAsOfStatement>(&statement.form)) {
        query = &as_of->explain.explain_stmt().query();
      } else {
        query = &StatementNode(statement).explain_stmt().query();
      }
      break;
    case StatementKind::kSubscribe: {
      const auto& target = std::get<sql::SubscribeStatement>(statement.form).target;
      if (!target.has_select_stmt()) return true;
      query = &target;
      break;
    }
    case StatementKind::kInsert:
    case StatementKind::kUpdate:
    case StatementKind::kDelete: {
      auto planned = plan::PlanDml(StatementNode(statement), *catalog, sql, unknowns);
      if (!planned.ok()) return planned.error();
      return true;
    }
    default:
      return true;  // takes none (TakesParameters)
  }
  auto planned = plan::PlanQuery(*query, *catalog, sql, unknowns);
  if (!planned.ok()) return planned.error();
  return true;
}

sql::SqlResult<std::optional<std::vector<pgwire::FieldDescription>>> SqlExecutor::DescribeResult(
    const PreparedStatement& prepared, const std::optional<sql::ParsedStatement>& statement,
    SessionState& session) {
  (void)session;
  using Fields = std::vector<pgwire::FieldDescription>;
  if (!statement) return std::optional<Fields>();
  const std::string_view sql = prepared.query;
  const std::shared_ptr<const Catalog> catalog = catalog_.Snapshot();
  auto planned_fields = [&](const pg_query::Node& query) -> sql::SqlResult<std::optional<Fields>> {
    auto planned = plan::PlanQuery(query, *catalog, sql);
    if (!planned.ok()) return planned.error();
    Fields fields;
    for (const auto& c : planned->columns) fields.push_back(DescribeColumn(c));
    return std::optional<Fields>(std::move(fields));
  };
  switch (prepared.kind) {
    case StatementKind::kSelect:
      if (const auto* as_of = std::get_if<sql::SelectAsOfStatement>(&statement->form)) {
        return planned_fields(as_of->select);
      }
      return planned_fields(StatementNode(*statement));
    case StatementKind::kExplain:
      return std::optional<Fields>(TextFields({"QUERY PLAN"}));
    case StatementKind::kShowVariable:
      return std::optional<Fields>(
          TextFields({Lower(StatementNode(*statement).variable_show_stmt().name())}));
    case StatementKind::kShowColumns: {
      const auto& show = std::get<sql::ShowColumnsStatement>(statement->form);
      auto result = ShowColumns(show.relation, StatementText{sql, statement->text}, *catalog);
      if (!result.ok()) return result.error();
      return std::optional<Fields>(TextFields(result->columns));
    }
    case StatementKind::kShowTables:
    case StatementKind::kShowViews:
    case StatementKind::kShowMaterializedViews:
    case StatementKind::kShowIndexes:
      return std::optional<Fields>(TextFields(Show(prepared.kind, *catalog).columns));
    default:
      return std::optional<Fields>();
  }
}

bool SqlExecutor::ReadsRows(const PreparedStatement& prepared) const {
  switch (prepared.kind) {
    case StatementKind::kSelect:
    case StatementKind::kExplain:
    case StatementKind::kShowTables:
    case StatementKind::kShowViews:
    case StatementKind::kShowMaterializedViews:
    case StatementKind::kShowIndexes:
    case StatementKind::kShowColumns:
    case StatementKind::kShowVariable:
      return prepared.statement.has_value();
    default:
      return false;
  }
}

bool SqlExecutor::KeepRows(Portal& portal, pgwire::QuerySink& sink, SessionState& session) {
  portal.started = true;
  portal.keep_only = true;
  const ExecutingPortal executing(session, portal);
  const bool ran =
      Run(*portal.statement, portal.prepared->kind, portal.prepared->query, sink, session);
  portal.keep_only = false;
  return ran;
}

void SqlExecutor::ExecutePortal(Portal& portal, std::uint32_t max_rows, pgwire::QuerySink& sink,
                                SessionState& session) {
  portal.max_rows = max_rows;
  if (portal.started) {
    // Its rows go on where the last Execute stopped; a statement that returned none ran once.
    if (session.transaction == TransactionStatus::kFailed) {
      (void)sink.Error(ErrorFields::Error(
          sqlstate::kInFailedSqlTransaction,
          "current transaction is aborted, commands ignored until end of transaction block"));
      return;
    }
    if (portal.rows_kept) {
      (void)SendPortalRows(sink, portal, DeadlineOf(session));
    } else if (!portal.statement) {
      (void)sink.EmptyQuery();
    } else {
      (void)Fail(sink, session,
                 SqlError(sqlstate::kObjectNotInPrerequisiteState,
                          "portal cannot be run: its statement has run (Bind it again)", 0));
    }
    return;
  }
  portal.started = true;
  if (!portal.statement) {
    (void)sink.EmptyQuery();
    return;
  }
  const ExecutingPortal executing(session, portal);
  (void)Run(*portal.statement, portal.prepared->kind, portal.prepared->query, sink, session);
}

bool SqlExecutor::Run(const sql::ParsedStatement& statement, StatementKind kind,
                      std::string_view sql, pgwire::QuerySink& sink, SessionState& session) {
  std::optional<TransactionCommand> tx;
  if (kind == StatementKind::kBegin) tx = TransactionCommand::kBegin;
  if (kind == StatementKind::kCommit) tx = TransactionCommand::kCommit;
  if (kind == StatementKind::kRollback) tx = TransactionCommand::kRollback;
  if (session.transaction == TransactionStatus::kFailed &&
      (!tx || *tx == TransactionCommand::kBegin)) {
    (void)sink.Error(ErrorFields::Error(
        sqlstate::kInFailedSqlTransaction,
        "current transaction is aborted, commands ignored until end of transaction block"));
    return false;
  }
  if (tx) {
    const TransactionEffect effect = ApplyTransactionCommand(*tx, session.transaction);
    if (!effect.warning.empty()) {
      (void)sink.Notice(
          ErrorFields(pgwire::Severity::kWarning, effect.warning_sqlstate, effect.warning));
    }
    if (*tx == TransactionCommand::kRollback && session.block_wrote) {
      (void)sink.Notice(ErrorFields(pgwire::Severity::kWarning, sqlstate::kWarning,
                                    "ROLLBACK did not undo the writes of this transaction block: "
                                    "Tandem applies each write when it runs"));
    }
    if (*tx != TransactionCommand::kBegin || session.transaction == TransactionStatus::kIdle) {
      session.block_wrote = false;
    }
    session.transaction = effect.status;
    if (*tx != TransactionCommand::kBegin) {
      // Portals end with their transaction (but the one running this statement, if any).
      std::erase_if(session.portals, [&](const auto& p) { return &p.second != session.executing; });
    }
    return sink.CommandComplete(effect.tag);
  }

  switch (kind) {
    case StatementKind::kCreateTable:
    case StatementKind::kCreateView:
    case StatementKind::kCreateMaterializedView:
    case StatementKind::kCreateIndex:
    case StatementKind::kDrop:
      return RunDdl(statement, kind, sql, sink, session);
    case StatementKind::kShowTables:
    case StatementKind::kShowViews:
    case StatementKind::kShowMaterializedViews:
    case StatementKind::kShowIndexes:
    case StatementKind::kShowColumns:
    case StatementKind::kShowVariable:
      return RunShow(statement, kind, sql, sink, session);
    case StatementKind::kSet:
      return RunSet(StatementNode(statement).variable_set_stmt(), statement.position, sink,
                    session);
    case StatementKind::kSelect: {
      if (const auto* as_of = std::get_if<sql::SelectAsOfStatement>(&statement.form)) {
        return RunSelect(as_of->select, &as_of->as_of, sql, sink, session);
      }
      return RunSelect(StatementNode(statement), nullptr, sql, sink, session);
    }
    case StatementKind::kExplain: {
      if (const auto* as_of = std::get_if<sql::ExplainAsOfStatement>(&statement.form)) {
        return RunExplain(as_of->explain.explain_stmt(), sql, sink, session);
      }
      return RunExplain(StatementNode(statement).explain_stmt(), sql, sink, session);
    }
    case StatementKind::kInsert:
    case StatementKind::kUpdate:
    case StatementKind::kDelete: {
      auto tag = writers_.Run(StatementNode(statement), sql, session);
      if (!tag.ok()) return Fail(sink, session, At(tag.error(), statement.position));
      if (session.transaction != TransactionStatus::kIdle) session.block_wrote = true;
      return sink.CommandComplete(*tag);
    }
    case StatementKind::kSubscribe:
      return RunSubscribeStatement(std::get<sql::SubscribeStatement>(statement.form),
                                   statement.position, sql, sink, session);
    case StatementKind::kDeallocate: {
      // The extended protocol's prepared statements (drivers close them so: psycopg's DEALLOCATE
      // ALL after a rollback, and when its cache is full). An empty name is ALL.
      const std::string& name = StatementNode(statement).deallocate_stmt().name();
      if (name.empty()) {  // every named one (PostgreSQL's keeps the unnamed statement)
        std::erase_if(session.statements, [](const auto& s) { return !s.first.empty(); });
        return sink.CommandComplete("DEALLOCATE ALL");
      }
      if (session.statements.erase(name) == 0) {
        return Fail(
            sink, session,
            SqlError(sqlstate::kInvalidSqlStatementName,
                     "prepared statement \"" + name + "\" does not exist", statement.position));
      }
      return sink.CommandComplete("DEALLOCATE");
    }
    default:
      break;
  }
  return Fail(sink, session,
              SqlError(sqlstate::kFeatureNotSupported,
                       std::string(sql::StatementKindName(kind)) + " is not supported",
                       statement.position));
}

bool SqlExecutor::RunDdl(const sql::ParsedStatement& statement, StatementKind kind,
                         std::string_view sql, pgwire::QuerySink& sink, SessionState& session) {
  const pg_query::Node& node = StatementNode(statement);
  const StatementText text{sql, statement.text};
  const auto deadline = DeadlineOf(session);
  if (kind == StatementKind::kDrop && DropsOneRow(node.drop_stmt())) {
    return Fail(sink, session,
                SqlError(sqlstate::kWrongObjectType,
                         std::string(plan::kOneRowObject) +
                             " is Tandem's own (the planner reads constants from it): it cannot "
                             "be dropped",
                         statement.position));
  }
  // A materialized view or an index starts where its inputs are readable now: no earlier than the
  // latest time of the indexes it imports (asked of the driver; 0 when no replica reports one —
  // then the history's compactions bound it).
  auto latest_of = [&](const std::vector<std::string>& indexes) -> std::uint64_t {
    if (indexes.empty()) return 0;
    LatestRequest request;
    request.indexes = indexes;
    request.deadline = std::min(deadline, DriverClock::now() + std::chrono::seconds(1));
    auto t = AwaitDriver<Time>(session.cancel, driver_, request.deadline, [&](Done<Time> done) {
      return driver_.LatestReadable(std::move(request), std::move(done));
    });
    return t.ok() && *t < kMaxTime ? *t : 0;
  };

  CatalogChange change = [&](Catalog& catalog) -> sql::SqlResult<DdlOutcome> {
    switch (kind) {
      case StatementKind::kCreateTable:
        return CreateTable(node.create_stmt(), text, catalog);
      case StatementKind::kCreateView: {
        auto planned = plan::PlanQuery(node.view_stmt().query(), catalog, sql);
        if (!planned.ok()) return planned.error();
        const PlannedQuery query(planned->plan, planned->imports, planned->columns,
                                 &planned->finishing);
        return CreateView(node.view_stmt(), text, query, catalog);
      }
      case StatementKind::kCreateMaterializedView: {
        const auto& create = node.create_table_as_stmt();
        auto planned = plan::PlanQuery(create.query(), catalog, sql);
        if (!planned.ok()) return planned.error();
        const PlannedQuery query(planned->plan, planned->imports, planned->columns,
                                 &planned->finishing);
        std::vector<std::string> imported;
        for (const auto& i : planned->imports) imported.push_back(i.id());
        return CreateMaterializedView(create, text, query, latest_of(imported), catalog);
      }
      case StatementKind::kCreateIndex: {
        std::vector<std::string> on;
        const std::string relation = node.index_stmt().relation().relname();
        for (const CatalogIndex* index : catalog.IndexesOn(relation)) {
          on.push_back(index->id);
          break;  // the default index: what the new index imports
        }
        return CreateIndex(node.index_stmt(), text, latest_of(on), catalog);
      }
      case StatementKind::kDrop:
        return Drop(node.drop_stmt(), text, catalog);
      default:
        return SqlError(sqlstate::kInternalError, "not a DDL statement");
    }
  };
  auto outcome = ApplyCatalogChange(catalog_, driver_, change, deadline);
  // A dataflow's start is chosen from the compactions known when it is made; the driver may
  // compact an input further before the replica gets it (every 200 ms), and the replica then
  // refuses it (withdrawn: nothing changed). Made again from the times known now.
  for (int retry = 0;
       retry < 3 && !outcome.ok() &&
       outcome.error().message.find("below the compaction frontier") != std::string::npos;
       ++retry) {
    outcome = ApplyCatalogChange(catalog_, driver_, change, deadline);
  }
  if (!outcome.ok()) return Fail(sink, session, At(outcome.error(), statement.position));
  for (const auto& n : outcome->notices) {
    ErrorFields notice(pgwire::Severity::kNotice, n.sqlstate, n.message);
    notice.detail = n.detail;
    if (!sink.Notice(notice)) return false;
  }
  return sink.CommandComplete(outcome->command_tag);
}

bool SqlExecutor::RunSelect(const pg_query::Node& query, const pg_query::Node* as_of,
                            std::string_view sql, pgwire::QuerySink& sink, SessionState& session) {
  std::optional<Time> at;
  if (as_of) {
    auto t = AsOfTime(*as_of, sql);
    if (!t.ok()) return Fail(sink, session, t.error());
    at = *t;
  }
  const std::shared_ptr<const Catalog> catalog = catalog_.Snapshot();
  auto planned = plan::PlanQuery(query, *catalog, sql);
  if (!planned.ok()) return Fail(sink, session, planned.error());
  const auto deadline = DeadlineOf(session);
  const bool reads_tables = !TablesRead(*catalog, planned->import_objects).empty();
  if (const auto generators = GeneratorsRead(*catalog, planned->import_objects);
      !generators.empty() &&
      (reads_tables || generators.size() > 1 ||
       std::count_if(planned->import_objects.begin(), planned->import_objects.end(),
                     [](const std::string& o) { return o != plan::kOneRowObject; }) > 1)) {
    // Nothing is read at one time across them: a generator's times are its ticks.
    std::string names;
    for (const auto& g : generators) names += (names.empty() ? "" : ", ") + g;
    return Fail(sink, session,
                SqlError(sqlstate::kFeatureNotSupported,
                         "a query cannot read the generator source(s) " + names +
                             " together with other collections: a generator's times are its "
                             "own ticks, not the epoch milliseconds the others share",
                         0));
  }
  auto read = ReadRelation(driver_, session.local_reads ? local_reads_ : nullptr, session.cancel,
                           *catalog, *planned,
                           ReadTimeOf(reads_tables, session, writers_.last_write(), at), deadline);
  if (!read.ok()) return Fail(sink, session, read.error());
  std::vector<pgwire::FieldDescription> fields;
  for (std::size_t i = 0; i < planned->columns.size(); ++i) {
    fields.push_back(DescribeColumn(planned->columns[i]));
  }
  if (!SendRows(sink, session.executing, std::move(fields), std::move(read->rows), deadline)) {
    if (session.transaction != TransactionStatus::kIdle) {
      session.transaction = TransactionStatus::kFailed;
    }
    return false;
  }
  return true;
}

bool SqlExecutor::RunSubscribeStatement(const sql::SubscribeStatement& statement, int position,
                                        std::string_view sql, pgwire::QuerySink& sink,
                                        SessionState& session) {
  std::optional<Time> at;
  if (statement.as_of) {
    auto t = AsOfTime(*statement.as_of, sql);
    if (!t.ok()) return Fail(sink, session, t.error());
    at = *t;
  }
  const std::shared_ptr<const Catalog> catalog = catalog_.Snapshot();
  // As a SELECT: no write's time to follow when it reads no table (a generator ticks its own).
  const bool reads_tables = !statement.target.has_range_var() ||
                            !TablesRead(*catalog, {statement.target.range_var().relname()}).empty();
  auto streamed =
      RunSubscribe(driver_, *catalog, statement, position, sql,
                   ReadTimeOf(reads_tables, session, writers_.last_write(), at), sink, session);
  if (!streamed.ok()) return Fail(sink, session, streamed.error());
  if (!*streamed && session.transaction != TransactionStatus::kIdle) {
    session.transaction = TransactionStatus::kFailed;
  }
  return *streamed;
}

bool SqlExecutor::RunExplain(const pg_query::ExplainStmt& explain, std::string_view sql,
                             pgwire::QuerySink& sink, SessionState& session) {
  for (const auto& option : explain.options()) {
    if (option.has_def_elem() && option.def_elem().defname() == "analyze") {
      return Fail(sink, session,
                  SqlError(sqlstate::kFeatureNotSupported, "EXPLAIN ANALYZE is not supported",
                           sql::CursorPosition(sql, static_cast<std::size_t>(std::max(
                                                        0, option.def_elem().location())))));
    }
  }
  const std::shared_ptr<const Catalog> catalog = catalog_.Snapshot();
  auto planned = plan::PlanQuery(explain.query(), *catalog, sql);
  if (!planned.ok()) return Fail(sink, session, planned.error());
  ShowResult lines;
  lines.columns = {"QUERY PLAN"};
  const std::string text = plan::Explain(*planned, *catalog);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.rows.push_back({text.substr(start, end - start)});
    start = end + 1;
  }
  return SendText(sink, session, lines, "EXPLAIN");
}

bool SqlExecutor::RunShow(const sql::ParsedStatement& statement, StatementKind kind,
                          std::string_view sql, pgwire::QuerySink& sink, SessionState& session) {
  const std::shared_ptr<const Catalog> catalog = catalog_.Snapshot();
  if (kind == StatementKind::kShowColumns) {
    const auto& show = std::get<sql::ShowColumnsStatement>(statement.form);
    auto result = ShowColumns(show.relation, StatementText{sql, statement.text}, *catalog);
    if (!result.ok()) return Fail(sink, session, result.error());
    return SendText(sink, session, *result, ShowTag(*result));
  }
  if (kind != StatementKind::kShowVariable) {
    ShowResult result = Show(kind, *catalog);
    std::erase_if(result.rows,
                  [](const auto& row) { return !row.empty() && row[0] == plan::kOneRowObject; });
    return SendText(sink, session, result, ShowTag(result));
  }
  const std::string name = Lower(StatementNode(statement).variable_show_stmt().name());
  std::string value;
  if (name == "server_version") {
    value = server_version_;
  } else if (name == "statement_timeout") {
    value = std::to_string(session.statement_timeout.count()) + "ms";
  } else if (name == "application_name") {
    value = session.startup.application_name;
  } else if (name == "tandem_local_reads") {
    value = session.local_reads ? "on" : "off";
  } else if (name == "tandem_in_place_reads") {
    // Reads the local replica answered in place since the frontend started (local_reads.h).
    value = std::to_string(local_reads_ != nullptr ? local_reads_->answered() : 0);
  } else if (auto v = ParameterDefault(name)) {
    value = std::string(*v);
  } else {
    return Fail(
        sink, session,
        SqlError(sqlstate::kUndefinedObject,
                 "unrecognized configuration parameter \"" + name + "\"", statement.position));
  }
  ShowResult result;
  result.columns = {name};
  result.rows = {{value}};
  return SendText(sink, session, result, "SHOW");
}

bool SqlExecutor::RunSet(const pg_query::VariableSetStmt& set, int position,
                         pgwire::QuerySink& sink, SessionState& session) {
  const std::string tag =
      set.kind() == pg_query::VAR_RESET || set.kind() == pg_query::VAR_RESET_ALL ? "RESET" : "SET";
  if (set.kind() == pg_query::VAR_SET_MULTI || set.kind() == pg_query::VAR_RESET_ALL) {
    return sink.CommandComplete(tag);  // SET TRANSACTION …, SET SESSION CHARACTERISTICS, RESET ALL
  }
  const std::string name = Lower(set.name());
  if (!ParameterDefault(name)) {
    return Fail(sink, session,
                SqlError(sqlstate::kUndefinedObject,
                         "unrecognized configuration parameter \"" + name + "\"", position));
  }
  if (name == "statement_timeout") {
    std::optional<std::int64_t> ms;
    if (set.kind() == pg_query::VAR_SET_VALUE && set.args_size() == 1) {
      ms = IntegerConstant(set.args(0));
      if (!ms && set.args(0).has_a_const() && set.args(0).a_const().has_sval()) {
        std::int64_t v = 0;
        const std::string& s = set.args(0).a_const().sval().sval();
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec == std::errc() &&
            (r.ptr == s.data() + s.size() || std::string_view(r.ptr) == "ms")) {
          ms = v;
        } else if (r.ec == std::errc() && std::string_view(r.ptr) == "s") {
          ms = v * 1000;
        }
      }
      if (!ms || *ms < 0) {
        return Fail(sink, session,
                    SqlError(sqlstate::kInvalidParameterValue,
                             "invalid value for parameter \"statement_timeout\": give "
                             "milliseconds, or '<n>s'",
                             position));
      }
    }
    // 0 (and DEFAULT, RESET) is PostgreSQL's "no timeout": the frontend's own bound stays.
    session.statement_timeout =
        ms && *ms > 0 ? std::chrono::milliseconds(*ms) : session.default_statement_timeout;
  }
  if (name == "tandem_local_reads") {
    // on: a keyed peek of the local replica is read in place (local_reads.h); off: every read
    // goes over the network, as a remote replica's would.
    std::optional<bool> on;
    if (set.kind() != pg_query::VAR_SET_VALUE) {
      on = true;
    } else if (set.args_size() == 1 && set.args(0).has_a_const()) {
      const auto& c = set.args(0).a_const();
      std::string v = c.has_sval()      ? Lower(c.sval().sval())
                      : c.has_boolval() ? (c.boolval().boolval() ? "on" : "off")
                                        : "";
      if (v == "on" || v == "true") on = true;
      if (v == "off" || v == "false") on = false;
    }
    if (!on) {
      return Fail(sink, session,
                  SqlError(sqlstate::kInvalidParameterValue,
                           "parameter \"tandem_local_reads\" requires a Boolean value (on, off)",
                           position));
    }
    session.local_reads = *on;
  }
  if (name == "client_encoding" && set.kind() == pg_query::VAR_SET_VALUE && set.args_size() == 1 &&
      set.args(0).has_a_const() && set.args(0).a_const().has_sval() &&
      Lower(set.args(0).a_const().sval().sval()) != "utf8" &&
      Lower(set.args(0).a_const().sval().sval()) != "unicode") {
    return Fail(sink, session,
                SqlError(sqlstate::kFeatureNotSupported,
                         "client_encoding " + set.args(0).a_const().sval().sval() +
                             " is not supported: Tandem speaks UTF8",
                         position));
  }
  // Dates and times are read and printed in UTC, ISO and PostgreSQL's interval style only: a
  // SET that would change them is refused, not silently ignored (a SET to those values is fine).
  if ((name == "timezone" || name == "datestyle" || name == "intervalstyle") &&
      set.kind() == pg_query::VAR_SET_VALUE) {
    std::string value;
    for (const auto& a : set.args()) {
      if (a.has_a_const() && a.a_const().has_sval())
        value += Lower(a.a_const().sval().sval()) + ",";
      if (a.has_a_const() && a.a_const().has_ival())
        value += std::to_string(a.a_const().ival().ival()) + ",";
    }
    bool same = false;
    if (name == "timezone") {
      for (const char* utc : {"utc,", "etc/utc,", "gmt,", "etc/gmt,", "z,", "zulu,", "0,", "+00,",
                              "00:00,", "+00:00,", "uct,", "universal,"}) {
        same |= value == utc;
      }
    } else if (name == "datestyle") {
      // The output style must stay ISO (the field order, MDY/DMY/YMD, only reads non-ISO dates).
      same = value.find("iso") != std::string::npos && value.find("german") == std::string::npos &&
             value.find("sql") == std::string::npos && value.find("postgres") == std::string::npos;
    } else {
      same = value == "postgres,";
    }
    if (!same) {
      return Fail(sink, session,
                  SqlError(sqlstate::kFeatureNotSupported,
                           "SET " + name +
                               " is not supported: Tandem reads and prints dates and "
                               "times with TimeZone UTC, DateStyle ISO and IntervalStyle postgres",
                           position));
    }
  }
  return sink.CommandComplete(tag);
}

Status EnsureOneRowObject(LiveCatalog& live) {
  MutexLock ddl(live.ddl_mutex());
  const auto before = live.Snapshot();
  if (before->FindObject(plan::kOneRowObject)) return Status::Ok();
  const std::string sql = std::string("CREATE TABLE ") + plan::kOneRowObject +
                          " (one bigint NOT NULL) WITH (source = 'counter', max = 1)";
  auto parsed = sql::Parse(sql);
  if (!parsed.ok() || parsed->size() != 1) {
    return Status::Internal("the one-row object's statement does not parse");
  }
  const auto& statement = (*parsed)[0];
  auto next = std::make_shared<Catalog>(*before);
  auto outcome = CreateTable(StatementNode(statement).create_stmt(),
                             StatementText{sql, statement.text}, *next);
  if (!outcome.ok()) {
    return Status::Internal("making " + std::string(plan::kOneRowObject) + ": " +
                            outcome.error().ToString());
  }
  if (Status s = live.Save(*next); !s.ok()) return s;
  live.Publish(std::move(next));
  spdlog::info("catalog: made {} (the one-row collection constants are read from)",
               plan::kOneRowObject);
  return Status::Ok();
}

}  // namespace tandem::frontend
