// ReplayHistory: what every replica that connects or reconnects is replayed (DESIGN §3, §15) —
// the commands that define the replicas' state, and the indexes they leave live. The catalog owns
// the history and implements this interface; the replica driver (replica_driver.h) only reads it.
// InMemoryReplayHistory is the frontend's implementation until the durable catalog replaces it,
// and the tests'.
//
// Contract for an implementation:
//  * Commands() is the history in the order it was recorded: CreateDataflow of every maintained
//    dataflow, the drops (AllowCompaction to the empty frontier) that followed — or, after a
//    prune, only what is still live — and the compactions the catalog recorded from the driver
//    (ReplicaDriver::Options::on_compaction), if it keeps them. No one-shot read
//    (controller/one_shot.h, IsOneShot). The driver adds its latest compaction of each live index
//    to every replay after these.
//  * LiveIndexIds() are the indexes Commands() leaves live (exported, not dropped): the driver
//    keeps each of them compacted to its latest readable time minus the history window.
//  * Version() rises after every change of either (never moves back); the driver re-reads both
//    when it moved. A DDL statement records its commands (and so bumps the version) after the
//    driver's Submit of them answered and before it answers its client; nothing else moves it
//    in between (the driver replays what a Submit got accepted itself until the version moves,
//    then trusts Commands() to hold it). LiveCatalog (live_catalog.h) serialises DDL for that.
//  * Every method is thread-safe: the driver calls them on its thread while SQL threads record.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_annotations.h"
#include "ipc/codec.h"

namespace tandem::frontend {

namespace pb = ipc::pb;

class ReplayHistory {
 public:
  virtual ~ReplayHistory() = default;
  virtual std::vector<pb::Command> Commands() const = 0;
  virtual std::vector<std::string> LiveIndexIds() const = 0;
  virtual std::uint64_t Version() const = 0;
  // Whether `index_id` is an index this history handed out and no longer defines (dropped, or
  // refused and withdrawn): a replica still maintaining it runs something this frontend made
  // (reconciliation drops it), not something of another controller.
  virtual bool Dropped(std::string_view index_id) const = 0;
};

// The history in memory: lost when the frontend exits. Record keeps CreateDataflow commands and
// drops; a drop takes its index out of the live ones.
class InMemoryReplayHistory final : public ReplayHistory {
 public:
  InMemoryReplayHistory() = default;
  explicit InMemoryReplayHistory(const std::vector<pb::Command>& commands);

  // Appends `command` (a CreateDataflow, or an AllowCompaction to the empty frontier: a drop) and
  // bumps the version. Anything else (a compaction to a time, a one-shot read) is not history:
  // ignored, and false.
  bool Record(const pb::Command& command);

  std::vector<pb::Command> Commands() const override;
  std::vector<std::string> LiveIndexIds() const override;
  std::uint64_t Version() const override;
  bool Dropped(std::string_view index_id) const override;

 private:
  mutable Mutex mu_;
  std::vector<pb::Command> commands_ TANDEM_GUARDED_BY(mu_);
  std::set<std::string> live_ TANDEM_GUARDED_BY(mu_);
  std::set<std::string, std::less<>> dropped_ TANDEM_GUARDED_BY(mu_);
  std::uint64_t version_ TANDEM_GUARDED_BY(mu_) = 0;
};

}  // namespace tandem::frontend
