// Randomized differential correctness of subscribes (issue 16 acceptance item 1, DESIGN §10)
// against the reference evaluator (tests/reference/): for solo and two-runtime replicas with 1, 2
// and 4 workers, random dataflows over a log source (differential.h's generator) whose log is
// partly written before the dataflow is created and the rest while it runs, and on its indexes
// several subscribes at once: at random as_of (and some at "latest", as_of absent: the supervisor
// fills in max(write frontier - 1, allowed compaction)), with and without a snapshot, mostly with
// an up_to, some without one and canceled. Each stream is collected until its SubscribeEnd and
// checked (subscribe_stream.h):
//   * its shape: contiguous batches from as_of (snapshot) or as_of + 1, parts (upper == lower)
//     followed by more of their interval, updates non-zero, consolidated per (row, time), in time
//     order and inside their interval, each batch's encoded updates within subscribe_batch_bytes,
//     exactly one End and nothing after it, UP_TO with the last upper == up_to;
//   * its contents: for every t in [as_of, last upper), the sum of the updates at times <= t
//     (snapshot included) is the reference's index at t (without a snapshot: the change since
//     as_of);
//   * its end: UP_TO (CANCELED, or CLOSED for a closed source, without up_to) unless the reference
//     has a data error in the index at some time in [as_of, up_to): then ERROR, with nothing
//     delivered at or after the first such time (the prefix still exact).
// The SmallBatches tests set subscribe_batch_bytes = 4 KiB (UpdateConfiguration) and subscribe to
// indexes of hundreds of wide rows with large changes, so that snapshots and changes come in
// several parts.
//
// Every case is determined by its seed (timing decides only how the runtime cuts its intervals).
// On a failure the test prints the seed, the log file, the dataflow, the subscribe and its
// stream; rerun one case with
//   TANDEM_TEST_SEED=<seed> tandem_subscribe_correctness_tests --gtest_filter=<the test>
// and change the number of cases per configuration with TANDEM_TEST_CASES=<n>;
// TANDEM_TEST_VERBOSE=1 prints every subscribe with its stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "differential.h"
#include "ipc/validate.h"
#include "reference/reference.h"
#include "subscribe_stream.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

constexpr std::size_t kDefaultBatchBytes = 1 << 20;  // subscribe_batch_bytes' default
constexpr std::size_t kSmallBatchBytes = 4096;       // its minimum

struct Config {
  bool two_runtime = false;
  int workers = 1;
  int cases = 20;
  std::uint64_t base_seed = 0;
  bool allow_errors = false;  // DIV/MOD and negative data: data errors happen
  // Indexes of hundreds of wide rows with large changes, subscribe_batch_bytes = 4 KiB.
  bool large = false;
  // Columns, expressions and aggregates of the types of DESIGN §16 too (Generator::EnableNewTypes).
  bool new_types = false;
};

// One subscribe of a case and what it should deliver.
struct Sub {
  std::string uuid;
  std::string index;
  std::optional<Time> as_of;          // as sent; nullopt: latest
  Time as_of_min = 0, as_of_max = 0;  // latest: the as_of the supervisor may fill in
  bool snapshot = false;
  std::optional<Time> up_to;
  enum class Cancel { kNo, kAtOnce, kWhenComplete } cancel = Cancel::kNo;
  bool cancel_sent = false;
  std::string when;  // when it was sent (for failure messages)
};

struct Case {
  std::uint64_t seed = 0;
  Time end = 0;         // the final progress mark
  bool closed = false;  // the log ends with C
  std::string log_text;
  std::vector<std::size_t> splits;  // log bytes written: before creating, then after each pause
  std::string path;
  pb::Command create;
  std::vector<std::string> indexes;
  std::vector<Sub> subs;
};

class SubscribeRunner {
 public:
  SubscribeRunner(const Config& config, SupervisorProcess& sup, TestController& ctl,
                  const std::filesystem::path& dir)
      : config_(config), sup_(sup), ctl_(ctl), session_(sup, ctl), dir_(dir) {
    pb::Command hello;
    hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
    EXPECT_TRUE(validator_.Validate(hello).ok());
  }

  Session& session() { return session_; }

  // False when the replica is gone.
  bool Run(std::uint64_t seed) {
    for (int attempt = 0;; ++attempt) {
      Generator gen(seed * 7919 + static_cast<std::uint64_t>(attempt), config_.allow_errors,
                    /*new_operators=*/true);
      if (config_.new_types) gen.EnableNewTypes();
      if ((config_.large ? GenerateLarge(gen, seed) : Generate(gen, seed)) || attempt >= 20) {
        if (config_.new_types) CountTypes(case_.create, types_);
        return Execute(gen, seed);
      }
    }
  }

  int failures() const { return failures_; }
  // With new_types: the types and functions of the cases run.
  const TypeCounts& types() const { return types_; }
  // Of the failures: subscribes without a snapshot and up_to = as_of + 1 (nothing to deliver).
  int empty_interval_failures() const { return empty_interval_failures_; }
  int subscribes() const { return subscribes_; }
  int batches() const { return batches_; }
  int parts() const { return parts_; }
  int updates() const { return updates_; }
  int latest() const { return latest_; }
  int snapshots() const { return snapshots_; }
  std::size_t largest_batch() const { return largest_batch_; }
  int max_parts_in_interval() const { return max_parts_in_interval_; }
  // Batches of one update larger than kSmallBatchBytes (alone, as the bound wants).
  int oversized() const { return oversized_; }
  const std::map<std::string, int>& ends() const { return ends_; }

 private:
  // A random dataflow over one log source (as the runtime suite makes them); false if the
  // reference sees a data error but errors are not wanted.
  bool Generate(Generator& gen, std::uint64_t seed) {
    case_ = Case{};
    case_.seed = seed;
    case_.end = 6 + gen.rand().Below(9);  // 6..14
    const Types source_types = RandomSourceTypes(gen);
    case_.closed = gen.rand().Chance(0.2);
    const auto updates = RandomUpdates(gen, source_types, case_.end);
    case_.log_text = LogText(gen, updates, case_.end, case_.closed);
    ChooseSplits(gen);

    auto* d = case_.create.mutable_create_dataflow()->mutable_desc();
    const std::string source_id =
        StartDataflow(d, "subscribe case " + std::to_string(seed), source_types);
    std::vector<Generator::Collection> scope = {
        {source_id, source_types, {Generator::kSmallBits, 0}}};
    const int builds = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < builds; ++i) {
      Types types;
      Generator::Shape shape;
      auto* b = d->add_objects_to_build();
      b->set_id(NewId());
      *b->mutable_plan() =
          gen.Plan(scope, 1 + static_cast<int>(gen.rand().Below(3)), &types, &shape);
      scope.push_back({b->id(), types, shape});
    }
    AddExports(gen, d, scope, 0.15);
    evaluator_.emplace(*d);
    evaluator_->AddUpdates(source_id, updates);
    // With errors wanted, a case whose indexes have none (at any time) is generated again;
    // without, a case with one.
    bool errors = false;
    for (const auto& index : case_.indexes) {
      for (Time t = 0; t <= case_.end && !errors; ++t)
        errors = evaluator_->At(index, t)->HasError();
    }
    return errors == config_.allow_errors;
  }

  // Hundreds of distinct wide rows at time 0, then at some times large changes (a third to a half
  // of the rows replaced), at others a few; indexes on the source and on an Mfp of it.
  bool GenerateLarge(Generator& gen, std::uint64_t seed) {
    case_ = Case{};
    case_.seed = seed;
    case_.end = 4 + gen.rand().Below(5);  // 4..8
    case_.closed = gen.rand().Chance(0.2);
    const Types types = {{pb::INT64, false}, {pb::INT64, true}, {pb::STRING, false}};
    auto random_row = [&](std::int64_t k) {
      Row row;
      row.push_back(k);
      row.push_back(gen.rand().Chance(0.2) ? Datum(Null{}) : Datum(gen.rand().Between(0, 4)));
      // Now and then a row larger than subscribe_batch_bytes (it goes alone in its part).
      const std::size_t pad = gen.rand().Chance(0.01) ? kSmallBatchBytes + gen.rand().Below(2000)
                                                      : 10 + gen.rand().Below(40);
      row.push_back(std::string("row ") + std::to_string(k) + " " + std::string(pad, 'x'));
      return row;
    };
    std::vector<reference::Update> updates;
    reference::Multiset current;
    std::int64_t next_k = 0;
    const int initial = 150 + static_cast<int>(gen.rand().Below(350));
    for (int i = 0; i < initial; ++i) {
      Row row = random_row(next_k++);
      updates.push_back({row, 0, 1});
      reference::AddTo(current, row, 1);
    }
    for (Time t = 1; t < case_.end; ++t) {
      const bool big = gen.rand().Chance(0.5);
      const std::size_t changes =
          big ? current.size() / 3 + gen.rand().Below(current.size() / 6 + 1) : gen.rand().Below(5);
      for (std::size_t i = 0; i < changes && !current.empty(); ++i) {
        auto it = current.begin();
        std::advance(it, static_cast<long>(gen.rand().Below(current.size())));
        const Row old = it->first;
        updates.push_back({old, t, -1});
        reference::AddTo(current, old, -1);
        Row row = gen.rand().Chance(0.5) ? random_row(std::get<std::int64_t>(old[0]))
                                         : random_row(next_k++);
        updates.push_back({row, t, 1});
        reference::AddTo(current, row, 1);
      }
    }
    case_.log_text = LogText(gen, updates, case_.end, case_.closed);
    ChooseSplits(gen);

    auto* d = case_.create.mutable_create_dataflow()->mutable_desc();
    const std::string source_id =
        StartDataflow(d, "large subscribe case " + std::to_string(seed), types);
    std::vector<Generator::Collection> scope = {{source_id, types, {Generator::kSmallBits, 0}}};
    Types mfp_types;
    auto* b = d->add_objects_to_build();
    b->set_id(NewId());
    b->mutable_plan()->mutable_mfp()->mutable_input()->mutable_get()->set_id(source_id);
    *b->mutable_plan()->mutable_mfp()->mutable_mfp() = gen.Mfp(types, &mfp_types, 1);
    scope.push_back({b->id(), mfp_types, {Generator::kSmallBits + 4, 0}});
    AddExports(gen, d, scope, 0.5);
    evaluator_.emplace(*d);
    evaluator_->AddUpdates(source_id, updates);
    for (const auto& index : case_.indexes) {
      for (Time t = 0; t <= case_.end; ++t) {
        if (evaluator_->At(index, t)->HasError()) return false;
      }
    }
    return true;
  }

  // Where the log is cut: all of it before the dataflow is created, or a prefix (maybe mid-line)
  // and the rest in one or two appends while subscribes are live.
  void ChooseSplits(Generator& gen) {
    const std::size_t size = case_.log_text.size();
    if (gen.rand().Chance(0.3)) {
      case_.splits = {size};
      return;
    }
    std::set<std::size_t> cuts = {gen.rand().Below(size)};
    if (gen.rand().Chance(0.5)) cuts.insert(gen.rand().Below(size));
    case_.splits.assign(cuts.begin(), cuts.end());
    case_.splits.push_back(size);
  }

  // One or two index exports, on the source with chance `on_source`, else on a build.
  void AddExports(Generator& gen, pb::DataflowDescription* d,
                  const std::vector<Generator::Collection>& scope, double on_source) {
    const int exports = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < exports; ++i) {
      const auto& on = gen.rand().Chance(on_source) ? scope.front()
                                                    : scope[1 + gen.rand().Below(scope.size() - 1)];
      auto* e = d->add_index_exports();
      e->set_id(NewId());
      e->set_on(on.id);
      std::vector<std::uint32_t> columns(on.types.size());
      for (std::uint32_t k = 0; k < columns.size(); ++k) columns[k] = k;
      std::shuffle(columns.begin(), columns.end(), gen.rand().engine());
      const std::size_t width = 1 + gen.rand().Below(std::min<std::size_t>(2, columns.size()));
      for (std::size_t k = 0; k < width; ++k) e->add_key(columns[k]);
      case_.indexes.push_back(e->id());
    }
  }

  std::string NewId() { return "u" + std::to_string(next_id_++); }

  std::string StartDataflow(pb::DataflowDescription* d, const std::string& name,
                            const Types& source_types) {
    case_.path =
        (dir_ / ("case-" + std::to_string(case_.seed) + "-" + std::to_string(next_id_) + ".log"))
            .string();
    d->set_debug_name(name);
    const std::string source_id = NewId();
    MaintainedFromLog(d, source_id, case_.path, source_types);
    return source_id;
  }

  // Subscribes at explicit times: as_of in [0, end), up_to in (as_of, end] (a closed source's
  // indexes are readable beyond end: up to end + 3), some without up_to (canceled later).
  void PlanExplicitSubscribes(Generator& gen) {
    for (const auto& index : case_.indexes) {
      const int n = 1 + static_cast<int>(gen.rand().Below(3));
      for (int i = 0; i < n; ++i) {
        Sub s;
        s.index = index;
        s.as_of = gen.rand().Below(case_.end);
        s.snapshot = gen.rand().Chance(config_.large ? 0.8 : 0.6);
        const Time last = case_.closed ? case_.end + 3 : case_.end;
        if (gen.rand().Chance(0.15)) {
          s.cancel = gen.rand().Chance(0.5) ? Sub::Cancel::kAtOnce : Sub::Cancel::kWhenComplete;
        } else {
          s.up_to = *s.as_of + 1 + gen.rand().Below(last - *s.as_of);
        }
        s.when = "right after CreateDataflow";
        case_.subs.push_back(std::move(s));
      }
    }
  }

  // A subscribe at "latest" up to end: the supervisor's as_of is at least the write frontier we
  // saw minus one (floored at 0) and at most end - 1 (the index stops at end).
  Sub LatestSubscribe(Generator& gen, const std::string& index, const std::string& when) {
    Sub s;
    s.index = index;
    const auto w = session_.Write(index);
    s.as_of_min = w && *w > 0 ? std::min<Time>(*w, case_.end) - 1 : 0;
    s.as_of_max = case_.end - 1;
    s.snapshot = gen.rand().Chance(0.8);
    s.up_to = case_.end;
    s.when = when;
    return s;
  }

  void Send(Sub& s) {
    s.uuid = "sub" + std::to_string(case_.seed) + "-" + std::to_string(uuid_++);
    pb::Command c;
    auto* sub = c.mutable_subscribe();
    sub->set_uuid(s.uuid);
    sub->set_id(s.index);
    if (s.as_of) sub->set_as_of(*s.as_of);
    sub->set_snapshot(s.snapshot);
    if (s.up_to) sub->set_up_to(*s.up_to);
    const Status ok = validator_.Validate(c);
    EXPECT_TRUE(ok.ok()) << "seed " << case_.seed
                         << ": the test made a subscribe the validator refuses: " << ok.ToString()
                         << "\n"
                         << ipc::ToJson(c);
    ctl_.Send(c);
    ++subscribes_;
    if (s.snapshot) ++snapshots_;
    if (!s.as_of) ++latest_;
  }

  void SendCancel(Sub& s) {
    pb::Command c;
    c.mutable_cancel_subscribe()->set_uuid(s.uuid);
    ctl_.Send(c);
    s.cancel_sent = true;
  }

  bool Execute(Generator& gen, std::uint64_t seed) {
    const Status valid = validator_.Validate(case_.create);
    if (!valid.ok()) {
      ADD_FAILURE() << "seed " << seed
                    << ": the generator made a dataflow the validator refuses: " << valid.ToString()
                    << "\n"
                    << ipc::ToJson(case_.create);
      return true;
    }
    std::ofstream(case_.path, std::ios::binary) << case_.log_text.substr(0, case_.splits.front());
    ctl_.Send(case_.create);

    PlanExplicitSubscribes(gen);
    if (!case_.closed && gen.rand().Chance(0.3)) {
      case_.subs.push_back(
          LatestSubscribe(gen, gen.rand().Pick(case_.indexes), "at latest, while the log grows"));
    }
    for (auto& s : case_.subs) {
      Send(s);
      if (s.cancel == Sub::Cancel::kAtOnce && gen.rand().Chance(0.5)) SendCancel(s);
    }
    // The rest of the log, in one or two appends, while the subscribes run.
    for (std::size_t i = 1; i < case_.splits.size(); ++i) {
      session_.Pump(std::chrono::milliseconds(gen.rand().Below(30)));
      std::ofstream(case_.path, std::ios::binary | std::ios::app)
          << case_.log_text.substr(case_.splits[i - 1], case_.splits[i] - case_.splits[i - 1]);
    }

    const bool advanced = session_.WaitFor(
        [&] {
          return std::all_of(case_.indexes.begin(), case_.indexes.end(), [&](const auto& id) {
            auto w = session_.Write(id);
            return w && (case_.closed ? *w == kClosedUpper : *w >= case_.end);
          });
        },
        30s);
    if (!session_.command_errors().empty()) {
      ++failures_;
      ADD_FAILURE() << "seed " << seed << ": CommandError: " << session_.command_errors().front()
                    << "\n"
                    << Describe();
      session_.command_errors().clear();
    }
    if (!advanced) {
      ++failures_;
      ADD_FAILURE() << "seed " << seed << ": the indexes did not reach " << case_.end << " in 30 s"
                    << (sup_.Exited() ? "; the replica is gone" : "") << "\n"
                    << Describe() << Tail(sup_.Log());
      if (sup_.Exited()) return false;
    }
    // At latest once complete: as_of is exactly end - 1.
    if (!case_.closed && gen.rand().Chance(0.4)) {
      Sub s = LatestSubscribe(gen, gen.rand().Pick(case_.indexes), "at latest, index complete");
      Send(s);
      case_.subs.push_back(std::move(s));
    }
    for (auto& s : case_.subs) {
      if (s.cancel == Sub::Cancel::kAtOnce && !s.cancel_sent) SendCancel(s);
    }
    auto& streams = session_.subscribes();
    const bool ended = session_.WaitFor(
        [&] {
          bool all = true;
          for (auto& s : case_.subs) {
            if (streams.Ended(s.uuid)) continue;
            all = false;
            if (s.cancel == Sub::Cancel::kWhenComplete && !s.cancel_sent) {
              // Complete: delivered up to end (without a snapshot from end - 1: nothing to wait
              // for).
              const SubscribeStream* stream = streams.Find(s.uuid);
              const Time first = *s.as_of + (s.snapshot ? 0 : 1);
              const auto upper = stream ? stream->completed_upper() : std::nullopt;
              if (upper.value_or(first) >= case_.end) SendCancel(s);
            }
          }
          return all;
        },
        // The indexes are complete: every subscribe has all it needs.
        5s);
    if (!ended) {
      // Whatever did not end: canceled now (then checked like the others, as far as they got).
      for (auto& s : case_.subs) {
        if (!streams.Ended(s.uuid)) SendCancel(s);
      }
      session_.WaitFor(
          [&] {
            return std::all_of(case_.subs.begin(), case_.subs.end(),
                               [&](const Sub& s) { return streams.Ended(s.uuid); });
          },
          5s);
    }
    for (const auto& s : case_.subs) Check(s, !ended);

    // Drop the indexes; forget the streams.
    for (const auto& index : case_.indexes) {
      pb::Command drop;
      drop.mutable_allow_compaction()->set_id(index);
      drop.mutable_allow_compaction()->mutable_frontier();
      EXPECT_TRUE(validator_.Validate(drop).ok());
      ctl_.Send(drop);
    }
    session_.Pump(0ms);
    CheckStrays();
    for (const auto& s : case_.subs) streams.streams().erase(s.uuid);
    return !sup_.Exited();
  }

 public:
  // Answers for subscribes of earlier cases (whose streams were checked and forgotten after their
  // End): nothing may follow an End.
  void CheckStrays() {
    std::set<std::string> current;
    for (const auto& s : case_.subs) current.insert(s.uuid);
    for (auto it = session_.subscribes().streams().begin();
         it != session_.subscribes().streams().end();) {
      if (current.count(it->first) > 0) {
        ++it;
        continue;
      }
      ++failures_;
      ADD_FAILURE() << "answers for " << it->first << " after its SubscribeEnd was checked:\n"
                    << StreamText(it->second);
      it = session_.subscribes().streams().erase(it);
    }
  }

 private:
  // The index's rows at t (the reference's), memoized per case.
  const Contents& At(const std::string& index, Time t) {
    auto key = std::make_pair(index, t);
    auto it = memo_.find(key);
    if (it == memo_.end()) it = memo_.emplace(key, evaluator_->At(index, t).value()).first;
    return it->second;
  }

  void Check(const Sub& s, bool timed_out) {
    const SubscribeStream empty;
    const SubscribeStream* found = session_.subscribes().Find(s.uuid);
    const SubscribeStream& stream = found ? *found : empty;
    batches_ += static_cast<int>(stream.batches.size());
    parts_ += static_cast<int>(stream.parts());
    updates_ += static_cast<int>(stream.updates());
    int run = 0;
    for (const auto& b : stream.batches) {
      largest_batch_ = std::max(largest_batch_, EncodedUpdatesBytes(b));
      if (b.updates_size() == 1 && EncodedUpdatesBytes(b) > kSmallBatchBytes) ++oversized_;
      run = b.upper() == b.lower() ? run + 1 : 0;
      max_parts_in_interval_ = std::max(max_parts_in_interval_, run);
    }
    ends_[stream.ended() ? pb::SubscribeEnd::Reason_Name(stream.ends.front().reason())
                         : std::string("none")]++;

    std::vector<std::string> problems;
    // The as_of: as sent, or (at latest) what the first batch says.
    Time as_of = s.as_of.value_or(s.as_of_min);
    if (!s.as_of) {
      if (!stream.batches.empty()) {
        const Time lower = stream.batches.front().lower();
        as_of = s.snapshot ? lower : lower - 1;
      } else if (!s.snapshot) {
        // Nothing delivered says nothing of the as_of the supervisor chose in [min, max]: take the
        // one that explains the End, if any does — the earliest for an ERROR (the most times that
        // may hold the error), the latest otherwise (nothing to deliver: [end, end)).
        const bool error_end =
            stream.ended() && stream.ends.front().reason() == pb::SubscribeEnd::ERROR;
        as_of = error_end ? s.as_of_min : s.as_of_max;
      }
      if (as_of < s.as_of_min || as_of > s.as_of_max) {
        problems.push_back("as_of at latest resolved to " + std::to_string(as_of) +
                           ", expected within [" + std::to_string(s.as_of_min) + ", " +
                           std::to_string(s.as_of_max) + "]");
        as_of = std::clamp(as_of, s.as_of_min, s.as_of_max);
      }
    }
    const std::size_t bound = config_.large ? kSmallBatchBytes : kDefaultBatchBytes;
    for (auto& p : CheckStreamShape(stream, as_of, s.snapshot, s.up_to, bound))
      problems.push_back(std::move(p));

    // The first time in [as_of, horizon) with a data error in the reference.
    const Time horizon = s.up_to ? *s.up_to : case_.end + (case_.closed ? 1 : 0);
    std::optional<Time> error_at;
    for (Time t = as_of; t < horizon && !error_at; ++t) {
      if (At(s.index, t).HasError()) error_at = t;
    }
    // The delivered upper: the last completed interval's (none: the first lower).
    const Time delivered = stream.completed_upper().value_or(s.snapshot ? as_of : as_of + 1);
    if (error_at && stream.completed_upper() && *stream.completed_upper() > *error_at) {
      problems.push_back("delivered times up to " + std::to_string(delivered) +
                         " although the reference has a data error at " +
                         std::to_string(*error_at) + ": " + At(s.index, *error_at).FirstError());
    }
    const Time until = std::min<Time>(delivered, std::max<Time>(horizon, case_.end + 1));
    const std::string wrong = CheckStreamContents(stream, as_of, s.snapshot,
                                                  std::min<Time>(until, error_at.value_or(until)),
                                                  [&](Time t) { return At(s.index, t).rows; });
    if (!wrong.empty()) problems.push_back("contents differ from the reference " + wrong);

    // The End.
    using R = pb::SubscribeEnd;
    std::set<R::Reason> allowed;
    // Canceled as soon as it was sent: "once complete" with nothing to wait for (no snapshot, at
    // end - 1) is at once too. The cancel may then reach the runtime before its first look at the
    // subscribe, which would have found the error.
    const bool canceled_at_once =
        s.cancel == Sub::Cancel::kAtOnce ||
        (s.cancel == Sub::Cancel::kWhenComplete && as_of + (s.snapshot ? 0 : 1) >= case_.end);
    if (error_at) {
      allowed = {R::ERROR};
      if (canceled_at_once) allowed.insert(R::CANCELED);
    } else if (s.up_to) {
      allowed = {R::UP_TO};
    } else {
      allowed = {R::CANCELED};
      if (case_.closed) allowed.insert(R::CLOSED);
    }
    if (!stream.ended()) {
      problems.push_back(
          std::string("no SubscribeEnd") +
          (timed_out ? " within 5 s of the indexes' completion (nor 5 s after a CancelSubscribe)"
                     : ""));
    } else {
      const auto& end = stream.ends.front();
      if (allowed.count(end.reason()) == 0) {
        std::string want;
        for (auto r : allowed) want += (want.empty() ? "" : " or ") + R::Reason_Name(r);
        problems.push_back(
            "ended " + R::Reason_Name(end.reason()) +
            (end.detail().empty() ? "" : " (" + end.detail() + ")") + ", expected " + want +
            (error_at ? " (the reference has a data error at t=" + std::to_string(*error_at) +
                            ": " + At(s.index, *error_at).FirstError() + ")"
                      : std::string()));
      }
      if (end.reason() == R::ERROR && end.detail().empty())
        problems.push_back("ended ERROR without a detail");
    }

    const bool verbose = std::getenv("TANDEM_TEST_VERBOSE") != nullptr;
    if (verbose || !problems.empty()) {
      std::string text = "seed " + std::to_string(case_.seed) + ": " + Text(s, as_of) + "\n";
      for (const auto& p : problems) text += "  " + p + "\n";
      text += "  stream:\n" + StreamText(stream);
      if (problems.empty()) {
        std::printf("%s", text.c_str());
      } else {
        ++failures_;
        if (!s.snapshot && s.up_to == as_of + 1) ++empty_interval_failures_;
        if (reported_++ < 5) {
          ADD_FAILURE() << text << "  index " << s.index
                        << " in the reference (rows at each time; errors):\n"
                        << ReferenceText(s.index) << Describe();
        }
      }
    }
  }

  std::string Text(const Sub& s, Time as_of) const {
    return "Subscribe{" + s.uuid + " on " + s.index + ", as_of " +
           (s.as_of ? std::to_string(*s.as_of)
                    : "latest (resolved " + std::to_string(as_of) + ")") +
           (s.snapshot ? ", snapshot" : ", no snapshot") +
           (s.up_to ? ", up_to " + std::to_string(*s.up_to) : std::string(", no up_to")) +
           (s.cancel == Sub::Cancel::kNo       ? ""
            : s.cancel == Sub::Cancel::kAtOnce ? ", canceled at once"
                                               : ", canceled once complete") +
           "} sent " + s.when;
  }

  std::string ReferenceText(const std::string& index) {
    std::string text;
    for (Time t = 0; t <= case_.end; ++t) {
      const Contents& c = At(index, t);
      std::string rows = reference::ToString(c.rows);
      if (rows.size() > 600) rows = rows.substr(0, 600) + "…";
      text += "    t=" + std::to_string(t) + ": " + rows;
      for (const auto& [message, count] : c.errors)
        text += " ERROR " + message + " x" + reference::CountToString(count);
      text += "\n";
    }
    return text;
  }

  std::string Describe() const {
    std::string text = "  rerun: TANDEM_TEST_SEED=" + std::to_string(case_.seed) +
                       "\n  dataflow: " + ipc::ToJson(case_.create) + "\n  log file (split at";
    for (auto s : case_.splits) text += " " + std::to_string(s);
    text += " bytes):\n";
    std::istringstream in(case_.log_text);
    int lines = 0;
    for (std::string line; std::getline(in, line);) {
      if (++lines > 400) {
        text += "    …\n";
        break;
      }
      text += "    " + line + "\n";
    }
    return text;
  }

  const Config config_;
  SupervisorProcess& sup_;
  TestController& ctl_;
  Session session_;
  std::filesystem::path dir_;
  ipc::Validator validator_;
  Case case_;
  std::optional<Evaluator> evaluator_;
  std::map<std::pair<std::string, Time>, Contents> memo_;
  int next_id_ = 1;
  int uuid_ = 0;
  int failures_ = 0, reported_ = 0, empty_interval_failures_ = 0;
  TypeCounts types_;
  int subscribes_ = 0, batches_ = 0, parts_ = 0, updates_ = 0, latest_ = 0, snapshots_ = 0;
  std::size_t largest_batch_ = 0;
  int max_parts_in_interval_ = 0;
  int oversized_ = 0;
  std::map<std::string, int> ends_;
};

void RunConfiguration(const Config& config) {
  SupervisorProcess sup({.two_runtime = config.two_runtime,
                         .workers = config.workers,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "256MiB"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  const TempDir temp("subscribes");
  SubscribeRunner runner(config, sup, ctl, temp.path());
  if (config.large) {
    pb::Command c;
    (*c.mutable_update_configuration()->mutable_params())["subscribe_batch_bytes"] =
        std::to_string(kSmallBatchBytes);
    ctl.Send(c);
    runner.session().Pump(200ms);
    ASSERT_TRUE(runner.session().command_errors().empty())
        << "UpdateConfiguration subscribe_batch_bytes=" << kSmallBatchBytes
        << " refused: " << runner.session().command_errors().front();
  }

  std::vector<std::uint64_t> seeds;
  if (auto seed = SeedFromEnv()) {
    seeds.push_back(*seed);
  } else {
    for (int i = 0; i < CasesFromEnv(config.cases); ++i) seeds.push_back(config.base_seed + i);
  }
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t seed : seeds) {
    if (!runner.Run(seed)) break;
  }
  runner.session().Pump(100ms);
  runner.CheckStrays();
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string ends;
  for (const auto& [reason, n] : runner.ends()) ends += " " + reason + "=" + std::to_string(n);
  std::printf(
      "[ subscribes  ] %s, %d workers%s: %zu cases, %d subscribes (%d with a snapshot, %d at "
      "latest), %d batches (%d parts, at most %d in a row, %d of one row beyond 4 KiB), %d "
      "updates, "
      "largest batch %zu bytes; ends:%s; %d failures (%d without a snapshot and up_to = as_of + "
      "1), "
      "%.1f s\n",
      config.two_runtime ? "two-runtime" : "solo", config.workers,
      config.large ? ", subscribe_batch_bytes 4096" : "", seeds.size(), runner.subscribes(),
      runner.snapshots(), runner.latest(), runner.batches(), runner.parts(),
      runner.max_parts_in_interval(), runner.oversized(), runner.updates(), runner.largest_batch(),
      ends.c_str(), runner.failures(), runner.empty_interval_failures(), seconds);
  if (CheckCoverage(seeds.size(), 8)) {
    EXPECT_GT(runner.latest(), 0);
    EXPECT_GT(runner.ends().count("CANCELED"), 0u);
    if (config.large) {
      EXPECT_GT(runner.parts(), 0) << "no interval came in parts";
      EXPECT_GT(runner.oversized(), 0) << "no row beyond subscribe_batch_bytes was delivered";
    }
    if (config.allow_errors) {
      EXPECT_GT(runner.ends().count("ERROR"), 0u);
    }
  }
  if (config.new_types) ExpectNewTypeCoverage(runner.types(), seeds.size());
  EXPECT_EQ(runner.failures(), 0);
  EXPECT_FALSE(sup.Exited()) << Tail(sup.Log());
}

// The checks themselves (no replica): a stream made from the contents at each time, cut into
// random intervals and parts, passes; each kind of fault put into it is caught.
TEST(SubscribeStreamChecks, ACorrectStreamPassesAndEveryFaultIsCaught) {
  using R = pb::SubscribeEnd;
  int faults = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Generator gen(seed, false, true);
    const Types types = RandomSourceTypes(gen);
    const Time end = 4 + gen.rand().Below(8);
    const auto updates = RandomUpdates(gen, types, end);
    auto at = [&](Time t) {
      reference::Multiset m;
      for (const auto& u : updates) {
        if (u.time <= t) reference::AddTo(m, u.row, u.diff);
      }
      return m;
    };
    const Time as_of = gen.rand().Below(end);
    const Time up_to = as_of + 1 + gen.rand().Below(end - as_of);
    const bool snapshot = gen.rand().Chance(0.6);
    // The updates of [lower, upper), consolidated per (row, time), in time order.
    auto interval = [&](Time lower, Time upper) {
      std::vector<pb::SubscribeUpdate> out;
      for (Time t = lower; t < upper; ++t) {
        reference::Multiset change = at(t);
        if (!(snapshot && t == as_of)) {
          for (const auto& [row, count] : t == 0 ? reference::Multiset() : at(t - 1))
            reference::AddTo(change, row, -count);
        }
        for (const auto& [row, count] : change) {
          pb::SubscribeUpdate u;
          *u.mutable_row() = reference::ToProto(row);
          u.set_time(t);
          u.set_diff(static_cast<std::int64_t>(count));
          out.push_back(u);
        }
      }
      return out;
    };
    SubscribeStream s;
    Time lower = snapshot ? as_of : as_of + 1;
    while (lower < up_to) {
      const Time upper = std::min<Time>(up_to, lower + 1 + gen.rand().Below(3));
      auto ups = interval(lower, upper);
      // Maybe in parts: all but the last with upper == lower.
      std::size_t i = 0;
      while (gen.rand().Chance(0.3) && i + 2 <= ups.size()) {
        pb::SubscribeBatch part;
        part.set_lower(lower);
        part.set_upper(lower);
        const std::size_t n = 1 + gen.rand().Below(ups.size() - i - 1);
        for (std::size_t k = 0; k < n; ++k) *part.add_updates() = ups[i++];
        s.batches.push_back(part);
      }
      pb::SubscribeBatch b;
      b.set_lower(lower);
      b.set_upper(upper);
      for (; i < ups.size(); ++i) *b.add_updates() = ups[i];
      s.batches.push_back(b);
      lower = upper;
    }
    pb::SubscribeEnd e;
    e.set_reason(R::UP_TO);
    s.ends.push_back(e);
    ASSERT_TRUE(CheckStreamShape(s, as_of, snapshot, up_to, 1 << 20).empty())
        << "seed " << seed << ": " << CheckStreamShape(s, as_of, snapshot, up_to, 1 << 20)[0]
        << "\n"
        << StreamText(s);
    ASSERT_EQ(CheckStreamContents(s, as_of, snapshot, up_to, at), "") << "seed " << seed << "\n"
                                                                      << StreamText(s);

    // One fault at a time: each must be caught by one of the checks.
    auto caught = [&](const SubscribeStream& bad) {
      return !CheckStreamShape(bad, as_of, snapshot, up_to, 1 << 20).empty() ||
             !CheckStreamContents(bad, as_of, snapshot, up_to, at).empty();
    };
    std::vector<std::pair<std::string, SubscribeStream>> bad;
    std::vector<std::size_t> with_updates;
    for (std::size_t i = 0; i < s.batches.size(); ++i) {
      if (s.batches[i].updates_size() > 0) with_updates.push_back(i);
    }
    if (!with_updates.empty()) {
      const std::size_t i = gen.rand().Pick(with_updates);
      SubscribeStream x = s;  // an update lost
      auto* ups = x.batches[i].mutable_updates();
      ups->erase(ups->begin() + static_cast<int>(gen.rand().Below(ups->size())));
      bad.emplace_back("lost update", x);
      x = s;  // an update doubled
      *x.batches[i].add_updates() = s.batches[i].updates(0);
      bad.emplace_back("doubled update", x);
      x = s;  // a diff changed
      x.batches[i].mutable_updates(0)->set_diff(s.batches[i].updates(0).diff() + 1);
      bad.emplace_back("changed diff", x);
      x = s;  // a zero diff added
      *x.batches[i].add_updates() = s.batches[i].updates(0);
      x.batches[i].mutable_updates(x.batches[i].updates_size() - 1)->set_diff(0);
      bad.emplace_back("zero diff", x);
      x = s;  // a time outside the interval
      x.batches[i].mutable_updates(0)->set_time(up_to);
      bad.emplace_back("time beyond", x);
    }
    {
      SubscribeStream x = s;  // a gap
      if (!x.batches.empty()) {
        x.batches.front().set_lower(x.batches.front().lower() + 1);
        bad.emplace_back("wrong first lower", x);
      }
      x = s;  // a second End
      x.ends.push_back(e);
      bad.emplace_back("two ends", x);
      x = s;  // a batch after the End
      x.after_end = 1;
      bad.emplace_back("batch after the end", x);
      if (!x.batches.empty()) {
        x = s;  // the last batch short of up_to
        x.batches.pop_back();
        bad.emplace_back("short of up_to", x);
      }
    }
    for (const auto& [what, x] : bad) {
      EXPECT_TRUE(caught(x)) << "seed " << seed << ": a stream with a " << what
                             << " passed the checks:\n"
                             << StreamText(x);
      ++faults;
    }
  }
  EXPECT_GT(faults, 1000);
}

// Thorough (the slow label's run): more cases.
const int kCases = Thorough() ? 150 : 20;
const int kLargeCases = Thorough() ? 40 : 12;

TEST(SubscribeCorrectness, SoloOneWorker) { RunConfiguration({false, 1, kCases, 3100000}); }
TEST(SubscribeCorrectness, SoloFourWorkers) { RunConfiguration({false, 4, kCases, 3200000}); }
TEST(SubscribeCorrectness, TwoRuntimeTwoWorkers) { RunConfiguration({true, 2, kCases, 3300000}); }
TEST(SubscribeCorrectness, DataErrorsSoloTwoWorkers) {
  RunConfiguration({false, 2, kCases, 3400000, true});
}
TEST(SubscribeCorrectness, DataErrorsTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kCases, 3500000, true});
}
TEST(SubscribeCorrectness, SmallBatchesSoloTwoWorkers) {
  RunConfiguration({false, 2, kLargeCases, 3600000, false, true});
}
TEST(SubscribeCorrectness, SmallBatchesTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, kLargeCases, 3700000, false, true});
}
// The types of DESIGN §16, their functions and aggregates, delivered by subscribes.
const int kNewTypeCases = Thorough() ? 60 : 30;
TEST(SubscribeCorrectness, NewTypesSoloOneWorker) {
  RunConfiguration({false, 1, kNewTypeCases, 3800000, false, false, true});
}
TEST(SubscribeCorrectness, NewTypesSoloTwoWorkers) {
  RunConfiguration({false, 2, kNewTypeCases, 3810000, false, false, true});
}
TEST(SubscribeCorrectness, NewTypesSoloFourWorkers) {
  RunConfiguration({false, 4, kNewTypeCases, 3820000, false, false, true});
}
TEST(SubscribeCorrectness, NewTypesTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, kNewTypeCases, 3830000, false, false, true});
}
TEST(SubscribeCorrectness, NewTypesTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewTypeCases, 3840000, false, false, true});
}
TEST(SubscribeCorrectness, NewTypesTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kNewTypeCases, 3850000, false, false, true});
}
TEST(SubscribeCorrectness, NewTypesDataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewTypeCases, 3860000, true, false, true});
}

}  // namespace
}  // namespace tandem::testing
