#include "sql_oracle/features.h"

namespace tandem::testing::sql_oracle {

const char* FeatureName(Feature f) {
  switch (f) {
    case Feature::kWhere:
      return "where";
    case Feature::kArithmetic:
      return "arithmetic";
    case Feature::kCase:
      return "case";
    case Feature::kCoalesce:
      return "coalesce";
    case Feature::kInnerJoin:
      return "inner_join";
    case Feature::kLeftJoin:
      return "left_join";
    case Feature::kRightJoin:
      return "right_join";
    case Feature::kFullJoin:
      return "full_join";
    case Feature::kCrossJoin:
      return "cross_join";
    case Feature::kJoinResidual:
      return "join_residual";
    case Feature::kJoinResidualPreserved:
      return "join_residual_preserved";
    case Feature::kGroupBy:
      return "group_by";
    case Feature::kHaving:
      return "having";
    case Feature::kHavingWithoutGroupBy:
      return "having_without_group_by";
    case Feature::kGroupByExpression:
      return "group_by_expression";
    case Feature::kOrderByHidden:
      return "order_by_hidden";
    case Feature::kGlobalAggregate:
      return "global_aggregate";
    case Feature::kCountDistinct:
      return "count_distinct";
    case Feature::kAvg:
      return "avg";
    case Feature::kAvgBigint:
      return "avg_bigint";
    case Feature::kDistinct:
      return "distinct";
    case Feature::kUnion:
      return "union";
    case Feature::kUnionAll:
      return "union_all";
    case Feature::kExcept:
      return "except";
    case Feature::kExceptAll:
      return "except_all";
    case Feature::kIntersect:
      return "intersect";
    case Feature::kIntersectAll:
      return "intersect_all";
    case Feature::kOrderBy:
      return "order_by";
    case Feature::kLimit:
      return "limit";
    case Feature::kOffset:
      return "offset";
    case Feature::kFromSubquery:
      return "from_subquery";
    case Feature::kWith:
      return "with";
    case Feature::kInSubquery:
      return "in_subquery";
    case Feature::kExists:
      return "exists";
    case Feature::kNotExists:
      return "not_exists";
    case Feature::kNotInSubquery:
      return "not_in_subquery";
    case Feature::kSelectWithoutFrom:
      return "select_without_from";
    case Feature::kSubqueryInExpression:
      return "subquery_in_expression";
    case Feature::kScalarSubquery:
      return "scalar_subquery";
    case Feature::kCorrelated:
      return "correlated";
    case Feature::kDateTimeArithmetic:
      return "datetime_arithmetic";
    case Feature::kCast:
      return "cast";
    case Feature::kNumericFamilyComparison:
      return "numeric_family_comparison";
    case Feature::kNullifGreatestLeast:
      return "nullif_greatest_least";
    case Feature::kStringFunctions:
      return "string_functions";
    case Feature::kLike:
      return "like";
    case Feature::kMathFunctions:
      return "math_functions";
    case Feature::kDateTrunc:
      return "date_trunc";
    case Feature::kExtract:
      return "extract";
    case Feature::kTypedAggregates:
      return "typed_aggregates";
    case Feature::kNumericConstant:
      return "numeric_constant";
    case Feature::kCount:
      break;
  }
  return "?";
}

std::string FeatureSet::ToString() const {
  std::string out;
  for (std::size_t i = 0; i < kFeatureCount; ++i) {
    if (!bits_.test(i)) continue;
    if (!out.empty()) out += ',';
    out += FeatureName(static_cast<Feature>(i));
  }
  return out;
}

std::optional<FeatureSet> FeatureSet::Parse(std::string_view text) {
  FeatureSet set;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find_first_of(", ", pos);
    const std::string_view name =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    if (name.empty()) continue;
    if (name == "all") {
      set = All();
      continue;
    }
    bool found = false;
    for (std::size_t i = 0; i < kFeatureCount && !found; ++i) {
      if (name == FeatureName(static_cast<Feature>(i))) {
        set.Add(static_cast<Feature>(i));
        found = true;
      }
    }
    if (!found) return std::nullopt;
  }
  return set;
}

}  // namespace tandem::testing::sql_oracle
