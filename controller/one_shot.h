// One-shot reads (DESIGN §8): a view computed once, at one time, by the interactive runtime (the
// solo runtime in solo mode), in a controller session:
//   CreateDataflow{ONE_SHOT_READ, as_of [A], until [A+1], index_imports, objects_to_build [t<n+1>],
//                  index_exports [t<n> on t<n+1>]}
//   Peek{t<n>, A}                  answered once the result is computed
//   AllowCompaction{t<n>, empty}   drops it, on every path once the create was accepted
//   (DropOnExit)
// It is no state of a replica that a history replays: never recorded (IsOneShot). One cut short
// before its drop (killed, or the connection lost) leaves a one-shot dataflow that no history
// defines: the next controller session's reconciliation drops it, and the live-index check lets
// it go (transient ids are left out of UnknownLiveIndexes).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/time.h"
#include "controller/history.h"
#include "controller/session.h"

namespace tandem::controller {

// Fresh transient ids for one one-shot read: t<n> for its result index, t<n+1> for the view it
// builds. n is twice the clock in microseconds, so a read never reuses an id of an earlier one
// (the replica may still be dropping that).
std::pair<std::string, std::string> TransientIds();

// The one-shot read of `plan` at `at` (REQUIRES: at < kMaxTime) over `imports`, building `build`
// and exporting `result` on it keyed by `key`; canonical (history.h).
pb::Command OneShotRead(const std::string& debug_name, Time at,
                        const std::vector<pb::IndexImport>& imports, const pb::Plan& plan,
                        const std::vector<std::uint32_t>& key, const std::string& result,
                        const std::string& build);

// Whether `command` belongs to a one-shot read: its CreateDataflow, or the drop of a transient
// result. Such a command is sent, never recorded, and its drop not checked against the history.
bool IsOneShot(const pb::Command& command);

// Drops the one-shot result `id` when it goes out of scope: every path after the replica accepted
// the CreateDataflow. A session that is over cannot: reconciliation drops it then. A drop that
// fails is warned about (Session::Warn). REQUIRES: a session with one replica (not multi()).
class DropOnExit {
 public:
  DropOnExit(Session& s, std::string id) : s_(s), id_(std::move(id)) {}
  DropOnExit(const DropOnExit&) = delete;
  DropOnExit& operator=(const DropOnExit&) = delete;
  ~DropOnExit();

 private:
  Session& s_;
  std::string id_;
};

}  // namespace tandem::controller
