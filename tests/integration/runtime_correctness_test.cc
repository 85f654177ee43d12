// Randomized end-to-end correctness of the real runtime (tandem-worker) against the naive
// reference evaluator (tests/reference/): for solo and two-runtime replicas with 1, 2 and 4
// workers, many random dataflows over log sources, each peeked at every time it has, compared
// row by row with what the reference computes from scratch. The NewOperators* tests generate
// plans with Join, TopK, Negate, Threshold and the issue-14 aggregates too (every case has one;
// run only them with --gtest_filter='*NewOperators*'); the others draw exactly what they drew
// before those operators existed.
//
// Every case is determined by its seed. On a mismatch the test prints the seed, the log file,
// the dataflow and the peek as JSON, the time, and both answers; rerun one case with
//   TANDEM_TEST_SEED=<seed> tandem_runtime_tests --gtest_filter=<the configuration's test>
// and change the number of cases per configuration with TANDEM_TEST_CASES=<n>;
// TANDEM_TEST_VERBOSE=1 prints every peek with both answers.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/datum_text.h"
#include "differential.h"
#include "ipc/validate.h"
#include "reference/reference.h"
#include "shm/layout.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "unit/protocol_samples.h"

namespace tandem::testing {
namespace {

// ---- one case -------------------------------------------------------------------------------

struct Case {
  std::uint64_t seed = 0;
  Time end = 0;         // the final progress mark
  bool closed = false;  // the log ends with C: the indexes close, readable at every time >= end
  std::string log_text;
  std::size_t split = 0;  // bytes written before CreateDataflow; the rest is appended after
  pb::Command create;
  std::vector<std::string> indexes;
  std::vector<pb::Command> extra_peeks;  // sent besides the generated ones (id and time set)
  std::map<std::string, Types> types;    // of each build, as the generator made it
};

// A hand-written case (a regression test for a disagreement found by the random cases).
struct FixedCase {
  std::string name;
  Types source;
  std::vector<reference::Update> updates;  // written in this order, a progress mark per time
  Time end = 0;                            // the final progress mark
  std::vector<pb::Plan> builds;            // Get "$0" is the source, "$1" the first build, ...
  std::vector<std::pair<int, std::vector<std::uint32_t>>> exports;  // on "$i", key columns
  struct Peek {
    int index = 0;  // export #
    Time t = 0;
    std::vector<Row> keys;
    pb::MapFilterProject mfp;
    pb::Finishing finishing;
  };
  std::vector<Peek> peeks;  // besides the generated ones
  // When set, the log file as written (it must mean `updates`); else updates in time order with
  // a progress mark after every time.
  std::string log;
  bool closed = false;  // the log ends with C (also peeked beyond `end`)
};

// Rewrites Get "$i" to names[i].
void Rename(pb::Plan* plan, const std::vector<std::string>& names) {
  switch (plan->kind_case()) {
    case pb::Plan::kGet:
      if (!plan->get().id().empty() && plan->get().id()[0] == '$') {
        plan->mutable_get()->set_id(names.at(std::stoul(plan->get().id().substr(1))));
      }
      break;
    case pb::Plan::kMfp:
      Rename(plan->mutable_mfp()->mutable_input(), names);
      break;
    case pb::Plan::kReduce:
      Rename(plan->mutable_reduce()->mutable_input(), names);
      break;
    case pb::Plan::kUnion:
      for (auto& input : *plan->mutable_union_()->mutable_inputs()) Rename(&input, names);
      break;
    case pb::Plan::kDistinct:
      Rename(plan->mutable_distinct()->mutable_input(), names);
      break;
    case pb::Plan::kJoin:
      Rename(plan->mutable_join()->mutable_left(), names);
      Rename(plan->mutable_join()->mutable_right(), names);
      break;
    case pb::Plan::kTopK:
      Rename(plan->mutable_top_k()->mutable_input(), names);
      break;
    case pb::Plan::kNegate:
      Rename(plan->mutable_negate()->mutable_input(), names);
      break;
    case pb::Plan::kThreshold:
      Rename(plan->mutable_threshold()->mutable_input(), names);
      break;
    case pb::Plan::KIND_NOT_SET:
      break;
  }
}

struct Config {
  bool two_runtime = false;
  int workers = 1;
  int cases = 40;
  std::uint64_t base_seed = 0;
  bool allow_errors = false;  // DIV/MOD and negative data: data errors happen
  // Plans with Join, TopK, Negate, Threshold and the new aggregates (every case has one).
  bool new_operators = false;
  // With new_operators: columns, expressions and aggregates of the types of DESIGN §16 too
  // (Generator::EnableNewTypes).
  bool new_types = false;
};

class CaseRunner {
 public:
  CaseRunner(const Config& config, SupervisorProcess& sup, TestController& ctl,
             const std::filesystem::path& dir)
      : config_(config), sup_(sup), ctl_(ctl), session_(sup, ctl), dir_(dir) {
    // The supervisor accepted Hello; the local validator mirrors its epoch (and gives the schemas
    // of the indexes).
    pb::Command hello;
    hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
    EXPECT_TRUE(validator_.Validate(hello).ok());
  }

  // Returns false when the replica is gone (no point going on).
  bool Run(std::uint64_t seed) {
    // A case whose reference shows a data error is generated again (unless errors are wanted).
    for (int attempt = 0;; ++attempt) {
      Generator gen(seed * 7919 + static_cast<std::uint64_t>(attempt), config_.allow_errors,
                    config_.new_operators);
      if (config_.new_types) gen.EnableNewTypes();
      if (Generate(gen, seed) || attempt >= 20) {
        if (config_.new_operators) {
          operators_ += case_operators_;
          operators_.avg_float += gen.avg_float();
          if (case_operators_.total() > 0) ++new_operator_cases_;
        }
        if (config_.new_types) CountTypes(case_.create, types_);
        return Execute(gen, seed);
      }
    }
  }

  int mismatches() const { return mismatches_; }
  int peeks() const { return peeks_; }
  // Of the peeks: how many the reference answers with rows, and with an error.
  int nonempty_answers() const { return nonempty_answers_; }
  int error_answers() const { return error_answers_; }
  int limited_answers() const { return limited_answers_; }
  // Peeks below an allowed compaction frontier that answered Error ("t < since").
  int compacted_answers() const { return compacted_answers_; }
  // With new_operators: the new operators of the cases run, and how many cases had one.
  const OperatorCounts& operators() const { return operators_; }
  int new_operator_cases() const { return new_operator_cases_; }
  // With new_types: the types and functions of the cases run.
  const TypeCounts& types() const { return types_; }

 private:
  // Builds case_ and evaluator_; false if the reference sees an error but errors are not wanted.
  bool Generate(Generator& gen, std::uint64_t seed) {
    case_ = Case{};
    case_.seed = seed;
    case_.end = 8 + gen.rand().Below(9);  // 8..16
    const Types source_types = RandomSourceTypes(gen);
    const Magnitude magnitude = RandomMagnitude(gen, config_.allow_errors ? 0.3 : 0.15);
    case_.closed = gen.rand().Chance(0.25);
    const auto updates =
        RandomUpdates(gen, source_types, case_.end, magnitude.huge, 1, magnitude.diff);
    case_.log_text = LogText(gen, updates, case_.end, case_.closed);
    case_.split =
        gen.rand().Chance(0.25) ? gen.rand().Below(case_.log_text.size()) : case_.log_text.size();
    const std::string path =
        (dir_ / ("case-" + std::to_string(seed) + "-" + std::to_string(next_id_) + ".log"))
            .string();

    pb::Command c;
    auto* d = c.mutable_create_dataflow()->mutable_desc();
    const std::string source_id =
        StartDataflow(d, "correctness case " + std::to_string(seed), source_types, path);
    std::vector<Generator::Collection> scope = {{source_id, source_types, {magnitude.bits, 0}}};
    const int builds = 1 + static_cast<int>(gen.rand().Below(2));
    case_operators_ = OperatorCounts{};
    for (int i = 0; i < builds; ++i) {
      Types types;
      Generator::Shape shape;
      auto* b = d->add_objects_to_build();
      b->set_id(NewId());
      *b->mutable_plan() =
          gen.Plan(scope, 1 + static_cast<int>(gen.rand().Below(3)), &types, &shape);
      case_.types[b->id()] = types;
      case_operators_ += CountOperators(b->plan());
      scope.push_back({b->id(), types, shape});
    }
    const int exports = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < exports; ++i) {
      // Mostly on a build, sometimes on the source.
      const auto& on =
          gen.rand().Chance(0.15) ? scope.front() : scope[1 + gen.rand().Below(scope.size() - 1)];
      auto* e = d->add_index_exports();
      e->set_id(IndexId(gen));
      e->set_on(on.id);
      std::vector<std::uint32_t> columns(on.types.size());
      for (std::uint32_t k = 0; k < columns.size(); ++k) columns[k] = k;
      std::shuffle(columns.begin(), columns.end(), gen.rand().engine());
      const std::size_t width = 1 + gen.rand().Below(std::min<std::size_t>(2, columns.size()));
      for (std::size_t k = 0; k < width; ++k) e->add_key(columns[k]);
      case_.indexes.push_back(e->id());
    }
    case_.create = c;

    evaluator_.emplace(*d);
    evaluator_->AddUpdates(source_id, updates);
    // Every case of a new-operator suite has one of them (else it is generated again).
    if (config_.new_operators && case_operators_.total() == 0) return false;
    if (config_.allow_errors) return true;
    for (const auto& index : case_.indexes) {
      for (Time t = 0; t < case_.end; ++t) {
        if (evaluator_->At(index, t)->HasError()) return false;
      }
    }
    return true;
  }

  std::string NewId() { return "u" + std::to_string(next_id_++); }

  // A new id, or sometimes the id of an index dropped earlier (ids are reusable once dropped:
  // the new index must get a slot of its own, never the old one's).
  std::string IndexId(Generator& gen) {
    if (reusable_.empty() || !gen.rand().Chance(0.3)) return NewId();
    const auto it = reusable_.begin() + static_cast<long>(gen.rand().Below(reusable_.size()));
    const std::string id = *it;
    reusable_.erase(it);
    return id;
  }

  // A MAINTAINED dataflow from 0 with one log source; returns the source's id.
  std::string StartDataflow(pb::DataflowDescription* d, const std::string& name,
                            const Types& source_types, const std::string& path) {
    d->set_debug_name(name);
    const std::string source_id = NewId();
    MaintainedFromLog(d, source_id, path, source_types);
    return source_id;
  }

 public:
  bool RunFixed(const FixedCase& fixed) {
    case_ = Case{};
    case_.seed = 0;
    case_.end = fixed.end;
    for (Time t = 0; fixed.log.empty() && t < fixed.end; ++t) {
      for (const auto& u : fixed.updates) {
        if (u.time == t) case_.log_text += reference::LogUpdateLine(u.row, u.time, u.diff);
      }
      case_.log_text += "P " + std::to_string(t + 1) + "\n";
    }
    if (fixed.closed) case_.log_text += "C\n";
    case_.closed = fixed.closed;
    if (!fixed.log.empty()) case_.log_text = fixed.log;
    case_.split = case_.log_text.size();
    const std::string path = (dir_ / ("fixed-" + std::to_string(next_id_) + ".log")).string();
    auto* d = case_.create.mutable_create_dataflow()->mutable_desc();
    std::vector<std::string> names = {StartDataflow(d, fixed.name, fixed.source, path)};
    for (const auto& plan : fixed.builds) {
      auto* b = d->add_objects_to_build();
      b->set_id(NewId());
      *b->mutable_plan() = plan;
      Rename(b->mutable_plan(), names);
      names.push_back(b->id());
    }
    for (const auto& [on, key] : fixed.exports) {
      auto* e = d->add_index_exports();
      e->set_id(NewId());
      e->set_on(names.at(static_cast<std::size_t>(on)));
      for (auto k : key) e->add_key(k);
      case_.indexes.push_back(e->id());
    }
    for (const auto& peek : fixed.peeks) {
      pb::Command c;
      c.mutable_peek()->set_id(case_.indexes.at(static_cast<std::size_t>(peek.index)));
      c.mutable_peek()->set_timestamp(peek.t);
      for (const auto& k : peek.keys) *c.mutable_peek()->add_keys() = reference::ToProto(k);
      *c.mutable_peek()->mutable_mfp() = peek.mfp;
      *c.mutable_peek()->mutable_finishing() = peek.finishing;
      case_.extra_peeks.push_back(std::move(c));
    }
    evaluator_.emplace(*d);
    evaluator_->AddUpdates(names[0], fixed.updates);
    Generator gen(1, false);
    current_name_ = fixed.name;
    const bool alive = Execute(gen, 0);
    current_name_.clear();
    return alive;
  }

 private:
  bool Execute(Generator& gen, std::uint64_t seed) {
    const pb::DataflowDescription& desc = case_.create.create_dataflow().desc();
    const std::string path = desc.source_imports(0).source().log().path();
    const Status valid = validator_.Validate(case_.create);
    if (!valid.ok()) {
      ADD_FAILURE() << "seed " << seed
                    << ": the generator made a dataflow the validator refuses: " << valid.ToString()
                    << "\n"
                    << ipc::ToJson(case_.create);
      return true;
    }
    for (const auto& [id, types] : case_.types) {
      const std::string wrong = TypeMismatch(types, validator_.collections().at(id));
      if (!wrong.empty()) {
        ADD_FAILURE() << "seed " << seed << ": the schema of " << id << ": " << wrong << "\n"
                      << ipc::ToJson(case_.create);
      }
    }
    // A reused index id: its drop has been reported (the empty frontier) before it is created
    // again; from here on its frontiers are the new index's.
    for (const auto& id : case_.indexes) {
      auto was = std::find(dropped_.begin(), dropped_.end(), id);
      if (was == dropped_.end()) continue;
      const bool reported = session_.WaitFor(
          [&] { return session_.Write(id) == std::numeric_limits<std::uint64_t>::max(); }, 10s);
      EXPECT_TRUE(reported) << "the drop of " << id << " was never reported";
      session_.Forget(id);
      dropped_.erase(was);
      ++reused_;
    }
    {
      std::ofstream out(path, std::ios::binary);
      out << case_.log_text.substr(0, case_.split);
    }
    const auto created = std::chrono::steady_clock::now();
    ctl_.Send(case_.create);
    if (case_.split < case_.log_text.size()) {
      // The rest arrives while the runtime tails the file (maybe mid-line before this).
      std::this_thread::sleep_for(std::chrono::milliseconds(gen.rand().Below(20)));
      std::ofstream out(path, std::ios::binary | std::ios::app);
      out << case_.log_text.substr(case_.split);
    }

    const bool advanced = session_.WaitFor(
        [&] {
          return std::all_of(case_.indexes.begin(), case_.indexes.end(), [&](const auto& id) {
            auto w = session_.Write(id);
            // A closed source's indexes close (the empty frontier), maybe a step after `end`.
            return w && (case_.closed ? *w == std::numeric_limits<std::uint64_t>::max()
                                      : *w >= case_.end);
          });
        },
        30s);
    if (!session_.command_errors().empty()) {
      ADD_FAILURE() << "seed " << seed << ": CommandError: " << session_.command_errors().front()
                    << "\n"
                    << ipc::ToJson(case_.create);
      session_.command_errors().clear();
      return !sup_.Exited();
    }
    if (!advanced) {
      std::string frontiers;
      for (const auto& id : case_.indexes) {
        auto w = session_.Write(id);
        frontiers += " " + id + "=" + (w ? std::to_string(*w) : "none");
      }
      ADD_FAILURE() << "seed " << seed << ": the indexes did not reach upper " << case_.end
                    << " in 30 s (latest write frontiers:" << frontiers << ")"
                    << (sup_.Exited() ? "; the replica is gone" : "") << "\n"
                    << Describe() << Tail(sup_.Log());
      return !sup_.Exited();
    }
    const auto ready = std::chrono::steady_clock::now();
    for (const auto& id : case_.indexes) {
      if (case_.closed) {
        EXPECT_EQ(session_.Write(id), std::numeric_limits<std::uint64_t>::max())
            << "seed " << seed << ": index " << id << " of a closed source did not close\n"
            << Describe();
      } else {
        EXPECT_EQ(session_.Write(id), case_.end)
            << "seed " << seed << ": index " << id << " went beyond the last progress mark";
      }
    }

    // Sometimes allow compaction first: reads at t >= since stay exact; below it a peek answers
    // Error, or (if the publisher has not compacted that far yet) still the exact answer.
    Time since = 0;
    if (current_name_.empty() && gen.rand().Chance(0.3)) {
      since = 1 + gen.rand().Below(case_.end);
      for (const auto& index : case_.indexes) {
        pb::Command compact;
        compact.mutable_allow_compaction()->set_id(index);
        compact.mutable_allow_compaction()->mutable_frontier()->add_elements(since);
        EXPECT_TRUE(validator_.Validate(compact).ok());
        ctl_.Send(compact);
      }
      if (gen.rand().Chance(0.5)) std::this_thread::sleep_for(20ms);
    }

    // Every time, every index: full scans, key lookups, mfps and finishings.
    std::vector<pb::Command> sent;
    for (const auto& index : case_.indexes) {
      const pb::Schema& schema = validator_.collections().at(index);
      const auto key = evaluator_->IndexKey(index).value();
      // Every time it has; a closed index also at times beyond its last update, up to the
      // largest valid time ("latest" of a closed collection: its final contents).
      std::vector<Time> times;
      for (Time t = 0; t < case_.end; ++t) times.push_back(t);
      if (case_.closed) {
        for (Time t : {case_.end, case_.end + 1 + gen.rand().Below(1000), kMaxTime})
          times.push_back(t);
      }
      for (Time t : times) {
        const Contents at_t = evaluator_->At(index, t).value();
        std::vector<pb::Command> peeks(1);
        if (gen.rand().Chance(0.6)) {  // key lookup
          peeks.emplace_back();
          for (const auto& k : gen.Keys(key, schema, at_t.rows)) {
            *peeks.back().mutable_peek()->add_keys() = reference::ToProto(k);
          }
        }
        if (gen.rand().Chance(0.5)) {  // mfp and finishing, maybe with keys
          peeks.emplace_back();
          auto* p = peeks.back().mutable_peek();
          if (gen.rand().Chance(0.4)) {
            for (const auto& k : gen.Keys(key, schema, at_t.rows))
              *p->add_keys() = reference::ToProto(k);
          }
          Types output;
          *p->mutable_mfp() = gen.rand().Chance(0.8) ? gen.Mfp(TypesOf(schema), &output, 1)
                                                     : pb::MapFilterProject();
          if (p->mfp().map_size() == 0 && p->mfp().predicates_size() == 0 &&
              p->mfp().projection_size() == 0) {
            output = TypesOf(schema);
          }
          *p->mutable_finishing() = gen.Finishing(output.size());
        } else if (gen.rand().Chance(0.3)) {  // finishing only
          peeks.emplace_back();
          *peeks.back().mutable_peek()->mutable_finishing() = gen.Finishing(schema.columns_size());
        }
        for (auto& c : peeks) {
          auto* p = c.mutable_peek();
          p->set_uuid("s" + std::to_string(seed) + "-" + std::to_string(uuid_++));
          p->set_id(index);
          p->set_timestamp(t);
          const Status ok = validator_.Validate(c);
          if (!ok.ok()) {
            ADD_FAILURE() << "seed " << seed
                          << ": the generator made a peek the validator refuses: " << ok.ToString()
                          << "\n"
                          << ipc::ToJson(c);
            continue;
          }
          ctl_.Send(c);
          sent.push_back(std::move(c));
        }
      }
    }
    for (auto c : case_.extra_peeks) {
      c.mutable_peek()->set_uuid("s" + std::to_string(seed) + "-" + std::to_string(uuid_++));
      const Status ok = validator_.Validate(c);
      if (!ok.ok()) {
        ADD_FAILURE() << "a hand-written peek the validator refuses: " << ok.ToString();
        continue;
      }
      ctl_.Send(c);
      sent.push_back(std::move(c));
    }
    const bool answered = session_.WaitFor(
        [&] {
          return std::all_of(sent.begin(), sent.end(), [&](const pb::Command& c) {
            return session_.peeks().count(c.peek().uuid()) > 0;
          });
        },
        30s);
    const auto done = std::chrono::steady_clock::now();
    // Not a failure: slow steps are worth a look, though.
    auto ms = [](auto d) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    if (done - created > 500ms) {
      std::printf(
          "[ slow case   ] %s: indexes complete after %lld ms, %zu peeks answered %lld ms later\n",
          current_name_.empty() ? ("seed " + std::to_string(seed)).c_str() : current_name_.c_str(),
          static_cast<long long>(ms(ready - created)), sent.size(),
          static_cast<long long>(ms(done - ready)));
    }
    int reported = 0;
    for (const auto& c : sent) {
      const pb::Peek& peek = c.peek();
      const PeekAnswer expected = evaluator_->Peek(peek);
      auto it = session_.peeks().find(peek.uuid());
      ++peeks_;
      if (!expected.ok) ++error_answers_;
      if (expected.ok && !expected.rows.empty()) ++nonempty_answers_;
      // A limit that cuts rows off: with several workers, each applies it to its part first
      // (workers/peek.h: KeepFirstForFinishing) and the merge must still give this answer.
      if (expected.ok && peek.finishing().has_limit()) {
        pb::Peek unlimited = peek;
        unlimited.mutable_finishing()->clear_limit();
        unlimited.mutable_finishing()->clear_offset();
        const PeekAnswer all = evaluator_->Peek(unlimited);
        std::uint64_t counted = 0;
        for (const auto& row : all.rows) {
          if (__builtin_add_overflow(counted, row.second, &counted)) counted = UINT64_MAX;
        }
        if (!all.ok || counted > peek.finishing().offset() + peek.finishing().limit())
          ++limited_answers_;
      }
      if (it == session_.peeks().end()) {
        ++mismatches_;
        if (reported++ < 3) {
          ADD_FAILURE() << "seed " << seed << ": no answer to peek at t=" << peek.timestamp()
                        << ": " << ipc::ToJson(c) << "\n"
                        << Describe();
        }
        continue;
      }
      if (std::getenv("TANDEM_TEST_VERBOSE") != nullptr) {
        std::printf("%s t=%llu %s\n  expected %s\n  actual   %s\n",
                    current_name_.empty() ? ("seed " + std::to_string(seed)).c_str()
                                          : current_name_.c_str(),
                    static_cast<unsigned long long>(peek.timestamp()), ipc::ToJson(peek).c_str(),
                    reference::ToString(expected).c_str(), AnswerText(it->second).c_str());
      }
      if (peek.timestamp() < since && it->second.has_error()) {
        ++compacted_answers_;
      } else if (!Agrees(expected, it->second)) {
        ++mismatches_;
        if (reported++ < 3) {
          ADD_FAILURE() << "seed " << seed << ": mismatch at t=" << peek.timestamp()
                        << (since > 0 ? " (compaction allowed to " + std::to_string(since) + ")"
                                      : std::string())
                        << "\n"
                        << "  peek:     " << ipc::ToJson(c) << "\n"
                        << "  expected: " << reference::ToString(expected) << "\n"
                        << "  actual:   " << AnswerText(it->second) << "\n"
                        << "  index contents at t: "
                        << reference::ToString(evaluator_->At(peek.id(), peek.timestamp())->rows)
                        << "\n"
                        << Describe();
        }
      }
      session_.peeks().erase(it);
    }
    if (!answered && sup_.Exited()) {
      ADD_FAILURE() << "the replica is gone\n" << Tail(sup_.Log());
      return false;
    }

    // Drop the indexes — now, or later together with other cases' (several dataflows dropped in
    // one go, so that one lockstep iteration applies all their drops).
    live_.insert(live_.end(), case_.indexes.begin(), case_.indexes.end());
    if (gen.rand().Chance(0.5)) DropLive();
    session_.Pump(0ms);
    return !sup_.Exited();
  }

  // Drops every index still live, back to back; the empty frontier is reported for each.
  void DropLive() {
    for (const auto& index : live_) {
      pb::Command drop;
      drop.mutable_allow_compaction()->set_id(index);
      drop.mutable_allow_compaction()->mutable_frontier();
      EXPECT_TRUE(validator_.Validate(drop).ok());
      ctl_.Send(drop);
      dropped_.push_back(index);
      reusable_.push_back(index);
    }
    live_.clear();
  }

 public:
  // After the last case: every index is dropped and reported the empty write frontier, and every
  // registry slot is freed (none is left behind holding memory).
  void CheckDrops() {
    DropLive();
    const auto empty = std::numeric_limits<std::uint64_t>::max();
    const bool all = session_.WaitFor(
        [&] {
          return std::all_of(dropped_.begin(), dropped_.end(),
                             [&](const auto& id) { return session_.Write(id) == empty; });
        },
        10s);
    if (!all) {
      std::string missing;
      for (const auto& id : dropped_) {
        if (session_.Write(id) != empty) missing += " " + id;
      }
      ADD_FAILURE() << "dropped indexes that did not report the empty frontier:" << missing;
    }
    EXPECT_TRUE(session_.command_errors().empty()) << session_.command_errors().front();
    auto live_slots = [&] { return LiveSlots(sup_.segment()); };
    const bool freed = session_.WaitFor([&] { return live_slots().empty(); }, 10s);
    EXPECT_TRUE(freed) << "slots left behind after every index was dropped:" << live_slots();
  }

  int reused() const { return reused_; }

 private:
  std::string Describe() const {
    return CaseText(current_name_.empty()
                        ? "  rerun: TANDEM_TEST_SEED=" + std::to_string(case_.seed)
                        : "  hand-written case: " + current_name_,
                    case_.create, case_.log_text);
  }

  const Config config_;
  SupervisorProcess& sup_;
  TestController& ctl_;
  Session session_;
  std::filesystem::path dir_;
  ipc::Validator validator_;
  Case case_;
  std::optional<Evaluator> evaluator_;
  std::vector<std::string> dropped_;
  std::vector<std::string> live_;      // indexes not dropped yet
  std::vector<std::string> reusable_;  // dropped index ids a later case may create again
  int reused_ = 0;
  std::string current_name_;  // of the hand-written case being run
  int next_id_ = 1;
  int uuid_ = 0;
  int mismatches_ = 0;
  int peeks_ = 0;
  int nonempty_answers_ = 0;
  int error_answers_ = 0;
  int limited_answers_ = 0;
  int compacted_answers_ = 0;
  OperatorCounts case_operators_;  // of the case being generated
  OperatorCounts operators_;
  int new_operator_cases_ = 0;
  TypeCounts types_;
};

void RunConfiguration(const Config& config, const std::vector<FixedCase>& fixed = {}) {
#ifndef TANDEM_WORKER_BIN
  (void)config;
  (void)fixed;
  GTEST_SKIP() << "tandem-worker is not built in this tree";
#else
  SupervisorProcess sup({.two_runtime = config.two_runtime,
                         .workers = config.workers,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "256MiB"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  // (Once in CI the Hello went unanswered for 5 s after the replica was ready; not reproduced:
  // the supervisor's log says what it saw.)
  ASSERT_TRUE(ctl.Hello()) << sup.Log();

  const TempDir temp("correctness");
  const std::filesystem::path dir = temp.path();

  CaseRunner runner(config, sup, ctl, dir);
  std::vector<std::uint64_t> seeds;
  if (config.cases > 0) {
    if (auto seed = SeedFromEnv()) {
      seeds.push_back(*seed);
    } else {
      for (int i = 0; i < CasesFromEnv(config.cases); ++i) seeds.push_back(config.base_seed + i);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  bool alive = true;
  for (const auto& c : fixed) {
    if (!(alive = runner.RunFixed(c))) break;
  }
  for (std::uint64_t seed : seeds) {
    if (!alive || !(alive = runner.Run(seed))) break;
  }
  runner.CheckDrops();
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ correctness ] %s, %d workers: %zu cases, %d peeks (%d with rows, %d errors, %d below "
      "since, %d cut by a limit), %d index ids reused, %d mismatches, %.1f s\n",
      config.two_runtime ? "two-runtime" : "solo", config.workers, seeds.size() + fixed.size(),
      runner.peeks(), runner.nonempty_answers(), runner.error_answers(), runner.compacted_answers(),
      runner.limited_answers(), runner.reused(), runner.mismatches(), seconds);
  if (config.new_operators) {
    ExpectNewOperatorCoverage(runner.operators(), runner.new_operator_cases(), seeds.size(), {}, "",
                              2, config.new_types);
  }
  if (config.new_types) ExpectNewTypeCoverage(runner.types(), seeds.size());
  // The per-worker limits are checked against the reference only if limits cut rows off.
  if (config.workers > 1 && CheckCoverage(seeds.size(), 20)) {
    EXPECT_GT(runner.limited_answers(), 20);
  }
  EXPECT_EQ(runner.mismatches(), 0);
  EXPECT_FALSE(sup.Exited()) << Tail(sup.Log());
#endif
}

// ---- hand-written cases ---------------------------------------------------------------------

Row Ints(std::vector<std::int64_t> values) {
  Row row;
  for (auto v : values) row.emplace_back(std::in_place_type<std::int64_t>, v);
  return row;
}

std::vector<FixedCase> HandWrittenCases() {
  namespace s = ipc::samples;
  const Types kv = {{pb::INT64, false}, {pb::INT64, false}};
  const Types k = {{pb::INT64, false}};
  // 10 / k: an error for every row with k = 0.
  const pb::Plan ten_over_k =
      s::MfpPlan(s::GetPlan("$0"), s::Mfp({s::Binary(pb::DIV, s::IntLit(10), s::Col(0))}, {}, {}));
  std::vector<FixedCase> cases;
  cases.push_back(
      {.name = "the same key twice selects its rows once",
       .source = kv,
       .updates = {{Ints({1, 10}), 0, 1}, {Ints({2, 20}), 0, 2}},
       .end = 1,
       .exports = {{0, {0}}},
       .peeks = {{.keys = {Ints({1}), Ints({1})}}, {.keys = {Ints({2}), Ints({1}), Ints({2})}}}});
  cases.push_back({.name = "an error retracted later is gone",
                   .source = k,
                   .updates = {{Ints({0}), 0, 1}, {Ints({1}), 0, 1}, {Ints({0}), 1, -1}},
                   .end = 3,
                   .builds = {ten_over_k},
                   .exports = {{1, {0}}}});
  cases.push_back({.name = "errors that cancel within one time are no error",
                   .source = k,
                   .updates = {{Ints({0}), 0, 2}, {Ints({0}), 0, -2}, {Ints({1}), 0, 1}},
                   .end = 2,
                   .builds = {ten_over_k},
                   .exports = {{1, {0}}}});
  cases.push_back({.name = "errors that cancel within one time, retraction first",
                   .source = k,
                   .updates = {{Ints({1}), 0, 1}, {Ints({0}), 1, -2}, {Ints({0}), 1, 2}},
                   .end = 3,
                   .builds = {ten_over_k},
                   .exports = {{1, {0}}}});
  cases.push_back(
      {.name = "an error retracted in two steps is gone",
       .source = k,
       .updates = {{Ints({1}), 0, 1}, {Ints({0}), 1, 3}, {Ints({0}), 2, -1}, {Ints({0}), 3, -2}},
       .end = 5,
       .builds = {ten_over_k},
       .exports = {{1, {0}}}});
  // Each group once, however many rows it has and whatever is retracted.
  const Types gv = {{pb::INT64, false}, {pb::INT64, false}};
  cases.push_back({.name = "a reduce without aggregates lists each group once",
                   .source = gv,
                   .updates = {{Ints({1, 10}), 0, 1},
                               {Ints({1, 11}), 0, 1},
                               {Ints({1, 12}), 1, 1},
                               {Ints({2, 20}), 1, 1},
                               {Ints({3, 30}), 1, 1},
                               {Ints({3, 31}), 2, 1},
                               {Ints({1, 11}), 2, -1},
                               {Ints({3, 30}), 3, -1}},
                   .end = 4,
                   .builds = {s::ReducePlan(s::GetPlan("$0"), {0}, {})},
                   .exports = {{1, {0}}}});
  // Multiplicities that do not fit int64 are an error, never a wrapped count.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  cases.push_back({.name = "a count beyond int64 in an index is an error, and fits again later",
                   .source = k,
                   .updates = {{Ints({0}), 0, kMax},
                               {Ints({0}), 0, kMax},
                               {Ints({0}), 1, kMax},
                               {Ints({1}), 1, 1},
                               {Ints({0}), 2, -kMax},
                               {Ints({0}), 3, -kMax}},
                   .end = 4,
                   .exports = {{0, {0}}},
                   .peeks = {{.t = 2, .keys = {Ints({1})}}, {.t = 2, .keys = {Ints({0})}}}});
  cases.push_back({.name = "COUNT beyond int64 is an error",
                   .source = k,
                   .updates = {{Ints({0}), 0, kMax}, {Ints({1}), 0, kMax}, {Ints({1}), 1, -1}},
                   .end = 3,
                   .builds = {s::ReducePlan(s::GetPlan("$0"), {}, {{pb::COUNT, 0}}),
                              s::ReducePlan(s::GetPlan("$0"), {0}, {{pb::COUNT, 0}})},
                   .exports = {{1, {0}}, {2, {0}}}});
  cases.push_back({.name = "a distinct of rows with counts beyond int64 is exact",
                   .source = k,
                   .updates = {{Ints({0}), 0, kMax}, {Ints({0}), 0, kMax}, {Ints({0}), 1, -kMax}},
                   .end = 2,
                   .builds = {s::DistinctPlan(s::GetPlan("$0"))},
                   .exports = {{1, {0}}}});
  // Negate makes negative counts: a peek that selects an indexed row with a negative
  // count (and keeps it through its mfp) answers Error, judged row by row — even when its mfp
  // makes it equal to rows on other workers whose counts would sum to >= 0 — so the answer does
  // not depend on how rows are spread over the workers (workers/README.md "Peeks").
  {
    std::vector<reference::Update> updates;
    for (std::int64_t v = 1; v <= 8; ++v) updates.push_back({Ints({v}), 0, 1});
    for (std::int64_t v = 12; v <= 26; v += 2) updates.push_back({Ints({v}), 0, -1});
    for (std::int64_t v = 21; v <= 35; v += 2) updates.push_back({Ints({v}), 1, 1});
    // Join(A, one row per key of A) keeps A's counts, exchanged by the key across the workers.
    const pb::Plan spread =
        s::JoinPlan(s::GetPlan("$0"),
                    s::UnionPlan({s::DistinctPlan(s::GetPlan("$0")),
                                  s::DistinctPlan(s::NegatePlan(s::GetPlan("$0")))}),
                    {0}, {0});
    const pb::MapFilterProject to_seven = s::Mfp({s::IntLit(7)}, {}, {2});
    pb::Finishing first;
    first.set_limit(1);
    cases.push_back({.name = "a peek selecting a negative row is an error wherever its equals live",
                     .source = k,
                     .updates = updates,
                     .end = 2,
                     .builds = {spread},
                     .exports = {{1, {0}}},
                     .peeks = {{.t = 0, .mfp = to_seven},
                               {.t = 1, .mfp = to_seven},
                               {.t = 1, .mfp = to_seven, .finishing = first}}});
  }
  // The same with a limit: the worker holding the negative row answers Error whatever the other
  // workers cut their parts to (here "a" would total 2 - 1 = 1 across the workers).
  {
    const Types ks = {{pb::INT64, false}, {pb::STRING, false}};
    const pb::Plan keys = s::MfpPlan(s::GetPlan("$0"), s::Mfp({}, {}, {0}));
    const pb::Plan spread = s::JoinPlan(
        s::GetPlan("$0"),
        s::UnionPlan({s::DistinctPlan(keys), s::DistinctPlan(s::NegatePlan(keys))}), {0}, {0});
    pb::Finishing top;
    auto* by = top.add_order_by();
    by->set_column(0);
    by->set_desc(true);
    top.set_limit(1);
    std::vector<reference::Update> updates;
    // Even keys on one worker, odd ones on the other (with two workers).
    updates.push_back({Row{std::int64_t{2}, std::string("b")}, 0, 1});
    updates.push_back({Row{std::int64_t{4}, std::string("a")}, 0, 2});
    updates.push_back({Row{std::int64_t{1}, std::string("a")}, 0, -1});
    cases.push_back({.name = "a peek with a limit selecting a negative row is an error",
                     .source = ks,
                     .updates = updates,
                     .end = 1,
                     .builds = {spread},
                     .exports = {{1, {0}}},
                     .peeks = {{.mfp = s::Mfp({}, {}, {1}), .finishing = top}}});
  }
  // -0.0 and 0.0 are one value, also when a peek's mfp makes -0.0 (-1.5 * 0.0): the rows that
  // its finishing projects to -0.0 and to 0.0 are one row (found with FLOAT64 expressions, issue
  // 14; a dataflow's mfp makes 0.0 of -0.0 already).
  {
    const Types kf = {{pb::INT64, false}, {pb::FLOAT64, true}};
    const pb::ScalarExpr times_zero =
        s::Binary(pb::MUL, s::Col(1), s::Lit(s::FloatDatum(0), pb::FLOAT64));
    std::vector<reference::Update> updates;
    for (std::int64_t k = 1; k <= 8; ++k) {
      updates.push_back({Row{k, k % 2 == 1 ? -1.5 : 1.5}, 0, 1});
    }
    pb::Finishing zeros;
    zeros.add_project(2);
    cases.push_back({.name = "a float -0.0 that a peek's mfp makes is 0.0 in its projected rows",
                     .source = kf,
                     .updates = updates,
                     .end = 1,
                     .exports = {{0, {0}}},
                     .peeks = {{.mfp = s::Mfp({times_zero}, {}, {}), .finishing = zeros}}});
  }
  // A closed collection is readable at every time from since on.
  cases.push_back(
      {.name = "an index whose source closed is readable beyond its last time",
       .source = gv,
       .updates = {{Ints({1, 10}), 0, 1}, {Ints({2, 20}), 1, 1}, {Ints({1, 10}), 2, -1}},
       .end = 3,
       .exports = {{0, {0}}},
       .peeks = {{.t = 3}, {.t = 1000}, {.t = kMaxTime}},
       .closed = true});
  return cases;
}

// Cases where workers/README.md leaves the semantics open and the reference picks one reading
// (see tests/reference/reference.h); the name says which.
std::vector<FixedCase> SemanticsProbes() {
  namespace s = ipc::samples;
  const Types k = {{pb::INT64, false}};
  const std::vector<reference::Update> zero_one = {{Ints({0}), 0, 1}, {Ints({1}), 0, 1}};
  const auto ten_over_k = s::Binary(pb::DIV, s::IntLit(10), s::Col(0));
  const auto k_is = [&](std::int64_t v) { return s::Binary(pb::EQ, s::Col(0), s::IntLit(v)); };
  const auto bad_predicate = s::Binary(pb::EQ, ten_over_k, s::IntLit(10));
  auto mfp_case = [&](std::string name, pb::MapFilterProject mfp) {
    return FixedCase{.name = std::move(name),
                     .source = k,
                     .updates = zero_one,
                     .end = 1,
                     .builds = {s::MfpPlan(s::GetPlan("$0"), std::move(mfp))},
                     .exports = {{1, {0}}}};
  };
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::vector<FixedCase> cases;
  cases.push_back(mfp_case("AND: false wins over an error (no error)",
                           s::Mfp({}, {s::Binary(pb::AND, k_is(5), bad_predicate)}, {})));
  cases.push_back(mfp_case("OR: true wins over an error (no error)",
                           s::Mfp({}, {s::Binary(pb::OR, k_is(0), bad_predicate)}, {})));
  cases.push_back(mfp_case("IF evaluates only the chosen branch (no error)",
                           s::Mfp({s::If(k_is(0), s::IntLit(0), ten_over_k)}, {}, {})));
  cases.push_back(mfp_case("predicates in order: a false one first drops the row (no error)",
                           s::Mfp({}, {k_is(1), bad_predicate}, {})));
  cases.push_back(mfp_case("predicates in order: an error first is an error",
                           s::Mfp({}, {bad_predicate, k_is(1)}, {})));
  cases.push_back(mfp_case("maps before predicates: a map error on a filtered row is an error",
                           s::Mfp({ten_over_k}, {k_is(1)}, {})));
  cases.push_back(FixedCase{.name = "a peek sees the index's errors whatever its keys",
                            .source = k,
                            .updates = zero_one,
                            .end = 1,
                            .builds = {s::MfpPlan(s::GetPlan("$0"), s::Mfp({ten_over_k}, {}, {}))},
                            .exports = {{1, {0}}},
                            .peeks = {{.keys = {Ints({1})}}, {.keys = {Ints({0})}}}});
  cases.push_back(FixedCase{.name = "a peek's mfp errors on selected rows only",
                            .source = k,
                            .updates = zero_one,
                            .end = 1,
                            .exports = {{0, {0}}},
                            .peeks = {{.keys = {Ints({1})}, .mfp = s::Mfp({ten_over_k}, {}, {})},
                                      {.mfp = s::Mfp({ten_over_k}, {}, {})}}});
  cases.push_back(FixedCase{.name = "a negative multiplicity in a peek is an error",
                            .source = k,
                            .updates = {{Ints({1}), 0, 1}, {Ints({2}), 0, -1}},
                            .end = 1,
                            .exports = {{0, {0}}}});
  cases.push_back(FixedCase{.name = "SUM overflow is an error",
                            .source = k,
                            .updates = {{Ints({kMax}), 0, 1}, {Ints({1}), 0, 1}},
                            .end = 1,
                            .builds = {s::ReducePlan(s::GetPlan("$0"), {}, {{pb::SUM, 0}})},
                            .exports = {{1, {0}}}});
  cases.push_back(FixedCase{.name = "SUM overflow through a multiplicity is an error",
                            .source = k,
                            .updates = {{Ints({kMax / 2 + 1}), 0, 2}},
                            .end = 1,
                            .builds = {s::ReducePlan(s::GetPlan("$0"), {}, {{pb::SUM, 0}})},
                            .exports = {{1, {0}}}});
  cases.push_back(
      FixedCase{.name = "SUM whose value x multiplicity overflows but whose total fits is no error",
                .source = k,
                .updates = {{Ints({kMax}), 0, 2}, {Ints({-kMax}), 0, 1}},
                .end = 1,
                .builds = {s::ReducePlan(s::GetPlan("$0"), {}, {{pb::SUM, 0}})},
                .exports = {{1, {0}}}});
  {
    pb::Finishing by_k_desc_project_v;
    auto* order = by_k_desc_project_v.add_order_by();
    order->set_column(0);
    order->set_desc(true);
    by_k_desc_project_v.add_project(1);
    pb::Finishing limited = by_k_desc_project_v;
    limited.set_offset(1);
    limited.set_limit(3);
    cases.push_back(
        FixedCase{.name = "finishing: equal rows after project are merged at their first place",
                  .source = {{pb::INT64, false}, {pb::INT64, true}},
                  .updates = {{Ints({1, 10}), 0, 2},
                              {Ints({2, 20}), 0, 1},
                              {Ints({3, 10}), 0, 1},
                              {Row{std::int64_t{4}, Null{}}, 0, 1}},
                  .end = 1,
                  .exports = {{0, {0}}},
                  .peeks = {{.finishing = by_k_desc_project_v}, {.finishing = limited}}});
  }
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  auto min_case = [&](std::string name, pb::BinaryFunc func) {
    return FixedCase{
        .name = std::move(name),
        .source = k,
        .updates = {{Ints({kMin}), 0, 1}, {Ints({7}), 0, 1}},
        .end = 1,
        .builds = {s::MfpPlan(s::GetPlan("$0"),
                              s::Mfp({s::Binary(func, s::Col(0), s::IntLit(-1))}, {}, {}))},
        .exports = {{1, {0}}}};
  };
  cases.push_back(min_case("INT64_MIN / -1 is an integer overflow error", pb::DIV));
  cases.push_back(min_case("INT64_MIN % -1 is 0", pb::MOD));
  const Types f = {{pb::FLOAT64, true}};
  auto F = [](double v) { return Row{v}; };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  cases.push_back(FixedCase{
      .name = "float64: division by zero is an error",
      .source = f,
      .updates = {{F(1.5), 0, 1}, {F(0.0), 1, 1}},
      .end = 2,
      .builds = {s::MfpPlan(
          s::GetPlan("$0"),
          s::Mfp({s::Binary(pb::DIV, s::Lit(s::FloatDatum(1), pb::FLOAT64), s::Col(0))}, {}, {}))},
      .exports = {{1, {0}}}});
  cases.push_back(FixedCase{
      .name = "float64: -0.0 and 0.0 are one value, NaN equals NaN and sorts last",
      .source = f,
      .updates = {{F(-0.0), 0, 1},
                  {F(0.0), 0, 1},
                  {F(nan), 0, 1},
                  {F(nan), 0, 1},
                  {F(inf), 0, 1},
                  {Row{Null{}}, 0, 1}},
      .end = 1,
      .builds = {s::ReducePlan(s::GetPlan("$0"), {0}, {{pb::COUNT, 0}})},
      .exports = {{1, {0}}, {0, {0}}},
      .peeks = {
          {.index = 1, .keys = {F(0.0)}},
          {.index = 1, .keys = {F(-0.0), F(nan)}},
          {.index = 1,
           .mfp = s::Mfp({s::Binary(pb::GT, s::Col(0), s::Lit(s::FloatDatum(1e300), pb::FLOAT64))},
                         {}, {})}}});
  return cases;
}

TEST(RuntimeCorrectness, SoloOneWorker) { RunConfiguration({false, 1, 40, 100000}); }
TEST(RuntimeCorrectness, SoloTwoWorkers) { RunConfiguration({false, 2, 40, 200000}); }
TEST(RuntimeCorrectness, SoloFourWorkers) { RunConfiguration({false, 4, 40, 300000}); }
TEST(RuntimeCorrectness, TwoRuntimeOneWorker) { RunConfiguration({true, 1, 40, 400000}); }
TEST(RuntimeCorrectness, TwoRuntimeTwoWorkers) { RunConfiguration({true, 2, 40, 500000}); }
TEST(RuntimeCorrectness, TwoRuntimeFourWorkers) { RunConfiguration({true, 4, 40, 600000}); }
// Division and modulo by zero, negative data: the runtime answers Error exactly when the
// reference sees an error (messages are not compared).
TEST(RuntimeCorrectness, DataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, 20, 700000, true});
}
// The same with Join (inner, left outer; self-joins, chains, one or two key pairs, null and
// skewed keys), TopK, Negate, Threshold (EXCEPT ALL, INTERSECT ALL) and the aggregates
// COUNT_NON_NULL, COUNT_DISTINCT, AVG, ANY and ALL in the plans, mixed with the older operators:
// every case has at least one of the new ones.
TEST(RuntimeCorrectness, NewOperatorsSoloOneWorker) {
  RunConfiguration({false, 1, 40, 2100000, false, true});
}
TEST(RuntimeCorrectness, NewOperatorsSoloTwoWorkers) {
  RunConfiguration({false, 2, 40, 2200000, false, true});
}
TEST(RuntimeCorrectness, NewOperatorsSoloFourWorkers) {
  RunConfiguration({false, 4, 40, 2300000, false, true});
}
TEST(RuntimeCorrectness, NewOperatorsTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, 40, 2400000, false, true});
}
TEST(RuntimeCorrectness, NewOperatorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, 40, 2500000, false, true});
}
TEST(RuntimeCorrectness, NewOperatorsTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, 40, 2600000, false, true});
}
TEST(RuntimeCorrectness, NewOperatorsDataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, 20, 2700000, true, true});
}
// The same with int2, int4, float4, numeric, bytea, date, time, timestamp, timestamptz, interval
// and uuid columns, their operators, casts and every function, and SUM/AVG/MIN/MAX over them,
// against the reference's PostgreSQL semantics (tests/reference/reference_values.h): every type
// and function appears in each run.
TEST(RuntimeCorrectness, NewTypesSoloOneWorker) {
  RunConfiguration({false, 1, 40, 2800000, false, true, true});
}
TEST(RuntimeCorrectness, NewTypesSoloTwoWorkers) {
  RunConfiguration({false, 2, 40, 2810000, false, true, true});
}
TEST(RuntimeCorrectness, NewTypesSoloFourWorkers) {
  RunConfiguration({false, 4, 40, 2820000, false, true, true});
}
TEST(RuntimeCorrectness, NewTypesTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, 40, 2830000, false, true, true});
}
TEST(RuntimeCorrectness, NewTypesTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, 40, 2840000, false, true, true});
}
TEST(RuntimeCorrectness, NewTypesTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, 40, 2850000, false, true, true});
}
// Overflows, division by zero, bad casts and out-of-range values: an Error exactly where the
// reference sees one.
TEST(RuntimeCorrectness, NewTypesDataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, 20, 2900000, true, true, true});
}
// Regressions: disagreements the random cases found, as small hand-written cases.
TEST(RuntimeCorrectness, HandWrittenSolo) {
  RunConfiguration({false, 2, 0, 0}, HandWrittenCases());
}
TEST(RuntimeCorrectness, HandWrittenTwoRuntime) {
  RunConfiguration({true, 2, 0, 0}, HandWrittenCases());
}
TEST(RuntimeCorrectness, SemanticsProbesSolo) {
  RunConfiguration({false, 2, 0, 0}, SemanticsProbes());
}
TEST(RuntimeCorrectness, SemanticsProbesTwoRuntime) {
  RunConfiguration({true, 2, 0, 0}, SemanticsProbes());
}

// A seed builds one case under every compiler: the generators sequence every draw (differential.h,
// class Generator), so a failing TANDEM_TEST_SEED from the clang (tsan) tree reruns the same case
// in a GCC tree. The fingerprint covers source types, updates and their log text, plans of every
// operator with and without data errors, peek keys, MFPs and finishings over many seeds; it was
// taken from a GCC build and every tree checks it. It changes only when the generators do (then
// the old seeds' cases change too: record the new one) or the datum syntax prints a datum
// differently (base/datum_text.h: the log text and the keys are hashed as printed).
TEST(RuntimeCorrectness, ASeedBuildsTheSameCaseUnderEveryCompiler) {
  std::uint64_t fingerprint = 14695981039346656037ULL;  // FNV-1a over everything drawn
  auto mix = [&](const std::string& bytes) {
    for (const unsigned char c : bytes) {
      fingerprint ^= c;
      fingerprint *= 1099511628211ULL;
    }
  };
  auto mix_message = [&](const google::protobuf::MessageLite& m) {
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream out(&bytes);
      google::protobuf::io::CodedOutputStream coded(&out);
      coded.SetSerializationDeterministic(true);
      ASSERT_TRUE(m.SerializeToCodedStream(&coded));
    }
    mix(bytes);
  };
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    for (const bool errors : {false, true}) {
      for (const bool new_operators : {false, true}) {
        Generator gen(seed, errors, new_operators);
        const Types source = RandomSourceTypes(gen);
        const Magnitude magnitude = RandomMagnitude(gen, 0.3);
        const auto updates = RandomUpdates(gen, source, 12, magnitude.huge, 1, magnitude.diff);
        mix(LogText(gen, updates, 12, seed % 2 == 0));
        std::vector<Generator::Collection> scope = {{"$0", source, {magnitude.bits, 0}}};
        for (int i = 1; i <= 2; ++i) {
          Types types;
          Generator::Shape shape;
          mix_message(gen.Plan(scope, 3, &types, &shape));
          scope.push_back({"$" + std::to_string(i), types, shape});
        }
        Types projected;
        mix_message(gen.Mfp(scope.back().types, &projected));
        mix_message(gen.Finishing(projected.size()));
        reference::Multiset rows;
        for (const auto& u : updates) reference::AddTo(rows, u.row, u.diff);
        pb::Schema schema;
        for (const auto& c : source) {
          auto* column = schema.add_columns();
          column->set_type(c.type);
          column->set_nullable(c.nullable);
        }
        for (const Row& key : gen.Keys({0}, schema, rows)) mix(RowText(key));
      }
    }
  }
  EXPECT_EQ(fingerprint, 6910817351036059093ULL)
      << "the generators drew another case from these seeds (fingerprint " << fingerprint << ")";
}

}  // namespace
}  // namespace tandem::testing
