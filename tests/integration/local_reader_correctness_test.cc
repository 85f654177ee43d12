// Randomized differential correctness of LocalReader (DESIGN §11) against
// peeks and the reference evaluator (tests/reference/): for solo and two-runtime replicas with 1,
// 2 and 4 workers, random dataflows over a log source (differential.h's generator: Join, TopK,
// Negate — so negative counts —, Threshold and every aggregate; huge multiplicities now and then;
// data errors in the DataErrors configurations) exported as indexes on random key columns. The
// log is written part by part while the test reads: each round appends the next part (so the
// maintenance runtime, in its own process, ingests, publishes, merges and compacts while the
// reads run) and sometimes allows compaction forward, then reads through one LocalReader attached
// to the replica's segment for the whole run, at random readable times (some below the allowed
// compaction, racing it) and at the latest time:
//   * Scan(All) == a full-scan peek at the same time == the reference's contents then;
//   * Lookup(key) == a peek with that key == the reference, for keys present and absent;
//   * prefix scans and range scans (leading parts of keys as bounds) == the reference's contents
//     whose keys are in range (filtered by datum order, not by the row encoding);
//   * an index's error is a DataError (a count beyond int64 OutOfRange) with exactly the peek's
//     message; a read fails "compacted" only below the compaction the controller allowed (or when
//     the peek at that time says compacted too), and most reads succeed (a peek below the allowed
//     compaction may answer any error, as in the other suites: its worker parts race it apart);
//   * one difference, counted apart: when the rows read count more than 2^64 - 1 in all (huge
//     multiplicities), a peek without a limit stops there (the reference does the same: no limit
//     is a limit of UINT64_MAX) while the reader answers every row — the reader's answer is then
//     checked against all of the reference's rows, the peek's against the reference's peek;
//   * a read at the latest time is at least as fresh as the write frontier the controller saw
//     before it (for a closed index: its final contents);
//   * a dropped index reads NotFound, and an id dropped and created again reads the new index.
// Meanwhile a second LocalReader, on a thread of its own, scans the case's indexes at their
// latest readable time over and over (two readers in one process, for ThreadSanitizer), each
// answer checked against the reference too. LocalReaderChecks proves the comparison catches wrong
// answers; LocalReaderRegressions are what the random cases found, as small fixed cases.
//
// Every case is determined by its seed (timing decides only what the runtime has done when a read
// runs). On a mismatch the test prints the seed, the log file, the dataflow, the read, the time,
// the allowed compaction and the three answers; rerun one case with
//   TANDEM_TEST_SEED=<seed> tandem_local_reader_correctness_tests --gtest_filter=<the test>
// and change the number of cases per configuration with TANDEM_TEST_CASES=<n>;
// TANDEM_TEST_VERBOSE=1 prints every read with its answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/datum_text.h"
#include "client/local_reader.h"
#include "differential.h"
#include "ipc/validate.h"
#include "log_source.h"
#include "random_rows.h"
#include "reference/reference.h"
#include "replica.h"
#include "shm/routing.h"
#include "supervisor_harness.h"
#include "temp_dir.h"
#include "unit/protocol_samples.h"

namespace tandem::testing {
namespace {

// The write frontier of a closed collection (the empty frontier), as Session reports it.
constexpr std::uint64_t kClosed = std::numeric_limits<std::uint64_t>::max();

// ---- answers and their comparison -----------------------------------------------------------

// An answer in comparable form: rows with counts sorted in datum order, or an error message.
struct Answer {
  bool ok = true;
  std::vector<std::pair<Row, std::int64_t>> rows;
  std::string error;
};

void SortRows(Answer* a) {
  std::sort(a->rows.begin(), a->rows.end(), [](const auto& x, const auto& y) {
    const int c = reference::OrderRows(x.first, y.first);
    return c != 0 ? c < 0 : x.second < y.second;
  });
}

Answer OfLocal(const LocalAnswer& local) {
  Answer a;
  a.rows = local.rows;
  SortRows(&a);
  return a;
}

Answer OfPeek(const pb::PeekResponse& p) {
  Answer a;
  if (!p.has_rows()) {
    a.ok = false;
    a.error = p.has_error() ? p.error() : "(no rows and no error: " + ipc::ToJson(p) + ")";
    return a;
  }
  for (const auto& rc : p.rows().rows()) {
    a.rows.emplace_back(reference::FromProto(rc.row()), static_cast<std::int64_t>(rc.count()));
  }
  SortRows(&a);
  return a;
}

Answer OfReference(const PeekAnswer& p) {
  Answer a;
  a.ok = p.ok;
  a.error = p.error;
  for (const auto& [row, count] : p.rows)
    a.rows.emplace_back(row, static_cast<std::int64_t>(count));
  SortRows(&a);
  return a;
}

std::string AnswerString(const Answer& a) {
  if (!a.ok) return "Error(" + a.error + ")";
  std::string out = "[";
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    out += (i ? ", " : "") + RowText(a.rows[i].first) + " x" + std::to_string(a.rows[i].second);
  }
  return out + "]";
}

// Empty when `got` is `want`: the same rows (datums of the same types; -0.0 is 0.0) with the same
// counts, each row once — or both errors, with the same message when `same_error`. Else what
// differs first.
std::string Differ(const Answer& want, const Answer& got, bool same_error) {
  if (want.ok != got.ok) {
    return want.ok ? "an error instead of rows" : "rows instead of an error";
  }
  if (!want.ok) {
    if (same_error && want.error != got.error) return "another error message";
    return "";
  }
  for (std::size_t i = 0; i < std::max(want.rows.size(), got.rows.size()); ++i) {
    if (i >= got.rows.size()) return "row " + RowText(want.rows[i].first) + " missing";
    if (i >= want.rows.size()) return "row " + RowText(got.rows[i].first) + " extra";
    const auto& [w, wn] = want.rows[i];
    const auto& [g, gn] = got.rows[i];
    bool same = w.size() == g.size() && reference::OrderRows(w, g) == 0;
    for (std::size_t d = 0; same && d < w.size(); ++d) same = w[d].index() == g[d].index();
    if (!same) return "row " + RowText(g) + " where " + RowText(w) + " belongs";
    if (wn != gn) {
      return "row " + RowText(w) + " x" + std::to_string(gn) + " instead of x" + std::to_string(wn);
    }
  }
  return "";
}

bool IsCompacted(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition &&
         s.message().find("compacted") != std::string::npos;
}

bool IsCompacted(const pb::PeekResponse& p) {
  return p.has_error() && p.error().find("compacted") != std::string::npos;
}

// ---- the reference side of a key range ------------------------------------------------------

Row Project(const Row& row, const std::vector<std::uint32_t>& columns) {
  Row out;
  for (auto c : columns) out.push_back(row[c]);
  return out;
}

// Whether index key `k` (every key column) is in `range`, by the reference's key order (numerics by
// value, intervals by span; a proper prefix sorts first, so a key is >= every leading part of
// itself) — not by the key encoding the LocalReader compares.
bool InRange(const Row& k, const KeyRange& range) {
  if (range.prefix) {
    if (range.prefix->size() > k.size()) return false;
    for (std::size_t i = 0; i < range.prefix->size(); ++i) {
      if (reference::OrderKeyDatums((*range.prefix)[i], k[i]) != 0) return false;
    }
  }
  if (range.lower && reference::OrderKeys(k, *range.lower) < 0) return false;
  if (range.upper && reference::OrderKeys(k, *range.upper) >= 0) return false;
  return true;
}

// The contents whose keys are in `range`, with every error of the collection.
Contents Select(const Contents& c, const std::vector<std::uint32_t>& key, const KeyRange& range) {
  Contents out;
  out.errors = c.errors;
  for (const auto& [row, count] : c.rows) {
    if (InRange(Project(row, key), range)) out.rows.emplace(row, count);
  }
  return out;
}

std::string RangeString(const KeyRange& r) {
  std::string out;
  if (r.prefix) out += " prefix " + RowText(*r.prefix);
  if (r.lower) out += " lower " + RowText(*r.lower);
  if (r.upper) out += " upper " + RowText(*r.upper);
  return out.empty() ? " all" : out;
}

// ---- a second reader, on a thread of its own ------------------------------------------------

// Scans the indexes it is given at their latest readable time, one after the other, until
// stopped; keeps what it read for the main thread to check (pausing while kMaxRecords wait).
class BackgroundReader {
 public:
  struct Record {
    std::string index;
    Time t = 0;
    Status status;  // of the scan (ok: `answer`)
    LocalAnswer answer;
  };

  explicit BackgroundReader(std::string segment) : segment_(std::move(segment)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~BackgroundReader() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // From here on it reads these (a read in progress finishes first).
  void SetIndexes(std::vector<std::string> indexes) {
    std::lock_guard<std::mutex> lock(mu_);
    indexes_ = std::move(indexes);
  }
  std::vector<Record> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(records_, {});
  }
  std::string attach_error() {
    std::lock_guard<std::mutex> lock(mu_);
    return attach_error_;
  }

 private:
  void Loop() {
    auto reader = LocalReader::Attach(segment_);
    std::unique_lock<std::mutex> lock(mu_);
    if (!reader.ok()) {
      attach_error_ = reader.status().ToString();
      return;
    }
    std::size_t next = 0;
    while (!stop_) {
      if (!indexes_.empty() && records_.size() < kMaxRecords) {
        Record r;
        r.index = indexes_[next++ % indexes_.size()];
        const GlobalId id = *GlobalId::Parse(r.index);
        // Only what this thread can tell the time of: the latest, then a scan there.
        if (auto t = (*reader)->LatestReadable(id); t.ok()) {
          r.t = *t;
          auto a = (*reader)->Scan(id, KeyRange::All(), r.t);
          if (a.ok()) {
            r.answer = std::move(a).value();
          } else {
            r.status = a.status();
          }
          records_.push_back(std::move(r));
        }
      }
      // Pacing (the replica shares the machine's cores), not synchronisation.
      cv_.wait_for(lock, 2ms, [&] { return stop_; });
    }
  }

  static constexpr std::size_t kMaxRecords = 32;
  const std::string segment_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::string> indexes_;
  std::vector<Record> records_;
  std::string attach_error_;
  std::thread thread_;
};

// ---- the runner -----------------------------------------------------------------------------

// The most rows an index of a case may end with (the reference recomputes it at every time read).
constexpr std::size_t kMaxRows = 1500;

struct Config {
  bool two_runtime = false;
  int workers = 1;
  int cases = 16;
  std::uint64_t base_seed = 0;
  bool allow_errors = false;  // DIV/MOD and negative data: data errors happen
  // Columns, expressions and aggregates of the types of DESIGN §16 too (Generator::EnableNewTypes):
  // keys of every type looked up and range-scanned in place.
  bool new_types = false;
};

struct Case {
  std::uint64_t seed = 0;
  Time end = 0;         // the final progress mark
  bool closed = false;  // the log ends with C
  std::string log_text;
  std::string path;
  std::vector<std::size_t> cuts;  // the log's bytes written: before creating, then one per round
  pb::Command create;
  std::vector<std::string> indexes;
};

struct Stats {
  TypeCounts types;  // with new_types: the types and functions of the cases run
  int reads = 0, scans = 0, lookups = 0, present = 0, absent = 0, ranges = 0;
  int latest = 0, below_allowed = 0, background = 0, rows = 0;
  int data_errors = 0, overflows = 0, negative = 0;  // of the reads: error answers
  int compacted = 0;                                 // reads that failed "compacted", allowed
  int beyond = 0;  // answers counting more than 2^64 - 1 rows: a peek stops there, not the reader
  int peeks = 0, peek_compacted = 0;
  int peek_raced = 0;  // below the allowed compaction: another error than the exact answer
  int reused = 0, drops_checked = 0, rounds = 0;
  int mismatches = 0;
};

// One read of a round and what it needs to be checked.
struct Pending {
  enum Kind { kScan, kLookup, kRange } kind = kScan;
  std::string index;
  std::optional<Time> at;   // as asked (nullopt: latest)
  Row key;                  // kLookup
  KeyRange range;           // kScan (All) or kRange
  Time allowed = 0;         // the compaction the controller had allowed when it was read
  std::uint64_t write = 0;  // the write frontier the controller had seen then (kClosed: closed)
  Status status;            // of the read
  LocalAnswer answer;       // when ok
  std::string uuid;         // of its peek ("" for none)
  Time t = 0;               // the time read (or asked)
};

class ReaderRunner {
 public:
  ReaderRunner(const Config& config, SupervisorProcess& sup, TestController& ctl,
               const std::filesystem::path& dir, LocalReader& reader, BackgroundReader& background)
      : config_(config),
        sup_(sup),
        ctl_(ctl),
        session_(sup, ctl),
        dir_(dir),
        reader_(reader),
        background_(background) {
    pb::Command hello;
    hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
    EXPECT_TRUE(validator_.Validate(hello).ok());
  }

  const Stats& stats() const { return stats_; }

  // False when the replica is gone.
  bool Run(std::uint64_t seed) {
    for (int attempt = 0;; ++attempt) {
      // One join per plan: joins of joins over a log this long make indexes of millions of rows.
      Generator gen(seed * 7919 + static_cast<std::uint64_t>(attempt), config_.allow_errors,
                    /*new_operators=*/true, /*max_joins=*/1);
      if (config_.new_types) gen.EnableNewTypes();
      if (Generate(gen, seed) || attempt >= 20) {
        if (config_.new_types) CountTypes(case_.create, stats_.types);
        const auto start = std::chrono::steady_clock::now();
        const bool alive = Execute(gen);
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        if (ms > 2000)
          std::printf("[ slow case   ] seed %llu: %lld ms\n", static_cast<unsigned long long>(seed),
                      static_cast<long long>(ms));
        return alive;
      }
    }
  }

  // After the last case: every index dropped, reported closed, read NotFound, and no slot left.
  void Finish() {
    DropLive();
    EXPECT_TRUE(session_.command_errors().empty()) << session_.command_errors().front();
    const bool freed = session_.WaitFor([&] { return LiveSlots(sup_.segment()).empty(); }, 10s);
    EXPECT_TRUE(freed) << "slots left behind after every index was dropped:"
                       << LiveSlots(sup_.segment());
  }

 private:
  // A random dataflow over one log source, as the runtime suite makes them; false when the
  // reference's data errors are not what the configuration wants (some, or none).
  bool Generate(Generator& gen, std::uint64_t seed) {
    case_ = Case{};
    case_.seed = seed;
    case_.end = 16 + gen.rand().Below(17);  // 16..32
    const Types source_types = RandomSourceTypes(gen);
    const Magnitude magnitude = RandomMagnitude(gen, 0.2);
    case_.closed = gen.rand().Chance(0.25);
    const int scale = 1 + static_cast<int>(gen.rand().Below(3));
    const auto updates =
        RandomUpdates(gen, source_types, case_.end, magnitude.huge, scale, magnitude.diff);
    case_.log_text = LogText(gen, updates, case_.end, case_.closed);
    ChooseCuts(gen);
    case_.path = (dir_ / ("case-" + std::to_string(seed) + "-" + std::to_string(next_id_) + ".log"))
                     .string();

    auto* d = case_.create.mutable_create_dataflow()->mutable_desc();
    d->set_debug_name("local reader case " + std::to_string(seed));
    const std::string source_id = NewId();
    MaintainedFromLog(d, source_id, case_.path, source_types);
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
    }
    // Sometimes a difference A - B = Union(A, Negate(B)), indexed first: its counts are negative
    // where B has rows A has not (a read selecting one answers the peek's error). A read meeting a
    // negative count is required coverage, so it is not left to chance: the first case of a run,
    // and every eighth after it, indexes the source negated — every count negative.
    bool difference = false;
    if (!config_.allow_errors && (seed - config_.base_seed) % 8 == 0) {
      auto* build = d->add_objects_to_build();
      build->set_id(NewId());
      build->mutable_plan()->mutable_negate()->mutable_input()->mutable_get()->set_id(source_id);
      scope.push_back({build->id(), source_types, {magnitude.bits, 0}});
      difference = true;
    } else if (gen.rand().Chance(0.35)) {
      const Generator::Collection a = gen.rand().Pick(scope);
      Types bt;
      Generator::Shape bs;
      pb::Plan b = gen.Plan(scope, 1, &bt, &bs);
      auto* build = d->add_objects_to_build();
      build->set_id(NewId());
      auto* u = build->mutable_plan()->mutable_union_();
      u->add_inputs()->mutable_get()->set_id(a.id);
      *u->add_inputs()->mutable_negate()->mutable_input() = gen.Fit(std::move(b), bt, a.types);
      Types types = a.types;
      for (auto& c : types) c.nullable = true;
      scope.push_back({build->id(),
                       types,
                       {std::max(a.shape.bits, bs.bits) + 1, std::max(a.shape.joins, bs.joins)}});
      difference = true;
    }
    // One or two indexes, mostly on a build, on one or two key columns in random order.
    const int exports = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < exports; ++i) {
      const auto& on = difference && i == 0      ? scope.back()
                       : gen.rand().Chance(0.15) ? scope.front()
                                                 : scope[1 + gen.rand().Below(scope.size() - 1)];
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
    evaluator_.emplace(*d);
    evaluator_->AddUpdates(source_id, updates);
    contents_.clear();
    for (const auto& index : case_.indexes) {
      if (At(index, case_.end).rows.size() > kMaxRows) return false;
    }
    bool errors = false;
    for (const auto& index : case_.indexes) {
      for (Time t = 0; t < case_.end && !errors; ++t) errors = At(index, t).HasError();
    }
    return errors == config_.allow_errors;
  }

  // Where the log is cut: the first part (a few progress marks, sometimes none) before the
  // dataflow is created, then one to three marks more per round, sometimes ending mid-line.
  void ChooseCuts(Generator& gen) {
    const std::string& text = case_.log_text;
    std::vector<std::size_t> marks;  // just after each progress mark line
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t eol = text.find('\n', at);
      if (text.compare(at, 2, "P ") == 0) marks.push_back(eol + 1);
      at = eol + 1;
    }
    case_.cuts.clear();
    if (gen.rand().Chance(0.15)) case_.cuts.push_back(gen.rand().Below(marks[0]));
    std::size_t i = gen.rand().Below(3);
    while (i + 1 < marks.size()) {
      std::size_t cut = marks[i];
      if (gen.rand().Chance(0.2)) cut += gen.rand().Below(marks[i + 1] - marks[i]);  // mid-part
      case_.cuts.push_back(cut);
      i += 1 + gen.rand().Below(3);
    }
    case_.cuts.push_back(text.size());
  }

  std::string NewId() { return "u" + std::to_string(next_id_++); }

  // A new id, or sometimes one of an index dropped earlier (its new slot must be read, never the
  // old one's).
  std::string IndexId(Generator& gen) {
    if (reusable_.empty() || !gen.rand().Chance(0.3)) return NewId();
    const auto it = reusable_.begin() + static_cast<long>(gen.rand().Below(reusable_.size()));
    const std::string id = *it;
    reusable_.erase(it);
    return id;
  }

  // The reference's contents of `index` at `t` (computed once per case).
  const Contents& At(const std::string& index, Time t) {
    t = std::min(t, case_.end);  // nothing changes after the last progress mark
    auto [it, fresh] = contents_.try_emplace({index, t});
    if (fresh) {
      auto c = evaluator_->At(index, t);
      EXPECT_TRUE(c.ok()) << c.status().ToString();
      if (c.ok()) it->second = std::move(c).value();
    }
    return it->second;
  }

  // The progress mark written with the log's first `bytes` bytes (0: none).
  Time MarkOf(std::size_t bytes) const {
    Time mark = 0;
    std::istringstream in(case_.log_text.substr(0, bytes));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("P ", 0) == 0 && in.good()) mark = std::stoull(line.substr(2));
    }
    return mark;
  }

  void Append(std::size_t from, std::size_t to) {
    std::ofstream out(case_.path, std::ios::binary | std::ios::app);
    out << case_.log_text.substr(from, to - from);
  }

  bool Execute(Generator& gen) {
    const Status valid = validator_.Validate(case_.create);
    if (!valid.ok()) {
      ADD_FAILURE() << "seed " << case_.seed
                    << ": the generator made a dataflow the validator refuses: " << valid.ToString()
                    << "\n"
                    << ipc::ToJson(case_.create);
      return true;
    }
    // A reused index id: its drop has been reported before it is created again.
    for (const auto& id : case_.indexes) {
      auto was = std::find(dropped_.begin(), dropped_.end(), id);
      if (was == dropped_.end()) continue;
      EXPECT_TRUE(session_.WaitFor([&] { return session_.Write(id) == kClosed; }, 10s))
          << "the drop of " << id << " was never reported";
      session_.Forget(id);
      dropped_.erase(was);
      allowed_.erase(id);
      ++stats_.reused;
    }
    reported_ = 0;
    Append(0, case_.cuts[0]);
    ctl_.Send(case_.create);
    background_.SetIndexes(case_.indexes);
    bool alive = true;
    for (std::size_t step = 0; step < case_.cuts.size() && alive; ++step) {
      // Everything written so far is in the indexes...
      const bool last = step + 1 == case_.cuts.size();
      const Time mark = MarkOf(case_.cuts[step]);
      const bool complete = session_.WaitFor(
          [&] {
            return std::all_of(case_.indexes.begin(), case_.indexes.end(), [&](const auto& id) {
              const auto w = session_.Write(id);
              if (last && case_.closed) return w == kClosed;
              return mark == 0 || (w && *w >= mark);
            });
          },
          30s);
      if (!complete || !session_.command_errors().empty()) {
        std::string frontiers;
        for (const auto& id : case_.indexes) {
          const auto w = session_.Write(id);
          frontiers += " " + id + "=" + (w ? std::to_string(*w) : "none");
        }
        ADD_FAILURE() << "seed " << case_.seed << ": the indexes did not reach " << mark
                      << (last && case_.closed ? " (closed)" : "")
                      << " in 30 s (write frontiers:" << frontiers << ")"
                      << (session_.command_errors().empty()
                              ? ""
                              : "; CommandError: " + session_.command_errors().front())
                      << (sup_.Exited() ? "; the replica is gone" : "") << "\n"
                      << Describe() << Tail(sup_.Log());
        session_.command_errors().clear();
        alive = !sup_.Exited();
        break;
      }
      // ... then the next part goes in while this round reads.
      if (!last) Append(case_.cuts[step], case_.cuts[step + 1]);
      if (gen.rand().Chance(0.5)) CompactForward(gen);
      alive = Round(gen);
      CheckBackground();
    }
    background_.SetIndexes({});
    CheckBackground();
    live_.insert(live_.end(), case_.indexes.begin(), case_.indexes.end());
    if (alive && gen.rand().Chance(0.5)) DropLive();
    session_.Pump(0ms);
    return alive && !sup_.Exited();
  }

  // Allows compaction of some indexes forward, to a time below the write frontier seen (so the
  // latest time stays readable); a closed index up to its last time.
  void CompactForward(Generator& gen) {
    for (const auto& index : case_.indexes) {
      const auto w = session_.Write(index);
      if (!w || gen.rand().Chance(0.3)) continue;
      const Time top = *w == kClosed ? case_.end : *w - 1;
      Time& allowed = allowed_[index];
      if (top <= allowed) continue;
      allowed += 1 + gen.rand().Below(top - allowed);
      pb::Command c;
      c.mutable_allow_compaction()->set_id(index);
      c.mutable_allow_compaction()->mutable_frontier()->add_elements(allowed);
      EXPECT_TRUE(validator_.Validate(c).ok());
      ctl_.Send(c);
    }
  }

  // One round: reads of every index at random readable times and at the latest, their peeks,
  // and the checks. False when the replica is gone.
  bool Round(Generator& gen) {
    ++stats_.rounds;
    session_.Pump(0ms);
    std::vector<Pending> reads;
    for (const auto& index : case_.indexes) {
      const auto w = session_.Write(index);
      if (!w || *w == 0) continue;
      const Time allowed = allowed_[index];
      const Time top = *w == kClosed ? case_.end + 2 : *w - 1;
      std::vector<std::optional<Time>> times = {std::nullopt};
      const int n = 3 + static_cast<int>(gen.rand().Below(2));
      for (int i = 0; i < n; ++i) {
        if (allowed > 0 && gen.rand().Chance(0.12)) {  // below the allowed compaction: a race
          times.push_back(allowed - 1 - gen.rand().Below(std::min<Time>(allowed, 3)));
        } else if (*w == kClosed && gen.rand().Chance(0.1)) {
          times.push_back(kMaxTime);
        } else {
          times.push_back(allowed + gen.rand().Below(top - allowed + 1));
        }
      }
      for (const auto& at : times) ReadAt(gen, index, at, allowed, *w, &reads);
    }
    for (auto& r : reads) SendPeek(&r);
    const bool answered = session_.WaitFor(
        [&] {
          return std::all_of(reads.begin(), reads.end(), [&](const Pending& r) {
            return r.uuid.empty() || session_.peeks().count(r.uuid) > 0;
          });
        },
        30s);
    for (std::size_t i = 0; i < reads.size(); ++i) {
      Check(reads[i]);
      if (i % 16 == 15) session_.Pump(0ms);  // the controller's socket never fills up meanwhile
    }
    if (!answered && sup_.Exited()) {
      ADD_FAILURE() << "the replica is gone\n" << Tail(sup_.Log());
      return false;
    }
    return true;
  }

  // The reads of `index` at `at`: a full scan, lookups of keys present and absent, a prefix scan
  // and sometimes a range scan. Each read at the latest time reads its own.
  void ReadAt(Generator& gen, const std::string& index, std::optional<Time> at, Time allowed,
              std::uint64_t write, std::vector<Pending>* reads) {
    const GlobalId id = *GlobalId::Parse(index);
    const auto& key = validator_.indexes().at(index).key;
    const pb::Schema& schema = validator_.collections().at(index);
    auto read = [&](Pending p) {
      p.index = index;
      p.at = at;
      p.allowed = allowed;
      p.write = write;
      Result<LocalAnswer> a = p.kind == Pending::kLookup ? reader_.Lookup(id, p.key, at)
                                                         : reader_.Scan(id, p.range, at);
      if (a.ok()) {
        p.answer = std::move(a).value();
        p.t = p.answer.time;
      } else {
        p.status = a.status();
        p.t = at.value_or(0);
      }
      reads->push_back(std::move(p));
    };
    read(Pending{.kind = Pending::kScan});
    // Keys of the contents at the time (the latest: as last reported), and random ones.
    const Time around = at.value_or(write == kClosed ? case_.end : write - 1);
    std::vector<Row> keys = gen.Keys(key, schema, At(index, around).rows);
    if (gen.rand().Chance(0.5)) {
      for (const auto& k : gen.Keys(key, schema, {})) keys.push_back(k);  // random: mostly absent
    }
    for (const auto& k : keys) read(Pending{.kind = Pending::kLookup, .key = k});
    // A prefix: a leading part of a key (sometimes none of it: everything).
    auto leading = [&](const Row& k) {
      return Row(k.begin(), k.begin() + static_cast<long>(gen.rand().Below(k.size() + 1)));
    };
    const std::vector<Row> more = gen.Keys(key, schema, At(index, around).rows);
    read(Pending{.kind = Pending::kRange, .range = KeyRange::Prefix(leading(more.front()))});
    if (gen.rand().Chance(0.6)) {
      std::vector<Row> bounds = gen.Keys(key, schema, At(index, around).rows);
      for (const auto& k : gen.Keys(key, schema, {})) bounds.push_back(k);
      KeyRange range;
      if (gen.rand().Chance(0.8)) range.lower = leading(gen.rand().Pick(bounds));
      if (gen.rand().Chance(0.8)) range.upper = leading(gen.rand().Pick(bounds));
      if (gen.rand().Chance(0.2)) range.prefix = leading(gen.rand().Pick(bounds));
      read(Pending{.kind = Pending::kRange, .range = range});
    }
  }

  // A peek for a scan of everything or a lookup: at the time the reader read (or was asked).
  void SendPeek(Pending* r) {
    if (r->kind == Pending::kRange) return;
    if (!r->at && !r->status.ok()) return;  // at the latest, but no time was read
    pb::Command c;
    auto* p = c.mutable_peek();
    r->uuid = "lr" + std::to_string(case_.seed) + "-" + std::to_string(uuid_++);
    p->set_uuid(r->uuid);
    p->set_id(r->index);
    p->set_timestamp(r->t);
    if (r->kind == Pending::kLookup) *p->add_keys() = reference::ToProto(r->key);
    const Status ok = validator_.Validate(c);
    if (!ok.ok()) {
      ADD_FAILURE() << "seed " << case_.seed << ": a peek the validator refuses: " << ok.ToString()
                    << "\n"
                    << ipc::ToJson(c);
      r->uuid.clear();
      return;
    }
    ctl_.Send(c);
  }

  // What the reference says read `r` answers at `t`: as a peek of those keys answers it (the
  // reference's AnswerPeek), and as the reader answers it — the same, except when the rows count
  // more than 2^64 - 1 in all (huge multiplicities): a peek without a limit stops there (it counts
  // no limit as a limit of UINT64_MAX), the reader answers every row (`beyond`).
  struct Expectation {
    Answer reader, peek;
    bool beyond = false;
  };
  Expectation Expected(const Pending& r, Time t) {
    const auto& key = validator_.indexes().at(r.index).key;
    const Contents selected =
        Select(At(r.index, t), key, r.kind == Pending::kLookup ? KeyRange::Prefix(r.key) : r.range);
    Expectation e;
    e.peek = OfReference(reference::AnswerPeek(selected, key, {}, {}, {}));
    e.reader = e.peek;
    reference::Count total = 0;
    for (const auto& [row, n] : selected.rows) total += n;
    if (e.peek.ok && total > reference::Count{std::numeric_limits<std::uint64_t>::max()}) {
      e.beyond = true;
      e.reader.rows.clear();  // every count fits int64 and none is negative (else e.peek failed)
      for (const auto& [row, n] : selected.rows) {
        e.reader.rows.emplace_back(row, static_cast<std::int64_t>(n));
      }
      SortRows(&e.reader);
    }
    return e;
  }

  std::string What(const Pending& r) const {
    std::string what = r.index + (r.kind == Pending::kLookup ? " Lookup " + RowText(r.key)
                                  : r.kind == Pending::kScan ? " Scan all"
                                                             : " Scan" + RangeString(r.range));
    what += r.at ? " at " + std::to_string(*r.at) : " at latest (read " + std::to_string(r.t) + ")";
    return what + ", compaction allowed to " + std::to_string(r.allowed) + ", write frontier " +
           (r.write == kClosed ? "closed" : std::to_string(r.write));
  }

  void Mismatch(const Pending& r, const std::string& why, const Answer* expected,
                const pb::PeekResponse* peek) {
    ++stats_.mismatches;
    if (reported_++ >= 3) return;
    std::string text =
        "seed " + std::to_string(case_.seed) + ": " + why + "\n  read:     " + What(r) +
        "\n  local:    " + (r.status.ok() ? AnswerString(OfLocal(r.answer)) : r.status.ToString());
    if (expected) text += "\n  expected: " + AnswerString(*expected);
    if (peek) text += "\n  peek:     " + AnswerString(OfPeek(*peek));
    ADD_FAILURE() << text << "\n" << Describe();
  }

  // Checks read `r` (of the background reader: counted apart) against the reference and its peek.
  void Check(const Pending& r, bool background = false) {
    const bool lookup = r.kind == Pending::kLookup;
    if (background) {
      ++stats_.background;
    } else {
      ++stats_.reads;
      stats_.scans += r.kind == Pending::kScan;
      stats_.lookups += lookup;
      stats_.ranges += r.kind == Pending::kRange;
      stats_.latest += !r.at;
      stats_.below_allowed += r.at && *r.at < r.allowed;
    }
    std::optional<pb::PeekResponse> answered;
    if (!r.uuid.empty()) {
      auto it = session_.peeks().find(r.uuid);
      if (it == session_.peeks().end()) {
        Mismatch(r, "no answer to the peek", nullptr, nullptr);
      } else {
        answered = std::move(it->second);
        session_.peeks().erase(it);
        ++stats_.peeks;
      }
    }
    const pb::PeekResponse* peek = answered ? &*answered : nullptr;
    const bool peek_compacted = peek && IsCompacted(*peek);
    if (peek_compacted) {
      ++stats_.peek_compacted;
      // The peek went out after the read: the compaction allowed then is at least r.allowed.
      if (r.t >= allowed_[r.index]) {
        Mismatch(r, "the peek answered compacted at a time the controller never let go of", nullptr,
                 peek);
      }
    }
    if (!r.status.ok() && IsCompacted(r.status)) {
      if ((r.at && *r.at < r.allowed) || peek_compacted) {
        ++stats_.compacted;
      } else {
        Mismatch(r, "compacted at a time the controller never let go of", nullptr, peek);
      }
      return;
    }
    if (!r.status.ok() && r.status.code() != StatusCode::kDataError &&
        r.status.code() != StatusCode::kOutOfRange) {
      Mismatch(r, "an unexpected failure", nullptr, peek);
      return;
    }
    // Latest is at least as fresh as what the controller had seen (closed: the final contents).
    if (!r.at && r.status.ok()) {
      const Time fresh = r.write == kClosed ? case_.end - 1 : r.write - 1;
      if (r.t < fresh) {
        Mismatch(r,
                 "the latest time read is " + std::to_string(r.t) + ", older than " +
                     std::to_string(fresh) + (r.write == kClosed ? " (the index was closed)" : ""),
                 nullptr, peek);
      }
    }
    // A read at the latest time that answered an error read some time from what the controller
    // had seen on (or, closed, from since): the reference has an error at one of them.
    if (!r.at && !r.status.ok()) {
      const Time from = r.write == kClosed ? 0 : r.write - 1;
      bool error = false;
      for (Time t = from; t <= case_.end && !error; ++t) error = !Expected(r, t).reader.ok;
      if (!error)
        Mismatch(r, "an error where the reference has none at any time since", nullptr, peek);
      ++(r.status.code() == StatusCode::kOutOfRange ? stats_.overflows : stats_.data_errors);
      return;
    }
    const Expectation e = Expected(r, r.t);
    const Answer& expected = e.reader;
    stats_.beyond += e.beyond;
    Answer local;
    if (r.status.ok()) {
      local = OfLocal(r.answer);
      for (const auto& row : r.answer.rows) stats_.rows += row.second > 0;
      if (lookup) ++(r.answer.rows.empty() ? stats_.absent : stats_.present);
    } else {
      local.ok = false;
      local.error = r.status.message();
      ++(r.status.code() == StatusCode::kOutOfRange ? stats_.overflows : stats_.data_errors);
      stats_.negative += r.status.message().find("negative") != std::string::npos;
      if (r.status.code() == StatusCode::kOutOfRange &&
          r.status.message().find("multiplicity overflow") == std::string::npos) {
        Mismatch(r, "OutOfRange for something else than a count beyond int64", &expected, peek);
        return;
      }
    }
    if (std::getenv("TANDEM_TEST_VERBOSE") != nullptr) {
      std::printf("seed %llu %s\n  expected %s\n  local    %s\n  peek     %s\n",
                  static_cast<unsigned long long>(case_.seed), What(r).c_str(),
                  AnswerString(expected).c_str(), AnswerString(local).c_str(),
                  peek ? AnswerString(OfPeek(*peek)).c_str() : "-");
    }
    if (const std::string d = Differ(expected, local, false); !d.empty()) {
      Mismatch(r, "the reader disagrees with the reference: " + d, &expected, peek);
      return;
    }
    if (peek && !peek_compacted) {
      const Answer p = OfPeek(*peek);
      const std::string wrong = Differ(e.peek, p, false);
      const std::string other = e.beyond ? "" : Differ(p, local, true);
      // Below the allowed compaction a peek may answer any error (as the other suites take it):
      // each worker part takes its own snapshot, one may answer "before since", another its own
      // error, and the merge answers the first in ErrorLess order — not always "compacted".
      if (!p.ok && r.t < allowed_[r.index] && !(wrong.empty() && other.empty())) {
        ++stats_.peek_raced;
      } else if (!wrong.empty()) {
        Mismatch(r, "the peek disagrees with the reference: " + wrong, &e.peek, peek);
      } else if (!other.empty()) {
        Mismatch(r, "the reader disagrees with the peek: " + other, &expected, peek);
      }
    }
  }

  // The background reader's scans at their latest readable time.
  void CheckBackground() {
    if (const std::string e = background_.attach_error(); !e.empty()) {
      ADD_FAILURE() << "the background reader could not attach: " << e;
      return;
    }
    for (const auto& rec : background_.Take()) {
      Pending r{.kind = Pending::kScan};
      r.index = rec.index;
      r.at = rec.t;
      r.t = rec.t;
      r.allowed = allowed_[rec.index];  // at least what it was then
      r.write = 0;
      r.status = rec.status;
      r.answer = rec.answer;
      Check(r, /*background=*/true);
    }
  }

  // Drops every index still live; each reports the empty frontier, and then reads NotFound.
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
    for (const auto& index : live_) {
      const bool reported = session_.WaitFor([&] { return session_.Write(index) == kClosed; }, 10s);
      EXPECT_TRUE(reported) << "the drop of " << index << " was never reported";
      const GlobalId id = *GlobalId::Parse(index);
      Status s;
      const bool gone = Eventually(
          [&] {
            s = reader_.Scan(id, KeyRange::All()).status();
            return s.code() == StatusCode::kNotFound;
          },
          10s);
      EXPECT_TRUE(gone) << "dropped index " << index << " still reads: " << s.ToString();
      ++stats_.drops_checked;
    }
    live_.clear();
  }

  std::string Describe() const {
    return CaseText("  rerun: TANDEM_TEST_SEED=" + std::to_string(case_.seed), case_.create,
                    case_.log_text);
  }

  const Config config_;
  SupervisorProcess& sup_;
  TestController& ctl_;
  Session session_;
  std::filesystem::path dir_;
  LocalReader& reader_;
  BackgroundReader& background_;
  ipc::Validator validator_;
  Case case_;
  std::optional<Evaluator> evaluator_;
  std::map<std::pair<std::string, Time>, Contents> contents_;  // the case's, by (index, time)
  std::map<std::string, Time> allowed_;  // the compaction the controller allowed, per index
  std::vector<std::string> live_;        // indexes not dropped yet
  std::vector<std::string> dropped_;     // dropped, the drop maybe not reported yet
  std::vector<std::string> reusable_;    // dropped ids a later case may create again
  int next_id_ = 1;
  int uuid_ = 0;
  int reported_ = 0;  // mismatches reported in the case
  Stats stats_;
};

void RunConfiguration(const Config& config) {
  // Under a sanitizer on two shared cores a round's checks can keep this process busy for
  // seconds: a generous heartbeat timeout, so that the replica never takes it for gone.
  SupervisorProcess sup({.two_runtime = config.two_runtime,
                         .workers = config.workers,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "256MiB",
                         .heartbeat_timeout_ms = 20000});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  auto reader = LocalReader::Attach(sup.segment());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const TempDir temp("local-reader");

  std::vector<std::uint64_t> seeds;  // half of them under a sanitizer (CasesFromEnv)
  if (auto seed = SeedFromEnv()) {
    seeds.push_back(*seed);
  } else {
    for (int i = 0; i < CasesFromEnv(config.cases); ++i) seeds.push_back(config.base_seed + i);
  }
  const auto start = std::chrono::steady_clock::now();
  Stats s;
  {
    BackgroundReader background(sup.segment());
    ReaderRunner runner(config, sup, ctl, temp.path(), **reader, background);
    for (std::uint64_t seed : seeds) {
      if (!runner.Run(seed)) break;
    }
    if (!sup.Exited()) runner.Finish();
    s = runner.stats();
  }
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ local reader] %s, %d workers%s: %zu cases, %d rounds, %d reads (%d scans of all, %d "
      "lookups: %d present, %d absent; %d prefix and range scans; %d at latest, %d below the "
      "allowed compaction), %d rows; errors: %d DataError (%d negative counts), %d OutOfRange; "
      "%d answers of more than 2^64 - 1 rows (a peek stops there); %d compacted (allowed); "
      "%d peeks (%d compacted, %d other errors below the allowed compaction); %d background scans; "
      "%d index ids reused, %d drops read "
      "NotFound; %d mismatches, %.1f s\n",
      config.two_runtime ? "two-runtime" : "solo", config.workers,
      config.allow_errors ? " (data errors)" : "", seeds.size(), s.rounds, s.reads, s.scans,
      s.lookups, s.present, s.absent, s.ranges, s.latest, s.below_allowed, s.rows, s.data_errors,
      s.negative, s.overflows, s.beyond, s.compacted, s.peeks, s.peek_compacted, s.peek_raced,
      s.background, s.reused, s.drops_checked, s.mismatches, seconds);
  if (config.new_types) ExpectNewTypeCoverage(s.types, seeds.size(), 16);
  EXPECT_EQ(s.mismatches, 0);
  // Nearly all reads answered: "compacted" only below the allowed compaction (where about one
  // read in ten is asked, racing it).
  EXPECT_LE(10 * s.compacted, s.reads + s.background) << "most reads must succeed";
  if (CheckCoverage(seeds.size(), 4)) {
    EXPECT_GE(s.reads, 100 * static_cast<int>(seeds.size())) << "hundreds of reads per case";
    EXPECT_GT(s.present, 0);
    EXPECT_GT(s.absent, 0);
    EXPECT_GT(s.latest, 0);
    EXPECT_GT(s.below_allowed, 0);
    EXPECT_GT(s.background, 0);
    if (config.allow_errors) {
      EXPECT_GT(s.data_errors, 0);
    }
  }
  // Negative counts: the first case of every run indexes one (Generate), so every run, under the
  // sanitizers too, reads one — unless it is a single case chosen by TANDEM_TEST_SEED.
  if (seeds.front() == config.base_seed && !config.allow_errors) {
    EXPECT_GT(s.negative, 0) << "no read met a negative count";
  }
  EXPECT_FALSE(sup.Exited()) << Tail(sup.Log());
}

// The comparison itself (no replica): an answer equals itself in any row order; each kind of
// fault put into it is caught; a range selects by datum order exactly what the row encoding's
// byte order selects (what the reader compares).
TEST(LocalReaderChecks, AnAnswerPassesAndEveryFaultIsCaught) {
  int faults = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Generator gen(seed, false, true);
    const Types types = RandomSourceTypes(gen);
    reference::Multiset m;
    for (const auto& u : RandomUpdates(gen, types, 4)) reference::AddTo(m, u.row, u.diff);
    if (m.empty()) continue;
    Answer a;
    for (const auto& [row, n] : m) a.rows.emplace_back(row, static_cast<std::int64_t>(n));
    Answer shuffled = a;
    std::shuffle(shuffled.rows.begin(), shuffled.rows.end(), gen.rand().engine());
    SortRows(&shuffled);
    ASSERT_EQ(Differ(a, shuffled, true), "") << AnswerString(a);

    const std::size_t i = gen.rand().Below(a.rows.size());
    std::vector<std::pair<std::string, Answer>> bad;
    Answer x = a;
    x.rows.erase(x.rows.begin() + static_cast<long>(i));
    bad.emplace_back("lost row", x);
    x = a;
    x.rows.push_back(a.rows[i]);
    bad.emplace_back("doubled row", x);
    x = a;
    x.rows[i].second += 1;
    bad.emplace_back("changed count", x);
    x = a;
    x.rows[i].second = -x.rows[i].second;
    bad.emplace_back("negated count", x);
    x = a;  // the row in two entries whose counts add up
    if (a.rows[i].second > 1) {
      x.rows[i].second -= 1;
      x.rows.push_back({a.rows[i].first, 1});
      bad.emplace_back("split row", x);
    }
    x = a;  // a datum of another type (1 for 1.0, "1" for 1)
    for (auto& d : x.rows[i].first) {
      if (auto* f = std::get_if<double>(&d)) {
        d = static_cast<std::int64_t>(*f);
      } else if (auto* n = std::get_if<std::int64_t>(&d)) {
        d = std::to_string(*n);
      } else if (std::holds_alternative<Null>(d)) {
        d = false;
      } else {
        continue;
      }
      bad.emplace_back("datum of another type", x);
      break;
    }
    x = a;
    x.rows.push_back({Row{std::string("a row of no source")}, 1});
    bad.emplace_back("extra row", x);
    x = Answer{.ok = false, .rows = {}, .error = "division by zero"};
    bad.emplace_back("error for rows", x);
    for (auto& [what, b] : bad) {
      SortRows(&b);
      EXPECT_NE(Differ(a, b, true), "") << "seed " << seed << ": a " << what << " passed\n"
                                        << AnswerString(a) << "\n"
                                        << AnswerString(b);
      ++faults;
    }
    const Answer error{.ok = false, .rows = {}, .error = "division by zero"};
    EXPECT_NE(Differ(error, a, true), "") << "rows for an error passed";
    const Answer other{.ok = false, .rows = {}, .error = "integer overflow"};
    EXPECT_NE(Differ(error, other, true), "") << "another error message passed";
    EXPECT_EQ(Differ(error, other, false), "") << "messages compared when they are not to be";
    faults += 2;
  }
  EXPECT_GT(faults, 1000);

  // Ranges: datum order (Select) and the encoding's byte order (the reader's) select alike.
  RowGenerator rows(7);
  int selected = 0;
  for (int i = 0; i < 20000; ++i) {
    const Row k = {rows.NextDatum(), rows.NextDatum()};
    auto part = [&] {
      Row r;
      const int n = static_cast<int>(rows.Pick(3));
      for (int j = 0; j < n; ++j) r.push_back(rows.Pick(3) == 0 ? k[j] : rows.NextDatum());
      return r;
    };
    KeyRange range;
    if (rows.Pick(2)) range.prefix = part();
    if (rows.Pick(2)) range.lower = part();
    if (rows.Pick(2)) range.upper = part();
    const std::string ek = EncodeRow(k);
    bool by_bytes = true;
    if (range.prefix) by_bytes = ek.starts_with(EncodeRow(*range.prefix));
    if (range.lower) by_bytes = by_bytes && ek >= EncodeRow(*range.lower);
    if (range.upper) by_bytes = by_bytes && ek < EncodeRow(*range.upper);
    ASSERT_EQ(InRange(k, range), by_bytes) << RowText(k) << RangeString(range);
    selected += by_bytes;
  }
  EXPECT_GT(selected, 1000);
}

// ---- hand-written regressions: what the random cases found, as small fixed cases ------------

// Index u2 (k int64, v int64, keyed by k) over `log`, complete up to `upper` (or closed), on a
// replica with `workers` workers; a peek's answer to it, and the reader's.
struct FixedIndex {
  FixedIndex(int workers, const std::string& lines, std::optional<Time> upper) : r(true, workers) {
    if (!r.ready) return;
    log.Append(lines);
    r.ctl->Send(LogIndexDataflow("u1", "u2", log.path()));
    ready = r.ctl
                ->ReceiveUntil(
                    [&](const pb::Response& x) {
                      if (!x.has_frontiers() || x.frontiers().id() != "u2") return false;
                      const auto& w = x.frontiers().write().elements();
                      return upper ? !w.empty() && w[0] >= *upper : w.empty();
                    },
                    10s)
                .has_value();
    if (auto a = LocalReader::Attach(r.sup.segment()); a.ok()) reader = std::move(a).value();
  }
  Answer Peek(Time t, std::optional<std::int64_t> key = std::nullopt) {
    const std::string uuid = "p" + std::to_string(++peeks);
    r.ctl->Send(ipc::samples::PeekAt(uuid, "u2", t, key));
    auto resp = r.ctl->ReceiveUntil(
        [&](const pb::Response& x) {
          return x.has_peek_response() && x.peek_response().uuid() == uuid;
        },
        10s);
    return resp ? OfPeek(resp->peek_response()) : Answer{false, {}, "(no answer)"};
  }
  static Answer Of(const Result<LocalAnswer>& a) {
    return a.ok() ? OfLocal(*a) : Answer{false, {}, a.status().message()};
  }
  Replica r;
  LogFile log;
  bool ready = false;
  std::unique_ptr<LocalReader> reader;
  int peeks = 0;
};

// An int64 key the routing puts on worker `worker` of `workers`.
std::int64_t KeyOn(std::uint32_t worker, std::uint32_t workers) {
  for (std::int64_t k = 0;; ++k) {
    if (shm::WorkerOf(EncodeRow(Row{Datum(k)}), workers) == worker) return k;
  }
}

constexpr char kMax[] = "9223372036854775807";  // INT64_MAX: twice is beyond int64

// A closed index is readable at every time from since on, and its latest time reads its final
// contents (as `tandem-ctl peek --at latest` does, at the largest time) — not those at since.
TEST(LocalReaderRegressions, TheLatestTimeOfAClosedIndexReadsItsFinalContents) {
  FixedIndex x(1, "U 0 1 1 10\nP 1\nU 1 1 2 20\nP 2\nU 2 -1 1 10\nP 3\nC\n", std::nullopt);
  ASSERT_TRUE(x.ready && x.reader) << x.r.sup.Log();
  const Answer final_contents = x.Peek(kMaxTime);
  ASSERT_EQ(AnswerString(final_contents), "[(2, 20) x1]");
  auto latest = x.reader->Scan(*GlobalId::Parse("u2"), KeyRange::All());
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_GE(latest->time, 2u);
  EXPECT_EQ(Differ(final_contents, OfLocal(*latest), true), "")
      << "latest (time " << latest->time << "): " << AnswerString(OfLocal(*latest));
}

// A lookup under a key with a negative count and a count beyond int64 (rows (5, 1) x-1 and
// (5, 2) x2·INT64_MAX) answers the peek's error: the peek checks every count under the key for
// int64 before it judges a row negative, so "multiplicity overflow".
TEST(LocalReaderRegressions, OfSeveralBadRowsUnderOneKeyALookupAnswersThePeeksError) {
  FixedIndex x(1, "U 0 -1 5 1\nU 0 " + std::string(kMax) + " 5 2\nU 0 " + kMax + " 5 2\nP 1\n", 1);
  ASSERT_TRUE(x.ready && x.reader) << x.r.sup.Log();
  const Answer peek = x.Peek(0, 5);
  ASSERT_FALSE(peek.ok) << AnswerString(peek);
  const Answer local = FixedIndex::Of(x.reader->Lookup(*GlobalId::Parse("u2"), Row{Datum(5)}, 0));
  EXPECT_EQ(Differ(peek, local, true), "")
      << "peek " << AnswerString(peek) << ", reader " << AnswerString(local);
}

// A scan meeting a negative count on worker 0 and a count beyond int64 on worker 1 answers the
// peek's error: of the workers' errors a peek answers the first in ErrorLess order
// ("multiplicity overflow …" before "the result has a row with negative multiplicity").
TEST(LocalReaderRegressions, OfBadRowsOnSeveralWorkersAScanAnswersThePeeksError) {
  const std::string negative = std::to_string(KeyOn(0, 2));
  const std::string huge = std::to_string(KeyOn(1, 2));
  FixedIndex x(2,
               "U 0 -1 " + negative + " 1\nU 0 " + kMax + " " + huge + " 1\nU 0 " + kMax + " " +
                   huge + " 1\nP 1\n",
               1);
  ASSERT_TRUE(x.ready && x.reader) << x.r.sup.Log();
  const Answer peek = x.Peek(0);
  ASSERT_FALSE(peek.ok) << AnswerString(peek);
  const Answer local = FixedIndex::Of(x.reader->Scan(*GlobalId::Parse("u2"), KeyRange::All(), 0));
  EXPECT_EQ(Differ(peek, local, true), "")
      << "peek " << AnswerString(peek) << ", reader " << AnswerString(local);
}

// Thorough (the slow label's run): more cases.
const int kCases = Thorough() ? 150 : 16;

TEST(LocalReaderCorrectness, SoloOneWorker) { RunConfiguration({false, 1, kCases, 5100000}); }
TEST(LocalReaderCorrectness, SoloTwoWorkers) { RunConfiguration({false, 2, kCases, 5200000}); }
TEST(LocalReaderCorrectness, SoloFourWorkers) { RunConfiguration({false, 4, kCases, 5300000}); }
TEST(LocalReaderCorrectness, TwoRuntimeOneWorker) { RunConfiguration({true, 1, kCases, 5400000}); }
TEST(LocalReaderCorrectness, TwoRuntimeTwoWorkers) { RunConfiguration({true, 2, kCases, 5500000}); }
TEST(LocalReaderCorrectness, TwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kCases, 5600000});
}
// Division and modulo by zero, negative data: the reader answers the index's error (DataError)
// exactly when the reference sees one, with the peek's message.
TEST(LocalReaderCorrectness, DataErrorsSoloTwoWorkers) {
  RunConfiguration({false, 2, kCases, 5700000, true});
}
TEST(LocalReaderCorrectness, DataErrorsTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kCases, 5800000, true});
}
// The types of DESIGN §16, their functions and aggregates: keys of every type read in place.
const int kNewTypeCases = Thorough() ? 60 : 16;
TEST(LocalReaderCorrectness, NewTypesSoloOneWorker) {
  RunConfiguration({false, 1, kNewTypeCases, 5900000, false, true});
}
TEST(LocalReaderCorrectness, NewTypesSoloTwoWorkers) {
  RunConfiguration({false, 2, kNewTypeCases, 5910000, false, true});
}
TEST(LocalReaderCorrectness, NewTypesSoloFourWorkers) {
  RunConfiguration({false, 4, kNewTypeCases, 5920000, false, true});
}
TEST(LocalReaderCorrectness, NewTypesTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, kNewTypeCases, 5930000, false, true});
}
TEST(LocalReaderCorrectness, NewTypesTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewTypeCases, 5940000, false, true});
}
TEST(LocalReaderCorrectness, NewTypesTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kNewTypeCases, 5950000, false, true});
}
TEST(LocalReaderCorrectness, NewTypesDataErrorsTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewTypeCases, 5960000, true, true});
}

}  // namespace
}  // namespace tandem::testing
