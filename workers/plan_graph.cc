#include "workers/plan_graph.h"

#include <functional>
#include <map>

#include "base/check.h"
#include "ipc/model.h"
#include "ipc/plan_typing.h"
#include "workers/operators/cached.h"
#include "workers/operators/join.h"
#include "workers/operators/mfp.h"
#include "workers/operators/negate.h"
#include "workers/operators/reduce.h"
#include "workers/operators/threshold.h"
#include "workers/operators/top_k.h"
#include "workers/operators/union.h"

namespace tandem::workers {

namespace pb = ipc::pb;

PlanGraph BuildPlanGraph(const pb::DataflowDescription& desc, std::vector<PlanInput> inputs) {
  PlanGraph g;
  struct Named {
    CachedNode* node;
    const std::vector<std::uint32_t>* arranged_by;
    ImportedIndex* index = nullptr;
    std::string index_id;  // of `index`
  };
  const Time as_of = desc.as_of().elements(0);
  const Frontier until = ipc::FrontierOf(desc.until());
  std::map<std::string, Named> named;
  // Every index import under each of its names: several indexes of one collection share the name
  // `on` (a plain Get of it reads any of them: the same rows).
  std::multimap<std::string, Named> imports;
  static const std::vector<std::uint32_t> kNotArranged;
  auto cached = [&](Node* inner) {
    auto node = std::make_unique<CachedNode>(inner);
    CachedNode* raw = node.get();
    g.nodes.push_back(std::move(node));
    return raw;
  };
  std::vector<std::vector<std::uint32_t>> keys;  // the inputs' arranged_by, kept alive
  keys.reserve(inputs.size());
  for (PlanInput& in : inputs) {
    g.nodes.push_back(std::move(in.node));
    CachedNode* node = cached(g.nodes.back().get());
    keys.push_back(std::move(in.arranged_by));
    for (const std::string& name : in.names) {
      named[name] = {node, &keys.back(), in.index, in.names.front()};
      if (in.index) imports.emplace(name, named[name]);
    }
  }
  // The schemas of what the plan may Get, for a left outer join's right arity.
  std::map<std::string, pb::Schema> scope;
  for (const auto& s : desc.source_imports()) scope[s.id()] = s.schema();
  for (const auto& i : desc.index_imports()) scope[i.id()] = scope[i.on()] = i.schema();
  // The imported index that `plan` reads in place when it is a Get of an index import arranged by
  // exactly `key` (by the import's id, or by its collection when one of the collection's imports is
  // arranged so); null otherwise.
  auto arranged = [&](const pb::Plan& plan, const std::vector<std::uint32_t>& key) -> Named* {
    if (!plan.has_get()) return nullptr;
    auto [begin, end] = imports.equal_range(plan.get().id());
    for (auto it = begin; it != end; ++it) {
      if (*it->second.arranged_by == key) return &it->second;
    }
    return nullptr;
  };
  std::function<Node*(const pb::Plan&)> build = [&](const pb::Plan& p) -> Node* {
    switch (p.kind_case()) {
      case pb::Plan::kGet: {
        auto it = named.find(p.get().id());
        TANDEM_CHECK(it != named.end(), "a Get of an unknown collection passed validation");
        it->second.node->AddConsumer();
        return it->second.node;
      }
      case pb::Plan::kMfp: {
        Node* in = build(p.mfp().input());
        Result<pb::Schema> input = ipc::PlanSchema(p.mfp().input(), scope);
        TANDEM_CHECK(input.ok(), "an Mfp's input that passed validation has no schema");
        g.nodes.push_back(std::make_unique<MfpNode>(in, Mfp(p.mfp().mfp(), *input), until));
        return g.nodes.back().get();
      }
      case pb::Plan::kReduce: {
        const pb::Plan& input = p.reduce().input();
        const std::vector<std::uint32_t> group(p.reduce().group_key().begin(),
                                               p.reduce().group_key().end());
        Result<pb::Schema> input_schema = ipc::PlanSchema(input, scope);
        TANDEM_CHECK(input_schema.ok(), "a Reduce's input that passed validation has no schema");
        if (Named* index = arranged(input, group)) {
          g.nodes.push_back(
              MakeArrangedReduce(index->index, p.reduce(), *input_schema, as_of, until));
          return g.nodes.back().get();
        }
        Node* in = build(input);
        g.nodes.push_back(MakeReduce(in, p.reduce(), *input_schema));
        return g.nodes.back().get();
      }
      case pb::Plan::kUnion: {
        std::vector<Node*> ins;
        for (const auto& i : p.union_().inputs()) ins.push_back(build(i));
        g.nodes.push_back(std::make_unique<UnionNode>(std::move(ins)));
        return g.nodes.back().get();
      }
      case pb::Plan::kDistinct: {
        Node* in = build(p.distinct().input());
        g.nodes.push_back(std::make_unique<ThresholdNode>(in, ThresholdNode::Kind::kDistinct));
        return g.nodes.back().get();
      }
      case pb::Plan::kThreshold: {
        Node* in = build(p.threshold().input());
        g.nodes.push_back(std::make_unique<ThresholdNode>(in, ThresholdNode::Kind::kThreshold));
        return g.nodes.back().get();
      }
      case pb::Plan::kNegate: {
        Node* in = build(p.negate().input());
        g.nodes.push_back(std::make_unique<NegateNode>(in));
        return g.nodes.back().get();
      }
      case pb::Plan::kTopK: {
        Node* in = build(p.top_k().input());
        g.nodes.push_back(MakeTopK(in, p.top_k()));
        return g.nodes.back().get();
      }
      case pb::Plan::kJoin: {
        const pb::Plan::Join& j = p.join();
        auto side = [&](const pb::Plan& input, const auto& key_columns) {
          const std::vector<std::uint32_t> key(key_columns.begin(), key_columns.end());
          if (Named* index = arranged(input, key)) {
            return MakeImportedSide(index->index, index->index_id, key, as_of, until);
          }
          return MakeOwnSide(build(input), key);
        };
        std::unique_ptr<JoinSide> left = side(j.left(), j.left_key());
        std::unique_ptr<JoinSide> right = side(j.right(), j.right_key());
        std::size_t right_arity = 0;
        if (j.kind() == pb::LEFT_OUTER) {
          Result<pb::Schema> schema = ipc::PlanSchema(j.right(), scope);
          TANDEM_CHECK(schema.ok(), "a join's right input that passed validation has no schema");
          right_arity = static_cast<std::size_t>(schema->columns_size());
        }
        g.arrangements.push_back("join " + std::to_string(g.arrangements.size() + 1) +
                                 ": left side " + left->Describe() + ", right side " +
                                 right->Describe());
        auto join = std::make_unique<JoinNode>(
            std::move(left), std::move(right), j.kind() == pb::LEFT_OUTER, right_arity,
            std::vector<std::uint32_t>(j.left_key().begin(), j.left_key().end()));
        g.joins.push_back(join.get());
        g.nodes.push_back(std::move(join));
        return g.nodes.back().get();
      }
      default:
        TANDEM_CHECK(false, "an empty plan passed validation");
    }
    return nullptr;
  };
  for (const pb::BuildDesc& b : desc.objects_to_build()) {
    named[b.id()] = {cached(build(b.plan())), &kNotArranged, nullptr, {}};
    if (Result<pb::Schema> schema = ipc::PlanSchema(b.plan(), scope); schema.ok()) {
      scope[b.id()] = *std::move(schema);
    }
  }
  for (const pb::IndexExport& e : desc.index_exports()) {
    CachedNode* on = named.at(e.on()).node;
    on->AddConsumer();
    g.exports.emplace_back(on, &e);
  }
  return g;
}

}  // namespace tandem::workers
