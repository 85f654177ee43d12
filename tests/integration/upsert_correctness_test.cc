// Randomized end-to-end correctness of upsert sources and tables (DESIGN §9) against the
// reference evaluator (tests/reference/, which defines an upsert source independently: per key
// the last record by time, then order added). Each case is one dataflow over two sources, either
//   * log mode: an upsert log source (S/D lines between progress marks, repeated keys, deletes
//     of present and absent keys, several records for one key at one time) and a plain log
//     source, or
//   * table mode: an upsert table and a plain table, written with WriteTable over a writer
//     session (Hello{observer, writer}), a few writes in flight at once; the reference takes each
//     write's records at the time its WriteResponse acknowledged,
// then random views over them (reduce, join of the two sources, top-k, negate/threshold from
// differential.h), index exports (sometimes on the upsert source itself), and peeks at readable
// times (every time of a log case; in a table case the acknowledged times, the times just below
// them, and times in between), each compared with the reference.
//
// Every case is determined by its seed (the acknowledged times of a table case are the
// runtime's, printed on a mismatch). Rerun one case with
//   TANDEM_TEST_SEED=<seed> tandem_upsert_correctness_tests --gtest_filter=<the test>
// and change the number of cases per configuration with TANDEM_TEST_CASES=<n>;
// TANDEM_TEST_MODE=log|table makes every case a log (table) case;
// TANDEM_TEST_VERBOSE=1 prints every peek with both answers.
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

#include "base/datum_text.h"
#include "differential.h"
#include "ipc/validate.h"
#include "reference/reference.h"
#include "supervisor_harness.h"
#include "temp_dir.h"

namespace tandem::testing {
namespace {

using reference::SourceRecord;

struct Config {
  bool two_runtime = false;
  int workers = 1;
  int cases = 10;
  std::uint64_t base_seed = 0;
  Time longest = 12;  // a case's steps: 6..longest
  int scale = 1;      // records per step
  // Columns, expressions and aggregates of the types of DESIGN §16 too (Generator::EnableNewTypes):
  // upsert keys, table writes and log records of every type.
  bool new_types = false;
};

pb::Schema SchemaOf(const Types& types, const std::string& prefix) {
  pb::Schema schema;
  for (std::size_t i = 0; i < types.size(); ++i) {
    auto* col = schema.add_columns();
    col->set_name(prefix + std::to_string(i));
    col->set_type(types[i].type);
    col->set_nullable(types[i].nullable);
  }
  return schema;
}

class UpsertRunner {
 public:
  UpsertRunner(const Config& config, SupervisorProcess& sup, TestController& ctl,
               TestController& writer, const std::filesystem::path& dir)
      : config_(config),
        sup_(sup),
        ctl_(ctl),
        session_(sup, ctl),
        writes_(sup, writer),
        writer_(writer),
        dir_(dir) {
    pb::Command hello;
    hello.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
    EXPECT_TRUE(validator_.Validate(hello).ok());
    validator_.set_data_dir(true);  // the replica has a --data-dir: tables are allowed
  }

  // False when the replica is gone.
  bool Run(std::uint64_t seed) {
    Generator gen(seed * 7919 + 17, /*allow_errors=*/false, /*new_operators=*/true);
    if (config_.new_types) gen.EnableNewTypes();
    Generate(gen, seed);
    if (config_.new_types) CountTypes(case_.create, types_);
    return Execute(gen, seed);
  }

  int mismatches() const { return mismatches_; }
  int peeks() const { return peeks_; }
  int nonempty_answers() const { return nonempty_answers_; }
  int log_cases() const { return log_cases_; }
  int table_cases() const { return table_cases_; }
  int writes() const { return writes_sent_; }
  int shared_times() const { return shared_times_; }
  int records() const { return records_; }
  int deletes() const { return deletes_; }
  const OperatorCounts& operators() const { return operators_; }
  // With new_types: the types and functions of the cases run.
  const TypeCounts& types() const { return types_; }

 private:
  struct Case {
    std::uint64_t seed = 0;
    bool table = false;
    Time end = 0;  // steps [0, end): log times, or write rounds
    Types upsert_types, plain_types;
    std::vector<std::uint32_t> key;
    std::vector<SourceRecord> records;       // at their step
    std::vector<reference::Update> updates;  // of the plain source, at their step
    std::string upsert_log, plain_log;       // log mode
    std::string upsert_path, plain_path;     // log mode
    std::size_t split = 0;                   // of upsert_log: bytes written before creating
    std::string upsert_id, plain_id;
    pb::Command create;
    std::vector<std::string> indexes;
    // Table mode: per write sent, its table, its step, and (once answered) its time.
    struct Write {
      std::string uuid, table;
      Time step = 0;
      std::optional<Time> time;
    };
    std::vector<Write> writes;
  };

  void Generate(Generator& gen, std::uint64_t seed) {
    case_ = Case{};
    case_.seed = seed;
    case_.table = gen.rand().Chance(0.5);
    if (const char* mode = std::getenv("TANDEM_TEST_MODE"))
      case_.table = std::string(mode) == "table";
    case_.end = 6 + gen.rand().Below(config_.longest - 5);
    case_.upsert_types = RandomSourceTypes(gen);
    case_.key = RandomUpsertKey(gen, case_.upsert_types);
    case_.plain_types = RandomSourceTypes(gen);
    case_.records = RandomRecords(gen, case_.upsert_types, case_.key, case_.end, config_.scale);
    case_.updates = RandomUpdates(gen, case_.plain_types, case_.end, false, config_.scale);
    for (const auto& r : case_.records) {
      ++records_;
      if (r.kind == SourceRecord::Kind::kDelete) ++deletes_;
    }

    pb::Command c;
    auto* d = c.mutable_create_dataflow()->mutable_desc();
    d->set_debug_name("upsert case " + std::to_string(seed));
    d->set_class_(pb::MAINTAINED);
    d->mutable_as_of()->add_elements(0);
    d->mutable_until();
    case_.upsert_id = NewId();
    case_.plain_id = NewId();
    auto* up = d->add_source_imports();
    up->set_id(case_.upsert_id);
    *up->mutable_schema() = SchemaOf(case_.upsert_types, "k");
    for (auto k : case_.key) up->add_upsert_key(k);
    auto* plain = d->add_source_imports();
    plain->set_id(case_.plain_id);
    *plain->mutable_schema() = SchemaOf(case_.plain_types, "p");
    if (case_.table) {
      up->mutable_source()->mutable_table()->set_tick_interval_ms(gen.rand().Chance(0.5) ? 0 : 20);
      plain->mutable_source()->mutable_table()->set_tick_interval_ms(20);
    } else {
      const std::string base = (dir_ / ("case-" + std::to_string(seed) + "-")).string();
      case_.upsert_path = base + case_.upsert_id + ".log";
      case_.plain_path = base + case_.plain_id + ".log";
      up->mutable_source()->mutable_log()->set_path(case_.upsert_path);
      plain->mutable_source()->mutable_log()->set_path(case_.plain_path);
      case_.upsert_log = UpsertLogText(gen, case_.records, case_.key, case_.end);
      case_.plain_log = LogText(gen, case_.updates, case_.end);
      case_.split = gen.rand().Chance(0.3) ? gen.rand().Below(case_.upsert_log.size())
                                           : case_.upsert_log.size();
    }

    // The first build reads the upsert source alone; the second may join it with the plain one
    // (or read the first build).
    const Generator::Shape small{Generator::kSmallBits, 0};
    std::vector<Generator::Collection> scope = {{case_.upsert_id, case_.upsert_types, small}};
    const int builds = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < builds; ++i) {
      Types types;
      Generator::Shape shape;
      auto* b = d->add_objects_to_build();
      b->set_id(NewId());
      *b->mutable_plan() =
          gen.Plan(scope, 1 + static_cast<int>(gen.rand().Below(3)), &types, &shape);
      operators_ += CountOperators(b->plan());
      if (i == 0) scope.push_back({case_.plain_id, case_.plain_types, small});
      scope.push_back({b->id(), types, shape});
    }
    const int exports = 1 + static_cast<int>(gen.rand().Below(2));
    for (int i = 0; i < exports; ++i) {
      // On the upsert source itself (its current rows as the runtime keeps them) or a build.
      const auto& on =
          gen.rand().Chance(0.3) ? scope.front() : scope[2 + gen.rand().Below(scope.size() - 2)];
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
    case_.create = c;
  }

  std::string NewId() { return "u" + std::to_string(next_id_++); }

  // Sends the writes of a table case: per step, the plain table's updates and the upsert table's
  // records of that step (each one WriteTable, in a random order), up to `in_flight` unanswered
  // at once. Returns false when some write was not answered in time (reported).
  bool WriteTables(Generator& gen) {
    std::vector<pb::Command> commands;
    for (Time step = 0; step < case_.end; ++step) {
      pb::Command plain, upsert;
      for (const auto& u : case_.updates) {
        if (u.time != step) continue;
        auto* rd = plain.mutable_write_table()->add_updates()->mutable_update();
        *rd->mutable_row() = reference::ToProto(u.row);
        rd->set_diff(u.diff);
      }
      for (const auto& r : case_.records) {
        if (r.time != step) continue;
        auto* tu = upsert.mutable_write_table()->add_updates();
        if (r.kind == SourceRecord::Kind::kUpsert) {
          *tu->mutable_upsert() = reference::ToProto(r.row);
        } else {
          *tu->mutable_delete_() = reference::ToProto(r.row);
        }
      }
      std::vector<std::pair<pb::Command, std::string>> round;
      if (plain.write_table().updates_size() > 0) round.emplace_back(plain, case_.plain_id);
      if (upsert.write_table().updates_size() > 0) round.emplace_back(upsert, case_.upsert_id);
      if (gen.rand().Chance(0.5)) std::reverse(round.begin(), round.end());
      for (auto& [command, table] : round) {
        const std::string uuid =
            "w" + std::to_string(case_.seed) + "-" + std::to_string(write_uuid_++);
        command.mutable_write_table()->set_uuid(uuid);
        command.mutable_write_table()->set_id(table);
        case_.writes.push_back({uuid, table, step, std::nullopt});
        commands.push_back(std::move(command));
      }
    }
    const std::size_t in_flight = 1 + gen.rand().Below(4);
    auto answered = [&](std::size_t i) {
      return writes_.write_responses().count(case_.writes[i].uuid) > 0 ||
             !writes_.command_errors().empty();
    };
    for (std::size_t i = 0; i < commands.size(); ++i) {
      if (i >= in_flight) {
        const std::size_t wait_for = i - in_flight;
        if (!writes_.WaitFor([&] { return answered(wait_for); }, 10s)) break;
      }
      writer_.Send(commands[i]);
      ++writes_sent_;
    }
    const bool all = writes_.WaitFor(
        [&] {
          for (std::size_t i = 0; i < case_.writes.size(); ++i) {
            if (!answered(i)) return false;
          }
          return true;
        },
        20s);
    if (!writes_.command_errors().empty()) {
      ADD_FAILURE() << "seed " << case_.seed
                    << ": a write was refused: " << writes_.command_errors().front() << "\n"
                    << Describe();
      writes_.command_errors().clear();
      return false;
    }
    if (!all) {
      ADD_FAILURE() << "seed " << case_.seed << ": writes unanswered after 20 s\n"
                    << Describe() << Tail(sup_.Log());
      return false;
    }
    // Times never go back in the order sent (one ordered stream per table; a later write gets
    // max(now, upper)).
    std::map<std::string, Time> last;
    bool ok = true;
    for (auto& w : case_.writes) {
      const pb::WriteResponse& response = writes_.write_responses().at(w.uuid);
      if (!response.has_time()) {
        ADD_FAILURE() << "seed " << case_.seed << ": write " << w.uuid
                      << " answered an error: " << ipc::ToJson(response);
        ok = false;
        continue;
      }
      w.time = response.time();
      auto [it, inserted] = last.emplace(w.table, *w.time);
      if (!inserted) {
        EXPECT_GE(*w.time, it->second)
            << "seed " << case_.seed << ": write " << w.uuid << " of " << w.table
            << " acknowledged at an earlier time than the write before it";
        if (*w.time == it->second) ++shared_times_;
        it->second = std::max(it->second, *w.time);
      }
      writes_.write_responses().erase(w.uuid);
    }
    return ok;
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
    (case_.table ? table_cases_ : log_cases_)++;
    const auto& desc = case_.create.create_dataflow().desc();
    evaluator_.emplace(desc);

    if (!case_.table) {
      std::ofstream(case_.upsert_path, std::ios::binary) << case_.upsert_log.substr(0, case_.split);
      std::ofstream(case_.plain_path, std::ios::binary) << case_.plain_log;
    }
    ctl_.Send(case_.create);
    if (!case_.table && case_.split < case_.upsert_log.size()) {
      // The rest arrives while the runtime tails the file (maybe mid-line before this).
      std::this_thread::sleep_for(std::chrono::milliseconds(gen.rand().Below(20)));
      std::ofstream(case_.upsert_path, std::ios::binary | std::ios::app)
          << case_.upsert_log.substr(case_.split);
    }

    // The times to peek at, and the upper every index must reach first.
    std::vector<Time> times;
    Time upper = case_.end;
    if (case_.table) {
      // The writer is another session: its writes may reach the supervisor before the
      // controller's CreateDataflow. Write once the dataflow is there (its indexes report).
      const bool created = session_.WaitFor(
          [&] {
            return std::all_of(case_.indexes.begin(), case_.indexes.end(),
                               [&](const auto& id) { return session_.Write(id).has_value(); });
          },
          30s);
      if (!created || !session_.command_errors().empty()) {
        ADD_FAILURE() << "seed " << seed << ": the tables' dataflow did not start: "
                      << (session_.command_errors().empty() ? "no frontiers in 30 s"
                                                            : session_.command_errors().front())
                      << "\n"
                      << Describe() << Tail(sup_.Log());
        session_.command_errors().clear();
        return !sup_.Exited();
      }
      if (!WriteTables(gen)) return !sup_.Exited();
      // The reference: each write's records at its acknowledged time, in the order sent.
      std::set<Time> acked;
      for (const auto& w : case_.writes) acked.insert(*w.time);
      for (const auto& w : case_.writes) {
        if (w.table == case_.upsert_id) {
          for (const auto& r : case_.records) {
            if (r.time == w.step) evaluator_->AddRecord(case_.upsert_id, {r.kind, r.row, *w.time});
          }
        } else {
          for (const auto& u : case_.updates) {
            if (u.time == w.step) evaluator_->AddUpdate(case_.plain_id, {u.row, *w.time, u.diff});
          }
        }
      }
      if (acked.empty()) acked.insert(1);  // nothing was written: peek at 0 and 1
      const Time first = *acked.begin(), last = *acked.rbegin();
      upper = last + 1;
      std::set<Time> chosen = {first - 1, last};
      for (Time t : acked) {
        if (gen.rand().Chance(0.6)) chosen.insert(t);
        if (gen.rand().Chance(0.3)) chosen.insert(t - 1);
      }
      for (int i = 0; i < 2; ++i) chosen.insert(first + gen.rand().Below(last - first + 1));
      times.assign(chosen.begin(), chosen.end());
    } else {
      evaluator_->AddUpdates(case_.plain_id, case_.updates);
      for (const auto& r : case_.records) evaluator_->AddRecord(case_.upsert_id, r);
      for (Time t = 0; t < case_.end; ++t) times.push_back(t);
    }

    const bool advanced = session_.WaitFor(
        [&] {
          return std::all_of(case_.indexes.begin(), case_.indexes.end(), [&](const auto& id) {
            auto w = session_.Write(id);
            return w && *w >= upper;
          });
        },
        30s);
    if (!session_.command_errors().empty()) {
      ADD_FAILURE() << "seed " << seed << ": CommandError: " << session_.command_errors().front()
                    << "\n"
                    << Describe();
      session_.command_errors().clear();
      return !sup_.Exited();
    }
    if (!advanced) {
      std::string frontiers;
      for (const auto& id : case_.indexes) {
        auto w = session_.Write(id);
        frontiers += " " + id + "=" + (w ? std::to_string(*w) : "none");
      }
      ADD_FAILURE() << "seed " << seed << ": the indexes did not reach upper " << upper
                    << " in 30 s (latest write frontiers:" << frontiers << ")"
                    << (sup_.Exited() ? "; the replica is gone" : "") << "\n"
                    << Describe() << Tail(sup_.Log());
      return !sup_.Exited();
    }
    if (!case_.table) {
      for (const auto& id : case_.indexes) {
        EXPECT_EQ(session_.Write(id), case_.end)
            << "seed " << seed << ": index " << id << " went beyond the last progress mark";
      }
    }

    std::vector<pb::Command> sent;
    for (const auto& index : case_.indexes) {
      const pb::Schema& schema = validator_.collections().at(index);
      const auto key = evaluator_->IndexKey(index).value();
      for (Time t : times) {
        const Contents at_t = evaluator_->At(index, t).value();
        for (auto& c : PeeksAt(gen, key, schema, at_t)) {
          auto* p = c.mutable_peek();
          p->set_uuid("s" + std::to_string(seed) + "-" + std::to_string(peek_uuid_++));
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
    const bool answered = session_.WaitFor(
        [&] {
          return std::all_of(sent.begin(), sent.end(), [&](const pb::Command& c) {
            return session_.peeks().count(c.peek().uuid()) > 0;
          });
        },
        30s);
    int reported = 0;
    for (const auto& c : sent) {
      const pb::Peek& peek = c.peek();
      const PeekAnswer expected = evaluator_->Peek(peek);
      ++peeks_;
      if (expected.ok && !expected.rows.empty()) ++nonempty_answers_;
      auto it = session_.peeks().find(peek.uuid());
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
        std::printf("seed %llu t=%llu %s\n  expected %s\n  actual   %s\n",
                    static_cast<unsigned long long>(seed),
                    static_cast<unsigned long long>(peek.timestamp()), ipc::ToJson(peek).c_str(),
                    reference::ToString(expected).c_str(), AnswerText(it->second).c_str());
      }
      if (!Agrees(expected, it->second)) {
        ++mismatches_;
        if (reported++ < 3) {
          ADD_FAILURE() << "seed " << seed << ": mismatch at t=" << peek.timestamp() << "\n"
                        << "  peek:     " << ipc::ToJson(c) << "\n"
                        << "  expected: " << reference::ToString(expected) << "\n"
                        << "  actual:   " << AnswerText(it->second) << "\n"
                        << "  index contents at t: "
                        << reference::ToString(evaluator_->At(peek.id(), peek.timestamp())->rows)
                        << "\n  the upsert source at t: "
                        << reference::ToString(
                               evaluator_->At(case_.upsert_id, peek.timestamp())->rows)
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
    // Drop the indexes (the dataflow, and with it the tables, go away).
    for (const auto& index : case_.indexes) {
      pb::Command drop;
      drop.mutable_allow_compaction()->set_id(index);
      drop.mutable_allow_compaction()->mutable_frontier();
      EXPECT_TRUE(validator_.Validate(drop).ok());
      ctl_.Send(drop);
    }
    session_.Pump(0ms);
    writes_.Pump(0ms);
    return !sup_.Exited();
  }

  // Peeks at one time (id, time and uuid unset): a full scan, and maybe key lookups, an mfp with
  // a finishing, or a finishing alone.
  std::vector<pb::Command> PeeksAt(Generator& gen, const std::vector<std::uint32_t>& key,
                                   const pb::Schema& schema, const Contents& at_t) {
    std::vector<pb::Command> peeks(1);
    if (gen.rand().Chance(0.6)) {
      peeks.emplace_back();
      for (const auto& k : gen.Keys(key, schema, at_t.rows))
        *peeks.back().mutable_peek()->add_keys() = reference::ToProto(k);
    }
    if (gen.rand().Chance(0.5)) {
      peeks.emplace_back();
      auto* p = peeks.back().mutable_peek();
      if (gen.rand().Chance(0.4)) {
        for (const auto& k : gen.Keys(key, schema, at_t.rows))
          *p->add_keys() = reference::ToProto(k);
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

  std::string Describe() const {
    std::string text = "  rerun: TANDEM_TEST_SEED=" + std::to_string(case_.seed) + " (" +
                       (case_.table ? "table" : "log") +
                       " mode)\n  dataflow: " + ipc::ToJson(case_.create) + "\n";
    if (case_.table) {
      text += "  writes (uuid table step -> acknowledged time):\n";
      for (const auto& w : case_.writes) {
        text += "    " + w.uuid + " " + w.table + " " + std::to_string(w.step) + " -> " +
                (w.time ? std::to_string(*w.time) : "?") + "\n";
      }
      text += "  upsert records (at their step):\n";
      for (const auto& r : case_.records) text += "    " + reference::LogRecordLine(r);
      text += "  plain updates (at their step):\n";
      for (const auto& u : case_.updates)
        text += "    " + reference::LogUpdateLine(u.row, u.time, u.diff);
      return text;
    }
    for (const auto& [name, log] :
         {std::pair{"upsert log", &case_.upsert_log}, std::pair{"plain log", &case_.plain_log}}) {
      text += std::string("  ") + name + ":\n";
      std::istringstream in(*log);
      for (std::string line; std::getline(in, line);) text += "    " + line + "\n";
    }
    return text;
  }

  const Config config_;
  SupervisorProcess& sup_;
  TestController& ctl_;
  Session session_;  // the controller's: frontiers, peeks
  Session writes_;   // the writer session's: write responses
  TestController& writer_;
  std::filesystem::path dir_;
  ipc::Validator validator_;
  Case case_;
  std::optional<Evaluator> evaluator_;
  int next_id_ = 1;
  int peek_uuid_ = 0;
  int write_uuid_ = 0;
  int mismatches_ = 0, peeks_ = 0, nonempty_answers_ = 0;
  int log_cases_ = 0, table_cases_ = 0, writes_sent_ = 0, shared_times_ = 0;
  int records_ = 0, deletes_ = 0;
  OperatorCounts operators_;
  TypeCounts types_;
};

void RunConfiguration(const Config& config) {
  const TempDir temp("upserts");
  const std::filesystem::path dir = temp.path();
  const std::string data_dir = (dir / "data").string();
  SupervisorProcess sup({.extra_args = {"--data-dir", data_dir},
                         .two_runtime = config.two_runtime,
                         .workers = config.workers,
                         .worker_binary = TANDEM_WORKER_BIN,
                         .shm_size = "256MiB"});
  ASSERT_TRUE(sup.WaitReady()) << sup.Log();
  TestController ctl(sup.controller_endpoint());
  ASSERT_TRUE(ctl.Hello());
  TestController writer(sup.controller_endpoint());
  {
    writer.Send(ipc::MakeHello("writer-1", /*observer=*/true, /*writer=*/true));
    ASSERT_TRUE(writer
                    .ReceiveUntil([](const auto& r) {
                      return (r.has_status() && r.status().has_hello_accepted()) ||
                             r.has_command_error();
                    })
                    .value_or(pb::Response())
                    .status()
                    .has_hello_accepted())
        << "the writer session's Hello was not accepted\n"
        << Tail(sup.Log());
  }

  UpsertRunner runner(config, sup, ctl, writer, dir);
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
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ upserts     ] %s, %d workers: %d log cases, %d table cases (%d writes, %d sharing a "
      "time with the write before), %d records (%d deletes), %d peeks (%d with rows), %d "
      "mismatches, %.1f s\n",
      config.two_runtime ? "two-runtime" : "solo", config.workers, runner.log_cases(),
      runner.table_cases(), runner.writes(), runner.shared_times(), runner.records(),
      runner.deletes(), runner.peeks(), runner.nonempty_answers(), runner.mismatches(), seconds);
  std::printf("[ operators   ] %s\n", runner.operators().ToString().c_str());
  if (config.new_types) ExpectNewTypeCoverage(runner.types(), seeds.size(), 12);
  if (CheckCoverage(seeds.size(), 8) && std::getenv("TANDEM_TEST_MODE") == nullptr) {
    EXPECT_GT(runner.log_cases(), 0);
    EXPECT_GT(runner.table_cases(), 0);
  }
  if (CheckCoverage(seeds.size(), 8)) {
    EXPECT_GT(runner.operators().joins, 0);
    EXPECT_GT(runner.operators().top_ks, 0);
  }
  EXPECT_EQ(runner.mismatches(), 0);
  EXPECT_FALSE(sup.Exited()) << Tail(sup.Log());
}

// The generators alone (no replica): the file order of an upsert log means what the records
// mean (the reference's contents agree at every time), records repeat keys, delete, and put
// several records on one key at one time.
TEST(UpsertGenerators, TheLogOrderKeepsEachKeysRecordsInOrderWithinATime) {
  int bursts = 0, deletes = 0, absent_deletes = 0, identical = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Generator gen(seed, false, true);
    const Types types = RandomSourceTypes(gen);
    const auto key = RandomUpsertKey(gen, types);
    ASSERT_GE(key.size(), 1u);
    ASSERT_LE(key.size(), 2u);
    const Time end = 6 + gen.rand().Below(10);
    const auto records = RandomRecords(gen, types, key, end);
    std::vector<SourceRecord> in_file;
    Time mark = 0;
    for (const auto& item : UpsertLogOrder(gen, records, key, end)) {
      if (item.mark) {
        EXPECT_GT(item.time, mark);
        mark = item.time;
        continue;
      }
      EXPECT_GE(records[item.record].time, mark) << "a record below the last progress mark";
      in_file.push_back(records[item.record]);
    }
    EXPECT_EQ(mark, end);
    ASSERT_EQ(in_file.size(), records.size());
    for (Time t = 0; t <= end; ++t) {
      EXPECT_EQ(reference::ToString(reference::UpsertContents(records, key, t)),
                reference::ToString(reference::UpsertContents(in_file, key, t)))
          << "seed " << seed << " t=" << t;
    }
    // What the records exercise.
    std::map<std::pair<Time, std::string>, int> per_key_time;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      const Row k = RecordKey(r, key);
      if (++per_key_time[{r.time, RowText(k)}] == 2) ++bursts;
      const auto before = reference::UpsertContents(
          std::vector<SourceRecord>(records.begin(), records.begin() + static_cast<long>(i)), key,
          r.time);
      const bool has = std::any_of(before.begin(), before.end(), [&](const auto& rc) {
        Row rk;
        for (auto c : key) rk.push_back(rc.first[c]);
        return reference::OrderKeys(rk, k) == 0;
      });
      if (r.kind == SourceRecord::Kind::kDelete) {
        ++deletes;
        if (!has) ++absent_deletes;
      } else if (before.count(r.row) > 0) {
        ++identical;
      }
    }
  }
  EXPECT_GT(bursts, 100);
  EXPECT_GT(deletes, 200);
  EXPECT_GT(absent_deletes, 20);
  EXPECT_GT(identical, 20);
  std::printf("[ generators  ] %d bursts, %d deletes (%d of absent keys), %d identical upserts\n",
              bursts, deletes, absent_deletes, identical);
}

// Thorough (the slow label's run): ten times the cases, longer logs, three times the records a
// time.
const bool kThorough = Thorough();
const int kCases = kThorough ? 200 : 20;
const Time kLongest = kThorough ? 30 : 12;
const int kScale = kThorough ? 3 : 1;

TEST(UpsertCorrectness, SoloOneWorker) {
  RunConfiguration({false, 1, kCases, 1500000, kLongest, kScale});
}
TEST(UpsertCorrectness, SoloFourWorkers) {
  RunConfiguration({false, 4, kCases, 1600000, kLongest, kScale});
}
TEST(UpsertCorrectness, TwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kCases, 1700000, kLongest, kScale});
}
// The types of DESIGN §16 as upsert keys and values, written to tables and logs.
const int kNewTypeCases = kThorough ? 40 : 12;
TEST(UpsertCorrectness, NewTypesSoloOneWorker) {
  RunConfiguration({false, 1, kNewTypeCases, 1800000, kLongest, kScale, true});
}
TEST(UpsertCorrectness, NewTypesSoloTwoWorkers) {
  RunConfiguration({false, 2, kNewTypeCases, 1810000, kLongest, kScale, true});
}
TEST(UpsertCorrectness, NewTypesSoloFourWorkers) {
  RunConfiguration({false, 4, kNewTypeCases, 1820000, kLongest, kScale, true});
}
TEST(UpsertCorrectness, NewTypesTwoRuntimeOneWorker) {
  RunConfiguration({true, 1, kNewTypeCases, 1830000, kLongest, kScale, true});
}
TEST(UpsertCorrectness, NewTypesTwoRuntimeTwoWorkers) {
  RunConfiguration({true, 2, kNewTypeCases, 1840000, kLongest, kScale, true});
}
TEST(UpsertCorrectness, NewTypesTwoRuntimeFourWorkers) {
  RunConfiguration({true, 4, kNewTypeCases, 1850000, kLongest, kScale, true});
}

}  // namespace
}  // namespace tandem::testing
