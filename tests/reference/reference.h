// A naive reference evaluator for dataflows and peeks (workers/README.md, "Operators" and
// "Peeks"), written independently of the runtime: the oracle that randomized end-to-end tests
// compare the real tandem-worker against.
//
// Nothing here is incremental. The contents of a collection at time t are recomputed from
// scratch on every call: a source at t is the sum of the diffs of its updates with time <= t (an
// upsert source: per key the last record with time <= t, if it is an upsert; AddRecord), and
// every operator is applied to the whole consolidated input. Each collection has an ok side (a
// multiset of rows) and an error side (a multiset of error messages); errors flow downstream
// unchanged and operators add their own.
//
// Scalar semantics (the README names them, this file fixes the details; see reference.cc):
//   * null in, null out for NEGATE, arithmetic and comparisons; comparisons use OrderDatums
//     (datum_order.h), but numerics and intervals compare by value (1.5 = 1.50).
//   * NOT/AND/OR are three-valued (SQL): false AND x = false, true OR x = true, even when x is
//     null or an error; otherwise an error operand makes the result an error, then null wins.
//   * IS_NULL / IS_NOT_NULL never return null.
//   * IF: the condition is evaluated first; true picks `then`, false or null picks `els`; only
//     the chosen branch is evaluated.
//   * int64 ADD/SUB/MUL/NEGATE/DIV overflow is an error ("integer overflow"); DIV and MOD by zero
//     are errors ("division by zero") for int64 and float64 alike; INT64_MIN % -1 is 0.
//   * float64 arithmetic is IEEE (MOD is fmod).
//   * The types of DESIGN §16 (reference_values.h, written from PostgreSQL 15's documentation, not
//     from the runtime): expressions are typed from the input's columns (Types; untyped, a datum's
//     kind is its type) by ipc/plan_typing.h's rules. int2/int4 results beyond their width are
//     "smallint out of range" / "integer out of range"; float4 arithmetic is float arithmetic;
//     numerics are exact rationals rounded to PostgreSQL's result scale (select_div_scale for /),
//     half away from zero, 38 digits at most ("value overflows numeric format"); dates,
//     timestamps and intervals follow PostgreSQL's operators (months, then days, then
//     microseconds); EQ..GE compare numerics and intervals by value. Cast and CallFunc as
//     ipc/func_typing.h lists them (COALESCE evaluates its arguments up to the first non-null;
//     every other function evaluates all, the first error wins, then null gives null).
//   * Mfp: every map expression is evaluated, in order (an error stops the row as an error); then
//     the predicates in order: the first that is false or null drops the row, an error before
//     that makes the row an error; then the projection.
//   * Temporal filters (predicates that read the time itself, tandem_now()): by their definition
//     at each time, reference/temporal.h.
//
// Operator semantics (the issue-14 contract, /work/notes/issue14-contract.md; counts are exact):
//   * Keys compare by value (OrderKeys, datum_order.h: 1.5 = 1.50, '1 mon' = '30 days'): join
//     keys, group keys, Distinct's and Threshold's whole rows, TopK's groups, a peek's keys and
//     upsert keys. Where one output row stands for a key, it is printed with the key's smallest
//     spelling (OrderRows) present: whose count, summed over the rows of that exact spelling, is
//     > 0 (a key whose total count is > 0 has one).
//   * Reduce: rows group by their group-key columns' value; a group exists when its total count
//     is > 0; one output row per group, its key the smallest spelling present; the first
//     aggregate that fails makes the group one error instead. Nulls are ignored by every
//     aggregate but COUNT. COUNT: the group's total count. SUM: exact for int64 (overflow is
//     judged on the final value), row by row for float64; null without a non-null value.
//     MIN/MAX: the extreme value whose total count is > 0, else null. COUNT_NON_NULL: the summed
//     counts of the non-null values (int64; "integer overflow in COUNT" beyond). COUNT_DISTINCT:
//     the number of distinct non-null values (by value: KeyLess) whose total count is > 0. AVG:
//     null when the non-null values' total count is <= 0; int64: (double)(exact sum of value x
//     count) / (double)(total count), "integer overflow in AVG" if the sum leaves 128 bits;
//     float64: for each distinct value (by OrderDatums, ascending; -0.0 and 0.0 are one value) with
//     a nonzero total count, sum += value * (double)count, starting from +0.0, then sum /
//     (double)(total count). ANY/ALL over the bool values with total count > 0: ANY = some true,
//     ALL = none false; null when there is no such value. SUM of int2/int4 is int64 as SUM of
//     int64; SUM of numeric is exact at the largest scale of its values; SUM of interval adds
//     months, days and microseconds apart (judged on the final value: "interval out of range"); SUM
//     of float4 is the float64 sum rounded to float4. AVG of numeric is the exact sum divided by
//     the count at select_div_scale (PostgreSQL's numeric_avg); AVG of interval is the sum divided
//     by the count as a float8 (interval_div); AVG of every other number is float64. MIN/MAX follow
//     the datum order (1.5 < 1.50, '30 days' < '1 mon').
//   * Join: left row l (count cl) and right row r (count cr) whose key columns are pairwise
//     equal by value (OrderKeyDatums) and non-null give l ++ r with count cl * cr (each side
//     keeps its own spelling). LEFT_OUTER adds, for every left row that matches no right row (a
//     null in its key, or no right row with a nonzero count at its key value), l ++ nulls with
//     count cl. Errors: both inputs' error sets summed.
//   * TopK: per group (group_key columns by value; none: one group) the rows with count > 0,
//     ordered like a peek's finishing (each order_by column, nulls first unless nulls_last
//     wherever desc puts the rest, then the whole row ascending), laid out with multiplicity;
//     each row keeps the number of its positions inside [offset, offset + limit) (no limit: to
//     the end).
//   * Negate: every count negated. Distinct and Threshold group whole rows by value and sum
//     their counts: where the sum is > 0, Distinct gives the group's smallest spelling present
//     with count 1, Threshold with the sum. All three keep errors as they are (EXCEPT ALL =
//     Threshold(Union(A, Negate(B)))).
// Every operator passes its inputs' errors downstream unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/row.h"
#include "base/status.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "reference/datum_order.h"

namespace tandem::reference {

namespace pb = ::tandem::protocol;

// A multiplicity: an exact sum of int64 diffs (128 bits is exact for every test's data). What
// does not fit int64 where the runtime must give an int64 (COUNT, a peek's counts) is an error.
__extension__ typedef __int128 Count;
std::string CountToString(Count count);

// Row -> multiplicity; zero counts are never stored.
using Multiset = std::map<Row, Count, RowLess>;
// Error message -> multiplicity; zero counts are never stored.
using ErrorSet = std::map<std::string, Count>;

struct Update {
  Row row;
  Time time = 0;
  std::int64_t diff = 0;
};

// A record of an upsert source (SourceImport.upsert_key, DESIGN §9): kUpsert carries the whole
// row, kDelete the key columns in upsert-key order.
struct SourceRecord {
  enum class Kind { kUpsert, kDelete };
  Kind kind = Kind::kUpsert;
  Row row;
  Time time = 0;
};

struct ErrorUpdate {
  std::string message;
  Time time = 0;
  std::int64_t diff = 0;
};

// A collection at one time.
struct Contents {
  Multiset rows;
  ErrorSet errors;

  bool HasError() const { return !errors.empty(); }
  // The smallest error message (deterministic); empty when there is none.
  std::string FirstError() const { return errors.empty() ? "" : errors.begin()->first; }
};

// ---- conversions

Datum FromProto(const pb::Datum& datum);
Row FromProto(const pb::Row& row);
pb::Datum ToProto(const Datum& datum);
pb::Row ToProto(const Row& row);

// ---- scalar evaluation

// The types of a row's columns (their ScalarType and typmod; names and nullability unused). An
// empty list, or a column beyond it, means "typed by its datum": int64 values as INT64, doubles
// as FLOAT64 — so int2/int4/float4 semantics need the types. The typed overloads below follow
// ipc/plan_typing.h (reference_values.h has the value semantics).
using Types = std::vector<pb::Column>;

// A datum or an error message.
struct Value {
  Datum datum;
  std::optional<std::string> error;

  static Value Of(Datum d) { return Value{std::move(d), std::nullopt}; }
  static Value Error(std::string message) { return Value{Null{}, std::move(message)}; }
  bool is_error() const { return error.has_value(); }
};

Value Eval(const pb::ScalarExpr& expr, const Row& row);
Value Eval(const pb::ScalarExpr& expr, const Row& row, const Types& types);

// The result of a map/filter/project on one row.
struct MfpResult {
  enum class Kind { kDropped, kRow, kError };
  Kind kind = Kind::kDropped;
  Row row;            // kRow
  std::string error;  // kError
};

MfpResult ApplyMfp(const pb::MapFilterProject& mfp, const Row& row);
MfpResult ApplyMfp(const pb::MapFilterProject& mfp, const Row& row, const Types& types);

// ---- collections and operators on whole collections

// Adds `diff` of `row` (dropping the entry when it reaches zero).
void AddTo(Multiset& set, const Row& row, Count diff);
void AddTo(ErrorSet& set, const std::string& message, Count diff);

Contents MfpOf(const Contents& input, const pb::MapFilterProject& mfp);
Contents MfpOf(const Contents& input, const pb::MapFilterProject& mfp, const Types& types);
Contents ReduceOf(const Contents& input, const pb::Plan::Reduce& reduce);
// `types`: the input's columns (SUM/AVG of NUMERIC, INTERVAL and FLOAT32 need them; untyped,
// numerics and intervals are recognized by their datums).
Contents ReduceOf(const Contents& input, const pb::Plan::Reduce& reduce, const Types& types);
Contents UnionOf(const std::vector<Contents>& inputs);
Contents DistinctOf(const Contents& input);
// `right_arity`: the right input's number of columns (the nulls of LEFT_OUTER's unmatched rows;
// the right side may have no row to read it from).
Contents JoinOf(const Contents& left, const Contents& right, const pb::Plan::Join& join,
                std::size_t right_arity);
Contents TopKOf(const Contents& input, const pb::Plan::TopK& top_k);
Contents NegateOf(const Contents& input);
Contents ThresholdOf(const Contents& input);

// ---- peeks

struct PeekAnswer {
  bool ok = true;
  std::vector<std::pair<Row, std::uint64_t>> rows;  // when ok
  std::string error;                                // when !ok
};

// The answer of a peek on an index whose collection is `contents` at the peek's time and whose
// key columns are `key`: rows whose key columns equal one of `keys` by value (OrderKeys; all rows
// if `keys` is empty), through `mfp`, then `finishing`. An error of the collection (whatever the
// keys), of the mfp on a selected row, a selected row whose count does not fit int64, a selected
// row the mfp keeps whose count is negative (before any other row's count is added to its output
// row: so the answer does not depend on which worker holds which row), or a result row whose count
// does not fit int64, makes the answer an error.
PeekAnswer AnswerPeek(const Contents& contents, const std::vector<std::uint32_t>& key,
                      const std::vector<Row>& keys, const pb::MapFilterProject& mfp,
                      const pb::Finishing& finishing);
PeekAnswer AnswerPeek(const Contents& contents, const std::vector<std::uint32_t>& key,
                      const std::vector<Row>& keys, const pb::MapFilterProject& mfp,
                      const pb::Finishing& finishing, const Types& types);

// "[(1, \"a\") x2, (2, null) x1]" or "Error(...)".
std::string ToString(const PeekAnswer& answer);
std::string ToString(const Multiset& set);

// ---- dataflows

class Evaluator {
 public:
  explicit Evaluator(pb::DataflowDescription desc);

  // The updates of an input: a source import id, or an index import's id or the id of the
  // collection it is on (both name the same imported collection).
  void AddUpdates(const std::string& id, const std::vector<Update>& updates);
  // Index import `id` of this dataflow reads index `id` of `upstream` (the dataflow that exports
  // it), as imported at this dataflow's as_of A (workers/README.md, DESIGN §8): every update of
  // the index at a time <= A advanced to A, then each later update at its time. So at t >= A the
  // import is the index's collection at t; at t < A it is empty (nothing is at a time below A).
  // The import then takes no updates of its own. `upstream` is kept alive by this evaluator;
  // InvalidArgument if `id` is not an index import of the dataflow or `upstream` does not export
  // it.
  Status ImportFrom(const std::string& id, std::shared_ptr<const Evaluator> upstream);
  void AddUpdate(const std::string& id, Update update);
  // A record of upsert source `id` (a source import with an upsert_key). The source's contents
  // at t: for each key, the last of its records (by time, then by the order AddRecord was
  // called) with time <= t; if that record is an upsert, its row with count 1, else nothing.
  // Keys are equal when they are equal by value (OrderKeys: a record for key 1.50 replaces
  // key 1.5's row; null equals null).
  void AddRecord(const std::string& id, SourceRecord record);
  void AddError(const std::string& id, ErrorUpdate error);

  // Any collection of the dataflow at `t`: inputs, builds and index exports. NotFound for an id
  // the dataflow does not know; InvalidArgument for a plan the evaluator cannot interpret.
  Result<Contents> At(const std::string& id, Time t) const;

  // The number of columns of any collection of the dataflow (from the imports' schemas and the
  // plans); NotFound for an unknown id.
  Result<std::size_t> Arity(const std::string& id) const;

  // The key columns of an index export (or index import); NotFound if `id` is not one.
  Result<std::vector<std::uint32_t>> IndexKey(const std::string& id) const;

  // The answer of `peek` (its id, timestamp, keys, mfp and finishing) against this dataflow.
  // An unknown index answers an error ("not found").
  PeekAnswer Peek(const pb::Peek& peek) const;

  const pb::DataflowDescription& desc() const { return desc_; }

 private:
  Result<Contents> AtDepth(const std::string& id, Time t, int depth) const;
  Result<Contents> Input(const std::string& id, Time t) const;
  Result<Contents> Eval(const pb::Plan& plan, Time t, int depth) const;
  Result<std::size_t> ArityOf(const std::string& id, int depth) const;
  Result<std::size_t> Arity(const pb::Plan& plan, int depth) const;
  // The column types of a collection / a plan's output (from the imports' schemas).
  Result<Types> TypesOfId(const std::string& id, int depth) const;
  Result<Types> TypesOf(const pb::Plan& plan, int depth) const;

  pb::DataflowDescription desc_;
  std::map<std::string, std::vector<Update>> updates_;
  std::map<std::string, std::vector<ErrorUpdate>> errors_;
  std::map<std::string, std::vector<SourceRecord>> records_;  // in the order added
  // Index import id -> the dataflow exporting it.
  std::map<std::string, std::shared_ptr<const Evaluator>> upstream_;
};

// The contents at `t` of an upsert source with key columns `key` and these records (in the order
// added): per key value (OrderKeys) the last record by (time, order) with time <= t, if an upsert
// (count 1, its own row).
Multiset UpsertContents(const std::vector<SourceRecord>& records,
                        const std::vector<std::uint32_t>& key, Time t);

// ---- the log source's text format (workers/README.md "The log source format"; its datums in
// the datum syntax, base/datum_text.h)

// "U <time> <diff> <datum> …\n"
std::string LogUpdateLine(const Row& row, Time time, std::int64_t diff);
// An upsert log source's lines: "S <time> <datum> …\n" (the whole row) for an upsert,
// "D <time> <key datum> …\n" (the key columns in upsert-key order) for a delete.
std::string LogRecordLine(const SourceRecord& record);

}  // namespace tandem::reference
