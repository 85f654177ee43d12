#include "workers/dataflow.h"

#include <algorithm>
#include <functional>
#include <set>

#include <spdlog/spdlog.h>

#include "base/check.h"
#include "base/count.h"
#include "shm/routing.h"

namespace tandem::workers {

namespace pb = ipc::pb;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Generators

namespace {

Time SaturatingAdd(Time a, Time b) { return a > kMaxTime - b ? kMaxTime : a + b; }

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

std::int64_t KeyValueInitial(std::uint64_t seed, std::int64_t key) {
  return static_cast<std::int64_t>(Mix(seed ^ Mix(static_cast<std::uint64_t>(key))) % 1000000);
}
std::int64_t KeyValuePick(std::uint64_t seed, Time t, std::uint64_t j, std::uint64_t keys) {
  return static_cast<std::int64_t>(Mix(seed * 31 + Mix(t * 1000003 + j)) % keys);
}
std::int64_t KeyValueValue(std::uint64_t seed, Time t, std::uint64_t j) {
  return static_cast<std::int64_t>(Mix(~seed ^ Mix(t * 7919 + j)) % 1000000);
}

// ---------------------------------------------------------------------------------------------
// Exchange

Exchange::Exchange(std::uint32_t workers)
    : workers_(workers),
      barrier_(workers),
      buffers_(2, std::vector<std::vector<std::vector<RowUpdate>>>(
                      workers, std::vector<std::vector<RowUpdate>>(workers))),
      round_(workers, 0) {}

std::vector<RowUpdate> Exchange::Shuffle(std::uint32_t me, std::vector<RowUpdate> rows,
                                         const std::vector<std::uint32_t>& key_columns,
                                         bool whole_row) {
  if (workers_ == 1) return rows;
  auto& set = buffers_[round_[me]++ % 2];
  std::string key;
  for (RowUpdate& u : rows) {
    key.clear();
    if (whole_row) {
      AppendEncodedRow(u.row, &key);
    } else {
      for (std::uint32_t c : key_columns) AppendEncodedDatum(u.row[c], &key);
    }
    set[me][WorkerOf(key, workers_)].push_back(std::move(u));
  }
  barrier_.arrive_and_wait();
  std::vector<RowUpdate> mine;
  for (std::uint32_t from = 0; from < workers_; ++from) {
    auto& in = set[from][me];
    std::move(in.begin(), in.end(), std::back_inserter(mine));
    in.clear();
  }
  return mine;
}

// ---------------------------------------------------------------------------------------------
// Sources (shared part)

Clock::time_point DataflowShared::Prepare(std::uint32_t workers, Time max_ticks,
                                          Clock::time_point now) {
  frontier = target;
  if (stalled.exchange(false)) {
    if (retry_pending) {  // the last try found no room either: back off
      stall_backoff = std::clamp<Clock::duration>(2 * stall_backoff, std::chrono::milliseconds(10),
                                                  std::chrono::seconds(1));
      retry_at = now + stall_backoff;
    }
    retry_pending = now >= retry_at;
    return retry_pending ? now : retry_at;
  }
  stall_backoff = {};
  retry_pending = true;
  budget_limited = false;
  Clock::time_point next = now + std::chrono::milliseconds(100);
  Frontier hi = Frontier::Empty();
  for (auto& s : sources) {
    if (s->pending.empty()) s->pending.resize(workers);
    switch (s->source.kind_case()) {
      case pb::Source::kCounter:
      case pb::Source::kKeyValue: {
        const bool counter = s->source.has_counter();
        const std::uint64_t interval = counter ? s->source.counter().tick_interval_us()
                                               : s->source.key_value().tick_interval_us();
        if (s->upper.empty()) break;
        // Ticks due by now (unthrottled: always more), of which one step takes at most max_ticks.
        Time due = kMaxTime;
        if (interval != 0) {
          const auto elapsed =
              std::chrono::duration_cast<std::chrono::microseconds>(now - s->created).count();
          due = static_cast<Time>(elapsed) / interval + 1;
          next = std::min(next, s->created + std::chrono::microseconds(due * interval));
        }
        // At most max_ticks past what the dataflow has processed (a source cannot run away while
        // another holds the dataflow back), and never past `until` (nothing is emitted there).
        const Time base = std::max(frontier.empty() ? kMaxTime : frontier.time(), as_of);
        Time available = std::min(due, std::max(s->upper.time(), SaturatingAdd(base, max_ticks)));
        if (!until.empty())
          available = std::min(available, std::max(s->upper.time(), until.time()));
        if (due > available) {
          budget_limited = true;
          // More is due already: step again at once — if this step has something new to do.
          if (available > s->upper.time()) next = now;
        }
        Frontier upper = Frontier::At(std::max(available, s->upper.time()));
        if (counter && s->source.counter().max() != 0 && upper.time() > s->source.counter().max()) {
          upper = Frontier::Empty();  // every value emitted: closed
        }
        s->upper = upper;
        break;
      }
      case pb::Source::kLog: {
        if (!s->tailer) {
          s->tailer = std::make_unique<LogTailer>(s->source.log().path(), s->schema);
        }
        // A step reads at most this many records (the step budget, like a generator's ticks).
        const std::size_t budget = static_cast<std::size_t>(max_ticks) * kLogRecordsPerTick;
        const Time at = s->upper.empty() ? kMaxTime : s->upper.time();  // where errors arise
        auto error = [&](const LogRecord& r, const std::string& why) {
          s->pending_errors.push_back({"log line " + std::to_string(r.line) + ": " + why, at, 1});
        };
        for (LogRecord& r : s->tailer->ReadNew(budget)) {
          switch (r.kind) {
            case LogRecord::Kind::kUpdate:
              if (!s->upper.LessEqual(r.time)) {
                error(r, "update at time " + std::to_string(r.time) +
                             (s->upper.empty() ? " after the close mark C"
                                               : " is below the progress mark " +
                                                     std::to_string(s->upper.time())));
                break;
              }
              s->pending[s->records++ % workers].push_back({std::move(r.row), r.time, r.diff});
              break;
            case LogRecord::Kind::kProgress:
              if (s->upper.empty()) {
                error(r, "progress mark P " + std::to_string(r.time) + " after the close mark C");
              } else if (r.time < s->upper.time()) {
                error(r, "progress mark P " + std::to_string(r.time) +
                             " is below the earlier mark " + std::to_string(s->upper.time()));
              } else {
                s->upper = Frontier::At(r.time);
              }
              break;
            case LogRecord::Kind::kClose:
              s->upper = Frontier::Empty();
              break;
            case LogRecord::Kind::kError:
              s->pending_errors.push_back({r.error, at, 1});
              break;
          }
        }
        if (s->tailer->missing() != s->missing_logged) {
          s->missing_logged = s->tailer->missing();
          if (s->missing_logged) {
            spdlog::warn(
                "log source {}: {} does not exist (or cannot be read); its collections wait "
                "for it (their frontiers stay where they are)",
                s->id, s->tailer->path());
          } else {
            spdlog::info("log source {}: {} is there now; reading it", s->id, s->tailer->path());
          }
        }
        if (s->tailer->more()) {
          budget_limited = true;
          next = now;  // more of the file is there already: step again at once
        } else {
          next = std::min(next, now + std::chrono::milliseconds(10));
        }
        break;
      }
      default:
        break;
    }
    hi = Min(hi, s->upper);
  }
  hi = Min(hi, until);
  // Nothing is emitted before as_of: the first tick ends beyond it.
  if (!hi.empty() && hi.time() <= as_of) hi = frontier;
  target = Max(frontier, hi);
  return next;
}

// ---------------------------------------------------------------------------------------------
// Operators

struct TickCtx {
  Time lo;
  Frontier hi;
  std::uint64_t tick;
  std::uint32_t me;
  Exchange* exchange;
};

class Node {
 public:
  virtual ~Node() = default;
  virtual Delta Pull(const TickCtx& ctx) = 0;
};

namespace {

// Groups updates by time (ascending) and calls fn(time, begin, end) for each run.
template <typename F>
void ForEachTime(std::vector<RowUpdate>& rows, F&& fn) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RowUpdate& a, const RowUpdate& b) { return a.time < b.time; });
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j < rows.size() && rows[j].time == rows[i].time) ++j;
    fn(rows[i].time, i, j);
    i = j;
  }
}

class SourceNode final : public Node {
 public:
  SourceNode(SourceShared* s, Time as_of, Frontier until) : s_(s), as_of_(as_of), until_(until) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta d;
    const std::uint32_t n = ctx.exchange->workers();
    auto emit = [&](Row row, Time t, std::int64_t diff) {
      if (!until_.Greater(t)) return;
      d.rows.push_back({std::move(row), std::max(t, as_of_), diff});
    };
    const Time hi = ctx.hi.empty() ? kMaxTime : ctx.hi.time();
    switch (s_->source.kind_case()) {
      case pb::Source::kCounter: {
        const Time max = s_->source.counter().max();
        for (Time v = std::max<Time>(ctx.lo, 1); v < hi && (max == 0 || v <= max); ++v) {
          if (v % n == ctx.me) emit({static_cast<std::int64_t>(v)}, v, 1);
        }
        break;
      }
      case pb::Source::kKeyValue: {
        const auto& kv = s_->source.key_value();
        const auto keys = static_cast<std::int64_t>(kv.keys());
        // A retraction and an insertion per update of one of this worker's keys (about 1/n).
        // A reservation only (a closed upper would be unbounded).
        const Time ticks = std::min<Time>(hi - std::min(hi, ctx.lo), kMaxStepTicks);
        d.rows.reserve(2 * ticks * kv.updates_per_tick() / n + (ctx.lo == 0 ? kv.keys() / n : 0));
        if (ctx.lo == 0) {
          for (std::int64_t k = ctx.me; k < keys; k += n) {
            values_.push_back(KeyValueInitial(kv.seed(), k));  // index k / n
            emit({k, values_.back()}, 0, 1);
          }
        }
        // Picks are random over all keys, so values_ (8 bytes per key) misses the cache on
        // nearly every update: prefetch the value of the pick kPrefetch updates ahead (picks are
        // pure functions of (seed, t, j)).
        constexpr std::uint64_t kPrefetch = 16;
        for (Time t = std::max<Time>(ctx.lo, 1); t < hi; ++t) {
          for (std::uint64_t j = 0; j < kv.updates_per_tick(); ++j) {
            if (j + kPrefetch < kv.updates_per_tick()) {
              const auto ahead =
                  static_cast<std::uint64_t>(KeyValuePick(kv.seed(), t, j + kPrefetch, kv.keys()));
              if (ahead % n == ctx.me) __builtin_prefetch(&values_[ahead / n]);
            }
            const std::int64_t k = KeyValuePick(kv.seed(), t, j, kv.keys());
            if (static_cast<std::uint64_t>(k) % n != ctx.me) continue;
            const std::int64_t v = KeyValueValue(kv.seed(), t, j);
            std::int64_t& cur = values_[static_cast<std::size_t>(k) / n];
            emit({k, cur}, t, -1);
            cur = v;
            emit({k, cur}, t, 1);
          }
        }
        break;
      }
      case pb::Source::kLog: {
        auto& mine = s_->pending[ctx.me];
        std::vector<RowUpdate> later;
        for (RowUpdate& u : mine) {
          if (ctx.hi.Greater(u.time)) {
            emit(std::move(u.row), u.time, u.diff);
          } else {
            later.push_back(std::move(u));
          }
        }
        mine = std::move(later);
        if (ctx.me == 0) {
          std::vector<ErrorUpdate> later_errors;
          for (ErrorUpdate& e : s_->pending_errors) {
            if (ctx.hi.Greater(e.time)) {
              e.time = std::max(e.time, as_of_);
              d.errors.push_back(std::move(e));
            } else {
              later_errors.push_back(std::move(e));
            }
          }
          s_->pending_errors = std::move(later_errors);
        }
        break;
      }
      default:
        break;
    }
    return d;
  }

 private:
  SourceShared* s_;
  Time as_of_;
  Frontier until_;
  // key_value: the current value of each of this worker's keys k (k % n == me), at k / n.
  std::vector<std::int64_t> values_;
};

// A build referenced more than once is computed once per tick.
//
// Invariant: every consumer (registered with AddConsumer while the plan is built) pulls at most
// once per tick, so the consumers_-th pull of a tick is the last one: it takes the cached delta
// instead of a copy (the common single consumer never copies). A consumer that does not pull
// only costs the others a copy.
class CachedNode final : public Node {
 public:
  explicit CachedNode(Node* inner) : inner_(inner) {}
  void AddConsumer() { ++consumers_; }
  Delta Pull(const TickCtx& ctx) override {
    if (!computed_ || tick_ != ctx.tick) {
      cache_ = inner_->Pull(ctx);
      tick_ = ctx.tick;
      computed_ = true;
      pulls_ = 0;
    }
    ++pulls_;
    TANDEM_CHECK(pulls_ <= consumers_, "a cached node was pulled more often than it has consumers");
    if (pulls_ == consumers_) return std::move(cache_);
    return cache_;
  }

 private:
  Node* inner_;
  Delta cache_;
  std::uint64_t tick_ = 0;
  bool computed_ = false;
  std::uint32_t consumers_ = 0;
  std::uint32_t pulls_ = 0;  // in tick_
};

class MfpNode final : public Node {
 public:
  MfpNode(Node* input, Mfp mfp) : input_(input), mfp_(std::move(mfp)) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta d = input_->Pull(ctx);
    if (mfp_.identity()) return d;
    std::vector<RowUpdate> out;
    out.reserve(d.rows.size());
    std::string error;
    for (RowUpdate& u : d.rows) {
      switch (mfp_.Apply(&u.row, &error)) {
        case Mfp::Outcome::kKept:
          out.push_back(std::move(u));
          break;
        case Mfp::Outcome::kDropped:
          break;
        case Mfp::Outcome::kError:
          d.errors.push_back({error, u.time, u.diff});
          break;
      }
    }
    d.rows = std::move(out);
    return d;
  }

 private:
  Node* input_;
  Mfp mfp_;
};

class UnionNode final : public Node {
 public:
  explicit UnionNode(std::vector<Node*> inputs) : inputs_(std::move(inputs)) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta out;
    for (Node* in : inputs_) {
      Delta d = in->Pull(ctx);
      std::move(d.rows.begin(), d.rows.end(), std::back_inserter(out.rows));
      std::move(d.errors.begin(), d.errors.end(), std::back_inserter(out.errors));
    }
    return out;
  }

 private:
  std::vector<Node*> inputs_;
};

class DistinctNode final : public Node {
 public:
  explicit DistinctNode(Node* input) : input_(input) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta in = input_->Pull(ctx);
    Delta out;
    out.errors = std::move(in.errors);
    std::vector<RowUpdate> rows = ctx.exchange->Shuffle(ctx.me, std::move(in.rows), {}, true);
    std::string key;
    ForEachTime(rows, [&](Time t, std::size_t b, std::size_t e) {
      std::map<std::string, Int128> before;  // touched rows → count before this time
      for (std::size_t i = b; i < e; ++i) {
        key.clear();
        AppendEncodedRow(rows[i].row, &key);
        auto& [row, count] = state_[key];
        if (!before.count(key)) before[key] = count;
        if (row.empty() && !rows[i].row.empty()) row = rows[i].row;
        count += rows[i].diff;
      }
      for (const auto& [k, was] : before) {
        auto it = state_.find(k);
        const Int128 now = it->second.second;
        if ((was > 0) != (now > 0)) out.rows.push_back({it->second.first, t, now > 0 ? 1 : -1});
        if (now == 0) state_.erase(it);
      }
    });
    return out;
  }

 private:
  Node* input_;
  // Encoded row → (row, count); counts are exact (base/count.h), only their sign matters.
  std::map<std::string, std::pair<Row, Int128>> state_;
};

struct DatumLess {
  bool operator()(const Datum& a, const Datum& b) const { return CompareDatum(a, b) < 0; }
};

class ReduceNode final : public Node {
 public:
  ReduceNode(Node* input, const pb::Plan::Reduce& r)
      : input_(input), key_(r.group_key().begin(), r.group_key().end()) {
    for (const auto& a : r.aggregates()) aggs_.push_back(a);
  }

  Delta Pull(const TickCtx& ctx) override {
    Delta in = input_->Pull(ctx);
    Delta out;
    out.errors = std::move(in.errors);
    std::vector<RowUpdate> rows = ctx.exchange->Shuffle(ctx.me, std::move(in.rows), key_, false);
    std::string key;
    ForEachTime(rows, [&](Time t, std::size_t b, std::size_t e) {
      std::set<std::string> touched;
      for (std::size_t i = b; i < e; ++i) {
        key.clear();
        for (std::uint32_t c : key_) AppendEncodedDatum(rows[i].row[c], &key);
        // A new group takes its key from its first row. (Not "aggs is empty": a Reduce without
        // aggregates has none, and would append the key once per row.)
        auto [it, fresh] = groups_.try_emplace(key);
        Group& g = it->second;
        if (fresh) {
          g.aggs.resize(aggs_.size());
          for (std::uint32_t c : key_) g.key.push_back(rows[i].row[c]);
        }
        Apply(g, rows[i].row, rows[i].diff);
        touched.insert(key);
      }
      for (const std::string& k : touched) {
        auto it = groups_.find(k);
        Group& g = it->second;
        Output now = Compute(g);
        if (!(now == g.out)) {
          Emit(g.out, t, -1, &out);
          Emit(now, t, 1, &out);
          g.out = std::move(now);
        }
        if (g.count == 0) groups_.erase(it);
      }
    });
    return out;
  }

 private:
  // Every multiplicity here is an exact sum of diffs (base/count.h).
  struct AggState {
    Int128 int_sum = 0;
    // The 128-bit sum itself overflowed (values and multiplicities near int64's limits): the
    // SUM is an error from then on, even if later retractions would bring it back in range.
    bool int_sum_overflowed = false;
    double float_sum = 0;
    bool is_float = false;
    Int128 nonnull = 0;                         // multiplicity of non-null values
    std::map<Datum, Int128, DatumLess> values;  // MIN/MAX
  };
  struct Output {
    bool present = false;
    Row row;
    std::string error;
    bool operator==(const Output& o) const {
      return present == o.present && error == o.error && CompareRow(row, o.row) == 0 &&
             row.size() == o.row.size();
    }
  };
  struct Group {
    Row key;
    Int128 count = 0;
    std::vector<AggState> aggs;
    Output out;
  };

  void Apply(Group& g, const Row& row, std::int64_t diff) {
    g.count += diff;
    for (std::size_t a = 0; a < aggs_.size(); ++a) {
      const pb::Aggregate& agg = aggs_[a];
      if (agg.func() == pb::COUNT) continue;
      const Datum& v = row[agg.column()];
      if (v.index() == 0) continue;  // nulls are ignored
      AggState& s = g.aggs[a];
      if (agg.func() == pb::SUM) {
        s.nonnull += diff;
        if (v.index() == 2) {
          Int128 product;
          s.int_sum_overflowed |=
              __builtin_mul_overflow(static_cast<Int128>(std::get<std::int64_t>(v)),
                                     static_cast<Int128>(diff), &product) ||
              __builtin_add_overflow(s.int_sum, product, &s.int_sum);
        } else {
          s.is_float = true;
          s.float_sum += std::get<double>(v) * static_cast<double>(diff);
        }
      } else {
        auto& c = s.values[v];
        c += diff;
        if (c == 0) s.values.erase(v);
      }
    }
  }

// GCC 12 at -O3 reports the std::string alternative of Datum as maybe-uninitialized when a row
// of variants reallocates here (a known false positive of its variant move; clang, GCC -O2 and
// ASan/UBSan builds are silent).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
  Output Compute(const Group& g) const {
    Output o;
    if (g.count <= 0) return o;
    o.present = true;
    o.row = g.key;
    for (std::size_t a = 0; a < aggs_.size(); ++a) {
      const AggState& s = g.aggs[a];
      switch (aggs_[a].func()) {
        case pb::COUNT:
          if (!FitsInt64(g.count)) {
            o.error = "integer overflow in COUNT";
            o.row.push_back(Null{});
          } else {
            o.row.push_back(static_cast<std::int64_t>(g.count));
          }
          break;
        case pb::SUM:
          if (s.nonnull <= 0) {
            o.row.push_back(Null{});
          } else if (s.is_float) {
            o.row.push_back(s.float_sum);
          } else if (s.int_sum_overflowed || !FitsInt64(s.int_sum)) {
            o.error = "integer overflow in SUM";
            o.row.push_back(Null{});
          } else {
            o.row.push_back(static_cast<std::int64_t>(s.int_sum));
          }
          break;
        case pb::MIN:
        case pb::MAX: {
          std::optional<Datum> best;
          if (aggs_[a].func() == pb::MIN) {
            for (const auto& [v, c] : s.values) {
              if (c > 0) {
                best = v;
                break;
              }
            }
          } else {
            for (auto it = s.values.rbegin(); it != s.values.rend(); ++it) {
              if (it->second > 0) {
                best = it->first;
                break;
              }
            }
          }
          o.row.push_back(best ? *best : Datum(Null{}));
          break;
        }
        default:
          TANDEM_CHECK(false, "unknown aggregate passed validation");
      }
    }
    return o;
  }
#pragma GCC diagnostic pop

  static void Emit(const Output& o, Time t, std::int64_t diff, Delta* out) {
    if (!o.present) return;
    if (!o.error.empty()) {
      out->errors.push_back({o.error, t, diff});
    } else {
      out->rows.push_back({o.row, t, diff});
    }
  }

  Node* input_;
  std::vector<std::uint32_t> key_;
  std::vector<pb::Aggregate> aggs_;
  std::map<std::string, Group> groups_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// DataflowInstance

DataflowInstance::DataflowInstance(DataflowShared* shared, std::uint32_t me, Exchange* exchange,
                                   shm::Publisher* publisher)
    : shared_(shared), me_(me), exchange_(exchange), publisher_(publisher) {
  const pb::DataflowDescription& desc = shared->desc;
  std::map<std::string, CachedNode*> named;
  auto cached = [&](Node* inner) {
    auto node = std::make_unique<CachedNode>(inner);
    CachedNode* raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  };
  for (std::size_t i = 0; i < shared->sources.size(); ++i) {
    nodes_.push_back(
        std::make_unique<SourceNode>(shared->sources[i].get(), shared->as_of, shared->until));
    named[shared->sources[i]->id] = cached(nodes_.back().get());
  }
  std::function<Node*(const pb::Plan&)> build = [&](const pb::Plan& p) -> Node* {
    switch (p.kind_case()) {
      case pb::Plan::kGet: {
        auto it = named.find(p.get().id());
        TANDEM_CHECK(it != named.end(), "a Get of an unknown collection passed validation");
        it->second->AddConsumer();
        return it->second;
      }
      case pb::Plan::kMfp: {
        Node* in = build(p.mfp().input());
        nodes_.push_back(std::make_unique<MfpNode>(in, Mfp(p.mfp().mfp(), 0)));
        return nodes_.back().get();
      }
      case pb::Plan::kReduce: {
        Node* in = build(p.reduce().input());
        nodes_.push_back(std::make_unique<ReduceNode>(in, p.reduce()));
        return nodes_.back().get();
      }
      case pb::Plan::kUnion: {
        std::vector<Node*> ins;
        for (const auto& i : p.union_().inputs()) ins.push_back(build(i));
        nodes_.push_back(std::make_unique<UnionNode>(std::move(ins)));
        return nodes_.back().get();
      }
      case pb::Plan::kDistinct: {
        Node* in = build(p.distinct().input());
        nodes_.push_back(std::make_unique<DistinctNode>(in));
        return nodes_.back().get();
      }
      default:
        TANDEM_CHECK(false, "an empty plan passed validation");
    }
    return nullptr;
  };
  for (const pb::BuildDesc& b : desc.objects_to_build()) {
    named[b.id()] = cached(build(b.plan()));
  }
  for (const pb::IndexExport& e : desc.index_exports()) {
    CachedNode* on = named.at(e.on());
    on->AddConsumer();
    index_nodes_.emplace_back(on, &e);
    auto id = GlobalId::Parse(e.id());
    TANDEM_CHECK(id.has_value(), "an index id that does not parse passed validation");
    auto ref = publisher_->Publish({*id, shared->as_of});
    // A full registry row is a resource problem of this replica; shared fate is the honest answer.
    TANDEM_CHECK(ref.ok(), "could not publish an index: registry row full");
    exports_[e.id()] = *ref;
  }
}

DataflowInstance::~DataflowInstance() = default;

void DataflowInstance::Publish(const std::string& id, Pending pending) {
  // A retry: Step moved the updates out of pending_, whose entry is still there.
  const bool retry = pending_.count(id) > 0;
  const std::size_t count = pending.updates.size();
  const Status s =
      publisher_->AppendOrKeep(exports_.at(id), &pending.updates, pending.upper, retry);
  if (s.ok()) {
    if (retry) {
      pending_.erase(id);
      spdlog::info(
          "worker {}: index {}: published {} updates that waited {} ms for room in the "
          "segment: resumed",
          me_, id, count,
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - pending.since)
              .count());
    }
    return;
  }
  // Anything but a full segment is our own bug (times and uppers come from the tick).
  TANDEM_CHECK(s.code() == StatusCode::kResourceExhausted,
               ("publishing an index failed: " + s.ToString()).c_str());
  if (!retry) {
    spdlog::warn(
        "worker {}: index {}: the segment is full ({}); {} updates wait to be published "
        "and the dataflow's inputs pause until compaction or a drop frees room",
        me_, id, s.message(), count);
    pending.since = Clock::now();
  }
  pending_[id] = std::move(pending);
  shared_->stalled = true;
}

void DataflowInstance::Step() {
  if (!pending_.empty()) {
    for (auto it = pending_.begin(); shared_->retry_pending && it != pending_.end();) {
      const std::string id = (it++)->first;  // Publish erases it on success
      Publish(id, std::move(pending_[id]));
    }
    if (!pending_.empty()) {
      shared_->stalled = true;  // keeps new ticks back until they are published
      return;
    }
  }
  if (!(shared_->frontier < shared_->target)) return;
  TickCtx ctx{shared_->frontier.time(), shared_->target, ++tick_, me_, exchange_};
  for (auto& [node, e] : index_nodes_) {
    Delta d = node->Pull(ctx);
    std::vector<std::uint32_t> key(e->key().begin(), e->key().end());
    std::vector<RowUpdate> rows = exchange_->Shuffle(me_, std::move(d.rows), key, false);
    // Encoded once, into one buffer; the two strings are reused, so no allocation per update.
    shm::UpdateBuffer updates;
    std::string key_bytes, val_bytes;
    for (const RowUpdate& u : rows) {
      key_bytes.clear();
      val_bytes.clear();
      for (std::uint32_t c : key) AppendEncodedDatum(u.row[c], &key_bytes);
      AppendEncodedRow(u.row, &val_bytes);
      if (updates.empty()) {
        // Rows of one collection have similar sizes: the first one is a good estimate.
        updates.Reserve(rows.size() + d.errors.size(),
                        (key_bytes.size() + val_bytes.size()) * (rows.size() + 1));
      }
      updates.Push(key_bytes, val_bytes, u.time, u.diff);
    }
    // Errors go to the worker their message hashes to, so that an error and its retraction —
    // which may arise on different workers — meet and cancel in one arrangement.
    std::vector<RowUpdate> errors;
    errors.reserve(d.errors.size());
    for (ErrorUpdate& err : d.errors)
      errors.push_back({{std::move(err.message)}, err.time, err.diff});
    errors = exchange_->Shuffle(me_, std::move(errors), {0}, false);
    for (const RowUpdate& err : errors) {
      updates.Push(std::string(1, kErrorKeyPrefix) + std::get<std::string>(err.row[0]), "",
                   err.time, err.diff);
    }
    if (shared_->dropped_exports.count(e->id()))
      continue;  // after the exchanges: they are barriers
    Publish(e->id(), {std::move(updates), ctx.hi, {}});
  }
}

Status DataflowInstance::AllowCompaction(const std::string& id, Frontier frontier) {
  auto it = exports_.find(id);
  // Not ours, or dropped already (a replayed history may drop an index again): nothing to do.
  if (it == exports_.end() || unpublished_.count(id)) return Status::Ok();
  if (frontier.empty()) {
    unpublished_.insert(id);
    pending_.erase(id);  // nobody will read them
  }
  return publisher_->AllowCompaction(it->second, frontier);
}

}  // namespace tandem::workers
