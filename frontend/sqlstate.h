// SQLSTATE codes (PostgreSQL's errcodes.txt, Appendix A of its manual; the comment is its
// ERRCODE_ name) that the frontend sends: the five characters of an ErrorResponse's C field.
// Clients key on them (psycopg2's `e.pgcode`), so pick the one PostgreSQL would send for the same
// failure. The one table for the whole frontend: the wire protocol (pgwire/) and the SQL layer
// (sql/) both name their codes from here, and neither depends on the other — this header depends
// on nothing.
#pragma once

#include <string_view>

namespace tandem::sqlstate {

// Class 08 — connection exception
inline constexpr char kConnectionFailure[] = "08006";  // CONNECTION_FAILURE
inline constexpr char kProtocolViolation[] = "08P01";  // PROTOCOL_VIOLATION
// A write whose replicas went away before answering: applied at most once, outcome unknown.
inline constexpr char kTransactionResolutionUnknown[] = "08007";
// Class 00 — successful completion (a NOTICE's code)
inline constexpr char kSuccessfulCompletion[] = "00000";  // SUCCESSFUL_COMPLETION
inline constexpr char kWarning[] = "01000";               // WARNING
// Class 0A — feature not supported
inline constexpr char kFeatureNotSupported[] = "0A000";  // FEATURE_NOT_SUPPORTED
// Class 22 — data exception
inline constexpr char kDataException[] = "22000";   // DATA_EXCEPTION: an error in a read's data
inline constexpr char kDivisionByZero[] = "22012";  // DIVISION_BY_ZERO
inline constexpr char kStringDataRightTruncation[] = "22001";  // a value too long for varchar(n)
inline constexpr char kDatetimeFieldOverflow[] = "22008";      // DATETIME_FIELD_OVERFLOW
inline constexpr char kInvalidDatetimeFormat[] = "22007";      // INVALID_DATETIME_FORMAT
inline constexpr char kNumericValueOutOfRange[] = "22003";     // NUMERIC_VALUE_OUT_OF_RANGE
inline constexpr char kCharacterNotInRepertoire[] = "22021";   // invalid UTF-8, a NUL
inline constexpr char kInvalidParameterValue[] = "22023";      // INVALID_PARAMETER_VALUE
inline constexpr char kInvalidEscapeSequence[] = "22025";      // INVALID_ESCAPE_SEQUENCE
inline constexpr char kInvalidTextRepresentation[] = "22P02";  // INVALID_TEXT_REPRESENTATION
inline constexpr char kNonstandardUseOfEscapeCharacter[] = "22P06";
inline constexpr char kInvalidBinaryRepresentation[] = "22P03";  // INVALID_BINARY_REPRESENTATION
// Class 23 — integrity constraint violation
inline constexpr char kNotNullViolation[] = "23502";  // NOT_NULL_VIOLATION
inline constexpr char kUniqueViolation[] = "23505";   // UNIQUE_VIOLATION
// Class 25 — invalid transaction state
inline constexpr char kActiveSqlTransaction[] = "25001";    // ACTIVE_SQL_TRANSACTION (a WARNING)
inline constexpr char kNoActiveSqlTransaction[] = "25P01";  // NO_ACTIVE_SQL_TRANSACTION (WARNING)
inline constexpr char kInFailedSqlTransaction[] = "25P02";  // IN_FAILED_SQL_TRANSACTION
// Class 2B — dependent privilege descriptors still exist (DROP without CASCADE)
inline constexpr char kDependentObjectsStillExist[] = "2BP01";  // DEPENDENT_OBJECTS_STILL_EXIST
// Class 26 — invalid SQL statement name (an unknown prepared statement)
inline constexpr char kInvalidSqlStatementName[] = "26000";  // INVALID_SQL_STATEMENT_NAME
// Class 28 — invalid authorization specification
inline constexpr char kInvalidAuthorizationSpecification[] = "28000";
// Class 34 — invalid cursor name (an unknown portal)
inline constexpr char kInvalidCursorName[] = "34000";  // INVALID_CURSOR_NAME
// Class 3D — invalid catalog name (an unknown database)
inline constexpr char kInvalidCatalogName[] = "3D000";  // UNDEFINED_DATABASE
// Class 3F — invalid schema name (a schema other than public)
inline constexpr char kInvalidSchemaName[] = "3F000";  // UNDEFINED_SCHEMA
// Class 42 — syntax error or access rule violation
inline constexpr char kSyntaxError[] = "42601";                 // SYNTAX_ERROR
inline constexpr char kUndefinedColumn[] = "42703";             // UNDEFINED_COLUMN
inline constexpr char kAmbiguousColumn[] = "42702";             // AMBIGUOUS_COLUMN
inline constexpr char kDuplicateAlias[] = "42712";              // DUPLICATE_ALIAS
inline constexpr char kAmbiguousFunction[] = "42725";           // AMBIGUOUS_FUNCTION (an operator)
inline constexpr char kGroupingError[] = "42803";               // GROUPING_ERROR
inline constexpr char kDatatypeMismatch[] = "42804";            // DATATYPE_MISMATCH
inline constexpr char kCannotCoerce[] = "42846";                // CANNOT_COERCE (a cast)
inline constexpr char kUndefinedFunction[] = "42883";           // UNDEFINED_FUNCTION (an operator)
inline constexpr char kInvalidColumnReference[] = "42P10";      // INVALID_COLUMN_REFERENCE
inline constexpr char kNameTooLong[] = "42622";                 // NAME_TOO_LONG
inline constexpr char kUndefinedParameter[] = "42P02";          // UNDEFINED_PARAMETER ($n)
inline constexpr char kDuplicatePreparedStatement[] = "42P05";  // DUPLICATE_PSTATEMENT
inline constexpr char kDuplicateCursor[] = "42P03";             // DUPLICATE_CURSOR (a portal)
inline constexpr char kIndeterminateDatatype[] = "42P18";       // a parameter no context types
inline constexpr char kDuplicateColumn[] = "42701";             // DUPLICATE_COLUMN
inline constexpr char kUndefinedObject[] = "42704";         // UNDEFINED_OBJECT (a type, an index)
inline constexpr char kWrongObjectType[] = "42809";         // WRONG_OBJECT_TYPE
inline constexpr char kDuplicateObject[] = "42710";         // DUPLICATE_OBJECT
inline constexpr char kReservedName[] = "42939";            // RESERVED_NAME
inline constexpr char kUndefinedTable[] = "42P01";          // UNDEFINED_TABLE
inline constexpr char kDuplicateTable[] = "42P07";          // DUPLICATE_TABLE (any relation's name)
inline constexpr char kInvalidTableDefinition[] = "42P16";  // INVALID_TABLE_DEFINITION
inline constexpr char kWindowingError[] = "42P20";          // WINDOWING_ERROR
// Class 53 — insufficient resources
inline constexpr char kInsufficientResources[] = "53000";  // INSUFFICIENT_RESOURCES
inline constexpr char kOutOfMemory[] = "53200";            // OUT_OF_MEMORY
inline constexpr char kTooManyConnections[] = "53300";     // TOO_MANY_CONNECTIONS
// Class 54 — program limit exceeded
inline constexpr char kProgramLimitExceeded[] = "54000";  // PROGRAM_LIMIT_EXCEEDED
inline constexpr char kStatementTooComplex[] = "54001";   // STATEMENT_TOO_COMPLEX
inline constexpr char kTooManyColumns[] = "54011";        // TOO_MANY_COLUMNS
// Class 57 — operator intervention
inline constexpr char kQueryCanceled[] = "57014";     // QUERY_CANCELED
inline constexpr char kAdminShutdown[] = "57P01";     // ADMIN_SHUTDOWN
inline constexpr char kCannotConnectNow[] = "57P03";  // CANNOT_CONNECT_NOW: no replica answers
// Class 55 — object not in prerequisite state
inline constexpr char kObjectNotInPrerequisiteState[] = "55000";  // AS OF a compacted time
// Class 58 — system error
inline constexpr char kIoError[] = "58030";  // IO_ERROR: the data dir's disk
// Class XX — internal error
inline constexpr char kInternalError[] = "XX000";  // INTERNAL_ERROR

// The SQLSTATE PostgreSQL sends with a data error worded as it words it (the runtime's and
// base/'s messages are PostgreSQL's: "integer out of range", "numeric field overflow", "invalid
// input syntax for type date: …", "value too long for type character varying(3)"); a message
// none of these fits is 22000.
inline const char* DataErrorState(std::string_view message) {
  auto has = [&](std::string_view s) { return message.find(s) != std::string_view::npos; };
  if (has("division by zero")) return kDivisionByZero;
  if (has("value too long")) return kStringDataRightTruncation;
  if (has("date/time field value out of range") || has("date out of range") ||
      has("timestamp out of range") || has("interval out of range") || has("time out of range")) {
    return kDatetimeFieldOverflow;
  }
  if (has("invalid input syntax for type date") || has("invalid input syntax for type time") ||
      has("invalid input syntax for type interval")) {
    return kInvalidDatetimeFormat;
  }
  if (has("invalid input syntax")) return kInvalidTextRepresentation;
  if (has("overflow") || has("out of range") || has("cannot convert")) {
    return kNumericValueOutOfRange;
  }
  if (has("not recognized")) return kInvalidParameterValue;
  if (has("not supported")) return kFeatureNotSupported;
  return kDataException;
}

}  // namespace tandem::sqlstate
