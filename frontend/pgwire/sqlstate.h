// SQLSTATE codes (PostgreSQL's errcodes.txt, Appendix A of its manual) that the wire protocol
// sends itself, and the ones its users answer most: each is the five characters of an
// ErrorResponse's C field. Clients key on them (psycopg2's `e.pgcode`), so pick the one
// PostgreSQL would send for the same failure.
#pragma once

namespace tandem::pgwire::sqlstate {

// Class 08 — connection exception
inline constexpr char kProtocolViolation[] = "08P01";
// Class 0A — feature not supported
inline constexpr char kFeatureNotSupported[] = "0A000";
// Class 22 — data exception
inline constexpr char kCharacterNotInRepertoire[] = "22021";
// Class 23 — integrity constraint violation
inline constexpr char kUniqueViolation[] = "23505";
// Class 25 — invalid transaction state
inline constexpr char kInFailedSqlTransaction[] = "25P02";
// Class 28 — invalid authorization specification
inline constexpr char kInvalidAuthorizationSpecification[] = "28000";
// Class 3D — invalid catalog name (an unknown database)
inline constexpr char kInvalidCatalogName[] = "3D000";
// Class 42 — syntax error or access rule violation
inline constexpr char kSyntaxError[] = "42601";
inline constexpr char kUndefinedColumn[] = "42703";
inline constexpr char kUndefinedTable[] = "42P01";
// Class 53 — insufficient resources
inline constexpr char kOutOfMemory[] = "53200";
inline constexpr char kTooManyConnections[] = "53300";
// Class 54 — program limit exceeded
inline constexpr char kProgramLimitExceeded[] = "54000";
// Class 57 — operator intervention
inline constexpr char kQueryCanceled[] = "57014";
inline constexpr char kAdminShutdown[] = "57P01";
// Class XX — internal error
inline constexpr char kInternalError[] = "XX000";

}  // namespace tandem::pgwire::sqlstate
