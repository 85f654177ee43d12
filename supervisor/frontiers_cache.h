// The latest Frontiers of every collection, as the runtimes reported them, for observers
// (DESIGN §3): an observer is sent all of them right after its HelloAccepted, then every new
// report as it comes. Runtimes report a collection's frontiers only when they move (and re-send
// them only to a new controller, never the closed ones), so without this an observer would learn
// nothing of an idle collection — or of a closed one.
//
// A closed collection (empty frontiers, e.g. a source that ended) is kept and shown as closed. A
// dropped one is forgotten with the closing report of its drop: empty frontiers of an id that
// the epoch no longer knows. Entries are per collection id, not per dataflow: the multiplexer
// keeps no per-dataflow state (DESIGN §3.1); this lives beside the sessions, in the endpoint.
//
// Thread safety: none; the supervisor's loop owns it.
#pragma once

#include <map>
#include <string>

#include "ipc/codec.h"

namespace tandem::supervisor {

class FrontiersCache {
 public:
  // Records the latest report of a collection. `known`: the collection still exists for the
  // replica (an empty report of an unknown id is its drop: the id is forgotten).
  void Record(const ipc::pb::Frontiers& frontiers, bool known);

  // By id (in id order).
  const std::map<std::string, ipc::pb::Frontiers>& latest() const { return latest_; }

 private:
  std::map<std::string, ipc::pb::Frontiers> latest_;
};

}  // namespace tandem::supervisor
