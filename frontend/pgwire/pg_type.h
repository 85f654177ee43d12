// PostgreSQL's type OIDs and lengths (pg_type.oid, pg_type.typlen of its catalog,
// src/include/catalog/pg_type.dat), as a RowDescription names a column's type. Clients decode
// text values by these OIDs (psycopg2 turns 20 into int, 16 into bool, 701 into float), so a
// column must be described with the type whose text form its values have.
#pragma once

#include <cstdint>

namespace tandem::pgwire {

struct PgType {
  std::uint32_t oid;
  std::int16_t typlen;  // bytes of the binary form; -1 for a variable length
};

inline constexpr PgType kBool{16, 1};
inline constexpr PgType kBytea{17, -1};
inline constexpr PgType kName{19, 64};
inline constexpr PgType kInt8{20, 8};
inline constexpr PgType kInt2{21, 2};
inline constexpr PgType kInt4{23, 4};
inline constexpr PgType kText{25, -1};
inline constexpr PgType kFloat4{700, 4};
inline constexpr PgType kFloat8{701, 8};
inline constexpr PgType kUnknown{705, -2};
inline constexpr PgType kBpchar{1042, -1};
inline constexpr PgType kVarchar{1043, -1};
inline constexpr PgType kDate{1082, 4};
inline constexpr PgType kTime{1083, 8};
inline constexpr PgType kTimestamp{1114, 8};
inline constexpr PgType kTimestamptz{1184, 8};
inline constexpr PgType kInterval{1186, 16};
inline constexpr PgType kNumeric{1700, -1};
inline constexpr PgType kUuid{2950, 16};

}  // namespace tandem::pgwire
