// PostgreSQL's binary format (DESIGN §17) for every type of §16: the bytes of a column value as
// its type's send function (typsend) gives them, and a Bind parameter's bytes read as its type's
// receive function (typreceive) reads them — into the text the type's output function prints, so
// the SQL layer takes a binary parameter exactly as it takes the same value in text.
//
// The layouts are PostgreSQL 15's (src/backend/utils/adt: boolsend, int4send, float8send,
// numeric_send, textsend, byteasend, date_send, time_send, timestamp_send, interval_send,
// uuid_send and their receive functions). Integers are big-endian two's complement.
//   bool          1 byte, 0 or 1 (received: any byte but 0 is true)
//   int2/4/8      2/4/8 bytes
//   float4/8      the IEEE 754 binary32/binary64 bits (every NaN sent as the one quiet NaN,
//                 7fc00000 / 7ff8000000000000, as float4in/float8in make it)
//   numeric       int16 ndigits, int16 weight, uint16 sign (0x0000 positive, 0x4000 negative,
//                 0xC000 NaN, 0xD000 Infinity, 0xF000 -Infinity), uint16 dscale, then ndigits
//                 int16 base-10000 digits, most significant first: the value is
//                 Σ digit[i] × 10000^(weight - i), printed with dscale digits after the point.
//                 Sent as PostgreSQL stores it: no leading or trailing zero digit, zero as
//                 ndigits 0 and weight 0, a positive sign; dscale is the numeric's scale (1.50
//                 has dscale 2).
//   text, varchar, bpchar, name, unknown   the UTF-8 bytes (a char(n)'s with its padding)
//   bytea         the bytes
//   date          int32 days since 2000-01-01 (INT32_MAX infinity, INT32_MIN -infinity)
//   time          int64 microseconds since midnight
//   timestamp, timestamptz   int64 microseconds since 2000-01-01 00:00:00 (for timestamptz in
//                 UTC; INT64_MAX infinity, INT64_MIN -infinity)
//   interval      int64 microseconds, int32 days, int32 months
//   uuid          the 16 bytes
//
// Receiving follows PostgreSQL's receive functions and its Bind (exec_bind_message), errors and
// all: fewer bytes than the layout reads is 08P01 "insufficient data left in message" (a bool's
// missing byte "no data left in message", as PostgreSQL's pq_getmsg* word them; the session goes
// on), bytes left after it is 22P03 "incorrect
// binary data format in bind parameter N", a numeric's bad sign, dscale (above 0x3FFF) or digit
// (outside 0..9999) is 22P03 "invalid sign in external "numeric" value" (…scale…, …digit…), a
// date, time or timestamp outside its type's range 22008 "date out of range" (…), text that is not
// valid UTF-8 or holds NUL 22021, a name of 64 bytes or more 42622, an OID not listed above 0A000.
// A numeric's digits beyond its dscale are dropped (PostgreSQL's trunc_var), and a numeric of any
// size PostgreSQL takes is printed: the SQL layer then refuses what Tandem's numeric cannot hold
// (more than 38 digits) as it refuses the same text. So are the infinities and NaN, which
// PostgreSQL receives: they become "infinity", "-infinity", "NaN", "Infinity", "-Infinity" (a
// float's are values; a numeric's, date's or timestamp's are refused by the SQL layer as their
// text is). One range is narrower than PostgreSQL's: a timestamp ends where int64 microseconds
// from 1970 do (294247-01-10 04:00:54.775807, base/datetime.h), so a later one PostgreSQL would
// take is "timestamp out of range".
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/pgwire/messages.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"

namespace tandem::frontend {

// A column value in PostgreSQL's binary format (its type's typsend): `oid` is the column's
// RowDescription type (pgwire PgType oid, as DescribeColumn gives it); nullopt for NULL.
// REQUIRES: the datum is a value of that type (DescribeColumn's typing of a replica's answer:
// int2 and int4 values within their range, a float4 column's float64 datums float values). A
// datum whose kind the OID does not describe is sent as its text form's bytes (PostgresText) —
// which is what a text column's binary form is.
pgwire::Value PostgresBinary(const ipc::pb::Datum& datum, std::uint32_t oid);

// A Bind parameter sent in binary format as a value of type `oid` → the same value in
// PostgreSQL's text form (what the type's output function prints: t/f, 1.50, 2026-12-06,
// \x0a0b, …), for the SQL layer to read as it reads a text parameter. Errors as the header's
// comment says, `parameter_number` (1-based) naming the parameter as PostgreSQL does.
sql::SqlResult<std::string> BinaryParameterText(std::string_view bytes, std::uint32_t oid,
                                                int parameter_number);

}  // namespace tandem::frontend
