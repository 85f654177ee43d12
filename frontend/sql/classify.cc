#include "frontend/sql/classify.h"

#include <google/protobuf/descriptor.h>

#include <cctype>
#include <optional>

namespace tandem::sql {
namespace {

using pg_query::Node;

// "MATERIALIZED VIEW" for OBJECT_MATVIEW: an ObjectType as PostgreSQL's commands spell it.
std::string ObjectName(pg_query::ObjectType type) {
  switch (type) {
    case pg_query::OBJECT_MATVIEW:
      return "MATERIALIZED VIEW";
    case pg_query::OBJECT_FDW:
      return "FOREIGN DATA WRAPPER";
    case pg_query::OBJECT_FOREIGN_SERVER:
      return "SERVER";
    case pg_query::OBJECT_LARGEOBJECT:
      return "LARGE OBJECT";
    case pg_query::OBJECT_OPCLASS:
      return "OPERATOR CLASS";
    case pg_query::OBJECT_OPFAMILY:
      return "OPERATOR FAMILY";
    case pg_query::OBJECT_STATISTIC_EXT:
      return "STATISTICS";
    case pg_query::OBJECT_TABCONSTRAINT:
    case pg_query::OBJECT_DOMCONSTRAINT:
      return "CONSTRAINT";
    case pg_query::OBJECT_TSCONFIGURATION:
      return "TEXT SEARCH CONFIGURATION";
    case pg_query::OBJECT_TSDICTIONARY:
      return "TEXT SEARCH DICTIONARY";
    case pg_query::OBJECT_TSPARSER:
      return "TEXT SEARCH PARSER";
    case pg_query::OBJECT_TSTEMPLATE:
      return "TEXT SEARCH TEMPLATE";
    case pg_query::OBJECT_AMOP:
      return "OPERATOR";
    case pg_query::OBJECT_AMPROC:
      return "FUNCTION";
    case pg_query::OBJECT_DEFACL:
      return "DEFAULT PRIVILEGES";
    default:
      break;
  }
  std::string name = pg_query::ObjectType_Name(type);  // "OBJECT_FOREIGN_TABLE"
  if (name.starts_with("OBJECT_")) name.erase(0, 7);
  for (char& c : name) {
    if (c == '_') c = ' ';
  }
  return name.empty() ? "OBJECT" : name;
}

// "alter_domain_stmt" → "ALTER DOMAIN": the node's own name, for a statement not in the table.
std::string NameFromNodeField(const Node& statement) {
  const google::protobuf::OneofDescriptor* oneof = Node::descriptor()->FindOneofByName("node");
  const google::protobuf::FieldDescriptor* field =
      oneof == nullptr ? nullptr
                       : statement.GetReflection()->GetOneofFieldDescriptor(statement, oneof);
  if (field == nullptr) return "this statement";
  std::string name = field->name();
  if (name.ends_with("_stmt")) name.erase(name.size() - 5);
  for (char& c : name) {
    c = c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

std::string TransactionCommandName(const pg_query::TransactionStmt& transaction) {
  switch (transaction.kind()) {
    case pg_query::TRANS_STMT_BEGIN:
      return "BEGIN";
    case pg_query::TRANS_STMT_START:
      return "START TRANSACTION";
    case pg_query::TRANS_STMT_COMMIT:
      return "COMMIT";
    case pg_query::TRANS_STMT_ROLLBACK:
      return "ROLLBACK";
    case pg_query::TRANS_STMT_SAVEPOINT:
      return "SAVEPOINT";
    case pg_query::TRANS_STMT_RELEASE:
      return "RELEASE SAVEPOINT";
    case pg_query::TRANS_STMT_ROLLBACK_TO:
      return "ROLLBACK TO SAVEPOINT";
    case pg_query::TRANS_STMT_PREPARE:
      return "PREPARE TRANSACTION";
    case pg_query::TRANS_STMT_COMMIT_PREPARED:
      return "COMMIT PREPARED";
    case pg_query::TRANS_STMT_ROLLBACK_PREPARED:
      return "ROLLBACK PREPARED";
    default:
      return "a transaction statement";
  }
}

SqlError NotSupported(const std::string& construct, int position) {
  return SqlError(sqlstate::kFeatureNotSupported, construct + " is not supported", position);
}

// A query whose rows would go into a new table (SELECT … INTO) is not a query here.
std::optional<SqlError> CheckQuery(const Node& query, int position) {
  if (query.has_select_stmt() && query.select_stmt().has_into_clause()) {
    return NotSupported("SELECT INTO", position);
  }
  return std::nullopt;
}

SqlResult<StatementKind> ClassifyPostgres(const Node& statement, int position) {
  switch (statement.node_case()) {
    case Node::kCreateStmt:
      return StatementKind::kCreateTable;
    case Node::kViewStmt:
      return StatementKind::kCreateView;
    case Node::kCreateTableAsStmt:
      if (statement.create_table_as_stmt().objtype() == pg_query::OBJECT_MATVIEW) {
        return StatementKind::kCreateMaterializedView;
      }
      break;
    case Node::kIndexStmt:
      return StatementKind::kCreateIndex;
    case Node::kDropStmt:
      switch (statement.drop_stmt().remove_type()) {
        case pg_query::OBJECT_TABLE:
        case pg_query::OBJECT_VIEW:
        case pg_query::OBJECT_MATVIEW:
        case pg_query::OBJECT_INDEX:
          return StatementKind::kDrop;
        default:
          break;
      }
      break;
    case Node::kVariableShowStmt: {
      // PostgreSQL folds an unquoted name to lower case: SHOW TABLES is "tables".
      const std::string& name = statement.variable_show_stmt().name();
      if (name == "tables") return StatementKind::kShowTables;
      if (name == "views") return StatementKind::kShowViews;
      if (name == "indexes") return StatementKind::kShowIndexes;
      return StatementKind::kShowVariable;
    }
    case Node::kExplainStmt:
      return StatementKind::kExplain;
    case Node::kInsertStmt:
      return StatementKind::kInsert;
    case Node::kUpdateStmt:
      return StatementKind::kUpdate;
    case Node::kDeleteStmt:
      return StatementKind::kDelete;
    case Node::kSelectStmt:
      if (std::optional<SqlError> error = CheckQuery(statement, position)) return *std::move(error);
      return StatementKind::kSelect;
    case Node::kTransactionStmt:
      switch (statement.transaction_stmt().kind()) {
        case pg_query::TRANS_STMT_BEGIN:
        case pg_query::TRANS_STMT_START:
          return StatementKind::kBegin;
        case pg_query::TRANS_STMT_COMMIT:
          return StatementKind::kCommit;
        case pg_query::TRANS_STMT_ROLLBACK:
          return StatementKind::kRollback;
        default:
          break;
      }
      break;
    case Node::kVariableSetStmt:
      return StatementKind::kSet;
    case Node::kDeallocateStmt:
      return StatementKind::kDeallocate;
    default:
      break;
  }
  return NotSupported(CommandName(statement), position);
}

}  // namespace

std::string_view StatementKindName(StatementKind kind) {
  switch (kind) {
    case StatementKind::kCreateTable:
      return "CREATE TABLE";
    case StatementKind::kCreateView:
      return "CREATE VIEW";
    case StatementKind::kCreateMaterializedView:
      return "CREATE MATERIALIZED VIEW";
    case StatementKind::kCreateIndex:
      return "CREATE INDEX";
    case StatementKind::kDrop:
      return "DROP";
    case StatementKind::kShowTables:
      return "SHOW TABLES";
    case StatementKind::kShowViews:
      return "SHOW VIEWS";
    case StatementKind::kShowMaterializedViews:
      return "SHOW MATERIALIZED VIEWS";
    case StatementKind::kShowIndexes:
      return "SHOW INDEXES";
    case StatementKind::kShowColumns:
      return "SHOW COLUMNS";
    case StatementKind::kShowVariable:
      return "SHOW";
    case StatementKind::kExplain:
      return "EXPLAIN";
    case StatementKind::kInsert:
      return "INSERT";
    case StatementKind::kUpdate:
      return "UPDATE";
    case StatementKind::kDelete:
      return "DELETE";
    case StatementKind::kSelect:
      return "SELECT";
    case StatementKind::kSubscribe:
      return "SUBSCRIBE";
    case StatementKind::kBegin:
      return "BEGIN";
    case StatementKind::kCommit:
      return "COMMIT";
    case StatementKind::kRollback:
      return "ROLLBACK";
    case StatementKind::kSet:
      return "SET";
    case StatementKind::kDeallocate:
      return "DEALLOCATE";
  }
  return "?";
}

SqlResult<StatementKind> Classify(const ParsedStatement& statement) {
  const int position = statement.position;
  if (const auto* postgres = std::get_if<PostgresStatement>(&statement.form)) {
    return ClassifyPostgres(postgres->stmt, position);
  }
  if (const auto* subscribe = std::get_if<SubscribeStatement>(&statement.form)) {
    if (std::optional<SqlError> error = CheckQuery(subscribe->target, position)) {
      return *std::move(error);
    }
    return StatementKind::kSubscribe;
  }
  if (const auto* select = std::get_if<SelectAsOfStatement>(&statement.form)) {
    if (std::optional<SqlError> error = CheckQuery(select->select, position)) {
      return *std::move(error);
    }
    return StatementKind::kSelect;
  }
  if (const auto* explain = std::get_if<ExplainAsOfStatement>(&statement.form)) {
    if (std::optional<SqlError> error =
            CheckQuery(explain->explain.explain_stmt().query(), position)) {
      return *std::move(error);
    }
    return StatementKind::kExplain;
  }
  if (std::holds_alternative<ShowMaterializedViewsStatement>(statement.form)) {
    return StatementKind::kShowMaterializedViews;
  }
  return StatementKind::kShowColumns;
}

std::string CommandName(const Node& statement) {
  switch (statement.node_case()) {
    case Node::kInsertStmt:
      return "INSERT";
    case Node::kDeleteStmt:
      return "DELETE";
    case Node::kUpdateStmt:
      return "UPDATE";
    case Node::kMergeStmt:
      return "MERGE";
    case Node::kSelectStmt:
      return statement.select_stmt().has_into_clause() ? "SELECT INTO" : "SELECT";
    case Node::kAlterTableStmt:
      return "ALTER " + ObjectName(statement.alter_table_stmt().objtype());
    case Node::kAlterDomainStmt:
      return "ALTER DOMAIN";
    case Node::kGrantStmt:
      return statement.grant_stmt().is_grant() ? "GRANT" : "REVOKE";
    case Node::kGrantRoleStmt:
      return statement.grant_role_stmt().is_grant() ? "GRANT" : "REVOKE";
    case Node::kAlterDefaultPrivilegesStmt:
      return "ALTER DEFAULT PRIVILEGES";
    case Node::kClosePortalStmt:
      return "CLOSE CURSOR";
    case Node::kClusterStmt:
      return "CLUSTER";
    case Node::kCopyStmt:
      return "COPY";
    case Node::kCreateStmt:
      return "CREATE TABLE";
    case Node::kDefineStmt:
      return "CREATE " + ObjectName(statement.define_stmt().kind());
    case Node::kDropStmt:
      return "DROP " + ObjectName(statement.drop_stmt().remove_type());
    case Node::kTruncateStmt:
      return "TRUNCATE TABLE";
    case Node::kCommentStmt:
      return "COMMENT";
    case Node::kFetchStmt:
      return statement.fetch_stmt().ismove() ? "MOVE" : "FETCH";
    case Node::kIndexStmt:
      return "CREATE INDEX";
    case Node::kCreateFunctionStmt:
      return statement.create_function_stmt().is_procedure() ? "CREATE PROCEDURE"
                                                             : "CREATE FUNCTION";
    case Node::kAlterFunctionStmt:
      return "ALTER " + ObjectName(statement.alter_function_stmt().objtype());
    case Node::kDoStmt:
      return "DO";
    case Node::kRenameStmt: {
      const pg_query::RenameStmt& rename = statement.rename_stmt();
      const pg_query::ObjectType type = rename.rename_type();
      const bool part = type == pg_query::OBJECT_COLUMN || type == pg_query::OBJECT_ATTRIBUTE ||
                        type == pg_query::OBJECT_TABCONSTRAINT;
      return "ALTER " + ObjectName(part ? rename.relation_type() : type);
    }
    case Node::kRuleStmt:
      return "CREATE RULE";
    case Node::kNotifyStmt:
      return "NOTIFY";
    case Node::kListenStmt:
      return "LISTEN";
    case Node::kUnlistenStmt:
      return "UNLISTEN";
    case Node::kTransactionStmt:
      return TransactionCommandName(statement.transaction_stmt());
    case Node::kViewStmt:
      return "CREATE VIEW";
    case Node::kLoadStmt:
      return "LOAD";
    case Node::kCreateDomainStmt:
      return "CREATE DOMAIN";
    case Node::kCreatedbStmt:
      return "CREATE DATABASE";
    case Node::kDropdbStmt:
      return "DROP DATABASE";
    case Node::kVacuumStmt:
      return statement.vacuum_stmt().is_vacuumcmd() ? "VACUUM" : "ANALYZE";
    case Node::kExplainStmt:
      return "EXPLAIN";
    case Node::kCreateTableAsStmt: {
      const pg_query::CreateTableAsStmt& create = statement.create_table_as_stmt();
      if (create.is_select_into()) return "SELECT INTO";
      return create.objtype() == pg_query::OBJECT_MATVIEW ? "CREATE MATERIALIZED VIEW"
                                                          : "CREATE TABLE AS";
    }
    case Node::kCreateSeqStmt:
      return "CREATE SEQUENCE";
    case Node::kAlterSeqStmt:
      return "ALTER SEQUENCE";
    case Node::kVariableSetStmt: {
      const pg_query::VariableSetKind kind = statement.variable_set_stmt().kind();
      return kind == pg_query::VAR_RESET || kind == pg_query::VAR_RESET_ALL ? "RESET" : "SET";
    }
    case Node::kVariableShowStmt:
      return "SHOW";
    case Node::kDiscardStmt:
      return "DISCARD";
    case Node::kCreateTrigStmt:
      return "CREATE TRIGGER";
    case Node::kCreatePlangStmt:
      return "CREATE LANGUAGE";
    case Node::kCreateRoleStmt:
      return "CREATE ROLE";
    case Node::kAlterRoleStmt:
    case Node::kAlterRoleSetStmt:
      return "ALTER ROLE";
    case Node::kDropRoleStmt:
      return "DROP ROLE";
    case Node::kLockStmt:
      return "LOCK TABLE";
    case Node::kConstraintsSetStmt:
      return "SET CONSTRAINTS";
    case Node::kReindexStmt:
      return "REINDEX";
    case Node::kCheckPointStmt:
      return "CHECKPOINT";
    case Node::kCreateSchemaStmt:
      return "CREATE SCHEMA";
    case Node::kAlterDatabaseStmt:
    case Node::kAlterDatabaseRefreshCollStmt:
    case Node::kAlterDatabaseSetStmt:
      return "ALTER DATABASE";
    case Node::kCreateConversionStmt:
      return "CREATE CONVERSION";
    case Node::kCreateCastStmt:
      return "CREATE CAST";
    case Node::kCreateOpClassStmt:
      return "CREATE OPERATOR CLASS";
    case Node::kCreateOpFamilyStmt:
      return "CREATE OPERATOR FAMILY";
    case Node::kAlterOpFamilyStmt:
      return "ALTER OPERATOR FAMILY";
    case Node::kPrepareStmt:
      return "PREPARE";
    case Node::kExecuteStmt:
      return "EXECUTE";
    case Node::kDeallocateStmt:
      return "DEALLOCATE";
    case Node::kDeclareCursorStmt:
      return "DECLARE CURSOR";
    case Node::kCreateTableSpaceStmt:
      return "CREATE TABLESPACE";
    case Node::kDropTableSpaceStmt:
      return "DROP TABLESPACE";
    case Node::kAlterObjectDependsStmt:
      return "ALTER " + ObjectName(statement.alter_object_depends_stmt().object_type());
    case Node::kAlterObjectSchemaStmt:
      return "ALTER " + ObjectName(statement.alter_object_schema_stmt().object_type());
    case Node::kAlterOwnerStmt:
      return "ALTER " + ObjectName(statement.alter_owner_stmt().object_type());
    case Node::kAlterOperatorStmt:
      return "ALTER OPERATOR";
    case Node::kAlterTypeStmt:
    case Node::kAlterEnumStmt:
      return "ALTER TYPE";
    case Node::kDropOwnedStmt:
      return "DROP OWNED";
    case Node::kReassignOwnedStmt:
      return "REASSIGN OWNED";
    case Node::kCompositeTypeStmt:
    case Node::kCreateEnumStmt:
    case Node::kCreateRangeStmt:
      return "CREATE TYPE";
    case Node::kAlterTsdictionaryStmt:
      return "ALTER TEXT SEARCH DICTIONARY";
    case Node::kAlterTsconfigurationStmt:
      return "ALTER TEXT SEARCH CONFIGURATION";
    case Node::kCreateFdwStmt:
      return "CREATE FOREIGN DATA WRAPPER";
    case Node::kAlterFdwStmt:
      return "ALTER FOREIGN DATA WRAPPER";
    case Node::kCreateForeignServerStmt:
      return "CREATE SERVER";
    case Node::kAlterForeignServerStmt:
      return "ALTER SERVER";
    case Node::kCreateUserMappingStmt:
      return "CREATE USER MAPPING";
    case Node::kAlterUserMappingStmt:
      return "ALTER USER MAPPING";
    case Node::kDropUserMappingStmt:
      return "DROP USER MAPPING";
    case Node::kAlterTableSpaceOptionsStmt:
      return "ALTER TABLESPACE";
    case Node::kAlterTableMoveAllStmt:
      return "ALTER " + ObjectName(statement.alter_table_move_all_stmt().objtype());
    case Node::kSecLabelStmt:
      return "SECURITY LABEL";
    case Node::kCreateForeignTableStmt:
      return "CREATE FOREIGN TABLE";
    case Node::kImportForeignSchemaStmt:
      return "IMPORT FOREIGN SCHEMA";
    case Node::kCreateExtensionStmt:
      return "CREATE EXTENSION";
    case Node::kAlterExtensionStmt:
    case Node::kAlterExtensionContentsStmt:
      return "ALTER EXTENSION";
    case Node::kCreateEventTrigStmt:
      return "CREATE EVENT TRIGGER";
    case Node::kAlterEventTrigStmt:
      return "ALTER EVENT TRIGGER";
    case Node::kRefreshMatViewStmt:
      return "REFRESH MATERIALIZED VIEW";
    case Node::kReplicaIdentityStmt:
      return "ALTER TABLE";
    case Node::kAlterSystemStmt:
      return "ALTER SYSTEM";
    case Node::kCreatePolicyStmt:
      return "CREATE POLICY";
    case Node::kAlterPolicyStmt:
      return "ALTER POLICY";
    case Node::kCreateTransformStmt:
      return "CREATE TRANSFORM";
    case Node::kCreateAmStmt:
      return "CREATE ACCESS METHOD";
    case Node::kCreatePublicationStmt:
      return "CREATE PUBLICATION";
    case Node::kAlterPublicationStmt:
      return "ALTER PUBLICATION";
    case Node::kCreateSubscriptionStmt:
      return "CREATE SUBSCRIPTION";
    case Node::kAlterSubscriptionStmt:
      return "ALTER SUBSCRIPTION";
    case Node::kDropSubscriptionStmt:
      return "DROP SUBSCRIPTION";
    case Node::kCreateStatsStmt:
      return "CREATE STATISTICS";
    case Node::kAlterStatsStmt:
      return "ALTER STATISTICS";
    case Node::kAlterCollationStmt:
      return "ALTER COLLATION";
    case Node::kCallStmt:
      return "CALL";
    default:
      return NameFromNodeField(statement);
  }
}

}  // namespace tandem::sql
