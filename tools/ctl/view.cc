#include "tools/ctl/view.h"

#include <map>
#include <utility>

#include "ipc/plan_typing.h"
#include "tools/ctl/output.h"
#include "tools/ctl/session.h"

namespace tandem::ctl {
namespace {

std::vector<std::string> SplitOn(const std::string& text, char sep) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

ViewRefusal UsageError(std::string why) { return {true, std::move(why)}; }
ViewRefusal Refusal(std::string why) { return {false, std::move(why)}; }

// "id is int64": a column for a reason text.
std::string Described(const pb::Schema& schema, std::uint32_t column) {
  return ColumnName(schema, static_cast<int>(column)) + " is " +
         TypeName(schema.columns(static_cast<int>(column)).type());
}

// One column of `schema` by name or position.
std::optional<ViewRefusal> OneColumn(const std::string& text, const pb::Schema& schema,
                                     const std::string& what, std::uint32_t& out) {
  auto cols = ParseColumns(text, schema);
  if (!cols.ok()) return Refusal(what + ": " + cols.status().message());
  if (cols->size() != 1) return UsageError(what + ": one column");
  if ((*cols)[0] >= static_cast<std::uint32_t>(schema.columns_size())) {
    return Refusal(what + ": column " + std::to_string((*cols)[0]) + " out of range: there are " +
                   std::to_string(schema.columns_size()) + " columns");
  }
  out = (*cols)[0];
  return std::nullopt;
}

// Joins `left` (reading columns `left_schema`) with input `right`, as `j` says.
std::optional<ViewRefusal> AddJoin(const JoinOption& j, const ViewInput& right,
                                   const pb::Schema& left_schema, pb::Plan& left,
                                   std::vector<std::uint32_t>& left_key,
                                   std::vector<std::uint32_t>& right_key) {
  const std::string what = "--join " + j.with;
  if (j.on.empty()) {
    return UsageError(what +
                      ": needs --join-on LEFT=RIGHT (a column of what it joins, = a "
                      "column of " +
                      j.with + "; repeatable for a key of several columns)");
  }
  for (const std::string& pair : j.on) {
    const std::string on_what = what + " --join-on " + pair;
    const auto eq = pair.find('=');
    if (eq == std::string::npos || pair.find('=', eq + 1) != std::string::npos) {
      return UsageError(on_what + ": expected LEFT=RIGHT");
    }
    std::uint32_t l = 0;
    std::uint32_t r = 0;
    if (auto bad = OneColumn(Trim(pair.substr(0, eq)), left_schema, on_what + ": left", l)) {
      return bad;
    }
    if (auto bad = OneColumn(Trim(pair.substr(eq + 1)), right.schema,
                             on_what + ": right (" + j.with + ")", r)) {
      return bad;
    }
    const auto lt = left_schema.columns(static_cast<int>(l)).type();
    const auto rt = right.schema.columns(static_cast<int>(r)).type();
    if (lt != rt) {
      return Refusal(on_what + ": " + Described(left_schema, l) + ", " + j.with + "'s " +
                     Described(right.schema, r) + " (a join key pairs columns of one type)");
    }
    left_key.push_back(l);
    right_key.push_back(r);
  }
  pb::Plan joined;
  auto* join = joined.mutable_join();
  *join->mutable_left() = std::move(left);
  join->mutable_right()->mutable_get()->set_id(right.collection);
  for (auto k : left_key) join->add_left_key(k);
  for (auto k : right_key) join->add_right_key(k);
  join->set_kind(j.left_outer ? pb::LEFT_OUTER : pb::INNER);
  left = std::move(joined);
  return std::nullopt;
}

std::optional<ViewRefusal> AddAggregate(const std::string& text, const pb::Schema& schema,
                                        pb::Aggregate& agg) {
  static const std::map<std::string, pb::AggregateFunc> kFuncs = {
      {"count", pb::COUNT_NON_NULL},
      {"count-distinct", pb::COUNT_DISTINCT},
      {"sum", pb::SUM},
      {"min", pb::MIN},
      {"max", pb::MAX},
      {"avg", pb::AVG},
      {"any", pb::ANY},
      {"all", pb::ALL}};
  const auto colon = text.find(':');
  const std::string func = text.substr(0, colon);
  if (func == "count" && colon == std::string::npos) {
    agg.set_func(pb::COUNT);
    return std::nullopt;
  }
  const auto it = kFuncs.find(func);
  if (colon == std::string::npos || it == kFuncs.end()) {
    return UsageError("--aggregate \"" + text + "\": expected " + kAggregateHelp);
  }
  agg.set_func(it->second);
  auto col = ParseColumns(text.substr(colon + 1), schema);
  if (!col.ok()) return Refusal("--aggregate " + text + ": " + col.status().message());
  if (col->size() != 1) return UsageError("--aggregate " + text + ": one column");
  const std::uint32_t c = (*col)[0];
  agg.set_column(c);
  if (c >= static_cast<std::uint32_t>(schema.columns_size())) return std::nullopt;  // validated
  const pb::ScalarType type = schema.columns(static_cast<int>(c)).type();
  const bool numeric = type == pb::INT64 || type == pb::FLOAT64;
  if ((func == "sum" || func == "avg") && !numeric) {
    return Refusal("--aggregate " + text + ": " + func + " needs an int64 or float64 column, " +
                   Described(schema, c));
  }
  if ((func == "any" || func == "all") && type != pb::BOOL) {
    return Refusal("--aggregate " + text + ": " + func + " needs a bool column, " +
                   Described(schema, c));
  }
  return std::nullopt;
}

// --by COL[:asc|:desc][:nulls-first|:nulls-last],...
std::optional<ViewRefusal> AddOrderBy(const std::string& text, const pb::Schema& schema,
                                      pb::Plan::TopK& top_k) {
  for (const std::string& item : SplitOn(text, ',')) {
    const auto parts = SplitOn(Trim(item), ':');
    pb::ColumnOrder order;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const std::string& word = parts[i];
      if (word == "desc" || word == "asc") {
        order.set_desc(word == "desc");
      } else if (word == "nulls-last" || word == "nulls-first") {
        order.set_nulls_last(word == "nulls-last");
      } else {
        return UsageError(
            "--by " + text + ": \"" + word +
            "\" is not asc, desc, nulls-first or nulls-last (COL[:desc][:nulls-last])");
      }
    }
    std::uint32_t column = 0;
    if (auto bad = OneColumn(parts[0], schema, "--by " + text, column)) return bad;
    order.set_column(column);
    *top_k.add_order_by() = std::move(order);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ViewRefusal> PlanView(const ViewOptions& o, const std::vector<ViewInput>& inputs,
                                    View& out) {
  if (o.misplaced) {
    return UsageError(*o.misplaced +
                      " comes before any --join (it belongs to the --join before it)");
  }
  if (inputs.size() != 1 + o.joins.size()) return UsageError("one input for --on and each --join");
  std::map<std::string, pb::Schema> scope;
  for (const auto& in : inputs) scope.emplace(in.collection, in.schema);
  // The joins, left-deep: --on ⋈ first --join ⋈ second --join ...
  pb::Plan plan;
  plan.mutable_get()->set_id(inputs[0].collection);
  pb::Schema schema = inputs[0].schema;
  out.import_keys.assign(inputs.size(), {});
  for (std::size_t i = 0; i < o.joins.size(); ++i) {
    std::vector<std::uint32_t> left_key;
    if (auto bad =
            AddJoin(o.joins[i], inputs[i + 1], schema, plan, left_key, out.import_keys[i + 1])) {
      return bad;
    }
    if (i == 0) out.import_keys[0] = left_key;
    auto joined = ipc::PlanSchema(plan, scope);
    if (!joined.ok()) return Refusal(joined.status().message());
    schema = *joined;
  }

  if (o.group_by) {
    auto g = ParseColumns(*o.group_by, schema);
    if (!g.ok()) return Refusal("--group-by: " + g.status().message());
    out.group = *g;
  }
  if (o.group_by || !o.aggregates.empty()) {
    pb::Plan reduced;
    auto* r = reduced.mutable_reduce();
    for (auto g : out.group) r->add_group_key(g);
    for (const auto& text : o.aggregates) {
      if (auto bad = AddAggregate(text, schema, *r->add_aggregates())) return bad;
    }
    *r->mutable_input() = std::move(plan);
    plan = std::move(reduced);
    if (o.joins.empty()) out.import_keys[0] = out.group;
    auto planned = ipc::PlanSchema(plan, scope);
    if (!planned.ok()) return Refusal(planned.status().message());
    schema = *planned;
  }

  std::vector<std::uint32_t> per;
  if (o.top) {
    auto limit = ParseU64(*o.top, "--top");
    if (!limit.ok()) return UsageError(limit.status().message());
    if (*limit == 0) return UsageError("--top 0: keeps no row (give a positive number of rows)");
    pb::Plan top;
    auto* t = top.mutable_top_k();
    t->set_limit(*limit);
    if (o.offset) {
      auto offset = ParseU64(*o.offset, "--offset");
      if (!offset.ok()) return UsageError(offset.status().message());
      t->set_offset(*offset);
    }
    if (o.per) {
      auto p = ParseColumns(*o.per, schema);
      if (!p.ok()) return Refusal("--per: " + p.status().message());
      per = *p;
      for (auto c : per) t->add_group_key(c);
    }
    if (o.by) {
      if (auto bad = AddOrderBy(*o.by, schema, *t)) return bad;
    }
    *t->mutable_input() = std::move(plan);
    plan = std::move(top);
  } else if (o.by || o.per || o.offset) {
    return UsageError(std::string(o.by ? "--by" : o.per ? "--per" : "--offset") + " needs --top N");
  }

  if (!plan.has_join() && !plan.has_reduce() && !plan.has_top_k()) {
    // A copy of --on.
    pb::Plan copy;
    *copy.mutable_mfp()->mutable_input() = std::move(plan);
    copy.mutable_mfp()->mutable_mfp();
    plan = std::move(copy);
  }
  const auto planned = ipc::PlanSchema(plan, scope);
  if (!planned.ok()) return Refusal(planned.status().message());
  out.schema = *planned;
  out.plan = std::move(plan);
  if (o.key) {
    auto parsed = ParseColumns(*o.key, out.schema);
    if (!parsed.ok()) return Refusal("--key: " + parsed.status().message());
    out.key = *parsed;
  } else if (!out.group.empty()) {
    for (std::uint32_t i = 0; i < out.group.size(); ++i) out.key.push_back(i);
  } else {
    out.key = per;
  }
  if (out.key.empty()) out.key.push_back(0);
  return std::nullopt;
}

}  // namespace tandem::ctl
