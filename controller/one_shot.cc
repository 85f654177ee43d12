#include "controller/one_shot.h"

#include <chrono>

#include "base/global_id.h"
#include "controller/compaction.h"

namespace tandem::controller {

std::pair<std::string, std::string> TransientIds() {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  const std::uint64_t n = (static_cast<std::uint64_t>(us) << 1) & GlobalId::kMaxNumber;
  return {GlobalId::Transient(n).ToString(), GlobalId::Transient(n + 1).ToString()};
}

pb::Command OneShotRead(const std::string& debug_name, Time at,
                        const std::vector<pb::IndexImport>& imports, const pb::Plan& plan,
                        const std::vector<std::uint32_t>& key, const std::string& result,
                        const std::string& build) {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name(debug_name);
  d->set_class_(pb::ONE_SHOT_READ);
  d->mutable_as_of()->add_elements(at);
  d->mutable_until()->add_elements(at + 1);
  for (const auto& import : imports) *d->add_index_imports() = import;
  auto* b = d->add_objects_to_build();
  b->set_id(build);
  *b->mutable_plan() = plan;
  auto* x = d->add_index_exports();
  x->set_id(result);
  x->set_on(build);
  for (auto k : key) x->add_key(k);
  return Canonical(c);
}

bool IsOneShot(const pb::Command& c) {
  return (c.has_create_dataflow() && c.create_dataflow().desc().class_() == pb::ONE_SHOT_READ) ||
         (c.has_allow_compaction() && c.allow_compaction().id().starts_with('t'));
}

DropOnExit::~DropOnExit() {
  if (s_.over()) return;
  auto errors = s_.client().SendChecked(Drop(id_));
  if (!errors.ok()) {
    s_.Warn("could not drop the one-shot result " + id_ + ": " + errors.status().message() +
            " (the next controller session drops it)");
    return;
  }
  for (const auto& e : *errors) s_.Warn("dropping the one-shot result: " + ReplicaRefusal(e));
}

}  // namespace tandem::controller
