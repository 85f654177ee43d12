#include "sql_oracle/query_generator.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "sql_oracle/random.h"
#include "sql_oracle/values.h"

namespace tandem::testing::sql_oracle {
namespace {

// How deep queries nest (subqueries in FROM, WITH bodies, IN/EXISTS subqueries) and
// expressions grow: bounds that keep every query small and every recursion here finite.
constexpr int kMaxQueryDepth = 2;
constexpr int kMaxExpressionDepth = 3;

// A query's complexity, drawn first: most queries are simple (a failure is then easy to read,
// and a refusal names few features), some combine many constructs.
enum Complexity { kSimple = 0, kMedium = 1, kComplex = 2 };

// A type of the numeric family: + - * and the math functions take it.
bool IsNumber(SqlType type) {
  return type == SqlType::kBigint || type == SqlType::kDouble || type == SqlType::kInt4 ||
         type == SqlType::kNumeric || type == SqlType::kInt2 || type == SqlType::kFloat4;
}

// A column a query's expressions may name.
struct ScopeColumn {
  std::string sql;  // "a3.i1"
  SqlType type = SqlType::kBigint;
  bool approximate = false;  // an avg: only shown or sorted on
  bool base = false;         // a base table's column: small values, may be multiplied
  // A GROUP BY expression standing for a key: PostgreSQL matches it in the SELECT list and
  // HAVING, but not inside a subquery (42803), so no correlation names it.
  bool expression = false;
  // A GROUP BY key: each group's values are equal, and the engine prints one of their spellings
  // ('1 mon' or '30 days'), not necessarily the one another engine prints.
  bool key = false;
};
using Scope = std::vector<ScopeColumn>;

// An output column of a subquery (named c<i>).
struct OutputColumn {
  SqlType type = SqlType::kBigint;
  bool approximate = false;
};

struct CommonTable {
  std::string name;
  std::vector<OutputColumn> columns;
};

// One query's generation: the draws, the aliases handed out, the features used.
class QueryBuilder {
 public:
  QueryBuilder(const std::vector<TableSchema>& tables, const FeatureSet& enabled, bool new_types,
               std::uint64_t seed)
      : tables_(tables), enabled_(enabled), new_types_(new_types), random_(seed) {}

  GeneratedQuery Build() {
    GeneratedQuery query;
    const std::uint64_t level = random_.Below(10);
    complexity_ = level < 4 ? kSimple : (level < 8 ? kMedium : kComplex);
    std::string with;
    if (On(Feature::kWith) && random_.Percent(complexity_ == kSimple ? 5 : 20)) {
      Use(Feature::kWith);
      const int count = static_cast<int>(random_.Between(1, 2));
      for (int i = 0; i < count; ++i) {
        std::vector<OutputColumn> columns;
        const std::string body = Body(1, nullptr, &columns);
        const std::string name = "w" + std::to_string(i);
        with += (i == 0 ? "WITH " : ", ") + name + " AS (" + body + ")";
        ctes_.push_back(CommonTable{name, std::move(columns)});
      }
      with += " ";
    }
    std::vector<OutputColumn> columns;
    std::string sql = with + Body(0, nullptr, &columns);
    if (On(Feature::kOrderBy) && random_.Percent(35)) {
      Use(Feature::kOrderBy);
      const bool limit = On(Feature::kLimit) && random_.Percent(50);
      const bool offset = On(Feature::kOffset) && random_.Percent(30);
      std::vector<std::size_t> order;
      for (std::size_t c = 0; c < columns.size(); ++c) order.push_back(c);
      Shuffle(order);
      // First by a column the SELECT list does not show (then by every output column, so ties
      // are identical rows): the rows kept are fixed, their order cannot be checked.
      const bool hidden =
          On(Feature::kOrderByHidden) && !hidden_candidates_.empty() && random_.Percent(25);
      if (!limit && !offset && !hidden) {
        order.resize(static_cast<std::size_t>(
            random_.Between(1, static_cast<std::int64_t>(std::min<std::size_t>(3, order.size())))));
      }
      sql += " ORDER BY ";
      if (hidden) {
        Use(Feature::kOrderByHidden);
        sql += random_.Pick(hidden_candidates_) + (random_.Percent(40) ? " DESC, " : ", ");
      }
      sql += OrderItems(order, true);
      if (limit) {
        Use(Feature::kLimit);
        sql += " LIMIT " + std::to_string(random_.Between(0, 6));
      }
      if (offset) {
        Use(Feature::kOffset);
        sql += " OFFSET " + std::to_string(random_.Between(0, 3));
      }
      query.order.ordered = !hidden;
      if (!hidden) query.order.order_columns = order;
    }
    query.sql = std::move(sql);
    query.features = used_;
    return query;
  }

 private:
  bool On(Feature f) const { return enabled_.Has(f); }
  void Use(Feature f) { used_.Add(f); }

  std::string NewAlias() { return "a" + std::to_string(next_alias_++); }

  void Shuffle(std::vector<std::size_t>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[random_.Below(i)]);
  }

  // A literal of `type` (a double bare, numeric in PostgreSQL, only with kNumericConstant).
  std::string Literal(SqlType type) {
    const bool bare =
        type == SqlType::kDouble && On(Feature::kNumericConstant) && random_.Percent(8);
    if (bare) Use(Feature::kNumericConstant);
    return RandomLiteral(random_, type, bare);
  }

  SqlType RandomType() {
    static const std::vector<SqlType> kTypes = {SqlType::kBigint, SqlType::kBigint,
                                                SqlType::kBigint, SqlType::kDouble,
                                                SqlType::kText,   SqlType::kBool};
    // Every expression type (numeric and text twice: their columns have several typmods).
    static const std::vector<SqlType> kNewTypes = {
        SqlType::kBigint,      SqlType::kBigint, SqlType::kDouble,    SqlType::kText,
        SqlType::kText,        SqlType::kBool,   SqlType::kInt4,      SqlType::kNumeric,
        SqlType::kNumeric,     SqlType::kDate,   SqlType::kTimestamp, SqlType::kInterval,
        SqlType::kInt2,        SqlType::kFloat4, SqlType::kBytea,     SqlType::kTime,
        SqlType::kTimestampTz, SqlType::kUuid,   SqlType::kChar};
    return random_.Pick(new_types_ ? kNewTypes : kTypes);
  }

  // ORDER BY items over output columns `order`: ordinals or names, directions, null placement.
  std::string OrderItems(const std::vector<std::size_t>& order, bool vary) {
    std::string sql;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i > 0) sql += ", ";
      if (vary && random_.Percent(50)) {
        sql += "c" + std::to_string(order[i]);
      } else {
        sql += std::to_string(order[i] + 1);
      }
      if (vary && random_.Percent(40)) sql += " DESC";
      if (vary && random_.Percent(30)) sql += random_.Percent(50) ? " NULLS FIRST" : " NULLS LAST";
    }
    return sql;
  }

  // ---- expressions

  std::vector<const ScopeColumn*> ColumnsOf(const Scope& scope, SqlType type, bool base_only) {
    std::vector<const ScopeColumn*> out;
    for (const ScopeColumn& c : scope) {
      if (c.type != type || c.approximate || (base_only && !c.base)) continue;
      // One spelling: an interval of a base table's row (a key, a subquery's or a common
      // table's column may hold the spelling of any value equal to it).
      if (one_spelling_ && type == SqlType::kInterval && (!c.base || c.key)) continue;
      out.push_back(&c);
    }
    return out;
  }

  // `make()`'s expression with one_spelling_ set: the operand of an operation whose result
  // depends on how an interval is spelled ('1 mon' and '30 days' are equal, but their text,
  // their fields and a timestamp plus them differ).
  template <typename Make>
  std::string OneSpelling(Make make) {
    const bool outer = one_spelling_;
    one_spelling_ = true;
    std::string sql = make();
    one_spelling_ = outer;
    return sql;
  }

  std::string Leaf(SqlType type, const Scope& scope, bool base_only = false) {
    const std::vector<const ScopeColumn*> columns = ColumnsOf(scope, type, base_only);
    if (type == SqlType::kBool && (columns.empty() || random_.Percent(30))) {
      return random_.Percent(50) ? "true" : "false";
    }
    if (!columns.empty() && random_.Percent(85)) return random_.Pick(columns)->sql;
    return Literal(type);
  }

  std::string Expr(SqlType type, const Scope& scope, int depth) {
    if (type == SqlType::kBool) return Predicate(scope, depth);
    const std::uint64_t choice = random_.Below(100);
    if (depth >= kMaxExpressionDepth || depth > complexity_ || choice < 50)
      return Leaf(type, scope);
    if (choice >= 96 && On(Feature::kScalarSubquery) && query_depth_ < kMaxQueryDepth &&
        Aggregable(type) && !(one_spelling_ && type == SqlType::kInterval)) {
      return ScalarSubquery(type, scope);
    }
    if (new_types_ && random_.Percent(45)) {
      if (std::optional<std::string> sql = TypedFunction(type, scope, depth)) return *sql;
    }
    const bool number = IsNumber(type);
    if (choice < 72 && number && On(Feature::kArithmetic)) {
      Use(Feature::kArithmetic);
      const std::uint64_t op = random_.Below(3);
      if (op == 2) {  // only small values are multiplied: base columns and literals
        const std::string left = Leaf(type, scope, true);
        const std::string right = Leaf(type, scope, true);
        return "(" + left + " * " + right + ")";
      }
      const std::string left = Expr(type, scope, depth + 1);
      const std::string right = Expr(type, scope, depth + 1);
      return "(" + left + (op == 0 ? " + " : " - ") + right + ")";
    }
    const bool datetime =
        type == SqlType::kDate || type == SqlType::kTimestamp || type == SqlType::kInterval;
    if (choice < 72 && datetime && On(Feature::kDateTimeArithmetic)) {
      // date + integer is a date; timestamp ± interval a timestamp; interval ± interval one.
      Use(Feature::kDateTimeArithmetic);
      const std::string left = Expr(type, scope, depth + 1);
      if (type == SqlType::kDate) {
        return "(" + left + " + " + std::to_string(random_.Between(-3, 3)) + ")";
      }
      const std::string right =
          type == SqlType::kInterval ? Expr(type, scope, depth + 1) : Literal(SqlType::kInterval);
      return "(" + left + (random_.Percent(50) ? " + " : " - ") + right + ")";
    }
    if (choice < 86 && On(Feature::kCase)) {
      Use(Feature::kCase);
      const std::string when = Predicate(scope, depth + 1);
      const std::string then = Expr(type, scope, depth + 1);
      std::string sql = "CASE WHEN " + when + " THEN " + then;
      if (random_.Percent(40)) {
        const std::string when2 = Predicate(scope, depth + 1);
        const std::string then2 = Expr(type, scope, depth + 1);
        sql += " WHEN " + when2 + " THEN " + then2;
      }
      if (random_.Percent(70)) {
        const std::string els = Expr(type, scope, depth + 1);
        sql += " ELSE " + els;
      }
      return sql + " END";
    }
    if (On(Feature::kCoalesce)) {
      Use(Feature::kCoalesce);
      const std::string first = Expr(type, scope, depth + 1);
      const std::string second = Expr(type, scope, depth + 1);
      return "COALESCE(" + first + ", " + second + ")";
    }
    return Leaf(type, scope);
  }

  // A type some non-approximate column of `scope` has (bigint when none).
  SqlType TypeInScope(const Scope& scope) {
    std::vector<SqlType> types;
    for (const ScopeColumn& c : scope) {
      if (!c.approximate) types.push_back(c.type);
    }
    return types.empty() ? SqlType::kBigint : random_.Pick(types);
  }

  // Mostly "column op literal" or "column op another column" — a comparison of a column with
  // itself or of two literals is constant and makes many answers empty.
  std::string Comparison(const Scope& scope, int depth) {
    if (new_types_ && On(Feature::kLike) && random_.Percent(8)) return Like(scope, depth);
    const SqlType type = TypeInScope(scope);
    if (new_types_ && IsNumber(type) && On(Feature::kNumericFamilyComparison) &&
        random_.Percent(25)) {
      return NumericFamilyComparison(type, scope, depth);
    }
    const std::vector<const ScopeColumn*> columns = ColumnsOf(scope, type, false);
    const ScopeColumn* column =
        !columns.empty() && random_.Percent(70) ? random_.Pick(columns) : nullptr;
    // Bool operands are leaves: a predicate compared with a predicate would recurse unbounded.
    const std::string left = column != nullptr        ? column->sql
                             : type == SqlType::kBool ? Leaf(type, scope)
                                                      : Expr(type, scope, depth + 1);
    std::string right;
    if (random_.Percent(55)) {
      // Intervals of months meet only the right side of a comparison (values.h).
      right = new_types_ && type == SqlType::kInterval && random_.Percent(40)
                  ? RandomCalendarInterval(random_)
                  : Literal(type);
    } else {
      std::vector<const ScopeColumn*> others;
      for (const ScopeColumn* c : columns) {
        if (c != column) others.push_back(c);
      }
      if (!others.empty() && random_.Percent(60)) {
        right = random_.Pick(others)->sql;
      } else {
        right = type == SqlType::kBool ? Leaf(type, scope) : Expr(type, scope, depth + 1);
      }
    }
    if (right == left) right = Literal(type);
    // Equality with a random value rarely holds: weighted so that most predicates keep rows.
    static const std::vector<std::string> kOps = {
        "=", "<>", "<>", "<", "<=", "<=", ">", ">=", ">="};
    static const std::vector<std::string> kBoolOps = {"=", "<>"};
    const std::string& op = random_.Pick(type == SqlType::kBool ? kBoolOps : kOps);
    return "(" + left + " " + op + " " + right + ")";
  }

  std::string Predicate(const Scope& scope, int depth) {
    const std::uint64_t choice = random_.Below(100);
    if (depth >= kMaxExpressionDepth || depth > complexity_ || choice < 45)
      return Comparison(scope, depth);
    if (choice >= 95 && On(Feature::kSubqueryInExpression) && query_depth_ < kMaxQueryDepth &&
        (On(Feature::kInSubquery) || On(Feature::kNotInSubquery) || On(Feature::kExists) ||
         On(Feature::kNotExists))) {
      Use(Feature::kSubqueryInExpression);
      return "(" + SubqueryConjunct(query_depth_, scope) + ")";
    }
    if (choice < 60) {
      const SqlType type = TypeInScope(scope);
      const std::string operand = Expr(type, scope, depth + 1);
      return "(" + operand + (random_.Percent(35) ? " IS NULL)" : " IS NOT NULL)");
    }
    if (choice < 68) {
      const std::vector<const ScopeColumn*> bools = ColumnsOf(scope, SqlType::kBool, false);
      if (!bools.empty()) return random_.Pick(bools)->sql;
      return Comparison(scope, depth);
    }
    if (choice < 78) {
      const std::string inner = Predicate(scope, depth + 1);
      return "(NOT " + inner + ")";
    }
    const std::string left = Predicate(scope, depth + 1);
    const std::string right = Predicate(scope, depth + 1);
    return "(" + left + (random_.Percent(40) ? " AND " : " OR ") + right + ")";
  }

  // ---- the functions and operators of DESIGN §16's types (only with new_types_)

  // An expression of `type` by a function or operator of an enabled feature that makes one;
  // nullopt when none does.
  std::optional<std::string> TypedFunction(SqlType type, const Scope& scope, int depth) {
    std::vector<Feature> kinds;
    const bool temporal = type == SqlType::kDate || type == SqlType::kTimestamp ||
                          type == SqlType::kTimestampTz || type == SqlType::kTime ||
                          type == SqlType::kInterval || type == SqlType::kInt4;
    if (On(Feature::kDateTimeArithmetic) && temporal) kinds.push_back(Feature::kDateTimeArithmetic);
    if (On(Feature::kCast)) kinds.push_back(Feature::kCast);
    if (On(Feature::kNullifGreatestLeast)) kinds.push_back(Feature::kNullifGreatestLeast);
    if (On(Feature::kStringFunctions) &&
        (type == SqlType::kText || type == SqlType::kInt4 || type == SqlType::kBytea)) {
      kinds.push_back(Feature::kStringFunctions);
    }
    if (On(Feature::kMathFunctions) && IsNumber(type)) kinds.push_back(Feature::kMathFunctions);
    if (On(Feature::kDateTrunc) && (type == SqlType::kTimestamp || type == SqlType::kTimestampTz ||
                                    type == SqlType::kInterval)) {
      kinds.push_back(Feature::kDateTrunc);
    }
    if (On(Feature::kExtract) && (type == SqlType::kNumeric || type == SqlType::kDouble)) {
      kinds.push_back(Feature::kExtract);
    }
    if (kinds.empty()) return std::nullopt;
    const Feature kind = random_.Pick(kinds);
    Use(kind);
    switch (kind) {
      case Feature::kDateTimeArithmetic:
        return DateTimeArithmetic(type, scope, depth);
      case Feature::kCast:
        return Cast(type, scope, depth);
      case Feature::kNullifGreatestLeast:
        return NullifGreatestLeast(type, scope, depth);
      case Feature::kStringFunctions:
        return StringFunction(type, scope, depth);
      case Feature::kMathFunctions:
        return MathFunction(type, scope, depth);
      case Feature::kDateTrunc:
        return DateTrunc(type, scope, depth);
      default:
        return Extract(type, scope, depth);
    }
  }

  // date ± integer, date - date (an integer), timestamp[tz] ± interval, date + interval and
  // date + time (timestamps), time ± interval, interval ± interval, the differences of two
  // timestamps, timestamptzs or times (intervals). The interval added is a column's or a
  // calendar one ('1 mon' from the 31st clamps to the month's last day); added to a date or a
  // timestamp, of one spelling (a month added is not 30 days added).
  std::string DateTimeArithmetic(SqlType type, const Scope& scope, int depth) {
    const std::string sign = random_.Percent(50) ? " + " : " - ";
    auto interval = [&] {
      if (random_.Percent(50)) return RandomCalendarInterval(random_);
      // A time adds only the time of day of the interval's span: any spelling.
      if (type == SqlType::kTime) return Expr(SqlType::kInterval, scope, depth + 1);
      return OneSpelling([&] { return Expr(SqlType::kInterval, scope, depth + 1); });
    };
    switch (type) {
      case SqlType::kDate: {
        const std::string date = Expr(SqlType::kDate, scope, depth + 1);
        return "(" + date + sign + std::to_string(random_.Between(0, 3)) + ")";
      }
      case SqlType::kInt4: {
        const std::string left = Expr(SqlType::kDate, scope, depth + 1);
        const std::string right = Expr(SqlType::kDate, scope, depth + 1);
        return "(" + left + " - " + right + ")";
      }
      case SqlType::kTimestamp: {
        if (random_.Percent(25)) {
          const std::string date = Expr(SqlType::kDate, scope, depth + 1);
          const std::string added =
              random_.Percent(50) ? interval() : Expr(SqlType::kTime, scope, depth + 1);
          return "(" + date + " + " + added + ")";
        }
        const std::string left = Expr(type, scope, depth + 1);
        return "(" + left + sign + interval() + ")";
      }
      case SqlType::kTimestampTz:
      case SqlType::kTime: {
        const std::string left = Expr(type, scope, depth + 1);
        return "(" + left + sign + interval() + ")";
      }
      default: {  // interval
        static const std::vector<SqlType> kOperands = {SqlType::kInterval, SqlType::kTimestamp,
                                                       SqlType::kTimestampTz, SqlType::kTime};
        const SqlType operand = random_.Pick(kOperands);
        const std::string left = Expr(operand, scope, depth + 1);
        const std::string right = Expr(operand, scope, depth + 1);
        return "(" + left + (operand == SqlType::kInterval ? sign : " - ") + right + ")";
      }
    }
  }

  // CAST(x AS t) or (x)::t, x of a type PostgreSQL casts to `type` with every value of the
  // domains fitting (integers stay small; no numeric or float to text: see features.h).
  std::string Cast(SqlType type, const Scope& scope, int depth) {
    static const std::vector<SqlType> kToInteger = {SqlType::kBigint, SqlType::kInt4,
                                                    SqlType::kInt2,   SqlType::kNumeric,
                                                    SqlType::kDouble, SqlType::kFloat4};
    static const std::vector<SqlType> kToSmallint = {SqlType::kBigint, SqlType::kInt4,
                                                     SqlType::kInt2};
    static const std::vector<SqlType> kToFloat = {SqlType::kBigint, SqlType::kInt4,
                                                  SqlType::kInt2,   SqlType::kNumeric,
                                                  SqlType::kDouble, SqlType::kFloat4};
    static const std::vector<SqlType> kToText = {
        SqlType::kBigint,   SqlType::kInt4, SqlType::kInt2,      SqlType::kBool,
        SqlType::kDate,     SqlType::kTime, SqlType::kTimestamp, SqlType::kTimestampTz,
        SqlType::kInterval, SqlType::kUuid, SqlType::kBytea,     SqlType::kText,
        SqlType::kChar};
    static const std::vector<SqlType> kToDate = {SqlType::kTimestamp, SqlType::kTimestampTz};
    static const std::vector<SqlType> kToTime = {SqlType::kTimestamp, SqlType::kTimestampTz,
                                                 SqlType::kInterval};
    static const std::vector<SqlType> kToTimestamp = {SqlType::kDate, SqlType::kTimestampTz};
    static const std::vector<SqlType> kToTimestampTz = {SqlType::kDate, SqlType::kTimestamp};
    static const std::vector<SqlType> kToInterval = {SqlType::kTime};
    static const std::vector<SqlType> kNone;
    std::string target;
    const std::vector<SqlType>* sources = &kNone;
    switch (type) {
      case SqlType::kBigint:
        target = "bigint";
        sources = &kToInteger;
        break;
      case SqlType::kInt4:
        target = "integer";
        sources = &kToInteger;
        break;
      case SqlType::kInt2:
        target = "smallint";
        sources = &kToSmallint;  // of integers only: an extracted field may exceed it
        break;
      case SqlType::kDouble:
        target = "double precision";
        sources = &kToFloat;
        break;
      case SqlType::kFloat4:
        target = "real";
        sources = &kToFloat;
        break;
      case SqlType::kNumeric: {
        static const std::vector<std::string> kNumerics = {"numeric", "numeric(12,4)",
                                                           "numeric(10,2)", "numeric(8,1)"};
        target = random_.Pick(kNumerics);
        sources = &kToFloat;
        break;
      }
      case SqlType::kText: {
        static const std::vector<std::string> kTexts = {"text", "varchar(3)", "varchar"};
        target = random_.Pick(kTexts);
        sources = &kToText;
        break;
      }
      case SqlType::kChar:  // of the one length of char expressions (schema.h: ExpressionType)
        target = "char(3)";
        sources = &kToText;
        break;
      case SqlType::kDate:
        target = "date";
        sources = &kToDate;
        break;
      case SqlType::kTime:
        target = "time";
        sources = &kToTime;
        break;
      case SqlType::kTimestamp:
        target = "timestamp";
        sources = &kToTimestamp;
        break;
      case SqlType::kTimestampTz:
        target = "timestamptz";
        sources = &kToTimestampTz;
        break;
      case SqlType::kInterval:
        target = "interval";
        sources = &kToInterval;
        break;
      case SqlType::kUuid:
        target = "uuid";
        break;
      case SqlType::kBytea:
        target = "bytea";
        break;
      default:  // boolean: predicates are not cast
        return Leaf(type, scope);
    }
    std::string operand;
    if (sources->empty() || random_.Percent(20)) {
      // Through text and back: PostgreSQL's output read by the type's input.
      const std::string inner =
          Expr(type == SqlType::kText ? SqlType::kInt4 : type, scope, depth + 1);
      operand = "(" + inner + ")::text";
    } else {
      SqlType source = random_.Pick(*sources);
      if (type == SqlType::kInt4 && random_.Percent(10)) source = SqlType::kBool;
      // text to text only where the target has a length (truncation, padding).
      if (source == SqlType::kText && (target == "text" || target == "varchar")) {
        target = "varchar(2)";
      }
      if (source == SqlType::kBool) {
        operand = Predicate(scope, depth + 1);
      } else if (source == SqlType::kInterval && sources == &kToText) {
        operand = OneSpelling([&] { return Expr(source, scope, depth + 1); });  // its text
      } else {
        operand = Expr(source, scope, depth + 1);
      }
    }
    if (random_.Percent(50)) return "CAST(" + operand + " AS " + target + ")";
    return "(" + operand + ")::" + target;
  }

  // NULLIF(a, b), GREATEST(a, b[, c]), LEAST(a, b[, c]) of `type` (of an interval of one
  // spelling only NULLIF: GREATEST of '1 mon' and '30 days' may answer either).
  std::string NullifGreatestLeast(SqlType type, const Scope& scope, int depth) {
    std::uint64_t which = random_.Below(3);
    if (one_spelling_ && type == SqlType::kInterval) which = 0;
    const std::string first = Expr(type, scope, depth + 1);
    const std::string second = Expr(type, scope, depth + 1);
    if (which == 0) return "NULLIF(" + first + ", " + second + ")";
    std::string sql = std::string(which == 1 ? "GREATEST(" : "LEAST(") + first + ", " + second;
    if (random_.Percent(30)) {
      const std::string third = Expr(type, scope, depth + 1);
      sql += ", " + third;
    }
    return sql + ")";
  }

  // A string function's or LIKE's subject: text, or now and then char(3) (which the functions
  // take as text, without its blanks, and octet_length and LIKE with them).
  std::string TextArgument(const Scope& scope, int depth) {
    const SqlType type = random_.Percent(25) ? SqlType::kChar : SqlType::kText;
    return Expr(type, scope, depth + 1);
  }

  // A short literal for a string function's argument: 'a', 'b', ' ', 'ab', ''.
  std::string Needle() {
    static const std::vector<std::string> kNeedles = {"'a'", "'b'", "' '", "'ab'", "''", "'B'"};
    return random_.Pick(kNeedles);
  }

  // Text: ||, lower, upper, substr/substring, the trims, replace. Integer: length,
  // char_length, octet_length (of text or bytea), strpos, position. Bytea: ||.
  std::string StringFunction(SqlType type, const Scope& scope, int depth) {
    if (type == SqlType::kBytea) {
      const std::string left = Expr(type, scope, depth + 1);
      const std::string right = Expr(type, scope, depth + 1);
      return "(" + left + " || " + right + ")";
    }
    if (type == SqlType::kInt4) {
      const std::uint64_t which = random_.Below(7);
      if (which == 6) {
        const std::string bytes = Expr(SqlType::kBytea, scope, depth + 1);
        return std::string(random_.Percent(50) ? "length(" : "octet_length(") + bytes + ")";
      }
      const std::string text = TextArgument(scope, depth);
      switch (which) {
        case 0:
          return "length(" + text + ")";
        case 1:
          return "char_length(" + text + ")";
        case 2:
          return "octet_length(" + text + ")";
        case 3:
          return "strpos(" + text + ", " + Needle() + ")";
        default:
          return "position(" + Needle() + " IN " + text + ")";
      }
    }
    const std::uint64_t which = random_.Below(6);
    const std::string text = TextArgument(scope, depth);
    switch (which) {
      case 0: {
        const std::string right = Expr(SqlType::kText, scope, depth + 1);
        return "(" + text + " || " + right + ")";
      }
      case 1:
        return std::string(random_.Percent(50) ? "lower(" : "upper(") + text + ")";
      case 2: {
        const std::string from = std::to_string(random_.Between(-1, 4));
        const bool count = random_.Percent(60);
        const std::string n = std::to_string(random_.Between(0, 3));
        if (random_.Percent(50)) {
          return "substr(" + text + ", " + from + (count ? ", " + n : std::string()) + ")";
        }
        return "substring(" + text + " FROM " + from + (count ? " FOR " + n : std::string()) + ")";
      }
      case 3: {
        static const std::vector<std::string> kTrims = {"btrim", "ltrim", "rtrim"};
        const std::string& trim = random_.Pick(kTrims);
        if (random_.Percent(50)) return trim + "(" + text + ")";
        return trim + "(" + text + ", " + Needle() + ")";
      }
      case 4: {
        static const std::vector<std::string> kSides = {"", "BOTH ", "LEADING ", "TRAILING "};
        const std::string& side = random_.Pick(kSides);
        const std::string characters = random_.Percent(50) ? Needle() + " " : std::string();
        if (side.empty() && characters.empty()) return "trim(" + text + ")";
        return "trim(" + side + characters + "FROM " + text + ")";
      }
      default: {
        const std::string from = Needle();
        const std::string to = Needle();
        return "replace(" + text + ", " + from + ", " + to + ")";
      }
    }
  }

  // s [NOT] LIKE / ILIKE a pattern (no escape character: the patterns have no backslash).
  std::string Like(const Scope& scope, int depth) {
    Use(Feature::kLike);
    static const std::vector<std::string> kPatterns = {"'a%'",  "'%b'", "'_'",    "'%'", "'a_'",
                                                       "'%a%'", "'A%'", "'%''%'", "''",  "'__%'",
                                                       "'a b'", "'%B'", "'ab'"};
    const std::string text = TextArgument(scope, depth);
    const std::string& pattern = random_.Pick(kPatterns);
    const bool negated = random_.Percent(30);
    const std::string op = random_.Percent(60) ? "LIKE" : "ILIKE";
    return "(" + text + (negated ? " NOT " : " ") + op + " " + pattern + ")";
  }

  // A comparison of `type` with another type of the numeric family.
  std::string NumericFamilyComparison(SqlType type, const Scope& scope, int depth) {
    Use(Feature::kNumericFamilyComparison);
    std::vector<SqlType> others;
    for (SqlType t : {SqlType::kBigint, SqlType::kInt4, SqlType::kInt2, SqlType::kDouble,
                      SqlType::kFloat4, SqlType::kNumeric}) {
      if (t != type) others.push_back(t);
    }
    const SqlType other = random_.Pick(others);
    const std::string left = Expr(type, scope, depth + 1);
    const std::string right = random_.Percent(50) ? Literal(other) : Expr(other, scope, depth + 1);
    static const std::vector<std::string> kOps = {"=", "<>", "<", "<=", ">", ">="};
    const std::string& op = random_.Pick(kOps);
    return "(" + left + " " + op + " " + right + ")";
  }

  // abs of every numeric type; numeric: round/trunc(x[, n]), floor, ceil, power(x, 0..3),
  // sqrt(abs(x)) (of numeric or of an integer, which round(x, n) takes as numeric); double
  // precision: the same without n, of a float or an integer (PostgreSQL's preferred type).
  std::string MathFunction(SqlType type, const Scope& scope, int depth) {
    if (type != SqlType::kNumeric && type != SqlType::kDouble) {
      const std::string x = Expr(type, scope, depth + 1);
      return "abs(" + x + ")";
    }
    const bool numeric = type == SqlType::kNumeric;
    static const std::vector<SqlType> kIntegers = {SqlType::kBigint, SqlType::kInt4,
                                                   SqlType::kInt2};
    const std::uint64_t which = random_.Below(6);
    if (which == 0) {  // round(x, n) and trunc(x, n) exist for numeric only
      const SqlType argument = numeric && random_.Percent(70) ? type : random_.Pick(kIntegers);
      const std::string x = Expr(argument, scope, depth + 1);
      const std::string f = random_.Percent(50) ? "round(" : "trunc(";
      if (!numeric) return f + x + ")";  // of an integer: double precision
      return f + x + ", " + std::to_string(random_.Between(0, 2)) + ")";
    }
    static const std::vector<SqlType> kToDouble = {SqlType::kBigint, SqlType::kInt4,
                                                   SqlType::kFloat4};
    SqlType argument = type;
    if (!numeric && random_.Percent(25)) argument = random_.Pick(kToDouble);
    const std::string x = Expr(argument, scope, depth + 1);
    switch (which) {
      case 1:
        return "abs(" + x + ")";
      case 2:
        return std::string(random_.Percent(50) ? "floor(" : "ceil(") + x + ")";
      case 3:
        return "sqrt(abs(" + x + "))";
      case 4:  // of a leaf: a power of a power (of an extracted year) is past 38 digits
        return "power(" + Leaf(argument, scope) + ", " + std::to_string(random_.Between(0, 3)) +
               ")";
      default:
        return std::string(random_.Percent(50) ? "round(" : "trunc(") + x + ")";
    }
  }

  // date_trunc(unit, x): of a timestamp, a timestamptz or a date (a timestamptz), an interval
  // or a time (an interval).
  std::string DateTrunc(SqlType type, const Scope& scope, int depth) {
    static const std::vector<std::string> kUnits = {"'minute'", "'hour'",    "'day'", "'week'",
                                                    "'month'",  "'quarter'", "'year'"};
    static const std::vector<std::string> kIntervalUnits = {"'minute'", "'hour'", "'day'",
                                                            "'month'", "'year'"};
    SqlType argument = type;
    if (type == SqlType::kTimestampTz && random_.Percent(30)) argument = SqlType::kDate;
    if (type == SqlType::kInterval && random_.Percent(30)) argument = SqlType::kTime;
    // date_trunc('day', '720:00:00') is '00:00:00', of '30 days' '30 days': of one spelling.
    const std::string x = argument == SqlType::kInterval
                              ? OneSpelling([&] { return Expr(argument, scope, depth + 1); })
                              : Expr(argument, scope, depth + 1);
    const std::string& unit = random_.Pick(type == SqlType::kInterval ? kIntervalUnits : kUnits);
    return "date_trunc(" + unit + ", " + x + ")";
  }

  // extract(field FROM x) (numeric) or date_part('field', x) (double precision) of a temporal x
  // with a field PostgreSQL has for its type (extract(hour FROM date) is 0A000). The epoch only
  // of a time or an interval, and no microseconds: every field is then below 10^7, which
  // numeric(8,1), the narrowest cast's target, holds (the epoch of a date or a timestamp, some
  // 1.8e9, would overflow it: a data error, which PostgreSQL may raise or not as its plan
  // filters the row before or after).
  std::string Extract(SqlType type, const Scope& scope, int depth) {
    static const std::vector<SqlType> kTemporal = {SqlType::kDate, SqlType::kTime,
                                                   SqlType::kTimestamp, SqlType::kTimestampTz,
                                                   SqlType::kInterval};
    static const std::vector<std::string> kDateFields = {
        "year", "month", "day", "dow", "doy", "quarter", "week", "isodow", "isoyear", "century"};
    static const std::vector<std::string> kTimeFields = {"hour", "minute", "second", "milliseconds",
                                                         "epoch"};
    static const std::vector<std::string> kTimestampFields = {"year",   "month",  "day",    "hour",
                                                              "minute", "second", "dow",    "doy",
                                                              "week",   "isodow", "quarter"};
    static const std::vector<std::string> kTimestampTzFields = {
        "year", "month", "day", "hour", "minute", "second", "dow", "doy", "timezone"};
    static const std::vector<std::string> kIntervalFields = {"year",   "month",  "day",  "hour",
                                                             "minute", "second", "epoch"};
    const SqlType argument = random_.Pick(kTemporal);
    const std::vector<std::string>& fields = argument == SqlType::kDate        ? kDateFields
                                             : argument == SqlType::kTime      ? kTimeFields
                                             : argument == SqlType::kTimestamp ? kTimestampFields
                                             : argument == SqlType::kTimestampTz
                                                 ? kTimestampTzFields
                                                 : kIntervalFields;
    const std::string& field = random_.Pick(fields);
    // The fields of '1 mon' and of '30 days' differ: of one spelling.
    const std::string x = argument == SqlType::kInterval
                              ? OneSpelling([&] { return Expr(argument, scope, depth + 1); })
                              : Expr(argument, scope, depth + 1);
    if (type == SqlType::kNumeric) return "extract(" + field + " FROM " + x + ")";
    return "date_part('" + field + "', " + x + ")";
  }

  // ---- FROM

  // One relation of a FROM list, aliased; its columns appended to `scope`.
  std::string FromItem(int depth, Scope* scope, bool base_only = false) {
    const std::uint64_t choice = random_.Below(100);
    const std::string alias = NewAlias();
    if (!base_only && !ctes_.empty() && choice < 35) {
      const CommonTable& cte = ctes_[random_.Below(ctes_.size())];
      for (std::size_t c = 0; c < cte.columns.size(); ++c) {
        scope->push_back(ScopeColumn{alias + ".c" + std::to_string(c), cte.columns[c].type,
                                     cte.columns[c].approximate, false});
      }
      return cte.name + " AS " + alias;
    }
    if (!base_only && On(Feature::kFromSubquery) && depth < kMaxQueryDepth &&
        choice < 35 + 10 * static_cast<std::uint64_t>(complexity_ + 1)) {
      Use(Feature::kFromSubquery);
      std::vector<OutputColumn> columns;
      std::string body = Body(depth + 1, nullptr, &columns);
      if (On(Feature::kOrderBy) && On(Feature::kLimit) && random_.Percent(25)) {
        Use(Feature::kOrderBy);
        Use(Feature::kLimit);
        std::vector<std::size_t> order;
        for (std::size_t c = 0; c < columns.size(); ++c) order.push_back(c);
        Shuffle(order);
        body += " ORDER BY " + OrderItems(order, true) + " LIMIT " +
                std::to_string(random_.Between(1, 4));
      }
      for (std::size_t c = 0; c < columns.size(); ++c) {
        scope->push_back(ScopeColumn{alias + ".c" + std::to_string(c), columns[c].type,
                                     columns[c].approximate, false});
      }
      return "(" + body + ") AS " + alias;
    }
    std::size_t t = random_.Below(tables_.size());
    if (preferred_table_ >= 0 && random_.Percent(70))
      t = static_cast<std::size_t>(preferred_table_);
    const TableSchema& table = tables_[t];
    for (const ColumnSchema& c : table.columns) {
      scope->push_back(ScopeColumn{alias + "." + c.name, ExpressionType(c.type), false, true});
    }
    return table.name + " AS " + alias;
  }

  // A condition on the columns of one side of a join, every conjunct naming one of them (a
  // constant conjunct would be on neither side): (a1.i2 > 3), (a1.s3 IS NULL OR a1.b4).
  std::string SideCondition(const Scope& side) {
    std::string condition = ColumnCondition(side);
    if (random_.Percent(30)) {
      const std::string more = ColumnCondition(side);
      condition = "(" + condition + (random_.Percent(50) ? " AND " : " OR ") + more + ")";
    }
    return condition;
  }

  std::string ColumnCondition(const Scope& side) {
    std::vector<const ScopeColumn*> columns;
    for (const ScopeColumn& c : side) {
      if (!c.approximate) columns.push_back(&c);
    }
    if (columns.empty()) return "true";
    const ScopeColumn& column = *random_.Pick(columns);
    if (random_.Percent(20)) {
      return "(" + column.sql + (random_.Percent(35) ? " IS NULL)" : " IS NOT NULL)");
    }
    if (column.type == SqlType::kBool) {
      return random_.Percent(50) ? column.sql : "(NOT " + column.sql + ")";
    }
    static const std::vector<std::string> kOps = {"=", "<>", "<", "<=", ">", ">="};
    const std::string& op = random_.Pick(kOps);
    return "(" + column.sql + " " + op + " " + Literal(column.type) + ")";
  }

  // "l = r" for a column of `left` and one of `right` of one type; nullopt if they share none.
  std::optional<std::string> Equality(const Scope& left, const Scope& right) {
    std::vector<std::pair<const ScopeColumn*, const ScopeColumn*>> pairs;
    for (const ScopeColumn& l : left) {
      for (const ScopeColumn& r : right) {
        if (l.type == r.type && !l.approximate && !r.approximate && !l.expression &&
            !r.expression) {
          pairs.emplace_back(&l, &r);
        }
      }
    }
    if (pairs.empty()) return std::nullopt;
    const auto& [l, r] = pairs[random_.Below(pairs.size())];
    return l->sql + " = " + r->sql;
  }

  std::string FromClause(int depth, Scope* scope) {
    std::vector<Feature> kinds;
    for (Feature f : {Feature::kInnerJoin, Feature::kLeftJoin, Feature::kRightJoin,
                      Feature::kFullJoin, Feature::kCrossJoin}) {
      if (On(f)) kinds.push_back(f);
    }
    int relations = 1;
    if (!kinds.empty()) {
      static const std::vector<std::vector<int>> kTop = {{1, 1, 2}, {1, 2, 2, 3}, {2, 3, 3, 4}};
      static const std::vector<int> kNested = {1, 1, 1, 2};
      relations = random_.Pick(depth == 0 ? kTop[complexity_] : kNested);
    }
    std::string sql = FromItem(depth, scope);
    for (int i = 1; i < relations; ++i) {
      Feature kind = random_.Pick(kinds);
      Scope right;
      const FeatureSet before = used_;
      std::string item = FromItem(depth, &right);
      std::optional<std::string> equality;
      if (kind != Feature::kCrossJoin) {
        equality = Equality(*scope, right);
        if (!equality) {   // a base table always shares a bigint with a base table
          used_ = before;  // the features of the relation dropped are not the query's
          right.clear();
          item = FromItem(depth, &right, true);
          equality = Equality(*scope, right);
        }
        if (!equality) kind = Feature::kCrossJoin;
        if (kind == Feature::kCrossJoin && !On(Feature::kCrossJoin)) {
          used_ = before;
          break;
        }
      }
      Use(kind);
      if (kind == Feature::kCrossJoin) {
        sql += " CROSS JOIN " + item;
      } else {
        std::string on = *equality;
        if (random_.Percent(30)) {
          if (std::optional<std::string> second = Equality(*scope, right)) on += " AND " + *second;
        }
        // PostgreSQL runs a FULL JOIN only on hashable or mergeable conditions: equalities.
        if (kind != Feature::kFullJoin && random_.Percent(35)) {
          const bool on_right = random_.Percent(50);
          const bool preserved = (kind == Feature::kLeftJoin && !on_right) ||
                                 (kind == Feature::kRightJoin && on_right);
          const Feature residual_feature =
              preserved ? Feature::kJoinResidualPreserved : Feature::kJoinResidual;
          if (On(residual_feature)) {
            Use(residual_feature);
            const std::string residual = SideCondition(on_right ? right : *scope);
            on += " AND " + residual;
          }
        }
        static const char* kKeyword[] = {"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"};
        const std::size_t k =
            static_cast<std::size_t>(kind) - static_cast<std::size_t>(Feature::kInnerJoin);
        sql += std::string(" ") + kKeyword[k] + " " + item + " ON " + on;
      }
      scope->insert(scope->end(), right.begin(), right.end());
    }
    return sql;
  }

  // A GROUP BY key computed from `column`: (a1.i2 + 3), COALESCE(a1.s3, 'b'), (NOT a1.b4).
  // PostgreSQL lets the SELECT list and HAVING name it by the same expression.
  ScopeColumn KeyExpression(const ScopeColumn& column) {
    ScopeColumn key = column;
    key.base = false;
    key.expression = true;
    switch (column.type) {
      case SqlType::kBigint:
      case SqlType::kDouble:
        key.sql = "(" + column.sql + " + " + Literal(column.type) + ")";
        break;
      case SqlType::kText:
        key.sql = "COALESCE(" + column.sql + ", " + Literal(column.type) + ")";
        break;
      case SqlType::kBool:
        key.sql = "(NOT " + column.sql + ")";
        break;
      case SqlType::kInt4:
      case SqlType::kNumeric:
      case SqlType::kDate:  // date + integer
        key.sql = "(" + column.sql + " + " + std::to_string(random_.Between(1, 3)) + ")";
        break;
      case SqlType::kTimestamp:
      case SqlType::kInterval:
      case SqlType::kInt2:
      case SqlType::kFloat4:
      case SqlType::kBytea:
      case SqlType::kTime:
      case SqlType::kTimestampTz:
      case SqlType::kUuid:
      case SqlType::kChar:
        key.sql = "COALESCE(" + column.sql + ", " + Literal(column.type) + ")";
        break;
      case SqlType::kNumeric12_4:  // column types only: a scope holds expression types
      case SqlType::kNumericAny:
      case SqlType::kVarchar:
        key.sql = column.sql;
        break;
    }
    return key;
  }

  // ---- IN / EXISTS

  std::string SubqueryConjunct(int depth, const Scope& outer) {
    std::vector<Feature> kinds;
    for (Feature f :
         {Feature::kInSubquery, Feature::kNotInSubquery, Feature::kExists, Feature::kNotExists}) {
      if (On(f)) kinds.push_back(f);
    }
    const Feature kind = random_.Pick(kinds);
    Use(kind);
    const bool in = kind == Feature::kInSubquery || kind == Feature::kNotInSubquery;
    const SqlType type = TypeInScope(outer);
    const std::string operand = in ? Expr(type, outer, 2) : "";
    const int outer_depth = query_depth_;
    query_depth_ = depth + 1;
    Scope inner;
    const std::string from = FromItem(depth + 1, &inner);
    std::vector<std::string> conditions;
    if (On(Feature::kCorrelated) && random_.Percent(50)) {
      if (std::optional<std::string> equality = Equality(inner, outer)) {
        Use(Feature::kCorrelated);
        conditions.push_back(*equality);
      }
    }
    if (random_.Percent(50)) conditions.push_back(Predicate(inner, 1));
    std::string where;
    for (std::size_t i = 0; i < conditions.size(); ++i) {
      where += (i == 0 ? " WHERE " : " AND ") + conditions[i];
    }
    const std::string selected = in ? Expr(type, inner, 2) : "1";
    query_depth_ = outer_depth;
    if (in) {
      return operand + (kind == Feature::kInSubquery ? " IN" : " NOT IN") + " (SELECT " + selected +
             " FROM " + from + where + ")";
    }
    return std::string(kind == Feature::kExists ? "EXISTS" : "NOT EXISTS") + " (SELECT 1 FROM " +
           from + where + ")";
  }

  // A subquery of one row and one column of `type`: an aggregate without GROUP BY, maybe
  // correlated by an equality with `outer`: (SELECT max(a4.i1) FROM t2 AS a4 WHERE a4.k = a0.i2).
  std::string ScalarSubquery(SqlType type, const Scope& outer) {
    Use(Feature::kScalarSubquery);
    const int outer_depth = query_depth_;
    query_depth_ = outer_depth + 1;
    Scope inner;
    const std::string from = FromItem(query_depth_, &inner);
    std::string where;
    if (On(Feature::kCorrelated) && random_.Percent(60)) {
      if (std::optional<std::string> equality = Equality(inner, outer)) {
        Use(Feature::kCorrelated);
        where = " WHERE " + *equality;
      }
    }
    bool unused = false;
    const std::string aggregate = Aggregate(type, inner, false, &unused);
    query_depth_ = outer_depth;
    return "(SELECT " + aggregate + " FROM " + from + where + ")";
  }

  // ---- aggregates

  // An aggregate call of result type `type` over `scope` (bool: an aggregate compared with a
  // literal). `allow_approximate`: avg may be chosen (then *approximate is set).
  std::string Aggregate(SqlType type, const Scope& scope, bool allow_approximate,
                        bool* approximate) {
    static const std::vector<std::string> kMinMax = {"min", "max"};
    switch (type) {
      case SqlType::kBigint: {
        if (new_types_ && On(Feature::kTypedAggregates) && random_.Percent(15)) {
          Use(Feature::kTypedAggregates);  // sum of smallint or integer is bigint
          const std::string arg =
              Expr(random_.Percent(50) ? SqlType::kInt2 : SqlType::kInt4, scope, 1);
          return "sum(" + arg + ")";
        }
        const std::uint64_t choice = random_.Below(100);
        if (choice < 20) return "count(*)";
        if (choice < 35) {
          const std::string arg = Expr(RandomType(), scope, 2);
          return "count(" + arg + ")";
        }
        if (choice < 45 && On(Feature::kCountDistinct)) {
          Use(Feature::kCountDistinct);
          const std::string arg = Expr(TypeInScope(scope), scope, 2);
          return "count(DISTINCT " + arg + ")";
        }
        const std::string arg = Expr(SqlType::kBigint, scope, 1);
        if (choice < 70) return "sum(" + arg + ")";
        return random_.Pick(kMinMax) + "(" + arg + ")";
      }
      case SqlType::kDouble: {
        if (new_types_ && allow_approximate && On(Feature::kTypedAggregates) &&
            random_.Percent(15)) {
          Use(Feature::kTypedAggregates);  // avg of smallint, integer (numeric) or real
          *approximate = true;
          static const std::vector<SqlType> kAveraged = {SqlType::kInt2, SqlType::kInt4,
                                                         SqlType::kFloat4};
          const std::string arg = Expr(random_.Pick(kAveraged), scope, 1);
          return "avg(" + arg + ")";
        }
        const std::uint64_t choice = random_.Below(100);
        const bool of_bigint = random_.Percent(50);
        const Feature avg = of_bigint ? Feature::kAvgBigint : Feature::kAvg;
        if (choice < 30 && allow_approximate && On(avg)) {
          Use(avg);
          *approximate = true;
          const std::string arg = Expr(of_bigint ? SqlType::kBigint : SqlType::kDouble, scope, 1);
          return "avg(" + arg + ")";
        }
        const std::string arg = Expr(SqlType::kDouble, scope, 1);
        if (choice < 60) return "sum(" + arg + ")";
        return random_.Pick(kMinMax) + "(" + arg + ")";
      }
      case SqlType::kText: {
        const std::string arg = Expr(type, scope, 1);
        return random_.Pick(kMinMax) + "(" + arg + ")";
      }
      case SqlType::kBool:
        break;
      default:  // the types of DESIGN §16
        return TypedAggregate(type, scope, allow_approximate, approximate);
    }
    return HavingComparison(scope);
  }

  // Aggregate(type, …) makes an aggregate (one row without GROUP BY), not a literal: the new
  // types need kTypedAggregates, uuid and bytea kCast too.
  bool Aggregable(SqlType type) const {
    if (!IsNewType(type)) return true;
    if (!On(Feature::kTypedAggregates)) return false;
    return (type != SqlType::kUuid && type != SqlType::kBytea) || On(Feature::kCast);
  }

  // An aggregate of a type of DESIGN §16 (REQUIRES: IsNewType(type), not boolean): sum of
  // numeric and interval (of smallint and integer: Aggregate's bigint); avg of numeric and interval
  // (approximate); min and max of every type that has them; of uuid and bytea, min or max of
  // their text cast back (PostgreSQL 15 has no min(uuid) nor min(bytea), and their text orders
  // as they do). When !Aggregable(type), a literal: a constant of an aggregating query (no scalar
  // subquery is drawn of such a type: its rows would not be one).
  std::string TypedAggregate(SqlType type, const Scope& scope, bool allow_approximate,
                             bool* approximate) {
    static const std::vector<std::string> kMinMax = {"min", "max"};
    const bool through_text = type == SqlType::kUuid || type == SqlType::kBytea;
    if (!Aggregable(type)) return Literal(type);
    Use(Feature::kTypedAggregates);
    const std::string arg = Expr(type, scope, 1);
    const std::string& extreme = random_.Pick(kMinMax);
    if (through_text) {
      Use(Feature::kCast);
      return "(" + extreme + "((" + arg + ")::text))::" + SqlTypeName(type);
    }
    // No sum of real: PostgreSQL adds in real, and a real cast from a square root or a numeric is
    // no quarter, so its sum would depend on the order of the additions beyond the tolerance.
    const bool summable = type == SqlType::kNumeric || type == SqlType::kInterval;
    const bool averaged = type == SqlType::kNumeric || type == SqlType::kInterval;
    const std::uint64_t choice = random_.Below(100);
    if (choice < 25 && averaged && allow_approximate) {
      *approximate = true;
      return "avg(" + arg + ")";
    }
    if (choice < 60 && summable) return "sum(" + arg + ")";
    return extreme + "(" + arg + ")";
  }

  // An aggregate compared with a literal: count(*) > 2, avg(a1.i1) >= 1, min(a1.s2) = 'b'.
  std::string HavingComparison(const Scope& scope) {
    static const std::vector<std::string> kOps = {"=", "<>", "<", "<=", ">", ">="};
    const std::string& op = random_.Pick(kOps);
    const std::uint64_t choice = random_.Below(100);
    if (choice < 55) {
      bool unused = false;
      const std::string aggregate = Aggregate(SqlType::kBigint, scope, false, &unused);
      return "(" + aggregate + " " + op + " " + std::to_string(random_.Between(0, 4)) + ")";
    }
    const bool of_bigint = random_.Percent(50);
    const Feature avg = of_bigint ? Feature::kAvgBigint : Feature::kAvg;
    if (choice < 80 && On(avg)) {
      // An average equals an integer exactly or differs from it by at least 1/count: the
      // comparison is the same for numeric and float averages.
      Use(avg);
      const std::string arg = Expr(of_bigint ? SqlType::kBigint : SqlType::kDouble, scope, 1);
      return "(avg(" + arg + ") " + op + " " + std::to_string(random_.Between(-1, 6)) + ")";
    }
    const SqlType type = random_.Percent(50) ? SqlType::kText : SqlType::kDouble;
    bool unused = false;
    const std::string aggregate = Aggregate(type, scope, false, &unused);
    const std::string literal = Literal(type);
    return "(" + aggregate + " " + op + " " + literal + ")";
  }

  // ---- queries

  // A SELECT or a set operation, without ORDER BY; its output columns c0… in *out. `shape`:
  // the types the output must have (set operation branches), none approximate.
  std::string Body(int depth, const std::vector<SqlType>* shape, std::vector<OutputColumn>* out) {
    // Nested queries are simpler than their query (plans nest, and engines bound their depth).
    const Complexity outer = complexity_;
    complexity_ = static_cast<Complexity>(std::min<int>(outer, kMaxQueryDepth - depth));
    std::string sql = BodyAtComplexity(depth, shape, out);
    complexity_ = outer;
    return sql;
  }

  std::string BodyAtComplexity(int depth, const std::vector<SqlType>* shape,
                               std::vector<OutputColumn>* out) {
    std::vector<Feature> ops;
    for (Feature f : {Feature::kUnion, Feature::kUnionAll, Feature::kExcept, Feature::kExceptAll,
                      Feature::kIntersect, Feature::kIntersectAll}) {
      if (On(f)) ops.push_back(f);
    }
    if (!ops.empty() && random_.Percent(depth == 0 ? 20 : 12)) {
      std::vector<SqlType> own;
      if (shape == nullptr) {
        const int width = static_cast<int>(random_.Between(1, 3));
        for (int i = 0; i < width; ++i) own.push_back(RandomType());
        shape = &own;
      }
      static const char* kOps[] = {"UNION",      "UNION ALL", "EXCEPT",
                                   "EXCEPT ALL", "INTERSECT", "INTERSECT ALL"};
      const int branches = random_.Percent(80) ? 2 : 3;
      // Branches over one table mostly, so that INTERSECT and EXCEPT meet common rows.
      const int outer_preferred = preferred_table_;
      preferred_table_ = static_cast<int>(random_.Below(tables_.size()));
      std::vector<OutputColumn> ignored;
      const bool outer_in_set_operation = in_set_operation_;
      in_set_operation_ = true;
      std::string sql = Select(depth, shape, &ignored);
      for (int b = 1; b < branches; ++b) {
        const Feature op = random_.Pick(ops);
        Use(op);
        const std::string branch = Select(depth, shape, &ignored);
        if (b == 2) sql = "(" + sql + ")";
        sql += std::string(" ") +
               kOps[static_cast<std::size_t>(op) - static_cast<std::size_t>(Feature::kUnion)] +
               " " + branch;
      }
      preferred_table_ = outer_preferred;
      in_set_operation_ = outer_in_set_operation;
      out->clear();
      for (SqlType t : *shape) out->push_back(OutputColumn{t, false});
      return sql;
    }
    return Select(depth, shape, out);
  }

  std::string Select(int depth, const std::vector<SqlType>* shape, std::vector<OutputColumn>* out) {
    const int outer_depth = query_depth_;
    query_depth_ = depth;
    std::string sql = SelectAtDepth(depth, shape, out);
    query_depth_ = outer_depth;
    return sql;
  }

  std::string SelectAtDepth(int depth, const std::vector<SqlType>* shape,
                            std::vector<OutputColumn>* out) {
    Scope scope;
    std::string from;
    if (On(Feature::kSelectWithoutFrom) && random_.Percent(4)) {
      Use(Feature::kSelectWithoutFrom);  // no columns: every expression is of constants
    } else {
      from = FromClause(depth, &scope);
    }
    std::vector<std::string> conjuncts;
    if (On(Feature::kWhere) && random_.Percent(55)) {
      Use(Feature::kWhere);
      conjuncts.push_back(Predicate(scope, 0));
    }
    if (depth < kMaxQueryDepth &&
        (On(Feature::kInSubquery) || On(Feature::kNotInSubquery) || On(Feature::kExists) ||
         On(Feature::kNotExists)) &&
        random_.Percent(10 + 15 * complexity_)) {
      conjuncts.push_back(SubqueryConjunct(depth, scope));
    }
    bool aggregate =
        (On(Feature::kGroupBy) || On(Feature::kGlobalAggregate)) && random_.Percent(30);
    bool grouped = aggregate && On(Feature::kGroupBy) &&
                   (!On(Feature::kGlobalAggregate) || random_.Percent(75));
    Scope keys;
    if (grouped) {
      std::vector<const ScopeColumn*> candidates;
      for (const ScopeColumn& c : scope) {
        if (!c.approximate) candidates.push_back(&c);
      }
      const int count = static_cast<int>(random_.Between(1, 2));
      for (int i = 0; i < count && !candidates.empty(); ++i) {
        const std::size_t k = random_.Below(candidates.size());
        if (On(Feature::kGroupByExpression) && random_.Percent(25)) {
          Use(Feature::kGroupByExpression);
          keys.push_back(KeyExpression(*candidates[k]));
        } else {
          keys.push_back(*candidates[k]);
        }
        keys.back().key = true;
        candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(k));
      }
      if (keys.empty()) grouped = false;
    }
    if (aggregate && !grouped && !On(Feature::kGlobalAggregate)) aggregate = false;

    const int width = shape != nullptr ? static_cast<int>(shape->size())
                                       : static_cast<int>(random_.Between(1, 4));
    std::vector<std::string> items;
    out->clear();
    for (int i = 0; i < width; ++i) {
      const SqlType type = shape != nullptr ? (*shape)[static_cast<std::size_t>(i)] : RandomType();
      bool approximate = false;
      std::string item;
      if (aggregate) {
        if (grouped && random_.Percent(35)) {
          item = Expr(type, keys, 1);
        } else {
          item = Aggregate(type, scope, shape == nullptr, &approximate);
        }
      } else {
        std::vector<const ScopeColumn*> shown;
        for (const ScopeColumn& c : scope) {
          if (c.approximate) shown.push_back(&c);
        }
        if (shape == nullptr && !shown.empty() && random_.Percent(25)) {
          const ScopeColumn* c = random_.Pick(shown);
          item = c->sql;
          approximate = true;
          out->push_back(OutputColumn{c->type, true});
          items.push_back(item + " AS c" + std::to_string(i));
          continue;
        }
        item = Expr(type, scope, 0);
      }
      out->push_back(OutputColumn{type, approximate});
      items.push_back(item + " AS c" + std::to_string(i));
    }
    std::string sql = "SELECT ";
    const bool distinct = On(Feature::kDistinct) && random_.Percent(15);
    if (distinct) {
      Use(Feature::kDistinct);
      sql += "DISTINCT ";
    }
    if (depth == 0 && !in_set_operation_) {
      hidden_candidates_.clear();
      if (!aggregate && !distinct) {
        for (const ScopeColumn& c : scope) {
          if (!c.approximate) hidden_candidates_.push_back(c.sql);
        }
      }
    }
    for (std::size_t i = 0; i < items.size(); ++i) sql += (i == 0 ? "" : ", ") + items[i];
    if (!from.empty()) sql += " FROM " + from;
    for (std::size_t i = 0; i < conjuncts.size(); ++i) {
      sql += (i == 0 ? " WHERE " : " AND ") + conjuncts[i];
    }
    if (aggregate) {
      Use(grouped ? Feature::kGroupBy : Feature::kGlobalAggregate);
      if (grouped) {
        sql += " GROUP BY ";
        for (std::size_t k = 0; k < keys.size(); ++k) sql += (k == 0 ? "" : ", ") + keys[k].sql;
        if (On(Feature::kHaving) && random_.Percent(40)) {
          Use(Feature::kHaving);
          std::string having = HavingComparison(scope);
          if (random_.Percent(30)) {
            const std::string more = Predicate(keys, 2);
            having += (random_.Percent(50) ? " AND " : " OR ") + more;
          }
          sql += " HAVING " + having;
        }
      } else if (On(Feature::kHavingWithoutGroupBy) && random_.Percent(25)) {
        Use(Feature::kHavingWithoutGroupBy);  // one row or none
        sql += " HAVING " + HavingComparison(scope);
      }
    }
    return sql;
  }

  const std::vector<TableSchema>& tables_;
  const FeatureSet& enabled_;
  // The tables have columns of DESIGN §16's types: every expression type and the features of
  // their functions are drawn (never otherwise: the draws without them are as before them).
  bool new_types_;
  Random random_;
  Complexity complexity_ = kSimple;
  int preferred_table_ = -1;       // a table FROM items prefer (within a set operation), or -1
  bool in_set_operation_ = false;  // generating the branches of a set operation
  int query_depth_ = 0;            // the nesting of the query whose expressions are being made
  // Making an operand whose interval's spelling shows in the result (OneSpelling): its
  // intervals are literals and base tables' columns, never a key, a subquery's column, min,
  // max, GREATEST or LEAST, which choose among equal spellings.
  bool one_spelling_ = false;
  // The top-level SELECT's columns an ORDER BY may name without showing them (a plain SELECT's:
  // not aggregating, not DISTINCT, not a set operation).
  std::vector<std::string> hidden_candidates_;
  FeatureSet used_;
  int next_alias_ = 0;
  std::vector<CommonTable> ctes_;
};

}  // namespace

QueryGenerator::QueryGenerator(std::vector<TableSchema> tables, FeatureSet enabled)
    : tables_(std::move(tables)), enabled_(enabled) {
  for (const TableSchema& table : tables_) {
    for (const ColumnSchema& column : table.columns) new_types_ |= IsNewType(column.type);
  }
}

GeneratedQuery QueryGenerator::Generate(std::uint64_t seed) const {
  return QueryBuilder(tables_, enabled_, new_types_, seed).Build();
}

}  // namespace tandem::testing::sql_oracle
