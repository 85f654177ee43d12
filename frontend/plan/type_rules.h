// PostgreSQL 15's type rules over the types Tandem has (DESIGN §16), for the binder: which casts
// exist and in which context (pg_cast's castcontext, and the I/O conversions to and from the
// string types), the type categories and preferred types, select_common_type (CASE, COALESCE,
// GREATEST/LEAST, NULLIF, IN, VALUES and set operations: "UNION, CASE, and related constructs"),
// and each operator PostgreSQL picks for a pair of operand types (operator_table.h, asked of
// PostgreSQL itself). The runtime never converts implicitly (ipc/plan_typing.h): the binder reads
// these rules and inserts the Casts.
//
// PgTypeId is PostgreSQL's view of a type: the three string types are one ScalarType (STRING) in
// Tandem, told apart by their modifiers (TypeMods), but PostgreSQL resolves them apart
// (character compares without its trailing blanks).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "frontend/catalog/objects.h"

namespace tandem::frontend::plan {

namespace pb = ::tandem::protocol;

enum class PgTypeId : std::uint8_t {
  kNone,
  kUnknown,  // a string constant or NULL whose type the context decides
  kBool,
  kInt2,
  kInt4,
  kInt8,
  kFloat4,
  kFloat8,
  kNumeric,
  kText,
  kVarchar,
  kBpchar,
  kBytea,
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kInterval,
  kUuid,
  kAnyNonArray,  // a polymorphic operand (text || anynonarray): converted to text
  kJsonb,        // an operator PostgreSQL would pick that Tandem does not have
};

// SCALAR_TYPE_UNSPECIFIED is kUnknown; STRING is text, varchar (length, not blank padded) or
// bpchar (blank padded).
PgTypeId IdOf(pb::ScalarType type, const TypeMods& mods);
// The Tandem type of `id` (kUnknown and the polymorphic ones: SCALAR_TYPE_UNSPECIFIED), and the
// modifiers that make a string type the one `id` names (bpchar: blank_padded, no length).
pb::ScalarType ScalarOf(PgTypeId id);
TypeMods ModsOf(PgTypeId id);
// format_type's name: "integer", "character varying", "unknown".
std::string_view PgTypeName(PgTypeId id);

// PostgreSQL's type categories (pg_type.typcategory) and preferred types.
char Category(PgTypeId id);
bool Preferred(PgTypeId id);
bool IsIntegerType(PgTypeId id);
bool IsNumericFamily(PgTypeId id);  // int2 … float8, numeric
bool IsStringType(PgTypeId id);     // text, varchar, bpchar

enum class CastContext { kImplicit, kAssignment, kExplicit };
// Whether PostgreSQL converts `from` to `to` in `context` (an unknown constant converts to any
// type in any context).
bool CanCast(PgTypeId from, PgTypeId to, CastContext context);

// select_common_type: the type every input converts to implicitly (unknowns ignored; only
// unknowns: text). On failure, nothing, and *a and *b are the two types that cannot be matched
// (or *a == *b == the common type and *bad the input that does not convert to it).
struct CommonTypeChoice {
  std::optional<PgTypeId> type;
  PgTypeId a = PgTypeId::kNone, b = PgTypeId::kNone;  // the pair that cannot be matched
  std::size_t bad = 0;  // the input that cannot be converted to *type (when a == kNone)
  bool convert_failed = false;
};
CommonTypeChoice SelectCommonType(const std::vector<PgTypeId>& inputs);

// The operator PostgreSQL resolves `left op right` to: its declared operand types and result.
// `op` is one of + - * / % = <> != < <= > >= ||.
struct OperatorChoice {
  PgTypeId left = PgTypeId::kNone, right = PgTypeId::kNone, result = PgTypeId::kNone;
};
enum class OperatorLookup { kFound, kNotUnique, kMissing };
OperatorLookup FindOperator(std::string_view op, PgTypeId left, PgTypeId right,
                            OperatorChoice* out);

}  // namespace tandem::frontend::plan
