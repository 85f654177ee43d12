// An index import (DESIGN §8) as the input of a dataflow: the imported index's updates read in
// place from its batches — every update at a time <= as_of advanced to as_of in the first tick,
// then each tick's updates at their times. Nothing is copied into an arrangement of the importer.
//
// Where the batches come from depends on who imports (ImportedIndex): a Maintained importer in the
// publishing runtime reads its own worker's published batches (shm::Publisher::Batches, the same
// thread) and moves its hold with its progress; a one-shot dataflow reads the batches of a
// snapshot that the reading worker took at as_of and holds until the dataflow is dropped.
//
// Holds and progress. After the tick [lo, hi) the importer reads nothing below hi again, but the
// publisher advances compacted times up to since — so a hold at hi would let updates below hi be
// advanced *to* hi and read a second time. The importer therefore holds at max(as_of, hi - 1):
// what compaction advances stays below hi, and every time >= hi is untouched.
//
// Thread safety: an ImportNode and its ImportedIndex belong to one worker thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "base/time.h"
#include "shm/batch.h"
#include "workers/sources/source.h"

namespace tandem::workers {

class ImportedIndex {
 public:
  virtual ~ImportedIndex() = default;
  // The index's batches as they are now (valid until the importer's next tick).
  virtual std::vector<shm::BatchView> Batches() = 0;
  // The importer has read every update below `hi`: it needs nothing below max(as_of, hi - 1)
  // exact any more. Called by the dataflow once per tick, after every node of the tick has read
  // (a node reads at t - 1 >= lo - 1), never by a node.
  virtual void Read(Frontier hi) = 0;
  // Set when the import cannot be read exactly from as_of (its since had passed as_of when the
  // dataflow was accepted — only after a reconnect, when the new controller's validation could not
  // see how far an earlier controller let it compact): the import is then this error at as_of,
  // and nothing else.
  virtual const std::optional<std::string>& error() const {
    static const std::optional<std::string> kNone;
    return kNone;
  }
};

// The imported collection's node: rows decoded from the index's values (the whole row), errors
// from its error keys (shm::kErrorKeyPrefix).
class ImportNode final : public SourceNode {
 public:
  // `key`: the index's key; worker i reads registry row i, which holds exactly i's keys.
  ImportNode(std::unique_ptr<ImportedIndex> index, std::vector<std::uint32_t> key, Time as_of,
             Frontier until)
      : SourceNode(as_of, until), index_(std::move(index)), key_(std::move(key)) {}
  Delta Pull(const TickCtx& ctx) override;
  Partitioning partitioning() const override { return Partitioning::By(key_); }

 private:
  std::unique_ptr<ImportedIndex> index_;
  std::vector<std::uint32_t> key_;
  bool errored_ = false;
};

// An index's error keys start with shm::kErrorKeyPrefix (the message follows); a value is the
// whole row, encoded (one that does not decode is our own bug: it aborts).
bool IsErrorKey(std::string_view key);
Row DecodeIndexValue(std::string_view val);

// Calls fn(batch, key, v, time, diff) for every update of `batches` at a time in [lo, hi) (v: the
// value's position in `batch`), skipping the batches whose times are all outside.
template <typename F>
void ForEachUpdateIn(const std::vector<shm::BatchView>& batches, Time lo, Frontier hi, F&& fn) {
  for (const shm::BatchView& b : batches) {
    const shm::BatchHeader& h = b.header();
    if (h.update_count == 0 || h.max_time < lo || !hi.Greater(h.min_time)) continue;
    for (std::uint32_t k = 0; k < b.key_count(); ++k) {
      const std::string_view key = b.key(k);
      for (std::uint32_t v = b.vals_begin(k); v < b.vals_end(k); ++v) {
        for (std::uint32_t u = b.updates_begin(v); u < b.updates_end(v); ++u) {
          const Time t = b.time(u);
          if (t >= lo && hi.Greater(t)) fn(b, key, v, t, b.diff(u));
        }
      }
    }
  }
}

// The imported index's upper as a dataflow source (the import's progress): `upper_of` gives it,
// the minimum over every worker's part, in the tick barrier's completion step.
class ImportSource final : public Source {
 public:
  ImportSource(const ipc::pb::IndexImport& import, std::function<Frontier()> upper_of,
               std::chrono::steady_clock::time_point created)
      : Source(import.id(), import.schema(), created), upper_of_(std::move(upper_of)) {}
  void Advance(AdvanceCtx&) override { upper = upper_of_(); }
  // The dataflow makes an import's nodes itself (they need the worker's publisher).
  std::unique_ptr<Node> MakeNode(std::uint32_t, Time, Frontier) override { return nullptr; }

 private:
  std::function<Frontier()> upper_of_;
};

}  // namespace tandem::workers
