#include "workers/plan_graph.h"

#include <functional>
#include <map>

#include "base/check.h"
#include "ipc/model.h"
#include "workers/operators/cached.h"
#include "workers/operators/distinct.h"
#include "workers/operators/mfp.h"
#include "workers/operators/reduce.h"
#include "workers/operators/union.h"

namespace tandem::workers {

namespace pb = ipc::pb;

PlanGraph BuildPlanGraph(const pb::DataflowDescription& desc, std::vector<PlanInput> inputs) {
  PlanGraph g;
  struct Named {
    CachedNode* node;
    const std::vector<std::uint32_t>* arranged_by;
    ImportedIndex* index = nullptr;
  };
  const Time as_of = desc.as_of().elements(0);
  const Frontier until = ipc::FrontierOf(desc.until());
  std::map<std::string, Named> named;
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
    for (const std::string& name : in.names) named[name] = {node, &keys.back(), in.index};
  }
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
        g.nodes.push_back(std::make_unique<MfpNode>(in, Mfp(p.mfp().mfp(), 0)));
        return g.nodes.back().get();
      }
      case pb::Plan::kReduce: {
        const pb::Plan& input = p.reduce().input();
        if (input.has_get()) {
          auto it = named.find(input.get().id());
          const std::vector<std::uint32_t> group(p.reduce().group_key().begin(),
                                                 p.reduce().group_key().end());
          if (it != named.end() && it->second.index && *it->second.arranged_by == group) {
            g.nodes.push_back(MakeArrangedReduce(it->second.index, p.reduce(), as_of, until));
            return g.nodes.back().get();
          }
        }
        Node* in = build(input);
        g.nodes.push_back(MakeReduce(in, p.reduce()));
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
        g.nodes.push_back(std::make_unique<DistinctNode>(in));
        return g.nodes.back().get();
      }
      default:
        TANDEM_CHECK(false, "an empty plan passed validation");
    }
    return nullptr;
  };
  for (const pb::BuildDesc& b : desc.objects_to_build()) {
    named[b.id()] = {cached(build(b.plan())), &kNotArranged};
  }
  for (const pb::IndexExport& e : desc.index_exports()) {
    CachedNode* on = named.at(e.on()).node;
    on->AddConsumer();
    g.exports.emplace_back(on, &e);
  }
  return g;
}

}  // namespace tandem::workers
