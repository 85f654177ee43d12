#include "controller/imports.h"

#include <algorithm>

namespace tandem::controller {

pb::Command NewDataflow(const std::string& debug_name) {
  pb::Command c;
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  d->set_debug_name(debug_name);
  d->set_class_(pb::MAINTAINED);
  d->mutable_as_of()->add_elements(0);
  return c;
}

const pb::IndexImport& Input::ImportFor(const std::vector<std::uint32_t>& key) const {
  for (const auto& i : indexes) {
    if (std::equal(i.key().begin(), i.key().end(), key.begin(), key.end())) return i;
  }
  return indexes.front();
}

Result<Input> ResolveInput(const History& h, const std::string& on) {
  Input in;
  in.collection = on;
  in.pending = h.PendingSource(on);
  if (in.pending) {
    in.schema = in.pending->schema();
    return in;
  }
  const auto info = h.Lookup(on);
  if (!info || !h.LiveIds().count(on)) {
    return Status::NotFound(on +
                            " is not a source or collection this controller created (state "
                            "file " +
                            h.path() + "); create it first, e.g. create-source " + on +
                            " --log FILE");
  }
  in.schema = info->schema;
  auto add = [&](const std::string& id, const std::string& collection,
                 const std::vector<std::uint32_t>& key) {
    pb::IndexImport i;
    i.set_id(id);
    i.set_on(collection);
    *i.mutable_schema() = in.schema;
    for (auto k : key) i.add_key(k);
    in.indexes.push_back(std::move(i));
  };
  if (info->is_index) {
    in.collection = info->on;
    add(on, info->on, info->key);
  } else {
    for (const auto& [id, key] : h.IndexesOn(on)) add(id, on, key);
  }
  if (in.indexes.empty()) {
    return Status::FailedPrecondition(on +
                                      " has no index, so nothing can read it: a dataflow reads "
                                      "another's collection by importing an index of it");
  }
  return in;
}

std::string AddInput(const History& h, const Input& in, const std::vector<std::uint32_t>& key,
                     pb::Command& c) {
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  if (in.pending) {
    *d->add_source_imports() = *in.pending;
    return "";
  }
  const pb::IndexImport& import = in.ImportFor(key);
  *d->add_index_imports() = import;
  if (d->class_() == pb::MAINTAINED) {
    d->mutable_as_of()->Clear();
    d->mutable_as_of()->add_elements(h.ReadableFrom(import.id()));
  }
  return import.id();
}

std::vector<std::string> AddInputs(const History& h, const Input& in,
                                   const std::vector<Input>& joined,
                                   const std::vector<std::vector<std::uint32_t>>& import_keys,
                                   pb::Command& c) {
  auto* d = c.mutable_create_dataflow()->mutable_desc();
  std::vector<std::string> ids;
  std::uint64_t as_of = 0;
  auto add = [&](const Input& input, const std::vector<std::uint32_t>& key) {
    if (input.pending) {
      for (const auto& s : d->source_imports()) {
        if (s.id() == input.pending->id()) return;
      }
      *d->add_source_imports() = *input.pending;
      ids.emplace_back();
      return;
    }
    const pb::IndexImport& import = input.ImportFor(key);
    for (const auto& i : d->index_imports()) {
      if (i.id() == import.id()) return;
    }
    *d->add_index_imports() = import;
    ids.push_back(import.id());
    as_of = std::max(as_of, h.ReadableFrom(import.id()));
  };
  add(in, import_keys.at(0));
  for (std::size_t i = 0; i < joined.size(); ++i) add(joined[i], import_keys.at(i + 1));
  if (d->class_() == pb::MAINTAINED && d->index_imports_size() > 0) {
    d->mutable_as_of()->Clear();
    d->mutable_as_of()->add_elements(as_of);
  }
  return ids;
}

}  // namespace tandem::controller
