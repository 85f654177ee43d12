// The write ledger: a controller's record of its own table writes, per replica — what a read
// through several replicas needs to see them (read your writes; DESIGN §13, docs/ctl.md
// "Several replicas").
//
// Why it is needed. A table's time is its replica's wall clock, so a write sent to replicas A and
// B is durable on A at tA and on B at tB, rarely the same time. A peek at T with tA <= T < tB sees
// the write on A but not on B, and a peek through several replicas takes whichever answers
// first. A replica that never acknowledged a write (it was down, refused it, or the write went to
// another replica alone) does not have it at any time. So for every table this state file
// wrote, the ledger keeps per replica endpoint its *floor* — the latest time that replica
// acknowledged one of those writes at — and the writes it has not acknowledged (by uuid). A read
// of an index over such tables (ReadersOf) is answered only by the replicas that acknowledged
// every one of them, each at its floor or later.
//
// The file: `<state>.writes` beside the state file, one JSON object a line per table and replica:
//   {"table":"u1","endpoint":"tcp://127.0.0.1:2101","floor":"1796175676084","missing":["…"]}
// (times as strings: they are 64-bit). Not in the state file itself: writer sessions only read
// the state file, any number at once, while a controller session holds it for its whole length;
// and every line of the state file is a command to replay (controller/history.h). The ledger is
// changed under an exclusive lock on `<state>.writes.lock`, held only while it is read, changed and
// replaced (rename), so concurrent writes each add theirs; readers read it without the lock (a
// rename replaces it whole).
//
// Invariants:
//  * A replica's floor only rises, and a uuid leaves its `missing` only when that replica
//    acknowledges the write (a retry with the uuid is applied there once).
//  * A replica with no entry for a table the ledger has is not known to have any of this state
//    file's writes to it: it is not read from for that table. One first recorded after the table
//    had writes misses those earlier ones (kEarlierWrites) for good.
//  * A dropped table's entries go with it (ForgetTables), so a table made again under its id
//    starts clean.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "controller/history.h"
#include "controller/replica_set.h"

namespace tandem::controller {

// In ReplicaWrites::missing (no uuid is empty): the writes made before the replica was first
// sent one. Nothing clears it but a drop of the table: the ledger does not know their uuids.
inline const std::string kEarlierWrites{};

// One replica's part in the writes to one table.
struct ReplicaWrites {
  Time floor = 0;                 // the latest time it acknowledged one at
  std::set<std::string> missing;  // uuids of writes it did not acknowledge
  bool operator==(const ReplicaWrites&) const = default;
};
// table → replica endpoint → its writes.
using WriteLedger = std::map<std::string, std::map<std::string, ReplicaWrites>>;

// `<state>.writes`.
std::string WriteLedgerPath(const std::string& state);

// The ledger of state file `state` (none: empty). InvalidArgument naming the file and line of
// one that does not parse.
Result<WriteLedger> LoadWriteLedger(const std::string& state);

// One write to a table and who acknowledged it.
struct AnsweredWrite {
  std::string uuid;
  std::map<std::string, Time> acknowledged;  // endpoint → the time it answered
  std::set<std::string> sent_to;  // endpoints it was meant for (the others of them: missing)
  // Known to be applied nowhere (refused, or never sent): no replica misses it.
  bool applied_nowhere = false;
};

// Adds `write` to `ledger`'s `table`: each acknowledging endpoint's floor rises to its time and
// the uuid leaves its missing. A new uuid is missing on every other endpoint of `sent_to` and of
// the ledger's `table`; a retry (a uuid some endpoint misses) changes only those that acknowledge
// it now. An endpoint first recorded for a table that has writes misses kEarlierWrites. A write
// applied nowhere leaves every missing. A controller records each write before it sends it
// (missing everywhere: a crash before the answers never loses it), then its answers (a retry,
// then).
void Apply(WriteLedger& ledger, const std::string& table, const AnsweredWrite& write);

// What write `result` through `set` adds to the ledger: the time each replica that applied it
// answered with; applied nowhere when none did and every replica it was sent to answered (a
// refusal, or an error: not applied there). One that did not answer may have applied it: then the
// others stay missing it.
AnsweredWrite AnsweredBy(const ReplicaSet& set, const ReplicaSet::WriteResult& result);

// Apply, to the file of state file `state`, under its lock.
Status RecordWrites(const std::string& state, const std::string& table,
                    const std::vector<AnsweredWrite>& writes);

// Removes from the file of `state` every table not in `live` (dropped ones).
Status ForgetTables(const std::string& state, const std::set<std::string>& live);

// The tables index (or collection) `id` reads: the table sources of the dataflow that makes it and
// of the dataflows of the indexes that one imports, and so on.
std::set<std::string> TablesRead(const History& h, const std::string& id);

// Which replicas of `endpoints` (by number) may answer a read of `tables`.
struct Readers {
  // This state file wrote one of the tables: only `floors`' replicas may answer.
  bool restricted = false;
  // The replicas that acknowledged every write of the ledger to those tables, with their floor
  // (the latest time over those tables).
  std::map<std::size_t, Time> floors;
  // The others, and why ("it did not acknowledge write … to u1").
  std::map<std::size_t, std::string> left_out;
};
Readers ReadersOf(const WriteLedger& ledger, const std::set<std::string>& tables,
                  const std::vector<std::string>& endpoints);

// How a peek's time was chosen.
enum class ReadAt {
  kProbe,    // probing for the latest time: every reader, at `t`
  kLatest,   // the latest time: every reader, each at its floor when that is later than `t`
  kExactly,  // the user's time: exactly `t`, from the readers whose floor is at most `t` (every
             // write of this state file is in their answer) or, when there is none (`t` is
             // before its last write on every replica), from every reader (each has every write
             // whose time there is at most `t`: `written at T` is the latest of its times, so a
             // peek at T or later sees it everywhere)
};
// The targets of a peek at `t` through `readers` (none when they are not restricted).
ReplicaSet::PeekTargets TargetsAt(const Readers& readers, Time t, ReadAt at);

}  // namespace tandem::controller
