#include "workers/sources/envelope.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "base/check.h"
#include "shm/routing.h"
#include "workers/sources/source.h"

namespace tandem::workers {

namespace {

// Takes the records of `queue` below `hi`, in the order they were added; keeps the others.
template <typename Queued>
std::vector<Queued> TakeBelow(std::vector<Queued>& queue, const Frontier& hi) {
  std::vector<Queued> now, later;
  for (Queued& q : queue) (hi.Greater(q.record.time) ? now : later).push_back(std::move(q));
  queue = std::move(later);
  return now;
}

}  // namespace

// Emits worker `me`'s errors (worker 0 takes them all) below the tick's hi.
class EnvelopeNodeBase : public SourceNode {
 public:
  using SourceNode::SourceNode;

 protected:
  void EmitErrors(Delta& d, std::vector<ErrorUpdate>& errors, const TickCtx& ctx) const {
    if (ctx.me != 0) return;
    std::vector<ErrorUpdate> later;
    for (ErrorUpdate& e : errors) {
      if (ctx.hi.Greater(e.time)) {
        e.time = std::max(e.time, as_of_);
        if (until_.Greater(e.time)) d.errors.push_back(std::move(e));
      } else {
        later.push_back(std::move(e));
      }
    }
    errors = std::move(later);
  }
};

class Envelope::PlainNode final : public EnvelopeNodeBase {
 public:
  PlainNode(Envelope* e, std::uint32_t me, Time as_of, Frontier until)
      : EnvelopeNodeBase(as_of, until), e_(e), me_(me) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta d;
    for (Queued& q : TakeBelow(e_->queues_[me_], ctx.hi)) {
      Emit(d, std::move(q.record.row), q.record.time, q.record.diff);
    }
    EmitErrors(d, e_->errors_, ctx);
    return d;
  }

 private:
  Envelope* e_;
  std::uint32_t me_;
};

// Keeps the current row of each key routed to this worker (DESIGN §9: the runtime emits the
// retractions itself).
class Envelope::UpsertNode final : public EnvelopeNodeBase {
 public:
  UpsertNode(Envelope* e, std::uint32_t me, Time as_of, Frontier until)
      : EnvelopeNodeBase(as_of, until), e_(e), me_(me) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta d;
    std::vector<Queued> due = TakeBelow(e_->queues_[me_], ctx.hi);
    // Time order, then the order added: the later record for a key at one time wins.
    std::sort(due.begin(), due.end(), [](const Queued& a, const Queued& b) {
      return a.record.time != b.record.time ? a.record.time < b.record.time : a.seq < b.seq;
    });
    for (Queued& q : due) {
      SourceRecord& r = q.record;
      if (r.kind == SourceRecord::Kind::kDelete) {
        auto it = current_.find(q.key);
        if (it == current_.end()) continue;
        Emit(d, std::move(it->second), r.time, -1);
        current_.erase(it);
        continue;
      }
      TANDEM_CHECK(r.kind == SourceRecord::Kind::kUpsert, "an upsert envelope takes no updates");
      auto [it, fresh] = current_.try_emplace(std::move(q.key));
      if (!fresh) {
        // The row it has (equal as encoded: -0.0 is 0.0, NaNs are one): no change.
        if (CompareRow(it->second, r.row) == 0) continue;
        Emit(d, std::move(it->second), r.time, -1);
      }
      it->second = r.row;
      Emit(d, std::move(r.row), r.time, +1);
    }
    EmitErrors(d, e_->errors_, ctx);
    return d;
  }

 private:
  Envelope* e_;
  std::uint32_t me_;
  std::unordered_map<std::string, Row> current_;  // encoded key → its row now
};

Envelope::Envelope(std::vector<std::uint32_t> upsert_key, std::uint32_t workers)
    : key_(std::move(upsert_key)), workers_(workers), queues_(workers) {
  TANDEM_CHECK(workers > 0, "an envelope for no workers");
}

Envelope::~Envelope() = default;

void Envelope::Add(SourceRecord record) {
  const std::uint64_t seq = next_seq_++;
  if (!upsert()) {
    TANDEM_CHECK(record.kind == SourceRecord::Kind::kUpdate, "a plain envelope takes updates only");
    queues_[seq % workers_].push_back({std::move(record), seq, {}});
    return;
  }
  std::string key;
  if (record.kind == SourceRecord::Kind::kDelete) {
    TANDEM_CHECK(record.row.size() == key_.size(), "a delete names the key columns");
    key = EncodeKey(record.row);  // a delete's row is the key columns
  } else {
    TANDEM_CHECK(record.kind == SourceRecord::Kind::kUpsert, "an upsert envelope takes no updates");
    AppendKeyColumns(record.row, key_, &key);
  }
  const std::uint32_t to = shm::WorkerOf(key, workers_);
  queues_[to].push_back({std::move(record), seq, std::move(key)});
}

void Envelope::AddError(ErrorUpdate error) { errors_.push_back(std::move(error)); }

std::size_t Envelope::queued() const {
  std::size_t n = errors_.size();
  for (const auto& q : queues_) n += q.size();
  return n;
}

std::unique_ptr<Node> Envelope::MakeNode(std::uint32_t me, Time as_of, Frontier until) {
  TANDEM_CHECK(me < workers_, "a node for a worker the envelope does not know");
  if (upsert()) return std::make_unique<UpsertNode>(this, me, as_of, until);
  return std::make_unique<PlainNode>(this, me, as_of, until);
}

}  // namespace tandem::workers
