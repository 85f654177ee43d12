// The reconciler (DESIGN §3, InitializationComplete): after a new controller's Hello, the
// replica holds its replayed history back until InitializationComplete, then keeps every running
// dataflow that was re-sent unchanged (it is not rebuilt), drops the ones that were not, and
// builds the new ones.
//
// Imports: a kept dataflow that imports an index of a dropped one is dropped too (its import would
// name a slot that goes away), and drops go newest first, so no index is dropped while a dataflow
// still imports it.
//
// It tracks what runs — each live dataflow's fingerprint (its deterministic encoding) and index
// exports — from the commands the runtime applies.
//
// Thread safety: none — owned by the runtime's command thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ipc/codec.h"

namespace tandem::workers {

class Reconciler {
 public:
  struct Admitted {
    std::vector<ipc::pb::Command> apply;  // in this order
    // Set when this command completed a reconciliation (its counts are to be reported).
    std::optional<ipc::pb::Status::Reconciled> reconciled;
  };

  // What to apply now for command `c`. Hello starts holding back the replay when anything runs
  // (a replay it abandons is dropped, except its WriteTables: every write is answered).
  // While holding: everything is buffered except an observer's Peek and CancelPeek (they read
  // what runs now) and a WriteTable to a table that runs now (a writer's, validated against what
  // runs: it never waits for, or is lost with, somebody else's replay); InitializationComplete
  // releases the reconciliation — first the drops of every export of the dataflows that were not
  // re-sent unchanged, then the replayed commands, without the creates of the kept dataflows.
  // Otherwise `c` itself.
  Admitted Admit(ipc::pb::Command c);

  // `c` is applied as command `seq` of the runtime's command log: creates and drops change what
  // runs. Call for every command Admit returned that the runtime applies, in order.
  void Track(const ipc::pb::Command& c, std::uint64_t seq);

  // Whether `id` is an index export of a running dataflow that is not dropped.
  bool IsLiveExport(const std::string& id) const;
  bool holding() const { return holding_; }

 private:
  struct LiveDataflow {
    std::string fingerprint;
    std::vector<std::string> exports;
    std::vector<std::string> imports;  // index imports (DESIGN §8)
    std::vector<std::string> sources;  // source imports (a table among them takes writes)
    std::set<std::string> dropped;
  };
  Admitted Reconcile();

  bool holding_ = false;
  std::vector<ipc::pb::Command> buffered_;
  std::map<std::uint64_t, LiveDataflow> live_;  // by the CreateDataflow's seq
};

}  // namespace tandem::workers
