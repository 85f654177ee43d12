// Randomized end-to-end correctness of index imports and one-shot reads (issue 13, acceptance 1)
// against the naive reference evaluator (tests/reference/), through the real supervisor and
// runtime, solo and two-runtime, with 1, 2 and 4 workers.
//
// One case: one or two log-source dataflows, then a chain of one to three MAINTAINED dataflows,
// each importing one or two indexes exported by earlier dataflows of the case (at a random as_of
// the imports can be read at), with random plans (mfp, reduce — also by the imported key, which
// reuses the imported arrangement — union, distinct) over the imported collections. Some importers
// are created while the source's log is still being written; some peeks are sent before the data
// they read has arrived and the controller then allows compaction past them (a waiting peek holds
// its time: DESIGN §4.1, I1). Every index is peeked at every readable time; then one to three
// ONE_SHOT_READ dataflows (until = as_of + 1, imports only, transient exports) at random readable
// times — sometimes with the controller's compaction of an import moved past as_of while the
// one-shot lives, sometimes at an as_of already compacted (its peeks answer Error "compacted") —
// are peeked at as_of and dropped. Dataflows are dropped importers first; a drop of an index a
// live dataflow imports is refused (CommandError). The NewOperators* tests also generate Join,
// TopK, Negate, Threshold and the issue-14 aggregates, and in importers and one-shots joins whose
// side is a Get of an import keyed by exactly its join key (read in place, not arranged again).
//
// Every case is determined by its seed. On a mismatch the test prints the seed, the dataflows
// involved (with their sources' logs) as JSON, the peek, the time and both answers; rerun one case
// with
//   TANDEM_TEST_SEED=<seed> tandem_import_correctness_tests --gtest_filter=<the configuration>
// and change the number of cases per configuration with TANDEM_TEST_CASES=<n>;
// TANDEM_TEST_VERBOSE=1 prints every peek with both answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "differential.h"
#include "ipc/validate.h"
#include "reference/reference.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

// The write frontier of a closed collection (the empty frontier), as Session reports it.
constexpr std::uint64_t kClosed = std::numeric_limits<std::uint64_t>::max();

// A dataflow of the test: a source dataflow, a maintained importer or a one-shot read.
struct Flow {
  enum Kind { kSource, kImporter, kOneShot } kind = kSource;
  pb::Command create;
  std::shared_ptr<Evaluator> eval;
  Time as_of = 0;
  // The final write frontier of its exports: the source's last progress mark (kClosed if its log
  // ends with C), for an importer the smallest of its imports' (A + 1 for a one-shot).
  std::uint64_t upper = 0;
  // The largest time the data has (the last progress mark of the sources it reads): a closed
  // collection is the same at every time from there on.
  Time last = 0;
  std::vector<std::string> exports;  // not dropped yet
  std::vector<std::string> imports;
  std::vector<std::shared_ptr<Flow>> upstream;  // the dataflows its imports come from
  int importers = 0;                            // live dataflows importing one of its exports
  // A source dataflow's log file: its path, text and how much is written before the create.
  std::string path, log_text;
  std::size_t split = 0;
  bool early = false;           // an importer sent before the sources' logs are complete
  bool compacted = false;       // a one-shot at an as_of below an import's allowed compaction
  bool live = false;            // a one-shot created while its imports' data still arrives
  bool waiting = false;         // ... at an as_of some import had not reached then
  bool chained = false;         // an importer importing an importer's index
  bool reduces_by_key = false;  // a build is a reduce by an imported index's key, off the import
  std::map<std::string, Generator::Shape> shapes;  // of each export (Generator::Shape)
  std::map<std::string, Types> types;              // of each build, as the generator made it

  const pb::DataflowDescription& desc() const { return create.create_dataflow().desc(); }
};

// What a peek's answer must be.
enum class Expect {
  kExact,         // the reference's answer
  kExactOrError,  // at a time below the allowed compaction frontier: exact or Error
  kError,         // below the index's as_of (since starts there): Error
  // A one-shot at an as_of below the compaction frontier the controller allowed for an import:
  // Error naming "compacted", whatever other readers hold (the runtime decides from the command
  // stream alone, so every worker decides alike). Never anything else.
  kCompacted,
};

struct SentPeek {
  pb::Command command;
  std::shared_ptr<Flow> flow;  // the dataflow exporting the peeked index
  Expect expect = Expect::kExact;
  bool early = false;  // sent before the data it reads was complete
};

struct Config {
  bool two_runtime = false;
  int workers = 1;
  int cases = 30;
  std::uint64_t base_seed = 0;
  bool allow_errors = false;  // DIV/MOD and negative data: data errors happen
  // Plans with Join, TopK, Negate, Threshold and the new aggregates, and joins reading an import
  // in place (every case has a new operator).
  bool new_operators = false;
  // With new_operators: columns, expressions and aggregates of the types of DESIGN §16 too
  // (Generator::EnableNewTypes).
  bool new_types = false;
};

pb::Plan GetPlanOf(const std::string& id) {
  pb::Plan plan;
  plan.mutable_get()->set_id(id);
  return plan;
}

// A reduce over `input`: group key `keys` (column positions), then zero to two random aggregates
// (at least one when there is no key: an index needs a column; Generator::AddAggregates).
pb::Plan ReduceWith(Generator& gen, pb::Plan input, const Types& input_types,
                    const std::vector<std::uint32_t>& keys, Types* output) {
  pb::Plan plan;
  auto* reduce = plan.mutable_reduce();
  *reduce->mutable_input() = std::move(input);
  output->clear();
  for (auto c : keys) {
    reduce->add_group_key(c);
    output->push_back(input_types[c]);
  }
  Types columns = input_types;
  gen.AddAggregates(reduce, columns, keys.empty(), output);
  return plan;
}

// Random key columns for an index on a collection with `width` columns: one or two of them.
std::vector<std::uint32_t> RandomKey(Generator& gen, std::size_t width) {
  std::vector<std::uint32_t> columns(width);
  for (std::uint32_t k = 0; k < columns.size(); ++k) columns[k] = k;
  std::shuffle(columns.begin(), columns.end(), gen.rand().engine());
  columns.resize(1 + gen.rand().Below(std::min<std::size_t>(2, columns.size())));
  return columns;
}

// The joins of `plan` and how many of their sides read an index import of `desc` in place: a Get
// of the import (by its id or the collection it is on) whose key columns are the side's join key
// columns, in order.
struct InPlace {
  int joins = 0, one_side = 0, both_sides = 0;
};
void CountInPlace(const pb::Plan& plan, const pb::DataflowDescription& desc, InPlace* n) {
  auto in_place = [&](const pb::Plan& side, const auto& key) {
    if (!side.has_get()) return false;
    for (const auto& import : desc.index_imports()) {
      if (side.get().id() != import.id() && side.get().id() != import.on()) continue;
      return std::equal(key.begin(), key.end(), import.key().begin(), import.key().end());
    }
    return false;
  };
  switch (plan.kind_case()) {
    case pb::Plan::kMfp:
      return CountInPlace(plan.mfp().input(), desc, n);
    case pb::Plan::kReduce:
      return CountInPlace(plan.reduce().input(), desc, n);
    case pb::Plan::kUnion:
      for (const auto& input : plan.union_().inputs()) CountInPlace(input, desc, n);
      return;
    case pb::Plan::kDistinct:
      return CountInPlace(plan.distinct().input(), desc, n);
    case pb::Plan::kTopK:
      return CountInPlace(plan.top_k().input(), desc, n);
    case pb::Plan::kNegate:
      return CountInPlace(plan.negate().input(), desc, n);
    case pb::Plan::kThreshold:
      return CountInPlace(plan.threshold().input(), desc, n);
    case pb::Plan::kJoin: {
      const auto& j = plan.join();
      ++n->joins;
      const int sides =
          (in_place(j.left(), j.left_key()) ? 1 : 0) + (in_place(j.right(), j.right_key()) ? 1 : 0);
      if (sides >= 1) ++n->one_side;
      if (sides == 2) ++n->both_sides;
      CountInPlace(j.left(), desc, n);
      CountInPlace(j.right(), desc, n);
      return;
    }
    default:
      return;
  }
}

// Peeks of an index at one time (id, uuid and time unset): a full scan, and maybe key lookups
// (mostly of keys present in `at_t`), an mfp with a finishing, or a finishing alone.
std::vector<pb::Command> RandomPeeks(Generator& gen, const pb::Schema& schema,
                                     const std::vector<std::uint32_t>& key, const Contents& at_t) {
  std::vector<pb::Command> peeks(1);
  if (gen.rand().Chance(0.6)) {
    peeks.emplace_back();
    for (const auto& k : gen.Keys(key, schema, at_t.rows)) {
      *peeks.back().mutable_peek()->add_keys() = reference::ToProto(k);
    }
  }
  if (gen.rand().Chance(0.5)) {
    peeks.emplace_back();
    auto* p = peeks.back().mutable_peek();
    if (gen.rand().Chance(0.4)) {
      for (const auto& k : gen.Keys(key, schema, at_t.rows)) *p->add_keys() = reference::ToProto(k);
    }
    Types output;
    *p->mutable_mfp() =
        gen.rand().Chance(0.8) ? gen.Mfp(TypesOf(schema), &output, 1) : pb::MapFilterProject();
    if (p->mfp().map_size() == 0 && p->mfp().predicates_size() == 0 &&
        p->mfp().projection_size() == 0) {
      output = TypesOf(schema);
    }
    *p->mutable_finishing() = gen.Finishing(output.size());
  } else if (gen.rand().Chance(0.3)) {
    peeks.emplace_back();
    *peeks.back().mutable_peek()->mutable_finishing() = gen.Finishing(schema.columns_size());
  }
  return peeks;
}

// Thorough (the slow label's run): three times the cases (twice those with joins, each ~3x the
// work of a case without them; the suite is the slow stage's largest, whose time .ci/run's budget
// bounds); longer logs with four times the updates per time (more batches, more merges under the
// readers), so at most one join (a join of a join of small key domains would be too many rows to
// read).
const bool kThorough = Thorough();
const int kCases = kThorough ? 180 : 60;
const int kNewCases = kThorough ? 60 : 30;
const int kMaxJoins = kThorough ? 1 : 2;
const Time kLongest = kThorough ? 40 : 14;
const int kScale = kThorough ? 4 : 1;

class ImportCaseRunner {
 public:
  ImportCaseRunner(const Config& config, SupervisorProcess& sup, TestController& ctl,
                   const std::filesystem::path& dir)
      : config_(config), sup_(sup), ctl_(&ctl), session_(sup, ctl), dir_(dir) {
    pb::Command hello;
    hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
    EXPECT_TRUE(validator_.Validate(hello).ok());
  }

  // Returns false when the replica is gone (no point going on).
  bool Run(std::uint64_t seed) {
    seed_ = seed;
    // A case whose reference shows a data error is generated again (unless errors are wanted).
    for (int attempt = 0;; ++attempt) {
      Generator gen(seed * 7919 + static_cast<std::uint64_t>(attempt), config_.allow_errors,
                    config_.new_operators, kMaxJoins);
      if (config_.new_types) gen.EnableNewTypes();
      const int saved_next_id = next_id_;
      const auto saved_reusable = reusable_;
      refused_.clear();
      if (Generate(gen) || attempt >= 20) {
        if (!refused_.empty()) {
          // A generator bug, or a validator that refuses what it should take: no point going on.
          ADD_FAILURE() << "seed " << seed
                        << ": the generator made a dataflow the validator refuses: " << refused_;
          return false;
        }
        if (config_.new_operators) {
          OperatorCounts n;
          for (const auto& flow : case_) {
            for (const auto& b : flow->desc().objects_to_build()) n += CountOperators(b.plan());
          }
          if (n.total() > 0) ++stats_.new_operator_cases;
          stats_.operators.avg_float += gen.avg_float();
        }
        if (config_.new_types) {
          for (const auto& flow : case_) CountTypes(flow->desc(), stats_.types);
        }
        return Execute(gen);
      }
      next_id_ = saved_next_id;
      reusable_ = saved_reusable;
    }
  }

  // After the last case: every dataflow dropped (importers first), the empty write frontier
  // reported for each index, and every registry slot freed.
  void CheckDrops() {
    DropDeferred(nullptr);
    const bool all = session_.WaitFor(
        [&] {
          return std::all_of(dropped_.begin(), dropped_.end(),
                             [&](const auto& id) { return session_.Write(id) == kClosed; });
        },
        10s);
    if (!all) {
      std::string missing;
      for (const auto& id : dropped_) {
        if (session_.Write(id) != kClosed) missing += " " + id;
      }
      ADD_FAILURE() << "dropped indexes that did not report the empty frontier:" << missing;
    }
    ExpectNoCommandErrors("after the last drop");
    auto live_slots = [&] { return LiveSlots(sup_.segment()); };
    const bool freed = session_.WaitFor([&] { return live_slots().empty(); }, 10s);
    EXPECT_TRUE(freed) << "slots left behind after every index was dropped:" << live_slots();
  }

  struct Stats {
    int importers = 0, early_importers = 0, chained = 0, reduce_by_key = 0;
    int one_shots = 0, one_shots_compacted = 0, one_shots_held = 0, one_shots_live = 0,
        one_shots_waiting = 0;
    int peeks = 0, nonempty = 0, errors = 0, below_since = 0, below_as_of = 0, early = 0;
    int refused_drops = 0, reused = 0, mismatches = 0, replays = 0;
    int compacted_errors = 0, compacted_exact = 0;  // peeks of one-shots at a compacted as_of
    // With new_operators: the new operators of the dataflows sent, the cases that had one, and
    // the joins of importers and one-shots, with how many read an import in place.
    OperatorCounts operators;
    int new_operator_cases = 0;
    InPlace importer_joins, one_shot_joins;
    TypeCounts types;  // with new_types: the types and functions of the dataflows sent
  };
  const Stats& stats() const { return stats_; }

 private:
  // ---- generation ----

  // Builds case_ (the source dataflows and the importers, not yet sent); false if the reference
  // sees an error but errors are not wanted. A dataflow the local validator refuses is noted in
  // refused_ (a generator bug, or a validator that does not take imports yet).
  bool Generate(Generator& gen) {
    case_.clear();
    early_compaction_ = 0;
    early_peeks_ = 0;
    ipc::Validator scratch = validator_;  // the epoch as it will be once the case is sent
    const int sources = gen.rand().Chance(0.4) ? 2 : 1;
    for (int i = 0; i < sources; ++i) {
      auto flow = SourceFlow(gen, scratch);
      if (!flow) return true;
      case_.push_back(flow);
    }
    // Before the first source's log is complete: peeks, then maybe a compaction of its indexes.
    if (case_.front()->split < case_.front()->log_text.size() || gen.rand().Chance(0.5)) {
      early_peeks_ = static_cast<int>(gen.rand().Below(5));
    }
    if (gen.rand().Chance(0.35)) early_compaction_ = 1 + gen.rand().Below(case_.front()->last);
    const int importers = 1 + static_cast<int>(gen.rand().Below(3));
    const int early = static_cast<int>(gen.rand().Below(static_cast<std::uint64_t>(importers) + 1));
    for (int i = 0; i < importers; ++i) {
      auto flow = ImporterFlow(gen, scratch, i < early);
      if (!refused_.empty()) return true;
      if (flow) case_.push_back(flow);
    }
    if (config_.new_operators) {
      // Every case of a new-operator suite has one of them (else it is generated again).
      OperatorCounts n;
      for (const auto& flow : case_) {
        for (const auto& b : flow->desc().objects_to_build()) n += CountOperators(b.plan());
      }
      if (n.total() == 0) return false;
    }
    if (config_.allow_errors) return true;
    for (const auto& flow : case_) {
      if (HasDataError(*flow)) return false;
    }
    return true;
  }

  // Times a flow's exports are readable at from its as_of on, up to two past its data's last
  // time (a closed collection stays the same beyond).
  static std::vector<Time> ReadableTimes(const Flow& flow) {
    std::vector<Time> times;
    const Time stop = flow.upper == kClosed ? flow.last + 2 : flow.upper;
    for (Time t = flow.as_of; t < stop; ++t) times.push_back(t);
    return times;
  }

  bool HasDataError(const Flow& flow) const {
    for (const auto& id : flow.exports) {
      for (Time t : ReadableTimes(flow)) {
        if (flow.eval->At(id, t)->HasError()) return true;
      }
    }
    return false;
  }

  std::string NewId() { return "u" + std::to_string(next_id_++); }
  std::string NewTransientId() { return "t" + std::to_string(next_transient_++); }

  // A new id, or sometimes the id of an index dropped earlier (ids are reusable once dropped: the
  // new index must get a slot of its own, never the old one's).
  std::string IndexId(Generator& gen) {
    // As many draws whether or not there is an id to reuse: the case stays the same when run
    // alone (TANDEM_TEST_SEED), where nothing was dropped before it.
    const bool reuse = gen.rand().Chance(0.3);
    const std::uint64_t pick = gen.rand().Below(1 << 16);
    if (reusable_.empty() || !reuse) return NewId();
    const auto it = reusable_.begin() + static_cast<long>(pick % reusable_.size());
    const std::string id = *it;
    reusable_.erase(it);
    return id;
  }

  // Validates `flow`'s create on `scratch` (recording it there); false, noted in refused_, if
  // refused.
  bool Admit(ipc::Validator& scratch, const Flow& flow) {
    const Status valid = scratch.Validate(flow.create);
    if (valid.ok()) {
      CheckTypes(scratch, flow);
      return true;
    }
    refused_ = valid.ToString() + "\n" + ipc::ToJson(flow.create);
    return false;
  }

  // The validator (which has taken `flow`) derives the schemas the generator meant.
  void CheckTypes(const ipc::Validator& validator, const Flow& flow) const {
    for (const auto& [id, types] : flow.types) {
      const std::string wrong = TypeMismatch(types, validator.collections().at(id));
      EXPECT_TRUE(wrong.empty()) << "seed " << seed_ << ": the schema of " << id << ": " << wrong
                                 << "\n"
                                 << ipc::ToJson(flow.create);
    }
  }

  // Counts the new operators of a dataflow about to be sent.
  void CountSent(const Flow& flow) {
    if (!config_.new_operators) return;
    for (const auto& b : flow.desc().objects_to_build()) {
      stats_.operators += CountOperators(b.plan());
      if (flow.kind == Flow::kImporter) CountInPlace(b.plan(), flow.desc(), &stats_.importer_joins);
      if (flow.kind == Flow::kOneShot) CountInPlace(b.plan(), flow.desc(), &stats_.one_shot_joins);
    }
  }

  // Random exports on `scope` (mostly on its builds, the entries from `first_build` on), one or
  // two, keyed by one or two random columns.
  void AddExports(Generator& gen, pb::DataflowDescription* d,
                  const std::vector<Generator::Collection>& scope, std::size_t first_build,
                  Flow* flow, bool transient) {
    const int exports = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < exports; ++i) {
      const bool on_build = first_build < scope.size() && !gen.rand().Chance(0.15);
      const auto& on = on_build ? scope[first_build + gen.rand().Below(scope.size() - first_build)]
                                : scope[gen.rand().Below(first_build)];
      auto* e = d->add_index_exports();
      e->set_id(transient ? NewTransientId() : IndexId(gen));
      e->set_on(on.id);
      for (auto k : RandomKey(gen, on.types.size())) e->add_key(k);
      flow->exports.push_back(e->id());
      flow->shapes[e->id()] = on.shape;
    }
  }

  // A MAINTAINED dataflow from 0 with one log source (2 or 3 columns: k INT64, v INT64 nullable,
  // s STRING maybe nullable, in some order), one or two builds and one or two exports.
  std::shared_ptr<Flow> SourceFlow(Generator& gen, ipc::Validator& scratch) {
    auto flow = std::make_shared<Flow>();
    flow->kind = Flow::kSource;
    const Time end = 6 + gen.rand().Below(kLongest - 5);  // 6..kLongest
    const Types source_types = RandomSourceTypes(gen);
    const Magnitude magnitude = RandomMagnitude(gen, config_.allow_errors ? 0.3 : 0.15);
    const bool closed = gen.rand().Chance(0.3);
    const auto updates =
        RandomUpdates(gen, source_types, end, magnitude.huge, kScale, magnitude.diff);
    flow->log_text = LogText(gen, updates, end, closed);
    flow->split =
        gen.rand().Chance(0.4) ? gen.rand().Below(flow->log_text.size()) : flow->log_text.size();
    flow->path =
        (dir_ / ("imports-" + std::to_string(seed_) + "-" + std::to_string(next_id_) + ".log"))
            .string();
    flow->upper = closed ? kClosed : end;
    flow->last = end;

    pb::DataflowDescription* d = flow->create.mutable_create_dataflow()->mutable_desc();
    d->set_debug_name("import case " + std::to_string(seed_) + " source");
    const std::string source_id = NewId();
    MaintainedFromLog(d, source_id, flow->path, source_types);
    std::vector<Generator::Collection> scope = {{source_id, source_types, {magnitude.bits, 0}}};
    const int builds = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < builds; ++i) {
      Types types;
      Generator::Shape shape;
      auto* b = d->add_objects_to_build();
      b->set_id(NewId());
      *b->mutable_plan() =
          gen.Plan(scope, 1 + static_cast<int>(gen.rand().Below(3)), &types, &shape);
      scope.push_back({b->id(), types, shape});
      flow->types[b->id()] = types;
    }
    AddExports(gen, d, scope, 1, flow.get(), false);
    flow->eval = std::make_shared<Evaluator>(*d);
    flow->eval->AddUpdates(source_id, updates);
    if (!Admit(scratch, *flow)) return nullptr;
    return flow;
  }

  // An index a new dataflow may import: its id, its exporter and the earliest time it may be
  // imported at (the exporter's as_of, and for a maintained importer the compaction frontier the
  // controller will have allowed by then).
  struct Importable {
    std::string id;
    std::shared_ptr<Flow> flow;
  };

  // Imports one or two of `candidates` into `d` (with their schemas from `scratch`); their ids
  // and the collections they are on join `scope`. Returns the chosen ones.
  std::vector<Importable> AddImports(Generator& gen, const ipc::Validator& scratch,
                                     std::vector<Importable> candidates, pb::DataflowDescription* d,
                                     std::vector<Generator::Collection>* scope) {
    std::shuffle(candidates.begin(), candidates.end(), gen.rand().engine());
    candidates.resize(std::min<std::size_t>(candidates.size(), gen.rand().Chance(0.35) ? 2 : 1));
    for (const auto& c : candidates) {
      const auto& info = scratch.indexes().at(c.id);
      const pb::Schema& schema = scratch.collections().at(c.id);
      auto* import = d->add_index_imports();
      import->set_id(c.id);
      import->set_on(info.on);
      *import->mutable_schema() = schema;
      for (auto k : info.key) import->add_key(k);
      // Both names read the imported collection.
      const Generator::Shape shape = c.flow->shapes.at(c.id);
      scope->push_back({c.id, TypesOf(schema), shape});
      scope->push_back({info.on, TypesOf(schema), shape});
    }
    return candidates;
  }

  // The times [lo, hi) a dataflow importing `imports` may take as its as_of so that every import
  // is readable there; hi is past the data's last time when all of them are closed. With
  // `reported`, the upper of an import is its latest reported write frontier, else its final one.
  std::pair<Time, Time> ImportRange(const std::vector<Importable>& imports,
                                    const std::map<std::string, Time>& allowed,
                                    bool reported = false) const {
    Time lo = 0, last = 0;
    std::uint64_t hi = kClosed;
    for (const auto& c : imports) {
      lo = std::max(lo, c.flow->as_of);
      if (auto it = allowed.find(c.id); it != allowed.end()) lo = std::max(lo, it->second);
      hi = std::min(hi, reported ? session_.Write(c.id).value_or(0) : c.flow->upper);
      last = std::max(last, c.flow->last);
    }
    if (hi == kClosed) hi = std::max(lo, last) + 3;
    return {lo, hi};
  }

  // The plans of a dataflow reading `scope` (its imports): one or two builds, the first of them
  // sometimes a reduce by an imported index's key straight off the import (the operator then
  // reads the imported arrangement instead of building its own) or a distinct of an import.
  void AddBuilds(Generator& gen, const std::vector<Importable>& imports,
                 const ipc::Validator& scratch, pb::DataflowDescription* d,
                 std::vector<Generator::Collection>* scope, Flow* flow, bool transient_ids) {
    const int builds = static_cast<int>(gen.rand().Below(2)) + (transient_ids ? 0 : 1);
    for (int i = 0; i < builds; ++i) {
      Types types;
      auto* b = d->add_objects_to_build();
      b->set_id(transient_ids && gen.rand().Chance(0.7) ? NewTransientId() : NewId());
      const double special = gen.rand().Below(100) / 100.0;
      Generator::Shape shape;
      if (gen.new_operators() && (i == 0 ? special >= 0.4 && special < 0.8 : special < 0.3)) {
        *b->mutable_plan() = ImportJoin(gen, imports, scratch, *scope, &types, &shape);
      } else if (i == 0 && special < 0.3) {
        const Importable& x = gen.rand().Pick(imports);
        const pb::Schema& schema = scratch.collections().at(x.id);
        *b->mutable_plan() = ReduceWith(
            gen, GetPlanOf(gen.rand().Chance(0.5) ? x.id : scratch.indexes().at(x.id).on),
            TypesOf(schema), scratch.indexes().at(x.id).key, &types);
        flow->reduces_by_key = true;
      } else if (i == 0 && special < 0.4) {
        const Importable& x = gen.rand().Pick(imports);
        pb::Plan plan;
        *plan.mutable_distinct()->mutable_input() = GetPlanOf(x.id);
        *b->mutable_plan() = plan;
        types = TypesOf(scratch.collections().at(x.id));
        shape = x.flow->shapes.at(x.id);
      } else {
        *b->mutable_plan() =
            gen.Plan(*scope, 1 + static_cast<int>(gen.rand().Below(3)), &types, &shape);
      }
      scope->push_back({b->id(), types, shape});
      flow->types[b->id()] = types;
    }
  }

  // A join whose one side is a Get of an imported index (by its id or the collection it is on)
  // keyed by exactly that index's key columns, in order, so that the runtime reads the imported
  // arrangement in place; the other side is sometimes an import so keyed too (the same one: a
  // self-join), else any plan over `scope`, its key columns picked by type (or mapped to fit).
  pb::Plan ImportJoin(Generator& gen, const std::vector<Importable>& imports,
                      const ipc::Validator& scratch,
                      const std::vector<Generator::Collection>& scope, Types* output,
                      Generator::Shape* shape) {
    auto key_types = [&](const std::string& id) {
      const Types types = TypesOf(scratch.collections().at(id));
      std::vector<pb::ScalarType> out;
      for (auto k : scratch.indexes().at(id).key) out.push_back(types[k].type);
      return out;
    };
    auto get = [&](const std::string& id) {
      return GetPlanOf(gen.rand().Chance(0.5) ? id : scratch.indexes().at(id).on);
    };
    const Importable& x = gen.rand().Pick(imports);
    const std::vector<std::uint32_t> xkey = scratch.indexes().at(x.id).key;
    const std::vector<pb::ScalarType> kt = key_types(x.id);
    Types xt = TypesOf(scratch.collections().at(x.id));
    const Generator::Shape xs_shape = x.flow->shapes.at(x.id);
    pb::Plan xs = get(x.id);
    pb::Plan other;
    Types ot;
    Generator::Shape os;
    std::vector<std::uint32_t> okey;
    if (gen.rand().Chance(0.3)) {
      std::vector<const Importable*> fitting;
      for (const auto& y : imports) {
        if (key_types(y.id) == kt) fitting.push_back(&y);
      }
      const Importable& y = *gen.rand().Pick(fitting);
      other = get(y.id);
      ot = TypesOf(scratch.collections().at(y.id));
      os = y.flow->shapes.at(y.id);
      okey = scratch.indexes().at(y.id).key;
    } else {
      other = gen.Plan(scope, 1 + static_cast<int>(gen.rand().Below(2)), &ot, &os);
      for (auto type : kt) {
        std::vector<std::uint32_t> of_type;
        for (std::uint32_t c = 0; c < ot.size(); ++c) {
          if (ot[c].type == type) of_type.push_back(c);
        }
        if (of_type.empty() || gen.rand().Chance(0.1)) {
          other = Generator::WithMap(std::move(other), gen.Expr(type, ot, 1));
          ot.push_back({type, true});
          of_type = {static_cast<std::uint32_t>(ot.size() - 1)};
        }
        okey.push_back(gen.rand().Pick(of_type));
      }
    }
    if (!gen.Joinable(xs_shape, os)) {  // counts whose product may not fit, or too many joins
      *output = xt;
      *shape = xs_shape;
      return xs;
    }
    *shape = Generator::Joined(xs_shape, os);
    if (gen.rand().Chance(0.5)) {
      return gen.MakeJoin(std::move(xs), std::move(xt), std::move(other), std::move(ot), output,
                          xkey, okey);
    }
    return gen.MakeJoin(std::move(other), std::move(ot), std::move(xs), std::move(xt), output, okey,
                        xkey);
  }

  // Everything this case's dataflows export so far, and what they may be imported at.
  std::vector<Importable> CaseIndexes() const {
    std::vector<Importable> out;
    for (const auto& flow : case_) {
      for (const auto& id : flow->exports) out.push_back({id, flow});
    }
    return out;
  }

  // A MAINTAINED dataflow importing one or two indexes of the case so far (the latest ones more
  // often, so that chains form), at a random time all of them are readable at.
  std::shared_ptr<Flow> ImporterFlow(Generator& gen, ipc::Validator& scratch, bool early) {
    auto flow = std::make_shared<Flow>();
    flow->kind = Flow::kImporter;
    flow->early = early;
    std::vector<Importable> candidates = CaseIndexes();
    if (case_.back()->kind == Flow::kImporter && gen.rand().Chance(0.5)) {
      candidates.clear();  // a chain: import what the previous importer exports
      for (const auto& id : case_.back()->exports) candidates.push_back({id, case_.back()});
    }
    // The compaction frontier the controller will have allowed when this one is sent: the early
    // compaction of the first source's indexes, for a late importer.
    std::map<std::string, Time> allowed = allowed_;
    if (!early && early_compaction_ > 0) {
      for (const auto& id : case_.front()->exports) allowed[id] = early_compaction_;
    }
    pb::DataflowDescription* d = flow->create.mutable_create_dataflow()->mutable_desc();
    std::vector<Generator::Collection> scope;
    std::vector<Importable> imports;
    Time lo = 0, hi = 0;
    for (int attempt = 0; attempt < 10; ++attempt) {
      d->clear_index_imports();
      scope.clear();
      imports = AddImports(gen, scratch, candidates, d, &scope);
      std::tie(lo, hi) = ImportRange(imports, allowed);
      if (lo < hi) break;
    }
    if (lo >= hi) return nullptr;  // nothing of the case can be imported any more
    flow->as_of = lo + gen.rand().Below(hi - lo);
    d->set_debug_name("import case " + std::to_string(seed_) + " importer");
    d->set_class_(pb::MAINTAINED);
    d->mutable_as_of()->add_elements(flow->as_of);
    d->mutable_until();
    const std::size_t first_build = scope.size();
    AddBuilds(gen, imports, scratch, d, &scope, flow.get(), false);
    AddExports(gen, d, scope, first_build, flow.get(), false);
    Bind(flow, imports);
    flow->chained = std::any_of(imports.begin(), imports.end(),
                                [](const Importable& i) { return i.flow->kind != Flow::kSource; });
    if (!Admit(scratch, *flow)) return nullptr;
    return flow;
  }

  // The reference of `flow` reads each import from its exporter's reference.
  void Bind(const std::shared_ptr<Flow>& flow, const std::vector<Importable>& imports) {
    flow->eval = std::make_shared<Evaluator>(flow->desc());
    flow->upper = kClosed;
    for (const auto& c : imports) {
      const Status bound = flow->eval->ImportFrom(c.id, c.flow->eval);
      EXPECT_TRUE(bound.ok()) << bound.ToString();
      flow->imports.push_back(c.id);
      flow->upstream.push_back(c.flow);
      flow->upper = std::min(flow->upper, c.flow->upper);
      flow->last = std::max(flow->last, c.flow->last);
    }
  }

  // ---- execution ----

  bool Execute(Generator& gen) {
    // Reused index ids: the drop of the previous index is reported (the empty frontier) before
    // the id is created again; from there on its frontiers are the new index's.
    for (const auto& flow : case_) {
      for (const auto& id : flow->exports) {
        auto was = std::find(dropped_.begin(), dropped_.end(), id);
        if (was == dropped_.end()) continue;
        const bool reported = session_.WaitFor([&] { return session_.Write(id) == kClosed; }, 10s);
        EXPECT_TRUE(reported) << "the drop of " << id << " was never reported";
        session_.Forget(id);
        dropped_.erase(was);
        ++stats_.reused;
      }
    }
    std::vector<SentPeek> sent;
    for (const auto& flow : case_) {
      if (flow->kind != Flow::kSource) continue;
      std::ofstream out(flow->path, std::ios::binary);
      out << flow->log_text.substr(0, flow->split);
    }
    for (const auto& flow : case_) {
      if (flow->kind == Flow::kSource || flow->early) {
        if (!Send(flow)) return !sup_.Exited();
      }
    }
    // Peeks of the first source's indexes, many of them before their data is there (they wait),
    // then maybe a compaction past them: each still answers the exact rows at its time.
    const Flow& first = *case_.front();
    for (int i = 0; i < early_peeks_; ++i) {
      const std::string& id = gen.rand().Pick(first.exports);
      const Time t = gen.rand().Below(first.last);
      pb::Command c;
      if (gen.rand().Chance(0.5)) {
        const auto key = first.eval->IndexKey(id).value();
        for (const auto& k :
             gen.Keys(key, validator_.collections().at(id), first.eval->At(id, t)->rows)) {
          *c.mutable_peek()->add_keys() = reference::ToProto(k);
        }
      }
      c.mutable_peek()->set_id(id);
      c.mutable_peek()->set_timestamp(t);
      SendPeek(std::move(c), case_.front(), &sent, /*early=*/true);
    }
    if (early_compaction_ > 0) {
      for (const auto& id : first.exports) Compact(id, early_compaction_);
    }
    if (gen.rand().Chance(0.5))
      std::this_thread::sleep_for(std::chrono::milliseconds(gen.rand().Below(15)));
    // The rest of the sources' logs, in pieces, while one-shot reads of what is already there are
    // created: at times the reported uppers have passed (readable), while the publisher still
    // appends and merges. What they read depends on timing, so their choices come from a
    // generator of their own (the case's stays the same from run to run).
    Generator live(seed_ * 7919 + 104729, config_.allow_errors, config_.new_operators, kMaxJoins);
    if (config_.new_types) live.EnableNewTypes();
    const int pieces = 1 + static_cast<int>(gen.rand().Below(3));
    std::map<const Flow*, std::vector<std::size_t>> cuts;
    for (const auto& flow : case_) {
      if (flow->kind != Flow::kSource) continue;
      auto& c = cuts[flow.get()];
      for (int p = 1; p < pieces; ++p) {
        c.push_back(flow->split + gen.rand().Below(flow->log_text.size() - flow->split + 1));
      }
      std::sort(c.begin(), c.end());
      c.insert(c.begin(), flow->split);
      c.push_back(flow->log_text.size());
    }
    for (int p = 0; p < pieces; ++p) {
      for (const auto& [flow, c] : cuts) {
        const std::size_t from = c[static_cast<std::size_t>(p)];
        const std::size_t to = c[static_cast<std::size_t>(p) + 1];
        if (to <= from) continue;
        std::ofstream out(flow->path, std::ios::binary | std::ios::app);
        out << flow->log_text.substr(from, to - from);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(gen.rand().Below(6)));
      session_.Pump(0ms);
      if (gen.rand().Chance(0.6) && !SendLiveOneShot(live)) return !sup_.Exited();
    }
    for (const auto& flow : case_) {
      if (flow->kind == Flow::kImporter && !flow->early) {
        if (!Send(flow)) return !sup_.Exited();
      }
    }
    for (const auto& flow : case_) deferred_.push_back(flow);

    if (!AwaitUppers()) return !sup_.Exited();

    // Sometimes allow compaction of some indexes: reads at t >= the frontier stay exact; below
    // it a peek answers Error, or (if the publisher has not compacted that far yet, or an
    // importer holds it) still the exact answer.
    if (gen.rand().Chance(0.3)) {
      for (const auto& flow : case_) {
        for (const auto& id : flow->exports) {
          if (!gen.rand().Chance(0.5)) continue;
          const Time top = flow->upper == kClosed ? flow->last + 2 : flow->upper;
          const Time from = std::max(Allowed(id), flow->as_of);
          if (top > from) Compact(id, from + gen.rand().Below(top - from + 1));
        }
      }
      if (gen.rand().Chance(0.5)) std::this_thread::sleep_for(20ms);
    }

    // Every readable time of every index of the case, and a time below an importer's as_of.
    for (const auto& flow : case_) {
      for (const auto& id : flow->exports) {
        const pb::Schema& schema = validator_.collections().at(id);
        const auto key = flow->eval->IndexKey(id).value();
        std::vector<Time> times = ReadableTimes(*flow);
        if (flow->upper == kClosed)
          times.push_back(gen.rand().Chance(0.5) ? kMaxTime : flow->last + 1000);
        for (Time t : times) {
          for (auto& c : RandomPeeks(gen, schema, key, *flow->eval->At(id, t))) {
            c.mutable_peek()->set_id(id);
            c.mutable_peek()->set_timestamp(t);
            SendPeek(std::move(c), flow, &sent, false);
          }
        }
        if (flow->as_of > 0) {
          pb::Command c;
          c.mutable_peek()->set_id(id);
          c.mutable_peek()->set_timestamp(gen.rand().Below(flow->as_of));
          SendPeek(std::move(c), flow, &sent, false);
        }
      }
    }
    if (!Check(&sent)) return false;

    for (int i = static_cast<int>(gen.rand().Below(3)); i >= 0; --i) {
      if (!OneShots(gen)) return false;
    }

    // Sometimes the controller reconnects and replays its history: every dataflow (importers
    // included) is kept unchanged, and answers as before.
    if (gen.rand().Chance(0.12) && !Replay(gen)) return false;

    // Drop the case's dataflows — now, or later together with other cases' (importers first).
    if (gen.rand().Chance(0.5) || deferred_.size() > 12) DropDeferred(&gen);
    session_.Pump(0ms);
    return !sup_.Exited();
  }

  Time Allowed(const std::string& id) const {
    auto it = allowed_.find(id);
    return it == allowed_.end() ? 0 : it->second;
  }

  // Validates and sends `flow`'s create; false (a failure) if the local validator refuses it.
  bool Send(const std::shared_ptr<Flow>& sent) {
    const Flow& flow = *sent;
    const Status valid = validator_.Validate(flow.create);
    if (!valid.ok()) {
      ADD_FAILURE() << "seed " << seed_
                    << ": the validator refuses a dataflow it took before: " << valid.ToString()
                    << "\n"
                    << ipc::ToJson(flow.create);
      return false;
    }
    ctl_->Send(flow.create);
    history_.emplace_back(sent, flow.create);
    for (const auto& id : flow.exports) owner_[id] = sent;
    if (flow.kind == Flow::kImporter) ++stats_.importers;
    if (flow.early) ++stats_.early_importers;
    if (flow.chained) ++stats_.chained;
    if (flow.reduces_by_key) ++stats_.reduce_by_key;
    CountSent(flow);
    return true;
  }

  void Compact(const std::string& id, Time frontier) {
    pb::Command c;
    c.mutable_allow_compaction()->set_id(id);
    c.mutable_allow_compaction()->mutable_frontier()->add_elements(frontier);
    const Status ok = validator_.Validate(c);
    EXPECT_TRUE(ok.ok()) << ok.ToString();
    ctl_->Send(c);
    history_.emplace_back(owner_.at(id), c);
    allowed_[id] = std::max(Allowed(id), frontier);
  }

  // Validates and sends a peek (its uuid set here), noting what its answer must be: for a
  // maintained index, Error below the index's as_of, exact or Error below the compaction frontier
  // allowed when it is sent (I1 holds it from there), else exact.
  void SendPeek(pb::Command c, const std::shared_ptr<Flow>& flow, std::vector<SentPeek>* sent,
                bool early, Expect expect = Expect::kExact) {
    auto* p = c.mutable_peek();
    p->set_uuid("s" + std::to_string(seed_) + "-" + std::to_string(uuid_++));
    if (flow->kind != Flow::kOneShot) {
      if (p->timestamp() < flow->as_of) {
        expect = Expect::kError;
      } else if (p->timestamp() < Allowed(p->id())) {
        expect = Expect::kExactOrError;
      }
    }
    const Status ok = validator_.Validate(c);
    if (!ok.ok()) {
      ADD_FAILURE() << "seed " << seed_
                    << ": the generator made a peek the validator refuses: " << ok.ToString()
                    << "\n"
                    << ipc::ToJson(c);
      return;
    }
    ctl_->Send(c);
    sent->push_back({std::move(c), flow, expect, early});
  }

  // Waits until every export of the case reaches its final upper, and checks it stops there.
  bool AwaitUppers() {
    auto reached = [&](const Flow& flow, const std::string& id) {
      auto w = session_.Write(id);
      return w && *w >= flow.upper;
    };
    const bool advanced = session_.WaitFor(
        [&] {
          return std::all_of(case_.begin(), case_.end(), [&](const auto& flow) {
            return std::all_of(flow->exports.begin(), flow->exports.end(),
                               [&](const auto& id) { return reached(*flow, id); });
          });
        },
        30s);
    if (!ExpectNoCommandErrors("creating the case's dataflows")) return false;
    if (!advanced) {
      std::string frontiers;
      for (const auto& flow : case_) {
        for (const auto& id : flow->exports) {
          auto w = session_.Write(id);
          frontiers += " " + id + "=" + (w ? std::to_string(*w) : "none") + " (expected " +
                       (flow->upper == kClosed ? "closed" : std::to_string(flow->upper)) + ")";
        }
      }
      ADD_FAILURE() << "seed " << seed_
                    << ": the indexes did not reach their uppers in 30 s:" << frontiers
                    << (sup_.Exited() ? "; the replica is gone" : "") << "\n"
                    << DescribeCase() << Tail(sup_.Log());
      return false;
    }
    for (const auto& flow : case_) {
      for (const auto& id : flow->exports) {
        EXPECT_EQ(session_.Write(id), flow->upper)
            << "seed " << seed_ << ": index " << id << "'s write frontier is not "
            << (flow->upper == kClosed ? "empty (closed)" : "its imports' / source's last one")
            << "\n"
            << Describe(*flow);
      }
    }
    return true;
  }

  bool ExpectNoCommandErrors(const std::string& when) {
    if (session_.command_errors().empty()) return true;
    ADD_FAILURE() << "seed " << seed_ << ": CommandError " << when << ": "
                  << session_.command_errors().front() << "\n"
                  << DescribeCase();
    session_.command_errors().clear();
    return false;
  }

  // Waits for the answers of `sent` and compares each with the reference. False if the replica
  // is gone.
  bool Check(std::vector<SentPeek>* sent) {
    const bool answered = session_.WaitFor(
        [&] {
          return std::all_of(sent->begin(), sent->end(), [&](const SentPeek& s) {
            return session_.peeks().count(s.command.peek().uuid()) > 0;
          });
        },
        30s);
    int reported = 0;
    for (const auto& s : *sent) {
      const pb::Peek& peek = s.command.peek();
      const PeekAnswer expected = s.flow->eval->Peek(peek);
      auto it = session_.peeks().find(peek.uuid());
      ++stats_.peeks;
      if (s.early) ++stats_.early;
      if (!expected.ok) ++stats_.errors;
      if (expected.ok && !expected.rows.empty()) ++stats_.nonempty;
      if (it == session_.peeks().end()) {
        ++stats_.mismatches;
        if (reported++ < 3) {
          ADD_FAILURE() << "seed " << seed_ << ": no answer to the peek " << ipc::ToJson(s.command)
                        << "\n"
                        << Describe(*s.flow);
        }
        continue;
      }
      const pb::PeekResponse& actual = it->second;
      if (std::getenv("TANDEM_TEST_VERBOSE") != nullptr) {
        std::printf("seed %llu t=%llu %s\n  expected %s\n  actual   %s\n",
                    static_cast<unsigned long long>(seed_),
                    static_cast<unsigned long long>(peek.timestamp()), ipc::ToJson(peek).c_str(),
                    reference::ToString(expected).c_str(), AnswerText(actual).c_str());
      }
      bool good = false;
      std::string wanted;
      switch (s.expect) {
        case Expect::kExact:
          good = Agrees(expected, actual);
          wanted = reference::ToString(expected);
          break;
        case Expect::kExactOrError:
          if (actual.has_error()) {
            ++stats_.below_since;
            good = true;
          } else {
            good = Agrees(expected, actual);
          }
          wanted = reference::ToString(expected) + " or Error (below the allowed compaction)";
          break;
        case Expect::kError:
          ++stats_.below_as_of;
          good = actual.has_error();
          wanted = "Error (below the index's as_of " + std::to_string(s.flow->as_of) + ")";
          break;
        case Expect::kCompacted:
          good = actual.has_error() && actual.error().find("compacted") != std::string::npos;
          if (good) ++stats_.compacted_errors;
          wanted = "Error(... compacted ...) (a one-shot below the allowed compaction)";
          break;
      }
      if (!good) {
        ++stats_.mismatches;
        if (reported++ < 3) {
          ADD_FAILURE() << "seed " << seed_ << ": mismatch at t=" << peek.timestamp()
                        << (s.early ? " (sent before the data was complete)" : "") << "\n"
                        << "  peek:     " << ipc::ToJson(s.command) << "\n"
                        << "  expected: " << wanted << "\n"
                        << "  actual:   " << AnswerText(actual) << "\n"
                        << "  index contents at t: "
                        << reference::ToString(s.flow->eval->At(peek.id(), peek.timestamp())->rows)
                        << "\n  compaction allowed: " << AllowedText() << "\n"
                        << Describe(*s.flow);
        }
      }
      session_.peeks().erase(it);
    }
    sent->clear();
    if (!answered && sup_.Exited()) {
      ADD_FAILURE() << "the replica is gone\n" << Tail(sup_.Log());
      return false;
    }
    return !sup_.Exited();
  }

  // Validates and sends a one-shot read made by OneShotFlow (again while the reference sees an
  // error, unless errors are wanted); it joins pending_shots_. False if the validator refuses it.
  bool SendOneShot(Generator& gen, const std::vector<Importable>& candidates, bool live,
                   bool reported) {
    std::shared_ptr<Flow> shot;
    for (int attempt = 0; attempt < 20; ++attempt) {
      shot = OneShotFlow(gen, candidates, live, reported);
      if (shot == nullptr || config_.allow_errors || !HasDataError(*shot)) break;
    }
    if (shot == nullptr) return true;
    const Status valid = validator_.Validate(shot->create);
    if (!valid.ok()) {
      ADD_FAILURE() << "seed " << seed_
                    << ": the validator refuses a one-shot read: " << valid.ToString() << "\n"
                    << ipc::ToJson(shot->create);
      return false;
    }
    // Its data may not all be there yet: it is computed once every import is readable at as_of.
    const bool waits = std::any_of(shot->imports.begin(), shot->imports.end(), [&](const auto& id) {
      return session_.Write(id).value_or(0) <= shot->as_of;
    });
    CheckTypes(validator_, *shot);
    CountSent(*shot);
    ctl_->Send(shot->create);
    shot->waiting = waits;
    if (waits) ++stats_.one_shots_waiting;
    if (shot->reduces_by_key) ++stats_.reduce_by_key;
    for (const auto& up : shot->upstream) ++up->importers;
    pending_shots_.push_back(shot);
    ++stats_.one_shots;
    if (shot->compacted) ++stats_.one_shots_compacted;
    if (shot->live) ++stats_.one_shots_live;
    return true;
  }

  // A one-shot read over the indexes of the case sent so far (and earlier cases' still live), at
  // a time their reported uppers have passed — or, sometimes, any time their data will have.
  bool SendLiveOneShot(Generator& gen) {
    std::vector<Importable> candidates;
    for (const auto& flow : deferred_) {
      for (const auto& id : flow->exports) candidates.push_back({id, flow});
    }
    for (const auto& flow : case_) {
      if (flow->kind == Flow::kImporter && !flow->early) continue;  // not sent yet
      for (const auto& id : flow->exports) candidates.push_back({id, flow});
    }
    return SendOneShot(gen, candidates, true, !gen.rand().Chance(0.4));
  }

  // One to three ONE_SHOT_READ dataflows over the live maintained indexes (any case's), each at
  // a random time its imports are readable at (sometimes below the compaction frontier allowed
  // for one of them: its peeks answer Error "compacted"), created together; then — for them and
  // for those created while the data arrived — maybe a compaction of an import past as_of (the
  // one-shot holds it), peeks at as_of, and the drop.
  bool OneShots(Generator& gen) {
    std::vector<Importable> candidates;
    for (const auto& flow : deferred_) {
      for (const auto& id : flow->exports) candidates.push_back({id, flow});
    }
    const int n = candidates.empty() ? 0 : 1 + static_cast<int>(gen.rand().Below(3));
    for (int i = 0; i < n; ++i) {
      if (!SendOneShot(gen, candidates, false, false)) return !sup_.Exited();
    }
    const std::vector<std::shared_ptr<Flow>> shots = std::move(pending_shots_);
    pending_shots_.clear();
    if (shots.empty()) return true;
    // The controller may compact an import past a live one-shot's as_of: it stays exact.
    if (gen.rand().Chance(0.4)) {
      const auto& shot = gen.rand().Pick(shots);
      const std::string& id = gen.rand().Pick(shot->imports);
      Compact(id, std::max(Allowed(id), shot->as_of + 1 + gen.rand().Below(3)));
      ++stats_.one_shots_held;
    }
    if (gen.rand().Chance(0.3)) {
      // Sometimes the result first (its exports report write [as_of + 1]), sometimes the peeks
      // right away (they wait until the result is computed).
      AwaitOneShotFrontiers(shots);
    }
    std::vector<SentPeek> sent;
    for (const auto& shot : shots) {
      for (const auto& id : shot->exports) {
        const pb::Schema& schema = validator_.collections().at(id);
        const auto key = shot->eval->IndexKey(id).value();
        for (auto& c : RandomPeeks(gen, schema, key, *shot->eval->At(id, shot->as_of))) {
          c.mutable_peek()->set_id(id);
          c.mutable_peek()->set_timestamp(shot->as_of);
          SendPeek(std::move(c), shot, &sent, false,
                   shot->compacted ? Expect::kCompacted : Expect::kExact);
        }
      }
    }
    if (!Check(&sent)) return false;
    AwaitOneShotFrontiers(shots);  // a failure is reported; they are dropped all the same
    // The drop: AllowCompaction(empty) of each export (a non-empty frontier first, sometimes: it
    // is accepted and changes nothing).
    for (const auto& shot : shots) {
      for (const auto& id : shot->exports) {
        if (gen.rand().Chance(0.2)) {
          pb::Command c;
          c.mutable_allow_compaction()->set_id(id);
          c.mutable_allow_compaction()->mutable_frontier()->add_elements(shot->as_of + 1);
          EXPECT_TRUE(validator_.Validate(c).ok());
          ctl_->Send(c);
        }
        pb::Command drop;
        drop.mutable_allow_compaction()->set_id(id);
        drop.mutable_allow_compaction()->mutable_frontier();
        const Status ok = validator_.Validate(drop);
        EXPECT_TRUE(ok.ok()) << ok.ToString();
        ctl_->Send(drop);
      }
      for (const auto& up : shot->upstream) --up->importers;
    }
    const bool gone = session_.WaitFor(
        [&] {
          return std::all_of(shots.begin(), shots.end(), [&](const auto& shot) {
            return std::all_of(shot->exports.begin(), shot->exports.end(),
                               [&](const auto& id) { return session_.Write(id) == kClosed; });
          });
        },
        10s);
    EXPECT_TRUE(gone) << "seed " << seed_ << ": a dropped one-shot did not report the empty "
                      << "frontier\n"
                      << Describe(*shots.front());
    return ExpectNoCommandErrors("running one-shot reads") && !sup_.Exited();
  }

  // Each export of `shots` reports write [as_of + 1] (the result is computed).
  bool AwaitOneShotFrontiers(const std::vector<std::shared_ptr<Flow>>& shots) {
    const bool computed = session_.WaitFor(
        [&] {
          return std::all_of(shots.begin(), shots.end(), [&](const auto& shot) {
            return std::all_of(shot->exports.begin(), shot->exports.end(), [&](const auto& id) {
              return session_.Write(id) == shot->as_of + 1;
            });
          });
        },
        10s);
    if (!computed) {
      std::string frontiers;
      for (const auto& shot : shots) {
        for (const auto& id : shot->exports) {
          auto w = session_.Write(id);
          frontiers += " " + id + "=" + (w ? std::to_string(*w) : "none") + " (expected " +
                       std::to_string(shot->as_of + 1) + ")";
        }
        if (std::all_of(shot->exports.begin(), shot->exports.end(),
                        [&](const auto& id) { return session_.Write(id) == shot->as_of + 1; })) {
          continue;
        }
        frontiers += "\n  not computed: the one-shot at " + std::to_string(shot->as_of) +
                     (shot->live ? ", created while its data arrived" : "") +
                     (shot->waiting ? ", before its imports reached as_of" : "") +
                     (shot->compacted ? ", at a compacted as_of" : "") + "; its imports:";
        for (std::size_t i = 0; i < shot->imports.size(); ++i) {
          const auto w = session_.Write(shot->imports[i]);
          frontiers += " " + shot->imports[i] + " (reported write " +
                       (w ? (*w == kClosed ? "closed" : std::to_string(*w)) : "none") +
                       ", allowed " + std::to_string(Allowed(shot->imports[i])) + ")";
        }
        frontiers +=
            "\n  " + ipc::ToJson(shot->create) + "\n  registry:" + LiveSlots(sup_.segment());
      }
      ADD_FAILURE() << "seed " << seed_
                    << ": one-shot exports did not report write [as_of + 1]:" << frontiers << "\n"
                    << Describe(*shots.front()) << Tail(sup_.Log());
    }
    return computed;
  }

  // A one-shot read of one or two of `candidates` at a random time they are all readable at (by
  // their latest reported uppers, if `reported`, else by their final ones) — or, sometimes, below
  // the compaction frontier allowed for one of them (it is `compacted` then).
  std::shared_ptr<Flow> OneShotFlow(Generator& gen, const std::vector<Importable>& candidates,
                                    bool live, bool reported) {
    if (candidates.empty()) return nullptr;
    auto flow = std::make_shared<Flow>();
    flow->kind = Flow::kOneShot;
    flow->live = live;
    pb::DataflowDescription* d = flow->create.mutable_create_dataflow()->mutable_desc();
    std::vector<Generator::Collection> scope;
    std::vector<Importable> imports;
    Time lo = 0, hi = 0;
    for (int attempt = 0; attempt < 10; ++attempt) {
      d->clear_index_imports();
      scope.clear();
      imports = AddImports(gen, validator_, candidates, d, &scope);
      std::tie(lo, hi) = ImportRange(imports, allowed_, reported);
      if (lo < hi) break;
    }
    if (lo >= hi) return nullptr;
    flow->as_of = lo + gen.rand().Below(hi - lo);
    // Below the allowed frontier of an import (never below an exporter's own as_of: there the
    // index never had those times).
    Time floor = 0;
    for (const auto& c : imports) floor = std::max(floor, c.flow->as_of);
    // (A quarter of those that can: whether one can is a race with compaction, and at 0.12 a
    // 30-case run under load saw none — a coverage failure, not a wrong answer.)
    if (lo > floor && gen.rand().Chance(0.25)) {
      flow->as_of = floor + gen.rand().Below(lo - floor);
      flow->compacted = true;
    }
    d->set_debug_name("import case " + std::to_string(seed_) + " one-shot");
    d->set_class_(pb::ONE_SHOT_READ);
    d->mutable_as_of()->add_elements(flow->as_of);
    d->mutable_until()->add_elements(flow->as_of + 1);
    const std::size_t first_build = scope.size();
    AddBuilds(gen, imports, validator_, d, &scope, flow.get(), true);
    AddExports(gen, d, scope, first_build, flow.get(), true);
    Bind(flow, imports);
    flow->upper = flow->as_of + 1;
    return flow;
  }

  // ---- reconnection ----

  // A new controller says Hello (a new epoch: the old one is superseded), replays the history of
  // the live dataflows and completes the replay: the runtimes keep every one of them (nothing is
  // dropped or built), and a peek of each index at a few readable times answers as before.
  bool Replay(Generator& gen) {
    // Every drop reported first: the old controller's responses end with it.
    session_.WaitFor(
        [&] {
          return std::all_of(dropped_.begin(), dropped_.end(),
                             [&](const auto& id) { return session_.Write(id) == kClosed; });
        },
        10s);
    session_.Pump(0ms);
    auto next = std::make_unique<TestController>(sup_.controller_endpoint());
    if (!next->Hello("replay-" + std::to_string(seed_))) {
      ADD_FAILURE() << "seed " << seed_ << ": the replaying controller's Hello was not accepted\n"
                    << Tail(sup_.Log());
      return false;
    }
    pb::Command hello;
    hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
    EXPECT_TRUE(validator_.Validate(hello).ok());
    ctl_ = next.get();
    session_.Rebind(*next);
    controllers_.push_back(std::move(next));
    for (const auto& [flow, command] : history_) {
      const Status ok = validator_.Validate(command);
      if (!ok.ok()) {
        ADD_FAILURE() << "seed " << seed_ << ": the validator refuses the replay of "
                      << ipc::ToJson(command) << ": " << ok.ToString();
        return false;
      }
      ctl_->Send(command);
    }
    session_.statuses().clear();
    pb::Command done;
    done.mutable_initialization_complete();
    ctl_->Send(done);
    const pb::Response* reconciled = nullptr;
    session_.WaitFor(
        [&] {
          for (const auto& r : session_.statuses()) {
            if (r.status().has_reconciled()) reconciled = &r;
          }
          return reconciled != nullptr;
        },
        10s);
    if (reconciled == nullptr) {
      ADD_FAILURE() << "seed " << seed_ << ": no Reconciled after the replay\n" << Tail(sup_.Log());
      return !sup_.Exited();
    }
    const auto& rec = reconciled->status().reconciled();
    ++stats_.replays;
    EXPECT_EQ(rec.kept(), deferred_.size())
        << "seed " << seed_ << ": every replayed dataflow is kept: " << ipc::ToJson(*reconciled);
    EXPECT_EQ(rec.dropped(), 0u) << "seed " << seed_ << ": " << ipc::ToJson(*reconciled);
    EXPECT_EQ(rec.built(), 0u) << "seed " << seed_ << ": " << ipc::ToJson(*reconciled);
    if (!ExpectNoCommandErrors("replaying the history")) return false;
    std::vector<SentPeek> sent;
    for (const auto& flow : deferred_) {
      for (const auto& id : flow->exports) {
        const pb::Schema& schema = validator_.collections().at(id);
        const auto key = flow->eval->IndexKey(id).value();
        const std::vector<Time> times = ReadableTimes(*flow);
        for (int i = 0; i < 2 && !times.empty(); ++i) {
          const Time t = gen.rand().Pick(times);
          for (auto& c : RandomPeeks(gen, schema, key, *flow->eval->At(id, t))) {
            c.mutable_peek()->set_id(id);
            c.mutable_peek()->set_timestamp(t);
            SendPeek(std::move(c), flow, &sent, false);
          }
        }
      }
    }
    return Check(&sent);
  }

  // ---- drops ----

  // Drops the deferred dataflows, latest first (so importers go before what they import). With
  // `gen`, sometimes first tries to drop an index a live dataflow imports: refused, naming the
  // importer, and nothing changes.
  void DropDeferred(Generator* gen) {
    // One-shots left by a case that stopped early go first: they import the others.
    for (const auto& shot : pending_shots_) {
      for (const auto& id : shot->exports) {
        pb::Command drop;
        drop.mutable_allow_compaction()->set_id(id);
        drop.mutable_allow_compaction()->mutable_frontier();
        EXPECT_TRUE(validator_.Validate(drop).ok());
        ctl_->Send(drop);
      }
      for (const auto& up : shot->upstream) --up->importers;
    }
    pending_shots_.clear();
    while (!deferred_.empty()) {
      if (gen != nullptr && gen->rand().Chance(0.25)) ProbeRefusedDrop();
      const std::shared_ptr<Flow> flow = deferred_.back();
      deferred_.pop_back();
      for (const auto& id : flow->exports) {
        pb::Command drop;
        drop.mutable_allow_compaction()->set_id(id);
        drop.mutable_allow_compaction()->mutable_frontier();
        const Status ok = validator_.Validate(drop);
        EXPECT_TRUE(ok.ok()) << "seed " << seed_ << ": dropping " << id << ": " << ok.ToString();
        ctl_->Send(drop);
        dropped_.push_back(id);
        reusable_.push_back(id);
        allowed_.erase(id);
        owner_.erase(id);
      }
      flow->exports.clear();
      for (const auto& up : flow->upstream) --up->importers;
      std::erase_if(history_, [&](const auto& h) { return h.first == flow; });
    }
  }

  // The drop of an index that a live dataflow imports is refused (by the local validator and by
  // the supervisor: CommandError naming the importer).
  void ProbeRefusedDrop() {
    for (const auto& flow : deferred_) {
      if (flow->importers == 0 || flow->exports.empty()) continue;
      // Which of its exports is imported, and by whom.
      for (const auto& importer : deferred_) {
        for (const auto& id : importer->imports) {
          if (std::find(flow->exports.begin(), flow->exports.end(), id) == flow->exports.end())
            continue;
          pb::Command drop;
          drop.mutable_allow_compaction()->set_id(id);
          drop.mutable_allow_compaction()->mutable_frontier();
          ipc::Validator probe = validator_;
          if (probe.Validate(drop).ok()) {
            ADD_FAILURE() << "the validator accepts the drop of " << id << ", which "
                          << importer->exports.front() << " imports";
            return;
          }
          session_.command_errors().clear();
          ctl_->Send(drop);
          const bool refused =
              session_.WaitFor([&] { return !session_.command_errors().empty(); }, 10s);
          EXPECT_TRUE(refused) << "the supervisor did not refuse the drop of " << id
                               << ", which a live dataflow imports";
          if (refused) {
            const std::string& why = session_.command_errors().front();
            EXPECT_NE(why.find(id), std::string::npos) << why;
            const bool names_importer =
                std::any_of(importer->exports.begin(), importer->exports.end(),
                            [&](const std::string& e) { return why.find(e) != std::string::npos; });
            EXPECT_TRUE(names_importer) << "the refusal does not name the importer: " << why;
            session_.command_errors().clear();
          }
          ++stats_.refused_drops;
          return;
        }
      }
    }
  }

  // ---- descriptions for failures ----

  std::string AllowedText() const {
    std::string out;
    for (const auto& [id, t] : allowed_) out += " " + id + "@" + std::to_string(t);
    return out.empty() ? " none" : out;
  }

  // `flow` and every dataflow it reads from (transitively), with the sources' logs.
  std::string Describe(const Flow& flow) const {
    std::string text = "  rerun: TANDEM_TEST_SEED=" + std::to_string(seed_) + "\n";
    std::set<const Flow*> seen;
    std::function<void(const Flow&)> add = [&](const Flow& f) {
      if (!seen.insert(&f).second) return;
      for (const auto& up : f.upstream) add(*up);
      text += "  dataflow: " + ipc::ToJson(f.create) + "\n";
      if (f.kind == Flow::kSource) {
        text += "  its log file:\n";
        std::istringstream in(f.log_text);
        for (std::string line; std::getline(in, line);) text += "    " + line + "\n";
      }
    };
    add(flow);
    return text;
  }

  std::string DescribeCase() const {
    std::string text;
    for (const auto& flow : case_) text += Describe(*flow);
    return text;
  }

  const Config config_;
  SupervisorProcess& sup_;
  TestController* ctl_;  // the current controller (a replay replaces it)
  std::vector<std::unique_ptr<TestController>> controllers_;  // those the replays made
  Session session_;
  std::filesystem::path dir_;
  ipc::Validator validator_;
  std::uint64_t seed_ = 0;
  std::vector<std::shared_ptr<Flow>> case_;           // the current case's maintained dataflows
  std::vector<std::shared_ptr<Flow>> deferred_;       // live maintained dataflows, oldest first
  std::vector<std::shared_ptr<Flow>> pending_shots_;  // one-shots sent, not yet peeked
  // The controller's history of the live maintained dataflows, in the order sent: their creates
  // and the compactions of their indexes (what a reconnecting controller replays).
  std::vector<std::pair<std::shared_ptr<Flow>, pb::Command>> history_;
  std::map<std::string, std::shared_ptr<Flow>> owner_;  // live maintained index -> its dataflow
  Time early_compaction_ = 0;
  int early_peeks_ = 0;
  std::string refused_;
  std::map<std::string, Time> allowed_;  // the controller's compaction frontier per live index
  std::vector<std::string> dropped_;
  std::vector<std::string> reusable_;
  int next_id_ = 1;
  int next_transient_ = 1;
  int uuid_ = 0;
  Stats stats_;
};

void RunConfiguration(const Config& config) {
#ifndef TANDEM_WORKER_BIN
  (void)config;
  GTEST_SKIP() << "tandem-worker is not built in this tree";
#else
  SupervisorProcess sup({.two_runtime = config.two_runtime,
                         .workers = config.workers,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "256MiB"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());

  const TempDir temp("imports");
  const std::filesystem::path dir = temp.path();

  ImportCaseRunner runner(config, sup, ctl, dir);
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
  if (!sup.Exited()) runner.CheckDrops();
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& s = runner.stats();
  std::printf(
      "[ imports     ] %s, %d workers: %zu cases, %d importers (%d created before their data, %d "
      "importing an importer, %d reduces by the imported key), %d one-shot reads (%d while their "
      "data arrived, %d waiting for it, %d at a compacted as_of — their peeks %d Error, %d exact "
      "as another reader "
      "held it —, %d with an import compacted past as_of while live), %d peeks (%d with "
      "rows, %d errors, %d below since, %d below as_of, %d sent before their data), %d refused "
      "drops, %d replays, %d index ids reused, %d mismatches, %.1f s\n",
      config.two_runtime ? "two-runtime" : "solo", config.workers, seeds.size(), s.importers,
      s.early_importers, s.chained, s.reduce_by_key, s.one_shots, s.one_shots_live,
      s.one_shots_waiting, s.one_shots_compacted, s.compacted_errors, s.compacted_exact,
      s.one_shots_held, s.peeks, s.nonempty, s.errors, s.below_since, s.below_as_of, s.early,
      s.refused_drops, s.replays, s.reused, s.mismatches, seconds);
  if (config.new_operators) {
    const InPlace& i = s.importer_joins;
    const InPlace& o = s.one_shot_joins;
    ExpectNewOperatorCoverage(
        s.operators, s.new_operator_cases, seeds.size(), {i.both_sides, o.one_side},
        "; joins in importers: " + std::to_string(i.joins) + ", " + std::to_string(i.one_side) +
            " of them reading an import in place (" + std::to_string(i.both_sides) +
            " both sides); in one-shot reads: " + std::to_string(o.joins) + ", " +
            std::to_string(o.one_side) + " in place (" + std::to_string(o.both_sides) +
            " both sides)",
        kMaxJoins, config.new_types);
    // The imported arrangement read in place: about half of the importers' joins.
    if (CheckPlanCoverage(seeds.size(), 20)) {
      EXPECT_GE(4 * i.one_side, i.joins);
    }
  }
  if (config.new_types) ExpectNewTypeCoverage(s.types, seeds.size());
  EXPECT_EQ(s.mismatches, 0);
  if (CheckPlanCoverage(seeds.size(), 20)) {
    EXPECT_GT(s.chained, 0);  // the generator reaches what the suite is for
  }
  if (CheckCoverage(seeds.size(), 20)) {
    EXPECT_GT(s.one_shots_compacted, 0);
    EXPECT_GT(s.one_shots_held, 0);
    EXPECT_GT(s.early, 0);
    EXPECT_GT(s.one_shots_live, 0);
    // Whether a one-shot is sent before its data is there is a race with the source (a few in a
    // run): only a run of 50 cases or more is sure to see one (a 30-case run saw none once).
    if (CheckCoverage(seeds.size(), 50)) {
      EXPECT_GT(s.one_shots_waiting, 0);
    }
  }
  EXPECT_FALSE(sup.Exited()) << Tail(sup.Log());
#endif
}

TEST(ImportCorrectness, SoloOneWorker) { RunConfiguration({false, 1, kCases, 1100000}); }
TEST(ImportCorrectness, SoloTwoWorkers) { RunConfiguration({false, 2, kCases, 1200000}); }
TEST(ImportCorrectness, SoloFourWorkers) { RunConfiguration({false, 4, kCases, 1300000}); }
TEST(ImportCorrectness, TwoRuntimeOneWorker) { RunConfiguration({true, 1, kCases, 1400000}); }
TEST(ImportCorrectness, TwoRuntimeTwoWorkers) { RunConfiguration({true, 2, kCases, 1500000}); }
TEST(ImportCorrectness, TwoRuntimeFourWorkers) { RunConfiguration({true, 4, kCases, 1600000}); }
// Division and modulo by zero, negative data: errors flow through imports into importers and
// one-shot reads; the runtime answers Error exactly when the reference sees one.
TEST(ImportCorrectness, DataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kCases / 2, 1700000, true});
}
TEST(ImportCorrectness, DataErrorsSoloTwoWorkers) {
  RunConfiguration({false, 2, kCases / 2, 1800000, true});
}
// The same with Join, TopK, Negate, Threshold and the new aggregates in the plans (every case has
// one of them), and, in importers and one-shot reads, joins whose side is an import keyed by its
// join key (read in place, not arranged again).
TEST(ImportCorrectness, NewOperatorsSoloOneWorker) {
  RunConfiguration({false, 1, kNewCases, 2100000, false, true});
}
TEST(ImportCorrectness, NewOperatorsSoloTwoWorkers) {
  RunConfiguration({false, 2, kNewCases, 2200000, false, true});
}
TEST(ImportCorrectness, NewOperatorsSoloFourWorkers) {
  RunConfiguration({false, 4, kNewCases, 2300000, false, true});
}
TEST(ImportCorrectness, NewOperatorsTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, kNewCases, 2400000, false, true});
}
TEST(ImportCorrectness, NewOperatorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewCases, 2500000, false, true});
}
TEST(ImportCorrectness, NewOperatorsTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kNewCases, 2600000, false, true});
}
TEST(ImportCorrectness, NewOperatorsDataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewCases / 2, 2700000, true, true});
}
// The same with the types of DESIGN §16, their functions and aggregates: imported, joined in
// place on their keys, read by one-shots.
// Under the slow label a case's logs are several times longer (each case some 10x a fast one's
// time): 12 of them.
const int kNewTypeCases = kThorough ? 12 : 30;
TEST(ImportCorrectness, NewTypesSoloOneWorker) {
  RunConfiguration({false, 1, kNewTypeCases, 2800000, false, true, true});
}
TEST(ImportCorrectness, NewTypesSoloTwoWorkers) {
  RunConfiguration({false, 2, kNewTypeCases, 2810000, false, true, true});
}
TEST(ImportCorrectness, NewTypesSoloFourWorkers) {
  RunConfiguration({false, 4, kNewTypeCases, 2820000, false, true, true});
}
TEST(ImportCorrectness, NewTypesTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, kNewTypeCases, 2830000, false, true, true});
}
TEST(ImportCorrectness, NewTypesTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewTypeCases, 2840000, false, true, true});
}
TEST(ImportCorrectness, NewTypesTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kNewTypeCases, 2850000, false, true, true});
}
TEST(ImportCorrectness, NewTypesDataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewTypeCases / 2, 2860000, true, true, true});
}

}  // namespace
}  // namespace tandem::testing
